//! The files of a heightmap export: a surface's elevations written as a
//! 16-bit PNG, RAW16, float32 EXR or float32 GeoTIFF, each whole or not at
//! all, and the JSON sidecar with the importers' fields and the values the
//! Unreal Landscape and Unity Terrain import dialogs ask for (see
//! [`crate::io::heightmap::heightmap_export`]).

use std::io::BufWriter;
use std::path::{Path, PathBuf};

use super::formats::engine_sizes::EngineSize;
use super::formats::exr_heightmap::write_exr;
use super::formats::geotiff_export::{GeoTiffTags, write_geotiff};
use super::formats::raw16::write_raw16;
use super::heightmap_import::sidecar_path;
use super::world_georeference::{ModelSpace, WorldGeoreference};
use crate::io::{ExportError, write_atomically};

/// How [`export_heightmap`](super::heightmap_export::export_heightmap) writes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HeightmapExportOptions {
    /// Resample the surface to an engine's size; `None` writes one sample
    /// a cell column.
    pub size: Option<EngineSize>,
    /// RAW16 byte order: big-endian (Mac) instead of little (Windows).
    pub big_endian: bool,
}

/// The formats [`export_heightmap`](super::heightmap_export::export_heightmap)
/// writes, by extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// `.png`: 16-bit grayscale.
    Png,
    /// `.r16`, `.raw`: headerless 16-bit.
    Raw16,
    /// `.exr`: float32.
    Exr,
    /// `.tif`, `.tiff`: float32 GeoTIFF.
    GeoTiff,
}

impl ExportFormat {
    /// The format a path's extension names (case-insensitive).
    pub fn of_path(path: &Path) -> Option<ExportFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "png" => Some(ExportFormat::Png),
            "r16" | "raw" => Some(ExportFormat::Raw16),
            "exr" => Some(ExportFormat::Exr),
            "tif" | "tiff" => Some(ExportFormat::GeoTiff),
            _ => None,
        }
    }

    /// True when the format carries its scale in a JSON sidecar.
    pub fn has_sidecar(self) -> bool {
        self != ExportFormat::GeoTiff
    }
}

/// A surface's elevations, ready to write.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SurfaceElevations {
    /// Samples along +x.
    pub width: u32,
    /// Samples along +z.
    pub depth: u32,
    /// Elevations, metres, row-major, row 0 north; NaN without ground.
    pub samples_m: Vec<f32>,
    /// Metres between samples `(along x, along z)`.
    pub spacing_m: (f64, f64),
    /// Lowest and highest elevation, metres.
    pub range_m: (f64, f64),
    /// Cell column of the crop's north-west corner.
    pub origin_cells: (i32, i32),
    /// Cells between samples `(along x, along z)` (1 without resampling).
    pub sample_cells: (f64, f64),
}

impl SurfaceElevations {
    /// The elevations as 16-bit codes over the range (0 where missing).
    fn codes(&self) -> Vec<u16> {
        let (lo, hi) = self.range_m;
        let range = hi - lo;
        self.samples_m
            .iter()
            .map(|&s| {
                let t = if range > 0.0 && !s.is_nan() {
                    (f64::from(s) - lo) / range
                } else {
                    0.0
                };
                (t * 65535.0).round().clamp(0.0, 65535.0) as u16
            })
            .collect()
    }
}

