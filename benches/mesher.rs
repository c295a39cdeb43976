//! Meshing one chunk: Strata's Surface Nets against the `fast-surface-nets`
//! crate on the same occupancy, side by side in one run.
//!
//! Strata produces the full render mesh (positions, normals, per-quad material
//! sets and per-vertex weights); `fast-surface-nets` produces positions and
//! unnormalized normals from an `f32` field. Cases: (a) noise terrain,
//! (b) sphere, (c) worst-case sine field, (d) uniform solid chunk (buried),
//! (e) empty chunk; and (f) every surface chunk of the default world (seed
//! 7, 1024 cells), one iteration meshing them all, so the ratio is over the
//! sum of their times.
//!
//! `strata_grid` includes reading the padded samples out of the sparse grid;
//! `strata_field` starts from already-gathered samples, like `fast_surface_nets`
//! starts from its already-built array.
//!
//! Each case prints a hash of Strata's output; case (f) prints one hash over
//! the meshes of every meshing candidate of the default world, so a change to
//! the mesher can be checked to leave its output bit-identical.
//!
//! Run: `cargo bench --bench mesher`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use fast_surface_nets::ndshape::{ConstShape, ConstShape3u32};
use fast_surface_nets::{SurfaceNetsBuffer, surface_nets};
use glam::{DVec3, IVec3};
use strata::mesh::field::SampleField;
use strata::mesh::{ChunkMesh, MeshOptions, SurfaceNets};
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};
use strata::terrain::{Cell, CellBox, ChunkCoord, Grid, Material};

/// Samples -1..=32 of the chunk on each axis: what fast-surface-nets needs for the same quads.
type FsnShape = ConstShape3u32<34, 34, 34>;

/// A grid holding chunk (0,0,0) and its 26 neighbours filled from `f(cell centre) -> (material, fraction)`.
fn grid_from(f: impl Fn(DVec3) -> (Material, f64)) -> Grid {
    let mut g = Grid::new();
    g.edit_region(CellBox::new(IVec3::splat(-32), IVec3::splat(64)), |c, _| {
        let (m, frac) = f(c.0.as_dvec3() + DVec3::splat(0.5));
        Cell::new(m, (frac.clamp(0.0, 1.0) * 255.0).round() as u8)
    })
    .expect("bench region is within limits");
    g
}

fn noise_terrain() -> Grid {
    grid_from(|p| {
        let h = 15.0
            + 5.0 * (p.x * 0.21).sin() * (p.z * 0.17).cos()
            + 2.5 * ((p.x + 1.7 * p.z) * 0.43).sin()
            + 1.2 * ((p.x * 0.9 - p.z * 0.7) * 0.9).cos();
        let depth = h - p.y;
        let m = if depth > 4.0 {
            Material::ROCK
        } else if depth > 1.5 {
            Material::DIRT
        } else {
            Material::GRASS
        };
        (m, depth + 0.5)
    })
}

fn sphere() -> Grid {
    grid_from(|p| (Material::ROCK, 13.0 - p.distance(DVec3::splat(16.0)) + 0.5))
}

fn sine_field() -> Grid {
    grid_from(|p| {
        let v = (p.x * 1.3).sin() * (p.y * 1.1).sin() * (p.z * 0.9).sin();
        let m = if p.y as i32 % 3 == 0 {
            Material::ROCK
        } else {
            Material::GRASS
        };
        (m, 0.5 + 0.5 * v)
    })
}

fn uniform_solid() -> Grid {
    grid_from(|_| (Material::ROCK, 1.0))
}

fn empty() -> Grid {
    Grid::new()
}

/// The fast-surface-nets input for the same samples: negative inside, 0 at occupancy 127.5.
fn fsn_sdf(grid: &Grid) -> Vec<f32> {
    let mut sdf = vec![0.0f32; FsnShape::USIZE];
    for (i, v) in sdf.iter_mut().enumerate() {
        let [x, y, z] = FsnShape::delinearize(i as u32);
        let cell = strata::terrain::CellCoord::new(x as i32 - 1, y as i32 - 1, z as i32 - 1);
        *v = (127.5 - grid.cell(cell).solid_occupancy() as f32) / 255.0;
    }
    sdf
}

/// The fast-surface-nets input from an already-gathered field (padded sample
/// `p` is fast-surface-nets sample `p - 1`): the same values as [`fsn_sdf`].
fn fsn_sdf_of_field(field: &SampleField) -> Vec<f32> {
    let mut sdf = vec![0.0f32; FsnShape::USIZE];
    for (i, v) in sdf.iter_mut().enumerate() {
        let [x, y, z] = FsnShape::delinearize(i as u32);
        let solid = field.solid[field.index(x as usize + 1, y as usize + 1, z as usize + 1)];
        *v = (127.5 - solid as f32) / 255.0;
    }
    sdf
}

/// A hash of every output array of a Strata mesh, so that a change to the
/// mesher can be checked to leave its output bit-identical.
fn mesh_hash(m: &ChunkMesh) -> u64 {
    let mut bytes = Vec::new();
    for v in m.positions.iter().chain(&m.normals) {
        for x in v.to_array() {
            bytes.extend_from_slice(&x.to_bits().to_le_bytes());
        }
    }
    for (ids, weights) in m.material_ids.iter().zip(&m.material_weights) {
        bytes.extend_from_slice(ids);
        bytes.extend_from_slice(weights);
    }
    for c in &m.vertex_cubes {
        bytes.extend(c.map(|x| x as u8));
    }
    for i in &m.indices {
        bytes.extend_from_slice(&i.to_le_bytes());
    }
    xxhash_rust::xxh3::xxh3_64(&bytes)
}

