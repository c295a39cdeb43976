//! Undo and redo: one step per stroke or region operation.
//!
//! A step stores, for every chunk the operation changed, the chunk's storage
//! before and after and the bounds of the changed cells. Chunk storage is
//! copy-on-write ([`ChunkCells`] shares its dense array through an `Arc`), so
//! keeping a before-state is a reference-count increment: the grid copies the
//! array when it next writes the chunk and the history keeps the old one.
//! Consecutive steps on the same chunk share storage (one step's after-state
//! is the next one's before-state), and the newest after-state is the grid's
//! own storage, so the history holds only what the grid no longer has.
//!
//! Undo and redo put storage back with [`Grid::restore_chunks`], which stamps
//! a revision and records the step's bounds as the chunks' edit extent: the
//! meshing pipeline picks them up through the grid's change tracking exactly
//! like a brush edit.
//!
//! Memory accounting ([`History::held_bytes`]): the heap bytes of the dense
//! arrays referenced by any step, each array counted once, excluding arrays
//! the grid currently holds at that chunk (those would exist without the
//! history). Uniform chunks cost no heap. Per-step figures attribute each
//! array to the newest step that references it. Step metadata (a few dozen
//! bytes per chunk entry) is not counted. When the held bytes exceed the
//! budget after a commit, the oldest steps are dropped (never the newest).

use std::collections::VecDeque;

use rustc_hash::FxHashSet;

use crate::terrain::command::document_action::DocumentBase;
use crate::terrain::document::layers::LayerStack;
use crate::terrain::editing::recorder::Recorder;
use crate::terrain::materials::{MaterialLibrary, MaterialStyle, MaterialTexture};
use crate::terrain::path::spec::PathSpec;
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::{CellBox, ChunkCoord};
use crate::terrain::storage::grid::{EditReport, Grid, same_content};

/// Default memory budget of the history: 512 MiB.
pub const DEFAULT_HISTORY_BUDGET_BYTES: usize = 512 << 20;

/// One chunk's part of a step.
#[derive(Clone, Debug)]
struct ChunkChange {
    coord: ChunkCoord,
    before: ChunkCells,
    after: ChunkCells,
    /// Global cell bounds of the cells that differ.
    bounds: CellBox,
}

/// One undoable operation.
#[derive(Clone, Debug)]
pub struct Step {
    label: String,
    /// The path a Path command laid, kept so the editor can reopen it.
    path: Option<Box<PathSpec>>,
    changes: Vec<ChunkChange>,
    /// The world document before and after the step (document mode).
    document: Option<Box<DocumentSwap>>,
    /// The material library before and after the step (a material removed).
    library: Option<Box<LibrarySwap>>,
    /// Heap bytes attributed to this step at the last accounting.
    held_bytes: usize,
}

/// What an undo step does to the world document (spec §14): the layer
/// stack before and after it (persistent: copies share every operation)
/// and, for a bake or a base change, the base cells before and after.
#[derive(Clone, Debug)]
pub struct DocumentSwap {
    /// The layer stack before the step.
    pub before: LayerStack,
    /// The layer stack after the step.
    pub after: LayerStack,
    /// The base before and after, when the step changed the base.
    pub base: Option<(DocumentBase, DocumentBase)>,
}

/// What an undo step does to the world's material library: removing a
/// material changes the library and the cells in one step. Undo puts the
/// material back into the library as it is then (edits made to other
/// materials since are kept), redo removes it again; where that cannot be
/// done exactly (its id or name taken since), the whole library of that
/// side is put back. Libraries share their textures, so keeping both sides
/// costs their styles only.
#[derive(Clone, Debug)]
pub struct LibrarySwap {
    /// The material removed.
    pub material: Material,
    /// Its style when it was removed.
    pub style: MaterialStyle,
    /// The textures its style names.
    pub textures: Vec<MaterialTexture>,
    /// The library before the step.
    pub before: MaterialLibrary,
    /// The library after the step.
    pub after: MaterialLibrary,
}

/// A material removal undone or redone, for the owner of the library to
/// apply ([`crate::terrain::command::edit_command::EditSession::take_library_change`]).
#[derive(Clone, Debug)]
pub enum LibraryChange {
    /// The removal was undone: the material comes back.
    Undone(LibrarySwap),
    /// The removal was redone: the material goes again.
    Redone(LibrarySwap),
}

impl LibraryChange {
    /// Applies the change to `library` (the world's library as it is now):
    /// undone, the material is put back with its style and textures; redone,
    /// it is removed again. Other materials keep any edit made since. Where
    /// that cannot be done exactly (the id or name was taken since, the
    /// texture size changed, the material was edited after the undo), the
    /// library of that side of the step is put back whole. Returns true
    /// when it was applied exactly.
    pub fn apply(&self, library: &mut MaterialLibrary) -> bool {
        match self {
            LibraryChange::Undone(swap) => {
                let exact = library
                    .restore_material(swap.material, &swap.style, &swap.textures)
                    .is_ok();
                if !exact {
                    *library = swap.before.clone();
                }
                exact
            }
            LibraryChange::Redone(swap) => {
                let exact = library.style(swap.material) == Some(&swap.style)
                    && library.remove_material(swap.material).is_ok();
                if !exact {
                    *library = swap.after.clone();
                }
                exact
            }
        }
    }
}

