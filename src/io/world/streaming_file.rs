//! Streaming world files (spec §12): one SQLite file per streaming world
//! that holds where its unedited columns come from (generator settings, or
//! a heightmap import) and only the chunk columns an artist edited.
//! Unedited columns are never stored: they are generated again from
//! (settings, column) or built again from the heightmap. Opening reads only
//! the metadata (and, for a heightmap world, decodes its stored PNG), so it
//! takes the same time whatever the number of stored columns; columns are
//! read one at a time when residency asks for them
//! ([`EditStore::load_edited`]).
//!
//! # Format (versions 2, 3 and [`STREAMING_FORMAT_VERSION`] = 4)
//! `PRAGMA application_id` is
//! [`APPLICATION_ID`](crate::io::world::world_file::APPLICATION_ID) (`"STRA"`), as for world
//! files. Version 2 (generated worlds; still what a generated world is
//! written as, so older builds read it) has three tables:
//!
//! - `meta(key TEXT PRIMARY KEY, value TEXT)`: `format_version` (decimal,
//!   2), `kind` (`"streaming"`), `generator`
//!   (JSON `{"seed": N, "size_cells": N}`, valid for a streaming world:
//!   [`GeneratorSettings::validate_streaming`]), `created_unix` and
//!   `modified_unix` (decimal seconds), `writer` (`"strata <version>"`), and
//!   optionally `camera` (JSON `[x, y, z, yaw_deg, pitch_deg]`).
//! - `columns(x, z INTEGER, hash INTEGER, data BLOB, PRIMARY KEY (x, z))`:
//!   the saved edited columns, one row per column (chunk coordinates).
//! - `pending_columns`, declared the same way: edited columns spilled from
//!   memory since the last save (the spec's "pending changes"). A save moves
//!   them into `columns`; rows left here after a crash are unsaved work to
//!   recover ([`StreamingWorldFile::pending_count`]) or to drop
//!   ([`StreamingWorldFile::discard_pending`]).
//!
//! A column's `data` is a little-endian `u32` count of chunks, then per
//! chunk, in strictly increasing y: its chunk y as `i32`, the length of its
//! chunk blob as `u32`, and the chunk blob, encoded exactly as a world
//! file's `chunks.data` (see [`world_file`](crate::io::world::world_file)). All-empty
//! chunks are left out; a column edited down to nothing holds 0 chunks (a
//! stored empty column is not the generated one). `hash` is XXH3-64 over the
//! column's x and z (`i32` each), then each chunk's y (`i32`) and
//! [`ChunkCells::content_hash`] (`u64`), all little-endian, stored as the
//! `i64` with the same bits: a damaged chunk, a dropped or added chunk, or a
//! row moved to another coordinate fails it.
//!
//! Version 3 (streamed heightmap imports) adds the table `heightmap_png`
//! and the meta keys `heightmap` and `heightmap_sidecar` instead of
//! `generator` (see [`streaming_heightmap`](crate::io::heightmap::streaming_heightmap)):
//! the file holds the imported PNG itself, so it rebuilds its unedited
//! columns without the original file. A version's schema is exact: a
//! version-2 file with the heightmap table, or a version-3 file without it,
//! is refused.
//!
//! Version 4 (what this build writes, for either origin) adds the table
//! `column_summaries(x, z, hash, data, PRIMARY KEY (x, z))` to the tables of
//! version 2 (generated) or 3 (heightmap): the coarse summary of each edited
//! column (spec §13; `data` as [`summary_rows`](crate::io::world::summary_rows) says),
//! written with every column row in the same transaction. `hash` is the
//! column hash of the row the summary was made from: a summary counts only
//! while it equals the hash of the column's current copy (pending, else
//! saved), so a discarded spill or a damaged row never shows a stale
//! summary; without a match the column's chunks are summarised instead.
//! Versions 2 and 3 are read as before and keep their version when saved.
//!
//! # Integrity
//! The file is opened as world files are (hardened connection, exact
//! schema checked before any row is read, a leftover journal rolled back
//! only after copies are kept; see [`JournalRecovery`]), and the version is
//! checked before any other metadata. A column load never trusts a size
//! from the file: at most [`MAX_COLUMN_CHUNKS`] chunks of at most one chunk
//! blob each, rows longer than [`MAX_COLUMN_BYTES`] are refused unread, and
//! the decoded chunks are checked against the stored hash. Damaged rows are
//! [`SourceError::Corrupt`]; no input makes a load panic.
//!
//! Every write is one committed SQLite transaction with a rollback journal
//! and `synchronous = FULL`: a spill ([`EditStore::store_edited`]) is on
//! disk when it returns, and a save interrupted at any point leaves the
//! previous saved state and the pending rows as they were.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use rayon::prelude::*;
use rusqlite::{Connection, OpenFlags, TransactionBehavior, params};

use crate::io::heightmap::heightmap_import::{HeightmapSettings, ImportError, decode_heightmap};
use crate::io::heightmap::streaming_heightmap::{
    CopyError, HEIGHTMAP_TABLE, StoredHeightmap, copy_png, heightmap_meta_text,
    parse_heightmap_meta, read_png,
};
use crate::io::world::summary_rows::{SUMMARY_BYTES, decode_summary, encode_summary};
use crate::io::world::world_file::{
    FileSchema, JournalRecovery, MAX_BLOB_BYTES, WORLD_SCHEMA, WorldFileError, camera_text,
    configure_new_file, decode_blob, encode_cells, generator_text, io_err, meta_number, meta_text,
    noting, open_existing_as, parse_camera, parse_generator, read_meta_map, sqlite_err,
    with_suffix,
};
use crate::terrain::generation::generate::{GenerateError, GeneratorSettings};
use crate::terrain::generation::heightmap_terrain::HeightmapTerrain;
use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::{ChunkCoord, ColumnCoord};
use crate::terrain::streaming::column_source::{ColumnChunks, EditStore, SourceError};
use crate::terrain::streaming::column_summary::ColumnSummary;

/// The newest format version of streaming world files, what this build
/// writes (4: column summaries; world files are
/// version 1, [`FORMAT_VERSION`](crate::io::world::world_file::FORMAT_VERSION)): 3,
/// heightmap worlds. This build reads versions
/// [`GENERATED_FORMAT_VERSION`] and 3.
pub const STREAMING_FORMAT_VERSION: u32 = 4;

/// The format version of a streamed heightmap import before column
/// summaries (3); still read.
pub const HEIGHTMAP_FORMAT_VERSION: u32 = 3;

/// The format version of a generated streaming world before column
/// summaries (2: the first streaming format); still read.
pub const GENERATED_FORMAT_VERSION: u32 = 2;

/// The `kind` meta value of a streaming world file.
pub const STREAMING_KIND: &str = "streaming";

/// Most chunks one stored column may hold: 256 chunks are 8192 cells
/// (32768 studs) of height, 34 times the tallest generated terrain. A column
/// with more cannot be stored (the caller keeps it in memory) and a row
/// that claims more is damaged.
pub const MAX_COLUMN_CHUNKS: usize = 256;

/// Longest column `data` a load reads, bytes: [`MAX_COLUMN_CHUNKS`] chunks
/// of the longest chunk blob each, with their 8-byte headers, and the count.
pub const MAX_COLUMN_BYTES: usize = 4 + MAX_COLUMN_CHUNKS * (8 + MAX_BLOB_BYTES);

/// Most columns [`EditStore::edited_columns`] lists (saved and pending
/// together): 4 Mi columns, 4096 km² of edits. A file that holds more is
/// refused, so a hostile file cannot make the list grow without bound.
pub const MAX_EDITED_COLUMNS: usize = 1 << 22;

/// Longest string or blob SQLite may build on a connection to a streaming
/// file: just above the longest column row a load reads.
const MAX_VALUE_BYTES: usize = MAX_COLUMN_BYTES + 4096;

