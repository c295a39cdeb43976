//! The default world generator: a pure function of (seed, global cell
//! coordinates) that yields byte-identical grids on every machine (spec §11).
//!
//! # Why it is built this way
//! Terrain is a height field evaluated once per column, never per cell: a
//! chunk column (32×32 columns) first computes a 34×34 table of surface
//! heights (one border column for slopes and exposure), derives one
//! [`ColumnSpec`] per column (surface material, soil, where cliff strata
//! show, water), and only then fills its chunks. A chunk that lies entirely
//! below every column's soil and strata is proven uniform rock, and one
//! entirely above every surface and the water is proven empty, without
//! touching its 32768 cells. That keeps the default 1024-cell world fast.
//!
//! All arithmetic goes through [`crate::terrain::generation::noise`], which uses only IEEE-exact
//! operations, so results never depend on the platform's maths library.
//!
//! # The landscape
//! The world occupies columns `x, z ∈ [0, size_cells)`; everything else is
//! empty, and solid cells start at `y = 0`. Heights (cells, 4 studs each):
//! a lowland base around 50–70 shaped by low-frequency "continent" noise and
//! rolling hills, mountain ranges from ridged noise under a large-scale mask
//! (peaks up to about 180), terraced benches with real cliffs in some regions,
//! river-like valleys carved along the zero lines of a noise field (their
//! floors dip below the water level, so they hold water), and one lake basin
//! at a seed-dependent position well inside the world, which guarantees at
//! least one lake for every seed. Water fills every empty cell below
//! [`WATER_LEVEL_CELLS`], so every basin shares one flat water level.
//!
//! Materials: grass on gentle slopes with dirt beneath, bare layered rock
//! (rock, slate, limestone strata) on cliffs, gravel scree high up, snow on
//! gentle slopes above the snow line, sand on shores, mud on lake beds, and
//! plain rock deep down.

use crate::terrain::generation::column_fill::ColumnSpec;
use crate::terrain::generation::column_fill::ColumnTable;
use crate::terrain::generation::column_fill::STRATA_MARGIN_CELLS;
use crate::terrain::generation::column_fill::Strata;
use crate::terrain::generation::column_fill::fill_chunk_columns;
use crate::terrain::generation::column_fill::min_3x3;
use crate::terrain::generation::column_fill::ramp_for_slope;
use crate::terrain::generation::column_fill::slope_3x3;
use crate::terrain::generation::column_fill::surface_rows_exposed_by_step;

use crate::progress::Progress;
use crate::terrain::generation::noise::{
    fbm, lerp, perlin2, ridged, smoothstep, sub_seed, unit_f64,
};
use crate::terrain::storage::cell::{Cell, Material};
use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::{CHUNK_SIZE_CELLS, CHUNK_VOLUME_CELLS, ChunkCoord};
use crate::terrain::storage::grid::Grid;

/// Global water level, in cells: every empty cell with `y < WATER_LEVEL_CELLS`
/// inside a basin is full water, so lake tops lie flat at `y = 40` cells
/// (160 studs); the highest water cell is `y = WATER_LEVEL_CELLS - 1`.
pub const WATER_LEVEL_CELLS: i32 = 40;

/// Default world seed: chosen because its default-size world shows a lake,
/// snowy ridges, cliffs and rolling hills close to the world centre.
pub const DEFAULT_SEED: u64 = 7;

/// Default world extent along x and z, in cells (4096 studs).
pub const DEFAULT_SIZE_CELLS: u32 = 1024;

/// Largest accepted world extent along x and z, in cells (16 384 studs).
/// A 4096² world holds about 2 GiB of cells and, meshed at full detail, about
/// 16× the default world's 6.8 M triangles, which still fits this machine
/// class (24 GiB); 16384² would need tens of GiB and is refused up front.
pub const MAX_SIZE_CELLS: u32 = 4096;

/// Largest accepted extent of a streaming world ([`GeneratorSettings::validate_streaming`]),
/// in cells: 1 048 576 cells (4 194 km). Streaming worlds build chunks on
/// demand (spec §12), so their cost follows the view, not this size.
pub const MAX_STREAMING_SIZE_CELLS: u32 = 1 << 20;

