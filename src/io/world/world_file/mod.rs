//! Worlds on disk: one SQLite file per world (`*.strata`).
//!
//! # Why SQLite
//! A world is a few thousand chunks of which an editing session touches a
//! handful. SQLite gives exactly what saving needs without a custom
//! container: rows keyed by chunk coordinate, so an incremental save rewrites
//! only the chunks an edit changed; transactions with a rollback journal, so a
//! save interrupted at any point (crash, kill, power loss) leaves the previous
//! world intact and loadable; and a file anyone can inspect with `sqlite3`.
//! The bundled SQLite is used, so no system library is needed.
//!
//! # Format (version [`FORMAT_VERSION`])
//! `PRAGMA application_id` is [`APPLICATION_ID`] (`"STRA"`). Two tables:
//!
//! - `meta(key TEXT PRIMARY KEY, value TEXT)`: `format_version` (decimal),
//!   `world_hash` (16 lowercase hex digits of [`Grid::content_hash`]),
//!   `created_unix` and `modified_unix` (decimal seconds), `writer`
//!   (`"strata <version>"`), and optionally `generator` (JSON
//!   `{"seed": N, "size_cells": N}` for generated worlds) and `camera`
//!   (JSON `[x, y, z, yaw_deg, pitch_deg]`, the editor camera).
//! - `chunks(x, y, z INTEGER, hash INTEGER, data BLOB, PRIMARY KEY (x, y, z))`:
//!   one row per stored chunk. `hash` is the chunk's
//!   [`ChunkCells::content_hash`] as the `i64` with the same bits. `data` is
//!   either `[0, material, occupancy]` (a uniform chunk: one cell), or `[1]`
//!   followed by one zstd frame that declares its content size and
//!   decompresses to exactly 65536 bytes: the 32768 material bytes of the
//!   chunk in [`local_index`](crate::terrain::storage::coords::local_index) order (x
//!   fastest), then the 32768 occupancy bytes in the same order. Splitting
//!   the two planes lets zstd see the long runs each has (5 % smaller than
//!   interleaved cells at the same level). The default world's 1932 dense
//!   chunks take 4.3 MB of blobs, and its file 5.6 MB: 0.028 bytes per voxel
//!   of its 1024 × 192 × 1024-cell volume.
//!
//! # Integrity
//! Loading verifies every chunk against its stored hash and the whole grid
//! against `world_hash`, checks the format version before anything else, and
//! never trusts a size from the file: blobs longer than any valid encoding
//! are rejected unread, a zstd frame must declare at most 65536 bytes and is
//! decoded into a fixed 65536-byte buffer, and the number of chunks is capped
//! by [`MAX_CHUNKS`]; chunk coordinates must lie on the valid lattice
//! ([`crate::terrain::storage::coords::LATTICE_CELLS`]) and each appear once, and
//! each `meta` key once. No input makes the loader panic, and loading only
//! ever builds a new [`Grid`]. Saving refuses, before writing anything, a
//! grid that loading would refuse (too many chunks, or a chunk off the
//! lattice), so every saved world reopens.
//!
//! A file to open is untrusted: the connection is hardened as SQLite advises
//! (defensive mode, `trusted_schema = OFF`, no triggers or views, a length
//! limit just above a chunk blob) and the schema must be exactly a world's
//! before any row is read, so no generated column or trigger can run. The
//! decoded cells are bounded by [`LoadOptions::max_decoded_bytes`] (dense
//! rows are counted before any is decoded), chunks are decoded and verified
//! in batches as they are read, and a strict load stops at the first
//! undecodable chunk and fails before decoding when the rows' stored hashes
//! cannot add up to the world hash. A leftover journal is rolled back only
//! after untouched copies of the file and the journal are kept
//! ([`JournalRecovery`]).
//!
//! Full saves write a sibling temporary file and rename it over the target;
//! incremental saves run in one SQLite transaction on the open file. Either
//! way a failed or interrupted save leaves the previous file as it was (an
//! interrupted incremental save leaves a hot journal that SQLite rolls back
//! the next time the file is opened).
//!
//! # Where the code lives
//! This file holds saving ([`WorldFile`], [`SaveBatch`]); `loading` reads and
//! verifies a file into a grid, `schema` opens files and reads and writes
//! the `meta` table, `codec` encodes chunk blobs, `journal` and
//! `journal_recovery` handle a leftover journal, and `error` is
//! [`WorldFileError`].

