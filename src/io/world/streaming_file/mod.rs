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
//! # Format (versions 2, 3, [`STREAMING_FORMAT_VERSION`] = 4 and 5)
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
//! Version 5 ([`LAYERED_FORMAT_VERSION`]) is version 4 with the world
//! document's tables as world files hold them (`document`, `base_chunks`,
//! `column_keys`; see
//! [`world_file::document`](crate::io::world::world_file::document)), added
//! by the first save (or autosave) of a world with layers. The record's
//! base is the file's own terrain and no base chunk is stored; the saved
//! columns are the derived cells, keyed per chunk column, and a stale one
//! is re-derived into the pending changes on opening. The autosave keeps
//! the layers beside the pending columns (payloads named `pending/…`),
//! which opening prefers while pending columns exist; a save replaces
//! them, [`StreamingWorldFile::discard_pending`] drops them.
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
//!
//! # Where the code lives
//! This file holds the open file ([`StreamingWorldFile`]): creating,
//! opening, saving and copying it. Beside it: `schema` (the exact tables
//! of each version), `meta` (the `meta` table), `new_file` (writing a new
//! file), `column_codec` (a column's `data` and `hash`), `column_rows`
//! (reading and writing column and summary rows), `edit_store` (the
//! columns as an [`EditStore`] for residency) and `error`
//! ([`StreamingFileError`]).
//!
//! [`EditStore::load_edited`]: crate::terrain::streaming::column_source::EditStore::load_edited
//! [`ChunkCells::content_hash`]: crate::terrain::storage::chunk::ChunkCells::content_hash
//! [`SourceError::Corrupt`]: crate::terrain::streaming::column_source::SourceError::Corrupt
//! [`EditStore::store_edited`]: crate::terrain::streaming::column_source::EditStore::store_edited
//! [`EditStore`]: crate::terrain::streaming::column_source::EditStore

mod column_codec;
mod column_rows;
mod edit_store;
mod error;
mod heightmap_origin;
mod meta;
mod new_file;
pub mod plan_cache;
mod schema;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use rayon::prelude::*;
use rusqlite::{Connection, TransactionBehavior};

use crate::io::heightmap::heightmap_format::HeightmapFormat;
use crate::io::heightmap::heightmap_import::HeightmapSettings;
use crate::io::heightmap::streaming_heightmap::{StoredHeightmap, heightmap_meta_text};
use crate::io::world::summary_rows::encode_summary;
use crate::io::world::world_file::document::{
    StreamedDocument, clear_pending, encode_streamed, read_pending, read_streamed,
    write as write_document, write_pending,
};
use crate::io::world::world_file::{
    JournalRecovery, MAX_BLOB_BYTES, WorldFileError, camera_text, generator_text, io_err,
    open_existing_as, sqlite_err,
};
use crate::terrain::command::document_action::WorldDocument;
use crate::terrain::document::layers::LayerStack;
use crate::terrain::generation::generate::GeneratorSettings;
use crate::terrain::storage::coords::ColumnCoord;
use crate::terrain::streaming::column_source::ColumnChunks;
use crate::terrain::streaming::column_summary::ColumnSummary;
use column_codec::{EncodedColumn, encode_column};
use column_rows::{Table, write_columns};
pub use error::StreamingFileError;
use error::noting_streaming;
use meta::{put_meta, read_streaming_meta, writer};
use new_file::{NewOrigin, remove_replaced_journal, write_new_file};
use schema::{OPEN_SCHEMAS, schema_kind};

/// The newest format version of streaming world files, what this build
/// writes (4: column summaries). This build also reads versions
/// [`GENERATED_FORMAT_VERSION`] and 3 (heightmap worlds). World files
/// number their own versions (1 to
/// [`FORMAT_VERSION`](crate::io::world::world_file::FORMAT_VERSION)); the two
/// kinds are told apart by their tables, not by the number.
pub const STREAMING_FORMAT_VERSION: u32 = 4;

/// The format version of a streaming world that keeps a world document
/// (spec §14): version 4's tables and the document tables of world files.
/// A file is written at this version by its first save with layers;
/// without layers a file keeps its version, so earlier builds still read
/// it.
pub const LAYERED_FORMAT_VERSION: u32 = 5;

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
///
/// [`EditStore::edited_columns`]: crate::terrain::streaming::column_source::EditStore::edited_columns
pub const MAX_EDITED_COLUMNS: usize = 1 << 22;

