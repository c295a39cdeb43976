//! Recording a prepared frame: [`Renderer::render`] into the renderer's own
//! multisampled colour and reversed-Z depth targets, resolved into the
//! caller's texture, in two passes (the opaque pass, sky and terrain,
//! stores its depth; the second keeps that depth attached read-only and
//! binds it as a texture, so the water can measure how much water lies in
//! front of the bed, then draws the overlays and resolves), or
//! [`Renderer::paint`] into a pass the caller owns.

use super::super::lines::Overlay;
use super::super::pipeline_state::DEPTH_CLEAR;
use super::globals::palette;
use super::renderer::Renderer;
use super::targets::FrameTargets;
use super::viewport::ViewportRect;

/// Where one frame's passes draw: the colour view the passes render into,
/// the texture they resolve into (MSAA), and the viewport.
struct PassTargets<'a> {
    view: &'a wgpu::TextureView,
    resolve_target: Option<&'a wgpu::TextureView>,
    /// `[x, y, width, height]` pixels; `None` when the viewport is empty
    /// (the passes only clear).
    viewport: Option<[f32; 4]>,
}

impl PassTargets<'_> {
    fn set_viewport(&self, pass: &mut wgpu::RenderPass<'_>) {
        if let Some([x, y, w, h]) = self.viewport {
            pass.set_viewport(x, y, w, h, 0.0, 1.0);
        }
    }
}

impl Renderer {
    /// (Re)creates the renderer's MSAA colour and depth targets for a colour
    /// target of `size_px`; cheap when the size is unchanged.
    pub fn resize(&mut self, size_px: [u32; 2]) {
        let size = [size_px[0].max(1), size_px[1].max(1)];
        if self.targets.as_ref().is_some_and(|t| t.size == size) {
            return;
        }
        self.targets = Some(FrameTargets::new(
            &self.device,
            size,
            self.target_format,
            self.sample_count,
            &self.water,
        ));
    }

    /// Records the sky, terrain, water and overlay draws into `pass`, all in
    /// one pass (so the water is drawn flat: it cannot read the depth; see
    /// [`Renderer::render`] for the full look). The pass must target
    /// [`Renderer::target_format`] with [`Renderer::sample_count`] samples and a
    /// `DEPTH_FORMAT` depth attachment cleared to [`DEPTH_CLEAR`]; set its
    /// viewport to the 3D area first if it is not the whole target.
    pub fn paint(&self, pass: &mut wgpu::RenderPass<'_>) {
        self.paint_opaque(pass);
        self.water
            .paint_flat(pass, &self.globals.bind_group, &self.water_buffers);
        self.paint_overlays(pass);
    }

    /// Sky and terrain: everything that writes depth.
    fn paint_opaque(&self, pass: &mut wgpu::RenderPass<'_>) {
        let globals = &self.globals.bind_group;
        self.sky.paint(pass, globals);
        let hide_skirts = self.overlays.contains(Overlay::HideSkirts);
        self.terrain
            .paint(pass, globals, &self.chunks, &self.nodes, hide_skirts);
    }

    /// Debug overlays (they test depth but never write it).
    fn paint_overlays(&self, pass: &mut wgpu::RenderPass<'_>) {
        let globals = &self.globals.bind_group;
        if self.overlays.contains(Overlay::Wireframe) {
            let hide_skirts = self.overlays.contains(Overlay::HideSkirts);
            self.wireframe
                .paint(pass, globals, &self.chunks, &self.nodes, hide_skirts);
        }
        self.lines.paint(pass, globals);
    }

    /// The clear colour (the fog/horizon colour) as the target format expects it.
    pub fn clear_color(&self) -> wgpu::Color {
        let c = palette::SKY_HORIZON;
        let enc = |v: f32| -> f64 {
            if self.encode_srgb {
                let s = if v <= 0.003_130_8 {
                    v * 12.92
                } else {
                    1.055 * v.powf(1.0 / 2.4) - 0.055
                };
                s as f64
            } else {
                v as f64
            }
        };
        wgpu::Color {
            r: enc(c[0]),
            g: enc(c[1]),
            b: enc(c[2]),
            a: 1.0,
        }
    }

