//! Heightmap import: a grayscale PNG elevation model (optionally with a JSON
//! sidecar giving its real-world spacing and elevation range) becomes a grid.
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
//! and relative height. All size checks run on the PNG header and settings
//! before anything large is allocated, and no input can make the importer
//! panic.
//!
//! # Placement and axes
//! The map's north-west corner is at cell `(0, base_height_cells, 0)`; pixel
//! columns run along +x (east) and pixel rows along +z, so **north is −z** and
//! row 0 of the PNG is the `z = 0` edge. The terrain is solid from
//! `y = base_height_cells` up to its surface; the lowest elevation lies
//! [`BEDROCK_CELLS`] above the base so every column has ground.
//!
//! # Sidecar
//! `<stem>.json` next to `<stem>.png`, with fields `spacing_x_m`,
//! `spacing_y_m` (pixel size east–west and north–south, metres),
//! `min_elevation_m`, `max_elevation_m` (elevation of pixel values 0 and the
//! maximum value) and optionally `width`, `height` (pixels, checked against
//! the PNG). Other fields are ignored. Pixel value `v` of a `B`-bit image is
//! `min + v / (2^B − 1) · (max − min)` metres.

use std::fs::File;
use std::io::{BufReader, ErrorKind};
use std::path::{Path, PathBuf};

use image::ImageDecoder;
use rayon::prelude::*;

use super::cell::Material;
use super::chunk::ChunkCells;
use super::coords::{CHUNK_SIZE_CELLS, ChunkCoord};
use super::generate::{
    ColumnSpec, ColumnTable, STRATA_MARGIN_CELLS, Strata, min_3x3, ramp_for_slope, slope_3x3,
};
use super::grid::Grid;
use crate::progress::Progress;

/// Largest accepted PNG width or height, in pixels (checked from the header).
pub const MAX_SIDE_PX: u32 = 16384;

/// Largest accepted terrain extent along x or z, in cells (the same limit
/// as generated worlds, see [`super::generate::MAX_SIZE_CELLS`]).
pub const MAX_SIDE_CELLS: u64 = super::generate::MAX_SIZE_CELLS as u64;

/// Largest accepted relief (surface above the base), in cells.
pub const MAX_RELIEF_CELLS: f64 = 4096.0;

/// Solid cells under the lowest elevation, so the lowest column still has ground.
pub const BEDROCK_CELLS: f64 = 4.0;

/// Without a sidecar, the full pixel value range (0 to the maximum value)
/// spans this many cells before `vertical_scale`.
pub const NORMALIZED_RELIEF_CELLS: f64 = 64.0;

/// Import settings.
#[derive(Clone, Debug, PartialEq)]
pub struct HeightmapSettings {
    /// Cells per pixel along x (east–west). With a sidecar this fixes the cell
    /// size in metres: `spacing_x_m / cells_per_pixel`; the z extent follows
    /// from `spacing_y_m`. Without one, one pixel is this many cells on both
    /// axes. Finite and positive.
    pub cells_per_pixel: f32,
    /// Vertical exaggeration: elevation in cells is multiplied by this.
    /// Finite and positive.
    pub vertical_scale: f32,
    /// The `y` (cells) of the terrain's bottom: solid cells start here.
    pub base_height_cells: i32,
    /// Optional sea level, in the heightmap's sample units (metres with a
    /// sidecar, the normalized value `0..=1` without): empty cells below it
    /// become water (the top water cell fractional).
    pub sea_level_m: Option<f64>,
    /// Material of the terrain's body under the surface and soil, also shown
    /// on cliffs and rocky slopes; `None` for layered rock strata. Must be
    /// solid ([`ImportError::InvalidSetting`] otherwise).
    pub base_material: Option<Material>,
}

impl Default for HeightmapSettings {
    /// 2 cells per pixel and 3× exaggeration: for the Jacksboro DEM that is a
    /// 806 × 851-cell map (37.25 m cells) whose 840 m of relief become about
    /// 68 cells, so the dissected ridges and the fault scarp read clearly
    /// from above at an angle. Base at `y = 0`, no sea.
    fn default() -> Self {
        HeightmapSettings {
            cells_per_pixel: 2.0,
            vertical_scale: 3.0,
            base_height_cells: 0,
            sea_level_m: None,
            base_material: None,
        }
    }
}

/// The optional JSON sidecar of a heightmap (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct HeightmapSidecar {
    /// Pixel size east–west (along +x), metres.
    pub spacing_x_m: f64,
    /// Pixel size north–south (along +z), metres.
    pub spacing_y_m: f64,
    /// Elevation of pixel value 0, metres.
    pub min_elevation_m: f64,
    /// Elevation of the maximum pixel value, metres.
    pub max_elevation_m: f64,
    /// Width in pixels, when given (must match the PNG).
    pub width: Option<u32>,
    /// Height in pixels, when given (must match the PNG).
    pub height: Option<u32>,
}

