//! The water surface pipeline (`shaders/water.wgsl`): GPU vertex format,
//! the pipelines and the bind group over the opaque pass's depth.
//!
//! Water is drawn after the opaque terrain with alpha blending, depth test on
//! and depth write off. To colour water by its thickness along the view ray,
//! the fragment shader reads the opaque depth: [`super::Renderer::render`]
//! ends the opaque pass (storing depth), then draws water in a second pass
//! whose depth attachment is **read-only** (`depth_ops: None`) while the same
//! depth texture is bound as a `texture_depth_2d` (1×) or
//! `texture_depth_multisampled_2d` (MSAA). wgpu allows that combination
//! when the adapter has [`wgpu::DownlevelFlags::READ_ONLY_DEPTH_STENCIL`]
//! (wgpu-core gives such an attachment the `DEPTH_STENCIL_READ | RESOURCE`
//! usage, both read-only, so they do not conflict). Without it, or inside a
//! caller's own pass ([`super::Renderer::paint`]), water is drawn by the
//! *flat* variant, which assumes a fixed thickness.
//!
//! Vertices stay chunk-local like the terrain's; each drawn water chunk is one
//! [`ChunkInstance`] with its camera-relative origin (computed in `f64`).

use crate::mesh::water::WaterMesh;

use super::DEPTH_FORMAT;
use super::globals::GlobalsBinding;
use super::terrain_pipeline::{ChunkInstance, pack_snorm8};

/// Seconds after which the waves repeat exactly (every wave makes a whole
/// number of cycles). The animation time is wrapped to `[0, WAVE_LOOP_SECS)`
/// before it reaches the GPU. Keep in sync with `WAVE_LOOP_SECS` in
/// `shaders/water.wgsl`.
pub const WAVE_LOOP_SECS: f32 = 60.0;

/// Largest vertical wave displacement (the sum of the wave amplitudes in
/// `shaders/water.wgsl`), studs; culling bounds grow by it. Keep in sync.
pub const WAVE_MAX_DISPLACEMENT_STUDS: f32 = 0.45 + 0.35 + 0.28 + 0.20;

/// One water vertex as the GPU reads it. Keep in sync with `VertexIn` in
/// `shaders/water.wgsl` (locations 0–2).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct WaterVertex {
    /// Position in chunk-local studs (`Float32x3`).
    pub pos_in_chunk: [f32; 3],
    /// xyz: unit normal (+Y on the sheet, horizontal on side faces); w: the
    /// wave fade in `[0, 1]` (`Snorm8x4`, so the fade has 127 steps).
    pub normal_fade: [i8; 4],
    /// x: the sheet's outline fade, 0 on the sheet's open outline and 1
    /// everywhere else (see [`outline_fade`]); yzw unused (`Unorm8x4`).
    pub outline: [u8; 4],
}

const _: () = assert!(std::mem::size_of::<WaterVertex>() == 20);

impl WaterVertex {
    /// Vertex attributes at shader locations 0..=2.
    pub const ATTRIBUTES: [wgpu::VertexAttribute; 3] = wgpu::vertex_attr_array![
        0 => Float32x3,
        1 => Snorm8x4,
        2 => Unorm8x4,
    ];

    /// Vertex buffer layout (slot 0, per vertex).
    pub fn layout() -> wgpu::VertexBufferLayout<'static> {
        wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<WaterVertex>() as u64,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &Self::ATTRIBUTES,
        }
    }

    /// Converts a CPU water mesh into GPU vertices (same order, same count).
    pub fn from_mesh(mesh: &WaterMesh) -> Vec<WaterVertex> {
        let outline = outline_fade(mesh);
        (0..mesh.positions.len())
            .map(|i| {
                let n = mesh.normals.get(i).copied().unwrap_or(glam::Vec3::Y);
                let fade = mesh.wave_fade.get(i).copied().unwrap_or(0.0);
                WaterVertex {
                    pos_in_chunk: mesh.positions[i].to_array(),
                    normal_fade: [
                        pack_snorm8(n.x),
                        pack_snorm8(n.y),
                        pack_snorm8(n.z),
                        pack_snorm8(fade.clamp(0.0, 1.0)),
                    ],
                    outline: [(outline[i] * 255.0).round() as u8, 0, 0, 0],
                }
            })
            .collect()
    }
}

