//! World files on disk (`strata::io`): round trips of the default, imported
//! and sculpted worlds, incremental saves that write only what a stroke
//! touched, every failure on real broken files (truncated, flipped byte,
//! overwritten header, newer format, decompression bomb, …) without touching
//! the caller's grid, saves killed half-way (a child `strata` process), and
//! the glTF and heightmap exports.

mod common;
use common::dem_path;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use glam::{DVec3, IVec3};
use strata::io::ExportError;
use strata::io::export::gltf_export::{GlbEncoding, export_glb};
use strata::io::heightmap::heightmap_export::{HeightmapExportOptions, export_heightmap};
use strata::io::heightmap::heightmap_format::import_heightmap;
use strata::io::heightmap::heightmap_import::{HeightmapSettings, read_heightmap};
use strata::io::world::world_file::{
    self, DENSE_CHUNK_BYTES, FORMAT_VERSION, LoadOptions, MAX_CHUNKS, SAVE_STALL_ENV,
    SAVE_STALL_MESSAGE, WorldFile, WorldFileError, WorldMeta,
};
use strata::pipeline::WorldMeshes;
use strata::terrain::command::edit_command::{CommandError, EditCommand, EditSession};
use strata::terrain::editing::brush::{Brush, BrushMode};
use strata::terrain::editing::kernels::apply_brush;
use strata::terrain::editing::region::RegionError;
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};
use strata::terrain::materials::MaterialLibrary;
use strata::terrain::storage::coords::{
    MAX_CELL_COORD, MAX_CHUNK_COORD, MIN_CELL_COORD, MIN_CHUNK_COORD,
};
use strata::terrain::{Cell, CellBox, CellCoord, ChunkCells, ChunkCoord, Grid, Material};

/// The default world, generated once for the tests that need it.
fn default_world() -> &'static Grid {
    static WORLD: OnceLock<Grid> = OnceLock::new();
    WORLD.get_or_init(|| generate_world(&GeneratorSettings::default()).expect("valid settings"))
}

fn small_settings() -> GeneratorSettings {
    GeneratorSettings {
        seed: 7,
        size_cells: 128,
    }
}

/// A small generated world (4 × 4 chunk columns) for the failure cases.
fn small_world() -> Grid {
    generate_world(&small_settings()).expect("valid settings")
}

/// A fresh, empty directory for one test.
fn test_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("world_file")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create test dir");
    dir
}

fn brush(mode: BrushMode, radius_cells: f32) -> Brush {
    Brush {
        mode,
        radius_cells,
        strength: 1.0,
        material: Material::SNOW,
        ignore_water: false,
    }
}

/// Saves `grid`, loads it back and checks the content hash; returns the file size.
fn assert_round_trip(grid: &Grid, meta: &WorldMeta, path: &Path) -> u64 {
    let (_, report) = WorldFile::save_full(path, grid, meta).expect("save");
    assert!(report.full);
    assert_eq!(report.chunks_written, grid.chunk_count());
    assert_eq!(report.world_hash, grid.content_hash());
    let (loaded, loaded_meta, load_report) =
        world_file::load(path, LoadOptions::default()).expect("load");
    assert_eq!(loaded.content_hash(), grid.content_hash());
    assert_eq!(loaded.chunk_count(), grid.chunk_count());
    assert_eq!(loaded.uniform_chunk_count(), grid.uniform_chunk_count());
    assert_ne!(loaded.generation(), grid.generation());
    assert!(load_report.world_hash_ok && load_report.skipped.is_empty());
    assert_eq!(load_report.chunks, grid.chunk_count());
    assert_eq!(loaded_meta, report.meta);
    report.file_bytes
}

#[test]
fn default_world_round_trips_within_the_size_target() {
    let dir = test_dir("default_world");
    let grid = default_world();
    let mut meta = WorldMeta::generated(&GeneratorSettings::default());
    meta.camera = Some([2048.0, 900.0, 5000.0, 12.5, -30.0]);
    let bytes = assert_round_trip(grid, &meta, &dir.join("default.strata"));
    let (_, stored, _) =
        world_file::load(&dir.join("default.strata"), LoadOptions::default()).expect("load");
    assert_eq!(stored.generator, Some(GeneratorSettings::default()));
    assert_eq!(stored.camera, meta.camera);
    assert!(stored.created_unix > 1_600_000_000);
    assert_eq!(stored.created_unix, stored.modified_unix);
    // The world's volume: 1024 × 192 × 1024 cells.
    let per_voxel = bytes as f64 / (1024.0 * 192.0 * 1024.0);
    eprintln!("default world: {bytes} bytes, {per_voxel:.4} bytes per voxel");
    assert!(per_voxel <= 0.05, "{per_voxel} bytes per voxel");
}

#[test]
fn jacksboro_import_round_trips() {
    let dem = dem_path();
    let dir = test_dir("jacksboro");
    let grid = import_heightmap(&dem, &HeightmapSettings::default()).expect("import");
    assert_round_trip(&grid, &WorldMeta::default(), &dir.join("jacksboro.strata"));
}

#[test]
fn sculpted_world_round_trips_and_saves_incrementally() {
    let dir = test_dir("sculpted");
    let path = dir.join("sculpted.strata");
    let mut grid = small_world();
    // Strokes crossing chunk borders (x = 256 studs is a chunk border).
    apply_brush(
        &mut grid,
        &brush(BrushMode::Add, 12.0),
        DVec3::new(256.0, 200.0, 256.0),
    )
    .expect("add");
    apply_brush(
        &mut grid,
        &brush(BrushMode::Subtract, 9.0),
        DVec3::new(300.0, 170.0, 128.0),
    )
    .expect("subtract");
    assert_round_trip(&grid, &WorldMeta::generated(&small_settings()), &path);

    // Open it again: the handle knows the loaded grid.
    let (mut file, mut grid, meta, _) =
        WorldFile::open(&path, LoadOptions::default()).expect("open");
    let nothing = file.save_incremental(&grid, &meta).expect("save unchanged");
    assert_eq!((nothing.chunks_written, nothing.chunks_deleted), (0, 0));
    assert!(!nothing.full);

    // One stroke across a chunk corner: exactly the chunks it changed are written.
    let at = surface_point(&grid, 384.0, 384.0);
    let edit = apply_brush(&mut grid, &brush(BrushMode::Add, 10.0), at).expect("stroke");
    assert!(edit.changed.len() >= 4, "{} chunks", edit.changed.len());
    let saved = file
        .save_incremental(&grid, &meta)
        .expect("incremental save");
    assert!(!saved.full);
    assert_eq!(saved.chunks_written, edit.changed.len());
    assert_eq!(saved.chunks_deleted, 0);
    assert_eq!(saved.world_hash, grid.content_hash());
    let (loaded, _, _) = world_file::load(&path, LoadOptions::default()).expect("load");
    assert_eq!(loaded.content_hash(), grid.content_hash());

    // A blob in the air creates a chunk; subtracting it removes the chunk,
    // and the next save deletes its row.
    let above = DVec3::new(64.0, 1500.0, 64.0);
    let added = apply_brush(&mut grid, &brush(BrushMode::Add, 2.0), above).expect("add");
    assert_eq!(added.changed.len(), 1);
    let saved = file.save_incremental(&grid, &meta).expect("save");
    assert_eq!((saved.chunks_written, saved.chunks_deleted), (1, 0));
    let removed = apply_brush(&mut grid, &brush(BrushMode::Subtract, 5.0), above).expect("sub");
    assert_eq!(removed.removed.len(), 1);
    let saved = file.save_incremental(&grid, &meta).expect("save");
    assert_eq!((saved.chunks_written, saved.chunks_deleted), (0, 1));
    let (loaded, _, _) = world_file::load(&path, LoadOptions::default()).expect("load");
    assert_eq!(loaded.content_hash(), grid.content_hash());
    assert_eq!(loaded.chunk_count(), grid.chunk_count());

    // Two phases: capture the changes where the grid lives, write them on
    // another thread while editing goes on; the next save picks up the rest.
    let at = surface_point(&grid, 200.0, 440.0);
    let first = apply_brush(&mut grid, &brush(BrushMode::Add, 6.0), at).expect("stroke");
    let batch = file.prepare_save(&grid);
    assert_eq!(batch.chunks_to_write(), first.changed.len());
    assert!(!batch.is_full() && !batch.is_empty());
    let at_prepare = grid.content_hash();
    let at = surface_point(&grid, 40.0, 40.0);
    let second = apply_brush(&mut grid, &brush(BrushMode::Subtract, 6.0), at).expect("stroke");
    let writer_meta = meta.clone();
    let (mut file, written) = std::thread::spawn(move || {
        let report = file.write_batch(batch, &writer_meta).expect("write batch");
        (file, report)
    })
    .join()
    .expect("writer thread");
    assert_eq!(written.chunks_written, first.changed.len());
    let (loaded, _, _) = world_file::load(&path, LoadOptions::default()).expect("load");
    assert_eq!(loaded.content_hash(), at_prepare);
    let rest = file.save_incremental(&grid, &meta).expect("save");
    assert_eq!(rest.chunks_written, second.changed.len());
    let (loaded, _, _) = world_file::load(&path, LoadOptions::default()).expect("load");
    assert_eq!(loaded.content_hash(), grid.content_hash());

    // Another grid (new generation): the handle rewrites every chunk.
    let other = small_world();
    let saved = file.save_incremental(&other, &meta).expect("save other");
    assert!(saved.full);
    assert_eq!(saved.chunks_written, other.chunk_count());
    let (loaded, _, _) = world_file::load(&path, LoadOptions::default()).expect("load");
    assert_eq!(loaded.content_hash(), other.content_hash());
}

