//! Column filling shared by every generator: a [`ColumnSpec`] describes one
//! column (surface height and material, soil, where cliff strata show, water),
//! a [`ColumnTable`] holds the specs of one chunk column with bounds that prove
//! whole chunks uniform, and [`fill_chunk_columns`] builds a grid from them in
//! parallel. The default generator, heightmap import and recipe worlds all
//! describe columns this way, so identical columns assemble identical chunks.

use crate::terrain::generation::noise::hash1;
use crate::terrain::generation::noise::sub_seed;
use glam::IVec3;
use rayon::prelude::*;

use crate::progress::{Cancelled, Progress};
use crate::terrain::storage::cell::{Cell, Material};
use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::{
    CHUNK_SIZE_CELLS, CHUNK_VOLUME_CELLS, ChunkCoord, ColumnCoord, local_index,
};
use crate::terrain::storage::grid::Grid;
use crate::terrain::streaming::column_source::ColumnChunks;
use crate::terrain::streaming::surface_sampler::SurfaceColumn;

/// Builds the grid of the chunk columns `[0, chunks_x) × [0, chunks_z)` in
/// parallel (rayon): `table` gives each column's [`ColumnTable`], whose
/// non-empty chunks are filled with `strata`. Counts one unit per column in
/// `progress` (stage `stage`) and stops early when it is cancelled. The one
/// column → chunk fill of world generation and heightmap import, so both
/// assemble identical grids from identical columns.
///
/// # Errors
/// [`Cancelled`] when `progress` was cancelled; no grid is built.
pub(crate) fn fill_chunk_columns(
    chunks_x: i32,
    chunks_z: i32,
    strata: &Strata,
    stage: &'static str,
    progress: &Progress,
    table: impl Fn(i32, i32) -> ColumnTable + Sync,
) -> Result<Grid, Cancelled> {
    let columns: Vec<(i32, i32)> = (0..chunks_z)
        .flat_map(|cz| (0..chunks_x).map(move |cx| (cx, cz)))
        .collect();
    progress.begin_stage(stage, columns.len() as u64);
    let chunks: Vec<(ChunkCoord, ChunkCells)> = columns
        .par_iter()
        .flat_map_iter(|&(cx, cz)| {
            if progress.is_cancelled() {
                return Vec::new();
            }
            let column = table(cx, cz).column_chunks(strata, ColumnCoord::new(cx, cz));
            progress.advance(1);
            column
        })
        .collect();
    progress.check()?;
    Ok(Grid::from_chunks(chunks))
}

/// Thickness of one rock stratum, in cells.
const STRATUM_CELLS: f64 = 3.0;

/// Layered rock shown on cliff faces: the material of a stratum depends only
/// on the seed and the stratum index, so layers line up across a cliff.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Strata {
    seed: u64,
}

impl Strata {
    /// Strata for a world seed.
    pub(crate) fn new(seed: u64) -> Strata {
        Strata {
            seed: sub_seed(seed, 0x5157),
        }
    }

    /// Rock material of the stratum through cell row `y`, with the layers
    /// shifted up by `shift_cells` (tilted, warped layers).
    #[inline]
    pub(crate) fn material(&self, y: i32, shift_cells: f64) -> Material {
        let layer = ((y as f64 + 0.5 + shift_cells) / STRATUM_CELLS).floor() as i64;
        match hash1(self.seed, layer) % 20 {
            0..=10 => Material::ROCK,
            11..=16 => Material::SLATE,
            _ => Material::LIMESTONE,
        }
    }
}

