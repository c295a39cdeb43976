//! What the binary glTF exports share: the GLB container (header, chunk
//! types, 4-byte padding) and the surface part of a chunk mesh.

use std::sync::Arc;

use glam::Vec3;

use crate::mesh::ChunkMesh;
use crate::pipeline::WorldMeshes;
use crate::terrain::ChunkCoord;

const GLB_MAGIC: u32 = 0x4654_6C67;
const CHUNK_JSON: u32 = 0x4E4F_534A;
/// The type of a GLB's binary chunk (its header is the chunk's length and this).
pub(super) const CHUNK_BIN: u32 = 0x004E_4942;

/// The GLB file header and the JSON chunk's header, little-endian: magic,
/// version 2, `total_bytes` (the whole file), the JSON chunk's length and
/// type. The JSON bytes follow, then the binary chunk.
pub(super) fn glb_header(total_bytes: u32, json_bytes: u32) -> [u8; 20] {
    let mut out = [0u8; 20];
    for (i, word) in [GLB_MAGIC, 2, total_bytes, json_bytes, CHUNK_JSON]
        .into_iter()
        .enumerate()
    {
        out[4 * i..4 * i + 4].copy_from_slice(&word.to_le_bytes());
    }
    out
}

/// `n` rounded up to a multiple of 4 (glTF aligns views and chunks to 4 bytes).
pub(super) fn pad4(n: u64) -> u64 {
    n.div_ceil(4) * 4
}

/// The surface part of one chunk mesh: its first `vertices` vertices and
/// its surface indices (skirts left out).
pub(super) struct Part {
    /// The chunk.
    pub coord: ChunkCoord,
    /// Its full-detail mesh.
    pub mesh: Arc<ChunkMesh>,
    /// Surface vertices (the mesh's skirt start).
    pub vertices: usize,
}

impl Part {
    /// The surface triangles, 3 chunk-local vertex indices each.
    pub fn indices(&self) -> &[u32] {
        self.mesh.surface_indices()
    }

    /// The surface vertices' positions in world studs (chunk origin +
    /// chunk-local position, added in `f64`, then rounded to `f32`).
    pub fn world_positions(&self) -> impl Iterator<Item = Vec3> + '_ {
        let origin = self.coord.origin_world();
        self.mesh.positions[..self.vertices]
            .iter()
            .map(move |p| (origin + p.as_dvec3()).as_vec3())
    }
}

/// The surface part of every chunk mesh that has one, in (z, y, x) chunk
/// order (skirts left out).
pub(super) fn surface_parts(meshes: &WorldMeshes) -> Vec<Part> {
    let mut parts: Vec<Part> = meshes
        .iter()
        .map(|(coord, mesh)| Part {
            coord,
            mesh: mesh.clone(),
            vertices: mesh.skirt_start_vertex as usize,
        })
        .filter(|p| !p.indices().is_empty() && p.vertices > 0)
        .collect();
    parts.sort_by_key(|p| (p.coord.0.z, p.coord.0.y, p.coord.0.x));
    parts
}

/// The glTF JSON of `root` as a GLB JSON chunk: padded with spaces to a
/// multiple of 4 bytes.
///
/// # Errors
/// The serializer's message (it fails only on non-finite numbers).
pub(super) fn json_chunk(root: &gltf_json::Root) -> Result<Vec<u8>, String> {
    let mut json_bytes = root.to_vec().map_err(|e| e.to_string())?;
    while !json_bytes.len().is_multiple_of(4) {
        json_bytes.push(b' ');
    }
    Ok(json_bytes)
}
