//! Scripts give one world whatever the camera: `*_xz` points drop onto the
//! full-detail surface computed from the cells, not onto the displayed
//! level-of-detail meshes, so the replay (any camera, any forced level) and
//! the render-less run (`--save` without a screenshot) agree, and points far
//! beyond the draw distance still find the terrain.

use glam::DVec3;
use strata::app::world_outputs::{OpenedWorld, apply_script};
use strata::camera::Camera;
use strata::io::world::world_file::WorldMeta;
use strata::pipeline::lod::LodSettings;
use strata::pipeline::{ChunkUploader, TerrainStreaming, WorldMeshes};
use strata::script::{ReplayTarget, Script, ScriptRunner, UploadOnly, replay_script};
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};

mod common;
use common::NoGpu;

fn settings() -> GeneratorSettings {
    GeneratorSettings {
        seed: 7,
        size_cells: 256,
    }
}

/// Strokes that all drop onto the surface: a subtract path, an add, a
/// flatten from the picked plane and a paint, on a 256-cell (1024-stud) world.
const SCRIPT: &str = r#"{"frame_rate_hz": 240, "strokes": [
    {"frame": 0, "tool": "subtract", "path_xz": [[200, 300], [700, 420]],
     "radius_cells": 6, "strength": 0.8},
    {"frame": 1, "tool": "add", "centre_xz": [512, 512], "radius_cells": 9,
     "material": "snow"},
    {"frame": 2, "tool": "flatten", "centre_xz": [800, 200], "radius_cells": 7},
    {"frame": 3, "tool": "paint", "path_xz": [[100, 900], [900, 880]],
     "radius_cells": 5, "strength": 1, "material": "sand"}
]}"#;

/// The world hash after replaying `script` through the meshing pipeline
/// with the camera at `camera_world` and `lod`.
fn replayed_hash(script: &Script, camera_world: DVec3, lod: LodSettings) -> u64 {
    let mut grid = generate_world(&settings()).expect("world");
    let mut streaming = TerrainStreaming::new(lod);
    let mut meshes = streaming.build_initial(&grid, camera_world);
    let mut runner = ScriptRunner::for_script(script, &grid, Some(settings()));
    replay_script(
        script,
        &mut grid,
        &mut meshes,
        &mut streaming,
        &mut UploadOnly(&mut NoGpu),
        Camera::new(camera_world, 0.0, -30.0),
        &mut runner,
    )
    .expect("replay");
    grid.content_hash()
}

#[test]
fn one_world_for_every_camera_level_and_for_the_render_less_run() {
    let script = Script::parse(SCRIPT, "surface.json").expect("script");
    let mut plain = OpenedWorld::from_grid(
        generate_world(&settings()).expect("world"),
        WorldMeta::generated(&settings()),
    );
    let before = plain.grid.content_hash();
    let edits = apply_script(&script, &mut plain, None).expect("applies");
    assert_eq!(edits, 4);
    let expected = plain.grid.content_hash();
    assert_ne!(expected, before);

    // Close and low, high and far (coarse levels), and at full detail only.
    let near = DVec3::new(512.0, 300.0, 512.0);
    let far = DVec3::new(-3000.0, 2500.0, -3000.0);
    let full = LodSettings {
        force_level: Some(0),
        ..LodSettings::default()
    };
    let coarsest = LodSettings {
        force_level: Some(3),
        ..LodSettings::default()
    };
    assert_eq!(
        replayed_hash(&script, near, LodSettings::default()),
        expected
    );
    assert_eq!(
        replayed_hash(&script, far, LodSettings::default()),
        expected
    );
    assert_eq!(replayed_hash(&script, near, full), expected);
    assert_eq!(replayed_hash(&script, far, coarsest), expected);
}

#[test]
fn a_point_beyond_the_draw_distance_still_finds_the_terrain() {
    // The camera 10,000 studs away with a 2,000-stud draw distance: no mesh
    // of the world is shown, yet the stroke lands on the surface.
    let script = Script::parse(
        r#"{"strokes": [{"frame": 0, "tool": "add", "centre_xz": [512, 512],
            "radius_cells": 6, "material": "snow"}]}"#,
        "far.json",
    )
    .expect("script");
    let lod = LodSettings {
        draw_distance_studs: 2000.0,
        ..LodSettings::default()
    };
    let camera = DVec3::new(10_512.0, 400.0, 512.0);
    let untouched = generate_world(&settings()).expect("world").content_hash();
    let edited = replayed_hash(&script, camera, lod);
    assert_ne!(edited, untouched);
    let mut plain = OpenedWorld::from_grid(
        generate_world(&settings()).expect("world"),
        WorldMeta::default(),
    );
    apply_script(&script, &mut plain, None).expect("applies");
    assert_eq!(plain.grid.content_hash(), edited);
}

