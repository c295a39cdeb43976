//! The shaping stages of a recipe that need no neighbours: noise relief,
//! the island/coast falloff and terraces. Each is a pure function of the
//! seed and the sample's position, run in parallel over plan rows.

use rayon::prelude::*;

use crate::progress::Progress;

use crate::terrain::generation::noise::{FractalNoise, smoothstep, sub_seed};
use crate::terrain::recipe::plan::Plan;
use crate::terrain::recipe::stages::{
    FalloffShape, FalloffStage, ReliefKind, ReliefStage, TerraceStage,
};

/// Runs `f(x_cells, z_cells, height)` over every sample's height, in
/// parallel over rows; positions are the sample's column centre in cells.
/// Once `progress` is cancelled the rows not yet started are skipped (the
/// cook then drops the plan).
fn map_heights(plan: &mut Plan, progress: &Progress, f: impl Fn(f64, f64, f32) -> f32 + Sync) {
    map_heights_with(plan, progress, || (), |(), x, z, h| f(x, z, h));
}

/// [`map_heights`] with a state per worker: `init` makes one for each run
/// of rows a worker takes, and `f(state, x_cells, z_cells, height)` may
/// keep what neighbouring samples share in it (a noise lattice cell).
fn map_heights_with<S>(
    plan: &mut Plan,
    progress: &Progress,
    init: impl Fn() -> S + Sync + Send,
    f: impl Fn(&mut S, f64, f64, f32) -> f32 + Sync + Send,
) {
    let side = plan.side;
    let s = f64::from(plan.spacing_cells);
    plan.height_cells
        .par_chunks_mut(side)
        .enumerate()
        .for_each_init(init, |state, (j, row)| {
            if progress.is_cancelled() {
                return;
            }
            let z = (j as f64 + 0.5) * s;
            for (i, h) in row.iter_mut().enumerate() {
                *h = f(state, (i as f64 + 0.5) * s, z, *h);
            }
        });
}

/// The noise of one relief stage, with the lattice cells it last sampled
/// (one per octave and layer), so a worker walking a row hashes each cell
/// once.
struct ReliefNoise<'a> {
    stage: &'a ReliefStage,
    /// The stage's own octaves.
    main: FractalNoise,
    /// The two 3-octave displacement fields of [`ReliefKind::Warped`]
    /// (unused by the other kinds; making them costs 6 hashes a worker).
    warp: [FractalNoise; 2],
}