/// How one column of cells is filled, from its floor up to its surface and water.
///
/// Cell rows are counted down from the top solid cell `top = floor(height)`:
/// the top `surface_cells` rows get `surface` (or cliff strata when `None`),
/// the next `soil_cells` rows get `soil`, and deeper rows are strata when
/// `y >= strata_floor_y`, plain rock otherwise. Occupancy approximates a
/// signed distance to the surface: `round(clamp(0.5 + (height − (y + 0.5)) /
/// ramp, 0, 1) · 255)` with `ramp = sqrt(1 + slope²)` cells, so the 0.5
/// crossing lies at `y = height` and a steep face is as smooth across columns
/// as a flat one is across rows (on flat ground `ramp = 1` and only the top
/// cell is fractional; with vertical distance alone, cliffs would show one
/// step per cell row). Empty cells below `water_level_cells` become water (the
/// top one fractional).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ColumnSpec {
    /// Surface height, in cells (absolute `y`).
    pub height_cells: f64,
    /// Vertical extent of the fractional band, in cells: `sqrt(1 + slope²)` (>= 1).
    pub ramp_cells: f64,
    /// Lowest solid cell row; rows below are empty.
    pub floor_y: i32,
    /// Surface material, or `None` for exposed strata (cliffs).
    pub surface: Option<Material>,
    /// Rows of surface material counted from the top solid cell (at least 1).
    pub surface_cells: i32,
    /// Material under the surface rows.
    pub soil: Material,
    /// Rows of soil.
    pub soil_cells: i32,
    /// Rows at or above this (below the soil) show strata; rows below are rock.
    pub strata_floor_y: i32,
    /// Vertical shift of the strata layers at this column, in cells.
    pub strata_shift_cells: f64,
    /// Water level, in cells (`f64::NEG_INFINITY` for none).
    pub water_level_cells: f64,
    /// Material of the body below the soil and the strata (rock).
    pub body: Material,
}

/// Occupancy of a cell covering `[j, j+1)` under a level `h` (cells):
/// `round(clamp(h − j, 0, 1) · 255)`.
#[inline]
pub(crate) fn fractional_occupancy(h: f64, j: i32) -> u8 {
    ((h - j as f64).clamp(0.0, 1.0) * 255.0).round() as u8
}

/// Occupancy of row `y` under a surface at height `h` whose fractional band is
/// `ramp` cells tall: `round(clamp(0.5 + (h − (y + 0.5)) / ramp, 0, 1) · 255)`.
/// Equals [`fractional_occupancy`] when `ramp == 1`.
#[inline]
pub(crate) fn ramp_occupancy(h: f64, ramp: f64, y: i32) -> u8 {
    ((0.5 + (h - (y as f64 + 0.5)) / ramp).clamp(0.0, 1.0) * 255.0).round() as u8
}

/// Tallest fractional band, in cells. Beyond this the column-based distance
/// estimate smears sheer one-column cliffs into their neighbours.
pub(crate) const MAX_RAMP_CELLS: f64 = 4.0;

/// Vertical band height for a surface of gradient magnitude `slope` (cells
/// per cell): `sqrt(1 + slope²)`, at most [`MAX_RAMP_CELLS`].
#[inline]
pub(crate) fn ramp_for_slope(slope: f64) -> f64 {
    (1.0 + slope * slope).sqrt().min(MAX_RAMP_CELLS)
}

impl ColumnSpec {
    /// Row of the top (possibly fractional) solid cell: the row holding the
    /// upper end of the fractional band.
    #[inline]
    fn top_y(&self) -> i32 {
        (self.height_cells - 0.5 + 0.5 * self.ramp_cells).floor() as i32
    }

    /// Rows below this are full (the band's lower end rounds to 255 or more).
    #[inline]
    fn full_below_y(&self) -> i32 {
        (self.height_cells - 0.5 - 0.5 * self.ramp_cells).floor() as i32 + 1
    }

    /// Row of the visible surface, from which material depth is counted.
    #[inline]
    fn surface_y(&self) -> i32 {
        self.height_cells.floor() as i32
    }

    /// Rows `[floor_y, rock_below_y)` are all full plain rock.
    pub(crate) fn rock_below_y(&self) -> i32 {
        let below_soil = self.surface_y() - self.surface_cells.max(1) - self.soil_cells + 1;
        below_soil.min(self.strata_floor_y).min(self.full_below_y())
    }

    /// Rows at or above this are empty (no solid, no water).
    pub(crate) fn empty_from_y(&self) -> i32 {
        let water_top = if self.water_level_cells.is_finite() {
            self.water_level_cells.ceil() as i32
        } else {
            i32::MIN
        };
        (self.top_y() + 1).max(water_top).max(self.floor_y)
    }

