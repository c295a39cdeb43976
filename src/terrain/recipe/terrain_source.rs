//! The cells of a recipe world, built from its cooked [`Plan`] one chunk
//! column at a time (spec §12: any column on demand, at the cost of one
//! column), plus the 3D detail no height field can hold: caves and
//! overhangs from 3D noise.
//!
//! A column's surface is the plan's height, bilinear between samples; its
//! material, soil and water come from the nearest sample. Columns fill
//! like the default generator's ([`ColumnSpec`]), so slopes, strata and
//! water read the same way.

use std::sync::Arc;

use glam::IVec3;
use rayon::prelude::*;

use crate::terrain::generation::column_fill::{
    ColumnSpec, ColumnTable, STRATA_MARGIN_CELLS, Strata, fractional_occupancy, min_3x3,
    ramp_for_slope, slope_3x3, surface_rows_exposed_by_step,
};
use crate::terrain::generation::generate::{GenerateError, GeneratorSettings};
use crate::terrain::generation::noise::{perlin3, smoothstep, sub_seed, tan_deg};
use crate::terrain::recipe::cook::{CookReport, cook_plan_with_previews};
use crate::terrain::recipe::plan::{DRY, Plan, RIVER};
use crate::terrain::recipe::recipe_materials::RecipeMaterials;
use crate::terrain::recipe::stages::{CavesStage, Recipe};
use crate::terrain::storage::cell::{Cell, Material};
use crate::terrain::storage::coords::{CHUNK_SIZE_CELLS, ChunkCoord, ColumnCoord, local_index};
use crate::terrain::storage::grid::Grid;
use crate::terrain::streaming::column_source::{
    ColumnChunks, ColumnSource, LoadOrigin, SourceError,
};

use crate::progress::Progress;
use crate::terrain::streaming::surface_sampler::{SurfaceColumn, SurfaceSampler};

/// Columns of a chunk column's height table (one border column each side).
const TABLE: usize = CHUNK_SIZE_CELLS as usize + 2;

/// Stride of the cave noise lattice, cells: noise is evaluated every
/// `CAVE_STRIDE` cells and interpolated between (64× fewer evaluations).
const CAVE_STRIDE: i32 = 4;

/// Lattice points per chunk axis (both ends included).
const CAVE_LATTICE: usize = (CHUNK_SIZE_CELLS / CAVE_STRIDE) as usize + 1;

/// A cooked recipe world: the plan and what building its cells needs.
/// Cheap to share (`Arc` plan); answers any chunk column.
#[derive(Clone, Debug)]
pub struct RecipeTerrain {
    plan: Arc<Plan>,
    size_cells: u32,
    strata: Strata,
    caves: Option<CavesStage>,
    cave_seed: u64,
}

impl RecipeTerrain {
    /// Cooks `recipe` for `settings` (seed and size; up to the streaming
    /// limit), its names meaning what `materials` says, and returns the
    /// terrain and its report.
    ///
    /// # Errors
    /// As [`crate::terrain::recipe::cook::cook_plan`].
    pub fn cook(
        recipe: &Recipe,
        materials: &RecipeMaterials,
        settings: &GeneratorSettings,
        progress: &Progress,
    ) -> Result<(RecipeTerrain, CookReport), GenerateError> {
        RecipeTerrain::cook_with_previews(recipe, materials, settings, progress, None)
    }

    /// [`RecipeTerrain::cook`], drawing the plan after each stage at
    /// `preview_px` pixels a side when given.
    ///
    /// # Errors
    /// As [`crate::terrain::recipe::cook::cook_plan`].
    pub fn cook_with_previews(
        recipe: &Recipe,
        materials: &RecipeMaterials,
        settings: &GeneratorSettings,
        progress: &Progress,
        preview_px: Option<u32>,
    ) -> Result<(RecipeTerrain, CookReport), GenerateError> {
        let (plan, report) =
            cook_plan_with_previews(recipe, materials, settings, progress, preview_px)?;
        Ok((RecipeTerrain::from_plan(plan, recipe, settings), report))
    }

