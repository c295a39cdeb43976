//! Debug overlays, rendered headless on whatever adapter exists (llvmpipe in
//! CI): every overlay changes the image of a small generated world, the
//! `lod` tints differ between forced levels, the barycentric wireframe
//! fallback draws roughly the same edges as polygon-mode lines, seam-audit
//! markers appear exactly when there is a mismatch, republished chunks
//! flash, and `--overlay` rejects unknown names.
//!
//! GPU tests skip (with a message) only when no adapter at all can be
//! created; CI installs lavapipe, so there they must run.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use strata::app::headless::{self, HeadlessRenderer, ScreenshotOptions};
use strata::camera::Camera;
use strata::camera::frame_terrain;
use strata::editor::panel::side_panel::PanelStats;
use strata::io::world_source::WorldSource;
use strata::pipeline::lod::LodSettings;
use strata::pipeline::seam_audit::ThrottledSeamAudit;
use strata::pipeline::{ChunkUploader, WorldMeshes};
use strata::render::{FrameSettings, Overlay, OverlaySet, WireframeMode};
use strata::terrain::Grid;
use strata::terrain::generation::generate::GeneratorSettings;
use strata::terrain::storage::coords::ChunkCoord;

mod common;
use common::gpu_or_skip;

const W: u32 = 320;
const H: u32 = 180;

fn small_world() -> WorldSource {
    WorldSource::Generated(GeneratorSettings {
        seed: 7,
        size_cells: 128,
    })
}

fn grid() -> Grid {
    small_world().build().expect("a 128-cell world builds")
}

/// Chunks with x < 2 at level 0, the others at level 1: a level boundary
/// through the middle of the world.
fn mixed_levels(grid: &Grid) -> WorldMeshes {
    WorldMeshes::build(grid, &grid.meshing_candidates(), |c| {
        if c.0.x < 2 { 0 } else { 1 }
    })
}

fn render(
    headless: &mut HeadlessRenderer,
    camera: &Camera,
    settings: &FrameSettings,
) -> image::RgbaImage {
    headless
        .render(camera, settings, &PanelStats::default())
        .expect("render")
        .0
}

fn with(settings: &FrameSettings, overlays: impl IntoIterator<Item = Overlay>) -> FrameSettings {
    FrameSettings {
        overlays: overlays.into_iter().collect(),
        ..settings.clone()
    }
}

/// `settings` with the mismatches of `audit` as the seam-audit markers.
fn with_markers(settings: FrameSettings, audit: &ThrottledSeamAudit) -> FrameSettings {
    FrameSettings {
        seam_markers_world: audit.mismatch_positions_world(),
        ..settings
    }
}

fn changed_pixels(a: &image::RgbaImage, b: &image::RgbaImage, threshold: u32) -> usize {
    a.pixels()
        .zip(b.pixels())
        .filter(|(p, q)| (0..3).map(|k| p[k].abs_diff(q[k]) as u32).sum::<u32>() > threshold)
        .count()
}

fn changed_mask(a: &image::RgbaImage, b: &image::RgbaImage, threshold: u32) -> Vec<bool> {
    a.pixels()
        .zip(b.pixels())
        .map(|(p, q)| (0..3).map(|k| p[k].abs_diff(q[k]) as u32).sum::<u32>() > threshold)
        .collect()
}

fn save(img: &image::RgbaImage, name: &str) {
    if let Some(dir) = std::env::var_os("STRATA_TEST_IMAGES") {
        let _ = img.save(std::path::Path::new(&dir).join(name));
    }
}

/// Re-publishes every chunk of `meshes` through the renderer's uploader
/// (stage, then promote), as the meshing pipeline does.
fn republish(headless: &mut HeadlessRenderer, meshes: &WorldMeshes) {
    let mut uploader = headless.renderer().uploader();
    let coords: Vec<ChunkCoord> = meshes.iter().map(|(c, _)| c).collect();
    for (coord, mesh) in meshes.iter() {
        uploader.stage(coord, meshes.level_of(coord).unwrap_or(0), mesh);
    }
    uploader.promote(&coords);
}

