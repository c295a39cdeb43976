//! The headless run end to end, in named phases: frame the camera, open
//! the renderer, build (or, for a streaming world, load and mesh) the first
//! view, replay the script, walk, draw the final frame and gather the
//! statistics.

use crate::app::headless::FrameReport;
use crate::app::headless::HeadlessError;
use crate::app::headless::HeadlessRenderer;
use crate::app::headless::RenderStats;
use crate::app::headless::ScreenshotOptions;
use crate::app::headless::StreamingSummary;
use crate::app::headless::stats::collision_summary;
use crate::app::headless::stats::world_collision;
use crate::app::headless::write_stats_json;
use crate::app::sky_holes::{CoverageLog, count_hole_pixels, ground_extent};
use crate::pipeline::world_stats::WorldStats;
use crate::render::frame::frame_settings::GroundExtent;
use std::time::Instant;

use crate::camera::{Camera, frame_terrain};
use crate::collision::scripted_walk::{WalkSegment, WalkStats, run_walk, whole_grid};
use crate::collision::{CollisionCensus, TerrainId, WalkInput};
use crate::editor::panel::side_panel::{PANEL_WIDTH_POINTS, PanelStats};
use crate::editor::tools::history_view::HistoryView;
use crate::io::world::world_source::WorldSource;
use crate::pipeline::seam_audit::ThrottledSeamAudit;
use crate::pipeline::stall_watch::{StallWatch, WorkMark};
use crate::pipeline::stats::UploadSummary;
use crate::pipeline::{ChunkUploader, TerrainStreaming, WorldMeshes};
use crate::render::frame::offscreen::{check_image_size, write_png};
use crate::render::lines::overlays::Overlay;
use crate::render::lines::residency_overlay::ResidencyView;
use crate::render::{FrameSettings, Gpu};
use crate::script::{ReplayReport, ReplayTarget, Script, ScriptRunner, replay_script};
use crate::terrain::Grid;
use crate::terrain::command::document_action::WorldDocument;
use crate::terrain::generation::generate::GeneratorSettings;
use crate::terrain::streaming::residency::Residency;

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
    let built = world.build_with_report(&crate::progress::Progress::new())?;
    let (grid, generation) = (built.grid, built.generation);
    let world_ms = world_start.elapsed().as_secs_f64() * 1e3;
    // A world just made is exactly what its source makes.
    let with_base;
    let options = match (world.fresh_base(), &options.base_source) {
        (Some(base), None) => {
            with_base = ScreenshotOptions {
                base_source: Some(base),
                ..options.clone()
            };
            &with_base
        }
        _ => options,
    };
    let (mut stats, _, _) = render_world(options, grid, generator_of(world))?;
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
    /// Where the `holes` overlay expects ground.
    ground: Option<GroundExtent>,
    /// What each recorded frame showed.
    coverage: &'a mut CoverageLog,
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
        settings.ground = self.ground;
        let (image, _) = self
            .headless
            .render(camera, &settings, &self.panel)
            .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)?;
        if let Some(dir) = &self.options.record_dir {
            // Holes are counted only where the overlay knows the ground
            // (a streaming world): elsewhere it paints none.
            let holes = (settings.overlays.contains(Overlay::Holes) && self.ground.is_some())
                .then(|| count_hole_pixels(&image));
            self.coverage.record(frame, holes, Instant::now());
            crate::render::frame::offscreen::write_png(
                &crate::app::recording::recorded_frame_path(dir, frame),
                &image,
            )
            .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)?;
        }
        Ok(())
    }

    fn presents_every_frame(&self) -> bool {
        self.options.replay_frames && self.options.record_dir.is_some()
    }

    fn frame_locked(&self) -> bool {
        self.presents_every_frame() && !self.options.record_real_time
    }
}

/// `{"last", "p50", "p99", "max"}` of per-frame times, ms.
fn present_summary(values_ms: &[f64]) -> Option<UploadSummary> {
    let mut samples = crate::pipeline::stats::Samples::default();
    for &v in values_ms {
        samples.push(v);
    }
    UploadSummary::of(&mut samples)
}

