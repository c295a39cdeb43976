//! The world document through the edit session and scripts (spec §14):
//! every document action is one undo step whose undo and redo give the
//! earlier and later `world_hash` exactly, and a replayed script reports
//! its layers and re-derivations.

mod common;

use common::layer_record::rewrite_record;
use strata::script::{Script, ScriptRunner};
use strata::terrain::command::document_action::{DocumentAction, LayerRef};
use strata::terrain::command::edit_command::{CommandError, EditCommand};
use strata::terrain::document::base::{BaseColumns, BaseSource};
use strata::terrain::document::derive::derive_whole;
use strata::terrain::document::layers::DocumentError;
use strata::terrain::document::operation::OperationId;
use strata::terrain::document::operation_edit::OperationEdit;
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};
use strata::terrain::storage::grid::Grid;

/// A 256-cell generated world and a runner whose edits go to its document.
fn settings() -> GeneratorSettings {
    GeneratorSettings {
        seed: 5,
        size_cells: 256,
    }
}

/// `"path": [...]` through the surface points above `(x, z)` studs.
fn on_ground(points_xz: &[(f64, f64)]) -> String {
    let s = settings();
    let pts: Vec<String> = points_xz
        .iter()
        .map(|&(x, z)| {
            let h = strata::terrain::generation::generate::surface_height_cells(
                &s,
                (x / 4.0) as i32,
                (z / 4.0) as i32,
            )
            .unwrap();
            format!("[{x}, {}, {z}]", h * 4.0)
        })
        .collect();
    format!("\"path\": [{}]", pts.join(", "))
}

fn world() -> (Grid, ScriptRunner) {
    let settings = settings();
    let grid = generate_world(&settings).unwrap();
    let script = Script::parse(r#"{"strokes": []}"#, "empty").unwrap();
    let mut runner = ScriptRunner::for_script(&script, &grid, Some(settings.clone()));
    runner
        .session
        .set_base_source(BaseSource::Generator(settings));
    (grid, runner)
}

/// Runs every entry of `text` on `grid`.
fn run(grid: &mut Grid, runner: &mut ScriptRunner, text: &str) {
    let script = Script::parse(text, "t").unwrap();
    for s in &script.strokes {
        runner.run(grid, &s.action).unwrap();
    }
}

fn build_text() -> String {
    BUILD
        .replace("PATH1", &on_ground(&[(280.0, 300.0), (360.0, 330.0)]))
        .replace("PATH2", &on_ground(&[(600.0, 660.0), (700.0, 680.0)]))
}

const BUILD: &str = r#"{"strokes": [
    {"frame": 0, "tool": "layer", "action": "add", "layer": "Ground"},
    {"frame": 1, "tool": "stamp", "stamp": "mesa.png", "centre_xz": [300, 300],
     "radius_cells": 24, "height_scale_cells": 16, "mode": "raise_to"},
    {"frame": 2, "tool": "path", "mode": "road", "width": 12,
     "points": [[100, 700], [500, 640], [900, 700]]},
    {"frame": 3, "tool": "layer", "action": "add", "layer": "Sculpt"},
    {"frame": 4, "tool": "add", PATH1, "radius_cells": 5, "strength": 0.5},
    {"frame": 5, "tool": "smooth", PATH2, "radius_cells": 6, "strength": 0.5}
]}"#;

/// Stamps are read relative to the crate's stamp folder.
fn build(grid: &mut Grid, runner: &mut ScriptRunner) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/stamps");
    let script = Script::parse_in(&build_text(), "build", Some(dir)).unwrap();
    for s in &script.strokes {
        runner.run(grid, &s.action).unwrap();
    }
}

fn act(grid: &mut Grid, runner: &mut ScriptRunner, action: DocumentAction) {
    runner
        .run(
            grid,
            &strata::script::format::StrokeAction::Command(EditCommand::Document(Box::new(action))),
        )
        .unwrap();
}

fn whole_hash(runner: &ScriptRunner) -> u64 {
    let doc = &runner.session.document;
    derive_whole(doc.base().unwrap(), &doc.stack)
        .0
        .content_hash()
}

