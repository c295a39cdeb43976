//! Cost of one application of every brush tool (radius 8 and 32 cells, smooth
//! falloff) on the surface of a generated world, and of committing and
//! undoing a step. Each iteration applies the tool to a fresh clone of the
//! same grid (clones share chunk storage, so the first write per chunk pays
//! its copy, as in the editor).
//!
//! Run: `cargo bench --bench tools`.

use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use glam::DVec3;
use strata::terrain::Material;
use strata::terrain::command::history::History;
use strata::terrain::editing::brush::{Brush, BrushMode, BrushOptions, BrushShape, Falloff};
use strata::terrain::editing::kernels::apply_tool;
use strata::terrain::editing::recorder::Recorder;
use strata::terrain::generation::generate::{
    GeneratorSettings, generate_world, surface_height_cells,
};

fn tools(c: &mut Criterion) {
    let settings = GeneratorSettings {
        seed: 3,
        size_cells: 256,
    };
    let grid = generate_world(&settings).expect("valid settings");
    let (x, z) = (128, 140);
    let y = surface_height_cells(&settings, x, z).expect("inside the world");
    let centre = DVec3::new(x as f64 + 0.5, y, z as f64 + 0.5) * 4.0;
    let options = BrushOptions {
        shape: BrushShape::Sphere,
        falloff: Falloff::Smooth,
        replace_from: Material::GRASS,
        ..BrushOptions::default()
    };
    let mut group = c.benchmark_group("tools");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(2));
    for radius_cells in [8.0f32, 32.0] {
        for mode in BrushMode::ALL {
            let brush = Brush {
                mode,
                radius_cells,
                strength: 0.8,
                material: Material::SAND,
                ignore_water: false,
            };
            group.bench_function(format!("{}_r{radius_cells}", mode.script_name()), |b| {
                b.iter_batched(
                    || grid.clone(),
                    |mut g| apply_tool(&mut g, &brush, &options, centre).expect("valid"),
                    BatchSize::LargeInput,
                )
            });
        }
    }
    let brush = Brush {
        mode: BrushMode::Smooth,
        radius_cells: 16.0,
        strength: 0.8,
        material: Material::SAND,
        ignore_water: false,
    };
    group.bench_function("record_commit_undo_smooth_r16", |b| {
        b.iter_batched(
            || grid.clone(),
            |mut g| {
                let mut rec = Recorder::new("Smooth");
                let region = brush.region(centre).expect("valid");
                rec.record(&mut g, region, |g| apply_tool(g, &brush, &options, centre))
                    .expect("valid");
                let mut history = History::default();
                history.commit(rec, &g);
                history.undo(&mut g)
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, tools);
criterion_main!(benches);
