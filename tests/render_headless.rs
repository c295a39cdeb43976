//! Headless rendering on whatever adapter exists (llvmpipe in CI): the image
//! shows sky and terrain, follows the camera, draws the UI panel, and stays
//! precise a million cells from the origin.
//!
//! Each test skips (with a message) only when no adapter at all can be
//! created; CI installs lavapipe, so there they must run.

use glam::{DVec3, IVec3};

use strata::app::headless::HeadlessRenderer;
use strata::camera::Camera;
use strata::camera::frame_terrain;
use strata::editor::panel::side_panel::PanelStats;
use strata::editor::tools::brush_cursor::BrushCursor;
use strata::pipeline::WorldMeshes;
use strata::render::FrameSettings;
use strata::terrain::editing::brush::BrushMode;
use strata::terrain::storage::coords::{CELL_SIZE_STUDS, CellBox};
use strata::terrain::{Cell, Grid, Material};

mod common;
use common::gpu_or_skip;

const W: u32 = 320;
const H: u32 = 180;

/// Rolling hills from a tiny local height function, `size` cells square,
/// starting at cell `offset` (grass on top, rock below, sand in the valleys).
fn hills(offset: IVec3, size: i32) -> Grid {
    let mut grid = Grid::new();
    let region = CellBox::new(offset, offset + IVec3::new(size, 40, size));
    grid.edit_region(region, |cell, _| {
        let p = cell.0 - offset;
        let (x, z) = (p.x as f64, p.z as f64);
        let h = 14.0 + 6.0 * (x * 0.09).sin() * (z * 0.07).cos() + 4.0 * ((x + z) * 0.05).sin();
        let y = p.y as f64 + 0.5;
        let fill = (h - y + 0.5).clamp(0.0, 1.0);
        let occ = (fill * 255.0).round() as u8;
        let material = if h < 12.0 {
            Material::SAND
        } else if y < h - 3.0 {
            Material::ROCK
        } else {
            Material::GRASS
        };
        Cell::new(material, occ)
    })
    .expect("region is small");
    grid
}

fn render(
    headless: &mut HeadlessRenderer,
    camera: &Camera,
    settings: &FrameSettings,
) -> image::RgbaImage {
    let (img, report) = headless
        .render(camera, settings, &PanelStats::default())
        .expect("render");
    eprintln!(
        "  frame: {} chunks, {} triangles, {:.0} ms",
        report.drawn_chunks, report.drawn_triangles, report.render_ms
    );
    img
}

fn differing_pixels(a: &image::RgbaImage, b: &image::RgbaImage, threshold: u32) -> usize {
    a.pixels()
        .zip(b.pixels())
        .filter(|(p, q)| (0..3).map(|k| p[k].abs_diff(q[k]) as u32).sum::<u32>() > threshold)
        .count()
}

#[test]
fn renders_sky_and_terrain_and_follows_the_camera() {
    let Some(gpu) = gpu_or_skip("renders_sky_and_terrain_and_follows_the_camera") else {
        return;
    };
    let grid = hills(IVec3::ZERO, 96);
    let mut meshes = WorldMeshes::build_all(&grid);
    assert!(!meshes.is_empty());
    let mut headless = HeadlessRenderer::new(gpu, [W, H], false).expect("renderer");
    headless.sync_meshes(&mut meshes);
    let camera = frame_terrain(&grid, meshes.bounds_world(), W as f32 / H as f32);
    let settings = FrameSettings::for_camera(&camera, meshes.bounds_world());
    let img = render(&mut headless, &camera, &settings);

    // Sky: the top rows are bluish (blue channel dominates red).
    let top: Vec<_> = (0..W).flat_map(|x| (0..4).map(move |y| (x, y))).collect();
    let (r, b) = top.iter().fold((0u32, 0u32), |(r, b), &(x, y)| {
        let p = img.get_pixel(x, y);
        (r + p[0] as u32, b + p[2] as u32)
    });
    assert!(
        b > r + 10 * top.len() as u32,
        "top rows should be sky blue (r {r}, b {b})"
    );
    let sky = *img.get_pixel(W / 2, 0);

    // Terrain: a good share of pixels differs clearly from the sky colour.
    let terrain = img
        .pixels()
        .filter(|p| (0..3).map(|k| p[k].abs_diff(sky[k]) as u32).sum::<u32>() > 60)
        .count();
    let frac = terrain as f64 / (W * H) as f64;
    assert!(
        frac > 0.15,
        "terrain should cover the view, got {:.1}%",
        frac * 100.0
    );

    // Moving and turning the camera changes the image.
    let mut moved = camera;
    moved.fly(camera.pos_world.length() * 0.2, 40.0, -20.0);
    moved.rotate(25.0, 8.0);
    let img2 = render(&mut headless, &moved, &settings);
    let changed = differing_pixels(&img, &img2, 30) as f64 / (W * H) as f64;
    assert!(
        changed > 0.2,
        "moving the camera changed only {:.1}% of pixels",
        changed * 100.0
    );

    // The brush ring shows up where the sphere meets the surface.
    let centre = DVec3::new(48.0, 14.0, 48.0) * CELL_SIZE_STUDS as f64;
    let with_brush = FrameSettings {
        cursor: Some(
            BrushCursor {
                centre_world: centre,
                radius_studs: 40.0,
                mode: BrushMode::Add,
                shape: strata::terrain::editing::brush::BrushShape::Sphere,
                falloff: strata::terrain::editing::brush::Falloff::Smooth,
            }
            .cursor(),
        ),
        ..settings.clone()
    };
    let img3 = render(&mut headless, &camera, &with_brush);
    if let Some(dir) = std::env::var_os("STRATA_TEST_IMAGES") {
        let dir = std::path::Path::new(&dir);
        let _ = img.save(dir.join("hills.png"));
        let _ = img2.save(dir.join("hills-moved.png"));
        let _ = img3.save(dir.join("hills-brush.png"));
    }
    let brushed = differing_pixels(&img, &img3, 30);
    assert!(brushed > 50, "brush ring changed only {brushed} pixels");
}

