//! Heightmap export: the top surface of a world as elevation data other
//! terrain tools and game engines read, in the format the path's extension
//! names: a 16-bit grayscale PNG (`.png`) or RAW16 (`.r16`, `.raw`) with a
//! JSON sidecar, a float32 EXR (`.exr`) with a sidecar, or a float32
//! GeoTIFF (`.tif`, `.tiff`) with georeferencing tags. The heightmap
//! importers ([`crate::io::heightmap::heightmap_format`]) read every one back.
//!
//! # What is exported
//! One sample per cell column, cropped to the columns that have solid
//! ground, or resampled to an engine's size ([`EngineSize`]). Generators,
//! imports and brushes fill a column's top as a linear ramp of occupancy
//! centred on the surface (`0.5 + (h − y − 0.5) / ramp`, the ramp one cell
//! on flat ground and `sqrt(1 + slope²)` on slopes), and the export inverts
//! it: from the column's topmost solid cell down to its first full one, two
//! partial cells give the ramp and the height exactly (the Surface Nets 0.5
//! crossing); a single partial cell gives the height once the ramp is known,
//! which comes from the slope of the neighbouring columns. Reading a single
//! cell as Surface Nets does would be off by up to 3/2 − √2 ≈ 0.086 cells.
//! Caves below the top band do not count. Row 0 is the lowest `z` (north)
//! and columns run along +x, as the importers expect.
//!
//! # Units
//! Elevations are metres of the world's [`WorldGeoreference`] (an imported
//! DEM's own), or studs for a world without one (a cell is 4 studs).
//! Float formats hold the elevations (NaN where a column has no ground);
//! 16-bit formats map the range onto 0–65535 (0 = lowest column, also
//! written where there is no ground), and the sidecar says the range. A
//! GeoTIFF carries its source's CRS keys, pixel scale and tiepoint for the
//! exported crop, elevations in the source's vertical unit.
//!
//! # Splat maps
//! Beside the heights go the surface's materials as splat maps (RGBA, four
//! materials each), a material-index map and their JSON sidecar, at the
//! heightmap's samples ([`super::splat_export`]).
//!
//! # Sidecar
//! `<stem>.json` with the importers' fields (`spacing_x_m`, `spacing_y_m`,
//! `width`, `height`, `min_elevation_m`, `max_elevation_m`), and for 16-bit
//! files the values of Unreal Engine's Landscape import dialog (`unreal`:
//! X/Y/Z scale in cm, Z location) and of Unity's Terrain "Import Raw" and
//! terrain settings (`unity`: width, length and height in metres, heightmap
//! resolution, byte order, flip).

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use rustc_hash::FxHashMap;

pub use super::export_writers::{ExportFormat, HeightmapExportOptions};
use super::export_writers::{SurfaceElevations, write_surface};
pub use super::formats::engine_sizes::EngineSize;
use super::formats::engine_sizes::{MAX_RESAMPLE_SIDE, resample};
use super::splat_export::{SplatExport, SurfaceMaterials, check_splat_paths, write_splats};
use super::world_georeference::WorldGeoreference;
use crate::io::ExportError;
use crate::terrain::materials::MaterialLibrary;
use crate::terrain::storage::coords::CHUNK_SIZE_CELLS;
use crate::terrain::storage::grid::Grid;
use crate::terrain::{Chunk, ChunkCoord};

/// What [`export_heightmap`] wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct HeightmapExport {
    /// The heightmap file.
    pub path: PathBuf,
    /// The JSON sidecar (PNG, RAW16 and EXR exports).
    pub sidecar: Option<PathBuf>,
    /// Samples along +x.
    pub width_px: u32,
    /// Samples along +z.
    pub height_px: u32,
    /// Cell column of the surface's north-west corner: `(x, z)`.
    pub origin_cells: (i32, i32),
    /// Lowest and highest elevation written, metres of the world's
    /// georeference (studs without one).
    pub elevation_range_m: (f64, f64),
    /// The splat maps written beside it.
    pub splat: Option<SplatExport>,
}

/// A chunk column `(cx, cz)`.
type ColumnKey = (i32, i32);

/// Per column of a chunk column (`[z][x]` flattened): its top band and
/// its surface material id (0 without ground).
type ColumnSurface = (Vec<Option<ColumnTop>>, Vec<u8>);

