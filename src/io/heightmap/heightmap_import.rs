//! Heightmap import from files: reads a grayscale PNG elevation model (a
//! row at a time, see `png_rows`) and its optional JSON sidecar into an
//! in-memory [`Heightmap`], then builds the grid with
//! [`crate::terrain::generation::heightmap`]. Decoding lives here so the
//! terrain core never touches files or image codecs.
//!
//! # Sidecar
//! `<stem>.json` next to `<stem>.png`, with fields `spacing_x_m`,
//! `spacing_y_m` (pixel size east–west and north–south, metres),
//! `min_elevation_m`, `max_elevation_m` (elevation of pixel values 0 and the
//! maximum value) and optionally `width`, `height` (pixels, checked against
//! the PNG). Other fields are ignored. Pixel value `v` of a `B`-bit image is
//! `min + v / (2^B − 1) · (max − min)` metres.

use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind, Seek};
use std::path::{Path, PathBuf};

use super::png_rows::PngRows;
use crate::io::BoundedReadError;
use crate::io::open_bounded;
use crate::io::read_bounded_to_string;
pub use crate::terrain::generation::heightmap::{
    BEDROCK_CELLS, HeightSamples, Heightmap, HeightmapSettings, HeightmapSidecar, ImportError,
    MAX_PIXELS, MAX_SIDE_CELLS, MAX_SIDE_PX, MAX_STREAMING_SIDE_CELLS, NoDataFill, RawLayout,
};
use crate::terrain::generation::heightmap::{
    check_image_size, check_settings, terrain_extent_cells,
};

/// Largest heightmap PNG that is read, bytes (1 GiB: twice an
/// incompressible 16-bit grayscale PNG of [`MAX_SIDE_PX`]² pixels).
pub const MAX_HEIGHTMAP_FILE_BYTES: u64 = 1 << 30;

/// Largest sidecar that is read, bytes (64 KiB; a sidecar is a few lines).
pub const MAX_SIDECAR_FILE_BYTES: u64 = 64 << 10;

/// Reads a PNG heightmap and its optional sidecar `<stem>.json`.
///
/// Accepts 8- and 16-bit grayscale (with or without alpha, which is
/// ignored), and RGB/RGBA images whose pixels are all gray (R = G = B),
/// interlaced or not. Both files must be regular files (after following
/// symlinks) within [`MAX_HEIGHTMAP_FILE_BYTES`] and
/// [`MAX_SIDECAR_FILE_BYTES`], checked before they are read. The pixels are
/// decoded a row at a time into their codes: memory is 2 bytes a pixel
/// whatever the colour type (an RGBA16 image is never held whole).
///
/// # Errors
/// [`ImportError::NotFound`], [`ImportError::Io`],
/// [`ImportError::NotRegularFile`], [`ImportError::FileTooLarge`],
/// [`ImportError::Decode`], [`ImportError::UnsupportedColor`],
/// [`ImportError::ZeroSize`], [`ImportError::ImageTooLarge`] (checked from
/// the header, before decoding) and [`ImportError::Sidecar`].
pub fn read_heightmap(path: &Path) -> Result<Heightmap, ImportError> {
    read_heightmap_checked(path, None)
}

/// [`read_heightmap`] for an import built whole with `settings`: the
/// terrain's size (from the PNG header, the sidecar and `settings`) is
/// checked against [`MAX_SIDE_CELLS`] before any pixel is decoded, so an
/// oversized map costs neither time nor memory.
///
/// # Errors
/// As [`read_heightmap`], and [`ImportError::InvalidSetting`] and
/// [`ImportError::TerrainTooLarge`] before decoding.
pub fn read_heightmap_for(
    path: &Path,
    settings: &HeightmapSettings,
) -> Result<Heightmap, ImportError> {
    read_heightmap_checked(path, Some((settings, MAX_SIDE_CELLS)))
}

