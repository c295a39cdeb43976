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

    /// Height and gradient (cells per sample) at local `(x, z)`, bilinear.
    fn height_gradient(&self, x: f64, z: f64) -> (f64, f64, f64) {
        let (i, j) = (x.floor() as usize, z.floor() as usize);
        let (u, v) = (x - i as f64, z - j as f64);
        let at = |i: usize, j: usize| f64::from(self.height[j * self.w + i]);
        let (h00, h10, h01, h11) = (at(i, j), at(i + 1, j), at(i, j + 1), at(i + 1, j + 1));
        let gx = (h10 - h00) * (1.0 - v) + (h11 - h01) * v;
        let gz = (h01 - h00) * (1.0 - u) + (h11 - h10) * u;
        let h =
            h00 * (1.0 - u) * (1.0 - v) + h10 * u * (1.0 - v) + h01 * (1.0 - u) * v + h11 * u * v;
        (h, gx, gz)
    }
}

/// The rock a droplet erodes: the material at plan sample `k` and height
/// `h` (cells), whose hardness resists it.
pub type RockAt<'a> = &'a (dyn Fn(usize, f64) -> Material + Sync);

/// Runs the stage's droplets over `plan` with the world `seed`; sediment
/// dropped is added to [`Plan::sediment_cells`] and droplet visits to
/// [`Plan::wetness`] (as `visits / (visits + 16)`). `rock` names the
/// material under a droplet (the recipe's strata, a brush's cells).
pub fn erode_hydraulic(plan: &mut Plan, stage: &HydraulicStage, seed: u64, rock: RockAt) {
    let hardness = HardnessTable::new(stage);
    let tiles = plan.side.div_ceil(TILE_SAMPLES);
    // Visits accumulate in the wetness layer during the stage.
    let n = plan.len();
    let start_wetness = std::mem::replace(&mut plan.wetness, vec![0.0; n]);
    for colour in 0..4 {
        let mine: Vec<(usize, usize)> = (0..tiles)
            .flat_map(|tj| (0..tiles).map(move |ti| (ti, tj)))
            .filter(|&(ti, tj)| (ti % 2) + 2 * (tj % 2) == colour)
            .collect();
        let plan_ref = &*plan;
        let regions: Vec<Region> = mine
            .par_iter()
            .map(|&(ti, tj)| run_tile(plan_ref, stage, seed, rock, &hardness, ti, tj, tiles))
            .collect();
        for region in &regions {
            region.write_back(plan);
        }
    }
    for (w, start) in plan.wetness.iter_mut().zip(start_wetness) {
        let visits = *w;
        *w = start.max(visits / (visits + 16.0));
    }
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
) -> Region {
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
    for n in 0..count as i64 {
        let h = hash2(tile_seed, n, 0x0d0b);
        let x = tx0 as f64 + unit_f64(h) * (tx1 - tx0) as f64;
        let z = tz0 as f64 + unit_f64(hash2(h, n, 1)) * (tz1 - tz0) as f64;
        roll_droplet(
            &mut region,
            stage,
            rock,
            hardness,
            x - rx0,
            z - rz0,
            f64::from(plan.spacing_cells),
        );
    }
    region
}

/// One droplet from local `(x, z)` (samples) until it stops, evaporates or
/// leaves the region.
fn roll_droplet(
    region: &mut Region,
    stage: &HydraulicStage,
    rock: RockAt,
    hardness: &HardnessTable,
    mut x: f64,
    mut z: f64,
    spacing_cells: f64,
) {
    let (mut dx, mut dz) = (0.0f64, 0.0f64);
    let (mut speed, mut water, mut sediment) = (1.0f64, 1.0f64, 0.0f64);
    // Keep the 4 bilinear corners and the brush inside the region.
    let lo = (BRUSH_RADIUS + 1) as f64;
    let (hi_x, hi_z) = (region.w as f64 - lo - 1.0, region.d as f64 - lo - 1.0);
    for _ in 0..stage.max_steps {
        if !(x >= lo && z >= lo && x < hi_x && z < hi_z) {
            return;
        }
        let (h, gx, gz) = region.height_gradient(x, z);
        region.visits[z as usize * region.w + x as usize] += water as f32;
        dx = dx * stage.inertia - gx * (1.0 - stage.inertia);
        dz = dz * stage.inertia - gz * (1.0 - stage.inertia);
        let len = (dx * dx + dz * dz).sqrt();
        if len < 1e-12 {
            return;
        }
        (dx, dz) = (dx / len, dz / len);
        let (nx, nz) = (x + dx, z + dz);
        if !(nx >= lo && nz >= lo && nx < hi_x && nz < hi_z) {
            return;
        }
        let (nh, _, _) = region.height_gradient(nx, nz);
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
}

/// Adds `amount` cells of sediment bilinearly at the 4 corners of `(x, z)`.
fn deposit(region: &mut Region, x: f64, z: f64, amount: f64) {
    let (i, j) = (x.floor() as usize, z.floor() as usize);
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
fn erode(region: &mut Region, x: f64, z: f64, amount: f64, floor_cells: f32) -> f64 {
    if amount <= 0.0 {
        return 0.0;
    }
    let (ci, cj) = (x.floor() as i64, z.floor() as i64);
    let mut weights = [(0usize, 0.0f64); 25];
    let mut count = 0;
    let mut total = 0.0;
    for dj in -BRUSH_RADIUS..=BRUSH_RADIUS {
        for di in -BRUSH_RADIUS..=BRUSH_RADIUS {
            let (i, j) = (ci + di, cj + dj);
            // Samples sit at integer coordinates, as `height_gradient` reads
            // them: a footprint offset by half a sample would dig ahead of
            // the droplet and run away.
            let (px, pz) = (i as f64 - x, j as f64 - z);
            let w = BRUSH_RADIUS as f64 - (px * px + pz * pz).sqrt();
            if w > 0.0 {
                weights[count] = (j as usize * region.w + i as usize, w);
                total += w;
                count += 1;
            }
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
