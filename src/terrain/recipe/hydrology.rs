//! Water on the plan: the sea, drainage, the breach, lakes and rivers.
//!
//! - **Sea**: samples below sea level connected to the map rim.
//! - **Drainage**: a priority flood from the outlets (the rim and the sea)
//!   gives every sample a downstream neighbour and its spill level, the
//!   height water must reach there to flow out (Barnes, Lehman and Mulla
//!   2014, "Priority-flood: an optimal depression-filling and
//!   watershed-labeling algorithm", with D8 neighbours).
//! - **Breach**: every basin is drained along its flood path, the path over
//!   its shallowest saddle, by lowering the path to the basin's floor
//!   (Lindsay 2016, "Efficient hybrid breaching-filling sink removal"),
//!   unless the cut would be deeper than the cap; capped basins become
//!   lakes filled to their spill level.
//! - **Rivers**: where the catchment passes a threshold, a channel is
//!   carved to a water surface that never rises downstream, ending in the
//!   sea, a lake or off the map.

use crate::progress::{Cancelled, Progress};
use std::collections::BinaryHeap;

use crate::terrain::recipe::plan::{DRY, LAKE, NEIGHBOURS_8, Plan, RIVER, SEA};
use crate::terrain::recipe::slope_cap::cap_slopes;
use crate::terrain::recipe::stages::RiversStage;

/// "No downstream neighbour" (an outlet).
const OUTLET: u32 = u32::MAX;

/// Least depth of standing water kept as a lake, cells; shallower hollows
/// just drain.
const MIN_LAKE_DEPTH_CELLS: f32 = 0.25;

/// How far the river's water lies below the ground it was cut into, cells.
const WATER_BELOW_GROUND_CELLS: f32 = 1.0;

/// Steepest river bank, rise over run (about 31°): banks read as a
/// river's, not a canal's.
const MAX_BANK_GRADE: f64 = 0.6;

/// What the rivers stage did, for the audits.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RiversReport {
    /// Samples lowered by the breach.
    pub breached_samples: usize,
    /// Deepest breach cut, cells.
    pub max_breach_cells: f64,
    /// River centre-line samples.
    pub river_samples: usize,
    /// Lake samples (standing water that is not the sea).
    pub lake_samples: usize,
}

/// The drainage of the plan: each sample's downstream neighbour
/// ([`OUTLET`] at outlets), its spill level, and the order the flood
/// reached the samples (every sample after its downstream neighbour).
struct Drainage {
    downstream: Vec<u32>,
    spill: Vec<f32>,
    order: Vec<u32>,
}

/// The flood's queue: lowest level first, then first pushed (Barnes et al.
/// 2014, with their plain queue for depressions).
///
/// A key packs the level's total order and the push count into one `u64`
/// (the level's bits in the high half, mapped so unsigned order is
/// [`f32::total_cmp`]'s), so the heap compares one integer. A sample
/// reached at the level of the sample it is reached from (a depression or
/// a flat being filled) goes to a FIFO instead of the heap: its key is the
/// current level with the newest count, so the FIFO stays sorted and
/// popping the smaller of the two fronts gives exactly the heap-only order.
struct FloodQueue {
    heap: BinaryHeap<std::cmp::Reverse<u64>>,
    pit: std::collections::VecDeque<u64>,
    /// The sample of each push, by push count.
    samples: Vec<u32>,
}

impl FloodQueue {
    fn new(capacity: usize) -> FloodQueue {
        FloodQueue {
            heap: BinaryHeap::new(),
            pit: std::collections::VecDeque::new(),
            samples: Vec::with_capacity(capacity),
        }
    }

    /// `level` mapped to a `u32` whose unsigned order is `total_cmp`'s.
    fn level_key(level: f32) -> u64 {
        let bits = level.to_bits();
        let ordered = if bits >> 31 == 1 {
            !bits
        } else {
            bits | 0x8000_0000
        };
        u64::from(ordered) << 32
    }

    /// The level a key was made from.
    fn level_of(key: u64) -> f32 {
        let ordered = (key >> 32) as u32;
        f32::from_bits(if ordered >> 31 == 1 {
            ordered & 0x7fff_ffff
        } else {
            !ordered
        })
    }

    /// Queues sample `k` at `level`; `at_current` when `level` is the level
    /// of the sample being flooded from (the FIFO's).
    fn push(&mut self, level: f32, k: u32, at_current: bool) {
        // Each sample is pushed once and samples are indexed by `u32`, so the
        // count fits the key's low half.
        let key = Self::level_key(level) | self.samples.len() as u64;
        self.samples.push(k);
        if at_current {
            self.pit.push_back(key);
        } else {
            self.heap.push(std::cmp::Reverse(key));
        }
    }

