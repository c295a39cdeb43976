//! Session statistics of the meshing pipeline: edit-to-visible and
//! edit-to-full-detail latency (to the presentation of the first frame that
//! shows the edit), publication latency, per-frame upload time, and how much
//! worker output was thrown away — as last value and percentiles over the
//! session.

use std::time::Instant;

use serde::Serialize;

/// Samples of one quantity (milliseconds) kept for the whole session.
#[derive(Clone, Debug, Default)]
pub struct Samples {
    values_ms: Vec<f64>,
    sorted: Vec<f64>,
    sorted_valid: bool,
}

impl Samples {
    /// Adds a sample (non-finite values are ignored).
    pub fn push(&mut self, value_ms: f64) {
        if value_ms.is_finite() {
            self.values_ms.push(value_ms);
            self.sorted_valid = false;
        }
    }

    /// Number of samples.
    pub fn count(&self) -> usize {
        self.values_ms.len()
    }

    /// The most recent sample (0 when empty).
    pub fn last(&self) -> f64 {
        self.values_ms.last().copied().unwrap_or(0.0)
    }

    /// The largest sample (0 when empty).
    pub fn max(&self) -> f64 {
        self.values_ms.iter().copied().fold(0.0, f64::max)
    }

    /// The `q` quantile (`0..=1`, nearest rank; 0 when empty).
    pub fn quantile(&mut self, q: f64) -> f64 {
        if self.values_ms.is_empty() {
            return 0.0;
        }
        if !self.sorted_valid {
            self.sorted.clone_from(&self.values_ms);
            self.sorted.sort_by(f64::total_cmp);
            self.sorted_valid = true;
        }
        let n = self.sorted.len();
        let rank = ((q.clamp(0.0, 1.0) * n as f64).ceil() as usize).clamp(1, n);
        self.sorted[rank - 1]
    }
}

/// `{"last", "p50", "p99", "count"}` of an edit latency, in ms; a session
/// without samples has none (`null` in `--stats-json`), never zeros.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    /// Latency of the most recently published edit.
    pub last: f64,
    /// Median over the session.
    pub p50: f64,
    /// 99th percentile over the session.
    pub p99: f64,
    /// Edits published.
    pub count: usize,
}

/// `{"last", "p50", "p99", "max"}` of per-frame upload time, in ms; none
/// without samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct UploadSummary {
    /// Upload time of the most recent frame that uploaded.
    pub last: f64,
    /// Median over frames that uploaded.
    pub p50: f64,
    /// 99th percentile over frames that uploaded.
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

impl UploadSummary {
    /// The summary of per-frame `samples`; `None` when there are none.
    pub fn of(samples: &mut Samples) -> Option<UploadSummary> {
        (samples.count() > 0).then(|| UploadSummary {
            last: samples.last(),
            p50: samples.quantile(0.5),
            p99: samples.quantile(0.99),
            max: samples.max(),
        })
    }
}

/// Pipeline statistics for the panel and `--stats-json`.
#[derive(Clone, Debug, Default)]
pub struct PipelineStats {
    /// Edit to the presentation of the first frame showing it (at any level,
    /// previews included), one sample per edit, ms.
    pub edit_to_visible: Samples,
    /// Edit to the presentation of the first frame showing it at every
    /// chunk's requested level (no previews left), ms.
    pub edit_to_full_detail: Samples,
    /// Edit to the publication step that made it visible (meshing and upload
    /// only, without drawing the frame), ms.
    pub edit_to_published: Samples,
    /// Upload time of each frame that uploaded at least one result, ms.
    pub upload: Samples,
    /// Most results published (staged) in one frame.
    pub max_results_per_frame: usize,
    /// Results published in the last frame.
    pub results_last_frame: usize,
    /// Upload time of the last frame, ms (0 when it uploaded nothing).
    pub upload_ms_last_frame: f64,
    /// Worker results that arrived (kept or not).
    pub meshed_results: usize,
    /// Of those, coarser editor previews.
    pub preview_results: usize,
    /// Worker results dropped on arrival because a better one was already
    /// shown or held (work thrown away).
    pub stale_results: usize,
    /// Worker results kept.
    pub accepted_results: usize,
    /// Results shown without an upload: identical to the drawn mesh.
    pub unchanged_results: usize,
    /// Sets of chunks made visible together.
    pub groups_published: usize,
    /// Edit times published but not yet presented.
    awaiting_visible: Vec<Instant>,
    /// Edit times at full detail but not yet presented.
    awaiting_full_detail: Vec<Instant>,
}

