//! Streamed heightmap imports (spec §12): the columns a
//! streamed import builds on demand equal the whole import's chunk for
//! chunk; a streamed heightmap world saved and reopened (without its PNG)
//! has the same cells and edits; bad inputs and damaged files are typed
//! errors that write nothing.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::zero_png::write_zero_png16;
use glam::{DVec3, IVec3};
use rusqlite::params;
use strata::app::streamed_world::{StreamedTerrain, StreamedWorld};
use strata::io::heightmap::heightmap_format::import_heightmap;
use strata::io::heightmap::heightmap_import::{
    HeightmapSettings, ImportError, MAX_STREAMING_SIDE_CELLS, NoDataFill, RawLayout,
    read_heightmap, read_heightmap_header,
};
use strata::io::world::streaming_file::{
    GENERATED_FORMAT_VERSION, STREAMING_FORMAT_VERSION, StreamingFileError, StreamingWorldFile,
};
use strata::pipeline::lod::{LodSettings, MAX_DRAW_DISTANCE_STUDS};
use strata::terrain::generation::generate::GeneratorSettings;
use strata::terrain::generation::heightmap::HeightSamples;
use strata::terrain::generation::heightmap_terrain::HeightmapTerrain;
use strata::terrain::streaming::column_source::ColumnSource;
use strata::terrain::streaming::residency::Residency;
use strata::terrain::{Cell, CellBox, ColumnCoord, Grid, Material};

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "strata-heightmap-stream-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A deterministic 16-bit relief: rolling hills, a ridge, a sheer step (a
/// cliff) and a low basin, so every material rule and the tall ramp
/// bands show up.
fn relief(w: u32, h: u32) -> Vec<u16> {
    (0..h)
        .flat_map(|y| {
            (0..w).map(move |x| {
                let (fx, fy) = (x as f64 / w as f64, y as f64 / h as f64);
                let hills = 0.25 + 0.12 * (fx * 17.0).sin() * (fy * 11.0).cos();
                let ridge = 0.35 * (-((fx - 0.7) * 9.0).powi(2)).exp();
                let step = if fx > 0.3 && fy < 0.4 { 0.2 } else { 0.0 };
                let basin = -0.2 * (-((fx - 0.2).powi(2) + (fy - 0.75).powi(2)) * 40.0).exp();
                let v = (hills + ridge + step + basin).clamp(0.0, 1.0);
                (v * 65535.0).round() as u16
            })
        })
        .collect()
}

fn write_png16(path: &Path, w: u32, h: u32, values: Vec<u16>) {
    image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::from_raw(w, h, values)
        .unwrap()
        .save(path)
        .unwrap();
}

/// A 256 × 256 relief PNG, with a bathymetric sidecar when `sidecar`.
fn relief_png(dir: &Path, name: &str, sidecar: bool) -> PathBuf {
    let png = dir.join(format!("{name}.png"));
    write_png16(&png, 256, 256, relief(256, 256));
    if sidecar {
        std::fs::write(
            png.with_extension("json"),
            r#"{"spacing_x_m": 30.0, "spacing_y_m": 36.0, "min_elevation_m": -120.0,
                "max_elevation_m": 360.0, "width": 256, "height": 256}"#,
        )
        .unwrap();
    }
    png
}

/// The option sets the equality is checked under.
fn option_sets() -> Vec<(&'static str, bool, HeightmapSettings)> {
    vec![
        ("defaults", false, HeightmapSettings::default()),
        (
            "bathymetry-sea",
            true,
            HeightmapSettings {
                sea_level_m: Some(0.0),
                ..HeightmapSettings::default()
            },
        ),
        (
            "slate-sea-odd-scale",
            false,
            HeightmapSettings {
                cells_per_pixel: 1.37,
                vertical_scale: 2.5,
                base_height_cells: 10,
                sea_level_m: Some(0.3),
                base_material: Some(Material::SLATE),
                nodata: NoDataFill::Sea,
                raw: RawLayout {
                    size_px: Some((3, 5)),
                    big_endian: true,
                },
            },
        ),
    ]
}

