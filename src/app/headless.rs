//! The headless run (`strata --headless`): build one world, apply a script
//! once, render a screenshot through the same renderer as the window, and
//! write the statistics JSON. Lives above `render` and `editor` because it
//! composes both: the offscreen target ([`crate::render::frame::offscreen`]) draws
//! the 3D view and the editor's egui panel is painted over it.

use std::path::PathBuf;
use std::time::Instant;

use crate::camera::{Camera, frame_terrain};
use crate::collision::scripted_walk::{WalkSegment, WalkStats, run_walk, whole_grid};
use crate::collision::{CollisionCache, TerrainId, UpdateReport, WalkInput};
use crate::editor::panel::side_panel::{EditorPanel, PANEL_WIDTH_POINTS, PanelStats};
use crate::editor::tools::history_view::HistoryView;
use crate::io::world_source::{WorldSource, WorldSourceError};
use crate::pipeline::lod::LodSettings;
use crate::pipeline::seam_audit::ThrottledSeamAudit;
use crate::pipeline::stats::{LatencySummary, UploadSummary};
use crate::pipeline::{ChunkUploader, TerrainStreaming, WorldMeshes};
use crate::render::frame::egui_pass::EguiPainter;
use crate::render::frame::offscreen::{
    OffscreenError, OffscreenTarget, check_image_size, write_png,
};
use crate::render::lines::overlays::{Overlay, OverlaySet};
use crate::render::lines::residency_overlay::ResidencyView;
use crate::render::{FrameSettings, Gpu, GpuError, Renderer, ViewportRect};
use crate::script::{ReplayError, ReplayReport, ReplayTarget, Script, ScriptRunner, replay_script};
use crate::terrain::Grid;
use crate::terrain::generation::generate::GeneratorSettings;
use crate::terrain::streaming::residency::Residency;

pub use crate::render::frame::offscreen::MAX_IMAGE_SIDE;

