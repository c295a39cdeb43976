//! Elevation data through a world and back: a file imported at its true
//! scale and exported again keeps its samples within the world's height
//! quantum and its scale (a GeoTIFF its georeferencing tags), and what
//! Strata writes is read back by independent readers (rasterio and
//! tifffile for GeoTIFF, OpenEXR's Python binding for EXR, numpy for RAW16;
//! `tools/oracles/read_raster.py`) with the values Strata's own readers see.

mod common;

use std::path::{Path, PathBuf};

use common::oracles::run_python;
use serde_json::Value;
use strata::io::heightmap::formats::exr_heightmap::read_exr;
use strata::io::heightmap::formats::geotiff_import::read_geotiff;
use strata::io::heightmap::formats::raw16::read_raw16;
use strata::io::heightmap::heightmap_export::{
    EngineSize, HeightmapExportOptions, export_heightmap,
};
use strata::io::heightmap::heightmap_format::import_heightmap_georeferenced;
use strata::io::heightmap::heightmap_import::{HeightmapSettings, RawLayout};
use strata::io::heightmap::world_georeference::WorldGeoreference;
use strata::progress::Progress;
use strata::terrain::Grid;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/elevation")
        .join(name)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-roundtrip-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn true_scale() -> HeightmapSettings {
    HeightmapSettings {
        cells_per_pixel: 1.0,
        vertical_scale: 1.0,
        ..HeightmapSettings::default()
    }
}

/// The world's height quantum, in cells: a surface is held by occupancies
/// rounded to steps of 1/255 over a ramp up to 4 cells tall, so half a step
/// moves it by up to 2/255 cells (0.0078; this DEM's worst is 0.0065).
const QUANTUM_CELLS: f64 = 2.0 / 255.0;

/// Imports `name` at true scale.
fn import(name: &str) -> (Grid, WorldGeoreference) {
    let (grid, geo) =
        import_heightmap_georeferenced(&fixture(name), &true_scale(), &Progress::new()).unwrap();
    (grid, geo.expect("georeferenced"))
}

/// Largest difference between `a` and `b` where both are numbers; NaN
/// positions must agree.
fn max_difference(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            assert_eq!(x.is_nan(), y.is_nan(), "NoData differs: {x} vs {y}");
            if x.is_nan() {
                0.0
            } else {
                (f64::from(*x) - f64::from(*y)).abs()
            }
        })
        .fold(0.0, f64::max)
}

