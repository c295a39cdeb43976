//! Re-deriving a world document (spec §14) on the default 1,024-cell world,
//! cells only (meshing follows as for any edit).
//!
//! Run: `cargo bench --bench layers`. Times:
//! - `move_stamp_r64_in_50_operations`: 50 operations (stamps of radius
//!   16–64, strokes and a road) spread over the world; one radius-64 stamp
//!   moves 200 studs and back, alternately;
//! - `toggle_layer_of_1000_applications`: a layer of 20 strokes of 50
//!   applications each, over a layer of 10 stamps, hidden and shown;
//! - `move_small_stamp_among_N_operations` (N = 10, 100, 1,000 strokes spread
//!   evenly): one radius-12 stamp moves 64 studs and back. The cost follows
//!   the operations that meet it, not N.
//!
//! - `closure_bookkeeping_N_operations` (N = 1,000, 10,000, 100,000 boxes
//!   on a lattice, no cell work): what every change costs before any cell
//!   is derived, finding what changed and growing the dirty closure over
//!   the document's footprints; one box moves.
//!
//! Before timing, each case prints the dirty columns and operations its
//! re-derivation applies. Last, once (too slow to repeat): a base seed
//! change of the Alpine recipe at 2,048 cells under a 30-operation stack,
//! against cooking that seed and deriving the stack on it whole (what the
//! seed change must not exceed by more than 1.2×).

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use glam::{DVec2, DVec3};
use strata::terrain::document::base::BaseColumns;
use strata::terrain::document::derive::{derive_whole, rederive};
use strata::terrain::document::layers::{LayerId, LayerStack};
use strata::terrain::document::operation::{OperationId, OperationKind, RecordedStroke};
use strata::terrain::editing::brush::{Brush, BrushMode, BrushOptions};
use strata::terrain::editing::recorder::Recorder;
use strata::terrain::generation::generate::{GeneratorSettings, surface_height_cells};
use strata::terrain::path::spec::PathSpec;
use strata::terrain::stamp::definition::{Stamp, StampBase, StampMode, StampPlacement};
use strata::terrain::storage::cell::Material;
use strata::terrain::storage::grid::Grid;

fn settings() -> GeneratorSettings {
    GeneratorSettings::default()
}

fn mesa() -> Arc<Stamp> {
    let side = 32u32;
    let samples: Vec<f32> = (0..side * side)
        .map(|i| {
            let (x, z) = ((i % side) as f32 - 15.5, (i / side) as f32 - 15.5);
            (1.0 - (x * x + z * z) / 256.0).clamp(0.0, 1.0)
        })
        .collect();
    Arc::new(Stamp::height("mesa", side, side, samples).expect("valid samples"))
}

fn stamp(m: &Arc<Stamp>, x_cells: f64, z_cells: f64, radius_cells: f64) -> OperationKind {
    OperationKind::Stamp {
        stamp: m.clone(),
        placement: StampPlacement {
            centre_xz_cells: DVec2::new(x_cells, z_cells),
            base: StampBase::SurfaceUnderCentre,
            rotation_deg: 0.0,
            radius_cells,
            height_scale_cells: 20.0,
            falloff_fraction: 0.3,
            mode: StampMode::RaiseTo,
            material: None,
        },
    }
}

/// A stroke of `applications` centres 2 cells apart eastward from
/// `(x, z)` cells, on the generator's surface.
fn stroke(x: f64, z: f64, applications: usize) -> OperationKind {
    let s = settings();
    let centres: Vec<DVec3> = (0..applications)
        .map(|i| {
            let (cx, cz) = (x + 2.0 * i as f64, z);
            let h = surface_height_cells(&s, cx as i32, cz as i32).unwrap_or(40.0);
            DVec3::new(cx, h, cz) * 4.0
        })
        .collect();
    OperationKind::Stroke(RecordedStroke {
        brush: Brush {
            mode: BrushMode::Add,
            radius_cells: 4.0,
            strength: 0.5,
            material: Material::SAND,
            ignore_water: false,
        },
        options: BrushOptions::default(),
        surface_offsets_studs: Some(vec![Some(0.0); centres.len()].into()),
        centres_world: centres.into(),
    })
}

