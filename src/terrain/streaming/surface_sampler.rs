//! The surface of a source's unedited terrain, answered point by point for
//! the levels above the chunk (spec §13: "unedited generated terrain answers
//! coarse samples from the generator directly").
//!
//! A node 2 km across is meshed from 4 samples per axis. Generating its
//! 16 × 16 × 16 chunks to average them would cost what the node saves; the
//! generator and the heightmap importer describe each column by a height and
//! a surface material anyway, so a coarse sample reads a few columns instead.

use crate::terrain::storage::cell::Material;

/// One column of a source's terrain as seen from above.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceColumn {
    /// Surface height, cells (absolute `y`; the solid crosses 0.5 occupancy here).
    pub height_cells: f64,
    /// The material the column shows on top (cliff strata read as their body rock).
    pub material: Material,
    /// The column's water level, cells (`f64::NEG_INFINITY` for none).
    pub water_level_cells: f64,
    /// The lowest solid row of the column (cells); rows below are empty.
    pub floor_cells: f64,
}

/// Point queries on a source's unedited terrain. Called on worker threads.
pub trait SurfaceSampler: Send + Sync {
    /// Surface height at `(x, z)` in cells (column centres at `i + 0.5`),
    /// or `None` outside the terrain's footprint.
    fn height_cells(&self, x_cells: f64, z_cells: f64) -> Option<f64>;

    /// The whole description of column `(x, z)` (integer cells), or `None`
    /// outside the footprint. Costs more than [`SurfaceSampler::height_cells`]
    /// (the material needs the slope).
    fn column(&self, x_cell: i64, z_cell: i64) -> Option<SurfaceColumn>;

    /// [`SurfaceSampler::height_cells`] for a sample that stands for
    /// `spacing_cells` of ground (a coarse node's sample spacing): a source
    /// may answer from a reduced copy of itself where one of its own
    /// samples is much finer than that. Exact by default.
    fn height_cells_coarse(&self, x_cells: f64, z_cells: f64, spacing_cells: f64) -> Option<f64> {
        let _ = spacing_cells;
        self.height_cells(x_cells, z_cells)
    }

    /// [`SurfaceSampler::column`] for a sample that stands for
    /// `spacing_cells` of ground, as [`SurfaceSampler::height_cells_coarse`].
    /// Exact by default.
    fn column_coarse(&self, x_cell: i64, z_cell: i64, spacing_cells: f64) -> Option<SurfaceColumn> {
        let _ = spacing_cells;
        self.column(x_cell, z_cell)
    }

    /// Highest solid or water cell any column can have, cells.
    fn top_cells(&self) -> f64;

    /// The footprint `[0, w) × [0, d)` in cells, `[w, d]`.
    fn extent_cells(&self) -> [i64; 2];
}
