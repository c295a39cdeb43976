//! Sky seen through the ground (spec §13: "the visible ground is always
//! covered"), measured in the picture: the `holes` overlay paints exactly
//! the sky pixels whose view ray reaches the world's floor inside its
//! footprint, and a recorded flight over a streaming world counts them per
//! frame (`"coverage"` in `--stats-json`).
//!
//! GPU tests fail (saying why) when no graphics adapter can be created.

use std::path::PathBuf;

use glam::DVec3;
use strata::app::headless::HeadlessRenderer;
use strata::app::sky_holes::count_hole_pixels;
use strata::editor::panel::side_panel::PanelStats;
use strata::pipeline::{ChunkUploader, WorldMeshes};
use strata::render::frame::frame_settings::GroundExtent;
use strata::render::{FrameSettings, Overlay};
use strata::terrain::generation::generate::GeneratorSettings;
use strata::terrain::storage::coords::{CHUNK_SIZE_STUDS, ChunkCoord};

mod common;
use common::{read_json, require_gpu, run_ok};

const W: u32 = 320;
const H: u32 = 180;

fn strata() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-sky-holes-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

/// A whole 128-cell world drawn with the overlay shows no hole; without one
/// chunk column's meshes it shows holes, all inside that column's
/// projected box; and without the overlay nothing is painted the hole colour.
#[test]
fn the_holes_overlay_paints_only_sky_seen_through_missing_ground() {
    let gpu = require_gpu("the_holes_overlay_paints_only_sky_seen_through_missing_ground");
    let grid = strata::io::world::world_source::WorldSource::Generated(GeneratorSettings {
        seed: 7,
        size_cells: 128,
    })
    .build()
    .expect("a 128-cell world builds");
    let mut meshes = WorldMeshes::build(&grid, &grid.meshing_candidates(), |_| 0);
    let mut headless = HeadlessRenderer::new(gpu, [W, H], false).expect("renderer");
    headless.sync_meshes(&mut meshes);
    // High over the world (the overlay judges from over the footprint),
    // looking steeply down at the chunk column at (1, 1), so rays through
    // it reach the floor inside the footprint.
    let mut camera = strata::camera::Camera::new(DVec3::new(192.0, 1500.0, 300.0), 0.0, -85.0);
    camera.aspect = W as f32 / H as f32;
    let side = 128.0 * 4.0;
    let mut settings = FrameSettings::for_camera(&camera, meshes.bounds_world());
    settings.ground = Some(GroundExtent {
        min_xz_world: glam::DVec2::ZERO,
        max_xz_world: glam::DVec2::splat(side),
        reach_studs: 1.0e6,
    });
    let render = |headless: &mut HeadlessRenderer, settings: &FrameSettings| {
        headless
            .render(&camera, settings, &PanelStats::default())
            .expect("render")
            .0
    };
    let plain = render(&mut headless, &settings);
    assert_eq!(count_hole_pixels(&plain), 0, "no overlay, no hole colour");
    settings.overlays.set(Overlay::Holes, true);
    let whole = render(&mut headless, &settings);
    assert_eq!(
        count_hole_pixels(&whole),
        0,
        "the whole world covers its floor"
    );

    // Take the meshes of the chunk column at (1, 1) out of the renderer.
    let column: Vec<ChunkCoord> = meshes
        .iter()
        .map(|(c, _)| c)
        .filter(|c| c.0.x == 1 && c.0.z == 1)
        .collect();
    assert!(!column.is_empty());
    headless.renderer().uploader().evict(&column);
    let holed = render(&mut headless, &settings);
    if let Some(dir) = std::env::var_os("STRATA_TEST_IMAGES") {
        let _ = whole.save(std::path::Path::new(&dir).join("holes-whole.png"));
        let _ = holed.save(std::path::Path::new(&dir).join("holes-column-out.png"));
    }
    let holes = count_hole_pixels(&holed);
    assert!(holes > 100, "{holes} hole pixels");
    // Every hole pixel lies inside the column's box as projected.
    let c = f64::from(CHUNK_SIZE_STUDS);
    let top = column.iter().map(|k| k.0.y + 1).max().unwrap_or(1);
    let (mut x0, mut y0, mut x1, mut y1) = (f32::MAX, f32::MAX, f32::MIN, f32::MIN);
    for i in 0..8 {
        let p = DVec3::new(
            c * if i & 1 == 0 { 1.0 } else { 2.0 },
            if i & 2 == 0 { 0.0 } else { c * f64::from(top) },
            c * if i & 4 == 0 { 1.0 } else { 2.0 },
        );
        let (x, y) = camera
            .project_to_screen(p, W as f32, H as f32)
            .expect("the column is in front of the camera");
        (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
    }
    for (x, y, p) in holed.enumerate_pixels() {
        if p.0[..3] == [255, 0, 255] {
            let (fx, fy) = (x as f32 + 0.5, y as f32 + 0.5);
            assert!(
                fx >= x0 - 2.0 && fx <= x1 + 2.0 && fy >= y0 - 2.0 && fy <= y1 + 2.0,
                "hole pixel ({x}, {y}) outside the column's box [{x0}, {x1}] × [{y0}, {y1}]"
            );
        }
    }
}

/// A flight over a streaming world, recorded with the overlay: every frame
/// is counted and none shows the sky through the ground, frame-locked or
/// paced by the wall clock (`--real-time`).
#[test]
fn a_recorded_flight_counts_holes_in_every_frame_and_finds_none() {
    let _gpu = require_gpu("a_recorded_flight_counts_holes_in_every_frame_and_finds_none");
    let dir = scratch("flight");
    let script = dir.join("flight.json");
    // 6 km in 2 s, 1,400 studs up (over the highest hills: a camera inside
    // a hill sees the floor through the hill's back faces), over a
    // 2,048-cell (8 km) world.
    std::fs::write(
        &script,
        r#"{"frame_rate_hz": 20, "strokes": [
            {"frame": 0, "camera": [1000, 1400, 4000, 90, -25]},
            {"frame": 40, "camera": [7000, 1400, 4000, 90, -25]}
        ]}"#,
    )
    .expect("script");
    for real_time in [false, true] {
        let frames = dir.join(format!("frames-{real_time}"));
        let json = dir.join(format!("s-{real_time}.json"));
        let mut cmd = strata();
        cmd.args([
            "--headless",
            "--stream",
            "--world-size",
            "2048",
            "--seed",
            "7",
        ])
        .args(["--size", "160x90", "--overlay", "holes", "--screenshot"])
        .arg(dir.join("shot.png"))
        .arg("--script")
        .arg(&script)
        .arg("--record")
        .arg(&frames)
        .arg("--stats-json")
        .arg(&json);
        if real_time {
            cmd.arg("--real-time");
        }
        run_ok(&mut cmd);
        let v = read_json(&json);
        let c = &v["coverage"];
        assert_eq!(c["real_time"], real_time, "{c}");
        assert_eq!(c["holes_counted"], true, "{c}");
        let recorded = std::fs::read_dir(&frames).expect("frames").count();
        assert_eq!(c["frames"].as_u64(), Some(recorded as u64), "{c}");
        let by_frame = c["hole_pixels_by_frame"].as_array().expect("per frame");
        assert_eq!(by_frame.len(), recorded);
        assert_eq!(c["frames_with_holes"], 0, "{c}");
        assert_eq!(c["most_hole_pixels"], 0, "{c}");
        if !real_time {
            assert!(recorded >= 41, "every script frame recorded: {recorded}");
        }
        assert!(
            c["frame_ms"]["p50"].as_f64().is_some_and(|ms| ms > 0.0),
            "{c}"
        );
    }
}