/// The tables of a version-2 streaming world file (also in version 3).
macro_rules! streaming_tables_sql {
    () => {
        "
CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE columns (
    x INTEGER NOT NULL,
    z INTEGER NOT NULL,
    hash INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (x, z)
);
CREATE TABLE pending_columns (
    x INTEGER NOT NULL,
    z INTEGER NOT NULL,
    hash INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (x, z)
);
"
    };
}

/// The tables of a version-2 streaming world file.
const STREAMING_SCHEMA_SQL: &str = streaming_tables_sql!();

/// The tables of a version-3 (heightmap) streaming world file.
const HEIGHTMAP_SCHEMA_SQL: &str = concat!(
    streaming_tables_sql!(),
    "CREATE TABLE heightmap_png (part INTEGER PRIMARY KEY NOT NULL, data BLOB NOT NULL);\n"
);

/// The summaries table of version 4.
macro_rules! summaries_table_sql {
    () => {
        "CREATE TABLE column_summaries (
    x INTEGER NOT NULL,
    z INTEGER NOT NULL,
    hash INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (x, z)
);
"
    };
}

/// The tables of a version-4 generated streaming world file.
const SUMMARY_SCHEMA_SQL: &str = concat!(streaming_tables_sql!(), summaries_table_sql!());

/// The tables of a version-4 heightmap streaming world file.
const SUMMARY_HEIGHTMAP_SCHEMA_SQL: &str = concat!(
    streaming_tables_sql!(),
    "CREATE TABLE heightmap_png (part INTEGER PRIMARY KEY NOT NULL, data BLOB NOT NULL);\n",
    summaries_table_sql!()
);

/// The exact schema of a version-4 generated streaming world file.
const SUMMARY_SCHEMA: FileSchema = FileSchema {
    sql: SUMMARY_SCHEMA_SQL,
    tables: &["meta", "columns", "pending_columns", "column_summaries"],
};

/// The exact schema of a version-4 heightmap streaming world file.
const SUMMARY_HEIGHTMAP_SCHEMA: FileSchema = FileSchema {
    sql: SUMMARY_HEIGHTMAP_SCHEMA_SQL,
    tables: &[
        "meta",
        "columns",
        "pending_columns",
        HEIGHTMAP_TABLE,
        "column_summaries",
    ],
};

/// The exact schema of a version-2 streaming world file.
const STREAMING_SCHEMA: FileSchema = FileSchema {
    sql: STREAMING_SCHEMA_SQL,
    tables: &["meta", "columns", "pending_columns"],
};

/// The exact schema of a version-3 streaming world file.
const HEIGHTMAP_SCHEMA: FileSchema = FileSchema {
    sql: HEIGHTMAP_SCHEMA_SQL,
    tables: &["meta", "columns", "pending_columns", HEIGHTMAP_TABLE],
};

/// The schemas a streaming file may have, in the order they are tried (the
/// first error is the one reported): version 2, version 3, version 4
/// generated and heightmap, and a world file (to name it).
const OPEN_SCHEMAS: [&FileSchema; 5] = [
    &STREAMING_SCHEMA,
    &HEIGHTMAP_SCHEMA,
    &SUMMARY_SCHEMA,
    &SUMMARY_HEIGHTMAP_SCHEMA,
    &WORLD_SCHEMA,
];

/// The format version and origin kind (true: heightmap) of the streaming
/// schema at `index` of [`OPEN_SCHEMAS`]; `None` for a world file.
fn schema_kind(index: usize) -> Option<(u32, bool)> {
    match index {
        0 => Some((GENERATED_FORMAT_VERSION, false)),
        1 => Some((HEIGHTMAP_FORMAT_VERSION, true)),
        2 => Some((STREAMING_FORMAT_VERSION, false)),
        3 => Some((STREAMING_FORMAT_VERSION, true)),
        _ => None,
    }
}

/// Where a streaming world's unedited columns come from, as its file
/// records it.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamingOrigin {
    /// The generator with these settings (format 2, or 4).
    Generated(GeneratorSettings),
    /// A heightmap import (format 3, or 4); the PNG is stored in the file.
    Heightmap(StoredHeightmap),
    /// A generator recipe (format 4 with a `recipe` meta row): the seed and
    /// size, and the recipe's JSON text, cooked again when the file opens.
    Recipe {
        /// Seed and size.
        settings: GeneratorSettings,
        /// The recipe, as JSON text (valid: checked when the file opens).
        recipe_json: String,
    },
}

/// Why a streaming world file could not be created, opened, saved or copied.
/// Every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum StreamingFileError {
    /// The file could not be opened as a Strata file at all: it does not
    /// exist, is not an SQLite database, is truncated, belongs to another
    /// application, has an unexpected schema, has a bad `meta` table, or a
    /// leftover journal could not be handled; or an I/O error.
    #[error(transparent)]
    File(#[from] WorldFileError),
    /// An edited column queued for the store before the save could not be
    /// written (its cells stay in memory; nothing was saved).
    #[error("an edited chunk column could not be stored: {0}")]
    Spill(crate::terrain::streaming::column_source::SourceError),
    /// The file is a world file (format 1, every chunk stored), not a
    /// streaming world file: open it with
    /// [`world_file`](crate::io::world::world_file) instead.
    #[error("{path} is a Strata world file (format 1), not a streaming world file")]
    NotStreaming {
        /// The file.
        path: PathBuf,
    },
    /// The file has the schema of a streaming world file but another format
    /// version (a newer Strata wrote it, or it is damaged).
    #[error(
        "streaming world file {path}: format {found} is not supported (this Strata reads \
         format {supported})"
    )]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The file's `format_version`.
        found: u64,
        /// [`STREAMING_FORMAT_VERSION`].
        supported: u32,
    },
    /// A metadata entry is missing or malformed.
    #[error("streaming world file {path}: bad metadata `{key}`: {message}")]
    BadMeta {
        /// The file.
        path: PathBuf,
        /// The `meta` key.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// [`StreamingWorldFile::create`] was given settings that are not valid
    /// for a streaming world; nothing was written.
    #[error("cannot create streaming world file {path}: {source}")]
    InvalidSettings {
        /// The file.
        path: PathBuf,
        /// What is wrong with the settings.
        source: GenerateError,
    },
    /// A heightmap world's PNG (the original, while creating the file, or
    /// the stored copy, while opening it) could not be read or decoded, or
    /// its import is invalid; nothing was written.
    #[error("streaming world file {path}: heightmap: {source}")]
    Heightmap {
        /// The world file.
        path: PathBuf,
        /// What the import reported (names the PNG or the world file).
        source: Box<ImportError>,
    },
    /// The PNG stored in a heightmap world file is damaged (a part missing
    /// or too long, the wrong length, failing its hash).
    #[error("streaming world file {path}: the stored heightmap is damaged: {message}")]
    CorruptHeightmap {
        /// The world file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A column given to [`StreamingWorldFile::save`] cannot be stored (a
    /// chunk of another column or off the lattice, a chunk given twice, more
    /// than [`MAX_COLUMN_CHUNKS`] chunks); nothing was written.
    #[error(
        "cannot save streaming world file {path}: column ({}, {}): {message} (nothing was written)",
        .column.x,
        .column.z
    )]
    BadColumn {
        /// The file.
        path: PathBuf,
        /// The column.
        column: ColumnCoord,
        /// What is wrong.
        message: String,
    },
    /// [`StreamingWorldFile::save_as`] was asked to copy the file onto itself.
    #[error("cannot save streaming world file {path} as itself")]
    SameFile {
        /// The file.
        path: PathBuf,
    },
    /// Opening failed after SQLite rolled a leftover journal back into the
    /// file; untouched copies of the file and the journal as they were are
    /// kept.
    #[error("{source} (note: {recovery})")]
    AfterJournalRollback {
        /// What was rolled back and where the copies are.
        recovery: Box<JournalRecovery>,
        /// The error.
        source: Box<StreamingFileError>,
    },
}

