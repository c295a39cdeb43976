//! The water surface pipeline (`shaders/water.wgsl`): the pipelines and the
//! bind group over the opaque pass's depth. The vertex format
//! ([`WaterVertex`]) lives in [`super::gpu_data`].
//!
//! Water is drawn after the opaque terrain with alpha blending, depth test on
//! and depth write off. To colour water by its thickness along the view ray,
//! the fragment shader reads the opaque depth: the frame renderer
//! (`Renderer::render`) ends the opaque pass (storing depth), then draws water in a second pass
//! whose depth attachment is **read-only** (`depth_ops: None`) while the same
//! depth texture is bound as a `texture_depth_2d` (1×) or
//! `texture_depth_multisampled_2d` (MSAA). wgpu allows that combination
//! when the adapter has [`wgpu::DownlevelFlags::READ_ONLY_DEPTH_STENCIL`]
//! (wgpu-core gives such an attachment the `DEPTH_STENCIL_READ | RESOURCE`
//! usage, both read-only, so they do not conflict). Without it, or inside a
//! caller's own pass (`Renderer::paint`), water is drawn by the
//! *flat* variant, which assumes a fixed thickness.
//!
//! Vertices stay chunk-local like the terrain's; each drawn water chunk is one
//! [`ChunkInstance`] with its camera-relative origin (computed in `f64`).

use super::super::chunk_draw::ChunkInstance;
use super::super::pipeline_state::{self, PipelineDesc};
use super::super::shaders;
use super::gpu_data::WaterVertex;
use super::water_buffers::WaterBuffers;

/// The water pipelines: one reading the opaque depth (when the adapter
/// allows it) and the flat one.
pub struct WaterPipeline {
    /// Reads the opaque depth through group 1; drawn in a pass whose depth
    /// attachment is read-only. `None` when the adapter cannot do that.
    depth_read: Option<(wgpu::RenderPipeline, wgpu::BindGroupLayout)>,
    /// Fixed thickness, no group 1; valid in any pass.
    flat: wgpu::RenderPipeline,
    sample_count: u32,
}

/// Whether `device` can draw with a read-only depth attachment that is also
/// bound as a texture (see the module documentation).
pub fn can_read_depth_in_pass(adapter: &wgpu::Adapter) -> bool {
    adapter
        .get_downlevel_capabilities()
        .flags
        .contains(wgpu::DownlevelFlags::READ_ONLY_DEPTH_STENCIL)
}

impl WaterPipeline {
    /// Builds the pipelines for `target_format` with `sample_count` samples
    /// and a [`pipeline_state::DEPTH_FORMAT`] reversed-Z depth (compare `Greater`, no writes);
    /// the depth-reading one only when `read_depth`. Group 0 has the layout
    /// `globals_layout`.
    pub fn new(
        device: &wgpu::Device,
        globals_layout: &wgpu::BindGroupLayout,
        target_format: wgpu::TextureFormat,
        sample_count: u32,
        read_depth: bool,
    ) -> Self {
        let shader = pipeline_state::shader_module(device, "water.wgsl", shaders::WATER_WGSL);
        let multisampled = sample_count > 1;
        let make = |label: &str, layout: &wgpu::PipelineLayout, entry: &str| {
            pipeline_state::render_pipeline(
                device,
                &PipelineDesc {
                    label,
                    layout,
                    shader: &shader,
                    vertex_entry: "vs_main",
                    fragment_entry: entry,
                    buffers: &[Some(WaterVertex::layout()), Some(ChunkInstance::layout())],
                    // The sheet is visible from below too (camera underwater).
                    primitive: pipeline_state::triangles(None),
                    depth: pipeline_state::depth_read_only(),
                    // Keep the target opaque.
                    target: pipeline_state::blended_target(
                        target_format,
                        Some(pipeline_state::BLEND_OVER_KEEP_ALPHA),
                    ),
                    sample_count,
                    fragment_constants: &[],
                },
            )
        };
        let flat_layout = pipeline_state::pipeline_layout(
            device,
            "water (flat) pipeline layout",
            &[Some(globals_layout)],
        );
        let flat = make("water pipeline (flat)", &flat_layout, "fs_main_flat");
        let depth_read = read_depth.then(|| {
            let depth_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("water scene depth layout"),
                entries: &[wgpu::BindGroupLayoutEntry {
                    // Binding 0 is `texture_depth_2d`, 1 the multisampled one.
                    binding: u32::from(multisampled),
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Depth,
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled,
                    },
                    count: None,
                }],
            });
            let layout = pipeline_state::pipeline_layout(
                device,
                "water pipeline layout",
                &[Some(globals_layout), Some(&depth_layout)],
            );
            let entry = if multisampled {
                "fs_main_msaa"
            } else {
                "fs_main"
            };
            (make("water pipeline", &layout, entry), depth_layout)
        });
        WaterPipeline {
            depth_read,
            flat,
            sample_count,
        }
    }

    /// True when water can be drawn with the opaque depth (in a second pass).
    pub fn reads_depth(&self) -> bool {
        self.depth_read.is_some()
    }

    /// The group-1 bind group over `depth` (the opaque pass's depth target,
    /// created with `TEXTURE_BINDING` and this pipeline's sample count), or
    /// `None` for the flat-only pipeline.
    pub fn depth_bind_group(
        &self,
        device: &wgpu::Device,
        depth: &wgpu::TextureView,
    ) -> Option<wgpu::BindGroup> {
        let (_, layout) = self.depth_read.as_ref()?;
        Some(device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("water scene depth"),
            layout,
            entries: &[wgpu::BindGroupEntry {
                binding: u32::from(self.sample_count > 1),
                resource: wgpu::BindingResource::TextureView(depth),
            }],
        }))
    }

    /// Draws the prepared water chunks reading the opaque depth through
    /// `depth` (from [`WaterPipeline::depth_bind_group`]). The pass's depth
    /// attachment must be that texture, read-only.
    pub fn paint_with_depth(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        globals: &wgpu::BindGroup,
        depth: &wgpu::BindGroup,
        water: &WaterBuffers,
    ) {
        let Some((pipeline, _)) = &self.depth_read else {
            return;
        };
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, globals, &[]);
        pass.set_bind_group(1, depth, &[]);
        water.draw(pass);
    }

    /// Draws the prepared water chunks with the flat variant (any pass with
    /// a [`pipeline_state::DEPTH_FORMAT`] attachment).
    pub fn paint_flat(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        globals: &wgpu::BindGroup,
        water: &WaterBuffers,
    ) {
        pass.set_pipeline(&self.flat);
        pass.set_bind_group(0, globals, &[]);
        water.draw(pass);
    }
}
