//! The Lipschitz slope cap (background: chunked-greedy-heightfield notes
//! §8): the largest height field below the given one whose grade between
//! neighbouring samples never exceeds the cap,
//! `h'(p) = min_q h(q) + g·d₈(p, q)` with `d₈` the 8-neighbour chamfer
//! distance (axis steps 1, diagonal steps √2, in columns).
//!
//! Erosion only (heights never rise), deterministic (sequential raster
//! sweeps), and run to a fixpoint: forward and backward sweeps alternate
//! until one pair changes nothing; two pairs usually suffice, as in a
//! chamfer distance transform (Borgefors 1986).

use crate::progress::{Cancelled, Progress};
use crate::terrain::recipe::plan::{NEIGHBOURS_8, Plan};

/// Safety margin on the grade so f32 rounding never lets a pair exceed the
/// cap by an ulp.
const GRADE_MARGIN: f64 = 1.0 - 1e-5;

/// Caps the plan's slopes at `grade` (rise over run, cells per cell).
/// Samples marked in `pinned` (one flag per plan sample, row-major; `None`
/// pins nothing; a missing flag reads as unpinned) are neither lowered nor
/// used as a constraint (water: its bed is shaped by the river carve).
/// Returns the number of sweeps run. `progress` is checked before each
/// sweep.
///
/// # Errors
/// [`Cancelled`] when `progress` was cancelled; `plan` is then partly
/// capped and must be dropped.
pub fn cap_slopes(
    plan: &mut Plan,
    grade: f64,
    pinned: Option<&[bool]>,
    progress: &Progress,
) -> Result<u32, Cancelled> {
    let side = plan.side;
    let per_sample = grade * GRADE_MARGIN * f64::from(plan.spacing_cells);
    // Forward sweeps read the 4 neighbours already visited; backward the
    // rest.
    let mut earlier = NEIGHBOURS_8
        .iter()
        .filter(|(di, dj, _)| *dj < 0 || (*dj == 0 && *di < 0))
        .map(|&(di, dj, d)| Offset::new(di, dj, (per_sample * d) as f32));
    // 4 of the 8 neighbours come before a sample in raster order.
    let forward: [Offset; 4] =
        std::array::from_fn(|_| earlier.next().unwrap_or(Offset::new(0, 0, f32::INFINITY)));
    let backward: [Offset; 4] =
        std::array::from_fn(|n| Offset::new(-forward[n].di, -forward[n].dj, forward[n].cost));
    let h = &mut plan.height_cells;
    // The pins as one flag a sample, so the sweeps read a slice (copied
    // only when short or missing: a missing flag reads as unpinned).
    let flags: std::borrow::Cow<[bool]> = match pinned {
        Some(p) if p.len() >= h.len() => std::borrow::Cow::Borrowed(&p[..h.len()]),
        _ => {
            let mut all = pinned.map_or_else(Vec::new, <[bool]>::to_vec);
            all.resize(h.len(), false);
            std::borrow::Cow::Owned(all)
        }
    };
    let mut sweeps = 0;
    let mut bounds = Vec::new();
    loop {
        let mut changed = false;
        for (offsets, reverse) in [(&forward, false), (&backward, true)] {
            progress.check()?;
            sweeps += 1;
            changed |= sweep(h, side, offsets, reverse, &mut bounds, &flags);
        }
        if !changed {
            return Ok(sweeps);
        }
    }
}

/// One raster sweep over `h` (`side`² samples), forward or `reverse`,
/// lowering each unpinned sample to its lowest bound from the unpinned
/// `offsets` neighbours (3 in the row swept before, 1 before it in its own
/// row). Returns whether a sample changed.
///
/// Each row runs in two phases: the bounds from the row before (final
/// already) for the whole row at once, in straight loops the compiler
/// vectorizes, then the chain along the row, where each sample waits for
/// the one before it. The result is the plain sweep's: a sample takes the
/// least of its own height and its bounds (a bound wins only when
/// strictly lower, so a NaN never does), and with costs `>= 0` no bound is
/// `-0.0`, so the order the bounds are taken in cannot change a bit
/// (tested against the one-sample-at-a-time sweep).
fn sweep(
    h: &mut [f32],
    side: usize,
    offsets: &[Offset; 4],
    reverse: bool,
    bounds: &mut Vec<f32>,
    pinned: &[bool],
) -> bool {
    bounds.clear();
    bounds.resize(side, 0.0);
    let mut changed = false;
    for row in 0..side {
        let j = if reverse { side - 1 - row } else { row };
        let start = j * side;
        bounds.copy_from_slice(&h[start..start + side]);
        // Phase 1: the bounds from the row before (offsets with dj != 0),
        // as zipped slices so the loop has no bounds checks and vectorizes.
        for o in offsets.iter().filter(|o| o.dj != 0) {
            let Some(before) = j.checked_add_signed(o.dj as isize).filter(|&r| r < side) else {
                continue;
            };
            let before_heights = &h[before * side..(before + 1) * side];
            let before_pins = &pinned[before * side..(before + 1) * side];
            // Columns i of this row and their neighbours i + di there.
            let (here, there) = match o.di {
                -1 => (1..side, 0..side - 1),
                1 => (0..side - 1, 1..side),
                _ => (0..side, 0..side),
            };
            for ((bound_now, &height), &pin) in bounds[here]
                .iter_mut()
                .zip(&before_heights[there.clone()])
                .zip(&before_pins[there])
            {
                let bound = if pin { f32::INFINITY } else { height + o.cost };
                // One comparison (a NaN bound never wins).
                if bound < *bound_now {
                    *bound_now = bound;
                }
            }
        }
        // Phase 2: along the row, from the sample swept just before (the
        // offset with dj = 0 is that one: -1 forward, +1 backward). Its
        // bound is carried to the next sample in a register (infinite, so
        // never taken, where it is pinned or off the map): through memory
        // each sample would wait for the store of the one before.
        let along_cost = offsets
            .iter()
            .find(|o| o.dj == 0)
            .map_or(f32::INFINITY, |o| o.cost);
        let row_heights = &mut h[start..start + side];
        let row_pins = &pinned[start..start + side];
        let mut carried = f32::INFINITY;
        for column in 0..side {
            let i = if reverse { side - 1 - column } else { column };
            if row_pins[i] {
                carried = f32::INFINITY;
                continue;
            }
            let mut best = bounds[i];
            if carried < best {
                best = carried;
            }
            let old = row_heights[i];
            let new = if best < old { best } else { old };
            changed |= best < old;
            row_heights[i] = new;
            carried = new + along_cost;
        }
    }
    changed
}

