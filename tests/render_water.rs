//! Water rendering on whatever adapter exists (llvmpipe in CI): a hand-built
//! pond shows water-coloured pixels, its shallow bed shows through, the
//! waves animate only the water, and new water appears only when the
//! pipeline promotes it.
//!
//! Each test fails (saying why) when no graphics adapter can be created.

use std::sync::Arc;

use glam::{DVec3, IVec3};

use strata::app::headless::HeadlessRenderer;
use strata::camera::Camera;
use strata::editor::panel::side_panel::PanelStats;
use strata::pipeline::world_meshes::mesh_water_one;
use strata::pipeline::{ChunkUploader, WorldMeshes};
use strata::render::{FrameSettings, Gpu};
use strata::terrain::storage::coords::{CELL_SIZE_STUDS, CellBox};
use strata::terrain::{Cell, ChunkCoord, Grid, Material};

mod common;
use common::require_gpu;

const W: u32 = 320;
const H: u32 = 180;
/// Pond centre (cells, x and z), radius of the bowl (cells) and water level
/// (cells: rows below it hold water where the bowl is lower).
const CENTRE: f64 = 20.0;
const BOWL_RADIUS: f64 = 12.0;
const WATER_ROWS: i32 = 10;
/// Bed height of the bowl's centre and of the land around it, cells.
const BED_DEEPEST: f64 = 3.0;
const LAND: f64 = 12.0;

/// Height of the ground (cells) at cell column `(x, z)`: a sandy bowl,
/// deepest in the middle, rising to the grass around it.
fn ground_height(x: f64, z: f64) -> f64 {
    let r = ((x - CENTRE).powi(2) + (z - CENTRE).powi(2)).sqrt();
    if r >= BOWL_RADIUS {
        LAND
    } else {
        BED_DEEPEST + (LAND - BED_DEEPEST) * (r / BOWL_RADIUS).powi(2)
    }
}

/// A 40 × 40-cell patch with the bowl; `water` fills it up to
/// [`WATER_ROWS`] (else the bowl stays dry, with the very same terrain).
fn pond(water: bool) -> Grid {
    let mut grid = Grid::new();
    let region = CellBox::new(IVec3::ZERO, IVec3::new(40, 16, 40));
    grid.edit_region(region, |cell, _| {
        let (x, y, z) = (cell.0.x as f64 + 0.5, cell.0.y, cell.0.z as f64 + 0.5);
        let h = ground_height(x, z);
        let fill = (h - y as f64).clamp(0.0, 1.0);
        if fill > 0.0 {
            let material = if h < LAND - 0.5 {
                Material::SAND
            } else {
                Material::GRASS
            };
            Cell::new(material, (fill * 255.0).round().max(1.0) as u8)
        } else if water && y < WATER_ROWS {
            Cell::full(Material::WATER)
        } else {
            Cell::EMPTY
        }
    })
    .expect("region is small");
    grid
}

/// Looking at the pond from the south, 40° down.
fn camera() -> Camera {
    let s = CELL_SIZE_STUDS as f64;
    let target = DVec3::new(CENTRE * s, WATER_ROWS as f64 * s, CENTRE * s);
    let mut cam = Camera::new(target + DVec3::new(0.0, 70.0, 85.0), 0.0, 0.0);
    cam.look_at(target);
    cam.aspect = W as f32 / H as f32;
    cam
}

fn renderer_with(gpu: Gpu, grid: &Grid) -> HeadlessRenderer {
    let mut meshes = WorldMeshes::build_all(grid);
    let mut headless = HeadlessRenderer::new(gpu, [W, H], false).expect("renderer");
    headless.sync_meshes(&mut meshes);
    headless
}

fn render(headless: &mut HeadlessRenderer, time_secs: f32) -> image::RgbaImage {
    let settings = FrameSettings {
        time_secs,
        ..FrameSettings::for_view_distance(150.0)
    };
    let (img, report) = headless
        .render(&camera(), &settings, &PanelStats::default())
        .expect("render");
    eprintln!(
        "  frame at t={time_secs}: {} chunks, {} triangles, {:.0} ms",
        report.drawn_chunks, report.drawn_triangles, report.render_ms
    );
    img
}