mod chunk_size;
mod codec;
pub mod document;
mod error;
mod journal;
mod journal_recovery;
mod loading;
mod material_rows;
mod schema;

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use glam::IVec3;
use rusqlite::{Connection, OpenFlags, TransactionBehavior, params};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::progress::Progress;
use crate::terrain::command::document_action::WorldDocument;
use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::ChunkCoord;
use crate::terrain::storage::grid::{Changes, Grid};
pub use chunk_size::{DENSE_CHUNK_BYTES, MAX_CHUNKS};
pub(crate) use codec::{
    ChunkTable, EncodedChunk, MAX_BLOB_BYTES, decode_blob, encode_cells, encode_chunks,
    write_chunk_rows,
};
use document::EncodedDocument;
pub use error::WorldFileError;
pub(crate) use error::{io_err, sqlite_err};
pub(crate) use journal::{noting, with_suffix};
pub use journal_recovery::JournalRecovery;
use loading::load_from;
pub use loading::{
    LoadOptions, LoadReport, MAX_DECODED_BYTES, SkippedChunk, load, load_with_progress, read_meta,
};
pub use schema::{APPLICATION_ID, FORMAT_VERSION, FORMAT_VERSION_WITHOUT_MATERIALS, WorldMeta};
pub(crate) use schema::{
    DOCUMENT_TABLES_SQL, FileSchema, WORLD_SCHEMA, WORLD_SCHEMA_V1, camera_text,
    configure_new_file, document_tables, generator_text, meta_number, meta_text, open_existing_as,
    parse_camera, parse_generator, read_meta_map,
};
use schema::{open_existing, write_meta};

/// True when a world of `count` chunks fits in a world file
/// (`count <= MAX_CHUNKS`): the one test both saving and loading apply, so
/// whatever saves also reopens.
pub fn chunk_count_fits(count: u64) -> bool {
    count <= MAX_CHUNKS as u64
}

/// Environment variable for crash tests, read only in builds with the
/// `test-hooks` cargo feature (off by default; the crate's tests turn it on):
/// when set to a number of milliseconds, every save stops for that long just
/// before it commits (after writing its rows and flushing written pages to
/// the file), after printing [`SAVE_STALL_MESSAGE`] to stderr, so a test can
/// kill the process in the middle of a save.
#[cfg(feature = "test-hooks")]
pub const SAVE_STALL_ENV: &str = "STRATA_TEST_SAVE_STALL_MS";

/// The line [`SAVE_STALL_ENV`] makes a save print before it stalls.
#[cfg(feature = "test-hooks")]
pub const SAVE_STALL_MESSAGE: &str = "strata: save stalled before commit";

/// What a save wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct SaveReport {
    /// Chunk rows written.
    pub chunks_written: usize,
    /// Chunk rows deleted.
    pub chunks_deleted: usize,
    /// True when every chunk was rewritten (a full save, or an incremental
    /// save that could not tell what changed).
    pub full: bool,
    /// The world hash written ([`Grid::content_hash`] of the saved grid).
    pub world_hash: u64,
    /// The metadata as written (with its timestamps).
    pub meta: WorldMeta,
    /// Size of the file after the save, bytes.
    pub file_bytes: u64,
    /// Wall time of the save, ms.
    pub elapsed_ms: f64,
}

/// Seconds since the Unix epoch (0 before it).
fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Milliseconds since `start`.
fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

/// Grid content hash from per-chunk hashes: the same value as
/// [`Grid::content_hash`] (XXH3-64 over the chunk coordinates in (z, y, x)
/// order, each as three little-endian `i32`s followed by the chunk hash),
/// without rehashing any cells.
pub fn world_hash_from_chunk_hashes(hashes: &FxHashMap<ChunkCoord, u64>) -> u64 {
    let mut sorted: Vec<(ChunkCoord, u64)> = hashes.iter().map(|(c, h)| (*c, *h)).collect();
    sorted.sort_unstable_by_key(|(c, _)| (c.0.z, c.0.y, c.0.x));
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for (c, ch) in sorted {
        h.update(&c.0.x.to_le_bytes());
        h.update(&c.0.y.to_le_bytes());
        h.update(&c.0.z.to_le_bytes());
        h.update(&ch.to_le_bytes());
    }
    h.digest()
}

