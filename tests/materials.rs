//! A world's material library: texture sets imported from folders (PBR
//! names) and single images, stored in the world file and read back byte
//! for byte, drawn by the renderer, and every bad texture refused with the
//! world unchanged.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use strata::io::materials::{RestyleRequest, import_material, restyle};
use strata::io::world::world_file::{
    FORMAT_VERSION, FORMAT_VERSION_WITHOUT_MATERIALS, LoadOptions, WorldFile, WorldMeta,
};
use strata::terrain::Material;
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};
use strata::terrain::materials::{MaterialLibrary, SurfaceMaps};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-materials-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A tileable test pattern: a diagonal gradient in `base`'s hue.
fn pattern(side: u32, base: [u8; 3]) -> image::RgbImage {
    image::RgbImage::from_fn(side, side, |x, y| {
        let t = ((x + y) % side) as f32 / side as f32;
        image::Rgb(base.map(|c| (c as f32 * (0.6 + 0.4 * t)) as u8))
    })
}

/// A folder with the four maps of a PBR set, named as texture sites name
/// them; the albedo is 16-bit and `side`² (resized on import).
fn pbr_folder(dir: &Path, name: &str, side: u32, base: [u8; 3]) -> PathBuf {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    let rgb = pattern(side, base);
    let rgb16 = image::ImageBuffer::<image::Rgb<u16>, _>::from_fn(side, side, |x, y| {
        image::Rgb(rgb.get_pixel(x, y).0.map(|c| u16::from(c) * 257))
    });
    rgb16
        .save(folder.join(format!("{name}_2K_Color.png")))
        .unwrap();
    for (map, grey) in [
        ("NormalGL", [128, 128, 255]),
        ("Roughness", [90, 90, 90]),
        ("Displacement", [40, 40, 40]),
        ("AmbientOcclusion", [10, 10, 10]),
    ] {
        pattern(side, grey)
            .save(folder.join(format!("{name}_2K_{map}.png")))
            .unwrap();
    }
    folder
}

fn small_world() -> strata::terrain::Grid {
    generate_world(&GeneratorSettings {
        seed: 3,
        size_cells: 64,
    })
    .unwrap()
}

fn format_version(path: &Path) -> u32 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row(
        "SELECT value FROM meta WHERE key = 'format_version'",
        [],
        |r| r.get::<_, String>(0),
    )
    .unwrap()
    .parse()
    .unwrap()
}

