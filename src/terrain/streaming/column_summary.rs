//! Coarse summaries of edited chunk columns (spec §13: "edited terrain keeps
//! coarse summaries, rebuilt bottom-up from edited chunks").
//!
//! The levels above the chunk read unedited terrain from the generator
//! ([`crate::terrain::streaming::surface_sampler`]); an artist's edits exist only in cells. A
//! summary keeps, for each of a column's 32 × 32 cell columns, what a node
//! samples: the top of the solid, the material there, and the top of any
//! water above it. It is rebuilt from the column's chunks whenever an edit
//! touches them and outlives their eviction (a few KiB instead of the cells).
//! Overhangs and caves are below the top and do not show from afar.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::terrain::storage::cell::Material;
use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::{CHUNK_SIZE_CELLS, ChunkCoord, ColumnCoord};
use crate::terrain::streaming::surface_sampler::{SurfaceColumn, SurfaceSampler};

/// Cell columns per chunk column.
const AREA: usize = (CHUNK_SIZE_CELLS * CHUNK_SIZE_CELLS) as usize;

/// What a chunk column's cells look like from above.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnSummary {
    /// Top of the solid per cell column (x fastest), cells; `NEG_INFINITY`
    /// where the column holds no solid.
    pub height_cells: Box<[f32]>,
    /// Material of the top solid cell (Air where there is none).
    pub material: Box<[u8]>,
    /// Top of the water above the solid, cells; `NEG_INFINITY` for none.
    pub water_cells: Box<[f32]>,
}

impl ColumnSummary {
    /// Summarises a column from its chunks (any order; all-empty ones may
    /// be left out). The top solid cell with occupancy `o` at row `y` puts
    /// the surface at `y + o / 255`.
    pub fn from_chunks(chunks: &[(ChunkCoord, ChunkCells)]) -> ColumnSummary {
        Self::from_chunks_where(chunks, |_, _| true)
    }

    /// [`ColumnSummary::from_chunks`] for the cell columns `(lx, lz)` that
    /// `keep` accepts; the others read as holding nothing. A low-poly
    /// heightfield needs just one edge row of each neighbour (a quarter of
    /// the work of summarising them whole).
    pub fn from_chunks_where(
        chunks: &[(ChunkCoord, ChunkCells)],
        keep: impl Fn(i32, i32) -> bool,
    ) -> ColumnSummary {
        let mut height = vec![f32::NEG_INFINITY; AREA];
        let mut material = vec![Material::AIR.0; AREA];
        let mut water = vec![f32::NEG_INFINITY; AREA];
        let mut order: Vec<&(ChunkCoord, ChunkCells)> = chunks.iter().collect();
        order.sort_by_key(|(c, _)| std::cmp::Reverse(c.0.y));
        for (coord, cells) in order {
            let y0 = coord.0.y * CHUNK_SIZE_CELLS;
            for lz in 0..CHUNK_SIZE_CELLS {
                for lx in 0..CHUNK_SIZE_CELLS {
                    let i = (lz * CHUNK_SIZE_CELLS + lx) as usize;
                    if height[i] > f32::NEG_INFINITY || !keep(lx, lz) {
                        continue;
                    }
                    for ly in (0..CHUNK_SIZE_CELLS).rev() {
                        let cell = cells.get(glam::IVec3::new(lx, ly, lz));
                        let y = (y0 + ly) as f32;
                        let w = cell.water_occupancy();
                        if w > 0 && water[i] == f32::NEG_INFINITY {
                            water[i] = y + f32::from(w) / 255.0;
                        }
                        let s = cell.solid_occupancy();
                        if s > 0 {
                            height[i] = y + f32::from(s) / 255.0;
                            material[i] = cell.material().0;
                            break;
                        }
                    }
                }
            }
        }
        ColumnSummary {
            height_cells: height.into(),
            material: material.into(),
            water_cells: water.into(),
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        AREA * 9
    }
}

/// Summaries of the edited columns of a world.
pub type ColumnSummaries = FxHashMap<ColumnCoord, Arc<ColumnSummary>>;

/// A [`SurfaceSampler`] that answers edited columns from their summaries
/// and the rest from `base`.
pub struct EditedSurface<'a> {
    /// The unedited terrain.
    pub base: &'a dyn SurfaceSampler,
    /// Summaries of the edited columns.
    pub edited: &'a ColumnSummaries,
}

