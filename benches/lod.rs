//! Level-of-detail scan cost and triangle reduction on the default world,
//! from a fixed high camera over its centre.
//!
//! Run: `cargo bench --bench lod`. Prints the triangles meshed with distance
//! LOD and with every chunk at full detail, then times one full scan of every
//! resident chunk (the work a frame does when the camera has moved).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use glam::DVec3;
use strata::pipeline::TerrainStreaming;
use strata::pipeline::lod::{LodScanner, LodSettings};
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};

fn lod(c: &mut Criterion) {
    let grid = generate_world(&GeneratorSettings::default()).expect("default settings are valid");
    let camera = DVec3::new(2048.0, 2500.0, 2048.0);
    let mut streaming = TerrainStreaming::new(LodSettings::default());
    let meshes = streaming.build_initial(&grid, camera);
    let full = TerrainStreaming::new(LodSettings {
        force_level: Some(0),
        ..LodSettings::default()
    })
    .build_initial(&grid, camera);
    let (_, t_lod) = meshes.totals();
    let (_, t_full) = full.totals();
    println!(
        "triangles: LOD {t_lod} {:?} vs full detail {t_full}: {:.1}x fewer",
        meshes.triangles_by_level(),
        t_full as f64 / t_lod as f64
    );
    let resident: Vec<_> = meshes.levels().map(|(c, l)| (c, Some(l))).collect();
    println!("resident chunks scanned: {}", resident.len());
    let preload = streaming.lod().preload_range_studs();
    let mut scanner = LodScanner::default();
    let mut frame = 0u64;
    c.bench_function("lod_scan_all_resident", |b| {
        b.iter(|| {
            // A new camera position every iteration, so each scan is a real one.
            frame += 1;
            let cam = camera + DVec3::new((frame % 64) as f64 * 9.0, 0.0, 0.0);
            black_box(scanner.scan(
                cam,
                LodSettings::default().draw_distance_studs,
                (1, frame),
                preload,
                resident.iter().copied(),
            ))
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(50)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = lod
}
criterion_main!(benches);