/// A target that takes `draw` to present each frame (a slow GPU).
struct SlowPresent {
    draw: std::time::Duration,
    presented: usize,
}

impl ReplayTarget for SlowPresent {
    fn uploader(&mut self) -> Box<dyn ChunkUploader + '_> {
        Box::new(NoGpu)
    }
    fn present(
        &mut self,
        _: u32,
        _: &WorldMeshes,
        _: &Camera,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        std::thread::sleep(self.draw);
        self.presented += 1;
        Ok(())
    }
}

#[test]
fn edit_to_visible_ends_at_the_presented_frame_not_at_publication() {
    // The input that failed: the panel said 2–3 ms while frames took ~390 ms.
    // With a 60 ms draw, every edit's latency includes the frame that shows it.
    let script = Script::parse(SCRIPT, "surface.json").expect("script");
    let mut grid = generate_world(&settings()).expect("world");
    let camera = DVec3::new(512.0, 300.0, 512.0);
    let mut streaming = TerrainStreaming::new(LodSettings::default());
    let mut meshes = streaming.build_initial(&grid, camera);
    let mut target = SlowPresent {
        draw: std::time::Duration::from_millis(60),
        presented: 0,
    };
    let mut runner = ScriptRunner::for_script(&script, &grid, Some(settings()));
    let report = replay_script(
        &script,
        &mut grid,
        &mut meshes,
        &mut streaming,
        &mut target,
        Camera::new(camera, 0.0, -30.0),
        &mut runner,
    )
    .expect("replay");
    assert!(target.presented >= 1);
    assert_eq!(report.presented_frames as usize, target.presented);
    let stats = &mut streaming.pipeline_mut().stats;
    let visible = stats.latency_summary().expect("edits were shown");
    let published = stats.published_summary().expect("edits were published");
    let full = stats
        .full_detail_summary()
        .expect("edits reached full detail");
    assert_eq!(visible.count, published.count);
    assert!(visible.count >= 1);
    assert_eq!(full.count, visible.count, "no previews left behind");
    // Every sample includes at least one whole draw after publication.
    let mut min_visible = f64::MAX;
    for q in [0.0, 0.5, 1.0] {
        min_visible = min_visible.min(stats.edit_to_visible.quantile(q));
    }
    assert!(min_visible >= 60.0, "edit-to-visible {min_visible} ms");
    assert!(
        visible.p50 >= published.p50 + 59.0,
        "{visible:?} vs {published:?}"
    );
}

#[test]
fn camera_keyframes_interpolate_linearly_and_bad_ones_are_refused() {
    let script = Script::parse(
        r#"{"frame_rate_hz": 60, "strokes": [
            {"frame": 120, "camera": [100, 500, 0, 90, -20]},
            {"frame": 0, "camera": [0, 300, 0, 0, -40]},
            {"frame": 10, "tool": "add", "centre": [5, 5, 5], "radius_cells": 2}
        ]}"#,
        "keys.json",
    )
    .expect("script");
    assert_eq!(script.camera_keys.len(), 2);
    assert_eq!(script.strokes.len(), 1);
    assert_eq!(script.camera_at(-5.0), Some([0.0, 300.0, 0.0, 0.0, -40.0]));
    assert_eq!(
        script.camera_at(60.0),
        Some([50.0, 400.0, 0.0, 45.0, -30.0])
    );
    assert_eq!(
        script.camera_at(500.0),
        Some([100.0, 500.0, 0.0, 90.0, -20.0])
    );
    assert_eq!(script.last_timed_frame(), 120);
    for bad in [
        r#"{"strokes": [{"frame": 0, "camera": [0, 0, 0, 0, 95]}]}"#,
        r#"{"strokes": [{"frame": 0, "camera": [0, 0, 0, 0, 1e400]}]}"#,
        r#"{"strokes": [{"frame": 0, "camera": [0, 0, 0, 0, 0], "tool": "add"}]}"#,
        r#"{"strokes": [{"frame": 0, "camera": [0, 0, 0, 0, 0]}, {"frame": 0, "camera": [1, 0, 0, 0, 0]}]}"#,
    ] {
        assert!(Script::parse(bad, "bad.json").is_err(), "{bad}");
    }
    assert!(
        Script::parse(r#"{"strokes": []}"#, "e.json")
            .unwrap()
            .camera_at(3.0)
            .is_none()
    );
}

/// A stroke of radius 1 at spacing 0.05 along `points` (studs, on the
/// ground at y 200), as the script format writes it.
fn tiny_brush_path(points: &[[f64; 2]]) -> String {
    let path: Vec<String> = points
        .iter()
        .map(|[x, z]| format!("[{x}, 200.0, {z}]"))
        .collect();
    format!(
        r#"{{"strokes": [{{"frame": 0, "tool": "add", "radius_cells": 1.0, "strength": 1.0,
        "spacing": 0.05, "path": [{}]}}]}}"#,
        path.join(", ")
    )
}