/// Elevation samples read from a PNG (and its sidecar).
#[derive(Clone, Debug, PartialEq)]
pub struct Heightmap {
    /// Pixels along x (east).
    pub width_px: u32,
    /// Pixels along z (south); row 0 is north.
    pub height_px: u32,
    /// `width_px × height_px` samples, row-major, row 0 north: metres when
    /// `sidecar` is present, else the normalized pixel value in `[0, 1]`.
    pub samples: Vec<f64>,
    /// The sidecar, when one was found next to the PNG.
    pub sidecar: Option<HeightmapSidecar>,
}

/// Why a heightmap could not be imported. The grid is never partially built.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The import was cancelled ([`Progress::cancel`]); no grid was built.
    #[error("heightmap import was cancelled")]
    Cancelled,
    /// The PNG file does not exist.
    #[error("heightmap file {path} does not exist")]
    NotFound {
        /// The missing file.
        path: PathBuf,
    },
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file is not a PNG, or is corrupt.
    #[error("{path} is not a readable PNG: {message}")]
    Decode {
        /// The file.
        path: PathBuf,
        /// What the decoder reported.
        message: String,
    },
    /// A colour type that is not a heightmap (e.g. a true-colour picture).
    #[error(
        "{path}: unsupported colour type {color}; save the heightmap as 8- or 16-bit grayscale"
    )]
    UnsupportedColor {
        /// The file.
        path: PathBuf,
        /// The colour type found.
        color: String,
    },
    /// Width or height is zero.
    #[error("heightmap has zero size ({width_px} × {height_px} pixels)")]
    ZeroSize {
        /// Width in pixels.
        width_px: u32,
        /// Height in pixels.
        height_px: u32,
    },
    /// The PNG is larger than [`MAX_SIDE_PX`] on a side.
    #[error(
        "heightmap of {width_px} × {height_px} pixels exceeds the limit of {limit_px} pixels per side"
    )]
    ImageTooLarge {
        /// Width in pixels.
        width_px: u32,
        /// Height in pixels.
        height_px: u32,
        /// The limit.
        limit_px: u32,
    },
    /// The terrain would exceed [`MAX_SIDE_CELLS`] on a side.
    #[error(
        "terrain of {width_cells} × {depth_cells} cells exceeds the limit of {limit_cells} cells per side; lower cells_per_pixel"
    )]
    TerrainTooLarge {
        /// Extent along x, cells.
        width_cells: u64,
        /// Extent along z, cells.
        depth_cells: u64,
        /// The limit.
        limit_cells: u64,
    },
    /// The relief would exceed [`MAX_RELIEF_CELLS`], or the terrain would
    /// leave the `i32` lattice.
    #[error(
        "terrain relief of {relief_cells} cells above base {base_height_cells} exceeds the limit of {limit_cells} cells; lower vertical_scale"
    )]
    TerrainTooTall {
        /// Relief in cells.
        relief_cells: f64,
        /// The base height, cells.
        base_height_cells: i32,
        /// The limit.
        limit_cells: f64,
    },
    /// The sidecar exists but is invalid.
    #[error("bad heightmap sidecar {path}: {message}")]
    Sidecar {
        /// The sidecar file.
        path: PathBuf,
        /// What is wrong, naming the field.
        message: String,
    },
    /// A setting is NaN, infinite or out of range.
    #[error("invalid import setting {name} = {value}: must be finite and positive")]
    InvalidSetting {
        /// The setting's field name.
        name: &'static str,
        /// Its value.
        value: f64,
    },
    /// A [`Heightmap`] built by hand is inconsistent (sample count, non-finite samples).
    #[error("invalid heightmap: {0}")]
    InvalidHeightmap(String),
}

