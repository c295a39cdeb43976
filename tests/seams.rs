//! Seam tests of the terrain contract (spec §11) at full detail.
//!
//! For each field, every candidate chunk is meshed on its own. Then:
//! - a cube vertex built by more than one chunk has a bit-identical offset
//!   inside its cube and a bit-identical normal (compared by global cube key);
//! - every crossing sample edge of the field is emitted as a quad by exactly
//!   one chunk (compared by a canonical global edge key), and no other quad exists.

use std::collections::HashMap;

use glam::{DVec3, IVec3, Vec3};
use strata::mesh::{ChunkMesh, MeshOptions};
use strata::pipeline::world_meshes::mesh_one;
use strata::terrain::editing::brush::{Brush, BrushMode};
use strata::terrain::editing::kernels::apply_brush;
use strata::terrain::{Cell, CellBox, CellCoord, ChunkCoord, Grid, Material};

/// Global edge key: axis (0 = x, 1 = y, 2 = z) and the edge's lower sample.
type EdgeKey = (u8, IVec3);

fn grid_from_field(region: CellBox, f: impl Fn(DVec3) -> f64) -> Grid {
    let mut g = Grid::new();
    g.edit_region(region, |c, _| {
        let centre = c.0.as_dvec3() + DVec3::splat(0.5);
        let frac = f(centre).clamp(0.0, 1.0);
        // Vary the material with position so material sets are exercised too.
        let m = if c.0.y.rem_euclid(7) < 3 {
            Material::ROCK
        } else if c.0.x.rem_euclid(5) < 2 {
            Material::GRASS
        } else {
            Material::DIRT
        };
        Cell::new(m, (frac * 255.0).round() as u8)
    })
    .expect("region within limits");
    g
}

struct Audit {
    shared_vertices: usize,
    quads: usize,
}

fn mesh_all(grid: &Grid, level: u8) -> Vec<(ChunkCoord, ChunkMesh)> {
    let options = MeshOptions {
        keep_cube_offsets: true,
    };
    grid.meshing_candidates()
        .into_iter()
        .map(|coord| (coord, mesh_one(grid, coord, level, options)))
        .collect()
}

/// All crossing sample edges whose lower sample lies in `region` (ground truth).
fn crossing_edges(grid: &Grid, region: CellBox) -> Vec<EdgeKey> {
    let mut out = Vec::new();
    for z in region.min.z..region.max.z {
        for y in region.min.y..region.max.y {
            for x in region.min.x..region.max.x {
                let s = IVec3::new(x, y, z);
                let inside = grid.cell(CellCoord(s)).is_inside();
                for (axis, d) in [IVec3::X, IVec3::Y, IVec3::Z].into_iter().enumerate() {
                    if grid.cell(CellCoord(s + d)).is_inside() != inside {
                        out.push((axis as u8, s));
                    }
                }
            }
        }
    }
    out.sort_by_key(|(a, s)| (*a, s.z, s.y, s.x));
    out
}

fn audit(grid: &Grid, truth_region: CellBox) -> Audit {
    audit_level(grid, 0, Some(truth_region))
}

/// Audits the meshes of every chunk at `level`. Vertices are keyed by global
/// sample coordinates of their cube (chunk origin in samples + local cube);
/// quads by their sample edge. With `truth_region` (level 0 only), the set of
/// emitted edges must equal the crossing edges of the field.
fn audit_level(grid: &Grid, level: u8, truth_region: Option<CellBox>) -> Audit {
    let meshes = mesh_all(grid, level);
    let samples_per_chunk = 32 >> level;
    let mut vertex_by_cube: HashMap<IVec3, (ChunkCoord, [u32; 3], [u32; 3])> = HashMap::new();
    let mut shared_vertices = 0;
    let mut edges: HashMap<EdgeKey, ChunkCoord> = HashMap::new();
    for (coord, mesh) in &meshes {
        let base = coord.0 * samples_per_chunk;
        assert_eq!(mesh.cube_offsets.len(), mesh.positions.len());
        for v in 0..mesh.skirt_start_vertex as usize {
            let c = mesh.vertex_cubes[v];
            let key = base + IVec3::new(c[0] as i32, c[1] as i32, c[2] as i32);
            let off = mesh.cube_offsets[v].to_array().map(f32::to_bits);
            let nrm = mesh.normals[v].to_array().map(f32::to_bits);
            assert!(
                mesh.cube_offsets[v].cmpge(Vec3::ZERO).all()
                    && mesh.cube_offsets[v].cmple(Vec3::ONE).all()
            );
            match vertex_by_cube.get(&key) {
                Some(&(other, o, n)) if other != *coord => {
                    assert_eq!(
                        o, off,
                        "offset of cube {key} differs between {other:?} and {coord:?}"
                    );
                    assert_eq!(
                        n, nrm,
                        "normal of cube {key} differs between {other:?} and {coord:?}"
                    );
                    shared_vertices += 1;
                }
                Some(&(_, o, n)) => {
                    // Same chunk, another material set: same geometry.
                    assert_eq!((o, n), (off, nrm));
                }
                None => {
                    vertex_by_cube.insert(key, (*coord, off, nrm));
                }
            }
        }
        for quad in mesh.surface_indices().chunks_exact(6) {
            let mut cubes: Vec<IVec3> = quad
                .iter()
                .map(|&i| {
                    let c = mesh.vertex_cubes[i as usize];
                    base + IVec3::new(c[0] as i32, c[1] as i32, c[2] as i32)
                })
                .collect();
            cubes.sort_by_key(|c| (c.z, c.y, c.x));
            cubes.dedup();
            assert_eq!(cubes.len(), 4, "a quad joins 4 distinct cubes");
            let lo = cubes.iter().fold(IVec3::splat(i32::MAX), |a, &c| a.min(c));
            let hi = cubes.iter().fold(IVec3::splat(i32::MIN), |a, &c| a.max(c));
            let axis = (0..3)
                .find(|&a| lo[a] == hi[a])
                .expect("quad cubes share one axis");
            let key = (axis as u8, hi);
            // The lower sample lies in the emitting chunk (ownership rule).
            assert_eq!(
                hi.div_euclid(IVec3::splat(samples_per_chunk)),
                coord.0,
                "quad {key:?} emitted by a non-owner"
            );
            if let Some(prev) = edges.insert(key, *coord) {
                panic!("edge {key:?} emitted by both {prev:?} and {coord:?}");
            }
        }
    }
    let mut emitted: Vec<EdgeKey> = edges.keys().copied().collect();
    emitted.sort_by_key(|(a, s)| (*a, s.z, s.y, s.x));
    if let Some(truth_region) = truth_region {
        assert_eq!(
            emitted,
            crossing_edges(grid, truth_region),
            "quads must match crossing edges"
        );
    }
    Audit {
        shared_vertices,
        quads: emitted.len(),
    }
}

