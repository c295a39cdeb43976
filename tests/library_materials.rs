//! Materials a world adds to the built-ins (ids 11 to 255): imported from
//! folders, painted into cells, stored in the world file and read back
//! byte for byte, and all 254 solid materials of a full library drawn,
//! each with its own texture.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use glam::{DVec3, IVec3};
use strata::camera::Camera;
use strata::io::materials::{RestyleRequest, restyle};
use strata::io::world::world_file::{LoadOptions, WorldFile, WorldMeta};
use strata::terrain::Grid;
use strata::terrain::Material;
use strata::terrain::materials::{MAX_TEXTURE_LAYERS, MaterialLibrary, MaterialTexture};
use strata::terrain::storage::cell::Cell;
use strata::terrain::storage::coords::{CellBox, CellCoord};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata_library_{name}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A 256² texture folder with albedo, normal and height maps.
fn pbr_folder(dir: &Path, name: &str, base: [u8; 3]) -> PathBuf {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    let side = 256;
    let albedo = image::RgbImage::from_fn(side, side, |x, y| {
        let k = ((x / 16 + y / 16) % 2) as u8 * 20;
        image::Rgb(base.map(|c| c.saturating_add(k)))
    });
    albedo
        .save(folder.join(format!("{name}_basecolor.png")))
        .unwrap();
    image::RgbImage::from_pixel(side, side, image::Rgb([128, 128, 255]))
        .save(folder.join(format!("{name}_normal_gl.png")))
        .unwrap();
    image::GrayImage::from_fn(side, side, |x, _| image::Luma([(x % 256) as u8]))
        .save(folder.join(format!("{name}_height.png")))
        .unwrap();
    folder
}

/// A floor 4 cells deep over `[0, side)²` cells, of Rock.
fn floor(side: i32) -> Grid {
    let mut grid = Grid::new();
    grid.edit_region(
        CellBox::new(IVec3::ZERO, IVec3::new(side, 4, side)),
        |_, _| Cell::full(Material::ROCK),
    )
    .unwrap();
    grid
}

