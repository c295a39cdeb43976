//! One frame of the editor window, in named phases: move the camera,
//! stream columns (streaming worlds), run the UI pass (it decides the 3D
//! viewport), carry out what the File menu asked, pick the surface under
//! the cursor and run the tools, hand changed chunks to the meshing workers,
//! publish finished meshes as late as possible (just before drawing), draw
//! the 3D view and the panel, and present. [`WindowState`] holds what lives
//! only while the window does.

use std::time::Instant;

use crate::camera::Camera;
use crate::editor::files::file_jobs::ViewSetup;
use crate::editor::files::file_session::{FileSession, SessionEvent};
use crate::editor::navigation::camera_place::camera_place;
use crate::editor::navigation::fly_controls::FlyControls;
use crate::editor::navigation::walk::WalkMode;
use crate::editor::panel::side_panel::{EditorPanel, PanelStats, SeaAction};
use crate::editor::panel::ui_pointer::ui_claims_pointer;
use crate::editor::tools::box_handles::pick_tolerance_rad;
use crate::editor::tools::brush_cursor::BrushCursor;
use crate::editor::tools::history_view::HistoryView;
use crate::editor::tools::previews::ToolPreviews;
use crate::editor::tools::tool_driver::{SeaRequest, ToolDriver, ToolInput};
use crate::editor::tools::tools_panel::HANDLE_PICK_RADIUS_PX;
use crate::editor::window_ui::{ReadingWorld, UiFrame, UiScene, run_ui, tool_boxes};
use crate::pipeline::WorldMeshes;
use crate::pipeline::picking::{PickHit, pick};
use crate::pipeline::seam_audit::ThrottledSeamAudit;
use crate::pipeline::world_stats::WorldStats;
use crate::render::lines::overlays::Overlay;
use crate::render::lines::residency_overlay::ResidencyView;
use crate::render::{FrameSettings, ViewportRect};
use crate::terrain::generation::generate::GeneratorSettings;
use crate::terrain::storage::coords::CELL_SIZE_STUDS;

use super::startup_log::{PresentedView, StartupLog};
use super::window_gpu::WindowGpu;
use super::window_input::{PointerState, cursor_ray};
use super::window_stream::{PendingKind, PendingWorld, WindowStream};
use super::world::{StreamEventContext, World, WorldChange};

/// Longest ray the brush cursor is picked along, in studs.
pub const PICK_DISTANCE_STUDS: f64 = 50_000.0;

/// Everything that exists only while the window does.
pub(super) struct WindowState {
    pub(super) gpu: WindowGpu,
    pub(super) egui_ctx: egui::Context,
    pub(super) egui_state: egui_winit::State,
    pub(super) camera: Camera,
    pub(super) controls: FlyControls,
    pub(super) panel: EditorPanel,
    pub(super) viewport: ViewportRect,
    pub(super) pointer: PointerState,
    /// The meshes as they were when the current stroke began: the stroke picks
    /// against them so an Add stroke does not climb its own growth toward the camera.
    pub(super) stroke_surface: Option<WorldMeshes>,
    pub(super) hit: Option<PickHit>,
    pub(super) last_frame: Instant,
    /// When the window opened: the water animation runs on real time since then.
    pub(super) opened_at: Instant,
    pub(super) frame_ms: f32,
    /// The window title last set.
    pub(super) title: String,
    /// Walk mode and fly-camera collision.
    pub(super) walk: WalkMode,
    /// A heightmap importing as a streaming world on its own thread.
    pub(super) pending_world: Option<PendingWorld>,
    /// The paste preview's cached outline and the Flatten plane preview.
    pub(super) previews: ToolPreviews,
    /// The seam audit of the shown meshes (the `seam-audit` overlay and
    /// the panel's count), throttled.
    pub(super) seam_audit: ThrottledSeamAudit,
    /// Whether the first frame's time was logged.
    pub(super) startup: StartupLog,
    /// The command line's camera for the world [`WindowState::pending_world`]
    /// opens at start (that world's own camera otherwise).
    pub(super) startup_camera: Option<Camera>,
}