/// Refuses, before anything is written, a save that loading would refuse:
/// a chunk off the valid lattice among `chunks` (the ones the save writes),
/// or more than [`MAX_CHUNKS`] chunks in the saved file (`count`).
fn check_savable(
    path: &Path,
    chunks: &[(ChunkCoord, ChunkCells)],
    count: usize,
) -> Result<(), WorldFileError> {
    if let Some((coord, _)) = chunks.iter().find(|(c, _)| !c.is_on_lattice()) {
        return Err(WorldFileError::ChunkOutsideLattice {
            path: path.to_path_buf(),
            coord: *coord,
        });
    }
    if !chunk_count_fits(count as u64) {
        return Err(WorldFileError::WorldTooLarge {
            path: path.to_path_buf(),
            count,
            limit: MAX_CHUNKS,
        });
    }
    crate::io::check_output_path(path).map_err(|source| WorldFileError::Unwritable {
        path: path.to_path_buf(),
        source,
    })
}

/// How many chunks a file holds after `batch` is written into it: the
/// `known` rows (`None` when the save rewrites everything), plus the batch's
/// chunks, minus its removed ones (the same sum the new world hash is made
/// of).
fn chunk_count_after(known: Option<&FxHashMap<ChunkCoord, u64>>, batch: &SaveBatch) -> usize {
    let mut after: FxHashSet<ChunkCoord> =
        known.map_or_else(FxHashSet::default, |k| k.keys().copied().collect());
    after.extend(batch.chunks.iter().map(|(c, _)| *c));
    for c in &batch.removed {
        after.remove(c);
    }
    after.len()
}

/// Every stored chunk of `grid` in (z, y, x) order, sharing its storage.
fn all_chunks(grid: &Grid) -> Vec<(ChunkCoord, ChunkCells)> {
    grid.sorted_coords()
        .into_iter()
        .map(|c| (c, grid.chunk_cells(c)))
        .collect()
}

/// The crash-test hook (see [`SAVE_STALL_ENV`]): flushes the pages written so
/// far to the file, announces itself and sleeps, all inside the transaction.
#[cfg(feature = "test-hooks")]
fn stall_for_crash_tests(conn: &Connection) {
    let Some(ms) = std::env::var(SAVE_STALL_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    else {
        return;
    };
    // Best effort: the hook only makes an interrupted save more realistic.
    let _ = conn.cache_flush();
    eprintln!("{SAVE_STALL_MESSAGE}");
    std::thread::sleep(std::time::Duration::from_millis(ms));
}

/// Without the `test-hooks` feature a save never stalls.
#[cfg(not(feature = "test-hooks"))]
fn stall_for_crash_tests(_conn: &Connection) {}

/// Writes a complete new world file at `tmp` (which must not exist), for
/// [`crate::io::write_atomically`]; errors name `target`, the file the user asked for.
fn write_new_file(
    tmp: &Path,
    target: &Path,
    chunks: &[EncodedChunk],
    document: Option<&EncodedDocument>,
    meta: &WorldMeta,
    world_hash: u64,
) -> Result<(), WorldFileError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut conn = Connection::open_with_flags(tmp, flags).map_err(|e| sqlite_err(target, e))?;
    // A fresh temporary file needs no journal: the rename is the commit.
    schema::configure_new_file(&conn).map_err(|e| sqlite_err(target, e))?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Exclusive)
        .map_err(|e| sqlite_err(target, e))?;
    schema::create_tables(&tx).map_err(|e| sqlite_err(target, e))?;
    write_chunk_rows(&tx, ChunkTable::Cells, chunks).map_err(|e| sqlite_err(target, e))?;
    document::write(&tx, document).map_err(|e| sqlite_err(target, e))?;
    write_meta(&tx, meta, world_hash).map_err(|e| sqlite_err(target, e))?;
    material_rows::write_textures(&tx, target, &meta.materials)?;
    stall_for_crash_tests(&tx);
    tx.commit().map_err(|e| sqlite_err(target, e))?;
    // synchronous = OFF skipped SQLite's fsync: `write_atomically` fsyncs
    // the file before the rename makes it the world.
    conn.close().map_err(|(_, e)| sqlite_err(target, e))
}

