//! Hydraulic erosion by droplets (Beyer 2015, "Implementation of a method
//! for hydraulic erosion"): each droplet rolls down the bilinear height
//! field with inertia, picks up sediment where it is below its capacity
//! (speed × water × slope) and drops it where it slows or climbs, cutting
//! gullies and filling valley floors. Rock resists by the hardness of the
//! stratum at the droplet's height, so hard layers stand as ledges.
//!
//! # Parallel and deterministic
//! The plan is cut into [`TILE_SAMPLES`]² tiles coloured in a 2×2
//! checkerboard. A droplet lives in its start tile's region (the tile plus
//! [`MARGIN_SAMPLES`] all round) and dies at its edge; regions of tiles of
//! one colour never overlap. The four colours run one after another; the
//! tiles of a colour run in parallel, each on a copy of its region, written
//! back when the colour is done. Each tile's droplets start at hashed
//! positions in a fixed order, so the result does not depend on the number
//! of threads.

use rayon::prelude::*;

use crate::terrain::generation::noise::{hash2, unit_f64};
use crate::terrain::recipe::plan::Plan;
use crate::terrain::recipe::stages::HydraulicStage;
use crate::terrain::storage::cell::Material;

/// Side of an erosion tile, samples.
pub const TILE_SAMPLES: usize = 128;

/// How far a droplet may leave its tile, samples (under half a tile, so the
/// regions of one colour stay apart).
pub const MARGIN_SAMPLES: usize = TILE_SAMPLES / 2 - 1;

/// Radius of the erosion footprint, samples.
const BRUSH_RADIUS: i64 = 2;

/// Least slope used for the capacity, so droplets on flats still carry.
const MIN_SLOPE: f64 = 0.01;

/// Gravity in the droplet speed update (Beyer's `g`).
const GRAVITY: f64 = 4.0;

/// Hardness of each material id (`[0, 1)`), from the stage.
struct HardnessTable([f64; Material::COUNT]);

impl HardnessTable {
    fn new(stage: &HydraulicStage) -> HardnessTable {
        let mut table = [0.0; Material::COUNT];
        for m in &stage.hardness {
            if let Some(material) = Material::from_name(&m.material) {
                table[material.0 as usize] = m.hardness;
            }
        }
        HardnessTable(table)
    }
}

/// One tile's working copy: its region of the height, sediment and
/// wetness layers.
struct Region {
    side: usize,
    x0: usize,
    z0: usize,
    w: usize,
    d: usize,
    height: Vec<f32>,
    sediment: Vec<f32>,
    visits: Vec<f32>,
}

impl Region {
    fn copy(plan: &Plan, x0: usize, z0: usize, x1: usize, z1: usize) -> Region {
        let (w, d) = (x1 - x0, z1 - z0);
        let grab = |layer: &[f32]| -> Vec<f32> {
            (z0..z1)
                .flat_map(|z| {
                    layer[z * plan.side + x0..z * plan.side + x1]
                        .iter()
                        .copied()
                })
                .collect()
        };
        Region {
            side: plan.side,
            x0,
            z0,
            w,
            d,
            height: grab(&plan.height_cells),
            sediment: grab(&plan.sediment_cells),
            visits: grab(&plan.wetness),
        }
    }

    fn write_back(&self, plan: &mut Plan) {
        for z in 0..self.d {
            let dst = (self.z0 + z) * plan.side + self.x0;
            let src = z * self.w;
            plan.height_cells[dst..dst + self.w].copy_from_slice(&self.height[src..src + self.w]);
            plan.sediment_cells[dst..dst + self.w]
                .copy_from_slice(&self.sediment[src..src + self.w]);
            plan.wetness[dst..dst + self.w].copy_from_slice(&self.visits[src..src + self.w]);
        }
    }

    /// The 4 samples around local `(x, z)` (`x, z >= 0`, inside the
    /// region but its last row and column) and the fractions `(u, v)`.
    /// Truncation is the floor for non-negative coordinates, and unlike
    /// `f64::floor` needs no library call on baseline x86-64.
    #[inline]
    fn corners(&self, x: f64, z: f64) -> ([f64; 4], f64, f64) {
        let (i, j) = (x as usize, z as usize);
        let (u, v) = (x - i as f64, z - j as f64);
        let row0 = &self.height[j * self.w + i..j * self.w + i + 2];
        let row1 = &self.height[(j + 1) * self.w + i..(j + 1) * self.w + i + 2];
        (
            [
                f64::from(row0[0]),
                f64::from(row0[1]),
                f64::from(row1[0]),
                f64::from(row1[1]),
            ],
            u,
            v,
        )
    }

