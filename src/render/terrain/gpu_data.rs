//! What the terrain shader reads: the [`TerrainVertex`] (with its
//! conversion from a CPU [`ChunkMesh`]) and the terrain's meaning of the
//! spare words of the shared `ChunkInstance` (`render::chunk_draw`): the
//! mesh's age for the `remesh` flash, and the level, residency state and
//! fade bits packed into `chunk_coord.w` (the fade bits are built by
//! [`super::level_fades::fade_bits`]).
//!
//! The vertex names the WGSL struct it mirrors and asserts its size at
//! compile time; `tests/gpu_layout.rs` checks every attribute offset against
//! what naga reports for the shaders (after rerun's `re_renderer`
//! `gpu_data` modules).

use crate::mesh::ChunkMesh;

use super::super::chunk_draw::pack_snorm8;

/// `TerrainVertex::normal[3]` of skirt vertices (1.0 as snorm8).
pub const SKIRT_MARK: i8 = 127;

/// Instance age (`ChunkInstance::chunk_origin_rel.w`) for chunks that were
/// never promoted (uploaded at start-up) and for horizon nodes: far past
/// any `remesh` flash.
pub const AGE_NEVER_PROMOTED_SECS: f32 = 1.0e6;

/// Shift of the residency state in the instance's `chunk_coord.w` (the
/// level of detail takes the four bits below it). Keep in sync with
/// `RESIDENCY_SHIFT` in `shaders/terrain.wgsl`.
pub const STATE_SHIFT: u32 = 4;

/// `chunk_coord.w` of a terrain instance without a fade: the level of
/// detail in the low bits and the residency overlay's `state_code` (0: no
/// tint) above them.
pub fn level_state_bits(level: u8, state_code: i32) -> i32 {
    i32::from(level) | (state_code << STATE_SHIFT)
}

/// One terrain vertex as the GPU reads it: mirrors `struct VertexIn` in
/// `shaders/terrain.wgsl` (locations 0–3) and the words `vertex_words`
/// decodes in `shaders/wireframe.wgsl`.
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
}