fn bench_case(c: &mut Criterion, name: &str, grid: Grid) {
    let coord = ChunkCoord::new(0, 0, 0);
    let mut mesher = SurfaceNets::new();
    let mut out = ChunkMesh::default();
    let mut field = SampleField::default();
    field.gather_l0(&grid, coord);
    let sdf = fsn_sdf(&grid);
    let mut fsn = SurfaceNetsBuffer::default();

    // Report the sizes once so ratios can be read against the work done.
    mesher.mesh_chunk_l0(&grid, coord, MeshOptions::default(), &mut out);
    surface_nets(&sdf, &FsnShape {}, [0; 3], [33; 3], &mut fsn);
    println!(
        "{name}: strata {} vertices / {} triangles (output hash {:016x}); \
         fast-surface-nets {} vertices / {} triangles",
        out.vertex_count(),
        out.triangle_count(),
        mesh_hash(&out),
        fsn.positions.len(),
        fsn.indices.len() / 3
    );

    let mut group = c.benchmark_group(name);
    group.bench_function("strata_grid", |b| {
        b.iter(|| {
            mesher.mesh_chunk_l0(black_box(&grid), coord, MeshOptions::default(), &mut out);
            black_box(out.indices.len())
        })
    });
    group.bench_function("strata_field", |b| {
        b.iter(|| {
            mesher.mesh_field(black_box(&field), MeshOptions::default(), &mut out);
            black_box(out.indices.len())
        })
    });
    group.bench_function("fast_surface_nets", |b| {
        b.iter(|| {
            surface_nets(black_box(&sdf), &FsnShape {}, [0; 3], [33; 3], &mut fsn);
            black_box(fsn.indices.len())
        })
    });
    group.finish();
}

/// Case (f): the surface chunks of the default world, all meshed in one
/// iteration by each mesher.
fn bench_default_world(c: &mut Criterion) {
    let grid = generate_world(&GeneratorSettings::default()).expect("the default world generates");
    let mut mesher = SurfaceNets::new();
    let mut out = ChunkMesh::default();
    let mut world_hash = Vec::new();
    let mut surface = Vec::new();
    let (mut vertices, mut triangles) = (0usize, 0usize);
    let candidates = grid.meshing_candidates();
    for &coord in &candidates {
        mesher.mesh_chunk_l0(&grid, coord, MeshOptions::default(), &mut out);
        for v in coord.0.to_array() {
            world_hash.extend_from_slice(&v.to_le_bytes());
        }
        world_hash.extend_from_slice(&mesh_hash(&out).to_le_bytes());
        if out.triangle_count() > 0 {
            vertices += out.vertex_count();
            triangles += out.triangle_count();
            surface.push(coord);
        }
    }
    let fields: Vec<SampleField> = surface
        .iter()
        .map(|&coord| {
            let mut f = SampleField::default();
            f.gather_l0(&grid, coord);
            f
        })
        .collect();
    let sdfs: Vec<Vec<f32>> = fields.iter().map(fsn_sdf_of_field).collect();
    let mut fsn = SurfaceNetsBuffer::default();
    let fsn_triangles: usize = sdfs
        .iter()
        .map(|sdf| {
            surface_nets(sdf, &FsnShape {}, [0; 3], [33; 3], &mut fsn);
            fsn.indices.len() / 3
        })
        .sum();
    println!(
        "f_default_world: {} candidates, {} surface chunks; strata {vertices} vertices / \
         {triangles} triangles; fast-surface-nets {fsn_triangles} triangles; \
         all-chunk hash {:016x}",
        candidates.len(),
        surface.len(),
        xxhash_rust::xxh3::xxh3_64(&world_hash)
    );

    let mut group = c.benchmark_group("f_default_world");
    group.sample_size(10);
    group.measurement_time(std::time::Duration::from_secs(4));
    group.bench_function("strata_grid", |b| {
        b.iter(|| {
            let mut n = 0;
            for &coord in &surface {
                mesher.mesh_chunk_l0(black_box(&grid), coord, MeshOptions::default(), &mut out);
                n += out.indices.len();
            }
            black_box(n)
        })
    });
    group.bench_function("strata_field", |b| {
        b.iter(|| {
            let mut n = 0;
            for field in &fields {
                mesher.mesh_field(black_box(field), MeshOptions::default(), &mut out);
                n += out.indices.len();
            }
            black_box(n)
        })
    });
    group.bench_function("fast_surface_nets", |b| {
        b.iter(|| {
            let mut n = 0;
            for sdf in &sdfs {
                surface_nets(black_box(sdf), &FsnShape {}, [0; 3], [33; 3], &mut fsn);
                n += fsn.indices.len();
            }
            black_box(n)
        })
    });
    group.finish();
}

fn meshers(c: &mut Criterion) {
    bench_case(c, "a_noise_terrain", noise_terrain());
    bench_case(c, "b_sphere", sphere());
    bench_case(c, "c_sine_field", sine_field());
    bench_case(c, "d_uniform_solid", uniform_solid());
    bench_case(c, "e_empty", empty());
    bench_default_world(c);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(60)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = meshers
}
criterion_main!(benches);