/// Renders `grid` (already built) after
/// replaying `options.script` once on it with `generator` serving
/// `generate`, writes the PNG, and returns the statistics (without
/// `world_ms`, and without writing the JSON), the edited grid and the
/// script's world document (its layers; `None` without a script), so the
/// caller can save or export the very world the screenshot shows.
///
/// # Errors
/// [`HeadlessError`] for GPU, replay, readback or file errors.
pub fn render_world(
    options: &ScreenshotOptions,
    grid: Grid,
    generator: Option<GeneratorSettings>,
) -> Result<(RenderStats, Grid, Option<WorldDocument>), HeadlessError> {
    render_world_streamed(options, grid, generator, None)
        .map(|(stats, grid, _, document)| (stats, grid, document))
}

/// [`render_world`] for a streaming world too: with `residency`, `grid`
/// is its (streaming) grid, the first view is loaded and meshed before the
/// script, every replayed frame streams, and the residency comes back with
/// the grid (to save what it holds).
///
/// # Errors
/// As [`render_world`], and [`HeadlessError::Stalled`].
pub fn render_world_streamed(
    options: &ScreenshotOptions,
    grid: Grid,
    generator: Option<GeneratorSettings>,
    residency: Option<Residency>,
) -> Result<(RenderStats, Grid, Option<Residency>, Option<WorldDocument>), HeadlessError> {
    check_image_size(options.size_px)?;
    let camera = first_camera(options, &grid, generator.as_ref(), residency.is_some());
    let mut run = HeadlessRun::open(options, grid, camera, residency)?;
    let mut collision_census = CollisionCensus::new();
    let collision_build = options
        .stats_json
        .as_ref()
        .map(|_| world_collision(&mut collision_census, &run.grid));
    clear_earlier_recording(options)?;
    let (replay, runner) = run.replay(generator)?;
    run.check_loads()?;
    let collision = collision_build
        .and_then(|build| collision_summary(&mut collision_census, &run.grid, build));
    let walk = match options.script.as_ref() {
        Some(script) => scripted_walk(script, &mut run.grid, run.streaming.residency_mut())?,
        None => None,
    };
    let shown = run.draw_final(runner.as_ref())?;
    let mut stats = run.stats(&replay, &shown)?;
    stats.collision = collision;
    stats.walk = walk;
    let document = runner.and_then(|r| r.session.document_snapshot());
    Ok((stats, run.grid, run.streaming.take_residency(), document))
}

/// The camera of the first frame: the script's first keyframe, else the
/// one given, else a streaming generated world's default view, else the
/// terrain framed in the 3D viewport (narrower when the panel is drawn).
fn first_camera(
    options: &ScreenshotOptions,
    grid: &Grid,
    generator: Option<&GeneratorSettings>,
    streamed: bool,
) -> Camera {
    let [w, h] = options.size_px;
    let panel_w = if options.ui { PANEL_WIDTH_POINTS } else { 0.0 };
    let aspect = (w as f32 - panel_w).max(1.0) / h as f32;
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
        .unwrap_or_else(|| match generator {
            Some(g) if streamed => crate::camera::streaming_default_camera(g),
            _ => frame_terrain(grid, None, aspect),
        });
    camera.aspect = aspect;
    camera
}

/// A new recording replaces an earlier one in the same folder.
fn clear_earlier_recording(options: &ScreenshotOptions) -> Result<(), HeadlessError> {
    let Some(dir) = &options.record_dir else {
        return Ok(());
    };
    let removed =
        crate::app::recording::clear_recording(dir).map_err(|e| HeadlessError::Write {
            path: dir.clone(),
            message: format!("cannot clear the earlier recording: {e}"),
        })?;
    if removed > 0 {
        log::info!("--record: removed {removed} frames of an earlier recording");
    }
    Ok(())
}

/// One headless run between its phases: the world, its view and the renderer.
struct HeadlessRun<'a> {
    options: &'a ScreenshotOptions,
    grid: Grid,
    camera: Camera,
    headless: HeadlessRenderer,
    adapter: String,
    streaming: TerrainStreaming,
    meshes: WorldMeshes,
    /// Frames and wall time of a streaming world's start-up (0 otherwise).
    startup_frames: u64,
    startup_ms: f64,
    /// Meshing of the first view (the start-up of a streaming world), ms.
    mesh_ms: f64,
    initial_upload_ms: f64,
    /// What each recorded frame showed (`--record`).
    coverage: CoverageLog,
}