/// What a heightmap's PNG header and sidecar say, read without decoding a
/// pixel.
#[derive(Clone, Debug, PartialEq)]
pub struct HeightmapHeader {
    /// Pixels along x.
    pub width_px: u32,
    /// Pixels along z.
    pub height_px: u32,
    /// The sidecar's text, when there is one (validated).
    pub sidecar_text: Option<String>,
    /// The terrain's extent `(width, depth)` in cells under the settings.
    pub extent_cells: (f64, f64),
}

/// Reads the PNG header and the sidecar of `path` and checks the terrain
/// of `settings` against `limit_cells` per side ([`MAX_SIDE_CELLS`] for a
/// grid built whole, [`MAX_STREAMING_SIDE_CELLS`] streamed): whether and
/// how a map can be imported, in milliseconds whatever its size.
///
/// # Errors
/// As [`read_heightmap_for`], except decoding errors past the header.
pub fn read_heightmap_header(
    path: &Path,
    settings: &HeightmapSettings,
    limit_cells: u64,
) -> Result<HeightmapHeader, ImportError> {
    check_settings(settings)?;
    let file = open_heightmap_file(path)?;
    let png = PngRows::open(BufReader::new(file), path, check_image_size)?;
    let (width_px, height_px) = png.size();
    let sidecar_text = read_sidecar_text(path)?;
    let sidecar = sidecar_text
        .as_deref()
        .map(|t| parse_sidecar(t, &sidecar_path(path), width_px, height_px))
        .transpose()?;
    let extent_cells =
        terrain_extent_cells(width_px, height_px, sidecar.as_ref(), settings, limit_cells)?;
    Ok(HeightmapHeader {
        width_px,
        height_px,
        sidecar_text,
        extent_cells,
    })
}

/// Decodes a heightmap from PNG bytes held in memory (a streaming world
/// file's copy) with the text of its sidecar, exactly as [`read_heightmap`]
/// decodes the file it was copied from. `name` is the path errors name
/// (the world file).
///
/// # Errors
/// As [`read_heightmap`] (no file errors).
pub fn decode_heightmap(
    png: &[u8],
    sidecar_text: Option<&str>,
    name: &Path,
) -> Result<Heightmap, ImportError> {
    decode_heightmap_from(std::io::Cursor::new(png), sidecar_text, name)
}

/// [`decode_heightmap`] from any buffered reader (a streaming world's
/// stored copy read in place).
///
/// # Errors
/// As [`decode_heightmap`].
pub fn decode_heightmap_from<R: BufRead + Seek>(
    reader: R,
    sidecar_text: Option<&str>,
    name: &Path,
) -> Result<Heightmap, ImportError> {
    decode_png(reader, name, |w, h| {
        sidecar_text
            .map(|t| parse_sidecar(t, &sidecar_path(name), w, h))
            .transpose()
    })
}

/// Opens the heightmap PNG at `path` for reading: a regular file of at
/// most [`MAX_HEIGHTMAP_FILE_BYTES`] (reads stop there).
///
/// # Errors
/// [`ImportError::NotFound`], [`ImportError::Io`],
/// [`ImportError::NotRegularFile`] and [`ImportError::FileTooLarge`].
pub(crate) fn open_heightmap_file(path: &Path) -> Result<std::io::Take<File>, ImportError> {
    open_bounded(path, MAX_HEIGHTMAP_FILE_BYTES).map_err(|e| read_error(path, e))
}

/// An [`ImportError`] for a refused or failed bounded read of `path`.
pub(crate) fn read_error(path: &Path, e: BoundedReadError) -> ImportError {
    let path = path.to_path_buf();
    match e {
        BoundedReadError::Io(source) if source.kind() == ErrorKind::NotFound => {
            ImportError::NotFound { path }
        }
        BoundedReadError::Io(source) => ImportError::Io { path, source },
        BoundedReadError::NotRegularFile { kind } => ImportError::NotRegularFile { path, kind },
        BoundedReadError::TooLarge {
            size_bytes,
            limit_bytes,
        } => ImportError::FileTooLarge {
            path,
            size_bytes,
            limit_bytes,
        },
    }
}

