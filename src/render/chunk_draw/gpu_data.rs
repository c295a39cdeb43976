//! The per-chunk instance the GPU reads for every chunk draw (terrain,
//! horizon nodes, water, wireframe), and the normal packing the terrain and
//! water vertices share.
//!
//! The struct names the WGSL members it mirrors and asserts its size at
//! compile time; `tests/gpu_layout.rs` checks every attribute offset against
//! what naga reports for the shaders (after rerun's `re_renderer`
//! `gpu_data` modules).

/// `v` clamped to `[-1, 1]` as an `Snorm8` (127 steps per unit), the packing
/// of the terrain and water normals.
pub fn pack_snorm8(v: f32) -> i8 {
    (v.clamp(-1.0, 1.0) * 127.0).round() as i8
}

/// Per-instance data of one drawn chunk (terrain, water and wireframe
/// draws): mirrors the instance members of `struct VertexIn` in
/// `shaders/terrain.wgsl` (locations 4–5), `shaders/water.wgsl` and
/// `shaders/wireframe.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ChunkInstance {
    /// xyz: `chunk.origin_world() - camera.pos_world` in studs, computed in
    /// `f64` and cast once; w: seconds since the chunk's mesh was last
    /// promoted, for the `remesh` overlay (`Float32x4`).
    pub chunk_origin_rel: [f32; 4],
    /// xyz: the integer chunk coordinate, which lets the shader build
    /// globally continuous noise without large float coordinates; w: the
    /// mesh's level of detail and the terrain's overlay and fade bits (see
    /// `render::terrain::gpu_data`; 0 for water) (`Sint32x4`).
    pub chunk_coord: [i32; 4],
}

const _: () = assert!(std::mem::size_of::<ChunkInstance>() == 32);

impl ChunkInstance {
    /// Instance attributes at shader locations 4..=5.
    pub const ATTRIBUTES: [wgpu::VertexAttribute; 2] = wgpu::vertex_attr_array![
        4 => Float32x4,
        5 => Sint32x4,
    ];

    /// Vertex buffer layout (per instance; slot 1 of the terrain and water
    /// pipelines, slot 0 of the vertex-pulling wireframe).
    pub fn layout() -> wgpu::VertexBufferLayout<'static> {
        wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<ChunkInstance>() as u64,
            step_mode: wgpu::VertexStepMode::Instance,
            attributes: &Self::ATTRIBUTES,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normals_pack_to_snorm8() {
        assert_eq!(pack_snorm8(1.0), 127);
        assert_eq!(pack_snorm8(-1.0), -127);
        assert_eq!(pack_snorm8(0.0), 0);
    }
}
