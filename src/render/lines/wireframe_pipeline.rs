//! The `wireframe` overlay (`shaders/wireframe.wgsl`): triangle edges of the
//! drawn chunks blended over the shaded terrain.
//!
//! With `Features::POLYGON_MODE_LINE` (llvmpipe/lavapipe has it, as do
//! desktop GPUs) the chunks are drawn a second time through a
//! `PolygonMode::Line` pipeline. Without it, a non-indexed draw pulls
//! vertices through the index buffer in the vertex shader (both bound as
//! storage), which gives every triangle corner a barycentric coordinate and
//! lets the fragment shader draw anti-aliased edges; see
//! [`WireframeMode`]. Either way back faces are culled like the terrain's,
//! the depth test keeps hidden edges hidden, and a depth bias keeps visible
//! ones from fighting with the surface they lie on.

use super::super::chunk_draw::ChunkInstance;
use super::super::pipeline_state::{self, PipelineDesc};
use super::super::shaders;
use super::super::terrain::{ChunkBuffers, NodeBuffers, TerrainVertex};
use super::overlays::WireframeMode;

/// The wireframe overlay pipeline for one [`WireframeMode`].
pub struct WireframePipeline {
    mode: WireframeMode,
    pipeline: Option<wgpu::RenderPipeline>,
    /// Group 1 of the barycentric mode: vertex and index buffers as storage.
    storage_layout: Option<wgpu::BindGroupLayout>,
}

impl WireframePipeline {
    /// Builds the pipeline for `mode` (nothing for
    /// [`WireframeMode::Unavailable`]), for `target_format` with
    /// `sample_count` samples and a [`pipeline_state::DEPTH_FORMAT`] reversed-Z depth buffer;
    /// group 0 has the layout `globals_layout`.
    pub fn new(
        device: &wgpu::Device,
        globals_layout: &wgpu::BindGroupLayout,
        mode: WireframeMode,
        target_format: wgpu::TextureFormat,
        sample_count: u32,
    ) -> Self {
        if mode == WireframeMode::Unavailable {
            return WireframePipeline {
                mode,
                pipeline: None,
                storage_layout: None,
            };
        }
        let shader =
            pipeline_state::shader_module(device, "wireframe.wgsl", shaders::WIREFRAME_WGSL);
        let storage_entry = |binding| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::VERTEX,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: true },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let storage_layout = (mode == WireframeMode::Barycentric).then(|| {
            device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("wireframe storage layout"),
                entries: &[storage_entry(0), storage_entry(1)],
            })
        });
        let layout = pipeline_state::pipeline_layout(
            device,
            "wireframe pipeline layout",
            &[Some(globals_layout), storage_layout.as_ref()],
        );
        let (entry_point, buffers, polygon_mode) = match mode {
            WireframeMode::PolygonLines => (
                "vs_main",
                vec![Some(TerrainVertex::layout()), Some(ChunkInstance::layout())],
                wgpu::PolygonMode::Line,
            ),
            _ => (
                "vs_pull",
                vec![Some(ChunkInstance::layout())],
                wgpu::PolygonMode::Fill,
            ),
        };
        let pipeline = pipeline_state::render_pipeline(
            device,
            &PipelineDesc {
                label: "wireframe pipeline",
                layout: &layout,
                shader: &shader,
                vertex_entry: entry_point,
                fragment_entry: "fs_main",
                buffers: &buffers,
                primitive: wgpu::PrimitiveState {
                    polygon_mode,
                    ..pipeline_state::triangles(Some(wgpu::Face::Back))
                },
                depth: wgpu::DepthStencilState {
                    // Reversed-Z: nearer is greater; equal passes where the edge
                    // lies on the surface it belongs to, and the positive bias
                    // pulls it toward the camera past neighbouring triangles.
                    bias: wgpu::DepthBiasState {
                        constant: 8,
                        slope_scale: 1.0,
                        clamp: 0.0,
                    },
                    ..pipeline_state::reversed_z_depth(false, wgpu::CompareFunction::GreaterEqual)
                },
                target: pipeline_state::alpha_blended_target(target_format),
                sample_count,
                fragment_constants: &[],
            },
        );
        WireframePipeline {
            mode,
            pipeline: Some(pipeline),
            storage_layout,
        }
    }

    /// How this pipeline draws edges.
    pub fn mode(&self) -> WireframeMode {
        self.mode
    }

    /// Per-frame preparation outside the pass: the barycentric mode needs a
    /// storage bind group for every drawn chunk.
    pub fn prepare(&self, device: &wgpu::Device, chunks: &mut ChunkBuffers) {
        if let Some(layout) = &self.storage_layout {
            chunks.ensure_wire_bind_groups(device, layout);
        }
    }

    /// Draws the edges of the prepared chunks of `chunks` (without their
    /// skirts when `hide_skirts`), after the terrain, with `globals` as
    /// group 0. Polygon lines also draw the prepared horizon `nodes`; the
    /// barycentric mode draws chunks only.
    pub fn paint(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        globals: &wgpu::BindGroup,
        chunks: &ChunkBuffers,
        nodes: &NodeBuffers,
        hide_skirts: bool,
    ) {
        let Some(pipeline) = &self.pipeline else {
            return;
        };
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, globals, &[]);
        match self.mode {
            WireframeMode::PolygonLines => chunks.draw(pass, nodes, hide_skirts),
            WireframeMode::Barycentric => chunks.draw_pulled(pass, hide_skirts),
            WireframeMode::Unavailable => {}
        }
    }
}