    /// The cell at row `y` of this column.
    #[inline]
    pub(crate) fn cell(&self, strata: &Strata, y: i32) -> Cell {
        if y < self.floor_y {
            return Cell::EMPTY;
        }
        let occupancy = if y < self.full_below_y() {
            255
        } else if y <= self.top_y() {
            ramp_occupancy(self.height_cells, self.ramp_cells, y)
        } else {
            0
        };
        if occupancy == 0 {
            return if (y as f64) < self.water_level_cells {
                Cell::new(
                    Material::WATER,
                    fractional_occupancy(self.water_level_cells, y),
                )
            } else {
                Cell::EMPTY
            };
        }
        // Rows of the band above the surface row count as surface (depth < 0).
        let depth = self.surface_y() - y;
        let surface_cells = self.surface_cells.max(1);
        let material = if depth < surface_cells {
            match self.surface {
                Some(m) => m,
                None => strata.material(y, self.strata_shift_cells),
            }
        } else if depth < surface_cells + self.soil_cells {
            self.soil
        } else if y >= self.strata_floor_y {
            strata.material(y, self.strata_shift_cells)
        } else {
            self.body
        };
        Cell::new(material, occupancy)
    }
}

/// The column specs of one chunk column (32×32, x fastest; `None` outside
/// the terrain) and their vertical bounds.
pub(crate) struct ColumnTable {
    columns: Vec<Option<ColumnSpec>>,
    /// Every one of the 1024 columns is inside the terrain.
    all_inside: bool,
    /// Minimum over columns of [`ColumnSpec::rock_below_y`].
    rock_below_y: i32,
    /// The body material when every column shares it, else `None` (then no
    /// chunk is taken as uniform body).
    body: Option<Material>,
    /// Maximum over columns of [`ColumnSpec::floor_y`].
    max_floor_y: i32,
    /// Minimum over columns of [`ColumnSpec::floor_y`].
    min_floor_y: i32,
    /// Maximum over columns of [`ColumnSpec::empty_from_y`].
    empty_from_y: i32,
}

impl ColumnTable {
    /// A table from 1024 column specs (x fastest, then z).
    pub(crate) fn new(columns: Vec<Option<ColumnSpec>>) -> ColumnTable {
        debug_assert_eq!(columns.len(), 32 * 32);
        let mut table = ColumnTable {
            all_inside: columns.iter().all(Option::is_some),
            rock_below_y: i32::MAX,
            body: columns.iter().flatten().next().map(|c| c.body),
            max_floor_y: i32::MIN,
            min_floor_y: i32::MAX,
            empty_from_y: i32::MIN,
            columns,
        };
        for spec in table.columns.iter().flatten() {
            table.rock_below_y = table.rock_below_y.min(spec.rock_below_y());
            if table.body != Some(spec.body) {
                table.body = None;
            }
            table.max_floor_y = table.max_floor_y.max(spec.floor_y);
            table.min_floor_y = table.min_floor_y.min(spec.floor_y);
            table.empty_from_y = table.empty_from_y.max(spec.empty_from_y());
        }
        table
    }

    /// Chunk `y` coordinates `[lo, hi)` that may hold non-empty cells.
    pub(crate) fn chunk_y_range(&self) -> (i32, i32) {
        if self.empty_from_y <= self.min_floor_y {
            return (0, 0);
        }
        (
            self.min_floor_y.div_euclid(CHUNK_SIZE_CELLS),
            (self.empty_from_y + CHUNK_SIZE_CELLS - 1).div_euclid(CHUNK_SIZE_CELLS),
        )
    }

    /// The non-empty chunks of this table as chunk column `column`, sorted
    /// by y: the one column → chunks step of generation, heightmap import
    /// and their streaming sources.
    pub(crate) fn column_chunks(&self, strata: &Strata, column: ColumnCoord) -> ColumnChunks {
        let (lo, hi) = self.chunk_y_range();
        (lo..hi)
            .map(|cy| {
                (
                    ChunkCoord::new(column.x, cy, column.z),
                    self.fill_chunk(strata, cy),
                )
            })
            .filter(|(_, cells)| !cells.is_all_empty())
            .collect()
    }

