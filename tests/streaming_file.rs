//! Streaming world files (`strata::io::world::streaming_file`, spec §12): edited
//! columns round trip, spills that survive a session ended without saving,
//! incremental saves, an open that reads no column, damaged rows and files
//! refused with typed errors (never a panic), the size of a small world,
//! "save as" of a recovery file, residency spilling into a file, and the
//! column summaries of format 4 (spec §13) with the format-2 files before them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use glam::IVec3;
use rusqlite::{Connection, params};
use strata::io::world::streaming_file::{
    GENERATED_FORMAT_VERSION, LAYERED_FORMAT_VERSION, MAX_COLUMN_BYTES, STREAMING_FORMAT_VERSION,
    StreamingFileError, StreamingWorldFile,
};
use strata::io::world::world_file::{WorldFile, WorldFileError, WorldMeta};
use strata::pipeline::horizon::Horizon;
use strata::terrain::generation::generate::{ColumnGenerator, GeneratorSettings, generate_world};
use strata::terrain::generation::generated_columns::GeneratedColumns;
use strata::terrain::streaming::column_source::{
    ColumnChunks, ColumnSource, EditStore, SourceError,
};
use strata::terrain::streaming::column_summary::ColumnSummary;
use strata::terrain::streaming::residency::Residency;
use strata::terrain::{Cell, CellBox, ChunkCells, ChunkCoord, ColumnCoord, Grid, Material};

fn settings() -> GeneratorSettings {
    GeneratorSettings {
        seed: 7,
        size_cells: 256,
    }
}

/// A fresh, empty directory for one test.
fn test_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("streaming_file")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create test dir");
    dir
}

/// The generated chunks of `column` with a few cells changed (`salt` picks
/// which and to what), so the column is really edited.
fn edited_column(column: ColumnCoord, salt: u8) -> ColumnChunks {
    let mut chunks = ColumnGenerator::new(&settings()).column_chunks(column);
    assert!(!chunks.is_empty(), "column {column:?} is inside the world");
    for (i, (_, cells)) in chunks.iter_mut().enumerate() {
        let dense = cells.make_dense_mut();
        for k in 0..5usize {
            let at = (k * 7919 + i * 104_729 + salt as usize * 31) % dense.len();
            dense[at] = Cell::new(Material::SNOW, 100 + salt);
        }
    }
    chunks
}

/// `(chunk, content hash)` of each chunk: what two copies of a column must
/// agree on.
fn hashes(chunks: &[(ChunkCoord, ChunkCells)]) -> Vec<(ChunkCoord, u64)> {
    chunks
        .iter()
        .map(|(c, cells)| (*c, cells.content_hash()))
        .collect()
}

fn load(file: &StreamingWorldFile, column: ColumnCoord) -> Option<Vec<(ChunkCoord, u64)>> {
    file.load_edited(column)
        .expect("load")
        .map(|chunks| hashes(&chunks))
}

/// Writes SQL into a closed file directly (as damage or another writer would).
fn poke(path: &Path, sql: &str, args: impl rusqlite::Params) {
    let conn = Connection::open(path).expect("open raw");
    conn.execute(sql, args).expect("poke");
}

#[test]
fn edited_columns_round_trip_through_a_reopened_file() {
    let dir = test_dir("round_trip");
    let path = dir.join("world.strata");
    let columns = [
        ColumnCoord::new(3, 1),
        ColumnCoord::new(0, 0),
        ColumnCoord::new(7, 7),
    ];
    let edited: Vec<ColumnChunks> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| edited_column(*c, i as u8))
        .collect();
    {
        let file = StreamingWorldFile::create(&path, &settings()).unwrap();
        assert_eq!(file.generator(), Some(&settings()));
        assert_eq!(file.pending_count().unwrap(), 0);
        assert!(file.edited_columns().unwrap().is_empty());
        for (c, chunks) in columns.iter().zip(&edited) {
            file.store_edited(*c, chunks).unwrap();
        }
    }
    let file = StreamingWorldFile::open(&path).unwrap();
    assert_eq!(file.generator(), Some(&settings()));
    assert!(file.created_unix() > 0);
    assert_eq!(file.camera(), None);
    let mut sorted = columns.to_vec();
    sorted.sort();
    assert_eq!(file.edited_columns().unwrap(), sorted);
    for (c, chunks) in columns.iter().zip(&edited) {
        assert_eq!(load(&file, *c), Some(hashes(chunks)), "{c:?}");
        // The edits are there: the generator's copy differs.
        let generated = ColumnGenerator::new(&settings()).column_chunks(*c);
        assert_ne!(hashes(&generated), hashes(chunks));
    }
    assert_eq!(load(&file, ColumnCoord::new(1, 1)), None, "never stored");
    // A column edited down to nothing is stored, and is not the generated one.
    let empty = ColumnCoord::new(2, 2);
    file.store_edited(empty, &[]).unwrap();
    assert_eq!(load(&file, empty), Some(Vec::new()));
}

