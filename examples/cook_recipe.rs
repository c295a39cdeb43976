//! Cooks a recipe's 2D plan (no cells) and prints its report as JSON: stage
//! times, plan size and the water and slope audits, and last the XXH3-64 of
//! every plan layer (`plan_hash`), to check that a faster cook gives the
//! same plan bit for bit. Measures plan creation for sizes a whole grid
//! cannot hold.
//!
//! `cargo run --example cook_recipe -- assets/recipes/alpine.json 8192 [SEED]`
//!
//! With `--cancel-each-stage` it instead cooks once per stage, cancels as
//! that stage starts (plus a few milliseconds, so the stage is under
//! way) and prints how long the cook took to stop after the cancel.

use anyhow::Context;
use strata::progress::Progress;
use strata::terrain::generation::generate::GeneratorSettings;
use strata::terrain::recipe::cook::cook_plan;
use strata::terrain::recipe::recipe_materials::RecipeMaterials;
use strata::terrain::recipe::stages::Recipe;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with("--"));
    let (Some(path), Some(size)) = (args.next(), args.next()) else {
        anyhow::bail!("usage: cook_recipe RECIPE.json SIZE_CELLS [SEED]");
    };
    let seed = match args.next() {
        Some(s) => s
            .parse()
            .with_context(|| format!("SEED {s:?} is not a whole number from 0 to 2^64 - 1"))?,
        None => 7,
    };
    let size_cells = size
        .parse()
        .with_context(|| format!("SIZE_CELLS {size:?} is not a whole number from 0 to 2^32 - 1"))?;
    let recipe = Recipe::load(std::path::Path::new(&path))?;
    let settings = GeneratorSettings { seed, size_cells };
    if std::env::args().any(|a| a == "--cancel-each-stage") {
        return cancel_each_stage(&recipe, &settings);
    }
    let (plan, report) = cook_plan(
        &recipe,
        &RecipeMaterials::default(),
        &settings,
        &Progress::new(),
    )?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for layer in plan.f32_layers() {
        layer
            .iter()
            .for_each(|v| h.update(&v.to_bits().to_le_bytes()));
    }
    plan.u8_layers().iter().for_each(|layer| h.update(layer));
    println!("plan_hash {:016x}", h.digest());
    Ok(())
}

/// Cooks `recipe` once per stage, cancelling 20 ms into that stage, and
/// prints the time from the cancel to the cook's return.
fn cancel_each_stage(recipe: &Recipe, settings: &GeneratorSettings) -> anyhow::Result<()> {
    use std::time::{Duration, Instant};
    // The cook's progress places are the stages, then the audits.
    let places = recipe.stages.len() + 1;
    for (index, stage) in recipe.stages.iter().enumerate() {
        // By place, not name: a recipe may run a kind of stage twice.
        let place = format!("({} of {places})", index + 1);
        let progress = Progress::new();
        let stopped = std::thread::scope(|scope| {
            let watcher = scope.spawn(|| {
                while !progress.label().ends_with(&place) {
                    if progress.is_cancelled() {
                        return None;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                std::thread::sleep(Duration::from_millis(20));
                progress.cancel();
                Some(Instant::now())
            });
            let result = cook_plan(recipe, &RecipeMaterials::default(), settings, &progress);
            let returned = Instant::now();
            // A stage too short to be cancelled in lets the cook finish.
            progress.cancel();
            let cancelled_at = watcher.join().ok().flatten();
            (
                result.is_err(),
                cancelled_at.map(|t| returned.saturating_duration_since(t)),
            )
        });
        match stopped {
            (true, Some(latency)) => println!(
                "{}: stopped {:.1} ms after the cancel",
                stage.name(),
                latency.as_secs_f64() * 1e3
            ),
            _ => println!("{}: finished before the cancel", stage.name()),
        }
    }
    Ok(())
}
