//! The path tool: roads, rivers and routes laid through the one
//! edit-command path, measured on the cells they leave.

use glam::{DVec2, IVec2, IVec3};

use strata::script::{Script, ScriptRunner};
use strata::terrain::command::edit_command::{
    CommandError, CommandOutcome, EditCommand, EditSession,
};
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};
use strata::terrain::path::spec::{PathError, PathMode, PathReport, PathSpec};
use strata::terrain::path::surface::SurfacePatch;
use strata::terrain::storage::coords::CellBox;
use strata::terrain::{Cell, CellCoord, Grid, Material};

mod common;

/// Columns `0..160` square of flat ground at 20 cells with a Gaussian hill
/// 30 cells high (σ = 15 cells) at (80, 80): steepest about 50°.
fn hill() -> Grid {
    terrain(160, 60, |x, z| {
        let r2 = (x - 80.5).powi(2) + (z - 80.5).powi(2);
        20.0 + 30.0 * (-r2 / (2.0 * 15.0 * 15.0)).exp()
    })
}

/// A valley running down +x (0.1 cells per cell) with a 4-cell bump
/// across it at x 60..70, sides rising away from z = 40.
fn valley() -> Grid {
    terrain(160, 60, |x, z| {
        let bump = if (60.0..70.0).contains(&x) { 4.0 } else { 0.0 };
        40.0 - 0.1 * x + 0.01 * (z - 40.5).powi(2) + bump
    })
}

/// Grass over dirt over rock up to `height(x, z)` (cell-centre coordinates),
/// the top cell fractional, over columns `0..side` and rows `0..rows`.
fn terrain(side: i32, rows: i32, height: impl Fn(f64, f64) -> f64) -> Grid {
    let mut g = Grid::new();
    g.edit_region(
        CellBox::new(IVec3::ZERO, IVec3::new(side, rows, side)),
        |c, _| {
            let h = height(f64::from(c.0.x) + 0.5, f64::from(c.0.z) + 0.5);
            let y = f64::from(c.0.y);
            let occ = ((h - y).clamp(0.0, 1.0) * 255.0).round() as u8;
            let m = if y >= h - 1.5 {
                Material::GRASS
            } else if y >= h - 4.0 {
                Material::DIRT
            } else {
                Material::ROCK
            };
            Cell::new(m, occ)
        },
    )
    .unwrap();
    g
}

fn studs(cells: [f64; 2]) -> DVec2 {
    DVec2::from_array(cells) * 4.0
}

fn apply(grid: &mut Grid, session: &mut EditSession, spec: &PathSpec) -> PathReport {
    match session
        .apply(grid, &EditCommand::Path(spec.clone()))
        .unwrap()
    {
        CommandOutcome::PathApplied {
            changed: true,
            report,
            touched,
        } => {
            assert!(!touched.is_empty());
            report
        }
        other => panic!("{other:?}"),
    }
}

/// Steepest grade (degrees) between consecutive columns of `columns`,
/// read from the cells.
fn grade_on_cells(grid: &Grid, columns: &[IVec2]) -> f64 {
    let patch = SurfacePatch::read(grid, IVec2::splat(-1), IVec2::splat(200));
    columns
        .windows(2)
        .map(|w| {
            let a = patch.height_cells(w[0]).unwrap();
            let b = patch.height_cells(w[1]).unwrap();
            let run = (w[1] - w[0]).as_dvec2().length();
            ((b - a).abs() / run).atan().to_degrees()
        })
        .fold(0.0, f64::max)
}

fn top_material(grid: &Grid, column: IVec2) -> Material {
    (0..80)
        .rev()
        .map(|y| grid.cell(CellCoord::new(column.x, y, column.y)))
        .find(|c| c.material().is_solid())
        .map_or(Material::AIR, |c| c.material())
}

