//! The terrain surface pipeline (`shaders/terrain.wgsl`): the material
//! texture bind group and the draw. Its vertex and instance formats
//! ([`TerrainVertex`], [`ChunkInstance`]) live in [`super::gpu_data`].
//!
//! Vertices stay chunk-local (`f32` studs within one 128-stud chunk) so they
//! are exact; each drawn chunk is one instance whose attribute is its origin
//! relative to the camera, computed in `f64` each frame (spec §1). Material ids
//! are a flat-interpolated `u32` set constant over each quad; only the weights
//! interpolate (spec §5).

use super::chunk_buffers::ChunkBuffers;
use super::globals::GlobalsBinding;
use super::material_textures::MaterialTextures;
use super::pipeline_state;

pub use super::gpu_data::{ChunkInstance, SKIRT_MARK, TerrainVertex};

/// The terrain render pipeline and its material bind group (group 1).
pub struct TerrainPipeline {
    pipeline: wgpu::RenderPipeline,
    /// The same with the cross-fade's screen-door discard (`fs_main_fade`).
    fade_pipeline: wgpu::RenderPipeline,
    material_bind_group: wgpu::BindGroup,
    /// The material texture array this pipeline samples.
    pub materials: MaterialTextures,
}

impl TerrainPipeline {
    /// Builds the pipeline for `target_format` with `sample_count` samples and
    /// a [`pipeline_state::DEPTH_FORMAT`] reversed-Z depth buffer (compare `Greater`).
    pub fn new(
        device: &wgpu::Device,
        globals: &GlobalsBinding,
        materials: MaterialTextures,
        target_format: wgpu::TextureFormat,
        sample_count: u32,
    ) -> Self {
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("terrain.wgsl"),
            source: wgpu::ShaderSource::Wgsl(super::shaders::TERRAIN_WGSL.into()),
        });
        let material_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("terrain materials layout"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: true },
                        view_dimension: wgpu::TextureViewDimension::D2Array,
                        multisampled: false,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
            ],
        });
        let material_bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("terrain materials"),
            layout: &material_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(&materials.view),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Sampler(&materials.sampler),
                },
            ],
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("terrain pipeline layout"),
            bind_group_layouts: &[Some(&globals.layout), Some(&material_layout)],
            immediate_size: 0,
        });
        let make = |label: &str, fragment_entry: &str| {
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(label),
                layout: Some(&layout),
                vertex: wgpu::VertexState {
                    module: &shader,
                    entry_point: Some("vs_main"),
                    compilation_options: Default::default(),
                    buffers: &[Some(TerrainVertex::layout()), Some(ChunkInstance::layout())],
                },
                primitive: wgpu::PrimitiveState {
                    topology: wgpu::PrimitiveTopology::TriangleList,
                    strip_index_format: None,
                    front_face: wgpu::FrontFace::Ccw,
                    cull_mode: Some(wgpu::Face::Back),
                    unclipped_depth: false,
                    polygon_mode: wgpu::PolygonMode::Fill,
                    conservative: false,
                },
                depth_stencil: Some(pipeline_state::depth_write()),
                multisample: pipeline_state::multisample(sample_count),
                fragment: Some(wgpu::FragmentState {
                    module: &shader,
                    entry_point: Some(fragment_entry),
                    compilation_options: Default::default(),
                    targets: &[Some(pipeline_state::opaque_target(target_format))],
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        // The fading variant discards; kept apart so the other draws keep
        // early depth testing.
        let pipeline = make("terrain pipeline", "fs_main");
        let fade_pipeline = make("terrain fade pipeline", "fs_main_fade");
        TerrainPipeline {
            pipeline,
            fade_pipeline,
            material_bind_group,
            materials,
        }
    }

    /// Draws the prepared chunks of `chunks` (without their skirts when
    /// `hide_skirts`).
    pub fn paint(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        globals: &GlobalsBinding,
        chunks: &ChunkBuffers,
        hide_skirts: bool,
    ) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &globals.bind_group, &[]);
        pass.set_bind_group(1, &self.material_bind_group, &[]);
        chunks.draw(pass, hide_skirts);
        if chunks.has_fades() {
            pass.set_pipeline(&self.fade_pipeline);
            chunks.draw_fades(pass, hide_skirts);
        }
    }
}
