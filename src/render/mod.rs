//! wgpu rendering of the terrain: sky, textured and lit terrain chunks with a
//! brush cursor, offscreen (headless) or into a window surface.
//!
//! Structure follows egui's custom-3D pattern: long-lived pipelines and GPU
//! buffers owned by a [`Renderer`], a per-frame [`Renderer::prepare`] that
//! writes uniforms and culls chunks, and a [`Renderer::paint`] that only
//! records draws into a render pass the caller owns. [`Renderer::render`]
//! wraps the common case: the renderer's own multisampled colour and
//! reversed-Z depth targets, resolved into the caller's texture, in two
//! passes: the opaque pass (sky, terrain) stores its depth; the second pass
//! keeps that depth attached read-only and also binds it as a texture, so
//! the water shader can measure how much water lies in front of the bed,
//! then draws the overlays and resolves.
//!
//! One file per pipeline: [`sky_pipeline`], [`terrain_pipeline`],
//! [`water_pipeline`], [`wireframe_pipeline`] and [`line_pipeline`] (the last
//! two draw debug overlays), all built from the shared depth, multisample
//! and colour-target state in [`pipeline_state`]; every struct the GPU reads
//! (uniforms, vertices, instances) in [`gpu_data`]; shared per-frame
//! uniforms (including the animation time) built in [`globals`]; chunk
//! buffers in [`chunk_buffers`] and, for water, [`water_buffers`], both
//! culled and sorted by [`culling`] and writing an [`instance_buffer`];
//! textures in [`material_textures`]; device creation in [`gpu`]; the debug
//! overlays' switches, tints and seam audit in [`overlays`] (the residency
//! overlay's states in [`residency_overlay`]); the offscreen
//! target, its readback and PNG writing in [`offscreen`].
//!
//! The modules import each other without cycles, lowest first:
//! [`gpu_data`], [`pipeline_state`], [`culling`], [`shaders`] and
//! [`material_textures`] import nothing from `render/`; [`gpu`] and
//! [`overlays`] only device and overlay state; [`globals`] and the buffers
//! ([`instance_buffer`], [`water_buffers`], [`chunk_buffers`]) those below;
//! the pipelines import the buffers they draw; only this file (the
//! [`Renderer`]) imports the pipelines. No module imports this file's items
//! (the depth constants live in [`pipeline_state`] and are re-exported),
//! except [`offscreen`], which sits on top: it owns a [`Renderer`].
//!
//! Debug overlays are chosen per frame in [`FrameSettings::overlays`]; the
//! `seam-audit` markers come from [`Renderer::update_seam_audit`], which the
//! caller runs (throttled) on the shown meshes.
//!
//! # Embedding in a winit + egui window
//!
//! ```text
//! // Start-up (window: Arc<winit::window::Window>):
//! let instance = Gpu::create_instance(Some(Box::new(event_loop.owned_display_handle())));
//! let surface = instance.create_surface(window.clone())?;
//! let gpu = Gpu::for_surface(instance, &surface)?;
//! let caps = surface.get_capabilities(&gpu.adapter);
//! let format = egui_wgpu::preferred_framebuffer_format(&caps.formats)?; // Bgra8Unorm/Rgba8Unorm
//! let mut config = surface.get_default_config(&gpu.adapter, w, h).unwrap();
//! config.format = format;
//! surface.configure(&gpu.device, &config);
//! // 4× on hardware; on software adapters 1× keeps llvmpipe interactive.
//! let samples = if gpu.is_software() { 1 } else { gpu.msaa_sample_count(format) };
//! let mut renderer = Renderer::new(&gpu, format, samples); // non-sRGB: shaders encode
//! let mut egui_renderer = egui_wgpu::Renderer::new(&gpu.device, format, Default::default());
//!
//! // Each frame:
//! renderer.sync_meshes(&mut world_meshes);          // uploads exactly the changed chunks
//! let out = egui_ctx.run_pass(raw_input, |ctx| panel_w = panel.show(ctx, &stats));
//! let ppp = out.pixels_per_point;
//! let viewport = ViewportRect { x: panel_w * ppp, y: 0.0, width: w as f32 - panel_w * ppp, height: h as f32 };
//! renderer.prepare(&gpu.queue, &camera, &settings, viewport.size_px());
//! let frame = surface.get_current_texture();        // CurrentSurfaceTexture::Success(..)
//! let view = frame.texture.create_view(&Default::default());
//! renderer.render(&mut encoder, &view, [w, h], Some(viewport)); // MSAA + depth, resolves into view
//! // egui in a second pass: update_texture for out.textures_delta.set, update_buffers,
//! // begin_render_pass(LoadOp::Load, no depth).forget_lifetime(), egui_renderer.render(..),
//! // free_texture for textures_delta.free; then queue.submit and frame.present().
//! ```
//!
//! Picking uses the same viewport: `camera.ray_from_screen(px - viewport.x,
//! py - viewport.y, viewport.width, viewport.height)` with `camera.aspect` set
//! to the viewport's. On resize, reconfigure the surface; [`Renderer::render`]
//! resizes its own targets (or call [`Renderer::resize`]).
//!
//! Alternatively draw inside your own pass with [`Renderer::paint`]; it needs
//! a colour attachment of the renderer's format and sample count and a
//! [`DEPTH_FORMAT`] attachment cleared to [`DEPTH_CLEAR`] (reversed-Z). In a
//! single pass the water cannot read the depth, so it is drawn with a fixed
//! thickness (no visible bed in shallow water, no soft shoreline).

