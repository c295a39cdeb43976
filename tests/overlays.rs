//! Debug overlays, rendered headless on whatever adapter exists (llvmpipe in
//! CI): every overlay draws what it must where it must on a small generated
//! world (checked pixel by pixel against pick rays through the pixel
//! corners and projected chunk boxes), the `lod` tints differ between forced
//! levels, the barycentric wireframe fallback draws roughly the same edges
//! as polygon-mode lines (the adapter must offer both), seam-audit markers
//! appear exactly when and where there is a mismatch, republished chunks
//! flash, and `--overlay` rejects unknown names.
//!
//! GPU tests fail (saying why) when no graphics adapter can be created.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use rustc_hash::FxHashSet;
use strata::app::headless::{self, HeadlessRenderer, ScreenshotOptions};
use strata::camera::Camera;
use strata::camera::frame_terrain;
use strata::editor::panel::side_panel::PanelStats;
use strata::io::world::world_source::WorldSource;
use strata::pipeline::lod::LodSettings;
use strata::pipeline::seam_audit::ThrottledSeamAudit;
use strata::pipeline::{ChunkUploader, WorldMeshes};
use strata::render::lines::overlays::LEVEL_TINTS_SRGB;
use strata::render::{FrameSettings, Overlay, OverlaySet, WireframeMode};
use strata::terrain::Grid;
use strata::terrain::generation::generate::GeneratorSettings;
use strata::terrain::storage::coords::{CHUNK_SIZE_STUDS, ChunkCoord};

mod common;
use common::pixels::{
    Cover, PickGrid, blend_factor, channel_error, linear, linear_of, overlay_tint,
    projected_box_edges, segment_distance, srgb,
};
use common::require_gpu;

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

/// Each overlay draws what it must where it must, checked pixel by pixel
/// against the plain image and the scene's geometry (pick rays through the
/// pixel corners, chunk boxes projected with the camera): `lod` and
/// `seams` tint each chunk's pixels by exactly its level's colour and its
/// coordinate's hue and leave the sky alone; `chunks` draws light lines
/// only along the projected chunk box edges, and over the sky everywhere
/// an edge runs; `wireframe` darkens the terrain and leaves the open sky
/// alone; the remesh flash blends every republished chunk toward its flash
/// colour by one common amount; seam-audit markers are absent without a
/// mismatch and drawn at the projected mismatch, nowhere else, with one.
#[test]
fn every_overlay_changes_the_image() {
    let gpu = require_gpu("every_overlay_changes_the_image");
    let Scene {
        mut meshes,
        mut headless,
        camera,
        settings,
        plain,
        ..
    } = plain_scene(&gpu);
    save(&plain, "overlay-plain.png");
    let picks = PickGrid::new(&camera, &meshes, W, H);

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
        match overlay {
            Overlay::Lod => assert_tinted_per_chunk(&plain, &img, &picks, "lod", 0.6, |c| {
                let level = meshes.level_of(c).expect("a shown chunk has a level");
                linear_of(LEVEL_TINTS_SRGB[level as usize])
            }),
            Overlay::Seams => {
                assert_tinted_per_chunk(&plain, &img, &picks, "seams", 0.65, chunk_hue_tint)
            }
            Overlay::Chunks => assert_chunk_lines(&plain, &img, &picks, &meshes, &camera),
            Overlay::Wireframe => assert_wireframe_darkens_terrain(&plain, &img, &picks),
            _ => unreachable!(),
        }
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
    assert_one_flash(&plain, &flash, &picks);

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
    let marks: Vec<glam::DVec3> = seam_audit.mismatch_positions_world();
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
    assert_markers_at(&unmarked, &marked, &marks, &camera);
}