    /// Renders sky, terrain, water and overlays into `target` (a
    /// `target_size` texture of [`Renderer::target_format`], single-sampled)
    /// using the renderer's own MSAA colour and depth targets, resolving into
    /// `target`. Pixels outside `viewport` are cleared to the horizon colour.
    /// Call [`Renderer::prepare`] first.
    ///
    /// Two passes: sky and terrain (depth stored); then, with the depth
    /// attached read-only and bound as a texture, water (which measures its
    /// thickness against that depth) and the overlays, resolving at the end.
    /// On adapters that cannot do that, one pass with flat water.
    pub fn render(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::TextureView,
        target_size: [u32; 2],
        viewport: Option<ViewportRect>,
    ) {
        self.resize(target_size);
        let Some(targets) = self.targets.as_ref() else {
            return;
        };
        let viewport = match viewport {
            Some(v) => v.clipped_to(target_size),
            None => Some([0.0, 0.0, target_size[0] as f32, target_size[1] as f32]),
        };
        let (view, resolve_target) = match &targets.msaa_color {
            Some(msaa) => (msaa, Some(target)),
            None => (target, None),
        };
        let passes = PassTargets {
            view,
            resolve_target,
            viewport,
        };
        let water_depth = targets.water_depth.as_ref();
        let two_passes = water_depth.is_some() && viewport.is_some();
        self.record_opaque_pass(encoder, &targets.depth, &passes, two_passes);
        if two_passes && let Some(water_depth) = water_depth {
            self.record_water_pass(encoder, &targets.depth, &passes, water_depth);
        }
    }

    /// The first pass: cleared colour and depth, then sky and terrain (and,
    /// unless `two_passes`, flat water and the overlays too). It resolves
    /// only when it is the last pass.
    fn record_opaque_pass(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        depth: &wgpu::TextureView,
        targets: &PassTargets<'_>,
        two_passes: bool,
    ) {
        let (first_resolve, first_store) = match (two_passes, targets.resolve_target) {
            (true, _) => (None, wgpu::StoreOp::Store),
            (false, Some(t)) => (Some(t), wgpu::StoreOp::Discard),
            (false, None) => (None, wgpu::StoreOp::Store),
        };
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("strata 3d (opaque)"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: targets.view,
                depth_slice: None,
                resolve_target: first_resolve,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(self.clear_color()),
                    store: first_store,
                },
            })],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: depth,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(DEPTH_CLEAR),
                    store: if two_passes {
                        wgpu::StoreOp::Store
                    } else {
                        wgpu::StoreOp::Discard
                    },
                }),
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        if targets.viewport.is_none() {
            return;
        }
        targets.set_viewport(&mut pass);
        if two_passes {
            self.paint_opaque(&mut pass);
        } else {
            self.paint(&mut pass);
        }
    }

    /// The second pass: the opaque depth attached read-only and bound to
    /// the water shader as `water_depth`; water, then the overlays, then
    /// the resolve.
    fn record_water_pass(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        depth: &wgpu::TextureView,
        targets: &PassTargets<'_>,
        water_depth: &wgpu::BindGroup,
    ) {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("strata 3d (water, overlays)"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: targets.view,
                depth_slice: None,
                resolve_target: targets.resolve_target,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Load,
                    store: if targets.resolve_target.is_some() {
                        wgpu::StoreOp::Discard
                    } else {
                        wgpu::StoreOp::Store
                    },
                },
            })],
            // Read-only: the same texture is bound to the water shader.
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: depth,
                depth_ops: None,
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        targets.set_viewport(&mut pass);
        self.water.paint_with_depth(
            &mut pass,
            &self.globals.bind_group,
            water_depth,
            &self.water_buffers,
        );
        self.paint_overlays(&mut pass);
    }
}
