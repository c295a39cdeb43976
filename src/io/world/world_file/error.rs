//! The error type of world files, and the helpers that map SQLite and
//! operating-system errors onto it. One enum for every failure, so callers
//! can match on what went wrong and every message names the file.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::chunk_size::DENSE_CHUNK_BYTES;
use crate::terrain::storage::coords::{ChunkCoord, MAX_CHUNK_COORD, MIN_CHUNK_COORD};

/// Why a world file could not be read or written. Every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum WorldFileError {
    /// The operation was cancelled ([`Progress::cancel`](crate::progress::Progress::cancel)): a load built no
    /// grid, a save left the file as it was.
    #[error("{operation} of world file {path} was cancelled")]
    Cancelled {
        /// The file.
        path: PathBuf,
        /// "loading" or "saving".
        operation: &'static str,
    },
    /// The file does not exist.
    #[error("world file {path} does not exist")]
    NotFound {
        /// The file.
        path: PathBuf,
    },
    /// An operating-system error reading or writing the file.
    #[error("cannot access world file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file is not an SQLite database (wrong header, or empty).
    #[error("{path} is not a Strata world: {detail}")]
    NotSqlite {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        detail: String,
    },
    /// The world's layers (its document) cannot be read: damaged, or made
    /// by hand. The cells are not shown without them, since editing
    /// would then lose the layers.
    #[error(
        "the layers stored in world file {path} cannot be read ({reason}); \
         open a copy saved earlier, or recover its cells with File ▸ Open and \
         \"Load the rest\""
    )]
    BadDocument {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The file cannot be written where it was asked to go (the folder does
    /// not accept new files, or the path names a directory or device).
    #[error("{source}; save the world somewhere else (File ▸ Save As)")]
    Unwritable {
        /// The file.
        path: PathBuf,
        /// Why it cannot be written.
        source: crate::io::OutputPathError,
    },
    /// The file is shorter than its header says: it was cut off.
    #[error("world file {path} is truncated: {actual_bytes} bytes of {expected_bytes}")]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Size the header promises.
        expected_bytes: u64,
        /// Size on disk.
        actual_bytes: u64,
    },
    /// SQLite reports the database as malformed.
    #[error("world file {path} is corrupt: {message}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What SQLite (or the loader) reported.
        message: String,
    },
    /// An SQLite database written by some other application.
    #[error(
        "{path} is an SQLite database but not a Strata world (application id {application_id:#x})"
    )]
    NotAWorld {
        /// The file.
        path: PathBuf,
        /// Its `PRAGMA application_id`.
        application_id: i32,
    },
    /// An SQLite database with Strata's application id whose schema is not
    /// exactly a world's (extra tables, views, triggers or indexes, or a
    /// table declared differently, e.g. with a generated column). Refused
    /// before any row is read.
    #[error("{path} is not a Strata world: unexpected schema: {detail}")]
    UnexpectedSchema {
        /// The file.
        path: PathBuf,
        /// The first difference found.
        detail: String,
    },
    /// A required table is missing.
    #[error("world file {path} has no `{table}` table")]
    MissingTable {
        /// The file.
        path: PathBuf,
        /// The table.
        table: &'static str,
    },
    /// Written by a newer Strata.
    #[error("world file {path}: format {found} is newer than this Strata ({supported})")]
    NewerFormat {
        /// The file.
        path: PathBuf,
        /// The file's format version.
        found: u64,
        /// The newest version this build reads.
        supported: u32,
    },
    /// A metadata entry is missing or malformed.
    #[error("world file {path}: bad metadata `{key}`: {message}")]
    BadMeta {
        /// The file.
        path: PathBuf,
        /// The `meta` key.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// More chunk rows than [`MAX_CHUNKS`](super::MAX_CHUNKS).
    #[error("world file {path} holds {count} chunks, more than the limit of {limit}")]
    TooManyChunks {
        /// The file.
        path: PathBuf,
        /// Rows in `chunks`.
        count: u64,
        /// [`MAX_CHUNKS`](super::MAX_CHUNKS).
        limit: usize,
    },
    /// Two chunk rows with the same coordinate (the file's schema was
    /// changed to allow it): which one is the world cannot be told.
    #[error(
        "world file {path} is corrupt: chunk {} is stored in more than one row",
        fmt_coord(*coord)
    )]
    DuplicateChunk {
        /// The file.
        path: PathBuf,
        /// The chunk.
        coord: ChunkCoord,
    },
    /// A save of a world with more chunks than a world file may hold
    /// ([`MAX_CHUNKS`](super::MAX_CHUNKS), the limit loading enforces);
    /// nothing was written.
    #[error(
        "cannot save world file {path}: the world has {count} chunks, more than the {limit} a \
         world file may hold (nothing was written; clear some terrain and save again)"
    )]
    WorldTooLarge {
        /// The file.
        path: PathBuf,
        /// Chunks the saved file would hold.
        count: usize,
        /// [`MAX_CHUNKS`](super::MAX_CHUNKS).
        limit: usize,
    },
    /// A save of a chunk off the valid lattice
    /// ([`LATTICE_CELLS`](crate::terrain::storage::coords::LATTICE_CELLS)), which
    /// loading would refuse; nothing was written.
    #[error(
        "cannot save world file {path}: chunk {} lies outside the cell lattice (chunks \
         {MIN_CHUNK_COORD}..={MAX_CHUNK_COORD} on each axis; nothing was written)",
        fmt_coord(*coord)
    )]
    ChunkOutsideLattice {
        /// The file.
        path: PathBuf,
        /// The first such chunk, in (z, y, x) order.
        coord: ChunkCoord,
    },
    /// The chunks would decode to more cell data than the load's budget
    /// ([`LoadOptions::max_decoded_bytes`](super::LoadOptions::max_decoded_bytes)); refused before that memory is used.
    #[error(
        "world file {path}: {dense_chunks} dense chunks would decode to {bytes} bytes, more than the limit of {limit} bytes"
    )]
    TooMuchChunkData {
        /// The file.
        path: PathBuf,
        /// Dense chunks counted (all of the file's, or those kept so far).
        dense_chunks: u64,
        /// Bytes they decode to.
        bytes: u64,
        /// The budget.
        limit: u64,
    },
    /// A chunk's data cannot be decoded (unknown tag, damaged zstd frame,
    /// wrong size, unknown material).
    #[error("world file {path}: chunk {} is damaged: {reason}", fmt_coord(*coord))]
    InvalidChunk {
        /// The file.
        path: PathBuf,
        /// The chunk.
        coord: ChunkCoord,
        /// What is wrong.
        reason: String,
    },
    /// A chunk's compressed data would decompress to more than
    /// [`DENSE_CHUNK_BYTES`] (a decompression bomb); nothing was allocated for it.
    #[error(
        "world file {path}: chunk {} would decompress to {} bytes, more than a chunk's {DENSE_CHUNK_BYTES}",
        fmt_coord(*coord),
        claimed_bytes.map_or_else(|| "more".to_string(), |n| n.to_string())
    )]
    ChunkTooLarge {
        /// The file.
        path: PathBuf,
        /// The chunk.
        coord: ChunkCoord,
        /// The size the frame declares, when it declares one.
        claimed_bytes: Option<u64>,
    },
    /// Chunks whose cells do not match their stored hash.
    #[error("world file {path}: {} chunk(s) fail their content hash: {}", coords.len(), fmt_coords(coords))]
    BadChunk {
        /// The file.
        path: PathBuf,
        /// Every chunk that failed, in (z, y, x) order.
        coords: Vec<ChunkCoord>,
    },
    /// Every chunk verifies but the grid does not match the stored world hash
    /// (rows missing or added).
    #[error("world file {path}: world hash {actual:016x} does not match the stored {stored:016x}")]
    WorldHashMismatch {
        /// The file.
        path: PathBuf,
        /// Hash in `meta`.
        stored: u64,
        /// Hash of the loaded grid.
        actual: u64,
    },
    /// A leftover journal lies beside the file, and no copy of the file (or
    /// journal) could be kept before SQLite rolls the journal back into it;
    /// the file was not opened and is unchanged.
    #[error(
        "world file {path} has a leftover journal {}; cannot keep a copy at {} before it is rolled back, so the file was not opened: {source}",
        journal.display(),
        copy.display()
    )]
    RecoveryCopy {
        /// The file.
        path: PathBuf,
        /// The journal.
        journal: PathBuf,
        /// The copy that could not be written.
        copy: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Opening or loading failed after SQLite rolled a leftover journal back
    /// into the file; untouched copies of the file and the journal as they
    /// were are kept ([`JournalRecovery`](super::journal_recovery::JournalRecovery)).
    #[error("{source} (note: {recovery})")]
    AfterJournalRollback {
        /// What was rolled back and where the copies are.
        recovery: Box<super::journal_recovery::JournalRecovery>,
        /// The error.
        source: Box<WorldFileError>,
    },
    /// Any other SQLite error (locked, disk full, read-only, …).
    #[error("world file {path}: {source}")]
    Sqlite {
        /// The file.
        path: PathBuf,
        /// The SQLite error.
        source: rusqlite::Error,
    },
}