#[test]
fn every_document_action_undoes_and_redoes_to_the_exact_hash() {
    let (mut grid, mut runner) = world();
    build(&mut grid, &mut runner);
    assert_eq!(runner.session.document.stack.operation_count(), 4);
    assert_eq!(grid.content_hash(), whole_hash(&runner));
    let sculpt = LayerRef::Name("Sculpt".into());
    let ground = LayerRef::Name("Ground".into());
    let actions = [
        DocumentAction::SetVisible(sculpt.clone(), false),
        DocumentAction::Solo(ground.clone()),
        DocumentAction::MoveOperation(OperationId(1), glam::DVec2::new(200.0, 0.0)),
        DocumentAction::EditOperation(
            OperationId(2),
            OperationEdit {
                width_studs: Some(20.0),
                ..Default::default()
            },
        ),
        DocumentAction::EditOperation(
            OperationId(3),
            OperationEdit {
                strength: Some(1.0),
                ..Default::default()
            },
        ),
        DocumentAction::MoveLayer(sculpt.clone(), 0),
        DocumentAction::DuplicateLayer(ground.clone()),
        DocumentAction::MergeDown(sculpt.clone()),
        DocumentAction::DeleteOperation(OperationId(1)),
        DocumentAction::RemoveLayer(ground.clone()),
        DocumentAction::RenameLayer(sculpt.clone(), "Carving".into()),
        DocumentAction::SetLocked(sculpt.clone(), true),
        DocumentAction::Bake,
    ];
    for action in actions {
        // Fresh world per action, so each starts from the built document.
        let (mut grid, mut runner) = world();
        build(&mut grid, &mut runner);
        let before = grid.content_hash();
        let stack_before = runner.session.document.stack.clone();
        act(&mut grid, &mut runner, action.clone());
        let after = grid.content_hash();
        assert_eq!(after, whole_hash(&runner), "{action:?} derived whole");
        let stack_after = runner.session.document.stack.clone();
        runner.run(&mut grid, &undo()).unwrap();
        assert_eq!(grid.content_hash(), before, "{action:?} undone");
        assert_eq!(
            runner.session.document.stack, stack_before,
            "{action:?} undone"
        );
        assert_eq!(
            grid.content_hash(),
            whole_hash(&runner),
            "{action:?} undone whole"
        );
        runner.run(&mut grid, &redo()).unwrap();
        assert_eq!(grid.content_hash(), after, "{action:?} redone");
        assert_eq!(
            runner.session.document.stack, stack_after,
            "{action:?} redone"
        );
    }
}

fn undo() -> strata::script::format::StrokeAction {
    strata::script::format::StrokeAction::Command(EditCommand::Undo)
}

fn redo() -> strata::script::format::StrokeAction {
    strata::script::format::StrokeAction::Command(EditCommand::Redo)
}

#[test]
fn hiding_the_sculpt_layer_removes_the_sculpting_and_showing_brings_it_back() {
    let (mut grid, mut runner) = world();
    let bare = grid.content_hash();
    build(&mut grid, &mut runner);
    let built = grid.content_hash();
    run(
        &mut grid,
        &mut runner,
        r#"{"strokes": [{"frame": 0, "tool": "layer", "action": "hide", "layer": "Sculpt"}]}"#,
    );
    let hidden = grid.content_hash();
    assert_ne!(hidden, built);
    assert_ne!(hidden, bare);
    // Equal to a document that never had the sculpting.
    let (mut g2, mut r2) = world();
    build(&mut g2, &mut r2);
    let sculpt = r2.session.document.stack.layer_named("Sculpt").unwrap();
    let mut stack = r2.session.document.stack.clone();
    stack.remove_layer(sculpt).unwrap();
    let without = derive_whole(r2.session.document.base().unwrap(), &stack).0;
    assert_eq!(hidden, without.content_hash());
    run(
        &mut grid,
        &mut runner,
        r#"{"strokes": [{"frame": 0, "tool": "layer", "action": "show", "layer": "Sculpt"}]}"#,
    );
    assert_eq!(grid.content_hash(), built);
    let summary = runner.document_summary().unwrap();
    assert_eq!((summary.layers, summary.operations), (2, 4));
    assert_eq!(summary.rederives.len(), 2);
    assert!(summary.rederives[0].dirty_columns > 0);
}

#[test]
fn a_stroke_on_a_lower_layer_lands_under_the_layers_above() {
    let (mut grid, mut runner) = world();
    build(&mut grid, &mut runner);
    // Paint under the sculpting: the result is the document's, derived whole.
    let text = r#"{"strokes": [
            {"frame": 0, "tool": "layer", "action": "select", "layer": "Ground"},
            {"frame": 1, "tool": "subtract", PATH, "radius_cells": 6, "strength": 0.8}
        ]}"#
    .replace("PATH", &on_ground(&[(300.0, 310.0), (340.0, 320.0)]));
    run(&mut grid, &mut runner, &text);
    let ground = runner.session.document.stack.layer_named("Ground").unwrap();
    let layer = runner.session.document.stack.layer(ground).unwrap();
    assert_eq!(layer.operations.len(), 3);
    assert_eq!(grid.content_hash(), whole_hash(&runner));
}

#[test]
fn a_locked_layer_refuses_strokes_and_edits_and_changes_nothing() {
    let (mut grid, mut runner) = world();
    build(&mut grid, &mut runner);
    run(
        &mut grid,
        &mut runner,
        r#"{"strokes": [{"frame": 0, "tool": "layer", "action": "lock", "layer": "Sculpt"}]}"#,
    );
    let before = grid.content_hash();
    let text = r#"{"strokes": [{"frame": 0, "tool": "add", PATH, "radius_cells": 5}]}"#
        .replace("PATH", &on_ground(&[(280.0, 300.0)]));
    let script = Script::parse(&text, "t").unwrap();
    let e = runner
        .run(&mut grid, &script.strokes[0].action)
        .unwrap_err();
    assert!(e.to_string().contains("\"Sculpt\" is locked"), "{e}");
    let script = Script::parse(
        r#"{"strokes": [{"frame": 0, "tool": "operation", "action": "delete", "operation": 3}]}"#,
        "t",
    )
    .unwrap();
    let e = runner
        .run(&mut grid, &script.strokes[0].action)
        .unwrap_err();
    assert!(
        matches!(
            e,
            strata::script::RunError::Command(CommandError::Document(DocumentError::Locked(_)))
        ),
        "{e}"
    );
    assert_eq!(grid.content_hash(), before);
}

