//! Which heightmap format a file is, and the one entry point every import
//! reads through: [`read_elevation`] dispatches to the PNG, GeoTIFF, EXR or
//! RAW16 reader and hands back the [`Heightmap`] the terrain builder takes
//! with the settings the file's NoData fill made (a sea level); the import
//! entry points ([`import_heightmap`], [`import_streams`]) read through it.
//!
//! PNG, TIFF and EXR are told apart by their first bytes; a headerless RAW
//! by its extension (`.r16`, `.raw`).

use std::io::Read;
use std::path::Path;

use super::formats::elevation_raster::ElevationRaster;
use super::formats::exr_heightmap::{decode_exr, read_exr, read_exr_header};
use super::formats::geokeys::GeoReference;
use super::formats::geotiff_import::{
    GeoTiffHeader, decode_geotiff, read_geotiff, read_geotiff_header,
};
use super::formats::raw16::{decode_raw16, read_raw16, read_raw16_header};
use super::heightmap_import::{decode_heightmap_from, read_error, read_heightmap_checked};
use super::world_georeference::WorldGeoreference;
use crate::io::open_bounded;
use crate::progress::Progress;
use crate::terrain::generation::heightmap::{
    Heightmap, HeightmapSettings, HeightmapSidecar, ImportError, MAX_SIDE_CELLS,
    MAX_STREAMING_SIDE_CELLS, RawLayout, check_settings, terrain_extent_cells,
};
use crate::terrain::generation::heightmap_terrain::{
    elevation_scale, grid_from_heightmap_with_progress,
};
use crate::terrain::storage::grid::Grid;

/// A heightmap file's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeightmapFormat {
    /// 8- or 16-bit grayscale PNG with an optional JSON sidecar.
    Png,
    /// TIFF or BigTIFF, georeferenced or not.
    GeoTiff,
    /// OpenEXR, float samples in metres.
    Exr,
    /// Headerless 16-bit samples (`.r16`, `.raw`).
    Raw16,
}

impl HeightmapFormat {
    /// The format's key in files (`png`, `geotiff`, `exr`, `raw16`).
    pub fn key(self) -> &'static str {
        match self {
            HeightmapFormat::Png => "png",
            HeightmapFormat::GeoTiff => "geotiff",
            HeightmapFormat::Exr => "exr",
            HeightmapFormat::Raw16 => "raw16",
        }
    }

    /// The format [`HeightmapFormat::key`] names.
    pub fn from_key(key: &str) -> Option<HeightmapFormat> {
        [
            HeightmapFormat::Png,
            HeightmapFormat::GeoTiff,
            HeightmapFormat::Exr,
            HeightmapFormat::Raw16,
        ]
        .into_iter()
        .find(|f| f.key() == key)
    }

    /// The largest file of this format that is read, bytes.
    pub fn max_file_bytes(self) -> u64 {
        match self {
            HeightmapFormat::Png => super::heightmap_import::MAX_HEIGHTMAP_FILE_BYTES,
            HeightmapFormat::GeoTiff => super::formats::geotiff_import::MAX_GEOTIFF_FILE_BYTES,
            HeightmapFormat::Exr => super::formats::exr_heightmap::MAX_EXR_FILE_BYTES,
            HeightmapFormat::Raw16 => super::formats::raw16::MAX_RAW16_FILE_BYTES,
        }
    }

    /// The format's name as messages spell it.
    pub fn name(self) -> &'static str {
        match self {
            HeightmapFormat::Png => "PNG",
            HeightmapFormat::GeoTiff => "GeoTIFF",
            HeightmapFormat::Exr => "EXR",
            HeightmapFormat::Raw16 => "RAW16",
        }
    }
}