/// The `seams` tint of chunk `c` (linear): `chunk_hue` and `hsv_to_rgb(h,
/// 0.8, 1)` of `shaders/terrain.wgsl`.
fn chunk_hue_tint(c: ChunkCoord) -> glam::Vec3 {
    let [x, y, z] = c.0.to_array().map(|v| v as u32);
    let mut h =
        x.wrapping_mul(0x8da6_b343) ^ y.wrapping_mul(0xd816_3841) ^ z.wrapping_mul(0xcb1a_b31f);
    h = (h ^ (h >> 16)).wrapping_mul(0x7feb_352d);
    h = (h ^ (h >> 15)).wrapping_mul(0x846c_a68b);
    h ^= h >> 16;
    let hue = (h >> 8) as f32 / 16_777_216.0;
    let k = (glam::Vec3::splat(hue) + glam::Vec3::new(0.0, 2.0 / 3.0, 1.0 / 3.0)).fract() * 6.0;
    let rgb = ((k - 3.0).abs() - 1.0).clamp(glam::Vec3::ZERO, glam::Vec3::ONE);
    glam::Vec3::ONE.lerp(rgb, 0.8)
}

/// Every pixel wholly inside one chunk is the plain pixel with `tint(chunk)`
/// blended over it by `amount` (as `overlay_tint` does), within 3 levels
/// (all but 1%: water over a chunk blends its tinted bed); the open sky is
/// untouched.
fn assert_tinted_per_chunk(
    plain: &image::RgbaImage,
    img: &image::RgbaImage,
    picks: &PickGrid,
    name: &str,
    amount: f32,
    tint: impl Fn(ChunkCoord) -> glam::Vec3,
) {
    let (mut inside, mut exact, mut chunks) = (0usize, 0usize, FxHashSet::default());
    for (x, y) in picks.pixels() {
        let (p, q) = (plain.get_pixel(x, y), img.get_pixel(x, y));
        match picks.cover(x, y) {
            Cover::Chunk(c) => {
                inside += 1;
                let want = srgb(overlay_tint(linear(p), tint(c), amount));
                if channel_error(q, want) <= 3 {
                    exact += 1;
                    chunks.insert(c);
                }
            }
            Cover::Sky if picks.open_sky(x, y, 1) => {
                assert_eq!(p, q, "{name}: sky pixel ({x}, {y}) changed");
            }
            _ => {}
        }
    }
    eprintln!("  {name}: {exact} of {inside} pixels inside a chunk tinted as predicted");
    assert!(
        inside > (W * H / 10) as usize,
        "{name}: {inside} pixels inside chunks"
    );
    assert!(
        exact * 100 >= inside * 99,
        "{name}: only {exact} of {inside} pixels inside a chunk carry its tint"
    );
    assert!(
        chunks.len() >= 20,
        "{name}: tints checked on {} chunks",
        chunks.len()
    );
}

/// `chunks`: every pixel the lines change lies within 1.5 px of a
/// projected edge of a chunk box (x and z over the chunk, y over its
/// mesh's height range), and moves toward the light line colour; over the
/// open sky (nothing to hide a line) the pixels an edge passes through
/// change.
fn assert_chunk_lines(
    plain: &image::RgbaImage,
    img: &image::RgbaImage,
    picks: &PickGrid,
    meshes: &WorldMeshes,
    camera: &Camera,
) {
    let mut edges = Vec::new();
    for (coord, mesh) in meshes.iter() {
        let Some((lo, hi)) = mesh.bounds_local() else {
            continue;
        };
        let y_lo = lo.y.clamp(0.0, CHUNK_SIZE_STUDS);
        let y_hi = hi.y.clamp(y_lo, CHUNK_SIZE_STUDS);
        let origin = coord.origin_world();
        edges.extend(projected_box_edges(
            camera,
            origin + glam::DVec3::new(0.0, f64::from(y_lo), 0.0),
            origin
                + glam::DVec3::new(
                    f64::from(CHUNK_SIZE_STUDS),
                    f64::from(y_hi),
                    f64::from(CHUNK_SIZE_STUDS),
                ),
            W,
            H,
        ));
    }
    // Light grey-white (CHUNK_LINE_COLOR).
    let line = linear_of([250, 250, 235]);
    let (mut changed, mut near, mut lighter) = (0usize, 0usize, 0usize);
    let (mut on_sky, mut on_sky_drawn) = (0usize, 0usize);
    for (x, y) in picks.pixels() {
        let centre = (x as f32 + 0.5, y as f32 + 0.5);
        let d = edges
            .iter()
            .map(|&(a, b)| segment_distance(centre, a, b))
            .fold(f32::INFINITY, f32::min);
        let (p, q) = (plain.get_pixel(x, y), img.get_pixel(x, y));
        let differs = (0..3).map(|k| p[k].abs_diff(q[k]) as u32).sum::<u32>() > 12;
        if differs {
            changed += 1;
            near += usize::from(d <= 1.5);
            lighter += usize::from(blend_factor(linear(p), line, linear(q)) > 0.0);
        }
        if d <= 0.3 && picks.open_sky(x, y, 1) {
            on_sky += 1;
            on_sky_drawn += usize::from(differs);
        }
    }
    eprintln!(
        "  chunks: {near} of {changed} changed pixels on an edge, {lighter} lighter; \
         {on_sky_drawn} of {on_sky} edge pixels over the sky drawn"
    );
    assert!(
        near * 1000 >= changed * 995,
        "chunks: {} changed pixels lie off every chunk edge",
        changed - near
    );
    assert!(
        lighter * 100 >= changed * 99,
        "chunks: only {lighter} of {changed} changed pixels moved toward the line colour"
    );
    assert!(
        on_sky > 100,
        "chunks: {on_sky} edge pixels over the open sky"
    );
    assert!(
        on_sky_drawn * 100 >= on_sky * 95,
        "chunks: only {on_sky_drawn} of {on_sky} edge pixels over the sky show a line"
    );
}