/// The mixed-level world rendered without overlays: its grid, the
/// renderer holding its meshes, the camera, the settings and the image.
struct Scene {
    grid: Grid,
    /// The meshes the renderer holds.
    meshes: WorldMeshes,
    headless: HeadlessRenderer,
    camera: Camera,
    settings: FrameSettings,
    plain: image::RgbaImage,
}

fn plain_scene(gpu: &strata::render::Gpu) -> Scene {
    let grid = grid();
    let mut meshes = mixed_levels(&grid);
    let mut headless = HeadlessRenderer::new(gpu.clone(), [W, H], false).expect("renderer");
    headless.sync_meshes(&mut meshes);
    let camera = frame_terrain(&grid, meshes.bounds_world(), W as f32 / H as f32);
    let settings = FrameSettings::for_camera(&camera, meshes.bounds_world());
    let plain = render(&mut headless, &camera, &settings);
    Scene {
        grid,
        meshes,
        headless,
        camera,
        settings,
        plain,
    }
}

#[test]
fn every_overlay_changes_the_image() {
    let Some(gpu) = gpu_or_skip("every_overlay_changes_the_image") else {
        return;
    };
    let Scene {
        mut meshes,
        mut headless,
        camera,
        settings,
        plain,
        ..
    } = plain_scene(&gpu);
    save(&plain, "overlay-plain.png");

    for overlay in [
        Overlay::Lod,
        Overlay::Chunks,
        Overlay::Wireframe,
        Overlay::Seams,
    ] {
        let img = render(&mut headless, &camera, &with(&settings, [overlay]));
        save(&img, &format!("overlay-{}.png", overlay.name()));
        let changed = changed_pixels(&plain, &img, 30);
        eprintln!("  {}: {changed} pixels changed", overlay.name());
        assert!(
            changed > (W * H / 50) as usize,
            "{}: only {changed} pixels changed",
            overlay.name()
        );
    }

    // Nothing was republished: the remesh and seam-audit overlays (no
    // mismatch in a correct world) leave the image exactly as it was.
    let mut seam_audit = ThrottledSeamAudit::default();
    let revision = headless.renderer().mesh_revision();
    seam_audit.update(&meshes, None, revision, Instant::now());
    assert_eq!(seam_audit.count(), Some(0));
    let quiet = render(
        &mut headless,
        &camera,
        &with_markers(
            with(&settings, [Overlay::Remesh, Overlay::SeamAudit]),
            &seam_audit,
        ),
    );
    assert_eq!(changed_pixels(&plain, &quiet, 0), 0);

    // Republished chunks flash.
    republish(&mut headless, &meshes);
    let flash = render(&mut headless, &camera, &with(&settings, [Overlay::Remesh]));
    save(&flash, "overlay-remesh.png");
    let changed = changed_pixels(&plain, &flash, 30);
    eprintln!("  remesh: {changed} pixels changed");
    assert!(
        changed > (W * H / 10) as usize,
        "remesh flash changed {changed} pixels"
    );

    // A boundary vertex moved in one chunk: the audit finds it and the
    // overlay marks it.
    let coord = meshes
        .iter()
        .map(|(c, _)| c)
        .filter(|c| c.0.x == 0 && meshes.level_of(ChunkCoord(c.0 + glam::IVec3::X)) == Some(0))
        .min_by_key(|c| (c.0.z, c.0.y))
        .expect("a level-0 chunk with a level-0 neighbour in +x");
    let mut mesh = (**meshes.get(coord).expect("mesh")).clone();
    let v = (0..mesh.skirt_start_vertex as usize)
        .find(|&v| mesh.vertex_cubes[v][0] == 31)
        .expect("a vertex on the +x border");
    mesh.positions[v].y += 3.0;
    meshes.set_published(coord, 0, Arc::new(mesh), None);
    republish(&mut headless, &meshes);
    let revision = headless.renderer().mesh_revision();
    seam_audit.update(&meshes, None, revision, Instant::now());
    let found = seam_audit.count().unwrap_or(0);
    assert!(found > 0, "the moved vertex is a mismatch");
    let unmarked = render(
        &mut headless,
        &camera,
        &with_markers(settings.clone(), &seam_audit),
    );
    let marked = render(
        &mut headless,
        &camera,
        &with_markers(with(&settings, [Overlay::SeamAudit]), &seam_audit),
    );
    save(&marked, "overlay-seam-audit.png");
    let changed = changed_pixels(&unmarked, &marked, 30);
    eprintln!("  seam-audit: {found} mismatches, {changed} pixels changed");
    assert!(changed > 20, "seam-audit markers changed {changed} pixels");
}