#[test]
fn a_spill_is_pending_until_a_save_moves_it_into_the_saved_columns() {
    let dir = test_dir("pending");
    let path = dir.join("world.strata");
    let column = ColumnCoord::new(4, 4);
    let spilled = edited_column(column, 1);
    StreamingWorldFile::create(&path, &settings())
        .unwrap()
        .store_edited(column, &spilled)
        .unwrap();
    // Reopened without a save: the spill is pending work to recover.
    let file = StreamingWorldFile::open(&path).unwrap();
    assert_eq!(file.pending_count().unwrap(), 1);
    assert_eq!(file.saved_count().unwrap(), 0);
    assert_eq!(load(&file, column), Some(hashes(&spilled)));
    let report = file.save(&[], None).unwrap();
    assert_eq!(report.pending_saved, 1);
    assert_eq!(report.columns_written, 0);
    assert_eq!(file.pending_count().unwrap(), 0);
    assert_eq!(file.saved_count().unwrap(), 1);
    assert_eq!(load(&file, column), Some(hashes(&spilled)));
    drop(file);
    let file = StreamingWorldFile::open(&path).unwrap();
    assert_eq!(file.pending_count().unwrap(), 0);
    assert_eq!(load(&file, column), Some(hashes(&spilled)));
    // A pending copy wins over the saved one; a resident copy given to a
    // save wins over a pending one (it is newer).
    let newer = edited_column(column, 2);
    file.store_edited(column, &newer).unwrap();
    assert_eq!(load(&file, column), Some(hashes(&newer)));
    let newest = edited_column(column, 3);
    let report = file.save(&[(column, newest.clone())], None).unwrap();
    assert_eq!((report.columns_written, report.pending_saved), (1, 1));
    assert_eq!(file.pending_count().unwrap(), 0);
    assert_eq!(file.saved_count().unwrap(), 1);
    assert_eq!(load(&file, column), Some(hashes(&newest)));
    assert_eq!(file.edited_columns().unwrap(), vec![column]);
}

#[test]
fn a_spill_survives_a_session_that_ends_without_saving() {
    let dir = test_dir("crash");
    let path = dir.join("world.strata");
    let (a, b) = (ColumnCoord::new(1, 2), ColumnCoord::new(2, 1));
    let (chunks_a, chunks_b) = (edited_column(a, 5), edited_column(b, 6));
    // Dropped without a save.
    let file = StreamingWorldFile::create(&path, &settings()).unwrap();
    file.store_edited(a, &chunks_a).unwrap();
    drop(file);
    // Never closed at all, as when the process dies: the spill was
    // committed before `store_edited` returned.
    let file = StreamingWorldFile::open(&path).unwrap();
    file.store_edited(b, &chunks_b).unwrap();
    std::mem::forget(file);
    let file = StreamingWorldFile::open(&path).unwrap();
    assert_eq!(file.pending_count().unwrap(), 2);
    assert_eq!(load(&file, a), Some(hashes(&chunks_a)));
    assert_eq!(load(&file, b), Some(hashes(&chunks_b)));
    assert_eq!(file.edited_columns().unwrap(), vec![a, b]);
}

