//! What a heightmap is before it becomes terrain: the in-memory elevation
//! model ([`Heightmap`], samples plus an optional [`HeightmapSidecar`]
//! giving its real-world spacing and elevation range), the import settings,
//! the size limits, and every check that runs on the map's size and
//! settings before anything large is allocated ([`ImportError`]). Reading
//! the PNG and its JSON sidecar is file decoding and lives in
//! `io::heightmap::heightmap_import` (above this layer); building cells from
//! the samples is [`heightmap_terrain`](super::heightmap_terrain).

use std::path::PathBuf;
use std::sync::Arc;

use crate::terrain::generation::tiled_samples::{TileReadError, TiledSamples};
use crate::terrain::storage::cell::Material;

/// Largest accepted PNG width or height, in pixels (checked from the header,
/// with [`MAX_PIXELS`]): a 65 536-pixel strip still fits the pixel limit.
pub const MAX_SIDE_PX: u32 = 1 << 16;

/// Largest accepted number of pixels (width × height, checked from the
/// header): 2³⁰, a 32 768² map, whose samples take 2 GiB as 16-bit codes
/// ([`HeightSamples::Codes`]).
pub const MAX_PIXELS: u64 = 1 << 30;

/// Largest accepted terrain extent along x or z of a heightmap built whole
/// ([`grid_from_heightmap`](super::heightmap_terrain::grid_from_heightmap)),
/// in cells (the same limit as generated worlds built whole, see
/// [`crate::terrain::generation::generate::MAX_SIZE_CELLS`]).
pub const MAX_SIDE_CELLS: u64 = crate::terrain::generation::generate::MAX_SIZE_CELLS as u64;

/// Largest accepted terrain extent along x or z of a streamed heightmap
/// ([`HeightmapTerrain::streaming`](super::heightmap_terrain::HeightmapTerrain::streaming)),
/// in cells (the streaming world limit,
/// [`crate::terrain::generation::generate::MAX_STREAMING_SIZE_CELLS`]).
pub const MAX_STREAMING_SIDE_CELLS: u64 =
    crate::terrain::generation::generate::MAX_STREAMING_SIZE_CELLS as u64;

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
    /// What the samples a file marks as missing (GeoTIFF NoData, NaN in an
    /// EXR) become. PNG heightmaps have no missing samples.
    pub nodata: NoDataFill,
    /// How a headless RAW16 heightmap is laid out (other formats say so in
    /// their header).
    pub raw: RawLayout,
}

/// The layout of a headerless 16-bit RAW heightmap (Unity's `.r16`/`.raw`,
/// World Machine, Gaea): row-major `u16` samples, row 0 north.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawLayout {
    /// `(width, height)` in pixels; `None` takes a square whose side the
    /// file's length gives (as Unity writes them).
    pub size_px: Option<(u32, u32)>,
    /// True for big-endian samples (Mac exports); false for little-endian
    /// (Unity's default on Windows).
    pub big_endian: bool,
}

/// What a heightmap's missing samples (NoData) become.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NoDataFill {
    /// The world floor: the lowest valid elevation, so the column keeps only
    /// its bedrock.
    #[default]
    Floor,
    /// Sea: the sea floor a little below the sea level (the import's sea
    /// level, or the lowest valid elevation when it has none, which then
    /// becomes its sea level), under water.
    Sea,
}

impl NoDataFill {
    /// The setting's name as files and the command line spell it.
    pub fn name(self) -> &'static str {
        match self {
            NoDataFill::Floor => "floor",
            NoDataFill::Sea => "sea",
        }
    }

    /// The fill named `name` (`"floor"` or `"sea"`).
    pub fn from_name(name: &str) -> Option<NoDataFill> {
        match name {
            "floor" => Some(NoDataFill::Floor),
            "sea" => Some(NoDataFill::Sea),
            _ => None,
        }
    }
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
            nodata: NoDataFill::Floor,
            raw: RawLayout::default(),
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