/// The surface point (studs) above column `(x, z)` (studs).
fn surface_point(grid: &Grid, x: f64, z: f64) -> DVec3 {
    let h = surface_height(grid, (x / 4.0) as i32, (z / 4.0) as i32).expect("ground");
    DVec3::new(x, h * 4.0, z)
}

// ---------------------------------------------------------------------------
// Broken files

/// A saved small world and its path, for one failure case.
struct Saved {
    grid: Grid,
    hash: u64,
    path: PathBuf,
}

fn saved_small_world(name: &str) -> Saved {
    let path = test_dir(name).join("world.strata");
    let grid = small_world();
    WorldFile::save_full(&path, &grid, &WorldMeta::generated(&small_settings())).expect("save");
    let hash = grid.content_hash();
    Saved { grid, hash, path }
}

impl Saved {
    /// Loads and expects an error, checking the caller's grid is untouched
    /// and the message names the file.
    fn load_err(&self) -> WorldFileError {
        let err = world_file::load(&self.path, LoadOptions::default())
            .map(|_| ())
            .expect_err("a broken file must not load");
        assert_eq!(self.grid.content_hash(), self.hash, "caller's grid changed");
        let msg = err.to_string();
        assert!(msg.contains(&self.path.display().to_string()), "{msg}");
        err
    }

    fn sql(&self, statement: &str, params: impl rusqlite::Params) {
        let conn = rusqlite::Connection::open(&self.path).expect("open with sqlite");
        conn.execute(statement, params).expect("statement");
    }

