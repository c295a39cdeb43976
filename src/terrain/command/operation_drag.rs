//! Dragging an operation in the view (spec §14): while the button is held
//! the world re-derives live, each re-derivation from the last one shown,
//! and the whole drag becomes one undo step when it ends. The live cells
//! are only ever written whole (a re-derivation completes before it is
//! written back), so the view shows the old cells until the new ones are
//! ready and never a hole.

use std::time::Instant;

use crate::terrain::command::document_action::OperationDrag;
use crate::terrain::command::edit_command::{CommandError, EditSession};
use crate::terrain::command::history::DocumentSwap;
use crate::terrain::document::derive::rederive;
use crate::terrain::document::layers::DocumentError;
use crate::terrain::document::operation::{OperationId, OperationKind};

use crate::terrain::editing::recorder::Recorder;
use crate::terrain::storage::grid::Grid;

impl EditSession {
    /// Starts dragging operation `id`; nothing changes until
    /// [`EditSession::drag_operation_to`]. A drag already running ends
    /// first (as [`EditSession::finish_operation_drag`]).
    ///
    /// # Errors
    /// [`CommandError::NoDocument`] without a document;
    /// [`DocumentError::UnknownOperation`] or [`DocumentError::Locked`].
    pub fn begin_operation_drag(
        &mut self,
        grid: &mut Grid,
        id: OperationId,
    ) -> Result<(), CommandError> {
        self.finish_operation_drag(grid);
        if !self.document.is_enabled() {
            return Err(CommandError::NoDocument(
                "operations can only be dragged in a world held whole",
            ));
        }
        let stack = &self.document.stack;
        let (layer, op) = stack
            .operation(id)
            .ok_or(DocumentError::UnknownOperation(id.0))?;
        if let Some(l) = stack.layer(layer).filter(|l| l.locked) {
            return Err(DocumentError::Locked(l.name.clone()).into());
        }
        self.drag = Some(OperationDrag {
            id,
            before: stack.clone(),
            original: op.kind().clone(),
            rec: Recorder::new(format!("Move {}", op.kind().label())),
            shown: 0,
        });
        Ok(())
    }

    /// The drag running, if any.
    pub fn operation_drag(&self) -> Option<&OperationDrag> {
        self.drag.as_ref()
    }

    /// Shows the dragged operation as `kind` (the original moved, turned
    /// or scaled): the stack changes and the closure of the change from
    /// what is shown re-derives now. A `kind` its tool refuses (a stamp
    /// dragged off the lattice) is refused and the last shown state stays.
    ///
    /// # Errors
    /// [`DocumentError::Refused`] or [`DocumentError::KindChange`];
    /// [`CommandError::NoDocument`] when no drag runs.
    pub fn drag_operation_to(
        &mut self,
        grid: &mut Grid,
        kind: OperationKind,
    ) -> Result<(), CommandError> {
        let Some(drag) = self.drag.as_mut() else {
            return Err(CommandError::NoDocument("no operation is being dragged"));
        };
        kind.validate()
            .map_err(|e| DocumentError::Refused(drag.id.0, e.to_string()))?;
        let Some(base) = self.document.base.as_ref() else {
            return Err(CommandError::NoDocument("the world has no document"));
        };
        let shown = self.document.stack.clone();
        let mut next = shown.clone();
        next.edit_operation(drag.id, kind)?;
        let started = Instant::now();
        let report = rederive(grid, &mut drag.rec, &base.cells, &shown, &next)?;
        drag.shown += 1;
        self.document.stack = next;
        self.keep_figures(report, started);
        Ok(())
    }

    /// Ends the drag: one undo step from before the drag to what is shown
    /// (none when nothing was shown). Returns true when a step was kept.
    pub fn finish_operation_drag(&mut self, grid: &Grid) -> bool {
        let Some(drag) = self.drag.take() else {
            return false;
        };
        if drag.shown == 0 || self.document.stack == drag.before {
            return false;
        }
        let swap = DocumentSwap {
            before: drag.before,
            after: self.document.stack.clone(),
            base: None,
        };
        self.history.commit_document(drag.rec, swap, None, grid)
    }

    /// Abandons the drag: the cells and the stack as before it.
    pub fn cancel_operation_drag(&mut self, grid: &mut Grid) {
        if let Some(drag) = self.drag.take() {
            drag.rec.revert(grid);
            self.document.stack = drag.before;
        }
    }
}
