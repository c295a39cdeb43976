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
    // rest. Each offset also as an index step, for samples off the rim.
    let mut earlier = NEIGHBOURS_8
        .iter()
        .filter(|(di, dj, _)| *dj < 0 || (*dj == 0 && *di < 0))
        .map(|&(di, dj, d)| Offset::new(di, dj, (per_sample * d) as f32, side));
    // 4 of the 8 neighbours come before a sample in raster order.
    let forward: [Offset; 4] = std::array::from_fn(|_| {
        earlier
            .next()
            .unwrap_or(Offset::new(0, 0, f32::INFINITY, side))
    });
    let backward: [Offset; 4] =
        std::array::from_fn(|n| Offset::new(-forward[n].di, -forward[n].dj, forward[n].cost, side));
    let h = &mut plan.height_cells;
    // The pins as one flag a sample, so the sweeps read a slice (copied
    // only when short: a missing flag reads as unpinned); without pins the
    // sweeps are compiled without the checks.
    let flags: Option<std::borrow::Cow<[bool]>> = pinned.map(|p| {
        if p.len() >= h.len() {
            std::borrow::Cow::Borrowed(p)
        } else {
            let mut all = p.to_vec();
            all.resize(h.len(), false);
            std::borrow::Cow::Owned(all)
        }
    });
    let mut sweeps = 0;
    loop {
        let mut changed = false;
        for (offsets, reverse) in [(&forward, false), (&backward, true)] {
            progress.check()?;
            sweeps += 1;
            changed |= match &flags {
                Some(flags) => sweep(h, side, offsets, reverse, |k| flags[k]),
                None => sweep(h, side, offsets, reverse, |_| false),
            };
        }
        if !changed {
            return Ok(sweeps);
        }
    }
}

/// One raster sweep over `h` (`side`² samples), forward or `reverse`,
/// lowering each unpinned sample to its lowest bound from the unpinned
/// `offsets` neighbours. Returns whether a sample changed.
#[inline(always)]
fn sweep(
    h: &mut [f32],
    side: usize,
    offsets: &[Offset; 4],
    reverse: bool,
    is_pinned: impl Fn(usize) -> bool,
) -> bool {
    let mut changed = false;
    for row in 0..side {
        let j = if reverse { side - 1 - row } else { row };
        for column in 0..side {
            let i = if reverse { side - 1 - column } else { column };
            let k = j * side + i;
            if is_pinned(k) {
                continue;
            }
            let off_rim = i > 0 && j > 0 && i + 1 < side && j + 1 < side;
            let mut best = h[k];
            for o in offsets {
                let q = if off_rim {
                    k.wrapping_add_signed(o.step)
                } else {
                    match o.neighbour(i, j, side) {
                        Some(q) => q,
                        None => continue,
                    }
                };
                if is_pinned(q) {
                    continue;
                }
                // One comparison (heights are finite: no NaN to lose).
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

/// A neighbour offset of a sweep: samples along each axis, the index step
/// and the cap's rise over that distance, cells.
struct Offset {
    di: i64,
    dj: i64,
    step: isize,
    cost: f32,
}

impl Offset {
    fn new(di: i64, dj: i64, cost: f32, side: usize) -> Offset {
        Offset {
            di,
            dj,
            step: (dj * side as i64 + di) as isize,
            cost,
        }
    }

    /// The index of this neighbour of `(i, j)`, or `None` off the map.
    fn neighbour(&self, i: usize, j: usize, side: usize) -> Option<usize> {
        let (ni, nj) = (i as i64 + self.di, j as i64 + self.dj);
        let inside = (0..side as i64).contains(&ni) && (0..side as i64).contains(&nj);
        inside.then(|| nj as usize * side + ni as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
