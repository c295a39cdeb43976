//! Offscreen rendering: screenshots without a window, for the CLI
//! (`strata --headless --screenshot out.png`), tests and CI.
//!
//! It uses the very same [`Renderer`] as the editor window (MSAA resolve into
//! an `Rgba8UnormSrgb` texture), optionally draws the editor's egui side panel
//! on top, and reads the pixels back through a buffer whose rows are padded to
//! 256 bytes as wgpu requires. Nothing here needs a display server: it runs on
//! software adapters such as llvmpipe.

use std::path::{Path, PathBuf};
use std::time::Instant;

use glam::DVec3;

use crate::camera::Camera;
use crate::editor::panel::{EditorPanel, PanelStats};
use crate::io::world_source::WorldSourceError;
use crate::pipeline::WorldMeshes;
use crate::terrain::Grid;
use crate::terrain::coords::CELL_SIZE_STUDS;

use super::egui_pass::EguiPainter;
use super::script_replay::{ReplayError, ReplayReport, replay_script};
use super::{FrameSettings, Gpu, GpuError, Renderer, ViewportRect};
use crate::editor::script::Script;
use crate::pipeline::TerrainStreaming;
use crate::pipeline::lod::LodSettings;
use crate::pipeline::stats::{LatencySummary, UploadSummary};
use crate::render::overlays::{Overlay, OverlaySet};

/// Colour format the 3D renderer draws headless frames in (a view of the
/// [`HEADLESS_STORAGE_FORMAT`] target, so MSAA resolves in linear light).
pub const HEADLESS_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;

/// Storage format of the headless target; egui draws into this non-sRGB view,
/// which is the framebuffer kind it prefers. Same bytes as [`HEADLESS_FORMAT`].
/// (On adapters without `VIEW_FORMATS`, e.g. GL, the target is
/// [`HEADLESS_FORMAT`] and egui draws into it directly.)
pub const HEADLESS_STORAGE_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// Largest accepted image side, in pixels.
pub const MAX_IMAGE_SIDE: u32 = 8192;

/// Errors of headless rendering.
#[derive(Debug, thiserror::Error)]
pub enum HeadlessError {
    /// No GPU device.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// Image size zero or too large.
    #[error("image size {0}x{1} is invalid: each side must be 1..={MAX_IMAGE_SIDE} pixels")]
    InvalidSize(u32, u32),
    /// The world could not be generated or imported.
    #[error(transparent)]
    World(#[from] WorldSourceError),
    /// The script could not be replayed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The script's walk failed.
    #[error("scripted walk failed: {0}")]
    Walk(String),
    /// Reading the rendered frame back from the GPU failed.
    #[error("GPU readback failed: {0}")]
    Readback(String),
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

/// An offscreen render target plus the renderer that draws into it.
pub struct HeadlessRenderer {
    gpu: Gpu,
    renderer: Renderer,
    size_px: [u32; 2],
    target: wgpu::Texture,
    target_view: wgpu::TextureView,
    ui_view: wgpu::TextureView,
    readback: wgpu::Buffer,
    padded_bytes_per_row: u32,
    ui: Option<UiOverlay>,
}

/// What a headless frame drew.
#[derive(Clone, Debug, Default)]
pub struct FrameReport {
    /// Chunks drawn after frustum culling.
    pub drawn_chunks: usize,
    /// Triangles drawn.
    pub drawn_triangles: usize,
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
    /// [`HeadlessError::InvalidSize`] for a zero or oversized image.
    pub fn new(gpu: Gpu, size_px: [u32; 2], with_ui: bool) -> Result<Self, HeadlessError> {
        let [w, h] = size_px;
        let max_side = gpu
            .device
            .limits()
            .max_texture_dimension_2d
            .min(MAX_IMAGE_SIDE);
        if w == 0 || h == 0 || w > max_side || h > max_side {
            return Err(HeadlessError::InvalidSize(w, h));
        }
        let samples = gpu.msaa_sample_count(HEADLESS_FORMAT);
        // Downlevel adapters (GL) cannot reinterpret a texture through another
        // view format; there egui draws into the sRGB texture directly.
        let storage_format = if gpu
            .adapter
            .get_downlevel_capabilities()
            .flags
            .contains(wgpu::DownlevelFlags::VIEW_FORMATS)
        {
            HEADLESS_STORAGE_FORMAT
        } else {
            HEADLESS_FORMAT
        };
        let renderer = Renderer::new(&gpu, HEADLESS_FORMAT, samples);
        let target = gpu.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("headless target"),
            size: wgpu::Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: storage_format,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: if storage_format == HEADLESS_FORMAT {
                &[]
            } else {
                &[HEADLESS_FORMAT]
            },
        });
        let target_view = target.create_view(&wgpu::TextureViewDescriptor {
            label: Some("headless target (sRGB view)"),
            format: Some(HEADLESS_FORMAT),
            ..Default::default()
        });
        let ui_view = target.create_view(&Default::default());
        let align = wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
        let padded_bytes_per_row = (4 * w).div_ceil(align) * align;
        let readback = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("headless readback"),
            size: padded_bytes_per_row as u64 * h as u64,
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        let ui = with_ui.then(|| UiOverlay {
            ctx: egui::Context::default(),
            painter: EguiPainter::new(&gpu.device, storage_format),
            panel: EditorPanel::default(),
        });
        Ok(HeadlessRenderer {
            gpu,
            renderer,
            size_px,
            target,
            target_view,
            ui_view,
            readback,
            padded_bytes_per_row,
            ui,
        })
    }

