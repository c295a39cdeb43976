//! The command line's heightmap import options turned into import
//! settings: the scale as cells per pixel or metres per cell, the vertical
//! scale, the sea level and what NoData samples become. PNG and RAW16
//! heightmaps keep the editor's artistic defaults (2 cells a pixel, 3×
//! relief); elevation data in metres (GeoTIFF, EXR) defaults to its true scale, one cell a pixel at the
//! file's pixel size and no exaggeration, so a survey imports as surveyed.

use std::path::Path;

use crate::io::heightmap::heightmap_export::{EngineSize, HeightmapExportOptions};
use crate::io::heightmap::heightmap_format::{HeightmapFormat, detect_format, pixel_size_m};
use crate::io::heightmap::heightmap_import::{
    HeightmapSettings, ImportError, MAX_STREAMING_SIDE_CELLS, NoDataFill, RawLayout,
};
use crate::io::heightmap::heightmap_summary::inspect_heightmap;
use crate::progress::Progress;

/// What the command line gave for a heightmap import and export (each
/// optional); the binary's argument parser flattens these flags into its
/// own.
#[derive(Clone, Debug, Default, PartialEq, clap::Args)]
pub struct HeightmapOptions {
    /// Print what the heightmap is (size, pixel size, elevation range,
    /// NoData) and the terrain the import settings make of it, then exit.
    #[arg(long, requires = "heightmap")]
    pub heightmap_info: bool,

    /// Heightmap import: cells per heightmap pixel (default 2 for PNG and
    /// RAW16, 1 for GeoTIFF and EXR).
    #[arg(
        long,
        value_name = "F",
        requires = "heightmap",
        allow_negative_numbers = true
    )]
    pub cells_per_pixel: Option<f32>,

    /// Heightmap import: the cell size in metres, from the file's pixel
    /// size (GeoTIFF georeference or sidecar).
    #[arg(
        long,
        value_name = "M",
        requires = "heightmap",
        conflicts_with = "cells_per_pixel",
        allow_negative_numbers = true
    )]
    pub metres_per_cell: Option<f64>,

    /// Heightmap import: vertical scale factor (default 3 for PNG and
    /// RAW16, 1, the true scale, for GeoTIFF and EXR).
    #[arg(
        long,
        value_name = "F",
        requires = "heightmap",
        allow_negative_numbers = true
    )]
    pub vertical_scale: Option<f32>,

    /// Heightmap import: fill everything below this elevation with water
    /// (metres with a sidecar or georeference, else the 0–1 value range),
    /// e.g. 0 for a coastline DEM.
    #[arg(
        long,
        value_name = "ELEVATION",
        requires = "heightmap",
        allow_hyphen_values = true,
        value_parser = crate::app::cli_values::parse_elevation
    )]
    pub sea_level: Option<f64>,

    /// Heightmap import: what NoData samples become, `floor` (the lowest
    /// valid elevation) or `sea` (sea floor under water).
    #[arg(long, value_name = "floor|sea", requires = "heightmap", value_parser = parse_nodata)]
    pub nodata: Option<NoDataFill>,

    /// RAW16 import: the size, when the file is not square.
    #[arg(long, value_name = "WxH", requires = "heightmap", value_parser = parse_raw_size)]
    pub raw_size: Option<(u32, u32)>,

    /// RAW16 import and export: big-endian samples (Mac) instead of
    /// little-endian (Windows).
    #[arg(long)]
    pub raw_big_endian: bool,

    /// --export-heightmap: resample to an engine's size, `unreal` (the
    /// Landscape sizes 127 to 8129), `unity` (2^n + 1) or a sample count.
    #[arg(long, value_name = "unreal|unity|N", requires = "export_heightmap", value_parser = EngineSize::parse)]
    pub heightmap_size: Option<EngineSize>,
}

impl HeightmapOptions {
    /// The heightmap export options these flags ask for.
    pub fn export_options(&self) -> HeightmapExportOptions {
        HeightmapExportOptions {
            size: self.heightmap_size,
            big_endian: self.raw_big_endian,
        }
    }
}

/// Why the options make no settings.
#[derive(Debug, thiserror::Error)]
pub enum HeightmapOptionError {
    /// A value is NaN, infinite or not positive.
    #[error("--{name} must be a positive number, got {value}")]
    NotPositive {
        /// The option, without dashes.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// `--sea-level` is not finite.
    #[error("--sea-level must be a finite elevation, got {0}")]
    SeaLevel(f64),
    /// `--metres-per-cell` for a file whose pixel size is unknown.
    #[error(
        "--metres-per-cell needs the file's pixel size, and {0} has none (no georeference or sidecar); use --cells-per-pixel"
    )]
    NoPixelSize(String),
    /// The file's header could not be read for its pixel size.
    #[error(transparent)]
    Import(#[from] ImportError),
}