/// Reads the PNG heightmap at `path` and its sidecar; with `settings`, the
/// terrain's size is checked against the limit before any pixel is decoded.
pub(crate) fn read_heightmap_checked(
    path: &Path,
    settings: Option<(&HeightmapSettings, u64)>,
) -> Result<Heightmap, ImportError> {
    let file = open_heightmap_file(path)?;
    decode_png(BufReader::new(file), path, |width_px, height_px| {
        let sidecar = read_sidecar(path, width_px, height_px)?;
        if let Some((settings, limit_cells)) = settings {
            terrain_extent_cells(width_px, height_px, sidecar.as_ref(), settings, limit_cells)?;
        }
        Ok(sidecar)
    })
}

/// Decodes the PNG `reader` (errors name `path`): the header is checked
/// ([`check_image_size`]), then `sidecar_for(width, height)` gives the
/// sidecar (and may refuse the size) before any pixel is decoded; the
/// samples are kept as pixel codes ([`HeightSamples::Codes`]), decoded a
/// row at a time, so memory is the codes (2 bytes a pixel) whatever the
/// colour type.
fn decode_png<R: BufRead + Seek>(
    reader: R,
    path: &Path,
    sidecar_for: impl FnOnce(u32, u32) -> Result<Option<HeightmapSidecar>, ImportError>,
) -> Result<Heightmap, ImportError> {
    let png = PngRows::open(reader, path, check_image_size)?;
    let (width_px, height_px) = png.size();
    // The sidecar and the terrain size before any pixel is decoded.
    let sidecar = sidecar_for(width_px, height_px)?;
    let (codes, max_code) = png.read_codes(path)?;
    // Sample = min + (v / max_code) · (max − min) metres with a sidecar,
    // the normalized value v / max_code without (offset 0, scale 1: exact).
    let (offset, scale) = match &sidecar {
        Some(s) => (s.min_elevation_m, s.max_elevation_m - s.min_elevation_m),
        None => (0.0, 1.0),
    };
    let samples = HeightSamples::Codes {
        codes,
        max_code,
        offset,
        scale,
    };
    Ok(Heightmap {
        width_px,
        height_px,
        samples,
        sidecar,
    })
}

/// The sidecar path of a PNG: same directory and stem, extension `json`.
pub fn sidecar_path(png_path: &Path) -> PathBuf {
    png_path.with_extension("json")
}

/// Parses the sidecar `text` of the PNG at `png_path` whose header is
/// `header`.
pub(crate) fn parse_sidecar_text(
    text: &str,
    png_path: &Path,
    header: &HeightmapHeader,
) -> Result<HeightmapSidecar, ImportError> {
    parse_sidecar(
        text,
        &sidecar_path(png_path),
        header.width_px,
        header.height_px,
    )
}

/// Reads and validates the sidecar next to `png_path`; `Ok(None)` when there is none.
pub(crate) fn read_sidecar(
    png_path: &Path,
    width_px: u32,
    height_px: u32,
) -> Result<Option<HeightmapSidecar>, ImportError> {
    read_sidecar_text(png_path)?
        .map(|text| parse_sidecar(&text, &sidecar_path(png_path), width_px, height_px))
        .transpose()
}

/// The text of the sidecar next to `png_path` (at most
/// [`MAX_SIDECAR_FILE_BYTES`]); `Ok(None)` when there is none.
pub(crate) fn read_sidecar_text(png_path: &Path) -> Result<Option<String>, ImportError> {
    let path = sidecar_path(png_path);
    match read_bounded_to_string(&path, MAX_SIDECAR_FILE_BYTES) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(read_error(&path, e)),
    }
}

