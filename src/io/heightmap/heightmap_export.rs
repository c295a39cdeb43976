//! Heightmap export: the top surface of a world as a 16-bit grayscale PNG
//! with a JSON sidecar, in the format the heightmap importer reads
//! ([`crate::io::heightmap::heightmap_import`]), so a world can round-trip through other
//! terrain tools.
//!
//! # What is exported
//! One pixel per cell column, cropped to the columns that have solid ground.
//! A column's height is where Surface Nets puts the surface: the linear 0.5
//! crossing between its highest inside sample (`y`) and the sample above,
//! `y + 0.5 + (occ(y) − 127.5) / (occ(y) − occ(y + 1))` cells. Heights map
//! linearly onto the full 16-bit range (0 = lowest column, 65535 = highest);
//! columns without solid ground get 0. Row 0 is the lowest `z` (north) and
//! pixel columns run along +x, as the importer expects.
//!
//! The sidecar uses studs as its "metres": `spacing_x_m = spacing_y_m = 4`
//! (one cell) and the elevations of values 0 and 65535 in studs. Importing
//! the PNG with `cells_per_pixel = 1` and `vertical_scale = 1` therefore
//! rebuilds the same relief, one pixel per cell, to within the 16-bit
//! quantization (relief / 65535).

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::io::ExportError;
use crate::terrain::storage::coords::{CELL_SIZE_STUDS, CHUNK_SIZE_CELLS};
use crate::terrain::storage::grid::Grid;
use crate::terrain::{Chunk, ChunkCoord};

/// What [`export_heightmap`] wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct HeightmapExport {
    /// The PNG.
    pub png: PathBuf,
    /// The JSON sidecar.
    pub sidecar: PathBuf,
    /// Image width (columns along +x).
    pub width_px: u32,
    /// Image height (columns along +z).
    pub height_px: u32,
    /// Cell column of pixel (0, 0): `(x, z)`.
    pub origin_cells: (i32, i32),
    /// Surface height of value 0 and 65535, studs.
    pub elevation_range_studs: (f64, f64),
}

/// The JSON sidecar, with the importer's field names (and those of
/// `shared/data/jacksboro_fault_dem.json`), in that order.
#[derive(serde::Serialize)]
struct Sidecar {
    source: String,
    spacing_x_m: f64,
    spacing_y_m: f64,
    width: u32,
    height: u32,
    min_elevation_m: f64,
    max_elevation_m: f64,
    encoding: &'static str,
}

/// A chunk column `(cx, cz)`.
type ColumnKey = (i32, i32);

/// Surface height (cells) of every column of one chunk column, `[z][x]`
/// flattened, `None` where the column has no inside sample.
fn column_heights(grid: &Grid, cx: i32, cz: i32, ys: &[i32]) -> Vec<Option<f64>> {
    const N: usize = CHUNK_SIZE_CELLS as usize;
    // Chunks of this column from the top down.
    let chunks: Vec<(i32, &Chunk)> = ys
        .iter()
        .filter_map(|&cy| grid.chunk(ChunkCoord::new(cx, cy, cz)).map(|c| (cy, c)))
        .collect();
    let solid_at = |chunk_index: usize, ly: i32, lx: i32, lz: i32| -> f64 {
        // `ly` may be 32: the sample above the chunk, in the chunk above if stored.
        if ly < CHUNK_SIZE_CELLS {
            let (_, c) = chunks[chunk_index];
            return c.cells.get(glam::IVec3::new(lx, ly, lz)).solid_occupancy() as f64;
        }
        let (cy, _) = chunks[chunk_index];
        chunks
            .iter()
            .find(|(y, _)| *y == cy + 1)
            .map_or(0.0, |(_, c)| {
                c.cells.get(glam::IVec3::new(lx, 0, lz)).solid_occupancy() as f64
            })
    };
    let mut out = vec![None; N * N];
    for lz in 0..CHUNK_SIZE_CELLS {
        for lx in 0..CHUNK_SIZE_CELLS {
            'chunks: for (i, (cy, chunk)) in chunks.iter().enumerate() {
                // Uniform chunks answer for all 32 cells at once.
                if let Some(cell) = chunk.cells.as_uniform()
                    && !cell.is_inside()
                {
                    continue;
                }
                for ly in (0..CHUNK_SIZE_CELLS).rev() {
                    let lo = solid_at(i, ly, lx, lz);
                    if lo >= 128.0 {
                        let hi = solid_at(i, ly + 1, lx, lz);
                        let y = cy * CHUNK_SIZE_CELLS + ly;
                        // `hi < 128 <= lo`: the sample above is outside, or
                        // this would not be the highest inside sample.
                        out[(lz * CHUNK_SIZE_CELLS + lx) as usize] =
                            Some(y as f64 + 0.5 + (lo - 127.5) / (lo - hi));
                        break 'chunks;
                    }
                }
            }
        }
    }
    out
}

