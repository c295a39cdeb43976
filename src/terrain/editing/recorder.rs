//! Recording one operation for undo: a [`Recorder`] runs edits on the grid
//! and keeps, for every chunk they change, the chunk's storage as it was
//! before the first of them (shared, not copied: chunk storage is
//! copy-on-write). The undo history turns a finished recorder into a step.

use rustc_hash::FxHashMap;

use crate::terrain::storage::cell::Cell;
use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::{CellBox, ChunkCoord};
use crate::terrain::storage::grid::{EditReport, Grid};

/// Collects the before-state of every chunk one operation changes, across
/// any number of edits (all applications of a stroke), until it is committed
/// to a [`crate::terrain::command::history::History`].
#[derive(Debug)]
pub struct Recorder {
    label: String,
    before: FxHashMap<ChunkCoord, (ChunkCells, CellBox)>,
    edits: usize,
}

/// Raised by [`Recorder::record`] when an edit changed a chunk outside the
/// region it declared (a tool bug: the step could not be undone exactly).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("an edit changed chunk {0:?} outside its declared region")]
pub struct UndeclaredChunk(pub ChunkCoord);

impl Recorder {
    /// An empty recorder for an operation named `label`.
    pub fn new(label: impl Into<String>) -> Recorder {
        Recorder {
            label: label.into(),
            before: FxHashMap::default(),
            edits: 0,
        }
    }

    /// The operation's label.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Replaces the label (e.g. to add the application count).
    pub fn set_label(&mut self, label: impl Into<String>) {
        self.label = label.into();
    }

    /// Edits recorded that changed the grid.
    pub fn edits(&self) -> usize {
        self.edits
    }

    /// True when nothing was changed yet.
    pub fn is_empty(&self) -> bool {
        self.before.is_empty()
    }

    /// Runs `edit` on `grid`, keeping the storage (shared, not copied) of
    /// every chunk in `region` it changes as it was before the first recorded
    /// edit touched it. `region` must contain every cell `edit` may change.
    ///
    /// # Errors
    /// The edit's own error (the grid is then unchanged by contract of the
    /// edit functions).
    pub fn record<E>(
        &mut self,
        grid: &mut Grid,
        region: CellBox,
        edit: impl FnOnce(&mut Grid) -> Result<EditReport, E>,
    ) -> Result<EditReport, E> {
        // Only stored chunks need their storage kept: a chunk of `region`
        // that is not stored was empty. Walking the stored chunks instead of
        // the region's also keeps a huge (later rejected) region from
        // looping over billions of chunk coordinates first.
        let range = region.chunk_range().map(|(lo, hi)| (lo.0, hi.0));
        let in_region = |c: ChunkCoord| {
            range.is_some_and(|(lo, hi)| c.0.cmpge(lo).all() && c.0.cmple(hi).all())
        };
        let region_chunks = range.map_or(0u128, |(lo, hi)| {
            let d = hi.as_i64vec3() - lo.as_i64vec3() + 1;
            d.x as u128 * d.y as u128 * d.z as u128
        });
        let mut speculative: FxHashMap<ChunkCoord, ChunkCells> = FxHashMap::default();
        let mut keep = |coord: ChunkCoord, cells: &ChunkCells| {
            if !self.before.contains_key(&coord) {
                speculative.insert(coord, cells.clone());
            }
        };
        // Whichever is fewer: the region's chunks (a brush) or the stored ones.
        if region_chunks <= grid.chunk_count() as u128 {
            for coord in region.chunks() {
                if let Some(chunk) = grid.chunk(coord) {
                    keep(coord, &chunk.cells);
                }
            }
        } else {
            for (coord, chunk) in grid.chunks() {
                if in_region(coord) {
                    keep(coord, &chunk.cells);
                }
            }
        }
        let report = edit(grid)?;
        if report.is_change() {
            self.edits += 1;
        }
        for (coord, bounds) in &report.changed {
            if let Some((_, b)) = self.before.get_mut(coord) {
                *b = b.union(bounds);
            } else if let Some(cells) = speculative.remove(coord) {
                self.before.insert(*coord, (cells, *bounds));
            } else if in_region(*coord) {
                // Not stored before the edit: it was empty.
                self.before
                    .insert(*coord, (ChunkCells::Uniform(Cell::EMPTY), *bounds));
            } else {
                // Its before-state is unknown: the chunk cannot be undone, so
                // it is left out of the step and the tool bug is logged.
                log::error!("{}", UndeclaredChunk(*coord));
            }
        }
        Ok(report)
    }
}

impl Recorder {
    /// The label and the before-state (storage and changed-cell bounds) of
    /// every chunk recorded, for the history to turn into a step.
    pub(crate) fn into_parts(self) -> (String, FxHashMap<ChunkCoord, (ChunkCells, CellBox)>) {
        (self.label, self.before)
    }

    /// Puts back the before-state of every chunk recorded so far (abandons
    /// the operation, e.g. when a later application of a stroke failed) and
    /// returns the restoring edit.
    pub fn revert(self, grid: &mut Grid) -> EditReport {
        grid.restore_chunks(
            self.before
                .into_iter()
                .map(|(coord, (cells, bounds))| (coord, cells, bounds)),
        )
    }
}