/// Every chunk column of `source` over its footprint and one column
/// around it, as one grid; checks that columns outside are empty.
fn all_columns(source: &dyn ColumnSource, (cx, cz): (i32, i32)) -> Grid {
    let mut chunks = Vec::new();
    for z in -1..=cz {
        for x in -1..=cx {
            let column = ColumnCoord::new(x, z);
            let inside = (0..cx).contains(&x) && (0..cz).contains(&z);
            assert_eq!(source.is_outside(column), !inside, "{column:?}");
            let got = source.load_column(column).unwrap();
            if !inside {
                assert!(got.is_empty(), "{column:?}");
            }
            chunks.extend(got);
        }
    }
    Grid::from_chunks(chunks)
}

#[test]
fn on_demand_columns_equal_the_whole_import_chunk_for_chunk() {
    let dir = scratch("equal");
    for (name, sidecar, settings) in option_sets() {
        let png = relief_png(&dir, name, sidecar);
        let whole = import_heightmap(&png, &settings).unwrap();
        let terrain =
            HeightmapTerrain::streaming(read_heightmap(&png).unwrap(), &settings).unwrap();
        let (w, d) = terrain.extent_cells();
        let (cx, cz) = terrain.chunk_columns();
        assert_eq!((cx as i64, cz as i64), ((w + 31) / 32, (d + 31) / 32));
        // The samples are 2-byte codes: 128 KiB for 256², not 512 KiB of f64.
        assert_eq!(terrain.map().samples.heap_bytes(), 256 * 256 * 2);
        let streamed = all_columns(&terrain, (cx, cz));
        assert_eq!(streamed.chunk_count(), whole.chunk_count(), "{name}");
        for (coord, chunk) in whole.chunks() {
            assert_eq!(
                streamed.chunk(coord).map(|c| c.cells.content_hash()),
                Some(chunk.cells.content_hash()),
                "{name}: chunk {coord:?}"
            );
        }
        assert_eq!(streamed.content_hash(), whole.content_hash(), "{name}");
        // The surface the camera helper reads is the built surface.
        let s = terrain.surface_height_cells(w / 2, d / 2).unwrap();
        assert!(s > settings.base_height_cells as f64 && s <= terrain.top_cells());
        assert_eq!(terrain.surface_height_cells(w, 0), None);

        // The world a streamed import makes goes through its own file's
        // copy of the PNG: still the same cells.
        let world = StreamedWorld::import_heightmap(&png, &settings, &dir).unwrap();
        let StreamedTerrain::Heightmap(from_file) = &world.terrain else {
            panic!("a heightmap world");
        };
        assert_eq!(
            all_columns(from_file.as_ref(), (cx, cz)).content_hash(),
            whole.content_hash(),
            "{name}: from the world file"
        );
        assert_eq!(world.file.format_version(), STREAMING_FORMAT_VERSION);
        world.remove_recovery();
    }
}

/// Loads `columns` now and returns the hash of their cells.
fn load_hash(r: &mut Residency, grid: &mut Grid, columns: &[ColumnCoord]) -> u64 {
    r.load_now(grid, columns.iter().copied()).unwrap();
    Grid::from_chunks(columns.iter().flat_map(|c| grid.column_chunks(*c))).content_hash()
}

