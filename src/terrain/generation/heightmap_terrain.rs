//! Heightmap to grid: an in-memory elevation model ([`Heightmap`]) becomes
//! a grid at once ([`grid_from_heightmap`]) or column by column for a
//! streaming world ([`HeightmapTerrain`]), the same cells either way.
//!
//! # Why it works this way
//! Cells are cubes, but DEM pixels are often not square (the Jacksboro DEM is
//! 74.5 m east–west by 92.1 m north–south), so the importer resamples the map
//! onto the cell lattice: one horizontal cell size in metres for both axes,
//! elevations converted with that same size (times an exaggeration), and the
//! DEM sampled bilinearly at every column centre so pixel quantization never
//! shows as stairs. Like the generator, each column's top gets fractional
//! occupancy (one cell on flat ground, a taller distance-like band on steep
//! slopes), so the Surface Nets surface is smooth. Materials come from slope
//! and relative height. All size checks run on the map's size and settings
//! before anything large is allocated, and no input can make the importer
//! panic.
//!
//! # Placement and axes
//! The map's north-west corner is at cell `(0, base_height_cells, 0)`; pixel
//! columns run along +x (east) and pixel rows along +z, so **north is −z** and
//! row 0 of the PNG is the `z = 0` edge. The terrain is solid from
//! `y = base_height_cells` up to its surface; the lowest elevation lies
//! [`BEDROCK_CELLS`] above the base so every column has ground.

use crate::progress::Progress;
use crate::terrain::generation::column_fill::{
    ColumnSpec, ColumnTable, STRATA_MARGIN_CELLS, Strata, fill_chunk_columns, min_3x3,
    ramp_for_slope, slope_3x3, surface_rows_exposed_by_step,
};
use crate::terrain::generation::heightmap::{
    BEDROCK_CELLS, HeightSamples, Heightmap, HeightmapSettings, ImportError, MAX_RELIEF_CELLS,
    MAX_SIDE_CELLS, MAX_STREAMING_SIDE_CELLS, NORMALIZED_RELIEF_CELLS, check_image_size,
    settings_scales, terrain_extent_cells,
};
use crate::terrain::generation::tiled_samples::{SampleOverview, TileReadError};
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::{CHUNK_SIZE_CELLS, ColumnCoord};
use crate::terrain::storage::grid::Grid;
use crate::terrain::streaming::column_source::{
    ColumnChunks, ColumnSource, LoadOrigin, SourceError,
};

/// How a heightmap maps onto the cell lattice.
#[derive(Clone, Copy, Debug)]
struct Layout {
    width_px: usize,
    height_px: usize,
    width_cells: i64,
    depth_cells: i64,
    /// Cells per sample unit (metre, or normalized unit), times the exaggeration.
    vertical_cells_per_unit: f64,
    /// Sample value at the bottom of the relief (min elevation, or 0).
    reference: f64,
    /// Surface of the lowest possible sample, cells.
    surface_floor_cells: f64,
    /// Relief of the whole value range, cells.
    relief_cells: f64,
    /// Water level, cells (`-inf` without a sea).
    water_level_cells: f64,
    /// Relief actually built: bedrock plus the samples' range, cells.
    built_relief_cells: f64,
}

