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

/// How the terrain shader picks a material texture's mip level (the
/// `EXPLICIT_MIP_LEVEL` override in `shaders/terrain.wgsl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MipSelection {
    /// Every sample passes its plane's screen-space gradients, so an
    /// anisotropic sampler filters along them (hardware adapters).
    Gradients,
    /// Each plane's isotropic level is computed once per fragment and every
    /// sample reads at it: the level a sampler without anisotropy derives
    /// from the same gradients, for less work per sample. On llvmpipe it
    /// takes about 8 % off a frame of PBR materials.
    ExplicitLevel,
}

impl MipSelection {
    /// The selection for a sampler with `anisotropy` × anisotropic
    /// filtering: explicit levels where it filters isotropically (1), where
    /// they draw what the gradients would.
    pub fn for_anisotropy(anisotropy: u16) -> MipSelection {
        if anisotropy <= 1 {
            MipSelection::ExplicitLevel
        } else {
            MipSelection::Gradients
        }
    }

    /// The value of the shader's `EXPLICIT_MIP_LEVEL` override.
    fn override_value(self) -> f64 {
        match self {
            MipSelection::Gradients => 0.0,
            MipSelection::ExplicitLevel => 1.0,
        }
    }
}

/// The terrain render pipeline and its material bind group (group 1).
pub struct TerrainPipeline {
    pipeline: wgpu::RenderPipeline,
    /// The same with the cross-fade's screen-door discard (`fs_main_fade`).
    fade_pipeline: wgpu::RenderPipeline,
    /// What the pipelines were built from, to build them again for another
    /// [`MipSelection`].
    shader: wgpu::ShaderModule,
    layout: wgpu::PipelineLayout,
    target_format: wgpu::TextureFormat,
    sample_count: u32,
    mip_selection: MipSelection,
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
        let mip_selection = MipSelection::for_anisotropy(materials.anisotropy());
        let (pipeline, fade_pipeline) = build_pipelines(
            device,
            &layout,
            &shader,
            target_format,
            sample_count,
            mip_selection,
        );
        TerrainPipeline {
            pipeline,
            fade_pipeline,
            shader,
            layout,
            target_format,
            sample_count,
            mip_selection,
            material_layout,
            material_bind_group,
            materials,
        }
    }

    /// How the shader picks material mip levels; by default
    /// [`MipSelection::for_anisotropy`] of the material sampler.
    pub fn mip_selection(&self) -> MipSelection {
        self.mip_selection
    }

    /// Draws with `selection` from the next paint, building the pipelines
    /// again when it differs from the current one.
    pub fn set_mip_selection(&mut self, device: &wgpu::Device, selection: MipSelection) {
        if selection == self.mip_selection {
            return;
        }
        (self.pipeline, self.fade_pipeline) = build_pipelines(
            device,
            &self.layout,
            &self.shader,
            self.target_format,
            self.sample_count,
            selection,
        );
        self.mip_selection = selection;
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

/// The terrain pipeline and its cross-fade variant for `mip_selection`. The
/// fading variant discards; it is kept apart so the other draws keep early
/// depth testing.
fn build_pipelines(
    device: &wgpu::Device,
    layout: &wgpu::PipelineLayout,
    shader: &wgpu::ShaderModule,
    target_format: wgpu::TextureFormat,
    sample_count: u32,
    mip_selection: MipSelection,
) -> (wgpu::RenderPipeline, wgpu::RenderPipeline) {
    let constants = [("EXPLICIT_MIP_LEVEL", mip_selection.override_value())];
    let make = |label: &str, fragment_entry: &str| {
        pipeline_state::render_pipeline(
            device,
            &PipelineDesc {
                label,
                layout,
                shader,
                vertex_entry: "vs_main",
                fragment_entry,
                buffers: &[Some(TerrainVertex::layout()), Some(ChunkInstance::layout())],
                primitive: pipeline_state::triangles(Some(wgpu::Face::Back)),
                depth: pipeline_state::depth_write(),
                target: pipeline_state::opaque_target(target_format),
                sample_count,
                fragment_constants: &constants,
            },
        )
    };
    (
        make("terrain pipeline", "fs_main"),
        make("terrain fade pipeline", "fs_main_fade"),
    )
}