/// The elevation samples of a heightmap, row-major.
///
/// A PNG's samples are kept as its pixel codes (2 bytes a sample, so a
/// 16 384² map takes 512 MiB, not 2 GiB as `f64`) and mapped on read;
/// hand-built maps may hold any values; a large tiled file streamed from a
/// world file is read a tile at a time ([`HeightSamples::Tiled`]).
#[derive(Clone, Debug, PartialEq)]
pub enum HeightSamples {
    /// Any values, 8 bytes a sample.
    Values(Vec<f64>),
    /// Values held in `f32`, 4 bytes a sample: elevation models whose file
    /// stores `f32` or 16-bit integers (exact in `f32`), such as GeoTIFF,
    /// EXR and RAW heightmaps.
    Floats(Vec<f32>),
    /// Pixel codes: sample `i` is `offset + (codes[i] / max_code) · scale`,
    /// evaluated in that order in `f64` (so a sidecar's
    /// `min + (v / (2^B − 1)) · (max − min)` is bit-exact).
    Codes {
        /// The pixel values.
        codes: Vec<u16>,
        /// The largest pixel value of the bit depth (255 or 65535).
        max_code: f64,
        /// Sample of code 0.
        offset: f64,
        /// Sample of `max_code` minus `offset`.
        scale: f64,
    },
    /// Read a tile at a time from the file, through a bounded cache
    /// ([`TiledSamples`]): a streamed GeoTIFF.
    Tiled(Arc<TiledSamples>),
}

impl From<Vec<f64>> for HeightSamples {
    fn from(values: Vec<f64>) -> HeightSamples {
        HeightSamples::Values(values)
    }
}

impl HeightSamples {
    /// Number of samples.
    pub fn len(&self) -> usize {
        match self {
            HeightSamples::Values(v) => v.len(),
            HeightSamples::Floats(v) => v.len(),
            HeightSamples::Codes { codes, .. } => codes.len(),
            HeightSamples::Tiled(t) => {
                let (w, h) = t.size_px();
                w as usize * h as usize
            }
        }
    }

    /// True when there is no sample.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sample `i` (row-major index); `i` must be below [`HeightSamples::len`]
    /// (indexing panics otherwise, as for a slice). NaN where a tile of
    /// [`HeightSamples::Tiled`] cannot be read; see [`HeightSamples::try_get`].
    #[inline]
    pub fn get(&self, i: usize) -> f64 {
        self.try_get(i).unwrap_or(f64::NAN)
    }

    /// Sample `i` as [`HeightSamples::get`], with the error of a tile that
    /// cannot be read.
    ///
    /// # Errors
    /// [`TileReadError`] (tiled samples only).
    #[inline]
    pub fn try_get(&self, i: usize) -> Result<f64, TileReadError> {
        Ok(match self {
            HeightSamples::Values(v) => v[i],
            HeightSamples::Floats(v) => f64::from(v[i]),
            HeightSamples::Codes {
                codes,
                max_code,
                offset,
                scale,
            } => offset + (f64::from(codes[i]) / max_code) * scale,
            HeightSamples::Tiled(t) => {
                let w = t.size_px().0 as usize;
                // Pixel coordinates of a raster within 2^29 samples fit u32.
                f64::from(t.get((i % w) as u32, (i / w) as u32)?)
            }
        })
    }