/// The `samples` of an oracle's JSON, NaN for null.
fn oracle_samples(v: &Value) -> Vec<f32> {
    v["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_f64().map_or(f32::NAN, |v| v as f32))
        .collect()
}

#[test]
fn a_geotiff_round_trips_through_a_world_with_its_georeference() {
    let dir = scratch("geotiff");
    let source = fixture("float32_tiled_lzw_pred3.tif");
    let (grid, geo) = import("float32_tiled_lzw_pred3.tif");
    assert_eq!(geo.metres_per_cell, [10.0, 10.0]);
    let out = dir.join("out.tif");
    let e = export_heightmap(&grid, &out, Some(&geo), &HeightmapExportOptions::default()).unwrap();
    assert_eq!(
        (e.width_px, e.height_px, e.origin_cells),
        (200, 150, (0, 0))
    );
    assert_eq!(e.sidecar, None);

    let a = read_geotiff(&source, &Progress::new()).unwrap();
    let b = read_geotiff(&out, &Progress::new()).unwrap();
    let (ga, gb) = (a.georeference.unwrap(), b.georeference.unwrap());
    assert_eq!(gb.pixel_scale, [10.0, 10.0, 0.0]);
    assert_eq!(gb.tiepoint, [0.0, 0.0, 0.0, 500_000.0, 3_700_000.0, 0.0]);
    assert_eq!(
        (&gb.key_directory, &gb.double_params, &gb.ascii_params),
        (&ga.key_directory, &ga.double_params, &ga.ascii_params)
    );
    let quantum_m = QUANTUM_CELLS * geo.vertical_metres_per_cell;
    let error_m = max_difference(&a.samples_m, &b.samples_m);
    assert!(error_m <= quantum_m, "{error_m} m > {quantum_m} m");

    // GDAL reads the same transform, CRS and samples.
    let gdal: Value = serde_json::from_str(&run_python(
        "read_raster.py",
        &["geotiff", out.to_str().unwrap()],
    ))
    .unwrap();
    assert_eq!(gdal["epsg"], 32614);
    assert_eq!(gdal["dtype"], "float32");
    let transform: Vec<f64> = serde_json::from_value(gdal["transform"].clone()).unwrap();
    assert_eq!(transform, [10.0, 0.0, 500_000.0, 0.0, -10.0, 3_700_000.0]);
    assert_eq!(max_difference(&oracle_samples(&gdal), &b.samples_m), 0.0);
    // And tifffile the same tags.
    let tags: Value = serde_json::from_str(&run_python(
        "read_raster.py",
        &["tifffile", out.to_str().unwrap()],
    ))
    .unwrap();
    let keys: Vec<u16> = serde_json::from_value(tags["geokeys"].clone()).unwrap();
    assert_eq!(keys, ga.key_directory);
    assert_eq!(max_difference(&oracle_samples(&tags), &b.samples_m), 0.0);
}

#[test]
fn a_geographic_geotiff_with_nodata_keeps_its_degrees_and_holes() {
    let dir = scratch("geographic");
    let (grid, geo) = import("geographic_degrees.tif");
    let out = dir.join("out.tif");
    export_heightmap(&grid, &out, Some(&geo), &HeightmapExportOptions::default()).unwrap();
    let gdal: Value = serde_json::from_str(&run_python(
        "read_raster.py",
        &["geotiff", out.to_str().unwrap()],
    ))
    .unwrap();
    assert_eq!(gdal["epsg"], 4326);
    let transform: Vec<f64> = serde_json::from_value(gdal["transform"].clone()).unwrap();
    let source = read_geotiff(&fixture("geographic_degrees.tif"), &Progress::new()).unwrap();
    let g = source.georeference.unwrap();
    // One cell a pixel east–west; the rows are resampled to square cells
    // (a 1″ pixel is 25.8 × 30.8 m), so north–south a cell spans less.
    assert_eq!(transform[0], g.pixel_scale[0]);
    assert_eq!((transform[2], transform[5]), (g.tiepoint[3], g.tiepoint[4]));
    assert!((transform[4] + g.pixel_scale[1] * 120.0 / 144.0).abs() < 1e-15);
    // The NoData corner stays flat at the world floor (filled on import),
    // every column has ground: no NaN comes out.
    assert!(oracle_samples(&gdal).iter().all(|s| !s.is_nan()));
}

#[test]
fn exr_and_raw16_round_trip_and_read_back_with_independent_readers() {
    let dir = scratch("exr-raw");
    let (grid, geo) = import("float32_tiled_lzw_pred3.tif");
    let source = read_geotiff(&fixture("float32_tiled_lzw_pred3.tif"), &Progress::new()).unwrap();
    let quantum_m = QUANTUM_CELLS * geo.vertical_metres_per_cell;

    let exr = dir.join("out.exr");
    let e = export_heightmap(&grid, &exr, Some(&geo), &HeightmapExportOptions::default()).unwrap();
    assert_eq!(e.sidecar, Some(dir.join("out.json")));
    let ours = read_exr(&exr).unwrap();
    assert_eq!(ours.pixel_size_m, Some((10.0, 10.0)));
    let error_m = max_difference(&source.samples_m, &ours.samples_m);
    assert!(error_m <= quantum_m, "EXR: {error_m} m > {quantum_m} m");
    let openexr: Value = serde_json::from_str(&run_python(
        "read_raster.py",
        &["exr", exr.to_str().unwrap()],
    ))
    .unwrap();
    assert_eq!(openexr["channels"], serde_json::json!(["Y"]));
    assert_eq!(openexr["dtype"], "float32");
    assert_eq!(
        max_difference(&oracle_samples(&openexr), &ours.samples_m),
        0.0
    );

    let raw = dir.join("out.r16");
    let options = HeightmapExportOptions {
        big_endian: true,
        ..HeightmapExportOptions::default()
    };
    let e = export_heightmap(&grid, &raw, Some(&geo), &options).unwrap();
    let layout = RawLayout {
        size_px: Some((e.width_px, e.height_px)),
        big_endian: true,
    };
    let map = read_raw16(&raw, &layout).unwrap();
    // The sidecar's size and byte order suffice: no flags needed to read
    // it back, and a contradicting flag is refused.
    let by_sidecar = read_raw16(&raw, &RawLayout::default()).unwrap();
    assert_eq!(by_sidecar.samples, map.samples);
    let little = dir.join("little.r16");
    export_heightmap(
        &grid,
        &little,
        Some(&geo),
        &HeightmapExportOptions::default(),
    )
    .unwrap();
    let err = read_raw16(&little, &layout).unwrap_err();
    assert!(err.to_string().contains("says little-endian"), "{err}");
    let metres: Vec<f32> = map.samples.iter().map(|s| s as f32).collect();
    let (lo, hi) = e.elevation_range_m;
    let code_m = (hi - lo) / 65535.0 / 2.0;
    let error_m = max_difference(&source.samples_m, &metres);
    assert!(error_m <= quantum_m + code_m, "RAW16: {error_m} m");
    let numpy: Value = serde_json::from_str(&run_python(
        "read_raster.py",
        &["raw16", raw.to_str().unwrap(), "200", "150", "big"],
    ))
    .unwrap();
    let codes: Vec<f64> = (0..map.samples.len())
        .map(|i| ((map.samples.get(i) - lo) / (hi - lo) * 65535.0).round())
        .collect();
    let theirs: Vec<f64> = serde_json::from_value(numpy["samples"].clone()).unwrap();
    assert_eq!(theirs, codes);
}

#[test]
fn engine_sizes_resample_with_the_scale_in_the_sidecar() {
    let dir = scratch("engines");
    let (grid, geo) = import("float32_tiled_lzw_pred3.tif");
    let png = dir.join("unreal.png");
    let options = HeightmapExportOptions {
        size: Some(EngineSize::Unreal),
        big_endian: false,
    };
    let e = export_heightmap(&grid, &png, Some(&geo), &options).unwrap();
    // 200 × 150 columns: the smallest Unreal size that holds them.
    assert_eq!((e.width_px, e.height_px), (253, 253));
    let side: Value =
        serde_json::from_str(&std::fs::read_to_string(e.sidecar.unwrap()).unwrap()).unwrap();
    // 199 spans of 10 m over 252 samples' spans; 149 over 252.
    let (sx, sz) = (1990.0 / 252.0, 1490.0 / 252.0);
    assert!((side["spacing_x_m"].as_f64().unwrap() - sx).abs() < 1e-9);
    assert!((side["spacing_y_m"].as_f64().unwrap() - sz).abs() < 1e-9);
    let (lo, hi) = e.elevation_range_m;
    let unreal = &side["unreal"];
    assert!((unreal["scale_cm"][0].as_f64().unwrap() - sx * 100.0).abs() < 1e-9);
    assert!((unreal["scale_cm"][2].as_f64().unwrap() - (hi - lo) * 100.0 / 512.0).abs() < 1e-9);
    let unity = &side["unity"];
    assert_eq!(unity["heightmap_resolution"], 253);
    assert!((unity["terrain_width_m"].as_f64().unwrap() - 1990.0).abs() < 1e-9);
    assert!((unity["terrain_length_m"].as_f64().unwrap() - 1490.0).abs() < 1e-9);
    assert_eq!(unity["byte_order"], "Windows");
    // The corners keep the surface's corner columns.
    let map = strata::io::heightmap::heightmap_import::read_heightmap(&png).expect("reads back");
    let plain = dir.join("plain.exr");
    export_heightmap(
        &grid,
        &plain,
        Some(&geo),
        &HeightmapExportOptions::default(),
    )
    .unwrap();
    let plain = read_exr(&plain).unwrap();
    let code_m = (hi - lo) / 65535.0;
    for (corner, source) in [
        (0, 0),
        (252, 199),
        (253 * 252, 200 * 149),
        (253 * 253 - 1, 200 * 150 - 1),
    ] {
        let d = (map.samples.get(corner) - f64::from(plain.samples_m[source])).abs();
        assert!(d <= code_m, "corner {corner}: {d} m");
    }
}

/// Unreal Engine's RAW heightmap importer (`LandscapeFileFormatRaw.cpp`)
/// reads the `.json` of the same name beside a `.r16`/`.raw` when there is
/// one: integer `width`, `height` and `bpp`, refusing a `bpp` other than 16
/// (a missing one reads as 0) and a file whose length is not
/// `width × height × 2`. The RAW16 Strata writes passes that reading,
/// non-square, and the PNG's sidecar carries no `bpp`.
#[test]
fn unreal_reads_the_size_of_a_raw16_from_its_sidecar() {
    let dir = scratch("unreal_raw");
    let (grid, geo) = import("float32_tiled_lzw_pred3.tif");
    let raw = dir.join("terrain.r16");
    let e = export_heightmap(&grid, &raw, Some(&geo), &HeightmapExportOptions::default()).unwrap();
    assert_eq!(
        e.sidecar.as_deref(),
        Some(dir.join("terrain.json").as_path())
    );
    let side: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("terrain.json")).unwrap()).unwrap();
    let field = |k: &str| side[k].as_i64().unwrap_or(0);
    assert_eq!(field("bpp"), 16);
    assert_eq!((field("width"), field("height")), (200, 150));
    let len = std::fs::metadata(&raw).unwrap().len() as i64;
    assert_eq!(len, field("width") * field("height") * 2);

    let png = dir.join("terrain_png.png");
    let e = export_heightmap(&grid, &png, Some(&geo), &HeightmapExportOptions::default()).unwrap();
    let side: Value =
        serde_json::from_str(&std::fs::read_to_string(e.sidecar.unwrap()).unwrap()).unwrap();
    assert!(side.get("bpp").is_none(), "{side}");
}