/// Reads a PNG heightmap and its optional sidecar `<stem>.json`.
///
/// Accepts 8- and 16-bit grayscale (with or without alpha, which is
/// ignored), and RGB/RGBA images whose pixels are all gray (R = G = B).
///
/// # Errors
/// [`ImportError::NotFound`], [`ImportError::Io`], [`ImportError::Decode`],
/// [`ImportError::UnsupportedColor`], [`ImportError::ZeroSize`],
/// [`ImportError::ImageTooLarge`] (checked from the header, before decoding)
/// and [`ImportError::Sidecar`].
pub fn read_heightmap(path: &Path) -> Result<Heightmap, ImportError> {
    let file = File::open(path).map_err(|source| match source.kind() {
        ErrorKind::NotFound => ImportError::NotFound {
            path: path.to_path_buf(),
        },
        _ => ImportError::Io {
            path: path.to_path_buf(),
            source,
        },
    })?;
    let decode_err = |e: image::ImageError| ImportError::Decode {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let decoder = image::codecs::png::PngDecoder::new(BufReader::new(file)).map_err(decode_err)?;
    let (width_px, height_px) = decoder.dimensions();
    if width_px == 0 || height_px == 0 {
        return Err(ImportError::ZeroSize {
            width_px,
            height_px,
        });
    }
    if width_px > MAX_SIDE_PX || height_px > MAX_SIDE_PX {
        return Err(ImportError::ImageTooLarge {
            width_px,
            height_px,
            limit_px: MAX_SIDE_PX,
        });
    }
    let color = decoder.color_type();
    let image = image::DynamicImage::from_decoder(decoder).map_err(decode_err)?;
    let unsupported = || ImportError::UnsupportedColor {
        path: path.to_path_buf(),
        color: format!("{color:?}"),
    };
    let normalized: Vec<f64> = match image {
        image::DynamicImage::ImageLuma8(img) => {
            img.pixels().map(|p| p.0[0] as f64 / 255.0).collect()
        }
        image::DynamicImage::ImageLumaA8(img) => {
            img.pixels().map(|p| p.0[0] as f64 / 255.0).collect()
        }
        image::DynamicImage::ImageLuma16(img) => {
            img.pixels().map(|p| p.0[0] as f64 / 65535.0).collect()
        }
        image::DynamicImage::ImageLumaA16(img) => {
            img.pixels().map(|p| p.0[0] as f64 / 65535.0).collect()
        }
        image::DynamicImage::ImageRgb8(img) => {
            gray_only(img.pixels().map(|p| [p.0[0], p.0[1], p.0[2]]), 255.0)
                .ok_or_else(unsupported)?
        }
        image::DynamicImage::ImageRgba8(img) => {
            gray_only(img.pixels().map(|p| [p.0[0], p.0[1], p.0[2]]), 255.0)
                .ok_or_else(unsupported)?
        }
        image::DynamicImage::ImageRgb16(img) => {
            gray_only(img.pixels().map(|p| [p.0[0], p.0[1], p.0[2]]), 65535.0)
                .ok_or_else(unsupported)?
        }
        image::DynamicImage::ImageRgba16(img) => {
            gray_only(img.pixels().map(|p| [p.0[0], p.0[1], p.0[2]]), 65535.0)
                .ok_or_else(unsupported)?
        }
        _ => return Err(unsupported()),
    };
    let sidecar = read_sidecar(path, width_px, height_px)?;
    let samples = match &sidecar {
        Some(s) => {
            let range = s.max_elevation_m - s.min_elevation_m;
            normalized
                .into_iter()
                .map(|n| s.min_elevation_m + n * range)
                .collect()
        }
        None => normalized,
    };
    Ok(Heightmap {
        width_px,
        height_px,
        samples,
        sidecar,
    })
}

/// Normalized values of gray RGB pixels, or `None` when any pixel is coloured.
fn gray_only<T: Copy + PartialEq + Into<f64>>(
    pixels: impl Iterator<Item = [T; 3]>,
    max: f64,
) -> Option<Vec<f64>> {
    pixels
        .map(|[r, g, b]| (r == g && g == b).then(|| r.into() / max))
        .collect()
}

/// The sidecar path of a PNG: same directory and stem, extension `json`.
pub fn sidecar_path(png_path: &Path) -> PathBuf {
    png_path.with_extension("json")
}

/// Reads and validates the sidecar next to `png_path`; `Ok(None)` when there is none.
fn read_sidecar(
    png_path: &Path,
    width_px: u32,
    height_px: u32,
) -> Result<Option<HeightmapSidecar>, ImportError> {
    let path = sidecar_path(png_path);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(ImportError::Io { path, source }),
    };
    let bad = |message: String| ImportError::Sidecar {
        path: path.clone(),
        message,
    };
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let number = |name: &str| -> Result<f64, ImportError> {
        match json.get(name) {
            None => Err(bad(format!("missing field `{name}`"))),
            Some(v) => v
                .as_f64()
                .ok_or_else(|| bad(format!("field `{name}` must be a number, got {v}"))),
        }
    };
    let pixels = |name: &str| -> Result<Option<u32>, ImportError> {
        match json.get(name) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .map(Some)
                .ok_or_else(|| bad(format!("field `{name}` must be a pixel count, got {v}"))),
        }
    };
    let sidecar = HeightmapSidecar {
        spacing_x_m: number("spacing_x_m")?,
        spacing_y_m: number("spacing_y_m")?,
        min_elevation_m: number("min_elevation_m")?,
        max_elevation_m: number("max_elevation_m")?,
        width: pixels("width")?,
        height: pixels("height")?,
    };
    for (name, value) in [
        ("spacing_x_m", sidecar.spacing_x_m),
        ("spacing_y_m", sidecar.spacing_y_m),
    ] {
        if !(value.is_finite() && value > 0.0) {
            return Err(bad(format!(
                "field `{name}` must be a positive number of metres, got {value}"
            )));
        }
    }
    for (name, value) in [
        ("min_elevation_m", sidecar.min_elevation_m),
        ("max_elevation_m", sidecar.max_elevation_m),
    ] {
        if !value.is_finite() {
            return Err(bad(format!(
                "field `{name}` must be a finite number of metres, got {value}"
            )));
        }
    }
    if sidecar.max_elevation_m < sidecar.min_elevation_m {
        return Err(bad(format!(
            "field `max_elevation_m` ({}) is below `min_elevation_m` ({})",
            sidecar.max_elevation_m, sidecar.min_elevation_m
        )));
    }
    for (name, given, actual) in [
        ("width", sidecar.width, width_px),
        ("height", sidecar.height, height_px),
    ] {
        if let Some(given) = given
            && given != actual
        {
            return Err(bad(format!(
                "field `{name}` is {given} but the PNG has {actual} pixels"
            )));
        }
    }
    Ok(Some(sidecar))
}