/// Longest string or blob SQLite may build on a connection to a streaming
/// file: just above the longest column row a load reads.
const MAX_VALUE_BYTES: usize = MAX_COLUMN_BYTES + 4096;

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
///
/// [`EditStore`]: crate::terrain::streaming::column_source::EditStore
#[derive(Debug)]
pub struct StreamingWorldFile {
    path: PathBuf,
    /// Raised to [`LAYERED_FORMAT_VERSION`] by the first save with layers.
    format_version: std::sync::atomic::AtomicU32,
    origin: StreamingOrigin,
    created_unix: u64,
    journal_recovery: Option<JournalRecovery>,
    inner: Mutex<Inner>,
    rows_read: AtomicU64,
}

/// Reads one of a streaming file's documents (saved or pending) over the
/// file's terrain text.
type DocumentReader =
    fn(&Connection, &Path, &[u8]) -> Result<Option<StreamedDocument>, WorldFileError>;

/// Adds the document tables (and the summaries table a version 2 or 3
/// file lacks) to a file of `version` below [`LAYERED_FORMAT_VERSION`],
/// and records the new version; nothing for a version-5 file.
fn upgrade_to_layered(tx: &rusqlite::Transaction<'_>, version: u32) -> rusqlite::Result<()> {
    if version >= LAYERED_FORMAT_VERSION {
        return Ok(());
    }
    tx.execute_batch(&schema::upgrade_sql(version))?;
    put_meta(
        tx,
        &[("format_version", Some(LAYERED_FORMAT_VERSION.to_string()))],
    )
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
        format: HeightmapFormat,
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
                format,
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
    ///
    /// [`WorldFileError::NotFound`]: crate::io::world::world_file::WorldFileError::NotFound
    /// [`WorldFileError::NotSqlite`]: crate::io::world::world_file::WorldFileError::NotSqlite
    /// [`WorldFileError::Truncated`]: crate::io::world::world_file::WorldFileError::Truncated
    /// [`WorldFileError::NotAWorld`]: crate::io::world::world_file::WorldFileError::NotAWorld
    /// [`WorldFileError::UnexpectedSchema`]: crate::io::world::world_file::WorldFileError::UnexpectedSchema
    /// [`WorldFileError::MissingTable`]: crate::io::world::world_file::WorldFileError::MissingTable
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
            format_version: std::sync::atomic::AtomicU32::new(kind.0),
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

    /// What the metadata says makes the unedited columns, as text: the
    /// generator settings, the recipe with them, or the heightmap import
    /// (its settings, PNG size and hash, and sidecar). The layers' base
    /// check covers it.
    fn terrain_text(&self) -> String {
        match &self.origin {
            StreamingOrigin::Generated(settings) => generator_text(settings),
            StreamingOrigin::Recipe {
                settings,
                recipe_json,
            } => format!("{}\n{recipe_json}", generator_text(settings)),
            StreamingOrigin::Heightmap(stored) => format!(
                "{}\n{}",
                heightmap_meta_text(stored),
                stored.sidecar_text.as_deref().unwrap_or("")
            ),
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
    /// summaries) for either origin, 5 ([`LAYERED_FORMAT_VERSION`]) once a
    /// save kept layers.
    pub fn format_version(&self) -> u32 {
        self.format_version.load(Ordering::Relaxed)
    }

    /// True when the file stores column summaries (format 4).
    fn has_summaries(&self) -> bool {
        self.format_version() >= STREAMING_FORMAT_VERSION
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
    ///
    /// [`EditStore::load_edited`]: crate::terrain::streaming::column_source::EditStore::load_edited
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
        document: Option<&WorldDocument>,
    ) -> Result<SaveReport, StreamingFileError> {
        let start = Instant::now();
        let version = self.format_version();
        // A world without layers keeps its version (earlier builds read
        // it); the first save with layers adds the document tables.
        let document = document
            .filter(|d| version >= LAYERED_FORMAT_VERSION || d.stack != LayerStack::default());
        let encoded_document = document
            .map(|d| encode_streamed(&self.path, d, self.terrain_text().as_bytes()))
            .transpose()?;
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
            if let Some(doc) = &encoded_document {
                upgrade_to_layered(&tx, version)?;
                write_document(&tx, Some(doc))?;
            } else {
                // The spills moved into `columns` with no layers given:
                // their autosaved layers are no longer pending.
                clear_pending(&tx)?;
            }
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
        if encoded_document.is_some() {
            self.format_version
                .fetch_max(LAYERED_FORMAT_VERSION, Ordering::Relaxed);
        }
        drop(inner);
        Ok(SaveReport {
            columns_written: encoded.len(),
            pending_saved: moved,
            modified_unix: now,
            file_bytes: file_len(path),
            elapsed_ms: start.elapsed().as_secs_f64() * 1e3,
        })
    }

    /// The world document saved in the file (spec §14), read and checked;
    /// `None` for a file saved without layers. Its stale columns (saved
    /// cells whose key differs from the record's) are listed for the caller
    /// to re-derive.
    ///
    /// # Errors
    /// [`StreamingFileError::BadLayers`] for a damaged or hostile
    /// document; [`StreamingFileError::File`] when SQLite fails.
    pub fn saved_document(&self) -> Result<Option<StreamedDocument>, StreamingFileError> {
        self.read_document(read_streamed)
    }

    /// The layers the last autosave kept beside the pending columns
    /// ([`StreamingWorldFile::store_pending_document`]); `None` when there
    /// are none (or no pending columns: a save or a discard dropped them).
    ///
    /// # Errors
    /// As [`StreamingWorldFile::saved_document`].
    pub fn pending_document(&self) -> Result<Option<StreamedDocument>, StreamingFileError> {
        if self.pending_count()? == 0 {
            return Ok(None);
        }
        self.read_document(read_pending)
    }

    fn read_document(
        &self,
        read: DocumentReader,
    ) -> Result<Option<StreamedDocument>, StreamingFileError> {
        if self.format_version() < LAYERED_FORMAT_VERSION {
            return Ok(None);
        }
        let terrain = self.terrain_text();
        let inner = self.lock();
        read(&inner.conn, &self.path, terrain.as_bytes()).map_err(|e| match e {
            WorldFileError::BadDocument { path, reason } => {
                StreamingFileError::BadLayers { path, reason }
            }
            other => other.into(),
        })
    }

    /// Keeps `document` (the layers now) beside the pending columns, as the
    /// autosave of a streaming world does: a crash then reopens the spilled
    /// columns with the layers they were derived from. A world without
    /// layers in a file without the document tables writes nothing; the
    /// first one with layers adds the tables (format
    /// [`LAYERED_FORMAT_VERSION`]). A save replaces it with the saved
    /// document.
    ///
    /// # Errors
    /// [`StreamingFileError::File`] when the document cannot be encoded or
    /// SQLite fails; the file is then unchanged.
    pub fn store_pending_document(
        &self,
        document: &WorldDocument,
    ) -> Result<(), StreamingFileError> {
        let version = self.format_version();
        if version < LAYERED_FORMAT_VERSION && document.stack == LayerStack::default() {
            return Ok(());
        }
        let encoded = encode_streamed(&self.path, document, self.terrain_text().as_bytes())?;
        self.write_layered(|tx, path| write_pending(tx, &encoded).map_err(|e| sqlite_err(path, e)))
    }

    /// Runs `write` in one transaction on a file given the document tables
    /// first (format [`LAYERED_FORMAT_VERSION`]); nothing is kept when it
    /// fails.
    fn write_layered(
        &self,
        write: impl FnOnce(&rusqlite::Transaction<'_>, &Path) -> Result<(), WorldFileError>,
    ) -> Result<(), StreamingFileError> {
        let version = self.format_version();
        let path = &self.path;
        let mut inner = self.lock();
        let tx = inner
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sqlite_err(path, e))?;
        upgrade_to_layered(&tx, version).map_err(|e| sqlite_err(path, e))?;
        write(&tx, path)?;
        tx.commit().map_err(|e| sqlite_err(path, e))?;
        self.format_version
            .fetch_max(LAYERED_FORMAT_VERSION, Ordering::Relaxed);
        Ok(())
    }

    /// Drops every spilled column not yet saved ("don't recover"): loads
    /// then return the saved copies (or none). Returns how many were
    /// dropped.
    ///
    /// # Errors
    /// [`StreamingFileError::File`] when SQLite fails; nothing is dropped.
    pub fn discard_pending(&self) -> Result<usize, StreamingFileError> {
        let inner = self.lock();
        let dropped = inner
            .conn
            .execute("DELETE FROM pending_columns", [])
            .map_err(|e| sqlite_err(&self.path, e))?;
        // The layers of the dropped spills go with them.
        clear_pending(&inner.conn).map_err(|e| sqlite_err(&self.path, e))?;
        Ok(dropped)
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
}