    /// The GPU this renderer uses.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// The wrapped scene renderer.
    pub fn renderer(&mut self) -> &mut Renderer {
        &mut self.renderer
    }

    /// Image size in pixels.
    pub fn size_px(&self) -> [u32; 2] {
        self.size_px
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
        self.renderer.sync_meshes(meshes);
    }

    /// The 3D viewport for `stats`: the area right of the editor panel when the
    /// UI is on (runs the egui pass), else the whole image.
    fn layout_ui(&mut self, stats: &PanelStats) -> (ViewportRect, Option<egui::FullOutput>) {
        let full = ViewportRect::full(self.size_px);
        let Some(ui) = self.ui.as_mut() else {
            return (full, None);
        };
        let [w, h] = self.size_px;
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
                max_texture_side: Some(self.gpu.device.limits().max_texture_dimension_2d as usize),
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
    /// [`HeadlessError::Readback`] when the frame cannot be mapped.
    pub fn render(
        &mut self,
        camera: &Camera,
        settings: &FrameSettings,
        stats: &PanelStats,
    ) -> Result<(image::RgbaImage, FrameReport), HeadlessError> {
        let start = Instant::now();
        let (viewport, first_ui) = self.layout_ui(stats);
        let draw = self
            .renderer
            .prepare(&self.gpu.queue, camera, settings, viewport.size_px());
        // Lay the panel out again now that the frame's draw statistics are
        // known, keeping the texture updates of the first layout.
        let ui_output = match first_ui {
            Some(mut first) => {
                let stats = PanelStats {
                    drawn_chunks: draw.drawn_chunks,
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
        let device = &self.gpu.device;
        let queue = &self.gpu.queue;
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("headless frame"),
        });
        self.renderer.render(
            &mut encoder,
            &self.target_view,
            self.size_px,
            Some(viewport),
        );

        let mut extra_cmds = Vec::new();
        if let (Some(ui), Some(mut out)) = (self.ui.as_mut(), ui_output) {
            out.pixels_per_point = 1.0;
            extra_cmds = ui.painter.paint(
                device,
                queue,
                &mut encoder,
                &self.ui_view,
                self.size_px,
                &ui.ctx,
                &mut out,
            );
        }

        let [w, h] = self.size_px;
        encoder.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo {
                texture: &self.target,
                mip_level: 0,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            wgpu::TexelCopyBufferInfo {
                buffer: &self.readback,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(self.padded_bytes_per_row),
                    rows_per_image: Some(h),
                },
            },
            wgpu::Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: 1,
            },
        );
        extra_cmds.push(encoder.finish());
        queue.submit(extra_cmds);

        let (tx, rx) = std::sync::mpsc::channel();
        self.readback.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| HeadlessError::Readback(e.to_string()))?;
        rx.recv()
            .map_err(|e| HeadlessError::Readback(e.to_string()))?
            .map_err(|e| HeadlessError::Readback(e.to_string()))?;
        let mut pixels = Vec::with_capacity((4 * w * h) as usize);
        {
            let view = self
                .readback
                .get_mapped_range(..)
                .map_err(|e| HeadlessError::Readback(e.to_string()))?;
            for row in view.chunks_exact(self.padded_bytes_per_row as usize) {
                pixels.extend_from_slice(&row[..(4 * w) as usize]);
            }
        }
        self.readback.unmap();
        let img = image::RgbaImage::from_raw(w, h, pixels)
            .ok_or_else(|| HeadlessError::Readback("pixel buffer has the wrong size".into()))?;
        Ok((
            img,
            FrameReport {
                drawn_chunks: draw.drawn_chunks,
                drawn_triangles: draw.drawn_triangles,
                render_ms: start.elapsed().as_secs_f64() * 1e3,
                viewport: Some(viewport),
            },
        ))
    }
}

