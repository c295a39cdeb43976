//! Replays a [`Script`] frame by frame through the real edit → pipeline →
//! GPU upload path, without drawing intermediate frames.
//!
//! Each replayed frame models one editor frame at the script's frame rate:
//! at the frame start the frame's strokes are applied to the grid, the
//! pipeline reads the changes and dispatches workers; at [`PUBLISH_POINT`]
//! of the frame (where the window publishes, after input, UI and picking and
//! before drawing) finished meshes are uploaded within the 2 ms budget and
//! complete groups become visible; then the replay waits for the next frame.
//! Frames are paced in real time so latencies are wall-clock milliseconds.

use std::time::{Duration, Instant};

use glam::DVec3;

use crate::pipeline::{ChunkUploader, TerrainStreaming, WorldMeshes};
use crate::terrain::generate::GeneratorSettings;
use crate::terrain::grid::Grid;
use crate::terrain::history_view::HistoryView;

use super::format::Script;
use super::runner::{RunError, ScriptRunner};
use super::surface::SurfaceSnapshot;

/// Fraction of the frame period after which a replayed frame publishes.
pub const PUBLISH_POINT: f64 = 0.85;
/// Longest the replay waits after the last stroke for the pipeline to drain.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a replay stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// A stroke could not be applied.
    #[error("stroke {index} (frame {frame}): {source}")]
    Stroke {
        /// Index in frame order.
        index: usize,
        /// Its frame.
        frame: u32,
        /// Why.
        source: RunError,
    },
    /// The pipeline did not finish within [`DRAIN_TIMEOUT`] after the last stroke.
    #[error("meshing did not finish within {0:?} after the last stroke")]
    DrainTimeout(Duration),
}

/// What a replay did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReplayReport {
    /// Frames replayed, including the drain frames after the last stroke.
    pub frames: u32,
    /// Strokes that changed the grid.
    pub edits: usize,
    /// Wall time of the whole replay, ms.
    pub replay_ms: f64,
    /// Undo steps held at the end.
    pub history_steps: usize,
    /// Bytes of chunk storage held only by the history at the end.
    pub history_bytes: usize,
    /// Largest bytes the history held at any point of the replay.
    pub history_peak_bytes: usize,
    /// Steps dropped to stay within the history budget.
    pub history_dropped_steps: usize,
    /// The history budget, bytes.
    pub history_budget_bytes: usize,
    /// The history as the panel shows it (for `--ui`).
    pub history: HistoryView,
}

/// Replays `script` on `grid`, publishing through `uploader` and keeping
/// `meshes` (the picking copy) current. `camera_pos_world` orders meshing and
/// chooses levels of detail; `generator` serves `generate` entries. Every
/// entry (brush strokes, region operations, undo and redo) goes through a
/// [`ScriptRunner`] and so through the history, and reaches the meshing
/// pipeline through the grid's change tracking like a window edit.
///
/// # Errors
/// [`ReplayError`] for a stroke that cannot be applied or a pipeline that
/// does not drain.
pub fn replay_script(
    script: &Script,
    grid: &mut Grid,
    meshes: &mut WorldMeshes,
    streaming: &mut TerrainStreaming,
    uploader: &mut dyn ChunkUploader,
    camera_pos_world: DVec3,
    generator: Option<GeneratorSettings>,
) -> Result<ReplayReport, ReplayError> {
    let period = Duration::from_secs_f64(1.0 / script.frame_rate_hz);
    let publish_at = period.mul_f64(PUBLISH_POINT);
    let start = Instant::now();
    let mut report = ReplayReport::default();
    let mut next = 0usize;
    let last_frame = script.last_frame();
    let mut frame: u32 = 0;
    let mut drain_started: Option<Instant> = None;
    // `centre_xz` strokes land on the full-detail surface as it was when the
    // replay began (like a window stroke, which picks against the surface at
    // its start): the result then depends neither on how fast earlier strokes
    // were meshed nor on the camera, and Subtract strokes do not drill down
    // through their own pits.
    let mut runner = ScriptRunner::new(
        script.history_budget_bytes,
        generator,
        script.needs_surface().then(|| SurfaceSnapshot::of(grid)),
    );
    loop {
        let frame_start = start + period * frame;
        sleep_until(frame_start);
        while next < script.strokes.len() && script.strokes[next].frame == frame {
            let changed = runner
                .run(grid, &script.strokes[next].action)
                .map_err(|source| ReplayError::Stroke {
                    index: next,
                    frame,
                    source,
                })?;
            if changed {
                report.edits += 1;
            }
            next += 1;
        }
        streaming.begin_frame(grid, meshes, camera_pos_world, uploader);
        sleep_until(frame_start + publish_at);
        streaming.publish(uploader, meshes);
        frame += 1;
        if frame > last_frame && streaming.pipeline.is_idle() {
            break;
        }
        if frame > last_frame {
            let since = *drain_started.get_or_insert_with(Instant::now);
            if since.elapsed() > DRAIN_TIMEOUT {
                return Err(ReplayError::DrainTimeout(DRAIN_TIMEOUT));
            }
        }
    }
    report.frames = frame;
    report.history_steps = runner.history().undo_len();
    report.history_bytes = runner.history().held_bytes();
    report.history_peak_bytes = runner.history().peak_held_bytes();
    report.history_dropped_steps = runner.history().dropped_steps();
    report.history_budget_bytes = runner.history().budget_bytes();
    report.history = HistoryView::of(runner.history());
    report.replay_ms = start.elapsed().as_secs_f64() * 1e3;
    Ok(report)
}

fn sleep_until(t: Instant) {
    let now = Instant::now();
    if t > now {
        std::thread::sleep(t - now);
    }
}