impl Layout {
    /// The layout of `map` under `settings`, its extent within
    /// `limit_cells` per side.
    fn new(
        map: &Heightmap,
        settings: &HeightmapSettings,
        limit_cells: u64,
    ) -> Result<Layout, ImportError> {
        let (cpp, vs) = settings_scales(settings)?;
        let (w, h) = (map.width_px, map.height_px);
        check_image_size(w, h)?;
        if map.samples.len() != w as usize * h as usize {
            return Err(ImportError::InvalidHeightmap(format!(
                "{} samples for {w} × {h} pixels",
                map.samples.len()
            )));
        }
        let (min_sample, max_sample) = map
            .samples
            .range()
            .map_err(|i| ImportError::InvalidHeightmap(format!("sample {i} is not finite")))?;
        let (vertical_cells_per_unit, reference, top) = match &map.sidecar {
            Some(s) => {
                let cell_size_m = s.spacing_x_m / cpp;
                (vs / cell_size_m, s.min_elevation_m, s.max_elevation_m)
            }
            None => (NORMALIZED_RELIEF_CELLS * vs, 0.0, 1.0),
        };
        let (width_cells, depth_cells) =
            terrain_extent_cells(w, h, map.sidecar.as_ref(), settings, limit_cells)?;
        // The relief that gets built: the samples' range (which may exceed the sidecar's).
        let max_sample = max_sample.max(reference);
        let min_sample = min_sample.min(reference);
        let range = max_sample - min_sample.min(reference);
        // A flat map has no relief even when the scale overflowed (0 × ∞).
        let relief_cells = BEDROCK_CELLS
            + if range > 0.0 {
                range * vertical_cells_per_unit
            } else {
                0.0
            };
        let base = settings.base_height_cells as f64;
        let too_tall = !relief_cells.is_finite()
            || relief_cells > MAX_RELIEF_CELLS
            || base + relief_cells + 2.0 * CHUNK_SIZE_CELLS as f64 > i32::MAX as f64;
        if too_tall {
            return Err(ImportError::TerrainTooTall {
                relief_cells,
                base_height_cells: settings.base_height_cells,
                limit_cells: MAX_RELIEF_CELLS,
            });
        }
        let surface_floor_cells = base + BEDROCK_CELLS;
        let water_level_cells = match settings.sea_level_m {
            Some(sea) => {
                let level = surface_floor_cells + (sea - reference) * vertical_cells_per_unit;
                // A sea below the base floods nothing, so it may sit at the
                // base; one far above the terrain is refused, not clamped.
                let limit = base + MAX_RELIEF_CELLS + CHUNK_SIZE_CELLS as f64;
                if level.is_nan() || level > limit {
                    return Err(ImportError::SeaTooHigh {
                        sea_level_m: sea,
                        water_cells: level - base,
                        limit_cells: limit - base,
                    });
                }
                level.max(base)
            }
            None => f64::NEG_INFINITY,
        };
        Ok(Layout {
            width_px: w as usize,
            height_px: h as usize,
            width_cells: width_cells as i64,
            depth_cells: depth_cells as i64,
            vertical_cells_per_unit,
            reference,
            surface_floor_cells,
            relief_cells: (top - reference).max(0.0) * vertical_cells_per_unit,
            water_level_cells,
            built_relief_cells: relief_cells,
        })
    }

    /// Bilinear sample at column centre `(x + 0.5, z + 0.5)` (cells), edges
    /// clamped; an error only where a tile of tiled samples cannot be read.
    fn sample(&self, samples: &HeightSamples, x: i64, z: i64) -> Result<f64, TileReadError> {
        let (u, v) = self.pixel_at(x, z);
        let (u0, v0) = (u.floor() as usize, v.floor() as usize);
        let (u1, v1) = (
            (u0 + 1).min(self.width_px - 1),
            (v0 + 1).min(self.height_px - 1),
        );
        let (fu, fv) = (u - u0 as f64, v - v0 as f64);
        let [a, b, c, d] = samples.try_taps(self.width_px, (u0, v0), (u1, v1))?;
        let top = a + (b - a) * fu;
        let bottom = c + (d - c) * fu;
        Ok(top + (bottom - top) * fv)
    }

    /// True when column `(x, z)` is part of the terrain.
    fn is_inside(&self, x: i64, z: i64) -> bool {
        (0..self.width_cells).contains(&x) && (0..self.depth_cells).contains(&z)
    }

    /// Where column `(x, z)`'s centre falls on the map, pixel coordinates
    /// (pixel centres at integers), clamped to the map.
    fn pixel_at(&self, x: i64, z: i64) -> (f64, f64) {
        let u = ((x as f64 + 0.5) * self.width_px as f64 / self.width_cells as f64 - 0.5)
            .clamp(0.0, (self.width_px - 1) as f64);
        let v = ((z as f64 + 0.5) * self.height_px as f64 / self.depth_cells as f64 - 0.5)
            .clamp(0.0, (self.height_px - 1) as f64);
        (u, v)
    }

    /// The surface height (cells) of `sample`, a map value.
    fn height_of(&self, sample: f64) -> f64 {
        self.surface_floor_cells + (sample - self.reference) * self.vertical_cells_per_unit
    }