/// The summary of a big-endian RAW16 says the byte order its sidecar gives,
/// the one the import reads (it said little-endian, as the flags default).
#[test]
fn the_summary_of_a_big_endian_raw16_says_big_endian() {
    use strata::io::heightmap::heightmap_summary::inspect_heightmap;
    use strata::terrain::generation::heightmap::MAX_SIDE_CELLS;
    let dir = scratch("big_endian_summary");
    let (grid, geo) = import("float32_tiled_lzw_pred3.tif");
    let raw = dir.join("big.r16");
    let options = HeightmapExportOptions {
        size: None,
        big_endian: true,
    };
    export_heightmap(&grid, &raw, Some(&geo), &options).unwrap();
    let summary = inspect_heightmap(
        &raw,
        &HeightmapSettings::default(),
        MAX_SIDE_CELLS,
        &Progress::new(),
    )
    .unwrap();
    assert_eq!(summary.encoding, "uint16, big-endian");
}

/// A saved world keeps its georeference: reopened, it exports the same
/// GeoTIFF tags and metres.
#[test]
fn a_saved_world_keeps_its_georeference() {
    use strata::io::world::world_file::{LoadOptions, WorldFile, WorldMeta};
    let dir = scratch("saved");
    let (grid, geo) = import("int16_striped_deflate_pred2.tif");
    let meta = WorldMeta {
        georeference: Some(geo.clone()),
        ..WorldMeta::default()
    };
    let path = dir.join("dem.strata");
    WorldFile::save_full(&path, &grid, &meta).unwrap();
    let (_, reopened, meta, _) = WorldFile::open(&path, LoadOptions::default()).unwrap();
    assert_eq!(meta.georeference.as_ref(), Some(&geo));
    let (a, b) = (dir.join("a.tif"), dir.join("b.tif"));
    let options = HeightmapExportOptions::default();
    export_heightmap(&grid, &a, Some(&geo), &options).unwrap();
    export_heightmap(&reopened, &b, meta.georeference.as_ref(), &options).unwrap();
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    // The int16 source had negative elevations: they come back negative.
    let out = read_geotiff(&b, &Progress::new()).unwrap();
    let lowest = out.samples_m.iter().copied().fold(f32::INFINITY, f32::min);
    assert!(
        (f64::from(lowest) - (-1121.0)).abs() <= QUANTUM_CELLS * 30.0,
        "{lowest}"
    );
}