    /// The terrain of `plan`, cooked earlier from `recipe` for `settings`
    /// (kept in a streaming world file): nothing is cooked. The caller
    /// vouches that `plan` is what cooking would give (a stored plan is
    /// keyed by the recipe, seed, size and cooking code).
    pub fn from_plan(plan: Plan, recipe: &Recipe, settings: &GeneratorSettings) -> RecipeTerrain {
        RecipeTerrain {
            plan: Arc::new(plan),
            size_cells: settings.size_cells,
            strata: Strata::new(settings.seed),
            caves: recipe.caves().cloned(),
            cave_seed: sub_seed(settings.seed, 0xCA7E),
        }
    }

    /// The cooked plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// This terrain with `from` made `to` in every surface and soil sample
    /// (a material removed with a replacement), nothing cooked again.
    /// `None` when no sample names `from`.
    pub fn with_material_replaced(&self, from: Material, to: Material) -> Option<RecipeTerrain> {
        let plan = &self.plan;
        if !plan.material.contains(&from.0) && !plan.soil.contains(&from.0) {
            return None;
        }
        let swap = |ids: &[u8]| -> Vec<u8> {
            ids.iter()
                .map(|&id| if id == from.0 { to.0 } else { id })
                .collect()
        };
        let mut replaced = (**plan).clone();
        replaced.material = swap(&plan.material);
        replaced.soil = swap(&plan.soil);
        Some(RecipeTerrain {
            plan: Arc::new(replaced),
            ..self.clone()
        })
    }

    /// World extent along x and z, cells.
    pub fn size_cells(&self) -> u32 {
        self.size_cells
    }

    /// Chunk columns along each side.
    pub fn chunk_columns(&self) -> i32 {
        (self.size_cells / CHUNK_SIZE_CELLS as u32) as i32
    }

    /// Builds every chunk column in parallel (rayon), counting one progress
    /// unit per column (stage "building cells"). Returns the grid and the
    /// number of overhang cells (solid cells over an empty one).
    ///
    /// # Errors
    /// [`GenerateError::TooLarge`] for a world larger than a grid built
    /// whole may be ([`crate::terrain::generation::generate::MAX_SIZE_CELLS`]; stream it
    /// instead); [`GenerateError::Cancelled`] when `progress` was cancelled.
    pub fn build_grid(&self, progress: &Progress) -> Result<(Grid, u64), GenerateError> {
        GeneratorSettings {
            seed: 0,
            size_cells: self.size_cells,
        }
        .validate()?;
        let n = self.chunk_columns();
        let columns: Vec<ColumnCoord> = (0..n)
            .flat_map(|cz| (0..n).map(move |cx| ColumnCoord::new(cx, cz)))
            .collect();
        progress.begin_stage("building cells", columns.len() as u64);
        let built: Vec<(ColumnChunks, u64)> = columns
            .par_iter()
            .map(|&column| {
                if progress.is_cancelled() {
                    return (Vec::new(), 0);
                }
                let chunks = self.column_chunks(column);
                let overhangs = count_overhangs(&chunks);
                progress.advance(1);
                (chunks, overhangs)
            })
            .collect();
        progress.check().map_err(|_| GenerateError::Cancelled)?;
        let overhangs = built.iter().map(|(_, o)| o).sum();
        let grid = Grid::from_chunks(built.into_iter().flat_map(|(chunks, _)| chunks));
        Ok((grid, overhangs))
    }

    /// True when `column` lies outside the world.
    pub fn is_outside(&self, column: ColumnCoord) -> bool {
        let n = self.chunk_columns();
        !(0..n).contains(&column.x) || !(0..n).contains(&column.z)
    }

    /// Surface height of column `(x, z)`, cells.
    fn height(&self, x: i64, z: i64) -> f64 {
        self.plan.height_at(x as f64 + 0.5, z as f64 + 0.5)
    }