/// Nominal snow line, in cells. The real line wanders by up to
/// [`SNOW_LINE_JITTER_CELLS`] around it, so no snow surface lies below
/// `SNOW_LINE_CELLS - SNOW_LINE_JITTER_CELLS`.
pub const SNOW_LINE_CELLS: f64 = 122.0;

/// Largest deviation of the local snow line from [`SNOW_LINE_CELLS`], in cells.
pub const SNOW_LINE_JITTER_CELLS: f64 = 8.0;

/// Highest surface the generator produces, in cells (the world stays within
/// `y ∈ [0, 256)`).
pub const MAX_HEIGHT_CELLS: f64 = 240.0;

/// Lowest surface the generator produces, in cells, so every column inside
/// the world has solid ground.
pub const MIN_HEIGHT_CELLS: f64 = 4.0;

/// Settings of the default generator.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratorSettings {
    /// World seed; every value gives a different, valid world.
    pub seed: u64,
    /// World extent along x and z, in cells: the world covers columns
    /// `[0, size_cells)` on both axes. A positive multiple of 32, at most
    /// [`MAX_SIZE_CELLS`]; default [`DEFAULT_SIZE_CELLS`].
    pub size_cells: u32,
}

impl Default for GeneratorSettings {
    fn default() -> Self {
        GeneratorSettings {
            seed: DEFAULT_SEED,
            size_cells: DEFAULT_SIZE_CELLS,
        }
    }
}

/// Bad generator settings.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GenerateError {
    /// `size_cells` is 0.
    #[error("world size is 0 cells; it must be a positive multiple of 32")]
    ZeroSize,
    /// `size_cells` is not a multiple of the 32-cell chunk size.
    #[error("world size {size_cells} cells is not a multiple of the 32-cell chunk size")]
    NotChunkMultiple {
        /// The requested size, in cells.
        size_cells: u32,
    },
    /// `size_cells` exceeds [`MAX_SIZE_CELLS`].
    #[error("world size {size_cells} cells exceeds the limit of {limit} cells")]
    TooLarge {
        /// The requested size, in cells.
        size_cells: u32,
        /// The limit, in cells.
        limit: u32,
    },
    /// A flat world's ground height is outside `[1, 256]` cells.
    #[error("ground height {ground_cells} cells is outside 1..=256")]
    GroundOutOfRange {
        /// The requested height, in cells.
        ground_cells: i32,
    },
    /// Generation was cancelled ([`Progress::cancel`]); no grid was built.
    #[error("world generation was cancelled")]
    Cancelled,
}

impl GeneratorSettings {
    /// Checks the settings for a world built whole ([`generate_world`]); see
    /// [`GenerateError`].
    pub fn validate(&self) -> Result<(), GenerateError> {
        self.validate_up_to(MAX_SIZE_CELLS)
    }

    /// Checks the settings for a streaming world (chunks generated on
    /// demand, up to [`MAX_STREAMING_SIZE_CELLS`]); see [`GenerateError`].
    pub fn validate_streaming(&self) -> Result<(), GenerateError> {
        self.validate_up_to(MAX_STREAMING_SIZE_CELLS)
    }

    fn validate_up_to(&self, limit: u32) -> Result<(), GenerateError> {
        if self.size_cells == 0 {
            return Err(GenerateError::ZeroSize);
        }
        if self.size_cells > limit {
            return Err(GenerateError::TooLarge {
                size_cells: self.size_cells,
                limit,
            });
        }
        if !self.size_cells.is_multiple_of(CHUNK_SIZE_CELLS as u32) {
            return Err(GenerateError::NotChunkMultiple {
                size_cells: self.size_cells,
            });
        }
        Ok(())
    }
}

/// Generates the whole world: every non-empty chunk of the columns
/// `[0, size_cells)²`, built in parallel (rayon) over chunk columns.
///
/// The result equals assembling [`generate_chunk`] over all chunks with
/// [`Grid::from_chunks`]: same seed and size, byte-identical grid and equal
/// [`Grid::content_hash`] on every machine.
///
/// # Errors
/// [`GenerateError`] for a size that is 0, not a multiple of 32 or larger
/// than [`MAX_SIZE_CELLS`].
pub fn generate_world(settings: &GeneratorSettings) -> Result<Grid, GenerateError> {
    generate_world_with_progress(settings, &Progress::new())
}