/// The live cells of `stack`, derived whole.
fn derived(base: &BaseColumns, stack: &LayerStack) -> Grid {
    derive_whole(base, stack).0
}

/// Times re-deriving between `a` and `b`, alternately, after printing
/// what one re-derivation does.
fn bench_swap(c: &mut Criterion, name: &str, base: &BaseColumns, a: &LayerStack, b: &LayerStack) {
    let mut live = derived(base, a);
    let mut rec = Recorder::new("probe");
    let r = rederive(&mut live, &mut rec, base, a, b).unwrap();
    println!(
        "{name}: {} dirty columns, {} operations applied, {} skipped",
        r.dirty_columns,
        r.applied_operations,
        r.failures.len()
    );
    let mut forward = false;
    c.bench_function(name, |bench| {
        bench.iter(|| {
            let (from, to) = if forward { (a, b) } else { (b, a) };
            forward = !forward;
            let mut rec = Recorder::new("bench");
            let _ = black_box(rederive(&mut live, &mut rec, base, from, to));
        })
    });
}

fn layers(c: &mut Criterion) {
    let base = BaseColumns::generated(&settings());
    let m = mesa();

    // 50 operations: 12 stamps, 36 strokes and a road, spread over the world.
    let mut fifty = LayerStack::new();
    fifty.add_layer("Town").expect("valid name");
    let moved: OperationId = fifty
        .add_operation(stamp(&m, 300.0, 300.0, 64.0))
        .expect("unlocked");
    for i in 0..11 {
        let (x, z) = (80.0 + 85.0 * i as f64, 120.0 + 70.0 * (i % 4) as f64 * 3.0);
        fifty
            .add_operation(stamp(&m, x, z.min(950.0), 16.0 + 4.0 * i as f64))
            .expect("unlocked");
    }
    fifty
        .add_operation(OperationKind::Path(PathSpec::road(vec![
            DVec2::new(200.0, 3400.0),
            DVec2::new(1800.0, 3300.0),
            DVec2::new(3600.0, 3500.0),
        ])))
        .expect("unlocked");
    fifty.add_layer("Sculpt").expect("valid name");
    for i in 0..37 {
        let (x, z) = (40.0 + 25.0 * i as f64, 500.0 + 11.0 * i as f64);
        fifty.add_operation(stroke(x, z, 8)).expect("unlocked");
    }
    assert_eq!(fifty.operation_count(), 50);
    let mut away = fifty.clone();
    away.edit_operation(moved, stamp(&m, 350.0, 300.0, 64.0))
        .expect("same kind");
    bench_swap(c, "move_stamp_r64_in_50_operations", &base, &fifty, &away);

    // A layer of 1,000 brush applications over 10 stamps.
    let mut thousand = LayerStack::new();
    thousand.add_layer("Stamps").expect("valid name");
    for i in 0..10 {
        thousand
            .add_operation(stamp(&m, 100.0 + 80.0 * i as f64, 400.0, 24.0))
            .expect("unlocked");
    }
    let sculpt: LayerId = thousand.add_layer("Sculpt").expect("valid name");
    for i in 0..20 {
        thousand
            .add_operation(stroke(
                100.0 + 40.0 * (i % 20) as f64,
                380.0 + 2.0 * i as f64,
                50,
            ))
            .expect("unlocked");
    }
    let mut hidden = thousand.clone();
    hidden.set_visible(sculpt, false).expect("known layer");
    bench_swap(
        c,
        "toggle_layer_of_1000_applications",
        &base,
        &thousand,
        &hidden,
    );

    // A fixed edit among 10, 100 and 1,000 operations spread evenly.
    for n in [10usize, 100, 1000] {
        let mut stack = LayerStack::new();
        stack.add_layer("Spread").expect("valid name");
        let side = (n as f64).sqrt().ceil() as usize;
        for i in 0..n {
            let (gx, gz) = (i % side, i / side);
            let x = 16.0 + 990.0 * gx as f64 / side as f64;
            let z = 16.0 + 990.0 * gz as f64 / side as f64;
            stack.add_operation(stroke(x, z, 2)).expect("unlocked");
        }
        let small = stack
            .add_operation(stamp(&m, 500.0, 500.0, 12.0))
            .expect("unlocked");
        let mut moved = stack.clone();
        moved
            .edit_operation(small, stamp(&m, 516.0, 500.0, 12.0))
            .expect("same kind");
        bench_swap(
            c,
            &format!("move_small_stamp_among_{n}_operations"),
            &base,
            &stack,
            &moved,
        );
    }
}