    /// `(coord, hash, blob)` of every chunk row, read with plain SQLite.
    fn rows(&self) -> Vec<(ChunkCoord, i64, Vec<u8>)> {
        let conn = rusqlite::Connection::open(&self.path).expect("open with sqlite");
        let mut stmt = conn
            .prepare("SELECT x, y, z, hash, data FROM chunks ORDER BY z, y, x")
            .unwrap();
        stmt.query_map([], |r| {
            Ok((
                ChunkCoord::new(r.get(0)?, r.get(1)?, r.get(2)?),
                r.get(3)?,
                r.get(4)?,
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect()
    }
}

#[test]
fn missing_file_is_not_found() {
    let dir = test_dir("missing");
    let err = world_file::load(&dir.join("nope.strata"), LoadOptions::default())
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(err, WorldFileError::NotFound { .. }), "{err}");
    assert!(err.to_string().contains("nope.strata"));
}

#[test]
fn truncated_file_is_reported_as_truncated() {
    let s = saved_small_world("truncated");
    let len = std::fs::metadata(&s.path).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&s.path)
        .unwrap();
    f.set_len(len / 2).unwrap();
    drop(f);
    let err = s.load_err();
    assert!(
        matches!(err, WorldFileError::Truncated { expected_bytes, actual_bytes, .. }
            if expected_bytes == len && actual_bytes == len / 2),
        "{err}"
    );
}

#[test]
fn overwritten_header_is_not_sqlite() {
    let s = saved_small_world("header");
    let mut bytes = std::fs::read(&s.path).unwrap();
    bytes[..16].copy_from_slice(b"NOT A DATABASE!!");
    std::fs::write(&s.path, bytes).unwrap();
    let err = s.load_err();
    assert!(matches!(err, WorldFileError::NotSqlite { .. }), "{err}");
    // An empty file is no world either.
    std::fs::write(&s.path, b"").unwrap();
    assert!(matches!(s.load_err(), WorldFileError::NotSqlite { .. }));
}

#[test]
fn newer_format_version_is_refused() {
    let s = saved_small_world("newer");
    let newer = (FORMAT_VERSION + 1).to_string();
    s.sql(
        "UPDATE meta SET value = ?1 WHERE key = 'format_version'",
        [&newer],
    );
    let err = s.load_err();
    assert!(
        matches!(err, WorldFileError::NewerFormat { found, supported, .. }
            if found == FORMAT_VERSION as u64 + 1 && supported == FORMAT_VERSION),
        "{err}"
    );
    let expected = format!(
        "format {} is newer than this Strata ({FORMAT_VERSION})",
        FORMAT_VERSION + 1
    );
    assert!(err.to_string().contains(&expected), "{err}");
}

#[test]
fn missing_table_bad_meta_and_foreign_databases_are_refused() {
    let s = saved_small_world("tables");
    s.sql("DROP TABLE chunks", []);
    assert!(matches!(
        s.load_err(),
        WorldFileError::MissingTable {
            table: "chunks",
            ..
        }
    ));

    let s = saved_small_world("bad_meta");
    s.sql("UPDATE meta SET value = 'zz' WHERE key = 'world_hash'", []);
    assert!(matches!(s.load_err(), WorldFileError::BadMeta { key, .. } if key == "world_hash"));

    let s = saved_small_world("foreign");
    s.sql("PRAGMA application_id = 0", []);
    assert!(matches!(
        s.load_err(),
        WorldFileError::NotAWorld {
            application_id: 0,
            ..
        }
    ));
}

#[test]
fn a_missing_chunk_row_fails_the_world_hash() {
    let s = saved_small_world("world_hash");
    let (coord, _, _) = s.rows()[0].clone();
    s.sql(
        "DELETE FROM chunks WHERE x = ?1 AND y = ?2 AND z = ?3",
        [coord.0.x, coord.0.y, coord.0.z],
    );
    let err = s.load_err();
    assert!(
        matches!(err, WorldFileError::WorldHashMismatch { stored, .. } if stored == s.hash),
        "{err}"
    );
    // With skip_bad_chunks the rest loads and the report says the hash failed.
    let (grid, _, report) = world_file::load(
        &s.path,
        LoadOptions {
            skip_bad_chunks: true,
            ..LoadOptions::default()
        },
    )
    .expect("lenient load");
    assert!(!report.world_hash_ok);
    assert_eq!(grid.chunk_count(), s.grid.chunk_count() - 1);
}

/// Flips `mask` in the byte `offset` past every occurrence of `needle` in
/// `bytes` (stale copies of a record can linger in a page's free space);
/// returns how many were flipped.
fn flip_after(bytes: &mut [u8], needle: &[u8], offset: usize, mask: u8) -> usize {
    let hits: Vec<usize> = bytes
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect();
    for &at in &hits {
        bytes[at + offset] ^= mask;
    }
    hits.len()
}

/// SQLite's varint (big-endian groups of 7 bits), for values below 2^14.
fn varint(v: usize) -> Vec<u8> {
    assert!(v < 1 << 14);
    if v < 128 {
        vec![v as u8]
    } else {
        vec![0x80 | (v >> 7) as u8, (v & 0x7f) as u8]
    }
}

/// The start of the record SQLite stores for a chunk row, up to the first
/// `prefix` bytes of its blob: the header (serial types: coordinates 0..=127
/// as constants 0 and 1 or one byte, the hash as 8 bytes, the blob with its
/// length), then the body.
fn record_start(coord: ChunkCoord, hash: i64, blob: &[u8], prefix: usize) -> Vec<u8> {
    assert!(
        hash.unsigned_abs() >= 1 << 47,
        "hash stored in fewer than 8 bytes"
    );
    let mut types = Vec::new();
    let mut body = Vec::new();
    for v in coord.0.to_array() {
        assert!((0..128).contains(&v));
        match v {
            0 => types.push(8),
            1 => types.push(9),
            v => {
                types.push(1);
                body.push(v as u8);
            }
        }
    }
    types.push(6);
    body.extend(hash.to_be_bytes());
    types.extend(varint(blob.len() * 2 + 12));
    body.extend(&blob[..prefix]);
    let mut record = vec![(types.len() + 1) as u8];
    record.extend(types);
    record.extend(body);
    record
}

#[test]
fn flipped_bytes_in_chunk_blobs_fail_with_their_coordinates() {
    let s = saved_small_world("flipped");
    let rows = s.rows();
    let plain = |c: &ChunkCoord, h: i64| {
        c.0.to_array().iter().all(|v| (0..128).contains(v)) && h.unsigned_abs() >= 1 << 47
    };
    let (uniform, uhash, ublob) = rows
        .iter()
        .find(|(c, h, b)| b.len() == 3 && b[2] > 0 && plain(c, *h))
        .cloned()
        .expect("a uniform chunk");
    let (dense, dhash, dblob) = rows
        .iter()
        .find(|(c, h, b)| b[0] == 1 && b.len() > 200 && plain(c, *h))
        .cloned()
        .expect("a dense chunk");
    let mut bytes = std::fs::read(&s.path).unwrap();
    // The occupancy byte of the uniform chunk: still a valid cell, wrong content.
    let needle = record_start(uniform, uhash, &ublob, 3);
    assert!(flip_after(&mut bytes, &needle, needle.len() - 1, 0x01) >= 1);
    std::fs::write(&s.path, &bytes).unwrap();
    let err = s.load_err();
    assert!(
        matches!(&err, WorldFileError::BadChunk { coords, .. } if coords == &vec![uniform]),
        "{err}"
    );
    let c = uniform.0;
    assert!(
        err.to_string()
            .contains(&format!("({}, {}, {})", c.x, c.y, c.z)),
        "{err}"
    );

    // A byte inside a dense chunk's zstd data: either the frame no longer
    // decodes or the cells fail their hash; the coordinate is reported.
    let needle = record_start(dense, dhash, &dblob, 64);
    assert!(flip_after(&mut bytes, &needle, needle.len() - 24, 0x10) >= 1);
    std::fs::write(&s.path, &bytes).unwrap();
    match s.load_err() {
        WorldFileError::BadChunk { coords, .. } => {
            assert_eq!(coords.len(), 2);
            assert!(coords.contains(&uniform) && coords.contains(&dense));
        }
        WorldFileError::InvalidChunk { coord, .. } => assert_eq!(coord, dense),
        other => panic!("unexpected error {other}"),
    }

    // skip_bad_chunks loads everything else, and says what it skipped.
    let (grid, _, report) = world_file::load(
        &s.path,
        LoadOptions {
            skip_bad_chunks: true,
            ..LoadOptions::default()
        },
    )
    .expect("lenient load");
    let mut skipped: Vec<ChunkCoord> = report.skipped.iter().map(|k| k.coord).collect();
    skipped.sort_by_key(|c| (c.0.z, c.0.y, c.0.x));
    let mut expected = vec![uniform, dense];
    expected.sort_by_key(|c| (c.0.z, c.0.y, c.0.x));
    assert_eq!(skipped, expected);
    assert_eq!(grid.chunk_count(), s.grid.chunk_count() - 2);
    assert_eq!(report.chunks, grid.chunk_count());
    assert!(!report.world_hash_ok);
    for (coord, chunk) in grid.chunks() {
        let original = s.grid.chunk(coord).expect("chunk of the original");
        assert_eq!(chunk.cells.content_hash(), original.cells.content_hash());
    }
    assert_eq!(s.grid.content_hash(), s.hash);
}

#[test]
fn decompression_bombs_are_refused_without_allocating() {
    let s = saved_small_world("bomb");
    let (coord, _, _) = s
        .rows()
        .into_iter()
        .find(|(_, _, b)| b[0] == 1)
        .expect("a dense chunk");
    let set_blob = |blob: &[u8]| {
        s.sql(
            "UPDATE chunks SET data = ?1 WHERE x = ?2 AND y = ?3 AND z = ?4",
            rusqlite::params![blob, coord.0.x, coord.0.y, coord.0.z],
        )
    };
    // A frame that declares 256 MiB (of zeros: a 10-kilobyte blob).
    let claimed = 256u64 << 20;
    let mut bomb = vec![1u8];
    bomb.extend(zstd::bulk::compress(&vec![0u8; claimed as usize], 19).unwrap());
    assert!(bomb.len() < 64 * 1024, "{} bytes", bomb.len());
    set_blob(&bomb);
    let err = s.load_err();
    assert!(
        matches!(err, WorldFileError::ChunkTooLarge { coord: c, claimed_bytes: Some(n), .. }
            if c == coord && n == claimed),
        "{err}"
    );
    // A frame that does not declare its size but produces 1 MiB.
    let mut enc = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    enc.include_contentsize(false).unwrap();
    std::io::Write::write_all(&mut enc, &vec![3u8; 1 << 20]).unwrap();
    let mut bomb = vec![1u8];
    bomb.extend(enc.finish().unwrap());
    set_blob(&bomb);
    let err = s.load_err();
    assert!(
        matches!(err, WorldFileError::ChunkTooLarge { coord: c, claimed_bytes: None, .. } if c == coord),
        "{err}"
    );
    assert!(err.to_string().contains(&DENSE_CHUNK_BYTES.to_string()));
    // A blob far longer than any chunk encoding is not even read.
    set_blob(&vec![1u8; 4 << 20]);
    assert!(matches!(
        s.load_err(),
        WorldFileError::InvalidChunk { coord: c, .. } if c == coord
    ));
    let (grid, _, report) = world_file::load(
        &s.path,
        LoadOptions {
            skip_bad_chunks: true,
            ..LoadOptions::default()
        },
    )
    .expect("lenient load");
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(grid.chunk_count(), s.grid.chunk_count() - 1);
}

/// Peak resident memory of this process so far (`VmHWM`), KiB (Linux only).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn a_generated_column_and_other_foreign_schema_objects_are_refused_before_any_row_is_read() {
    // The hostile world: `chunks.data` is a generated column that makes
    // SQLite build an 800 MB value for every row read (16 s and 2.3 GB for
    // these 10 rows before the schema check).
    let s = saved_small_world("generated_column");
    let conn = rusqlite::Connection::open(&s.path).expect("open with sqlite");
    conn.execute_batch(
        "ALTER TABLE chunks RENAME TO old_chunks;
         CREATE TABLE chunks (
             x INTEGER NOT NULL,
             y INTEGER NOT NULL,
             z INTEGER NOT NULL,
             hash INTEGER NOT NULL,
             data BLOB GENERATED ALWAYS AS (CAST(hex(zeroblob(400000000)) AS BLOB)) VIRTUAL,
             PRIMARY KEY (x, y, z)
         );
         INSERT INTO chunks (x, y, z, hash) SELECT x, y, z, hash FROM old_chunks LIMIT 10;
         DROP TABLE old_chunks;
         VACUUM;",
    )
    .expect("build the hostile file");
    drop(conn);
    let bytes = std::fs::metadata(&s.path).unwrap().len();
    let before_kib = peak_rss_kib();
    let start = std::time::Instant::now();
    let err = s.load_err();
    let open_err = WorldFile::open(&s.path, LoadOptions::default())
        .map(|_| ())
        .expect_err("open must refuse it too");
    let meta_err = world_file::read_meta(&s.path).expect_err("so must read_meta");
    let elapsed = start.elapsed();
    println!(
        "generated-column world ({bytes} bytes): refused in {:.1} ms (load, open and read_meta); \
         peak RSS {before_kib:?} KiB before, {:?} KiB after",
        elapsed.as_secs_f64() * 1e3,
        peak_rss_kib()
    );
    for e in [&err, &open_err, &meta_err] {
        assert!(
            matches!(e, WorldFileError::UnexpectedSchema { detail, .. }
                if detail.contains("chunks") && detail.contains("GENERATED")),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains("is not a Strata world: unexpected schema"),
            "{e}"
        );
    }
    assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");

    // Triggers, views, extra tables and indexes are refused the same way.
    for (name, sql) in [
        (
            "trigger",
            "CREATE TRIGGER t AFTER UPDATE ON meta BEGIN SELECT 1; END",
        ),
        ("view", "CREATE VIEW v AS SELECT * FROM chunks"),
        ("table", "CREATE TABLE extra (a)"),
        ("index", "CREATE INDEX by_hash ON chunks (hash)"),
    ] {
        let s = saved_small_world(&format!("schema_{name}"));
        s.sql(sql, []);
        let err = s.load_err();
        assert!(
            matches!(&err, WorldFileError::UnexpectedSchema { detail, .. }
                if detail.contains(&format!("unexpected {name}"))),
            "{name}: {err}"
        );
    }
}

/// A world file of `rows` chunk rows that all hold the same valid dense
/// chunk (one rock cell, a blob of a few dozen bytes that decodes to
/// `DENSE_CHUNK_BYTES`), each with its correct chunk hash.
fn dense_chunk_bomb(name: &str, rows: usize) -> Saved {
    let mut cells = vec![strata::terrain::storage::cell::Cell::EMPTY; 32 * 32 * 32];
    cells[0] = strata::terrain::storage::cell::Cell::full(Material::ROCK);
    let chunk = strata::terrain::storage::chunk::ChunkCells::from_dense(cells);
    let grid = Grid::from_chunks([(ChunkCoord::new(0, 0, 0), chunk)]);
    let path = test_dir(name).join("world.strata");
    WorldFile::save_full(&path, &grid, &WorldMeta::default()).expect("save");
    let s = Saved {
        hash: grid.content_hash(),
        grid,
        path,
    };
    let (_, hash, blob) = s.rows()[0].clone();
    assert!(blob[0] == 1 && blob.len() < 64, "{} bytes", blob.len());
    let mut conn = rusqlite::Connection::open(&s.path).expect("open with sqlite");
    let tx = conn.transaction().unwrap();
    {
        let mut put = tx
            .prepare(
                "INSERT OR REPLACE INTO chunks (x, y, z, hash, data) VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .unwrap();
        for i in 0..rows as i32 {
            put.execute(rusqlite::params![i % 64, i / 64 % 64, i / 4096, hash, blob])
                .unwrap();
        }
    }
    tx.commit().unwrap();
    s
}

#[test]
fn many_rows_of_one_small_dense_chunk_are_refused_before_decoding() {
    // The realistic bomb: as many rows as a world may hold (an 18 MB file
    // that would decode to 16 GiB) is refused by the default budget up front.
    let start = std::time::Instant::now();
    let s = dense_chunk_bomb("dense_bomb", world_file::MAX_CHUNKS);
    let built = start.elapsed();
    let bytes = std::fs::metadata(&s.path).unwrap().len();
    let before_kib = peak_rss_kib();
    let start = std::time::Instant::now();
    let err = s.load_err();
    let elapsed = start.elapsed();
    println!(
        "dense-chunk bomb ({bytes} bytes, {} rows, built in {:.0} ms): refused in {:.1} ms; \
         peak RSS {before_kib:?} KiB before, {:?} KiB after",
        world_file::MAX_CHUNKS,
        built.as_secs_f64() * 1e3,
        elapsed.as_secs_f64() * 1e3,
        peak_rss_kib()
    );
    let expected = world_file::MAX_CHUNKS as u64 * DENSE_CHUNK_BYTES as u64;
    assert!(
        matches!(err, WorldFileError::TooMuchChunkData { dense_chunks, bytes, limit, .. }
            if dense_chunks == world_file::MAX_CHUNKS as u64 && bytes == expected
                && limit == world_file::MAX_DECODED_BYTES),
        "{err}"
    );
    assert!(err.to_string().contains("more than the limit"), "{err}");
    // Lenient loads and open are bounded the same way.
    let lenient = LoadOptions {
        skip_bad_chunks: true,
        ..LoadOptions::default()
    };
    assert!(matches!(
        world_file::load(&s.path, lenient).map(|_| ()),
        Err(WorldFileError::TooMuchChunkData { .. })
    ));
    assert!(matches!(
        WorldFile::open(&s.path, LoadOptions::default()).map(|_| ()),
        Err(WorldFileError::TooMuchChunkData { .. })
    ));

    // Under the budget (4096 rows, 256 MiB of cells): the rows' stored
    // hashes do not add up to the world hash, so the strict load fails on
    // the world hash before decoding any chunk.
    let s = dense_chunk_bomb("dense_doomed", 4096);
    let before_kib = peak_rss_kib();
    let start = std::time::Instant::now();
    let err = s.load_err();
    println!(
        "dense-chunk rows under the budget ({} bytes, 4096 rows): {err} in {:.0} ms; \
         peak RSS {before_kib:?} KiB before, {:?} KiB after",
        std::fs::metadata(&s.path).unwrap().len(),
        start.elapsed().as_secs_f64() * 1e3,
        peak_rss_kib()
    );
    assert!(
        matches!(err, WorldFileError::WorldHashMismatch { stored, .. } if stored == s.hash),
        "{err}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );

    // A budget given in the options: 100 dense chunks fit, 101 do not.
    let s = dense_chunk_bomb("dense_budget", 101);
    let budget = |chunks: u64| LoadOptions {
        max_decoded_bytes: Some(chunks * DENSE_CHUNK_BYTES as u64),
        ..LoadOptions::default()
    };
    assert!(matches!(
        world_file::load(&s.path, budget(100)).map(|_| ()),
        Err(WorldFileError::TooMuchChunkData { dense_chunks: 101, limit, .. })
            if limit == 100 * DENSE_CHUNK_BYTES as u64
    ));
    // Within the budget every chunk verifies; only the world hash (of the
    // one-chunk world the rows were copied into) fails.
    assert!(matches!(
        world_file::load(&s.path, budget(101)).map(|_| ()),
        Err(WorldFileError::WorldHashMismatch { .. })
    ));
    let (grid, _, report) = world_file::load(
        &s.path,
        LoadOptions {
            skip_bad_chunks: true,
            ..budget(101)
        },
    )
    .expect("lenient load within the budget");
    assert_eq!((grid.chunk_count(), report.chunks), (101, 101));
    assert!(report.skipped.is_empty() && !report.world_hash_ok);
}

// ---------------------------------------------------------------------------
// Hostile and huge input: what saves must reopen, what loads must be whole

/// A box of cells from `min` (inclusive) to `max` (exclusive).
fn cells(min: [i32; 3], max: [i32; 3]) -> CellBox {
    CellBox::new(IVec3::from_array(min), IVec3::from_array(max))
}

fn fill(region: CellBox, material: Material) -> EditCommand {
    EditCommand::Fill {
        region,
        material,
        occupancy: 255,
        ignore_water: false,
    }
}

/// Loads `path` and checks it holds `grid`.
fn assert_reopens_as(path: &Path, grid: &Grid) {
    let (_, loaded, _, report) =
        WorldFile::open(path, LoadOptions::default()).expect("the saved world reopens");
    assert_eq!(loaded.content_hash(), grid.content_hash());
    assert_eq!(report.chunks, grid.chunk_count());
}

#[test]
fn a_fill_off_the_lattice_is_refused_and_its_ends_save_and_reopen() {
    let dir = test_dir("lattice_ends");
    let path = dir.join("ends.strata");
    let mut grid = Grid::new();
    let mut session = EditSession::new(1 << 26, None);
    // The script Fill whose save could not be reopened: refused by the edit.
    let far = fill(
        cells([-2147483648, 0, 0], [-2147483600, 8, 8]),
        Material::ROCK,
    );
    let err = session.apply(&mut grid, &far).unwrap_err();
    assert!(
        matches!(err, CommandError::Region(RegionError::OutsideLattice(_))),
        "{err}"
    );
    assert!(err.to_string().contains("leaves the cell lattice"), "{err}");
    assert_eq!(grid.revision(), 0);
    assert_eq!(session.history.undo_len(), 0);
    // The extreme valid cells on both ends, on every axis.
    let (lo, hi) = (MIN_CELL_COORD, MAX_CELL_COORD);
    for region in [
        cells([lo; 3], [lo + 8; 3]),
        cells([hi - 7; 3], [hi + 1; 3]),
        cells([lo, hi - 3, 0], [lo + 4, hi + 1, 4]),
    ] {
        let out = session
            .apply(&mut grid, &fill(region, Material::SAND))
            .unwrap();
        assert!(out.changed_grid());
    }
    let corners = [
        ChunkCoord::new(MIN_CHUNK_COORD, MIN_CHUNK_COORD, MIN_CHUNK_COORD),
        ChunkCoord::new(MAX_CHUNK_COORD, MAX_CHUNK_COORD, MAX_CHUNK_COORD),
        ChunkCoord::new(MIN_CHUNK_COORD, MAX_CHUNK_COORD, 0),
    ];
    for c in corners {
        assert!(grid.chunk(c).is_some(), "{c:?}");
    }
    let (mut file, _) = WorldFile::save_full(&path, &grid, &WorldMeta::default()).expect("save");
    assert_reopens_as(&path, &grid);
    assert_eq!(
        grid.cell(CellCoord::new(hi, hi, hi)),
        Cell::full(Material::SAND)
    );
    // An incremental save into the same file, at the other corners.
    for region in [
        cells([hi - 3, lo, lo], [hi + 1, lo + 4, lo + 4]),
        cells([lo; 3], [lo + 2; 3]),
    ] {
        session
            .apply(&mut grid, &fill(region, Material::ROCK))
            .unwrap();
    }
    let report = file
        .save_incremental(&grid, &WorldMeta::default())
        .expect("incremental save");
    assert!(!report.full);
    assert_eq!(report.chunks_written, 2);
    drop(file);
    assert_reopens_as(&path, &grid);

    // A grid that holds a chunk off the lattice by another route than an
    // edit (the shape an import could build): saving refuses before writing.
    let off = ChunkCoord::new(MAX_CHUNK_COORD + 1, 0, 0);
    let bad = Grid::from_chunks([
        (
            ChunkCoord::new(0, 0, 0),
            ChunkCells::Uniform(Cell::full(Material::ROCK)),
        ),
        (off, ChunkCells::Uniform(Cell::full(Material::ROCK))),
    ]);
    let new_path = dir.join("off.strata");
    let err = WorldFile::save_full(&new_path, &bad, &WorldMeta::default()).unwrap_err();
    assert!(
        matches!(err, WorldFileError::ChunkOutsideLattice { coord, .. } if coord == off),
        "{err}"
    );
    assert!(
        err.to_string().contains("outside the cell lattice"),
        "{err}"
    );
    assert!(!new_path.exists());
    let (mut file, ..) = WorldFile::open(&path, LoadOptions::default()).expect("open");
    let err = file
        .save_incremental(&bad, &WorldMeta::default())
        .unwrap_err();
    assert!(
        matches!(err, WorldFileError::ChunkOutsideLattice { .. }),
        "{err}"
    );
    drop(file);
    assert_reopens_as(&path, &grid);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "stray files");
}

#[test]
fn chunk_rows_off_the_lattice_are_refused_without_wrapping() {
    let s = saved_small_world("rows_off_lattice");
    let (coord, _, _) = s.rows()[0].clone();
    let c = coord.0;
    for (axis, value) in [
        ("x", i64::MIN),
        ("x", i64::MAX),
        ("y", i64::MIN),
        ("z", i64::from(MIN_CHUNK_COORD) - 1),
        ("x", i64::from(MAX_CHUNK_COORD) + 1),
        ("y", i64::from(i32::MIN) / 32),
    ] {
        s.sql(
            &format!("UPDATE chunks SET {axis} = ?1 WHERE x = ?2 AND y = ?3 AND z = ?4"),
            rusqlite::params![value, c.x, c.y, c.z],
        );
        for options in [
            LoadOptions::default(),
            LoadOptions {
                skip_bad_chunks: true,
                ..LoadOptions::default()
            },
        ] {
            let err = world_file::load(&s.path, options).map(|_| ()).unwrap_err();
            let msg = err.to_string();
            assert!(matches!(err, WorldFileError::Corrupt { .. }), "{msg}");
            assert!(msg.contains("outside the cell lattice"), "{msg}");
            assert!(msg.contains(&value.to_string()), "{msg}");
        }
        assert_eq!(s.grid.content_hash(), s.hash);
        s.sql(
            &format!("UPDATE chunks SET {axis} = ?1 WHERE {axis} = ?2"),
            rusqlite::params![
                i64::from(
                    c[match axis {
                        "x" => 0,
                        "y" => 1,
                        _ => 2,
                    }]
                ),
                value
            ],
        );
    }
    // Put back, the file loads again: the ends of the range are rows a
    // save could have written.
    world_file::load(&s.path, LoadOptions::default()).expect("restored file loads");
}

#[test]
fn duplicate_chunk_rows_and_meta_keys_are_refused() {
    let s = saved_small_world("duplicate_rows");
    let (coord, _, _) = s.rows()[3].clone();
    let conn = rusqlite::Connection::open(&s.path).expect("open with sqlite");
    // The same columns without the primary key, so a row can be stored twice.
    conn.execute_batch(
        "CREATE TABLE loose (x INTEGER NOT NULL, y INTEGER NOT NULL, z INTEGER NOT NULL, \
         hash INTEGER NOT NULL, data BLOB NOT NULL);
         INSERT INTO loose SELECT * FROM chunks;
         DROP TABLE chunks;
         ALTER TABLE loose RENAME TO chunks;",
    )
    .expect("rebuild chunks");
    drop(conn);
    // The schema check refuses a table that could hold a row twice before
    // any row is read (the row reader also refuses a duplicate, as a
    // second line of defence).
    s.sql(
        "INSERT INTO chunks SELECT * FROM chunks WHERE x = ?1 AND y = ?2 AND z = ?3",
        [coord.0.x, coord.0.y, coord.0.z],
    );
    let err = s.load_err();
    assert!(
        matches!(err, WorldFileError::UnexpectedSchema { .. }),
        "{err}"
    );

    let s = saved_small_world("duplicate_meta");
    let conn = rusqlite::Connection::open(&s.path).expect("open with sqlite");
    conn.execute_batch(
        "CREATE TABLE loose (key TEXT NOT NULL, value TEXT NOT NULL);
         INSERT INTO loose SELECT * FROM meta;
         DROP TABLE meta;
         ALTER TABLE loose RENAME TO meta;",
    )
    .expect("rebuild meta");
    drop(conn);
    s.sql(
        "INSERT INTO meta (key, value) VALUES ('world_hash', '0000000000000000')",
        [],
    );
    let err = s.load_err();
    assert!(
        matches!(&err, WorldFileError::UnexpectedSchema { .. }),
        "{err}"
    );
}

#[test]
fn a_flipped_bit_in_a_zstd_frame_reads_as_damage_not_as_a_bomb() {
    let s = saved_small_world("zstd_flip");
    let (coord, _, blob) = s
        .rows()
        .into_iter()
        .find(|(_, _, b)| b[0] == 1 && b.len() > 200)
        .expect("a dense chunk");
    let set_blob = |blob: &[u8]| {
        s.sql(
            "UPDATE chunks SET data = ?1 WHERE x = ?2 AND y = ?3 AND z = ?4",
            rusqlite::params![blob, coord.0.x, coord.0.y, coord.0.z],
        )
    };
    // The frame's declared size (2 bytes at blob offset 6, stored as
    // size − 256): one low bit set makes it declare a few bytes more.
    assert_eq!(blob[5] >> 6, 1, "2-byte content size");
    let mut flipped = Vec::new();
    for bit in 0..8 {
        let mut bad = blob.clone();
        bad[6] ^= 1 << bit;
        flipped.push(bad);
    }
    // And bits all through the compressed data.
    for at in (12..blob.len()).step_by(blob.len() / 12) {
        let mut bad = blob.clone();
        bad[at] ^= 0x04;
        flipped.push(bad);
    }
    for bad in &flipped {
        set_blob(bad);
        let Err(err) = world_file::load(&s.path, LoadOptions::default()) else {
            continue; // a flip that decodes to the same cells
        };
        match err {
            WorldFileError::InvalidChunk {
                coord: c, reason, ..
            } => {
                assert_eq!(c, coord);
                let msg = reason;
                assert!(!msg.contains("would decompress"), "{msg}");
            }
            // Decoded, but to other cells: the hash says so.
            WorldFileError::BadChunk { coords, .. } => assert_eq!(coords, vec![coord]),
            other => panic!("a flipped bit must read as damage: {other}"),
        }
    }
    set_blob(&flipped[0]);
    let err = s.load_err();
    let msg = err.to_string();
    assert!(
        msg.contains(&format!(
            "chunk ({}, {}, {}) is damaged",
            coord.0.x, coord.0.y, coord.0.z
        )),
        "{msg}"
    );
    assert!(
        msg.contains(&format!("declares {} bytes", DENSE_CHUNK_BYTES + 1)),
        "{msg}"
    );
    let (_, _, report) = world_file::load(
        &s.path,
        LoadOptions {
            skip_bad_chunks: true,
            ..LoadOptions::default()
        },
    )
    .expect("lenient load");
    assert!(
        report.skipped[0].reason.starts_with("damaged: "),
        "{:?}",
        report.skipped
    );
    set_blob(&blob);
    world_file::load(&s.path, LoadOptions::default()).expect("restored chunk loads");
}

#[test]
fn saves_over_the_chunk_limit_are_refused_before_writing() {
    assert!(world_file::chunk_count_fits(MAX_CHUNKS as u64));
    assert!(!world_file::chunk_count_fits(MAX_CHUNKS as u64 + 1));
    let dir = test_dir("too_many_chunks");
    // Just over the limit, in uniform chunks (no cell arrays): the shape of
    // 65 fills of 512³ cells.
    let rock = ChunkCells::Uniform(Cell::full(Material::ROCK));
    let side = 1 << 9;
    let coord = |i: usize| {
        ChunkCoord::new(
            (i % side) as i32,
            (i / side / side) as i32,
            (i / side % side) as i32,
        )
    };
    let huge = Grid::from_chunks((0..=MAX_CHUNKS).map(|i| (coord(i), rock.clone())));
    assert_eq!(huge.chunk_count(), MAX_CHUNKS + 1);
    let path = dir.join("huge.strata");
    let err = WorldFile::save_full(&path, &huge, &WorldMeta::default()).unwrap_err();
    assert!(
        matches!(err, WorldFileError::WorldTooLarge { count, limit, .. }
            if count == MAX_CHUNKS + 1 && limit == MAX_CHUNKS),
        "{err}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("nothing was written") && msg.contains(&MAX_CHUNKS.to_string()),
        "{msg}"
    );
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing written"
    );

    // Into the user's own file, through the incremental path (a handle on
    // another grid rewrites every chunk): the file keeps its world.
    let s = saved_small_world("too_many_chunks_incremental");
    let (mut file, ..) = WorldFile::open(&s.path, LoadOptions::default()).expect("open");
    let err = file
        .save_incremental(&huge, &WorldMeta::default())
        .unwrap_err();
    assert!(
        matches!(err, WorldFileError::WorldTooLarge { count, .. } if count == MAX_CHUNKS + 1),
        "{err}"
    );
    drop(file);
    let (loaded, _, _) = world_file::load(&s.path, LoadOptions::default()).expect("load");
    assert_eq!(loaded.content_hash(), s.hash);
    assert_eq!(loaded.chunk_count(), s.grid.chunk_count());
}

// ---------------------------------------------------------------------------
// Interrupted saves

/// Runs `strata` with the save stall hook, waits until it stalls inside its
/// save, and kills it.
fn run_and_kill_mid_save(args: &[&std::ffi::OsStr]) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .env(SAVE_STALL_ENV, "120000")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn strata");
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut seen = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let stalled = line.contains(SAVE_STALL_MESSAGE);
            seen.push_str(&line);
            seen.push('\n');
            if stalled {
                let _ = tx.send(Ok(()));
                return;
            }
        }
        let _ = tx.send(Err(seen));
    });
    let outcome = rx.recv_timeout(Duration::from_secs(300));
    child.kill().expect("kill strata");
    child.wait().expect("reap strata");
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(stderr)) => panic!("strata exited before stalling in its save:\n{stderr}"),
        Err(_) => panic!("strata did not reach its save within 300 s"),
    }
}

