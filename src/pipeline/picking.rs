//! Brush picking: a ray cast against the CPU copy of the displayed meshes.
//!
//! The cursor must land on what the artist sees, so picking uses the render
//! meshes (without skirts), not colliders. Chunks are tested nearest first by
//! their bounds and the search stops once the best hit is nearer than the
//! next chunk's entry distance.

use glam::{DVec3, Vec3};

use crate::mesh::ChunkMesh;
use crate::pipeline::WorldMeshes;
use crate::terrain::storage::coords::ChunkCoord;

/// A ray hit on the displayed terrain surface.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PickHit {
    /// Hit point in world studs.
    pub pos_world: DVec3,
    /// Geometric (face) normal of the hit triangle, unit length, facing the ray.
    pub normal: Vec3,
    /// Distance from the ray origin in studs.
    pub distance_studs: f64,
    /// Chunk whose mesh was hit.
    pub chunk: ChunkCoord,
}

/// Casts a ray from `origin_world` along `dir` (need not be normalized) up to
/// `max_distance_studs` against every mesh in `meshes`. Returns the nearest
/// front-or-back-facing hit, or `None` (also for a zero or non-finite direction).
pub fn pick(
    meshes: &WorldMeshes,
    origin_world: DVec3,
    dir: Vec3,
    max_distance_studs: f64,
) -> Option<PickHit> {
    let dir = dir.try_normalize()?;
    if !origin_world.is_finite() || max_distance_studs.is_nan() || max_distance_studs <= 0.0 {
        return None;
    }
    let dir_d = dir.as_dvec3();
    // Candidate chunks whose mesh bounds the ray enters, sorted by entry distance.
    let mut candidates: Vec<(f64, ChunkCoord, &ChunkMesh)> = meshes
        .iter_with_bounds()
        .filter_map(|(coord, mesh, (lo, hi))| {
            let origin = coord.origin_world();
            let t = ray_box(
                origin_world,
                dir_d,
                origin + lo.as_dvec3(),
                origin + hi.as_dvec3(),
            )?;
            (t <= max_distance_studs).then_some((t, coord, mesh.as_ref()))
        })
        .collect();
    candidates.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut best: Option<PickHit> = None;
    for (entry, coord, mesh) in candidates {
        if best.is_some_and(|b| b.distance_studs < entry) {
            break;
        }
        if let Some(hit) = pick_chunk(mesh, coord, origin_world, dir, max_distance_studs)
            && best.is_none_or(|b| hit.distance_studs < b.distance_studs)
        {
            best = Some(hit);
        }
    }
    best
}

/// Casts a ray from `origin_world` along the unit vector `dir` up to
/// `max_distance_studs` against one chunk's mesh `mesh` (chunk `coord`),
/// without skirts. Returns the nearest hit, or `None`.
pub fn pick_chunk(
    mesh: &ChunkMesh,
    coord: ChunkCoord,
    origin_world: DVec3,
    dir: Vec3,
    max_distance_studs: f64,
) -> Option<PickHit> {
    // Work chunk-locally in f32: the ray origin relative to the chunk is small.
    let origin_local = (origin_world - coord.origin_world()).as_vec3();
    let (t, n) = ray_mesh(mesh, origin_local, dir)?;
    let t = t as f64;
    (t <= max_distance_studs).then(|| PickHit {
        pos_world: origin_world + dir.as_dvec3() * t,
        normal: if n.dot(dir) > 0.0 { -n } else { n },
        distance_studs: t,
        chunk: coord,
    })
}

/// Slab test: entry distance (>= 0) of a ray into an axis-aligned box, if it
/// hits. An axis the ray is parallel to only checks that the origin lies
/// within the slab (avoids `0 * inf = NaN` on a boundary plane).
fn ray_box(origin: DVec3, dir: DVec3, lo: DVec3, hi: DVec3) -> Option<f64> {
    let mut enter = 0.0f64;
    let mut exit = f64::INFINITY;
    for axis in 0..3 {
        let (o, d, l, h) = (origin[axis], dir[axis], lo[axis], hi[axis]);
        if d == 0.0 {
            if o < l || o > h {
                return None;
            }
            continue;
        }
        let (t0, t1) = ((l - o) / d, (h - o) / d);
        enter = enter.max(t0.min(t1));
        exit = exit.min(t0.max(t1));
    }
    (enter <= exit).then_some(enter)
}

