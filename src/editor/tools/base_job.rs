//! A base seed change running off the window's thread (spec §14): the new
//! base is cooked and the layers derived on it in the background, with
//! progress and Cancel; the frame loop installs the result when it is ready,
//! so the window never stops drawing.

use std::sync::Arc;
use std::thread::JoinHandle;

use crate::progress::Progress;
use crate::terrain::command::base_seed::{BaseSeedJob, PreparedBase};
use crate::terrain::generation::generate::GenerateError;

/// The running seed change.
#[derive(Debug)]
pub struct RunningBaseJob {
    seed: u64,
    progress: Arc<Progress>,
    handle: JoinHandle<Result<PreparedBase, GenerateError>>,
}

/// What the panel shows of a running seed change.
#[derive(Clone, Debug, PartialEq)]
pub struct BaseJobStatus {
    /// The new seed.
    pub seed: u64,
    /// The current stage's fraction done, when known.
    pub fraction: Option<f32>,
    /// The current stage and its place, e.g. `"cooking: rivers (6 of 8)"`.
    pub stage: String,
}

impl RunningBaseJob {
    /// Starts `job` on its own thread.
    pub fn start(job: BaseSeedJob) -> RunningBaseJob {
        let progress = Arc::new(Progress::new());
        let seed = job.seed;
        let worker = progress.clone();
        let handle = std::thread::spawn(move || job.prepare(&worker));
        RunningBaseJob {
            seed,
            progress,
            handle,
        }
    }

    /// Progress for the panel.
    pub fn status(&self) -> BaseJobStatus {
        BaseJobStatus {
            seed: self.seed,
            fraction: self.progress.fraction(),
            stage: self.progress.label(),
        }
    }

    /// Asks the job to stop; it ends with [`GenerateError::Cancelled`].
    pub fn cancel(&self) {
        self.progress.cancel();
    }

    /// True when the result is ready.
    pub fn is_finished(&self) -> bool {
        self.handle.is_finished()
    }

    /// The result, waiting for it.
    ///
    /// # Errors
    /// The job's [`GenerateError`]; a job that panicked reads as cancelled
    /// (nothing was installed).
    pub fn join(self) -> Result<PreparedBase, GenerateError> {
        self.handle.join().unwrap_or(Err(GenerateError::Cancelled))
    }
}