    /// The overview of tiled `samples` when a sample `spacing_cells`
    /// apart spans at least a block of it along both axes (the overview's
    /// means then stand for the ground a coarse sample covers).
    fn overview_for<'a>(
        &self,
        samples: &'a HeightSamples,
        spacing_cells: f64,
    ) -> Option<&'a SampleOverview> {
        let HeightSamples::Tiled(t) = samples else {
            return None;
        };
        let o = t.overview();
        let px_per_cell = (self.width_px as f64 / self.width_cells as f64)
            .min(self.height_px as f64 / self.depth_cells as f64);
        (spacing_cells * px_per_cell >= f64::from(o.factor)).then_some(o)
    }

    /// Surface height (cells) of column `(x, z)`; errors as
    /// [`Layout::sample`].
    fn height(&self, samples: &HeightSamples, x: i64, z: i64) -> Result<f64, TileReadError> {
        Ok(self.height_of(self.sample(samples, x, z)?))
    }
}

/// Builds the grid of a heightmap: columns `x ∈ [0, width_cells)`,
/// `z ∈ [0, depth_cells)`, solid from `base_height_cells` up to the surface,
/// built in parallel (rayon) over chunk columns.
///
/// # Errors
/// [`ImportError::InvalidSetting`], [`ImportError::ZeroSize`],
/// [`ImportError::ImageTooLarge`], [`ImportError::TerrainTooLarge`],
/// [`ImportError::TerrainTooTall`] and [`ImportError::InvalidHeightmap`],
/// all before the grid is allocated.
pub fn grid_from_heightmap(
    map: &Heightmap,
    settings: &HeightmapSettings,
) -> Result<Grid, ImportError> {
    grid_from_heightmap_with_progress(map, settings, &Progress::new())
}

/// [`grid_from_heightmap`] with progress (stage "importing", one unit per
/// chunk column) and cancellation.
///
/// # Errors
/// As [`grid_from_heightmap`], and [`ImportError::Cancelled`].
pub fn grid_from_heightmap_with_progress(
    map: &Heightmap,
    settings: &HeightmapSettings,
    progress: &Progress,
) -> Result<Grid, ImportError> {
    let layout = Layout::new(map, settings, MAX_SIDE_CELLS)?;
    let (chunks_x, chunks_z) = layout.chunk_columns();
    // The first tile that could not be read (tiled samples only); its
    // columns are left empty and the import fails.
    let unread = std::sync::Mutex::new(None);
    let grid = fill_chunk_columns(
        chunks_x,
        chunks_z,
        &heightmap_strata(),
        "importing",
        progress,
        |cx, cz| {
            column_table(&layout, settings, &map.samples, cx, cz).unwrap_or_else(|e| {
                let mut first = unread.lock().unwrap_or_else(|p| p.into_inner());
                first.get_or_insert(e);
                ColumnTable::new((0..32 * 32).map(|_| None).collect())
            })
        },
    )
    .map_err(|_| ImportError::Cancelled)?;
    match unread.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(ImportError::InvalidHeightmap(e.to_string())),
        None => Ok(grid),
    }
}

/// How a heightmap import maps samples and pixels onto cells: what an
/// export needs to write the terrain back in the map's own units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ElevationScale {
    /// Pixels of the map a cell spans `(along x, along z)`.
    pub pixels_per_cell: (f64, f64),
    /// Sample units (metres with a sidecar) a cell spans horizontally
    /// `(along x, along z)`: the pixel spacing times the pixels a cell
    /// spans; `None` without a sidecar.
    pub units_per_cell: Option<(f64, f64)>,
    /// The sample value of height `y = 0` (cells): surface height `h` is
    /// sample `sample_at_y0 + h · samples_per_cell`.
    pub sample_at_y0: f64,
    /// Sample units per cell of height (the exaggeration divided out).
    pub samples_per_cell: f64,
}

/// The [`ElevationScale`] of an import of `map` with `settings` (streamed
/// or whole: the same layout).
///
/// # Errors
/// As [`HeightmapTerrain::streaming`].
pub fn elevation_scale(
    map: &Heightmap,
    settings: &HeightmapSettings,
) -> Result<ElevationScale, ImportError> {
    let layout = Layout::new(map, settings, MAX_STREAMING_SIDE_CELLS)?;
    let pixels_per_cell = (
        layout.width_px as f64 / layout.width_cells as f64,
        layout.height_px as f64 / layout.depth_cells as f64,
    );
    let samples_per_cell = 1.0 / layout.vertical_cells_per_unit;
    Ok(ElevationScale {
        pixels_per_cell,
        units_per_cell: map.sidecar.as_ref().map(|s| {
            (
                s.spacing_x_m * pixels_per_cell.0,
                s.spacing_y_m * pixels_per_cell.1,
            )
        }),
        sample_at_y0: layout.reference - layout.surface_floor_cells * samples_per_cell,
        samples_per_cell,
    })
}