impl WorldFileError {
    /// The file, when this error is damage a load that leaves out damaged
    /// chunks ([`super::LoadOptions::skip_bad_chunks`]) gets past, so the
    /// rest of the file can be offered: chunks that fail their hash, do not
    /// decode or would decompress too large, rows that do not add up to
    /// the world hash (also after a journal rollback), or layers that
    /// cannot be read (the rest is then the cells without them). `None`
    /// for every other error.
    pub fn damaged_chunks_path(&self) -> Option<&Path> {
        match self {
            WorldFileError::BadChunk { path, .. }
            | WorldFileError::InvalidChunk { path, .. }
            | WorldFileError::ChunkTooLarge { path, .. }
            | WorldFileError::WorldHashMismatch { path, .. }
            | WorldFileError::BadDocument { path, .. } => Some(path),
            WorldFileError::AfterJournalRollback { source, .. } => source.damaged_chunks_path(),
            _ => None,
        }
    }
}

/// A chunk coordinate as `(x, y, z)`.
pub(super) fn fmt_coord(c: ChunkCoord) -> String {
    format!("({}, {}, {})", c.0.x, c.0.y, c.0.z)
}

/// The first few of `coords`, and how many more there are.
fn fmt_coords(coords: &[ChunkCoord]) -> String {
    const SHOWN: usize = 8;
    let mut s: Vec<String> = coords.iter().take(SHOWN).map(|c| fmt_coord(*c)).collect();
    if coords.len() > SHOWN {
        s.push(format!("and {} more", coords.len() - SHOWN));
    }
    s.join(", ")
}