    /// The lowest entry: its level and sample.
    fn pop(&mut self) -> Option<(f32, u32)> {
        let from_pit = match (self.pit.front(), self.heap.peek()) {
            (Some(&p), Some(&std::cmp::Reverse(h))) => p < h,
            (Some(_), None) => true,
            (None, _) => false,
        };
        let key = if from_pit {
            self.pit.pop_front()?
        } else {
            self.heap.pop()?.0
        };
        let k = self.samples[(key & 0xffff_ffff) as usize];
        Some((Self::level_of(key), k))
    }
}

/// True for sample `(i, j)` on the map rim.
fn on_rim(plan: &Plan, i: usize, j: usize) -> bool {
    i == 0 || j == 0 || i + 1 == plan.side || j + 1 == plan.side
}

/// Marks the sea: samples below `level_cells` connected through such samples
/// (8-neighbour) to the rim get water at `level_cells`. Returns the sea's
/// sample count.
pub fn flood_sea(plan: &mut Plan, level_cells: f64) -> usize {
    let level = level_cells as f32;
    let side = plan.side;
    let mut stack: Vec<usize> = Vec::new();
    let mut count = 0;
    for j in 0..side {
        for i in 0..side {
            let k = plan.index(i, j);
            if on_rim(plan, i, j) && plan.height_cells[k] < level && plan.water_cells[k] < level {
                plan.water_cells[k] = level;
                plan.water_body[k] = SEA;
                stack.push(k);
                count += 1;
            }
        }
    }
    while let Some(k) = stack.pop() {
        let (i, j) = ((k % side) as i64, (k / side) as i64);
        for (di, dj, _) in NEIGHBOURS_8 {
            let (ni, nj) = (i + di, j + dj);
            if ni < 0 || nj < 0 || ni >= side as i64 || nj >= side as i64 {
                continue;
            }
            let q = nj as usize * side + ni as usize;
            if plan.height_cells[q] < level && plan.water_cells[q] < level {
                plan.water_cells[q] = level;
                plan.water_body[q] = SEA;
                stack.push(q);
                count += 1;
            }
        }
    }
    count
}

/// One sample as the flood sees it, kept together so that reaching a
/// sample touches one cache line, not one per layer: the flood's front
/// wanders over the whole plan, and at 2,048² samples its reads are
/// mostly cache misses.
#[derive(Clone, Copy)]
struct FloodSample {
    height_cells: f32,
    spill: f32,
    /// [`UNREACHED`] until the flood reaches the sample (the "seen" mark).
    downstream: u32,
}

/// A [`FloodSample::downstream`] the flood has not reached yet (sample
/// indices stay far below it: a plan is at most 2,048² samples).
const UNREACHED: u32 = u32::MAX - 1;

/// Priority flood from the rim and the sea (samples with water over them
/// on entry are outlets at their water level). `progress` is checked every
/// [`SAMPLES_PER_CHECK`] samples.
fn drain(plan: &Plan, progress: &Progress) -> Result<Drainage, Cancelled> {
    let side = plan.side;
    let n = plan.len();
    let mut samples: Vec<FloodSample> = plan
        .height_cells
        .iter()
        .map(|&height_cells| FloodSample {
            height_cells,
            spill: f32::NAN,
            downstream: UNREACHED,
        })
        .collect();
    let mut order = Vec::with_capacity(n);
    let mut queue = FloodQueue::new(n);
    for j in 0..side {
        for i in 0..side {
            let k = plan.index(i, j);
            let sea = plan.is_wet(k);
            if on_rim(plan, i, j) || sea {
                let level = if sea {
                    plan.water_cells[k]
                } else {
                    plan.height_cells[k]
                };
                samples[k] = FloodSample {
                    spill: level,
                    downstream: OUTLET,
                    ..samples[k]
                };
                queue.push(level, k as u32, false);
            }
        }
    }
    while let Some((level, k)) = queue.pop() {
        if order.len() % SAMPLES_PER_CHECK == 0 {
            progress.check()?;
        }
        order.push(k);
        let (i, j) = ((k as usize % side) as i64, (k as usize / side) as i64);
        for (di, dj, _) in NEIGHBOURS_8 {
            let (ni, nj) = (i + di, j + dj);
            if ni < 0 || nj < 0 || ni >= side as i64 || nj >= side as i64 {
                continue;
            }
            let q = nj as usize * side + ni as usize;
            let sample = &mut samples[q];
            if sample.downstream != UNREACHED {
                continue;
            }
            let l = sample.height_cells.max(level);
            sample.spill = l;
            sample.downstream = k;
            queue.push(l, q as u32, l.total_cmp(&level).is_eq());
        }
    }
    // The grid is connected and its rim are outlets, so the flood reaches
    // every sample.
    Ok(Drainage {
        downstream: samples.iter().map(|s| s.downstream).collect(),
        spill: samples.iter().map(|s| s.spill).collect(),
        order,
    })
}