/// The rock strata of every imported terrain.
fn heightmap_strata() -> Strata {
    Strata::new(0)
}

impl Layout {
    /// Chunk columns `(along x, along z)` the terrain covers.
    fn chunk_columns(&self) -> (i32, i32) {
        let n = CHUNK_SIZE_CELLS as i64;
        // Extents are at most MAX_STREAMING_SIDE_CELLS (2^20) cells, so the
        // chunk counts fit an i32.
        (
            ((self.width_cells + n - 1) / n) as i32,
            ((self.depth_cells + n - 1) / n) as i32,
        )
    }
}

/// A heightmap ready to build any chunk column on demand (spec §12): the
/// samples, the settings and their validated layout. Its columns are the
/// very columns [`grid_from_heightmap`] builds (one implementation,
/// `column_table`), so a streamed import equals the whole one chunk for
/// chunk; as a [`ColumnSource`] it feeds a streaming world's residency.
///
/// Memory: the samples ([`HeightSamples::heap_bytes`]) and a few bytes;
/// no chunk is kept.
#[derive(Debug)]
pub struct HeightmapTerrain {
    map: Heightmap,
    settings: HeightmapSettings,
    layout: Layout,
}

impl HeightmapTerrain {
    /// Validates `map` under `settings` for a streamed world: as
    /// [`grid_from_heightmap`], but the extent may reach
    /// [`MAX_STREAMING_SIDE_CELLS`] per side. Builds nothing.
    ///
    /// # Errors
    /// As [`grid_from_heightmap`] (no [`ImportError::Cancelled`]).
    pub fn streaming(
        map: Heightmap,
        settings: &HeightmapSettings,
    ) -> Result<HeightmapTerrain, ImportError> {
        let layout = Layout::new(&map, settings, MAX_STREAMING_SIDE_CELLS)?;
        Ok(HeightmapTerrain {
            map,
            settings: settings.clone(),
            layout,
        })
    }

    /// The samples and sidecar.
    pub fn map(&self) -> &Heightmap {
        &self.map
    }

    /// The import settings.
    pub fn settings(&self) -> &HeightmapSettings {
        &self.settings
    }

    /// The terrain's extent `(width, depth)` in cells: columns
    /// `x ∈ [0, width)`, `z ∈ [0, depth)`.
    pub fn extent_cells(&self) -> (i64, i64) {
        (self.layout.width_cells, self.layout.depth_cells)
    }

    /// Chunk columns `(along x, along z)` the terrain covers, from `(0, 0)`.
    pub fn chunk_columns(&self) -> (i32, i32) {
        self.layout.chunk_columns()
    }

    /// Surface height in cells (`y` where the solid surface crosses 0.5
    /// occupancy) of column `(x, z)`, or `None` outside the terrain.
    pub fn surface_height_cells(&self, x: i64, z: i64) -> Option<f64> {
        if !self.layout.is_inside(x, z) {
            return None;
        }
        match self.layout.height(&self.map.samples, x, z) {
            Ok(h) => Some(h),
            Err(e) => {
                log::warn!("surface height of column ({x}, {z}): {e}");
                None
            }
        }
    }

    /// Surface height (cells) of column `(x, z)` from the tiled samples'
    /// overview, or `None` outside the terrain.
    fn overview_height(&self, overview: &SampleOverview, x: i64, z: i64) -> Option<f64> {
        let (u, v) = self.layout.pixel_at(x, z);
        self.layout
            .is_inside(x, z)
            .then(|| self.layout.height_of(overview.bilinear(u, v)))
    }