    /// The spec of column `(x, z)` from its 3×3 neighbourhood of heights.
    fn column_spec(&self, x: i64, z: i64, n: &[[f64; 3]; 3]) -> ColumnSpec {
        let (u, v) = self.plan.sample_coords(x as f64 + 0.5, z as f64 + 0.5);
        let k = self.plan.nearest(u, v);
        let slope = slope_3x3(n);
        let surface = self.plan.surface_material(k, Material::GRASS);
        let soil = Some(Material(self.plan.soil[k]))
            .filter(|m| m.is_solid())
            .unwrap_or(Material::DIRT);
        let water = self.plan.water_cells[k];
        ColumnSpec {
            height_cells: n[1][1],
            ramp_cells: ramp_for_slope(slope),
            floor_y: 0,
            surface,
            surface_cells: 2 + surface_rows_exposed_by_step(n),
            soil,
            soil_cells: if surface.is_none() { 0 } else { 3 },
            strata_floor_y: (min_3x3(n).floor() as i32 - STRATA_MARGIN_CELLS).max(0),
            strata_shift_cells: 0.0,
            water_level_cells: if water.is_finite() {
                f64::from(water)
            } else {
                f64::NEG_INFINITY
            },
            body: Material::ROCK,
        }
    }

    /// The heights of chunk column `column` and its border, `TABLE`² (x fastest).
    fn height_table(&self, column: ColumnCoord) -> Vec<f64> {
        let x0 = i64::from(column.x) * i64::from(CHUNK_SIZE_CELLS) - 1;
        let z0 = i64::from(column.z) * i64::from(CHUNK_SIZE_CELLS) - 1;
        (0..TABLE * TABLE)
            .map(|i| self.height(x0 + (i % TABLE) as i64, z0 + (i / TABLE) as i64))
            .collect()
    }

    /// The non-empty chunks of `column`, sorted by y; none outside the world.
    pub fn column_chunks(&self, column: ColumnCoord) -> ColumnChunks {
        if self.is_outside(column) {
            return Vec::new();
        }
        let heights = self.height_table(column);
        let x0 = i64::from(column.x) * i64::from(CHUNK_SIZE_CELLS);
        let z0 = i64::from(column.z) * i64::from(CHUNK_SIZE_CELLS);
        let mut specs = Vec::with_capacity(32 * 32);
        for lz in 0..CHUNK_SIZE_CELLS as usize {
            for lx in 0..CHUNK_SIZE_CELLS as usize {
                let n = neighbourhood(&heights, lx, lz);
                specs.push(Some(self.column_spec(x0 + lx as i64, z0 + lz as i64, &n)));
            }
        }
        let mut chunks = ColumnTable::new(specs.clone()).column_chunks(&self.strata, column);
        if let Some(caves) = &self.caves {
            let banks = if caves.bank_undercut_cells > 0.0 {
                self.bank_water(x0, z0)
            } else {
                vec![None; specs.len()]
            };
            for (coord, cells) in &mut chunks {
                self.carve_caves(caves, *coord, &heights, &specs, &banks, cells);
            }
        }
        chunks
    }

    /// For each column of the chunk column at `(x0, z0)` (x fastest): the
    /// water level of a river within 2 columns when the column itself is
    /// dry (a bank the caves stage may undercut), else `None`.
    fn bank_water(&self, x0: i64, z0: i64) -> Vec<Option<f64>> {
        let plan = &*self.plan;
        let sample = |x: i64, z: i64| {
            let (u, v) = plan.sample_coords(x as f64 + 0.5, z as f64 + 0.5);
            plan.nearest(u, v)
        };
        (0..CHUNK_SIZE_CELLS as i64 * CHUNK_SIZE_CELLS as i64)
            .map(|i| {
                let (x, z) = (x0 + i % 32, z0 + i / 32);
                if plan.water_body[sample(x, z)] != DRY {
                    return None;
                }
                let mut level: Option<f64> = None;
                for dz in -2..=2 {
                    for dx in -2..=2 {
                        let k = sample(x + dx, z + dz);
                        if plan.water_body[k] == RIVER {
                            let w = f64::from(plan.water_cells[k]);
                            level = Some(level.map_or(w, |l| l.max(w)));
                        }
                    }
                }
                level
            })
            .collect()
    }

