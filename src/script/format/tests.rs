//! The script format's tests: parsing every tool, the errors bad entries
//! get, the walk, and the limits on work, replay time and file size.

use glam::{DVec3, IVec3};

use crate::terrain::command::edit_command::EditCommand;
use crate::terrain::editing::brush::{BrushMode, BrushShape, Falloff, FlattenLimit, FlattenPlane};
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::CellBox;

use super::{
    MAX_PATH_POINTS, MAX_SCRIPT_FILE_BYTES, MAX_SCRIPT_WORK_CELLS, Script, ScriptError,
    SettingError, StrokeAction, StrokeCentre, WalkStep,
};

#[test]
fn parses_both_centre_forms_and_sorts_by_frame() {
    let s = Script::parse(
        r#"{"strokes": [
            {"frame": 3, "tool": "Subtract", "centre_xz": [1, 2], "radius_cells": 4},
            {"frame": 1, "tool": "add", "centre": [1, 2, 3], "radius_cells": 6,
             "strength": 0.25, "material": "sand"}
        ]}"#,
        "t",
    )
    .unwrap();
    assert_eq!(s.frame_rate_hz, 60.0);
    assert_eq!(s.strokes[0].frame, 1);
    assert_eq!(
        s.strokes[0].action.brush().unwrap().brush.material,
        Material::SAND
    );
    assert_eq!(
        s.strokes[0].action.brush().unwrap().path[0],
        StrokeCentre::World(DVec3::new(1.0, 2.0, 3.0))
    );
    assert_eq!(
        s.strokes[1].action.brush().unwrap().path[0],
        StrokeCentre::OnSurface { x: 1.0, z: 2.0 }
    );
    assert_eq!(
        s.strokes[1].action.brush().unwrap().brush.mode,
        BrushMode::Subtract
    );
    assert_eq!(s.last_frame(), 3);
}