/// A neighbour offset of a sweep: samples along each axis and the cap's
/// rise over that distance, cells.
struct Offset {
    di: i64,
    dj: i64,
    cost: f32,
}

impl Offset {
    fn new(di: i64, dj: i64, cost: f32) -> Offset {
        Offset { di, dj, cost }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sweep one sample at a time, each taking its 4 bounds in
    /// `offsets` order (the reference the two-phase sweep must match).
    fn reference_sweep(
        h: &mut [f32],
        side: usize,
        offsets: &[Offset; 4],
        reverse: bool,
        pinned: &[bool],
    ) -> bool {
        let mut changed = false;
        for row in 0..side {
            let j = if reverse { side - 1 - row } else { row };
            for column in 0..side {
                let i = if reverse { side - 1 - column } else { column };
                let k = j * side + i;
                if pinned[k] {
                    continue;
                }
                let mut best = h[k];
                for o in offsets {
                    let (ni, nj) = (i as i64 + o.di, j as i64 + o.dj);
                    if ni < 0 || nj < 0 || ni >= side as i64 || nj >= side as i64 {
                        continue;
                    }
                    let q = nj as usize * side + ni as usize;
                    if pinned[q] {
                        continue;
                    }
                    let bound = h[q] + o.cost;
                    if bound < best {
                        best = bound;
                    }
                }
                if best < h[k] {
                    h[k] = best;
                    changed = true;
                }
            }
        }
        changed
    }

    #[test]
    fn the_two_phase_sweep_gives_the_reference_bits() {
        let mut next = crate::terrain::generation::noise::hash_stream(11);
        let mut bounds = Vec::new();
        for side in [1usize, 2, 3, 5, 17, 40] {
            for round in 0..30usize {
                let h: Vec<f32> = (0..side * side)
                    .map(|_| match next() % 40 {
                        0 => 0.0,
                        1 => -0.0,
                        2 => f32::NAN,
                        3 => 1e30,
                        r => (r as f32 - 20.0) * 0.37 + (next() % 100) as f32 * 0.01,
                    })
                    .collect();
                let pinned: Vec<bool> = (0..side * side)
                    .map(|_| !round.is_multiple_of(3) && next().is_multiple_of(5))
                    .collect();
                let per_sample = [0.0f64, 0.3, 1.7][round % 3];
                let mut earlier = NEIGHBOURS_8
                    .iter()
                    .filter(|(di, dj, _)| *dj < 0 || (*dj == 0 && *di < 0))
                    .map(|&(di, dj, d)| Offset::new(di, dj, (per_sample * d) as f32));
                let forward: [Offset; 4] =
                    std::array::from_fn(|_| earlier.next().expect("4 earlier neighbours"));
                let backward: [Offset; 4] = std::array::from_fn(|n| {
                    Offset::new(-forward[n].di, -forward[n].dj, forward[n].cost)
                });
                for (offsets, reverse) in [(&forward, false), (&backward, true)] {
                    let mut want = h.clone();
                    let want_changed = reference_sweep(&mut want, side, offsets, reverse, &pinned);
                    let mut got = h.clone();
                    let got_changed = sweep(&mut got, side, offsets, reverse, &mut bounds, &pinned);
                    assert_eq!(got_changed, want_changed, "side {side} round {round}");
                    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&got), bits(&want), "side {side} round {round}");
                }
            }
        }
    }

    #[test]
    fn a_spike_becomes_a_cone_of_the_cap_grade() {
        let mut plan = Plan::new(64);
        let c = plan.index(32, 32);
        plan.height_cells[c] = 100.0;
        cap_slopes(&mut plan, 1.0, None, &Progress::new()).expect("not cancelled");
        // Axis neighbours rise at most 1 cell per column; far samples keep 0.
        assert!(plan.height_cells[c] <= 1.0);
        assert_eq!(plan.height_cells[plan.index(0, 0)], 0.0);
        let mut pit = Plan::new(64);
        pit.height_cells.fill(50.0);
        pit.height_cells[c] = 0.0;
        cap_slopes(&mut pit, 0.5, None, &Progress::new()).expect("not cancelled");
        assert!((pit.height_cells[plan.index(33, 32)] - 0.5).abs() < 1e-3);
        assert!(
            (pit.height_cells[plan.index(33, 33)] - 0.5 * std::f32::consts::SQRT_2).abs() < 1e-3
        );
        for j in 0..pit.side {
            for i in 0..pit.side {
                assert!(pit.max_neighbour_grade(i, j) <= 0.5 + 1e-9, "({i}, {j})");
            }
        }
    }
}
