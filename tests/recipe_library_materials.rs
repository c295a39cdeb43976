//! Recipes that name the world's own materials: a materials stage whose
//! rules say "Moss" cooks cells of the library's Moss, with exactly the
//! shapes the same recipe gives a built-in; the names a world's recipe
//! resolved are saved with it and survive a rename, a seed change and the
//! removal of the material.

mod common;

use std::sync::Arc;

use common::libraries::flat_texture as texture;

use glam::IVec3;
use strata::io::world::world_file::{LoadOptions, SaveBatch, WorldFile, WorldMeta};
use strata::progress::Progress;
use strata::terrain::Material;
use strata::terrain::command::edit_command::{EditCommand, EditSession};
use strata::terrain::document::base::BaseSource;
use strata::terrain::generation::generate::GeneratorSettings;
use strata::terrain::materials::MaterialLibrary;
use strata::terrain::recipe::plan::STRATA_MATERIAL;
use strata::terrain::recipe::recipe_materials::RecipeMaterials;
use strata::terrain::recipe::stages::{Recipe, RecipeError};
use strata::terrain::recipe::terrain_source::RecipeTerrain;
use strata::terrain::storage::grid::Grid;

/// Rolling land: strata on slopes steeper than 25°, the named material on
/// the rest, the same material as the soil.
const RECIPE: &str = r#"{ "name": "Library test", "stages": [
    { "stage": "relief", "kind": "ridged", "wavelength_cells": 96, "amplitude_cells": 40, "base_cells": 30 },
    { "stage": "hydraulic_erosion", "droplets_per_sample": 0.5,
      "hardness": [ { "material": "NAME", "hardness": 0.5 } ] },
    { "stage": "materials", "fallback": "NAME",
      "rules": [ { "material": "strata", "min_slope_deg": 25 } ] } ] }"#;

fn recipe_text(name: &str) -> String {
    RECIPE.replace("NAME", name)
}

/// The default library plus "Moss" (id 11) and "Clay" (id 12).
fn library() -> (MaterialLibrary, Material, Material) {
    common::libraries::moss_and_clay()
}

fn settings(seed: u64) -> GeneratorSettings {
    GeneratorSettings {
        seed,
        size_cells: 128,
    }
}

/// Cooks `recipe` with `materials` and builds its cells.
fn cooked(recipe: &Recipe, materials: &RecipeMaterials, seed: u64) -> (RecipeTerrain, Grid) {
    let (terrain, _) =
        RecipeTerrain::cook(recipe, materials, &settings(seed), &Progress::new()).unwrap();
    let grid = terrain.build_grid(&Progress::new()).unwrap().0;
    (terrain, grid)
}

/// `grid`'s cells with `from` drawn as `to`, as (chunk, material, occupancy)
/// lists in chunk order.
fn cells_as(grid: &Grid, from: Material, to: Material) -> Vec<(String, Vec<(u8, u8)>)> {
    let mut out: Vec<_> = grid
        .chunks()
        .map(|(c, ch)| {
            let cells = (0..32 * 32 * 32)
                .map(|i| {
                    let cell = ch.cells.get(local(i));
                    let m = if cell.material() == from {
                        to
                    } else {
                        cell.material()
                    };
                    (m.0, cell.occupancy())
                })
                .collect();
            (format!("{:?}", c.0), cells)
        })
        .collect();
    out.sort();
    out
}

/// Local position of cell index `i` in a chunk (x fastest).
fn local(i: usize) -> IVec3 {
    IVec3::new((i % 32) as i32, (i / 32 % 32) as i32, (i / 1024) as i32)
}

/// How many cells of `grid` are `material`.
fn count(grid: &Grid, material: Material) -> usize {
    grid.chunks()
        .map(|(_, ch)| {
            (0..32 * 32 * 32)
                .filter(|&i| ch.cells.get(local(i)).material() == material)
                .count()
        })
        .sum()
}

