//! Paints one egui frame on top of the 3D view, in its own render pass.
//!
//! Shared by the window and headless screenshots so the panel looks the same
//! in both. egui-wgpu records into a `'static` render pass, so the pass is
//! created here with `forget_lifetime` and ends before the encoder is reused.

/// The egui wgpu renderer plus the bookkeeping of one frame's textures.
pub struct EguiPainter {
    renderer: egui_wgpu::Renderer,
}

impl EguiPainter {
    /// A painter drawing into targets of `format` (single-sampled, no depth).
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> EguiPainter {
        EguiPainter {
            renderer: egui_wgpu::Renderer::new(
                device,
                format,
                egui_wgpu::RendererOptions {
                    msaa_samples: 1,
                    depth_stencil_format: None,
                    dithering: false,
                    predictable_texture_filtering: false,
                },
            ),
        }
    }

    /// Records the egui output `out` of `ctx` into `encoder`, drawing over
    /// `view` (`size_px` = `[width, height]`, loaded, not cleared). Applies and
    /// then clears every texture delta (egui asserts that none is dropped
    /// unapplied). Returns extra command buffers egui-wgpu produced; submit them
    /// before the encoder's own.
    #[allow(clippy::too_many_arguments)]
    pub fn paint(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        view: &wgpu::TextureView,
        size_px: [u32; 2],
        ctx: &egui::Context,
        out: &mut egui::FullOutput,
    ) -> Vec<wgpu::CommandBuffer> {
        let pixels_per_point = out.pixels_per_point;
        let screen = egui_wgpu::ScreenDescriptor {
            size_in_pixels: size_px,
            pixels_per_point,
        };
        for (id, deltas) in &out.textures_delta.set {
            for delta in deltas {
                self.renderer.update_texture(device, queue, *id, delta);
            }
        }
        let jobs = ctx.tessellate(std::mem::take(&mut out.shapes), pixels_per_point);
        let cmds = self
            .renderer
            .update_buffers(device, queue, encoder, &jobs, &screen);
        {
            let pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("egui"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Load,
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            // The pass ends at the end of this block, before the encoder is used again.
            let mut pass = pass.forget_lifetime();
            self.renderer.render(&mut pass, &jobs, &screen);
        }
        for id in &out.textures_delta.free {
            self.renderer.free_texture(id);
        }
        out.textures_delta.clear();
        cmds
    }
}