#[test]
fn skirt_overlays_tint_and_hide_skirts() {
    let Some(gpu) = gpu_or_skip("skirt_overlays_tint_and_hide_skirts") else {
        return;
    };
    // A checkerboard of level-1 chunks: every chunk border is open, so the
    // skirts hang in plain view like curtains.
    let grid = grid();
    let coords: Vec<ChunkCoord> = grid
        .meshing_candidates()
        .into_iter()
        .filter(|c| (c.0.x + c.0.z).rem_euclid(2) == 0)
        .collect();
    let mut meshes = WorldMeshes::build(&grid, &coords, |_| 1);
    let mut headless = HeadlessRenderer::new(gpu, [W, H], false).expect("renderer");
    headless.sync_meshes(&mut meshes);
    let camera = frame_terrain(&grid, meshes.bounds_world(), W as f32 / H as f32);
    let settings = FrameSettings::for_camera(&camera, meshes.bounds_world());
    let plain = render(&mut headless, &camera, &settings);
    let tinted = render(&mut headless, &camera, &with(&settings, [Overlay::Skirts]));
    let hidden = render(
        &mut headless,
        &camera,
        &with(&settings, [Overlay::HideSkirts]),
    );
    save(&tinted, "overlay-skirts.png");
    save(&hidden, "overlay-hide-skirts.png");
    let by_tint = changed_mask(&plain, &tinted, 30);
    let by_hiding = changed_mask(&plain, &hidden, 30);
    let (n_tint, n_hide) = (
        by_tint.iter().filter(|&&m| m).count(),
        by_hiding.iter().filter(|&&m| m).count(),
    );
    eprintln!("  skirts: {n_tint} pixels tinted, {n_hide} changed by hiding");
    assert!(
        n_tint > (W * H / 100) as usize,
        "skirts tinted {n_tint} pixels"
    );
    assert!(
        n_hide > (W * H / 100) as usize,
        "hiding skirts changed {n_hide} pixels"
    );
    // The tint is magenta: where it changed a pixel, red and blue rose
    // relative to green (partly covered edge pixels shift less, but still toward magenta).
    let magenta = tinted
        .pixels()
        .zip(plain.pixels())
        .zip(&by_tint)
        .filter(|((t, p), m)| {
            let shift = |c: &image::Rgba<u8>, i: usize| c[i] as i32 - c[1] as i32;
            **m && shift(t, 0) - shift(p, 0) > 10 && shift(t, 2) - shift(p, 2) > 10
        })
        .count();
    assert!(
        magenta * 10 > n_tint * 9,
        "{magenta} of {n_tint} tinted pixels shifted toward magenta"
    );
    // What the tint marks is what hiding removes.
    let both = by_tint
        .iter()
        .zip(&by_hiding)
        .filter(|(a, b)| **a && **b)
        .count();
    assert!(
        both * 2 > n_tint,
        "only {both} of {n_tint} tinted pixels disappear when hidden"
    );
}