pub mod chunk_buffers;
pub mod culling;
pub mod egui_pass;
pub mod globals;
pub mod gpu;
pub mod gpu_data;
pub mod horizon_fades;
pub mod instance_buffer;
pub mod level_fades;
pub mod line_pipeline;
pub mod material_textures;
pub mod node_buffers;
pub mod offscreen;
pub mod overlays;
pub mod pipeline_state;
pub mod residency_overlay;
pub mod shaders;
pub mod sky_pipeline;
pub mod terrain_pipeline;
pub mod water_buffers;
pub mod water_pipeline;
pub mod wireframe_pipeline;

pub use chunk_buffers::{ChunkBuffers, DrawStats, SyncStats};
pub use globals::{BrushCursor, FrameSettings, GlobalUniforms};
pub use gpu::{Gpu, GpuError};
pub use material_textures::MaterialTextures;
pub use overlays::{Overlay, OverlaySet, SeamAuditOverlay, WireframeMode};
pub use pipeline_state::{DEPTH_CLEAR, DEPTH_FORMAT};

use std::sync::Arc;
use std::time::Instant;

use glam::Vec3;

use crate::camera::Camera;
use crate::mesh::ChunkMesh;
use crate::mesh::water::WaterMesh;
use crate::pipeline::{ChunkUploader, WorldMeshes};
use crate::terrain::storage::coords::ChunkCoord;

use crate::terrain::storage::coords::CHUNK_SIZE_STUDS;
use globals::GlobalsBinding;
use line_pipeline::{CHUNK_LINE_COLOR, LineBatch, LinePipeline, MARKER_COLOR, PreviewLines};
use residency_overlay::ResidencyView;
use sky_pipeline::SkyPipeline;
use terrain_pipeline::TerrainPipeline;
use water_pipeline::WaterPipeline;
use wireframe_pipeline::WireframePipeline;

/// A sub-rectangle of the colour target in physical pixels (top-left origin),
/// e.g. the area of a window not covered by UI panels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewportRect {
    /// Left edge in pixels.
    pub x: f32,
    /// Top edge in pixels.
    pub y: f32,
    /// Width in pixels (> 0).
    pub width: f32,
    /// Height in pixels (> 0).
    pub height: f32,
}

impl ViewportRect {
    /// The whole `[width, height]` target.
    pub fn full(size_px: [u32; 2]) -> Self {
        ViewportRect {
            x: 0.0,
            y: 0.0,
            width: size_px[0] as f32,
            height: size_px[1] as f32,
        }
    }

    /// Size rounded to whole pixels (at least 1×1), for [`Renderer::prepare`].
    pub fn size_px(&self) -> [u32; 2] {
        [
            (self.width.round() as u32).max(1),
            (self.height.round() as u32).max(1),
        ]
    }
}

/// The renderer's own multisampled colour target (when MSAA is on) and depth
/// target, plus the water's bind group over that depth.
struct FrameTargets {
    size: [u32; 2],
    msaa_color: Option<wgpu::TextureView>,
    depth: wgpu::TextureView,
    /// Group 1 of the depth-reading water pipeline (`None` when the adapter
    /// cannot read the depth in a pass that uses it read-only).
    water_depth: Option<wgpu::BindGroup>,
}