/// Writes `elevations` to `path` as `format` and, for the formats that have
/// one, the sidecar beside it, whose path is returned.
///
/// # Errors
/// [`ExportError::Write`] naming the file that could not be written.
pub(crate) fn write_surface(
    path: &Path,
    format: ExportFormat,
    elevations: &SurfaceElevations,
    georeference: &WorldGeoreference,
    options: &HeightmapExportOptions,
) -> Result<Option<PathBuf>, ExportError> {
    let fail = |e: &dyn std::fmt::Display| ExportError::write(path, e);
    let (w, d) = (elevations.width, elevations.depth);
    match format {
        ExportFormat::Png => {
            let image = image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::from_raw(
                w,
                d,
                elevations.codes(),
            )
            .ok_or_else(|| fail(&"pixel buffer does not match the image size"))?;
            write_atomically(
                path,
                |tmp| {
                    image
                        .save_with_format(tmp, image::ImageFormat::Png)
                        .map_err(|e| fail(&e))
                },
                |e| fail(&e),
            )?;
        }
        ExportFormat::Raw16 => {
            let codes = elevations.codes();
            write_atomically(
                path,
                |tmp| {
                    let file = std::fs::File::create(tmp).map_err(|e| fail(&e))?;
                    let mut out = BufWriter::new(file);
                    write_raw16(&mut out, &codes, options.big_endian).map_err(|e| fail(&e))?;
                    std::io::Write::flush(&mut out).map_err(|e| fail(&e))
                },
                |e| fail(&e),
            )?;
        }
        ExportFormat::Exr => write_atomically(
            path,
            |tmp| write_exr(tmp, w, d, &elevations.samples_m).map_err(|e| fail(&e)),
            |e| fail(&e),
        )?,
        ExportFormat::GeoTiff => {
            write_geotiff_file(path, elevations, georeference)?;
            return Ok(None);
        }
    }
    write_sidecar(path, format, elevations, options).map(Some)
}

/// Writes the GeoTIFF of `elevations` with the georeference's model space
/// for the crop (the studs' user-defined metres when it has none).
fn write_geotiff_file(
    path: &Path,
    elevations: &SurfaceElevations,
    georeference: &WorldGeoreference,
) -> Result<(), ExportError> {
    let fail = |e: &dyn std::fmt::Display| ExportError::write(path, e);
    let model: ModelSpace = georeference.model_space();
    let (sx, sz) = elevations.sample_cells;
    let [ux, uy] = model.units_per_cell;
    // The north-west corner of sample (0, 0)'s pixel, in cells: the crop's
    // first column centre less half a sample.
    let corner_x = f64::from(elevations.origin_cells.0) + 0.5 - sx / 2.0;
    let corner_z = f64::from(elevations.origin_cells.1) + 0.5 - sz / 2.0;
    let tiepoint = [
        0.0,
        0.0,
        0.0,
        model.origin[0] + corner_x * ux,
        model.origin[1] - corner_z * uy,
        0.0,
    ];
    let unit = model.vertical_unit_m;
    let samples: Vec<f32> = if unit == 1.0 {
        elevations.samples_m.clone()
    } else {
        let unit = unit as f32;
        elevations.samples_m.iter().map(|&s| s / unit).collect()
    };
    let tags = GeoTiffTags {
        pixel_scale: [ux * sx, uy * sz, 0.0],
        tiepoint,
        key_directory: &model.key_directory,
        double_params: &model.double_params,
        ascii_params: &model.ascii_params,
    };
    write_atomically(
        path,
        |tmp| {
            let file = std::fs::File::create(tmp).map_err(|e| fail(&e))?;
            write_geotiff(
                BufWriter::new(file),
                elevations.width,
                elevations.depth,
                &samples,
                &tags,
            )
            .map_err(|e| fail(&e))
        },
        |e| fail(&e),
    )
}

/// The JSON sidecar, with the importers' field names (and those of
/// `shared/data/jacksboro_fault_dem.json`), then the engines' values.
#[derive(serde::Serialize)]
struct Sidecar {
    source: String,
    spacing_x_m: f64,
    spacing_y_m: f64,
    width: u32,
    height: u32,
    min_elevation_m: f64,
    max_elevation_m: f64,
    encoding: String,
    /// RAW16 only: `"little"` or `"big"`, which the importer reads.
    #[serde(skip_serializing_if = "Option::is_none")]
    byte_order: Option<&'static str>,
    /// RAW16 only: bits per sample, 16. Unreal Engine's RAW heightmap
    /// importer (`.r16`/`.raw`) reads `width`, `height` and `bpp` from the
    /// `.json` of the same name when there is one, and refuses the file
    /// when `bpp` is missing or not 16.
    #[serde(skip_serializing_if = "Option::is_none")]
    bpp: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unreal: Option<UnrealImport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unity: Option<UnityImport>,
}