#[test]
fn barycentric_wireframe_draws_the_same_edges_as_polygon_lines() {
    let Some(gpu) = gpu_or_skip("barycentric_wireframe_draws_the_same_edges_as_polygon_lines")
    else {
        return;
    };
    if !WireframeMode::barycentric_supported(&gpu.adapter) {
        eprintln!("SKIPPING: this adapter has no vertex-stage storage buffers");
        return;
    }
    let grid = grid();
    // Close enough that triangles are several pixels wide, so the edge
    // patterns can be compared.
    let camera = {
        let meshes = WorldMeshes::build(&grid, &grid.meshing_candidates(), |_| 1);
        let (lo, hi) = meshes.bounds_world().expect("terrain");
        let centre = (lo + hi) * 0.5;
        let mut c = Camera::new(
            glam::DVec3::new(centre.x, hi.y + 40.0, centre.z + 60.0),
            0.0,
            -40.0,
        );
        c.aspect = W as f32 / H as f32;
        c
    };
    let mut maps = Vec::new();
    for mode in [WireframeMode::Barycentric, WireframeMode::PolygonLines] {
        if mode == WireframeMode::PolygonLines
            && !gpu
                .device
                .features()
                .contains(wgpu::Features::POLYGON_MODE_LINE)
        {
            eprintln!("  no POLYGON_MODE_LINE: comparing the barycentric mode with plain only");
            continue;
        }
        let mut headless = HeadlessRenderer::new(gpu.clone(), [W, H], false).expect("renderer");
        // Before uploading: the barycentric mode reads chunk buffers as storage.
        headless.renderer().set_wireframe_mode(mode);
        assert_eq!(headless.renderer().wireframe_mode(), mode);
        let mut meshes = WorldMeshes::build(&grid, &grid.meshing_candidates(), |_| 1);
        headless.sync_meshes(&mut meshes);
        let settings = FrameSettings::for_camera(&camera, meshes.bounds_world());
        let plain = render(&mut headless, &camera, &settings);
        let wire = render(
            &mut headless,
            &camera,
            &with(&settings, [Overlay::Wireframe]),
        );
        save(
            &wire,
            &format!("overlay-wireframe-{}.png", mode.name().replace(' ', "-")),
        );
        let n = changed_pixels(&plain, &wire, 24);
        eprintln!("  {}: {n} pixels changed", mode.name());
        assert!(
            n > (W * H / 20) as usize,
            "{}: {n} pixels changed",
            mode.name()
        );
        maps.push(darkening(&plain, &wire));
    }
    if let [bary, lines] = &maps[..] {
        // Edges are about a pixel wide and rasterized differently
        // (anti-aliased vs. aliased lines): compare the band-passed maps of
        // where the two darken the image. The same edges correlate; the
        // same pattern shifted by a few pixels does not.
        let (a, b) = (edge_pattern(bary), edge_pattern(lines));
        let r = correlation(&a, &b);
        let shifted = correlation(&a, &shift(&b, 3));
        eprintln!("  correlation {r:.2} (shifted by 3 px: {shifted:.2})");
        assert!(r > 0.6, "edge maps correlate only {r:.2}");
        assert!(r > shifted + 0.2, "aligned {r:.2} vs shifted {shifted:.2}");
    }
}

/// Per-pixel darkening of `img` relative to `base` (luma, 0..255).
fn darkening(base: &image::RgbaImage, img: &image::RgbaImage) -> Vec<f64> {
    let luma = |p: &image::Rgba<u8>| 0.3 * p[0] as f64 + 0.59 * p[1] as f64 + 0.11 * p[2] as f64;
    base.pixels()
        .zip(img.pixels())
        .map(|(p, q)| (luma(p) - luma(q)).max(0.0))
        .collect()
}

/// Box blur of radius `r` pixels (edge pixels repeated).
fn blur(m: &[f64], r: i64) -> Vec<f64> {
    let (w, h) = (W as i64, H as i64);
    let mut out = vec![0.0; m.len()];
    let taps = ((2 * r + 1) * (2 * r + 1)) as f64;
    for y in 0..h {
        for x in 0..w {
            let mut s = 0.0;
            for dy in -r..=r {
                for dx in -r..=r {
                    let (sx, sy) = ((x + dx).clamp(0, w - 1), (y + dy).clamp(0, h - 1));
                    s += m[(sy * w + sx) as usize];
                }
            }
            out[(y * w + x) as usize] = s / taps;
        }
    }
    out
}