/// [`ChunkUploader`] over a renderer's chunk buffers (see [`Renderer::uploader`]).
pub struct RendererUploader<'a> {
    device: &'a wgpu::Device,
    chunks: &'a mut ChunkBuffers,
}

impl ChunkUploader for RendererUploader<'_> {
    fn stage(&mut self, coord: ChunkCoord, level: u8, mesh: &Arc<ChunkMesh>) {
        self.chunks.stage(self.device, coord, level, mesh);
    }

    fn promote(&mut self, coords: &[ChunkCoord]) {
        self.chunks.promote(coords);
    }

    fn evict(&mut self, coords: &[ChunkCoord]) {
        for c in coords {
            self.chunks.remove(*c);
        }
    }

    fn stage_water(&mut self, coord: ChunkCoord, water: &Arc<WaterMesh>) {
        self.chunks.stage_water(self.device, coord, water);
    }

    fn sync_horizon(&mut self, horizon: &mut crate::pipeline::horizon::Horizon) {
        self.chunks.sync_horizon(self.device, horizon);
    }
}

/// Sky plus terrain renderer. Create once per device and target format.
pub struct Renderer {
    device: wgpu::Device,
    target_format: wgpu::TextureFormat,
    sample_count: u32,
    encode_srgb: bool,
    globals: GlobalsBinding,
    sky: SkyPipeline,
    terrain: TerrainPipeline,
    water: WaterPipeline,
    wireframe: WireframePipeline,
    lines: LinePipeline,
    line_batch: LineBatch,
    /// Editor previews drawn with the overlay lines (see [`Renderer::set_previews`]).
    previews: Vec<PreviewLines>,
    chunks: ChunkBuffers,
    targets: Option<FrameTargets>,
    last_draw: DrawStats,
    /// Overlays of the last [`Renderer::prepare`].
    overlays: OverlaySet,
    seam_audit: SeamAuditOverlay,
}

impl Renderer {
    /// Creates pipelines for `target_format` (any 8-bit RGBA/BGRA format;
    /// non-sRGB targets are encoded in the shaders) with `sample_count` MSAA
    /// samples (use [`Gpu::msaa_sample_count`]; unsupported counts fall back
    /// to 1 with a warning). Loads the material textures from
    /// [`material_textures::default_material_dir`].
    pub fn new(gpu: &Gpu, target_format: wgpu::TextureFormat, sample_count: u32) -> Renderer {
        let materials = MaterialTextures::load_default(&gpu.device, &gpu.queue, gpu.anisotropy());
        Self::with_materials(gpu, target_format, sample_count, materials)
    }

    /// Like [`Renderer::new`] with already uploaded material textures.
    pub fn with_materials(
        gpu: &Gpu,
        target_format: wgpu::TextureFormat,
        sample_count: u32,
        materials: MaterialTextures,
    ) -> Renderer {
        let sample_count =
            if sample_count > 1 && gpu.msaa_sample_count(target_format) < sample_count {
                log::warn!("{sample_count}x MSAA is not supported for {target_format:?}; using 1x");
                1
            } else {
                sample_count.max(1)
            };
        let device = gpu.device.clone();
        let globals = GlobalsBinding::new(&device);
        let sky = SkyPipeline::new(&device, &globals, target_format, sample_count);
        let terrain =
            TerrainPipeline::new(&device, &globals, materials, target_format, sample_count);
        let read_depth = water_pipeline::can_read_depth_in_pass(&gpu.adapter);
        if !read_depth {
            log::warn!(
                "the adapter cannot sample a read-only depth attachment; water is drawn flat"
            );
        }
        let water = WaterPipeline::new(&device, &globals, target_format, sample_count, read_depth);
        let wire_mode = WireframeMode::for_gpu(gpu);
        log::info!("wireframe overlay: {}", wire_mode.name());
        let wireframe =
            WireframePipeline::new(&device, &globals, wire_mode, target_format, sample_count);
        let lines = LinePipeline::new(&device, &globals, target_format, sample_count);
        let mut chunks = ChunkBuffers::new(&device);
        chunks.set_storage_readable(wire_mode == WireframeMode::Barycentric);
        Renderer {
            chunks,
            wireframe,
            lines,
            line_batch: LineBatch::default(),
            previews: Vec::new(),
            overlays: OverlaySet::NONE,
            seam_audit: SeamAuditOverlay::default(),
            device,
            target_format,
            sample_count,
            encode_srgb: !target_format.is_srgb(),
            globals,
            sky,
            terrain,
            water,
            targets: None,
            last_draw: DrawStats::default(),
        }
    }

