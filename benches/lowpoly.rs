//! Meshing one chunk column of the generated default-seed world: the
//! low-poly mesher (column heightfield + greedy tops and skirts)
//! against Surface Nets at level 0 over the same column's chunks, side by
//! side in one run. Prints the triangle census of both over the world
//! first.
//!
//! Run: `cargo bench --bench lowpoly`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use strata::mesh::lowpoly::column_heightfield::ColumnHeightfield;
use strata::mesh::lowpoly::greedy_heightfield::{LowPolyMesh, mesh_low_poly};
use strata::mesh::lowpoly::lowpoly_chunk::mesh_low_poly_chunk;
use strata::mesh::{ChunkMesh, MeshOptions, SurfaceNets};
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};
use strata::terrain::{ChunkCoord, ColumnCoord, Grid};

/// Chunks of `column` that `grid` stores, bottom to top.
fn column_chunks(grid: &Grid, column: ColumnCoord) -> Vec<ChunkCoord> {
    let mut out: Vec<ChunkCoord> = grid
        .chunks()
        .map(|(c, _)| c)
        .filter(|c| ColumnCoord::of(*c) == column)
        .collect();
    out.sort_by_key(|c| c.0.y);
    out
}

fn lowpoly(c: &mut Criterion) {
    let settings = GeneratorSettings {
        seed: 1,
        size_cells: 512,
    };
    let grid = generate_world(&settings).expect("the bench world generates");
    let side = settings.size_cells as i32 / 32;
    let (mut greedy_tris, mut sn_tris) = (0usize, 0usize);
    let (mut mesher, mut sn, mut out) = (
        SurfaceNets::new(),
        ChunkMesh::default(),
        LowPolyMesh::default(),
    );
    for z in 0..side {
        for x in 0..side {
            let column = ColumnCoord::new(x, z);
            mesh_low_poly(&ColumnHeightfield::from_grid(&grid, column, 1.0), &mut out);
            greedy_tris += out.triangle_count();
            for coord in column_chunks(&grid, column) {
                mesher.mesh_chunk_l0(&grid, coord, MeshOptions::default(), &mut sn);
                sn_tris += sn.indices.len() / 3;
            }
        }
    }
    eprintln!(
        "census over {} chunk columns: low-poly {greedy_tris} triangles, Surface Nets level 0 \
         {sn_tris} ({:.2}x)",
        side * side,
        sn_tris as f64 / greedy_tris.max(1) as f64
    );
    // A column in the middle of the world, hills and a valley.
    let column = ColumnCoord::new(side / 2, side / 2);
    let chunks = column_chunks(&grid, column);
    let mut group = c.benchmark_group("chunk_column");
    group.bench_function("low_poly_heightfield_and_greedy", |b| {
        b.iter(|| {
            let field = ColumnHeightfield::from_grid(black_box(&grid), column, 1.0);
            mesh_low_poly(&field, &mut out);
            black_box(out.indices.len())
        })
    });
    group.bench_function("low_poly_greedy_only", |b| {
        let field = ColumnHeightfield::from_grid(&grid, column, 1.0);
        b.iter(|| {
            mesh_low_poly(black_box(&field), &mut out);
            black_box(out.indices.len())
        })
    });
    group.bench_function("surface_nets_l0", |b| {
        b.iter(|| {
            let mut n = 0;
            for &coord in &chunks {
                mesher.mesh_chunk_l0(black_box(&grid), coord, MeshOptions::default(), &mut sn);
                n += sn.indices.len();
            }
            black_box(n)
        })
    });
    group.finish();
    // The view meshes chunk by chunk: the chunk of the column with the most
    // Surface Nets triangles.
    let surface = *chunks
        .iter()
        .max_by_key(|&&coord| {
            mesher.mesh_chunk_l0(&grid, coord, MeshOptions::default(), &mut sn);
            sn.indices.len()
        })
        .expect("the column has chunks");
    let mut group = c.benchmark_group("surface_chunk");
    for level in [0u8, 2] {
        group.bench_function(format!("low_poly_view_l{level}"), |b| {
            b.iter(|| {
                black_box(mesh_low_poly_chunk(black_box(&grid), surface, level, 1.0))
                    .indices
                    .len()
            })
        });
    }
    group.bench_function("surface_nets_l0", |b| {
        b.iter(|| {
            mesher.mesh_chunk_l0(black_box(&grid), surface, MeshOptions::default(), &mut sn);
            black_box(sn.indices.len())
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
    targets = lowpoly
}
criterion_main!(benches);