#[test]
fn a_road_over_a_hill_keeps_its_grade_on_the_cells_and_undoes_exactly() {
    let mut grid = hill();
    let before = grid.content_hash();
    let mut session = EditSession::new(1 << 28, None);
    let spec = PathSpec {
        width_studs: 12.0,
        ..PathSpec::road(vec![
            studs([10.5, 80.5]),
            studs([80.5, 80.5]),
            studs([150.5, 80.5]),
        ])
    };
    let report = apply(&mut grid, &mut session, &spec);
    println!("{report:?}");
    assert_eq!(report.mode, PathMode::Road);
    assert!((report.length_studs - 560.0).abs() < 1.0);
    assert_eq!(report.grade_cap_deg, 8.0);
    assert!(report.max_grade_deg <= 8.0 && report.max_grade_deg > 5.0);
    assert!(
        report.cut_cells > 1000 && report.fill_cells > 100,
        "{report:?}"
    );
    assert_eq!(report.max_upstream_rise_studs, None, "a road has no water");
    // Along the centreline and along both bed edges, on the cells.
    for z in [79, 80, 81] {
        let line: Vec<IVec2> = (10..=150).map(|x| IVec2::new(x, z)).collect();
        let g = grade_on_cells(&grid, &line);
        assert!(g <= 8.0, "row {z}: {g}°");
    }
    // The top of the hill is cut: the summit was at 50 cells.
    let summit = SurfacePatch::read(&grid, IVec2::new(80, 80), IVec2::new(81, 81))
        .height_cells(IVec2::new(80, 80))
        .unwrap();
    assert!(summit < 42.0, "{summit}");
    // The bed is gravel; far from the road the grass is untouched.
    assert_eq!(top_material(&grid, IVec2::new(40, 80)), Material::GRAVEL);
    assert_eq!(top_material(&grid, IVec2::new(40, 20)), Material::GRASS);
    // One undo step, labelled, holding the spec for reopening.
    let step = session.history.undo_steps().last().unwrap();
    assert_eq!(step.label(), "Road (3 points)");
    assert_eq!(step.path_spec(), Some(&spec));
    assert_eq!(session.history.undo_len(), 1);
    let after = grid.content_hash();
    session.apply(&mut grid, &EditCommand::Undo).unwrap();
    assert_eq!(grid.content_hash(), before);
    session.apply(&mut grid, &EditCommand::Redo).unwrap();
    assert_eq!(grid.content_hash(), after);
}

#[test]
fn a_river_carves_a_channel_whose_water_never_rises_downstream() {
    let mut grid = valley();
    let mut session = EditSession::new(1 << 28, None);
    let spec = PathSpec::river(vec![
        studs([5.5, 40.5]),
        studs([80.5, 44.5]),
        studs([150.5, 40.5]),
    ]);
    let report = apply(&mut grid, &mut session, &spec);
    println!("{report:?}");
    assert_eq!(report.mode, PathMode::River);
    assert_eq!(report.max_upstream_rise_studs, Some(0.0));
    assert!(report.cut_cells > 500, "{report:?}");
    // Water along the middle of the channel, on the cells: present, above
    // the bed, never rising from one column to the next downstream.
    let patch = SurfacePatch::read(&grid, IVec2::ZERO, IVec2::splat(160));
    let mut last = f64::INFINITY;
    let mut rise_cells = 0.0f64;
    let mut by_x = vec![f64::NAN; 160];
    for x in 8..148 {
        let z = (0..80)
            .min_by_key(|&z| {
                let c = IVec2::new(x, z);
                (patch.height_cells(c).unwrap_or(1e9) * 1000.0) as i64
            })
            .unwrap();
        let c = IVec2::new(x, z);
        let water = patch
            .water_cells(c)
            .unwrap_or_else(|| panic!("no water at {c}"));
        let bed = patch.height_cells(c).unwrap();
        assert!(water > bed + 0.5, "{c}: water {water}, bed {bed}");
        assert!(water <= last + 1e-6, "{c}: {water} after {last}");
        if last.is_finite() {
            rise_cells = rise_cells.max(water - last);
        }
        last = water;
        by_x[x as usize] = water;
    }
    // Through the bump (x 60..70) the water stays level: it cuts a gorge,
    // while before it the water falls with the valley.
    assert!(
        (by_x[61] - by_x[68]).abs() < 0.01,
        "{} {}",
        by_x[61],
        by_x[68]
    );
    assert!(by_x[20] - by_x[50] > 2.5, "{} {}", by_x[20], by_x[50]);
    // The reported rise is the one measured here on the cells (none).
    let measured_studs = rise_cells * f64::from(strata::terrain::storage::coords::CELL_SIZE_STUDS);
    let reported = report
        .max_upstream_rise_studs
        .expect("a river reports its rise");
    assert!(
        (reported - measured_studs).abs() < 1e-4,
        "reported {reported}, measured {measured_studs}"
    );
    assert_eq!(top_material(&grid, IVec2::new(30, 41)), Material::MUD);
}