/// World-space bounds `(min, max)` in studs of every mesh in `meshes`, or `None` when empty.
pub fn mesh_bounds_world(meshes: &WorldMeshes) -> Option<(DVec3, DVec3)> {
    let mut acc: Option<(DVec3, DVec3)> = None;
    for (coord, mesh) in meshes.iter() {
        let Some((lo, hi)) = mesh.bounds_local() else {
            continue;
        };
        let o = coord.origin_world();
        let (lo, hi) = (o + lo.as_dvec3(), o + hi.as_dvec3());
        acc = Some(match acc {
            Some((a, b)) => (a.min(lo), b.max(hi)),
            None => (lo, hi),
        });
    }
    acc
}

/// A camera framing the terrain from above at an angle (see
/// [`Camera::frame_bounds`]), using mesh bounds, else the grid's chunk bounds,
/// else a default view of the origin.
pub fn frame_terrain(grid: &Grid, meshes: &WorldMeshes, aspect: f32) -> Camera {
    let bounds = mesh_bounds_world(meshes).or_else(|| {
        grid.bounds_cells().map(|b| {
            let s = CELL_SIZE_STUDS as f64;
            (b.min.as_dvec3() * s, b.max.as_dvec3() * s)
        })
    });
    match bounds {
        Some((lo, hi)) => Camera::frame_bounds(lo, hi, aspect),
        None => Camera {
            aspect,
            ..Camera::default()
        },
    }
}

/// Frame settings whose fog suits `camera` looking at `meshes`: light haze
/// over the terrain's own extent, more when the camera is far away.
pub fn frame_settings_for(camera: &Camera, meshes: &WorldMeshes) -> FrameSettings {
    match mesh_bounds_world(meshes) {
        Some((lo, hi)) => {
            let centre = (lo + hi) * 0.5;
            let diagonal = (hi - lo).length() as f32;
            let view = centre.distance(camera.pos_world) as f32;
            FrameSettings::for_view_distance(view.max(diagonal * 0.6))
        }
        None => FrameSettings::default(),
    }
}

pub use crate::io::world_source::WorldSource;

