//! Cooking a recipe's plan: hydraulic erosion per droplet step on one
//! core, thermal erosion, and the whole Alpine cook.
//!
//! - `hydraulic_1_core`: the Alpine recipe's hydraulic stage on its own
//!   terrain (the stages before it, cooked once), run in a one-thread pool.
//!   The throughput line is droplet steps per second on one core; its
//!   inverse is the time per droplet step per core.
//! - `thermal`: the Alpine recipe's thermal stage on its relief, on all
//!   cores (sample-passes per second).
//! - `rivers`: the Alpine recipe's rivers stage (two priority floods, the
//!   breach, two slope caps, lakes and channels) on its eroded, capped
//!   terrain (samples per second; the floods run on one thread).
//! - `alpine_plan`: the whole Alpine plan, all stages, on all cores.
//!
//! The plan is 512 samples a side (a 512-cell world), so one iteration
//! takes about a second.
//!
//! Run: `cargo bench --bench cook`.

use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use strata::progress::Progress;
use strata::terrain::generation::generate::GeneratorSettings;
use strata::terrain::generation::noise::tan_deg;
use strata::terrain::recipe::cook::cook_plan;
use strata::terrain::recipe::hydraulic_erosion::{RockAt, erode_hydraulic};
use strata::terrain::recipe::hydrology::run_rivers;
use strata::terrain::recipe::plan::Plan;
use strata::terrain::recipe::recipe_materials::RecipeMaterials;
use strata::terrain::recipe::stages::{Recipe, Stage};
use strata::terrain::recipe::thermal_erosion::erode_thermal;
use strata::terrain::storage::cell::Material;

const SIZE_CELLS: u32 = 512;

fn alpine() -> Recipe {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/recipes/alpine.json");
    Recipe::load(std::path::Path::new(path)).expect("the bundled Alpine recipe loads")
}

/// The plan the stages before `stop` make, and the stage at `stop`.
fn plan_before(recipe: &Recipe, stop: impl Fn(&Stage) -> bool) -> (Plan, Stage) {
    let at = recipe
        .stages
        .iter()
        .position(stop)
        .expect("the recipe has the stage");
    let mut head = recipe.clone();
    head.stages.truncate(at);
    let settings = GeneratorSettings {
        seed: 7,
        size_cells: SIZE_CELLS,
    };
    let (plan, _) = cook_plan(
        &head,
        &RecipeMaterials::default(),
        &settings,
        &Progress::new(),
    )
    .expect("cooks");
    (plan, recipe.stages[at].clone())
}

fn cook(c: &mut Criterion) {
    let recipe = alpine();
    let mut group = c.benchmark_group("cook");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(8));

    let (plan, stage) = plan_before(&recipe, |s| matches!(s, Stage::HydraulicErosion(_)));
    let Stage::HydraulicErosion(hydraulic) = stage else {
        unreachable!("found by kind")
    };
    let rock = |_y: i32| Material::ROCK;
    let one_core = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool");
    let steps = erode_hydraulic(
        &mut plan.clone(),
        &hydraulic,
        &RecipeMaterials::default(),
        7,
        RockAt::ByHeight(&rock),
        &Progress::new(),
    )
    .expect("not cancelled");
    println!("hydraulic_1_core: {steps} droplet steps an iteration");
    group.throughput(Throughput::Elements(steps));
    group.bench_function("hydraulic_1_core", |b| {
        b.iter_batched(
            || plan.clone(),
            |mut p| {
                one_core.install(|| {
                    erode_hydraulic(
                        &mut p,
                        &hydraulic,
                        &RecipeMaterials::default(),
                        7,
                        RockAt::ByHeight(&rock),
                        &Progress::new(),
                    )
                })
            },
            BatchSize::LargeInput,
        )
    });

    let (plan, stage) = plan_before(&recipe, |s| matches!(s, Stage::ThermalErosion(_)));
    let Stage::ThermalErosion(thermal) = stage else {
        unreachable!("found by kind")
    };
    group.throughput(Throughput::Elements(
        plan.len() as u64 * u64::from(thermal.iterations),
    ));
    group.bench_function("thermal", |b| {
        b.iter_batched(
            || plan.clone(),
            |mut p| {
                erode_thermal(
                    &mut p,
                    tan_deg(thermal.talus_deg),
                    thermal.iterations,
                    thermal.rate,
                    &Progress::new(),
                )
            },
            BatchSize::LargeInput,
        )
    });

    let (plan, stage) = plan_before(&recipe, |s| matches!(s, Stage::Rivers(_)));
    let Stage::Rivers(rivers) = stage else {
        unreachable!("found by kind")
    };
    let cap_grade = recipe.stages.iter().find_map(|s| match s {
        Stage::SlopeCap(cap) => Some(tan_deg(cap.grade_deg)),
        _ => None,
    });
    group.throughput(Throughput::Elements(plan.len() as u64));
    group.bench_function("rivers", |b| {
        b.iter_batched(
            || plan.clone(),
            |mut p| run_rivers(&mut p, &rivers, cap_grade, &Progress::new()),
            BatchSize::LargeInput,
        )
    });

    group.throughput(Throughput::Elements(1));
    let settings = GeneratorSettings {
        seed: 7,
        size_cells: SIZE_CELLS,
    };
    group.bench_function("alpine_plan", |b| {
        b.iter(|| {
            cook_plan(
                &recipe,
                &RecipeMaterials::default(),
                &settings,
                &Progress::new(),
            )
            .expect("cooks")
        })
    });
    group.finish();
}

criterion_group!(benches, cook);
criterion_main!(benches);