/// Imports the PNG at `path` (and its sidecar) as a fresh grid.
///
/// # Errors
/// Everything [`read_heightmap`] and [`grid_from_heightmap`] report.
pub fn import_heightmap(path: &Path, settings: &HeightmapSettings) -> Result<Grid, ImportError> {
    import_heightmap_with_progress(path, settings, &Progress::new())
}

/// [`import_heightmap`], counting chunk columns built in `progress` (stage
/// "importing") and stopping early when it is cancelled.
///
/// # Errors
/// As [`import_heightmap`], and [`ImportError::Cancelled`].
pub fn import_heightmap_with_progress(
    path: &Path,
    settings: &HeightmapSettings,
    progress: &Progress,
) -> Result<Grid, ImportError> {
    settings_scales(settings)?;
    progress.begin_stage("reading heightmap", 0);
    let map = read_heightmap(path)?;
    progress.check().map_err(|_| ImportError::Cancelled)?;
    grid_from_heightmap_with_progress(&map, settings, progress)
}

/// Validated `(cells_per_pixel, vertical_scale)` as `f64`.
fn settings_scales(settings: &HeightmapSettings) -> Result<(f64, f64), ImportError> {
    let check = |name, v: f32| {
        if v.is_finite() && v > 0.0 {
            Ok(v as f64)
        } else {
            Err(ImportError::InvalidSetting {
                name,
                value: v as f64,
            })
        }
    };
    let cpp = check("cells_per_pixel", settings.cells_per_pixel)?;
    let vs = check("vertical_scale", settings.vertical_scale)?;
    if let Some(sea) = settings.sea_level_m
        && !sea.is_finite()
    {
        return Err(ImportError::InvalidSetting {
            name: "sea_level_m",
            value: sea,
        });
    }
    if let Some(base) = settings.base_material
        && !base.is_solid()
    {
        return Err(ImportError::InvalidSetting {
            name: "base_material",
            value: f64::from(base.0),
        });
    }
    Ok((cpp, vs))
}

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
}

