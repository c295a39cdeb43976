//! The horizon's per-frame node selection (spec §13: within 0.5 ms for any
//! view) on the 1,048,576-cell world, and the cost of building its nodes.
//!
//! Run: `cargo bench --bench horizon`. Times one selection of the settled
//! views from the world's centre at 2,500 studs, looking at the horizon
//! (pitch −8°) and straight down, with draw distance 65,536 studs, and the
//! build of one level-6 node from the generator's coarse samples.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use glam::{DVec3, IVec3};
use strata::camera::{Camera, Frustum};
use strata::mesh::ChunkMesh;
use strata::mesh::field::SampleField;
use strata::mesh::node_mesh::{NodeColumns, mesh_node};
use strata::mesh::surface_nets::SurfaceNets;
use strata::pipeline::horizon::{Horizon, HorizonView};
use strata::terrain::generation::generate::GeneratorSettings;
use strata::terrain::generation::generated_columns::GeneratedColumns;
use strata::terrain::storage::node::{NODE_SAMPLES, NodeKey};
use strata::terrain::streaming::column_source::ColumnSource;

fn select(h: &mut Horizon, camera: &Camera) {
    let frustum = Frustum::from_clip_from_world(camera.clip_from_world());
    let pos = camera.pos_world;
    let in_view =
        |lo: DVec3, hi: DVec3| frustum.intersects_aabb((lo - pos).as_vec3(), (hi - pos).as_vec3());
    let no_chunks = |_| false;
    h.select(&HorizonView {
        camera_pos_world: pos,
        draw_distance_studs: 65_536.0,
        in_view: &in_view,
        chunks_ready: &no_chunks,
    });
}

fn horizon(c: &mut Criterion) {
    let settings = GeneratorSettings {
        seed: 7,
        size_cells: 1 << 20,
    };
    let source = Arc::new(GeneratedColumns::new(&settings));
    let centre = 2_097_152.0;
    for (name, pitch) in [("horizon", -8.0f32), ("down", -89.0)] {
        let mut h = Horizon::new(source.clone()).expect("the generator samples");
        let camera = Camera::new(DVec3::new(centre, 2500.0, centre), 0.0, pitch);
        select(&mut h, &camera);
        h.build_wanted_now();
        select(&mut h, &camera);
        println!(
            "{name}: {} draws, {} nodes built",
            h.draws().len(),
            h.built_count()
        );
        c.bench_function(&format!("horizon select ({name}, 65536 studs)"), |b| {
            b.iter(|| select(black_box(&mut h), &camera))
        });
    }
    let sampler = source.surface_sampler().expect("the generator samples");
    let key = NodeKey::new(6, IVec3::new(1024, 0, 1020));
    let (mut mesher, mut field, mut mesh) = (
        SurfaceNets::new(),
        SampleField::new(NODE_SAMPLES),
        ChunkMesh::default(),
    );
    c.bench_function("horizon node build (level 6)", |b| {
        b.iter(|| {
            // A fresh column cache each time: the cost of a node alone.
            let mut columns = NodeColumns::default();
            mesh_node(
                &mut mesher,
                &mut field,
                &mut columns,
                sampler,
                black_box(key),
                &mut mesh,
            )
        })
    });
}

criterion_group!(benches, horizon);
criterion_main!(benches);
