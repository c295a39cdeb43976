//! What the window draws with: the winit window, its wgpu surface and
//! configuration, the GPU, the terrain renderer and the egui painter. It
//! is made when the window opens, reconfigured on resize, and draws one
//! frame: the prepared 3D view into the viewport, then the egui output over
//! it, presented to the window.

use std::sync::Arc;

use winit::dpi::LogicalSize;
use winit::event_loop::ActiveEventLoop;
use winit::window::Window;

use crate::render::frame::egui_pass::EguiPainter;
use crate::render::{Gpu, GpuError, Renderer, ViewportRect};

/// Why the window's drawing could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum WindowGpuError {
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
}

/// The window and everything it draws with.
pub struct WindowGpu {
    /// The window.
    pub window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    /// The GPU.
    pub gpu: Gpu,
    /// The adapter's one-line description (for the panel's statistics).
    pub adapter: String,
    /// The terrain, water, sky and overlay renderer.
    pub renderer: Renderer,
    egui_painter: EguiPainter,
}

impl WindowGpu {
    /// Opens a window of `size` logical pixels titled "Strata" with a
    /// surface, a GPU (MSAA off on software rasterizers, which stay
    /// interactive without it), a renderer and an egui painter.
    ///
    /// # Errors
    /// [`WindowGpuError`] when the window, its surface or a GPU cannot be had.
    pub fn open(event_loop: &ActiveEventLoop, size: [u32; 2]) -> Result<WindowGpu, WindowGpuError> {
        let [w, h] = size;
        let attributes = Window::default_attributes()
            .with_title("Strata")
            .with_inner_size(LogicalSize::new(w, h));
        let window = Arc::new(event_loop.create_window(attributes)?);
        let instance = Gpu::create_instance(Some(Box::new(event_loop.owned_display_handle())));
        let surface = instance.create_surface(window.clone())?;
        let gpu = Gpu::for_surface(instance, &surface)?;
        let caps = surface.get_capabilities(&gpu.adapter);
        let format = egui_wgpu::preferred_framebuffer_format(&caps.formats)
            .map_err(|_| WindowGpuError::SurfaceFormat)?;
        let size = window.inner_size();
        let mut config = surface
            .get_default_config(&gpu.adapter, size.width.max(1), size.height.max(1))
            .ok_or(WindowGpuError::SurfaceFormat)?;
        config.format = format;
        config.present_mode = wgpu::PresentMode::AutoVsync;
        surface.configure(&gpu.device, &config);
        let samples = if gpu.is_software() {
            1
        } else {
            gpu.msaa_sample_count(format)
        };
        let renderer = Renderer::new(&gpu, format, samples);
        let egui_painter = EguiPainter::new(&gpu.device, format);
        let adapter = gpu.adapter_summary();
        log::info!("editor window on {adapter}, {samples}x MSAA, {format:?}");
        Ok(WindowGpu {
            window,
            surface,
            config,
            gpu,
            adapter,
            renderer,
            egui_painter,
        })
    }

    /// The surface size in physical pixels, `[width, height]` (at least 1).
    pub fn size_px(&self) -> [u32; 2] {
        [self.config.width, self.config.height]
    }

    /// Reconfigures the surface for a new window size (physical pixels).
    pub fn resize(&mut self, width_px: u32, height_px: u32) {
        self.config.width = width_px.max(1);
        self.config.height = height_px.max(1);
        self.surface.configure(&self.gpu.device, &self.config);
    }

    /// Draws the prepared 3D view into `viewport` and the egui output over
    /// the whole window into the next surface texture and presents it
    /// (skips the frame when the surface is outdated, lost or not ready).
    /// Returns whether a frame was presented.
    pub fn draw(
        &mut self,
        egui_ctx: &egui::Context,
        egui_out: &mut egui::FullOutput,
        viewport: ViewportRect,
    ) -> bool {
        let [w, h] = self.size_px();
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
            .render(&mut encoder, &view, [w, h], Some(viewport));
        let mut cmds = self.egui_painter.paint(
            &self.gpu.device,
            &self.gpu.queue,
            &mut encoder,
            &view,
            [w, h],
            egui_ctx,
            egui_out,
        );
        cmds.push(encoder.finish());
        self.gpu.queue.submit(cmds);
        self.window.pre_present_notify();
        self.gpu.queue.present(frame);
        true
    }
}
