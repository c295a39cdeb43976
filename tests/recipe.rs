//! Generator recipes: every shipped recipe cooks with its audits met, the
//! same recipe, seed and size give one pinned world hash whatever the
//! thread count, and the binary builds recipe worlds and reports their
//! generation figures.

mod common;

use std::path::{Path, PathBuf};

use strata::progress::Progress;
use strata::terrain::generation::generate::GeneratorSettings;
use strata::terrain::recipe::recipe_materials::RecipeMaterials;
use strata::terrain::recipe::stages::{Recipe, Stage};
use strata::terrain::recipe::terrain_source::RecipeTerrain;

fn recipes_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/recipes")
}

fn shipped() -> Vec<(String, Recipe)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(recipes_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            (name, Recipe::load(&p).unwrap())
        })
        .collect()
}

fn settings(size_cells: u32) -> GeneratorSettings {
    GeneratorSettings {
        seed: 7,
        size_cells,
    }
}

/// Cooks `recipe` (built-in names) for seed 7 at `size_cells`.
fn cook(
    recipe: &Recipe,
    size_cells: u32,
) -> (RecipeTerrain, strata::terrain::recipe::cook::CookReport) {
    RecipeTerrain::cook(
        recipe,
        &RecipeMaterials::default(),
        &settings(size_cells),
        &Progress::new(),
    )
    .unwrap()
}

#[test]
fn five_recipes_ship_and_each_cooks_with_its_audits_met() {
    let recipes = shipped();
    let names: Vec<&str> = recipes.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "alpine",
            "canyon_caves",
            "coast_rivers",
            "desert_mesas",
            "islands"
        ]
    );
    for (name, recipe) in &recipes {
        let (terrain, mut report) = cook(recipe, 512);
        let (grid, overhangs) = terrain.build_grid(&Progress::new()).unwrap();
        report.overhang_cells = Some(overhangs);
        assert!(grid.chunk_count() > 0, "{name}");
        assert_eq!(report.stages.len(), recipe.stages.len(), "{name}");
        let has = |f: fn(&Stage) -> bool| recipe.stages.iter().any(f);
        if has(|s| matches!(s, Stage::Rivers(_))) {
            assert!(report.river_cells > 0, "{name}: no river: {report:?}");
            assert_eq!(report.stranded_rivers, 0, "{name}: {report:?}");
        }
        if let Some(cap) = report.slope_cap_deg {
            assert!(report.max_slope_deg <= cap, "{name}: {report:?}");
        }
        if has(|s| matches!(s, Stage::Sea(_))) {
            assert!(report.sea_cells > 0, "{name}: no sea: {report:?}");
        }
        if has(|s| matches!(s, Stage::Caves(_))) {
            assert!(overhangs > 1000, "{name}: {overhangs} overhang cells");
        } else {
            assert_eq!(overhangs, 0, "{name}: a height field has no overhangs");
        }
    }
}

/// The world hash of the Alpine recipe at 256 cells, seed 7: pinned so a
/// change to any stage that moves a cell is seen.
const ALPINE_256_HASH: u64 = 0xed15_4f0f_5010_1005;

#[test]
fn a_recipe_world_hash_is_pinned_and_independent_of_threads() {
    let recipe = Recipe::load(&recipes_dir().join("alpine.json")).unwrap();
    let hash_with = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                let (terrain, _) = cook(&recipe, 256);
                terrain
                    .build_grid(&Progress::new())
                    .unwrap()
                    .0
                    .content_hash()
            })
    };
    let one = hash_with(1);
    assert_eq!(one, hash_with(3));
    assert_eq!(one, ALPINE_256_HASH, "hash {one:#018x}");
}