/// Errors of a headless run.
#[derive(Debug, thiserror::Error)]
pub enum HeadlessError {
    /// No GPU device.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// The offscreen target could not be made, read back or written.
    #[error(transparent)]
    Offscreen(#[from] OffscreenError),
    /// The world could not be generated or imported.
    #[error(transparent)]
    World(#[from] WorldSourceError),
    /// The script could not be replayed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The script's walk failed.
    #[error("scripted walk failed: {0}")]
    Walk(String),
    /// A chunk column of a streaming world could not be loaded.
    #[error(transparent)]
    Load(#[from] crate::terrain::streaming::column_source::SourceError),
    /// A streaming world's first view did not load and mesh in time.
    #[error("the first view of the streaming world was not ready within {0:?}")]
    StartupTimeout(std::time::Duration),
    /// Writing an output file failed.
    #[error("cannot write {path}: {message}")]
    Write {
        /// The output file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// The egui overlay: context, wgpu renderer, and the editor panel it shows.
struct UiOverlay {
    ctx: egui::Context,
    painter: EguiPainter,
    panel: EditorPanel,
}

/// An offscreen target plus, optionally, the editor panel drawn over it:
/// what a headless screenshot shows.
pub struct HeadlessRenderer {
    target: OffscreenTarget,
    ui: Option<UiOverlay>,
    /// Frames ended by [`HeadlessRenderer::end_undrawn_frame`] since the last flush.
    undrawn_frames: u32,
}

/// Undrawn frames between two flushes of staged uploads: often enough that
/// staging copies never pile up (half a second of uploads at 60 Hz), rarely
/// enough that a software adapter's per-submission cost stays small.
pub const UNDRAWN_FRAMES_PER_FLUSH: u32 = 30;

/// What a headless frame drew.
#[derive(Clone, Debug, Default)]
pub struct FrameReport {
    /// Chunks drawn after frustum culling.
    pub drawn_chunks: usize,
    /// Triangles drawn.
    pub drawn_triangles: usize,
    /// Draw calls (terrain chunks, horizon nodes, water).
    pub draws: usize,
    /// Wall time from recording to pixels on the CPU, in milliseconds.
    pub render_ms: f64,
    /// The 3D viewport (the area right of the UI panel when it is drawn).
    pub viewport: Option<ViewportRect>,
}

impl HeadlessRenderer {
    /// Creates a `size_px` = `[width, height]` offscreen target on `gpu` with
    /// MSAA when supported, optionally with the egui editor panel.
    ///
    /// # Errors
    /// [`HeadlessError::Offscreen`] for a zero or oversized image.
    pub fn new(gpu: Gpu, size_px: [u32; 2], with_ui: bool) -> Result<Self, HeadlessError> {
        let target = OffscreenTarget::new(gpu, size_px)?;
        let ui = with_ui.then(|| UiOverlay {
            ctx: egui::Context::default(),
            painter: EguiPainter::new(&target.gpu().device, target.overlay_format()),
            panel: EditorPanel::default(),
        });
        Ok(HeadlessRenderer {
            target,
            ui,
            undrawn_frames: 0,
        })
    }

    /// The GPU this renderer uses.
    pub fn gpu(&self) -> &Gpu {
        self.target.gpu()
    }

    /// Ends a frame that staged meshes but drew nothing: every
    /// [`UNDRAWN_FRAMES_PER_FLUSH`] such frames, hands the uploads to the GPU
    /// and frees finished staging copies and dropped buffers (see
    /// [`OffscreenTarget::flush_uploads`]). Drawn frames submit anyway.
    pub fn end_undrawn_frame(&mut self) {
        self.undrawn_frames += 1;
        if self.undrawn_frames >= UNDRAWN_FRAMES_PER_FLUSH {
            self.undrawn_frames = 0;
            self.target.flush_uploads();
        }
    }

    /// The wrapped scene renderer.
    pub fn renderer(&mut self) -> &mut Renderer {
        self.target.renderer()
    }

    /// Image size in pixels.
    pub fn size_px(&self) -> [u32; 2] {
        self.target.size_px()
    }

    /// True when the egui panel is drawn.
    pub fn has_ui(&self) -> bool {
        self.ui.is_some()
    }

    /// The editor panel drawn into the image, when the UI is on (e.g. to show
    /// the overlays that are on as ticked boxes).
    pub fn panel_mut(&mut self) -> Option<&mut EditorPanel> {
        self.ui.as_mut().map(|ui| &mut ui.panel)
    }

    /// Uploads the chunks whose mesh changed (see [`Renderer::sync_meshes`]).
    pub fn sync_meshes(&mut self, meshes: &mut WorldMeshes) {
        self.target.renderer().sync_meshes(meshes);
    }

    /// The 3D viewport for `stats`: the area right of the editor panel when the
    /// UI is on (runs the egui pass), else the whole image.
    fn layout_ui(&mut self, stats: &PanelStats) -> (ViewportRect, Option<egui::FullOutput>) {
        let size_px = self.target.size_px();
        let full = ViewportRect::full(size_px);
        let max_texture_side = self.target.gpu().device.limits().max_texture_dimension_2d as usize;
        let Some(ui) = self.ui.as_mut() else {
            return (full, None);
        };
        let [w, h] = size_px;
        let mut output: Option<egui::FullOutput> = None;
        let mut panel_px = 0.0f32;
        // Two passes: egui lays some widgets out on the first frame it sees
        // them (sizing pass). Textures from every pass are kept.
        let mut textures = egui::TexturesDelta::default();
        for _ in 0..2 {
            let mut input = egui::RawInput {
                screen_rect: Some(egui::Rect::from_min_size(
                    egui::Pos2::ZERO,
                    egui::vec2(w as f32, h as f32),
                )),
                max_texture_side: Some(max_texture_side),
                time: Some(0.0),
                focused: true,
                ..Default::default()
            };
            if let Some(vp) = input.viewports.get_mut(&input.viewport_id) {
                vp.native_pixels_per_point = Some(1.0);
            } else {
                input.viewports.insert(
                    input.viewport_id,
                    egui::ViewportInfo {
                        native_pixels_per_point: Some(1.0),
                        ..Default::default()
                    },
                );
            }
            let panel = &mut ui.panel;
            let mut out = ui.ctx.run_pass(input, |ctx| {
                panel_px = panel.show(ctx, stats);
            });
            textures.append(std::mem::take(&mut out.textures_delta));
            output = Some(out);
        }
        if let Some(out) = output.as_mut() {
            out.textures_delta = textures;
        }
        let x = panel_px.clamp(0.0, w as f32 - 1.0).round();
        let viewport = ViewportRect {
            x,
            y: 0.0,
            width: w as f32 - x,
            height: h as f32,
        };
        (viewport, output)
    }

    /// Renders one frame and returns its pixels (RGBA8, sRGB, rows top to bottom).
    ///
    /// `camera`'s aspect is replaced by the 3D viewport's. `stats` feeds the
    /// editor panel when the UI is on.
    ///
    /// # Errors
    /// [`HeadlessError::Offscreen`] when the frame cannot be read back.
    pub fn render(
        &mut self,
        camera: &Camera,
        settings: &FrameSettings,
        stats: &PanelStats,
    ) -> Result<(image::RgbaImage, FrameReport), HeadlessError> {
        let start = Instant::now();
        let (viewport, first_ui) = self.layout_ui(stats);
        let gpu_queue = self.target.gpu().queue.clone();
        let draw = self
            .target
            .renderer()
            .prepare(&gpu_queue, camera, settings, viewport.size_px());
        // Lay the panel out again now that the frame's draw statistics are
        // known, keeping the texture updates of the first layout.
        let ui_output = match first_ui {
            Some(mut first) => {
                let stats = PanelStats {
                    drawn_chunks: draw.drawn_chunks,
                    drawn_nodes: (draw.drawn_nodes, draw.drawn_node_triangles),
                    ..stats.clone()
                };
                let (_, second) = self.layout_ui(&stats);
                second.map(|mut second| {
                    let mut textures = std::mem::take(&mut first.textures_delta);
                    textures.append(std::mem::take(&mut second.textures_delta));
                    second.textures_delta = textures;
                    second
                })
            }
            None => None,
        };
        let size_px = self.target.size_px();
        let ui = self.ui.as_mut();
        let img = self
            .target
            .render_frame(viewport, |gpu, encoder, overlay_view| {
                match (ui, ui_output) {
                    (Some(ui), Some(mut out)) => {
                        out.pixels_per_point = 1.0;
                        ui.painter.paint(
                            &gpu.device,
                            &gpu.queue,
                            encoder,
                            overlay_view,
                            size_px,
                            &ui.ctx,
                            &mut out,
                        )
                    }
                    _ => Vec::new(),
                }
            })?;
        Ok((
            img,
            FrameReport {
                drawn_chunks: draw.drawn_chunks,
                drawn_triangles: draw.triangles(),
                draws: draw.draws(),
                render_ms: start.elapsed().as_secs_f64() * 1e3,
                viewport: Some(viewport),
            },
        ))
    }
}

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
    /// Level changes cross-fade (false with `--no-morph`).
    pub level_fades: bool,
}

/// `{"p50", "max", "count"}` of LOD scan times, ms.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct ScanSummary {
    /// Median scan time.
    pub p50: f64,
    /// Longest scan.
    pub max: f64,
    /// Scans run.
    pub count: usize,
}

/// Statistics of a headless run, written by `--stats-json`.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct RenderStats {
    /// Adapter name and backend.
    pub adapter: String,
    /// Stored grid chunks.
    pub chunks: usize,
    /// Chunks with a non-empty mesh.
    pub nonempty_chunks: usize,
    /// Content hash of the grid after the script ([`Grid::content_hash`]),
    /// 16 hex digits: equal for equal cells, whatever the camera.
    pub world_hash: String,
    /// Stored chunks with uniform storage.
    pub uniform_chunks: usize,
    /// `Grid::heap_bytes()`.
    pub grid_bytes: usize,
    /// Volume of the grid's stored-chunk bounds, in cells.
    pub world_volume_cells: u64,
    /// Vertices over all meshes.
    pub vertices: usize,
    /// Triangles over all meshes.
    pub triangles: usize,
    /// Full-world meshing wall time, ms.
    pub mesh_ms: f64,
    /// World generation or import wall time, ms.
    pub world_ms: f64,
    /// A recipe world's stage times and audits (`None` for other worlds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<crate::terrain::recipe::cook::CookReport>,
    /// GPU upload of all chunk meshes at start-up, ms.
    pub initial_upload_ms: f64,
    /// Chunks with a meshing request not yet visible (after the script, if any).
    pub queue_len: usize,
    /// Results published (uploaded) in the last replayed frame.
    pub results_published_last_frame: usize,
    /// Upload time of the last replayed frame, ms.
    pub upload_ms_last_frame: f64,
    /// Edit to the presentation of the first frame that shows it (any
    /// level, previews included; upload and draw included), over the
    /// scripted session, ms.
    pub edit_to_visible_ms: LatencySummary,
    /// Edit to the presentation of the first frame that shows it at every
    /// chunk's requested level of detail, ms.
    pub edit_to_full_detail_ms: LatencySummary,
    /// Edit to the publication step that made it visible (meshing and
    /// upload, without the frame's draw), ms.
    pub edit_to_published_ms: LatencySummary,
    /// Draw-and-present time of the replayed frames that showed something new, ms.
    pub present_ms: UploadSummary,
    /// Replayed frames drawn and presented (those that showed something
    /// new; 0 with `--no-replay-frames`).
    pub presented_frames: u32,
    /// Whether those frames were drawn (false with `--no-replay-frames`:
    /// latencies then end at publication).
    pub replay_frames_drawn: bool,
    /// Per-frame upload time over frames that uploaded, ms.
    pub upload_ms: UploadSummary,
    /// Most results published in one frame.
    pub max_results_per_frame: usize,
    /// Triangles (surface and skirts) of the shown meshes per level of detail.
    pub triangles_by_level: Vec<usize>,
    /// Draw calls of the final frame (terrain chunks, horizon nodes, water).
    pub draws: usize,
    /// Triangles the final frame drew (terrain chunks, horizon nodes, water).
    pub drawn_triangles: usize,
    /// Chunks with a mesh per level of detail.
    pub chunks_by_level: [usize; 4],
    /// LOD scan time over the run, ms.
    pub lod_scan_ms: ScanSummary,
    /// From an edit to the first frame whose horizon nodes all show it, ms
    /// (spec §13; empty without a horizon or edits).
    pub edit_to_horizon_ms: ScanSummary,
    /// Horizon nodes built and kept at the end.
    pub horizon_nodes: usize,
    /// Boundary vertices on which equal-level neighbours disagree, plus
    /// the gaps in low-poly walls (must be 0).
    pub seam_audit_mismatches: usize,
    /// Audits of the shown low-poly meshes: triangle census per
    /// chunk, lattice, winding, downward faces, non-finite vertices and
    /// wall gaps; absent in the smooth style.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub low_poly_audit: Option<crate::pipeline::lowpoly_audit::LowPolyAudit>,
    /// Worker results that arrived from the workers (kept or dropped).
    pub meshed_results: usize,
    /// Of those, coarser editor-only previews.
    pub preview_results: usize,
    /// Worker results dropped on arrival because a better one was already
    /// shown or held (work thrown away).
    pub stale_results: usize,
    /// Worker items skipped before meshing because a better result already existed.
    pub skipped_items: usize,
    /// Results shown without an upload because they equal the drawn mesh.
    pub unchanged_results: usize,
    /// Frames replayed by `--script` (0 without a script).
    pub script_frames: u32,
    /// Strokes of the script that changed the grid.
    pub script_edits: usize,
    /// Wall time of the replay, ms.
    pub script_ms: f64,
    /// Undo steps the replay's history holds at the end.
    pub history_steps: usize,
    /// Bytes of chunk storage only the history holds at the end.
    pub history_bytes: usize,
    /// Most bytes the history held at any point of the replay.
    pub history_peak_bytes: usize,
    /// History steps dropped to stay within the budget.
    pub history_dropped_steps: usize,
    /// The history budget, bytes.
    pub history_budget_bytes: usize,
    /// One frame: record, render, read back, ms.
    pub render_ms: f64,
    /// Chunks drawn after frustum culling.
    pub drawn_chunks: usize,
    /// MSAA samples used.
    pub msaa_samples: u32,
    /// Image size in pixels.
    pub width: u32,
    /// Image size in pixels.
    pub height: u32,
    /// Camera used: position (studs), yaw and pitch (degrees).
    pub camera: [f64; 5],
    /// Whole-world collision cache figures (with `--stats-json`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collision: Option<CollisionSummary>,
    /// The script's walk, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub walk: Option<crate::collision::scripted_walk::WalkStats>,
    /// Residency figures of a streaming world (spec §12).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streaming: Option<StreamingSummary>,
    /// One entry per path the script applied, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<crate::terrain::path::spec::PathReport>,
}

/// `"streaming"` in `--stats-json`: residency of a streaming world.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct StreamingSummary {
    /// Resident chunks at the end.
    pub resident_chunks: usize,
    /// Resident columns at the end.
    pub resident_columns: usize,
    /// Resident bytes (chunk cells and CPU mesh copies) at the end.
    pub resident_bytes: usize,
    /// Highest resident bytes over the run.
    pub peak_resident_bytes: usize,
    /// The memory budget, bytes.
    pub budget_bytes: usize,
    /// Columns read from a file or the edit store.
    pub loaded: u64,
    /// Columns generated.
    pub generated: u64,
    /// Columns evicted.
    pub evicted: u64,
    /// Edited columns written to the backing store before eviction.
    pub spilled: u64,
    /// Finished loads dropped as stale.
    pub stale_loads: u64,
    /// Per-column load time on a worker, ms.
    pub load_ms: LatencySummary,
    /// Frames after the start-up in which non-empty ground within the draw
    /// distance had no mesh at any level (the whole draw distance is
    /// checked, not only the frustum).
    pub frames_with_missing_chunks: usize,
    /// Of those, frames after the replay's first 60.
    pub frames_with_missing_chunks_after_60: usize,
    /// Frames streamed (start-up and replay).
    pub frames: u64,
    /// Frames of the start-up until the first view was complete.
    pub startup_frames: u64,
    /// Wall time of that start-up, ms.
    pub startup_ms: f64,
    /// Columns the script's edits touched.
    pub edited_columns: usize,
    /// Content hash of those columns' cells at the end (loaded back if they
    /// were evicted), 16 hex digits: equal runs of the same edits agree
    /// whatever the camera did in between.
    pub edited_columns_hash: String,
}

impl StreamingSummary {
    /// The summary of a streamed run; loads the edited columns back (if
    /// evicted) to hash them.
    ///
    /// # Errors
    /// [`HeadlessError::Load`] when an edited column cannot be loaded back.
    fn of(
        streaming: &mut TerrainStreaming,
        grid: &mut Grid,
        startup_frames: u64,
        startup_ms: f64,
    ) -> Result<Option<Self>, HeadlessError> {
        let frames_missing = streaming.frames_with_missing_chunks.clone();
        let frames = streaming.streamed_frames;
        let Some(r) = streaming.residency.as_mut() else {
            return Ok(None);
        };
        r.sync_edits(grid);
        let edited = r.ever_edited_columns();
        let before_reload = (r.resident_bytes(), r.stats.peak_resident_bytes);
        r.load_now(grid, edited.iter().copied())?;
        let edited_hash =
            Grid::from_chunks(edited.iter().flat_map(|c| grid.column_chunks(*c))).content_hash();
        let mut load = crate::pipeline::stats::Samples::default();
        for &v in &r.stats.load_ms {
            load.push(v);
        }
        Ok(Some(StreamingSummary {
            resident_chunks: grid.chunk_count(),
            // Columns outside the world are resident (empty) only so edge
            // chunks can be meshed: not counted.
            resident_columns: grid
                .resident_columns()
                .filter(|c| !r.is_outside(*c))
                .count(),
            // As before the edited columns were loaded back for the hash.
            resident_bytes: before_reload.0,
            peak_resident_bytes: before_reload.1,
            budget_bytes: r.budget_bytes(),
            loaded: r.stats.loaded,
            generated: r.stats.generated,
            evicted: r.stats.evicted,
            spilled: r.stats.spilled,
            stale_loads: r.stats.stale_loads,
            load_ms: LatencySummary::of(&mut load),
            frames_with_missing_chunks: frames_missing
                .iter()
                .filter(|&&f| f >= startup_frames)
                .count(),
            frames_with_missing_chunks_after_60: frames_missing
                .iter()
                .filter(|&&f| f >= startup_frames + 60)
                .count(),
            frames,
            startup_frames,
            startup_ms,
            edited_columns: edited.len(),
            edited_columns_hash: format!("{edited_hash:016x}"),
        }))
    }
}

/// Longest a streaming start-up may take to load and mesh its first view.
pub const STREAMING_STARTUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// Runs frames (stream, mesh, publish; nothing drawn) until the view of
/// `camera_pos_world` is resident and meshed: the start-up of a streaming
/// world, whose first frame has nothing yet. Returns the frames it took.
///
/// # Errors
/// [`HeadlessError::Walk`]-free: only [`HeadlessError::StartupTimeout`].
fn settle_streaming(
    streaming: &mut TerrainStreaming,
    grid: &mut Grid,
    meshes: &mut WorldMeshes,
    camera: &Camera,
    headless: &mut HeadlessRenderer,
) -> Result<u64, HeadlessError> {
    let camera_pos_world = camera.pos_world;
    let start = Instant::now();
    let mut frames = 0;
    loop {
        streaming.stream_columns(grid, meshes, camera_pos_world);
        if let Some(e) = streaming
            .residency
            .as_ref()
            .and_then(|r| r.first_load_error())
        {
            return Err(HeadlessError::Load(e.clone()));
        }
        let mut uploader = headless.renderer().uploader();
        streaming.begin_frame(grid, meshes, camera_pos_world, &mut uploader);
        streaming.publish(&mut uploader, meshes);
        headless.end_undrawn_frame();
        frames += 1;
        if streaming.is_view_settled() && streaming.pipeline.is_idle() && streaming.lod.is_settled()
        {
            if streaming.is_budget_limited() {
                log::warn!(
                    "the memory budget holds only part of the view: {} columns wait",
                    streaming.last_waiting_columns()
                );
            }
            let mut uploader = headless.renderer().uploader();
            streaming.horizon_frame_settled(grid, meshes, camera, &mut uploader);
            return Ok(frames);
        }
        if start.elapsed() > STREAMING_STARTUP_TIMEOUT {
            return Err(HeadlessError::StartupTimeout(STREAMING_STARTUP_TIMEOUT));
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Collision figures of the whole world (`"collision"` in `--stats-json`).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct CollisionSummary {
    /// Colliders (non-empty chunks).
    pub colliders: usize,
    /// Triangles before flat-patch reduction.
    pub triangles_before_reduction: u64,
    /// Triangles after reduction.
    pub triangles: u64,
    /// `triangles_before_reduction / triangles`.
    pub reduction_ratio: f64,
    /// Building every collider (parallel), ms.
    pub build_ms: f64,
    /// The update after the script's edits: chunks rebuilt and ms (0 without edits).
    pub last_rebuild_chunks: usize,
    /// See `last_rebuild_chunks`.
    pub last_rebuild_ms: f64,
}

/// Builds the collision cache of the whole `grid`; `None` (logged) when the
/// world is larger than a cache region may be.
fn world_collision(
    cache: &mut crate::collision::CollisionCache,
    grid: &Grid,
) -> Option<crate::collision::UpdateReport> {
    let region = grid.bounds_cells()?.expanded(1);
    match cache.update(grid, crate::collision::TerrainId(0), region) {
        Ok(r) => Some(r),
        Err(e) => {
            log::warn!("collision statistics skipped: {e}");
            None
        }
    }
}

/// The generator a world source was made by (serves the script's
/// `generate` entries), `None` for imported or loaded worlds.
pub fn generator_of(world: &WorldSource) -> Option<GeneratorSettings> {
    match world {
        WorldSource::Generated(g) => Some(g.clone()),
        _ => None,
    }
}

/// Builds `world`, meshes it, replays the script once, renders one frame
/// and writes the PNG (and the statistics JSON when asked). The whole
/// `--headless --screenshot` path for a world given by its source.
///
/// # Errors
/// [`HeadlessError`] for GPU, world, readback or file errors.
pub fn render_screenshot(
    world: &WorldSource,
    options: &ScreenshotOptions,
) -> Result<RenderStats, HeadlessError> {
    check_image_size(options.size_px)?;
    let world_start = Instant::now();
    let (grid, generation) = world.build_with_report(&crate::progress::Progress::new())?;
    let world_ms = world_start.elapsed().as_secs_f64() * 1e3;
    let (mut stats, _) = render_world(options, grid, generator_of(world))?;
    stats.world_ms = world_ms;
    stats.generation = generation;
    if let Some(path) = &options.stats_json {
        write_stats_json(path, &stats)?;
    }
    Ok(stats)
}

/// Draws the frames of a replay that show something new, at the output
/// size with the output's overlays and panel (read back, so a frame counts
/// as presented once the GPU has finished it).
struct HeadlessReplayTarget<'a> {
    headless: &'a mut HeadlessRenderer,
    options: &'a ScreenshotOptions,
    /// Panel figures of the world before the replay (intermediate frames
    /// show the panel, not up-to-date statistics).
    panel: PanelStats,
}

impl ReplayTarget for HeadlessReplayTarget<'_> {
    fn uploader(&mut self) -> Box<dyn ChunkUploader + '_> {
        Box::new(self.headless.renderer().uploader())
    }

    fn present(
        &mut self,
        frame: u32,
        meshes: &WorldMeshes,
        camera: &Camera,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        if !self.options.replay_frames {
            self.headless.end_undrawn_frame();
            return Ok(());
        }
        let mut settings = FrameSettings::for_camera(camera, meshes.bounds_world());
        settings.overlays = self.options.overlays;
        settings.time_secs = self.options.time_secs;
        settings.low_poly = self.options.lod.style.is_low_poly();
        let (image, _) = self
            .headless
            .render(camera, &settings, &self.panel)
            .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)?;
        if let Some(dir) = &self.options.record_dir {
            crate::render::frame::offscreen::write_png(
                &super::recording::recorded_frame_path(dir, frame),
                &image,
            )
            .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)?;
        }
        Ok(())
    }

    fn presents_every_frame(&self) -> bool {
        self.options.replay_frames && self.options.record_dir.is_some()
    }
}