    /// Carves tunnels, face undercuts and bank undercuts (`banks`: the
    /// river level beside each column, [`RecipeTerrain::bank_water`]) into
    /// one chunk (see [`CavesStage`]).
    #[allow(clippy::too_many_arguments)]
    fn carve_caves(
        &self,
        caves: &CavesStage,
        coord: ChunkCoord,
        heights: &[f64],
        specs: &[Option<ColumnSpec>],
        banks: &[Option<f64>],
        cells: &mut crate::terrain::storage::chunk::ChunkCells,
    ) {
        let min = coord.min_cell().0;
        let (y0, y1) = (min.y, min.y + CHUNK_SIZE_CELLS);
        let (lo, hi) = heights
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &h| {
                (a.min(h), b.max(h))
            });
        let reach = caves.max_depth_cells.max(caves.overhang_depth_cells * 4.0);
        if f64::from(y1) < lo - reach || f64::from(y0) > hi {
            return;
        }
        let tunnels = self.lattice(coord, caves.wavelength_cells, [0, 1]);
        let pockets = self.lattice(coord, 10.0, [2, 3]);
        let overhang_grade = tan_deg(caves.overhang_slope_deg.min(89.0));
        let dense = cells.make_dense_mut();
        for lz in 0..CHUNK_SIZE_CELLS {
            for lx in 0..CHUNK_SIZE_CELLS {
                let Some(spec) = &specs[(lz * CHUNK_SIZE_CELLS + lx) as usize] else {
                    continue;
                };
                let n = neighbourhood(heights, lx as usize, lz as usize);
                let steep = caves.overhang_slope_deg < 90.0 && slope_3x3(&n) > overhang_grade;
                for ly in 0..CHUNK_SIZE_CELLS {
                    let y = y0 + ly;
                    let depth = spec.height_cells - (f64::from(y) + 0.5);
                    if depth < 0.0 {
                        break;
                    }
                    let mut keep =
                        cave_solidness(caves, &tunnels, &pockets, lx, ly, lz, depth, steep);
                    if let Some(w) = banks[(lz * CHUNK_SIZE_CELLS + lx) as usize] {
                        let notch = f64::from(y) >= w.floor()
                            && f64::from(y) < w.floor() + caves.bank_undercut_cells
                            && spec.height_cells - f64::from(y + 1) >= 1.0
                            && lattice_at(&pockets, lx, ly, lz)[1] > -0.15;
                        if notch {
                            keep = 0.0;
                        }
                    }
                    if keep >= 1.0 {
                        continue;
                    }
                    let i = local_index(IVec3::new(lx, ly, lz));
                    let cell = dense[i];
                    let solid = cell.solid_occupancy();
                    let occupancy = solid.min((keep * 255.0).round() as u8);
                    if occupancy == solid {
                        continue;
                    }
                    let water = banks[(lz * CHUNK_SIZE_CELLS + lx) as usize]
                        .unwrap_or(f64::NEG_INFINITY)
                        .max(spec.water_level_cells);
                    dense[i] = if occupancy > 0 {
                        Cell::new(cell.material(), occupancy)
                    } else if f64::from(y) < water {
                        // A cave opened under a lake, the sea or beside a
                        // river floods (the top row to the water's level).
                        Cell::new(Material::WATER, fractional_occupancy(water, y))
                    } else {
                        Cell::EMPTY
                    };
                }
            }
        }
        cells.compact();
    }

    /// Two noise fields of wavelength `wavelength_cells` on the chunk's
    /// cave lattice, `[field][z][y][x]`; y is squashed so tunnels run
    /// more level than steep.
    fn lattice(&self, coord: ChunkCoord, wavelength_cells: f64, layers: [u64; 2]) -> Vec<[f64; 2]> {
        let min = coord.min_cell().0;
        let f = 1.0 / wavelength_cells;
        let seeds = layers.map(|l| sub_seed(self.cave_seed, l));
        let mut out = Vec::with_capacity(CAVE_LATTICE.pow(3));
        for z in 0..CAVE_LATTICE as i32 {
            for y in 0..CAVE_LATTICE as i32 {
                for x in 0..CAVE_LATTICE as i32 {
                    let p = IVec3::new(x, y, z) * CAVE_STRIDE + min;
                    let (px, py, pz) = (
                        f64::from(p.x) * f,
                        f64::from(p.y) * f * 1.6,
                        f64::from(p.z) * f,
                    );
                    out.push(seeds.map(|s| perlin3(s, px, py, pz)));
                }
            }
        }
        out
    }
}