/// The top band of every column of one chunk column, `[z][x]` flattened,
/// `None` where the column has no solid cell, and each column's surface
/// material ([`TopBand::material`]; 0 without ground).
fn column_tops(grid: &Grid, cx: i32, cz: i32, ys: &[i32]) -> ColumnSurface {
    const N: usize = CHUNK_SIZE_CELLS as usize;
    // Chunks of this column from the top down.
    let chunks: Vec<(i32, &Chunk)> = ys
        .iter()
        .filter_map(|&cy| grid.chunk(ChunkCoord::new(cx, cy, cz)).map(|c| (cy, c)))
        .collect();
    let mut out = vec![None; N * N];
    let mut materials = vec![0u8; N * N];
    for lz in 0..CHUNK_SIZE_CELLS {
        for lx in 0..CHUNK_SIZE_CELLS {
            let mut band = TopBand::default();
            'chunks: for (cy, chunk) in &chunks {
                // Empty uniform chunks above the surface answer at once.
                if band.cells.is_empty()
                    && let Some(cell) = chunk.cells.as_uniform()
                    && cell.solid_occupancy() == 0
                {
                    continue;
                }
                for ly in (0..CHUNK_SIZE_CELLS).rev() {
                    let cell = chunk.cells.get(glam::IVec3::new(lx, ly, lz));
                    if band.take(cy * CHUNK_SIZE_CELLS + ly, cell) {
                        break 'chunks;
                    }
                }
            }
            let i = (lz * CHUNK_SIZE_CELLS + lx) as usize;
            out[i] = band.top();
            materials[i] = band.material;
        }
    }
    (out, materials)
}

/// The partial cells at the top of a column, walked down one cell at a
/// time from its topmost solid cell to the first full cell (or air).
#[derive(Default)]
struct TopBand {
    /// `(y, occupancy)` of the partial cells, top down.
    cells: Vec<(i32, u8)>,
    /// The full cell (or air) the band rests on, once found.
    rest_y: Option<i32>,
    /// The surface's material: that of the band's first cell at least half
    /// solid (the cell the Surface Nets 0.5 crossing leaves on top), else
    /// of its topmost solid cell; 0 (air) without ground.
    material: u8,
    /// Whether [`TopBand::material`] came from a cell at least half solid.
    material_settled: bool,
}

impl TopBand {
    /// Takes cell `y`; true when the band has ended.
    fn take(&mut self, y: i32, cell: crate::terrain::Cell) -> bool {
        let occupancy = cell.solid_occupancy();
        if occupancy > 0 && !self.material_settled {
            if self.material == 0 || occupancy >= 128 {
                self.material = cell.material().0;
            }
            self.material_settled = occupancy >= 128;
        }
        match occupancy {
            0 if self.cells.is_empty() => false,
            0 | 255 => {
                self.rest_y = Some(y);
                true
            }
            partial => {
                self.cells.push((y, partial));
                false
            }
        }
    }

    /// What the band says of the surface.
    fn top(&self) -> Option<ColumnTop> {
        let fraction = |o: u8| f64::from(o) / 255.0;
        match (self.cells.as_slice(), self.rest_y) {
            ([], None) => None,
            // A full cell under air: the surface is its top.
            ([], Some(y)) => Some(ColumnTop::Exact(f64::from(y + 1))),
            ([(y, o)], _) => Some(ColumnTop::Single {
                y: *y,
                fraction: fraction(*o),
            }),
            (cells, _) => {
                // Two partial cells of a linear ramp: the pair that holds
                // the 0.5 crossing, or the lowest pair.
                let pairs = cells.windows(2);
                let pick = pairs
                    .clone()
                    .find(|p| p[1].1 >= 128 && p[0].1 < 128)
                    .or_else(|| pairs.last())?;
                let ((_, above), (y, below)) = (pick[0], pick[1]);
                let (lo, hi) = (fraction(below), fraction(above));
                Some(ColumnTop::Exact(
                    f64::from(y) + 0.5 + (lo - 0.5) / (lo - hi),
                ))
            }
        }
    }
}

/// A column's surface as its cells give it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum ColumnTop {
    /// Known: a linear ramp across two partial cells, or a full cell's top.
    Exact(f64),
    /// One partial cell `y` of solid `fraction` between full and empty:
    /// its height depends on the ramp the slope gave it.
    Single {
        /// The partial cell.
        y: i32,
        /// Its solid fraction, `(0, 1)`.
        fraction: f64,
    },
}