/// The two strokes of [`write_script`]: `(mode, radius_cells, centre)`.
fn script_strokes(grid: &Grid) -> [(BrushMode, f32, DVec3); 2] {
    [
        (BrushMode::Add, 10.0, surface_point(grid, 256.0, 256.0)),
        (BrushMode::Subtract, 8.0, surface_point(grid, 120.0, 300.0)),
    ]
}

/// A script of two strokes on the surface of `grid`, with world-space centres.
fn write_script(dir: &Path, grid: &Grid) -> PathBuf {
    let strokes: Vec<String> = script_strokes(grid)
        .iter()
        .enumerate()
        .map(|(frame, (mode, radius, c))| {
            let tool = if *mode == BrushMode::Add { "add" } else { "subtract" };
            format!(
                r#"{{ "frame": {frame}, "tool": "{tool}", "centre": [{}, {}, {}], "radius_cells": {radius}, "strength": 1.0 }}"#,
                c.x, c.y, c.z
            )
        })
        .collect();
    let path = dir.join("strokes.json");
    std::fs::write(
        &path,
        format!(r#"{{ "strokes": [{}] }}"#, strokes.join(", ")),
    )
    .unwrap();
    path
}

#[test]
fn interrupted_incremental_save_leaves_the_previous_world() {
    let dir = test_dir("interrupted_incremental");
    let path = dir.join("a.strata");
    let grid = small_world();
    WorldFile::save_full(&path, &grid, &WorldMeta::generated(&small_settings())).expect("save");
    let before = std::fs::read(&path).unwrap();
    let script = write_script(&dir, &grid);
    run_and_kill_mid_save(&[
        "--headless".as_ref(),
        "--world".as_ref(),
        path.as_os_str(),
        "--script".as_ref(),
        script.as_os_str(),
        "--save".as_ref(),
        path.as_os_str(),
    ]);
    // The save was killed inside its transaction after flushing pages: the
    // file itself may be half-written, and the hot journal holds the originals.
    let journal = dir.join("a.strata-journal");
    assert!(
        journal.exists(),
        "no journal: the save never started writing"
    );
    assert_ne!(
        std::fs::read(&path).unwrap(),
        before,
        "the stall flushed no page"
    );
    let (loaded, meta, report) = world_file::load(&path, LoadOptions::default()).expect("load");
    assert_eq!(loaded.content_hash(), grid.content_hash());
    assert_eq!(meta.generator, Some(small_settings()));
    assert!(!journal.exists(), "the journal was rolled back");
    let recovery = report.journal_recovery.expect("the rollback is reported");
    assert_eq!(recovery.journal, journal);
    assert!(recovery.file_copy.exists() && recovery.journal_copy.exists());

    // The same command without the stall saves the script's edits incrementally.
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["--headless".as_ref(), "--world".as_ref(), path.as_os_str()])
        .args([
            "--script".as_ref(),
            script.as_os_str(),
            "--save".as_ref(),
            path.as_os_str(),
        ])
        .output()
        .expect("run strata");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stdout.contains(", full"), "{stdout}");
    let mut edited = small_world();
    for (mode, radius, centre) in script_strokes(&grid) {
        let edit = apply_brush(&mut edited, &brush_with(mode, radius), centre).unwrap();
        assert!(edit.is_change());
    }
    assert!(stdout.contains("2 changed the world"), "{stdout}");
    let (loaded, _, _) = world_file::load(&path, LoadOptions::default()).expect("load");
    assert_eq!(loaded.content_hash(), edited.content_hash());
}

