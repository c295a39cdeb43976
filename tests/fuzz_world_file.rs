//! A bounded mutation fuzzer for the world loader and its chunk codec.
//!
//! Starts from a small valid world file and, input by input, mutates it the
//! ways a damaged or hostile file differs from a good one: chunk blobs with
//! flipped, overwritten, truncated, extended, spliced or random bytes (with
//! the stored hash left stale or made to match), chunk coordinates anywhere
//! in `i64` (the lattice's edges and beyond), hashes, duplicated and deleted
//! rows, meta values (numbers, huge strings, JSON), the world document
//! (its zstd parts, the JSON record inside them, its stamp blobs, base
//! chunks and column keys), and raw bytes of the SQLite file itself. Every input must load or fail with an error, within
//! [`MAX_LOAD`], and never panic.
//!
//! It runs for `STRATA_FUZZ_SECS` seconds (default 5, so CI stays quick);
//! `STRATA_FUZZ_SECS=3600 cargo test --release --test fuzz_world_file --
//! --nocapture` is the long run. Inputs are deterministic per index: a
//! finding prints the index to reproduce it with `STRATA_FUZZ_FROM`.

mod common;

use common::fuzz_rng::Rng;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use glam::IVec3;
use strata::io::world::world_file::{LoadOptions, SaveBatch, WorldFile, WorldMeta, load};
use strata::script::{Script, ScriptRunner};
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};
use strata::terrain::{Cell, CellBox, Material};

/// Longest one load of a (small) mutated file may take.
const MAX_LOAD: Duration = Duration::from_secs(2);

/// One chunk row of the base file.
#[derive(Clone)]
struct Row {
    x: i64,
    y: i64,
    z: i64,
    hash: i64,
    data: Vec<u8>,
}

/// The valid world every input starts from: a few chunk columns with dense
/// and uniform chunks, water and an edit, saved once.
fn base_world(dir: &Path) -> PathBuf {
    let settings = GeneratorSettings {
        seed: 3,
        size_cells: 64,
    };
    let mut grid = generate_world(&settings).expect("world");
    grid.edit_region(
        CellBox::new(IVec3::new(4, 30, 4), IVec3::new(40, 44, 20)),
        |c, _| {
            if c.0.y > 38 {
                Cell::full(Material::WATER)
            } else {
                Cell::new(Material::SAND, 128)
            }
        },
    )
    .expect("edit");
    // Layers: a fill, a stamp and a stroke over the generated base.
    let stamps = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/stamps");
    let script = Script::parse_in(
        r#"{"strokes": [
            {"frame": 0, "tool": "layer", "action": "add", "layer": "Edits"},
            {"frame": 1, "tool": "fill", "region_min": [2, 20, 2], "region_max": [12, 30, 12],
             "material": "rock"},
            {"frame": 2, "tool": "stamp", "stamp": "mesa.png", "centre_xz": [120, 120],
             "radius_cells": 8, "height_scale_cells": 6, "mode": "add"},
            {"frame": 3, "tool": "add", "path": [[40, 120, 200], [80, 120, 220]],
             "radius_cells": 3, "strength": 0.5}
        ]}"#,
        "fuzz-layers",
        Some(stamps),
    )
    .expect("script");
    let mut runner = ScriptRunner::for_script(&script, &grid, Some(settings.clone()));
    for s in &script.strokes {
        runner.run(&mut grid, &s.action).expect("layer edit");
    }
    let path = dir.join("base.strata");
    let batch = SaveBatch::full(&grid).with_document(runner.session.document_snapshot());
    WorldFile::save_full_batch(
        &path,
        batch,
        &WorldMeta::generated(&settings),
        &strata::progress::Progress::new(),
    )
    .expect("save");
    path
}

