//! Replays a [`Script`] frame by frame through the real edit → pipeline →
//! GPU upload → draw path.
//!
//! A script's frame numbers are input timestamps (frame / frame rate). Each
//! replayed frame models one editor frame: at its start the strokes whose
//! time has come are applied to the grid (several per frame when frames run
//! long, as a window receives them), the pipeline reads the changes and
//! dispatches workers; at [`PUBLISH_POINT`] of the frame period (where the
//! window publishes, after input, UI and picking) finished meshes are
//! uploaded within the 2 ms budget and complete sets become visible; then,
//! when something new became visible (or on every frame, for a recording),
//! the [`ReplayTarget`] draws and presents the frame, and the edits it shows get their latency samples.
//! Frames are paced in real time so latencies are wall-clock milliseconds;
//! a recording ([`ReplayTarget::presents_every_frame`]) replays script frame
//! N as frame N instead, however long each takes to draw.

use std::time::{Duration, Instant};

use crate::camera::Camera;
use crate::pipeline::stall_watch::{StallWatch, WorkMark};
use crate::pipeline::{ChunkUploader, PublishReport, TerrainStreaming, WorldMeshes};
use crate::terrain::storage::grid::Grid;

use super::format::Script;
use super::runner::{RunError, ScriptRunner};

/// Fraction of the frame period after which a replayed frame publishes.
pub const PUBLISH_POINT: f64 = 0.85;

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
    /// After the last stroke, meshing and streaming made no progress for
    /// the runner's stall limit ([`ScriptRunner::stall_limit`]); a slow
    /// machine only makes the wait longer.
    #[error(transparent)]
    Stalled(#[from] crate::pipeline::stall_watch::Stalled),
    /// A chunk column of a streaming world could not be loaded (a damaged
    /// stored column): its ground would be missing.
    #[error(transparent)]
    Load(crate::terrain::streaming::column_source::SourceError),
    /// A frame could not be drawn or presented.
    #[error("frame {frame} could not be presented: {source}")]
    Present {
        /// The replayed frame.
        frame: u32,
        /// Why.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Where a replay publishes meshes and presents frames.
pub trait ReplayTarget {
    /// The GPU side of publication.
    fn uploader(&mut self) -> Box<dyn ChunkUploader + '_>;
    /// Draws replayed frame `frame` (from 0) of what is published now,
    /// seen from `camera`, and returns once it has been presented (its GPU
    /// work finished).
    ///
    /// # Errors
    /// Whatever kept the frame from being drawn.
    fn present(
        &mut self,
        frame: u32,
        meshes: &WorldMeshes,
        camera: &Camera,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>>;

    /// True when every replayed frame is to be presented (a recording),
    /// not only those that show something new.
    fn presents_every_frame(&self) -> bool {
        false
    }

    /// How script time advances: true (the default for a recording) makes
    /// each replayed frame one script frame however long it takes, so the
    /// workers get all the time they need between frames; false follows
    /// the wall clock, as the window does, so a slow frame moves the camera
    /// as far as it would move in the window.
    fn frame_locked(&self) -> bool {
        self.presents_every_frame()
    }
}

/// A target that uploads but draws nothing (tests, and runs without an
/// image): presentation is taken to happen right after publication, so
/// edit-to-visible equals edit-to-publication.
pub struct UploadOnly<'a>(pub &'a mut dyn ChunkUploader);

impl ReplayTarget for UploadOnly<'_> {
    fn uploader(&mut self) -> Box<dyn ChunkUploader + '_> {
        Box::new(&mut *self.0)
    }
    fn present(
        &mut self,
        _: u32,
        _: &WorldMeshes,
        _: &Camera,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        Ok(())
    }
}

/// What a replay did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReplayReport {
    /// Frames replayed, including the drain frames after the last stroke.
    pub frames: u32,
    /// Frames drawn and presented (those that showed something new).
    pub presented_frames: u32,
    /// Draw-and-present time of each presented frame, ms.
    pub present_ms: Vec<f64>,
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
    /// The camera at the end (the last keyframe's, or the one given).
    pub final_camera: Option<Camera>,
    /// Frames in which an entry waited for chunk columns to load (streaming
    /// worlds, spec §12).
    pub entries_waited_for_columns: usize,
    /// The report of every path entry applied, in order.
    pub paths: Vec<crate::terrain::path::spec::PathReport>,
    /// The world document at the end, when edits were recorded in one.
    pub document: Option<super::runner::DocumentSummary>,
}

