//! The [`Renderer`]: the long-lived pipelines of every feature renderer
//! (sky, terrain, water, wireframe, lines), the three buffer owners it
//! composes (the terrain's [`ChunkBuffers`] and [`NodeBuffers`], the
//! [`WaterBuffers`]), the globals, and the per-frame [`Renderer::prepare`]
//! that turns one [`FrameSettings`] into uniforms, draw lists and overlay
//! lines. Recording the passes lives in [`super::frame_passes`].
//!
//! Structure follows egui's custom-3D pattern: resources owned here, a
//! per-frame prepare outside any pass, and painting that only records
//! draws (see the `render` module documentation for embedding it).

use std::time::Instant;

use crate::camera::{Camera, Frustum};
use crate::pipeline::WorldMeshes;

use super::super::chunk_draw::CullView;
use super::super::lines::{
    LineBatch, LinePipeline, Overlay, OverlayLinesInput, OverlaySet, WireframeMode,
    WireframePipeline, build_overlay_lines,
};
use super::super::sky::SkyPipeline;
use super::super::terrain::node_buffers::ChunkShow;
use super::super::terrain::{
    ChunkBuffers, LevelFades, MaterialTextures, MipSelection, NodeBuffers, TerrainPipeline,
};
use super::super::water::{WaterBuffers, WaterPipeline, can_read_depth_in_pass};
use super::draw_stats::{DrawStats, SyncStats};
use super::frame_settings::FrameSettings;
use super::globals::{GlobalUniforms, GlobalsBinding};
use super::gpu::Gpu;
use super::mesh_sync::{RendererUploader, sync_meshes};
use super::targets::FrameTargets;
use crate::terrain::materials::MaterialLibrary;

/// Sky plus terrain renderer. Create once per device and target format.
pub struct Renderer {
    pub(super) device: wgpu::Device,
    pub(super) target_format: wgpu::TextureFormat,
    pub(super) sample_count: u32,
    pub(super) encode_srgb: bool,
    pub(super) globals: GlobalsBinding,
    pub(super) sky: SkyPipeline,
    pub(super) terrain: TerrainPipeline,
    pub(super) water: WaterPipeline,
    pub(super) wireframe: WireframePipeline,
    pub(super) lines: LinePipeline,
    /// This frame's overlay lines (kept to reuse its allocations).
    line_batch: LineBatch,
    /// The terrain's chunk meshes and draw list.
    pub(super) chunks: ChunkBuffers,
    /// The horizon's node meshes.
    pub(super) nodes: NodeBuffers,
    /// The water surfaces.
    pub(super) water_buffers: WaterBuffers,
    pub(super) targets: Option<FrameTargets>,
    last_draw: DrawStats,
    /// Overlays of the last [`Renderer::prepare`].
    pub(super) overlays: OverlaySet,
}

impl Renderer {
    /// Creates pipelines for `target_format` (any 8-bit RGBA/BGRA format;
    /// non-sRGB targets are encoded in the shaders) with `sample_count` MSAA
    /// samples (use [`Gpu::msaa_sample_count`]; unsupported counts fall back
    /// to 1 with a warning). Loads the material textures from
    /// `render::terrain::material_textures::default_material_dir`.
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
        let layout = &globals.layout;
        let sky = SkyPipeline::new(&device, layout, target_format, sample_count);
        let terrain = TerrainPipeline::new(&device, layout, materials, target_format, sample_count);
        let read_depth = can_read_depth_in_pass(&gpu.adapter);
        if !read_depth {
            log::warn!(
                "the adapter cannot sample a read-only depth attachment; water is drawn flat"
            );
        }
        let water = WaterPipeline::new(&device, layout, target_format, sample_count, read_depth);
        let wire_mode = WireframeMode::for_device(&gpu.device, &gpu.adapter);
        log::info!("wireframe overlay: {}", wire_mode.name());
        let wireframe =
            WireframePipeline::new(&device, layout, wire_mode, target_format, sample_count);
        let lines = LinePipeline::new(&device, layout, target_format, sample_count);
        let mut chunks = ChunkBuffers::new(&device);
        chunks.set_storage_readable(wire_mode == WireframeMode::Barycentric);
        Renderer {
            chunks,
            nodes: NodeBuffers::default(),
            water_buffers: WaterBuffers::new(&device),
            wireframe,
            lines,
            line_batch: LineBatch::default(),
            overlays: OverlaySet::NONE,
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

    /// The terrain's per-chunk GPU buffers.
    pub fn chunk_buffers(&self) -> &ChunkBuffers {
        &self.chunks
    }

    /// The horizon's per-node GPU buffers.
    pub fn node_buffers(&self) -> &NodeBuffers {
        &self.nodes
    }

    /// The water surfaces' GPU buffers.
    pub fn water_buffers(&self) -> &WaterBuffers {
        &self.water_buffers
    }

    /// The level cross-fades of chunks and nodes: on or off (`--no-morph`),
    /// paused, stepped (the debug panel).
    pub fn level_fades_mut(&mut self) -> &mut LevelFades {
        self.chunks.fades_mut()
    }

    /// Ends every level fade of chunks and nodes at once, so the next frame
    /// shows only the current meshes (a headless screenshot after a replay).
    pub fn finish_fades(&mut self) {
        self.chunks.finish_fades();
        self.nodes.finish_fades();
    }

    /// A counter that changes whenever the drawn meshes change (chunk
    /// uploads, promotions, removals, the horizon's draw list), e.g. to
    /// re-run the seam audit only then.
    pub fn mesh_revision(&self) -> u64 {
        self.chunks.revision().wrapping_add(self.nodes.revision())
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
            &self.globals.layout,
            mode,
            self.target_format,
            self.sample_count,
        );
        self.chunks
            .set_storage_readable(mode == WireframeMode::Barycentric);
    }

