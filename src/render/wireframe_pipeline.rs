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

use super::chunk_buffers::ChunkBuffers;
use super::globals::GlobalsBinding;
use super::gpu_data::{ChunkInstance, TerrainVertex};
use super::overlays::WireframeMode;
use super::pipeline_state;

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
    /// `sample_count` samples and a [`pipeline_state::DEPTH_FORMAT`] reversed-Z depth buffer.
    pub fn new(
        device: &wgpu::Device,
        globals: &GlobalsBinding,
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
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("wireframe.wgsl"),
            source: wgpu::ShaderSource::Wgsl(super::shaders::WIREFRAME_WGSL.into()),
        });
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
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("wireframe pipeline layout"),
            bind_group_layouts: &[Some(&globals.layout), storage_layout.as_ref()],
            immediate_size: 0,
        });
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
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("wireframe pipeline"),
            layout: Some(&layout),
            vertex: wgpu::VertexState {
                module: &shader,
                entry_point: Some(entry_point),
                compilation_options: Default::default(),
                buffers: &buffers,
            },
            primitive: wgpu::PrimitiveState {
                topology: wgpu::PrimitiveTopology::TriangleList,
                strip_index_format: None,
                front_face: wgpu::FrontFace::Ccw,
                cull_mode: Some(wgpu::Face::Back),
                unclipped_depth: false,
                polygon_mode,
                conservative: false,
            },
            depth_stencil: Some(wgpu::DepthStencilState {
                // Reversed-Z: nearer is greater; equal passes where the edge
                // lies on the surface it belongs to, and the positive bias
                // pulls it toward the camera past neighbouring triangles.
                bias: wgpu::DepthBiasState {
                    constant: 8,
                    slope_scale: 1.0,
                    clamp: 0.0,
                },
                ..pipeline_state::reversed_z_depth(false, wgpu::CompareFunction::GreaterEqual)
            }),
            multisample: pipeline_state::multisample(sample_count),
            fragment: Some(wgpu::FragmentState {
                module: &shader,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &[Some(pipeline_state::alpha_blended_target(target_format))],
            }),
            multiview_mask: None,
            cache: None,
        });
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
    /// skirts when `hide_skirts`), after the terrain.
    pub fn paint(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        globals: &GlobalsBinding,
        chunks: &ChunkBuffers,
        hide_skirts: bool,
    ) {
        let Some(pipeline) = &self.pipeline else {
            return;
        };
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &globals.bind_group, &[]);
        match self.mode {
            WireframeMode::PolygonLines => chunks.draw(pass, hide_skirts),
            WireframeMode::Barycentric => chunks.draw_pulled(pass, hide_skirts),
            WireframeMode::Unavailable => {}
        }
    }
}
