//! The world-document actions an edit session runs (spec §14) and the
//! session's document state: the layer stack over the base cells and the
//! figures of its re-derivations.

use glam::DVec2;

use crate::terrain::document::base::BaseColumns;
pub use crate::terrain::document::base::BaseSource;
use crate::terrain::document::layers::{LayerId, LayerStack};
use crate::terrain::document::operation::{OperationError, OperationId, OperationKind};
use crate::terrain::document::operation_edit::OperationEdit;
use crate::terrain::path::spec::PathReport;

/// A layer named by id or by name (scripts use names).
#[derive(Clone, Debug, PartialEq)]
pub enum LayerRef {
    /// By stable id.
    Id(LayerId),
    /// By name (the lowest layer of that name).
    Name(String),
}

/// An action on the world document.
#[derive(Clone, Debug, PartialEq)]
pub enum DocumentAction {
    /// Add a layer above the active one and make it active.
    AddLayer(String),
    /// Make a layer active (not an undo step).
    SelectLayer(LayerRef),
    /// Rename a layer.
    RenameLayer(LayerRef, String),
    /// Show (true) or hide a layer.
    SetVisible(LayerRef, bool),
    /// Show one layer and hide the others.
    Solo(LayerRef),
    /// Lock (true) or unlock a layer.
    SetLocked(LayerRef, bool),
    /// Move a layer to a position, 0 = lowest.
    MoveLayer(LayerRef, usize),
    /// Delete a layer and its operations.
    RemoveLayer(LayerRef),
    /// Copy a layer above itself.
    DuplicateLayer(LayerRef),
    /// Append a layer's operations to the layer below.
    MergeDown(LayerRef),
    /// Move an operation on the ground plane, studs.
    MoveOperation(OperationId, DVec2),
    /// Change an operation's settings.
    EditOperation(OperationId, OperationEdit),
    /// Replace what an operation does (the window's handles).
    ReplaceOperation(OperationId, OperationKind),
    /// Delete an operation.
    DeleteOperation(OperationId),
    /// Flatten the stack into the base cells.
    Bake,
    /// Re-make the base with another seed (generator or recipe worlds)
    /// and re-apply the layers on it.
    SetBaseSeed(u64),
}

impl DocumentAction {
    /// The history label, e.g. `"Hide layer"`.
    pub fn label(&self) -> String {
        match self {
            DocumentAction::AddLayer(name) => format!("Add layer \"{name}\""),
            DocumentAction::SelectLayer(_) => "Select layer".into(),
            DocumentAction::RenameLayer(_, name) => format!("Rename layer to \"{name}\""),
            DocumentAction::SetVisible(_, true) => "Show layer".into(),
            DocumentAction::SetVisible(_, false) => "Hide layer".into(),
            DocumentAction::Solo(_) => "Solo layer".into(),
            DocumentAction::SetLocked(_, true) => "Lock layer".into(),
            DocumentAction::SetLocked(_, false) => "Unlock layer".into(),
            DocumentAction::MoveLayer(..) => "Reorder layers".into(),
            DocumentAction::RemoveLayer(_) => "Delete layer".into(),
            DocumentAction::DuplicateLayer(_) => "Duplicate layer".into(),
            DocumentAction::MergeDown(_) => "Merge layer down".into(),
            DocumentAction::MoveOperation(id, _) => format!("Move operation {}", id.0),
            DocumentAction::EditOperation(id, _) | DocumentAction::ReplaceOperation(id, _) => {
                format!("Edit operation {}", id.0)
            }
            DocumentAction::DeleteOperation(id) => format!("Delete operation {}", id.0),
            DocumentAction::Bake => "Bake layers".into(),
            DocumentAction::SetBaseSeed(seed) => format!("Base seed {seed}"),
        }
    }
}

/// Figures of one re-derivation, for `--stats-json` and the panel.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct DeriveStats {
    /// Chunk columns re-derived.
    pub dirty_columns: usize,
    /// Operations applied.
    pub applied_operations: usize,
    /// Operations that could not apply on their ground (skipped).
    pub failed_operations: usize,
    /// Wall time of the derivation, milliseconds.
    pub elapsed_ms: f64,
}

/// The base of a document: its cells and what makes them.
#[derive(Clone, Debug)]
pub struct DocumentBase {
    /// The base cells, any column on demand.
    pub cells: BaseColumns,
    /// What made them.
    pub source: BaseSource,
}

/// A world document as it is saved and opened: the base and the layer
/// stack (cheap to clone: the operations and the base cells are shared).
#[derive(Clone, Debug)]
pub struct WorldDocument {
    /// The base cells and what makes them.
    pub base: DocumentBase,
    /// The layers and their operations.
    pub stack: LayerStack,
}

/// The session's document: the layer stack over the base cells.
#[derive(Debug, Default)]
pub struct DocumentState {
    /// The layers and their operations.
    pub stack: LayerStack,
    /// The base; `None` until [`crate::terrain::command::edit_command::EditSession::enable_document`]
    /// (a streaming world keeps none: its edits are not re-derivable yet).
    pub(super) base: Option<DocumentBase>,
    /// The last re-derivation's figures.
    pub last_derive: Option<DeriveStats>,
    /// Operations skipped by the last re-derivation, with why.
    pub last_failures: Vec<(OperationId, OperationError)>,
    /// Re-derivations run so far.
    pub derivations: u64,
    /// The latest figures of every path operation, by id: from when it was
    /// laid or last re-derived (a road re-graded on new ground).
    pub path_reports: std::collections::BTreeMap<OperationId, PathReport>,
}

impl DocumentState {
    /// True when edits are recorded as re-derivable operations.
    pub fn is_enabled(&self) -> bool {
        self.base.is_some()
    }

    /// The base cells.
    pub fn base(&self) -> Option<&BaseColumns> {
        self.base.as_ref().map(|b| &b.cells)
    }

    /// What makes the base cells.
    pub fn base_source(&self) -> Option<&BaseSource> {
        self.base.as_ref().map(|b| &b.source)
    }
}

/// An operation being dragged: the stack before the drag, the operation
/// as it was, and every chunk the drag changed (before-states).
#[derive(Debug)]
pub struct OperationDrag {
    pub(super) id: OperationId,
    pub(super) before: LayerStack,
    pub(super) original: OperationKind,
    pub(super) rec: crate::terrain::editing::recorder::Recorder,
    /// Re-derivations shown so far.
    pub(super) shown: usize,
}

impl OperationDrag {
    /// The operation dragged.
    pub fn id(&self) -> OperationId {
        self.id
    }

    /// The operation as it was when the drag began.
    pub fn original(&self) -> &OperationKind {
        &self.original
    }

    /// Re-derivations shown so far.
    pub fn shown(&self) -> usize {
        self.shown
    }
}