/// Trilinear sample of a cave lattice at local cell `(x, y, z)`.
fn lattice_at(lattice: &[[f64; 2]], x: i32, y: i32, z: i32) -> [f64; 2] {
    let s = f64::from(CAVE_STRIDE);
    let (fx, fy, fz) = (
        (f64::from(x) + 0.5) / s,
        (f64::from(y) + 0.5) / s,
        (f64::from(z) + 0.5) / s,
    );
    let (ix, iy, iz) = (
        fx.floor() as usize,
        fy.floor() as usize,
        fz.floor() as usize,
    );
    let (tx, ty, tz) = (fx - ix as f64, fy - iy as f64, fz - iz as f64);
    let at = |x: usize, y: usize, z: usize| lattice[(z * CAVE_LATTICE + y) * CAVE_LATTICE + x];
    let mut out = [0.0; 2];
    for (f, o) in out.iter_mut().enumerate() {
        let l = |x, y, z| at(x, y, z)[f];
        let x00 = l(ix, iy, iz) + (l(ix + 1, iy, iz) - l(ix, iy, iz)) * tx;
        let x10 = l(ix, iy + 1, iz) + (l(ix + 1, iy + 1, iz) - l(ix, iy + 1, iz)) * tx;
        let x01 = l(ix, iy, iz + 1) + (l(ix + 1, iy, iz + 1) - l(ix, iy, iz + 1)) * tx;
        let x11 = l(ix, iy + 1, iz + 1) + (l(ix + 1, iy + 1, iz + 1) - l(ix, iy + 1, iz + 1)) * tx;
        let y0 = x00 + (x10 - x00) * ty;
        let y1 = x01 + (x11 - x01) * ty;
        *o = y0 + (y1 - y0) * tz;
    }
    out
}

/// How much of a cell stays solid, `[0, 1]` (1: untouched), at `depth`
/// cells under the surface: tunnels where both tunnel fields are near 0,
/// pockets in steep faces where the pocket field is high.
#[allow(clippy::too_many_arguments)]
fn cave_solidness(
    caves: &CavesStage,
    tunnels: &[[f64; 2]],
    pockets: &[[f64; 2]],
    x: i32,
    y: i32,
    z: i32,
    depth: f64,
    steep: bool,
) -> f64 {
    let mut keep: f64 = 1.0;
    if depth >= caves.min_depth_cells && depth <= caves.max_depth_cells {
        let fade = smoothstep(caves.min_depth_cells, caves.min_depth_cells + 3.0, depth)
            * (1.0 - smoothstep(caves.max_depth_cells - 3.0, caves.max_depth_cells, depth));
        let r = caves.radius * fade;
        if r > 0.0 {
            let [a, b] = lattice_at(tunnels, x, y, z);
            let t = (a * a + b * b).sqrt();
            keep = keep.min(((t - r) / (0.35 * r) + 0.5).clamp(0.0, 1.0));
        }
    }
    if steep && depth <= caves.overhang_depth_cells * 4.0 {
        let [p, _] = lattice_at(pockets, x, y, z);
        // Deeper into the face, a pocket needs a stronger signal.
        let threshold = 0.15 + 0.35 * depth / (caves.overhang_depth_cells * 4.0).max(1.0);
        keep = keep.min(((threshold - p) / 0.1 + 0.5).clamp(0.0, 1.0));
    }
    keep
}

