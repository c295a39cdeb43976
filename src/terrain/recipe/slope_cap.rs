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
/// Samples with `pinned(k)` true are neither lowered nor used as a
/// constraint (water: its bed is shaped by the river carve). Returns the
/// number of sweeps run. `progress` is checked before each sweep.
///
/// # Errors
/// [`Cancelled`] when `progress` was cancelled; `plan` is then partly
/// capped and must be dropped.
pub fn cap_slopes(
    plan: &mut Plan,
    grade: f64,
    pinned: &dyn Fn(usize) -> bool,
    progress: &Progress,
) -> Result<u32, Cancelled> {
    let side = plan.side as i64;
    let per_sample = grade * GRADE_MARGIN * f64::from(plan.spacing_cells);
    // Forward sweeps read the 4 neighbours already visited; backward the rest.
    let forward: Vec<(i64, i64, f32)> = NEIGHBOURS_8
        .iter()
        .filter(|(di, dj, _)| *dj < 0 || (*dj == 0 && *di < 0))
        .map(|&(di, dj, d)| (di, dj, (per_sample * d) as f32))
        .collect();
    let backward: Vec<(i64, i64, f32)> = forward.iter().map(|&(di, dj, c)| (-di, -dj, c)).collect();
    let h = &mut plan.height_cells;
    let mut sweeps = 0;
    loop {
        let mut changed = false;
        for (offsets, reverse) in [(&forward, false), (&backward, true)] {
            progress.check()?;
            sweeps += 1;
            for step in 0..side * side {
                let k = if reverse {
                    side * side - 1 - step
                } else {
                    step
                };
                let (i, j) = (k % side, k / side);
                if pinned(k as usize) {
                    continue;
                }
                let mut best = h[k as usize];
                for &(di, dj, cost) in offsets.iter() {
                    let (ni, nj) = (i + di, j + dj);
                    if ni < 0 || nj < 0 || ni >= side || nj >= side {
                        continue;
                    }
                    let q = (nj * side + ni) as usize;
                    if pinned(q) {
                        continue;
                    }
                    best = best.min(h[q] + cost);
                }
                if best < h[k as usize] {
                    h[k as usize] = best;
                    changed = true;
                }
            }
        }
        if !changed {
            return Ok(sweeps);
        }
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
        cap_slopes(&mut plan, 1.0, &|_| false, &Progress::new()).expect("not cancelled");
        // Axis neighbours rise at most 1 cell per column; far samples keep 0.
        assert!(plan.height_cells[c] <= 1.0);
        assert_eq!(plan.height_cells[plan.index(0, 0)], 0.0);
        let mut pit = Plan::new(64);
        pit.height_cells.fill(50.0);
        pit.height_cells[c] = 0.0;
        cap_slopes(&mut pit, 0.5, &|_| false, &Progress::new()).expect("not cancelled");
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
