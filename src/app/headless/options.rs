//! What a headless run is asked to do: the outputs, the view and the script.

use std::path::PathBuf;

use crate::camera::Camera;
use crate::pipeline::lod::LodSettings;
use crate::render::lines::overlays::OverlaySet;
use crate::script::Script;

/// Everything `strata --headless --screenshot` needs.
#[derive(Clone, Debug)]
pub struct ScreenshotOptions {
    /// PNG to write.
    pub output: PathBuf,
    /// Image size `[width, height]` in pixels.
    pub size_px: [u32; 2],
    /// Explicit camera; `None` frames the terrain automatically.
    pub camera: Option<Camera>,
    /// Draw the editor panel.
    pub ui: bool,
    /// Also write statistics as JSON here.
    pub stats_json: Option<PathBuf>,
    /// Brush strokes to replay through the meshing pipeline before the screenshot.
    pub script: Option<Script>,
    /// Level-of-detail settings (draw distance, forced level).
    pub lod: LodSettings,
    /// Debug overlays to draw (`--overlay NAME`, repeatable).
    pub overlays: OverlaySet,
    /// Animation time in seconds (`--time`, default 0): the water's waves at
    /// that moment, so screenshots are reproducible.
    pub time_secs: f32,
    /// Draw the replay's frames that show something new (edit latencies end
    /// at their presentation); when false they end at publication.
    pub replay_frames: bool,
    /// `--record DIR`: draw every replayed frame and write it as
    /// `DIR/frame_NNNNN.png` (NNNNN: the replayed frame, from 0), so level
    /// transitions can be inspected frame by frame (spec §13).
    pub record_dir: Option<PathBuf>,
    /// `--real-time`: a recording's script time follows the wall clock, as
    /// in the window (a slow frame moves the camera further), instead of
    /// one script frame per recorded frame.
    pub record_real_time: bool,
    /// Level changes cross-fade (false with `--no-morph`).
    pub level_fades: bool,
    /// How long a wait for meshing or streaming lets nothing progress
    /// before the run fails (`--stall-timeout-s`).
    pub stall_limit: std::time::Duration,
    /// What made the world's base cells, when more than its generator
    /// says (a recipe): a script's `base` entry re-makes it with a new seed.
    pub base_source: Option<crate::terrain::command::document_action::BaseSource>,
    /// The world's layers as opened from its file: the script's edits land
    /// in them, and its document actions edit them.
    pub document: Option<crate::terrain::command::document_action::WorldDocument>,
    /// How the world's materials are drawn (its material library).
    pub materials: crate::terrain::materials::MaterialLibrary,
}