/// Time each frame spends loading the columns a waiting edit needs on the
/// frame's own thread (beyond the background loads).
const WAITING_LOADS_PER_FRAME: std::time::Duration = std::time::Duration::from_millis(120);

impl WindowState {
    /// One frame; the edit is handed to the meshing workers at once, and
    /// finished meshes are published as late as possible (just before
    /// drawing), so a small edit usually becomes visible in the frame that
    /// made it. Returns `true` when the editor should close.
    pub(super) fn frame(
        &mut self,
        world: &mut World,
        session: &mut FileSession,
        tools: &mut ToolDriver,
    ) -> bool {
        let now = Instant::now();
        session.layers = tools.session.session.document_snapshot();
        self.move_camera(world, now);
        self.stream_step(world, tools);
        // Panel first: it decides the 3D viewport.
        let stats = self.panel_stats(world, tools);
        let mut ui = self.run_ui(world, session, tools, &stats);
        self.drop_presses_the_ui_took(session.is_modal_open());
        if ui.session_events.is_empty() {
            ui.session_events
                .extend(session.poll(&mut world.grid, &self.camera, now));
        }
        let events = std::mem::take(&mut ui.session_events);
        if self.handle_session_events(world, session, tools, events) {
            ui.output.textures_delta.clear();
            return true;
        }
        let title = session.window_title(&world.grid);
        if title != self.title {
            self.gpu.window.set_title(&title);
            self.title = title;
        }
        self.egui_state.handle_platform_output(
            &self.gpu.window,
            std::mem::take(&mut ui.output.platform_output),
        );
        self.place_viewport(&ui);
        self.pick_and_edit(world, session, tools, now);
        // A material removed in the Materials window, or its undo or redo.
        if let Some(removed) = session.materials.apply_library_changes(
            &mut session.doc.meta.materials,
            &mut tools.session.session,
            &mut world.grid,
        ) {
            self.panel
                .replace_material(removed.material, removed.replacement);
        }
        // Whatever changed the grid this frame (brush, later undo or tools)
        // reaches the workers through the grid's change tracking.
        world.streaming.begin_frame(
            &world.grid,
            &mut world.meshes,
            self.camera.pos_world,
            &mut self.gpu.renderer.uploader(),
        );
        self.gpu
            .renderer
            .set_material_library(&self.gpu.gpu.queue, &session.doc.meta.materials);
        self.prepare_render(world, tools, now);
        if self.gpu.draw(&self.egui_ctx, &mut ui.output, self.viewport) {
            // Edit latencies end here: the frame that shows them is presented.
            let presented = Instant::now();
            world.streaming.pipeline_mut().frame_presented(presented);
            let drawn = self.gpu.renderer.last_draw_stats();
            let view = PresentedView {
                world_pending: self.pending_world.is_some(),
                drawn_terrain: drawn.drawn_chunks + drawn.drawn_nodes,
                missing_chunks: world
                    .streaming
                    .residency()
                    .map(|_| world.streaming.last_missing_chunks()),
            };
            self.startup.frame_presented(presented, view);
        }
        false
    }

    /// A streaming world's step: install finished loads, pin and ask for the
    /// columns a waiting edit needs, the walker's and then the view's
    /// (nearest first), evict over the budget. Never waits for a load.
    fn stream_step(&mut self, world: &mut World, tools: &ToolDriver) {
        let World {
            grid,
            meshes,
            streaming,
            stream,
        } = world;
        if let Some(ws) = stream.as_mut()
            && streaming.residency().is_some()
        {
            WindowStream::apply_budget(streaming, self.panel.memory_budget_mib);
            if let Some(residency) = streaming.residency_mut()
                && let Err(e) =
                    residency.load_now_within(grid, tools.wait.columns(), WAITING_LOADS_PER_FRAME)
            {
                log::warn!("a column the waiting edit needs did not load: {e}");
            }
            ws.stream_frame(
                streaming,
                grid,
                meshes,
                self.camera.pos_world,
                tools.wait.columns(),
                &self.walk.ground_columns(),
            );
        }
    }