/// [`generate_world`], counting chunk columns done in `progress` (stage
/// "generating") and stopping early when it is cancelled.
///
/// # Errors
/// As [`generate_world`], and [`GenerateError::Cancelled`].
pub fn generate_world_with_progress(
    settings: &GeneratorSettings,
    progress: &Progress,
) -> Result<Grid, GenerateError> {
    settings.validate()?;
    let terrain = Terrain::new(settings);
    let chunks_per_side = (settings.size_cells / CHUNK_SIZE_CELLS as u32) as i32;
    let strata = Strata::new(settings.seed);
    fill_chunk_columns(
        chunks_per_side,
        chunks_per_side,
        &strata,
        "generating",
        progress,
        |cx, cz| terrain.column_table(cx, cz),
    )
    .map_err(|_| GenerateError::Cancelled)
}

/// A flat world for sculpting from scratch: columns `[0, size_cells)²`,
/// grass over 3 rows of dirt over rock, with the surface at
/// `ground_cells` (the top row full; the Surface Nets surface sits at
/// `ground_cells` exactly).
///
/// # Errors
/// [`GenerateError`] for a size that is 0, not a multiple of 32 or larger
/// than [`MAX_SIZE_CELLS`], or a ground height outside `[1, 256]` cells
/// ([`GenerateError::GroundOutOfRange`]).
pub fn flat_world(size_cells: u32, ground_cells: i32) -> Result<Grid, GenerateError> {
    GeneratorSettings {
        seed: 0,
        size_cells,
    }
    .validate()?;
    if !(1..=256).contains(&ground_cells) {
        return Err(GenerateError::GroundOutOfRange { ground_cells });
    }
    let chunk_column: Vec<(i32, ChunkCells)> = (0..ground_cells.div_euclid(CHUNK_SIZE_CELLS) + 1)
        .map(|cy| {
            let y0 = cy * CHUNK_SIZE_CELLS;
            let row = |y: i32| -> Cell {
                if y >= ground_cells {
                    Cell::EMPTY
                } else if y == ground_cells - 1 {
                    Cell::full(Material::GRASS)
                } else if y >= ground_cells - 4 {
                    Cell::full(Material::DIRT)
                } else {
                    Cell::full(Material::ROCK)
                }
            };
            let cells: Vec<Cell> = (0..CHUNK_VOLUME_CELLS)
                .map(|i| row(y0 + ((i >> 5) & 31) as i32))
                .collect();
            (cy, ChunkCells::from_dense(cells))
        })
        .filter(|(_, cells)| !cells.is_all_empty())
        .collect();
    let per_side = (size_cells / CHUNK_SIZE_CELLS as u32) as i32;
    let chunks = (0..per_side).flat_map(|cz| {
        let chunk_column = &chunk_column;
        (0..per_side).flat_map(move |cx| {
            chunk_column
                .iter()
                .map(move |(cy, cells)| (ChunkCoord::new(cx, *cy, cz), cells.clone()))
        })
    });
    Ok(Grid::from_chunks(chunks))
}

/// Generates the cells of one chunk: a pure function of the settings and the
/// chunk coordinate. Chunks outside the world (any coordinate outside the
/// columns `[0, size_cells)²`, or below `y = 0` or above the terrain) are
/// uniform empty.
///
/// Settings are not validated here (no error path): a size that is not a
/// multiple of 32 still gives a well-defined world covering `[0, size_cells)`,
/// and size 0 an empty one.
pub fn generate_chunk(settings: &GeneratorSettings, coord: ChunkCoord) -> ChunkCells {
    let size = settings.size_cells.min(MAX_STREAMING_SIZE_CELLS) as i64;
    let min = coord.min_cell().0;
    let outside = |lo: i32| (lo as i64 + CHUNK_SIZE_CELLS as i64) <= 0 || lo as i64 >= size;
    if outside(min.x) || outside(min.z) {
        return ChunkCells::Uniform(Cell::EMPTY);
    }
    let terrain = Terrain::new(settings);
    let table = terrain.column_table(coord.0.x, coord.0.z);
    table.fill_chunk(&Strata::new(settings.seed), coord.0.y)
}

