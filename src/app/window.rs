//! The editor window: a winit application that owns the grid, its meshes,
//! the renderer and the egui panel, and turns input into camera motion and
//! brush edits.
//!
//! Each frame: move the camera, run the panel, pick the surface under the
//! cursor (CPU ray cast against the displayed meshes), run the current tool
//! ([`crate::editor::tools::tool_session::ToolSession`]: brush strokes sampled by distance
//! along the cursor path, region selection and paste, undo and redo, each
//! stroke or operation one history step), re-mesh exactly the chunks the
//! edits reached, upload exactly those, then draw terrain and panel.

use std::sync::Arc;
use std::time::{Duration, Instant};

use winit::application::ApplicationHandler;
use winit::dpi::LogicalSize;
use winit::event::{
    DeviceEvent, DeviceId, ElementState, MouseButton, MouseScrollDelta, WindowEvent,
};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{KeyCode, ModifiersState, PhysicalKey};
use winit::window::{Window, WindowId};

use crate::camera::{Camera, frame_terrain};
use crate::editor::tools::box_handles::pick_tolerance_rad;
use crate::editor::tools::brush_cursor::BrushCursor;
use crate::editor::tools::history_view::HistoryView;
use crate::io::world_source::{WorldSource, WorldSourceError};
use crate::pipeline::lod::LodSettings;
use crate::pipeline::seam_audit::ThrottledSeamAudit;
use crate::pipeline::{TerrainStreaming, WorldMeshes};
use crate::render::frame::egui_pass::EguiPainter;
use crate::render::lines::overlays::{Overlay, OverlaySet};
use crate::render::lines::residency_overlay::ResidencyView;
use crate::render::{FrameSettings, Gpu, GpuError, Renderer, ViewportRect};
use crate::terrain::command::edit_command::EditCommand;
use crate::terrain::command::history::DEFAULT_HISTORY_BUDGET_BYTES;
use crate::terrain::editing::brush::BRUSH_RADIUS_RANGE_CELLS;
use crate::terrain::storage::grid::Grid;

use crate::editor::files::document::{Document, RecentFiles};
use crate::editor::files::file_jobs::{LoadedWorld, PreparedView, ViewSetup};
use crate::editor::files::file_menu::new_world_streams;
use crate::editor::files::file_session::{FileSession, SessionEvent};
use crate::editor::navigation::fly_controls::FlyControls;
use crate::editor::navigation::walk::WalkMode;
use crate::editor::panel::side_panel::{EditorPanel, PanelStats, SeaAction};
use crate::editor::panel::ui_pointer::ui_claims_pointer;
use crate::editor::tools::column_wait::{ColumnWait, MAX_COLUMN_WAIT, WaitPoll, WaitingEdit};
use crate::editor::tools::previews::ToolPreviews;
use crate::editor::tools::tool_session::{ToolError, ToolSession, sample_material};
use crate::editor::tools::tools_panel::{
    ActiveTool, HANDLE_PICK_RADIUS_PX, HandleView, Shortcut, ToolRequest,
};
use crate::io::world_file::{LoadOptions, WorldFile, WorldMeta};
use crate::pipeline::picking::{PickHit, pick};

use super::window_stream::{PendingImport, WindowStream};

/// Toggles walk mode (F focuses the camera on the cursor).
pub const WALK_TOGGLE_KEY: KeyCode = KeyCode::KeyV;

/// Longest a held brush waits for its previous applications to become
/// visible before it applies the next ones anyway. While it waits, the
/// stroke's path keeps growing and is applied (at its spacing) when meshing
/// catches up, so a big brush stays under the cursor instead of queueing
/// seconds of edits.
pub const BRUSH_BACKPRESSURE_MAX: Duration = Duration::from_millis(250);

/// Longest ray the brush cursor is picked along, in studs.
pub const PICK_DISTANCE_STUDS: f64 = 50_000.0;

/// What the editor opens with.
#[derive(Clone, Debug)]
pub struct EditorOptions {
    /// The world to open.
    pub world: WorldSource,
    /// Initial camera; `None` frames the terrain.
    pub camera: Option<Camera>,
    /// Initial window size in logical pixels.
    pub window_size: [u32; 2],
    /// Initial level-of-detail settings.
    pub lod: LodSettings,
    /// Debug overlays that start ticked in the panel.
    pub overlays: OverlaySet,
    /// Stream a generated world of any size (`--stream`; worlds larger
    /// than a world built whole always stream, and so do streaming world
    /// files).
    pub stream: bool,
    /// Memory budget of a streaming world, bytes (`--memory-budget-mib`).
    pub memory_budget_bytes: usize,
}