/// Replays `script` on `grid`, publishing and presenting through `target`
/// and keeping `meshes` (the picking copy) current. `camera` (moved by the
/// script's camera keyframes, if any) orders meshing, chooses levels of
/// detail and, for a streaming world, which columns are resident;
/// `runner` holds the edit session the entries run in (its history and
/// clipboard; see [`ScriptRunner::for_script`]) and keeps it afterwards for
/// the caller. An entry over columns a
/// streaming world does not hold waits for them (they are loaded, then it
/// applies). Every entry (brush strokes, region operations, undo
/// and redo) goes through a [`ScriptRunner`] and so through the history, and
/// reaches the meshing pipeline through the grid's change tracking like a
/// window edit.
///
/// # Errors
/// [`ReplayError`] for a stroke that cannot be applied, a frame that cannot
/// be presented, or a pipeline that does not drain.
pub fn replay_script(
    script: &Script,
    grid: &mut Grid,
    meshes: &mut WorldMeshes,
    streaming: &mut TerrainStreaming,
    target: &mut dyn ReplayTarget,
    camera: Camera,
    runner: &mut ScriptRunner,
) -> Result<ReplayReport, ReplayError> {
    let mut camera = camera;
    let period = Duration::from_secs_f64(1.0 / script.frame_rate_hz);
    let publish_at = period.mul_f64(PUBLISH_POINT);
    let start = Instant::now();
    let mut report = ReplayReport::default();
    let mut next = 0usize;
    let mut frame: u32 = 0;
    let mut frame_start = start;
    let mut drain: Option<StallWatch> = None;
    // `centre_xz` strokes land on the full-detail surface as it was when the
    // replay began (like a window stroke, which picks against the surface at
    // its start): the result then depends neither on how fast earlier strokes
    // were meshed nor on the camera, and Subtract strokes do not drill down
    // through their own pits.
    let frame_locked = target.frame_locked();
    loop {
        sleep_until(frame_start);
        // Script time in frames: wall time (input timestamps, so a long
        // frame applies several strokes), or for a recording the replayed
        // frame itself, so each script frame is recorded however long
        // drawing it takes.
        let elapsed_frames = if frame_locked {
            f64::from(frame)
        } else {
            frame_start.duration_since(start).as_secs_f64() * script.frame_rate_hz
        };
        // Every stroke whose time has come.
        let due_frame = (elapsed_frames + 1e-9).floor() as u64;
        if let Some([x, y, z, yaw, pitch]) = script.camera_at(elapsed_frames) {
            camera.pos_world = glam::DVec3::new(x, y, z);
            camera.yaw_deg = yaw as f32;
            camera.pitch_deg = pitch as f32;
        }
        streaming.stream_columns(grid, meshes, camera.pos_world);
        if let Some(e) = streaming.residency().and_then(|r| r.first_load_error()) {
            return Err(ReplayError::Load(e.clone()));
        }
        while next < script.strokes.len() && u64::from(script.strokes[next].frame) <= due_frame {
            let stroke = &script.strokes[next];
            let changed =
                run_waiting_for_columns(runner, grid, streaming, &stroke.action, &mut report)
                    .map_err(|source| ReplayError::Stroke {
                        index: next,
                        frame: stroke.frame,
                        source,
                    })?;
            if changed {
                report.edits += 1;
                // Latency runs from the stroke's input time, not from the
                // (possibly later) frame that applied it.
                let input_at =
                    start + Duration::from_secs_f64(f64::from(stroke.frame) / script.frame_rate_hz);
                streaming.pipeline_mut().note_edit_times([input_at]);
            }
            next += 1;
        }
        streaming.begin_frame(grid, meshes, camera.pos_world, &mut *target.uploader());
        sleep_until(frame_start + publish_at);
        let published: PublishReport = streaming.publish(&mut *target.uploader(), meshes);
        streaming.horizon_frame(grid, meshes, &camera, &mut *target.uploader());
        if published.promoted_chunks > 0
            || streaming.pipeline().stats.awaiting_presentation() > 0
            || target.presents_every_frame()
        {
            let drawn = Instant::now();
            target
                .present(frame, meshes, &camera)
                .map_err(|source| ReplayError::Present { frame, source })?;
            let presented = Instant::now();
            streaming.pipeline_mut().frame_presented(presented);
            report.presented_frames += 1;
            report
                .present_ms
                .push(presented.duration_since(drawn).as_secs_f64() * 1e3);
        }
        frame += 1;
        // The next frame starts a period after this one, or now if this one ran long.
        frame_start = (frame_start + period).max(Instant::now());
        let strokes_done = next >= script.strokes.len()
            && due_frame >= u64::from(script.camera_keys.last().map_or(0, |k| k.frame));
        let view_done = streaming.residency().is_none()
            || streaming.is_budget_limited()
            || (streaming.is_view_loaded()
                && streaming.lod().is_settled()
                && streaming.last_missing_chunks() == 0);
        if strokes_done && streaming.pipeline().is_idle() && view_done {
            break;
        }
        if strokes_done {
            let limit = runner.stall_limit();
            let now = Instant::now();
            drain
                .get_or_insert_with(|| StallWatch::new("meshing after the last stroke", limit, now))
                .observe(WorkMark::of(streaming), now)?;
        }
    }
    report.frames = frame;
    report.history_steps = runner.history().undo_len();
    report.history_bytes = runner.history().held_bytes();
    report.history_peak_bytes = runner.history().peak_held_bytes();
    report.history_dropped_steps = runner.history().dropped_steps();
    report.history_budget_bytes = runner.history().budget_bytes();
    report.paths = runner.path_reports().to_vec();
    report.document = runner.document_summary();
    report.replay_ms = start.elapsed().as_secs_f64() * 1e3;
    report.final_camera = Some(camera);
    Ok(report)
}

/// Most times one entry waits for columns before it is given up (each wait
/// loads every column the refusal named, so this is only reached by an
/// entry whose reach keeps growing).
const MAX_COLUMN_WAITS: usize = 64;

/// Runs one entry; when a streaming grid refuses it for columns it does not
/// hold, loads them (the entry changed nothing) and runs it again.
fn run_waiting_for_columns(
    runner: &mut ScriptRunner,
    grid: &mut Grid,
    streaming: &mut TerrainStreaming,
    action: &super::format::StrokeAction,
    report: &mut ReplayReport,
) -> Result<bool, RunError> {
    let mut waits = 0;
    loop {
        match runner.run(grid, action) {
            Err(e) if waits < MAX_COLUMN_WAITS => {
                let (Some(missing), Some(residency)) =
                    (e.missing_columns(), streaming.residency_mut())
                else {
                    return Err(e);
                };
                residency
                    .load_now(grid, missing.iter().copied())
                    .map_err(RunError::Load)?;
                waits += 1;
                if waits == 1 {
                    report.entries_waited_for_columns += 1;
                }
            }
            other => return other,
        }
    }
}

fn sleep_until(t: Instant) {
    let now = Instant::now();
    if t > now {
        std::thread::sleep(t - now);
    }
}
