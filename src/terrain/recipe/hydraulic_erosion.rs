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
//!
//! # Speed
//! Droplets are f32 and roll [`LANES`] at a time, each lane taking the next
//! droplet when its own ends (the lanes' steps interleave in a fixed
//! order). When the lanes' footprints are apart, a round's motion runs as
//! 4-wide operations (`lockstep`), with the same bits as the lanes one
//! after another. A droplet carries the sample it stands in, so a step converts
//! its position once. The erosion brush is looked up, not computed: its
//! weights are precomputed for 8 × 8 sub-squares of a sample, and each of
//! its 4 rows is one short vector operation. Hardness is a table by cell
//! row (or by sample), not a call. On x86-64 the droplets are also compiled
//! for AVX2 and chosen at run time, with the same IEEE-754 operations (no
//! fused multiply-add), so both builds give the same bits (tested).

use rayon::prelude::*;

use crate::progress::{Cancelled, Progress};
use crate::terrain::generation::noise::{hash2, unit_f64};
use crate::terrain::recipe::plan::Plan;
use crate::terrain::recipe::recipe_materials::RecipeMaterials;
use crate::terrain::recipe::stages::HydraulicStage;
use crate::terrain::storage::cell::Material;

/// Side of an erosion tile, samples.
pub const TILE_SAMPLES: usize = 128;

/// How far a droplet may leave its tile, samples (under half a tile, so the
/// regions of one colour stay apart).
pub const MARGIN_SAMPLES: usize = TILE_SAMPLES / 2 - 1;

/// Radius of the erosion footprint, samples.
const BRUSH_RADIUS: f32 = 2.0;

/// Side of the erosion footprint's box, samples: the brush around a
/// droplet at `(x, z)` covers samples `floor(x) - 1 ..= floor(x) + 2`
/// (a sample 2 or more away along an axis weighs nothing).
const BRUSH_SPAN: usize = 4;

/// Fractional positions of a droplet inside its sample, per axis, for
/// which the brush weights are precomputed (the brush sits at the centre
/// of the droplet's 1/8-sample sub-square).
const BRUSH_STEPS: usize = 8;

/// Droplets rolled side by side: their steps are independent chains of
/// arithmetic, so the processor overlaps them.
const LANES: usize = 4;

/// Least slope used for the capacity, so droplets on flats still carry.
const MIN_SLOPE: f32 = 0.01;

/// Gravity in the droplet speed update (Beyer's `g`).
const GRAVITY: f32 = 4.0;

/// The rock a droplet erodes, whose hardness resists it.
#[derive(Clone, Copy)]
pub enum RockAt<'a> {
    /// The same at every sample for a height: the material of cell row
    /// `y` (cells), as the recipe's strata.
    ByHeight(&'a (dyn Fn(i32) -> Material + Sync)),
    /// Each plan sample's own material (row-major, one per sample), as the
    /// top cells under an erosion brush.
    BySample(&'a [Material]),
}

/// The fraction of erosion that gets through (`1 - hardness`) where a
/// droplet erodes, looked up without calls: by cell row from a table made
/// for the plan's height range, or from each sample's material.
enum Resist<'a> {
    ByHeight {
        /// Cell row of `rows[0]`.
        lowest_row: i32,
        rows: Vec<f32>,
        rock: &'a (dyn Fn(i32) -> Material + Sync),
        by_material: [f32; Material::ID_COUNT],
    },
    BySample {
        materials: &'a [Material],
        by_material: [f32; Material::ID_COUNT],
    },
}