#[test]
fn bad_document_entries_are_refused_with_what_they_need() {
    for (text, needle) in [
        (
            r#"{"tool": "layer", "layer": "A"}"#,
            "layer needs an action",
        ),
        (
            r#"{"tool": "layer", "action": "hide"}"#,
            "needs the layer's name",
        ),
        (
            r#"{"tool": "layer", "action": "fly", "layer": "A"}"#,
            "unknown layer action",
        ),
        (
            r#"{"tool": "operation", "action": "move"}"#,
            "needs the operation's id",
        ),
        (
            r#"{"tool": "operation", "action": "move", "operation": 1}"#,
            "by_xz",
        ),
    ] {
        let text = format!(
            r#"{{"strokes": [{{"frame": 0, {}}}]}}"#,
            &text[1..text.len() - 1]
        );
        let e = Script::parse(&text, "t").unwrap_err().to_string();
        assert!(e.contains(needle), "{text}: {e}");
    }
    // Unknown layers and operations are refused when run, changing nothing.
    let (mut grid, mut runner) = world();
    build(&mut grid, &mut runner);
    let before = grid.content_hash();
    for (text, needle) in [
        (
            r#"{"strokes": [{"frame": 0, "tool": "layer", "action": "hide", "layer": "Nope"}]}"#,
            "no layer named \"Nope\"",
        ),
        (
            r#"{"strokes": [{"frame": 0, "tool": "operation", "action": "edit", "operation": 1,
                "width_studs": 9}]}"#,
            "a stamp has no width",
        ),
        (
            r#"{"strokes": [{"frame": 0, "tool": "operation", "action": "delete", "operation": 99}]}"#,
            "no operation 99",
        ),
    ] {
        let script = Script::parse(text, "t").unwrap();
        let e = runner
            .run(&mut grid, &script.strokes[0].action)
            .unwrap_err();
        assert!(e.to_string().contains(needle), "{e}");
    }
    assert_eq!(grid.content_hash(), before);
    assert_eq!(runner.session.document.stack.operation_count(), 4);
    // A hidden active layer refuses new edits (they would vanish at once).
    run(
        &mut grid,
        &mut runner,
        r#"{"strokes": [{"frame": 0, "tool": "layer", "action": "hide", "layer": "Sculpt"}]}"#,
    );
    let hidden = grid.content_hash();
    let script = Script::parse(
        r#"{"strokes": [{"frame": 0, "tool": "fill", "region_min": [10, 60, 10],
            "region_max": [20, 70, 20], "material": "snow"}]}"#,
        "t",
    )
    .unwrap();
    let e = runner
        .run(&mut grid, &script.strokes[0].action)
        .unwrap_err();
    assert!(e.to_string().contains("\"Sculpt\" is hidden"), "{e}");
    assert_eq!(grid.content_hash(), hidden);
    // Names address layers: a second "Ground" (added or renamed to) is
    // refused, so `hide Ground` can never pick the wrong one.
    for text in [
        r#"{"strokes": [{"frame": 0, "tool": "layer", "action": "add", "layer": "Ground"}]}"#,
        r#"{"strokes": [{"frame": 0, "tool": "layer", "action": "rename", "layer": "Sculpt",
            "name": "Ground"}]}"#,
    ] {
        let script = Script::parse(text, "t").unwrap();
        let e = runner
            .run(&mut grid, &script.strokes[0].action)
            .unwrap_err();
        assert!(
            e.to_string().contains("already a layer named \"Ground\""),
            "{e}"
        );
    }
    assert_eq!(runner.session.document.stack.layers().len(), 2);
    // A duplicate gets a free name.
    run(
        &mut grid,
        &mut runner,
        r#"{"strokes": [
            {"frame": 0, "tool": "layer", "action": "duplicate", "layer": "Ground"},
            {"frame": 1, "tool": "layer", "action": "duplicate", "layer": "Ground"}
        ]}"#,
    );
    let names: Vec<String> = runner
        .session
        .document
        .stack
        .layers()
        .iter()
        .map(|l| l.name.clone())
        .collect();
    assert_eq!(names, ["Ground", "Ground copy 2", "Ground copy", "Sculpt"]);
    // A locked layer also refuses a bake, which would remove it.
    let with_copies = grid.content_hash();
    run(
        &mut grid,
        &mut runner,
        r#"{"strokes": [{"frame": 0, "tool": "layer", "action": "lock", "layer": "Ground"}]}"#,
    );
    let script = Script::parse(
        r#"{"strokes": [{"frame": 0, "tool": "layer", "action": "bake"}]}"#,
        "t",
    )
    .unwrap();
    let e = runner
        .run(&mut grid, &script.strokes[0].action)
        .unwrap_err();
    assert!(e.to_string().contains("\"Ground\" is locked"), "{e}");
    assert_eq!(grid.content_hash(), with_copies);
    assert_eq!(runner.session.document.stack.layers().len(), 4);
}