impl DocumentSwap {
    /// True when the step changes the document.
    pub fn is_change(&self) -> bool {
        self.base.is_some() || self.before != self.after
    }
}

impl Step {
    /// What the operation was, e.g. `"Paint (Sand) ×14"`.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The path this step laid (a Path command), for reopening it.
    pub fn path_spec(&self) -> Option<&PathSpec> {
        self.path.as_deref()
    }

    /// What the step does to the world document, if it was taken in
    /// document mode.
    pub fn document(&self) -> Option<&DocumentSwap> {
        self.document.as_deref()
    }

    /// What the step does to the material library, if it changed it.
    pub fn library(&self) -> Option<&LibrarySwap> {
        self.library.as_deref()
    }

    /// Chunks the step changed.
    pub fn chunk_count(&self) -> usize {
        self.changes.len()
    }

    /// Union of the changed cells' bounds (global cells).
    pub fn bounds(&self) -> CellBox {
        self.changes
            .iter()
            .fold(CellBox::default(), |acc, c| acc.union(&c.bounds))
    }

    /// Heap bytes of chunk storage this step holds (see the module docs).
    pub fn held_bytes(&self) -> usize {
        self.held_bytes
    }
}

/// The undo and redo stacks with a memory budget.
#[derive(Debug)]
pub struct History {
    undo: VecDeque<Step>,
    redo: Vec<Step>,
    budget_bytes: usize,
    held_bytes: usize,
    peak_held_bytes: usize,
    dropped_steps: usize,
}

impl Default for History {
    fn default() -> Self {
        History::new(DEFAULT_HISTORY_BUDGET_BYTES)
    }
}

/// Address of a dense array, its identity for accounting.
fn dense_id(cells: &ChunkCells) -> Option<(usize, usize)> {
    match cells {
        ChunkCells::Dense(a) => Some((a.as_ptr() as usize, cells.heap_bytes())),
        ChunkCells::Uniform(_) => None,
    }
}

impl History {
    /// An empty history holding at most `budget_bytes` of chunk storage.
    pub fn new(budget_bytes: usize) -> History {
        History {
            undo: VecDeque::new(),
            redo: Vec::new(),
            budget_bytes,
            held_bytes: 0,
            peak_held_bytes: 0,
            dropped_steps: 0,
        }
    }

    /// Turns what `recorder` collected into a step (the chunks' current
    /// storage in `grid` is the after-state) and clears the redo stack.
    /// Chunks that ended up as they began are left out; returns false (and
    /// adds nothing) when no chunk changed. Drops the oldest steps while the
    /// held bytes exceed the budget.
    pub fn commit(&mut self, recorder: Recorder, grid: &Grid) -> bool {
        self.commit_step(recorder, None, None, None, grid)
    }

    /// As [`History::commit`] for a document action: the step keeps
    /// `swap` (and `path`, a path it laid) and is added when it changed
    /// cells or the document.
    pub fn commit_document(
        &mut self,
        recorder: Recorder,
        swap: DocumentSwap,
        path: Option<PathSpec>,
        grid: &Grid,
    ) -> bool {
        self.commit_step(
            recorder,
            path.map(Box::new),
            Some(Box::new(swap)),
            None,
            grid,
        )
    }

    /// As [`History::commit`] for a change of the material library with
    /// the cells (and, in document mode, the document) it remaps: one step
    /// that undoes all of them.
    pub fn commit_library(
        &mut self,
        recorder: Recorder,
        swap: Option<DocumentSwap>,
        library: LibrarySwap,
        grid: &Grid,
    ) -> bool {
        self.commit_step(
            recorder,
            None,
            swap.map(Box::new),
            Some(Box::new(library)),
            grid,
        )
    }

    /// As [`History::commit`], keeping `spec` with the step so the path it
    /// laid can be reopened ([`Step::path_spec`]).
    pub fn commit_path(&mut self, recorder: Recorder, spec: PathSpec, grid: &Grid) -> bool {
        self.commit_step(recorder, Some(Box::new(spec)), None, None, grid)
    }

    fn commit_step(
        &mut self,
        recorder: Recorder,
        path: Option<Box<PathSpec>>,
        document: Option<Box<DocumentSwap>>,
        library: Option<Box<LibrarySwap>>,
        grid: &Grid,
    ) -> bool {
        let (label, before) = recorder.into_parts();
        let mut changes: Vec<ChunkChange> = before
            .into_iter()
            .filter_map(|(coord, (before, bounds))| {
                let after = grid.chunk_cells(coord);
                (!before.shares_storage_with(&after) && !same_content(&before, &after)).then_some(
                    ChunkChange {
                        coord,
                        before,
                        after,
                        bounds,
                    },
                )
            })
            .collect();
        if changes.is_empty()
            && !document.as_ref().is_some_and(|d| d.is_change())
            && library.is_none()
        {
            return false;
        }
        changes.sort_by_key(|c| (c.coord.0.z, c.coord.0.y, c.coord.0.x));
        self.redo.clear();
        self.undo.push_back(Step {
            label,
            path,
            changes,
            document,
            library,
            held_bytes: 0,
        });
        self.account(grid);
        self.enforce_budget(grid);
        true
    }