/// EXR in, EXR out; RAW16 in, RAW16 out: each file (written by OpenEXR's
/// binding and by numpy) goes through a world at its true scale and comes
/// back within the height quantum, at its own pixel size.
#[test]
fn exr_and_raw16_files_round_trip_in_their_own_format() {
    let dir = scratch("own-format");
    for (name, out) in [("rgb_float32.exr", "out.exr"), ("unity_129.r16", "out.r16")] {
        let (grid, geo) = import(name);
        let quantum_m = QUANTUM_CELLS * geo.vertical_metres_per_cell;
        let source = strata::io::heightmap::heightmap_format::read_elevation(
            &fixture(name),
            &true_scale(),
            4096,
            &Progress::new(),
        )
        .unwrap()
        .map;
        let path = dir.join(out);
        let e =
            export_heightmap(&grid, &path, Some(&geo), &HeightmapExportOptions::default()).unwrap();
        assert_eq!(
            (e.width_px, e.height_px),
            (source.width_px, source.height_px)
        );
        let back = strata::io::heightmap::heightmap_format::read_elevation(
            &path,
            &true_scale(),
            4096,
            &Progress::new(),
        )
        .unwrap()
        .map;
        let side = back.sidecar.as_ref().unwrap();
        let spacing = source.sidecar.as_ref().unwrap().spacing_x_m;
        assert_eq!(
            (side.spacing_x_m, side.spacing_y_m),
            (spacing, spacing),
            "{name}"
        );
        // 16-bit files add half a code of the exported range.
        let (lo, hi) = e.elevation_range_m;
        let code_m = if name.ends_with(".r16") {
            (hi - lo) / 65535.0 / 2.0
        } else {
            0.0
        };
        let a: Vec<f32> = source.samples.iter().map(|s| s as f32).collect();
        let b: Vec<f32> = back.samples.iter().map(|s| s as f32).collect();
        let error_m = max_difference(&a, &b);
        assert!(error_m <= quantum_m + code_m, "{name}: {error_m} m");
        // A GeoTIFF of a world imported without one has the file's metres
        // a pixel, not studs.
        let tif = dir.join(format!("{out}.tif"));
        export_heightmap(&grid, &tif, Some(&geo), &HeightmapExportOptions::default()).unwrap();
        let gdal: Value = serde_json::from_str(&run_python(
            "read_raster.py",
            &["geotiff", tif.to_str().unwrap()],
        ))
        .unwrap();
        assert_eq!(gdal["transform"][0].as_f64(), Some(spacing), "{name}");
        assert_eq!(gdal["transform"][4].as_f64(), Some(-spacing), "{name}");
    }
}