/// Passes of [`resolve_heights`]: each re-estimates the slopes from the
/// previous heights; the ramp moves a height by at most half its change.
const SLOPE_PASSES: usize = 3;

/// Surface heights, cells, of a `width × depth` grid of column tops (NaN
/// without one). A single partial cell is read as the generators fill it,
/// a ramp `sqrt(1 + slope²)` cells tall (at most 4) centred on the surface
/// (`column_fill::ramp_occupancy`): height `y + 0.5 + (fraction − 0.5) ·
/// ramp`, the slope from the neighbours' heights by central differences,
/// re-estimated [`SLOPE_PASSES`] times from a start of one cell.
fn resolve_heights(tops: &[Option<ColumnTop>], width: usize, depth: usize) -> Vec<f32> {
    let single = |top: &Option<ColumnTop>, ramp: f64| match top {
        Some(ColumnTop::Exact(h)) => *h,
        Some(ColumnTop::Single { y, fraction }) => f64::from(*y) + 0.5 + (fraction - 0.5) * ramp,
        None => f64::NAN,
    };
    let mut heights: Vec<f64> = tops.iter().map(|t| single(t, 1.0)).collect();
    for _ in 0..SLOPE_PASSES {
        let next: Vec<f64> = (0..width * depth)
            .map(|i| {
                let top = &tops[i];
                if !matches!(top, Some(ColumnTop::Single { .. })) {
                    return heights[i];
                }
                let (x, z) = (i % width, i / width);
                let centre = heights[i];
                // Neighbours clamped to the crop, as the importer clamps its
                // samples; a missing one counts as flat.
                let h = |dx: isize, dz: isize| {
                    let nx = (x as isize + dx).clamp(0, width as isize - 1) as usize;
                    let nz = (z as isize + dz).clamp(0, depth as isize - 1) as usize;
                    let v = heights[nz * width + nx];
                    if v.is_nan() { centre } else { v }
                };
                let (gx, gz) = ((h(1, 0) - h(-1, 0)) * 0.5, (h(0, 1) - h(0, -1)) * 0.5);
                let ramp = (1.0 + gx * gx + gz * gz).sqrt().min(4.0);
                single(top, ramp)
            })
            .collect();
        heights = next;
    }
    heights.into_iter().map(|h| h as f32).collect()
}

/// The surface of a world, one sample a cell column, cropped to the
/// columns with ground.
struct SurfaceCrop {
    width: u32,
    depth: u32,
    origin_cells: (i32, i32),
    /// Heights, cells, row-major; NaN where a column has no ground.
    heights_cells: Vec<f32>,
    /// Surface material ids, row-major; 0 where a column has no ground.
    materials: Vec<u8>,
}

/// Every column's surface height, cropped to the columns with ground.
fn surface_crop(grid: &Grid, path: &Path) -> Result<SurfaceCrop, ExportError> {
    // Chunk columns with their stored chunk ys, highest first.
    let mut columns: FxHashMap<ColumnKey, Vec<i32>> = FxHashMap::default();
    for (c, _) in grid.chunks() {
        columns.entry((c.0.x, c.0.z)).or_default().push(c.0.y);
    }
    let mut columns: Vec<(ColumnKey, Vec<i32>)> = columns.into_iter().collect();
    for (_, ys) in &mut columns {
        ys.sort_unstable_by(|a, b| b.cmp(a));
    }
    let heights: Vec<(ColumnKey, ColumnSurface)> = columns
        .par_iter()
        .map(|&((cx, cz), ref ys)| ((cx, cz), column_tops(grid, cx, cz, ys)))
        .collect();
    let n = CHUNK_SIZE_CELLS;
    let (mut x0, mut z0, mut x1, mut z1) = (i32::MAX, i32::MAX, i32::MIN, i32::MIN);
    for ((cx, cz), (h, _)) in &heights {
        for (i, v) in h.iter().enumerate() {
            if v.is_some() {
                let (x, z) = (cx * n + i as i32 % n, cz * n + i as i32 / n);
                (x0, z0, x1, z1) = (x0.min(x), z0.min(z), x1.max(x), z1.max(z));
            }
        }
    }
    if x0 > x1 {
        return Err(ExportError::NoSurface {
            path: path.to_path_buf(),
        });
    }
    let width = (x1 as i64 - x0 as i64 + 1) as u64;
    let depth = (z1 as i64 - z0 as i64 + 1) as u64;
    let limit = crate::terrain::generation::heightmap::MAX_SIDE_PX as u64;
    if width > limit || depth > limit {
        return Err(ExportError::TooLarge {
            path: path.to_path_buf(),
            message: format!(
                "the surface spans {width} × {depth} columns; a heightmap holds at most {limit} a side"
            ),
        });
    }
    let (w, d) = (width as u32, depth as u32);
    let mut tops = vec![None; w as usize * d as usize];
    let mut materials = vec![0u8; w as usize * d as usize];
    for ((cx, cz), (h, m)) in &heights {
        for (i, v) in h.iter().enumerate() {
            if v.is_some() {
                let x = (cx * n + i as i32 % n - x0) as usize;
                let z = (cz * n + i as i32 / n - z0) as usize;
                tops[z * w as usize + x] = *v;
                materials[z * w as usize + x] = m[i];
            }
        }
    }
    let heights_cells = resolve_heights(&tops, w as usize, d as usize);
    Ok(SurfaceCrop {
        width: w,
        depth: d,
        origin_cells: (x0, z0),
        heights_cells,
        materials,
    })
}