#[test]
fn bad_strokes_name_their_index_and_problem() {
    let err = |text: &str| Script::parse(text, "bad.json").unwrap_err().to_string();
    assert!(
        err(
            r#"{"strokes": [{"frame": 0, "tool": "smear", "centre": [0,0,0], "radius_cells": 4}]}"#
        )
        .contains("stroke 0: unknown tool")
    );
    assert!(
        err(r#"{"strokes": [{"frame": 0, "tool": "add", "radius_cells": 4}]}"#)
            .contains("missing centre")
    );
    assert!(
        err(
            r#"{"strokes": [{"frame": 0, "tool": "add", "centre": [0,0,0], "radius_cells": 400}]}"#
        )
        .contains("radius")
    );
    assert!(err(r#"{"strokes": [{"frame": 0, "tool": "add", "centre": [0,0,0], "radius_cells": 4, "material": "water"}]}"#)
        .contains("not a solid material"));
    assert!(err(r#"{"strokes": [{"frame": 0, "tool": "add", "centre": [0,0,0], "radius_cells": 4, "colour": 1}]}"#)
        .contains("unknown field"));
    assert!(err("{not json").contains("bad.json"));
    assert!(err(r#"{"frame_rate_hz": 0, "strokes": []}"#).contains("frame_rate_hz"));
}

#[test]
fn parses_every_tool_with_its_settings() {
    let s = Script::parse(
        r#"{"history_budget_mib": 64, "strokes": [
            {"frame": 0, "tool": "grow", "centre": [0, 0, 0], "radius_cells": 4,
             "shape": "cube", "falloff": "smooth"},
            {"frame": 0, "tool": "erode", "path": [[0, 0, 0], [40, 0, 0]], "spacing": 0.5,
             "radius_cells": 4, "plane_lock": true},
            {"frame": 1, "tool": "smooth", "centre_xz": [1, 2], "radius_cells": 3},
            {"frame": 1, "tool": "flatten", "path_xz": [[1, 2], [3, 4]], "radius_cells": 3,
             "flatten_limit": "raise_only"},
            {"frame": 1, "tool": "flatten", "centre": [1, 2, 3], "radius_cells": 3,
             "flatten_height": 40},
            {"frame": 2, "tool": "paint", "centre": [1, 2, 3], "radius_cells": 3,
             "material": "snow", "shape": "cylinder", "falloff": "linear"},
            {"frame": 2, "tool": "replace", "centre": [1, 2, 3], "radius_cells": 3,
             "replace_from": "rock", "material": "slate"},
            {"frame": 3, "tool": "fill", "region_min": [0, 0, 0], "region_max": [4, 4, 4],
             "material": "water", "occupancy": 200},
            {"frame": 3, "tool": "clear", "region_min": [0, 0, 0], "region_max": [4, 4, 4],
             "ignore_water": true},
            {"frame": 3, "tool": "copy", "region_min": [0, 0, 0], "region_max": [4, 4, 4]},
            {"frame": 3, "tool": "paste", "at": [10, 0, 0], "quarter_turns": 3},
            {"frame": 3, "tool": "generate", "region_min": [0, 0, 0], "region_max": [4, 4, 4]},
            {"frame": 4, "tool": "undo"},
            {"frame": 4, "tool": "redo"}
        ]}"#,
        "t",
    )
    .unwrap();
    assert_eq!(s.history_budget_bytes, 64 << 20);
    assert_eq!(s.strokes.len(), 14);
    let b0 = s.strokes[0].action.brush().unwrap();
    assert_eq!(b0.brush.mode, BrushMode::Grow);
    assert_eq!(b0.options.shape, BrushShape::Cube);
    assert_eq!(b0.options.falloff, Falloff::Smooth);
    let b1 = s.strokes[1].action.brush().unwrap();
    assert_eq!(b1.path.len(), 2);
    assert!(b1.plane_lock);
    assert_eq!(b1.spacing_fraction, 0.5);
    let flat = s.strokes[3].action.brush().unwrap();
    assert!(flat.flatten_from_pick);
    assert_eq!(flat.options.flatten_limit, FlattenLimit::RaiseOnly);
    assert_eq!(
        s.strokes[4].action.brush().unwrap().options.flatten_plane,
        Some(FlattenPlane::Height { height_world: 40.0 })
    );
    let replace = s.strokes[6].action.brush().unwrap();
    assert_eq!(replace.options.replace_from, Material::ROCK);
    assert_eq!(replace.brush.material, Material::SLATE);
    assert_eq!(
        s.strokes[7].action,
        StrokeAction::Command(EditCommand::Fill {
            region: CellBox::new(IVec3::ZERO, IVec3::splat(4)),
            material: Material::WATER,
            occupancy: 200,
            ignore_water: false
        })
    );
    assert_eq!(
        s.strokes[10].action,
        StrokeAction::Command(EditCommand::Paste {
            at: IVec3::new(10, 0, 0),
            quarter_turns: 3
        })
    );
    assert_eq!(
        s.strokes[12].action,
        StrokeAction::Command(EditCommand::Undo)
    );
    assert_eq!(
        s.strokes[13].action,
        StrokeAction::Command(EditCommand::Redo)
    );
    assert!(s.needs_surface());
}

#[test]
fn bad_tool_values_are_rejected_with_the_stroke_index() {
    let err = |stroke: &str| {
        Script::parse(&format!(r#"{{"strokes": [{stroke}]}}"#), "bad.json")
            .unwrap_err()
            .to_string()
    };
    let e = err(r#"{"frame": 0, "tool": "smooth", "centre": [0,0,0], "radius_cells": 0}"#);
    assert!(e.contains("stroke 0") && e.contains("radius"), "{e}");
    assert!(
        err(r#"{"frame": 0, "tool": "paint", "centre": [0,0,0], "radius_cells": 65}"#)
            .contains("radius")
    );
    assert!(err(r#"{"frame": 0, "tool": "paint", "centre": [0,0,0], "radius_cells": 4, "material": "plasma"}"#)
        .contains("not a solid material"));
    assert!(err(r#"{"frame": 0, "tool": "grow", "centre": [0,0,0], "radius_cells": 4, "shape": "torus"}"#)
        .contains("unknown shape"));
    assert!(
        err(r#"{"frame": 0, "tool": "replace", "centre": [0,0,0], "radius_cells": 4}"#)
            .contains("replace_from")
    );
    assert!(err(r#"{"frame": 0, "tool": "add", "centre": [0,0,0], "radius_cells": 4, "flatten_height": 3}"#)
        .contains("only used by flatten"));
    assert!(err(r#"{"frame": 0, "tool": "flatten", "centre": [0,0,0], "radius_cells": 4, "flatten_normal": [0,0,0]}"#)
        .contains("flatten plane"));
    assert!(
        err(r#"{"frame": 0, "tool": "fill", "region_min": [0,0,0], "region_max": [0,4,4]}"#)
            .contains("empty")
    );
    assert!(err(r#"{"frame": 0, "tool": "fill", "region_min": [0,0,0], "region_max": [4,4,4], "radius_cells": 3}"#)
        .contains("radius_cells is not used by fill"));
    assert!(
        err(r#"{"frame": 0, "tool": "paste", "at": [0,0,0], "quarter_turns": 4}"#)
            .contains("quarter_turns")
    );
    assert!(err(r#"{"frame": 0, "tool": "undo", "centre": [0,0,0]}"#).contains("not used by undo"));
    assert!(
        err(r#"{"frame": 0, "tool": "erode", "path": [], "radius_cells": 4}"#)
            .contains("path needs")
    );
    assert!(
        err(r#"{"frame": 0, "tool": "erode", "centre": [0,0,0], "spacing": 0, "radius_cells": 4}"#)
            .contains("spacing")
    );
    // Infinite numbers are not JSON; serde rejects them with a position.
    assert!(
        err(r#"{"frame": 0, "tool": "add", "centre": [1e999,0,0], "radius_cells": 4}"#)
            .contains("bad.json")
    );
}

#[test]
fn committed_scripts_parse() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scripts");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            Script::load(&path).unwrap_or_else(|e| panic!("{e}"));
            n += 1;
        }
    }
    assert!(n >= 1);
}

#[test]
fn walk_steps_parse_and_bad_ones_are_rejected() {
    let s = Script::parse(
        r#"{"strokes": [], "walk": {"start_xz": [8, 16],
            "steps": [{"frames": 60, "move_xz": [1, 0]}, {"frames": 2, "move_xz": [0, -1], "jump": true}]}}"#,
        "w",
    )
    .unwrap();
    let walk = s.walk.unwrap();
    assert_eq!(walk.start_xz, [8.0, 16.0]);
    assert_eq!(
        walk.steps[1],
        WalkStep {
            frames: 2,
            move_xz: [0.0, -1.0],
            jump: true
        }
    );
    let err = |text: &str| Script::parse(text, "w.json").unwrap_err().to_string();
    assert!(
        err(r#"{"strokes": [], "walk": {"start_xz": [0, 0], "steps": [{"frames": 0, "move_xz": [1, 0]}]}}"#)
            .contains("walk step 0: frames")
    );
    assert!(
        err(r#"{"strokes": [], "walk": {"start_xz": [0, 0], "steps": [{"frames": 1, "move_xz": [1, 1]}]}}"#)
            .contains("length <= 1")
    );
    // The input that ran for hours: 2001 steps of a million frames each.
    let many = vec![r#"{"frames": 1000000, "move_xz": [1, 0]}"#; 2001].join(",");
    assert!(
        err(&format!(
            r#"{{"strokes": [], "walk": {{"start_xz": [0, 0], "steps": [{many}]}}}}"#
        ))
        .contains("at most 1000000 in all")
    );
    assert!(
        err(r#"{"strokes": [], "walk": {"start_xz": [0, 0], "steps": [{"frames": 1, "move_xz": [1, 0], "run": true}]}}"#)
            .contains("unknown field")
    );
}

/// Runs `f` on a thread and fails unless it returns within 2 s (so a
/// read that blocks fails the test instead of hanging it).
fn within_2s<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> (T, f64) {
    let (tx, rx) = std::sync::mpsc::channel();
    let start = std::time::Instant::now();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    let value = rx
        .recv_timeout(std::time::Duration::from_secs(2))
        .expect("finished within 2 s");
    (value, start.elapsed().as_secs_f64())
}

/// The three inputs of the issue that ran for hours or days are refused
/// at parse time, with the estimate in the message.
#[test]
fn unbounded_work_and_replay_time_are_refused_up_front() {
    // 10,000 points zig-zagging across a 4096-cell world, Smooth radius
    // 64 at spacing 0.05: ~15 hours of brush work.
    let points: Vec<String> = (0..MAX_PATH_POINTS)
        .map(|i| {
            let x = if i % 2 == 0 { 16.0 } else { 16368.0 };
            format!("[{x}, {:.1}]", i as f64 * 1.6)
        })
        .collect();
    let long = format!(
        r#"{{"strokes": [{{"frame": 0, "tool": "smooth", "radius_cells": 64, "spacing": 0.05, "path_xz": [{}]}}]}}"#,
        points.join(", ")
    );
    assert!(long.len() > 150_000, "{}", long.len());
    // Two points across a 4096-cell world at radius 64.
    let two = r#"{"strokes":[{"frame":0,"tool":"smooth","path":[[0,300,2048],[16384,300,2048]],"radius_cells":64,"spacing":0.05}]}"#;
    assert!(two.len() <= 130);
    // Two points 2048 studs apart at radius 64: measured 42 s of work.
    let measured = r#"{"strokes":[{"frame":0,"tool":"smooth","path":[[0,200,1024],[2048,200,1024]],"radius_cells":64,"spacing":0.05}]}"#;
    // One stroke on frame 1,000,000 at 1 Hz: 11.6 days in real time.
    let late = r#"{"frame_rate_hz": 1, "strokes": [{"frame": 1000000, "tool": "add", "centre": [0, 0, 0], "radius_cells": 4}]}"#;
    for (text, needles) in [
        (long, &["e13 cells", "stroke 0", "at most 3e8"][..]),
        (
            measured.to_string(),
            &["about 3.38e8 cells", "161 brush applications"][..],
        ),
        (
            two.to_string(),
            &["about 2.69e9 cells", "1281 brush applications"][..],
        ),
        (
            late.to_string(),
            &[
                "frame 1000000 at 1 Hz",
                "1000000 s",
                "277.8 hours",
                "at most 3600 s",
            ][..],
        ),
    ] {
        let (result, secs) = within_2s(move || Script::parse(&text, "hostile.json"));
        let message = result.unwrap_err().to_string();
        assert!(secs < 2.0, "{secs} s");
        println!("refused in {:.1} ms: {message}", secs * 1e3);
        for needle in needles {
            assert!(message.contains(needle), "{needle:?} not in {message}");
        }
    }
    // A thousand largest fills, or one fill undone and redone a thousand
    // times, are bounded the same way.
    let fills = vec![
        r#"{"frame": 0, "tool": "fill", "region_min": [0, 0, 0], "region_max": [512, 512, 512]}"#;
        1000
    ]
    .join(",");
    let e = Script::parse(&format!(r#"{{"strokes": [{fills}]}}"#), "f").unwrap_err();
    assert!(
        matches!(
            e,
            ScriptError::Setting {
                source: SettingError::TooMuchWork { .. },
                ..
            }
        ),
        "{e}"
    );
    let storm =
        vec![r#"{"frame": 1, "tool": "undo"}, {"frame": 1, "tool": "redo"}"#; 500].join(",");
    let e = Script::parse(
        &format!(r#"{{"strokes": [{{"frame": 0, "tool": "fill", "region_min": [0, 0, 0], "region_max": [512, 512, 512]}}, {storm}]}}"#),
        "u",
    )
    .unwrap_err();
    assert!(e.to_string().contains("cells of brush work in all"), "{e}");
    // One largest fill with its undo and redo is cheap and allowed.
    assert!(Script::parse(
        r#"{"strokes": [{"frame": 0, "tool": "fill", "region_min": [0, 0, 0], "region_max": [512, 512, 512]},
            {"frame": 1, "tool": "undo"}, {"frame": 2, "tool": "redo"}]}"#,
        "ok"
    )
    .is_ok());
    // Real work stays allowed: radius 64 across half a 4096-cell world
    // at the default spacing, and an hour of replay.
    let across = Script::parse(
        r#"{"strokes":[{"frame":216000,"tool":"smooth","path":[[0,300,2048],[8192,300,2048]],"radius_cells":64}]}"#,
        "ok",
    )
    .unwrap();
    assert!(across.estimated_work_cells() < MAX_SCRIPT_WORK_CELLS);
}

#[test]
fn shipped_scripts_are_well_within_the_work_budget() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scripts");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let script = Script::load(&path).unwrap_or_else(|e| panic!("{e}"));
            let cells = script.estimated_work_cells();
            println!("{}: about {cells:.2e} cells", path.display());
            assert!(cells < MAX_SCRIPT_WORK_CELLS / 2.0, "{}", path.display());
        }
    }
}

/// Devices, FIFOs, symlinks to devices and oversize files are refused
/// before anything is read.
#[cfg(unix)]
#[test]
fn unbounded_script_files_are_refused_before_reading() {
    let dir = std::env::temp_dir().join(format!("strata-script-files-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let link = dir.join("zero.json");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    let big = dir.join("big.json");
    // Sparse: no bytes written, 16 MiB + 1 long.
    std::fs::File::create(&big)
        .unwrap()
        .set_len(MAX_SCRIPT_FILE_BYTES + 1)
        .unwrap();
    for (path, needle) in [
        (std::path::PathBuf::from("/dev/zero"), "character device"),
        (std::path::PathBuf::from("/dev/urandom"), "character device"),
        (link, "character device"),
        (fifo, "FIFO"),
        (dir.clone(), "directory"),
        (big, "16777217 bytes, more than the limit of 16777216"),
    ] {
        let shown = path.display().to_string();
        let (result, secs) = within_2s(move || Script::load(&path));
        let e = result.unwrap_err();
        println!("{shown}: refused in {:.2} ms: {e}", secs * 1e3);
        assert!(matches!(e, ScriptError::Read { .. }), "{e}");
        let message = e.to_string();
        assert!(
            message.contains(needle) && message.contains(&shown),
            "{message}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The keys each tool takes are its struct's fields; this pins them to the
/// format as it was when every tool's allow-list was written by hand.
#[test]
fn every_tool_takes_exactly_its_fields() {
    let brush = [
        "centre",
        "centre_xz",
        "path",
        "path_xz",
        "spacing",
        "plane_lock",
        "radius_cells",
        "strength",
        "material",
        "ignore_water",
        "shape",
        "falloff",
    ];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        brush.iter().chain(extra).copied().collect()
    };
    let flatten = with(&["flatten_height", "flatten_normal", "flatten_limit"]);
    let replace = with(&["replace_from"]);
    let erosion = with(&["iterations"]);
    let region = vec!["region_min", "region_max"];
    let tools: Vec<(&str, Vec<&str>)> = vec![
        ("add", brush.to_vec()),
        ("subtract", brush.to_vec()),
        ("add_water", brush.to_vec()),
        ("remove_water", brush.to_vec()),
        ("grow", brush.to_vec()),
        ("erode", brush.to_vec()),
        ("smooth", brush.to_vec()),
        ("flatten", flatten),
        ("paint", brush.to_vec()),
        ("replace", replace),
        ("hydraulic_erode", erosion.clone()),
        ("thermal_erode", erosion),
        (
            "fill",
            vec![
                "region_min",
                "region_max",
                "material",
                "occupancy",
                "ignore_water",
            ],
        ),
        ("clear", vec!["region_min", "region_max", "ignore_water"]),
        ("copy", region.clone()),
        ("generate", region),
        ("paste", vec!["at", "quarter_turns"]),
        (
            "path",
            vec![
                "mode",
                "points",
                "width",
                "max_grade_deg",
                "bank_slope_deg",
                "depth",
                "material",
            ],
        ),
        (
            "stamp",
            vec![
                "stamp",
                "centre_xz",
                "radius_cells",
                "rotation_deg",
                "height_scale_cells",
                "edge_falloff",
                "mode",
                "base_cells",
                "material",
            ],
        ),
        ("undo", vec![]),
        ("redo", vec![]),
    ];
    let mut every_field: Vec<&str> = tools.iter().flat_map(|(_, f)| f.clone()).collect();
    every_field.sort();
    every_field.dedup();
    for (tool, takes) in &tools {
        for field in &every_field {
            // The value's type is not looked at before the key is.
            let text =
                format!(r#"{{"strokes": [{{"frame": 0, "tool": "{tool}", "{field}": 1}}]}}"#);
            let message =
                Script::parse(&text, "k.json").map_or_else(|e| e.to_string(), |_| "".into());
            let refused = message.contains(&format!("{field} is not used by {tool}"))
                || message.contains("only used by");
            assert_eq!(refused, !takes.contains(field), "{tool} {field}: {message}");
        }
    }
}

#[test]
fn unknown_fields_and_tools_name_the_entry() {
    let err = |text: &str| Script::parse(text, "u.json").unwrap_err().to_string();
    let e = err(r#"{"strokes": [{"frame": 0, "tool": "undo"},
            {"frame": 1, "tool": "paste", "at": [0, 0, 0], "colour": 1}]}"#);
    assert_eq!(
        e,
        "script u.json, stroke 1: unknown field `colour` (paste takes frame, tool, at, \
         quarter_turns)"
    );
    let e = err(r#"{"strokes": [{"frame": 0, "tool": "melt"}]}"#);
    assert!(
        e.contains("stroke 0: unknown tool \"melt\"")
            && e.contains("replace, hydraulic_erode, thermal_erode, fill"),
        "{e}"
    );
    // A value of the wrong type names the entry, its tool, and its place
    // in the file.
    let e = err(
        "{\"strokes\": [\n  {\"frame\": 0, \"tool\": \"undo\"},\n  {\"frame\": 1, \"tool\": \"add\", \
         \"centre\": [0,0,0],\n   \"radius_cells\": \"big\"}\n]}",
    );
    assert_eq!(
        e,
        "script u.json, stroke 1: add: invalid type: string \"big\", expected f32 at line 4 \
         column 24"
    );
    assert!(
        err(r#"{"strokes": [{"frame": 0, "tool": "undo", "tool": "redo"}]}"#)
            .contains("stroke 0: duplicate field `tool`")
    );
}

/// Another tool's field left at its default (`null`, or `false` for a flag)
/// reads as not given, as it always has; any other value is refused.
#[test]
fn other_tools_fields_at_their_default_are_ignored() {
    let parse = |entry: &str| Script::parse(&format!(r#"{{"strokes": [{entry}]}}"#), "n.json");
    let copy = r#""tool": "copy", "region_min": [0, 0, 0], "region_max": [4, 4, 4]"#;
    for extra in [
        r#""centre": null"#,
        r#""plane_lock": false"#,
        r#""ignore_water": false"#,
        r#""flatten_height": null"#,
        r#""camera": null"#,
    ] {
        let s = parse(&format!(r#"{{"frame": 0, {copy}, {extra}}}"#)).unwrap();
        assert_eq!(
            s.strokes[0].action,
            StrokeAction::Command(EditCommand::Copy {
                region: CellBox::new(IVec3::ZERO, IVec3::splat(4))
            }),
            "{extra}"
        );
    }
    for (extra, needle) in [
        (r#""plane_lock": null"#, "plane_lock is not used by copy"),
        (r#""plane_lock": true"#, "plane_lock is not used by copy"),
        (r#""centre": false"#, "centre is not used by copy"),
        (r#""colour": null"#, "unknown field `colour`"),
    ] {
        let e = parse(&format!(r#"{{"frame": 0, {copy}, {extra}}}"#)).unwrap_err();
        assert!(e.to_string().contains(needle), "{extra}: {e}");
    }
    // A camera keyframe may carry an empty tool and unset fields.
    let s =
        parse(r#"{"frame": 3, "camera": [1, 2, 3, 4, 5], "tool": "", "centre": null}"#).unwrap();
    assert_eq!(s.camera_keys.len(), 1);
    assert!(
        parse(r#"{"frame": 3, "camera": [1, 2, 3, 4, 5], "radius_cells": 2}"#)
            .unwrap_err()
            .to_string()
            .contains("a camera keyframe takes only frame and camera")
    );
}

#[test]
fn entries_name_the_world_library_materials() {
    use crate::terrain::materials::{MaterialLibrary, MaterialTexture};
    let mut library = MaterialLibrary::default();
    library.set_texture_side_px(256).unwrap();
    let texels = vec![90u8; 256 * 256 * 4];
    let moss = library
        .add_material(
            "Deep moss",
            MaterialTexture::new(256, texels).unwrap(),
            None,
        )
        .unwrap();
    library.rename(Material::GRASS, "Meadow").unwrap();
    let text = r#"{"strokes": [
        {"frame": 0, "tool": "fill", "region_min": [0,0,0], "region_max": [4,4,4], "material": "deep MOSS"},
        {"frame": 1, "tool": "replace", "centre": [0, 0, 0], "radius_cells": 3, "material": "meadow", "replace_from": "Deep moss"},
        {"frame": 2, "tool": "path", "points": [[0, 0], [40, 0]], "material": "Deep moss"},
        {"frame": 3, "tool": "add", "centre": [0, 0, 0], "radius_cells": 3, "material": "grass"}
    ]}"#;
    let script = Script::parse_for(text, "s", None, &library).unwrap();
    let StrokeAction::Command(EditCommand::Fill { material, .. }) = &script.strokes[0].action
    else {
        panic!("a fill");
    };
    assert_eq!(*material, moss);
    let StrokeAction::Brush(replace) = &script.strokes[1].action else {
        panic!("a brush");
    };
    assert_eq!(
        replace.brush.material,
        Material::GRASS,
        "a renamed built-in"
    );
    assert_eq!(replace.options.replace_from, moss);
    let StrokeAction::Command(EditCommand::Path(spec)) = &script.strokes[2].action else {
        panic!("a path");
    };
    assert_eq!(spec.material, moss);
    let StrokeAction::Brush(add) = &script.strokes[3].action else {
        panic!("a brush");
    };
    assert_eq!(
        add.brush.material,
        Material::GRASS,
        "the built-in name still works"
    );
    // Without the world's library the name is unknown, and says where to look.
    let e = Script::parse(text, "s").unwrap_err().to_string();
    assert!(e.contains("\"deep MOSS\" is not a solid or water material name (a built-in or one of this world's materials)"), "{e}");
}