    /// Height and gradient (cells per sample) at local `(x, z)`, bilinear
    /// (`x, z >= 0`).
    #[inline]
    fn height_gradient(&self, x: f64, z: f64) -> (f64, f64, f64) {
        let ([h00, h10, h01, h11], u, v) = self.corners(x, z);
        let gx = (h10 - h00) * (1.0 - v) + (h11 - h01) * v;
        let gz = (h01 - h00) * (1.0 - u) + (h11 - h10) * u;
        (bilinear(h00, h10, h01, h11, u, v), gx, gz)
    }

    /// Height at local `(x, z)`, bilinear (`x, z >= 0`): the `h` of
    /// [`Region::height_gradient`], bit for bit.
    #[inline]
    fn height(&self, x: f64, z: f64) -> f64 {
        let ([h00, h10, h01, h11], u, v) = self.corners(x, z);
        bilinear(h00, h10, h01, h11, u, v)
    }
}

/// The bilinear blend of 4 corner heights (one expression, so every caller
/// rounds alike).
#[inline]
fn bilinear(h00: f64, h10: f64, h01: f64, h11: f64, u: f64, v: f64) -> f64 {
    h00 * (1.0 - u) * (1.0 - v) + h10 * u * (1.0 - v) + h01 * (1.0 - u) * v + h11 * u * v
}

/// The rock a droplet erodes: the material at plan sample `k` and height
/// `h` (cells), whose hardness resists it.
pub type RockAt<'a> = &'a (dyn Fn(usize, f64) -> Material + Sync);

/// Runs the stage's droplets over `plan` with the world `seed`; sediment
/// dropped is added to [`Plan::sediment_cells`] and droplet visits to
/// [`Plan::wetness`] (as `visits / (visits + 16)`). `rock` names the
/// material under a droplet (the recipe's strata, a brush's cells).
/// Returns the droplet steps taken (the unit erosion speed is given in).
pub fn erode_hydraulic(plan: &mut Plan, stage: &HydraulicStage, seed: u64, rock: RockAt) -> u64 {
    let hardness = HardnessTable::new(stage);
    let tiles = plan.side.div_ceil(TILE_SAMPLES);
    // Visits accumulate in the wetness layer during the stage.
    let n = plan.len();
    let start_wetness = std::mem::replace(&mut plan.wetness, vec![0.0; n]);
    let mut steps = 0;
    for colour in 0..4 {
        let mine: Vec<(usize, usize)> = (0..tiles)
            .flat_map(|tj| (0..tiles).map(move |ti| (ti, tj)))
            .filter(|&(ti, tj)| (ti % 2) + 2 * (tj % 2) == colour)
            .collect();
        let plan_ref = &*plan;
        let regions: Vec<(Region, u64)> = mine
            .par_iter()
            .map(|&(ti, tj)| run_tile(plan_ref, stage, seed, rock, &hardness, ti, tj, tiles))
            .collect();
        for (region, tile_steps) in &regions {
            region.write_back(plan);
            steps += tile_steps;
        }
    }
    for (w, start) in plan.wetness.iter_mut().zip(start_wetness) {
        let visits = *w;
        *w = start.max(visits / (visits + 16.0));
    }
    steps
}