impl<'a> Resist<'a> {
    fn new(
        stage: &HydraulicStage,
        materials: &RecipeMaterials,
        rock: RockAt<'a>,
        plan: &Plan,
    ) -> Resist<'a> {
        let mut by_material = [1.0f32; Material::ID_COUNT];
        for m in &stage.hardness {
            if let Some(material) = materials.material(&m.material) {
                by_material[material.0 as usize] = (1.0 - m.hardness) as f32;
            }
        }
        match rock {
            RockAt::ByHeight(rock) => {
                let (lo, hi) = plan
                    .height_cells
                    .iter()
                    .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &h| {
                        (lo.min(h), hi.max(h))
                    });
                // Erosion only lowers and deposits only fill: droplets stay
                // within the plan's range (a cell of slack each way); rows
                // outside it are asked of `rock` directly.
                let (lowest_row, highest_row) = if lo <= hi && hi - lo < 1e6 {
                    (
                        floor_i32(lo).saturating_sub(1),
                        floor_i32(hi).saturating_add(1),
                    )
                } else {
                    (0, -1)
                };
                let rows = (lowest_row..=highest_row)
                    .map(|y| by_material[rock(y).0 as usize])
                    .collect();
                Resist::ByHeight {
                    lowest_row,
                    rows,
                    rock,
                    by_material,
                }
            }
            RockAt::BySample(materials) => Resist::BySample {
                materials,
                by_material,
            },
        }
    }

    /// At plan sample `k`, height `h` (cells).
    #[inline]
    fn at(&self, k: usize, h: f32) -> f32 {
        match self {
            Resist::ByHeight {
                lowest_row,
                rows,
                rock,
                by_material,
            } => {
                let row = floor_i32(h);
                match rows.get(row.wrapping_sub(*lowest_row) as u32 as usize) {
                    Some(&r) => r,
                    None => by_material[rock(row).0 as usize],
                }
            }
            Resist::BySample {
                materials,
                by_material,
            } => materials.get(k).map_or(1.0, |m| by_material[m.0 as usize]),
        }
    }
}

/// `floor(h)` without a library call (truncation, one down for negative
/// fractions), saturating at the ends of `i32` (NaN gives 0).
#[inline]
fn floor_i32(h: f32) -> i32 {
    let t = h as i32;
    t.saturating_sub(i32::from((t as f32) > h))
}

/// The erosion brush (weights falling linearly to 0 at [`BRUSH_RADIUS`],
/// normalised to sum 1) over the [`BRUSH_SPAN`]² box, for each of the
/// [`BRUSH_STEPS`]² sub-squares a droplet can stand in.
struct BrushTable(Vec<[[f32; BRUSH_SPAN]; BRUSH_SPAN]>);

impl BrushTable {
    fn new() -> BrushTable {
        let mut table = Vec::with_capacity(BRUSH_STEPS * BRUSH_STEPS);
        for sv in 0..BRUSH_STEPS {
            for su in 0..BRUSH_STEPS {
                let u = (su as f32 + 0.5) / BRUSH_STEPS as f32;
                let v = (sv as f32 + 0.5) / BRUSH_STEPS as f32;
                let mut weights = [[0.0f32; BRUSH_SPAN]; BRUSH_SPAN];
                let mut total = 0.0;
                for (l, row) in weights.iter_mut().enumerate() {
                    for (k, w) in row.iter_mut().enumerate() {
                        let px = k as f32 - 1.0 - u;
                        let pz = l as f32 - 1.0 - v;
                        *w = (BRUSH_RADIUS - (px * px + pz * pz).sqrt()).max(0.0);
                        total += *w;
                    }
                }
                for w in weights.iter_mut().flatten() {
                    *w /= total;
                }
                table.push(weights);
            }
        }
        BrushTable(table)
    }

    /// The weights for fractions `(u, v)` in `[0, 1)`.
    #[inline]
    fn at(&self, u: f32, v: f32) -> &[[f32; BRUSH_SPAN]; BRUSH_SPAN] {
        let su = ((u * BRUSH_STEPS as f32) as usize).min(BRUSH_STEPS - 1);
        let sv = ((v * BRUSH_STEPS as f32) as usize).min(BRUSH_STEPS - 1);
        &self.0[sv * BRUSH_STEPS + su]
    }
}

/// The stage's parameters in the droplets' f32 arithmetic.
struct Params {
    max_steps: u32,
    capacity: f32,
    erosion: f32,
    deposition: f32,
    keep_water: f32,
    inertia: f32,
    spacing_cells: f32,
}

