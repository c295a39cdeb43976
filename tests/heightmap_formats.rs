//! Heightmap interchange formats against files written by an independent
//! writer: the GeoTIFF fixtures in `tests/data/elevation` were made by GDAL
//! (through rasterio) with `tools/oracles/make_elevation_fixtures.py`, which
//! also wrote `expected.json`: each file's size, pixel size in metres, the
//! samples at probe pixels as GDAL reads them, the NoData count and the
//! valid range.

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;
use strata::io::heightmap::formats::geotiff_import::read_geotiff;
use strata::io::heightmap::heightmap_format::import_heightmap;
use strata::io::heightmap::heightmap_format::{HeightmapFormat, detect_format, read_elevation};
use strata::io::heightmap::heightmap_import::{
    BEDROCK_CELLS, HeightmapSettings, ImportError, MAX_SIDE_CELLS, NoDataFill, RawLayout,
    read_heightmap,
};
use strata::io::heightmap::heightmap_summary::inspect_heightmap;
use strata::progress::Progress;
use strata::terrain::generation::heightmap_terrain::HeightmapTerrain;
use strata::terrain::{CellCoord, Grid, Material};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/elevation")
        .join(name)
}

fn expected() -> Value {
    let text = std::fs::read_to_string(fixture("expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

const FIXTURES: [&str; 8] = [
    "float32_tiled_lzw_pred3.tif",
    "int16_tiled_lzw_edges.tif",
    "float32_rgb_pixel.tif",
    "float32_bands_planar.tif",
    "int16_striped_deflate_pred2.tif",
    "uint16_nodata_packbits.tif",
    "geographic_degrees.tif",
    "jacksboro_fault_dem.tif",
];

/// True scale: one cell a pixel, no exaggeration.
fn true_scale() -> HeightmapSettings {
    HeightmapSettings {
        cells_per_pixel: 1.0,
        vertical_scale: 1.0,
        ..HeightmapSettings::default()
    }
}

/// The probe pixels of a fixture: `(x, y, metres or None for NoData)`.
fn probes(e: &Value) -> Vec<(u32, u32, Option<f64>)> {
    e["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p[0].as_u64().unwrap() as u32,
                p[1].as_u64().unwrap() as u32,
                p[2].as_f64(),
            )
        })
        .collect()
}

#[test]
fn geotiff_fixtures_read_their_size_scale_samples_and_nodata() {
    let all = expected();
    for name in FIXTURES {
        let e = &all[name];
        let path = fixture(name);
        assert_eq!(detect_format(&path).unwrap(), HeightmapFormat::GeoTiff);
        let raster = read_geotiff(&path, &Progress::new()).unwrap();
        assert_eq!(
            (u64::from(raster.width_px), u64::from(raster.height_px)),
            (e["width"].as_u64().unwrap(), e["height"].as_u64().unwrap()),
            "{name}"
        );
        let (x_m, y_m) = raster.pixel_size_m.expect("georeferenced");
        let want = (
            e["pixel_size_m"][0].as_f64().unwrap(),
            e["pixel_size_m"][1].as_f64().unwrap(),
        );
        // Projected files exactly; geographic ones to 1 mm in 1 km (the
        // fixture script uses the ellipsoid's radii, Strata a series).
        assert!(
            (x_m - want.0).abs() <= want.0 * 1e-6 && (y_m - want.1).abs() <= want.1 * 1e-6,
            "{name}: pixel {x_m} × {y_m} m, expected {want:?}"
        );
        for (x, y, value) in probes(e) {
            let got = raster.samples_m[(y * raster.width_px + x) as usize];
            match value {
                Some(v) => assert_eq!(f64::from(got), v, "{name} ({x}, {y})"),
                None => assert!(got.is_nan(), "{name} ({x}, {y}) is NoData, got {got}"),
            }
        }
        let stats = raster.stats();
        assert_eq!(
            stats.nodata_samples,
            e["nodata_count"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            stats.elevation_range_m,
            Some((e["min_m"].as_f64().unwrap(), e["max_m"].as_f64().unwrap())),
            "{name}"
        );
    }
}

#[test]
fn exr_and_raw16_fixtures_read_their_samples_and_scale() {
    let all = expected();
    for name in ["rgb_float32.exr", "unity_129.r16"] {
        let e = &all[name];
        let path = fixture(name);
        let format = detect_format(&path).unwrap();
        let read = read_elevation(&path, &true_scale(), MAX_SIDE_CELLS, &Progress::new()).unwrap();
        let map = &read.map;
        assert_eq!(
            (u64::from(map.width_px), u64::from(map.height_px)),
            (e["width"].as_u64().unwrap(), e["height"].as_u64().unwrap()),
            "{name}"
        );
        let side = map.sidecar.as_ref().unwrap();
        assert_eq!(
            [side.spacing_x_m, side.spacing_y_m],
            [
                e["pixel_size_m"][0].as_f64().unwrap(),
                e["pixel_size_m"][1].as_f64().unwrap()
            ],
            "{name}"
        );
        let lo = e["min_m"].as_f64().unwrap();
        for (x, y, value) in probes(e) {
            let got = map.samples.get((y * map.width_px + x) as usize);
            // NoData (NaN in the EXR) became the world floor.
            assert_eq!(got, value.unwrap_or(lo), "{name} ({x}, {y})");
        }
        match format {
            HeightmapFormat::Exr => {
                // The red channel of three, NaN as NoData.
                assert_eq!(e["nodata_count"].as_u64(), Some(12));
                assert_eq!(side.min_elevation_m, lo);
            }
            HeightmapFormat::Raw16 => {
                assert_eq!((side.min_elevation_m, side.max_elevation_m), (-20.0, 480.0));
            }
            other => panic!("{name} read as {other:?}"),
        }
    }
    // A RAW16 whose length is no square and no size given is refused.
    let dir = std::env::temp_dir().join(format!("strata-raw-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let odd = dir.join("strip.raw");
    std::fs::write(&odd, vec![0_u8; 2 * 300 * 7]).unwrap();
    let err = read_elevation(&odd, &true_scale(), MAX_SIDE_CELLS, &Progress::new()).unwrap_err();
    assert!(
        err.to_string()
            .contains("not a square; give the width and height"),
        "{err}"
    );
    let sized = HeightmapSettings {
        raw: RawLayout {
            size_px: Some((300, 7)),
            big_endian: false,
        },
        ..true_scale()
    };
    let read = read_elevation(&odd, &sized, MAX_SIDE_CELLS, &Progress::new()).unwrap();
    assert_eq!((read.map.width_px, read.map.height_px), (300, 7));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Surface height of a column where Surface Nets puts it: the 0.5
/// crossing between its highest inside sample `y` and the sample above,
/// `y + 0.5 + (occ(y) − 127.5) / (occ(y) − occ(y + 1))` cells.
fn surface_height(grid: &Grid, x: i32, z: i32) -> Option<f64> {
    let solid = |y: i32| f64::from(grid.cell(CellCoord::new(x, y, z)).solid_occupancy());
    (0..4200).rev().find_map(|y| {
        let (lo, hi) = (solid(y), solid(y + 1));
        (lo >= 128.0).then(|| f64::from(y) + 0.5 + (lo - 127.5) / (lo - hi))
    })
}

/// How far a built surface may sit from its height: the two occupancies
/// the crossing reads are each rounded by half a step of 1/255, which on a
/// slope band of up to 4 cells is 255/4 = 64 levels a cell, so up to
/// 2 · 0.5 / 64 · 2 ≈ 0.03 cells, plus margin.
const BUILT_TOLERANCE_CELLS: f64 = 0.05;

#[test]
fn geotiff_fixtures_import_to_the_expected_heights_at_true_scale() {
    let all = expected();
    for name in [
        "float32_tiled_lzw_pred3.tif",
        "int16_tiled_lzw_edges.tif",
        "int16_striped_deflate_pred2.tif",
        "uint16_nodata_packbits.tif",
    ] {
        let e = &all[name];
        let path = fixture(name);
        let read = read_elevation(&path, &true_scale(), MAX_SIDE_CELLS, &Progress::new()).unwrap();
        let terrain = HeightmapTerrain::streaming(read.map, &read.settings).unwrap();
        let cell_m = e["pixel_size_m"][0].as_f64().unwrap();
        let lo = e["min_m"].as_f64().unwrap();
        let grid = import_heightmap(&path, &true_scale()).unwrap();
        for (x, y, value) in probes(e) {
            // NoData became the world floor: the lowest valid elevation.
            let metres = value.unwrap_or(lo);
            let want = BEDROCK_CELLS + (metres - lo) / cell_m;
            let at = terrain
                .surface_height_cells(i64::from(x), i64::from(y))
                .unwrap();
            assert!(
                (at - want).abs() < 1e-9,
                "{name} ({x}, {y}): {metres} m, {at} cells"
            );
            // The built cells hold it to the occupancy quantum.
            let built = surface_height(&grid, x as i32, y as i32).unwrap();
            assert!(
                (built - want).abs() <= BUILT_TOLERANCE_CELLS,
                "{name} ({x}, {y}): built {built}, want {want}"
            );
        }
    }
}

#[test]
fn nodata_becomes_sea_when_asked() {
    let path = fixture("uint16_nodata_packbits.tif");
    // 20 m cells: the 540 m of relief in 27 cells.
    let settings = HeightmapSettings {
        nodata: NoDataFill::Sea,
        cells_per_pixel: 0.25,
        ..true_scale()
    };
    let grid = import_heightmap(&path, &settings).unwrap();
    // Cells (10, 7), (9, 7) and (11, 8) sample pixels inside the round
    // NoData hole around pixel (40, 30).
    for (x, z) in [(10, 7), (9, 7), (11, 8)] {
        let column: Vec<Material> = (0..100)
            .map(|y| grid.cell(CellCoord::new(x, y, z)).material())
            .collect();
        let water = column.iter().filter(|m| **m == Material::WATER).count();
        assert!(water >= 1, "({x}, {z}) has no water: {column:?}");
        let top_solid = column.iter().rposition(|m| m.is_solid()).unwrap();
        let bottom_water = column.iter().position(|m| *m == Material::WATER).unwrap();
        assert!(top_solid <= bottom_water, "({x}, {z}): {column:?}");
    }
    // A valid column far from the hole has no water above it.
    assert!((0..100).all(|y| grid.cell(CellCoord::new(25, y, 20)).material() != Material::WATER));
}

/// The Jacksboro DEM as a GeoTIFF with a geographic georeference (3
/// arc-second pixels) imports at its true scale: the pixel size the
/// georeference gives matches the PNG's sidecar (74.5 × 92.1 m; the
/// sidecar's north–south spacing was rounded from a spherical formula, so
/// to 0.5 %), every sample equals the PNG's to `f32` rounding, and the
/// terrains built with the same settings agree.
#[test]
fn jacksboro_geotiff_imports_at_true_scale_like_the_png() {
    let png = common::dem_path();
    let tif = fixture("jacksboro_fault_dem.tif");
    let from_png = read_heightmap(&png).unwrap();
    let from_tif = read_elevation(&tif, &true_scale(), MAX_SIDE_CELLS, &Progress::new())
        .unwrap()
        .map;
    let png_side = from_png.sidecar.as_ref().unwrap();
    let tif_side = from_tif.sidecar.as_ref().unwrap();
    assert!(
        (tif_side.spacing_x_m - 74.5).abs() < 74.5 * 1e-6,
        "{tif_side:?}"
    );
    assert!(
        (tif_side.spacing_y_m - 92.1).abs() < 92.1 * 5e-3,
        "{tif_side:?}"
    );
    assert_eq!(png_side.spacing_x_m, 74.5);
    for i in 0..from_png.samples.len() {
        let (p, t) = (from_png.samples.get(i), from_tif.samples.get(i));
        assert_eq!(t, f64::from(p as f32), "sample {i}");
    }
    let settings = HeightmapSettings::default();
    let grid_png = import_heightmap(&png, &settings).unwrap();
    let grid_tif = import_heightmap(&tif, &settings).unwrap();
    // Row 0 samples pixel row 0 in both (the z extents differ by the
    // spacing's 0.5 %); x runs at the same 37.25 m a cell.
    for x in (0..806).step_by(5) {
        let (a, b) = (
            surface_height(&grid_png, x, 0).unwrap(),
            surface_height(&grid_tif, x, 0).unwrap(),
        );
        assert!((a - b).abs() <= BUILT_TOLERANCE_CELLS, "x {x}: {a} vs {b}");
    }
    assert!(surface_height(&grid_tif, 805, 0).is_some());
    assert!(surface_height(&grid_tif, 806, 0).is_none());
}

#[test]
fn the_summary_says_size_scale_range_and_cells() {
    let path = fixture("geographic_degrees.tif");
    let summary =
        inspect_heightmap(&path, &true_scale(), MAX_SIDE_CELLS, &Progress::new()).unwrap();
    let e = &expected()["geographic_degrees.tif"];
    assert_eq!((summary.width_px, summary.height_px), (160, 120));
    assert_eq!(summary.crs.as_deref(), Some("geographic EPSG:4326"));
    assert_eq!(summary.nodata_samples, e["nodata_count"].as_u64().unwrap());
    // 1″ is 25.8 m east–west and 30.8 m north–south at 34° N: 144 rows of cells.
    assert_eq!(summary.extent_cells, (160.0, 144.0));
    let text = summary.lines().join("\n");
    assert!(
        text.contains("GeoTIFF 160 × 120 pixels, float32, 32 × 32 tiles"),
        "{text}"
    );
    assert!(text.contains("pixel size: 25.6"), "{text}");
    assert!(text.contains("terrain: 160 × 144 cells at 25.6"), "{text}");
    // An EXR says its channel and sample type; a RAW16 without a sidecar
    // says its values are not metres.
    let exr = inspect_heightmap(
        &fixture("rgb_float32.exr"),
        &true_scale(),
        MAX_SIDE_CELLS,
        &Progress::new(),
    )
    .unwrap();
    assert_eq!(exr.encoding, "float32, channel R");
    let dir = std::env::temp_dir().join(format!("strata-summary-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let raw = dir.join("bare.r16");
    std::fs::write(&raw, vec![0_u8; 2 * 16]).unwrap();
    let bare = inspect_heightmap(&raw, &true_scale(), MAX_SIDE_CELLS, &Progress::new()).unwrap();
    assert!(
        bare.lines()
            .iter()
            .any(|l| l.starts_with("elevation: not in metres")),
        "{:?}",
        bare.lines()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_sea_far_above_the_terrain_is_refused_not_clamped() {
    let settings = HeightmapSettings {
        sea_level_m: Some(1e9),
        ..true_scale()
    };
    let err = import_heightmap(&fixture("float32_tiled_lzw_pred3.tif"), &settings).unwrap_err();
    assert!(matches!(err, ImportError::SeaTooHigh { .. }), "{err}");
    assert!(err.to_string().contains("lower the sea level"), "{err}");
    // Far below floods nothing and is fine.
    let low = HeightmapSettings {
        sea_level_m: Some(-1e9),
        ..true_scale()
    };
    let grid = import_heightmap(&fixture("float32_tiled_lzw_pred3.tif"), &low).unwrap();
    assert!((0..200).all(|y| grid.cell(CellCoord::new(5, y, 5)).material() != Material::WATER));
}

#[test]
fn broken_geotiffs_are_refused_with_a_clear_error() {
    let dir = std::env::temp_dir().join(format!("strata-geotiff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = std::fs::read(fixture("float32_tiled_lzw_pred3.tif")).unwrap();
    // Cut in the middle of the tiles.
    let truncated = dir.join("truncated.tif");
    std::fs::write(&truncated, &good[..good.len() / 2]).unwrap();
    let err = read_geotiff(&truncated, &Progress::new()).unwrap_err();
    assert!(matches!(err, ImportError::Unreadable { .. }), "{err}");
    // Not a TIFF at all.
    let junk = dir.join("junk.tif");
    std::fs::write(&junk, b"GIF89a not a heightmap").unwrap();
    let err = detect_format(&junk).unwrap_err();
    assert!(
        err.to_string().contains("none of PNG, TIFF and EXR"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