    /// Carries out the File menu's events (and a finished heightmap
    /// import). Returns `true` when the editor should quit.
    fn handle_session_events(
        &mut self,
        world: &mut World,
        session: &mut FileSession,
        tools: &mut ToolDriver,
        events: Vec<SessionEvent>,
    ) -> bool {
        let context = StreamEventContext {
            budget_bytes: (self.panel.memory_budget_mib as usize) << 20,
            camera: self.camera,
        };
        for first in events {
            if self.handle_session_event(world, session, tools, first, context) {
                return true;
            }
        }
        if self.pending_world.is_some() {
            let change =
                world.finish_pending_world(&mut self.pending_world, session, context.budget_bytes);
            // The start-up camera serves the start-up world only.
            let startup_camera = if self.pending_world.is_none() {
                self.startup_camera.take()
            } else {
                None
            };
            if let WorldChange::Replaced { camera, generator } = change {
                self.world_replaced(world, tools, startup_camera.unwrap_or(camera), generator);
            }
        }
        false
    }

    /// Carries out one File menu event and the events it leads to.
    /// Returns `true` when the editor should quit.
    fn handle_session_event(
        &mut self,
        world: &mut World,
        session: &mut FileSession,
        tools: &mut ToolDriver,
        first: SessionEvent,
        context: StreamEventContext,
    ) -> bool {
        let mut event = Some(first);
        while let Some(e) = event {
            event = match e {
                SessionEvent::Quit => return true,
                SessionEvent::ReplaceWorld(loaded) => {
                    // The world asked for last wins: a streaming world still
                    // being read is dropped when it ends.
                    if let Some(pending) = &self.pending_world {
                        pending.progress().cancel();
                    }
                    let generator = loaded.meta.generator.clone();
                    let layers = loaded.report.as_ref().and_then(|r| r.document.clone());
                    let camera = world.replace_loaded(*loaded, self.camera);
                    self.world_replaced(world, tools, camera, generator);
                    if let Some(opened) = layers {
                        tools.session.session.restore_document(opened.document);
                    }
                    None
                }
                other => {
                    let region = self.panel.tools.region;
                    let document = tools.session.session.document_snapshot();
                    let (change, next) = world.on_streamed_event(
                        other,
                        session,
                        &mut self.pending_world,
                        region,
                        context,
                        document.as_ref(),
                    );
                    if let WorldChange::Replaced { camera, generator } = change {
                        self.world_replaced(world, tools, camera, generator);
                    }
                    next
                }
            };
        }
        false
    }

    /// After the world was replaced: its camera, a new history with its
    /// generator (the clipboard is kept), no stroke, hit or waiting edit,
    /// and the renderer's meshes start over.
    fn world_replaced(
        &mut self,
        world: &mut World,
        tools: &mut ToolDriver,
        camera: Camera,
        generator: Option<GeneratorSettings>,
    ) {
        tools.session.reset_for_world(generator, &world.grid);
        if let Some(stream) = &world.stream {
            // A streaming world's layers: its file's, over its columns.
            tools
                .session
                .session
                .restore_document(stream.world.document());
        }
        tools.reset_press();
        self.walk.world_replaced();
        self.camera = Camera {
            aspect: self.camera.aspect,
            ..camera
        };
        self.stroke_surface = None;
        self.pointer.end_press();
        self.hit = None;
        self.gpu.renderer.clear_meshes();
        self.gpu.renderer.sync_meshes(&mut world.meshes);
    }

    /// See [`ui_claims_pointer`].
    pub(super) fn ui_claims_pointer(&self, modal_open: bool) -> bool {
        ui_claims_pointer(
            &self.egui_ctx,
            self.pointer.cursor_px,
            self.viewport,
            modal_open,
        )
    }