#[test]
fn a_journal_that_does_not_belong_to_the_file_never_costs_the_user_the_file() {
    // A crashed incremental save leaves `a.strata-journal`; the user then
    // restores `a.strata` from a backup of another world.
    let dir = test_dir("foreign_journal");
    let path = dir.join("a.strata");
    let grid = small_world();
    WorldFile::save_full(&path, &grid, &WorldMeta::generated(&small_settings())).expect("save");
    let script = write_script(&dir, &grid);
    run_and_kill_mid_save(&[
        "--headless".as_ref(),
        "--world".as_ref(),
        path.as_os_str(),
        "--script".as_ref(),
        script.as_os_str(),
        "--save".as_ref(),
        path.as_os_str(),
    ]);
    let journal = dir.join("a.strata-journal");
    let journal_bytes = std::fs::read(&journal).expect("the killed save left a journal");
    let backup_world = generate_world(&GeneratorSettings {
        seed: 99,
        size_cells: 64,
    })
    .unwrap();
    let backup = dir.join("backup.strata");
    WorldFile::save_full(&backup, &backup_world, &WorldMeta::default()).expect("save backup");
    let restored = std::fs::read(&backup).unwrap();
    std::fs::write(&path, &restored).unwrap();

    // Opening rolls the journal in (SQLite cannot tell it is foreign), but
    // only after keeping untouched copies, and says so, loaded or not.
    let recovery = match WorldFile::open(&path, LoadOptions::default()) {
        Ok((_, _, _, report)) => report.journal_recovery.expect("a notice"),
        Err(WorldFileError::AfterJournalRollback { recovery, source }) => {
            let msg = WorldFileError::AfterJournalRollback {
                recovery: recovery.clone(),
                source,
            }
            .to_string();
            assert!(
                msg.contains(&recovery.file_copy.display().to_string()),
                "{msg}"
            );
            assert!(msg.contains(&path.display().to_string()), "{msg}");
            *recovery
        }
        Err(other) => panic!("no notice of the rollback: {other}"),
    };
    assert!(!journal.exists());
    assert_eq!(recovery.path, path);
    assert_eq!(recovery.journal, journal);
    assert_eq!(recovery.file_copy, dir.join("a.strata.before-recovery"));
    assert_eq!(std::fs::read(&recovery.file_copy).unwrap(), restored);
    assert_eq!(
        std::fs::read(&recovery.journal_copy).unwrap(),
        journal_bytes
    );
    assert!(
        recovery.to_string().contains("before-recovery"),
        "{recovery}"
    );
    // The copy is the restored world, intact.
    let (copy, _, report) =
        world_file::load(&recovery.file_copy, LoadOptions::default()).expect("load the copy");
    assert_eq!(copy.content_hash(), backup_world.content_hash());
    assert!(report.journal_recovery.is_none());

    // The same again: the first copies are kept, the new ones get new names.
    std::fs::write(&path, &restored).unwrap();
    std::fs::write(&journal, &journal_bytes).unwrap();
    let second = match world_file::load(&path, LoadOptions::default()) {
        Ok((_, _, report)) => report.journal_recovery.expect("a notice"),
        Err(WorldFileError::AfterJournalRollback { recovery, .. }) => *recovery,
        Err(other) => panic!("no notice of the rollback: {other}"),
    };
    assert_eq!(second.file_copy, dir.join("a.strata.before-recovery-2"));
    assert_eq!(std::fs::read(&second.file_copy).unwrap(), restored);
    assert_eq!(std::fs::read(&recovery.file_copy).unwrap(), restored);

    // A full save over a file with a journal beside it drops that journal
    // (it belonged to the replaced file) instead of rolling it into the new one.
    std::fs::write(&journal, &journal_bytes).unwrap();
    WorldFile::save_full(&path, &backup_world, &WorldMeta::default()).expect("save");
    assert!(!journal.exists());
    let (loaded, _, report) = world_file::load(&path, LoadOptions::default()).expect("load");
    assert_eq!(loaded.content_hash(), backup_world.content_hash());
    assert!(report.journal_recovery.is_none());
    assert!(!dir.join("a.strata.before-recovery-3").exists());

    // The command line tells the user too (on stderr, loaded or not).
    std::fs::write(&path, &restored).unwrap();
    std::fs::write(&journal, &journal_bytes).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["--headless".as_ref(), "--world".as_ref(), path.as_os_str()])
        .args(["--save".as_ref(), dir.join("out.strata").as_os_str()])
        .output()
        .expect("run strata");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let third = dir.join("a.strata.before-recovery-3");
    assert!(
        stderr.contains("rolled back") && stderr.contains(&third.display().to_string()),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&third).unwrap(), restored);
}