/// What the final frame showed.
struct FinalFrame {
    report: FrameReport,
    seam_audit_mismatches: usize,
    /// Horizon node triangles per level (index = level).
    node_triangles: Vec<usize>,
}

impl<'a> HeadlessRun<'a> {
    /// Opens the renderer and builds the first view: meshes the grid, or
    /// for a streaming world loads and meshes the view's columns first;
    /// then uploads the meshes.
    fn open(
        options: &'a ScreenshotOptions,
        mut grid: Grid,
        camera: Camera,
        residency: Option<Residency>,
    ) -> Result<HeadlessRun<'a>, HeadlessError> {
        let gpu = Gpu::new_headless()?;
        let adapter = gpu.adapter_summary();
        let mut headless = HeadlessRenderer::new(gpu, options.size_px, options.ui)?;
        headless
            .renderer()
            .level_fades_mut()
            .set_enabled(options.level_fades);
        let queue = headless.gpu().queue.clone();
        headless
            .renderer()
            .set_material_library(&queue, &options.materials);
        let streamed = residency.is_some();
        let (streaming, mut meshes, startup_frames, startup_ms) = match residency {
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
                    options.stall_limit,
                )?;
                let ms = start.elapsed().as_secs_f64() * 1e3;
                (streaming, meshes, frames, ms)
            }
            None => {
                let mut streaming = TerrainStreaming::new(options.lod);
                let meshes = streaming.build_initial(&grid, camera.pos_world);
                (streaming, meshes, 0, 0.0)
            }
        };
        let mesh_ms = if streamed {
            startup_ms
        } else {
            meshes.last_mesh_ms
        };
        let mut run = HeadlessRun {
            options,
            grid,
            camera,
            headless,
            adapter,
            streaming,
            meshes: WorldMeshes::default(),
            startup_frames,
            startup_ms,
            mesh_ms,
            initial_upload_ms: 0.0,
            coverage: CoverageLog::default(),
        };
        run.check_loads()?;
        let upload_start = Instant::now();
        run.headless.sync_meshes(&mut meshes);
        run.initial_upload_ms = upload_start.elapsed().as_secs_f64() * 1e3;
        run.meshes = meshes;
        Ok(run)
    }

    /// The first column load that failed, as an error.
    fn check_loads(&self) -> Result<(), HeadlessError> {
        match self
            .streaming
            .residency()
            .and_then(|r| r.first_load_error())
        {
            Some(e) => Err(HeadlessError::Load(e.clone())),
            None => Ok(()),
        }
    }

    /// Replays the script (if any) once; the camera ends at its last
    /// keyframe. Returns the replay's report and the runner (its history).
    fn replay(
        &mut self,
        generator: Option<GeneratorSettings>,
    ) -> Result<(ReplayReport, Option<ScriptRunner>), HeadlessError> {
        let Some(script) = self.options.script.as_ref() else {
            return Ok((ReplayReport::default(), None));
        };
        let mut runner = ScriptRunner::for_script(script, &self.grid, generator);
        runner.set_stall_limit(self.options.stall_limit);
        if let Some(source) = &self.options.base_source {
            runner.session.set_base_source(source.clone());
        }
        if let Some(document) = &self.options.document {
            runner.session.restore_document(document.clone());
        }
        let snapshot = WorldStats::read(
            &self.grid,
            &self.meshes,
            &mut self.streaming,
            self.camera.pos_world,
        );
        let mut target = HeadlessReplayTarget {
            panel: PanelStats::new(&self.adapter, snapshot),
            headless: &mut self.headless,
            options: self.options,
            ground: ground_extent(&self.streaming),
            coverage: &mut self.coverage,
        };
        let replay = replay_script(
            script,
            &mut self.grid,
            &mut self.meshes,
            &mut self.streaming,
            &mut target,
            self.camera,
            &mut runner,
        )?;
        if let Some(c) = replay.final_camera {
            self.camera = c;
        }
        Ok((replay, Some(runner)))
    }

    /// Draws the final frame (the settled view: its horizon complete, fades
    /// ended, the seam audit run) with the panel when asked, and writes the PNG.
    fn draw_final(&mut self, runner: Option<&ScriptRunner>) -> Result<FinalFrame, HeadlessError> {
        let options = self.options;
        let camera = self.camera;
        let mut settings = FrameSettings::for_camera(&camera, self.meshes.bounds_world());
        settings.overlays = options.overlays;
        settings.time_secs = options.time_secs;
        settings.low_poly = self.streaming.style().is_low_poly();
        settings.ground = ground_extent(&self.streaming);
        {
            // The final view's horizon, complete (a replay may have ended mid-flight).
            let mut uploader = self.headless.renderer().uploader();
            self.streaming
                .horizon_frame_settled(&self.grid, &self.meshes, &camera, &mut uploader);
        }
        // The audit of the shown meshes feeds the statistics, the panel and,
        // with `--overlay seam-audit`, the markers.
        let mut seam_audit = ThrottledSeamAudit::default();
        let revision = self.headless.renderer().mesh_revision();
        seam_audit.update(
            &self.meshes,
            self.streaming.horizon(),
            revision,
            Instant::now(),
        );
        let seam_audit_mismatches = seam_audit.mismatches().len();
        settings.seam_markers_world = seam_audit.mismatch_positions_world();
        if let Some(panel) = self.headless.panel_mut() {
            panel.overlays = options.overlays;
            panel.lod = options.lod;
        }
        let streaming_panel =
            crate::app::window_stream::WindowStream::panel_stats(&self.streaming, &self.grid, None);
        if options.overlays.contains(Overlay::Residency) {
            let view = self
                .streaming
                .residency()
                .map(|r| ResidencyView::of(r, camera.pos_world));
            settings.residency = view;
        }
        let snapshot = WorldStats::read(
            &self.grid,
            &self.meshes,
            &mut self.streaming,
            camera.pos_world,
        );
        let mut panel = PanelStats::new(&self.adapter, snapshot);
        panel.seam_mismatches = Some(seam_audit_mismatches);
        if let Some(runner) = runner {
            panel.history = HistoryView::of(runner.history());
            panel.layers =
                crate::editor::panel::layers_view::LayersView::of(&runner.session.document);
        }
        if options.overlays.contains(Overlay::Wireframe) {
            log::info!(
                "wireframe overlay drawn as {}",
                self.headless.renderer().wireframe_mode().name()
            );
        }
        panel.streaming = streaming_panel;
        // The screenshot shows the settled view, not a level change half faded.
        self.headless.renderer().finish_fades();
        let (img, report) = self.headless.render(&camera, &settings, &panel)?;
        let node_triangles = self.headless.renderer().node_buffers().triangles_by_level();
        write_png(&options.output, &img)?;
        Ok(FinalFrame {
            report,
            seam_audit_mismatches,
            node_triangles,
        })
    }

    /// The run's statistics (without `world_ms`, `generation`,
    /// `collision` and `walk`, which the caller fills in).
    fn stats(
        &mut self,
        replay: &ReplayReport,
        shown: &FinalFrame,
    ) -> Result<RenderStats, HeadlessError> {
        let options = self.options;
        let camera = self.camera;
        let world = WorldStats::read(
            &self.grid,
            &self.meshes,
            &mut self.streaming,
            camera.pos_world,
        );
        let pipeline = self.streaming.pipeline_mut();
        let [w, h] = options.size_px;
        let mut out = RenderStats {
            adapter: self.adapter.clone(),
            chunks: world.chunks,
            nonempty_chunks: world.nonempty_chunks,
            world_hash: format!("{:016x}", self.grid.content_hash()),
            uniform_chunks: self.grid.uniform_chunk_count(),
            grid_bytes: world.grid_bytes,
            world_volume_cells: self.grid.bounds_cells().map_or(0, |b| b.volume_cells()),
            vertices: world.vertices,
            triangles: world.triangles,
            mesh_ms: self.mesh_ms,
            initial_upload_ms: self.initial_upload_ms,
            queue_len: world.queue_len,
            results_published_last_frame: world.results_last_frame,
            upload_ms_last_frame: world.upload_ms_last_frame,
            edit_to_visible_ms: world.edit_to_visible_ms,
            edit_to_full_detail_ms: world.edit_to_full_detail_ms,
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
            triangles_by_level: levels_with_nodes(world.triangles_by_level, &shown.node_triangles),
            draws: shown.report.draws,
            drawn_triangles: shown.report.drawn_triangles,
            seam_audit_mismatches: shown.seam_audit_mismatches,
            low_poly_audit: crate::pipeline::lowpoly_audit::audit(
                self.meshes.iter().map(|(c, m)| (c, &**m)),
            ),
            chunks_by_level: world.chunks_by_level,
            merged_material_chunks: world.merged_materials.0,
            merged_materials: world.merged_materials.1,
            meshed_results: pipeline.stats.meshed_results,
            preview_results: pipeline.stats.preview_results,
            stale_results: pipeline.stats.stale_results,
            skipped_items: pipeline.skipped_items(),
            unchanged_results: pipeline.stats.unchanged_results,
            render_ms: shown.report.render_ms,
            drawn_chunks: shown.report.drawn_chunks,
            drawn_chunks_by_level: shown.report.drawn_chunks_by_level,
            msaa_samples: self.headless.renderer().sample_count(),
            width: w,
            height: h,
            camera: [
                camera.pos_world.x,
                camera.pos_world.y,
                camera.pos_world.z,
                camera.yaw_deg as f64,
                camera.pitch_deg as f64,
            ],
            paths: replay.paths.clone(),
            material_textures: Some(options.materials.memory_report()),
            ..RenderStats::default()
        };
        out.add_replay(replay);
        out.coverage = self.coverage.summary(options.record_real_time);
        out.add_lod_and_horizon(&mut self.streaming);
        out.streaming = StreamingSummary::of(
            &mut self.streaming,
            &mut self.grid,
            self.startup_frames,
            self.startup_ms,
        )?;
        Ok(out)
    }
}

