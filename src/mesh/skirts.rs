//! Skirts: render-only curtains that hide cracks between levels of detail
//! (spec §6).
//!
//! Where a coarse chunk meets a finer (or coarser) neighbour, the two
//! surfaces sample the field differently and can leave slits along the border.
//! Every open edge of a coarse chunk mesh (an edge used by one triangle: with
//! Surface Nets these run along the chunk's faces) gets a quad hanging from it
//! into the solid, along the negated vertex normals, deep enough to cover the
//! largest gap two levels can leave. Skirt vertices and triangles are appended
//! after the surface ([`ChunkMesh::skirt_start_vertex`],
//! [`ChunkMesh::skirt_start_index`]), so picking and collision, which use
//! [`ChunkMesh::surface_indices`], never see them.

use rustc_hash::FxHashMap;

use glam::Vec3;

use super::chunk_mesh::ChunkMesh;
use crate::terrain::storage::coords::CELL_SIZE_STUDS;

/// Skirt depth for a chunk meshed at `level`: one sample spacing (8, 16,
/// 32 studs at levels 1–3; a node's at its own level). Half a spacing left
/// sky-coloured specks where steep rock changes level (the Islands
/// recipe's gullies: a level-1 border 5 studs off its level-0 neighbour);
/// a whole spacing covers the largest offset two adjacent levels leave
/// there and in fast flights, and the curtains stay inside the terrain.
pub fn skirt_depth_studs(level: u8) -> f32 {
    1.0 * CELL_SIZE_STUDS * (1u32 << level) as f32
}

/// Normals with at least this upward component get vertical skirts.
pub const VERTICAL_SKIRT_MIN_NORMAL_Y: f32 = 0.3;

/// Direction a skirt hangs from a vertex with unit normal `normal`.
pub fn skirt_direction(normal: Vec3) -> Vec3 {
    if normal.y >= VERTICAL_SKIRT_MIN_NORMAL_Y {
        Vec3::NEG_Y
    } else {
        -normal
    }
}

/// Appends skirts along every open edge of `mesh`'s surface, hanging
/// `depth_studs` along [`skirt_direction`] of each vertex. A coarse chunk's
/// border vertices can sit up to a sample spacing inside its faces while a
/// finer neighbour's reach the face, leaving a gap seen from above; so skirt
/// vertices of cubes on a side face (`samples_per_axis` tells which) are also
/// pushed out horizontally to `overhang_studs` past that face. Skirt quads are emitted
/// with both windings so they show from either side. Replaces skirts added
/// earlier.
pub fn add_skirts(
    mesh: &mut ChunkMesh,
    depth_studs: f32,
    samples_per_axis: usize,
    overhang_studs: f32,
) {
    add_skirts_sized(
        mesh,
        depth_studs,
        samples_per_axis,
        overhang_studs,
        crate::terrain::storage::coords::CHUNK_SIZE_STUDS,
    );
}

