//! Cost of pressing a 2048² height stamp into the default generated world
//! at radius 64 and 128 cells (at most 100 ms at radius 64),
//! turned 30° with an edge falloff, Add mode; and of a cell stamp (the
//! shipped-size 48 × 40 × 16 arch shape as a solid block) at 30°. Each
//! iteration stamps a fresh clone of the same grid (clones share chunk
//! storage, so the first write per chunk pays its copy, as in the editor).
//!
//! Run: `cargo bench --bench stamp`.

use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use glam::{DVec2, IVec3};
use strata::terrain::editing::region::Clipboard;
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};
use strata::terrain::stamp::definition::{Stamp, StampBase, StampMode, StampPlacement};
use strata::terrain::stamp::press::apply_stamp;
use strata::terrain::storage::cell::{Cell, Material};

/// A 2048² dome with ripples, samples in 0..=1.
fn big_height_stamp() -> Stamp {
    let n = 2048u32;
    let samples = (0..n * n)
        .map(|i| {
            let u = f64::from(i % n) / f64::from(n) * 2.0 - 1.0;
            let v = f64::from(i / n) / f64::from(n) * 2.0 - 1.0;
            let r = (u * u + v * v).sqrt();
            ((1.0 - r).max(0.0) * (0.8 + 0.2 * (u * 40.0).sin())) as f32
        })
        .collect();
    Stamp::height("dome", n, n, samples).expect("valid stamp")
}

fn stamp(c: &mut Criterion) {
    let settings = GeneratorSettings::default();
    let grid = generate_world(&settings).expect("valid settings");
    let centre = DVec2::splat(f64::from(settings.size_cells) * 0.5);
    let height = big_height_stamp();
    let mut group = c.benchmark_group("stamp");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(3));
    for radius_cells in [64.0, 128.0] {
        let placement = StampPlacement {
            centre_xz_cells: centre,
            base: StampBase::SurfaceUnderCentre,
            rotation_deg: 30.0,
            radius_cells,
            height_scale_cells: 32.0,
            falloff_fraction: 0.25,
            mode: StampMode::Add,
            material: None,
        };
        group.bench_function(format!("height_2048_r{radius_cells}"), |b| {
            b.iter_batched(
                || grid.clone(),
                |mut g| apply_stamp(&mut g, &height, &placement).expect("valid"),
                BatchSize::LargeInput,
            )
        });
    }
    let size = IVec3::new(48, 40, 16);
    let block = Clipboard::from_cells(
        size,
        vec![Cell::full(Material::LIMESTONE); (size.x * size.y * size.z) as usize],
    )
    .expect("valid size");
    let cells = Stamp::cells("block", block).expect("valid stamp");
    let placement = StampPlacement {
        rotation_deg: 30.0,
        mode: StampMode::RaiseTo,
        ..cells.native_placement(centre, StampBase::SurfaceUnderCentre)
    };
    group.bench_function("cells_48x40x16", |b| {
        b.iter_batched(
            || grid.clone(),
            |mut g| apply_stamp(&mut g, &cells, &placement).expect("valid"),
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, stamp);
criterion_main!(benches);