    /// The cells of chunk row `cy` of this column. Chunks proven uniform from
    /// the column bounds are returned without visiting their cells; the others
    /// are filled densely and compacted by [`ChunkCells::from_dense`].
    pub(crate) fn fill_chunk(&self, strata: &Strata, cy: i32) -> ChunkCells {
        let y0 = cy.saturating_mul(CHUNK_SIZE_CELLS);
        let y1 = y0.saturating_add(CHUNK_SIZE_CELLS);
        if y0 >= self.empty_from_y || y1 <= self.min_floor_y {
            return ChunkCells::Uniform(Cell::EMPTY);
        }
        if let Some(body) = self.body
            && self.all_inside
            && y0 >= self.max_floor_y
            && y1 <= self.rock_below_y
        {
            return ChunkCells::Uniform(Cell::full(body));
        }
        self.fill_dense(strata, cy)
    }

    /// Fills chunk row `cy` cell by cell (no uniform shortcut).
    pub(crate) fn fill_dense(&self, strata: &Strata, cy: i32) -> ChunkCells {
        let y0 = cy.saturating_mul(CHUNK_SIZE_CELLS);
        let mut cells = vec![Cell::EMPTY; CHUNK_VOLUME_CELLS];
        for lz in 0..CHUNK_SIZE_CELLS {
            for lx in 0..CHUNK_SIZE_CELLS {
                let Some(spec) = &self.columns[(lz * CHUNK_SIZE_CELLS + lx) as usize] else {
                    continue;
                };
                if y0 >= spec.empty_from_y() {
                    continue;
                }
                for ly in 0..CHUNK_SIZE_CELLS {
                    cells[local_index(IVec3::new(lx, ly, lz))] = spec.cell(strata, y0 + ly);
                }
            }
        }
        ChunkCells::from_dense(cells)
    }
}

/// Gradient magnitude (cells per cell) at the centre of a 3×3 neighbourhood
/// of heights `h[dz][dx]`, by central differences.
#[inline]
pub(crate) fn slope_3x3(h: &[[f64; 3]; 3]) -> f64 {
    let dx = (h[1][2] - h[1][0]) * 0.5;
    let dz = (h[2][1] - h[0][1]) * 0.5;
    (dx * dx + dz * dz).sqrt()
}

/// Minimum of a 3×3 neighbourhood of heights.
#[inline]
pub(crate) fn min_3x3(h: &[[f64; 3]; 3]) -> f64 {
    h.iter().flatten().fold(f64::INFINITY, |a, &b| a.min(b))
}

/// Extra surface-material rows a column needs where a neighbour's surface
/// lies lower: the rows between its own surface row and its lowest
/// neighbour's are the side of a step, and the surface cubes at the
/// neighbour's crossing take their corners from them. Counted from the
/// column's own surface row alone, those corners were soil, and every
/// slope showed a stripe of dirt per cell row (the grass read as terraces).
pub(crate) fn surface_rows_exposed_by_step(h: &[[f64; 3]; 3]) -> i32 {
    let own = h[1][1].floor();
    let lowest = min_3x3(h).floor();
    ((own - lowest) as i32).clamp(0, MAX_STEP_SURFACE_ROWS)
}

/// Most extra surface rows [`surface_rows_exposed_by_step`] adds (cliffs
/// steeper than this show strata, not a surface material).
pub(crate) const MAX_STEP_SURFACE_ROWS: i32 = 4;

/// Rows of margin below the lowest neighbouring surface that still show
/// strata: Surface Nets samples reach a cell or two below a cliff's foot.
pub(crate) const STRATA_MARGIN_CELLS: i32 = 2;

impl ColumnSpec {
    /// This column as seen from above.
    pub(crate) fn surface_column(&self) -> SurfaceColumn {
        SurfaceColumn {
            height_cells: self.height_cells,
            material: self.surface.unwrap_or(self.body),
            water_level_cells: self.water_level_cells,
            floor_cells: f64::from(self.floor_y),
        }
    }
}
