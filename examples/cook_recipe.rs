//! Cooks a recipe's 2D plan (no cells) and prints its report as JSON: stage
//! times, plan size and the water and slope audits, and last the XXH3-64 of
//! every plan layer (`plan_hash`), to check that a faster cook gives the
//! same plan bit for bit. Measures plan creation for sizes a whole grid
//! cannot hold.
//!
//! `cargo run --example cook_recipe -- assets/recipes/alpine.json 8192 [SEED]`

use strata::progress::Progress;
use strata::terrain::generation::generate::GeneratorSettings;
use strata::terrain::recipe::cook::cook_plan;
use strata::terrain::recipe::stages::Recipe;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(path), Some(size)) = (args.next(), args.next()) else {
        anyhow::bail!("usage: cook_recipe RECIPE.json SIZE_CELLS [SEED]");
    };
    let seed = args.next().map_or(Ok(7), |s| s.parse())?;
    let recipe = Recipe::load(std::path::Path::new(&path))?;
    let settings = GeneratorSettings {
        seed,
        size_cells: size.parse()?,
    };
    let (plan, report) = cook_plan(&recipe, &settings, &Progress::new())?;
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