/// `wireframe` (from afar every pixel of terrain holds triangle edges):
/// the terrain darkens toward the near-black line colour, the open sky is
/// untouched.
fn assert_wireframe_darkens_terrain(
    plain: &image::RgbaImage,
    img: &image::RgbaImage,
    picks: &PickGrid,
) {
    let line = glam::Vec3::new(0.01, 0.012, 0.02);
    let (mut inside, mut darker) = (0usize, 0usize);
    for (x, y) in picks.pixels() {
        let (p, q) = (plain.get_pixel(x, y), img.get_pixel(x, y));
        match picks.cover(x, y) {
            Cover::Chunk(_) => {
                inside += 1;
                darker += usize::from(blend_factor(linear(p), line, linear(q)) > 0.2);
            }
            Cover::Sky if picks.open_sky(x, y, 2) => {
                assert_eq!(p, q, "wireframe: sky pixel ({x}, {y}) changed");
            }
            _ => {}
        }
    }
    eprintln!("  wireframe: {darker} of {inside} terrain pixels darkened");
    assert!(
        darker * 100 >= inside * 99,
        "wireframe: only {darker} of {inside} terrain pixels darkened"
    );
}

/// The remesh flash: every pixel inside a chunk moved toward the flash
/// colour by one common amount (all chunks were promoted together), at
/// most 0.8.
fn assert_one_flash(plain: &image::RgbaImage, flash: &image::RgbaImage, picks: &PickGrid) {
    let colour = glam::Vec3::new(1.0, 0.95, 0.6);
    let mut factors: Vec<f32> = picks
        .pixels()
        .filter(|&(x, y)| matches!(picks.cover(x, y), Cover::Chunk(_)))
        .map(|(x, y)| {
            blend_factor(
                linear(plain.get_pixel(x, y)),
                colour,
                linear(flash.get_pixel(x, y)),
            )
        })
        .collect();
    factors.sort_by(f32::total_cmp);
    let median = factors[factors.len() / 2];
    let close = factors
        .iter()
        .filter(|f| (*f - median).abs() < 0.03)
        .count();
    eprintln!(
        "  remesh: flash amount {median:.3} on {close} of {} pixels",
        factors.len()
    );
    assert!(median > 0.05 && median <= 0.81, "flash amount {median}");
    assert!(
        close * 100 >= factors.len() * 99,
        "remesh: only {close} of {} pixels flash by the common amount {median:.3}",
        factors.len()
    );
}

