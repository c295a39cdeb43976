//! A plain-data summary of the undo history (the steps newest first with
//! the memory each holds, the budget and dropped steps), copied once per
//! frame for the panel and reported by script replays. No GUI types, so the
//! headless replay and the window show the same figures.

use crate::terrain::command::history::History;
use crate::terrain::document::layers::LayerStack;
use crate::terrain::document::operation::OperationKind;
use crate::terrain::path::spec::PathSpec;

/// Most steps listed in the panel (the newest ones).
pub const LISTED_STEPS: usize = 40;

/// One listed step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepRow {
    /// The step's label.
    pub label: String,
    /// Heap bytes it holds.
    pub bytes: usize,
    /// True for a step that was undone (can be redone).
    pub undone: bool,
    /// The path the step laid (a Path command), so it can be reopened.
    pub path: Option<PathSpec>,
    /// The layer operation that path is, when the world keeps layers and
    /// still holds it: reopening then edits that operation in place
    /// instead of undoing back to it.
    pub path_operation: Option<u32>,
}

/// What the panel shows of the history (copied once per frame).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HistoryView {
    /// Newest first: redo steps (latest in the timeline first), then undo steps.
    pub rows: Vec<StepRow>,
    /// Undo steps in total.
    pub undo_len: usize,
    /// Redo steps in total.
    pub redo_len: usize,
    /// Bytes held by the history.
    pub held_bytes: usize,
    /// Largest bytes held so far.
    pub peak_bytes: usize,
    /// The budget, bytes.
    pub budget_bytes: usize,
    /// Steps dropped to stay within the budget.
    pub dropped_steps: usize,
}

impl HistoryView {
    /// A view of `history`.
    pub fn of(history: &History) -> HistoryView {
        let redo = history.redo_steps().rev().map(|s| StepRow {
            label: s.label().to_string(),
            bytes: s.held_bytes(),
            undone: true,
            path: s.path_spec().cloned(),
            path_operation: None,
        });
        let undo = history.undo_steps().rev().map(|s| StepRow {
            label: s.label().to_string(),
            bytes: s.held_bytes(),
            undone: false,
            path: s.path_spec().cloned(),
            path_operation: None,
        });
        HistoryView {
            rows: redo.chain(undo).take(LISTED_STEPS).collect(),
            undo_len: history.undo_len(),
            redo_len: history.redo_len(),
            held_bytes: history.held_bytes(),
            peak_bytes: history.peak_held_bytes(),
            budget_bytes: history.budget_bytes(),
            dropped_steps: history.dropped_steps(),
        }
    }

    /// Fills each path step's [`StepRow::path_operation`]: the newest
    /// operation of `stack` that lays exactly that path.
    pub fn with_path_operations(mut self, stack: &LayerStack) -> HistoryView {
        for row in &mut self.rows {
            let Some(spec) = &row.path else { continue };
            row.path_operation = stack
                .layers()
                .iter()
                .flat_map(|l| l.operations.iter())
                .filter(|o| matches!(o.kind(), OperationKind::Path(s) if s == spec))
                .map(|o| o.id.0)
                .max();
        }
        self
    }
}

#[cfg(test)]
mod path_operation_tests {
    use super::*;
    use crate::terrain::command::edit_command::{EditCommand, EditSession};
    use crate::terrain::storage::cell::{Cell, Material};
    use crate::terrain::storage::coords::CellBox;
    use crate::terrain::storage::grid::Grid;
    use glam::{DVec2, IVec3};

    #[test]
    fn a_path_step_names_the_layer_operation_it_laid() {
        let mut g = Grid::new();
        g.edit_region(CellBox::new(IVec3::ZERO, IVec3::new(64, 8, 64)), |_, _| {
            Cell::full(Material::ROCK)
        })
        .unwrap();
        let mut s = EditSession::new(1 << 30, None);
        s.enable_document(&g);
        let spec = PathSpec::road(vec![DVec2::new(20.0, 20.0), DVec2::new(200.0, 60.0)]);
        s.apply(&mut g, &EditCommand::Path(spec.clone())).unwrap();
        let plain = HistoryView::of(&s.history);
        assert_eq!(plain.rows[0].path.as_ref(), Some(&spec));
        assert_eq!(plain.rows[0].path_operation, None);
        let view = plain.with_path_operations(&s.document.stack);
        assert_eq!(view.rows[0].path_operation, Some(1));
        // Once the operation is gone, the step falls back to Reopen.
        let mut stack = s.document.stack.clone();
        stack
            .delete_operation(crate::terrain::document::operation::OperationId(1))
            .unwrap();
        let view = HistoryView::of(&s.history).with_path_operations(&stack);
        assert_eq!(view.rows[0].path_operation, None);
    }
}