/// The size of `path`, 0 when it cannot be read.
fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// What an open [`WorldFile`] knows the file holds: the grid state it last
/// saved or loaded, and the hash of every chunk row.
#[derive(Debug)]
struct SyncedState {
    generation: u64,
    revision: u64,
    hashes: FxHashMap<ChunkCoord, u64>,
}

/// An open world file that remembers which grid state it holds, so the next
/// [`WorldFile::save_incremental`] writes only the chunks changed since.
///
/// Obtained from [`WorldFile::save_full`] or [`WorldFile::open`]. While it is
/// open, nothing else should write the same file.
#[derive(Debug)]
pub struct WorldFile {
    path: PathBuf,
    conn: Connection,
    synced: Option<SyncedState>,
}

impl WorldFile {
    /// Saves `grid` as a complete new world at `path`, atomically: the world
    /// is written to a sibling temporary file which is then renamed over
    /// `path`, so an existing file stays intact until the new one is complete.
    /// Missing parent directories are created. Returns a handle on the new
    /// file that remembers the saved state.
    ///
    /// A handle already open on `path` keeps reading the replaced file:
    /// drop it and use the returned one.
    ///
    /// # Errors
    /// [`WorldFileError::WorldTooLarge`] or
    /// [`WorldFileError::ChunkOutsideLattice`] for a grid that loading would
    /// refuse, before anything is written; [`WorldFileError::Io`] or
    /// [`WorldFileError::Sqlite`] when the file cannot be written. `path` is
    /// then unchanged.
    pub fn save_full(
        path: &Path,
        grid: &Grid,
        meta: &WorldMeta,
    ) -> Result<(WorldFile, SaveReport), WorldFileError> {
        WorldFile::save_full_with_progress(path, grid, meta, &Progress::new())
    }

    /// [`WorldFile::save_full`], counting chunks encoded in `progress`
    /// (stage "saving"); cancelling stops before anything replaces `path`.
    ///
    /// # Errors
    /// As [`WorldFile::save_full`], and [`WorldFileError::Cancelled`].
    pub fn save_full_with_progress(
        path: &Path,
        grid: &Grid,
        meta: &WorldMeta,
        progress: &Progress,
    ) -> Result<(WorldFile, SaveReport), WorldFileError> {
        WorldFile::save_full_batch(path, SaveBatch::full(grid), meta, progress)
    }

    /// [`WorldFile::save_full`] of a grid state captured earlier with
    /// [`SaveBatch::full`] (cheap, on the thread that owns the grid), so the
    /// encoding and writing can run on another thread while editing goes on.
    /// The returned handle knows the captured state: the next incremental
    /// save of that grid writes only what changed after the capture.
    ///
    /// # Errors
    /// As [`WorldFile::save_full_with_progress`].
    pub fn save_full_batch(
        path: &Path,
        batch: SaveBatch,
        meta: &WorldMeta,
        progress: &Progress,
    ) -> Result<(WorldFile, SaveReport), WorldFileError> {
        let start = Instant::now();
        check_savable(path, &batch.chunks, batch.chunks.len())?;
        let encoded = encode_chunks(path, &batch.chunks, progress)?;
        let hashes: FxHashMap<ChunkCoord, u64> =
            encoded.iter().map(|c| (c.coord, c.hash)).collect();
        let world_hash = world_hash_from_chunk_hashes(&hashes);
        let doc = encode_document(path, batch.document.as_ref(), &hashes, progress)?;
        let meta = stamped(meta);
        crate::io::write_atomically(
            path,
            |tmp| write_new_file(tmp, path, &encoded, doc.as_ref(), &meta, world_hash),
            |e| io_err(path, e),
        )?;
        // A journal beside the replaced file belonged to it (an interrupted
        // incremental save of the old world): rolled into the new file it
        // would corrupt it.
        let journal = with_suffix(path, "-journal");
        match std::fs::remove_file(&journal) {
            Ok(()) => log::info!(
                "removed {}, the journal of the replaced file",
                journal.display()
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err(&journal, e)),
        }
        let (conn, _) = open_existing(path)?;
        let file = WorldFile {
            path: path.to_path_buf(),
            conn,
            synced: Some(SyncedState {
                generation: batch.generation,
                revision: batch.revision,
                hashes,
            }),
        };
        let report = SaveReport {
            chunks_written: encoded.len(),
            chunks_deleted: 0,
            full: true,
            world_hash,
            meta,
            file_bytes: file_len(path),
            elapsed_ms: ms_since(start),
        };
        Ok((file, report))
    }