impl EditedSurface<'_> {
    /// The summary and cell index holding world cell column `(x, z)`.
    fn summary_at(&self, x: i64, z: i64) -> Option<(&ColumnSummary, usize)> {
        if self.edited.is_empty() {
            return None;
        }
        let n = i64::from(CHUNK_SIZE_CELLS);
        let column = ColumnCoord::new(x.div_euclid(n) as i32, z.div_euclid(n) as i32);
        let summary = self.edited.get(&column)?;
        let i = (z.rem_euclid(n) * n + x.rem_euclid(n)) as usize;
        Some((summary, i))
    }

    /// Column `(x_cell, z_cell)` as its summary has it where it was
    /// edited, else `base` (the unedited source's).
    fn edited_column(
        &self,
        base: Option<SurfaceColumn>,
        x_cell: i64,
        z_cell: i64,
    ) -> Option<SurfaceColumn> {
        let Some((s, i)) = self.summary_at(x_cell, z_cell) else {
            return base;
        };
        let height = f64::from(s.height_cells[i]).max(0.0);
        let water = f64::from(s.water_cells[i]);
        Some(SurfaceColumn {
            height_cells: height,
            material: Some(Material(s.material[i]))
                .filter(|m| m.is_solid())
                .unwrap_or_else(|| base.map_or(Material::ROCK, |b| b.material)),
            water_level_cells: if water > height {
                water
            } else {
                base.map_or(f64::NEG_INFINITY, |b| b.water_level_cells)
            },
            floor_cells: base.map_or(0.0, |b| b.floor_cells),
        })
    }
}

impl SurfaceSampler for EditedSurface<'_> {
    fn height_cells(&self, x_cells: f64, z_cells: f64) -> Option<f64> {
        match self.summary_at(x_cells.floor() as i64, z_cells.floor() as i64) {
            Some((s, i)) => Some(f64::from(s.height_cells[i]).max(0.0)),
            None => self.base.height_cells(x_cells, z_cells),
        }
    }

    fn height_cells_coarse(&self, x_cells: f64, z_cells: f64, spacing_cells: f64) -> Option<f64> {
        match self.summary_at(x_cells.floor() as i64, z_cells.floor() as i64) {
            Some((s, i)) => Some(f64::from(s.height_cells[i]).max(0.0)),
            None => self
                .base
                .height_cells_coarse(x_cells, z_cells, spacing_cells),
        }
    }

    fn column_coarse(&self, x_cell: i64, z_cell: i64, spacing_cells: f64) -> Option<SurfaceColumn> {
        self.edited_column(
            self.base.column_coarse(x_cell, z_cell, spacing_cells),
            x_cell,
            z_cell,
        )
    }

    fn column(&self, x_cell: i64, z_cell: i64) -> Option<SurfaceColumn> {
        self.edited_column(self.base.column(x_cell, z_cell), x_cell, z_cell)
    }

    fn top_cells(&self) -> f64 {
        let edited_top = self
            .edited
            .values()
            .flat_map(|s| s.height_cells.iter().chain(s.water_cells.iter()))
            .fold(f32::NEG_INFINITY, |a, &b| a.max(b));
        self.base.top_cells().max(f64::from(edited_top))
    }

    fn extent_cells(&self) -> [i64; 2] {
        self.base.extent_cells()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::cell::Cell;

    #[test]
    fn a_summary_holds_the_top_of_the_solid_and_the_water_above_it() {
        let mut cells = vec![Cell::EMPTY; 32 * 32 * 32];
        let at = |x: i32, y: i32, z: i32| {
            crate::terrain::storage::coords::local_index(glam::IVec3::new(x, y, z))
        };
        for y in 0..10 {
            cells[at(3, y, 4)] = Cell::full(Material::ROCK);
        }
        cells[at(3, 10, 4)] = Cell::new(Material::GRASS, 128);
        cells[at(3, 11, 4)] = Cell::full(Material::WATER);
        let chunks = vec![(ChunkCoord::new(0, 1, 0), ChunkCells::from_dense(cells))];
        let s = ColumnSummary::from_chunks(&chunks);
        let i = 4 * 32 + 3;
        assert!((s.height_cells[i] - (42.0 + 128.0 / 255.0)).abs() < 1e-4);
        assert_eq!(s.material[i], Material::GRASS.0);
        assert!((s.water_cells[i] - 44.0).abs() < 1e-4);
        assert_eq!(s.height_cells[0], f32::NEG_INFINITY);
    }
}