impl Layout {
    fn new(map: &Heightmap, settings: &HeightmapSettings) -> Result<Layout, ImportError> {
        let (cpp, vs) = settings_scales(settings)?;
        let (w, h) = (map.width_px, map.height_px);
        if w == 0 || h == 0 {
            return Err(ImportError::ZeroSize {
                width_px: w,
                height_px: h,
            });
        }
        if w > MAX_SIDE_PX || h > MAX_SIDE_PX {
            return Err(ImportError::ImageTooLarge {
                width_px: w,
                height_px: h,
                limit_px: MAX_SIDE_PX,
            });
        }
        if map.samples.len() != w as usize * h as usize {
            return Err(ImportError::InvalidHeightmap(format!(
                "{} samples for {w} × {h} pixels",
                map.samples.len()
            )));
        }
        if let Some(i) = map.samples.iter().position(|s| !s.is_finite()) {
            return Err(ImportError::InvalidHeightmap(format!(
                "sample {i} is not finite"
            )));
        }
        let (aspect, vertical_cells_per_unit, reference, top) = match &map.sidecar {
            Some(s) => {
                let cell_size_m = s.spacing_x_m / cpp;
                (
                    s.spacing_y_m / s.spacing_x_m,
                    vs / cell_size_m,
                    s.min_elevation_m,
                    s.max_elevation_m,
                )
            }
            None => (1.0, NORMALIZED_RELIEF_CELLS * vs, 0.0, 1.0),
        };
        let extent = |px: u32, factor: f64| ((px as f64 * factor).round()).max(1.0);
        let width_cells = extent(w, cpp);
        let depth_cells = extent(h, cpp * aspect);
        if !(width_cells <= MAX_SIDE_CELLS as f64 && depth_cells <= MAX_SIDE_CELLS as f64) {
            return Err(ImportError::TerrainTooLarge {
                width_cells: width_cells.min(u64::MAX as f64) as u64,
                depth_cells: depth_cells.min(u64::MAX as f64) as u64,
                limit_cells: MAX_SIDE_CELLS,
            });
        }
        // The relief that gets built: the samples' range (which may exceed the sidecar's).
        let max_sample = map.samples.iter().copied().fold(reference, f64::max);
        let min_sample = map.samples.iter().copied().fold(reference, f64::min);
        let relief_cells =
            BEDROCK_CELLS + (max_sample - min_sample.min(reference)) * vertical_cells_per_unit;
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
                level.clamp(base, base + MAX_RELIEF_CELLS + CHUNK_SIZE_CELLS as f64)
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
        })
    }

    /// Bilinear sample at column centre `(x + 0.5, z + 0.5)` (cells), edges clamped.
    fn sample(&self, samples: &[f64], x: i64, z: i64) -> f64 {
        let u = ((x as f64 + 0.5) * self.width_px as f64 / self.width_cells as f64 - 0.5)
            .clamp(0.0, (self.width_px - 1) as f64);
        let v = ((z as f64 + 0.5) * self.height_px as f64 / self.depth_cells as f64 - 0.5)
            .clamp(0.0, (self.height_px - 1) as f64);
        let (u0, v0) = (u.floor() as usize, v.floor() as usize);
        let (u1, v1) = (
            (u0 + 1).min(self.width_px - 1),
            (v0 + 1).min(self.height_px - 1),
        );
        let (fu, fv) = (u - u0 as f64, v - v0 as f64);
        let at = |px: usize, py: usize| samples[py * self.width_px + px];
        let top = at(u0, v0) + (at(u1, v0) - at(u0, v0)) * fu;
        let bottom = at(u0, v1) + (at(u1, v1) - at(u0, v1)) * fu;
        top + (bottom - top) * fv
    }

    /// Surface height (cells) of column `(x, z)`.
    fn height(&self, samples: &[f64], x: i64, z: i64) -> f64 {
        self.surface_floor_cells
            + (self.sample(samples, x, z) - self.reference) * self.vertical_cells_per_unit
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
    let layout = Layout::new(map, settings)?;
    let chunks_x = (layout.width_cells + CHUNK_SIZE_CELLS as i64 - 1) / CHUNK_SIZE_CELLS as i64;
    let chunks_z = (layout.depth_cells + CHUNK_SIZE_CELLS as i64 - 1) / CHUNK_SIZE_CELLS as i64;
    let columns: Vec<(i32, i32)> = (0..chunks_z as i32)
        .flat_map(|cz| (0..chunks_x as i32).map(move |cx| (cx, cz)))
        .collect();
    let strata = Strata::new(0);
    progress.begin_stage("importing", columns.len() as u64);
    let chunks: Vec<(ChunkCoord, ChunkCells)> = columns
        .par_iter()
        .flat_map_iter(|&(cx, cz)| {
            if progress.is_cancelled() {
                return Vec::new();
            }
            let table = column_table(&layout, settings, &map.samples, cx, cz);
            let (lo, hi) = table.chunk_y_range();
            let column = (lo..hi)
                .map(|cy| (ChunkCoord::new(cx, cy, cz), table.fill_chunk(&strata, cy)))
                .filter(|(_, cells)| !cells.is_all_empty())
                .collect::<Vec<_>>();
            progress.advance(1);
            column
        })
        .collect();
    progress.check().map_err(|_| ImportError::Cancelled)?;
    Ok(Grid::from_chunks(chunks))
}

