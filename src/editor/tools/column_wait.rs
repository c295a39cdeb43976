//! An edit that waits for chunk columns of a streaming world (spec §12).
//!
//! A brush application, region operation, sea-level action, undo or redo
//! over columns that are not resident changes nothing and reports them
//! ([`crate::terrain::storage::grid::GridError::NotResident`]). The editor then parks
//! the edit here: the frame asks the residency for its columns before the
//! view's (loaded on workers; the frame never waits), the stroke pauses, the
//! cursor and the panel say "loading", and once every column is resident
//! the edit runs again ([`crate::editor::tools::tool_session::ToolSession::retry`]). No
//! egui or winit here, so the rules are unit-tested.

use std::time::{Duration, Instant};

use crate::terrain::command::edit_command::EditCommand;
use crate::terrain::storage::coords::ColumnCoord;

/// Longest an edit waits for its columns before it is given up (a column
/// that cannot be loaded, e.g. a damaged stored one).
pub const MAX_COLUMN_WAIT: Duration = Duration::from_secs(30);

/// The edit that waits.
#[derive(Clone, Debug, PartialEq)]
pub enum WaitingEdit {
    /// The brush stroke in progress: its unapplied applications run again
    /// (see [`crate::terrain::command::brush_stroke::StrokeInProgress::resume`]).
    Stroke,
    /// A command (region tool, sea level, undo, redo, history jump) that
    /// runs again as it was asked for.
    Command(EditCommand),
}

/// What [`ColumnWait::poll`] found.
#[derive(Clone, Debug, PartialEq)]
pub enum WaitPoll {
    /// Nothing waits.
    Idle,
    /// Columns are still loading: this many are not resident yet.
    Loading(usize),
    /// Every column is resident: run this edit again now.
    Ready(WaitingEdit),
    /// The columns did not arrive within [`MAX_COLUMN_WAIT`]: the edit is
    /// dropped (a waiting stroke keeps what it applied).
    TimedOut(WaitingEdit),
}

/// At most one edit waiting for columns, and the columns it needs.
#[derive(Clone, Debug, Default)]
pub struct ColumnWait {
    waiting: Option<Waiting>,
}

#[derive(Clone, Debug)]
struct Waiting {
    edit: WaitingEdit,
    columns: Vec<ColumnCoord>,
    /// Fewest columns missing so far, and when that count was reached:
    /// the wait gives up only when no column has arrived for
    /// [`MAX_COLUMN_WAIT`], so a large closure loading steadily is waited
    /// for however long it takes.
    missing: usize,
    progress_at: Instant,
}

impl ColumnWait {
    /// Parks `edit` until `columns` are resident. An edit that waits again
    /// (it found more columns missing) keeps its clock: the limit counts
    /// from the last column that arrived (or the first wait).
    pub fn start(&mut self, edit: WaitingEdit, columns: &[ColumnCoord], now: Instant) {
        let (missing, progress_at) = match &self.waiting {
            Some(w) if w.edit == edit => (w.missing, w.progress_at),
            _ => (usize::MAX, now),
        };
        let mut columns = columns.to_vec();
        columns.sort_unstable();
        columns.dedup();
        self.waiting = Some(Waiting {
            edit,
            columns,
            missing,
            progress_at,
        });
    }

    /// True while an edit waits.
    pub fn is_waiting(&self) -> bool {
        self.waiting.is_some()
    }

    /// True while the stroke in progress waits.
    pub fn is_stroke_waiting(&self) -> bool {
        self.waiting
            .as_ref()
            .is_some_and(|w| w.edit == WaitingEdit::Stroke)
    }

    /// The columns the waiting edit needs (empty when none waits): the
    /// frame asks for them before the view's.
    pub fn columns(&self) -> &[ColumnCoord] {
        self.waiting.as_ref().map_or(&[], |w| w.columns.as_slice())
    }

    /// This frame's answer: still loading, ready (taken: run it now), timed
    /// out (taken), or idle. `is_resident` tells whether a column is in
    /// the grid.
    pub fn poll(&mut self, now: Instant, is_resident: impl Fn(ColumnCoord) -> bool) -> WaitPoll {
        let Some(w) = self.waiting.as_mut() else {
            return WaitPoll::Idle;
        };
        let missing = w.columns.iter().filter(|c| !is_resident(**c)).count();
        if missing == 0 {
            return self.take().map_or(WaitPoll::Idle, WaitPoll::Ready);
        }
        if missing < w.missing {
            if w.missing != usize::MAX {
                w.progress_at = now;
            }
            w.missing = missing;
        }
        if now.saturating_duration_since(w.progress_at) > MAX_COLUMN_WAIT {
            return self.take().map_or(WaitPoll::Idle, WaitPoll::TimedOut);
        }
        WaitPoll::Loading(missing)
    }