    /// After this frame's egui pass (whose hover state is current): a press
    /// that landed on the UI, or while a dialog, menu or popup is open, is
    /// dropped before it reaches the tools. A stroke already under way
    /// goes on until its button is released.
    fn drop_presses_the_ui_took(&mut self, modal_open: bool) {
        let pending = self.pointer.press_pending || self.pointer.sample_requested;
        if pending
            && (self.egui_ctx.is_pointer_over_egui()
                || self.egui_ctx.egui_is_using_pointer()
                || self.ui_claims_pointer(modal_open))
        {
            self.pointer.drop_press();
        }
    }

    /// Moves the camera for the time since the last frame: walking, or
    /// flying (with optional collision).
    fn move_camera(&mut self, world: &World, now: Instant) {
        let frame_secs = now.duration_since(self.last_frame).as_secs_f32();
        self.frame_ms = frame_secs * 1e3;
        // Movement uses at most a quarter second per frame, so a stall does not teleport the camera.
        let dt_secs = frame_secs.min(0.25);
        self.last_frame = now;
        if self.walk.is_walking() {
            self.walk
                .update(&world.grid, &mut self.camera, f64::from(frame_secs));
        } else {
            let before = self.camera.pos_world;
            self.controls.update(&mut self.camera, dt_secs);
            self.walk.collide_fly(&world.grid, before, &mut self.camera);
        }
    }

    /// The figures the panel's statistics section shows this frame.
    fn panel_stats(&self, world: &mut World, tools: &ToolDriver) -> PanelStats {
        let snapshot = WorldStats::read(
            &world.grid,
            &world.meshes,
            &mut world.streaming,
            self.camera.pos_world,
        );
        let grid = &world.grid;
        let mut stats = PanelStats::new(&self.gpu.adapter, snapshot);
        stats.frame_ms = self.frame_ms;
        let draw = self.gpu.renderer.last_draw_stats();
        stats.drawn_chunks = draw.drawn_chunks;
        stats.drawn_nodes = (draw.drawn_nodes, draw.drawn_node_triangles);
        stats.camera_speed_studs_per_s = self.controls.speed_studs_per_s;
        if self.panel.overlays.contains(Overlay::SeamAudit) {
            stats.seam_mismatches = self.seam_audit.count();
        }
        stats.history = HistoryView::of(tools.session.history())
            .with_path_operations(&tools.session.session.document.stack);
        stats.layers =
            crate::editor::panel::layers_view::LayersView::of(&tools.session.session.document);
        stats.layers.base_job = tools.session.base_job_status();
        stats.has_clipboard = tools.session.session.clipboard.is_some();
        stats.streaming = WindowStream::panel_stats(
            &world.streaming,
            grid,
            tools.wait.status(|c| grid.is_column_resident(c)),
        );
        stats
    }

    /// Runs the egui pass and carries the panel's settings to the streaming
    /// state, the fades and the File menu's view setup.
    fn run_ui(
        &mut self,
        world: &mut World,
        session: &mut FileSession,
        tools: &ToolDriver,
        stats: &PanelStats,
    ) -> UiFrame {
        let ray = cursor_ray(&self.camera, self.viewport, self.pointer.cursor_px);
        let tolerance = self.handle_tolerance_rad();
        let (boxes, handles) = tool_boxes(&self.panel, &tools.session, self.hit, |region| {
            tools.session.hovered_handle(region, ray, tolerance)
        });
        let grid = &world.grid;
        let cursor_note = tools
            .wait
            .status(|c| grid.is_column_resident(c))
            .zip(self.pointer.cursor_px);
        session.export_needs_box =
            world.streaming.residency().is_some() && self.panel.tools.region.is_none();
        self.panel.lod = world.streaming.lod().settings;
        let raw_input = self.egui_state.take_egui_input(&self.gpu.window);
        let (camera, meshes) = (self.camera, &world.meshes);
        let look_at = || {
            pick(
                meshes,
                camera.pos_world,
                camera.forward(),
                PICK_DISTANCE_STUDS,
            )
            .map(|hit| hit.pos_world)
        };
        let vp = self.viewport;
        let scene = UiScene {
            stats,
            camera,
            viewport_px: [vp.x, vp.y, vp.width, vp.height],
            boxes,
            handles,
            cursor_note,
            reading_world: self.pending_world.as_ref().map(|p| ReadingWorld {
                what: match p.kind() {
                    PendingKind::Import(png) => {
                        format!("Decoding {} as a streaming world", png.display())
                    }
                    PendingKind::Open { path, .. } => format!("Opening {}", path.display()),
                },
                secs: p.elapsed_s(),
                progress: std::sync::Arc::clone(p.progress()),
            }),
            view_note: (!self.walk.is_walking())
                .then(|| {
                    camera_place(&world.grid, world.extent_xz_studs(), self.camera.pos_world).note()
                })
                .flatten(),
            look_at: &look_at,
        };
        let ui = run_ui(
            &self.egui_ctx,
            raw_input,
            session,
            &mut self.panel,
            &mut self.walk,
            &mut world.grid,
            scene,
        );
        world.streaming.lod_mut().settings = self.panel.lod;
        let fades = self.gpu.renderer.level_fades_mut();
        fades.set_paused(self.panel.fades_paused);
        if std::mem::take(&mut self.panel.fade_step_requested) {
            fades.step();
        }
        session.view = ViewSetup {
            lod: world.streaming.lod().settings,
            aspect: self.camera.aspect,
        };
        ui
    }