#[test]
fn discarding_pending_spills_returns_to_the_saved_columns() {
    let dir = test_dir("discard");
    let path = dir.join("world.strata");
    let (saved, spilled_only) = (ColumnCoord::new(5, 5), ColumnCoord::new(6, 5));
    let v1 = edited_column(saved, 1);
    let file = StreamingWorldFile::create(&path, &settings()).unwrap();
    file.save(&[(saved, v1.clone())], None).unwrap();
    file.store_edited(saved, &edited_column(saved, 2)).unwrap();
    file.store_edited(spilled_only, &edited_column(spilled_only, 3))
        .unwrap();
    drop(file);
    let file = StreamingWorldFile::open(&path).unwrap();
    assert_eq!(file.pending_count().unwrap(), 2);
    assert_eq!(file.discard_pending().unwrap(), 2);
    assert_eq!(file.pending_count().unwrap(), 0);
    assert_eq!(load(&file, saved), Some(hashes(&v1)));
    assert_eq!(load(&file, spilled_only), None);
    assert_eq!(file.edited_columns().unwrap(), vec![saved]);
}

#[test]
fn a_save_rewrites_only_the_columns_it_is_given_or_had_pending() {
    let dir = test_dir("incremental");
    let path = dir.join("world.strata");
    let (a, b, c) = (
        ColumnCoord::new(0, 1),
        ColumnCoord::new(1, 0),
        ColumnCoord::new(1, 1),
    );
    let file = StreamingWorldFile::create(&path, &settings()).unwrap();
    let first = file
        .save(&[(a, edited_column(a, 1)), (b, edited_column(b, 1))], None)
        .unwrap();
    assert_eq!(first.columns_written, 2);
    file.set_camera(Some([10.0, 200.0, -5.0, 45.0, -20.0]));
    drop(file);
    let rowid = |x: i32, z: i32| -> (i64, Vec<u8>) {
        let conn = Connection::open(&path).unwrap();
        conn.query_row(
            "SELECT rowid, data FROM columns WHERE x = ?1 AND z = ?2",
            params![x, z],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    };
    let before_a = rowid(a.x, a.z);
    let file = StreamingWorldFile::open(&path).unwrap();
    assert_eq!(file.camera(), None, "set_camera is written by a save only");
    file.set_camera(Some([10.0, 200.0, -5.0, 45.0, -20.0]));
    file.store_edited(b, &edited_column(b, 2)).unwrap();
    let report = file.save(&[(c, edited_column(c, 1))], None).unwrap();
    assert_eq!((report.columns_written, report.pending_saved), (1, 1));
    assert!(report.modified_unix >= first.modified_unix);
    assert!(report.file_bytes > 0);
    drop(file);
    assert_eq!(rowid(a.x, a.z), before_a, "a's row was not rewritten");
    let file = StreamingWorldFile::open(&path).unwrap();
    assert_eq!(file.camera(), Some([10.0, 200.0, -5.0, 45.0, -20.0]));
    assert_eq!(file.saved_count().unwrap(), 3);
    assert_eq!(load(&file, b), Some(hashes(&edited_column(b, 2))));
}

#[test]
fn opening_a_file_of_2000_columns_reads_no_column() {
    let dir = test_dir("open_o1");
    let path = dir.join("world.strata");
    let big = GeneratorSettings {
        seed: 3,
        size_cells: 1 << 16,
    };
    let file = StreamingWorldFile::create(&path, &big).unwrap();
    let rock = ChunkCells::Uniform(Cell::full(Material::ROCK));
    let columns: Vec<(ColumnCoord, ColumnChunks)> = (0..2000)
        .map(|i| {
            let c = ColumnCoord::new(i % 50, i / 50);
            let chunks = (0..4)
                .map(|y| (ChunkCoord::new(c.x, y, c.z), rock.clone()))
                .collect();
            (c, chunks)
        })
        .collect();
    file.save(&columns, None).unwrap();
    drop(file);
    let start = Instant::now();
    let file = StreamingWorldFile::open(&path).unwrap();
    let elapsed = start.elapsed();
    assert_eq!(file.column_rows_read(), 0, "open reads no column row");
    assert_eq!(file.pending_count().unwrap(), 0);
    assert_eq!(file.column_rows_read(), 0, "counting reads no column row");
    eprintln!(
        "open of 2000 columns: {:.2} ms",
        elapsed.as_secs_f64() * 1e3
    );
    assert_eq!(file.generator(), Some(&big));
    assert_eq!(
        load(&file, ColumnCoord::new(7, 3)),
        Some(hashes(&columns[157].1))
    );
    assert_eq!(file.column_rows_read(), 1);
    assert_eq!(file.edited_columns().unwrap().len(), 2000);
    assert!(StreamingWorldFile::is_streaming_file(&path));
}

#[test]
fn damaged_rows_are_corrupt_errors_and_never_panic() {
    let dir = test_dir("corrupt");
    let path = dir.join("world.strata");
    let good = ColumnCoord::new(3, 3);
    let chunks = edited_column(good, 1);
    StreamingWorldFile::create(&path, &settings())
        .unwrap()
        .save(&[(good, chunks.clone())], None)
        .unwrap();
    let (hash, data): (i64, Vec<u8>) = Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT hash, data FROM columns WHERE x = 3 AND z = 3",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let put = |x: i32, z: i32, hash: i64, data: &dyn rusqlite::ToSql| {
        poke(
            &path,
            "INSERT OR REPLACE INTO columns (x, z, hash, data) VALUES (?1, ?2, ?3, ?4)",
            params![x, z, hash, data],
        );
    };
    let corrupt = |column: ColumnCoord| {
        let file = StreamingWorldFile::open(&path).unwrap();
        match file.load_edited(column) {
            Err(SourceError::Corrupt { column: c, message }) => {
                assert_eq!(c, column);
                assert!(message.contains("world.strata"), "{message}");
                message
            }
            other => panic!("{column:?}: expected Corrupt, got {other:?}"),
        }
    };
    // Garbage, the right data under the wrong hash or coordinate, text,
    // a too long row, a hash that is not an integer.
    put(0, 0, 0, &vec![0xde_u8, 0xad, 0xbe, 0xef, 1, 2, 3]);
    corrupt(ColumnCoord::new(0, 0));
    put(0, 1, hash ^ 1, &data);
    assert!(corrupt(ColumnCoord::new(0, 1)).contains("hash"));
    put(1, 0, hash, &data);
    corrupt(ColumnCoord::new(1, 0));
    put(1, 1, hash, &"not a blob");
    corrupt(ColumnCoord::new(1, 1));
    put(2, 0, hash, &"x");
    poke(
        &path,
        "UPDATE columns SET data = zeroblob(?1) WHERE x = 2 AND z = 0",
        [MAX_COLUMN_BYTES as i64 + 1],
    );
    assert!(corrupt(ColumnCoord::new(2, 0)).contains("longer"));
    put(2, 1, 0, &data);
    poke(
        &path,
        "UPDATE columns SET hash = 'abc' WHERE x = 2 AND z = 1",
        [],
    );
    corrupt(ColumnCoord::new(2, 1));
    // Random bytes, and every truncation and many bit flips of a real row.
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let conn = Connection::open(&path).unwrap();
    let column = ColumnCoord::new(5, 5);
    let mut cases: Vec<Vec<u8>> = (0..300)
        .map(|_| {
            let len = (next() % 200) as usize;
            let mut v: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            if len >= 4 && next().is_multiple_of(2) {
                v[..4].copy_from_slice(&1u32.to_le_bytes());
            }
            v
        })
        .collect();
    for n in (0..data.len()).step_by(97) {
        cases.push(data[..n].to_vec());
    }
    for _ in 0..300 {
        let mut v = data.clone();
        let i = (next() as usize) % v.len();
        v[i] ^= 1 << (next() % 8);
        cases.push(v);
    }
    let want = hashes(&chunks);
    let mut refused = 0;
    for bytes in &cases {
        conn.execute(
            "INSERT OR REPLACE INTO pending_columns (x, z, hash, data) VALUES (?1, ?2, ?3, ?4)",
            params![column.x, column.z, hash, bytes],
        )
        .unwrap();
        let file = StreamingWorldFile::open(&path).unwrap();
        match file.load_edited(column) {
            Err(SourceError::Corrupt { .. }) => refused += 1,
            // Under (3, 3)'s hash, with (5, 5)'s coordinate: never valid.
            Ok(got) => panic!("damaged row accepted: {:?}", got.map(|c| hashes(&c))),
            Err(e) => panic!("expected Corrupt, got {e}"),
        }
        // The same bytes at the right coordinate either fail or are the column.
        conn.execute(
            "INSERT OR REPLACE INTO pending_columns (x, z, hash, data) VALUES (3, 3, ?1, ?2)",
            params![hash, bytes],
        )
        .unwrap();
        match file.load_edited(good) {
            Err(SourceError::Corrupt { .. }) => {}
            Ok(got) => assert_eq!(got.map(|c| hashes(&c)), Some(want.clone())),
            Err(e) => panic!("expected Corrupt, got {e}"),
        }
    }
    assert_eq!(refused, cases.len());
    // The saved copy is intact once the damaged pending one is dropped.
    let file = StreamingWorldFile::open(&path).unwrap();
    file.discard_pending().unwrap();
    assert_eq!(load(&file, good), Some(want));
    // A row off the lattice makes the listing fail, typed.
    drop(file);
    poke(
        &path,
        "INSERT INTO columns (x, z, hash, data) VALUES (?1, 0, 0, x'00')",
        [1i64 << 40],
    );
    let file = StreamingWorldFile::open(&path).unwrap();
    assert!(matches!(
        file.edited_columns(),
        Err(SourceError::Store { .. })
    ));
}