fn save(name: &str, img: &image::RgbaImage) {
    if let Some(dir) = std::env::var_os("STRATA_TEST_IMAGES") {
        let _ = img.save(std::path::Path::new(&dir).join(name));
    }
}

/// Mean RGB of the 5 × 5 pixels around where the world point (studs) lands.
fn patch(img: &image::RgbaImage, pos_world: DVec3) -> [f64; 3] {
    let (px, py) = camera()
        .project_to_screen(pos_world, W as f32, H as f32)
        .expect("point in front of the camera");
    let (cx, cy) = (px.round() as i64, py.round() as i64);
    let mut sum = [0.0; 3];
    let mut n = 0.0;
    for y in cy - 2..=cy + 2 {
        for x in cx - 2..=cx + 2 {
            assert!(
                x >= 0 && y >= 0 && x < W as i64 && y < H as i64,
                "patch off screen"
            );
            let p = img.get_pixel(x as u32, y as u32);
            for k in 0..3 {
                sum[k] += p[k] as f64;
            }
            n += 1.0;
        }
    }
    sum.map(|s| s / n)
}

fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    (0..3).map(|k| (a[k] - b[k]).abs()).sum()
}

/// A point of the pond's bed (studs) `r` cells from the centre, toward the camera.
fn bed_point(r: f64) -> DVec3 {
    let s = CELL_SIZE_STUDS as f64;
    let (x, z) = (CENTRE, CENTRE + r);
    DVec3::new(x * s, ground_height(x, z) * s, z * s)
}

#[test]
fn pond_shows_water_colour_and_its_shallow_bed() {
    let gpu = require_gpu("pond_shows_water_colour_and_its_shallow_bed");
    let mut wet_renderer = renderer_with(gpu, &pond(true));
    let wet = render(&mut wet_renderer, 0.0);
    let water_chunks = wet_renderer.renderer().last_draw_stats().drawn_water_chunks;
    assert!(water_chunks >= 1, "no water chunk drawn");
    let gpu = require_gpu("pond_shows_water_colour_and_its_shallow_bed (dry)");
    let mut dry_renderer = renderer_with(gpu, &pond(false));
    let dry = render(&mut dry_renderer, 0.0);
    save("pond-wet.png", &wet);
    save("pond-dry.png", &dry);

    // Deep water (centre, 7 cells = 28 studs of water): blue-green, and
    // nothing like the sand below it.
    let deep_wet = patch(&wet, bed_point(0.0));
    let deep_dry = patch(&dry, bed_point(0.0));
    eprintln!("deep: wet {deep_wet:?}, dry {deep_dry:?}");
    assert!(
        deep_wet[2] > deep_wet[0] + 10.0 && deep_wet[1] > deep_wet[0] + 10.0,
        "deep water should be blue-green, got {deep_wet:?}"
    );
    assert!(
        distance(deep_wet, deep_dry) > 120.0,
        "deep water hides the bed"
    );

    // Shallow water (about 1 cell = 4 studs deep): the bed shows through, so
    // the pixels are neither the dry bed nor the deep water colour, and
    // closer to the bed than deep water is.
    let r_shallow =
        BOWL_RADIUS * ((WATER_ROWS as f64 - 1.0 - BED_DEEPEST) / (LAND - BED_DEEPEST)).sqrt();
    let shallow_wet = patch(&wet, bed_point(r_shallow));
    let shallow_dry = patch(&dry, bed_point(r_shallow));
    eprintln!("shallow (r {r_shallow:.1} cells): wet {shallow_wet:?}, dry {shallow_dry:?}");
    assert!(
        distance(shallow_wet, shallow_dry) > 15.0,
        "shallow water should tint the bed: wet {shallow_wet:?}, dry {shallow_dry:?}"
    );
    assert!(
        distance(shallow_wet, deep_wet) > 40.0,
        "the shallow bed should show through: shallow {shallow_wet:?}, deep {deep_wet:?}"
    );
    assert!(
        distance(shallow_wet, shallow_dry) < distance(deep_wet, deep_dry),
        "shallow water must hide less of the bed than deep water"
    );

    // Dry land beside the pond is not touched by the water pass.
    let land = DVec3::new(CENTRE + BOWL_RADIUS + 4.0, LAND, CENTRE) * CELL_SIZE_STUDS as f64;
    assert!(distance(patch(&wet, land), patch(&dry, land)) < 1.0);
}

