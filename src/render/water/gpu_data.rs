//! What the water shader reads: the [`WaterVertex`] (with its conversion
//! from a CPU [`WaterMesh`]) and the constants shared with
//! `shaders/water.wgsl`. Each water chunk is one instance of the shared
//! `ChunkInstance` (`render::chunk_draw`) with a zero `w`.
//!
//! The vertex names the WGSL struct it mirrors and asserts its size at
//! compile time; `tests/gpu_layout.rs` checks every attribute offset against
//! what naga reports for the shaders (after rerun's `re_renderer`
//! `gpu_data` modules).

use crate::mesh::water::WaterMesh;

use super::super::chunk_draw::pack_snorm8;
use super::outline_fade::outline_fade;

/// Seconds after which the waves repeat exactly (every wave makes a whole
/// number of cycles). The animation time is wrapped to `[0, WAVE_LOOP_SECS)`
/// before it reaches the GPU. Keep in sync with `WAVE_LOOP_SECS` in
/// `shaders/water.wgsl`.
pub const WAVE_LOOP_SECS: f32 = 60.0;

/// Largest vertical wave displacement (the sum of the wave amplitudes in
/// `shaders/water.wgsl`), studs; culling bounds grow by it. Keep in sync.
pub const WAVE_MAX_DISPLACEMENT_STUDS: f32 = 0.45 + 0.35 + 0.28 + 0.20;

/// One water vertex as the GPU reads it: mirrors `struct VertexIn` in
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
}