#[test]
fn files_of_another_version_or_kind_are_refused_with_typed_errors() {
    let dir = test_dir("versions");
    let path = dir.join("world.strata");
    let fresh = || {
        StreamingWorldFile::create(&path, &settings()).unwrap();
    };
    let open_err = || StreamingWorldFile::open(&path).unwrap_err();
    let set_meta = |key: &str, value: &str| {
        poke(
            &path,
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
            params![key, value],
        )
    };
    fresh();
    assert!(StreamingWorldFile::is_streaming_file(&path));
    // Version 5 is known, but needs the document tables.
    set_meta("format_version", "5");
    let e = open_err();
    assert!(
        matches!(&e, StreamingFileError::BadMeta { key, .. } if key == "format_version"),
        "{e}"
    );
    set_meta("format_version", "6");
    let e = open_err();
    assert!(
        matches!(
            e,
            StreamingFileError::UnsupportedVersion {
                found: 6,
                supported: LAYERED_FORMAT_VERSION,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("world.strata"), "{e}");
    assert!(
        StreamingWorldFile::is_streaming_file(&path),
        "the schema says streaming; open names the version"
    );
    set_meta("format_version", "1");
    assert!(matches!(
        open_err(),
        StreamingFileError::UnsupportedVersion { found: 1, .. }
    ));
    set_meta("format_version", "two");
    assert!(
        matches!(open_err(), StreamingFileError::BadMeta { key, .. } if key == "format_version")
    );
    fresh();
    set_meta("kind", "whole");
    assert!(matches!(open_err(), StreamingFileError::BadMeta { key, .. } if key == "kind"));
    fresh();
    set_meta("generator", r#"{"seed": 1, "size_cells": 33}"#);
    assert!(matches!(open_err(), StreamingFileError::BadMeta { key, .. } if key == "generator"));
    fresh();
    set_meta("camera", "[1, 2, 3, 4, 95]");
    assert!(matches!(open_err(), StreamingFileError::BadMeta { key, .. } if key == "camera"));
    fresh();
    poke(&path, "DELETE FROM meta WHERE key = 'generator'", []);
    assert!(matches!(open_err(), StreamingFileError::BadMeta { key, .. } if key == "generator"));
    // An extra table: refused before any row is read.
    fresh();
    poke(&path, "CREATE TABLE extra (a)", []);
    assert!(matches!(
        open_err(),
        StreamingFileError::File(WorldFileError::UnexpectedSchema { .. })
    ));
    assert!(!StreamingWorldFile::is_streaming_file(&path));
    // A world file (format 1) is not a streaming file.
    let world = dir.join("whole.strata");
    let grid = generate_world(&GeneratorSettings {
        seed: 1,
        size_cells: 64,
    })
    .unwrap();
    WorldFile::save_full(&world, &grid, &WorldMeta::default()).unwrap();
    assert!(!StreamingWorldFile::is_streaming_file(&world));
    assert!(matches!(
        StreamingWorldFile::open(&world),
        Err(StreamingFileError::NotStreaming { .. })
    ));
    // Not a file, not a database.
    let missing = dir.join("missing.strata");
    assert!(!StreamingWorldFile::is_streaming_file(&missing));
    assert!(matches!(
        StreamingWorldFile::open(&missing),
        Err(StreamingFileError::File(WorldFileError::NotFound { .. }))
    ));
    let junk = dir.join("junk.strata");
    std::fs::write(&junk, vec![7u8; 5000]).unwrap();
    assert!(!StreamingWorldFile::is_streaming_file(&junk));
    assert!(matches!(
        StreamingWorldFile::open(&junk),
        Err(StreamingFileError::File(WorldFileError::NotSqlite { .. }))
    ));
    // Settings a streaming world cannot have are refused before writing.
    let bad = dir.join("bad.strata");
    assert!(matches!(
        StreamingWorldFile::create(
            &bad,
            &GeneratorSettings {
                seed: 1,
                size_cells: 0
            }
        ),
        Err(StreamingFileError::InvalidSettings { .. })
    ));
    assert!(!bad.exists());
}

#[test]
fn bad_columns_are_refused_by_store_and_save_without_writing() {
    let dir = test_dir("bad_columns");
    let path = dir.join("world.strata");
    let file = StreamingWorldFile::create(&path, &settings()).unwrap();
    let column = ColumnCoord::new(1, 1);
    let foreign = vec![(
        ChunkCoord::new(2, 0, 1),
        ChunkCells::Uniform(Cell::full(Material::ROCK)),
    )];
    assert!(matches!(
        file.store_edited(column, &foreign),
        Err(SourceError::Io { .. })
    ));
    let good = ColumnCoord::new(0, 0);
    let e = file
        .save(&[(good, edited_column(good, 1)), (column, foreign)], None)
        .unwrap_err();
    assert!(
        matches!(e, StreamingFileError::BadColumn { column: c, .. } if c == column),
        "{e}"
    );
    assert!(file.edited_columns().unwrap().is_empty(), "nothing written");
}

#[test]
fn a_world_with_one_edited_column_is_small_on_disk() {
    let dir = test_dir("size");
    let path = dir.join("world.strata");
    let column = ColumnCoord::new(4, 3);
    let chunks = edited_column(column, 9);
    let dense = chunks
        .iter()
        .filter(|(_, c)| matches!(c, ChunkCells::Dense(_)))
        .count();
    assert!(dense >= 3, "{dense} dense chunks");
    let file = StreamingWorldFile::create(&path, &settings()).unwrap();
    let report = file.save(&[(column, chunks)], None).unwrap();
    drop(file);
    let bytes = std::fs::metadata(&path).unwrap().len();
    eprintln!(
        "one edited column ({dense} dense chunks): {bytes} bytes (report {})",
        report.file_bytes
    );
    assert!(bytes < 2_000_000, "{bytes} bytes");
}

#[test]
fn save_as_copies_a_recovery_file_with_its_spills() {
    let dir = test_dir("save_as");
    let recovery = dir.join("untitled.recovery.strata");
    let target = dir.join("saved/world.strata");
    let (spilled, resident) = (ColumnCoord::new(2, 3), ColumnCoord::new(3, 2));
    let file = StreamingWorldFile::create(&recovery, &settings()).unwrap();
    file.store_edited(spilled, &edited_column(spilled, 1))
        .unwrap();
    assert!(matches!(
        file.save_as(&recovery),
        Err(StreamingFileError::SameFile { .. })
    ));
    let copy = file.save_as(&target).unwrap();
    assert_eq!(copy.path(), target.as_path());
    assert_eq!(copy.generator(), Some(&settings()));
    assert_eq!(copy.pending_count().unwrap(), 1);
    let report = copy
        .save(&[(resident, edited_column(resident, 2))], None)
        .unwrap();
    assert_eq!((report.columns_written, report.pending_saved), (1, 1));
    drop(copy);
    let copy = StreamingWorldFile::open(&target).unwrap();
    assert_eq!(copy.pending_count().unwrap(), 0);
    assert_eq!(copy.edited_columns().unwrap(), vec![spilled, resident]);
    assert_eq!(
        load(&copy, spilled),
        Some(hashes(&edited_column(spilled, 1)))
    );
    assert_eq!(
        load(&copy, resident),
        Some(hashes(&edited_column(resident, 2)))
    );
    // The recovery file is as it was.
    assert_eq!(file.pending_count().unwrap(), 1);
    assert_eq!(file.edited_columns().unwrap(), vec![spilled]);
    // Saving over an existing file replaces it.
    let again = file.save_as(&target).unwrap();
    assert_eq!(again.edited_columns().unwrap(), vec![spilled]);
}

#[test]
fn loads_on_many_threads_while_spills_are_written() {
    let dir = test_dir("threads");
    let path = dir.join("world.strata");
    let file = Arc::new(StreamingWorldFile::create(&path, &settings()).unwrap());
    let columns: Vec<ColumnCoord> = (0..4)
        .flat_map(|z| (0..4).map(move |x| ColumnCoord::new(x, z)))
        .collect();
    let chunks: Vec<ColumnChunks> = columns.iter().map(|c| edited_column(*c, 1)).collect();
    let pairs: Vec<(ColumnCoord, ColumnChunks)> = columns
        .iter()
        .copied()
        .zip(chunks.iter().cloned())
        .collect();
    file.save(&pairs, None).unwrap();
    let want: Vec<Vec<(ChunkCoord, u64)>> = chunks.iter().map(|c| hashes(c)).collect();
    std::thread::scope(|s| {
        for t in 0..4 {
            let file = file.clone();
            let (columns, want) = (&columns, &want);
            s.spawn(move || {
                for round in 0..8 {
                    for (i, c) in columns.iter().enumerate() {
                        if (i + t + round).is_multiple_of(3) {
                            assert_eq!(load(&file, *c).as_ref(), Some(&want[i]));
                        }
                    }
                }
            });
        }
        // Spills of other columns meanwhile.
        for x in 4..8 {
            let c = ColumnCoord::new(x, 0);
            file.store_edited(c, &edited_column(c, 2)).unwrap();
        }
    });
    assert_eq!(file.pending_count().unwrap(), 4);
}

#[test]
fn residency_spills_edits_into_the_file_and_a_new_session_gets_them_back() {
    let dir = test_dir("residency");
    let path = dir.join("world.strata");
    let columns: Vec<ColumnCoord> = ColumnCoord::new(3, 3).with_neighbours().collect();
    let source: Arc<dyn ColumnSource> = Arc::new(GeneratedColumns::new(&settings()));
    let edited_hash = {
        let file = Arc::new(StreamingWorldFile::create(&path, &settings()).unwrap());
        let mut r = Residency::new(
            source.clone(),
            file.clone() as Arc<dyn EditStore>,
            usize::MAX,
        );
        let mut grid = Grid::streaming();
        r.load_now(&mut grid, columns.iter().copied()).unwrap();
        let region = CellBox::new(IVec3::new(100, 30, 100), IVec3::new(120, 80, 120));
        grid.edit_region(region, |_, _| Cell::full(Material::LIMESTONE))
            .unwrap();
        let hash =
            Grid::from_chunks(columns.iter().flat_map(|c| grid.column_chunks(*c))).content_hash();
        r.end_frame();
        r.evict(&mut grid, &columns);
        assert!(r.stats.spilled >= 1, "{:?}", r.stats);
        hash
        // Dropped without a save.
    };
    let file = Arc::new(StreamingWorldFile::open(&path).unwrap());
    assert!(file.pending_count().unwrap() >= 1);
    assert_eq!(file.column_rows_read(), 0);
    let source: Arc<dyn ColumnSource> = Arc::new(GeneratedColumns::new(file.generator().unwrap()));
    let mut r = Residency::new(source, file.clone() as Arc<dyn EditStore>, usize::MAX);
    let mut grid = Grid::streaming();
    r.load_now(&mut grid, columns.iter().copied()).unwrap();
    let hash =
        Grid::from_chunks(columns.iter().flat_map(|c| grid.column_chunks(*c))).content_hash();
    assert_eq!(hash, edited_hash, "the spilled edits came back");
    assert!(file.column_rows_read() >= 1);
}

/// The summary of `chunks` (what a node samples of an edited column).
fn summary_of(chunks: &[(ChunkCoord, ChunkCells)]) -> ColumnSummary {
    ColumnSummary::from_chunks(chunks)
}

#[test]
fn column_summaries_are_stored_with_their_columns_and_count_only_for_the_current_copy() {
    let dir = test_dir("summaries");
    let path = dir.join("world.strata");
    let file = StreamingWorldFile::create(&path, &settings()).unwrap();
    assert_eq!(file.format_version(), STREAMING_FORMAT_VERSION);
    let a = ColumnCoord::new(1, 2);
    let saved = edited_column(a, 1);
    file.save(&[(a, saved.clone())], None).unwrap();
    assert_eq!(file.stored_summary(a).unwrap(), Some(summary_of(&saved)));
    assert_eq!(file.stored_summary(ColumnCoord::new(3, 3)).unwrap(), None);
    // A spill (the column edited down to nothing) carries its own summary.
    file.store_edited(a, &[]).unwrap();
    let emptied = summary_of(&[]);
    assert_ne!(emptied, summary_of(&saved));
    assert_eq!(file.stored_summary(a).unwrap(), Some(emptied));
    // Discarded, the spill's summary belongs to no copy: none is returned
    // (the saved chunks are summarised instead), never the stale one.
    file.discard_pending().unwrap();
    assert_eq!(file.stored_summary(a).unwrap(), None);
    assert_eq!(load(&file, a), Some(hashes(&saved)));
    file.save(&[(a, saved.clone())], None).unwrap();
    drop(file);

    // Reopened: the summary comes back without reading a column row, and a
    // horizon summarises the reopened world from it.
    let file = Arc::new(StreamingWorldFile::open(&path).unwrap());
    assert_eq!(file.stored_summary(a).unwrap(), Some(summary_of(&saved)));
    let mut horizon = Horizon::new(Arc::new(GeneratedColumns::new(&settings()))).unwrap();
    horizon.summarise_store(file.clone());
    let start = std::time::Instant::now();
    while horizon.edited_columns() < 1 {
        assert!(start.elapsed().as_secs() < 30, "the summary never came");
        horizon.receive();
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(file.column_rows_read(), 0, "no chunk was read");
    drop(horizon);
    drop(file);

    // Damaged: a clear error, never a panic (the horizon then reads chunks).
    poke(&path, "UPDATE column_summaries SET data = x'010203'", []);
    let file = StreamingWorldFile::open(&path).unwrap();
    assert!(matches!(
        file.stored_summary(a),
        Err(SourceError::Corrupt { column, .. }) if column == a
    ));
    drop(file);
    poke(
        &path,
        "UPDATE column_summaries SET data = zeroblob(9216)",
        [],
    );
    let file = StreamingWorldFile::open(&path).unwrap();
    let zeroed = file
        .stored_summary(a)
        .unwrap()
        .expect("zeros are a valid summary");
    assert!(zeroed.height_cells.iter().all(|&h| h == 0.0));
    drop(file);
    let mut nan = vec![0u8; 9216];
    nan[..4].copy_from_slice(&f32::NAN.to_le_bytes());
    poke(&path, "UPDATE column_summaries SET data = ?1", [nan]);
    let file = StreamingWorldFile::open(&path).unwrap();
    assert!(matches!(
        file.stored_summary(a),
        Err(SourceError::Corrupt { .. })
    ));
}

#[test]
fn a_format_2_file_without_summaries_still_opens_loads_and_saves() {
    let dir = test_dir("format_2");
    let path = dir.join("world.strata");
    let a = ColumnCoord::new(2, 1);
    let saved = edited_column(a, 3);
    let file = StreamingWorldFile::create(&path, &settings()).unwrap();
    file.save(&[(a, saved.clone())], None).unwrap();
    drop(file);
    // What a build before summaries wrote: the version-2 tables only.
    poke(&path, "DROP TABLE column_summaries", []);
    poke(
        &path,
        "UPDATE meta SET value = '2' WHERE key = 'format_version'",
        [],
    );
    let file = StreamingWorldFile::open(&path).unwrap();
    assert_eq!(file.format_version(), GENERATED_FORMAT_VERSION);
    assert_eq!(file.stored_summary(a).unwrap(), None);
    assert_eq!(load(&file, a), Some(hashes(&saved)));
    let b = ColumnCoord::new(0, 3);
    file.store_edited(b, &edited_column(b, 4)).unwrap();
    file.save(&[], None).unwrap();
    drop(file);
    let file = StreamingWorldFile::open(&path).unwrap();
    assert_eq!(file.format_version(), GENERATED_FORMAT_VERSION, "kept");
    assert_eq!(load(&file, b), Some(hashes(&edited_column(b, 4))));
}