#[test]
fn a_slope_cap_holds_on_a_rugged_recipe() {
    let text = r#"{ "name": "steep", "stages": [
        { "stage": "relief", "kind": "ridged", "amplitude_cells": 200, "wavelength_cells": 120 },
        { "stage": "slope_cap", "grade_deg": 30 },
        { "stage": "rivers", "min_catchment_cells": 2000, "min_width_cells": 2,
          "max_width_cells": 6, "depth_cells": 2, "max_breach_cells": 30 }
    ] }"#;
    let recipe = Recipe::from_json(text).unwrap();
    let (terrain, report) = cook(&recipe, 128);
    assert!(report.max_slope_deg <= 30.0, "{report:?}");
    assert!(
        report.max_slope_deg > 25.0,
        "the cap was reached: {report:?}"
    );
    assert_eq!(report.stranded_rivers, 0, "{report:?}");
    // The plan's heights obey it pair by pair on dry land.
    let plan = terrain.plan();
    let grade = 30f64.to_radians().tan();
    for j in 0..plan.side {
        for i in 0..plan.side - 1 {
            let (a, b) = (plan.index(i, j), plan.index(i + 1, j));
            if plan.is_wet(a) || plan.is_wet(b) {
                continue;
            }
            let rise = f64::from(plan.height_cells[a] - plan.height_cells[b]).abs();
            assert!(rise <= grade + 1e-6, "({i}, {j}): {rise}");
        }
    }
}

#[test]
fn cancelling_stops_the_cook() {
    let recipe = Recipe::load(&recipes_dir().join("alpine.json")).unwrap();
    let progress = Progress::new();
    progress.cancel();
    assert!(matches!(
        RecipeTerrain::cook(
            &recipe,
            &RecipeMaterials::default(),
            &settings(256),
            &progress
        ),
        Err(strata::terrain::generation::generate::GenerateError::Cancelled)
    ));
}