#[test]
fn changing_the_base_seed_and_back_gives_the_same_hash_and_undo_restores_it() {
    let (mut grid, mut runner) = world();
    build(&mut grid, &mut runner);
    let built = grid.content_hash();
    let seed = |s: u64| {
        Script::parse(
            &format!(r#"{{"strokes": [{{"frame": 0, "tool": "base", "seed": {s}}}]}}"#),
            "t",
        )
        .unwrap()
        .strokes[0]
            .action
            .clone()
    };
    runner.run(&mut grid, &seed(77)).unwrap();
    let reseeded = grid.content_hash();
    assert_ne!(reseeded, built);
    // The layers were re-applied on the new ground: equal to a whole
    // derivation over a base made with seed 77.
    let base77 = generate_world(&GeneratorSettings {
        seed: 77,
        ..settings()
    })
    .unwrap();
    assert_eq!(
        reseeded,
        derive_whole(&BaseColumns::kept(&base77), &runner.session.document.stack)
            .0
            .content_hash()
    );
    assert_eq!(runner.session.generator.as_ref().unwrap().seed, 77);
    runner.run(&mut grid, &seed(5)).unwrap();
    assert_eq!(grid.content_hash(), built);
    runner.run(&mut grid, &undo()).unwrap();
    assert_eq!(grid.content_hash(), reseeded);
    assert_eq!(
        runner.session.document.base_source().unwrap().seed(),
        Some(77)
    );
    runner.run(&mut grid, &undo()).unwrap();
    assert_eq!(grid.content_hash(), built);
    assert_eq!(
        runner.session.document.base_source().unwrap().seed(),
        Some(5)
    );
    // Moving a stamp after the undo re-derives over the seed-5 base.
    act(
        &mut grid,
        &mut runner,
        DocumentAction::MoveOperation(OperationId(1), glam::DVec2::new(0.0, 200.0)),
    );
    assert_eq!(grid.content_hash(), whole_hash(&runner));
}

#[test]
fn a_cancelled_seed_change_changes_nothing_and_a_stack_edited_meanwhile_is_derived_again() {
    use strata::progress::Progress;
    let (mut grid, mut runner) = world();
    build(&mut grid, &mut runner);
    let built = grid.content_hash();
    let job = runner.session.base_seed_job(77).unwrap();
    let progress = Progress::new();
    progress.cancel();
    assert!(matches!(
        job.prepare(&progress),
        Err(strata::terrain::generation::generate::GenerateError::Cancelled)
    ));
    assert_eq!(grid.content_hash(), built);
    assert_eq!(
        runner.session.document.base_source().unwrap().seed(),
        Some(5)
    );
    // The base is made in the background while the artist hides a layer:
    // installing it derives the current stack, not the one it started with.
    let prepared = runner
        .session
        .base_seed_job(77)
        .unwrap()
        .prepare(&Progress::new())
        .unwrap();
    act(
        &mut grid,
        &mut runner,
        DocumentAction::SetVisible(LayerRef::Name("Sculpt".into()), false),
    );
    assert!(runner.session.finish_base_seed(&mut grid, prepared));
    assert_eq!(grid.content_hash(), whole_hash(&runner));
    let base77 = generate_world(&GeneratorSettings {
        seed: 77,
        ..settings()
    })
    .unwrap();
    assert_eq!(
        grid.content_hash(),
        derive_whole(&BaseColumns::kept(&base77), &runner.session.document.stack)
            .0
            .content_hash()
    );
    // A base of plain cells has no seed.
    let flat = strata::terrain::generation::generate::flat_world(64, 8).unwrap();
    let mut session = strata::terrain::command::edit_command::EditSession::new(1 << 20, None);
    session.enable_document(&flat);
    assert!(session.base_seed_job(3).is_err());
}

#[test]
fn hostile_moves_and_edits_are_refused_without_changing_anything() {
    let (mut grid, mut runner) = world();
    build(&mut grid, &mut runner);
    run(
        &mut grid,
        &mut runner,
        r#"{"strokes": [{"frame": 0, "tool": "fill", "region_min": [10, 60, 10],
            "region_max": [20, 70, 20], "material": "snow"}]}"#,
    );
    let before = grid.content_hash();
    let stack = runner.session.document.stack.clone();
    for (op, by) in [
        (5, [1.0e12, 0.0]),
        (5, [-8.6e9, 8.6e9]),
        (1, [1.0e12, -1.0e12]),
        (2, [5.0e9, 0.0]),
        (3, [1.0e15, 1.0e15]),
    ] {
        let text = format!(
            r#"{{"strokes": [{{"frame": 0, "tool": "operation", "action": "move",
                "operation": {op}, "by_xz": [{}, {}]}}]}}"#,
            by[0], by[1]
        );
        let script = Script::parse(&text, "t").unwrap();
        let e = runner
            .run(&mut grid, &script.strokes[0].action)
            .unwrap_err();
        assert!(e.to_string().contains("operation"), "{op} {by:?}: {e}");
        assert_eq!(grid.content_hash(), before, "{op} {by:?}");
        assert_eq!(runner.session.document.stack, stack, "{op} {by:?}");
    }
    for edit in [
        r#""radius_cells": 1e9"#,
        r#""rotation_deg": 1e300"#,
        r#""height_scale_cells": -1"#,
    ] {
        let text = format!(
            r#"{{"strokes": [{{"frame": 0, "tool": "operation", "action": "edit",
                "operation": 1, {edit}}}]}}"#
        );
        let script = Script::parse(&text, "t").unwrap();
        assert!(
            runner.run(&mut grid, &script.strokes[0].action).is_err(),
            "{edit}"
        );
        assert_eq!(grid.content_hash(), before, "{edit}");
    }
}

