//! Collision cost on the default world: building one chunk's collider
//! (collision extraction, flat-patch reduction, parry3d trimesh with merged
//! vertices and fixed internal edges) against full-detail render meshing of
//! the same chunks, and edit-to-collision-current time for a radius-8 edit.
//!
//! Run: `cargo bench --bench collision`. Prints the whole-world triangle
//! reduction, then times:
//! - `render_mesh_l0_per_chunk_*` / `collider_build_per_chunk_*`: one chunk
//!   of a fixed set of 64 surface chunks, cycling: `heaviest` (most
//!   triangles) and `typical` (spread evenly over all colliders);
//! - `collision_mesh_only_per_chunk_*`: extraction and reduction without parry3d;
//! - `edit_r8_to_collision_current`: a radius-8 Add or Subtract (alternating)
//!   on the surface, then `CollisionCache::update` of the 5×5×4-chunk region
//!   around it (the rebuilt chunks and their affected neighbours).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use glam::{DVec3, IVec3};
use strata::collision::{CollisionCache, TerrainId, shape_from_mesh};
use strata::mesh::collision_mesh::{CollisionMesh, CollisionMesher};
use strata::mesh::{ChunkMesh, MeshOptions, SurfaceNets};
use strata::terrain::editing::brush::{Brush, BrushMode};
use strata::terrain::editing::kernels::apply_brush;
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};
use strata::terrain::storage::cell::Material;
use strata::terrain::storage::coords::{CellBox, CellCoord};

fn collision(c: &mut Criterion) {
    let grid = generate_world(&GeneratorSettings::default()).expect("default settings are valid");
    let mut cache = CollisionCache::new();
    let region = grid.bounds_cells().expect("non-empty world").expanded(1);
    let t = std::time::Instant::now();
    cache
        .update(&grid, TerrainId(0), region)
        .expect("region fits");
    let s = cache.stats();
    println!(
        "default world: {} colliders, triangles {} -> {} ({:.3}x fewer), full build {:.0} ms",
        s.colliders,
        s.triangles_before_reduction,
        s.triangles,
        s.triangles_before_reduction as f64 / s.triangles as f64,
        t.elapsed().as_secs_f64() * 1e3
    );

    // Two fixed sets of 64 chunks: the ones with the most collision
    // triangles (steep, busy terrain), and a typical set spread evenly over
    // all colliders in coordinate order.
    let mut by_triangles: Vec<_> = cache
        .colliders()
        .map(|c| (c.triangles_before_reduction, c.coord))
        .collect();
    by_triangles.sort_by_key(|&(t, c)| (std::cmp::Reverse(t), c.0.x, c.0.y, c.0.z));
    let heaviest: Vec<_> = by_triangles.iter().take(64).map(|&(_, c)| c).collect();
    let mut by_coord: Vec<_> = cache.colliders().map(|c| c.coord).collect();
    by_coord.sort_by_key(|c| (c.0.z, c.0.y, c.0.x));
    let step = (by_coord.len() / 64).max(1);
    let typical: Vec<_> = by_coord.iter().step_by(step).take(64).copied().collect();

    for (name, chunks) in [("heaviest", &heaviest), ("typical", &typical)] {
        let (before, after): (u64, u64) = chunks.iter().fold((0, 0), |acc, c| {
            let col = cache.collider(*c).expect("listed");
            (
                acc.0 + u64::from(col.triangles_before_reduction),
                acc.1 + u64::from(col.triangles),
            )
        });
        println!(
            "{name} chunks: {} with {before} -> {after} triangles",
            chunks.len()
        );
        let mut i = 0usize;
        let mut mesher = SurfaceNets::new();
        let mut render = ChunkMesh::default();
        c.bench_function(&format!("render_mesh_l0_per_chunk_{name}"), |b| {
            b.iter(|| {
                i = (i + 1) % chunks.len();
                mesher.mesh_chunk_l0(&grid, chunks[i], MeshOptions::default(), &mut render);
                black_box(render.triangle_count())
            })
        });
        let mut cmesher = CollisionMesher::new();
        let mut cmesh = CollisionMesh::default();
        c.bench_function(&format!("collision_mesh_only_per_chunk_{name}"), |b| {
            b.iter(|| {
                i = (i + 1) % chunks.len();
                cmesher.mesh_chunk(&grid, chunks[i], &mut cmesh);
                black_box(cmesh.triangle_count())
            })
        });
        c.bench_function(&format!("collider_build_per_chunk_{name}"), |b| {
            b.iter(|| {
                i = (i + 1) % chunks.len();
                cmesher.mesh_chunk(&grid, chunks[i], &mut cmesh);
                black_box(shape_from_mesh(chunks[i], &cmesh).expect("valid mesh"))
            })
        });
    }

    // Edit-to-collision-current: a radius-8 edit on the surface near the
    // world's centre, then the cache update that makes collision current.
    let mut grid = grid;
    let centre_xz = (2048.0, 2048.0);
    let top = (0..grid.bounds_cells().expect("non-empty").max.y)
        .rev()
        .find(|&y| {
            grid.cell(CellCoord::containing_world(DVec3::new(
                centre_xz.0,
                y as f64 * 4.0 + 2.0,
                centre_xz.1,
            )))
            .is_inside()
        })
        .expect("ground at the centre");
    let centre = DVec3::new(centre_xz.0, top as f64 * 4.0 + 2.0, centre_xz.1);
    let cell = CellCoord::containing_world(centre).0;
    let region = CellBox::new(cell - IVec3::new(64, 48, 64), cell + IVec3::new(64, 80, 64));
    let mut cache = CollisionCache::new();
    cache
        .update(&grid, TerrainId(0), region)
        .expect("region fits");
    let mut n = 0u64;
    let mut chunks_rebuilt = Vec::new();
    c.bench_function("edit_r8_to_collision_current", |b| {
        b.iter(|| {
            n += 1;
            let brush = Brush {
                mode: if n.is_multiple_of(2) {
                    BrushMode::Add
                } else {
                    BrushMode::Subtract
                },
                radius_cells: 8.0,
                strength: 0.5,
                material: Material::ROCK,
                ignore_water: false,
            };
            apply_brush(&mut grid, &brush, centre).expect("valid brush");
            let report = cache
                .update(&grid, TerrainId(0), region)
                .expect("region fits");
            chunks_rebuilt.push(report.rebuilt_chunks);
            black_box(report)
        })
    });
    chunks_rebuilt.sort_unstable();
    if let Some(m) = chunks_rebuilt.get(chunks_rebuilt.len() / 2) {
        println!("edit_r8_to_collision_current: median chunks rebuilt per edit {m}");
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(3));
    targets = collision
}
criterion_main!(benches);