/// The settings of an import of `path` with `options`: the format's
/// defaults (true scale for elevation data), then each option given.
/// A file whose format cannot be told yet (it may not exist) takes the PNG
/// defaults; the import itself then says what is wrong with it.
///
/// # Errors
/// [`HeightmapOptionError`] for a value out of range, or a metres-per-cell
/// scale for a file without a pixel size.
pub fn heightmap_settings(
    path: &Path,
    options: &HeightmapOptions,
) -> Result<HeightmapSettings, HeightmapOptionError> {
    let positive = |name, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(HeightmapOptionError::NotPositive { name, value: v })
        }
    };
    let mut settings = HeightmapSettings::default();
    if matches!(
        detect_format(path),
        Ok(HeightmapFormat::GeoTiff | HeightmapFormat::Exr)
    ) {
        settings.cells_per_pixel = 1.0;
        settings.vertical_scale = 1.0;
    }
    if let Some(c) = options.cells_per_pixel {
        settings.cells_per_pixel = positive("cells-per-pixel", f64::from(c))? as f32;
    }
    if let Some(m) = options.metres_per_cell {
        let m = positive("metres-per-cell", m)?;
        let (pixel_x_m, _) = pixel_size_m(path)?
            .ok_or_else(|| HeightmapOptionError::NoPixelSize(path.display().to_string()))?;
        let cells = pixel_x_m / m;
        settings.cells_per_pixel = positive("metres-per-cell", cells)? as f32;
    }
    if let Some(v) = options.vertical_scale {
        settings.vertical_scale = positive("vertical-scale", f64::from(v))? as f32;
    }
    if let Some(level) = options.sea_level {
        if !level.is_finite() {
            return Err(HeightmapOptionError::SeaLevel(level));
        }
        settings.sea_level_m = Some(level);
    }
    if let Some(fill) = options.nodata {
        settings.nodata = fill;
    }
    settings.raw = RawLayout {
        size_px: options.raw_size,
        big_endian: options.raw_big_endian,
    };
    Ok(settings)
}

/// `--heightmap-info`: the lines that say what the heightmap at `path` is
/// (size, pixel size, elevation range, NoData) and the terrain an import
/// with `options` makes of it. Decodes the file (its elevation range needs
/// every sample).
///
/// # Errors
/// As [`heightmap_settings`], and what the file's reader reports.
pub fn heightmap_info_lines(
    path: &Path,
    options: &HeightmapOptions,
) -> Result<Vec<String>, HeightmapOptionError> {
    let settings = heightmap_settings(path, options)?;
    let summary = inspect_heightmap(path, &settings, MAX_STREAMING_SIDE_CELLS, &Progress::new())?;
    Ok(summary.lines())
}

/// `--raw-size WxH`: each side 1 to 65 536 samples.
pub fn parse_raw_size(s: &str) -> Result<(u32, u32), String> {
    let side = |v: &str| {
        v.trim()
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=65_536).contains(n))
    };
    s.split_once(['x', 'X'])
        .and_then(|(w, h)| Some((side(w)?, side(h)?)))
        .ok_or_else(|| format!("expected WIDTHxHEIGHT of 1 to 65536 samples each, got {s:?}"))
}

/// `--nodata floor|sea`.
pub fn parse_nodata(s: &str) -> Result<NoDataFill, String> {
    NoDataFill::from_name(s.trim())
        .ok_or_else(|| format!("expected `floor` or `sea` for NoData samples, got {s:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/elevation")
            .join(name)
    }

    #[test]
    fn elevation_data_defaults_to_true_scale_and_png_to_the_artistic_one() {
        let tif = fixture("float32_tiled_lzw_pred3.tif");
        let s = heightmap_settings(&tif, &HeightmapOptions::default()).unwrap();
        assert_eq!((s.cells_per_pixel, s.vertical_scale), (1.0, 1.0));
        let png = Path::new("missing-map.png");
        let s = heightmap_settings(png, &HeightmapOptions::default()).unwrap();
        assert_eq!((s.cells_per_pixel, s.vertical_scale), (2.0, 3.0));
    }

    #[test]
    fn metres_per_cell_uses_the_pixel_size() {
        // 10 m pixels at 2.5 m a cell: 4 cells a pixel.
        let tif = fixture("float32_tiled_lzw_pred3.tif");
        let options = HeightmapOptions {
            metres_per_cell: Some(2.5),
            nodata: Some(NoDataFill::Sea),
            ..HeightmapOptions::default()
        };
        let s = heightmap_settings(&tif, &options).unwrap();
        assert_eq!(s.cells_per_pixel, 4.0);
        assert_eq!(s.nodata, NoDataFill::Sea);
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let options = HeightmapOptions {
                metres_per_cell: Some(bad),
                ..HeightmapOptions::default()
            };
            let err = heightmap_settings(&tif, &options).unwrap_err();
            assert!(
                err.to_string()
                    .contains("--metres-per-cell must be a positive"),
                "{err}"
            );
        }
        assert_eq!(parse_nodata("sea"), Ok(NoDataFill::Sea));
        assert!(
            parse_nodata("lake")
                .unwrap_err()
                .contains("`floor` or `sea`")
        );
    }

    #[test]
    fn huge_scales_report_the_real_terrain_size() {
        let options = HeightmapOptions {
            cells_per_pixel: Some(1e30),
            ..HeightmapOptions::default()
        };
        let settings = heightmap_settings(Path::new("m.png"), &options).unwrap();
        let map = crate::terrain::generation::heightmap::Heightmap {
            width_px: 4,
            height_px: 2,
            samples: vec![0.0; 8].into(),
            sidecar: None,
        };
        let err =
            crate::terrain::generation::heightmap_terrain::grid_from_heightmap(&map, &settings)
                .expect_err("too large");
        let message = err.to_string();
        assert!(
            message.contains("4.000e30 × 2.000e30 cells")
                && !message.contains("18446744073709551615"),
            "{message}"
        );
    }
}