    /// The colour format the pipelines render to.
    pub fn target_format(&self) -> wgpu::TextureFormat {
        self.target_format
    }

    /// MSAA samples per pixel of the pipelines and the renderer's own targets.
    pub fn sample_count(&self) -> u32 {
        self.sample_count
    }

    /// The per-chunk GPU buffers, to change (the level fades' settings).
    pub fn chunk_buffers_mut(&mut self) -> &mut ChunkBuffers {
        &mut self.chunks
    }

    /// The per-chunk GPU buffers.
    pub fn chunk_buffers(&self) -> &ChunkBuffers {
        &self.chunks
    }

    /// Statistics of the last [`Renderer::prepare`].
    pub fn last_draw_stats(&self) -> DrawStats {
        self.last_draw
    }

    /// How the `wireframe` overlay is drawn.
    pub fn wireframe_mode(&self) -> WireframeMode {
        self.wireframe.mode()
    }

    /// Draws the `wireframe` overlay with `mode` from now on (e.g. to compare
    /// the barycentric fallback with polygon-mode lines). Call before
    /// uploading meshes: the barycentric mode reads chunk buffers as storage,
    /// which only buffers uploaded after the switch allow. A mode the device
    /// lacks draws nothing.
    pub fn set_wireframe_mode(&mut self, mode: WireframeMode) {
        if mode == self.wireframe.mode() {
            return;
        }
        self.wireframe = WireframePipeline::new(
            &self.device,
            &self.globals,
            mode,
            self.target_format,
            self.sample_count,
        );
        self.chunks
            .set_storage_readable(mode == WireframeMode::Barycentric);
    }

    /// Re-runs the seam audit behind the `seam-audit` overlay on `meshes`
    /// (the shown meshes) and `horizon`'s drawn nodes when the drawn meshes
    /// changed since the last audit
    /// and that audit is at least [`SeamAuditOverlay::MIN_INTERVAL`] old.
    /// Returns whether it ran.
    pub fn update_seam_audit(
        &mut self,
        meshes: &WorldMeshes,
        horizon: Option<&crate::pipeline::horizon::Horizon>,
        now: Instant,
    ) -> bool {
        self.seam_audit
            .update(meshes, horizon, self.chunks.revision(), now)
    }

    /// The last seam audit (its mismatches are the `seam-audit` markers).
    pub fn seam_audit(&self) -> &SeamAuditOverlay {
        &self.seam_audit
    }

    /// Uploads exactly the chunks whose mesh changed since the last call (see
    /// [`WorldMeshes::take_changed`]) and drops chunks whose mesh is gone.
    pub fn sync_meshes(&mut self, meshes: &mut WorldMeshes) -> SyncStats {
        self.chunks.sync(&self.device, meshes)
    }