/// The brush a script stroke makes (material Grass by default).
fn brush_with(mode: BrushMode, radius_cells: f32) -> Brush {
    Brush {
        material: Material::GRASS,
        ..brush(mode, radius_cells)
    }
}

#[test]
fn interrupted_full_save_leaves_the_previous_file() {
    let dir = test_dir("interrupted_full");
    let source = dir.join("source.strata");
    let target = dir.join("target.strata");
    let grid = small_world();
    WorldFile::save_full(&source, &grid, &WorldMeta::default()).expect("save source");
    // The target holds another world, which the killed save must not damage.
    let other = generate_world(&GeneratorSettings {
        seed: 99,
        size_cells: 64,
    })
    .unwrap();
    WorldFile::save_full(&target, &other, &WorldMeta::default()).expect("save target");
    let script = write_script(&dir, &grid);
    run_and_kill_mid_save(&[
        "--headless".as_ref(),
        "--world".as_ref(),
        source.as_os_str(),
        "--script".as_ref(),
        script.as_os_str(),
        "--save".as_ref(),
        target.as_os_str(),
    ]);
    // What is left of the killed save is a temporary sibling, never the target.
    let leftovers = || {
        std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(".target.strata.tmp-")
            })
            .count()
    };
    assert_eq!(leftovers(), 1);
    let (loaded, _, _) = world_file::load(&target, LoadOptions::default()).expect("load target");
    assert_eq!(loaded.content_hash(), other.content_hash());
    // Opening the target removed the dead process's leftover.
    assert_eq!(leftovers(), 0);
}