#[test]
fn a_folder_is_matched_by_pbr_names_and_resized_to_the_world_side() {
    let dir = temp_dir("match");
    let folder = pbr_folder(&dir, "Rock030", 300, [180, 120, 60]);
    let imported = import_material(&folder, 512).unwrap();
    assert_eq!(imported.name, "Rock030");
    assert_eq!(imported.source_side_px, 300);
    assert_eq!(imported.albedo.side_px(), 512);
    let roles: Vec<&str> = imported.matched.iter().map(|m| m.role.label()).collect();
    assert_eq!(
        roles,
        ["albedo", "normal (OpenGL)", "roughness", "height"],
        "ambient occlusion has no role"
    );
    // The gradient's mean survives the resize (to within rounding).
    let [r, g, b] = imported.albedo.average_srgb();
    let want = pattern(300, [180, 120, 60]);
    let mean =
        |k: usize| want.pixels().map(|p| f64::from(p[k])).sum::<f64>() / f64::from(300 * 300);
    for (got, k) in [(r, 0), (g, 1), (b, 2)] {
        assert!(
            (f64::from(got) - mean(k)).abs() <= 2.0,
            "{got} vs {}",
            mean(k)
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_folder_with_several_albedos_uses_the_base_colour_and_says_so() {
    let dir = temp_dir("several");
    let folder = dir.join("x");
    std::fs::create_dir_all(&folder).unwrap();
    for (file, colour) in [
        ("x_albedo.png", [0, 0, 200]),
        ("x_basecolor.png", [200, 0, 0]),
        ("x_diffuse.png", [0, 200, 0]),
    ] {
        image::RgbImage::from_pixel(64, 64, image::Rgb(colour))
            .save(folder.join(file))
            .unwrap();
    }
    let imported = import_material(&folder, 256).unwrap();
    assert_eq!(imported.albedo.average_srgb(), [200, 0, 0]);
    assert_eq!(imported.albedo_file, folder.join("x_basecolor.png"));
    assert_eq!(
        imported.ignored_albedos,
        [folder.join("x_albedo.png"), folder.join("x_diffuse.png")]
    );
    let summary = strata::io::materials::import_summary(&imported);
    assert!(
        summary.contains("other albedo files ignored: x_albedo.png, x_diffuse.png"),
        "{summary}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_imported_library_round_trips_byte_identical_with_the_same_world_hash() {
    let dir = temp_dir("roundtrip");
    let moss = pbr_folder(&dir, "moss", 256, [70, 130, 40]);
    let jpeg = dir.join("red_sand.jpg");
    pattern(1024, [210, 110, 60]).save(&jpeg).unwrap();
    let requests = [
        RestyleRequest::Texture {
            material: "grass".into(),
            path: moss,
        },
        RestyleRequest::Texture {
            material: "sand".into(),
            path: jpeg,
        },
        RestyleRequest::TopTexture {
            material: "dirt".into(),
            path: dir.join("moss"),
        },
        RestyleRequest::Tint {
            material: "sand".into(),
            tint_srgb: [255, 230, 200],
        },
        RestyleRequest::Tiling {
            material: "grass".into(),
            studs: 64,
        },
        RestyleRequest::BlendSharpness {
            material: "grass".into(),
            pct: 85,
        },
        RestyleRequest::Rename {
            material: "grass".into(),
            name: "Studio moss".into(),
        },
    ];
    let (library, lines) = restyle(&MaterialLibrary::default(), &requests).unwrap();
    assert_eq!(lines.len(), 7);
    assert!(
        lines[0].contains("normal (OpenGL) from moss_2K_NormalGL.png")
            && lines[0].contains("roughness from moss_2K_Roughness.png")
            && lines[0].contains("height from moss_2K_Displacement.png"),
        "{}",
        lines[0]
    );
    // The folder's normal, roughness and height maps are packed into one
    // surface texture: red and green the normal, blue the roughness, alpha
    // the height (texel 0 of each pattern is 0.6 of its grey).
    let grass = library.style(Material::GRASS).unwrap();
    assert_eq!(
        grass.surface_maps,
        SurfaceMaps {
            normal: true,
            normal_directx: false,
            roughness: true,
            height: true
        }
    );
    assert_eq!(grass.blend_sharpness_pct, 85);
    let surface = library.surface(Material::GRASS).unwrap();
    assert_eq!(&surface.rgba8()[..4], &[76, 76, 54, 24]);
    // A single image brings no surface maps.
    assert_eq!(library.surface(Material::SAND), None);
    // Dirt's top variant is the moss albedo: stored once with Grass's.
    assert_eq!(library.textures().count(), 3);
    assert_eq!(
        library.top_albedo(Material::DIRT),
        library.albedo(Material::GRASS)
    );
    assert_eq!(library.layer_count(), 12);
    assert_eq!(library.material_named("studio moss"), Some(Material::GRASS));

    let grid = small_world();
    let path = dir.join("world.strata");
    common::save_with_library(&path, &grid, &library);
    assert_eq!(format_version(&path), FORMAT_VERSION);

    let (mut file, loaded, meta_back, load) =
        WorldFile::open(&path, LoadOptions::default()).unwrap();
    assert!(load.world_hash_ok);
    assert_eq!(loaded.content_hash(), grid.content_hash());
    // Equality compares every texel of every texture.
    assert_eq!(meta_back.materials, library);
    for t in library.textures() {
        let back = meta_back.materials.texture(t.hash()).unwrap();
        assert_eq!(back.rgba8(), t.rgba8());
    }

    // An incremental save keeps the stored textures; giving the built-ins
    // back removes them and writes the older format again.
    file.save_incremental(&loaded, &meta_back).unwrap();
    let (_, _, again, _) = WorldFile::open(&path, LoadOptions::default()).unwrap();
    assert_eq!(again.materials, library);
    let plain = WorldMeta::default();
    WorldFile::open(&path, LoadOptions::default())
        .unwrap()
        .0
        .save_incremental(&loaded, &plain)
        .unwrap();
    assert_eq!(format_version(&path), FORMAT_VERSION_WITHOUT_MATERIALS);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let texture_rows: i64 = conn
        .query_row(
            "SELECT count(*) FROM document WHERE name LIKE 'materials/%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(texture_rows, 0);
    let (_, _, plain_back, _) = WorldFile::open(&path, LoadOptions::default()).unwrap();
    assert!(plain_back.materials.is_default());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_damaged_stored_library_is_refused_by_name() {
    let dir = temp_dir("damaged");
    let image_path = dir.join("albedo.png");
    pattern(512, [100, 100, 200]).save(&image_path).unwrap();
    let (library, _) = restyle(
        &MaterialLibrary::default(),
        &[RestyleRequest::Texture {
            material: "rock".into(),
            path: image_path,
        }],
    )
    .unwrap();
    let meta = WorldMeta {
        materials: library,
        ..WorldMeta::default()
    };
    let grid = small_world();
    let damage = |name: &str, sql: &str| -> String {
        let path = dir.join(format!("{name}.strata"));
        WorldFile::save_full(&path, &grid, &meta).unwrap();
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
        match WorldFile::open(&path, LoadOptions::default()) {
            Ok(_) => panic!("{name}: a damaged library loaded"),
            Err(e) => e.to_string(),
        }
    };
    let e = damage(
        "missing",
        "DELETE FROM document WHERE name LIKE 'materials/texture/%'",
    );
    assert!(
        e.contains("materials") && e.contains("not in the file"),
        "{e}"
    );
    let e = damage(
        "tiling",
        "UPDATE meta SET value = replace(value, '\"tiling_studs\":32', '\"tiling_studs\":48') \
         WHERE key = 'materials'",
    );
    assert!(e.contains("48 studs"), "{e}");
    let e = damage(
        "zeroed",
        "UPDATE document SET data = zeroblob(length(data)) WHERE name LIKE 'materials/texture/%'",
    );
    assert!(e.contains("texture ") && e.contains("materials"), "{e}");
    assert!(
        !e.contains("layers"),
        "the message is about the texture: {e}"
    );
    // An added material (id 11) without an albedo has nothing to draw.
    let e = damage(
        "extra style",
        "UPDATE meta SET value = replace(value, ']}', \
         ',{\"id\":11,\"name\":\"X\",\"albedo\":null,\"tint\":[255,255,255],\"tiling_studs\":32}]}') \
         WHERE key = 'materials'",
    );
    assert!(
        e.contains("material 11") && e.contains("no built-in look"),
        "{e}"
    );
    let e = damage(
        "out of order",
        "UPDATE meta SET value = replace(value, '\"id\":3', '\"id\":4') WHERE key = 'materials'",
    );
    assert!(e.contains("style of id 4 out of place"), "{e}");
    // Surface maps listed without a surface texture, and a sharpness past
    // 100 %.
    let e = damage(
        "maps without a texture",
        "UPDATE meta SET value = replace(value, '\"tiling_studs\":32}', \
         '\"tiling_studs\":32,\"surface_maps\":{\"normal\":true,\"roughness\":false,\"height\":false}}') \
         WHERE key = 'materials'",
    );
    assert!(
        e.contains("surface texture and the maps it lists disagree"),
        "{e}"
    );
    let e = damage(
        "sharpness",
        "UPDATE meta SET value = replace(value, '\"tiling_studs\":32}', \
         '\"tiling_studs\":32,\"blend_sharpness_pct\":250}') WHERE key = 'materials'",
    );
    assert!(e.contains("250 %"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every bad texture is refused with a message that names the problem,
/// and the world file a run would save is not written.
#[test]
fn bad_textures_are_refused_and_change_nothing() {
    let dir = temp_dir("bad");
    let not_square = dir.join("wide.png");
    pattern(64, [1, 2, 3]).save(&not_square).unwrap();
    image::RgbImage::new(64, 32).save(&not_square).unwrap();
    let tiny = dir.join("tiny.png");
    image::RgbImage::new(8, 8).save(&tiny).unwrap();
    let huge = dir.join("huge.png");
    common::zero_png::write_zero_png16(&huge, 16384);
    let corrupt = dir.join("corrupt.png");
    std::fs::write(&corrupt, b"\x89PNG\r\n\x1a\nthis is not a png at all").unwrap();
    let truncated = dir.join("truncated.png");
    let mut bytes = Vec::new();
    pattern(256, [9, 9, 9])
        .write_to(
            &mut std::io::Cursor::new(&mut bytes),
            image::ImageFormat::Png,
        )
        .unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let no_albedo = dir.join("only_normals");
    std::fs::create_dir_all(&no_albedo).unwrap();
    pattern(64, [128, 128, 255])
        .save(no_albedo.join("rock_normal.png"))
        .unwrap();
    let missing = dir.join("nowhere.png");

    let cases: [(&Path, &str); 7] = [
        (&not_square, "must be square"),
        (&tiny, "16² to 8192²"),
        (&huge, "is 16384×16384 pixels"),
        (&corrupt, "not a readable PNG or JPEG"),
        (&truncated, "not a readable PNG or JPEG"),
        (&no_albedo, "no albedo image"),
        (&missing, "cannot read"),
    ];
    let before = MaterialLibrary::default();
    for (path, want) in cases {
        let request = [RestyleRequest::Texture {
            material: "grass".into(),
            path: path.to_path_buf(),
        }];
        let e = restyle(&before, &request).unwrap_err().to_string();
        assert!(e.contains(want), "{}: {e}", path.display());
    }
    // Through the command line: the run fails and writes no world.
    let out = dir.join("out.strata");
    let status = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["--headless", "--world-size", "64", "--save"])
        .arg(&out)
        .arg("--material-texture")
        .arg(format!("grass={}", not_square.display()))
        .output()
        .unwrap();
    assert!(!status.status.success());
    let stderr = String::from_utf8_lossy(&status.stderr);
    assert!(stderr.contains("must be square"), "{stderr}");
    assert!(!out.exists());
    // Names and tile sizes the library does not allow.
    for (request, want) in [
        (
            RestyleRequest::Tiling {
                material: "grass".into(),
                studs: 48,
            },
            "would not line up",
        ),
        (
            RestyleRequest::Tint {
                material: "lava".into(),
                tint_srgb: [1, 2, 3],
            },
            "no material is named \"lava\"",
        ),
        (
            RestyleRequest::Rename {
                material: "grass".into(),
                name: "Rock".into(),
            },
            "already named",
        ),
    ] {
        let e = restyle(&before, &[request]).unwrap_err().to_string();
        assert!(e.contains(want), "{e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Of the pixels `before` shows clearly as grass (green well above red and
/// blue), `(count, how many of them `after` shows red)`.
fn grass_turned_red(before: &image::RgbaImage, after: &image::RgbaImage) -> (usize, usize) {
    let clearly_grass = |p: &image::Rgba<u8>| {
        i32::from(p[1]) > i32::from(p[0]) + 20 && i32::from(p[1]) > i32::from(p[2]) + 20
    };
    let is_red = |p: &image::Rgba<u8>| i32::from(p[0]) > i32::from(p[1]) + 60;
    let grass: Vec<(&image::Rgba<u8>, &image::Rgba<u8>)> = before
        .pixels()
        .zip(after.pixels())
        .filter(|(b, _)| clearly_grass(b))
        .collect();
    let red = grass.iter().filter(|(_, a)| is_red(a)).count();
    (grass.len(), red)
}

/// A 160×120 screenshot of a 256-cell world seen from straight above,
/// with `extra` flags, written to `dir/name.png` and read back.
fn top_down_shot(dir: &Path, name: &str, extra: &[String]) -> image::RgbaImage {
    let out = dir.join(format!("{name}.png"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_strata"));
    cmd.args([
        "--headless",
        "--world-size",
        "256",
        "--size",
        "160x120",
        "--camera=512,900,512,0,-89",
        "--screenshot",
    ])
    .arg(&out)
    .args(extra);
    common::run_ok(&mut cmd);
    image::open(&out).unwrap().to_rgba8()
}

/// The renderer draws a restyled material with its texture and tint: a
/// flat-topped world seen from above shows the imported colour.
#[test]
fn the_renderer_draws_the_imported_texture_and_tint() {
    common::require_gpu("the_renderer_draws_the_imported_texture_and_tint");
    let dir = temp_dir("render");
    let red = dir.join("albedo_red.png");
    image::RgbImage::from_pixel(512, 512, image::Rgb([200, 20, 20]))
        .save(&red)
        .unwrap();
    let shot = |name: &str, extra: &[String]| top_down_shot(&dir, name, extra);
    let grass_pixels =
        |img: &image::RgbaImage| img.pixels().filter(|p| p[1] > p[0] && p[1] > p[2]).count();
    let red_pixels = |img: &image::RgbaImage| {
        img.pixels()
            .filter(|p| u16::from(p[0]) > 2 * u16::from(p[1]) && p[0] > 60)
            .count()
    };
    let plain = shot("shot_plain", &[]);
    let total = (plain.width() * plain.height()) as usize;
    let grass = grass_pixels(&plain);
    assert!(grass > total / 3, "{grass} of {total} pixels are grass");
    assert_eq!(red_pixels(&plain), 0);
    let stats_path = dir.join("stats.json");
    let restyled = shot(
        "shot_red",
        &[
            "--material-texture".into(),
            format!("grass={}", red.display()),
            "--stats-json".into(),
            stats_path.display().to_string(),
        ],
    );
    // The statistics give the texture memory per material.
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats_path).unwrap()).unwrap();
    let memory = &stats["material_textures"];
    assert_eq!(memory["drawn_side_px"], 512);
    assert_eq!(memory["array_gpu_bytes"], 11 * 1_398_100);
    assert_eq!(memory["materials"][0]["name"], "Grass");
    assert_eq!(memory["materials"][0]["imported"], true);
    assert_eq!(memory["materials"][0]["texture_gpu_bytes"], 1_398_100);
    assert_eq!(memory["materials"][1]["texture_gpu_bytes"], 0);
    // Where grass clearly showed, the red texture shows.
    let (grass_shown, now_red) = grass_turned_red(&plain, &restyled);
    assert!(grass_shown > total / 4, "{grass_shown} grass pixels");
    assert!(
        now_red * 100 >= grass_shown * 95,
        "{now_red} of {grass_shown} grass pixels turned red"
    );
    assert!(red_pixels(&restyled) < total * 95 / 100);
    // A top variant shows on upward-facing surfaces: from above, red
    // where grass was, the grass's own texture kept for its sides.
    let top_red = shot(
        "shot_top_red",
        &[
            "--material-texture".into(),
            format!("grass:top={}", red.display()),
        ],
    );
    let (_, top_now_red) = grass_turned_red(&plain, &top_red);
    assert!(
        top_now_red * 100 >= grass_shown * 90,
        "{top_now_red} of {grass_shown} grass pixels turned red from above"
    );
    // A green tint over the red texture leaves it dark: red is gone.
    let tinted = shot(
        "shot_tinted",
        &[
            "--material-texture".into(),
            format!("grass={}", red.display()),
            "--material-tint".into(),
            "grass=00ff00".into(),
        ],
    );
    assert!(red_pixels(&tinted) < total / 20, "{}", red_pixels(&tinted));
    // The low-poly style draws each material's flat colour: the red
    // texture's average where grass was.
    let low_poly = |extra: &[String]| {
        let mut args = vec!["--style".to_string(), "low-poly".to_string()];
        args.extend_from_slice(extra);
        args
    };
    let flat_plain = shot("shot_flat_plain", &low_poly(&[]));
    let flat_red = shot(
        "shot_flat_red",
        &low_poly(&[
            "--material-texture".into(),
            format!("grass={}", red.display()),
        ]),
    );
    let (flat_grass, flat_now_red) = grass_turned_red(&flat_plain, &flat_red);
    assert!(flat_grass > total / 4, "{flat_grass} low-poly grass pixels");
    assert!(
        flat_now_red * 100 >= flat_grass * 95,
        "{flat_now_red} of {flat_grass} low-poly grass pixels turned red"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A folder holding a flat grey albedo and a normal map of one colour,
/// named for the OpenGL or the DirectX convention.
fn tilted_folder(dir: &Path, name: &str, green: u8, directx: bool) -> PathBuf {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    image::RgbImage::from_pixel(64, 64, image::Rgb([150, 150, 150]))
        .save(folder.join("x_basecolor.png"))
        .unwrap();
    let normal = if directx {
        "x_normal_dx.png"
    } else {
        "x_normal_gl.png"
    };
    image::RgbImage::from_pixel(64, 64, image::Rgb([128, green, 200]))
        .save(folder.join(normal))
        .unwrap();
    folder
}

#[test]
fn normal_maps_light_the_surface_the_way_they_lean_in_either_convention() {
    common::require_gpu("normal_maps_light_the_surface_the_way_they_lean_in_either_convention");
    let dir = temp_dir("normals");
    let shot = |name: &str, folder: &Path, stats: Option<&Path>| {
        let mut extra = vec![
            "--material-texture".to_string(),
            format!("grass={}", folder.display()),
        ];
        if let Some(stats) = stats {
            extra.extend(["--stats-json".to_string(), stats.display().to_string()]);
        }
        top_down_shot(&dir, name, &extra)
    };
    // Seen from above, the sun stands toward -z. On the top projection the
    // texture's up is -z, so green above 128 (OpenGL: the normal leans up
    // the image) turns the ground toward the sun, and below 128 away.
    let toward = shot("toward", &tilted_folder(&dir, "toward", 200, false), None);
    let away = shot("away", &tilted_folder(&dir, "away", 56, false), None);
    let flat_folder = dir.join("flat");
    std::fs::create_dir_all(&flat_folder).unwrap();
    image::RgbImage::from_pixel(64, 64, image::Rgb([150, 150, 150]))
        .save(flat_folder.join("x_basecolor.png"))
        .unwrap();
    let stats_path = dir.join("stats.json");
    let flat = shot("flat", &flat_folder, None);
    // Measured where the built-in grass clearly shows (the restyled
    // material's ground).
    let plain = top_down_shot(&dir, "plain", &[]);
    let grass = |p: &image::Rgba<u8>| {
        i32::from(p[1]) > i32::from(p[0]) + 20 && i32::from(p[1]) > i32::from(p[2]) + 20
    };
    let mean = |img: &image::RgbaImage| {
        let (sum, n) = img
            .pixels()
            .zip(plain.pixels())
            .filter(|(_, g)| grass(g))
            .fold((0u64, 0u64), |(s, n), (p, _)| {
                (
                    s + u64::from(p[0]) + u64::from(p[1]) + u64::from(p[2]),
                    n + 1,
                )
            });
        assert!(n > 19_200 / 4, "{n} grass pixels");
        sum as f64 / (3 * n) as f64
    };
    let (m_toward, m_flat, m_away) = (mean(&toward), mean(&flat), mean(&away));
    assert!(
        m_toward > m_flat + 10.0 && m_flat > m_away + 10.0,
        "mean brightness toward {m_toward:.1}, flat {m_flat:.1}, away {m_away:.1}"
    );
    // The same map written for DirectX (green down) is flipped on import
    // and lights exactly like its OpenGL twin.
    let directx = shot(
        "directx",
        &tilted_folder(&dir, "directx", 255 - 200, true),
        Some(&stats_path),
    );
    assert!(directx == toward, "the DirectX map lit differently");
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats_path).unwrap()).unwrap();
    let memory = &stats["material_textures"];
    assert_eq!(memory["surface_array"], true);
    // Albedo and surface arrays, 11 layers each at 512² with mips.
    assert_eq!(memory["array_gpu_bytes"], 2 * 11 * 1_398_100);
    assert_eq!(memory["materials"][0]["texture_gpu_bytes"], 2 * 1_398_100);
    assert_eq!(
        memory["materials"][0]["surface_maps"]["normal_directx"],
        true
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A `side`² texture whose texels alternate between two values in a
/// checker of 2-texel squares (per channel, offset by `seed` so the maps
/// differ): the full-size level and the next are all contrast (the next a
/// 1-texel checker) and every smaller level one flat value, so a sample a
/// fraction of a level off shows.
fn checker_texture(side: u32, seed: u8) -> strata::terrain::materials::MaterialTexture {
    let mut rgba = Vec::with_capacity((side * side * 4) as usize);
    for y in 0..side {
        for x in 0..side {
            let on = (x / 2 + y / 2) % 2 == 0;
            let texel: [u8; 4] = [0, 1, 2, 3].map(|c| {
                let lo = 40u8
                    .wrapping_add(seed.wrapping_mul(13))
                    .wrapping_add(c * 17)
                    % 90;
                if on { lo } else { 255 - lo }
            });
            rgba.extend_from_slice(&texel);
        }
    }
    strata::terrain::materials::MaterialTexture::new(side, rgba).unwrap()
}

/// On a sampler without anisotropy (software adapters), the shader's
/// explicit mip levels draw what its gradients draw: every built-in solid given a checker albedo and checker normal,
/// roughness and height maps (so the height blend and highlight run),
/// seen low over a floor of them, where the view spans the mip levels
/// from the full size down, differs by at most 16/255 per channel and
/// 1/255 on average.
#[test]
fn explicit_mip_levels_draw_what_gradients_draw() {
    use strata::app::headless::HeadlessRenderer;
    use strata::editor::panel::side_panel::PanelStats;
    use strata::pipeline::WorldMeshes;
    use strata::render::FrameSettings;
    use strata::render::terrain::MipSelection;

    let gpu = common::require_gpu("explicit_mip_levels_draw_what_gradients_draw");
    // A floor of every built-in solid in stripes, 4 cells deep.
    let mut grid = strata::terrain::Grid::new();
    grid.edit_region(
        strata::terrain::storage::coords::CellBox::new(
            glam::IVec3::ZERO,
            glam::IVec3::new(96, 4, 96),
        ),
        |cell, _| strata::terrain::Cell::full(Material(2 + (cell.0.x / 8 % 9) as u8)),
    )
    .unwrap();
    let mut library = MaterialLibrary::default();
    library.set_texture_side_px(256).unwrap();
    let maps = SurfaceMaps {
        normal: true,
        normal_directx: false,
        roughness: true,
        height: true,
    };
    for id in 2..Material::COUNT as u8 {
        library
            .set_material_set(
                Material(id),
                checker_texture(256, 2 * id),
                Some((checker_texture(256, 2 * id + 1), maps)),
            )
            .unwrap();
    }
    // Tiles other than the default 32 studs move the level by log2 of the
    // scale (Rock's stripe at 8 studs, Dirt's at 128).
    library.set_tiling(Material::ROCK, 8).unwrap();
    library.set_tiling(Material::DIRT, 128).unwrap();
    let (w, h) = (320u32, 180u32);
    let mut meshes = WorldMeshes::build_all(&grid);
    let mut headless = HeadlessRenderer::new(gpu, [w, h], false).unwrap();
    headless.sync_meshes(&mut meshes);
    let queue = headless.gpu().queue.clone();
    headless.renderer().set_material_library(&queue, &library);
    // Low over the floor (16 studs, 8 texels a stud at this side): the
    // view spans the full-size level near the bottom to small ones far off.
    let camera = strata::camera::Camera {
        aspect: w as f32 / h as f32,
        ..strata::camera::Camera::new(glam::DVec3::new(40.0, 32.0, 40.0), 45.0, -25.0)
    };
    let settings = FrameSettings::for_camera(&camera, meshes.bounds_world());
    // The default follows the sampler: explicit levels without anisotropy.
    // Only there do both paths filter alike (with anisotropy the gradient
    // path filters along the gradients), so only there are they compared.
    let anisotropy = headless.gpu().anisotropy();
    assert_eq!(
        headless.renderer().mip_selection(),
        MipSelection::for_anisotropy(anisotropy)
    );
    assert_eq!(
        MipSelection::for_anisotropy(anisotropy) == MipSelection::ExplicitLevel,
        anisotropy == 1
    );
    let mut shot = |selection: MipSelection| {
        headless.renderer().set_mip_selection(selection);
        assert_eq!(headless.renderer().mip_selection(), selection);
        headless
            .render(&camera, &settings, &PanelStats::default())
            .unwrap()
            .0
    };
    if anisotropy != 1 {
        return;
    }
    let gradients = shot(MipSelection::Gradients);
    let levels = shot(MipSelection::ExplicitLevel);
    let again = shot(MipSelection::Gradients);
    // The same frame twice is the same picture (the comparison is sound).
    assert_eq!(gradients, again);
    // An adapter may derive a level once per 2×2 quad where the shader
    // derives it per pixel, which moves the checker's contrast a little
    // (llvmpipe: up to 10/255, 0.44 on average); a level a quarter off
    // moves it by up to 76/255, 3.3 on average.
    let mut worst = 0u8;
    let mut sum = 0u64;
    for (a, b) in gradients.pixels().zip(levels.pixels()) {
        let d = (0..3).map(|c| a[c].abs_diff(b[c])).max().unwrap();
        worst = worst.max(d);
        sum += u64::from(d);
    }
    let mean = sum as f64 / f64::from(w * h);
    assert!(
        worst <= 16 && mean <= 1.0,
        "explicit levels differ from gradients by up to {worst}/255, {mean:.2} on average"
    );
}