#[test]
fn a_streamed_heightmap_world_saved_and_reopened_without_its_png_is_the_same() {
    let dir = scratch("save");
    let (_, _, settings) = option_sets().remove(1);
    let png = relief_png(&dir, "coast", true);
    let whole = import_heightmap(&png, &settings).unwrap();
    let edited: Vec<ColumnCoord> = ColumnCoord::new(3, 3)
        .with_neighbours()
        .chain(ColumnCoord::new(4, 3).with_neighbours())
        .collect();
    let unedited = [ColumnCoord::new(10, 1), ColumnCoord::new(0, 12)];
    let target = dir.join("saved.strata");
    let edited_hash = {
        let world = StreamedWorld::import_heightmap(&png, &settings, &dir).unwrap();
        let mut r = world.residency(usize::MAX);
        let mut grid = Grid::streaming();
        let before = load_hash(&mut r, &mut grid, &edited);
        // Columns (3, 3) and (4, 3).
        let region = CellBox::new(IVec3::new(100, 0, 100), IVec3::new(140, 90, 120));
        grid.edit_region(region, |_, _| Cell::full(Material::LIMESTONE))
            .unwrap();
        let hash =
            Grid::from_chunks(edited.iter().flat_map(|c| grid.column_chunks(*c))).content_hash();
        assert_ne!(hash, before, "the edit changed the cells");
        // Spill one edited column before the save, keep the other resident.
        r.end_frame();
        r.evict(&mut grid, &[ColumnCoord::new(3, 3)]);
        assert!(r.stats.spilled >= 1, "{:?}", r.stats);
        let report = world.save(&mut r, &grid, &target, None, None).unwrap();
        assert!(report.columns_written >= 1, "{report:?}");
        assert!(report.pending_saved >= 1, "{report:?}");
        world.remove_recovery();
        hash
    };
    // The file is self-contained: the PNG and its sidecar are gone.
    std::fs::remove_file(&png).unwrap();
    std::fs::remove_file(png.with_extension("json")).unwrap();
    let world = StreamedWorld::open(&target).unwrap();
    assert_eq!(world.file.format_version(), STREAMING_FORMAT_VERSION);
    assert!(world.generator().is_none());
    let mut r = world.residency(usize::MAX);
    let mut grid = Grid::streaming();
    assert_eq!(
        load_hash(&mut r, &mut grid, &edited),
        edited_hash,
        "the edits"
    );
    assert_eq!(
        load_hash(&mut r, &mut grid, &unedited),
        Grid::from_chunks(unedited.iter().flat_map(|c| whole.column_chunks(*c))).content_hash(),
        "unedited columns are rebuilt from the stored PNG"
    );
    // The default camera looks at the middle of the map from above it (a
    // small map is framed whole: from over its centre the view looked past
    // its edge and showed only sky).
    let camera = world.default_camera();
    let StreamedTerrain::Heightmap(terrain) = &world.terrain else {
        panic!("a heightmap world");
    };
    let (w, d) = terrain.extent_cells();
    let centre = DVec3::new(w as f64 * 2.0, 0.0, d as f64 * 2.0);
    let to_centre = (centre - camera.pos_world).normalize();
    assert!(to_centre.dot(camera.forward_world()) > 0.9, "{camera:?}");
    assert!(camera.pos_world.y > terrain.top_cells() * 4.0);
}

/// Runs `sql` on the file at `path` with a plain connection.
fn poke(path: &Path, sql: &str, args: impl rusqlite::Params) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute(sql, args).unwrap();
}

#[test]
fn generated_world_files_are_format_4_and_format_2_files_still_open() {
    let dir = scratch("v2");
    let path = dir.join("generated.strata");
    let settings = GeneratorSettings {
        seed: 3,
        size_cells: 8192,
    };
    let file = StreamingWorldFile::create(&path, &settings).unwrap();
    assert_eq!(file.format_version(), STREAMING_FORMAT_VERSION);
    drop(file);
    let tables = |path: &std::path::Path| -> Vec<String> {
        let conn = rusqlite::Connection::open(path).unwrap();
        let mut tables: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        tables.sort();
        tables
    };
    // The three tables of format 2 and the summaries of format 4.
    assert_eq!(
        tables(&path),
        ["column_summaries", "columns", "meta", "pending_columns"]
    );
    // What builds before format 4 wrote: exactly the tables of format 2.
    poke(&path, "DROP TABLE column_summaries", []);
    poke(
        &path,
        "UPDATE meta SET value = '2' WHERE key = 'format_version'",
        [],
    );
    assert_eq!(tables(&path), ["columns", "meta", "pending_columns"]);
    assert_eq!(
        StreamingWorldFile::open(&path).unwrap().format_version(),
        GENERATED_FORMAT_VERSION
    );
    let world = StreamedWorld::open(&path).unwrap();
    assert_eq!(world.generator(), Some(settings));
    // A format-2 file that claims format 3 is refused by name.
    poke(
        &path,
        "UPDATE meta SET value = '3' WHERE key = 'format_version'",
        [],
    );
    assert!(matches!(
        StreamingWorldFile::open(&path),
        Err(StreamingFileError::BadMeta { key, .. }) if key == "format_version"
    ));
}