/// What [`StreamingWorldFile::save`] wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct SaveReport {
    /// Resident edited columns written (the ones given).
    pub columns_written: usize,
    /// Spilled columns moved from `pending_columns` into `columns`.
    pub pending_saved: usize,
    /// The `modified_unix` written (Unix seconds).
    pub modified_unix: u64,
    /// Size of the file after the save, bytes.
    pub file_bytes: u64,
    /// Wall time of the save, ms.
    pub elapsed_ms: f64,
}

/// The two tables that hold columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Table {
    /// `columns`: saved.
    Saved,
    /// `pending_columns`: spilled since the last save.
    Pending,
}

impl Table {
    fn name(self) -> &'static str {
        match self {
            Table::Saved => "columns",
            Table::Pending => "pending_columns",
        }
    }
}

/// One column ready to be written.
struct EncodedColumn {
    column: ColumnCoord,
    hash: u64,
    data: Vec<u8>,
    /// Its summary's row data (format 4 only).
    summary: Option<Vec<u8>>,
}

/// The part of the file handle that changes, behind one lock.
#[derive(Debug)]
struct Inner {
    conn: Connection,
    camera: Option<[f64; 5]>,
    modified_unix: u64,
}

/// An open streaming world file: the generator settings, and the edited
/// columns as an [`EditStore`] for [`Residency`](crate::terrain::streaming::residency::Residency).
///
/// Thread-safe (the connection is behind a mutex): loads come from worker
/// threads, spills and saves from the main thread; share it in an `Arc`.
/// While it is open nothing else should write the same file.
#[derive(Debug)]
pub struct StreamingWorldFile {
    path: PathBuf,
    format_version: u32,
    origin: StreamingOrigin,
    created_unix: u64,
    journal_recovery: Option<JournalRecovery>,
    inner: Mutex<Inner>,
    rows_read: AtomicU64,
}

/// Seconds since the Unix epoch (0 before it).
fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The size of `path`, 0 when it cannot be read.
fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// True when the column lies on the chunk lattice.
fn column_on_lattice(column: ColumnCoord) -> bool {
    ChunkCoord::new(column.x, 0, column.z).is_on_lattice()
}

/// The stored hash of a column: XXH3-64 over x, z, then each chunk's
/// `(y, content hash)` (see the module docs).
fn column_hash(column: ColumnCoord, chunks: impl IntoIterator<Item = (i32, u64)>) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&column.x.to_le_bytes());
    h.update(&column.z.to_le_bytes());
    for (y, hash) in chunks {
        h.update(&y.to_le_bytes());
        h.update(&hash.to_le_bytes());
    }
    h.digest()
}

/// Encodes `chunks` as the `data` of `column` (see the module docs);
/// all-empty chunks are left out. `Err` says why the column cannot be
/// stored.
fn encode_column(
    column: ColumnCoord,
    chunks: &[(ChunkCoord, ChunkCells)],
) -> Result<EncodedColumn, String> {
    if !column_on_lattice(column) {
        return Err("the column lies outside the cell lattice".to_string());
    }
    let mut kept: Vec<&(ChunkCoord, ChunkCells)> = Vec::with_capacity(chunks.len());
    for entry @ (coord, cells) in chunks {
        if ColumnCoord::of(*coord) != column {
            return Err(format!(
                "chunk ({}, {}, {}) is not in the column",
                coord.0.x, coord.0.y, coord.0.z
            ));
        }
        if !coord.is_on_lattice() {
            return Err(format!(
                "chunk y {} lies outside the cell lattice",
                coord.0.y
            ));
        }
        if !cells.is_all_empty() {
            kept.push(entry);
        }
    }
    kept.sort_by_key(|(c, _)| c.0.y);
    if let Some(w) = kept.windows(2).find(|w| w[0].0.0.y == w[1].0.0.y) {
        return Err(format!("chunk y {} is given twice", w[0].0.0.y));
    }
    if kept.len() > MAX_COLUMN_CHUNKS {
        return Err(format!(
            "{} non-empty chunks, more than the {MAX_COLUMN_CHUNKS} a stored column may hold",
            kept.len()
        ));
    }
    let mut data = Vec::with_capacity(4 + kept.len() * 64);
    // At most MAX_COLUMN_CHUNKS (checked above), so it fits in u32.
    data.extend_from_slice(&(kept.len() as u32).to_le_bytes());
    let mut hashes = Vec::with_capacity(kept.len());
    for (coord, cells) in kept {
        let blob = encode_cells(cells).map_err(|e| format!("cannot encode a chunk: {e}"))?;
        data.extend_from_slice(&coord.0.y.to_le_bytes());
        // A chunk blob is at most MAX_BLOB_BYTES (one chunk), far below u32::MAX.
        data.extend_from_slice(&(blob.len() as u32).to_le_bytes());
        data.extend_from_slice(&blob);
        hashes.push((coord.0.y, cells.content_hash()));
    }
    Ok(EncodedColumn {
        column,
        hash: column_hash(column, hashes),
        data,
        summary: None,
    })
}

/// Reads `N` bytes at `*at`, moving `*at` past them.
fn take<const N: usize>(data: &[u8], at: &mut usize) -> Option<[u8; N]> {
    let end = at.checked_add(N)?;
    let bytes: [u8; N] = data.get(*at..end)?.try_into().ok()?;
    *at = end;
    Some(bytes)
}

/// Decodes the `data` of `column` and checks it against `stored_hash`; the
/// chunks come back sorted by y, all-empty ones left out. Allocates at most
/// [`MAX_COLUMN_CHUNKS`] chunks. `Err` says what is damaged.
fn decode_column(
    column: ColumnCoord,
    stored_hash: u64,
    data: &[u8],
) -> Result<ColumnChunks, String> {
    let mut at = 0usize;
    let count = u32::from_le_bytes(
        take::<4>(data, &mut at).ok_or_else(|| format!("{} bytes of data", data.len()))?,
    ) as usize;
    if count > MAX_COLUMN_CHUNKS {
        return Err(format!(
            "it claims {count} chunks, more than the {MAX_COLUMN_CHUNKS} a column may hold"
        ));
    }
    let mut chunks = Vec::with_capacity(count);
    let mut hashes = Vec::with_capacity(count);
    let mut previous_y: Option<i32> = None;
    for i in 0..count {
        let header = |what: &str| format!("chunk {i} of {count}: the data ends in its {what}");
        let y = i32::from_le_bytes(take::<4>(data, &mut at).ok_or_else(|| header("y"))?);
        let len =
            u32::from_le_bytes(take::<4>(data, &mut at).ok_or_else(|| header("length"))?) as usize;
        if previous_y.is_some_and(|p| y <= p) {
            return Err(format!(
                "chunk y {y} does not follow chunk y {previous_y:?} upwards"
            ));
        }
        previous_y = Some(y);
        let coord = ChunkCoord::new(column.x, y, column.z);
        if !coord.is_on_lattice() {
            return Err(format!("chunk y {y} lies outside the cell lattice"));
        }
        if len > MAX_BLOB_BYTES {
            return Err(format!(
                "chunk y {y} has {len} bytes of data, longer than any chunk encoding"
            ));
        }
        let blob = at
            .checked_add(len)
            .and_then(|end| data.get(at..end))
            .ok_or_else(|| format!("chunk y {y}: the data ends inside its {len} bytes"))?;
        at += len;
        let cells = decode_blob(blob).map_err(|f| format!("chunk y {y}: {}", f.describe()))?;
        hashes.push((y, cells.content_hash()));
        if !cells.is_all_empty() {
            chunks.push((coord, cells));
        }
    }
    if at != data.len() {
        return Err(format!("{} bytes after the last chunk", data.len() - at));
    }
    let actual = column_hash(column, hashes);
    if actual != stored_hash {
        return Err(format!(
            "content hash {actual:016x} does not match the stored {stored_hash:016x}"
        ));
    }
    Ok(chunks)
}

/// A row as read: the stored hash and the data (`Err(length)` when it is
/// longer than [`MAX_COLUMN_BYTES`] and was not read).
type ColumnRow = (u64, Result<Vec<u8>, i64>);