/// Generates every non-empty chunk of one chunk column, sorted by y, at a
/// cost of one column (one 34×34 table of heights), not of the world: the
/// streaming world's loader (spec §12). Equal, chunk for chunk, to
/// [`generate_chunk`] over the column and to [`generate_world`]'s chunks.
#[derive(Clone, Debug)]
pub struct ColumnGenerator {
    settings: GeneratorSettings,
    terrain: Terrain,
    strata: Strata,
}

impl ColumnGenerator {
    /// A generator for `settings` (validated by the caller; see
    /// [`GeneratorSettings::validate_streaming`]).
    pub fn new(settings: &GeneratorSettings) -> ColumnGenerator {
        ColumnGenerator {
            settings: settings.clone(),
            terrain: Terrain::new(settings),
            strata: Strata::new(settings.seed),
        }
    }

    /// The settings it generates from.
    pub fn settings(&self) -> &GeneratorSettings {
        &self.settings
    }

    /// True when the column lies outside the world's footprint (all empty).
    pub fn is_outside(&self, column: crate::terrain::storage::coords::ColumnCoord) -> bool {
        let size = self.terrain.size;
        let outside = |c: i32| {
            let lo = c as i64 * CHUNK_SIZE_CELLS as i64;
            lo + CHUNK_SIZE_CELLS as i64 <= 0 || lo >= size
        };
        outside(column.x) || outside(column.z)
    }

    /// The non-empty chunks of `column`, sorted by y.
    pub fn column_chunks(
        &self,
        column: crate::terrain::storage::coords::ColumnCoord,
    ) -> Vec<(ChunkCoord, ChunkCells)> {
        if self.is_outside(column) {
            return Vec::new();
        }
        self.terrain
            .column_table(column.x, column.z)
            .column_chunks(&self.strata, column)
    }
}

impl crate::terrain::streaming::surface_sampler::SurfaceSampler for ColumnGenerator {
    fn height_cells(&self, x_cells: f64, z_cells: f64) -> Option<f64> {
        let size = self.terrain.size as f64;
        let inside = |v: f64| (0.0..size).contains(&v);
        (inside(x_cells) && inside(z_cells)).then(|| self.terrain.height(x_cells, z_cells))
    }

    fn column(
        &self,
        x_cell: i64,
        z_cell: i64,
    ) -> Option<crate::terrain::streaming::surface_sampler::SurfaceColumn> {
        let inside = |v: i64| (0..self.terrain.size).contains(&v);
        if !inside(x_cell) || !inside(z_cell) {
            return None;
        }
        let (x, z) = (x_cell as f64 + 0.5, z_cell as f64 + 0.5);
        // The material needs the slope (the 4 edge neighbours); the corners,
        // which only move the strata and soil depths, repeat the centre.
        let h = self.terrain.height(x, z);
        let mut n = [[h; 3]; 3];
        n[1][0] = self.terrain.height(x - 1.0, z);
        n[1][2] = self.terrain.height(x + 1.0, z);
        n[0][1] = self.terrain.height(x, z - 1.0);
        n[2][1] = self.terrain.height(x, z + 1.0);
        Some(self.terrain.column_spec(x, z, &n).surface_column())
    }

    fn top_cells(&self) -> f64 {
        MAX_HEIGHT_CELLS.max(WATER_LEVEL_CELLS as f64)
    }

    fn extent_cells(&self) -> [i64; 2] {
        [self.terrain.size; 2]
    }
}

/// The smooth surface height of column `(x, z)` in cells (the solid surface
/// crosses 0.5 occupancy near this `y`), or `None` outside the world.
/// Below [`WATER_LEVEL_CELLS`] the column is covered by water.
pub fn surface_height_cells(settings: &GeneratorSettings, x: i32, z: i32) -> Option<f64> {
    let size = settings.size_cells.min(MAX_STREAMING_SIZE_CELLS) as i64;
    let inside = |v: i32| v >= 0 && (v as i64) < size;
    (inside(x) && inside(z)).then(|| Terrain::new(settings).height(x as f64 + 0.5, z as f64 + 0.5))
}