/// The input that failed: a road across flat ground whose surface lies on
/// a cell boundary (full cells up to row 19) changed nothing, because the
/// band's rows were under both surfaces and kept their old material; the
/// gravel band came out broken wherever the terrain was level.
#[test]
fn a_road_on_level_ground_paints_its_band() {
    let mut grid = terrain(96, 40, |_, _| 20.0);
    let before = grid.content_hash();
    let mut session = EditSession::new(1 << 28, None);
    let spec = PathSpec {
        width_studs: 12.0,
        ..PathSpec::road(vec![studs([8.5, 48.5]), studs([88.5, 48.5])])
    };
    let report = apply(&mut grid, &mut session, &spec);
    assert_eq!((report.cut_cells, report.fill_cells), (0, 0), "{report:?}");
    for x in 12..84 {
        let c = IVec2::new(x, 48);
        assert_eq!(top_material(&grid, c), Material::GRAVEL, "{c}");
        // Two rows deep, and the surface stays where it was.
        assert_eq!(
            grid.cell(CellCoord::new(x, 18, 48)).material(),
            Material::GRAVEL
        );
        assert_eq!(
            grid.cell(CellCoord::new(x, 17, 48)).material(),
            Material::DIRT
        );
        assert!(grid.cell(CellCoord::new(x, 20, 48)).is_empty());
    }
    assert_eq!(top_material(&grid, IVec2::new(48, 30)), Material::GRASS);
    session.apply(&mut grid, &EditCommand::Undo).unwrap();
    assert_eq!(grid.content_hash(), before);
}

/// The input that failed: on the default world this river runs down into
/// the generated water east of x = 3,270 studs, whose surface stood above
/// the level the river carved, so the water rose 4.9 studs where they met.
/// The river now ends at that water, backed up to its surface.
#[test]
fn a_river_into_standing_water_ends_there_without_a_rise() {
    let mut grid = generate_world(&GeneratorSettings::default()).unwrap();
    let mut session = EditSession::new(1 << 28, None);
    let spec = PathSpec {
        width_studs: 20.0,
        depth_studs: 6.0,
        ..PathSpec::river(vec![
            DVec2::new(2760.0, 1330.0),
            DVec2::new(2950.0, 1390.0),
            DVec2::new(3150.0, 1450.0),
            DVec2::new(3360.0, 1500.0),
        ])
    };
    let report = apply(&mut grid, &mut session, &spec);
    assert_eq!(report.max_upstream_rise_studs, Some(0.0), "{report:?}");
    // It stopped at the water body, short of the last control point.
    assert!(report.length_studs < 600.0, "{report:?}");
    assert!(report.length_studs > 400.0, "{report:?}");
}

#[test]
fn a_route_around_a_hill_is_longer_than_the_line_and_within_its_cap() {
    let mut grid = hill();
    let mut session = EditSession::new(1 << 28, None);
    let spec = PathSpec {
        max_grade_deg: 6.0,
        ..PathSpec::route(studs([10.5, 80.5]), studs([150.5, 80.5]))
    };
    // The straight road would climb the hill at far more than 6°.
    let straight = 140.0 * 4.0;
    let report = apply(&mut grid, &mut session, &spec);
    println!("{report:?}");
    assert_eq!(report.mode, PathMode::Route);
    assert!(report.length_studs > straight * 1.1, "{report:?}");
    assert!(report.length_studs < straight * 2.0, "{report:?}");
    assert!(report.max_grade_deg <= 6.0, "{report:?}");
    assert_eq!(report.max_upstream_rise_studs, None, "a route has no water");
    assert_eq!(
        session.history.undo_steps().last().unwrap().label(),
        "Route"
    );
    // The laid road (its gravel) stays off the hill: every gravel column
    // lies on low ground, and the hill's summit is untouched.
    let patch = SurfacePatch::read(&grid, IVec2::ZERO, IVec2::splat(160));
    let mut gravel = 0;
    for z in 0..160 {
        for x in 0..160 {
            if top_material(&grid, IVec2::new(x, z)) == Material::GRAVEL {
                gravel += 1;
                let h = patch.height_cells(IVec2::new(x, z)).unwrap();
                assert!(h < 26.0, "gravel at ({x}, {z}) at height {h}");
            }
        }
    }
    assert!(gravel > 300, "{gravel}");
    assert!((patch.height_cells(IVec2::new(80, 80)).unwrap() - 50.0).abs() < 0.01);
}

