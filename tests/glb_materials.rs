//! The smooth `.glb` carries the world's materials: one glTF material per
//! library material drawn (and per top variant), each with its textures
//! as PNGs byte-identical to the library's, every primitive drawn with its
//! triangles' dominant material, `TEXCOORD_0` where a material is
//! textured, in every encoding. Read back with the `gltf` crate (which
//! validates the document) and checked by the Khronos validator.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use glam::{IVec3, Vec3};
use gltf_json as json;
use strata::io::export::gltf_export::{GlbEncoding, GlbExport, export_glb};
use strata::terrain::materials::surface::pack_surface;
use strata::terrain::materials::{MaterialLibrary, MaterialTexture};
use strata::terrain::storage::cell::Cell;
use strata::terrain::storage::coords::CellBox;
use strata::terrain::{Grid, Material};

const SIDE: u32 = 256;

fn test_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("glb_materials")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A 256² texture whose texels depend on `seed` and their place.
fn texture(seed: u8) -> MaterialTexture {
    let rgba: Vec<u8> = (0..SIDE * SIDE)
        .flat_map(|i| {
            let (x, y) = ((i % SIDE) as u8, (i / SIDE) as u8);
            [
                x ^ seed,
                y.wrapping_add(seed),
                seed.wrapping_mul(3) ^ x ^ y,
                255,
            ]
        })
        .collect();
    MaterialTexture::new(SIDE, rgba).unwrap()
}

/// The world's library: Cobble (id 11: albedo, normal and roughness maps,
/// 16-stud tiles), Clay (id 12: albedo and a top variant, tinted), and the
/// built-ins (Rock has no texture of its own here).
fn library() -> (MaterialLibrary, Material, Material) {
    let mut library = MaterialLibrary::default();
    library.set_texture_side_px(SIDE).unwrap();
    let n = (SIDE * SIDE) as usize;
    // Normal x varies across the image, y down it.
    let normal: Vec<u8> = (0..n)
        .flat_map(|i| [(i % 256) as u8, 100 + (i / 256 % 50) as u8, 0, 255])
        .collect();
    let roughness: Vec<u8> = (0..n)
        .flat_map(|i| [(i * 7 % 251) as u8, 0, 0, 255])
        .collect();
    let surface = pack_surface(SIDE, Some(&normal), false, Some(&roughness), None).unwrap();
    let cobble = library
        .add_material("Cobble", texture(17), Some(surface))
        .unwrap();
    library.set_tiling(cobble, 16).unwrap();
    let clay = library.add_material("Clay", texture(90), None).unwrap();
    library.set_top_albedo(clay, texture(201)).unwrap();
    library.set_tint(clay, [250, 200, 180]).unwrap();
    (library, cobble, clay)
}

/// A floor 4 cells deep: Cobble, Clay and Rock side by side along x, and a
/// block of Clay standing on the Clay (sides and a top).
fn world(cobble: Material, clay: Material) -> Grid {
    let mut grid = Grid::new();
    let mut fill = |lo: IVec3, hi: IVec3, m: Material| {
        grid.edit_region(CellBox::new(lo, hi), |_, _| Cell::full(m))
            .unwrap();
    };
    fill(IVec3::ZERO, IVec3::new(24, 4, 24), cobble);
    fill(IVec3::new(24, 0, 0), IVec3::new(48, 4, 24), clay);
    fill(IVec3::new(48, 0, 0), IVec3::new(72, 4, 24), Material::ROCK);
    fill(IVec3::new(30, 4, 6), IVec3::new(42, 12, 18), clay);
    grid
}

