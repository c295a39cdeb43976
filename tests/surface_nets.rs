//! Surface Nets contract tests (spec §4, §5) on hand-built fields with exact expected values.

use glam::{IVec3, Vec3};
use strata::mesh::{ChunkMesh, MeshOptions, SurfaceNets};
use strata::terrain::{Cell, CellBox, ChunkCoord, Grid, Material};

fn mesh(grid: &Grid, coord: ChunkCoord) -> ChunkMesh {
    let mut m = ChunkMesh::default();
    SurfaceNets::new().mesh_chunk_l0(grid, coord, MeshOptions::default(), &mut m);
    m
}

/// Rock up to cell row 9, cell row 10 at `top_occupancy`, air above; spanning chunk (0,0,0) ± 1.
fn floor(top_occupancy: u8) -> Grid {
    let mut g = Grid::new();
    g.edit_region(
        CellBox::new(IVec3::new(-32, -32, -32), IVec3::new(64, 11, 64)),
        |c, _| {
            if c.0.y < 10 {
                Cell::full(Material::ROCK)
            } else {
                Cell::new(Material::ROCK, top_occupancy)
            }
        },
    )
    .unwrap();
    g
}

#[test]
fn flat_floor_sits_at_the_linear_half_crossing() {
    let g = floor(64);
    let m = mesh(&g, ChunkCoord::new(0, 0, 0));
    // One quad per column of the chunk: 32 × 32 y-edges from row 9 (255) to row 10 (64).
    assert_eq!(m.triangle_count(), 2 * 32 * 32);
    let t = (127.5f32 - 255.0) / (64.0 - 255.0);
    let expected_y = (9.0 + 0.5 + t) * 4.0;
    for (p, n) in m.positions.iter().zip(&m.normals) {
        assert!((p.y - expected_y).abs() < 1e-4, "{p} vs {expected_y}");
        assert_eq!(*n, Vec3::Y);
    }
    // Vertices sit in cubes -1..=31 horizontally: x from 0 to 128 studs exactly.
    let (lo, hi) = m.bounds_local().unwrap();
    assert_eq!((lo.x, hi.x, lo.z, hi.z), (0.0, 128.0, 0.0, 128.0));
}

#[test]
fn winding_faces_out_of_the_solid() {
    let mut g = Grid::new();
    g.edit_region(CellBox::new(IVec3::splat(-20), IVec3::splat(20)), |c, _| {
        let d = (c.0.as_vec3() + Vec3::splat(0.5)).length();
        Cell::new(Material::ROCK, ((12.5 - d).clamp(0.0, 1.0) * 255.0) as u8)
    })
    .unwrap();
    let mut triangles = 0;
    for coord in g.meshing_candidates() {
        let m = mesh(&g, coord);
        let origin = coord.origin_world().as_vec3();
        for tri in m.indices.chunks_exact(3) {
            let [a, b, c] = [0, 1, 2].map(|i| m.positions[tri[i] as usize]);
            let face = (b - a).cross(c - a);
            let centroid = origin + (a + b + c) / 3.0;
            // Outward on a sphere centred at the origin.
            assert!(face.dot(centroid) > 0.0, "inward triangle in {coord:?}");
            let vn = m.normals[tri[0] as usize];
            assert!(vn.dot(centroid.normalize()) > 0.5);
            triangles += 1;
        }
    }
    assert!(triangles > 1000);
}

#[test]
fn uniform_chunks_skip_or_own_their_top_face() {
    let mut g = Grid::new();
    // Solid rock filling chunk layers y = -1 and y = 0, air above.
    g.edit_region(
        CellBox::new(IVec3::new(0, -32, 0), IVec3::new(32, 32, 32)),
        |_, _| Cell::full(Material::ROCK),
    )
    .unwrap();
    assert!(
        g.chunk(ChunkCoord::new(0, 0, 0))
            .unwrap()
            .cells
            .as_uniform()
            .is_some()
    );
    // Buried chunk: no owned crossing edge in +y (solid above); sides face empty chunks.
    let buried = mesh(&g, ChunkCoord::new(0, -1, 0));
    // Its +x and +z faces border empty chunks: 32 × 32 side quads each.
    assert_eq!(buried.triangle_count(), 2 * (32 * 32 * 2));
    let top = mesh(&g, ChunkCoord::new(0, 0, 0));
    // Top face (owned: lower sample in this chunk) plus +x and +z sides.
    assert_eq!(top.triangle_count(), 2 * (32 * 32 * 3));
    // A chunk surrounded by air owns nothing.
    assert!(mesh(&g, ChunkCoord::new(5, 5, 5)).is_empty());
}

#[test]
fn material_sets_are_sorted_and_weights_sum_to_255() {
    let mut g = Grid::new();
    let mats = [
        Material::GRASS,
        Material::ROCK,
        Material::SAND,
        Material::SNOW,
        Material::MUD,
    ];
    g.edit_region(
        CellBox::new(IVec3::splat(-8), IVec3::new(40, 12, 40)),
        |c, _| {
            let m = mats[((c.0.x / 3 + c.0.z / 2).rem_euclid(5)) as usize];
            let h = 6.0 + ((c.0.x as f32) * 0.4).sin() * 3.0;
            let occ = ((h - c.0.y as f32).clamp(0.0, 1.0) * 255.0) as u8;
            Cell::new(m, occ)
        },
    )
    .unwrap();
    let m = mesh(&g, ChunkCoord::new(0, 0, 0));
    assert!(!m.is_empty());
    let mut multi = 0;
    for (ids, w) in m.material_ids.iter().zip(&m.material_weights) {
        assert_eq!(
            w.iter().map(|&x| x as u32).sum::<u32>(),
            255,
            "{ids:?} {w:?}"
        );
        assert!(ids.iter().all(|&id| Material(id).is_solid()));
        // A strictly increasing prefix (the set), then padding repeating ids[0].
        let len = 1 + ids.windows(2).take_while(|p| p[0] < p[1]).count();
        assert!(ids[len..].iter().all(|&x| x == ids[0]), "{ids:?}");
        assert!(
            w[len..].iter().all(|&x| x == 0),
            "padding carries no weight: {ids:?} {w:?}"
        );
        let distinct = &ids[..len];
        if distinct.len() > 1 {
            multi += 1;
        }
    }
    assert!(multi > 10, "blended vertices exist ({multi})");
    // All 4 vertices of each quad carry the same set.
    for quad in m.indices.chunks_exact(6) {
        let s = m.material_ids[quad[0] as usize];
        assert!(quad.iter().all(|&i| m.material_ids[i as usize] == s));
    }
}