/// `{"last", "p50", "p99", "max"}` of per-frame times, ms.
fn present_summary(values_ms: &[f64]) -> UploadSummary {
    let mut samples = crate::pipeline::stats::Samples::default();
    for &v in values_ms {
        samples.push(v);
    }
    UploadSummary::of(&mut samples)
}

/// Renders `grid` (already built) after
/// replaying `options.script` once on it with `generator` serving
/// `generate`, writes the PNG, and returns the statistics (without
/// `world_ms`, and without writing the JSON) and the edited grid, so the
/// caller can save or export the very world the screenshot shows.
///
/// # Errors
/// [`HeadlessError`] for GPU, replay, readback or file errors.
pub fn render_world(
    options: &ScreenshotOptions,
    grid: Grid,
    generator: Option<GeneratorSettings>,
) -> Result<(RenderStats, Grid), HeadlessError> {
    render_world_streamed(options, grid, generator, None).map(|(stats, grid, _)| (stats, grid))
}

/// [`render_world`] for a streaming world too: with `residency`, `grid`
/// is its (streaming) grid, the first view is loaded and meshed before the
/// script, every replayed frame streams, and the residency comes back with
/// the grid (to save what it holds).
///
/// # Errors
/// As [`render_world`], and [`HeadlessError::StartupTimeout`].
pub fn render_world_streamed(
    options: &ScreenshotOptions,
    mut grid: Grid,
    generator: Option<GeneratorSettings>,
    residency: Option<Residency>,
) -> Result<(RenderStats, Grid, Option<Residency>), HeadlessError> {
    let [w, h] = options.size_px;
    check_image_size(options.size_px)?;
    // Frame the 3D viewport, which is narrower when the panel is drawn.
    let panel_w = if options.ui { PANEL_WIDTH_POINTS } else { 0.0 };
    let aspect = (w as f32 - panel_w).max(1.0) / h as f32;
    let streamed = residency.is_some();
    let first_key =
        options
            .script
            .as_ref()
            .and_then(|s| s.camera_at(0.0))
            .map(|[x, y, z, yaw, pitch]| {
                Camera::new(glam::DVec3::new(x, y, z), yaw as f32, pitch as f32)
            });
    let mut camera = first_key
        .or(options.camera)
        .unwrap_or_else(|| match &generator {
            Some(g) if streamed => streaming_default_camera(g),
            _ => frame_terrain(&grid, None, aspect),
        });
    camera.aspect = aspect;
    let gpu = Gpu::new_headless()?;
    let adapter = gpu.adapter_summary();
    let mut headless = HeadlessRenderer::new(gpu, options.size_px, options.ui)?;
    headless
        .renderer()
        .level_fades_mut()
        .set_enabled(options.level_fades);
    let (mut streaming, mut meshes, startup_frames, startup_ms) = match residency {
        Some(residency) => {
            let start = Instant::now();
            let mut streaming = TerrainStreaming::streaming(options.lod, residency);
            let mut meshes = WorldMeshes::default();
            let frames = settle_streaming(
                &mut streaming,
                &mut grid,
                &mut meshes,
                &camera,
                &mut headless,
            )?;
            (
                streaming,
                meshes,
                frames,
                start.elapsed().as_secs_f64() * 1e3,
            )
        }
        None => {
            let mut streaming = TerrainStreaming::new(options.lod);
            let meshes = streaming.build_initial(&grid, camera.pos_world);
            (streaming, meshes, 0, 0.0)
        }
    };
    if let Some(e) = streaming
        .residency
        .as_ref()
        .and_then(|r| r.first_load_error())
    {
        return Err(HeadlessError::Load(e.clone()));
    }
    let mesh_ms = if streamed {
        startup_ms
    } else {
        meshes.last_mesh_ms
    };
    let upload_start = Instant::now();
    headless.sync_meshes(&mut meshes);
    let initial_upload_ms = upload_start.elapsed().as_secs_f64() * 1e3;

    let mut collision_cache = CollisionCache::new();
    let collision_build = options
        .stats_json
        .as_ref()
        .and_then(|_| world_collision(&mut collision_cache, &grid));
    if let Some(dir) = &options.record_dir {
        // A new recording replaces an earlier one in the same folder.
        let removed = super::recording::clear_recording(dir).map_err(|e| HeadlessError::Write {
            path: dir.clone(),
            message: format!("cannot clear the earlier recording: {e}"),
        })?;
        if removed > 0 {
            log::info!("--record: removed {removed} frames of an earlier recording");
        }
    }
    let mut runner = options
        .script
        .as_ref()
        .map(|script| ScriptRunner::for_script(script, &grid, generator));
    let replay = match (&options.script, runner.as_mut()) {
        (Some(script), Some(runner)) => {
            let mut target = HeadlessReplayTarget {
                panel: PanelStats::of_world(&adapter, &grid, &meshes, &camera),
                headless: &mut headless,
                options,
            };
            replay_script(
                script,
                &mut grid,
                &mut meshes,
                &mut streaming,
                &mut target,
                camera,
                runner,
            )?
        }
        _ => ReplayReport::default(),
    };
    if let Some(c) = replay.final_camera {
        camera = c;
    }
    if let Some(e) = streaming
        .residency
        .as_ref()
        .and_then(|r| r.first_load_error())
    {
        return Err(HeadlessError::Load(e.clone()));
    }
    let collision =
        collision_build.and_then(|build| collision_summary(&mut collision_cache, &grid, &build));
    let walk = match options.script.as_ref() {
        Some(script) => scripted_walk(script, &mut grid, streaming.residency.as_mut())?,
        None => None,
    };
    let mut settings = FrameSettings::for_camera(&camera, meshes.bounds_world());
    settings.overlays = options.overlays;
    settings.time_secs = options.time_secs;
    settings.low_poly = streaming.style().is_low_poly();
    {
        // The final view's horizon, complete (a replay may have ended mid-flight).
        let mut uploader = headless.renderer().uploader();
        streaming.horizon_frame_settled(&grid, &meshes, &camera, &mut uploader);
    }
    // The audit of the shown meshes feeds the statistics, the panel and,
    // with `--overlay seam-audit`, the markers.
    let mut seam_audit = ThrottledSeamAudit::default();
    let revision = headless.renderer().mesh_revision();
    seam_audit.update(
        &meshes,
        streaming.horizon.as_ref(),
        revision,
        Instant::now(),
    );
    let seam_audit_mismatches = seam_audit.mismatches().len();
    settings.seam_markers_world = seam_audit.mismatch_positions_world();
    if let Some(panel) = headless.panel_mut() {
        panel.overlays = options.overlays;
        panel.lod = options.lod;
    }
    let streaming_panel = super::window_stream::WindowStream::panel_stats(&streaming, &grid, None);
    if options.overlays.contains(Overlay::Residency) {
        let view = streaming
            .residency
            .as_ref()
            .map(|r| ResidencyView::of(r, camera.pos_world));
        settings.residency = view;
    }
    let pipeline = &mut streaming.pipeline;
    let mut panel = PanelStats::of_world(&adapter, &grid, &meshes, &camera);
    panel.add_pipeline(pipeline);
    panel.add_lod(&meshes, &streaming.lod);
    panel.seam_mismatches = Some(seam_audit_mismatches);
    if let Some(runner) = &runner {
        panel.history = HistoryView::of(runner.history());
    }
    if options.overlays.contains(Overlay::Wireframe) {
        log::info!(
            "wireframe overlay drawn as {}",
            headless.renderer().wireframe_mode().name()
        );
    }
    panel.streaming = streaming_panel;
    // The screenshot shows the settled view, not a level change half faded.
    headless.renderer().finish_fades();
    let (img, report) = headless.render(&camera, &settings, &panel)?;
    let node_triangles = headless.renderer().node_buffers().triangles_by_level();
    write_png(&options.output, &img)?;

    let (vertices, triangles) = meshes.totals();
    let out = RenderStats {
        adapter,
        chunks: grid.chunk_count(),
        nonempty_chunks: meshes.len(),
        world_hash: format!("{:016x}", grid.content_hash()),
        uniform_chunks: grid.uniform_chunk_count(),
        grid_bytes: grid.heap_bytes(),
        world_volume_cells: grid.bounds_cells().map_or(0, |b| b.volume_cells()),
        vertices,
        triangles,
        mesh_ms,
        world_ms: 0.0,
        generation: None,
        initial_upload_ms,
        queue_len: pipeline.queue_len(),
        results_published_last_frame: pipeline.stats.results_last_frame,
        upload_ms_last_frame: pipeline.stats.upload_ms_last_frame,
        edit_to_visible_ms: pipeline.stats.latency_summary(),
        edit_to_full_detail_ms: pipeline.stats.full_detail_summary(),
        edit_to_published_ms: pipeline.stats.published_summary(),
        present_ms: present_summary(&replay.present_ms),
        presented_frames: if options.replay_frames {
            replay.presented_frames
        } else {
            0
        },
        replay_frames_drawn: options.replay_frames,
        upload_ms: pipeline.stats.upload_summary(),
        max_results_per_frame: pipeline.stats.max_results_per_frame,
        triangles_by_level: {
            let mut levels = meshes.triangles_by_level().to_vec();
            levels.resize(node_triangles.len().max(levels.len()), 0);
            for (l, t) in node_triangles.iter().enumerate().skip(levels.len().min(4)) {
                levels[l] = *t;
            }
            levels
        },
        draws: report.draws,
        drawn_triangles: report.drawn_triangles,
        seam_audit_mismatches,
        low_poly_audit: crate::pipeline::lowpoly_audit::audit(
            meshes.iter().map(|(c, m)| (c, &**m)),
        ),
        chunks_by_level: meshes.chunks_by_level(),
        lod_scan_ms: ScanSummary {
            p50: streaming.lod_scan_ms.quantile(0.5),
            max: streaming.lod_scan_ms.max(),
            count: streaming.lod_scan_ms.count(),
        },
        edit_to_horizon_ms: streaming
            .horizon
            .as_mut()
            .map_or_else(ScanSummary::default, |h| ScanSummary {
                p50: h.edit_to_horizon_ms.quantile(0.5),
                max: h.edit_to_horizon_ms.max(),
                count: h.edit_to_horizon_ms.count(),
            }),
        horizon_nodes: streaming.horizon.as_ref().map_or(0, |h| h.built_count()),
        meshed_results: pipeline.stats.meshed_results,
        preview_results: pipeline.stats.preview_results,
        stale_results: pipeline.stats.stale_results,
        skipped_items: pipeline.skipped_items(),
        unchanged_results: pipeline.stats.unchanged_results,
        script_frames: replay.frames,
        script_edits: replay.edits,
        script_ms: replay.replay_ms,
        history_steps: replay.history_steps,
        history_bytes: replay.history_bytes,
        history_peak_bytes: replay.history_peak_bytes,
        history_dropped_steps: replay.history_dropped_steps,
        history_budget_bytes: replay.history_budget_bytes,
        render_ms: report.render_ms,
        drawn_chunks: report.drawn_chunks,
        msaa_samples: headless.renderer().sample_count(),
        width: w,
        height: h,
        camera: [
            camera.pos_world.x,
            camera.pos_world.y,
            camera.pos_world.z,
            camera.yaw_deg as f64,
            camera.pitch_deg as f64,
        ],
        collision,
        walk,
        streaming: StreamingSummary::of(&mut streaming, &mut grid, startup_frames, startup_ms)?,
        paths: replay.paths,
    };
    Ok((out, grid, streaming.residency.take()))
}