#[test]
fn a_recipe_names_a_library_material_and_cooks_its_cells() {
    let (library, moss, _) = library();
    let text = recipe_text("Moss");
    // Without the library the name means nothing: refused, naming it.
    let unknown = |index, stage: &'static str| RecipeError::UnknownMaterial {
        index,
        stage,
        name: "Moss".into(),
    };
    assert_eq!(
        Recipe::from_json(&text),
        Err(RecipeError::Several(vec![
            unknown(1, "hydraulic_erosion"),
            unknown(2, "materials")
        ]))
    );
    let recipe = Recipe::from_json_for(&text, &library).unwrap();
    let table = RecipeMaterials::resolve(&recipe, &library).unwrap();
    assert_eq!(table.material("Moss"), Some(moss));
    let (terrain, grid) = cooked(&recipe, &table, 9);
    let plan = terrain.plan();
    assert!(
        plan.material
            .iter()
            .all(|&m| m == moss.0 || m == STRATA_MATERIAL)
    );
    assert!(
        plan.material.contains(&STRATA_MATERIAL),
        "some slopes are strata"
    );
    assert!(
        count(&grid, moss) > 1000,
        "{} moss cells",
        count(&grid, moss)
    );
    // The same recipe naming sand gives the same land, sand where moss is:
    // the name changes the material, not the shapes, the erosion (moss
    // has the hardness sand was given) or the strata.
    let sand_recipe = Recipe::from_json(&recipe_text("sand")).unwrap();
    let sand_table = RecipeMaterials::resolve(&sand_recipe, &library).unwrap();
    assert!(sand_table.is_empty(), "built-ins need no entry");
    let (_, sand) = cooked(&sand_recipe, &sand_table, 9);
    assert_eq!(count(&grid, Material::SAND), 0);
    assert_eq!(
        cells_as(&grid, moss, Material::SAND),
        cells_as(&sand, Material::SAND, Material::SAND)
    );
}

#[test]
fn the_last_library_id_is_a_material_not_the_strata_marker() {
    // Id 255 once meant "exposed strata" in a cooked plan: a recipe naming
    // the library's 255th id drew rock bands instead of it.
    let mut library = MaterialLibrary::default();
    library.set_texture_side_px(256).unwrap();
    let mut last = Material::ROCK;
    for id in Material::COUNT as u8..=u8::MAX {
        last = library
            .add_material(&format!("Swatch {id}"), texture([id, 90, 200]), None)
            .unwrap();
    }
    assert_eq!(last, Material(255));
    let text = recipe_text("Swatch 255");
    let recipe = Recipe::from_json_for(&text, &library).unwrap();
    let table = RecipeMaterials::resolve(&recipe, &library).unwrap();
    let (terrain, grid) = cooked(&recipe, &table, 9);
    let plan = terrain.plan();
    let flat = plan.material.iter().filter(|&&m| m == 255).count();
    let strata = plan
        .material
        .iter()
        .filter(|&&m| m == STRATA_MATERIAL)
        .count();
    assert_eq!(flat + strata, plan.material.len());
    assert!(
        flat > 1000 && strata > 1000,
        "{flat} flat samples, {strata} strata"
    );
    // Against the same land in sand: every sand cell is a 255 cell.
    let sand_recipe = Recipe::from_json(&recipe_text("sand")).unwrap();
    let (_, sand) = cooked(&sand_recipe, &RecipeMaterials::default(), 9);
    assert_eq!(count(&grid, Material(255)), count(&sand, Material::SAND));
    assert_eq!(
        cells_as(&grid, Material(255), Material::SAND),
        cells_as(&sand, Material::SAND, Material::SAND)
    );
}

/// A session whose document's base is `recipe` cooked with `table`.
fn recipe_world(recipe: &Recipe, table: &RecipeMaterials, seed: u64) -> (Grid, EditSession) {
    let (_, grid) = cooked(recipe, table, seed);
    let mut session = EditSession::new(1 << 24, None);
    session.enable_document(&grid);
    session.set_base_source(BaseSource::Recipe {
        recipe: Arc::new(recipe.clone()),
        materials: table.clone(),
        settings: settings(seed),
    });
    (grid, session)
}