/// Centre of the guaranteed lake, in cells `(x, z)` (fractional), for
/// placing cameras or tests. Its water lies at [`WATER_LEVEL_CELLS`].
pub fn lake_centre_cells(settings: &GeneratorSettings) -> (f64, f64) {
    let t = Terrain::new(settings);
    (t.lake_x, t.lake_z)
}

// ---------------------------------------------------------------------------
// The default terrain.
// ---------------------------------------------------------------------------

/// Smooth minimum of `a` and `b` with blend width `k` (cells): equals
/// `min(a, b)` when they differ by more than `k`, rounds the crease otherwise.
#[inline]
fn smooth_min(a: f64, b: f64, k: f64) -> f64 {
    let h = (k - (a - b).abs()).max(0.0) / k;
    a.min(b) - h * h * k * 0.25
}

/// Seeds and lake placement of one world.
#[derive(Clone, Debug)]
struct Terrain {
    size: i64,
    warp_x: u64,
    warp_z: u64,
    continent: u64,
    mountain_mask: u64,
    ridges: u64,
    hills: u64,
    detail: u64,
    terrace_mask: u64,
    rivers: u64,
    river_mask: u64,
    lake_warp: u64,
    material_jitter: u64,
    snow_jitter: u64,
    strata_tilt: u64,
    lake_x: f64,
    lake_z: f64,
    lake_radius: f64,
}

impl Terrain {
    fn new(settings: &GeneratorSettings) -> Terrain {
        let seed = settings.seed;
        let size = settings.size_cells.min(MAX_STREAMING_SIZE_CELLS) as f64;
        let s = |layer| sub_seed(seed, layer);
        let lake_u = unit_f64(s(100));
        let lake_v = unit_f64(s(101));
        Terrain {
            size: size as i64,
            warp_x: s(1),
            warp_z: s(2),
            continent: s(3),
            mountain_mask: s(4),
            ridges: s(5),
            hills: s(6),
            detail: s(7),
            terrace_mask: s(8),
            rivers: s(9),
            river_mask: s(10),
            lake_warp: s(11),
            material_jitter: s(12),
            snow_jitter: s(13),
            strata_tilt: s(14),
            // Well inside the world: the centre lies in the middle 40 %, and the
            // basin (at most ~1.3 radii with warping) stays clear of the edges.
            lake_x: size * (0.3 + 0.4 * lake_u),
            lake_z: size * (0.3 + 0.4 * lake_v),
            lake_radius: (size * 0.075).clamp(6.0, 110.0),
        }
    }