/// Why reading a row failed.
enum RowFault {
    /// SQLite failed.
    Sqlite(rusqlite::Error),
    /// The row is not shaped as a column row.
    Damaged(String),
}

/// Reads the row of `column` in `table`, if any. Reads no data longer than
/// [`MAX_COLUMN_BYTES`].
fn read_row(
    conn: &Connection,
    table: Table,
    column: ColumnCoord,
) -> Result<Option<ColumnRow>, RowFault> {
    let sql = format!(
        "SELECT hash, typeof(data), length(data), \
         CASE WHEN typeof(data) = 'blob' AND length(data) <= ?3 THEN data END \
         FROM {} WHERE x = ?1 AND z = ?2",
        table.name()
    );
    let mut stmt = conn.prepare(&sql).map_err(RowFault::Sqlite)?;
    let mut rows = stmt
        .query(params![column.x, column.z, MAX_COLUMN_BYTES as i64])
        .map_err(RowFault::Sqlite)?;
    let Some(row) = rows.next().map_err(RowFault::Sqlite)? else {
        return Ok(None);
    };
    let hash = row
        .get::<_, i64>(0)
        .map_err(|e| RowFault::Damaged(format!("its hash is not an integer: {e}")))?;
    let kind: String = row.get(1).map_err(RowFault::Sqlite)?;
    if kind != "blob" {
        return Err(RowFault::Damaged(format!("its data is {kind}, not a blob")));
    }
    let len: i64 = row.get(2).map_err(RowFault::Sqlite)?;
    let data = match row.get_ref(3).map_err(RowFault::Sqlite)? {
        rusqlite::types::ValueRef::Blob(b) => Ok(b.to_vec()),
        _ => Err(len),
    };
    // The hash column holds the u64 hash as the i64 with the same bits.
    Ok(Some((hash as u64, data)))
}

/// Inserts or replaces `columns` in `table`, and their summaries (those
/// that have one) in `column_summaries`.
fn write_columns(
    tx: &rusqlite::Transaction<'_>,
    table: Table,
    columns: &[EncodedColumn],
) -> rusqlite::Result<()> {
    let mut put = tx.prepare(&format!(
        "INSERT OR REPLACE INTO {} (x, z, hash, data) VALUES (?1, ?2, ?3, ?4)",
        table.name()
    ))?;
    for c in columns {
        // The u64 hash is stored as the i64 with the same bits.
        put.execute(params![c.column.x, c.column.z, c.hash as i64, c.data])?;
    }
    if columns.iter().any(|c| c.summary.is_some()) {
        let mut put = tx.prepare(
            "INSERT OR REPLACE INTO column_summaries (x, z, hash, data) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for c in columns {
            if let Some(summary) = &c.summary {
                put.execute(params![c.column.x, c.column.z, c.hash as i64, summary])?;
            }
        }
    }
    Ok(())
}

/// Reads the stored summary of `column` if it was made from the column's
/// current copy (pending, else saved): `Ok(None)` when there is none or it
/// is stale, `Err` with a reason when it is damaged.
fn read_summary(conn: &Connection, column: ColumnCoord) -> Result<Option<ColumnSummary>, RowFault> {
    let mut stmt = conn
        .prepare(
            "SELECT CASE WHEN typeof(data) = 'blob' AND length(data) = ?3 THEN data END \
             FROM column_summaries WHERE x = ?1 AND z = ?2 AND hash = \
             COALESCE((SELECT hash FROM pending_columns WHERE x = ?1 AND z = ?2), \
                      (SELECT hash FROM columns WHERE x = ?1 AND z = ?2))",
        )
        .map_err(RowFault::Sqlite)?;
    let mut rows = stmt
        .query(params![column.x, column.z, SUMMARY_BYTES as i64])
        .map_err(RowFault::Sqlite)?;
    let Some(row) = rows.next().map_err(RowFault::Sqlite)? else {
        return Ok(None);
    };
    match row.get_ref(0).map_err(RowFault::Sqlite)? {
        rusqlite::types::ValueRef::Blob(b) => {
            decode_summary(b).map(Some).map_err(RowFault::Damaged)
        }
        _ => Err(RowFault::Damaged(format!(
            "its summary is not a blob of {SUMMARY_BYTES} bytes"
        ))),
    }
}

/// Inserts or replaces (or deletes, for `None`) meta rows.
fn put_meta(
    tx: &rusqlite::Transaction<'_>,
    rows: &[(&str, Option<String>)],
) -> rusqlite::Result<()> {
    let mut put = tx.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")?;
    let mut del = tx.prepare("DELETE FROM meta WHERE key = ?1")?;
    for (key, value) in rows {
        match value {
            Some(v) => put.execute(params![key, v])?,
            None => del.execute(params![key])?,
        };
    }
    Ok(())
}

/// The `writer` meta value of this build.
fn writer() -> String {
    format!("strata {}", env!("CARGO_PKG_VERSION"))
}

/// What a new streaming file is made from.
enum NewOrigin<'a> {
    /// Generator settings (a format-4 file).
    Generated(&'a GeneratorSettings),
    /// A recipe for these settings (a format-4 file with a `recipe` row).
    Recipe(&'a GeneratorSettings, &'a str),
    /// A heightmap import (a format-4 file): the PNG is copied in.
    Heightmap {
        /// The PNG to copy.
        png: &'a Path,
        /// The import settings.
        settings: &'a HeightmapSettings,
        /// The sidecar's text.
        sidecar_text: Option<&'a str>,
    },
}

/// Writes a complete new streaming file at `tmp` (which must not exist),
/// for [`crate::io::write_atomically`]; errors name `target`.
fn write_new_file(
    tmp: &Path,
    target: &Path,
    origin: &NewOrigin<'_>,
    now: u64,
) -> Result<(), StreamingFileError> {
    let sql = |e| StreamingFileError::File(sqlite_err(target, e));
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut conn = Connection::open_with_flags(tmp, flags).map_err(sql)?;
    // A fresh temporary file needs no journal: the rename is the commit.
    configure_new_file(&conn).map_err(sql)?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Exclusive)
        .map_err(sql)?;
    let origin_meta: Vec<(&str, Option<String>)> = match origin {
        NewOrigin::Generated(settings) => {
            tx.execute_batch(SUMMARY_SCHEMA_SQL).map_err(sql)?;
            vec![
                ("format_version", Some(STREAMING_FORMAT_VERSION.to_string())),
                ("generator", Some(generator_text(settings))),
            ]
        }
        NewOrigin::Recipe(settings, recipe_json) => {
            tx.execute_batch(SUMMARY_SCHEMA_SQL).map_err(sql)?;
            vec![
                ("format_version", Some(STREAMING_FORMAT_VERSION.to_string())),
                ("generator", Some(generator_text(settings))),
                ("recipe", Some((*recipe_json).to_string())),
            ]
        }
        NewOrigin::Heightmap {
            png,
            settings,
            sidecar_text,
        } => {
            tx.execute_batch(SUMMARY_HEIGHTMAP_SCHEMA_SQL)
                .map_err(sql)?;
            let (png_bytes, png_hash) = copy_png(&tx, png).map_err(|e| match e {
                CopyError::Read(source) => StreamingFileError::Heightmap {
                    path: target.to_path_buf(),
                    source: Box::new(source),
                },
                CopyError::Sql(e) => sql(e),
            })?;
            let stored = StoredHeightmap {
                settings: (*settings).clone(),
                sidecar_text: sidecar_text.map(str::to_string),
                png_bytes,
                png_hash,
            };
            vec![
                ("format_version", Some(STREAMING_FORMAT_VERSION.to_string())),
                ("heightmap", Some(heightmap_meta_text(&stored))),
                ("heightmap_sidecar", stored.sidecar_text),
            ]
        }
    };
    put_meta(&tx, &origin_meta).map_err(sql)?;
    put_meta(
        &tx,
        &[
            ("kind", Some(STREAMING_KIND.to_string())),
            ("created_unix", Some(now.to_string())),
            ("modified_unix", Some(now.to_string())),
            ("writer", Some(writer())),
        ],
    )
    .map_err(sql)?;
    tx.commit().map_err(sql)?;
    // synchronous = OFF skipped SQLite's fsync: `write_atomically` fsyncs
    // the file before the rename makes it the world.
    conn.close().map_err(|(_, e)| sql(e))
}