/// The input that showed specks where the level changes on steep rock
/// (the Islands recipe, a gully seen from 500 studs up): a level-1
/// chunk's skirt, half a sample spacing deep, ended above its level-0
/// neighbour's border and 64 pixels showed the sky. The settled view now
/// shows none. Since the f32 erosion the gully differs: at 640×360 this
/// view still shows 3 sky pixels with half-spacing skirts and none with
/// the current ones; at 1280×720 a thin crack where a level change runs
/// down a cliff face shows (14 pixels), a defect the skirts do not cover
/// and other views of the old terrain showed too.
#[test]
fn steep_rock_across_a_level_change_shows_no_sky() {
    let _gpu = require_gpu("steep_rock_across_a_level_change_shows_no_sky");
    let dir = scratch("ridge");
    let shot = dir.join("ridge.png");
    run_ok(
        strata()
            .args(["--headless", "--stream", "--recipe"])
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/assets/recipes/islands.json"
            ))
            .args(["--seed", "1", "--world-size", "1024"])
            .args(["--camera=1200,500,2600,60,-8", "--size", "640x360"])
            .args(["--overlay", "holes", "--screenshot"])
            .arg(&shot),
    );
    let img = image::open(&shot).expect("screenshot").to_rgba8();
    assert_eq!(count_hole_pixels(&img), 0);
}

/// A world held whole has no ground extent for the overlay, so a recording
/// of it says the holes were not counted (it said they were, and none).
#[test]
fn a_whole_world_recording_says_holes_were_not_counted() {
    let _gpu = require_gpu("a_whole_world_recording_says_holes_were_not_counted");
    let dir = scratch("whole");
    let script = dir.join("dolly.json");
    std::fs::write(
        &script,
        r#"{"frame_rate_hz": 20, "strokes": [
            {"frame": 0, "camera": [64, 300, 700, 0, -30]},
            {"frame": 3, "camera": [300, 300, 700, 0, -30]}
        ]}"#,
    )
    .expect("script");
    let json = dir.join("s.json");
    run_ok(
        strata()
            .args(["--headless", "--world-size", "128", "--seed", "7"])
            .args(["--size", "96x64", "--overlay", "holes", "--screenshot"])
            .arg(dir.join("shot.png"))
            .arg("--script")
            .arg(&script)
            .arg("--record")
            .arg(dir.join("frames"))
            .arg("--stats-json")
            .arg(&json),
    );
    let c = &read_json(&json)["coverage"];
    assert_eq!(c["holes_counted"], false, "{c}");
    assert_eq!(
        c["hole_pixels_by_frame"].as_array().map(Vec::len),
        Some(0),
        "{c}"
    );
    assert!(c["frames"].as_u64().is_some_and(|f| f >= 4), "{c}");
}