    /// Surface height in cells at a point `(x, z)` in cells (column centres
    /// are at `i + 0.5`). Defined everywhere, also outside the world.
    fn height(&self, x: f64, z: f64) -> f64 {
        let water = WATER_LEVEL_CELLS as f64;
        // Domain warp: bends every large feature so nothing looks grid-aligned.
        let wx = x + 70.0 * fbm(self.warp_x, x / 480.0, z / 480.0, 3);
        let wz = z + 70.0 * fbm(self.warp_z, x / 480.0, z / 480.0, 3);

        let continent = fbm(self.continent, wx / 800.0, wz / 800.0, 3);
        let hills = fbm(self.hills, wx / 140.0, wz / 140.0, 4);
        let detail = fbm(self.detail, x / 40.0, z / 40.0, 3);
        let mask = smoothstep(
            -0.16,
            0.3,
            fbm(self.mountain_mask, wx / 420.0, wz / 420.0, 3) + 0.3 * continent,
        );
        let ridge = ridged(self.ridges, wx / 240.0, wz / 240.0, 5);

        let lowland = 60.0 + 10.0 * continent + 22.0 * hills * (1.0 - 0.4 * mask) + 2.5 * detail;
        let mut h = lowland + mask * (10.0 + 125.0 * ridge * ridge);

        // Terraces: flat benches and steep risers (real cliffs, mesas) in some regions.
        let terrace = smoothstep(0.15, 0.45, fbm(self.terrace_mask, x / 360.0, z / 360.0, 2));
        if terrace > 0.0 {
            let step = 16.0;
            let t = h / step;
            let f = t.floor();
            let fr = t - f;
            let stepped = (f + 0.2 * fr + 0.8 * smoothstep(0.68, 0.92, fr)) * step;
            h = lerp(h, stepped, 0.95 * terrace);
        }

        // River-like valleys along the zero lines of a warped noise field.
        // Where the river mask fades the valley narrows and ends (a source)
        // instead of turning into a shallow trough.
        let river_strength = smoothstep(-0.2, 0.15, fbm(self.river_mask, x / 900.0, z / 900.0, 2));
        if river_strength > 0.0 {
            let v =
                fbm(self.rivers, wx / 600.0, wz / 600.0, 3).abs() + 0.3 * (1.0 - river_strength);
            // Valley profile: the river floor (below the water level) at the
            // zero line, rising smoothly to the untouched land; steep only
            // where the land is high (canyons through mountains).
            let floor = water - 4.0;
            let keep = smoothstep(0.005, 0.2, v);
            if h > floor {
                h = floor + (h - floor) * keep;
            }
        }

        // The guaranteed lake: lower the land around it, then carve a bowl.
        let r = self.lake_radius;
        let lw = r * 1.4;
        let dx = x - self.lake_x + 0.3 * r * perlin2(self.lake_warp, x / lw, z / lw);
        let dz = z - self.lake_z + 0.3 * r * perlin2(sub_seed(self.lake_warp, 1), x / lw, z / lw);
        let t = (dx * dx + dz * dz).sqrt() / r;
        if t < 2.4 {
            // A conical valley around the basin keeps mountains from walling it in.
            let around = smoothstep(1.1, 2.4, t);
            let shore_land = water + 2.0 + 12.0 * t;
            // Compress the relief above the cone rather than clipping it, so
            // the hills keep their texture.
            let lowered = if h > shore_land {
                shore_land + (h - shore_land) * 0.3
            } else {
                h
            };
            h = lerp(lowered, h, around);
            // The bowl is below the water level for t < 0.9 and fades out by
            // t = 2, so it never clips distant land.
            let bowl = water - 11.0 + 13.0 * t * t;
            h = lerp(smooth_min(h, bowl, 4.0), h, smoothstep(1.3, 2.0, t));
        }
        h.clamp(MIN_HEIGHT_CELLS, MAX_HEIGHT_CELLS)
    }

    /// The column table of chunk column `(cx, cz)`.
    fn column_table(&self, cx: i32, cz: i32) -> ColumnTable {
        const N: usize = CHUNK_SIZE_CELLS as usize + 2;
        let x0 = cx as i64 * CHUNK_SIZE_CELLS as i64 - 1;
        let z0 = cz as i64 * CHUNK_SIZE_CELLS as i64 - 1;
        let inside = |v: i64| v >= 0 && v < self.size;
        let mut heights = vec![0.0f64; N * N];
        for (i, h) in heights.iter_mut().enumerate() {
            let x = x0 + (i % N) as i64;
            let z = z0 + (i / N) as i64;
            *h = self.height(x as f64 + 0.5, z as f64 + 0.5);
        }
        let mut columns = Vec::with_capacity(32 * 32);
        for lz in 0..CHUNK_SIZE_CELLS as usize {
            for lx in 0..CHUNK_SIZE_CELLS as usize {
                let x = x0 + 1 + lx as i64;
                let z = z0 + 1 + lz as i64;
                if !inside(x) || !inside(z) {
                    columns.push(None);
                    continue;
                }
                let mut n = [[0.0; 3]; 3];
                for (dz, row) in n.iter_mut().enumerate() {
                    for (dx, v) in row.iter_mut().enumerate() {
                        *v = heights[(lz + dz) * N + lx + dx];
                    }
                }
                columns.push(Some(self.column_spec(x as f64 + 0.5, z as f64 + 0.5, &n)));
            }
        }
        ColumnTable::new(columns)
    }