/// [`add_skirts`] for a mesh `side_studs` on a side (a node above the
/// chunk, spec §13), whose side faces lie at 0 and `side_studs`.
pub fn add_skirts_sized(
    mesh: &mut ChunkMesh,
    depth_studs: f32,
    samples_per_axis: usize,
    overhang_studs: f32,
    side_studs: f32,
) {
    let n = samples_per_axis as i32;
    let chunk_studs = side_studs;
    let surface_vertices = mesh.skirt_start_vertex as usize;
    let surface_indices = mesh.skirt_start_index as usize;
    truncate(mesh, surface_vertices, surface_indices);
    // Count directed edges; an open edge has no twin in the opposite direction.
    let mut edges: FxHashMap<(u32, u32), u32> = FxHashMap::default();
    for tri in mesh.indices[..surface_indices].chunks_exact(3) {
        for (a, b) in [(tri[0], tri[1]), (tri[1], tri[2]), (tri[2], tri[0])] {
            *edges.entry((a, b)).or_insert(0) += 1;
        }
    }
    // Duplicate vertices (same cube, different material sets) make equal
    // positions appear with different indices; compare edges by position.
    let key = |i: u32| mesh.positions[i as usize].to_array().map(f32::to_bits);
    let mut by_position: FxHashMap<([u32; 3], [u32; 3]), u32> = FxHashMap::default();
    for &(a, b) in edges.keys() {
        *by_position.entry((key(a), key(b))).or_insert(0) += 1;
    }
    let mut open: Vec<(u32, u32)> = edges
        .keys()
        .copied()
        .filter(|&(a, b)| !by_position.contains_key(&(key(b), key(a))))
        .collect();
    open.sort_unstable();
    let mut lowered: FxHashMap<u32, u32> = FxHashMap::default();
    for (a, b) in open {
        let [la, lb] = [a, b].map(|v| {
            *lowered.entry(v).or_insert_with(|| {
                let i = v as usize;
                let index = mesh.positions.len() as u32;
                let mut p = mesh.positions[i] + skirt_direction(mesh.normals[i]) * depth_studs;
                let cube = mesh.vertex_cubes[i];
                for axis in [0usize, 2] {
                    let c = cube[axis] as i32;
                    if c <= -1 {
                        p[axis] = p[axis].min(-overhang_studs);
                    } else if c >= n - 1 {
                        p[axis] = p[axis].max(chunk_studs + overhang_studs);
                    }
                }
                mesh.positions.push(p);
                mesh.normals.push(mesh.normals[i]);
                mesh.material_ids.push(mesh.material_ids[i]);
                mesh.material_weights.push(mesh.material_weights[i]);
                mesh.vertex_cubes.push(mesh.vertex_cubes[i]);
                if !mesh.cube_offsets.is_empty() {
                    mesh.cube_offsets.push(mesh.cube_offsets[i]);
                }
                index
            })
        });
        mesh.indices.extend_from_slice(&[a, b, lb, a, lb, la]);
        mesh.indices.extend_from_slice(&[a, lb, b, a, la, lb]);
    }
    mesh.skirt_start_vertex = surface_vertices as u32;
    mesh.skirt_start_index = surface_indices as u32;
}

fn truncate(mesh: &mut ChunkMesh, vertices: usize, indices: usize) {
    mesh.positions.truncate(vertices);
    mesh.normals.truncate(vertices);
    mesh.material_ids.truncate(vertices);
    mesh.material_weights.truncate(vertices);
    mesh.vertex_cubes.truncate(vertices);
    if mesh.cube_offsets.len() > vertices {
        mesh.cube_offsets.truncate(vertices);
    }
    mesh.indices.truncate(indices);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{MeshOptions, SurfaceNets};
    use crate::terrain::{Cell, CellBox, ChunkCoord, Grid, Material};
    use glam::IVec3;

    #[test]
    fn skirts_hang_from_every_border_edge_and_stay_out_of_the_surface() {
        let mut g = Grid::new();
        g.edit_region(
            CellBox::new(IVec3::new(-40, 0, -40), IVec3::new(80, 10, 80)),
            |_, _| Cell::full(Material::GRASS),
        )
        .unwrap();
        let mut mesh = ChunkMesh::default();
        SurfaceNets::new().mesh_chunk_l0(
            &g,
            ChunkCoord::new(0, 0, 0),
            MeshOptions::default(),
            &mut mesh,
        );
        let surface = mesh.clone();
        add_skirts(&mut mesh, 12.0, 32, 2.0);
        // The flat 32×32-quad floor has 4 × 32 open border edges.
        let skirt_triangles = (mesh.indices.len() - surface.indices.len()) / 3;
        assert_eq!(skirt_triangles, 4 * 32 * 4);
        assert_eq!(mesh.surface_indices(), &surface.indices[..]);
        assert_eq!(
            &mesh.positions[..surface.positions.len()],
            &surface.positions[..]
        );
        // Skirt vertices sit 12 studs below the floor (normals point up) and
        // 2 studs outside the chunk's side faces.
        for p in &mesh.positions[surface.positions.len()..] {
            assert!((p.y - (surface.positions[0].y - 12.0)).abs() < 1e-4);
            let outside_x = p.x <= -2.0 || p.x >= 130.0;
            let outside_z = p.z <= -2.0 || p.z >= 130.0;
            assert!(outside_x || outside_z, "{p}");
        }
        // Adding again replaces, not doubles.
        add_skirts(&mut mesh, 12.0, 32, 2.0);
        assert_eq!((mesh.indices.len() - surface.indices.len()) / 3, 4 * 32 * 4);
    }
}