/// The process id of a process that has exited.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().expect("spawn true");
    let pid = child.id();
    child.wait().expect("reap true");
    pid
}

#[test]
fn stale_temp_files_of_killed_saves_are_removed_on_open_and_save() {
    let s = saved_small_world("stale_temps");
    let dir = s.path.parent().unwrap().to_path_buf();
    let dead = dead_pid();
    let own = std::process::id();
    let put = |name: &str| {
        let p = dir.join(name);
        std::fs::write(&p, vec![7u8; 4096]).unwrap();
        p
    };
    let stale = put(&format!(".world.strata.tmp-{dead}-0"));
    let stale_journal_like = put(&format!(".world.strata.tmp-{dead}-12"));
    // This process's own (a save in progress on another thread) and other
    // names (another world's, and files that only look similar) are kept.
    let live = put(&format!(".world.strata.tmp-{own}-99"));
    let other_world = put(&format!(".other.strata.tmp-{dead}-0"));
    let not_ours = put(&format!(".world.strata.tmp-{dead}-0.bak"));
    // A live process id (init) with a fresh file is kept; two days old, it
    // is stale (the id may have been reused).
    let fresh_init = put(".world.strata.tmp-1-3");
    let old_init = put(".world.strata.tmp-1-4");
    let two_days = std::time::SystemTime::now() - Duration::from_secs(2 * 24 * 3600);
    std::fs::File::options()
        .write(true)
        .open(&old_init)
        .unwrap()
        .set_modified(two_days)
        .unwrap();

    let (file, _, _, _) = WorldFile::open(&s.path, LoadOptions::default()).expect("open");
    drop(file);
    for p in [&stale, &stale_journal_like, &old_init] {
        assert!(!p.exists(), "{} was kept", p.display());
    }
    for p in [&live, &other_world, &not_ours, &fresh_init] {
        assert!(p.exists(), "{} was removed", p.display());
    }
    // A full save removes them too (and keeps the live one).
    let stale = put(&format!(".world.strata.tmp-{dead}-5"));
    WorldFile::save_full(&s.path, &s.grid, &WorldMeta::default()).expect("save");
    assert!(!stale.exists());
    assert!(live.exists() && fresh_init.exists());
}

// ---------------------------------------------------------------------------
// Exports and the command line

#[test]
fn exported_glb_parses_with_the_expected_vertex_count() {
    let dir = test_dir("glb");
    let grid = small_world();
    let path = dir.join("world.glb");
    // The plain encoding, which the `gltf` crate reads (the compact ones are
    // read back in tests/gltf_export.rs).
    let library = MaterialLibrary::default();
    let export = export_glb(&grid, &library, &path, GlbEncoding::Plain).expect("export");
    let meshes = WorldMeshes::build_all(&grid);
    let expected_vertices: usize = meshes
        .iter()
        .map(|(_, m)| m.skirt_start_vertex as usize)
        .sum();
    let expected_triangles: usize = meshes
        .iter()
        .map(|(_, m)| m.surface_indices().len() / 3)
        .sum();
    assert_eq!(export.vertices, expected_vertices);
    assert_eq!(export.triangles, expected_triangles);
    assert_eq!(export.chunks, meshes.len());
    assert!(export.primitives >= export.chunks);

    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(export.file_bytes, bytes.len() as u64);
    let gltf = gltf::Gltf::from_slice(&bytes).expect("valid glb");
    let blob = gltf.blob.as_deref().expect("binary chunk");
    let mesh = gltf.meshes().next().expect("one mesh");
    let (mut vertices, mut triangles) = (0usize, 0usize);
    // A chunk's primitives (one per material) share its vertex accessors.
    let mut seen_vertices = std::collections::HashSet::new();
    // 128 cells (512 studs) on x and z, heights below 256 cells (1024 studs).
    let (horizontal, vertical) = (-1.0..=513.0, -1.0..=1025.0);
    for primitive in mesh.primitives() {
        assert_eq!(primitive.mode(), gltf::mesh::Mode::Triangles);
        let reader = primitive.reader(|_| Some(blob));
        let positions: Vec<[f32; 3]> = reader.read_positions().expect("positions").collect();
        let normals: Vec<[f32; 3]> = reader.read_normals().expect("normals").collect();
        let weights: Vec<[u8; 4]> = reader
            .read_colors(0)
            .expect("COLOR_0")
            .into_rgba_u8()
            .collect();
        let indices: Vec<u32> = reader.read_indices().expect("indices").into_u32().collect();
        let ids = primitive
            .attributes()
            .find(|(s, _)| *s == gltf::Semantic::Extras("MATERIAL_IDS".to_string()))
            .expect("_MATERIAL_IDS")
            .1;
        assert_eq!(ids.count(), positions.len());
        assert_eq!(ids.data_type(), gltf::accessor::DataType::U8);
        assert_eq!(
            (normals.len(), weights.len()),
            (positions.len(), positions.len())
        );
        for p in &positions {
            assert!(
                horizontal.contains(&p[0])
                    && vertical.contains(&p[1])
                    && horizontal.contains(&p[2]),
                "{p:?}"
            );
        }
        for w in &weights {
            assert_eq!(w.iter().map(|&x| x as u32).sum::<u32>(), 255, "{w:?}");
        }
        for n in &normals {
            let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
            assert!((len - 1.0).abs() < 1e-3, "{n:?}");
        }
        assert!(indices.iter().all(|&i| (i as usize) < positions.len()));
        assert!(primitive.material().index().is_some());
        let position_accessor = primitive.get(&gltf::Semantic::Positions).unwrap().index();
        if seen_vertices.insert(position_accessor) {
            vertices += positions.len();
        }
        triangles += indices.len() / 3;
    }
    assert_eq!(
        (vertices, triangles),
        (expected_vertices, expected_triangles)
    );

    for encoding in [GlbEncoding::Plain, GlbEncoding::Meshopt] {
        let empty =
            export_glb(&Grid::new(), &library, &dir.join("empty.glb"), encoding).unwrap_err();
        assert!(matches!(empty, ExportError::NoSurface { .. }), "{empty}");
    }
}