#[test]
fn far_from_origin_renders_as_precisely_as_at_the_origin() {
    let Some(gpu) = gpu_or_skip("far_from_origin_renders_as_precisely_as_at_the_origin") else {
        return;
    };
    // The same hills at the origin and 16 million cells (64 million studs,
    // where f32 resolves only 8 studs) away, seen from the same relative
    // camera at a fractional position: silhouettes must agree. (Casting the
    // camera position to f32 before subtracting shifts the far image by
    // several studs, which this catches.)
    let far = IVec3::new(1 << 24, 0, -(1 << 24));
    let mut headless = HeadlessRenderer::new(gpu, [W, H], false).expect("renderer");
    let mut masks = Vec::new();
    for offset in [IVec3::ZERO, far] {
        let base = offset.as_dvec3() * CELL_SIZE_STUDS as f64;
        let mut camera = Camera::new(base + DVec3::new(-60.3, 110.7, 330.6), 30.0, -22.0);
        camera.aspect = W as f32 / H as f32;
        // Sky alone first: the sky depends only on the view direction, so
        // "differs from the sky-only frame" is an exact terrain mask.
        headless.renderer().clear_meshes();
        let sky = render(&mut headless, &camera, &FrameSettings::default());
        let grid = hills(offset, 64);
        let mut meshes = WorldMeshes::build_all(&grid);
        headless.sync_meshes(&mut meshes);
        let img = render(&mut headless, &camera, &FrameSettings::default());
        if let Some(dir) = std::env::var_os("STRATA_TEST_IMAGES") {
            let _ = img.save(std::path::Path::new(&dir).join(format!("far-{}.png", offset.x)));
        }
        let mask: Vec<bool> = img
            .pixels()
            .zip(sky.pixels())
            .map(|(p, q)| (0..3).map(|k| p[k].abs_diff(q[k]) as u32).sum::<u32>() > 12)
            .collect();
        let covered = mask.iter().filter(|&&m| m).count();
        assert!(covered > (W * H / 5) as usize && covered < (W * H * 9 / 10) as usize);
        masks.push(mask);
    }
    let disagree = masks[0]
        .iter()
        .zip(&masks[1])
        .filter(|(a, b)| a != b)
        .count();
    eprintln!("  silhouettes disagree on {disagree} pixels");
    assert!(
        disagree < (W * H / 1000) as usize,
        "{disagree} pixels differ between origin and far-away silhouettes"
    );
}

#[test]
fn ui_panel_is_drawn_into_the_image() {
    let Some(gpu) = gpu_or_skip("ui_panel_is_drawn_into_the_image") else {
        return;
    };
    let grid = hills(IVec3::ZERO, 64);
    let mut meshes = WorldMeshes::build_all(&grid);
    let size = [480, 270];
    let mut plain = HeadlessRenderer::new(gpu.clone(), size, false).expect("renderer");
    let mut with_ui = HeadlessRenderer::new(gpu, size, true).expect("renderer");
    plain.sync_meshes(&mut meshes);
    let mut meshes2 = WorldMeshes::build_all(&grid);
    with_ui.sync_meshes(&mut meshes2);
    let camera = frame_terrain(&grid, meshes.bounds_world(), 1.0);
    let settings = FrameSettings::default();
    let a = render(&mut plain, &camera, &settings);
    let b = render(&mut with_ui, &camera, &settings);
    // The panel covers the left edge: nearly every pixel there changes.
    let mut changed = 0;
    for y in 0..size[1] {
        for x in 0..100 {
            let (p, q) = (a.get_pixel(x, y), b.get_pixel(x, y));
            if (0..3).map(|k| p[k].abs_diff(q[k]) as u32).sum::<u32>() > 30 {
                changed += 1;
            }
        }
    }
    assert!(
        changed > 100 * size[1] / 2,
        "panel changed only {changed} pixels"
    );
}