    /// Opens and loads the world at `path` (like [`load`]) and returns a
    /// handle that knows the loaded grid, so the next
    /// [`WorldFile::save_incremental`] of that grid writes only what changed.
    /// When chunks were skipped, the next save rewrites every chunk.
    ///
    /// # Errors
    /// Everything [`load`] reports.
    pub fn open(
        path: &Path,
        options: LoadOptions,
    ) -> Result<(WorldFile, Grid, WorldMeta, LoadReport), WorldFileError> {
        WorldFile::open_with_progress(path, options, &Progress::new())
    }

    /// [`WorldFile::open`] with progress (stage "loading") and cancellation.
    ///
    /// # Errors
    /// As [`WorldFile::open`], and [`WorldFileError::Cancelled`].
    pub fn open_with_progress(
        path: &Path,
        options: LoadOptions,
        progress: &Progress,
    ) -> Result<(WorldFile, Grid, WorldMeta, LoadReport), WorldFileError> {
        let (conn, recovery) = open_existing(path)?;
        let (grid, meta, mut report, hashes) =
            noting(&recovery, load_from(&conn, path, options, progress))?;
        report.journal_recovery = recovery;
        let rebuilt = report
            .document
            .as_ref()
            .is_some_and(|d| d.rebuilt_columns > 0);
        let clean = report.skipped.is_empty() && report.world_hash_ok && !rebuilt;
        let synced = clean.then(|| SyncedState {
            generation: grid.generation(),
            revision: grid.revision(),
            hashes,
        });
        let file = WorldFile {
            path: path.to_path_buf(),
            conn,
            synced,
        };
        Ok((file, grid, meta, report))
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Saves `grid` into this file in one SQLite transaction: only the chunks
    /// changed or removed since the state this handle last saved or loaded
    /// ([`Grid::changes_since`]) are written or deleted, then the metadata and
    /// world hash. When the handle cannot tell what changed (another grid, a
    /// clone, or history that expired), every chunk is rewritten, still in one
    /// transaction.
    ///
    /// The same as [`WorldFile::prepare_save`] followed by
    /// [`WorldFile::write_batch`].
    ///
    /// # Errors
    /// [`WorldFileError::WorldTooLarge`] or
    /// [`WorldFileError::ChunkOutsideLattice`] for a grid that loading would
    /// refuse (checked before anything is written), [`WorldFileError::Sqlite`]
    /// or [`WorldFileError::Io`]; the file then still holds the previous
    /// save, and the handle still knows it.
    pub fn save_incremental(
        &mut self,
        grid: &Grid,
        meta: &WorldMeta,
    ) -> Result<SaveReport, WorldFileError> {
        let batch = self.prepare_save(grid);
        self.write_batch(batch, meta)
    }

    /// The first half of an incremental save, cheap enough for the thread
    /// that owns the grid: captures the chunks changed and removed since the
    /// state this handle knows, sharing their storage (no cell is copied, no
    /// chunk encoded). The batch can then be written with
    /// [`WorldFile::write_batch`] on another thread while editing goes on.
    pub fn prepare_save(&self, grid: &Grid) -> SaveBatch {
        let changes = match &self.synced {
            Some(s) => grid.changes_since(s.generation, s.revision),
            None => Changes::FullRefresh,
        };
        let (full, chunks, removed) = match changes {
            Changes::FullRefresh => (true, all_chunks(grid), Vec::new()),
            Changes::Incremental { changed, removed } => (
                false,
                changed
                    .into_iter()
                    .map(|c| (c, grid.chunk_cells(c)))
                    .collect(),
                removed,
            ),
        };
        SaveBatch {
            generation: grid.generation(),
            revision: grid.revision(),
            full,
            chunks,
            removed,
            document: None,
        }
    }

    /// The second half of an incremental save: encodes the batch's chunks and
    /// writes them, the deletions, the metadata and the world hash in one
    /// SQLite transaction. Afterwards the handle knows the grid state the
    /// batch was prepared from.
    ///
    /// A batch must come from this handle's latest [`WorldFile::prepare_save`]
    /// (batches are not merged: writing an older one after a newer one would
    /// store the older state).
    ///
    /// # Errors
    /// As [`WorldFile::save_incremental`]; the file then still holds the
    /// previous save, and the handle still knows it (the next batch includes
    /// these chunks again).
    pub fn write_batch(
        &mut self,
        batch: SaveBatch,
        meta: &WorldMeta,
    ) -> Result<SaveReport, WorldFileError> {
        self.write_batch_with_progress(batch, meta, &Progress::new())
    }

    /// [`WorldFile::write_batch`], counting chunks encoded in `progress`
    /// (stage "saving"); cancelling stops before the transaction begins, so
    /// the file keeps its previous save.
    ///
    /// # Errors
    /// As [`WorldFile::write_batch`], and [`WorldFileError::Cancelled`].
    pub fn write_batch_with_progress(
        &mut self,
        batch: SaveBatch,
        meta: &WorldMeta,
        progress: &Progress,
    ) -> Result<SaveReport, WorldFileError> {
        let start = Instant::now();
        let path = self.path.clone();
        let full = batch.full || self.synced.is_none();
        let known = match (&self.synced, full) {
            (Some(s), false) => Some(&s.hashes),
            _ => None,
        };
        check_savable(&path, &batch.chunks, chunk_count_after(known, &batch))?;
        let encoded = encode_chunks(&path, &batch.chunks, progress)?;
        let mut hashes = match (&self.synced, full) {
            (Some(s), false) => s.hashes.clone(),
            _ => FxHashMap::default(),
        };
        for c in &encoded {
            hashes.insert(c.coord, c.hash);
        }
        for c in &batch.removed {
            hashes.remove(c);
        }
        let world_hash = world_hash_from_chunk_hashes(&hashes);
        let doc = encode_document(&path, batch.document.as_ref(), &hashes, progress)?;
        let meta = stamped(meta);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sqlite_err(&path, e))?;
        let deleted = (|| -> rusqlite::Result<usize> {
            let mut deleted = 0;
            if full {
                // Rows of chunks the grid no longer holds count as deleted.
                let mut stmt = tx.prepare("SELECT x, y, z FROM chunks")?;
                let old = stmt.query_map([], |r| {
                    Ok(ChunkCoord(IVec3::new(r.get(0)?, r.get(1)?, r.get(2)?)))
                })?;
                for c in old {
                    if !hashes.contains_key(&c?) {
                        deleted += 1;
                    }
                }
                drop(stmt);
                tx.execute("DELETE FROM chunks", [])?;
            } else {
                let mut del =
                    tx.prepare("DELETE FROM chunks WHERE x = ?1 AND y = ?2 AND z = ?3")?;
                for c in &batch.removed {
                    deleted += del.execute(params![c.0.x, c.0.y, c.0.z])?;
                }
            }
            write_chunk_rows(&tx, ChunkTable::Cells, &encoded)?;
            document::write(&tx, doc.as_ref())?;
            write_meta(&tx, &meta, world_hash)?;
            Ok(deleted)
        })()
        .map_err(|e| sqlite_err(&path, e))?;
        material_rows::write_textures(&tx, &path, &meta.materials)?;
        stall_for_crash_tests(&tx);
        tx.commit().map_err(|e| sqlite_err(&path, e))?;
        self.synced = Some(SyncedState {
            generation: batch.generation,
            revision: batch.revision,
            hashes,
        });
        Ok(SaveReport {
            chunks_written: encoded.len(),
            chunks_deleted: deleted,
            full,
            world_hash,
            meta,
            file_bytes: file_len(&path),
            elapsed_ms: ms_since(start),
        })
    }
}