    /// Drops the waiting edit (the world was replaced); returns it.
    pub fn take(&mut self) -> Option<WaitingEdit> {
        self.waiting.take().map(|w| w.edit)
    }

    /// What the cursor and the panel say while an edit waits, e.g.
    /// `"loading 3 chunk columns…"`.
    pub fn status(&self, is_resident: impl Fn(ColumnCoord) -> bool) -> Option<String> {
        let w = self.waiting.as_ref()?;
        let missing = w.columns.iter().filter(|c| !is_resident(**c)).count();
        Some(match missing {
            1 => "loading 1 chunk column…".to_string(),
            n => format!("loading {n} chunk columns…"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[test]
    fn an_edit_waits_until_every_column_is_resident_then_runs_once() {
        let mut wait = ColumnWait::default();
        let t0 = Instant::now();
        assert_eq!(wait.poll(t0, |_| true), WaitPoll::Idle);
        let a = ColumnCoord::new(5, 5);
        let b = ColumnCoord::new(6, 5);
        wait.start(WaitingEdit::Command(EditCommand::Undo), &[b, a, a], t0);
        assert_eq!(wait.columns(), &[a, b], "sorted, without duplicates");
        let resident = RefCell::new(vec![]);
        let is_resident = |c| resident.borrow().contains(&c);
        assert_eq!(wait.poll(t0, is_resident), WaitPoll::Loading(2));
        assert_eq!(
            wait.status(is_resident).as_deref(),
            Some("loading 2 chunk columns…")
        );
        resident.borrow_mut().push(a);
        assert_eq!(wait.poll(t0, is_resident), WaitPoll::Loading(1));
        resident.borrow_mut().push(b);
        assert_eq!(
            wait.poll(t0, is_resident),
            WaitPoll::Ready(WaitingEdit::Command(EditCommand::Undo))
        );
        assert!(!wait.is_waiting());
        assert_eq!(wait.poll(t0, is_resident), WaitPoll::Idle, "runs once");
        assert!(wait.columns().is_empty());
    }

    #[test]
    fn a_wait_gives_up_when_nothing_arrives_for_the_limit() {
        let mut wait = ColumnWait::default();
        let t0 = Instant::now();
        let c = ColumnCoord::new(0, 0);
        wait.start(WaitingEdit::Stroke, &[c], t0);
        assert!(wait.is_stroke_waiting());
        // The stroke found more columns missing later: same start time.
        wait.start(
            WaitingEdit::Stroke,
            &[c, ColumnCoord::new(1, 0)],
            t0 + MAX_COLUMN_WAIT,
        );
        assert_eq!(
            wait.poll(t0 + MAX_COLUMN_WAIT, |_| false),
            WaitPoll::Loading(2)
        );
        assert_eq!(
            wait.poll(t0 + MAX_COLUMN_WAIT + Duration::from_millis(1), |_| false),
            WaitPoll::TimedOut(WaitingEdit::Stroke)
        );
        assert!(!wait.is_waiting());
    }

    #[test]
    fn a_wait_lasts_while_columns_keep_arriving() {
        let mut wait = ColumnWait::default();
        let t0 = Instant::now();
        let cols: Vec<ColumnCoord> = (0..3).map(|x| ColumnCoord::new(x, 0)).collect();
        let edit = WaitingEdit::Stroke;
        wait.start(edit.clone(), &cols, t0);
        let arrived = RefCell::new(0);
        let is_resident = |c: ColumnCoord| (c.x as usize) < *arrived.borrow();
        assert_eq!(wait.poll(t0, is_resident), WaitPoll::Loading(3));
        // One arrives just before the limit: the clock starts again.
        let t1 = t0 + MAX_COLUMN_WAIT - Duration::from_millis(1);
        *arrived.borrow_mut() = 1;
        assert_eq!(wait.poll(t1, is_resident), WaitPoll::Loading(2));
        assert_eq!(
            wait.poll(t1 + MAX_COLUMN_WAIT, is_resident),
            WaitPoll::Loading(2),
            "past the first limit, still loading"
        );
        assert_eq!(
            wait.poll(t1 + MAX_COLUMN_WAIT + Duration::from_millis(1), is_resident),
            WaitPoll::TimedOut(edit)
        );
    }
}
