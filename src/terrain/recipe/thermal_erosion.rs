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
/// checked before each pass and between its two halves.
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
    erode_thermal_on(plan, talus, iterations, rate, progress, Isa::Best)
}

/// Which instructions the passes may use. Both give the same bits (tested).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Isa {
    /// AVX2 where the CPU has it (4 samples an instruction instead of 2).
    Best,
    /// The target's baseline only (to check the results are the same).
    #[cfg_attr(not(test), allow(dead_code))]
    Baseline,
}

fn erode_thermal_on(
    plan: &mut Plan,
    talus: f64,
    iterations: u32,
    rate: f64,
    progress: &Progress,
    isa: Isa,
) -> Result<(), Cancelled> {
    let side = plan.side;
    let n = plan.len();
    let s = f64::from(plan.spacing_cells);
    let mut out_dir = vec![NONE; n];
    let mut out_amount = vec![0.0f32; n];
    for _ in 0..iterations {
        progress.check()?;
        outflows(plan, talus * s, rate, &mut out_dir, &mut out_amount, isa);
        progress.check()?;
        let (dir, amount) = (&out_dir, &out_amount);
        plan.height_cells
            .par_chunks_mut(side)
            .zip(plan.talus_cells.par_chunks_mut(side))
            .enumerate()
            .for_each(|(j, (heights, talus_row))| {
                gather_row(side, j, dir, amount, heights, talus_row, isa);
            });
    }
    Ok(())
}

/// What row `j`'s samples gather from the neighbours that send to them
/// (the neighbour q at `(i − di, j − dj)` sends along direction `+d`),
/// added to `heights` and `talus_row` less each sample's own outflow.
fn gather_row(
    side: usize,
    j: usize,
    dir: &[u8],
    amount: &[f32],
    heights: &mut [f32],
    talus_row: &mut [f32],
    isa: Isa,
) {
    let gather_border = |i: usize, heights: &mut [f32], talus_row: &mut [f32]| {
        let gained = gathered_at_border(side, i, j, dir, amount);
        heights[i] += gained - amount[j * side + i];
        talus_row[i] += gained;
    };
    if j == 0 || j + 1 == side || side < 3 {
        for i in 0..side {
            gather_border(i, heights, talus_row);
        }
        return;
    }
    gather_border(0, heights, talus_row);
    gather_border(side - 1, heights, talus_row);
    let rows = NeighbourRows::around(side, j);
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Best && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2.
        unsafe { gather_interior_avx2(rows, dir, amount, heights, talus_row) };
        return;
    }
    let _ = isa;
    gather_interior(rows, dir, amount, heights, talus_row);
}

/// The start of the rows above, at and below an interior row `j`.
#[derive(Clone, Copy)]
struct NeighbourRows {
    side: usize,
    /// Index of sample `(0, j + dj)` for `dj = -1, 0, 1`.
    starts: [usize; 3],
}

impl NeighbourRows {
    fn around(side: usize, j: usize) -> NeighbourRows {
        NeighbourRows {
            side,
            starts: [(j - 1) * side, j * side, (j + 1) * side],
        }
    }

    /// Row `dj`'s samples as seen from the interior samples `1..side − 1`
    /// shifted by `di`: element `m` is sample `(m + 1 + di, j + dj)`.
    #[inline(always)]
    fn shifted<'a, T>(&self, layer: &'a [T], di: i64, dj: i64) -> &'a [T] {
        let start = (self.starts[(dj + 1) as usize] as i64 + 1 + di) as usize;
        &layer[start..start + self.side - 2]
    }
}