// ---------------------------------------------------------------------------
// The document in world files.

use strata::io::world::world_file::{LoadOptions, SaveBatch, WorldFile, WorldMeta};
use strata::progress::Progress;

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-layers-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Saves `grid` with the runner's document as a new file at `path`.
fn save(path: &std::path::Path, grid: &Grid, runner: &ScriptRunner) {
    let batch = SaveBatch::full(grid).with_document(runner.session.document_snapshot());
    WorldFile::save_full_batch(path, batch, &WorldMeta::default(), &Progress::new()).unwrap();
}

/// Opens `path` into a runner whose edits go to the document it holds.
fn reopen(path: &std::path::Path) -> (Grid, ScriptRunner, usize) {
    let (_, grid, _, report) = WorldFile::open(path, LoadOptions::default()).unwrap();
    let opened = report.document.expect("the file holds the layers");
    let script = Script::parse(r#"{"strokes": []}"#, "empty").unwrap();
    let mut runner = ScriptRunner::for_script(&script, &grid, Some(settings()));
    runner.session.restore_document(opened.document);
    (grid, runner, opened.stale_columns)
}

#[test]
fn the_layers_are_saved_with_the_world_and_reopen_editable() {
    let (mut grid, mut runner) = world();
    build(&mut grid, &mut runner);
    let dir = scratch("reopen");
    let path = dir.join("layers.strata");
    save(&path, &grid, &runner);
    let (mut g2, mut r2, stale) = reopen(&path);
    assert_eq!(stale, 0, "nothing changed while the file was closed");
    assert_eq!(g2.content_hash(), grid.content_hash());
    let (before, after) = (&runner.session.document, &r2.session.document);
    assert_eq!(after.stack, before.stack);
    assert_eq!(after.base_source(), before.base_source());
    // Every operation stays editable: the same actions give the same cells.
    let mesa = OperationId(1);
    for action in [
        DocumentAction::MoveOperation(mesa, glam::DVec2::new(200.0, 0.0)),
        DocumentAction::SetVisible(LayerRef::Name("Sculpt".into()), false),
        DocumentAction::SetBaseSeed(77),
    ] {
        act(&mut grid, &mut runner, action.clone());
        act(&mut g2, &mut r2, action);
        assert_eq!(g2.content_hash(), grid.content_hash());
        assert_eq!(g2.content_hash(), whole_hash(&r2));
    }
    // Saved again over itself (incrementally) and reopened: still equal.
    let (mut file, _, _, _) = WorldFile::open(&path, LoadOptions::default()).unwrap();
    let batch = file
        .prepare_save(&g2)
        .with_document(r2.session.document_snapshot());
    file.write_batch(batch, &WorldMeta::default()).unwrap();
    drop(file);
    let (g3, r3, stale) = reopen(&path);
    assert_eq!(stale, 0);
    assert_eq!(g3.content_hash(), grid.content_hash());
    assert_eq!(r3.session.document.stack, runner.session.document.stack);
    assert_eq!(
        r3.session.document.base_source().and_then(BaseSource::seed),
        Some(77)
    );
}

/// The format-1 fixture: a 128-cell world of seed 11 saved by the build
/// before layers were saved.
fn format_1_fixture() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/worlds/format1-generated-128.strata")
}