    /// The surface column `(x_cell, z_cell)` from the heights `height`
    /// gives its 3 × 3 neighbourhood (edges clamped).
    fn column_from(
        &self,
        x_cell: i64,
        z_cell: i64,
        height: impl Fn(i64, i64) -> Option<f64>,
    ) -> Option<crate::terrain::streaming::surface_sampler::SurfaceColumn> {
        let (w, d) = self.extent_cells();
        let mut n = [[0.0; 3]; 3];
        for (dz, row) in n.iter_mut().enumerate() {
            for (dx, h) in row.iter_mut().enumerate() {
                let x = (x_cell + dx as i64 - 1).clamp(0, w - 1);
                let z = (z_cell + dz as i64 - 1).clamp(0, d - 1);
                *h = height(x, z)?;
            }
        }
        Some(column_spec(&self.layout, &self.settings, &n).surface_column())
    }

    /// Highest surface any column can have, cells (the base, the bedrock and
    /// the samples' full relief).
    pub fn top_cells(&self) -> f64 {
        self.settings.base_height_cells as f64 + self.layout.built_relief_cells
    }

    /// The non-empty chunks of `column`, sorted by y; none outside the
    /// terrain. Costs one column (a 34 × 34 table of bilinear samples).
    ///
    /// # Errors
    /// [`TileReadError`] when a tile of tiled samples cannot be read.
    pub fn column_chunks(&self, column: ColumnCoord) -> Result<ColumnChunks, TileReadError> {
        if self.is_outside(column) {
            return Ok(Vec::new());
        }
        Ok(column_table(
            &self.layout,
            &self.settings,
            &self.map.samples,
            column.x,
            column.z,
        )?
        .column_chunks(&heightmap_strata(), column))
    }
}

impl ColumnSource for HeightmapTerrain {
    fn load_column(&self, column: ColumnCoord) -> Result<ColumnChunks, SourceError> {
        self.column_chunks(column).map_err(|e| SourceError::Io {
            column,
            message: e.to_string(),
        })
    }

    fn origin(&self) -> LoadOrigin {
        LoadOrigin::Generated
    }

    fn is_outside(&self, column: ColumnCoord) -> bool {
        let (cx, cz) = self.chunk_columns();
        !(0..cx).contains(&column.x) || !(0..cz).contains(&column.z)
    }

    fn surface_sampler(
        &self,
    ) -> Option<&dyn crate::terrain::streaming::surface_sampler::SurfaceSampler> {
        Some(self)
    }
}

impl crate::terrain::streaming::surface_sampler::SurfaceSampler for HeightmapTerrain {
    fn height_cells(&self, x_cells: f64, z_cells: f64) -> Option<f64> {
        self.surface_height_cells(x_cells.floor() as i64, z_cells.floor() as i64)
    }

    fn column(
        &self,
        x_cell: i64,
        z_cell: i64,
    ) -> Option<crate::terrain::streaming::surface_sampler::SurfaceColumn> {
        self.surface_height_cells(x_cell, z_cell)?;
        self.column_from(x_cell, z_cell, |x, z| {
            self.layout.height(&self.map.samples, x, z).ok()
        })
    }

    fn height_cells_coarse(&self, x_cells: f64, z_cells: f64, spacing_cells: f64) -> Option<f64> {
        match self.layout.overview_for(&self.map.samples, spacing_cells) {
            Some(o) => self.overview_height(o, x_cells.floor() as i64, z_cells.floor() as i64),
            None => self.height_cells(x_cells, z_cells),
        }
    }

    fn column_coarse(
        &self,
        x_cell: i64,
        z_cell: i64,
        spacing_cells: f64,
    ) -> Option<crate::terrain::streaming::surface_sampler::SurfaceColumn> {
        match self.layout.overview_for(&self.map.samples, spacing_cells) {
            Some(o) => {
                self.overview_height(o, x_cell, z_cell)?;
                self.column_from(x_cell, z_cell, |x, z| self.overview_height(o, x, z))
            }
            None => self.column(x_cell, z_cell),
        }
    }

    fn top_cells(&self) -> f64 {
        HeightmapTerrain::top_cells(self).max(self.layout.water_level_cells)
    }

    fn extent_cells(&self) -> [i64; 2] {
        let (w, d) = self.extent_cells();
        [w, d]
    }
}