    /// The GPU side of the meshing pipeline's publication: stages uploads and
    /// promotes them into the drawn set.
    pub fn uploader(&mut self) -> RendererUploader<'_> {
        RendererUploader {
            device: &self.device,
            chunks: &mut self.chunks,
        }
    }

    /// Drops every chunk buffer (call before syncing a different world).
    pub fn clear_meshes(&mut self) {
        self.chunks.clear();
    }

    /// (Re)creates the renderer's MSAA colour and depth targets for a colour
    /// target of `size_px`; cheap when the size is unchanged.
    pub fn resize(&mut self, size_px: [u32; 2]) {
        let size = [size_px[0].max(1), size_px[1].max(1)];
        if self.targets.as_ref().is_some_and(|t| t.size == size) {
            return;
        }
        let extent = wgpu::Extent3d {
            width: size[0],
            height: size[1],
            depth_or_array_layers: 1,
        };
        let make = |label, format, usage| {
            self.device
                .create_texture(&wgpu::TextureDescriptor {
                    label: Some(label),
                    size: extent,
                    mip_level_count: 1,
                    sample_count: self.sample_count,
                    dimension: wgpu::TextureDimension::D2,
                    format,
                    usage,
                    view_formats: &[],
                })
                .create_view(&Default::default())
        };
        let attachment = wgpu::TextureUsages::RENDER_ATTACHMENT;
        let msaa_color =
            (self.sample_count > 1).then(|| make("msaa colour", self.target_format, attachment));
        // The water pass reads the opaque depth as a texture.
        let depth_usage = if self.water.reads_depth() {
            attachment | wgpu::TextureUsages::TEXTURE_BINDING
        } else {
            attachment
        };
        let depth = make("depth", DEPTH_FORMAT, depth_usage);
        let water_depth = self.water.depth_bind_group(&self.device, &depth);
        self.targets = Some(FrameTargets {
            size,
            msaa_color,
            depth,
            water_depth,
        });
    }

    /// Sets the column states the `residency` overlay draws from the next
    /// [`Renderer::prepare`] on (`None`: a world that does not stream).
    pub fn set_residency(&mut self, view: Option<ResidencyView>) {
        self.chunks.set_residency(view);
    }

    /// Sets the editor previews (paste preview, Flatten plane) the next
    /// [`Renderer::prepare`] draws with the overlay lines, replacing the last ones.
    pub fn set_previews(&mut self, previews: Vec<PreviewLines>) {
        self.previews = previews;
    }

    /// Per-frame preparation: writes the uniforms for `camera` (its aspect is
    /// replaced by `viewport_px`'s), culls chunks to the frustum and writes the
    /// instance buffer. Call before painting, outside any render pass.
    pub fn prepare(
        &mut self,
        queue: &wgpu::Queue,
        camera: &Camera,
        settings: &FrameSettings,
        viewport_px: [u32; 2],
    ) -> DrawStats {
        let mut cam = *camera;
        cam.aspect = viewport_px[0].max(1) as f32 / viewport_px[1].max(1) as f32;
        self.last_draw = self.chunks.prepare(
            &self.device,
            queue,
            &cam,
            cam.clip_from_world(),
            settings.draw_distance_studs,
            Instant::now(),
        );
        // The fog thickens toward the farthest ground drawn: with a horizon
        // that is its farthest node, not the chunk meshes' extent.
        let mut fogged = *settings;
        let reach = self.chunks.nodes().reach_studs();
        fogged.fog_distance_studs = fogged.fog_distance_studs.max(reach);
        // And the farthest nodes fade into the sky instead of ending in a line.
        fogged.fog_full_studs = reach;
        let uniforms = GlobalUniforms::new(&cam, &fogged, viewport_px, self.encode_srgb);
        self.globals.write(queue, &uniforms);
        self.overlays = settings.overlays;
        if self.overlays.contains(Overlay::Wireframe) {
            self.wireframe.prepare(&self.device, &mut self.chunks);
        }
        self.line_batch.clear();
        if self.overlays.contains(Overlay::Chunks) {
            // Each chunk's 128-stud cube, its top and bottom moved to the
            // mesh's height range: the edges that matter run along the
            // surface instead of floating in the air above it.
            for (coord, instance) in self.chunks.drawn() {
                let Some(gpu) = self.chunks.get(coord) else {
                    continue;
                };
                let [x, y, z, _] = instance.chunk_origin_rel;
                let origin = Vec3::new(x, y, z);
                let (lo, hi) = gpu.bounds_local;
                let y_lo = lo.y.clamp(0.0, CHUNK_SIZE_STUDS);
                let y_hi = hi.y.clamp(y_lo, CHUNK_SIZE_STUDS);
                LineBatch::push_box(
                    &mut self.line_batch.tested,
                    origin + Vec3::new(0.0, y_lo, 0.0),
                    origin + Vec3::new(CHUNK_SIZE_STUDS, y_hi, CHUNK_SIZE_STUDS),
                    CHUNK_LINE_COLOR,
                );
            }
        }
        if self.overlays.contains(Overlay::Residency)
            && let Some(view) = self.chunks.residency()
        {
            // Outlines span the height range of the drawn ground.
            let mut y = [f64::INFINITY, f64::NEG_INFINITY];
            for (coord, _) in self.chunks.drawn() {
                if let Some(gpu) = self.chunks.get(coord) {
                    let base = coord.origin_world().y;
                    y[0] = y[0].min(base + f64::from(gpu.bounds_local.0.y));
                    y[1] = y[1].max(base + f64::from(gpu.bounds_local.1.y));
                }
            }
            if y[0] > y[1] {
                y = [0.0, 256.0];
            }
            view.push_outlines(&mut self.line_batch, cam.pos_world, y);
        }
        for preview in &self.previews {
            self.line_batch.push_preview(preview, cam.pos_world);
        }
        if self.overlays.contains(Overlay::SeamAudit) {
            for m in self.seam_audit.mismatches() {
                self.line_batch
                    .push_marker(m.pos_world, cam.pos_world, MARKER_COLOR);
            }
        }
        self.lines.prepare(&self.device, queue, &self.line_batch);
        self.last_draw
    }

    /// Records the sky, terrain, water and overlay draws into `pass`, all in
    /// one pass (so the water is drawn flat: it cannot read the depth; see
    /// [`Renderer::render`] for the full look). The pass must target
    /// [`Renderer::target_format`] with [`Renderer::sample_count`] samples and a
    /// [`DEPTH_FORMAT`] depth attachment cleared to [`DEPTH_CLEAR`]; set its
    /// viewport to the 3D area first if it is not the whole target.
    pub fn paint(&self, pass: &mut wgpu::RenderPass<'_>) {
        self.paint_opaque(pass);
        self.water
            .paint_flat(pass, &self.globals, self.chunks.water());
        self.paint_overlays(pass);
    }

    /// Sky and terrain: everything that writes depth.
    fn paint_opaque(&self, pass: &mut wgpu::RenderPass<'_>) {
        self.sky.paint(pass, &self.globals);
        let hide_skirts = self.overlays.contains(Overlay::HideSkirts);
        self.terrain
            .paint(pass, &self.globals, &self.chunks, hide_skirts);
    }

    /// Debug overlays (they test depth but never write it).
    fn paint_overlays(&self, pass: &mut wgpu::RenderPass<'_>) {
        if self.overlays.contains(Overlay::Wireframe) {
            let hide_skirts = self.overlays.contains(Overlay::HideSkirts);
            self.wireframe
                .paint(pass, &self.globals, &self.chunks, hide_skirts);
        }
        self.lines.paint(pass, &self.globals);
    }

    /// The clear colour (the fog/horizon colour) as the target format expects it.
    pub fn clear_color(&self) -> wgpu::Color {
        let c = globals::palette::SKY_HORIZON;
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
            Some(v) => {
                let x = v.x.clamp(0.0, target_size[0] as f32);
                let y = v.y.clamp(0.0, target_size[1] as f32);
                let w = v.width.min(target_size[0] as f32 - x);
                let h = v.height.min(target_size[1] as f32 - y);
                if w < 1.0 || h < 1.0 {
                    None
                } else {
                    Some([x, y, w, h])
                }
            }
            None => Some([0.0, 0.0, target_size[0] as f32, target_size[1] as f32]),
        };
        let (view, resolve_target) = match &targets.msaa_color {
            Some(msaa) => (msaa, Some(target)),
            None => (target, None),
        };
        let water_depth = targets.water_depth.as_ref();
        let two_passes = water_depth.is_some() && viewport.is_some();
        // The opaque pass resolves only when it is the last one.
        let (first_resolve, first_store) = match (two_passes, resolve_target) {
            (true, _) => (None, wgpu::StoreOp::Store),
            (false, Some(t)) => (Some(t), wgpu::StoreOp::Discard),
            (false, None) => (None, wgpu::StoreOp::Store),
        };
        let set_viewport = |pass: &mut wgpu::RenderPass<'_>| {
            if let Some([x, y, w, h]) = viewport {
                pass.set_viewport(x, y, w, h, 0.0, 1.0);
            }
        };
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("strata 3d (opaque)"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view,
                    depth_slice: None,
                    resolve_target: first_resolve,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(self.clear_color()),
                        store: first_store,
                    },
                })],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &targets.depth,
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
            if viewport.is_none() {
                return;
            }
            set_viewport(&mut pass);
            if !two_passes {
                self.paint(&mut pass);
                return;
            }
            self.paint_opaque(&mut pass);
        }
        let Some(water_depth) = water_depth else {
            return;
        };
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("strata 3d (water, overlays)"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view,
                depth_slice: None,
                resolve_target,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Load,
                    store: if resolve_target.is_some() {
                        wgpu::StoreOp::Discard
                    } else {
                        wgpu::StoreOp::Store
                    },
                },
            })],
            // Read-only: the same texture is bound to the water shader.
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &targets.depth,
                depth_ops: None,
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        set_viewport(&mut pass);
        self.water
            .paint_with_depth(&mut pass, &self.globals, water_depth, self.chunks.water());
        self.paint_overlays(&mut pass);
    }
}