    /// Every sample, in order.
    pub fn iter(&self) -> impl Iterator<Item = f64> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The samples at pixels `(x0, y0)`, `(x1, y0)`, `(x0, y1)` and
    /// `(x1, y1)` of a raster `width_px` wide (a bilinear sample's taps),
    /// in that order: as four [`HeightSamples::try_get`], with one tile
    /// lookup where tiled taps share a tile.
    ///
    /// # Errors
    /// [`TileReadError`] (tiled samples only).
    #[inline]
    pub fn try_taps(
        &self,
        width_px: usize,
        (x0, y0): (usize, usize),
        (x1, y1): (usize, usize),
    ) -> Result<[f64; 4], TileReadError> {
        if let HeightSamples::Tiled(t) = self {
            // Pixel coordinates of a raster within 2^29 samples fit u32.
            let taps = t.taps((x0 as u32, y0 as u32), (x1 as u32, y1 as u32))?;
            return Ok(taps.map(f64::from));
        }
        let at = |x: usize, y: usize| self.try_get(y * width_px + x);
        Ok([at(x0, y0)?, at(x1, y0)?, at(x0, y1)?, at(x1, y1)?])
    }

    /// Heap bytes the samples take (the tiles held now, for tiled ones).
    pub fn heap_bytes(&self) -> usize {
        match self {
            HeightSamples::Values(v) => v.len() * std::mem::size_of::<f64>(),
            HeightSamples::Floats(v) => v.len() * std::mem::size_of::<f32>(),
            HeightSamples::Codes { codes, .. } => codes.len() * std::mem::size_of::<u16>(),
            HeightSamples::Tiled(t) => t.cached_bytes(),
        }
    }

    /// `(min, max)` over the samples, or `Err(i)` with the first sample that
    /// is not finite. One pass over the codes (a code table, not a float
    /// per sample) for [`HeightSamples::Codes`]; the range the reader found
    /// when it scanned the file for [`HeightSamples::Tiled`].
    pub(super) fn range(&self) -> Result<(f64, f64), usize> {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut take = |v: f64| {
            lo = lo.min(v);
            hi = hi.max(v);
        };
        match self {
            HeightSamples::Values(values) => {
                if let Some(i) = values.iter().position(|s| !s.is_finite()) {
                    return Err(i);
                }
                values.iter().copied().for_each(take);
            }
            HeightSamples::Floats(values) => {
                if let Some(i) = values.iter().position(|s| !s.is_finite()) {
                    return Err(i);
                }
                values.iter().map(|&s| f64::from(s)).for_each(take);
            }
            HeightSamples::Tiled(t) => {
                let (lo, hi) = t.range_m();
                take(lo);
                take(hi);
            }
            HeightSamples::Codes { codes, .. } => {
                let mut present = vec![false; 1 << 16];
                for &c in codes {
                    present[c as usize] = true;
                }
                for (code, _) in present.iter().enumerate().filter(|(_, p)| **p) {
                    let v = self.value_of_code(code as u16);
                    if !v.is_finite() {
                        let first = codes.iter().position(|&c| c as usize == code);
                        return Err(first.unwrap_or(0));
                    }
                    take(v);
                }
            }
        }
        Ok((lo, hi))
    }

    /// The sample a pixel code maps to (codes only; values are returned as
    /// they are by [`HeightSamples::get`]).
    fn value_of_code(&self, code: u16) -> f64 {
        match self {
            HeightSamples::Values(_) | HeightSamples::Floats(_) | HeightSamples::Tiled(_) => {
                f64::from(code)
            }
            HeightSamples::Codes {
                max_code,
                offset,
                scale,
                ..
            } => offset + (f64::from(code) / max_code) * scale,
        }
    }
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
    pub samples: HeightSamples,
    /// The sidecar, when one was found next to the PNG.
    pub sidecar: Option<HeightmapSidecar>,
}