/// The input that ran for ten minutes: one path of 101 points at radius 1
/// and spacing 0.05, each segment about 20 km long, mostly outside a
/// 1,024-stud world. About 10⁷ applications of 8 cells passed the cell
/// budget; each application's fixed cost and the bound on applications now
/// refuse it before anything runs.
#[test]
fn a_long_path_of_tiny_applications_is_refused_before_it_starts() {
    let points: Vec<[f64; 2]> = (0..101)
        .map(|i| {
            let x = if i % 2 == 0 { 500.0 } else { 20_499.0 };
            [x, 500.0 + f64::from(i)]
        })
        .collect();
    let err = Script::parse(&tiny_brush_path(&points), "long.json").expect_err("refused");
    let message = err.to_string();
    // About 10⁷ applications of (2 cells)³ + 512 cells each.
    assert!(
        message.contains("about 5.2") && message.contains("e9 cells"),
        "{message}"
    );
    // Cheap applications in great number are bounded by their count too, and
    // a single segment longer than the per-segment bound by itself.
    // Six segments of 18,000 studs: 540,001 applications, 2.8e8 cells.
    let many: Vec<[f64; 2]> = (0..7)
        .map(|i| [if i % 2 == 0 { 0.0 } else { 18_000.0 }, f64::from(i)])
        .collect();
    let err = Script::parse(&tiny_brush_path(&many), "many.json").expect_err("refused");
    assert!(err.to_string().contains("times in all"), "{err}");
    let err = Script::parse(&tiny_brush_path(&[[0.0, 0.0], [40_000.0, 0.0]]), "one.json")
        .expect_err("refused");
    assert!(err.to_string().contains("per segment"), "{err}");
}

/// The two-point version (99,950 applications, 3 s): allowed, and the
/// applications wholly outside the world are skipped, not applied.
#[test]
fn applications_wholly_outside_the_world_are_skipped() {
    let settings = GeneratorSettings {
        seed: 7,
        size_cells: 256,
    };
    let mut grid = generate_world(&settings).expect("world");
    // From x = 500.1 to 20,490.15, no centre lands on the world's edge or
    // the path's end exactly (where rounding would decide).
    let text = tiny_brush_path(&[[500.1, 500.0], [20_490.15, 500.0]]);
    let script = Script::parse(&text, "two.json").expect("allowed");
    let mut runner = ScriptRunner::for_script(&script, &grid, Some(settings));
    for stroke in &script.strokes {
        runner.run(&mut grid, &stroke.action).expect("runs");
    }
    // The sampler applies at the first point, then every 0.2 studs.
    let spacing_studs = 0.05 * 4.0;
    let total = 1 + ((20_490.15f64 - 500.1) / spacing_studs).floor() as usize;
    // Inside: centres whose 3-cell box ([x - 2, x + 2) cells around the
    // centre's cell) still overlaps x < 256 cells (1,024 studs).
    let inside = (0..total)
        .filter(|k| {
            let x_cells = (500.1 + *k as f64 * spacing_studs) / 4.0;
            (x_cells - 2.0).floor() < 256.0
        })
        .count();
    assert_eq!(runner.skipped_applications(), total - inside);
    assert!(runner.skipped_applications() > total * 9 / 10);
}

/// A replay whose meshing truly stalls (the pipeline holds every job back)
/// ends with an error after the stall limit, naming what was pending; a
/// slow machine, whose work keeps finishing, never reaches it (the stall
/// watch's own tests pace that).
#[test]
fn a_stalled_replay_fails_naming_what_was_pending() {
    let script = Script::parse(SCRIPT, "surface.json").expect("script");
    let mut grid = generate_world(&settings()).expect("world");
    let camera = DVec3::new(512.0, 300.0, 512.0);
    let mut streaming = TerrainStreaming::new(LodSettings::default());
    let mut meshes = streaming.build_initial(&grid, camera);
    streaming.pipeline_mut().set_max_in_flight_batches(0);
    let mut runner = ScriptRunner::for_script(&script, &grid, Some(settings()));
    runner.set_stall_limit(std::time::Duration::from_millis(300));
    let err = replay_script(
        &script,
        &mut grid,
        &mut meshes,
        &mut streaming,
        &mut UploadOnly(&mut NoGpu),
        Camera::new(camera, 0.0, -30.0),
        &mut runner,
    )
    .expect_err("stalled");
    let text = err.to_string();
    assert!(
        text.starts_with("meshing after the last stroke: nothing progressed for 300ms (")
            && text.contains("chunk meshes queued, 0 batches on the meshing workers"),
        "{text}"
    );
    let queued: usize = text
        .split('(')
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("a count");
    assert_eq!(queued, streaming.pipeline().queue_len());
    assert!(queued > 0, "{text}");
}