/// The camera a streaming world opens with when none is given: over the
/// world's centre, 1200 studs up, looking north and 25° down; a world at most
/// [`FRAMED_WORLD_MAX_STUDS`] across is framed whole instead (from the centre
/// that view would look past its edge).
pub fn streaming_default_camera(generator: &GeneratorSettings) -> Camera {
    let side = f64::from(generator.size_cells)
        * f64::from(crate::terrain::storage::coords::CELL_SIZE_STUDS);
    streaming_overview_camera(side, side, 1200.0)
}

/// Widest world (studs, either axis) that a streaming world's default camera
/// frames whole: the default world's size.
pub const FRAMED_WORLD_MAX_STUDS: f64 = 4096.0;

/// The default camera over a streaming world of `size_x_studs` ×
/// `size_z_studs` (origin at 0): `height_studs` above its centre, looking
/// north and 25° down, or, for a world at most [`FRAMED_WORLD_MAX_STUDS`]
/// across, [`Camera::frame_bounds`] of the world up to `height_studs`.
pub fn streaming_overview_camera(
    size_x_studs: f64,
    size_z_studs: f64,
    height_studs: f64,
) -> Camera {
    if size_x_studs.max(size_z_studs) <= FRAMED_WORLD_MAX_STUDS {
        return Camera::frame_bounds(
            glam::DVec3::ZERO,
            glam::DVec3::new(size_x_studs, height_studs * 0.5, size_z_studs),
            16.0 / 9.0,
        );
    }
    Camera::new(
        glam::DVec3::new(size_x_studs * 0.5, height_studs, size_z_studs * 0.5),
        0.0,
        -25.0,
    )
}

