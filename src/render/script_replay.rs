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

use glam::{DVec3, Vec3};

use crate::editor::picking::pick;
use crate::editor::script::{Script, StrokeCentre};
use crate::pipeline::{TerrainStreaming, WorldMeshes};
use crate::terrain::edit::apply_brush;
use crate::terrain::grid::Grid;

use super::Renderer;

/// Fraction of the frame period after which a replayed frame publishes.
pub const PUBLISH_POINT: f64 = 0.85;
/// Longest the replay waits after the last stroke for the pipeline to drain.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a replay stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// A `centre_xz` stroke found no surface below its point.
    #[error("stroke {index} (frame {frame}): no terrain below x={x}, z={z}")]
    NoSurface {
        /// Index in frame order.
        index: usize,
        /// Its frame.
        frame: u32,
        /// World x, studs.
        x: f64,
        /// World z, studs.
        z: f64,
    },
    /// The brush rejected the stroke.
    #[error("stroke {index} (frame {frame}): {source}")]
    Brush {
        /// Index in frame order.
        index: usize,
        /// Its frame.
        frame: u32,
        /// The brush error.
        source: crate::terrain::edit::EditError,
    },
    /// The pipeline did not finish within [`DRAIN_TIMEOUT`] after the last stroke.
    #[error("meshing did not finish within {0:?} after the last stroke")]
    DrainTimeout(Duration),
}

/// What a replay did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReplayReport {
    /// Frames replayed, including the drain frames after the last stroke.
    pub frames: u32,
    /// Strokes that changed the grid.
    pub edits: usize,
    /// Wall time of the whole replay, ms.
    pub replay_ms: f64,
}

/// Replays `script` on `grid`, publishing through `renderer` and keeping
/// `meshes` (the picking copy) current. `camera_pos_world` orders meshing and
/// chooses levels of detail.
///
/// # Errors
/// [`ReplayError`] for a stroke that cannot be applied or a pipeline that
/// does not drain.
pub fn replay_script(
    script: &Script,
    grid: &mut Grid,
    meshes: &mut WorldMeshes,
    streaming: &mut TerrainStreaming,
    renderer: &mut Renderer,
    camera_pos_world: DVec3,
) -> Result<ReplayReport, ReplayError> {
    let period = Duration::from_secs_f64(1.0 / script.frame_rate_hz);
    let publish_at = period.mul_f64(PUBLISH_POINT);
    let start = Instant::now();
    let mut report = ReplayReport::default();
    let mut next = 0usize;
    let last_frame = script.last_frame();
    let mut frame: u32 = 0;
    let mut drain_started: Option<Instant> = None;
    // `centre_xz` strokes land on the surface as it was when the replay began
    // (like a window stroke, which picks against the surface at its start):
    // the result then does not depend on how fast earlier strokes were meshed,
    // and Subtract strokes do not drill down through their own pits.
    let initial_surface = meshes.snapshot();
    loop {
        let frame_start = start + period * frame;
        sleep_until(frame_start);
        while next < script.strokes.len() && script.strokes[next].frame == frame {
            let stroke = &script.strokes[next];
            let centre = match stroke.centre {
                StrokeCentre::World(c) => c,
                StrokeCentre::OnSurface { x, z } => {
                    pick(&initial_surface, DVec3::new(x, 1.0e6, z), -Vec3::Y, 2.0e6)
                        .map(|hit| hit.pos_world)
                        .ok_or(ReplayError::NoSurface {
                            index: next,
                            frame,
                            x,
                            z,
                        })?
                }
            };
            let edit =
                apply_brush(grid, &stroke.brush, centre).map_err(|source| ReplayError::Brush {
                    index: next,
                    frame,
                    source,
                })?;
            if edit.is_change() {
                report.edits += 1;
            }
            next += 1;
        }
        streaming.begin_frame(grid, meshes, camera_pos_world, &mut renderer.uploader());
        sleep_until(frame_start + publish_at);
        streaming.publish(&mut renderer.uploader(), meshes);
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
    report.replay_ms = start.elapsed().as_secs_f64() * 1e3;
    Ok(report)
}

fn sleep_until(t: Instant) {
    let now = Instant::now();
    if t > now {
        std::thread::sleep(t - now);
    }
}
