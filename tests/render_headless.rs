//! Headless rendering on whatever adapter exists (llvmpipe in CI): the image
//! shows sky and terrain, follows the camera, draws the brush cursor where
//! its sphere meets the surface, draws the UI panel beside an unchanged 3D
//! view, and stays precise a million cells from the origin; the binary's
//! screenshot and statistics equal the library's for the same world.
//!
//! Each test fails (saying why) when no graphics adapter can be created.

use glam::{DVec3, IVec3};

use strata::app::headless::HeadlessRenderer;
use strata::camera::Camera;
use strata::camera::frame_terrain;
use strata::editor::panel::side_panel::{PANEL_WIDTH_POINTS, PanelStats};
use strata::editor::tools::brush_cursor::BrushCursor;
use strata::pipeline::TerrainStreaming;
use strata::pipeline::WorldMeshes;
use strata::pipeline::lod::LodSettings;
use strata::render::FrameSettings;
use strata::terrain::editing::brush::BrushMode;
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};
use strata::terrain::storage::coords::{CELL_SIZE_STUDS, CellBox};
use strata::terrain::{Cell, Grid, Material};

mod common;
use common::pixels::{PickGrid, blend_factor, channel_error, linear, srgb};
use common::require_gpu;

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
    let gpu = require_gpu("renders_sky_and_terrain_and_follows_the_camera");
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
    assert_brush_drawn(
        &img,
        &img3,
        &PickGrid::new(&camera, &meshes, W, H),
        centre,
        40.0,
    );
}

/// The brush cursor of an Add sphere (smooth falloff) of `radius_studs`
/// at `centre_world`, checked against the surface the pixel corners' pick
/// rays hit (`d`: their distance from the centre): outside the sphere the
/// image is untouched; well inside it the plain pixel is blended toward
/// the Add colour by `0.06 + 0.3 · (1 − smoothstep(d / r))`, within 3
/// levels; the strongly coloured ring pixels lie at the sphere's edge, all
/// around it.
fn assert_brush_drawn(
    plain: &image::RgbaImage,
    brushed: &image::RgbaImage,
    picks: &PickGrid,
    centre_world: DVec3,
    radius_studs: f64,
) {
    // The Add colour (linear), as the shader's brush_color.
    let add = glam::Vec3::new(0.25, 0.9, 0.35);
    let r = radius_studs;
    let (mut outside, mut outside_same, mut inside, mut inside_exact) = (0, 0, 0, 0);
    let mut ring_octants = [0usize; 8];
    let (mut ring, mut ring_at_edge) = (0, 0);
    for (x, y) in picks.pixels() {
        let corners = picks.corners(x, y);
        let Some(hits) = corners.iter().copied().collect::<Option<Vec<_>>>() else {
            continue;
        };
        let d: Vec<f64> = hits
            .iter()
            .map(|h| (h.pos_world - centre_world).length())
            .collect();
        let (d_min, d_max) = d
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
        let d_mid = d.iter().sum::<f64>() / 4.0;
        // fwidth(d) is at most the spread over the pixel, twice; the ring
        // band is max(6% of r, 2 fwidth) wide.
        let fw = 2.0 * (d_max - d_min);
        let band = (0.06 * r).max(2.0 * fw);
        let (p, q) = (plain.get_pixel(x, y), brushed.get_pixel(x, y));
        if d_min > r + 0.5 {
            outside += 1;
            outside_same += usize::from(p == q);
        } else if d_max < r - band - fw - 0.5 {
            inside += 1;
            let t = (d_mid / r).clamp(0.0, 1.0) as f32;
            let weight = 1.0 - t * t * (3.0 - 2.0 * t);
            let want = srgb(linear(p).lerp(add, 0.06 + 0.3 * weight));
            inside_exact += usize::from(channel_error(q, want) <= 3);
        }
        if blend_factor(linear(p), add, linear(q)) > 0.5 {
            ring += 1;
            if d_max >= r - 2.0 * band - fw && d_min <= r + 0.5 {
                ring_at_edge += 1;
            }
            let o = hits[0].pos_world - centre_world;
            let angle = o.z.atan2(o.x) + std::f64::consts::PI;
            ring_octants[((angle / std::f64::consts::FRAC_PI_4) as usize).min(7)] += 1;
        }
    }
    eprintln!(
        "  brush: {outside_same} of {outside} outside untouched, {inside_exact} of {inside} \
         inside blended as predicted, {ring_at_edge} of {ring} ring pixels at the edge, \
         by octant {ring_octants:?}"
    );
    assert!(
        outside_same * 1000 >= outside * 995,
        "the brush changed {} pixels outside its sphere",
        outside - outside_same
    );
    assert!(inside > 50, "{inside} pixels well inside the brush");
    assert!(
        inside_exact * 100 >= inside * 99,
        "only {inside_exact} of {inside} pixels inside the brush carry its tint"
    );
    assert!(ring >= 50, "{ring} ring pixels");
    assert_eq!(
        ring_at_edge, ring,
        "ring pixels away from the sphere's edge"
    );
    assert!(
        ring_octants.iter().all(|&n| n >= 5),
        "the ring does not show all around: {ring_octants:?}"
    );
}