/// The collision figures after the script: the cache's totals and the
/// update the script's edits needed (`None` when the world was too large).
fn collision_summary(
    cache: &mut CollisionCache,
    grid: &Grid,
    build: &UpdateReport,
) -> Option<CollisionSummary> {
    let after = world_collision(cache, grid)?;
    let c = cache.stats();
    Some(CollisionSummary {
        colliders: c.colliders,
        triangles_before_reduction: c.triangles_before_reduction,
        triangles: c.triangles,
        reduction_ratio: c.triangles_before_reduction as f64 / c.triangles.max(1) as f64,
        build_ms: build.ms,
        last_rebuild_chunks: after.rebuilt_chunks,
        last_rebuild_ms: if after.rebuilt_chunks > 0 {
            after.ms
        } else {
            0.0
        },
    })
}

/// Runs the script's walk (if it has one) on the edited `grid`; on a
/// streaming world `residency` loads the walker's ground as it goes (the
/// walker's collision is demand, spec §12).
fn scripted_walk(
    script: &Script,
    grid: &mut Grid,
    residency: Option<&mut Residency>,
) -> Result<Option<WalkStats>, HeadlessError> {
    let Some(walk) = script.walk.as_ref() else {
        return Ok(None);
    };
    let segments: Vec<_> = walk
        .steps
        .iter()
        .map(|s| WalkSegment {
            frames: s.frames,
            input: WalkInput {
                move_xz: glam::DVec2::from_array(s.move_xz),
                jump: s.jump,
            },
        })
        .collect();
    let walked = match residency {
        Some(residency) => run_walk(grid, TerrainId(0), walk.start_xz, &segments, |g, region| {
            let missing = g.missing_columns(&region);
            Ok(residency.load_now(g, missing)?)
        }),
        None => run_walk(grid, TerrainId(0), walk.start_xz, &segments, whole_grid),
    };
    walked
        .map(Some)
        .map_err(|e| HeadlessError::Walk(e.to_string()))
}

/// Writes `stats` as pretty JSON to `path`, all or nothing.
///
/// # Errors
/// [`HeadlessError::Write`] when the file cannot be written.
pub fn write_stats_json(path: &std::path::Path, stats: &RenderStats) -> Result<(), HeadlessError> {
    let err = |message: String| HeadlessError::Write {
        path: path.to_path_buf(),
        message,
    };
    let json = serde_json::to_string_pretty(stats).map_err(|e| err(e.to_string()))?;
    crate::io::write_atomically(
        path,
        |tmp| std::fs::write(tmp, json + "\n").map_err(|e| err(e.to_string())),
        |e| err(e.to_string()),
    )
}