/// Column specs of chunk column `(cx, cz)`.
fn column_table(
    layout: &Layout,
    settings: &HeightmapSettings,
    samples: &HeightSamples,
    cx: i32,
    cz: i32,
) -> Result<ColumnTable, TileReadError> {
    const N: usize = CHUNK_SIZE_CELLS as usize + 2;
    let x0 = cx as i64 * CHUNK_SIZE_CELLS as i64 - 1;
    let z0 = cz as i64 * CHUNK_SIZE_CELLS as i64 - 1;
    let mut heights = [0.0f64; N * N];
    for (i, h) in heights.iter_mut().enumerate() {
        *h = layout.height(samples, x0 + (i % N) as i64, z0 + (i / N) as i64)?;
    }
    let mut columns = Vec::with_capacity(32 * 32);
    for lz in 0..CHUNK_SIZE_CELLS as usize {
        for lx in 0..CHUNK_SIZE_CELLS as usize {
            let (x, z) = (x0 + 1 + lx as i64, z0 + 1 + lz as i64);
            if x >= layout.width_cells || z >= layout.depth_cells {
                columns.push(None);
                continue;
            }
            let mut n = [[0.0; 3]; 3];
            for (dz, row) in n.iter_mut().enumerate() {
                for (dx, v) in row.iter_mut().enumerate() {
                    *v = heights[(lz + dz) * N + lx + dx];
                }
            }
            columns.push(Some(column_spec(layout, settings, &n)));
        }
    }
    Ok(ColumnTable::new(columns))
}