/// Removes a journal beside `path` after a new file was renamed over it:
/// it belonged to the replaced file, and rolled into the new one it would
/// corrupt it.
fn remove_replaced_journal(path: &Path) -> Result<(), StreamingFileError> {
    let journal = with_suffix(path, "-journal");
    match std::fs::remove_file(&journal) {
        Ok(()) => {
            log::info!(
                "removed {}, the journal of the replaced file",
                journal.display()
            );
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_err(&journal, e).into()),
    }
}

/// The metadata of a streaming file, as read.
struct StreamingMeta {
    origin: StreamingOrigin,
    camera: Option<[f64; 5]>,
    created_unix: u64,
    modified_unix: u64,
}

/// Reads and validates the `meta` table of a streaming file whose schema
/// is that of `schema_version`: the format version first (it must be that
/// one), then the kind, the origin (generator settings or heightmap
/// import), the times and the camera. Unknown keys are ignored.
fn read_streaming_meta(
    conn: &Connection,
    path: &Path,
    (schema_version, heightmap): (u32, bool),
) -> Result<StreamingMeta, StreamingFileError> {
    let map = read_meta_map(conn, path)?;
    let bad = |key: &str, message: String| StreamingFileError::BadMeta {
        path: path.to_path_buf(),
        key: key.to_string(),
        message,
    };
    let get = |key: &str| meta_text(&map, key).map_err(|f| bad(&f.key, f.message));
    let number = |key: &str| meta_number(&map, key).map_err(|f| bad(&f.key, f.message));
    let found = number("format_version")?;
    let known = [
        GENERATED_FORMAT_VERSION,
        HEIGHTMAP_FORMAT_VERSION,
        STREAMING_FORMAT_VERSION,
    ];
    if !known.iter().any(|&v| u64::from(v) == found) {
        return Err(StreamingFileError::UnsupportedVersion {
            path: path.to_path_buf(),
            found,
            supported: STREAMING_FORMAT_VERSION,
        });
    }
    if found != schema_version as u64 {
        return Err(bad(
            "format_version",
            format!("format {found} but the tables of format {schema_version}"),
        ));
    }
    let kind = get("kind")?;
    if kind != STREAMING_KIND {
        return Err(bad("kind", format!("{kind:?} is not {STREAMING_KIND:?}")));
    }
    let origin = if !heightmap {
        let settings = parse_generator(get("generator")?).map_err(|m| bad("generator", m))?;
        settings
            .validate_streaming()
            .map_err(|e| bad("generator", e.to_string()))?;
        match map.get("recipe") {
            Some(text) => {
                crate::terrain::recipe::stages::Recipe::from_json(text)
                    .map_err(|e| bad("recipe", e.to_string()))?;
                StreamingOrigin::Recipe {
                    settings,
                    recipe_json: text.clone(),
                }
            }
            None => StreamingOrigin::Generated(settings),
        }
    } else {
        let sidecar = map.get("heightmap_sidecar").cloned();
        StreamingOrigin::Heightmap(
            parse_heightmap_meta(get("heightmap")?, sidecar).map_err(|m| bad("heightmap", m))?,
        )
    };
    let created_unix = number("created_unix")?;
    let modified_unix = number("modified_unix")?;
    let camera = match map.get("camera") {
        None => None,
        Some(text) => Some(parse_camera(text).map_err(|m| bad("camera", m))?),
    };
    Ok(StreamingMeta {
        origin,
        camera,
        created_unix,
        modified_unix,
    })
}

/// `result`, with an error wrapped in
/// [`StreamingFileError::AfterJournalRollback`] when `recovery` says a
/// journal was rolled back into the file first.
fn noting_streaming<T>(
    recovery: &Option<JournalRecovery>,
    result: Result<T, StreamingFileError>,
) -> Result<T, StreamingFileError> {
    match (result, recovery) {
        (Err(StreamingFileError::File(e)), _) => {
            noting(recovery, Err(e)).map_err(StreamingFileError::File)
        }
        (Err(e), Some(r)) if !matches!(e, StreamingFileError::AfterJournalRollback { .. }) => {
            Err(StreamingFileError::AfterJournalRollback {
                recovery: Box::new(r.clone()),
                source: Box::new(e),
            })
        }
        (result, _) => result,
    }
}

/// [`GeneratorSettings::validate_streaming`], its error naming `path`.
fn check_streaming_settings(
    path: &Path,
    settings: &GeneratorSettings,
) -> Result<(), StreamingFileError> {
    settings
        .validate_streaming()
        .map_err(|source| StreamingFileError::InvalidSettings {
            path: path.to_path_buf(),
            source,
        })
}

impl StreamingWorldFile {
    /// Creates a new streaming world file at `path` for `settings`, with no
    /// edited column, and opens it. The file is written to a sibling
    /// temporary file and renamed over `path` (an existing file there is
    /// replaced only once the new one is complete); missing parent
    /// directories are created.
    ///
    /// # Errors
    /// [`StreamingFileError::InvalidSettings`] for settings that
    /// [`GeneratorSettings::validate_streaming`] refuses (nothing written);
    /// [`StreamingFileError::File`] when the file cannot be written or
    /// reopened (`path` is then unchanged, or holds the new file).
    pub fn create(
        path: &Path,
        settings: &GeneratorSettings,
    ) -> Result<StreamingWorldFile, StreamingFileError> {
        check_streaming_settings(path, settings)?;
        Self::create_from(path, &NewOrigin::Generated(settings))
    }

    /// Creates a new streaming world file at `path` for `recipe_json` (a
    /// recipe's JSON text, checked here) with `settings`, like
    /// [`StreamingWorldFile::create`]; opening it cooks the recipe again.
    ///
    /// # Errors
    /// [`StreamingFileError::InvalidSettings`] for settings that
    /// [`GeneratorSettings::validate_streaming`] refuses;
    /// [`StreamingFileError::BadMeta`] for text that is not a valid recipe
    /// (nothing written in either case); [`StreamingFileError::File`] as
    /// for [`StreamingWorldFile::create`].
    pub fn create_recipe(
        path: &Path,
        settings: &GeneratorSettings,
        recipe_json: &str,
    ) -> Result<StreamingWorldFile, StreamingFileError> {
        check_streaming_settings(path, settings)?;
        crate::terrain::recipe::stages::Recipe::from_json(recipe_json).map_err(|e| {
            StreamingFileError::BadMeta {
                path: path.to_path_buf(),
                key: "recipe".to_string(),
                message: e.to_string(),
            }
        })?;
        Self::create_from(path, &NewOrigin::Recipe(settings, recipe_json))
    }

    /// Creates a new heightmap world file (format 4) at `path` for the PNG
    /// at `png` imported with `settings` (and the sidecar text
    /// `sidecar_text`, as read beside the PNG), with no edited column, and
    /// opens it. The PNG's bytes are copied in (1 MiB at a time), so the
    /// file rebuilds the world without the original; decode the stored
    /// copy with [`StreamingWorldFile::heightmap_terrain`]. Written as
    /// [`StreamingWorldFile::create`] writes.
    ///
    /// # Errors
    /// [`StreamingFileError::Heightmap`] for invalid settings or a PNG that
    /// cannot be read (nothing written); [`StreamingFileError::File`] as
    /// for [`StreamingWorldFile::create`].
    pub fn create_heightmap(
        path: &Path,
        png: &Path,
        settings: &HeightmapSettings,
        sidecar_text: Option<&str>,
    ) -> Result<StreamingWorldFile, StreamingFileError> {
        crate::terrain::generation::heightmap::check_settings(settings).map_err(|source| {
            StreamingFileError::Heightmap {
                path: path.to_path_buf(),
                source: Box::new(source),
            }
        })?;
        Self::create_from(
            path,
            &NewOrigin::Heightmap {
                png,
                settings,
                sidecar_text,
            },
        )
    }

