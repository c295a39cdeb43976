//! The editor window: a winit application that wires the open [`World`],
//! the tools ([`ToolDriver`]), the File menu's session, the renderer and the
//! egui panel together. Logic lives in the modules it calls; this file only
//! routes events and orders one frame's phases.
//!
//! Each frame: move the camera, stream columns (streaming worlds), run the
//! UI pass (it decides the 3D viewport), carry out what the File menu asked,
//! pick the surface under the cursor and run the tools, hand changed chunks
//! to the meshing workers, publish finished meshes as late as possible (just
//! before drawing), draw the 3D view and the panel, and present.

use crate::app::window_frame::PICK_DISTANCE_STUDS;
use std::time::Instant;

use winit::application::ApplicationHandler;
use winit::event::{
    DeviceEvent, DeviceId, ElementState, MouseButton, MouseScrollDelta, WindowEvent,
};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{KeyCode, PhysicalKey};
use winit::window::WindowId;

use crate::camera::{Camera, frame_terrain};
use crate::editor::files::document::RecentFiles;
use crate::editor::files::file_session::FileSession;
use crate::editor::navigation::camera_place::return_above_ground;
use crate::editor::navigation::fly_controls::FlyControls;
use crate::editor::navigation::walk::WalkMode;
use crate::editor::panel::panel_keys::KeyTarget;
use crate::editor::panel::side_panel::EditorPanel;
use crate::editor::panel::ui_input::configure_input;
use crate::editor::tools::previews::ToolPreviews;
use crate::editor::tools::tool_driver::ToolDriver;
use crate::editor::tools::tool_session::ToolSession;
use crate::io::world::world_source::WorldSource;
use crate::pipeline::WorldMeshes;
use crate::pipeline::lod::LodSettings;
use crate::pipeline::picking::pick;
use crate::pipeline::seam_audit::ThrottledSeamAudit;
use crate::render::ViewportRect;
use crate::render::lines::overlays::OverlaySet;
use crate::terrain::command::history::DEFAULT_HISTORY_BUDGET_BYTES;

use super::window_frame::WindowState;
use super::window_gpu::{WindowGpu, WindowGpuError};
use super::window_input::PointerState;
use super::window_stream::{PendingWorld, WindowStream};
use super::world::{World, WorldOpenError, startup_streaming_file};

/// Toggles walk mode (F focuses the camera on the cursor).
pub const WALK_TOGGLE_KEY: KeyCode = KeyCode::KeyV;