    /// The 3D viewport: right of the side panel, below the menu bar.
    fn place_viewport(&mut self, ui: &UiFrame) {
        let [w, h] = self.gpu.size_px();
        let ppp = ui.output.pixels_per_point;
        let panel_px = (ui.panel_points * ppp).clamp(0.0, w as f32 - 1.0);
        let bar_px = (ui.bar_points * ppp).clamp(0.0, h as f32 - 1.0);
        self.viewport = ViewportRect {
            x: panel_px,
            y: bar_px,
            width: w as f32 - panel_px,
            height: h as f32 - bar_px,
        };
        self.camera.aspect = self.viewport.width / self.viewport.height.max(1.0);
    }

    /// Picks the surface under the cursor (against the surface as it was
    /// when a stroke began) and runs one frame of the tools.
    fn pick_and_edit(
        &mut self,
        world: &mut World,
        session: &FileSession,
        tools: &mut ToolDriver,
        now: Instant,
    ) {
        if !self.pointer.sculpting {
            self.stroke_surface = None;
        } else if self.stroke_surface.is_none() {
            self.stroke_surface = Some(world.meshes.snapshot());
        }
        let surface = self.stroke_surface.as_ref().unwrap_or(&world.meshes);
        self.hit = self.pick_under_cursor(surface);
        let sea = self.panel.sea_action.take().map(|action| SeaRequest {
            fill: action == SeaAction::Fill,
            level_studs: self.panel.sea_level_studs,
            half_cells: self.panel.sea_region_half_cells,
        });
        let input = ToolInput {
            now,
            ray: cursor_ray(&self.camera, self.viewport, self.pointer.cursor_px),
            hit: self.hit,
            held: self.pointer.take_held(),
            sample_requested: std::mem::take(&mut self.pointer.sample_requested),
            focus_requested: std::mem::take(&mut self.pointer.focus_requested),
            meshing_pending: world.streaming.pipeline().pending_edits() > 0,
            handle_tolerance_rad: self.handle_tolerance_rad(),
            camera_pos_world: self.camera.pos_world,
            sea,
            world_locked: session.replacing_world() || self.pending_world.is_some(),
        };
        let brush = self.panel.brush();
        let outcome = tools.frame(&mut world.grid, &mut self.panel.tools, brush, &input);
        if outcome.end_press {
            self.pointer.end_press();
        }
        if let Some(m) = outcome.sampled {
            self.panel.material = m;
        }
        if let Some((point, distance)) = outcome.focus {
            self.camera.pos_world = point - self.camera.forward_world() * distance;
        }
    }