/// A flat surface has no height scale for the engines' dialogs (they
/// refuse 0): its sidecar leaves their values out rather than write ones
/// that cannot be typed in.
#[test]
fn a_flat_surface_writes_no_engine_values() {
    let dir = scratch("flat");
    let exr = dir.join("flat.exr");
    strata::io::heightmap::formats::exr_heightmap::write_exr(&exr, 8, 8, &[50.0; 64]).unwrap();
    std::fs::write(
        dir.join("flat.json"),
        r#"{"spacing_x_m": 2.0, "spacing_y_m": 2.0, "min_elevation_m": 0, "max_elevation_m": 0}"#,
    )
    .unwrap();
    let (grid, geo) =
        import_heightmap_georeferenced(&exr, &true_scale(), &Progress::new()).unwrap();
    let png = dir.join("flat.png");
    let e = export_heightmap(
        &grid,
        &png,
        geo.as_ref(),
        &HeightmapExportOptions::default(),
    )
    .unwrap();
    let side: Value =
        serde_json::from_str(&std::fs::read_to_string(e.sidecar.unwrap()).unwrap()).unwrap();
    assert_eq!(side["min_elevation_m"], side["max_elevation_m"]);
    assert!(
        side.get("unreal").is_none() && side.get("unity").is_none(),
        "{side}"
    );
}