/// Column specs of chunk column `(cx, cz)`.
fn column_table(
    layout: &Layout,
    settings: &HeightmapSettings,
    samples: &[f64],
    cx: i32,
    cz: i32,
) -> ColumnTable {
    const N: usize = CHUNK_SIZE_CELLS as usize + 2;
    let x0 = cx as i64 * CHUNK_SIZE_CELLS as i64 - 1;
    let z0 = cz as i64 * CHUNK_SIZE_CELLS as i64 - 1;
    let mut heights = [0.0f64; N * N];
    for (i, h) in heights.iter_mut().enumerate() {
        *h = layout.height(samples, x0 + (i % N) as i64, z0 + (i / N) as i64);
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
    ColumnTable::new(columns)
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
        surface_cells: 2,
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
    use crate::terrain::{Cell, CellCoord};

    /// A fresh scratch directory for one test.
    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("strata-heightmap-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn write_png16(path: &Path, width: u32, height: u32, values: &[u16]) {
        image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::from_raw(width, height, values.to_vec())
            .unwrap()
            .save(path)
            .unwrap();
    }

    fn write_png8(path: &Path, width: u32, height: u32, values: &[u8]) {
        image::GrayImage::from_raw(width, height, values.to_vec())
            .unwrap()
            .save(path)
            .unwrap();
    }

    fn unit_settings() -> HeightmapSettings {
        HeightmapSettings {
            cells_per_pixel: 1.0,
            vertical_scale: 1.0,
            base_height_cells: 0,
            sea_level_m: None,
            base_material: None,
        }
    }

    #[test]
    fn base_material_replaces_the_rock_body_and_must_be_solid() {
        let dir = scratch("base-material");
        let png = dir.join("ridge.png");
        // A 64-cell rise: deep body rows under the ridge.
        write_png8(&png, 3, 1, &[0, 255, 0]);
        let settings = HeightmapSettings {
            base_material: Some(Material::SLATE),
            ..unit_settings()
        };
        let grid = import_heightmap(&png, &settings).unwrap();
        // The body: every solid cell more than 4 rows below the ridge's top
        // (the surface and soil rows above keep their own materials).
        let column: Vec<_> = (0..80)
            .map(|y| grid.cell(crate::terrain::coords::CellCoord(glam::IVec3::new(1, y, 0))))
            .collect();
        let top = column.iter().rposition(|c| !c.is_empty()).unwrap();
        assert!(top > 40, "the ridge is tall");
        for (y, cell) in column.iter().enumerate().take(top - 4) {
            assert_eq!(cell.material(), Material::SLATE, "row {y}");
        }
        for bad in [Material::WATER, Material::AIR] {
            let settings = HeightmapSettings {
                base_material: Some(bad),
                ..unit_settings()
            };
            assert!(matches!(
                import_heightmap(&png, &settings),
                Err(ImportError::InvalidSetting {
                    name: "base_material",
                    ..
                })
            ));
        }
    }

    #[test]
    fn sixteen_bit_column_has_exact_occupancies() {
        let dir = scratch("exact16");
        let png = dir.join("map.png");
        write_png16(&png, 2, 2, &[25; 4]);
        // 4 m cells; value v is v metres, so 25 m = 6.25 cells above the 4-cell bedrock.
        std::fs::write(
            dir.join("map.json"),
            r#"{"spacing_x_m": 4, "spacing_y_m": 4, "min_elevation_m": 0, "max_elevation_m": 65535}"#,
        )
        .unwrap();
        let grid = import_heightmap(&png, &unit_settings()).unwrap();
        for (x, z) in [(0, 0), (1, 1)] {
            for y in 0..10 {
                assert_eq!(grid.cell(CellCoord::new(x, y, z)).occupancy(), 255, "y {y}");
            }
            let top = grid.cell(CellCoord::new(x, 10, z));
            assert_eq!(top.occupancy(), 64);
            assert!(top.material().is_solid());
            assert_eq!(grid.cell(CellCoord::new(x, 11, z)), Cell::EMPTY);
        }
        assert_eq!(
            grid.cell(CellCoord::new(0, 0, 0)),
            Cell::full(Material::ROCK)
        );
        assert_eq!(
            grid.cell(CellCoord::new(0, 10, 0)).material(),
            Material::MUD
        );
        assert_eq!(grid.cell(CellCoord::new(2, 0, 0)), Cell::EMPTY);
        assert_eq!(grid.cell(CellCoord::new(0, 0, 2)), Cell::EMPTY);
        assert_eq!(grid.cell(CellCoord::new(0, -1, 0)), Cell::EMPTY);
    }

    #[test]
    fn eight_bit_without_sidecar_resamples_bilinearly() {
        let dir = scratch("eight");
        let png = dir.join("ramp.png");
        write_png8(&png, 3, 1, &[0, 51, 255]);
        let settings = HeightmapSettings {
            cells_per_pixel: 2.0,
            ..unit_settings()
        };
        let map = read_heightmap(&png).unwrap();
        assert_eq!(
            (map.width_px, map.height_px, map.sidecar.as_ref()),
            (3, 1, None)
        );
        assert_eq!(map.samples, vec![0.0, 0.2, 1.0]);
        let grid = grid_from_heightmap(&map, &settings).unwrap();
        // 6 × 2 cells. Where Surface Nets puts each column's surface: the
        // linear 0.5 crossing above its highest inside sample.
        let surface = |x: i32| {
            let solid = |y: i32| grid.cell(CellCoord::new(x, y, 0)).solid_occupancy() as f64;
            let y = (0..100).rev().find(|&y| solid(y) >= 128.0).unwrap();
            y as f64 + 0.5 + (solid(y) - 127.5) / (solid(y) - solid(y + 1))
        };
        // Column 0 samples pixel 0 (clamped): surface at 4 cells.
        assert!((surface(0) - 4.0).abs() < 0.02, "{}", surface(0));
        // Column 2 samples u = 0.75: 0.15 × 64 cells = 9.6, surface 13.6.
        assert!((surface(2) - 13.6).abs() < 0.02, "{}", surface(2));
        // Column 5 samples pixel 2: full value, surface exactly 68.
        assert!((surface(5) - 68.0).abs() < 0.02, "{}", surface(5));
        assert_eq!(grid.cell(CellCoord::new(5, 60, 0)).occupancy(), 255);
        assert_eq!(grid.cell(CellCoord::new(5, 71, 0)), Cell::EMPTY);
        assert_eq!(grid.cell(CellCoord::new(6, 0, 0)), Cell::EMPTY);
        assert_eq!(grid.cell(CellCoord::new(0, 0, 2)), Cell::EMPTY);
    }

    #[test]
    fn sidecar_spacing_sets_the_depth() {
        let dir = scratch("spacing");
        let png = dir.join("tall.png");
        write_png16(&png, 4, 4, &[1000; 16]);
        std::fs::write(
            dir.join("tall.json"),
            r#"{"spacing_x_m": 10, "spacing_y_m": 20, "min_elevation_m": 0, "max_elevation_m": 100, "width": 4, "height": 4}"#,
        )
        .unwrap();
        let extent = |cells_per_pixel| {
            let grid = import_heightmap(
                &png,
                &HeightmapSettings {
                    cells_per_pixel,
                    ..unit_settings()
                },
            )
            .unwrap();
            let (mut w, mut d) = (0, 0);
            while grid.cell(CellCoord::new(w, 0, 0)).occupancy() > 0 {
                w += 1;
            }
            while grid.cell(CellCoord::new(0, 0, d)).occupancy() > 0 {
                d += 1;
            }
            (w, d)
        };
        assert_eq!(extent(1.0), (4, 8));
        assert_eq!(extent(2.5), (10, 20));
    }

    #[test]
    fn coastline_with_bathymetry_floods_below_zero_elevation() {
        // A 16-bit coast: -120 m offshore (x = 0) rising to +360 m inland
        // (x = 63), 30 m pixels, sea level at 0 m.
        let dir = scratch("coast16");
        let png = dir.join("coast.png");
        let (w, h) = (64u32, 8u32);
        let values: Vec<u16> = (0..h)
            .flat_map(|_| (0..w).map(|x| (x as f64 / (w - 1) as f64 * 65535.0).round() as u16))
            .collect();
        write_png16(&png, w, h, &values);
        std::fs::write(
            dir.join("coast.json"),
            r#"{"spacing_x_m": 30.0, "spacing_y_m": 30.0, "min_elevation_m": -120.0,
                "max_elevation_m": 360.0}"#,
        )
        .unwrap();
        let settings = HeightmapSettings {
            sea_level_m: Some(0.0),
            ..HeightmapSettings::default()
        };
        let grid = import_heightmap(&png, &settings).unwrap();
        // The water surface: top water cell of each column (x in cells) along z = 4.
        let water_top = |x: i32| {
            (0..256)
                .rev()
                .find(|&y| grid.cell(CellCoord::new(x, y, 4)).water_occupancy() > 0)
                .map(|y| {
                    y as f64 + grid.cell(CellCoord::new(x, y, 4)).water_occupancy() as f64 / 255.0
                })
        };
        // Offshore columns hold water, all with the same flat top.
        let offshore = water_top(2).expect("the sea covers the shallow shelf");
        for x in 0..20 {
            let top = water_top(x).expect("offshore water");
            assert!(
                (top - offshore).abs() < 1.0 / 255.0 + 1e-9,
                "column {x}: {top} vs {offshore}"
            );
        }
        // Elevation 0 m is a quarter of the way inland: x ≈ 0.25 · 63 px · 2 cells.
        let shore_x = (0.25 * 63.0 * 2.0) as i32;
        // Well inland, no water at all.
        for x in shore_x + 8..120 {
            assert_eq!(water_top(x), None, "column {x}");
        }
        // Water never sits inside solid: every water cell has no solid.
        for x in 0..shore_x {
            for y in 0..64 {
                let c = grid.cell(CellCoord::new(x, y, 4));
                assert!(c.water_occupancy() == 0 || !c.material().is_solid());
            }
        }
    }

    #[test]
    fn sea_level_fills_low_columns_with_water() {
        let dir = scratch("sea");
        let png = dir.join("coast.png");
        write_png8(&png, 2, 1, &[0, 255]);
        let settings = HeightmapSettings {
            sea_level_m: Some(0.1),
            ..unit_settings()
        };
        let grid = import_heightmap(&png, &settings).unwrap();
        // Water level 4 + 0.1 × 64 = 10.4 cells; column 0's surface is at 4,
        // next to a sheer rise, so its fractional band is the tallest allowed
        // (4 cells) and its top cell (row 5) is solid: round(0.125 · 255) = 32.
        assert_eq!(grid.cell(CellCoord::new(0, 5, 0)).occupancy(), 32);
        assert!(grid.cell(CellCoord::new(0, 5, 0)).material().is_solid());
        assert_eq!(
            grid.cell(CellCoord::new(0, 6, 0)),
            Cell::full(Material::WATER)
        );
        assert_eq!(
            grid.cell(CellCoord::new(0, 10, 0)),
            Cell::new(Material::WATER, 102)
        );
        assert_eq!(grid.cell(CellCoord::new(0, 11, 0)), Cell::EMPTY);
        assert!(grid.cell(CellCoord::new(1, 20, 0)).material().is_solid());
    }

    #[test]
    fn file_errors_have_their_own_variants() {
        let dir = scratch("errors");
        let missing = dir.join("missing.png");
        assert!(
            matches!(read_heightmap(&missing), Err(ImportError::NotFound { path }) if path == missing)
        );

        let text = dir.join("text.png");
        std::fs::write(&text, "not a png").unwrap();
        assert!(matches!(
            read_heightmap(&text),
            Err(ImportError::Decode { .. })
        ));

        let truncated = dir.join("truncated.png");
        write_png8(&truncated, 8, 8, &[7; 64]);
        let bytes = std::fs::read(&truncated).unwrap();
        std::fs::write(&truncated, &bytes[..bytes.len() - 20]).unwrap();
        assert!(matches!(
            read_heightmap(&truncated),
            Err(ImportError::Decode { .. })
        ));

        let colour = dir.join("colour.png");
        image::RgbImage::from_raw(2, 1, vec![10, 200, 30, 5, 5, 5])
            .unwrap()
            .save(&colour)
            .unwrap();
        let err = read_heightmap(&colour).unwrap_err();
        assert!(matches!(err, ImportError::UnsupportedColor { .. }), "{err}");
        assert!(err.to_string().contains("Rgb8"), "{err}");

        let gray_rgb = dir.join("gray_rgb.png");
        image::RgbImage::from_raw(2, 1, vec![0, 0, 0, 255, 255, 255])
            .unwrap()
            .save(&gray_rgb)
            .unwrap();
        assert_eq!(read_heightmap(&gray_rgb).unwrap().samples, vec![0.0, 1.0]);
    }

    #[test]
    fn bad_sidecars_name_the_file_and_field() {
        let dir = scratch("sidecar");
        let png = dir.join("dem.png");
        write_png8(&png, 2, 2, &[1; 4]);
        let json = dir.join("dem.json");
        let check = |text: &str, needle: &str| {
            std::fs::write(&json, text).unwrap();
            let err = read_heightmap(&png).unwrap_err();
            assert!(
                matches!(&err, ImportError::Sidecar { path, .. } if *path == json),
                "{err}"
            );
            let message = err.to_string();
            assert!(
                message.contains(needle) && message.contains("dem.json"),
                "{message}"
            );
        };
        check(
            r#"{"spacing_x_m": 1, "min_elevation_m": 0, "max_elevation_m": 1}"#,
            "spacing_y_m",
        );
        check(
            r#"{"spacing_x_m": -1, "spacing_y_m": 1, "min_elevation_m": 0, "max_elevation_m": 1}"#,
            "spacing_x_m",
        );
        check(
            r#"{"spacing_x_m": 1, "spacing_y_m": 1, "min_elevation_m": 9, "max_elevation_m": 1}"#,
            "max_elevation_m",
        );
        check(
            r#"{"spacing_x_m": 1, "spacing_y_m": 1, "min_elevation_m": 0, "max_elevation_m": 1, "width": 3}"#,
            "width",
        );
        check(r#"{"spacing_x_m": "wide"}"#, "spacing_x_m");
        check(r#"{"spacing_x_m": 1"#, "line 1");
    }

    #[test]
    fn bad_settings_and_sizes_are_rejected_before_allocating() {
        let map = Heightmap {
            width_px: 200,
            height_px: 100,
            samples: vec![0.5; 200 * 100],
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
                width_cells: 20_000,
                depth_cells: 10_000,
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
            samples: Vec::new(),
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
            samples: Vec::new(),
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
            samples: vec![0.0; 3],
            ..map.clone()
        };
        assert!(matches!(
            grid_from_heightmap(&short, &unit_settings()),
            Err(ImportError::InvalidHeightmap(_))
        ));
        let nan = Heightmap {
            samples: vec![f64::NAN; 200 * 100],
            ..map.clone()
        };
        assert!(matches!(
            grid_from_heightmap(&nan, &unit_settings()),
            Err(ImportError::InvalidHeightmap(_))
        ));
    }

    /// A PNG whose header claims 20000 × 20000 pixels is refused from the
    /// header alone.
    #[test]
    fn huge_png_header_is_refused() {
        fn crc32(bytes: &[u8]) -> u32 {
            let mut crc = 0xFFFF_FFFFu32;
            for &b in bytes {
                crc ^= b as u32;
                for _ in 0..8 {
                    crc = if crc & 1 != 0 {
                        (crc >> 1) ^ 0xEDB8_8320
                    } else {
                        crc >> 1
                    };
                }
            }
            !crc
        }
        fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
            out.extend_from_slice(&(data.len() as u32).to_be_bytes());
            let mut body = kind.to_vec();
            body.extend_from_slice(data);
            out.extend_from_slice(&body);
            out.extend_from_slice(&crc32(&body).to_be_bytes());
        }
        let mut png = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
        let mut ihdr = Vec::new();
        ihdr.extend_from_slice(&20_000u32.to_be_bytes());
        ihdr.extend_from_slice(&20_000u32.to_be_bytes());
        ihdr.extend_from_slice(&[16, 0, 0, 0, 0]);
        chunk(&mut png, b"IHDR", &ihdr);
        chunk(&mut png, b"IDAT", &[0x78, 0x9C, 0x03, 0x00]);
        chunk(&mut png, b"IEND", &[]);
        let dir = scratch("huge");
        let path = dir.join("huge.png");
        std::fs::write(&path, png).unwrap();
        let err = read_heightmap(&path).unwrap_err();
        assert!(
            matches!(
                err,
                ImportError::ImageTooLarge {
                    width_px: 20_000,
                    height_px: 20_000,
                    ..
                }
            ),
            "{err}"
        );
    }
}