/// The edge pattern of a darkening map: a 3×3 blur minus an 11×11 blur,
/// which removes the overall density of lines and keeps where they run.
fn edge_pattern(m: &[f64]) -> Vec<f64> {
    blur(m, 1)
        .iter()
        .zip(blur(m, 5))
        .map(|(a, b)| a - b)
        .collect()
}

/// `m` moved right by `dx` pixels (edge pixels repeated).
fn shift(m: &[f64], dx: i64) -> Vec<f64> {
    let (w, h) = (W as i64, H as i64);
    (0..h)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .map(|(x, y)| m[(y * w + (x - dx).clamp(0, w - 1)) as usize])
        .collect()
}

fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let (mut ab, mut aa, mut bb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        ab += (x - ma) * (y - mb);
        aa += (x - ma) * (x - ma);
        bb += (y - mb) * (y - mb);
    }
    ab / (aa * bb).sqrt().max(1e-12)
}

/// Mean colour of `img` minus `base` over the pixels where they differ.
fn mean_shift(base: &image::RgbaImage, img: &image::RgbaImage) -> [f64; 3] {
    let mut sum = [0.0f64; 3];
    let mut n = 0.0f64;
    for (p, q) in base.pixels().zip(img.pixels()) {
        if (0..3).map(|k| p[k].abs_diff(q[k]) as u32).sum::<u32>() > 12 {
            for k in 0..3 {
                sum[k] += q[k] as f64 - p[k] as f64;
            }
            n += 1.0;
        }
    }
    sum.map(|s| s / n.max(1.0))
}

#[test]
fn lod_tints_differ_between_forced_levels() {
    if gpu_or_skip("lod_tints_differ_between_forced_levels").is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("strata-overlays-{}", std::process::id()));
    let shot = |level: u8, overlays: OverlaySet| -> image::RgbaImage {
        let output: PathBuf = dir.join(format!("lod-{level}-{}.png", overlays.bits()));
        let options = ScreenshotOptions {
            output: output.clone(),
            size_px: [W, H],
            camera: None,
            ui: false,
            stats_json: None,
            script: None,
            lod: LodSettings {
                force_level: Some(level),
                ..LodSettings::default()
            },
            overlays,
            time_secs: 0.0,
            replay_frames: true,
            record_dir: None,
            level_fades: true,
        };
        let stats = headless::render_screenshot(&small_world(), &options).expect("screenshot");
        assert_eq!(stats.seam_audit_mismatches, 0);
        assert_eq!(stats.chunks_by_level[level as usize], stats.nonempty_chunks);
        image::open(&output).expect("png").to_rgba8()
    };
    let lod = OverlaySet::from(Overlay::Lod);
    let (plain1, lod1) = (shot(1, OverlaySet::NONE), shot(1, lod));
    let (plain2, lod2) = (shot(2, OverlaySet::NONE), shot(2, lod));
    save(&lod1, "overlay-lod-level1.png");
    save(&lod2, "overlay-lod-level2.png");
    let _ = std::fs::remove_dir_all(&dir);
    let (d1, d2) = (mean_shift(&plain1, &lod1), mean_shift(&plain2, &lod2));
    eprintln!("  tint shift level 1 {d1:.1?}, level 2 {d2:.1?}");
    // Level 1 is green, level 2 yellow: level 2 pulls red up and blue down
    // far more than level 1 does.
    assert!(
        d2[0] - d1[0] > 25.0,
        "red: level 1 {d1:.1?}, level 2 {d2:.1?}"
    );
    assert!(
        d1[1] > d1[0] && d1[1] > d1[2],
        "level 1 tint should be green: {d1:.1?}"
    );
    assert!(
        d2[0] > d2[2] && d2[1] > d2[2],
        "level 2 tint should be yellow: {d2:.1?}"
    );
}