/// Mutates the world document of the file `conn` is open on.
fn mutate_document(rng: &mut Rng, conn: &rusqlite::Connection, donor: &[u8]) {
    let names: Vec<(String, i64)> = conn
        .prepare("SELECT name, part FROM document")
        .and_then(|mut s| {
            s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<Vec<_>, _>>()
        })
        .unwrap_or_default();
    if names.is_empty() {
        return;
    }
    let (name, part) = names[rng.below(names.len())].clone();
    match rng.below(6) {
        0 => {
            // The zstd bytes of a part.
            let Ok(mut data) = conn.query_row(
                "SELECT data FROM document WHERE name = ?1 AND part = ?2",
                rusqlite::params![name, part],
                |r| r.get::<_, Vec<u8>>(0),
            ) else {
                return;
            };
            mutate_blob(rng, &mut data, donor);
            let _ = conn.execute(
                "UPDATE document SET data = ?1 WHERE name = ?2 AND part = ?3",
                rusqlite::params![data, name, part],
            );
        }
        1 => {
            // The JSON record itself, recompressed (hostile text, not a
            // broken frame).
            // An earlier mutation of this input may have broken it already.
            let Ok(frame) = conn.query_row(
                "SELECT data FROM document WHERE name = 'record' AND part = 0",
                [],
                |r| r.get::<_, Vec<u8>>(0),
            ) else {
                return;
            };
            let Ok(mut json) = zstd::decode_all(&frame[..]) else {
                return;
            };
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(json.len());
                json[i] = match rng.below(3) {
                    0 => b"0123456789-.e"[rng.below(13)],
                    1 => b"{}[],:\"nul"[rng.below(10)],
                    _ => rng.next() as u8,
                };
            }
            let frame = zstd::bulk::compress(&json, 3).expect("compress");
            let _ = conn.execute(
                "UPDATE document SET data = ?1 WHERE name = 'record' AND part = 0",
                rusqlite::params![frame],
            );
        }
        2 => {
            let _ = conn.execute(
                "UPDATE document SET part = ?1 WHERE name = ?2 AND part = ?3",
                rusqlite::params![wild_coordinate(rng), name, part],
            );
        }
        3 => {
            let _ = conn.execute(
                "DELETE FROM document WHERE name = ?1 AND part = ?2",
                rusqlite::params![name, part],
            );
        }
        4 => {
            // Base chunks: a coordinate, a hash or the bytes.
            let _ = match rng.below(3) {
                0 => conn.execute(
                    "UPDATE base_chunks SET x = ?1 WHERE rowid = (SELECT min(rowid) FROM base_chunks)",
                    rusqlite::params![wild_coordinate(rng)],
                ),
                1 => conn.execute(
                    "UPDATE base_chunks SET hash = ?1",
                    rusqlite::params![rng.next() as i64],
                ),
                _ => conn.execute(
                    "UPDATE base_chunks SET data = ?1",
                    rusqlite::params![donor[..rng.below(donor.len() + 1)].to_vec()],
                ),
            };
        }
        _ => {
            // Column keys: changed (stale columns are re-derived), moved
            // anywhere, or deleted.
            let _ = match rng.below(3) {
                0 => conn.execute(
                    "UPDATE column_keys SET key = ?1",
                    rusqlite::params![rng.next() as i64],
                ),
                1 => conn.execute(
                    "INSERT OR REPLACE INTO column_keys (x, z, key) VALUES (?1, ?2, ?3)",
                    rusqlite::params![wild_coordinate(rng), wild_coordinate(rng), 1],
                ),
                _ => conn.execute("DELETE FROM column_keys", []),
            };
        }
    }
}

fn read_rows(path: &Path) -> (Vec<Row>, Vec<(String, String)>) {
    let conn = rusqlite::Connection::open(path).expect("open base");
    let mut stmt = conn
        .prepare("SELECT x, y, z, hash, data FROM chunks")
        .expect("chunks");
    let rows = stmt
        .query_map([], |r| {
            Ok(Row {
                x: r.get(0)?,
                y: r.get(1)?,
                z: r.get(2)?,
                hash: r.get(3)?,
                data: r.get(4)?,
            })
        })
        .expect("query")
        .collect::<Result<Vec<_>, _>>()
        .expect("rows");
    let mut stmt = conn.prepare("SELECT key, value FROM meta").expect("meta");
    let meta = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<Vec<_>, _>>()
        .expect("meta rows");
    (rows, meta)
}