impl Params {
    fn new(stage: &HydraulicStage, spacing_cells: u32) -> Params {
        Params {
            max_steps: stage.max_steps,
            capacity: stage.capacity as f32,
            erosion: stage.erosion as f32,
            deposition: stage.deposition as f32,
            keep_water: (1.0 - stage.evaporation) as f32,
            inertia: stage.inertia as f32,
            spacing_cells: spacing_cells as f32,
        }
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

    /// Where local `(x, z)` falls (`x, z >= 0`, checked by the caller):
    /// its sample's column and row and the fractions `(u, v)`. Truncation
    /// is the floor for non-negative coordinates; through `i32` it is a
    /// shorter conversion than to `usize`.
    #[inline]
    fn locate(x: f32, z: f32) -> (u32, u32, f32, f32) {
        let (i, j) = (x as i32, z as i32);
        (i as u32, j as u32, x - i as f32, z - j as f32)
    }

    /// The 4 heights from region index `k` (the sample and its +x, +z and
    /// +x+z neighbours).
    #[inline]
    fn corners(&self, k: usize) -> [f32; 4] {
        let row0 = &self.height[k..k + 2];
        let row1 = &self.height[k + self.w..k + self.w + 2];
        [row0[0], row0[1], row1[0], row1[1]]
    }
}

/// The smaller of `a` and `b` by one comparison (`b` when they tie or
/// either is NaN): a single `minss` on x86, where [`f32::min`] also spends
/// instructions making a NaN lose. Droplet values are finite, and for
/// finite values the two agree.
#[inline(always)]
fn min_f32(a: f32, b: f32) -> f32 {
    if a < b { a } else { b }
}

/// The larger of `a` and `b` by one comparison (`b` when they tie or
/// either is NaN); see [`min_f32`].
#[inline(always)]
fn max_f32(a: f32, b: f32) -> f32 {
    if a > b { a } else { b }
}

/// The bilinear blend of 4 corner heights.
#[inline]
fn bilinear(h00: f32, h10: f32, h01: f32, h11: f32, u: f32, v: f32) -> f32 {
    let top = h00 + (h10 - h00) * u;
    let bottom = h01 + (h11 - h01) * u;
    top + (bottom - top) * v
}

/// Runs the stage's droplets over `plan` with the world `seed`; sediment
/// dropped is added to [`Plan::sediment_cells`] and droplet visits to
/// [`Plan::wetness`] (as `visits / (visits + 16)`). `rock` names the
/// material under a droplet (the recipe's strata, a brush's cells), whose
/// hardness the stage gives by name (`materials` says what names mean).
/// `progress` counts one unit per tile (the caller begins the stage with
/// [`hydraulic_tiles`] units) and is checked every few hundred droplets.
/// Returns the droplet steps taken (the unit erosion speed is given in).
///
/// # Errors
/// [`Cancelled`] when `progress` was cancelled; `plan` is then partly
/// eroded and must be dropped.
pub fn erode_hydraulic(
    plan: &mut Plan,
    stage: &HydraulicStage,
    materials: &RecipeMaterials,
    seed: u64,
    rock: RockAt,
    progress: &Progress,
) -> Result<u64, Cancelled> {
    erode_hydraulic_on(
        plan,
        stage,
        materials,
        seed,
        rock,
        progress,
        DropletPath::FASTEST,
    )
}

/// Which instructions the droplets run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Isa {
    /// AVX2 where the CPU has it (same results, fewer instructions).
    Best,
    /// The target's baseline only (to check the results are the same).
    #[cfg_attr(not(test), allow(dead_code))]
    Baseline,
}

/// How the droplets run. Every path gives the same bits (tested).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct DropletPath {
    isa: Isa,
    /// Lanes whose footprints are apart step in lockstep (see `lockstep`);
    /// else always one after another.
    lockstep: bool,
}

impl DropletPath {
    const FASTEST: DropletPath = DropletPath {
        isa: Isa::Best,
        lockstep: true,
    };
}

/// [`erode_hydraulic`] on the path `path` says.
fn erode_hydraulic_on(
    plan: &mut Plan,
    stage: &HydraulicStage,
    materials: &RecipeMaterials,
    seed: u64,
    rock: RockAt,
    progress: &Progress,
    path: DropletPath,
) -> Result<u64, Cancelled> {
    let resist = Resist::new(stage, materials, rock, plan);
    let brush = BrushTable::new();
    let params = Params::new(stage, plan.spacing_cells);
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
        let run = Tiles {
            plan: plan_ref,
            stage,
            params: &params,
            seed,
            resist: &resist,
            brush: &brush,
            tiles,
            progress,
            path,
        };
        let regions: Vec<(Region, u64)> = mine
            .par_iter()
            .map(|&(ti, tj)| run.tile(ti, tj))
            .collect::<Result<_, Cancelled>>()?;
        for (region, tile_steps) in &regions {
            region.write_back(plan);
            steps += tile_steps;
        }
    }
    for (w, start) in plan.wetness.iter_mut().zip(start_wetness) {
        let visits = *w;
        *w = start.max(visits / (visits + 16.0));
    }
    Ok(steps)
}