/// A region of 3×3×3 chunks around the origin corner, with a margin of empty space.
fn region() -> CellBox {
    CellBox::new(IVec3::splat(-48), IVec3::splat(48))
}

fn truth_region() -> CellBox {
    region().expanded(2)
}

#[test]
fn plane_across_all_boundaries() {
    let n = DVec3::new(0.31, 0.86, -0.41).normalize();
    let g = grid_from_field(region(), |p| 0.5 - (p.dot(n) - 3.3));
    let a = audit(&g, truth_region());
    assert!(a.quads > 5000, "{} quads", a.quads);
    assert!(
        a.shared_vertices > 300,
        "{} shared vertices",
        a.shared_vertices
    );
}

#[test]
fn sphere_centred_on_chunk_corner() {
    let g = grid_from_field(region(), |p| 0.5 + (19.0 - p.length()));
    let a = audit(&g, truth_region());
    assert!(a.quads > 2000, "{} quads", a.quads);
    assert!(
        a.shared_vertices > 100,
        "{} shared vertices",
        a.shared_vertices
    );
}

#[test]
fn constant_gradient_slope() {
    // Fractions vary linearly in x and y, crossing chunk faces along both axes.
    let g = grid_from_field(region(), |p| {
        0.5 + 0.37 * (4.0 + 0.6 * p.x - p.y + 0.2 * p.z) / 4.0
    });
    let a = audit(&g, truth_region());
    assert!(
        a.shared_vertices > 100,
        "{} shared vertices",
        a.shared_vertices
    );
}

#[test]
fn edit_centred_on_chunk_corner() {
    let mut g = grid_from_field(region(), |p| 0.5 - (p.y - 0.4));
    let brush = Brush {
        mode: BrushMode::Add,
        radius_cells: 9.0,
        strength: 0.6,
        material: Material::SAND,
        ignore_water: false,
    };
    // Chunk corner (32, 0, 32) cells = (128, 0, 128) studs, and the origin corner.
    for centre in [DVec3::new(128.0, 0.0, 128.0), DVec3::ZERO] {
        let report = apply_brush(&mut g, &brush, centre).unwrap();
        assert!(
            report.changed.len() >= 4,
            "a corner edit touches the 4 chunks above the floor"
        );
    }
    let sub = Brush {
        mode: BrushMode::Subtract,
        radius_cells: 5.0,
        ..brush
    };
    apply_brush(&mut g, &sub, DVec3::new(0.0, 16.0, 0.0)).unwrap();
    let a = audit(
        &g,
        truth_region().union(&CellBox::new(IVec3::splat(-20), IVec3::splat(60))),
    );
    assert!(
        a.shared_vertices > 50,
        "{} shared vertices",
        a.shared_vertices
    );
}

#[test]
fn equal_coarse_levels_agree_on_every_boundary() {
    let n = DVec3::new(0.31, 0.86, -0.41).normalize();
    let plane = grid_from_field(region(), |p| 0.5 - (p.dot(n) - 3.3));
    let sphere = grid_from_field(region(), |p| 0.5 + (19.0 - p.length()));
    for level in 1..=3u8 {
        for grid in [&plane, &sphere] {
            let a = audit_level(grid, level, None);
            assert!(a.quads > 0, "level {level}");
            assert!(
                a.shared_vertices > 0,
                "level {level}: no boundary vertex checked"
            );
        }
    }
}