/// Interesting coordinates: the lattice's edges and `i64`'s.
fn wild_coordinate(rng: &mut Rng) -> i64 {
    const EDGES: [i64; 10] = [
        i64::MIN,
        i64::MAX,
        0,
        -1,
        67_108_863,
        -67_108_864,
        67_108_864,
        -67_108_865,
        i32::MIN as i64,
        i32::MAX as i64,
    ];
    if rng.chance(2) {
        EDGES[rng.below(EDGES.len())].wrapping_add(rng.below(3) as i64 - 1)
    } else {
        rng.next() as i64 >> rng.below(64)
    }
}

/// Mutates one blob in place.
fn mutate_blob(rng: &mut Rng, blob: &mut Vec<u8>, donor: &[u8]) {
    match rng.below(7) {
        0 => {
            for _ in 0..1 + rng.below(4) {
                if !blob.is_empty() {
                    let i = rng.below(blob.len());
                    blob[i] ^= 1 << rng.below(8);
                }
            }
        }
        1 => {
            if !blob.is_empty() {
                let i = rng.below(blob.len());
                blob[i] = rng.next() as u8;
            }
        }
        2 => blob.truncate(rng.below(blob.len() + 1)),
        3 => {
            let extra = rng.below(64);
            blob.extend((0..extra).map(|_| rng.next() as u8));
        }
        4 => {
            let at = rng.below(blob.len() + 1);
            let from = rng.below(donor.len() + 1);
            let len = rng.below(donor.len() - from + 1);
            blob.splice(at..at, donor[from..from + len].iter().copied());
        }
        5 => {
            let len = rng.below(200);
            *blob = (0..len).map(|_| rng.next() as u8).collect();
        }
        _ => {
            // A header byte (the storage kind) changed.
            if !blob.is_empty() {
                blob[0] = rng.next() as u8;
            }
        }
    }
}