/// Per vertex of `mesh`: 0 on the top sheet's open outline, 1 elsewhere.
///
/// The sheet reaches one cell past the water over the shore so the terrain
/// cuts its outline; where a beach is flatter than that, the sheet instead
/// ends in the air a little above the bed, along cell edges. The water
/// shader fades its alpha to 0 toward this outline (over one cell), so such
/// an end reads as a soft shoreline instead of a staircase.
///
/// The outline is every sheet edge used by one sheet triangle, except edges
/// in the chunk's border planes (the sheet goes on in the neighbour) and
/// edges shared with a side face (the lip of a waterfall stays opaque).
/// Vertices are matched by exact position: corners are computed from cells
/// alone, so every quad around a corner agrees. A vertex's value depends
/// only on the edges at it, so neighbouring chunks agree on shared vertices.
pub fn outline_fade(mesh: &WaterMesh) -> Vec<f32> {
    use rustc_hash::{FxHashMap, FxHashSet};
    type Key = [u32; 3];
    let key = |i: u32| -> Key {
        let p = mesh.positions[i as usize];
        [p.x.to_bits(), p.y.to_bits(), p.z.to_bits()]
    };
    let edge = |a: Key, b: Key| if a <= b { (a, b) } else { (b, a) };
    let is_sheet = |i: u32| mesh.normals.get(i as usize).is_some_and(|n| n.y > 0.5);
    let mut sheet_edges: FxHashMap<(Key, Key), u32> = FxHashMap::default();
    let mut side_edges: FxHashSet<(Key, Key)> = FxHashSet::default();
    for tri in mesh.indices.chunks_exact(3) {
        if tri.iter().any(|&i| i as usize >= mesh.positions.len()) {
            continue;
        }
        let sheet = tri.iter().all(|&i| is_sheet(i));
        for k in 0..3 {
            let e = edge(key(tri[k]), key(tri[(k + 1) % 3]));
            if sheet {
                *sheet_edges.entry(e).or_default() += 1;
            } else {
                side_edges.insert(e);
            }
        }
    }
    let border = crate::terrain::coords::CHUNK_SIZE_STUDS;
    let in_border_plane = |(a, b): (Key, Key)| {
        let (ax, az) = (f32::from_bits(a[0]), f32::from_bits(a[2]));
        let (bx, bz) = (f32::from_bits(b[0]), f32::from_bits(b[2]));
        [0.0, border]
            .iter()
            .any(|&v| (ax == v && bx == v) || (az == v && bz == v))
    };
    let mut outline: FxHashSet<Key> = FxHashSet::default();
    for (&e, &count) in &sheet_edges {
        if count == 1 && !in_border_plane(e) && !side_edges.contains(&e) {
            outline.insert(e.0);
            outline.insert(e.1);
        }
    }
    (0..mesh.positions.len() as u32)
        .map(|i| {
            if is_sheet(i) && outline.contains(&key(i)) {
                0.0
            } else {
                1.0
            }
        })
        .collect()
}

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
    /// and a [`DEPTH_FORMAT`] reversed-Z depth (compare `Greater`, no writes);
    /// the depth-reading one only when `read_depth`.
    pub fn new(
        device: &wgpu::Device,
        globals: &GlobalsBinding,
        target_format: wgpu::TextureFormat,
        sample_count: u32,
        read_depth: bool,
    ) -> Self {
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("water.wgsl"),
            source: wgpu::ShaderSource::Wgsl(super::shaders::WATER_WGSL.into()),
        });
        let multisampled = sample_count > 1;
        let make = |label: &str, layout: &wgpu::PipelineLayout, entry: &str| {
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(label),
                layout: Some(layout),
                vertex: wgpu::VertexState {
                    module: &shader,
                    entry_point: Some("vs_main"),
                    compilation_options: Default::default(),
                    buffers: &[Some(WaterVertex::layout()), Some(ChunkInstance::layout())],
                },
                primitive: wgpu::PrimitiveState {
                    topology: wgpu::PrimitiveTopology::TriangleList,
                    strip_index_format: None,
                    front_face: wgpu::FrontFace::Ccw,
                    // The sheet is visible from below too (camera underwater).
                    cull_mode: None,
                    unclipped_depth: false,
                    polygon_mode: wgpu::PolygonMode::Fill,
                    conservative: false,
                },
                depth_stencil: Some(wgpu::DepthStencilState {
                    format: DEPTH_FORMAT,
                    depth_write_enabled: Some(false),
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
                    entry_point: Some(entry),
                    compilation_options: Default::default(),
                    targets: &[Some(wgpu::ColorTargetState {
                        format: target_format,
                        blend: Some(wgpu::BlendState {
                            color: wgpu::BlendComponent {
                                src_factor: wgpu::BlendFactor::SrcAlpha,
                                dst_factor: wgpu::BlendFactor::OneMinusSrcAlpha,
                                operation: wgpu::BlendOperation::Add,
                            },
                            // Keep the target opaque.
                            alpha: wgpu::BlendComponent {
                                src_factor: wgpu::BlendFactor::Zero,
                                dst_factor: wgpu::BlendFactor::One,
                                operation: wgpu::BlendOperation::Add,
                            },
                        }),
                        write_mask: wgpu::ColorWrites::ALL,
                    })],
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        let flat_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("water (flat) pipeline layout"),
            bind_group_layouts: &[Some(&globals.layout)],
            immediate_size: 0,
        });
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
            let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("water pipeline layout"),
                bind_group_layouts: &[Some(&globals.layout), Some(&depth_layout)],
                immediate_size: 0,
            });
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
        globals: &GlobalsBinding,
        depth: &wgpu::BindGroup,
        water: &super::water_buffers::WaterBuffers,
    ) {
        let Some((pipeline, _)) = &self.depth_read else {
            return;
        };
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &globals.bind_group, &[]);
        pass.set_bind_group(1, depth, &[]);
        water.draw(pass);
    }

    /// Draws the prepared water chunks with the flat variant (any pass with
    /// a [`DEPTH_FORMAT`] attachment).
    pub fn paint_flat(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        globals: &GlobalsBinding,
        water: &super::water_buffers::WaterBuffers,
    ) {
        pass.set_pipeline(&self.flat);
        pass.set_bind_group(0, &globals.bind_group, &[]);
        water.draw(pass);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn vertices_carry_position_normal_and_fade() {
        let mesh = WaterMesh {
            positions: vec![Vec3::new(1.0, 2.0, 3.0), Vec3::new(4.0, 5.0, 6.0)],
            normals: vec![Vec3::Y, Vec3::X],
            wave_fade: vec![1.0, 0.0],
            indices: vec![],
        };
        let v = WaterVertex::from_mesh(&mesh);
        assert_eq!(v[0].pos_in_chunk, [1.0, 2.0, 3.0]);
        assert_eq!(v[0].normal_fade, [0, 127, 0, 127]);
        assert_eq!(v[1].normal_fade, [127, 0, 0, 0]);
    }

    /// A sheet of `w × d` cell quads (4 unshared vertices each, like the
    /// mesher's) with its lower-left cell corner at `origin` (cells).
    fn sheet(origin: (i32, i32), w: i32, d: i32) -> WaterMesh {
        let mut m = WaterMesh::default();
        for z in 0..d {
            for x in 0..w {
                let base = m.positions.len() as u32;
                for (dx, dz) in [(0, 0), (1, 0), (1, 1), (0, 1)] {
                    let (cx, cz) = (origin.0 + x + dx, origin.1 + z + dz);
                    m.positions
                        .push(Vec3::new(cx as f32 * 4.0, 40.0, cz as f32 * 4.0));
                    m.normals.push(Vec3::Y);
                    m.wave_fade.push(0.0);
                }
                m.indices
                    .extend_from_slice(&[base, base + 3, base + 2, base, base + 2, base + 1]);
            }
        }
        m
    }

    fn fade_at(m: &WaterMesh, fade: &[f32], cell_corner: (i32, i32)) -> f32 {
        let p = Vec3::new(cell_corner.0 as f32 * 4.0, 40.0, cell_corner.1 as f32 * 4.0);
        let values: Vec<f32> = (0..m.positions.len())
            .filter(|&i| m.positions[i] == p)
            .map(|i| fade[i])
            .collect();
        assert!(!values.is_empty(), "no vertex at {cell_corner:?}");
        assert!(
            values.iter().all(|v| *v == values[0]),
            "vertices at one corner agree"
        );
        values[0]
    }

    #[test]
    fn outline_is_zero_on_the_open_edge_only() {
        // A 4 × 4 pond in the chunk's interior: its rim is the outline.
        let m = sheet((10, 10), 4, 4);
        let f = outline_fade(&m);
        assert_eq!(fade_at(&m, &f, (10, 10)), 0.0);
        assert_eq!(fade_at(&m, &f, (12, 14)), 0.0);
        assert_eq!(fade_at(&m, &f, (12, 12)), 1.0);
        assert_eq!(fade_at(&m, &f, (11, 13)), 1.0);
    }

    #[test]
    fn chunk_borders_are_not_an_outline() {
        // Water running over the chunk's x = 0 border and on.
        let m = sheet((0, 10), 3, 4);
        let f = outline_fade(&m);
        assert_eq!(
            fade_at(&m, &f, (0, 12)),
            1.0,
            "border vertex inside the sheet"
        );
        assert_eq!(
            fade_at(&m, &f, (0, 10)),
            0.0,
            "where the real outline meets the border"
        );
        assert_eq!(fade_at(&m, &f, (3, 12)), 0.0);
    }

    #[test]
    fn waterfall_lips_are_not_an_outline() {
        let mut m = sheet((10, 10), 2, 3);
        // Side faces below the sheet's whole +x edge (x = 12 cells).
        let base = m.positions.len() as u32;
        for z in 10..13 {
            let b = m.positions.len() as u32;
            for (dz, y) in [(0, 30.0), (1, 30.0), (1, 40.0), (0, 40.0)] {
                m.positions.push(Vec3::new(48.0, y, (z + dz) as f32 * 4.0));
                m.normals.push(Vec3::X);
                m.wave_fade.push(0.0);
            }
            m.indices
                .extend_from_slice(&[b, b + 1, b + 2, b, b + 2, b + 3]);
        }
        let f = outline_fade(&m);
        assert_eq!(fade_at(&m, &f, (12, 11)), 1.0, "mid-lip stays opaque");
        assert_eq!(fade_at(&m, &f, (10, 11)), 0.0, "the open -x edge fades");
        assert!(
            f[base as usize..].iter().all(|v| *v == 1.0),
            "side faces never fade"
        );
    }

    #[test]
    fn wave_time_wraps_into_the_loop() {
        use super::super::globals::wrap_wave_time;
        assert_eq!(wrap_wave_time(1.5), 1.5);
        assert_eq!(wrap_wave_time(WAVE_LOOP_SECS + 1.5), 1.5);
        assert!((wrap_wave_time(-1.0) - (WAVE_LOOP_SECS - 1.0)).abs() < 1e-4);
        assert_eq!(wrap_wave_time(f32::NAN), 0.0);
        assert!(wrap_wave_time(1.0e9) < WAVE_LOOP_SECS);
    }
}