/// Unreal Engine Landscape "Import from File": a 16-bit value `v` is
/// `(v − 32768) / 128 · scale_z` cm above the landscape's Z location.
#[derive(serde::Serialize)]
struct UnrealImport {
    /// Landscape scale X, Y, Z (cm per quad; Z as above).
    scale_cm: [f64; 3],
    /// Landscape location Z, cm: the middle of the elevation range.
    location_z_cm: f64,
    /// Overall resolution (vertices a side).
    resolution: [u32; 2],
}

/// Unity Terrain: Import Raw (depth, resolution, byte order, flip) and the
/// terrain's size; the heightmap spans the terrain from edge to edge.
#[derive(serde::Serialize)]
struct UnityImport {
    /// Terrain Width, metres.
    terrain_width_m: f64,
    /// Terrain Length, metres.
    terrain_length_m: f64,
    /// Terrain Height, metres (the elevation range).
    terrain_height_m: f64,
    /// Terrain position y, metres (the lowest elevation).
    position_y_m: f64,
    /// Heightmap Resolution.
    heightmap_resolution: u32,
    /// "Bit 16".
    depth: &'static str,
    /// "Windows" (little-endian) or "Mac" (big-endian).
    byte_order: &'static str,
    /// Row 0 of the file is north; Unity's first row is south.
    flip_vertically: bool,
}

/// Writes the sidecar of the heightmap at `path`; returns its path.
fn write_sidecar(
    path: &Path,
    format: ExportFormat,
    e: &SurfaceElevations,
    options: &HeightmapExportOptions,
) -> Result<PathBuf, ExportError> {
    let (lo, hi) = e.range_m;
    let (sx, sz) = e.spacing_m;
    // The engines' dialogs refuse a zero height scale and a heightmap of
    // one sample a side: no values for a flat or single-column surface.
    let sixteen = format != ExportFormat::Exr && hi > lo && e.width >= 2 && e.depth >= 2;
    let encoding = match format {
        ExportFormat::Png => {
            "16-bit grayscale PNG; elevation_m = min_elevation_m + value/65535*(max_elevation_m-min_elevation_m); row 0 is north"
        }
        ExportFormat::Raw16 if options.big_endian => {
            "RAW16 big-endian; elevation_m = min_elevation_m + value/65535*(max_elevation_m-min_elevation_m); row 0 is north"
        }
        ExportFormat::Raw16 => {
            "RAW16 little-endian; elevation_m = min_elevation_m + value/65535*(max_elevation_m-min_elevation_m); row 0 is north"
        }
        _ => "float32 EXR, channel Y, metres; NaN where there is no ground; row 0 is north",
    };
    let range = hi - lo;
    let sidecar = Sidecar {
        source: format!(
            "Strata world surface from cell column ({}, {}), {} × {} samples",
            e.origin_cells.0, e.origin_cells.1, e.width, e.depth
        ),
        spacing_x_m: sx,
        spacing_y_m: sz,
        width: e.width,
        height: e.depth,
        min_elevation_m: lo,
        max_elevation_m: hi,
        encoding: encoding.to_string(),
        byte_order: (format == ExportFormat::Raw16).then_some(if options.big_endian {
            "big"
        } else {
            "little"
        }),
        bpp: (format == ExportFormat::Raw16).then_some(16),
        unreal: sixteen.then(|| UnrealImport {
            scale_cm: [sx * 100.0, sz * 100.0, range * 100.0 / 512.0],
            location_z_cm: (lo + hi) / 2.0 * 100.0,
            resolution: [e.width, e.depth],
        }),
        unity: sixteen.then(|| UnityImport {
            terrain_width_m: f64::from(e.width.max(2) - 1) * sx,
            terrain_length_m: f64::from(e.depth.max(2) - 1) * sz,
            terrain_height_m: range,
            position_y_m: lo,
            heightmap_resolution: e.width,
            depth: "Bit 16",
            byte_order: if options.big_endian { "Mac" } else { "Windows" },
            flip_vertically: true,
        }),
    };
    let side = sidecar_path(path);
    let fail = |e: &dyn std::fmt::Display| ExportError::write(&side, e);
    let json = serde_json::to_string_pretty(&sidecar).map_err(|e| fail(&e))?;
    write_atomically(
        &side,
        |tmp| std::fs::write(tmp, json + "\n").map_err(|e| fail(&e)),
        |e| fail(&e),
    )?;
    Ok(side)
}
