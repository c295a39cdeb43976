//! The column heightfield the low-poly style reads from the grid (after the
//! design note `chunked-greedy-heightfield-terrain`): for each cell column
//! the top of the solid quantized to steps, with the top cell's material;
//! a column whose water stands above its ground shows the water surface
//! instead. The grid stays the single source of truth: this is a view of
//! it, rebuilt from a chunk column and its four neighbours whenever they
//! change.

use crate::terrain::Material;
use std::sync::Arc;

use crate::terrain::storage::coords::{CHUNK_SIZE_CELLS, ColumnCoord};
use crate::terrain::storage::grid::Grid;
use crate::terrain::streaming::column_summary::{ColumnSummaries, ColumnSummary};

/// Cell columns per chunk column side.
pub const SIDE: usize = CHUNK_SIZE_CELLS as usize;

/// One cell column's top: its step (height in steps above y = 0) and
/// material.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnTop {
    /// Height of the top in steps (`step_cells` cells each).
    pub step: i32,
    /// Material of the top (Water for a water surface).
    pub material: Material,
}

/// The tops of one chunk column with a one-column apron from each of its
/// four neighbours (`None`: no solid and no water there, or outside the
/// grid), indexed `(x + 1) + (z + 1) · (SIDE + 2)` for local `x, z` in
/// `-1..=SIDE`.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnHeightfield {
    /// The chunk column.
    pub column: ColumnCoord,
    /// Cells per step (positive).
    pub step_cells: f32,
    tops: Vec<Option<ColumnTop>>,
}

/// Quantizes a height in cells to steps: the nearest step, so a surface
/// exactly between two steps rounds up (every chunk column rounds the same
/// global height the same way).
pub fn quantize_step(height_cells: f32, step_cells: f32) -> i32 {
    (height_cells / step_cells + 0.5).floor() as i32
}

/// Checks a collision block size: it must divide a chunk side.
///
/// # Errors
/// A message when `block_cells` is not 1, 2, 4, 8, 16 or 32.
pub fn check_block_cells(block_cells: u32) -> Result<(), String> {
    if block_cells.is_power_of_two() && block_cells as usize <= SIDE {
        Ok(())
    } else {
        Err(format!(
            "a collision block is 1, 2, 4, 8, 16 or 32 cells, not {block_cells}"
        ))
    }
}

/// The summaries of `column` and, of its four edge neighbours in `grid`,
/// the `apron_cells` rows next to it (what one heightfield reads: 1 row
/// for the tops, a block's width for block-max collision).
fn neighbourhood(grid: &Grid, column: ColumnCoord, apron_cells: i32) -> ColumnSummaries {
    let far = SIDE as i32 - apron_cells;
    [(0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)]
        .into_iter()
        .map(|(dx, dz)| {
            let c = ColumnCoord::new(column.x + dx, column.z + dz);
            let keep = |x: i32, z: i32| match (dx, dz) {
                (-1, _) => x >= far,
                (1, _) => x < apron_cells,
                (_, -1) => z >= far,
                (_, 1) => z < apron_cells,
                _ => true,
            };
            let summary = ColumnSummary::from_chunks_where(&grid.column_chunks(c), keep);
            (c, Arc::new(summary))
        })
        .collect()
}

impl ColumnHeightfield {
    /// The heightfield of `column` in `grid`, quantized to `step_cells`
    /// (must be finite and positive; callers check user input).
    pub fn from_grid(grid: &Grid, column: ColumnCoord, step_cells: f32) -> ColumnHeightfield {
        Self::from_summaries(&neighbourhood(grid, column, 1), column, step_cells)
    }

    /// [`ColumnHeightfield::from_grid`] from already made summaries of
    /// `column` and its four edge neighbours (a missing one has no tops), so
    /// meshing many columns summarises each once.
    pub fn from_summaries(
        summaries: &ColumnSummaries,
        column: ColumnCoord,
        step_cells: f32,
    ) -> ColumnHeightfield {
        Self::build(summaries, column, step_cells, |s, lx, lz| {
            top_of(s, (lz * SIDE as i32 + lx) as usize, step_cells)
        })
    }

    /// The heightfield of the ground alone (water is not a top: the view
    /// draws water as its own animated surface over the ground), from
    /// summaries of `column` and its four edge neighbours.
    pub fn ground_from_summaries(
        summaries: &ColumnSummaries,
        column: ColumnCoord,
        step_cells: f32,
    ) -> ColumnHeightfield {
        Self::build(summaries, column, step_cells, |s, lx, lz| {
            ground_top(s, (lz * SIDE as i32 + lx) as usize, step_cells)
        })
    }

    /// [`ColumnHeightfield::ground_from_summaries`] of `column` in `grid`.
    pub fn ground_from_grid(
        grid: &Grid,
        column: ColumnCoord,
        step_cells: f32,
    ) -> ColumnHeightfield {
        Self::ground_from_summaries(&neighbourhood(grid, column, 1), column, step_cells)
    }