/// Simulates tile `(ti, tj)`'s droplets on a copy of its region.
#[allow(clippy::too_many_arguments)]
fn run_tile(
    plan: &Plan,
    stage: &HydraulicStage,
    seed: u64,
    rock: RockAt,
    hardness: &HardnessTable,
    ti: usize,
    tj: usize,
    tiles: usize,
) -> (Region, u64) {
    let side = plan.side;
    let (tx0, tz0) = (ti * TILE_SAMPLES, tj * TILE_SAMPLES);
    let (tx1, tz1) = (
        (tx0 + TILE_SAMPLES).min(side),
        (tz0 + TILE_SAMPLES).min(side),
    );
    let mut region = Region::copy(
        plan,
        tx0.saturating_sub(MARGIN_SAMPLES),
        tz0.saturating_sub(MARGIN_SAMPLES),
        (tx1 + MARGIN_SAMPLES).min(side),
        (tz1 + MARGIN_SAMPLES).min(side),
    );
    // Droplets of this tile: its share of the total, rounded so the tiles'
    // counts add up to the total exactly.
    let tile_index = (tj * tiles + ti) as f64;
    let per_tile = (TILE_SAMPLES * TILE_SAMPLES) as f64 * stage.droplets_per_sample;
    let count = ((tile_index + 1.0) * per_tile).floor() - (tile_index * per_tile).floor();
    let tile_seed = hash2(seed, ti as i64, tj as i64);
    let (rx0, rz0) = (region.x0 as f64, region.z0 as f64);
    let mut steps = 0;
    for n in 0..count as i64 {
        let h = hash2(tile_seed, n, 0x0d0b);
        let x = tx0 as f64 + unit_f64(h) * (tx1 - tx0) as f64;
        let z = tz0 as f64 + unit_f64(hash2(h, n, 1)) * (tz1 - tz0) as f64;
        steps += roll_droplet(
            &mut region,
            stage,
            rock,
            hardness,
            x - rx0,
            z - rz0,
            f64::from(plan.spacing_cells),
        );
    }
    (region, steps)
}

/// One droplet from local `(x, z)` (samples) until it stops, evaporates or
/// leaves the region. Returns its steps (positions it read the ground at).
fn roll_droplet(
    region: &mut Region,
    stage: &HydraulicStage,
    rock: RockAt,
    hardness: &HardnessTable,
    mut x: f64,
    mut z: f64,
    spacing_cells: f64,
) -> u64 {
    let (mut dx, mut dz) = (0.0f64, 0.0f64);
    let (mut speed, mut water, mut sediment) = (1.0f64, 1.0f64, 0.0f64);
    // Keep the 4 bilinear corners and the brush inside the region.
    let lo = (BRUSH_RADIUS + 1) as f64;
    let (hi_x, hi_z) = (region.w as f64 - lo - 1.0, region.d as f64 - lo - 1.0);
    let mut steps = 0;
    for _ in 0..stage.max_steps {
        if !(x >= lo && z >= lo && x < hi_x && z < hi_z) {
            return steps;
        }
        steps += 1;
        let (h, gx, gz) = region.height_gradient(x, z);
        region.visits[z as usize * region.w + x as usize] += water as f32;
        dx = dx * stage.inertia - gx * (1.0 - stage.inertia);
        dz = dz * stage.inertia - gz * (1.0 - stage.inertia);
        let len = (dx * dx + dz * dz).sqrt();
        if len < 1e-12 {
            return steps;
        }
        (dx, dz) = (dx / len, dz / len);
        let (nx, nz) = (x + dx, z + dz);
        if !(nx >= lo && nz >= lo && nx < hi_x && nz < hi_z) {
            return steps;
        }
        let nh = region.height(nx, nz);
        let climb = nh - h;
        let slope = (-climb / spacing_cells).max(MIN_SLOPE);
        let capacity = slope * speed * water * stage.capacity;
        if sediment > capacity || climb > 0.0 {
            let drop = if climb > 0.0 {
                climb.min(sediment)
            } else {
                (sediment - capacity) * stage.deposition
            };
            sediment -= drop;
            deposit(region, x, z, drop);
        } else {
            let k = (region.z0 + z as usize) * region.side + region.x0 + x as usize;
            let material = rock(k, h);
            let resist = 1.0 - hardness.0[material.0 as usize];
            let take = ((capacity - sediment) * stage.erosion).min(-climb) * resist;
            sediment += erode(region, x, z, take, nh as f32);
        }
        speed = (speed * speed - climb * GRAVITY).max(0.0).sqrt();
        water *= 1.0 - stage.evaporation;
        (x, z) = (nx, nz);
        if water < 0.01 {
            break;
        }
    }
    steps
}

/// Adds `amount` cells of sediment bilinearly at the 4 corners of `(x, z)`
/// (`x, z >= 0`: truncation is the floor).
#[inline]
fn deposit(region: &mut Region, x: f64, z: f64, amount: f64) {
    let (i, j) = (x as usize, z as usize);
    let (u, v) = (x - i as f64, z - j as f64);
    for (di, dj, w) in [
        (0, 0, (1.0 - u) * (1.0 - v)),
        (1, 0, u * (1.0 - v)),
        (0, 1, (1.0 - u) * v),
        (1, 1, u * v),
    ] {
        let k = (j + dj) * region.w + i + di;
        let add = (amount * w) as f32;
        region.height[k] += add;
        region.sediment[k] += add;
    }
}

