//! The terrain surface pipeline (`shaders/terrain.wgsl`): GPU vertex and
//! instance formats, the material texture bind group, and the draw.
//!
//! Vertices stay chunk-local (`f32` studs within one 128-stud chunk) so they
//! are exact; each drawn chunk is one instance whose attribute is its origin
//! relative to the camera, computed in `f64` each frame (spec §1). Material ids
//! are a flat-interpolated `u32` set constant over each quad; only the weights
//! interpolate (spec §5).

use crate::mesh::ChunkMesh;

use super::DEPTH_FORMAT;
use super::chunk_buffers::ChunkBuffers;
use super::globals::GlobalsBinding;
use super::material_textures::MaterialTextures;

/// One terrain vertex as the GPU reads it. Keep in sync with `VertexIn` in
/// `shaders/terrain.wgsl` (locations 0–3).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct TerrainVertex {
    /// Position in chunk-local studs (`Float32x3`).
    pub pos_in_chunk: [f32; 3],
    /// Unit normal pointing out of the solid, `Snorm8x4`; w is
    /// [`SKIRT_MARK`] on render-only skirt vertices, else 0 (the `skirts`
    /// overlay tints the triangles that use them).
    pub normal: [i8; 4],
    /// The quad's material set, ascending (`Uint8x4`, flat in the shader).
    pub material_ids: [u8; 4],
    /// Weights for `material_ids`, summing to 255 (`Unorm8x4`).
    pub material_weights: [u8; 4],
}

const _: () = assert!(std::mem::size_of::<TerrainVertex>() == 24);

/// `TerrainVertex::normal[3]` of skirt vertices (1.0 as snorm8).
pub const SKIRT_MARK: i8 = 127;

/// Per-instance data of one drawn chunk. Keep in sync with `VertexIn` in
/// `shaders/terrain.wgsl` (locations 4–5).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ChunkInstance {
    /// xyz: `chunk.origin_world() - camera.pos_world` in studs, computed in
    /// `f64` and cast once; w: seconds since the chunk's mesh was last
    /// promoted, for the `remesh` overlay (`Float32x4`).
    pub chunk_origin_rel: [f32; 4],
    /// xyz: the integer chunk coordinate, which lets the shader build
    /// globally continuous noise without large float coordinates; w: the
    /// mesh's level of detail (`Sint32x4`).
    pub chunk_coord: [i32; 4],
}

const _: () = assert!(std::mem::size_of::<ChunkInstance>() == 32);

/// `v` clamped to `[-1, 1]` as an `Snorm8` (127 steps per unit); also used
/// by the water vertices.
pub(crate) fn pack_snorm8(v: f32) -> i8 {
    (v.clamp(-1.0, 1.0) * 127.0).round() as i8
}

impl TerrainVertex {
    /// Vertex attributes at shader locations 0..=3.
    pub const ATTRIBUTES: [wgpu::VertexAttribute; 4] = wgpu::vertex_attr_array![
        0 => Float32x3,
        1 => Snorm8x4,
        2 => Uint8x4,
        3 => Unorm8x4,
    ];

    /// Vertex buffer layout (slot 0, per vertex).
    pub fn layout() -> wgpu::VertexBufferLayout<'static> {
        wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<TerrainVertex>() as u64,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &Self::ATTRIBUTES,
        }
    }

    /// Converts a CPU chunk mesh into GPU vertices (same order, same count);
    /// vertices from `mesh.skirt_start_vertex` on are marked as skirts.
    pub fn from_mesh(mesh: &ChunkMesh) -> Vec<TerrainVertex> {
        let skirt_start = mesh.skirt_start_vertex as usize;
        (0..mesh.positions.len())
            .map(|i| {
                let p = mesh.positions[i];
                let n = mesh.normals.get(i).copied().unwrap_or(glam::Vec3::Y);
                let mark = if i >= skirt_start { SKIRT_MARK } else { 0 };
                TerrainVertex {
                    pos_in_chunk: p.to_array(),
                    normal: [pack_snorm8(n.x), pack_snorm8(n.y), pack_snorm8(n.z), mark],
                    material_ids: mesh.material_ids.get(i).copied().unwrap_or([2; 4]),
                    material_weights: mesh
                        .material_weights
                        .get(i)
                        .copied()
                        .unwrap_or([255, 0, 0, 0]),
                }
            })
            .collect()
    }
}

impl ChunkInstance {
    /// Instance attributes at shader locations 4..=5.
    pub const ATTRIBUTES: [wgpu::VertexAttribute; 2] = wgpu::vertex_attr_array![
        4 => Float32x4,
        5 => Sint32x4,
    ];

    /// Vertex buffer layout (slot 1, per instance).
    pub fn layout() -> wgpu::VertexBufferLayout<'static> {
        wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<ChunkInstance>() as u64,
            step_mode: wgpu::VertexStepMode::Instance,
            attributes: &Self::ATTRIBUTES,
        }
    }
}

/// The terrain render pipeline and its material bind group (group 1).
pub struct TerrainPipeline {
    pipeline: wgpu::RenderPipeline,
    material_bind_group: wgpu::BindGroup,
    /// The material texture array this pipeline samples.
    pub materials: MaterialTextures,
}

impl TerrainPipeline {
    /// Builds the pipeline for `target_format` with `sample_count` samples and
    /// a [`DEPTH_FORMAT`] reversed-Z depth buffer (compare `Greater`).
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
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("terrain pipeline"),
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
            depth_stencil: Some(wgpu::DepthStencilState {
                format: DEPTH_FORMAT,
                depth_write_enabled: Some(true),
                depth_compare: Some(wgpu::CompareFunction::Greater),
                stencil: Default::default(),
                bias: Default::default(),
            }),
            multisample: wgpu::MultisampleState {
                count: sample_count,
                mask: !0,
                alpha_to_coverage_enabled: false,
            },
            fragment: Some(wgpu::FragmentState {
                module: &shader,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format: target_format,
                    blend: None,
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            multiview_mask: None,
            cache: None,
        });
        TerrainPipeline {
            pipeline,
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skirt_vertices_are_marked() {
        let mut mesh = ChunkMesh::default();
        for i in 0..5 {
            mesh.positions.push(glam::Vec3::splat(i as f32));
            mesh.normals.push(glam::Vec3::Y);
        }
        mesh.skirt_start_vertex = 3;
        let v = TerrainVertex::from_mesh(&mesh);
        let marks: Vec<i8> = v.iter().map(|v| v.normal[3]).collect();
        assert_eq!(marks, [0, 0, 0, SKIRT_MARK, SKIRT_MARK]);
        assert_eq!(v[0].normal[1], 127);
    }

    #[test]
    fn normals_pack_to_snorm8() {
        assert_eq!(pack_snorm8(1.0), 127);
        assert_eq!(pack_snorm8(-1.0), -127);
        assert_eq!(pack_snorm8(0.0), 0);
    }
}
