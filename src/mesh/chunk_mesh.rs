//! The CPU mesh of one chunk, as produced by the Surface Nets mesher.
//!
//! Plain structure-of-arrays data in chunk-local studs; the renderer converts
//! it to its GPU vertex type, the editor keeps positions and indices for
//! picking. Keeping it free of GPU types lets tests inspect every value.

use glam::Vec3;

/// Triangle mesh of one chunk's solid surface at one level of detail.
///
/// All per-vertex vectors have the same length. Triangles are counter-clockwise
/// when seen from outside the solid.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChunkMesh {
    /// Vertex positions in chunk-local studs (origin at the chunk's minimum corner).
    pub positions: Vec<Vec3>,
    /// Unit normals pointing out of the solid.
    pub normals: Vec<Vec3>,
    /// The quad's material set: up to 4 material ids sorted ascending; unused
    /// slots repeat the first id with weight 0. Identical on all 4 vertices of a quad.
    pub material_ids: Vec<[u8; 4]>,
    /// Per-vertex 8-bit weights for `material_ids`, summing to exactly 255.
    pub material_weights: Vec<[u8; 4]>,
    /// Triangle list, 3 indices per triangle.
    pub indices: Vec<u32>,
    /// Minimum-corner sample of the cube that produced each vertex, chunk-local
    /// sample coordinates (`-1..=n-1`). Identifies the vertex for seam audits.
    pub vertex_cubes: Vec<[i8; 3]>,
    /// Vertex offset inside its cube in `[0, 1]³`, exactly as computed from the
    /// samples. Filled only when the mesher is asked to keep it (seam tests and
    /// audits); empty otherwise.
    pub cube_offsets: Vec<Vec3>,
    /// Index of the first skirt vertex: vertices (and the triangles using them)
    /// from here on are render-only skirts. Equals `positions.len()` when there are none.
    pub skirt_start_vertex: u32,
    /// Index into `indices` where skirt triangles begin (`indices.len()` when none).
    pub skirt_start_index: u32,
    /// The mesher that made it: audits tell Surface Nets meshes from
    /// low-poly ones.
    pub style: super::MeshStyle,
    /// Solid materials of the chunk's neighbourhood past the 30 one mesh
    /// draws exactly, drawn as its most common solid instead
    /// ([`super::local_palette`]); 0 almost always.
    pub merged_materials: u32,
}

impl ChunkMesh {
    /// Removes all data, keeping allocations.
    pub fn clear(&mut self) {
        self.positions.clear();
        self.normals.clear();
        self.material_ids.clear();
        self.material_weights.clear();
        self.indices.clear();
        self.vertex_cubes.clear();
        self.cube_offsets.clear();
        self.skirt_start_vertex = 0;
        self.skirt_start_index = 0;
        self.style = super::MeshStyle::Smooth;
        self.merged_materials = 0;
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// Number of triangles (including skirts).
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// True when the mesh has no triangles.
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }

    /// Triangles of the surface proper, without skirts.
    pub fn surface_indices(&self) -> &[u32] {
        &self.indices[..self.skirt_start_index as usize]
    }

    /// Heap bytes held by the mesh's vectors (their lengths, not capacities).
    pub fn heap_bytes(&self) -> usize {
        self.positions.len() * 12
            + self.normals.len() * 12
            + self.material_ids.len() * 4
            + self.material_weights.len() * 4
            + self.indices.len() * 4
            + self.vertex_cubes.len() * 3
            + self.cube_offsets.len() * 12
    }

    /// Axis-aligned bounds of the vertex positions (chunk-local studs), or `None` when empty.
    pub fn bounds_local(&self) -> Option<(Vec3, Vec3)> {
        let first = *self.positions.first()?;
        Some(
            self.positions
                .iter()
                .fold((first, first), |(lo, hi), &p| (lo.min(p), hi.max(p))),
        )
    }
}
