//! The terrain surface pipeline (`shaders/terrain.wgsl`): the material
//! texture bind group and the draw. Its vertex format ([`TerrainVertex`])
//! lives in [`super::gpu_data`], its instance format ([`ChunkInstance`]) in
//! `render::chunk_draw`.
//!
//! Vertices stay chunk-local (`f32` studs within one 128-stud chunk) so they
//! are exact; each drawn chunk is one instance whose attribute is its origin
//! relative to the camera, computed in `f64` each frame (spec §1). Material ids
//! are a flat-interpolated `u32` set constant over each quad; only the weights
//! interpolate (spec §5).

use super::super::chunk_draw::ChunkInstance;
use super::super::pipeline_state::{self, PipelineDesc};
use super::super::shaders;
use super::chunk_buffers::ChunkBuffers;
use super::gpu_data::TerrainVertex;
use super::material_textures::MaterialTextures;
use super::node_buffers::NodeBuffers;
use crate::terrain::materials::MaterialLibrary;

/// The terrain render pipeline and its material bind group (group 1).
pub struct TerrainPipeline {
    pipeline: wgpu::RenderPipeline,
    /// The same with the cross-fade's screen-door discard (`fs_main_fade`).
    fade_pipeline: wgpu::RenderPipeline,
    material_layout: wgpu::BindGroupLayout,
    material_bind_group: wgpu::BindGroup,
    /// The material texture array this pipeline samples.
    pub materials: MaterialTextures,
}

/// A fragment-stage, filterable `D2Array` float texture at `binding`.
fn texture_array_entry(binding: u32) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::FRAGMENT,
        ty: wgpu::BindingType::Texture {
            sample_type: wgpu::TextureSampleType::Float { filterable: true },
            view_dimension: wgpu::TextureViewDimension::D2Array,
            multisampled: false,
        },
        count: None,
    }
}

/// Group 1: the material albedo array, its sampler, the styles and the
/// surface array (normal, roughness, height).
fn material_bind_group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    materials: &MaterialTextures,
) -> wgpu::BindGroup {
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("terrain materials"),
        layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::TextureView(&materials.view),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::Sampler(&materials.sampler),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: materials.styles.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 3,
                resource: wgpu::BindingResource::TextureView(&materials.surface_view),
            },
        ],
    })
}

impl TerrainPipeline {
    /// Builds the pipeline for `target_format` with `sample_count` samples and
    /// a [`pipeline_state::DEPTH_FORMAT`] reversed-Z depth buffer (compare
    /// `Greater`); group 0 has the layout `globals_layout`.
    pub fn new(
        device: &wgpu::Device,
        globals_layout: &wgpu::BindGroupLayout,
        materials: MaterialTextures,
        target_format: wgpu::TextureFormat,
        sample_count: u32,
    ) -> Self {
        let shader = pipeline_state::shader_module(device, "terrain.wgsl", shaders::TERRAIN_WGSL);
        let material_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("terrain materials layout"),
            entries: &[
                texture_array_entry(0),
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 2,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
                texture_array_entry(3),
            ],
        });
        let material_bind_group = material_bind_group(device, &material_layout, &materials);
        let layout = pipeline_state::pipeline_layout(
            device,
            "terrain pipeline layout",
            &[Some(globals_layout), Some(&material_layout)],
        );
        let make = |label: &str, fragment_entry: &str| {
            pipeline_state::render_pipeline(
                device,
                &PipelineDesc {
                    label,
                    layout: &layout,
                    shader: &shader,
                    vertex_entry: "vs_main",
                    fragment_entry,
                    buffers: &[Some(TerrainVertex::layout()), Some(ChunkInstance::layout())],
                    primitive: pipeline_state::triangles(Some(wgpu::Face::Back)),
                    depth: pipeline_state::depth_write(),
                    target: pipeline_state::opaque_target(target_format),
                    sample_count,
                },
            )
        };
        // The fading variant discards; kept apart so the other draws keep
        // early depth testing.
        let pipeline = make("terrain pipeline", "fs_main");
        let fade_pipeline = make("terrain fade pipeline", "fs_main_fade");
        TerrainPipeline {
            pipeline,
            fade_pipeline,
            material_layout,
            material_bind_group,
            materials,
        }
    }

    /// Draws with the world's material `library` (its textures, tints and
    /// tile sizes) from the next paint; nothing happens when it is what
    /// is drawn already.
    pub fn set_material_library(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        library: &MaterialLibrary,
    ) {
        if self.materials.apply_library(device, queue, library) {
            self.material_bind_group =
                material_bind_group(device, &self.material_layout, &self.materials);
        }
    }

    /// Draws the prepared chunks of `chunks` and nodes of `nodes` (without
    /// their skirts when `hide_skirts`), with `globals` as group 0.
    pub fn paint(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        globals: &wgpu::BindGroup,
        chunks: &ChunkBuffers,
        nodes: &NodeBuffers,
        hide_skirts: bool,
    ) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, globals, &[]);
        pass.set_bind_group(1, &self.material_bind_group, &[]);
        chunks.draw(pass, nodes, hide_skirts);
        if chunks.has_fades(nodes) {
            pass.set_pipeline(&self.fade_pipeline);
            chunks.draw_fades(pass, nodes, hide_skirts);
        }
    }
}