#[test]
fn waves_change_only_the_water() {
    let gpu = require_gpu("waves_change_only_the_water");
    let mut wet_renderer = renderer_with(gpu, &pond(true));
    let t0 = render(&mut wet_renderer, 0.0);
    let t15 = render(&mut wet_renderer, 1.5);
    let t0_again = render(&mut wet_renderer, 0.0);
    assert_eq!(t0, t0_again, "the same time must render the same image");
    let gpu = require_gpu("waves_change_only_the_water (dry)");
    let mut dry_renderer = renderer_with(gpu, &pond(false));
    let dry = render(&mut dry_renderer, 0.0);
    save("pond-t0.png", &t0);
    save("pond-t1.5.png", &t15);

    // The water's screen area at either time: pixels that differ from the
    // dry pond, grown by 2 pixels (MSAA edge blends, sideways wave motion).
    let differs = |a: &image::Rgba<u8>, b: &image::Rgba<u8>| (0..3).any(|k| a[k] != b[k]);
    let mut water = vec![false; (W * H) as usize];
    for (i, ((a, b), d)) in t0.pixels().zip(t15.pixels()).zip(dry.pixels()).enumerate() {
        water[i] = differs(a, d) || differs(b, d);
    }
    let mut near_water = water.clone();
    for y in 0..H as i64 {
        for x in 0..W as i64 {
            if !water[(y * W as i64 + x) as usize] {
                continue;
            }
            for (dx, dy) in (-2..=2).flat_map(|dx| (-2..=2).map(move |dy| (dx, dy))) {
                let (nx, ny) = (x + dx, y + dy);
                if nx >= 0 && ny >= 0 && nx < W as i64 && ny < H as i64 {
                    near_water[(ny * W as i64 + nx) as usize] = true;
                }
            }
        }
    }
    let water_px = water.iter().filter(|w| **w).count();
    assert!(water_px > 2000, "the pond covers only {water_px} pixels");

    let mut moved_in_water = 0;
    for (i, (a, b)) in t0.pixels().zip(t15.pixels()).enumerate() {
        if near_water[i] {
            moved_in_water += usize::from(differs(a, b));
        } else {
            assert!(
                !differs(a, b),
                "pixel ({}, {}) away from the water changed with time: {a:?} vs {b:?}",
                i as u32 % W,
                i as u32 / W
            );
        }
    }
    assert!(
        moved_in_water * 4 > water_px,
        "waves changed only {moved_in_water} of {water_px} water pixels"
    );
}

#[test]
fn staged_water_appears_only_when_promoted_and_leaves_with_the_chunk() {
    let gpu = require_gpu("staged_water_appears_only_when_promoted_and_leaves_with_the_chunk");
    let grid = pond(true);
    let coord = ChunkCoord::new(0, 0, 0);
    let water = Arc::new(mesh_water_one(&grid, coord));
    assert!(!water.is_empty());
    let mut headless = HeadlessRenderer::new(gpu, [W, H], false).expect("renderer");
    let renderer = headless.renderer();
    renderer.uploader().stage_water(coord, &water);
    assert!(
        renderer.water_buffers().get(coord).is_none(),
        "staged, not drawn"
    );
    renderer.uploader().promote(&[coord]);
    assert_eq!(
        renderer
            .water_buffers()
            .get(coord)
            .map(|g| g.index_count as usize),
        Some(water.indices.len())
    );
    // A later promotion with nothing staged (a level-only change) keeps it.
    renderer.uploader().promote(&[coord]);
    assert!(renderer.water_buffers().get(coord).is_some());
    // Staging an empty surface removes the water on promotion.
    renderer
        .uploader()
        .stage_water(coord, &Arc::new(Default::default()));
    renderer.uploader().promote(&[coord]);
    assert!(renderer.water_buffers().is_empty());
    // Eviction drops drawn and staged water.
    renderer.uploader().stage_water(coord, &water);
    renderer.uploader().promote(&[coord]);
    renderer.uploader().evict(&[coord]);
    assert!(renderer.water_buffers().is_empty());
}