/// Writes input `index`: the base rows and meta, mutated, into `path`.
fn write_input(index: u64, base: &Path, rows: &[Row], meta: &[(String, String)], path: &Path) {
    let mut rng = Rng::new(index);
    std::fs::copy(base, path).expect("copy base");
    let kind = rng.below(12);
    if kind == 9 {
        // Raw bytes of the SQLite file.
        let mut bytes = std::fs::read(path).expect("read copy");
        for _ in 0..1 + rng.below(8) {
            let i = rng.below(bytes.len());
            bytes[i] = rng.next() as u8;
        }
        if rng.chance(4) {
            bytes.truncate(rng.below(bytes.len()));
        }
        std::fs::write(path, bytes).expect("write mutated file");
        return;
    }
    let conn = rusqlite::Connection::open(path).expect("open copy");
    let pick = |rng: &mut Rng| rows[rng.below(rows.len())].clone();
    let key = |r: &Row| (r.x, r.y, r.z);
    let update = |conn: &rusqlite::Connection, old: (i64, i64, i64), r: &Row| {
        // A coordinate change may collide with another row's key: then the
        // row is left as it was (the table's primary key forbids it).
        let _ = conn.execute(
            "UPDATE chunks SET x = ?1, y = ?2, z = ?3, hash = ?4, data = ?5 \
             WHERE x = ?6 AND y = ?7 AND z = ?8",
            rusqlite::params![r.x, r.y, r.z, r.hash, r.data, old.0, old.1, old.2],
        );
    };
    for _ in 0..1 + rng.below(3) {
        match kind {
            10 | 11 => {
                let donor = pick(&mut rng).data;
                mutate_document(&mut rng, &conn, &donor);
            }
            0..=3 => {
                let mut r = pick(&mut rng);
                let old = key(&r);
                let donor = pick(&mut rng).data;
                mutate_blob(&mut rng, &mut r.data, &donor);
                if rng.chance(3) {
                    r.hash = rng.next() as i64;
                }
                update(&conn, old, &r);
            }
            4 => {
                let mut r = pick(&mut rng);
                let old = key(&r);
                match rng.below(3) {
                    0 => r.x = wild_coordinate(&mut rng),
                    1 => r.y = wild_coordinate(&mut rng),
                    _ => r.z = wild_coordinate(&mut rng),
                }
                update(&conn, old, &r);
            }
            5 => {
                let r = pick(&mut rng);
                let _ = conn.execute(
                    "DELETE FROM chunks WHERE x = ?1 AND y = ?2 AND z = ?3",
                    rusqlite::params![r.x, r.y, r.z],
                );
            }
            6 => {
                // Another row with the same blob (a copy elsewhere).
                let r = pick(&mut rng);
                let _ = conn.execute(
                    "INSERT INTO chunks (x, y, z, hash, data) VALUES (?1, ?2, ?3, ?4, ?5)",
                    rusqlite::params![wild_coordinate(&mut rng), r.y, r.z, r.hash, r.data],
                );
            }
            7 => {
                let (k, v) = &meta[rng.below(meta.len())];
                let value = match rng.below(5) {
                    0 => String::new(),
                    1 => (rng.next() as i64).to_string(),
                    2 => "9".repeat(rng.below(400)),
                    3 => format!(
                        "{{\"seed\": {}, \"size_cells\": {}}}",
                        rng.next(),
                        rng.next()
                    ),
                    _ => {
                        let mut v = v.clone().into_bytes();
                        if !v.is_empty() {
                            let i = rng.below(v.len());
                            v[i] = b' ' + (rng.next() % 90) as u8;
                        }
                        String::from_utf8_lossy(&v).into_owned()
                    }
                };
                let _ = conn.execute(
                    "UPDATE meta SET value = ?1 WHERE key = ?2",
                    rusqlite::params![value, k],
                );
            }
            _ => {
                let r = pick(&mut rng);
                let _ = conn.execute(
                    "UPDATE chunks SET hash = ?1 WHERE x = ?2 AND y = ?3 AND z = ?4",
                    rusqlite::params![rng.next() as i64, r.x, r.y, r.z],
                );
            }
        }
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn mutated_world_files_load_or_fail_cleanly_in_bounded_time() {
    // Per process, so a long run and a CI run can share the target dir.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("fuzz_world_file-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("fuzz dir");
    let base = base_world(&dir);
    let (rows, meta) = read_rows(&base);
    assert!(rows.len() > 4 && !meta.is_empty());
    let budget = Duration::from_secs(env_u64("STRATA_FUZZ_SECS", 5));
    let first = env_u64("STRATA_FUZZ_FROM", 0);
    let input = dir.join("input.strata");
    let start = Instant::now();
    let (mut index, mut loaded, mut refused) = (first, 0u64, 0u64);
    let mut slowest = Duration::ZERO;
    while start.elapsed() < budget || index == first {
        // A journal or temp file left by a previous input must not leak in.
        for name in ["input.strata-journal", "input.strata-wal"] {
            let _ = std::fs::remove_file(dir.join(name));
        }
        write_input(index, &base, &rows, &meta, &input);
        let timed_load = || {
            let t = Instant::now();
            let result = std::panic::catch_unwind(|| load(&input, LoadOptions::default()));
            (result, t.elapsed())
        };
        let (result, mut took) = timed_load();
        match result {
            Ok(Ok(_)) => loaded += 1,
            Ok(Err(_)) => refused += 1,
            Err(_) => panic!("input {index} panicked the loader (STRATA_FUZZ_FROM={index})"),
        }
        if took > MAX_LOAD {
            // Wall time: a long run shares the machine, and a starved
            // process can miss the bound on a fast input. Time it once
            // more; slow twice is a finding.
            let slow = took;
            took = timed_load().1;
            eprintln!("input {index}: {slow:?}, then {took:?} when timed again");
        }
        slowest = slowest.max(took);
        assert!(
            took <= MAX_LOAD,
            "input {index} took {took:?} to load, twice (STRATA_FUZZ_FROM={index})"
        );
        index += 1;
    }
    eprintln!(
        "fuzzed {} inputs in {:.1} s: {loaded} loaded, {refused} refused with an error, \
         slowest load {slowest:?}",
        index - first,
        start.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
