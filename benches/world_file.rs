//! World file cost on the default world: full save, verified load, and an
//! incremental save after one brush stroke.
//!
//! Run: `cargo bench --bench world_file`. Prints the file size and bytes per
//! voxel of the world's volume (1024 × 192 × 1024 cells) first.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use glam::DVec3;
use strata::io::world::world_file::{self, LoadOptions, WorldFile, WorldMeta};
use strata::terrain::editing::brush::{Brush, BrushMode};
use strata::terrain::editing::kernels::apply_brush;
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};
use strata::terrain::{CellCoord, Material};

fn world_file(c: &mut Criterion) {
    let settings = GeneratorSettings::default();
    let mut grid = generate_world(&settings).expect("default settings are valid");
    let meta = WorldMeta::generated(&settings);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench_world_file");
    std::fs::create_dir_all(&dir).expect("bench dir");
    let path = dir.join("default.strata");
    let (_, report) = WorldFile::save_full(&path, &grid, &meta).expect("save");
    println!(
        "default world: {} chunks, {} bytes, {:.4} bytes per voxel",
        report.chunks_written,
        report.file_bytes,
        report.file_bytes as f64 / (1024.0 * 192.0 * 1024.0)
    );

    let mut group = c.benchmark_group("world_file");
    group.sample_size(10);
    group.bench_function("save_full_default_world", |b| {
        b.iter(|| WorldFile::save_full(&path, &grid, &meta).expect("save"))
    });
    group.bench_function("load_default_world", |b| {
        b.iter(|| world_file::load(&path, LoadOptions::default()).expect("load"))
    });
    group.finish();

    // One stroke (radius 8 cells, on the surface at a chunk corner) per
    // iteration, alternating Add and Subtract; only the save is timed.
    let (mut file, _) = WorldFile::save_full(&path, &grid, &meta).expect("save");
    let top = (0..256)
        .rev()
        .find(|&y| grid.cell(CellCoord::new(512, y, 512)).is_inside())
        .expect("ground at the world centre");
    let centre = DVec3::new(2048.0, top as f64 * 4.0, 2048.0);
    let mut n = 0u64;
    let mut chunks = 0usize;
    c.bench_function("save_incremental_after_one_stroke", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                n += 1;
                let mode = if n.is_multiple_of(2) {
                    BrushMode::Subtract
                } else {
                    BrushMode::Add
                };
                let brush = Brush {
                    mode,
                    radius_cells: 8.0,
                    strength: 0.5,
                    material: Material::GRASS,
                    ignore_water: false,
                };
                apply_brush(&mut grid, &brush, centre).expect("stroke");
                let start = Instant::now();
                let saved = file.save_incremental(&grid, &meta).expect("save");
                total += start.elapsed();
                chunks = saved.chunks_written;
            }
            total
        })
    });
    println!("last incremental save wrote {chunks} chunks");
}

criterion_group!(benches, world_file);
criterion_main!(benches);
