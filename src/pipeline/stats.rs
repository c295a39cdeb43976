//! Session statistics of the meshing pipeline: edit-to-visible latency and
//! per-frame upload time, as last value and percentiles over the session.

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

/// `{"last", "p50", "p99", "count"}` of edit-to-visible latency, in ms.
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

/// `{"last", "p50", "p99", "max"}` of per-frame upload time, in ms.
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

/// Pipeline statistics for the panel and `--stats-json`.
#[derive(Clone, Debug, Default)]
pub struct PipelineStats {
    /// Edit-to-visible latency samples (one per edit), ms.
    pub edit_to_visible: Samples,
    /// Upload time of each frame that uploaded at least one result, ms.
    pub upload: Samples,
    /// Most results published (staged) in one frame.
    pub max_results_per_frame: usize,
    /// Results published in the last frame.
    pub results_last_frame: usize,
    /// Upload time of the last frame, ms (0 when it uploaded nothing).
    pub upload_ms_last_frame: f64,
    /// Worker results dropped because a newer request replaced them.
    pub stale_results: usize,
    /// Worker results accepted.
    pub accepted_results: usize,
    /// Chunk groups made visible.
    pub groups_published: usize,
}

impl PipelineStats {
    /// Edit-to-visible summary.
    pub fn latency_summary(&mut self) -> LatencySummary {
        LatencySummary {
            last: self.edit_to_visible.last(),
            p50: self.edit_to_visible.quantile(0.5),
            p99: self.edit_to_visible.quantile(0.99),
            count: self.edit_to_visible.count(),
        }
    }

    /// Per-frame upload summary.
    pub fn upload_summary(&mut self) -> UploadSummary {
        UploadSummary {
            last: self.upload.last(),
            p50: self.upload.quantile(0.5),
            p99: self.upload.quantile(0.99),
            max: self.upload.max(),
        }
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