#[test]
fn the_binary_reports_generation_and_refuses_a_bad_recipe() {
    let dir = std::env::temp_dir().join(format!("strata-recipe-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        r#"{ "name": "bad", "stages": [
            { "stage": "relief", "kind": "fbm", "amplitude_cells": 40, "wavelength_cells": 0 } ] }"#,
    )
    .unwrap();
    let shot = dir.join("bad.png");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["--headless", "--world-size", "128", "--recipe"])
        .arg(&bad)
        .arg("--screenshot")
        .arg(&shot)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("wavelength_cells"), "{stderr}");
    assert!(!shot.exists());

    common::require_gpu("the_binary_reports_generation_and_refuses_a_bad_recipe");
    let json = dir.join("stats.json");
    common::run_ok(
        std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
            .args(["--headless", "--world-size", "256", "--seed", "7"])
            .args(["--size", "96x64", "--recipe"])
            .arg(recipes_dir().join("alpine.json"))
            .arg("--screenshot")
            .arg(dir.join("alpine.png"))
            .arg("--stats-json")
            .arg(&json)
            .arg("--recipe-previews")
            .arg(dir.join("previews")),
    );
    let mut previews: Vec<String> = std::fs::read_dir(dir.join("previews"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    previews.sort();
    assert_eq!(previews.len(), 7, "{previews:?}");
    assert_eq!(previews[0], "00-relief.png");
    assert_eq!(previews[6], "06-materials.png");
    let first = image::open(dir.join("previews").join(&previews[6])).unwrap();
    assert_eq!((first.width(), first.height()), (512, 512));
    let stats = common::read_json(&json);
    let generation = &stats["generation"];
    assert_eq!(generation["recipe"], "Alpine", "{stats}");
    assert_eq!(generation["stranded_rivers"], 0);
    assert_eq!(generation["stages"].as_array().unwrap().len(), 7);
    assert!(generation["river_cells"].as_u64().unwrap() > 0);
    assert_eq!(
        stats["world_hash"].as_str().unwrap(),
        format!("{ALPINE_256_HASH:016x}")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A recipe world streams (spec §12): its file keeps the recipe text and
/// the cooked plan, the columns it serves equal the whole world's, and
/// reopening the file serves the same columns from the kept plan (or cooks
/// again when the plan is gone or stale).
#[test]
fn a_streamed_recipe_world_serves_and_reopens_the_same_columns() {
    use strata::app::streamed_world::StreamedWorld;
    use strata::terrain::ColumnCoord;
    let dir = std::env::temp_dir().join(format!("strata-recipe-stream-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = recipes_dir().join("canyon_caves.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let recipe = Recipe::from_json(&text).unwrap();
    let world = StreamedWorld::new_recipe(&recipe, &text, &settings(256), None, &dir).unwrap();
    assert_eq!(
        world.generation.as_ref().unwrap().recipe,
        "Canyon with caves"
    );
    let (terrain, _) = cook(&recipe, 256);
    let (whole, _) = terrain.build_grid(&Progress::new()).unwrap();
    let column = ColumnCoord::new(3, 5);
    let served = world.source().load_column(column).unwrap();
    assert!(!served.is_empty());
    for (coord, cells) in &served {
        assert!(cells.same_cells(&whole.chunk_cells(*coord)), "{coord:?}");
    }
    // Reopening reads the plan the new world kept (nothing cooked), and
    // serves the same cells; without the plan, or with a plan cooked for
    // other recipe text, it cooks again (and keeps the new plan).
    let same_as_served = |w: &StreamedWorld| {
        let again = w.source().load_column(column).unwrap();
        assert_eq!(again.len(), served.len());
        for ((a, x), (b, y)) in served.iter().zip(&again) {
            assert_eq!(a, b);
            assert!(x.same_cells(y));
        }
    };
    let file_path = world.file.path().to_path_buf();
    let reopened = StreamedWorld::open(&file_path).unwrap();
    assert!(reopened.generation.is_none(), "read, not cooked");
    same_as_served(&reopened);
    drop(reopened);
    let sql = |statement: &str| {
        rusqlite::Connection::open(&file_path)
            .unwrap()
            .execute(statement, [])
            .unwrap()
    };
    assert!(sql("DELETE FROM document WHERE name = 'cache/plan'") > 0);
    let recooked = StreamedWorld::open(&file_path).unwrap();
    assert!(recooked.generation.is_some(), "no plan: cooked");
    same_as_served(&recooked);
    drop(recooked);
    assert!(
        StreamedWorld::open(&file_path)
            .unwrap()
            .generation
            .is_none()
    );
    // The same recipe spelt with other whitespace is other text: stale.
    assert_eq!(
        sql("UPDATE meta SET value = value || ' ' WHERE key = 'recipe'"),
        1
    );
    let restale = StreamedWorld::open(&file_path).unwrap();
    assert!(restale.generation.is_some(), "stale plan: cooked");
    same_as_served(&restale);
    drop(restale);
    world.remove_recovery();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The mistakes a fresh user made, all in one file: no `"name"`, a material
/// rule whose height range is empty, two sea stages, rivers before the sea
/// and a value of 1e308. Every one is reported, in one message that names
/// the file, each with its stage and field; the number is printed short.
#[test]
fn every_recipe_mistake_is_reported_with_the_file_stage_and_field() {
    let dir = std::env::temp_dir().join(format!("strata-recipe-mistakes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join("mistakes.json");
    std::fs::write(
        &path,
        r#"{ "stages": [
            { "stage": "relief", "kind": "fbm", "amplitude_cells": 1e308, "wavelength_cells": 200 },
            { "stage": "rivers", "min_catchment_cells": 4000, "min_width_cells": 2,
              "max_width_cells": 8, "depth_cells": 2, "max_breach_cells": 15 },
            { "stage": "sea", "level_cells": 20 },
            { "stage": "sea", "level_cells": 30 },
            { "stage": "materials", "fallback": "rock", "rules": [
                { "material": "grass", "min_height_cells": 90, "max_height_cells": 40 } ] }
        ] }"#,
    )
    .expect("recipe");
    let message = match Recipe::load(&path) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    };
    for needle in [
        &format!("recipe {}:", path.display()),
        "5 mistakes",
        "a recipe needs a \"name\"",
        "stage 0 (relief): amplitude_cells = 1.000e308 is not allowed",
        "stage 4 (materials): min_height_cells 90 is above max_height_cells 40",
        "stage 3 (sea): a second sea stage (the first is stage 2)",
        "stage 1 (rivers): comes before the sea stage (stage 2)",
    ] {
        assert!(message.contains(needle), "{needle:?} not in {message}");
    }
    assert!(!message.contains("0000000000"), "{message}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every stage that runs long on a big plan looks at the cancel flag inside
/// its work: cancelled, each returns `Cancelled` (the cook drops the plan).
#[test]
fn every_long_stage_stops_when_cancelled() {
    use strata::progress::Cancelled;
    use strata::terrain::recipe::hydraulic_erosion::{RockAt, erode_hydraulic};
    use strata::terrain::recipe::hydrology::run_rivers;
    use strata::terrain::recipe::material_rules::{apply_materials, default_materials};
    use strata::terrain::recipe::slope_cap::cap_slopes;
    use strata::terrain::recipe::thermal_erosion::erode_thermal;
    use strata::terrain::storage::cell::Material;

    let recipe = Recipe::load(&recipes_dir().join("alpine.json")).unwrap();
    let (plan, _) = strata::terrain::recipe::cook::cook_plan(
        &recipe,
        &RecipeMaterials::default(),
        &settings(256),
        &Progress::new(),
    )
    .unwrap();
    let cancelled = Progress::new();
    cancelled.cancel();
    let hydraulic = recipe
        .stages
        .iter()
        .find_map(|s| match s {
            Stage::HydraulicErosion(h) => Some(h.clone()),
            _ => None,
        })
        .unwrap();
    let rivers = recipe
        .stages
        .iter()
        .find_map(|s| match s {
            Stage::Rivers(r) => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    let rock = |_: i32| Material::ROCK;
    let mut p = plan.clone();
    assert_eq!(
        erode_hydraulic(
            &mut p,
            &hydraulic,
            &RecipeMaterials::default(),
            1,
            RockAt::ByHeight(&rock),
            &cancelled
        ),
        Err(Cancelled)
    );
    assert_eq!(
        erode_thermal(&mut p, 1.0, 5, 0.5, &cancelled),
        Err(Cancelled)
    );
    assert_eq!(cap_slopes(&mut p, 0.5, None, &cancelled), Err(Cancelled));
    assert_eq!(
        run_rivers(&mut p, &rivers, Some(1.0), &cancelled).map(|_| ()),
        Err(Cancelled)
    );
    let mut q = plan.clone();
    assert_eq!(
        apply_materials(
            &mut q,
            &default_materials(),
            &RecipeMaterials::default(),
            1,
            &cancelled
        ),
        Err(Cancelled)
    );
    assert_eq!(q, plan, "cancelled materials leave the plan as it was");
    // Not cancelled, the same calls run to the end.
    let go = Progress::new();
    assert!(run_rivers(&mut plan.clone(), &rivers, Some(1.0), &go).is_ok());
    assert!(cap_slopes(&mut plan.clone(), 0.5, None, &go).unwrap() >= 2);
}

/// The window opens a streaming recipe world on its own thread: a file
/// whose plan is gone cooks again with its stages counted in the pending
/// world's progress, and Cancel stops the cook, keeps no plan and leaves
/// the file as it was.
#[test]
fn a_streamed_recipe_world_reopens_off_the_frame_thread_with_progress_and_cancel() {
    use strata::app::streamed_world::StreamedWorld;
    use strata::app::window_stream::{PendingKind, PendingWorld};
    let dir = std::env::temp_dir().join(format!("strata-recipe-pending-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(recipes_dir().join("alpine.json")).unwrap();
    let recipe = Recipe::from_json(&text).unwrap();
    let world = StreamedWorld::new_recipe(&recipe, &text, &settings(256), None, &dir).unwrap();
    let file_path = world.file.path().to_path_buf();
    let drop_plan = || {
        rusqlite::Connection::open(&file_path)
            .unwrap()
            .execute("DELETE FROM document WHERE name = 'cache/plan'", [])
            .unwrap()
    };
    let finish = |mut pending: PendingWorld| loop {
        match pending.try_finish() {
            Ok(result) => return result,
            Err(still) => pending = still,
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    assert!(drop_plan() > 0);
    let pending = PendingWorld::start_open(file_path.clone(), false).unwrap();
    assert_eq!(
        pending.kind(),
        &PendingKind::Open {
            path: file_path.clone(),
            recovering: false
        }
    );
    let progress = std::sync::Arc::clone(pending.progress());
    let opened = finish(pending).unwrap();
    assert!(opened.generation.is_some(), "no plan: cooked");
    assert_eq!(
        progress.stage(),
        "cooking: audits",
        "the cook counted its stages"
    );
    assert_eq!(progress.label(), "cooking: audits (8 of 8)");
    drop(opened);
    // Cancelled: an error, no plan kept (the next open cooks again).
    assert!(drop_plan() > 0);
    let pending = PendingWorld::start_open(file_path.clone(), false).unwrap();
    pending.progress().cancel();
    let progress = std::sync::Arc::clone(pending.progress());
    assert!(finish(pending).is_err());
    assert!(progress.is_cancelled());
    let again = StreamedWorld::open(&file_path).unwrap();
    assert!(
        again.generation.is_some(),
        "the cancelled open kept no plan"
    );
    drop(again);
    drop(world);
    let _ = std::fs::remove_dir_all(&dir);
}
