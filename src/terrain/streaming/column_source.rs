//! Where a streaming world's chunk columns come from and where edited
//! columns go when they leave memory (spec §12).
//!
//! A streaming world has two halves: a [`ColumnSource`] that answers any
//! column from scratch (the generator, a heightmap, a world file's chunk
//! table) and an [`EditStore`] that keeps the columns an artist changed.
//! A load asks the store first, so an edited column that was evicted comes
//! back with its edits; an unedited generated column is never stored, it is
//! generated again.

use std::sync::Mutex;

use rustc_hash::FxHashMap;

use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::{ChunkCoord, ColumnCoord};
use crate::terrain::streaming::column_summary::ColumnSummary;
use crate::terrain::streaming::surface_sampler::SurfaceSampler;

/// The chunks of one column: `(chunk, cells)` sorted by y, all-empty chunks
/// left out.
pub type ColumnChunks = Vec<(ChunkCoord, ChunkCells)>;

/// Why a column could not be loaded or stored.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum SourceError {
    /// The backing file could not be read or written.
    #[error("chunk column ({}, {}): {message}", .column.x, .column.z)]
    Io {
        /// The column.
        column: ColumnCoord,
        /// What went wrong (names the file).
        message: String,
    },
    /// Stored data of the column is damaged.
    #[error("chunk column ({}, {}) is damaged: {message}", .column.x, .column.z)]
    Corrupt {
        /// The column.
        column: ColumnCoord,
        /// What is wrong.
        message: String,
    },
    /// The store as a whole could not be read (not one column's data), e.g.
    /// while listing its columns.
    #[error("edit store: {message}")]
    Store {
        /// What went wrong (names the file, when there is one).
        message: String,
    },
}

/// How a load was answered, for the streaming statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadOrigin {
    /// Computed by the generator (or from heightmap samples).
    Generated,
    /// Read from a file (a world file's chunks, or edited columns spilled
    /// to the backing store).
    Loaded,
}

/// Answers any column of a world from scratch. Called on worker threads.
pub trait ColumnSource: Send + Sync + std::fmt::Debug {
    /// The chunks of `column`; an empty list for a column outside the world.
    ///
    /// # Errors
    /// [`SourceError`] when the backing data cannot be read.
    fn load_column(&self, column: ColumnCoord) -> Result<ColumnChunks, SourceError>;

    /// How this source's loads are counted.
    fn origin(&self) -> LoadOrigin;

    /// True when `column` is known to be empty without loading it (outside
    /// the world's footprint): such columns are never requested.
    fn is_outside(&self, column: ColumnCoord) -> bool;

    /// Point queries on the unedited terrain for the levels above the chunk
    /// (spec §13), or `None` when the source cannot answer them (then
    /// nothing is drawn beyond the chunk levels).
    fn surface_sampler(&self) -> Option<&dyn SurfaceSampler> {
        None
    }
}

/// Keeps edited columns across eviction (spec §12: "an edited chunk is
/// written to the backing store before it is evicted"). Called on worker
/// threads (loads) and on the main thread (spills).
pub trait EditStore: Send + Sync + std::fmt::Debug {
    /// The stored chunks of `column`, or `None` when it was never stored.
    ///
    /// # Errors
    /// [`SourceError`] when the store cannot be read.
    fn load_edited(&self, column: ColumnCoord) -> Result<Option<ColumnChunks>, SourceError>;

    /// Stores `chunks` as the whole content of `column` (replacing any
    /// earlier copy), durably before it returns.
    ///
    /// # Errors
    /// [`SourceError`] when the store cannot be written; the caller then
    /// keeps the column in memory.
    fn store_edited(
        &self,
        column: ColumnCoord,
        chunks: &[(ChunkCoord, ChunkCells)],
    ) -> Result<(), SourceError>;

    /// Every column this store holds, sorted.
    ///
    /// # Errors
    /// [`SourceError`] when the store cannot be read.
    fn edited_columns(&self) -> Result<Vec<ColumnCoord>, SourceError>;

    /// The stored summary of `column`'s current content (spec §13: coarse
    /// summaries stored with the edited chunks), or `None` when the store
    /// keeps none that matches it (a store without summaries, an older
    /// file): then summarise the chunks [`EditStore::load_edited`] returns.
    ///
    /// # Errors
    /// [`SourceError`] when the store cannot be read or the summary is
    /// damaged.
    fn stored_summary(&self, column: ColumnCoord) -> Result<Option<ColumnSummary>, SourceError> {
        let _ = column;
        Ok(None)
    }
}

/// An [`EditStore`] in memory: for tests and tools. It holds only the
/// columns that were spilled (shared storage, no cell is copied), so a
/// process that dies loses them; the editor uses the file-backed store of
/// `io` instead.
#[derive(Debug, Default)]
pub struct MemoryEditStore {
    columns: Mutex<FxHashMap<ColumnCoord, ColumnChunks>>,
}

impl MemoryEditStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, FxHashMap<ColumnCoord, ColumnChunks>> {
        // A poisoned lock only means another thread panicked mid-insert of a
        // whole entry; the map itself is still a valid map.
        self.columns
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl EditStore for MemoryEditStore {
    fn load_edited(&self, column: ColumnCoord) -> Result<Option<ColumnChunks>, SourceError> {
        Ok(self.lock().get(&column).cloned())
    }

    fn store_edited(
        &self,
        column: ColumnCoord,
        chunks: &[(ChunkCoord, ChunkCells)],
    ) -> Result<(), SourceError> {
        self.lock().insert(column, chunks.to_vec());
        Ok(())
    }

    fn edited_columns(&self) -> Result<Vec<ColumnCoord>, SourceError> {
        let mut v: Vec<ColumnCoord> = self.lock().keys().copied().collect();
        v.sort();
        Ok(v)
    }
}
