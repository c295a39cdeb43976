//! Heightmap sizes game engines import, and the resampling that gets a
//! surface to one.
//!
//! - Unreal Engine's Landscape: the recommended overall sizes of its
//!   "Landscape Technical Guide" (127, 253, 505, 1009, 2017, 4033, 8129
//!   vertices a side), whose component layouts waste no vertex.
//! - Unity's Terrain: a heightmap resolution of 2ⁿ + 1 (33 to 4097).
//!
//! Resampling is bilinear and corner-aligned (engines put samples on both
//! edges of the terrain): output sample `i` of `n` reads source position
//! `i · (w − 1) / (n − 1)`, so the first and last rows and columns are the
//! source's own. A missing (NaN) source sample makes the output samples
//! that lean on it missing only when all their weight is missing; otherwise
//! the valid neighbours are renormalized.

/// Unreal Landscape's recommended overall sizes, vertices a side.
pub const UNREAL_SIZES: [u32; 7] = [127, 253, 505, 1009, 2017, 4033, 8129];

/// Unity Terrain's heightmap resolutions (2ⁿ + 1), samples a side.
pub const UNITY_SIZES: [u32; 8] = [33, 65, 129, 257, 513, 1025, 2049, 4097];

/// Largest side an export resamples to, samples (16,384: 1 GiB of `f32`
/// samples, twice the largest engine size).
pub const MAX_RESAMPLE_SIDE: u32 = 16_384;

/// A size an export resamples its surface to (square).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineSize {
    /// The smallest Unreal size at least the surface's larger side (the
    /// largest one beyond).
    Unreal,
    /// The smallest Unity size at least the surface's larger side (the
    /// largest one beyond).
    Unity,
    /// This many samples a side (2 to [`MAX_RESAMPLE_SIDE`]).
    Pixels(u32),
}

impl EngineSize {
    /// Parses `unreal`, `unity` or a sample count (2 to [`MAX_RESAMPLE_SIDE`]).
    pub fn parse(text: &str) -> Result<EngineSize, String> {
        match text.trim() {
            "unreal" => Ok(EngineSize::Unreal),
            "unity" => Ok(EngineSize::Unity),
            n => n
                .parse::<u32>()
                .ok()
                .filter(|n| (2..=MAX_RESAMPLE_SIDE).contains(n))
                .map(EngineSize::Pixels)
                .ok_or_else(|| {
                    format!(
                        "expected `unreal`, `unity` or 2 to {MAX_RESAMPLE_SIDE} samples a side, got {text:?}"
                    )
                }),
        }
    }

    /// The side, samples, for a surface of `width × depth` samples.
    pub fn side_for(self, width: u32, depth: u32) -> u32 {
        let pick = |sizes: &[u32]| {
            let want = width.max(depth);
            sizes
                .iter()
                .copied()
                .find(|&s| s >= want)
                .unwrap_or(sizes[sizes.len() - 1])
        };
        match self {
            EngineSize::Unreal => pick(&UNREAL_SIZES),
            EngineSize::Unity => pick(&UNITY_SIZES),
            EngineSize::Pixels(n) => n,
        }
    }
}

/// Resamples `samples` (`width × depth`, row-major; NaN missing) to
/// `side × side`, bilinear and corner-aligned (see the module docs).
/// `width`, `depth` and `side` are at least 1; a source side of 1 repeats.
pub fn resample(samples: &[f32], width: u32, depth: u32, side: u32) -> Vec<f32> {
    let (w, d, n) = (width as usize, depth as usize, side as usize);
    let position = |i: usize, source: usize| -> (usize, usize, f64) {
        if n <= 1 || source <= 1 {
            return (0, 0, 0.0);
        }
        let u = i as f64 * (source - 1) as f64 / (n - 1) as f64;
        let i0 = (u.floor() as usize).min(source - 1);
        let i1 = (i0 + 1).min(source - 1);
        (i0, i1, u - i0 as f64)
    };
    let columns: Vec<(usize, usize, f64)> = (0..n).map(|i| position(i, w)).collect();
    let mut out = Vec::with_capacity(n * n);
    for j in 0..n {
        let (z0, z1, fz) = position(j, d);
        for &(x0, x1, fx) in &columns {
            let corners = [
                (samples[z0 * w + x0], (1.0 - fx) * (1.0 - fz)),
                (samples[z0 * w + x1], fx * (1.0 - fz)),
                (samples[z1 * w + x0], (1.0 - fx) * fz),
                (samples[z1 * w + x1], fx * fz),
            ];
            let (mut sum, mut weight) = (0.0, 0.0);
            for (v, k) in corners {
                if !v.is_nan() && k > 0.0 {
                    sum += f64::from(v) * k;
                    weight += k;
                }
            }
            out.push(if weight > 0.0 {
                (sum / weight) as f32
            } else {
                f32::NAN
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_pick_the_smallest_size_that_holds_the_surface() {
        assert_eq!(EngineSize::Unreal.side_for(400, 300), 505);
        assert_eq!(EngineSize::Unreal.side_for(505, 505), 505);
        assert_eq!(EngineSize::Unreal.side_for(20_000, 10), 8129);
        assert_eq!(EngineSize::Unity.side_for(300, 513), 513);
        assert_eq!(EngineSize::Unity.side_for(10, 10), 33);
        assert_eq!(EngineSize::Pixels(77).side_for(5, 5), 77);
        assert_eq!(EngineSize::parse("unity"), Ok(EngineSize::Unity));
        assert_eq!(EngineSize::parse("1009"), Ok(EngineSize::Pixels(1009)));
        assert!(EngineSize::parse("1").unwrap_err().contains("2 to 16384"));
        assert!(EngineSize::parse("65536").is_err());
        assert!(EngineSize::parse("huge").is_err());
    }

    #[test]
    fn resampling_keeps_the_corners_and_interpolates_between() {
        // A 3 × 2 ramp to 5 × 5: x doubles the spacing, z quarters it.
        let src = [0.0, 10.0, 20.0, 100.0, 110.0, 120.0];
        let out = resample(&src, 3, 2, 5);
        assert_eq!(out.len(), 25);
        assert_eq!(
            (out[0], out[4], out[20], out[24]),
            (0.0, 20.0, 100.0, 120.0)
        );
        assert_eq!(out[1], 5.0);
        assert_eq!(out[5 * 2 + 2], 60.0);
        // A missing corner is left out of its neighbours' weights.
        let holed = [f32::NAN, 10.0, 20.0, 100.0, 110.0, 120.0];
        let out = resample(&holed, 3, 2, 5);
        assert!(out[0].is_nan());
        assert_eq!(out[1], 10.0);
        assert_eq!(out[5], 100.0);
        // The same size is the identity.
        assert_eq!(resample(&src, 3, 2, 3)[..3], [0.0, 10.0, 20.0]);
    }
}