    /// Materials of the column at `(x, z)` (cells) from its 3×3 height neighbourhood.
    fn column_spec(&self, x: f64, z: f64, n: &[[f64; 3]; 3]) -> ColumnSpec {
        let water = WATER_LEVEL_CELLS as f64;
        let h = n[1][1];
        let slope = slope_3x3(n);
        let jitter = perlin2(self.material_jitter, x / 23.0, z / 23.0);
        let snow_line = SNOW_LINE_CELLS
            + SNOW_LINE_JITTER_CELLS
                * perlin2(self.snow_jitter, x / 61.0, z / 61.0).clamp(-1.0, 1.0);
        let cliff_slope = 1.0 + 0.2 * jitter;

        // (surface, surface rows, soil, soil rows)
        let (surface, surface_cells, soil, soil_cells) = if h < water {
            if h < water - 1.5 {
                (Some(Material::MUD), 2, Material::DIRT, 2)
            } else {
                (Some(Material::SAND), 2, Material::SAND, 2)
            }
        } else if slope > cliff_slope {
            (None, 2, Material::ROCK, 0)
        } else if h < water + 1.6 + 0.8 * jitter && slope < 0.5 {
            (Some(Material::SAND), 2, Material::SAND, 2)
        } else if h > snow_line && slope < 0.9 {
            (Some(Material::SNOW), 2, Material::ROCK, 0)
        } else if h > 100.0 + 10.0 * jitter && slope > 0.55 {
            (Some(Material::GRAVEL), 2, Material::ROCK, 0)
        } else if slope > 0.8 + 0.1 * jitter {
            (Some(Material::DIRT), 2, Material::DIRT, 1)
        } else if h > snow_line - 14.0 && slope > 0.35 {
            (Some(Material::ROCK), 2, Material::ROCK, 0)
        } else {
            (Some(Material::GRASS), 2, Material::DIRT, 3)
        };
        let tilt = 5.0 * perlin2(self.strata_tilt, x / 260.0, z / 260.0);
        ColumnSpec {
            height_cells: h,
            ramp_cells: ramp_for_slope(slope),
            floor_y: 0,
            surface,
            surface_cells: surface_cells + surface_rows_exposed_by_step(n),
            soil,
            soil_cells,
            strata_floor_y: min_3x3(n).floor() as i32 - STRATA_MARGIN_CELLS,
            strata_shift_cells: tilt,
            water_level_cells: water,
            body: Material::ROCK,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::generation::column_fill::MAX_RAMP_CELLS;
    use crate::terrain::generation::column_fill::fractional_occupancy;
    use crate::terrain::generation::column_fill::ramp_occupancy;
    use glam::IVec3;

    fn small(seed: u64) -> GeneratorSettings {
        GeneratorSettings {
            seed,
            size_cells: 256,
        }
    }

    #[test]
    fn bad_settings_are_errors() {
        let bad = |size_cells| {
            GeneratorSettings {
                seed: 3,
                size_cells,
            }
            .validate()
        };
        assert_eq!(bad(0), Err(GenerateError::ZeroSize));
        assert_eq!(
            bad(100),
            Err(GenerateError::NotChunkMultiple { size_cells: 100 })
        );
        assert_eq!(
            bad(4096 + 32),
            Err(GenerateError::TooLarge {
                size_cells: 4128,
                limit: 4096
            })
        );
        assert!(bad(4096).is_ok());
        let err = generate_world(&GeneratorSettings {
            seed: 0,
            size_cells: 33,
        })
        .unwrap_err();
        assert!(err.to_string().contains("multiple of the 32-cell"), "{err}");
    }

    #[test]
    fn fractional_occupancy_rounds() {
        assert_eq!(fractional_occupancy(10.25, 10), 64);
        assert_eq!(fractional_occupancy(10.25, 9), 255);
        assert_eq!(fractional_occupancy(10.25, 11), 0);
    }

    #[test]
    fn uniform_shortcut_matches_dense_fill() {
        let settings = small(5);
        let terrain = Terrain::new(&settings);
        let strata = Strata::new(settings.seed);
        for (cx, cz) in [(0, 0), (3, 4), (7, 7), (2, 6)] {
            let table = terrain.column_table(cx, cz);
            for cy in -1..8 {
                let fast = table.fill_chunk(&strata, cy);
                let slow = table.fill_dense(&strata, cy);
                assert_eq!(
                    fast.content_hash(),
                    slow.content_hash(),
                    "chunk {cx} {cy} {cz}"
                );
            }
        }
    }

    #[test]
    fn flat_world_has_grass_over_dirt_over_rock_at_the_ground_height() {
        let grid = flat_world(64, 40).unwrap();
        assert_eq!(
            grid.bounds_cells().unwrap(),
            crate::terrain::storage::coords::CellBox::new(IVec3::ZERO, IVec3::new(64, 64, 64)),
            "chunk bounds"
        );
        let at = |x, y, z| {
            grid.cell(crate::terrain::storage::coords::CellCoord(IVec3::new(
                x, y, z,
            )))
        };
        for (x, z) in [(0, 0), (63, 63), (31, 40)] {
            assert_eq!(at(x, 40, z), Cell::EMPTY);
            assert_eq!(at(x, 39, z), Cell::full(Material::GRASS));
            assert_eq!(at(x, 36, z), Cell::full(Material::DIRT));
            assert_eq!(at(x, 35, z), Cell::full(Material::ROCK));
            assert_eq!(at(x, 0, z), Cell::full(Material::ROCK));
        }
        // Below the top chunk row, chunks are stored as one cell.
        assert_eq!(grid.uniform_chunk_count(), 4);
        assert!(matches!(
            flat_world(64, 0),
            Err(GenerateError::GroundOutOfRange { .. })
        ));
        assert!(matches!(
            flat_world(50, 10),
            Err(GenerateError::NotChunkMultiple { .. })
        ));
    }

    #[test]
    fn column_bounds_are_exact_for_cliffs_and_water() {
        let strata = Strata::new(1);
        let spec = ColumnSpec {
            height_cells: 30.4,
            ramp_cells: 1.0,
            floor_y: 0,
            surface: Some(Material::MUD),
            surface_cells: 2,
            soil: Material::DIRT,
            soil_cells: 2,
            strata_floor_y: 28,
            strata_shift_cells: 0.0,
            water_level_cells: 40.0,
            body: Material::ROCK,
        };
        assert_eq!(spec.cell(&strata, 30), Cell::new(Material::MUD, 102));
        assert_eq!(spec.cell(&strata, 29), Cell::full(Material::MUD));
        assert_eq!(spec.cell(&strata, 28), Cell::full(Material::DIRT));
        assert_eq!(spec.cell(&strata, 27), Cell::full(Material::DIRT));
        assert_eq!(spec.cell(&strata, 26), Cell::full(Material::ROCK));
        assert_eq!(spec.cell(&strata, 31), Cell::full(Material::WATER));
        assert_eq!(spec.cell(&strata, 39), Cell::full(Material::WATER));
        assert_eq!(spec.cell(&strata, 40), Cell::EMPTY);
        assert_eq!(spec.cell(&strata, -1), Cell::EMPTY);
        assert_eq!(spec.rock_below_y(), 27);
        assert_eq!(spec.empty_from_y(), 40);
    }

    #[test]
    fn steep_columns_get_a_distance_ramp_crossing_at_the_surface() {
        let strata = Strata::new(1);
        // Slope 3: the fractional band is sqrt(10) ≈ 3.16 cells tall.
        let spec = ColumnSpec {
            height_cells: 20.25,
            ramp_cells: ramp_for_slope(3.0),
            floor_y: 0,
            surface: None,
            surface_cells: 2,
            soil: Material::ROCK,
            soil_cells: 0,
            strata_floor_y: 0,
            strata_shift_cells: 0.0,
            water_level_cells: f64::NEG_INFINITY,
            body: Material::ROCK,
        };
        let occ: Vec<u8> = (17..=23)
            .map(|y| spec.cell(&strata, y).occupancy())
            .collect();
        // round(clamp(0.5 + (20.25 - (y + 0.5)) / 3.1623, 0, 1) * 255) for y = 17..=23.
        assert_eq!(occ, vec![255, 255, 188, 107, 27, 0, 0]);
        // The linear 0.5 crossing between rows 19 (188) and 20 (107) is at y = 20.25 (±1/255).
        let t = (127.5 - 188.0) / (107.0 - 188.0);
        assert!((19.5 + t - 20.25f64).abs() < 0.01);
        assert_eq!(spec.rock_below_y(), 0, "strata from row 0 up");
        assert_eq!(spec.empty_from_y(), 22);
        assert_eq!(ramp_for_slope(30.0), MAX_RAMP_CELLS);
        // Flat ground keeps exactly one fractional cell.
        assert_eq!(
            ramp_occupancy(10.25, 1.0, 10),
            fractional_occupancy(10.25, 10)
        );
    }
}