    /// Hands this frame's view to the renderer: residency overlay, tool
    /// previews, initial uploads and publication, the horizon, the seam
    /// audit, and the frame settings (fog, brush cursor, overlays, water time).
    fn prepare_render(&mut self, world: &mut World, tools: &ToolDriver, now: Instant) {
        let mut settings = self.frame_settings(&world.meshes, now);
        settings.ground = crate::app::sky_holes::ground_extent(&world.streaming);
        settings.residency = world
            .streaming
            .residency()
            .filter(|_| self.panel.overlays.contains(Overlay::Residency))
            .map(|r| ResidencyView::of(r, self.camera.pos_world));
        settings.previews = self.previews.frame_previews(
            &world.grid,
            &tools.session,
            &self.panel.tools,
            &self.panel.brush(),
            self.hit.as_ref(),
        );
        let renderer = &mut self.gpu.renderer;
        // Initial uploads (whole world) and pipeline publication, just before drawing.
        renderer.sync_meshes(&mut world.meshes);
        world
            .streaming
            .publish(&mut renderer.uploader(), &mut world.meshes);
        let mut camera = self.camera;
        camera.aspect =
            self.viewport.size_px()[0].max(1) as f32 / self.viewport.size_px()[1].max(1) as f32;
        world.streaming.horizon_frame(
            &world.grid,
            &world.meshes,
            &camera,
            &mut renderer.uploader(),
        );
        if self.panel.overlays.contains(Overlay::SeamAudit) {
            let revision = renderer.mesh_revision();
            self.seam_audit
                .update(&world.meshes, world.streaming.horizon(), revision, now);
        }
        settings.seam_markers_world = self.seam_audit.mismatch_positions_world();
        renderer.prepare(
            &self.gpu.gpu.queue,
            &self.camera,
            &settings,
            self.viewport.size_px(),
        );
    }

    /// This frame's settings: fog for the view, the brush cursor, the
    /// overlays and the water's animation time.
    fn frame_settings(&self, meshes: &WorldMeshes, now: Instant) -> FrameSettings {
        let mut settings = FrameSettings::for_camera(&self.camera, meshes.bounds_world());
        settings.cursor = self
            .hit
            .filter(|_| {
                self.panel.tools.active == crate::editor::tools::tools_panel::ActiveTool::Brush
            })
            .map(|hit| {
                BrushCursor {
                    centre_world: hit.pos_world,
                    radius_studs: self.panel.radius_cells * CELL_SIZE_STUDS,
                    mode: self.panel.tool,
                    shape: self.panel.tools.shape,
                    falloff: self.panel.tools.falloff,
                }
                .cursor()
            });
        settings.overlays = self.panel.overlays;
        settings.low_poly = self.panel.lod.style.is_low_poly();
        // Wrapped in f64 so the time stays precise in long sessions (the waves loop seamlessly).
        settings.time_secs = (now.duration_since(self.opened_at).as_secs_f64()
            % f64::from(crate::render::water::WAVE_LOOP_SECS)) as f32;
        settings
    }

    /// How far off the cursor ray a region handle is still grabbed, radians
    /// ([`HANDLE_PICK_RADIUS_PX`] at the view's scale).
    pub(super) fn handle_tolerance_rad(&self) -> f64 {
        pick_tolerance_rad(
            HANDLE_PICK_RADIUS_PX,
            self.camera.fov_y_deg,
            self.viewport.height,
        )
    }

    /// The surface hit under the mouse cursor, if the cursor is over the 3D view
    /// and the camera is not being turned.
    fn pick_under_cursor(&self, meshes: &WorldMeshes) -> Option<PickHit> {
        let [cx, cy] = self.pointer.cursor_px?;
        let vp = self.viewport;
        if self.controls.looking
            || cx < vp.x
            || cy < vp.y
            || cx >= vp.x + vp.width
            || cy >= vp.y + vp.height
        {
            return None;
        }
        let (origin, dir) = self
            .camera
            .ray_from_screen(cx - vp.x, cy - vp.y, vp.width, vp.height);
        pick(meshes, origin, dir, PICK_DISTANCE_STUDS)
    }
}