/// The file's JSON and binary chunk, validated: by the `gltf` crate in
/// full for the plain file, and for the compact ones in full but for the
/// extensions they require, which the crate does not support.
fn read(bytes: &[u8], encoding: GlbEncoding) -> (json::Root, Vec<u8>) {
    if encoding == GlbEncoding::Plain {
        gltf::Gltf::from_slice(bytes).expect("a valid glTF");
    }
    let gltf = gltf::Gltf::from_slice_without_validation(bytes).expect("a glTF");
    let blob = gltf.blob.clone().expect("binary chunk");
    let root = gltf.document.into_json();
    let mut errors = Vec::new();
    json::validation::Validate::validate(&root, &root, json::Path::new, &mut |path, error| {
        errors.push(format!("{} {error:?}", path().as_str()))
    });
    errors.retain(|e| !e.starts_with("extensionsRequired"));
    assert_eq!(errors, Vec::<String>::new());
    (root, blob)
}

fn validate(path: &Path) -> serde_json::Value {
    common::oracles::validate_gltf(path)
}

/// Each element of an uncompressed accessor, `size` bytes.
fn elements(root: &json::Root, blob: &[u8], index: usize, size: usize) -> Vec<Vec<u8>> {
    let a = &root.accessors[index];
    let view = &root.buffer_views[a.buffer_view.unwrap().value()];
    assert_eq!(view.buffer.value(), 0);
    let stride = view.byte_stride.map_or(size, |s| s.0);
    let at =
        view.byte_offset.map_or(0, |o| o.0) as usize + a.byte_offset.map_or(0, |o| o.0) as usize;
    (0..a.count.0 as usize)
        .map(|i| blob[at + i * stride..at + i * stride + size].to_vec())
        .collect()
}

/// The bytes of image `index` in the binary chunk.
fn image_bytes<'a>(root: &json::Root, blob: &'a [u8], index: usize) -> &'a [u8] {
    let image = &root.images[index];
    assert_eq!(image.mime_type.as_ref().unwrap().0, "image/png");
    let view = &root.buffer_views[image.buffer_view.unwrap().value()];
    assert_eq!(view.buffer.value(), 0);
    let at = view.byte_offset.map_or(0, |o| o.0) as usize;
    &blob[at..at + view.byte_length.0 as usize]
}

/// The RGBA8 or RGB8 texels of the PNG behind texture `texture`.
fn texels(root: &json::Root, blob: &[u8], texture: usize) -> image::DynamicImage {
    let source = root.textures[texture].source.value();
    image::load_from_memory_with_format(image_bytes(root, blob, source), image::ImageFormat::Png)
        .unwrap()
}

/// The `KHR_texture_transform` scale of a texture reference's extensions.
fn scale(others: &serde_json::Map<String, serde_json::Value>) -> f64 {
    let s = &others["KHR_texture_transform"]["scale"];
    assert_eq!(s[0], s[1]);
    s[0].as_f64().unwrap()
}