impl PipelineStats {
    /// The edits made at `edit_times` became visible in the publication at `now`.
    pub fn record_published(&mut self, edit_times: &[Instant], now: Instant) {
        for &t in edit_times {
            self.edit_to_published
                .push(now.duration_since(t).as_secs_f64() * 1e3);
        }
        self.awaiting_visible.extend_from_slice(edit_times);
    }

    /// The edits made at `edit_times` reached full detail at `now`.
    pub fn record_full_detail(&mut self, edit_times: &[Instant], _now: Instant) {
        self.awaiting_full_detail.extend_from_slice(edit_times);
    }

    /// Edits published but not yet presented.
    pub fn awaiting_presentation(&self) -> usize {
        self.awaiting_visible.len() + self.awaiting_full_detail.len()
    }

    /// A frame showing everything published so far was presented at `at`.
    pub fn frame_presented(&mut self, at: Instant) {
        for t in self.awaiting_visible.drain(..) {
            self.edit_to_visible
                .push(at.duration_since(t).as_secs_f64() * 1e3);
        }
        for t in self.awaiting_full_detail.drain(..) {
            self.edit_to_full_detail
                .push(at.duration_since(t).as_secs_f64() * 1e3);
        }
    }

    /// Edit-to-visible summary (to presentation).
    pub fn latency_summary(&mut self) -> Option<LatencySummary> {
        summary(&mut self.edit_to_visible)
    }

    /// Edit-to-full-detail summary (to presentation).
    pub fn full_detail_summary(&mut self) -> Option<LatencySummary> {
        summary(&mut self.edit_to_full_detail)
    }

    /// Edit-to-publication summary (meshing and upload only).
    pub fn published_summary(&mut self) -> Option<LatencySummary> {
        summary(&mut self.edit_to_published)
    }

    /// Per-frame upload summary.
    pub fn upload_summary(&mut self) -> Option<UploadSummary> {
        UploadSummary::of(&mut self.upload)
    }
}

/// `value_ms` with `decimals` decimals, or "—" when there is none (a
/// summary of no samples), for summary lines and the panel.
pub fn ms_or_dash(value_ms: Option<f64>, decimals: usize) -> String {
    value_ms.map_or_else(|| "—".to_string(), |v| format!("{v:.decimals$} ms"))
}

fn summary(samples: &mut Samples) -> Option<LatencySummary> {
    LatencySummary::of(samples)
}

impl LatencySummary {
    /// The summary of `samples` (any per-event times, ms); `None` when
    /// there are none.
    pub fn of(samples: &mut Samples) -> Option<LatencySummary> {
        (samples.count() > 0).then(|| LatencySummary {
            last: samples.last(),
            p50: samples.quantile(0.5),
            p99: samples.quantile(0.99),
            count: samples.count(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quantiles() {
        let mut s = Samples::default();
        for v in 1..=100 {
            s.push(v as f64);
        }
        s.push(f64::NAN);
        assert_eq!(s.count(), 100);
        assert_eq!(s.quantile(0.5), 50.0);
        assert_eq!(s.quantile(0.99), 99.0);
        assert_eq!(s.quantile(1.0), 100.0);
        assert_eq!(s.last(), 100.0);
        assert_eq!(Samples::default().quantile(0.5), 0.0);
    }
}
