//! Progress and cancellation for long operations (generating, importing,
//! loading, saving, exporting a world).
//!
//! The editor runs those operations on a background thread and draws a
//! progress bar with a cancel button; the operation itself only counts the
//! work it has done and checks for cancellation between units of work
//! (a chunk column, a chunk). Plain atomics, so workers on many rayon threads
//! can report at once without locking.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Shared progress of one operation: units done of a total, a stage label,
/// and a cancellation flag. Share it with `Arc<Progress>`.
///
/// The total can grow as an operation discovers work; `fraction` is then
/// approximate, never above 1.
#[derive(Debug, Default)]
pub struct Progress {
    done: AtomicU64,
    total: AtomicU64,
    cancelled: AtomicBool,
    stage: Mutex<&'static str>,
    /// The stage's place among the operation's stages, `index << 32 |
    /// count` (1-based index); 0 when not told.
    place: AtomicU64,
}

/// The operation was cancelled through [`Progress::cancel`] before it
/// finished; nothing it would have produced was kept or written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cancelled")]
pub struct Cancelled;

impl Progress {
    /// A fresh progress: nothing done, no total, not cancelled.
    pub fn new() -> Progress {
        Progress::default()
    }

    /// Starts a new stage of `total` units (resets the count and forgets
    /// the place set by [`Progress::set_place`]).
    pub fn begin_stage(&self, stage: &'static str, total: u64) {
        if let Ok(mut s) = self.stage.lock() {
            *s = stage;
        }
        self.place.store(0, Ordering::Relaxed);
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
    }

    /// Says the current stage is stage `index` (1-based) of `count` of the
    /// operation, shown by [`Progress::label`]; ignored unless
    /// `1 <= index <= count`.
    pub fn set_place(&self, index: u32, count: u32) {
        if (1..=count).contains(&index) {
            self.place
                .store(u64::from(index) << 32 | u64::from(count), Ordering::Relaxed);
        }
    }

    /// The current stage's label, with its place when one was set:
    /// "cooking: rivers (6 of 8)".
    pub fn label(&self) -> String {
        let place = self.place.load(Ordering::Relaxed);
        let stage = self.stage();
        if place == 0 {
            stage.to_string()
        } else {
            format!(
                "{stage} ({} of {})",
                place >> 32,
                place & u64::from(u32::MAX)
            )
        }
    }

    /// Records `units` more units done.
    pub fn advance(&self, units: u64) {
        self.done.fetch_add(units, Ordering::Relaxed);
    }

    /// Fraction of the current stage done, in `[0, 1]`; `None` before a
    /// stage with a non-zero total began.
    pub fn fraction(&self) -> Option<f32> {
        let total = self.total.load(Ordering::Relaxed);
        (total > 0).then(|| {
            let done = self.done.load(Ordering::Relaxed).min(total);
            done as f32 / total as f32
        })
    }

    /// The current stage's label ("" before the first stage).
    pub fn stage(&self) -> &'static str {
        self.stage.lock().map(|s| *s).unwrap_or("")
    }

    /// Asks the operation to stop at its next check.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// True once [`Progress::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// `Err(Cancelled)` once [`Progress::cancel`] was called.
    ///
    /// # Errors
    /// [`Cancelled`] when the operation should stop.
    pub fn check(&self) -> Result<(), Cancelled> {
        if self.is_cancelled() {
            Err(Cancelled)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_stages_and_cancels() {
        let p = Progress::new();
        assert_eq!(p.fraction(), None);
        p.begin_stage("loading", 4);
        p.advance(1);
        assert_eq!(p.fraction(), Some(0.25));
        assert_eq!(p.stage(), "loading");
        p.advance(10);
        assert_eq!(p.fraction(), Some(1.0));
        p.set_place(2, 3);
        assert_eq!(p.label(), "loading (2 of 3)");
        p.set_place(4, 3);
        assert_eq!(
            p.label(),
            "loading (2 of 3)",
            "a place past the count is ignored"
        );
        p.begin_stage("saving", 2);
        assert_eq!(p.label(), "saving", "a new stage forgets the place");
        assert_eq!(p.fraction(), Some(0.0));
        assert_eq!(p.check(), Ok(()));
        p.cancel();
        assert_eq!(p.check(), Err(Cancelled));
    }
}
