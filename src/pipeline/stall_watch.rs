//! Waiting by progress, not by the clock: a headless run waits for meshing
//! and streaming as long as work keeps finishing, and gives up only when
//! nothing has progressed for a long time. A slow or busy machine then
//! makes a run slower, never a failure; a run whose work truly stalls
//! still ends, with a message that says what was pending.

use std::time::{Duration, Instant};

use super::streaming::TerrainStreaming;

/// How long a headless wait lets nothing progress before it gives up, by
/// default (`--stall-timeout-s`).
pub const DEFAULT_STALL_LIMIT: Duration = Duration::from_secs(120);

/// A snapshot of the work the meshing pipeline and streaming have done and
/// have left, taken once a frame by [`StallWatch::observe`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkMark {
    /// Everything finished so far (worker results of every kind, skipped
    /// items, column loads finished or dropped): only grows.
    pub finished: u64,
    /// Chunk meshes requested and not yet visible.
    pub queued_chunks: usize,
    /// Batches on the workers now.
    pub in_flight_batches: usize,
    /// Columns the view waits for (streaming worlds).
    pub waiting_columns: usize,
}

impl WorkMark {
    /// The work of `streaming` now.
    pub fn of(streaming: &TerrainStreaming) -> WorkMark {
        let pipeline = streaming.pipeline();
        let stats = &pipeline.stats;
        let results = stats.meshed_results
            + stats.preview_results
            + stats.stale_results
            + stats.unchanged_results
            + pipeline.skipped_items();
        let loads = streaming.residency().map_or(0, |r| {
            r.stats.loaded
                + r.stats.generated
                + r.stats.evicted
                + r.stats.stale_loads
                + r.stats.failed_loads
                + r.stats.dropped_over_budget
        });
        WorkMark {
            finished: results as u64 + loads,
            queued_chunks: pipeline.queue_len(),
            in_flight_batches: pipeline.in_flight_batches(),
            waiting_columns: streaming.last_waiting_columns(),
        }
    }

    /// True when `self`, a later mark, shows progress over `earlier`: work
    /// finished, or less of it left.
    pub fn progressed_since(&self, earlier: &WorkMark) -> bool {
        self.finished > earlier.finished
            || self.queued_chunks < earlier.queued_chunks
            || self.waiting_columns < earlier.waiting_columns
    }
}

/// Nothing progressed for the whole limit.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{what}: nothing progressed for {limit:?} ({} chunk meshes queued, {} batches on the meshing \
     workers, {} columns waiting to load); raise --stall-timeout-s if the machine is this slow",
    pending.queued_chunks,
    pending.in_flight_batches,
    pending.waiting_columns
)]
pub struct Stalled {
    /// What was being waited for, e.g. "meshing after the last stroke".
    pub what: &'static str,
    /// The limit.
    pub limit: Duration,
    /// What was pending when it gave up.
    pub pending: WorkMark,
}

/// Watches one wait: [`StallWatch::observe`] once a frame.
#[derive(Clone, Debug)]
pub struct StallWatch {
    what: &'static str,
    limit: Duration,
    last: Option<WorkMark>,
    last_progress: Instant,
}

impl StallWatch {
    /// A watch of the wait `what` that gives up after `limit` without
    /// progress, starting at `now`.
    pub fn new(what: &'static str, limit: Duration, now: Instant) -> StallWatch {
        StallWatch {
            what,
            limit,
            last: None,
            last_progress: now,
        }
    }

    /// Notes the work `mark` at `now`.
    ///
    /// # Errors
    /// [`Stalled`] when no mark since `limit` ago showed progress.
    pub fn observe(&mut self, mark: WorkMark, now: Instant) -> Result<(), Stalled> {
        if self.last.is_none_or(|last| mark.progressed_since(&last)) {
            self.last_progress = now;
        }
        self.last = Some(mark);
        if now.saturating_duration_since(self.last_progress) > self.limit {
            return Err(Stalled {
                what: self.what,
                limit: self.limit,
                pending: mark,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(finished: u64, queued_chunks: usize) -> WorkMark {
        WorkMark {
            finished,
            queued_chunks,
            in_flight_batches: 1,
            waiting_columns: 0,
        }
    }

    #[test]
    fn slow_progress_never_stalls_and_no_progress_stalls_after_the_limit() {
        let t0 = Instant::now();
        let limit = Duration::from_secs(10);
        let mut watch = StallWatch::new("meshing", limit, t0);
        // One result every 9 s for 100 s: slow, never stalled.
        for i in 0..12u64 {
            let now = t0 + Duration::from_secs(9 * i);
            assert_eq!(watch.observe(mark(i, 50), now), Ok(()));
        }
        // The queue shrinking is progress too.
        let t1 = t0 + Duration::from_secs(108);
        assert_eq!(
            watch.observe(mark(11, 49), t1 + Duration::from_secs(9)),
            Ok(())
        );
        // Then nothing: fine within the limit, an error past it.
        let t2 = t1 + Duration::from_secs(9);
        assert_eq!(watch.observe(mark(11, 49), t2 + limit), Ok(()));
        let err = watch
            .observe(mark(11, 49), t2 + limit + Duration::from_millis(1))
            .expect_err("stalled");
        assert_eq!(err.pending, mark(11, 49));
        assert!(
            err.to_string().starts_with(
                "meshing: nothing progressed for 10s (49 chunk meshes queued, 1 batches"
            ),
            "{err}"
        );
    }
}