    /// The body of the `create` functions.
    fn create_from(
        path: &Path,
        origin: &NewOrigin<'_>,
    ) -> Result<StreamingWorldFile, StreamingFileError> {
        let now = now_unix();
        crate::io::write_atomically(
            path,
            |tmp| write_new_file(tmp, path, origin, now),
            |e| StreamingFileError::File(io_err(path, e)),
        )?;
        remove_replaced_journal(path)?;
        StreamingWorldFile::open(path)
    }

    /// The terrain of a heightmap world (`None` for a generated one): the
    /// stored PNG read back, checked and decoded with the stored sidecar and
    /// settings, ready to build any column. Seconds for a 16 384² map;
    /// memory is the PNG's bytes while it decodes, then the samples.
    ///
    /// # Errors
    /// [`StreamingFileError::CorruptHeightmap`] for a damaged stored PNG;
    /// [`StreamingFileError::Heightmap`] when it cannot be decoded or its
    /// terrain is invalid; [`StreamingFileError::File`] when SQLite fails.
    pub fn heightmap_terrain(&self) -> Result<Option<HeightmapTerrain>, StreamingFileError> {
        let StreamingOrigin::Heightmap(stored) = &self.origin else {
            return Ok(None);
        };
        let png = {
            let inner = self.lock();
            read_png(&inner.conn, stored).map_err(|e| match e {
                Ok(message) => StreamingFileError::CorruptHeightmap {
                    path: self.path.clone(),
                    message,
                },
                Err(e) => StreamingFileError::File(sqlite_err(&self.path, e)),
            })?
        };
        let import = |source| StreamingFileError::Heightmap {
            path: self.path.clone(),
            source: Box::new(source),
        };
        let map =
            decode_heightmap(&png, stored.sidecar_text.as_deref(), &self.path).map_err(import)?;
        drop(png);
        HeightmapTerrain::streaming(map, &stored.settings)
            .map(Some)
            .map_err(import)
    }

    /// Opens the streaming world file at `path`. Reads only the metadata
    /// (no column row), so it takes the same time whatever the file holds;
    /// see [`StreamingWorldFile::pending_count`] for unsaved work a crash
    /// left.
    ///
    /// # Errors
    /// [`StreamingFileError::NotStreaming`] for a world file (format 1);
    /// [`StreamingFileError::UnsupportedVersion`] for another format version
    /// (checked before the other metadata); [`StreamingFileError::BadMeta`]
    /// for missing or malformed metadata (or settings that are not valid
    /// for a streaming world); [`StreamingFileError::File`] for every
    /// file-level failure ([`WorldFileError::NotFound`],
    /// [`WorldFileError::NotSqlite`], [`WorldFileError::Truncated`],
    /// [`WorldFileError::NotAWorld`], [`WorldFileError::UnexpectedSchema`],
    /// [`WorldFileError::MissingTable`], …); errors after a leftover journal
    /// was rolled back carry the recovery note.
    pub fn open(path: &Path) -> Result<StreamingWorldFile, StreamingFileError> {
        let (conn, which, recovery) = open_existing_as(path, &OPEN_SCHEMAS)?;
        noting_streaming(&recovery, Self::from_connection(path, conn, which)).map(|mut file| {
            file.journal_recovery = recovery;
            file
        })
    }

    /// The body of [`StreamingWorldFile::open`] once the schema is known.
    fn from_connection(
        path: &Path,
        conn: Connection,
        schema: usize,
    ) -> Result<StreamingWorldFile, StreamingFileError> {
        let Some(kind) = schema_kind(schema) else {
            return Err(StreamingFileError::NotStreaming {
                path: path.to_path_buf(),
            });
        };
        let sql = |e| StreamingFileError::File(sqlite_err(path, e));
        // Column rows are longer than the hardened default allows.
        conn.set_limit(
            rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH,
            MAX_VALUE_BYTES as i32,
        )
        .map_err(sql)?;
        // Spills must be on disk when `store_edited` returns.
        conn.execute_batch("PRAGMA journal_mode = DELETE; PRAGMA synchronous = FULL;")
            .map_err(sql)?;
        let meta = read_streaming_meta(&conn, path, kind)?;
        Ok(StreamingWorldFile {
            path: path.to_path_buf(),
            format_version: kind.0,
            origin: meta.origin,
            created_unix: meta.created_unix,
            journal_recovery: None,
            inner: Mutex::new(Inner {
                conn,
                camera: meta.camera,
                modified_unix: meta.modified_unix,
            }),
            rows_read: AtomicU64::new(0),
        })
    }