/// The gathered scree of one border sample, with range checks.
fn gathered_at_border(side: usize, i: usize, j: usize, dir: &[u8], amount: &[f32]) -> f32 {
    let mut gained = 0.0f32;
    for (d, &(di, dj, _)) in NEIGHBOURS_8.iter().enumerate() {
        let (qi, qj) = (i as i64 - di, j as i64 - dj);
        if qi < 0 || qj < 0 || qi >= side as i64 || qj >= side as i64 {
            continue;
        }
        let q = qj as usize * side + qi as usize;
        if dir[q] as usize == d {
            gained += amount[q];
        }
    }
    gained
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn gather_interior_avx2(
    rows: NeighbourRows,
    dir: &[u8],
    amount: &[f32],
    heights: &mut [f32],
    talus_row: &mut [f32],
) {
    gather_interior(rows, dir, amount, heights, talus_row);
}

/// [`gather_row`] for the samples `1..side − 1` of an interior row, as
/// straight loops over whole rows (the compiler runs them several samples
/// an instruction). A neighbour that does not send here adds `+0.0`,
/// which leaves every value's bits as they are except `−0.0`'s, and a sum
/// that starts at `+0.0` never becomes `−0.0`: the same sum, in the same
/// order, as adding only the senders.
#[inline(always)]
fn gather_interior(
    rows: NeighbourRows,
    dir: &[u8],
    amount: &[f32],
    heights: &mut [f32],
    talus_row: &mut [f32],
) {
    let m = rows.side - 2;
    let own = rows.shifted(amount, 0, 0);
    let heights = &mut heights[1..1 + m];
    let talus_row = &mut talus_row[1..1 + m];
    let mut gained = vec![0.0f32; m];
    for (d, &(di, dj, _)) in NEIGHBOURS_8.iter().enumerate() {
        let from_dir = rows.shifted(dir, -di, -dj);
        let from_amount = rows.shifted(amount, -di, -dj);
        for ((g, &q_dir), &q_amount) in gained.iter_mut().zip(from_dir).zip(from_amount) {
            *g += if q_dir as usize == d { q_amount } else { 0.0 };
        }
    }
    for (((h, t), &g), &out) in heights.iter_mut().zip(talus_row).zip(&gained).zip(own) {
        *h += g - out;
        *t += g;
    }
}

/// Each sample's steepest lower neighbour beyond the talus drop
/// (`talus_per_sample · distance`) and half the excess times `rate`: half,
/// so a pair never swaps order in one pass.
fn outflows(
    plan: &Plan,
    talus_per_sample: f64,
    rate: f64,
    dir: &mut [u8],
    amount: &mut [f32],
    isa: Isa,
) {
    let side = plan.side;
    let h = &plan.height_cells;
    dir.par_chunks_mut(side)
        .zip(amount.par_chunks_mut(side))
        .enumerate()
        .for_each(|(j, (dir_row, amount_row))| {
            let mut row = OutflowRow {
                h,
                side,
                j,
                talus_per_sample,
                rate,
                dir_row,
                amount_row,
            };
            if j == 0 || j + 1 == side || side < 3 {
                for i in 0..side {
                    row.at_border(i);
                }
                return;
            }
            row.at_border(0);
            row.at_border(side - 1);
            #[cfg(target_arch = "x86_64")]
            if isa == Isa::Best && std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2.
                unsafe { row.interior_avx2() };
                return;
            }
            let _ = isa;
            row.interior();
        });
}

/// One row of [`outflows`].
struct OutflowRow<'a> {
    h: &'a [f32],
    side: usize,
    j: usize,
    talus_per_sample: f64,
    rate: f64,
    dir_row: &'a mut [u8],
    amount_row: &'a mut [f32],
}

