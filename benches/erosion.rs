//! Cost of one application of the erosion brushes at radius 16 and 32
//! cells (at most 30 ms at radius 32), on a slope of the default
//! generated world, 8 iterations (the panel's default), full strength.
//! Each iteration erodes a fresh clone of the same grid (clones share
//! chunk storage, so the first write per chunk pays its copy, as in the
//! editor).
//!
//! Run: `cargo bench --bench erosion`.

use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use glam::DVec3;
use strata::terrain::editing::brush::{Brush, BrushMode, BrushOptions};
use strata::terrain::editing::kernels::apply_tool;
use strata::terrain::generation::generate::{
    GeneratorSettings, generate_world, surface_height_cells,
};
use strata::terrain::storage::cell::Material;
use strata::terrain::storage::coords::CELL_SIZE_STUDS;

fn erosion(c: &mut Criterion) {
    let settings = GeneratorSettings::default();
    let grid = generate_world(&settings).expect("valid settings");
    // A hillside of the default world (seed 7).
    let (x, z) = (600, 420);
    let y = surface_height_cells(&settings, x, z).expect("inside the world");
    let centre = DVec3::new(f64::from(x), y, f64::from(z)) * f64::from(CELL_SIZE_STUDS);
    let mut group = c.benchmark_group("erosion_brush");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(3));
    for mode in [BrushMode::HydraulicErode, BrushMode::ThermalErode] {
        for radius_cells in [16.0, 32.0] {
            let brush = Brush {
                mode,
                radius_cells,
                strength: 1.0,
                material: Material::GRASS,
                ignore_water: false,
            };
            let options = BrushOptions::default();
            group.bench_function(format!("{}_r{radius_cells}", mode.script_name()), |b| {
                b.iter_batched(
                    || grid.clone(),
                    |mut g| apply_tool(&mut g, &brush, &options, centre).expect("valid"),
                    BatchSize::LargeInput,
                )
            });
        }
    }
    group.finish();
}

criterion_group!(benches, erosion);
criterion_main!(benches);