/// Removes up to `amount` cells from the brush around `(x, z)` (weights
/// falling linearly to 0 at [`BRUSH_RADIUS`]), never digging a sample below
/// `floor_cells`, the height the droplet flows on to (else the footprint's
/// edge digs pits the droplet then falls into, and they run away); returns
/// what was removed.
#[inline]
fn erode(region: &mut Region, x: f64, z: f64, amount: f64, floor_cells: f32) -> f64 {
    if amount <= 0.0 {
        return 0.0;
    }
    // `x, z >= 0`: truncation is the floor.
    let (ci, cj) = (x as i64, z as i64);
    // The fractions are exact (`x - floor(x)`), so `di - u` is the same
    // double as `(ci + di) - x`: both round the same real number.
    let (u, v) = (x - ci as f64, z - cj as f64);
    // A sample `BRUSH_RADIUS` below the droplet's floor sample lies at
    // least `BRUSH_RADIUS` away along that axis, where the weight is 0:
    // only offsets from `1 - BRUSH_RADIUS` can weigh anything. The 16
    // weights are computed together (the square roots vectorise), then
    // the positive ones kept in order.
    const SPAN: usize = 2 * BRUSH_RADIUS as usize;
    let mut all = [0.0f64; SPAN * SPAN];
    for (l, row) in all.chunks_exact_mut(SPAN).enumerate() {
        let pz = (l as i64 + 1 - BRUSH_RADIUS) as f64 - v;
        for (k, w) in row.iter_mut().enumerate() {
            let px = (k as i64 + 1 - BRUSH_RADIUS) as f64 - u;
            *w = BRUSH_RADIUS as f64 - (px * px + pz * pz).sqrt();
        }
    }
    let mut weights = [(0usize, 0.0f64); SPAN * SPAN];
    let mut count = 0;
    let mut total = 0.0;
    for (n, &w) in all.iter().enumerate() {
        if w > 0.0 {
            let i = (ci + (n % SPAN) as i64 + 1 - BRUSH_RADIUS) as usize;
            let j = (cj + (n / SPAN) as i64 + 1 - BRUSH_RADIUS) as usize;
            weights[count] = (j * region.w + i, w);
            total += w;
            count += 1;
        }
    }
    let mut removed = 0.0;
    for &(k, w) in &weights[..count] {
        let take = ((amount * w / total) as f32).min((region.height[k] - floor_cells).max(0.0));
        region.height[k] -= take;
        // Eroding a deposit removes it first.
        region.sediment[k] = (region.sediment[k] - take).max(0.0);
        removed += f64::from(take);
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slope_plan() -> Plan {
        let mut plan = Plan::new(256);
        for j in 0..plan.side {
            for i in 0..plan.side {
                let k = plan.index(i, j);
                let bump =
                    crate::terrain::generation::noise::fbm(3, i as f64 / 20.0, j as f64 / 20.0, 4);
                plan.height_cells[k] = (100.0 - i as f64 * 0.3 + bump * 3.0) as f32;
            }
        }
        plan
    }

    fn stage() -> HydraulicStage {
        HydraulicStage {
            droplets_per_sample: 0.5,
            max_steps: 64,
            capacity: 4.0,
            erosion: 0.3,
            deposition: 0.3,
            evaporation: 0.02,
            inertia: 0.1,
            hardness: Vec::new(),
        }
    }

    #[test]
    fn droplets_cut_gullies_and_deposit_downslope() {
        let mut plan = slope_plan();
        let before = plan.clone();
        erode_hydraulic(&mut plan, &stage(), 11, &|_, _| Material::ROCK);
        let lowered = plan
            .height_cells
            .iter()
            .zip(&before.height_cells)
            .filter(|(a, b)| *a < *b)
            .count();
        assert!(lowered > plan.len() / 10, "only {lowered} samples eroded");
        assert!(plan.sediment_cells.iter().any(|&s| s > 0.05));
        assert!(plan.wetness.iter().all(|w| (0.0..1.0).contains(w)));
        // Deterministic: a second run gives the same bits.
        let mut again = before.clone();
        erode_hydraulic(&mut again, &stage(), 11, &|_, _| Material::ROCK);
        assert_eq!(again, plan);
    }
}