    /// Undoes the newest step: puts back its chunks' before-states through
    /// [`Grid::restore_chunks`] and returns that report (`None` when there is
    /// nothing to undo).
    pub fn undo(&mut self, grid: &mut Grid) -> Option<EditReport> {
        let step = self.undo.pop_back()?;
        let report = grid.restore_chunks(
            step.changes
                .iter()
                .map(|c| (c.coord, c.before.clone(), c.bounds)),
        );
        self.redo.push(step);
        self.account(grid);
        self.enforce_budget(grid);
        Some(report)
    }

    /// The chunk columns that undoing or redoing until `applied_steps` undo
    /// steps are applied would write, sorted: a streaming grid must hold
    /// them first (spec §12).
    pub fn columns_to_reach(&self, applied_steps: usize) -> Vec<crate::terrain::ColumnCoord> {
        let now = self.undo.len();
        let steps: Vec<&Step> = if applied_steps < now {
            self.undo.iter().skip(applied_steps).collect()
        } else {
            let k = (applied_steps - now).min(self.redo.len());
            self.redo.iter().rev().take(k).collect()
        };
        let mut columns: Vec<crate::terrain::ColumnCoord> = steps
            .iter()
            .flat_map(|s| {
                s.changes
                    .iter()
                    .map(|c| crate::terrain::ColumnCoord::of(c.coord))
            })
            .collect();
        columns.sort();
        columns.dedup();
        columns
    }

    /// Redoes the most recently undone step (`None` when there is none).
    pub fn redo(&mut self, grid: &mut Grid) -> Option<EditReport> {
        let step = self.redo.pop()?;
        let report = grid.restore_chunks(
            step.changes
                .iter()
                .map(|c| (c.coord, c.after.clone(), c.bounds)),
        );
        self.undo.push_back(step);
        self.account(grid);
        self.enforce_budget(grid);
        Some(report)
    }

    /// Steps that can be undone, oldest first.
    pub fn undo_steps(&self) -> impl DoubleEndedIterator<Item = &Step> {
        self.undo.iter()
    }

    /// Steps that can be redone, next first.
    pub fn redo_steps(&self) -> impl DoubleEndedIterator<Item = &Step> {
        self.redo.iter().rev()
    }

    /// Number of undoable steps.
    pub fn undo_len(&self) -> usize {
        self.undo.len()
    }

    /// Number of redoable steps.
    pub fn redo_len(&self) -> usize {
        self.redo.len()
    }

    /// The memory budget in bytes.
    pub fn budget_bytes(&self) -> usize {
        self.budget_bytes
    }

    /// Sets the budget and drops the oldest steps until it holds.
    pub fn set_budget_bytes(&mut self, budget_bytes: usize, grid: &Grid) {
        self.budget_bytes = budget_bytes;
        self.account(grid);
        self.enforce_budget(grid);
    }

    /// Heap bytes of chunk storage held only by the history (module docs).
    pub fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// The largest [`History::held_bytes`] after any commit, undo or redo,
    /// measured after the budget was enforced (while a commit runs, the new
    /// step's before-states briefly exist alongside the steps it then drops).
    pub fn peak_held_bytes(&self) -> usize {
        self.peak_held_bytes
    }

    /// Steps dropped to stay within the budget since the history was created.
    pub fn dropped_steps(&self) -> usize {
        self.dropped_steps
    }

    /// Forgets every step (e.g. when another world is opened).
    pub fn clear(&mut self) {
        self.undo.clear();
        self.redo.clear();
        self.held_bytes = 0;
    }

    /// Recomputes the held bytes and the per-step attribution.
    fn account(&mut self, grid: &Grid) {
        // Newest step first, so each array is attributed to the newest step
        // that references it. The bottom of the redo stack is the newest
        // step of the timeline; then the undo stack from its top.
        let mut seen: FxHashSet<usize> = FxHashSet::default();
        let mut total = 0usize;
        let steps = self.redo.iter_mut().chain(self.undo.iter_mut().rev());
        for step in steps {
            let mut held = 0usize;
            for c in &step.changes {
                let live = grid.chunk(c.coord).map(|ch| &ch.cells);
                for cells in [&c.before, &c.after] {
                    let Some((id, bytes)) = dense_id(cells) else {
                        continue;
                    };
                    if live.is_some_and(|l| l.shares_storage_with(cells)) || !seen.insert(id) {
                        continue;
                    }
                    held += bytes;
                }
            }
            step.held_bytes = held;
            total += held;
        }
        self.held_bytes = total;
    }

    /// Drops the oldest steps while over budget, then updates the peak.
    fn enforce_budget(&mut self, grid: &Grid) {
        while self.held_bytes > self.budget_bytes && self.undo.len() > 1 {
            self.undo.pop_front();
            self.dropped_steps += 1;
            self.account(grid);
        }
        self.peak_held_bytes = self.peak_held_bytes.max(self.held_bytes);
    }
}