/// Why a heightmap could not be imported. The grid is never partially built.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The import was cancelled
    /// ([`Progress::cancel`](crate::progress::Progress::cancel)); no grid was
    /// built.
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
    /// The PNG is larger than [`MAX_SIDE_PX`] on a side or has more than
    /// [`MAX_PIXELS`] pixels.
    #[error(
        "heightmap of {width_px} × {height_px} pixels exceeds the limits of {limit_px} pixels per side and {limit_pixels} pixels in all"
    )]
    ImageTooLarge {
        /// Width in pixels.
        width_px: u32,
        /// Height in pixels.
        height_px: u32,
        /// The side limit.
        limit_px: u32,
        /// The pixel-count limit.
        limit_pixels: u64,
    },
    /// The terrain would exceed its side limit in cells ([`MAX_SIDE_CELLS`]
    /// built whole, [`MAX_STREAMING_SIDE_CELLS`] streamed).
    #[error(
        "terrain of {} × {} cells exceeds the limit of {limit_cells} cells per side; lower cells_per_pixel",
        cell_count(*width_cells),
        cell_count(*depth_cells)
    )]
    TerrainTooLarge {
        /// Extent along x, cells (computed in `f64`, so never saturated;
        /// infinite only beyond `f64::MAX`).
        width_cells: f64,
        /// Extent along z, cells (as `width_cells`).
        depth_cells: f64,
        /// The limit.
        limit_cells: u64,
    },
    /// The PNG or the sidecar is not a regular file (a FIFO, a device, a
    /// directory), checked before it is opened for reading.
    #[error("cannot read {path}: it is a {kind}, not a regular file")]
    NotRegularFile {
        /// The file.
        path: PathBuf,
        /// What it is, e.g. "FIFO".
        kind: &'static str,
    },
    /// The PNG or the sidecar is larger than its reader's limit.
    #[error(
        "cannot read {path}: it is {size_bytes} bytes, more than the limit of {limit_bytes} bytes"
    )]
    FileTooLarge {
        /// The file.
        path: PathBuf,
        /// Its size, bytes.
        size_bytes: u64,
        /// The limit, bytes.
        limit_bytes: u64,
    },
    /// The relief would exceed [`MAX_RELIEF_CELLS`], or the terrain would
    /// leave the `i32` lattice.
    #[error(
        "terrain relief of {} cells above base {base_height_cells} exceeds the limit of {limit_cells} cells; lower vertical_scale",
        cell_count(*relief_cells)
    )]
    TerrainTooTall {
        /// Relief in cells.
        relief_cells: f64,
        /// The base height, cells.
        base_height_cells: i32,
        /// The limit.
        limit_cells: f64,
    },
    /// The sea level would flood more than the terrain can hold.
    #[error(
        "sea level {sea_level_m} would put water {} cells above the terrain's base, more than the limit of {limit_cells}; lower the sea level",
        cell_count(*water_cells)
    )]
    SeaTooHigh {
        /// The sea level, in the heightmap's sample units.
        sea_level_m: f64,
        /// Water depth above the base it would make, cells.
        water_cells: f64,
        /// The limit, cells.
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
    /// A GeoTIFF, EXR or RAW heightmap is corrupt, truncated or of a kind
    /// the importer does not read.
    #[error("{path} is not a readable {format}: {message}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The format it was read as (`"GeoTIFF"`, `"EXR"`, `"RAW16"`).
        format: &'static str,
        /// What is wrong.
        message: String,
    },
    /// A sample is NaN or infinite and not the file's NoData value (a
    /// GeoTIFF's `GDAL_NODATA`, an EXR's NaN).
    #[error(
        "{path}: the sample at pixel ({x_px}, {y_px}) is {value}, not an elevation (nor the file's NoData value)"
    )]
    BadSample {
        /// The file.
        path: PathBuf,
        /// Pixel column (0 west).
        x_px: u32,
        /// Pixel row (0 north).
        y_px: u32,
        /// The sample.
        value: f64,
    },
    /// Every sample of the file is NoData.
    #[error("{path}: every sample is NoData; there is no elevation to import")]
    NoValidSample {
        /// The file.
        path: PathBuf,
    },
    /// A headerless RAW heightmap's length fits no size: not square, and no
    /// size was given, or not the size given.
    #[error("{path}: {message}")]
    RawSize {
        /// The file.
        path: PathBuf,
        /// What the length is and what it would have to be.
        message: String,
    },
    /// A [`Heightmap`] built by hand is inconsistent (sample count, non-finite samples).
    #[error("invalid heightmap: {0}")]
    InvalidHeightmap(String),
}