/// Seam-audit markers: a red pixel (MARKER_COLOR) within 2 px of every
/// projected mismatch, and no changed pixel outside the projected extent of
/// the markers (a box and three axis lines 1.8 half-sizes long around each).
fn assert_markers_at(
    unmarked: &image::RgbaImage,
    marked: &image::RgbaImage,
    marks: &[glam::DVec3],
    camera: &Camera,
) {
    let red = linear_of([255, 30, 30]);
    let mut extents = Vec::new();
    for &m in marks {
        let (cx, cy) = camera
            .project_to_screen(m, W as f32, H as f32)
            .expect("the mismatch is in front of the camera");
        let reddest = (-2i32..=2)
            .flat_map(|dy| (-2i32..=2).map(move |dx| (dx, dy)))
            .filter_map(|(dx, dy)| {
                let (x, y) = (cx as i32 + dx, cy as i32 + dy);
                ((0..W as i32).contains(&x) && (0..H as i32).contains(&y)).then(|| {
                    let (p, q) = (
                        unmarked.get_pixel(x as u32, y as u32),
                        marked.get_pixel(x as u32, y as u32),
                    );
                    blend_factor(linear(p), red, linear(q))
                })
            })
            .fold(f32::NEG_INFINITY, f32::max);
        assert!(
            reddest > 0.5,
            "no marker at the mismatch {m:?} (pixel {cx:.1}, {cy:.1}): reddest {reddest:.2}"
        );
        let half = ((m - camera.pos_world).length() * 0.012).max(1.5) * 1.8;
        let reach = projected_box_edges(
            camera,
            m - glam::DVec3::splat(half),
            m + glam::DVec3::splat(half),
            W,
            H,
        );
        let (mut x0, mut y0, mut x1, mut y1) = (cx, cy, cx, cy);
        for (a, b) in reach {
            for (x, y) in [a, b] {
                (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
            }
        }
        extents.push((x0 - 1.5, y0 - 1.5, x1 + 1.5, y1 + 1.5));
    }
    for (i, (p, q)) in unmarked.pixels().zip(marked.pixels()).enumerate() {
        if (0..3).map(|k| p[k].abs_diff(q[k]) as u32).sum::<u32>() > 12 {
            let (x, y) = ((i as u32 % W) as f32 + 0.5, (i as u32 / W) as f32 + 0.5);
            assert!(
                extents
                    .iter()
                    .any(|&(x0, y0, x1, y1)| (x0..=x1).contains(&x) && (y0..=y1).contains(&y)),
                "seam-audit changed pixel ({x}, {y}), away from every marker"
            );
        }
    }
}

#[test]
fn skirt_overlays_tint_and_hide_skirts() {
    let gpu = require_gpu("skirt_overlays_tint_and_hide_skirts");
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
    let gpu = require_gpu("barycentric_wireframe_draws_the_same_edges_as_polygon_lines");
    assert!(
        WireframeMode::barycentric_supported(&gpu.adapter),
        "this adapter ({}) has no vertex-stage storage buffers, so the barycentric \
         wireframe cannot be tested on it",
        gpu.adapter_summary()
    );
    assert!(
        gpu.device
            .features()
            .contains(wgpu::Features::POLYGON_MODE_LINE),
        "this adapter ({}) has no POLYGON_MODE_LINE, so the barycentric wireframe \
         cannot be compared with polygon-mode lines on it",
        gpu.adapter_summary()
    );
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
    let [bary, lines] = &maps[..] else {
        unreachable!("both modes rendered")
    };
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
    require_gpu("lod_tints_differ_between_forced_levels");
    let dir = std::env::temp_dir().join(format!("strata-overlays-{}", std::process::id()));
    let shot = |level: u8, overlays: OverlaySet| -> image::RgbaImage {
        let output: PathBuf = dir.join(format!("lod-{level}-{}.png", overlays.bits()));
        let options = ScreenshotOptions {
            stall_limit: strata::pipeline::stall_watch::DEFAULT_STALL_LIMIT,
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
            record_real_time: false,
            level_fades: true,
            base_source: None,
            document: None,
            materials: Default::default(),
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
    require_gpu("cli_draws_repeated_overlays");
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
    let gpu = require_gpu("residency_overlay_tints_resident_columns_by_state");
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