/// Lowers every basin's flood path to its floor where the cut stays within
/// `max_cut_cells`; returns (samples lowered, deepest cut).
fn breach(plan: &mut Plan, drainage: &Drainage, max_cut_cells: f64) -> (usize, f64) {
    let original = plan.height_cells.clone();
    let h = &mut plan.height_cells;
    // Upstream samples come later in the flood order: walk it backwards so
    // each sample has its final level before it passes it downstream.
    for &k in drainage.order.iter().rev() {
        let p = drainage.downstream[k as usize];
        if p == OUTLET {
            continue;
        }
        let (k, p) = (k as usize, p as usize);
        let level = h[k];
        if level < h[p]
            && plan.water_cells[p] <= original[p]
            && f64::from(original[p] - level) <= max_cut_cells
        {
            h[p] = level;
        }
    }
    let mut lowered = 0;
    let mut deepest: f64 = 0.0;
    for (now, before) in h.iter().zip(&original) {
        if now < before {
            lowered += 1;
            deepest = deepest.max(f64::from(before - now));
        }
    }
    (lowered, deepest)
}

/// Runs the rivers stage: breach, the slope cap again on dry land where a
/// cap stage ran before (`cap_grade`, rise over run), lakes, then river
/// channels with banks no steeper than `cap_grade` or [`MAX_BANK_GRADE`].
/// `progress` is checked between the phases and inside the floods and
/// slope caps.
///
/// # Errors
/// [`Cancelled`] when `progress` was cancelled; `plan` is then partly
/// changed and must be dropped.
pub fn run_rivers(
    plan: &mut Plan,
    stage: &RiversStage,
    cap_grade: Option<f64>,
    progress: &Progress,
) -> Result<RiversReport, Cancelled> {
    let mut report = RiversReport::default();
    let first = drain(plan, progress)?;
    (report.breached_samples, report.max_breach_cells) =
        breach(plan, &first, stage.max_breach_cells);
    drop(first);
    if let Some(grade) = cap_grade {
        let wet: Vec<bool> = (0..plan.len()).map(|k| plan.is_wet(k)).collect();
        cap_slopes(plan, grade, Some(wet.as_slice()), progress)?;
    }
    let drainage = drain(plan, progress)?;
    report.lake_samples = fill_lakes(plan, &drainage);
    let catchment = catchments(plan, &drainage);
    let bank_grade = cap_grade.map_or(MAX_BANK_GRADE, |g| g.min(MAX_BANK_GRADE));
    progress.check()?;
    report.river_samples = carve_rivers(plan, stage, &drainage, &catchment, bank_grade);
    // The channel's bank ramps stop where they meet the old ground; where
    // that ground was a valley wall, the cap spreads the cut up the wall.
    if let Some(grade) = cap_grade {
        let wet: Vec<bool> = (0..plan.len()).map(|k| plan.is_wet(k)).collect();
        cap_slopes(plan, grade, Some(wet.as_slice()), progress)?;
    }
    Ok(report)
}

/// Samples a flood takes between two cancellation checks (a few
/// milliseconds).
const SAMPLES_PER_CHECK: usize = 1 << 16;

/// Standing water where the spill level lies at least
/// [`MIN_LAKE_DEPTH_CELLS`] over the ground; returns the lake samples.
fn fill_lakes(plan: &mut Plan, drainage: &Drainage) -> usize {
    let mut lakes = 0;
    for k in 0..plan.len() {
        if plan.is_wet(k) {
            continue;
        }
        if drainage.spill[k] - plan.height_cells[k] >= MIN_LAKE_DEPTH_CELLS {
            plan.water_cells[k] = drainage.spill[k];
            plan.water_body[k] = LAKE;
            lakes += 1;
        }
    }
    lakes
}

/// Catchment area of every sample, cells² (its own area plus everything
/// upstream).
fn catchments(plan: &Plan, drainage: &Drainage) -> Vec<f32> {
    let area = (plan.spacing_cells * plan.spacing_cells) as f32;
    let mut acc = vec![area; plan.len()];
    for &k in drainage.order.iter().rev() {
        let p = drainage.downstream[k as usize];
        if p != OUTLET {
            acc[p as usize] += acc[k as usize];
        }
    }
    acc
}