/// What a file that is not an SQLite database holds, in the user's terms,
/// from its first bytes: a PNG or JPEG image (with the way to make a world
/// from a heightmap), a glTF model, or unknown data.
pub(crate) fn not_a_world_detail(path: &Path) -> String {
    let mut head = [0u8; 8];
    let read = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .unwrap_or(0);
    let head = &head[..read];
    let image = |kind: &str| {
        format!(
            "it is a {kind} image; to make a world from a heightmap image use File ▸ Import \
             Heightmap (or --heightmap)"
        )
    };
    if head.starts_with(b"\x89PNG") {
        image("PNG")
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        image("JPEG")
    } else if head.starts_with(b"glTF") {
        "it is a glTF model (an export), not a world; open the .strata file it was exported from"
            .to_string()
    } else {
        "the file does not start with an SQLite header; it is not a .strata world file".to_string()
    }
}

/// Maps an SQLite error to the most specific [`WorldFileError`].
pub(crate) fn sqlite_err(path: &Path, e: rusqlite::Error) -> WorldFileError {
    use rusqlite::ErrorCode;
    let path = path.to_path_buf();
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => WorldFileError::NotSqlite {
            detail: not_a_world_detail(&path),
            path,
        },
        Some(ErrorCode::DatabaseCorrupt) => WorldFileError::Corrupt {
            path,
            message: e.to_string(),
        },
        _ => WorldFileError::Sqlite { path, source: e },
    }
}

/// Maps an I/O error on `path` to [`WorldFileError::NotFound`] or
/// [`WorldFileError::Io`].
pub(crate) fn io_err(path: &Path, source: std::io::Error) -> WorldFileError {
    if source.kind() == ErrorKind::NotFound {
        WorldFileError::NotFound {
            path: path.to_path_buf(),
        }
    } else {
        WorldFileError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