/// The 3×3 heights around local column `(lx, lz)` of a height table.
fn neighbourhood(heights: &[f64], lx: usize, lz: usize) -> [[f64; 3]; 3] {
    let mut n = [[0.0; 3]; 3];
    for (dz, row) in n.iter_mut().enumerate() {
        for (dx, v) in row.iter_mut().enumerate() {
            *v = heights[(lz + dz) * TABLE + lx + dx];
        }
    }
    n
}

/// Solid cells (inside the surface) right above a cell that is not, in a
/// column's chunks sorted by y; a chunk with no chunk right below it counts
/// its bottom row against empty cells.
pub fn count_overhangs(chunks: &[(ChunkCoord, crate::terrain::storage::chunk::ChunkCells)]) -> u64 {
    let mut count = 0;
    let mut below: Option<(i32, [bool; 1024])> = None;
    for (coord, cells) in chunks {
        // Below the world's floor (y = 0) counts as solid: ground, not an overhang.
        let mut under = match below {
            Some((cy, row)) if cy + 1 == coord.0.y => row,
            _ => [coord.0.y == 0; 1024],
        };
        if let Some(cell) = cells.as_uniform() {
            if cell.is_inside() {
                count += under.iter().filter(|&&s| !s).count() as u64;
            }
            under = [cell.is_inside(); 1024];
        } else {
            for ly in 0..CHUNK_SIZE_CELLS {
                for lz in 0..CHUNK_SIZE_CELLS {
                    for lx in 0..CHUNK_SIZE_CELLS {
                        let c = (lz * CHUNK_SIZE_CELLS + lx) as usize;
                        let inside = cells.get(IVec3::new(lx, ly, lz)).is_inside();
                        if inside && !under[c] {
                            count += 1;
                        }
                        under[c] = inside;
                    }
                }
            }
        }
        below = Some((coord.0.y, under));
    }
    count
}

impl ColumnSource for RecipeTerrain {
    fn load_column(&self, column: ColumnCoord) -> Result<ColumnChunks, SourceError> {
        Ok(self.column_chunks(column))
    }

    fn origin(&self) -> LoadOrigin {
        LoadOrigin::Generated
    }

    fn is_outside(&self, column: ColumnCoord) -> bool {
        RecipeTerrain::is_outside(self, column)
    }

    fn surface_sampler(&self) -> Option<&dyn SurfaceSampler> {
        Some(self)
    }
}

impl SurfaceSampler for RecipeTerrain {
    fn height_cells(&self, x_cells: f64, z_cells: f64) -> Option<f64> {
        let size = f64::from(self.size_cells);
        let inside = |v: f64| (0.0..size).contains(&v);
        (inside(x_cells) && inside(z_cells)).then(|| self.plan.height_at(x_cells, z_cells))
    }

    fn column(&self, x_cell: i64, z_cell: i64) -> Option<SurfaceColumn> {
        let size = i64::from(self.size_cells);
        if !(0..size).contains(&x_cell) || !(0..size).contains(&z_cell) {
            return None;
        }
        let mut n = [[0.0; 3]; 3];
        for (dz, row) in n.iter_mut().enumerate() {
            for (dx, h) in row.iter_mut().enumerate() {
                *h = self.height(x_cell + dx as i64 - 1, z_cell + dz as i64 - 1);
            }
        }
        Some(self.column_spec(x_cell, z_cell, &n).surface_column())
    }

    fn top_cells(&self) -> f64 {
        let land = self
            .plan
            .height_cells
            .iter()
            .copied()
            .fold(0.0f32, f32::max);
        let water = self.plan.water_cells.iter().copied().fold(0.0f32, f32::max);
        f64::from(land.max(water))
    }

    fn extent_cells(&self) -> [i64; 2] {
        [i64::from(self.size_cells); 2]
    }
}