impl OutflowRow<'_> {
    /// Sample `i` of the row, with range checks.
    fn at_border(&mut self, i: usize) {
        let (side, j, h) = (self.side, self.j, self.h);
        let own = f64::from(h[j * side + i]);
        let mut best = (NONE, 0.0f64);
        for (d, &(di, dj, dist)) in NEIGHBOURS_8.iter().enumerate() {
            let (ni, nj) = (i as i64 + di, j as i64 + dj);
            if ni < 0 || nj < 0 || ni >= side as i64 || nj >= side as i64 {
                continue;
            }
            let drop = own - f64::from(h[nj as usize * side + ni as usize]);
            let excess = drop - self.talus_per_sample * dist;
            if excess > best.1 {
                best = (d as u8, excess);
            }
        }
        self.dir_row[i] = best.0;
        self.amount_row[i] = (best.1 * 0.5 * self.rate) as f32;
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn interior_avx2(&mut self) {
        self.interior();
    }

    /// The samples `1..side − 1` of an interior row: the same operations
    /// as [`OutflowRow::at_border`] in the same order, as selects instead of
    /// branches, in straight loops over the row.
    #[inline(always)]
    fn interior(&mut self) {
        let m = self.side - 2;
        let rows = NeighbourRows::around(self.side, self.j);
        let own = rows.shifted(self.h, 0, 0);
        let mut best_excess = vec![0.0f64; m];
        let best_dir = &mut self.dir_row[1..1 + m];
        best_dir.fill(NONE);
        for (d, &(di, dj, dist)) in NEIGHBOURS_8.iter().enumerate() {
            let talus_drop = self.talus_per_sample * dist;
            let other = rows.shifted(self.h, di, dj);
            for (((best_e, best_d), &h), &hn) in best_excess
                .iter_mut()
                .zip(best_dir.iter_mut())
                .zip(own)
                .zip(other)
            {
                let excess = (f64::from(h) - f64::from(hn)) - talus_drop;
                let steeper = excess > *best_e;
                *best_e = if steeper { excess } else { *best_e };
                *best_d = if steeper { d as u8 } else { *best_d };
            }
        }
        for (a, &e) in self.amount_row[1..1 + m].iter_mut().zip(&best_excess) {
            *a = (e * 0.5 * self.rate) as f32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The passes as they were written first: one sample at a time, range
    /// checks everywhere, branches. Every faster path must give its bits.
    fn erode_reference(plan: &mut Plan, talus: f64, iterations: u32, rate: f64) {
        let side = plan.side;
        let n = plan.len();
        let talus_per_sample = talus * f64::from(plan.spacing_cells);
        let mut dir = vec![NONE; n];
        let mut amount = vec![0.0f32; n];
        for _ in 0..iterations {
            let h = plan.height_cells.clone();
            for j in 0..side {
                let mut row = OutflowRow {
                    h: &h,
                    side,
                    j,
                    talus_per_sample,
                    rate,
                    dir_row: &mut dir[j * side..(j + 1) * side],
                    amount_row: &mut amount[j * side..(j + 1) * side],
                };
                for i in 0..side {
                    row.at_border(i);
                }
            }
            for j in 0..side {
                for i in 0..side {
                    let k = j * side + i;
                    let gained = gathered_at_border(side, i, j, &dir, &amount);
                    plan.height_cells[k] += gained - amount[k];
                    plan.talus_cells[k] += gained;
                }
            }
        }
    }

    /// A rough field with cliffs, flats and ties (equal drops to two
    /// neighbours), so every branch of the steepest-descent choice is taken.
    fn rough_plan(side: u32) -> Plan {
        let mut plan = Plan::new(side);
        let side = plan.side;
        for j in 0..side {
            for i in 0..side {
                let k = plan.index(i, j);
                let hashed = ((i * 7919 + j * 104_729) % 97) as f32 * 0.37;
                let cliff = if (i / 9 + j / 13) % 3 == 0 { 25.0 } else { 0.0 };
                let flat = if (i + j) % 11 == 0 { 4.0 } else { hashed };
                plan.height_cells[k] = flat + cliff;
            }
        }
        plan
    }

    #[test]
    fn every_path_gives_the_reference_bits() {
        for side in [1, 2, 3, 4, 37, 64] {
            let mut reference = rough_plan(side);
            erode_reference(&mut reference, 0.8, 7, 0.5);
            for isa in [Isa::Best, Isa::Baseline] {
                let mut plan = rough_plan(side);
                erode_thermal_on(&mut plan, 0.8, 7, 0.5, &Progress::new(), isa)
                    .expect("not cancelled");
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&plan.height_cells),
                    bits(&reference.height_cells),
                    "{side} {isa:?}"
                );
                assert_eq!(
                    bits(&plan.talus_cells),
                    bits(&reference.talus_cells),
                    "{side} {isa:?}"
                );
            }
        }
        // The check compares something: the reference moved scree.
        let mut moved = rough_plan(64);
        erode_reference(&mut moved, 0.8, 7, 0.5);
        assert!(moved.talus_cells.iter().filter(|&&t| t > 0.0).count() > 500);
    }

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