/// Renders the pond with a plain [`strata::render::Renderer`] at `samples`
/// MSAA samples into an sRGB texture and reads it back.
fn render_with_samples(gpu: &Gpu, grid: &Grid, samples: u32) -> image::RgbaImage {
    use strata::render::Renderer;
    let format = wgpu::TextureFormat::Rgba8UnormSrgb;
    let mut renderer = Renderer::new(gpu, format, samples);
    assert_eq!(renderer.sample_count(), samples);
    let mut meshes = WorldMeshes::build_all(grid);
    renderer.sync_meshes(&mut meshes);
    let settings = FrameSettings::for_view_distance(150.0);
    renderer.prepare(&gpu.queue, &camera(), &settings, [W, H]);
    let target = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("test target"),
        size: wgpu::Extent3d {
            width: W,
            height: H,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let view = target.create_view(&Default::default());
    let row =
        (4 * W).div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
    let readback = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("test readback"),
        size: (row * H) as u64,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    renderer.render(&mut encoder, &view, [W, H], None);
    encoder.copy_texture_to_buffer(
        target.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &readback,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(row),
                rows_per_image: Some(H),
            },
        },
        wgpu::Extent3d {
            width: W,
            height: H,
            depth_or_array_layers: 1,
        },
    );
    gpu.queue.submit([encoder.finish()]);
    readback.map_async(wgpu::MapMode::Read, .., |r| r.expect("map"));
    gpu.device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("poll");
    let mapped = readback.get_mapped_range(..).expect("mapped");
    let mut pixels = Vec::with_capacity((4 * W * H) as usize);
    for r in mapped.chunks_exact(row as usize) {
        pixels.extend_from_slice(&r[..(4 * W) as usize]);
    }
    image::RgbaImage::from_raw(W, H, pixels).expect("size")
}

#[test]
fn single_sampled_targets_read_the_depth_too() {
    // The window renders 1× on software adapters: the depth-reading water
    // must look the same there (up to edge anti-aliasing) as with MSAA.
    let gpu = require_gpu("single_sampled_targets_read_the_depth_too");
    let grid = pond(true);
    let one = render_with_samples(&gpu, &grid, 1);
    let msaa = gpu.msaa_sample_count(wgpu::TextureFormat::Rgba8UnormSrgb);
    let many = render_with_samples(&gpu, &grid, msaa);
    save("pond-1x.png", &one);
    save("pond-msaa.png", &many);
    for r in [0.0, 6.0, 9.5] {
        let (a, b) = (patch(&one, bed_point(r)), patch(&many, bed_point(r)));
        assert!(distance(a, b) < 12.0, "r {r}: 1x {a:?} vs {msaa}x {b:?}");
    }
    let deep = patch(&one, bed_point(0.0));
    assert!(
        deep[2] > deep[0] + 10.0,
        "1x deep water should be blue, got {deep:?}"
    );
}