fn strata() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
}

#[test]
fn cli_rejects_bad_flags_with_clear_errors() {
    for (args, needle) in [
        (
            &["--headless", "--screenshot", "x.png", "--size", "0x5"][..],
            "each side must be",
        ),
        (
            &["--headless", "--screenshot", "x.png", "--camera", "1,2,3"][..],
            "5 comma-separated",
        ),
        (
            &[
                "--headless",
                "--screenshot",
                "x.png",
                "--camera",
                "1,2,3,4,up",
            ][..],
            "PITCH_DEG",
        ),
        (
            &["--headless", "--screenshot", "x.png", "--world-size", "100"][..],
            "multiple of",
        ),
        (&["--headless"][..], "--screenshot"),
    ] {
        let out = strata().args(args).output().expect("run strata");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    }
    let out = strata()
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("run strata");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no display found"));
}

#[test]
fn cli_writes_screenshot_and_stats() {
    if gpu_or_skip("cli_writes_screenshot_and_stats").is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("strata-cli-{}", std::process::id()));
    let png = dir.join("shot.png");
    let json = dir.join("stats.json");
    common::run_ok(
        strata()
            .args(["--headless", "--screenshot"])
            .arg(&png)
            .args(["--size", "200x120", "--world-size", "128", "--seed", "7"])
            .arg("--stats-json")
            .arg(&json),
    );
    let img = image::open(&png).expect("png written").to_rgba8();
    assert_eq!(img.dimensions(), (200, 120));
    let stats = common::read_json(&json);
    for key in [
        "adapter",
        "chunks",
        "nonempty_chunks",
        "uniform_chunks",
        "grid_bytes",
        "world_volume_cells",
        "vertices",
        "triangles",
        "mesh_ms",
    ] {
        assert!(stats.get(key).is_some(), "stats.json lacks {key}: {stats}");
    }
    assert!(stats["triangles"].as_u64().unwrap_or(0) > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn record_writes_every_replayed_frame_as_a_png() {
    if gpu_or_skip("record_writes_every_replayed_frame_as_a_png").is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("strata-record-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let frames_dir = dir.join("frames");
    let script = dir.join("dolly.json");
    // A short dolly: the camera moves on every frame, nothing is edited.
    std::fs::write(
        &script,
        r#"{"strokes": [
            {"frame": 0, "camera": [64, 200, 300, 0, -30]},
            {"frame": 11, "camera": [64, 200, 200, 0, -30]}
        ]}"#,
    )
    .unwrap();
    // A longer, earlier recording in the same folder: its frames go.
    std::fs::create_dir_all(&frames_dir).unwrap();
    std::fs::write(frames_dir.join("frame_00099.png"), b"stale").unwrap();
    let json = dir.join("stats.json");
    common::run_ok(
        strata()
            .args(["--headless", "--world-size", "128", "--seed", "7"])
            .args(["--size", "96x64", "--screenshot"])
            .arg(dir.join("shot.png"))
            .arg("--script")
            .arg(&script)
            .arg("--record")
            .arg(&frames_dir)
            .arg("--stats-json")
            .arg(&json),
    );
    let stats = common::read_json(&json);
    let replayed = stats["script_frames"].as_u64().expect("script_frames");
    assert!(replayed >= 12, "{replayed}");
    let mut names: Vec<String> = std::fs::read_dir(&frames_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let expected: Vec<String> = (0..replayed).map(|f| format!("frame_{f:05}.png")).collect();
    assert_eq!(names, expected, "one PNG per replayed frame");
    let first = image::open(frames_dir.join("frame_00000.png"))
        .unwrap()
        .to_rgba8();
    let last = image::open(frames_dir.join("frame_00011.png"))
        .unwrap()
        .to_rgba8();
    assert_eq!(first.dimensions(), (96, 64));
    assert!(
        differing_pixels(&first, &last, 30) > 200,
        "the dolly moved the view"
    );
    // --record without a rendered run is refused up front.
    let out = strata()
        .args(["--headless", "--world-size", "128", "--script"])
        .arg(&script)
        .arg("--record")
        .arg(&frames_dir)
        .arg("--save")
        .arg(dir.join("w.strata"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--record needs --screenshot"));
    let _ = std::fs::remove_dir_all(&dir);
}