#[test]
fn added_materials_paint_cells_and_round_trip_byte_identical() {
    let dir = temp_dir("roundtrip");
    let requests = [
        RestyleRequest::Add {
            name: "Mossy cobble".into(),
            path: pbr_folder(&dir, "cobble", [90, 110, 70]),
        },
        RestyleRequest::Add {
            name: "Red clay".into(),
            path: pbr_folder(&dir, "clay", [170, 70, 50]),
        },
        RestyleRequest::Tint {
            material: "red clay".into(),
            tint_srgb: [250, 240, 230],
        },
    ];
    let mut start = MaterialLibrary::default();
    start.set_texture_side_px(256).unwrap();
    let (library, lines) = restyle(&start, &requests).unwrap();
    assert!(
        lines[0].starts_with("Mossy cobble (added as id 11)"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("Red clay (added as id 12)"),
        "{}",
        lines[1]
    );
    let cobble = library.material_named("mossy cobble").unwrap();
    let clay = library.material_named("RED CLAY").unwrap();
    assert_eq!((cobble, clay), (Material(11), Material(12)));
    assert!(library.style(cobble).unwrap().surface_maps.height);
    // Adding under a name that is taken changes nothing.
    let taken = restyle(
        &library,
        &[RestyleRequest::Add {
            name: "grass".into(),
            path: dir.join("cobble"),
        }],
    );
    assert!(taken.is_err());

    let mut grid = floor(64);
    grid.edit_region(
        CellBox::new(IVec3::new(0, 4, 0), IVec3::new(32, 6, 64)),
        |_, _| Cell::full(cobble),
    )
    .unwrap();
    grid.edit_region(
        CellBox::new(IVec3::new(32, 4, 0), IVec3::new(64, 5, 64)),
        |_, _| Cell::new(clay, 200),
    )
    .unwrap();
    let path = dir.join("world.strata");
    common::save_with_library(&path, &grid, &library);
    let (_, loaded, meta_back, load) = WorldFile::open(&path, LoadOptions::default()).unwrap();
    assert!(load.world_hash_ok);
    assert_eq!(loaded.content_hash(), grid.content_hash());
    assert_eq!(loaded.cell(CellCoord::new(5, 5, 5)), Cell::full(cobble));
    assert_eq!(loaded.cell(CellCoord::new(40, 4, 9)), Cell::new(clay, 200));
    // Equality compares every style and every texel of every texture.
    assert_eq!(meta_back.materials, library);
    for t in library.textures() {
        assert_eq!(
            meta_back.materials.texture(t.hash()).unwrap().rgba8(),
            t.rgba8()
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A saturated colour of hue `hue_deg` (sRGB).
fn hue_colour(hue_deg: f32) -> [u8; 3] {
    let h = hue_deg.rem_euclid(360.0) / 60.0;
    let x = 1.0 - (h % 2.0 - 1.0).abs();
    let (r, g, b) = match h as u32 {
        0 => (1.0, x, 0.0),
        1 => (x, 1.0, 0.0),
        2 => (0.0, 1.0, x),
        3 => (0.0, x, 1.0),
        4 => (x, 0.0, 1.0),
        _ => (1.0, 0.0, x),
    };
    [r, g, b].map(|c: f32| (40.0 + 200.0 * c) as u8)
}

/// The hue of an sRGB colour, degrees, and its saturation (max − min).
fn hue_of(p: [u8; 3]) -> (f32, f32) {
    let [r, g, b] = p.map(f32::from);
    let (max, min) = (r.max(g).max(b), r.min(g).min(b));
    let d = max - min;
    if d < 1.0 {
        return (0.0, 0.0);
    }
    let h = if max == r {
        ((g - b) / d).rem_euclid(6.0)
    } else if max == g {
        (b - r) / d + 2.0
    } else {
        (r - g) / d + 4.0
    };
    (h * 60.0, d)
}

/// The hue an id's texture is given: hues spread by the golden angle, so
/// neighbouring ids (and neighbouring tiles) differ by about 137°.
fn hue_of_id(id: u8) -> f32 {
    (f32::from(id) * 137.508).rem_euclid(360.0)
}

/// Tiles of the 254-material board per side, and cells per tile side.
const TILES: i32 = 16;
const TILE_CELLS: i32 = 16;

#[test]
fn a_world_with_254_materials_draws_each_with_its_own_texture() {
    common::require_gpu("a_world_with_254_materials_draws_each_with_its_own_texture");
    let dir = temp_dir("full");
    // Every id from 2 to 255 a solid material: the nine built-ins
    // restyled and 245 added, each drawn with one flat colour of its own
    // hue, at 256² (the layer limit of 256 reached exactly).
    let mut library = MaterialLibrary::default();
    library.set_texture_side_px(256).unwrap();
    let texture = |id: u8| {
        let [r, g, b] = hue_colour(hue_of_id(id));
        MaterialTexture::new(256, [r, g, b, 255].repeat(256 * 256)).unwrap()
    };
    for id in 2..Material::COUNT as u8 {
        library.set_albedo(Material(id), texture(id)).unwrap();
    }
    for id in Material::COUNT as u8..=u8::MAX {
        let added = library
            .add_material(&format!("Swatch {id}"), texture(id), None)
            .unwrap();
        assert_eq!(added, Material(id));
    }
    assert_eq!(library.solid_count(), 254);
    assert_eq!(library.layer_count(), MAX_TEXTURE_LAYERS);

    // A board of 16 × 16 tiles, 16 cells (64 studs) a side, tile `t`
    // holding material `2 + t` (the last two repeat id 255). Every
    // chunk and its padding sees at most 9 tiles.
    let side = TILES * TILE_CELLS;
    let mut grid = floor(side);
    let tile_material = |tx: i32, tz: i32| Material((2 + tz * TILES + tx).min(255) as u8);
    for tz in 0..TILES {
        for tx in 0..TILES {
            let min = IVec3::new(tx * TILE_CELLS, 4, tz * TILE_CELLS);
            let m = tile_material(tx, tz);
            grid.edit_region(
                CellBox::new(min, min + IVec3::new(TILE_CELLS, 1, TILE_CELLS)),
                |_, _| Cell::full(m),
            )
            .unwrap();
        }
    }
    let path = dir.join("board.strata");
    let meta = WorldMeta {
        materials: library.clone(),
        ..WorldMeta::default()
    };
    WorldFile::save_full(&path, &grid, &meta).unwrap();

    // Straight down from above the board's centre.
    let (w, h) = (640u32, 640u32);
    let centre_studs = f64::from(side * 4) / 2.0;
    let eye = DVec3::new(centre_studs, 1280.0, centre_studs + 0.5);
    let shot = dir.join("board.png");
    let stats = dir.join("board.json");
    common::run_ok(
        Command::new(env!("CARGO_BIN_EXE_strata"))
            .arg("--headless")
            .arg("--world")
            .arg(&path)
            .arg("--size")
            .arg(format!("{w}x{h}"))
            .arg(format!("--camera={},{},{},0,-89", eye.x, eye.y, eye.z))
            .arg("--screenshot")
            .arg(&shot)
            .arg("--stats-json")
            .arg(&stats),
    );
    let json = common::read_json(&stats);
    assert_eq!(
        json["material_textures"]["layers"].as_u64(),
        Some(u64::from(MAX_TEXTURE_LAYERS)),
        "{}",
        json["material_textures"]
    );
    let img = image::open(&shot).unwrap().to_rgb8();
    let camera = Camera {
        aspect: w as f32 / h as f32,
        ..Camera::new(eye, 0.0, -89.0)
    };
    // The centre of every tile: its hue is its material's.
    let mut matched = 0;
    let mut misses = Vec::new();
    for tz in 0..TILES {
        for tx in 0..TILES {
            let m = tile_material(tx, tz);
            let centre = DVec3::new(
                f64::from((tx * TILE_CELLS + TILE_CELLS / 2) * 4),
                20.0,
                f64::from((tz * TILE_CELLS + TILE_CELLS / 2) * 4),
            );
            let (px, py) = camera
                .project_to_screen(centre, w as f32, h as f32)
                .expect("the board is in front of the camera");
            assert!(
                px >= 0.0 && py >= 0.0 && px < w as f32 && py < h as f32,
                "tile {tx},{tz} off screen"
            );
            let p = img.get_pixel(px as u32, py as u32).0;
            let (hue, saturation) = hue_of(p);
            let want = hue_of_id(m.0);
            let diff = (hue - want).rem_euclid(360.0);
            let diff = diff.min(360.0 - diff);
            if saturation > 40.0 && diff < 20.0 {
                matched += 1;
            } else {
                misses.push((m.0, p, hue, want));
            }
        }
    }
    // Every tile shows its own material: a layer mix-up or ids clamped to
    // a few slots would put other hues there (neighbouring ids are 137°
    // apart). The sky's light shifts greens by up to 17°.
    assert_eq!(
        matched,
        TILES * TILES,
        "misses (id, pixel, hue, wanted): {misses:?}"
    );
    if std::env::var_os("STRATA_KEEP_TEST_OUTPUT").is_none() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn chunks_with_more_than_30_materials_near_report_the_materials_drawn_as_another() {
    // One chunk's 32×32 floor in 40 library materials (ids 11 to 50).
    let mut grid = Grid::new();
    grid.edit_region(CellBox::new(IVec3::ZERO, IVec3::new(32, 4, 32)), |c, _| {
        let i = (c.0.x + 32 * c.0.z).rem_euclid(40) as u8;
        Cell::full(Material(11 + i))
    })
    .unwrap();
    let meshes = strata::pipeline::WorldMeshes::build_all(&grid);
    let own = meshes
        .get(strata::terrain::ChunkCoord::new(0, 0, 0))
        .expect("the floor's chunk has a mesh");
    assert_eq!(own.merged_materials, 10, "40 solids, 30 drawn exactly");
    let (chunks, materials) = meshes.merged_materials();
    assert!(chunks >= 1 && materials >= 10, "{chunks} {materials}");
    // A world of built-ins never merges.
    assert_eq!(
        strata::pipeline::WorldMeshes::build_all(&floor(64)).merged_materials(),
        (0, 0)
    );
}