/// Carves the river channels; returns the number of centre-line samples.
fn carve_rivers(
    plan: &mut Plan,
    stage: &RiversStage,
    drainage: &Drainage,
    catchment: &[f32],
    bank_grade: f64,
) -> usize {
    let n = plan.len();
    let s = f64::from(plan.spacing_cells);
    let min = stage.min_catchment_cells as f32;
    let is_river = |k: usize, plan: &Plan| catchment[k] >= min && !plan.is_wet(k);
    // The level of the water body each sample drains into first.
    let mut base = vec![f32::NEG_INFINITY; n];
    for &k in &drainage.order {
        let k = k as usize;
        let p = drainage.downstream[k];
        base[k] = if p == OUTLET {
            if plan.is_wet(k) {
                plan.water_cells[k]
            } else {
                f32::NEG_INFINITY
            }
        } else if plan.is_wet(p as usize) {
            plan.water_cells[p as usize]
        } else {
            base[p as usize]
        };
    }
    let max_catchment = catchment.iter().copied().fold(min, f32::max);
    let rivers: Vec<usize> = drainage
        .order
        .iter()
        .map(|&k| k as usize)
        .filter(|&k| is_river(k, plan))
        .collect();
    // Water surface, floor and radius (cells) of each centre-line sample.
    let channel: Vec<(f32, f32, f64)> = rivers
        .iter()
        .map(|&k| {
            let w = (drainage.spill[k] - WATER_BELOW_GROUND_CELLS).max(base[k]);
            let t = ((catchment[k] - min) / (max_catchment - min).max(1.0)).sqrt();
            let width = stage.min_width_cells
                + (stage.max_width_cells - stage.min_width_cells) * f64::from(t);
            (w, w - stage.depth_cells as f32, 0.5 * width)
        })
        .collect();
    let mut carved = plan.height_cells.clone();
    let mut water = plan.water_cells.clone();
    // The centre line first: its floor and water are its own, so the chain
    // of river samples stays wet and its surface never rises downstream.
    let mut centre = vec![false; n];
    for (&k, &(w, floor, _)) in rivers.iter().zip(&channel) {
        carved[k] = carved[k].min(floor);
        water[k] = w;
        plan.water_body[k] = RIVER;
        centre[k] = true;
    }
    // Then the banks: each sample takes the lowest ramp that reaches it.
    for (&k, &(w, floor, radius_cells)) in rivers.iter().zip(&channel) {
        let reach_cells = radius_cells + stage.depth_cells / bank_grade + 1.0;
        let reach = (reach_cells / s).ceil() as i64;
        let (ci, cj) = ((k % plan.side) as i64, (k / plan.side) as i64);
        for dj in -reach..=reach {
            for di in -reach..=reach {
                let (i, j) = (ci + di, cj + dj);
                if i < 0 || j < 0 || i >= plan.side as i64 || j >= plan.side as i64 {
                    continue;
                }
                let q = j as usize * plan.side + i as usize;
                if centre[q] || plan.is_wet(q) {
                    continue;
                }
                let d = ((di * di + dj * dj) as f64).sqrt() * s;
                if d > reach_cells {
                    continue;
                }
                let target = floor + ((d - radius_cells).max(0.0) * bank_grade) as f32;
                if target < carved[q] {
                    carved[q] = target;
                    (water[q], plan.water_body[q]) = if target < w {
                        (w, RIVER)
                    } else {
                        (f32::NEG_INFINITY, DRY)
                    };
                } else if carved[q] < w && plan.water_body[q] == DRY {
                    // Ground already below the river's surface: flooded,
                    // never a dry hole beside the water.
                    water[q] = w;
                    plan.water_body[q] = RIVER;
                }
            }
        }
    }
    for &k in &rivers {
        plan.wetness[k] = 1.0;
    }
    for (wetness, &c) in plan.wetness.iter_mut().zip(catchment) {
        if *wetness < 1.0 {
            *wetness = wetness.max(c / (c + min));
        }
    }
    plan.height_cells = carved;
    plan.water_cells = water;
    rivers.len()
}