/// The JSON sidecar an export to `path` writes beside it (`path` with the
/// extension `json`): `None` for a GeoTIFF, whose scale is in its own tags.
/// An extension that names no format gets the sidecar too (the export is
/// refused anyway).
pub fn export_sidecar_path(path: &Path) -> Option<PathBuf> {
    ExportFormat::of_path(path)
        .is_none_or(ExportFormat::has_sidecar)
        .then(|| super::heightmap_import::sidecar_path(path))
}

/// Writes the top surface of `grid` to `path` in the format its extension
/// names ([`ExportFormat`]), elevations in the metres of `georeference`
/// (studs when `None`), resampled as `options` say; a sidecar goes beside
/// it (`path` with the extension `json`) for the formats that have one,
/// and the splat maps with the built-in material names. Every file is
/// written whole or not at all. Returns what was written.
///
/// # Errors
/// [`ExportError::InvalidSettings`] for an extension that names no format;
/// [`ExportError::NoSurface`] when no column has solid ground;
/// [`ExportError::TooLarge`] beyond 65 536 samples a side; and
/// [`ExportError::Write`] when a file cannot be written.
pub fn export_heightmap(
    grid: &Grid,
    path: &Path,
    georeference: Option<&WorldGeoreference>,
    options: &HeightmapExportOptions,
) -> Result<HeightmapExport, ExportError> {
    let built_ins = MaterialLibrary::default();
    export_heightmap_with_library(grid, path, georeference, options, &built_ins)
}

/// [`export_heightmap`], naming the splat maps' materials as `library`
/// (the world's) does.
///
/// # Errors
/// As [`export_heightmap`].
pub fn export_heightmap_with_library(
    grid: &Grid,
    path: &Path,
    georeference: Option<&WorldGeoreference>,
    options: &HeightmapExportOptions,
    library: &MaterialLibrary,
) -> Result<HeightmapExport, ExportError> {
    let format = ExportFormat::of_path(path).ok_or_else(|| ExportError::InvalidSettings {
        path: path.to_path_buf(),
        message: "name the heightmap .png, .r16, .raw, .exr, .tif or .tiff".to_string(),
    })?;
    let studs = WorldGeoreference::studs();
    let georeference = georeference.unwrap_or(&studs);
    if let Some(EngineSize::Pixels(side)) = options.size
        && !(2..=MAX_RESAMPLE_SIDE).contains(&side)
    {
        return Err(ExportError::InvalidSettings {
            path: path.to_path_buf(),
            message: format!(
                "a resampled heightmap has 2 to {MAX_RESAMPLE_SIDE} samples a side, not {side}"
            ),
        });
    }
    check_splat_paths(path)?;
    let crop = surface_crop(grid, path)?;
    let elevations = elevations_of(&crop, georeference, options);
    let sidecar = write_surface(path, format, &elevations, georeference, options)?;
    let surface = SurfaceMaterials {
        width: crop.width,
        depth: crop.depth,
        ids: &crop.materials,
    };
    let ground: Vec<bool> = elevations.samples_m.iter().map(|h| !h.is_nan()).collect();
    let splat = write_splats(
        path,
        &surface,
        (elevations.width, elevations.depth, &ground),
        elevations.sample_cells,
        library,
    )?;
    Ok(HeightmapExport {
        path: path.to_path_buf(),
        sidecar,
        width_px: elevations.width,
        height_px: elevations.depth,
        origin_cells: crop.origin_cells,
        elevation_range_m: elevations.range_m,
        splat,
    })
}