/// Progress units [`erode_hydraulic`] counts for a plan `side` samples
/// wide: one per tile.
pub fn hydraulic_tiles(side: usize) -> u64 {
    let tiles = side.div_ceil(TILE_SAMPLES) as u64;
    tiles * tiles
}

/// Droplets between two cancellation checks (a few milliseconds).
const DROPLETS_PER_CHECK: usize = 256;

/// What every tile of one stage shares.
struct Tiles<'a> {
    plan: &'a Plan,
    stage: &'a HydraulicStage,
    params: &'a Params,
    seed: u64,
    resist: &'a Resist<'a>,
    brush: &'a BrushTable,
    tiles: usize,
    progress: &'a Progress,
    path: DropletPath,
}

impl Tiles<'_> {
    /// Simulates tile `(ti, tj)`'s droplets on a copy of its region.
    fn tile(&self, ti: usize, tj: usize) -> Result<(Region, u64), Cancelled> {
        self.progress.check()?;
        let side = self.plan.side;
        let (tx0, tz0) = (ti * TILE_SAMPLES, tj * TILE_SAMPLES);
        let (tx1, tz1) = (
            (tx0 + TILE_SAMPLES).min(side),
            (tz0 + TILE_SAMPLES).min(side),
        );
        let mut region = Region::copy(
            self.plan,
            tx0.saturating_sub(MARGIN_SAMPLES),
            tz0.saturating_sub(MARGIN_SAMPLES),
            (tx1 + MARGIN_SAMPLES).min(side),
            (tz1 + MARGIN_SAMPLES).min(side),
        );
        // Droplets of this tile: its share of the total, rounded so the
        // tiles' counts add up to the total exactly.
        let tile_index = (tj * self.tiles + ti) as f64;
        let per_tile = (TILE_SAMPLES * TILE_SAMPLES) as f64 * self.stage.droplets_per_sample;
        let count =
            (((tile_index + 1.0) * per_tile).floor() - (tile_index * per_tile).floor()) as usize;
        let tile_seed = hash2(self.seed, ti as i64, tj as i64);
        let (rx0, rz0) = (region.x0 as f64, region.z0 as f64);
        let start = |n: usize| {
            let h = hash2(tile_seed, n as i64, 0x0d0b);
            let x = tx0 as f64 + unit_f64(h) * (tx1 - tx0) as f64;
            let z = tz0 as f64 + unit_f64(hash2(h, n as i64, 1)) * (tz1 - tz0) as f64;
            ((x - rx0) as f32, (z - rz0) as f32)
        };
        let mut roller = Roller {
            region: &mut region,
            params: self.params,
            resist: self.resist,
            brush: self.brush,
            path: self.path,
        };
        let mut steps = 0;
        let mut next = 0;
        while next < count {
            let batch_end = (next + DROPLETS_PER_CHECK).min(count);
            steps += roller.roll_batch(next..batch_end, &start);
            next = batch_end;
            self.progress.check()?;
        }
        self.progress.advance(1);
        Ok((region, steps))
    }
}

/// One droplet in flight (local sample coordinates; Beyer's state).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Droplet {
    x: f32,
    z: f32,
    /// The sample `(x, z)` lies in: column, row, fractions.
    i: u32,
    j: u32,
    u: f32,
    v: f32,
    dx: f32,
    dz: f32,
    speed: f32,
    water: f32,
    sediment: f32,
    steps_left: u32,
}

/// Rolls droplets over one region.
struct Roller<'a, 'r> {
    region: &'a mut Region,
    params: &'a Params,
    resist: &'a Resist<'r>,
    brush: &'a BrushTable,
    path: DropletPath,
}