    /// True when `path` is a streaming world file: a Strata file whose
    /// schema is a streaming file's (its metadata is not read, so a file of
    /// another version still answers true and
    /// [`StreamingWorldFile::open`] names the problem). False for a world
    /// file (format 1) and for anything that cannot be opened. Lets a
    /// `--world x.strata` argument choose between the two loaders.
    ///
    /// Like every open, it rolls back a leftover journal after keeping
    /// copies (logged; see [`JournalRecovery`]).
    pub fn is_streaming_file(path: &Path) -> bool {
        matches!(open_existing_as(path, &OPEN_SCHEMAS), Ok((_, i, _)) if schema_kind(i).is_some())
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the world's unedited columns come from.
    pub fn origin(&self) -> &StreamingOrigin {
        &self.origin
    }

    /// The seed, size and recipe text of a recipe world, if it is one.
    pub fn recipe(&self) -> Option<(&GeneratorSettings, &str)> {
        match &self.origin {
            StreamingOrigin::Recipe {
                settings,
                recipe_json,
            } => Some((settings, recipe_json)),
            _ => None,
        }
    }

    /// The generator settings the world's unedited columns come from;
    /// `None` for a heightmap or a recipe world.
    pub fn generator(&self) -> Option<&GeneratorSettings> {
        match &self.origin {
            StreamingOrigin::Generated(settings) => Some(settings),
            StreamingOrigin::Heightmap(_) | StreamingOrigin::Recipe { .. } => None,
        }
    }

    /// The file's format version: 2 (generated) or 3 (heightmap) as older
    /// builds wrote them, 4 ([`STREAMING_FORMAT_VERSION`], with column
    /// summaries) for either origin.
    pub fn format_version(&self) -> u32 {
        self.format_version
    }

    /// True when the file stores column summaries (format 4).
    fn has_summaries(&self) -> bool {
        self.format_version >= STREAMING_FORMAT_VERSION
    }

    /// The editor camera `[x, y, z, yaw_deg, pitch_deg]` (studs, degrees):
    /// as stored, or as last set with [`StreamingWorldFile::set_camera`].
    pub fn camera(&self) -> Option<[f64; 5]> {
        self.lock().camera
    }

    /// Sets the camera the next [`StreamingWorldFile::save`] writes (`None`
    /// removes it); nothing is written now.
    pub fn set_camera(&self, camera: Option<[f64; 5]>) {
        self.lock().camera = camera;
    }

    /// When the file was created (Unix seconds).
    pub fn created_unix(&self) -> u64 {
        self.created_unix
    }

    /// When the file was last saved (Unix seconds).
    pub fn modified_unix(&self) -> u64 {
        self.lock().modified_unix
    }

    /// A leftover journal that opening the file rolled back into it, and
    /// where the untouched copies were kept: a notice for the user.
    pub fn journal_recovery(&self) -> Option<&JournalRecovery> {
        self.journal_recovery.as_ref()
    }

    /// Column rows this handle has read (by [`EditStore::load_edited`]);
    /// opening reads none.
    pub fn column_rows_read(&self) -> u64 {
        self.rows_read.load(Ordering::Relaxed)
    }

    /// Columns in `pending_columns`: spilled since the last save. More than
    /// 0 right after opening means a session ended without saving (a crash)
    /// and left work to recover; the loads return it, a save keeps it,
    /// [`StreamingWorldFile::discard_pending`] drops it. Counts rows without
    /// reading their data.
    ///
    /// # Errors
    /// [`StreamingFileError::File`] when SQLite fails.
    pub fn pending_count(&self) -> Result<usize, StreamingFileError> {
        self.count(Table::Pending)
    }

    /// Columns in `columns`: saved edited columns (counted without reading
    /// their data).
    ///
    /// # Errors
    /// [`StreamingFileError::File`] when SQLite fails.
    pub fn saved_count(&self) -> Result<usize, StreamingFileError> {
        self.count(Table::Saved)
    }

    fn count(&self, table: Table) -> Result<usize, StreamingFileError> {
        let inner = self.lock();
        let n: i64 = inner
            .conn
            .query_row(&format!("SELECT count(*) FROM {}", table.name()), [], |r| {
                r.get(0)
            })
            .map_err(|e| sqlite_err(&self.path, e))?;
        Ok(n.max(0) as usize)
    }

    /// Saves in one transaction: writes `resident_edited` (every edited
    /// column still in memory, each with its whole content) into `columns`,
    /// moves every spilled column from `pending_columns` into `columns`
    /// (a given column wins over its spilled copy, being newer), clears
    /// `pending_columns`, and writes `modified_unix` and the camera.
    /// Incremental: rows of other columns are untouched.
    ///
    /// # Errors
    /// [`StreamingFileError::BadColumn`] for a column that cannot be stored
    /// (checked before anything is written); [`StreamingFileError::File`]
    /// when SQLite fails. Either way the file keeps its previous saved state
    /// and its pending rows.
    pub fn save(
        &self,
        resident_edited: &[(ColumnCoord, ColumnChunks)],
    ) -> Result<SaveReport, StreamingFileError> {
        let start = Instant::now();
        let summaries = self.has_summaries();
        let encoded: Vec<EncodedColumn> = resident_edited
            .par_iter()
            .map(|(column, chunks)| {
                let mut encoded = encode_column(*column, chunks).map_err(|message| {
                    StreamingFileError::BadColumn {
                        path: self.path.clone(),
                        column: *column,
                        message,
                    }
                })?;
                if summaries {
                    encoded.summary = Some(encode_summary(&ColumnSummary::from_chunks(chunks)));
                }
                Ok::<_, StreamingFileError>(encoded)
            })
            .collect::<Result<_, _>>()?;
        let path = &self.path;
        let now = now_unix();
        let mut inner = self.lock();
        let camera = inner.camera;
        let tx = inner
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sqlite_err(path, e))?;
        let moved = (|| -> rusqlite::Result<usize> {
            let moved = tx.execute(
                "INSERT OR REPLACE INTO columns (x, z, hash, data) \
                 SELECT x, z, hash, data FROM pending_columns",
                [],
            )?;
            write_columns(&tx, Table::Saved, &encoded)?;
            tx.execute("DELETE FROM pending_columns", [])?;
            put_meta(
                &tx,
                &[
                    ("modified_unix", Some(now.to_string())),
                    ("writer", Some(writer())),
                    ("camera", camera.as_ref().map(camera_text)),
                ],
            )?;
            Ok(moved)
        })()
        .map_err(|e| sqlite_err(path, e))?;
        tx.commit().map_err(|e| sqlite_err(path, e))?;
        inner.modified_unix = now;
        drop(inner);
        Ok(SaveReport {
            columns_written: encoded.len(),
            pending_saved: moved,
            modified_unix: now,
            file_bytes: file_len(path),
            elapsed_ms: start.elapsed().as_secs_f64() * 1e3,
        })
    }

    /// Drops every spilled column not yet saved ("don't recover"): loads
    /// then return the saved copies (or none). Returns how many were
    /// dropped.
    ///
    /// # Errors
    /// [`StreamingFileError::File`] when SQLite fails; nothing is dropped.
    pub fn discard_pending(&self) -> Result<usize, StreamingFileError> {
        let inner = self.lock();
        inner
            .conn
            .execute("DELETE FROM pending_columns", [])
            .map_err(|e| sqlite_err(&self.path, e).into())
    }

    /// Copies the whole file, pending rows included, to `target` (SQLite's
    /// `VACUUM INTO`, so the copy is compact) and opens the copy: for an
    /// untitled world whose spills went to a recovery file. The copy is
    /// written to a sibling temporary file and renamed over `target`
    /// (missing parent directories are created); this file is unchanged.
    /// Call [`StreamingWorldFile::save`] on the returned file with the
    /// resident edited columns to complete a "Save as".
    ///
    /// # Errors
    /// [`StreamingFileError::SameFile`] when `target` is this file;
    /// [`StreamingFileError::File`] when the copy cannot be written or
    /// opened (a path that is not UTF-8 is an I/O error); `target` is then
    /// unchanged.
    pub fn save_as(&self, target: &Path) -> Result<StreamingWorldFile, StreamingFileError> {
        let same = match (
            std::fs::canonicalize(target),
            std::fs::canonicalize(&self.path),
        ) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        if same {
            return Err(StreamingFileError::SameFile {
                path: self.path.clone(),
            });
        }
        let io = |e| StreamingFileError::File(io_err(target, e));
        crate::io::write_atomically(
            target,
            |tmp| {
                let tmp_text = tmp.to_str().ok_or_else(|| {
                    io(std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        "the path is not valid UTF-8",
                    ))
                })?;
                let inner = self.lock();
                inner
                    .conn
                    .execute("VACUUM INTO ?1", [tmp_text])
                    .map(|_| ())
                    .map_err(|e| StreamingFileError::File(sqlite_err(target, e)))
            },
            io,
        )?;
        remove_replaced_journal(target)?;
        StreamingWorldFile::open(target)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A poisoned lock means a thread panicked while holding it; any
        // transaction it had open was rolled back when it unwound, so the
        // connection is still usable.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The row of `column` in `table`, as a load result.
    fn load_from(
        &self,
        inner: &Inner,
        table: Table,
        column: ColumnCoord,
    ) -> Result<Option<ColumnRow>, SourceError> {
        let row = read_row(&inner.conn, table, column).map_err(|fault| match fault {
            RowFault::Sqlite(e) => {
                let message = format!("{} ({}): {e}", self.path.display(), table.name());
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseCorrupt) {
                    SourceError::Corrupt { column, message }
                } else {
                    SourceError::Io { column, message }
                }
            }
            RowFault::Damaged(reason) => SourceError::Corrupt {
                column,
                message: format!("{} ({}): {reason}", self.path.display(), table.name()),
            },
        })?;
        if row.is_some() {
            self.rows_read.fetch_add(1, Ordering::Relaxed);
        }
        Ok(row)
    }
}

impl EditStore for StreamingWorldFile {
    /// The pending copy of `column` when there is one, else the saved copy,
    /// else `None`; verified against its stored hash. The row is read under
    /// the lock and decoded after it is released, so loads on several
    /// workers decode in parallel.
    ///
    /// # Errors
    /// [`SourceError::Corrupt`] for a damaged row (undecodable, too long,
    /// failing its hash) or a damaged database; [`SourceError::Io`] for
    /// other SQLite failures.
    fn load_edited(&self, column: ColumnCoord) -> Result<Option<ColumnChunks>, SourceError> {
        let (table, row) = {
            let inner = self.lock();
            match self.load_from(&inner, Table::Pending, column)? {
                Some(row) => (Table::Pending, row),
                None => match self.load_from(&inner, Table::Saved, column)? {
                    Some(row) => (Table::Saved, row),
                    None => return Ok(None),
                },
            }
        };
        let corrupt = |reason: String| SourceError::Corrupt {
            column,
            message: format!("{} ({}): {reason}", self.path.display(), table.name()),
        };
        match row {
            (_, Err(len)) => Err(corrupt(format!(
                "{len} bytes of data, longer than any column ({MAX_COLUMN_BYTES} bytes)"
            ))),
            (hash, Ok(data)) => decode_column(column, hash, &data)
                .map(Some)
                .map_err(corrupt),
        }
    }