/// What one incremental save writes, captured by [`WorldFile::prepare_save`]
/// (chunk storage is shared with the grid, so capturing copies no cells).
#[derive(Clone, Debug)]
pub struct SaveBatch {
    generation: u64,
    revision: u64,
    full: bool,
    chunks: Vec<(ChunkCoord, ChunkCells)>,
    removed: Vec<ChunkCoord>,
    document: Option<WorldDocument>,
}

impl SaveBatch {
    /// Every chunk of `grid` (sharing storage, no cell copied), for
    /// [`WorldFile::save_full_batch`].
    pub fn full(grid: &Grid) -> SaveBatch {
        SaveBatch {
            generation: grid.generation(),
            revision: grid.revision(),
            full: true,
            chunks: all_chunks(grid),
            removed: Vec::new(),
            document: None,
        }
    }

    /// The batch, saving `document` (the world's layers over its base)
    /// with the cells; without one the file holds no layers.
    pub fn with_document(self, document: Option<WorldDocument>) -> SaveBatch {
        SaveBatch { document, ..self }
    }

    /// Chunks the batch writes.
    pub fn chunks_to_write(&self) -> usize {
        self.chunks.len()
    }

    /// Chunk rows the batch deletes (not counting a full rewrite's).
    pub fn chunks_to_delete(&self) -> usize {
        self.removed.len()
    }