/// Writes the top surface of `grid` to `png` (16-bit grayscale) and its
/// sidecar next to it (`png` with the extension `json`). Returns what was
/// written. Parent directories are created.
///
/// # Errors
/// [`ExportError::NoSurface`] when no column has solid ground,
/// [`ExportError::TooLarge`] beyond the importer's 16384 pixels a side, and
/// [`ExportError::Write`] when a file cannot be written.
pub fn export_heightmap(grid: &Grid, png: &Path) -> Result<HeightmapExport, ExportError> {
    // Chunk columns with their stored chunk ys, highest first.
    let mut columns: FxHashMap<ColumnKey, Vec<i32>> = FxHashMap::default();
    for (c, _) in grid.chunks() {
        columns.entry((c.0.x, c.0.z)).or_default().push(c.0.y);
    }
    let mut columns: Vec<(ColumnKey, Vec<i32>)> = columns.into_iter().collect();
    for (_, ys) in &mut columns {
        ys.sort_unstable_by(|a, b| b.cmp(a));
    }
    let heights: Vec<(ColumnKey, Vec<Option<f64>>)> = columns
        .par_iter()
        .map(|&((cx, cz), ref ys)| ((cx, cz), column_heights(grid, cx, cz, ys)))
        .collect();
    // Crop to the columns with ground, and find the height range.
    let n = CHUNK_SIZE_CELLS;
    let (mut x0, mut z0, mut x1, mut z1) = (i32::MAX, i32::MAX, i32::MIN, i32::MIN);
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for ((cx, cz), h) in &heights {
        for (i, v) in h.iter().enumerate() {
            if let Some(v) = v {
                let (x, z) = (cx * n + i as i32 % n, cz * n + i as i32 / n);
                (x0, z0, x1, z1) = (x0.min(x), z0.min(z), x1.max(x), z1.max(z));
                (lo, hi) = (lo.min(*v), hi.max(*v));
            }
        }
    }
    if x0 > x1 {
        return Err(ExportError::NoSurface {
            path: png.to_path_buf(),
        });
    }
    let width = (x1 as i64 - x0 as i64 + 1) as u64;
    let depth = (z1 as i64 - z0 as i64 + 1) as u64;
    let limit = crate::terrain::generation::heightmap::MAX_SIDE_PX as u64;
    if width > limit || depth > limit {
        return Err(ExportError::TooLarge {
            path: png.to_path_buf(),
            message: format!(
                "the surface spans {width} × {depth} columns; a heightmap holds at most {limit} a side"
            ),
        });
    }
    let (w, d) = (width as u32, depth as u32);
    let range = hi - lo;
    let mut pixels = vec![0u16; w as usize * d as usize];
    for ((cx, cz), h) in &heights {
        for (i, v) in h.iter().enumerate() {
            if let Some(v) = v {
                let x = (cx * n + i as i32 % n - x0) as usize;
                let z = (cz * n + i as i32 / n - z0) as usize;
                let t = if range > 0.0 { (v - lo) / range } else { 0.0 };
                pixels[z * w as usize + x] = (t * 65535.0).round().clamp(0.0, 65535.0) as u16;
            }
        }
    }
    let image = image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::from_raw(w, d, pixels)
        .ok_or_else(|| ExportError::write(png, "pixel buffer does not match the image size"))?;
    // All or nothing, each file: a failed export leaves existing files as they were.
    crate::io::write_atomically(
        png,
        |tmp| {
            image
                .save_with_format(tmp, image::ImageFormat::Png)
                .map_err(|e| ExportError::write(png, e))
        },
        |e| ExportError::write(png, e),
    )?;
    let stud = CELL_SIZE_STUDS as f64;
    let (min_studs, max_studs) = (lo * stud, hi * stud);
    let sidecar = Sidecar {
        source: format!(
            "Strata world surface, columns x {x0}..={x1}, z {z0}..={z1} (cells); \
             units are studs (1 cell = 4 studs); import with cells_per_pixel 1 and vertical_scale 1"
        ),
        spacing_x_m: stud,
        spacing_y_m: stud,
        width: w,
        height: d,
        min_elevation_m: min_studs,
        max_elevation_m: max_studs,
        encoding: "16-bit grayscale PNG; elevation_m = min_elevation_m + value/65535*(max_elevation_m-min_elevation_m); row 0 is north",
    };
    let sidecar_path = crate::io::heightmap::heightmap_import::sidecar_path(png);
    let json =
        serde_json::to_string_pretty(&sidecar).map_err(|e| ExportError::write(&sidecar_path, e))?;
    crate::io::write_atomically(
        &sidecar_path,
        |tmp| std::fs::write(tmp, json + "\n").map_err(|e| ExportError::write(&sidecar_path, e)),
        |e| ExportError::write(&sidecar_path, e),
    )?;
    Ok(HeightmapExport {
        png: png.to_path_buf(),
        sidecar: sidecar_path,
        width_px: w,
        height_px: d,
        origin_cells: (x0, z0),
        elevation_range_studs: (min_studs, max_studs),
    })
}