/// Materials of one imported column from its 3×3 height neighbourhood (cells).
fn column_spec(layout: &Layout, settings: &HeightmapSettings, n: &[[f64; 3]; 3]) -> ColumnSpec {
    let h = n[1][1];
    let slope = slope_3x3(n);
    // Height within the map's relief, 0 at the lowest elevation, 1 at the highest.
    let relative = if layout.relief_cells > 0.0 {
        (h - layout.surface_floor_cells) / layout.relief_cells
    } else {
        0.5
    };
    let (surface, soil, soil_cells) = if h < layout.water_level_cells {
        (Some(Material::MUD), Material::DIRT, 2)
    } else if slope > 1.4 {
        (None, Material::ROCK, 0)
    } else if slope > 1.0 {
        (Some(Material::ROCK), Material::ROCK, 0)
    } else if relative > 0.9 && slope < 0.6 {
        (Some(Material::LIMESTONE), Material::ROCK, 0)
    } else if relative < 0.035 && slope < 0.25 {
        (Some(Material::MUD), Material::DIRT, 2)
    } else if relative < 0.07 && slope < 0.3 {
        (Some(Material::SAND), Material::DIRT, 2)
    } else if slope > 0.75 {
        (Some(Material::DIRT), Material::DIRT, 1)
    } else {
        (Some(Material::GRASS), Material::DIRT, 3)
    };
    // A chosen base material replaces the rock: no strata, and it shows on
    // cliffs and rocky slopes.
    let (surface, soil, strata_floor_y, body) = match settings.base_material {
        Some(base) => {
            let rocky = |m: Option<Material>| match m {
                None | Some(Material::ROCK) => Some(base),
                other => other,
            };
            let soil = if soil == Material::ROCK { base } else { soil };
            (rocky(surface), soil, i32::MAX, base)
        }
        None => (
            surface,
            soil,
            (min_3x3(n).floor() as i32 - STRATA_MARGIN_CELLS).max(settings.base_height_cells),
            Material::ROCK,
        ),
    };
    ColumnSpec {
        height_cells: h,
        ramp_cells: ramp_for_slope(slope),
        floor_y: settings.base_height_cells,
        surface,
        surface_cells: 2 + surface_rows_exposed_by_step(n),
        soil,
        soil_cells,
        strata_floor_y,
        strata_shift_cells: 0.0,
        water_level_cells: layout.water_level_cells,
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::generation::heightmap::HeightmapSidecar;
    use crate::terrain::generation::heightmap::NoDataFill;

    fn unit_settings() -> HeightmapSettings {
        HeightmapSettings {
            cells_per_pixel: 1.0,
            vertical_scale: 1.0,
            base_height_cells: 0,
            sea_level_m: None,
            base_material: None,
            nodata: NoDataFill::Floor,
            raw: Default::default(),
        }
    }

    #[test]
    fn bad_settings_and_sizes_are_rejected_before_allocating() {
        let map = Heightmap {
            width_px: 200,
            height_px: 100,
            samples: vec![0.5; 200 * 100].into(),
            sidecar: None,
        };
        let with = |f: fn(&mut HeightmapSettings)| {
            let mut s = unit_settings();
            f(&mut s);
            grid_from_heightmap(&map, &s).unwrap_err()
        };
        assert!(matches!(
            with(|s| s.cells_per_pixel = f32::NAN),
            ImportError::InvalidSetting {
                name: "cells_per_pixel",
                ..
            }
        ));
        assert!(matches!(
            with(|s| s.cells_per_pixel = -2.0),
            ImportError::InvalidSetting {
                name: "cells_per_pixel",
                ..
            }
        ));
        assert!(matches!(
            with(|s| s.vertical_scale = 0.0),
            ImportError::InvalidSetting {
                name: "vertical_scale",
                ..
            }
        ));
        assert!(matches!(
            with(|s| s.sea_level_m = Some(f64::NAN)),
            ImportError::InvalidSetting {
                name: "sea_level_m",
                ..
            }
        ));
        assert!(matches!(
            with(|s| s.cells_per_pixel = 100.0),
            ImportError::TerrainTooLarge {
                width_cells: 20_000.0,
                depth_cells: 10_000.0,
                ..
            }
        ));
        assert!(matches!(
            with(|s| s.vertical_scale = 1e6),
            ImportError::TerrainTooTall { .. }
        ));
        assert!(matches!(
            with(|s| s.base_height_cells = i32::MAX - 10),
            ImportError::TerrainTooTall { .. }
        ));

        let huge = Heightmap {
            width_px: 100_000,
            height_px: 1,
            samples: Vec::<f64>::new().into(),
            sidecar: None,
        };
        assert!(matches!(
            grid_from_heightmap(&huge, &unit_settings()),
            Err(ImportError::ImageTooLarge {
                width_px: 100_000,
                ..
            })
        ));
        let empty = Heightmap {
            width_px: 0,
            height_px: 5,
            samples: Vec::<f64>::new().into(),
            sidecar: None,
        };
        assert!(matches!(
            grid_from_heightmap(&empty, &unit_settings()),
            Err(ImportError::ZeroSize {
                width_px: 0,
                height_px: 5
            })
        ));
        let short = Heightmap {
            samples: vec![0.0; 3].into(),
            ..map.clone()
        };
        assert!(matches!(
            grid_from_heightmap(&short, &unit_settings()),
            Err(ImportError::InvalidHeightmap(_))
        ));
        let nan = Heightmap {
            samples: vec![f64::NAN; 200 * 100].into(),
            ..map.clone()
        };
        assert!(matches!(
            grid_from_heightmap(&nan, &unit_settings()),
            Err(ImportError::InvalidHeightmap(_))
        ));
    }

    /// Tiny sidecar spacings and huge scales overflow in `f64`, never into a
    /// saturated integer, and the message gives the real size.
    #[test]
    fn overflowing_sizes_are_reported_as_they_are() {
        let map = |spacing_x_m: f64, spacing_y_m: f64| Heightmap {
            width_px: 2,
            height_px: 2,
            samples: vec![0.0, 1.0, 2.0, 3.0].into(),
            sidecar: Some(HeightmapSidecar {
                spacing_x_m,
                spacing_y_m,
                min_elevation_m: 0.0,
                max_elevation_m: 3.0,
                width: None,
                height: None,
            }),
        };
        let settings = HeightmapSettings::default();
        let message = |m: &Heightmap| grid_from_heightmap(m, &settings).unwrap_err().to_string();
        let tall = message(&map(1e-308, 1.0));
        assert!(tall.contains("4 × more than 1.8e308 cells"), "{tall}");
        let deep = message(&map(1e-300, 1e-300));
        assert!(deep.contains("relief of 1.800e301 cells"), "{deep}");
        for m in [tall, deep] {
            assert!(!m.contains(&u64::MAX.to_string()), "{m}");
        }
        let wide = grid_from_heightmap(
            &Heightmap {
                sidecar: None,
                ..map(1.0, 1.0)
            },
            &HeightmapSettings {
                cells_per_pixel: 1e30,
                ..settings.clone()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(wide.contains("2.000e30 × 2.000e30 cells"), "{wide}");
    }
}