/// Brings the fly camera back above the ground (see
/// [`crate::editor::navigation::camera_place`]).
pub const RETURN_KEY: KeyCode = KeyCode::Home;

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
    /// The world could not be built or opened.
    #[error(transparent)]
    World(#[from] WorldOpenError),
    /// No display connection or event loop.
    #[error("cannot open a window: {0}")]
    EventLoop(#[from] winit::error::EventLoopError),
    /// The window, its surface or a GPU could not be had.
    #[error(transparent)]
    Window(#[from] WindowGpuError),
}

/// Opens the editor window and runs until it is closed.
///
/// # Errors
/// [`EditorError`] when the world cannot be built or no window or GPU is available.
pub fn run(options: EditorOptions) -> Result<(), EditorError> {
    let start = Instant::now();
    let [w, h] = options.window_size;
    let aspect = w.max(1) as f32 / h.max(1) as f32;
    // A streaming world file opens on its own thread once the window is up
    // (its plan may need cooking: seconds), so the window appears at once
    // and shows the reading's progress; an empty world stands in until then.
    let startup_open = startup_streaming_file(&options.world);
    let placeholder = WorldSource::Grid(crate::terrain::storage::grid::Grid::new());
    let opened = World::open(
        if startup_open.is_some() {
            &placeholder
        } else {
            &options.world
        },
        options.stream,
        options.lod,
        options.memory_budget_bytes,
        options.camera,
        aspect,
    )?;
    // Generate re-runs the world's own generator (also for a saved generated world).
    let generator = opened.doc.meta.generator.clone();
    let world = opened.world;
    let layers = opened.layers;
    log::info!(
        "world ready in {:.0} ms ({} chunks, {} meshed{})",
        start.elapsed().as_secs_f64() * 1e3,
        world.grid.chunk_count(),
        world.meshes.len(),
        if world.stream.is_some() {
            ", streaming"
        } else {
            ""
        }
    );
    let event_loop = EventLoop::new()?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let mut session = FileSession::new(opened.doc, RecentFiles::load_default());
    session.offer_recovery_if_newer();
    WindowStream::offer_orphaned_recovery(&mut session);
    let mut tools = ToolSession::new(DEFAULT_HISTORY_BUDGET_BYTES, generator.clone());
    tools.reset_for_world(generator, &world.grid);
    // A world just generated or cooked is exactly what its source makes.
    if let Some(base) = options.world.fresh_base() {
        tools.session.set_base_source(base);
    }
    if let Some(layers) = layers {
        tools.session.restore_document(layers);
    }
    if let Some(stream) = &world.stream {
        // A streaming world's layers: its file's, over its columns.
        tools.session.restore_document(stream.world.document());
    }
    let mut app = App {
        session,
        startup_open: startup_open.map(|path| (path, options.camera)),
        options: EditorOptions {
            camera: opened.camera,
            ..options
        },
        world,
        tools: ToolDriver::new(tools),
        window: None,
        error: None,
    };
    event_loop.run_app(&mut app)?;
    app.session.finish_running_job();
    app.world.close();
    match app.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

struct App {
    session: FileSession,
    /// The streaming world file to open once the window is up, and the
    /// camera asked for on the command line.
    startup_open: Option<(std::path::PathBuf, Option<Camera>)>,
    options: EditorOptions,
    world: World,
    tools: ToolDriver,
    window: Option<WindowState>,
    error: Option<EditorError>,
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.window.is_some() {
            return;
        }
        match self.open_window(event_loop) {
            Ok(mut state) => {
                if let Some((path, camera)) = self.startup_open.take() {
                    match PendingWorld::start_open(path, false) {
                        Ok(pending) => {
                            state.pending_world = Some(pending);
                            state.startup_camera = camera;
                        }
                        Err(e) => self
                            .session
                            .menu
                            .show_message(format!("Cannot start reading the world: {e}"), true),
                    }
                }
                state.gpu.window.request_redraw();
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
        let response = state.egui_state.on_window_event(&state.gpu.window, &event);
        match event {
            WindowEvent::CloseRequested
                if self
                    .session
                    .request_close(&mut self.world.grid, &state.camera) =>
            {
                event_loop.exit();
            }
            WindowEvent::ModifiersChanged(modifiers) => state.pointer.modifiers = modifiers.state(),
            WindowEvent::Resized(size) => state.gpu.resize(size.width, size.height),
            WindowEvent::Focused(false) => {
                state.controls.release_all();
                state.walk.release_all();
                state.pointer.sculpting = false;
            }
            WindowEvent::KeyboardInput { event, .. } => {
                if response.consumed || state.egui_ctx.egui_wants_keyboard_input() {
                    return;
                }
                if let PhysicalKey::Code(code) = event.physical_key {
                    let pressed = event.state == ElementState::Pressed;
                    state.on_key(&self.world, code, pressed, event.repeat);
                }
            }
            WindowEvent::CursorMoved { position, .. } => {
                state.pointer.cursor_px = Some([position.x as f32, position.y as f32]);
            }
            WindowEvent::CursorLeft { .. } => state.pointer.cursor_px = None,
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
                    MouseButton::Left => state.pointer.left_button(pressed, over_ui),
                    MouseButton::Right => state.controls.looking = pressed && !over_ui,
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
            WindowEvent::RedrawRequested
                if state.frame(&mut self.world, &mut self.session, &mut self.tools) =>
            {
                event_loop.exit();
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
            state.gpu.window.request_redraw();
        }
    }
}

impl App {
    fn open_window(&mut self, event_loop: &ActiveEventLoop) -> Result<WindowState, EditorError> {
        let mut gpu = WindowGpu::open(event_loop, self.options.window_size)?;
        gpu.renderer.sync_meshes(&mut self.world.meshes);
        let window = &gpu.window;
        let egui_ctx = egui::Context::default();
        configure_input(&egui_ctx);
        let egui_state = egui_winit::State::new(
            egui_ctx.clone(),
            egui::ViewportId::ROOT,
            window,
            Some(window.scale_factor() as f32),
            None,
            Some(gpu.gpu.device.limits().max_texture_dimension_2d as usize),
        );
        let [w, h] = gpu.size_px();
        let aspect = w as f32 / h as f32;
        let camera = self.options.camera.unwrap_or_else(|| {
            frame_terrain(&self.world.grid, self.world.meshes.bounds_world(), aspect)
        });
        Ok(WindowState {
            gpu,
            egui_ctx,
            egui_state,
            camera,
            controls: FlyControls::default(),
            panel: EditorPanel {
                overlays: self.options.overlays,
                memory_budget_mib: (self.options.memory_budget_bytes >> 20)
                    .clamp(1, u32::MAX as usize) as u32,
                ..EditorPanel::default()
            },
            viewport: ViewportRect::full([w, h]),
            pointer: PointerState::default(),
            stroke_surface: None,
            hit: None,
            last_frame: Instant::now(),
            opened_at: Instant::now(),
            frame_ms: 0.0,
            title: String::new(),
            // The fly camera stops at the terrain unless the artist turns
            // that off (to fly into caves from the side, say).
            walk: WalkMode::colliding(),
            pending_world: None,
            previews: ToolPreviews::default(),
            seam_audit: ThrottledSeamAudit::default(),
            startup: Default::default(),
            startup_camera: None,
        })
    }
}

impl WindowState {
    /// A key outside egui: Ctrl+key shortcuts (undo/redo here; egui reads the
    /// File menu's), walk mode, walking and flying keys, tool shortcuts.
    fn on_key(&mut self, world: &World, code: KeyCode, pressed: bool, repeat: bool) {
        if self.pointer.modifiers.control_key() {
            if pressed {
                self.on_shortcut(code);
            }
            return;
        }
        if code == RETURN_KEY {
            if pressed && !self.walk.is_walking() {
                self.camera =
                    return_above_ground(&world.grid, world.extent_xz_studs(), &self.camera);
            }
            return;
        }
        if code == WALK_TOGGLE_KEY {
            if pressed && !repeat {
                self.controls.release_all();
                let look_at = self.look_at(&world.meshes);
                self.walk.toggle(&world.grid, &self.camera, look_at);
            }
            return;
        }
        if self.walk.set_key(code, pressed) {
            return;
        }
        if !self.controls.set_key(code, pressed) && pressed {
            self.on_shortcut(code);
        }
    }

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

    /// Keyboard shortcuts outside the fly keys (see [`EditorPanel::apply_key`]).
    fn on_shortcut(&mut self, code: KeyCode) {
        let hit_world = self.hit.map(|h| h.pos_world);
        let pick_studs = hit_world.map_or(0.0, |p| {
            (self.handle_tolerance_rad() * self.camera.pos_world.distance(p)).max(2.0)
        });
        let target = KeyTarget {
            hit_world,
            pick_studs,
        };
        if self
            .panel
            .apply_key(code, self.pointer.modifiers, target)
            .focus
        {
            self.pointer.focus_requested = true;
        }
    }
}