/// The crop's elevations in metres, resampled when `options` ask.
fn elevations_of(
    crop: &SurfaceCrop,
    georeference: &WorldGeoreference,
    options: &HeightmapExportOptions,
) -> SurfaceElevations {
    let metres: Vec<f32> = crop
        .heights_cells
        .iter()
        .map(|&h| georeference.elevation_m(f64::from(h)) as f32)
        .collect();
    let [cell_x_m, cell_z_m] = georeference.metres_per_cell;
    let (width, depth, samples_m, spacing_m, sample_cells) = match options.size {
        None => (
            crop.width,
            crop.depth,
            metres,
            (cell_x_m, cell_z_m),
            (1.0, 1.0),
        ),
        Some(size) => {
            let side = size.side_for(crop.width, crop.depth);
            // Corner-aligned: the first and last samples stay on the crop's
            // first and last column centres.
            let step = |cells: u32| f64::from(cells.max(2) - 1) / f64::from(side - 1);
            let (sx, sz) = (step(crop.width), step(crop.depth));
            let resampled = resample(&metres, crop.width, crop.depth, side);
            (
                side,
                side,
                resampled,
                (cell_x_m * sx, cell_z_m * sz),
                (sx, sz),
            )
        }
    };
    let (lo, hi) = samples_m
        .iter()
        .filter(|s| !s.is_nan())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &s| {
            (lo.min(f64::from(s)), hi.max(f64::from(s)))
        });
    SurfaceElevations {
        width,
        depth,
        samples_m,
        spacing_m,
        range_m: (lo, hi),
        origin_cells: crop.origin_cells,
        sample_cells,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_partial_cell_is_read_with_the_ramp_of_its_slope() {
        // Flat ground: the fill fraction itself (Surface Nets' 0.5 crossing
        // of a 0.7 cell over a full one would say 0.786).
        let flat = ColumnTop::Single {
            y: 10,
            fraction: 0.7,
        };
        let h = resolve_heights(&[Some(flat); 9], 3, 3);
        assert!((f64::from(h[4]) - 10.7).abs() < 1e-5, "{}", h[4]);
        // A 2-in-1 slope along x: ramp sqrt(5) around the middle column.
        let tops = [
            Some(ColumnTop::Exact(8.7)),
            Some(ColumnTop::Single {
                y: 10,
                fraction: 0.5 + 0.2 / 5.0_f64.sqrt(),
            }),
            Some(ColumnTop::Exact(12.7)),
        ];
        let h = resolve_heights(&tops, 3, 1);
        assert!((f64::from(h[1]) - 10.7).abs() < 1e-5, "{h:?}");
        assert!(h.len() == 3 && resolve_heights(&[None], 1, 1)[0].is_nan());
    }

    #[test]
    fn two_partial_cells_give_the_ramp_and_the_height() {
        use crate::terrain::{Cell, Material};
        let mut band = TopBand::default();
        // A ramp of 2 cells centred on 20.3: 0.5 + (20.3 − y − 0.5) / 2.
        // Cell 21 is empty, 20 holds 0.4 (snow) and 19 holds 0.9 (grass);
        // 18 is full (rock).
        assert!(!band.take(21, Cell::EMPTY));
        for (y, material) in [(20, Material::SNOW), (19, Material::GRASS)] {
            let o = 0.5 + (20.3 - f64::from(y) - 0.5) / 2.0;
            assert!(!band.take(y, Cell::new(material, (o * 255.0).round() as u8)));
        }
        assert!(band.take(18, Cell::full(Material::ROCK)));
        let Some(ColumnTop::Exact(h)) = band.top() else {
            panic!("{:?}", band.top());
        };
        assert!((h - 20.3).abs() < 2.0 / 255.0, "{h}");
        // The surface material is the first cell at least half solid's.
        assert_eq!(band.material, Material::GRASS.0);
    }
}