#[test]
fn an_earlier_format_world_opens_saves_and_reopens_with_the_same_hash() {
    let dir = scratch("format1");
    let copy = dir.join("old.strata");
    std::fs::copy(format_1_fixture(), &copy).unwrap();
    let (mut file, mut grid, meta, report) =
        WorldFile::open(&copy, LoadOptions::default()).unwrap();
    assert!(report.document.is_none(), "format 1 has no layers");
    let old_hash = grid.content_hash();
    assert_eq!(
        old_hash, 0x4f48_cd6f_ce46_b9f2,
        "the hash the old build stored"
    );
    assert_eq!(
        generate_world(&GeneratorSettings {
            seed: 11,
            size_cells: 128
        })
        .unwrap()
        .content_hash(),
        old_hash
    );
    // Saved unchanged as a new (format 2) file: the same hash.
    let resaved = dir.join("new.strata");
    WorldFile::save_full(&resaved, &grid, &meta).unwrap();
    assert_eq!(
        strata::io::world::world_file::load(&resaved, LoadOptions::default())
            .unwrap()
            .0
            .content_hash(),
        old_hash
    );
    // Edited with layers and saved into the old file itself (incrementally):
    // the file gains the layer tables and reopens with the edit editable.
    let script = Script::parse(r#"{"strokes": []}"#, "empty").unwrap();
    let mut runner = ScriptRunner::for_script(&script, &grid, None);
    run(
        &mut grid,
        &mut runner,
        r#"{"strokes": [
            {"frame": 0, "tool": "fill", "region_min": [10, 0, 10],
             "region_max": [30, 40, 30], "material": "sand"}
        ]}"#,
    );
    let edited = grid.content_hash();
    let batch = file
        .prepare_save(&grid)
        .with_document(runner.session.document_snapshot());
    let saved = file.write_batch(batch, &meta).unwrap();
    assert!(!saved.full, "only the changed chunks are written");
    drop(file);
    let (_, reopened, stored_meta, report) =
        WorldFile::open(&copy, LoadOptions::default()).unwrap();
    assert_eq!(reopened.content_hash(), edited);
    assert_eq!(stored_meta.generator, meta.generator);
    let document = report.document.unwrap().document;
    assert_eq!(document.stack, runner.session.document.stack);
    // Without the fill, the stored base derives the old cells.
    let mut without = document.stack.clone();
    without.delete_operation(OperationId(1)).unwrap();
    let derived = derive_whole(&document.base.cells, &without).0;
    assert_eq!(derived.content_hash(), old_hash);
}

#[test]
fn a_stale_cached_column_is_rebuilt_on_reopening() {
    let (mut grid, mut runner) = world();
    build(&mut grid, &mut runner);
    let dir = scratch("stale");
    let path = dir.join("stale.strata");
    save(&path, &grid, &runner);
    // The mesa moves 50 cells while the file is closed.
    rewrite_record(&path, |doc| {
        let placement = &mut doc["layers"][0]["operations"][0]["does"]["placement"];
        let x = placement["centre_xz_cells"][0].as_f64().unwrap();
        placement["centre_xz_cells"][0] = serde_json::json!(x + 50.0);
    });
    let (g2, r2, stale) = reopen(&path);
    assert!(stale > 0, "the mesa's old and new columns are stale");
    assert_ne!(g2.content_hash(), grid.content_hash());
    // The rebuilt cells are exactly the document's.
    assert_eq!(g2.content_hash(), whole_hash(&r2));
    // And equal to moving it in the editor.
    act(
        &mut grid,
        &mut runner,
        DocumentAction::MoveOperation(OperationId(1), glam::DVec2::new(200.0, 0.0)),
    );
    assert_eq!(g2.content_hash(), grid.content_hash());
    // A layer hidden in the file: its columns are stale too.
    rewrite_record(&path, |doc| {
        doc["layers"][1]["visible"] = serde_json::json!(false)
    });
    let (g3, r3, stale) = reopen(&path);
    assert!(stale > 0);
    assert_eq!(g3.content_hash(), whole_hash(&r3));
}

/// A change to a layer record.
type RecordChange = Box<dyn Fn(&mut serde_json::Value)>;

#[test]
fn a_damaged_layer_record_is_refused_with_what_is_wrong() {
    let (mut grid, mut runner) = world();
    build(&mut grid, &mut runner);
    let dir = scratch("damaged");
    let cases: [(&str, RecordChange, &str); 5] = [
        (
            "unknown material",
            Box::new(|d| {
                d["layers"][0]["operations"][1]["does"]["spec"]["material"] =
                    serde_json::json!("Cheese")
            }),
            "unknown material",
        ),
        (
            "bad radius",
            Box::new(|d| {
                d["layers"][0]["operations"][0]["does"]["placement"]["radius_cells"] =
                    serde_json::json!(-3.0)
            }),
            "operation 1",
        ),
        (
            "duplicate id",
            Box::new(|d| d["layers"][1]["operations"][0]["id"] = serde_json::json!(1)),
            "used twice",
        ),
        (
            "missing blob",
            Box::new(|d| {
                d["layers"][0]["operations"][0]["does"]["stamp"] =
                    serde_json::json!("0000000000000000")
            }),
            "missing",
        ),
        (
            "newer record",
            Box::new(|d| d["version"] = serde_json::json!(9)),
            "version 9",
        ),
    ];
    for (name, change, expect) in cases {
        let path = dir.join(format!("{}.strata", name.replace(' ', "-")));
        save(&path, &grid, &runner);
        rewrite_record(&path, change);
        let err = WorldFile::open(&path, LoadOptions::default()).unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(
                err,
                strata::io::world::world_file::WorldFileError::BadDocument { .. }
            ) && text.contains(expect),
            "{name}: {text}"
        );
    }
}