fn strata() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
}

#[test]
fn cli_rejects_unknown_overlay_names() {
    let out = strata()
        .args(["--headless", "--screenshot", "x.png", "--overlay", "bogus"])
        .output()
        .expect("run strata");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "--overlay bogus should fail");
    assert!(stderr.contains("bogus"), "{stderr}");
    for name in Overlay::ALL.map(Overlay::name) {
        assert!(
            stderr.contains(name),
            "the error should list {name}: {stderr}"
        );
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn cli_draws_repeated_overlays() {
    if gpu_or_skip("cli_draws_repeated_overlays").is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("strata-overlay-cli-{}", std::process::id()));
    let png = dir.join("shot.png");
    let json = dir.join("stats.json");
    let out = strata()
        .args(["--headless", "--ui", "--screenshot"])
        .arg(&png)
        .args(["--size", "480x200", "--world-size", "128", "--seed", "7"])
        .args([
            "--overlay",
            "lod",
            "--overlay",
            "chunks",
            "--overlay",
            "seam-audit",
        ])
        .arg("--stats-json")
        .arg(&json)
        .output()
        .expect("run strata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let img = image::open(&png).expect("png written").to_rgba8();
    assert_eq!(img.dimensions(), (480, 200));
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("valid json");
    assert_eq!(stats["seam_audit_mismatches"].as_u64(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn residency_overlay_tints_resident_columns_by_state_and_outlines_loading_ones() {
    use strata::render::lines::residency_overlay::{ResidencyTint, ResidencyView};
    use strata::terrain::storage::coords::ColumnCoord;
    let Some(gpu) = gpu_or_skip("residency_overlay_tints_resident_columns_by_state") else {
        return;
    };
    let Scene {
        grid,
        mut headless,
        camera,
        settings,
        plain,
        ..
    } = plain_scene(&gpu);
    let columns: Vec<ColumnCoord> = grid.chunks().map(|(c, _)| ColumnCoord::of(c)).collect();
    let all = |tint| ResidencyView::from_states(columns.iter().map(|c| (*c, tint)));
    let on = with(&settings, [Overlay::Residency]);
    let with_view = |view| FrameSettings {
        residency: view,
        ..on.clone()
    };
    // Without a view (a world that does not stream) the overlay draws nothing.
    let none = render(&mut headless, &camera, &with_view(None));
    assert_eq!(changed_pixels(&plain, &none, 0), 0);
    let clean = render(
        &mut headless,
        &camera,
        &with_view(Some(all(ResidencyTint::Clean))),
    );
    save(&clean, "overlay-residency-clean.png");
    let edited = render(
        &mut headless,
        &camera,
        &with_view(Some(all(ResidencyTint::Edited))),
    );
    save(&edited, "overlay-residency-edited.png");
    let big = (W * H / 50) as usize;
    let (c1, c2) = (
        changed_pixels(&plain, &clean, 30),
        changed_pixels(&clean, &edited, 30),
    );
    assert!(c1 > big && c2 > big, "{c1} and {c2} pixels changed");
    // Blue over resident ground, orange over edited ground.
    let mean = |img: &image::RgbaImage| {
        let mut sum = [0u64; 3];
        for p in img.pixels() {
            for i in 0..3 {
                sum[i] += u64::from(p[i]);
            }
        }
        sum
    };
    let (b, o) = (mean(&clean), mean(&edited));
    assert!(b[2] > o[2] && o[0] > b[0], "blue {b:?} vs orange {o:?}");
    // A loading column beside the world is outlined (it has no mesh).
    let loading = ResidencyView::from_states([(ColumnCoord::new(-1, 0), ResidencyTint::Loading)]);
    let outlined = render(&mut headless, &camera, &with_view(Some(loading)));
    save(&outlined, "overlay-residency-loading.png");
    assert!(changed_pixels(&plain, &outlined, 30) > 50);
}