/// Changes the document's seed to `seed` (cooking the recipe again).
fn reseed(grid: &mut Grid, session: &mut EditSession, seed: u64) {
    let prepared = session
        .base_seed_job(seed)
        .unwrap()
        .prepare(&Progress::new())
        .unwrap();
    assert!(session.finish_base_seed(grid, prepared));
}

#[test]
fn a_saved_recipe_base_keeps_its_names_through_a_rename_and_a_seed_change() {
    let (mut library, moss, _) = library();
    let recipe = Recipe::from_json_for(&recipe_text("Moss"), &library).unwrap();
    let table = RecipeMaterials::resolve(&recipe, &library).unwrap();
    let (grid, session) = recipe_world(&recipe, &table, 9);
    let dir = std::env::temp_dir().join(format!("strata-recipe-library-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("moss.strata");
    let meta = WorldMeta {
        materials: library.clone(),
        ..WorldMeta::default()
    };
    let batch = SaveBatch::full(&grid).with_document(session.document_snapshot());
    WorldFile::save_full_batch(&path, batch, &meta, &Progress::new()).unwrap();
    let (_, mut reopened, meta_back, report) =
        WorldFile::open(&path, LoadOptions::default()).unwrap();
    assert_eq!(reopened.content_hash(), grid.content_hash());
    assert_eq!(meta_back.materials.material_named("Moss"), Some(moss));
    let document = report.document.expect("the layers were saved").document;
    match &document.base.source {
        BaseSource::Recipe { materials, .. } => assert_eq!(materials, &table),
        other => panic!("expected a recipe base, got {other:?}"),
    }
    // Renamed in the library, the recipe's "Moss" still means id 11: a
    // seed change cooks the same cells as a fresh world of that seed.
    library.rename(moss, "Lichen").unwrap();
    assert_eq!(library.material_named("Moss"), None);
    let mut session = EditSession::new(1 << 24, None);
    session.restore_document(document);
    reseed(&mut reopened, &mut session, 10);
    let (_, fresh) = cooked(&recipe, &table, 10);
    assert_eq!(reopened.content_hash(), fresh.content_hash());
    assert!(count(&reopened, moss) > 1000);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn removing_a_material_a_recipe_base_names_remaps_the_base_and_undoes_exactly() {
    let (library, moss, clay) = library();
    let recipe = Recipe::from_json_for(&recipe_text("Moss"), &library).unwrap();
    let table = RecipeMaterials::resolve(&recipe, &library).unwrap();
    let (mut grid, mut session) = recipe_world(&recipe, &table, 9);
    let before = grid.content_hash();
    let moss_cells = count(&grid, moss);
    let removal = session
        .remove_material(&mut grid, &library, moss, clay)
        .unwrap();
    assert!(removal.base_remapped);
    assert_eq!(count(&grid, moss), 0);
    assert_eq!(count(&grid, clay), moss_cells);
    match &session.document.base_source() {
        Some(BaseSource::Recipe { materials, .. }) => {
            assert_eq!(materials.material("Moss"), Some(clay));
        }
        other => panic!("expected a recipe base, got {other:?}"),
    }
    // A seed change after the removal cooks clay where the recipe says
    // Moss, never the removed id.
    reseed(&mut grid, &mut session, 10);
    assert_eq!(count(&grid, moss), 0);
    let (_, fresh_moss) = cooked(&recipe, &table, 10);
    assert_eq!(count(&grid, clay), count(&fresh_moss, moss));
    assert_eq!(
        cells_as(&grid, clay, moss),
        cells_as(&fresh_moss, moss, moss)
    );
    // Undo the seed change, then the removal: the cells and the base's
    // names are the world's before the removal.
    session.apply(&mut grid, &EditCommand::Undo).unwrap();
    session.apply(&mut grid, &EditCommand::Undo).unwrap();
    assert_eq!(grid.content_hash(), before);
    match &session.document.base_source() {
        Some(BaseSource::Recipe { materials, .. }) => assert_eq!(materials, &table),
        other => panic!("expected a recipe base, got {other:?}"),
    }
}

#[test]
fn the_binary_cooks_a_recipe_naming_a_material_it_adds_in_the_same_run() {
    let dir = std::env::temp_dir().join(format!("strata-recipe-add-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let recipe_path = dir.join("moss.json");
    std::fs::write(&recipe_path, recipe_text("Moss")).unwrap();
    let texture_path = dir.join("moss.png");
    image::RgbImage::from_pixel(256, 256, image::Rgb([60, 120, 40]))
        .save(&texture_path)
        .unwrap();
    let world_path = dir.join("moss.strata");
    let previews = dir.join("previews");
    // A script keeps the world's layers, over the recipe base.
    let script_path = dir.join("none.json");
    std::fs::write(&script_path, r#"{"strokes": []}"#).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["--headless", "--world-size", "128", "--seed", "9"])
        .arg("--recipe")
        .arg(&recipe_path)
        .arg("--material-add")
        .arg(format!("Moss={}", texture_path.display()))
        .arg("--script")
        .arg(&script_path)
        .arg("--save")
        .arg(&world_path)
        .arg("--recipe-previews")
        .arg(&previews)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let (_, grid, meta, report) = WorldFile::open(&world_path, LoadOptions::default()).unwrap();
    let moss = meta.materials.material_named("Moss").unwrap();
    assert_eq!(moss, Material(11));
    // The cells are the recipe's, cooked with the library the run made.
    let (library, _, _) = library();
    let recipe = Recipe::from_json_for(&recipe_text("Moss"), &library).unwrap();
    let table = RecipeMaterials::resolve(&recipe, &library).unwrap();
    let (_, expected) = cooked(&recipe, &table, 9);
    assert_eq!(grid.content_hash(), expected.content_hash());
    let document = report
        .document
        .expect("a recipe world keeps its layers")
        .document;
    match &document.base.source {
        BaseSource::Recipe { materials, .. } => {
            assert_eq!(materials.material("Moss"), Some(moss));
            assert_eq!(
                materials.preview_srgb(moss),
                meta.materials.flat_colour_srgb(moss)
            );
        }
        other => panic!("expected a recipe base, got {other:?}"),
    }
    // The materials stage's picture draws moss in the library's colour: its
    // brightest flat pixel is moss green, not a built-in's colour.
    let picture = image::open(previews.join("02-materials.png"))
        .unwrap()
        .to_rgb8();
    let greenish = picture
        .pixels()
        .filter(|p| p[1] > p[0] + 30 && p[1] > p[2] + 30)
        .count();
    assert!(
        greenish > picture.pixels().count() / 4,
        "{greenish} moss pixels"
    );
    // Without the material the run refuses the recipe, naming the material,
    // and writes nothing.
    let refused = dir.join("refused.strata");
    let refusal = |extra: &[String]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
            .args(["--headless", "--recipe"])
            .arg(&recipe_path)
            .args(extra)
            .arg("--save")
            .arg(&refused)
            .output()
            .unwrap();
        assert!(!out.status.success());
        assert!(!refused.exists());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let stderr = refusal(&["--world-size".into(), "128".into()]);
    assert!(stderr.contains("unknown material \"Moss\""), "{stderr}");
    // A streaming world keeps no library: said as such, not as an unknown
    // name, although the recipe names what the flags would add.
    let stderr = refusal(&[
        "--world-size".into(),
        "256".into(),
        "--stream".into(),
        "--material-add".into(),
        format!("Moss={}", texture_path.display()),
    ]);
    assert!(
        stderr.contains("streaming worlds keep no material library"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