#[test]
fn a_live_drag_shows_each_position_and_ends_as_one_undo_step() {
    let (mut grid, mut runner) = world();
    build(&mut grid, &mut runner);
    let built = grid.content_hash();
    let steps = runner.session.history.undo_len();
    let mesa = OperationId(1);
    // The reference: the mesa moved 200 studs east in one action.
    let (mut g_ref, mut r_ref) = world();
    build(&mut g_ref, &mut r_ref);
    act(
        &mut g_ref,
        &mut r_ref,
        DocumentAction::MoveOperation(mesa, glam::DVec2::new(200.0, 0.0)),
    );
    let session = &mut runner.session;
    session.begin_operation_drag(&mut grid, mesa).unwrap();
    let original = session.operation_drag().unwrap().original().clone();
    // Through three positions; each is shown whole when it is set.
    for x in [40.0, 120.0, 200.0] {
        session
            .drag_operation_to(&mut grid, original.translated(glam::DVec2::new(x, 0.0)))
            .unwrap();
        let doc = &session.document;
        assert_eq!(
            grid.content_hash(),
            derive_whole(doc.base().unwrap(), &doc.stack)
                .0
                .content_hash()
        );
    }
    // A position off the lattice is refused; the last good one stays.
    let shown = grid.content_hash();
    assert!(
        session
            .drag_operation_to(&mut grid, original.translated(glam::DVec2::new(1e12, 0.0)))
            .is_err()
    );
    assert_eq!(grid.content_hash(), shown);
    assert!(session.finish_operation_drag(&grid));
    assert_eq!(grid.content_hash(), g_ref.content_hash());
    assert_eq!(session.history.undo_len(), steps + 1, "one undo step");
    runner.run(&mut grid, &undo()).unwrap();
    assert_eq!(grid.content_hash(), built);
    assert_eq!(
        runner.session.document.stack,
        {
            let (mut g, mut r) = world();
            build(&mut g, &mut r);
            r.session.document.stack
        },
        "undo restores the stack too"
    );
    // A cancelled drag leaves cells, stack and history as they were.
    let session = &mut runner.session;
    session.begin_operation_drag(&mut grid, mesa).unwrap();
    session
        .drag_operation_to(&mut grid, original.translated(glam::DVec2::new(80.0, 0.0)))
        .unwrap();
    assert_ne!(grid.content_hash(), built);
    session.cancel_operation_drag(&mut grid);
    assert_eq!(grid.content_hash(), built);
    assert_eq!(session.history.undo_len(), steps);
    // A locked layer's operation cannot be dragged.
    let ground = session.document.stack.layer_named("Ground").unwrap();
    session.document.stack.set_locked(ground, true).unwrap();
    assert!(session.begin_operation_drag(&mut grid, mesa).is_err());
}

#[test]
fn load_the_rest_opens_the_cells_without_layers_it_cannot_read() {
    let (mut grid, mut runner) = world();
    build(&mut grid, &mut runner);
    let dir = scratch("rest");
    let path = dir.join("rest.strata");
    save(&path, &grid, &runner);
    rewrite_record(&path, |d| d["version"] = serde_json::json!(9));
    let err = WorldFile::open(&path, LoadOptions::default()).unwrap_err();
    assert_eq!(
        err.damaged_chunks_path(),
        Some(path.as_path()),
        "the editor offers Load the rest"
    );
    let rest = LoadOptions {
        skip_bad_chunks: true,
        ..LoadOptions::default()
    };
    let (_, cells, _, report) = WorldFile::open(&path, rest).unwrap();
    assert_eq!(cells.content_hash(), grid.content_hash());
    assert!(report.document.is_none());
    assert!(
        report
            .document_dropped
            .as_deref()
            .is_some_and(|r| r.contains("version 9")),
        "{:?}",
        report.document_dropped
    );
}