/// Why the editor could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum EditorError {
    /// The world could not be built.
    #[error(transparent)]
    World(#[from] WorldSourceError),
    /// No display connection or event loop.
    #[error("cannot open a window: {0}")]
    EventLoop(#[from] winit::error::EventLoopError),
    /// The window could not be created.
    #[error("cannot create the window: {0}")]
    Window(#[from] winit::error::OsError),
    /// No surface for the window.
    #[error("cannot create a drawing surface: {0}")]
    Surface(#[from] wgpu::CreateSurfaceError),
    /// No GPU adapter or device.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// The surface offers no format egui can draw into.
    #[error("the window surface offers no usable colour format")]
    SurfaceFormat,
    /// A streaming world could not be made or opened.
    #[error(transparent)]
    Streaming(#[from] crate::io::streaming_file::StreamingFileError),
}

/// Opens the editor window and runs until it is closed.
///
/// # Errors
/// [`EditorError`] when the world cannot be built or no window or GPU is available.
pub fn run(options: EditorOptions) -> Result<(), EditorError> {
    let start = Instant::now();
    let [w, h] = options.window_size;
    let aspect = w.max(1) as f32 / h.max(1) as f32;
    let (grid, doc, camera, streaming, meshes, stream) = match open_streamed(&options)? {
        Some((stream, streaming, grid, doc)) => {
            // Nothing is generated before the first frame: columns load as
            // the frames ask for them.
            let camera = options.camera.unwrap_or_else(|| stream.initial_camera());
            (
                grid,
                doc,
                camera,
                streaming,
                WorldMeshes::default(),
                Some(stream),
            )
        }
        None => {
            let (grid, doc, stored_camera) = open_document(&options.world)?;
            let camera = options
                .camera
                .or(stored_camera)
                .unwrap_or_else(|| frame_terrain(&grid, None, aspect));
            let mut streaming = TerrainStreaming::new(options.lod);
            let meshes = streaming.build_initial(&grid, camera.pos_world);
            (grid, doc, camera, streaming, meshes, None)
        }
    };
    // Generate re-runs the world's own generator (also for a saved generated world).
    let generator = doc.meta.generator.clone();
    log::info!(
        "world ready in {:.0} ms ({} chunks, {} meshed{})",
        start.elapsed().as_secs_f64() * 1e3,
        grid.chunk_count(),
        meshes.len(),
        if stream.is_some() { ", streaming" } else { "" }
    );
    let event_loop = EventLoop::new()?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let mut session = FileSession::new(doc, RecentFiles::load_default());
    session.offer_recovery_if_newer();
    WindowStream::offer_orphaned_recovery(&mut session);
    let mut app = App {
        session,
        options: EditorOptions {
            camera: Some(camera),
            ..options
        },
        grid,
        meshes,
        streaming,
        stream,
        tools: ToolSession::new(DEFAULT_HISTORY_BUDGET_BYTES, generator),
        window: None,
        error: None,
    };
    event_loop.run_app(&mut app)?;
    app.session.finish_running_job();
    if let Some(stream) = app.stream.take() {
        stream.close();
    }
    match app.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The streaming world the editor starts with, when it starts with one:
/// a generated world with `stream` or larger than a world built whole,
/// or a streaming world file (spec §12), with its (empty) streaming grid
/// and document. Opening reads no column.
fn open_streamed(
    options: &EditorOptions,
) -> Result<Option<(WindowStream, TerrainStreaming, Grid, Document)>, EditorError> {
    let budget = options.memory_budget_bytes;
    let grid = Grid::streaming();
    Ok(match &options.world {
        WorldSource::Generated(settings)
            if options.stream || new_world_streams(settings.size_cells) =>
        {
            let (stream, streaming) = WindowStream::create(settings, options.lod, budget)?;
            let doc = Document::streamed(None, &grid, WorldMeta::generated(settings), true);
            Some((stream, streaming, grid, doc))
        }
        WorldSource::File(path) if WindowStream::is_streaming_file(path) => {
            let (stream, streaming) = WindowStream::open(path, options.lod, budget)?;
            if stream.world.recovered_columns > 0 {
                eprintln!(
                    "strata: recovered {} edited columns that were not saved",
                    stream.world.recovered_columns
                );
            }
            let meta = stream.world.meta();
            let clean = stream.world.recovered_columns == 0;
            let doc = Document::streamed(Some(path.clone()), &grid, meta, clean);
            Some((stream, streaming, grid, doc))
        }
        _ => None,
    })
}

/// The grid, document and stored camera of the world the editor starts with.
/// A world file is opened through [`WorldFile::open`] so the first save is
/// incremental.
fn open_document(source: &WorldSource) -> Result<(Grid, Document, Option<Camera>), EditorError> {
    Ok(match source {
        WorldSource::File(path) => {
            let (file, grid, meta, report) = WorldFile::open(path, LoadOptions::default())
                .map_err(|e| EditorError::World(WorldSourceError::Load(e)))?;
            if let Some(recovery) = report.journal_recovery {
                // Before the window exists: the terminal and the log say it.
                eprintln!("strata: recovered: {recovery}");
            }
            let camera = meta.camera();
            let doc = Document::opened(path.clone(), Some(file), &grid, meta);
            (grid, doc, camera)
        }
        WorldSource::Generated(settings) => {
            let grid = source.build()?;
            let doc = Document::untitled(&grid, WorldMeta::generated(settings));
            (grid, doc, None)
        }
        _ => {
            let grid = source.build()?;
            let doc = Document::untitled(&grid, WorldMeta::default());
            (grid, doc, None)
        }
    })
}

struct App {
    session: FileSession,
    options: EditorOptions,
    grid: Grid,
    meshes: WorldMeshes,
    streaming: TerrainStreaming,
    /// The backing file of a streaming world (`None`: the grid holds the
    /// whole world).
    stream: Option<WindowStream>,
    /// Undo history, clipboard and the stroke in progress.
    tools: ToolSession,
    window: Option<WindowState>,
    error: Option<EditorError>,
}

/// Everything that exists only while the window does.
struct WindowState {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    gpu: Gpu,
    adapter: String,
    renderer: Renderer,
    /// The seam audit behind the `seam-audit` overlay and the panel's count.
    seam_audit: ThrottledSeamAudit,
    egui_ctx: egui::Context,
    egui_state: egui_winit::State,
    egui_painter: EguiPainter,
    camera: Camera,
    controls: FlyControls,
    panel: EditorPanel,
    viewport: ViewportRect,
    cursor_px: Option<[f32; 2]>,
    sculpting: bool,
    /// The meshes as they were when the current stroke began: the stroke picks
    /// against them so an Add stroke does not climb its own growth toward the camera.
    stroke_surface: Option<WorldMeshes>,
    hit: Option<PickHit>,
    last_frame: Instant,
    /// When the window opened: the water animation runs on real time since then.
    opened_at: Instant,
    frame_ms: f32,
    /// The window title last set.
    title: String,
    /// Keyboard modifiers held now.
    modifiers: ModifiersState,
    /// An Alt+click asked to sample the material under the cursor.
    sample_requested: bool,
    /// `F` asked to focus the camera on the cursor.
    focus_requested: bool,
    /// The current left press already pasted, stamped or placed a path
    /// point (one per click).
    pasted_this_press: bool,
    /// A left press in the 3D view not yet seen by a frame (a click shorter
    /// than a frame still applies the tool once).
    press_pending: bool,
    /// When the held brush last applied (for back-pressure).
    last_stroke_apply: Option<Instant>,
    /// Walk mode and fly-camera collision (see `walk.rs`).
    walk: WalkMode,
    /// A heightmap importing as a streaming world on its own thread.
    pending_import: Option<PendingImport>,
    /// The paste preview's cached outline and the Flatten plane preview.
    previews: ToolPreviews,
    /// An edit waiting for chunk columns of a streaming world.
    wait: ColumnWait,
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.window.is_some() {
            return;
        }
        match self.open_window(event_loop) {
            Ok(state) => {
                state.window.request_redraw();
                self.window = Some(state);
            }
            Err(e) => {
                self.error = Some(e);
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(state) = self.window.as_mut() else {
            return;
        };
        let response = state.egui_state.on_window_event(&state.window, &event);
        match event {
            WindowEvent::CloseRequested
                if self.session.request_close(&mut self.grid, &state.camera) =>
            {
                event_loop.exit();
            }
            WindowEvent::ModifiersChanged(modifiers) => state.modifiers = modifiers.state(),
            WindowEvent::Resized(size) => {
                state.config.width = size.width.max(1);
                state.config.height = size.height.max(1);
                state.surface.configure(&state.gpu.device, &state.config);
            }
            WindowEvent::Focused(false) => {
                state.controls.release_all();
                state.walk.release_all();
                state.sculpting = false;
            }
            WindowEvent::KeyboardInput { event, .. } => {
                if response.consumed || state.egui_ctx.egui_wants_keyboard_input() {
                    return;
                }
                if let PhysicalKey::Code(code) = event.physical_key {
                    let pressed = event.state == ElementState::Pressed;
                    // Ctrl+key is a shortcut (undo/redo here; egui reads the File
                    // menu's), never flying.
                    if state.modifiers.control_key() {
                        if pressed {
                            state.on_shortcut(code);
                        }
                        return;
                    }
                    if code == WALK_TOGGLE_KEY {
                        if pressed && !event.repeat {
                            state.controls.release_all();
                            let look_at = state.look_at(&self.meshes);
                            state.walk.toggle(&self.grid, &state.camera, look_at);
                        }
                        return;
                    }
                    if state.walk.set_key(code, pressed) {
                        return;
                    }
                    if !state.controls.set_key(code, pressed) && pressed {
                        state.on_shortcut(code);
                    }
                }
            }
            WindowEvent::CursorMoved { position, .. } => {
                state.cursor_px = Some([position.x as f32, position.y as f32]);
            }
            WindowEvent::CursorLeft { .. } => state.cursor_px = None,
            WindowEvent::MouseInput {
                state: button_state,
                button,
                ..
            } => {
                let pressed = button_state == ElementState::Pressed;
                let over_ui = response.consumed
                    || state.egui_ctx.egui_wants_pointer_input()
                    || state.ui_claims_pointer(self.session.is_modal_open());
                match button {
                    MouseButton::Left if pressed && !over_ui && state.modifiers.alt_key() => {
                        state.sample_requested = true;
                    }
                    MouseButton::Left => {
                        state.sculpting = pressed && !over_ui;
                        state.press_pending |= state.sculpting;
                    }
                    MouseButton::Right => {
                        state.controls.looking = pressed && !over_ui;
                    }
                    _ => {}
                }
            }
            WindowEvent::MouseWheel { delta, .. }
                if !response.consumed && !state.egui_ctx.egui_wants_pointer_input() =>
            {
                let lines = match delta {
                    MouseScrollDelta::LineDelta(_, y) => y,
                    MouseScrollDelta::PixelDelta(p) => p.y as f32 / 40.0,
                };
                state.controls.on_wheel(lines);
            }
            WindowEvent::RedrawRequested => {
                let quit = state.frame(
                    &mut self.grid,
                    &mut self.meshes,
                    &mut self.streaming,
                    &mut self.stream,
                    &mut self.session,
                    &mut self.tools,
                );
                if quit {
                    event_loop.exit();
                }
            }
            _ => {}
        }
    }

    fn device_event(&mut self, _: &ActiveEventLoop, _: DeviceId, event: DeviceEvent) {
        if let (Some(state), DeviceEvent::MouseMotion { delta }) = (self.window.as_mut(), event) {
            state
                .controls
                .on_mouse_delta(&mut state.camera, delta.0, delta.1);
        }
    }

    fn about_to_wait(&mut self, _: &ActiveEventLoop) {
        if let Some(state) = &self.window {
            state.window.request_redraw();
        }
    }
}

impl App {
    fn open_window(&mut self, event_loop: &ActiveEventLoop) -> Result<WindowState, EditorError> {
        let [w, h] = self.options.window_size;
        let attributes = Window::default_attributes()
            .with_title("Strata")
            .with_inner_size(LogicalSize::new(w, h));
        let window = Arc::new(event_loop.create_window(attributes)?);
        let instance = Gpu::create_instance(Some(Box::new(event_loop.owned_display_handle())));
        let surface = instance.create_surface(window.clone())?;
        let gpu = Gpu::for_surface(instance, &surface)?;
        let caps = surface.get_capabilities(&gpu.adapter);
        let format = egui_wgpu::preferred_framebuffer_format(&caps.formats)
            .map_err(|_| EditorError::SurfaceFormat)?;
        let size = window.inner_size();
        let mut config = surface
            .get_default_config(&gpu.adapter, size.width.max(1), size.height.max(1))
            .ok_or(EditorError::SurfaceFormat)?;
        config.format = format;
        config.present_mode = wgpu::PresentMode::AutoVsync;
        surface.configure(&gpu.device, &config);
        // Software rasterizers stay interactive without MSAA.
        let samples = if gpu.is_software() {
            1
        } else {
            gpu.msaa_sample_count(format)
        };
        let mut renderer = Renderer::new(&gpu, format, samples);
        renderer.sync_meshes(&mut self.meshes);
        let egui_ctx = egui::Context::default();
        let egui_state = egui_winit::State::new(
            egui_ctx.clone(),
            egui::ViewportId::ROOT,
            &window,
            Some(window.scale_factor() as f32),
            None,
            Some(gpu.device.limits().max_texture_dimension_2d as usize),
        );
        let egui_painter = EguiPainter::new(&gpu.device, format);
        let aspect = size.width.max(1) as f32 / size.height.max(1) as f32;
        let camera = self
            .options
            .camera
            .unwrap_or_else(|| frame_terrain(&self.grid, self.meshes.bounds_world(), aspect));
        let adapter = gpu.adapter_summary();
        log::info!("editor window on {adapter}, {samples}x MSAA, {format:?}");
        Ok(WindowState {
            window,
            surface,
            config,
            adapter,
            renderer,
            seam_audit: ThrottledSeamAudit::default(),
            egui_ctx,
            egui_state,
            egui_painter,
            camera,
            controls: FlyControls::default(),
            panel: EditorPanel {
                overlays: self.options.overlays,
                memory_budget_mib: (self.options.memory_budget_bytes >> 20)
                    .clamp(1, u32::MAX as usize) as u32,
                ..EditorPanel::default()
            },
            viewport: ViewportRect::full([size.width.max(1), size.height.max(1)]),
            cursor_px: None,
            sculpting: false,
            stroke_surface: None,
            hit: None,
            last_frame: Instant::now(),
            opened_at: Instant::now(),
            frame_ms: 0.0,
            title: String::new(),
            modifiers: ModifiersState::empty(),
            sample_requested: false,
            focus_requested: false,
            pasted_this_press: false,
            press_pending: false,
            last_stroke_apply: None,
            walk: WalkMode::default(),
            pending_import: None,
            previews: ToolPreviews::default(),
            wait: ColumnWait::default(),
            gpu,
        })
    }
}

/// What one egui pass produced.
struct UiFrame {
    output: egui::FullOutput,
    /// Width of the side panel, points.
    panel_points: f32,
    /// Height of the menu bar, points.
    bar_points: f32,
    /// What the File menu asked for this frame.
    session_event: Option<SessionEvent>,
}

impl WindowState {
    /// The surface point at the centre of the view, if any (where walk mode
    /// starts when the camera is not above terrain).
    fn look_at(&self, meshes: &WorldMeshes) -> Option<glam::DVec3> {
        pick(
            meshes,
            self.camera.pos_world,
            self.camera.forward(),
            PICK_DISTANCE_STUDS,
        )
        .map(|hit| hit.pos_world)
    }

    /// Keyboard shortcuts outside the fly keys.
    fn on_shortcut(&mut self, code: KeyCode) {
        let (lo, hi) = (
            *BRUSH_RADIUS_RANGE_CELLS.start(),
            *BRUSH_RADIUS_RANGE_CELLS.end(),
        );
        if let Some(s) = crate::editor::tools::tools_panel::shortcut(code, self.modifiers) {
            match self.panel.tools.apply_shortcut(s) {
                Some(Shortcut::Tool(mode)) => self.panel.tool = mode,
                Some(Shortcut::Focus) => self.focus_requested = true,
                Some(Shortcut::Request(ToolRequest::Clear)) => {
                    let at = self.hit.map(|h| h.pos_world);
                    let pick = at.map_or(0.0, |p| self.path_pick_studs(p));
                    self.panel
                        .tools
                        .path
                        .draft
                        .delete_near(at.map(|p| glam::DVec2::new(p.x, p.z)), pick);
                }
                _ => {}
            }
            return;
        }
        match code {
            KeyCode::KeyI => self.panel.ignore_water = !self.panel.ignore_water,
            KeyCode::KeyG => self.panel.sea_action = Some(SeaAction::Fill),
            KeyCode::KeyH => self.panel.sea_action = Some(SeaAction::Evaporate),
            KeyCode::BracketLeft => {
                self.panel.radius_cells = (self.panel.radius_cells / 1.2).clamp(lo, hi);
            }
            KeyCode::BracketRight => {
                self.panel.radius_cells = (self.panel.radius_cells * 1.2).clamp(lo, hi);
            }
            _ => {}
        }
    }

    /// One frame: camera, panel, picking and brush edits first; the edit is
    /// handed to the meshing workers at once, and finished meshes are
    /// published as late as possible (just before drawing), so a small edit
    /// usually becomes visible in the frame that made it.
    /// Returns `true` when the editor should close.
    fn frame(
        &mut self,
        grid: &mut Grid,
        meshes: &mut WorldMeshes,
        streaming: &mut TerrainStreaming,
        stream: &mut Option<WindowStream>,
        session: &mut FileSession,
        tools: &mut ToolSession,
    ) -> bool {
        let now = Instant::now();
        self.move_camera(grid, now);
        if let Some(ws) = stream.as_mut()
            && streaming.residency.is_some()
        {
            // A streaming world: install finished loads, pin and ask for
            // the columns a waiting edit needs, the walker's and then the
            // view's (nearest first), evict over the budget. Never waits
            // for a load.
            WindowStream::apply_budget(streaming, self.panel.memory_budget_mib);
            ws.stream_frame(
                streaming,
                grid,
                meshes,
                self.camera.pos_world,
                self.wait.columns(),
                &self.walk.ground_columns(),
            );
        }
        // Panel first: it decides the 3D viewport.
        let stats = self.panel_stats(grid, meshes, streaming, tools);
        let mut ui = self.run_ui(grid, meshes, streaming, session, tools, &stats);
        self.drop_presses_the_ui_took(session.is_modal_open());
        if ui.session_event.is_none() {
            ui.session_event = session.poll(grid, &self.camera, now);
        }
        let mut event = ui.session_event.take();
        while let Some(e) = event {
            event = match e {
                SessionEvent::Quit => {
                    ui.output.textures_delta.clear();
                    return true;
                }
                SessionEvent::ReplaceWorld(world) => {
                    // Undo steps and strokes belong to the world that is closing.
                    tools.reset_for_world(world.meta.generator.clone());
                    self.replace_world(*world, grid, meshes, streaming);
                    if let Some(old) = stream.take() {
                        old.close();
                    }
                    None
                }
                other => {
                    let mut world = WorldParts {
                        grid: &mut *grid,
                        meshes: &mut *meshes,
                        streaming: &mut *streaming,
                        stream: &mut *stream,
                    };
                    self.streamed_event(other, &mut world, session, tools)
                }
            };
        }
        if self.pending_import.is_some() {
            let mut world = WorldParts {
                grid: &mut *grid,
                meshes: &mut *meshes,
                streaming: &mut *streaming,
                stream: &mut *stream,
            };
            self.finish_pending_import(&mut world, session, tools);
        }
        let title = session.window_title(grid);
        if title != self.title {
            self.window.set_title(&title);
            self.title = title;
        }
        self.egui_state
            .handle_platform_output(&self.window, std::mem::take(&mut ui.output.platform_output));
        self.place_viewport(&ui);
        self.pick_and_edit(grid, meshes, streaming, session, tools, now);
        // Whatever changed the grid this frame (brush, later undo or tools)
        // reaches the workers through the grid's change tracking.
        streaming.begin_frame(
            grid,
            meshes,
            self.camera.pos_world,
            &mut self.renderer.uploader(),
        );
        let mut settings = self.frame_settings(meshes, now);
        settings.residency = streaming
            .residency
            .as_ref()
            .filter(|_| self.panel.overlays.contains(Overlay::Residency))
            .map(|r| ResidencyView::of(r, self.camera.pos_world));
        settings.previews = self.previews.frame_previews(
            grid,
            tools,
            &self.panel.tools,
            &self.panel.brush(),
            self.hit.as_ref(),
        );
        // Initial uploads (whole world) and pipeline publication, just before drawing.
        self.renderer.sync_meshes(meshes);
        streaming.publish(&mut self.renderer.uploader(), meshes);
        let mut camera = self.camera;
        camera.aspect =
            self.viewport.size_px()[0].max(1) as f32 / self.viewport.size_px()[1].max(1) as f32;
        streaming.horizon_frame(grid, meshes, &camera, &mut self.renderer.uploader());
        if self.panel.overlays.contains(Overlay::SeamAudit) {
            let revision = self.renderer.mesh_revision();
            self.seam_audit
                .update(meshes, streaming.horizon.as_ref(), revision, now);
        }
        settings.seam_markers_world = self.seam_audit.mismatch_positions_world();
        self.renderer.prepare(
            &self.gpu.queue,
            &self.camera,
            &settings,
            self.viewport.size_px(),
        );
        if self.draw(&mut ui.output) {
            // Edit latencies end here: the frame that shows them is presented.
            streaming.pipeline.frame_presented(Instant::now());
        }
        false
    }

    /// See [`ui_claims_pointer`].
    fn ui_claims_pointer(&self, modal_open: bool) -> bool {
        ui_claims_pointer(&self.egui_ctx, self.cursor_px, self.viewport, modal_open)
    }

    /// After this frame's egui pass (whose hover state is current): a press
    /// that landed on the UI, or while a dialog, menu or popup is open, is
    /// dropped before it reaches the tools. A stroke already under way
    /// goes on until its button is released.
    fn drop_presses_the_ui_took(&mut self, modal_open: bool) {
        let pending = self.press_pending || self.sample_requested;
        if pending
            && (self.egui_ctx.is_pointer_over_egui()
                || self.egui_ctx.egui_is_using_pointer()
                || self.ui_claims_pointer(modal_open))
        {
            self.press_pending = false;
            self.sample_requested = false;
            self.sculpting = false;
        }
    }

    /// Moves the camera for the time since the last frame: walking, or
    /// flying (with optional collision).
    fn move_camera(&mut self, grid: &Grid, now: Instant) {
        let frame_secs = now.duration_since(self.last_frame).as_secs_f32();
        self.frame_ms = frame_secs * 1e3;
        // Movement uses at most a quarter second per frame, so a stall does not teleport the camera.
        let dt_secs = frame_secs.min(0.25);
        self.last_frame = now;
        if self.walk.is_walking() {
            self.walk
                .update(grid, &mut self.camera, f64::from(frame_secs));
        } else {
            let before = self.camera.pos_world;
            self.controls.update(&mut self.camera, dt_secs);
            self.walk.collide_fly(grid, before, &mut self.camera);
        }
    }

    /// The figures the panel's statistics section shows this frame.
    fn panel_stats(
        &self,
        grid: &Grid,
        meshes: &WorldMeshes,
        streaming: &mut TerrainStreaming,
        tools: &ToolSession,
    ) -> PanelStats {
        let mut stats = PanelStats::of_world(&self.adapter, grid, meshes, &self.camera);
        stats.frame_ms = self.frame_ms;
        let draw = self.renderer.last_draw_stats();
        stats.drawn_chunks = draw.drawn_chunks;
        stats.drawn_nodes = (draw.drawn_nodes, draw.drawn_node_triangles);
        stats.camera_speed_studs_per_s = self.controls.speed_studs_per_s;
        stats.add_pipeline(&mut streaming.pipeline);
        stats.add_lod(meshes, &streaming.lod);
        if self.panel.overlays.contains(Overlay::SeamAudit) {
            stats.seam_mismatches = self.seam_audit.count();
        }
        stats.history = HistoryView::of(tools.history());
        stats.has_clipboard = tools.session.clipboard.is_some();
        stats.streaming = WindowStream::panel_stats(
            streaming,
            grid,
            self.wait.status(|c| grid.is_column_resident(c)),
        );
        stats
    }

    /// Runs the egui pass: the File menu bar and dialogs, the side panel,
    /// the region and paste boxes over the 3D view, and the walk window.
    fn run_ui(
        &mut self,
        grid: &mut Grid,
        meshes: &WorldMeshes,
        streaming: &mut TerrainStreaming,
        session: &mut FileSession,
        tools: &ToolSession,
        stats: &PanelStats,
    ) -> UiFrame {
        // Region selection and paste preview, drawn over the 3D view.
        let mut boxes = Vec::new();
        if let Some(b) = self.panel.tools.region {
            boxes.push((b, crate::editor::tools::tools_panel::SELECTION_COLOR));
        }
        if self.panel.tools.active == ActiveTool::Paste
            && let Some(hit) = self.hit
            && let Some(b) = tools.paste_box(&hit, self.panel.tools.paste_quarter_turns)
        {
            boxes.push((b, crate::editor::tools::tools_panel::PASTE_COLOR));
        }
        let handles = match self.panel.tools.region {
            Some(region) if self.panel.tools.active == ActiveTool::Region => Some(HandleView {
                region,
                hot: tools.hovered_handle(&region, self.cursor_ray(), self.handle_tolerance_rad()),
            }),
            _ => None,
        };
        let (box_camera, box_viewport) = (self.camera, self.viewport);
        let waiting = self
            .wait
            .status(|c| grid.is_column_resident(c))
            .zip(self.cursor_px);
        let importing = self
            .pending_import
            .as_ref()
            .map(|p| (p.png().to_path_buf(), p.elapsed_s()));
        session.export_needs_box =
            streaming.residency.is_some() && self.panel.tools.region.is_none();
        let raw_input = self.egui_state.take_egui_input(&self.window);
        let mut panel_points = 0.0;
        let mut bar_points = 0.0;
        let mut session_event = None;
        let panel = &mut self.panel;
        panel.lod = streaming.lod.settings;
        session.menu.style = panel.lod.style;
        let walk = &mut self.walk;
        let camera = self.camera;
        let output = self.egui_ctx.run_pass(raw_input, |ctx| {
            let (bar, event) = session.ui(ctx, grid, &camera);
            // View ▸ Style: the panel's settings carry it to the streaming.
            panel.lod.style = session.menu.style;
            bar_points = bar;
            session_event = event;
            panel_points = panel.show(ctx, stats);
            crate::editor::tools::tools_panel::draw_boxes(
                ctx,
                &box_camera,
                [
                    box_viewport.x,
                    box_viewport.y,
                    box_viewport.width,
                    box_viewport.height,
                ],
                &boxes,
                handles,
            );
            if let Some((text, [x, y])) = &waiting {
                cursor_note(ctx, [*x, *y], text);
            }
            if let Some((png, secs)) = &importing {
                egui::Window::new("Importing heightmap")
                    .collapsible(false)
                    .resizable(false)
                    .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
                    .show(ctx, |ui| {
                        ui.horizontal(|ui| {
                            ui.spinner();
                            ui.label(format!(
                                "Decoding {} as a streaming world… {secs:.0} s",
                                png.display()
                            ));
                        });
                    });
            }
            egui::Window::new("Walk and collision")
                .anchor(egui::Align2::RIGHT_TOP, [-8.0, 36.0])
                .resizable(false)
                .show(ctx, |ui| {
                    walk.ui(ui, grid, &camera, || {
                        pick(
                            meshes,
                            camera.pos_world,
                            camera.forward(),
                            PICK_DISTANCE_STUDS,
                        )
                        .map(|hit| hit.pos_world)
                    })
                });
        });
        streaming.lod.settings = self.panel.lod;
        let fades = self.renderer.level_fades_mut();
        fades.set_paused(self.panel.fades_paused);
        if std::mem::take(&mut self.panel.fade_step_requested) {
            fades.step();
        }
        session.view = ViewSetup {
            lod: streaming.lod.settings,
            aspect: self.camera.aspect,
        };
        UiFrame {
            output,
            panel_points,
            bar_points,
            session_event,
        }
    }

    /// The 3D viewport: right of the side panel, below the menu bar.
    fn place_viewport(&mut self, ui: &UiFrame) {
        let [w, h] = [self.config.width, self.config.height];
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
    /// when a stroke began) and runs the tools and the sea-level action.
    fn pick_and_edit(
        &mut self,
        grid: &mut Grid,
        meshes: &WorldMeshes,
        streaming: &TerrainStreaming,
        session: &FileSession,
        tools: &mut ToolSession,
        now: Instant,
    ) {
        if !self.sculpting {
            self.stroke_surface = None;
        } else if self.stroke_surface.is_none() {
            self.stroke_surface = Some(meshes.snapshot());
        }
        self.hit = match &self.stroke_surface {
            Some(surface) => self.pick_under_cursor(surface),
            None => self.pick_under_cursor(meshes),
        };
        // While File ▸ New or Open builds the next world (or a heightmap
        // imports as one), edits would be lost.
        if session.replacing_world() || self.pending_import.is_some() {
            self.sculpting = false;
            self.press_pending = false;
        } else {
            // Back-pressure: while the last applications are still being
            // meshed (at most BRUSH_BACKPRESSURE_MAX), the stroke waits.
            let meshing_behind = streaming.pipeline.pending_edits() > 0
                && self
                    .last_stroke_apply
                    .is_some_and(|t| now.duration_since(t) < BRUSH_BACKPRESSURE_MAX);
            self.apply_tools(grid, tools, meshing_behind, now);
        }
        if let Some(action) = self.panel.sea_action.take() {
            self.apply_sea_level(grid, tools, action, now);
        }
    }

    /// This frame's settings: fog for the view, the brush cursor, the
    /// overlays and the water's animation time.
    fn frame_settings(&self, meshes: &WorldMeshes, now: Instant) -> FrameSettings {
        let mut settings = FrameSettings::for_camera(&self.camera, meshes.bounds_world());
        settings.cursor = self
            .hit
            .filter(|_| self.panel.tools.active == ActiveTool::Brush)
            .map(|hit| {
                BrushCursor {
                    centre_world: hit.pos_world,
                    radius_studs: self.panel.radius_cells
                        * crate::terrain::storage::coords::CELL_SIZE_STUDS,
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

    /// Draws the prepared 3D view and the egui output into the window's
    /// next surface texture and presents it (skips the frame when the
    /// surface is outdated, lost or not ready). Returns whether a frame was presented.
    fn draw(&mut self, egui_out: &mut egui::FullOutput) -> bool {
        let [w, h] = [self.config.width, self.config.height];
        let frame = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(f)
            | wgpu::CurrentSurfaceTexture::Suboptimal(f) => f,
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                self.surface.configure(&self.gpu.device, &self.config);
                egui_out.textures_delta.clear();
                return false;
            }
            other => {
                log::debug!("skipping frame: {other:?}");
                egui_out.textures_delta.clear();
                return false;
            }
        };
        let view = frame
            .texture
            .create_view(&wgpu::TextureViewDescriptor::default());
        let mut encoder = self
            .gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("editor frame"),
            });
        self.renderer
            .render(&mut encoder, &view, [w, h], Some(self.viewport));
        let mut cmds = self.egui_painter.paint(
            &self.gpu.device,
            &self.gpu.queue,
            &mut encoder,
            &view,
            [w, h],
            &self.egui_ctx,
            egui_out,
        );
        cmds.push(encoder.finish());
        self.gpu.queue.submit(cmds);
        self.window.pre_present_notify();
        self.gpu.queue.present(frame);
        true
    }

    /// Swaps in a world a file job finished: its grid, its meshes and
    /// streaming state (prepared on the job's thread) and its camera.
    fn replace_world(
        &mut self,
        world: LoadedWorld,
        grid: &mut Grid,
        meshes: &mut WorldMeshes,
        streaming: &mut TerrainStreaming,
    ) {
        *grid = world.grid;
        let prepared = world.prepared.unwrap_or_else(|| {
            let mut s = TerrainStreaming::new(streaming.lod.settings);
            let m = s.build_initial(grid, self.camera.pos_world);
            PreparedView {
                camera: self.camera,
                streaming: s,
                meshes: m,
            }
        });
        *streaming = prepared.streaming;
        *meshes = prepared.meshes;
        self.camera = Camera {
            aspect: self.camera.aspect,
            ..prepared.camera
        };
        self.stroke_surface = None;
        self.sculpting = false;
        self.hit = None;
        self.wait.take();
        self.renderer.clear_meshes();
        self.renderer.sync_meshes(meshes);
    }

    /// Runs the Sea Level tool in the square region around the cursor's surface
    /// point (half-width from the panel), from 256 cells below the level up to it.
    fn apply_sea_level(
        &mut self,
        grid: &mut Grid,
        tools: &mut ToolSession,
        action: SeaAction,
        now: Instant,
    ) {
        let Some(hit) = self.hit else {
            log::warn!("sea level: point the cursor at the terrain to choose the region");
            return;
        };
        let cell = crate::terrain::storage::coords::CellCoord::containing_world(hit.pos_world).0;
        let half = self.panel.sea_region_half_cells;
        let level_cells =
            self.panel.sea_level_studs / crate::terrain::storage::coords::CELL_SIZE_STUDS as f64;
        let bottom = (level_cells.floor() as i32).saturating_sub(256);
        let region = crate::terrain::storage::coords::CellBox::new(
            glam::IVec3::new(cell.x - half, bottom, cell.z - half),
            glam::IVec3::new(cell.x + half, level_cells.ceil() as i32 + 1, cell.z + half),
        );
        let command = match action {
            SeaAction::Fill => EditCommand::FillSeaLevel {
                region,
                level_cells,
            },
            SeaAction::Evaporate => EditCommand::Evaporate {
                region,
                level_cells,
            },
        };
        if self.wait.is_waiting() {
            self.panel.tools.message = Some(("an edit is still loading".into(), true));
            return;
        }
        match tools.apply_command(grid, &command) {
            Ok(_) => {}
            Err(ToolError::Refused(e)) => log::warn!("sea level not applied: {e}"),
            Err(e) => self.wait_for_columns(e, now),
        }
    }

    /// Runs the tools for this frame: the brush stroke (one undo step from
    /// press to release, applied every spacing along the cursor path), the
    /// region drag, paste clicks, Alt+click material sampling, camera focus
    /// and the panel's and shortcuts' requests (undo, redo, region operations).
    fn apply_tools(
        &mut self,
        grid: &mut Grid,
        tools: &mut ToolSession,
        meshing_behind: bool,
        now: Instant,
    ) {
        let ray = self.cursor_ray();
        let held = self.sculpting || std::mem::take(&mut self.press_pending);
        // An edit waiting for chunk columns runs first once they arrived;
        // until then nothing else edits (the stroke pauses).
        let waiting = self.run_waiting_edit(grid, tools, now);
        match self.panel.tools.active {
            ActiveTool::Brush if held && (waiting || (tools.in_stroke() && meshing_behind)) => {}
            ActiveTool::Brush if held => {
                self.last_stroke_apply = Some(now);
                if let Some(ray) = ray {
                    match tools.stroke(grid, self.panel.brush(), &self.panel.tools, self.hit, ray) {
                        Ok(()) => {}
                        Err(ToolError::Refused(e)) => {
                            log::warn!("brush not applied: {e}");
                            self.panel.tools.message = Some((e, true));
                            self.sculpting = false;
                            tools.end_stroke(grid);
                        }
                        Err(e) => self.wait_for_columns(e, now),
                    }
                }
            }
            ActiveTool::Region if held => {
                self.panel.tools.region = tools.region_press(
                    self.panel.tools.region,
                    ray,
                    self.hit.as_ref(),
                    self.handle_tolerance_rad(),
                );
            }
            ActiveTool::Paste if held && !self.pasted_this_press => {
                self.pasted_this_press = true;
                self.panel.tools.requests.push(ToolRequest::Paste);
            }
            ActiveTool::Stamp if held && !self.pasted_this_press && !waiting => {
                self.pasted_this_press = true;
                self.press_stamp(grid, tools, now);
            }
            ActiveTool::Path if held => self.edit_path_points(),
            _ => {}
        }
        if self.panel.tools.path.action.take().is_some() && !waiting {
            self.lay_path(grid, tools, now);
        }
        if let Some(path) = self.panel.tools.save_stamp_to.take() {
            self.panel.tools.message = Some(match tools.save_clipboard_as_stamp(&path) {
                Ok(message) => {
                    self.panel.tools.stamp.add_file(&path);
                    (message, false)
                }
                Err(e) => (e, true),
            });
        }
        if !held {
            self.panel.tools.path.draft.release();
            // A stroke whose applications wait for columns ends once they
            // have applied.
            if !self.wait.is_stroke_waiting() {
                tools.end_stroke(grid);
            }
            tools.end_drag();
            self.pasted_this_press = false;
        }
        if std::mem::take(&mut self.sample_requested)
            && let Some(hit) = self.hit
        {
            match sample_material(grid, &hit) {
                Some(m) => {
                    self.panel.material = m;
                    self.panel.tools.message = Some((format!("picked {}", m.name()), false));
                }
                None => {
                    self.panel.tools.message = Some(("no solid material there".into(), true));
                }
            }
        }
        if std::mem::take(&mut self.focus_requested)
            && let Some(hit) = self.hit
        {
            let distance = (self.panel.radius_cells as f64
                * crate::terrain::storage::coords::CELL_SIZE_STUDS as f64
                * 8.0)
                .max(48.0);
            self.camera.pos_world = hit.pos_world - self.camera.forward_world() * distance;
        }
        if self.wait.is_waiting() {
            // Requests wait their turn behind the waiting edit.
            return;
        }
        let mut requests = std::mem::take(&mut self.panel.tools.requests).into_iter();
        while let Some(request) = requests.next() {
            match tools.request(grid, request, &self.panel.tools, self.hit.as_ref()) {
                Ok(m) => self.panel.tools.message = Some((m, false)),
                Err(ToolError::Refused(e)) => self.panel.tools.message = Some((e, true)),
                Err(e) => {
                    self.wait_for_columns(e, now);
                    self.panel.tools.requests.extend(requests);
                    break;
                }
            }
        }
    }

    /// A click with the Stamp tool: presses the chosen stamp in, centred on
    /// the surface under the cursor, as one undo step.
    fn press_stamp(&mut self, grid: &mut Grid, tools: &mut ToolSession, now: Instant) {
        let Some(hit) = self.hit else { return };
        let Some(stamp) = self.panel.tools.stamp.stamp().cloned() else {
            self.panel.tools.message = Some(("choose a stamp in the Stamp section".into(), true));
            return;
        };
        let command = EditCommand::Stamp {
            placement: self.panel.tools.stamp.placement_at(hit.pos_world),
            stamp,
        };
        match tools.apply_command(grid, &command) {
            Ok(message) => self.panel.tools.message = Some((message, false)),
            Err(e) => self.wait_for_columns(e, now),
        }
    }

    /// One frame of a held press with the Path tool: the press appends,
    /// inserts or picks up a control point; later frames drag it.
    fn edit_path_points(&mut self) {
        let Some(hit) = self.hit else { return };
        let at = glam::DVec2::new(hit.pos_world.x, hit.pos_world.z);
        if self.pasted_this_press {
            self.panel.tools.path.draft.drag_to(at);
            return;
        }
        self.pasted_this_press = true;
        let pick_studs = self.path_pick_studs(hit.pos_world);
        if self.panel.tools.path.draft.press(at, pick_studs)
            == Some(crate::editor::tools::path_draft::DraftPress::Full)
        {
            self.panel.tools.message = Some(("a path holds at most 256 points".into(), true));
        }
    }

    /// How close to a control point (studs, on the surface at `pos_world`)
    /// a click picks it: the handle pick radius in pixels at that distance.
    fn path_pick_studs(&self, pos_world: glam::DVec3) -> f64 {
        (self.handle_tolerance_rad() * self.camera.pos_world.distance(pos_world)).max(2.0)
    }

    /// Lays the path being drawn (Enter or Apply) as one undo step; the
    /// points are cleared once it is laid.
    fn lay_path(&mut self, grid: &mut Grid, tools: &mut ToolSession, now: Instant) {
        let command = EditCommand::Path(self.panel.tools.path.spec());
        match tools.apply_command(grid, &command) {
            Ok(message) => {
                self.panel.tools.path.draft.clear();
                self.panel.tools.message = Some((message, false));
            }
            Err(e) => self.wait_for_columns(e, now),
        }
    }

    /// Parks an edit that found chunk columns missing (spec §12) until
    /// they are resident; the panel and the cursor say "loading".
    fn wait_for_columns(&mut self, e: ToolError, now: Instant) {
        match e {
            ToolError::NotResident { columns, edit } => {
                log::debug!("edit waits for {} chunk columns", columns.len());
                self.wait.start(edit, &columns, now);
                self.panel.tools.message =
                    Some((format!("loading {} chunk columns…", columns.len()), false));
            }
            ToolError::Refused(e) => self.panel.tools.message = Some((e, true)),
        }
    }

    /// Runs the edit that waited for chunk columns once they are all
    /// resident. Returns true while an edit still waits.
    fn run_waiting_edit(&mut self, grid: &mut Grid, tools: &mut ToolSession, now: Instant) -> bool {
        let stroke_gone = |this: &mut Self, tools: &mut ToolSession, grid: &Grid| {
            this.sculpting = false;
            tools.end_stroke(grid);
        };
        match self.wait.poll(now, |c| grid.is_column_resident(c)) {
            WaitPoll::Idle => false,
            WaitPoll::Loading(_) => true,
            WaitPoll::Ready(edit) => {
                let stroke = edit == WaitingEdit::Stroke;
                match tools.retry(grid, edit) {
                    Ok(m) => {
                        self.panel.tools.message =
                            Some((if m.is_empty() { "loaded".into() } else { m }, false));
                        false
                    }
                    Err(ToolError::Refused(e)) => {
                        self.panel.tools.message = Some((e, true));
                        if stroke {
                            stroke_gone(self, tools, grid);
                        }
                        false
                    }
                    Err(e) => {
                        self.wait_for_columns(e, now);
                        true
                    }
                }
            }
            WaitPoll::TimedOut(edit) => {
                self.panel.tools.message = Some((
                    format!(
                        "gave up: chunk columns did not load within {} s",
                        MAX_COLUMN_WAIT.as_secs()
                    ),
                    true,
                ));
                if edit == WaitingEdit::Stroke {
                    stroke_gone(self, tools, grid);
                }
                false
            }
        }
    }

    /// Carries out a File menu event for a streaming world: a new one, an
    /// opened one, a save or an autosave checkpoint. Returns the session's
    /// next event, if any.
    fn streamed_event(
        &mut self,
        event: SessionEvent,
        world: &mut WorldParts<'_>,
        session: &mut FileSession,
        tools: &mut ToolSession,
    ) -> Option<SessionEvent> {
        let lod = world.streaming.lod.settings;
        let budget = (self.panel.memory_budget_mib as usize) << 20;
        let recovering = matches!(event, SessionEvent::RecoverStreamed(_));
        match event {
            SessionEvent::NewStreamed(settings) => {
                match WindowStream::create(&settings, lod, budget) {
                    Ok((stream, streaming)) => {
                        self.install_streamed(stream, streaming, world, tools);
                        session.streamed_opened(
                            None,
                            world.grid,
                            WorldMeta::generated(&settings),
                            0,
                        );
                    }
                    Err(e) => session
                        .menu
                        .show_message(format!("Cannot make the world: {e}"), true),
                }
                None
            }
            SessionEvent::OpenStreamed(path) | SessionEvent::RecoverStreamed(path) => {
                let opened = if recovering {
                    WindowStream::recover(&path, lod, budget)
                } else {
                    WindowStream::open(&path, lod, budget)
                };
                match opened {
                    Ok((stream, streaming)) => {
                        let meta = stream.world.meta();
                        let recovered = stream.world.recovered_columns;
                        self.install_streamed(stream, streaming, world, tools);
                        // A recovered new world stays untitled: Save asks where.
                        let titled = (!recovering).then_some(path);
                        session.streamed_opened(titled, world.grid, meta, recovered);
                    }
                    Err(e) => session
                        .menu
                        .show_message(format!("Cannot open {}: {e}", path.display()), true),
                }
                None
            }
            SessionEvent::SaveStreamed(path) => {
                let result = match world.stream.as_mut() {
                    Some(stream) => stream.save(world.streaming, world.grid, &path, &self.camera),
                    None => Err("this world does not stream".to_string()),
                };
                session.streamed_saved(path, result, world.grid, &self.camera)
            }
            SessionEvent::ImportStreamed(png, settings) => {
                if self.pending_import.is_some() {
                    session.menu.show_message(
                        "A heightmap import is running; try again when it ends.".into(),
                        true,
                    );
                } else {
                    match PendingImport::start(png, settings) {
                        Ok(pending) => self.pending_import = Some(pending),
                        Err(e) => session
                            .menu
                            .show_message(format!("Cannot start the import: {e}"), true),
                    }
                }
                None
            }
            SessionEvent::ExportStreamed(path, format) => {
                let job = self.region_export_job(world, path, format);
                session.start_job(job);
                None
            }
            SessionEvent::CheckpointStreamed => {
                let n = WindowStream::checkpoint(world.streaming, world.grid);
                log::info!("autosave: queued {n} edited chunk columns for the world file");
                None
            }
            other => Some(other),
        }
    }

    /// A finished background heightmap import replaces the world (an
    /// unfinished one stays pending).
    fn finish_pending_import(
        &mut self,
        world: &mut WorldParts<'_>,
        session: &mut FileSession,
        tools: &mut ToolSession,
    ) {
        let Some(pending) = self.pending_import.take() else {
            return;
        };
        let png = pending.png().to_path_buf();
        match pending.try_finish() {
            Err(still_running) => self.pending_import = Some(still_running),
            Ok(Ok(imported)) => {
                let lod = world.streaming.lod.settings;
                let budget = (self.panel.memory_budget_mib as usize) << 20;
                let (stream, streaming) = WindowStream::from_world(imported, lod, budget);
                let meta = stream.world.meta();
                self.install_streamed(stream, streaming, world, tools);
                session.streamed_opened(None, world.grid, meta, 0);
            }
            Ok(Err(e)) => session
                .menu
                .show_message(format!("Cannot import {}: {e}", png.display()), true),
        }
    }

    /// The export of the selected region box of a streaming world to
    /// `path` (spec §12: an export is demand): the box is checked, its
    /// resident columns copied now, the rest loaded by the job. `Err` says
    /// why there is nothing to export.
    fn region_export_job(
        &self,
        world: &WorldParts<'_>,
        path: std::path::PathBuf,
        format: crate::editor::files::file_jobs::ExportFormat,
    ) -> Result<crate::editor::files::file_jobs::Job, String> {
        let Some(region) = self.panel.tools.region else {
            return Err(
                "A streaming world exports a region box: select one with the Region \
                 tool (B, then drag) and export again."
                    .into(),
            );
        };
        crate::terrain::editing::region::check_crop_box(&region)
            .map_err(|e| format!("Cannot export the selected box: {e}"))?;
        let residency = world
            .streaming
            .residency
            .as_ref()
            .ok_or_else(|| "this world does not stream".to_string())?;
        let snapshot = residency.snapshot_region(world.grid, &region);
        Ok(crate::editor::files::file_jobs::export_region(
            snapshot, region, path, format,
        ))
    }

    /// Swaps in a streaming world: an empty streaming grid (its columns
    /// load as the next frames ask), no meshes, its own camera; the old
    /// world's undo steps, waiting edit and backing file go.
    fn install_streamed(
        &mut self,
        stream: WindowStream,
        streaming: TerrainStreaming,
        world: &mut WorldParts<'_>,
        tools: &mut ToolSession,
    ) {
        tools.reset_for_world(stream.world.generator());
        self.camera = Camera {
            aspect: self.camera.aspect,
            ..stream.initial_camera()
        };
        *world.grid = Grid::streaming();
        *world.meshes = WorldMeshes::default();
        *world.streaming = streaming;
        if let Some(old) = world.stream.replace(stream) {
            old.close();
        }
        self.wait.take();
        self.stroke_surface = None;
        self.sculpting = false;
        self.hit = None;
        self.renderer.clear_meshes();
    }

    /// How far off the cursor ray a region handle is still grabbed, radians
    /// ([`HANDLE_PICK_RADIUS_PX`] at the view's scale).
    fn handle_tolerance_rad(&self) -> f64 {
        pick_tolerance_rad(
            HANDLE_PICK_RADIUS_PX,
            self.camera.fov_y_deg,
            self.viewport.height,
        )
    }

    /// The cursor's ray (origin, unit direction) when it is over the 3D view.
    fn cursor_ray(&self) -> Option<(glam::DVec3, glam::DVec3)> {
        let [cx, cy] = self.cursor_px?;
        let vp = self.viewport;
        if cx < vp.x || cy < vp.y || cx >= vp.x + vp.width || cy >= vp.y + vp.height {
            return None;
        }
        let (origin, dir) = self
            .camera
            .ray_from_screen(cx - vp.x, cy - vp.y, vp.width, vp.height);
        Some((origin, dir.as_dvec3().normalize_or_zero()))
    }

    /// The surface hit under the mouse cursor, if the cursor is over the 3D view
    /// and the camera is not being turned.
    fn pick_under_cursor(&self, meshes: &WorldMeshes) -> Option<PickHit> {
        let [cx, cy] = self.cursor_px?;
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

/// The open world's parts a File menu event of a streaming world replaces.
struct WorldParts<'a> {
    grid: &'a mut Grid,
    meshes: &'a mut WorldMeshes,
    streaming: &'a mut TerrainStreaming,
    stream: &'a mut Option<WindowStream>,
}

/// A short note next to the mouse cursor (`cursor_px` in physical
/// pixels), e.g. "loading 3 chunk columns…" while an edit waits.
fn cursor_note(ctx: &egui::Context, cursor_px: [f32; 2], text: &str) {
    let ppp = ctx.pixels_per_point();
    let pos = egui::pos2(cursor_px[0] / ppp + 18.0, cursor_px[1] / ppp + 14.0);
    let painter = ctx.layer_painter(egui::LayerId::new(
        egui::Order::Tooltip,
        egui::Id::unique("strata_column_wait_note"),
    ));
    let font = egui::FontId::proportional(14.0);
    let galley = painter.layout_no_wrap(
        text.to_string(),
        font,
        egui::Color32::from_rgb(255, 225, 90),
    );
    let rect = egui::Rect::from_min_size(pos, galley.size()).expand(4.0);
    painter.rect_filled(rect, 4.0, egui::Color32::from_black_alpha(190));
    painter.galley(pos, galley, egui::Color32::WHITE);
}