impl Roller<'_, '_> {
    /// Rolls the droplets `range` (started by `start(n)`), [`LANES`] at a
    /// time, each lane taking its next droplet when its droplet ends.
    /// Returns the steps taken.
    fn roll_batch(
        &mut self,
        range: std::ops::Range<usize>,
        start: &impl Fn(usize) -> (f32, f32),
    ) -> u64 {
        #[cfg(target_arch = "x86_64")]
        if self.path.isa == Isa::Best && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (and so SSE4.1).
            return unsafe { self.roll_batch_avx2(range, start) };
        }
        self.roll_batch_any(range, start)
    }

    /// [`Roller::roll_batch_any`] compiled with AVX2: the same IEEE-754
    /// operations (no fused multiply-add), so the same bits, in fewer
    /// instructions.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn roll_batch_avx2(
        &mut self,
        range: std::ops::Range<usize>,
        start: &impl Fn(usize) -> (f32, f32),
    ) -> u64 {
        self.roll_batch_any(range, start)
    }

    #[inline(always)]
    fn roll_batch_any(
        &mut self,
        range: std::ops::Range<usize>,
        start: &impl Fn(usize) -> (f32, f32),
    ) -> u64 {
        let mut lanes = [Droplet::default(); LANES];
        let mut next = range.start;
        let mut live = 0usize;
        for lane in &mut lanes {
            if self.refill(lane, &mut next, range.end, start) {
                live += 1;
            }
        }
        let mut steps = 0;
        while live > 0 {
            // All lanes apart: one round in lockstep, the same bits as the
            // lanes one after another (see `lockstep`).
            let together =
                self.path.lockstep && live == LANES && lockstep::footprints_apart(&lanes);
            if together {
                self.step_lockstep(&mut lanes);
            }
            for lane in &mut lanes {
                if !together {
                    if lane.steps_left == 0 {
                        continue;
                    }
                    self.step(lane);
                }
                steps += 1;
                if lane.steps_left == 0 && !self.refill(lane, &mut next, range.end, start) {
                    live -= 1;
                }
            }
        }
        steps
    }

    /// Puts the next droplet of `*next..end` that starts inside the region
    /// into `lane`; false when none is left.
    fn refill(
        &self,
        lane: &mut Droplet,
        next: &mut usize,
        end: usize,
        start: &impl Fn(usize) -> (f32, f32),
    ) -> bool {
        while *next < end {
            *lane = self.launch(start(*next));
            *next += 1;
            if lane.steps_left > 0 {
                return true;
            }
        }
        false
    }

    /// A droplet at local `(x, z)`, or a dead one (no steps) where the
    /// bilinear corners or the brush would leave the region.
    fn launch(&self, (x, z): (f32, f32)) -> Droplet {
        let inside = self.inside(x, z);
        let (i, j, u, v) = if inside {
            Region::locate(x, z)
        } else {
            (0, 0, 0.0, 0.0)
        };
        Droplet {
            x,
            z,
            i,
            j,
            u,
            v,
            dx: 0.0,
            dz: 0.0,
            speed: 1.0,
            water: 1.0,
            sediment: 0.0,
            steps_left: if inside { self.params.max_steps } else { 0 },
        }
    }

    /// True when a droplet at local `(x, z)` keeps its 4 bilinear corners
    /// and its brush inside the region.
    #[inline]
    fn inside(&self, x: f32, z: f32) -> bool {
        let lo = BRUSH_SPAN as f32 - 1.0;
        let (hi_x, hi_z) = (
            self.region.w as f32 - lo - 1.0,
            self.region.d as f32 - lo - 1.0,
        );
        x >= lo && z >= lo && x < hi_x && z < hi_z
    }

    /// One step of `d` (alive: `steps_left > 0`): reads the ground,
    /// turns, moves, erodes or deposits. Sets `steps_left` to 0 when the
    /// droplet ends.
    #[inline(always)]
    fn step(&mut self, d: &mut Droplet) {
        let p = self.params;
        d.steps_left -= 1;
        let (u, v) = (d.u, d.v);
        let k = d.j as usize * self.region.w + d.i as usize;
        let [h00, h10, h01, h11] = self.region.corners(k);
        let h = bilinear(h00, h10, h01, h11, u, v);
        let gx = (h10 - h00) + ((h11 - h01) - (h10 - h00)) * v;
        let gz = (h01 - h00) + ((h11 - h10) - (h01 - h00)) * u;
        self.region.visits[k] += d.water;
        let dx = d.dx * p.inertia - gx * (1.0 - p.inertia);
        let dz = d.dz * p.inertia - gz * (1.0 - p.inertia);
        let len_sq = dx * dx + dz * dz;
        if len_sq < 1e-24 {
            d.steps_left = 0;
            return;
        }
        let inv_len = 1.0 / len_sq.sqrt();
        (d.dx, d.dz) = (dx * inv_len, dz * inv_len);
        let (nx, nz) = (d.x + d.dx, d.z + d.dz);
        if !self.inside(nx, nz) {
            d.steps_left = 0;
            return;
        }
        let (ni, nj, nu, nv) = Region::locate(nx, nz);
        let [n00, n10, n01, n11] = self
            .region
            .corners(nj as usize * self.region.w + ni as usize);
        let nh = bilinear(n00, n10, n01, n11, nu, nv);
        let climb = nh - h;
        let slope = max_f32(-climb / p.spacing_cells, MIN_SLOPE);
        let capacity = slope * d.speed * d.water * p.capacity;
        self.exchange(d, k, h, nh, climb, capacity);
        d.speed = max_f32(d.speed * d.speed - climb * GRAVITY, 0.0).sqrt();
        d.water *= p.keep_water;
        (d.x, d.z, d.i, d.j, d.u, d.v) = (nx, nz, ni, nj, nu, nv);
        if d.water < 0.01 {
            d.steps_left = 0;
        }
    }

    /// The sediment exchange of a step of `d` from region index `k` (its
    /// sample before the move) at height `h` to height `nh` (`climb =
    /// nh - h`) with sediment `capacity`: deposits where the droplet carries
    /// more than it can or climbs, else erodes (hardness permitting).
    #[inline(always)]
    fn exchange(&mut self, d: &mut Droplet, k: usize, h: f32, nh: f32, climb: f32, capacity: f32) {
        let p = self.params;
        let region = &mut *self.region;
        if d.sediment > capacity || climb > 0.0 {
            let drop = if climb > 0.0 {
                min_f32(climb, d.sediment)
            } else {
                (d.sediment - capacity) * p.deposition
            };
            d.sediment -= drop;
            deposit(region, k, d.u, d.v, drop);
        } else {
            let plan_k = (region.z0 + d.j as usize) * region.side + region.x0 + d.i as usize;
            let resist = self.resist.at(plan_k, h);
            let take = min_f32((capacity - d.sediment) * p.erosion, -climb) * resist;
            d.sediment += erode(region, self.brush, k, d.u, d.v, take, nh);
        }
    }
}