/// Nearest hit of a chunk-local ray on a mesh's surface triangles (no skirts):
/// distance and unit face normal.
fn ray_mesh(mesh: &ChunkMesh, origin: Vec3, dir: Vec3) -> Option<(f32, Vec3)> {
    let mut best: Option<(f32, Vec3)> = None;
    for tri in mesh.surface_indices().chunks_exact(3) {
        let a = mesh.positions[tri[0] as usize];
        let b = mesh.positions[tri[1] as usize];
        let c = mesh.positions[tri[2] as usize];
        if let Some(t) = ray_triangle(origin, dir, a, b, c)
            && best.is_none_or(|(bt, _)| t < bt)
        {
            best = Some((t, (b - a).cross(c - a).normalize_or(Vec3::Y)));
        }
    }
    best
}

/// Möller–Trumbore ray/triangle intersection (both faces); distance along `dir`.
fn ray_triangle(origin: Vec3, dir: Vec3, a: Vec3, b: Vec3, c: Vec3) -> Option<f32> {
    let e1 = b - a;
    let e2 = c - a;
    let p = dir.cross(e2);
    let det = e1.dot(p);
    if det.abs() < 1e-12 {
        return None;
    }
    let inv = 1.0 / det;
    let s = origin - a;
    let u = s.dot(p) * inv;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let q = s.cross(e1);
    let v = dir.dot(q) * inv;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    let t = e2.dot(q) * inv;
    (t >= 0.0).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::cell::{Cell, Material};
    use crate::terrain::storage::coords::CellBox;
    use crate::terrain::storage::grid::Grid;
    use glam::IVec3;

    /// A flat floor: cells with y < 10 are rock, spanning chunks -1..=0 in x and z.
    fn floor_world() -> WorldMeshes {
        let mut g = Grid::new();
        g.edit_region(
            CellBox::new(IVec3::new(-40, 0, -40), IVec3::new(40, 10, 40)),
            |_, _| Cell::full(Material::ROCK),
        )
        .unwrap();
        WorldMeshes::build_all(&g)
    }

    #[test]
    fn ray_down_hits_the_floor_surface() {
        let meshes = floor_world();
        // Surface at the 0.5 crossing between cell 9 (full) and cell 10 (empty): y = 40 studs.
        let hit = pick(&meshes, DVec3::new(-13.0, 200.0, 7.0), -Vec3::Y, 1000.0).unwrap();
        assert!((hit.pos_world.y - 40.0).abs() < 1e-3, "{hit:?}");
        assert!((hit.normal - Vec3::Y).length() < 1e-5);
        assert_eq!(hit.chunk, ChunkCoord::new(-1, 0, 0));
        assert!((hit.distance_studs - 160.0).abs() < 1e-3);
    }

    #[test]
    fn misses_and_bad_rays_return_none() {
        let meshes = floor_world();
        assert!(pick(&meshes, DVec3::new(0.0, 200.0, 0.0), Vec3::Y, 1000.0).is_none());
        assert!(pick(&meshes, DVec3::new(0.0, 200.0, 0.0), -Vec3::Y, 100.0).is_none());
        assert!(pick(&meshes, DVec3::new(0.0, 200.0, 0.0), Vec3::ZERO, 1000.0).is_none());
        assert!(pick(&meshes, DVec3::new(0.0, 200.0, 0.0), Vec3::NAN, 1000.0).is_none());
        assert!(pick(&meshes, DVec3::NAN, -Vec3::Y, 1000.0).is_none());
    }

    #[test]
    fn oblique_ray_hits_nearest_surface_across_chunks() {
        let meshes = floor_world();
        let origin = DVec3::new(100.0, 100.0, 7.0);
        let dir = Vec3::new(-1.0, -0.5, 0.0);
        let hit = pick(&meshes, origin, dir, 1000.0).unwrap();
        // y drops 60 studs to reach 40 => x moves 120 studs: x = -20.
        assert!((hit.pos_world.x + 20.0).abs() < 1e-3, "{hit:?}");
        assert_eq!(hit.chunk, ChunkCoord::new(-1, 0, 0));
    }
}