/// A cell count for messages: whole numbers up to 10¹⁵, then scientific
/// notation; never a saturated integer.
fn cell_count(cells: f64) -> String {
    if cells.is_nan() {
        "an undefined number of".to_string()
    } else if !cells.is_finite() {
        format!("more than {:.1e}", f64::MAX)
    } else if cells < 1e15 {
        format!("{cells:.0}")
    } else {
        format!("{cells:.3e}")
    }
}

/// Checks a map's size in pixels (from the PNG header, before decoding):
/// both sides positive, at most [`MAX_SIDE_PX`], at most [`MAX_PIXELS`] in
/// all.
///
/// # Errors
/// [`ImportError::ZeroSize`] and [`ImportError::ImageTooLarge`].
pub fn check_image_size(width_px: u32, height_px: u32) -> Result<(), ImportError> {
    check_raster_size(width_px, height_px, MAX_PIXELS)
}

/// [`check_image_size`] with another limit on the pixels in all (a
/// format whose samples take more than 2 bytes holds fewer).
///
/// # Errors
/// [`ImportError::ZeroSize`] and [`ImportError::ImageTooLarge`].
pub fn check_raster_size(
    width_px: u32,
    height_px: u32,
    limit_pixels: u64,
) -> Result<(), ImportError> {
    if width_px == 0 || height_px == 0 {
        return Err(ImportError::ZeroSize {
            width_px,
            height_px,
        });
    }
    if width_px > MAX_SIDE_PX
        || height_px > MAX_SIDE_PX
        || u64::from(width_px) * u64::from(height_px) > limit_pixels
    {
        return Err(ImportError::ImageTooLarge {
            width_px,
            height_px,
            limit_px: MAX_SIDE_PX,
            limit_pixels,
        });
    }
    Ok(())
}

/// The terrain's extent `(width_cells, depth_cells)` for a `width_px` ×
/// `height_px` map with `sidecar` under `settings`, checked against
/// `limit_cells` per side ([`MAX_SIDE_CELLS`] for a grid built whole,
/// [`MAX_STREAMING_SIDE_CELLS`] for a streamed one): what the importer
/// checks from the PNG header and the sidecar before decoding any pixel.
///
/// # Errors
/// [`ImportError::InvalidSetting`] and [`ImportError::TerrainTooLarge`].
pub fn terrain_extent_cells(
    width_px: u32,
    height_px: u32,
    sidecar: Option<&HeightmapSidecar>,
    settings: &HeightmapSettings,
    limit_cells: u64,
) -> Result<(f64, f64), ImportError> {
    let (cpp, _) = settings_scales(settings)?;
    let extent = |px: u32, factor: f64| ((px as f64 * factor).round()).max(1.0);
    let (width_cells, depth_cells) = match sidecar {
        Some(s) => (
            extent(width_px, cpp),
            extent(height_px, cpp * (s.spacing_y_m / s.spacing_x_m)),
        ),
        None => (extent(width_px, cpp), extent(height_px, cpp)),
    };
    if !(width_cells <= limit_cells as f64 && depth_cells <= limit_cells as f64) {
        return Err(ImportError::TerrainTooLarge {
            width_cells,
            depth_cells,
            limit_cells,
        });
    }
    Ok((width_cells, depth_cells))
}

/// Checks `settings` before anything is read or built.
///
/// # Errors
/// [`ImportError::InvalidSetting`] for a non-finite or non-positive scale, a
/// non-finite sea level or a base material that is not solid.
pub fn check_settings(settings: &HeightmapSettings) -> Result<(), ImportError> {
    settings_scales(settings).map(|_| ())
}

/// Validated `(cells_per_pixel, vertical_scale)` as `f64`.
pub(super) fn settings_scales(settings: &HeightmapSettings) -> Result<(f64, f64), ImportError> {
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