fn srgb_to_linear(c: u8) -> f32 {
    let c = f32::from(c) / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// The id with the largest weight summed over a triangle's vertices, the
/// lowest on a tie.
fn dominant(ids: &[[u8; 4]; 3], weights: &[[u8; 4]; 3]) -> u8 {
    let mut sums = BTreeMap::<u8, u32>::new();
    for k in 0..3 {
        for j in 0..4 {
            *sums.entry(ids[k][j]).or_default() += u32::from(weights[k][j]);
        }
    }
    let best = *sums.values().max().unwrap();
    *sums.iter().find(|(_, s)| **s == best).unwrap().0
}

/// Checks the materials, images and texture references of one file.
fn check_materials(
    root: &json::Root,
    blob: &[u8],
    library: &MaterialLibrary,
    (cobble, clay): (Material, Material),
    steps_per_stud: f64,
) {
    let names: Vec<&str> = root
        .materials
        .iter()
        .map(|m| m.name.as_deref().unwrap())
        .collect();
    // Rock (3), Cobble (11), Clay (12) and Clay's top, in id order: the
    // materials drawn, no other built-in.
    assert_eq!(names, ["Rock", "Cobble", "Clay", "Clay (top)"]);
    let extras: Vec<serde_json::Value> = root
        .materials
        .iter()
        .map(|m| serde_json::from_str(m.extras.as_ref().unwrap().get()).unwrap())
        .collect();
    let ids: Vec<(u64, bool)> = extras
        .iter()
        .map(|e| {
            (
                e["strata_material_id"].as_u64().unwrap(),
                e["strata_top"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ids,
        [
            (3, false),
            (u64::from(cobble.0), false),
            (u64::from(clay.0), false),
            (u64::from(clay.0), true)
        ]
    );
    // The root's extras resolve every id of `_MATERIAL_IDS`.
    let root_extras: serde_json::Value =
        serde_json::from_str(root.extras.as_ref().unwrap().get()).unwrap();
    assert_eq!(
        root_extras["strata_materials"],
        serde_json::json!([
            {"id": 3, "name": "Rock", "material": 0},
            {"id": cobble.0, "name": "Cobble", "material": 1},
            {"id": clay.0, "name": "Clay", "material": 2, "top_material": 3},
        ])
    );
    // One image per texture and use: 2 albedos, a top, a normal, a roughness.
    assert_eq!(root.images.len(), 5);
    assert_eq!(root.textures.len(), 5);
    assert_eq!(root.samplers.len(), 1);
    let sampler = &root.samplers[0];
    assert_eq!(
        (sampler.wrap_s, sampler.wrap_t),
        (
            json::validation::Checked::Valid(json::texture::WrappingMode::Repeat),
            json::validation::Checked::Valid(json::texture::WrappingMode::Repeat)
        )
    );
    assert!(
        root.extensions_used
            .contains(&"KHR_texture_transform".to_string())
    );
    assert!(
        !root
            .extensions_required
            .contains(&"KHR_texture_transform".to_string())
    );

    let [rock_m, cobble_m, clay_m, top_m] = [0, 1, 2, 3].map(|i| &root.materials[i]);
    // Rock: no texture, its flat colour (linear) as the factor.
    let pbr = &rock_m.pbr_metallic_roughness;
    assert!(pbr.base_color_texture.is_none() && pbr.metallic_roughness_texture.is_none());
    assert!(rock_m.normal_texture.is_none());
    let flat = library.flat_colour_srgb(Material::ROCK);
    let expected = [0, 1, 2].map(|k| srgb_to_linear(flat[k]));
    for (factor, expected) in pbr.base_color_factor.0.iter().zip(expected) {
        assert!((factor - expected).abs() < 1e-6);
    }
    for m in [rock_m, cobble_m, clay_m, top_m] {
        assert_eq!(m.pbr_metallic_roughness.metallic_factor.0, 0.0);
    }
    // Albedos and the top variant: the library's level 0, byte for byte.
    for (m, texture, tiling) in [
        (cobble_m, library.albedo(cobble).unwrap(), 16.0),
        (clay_m, library.albedo(clay).unwrap(), 32.0),
        (top_m, library.top_albedo(clay).unwrap(), 32.0),
    ] {
        let info = m
            .pbr_metallic_roughness
            .base_color_texture
            .as_ref()
            .unwrap();
        let image = texels(root, blob, info.index.value());
        assert_eq!(image.color(), image::ColorType::Rgba8);
        assert_eq!((image.width(), image.height()), (SIDE, SIDE));
        assert_eq!(image.as_bytes(), texture.rgba8(), "{:?}", m.name);
        let s = scale(&info.extensions.as_ref().unwrap().others);
        assert!((s - 1.0 / (tiling * steps_per_stud)).abs() < 1e-9, "{s}");
    }
    // Clay's tint is its factor.
    let tint = clay_m.pbr_metallic_roughness.base_color_factor.0;
    assert!((tint[1] - srgb_to_linear(200)).abs() < 1e-6, "{tint:?}");
    // Surface maps: Cobble alone has them.
    for m in [clay_m, top_m] {
        assert!(m.normal_texture.is_none());
        assert!(
            m.pbr_metallic_roughness
                .metallic_roughness_texture
                .is_none()
        );
    }
    let packed = library.surface(cobble).unwrap().rgba8();
    let normal = cobble_m.normal_texture.as_ref().unwrap();
    assert!(
        (scale(&normal.extensions.as_ref().unwrap().others) - 1.0 / (16.0 * steps_per_stud)).abs()
            < 1e-9
    );
    let normal = texels(root, blob, normal.index.value());
    assert_eq!(normal.color(), image::ColorType::Rgb8);
    let mr = cobble_m
        .pbr_metallic_roughness
        .metallic_roughness_texture
        .as_ref()
        .unwrap();
    let mr = texels(root, blob, mr.index.value());
    for (i, (n, r)) in normal
        .as_bytes()
        .chunks_exact(3)
        .zip(mr.as_bytes().chunks_exact(3))
        .enumerate()
    {
        let p = &packed[4 * i..4 * i + 4];
        assert_eq!(&n[..2], &p[..2]);
        let (x, y) = (p[0] as f32 / 127.5 - 1.0, p[1] as f32 / 127.5 - 1.0);
        let z = n[2] as f32 / 127.5 - 1.0;
        assert!((x * x + y * y + z * z - 1.0).abs() < 0.03 || x * x + y * y > 1.0);
        assert_eq!(r, [255, p[2], 0]);
    }
}

/// Checks the primitives: each has a material, the triangles add up, and
/// (uncompressed) each triangle's material is its dominant id's or, on an
/// upward face of Clay, Clay's top. Returns triangles checked.
fn check_primitives(
    root: &json::Root,
    blob: &[u8],
    export: &GlbExport,
    (cobble, clay): (Material, Material),
    compressed: bool,
) -> usize {
    use json::mesh::Semantic as S;
    let textured = |m: usize| m != 0;
    let mut indices_total = 0u64;
    let mut checked = 0;
    let mut seen_materials = BTreeSet::new();
    let chunk_nodes: Vec<&json::Node> = root.nodes.iter().filter(|n| n.mesh.is_some()).collect();
    for node in chunk_nodes {
        let t = node.translation.map_or(Vec3::ZERO, Vec3::from);
        let s = node.scale.map_or(Vec3::ONE, Vec3::from);
        for p in &root.meshes[node.mesh.unwrap().value()].primitives {
            let material = p.material.expect("every primitive has a material").value();
            seen_materials.insert(material);
            let index = p.indices.unwrap().value();
            indices_total += root.accessors[index].count.0;
            let texcoord = p
                .attributes
                .get(&json::validation::Checked::Valid(S::TexCoords(0)));
            assert_eq!(texcoord.is_some(), textured(material));
            if let Some(tc) = texcoord {
                let a = &root.accessors[tc.value()];
                let expected = if compressed || s != Vec3::ONE {
                    json::accessor::ComponentType::I16
                } else {
                    json::accessor::ComponentType::F32
                };
                assert_eq!(a.component_type.as_ref().unwrap().0, expected);
            }
            if compressed {
                continue;
            }
            let attr = |sem: S| p.attributes[&json::validation::Checked::Valid(sem)].value();
            let quantized = s != Vec3::ONE;
            let positions: Vec<Vec3> = if quantized {
                elements(root, blob, attr(S::Positions), 6)
                    .iter()
                    .map(|b| {
                        let q = |k: usize| f32::from(i16::from_le_bytes([b[2 * k], b[2 * k + 1]]));
                        t + Vec3::new(q(0), q(1), q(2)) * s
                    })
                    .collect()
            } else {
                elements(root, blob, attr(S::Positions), 12)
                    .iter()
                    .map(|b| {
                        let f =
                            |k: usize| f32::from_le_bytes(b[4 * k..4 * k + 4].try_into().unwrap());
                        Vec3::new(f(0), f(1), f(2))
                    })
                    .collect()
            };
            let four = |i: usize| -> Vec<[u8; 4]> {
                elements(root, blob, i, 4)
                    .iter()
                    .map(|b| b.clone().try_into().unwrap())
                    .collect()
            };
            let weights = four(attr(S::Colors(0)));
            let ids = four(attr(S::Extras("MATERIAL_IDS".to_string())));
            let a = &root.accessors[index];
            let wide = a.component_type.as_ref().unwrap().0 == json::accessor::ComponentType::U32;
            let list: Vec<usize> = if wide {
                elements(root, blob, index, 4)
                    .iter()
                    .map(|b| u32::from_le_bytes(b[..4].try_into().unwrap()) as usize)
                    .collect()
            } else {
                elements(root, blob, index, 2)
                    .iter()
                    .map(|b| usize::from(u16::from_le_bytes([b[0], b[1]])))
                    .collect()
            };
            for tri in list.chunks_exact(3) {
                let id = dominant(
                    &[ids[tri[0]], ids[tri[1]], ids[tri[2]]],
                    &[weights[tri[0]], weights[tri[1]], weights[tri[2]]],
                );
                let [pa, pb, pc] = [positions[tri[0]], positions[tri[1]], positions[tri[2]]];
                let n = (pb - pa).cross(pc - pa);
                let margin = n.y - n.x.abs().max(n.z.abs());
                let expected = match id {
                    3 => 0,
                    id if id == cobble.0 => 1,
                    id if id == clay.0 => {
                        // Too close to the 45° line to tell after quantizing.
                        if margin.abs() < 1e-3 * n.length() {
                            continue;
                        }
                        if n.y > 0.0 && margin > 0.0 { 3 } else { 2 }
                    }
                    other => panic!("unexpected dominant id {other}"),
                };
                assert_eq!(material, expected, "triangle {pa} {pb} {pc}");
                checked += 1;
            }
        }
    }
    assert_eq!(indices_total, 3 * export.triangles as u64);
    assert_eq!(seen_materials, BTreeSet::from([0, 1, 2, 3]));
    assert_eq!(export.materials, 4);
    checked
}

#[test]
fn the_glb_carries_the_library_materials_in_every_encoding() {
    let dir = test_dir("encodings");
    let (library, cobble, clay) = library();
    let grid = world(cobble, clay);
    let mut triangles = None;
    for (encoding, steps) in [
        (GlbEncoding::Plain, 1.0),
        (GlbEncoding::Quantized, 64.0),
        (GlbEncoding::Meshopt, 64.0),
    ] {
        let path = dir.join(format!("{}.glb", encoding.label().replace([' ', '+'], "")));
        let export = export_glb(&grid, &library, &path, encoding).expect("export");
        // The same triangles in every encoding.
        assert_eq!(*triangles.get_or_insert(export.triangles), export.triangles);
        let bytes = std::fs::read(&path).unwrap();
        let (root, blob) = read(&bytes, encoding);
        check_materials(&root, &blob, &library, (cobble, clay), steps);
        let checked = check_primitives(
            &root,
            &blob,
            &export,
            (cobble, clay),
            encoding == GlbEncoding::Meshopt,
        );
        if encoding != GlbEncoding::Meshopt {
            assert!(
                checked * 10 > export.triangles * 9,
                "{checked} of {}",
                export.triangles
            );
        }
        assert!(export.primitives > export.chunks);
        let report = validate(&path);
        assert_eq!(report["numErrors"], 0, "{encoding:?}: {report:#}");
        // The one warning: the normal-mapped primitives (Cobble's) leave
        // their tangents to the runtime (MikkTSpace, as glTF specifies).
        let normal_mapped: Vec<String> = root
            .meshes
            .iter()
            .enumerate()
            .flat_map(|(m, mesh)| {
                mesh.primitives
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| p.material.unwrap().value() == 1)
                    .map(move |(i, _)| format!("/meshes/{m}/primitives/{i}/material"))
            })
            .collect();
        let warnings: Vec<String> = report["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["severity"] == 1)
            .map(|m| {
                assert_eq!(m["code"], "MESH_PRIMITIVE_GENERATED_TANGENT_SPACE", "{m}");
                m["pointer"].as_str().unwrap().to_string()
            })
            .collect();
        assert!(!normal_mapped.is_empty());
        assert_eq!(warnings, normal_mapped, "{encoding:?}");
    }
}