    /// The coarse collision heightfield of `column` (background
    /// `chunked-greedy-heightfield-terrain` §3: collision is not the render
    /// mesh): every cell column of a `block_cells` × `block_cells` block
    /// takes the block's highest ground step (water is not solid: the ground
    /// under it is walkable), so a walker never sinks below the render
    /// tops. Meshed with [`crate::mesh::lowpoly::greedy_heightfield::mesh_low_poly`], each
    /// block merges into its neighbours of equal height.
    ///
    /// # Errors
    /// As [`check_block_cells`].
    pub fn block_max_from_grid(
        grid: &Grid,
        column: ColumnCoord,
        step_cells: f32,
        block_cells: u32,
    ) -> Result<ColumnHeightfield, String> {
        check_block_cells(block_cells)?;
        Self::block_max_from_summaries(
            &neighbourhood(grid, column, block_cells as i32),
            column,
            step_cells,
            block_cells,
        )
    }

    /// [`ColumnHeightfield::block_max_from_grid`] from already made
    /// summaries (see [`ColumnHeightfield::from_summaries`]).
    ///
    /// # Errors
    /// As [`check_block_cells`].
    pub fn block_max_from_summaries(
        summaries: &ColumnSummaries,
        column: ColumnCoord,
        step_cells: f32,
        block_cells: u32,
    ) -> Result<ColumnHeightfield, String> {
        check_block_cells(block_cells)?;
        let b = block_cells as i32;
        Ok(Self::build(summaries, column, step_cells, |s, lx, lz| {
            let (x0, z0) = (lx - lx % b, lz - lz % b);
            (z0..z0 + b)
                .flat_map(|z| (x0..x0 + b).map(move |x| (z * SIDE as i32 + x) as usize))
                .filter_map(|i| ground_top(s, i, step_cells))
                .max_by_key(|t| t.step)
        }))
    }

    /// The heightfield of `column` whose top at local `(lx, lz)` of a chunk
    /// column's summary is `top(summary, lx, lz)`, for the column itself and
    /// the one-column apron from its four neighbours in `summaries`.
    fn build(
        summaries: &ColumnSummaries,
        column: ColumnCoord,
        step_cells: f32,
        top: impl Fn(&ColumnSummary, i32, i32) -> Option<ColumnTop>,
    ) -> ColumnHeightfield {
        let n = SIDE as i32;
        let empty = std::cell::OnceCell::new();
        let summary = |dx: i32, dz: i32| -> &ColumnSummary {
            match summaries.get(&ColumnCoord::new(column.x + dx, column.z + dz)) {
                Some(s) => s,
                None => empty.get_or_init(|| ColumnSummary::from_chunks(&[])),
            }
        };
        let mut tops = vec![None; (SIDE + 2) * (SIDE + 2)];
        for z in -1..=n {
            for x in -1..=n {
                let (inside_x, inside_z) = ((0..n).contains(&x), (0..n).contains(&z));
                let (s, lx, lz) = match (inside_x, inside_z) {
                    (true, true) => (summary(0, 0), x, z),
                    (false, true) if x < 0 => (summary(-1, 0), n - 1, z),
                    (false, true) => (summary(1, 0), 0, z),
                    (true, false) if z < 0 => (summary(0, -1), x, n - 1),
                    (true, false) => (summary(0, 1), x, 0),
                    // The apron's corners are never read.
                    (false, false) => continue,
                };
                tops[Self::index(x, z)] = top(s, lx, lz);
            }
        }
        ColumnHeightfield {
            column,
            step_cells,
            tops,
        }
    }

    fn index(x: i32, z: i32) -> usize {
        (x + 1) as usize + (z + 1) as usize * (SIDE + 2)
    }

    /// The top at local `(x, z)`, `-1..=SIDE` on each axis (the apron
    /// corners are `None`).
    pub fn top(&self, x: i32, z: i32) -> Option<ColumnTop> {
        self.tops[Self::index(x, z)]
    }

    /// True when no column of the chunk column has a top.
    pub fn is_empty(&self) -> bool {
        let n = SIDE as i32;
        (0..n).all(|z| (0..n).all(|x| self.top(x, z).is_none()))
    }
}

/// The top of cell column `i` of `summary`: the water surface where water
/// stands above the ground, else the ground.
fn top_of(summary: &ColumnSummary, i: usize, step_cells: f32) -> Option<ColumnTop> {
    let ground = summary.height_cells[i];
    let water = summary.water_cells[i];
    if water > ground && water.is_finite() {
        return Some(ColumnTop {
            step: quantize_step(water, step_cells),
            material: Material::WATER,
        });
    }
    ground_top(summary, i, step_cells)
}

/// The ground top of cell column `i` of `summary` (`None`: no solid).
fn ground_top(summary: &ColumnSummary, i: usize, step_cells: f32) -> Option<ColumnTop> {
    let ground = summary.height_cells[i];
    ground.is_finite().then(|| ColumnTop {
        step: quantize_step(ground, step_cells),
        material: Material(summary.material[i]),
    })
}