/// The input that showed it: a lake seen from far away at a grazing angle,
/// into the sun (the Alpine recipe's distant lakes). Waves a few studs long
/// span less than a pixel there, and their sun glints aliased into a
/// lattice of white dots over the blue. Waves finer than the pixels now
/// fade out: neighbouring lake pixels differ in brightness by under 2 (of
/// 255) on average (7.3 with the lattice).
#[test]
fn a_distant_lake_shows_no_lattice_of_glints() {
    let gpu = require_gpu("a_distant_lake_shows_no_lattice_of_glints");
    // A 256 × 256-cell lake: sand up to y = 3, water up to y = 6.
    let mut grid = Grid::new();
    grid.edit_region(
        CellBox::new(IVec3::ZERO, IVec3::new(256, 8, 256)),
        |cell, _| match cell.0.y {
            0..3 => Cell::full(Material::SAND),
            3..6 => Cell::full(Material::WATER),
            _ => Cell::EMPTY,
        },
    )
    .expect("region");
    let mut meshes = WorldMeshes::build_all(&grid);
    let mut headless = HeadlessRenderer::new(gpu, [W, H], false).expect("renderer");
    headless.sync_meshes(&mut meshes);
    // From 600 studs south of the lake, 130 studs up, looking north (into
    // the default sun) at the lake's middle.
    let s = f64::from(CELL_SIZE_STUDS);
    let target = DVec3::new(128.0 * s, 6.0 * s, 128.0 * s);
    let mut camera = Camera::new(DVec3::new(128.0 * s, 150.0, 256.0 * s + 600.0), 0.0, 0.0);
    camera.look_at(target);
    camera.aspect = W as f32 / H as f32;
    let settings = FrameSettings::for_view_distance(1100.0);
    let (img, _) = headless
        .render(&camera, &settings, &PanelStats::default())
        .expect("render");
    save("distant-lake.png", &img);
    // The lake's pixels: those whose ray meets the water plane inside the lake.
    let water_y = 6.0 * s;
    let in_lake = |x: u32, y: u32| {
        let (origin, dir) =
            camera.ray_from_screen(x as f32 + 0.5, y as f32 + 0.5, W as f32, H as f32);
        let dir = dir.as_dvec3();
        if dir.y >= 0.0 {
            return false;
        }
        let hit = origin + dir * ((water_y - origin.y) / dir.y);
        let inside = |v: f64| v > 8.0 * s && v < 248.0 * s;
        inside(hit.x) && inside(hit.z)
    };
    let luma = |x: u32, y: u32| {
        let p = img.get_pixel(x, y);
        0.2126 * f64::from(p[0]) + 0.7152 * f64::from(p[1]) + 0.0722 * f64::from(p[2])
    };
    // Pixel-to-pixel change across the lake: a lattice of glints makes
    // neighbouring pixels differ; waves the pixels resolve change smoothly.
    let (mut sum, mut pairs) = (0.0, 0usize);
    for y in 0..H {
        for x in 0..W - 1 {
            if in_lake(x, y) && in_lake(x + 1, y) {
                sum += (luma(x, y) - luma(x + 1, y)).abs();
                pairs += 1;
            }
        }
    }
    assert!(pairs > 3_000, "the lake fills much of the view: {pairs}");
    let mean_step = sum / pairs as f64;
    eprintln!("mean neighbour luma step {mean_step:.2} over {pairs} pairs");
    assert!(
        mean_step < 2.0,
        "neighbouring lake pixels differ by {mean_step:.2} on average: a lattice of glints"
    );
}

/// The input that showed it (hard-edged water sheets floating over hills in
/// a fast flight): where the horizon draws a node in place of some chunks,
/// their terrain is hidden but their water was still drawn, over the node's
/// coarser ground. A horizon that hands no chunks to the chunk levels (its
/// draw list is empty) now hides the pond's water along with its terrain:
/// the frame is the empty view's, pixel for pixel.
#[test]
fn water_of_chunks_a_node_stands_in_for_is_not_drawn() {
    let gpu = require_gpu("water_of_chunks_a_node_stands_in_for_is_not_drawn");
    let grid = pond(true);
    let mut headless = renderer_with(gpu.clone(), &grid);
    let shown = render(&mut headless, 0.0);
    let mut empty = renderer_with(gpu, &Grid::new());
    let nothing = render(&mut empty, 0.0);
    let differing = |a: &image::RgbaImage, b: &image::RgbaImage| {
        a.pixels()
            .zip(b.pixels())
            .filter(|(p, q)| (0..3).any(|k| p[k].abs_diff(q[k]) > 2))
            .count()
    };
    assert!(differing(&shown, &nothing) > 1000, "the pond is drawn");
    // A horizon whose draw list hands no level-4 node to the chunks.
    let settings = strata::terrain::generation::generate::GeneratorSettings {
        seed: 7,
        size_cells: 1 << 12,
    };
    let mut horizon = strata::pipeline::horizon::Horizon::new(Arc::new(
        strata::terrain::generation::generated_columns::GeneratedColumns::new(&settings),
    ))
    .expect("the generator samples");
    assert!(horizon.draws().is_empty());
    headless.renderer().uploader().sync_horizon(&mut horizon);
    let hidden = render(&mut headless, 0.0);
    save("pond-hidden-by-horizon.png", &hidden);
    assert_eq!(
        differing(&hidden, &nothing),
        0,
        "no water floats without its chunks"
    );
}