/// Adds `amount` cells of sediment bilinearly at the 4 corners from
/// region index `k` with fractions `(u, v)`.
#[inline(always)]
fn deposit(region: &mut Region, k: usize, u: f32, v: f32, amount: f32) {
    let w = region.w;
    for (at, weight) in [
        (k, (1.0 - u) * (1.0 - v)),
        (k + 1, u * (1.0 - v)),
        (k + w, (1.0 - u) * v),
        (k + w + 1, u * v),
    ] {
        let add = amount * weight;
        region.height[at] += add;
        region.sediment[at] += add;
    }
}

/// Removes up to `amount` cells from the brush around the droplet at
/// region index `k` with fractions `(u, v)`, never digging a sample below
/// `floor_cells`, the height the droplet flows on to (else the footprint's
/// edge digs pits the droplet then falls into, and they run away); returns
/// what was removed. The brush box's rows are 4 contiguous samples, so
/// each row is one short vector operation.
#[inline(always)]
fn erode(
    region: &mut Region,
    brush: &BrushTable,
    k: usize,
    u: f32,
    v: f32,
    amount: f32,
    floor_cells: f32,
) -> f32 {
    if amount <= 0.0 {
        return 0.0;
    }
    let weights = brush.at(u, v);
    let w = region.w;
    // The box starts one sample before and one row above the droplet's.
    let first = k - w - 1;
    let mut removed = [0.0f32; BRUSH_SPAN];
    for (l, row_weights) in weights.iter().enumerate() {
        let at = first + l * w;
        let heights = &mut region.height[at..at + BRUSH_SPAN];
        let sediment = &mut region.sediment[at..at + BRUSH_SPAN];
        for t in 0..BRUSH_SPAN {
            let take = min_f32(
                amount * row_weights[t],
                max_f32(heights[t] - floor_cells, 0.0),
            );
            heights[t] -= take;
            // Eroding a deposit removes it first.
            sediment[t] = max_f32(sediment[t] - take, 0.0);
            removed[t] += take;
        }
    }
    (removed[0] + removed[1]) + (removed[2] + removed[3])
}

mod lockstep;
#[cfg(test)]
mod tests;