/// Everything `strata --headless --screenshot` needs.
#[derive(Clone, Debug)]
pub struct ScreenshotOptions {
    /// PNG to write.
    pub output: PathBuf,
    /// Image size `[width, height]` in pixels.
    pub size_px: [u32; 2],
    /// The world to render.
    pub world: WorldSource,
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
    /// GPU upload of all chunk meshes at start-up, ms.
    pub initial_upload_ms: f64,
    /// Chunks with a meshing request not yet visible (after the script, if any).
    pub queue_len: usize,
    /// Results published (uploaded) in the last replayed frame.
    pub results_published_last_frame: usize,
    /// Upload time of the last replayed frame, ms.
    pub upload_ms_last_frame: f64,
    /// Edit-to-visible latency over the scripted session, ms.
    pub edit_to_visible_ms: LatencySummary,
    /// Per-frame upload time over frames that uploaded, ms.
    pub upload_ms: UploadSummary,
    /// Most results published in one frame.
    pub max_results_per_frame: usize,
    /// Triangles (surface and skirts) of the shown meshes per level of detail.
    pub triangles_by_level: [usize; 4],
    /// Chunks with a mesh per level of detail.
    pub chunks_by_level: [usize; 4],
    /// LOD scan time over the run, ms.
    pub lod_scan_ms: ScanSummary,
    /// Boundary vertices on which equal-level neighbours disagree (must be 0).
    pub seam_audit_mismatches: usize,
    /// Worker results dropped because a newer request replaced them.
    pub stale_results: usize,
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

/// Panel statistics from a grid and its meshes.
pub fn panel_stats(
    adapter: &str,
    grid: &Grid,
    meshes: &WorldMeshes,
    camera: &Camera,
) -> PanelStats {
    let (vertices, triangles) = meshes.totals();
    PanelStats {
        adapter: adapter.to_string(),
        chunks: grid.chunk_count(),
        nonempty_chunks: meshes.len(),
        drawn_chunks: 0,
        vertices,
        triangles,
        grid_bytes: grid.heap_bytes(),
        frame_ms: 0.0,
        mesh_ms: meshes.last_mesh_ms,
        camera_pos_world: camera.pos_world.to_array(),
        ..PanelStats::default()
    }
}

/// Builds the world, meshes it, renders one frame and writes the PNG (and
/// the statistics JSON when asked). The whole `--headless --screenshot` path.
///
/// # Errors
/// [`HeadlessError`] for GPU, world, readback or file errors.
pub fn render_screenshot(options: &ScreenshotOptions) -> Result<RenderStats, HeadlessError> {
    let [w, h] = options.size_px;
    if w == 0 || h == 0 || w > MAX_IMAGE_SIDE || h > MAX_IMAGE_SIDE {
        return Err(HeadlessError::InvalidSize(w, h));
    }
    let world_start = Instant::now();
    let mut grid = options.world.build()?;
    let world_ms = world_start.elapsed().as_secs_f64() * 1e3;
    // Frame the 3D viewport, which is narrower when the panel is drawn.
    let panel_w = if options.ui {
        crate::editor::panel::PANEL_WIDTH_POINTS
    } else {
        0.0
    };
    let aspect = (w as f32 - panel_w).max(1.0) / h as f32;
    let camera = options
        .camera
        .unwrap_or_else(|| frame_terrain(&grid, &WorldMeshes::default(), aspect));
    let mut streaming = TerrainStreaming::new(options.lod);
    let mut meshes = streaming.build_initial(&grid, camera.pos_world);
    let mesh_ms = meshes.last_mesh_ms;

    let gpu = Gpu::new_headless()?;
    let adapter = gpu.adapter_summary();
    let mut headless = HeadlessRenderer::new(gpu, options.size_px, options.ui)?;
    let upload_start = Instant::now();
    headless.sync_meshes(&mut meshes);
    let initial_upload_ms = upload_start.elapsed().as_secs_f64() * 1e3;

    let mut collision_cache = crate::collision::CollisionCache::new();
    let collision_build = options
        .stats_json
        .as_ref()
        .and_then(|_| world_collision(&mut collision_cache, &grid));
    let replay = match &options.script {
        Some(script) => replay_script(
            script,
            &mut grid,
            &mut meshes,
            &mut streaming,
            headless.renderer(),
            camera.pos_world,
            match &options.world {
                crate::io::world_source::WorldSource::Generated(g) => Some(g.clone()),
                _ => None,
            },
        )?,
        None => ReplayReport::default(),
    };
    let collision = collision_build.and_then(|build| {
        let after = world_collision(&mut collision_cache, &grid)?;
        let c = collision_cache.stats();
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
    });
    let walk = match options.script.as_ref().and_then(|s| s.walk.as_ref()) {
        Some(walk) => {
            let segments: Vec<_> = walk
                .steps
                .iter()
                .map(|s| crate::collision::scripted_walk::WalkSegment {
                    frames: s.frames,
                    input: crate::collision::WalkInput {
                        move_xz: glam::DVec2::from_array(s.move_xz),
                        jump: s.jump,
                    },
                })
                .collect();
            let stats = crate::collision::scripted_walk::run_walk(
                &grid,
                crate::collision::TerrainId(0),
                walk.start_xz,
                &segments,
            )
            .map_err(|e| HeadlessError::Walk(e.to_string()))?;
            Some(stats)
        }
        None => None,
    };
    let pipeline = &mut streaming.pipeline;
    let mut settings = frame_settings_for(&camera, &meshes);
    settings.overlays = options.overlays;
    settings.time_secs = options.time_secs;
    // The audit of the shown meshes feeds the statistics, the panel and,
    // with `--overlay seam-audit`, the markers.
    headless
        .renderer()
        .update_seam_audit(&meshes, Instant::now());
    let seam_audit_mismatches = headless.renderer().seam_audit().mismatches().len();
    if let Some(panel) = headless.panel_mut() {
        panel.overlays = options.overlays;
        panel.lod = options.lod;
    }
    let mut stats = panel_stats(&adapter, &grid, &meshes, &camera);
    stats.add_pipeline(pipeline);
    stats.add_lod(&meshes, &streaming.lod);
    stats.seam_mismatches = Some(seam_audit_mismatches);
    stats.history = replay.history.clone();
    if options.overlays.contains(Overlay::Wireframe) {
        log::info!(
            "wireframe overlay drawn as {}",
            headless.renderer().wireframe_mode().name()
        );
    }
    let (img, report) = headless.render(&camera, &settings, &stats)?;
    write_png(&options.output, &img)?;

    let (vertices, triangles) = meshes.totals();
    let out = RenderStats {
        adapter,
        chunks: grid.chunk_count(),
        nonempty_chunks: meshes.len(),
        uniform_chunks: grid.uniform_chunk_count(),
        grid_bytes: grid.heap_bytes(),
        world_volume_cells: grid.bounds_cells().map_or(0, |b| b.volume_cells()),
        vertices,
        triangles,
        mesh_ms,
        world_ms,
        initial_upload_ms,
        queue_len: pipeline.queue_len(),
        results_published_last_frame: pipeline.stats.results_last_frame,
        upload_ms_last_frame: pipeline.stats.upload_ms_last_frame,
        edit_to_visible_ms: pipeline.stats.latency_summary(),
        upload_ms: pipeline.stats.upload_summary(),
        max_results_per_frame: pipeline.stats.max_results_per_frame,
        triangles_by_level: meshes.triangles_by_level(),
        seam_audit_mismatches,
        chunks_by_level: meshes.chunks_by_level(),
        lod_scan_ms: ScanSummary {
            p50: streaming.lod_scan_ms.quantile(0.5),
            max: streaming.lod_scan_ms.max(),
            count: streaming.lod_scan_ms.count(),
        },
        stale_results: pipeline.stats.stale_results,
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
    };
    if let Some(path) = &options.stats_json {
        let json = serde_json::to_string_pretty(&out).map_err(|e| HeadlessError::Write {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let err = |e: std::io::Error| HeadlessError::Write {
            path: path.clone(),
            message: e.to_string(),
        };
        crate::io::write_atomically(
            path,
            |tmp| std::fs::write(tmp, json + "\n").map_err(err),
            err,
        )?;
    }
    Ok(out)
}

/// Writes `img` as an RGBA PNG, creating the parent directory if needed.
///
/// # Errors
/// [`HeadlessError::Write`] when the file cannot be written.
pub fn write_png(path: &Path, img: &image::RgbaImage) -> Result<(), HeadlessError> {
    let err = |message: String| HeadlessError::Write {
        path: path.to_path_buf(),
        message,
    };
    // All or nothing: a failed write leaves an existing file as it was.
    crate::io::write_atomically(
        path,
        |tmp| {
            img.save_with_format(tmp, image::ImageFormat::Png)
                .map_err(|e| err(e.to_string()))
        },
        |e| err(e.to_string()),
    )
}
