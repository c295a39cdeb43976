//! Seam audit of the shown meshes (spec §11): for every pair of neighbouring
//! chunks shown at the same level, the vertices both built for the cubes
//! along their shared border must coincide — same position (to 1e-3 studs;
//! each chunk places the vertex from its own origin in `f32`) and a
//! bit-identical normal. Boundary vertices are matched by their global cube
//! key (chunk origin in samples + the vertex's local cube).

use glam::{DVec3, IVec3};
use rustc_hash::FxHashMap;

use crate::mesh::ChunkMesh;
use crate::terrain::coords::{CHUNK_SIZE_CELLS, ChunkCoord};

use super::world_meshes::WorldMeshes;

/// Largest position difference of a shared boundary vertex, studs.
pub const POSITION_TOLERANCE_STUDS: f64 = 1e-3;

/// A boundary vertex two equal-level neighbours disagree on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeamMismatch {
    /// One of the two chunks (the other is the neighbour across the border).
    pub chunk: ChunkCoord,
    /// The neighbour.
    pub neighbour: ChunkCoord,
    /// The vertex position in `chunk`'s mesh, world studs.
    pub pos_world: DVec3,
    /// Index of the vertex in `chunk`'s mesh.
    pub vertex: u32,
}

/// One mesh's border vertices: global cube key → (world position, normal
/// bits, vertex index).
type BorderVertices = FxHashMap<IVec3, (DVec3, [u32; 3], u32)>;

/// The border vertices of `mesh` (chunk `coord` at `level`).
fn border_vertices(coord: ChunkCoord, level: u8, mesh: &ChunkMesh) -> BorderVertices {
    let n = CHUNK_SIZE_CELLS >> level;
    let base = coord.0 * n;
    let origin = coord.origin_world();
    let mut out = FxHashMap::default();
    for v in 0..mesh.skirt_start_vertex as usize {
        let c = mesh.vertex_cubes[v];
        let local = IVec3::new(c[0] as i32, c[1] as i32, c[2] as i32);
        let on_border =
            local.cmpeq(IVec3::splat(-1)).any() || local.cmpeq(IVec3::splat(n - 1)).any();
        if on_border {
            out.insert(
                base + local,
                (
                    origin + mesh.positions[v].as_dvec3(),
                    mesh.normals[v].to_array().map(f32::to_bits),
                    v as u32,
                ),
            );
        }
    }
    out
}

/// Audits every pair of face/edge/corner neighbours shown at equal levels and
/// returns the vertices they disagree on (none when seams are correct).
pub fn audit(meshes: &WorldMeshes) -> Vec<SeamMismatch> {
    let mut borders: FxHashMap<ChunkCoord, BorderVertices> = FxHashMap::default();
    for (coord, mesh) in meshes.iter() {
        let level = meshes.level_of(coord).unwrap_or(0);
        borders.insert(coord, border_vertices(coord, level, mesh));
    }
    let mut out = Vec::new();
    for (&coord, mine) in &borders {
        let level = meshes.level_of(coord).unwrap_or(0);
        for neighbour in coord.neighbours() {
            // Each unordered pair once.
            if (neighbour.0.z, neighbour.0.y, neighbour.0.x) < (coord.0.z, coord.0.y, coord.0.x) {
                continue;
            }
            if meshes.level_of(neighbour) != Some(level) {
                continue;
            }
            let Some(theirs) = borders.get(&neighbour) else {
                continue;
            };
            for (key, &(pos, normal, vertex)) in mine {
                if let Some(&(p2, n2, _)) = theirs.get(key)
                    && (pos.distance(p2) > POSITION_TOLERANCE_STUDS || normal != n2)
                {
                    out.push(SeamMismatch {
                        chunk: coord,
                        neighbour,
                        pos_world: pos,
                        vertex,
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::{Cell, CellBox, Grid, Material};
    use std::sync::Arc;

    fn bumpy() -> Grid {
        let mut g = Grid::new();
        g.edit_region(
            CellBox::new(IVec3::new(-40, 0, -40), IVec3::new(72, 40, 72)),
            |c, _| {
                let h =
                    20.0 + 6.0 * ((c.0.x as f32) * 0.3).sin() + 5.0 * ((c.0.z as f32) * 0.21).cos();
                Cell::new(
                    Material::GRASS,
                    ((h - c.0.y as f32).clamp(0.0, 1.0) * 255.0) as u8,
                )
            },
        )
        .unwrap();
        g
    }

    #[test]
    fn equal_levels_have_no_mismatch_at_any_level() {
        let g = bumpy();
        for level in 0..4u8 {
            let meshes = WorldMeshes::build(&g, &g.meshing_candidates(), |_| level);
            assert!(meshes.len() > 4);
            assert!(audit(&meshes).is_empty(), "level {level}");
        }
    }

    #[test]
    fn a_moved_boundary_vertex_is_reported() {
        let g = bumpy();
        let mut meshes = WorldMeshes::build_all(&g);
        let coord = ChunkCoord::new(0, 0, 0);
        let mut mesh = (**meshes.get(coord).unwrap()).clone();
        let v = (0..mesh.positions.len())
            .find(|&v| mesh.vertex_cubes[v][0] == 31)
            .expect("a vertex on the +x border");
        mesh.positions[v].y += 0.5;
        meshes.set_published(coord, 0, Arc::new(mesh), None);
        let m = audit(&meshes);
        assert!(!m.is_empty());
        assert!(m.iter().all(|x| x.chunk == coord || x.neighbour == coord));
    }
}