/// Rivers whose water reaches neither the sea, a lake nor the map rim: the
/// 8-connected groups of wet samples that hold a river sample but no sea
/// or lake sample and no rim sample.
pub fn stranded_rivers(plan: &Plan) -> usize {
    let side = plan.side;
    let n = plan.len();
    let mut label = vec![u32::MAX; n];
    let mut stranded = 0;
    let mut stack = Vec::new();
    for start in 0..n {
        if !plan.is_wet(start) || label[start] != u32::MAX {
            continue;
        }
        let (mut has_river, mut reaches_out) = (false, false);
        label[start] = start as u32;
        stack.push(start);
        while let Some(k) = stack.pop() {
            let (i, j) = (k % side, k / side);
            match plan.water_body[k] {
                RIVER => has_river = true,
                SEA | LAKE => reaches_out = true,
                _ => {}
            }
            if on_rim(plan, i, j) {
                reaches_out = true;
            }
            for (di, dj, _) in NEIGHBOURS_8 {
                let (ni, nj) = (i as i64 + di, j as i64 + dj);
                if ni < 0 || nj < 0 || ni >= side as i64 || nj >= side as i64 {
                    continue;
                }
                let q = nj as usize * side + ni as usize;
                if plan.is_wet(q) && label[q] == u32::MAX {
                    label[q] = start as u32;
                    stack.push(q);
                }
            }
        }
        if has_river && !reaches_out {
            stranded += 1;
        }
    }
    stranded
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage() -> RiversStage {
        RiversStage {
            min_catchment_cells: 300.0,
            min_width_cells: 2.0,
            max_width_cells: 6.0,
            depth_cells: 2.0,
            max_breach_cells: 8.0,
        }
    }

    /// A valley sloping toward `-x` with a dam (a 3-cell ridge) across it.
    fn dammed_valley() -> Plan {
        let mut plan = Plan::new(64);
        for j in 0..64 {
            for i in 0..64 {
                let k = plan.index(i, j);
                let valley = (j as f32 - 32.0).abs() * 0.5;
                let dam = if i == 30 { 3.0 } else { 0.0 };
                plan.height_cells[k] = 20.0 + i as f32 * 0.2 + valley + dam;
            }
        }
        plan
    }

    #[test]
    fn a_shallow_dam_is_breached_and_the_river_runs_out() {
        let mut plan = dammed_valley();
        let report =
            run_rivers(&mut plan, &stage(), None, &Progress::new()).expect("not cancelled");
        assert!(report.breached_samples > 0);
        assert!(report.max_breach_cells <= 8.0);
        assert_eq!(report.lake_samples, 0);
        assert!(report.river_samples > 10);
        assert_eq!(stranded_rivers(&plan), 0);
        // Along the valley floor the water never rises going downstream (-x).
        let surface: Vec<f32> = (0..64)
            .map(|i| plan.water_cells[plan.index(i, 32)])
            .collect();
        for w in surface.windows(2) {
            assert!(
                w[0] <= w[1] || !w[0].is_finite() || !w[1].is_finite(),
                "{surface:?}"
            );
        }
    }

    #[test]
    fn a_dam_deeper_than_the_cap_holds_a_lake() {
        let mut plan = dammed_valley();
        let mut shallow = stage();
        shallow.max_breach_cells = 1.0;
        let report =
            run_rivers(&mut plan, &shallow, None, &Progress::new()).expect("not cancelled");
        assert!(report.lake_samples > 0);
        let lake = plan.index(31, 32);
        assert!(plan.is_wet(lake));
        assert_eq!(stranded_rivers(&plan), 0);
    }

    #[test]
    fn the_flood_reaches_every_sample_once_even_over_nan_ground() {
        // Two rim samples of NaN ground (the sign bit set, as `inf - inf`
        // gives on x86): the flood must still end and list each sample once.
        let mut plan = Plan::new(3);
        plan.height_cells[0] = -f32::NAN;
        plan.height_cells[1] = -f32::NAN;
        let drainage = drain(&plan, &Progress::new()).expect("not cancelled");
        let mut order = drainage.order.clone();
        order.sort_unstable();
        assert_eq!(order, (0..9).collect::<Vec<u32>>());
        // The centre drains to a rim sample; the rim samples are outlets.
        assert_ne!(drainage.downstream[4], OUTLET);
        assert!(
            (0..9)
                .filter(|&k| k != 4)
                .all(|k| drainage.downstream[k] == OUTLET)
        );
    }

    #[test]
    fn the_sea_floods_from_the_rim_only() {
        let mut plan = Plan::new(32);
        plan.height_cells.fill(10.0);
        for j in 0..32 {
            let k = plan.index(0, j);
            plan.height_cells[k] = 2.0;
        }
        // A hollow inside, below sea level but walled off.
        let inner = plan.index(16, 16);
        plan.height_cells[inner] = 1.0;
        assert_eq!(flood_sea(&mut plan, 5.0), 32);
        assert!(!plan.is_wet(inner));
    }
}