#[test]
fn damaged_heightmap_world_files_are_typed_errors() {
    let dir = scratch("damaged");
    let png = relief_png(&dir, "map", false);
    let settings = HeightmapSettings::default();
    let fresh = |name: &str| {
        let world = StreamedWorld::import_heightmap(&png, &settings, &dir).unwrap();
        let path = dir.join(name);
        std::fs::copy(world.file.path(), &path).unwrap();
        world.remove_recovery();
        path
    };
    let open_err = |path: &Path| StreamedWorld::open(path).unwrap_err();

    let flipped = fresh("flipped.strata");
    poke(
        &flipped,
        "UPDATE heightmap_png SET data = zeroblob(length(data)) WHERE part = 0",
        [],
    );
    let e = open_err(&flipped);
    assert!(
        matches!(&e, StreamingFileError::CorruptHeightmap { message, .. } if message.contains("hash")),
        "{e}"
    );
    assert!(e.to_string().contains("flipped.strata"), "{e}");

    let missing = fresh("missing.strata");
    poke(&missing, "DELETE FROM heightmap_png", []);
    let e = open_err(&missing);
    assert!(
        matches!(&e, StreamingFileError::CorruptHeightmap { .. }),
        "{e}"
    );

    let bad_meta = fresh("meta.strata");
    let conn = rusqlite::Connection::open(&bad_meta).unwrap();
    let text: String = conn
        .query_row("SELECT value FROM meta WHERE key = 'heightmap'", [], |r| {
            r.get(0)
        })
        .unwrap();
    drop(conn);
    for (from, to) in [
        (r#""cells_per_pixel":"2""#, r#""cells_per_pixel":"-2""#),
        (r#""cells_per_pixel":"2""#, r#""cells_per_pixel":2"#),
        ("\"png_bytes\":", "\"png_bytes\":99999999999,\"x\":"),
    ] {
        assert!(text.contains(from), "{text}");
        poke(
            &bad_meta,
            "UPDATE meta SET value = ?1 WHERE key = 'heightmap'",
            params![text.replacen(from, to, 1)],
        );
        let e = open_err(&bad_meta);
        assert!(
            matches!(&e, StreamingFileError::BadMeta { key, .. } if key == "heightmap"),
            "{from} → {to}: {e}"
        );
    }

    // A heightmap file without its PNG table has the tables of a generated
    // world and no generator settings: refused by name.
    let no_table = fresh("no-table.strata");
    poke(&no_table, "DROP TABLE heightmap_png", []);
    assert!(matches!(
        StreamingWorldFile::open(&no_table),
        Err(StreamingFileError::BadMeta { key, .. }) if key == "generator"
    ));
}

/// A valid PNG header (and bogus pixel data) of `w` × `h` 16-bit pixels:
/// enough for every check that runs before decoding.
fn header_only_png(path: &Path, w: u32, h: u32) {
    // A real 1×1 PNG with its IHDR size patched (and its CRC redone).
    let tiny = path.with_extension("tiny.png");
    write_png16(&tiny, 1, 1, vec![7]);
    let mut bytes = std::fs::read(&tiny).unwrap();
    bytes[16..20].copy_from_slice(&w.to_be_bytes());
    bytes[20..24].copy_from_slice(&h.to_be_bytes());
    let crc = crc32fast::hash(&bytes[12..29]);
    bytes[29..33].copy_from_slice(&crc.to_be_bytes());
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn bad_streamed_imports_are_typed_errors_and_write_nothing() {
    let dir = scratch("bad");
    let recovery = dir.join("recovery");
    std::fs::create_dir_all(&recovery).unwrap();
    let import = |png: &Path, settings: &HeightmapSettings| {
        StreamedWorld::import_heightmap(png, settings, &recovery).unwrap_err()
    };
    let source = |e: StreamingFileError| match e {
        StreamingFileError::Heightmap { source, .. } => *source,
        other => panic!("not a heightmap error: {other}"),
    };

    // 16384 pixels a side are admitted (a 32768-cell streamed world)…
    let big = dir.join("big.png");
    header_only_png(&big, 16384, 16384);
    let header = read_heightmap_header(
        &big,
        &HeightmapSettings::default(),
        MAX_STREAMING_SIDE_CELLS,
    )
    .unwrap();
    assert_eq!(header.extent_cells, (32768.0, 32768.0));
    // …but not a terrain wider than a streamed world may be.
    let wide = HeightmapSettings {
        cells_per_pixel: 100.0,
        ..HeightmapSettings::default()
    };
    let e = source(import(&big, &wide));
    assert!(
        matches!(
            e,
            ImportError::TerrainTooLarge {
                limit_cells: MAX_STREAMING_SIDE_CELLS,
                ..
            }
        ),
        "{e}"
    );
    // Absurd headers are refused before anything is read past them.
    let absurd = dir.join("absurd.png");
    header_only_png(&absurd, 40_000, 40_000);
    let e = source(import(&absurd, &HeightmapSettings::default()));
    assert!(matches!(e, ImportError::ImageTooLarge { .. }), "{e}");
    // Bad pixel data past a good header: the stored copy does not decode.
    let e = source(import(&big, &HeightmapSettings::default()));
    assert!(matches!(e, ImportError::Decode { .. }), "{e}");
    // Bad settings and a missing file.
    let png = relief_png(&dir, "ok", false);
    let e = source(import(
        &png,
        &HeightmapSettings {
            vertical_scale: f32::NAN,
            ..HeightmapSettings::default()
        },
    ));
    assert!(matches!(e, ImportError::InvalidSetting { .. }), "{e}");
    let e = source(import(&dir.join("nope.png"), &HeightmapSettings::default()));
    assert!(matches!(e, ImportError::NotFound { .. }), "{e}");
    assert_eq!(
        std::fs::read_dir(&recovery).unwrap().count(),
        0,
        "no recovery file is left behind"
    );
    // A good one still imports.
    let world =
        StreamedWorld::import_heightmap(&png, &HeightmapSettings::default(), &recovery).unwrap();
    assert!(world.file.path().exists());
    let source: Arc<dyn ColumnSource> = world.source();
    assert!(
        !source
            .load_column(ColumnCoord::new(2, 2))
            .unwrap()
            .is_empty()
    );
    world.remove_recovery();
}

/// A 16384² heightmap (32,768 cells, 131,072 studs a side at the default 2
/// cells a pixel: a streamed world) opens on the whole terrain framed from
/// outside, as a generated world's default view frames it: the camera is
/// above the terrain's highest possible surface and beyond its footprint,
/// looks down, and every corner of the terrain (floor and top) and its
/// centre project into the view. Its draw distance is raised as far as the
/// horizon draws (65,536 studs), which reaches past the nearest corner, and
/// the binary's headless run of it opens there and draws the terrain.
/// (Before, the camera sat 240 studs over the highest surface above the
/// centre, looking north: one hill filled the view.)
#[test]
fn a_16384_px_heightmap_world_opens_framed_whole_from_outside() {
    let dir = scratch("framed");
    let png = dir.join("big.png");
    write_zero_png16(&png, 16384);
    let settings = HeightmapSettings::default();
    let world = StreamedWorld::import_heightmap(&png, &settings, &dir).unwrap();
    let view = world.default_view();
    let camera = view.camera;
    assert_eq!(world.default_camera(), camera);
    let StreamedTerrain::Heightmap(terrain) = &world.terrain else {
        panic!("a heightmap world");
    };
    assert_eq!(terrain.extent_cells(), (32768, 32768));
    let side = 32768.0 * 4.0;
    let bottom = f64::from(settings.base_height_cells) * 4.0;
    let top = terrain.top_cells() * 4.0;
    let p = camera.pos_world;
    assert!(p.y > top, "{camera:?} below the top {top}");
    assert!(
        !((0.0..=side).contains(&p.x) && (0.0..=side).contains(&p.z)),
        "{camera:?} over the terrain"
    );
    assert!(camera.pitch_deg < -10.0, "{camera:?}");
    let (vw, vh) = (1600.0, 900.0);
    assert_eq!(camera.aspect, vw / vh);
    let mut points: Vec<DVec3> = (0..8)
        .map(|i| {
            DVec3::new(
                if i & 1 == 0 { 0.0 } else { side },
                if i & 2 == 0 { bottom } else { top },
                if i & 4 == 0 { 0.0 } else { side },
            )
        })
        .collect();
    points.push(DVec3::new(side / 2.0, bottom, side / 2.0));
    for q in &points {
        let (x, y) = camera.project_to_screen(*q, vw, vh).expect("in front");
        assert!(
            (0.0..=vw).contains(&x) && (0.0..=vh).contains(&y),
            "{q} projects to ({x}, {y}), outside the view"
        );
    }
    let distances: Vec<f64> = points[..8].iter().map(|q| q.distance(p)).collect();
    let farthest = distances.iter().copied().fold(0.0, f64::max);
    let nearest = distances.iter().copied().fold(f64::MAX, f64::min);
    assert_eq!(view.reach_studs, farthest);
    assert!(
        nearest < MAX_DRAW_DISTANCE_STUDS,
        "nearest corner {nearest}"
    );
    assert_eq!(
        LodSettings::default()
            .for_default_view(view.reach_studs)
            .draw_distance_studs,
        MAX_DRAW_DISTANCE_STUDS
    );
    world.remove_recovery();

    // The headless run opens on that view and draws the terrain (with the
    // default draw distance, 8,192 studs, it would show only sky).
    let stats = dir.join("stats.json");
    common::run_ok(
        std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
            .args(["--headless", "--heightmap"])
            .arg(&png)
            .arg("--screenshot")
            .arg(dir.join("framed.png"))
            .args(["--size", "64x36", "--stats-json"])
            .arg(&stats),
    );
    let json = common::read_json(&stats);
    let used: Vec<f64> = json["camera"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let want = [
        p.x,
        p.y,
        p.z,
        f64::from(camera.yaw_deg),
        f64::from(camera.pitch_deg),
    ];
    for (u, w) in used.iter().zip(want) {
        assert!(
            (u - w).abs() < 1e-6,
            "camera {used:?}, default view {want:?}"
        );
    }
    assert!(
        json["drawn_triangles"].as_u64().unwrap() > 0,
        "the framed terrain is drawn"
    );
}

/// The layers of a heightmap world are checked against the import they
/// were made over: a heightmap setting changed in the file while it was
/// closed makes them refused (naming the file), never laid on other ground.
#[test]
fn layers_over_a_changed_heightmap_setting_are_refused() {
    let dir = scratch("layers-import");
    let png = relief_png(&dir, "map", false);
    let world = StreamedWorld::import_heightmap(&png, &HeightmapSettings::default(), &dir).unwrap();
    let mut document = world.document();
    document.stack.add_layer("Roads").unwrap();
    let mut r = world.residency(usize::MAX);
    let target = dir.join("layers.strata");
    world
        .save(&mut r, &Grid::streaming(), &target, None, Some(&document))
        .unwrap();
    world.remove_recovery();
    assert_eq!(
        StreamedWorld::open(&target).unwrap().document().stack,
        document.stack
    );
    let conn = rusqlite::Connection::open(&target).unwrap();
    let meta: String = conn
        .query_row("SELECT value FROM meta WHERE key = 'heightmap'", [], |r| {
            r.get(0)
        })
        .unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&meta).unwrap();
    value["vertical_scale"] = serde_json::json!("6");
    conn.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'heightmap'",
        [value.to_string()],
    )
    .unwrap();
    drop(conn);
    let e = StreamedWorld::open(&target).unwrap_err();
    assert!(
        matches!(&e, StreamingFileError::BadLayers { reason, .. } if reason.contains("base check")),
        "{e}"
    );
    assert!(e.to_string().contains("layers.strata"), "{e}");
}

/// The elevation fixture `name` of `tests/data/elevation`.
fn elevation_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/elevation")
        .join(name)
}

/// One cell a pixel, elevations unexaggerated.
fn true_scale() -> HeightmapSettings {
    HeightmapSettings {
        cells_per_pixel: 1.0,
        vertical_scale: 1.0,
        ..HeightmapSettings::default()
    }
}

/// GeoTIFF, EXR and RAW16 imports stream too: the world's file keeps the
/// source's bytes, reads them in place when it opens, and its columns are
/// the whole import's, chunk for chunk; the world keeps the file's
/// georeference.
#[test]
fn elevation_files_stream_from_their_stored_copy_like_the_whole_import() {
    let dir = scratch("elevation");
    let settings = HeightmapSettings {
        nodata: NoDataFill::Sea,
        ..true_scale()
    };
    for name in [
        "uint16_nodata_packbits.tif",
        "geographic_degrees.tif",
        "float32_tiled_lzw_pred3.tif",
        "int16_tiled_lzw_edges.tif",
        "float32_bands_planar.tif",
        "int16_striped_deflate_pred2.tif",
        "rgb_float32.exr",
        "unity_129.r16",
    ] {
        let path = elevation_fixture(name);
        let whole = import_heightmap(&path, &settings).unwrap();
        let world = StreamedWorld::import_heightmap(&path, &settings, &dir).unwrap();
        let StreamedTerrain::Heightmap(from_file) = &world.terrain else {
            panic!("a heightmap world");
        };
        let columns = from_file.chunk_columns();
        assert_eq!(
            all_columns(from_file.as_ref(), columns).content_hash(),
            whole.content_hash(),
            "{name}: from the world file"
        );
        let geo = world.meta().georeference.expect("georeferenced");
        if name.ends_with(".tif") {
            assert!(geo.model.is_some(), "{name}");
        }
        // Reopened from its file alone, the world is the same.
        let reopened = StreamedWorld::open(world.file.path()).unwrap();
        let StreamedTerrain::Heightmap(again) = &reopened.terrain else {
            panic!("a heightmap world");
        };
        assert_eq!(
            all_columns(again.as_ref(), columns).content_hash(),
            whole.content_hash(),
            "{name}: reopened"
        );
        assert_eq!(reopened.meta().georeference, Some(geo));
        drop(reopened);
        world.remove_recovery();
    }
}

/// A streamed GeoTIFF is never decoded whole: after the open's scan, a
/// column reads only the tiles (or strips) its samples fall in, and a
/// column read again reads none.
#[test]
fn a_streamed_geotiff_column_reads_only_its_tiles() {
    let dir = scratch("tiles");
    let settings = true_scale();
    // (fixture, column, its tiles or strips): 200 × 150 pixels at a cell
    // each; column (1, 0) samples pixels 31..=64 across and 0..=32 down.
    for (name, column, expected) in [
        // 64² tiles: tiles (0, 0) and (1, 0) of 4 × 3.
        ("float32_tiled_lzw_pred3.tif", ColumnCoord::new(1, 0), 2),
        // Strips of 7 rows: strips 0 to 4 of 22.
        ("int16_striped_deflate_pred2.tif", ColumnCoord::new(1, 0), 5),
    ] {
        let path = elevation_fixture(name);
        let world = StreamedWorld::import_heightmap(&path, &settings, &dir).unwrap();
        let reopened = StreamedWorld::open(world.file.path()).unwrap();
        let StreamedTerrain::Heightmap(terrain) = &reopened.terrain else {
            panic!("a heightmap world");
        };
        let HeightSamples::Tiled(tiles) = &terrain.map().samples else {
            panic!("{name}: a streamed GeoTIFF is read a tile at a time");
        };
        assert_eq!(tiles.tiles_read(), 0, "{name}: the open decoded no tile");
        let chunks = terrain.load_column(column).unwrap();
        assert!(!chunks.is_empty(), "{name}");
        assert_eq!(tiles.tiles_read(), expected, "{name}");
        terrain.load_column(column).unwrap();
        assert_eq!(tiles.tiles_read(), expected, "{name}: cached");
        drop(reopened);
        world.remove_recovery();
    }
}

/// Horizon nodes whose samples stand for 8 pixels or more read a streamed
/// GeoTIFF's overview (the mean of each 8 × 8 block), not its tiles: the
/// coarse height equals the exact one moved by the block means' bilinear
/// value minus the pixel's own, and no tile is decoded; finer spacings are
/// exact.
#[test]
fn coarse_samples_of_a_streamed_geotiff_read_its_overview() {
    use strata::terrain::streaming::surface_sampler::SurfaceSampler;
    let dir = scratch("overview");
    let path = elevation_fixture("float32_tiled_lzw_pred3.tif");
    let settings = true_scale();
    let world = StreamedWorld::import_heightmap(&path, &settings, &dir).unwrap();
    let reopened = StreamedWorld::open(world.file.path()).unwrap();
    let StreamedTerrain::Heightmap(terrain) = &reopened.terrain else {
        panic!("a heightmap world");
    };
    let HeightSamples::Tiled(tiles) = &terrain.map().samples else {
        panic!("tiled");
    };
    // Column (19, 27) samples pixel (19, 27) exactly (one cell a pixel).
    let (x, z) = (19_i64, 27_i64);
    let coarse = terrain
        .height_cells_coarse(x as f64 + 0.5, z as f64 + 0.5, 8.0)
        .unwrap();
    assert_eq!(tiles.tiles_read(), 0, "the overview answered");
    let exact = terrain
        .height_cells(x as f64 + 0.5, z as f64 + 0.5)
        .unwrap();
    assert_eq!(
        terrain.height_cells_coarse(x as f64 + 0.5, z as f64 + 0.5, 4.0),
        Some(exact),
        "4 pixels apart is exact"
    );
    let px = |x: u32, y: u32| f64::from(tiles.get(x, y).unwrap());
    // Cells per metre, from two neighbouring columns.
    let next = terrain
        .height_cells(x as f64 + 1.5, z as f64 + 0.5)
        .unwrap();
    let cells_per_m = (next - exact) / (px(20, 27) - px(19, 27));
    // Block means, and their bilinear value at pixel (19, 27): blocks are
    // centred at 8 i + 3.5, so between blocks 1 and 2 across (0.9375 of
    // the way) and 2 and 3 down (0.9375).
    let block = |bx: u32, by: u32| {
        let mut sum = 0.0;
        for y in by * 8..by * 8 + 8 {
            for x in bx * 8..bx * 8 + 8 {
                sum += px(x, y);
            }
        }
        sum / 64.0
    };
    let lerp = |a: f64, b: f64, t: f64| a + (b - a) * t;
    let t = 0.9375;
    let mean = lerp(
        lerp(block(1, 2), block(2, 2), t),
        lerp(block(1, 3), block(2, 3), t),
        t,
    );
    let expected = exact + (mean - px(19, 27)) * cells_per_m;
    assert!(
        (coarse - expected).abs() < 1e-3,
        "coarse {coarse}, expected {expected} (exact {exact})"
    );
    drop(reopened);
    world.remove_recovery();
}

/// A streamed import that fails while the stored copy is scanned names the
/// file the user chose, not the recovery copy (deleted as the import
/// fails), and leaves nothing behind.
#[test]
fn a_failed_streamed_geotiff_import_names_the_chosen_file() {
    let dir = scratch("failed_scan");
    let good = std::fs::read(elevation_fixture("float32_tiled_lzw_pred3.tif")).unwrap();
    // Cut in the middle of the tiles: the header reads, a tile does not.
    let truncated = dir.join("truncated.tif");
    std::fs::write(&truncated, &good[..good.len() / 2]).unwrap();
    let recovery = dir.join("recovery");
    std::fs::create_dir_all(&recovery).unwrap();
    let Err(err) = StreamedWorld::import_heightmap(&truncated, &true_scale(), &recovery) else {
        panic!("a truncated tile is refused");
    };
    let StreamingFileError::Heightmap { source, .. } = &err else {
        panic!("a heightmap error: {err}");
    };
    match source.as_ref() {
        ImportError::Unreadable { path, .. } => assert_eq!(path, &truncated, "{err}"),
        other => panic!("unreadable: {other}"),
    }
    assert_eq!(
        std::fs::read_dir(&recovery).unwrap().count(),
        0,
        "nothing left"
    );
}