impl<'a> ReliefNoise<'a> {
    fn new(stage: &'a ReliefStage, seed: u64) -> ReliefNoise<'a> {
        ReliefNoise {
            stage,
            main: FractalNoise::new(seed, stage.octaves),
            warp: [
                FractalNoise::new(sub_seed(seed, 1), 3),
                FractalNoise::new(sub_seed(seed, 2), 3),
            ],
        }
    }

    /// Noise value in `[0, 1]` of the stage at column `(x, z)`, cells.
    fn at(&mut self, x: f64, z: f64) -> f64 {
        let stage = self.stage;
        let f = 1.0 / stage.wavelength_cells;
        let (nx, nz) = (x * f, z * f);
        let n = match stage.kind {
            ReliefKind::Fbm => 0.5 + 0.5 * self.main.fbm_with_gain(nx, nz, stage.ruggedness),
            ReliefKind::Ridged => self.main.ridged(nx, nz),
            ReliefKind::Warped => {
                let [warp_x, warp_z] = &mut self.warp;
                let w = stage.warp_cells * f;
                let wx = warp_x.fbm_with_gain(nx, nz, 0.5) * w;
                let wz = warp_z.fbm_with_gain(nx + 5.2, nz - 1.3, 0.5) * w;
                0.5 + 0.5 * self.main.fbm_with_gain(nx + wx, nz + wz, stage.ruggedness)
            }
        };
        let n = n.clamp(0.0, 1.0);
        sharpen(n, stage.sharpness)
    }
}

/// `n^k` for `n ∈ [0, 1]` with IEEE-exact operations only (no `powf`, whose
/// last bit differs between maths libraries): integer powers by
/// multiplication, the fractional part by repeated square roots (k is
/// quantized to 1/16).
fn sharpen(n: f64, k: f64) -> f64 {
    let sixteenths = (k * 16.0).round() as u32;
    let whole = sixteenths / 16;
    let mut out = 1.0;
    for _ in 0..whole {
        out *= n;
    }
    // Fractional bits: n^(1/2), n^(1/4), n^(1/8), n^(1/16), each root taken
    // only while a lower bit still needs it (square roots wait on each other
    // and were a third of a relief stage).
    let mut root = n;
    for bit in (0..4).rev() {
        if sixteenths & ((2 << bit) - 1) == 0 {
            break;
        }
        root = root.sqrt();
        if sixteenths & (1 << bit) != 0 {
            out *= root;
        }
    }
    out
}

/// [`crate::terrain::recipe::stages::Stage::Relief`]: adds the stage's relief to every sample.
/// `stage_seed` is the recipe seed mixed with the stage's index, so two
/// relief stages of one recipe differ.
pub fn apply_relief(plan: &mut Plan, stage: &ReliefStage, stage_seed: u64, progress: &Progress) {
    map_heights_with(
        plan,
        progress,
        || ReliefNoise::new(stage, stage_seed),
        |noise, x, z, h| {
            (f64::from(h) + stage.base_cells + stage.amplitude_cells * noise.at(x, z)) as f32
        },
    );
}

/// [`crate::terrain::recipe::stages::Stage::Falloff`]: lowers land near the rim (island) or
/// the `+z` edge (coast) by up to `depth_cells`, smoothly over
/// `edge_fraction` of the world's width.
pub fn apply_falloff(plan: &mut Plan, stage: &FalloffStage, size_cells: f64, progress: &Progress) {
    map_heights(plan, progress, |x, z, h| {
        let to_edge = match stage.shape {
            FalloffShape::Island => {
                let (dx, dz) = (x - size_cells * 0.5, z - size_cells * 0.5);
                size_cells * 0.5 - (dx * dx + dz * dz).sqrt()
            }
            FalloffShape::Coast => size_cells - z,
        };
        let t = 1.0 - smoothstep(0.0, stage.edge_fraction * size_cells, to_edge);
        (f64::from(h) - stage.depth_cells * t) as f32
    });
}

/// [`crate::terrain::recipe::stages::Stage::Terrace`]: above `above_cells`, heights move
/// toward the step below by `strength` of the way, with a smooth riser.
pub fn apply_terrace(plan: &mut Plan, stage: &TerraceStage, progress: &Progress) {
    map_heights(plan, progress, |_, _, h| {
        let h = f64::from(h);
        if h <= stage.above_cells {
            return h as f32;
        }
        let rel = (h - stage.above_cells) / stage.step_cells;
        let floor = rel.floor();
        let t = rel - floor;
        // Benches: most of each step flat, a steep riser in its last 20 %.
        let shaped = floor + smoothstep(0.8, 1.0, t);
        let terraced = stage.above_cells + shaped * stage.step_cells;
        (h + (terraced - h) * stage.strength) as f32
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relief_noise_matches_the_free_noise_functions() {
        use crate::terrain::generation::noise::{fbm_with_gain, ridged};
        for kind in [ReliefKind::Fbm, ReliefKind::Ridged, ReliefKind::Warped] {
            let stage = ReliefStage {
                kind,
                base_cells: 0.0,
                amplitude_cells: 100.0,
                wavelength_cells: 37.0,
                octaves: 5,
                ruggedness: 0.62,
                sharpness: 1.75,
                warp_cells: 21.0,
            };
            let seed = 99;
            // The stage's noise from the free functions, sample by sample.
            let reference = |x: f64, z: f64| {
                let f = 1.0 / stage.wavelength_cells;
                let (nx, nz) = (x * f, z * f);
                let n = match kind {
                    ReliefKind::Fbm => 0.5 + 0.5 * fbm_with_gain(seed, nx, nz, 5, 0.62),
                    ReliefKind::Ridged => ridged(seed, nx, nz, 5),
                    ReliefKind::Warped => {
                        let w = stage.warp_cells * f;
                        let wx = fbm_with_gain(sub_seed(seed, 1), nx, nz, 3, 0.5) * w;
                        let wz = fbm_with_gain(sub_seed(seed, 2), nx + 5.2, nz - 1.3, 3, 0.5) * w;
                        0.5 + 0.5 * fbm_with_gain(seed, nx + wx, nz + wz, 5, 0.62)
                    }
                };
                sharpen(n.clamp(0.0, 1.0), 1.75)
            };
            let mut noise = ReliefNoise::new(&stage, seed);
            for j in 0..40 {
                for i in 0..200 {
                    let (x, z) = (i as f64 * 0.5 + 0.25, j as f64 * 3.0 + 0.5);
                    assert_eq!(
                        noise.at(x, z).to_bits(),
                        reference(x, z).to_bits(),
                        "{kind:?} at ({x}, {z})"
                    );
                }
            }
        }
    }

    #[test]
    fn sharpen_takes_only_the_roots_it_uses() {
        // The loop that took all four roots, whatever the exponent.
        let every_root = |n: f64, k: f64| {
            let sixteenths = (k * 16.0).round() as u32;
            let mut out = 1.0;
            for _ in 0..sixteenths / 16 {
                out *= n;
            }
            let mut root = n;
            for bit in (0..4).rev() {
                root = root.sqrt();
                if sixteenths & (1 << bit) != 0 {
                    out *= root;
                }
            }
            out
        };
        for sixteenths in 0..=64 {
            let k = f64::from(sixteenths) / 16.0;
            for n in [
                0.0, 1e-300, 0.013, 0.1, 0.333, 0.5, 0.77, 0.9, 0.999_999, 1.0,
            ] {
                assert_eq!(
                    sharpen(n, k).to_bits(),
                    every_root(n, k).to_bits(),
                    "n {n}, k {k}"
                );
            }
        }
    }

    #[test]
    fn sharpen_matches_powers() {
        for n in [0.0, 0.1, 0.5, 0.9, 1.0] {
            assert_eq!(sharpen(n, 1.0), n);
            assert!((sharpen(n, 2.0) - n * n).abs() < 1e-12);
            assert!((sharpen(n, 1.5) - n * n.sqrt()).abs() < 1e-12);
        }
    }

    #[test]
    fn terraces_flatten_benches() {
        let mut plan = Plan::new(32);
        for (k, h) in plan.height_cells.iter_mut().enumerate() {
            *h = 10.0 + k as f32 * 0.05;
        }
        apply_terrace(
            &mut plan,
            &TerraceStage {
                step_cells: 8.0,
                strength: 1.0,
                above_cells: 10.0,
            },
            &Progress::new(),
        );
        // Heights within the first 80 % of a step sit on its bench.
        assert_eq!(plan.height_cells[20], 10.0);
        assert_eq!(plan.height_cells[170], 18.0);
    }
}
