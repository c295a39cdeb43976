//! The headless renderer: an offscreen target plus, optionally, the
//! editor's egui panel painted over it, which is what a headless screenshot
//! (and each recorded replay frame) shows.

use crate::app::headless::HeadlessError;
use std::time::Instant;

use crate::camera::Camera;
use crate::editor::panel::side_panel::{EditorPanel, PanelStats};
use crate::pipeline::WorldMeshes;
use crate::render::frame::egui_pass::EguiPainter;
use crate::render::frame::offscreen::OffscreenTarget;
use crate::render::{FrameSettings, Gpu, Renderer, ViewportRect};

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
    /// Chunk meshes drawn after frustum culling (old meshes fading out
    /// of a level change included).
    pub drawn_chunks: usize,
    /// `drawn_chunks` by the level (0–3) of the mesh drawn.
    pub drawn_chunks_by_level: [usize; 4],
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
                drawn_chunks_by_level: draw.drawn_chunks_by_level,
                drawn_triangles: draw.triangles(),
                draws: draw.draws(),
                render_ms: start.elapsed().as_secs_f64() * 1e3,
                viewport: Some(viewport),
            },
        ))
    }
}