#[test]
fn a_record_written_without_its_size_still_opens() {
    let (mut grid, mut runner) = world();
    build(&mut grid, &mut runner);
    let dir = scratch("unsized");
    let path = dir.join("unsized.strata");
    save(&path, &grid, &runner);
    // Re-encoded as a stream (the zstd tool from a pipe writes no size).
    let conn = rusqlite::Connection::open(&path).unwrap();
    let frame: Vec<u8> = conn
        .query_row(
            "SELECT data FROM document WHERE name = 'record' AND part = 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let json = zstd::decode_all(&frame[..]).unwrap();
    let mut encoder = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    encoder.include_contentsize(false).unwrap();
    std::io::Write::write_all(&mut encoder, &json).unwrap();
    let streamed = encoder.finish().unwrap();
    assert!(
        matches!(zstd::zstd_safe::get_frame_content_size(&streamed), Ok(None)),
        "the frame declares no size"
    );
    conn.execute(
        "UPDATE document SET data = ?1 WHERE name = 'record' AND part = 0",
        [streamed],
    )
    .unwrap();
    drop(conn);
    let (g2, r2, stale) = reopen(&path);
    assert_eq!(stale, 0);
    assert_eq!(g2.content_hash(), grid.content_hash());
    assert_eq!(r2.session.document.stack, runner.session.document.stack);
}

#[test]
fn every_bundled_recipe_survives_the_layer_record() {
    // A recipe base is saved as the recipe itself: it must read back equal.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/recipes");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let recipe = strata::terrain::recipe::stages::Recipe::load(&path).unwrap();
        let text = serde_json::to_string(&recipe).unwrap();
        let back: strata::terrain::recipe::stages::Recipe = serde_json::from_str(&text).unwrap();
        assert_eq!(back, recipe, "{}", path.display());
        back.validate().unwrap();
        seen += 1;
    }
    assert!(seen >= 5, "{seen} recipes");
}

#[test]
fn a_base_or_record_changed_behind_the_layers_back_is_refused() {
    let (mut grid, mut runner) = world();
    build(&mut grid, &mut runner);
    let dir = scratch("base-check");
    let open_err = |path: &std::path::Path| {
        let e = WorldFile::open(path, LoadOptions::default()).unwrap_err();
        assert!(
            matches!(
                e,
                strata::io::world::world_file::WorldFileError::BadDocument { .. }
            ),
            "{e}"
        );
        e.to_string()
    };
    // Base chunks removed: re-deriving would build on the wrong ground.
    let gone = dir.join("gone.strata");
    save(&gone, &grid, &runner);
    let conn = rusqlite::Connection::open(&gone).unwrap();
    assert!(
        conn.execute("DELETE FROM base_chunks WHERE x = 1 AND z = 5", [])
            .unwrap()
            > 0
    );
    drop(conn);
    assert!(open_err(&gone).contains("base check"));
    // The base seed edited in the record: the stored base is another one's.
    let seed = dir.join("seed.strata");
    save(&seed, &grid, &runner);
    rewrite_record(&seed, |d| {
        d["base"]["settings"]["seed"] = serde_json::json!(6)
    });
    assert!(open_err(&seed).contains("base check"));
    // The record removed while the rest of the layers stay.
    let lost = dir.join("lost.strata");
    save(&lost, &grid, &runner);
    let conn = rusqlite::Connection::open(&lost).unwrap();
    conn.execute("DELETE FROM document WHERE name = 'record'", [])
        .unwrap();
    drop(conn);
    assert!(open_err(&lost).contains("record is missing"));
}

/// The same fill on two layers: the second changes no cell when it is made,
/// but it is an operation all the same, so hiding the first keeps the snow.
#[test]
fn an_operation_that_changes_no_cell_is_still_recorded() {
    let (mut grid, mut runner) = world();
    let fill = |frame: u32| {
        format!(
            r#"{{"frame": {frame}, "tool": "fill", "region_min": [100, 60, 100],
            "region_max": [108, 68, 108], "material": "snow"}}"#
        )
    };
    run(
        &mut grid,
        &mut runner,
        &format!(
            r#"{{"strokes": [{{"frame": 0, "tool": "layer", "action": "add", "layer": "A"}},
            {}, {{"frame": 2, "tool": "layer", "action": "add", "layer": "B"}}, {}]}}"#,
            fill(1),
            fill(3)
        ),
    );
    let stack = &runner.session.document.stack;
    let counts: Vec<usize> = stack.layers().iter().map(|l| l.operations.len()).collect();
    assert_eq!(counts, [1, 1], "one fill on each layer");
    let with_both = grid.content_hash();
    act(
        &mut grid,
        &mut runner,
        DocumentAction::SetVisible(LayerRef::Name("A".into()), false),
    );
    assert_eq!(grid.content_hash(), with_both, "B's fill still covers it");
    assert_eq!(grid.content_hash(), whole_hash(&runner));
}

/// A stamp moved off the ground is skipped and named; undoing the move
/// forgets that, since the stamp is back on the ground.
#[test]
fn undo_forgets_what_the_undone_rederivation_skipped() {
    let (mut grid, mut runner) = world();
    build(&mut grid, &mut runner);
    act(
        &mut grid,
        &mut runner,
        DocumentAction::MoveOperation(OperationId(1), glam::DVec2::new(-5000.0, 0.0)),
    );
    let failed: Vec<u32> = runner
        .session
        .document
        .last_failures
        .iter()
        .map(|(id, _)| id.0)
        .collect();
    assert_eq!(failed, [1], "off the world: no ground under the stamp");
    runner.run(&mut grid, &undo()).unwrap();
    assert!(runner.session.document.last_failures.is_empty());
    assert_eq!(grid.content_hash(), whole_hash(&runner));
}