    /// True when the batch rewrites every chunk.
    pub fn is_full(&self) -> bool {
        self.full
    }

    /// True when nothing but the metadata would be written.
    pub fn is_empty(&self) -> bool {
        !self.full && self.chunks.is_empty() && self.removed.is_empty()
    }
}

/// Encodes the document a save writes, against the chunk hashes the file
/// will hold after it.
fn encode_document(
    path: &Path,
    document: Option<&WorldDocument>,
    hashes: &FxHashMap<ChunkCoord, u64>,
    progress: &Progress,
) -> Result<Option<EncodedDocument>, WorldFileError> {
    document
        .map(|d| document::encode(path, d, hashes, progress))
        .transpose()
}

/// `meta` with `modified_unix` set to now and `created_unix` defaulted to now.
fn stamped(meta: &WorldMeta) -> WorldMeta {
    let now = now_unix();
    WorldMeta {
        created_unix: if meta.created_unix == 0 {
            now
        } else {
            meta.created_unix
        },
        modified_unix: now,
        ..meta.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::cell::{Cell, Material};

    #[test]
    fn chunk_count_after_a_batch_adds_new_chunks_and_drops_removed_ones() {
        let c = |x| ChunkCoord::new(x, 0, 0);
        let known: FxHashMap<ChunkCoord, u64> =
            [(c(1), 1), (c(2), 2), (c(3), 3)].into_iter().collect();
        let rock = ChunkCells::Uniform(Cell::full(Material::ROCK));
        let batch = SaveBatch {
            generation: 1,
            revision: 2,
            full: false,
            // One rewritten, one new.
            chunks: vec![(c(2), rock.clone()), (c(4), rock)],
            // One known, one the file never held.
            removed: vec![c(3), c(5)],
            document: None,
        };
        assert_eq!(chunk_count_after(Some(&known), &batch), 3);
        assert_eq!(chunk_count_after(None, &batch), 2);
        assert!(chunk_count_fits(MAX_CHUNKS as u64));
        assert!(!chunk_count_fits(MAX_CHUNKS as u64 + 1));
    }

    #[test]
    fn world_hash_from_chunk_hashes_equals_grid_content_hash() {
        let mut grid = Grid::new();
        for (i, c) in [(-40, 3, 7), (0, 0, 0), (100, -5, 33)]
            .into_iter()
            .enumerate()
        {
            let min = IVec3::new(c.0, c.1, c.2);
            grid.edit_region(
                crate::terrain::CellBox::new(min, min + IVec3::splat(2 + i as i32)),
                |_, _| Cell::new(Material::ROCK, 200),
            )
            .unwrap();
        }
        let hashes: FxHashMap<ChunkCoord, u64> = grid
            .chunks()
            .map(|(c, chunk)| (c, chunk.cells.content_hash()))
            .collect();
        assert_eq!(world_hash_from_chunk_hashes(&hashes), grid.content_hash());
    }
}
