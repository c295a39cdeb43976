//! A plain-data summary of the undo history (the steps newest first with
//! the memory each holds, the budget and dropped steps), copied once per
//! frame for the panel and reported by script replays. No GUI types, so the
//! headless replay and the window show the same figures.

use crate::terrain::command::history::History;
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
        });
        let undo = history.undo_steps().rev().map(|s| StepRow {
            label: s.label().to_string(),
            bytes: s.held_bytes(),
            undone: false,
            path: s.path_spec().cloned(),
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
}