#[test]
fn bad_paths_are_refused_and_change_nothing() {
    let mut grid = hill();
    let hash = grid.content_hash();
    let revision = grid.revision();
    let mut session = EditSession::new(1 << 28, None);
    let road = |points: Vec<DVec2>| PathSpec::road(points);
    let cases: Vec<(PathSpec, &str)> = vec![
        (
            road(vec![DVec2::new(f64::NAN, 0.0), studs([50.0, 50.0])]),
            "finite",
        ),
        (road(vec![studs([50.0, 50.0])]), "2 to 1000 points"),
        (road(vec![studs([50.0, 50.0]); 1001]), "not 1001"),
        (
            road(vec![studs([0.0, 0.0]), studs([3000.0, 0.0])]),
            "at most 8192",
        ),
        (
            PathSpec {
                width_studs: 1000.0,
                ..road(vec![studs([10.0, 10.0]), studs([50.0, 50.0])])
            },
            "width",
        ),
        (
            PathSpec {
                max_grade_deg: f64::INFINITY,
                ..road(vec![studs([10.0, 10.0]), studs([50.0, 50.0])])
            },
            "max grade",
        ),
        // Off the terrain: nothing below the second half.
        (
            road(vec![studs([10.0, 10.0]), studs([400.0, 10.0])]),
            "no terrain below",
        ),
        (
            PathSpec::route(studs([10.0, 10.0]), studs([700.0, 10.0])),
            "at most 2048",
        ),
    ];
    for (spec, needle) in cases {
        let e = session
            .apply(&mut grid, &EditCommand::Path(spec))
            .unwrap_err();
        assert!(matches!(e, CommandError::Path(_)), "{e:?}");
        assert!(e.to_string().contains(needle), "{needle:?} not in {e}");
    }
    // A route up a cliff higher than its cap allows anywhere: no route.
    let mut cliff = terrain(64, 64, |x, _| if x < 32.0 { 10.0 } else { 50.0 });
    let cliff_hash = cliff.content_hash();
    let e = session
        .apply(
            &mut cliff,
            &EditCommand::Path(PathSpec::route(studs([10.5, 30.5]), studs([50.5, 30.5]))),
        )
        .unwrap_err();
    assert!(
        matches!(e, CommandError::Path(PathError::NoRoute { .. })),
        "{e:?}"
    );
    assert_eq!(cliff.content_hash(), cliff_hash);
    assert_eq!(grid.content_hash(), hash);
    assert_eq!(grid.revision(), revision);
    assert_eq!(session.history.undo_len(), 0);
}