#[test]
fn far_from_origin_renders_as_precisely_as_at_the_origin() {
    let gpu = require_gpu("far_from_origin_renders_as_precisely_as_at_the_origin");
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

/// The editor panel covers the image left of the 3D viewport with its
/// background (egui's dark panel fill) and widgets; right of it the image
/// is exactly the 3D view of the same camera rendered at the viewport's
/// size.
#[test]
fn ui_panel_is_drawn_into_the_image() {
    let gpu = require_gpu("ui_panel_is_drawn_into_the_image");
    let grid = hills(IVec3::ZERO, 64);
    let mut meshes = WorldMeshes::build_all(&grid);
    let size = [480, 270];
    let mut plain = HeadlessRenderer::new(gpu.clone(), size, false).expect("renderer");
    let mut with_ui = HeadlessRenderer::new(gpu.clone(), size, true).expect("renderer");
    plain.sync_meshes(&mut meshes);
    let mut meshes2 = WorldMeshes::build_all(&grid);
    with_ui.sync_meshes(&mut meshes2);
    let camera = frame_terrain(&grid, meshes.bounds_world(), 1.0);
    let settings = FrameSettings::default();
    let a = render(&mut plain, &camera, &settings);
    let (b, report) = with_ui
        .render(&camera, &settings, &PanelStats::default())
        .expect("render");
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

    // The panel's rectangle: its background colour on most pixels (the
    // rest are its text and widgets), and the 3D view nowhere.
    let viewport = report.viewport.expect("a frame reports its viewport");
    let panel_px = viewport.x as u32;
    assert_eq!(
        panel_px,
        PANEL_WIDTH_POINTS.round() as u32,
        "panel width, px"
    );
    assert_eq!(
        (viewport.width as u32, viewport.height as u32),
        (size[0] - panel_px, size[1])
    );
    let fill = egui::Visuals::dark().panel_fill;
    let fill = [fill.r(), fill.g(), fill.b()];
    let in_panel = panel_px * size[1];
    let background = (0..size[1])
        .flat_map(|y| (0..panel_px).map(move |x| (x, y)))
        .filter(|&(x, y)| b.get_pixel(x, y).0[..3] == fill)
        .count() as u32;
    eprintln!("  panel: {background} of {in_panel} pixels in its background colour {fill:?}");
    assert!(
        background * 10 >= in_panel * 7,
        "only {background} of {in_panel} panel pixels show its background {fill:?}"
    );

    // Right of it: the 3D view alone, as a renderer of the viewport's size
    // draws it.
    let mut view_only =
        HeadlessRenderer::new(gpu, [size[0] - panel_px, size[1]], false).expect("renderer");
    let mut meshes3 = WorldMeshes::build_all(&grid);
    view_only.sync_meshes(&mut meshes3);
    let view = render(&mut view_only, &camera, &settings);
    let mut off = 0;
    for y in 0..size[1] {
        for x in panel_px + 1..size[0] {
            let (p, q) = (b.get_pixel(x, y), view.get_pixel(x - panel_px, y));
            off += usize::from((0..3).any(|k| p[k].abs_diff(q[k]) > 2));
        }
    }
    assert_eq!(
        off, 0,
        "{off} pixels right of the panel differ from the 3D view"
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

/// The binary's screenshot and statistics equal what the library computes
/// here for the same world (seed 7, 128 cells) and the same framing camera:
/// the world hash and grid figures of the generated grid, the meshes built
/// for that camera at their distance levels, the camera itself, and the
/// image rendered from those meshes.
#[test]
fn cli_writes_screenshot_and_stats() {
    let gpu = require_gpu("cli_writes_screenshot_and_stats");
    let dir = std::env::temp_dir().join(format!("strata-cli-{}", std::process::id()));
    let png = dir.join("shot.png");
    let json = dir.join("stats.json");
    let (w, h) = (200u32, 120u32);
    common::run_ok(
        strata()
            .args(["--headless", "--screenshot"])
            .arg(&png)
            .args(["--size", "200x120", "--world-size", "128", "--seed", "7"])
            .arg("--stats-json")
            .arg(&json),
    );
    let img = image::open(&png).expect("png written").to_rgba8();
    assert_eq!(img.dimensions(), (w, h));
    let stats = common::read_json(&json);
    let _ = std::fs::remove_dir_all(&dir);

    // The same world, camera and meshes, computed here.
    let grid = generate_world(&GeneratorSettings {
        seed: 7,
        size_cells: 128,
    })
    .expect("the world generates");
    let camera = frame_terrain(&grid, None, w as f32 / h as f32);
    let mut meshes =
        TerrainStreaming::new(LodSettings::default()).build_initial(&grid, camera.pos_world);
    let (mut vertices, mut triangles) = (0usize, 0usize);
    let mut chunks_by_level = [0usize; 4];
    let mut triangles_by_level = [0usize; 4];
    for (coord, mesh) in meshes.iter() {
        let level = meshes.level_of(coord).expect("a shown mesh has a level") as usize;
        vertices += mesh.positions.len();
        triangles += mesh.indices.len() / 3;
        chunks_by_level[level] += 1;
        triangles_by_level[level] += mesh.indices.len() / 3;
    }
    let bounds = grid.bounds_cells().expect("the world has chunks");
    let expected = serde_json::json!({
        "adapter": gpu.adapter_summary(),
        "chunks": grid.chunk_count(),
        "nonempty_chunks": meshes.len(),
        "world_hash": format!("{:016x}", grid.content_hash()),
        "uniform_chunks": grid.uniform_chunk_count(),
        "grid_bytes": grid.heap_bytes(),
        "world_volume_cells": bounds.volume_cells(),
        "vertices": vertices,
        "triangles": triangles,
        "chunks_by_level": chunks_by_level,
        "triangles_by_level": triangles_by_level,
        "width": w,
        "height": h,
        "seam_audit_mismatches": 0,
        "script_frames": 0,
        "history_steps": 0,
    });
    for (key, want) in expected.as_object().expect("an object") {
        assert_eq!(&stats[key], want, "stats.json {key}: {stats}");
    }
    assert!(stats["triangles"].as_u64().unwrap_or(0) > 0);
    // Timings cannot be predicted, only be sane.
    let mesh_ms = stats["mesh_ms"].as_f64().expect("mesh_ms is a number");
    assert!(mesh_ms.is_finite() && mesh_ms >= 0.0, "mesh_ms {mesh_ms}");
    // The camera framing the world, and every chunk in its view drawn.
    let cam = stats["camera"].as_array().expect("camera array");
    let want = [
        camera.pos_world.x,
        camera.pos_world.y,
        camera.pos_world.z,
        f64::from(camera.yaw_deg),
        f64::from(camera.pitch_deg),
    ];
    for (got, want) in cam.iter().zip(want) {
        let got = got.as_f64().expect("a number");
        assert!(
            (got - want).abs() < 1e-6,
            "camera {cam:?}, expected {want:?}"
        );
    }
    assert_eq!(cam.len(), 5);
    assert_eq!(stats["drawn_chunks"], stats["nonempty_chunks"], "{stats}");

    // The image: the same meshes rendered from the same camera.
    let mut headless = HeadlessRenderer::new(gpu, [w, h], false).expect("renderer");
    headless.sync_meshes(&mut meshes);
    headless.renderer().finish_fades();
    let settings = FrameSettings::for_camera(&camera, meshes.bounds_world());
    let here = render(&mut headless, &camera, &settings);
    let off = differing_pixels(&img, &here, 6);
    assert!(
        off == 0,
        "{off} pixels of the binary's screenshot differ from the library's render"
    );
}

#[test]
fn record_writes_every_replayed_frame_as_a_png() {
    require_gpu("record_writes_every_replayed_frame_as_a_png");
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

/// `--record` into a folder that does not exist yet (two levels of it)
/// makes the folders and writes one PNG per replayed frame, as
/// `--screenshot` makes its folder.
#[test]
fn record_into_a_new_folder_writes_the_frames() {
    let dir = std::env::temp_dir().join(format!("strata-record-new-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let script = dir.join("s.json");
    std::fs::write(
        &script,
        r#"{"strokes": [{"frame": 0, "tool": "add", "centre_xz": [64, 64],
            "radius_cells": 4, "strength": 1}, {"frame": 2, "tool": "subtract",
            "centre_xz": [80, 80], "radius_cells": 4, "strength": 1}]}"#,
    )
    .expect("script");
    let frames = dir.join("new").join("deeper");
    let out = strata()
        .args([
            "--headless",
            "--world-size",
            "64",
            "--size",
            "64x36",
            "--script",
        ])
        .arg(&script)
        .arg("--record")
        .arg(&frames)
        .arg("--screenshot")
        .arg(dir.join("shot.png"))
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read_dir(&frames)
        .expect("the folder was made")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().starts_with("frame_"))
        })
        .count();
    assert!(written >= 3, "{written} frames");
    let _ = std::fs::remove_dir_all(&dir);
}
