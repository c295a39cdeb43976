//! What a heightmap file is and what an import makes of it, without
//! building anything: the size, encoding, georeference, pixel size,
//! elevation range and NoData count, and the terrain's extent in cells and
//! cell size under the import settings. The import dialog and the command
//! line's `--heightmap-info` show it.

use std::path::Path;

use super::formats::elevation_raster::RasterStats;
use super::formats::exr_heightmap::{exr_encoding, read_exr, read_exr_header};
use super::formats::geotiff_import::read_geotiff_header;
use super::formats::geotiff_tiles::scan_geotiff;
use super::formats::raw16::read_raw16_header;
use super::heightmap_format::{
    HeightmapFormat, detect_format, raster_extent, raster_extent_of, raw16_extent,
};
use super::heightmap_import::{parse_sidecar_text, read_heightmap_header};
use crate::progress::Progress;
use crate::terrain::generation::heightmap::{Heightmap, HeightmapSettings, ImportError};

/// What a heightmap file is and what an import with given settings makes
/// of it: for the import dialog and the command line.
#[derive(Clone, Debug, PartialEq)]
pub struct HeightmapSummary {
    /// The format.
    pub format: HeightmapFormat,
    /// Pixels along x.
    pub width_px: u32,
    /// Pixels along z.
    pub height_px: u32,
    /// The sample type and layout, e.g. `"float32, 256 × 256 tiles"`.
    pub encoding: String,
    /// The CRS, e.g. `"projected EPSG:32614"`, when the file is
    /// georeferenced.
    pub crs: Option<String>,
    /// The pixel's size `(east–west, north–south)` in metres, when known.
    pub pixel_size_m: Option<(f64, f64)>,
    /// Lowest and highest valid elevation, metres (`None` for a PNG without
    /// a sidecar: its values are not metres).
    pub elevation_range_m: Option<(f64, f64)>,
    /// Samples marked NoData.
    pub nodata_samples: u64,
    /// The terrain's extent `(width, depth)` in cells under the settings.
    pub extent_cells: (f64, f64),
    /// Metres a cell spans under the settings, when the pixel size is known.
    pub metres_per_cell: Option<f64>,
}

impl HeightmapSummary {
    /// The summary's lines with the terrain at `cells_per_pixel` instead of
    /// the settings it was read with (the import dialog's scale field).
    pub fn lines_at(&self, cells_per_pixel: f32) -> Vec<String> {
        let cpp = f64::from(cells_per_pixel);
        let extent = |px: u32, factor: f64| (f64::from(px) * factor).round().max(1.0);
        let (ratio, pixel_x_m) = match self.pixel_size_m {
            Some((x, y)) => (y / x, Some(x)),
            None => (1.0, None),
        };
        let metres_in_raster =
            matches!(self.format, HeightmapFormat::GeoTiff | HeightmapFormat::Exr);
        let scaled = HeightmapSummary {
            extent_cells: (
                extent(self.width_px, cpp),
                extent(self.height_px, cpp * ratio),
            ),
            metres_per_cell: pixel_x_m
                .or(metres_in_raster.then_some(1.0))
                .map(|x| x / cpp),
            ..self.clone()
        };
        scaled.lines()
    }

    /// The summary as the lines the command line prints.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "{} {} × {} pixels, {}",
            self.format.name(),
            self.width_px,
            self.height_px,
            self.encoding
        )];
        if let Some(crs) = &self.crs {
            lines.push(format!("georeference: {crs}"));
        }
        lines.push(match self.pixel_size_m {
            Some((x, y)) => format!("pixel size: {x:.3} × {y:.3} m"),
            None => "pixel size: unknown (1 m taken)".to_string(),
        });
        if let Some((lo, hi)) = self.elevation_range_m {
            lines.push(format!("elevation: {lo:.2} to {hi:.2} m"));
        } else {
            lines.push(
                "elevation: not in metres (no sidecar): the value range spans 64 cells × the vertical scale"
                    .to_string(),
            );
        }
        if self.nodata_samples > 0 {
            lines.push(format!("NoData samples: {}", self.nodata_samples));
        }
        let (w, d) = self.extent_cells;
        lines.push(match self.metres_per_cell {
            Some(m) => format!("terrain: {w:.0} × {d:.0} cells at {m:.3} m a cell"),
            None => format!("terrain: {w:.0} × {d:.0} cells"),
        });
        lines
    }
}

