//! Thermal erosion: material on slopes steeper than the talus angle slumps
//! to the steepest lower neighbour (Musgrave, Kolb and Mace 1989, "The
//! synthesis and rendering of eroded fractal terrains"; the steepest-descent
//! variant of Olsen 2004), leaving scree at the foot.
//!
//! Each pass is a Jacobi step: every sample's outflow is computed from the
//! previous heights alone, then every sample gathers what its neighbours
//! send it. That makes a pass parallel (rayon over rows) and deterministic,
//! and mass is conserved exactly up to f32 rounding.

use rayon::prelude::*;

use crate::progress::{Cancelled, Progress};

use crate::terrain::recipe::plan::{NEIGHBOURS_8, Plan};

/// "No outflow" direction.
const NONE: u8 = u8::MAX;

/// Runs `iterations` passes of thermal erosion over `plan` with talus grade
/// `talus` (rise over run) and `rate` (fraction of the excess moved per
/// pass, `(0, 1]`). Scree gathered at a sample is added to
/// [`Plan::talus_cells`]. Scratch: 5 bytes a sample. `progress` is
/// checked before each pass.
///
/// # Errors
/// [`Cancelled`] when `progress` was cancelled; `plan` is then partly
/// eroded and must be dropped.
pub fn erode_thermal(
    plan: &mut Plan,
    talus: f64,
    iterations: u32,
    rate: f64,
    progress: &Progress,
) -> Result<(), Cancelled> {
    let side = plan.side;
    let n = plan.len();
    let s = f64::from(plan.spacing_cells);
    let mut out_dir = vec![NONE; n];
    let mut out_amount = vec![0.0f32; n];
    for _ in 0..iterations {
        progress.check()?;
        outflows(plan, talus * s, rate, &mut out_dir, &mut out_amount);
        let (dir, amount) = (&out_dir, &out_amount);
        plan.height_cells
            .par_chunks_mut(side)
            .zip(plan.talus_cells.par_chunks_mut(side))
            .enumerate()
            .for_each(|(j, (heights, talus_row))| {
                let interior_row = j > 0 && j + 1 < side;
                for i in 0..side {
                    let k = j * side + i;
                    let mut gained = 0.0f32;
                    let interior = interior_row && i > 0 && i + 1 < side;
                    for (d, &(di, dj, _)) in NEIGHBOURS_8.iter().enumerate() {
                        // The neighbour q at (i − di, j − dj) sends along +d to k;
                        // inside the border all 8 exist (the same sum, in the
                        // same order, without the range checks).
                        let (qi, qj) = (i as i64 - di, j as i64 - dj);
                        if !interior && (qi < 0 || qj < 0 || qi >= side as i64 || qj >= side as i64)
                        {
                            continue;
                        }
                        let q = qj as usize * side + qi as usize;
                        if dir[q] as usize == d {
                            gained += amount[q];
                        }
                    }
                    heights[i] += gained - amount[k];
                    talus_row[i] += gained;
                }
            });
    }
    Ok(())
}

/// Each sample's steepest lower neighbour beyond the talus drop
/// (`talus_per_sample · distance`) and half the excess times `rate`: half,
/// so a pair never swaps order in one pass.
fn outflows(plan: &Plan, talus_per_sample: f64, rate: f64, dir: &mut [u8], amount: &mut [f32]) {
    let side = plan.side;
    let h = &plan.height_cells;
    dir.par_chunks_mut(side)
        .zip(amount.par_chunks_mut(side))
        .enumerate()
        .for_each(|(j, (dir_row, amount_row))| {
            let interior_row = j > 0 && j + 1 < side;
            for i in 0..side {
                let own = f64::from(h[j * side + i]);
                let mut best = (NONE, 0.0f64);
                let interior = interior_row && i > 0 && i + 1 < side;
                for (d, &(di, dj, dist)) in NEIGHBOURS_8.iter().enumerate() {
                    let (ni, nj) = (i as i64 + di, j as i64 + dj);
                    if !interior && (ni < 0 || nj < 0 || ni >= side as i64 || nj >= side as i64) {
                        continue;
                    }
                    let drop = own - f64::from(h[nj as usize * side + ni as usize]);
                    let excess = drop - talus_per_sample * dist;
                    if excess > best.1 {
                        best = (d as u8, excess);
                    }
                }
                dir_row[i] = best.0;
                amount_row[i] = (best.1 * 0.5 * rate) as f32;
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cliff_slumps_and_keeps_its_mass() {
        let mut plan = Plan::new(32);
        for j in 0..32 {
            for i in 16..32 {
                let k = plan.index(i, j);
                plan.height_cells[k] = 20.0;
            }
        }
        let before: f64 = plan.height_cells.iter().map(|&h| f64::from(h)).sum();
        erode_thermal(&mut plan, 1.0, 60, 0.5, &Progress::new()).expect("not cancelled");
        let after: f64 = plan.height_cells.iter().map(|&h| f64::from(h)).sum();
        assert!((before - after).abs() < 1e-2, "{before} vs {after}");
        // The cliff edge now slopes: no step steeper than about 2× the talus.
        let row: Vec<f32> = (0..32)
            .map(|i| plan.height_cells[plan.index(i, 10)])
            .collect();
        let steepest = row
            .windows(2)
            .map(|w| (w[1] - w[0]).abs())
            .fold(0.0, f32::max);
        assert!(steepest < 2.5, "steepest step {steepest}: {row:?}");
        assert!(plan.talus_cells.iter().any(|&t| t > 1.0));
    }
}