/// The Alpine recipe at 2,048 cells: a seed change (cook, derive the stack
/// whole, write the changed chunks back) against cook plus one derivation.
fn seed_change_once() {
    use std::time::Instant;
    use strata::progress::Progress;
    use strata::terrain::command::base_seed::make_base;
    use strata::terrain::document::base::BaseSource;
    use strata::terrain::document::derive::rederive_all;
    use strata::terrain::recipe::stages::Recipe;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/recipes/alpine.json");
    let recipe = Arc::new(Recipe::load(&path).expect("the shipped recipe loads"));
    let source = |seed: u64| BaseSource::Recipe {
        recipe: recipe.clone(),
        materials: Default::default(),
        settings: GeneratorSettings {
            seed,
            size_cells: 2048,
        },
    };
    let m = mesa();
    let mut stack = LayerStack::new();
    stack.add_layer("Stamps").expect("valid name");
    for i in 0..10 {
        let (x, z) = (150.0 + 180.0 * i as f64, 400.0 + 120.0 * (i % 3) as f64);
        stack
            .add_operation(stamp(&m, x, z, 48.0))
            .expect("unlocked");
    }
    stack.add_layer("Sculpt").expect("valid name");
    for i in 0..20 {
        let (x, z) = (100.0 + 90.0 * i as f64, 1200.0 + 20.0 * i as f64);
        stack.add_operation(stroke(x, z, 10)).expect("unlocked");
    }
    let progress = Progress::new();
    let old = make_base(&source(7), &progress).expect("cooks");
    let mut live = derived(&old, &stack);
    let t = Instant::now();
    let new = make_base(&source(3), &progress).expect("cooks");
    let mut rec = Recorder::new("seed");
    let report = rederive_all(&mut live, &mut rec, &new, &stack);
    let change_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let fresh = make_base(&source(3), &progress).expect("cooks");
    let whole = derived(&fresh, &stack);
    let reference_ms = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(whole.content_hash(), live.content_hash());
    println!(
        "seed_change_alpine_2048_30_operations: {change_ms:.0} ms ({} columns, {} operations) \
         vs cook + stack {reference_ms:.0} ms: {:.2}x",
        report.dirty_columns,
        report.applied_operations,
        change_ms / reference_ms
    );
}

/// The footprint bookkeeping of one change in a document of `n` boxes.
fn closure_bookkeeping(c: &mut Criterion) {
    use strata::terrain::document::closure::{changed_footprints, dirty_closure};
    use strata::terrain::document::operation::Operation;
    use strata::terrain::storage::coords::CellBox;
    let fill = |id: usize, x: i32, z: i32| {
        Operation::new(
            OperationId(id as u32 + 1),
            OperationKind::Fill {
                region: CellBox::new(glam::IVec3::new(x, 0, z), glam::IVec3::new(x + 8, 8, z + 8)),
                material: Material::SAND,
                occupancy: 255,
                ignore_water: false,
            },
        )
    };
    for n in [1_000usize, 10_000, 100_000] {
        let ops: Vec<Operation> = (0..n)
            .map(|i| fill(i, (i % 300) as i32 * 40, (i / 300) as i32 * 40))
            .collect();
        let mut moved = ops.clone();
        moved[n / 2] = fill(n / 2, 4, 4);
        let old: Vec<&Operation> = ops.iter().collect();
        let new: Vec<&Operation> = moved.iter().collect();
        let members = dirty_closure(&new, &changed_footprints(&old, &new)).members;
        println!(
            "closure_bookkeeping_{n}_operations: {} members",
            members.len()
        );
        c.bench_function(&format!("closure_bookkeeping_{n}_operations"), |bench| {
            bench.iter(|| {
                let seeds = changed_footprints(black_box(&old), black_box(&new));
                black_box(dirty_closure(&new, &seeds))
            })
        });
    }
}

fn seed_change(_: &mut Criterion) {
    seed_change_once();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = layers, closure_bookkeeping, seed_change
}
criterion_main!(benches);