/// Surface height (cells) where Surface Nets puts it, as `tests/generator.rs` measures it.
fn surface_height(grid: &Grid, x: i32, z: i32) -> Option<f64> {
    let solid = |y: i32| grid.cell(CellCoord::new(x, y, z)).solid_occupancy() as f64;
    (0..320).rev().find(|&y| solid(y) >= 128.0).map(|y| {
        let (lo, hi) = (solid(y), solid(y + 1));
        y as f64 + 0.5 + (lo - 127.5) / (lo - hi)
    })
}

#[test]
fn exported_heightmap_reimports_with_the_same_relief() {
    let dir = test_dir("heightmap");
    let grid = small_world();
    let png = dir.join("surface.png");
    let export =
        export_heightmap(&grid, &png, None, &HeightmapExportOptions::default()).expect("export");
    assert_eq!((export.width_px, export.height_px), (128, 128));
    assert_eq!(export.origin_cells, (0, 0));
    assert_eq!(export.sidecar, Some(dir.join("surface.json")));
    let map = read_heightmap(&png).expect("reads back");
    assert_eq!((map.width_px, map.height_px), (128, 128));
    let sidecar = map.sidecar.as_ref().expect("sidecar");
    assert_eq!((sidecar.spacing_x_m, sidecar.spacing_y_m), (4.0, 4.0));

    let settings = HeightmapSettings {
        cells_per_pixel: 1.0,
        vertical_scale: 1.0,
        ..HeightmapSettings::default()
    };
    let reimported = import_heightmap(&png, &settings).expect("re-import");
    let heights = |g: &Grid| -> Vec<f64> {
        (0..128)
            .flat_map(|z| (0..128).map(move |x| (x, z)))
            .map(|(x, z)| surface_height(g, x, z).expect("ground"))
            .collect()
    };
    let (a, b) = (heights(&grid), heights(&reimported));
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let (amin, bmin) = (min(&a), min(&b));
    let errors: Vec<f64> = a
        .iter()
        .zip(&b)
        .map(|(x, y)| ((x - amin) - (y - bmin)).abs())
        .collect();
    let worst = errors.iter().copied().fold(0.0, f64::max);
    let mean = errors.iter().sum::<f64>() / errors.len() as f64;
    assert!(
        worst < 1.0 && mean < 0.2,
        "worst {worst} cells, mean {mean}"
    );
}

#[test]
fn command_line_saves_exports_and_reports_bad_files() {
    let dir = test_dir("cli");
    let world = dir.join("w.strata");
    let glb = dir.join("out/w.glb");
    let png = dir.join("out/w.png");
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["--headless", "--seed", "3", "--world-size", "64"])
        .args(["--save".as_ref(), world.as_os_str()])
        .args(["--export-glb".as_ref(), glb.as_os_str()])
        .args(["--export-heightmap".as_ref(), png.as_os_str()])
        .output()
        .expect("run strata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let settings = GeneratorSettings {
        seed: 3,
        size_cells: 64,
    };
    let (grid, meta, _) = world_file::load(&world, LoadOptions::default()).expect("load");
    assert_eq!(
        grid.content_hash(),
        generate_world(&settings).unwrap().content_hash()
    );
    assert_eq!(meta.generator, Some(settings));
    assert!(glb.exists() && png.exists() && dir.join("out/w.json").exists());

    // Loading it back from the command line (positional or --world) works;
    // a broken file is a clear error naming it, not a panic.
    let copy = dir.join("copy.strata");
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["--headless".as_ref(), "--world".as_ref(), world.as_os_str()])
        .args(["--save".as_ref(), copy.as_os_str()])
        .output()
        .expect("run strata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (copied, _, _) = world_file::load(&copy, LoadOptions::default()).expect("load copy");
    assert_eq!(copied.content_hash(), grid.content_hash());

    // A script whose strokes drop onto the surface (picked on the CPU).
    let script = dir.join("xz.json");
    std::fs::write(
        &script,
        r#"{ "strokes": [ { "frame": 0, "tool": "add", "centre_xz": [128.0, 128.0], "radius_cells": 6 } ] }"#,
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["--headless".as_ref(), world.as_os_str()])
        .args([
            "--script".as_ref(),
            script.as_os_str(),
            "--save".as_ref(),
            copy.as_os_str(),
        ])
        .output()
        .expect("run strata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("1 changed the world"), "{stdout}");
    let (sculpted, _, _) = world_file::load(&copy, LoadOptions::default()).expect("load");
    assert_ne!(sculpted.content_hash(), grid.content_hash());

    std::fs::write(&copy, b"garbage that is not a database at all.................................................................................").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["--headless".as_ref(), copy.as_os_str()])
        .args(["--export-glb".as_ref(), glb.as_os_str()])
        .output()
        .expect("run strata");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("copy.strata") && stderr.contains("not a Strata world"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// The inputs that gave messages nobody could act on: a FIFO and a device
/// said "the file is empty", a PNG did not point to the heightmap import,
/// and a save into an unwritable folder named SQLite's temporary file.
#[test]
fn bad_files_are_named_in_the_users_terms() {
    let dir = test_dir("bad-files");
    let open_message = |path: &Path| match WorldFile::open(path, LoadOptions::default()) {
        Ok(_) => panic!("{} opened", path.display()),
        Err(e) => e.to_string(),
    };
    let fifo = dir.join("pipe.strata");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    assert_eq!(
        open_message(&fifo),
        format!(
            "{} is not a Strata world: it is a FIFO, not a file; open a .strata world file",
            fifo.display()
        )
    );
    assert_eq!(
        open_message(Path::new("/dev/null")),
        "/dev/null is not a Strata world: it is a character device, not a file; open a .strata \
         world file"
    );
    let empty = dir.join("empty.strata");
    std::fs::write(&empty, b"").expect("write");
    assert!(open_message(&empty).ends_with("the file is empty (0 bytes); it holds no world"));
    let png = dem_path();
    let message = open_message(&png);
    assert!(
        message.contains("it is a PNG image") && message.contains("File ▸ Import Heightmap"),
        "{message}"
    );
    let (grid, meta) = (small_world(), WorldMeta::generated(&small_settings()));
    let target = Path::new("/proc/strata-world.strata");
    let message = match WorldFile::save_full(target, &grid, &meta) {
        Ok(_) => panic!("saved into /proc"),
        Err(e) => e.to_string(),
    };
    assert!(
        message
            .starts_with("cannot write /proc/strata-world.strata: cannot create a file in /proc")
            && message.ends_with("save the world somewhere else (File ▸ Save As)")
            && !message.contains(".tmp"),
        "{message}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The input that left litter: a journal with a zeroed header (a save
/// killed before its first write) stayed beside the world after a clean
/// reopen. SQLite never rolls such a journal back; the reopen removes it.
#[test]
fn a_cold_journal_is_removed_when_the_world_opens_cleanly() {
    let dir = test_dir("cold-journal");
    let path = dir.join("w.strata");
    let (grid, meta) = (small_world(), WorldMeta::generated(&small_settings()));
    WorldFile::save_full(&path, &grid, &meta).expect("save");
    let journal = dir.join("w.strata-journal");
    std::fs::write(&journal, vec![0u8; 512]).expect("cold journal");
    let (_, loaded, _, report) = WorldFile::open(&path, LoadOptions::default()).expect("open");
    assert!(report.journal_recovery.is_none(), "nothing rolled back");
    assert_eq!(loaded.content_hash(), grid.content_hash());
    assert!(!journal.exists(), "the cold journal is gone");
    let _ = std::fs::remove_dir_all(&dir);
}
