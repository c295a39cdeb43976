//! Why a streaming world file could not be created, opened, saved or
//! copied ([`StreamingFileError`]), and the wrapping that notes a journal
//! rolled back into the file first.

use std::path::PathBuf;

use crate::io::heightmap::heightmap_import::ImportError;
use crate::io::world::world_file::{JournalRecovery, WorldFileError, noting};
use crate::terrain::generation::generate::GenerateError;
use crate::terrain::storage::coords::ColumnCoord;

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
        /// The newest version read, [`LAYERED_FORMAT_VERSION`].
        ///
        /// [`LAYERED_FORMAT_VERSION`]: super::LAYERED_FORMAT_VERSION
        supported: u32,
    },
    /// The layers (the world document) stored in the file cannot be used:
    /// damaged, refused by their tools, or made over another terrain than
    /// the file's own.
    #[error(
        "the layers stored in streaming world file {path} cannot be read ({reason}); open a \
         copy saved earlier"
    )]
    BadLayers {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
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
    ///
    /// [`StreamingWorldFile::create`]: super::StreamingWorldFile::create
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
    ///
    /// [`StreamingWorldFile::save`]: super::StreamingWorldFile::save
    /// [`MAX_COLUMN_CHUNKS`]: super::MAX_COLUMN_CHUNKS
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
    ///
    /// [`StreamingWorldFile::save_as`]: super::StreamingWorldFile::save_as
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

/// `result`, with an error wrapped in
/// [`StreamingFileError::AfterJournalRollback`] when `recovery` says a
/// journal was rolled back into the file first.
pub(super) fn noting_streaming<T>(
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