/// Says what the heightmap at `path` is and what an import with `settings`
/// makes of it (extent checked against `limit_cells` per side). A PNG's
/// or RAW16's header and sidecar are read; a GeoTIFF is scanned a strip or
/// tile at a time (counted in `progress`) and an EXR decoded, since the
/// elevation range needs every sample.
///
/// # Errors
/// What the format's reader reports, [`ImportError::TerrainTooLarge`], and
/// [`ImportError::NoValidSample`] for a raster whose every sample is NoData.
pub fn inspect_heightmap(
    path: &Path,
    settings: &HeightmapSettings,
    limit_cells: u64,
    progress: &Progress,
) -> Result<HeightmapSummary, ImportError> {
    match detect_format(path)? {
        HeightmapFormat::Png => {
            let header = read_heightmap_header(path, settings, limit_cells)?;
            let sidecar = header
                .sidecar_text
                .as_deref()
                .map(|t| parse_sidecar_text(t, path, &header))
                .transpose()?;
            let map = Heightmap {
                width_px: header.width_px,
                height_px: header.height_px,
                samples: Vec::new().into(),
                sidecar,
            };
            Ok(coded_summary(
                HeightmapFormat::Png,
                "grayscale".to_string(),
                &map,
                header.extent_cells,
                settings,
            ))
        }
        HeightmapFormat::GeoTiff => {
            let header = read_geotiff_header(path)?;
            let extent_cells = raster_extent(&header, settings, limit_cells)?;
            // One pass a chunk at a time: the raster is never held whole.
            let (header, stats) = scan_geotiff(path, progress)?;
            let encoding = format!("{}, {}", header.sample_type, header.layout);
            let crs = header.georeference.as_ref().map(|g| g.describe());
            raster_summary(
                HeightmapFormat::GeoTiff,
                encoding,
                crs,
                RasterOf {
                    size_px: (header.width_px, header.height_px),
                    pixel_size_m: header.pixel_size_m,
                    stats,
                },
                extent_cells,
                settings,
                path,
            )
        }
        HeightmapFormat::Exr => {
            // The size from the header, before the samples are decoded.
            let (width_px, height_px, pixel_size_m) = read_exr_header(path)?;
            let extent_cells =
                raster_extent_of(width_px, height_px, pixel_size_m, settings, limit_cells)?;
            let raster = read_exr(path)?;
            let encoding = exr_encoding(path)?;
            raster_summary(
                HeightmapFormat::Exr,
                encoding,
                None,
                RasterOf {
                    size_px: (raster.width_px, raster.height_px),
                    pixel_size_m: raster.pixel_size_m,
                    stats: raster.stats(),
                },
                extent_cells,
                settings,
                path,
            )
        }
        HeightmapFormat::Raw16 => {
            // The length, layout and sidecar say it all: no sample is read.
            let extent_cells = raw16_extent(path, settings, limit_cells)?;
            let header = read_raw16_header(path, &settings.raw)?;
            let map = Heightmap {
                width_px: header.width_px,
                height_px: header.height_px,
                samples: Vec::new().into(),
                sidecar: header.sidecar,
            };
            // The byte order the import reads: the sidecar's, when it says.
            let order = if header.big_endian { "big" } else { "little" };
            let encoding = format!("uint16, {order}-endian");
            Ok(coded_summary(
                HeightmapFormat::Raw16,
                encoding,
                &map,
                extent_cells,
                settings,
            ))
        }
    }
}

/// What a raster summary says of the samples.
struct RasterOf {
    size_px: (u32, u32),
    pixel_size_m: Option<(f64, f64)>,
    stats: RasterStats,
}

/// The summary of a raster read from `path`; a raster whose every sample is
/// NoData is refused as its import refuses it.
fn raster_summary(
    format: HeightmapFormat,
    encoding: String,
    crs: Option<String>,
    raster: RasterOf,
    extent_cells: (f64, f64),
    settings: &HeightmapSettings,
    path: &Path,
) -> Result<HeightmapSummary, ImportError> {
    let stats = raster.stats;
    if stats.elevation_range_m.is_none() {
        return Err(ImportError::NoValidSample {
            path: path.to_path_buf(),
        });
    }
    Ok(HeightmapSummary {
        format,
        width_px: raster.size_px.0,
        height_px: raster.size_px.1,
        encoding,
        crs,
        pixel_size_m: raster.pixel_size_m,
        elevation_range_m: stats.elevation_range_m,
        nodata_samples: stats.nodata_samples,
        extent_cells,
        metres_per_cell: Some(
            raster.pixel_size_m.map_or(1.0, |(x, _)| x) / f64::from(settings.cells_per_pixel),
        ),
    })
}

/// The summary of a coded heightmap (PNG, RAW16), whose metres come from
/// its sidecar when it has one.
fn coded_summary(
    format: HeightmapFormat,
    encoding: String,
    map: &Heightmap,
    extent_cells: (f64, f64),
    settings: &HeightmapSettings,
) -> HeightmapSummary {
    let sidecar = map.sidecar.as_ref();
    HeightmapSummary {
        format,
        width_px: map.width_px,
        height_px: map.height_px,
        encoding,
        crs: None,
        pixel_size_m: sidecar.map(|s| (s.spacing_x_m, s.spacing_y_m)),
        elevation_range_m: sidecar.map(|s| (s.min_elevation_m, s.max_elevation_m)),
        nodata_samples: 0,
        extent_cells,
        metres_per_cell: sidecar.map(|s| s.spacing_x_m / f64::from(settings.cells_per_pixel)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::heightmap::formats::geotiff_export::{GeoTiffTags, write_geotiff};

    /// A GeoTIFF whose every sample is NoData: the summary refuses it as
    /// the import does (it said the values were "not in metres").
    #[test]
    fn a_raster_of_nodata_only_is_refused_as_the_import_refuses_it() {
        let dir = std::env::temp_dir().join(format!("strata-summary-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        let path = dir.join("holes.tif");
        let keys = [1, 1, 0, 1, 1024, 0, 1, 1];
        let tags = GeoTiffTags {
            pixel_scale: [2.0, 2.0, 0.0],
            tiepoint: [0.0, 0.0, 0.0, 1000.0, 2000.0, 0.0],
            key_directory: &keys,
            double_params: &[],
            ascii_params: "",
        };
        let file = std::fs::File::create(&path).expect("file");
        write_geotiff(std::io::BufWriter::new(file), 6, 4, &[f32::NAN; 24], &tags)
            .expect("written");
        let err = inspect_heightmap(
            &path,
            &HeightmapSettings::default(),
            crate::terrain::generation::heightmap::MAX_SIDE_CELLS,
            &Progress::new(),
        )
        .expect_err("refused");
        assert!(matches!(err, ImportError::NoValidSample { .. }), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