/// The format of the heightmap at `path`, from its first bytes (a RAW16,
/// having none of its own, from its extension `.r16` or `.raw`).
///
/// # Errors
/// File errors ([`ImportError::NotFound`], [`ImportError::Io`],
/// [`ImportError::NotRegularFile`]), and [`ImportError::Unreadable`] for a
/// file whose start is no heightmap format.
pub fn detect_format(path: &Path) -> Result<HeightmapFormat, ImportError> {
    let raw = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("r16") || e.eq_ignore_ascii_case("raw"));
    let mut magic = [0_u8; 4];
    let mut file = open_bounded(path, u64::MAX).map_err(|e| read_error(path, e))?;
    let mut read = 0;
    while read < magic.len() {
        match file.read(&mut magic[read..]) {
            Ok(0) => break,
            Ok(n) => read += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(source) => {
                return Err(ImportError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        }
    }
    match &magic[..read] {
        [0x89, b'P', b'N', b'G'] => Ok(HeightmapFormat::Png),
        _ if raw => Ok(HeightmapFormat::Raw16),
        [b'I', b'I', 42 | 43, 0] | [b'M', b'M', 0, 42 | 43] => Ok(HeightmapFormat::GeoTiff),
        [0x76, 0x2f, 0x31, 0x01] => Ok(HeightmapFormat::Exr),
        _ => Err(ImportError::Unreadable {
            path: path.to_path_buf(),
            format: "heightmap",
            message: "it starts as none of PNG, TIFF and EXR (name a RAW16 .r16 or .raw)"
                .to_string(),
        }),
    }
}

/// The terrain extent of a GeoTIFF from its header (before decoding).
pub(crate) fn raster_extent(
    header: &GeoTiffHeader,
    settings: &HeightmapSettings,
    limit_cells: u64,
) -> Result<(f64, f64), ImportError> {
    raster_extent_of(
        header.width_px,
        header.height_px,
        header.pixel_size_m,
        settings,
        limit_cells,
    )
}

/// The terrain extent of a `width_px × height_px` raster of pixel size
/// `pixel_size_m` (1 m when unknown) under `settings`, checked against
/// `limit_cells` per side.
pub(crate) fn raster_extent_of(
    width_px: u32,
    height_px: u32,
    pixel_size_m: Option<(f64, f64)>,
    settings: &HeightmapSettings,
    limit_cells: u64,
) -> Result<(f64, f64), ImportError> {
    let (spacing_x_m, spacing_y_m) = pixel_size_m.unwrap_or((1.0, 1.0));
    let sidecar = HeightmapSidecar {
        spacing_x_m,
        spacing_y_m,
        min_elevation_m: 0.0,
        max_elevation_m: 0.0,
        width: None,
        height: None,
    };
    terrain_extent_cells(width_px, height_px, Some(&sidecar), settings, limit_cells)
}

/// The pixel size `(east–west, north–south)` in metres of the heightmap at
/// `path`, from its header (a GeoTIFF's georeference, a PNG's sidecar);
/// `None` when the file does not say.
///
/// # Errors
/// What the format's header reader reports.
pub fn pixel_size_m(path: &Path) -> Result<Option<(f64, f64)>, ImportError> {
    match detect_format(path)? {
        HeightmapFormat::Png => {
            let header = super::heightmap_import::read_heightmap_header(
                path,
                &HeightmapSettings::default(),
                u64::MAX,
            )?;
            let sidecar = header
                .sidecar_text
                .as_deref()
                .map(|t| super::heightmap_import::parse_sidecar_text(t, path, &header))
                .transpose()?;
            Ok(sidecar.map(|s| (s.spacing_x_m, s.spacing_y_m)))
        }
        HeightmapFormat::GeoTiff => Ok(read_geotiff_header(path)?.pixel_size_m),
        HeightmapFormat::Exr => Ok(read_exr_header(path)?.2),
        HeightmapFormat::Raw16 => {
            let header = read_raw16_header(path, &RawLayout::default())?;
            Ok(header.sidecar.map(|s| (s.spacing_x_m, s.spacing_y_m)))
        }
    }
}

/// The read of a coded heightmap (PNG, RAW16): its settings as given.
fn coded_read(map: Heightmap, settings: &HeightmapSettings) -> ElevationRead {
    ElevationRead {
        map,
        settings: settings.clone(),
        georeference: None,
    }
}

/// The read of an elevation raster: NoData filled as `settings` ask
/// (errors name `name`).
fn raster_read(
    raster: ElevationRaster,
    settings: &HeightmapSettings,
    name: &Path,
) -> Result<ElevationRead, ImportError> {
    let georeference = raster.georeference.clone();
    let (map, settings) = raster.into_heightmap(settings, name)?;
    Ok(ElevationRead {
        map,
        settings,
        georeference,
    })
}

/// Decodes a heightmap file of `format` from `reader` (`len_bytes` long; a
/// streaming world's stored copy read in place) with its sidecar's text,
/// as an import with `settings` reads the file it was copied from, so the
/// terrain is the same. Errors name `name`. Decoding is counted in
/// `progress` where the format reads in parts.
///
/// # Errors
/// What the format's reader reports.
pub fn decode_source<R: std::io::BufRead + std::io::Seek>(
    reader: R,
    len_bytes: u64,
    format: HeightmapFormat,
    sidecar_text: Option<&str>,
    settings: &HeightmapSettings,
    name: &Path,
    progress: &Progress,
) -> Result<ElevationRead, ImportError> {
    let coded = |map| coded_read(map, settings);
    let raster = |raster| raster_read(raster, settings, name);
    match format {
        HeightmapFormat::Png => Ok(coded(decode_heightmap_from(reader, sidecar_text, name)?)),
        HeightmapFormat::GeoTiff => raster(decode_geotiff(reader, name, progress)?),
        HeightmapFormat::Exr => raster(decode_exr(reader, name, sidecar_text)?),
        HeightmapFormat::Raw16 => Ok(coded(decode_raw16(
            reader,
            len_bytes,
            &settings.raw,
            sidecar_text,
            name,
        )?)),
    }
}

/// The terrain extent `(width, depth)` in cells of an import of `path`
/// with `settings`, from the file's header alone (no sample decoded),
/// checked against `limit_cells` per side.
///
/// # Errors
/// What the format's header reader reports, and
/// [`ImportError::TerrainTooLarge`].
pub fn import_extent_cells(
    path: &Path,
    settings: &HeightmapSettings,
    limit_cells: u64,
) -> Result<(f64, f64), ImportError> {
    match detect_format(path)? {
        HeightmapFormat::Png => {
            Ok(
                super::heightmap_import::read_heightmap_header(path, settings, limit_cells)?
                    .extent_cells,
            )
        }
        HeightmapFormat::GeoTiff => {
            raster_extent(&read_geotiff_header(path)?, settings, limit_cells)
        }
        HeightmapFormat::Exr => {
            let (width_px, height_px, pixel_size_m) = read_exr_header(path)?;
            raster_extent_of(width_px, height_px, pixel_size_m, settings, limit_cells)
        }
        HeightmapFormat::Raw16 => raw16_extent(path, settings, limit_cells),
    }
}

/// The terrain extent of a RAW16 import from the file's length, layout and
/// sidecar (no sample read).
pub(crate) fn raw16_extent(
    path: &Path,
    settings: &HeightmapSettings,
    limit_cells: u64,
) -> Result<(f64, f64), ImportError> {
    let header = read_raw16_header(path, &settings.raw)?;
    let (width_px, height_px, sidecar) = (header.width_px, header.height_px, header.sidecar);
    terrain_extent_cells(width_px, height_px, sidecar.as_ref(), settings, limit_cells)
}

/// A heightmap read for an import: the samples, the settings to build them
/// with, and the file's georeference.
#[derive(Debug)]
pub struct ElevationRead {
    /// The samples, with the file's pixel size and elevation range.
    pub map: Heightmap,
    /// The import's settings, with the sea level a
    /// [`NoDataFill::Sea`](crate::terrain::generation::heightmap::NoDataFill::Sea)
    /// fill sets.
    pub settings: HeightmapSettings,
    /// The GeoTIFF's georeference, when the file has one.
    pub georeference: Option<GeoReference>,
}

/// Reads the heightmap at `path`, whatever its format, for an import with
/// `settings` whose terrain may be `limit_cells` a side (checked from the
/// header before any sample is decoded, where the format has a header).
/// Decoding is counted in `progress` where the format reads in parts.
///
/// # Errors
/// What the format's reader reports, [`ImportError::TerrainTooLarge`] and
/// [`ImportError::Cancelled`].
pub fn read_elevation(
    path: &Path,
    settings: &HeightmapSettings,
    limit_cells: u64,
    progress: &Progress,
) -> Result<ElevationRead, ImportError> {
    let coded = |map| coded_read(map, settings);
    let raster = |raster| raster_read(raster, settings, path);
    let format = detect_format(path)?;
    match format {
        HeightmapFormat::Png => Ok(coded(read_heightmap_checked(
            path,
            Some((settings, limit_cells)),
        )?)),
        HeightmapFormat::GeoTiff => {
            raster_extent(&read_geotiff_header(path)?, settings, limit_cells)?;
            raster(read_geotiff(path, progress)?)
        }
        HeightmapFormat::Exr | HeightmapFormat::Raw16 => {
            // The size from the header, before any sample is decoded.
            import_extent_cells(path, settings, limit_cells)?;
            if format == HeightmapFormat::Exr {
                raster(read_exr(path)?)
            } else {
                Ok(coded(read_raw16(path, &settings.raw)?))
            }
        }
    }
}

/// True when the import of `path` with `settings` must stream (spec §12):
/// its terrain, from the file's header (and a PNG's sidecar; no sample
/// decoded), is
/// wider or deeper than a grid built whole may be ([`MAX_SIDE_CELLS`]).
///
/// # Errors
/// As [`import_extent_cells`] against [`MAX_STREAMING_SIDE_CELLS`]: a
/// file, sidecar or settings the import refuses, or a terrain larger than
/// even a streamed world may be.
pub fn import_streams(path: &Path, settings: &HeightmapSettings) -> Result<bool, ImportError> {
    let (w, d) = import_extent_cells(path, settings, MAX_STREAMING_SIDE_CELLS)?;
    Ok(w > MAX_SIDE_CELLS as f64 || d > MAX_SIDE_CELLS as f64)
}

/// Imports the heightmap at `path` (any format; a PNG with its sidecar) as
/// a fresh grid.
///
/// # Errors
/// Everything [`read_elevation`] and
/// [`crate::terrain::generation::heightmap_terrain::grid_from_heightmap`] report.
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
    Ok(import_heightmap_georeferenced(path, settings, progress)?.0)
}

/// [`import_heightmap_with_progress`], with where the world sits on the
/// ground the file surveys: `None` for a PNG or RAW16 without sidecar,
/// whose values are not metres.
///
/// # Errors
/// As [`import_heightmap_with_progress`].
pub fn import_heightmap_georeferenced(
    path: &Path,
    settings: &HeightmapSettings,
    progress: &Progress,
) -> Result<(Grid, Option<WorldGeoreference>), ImportError> {
    check_settings(settings)?;
    progress.begin_stage("reading heightmap", 0);
    let read = read_elevation(path, settings, MAX_SIDE_CELLS, progress)?;
    progress.check().map_err(|_| ImportError::Cancelled)?;
    let georeference = match read.map.sidecar {
        Some(_) => Some(WorldGeoreference::from_import(
            &elevation_scale(&read.map, &read.settings)?,
            read.georeference.as_ref(),
        )),
        None => None,
    };
    let grid = grid_from_heightmap_with_progress(&read.map, &read.settings, progress)?;
    Ok((grid, georeference))
}