/// Triangles per level: the chunk levels 0–3, then the horizon nodes'
/// levels (index = level).
fn levels_with_nodes(chunk_levels: [usize; 4], node_triangles: &[usize]) -> Vec<usize> {
    let mut levels = chunk_levels.to_vec();
    levels.resize(node_triangles.len().max(levels.len()), 0);
    for (l, t) in node_triangles.iter().enumerate().skip(levels.len().min(4)) {
        levels[l] = *t;
    }
    levels
}

/// Runs frames (stream, mesh, publish; nothing drawn) until the view of
/// `camera_pos_world` is resident and meshed: the start-up of a streaming
/// world, whose first frame has nothing yet. Returns the frames it took.
///
/// # Errors
/// [`HeadlessError::Load`], or [`HeadlessError::Stalled`] when nothing
/// progresses for `stall_limit`.
fn settle_streaming(
    streaming: &mut TerrainStreaming,
    grid: &mut Grid,
    meshes: &mut WorldMeshes,
    camera: &Camera,
    headless: &mut HeadlessRenderer,
    stall_limit: std::time::Duration,
) -> Result<u64, HeadlessError> {
    let camera_pos_world = camera.pos_world;
    let mut watch = StallWatch::new(
        "loading and meshing the first view",
        stall_limit,
        Instant::now(),
    );
    let mut frames = 0;
    loop {
        streaming.stream_columns(grid, meshes, camera_pos_world);
        if let Some(e) = streaming.residency().and_then(|r| r.first_load_error()) {
            return Err(HeadlessError::Load(e.clone()));
        }
        let mut uploader = headless.renderer().uploader();
        streaming.begin_frame(grid, meshes, camera_pos_world, &mut uploader);
        streaming.publish(&mut uploader, meshes);
        headless.end_undrawn_frame();
        frames += 1;
        if streaming.is_view_settled()
            && streaming.pipeline().is_idle()
            && streaming.lod().is_settled()
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
        watch.observe(WorkMark::of(streaming), Instant::now())?;
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
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