#[test]
fn scripted_paths_replay_headless_and_report_their_figures() {
    let text = r#"{"strokes": [
        {"frame": 0, "tool": "path", "mode": "road", "points": [[42, 322], [322, 322], [602, 322]],
         "width": 12, "max_grade_deg": 8, "material": "gravel"},
        {"frame": 1, "tool": "path", "mode": "river", "points": [[42, 42], [600, 60]],
         "depth": 4, "width": 8},
        {"frame": 2, "tool": "path", "mode": "route", "points": [[42, 560], [600, 560]],
         "max_grade_deg": 6},
        {"frame": 3, "tool": "undo"}
    ]}"#;
    let script = Script::parse(text, "paths.json").unwrap();
    let mut grid = hill();
    let before = grid.content_hash();
    let mut runner = ScriptRunner::new(script.history_budget_bytes, None, None);
    let mut hashes = vec![];
    for s in &script.strokes {
        assert!(runner.run(&mut grid, &s.action).unwrap());
        hashes.push(grid.content_hash());
    }
    assert_ne!(hashes[0], before);
    assert_eq!(hashes[3], hashes[1], "the undo takes back the route");
    let modes: Vec<PathMode> = runner.path_reports().iter().map(|r| r.mode).collect();
    assert_eq!(modes, [PathMode::Road, PathMode::River, PathMode::Route]);
    for r in runner.path_reports() {
        assert!(r.max_grade_deg <= r.grade_cap_deg, "{r:?}");
        assert!(r.length_studs > 500.0, "{r:?}");
        let rise = match r.mode {
            PathMode::River => Some(0.0),
            PathMode::Road | PathMode::Route => None,
        };
        assert_eq!(r.max_upstream_rise_studs, rise, "{r:?}");
    }
    let json = serde_json::to_value(runner.path_reports()[1]).unwrap();
    let mut keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "cut_cells",
            "fill_cells",
            "grade_cap_deg",
            "length_studs",
            "max_grade_deg",
            "max_upstream_rise_studs",
            "mode"
        ]
    );
    assert_eq!(json["mode"], "river");
    // Roads and routes carry no water: no rise is reported for them.
    for r in [runner.path_reports()[0], runner.path_reports()[2]] {
        let json = serde_json::to_value(r).unwrap();
        assert!(json.get("max_upstream_rise_studs").is_none(), "{json}");
        assert_eq!(json.as_object().unwrap().len(), 6, "{json}");
    }
    // Bad entries name the stroke and the field.
    for (entry, needle) in [
        (
            r#"{"frame": 0, "tool": "path", "mode": "canal", "points": [[0, 0], [9, 9]]}"#,
            "canal",
        ),
        (r#"{"frame": 0, "tool": "path"}"#, "path needs points"),
        (
            r#"{"frame": 0, "tool": "path", "points": [[0, 0], [9, 9]], "radius_cells": 3}"#,
            "radius_cells is not used by path",
        ),
        (
            r#"{"frame": 0, "tool": "path", "points": [[0, 0], [9, 9]], "width": 0.5}"#,
            "width",
        ),
        (
            r#"{"frame": 0, "tool": "add", "centre": [0, 0, 0], "radius_cells": 3, "width": 4}"#,
            "width is not used by add",
        ),
    ] {
        let e = Script::parse(&format!(r#"{{"strokes": [{entry}]}}"#), "bad.json")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("stroke 0") && e.contains(needle),
            "{needle:?}: {e}"
        );
    }
}

/// The headless run writes each applied path's figures under `"paths"`.
#[test]
fn stats_json_lists_the_applied_paths() {
    common::require_gpu("stats_json_lists_the_applied_paths");
    let dir = std::env::temp_dir().join(format!("strata-paths-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("paths.json");
    std::fs::write(
        &script,
        r#"{"strokes": [
            {"frame": 0, "tool": "path", "points": [[40, 100], [260, 140], [470, 120]]},
            {"frame": 1, "tool": "path", "mode": "river", "points": [[60, 400], [450, 380]]},
            {"frame": 2, "tool": "path", "mode": "route", "points": [[60, 260], [450, 250]],
             "max_grade_deg": 30}
        ]}"#,
    )
    .unwrap();
    let json = dir.join("stats.json");
    common::run_ok(
        std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
            .args(["--headless", "--world-size", "128", "--seed", "7"])
            .args(["--size", "96x64", "--no-replay-frames", "--screenshot"])
            .arg(dir.join("shot.png"))
            .arg("--script")
            .arg(&script)
            .arg("--stats-json")
            .arg(&json),
    );
    let stats = common::read_json(&json);
    let paths = stats["paths"].as_array().expect("paths array");
    assert_eq!(paths.len(), 3, "{stats}");
    for (p, mode) in paths.iter().zip(["road", "river", "route"]) {
        assert_eq!(p["mode"], mode);
        assert!(p["length_studs"].as_f64().unwrap() > 300.0, "{p}");
        assert!(
            p["max_grade_deg"].as_f64().unwrap() <= p["grade_cap_deg"].as_f64().unwrap(),
            "{p}"
        );
        assert!(p["cut_cells"].as_u64().unwrap() + p["fill_cells"].as_u64().unwrap() > 0);
        if mode == "river" {
            assert_eq!(p["max_upstream_rise_studs"].as_f64(), Some(0.0), "{p}");
        } else {
            assert!(p.get("max_upstream_rise_studs").is_none(), "{p}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