/// Parses and validates sidecar `text` for a `width_px` × `height_px` PNG;
/// errors name `path`.
pub(crate) fn parse_sidecar(
    text: &str,
    path: &Path,
    width_px: u32,
    height_px: u32,
) -> Result<HeightmapSidecar, ImportError> {
    let bad = |message: String| ImportError::Sidecar {
        path: path.to_path_buf(),
        message,
    };
    let json: serde_json::Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
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
                "field `{name}` is {given} but the heightmap has {actual} pixels"
            )));
        }
    }
    Ok(sidecar)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::generation::heightmap_terrain::grid_from_heightmap;
    use crate::terrain::storage::grid::Grid;

    /// The PNG import these tests check: read, then build.
    fn import_heightmap(path: &Path, settings: &HeightmapSettings) -> Result<Grid, ImportError> {
        grid_from_heightmap(&read_heightmap_for(path, settings)?, settings)
    }
    use crate::terrain::{Cell, CellCoord, Material};

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
            nodata: NoDataFill::Floor,
            raw: Default::default(),
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
            .map(|y| {
                grid.cell(crate::terrain::storage::coords::CellCoord(
                    glam::IVec3::new(1, y, 0),
                ))
            })
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
        assert_eq!(map.samples.iter().collect::<Vec<_>>(), vec![0.0, 0.2, 1.0]);
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
        assert_eq!(
            read_heightmap(&gray_rgb)
                .unwrap()
                .samples
                .iter()
                .collect::<Vec<_>>(),
            vec![0.0, 1.0]
        );
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

    /// Absurd PNG headers (more than 65536 pixels a side, or more than
    /// 2³⁰ pixels) are refused from the header alone; a 16384² header is
    /// admitted, and so is a larger one whose terrain fits a streamed world.
    #[test]
    fn huge_png_header_is_refused() {
        fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
            out.extend_from_slice(&(data.len() as u32).to_be_bytes());
            let mut body = kind.to_vec();
            body.extend_from_slice(data);
            out.extend_from_slice(&body);
            out.extend_from_slice(&crc32fast::hash(&body).to_be_bytes());
        }
        let dir = scratch("huge");
        let header_only = |w: u32, h: u32| {
            let mut png = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
            let mut ihdr = Vec::new();
            ihdr.extend_from_slice(&w.to_be_bytes());
            ihdr.extend_from_slice(&h.to_be_bytes());
            ihdr.extend_from_slice(&[16, 0, 0, 0, 0]);
            chunk(&mut png, b"IHDR", &ihdr);
            chunk(&mut png, b"IDAT", &[0x78, 0x9C, 0x03, 0x00]);
            chunk(&mut png, b"IEND", &[]);
            let path = dir.join(format!("huge-{w}x{h}.png"));
            std::fs::write(&path, png).unwrap();
            path
        };
        for (w, h) in [(100_000, 100_000), (70_000, 1), (40_000, 40_000)] {
            let path = header_only(w, h);
            for err in [
                read_heightmap(&path).unwrap_err(),
                read_heightmap_header(&path, &unit_settings(), MAX_STREAMING_SIDE_CELLS)
                    .unwrap_err(),
            ] {
                assert!(
                    matches!(
                        err,
                        ImportError::ImageTooLarge {
                            width_px,
                            height_px,
                            limit_px: MAX_SIDE_PX,
                            limit_pixels: MAX_PIXELS,
                        } if (width_px, height_px) == (w, h)
                    ),
                    "{err}"
                );
            }
        }
        // 16384² at the default 2 cells per pixel: 32768 cells a side, a
        // streamed world (a grid built whole refuses it, by its cells).
        let path = header_only(16384, 16384);
        let header = read_heightmap_header(
            &path,
            &HeightmapSettings::default(),
            MAX_STREAMING_SIDE_CELLS,
        )
        .unwrap();
        assert_eq!(header.extent_cells, (32768.0, 32768.0));
        assert!(matches!(
            read_heightmap_header(&path, &HeightmapSettings::default(), MAX_SIDE_CELLS),
            Err(ImportError::TerrainTooLarge { .. })
        ));
        // 32768 × 32768 pixels (2³⁰) at one cell per pixel fits too.
        let path = header_only(32768, 32768);
        let header =
            read_heightmap_header(&path, &unit_settings(), MAX_STREAMING_SIDE_CELLS).unwrap();
        assert_eq!(header.extent_cells, (32768.0, 32768.0));
        // Its pixels are only decoded later: this one's data is bogus.
        assert!(matches!(
            read_heightmap(&path),
            Err(ImportError::Decode { .. })
        ));
    }
}