    /// Uploads exactly the chunks whose mesh changed since the last call (see
    /// [`WorldMeshes::take_changed`]) and drops chunks whose mesh is gone.
    pub fn sync_meshes(&mut self, meshes: &mut WorldMeshes) -> SyncStats {
        sync_meshes(
            &self.device,
            meshes,
            &mut self.chunks,
            &mut self.water_buffers,
        )
    }

    /// The GPU side of the meshing pipeline's publication: stages uploads and
    /// promotes them into the drawn set.
    pub fn uploader(&mut self) -> RendererUploader<'_> {
        RendererUploader {
            device: &self.device,
            chunks: &mut self.chunks,
            nodes: &mut self.nodes,
            water: &mut self.water_buffers,
        }
    }

    /// Drops every chunk, node and water buffer (call before syncing a
    /// different world).
    pub fn clear_meshes(&mut self) {
        self.chunks.clear();
        self.nodes.clear();
        self.water_buffers.clear();
    }

    /// Draws the terrain with the world's material `library` (its textures,
    /// tints and tile sizes) from the next frame. Cheap when it is the
    /// library drawn already, so callers may pass it every frame; a new
    /// texture or side rebuilds the texture array.
    pub fn set_material_library(&mut self, queue: &wgpu::Queue, library: &MaterialLibrary) {
        self.terrain
            .set_material_library(&self.device, queue, library);
    }

    /// How the terrain shader picks material mip levels (see
    /// [`MipSelection`]).
    pub fn mip_selection(&self) -> MipSelection {
        self.terrain.mip_selection()
    }

    /// Draws the terrain with `selection` from the next frame (the default
    /// follows the material sampler's anisotropy).
    pub fn set_mip_selection(&mut self, selection: MipSelection) {
        self.terrain.set_mip_selection(&self.device, selection);
    }

    /// Per-frame preparation for `frame`: writes the uniforms for `camera`
    /// (its aspect is replaced by `viewport_px`'s), culls chunks, nodes and
    /// water to the frustum, writes their instance buffers and the frame's
    /// overlay lines. Call before painting, outside any render pass.
    pub fn prepare(
        &mut self,
        queue: &wgpu::Queue,
        camera: &Camera,
        frame: &FrameSettings,
        viewport_px: [u32; 2],
    ) -> DrawStats {
        let mut cam = *camera;
        cam.aspect = viewport_px[0].max(1) as f32 / viewport_px[1].max(1) as f32;
        let frustum = Frustum::from_clip_from_world(cam.clip_from_world());
        let view = CullView {
            camera_world: cam.pos_world,
            frustum: &frustum,
            draw_distance_studs: frame.draw_distance_studs,
        };
        let residency = frame.residency.as_ref();
        let terrain = self.chunks.prepare(
            &self.device,
            queue,
            &view,
            Instant::now(),
            &mut self.nodes,
            |c| residency.map_or(0, |r| r.state_code_of(c)),
        );
        let nodes = &self.nodes;
        let water = self.water_buffers.prepare(&self.device, queue, &view, |c| {
            nodes.chunk_show(c) != ChunkShow::Hidden
        });
        self.last_draw = DrawStats {
            drawn_nodes: terrain.nodes.nodes,
            drawn_node_triangles: terrain.nodes.triangles,
            drawn_water_chunks: water.chunks,
            drawn_water_triangles: water.triangles,
            resident_chunks: terrain.resident_chunks,
            drawn_chunks: terrain.drawn_chunks,
            drawn_chunks_by_level: terrain.drawn_chunks_by_level,
            drawn_triangles: terrain.drawn_triangles,
        };
        let mut uniforms = GlobalUniforms::new(&cam, frame, viewport_px, self.encode_srgb);
        uniforms.fog_to_reach(frame, self.nodes.reach_studs());
        self.globals.write(queue, &uniforms);
        self.overlays = frame.overlays;
        if self.overlays.contains(Overlay::Wireframe) {
            self.wireframe.prepare(&self.device, &mut self.chunks);
        }
        build_overlay_lines(
            &mut self.line_batch,
            &OverlayLinesInput {
                overlays: self.overlays,
                camera_world: cam.pos_world,
                chunks: &self.chunks,
                residency,
                previews: &frame.previews,
                seam_markers_world: &frame.seam_markers_world,
            },
        );
        self.lines.prepare(&self.device, queue, &self.line_batch);
        self.last_draw
    }
}