    /// Writes `chunks` as the whole content of `column` into
    /// `pending_columns` in one committed transaction (on disk when it
    /// returns); all-empty chunks are left out.
    ///
    /// # Errors
    /// [`SourceError::Io`] when the column cannot be stored (a chunk of
    /// another column or off the lattice, a chunk given twice, more than
    /// [`MAX_COLUMN_CHUNKS`] chunks) or SQLite fails (disk full, read-only);
    /// nothing is written, and the caller keeps the column in memory.
    fn store_edited(
        &self,
        column: ColumnCoord,
        chunks: &[(ChunkCoord, ChunkCells)],
    ) -> Result<(), SourceError> {
        let io = |message: String| SourceError::Io {
            column,
            message: format!("cannot store it in {}: {message}", self.path.display()),
        };
        let mut encoded = encode_column(column, chunks).map_err(io)?;
        if self.has_summaries() {
            encoded.summary = Some(encode_summary(&ColumnSummary::from_chunks(chunks)));
        }
        let mut inner = self.lock();
        let tx = inner
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| io(e.to_string()))?;
        write_columns(&tx, Table::Pending, std::slice::from_ref(&encoded))
            .map_err(|e| io(e.to_string()))?;
        tx.commit().map_err(|e| io(e.to_string()))
    }

    /// Every column with a saved or a pending copy, sorted.
    ///
    /// # Errors
    /// [`SourceError::Store`] when SQLite fails, a row's coordinate is not
    /// a column on the lattice, or there are more than
    /// [`MAX_EDITED_COLUMNS`].
    /// The summary stored with `column`'s current copy (format 4), or
    /// `None`: a file of format 2 or 3, a column without a summary, or one
    /// whose summary was made from another copy (see the module docs).
    ///
    /// # Errors
    /// [`SourceError::Corrupt`] for a damaged summary or database;
    /// [`SourceError::Io`] for other SQLite failures.
    fn stored_summary(&self, column: ColumnCoord) -> Result<Option<ColumnSummary>, SourceError> {
        if !self.has_summaries() {
            return Ok(None);
        }
        let inner = self.lock();
        read_summary(&inner.conn, column).map_err(|fault| {
            let message = |m: String| format!("{} (column_summaries): {m}", self.path.display());
            match fault {
                RowFault::Sqlite(e)
                    if e.sqlite_error_code() != Some(rusqlite::ErrorCode::DatabaseCorrupt) =>
                {
                    SourceError::Io {
                        column,
                        message: message(e.to_string()),
                    }
                }
                RowFault::Sqlite(e) => SourceError::Corrupt {
                    column,
                    message: message(e.to_string()),
                },
                RowFault::Damaged(reason) => SourceError::Corrupt {
                    column,
                    message: message(reason),
                },
            }
        })
    }

    fn edited_columns(&self) -> Result<Vec<ColumnCoord>, SourceError> {
        let store = |message: String| SourceError::Store {
            message: format!("{}: {message}", self.path.display()),
        };
        let inner = self.lock();
        let mut stmt = inner
            .conn
            .prepare("SELECT x, z FROM columns UNION SELECT x, z FROM pending_columns LIMIT ?1")
            .map_err(|e| store(e.to_string()))?;
        let mut rows = stmt
            .query([MAX_EDITED_COLUMNS as i64 + 1])
            .map_err(|e| store(e.to_string()))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(|e| store(e.to_string()))? {
            let (x, z) = match (row.get::<_, i64>(0), row.get::<_, i64>(1)) {
                (Ok(x), Ok(z)) => (x, z),
                _ => return Err(store("a column coordinate is not an integer".to_string())),
            };
            let column = match (i32::try_from(x), i32::try_from(z)) {
                (Ok(x), Ok(z)) => Some(ColumnCoord::new(x, z)),
                _ => None,
            }
            .filter(|c| column_on_lattice(*c))
            .ok_or_else(|| store(format!("column ({x}, {z}) lies outside the cell lattice")))?;
            out.push(column);
        }
        if out.len() > MAX_EDITED_COLUMNS {
            return Err(store(format!(
                "more than {MAX_EDITED_COLUMNS} edited columns"
            )));
        }
        out.sort_unstable();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::cell::{Cell, Material};
    use crate::terrain::storage::coords::CHUNK_VOLUME_CELLS;

    fn dense(seed: usize) -> ChunkCells {
        let mut cells = vec![Cell::EMPTY; CHUNK_VOLUME_CELLS];
        for (i, c) in cells.iter_mut().enumerate() {
            if !(i + seed).is_multiple_of(3) {
                *c = Cell::new(Material((i / 1000 % 10) as u8), (i % 256) as u8);
            }
        }
        ChunkCells::from_dense(cells)
    }

    #[test]
    fn columns_round_trip_and_empty_chunks_are_left_out() {
        let column = ColumnCoord::new(-3, 7);
        let rock = ChunkCells::Uniform(Cell::full(Material::ROCK));
        let chunks = vec![
            (ChunkCoord::new(-3, 2, 7), dense(1)),
            (ChunkCoord::new(-3, -1, 7), rock.clone()),
            (ChunkCoord::new(-3, 5, 7), ChunkCells::Uniform(Cell::EMPTY)),
        ];
        let encoded = encode_column(column, &chunks).unwrap();
        let back = decode_column(column, encoded.hash, &encoded.data).unwrap();
        let ys: Vec<i32> = back.iter().map(|(c, _)| c.0.y).collect();
        assert_eq!(ys, vec![-1, 2]);
        assert_eq!(back[1].1.content_hash(), dense(1).content_hash());
        // The same data under another coordinate fails its hash.
        assert!(decode_column(ColumnCoord::new(-3, 8), encoded.hash, &encoded.data).is_err());
        // An empty column is 4 bytes and comes back empty.
        let empty = encode_column(column, &[]).unwrap();
        assert_eq!(empty.data, vec![0, 0, 0, 0]);
        assert!(
            decode_column(column, empty.hash, &empty.data)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn bad_columns_are_refused_before_writing() {
        let column = ColumnCoord::new(0, 0);
        let rock = ChunkCells::Uniform(Cell::full(Material::ROCK));
        let other = [(ChunkCoord::new(1, 0, 0), rock.clone())];
        assert!(encode_column(column, &other).is_err());
        let twice = [
            (ChunkCoord::new(0, 3, 0), rock.clone()),
            (ChunkCoord::new(0, 3, 0), rock.clone()),
        ];
        assert!(encode_column(column, &twice).is_err());
        let tall: Vec<_> = (0..=MAX_COLUMN_CHUNKS as i32)
            .map(|y| (ChunkCoord::new(0, y, 0), rock.clone()))
            .collect();
        assert!(encode_column(column, &tall).is_err());
        assert!(encode_column(column, &tall[1..]).is_ok());
    }

    #[test]
    fn truncations_and_bit_flips_of_column_data_never_panic() {
        let column = ColumnCoord::new(2, 2);
        let chunks = vec![
            (
                ChunkCoord::new(2, 0, 2),
                ChunkCells::Uniform(Cell::full(Material::DIRT)),
            ),
            (ChunkCoord::new(2, 1, 2), dense(2)),
        ];
        let e = encode_column(column, &chunks).unwrap();
        for n in 0..e.data.len() {
            assert!(decode_column(column, e.hash, &e.data[..n]).is_err(), "{n}");
        }
        for i in 0..e.data.len().min(400) {
            for bit in [0x01u8, 0x10, 0x80] {
                let mut bad = e.data.clone();
                bad[i] ^= bit;
                if let Ok(back) = decode_column(column, e.hash, &bad) {
                    let hashes: Vec<u64> = back.iter().map(|(_, c)| c.content_hash()).collect();
                    let want: Vec<u64> = chunks.iter().map(|(_, c)| c.content_hash()).collect();
                    assert_eq!(hashes, want, "byte {i} bit {bit:#x}");
                }
            }
        }
        // A count beyond the limit is refused before anything is allocated.
        let mut huge = e.data.clone();
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode_column(column, e.hash, &huge).is_err());
    }
}
