//! Unit tests of the material library: every refused change leaves it as
//! it was, and every accepted one is what the style says.

use super::*;

fn texture(side: u32, value: u8) -> MaterialTexture {
    MaterialTexture::new(side, vec![value; (side * side * 4) as usize]).unwrap()
}

#[test]
fn the_default_library_is_the_built_ins() {
    let lib = MaterialLibrary::default();
    assert!(lib.is_default());
    assert_eq!(lib.styles().count(), 9);
    assert_eq!(lib.name(Material::GRASS), "Grass");
    assert_eq!(lib.material_named("rock"), Some(Material::ROCK));
    assert_eq!(lib.drawn_side_px(), 256);
    assert_eq!(lib.style(Material::WATER), None);
}

#[test]
fn restyling_renames_and_shares_equal_textures() {
    let mut lib = MaterialLibrary::default();
    lib.rename(Material::GRASS, "  Studio moss ").unwrap();
    assert_eq!(lib.material_named("studio MOSS"), Some(Material::GRASS));
    // The built-in name still finds the id while no one else has it.
    assert_eq!(lib.material_named("grass"), Some(Material::GRASS));
    lib.set_albedo(Material::GRASS, texture(512, 9)).unwrap();
    lib.set_albedo(Material::DIRT, texture(512, 9)).unwrap();
    assert_eq!(lib.textures().count(), 1);
    assert_eq!(lib.drawn_side_px(), 512);
    lib.reset(Material::GRASS).unwrap();
    assert_eq!(lib.textures().count(), 1);
    lib.clear_albedo(Material::DIRT).unwrap();
    assert_eq!(lib.textures().count(), 0);
    assert!(lib.is_default());
}

#[test]
fn refused_changes_leave_the_library_as_it_was() {
    let mut lib = MaterialLibrary::default();
    let before = lib.clone();
    assert_eq!(
        lib.rename(Material::ROCK, "grass"),
        Err(LibraryError::DuplicateName {
            name: "Grass".into()
        })
    );
    assert!(matches!(
        lib.rename(Material::ROCK, "  "),
        Err(LibraryError::BadName { .. })
    ));
    assert!(matches!(
        lib.rename(Material::ROCK, &"x".repeat(49)),
        Err(LibraryError::BadName { .. })
    ));
    assert_eq!(
        lib.set_tiling(Material::ROCK, 48),
        Err(LibraryError::BadTiling { studs: 48 })
    );
    assert_eq!(
        lib.set_albedo(Material::ROCK, texture(256, 1)),
        Err(LibraryError::WrongTextureSide {
            expected: 512,
            found: 256
        })
    );
    assert_eq!(
        lib.set_tint(Material::WATER, [1, 2, 3]),
        Err(LibraryError::NotStyled { id: 1 })
    );
    assert_eq!(lib, before);
}

#[test]
fn the_memory_report_counts_the_array_and_each_texture() {
    let mut lib = MaterialLibrary::default();
    let report = lib.memory_report();
    assert_eq!(report.drawn_side_px, 256);
    assert_eq!(report.array_gpu_bytes, 11 * 349_524);
    lib.set_albedo(Material::SAND, texture(512, 3)).unwrap();
    let report = lib.memory_report();
    assert_eq!(report.drawn_side_px, 512);
    assert_eq!((report.layers, report.gpu_bytes_per_layer), (11, 1_398_100));
    let sand = &report.materials[3];
    assert_eq!(
        (sand.id, sand.imported, sand.texture_gpu_bytes),
        (5, true, 1_398_100)
    );
    assert_eq!(report.materials[0].texture_gpu_bytes, 0);
}

#[test]
fn the_flat_colour_is_the_texture_average_times_the_tint() {
    let mut lib = MaterialLibrary::default();
    assert_eq!(
        lib.flat_colour_srgb(Material::SAND),
        Material::SAND.base_color_srgb()
    );
    let texels: Vec<u8> = [200u8, 100, 50, 255].repeat(512 * 512);
    lib.set_albedo(Material::SAND, MaterialTexture::new(512, texels).unwrap())
        .unwrap();
    lib.set_tint(Material::SAND, [255, 128, 0]).unwrap();
    assert_eq!(lib.flat_colour_srgb(Material::SAND), [200, 50, 0]);
}

#[test]
fn top_variants_take_layers_after_the_ids() {
    let mut lib = MaterialLibrary::default();
    lib.set_albedo(Material::DIRT, texture(512, 90)).unwrap();
    lib.set_top_albedo(Material::SNOW, texture(512, 250))
        .unwrap();
    lib.set_top_albedo(Material::DIRT, texture(512, 30))
        .unwrap();
    assert_eq!(lib.layer_count(), 13);
    assert_eq!(lib.top_layer(Material::DIRT), 11);
    assert_eq!(lib.top_layer(Material::SNOW), 12);
    assert_eq!(lib.top_layer(Material::ROCK), 3);
    assert_eq!(lib.flat_colour_srgb(Material::DIRT), [30, 30, 30]);
    assert_eq!(lib.texture_gpu_bytes(Material::DIRT), 2 * 1_398_100);
    assert_eq!(lib.needed_gpu_bytes(), 13 * 1_398_100);
    lib.clear_top_albedo(Material::SNOW).unwrap();
    assert_eq!(lib.top_layer(Material::DIRT), 11);
    assert_eq!(lib.layer_count(), 12);
    assert_eq!(lib.textures().count(), 2);
}

#[test]
fn the_budget_is_checked_before_a_texture_is_taken() {
    let mut lib = MaterialLibrary::default();
    lib.set_texture_budget_bytes(1 << 20);
    let before = lib.clone();
    let err = lib.set_albedo(Material::SAND, texture(512, 3)).unwrap_err();
    assert!(matches!(err, LibraryError::OverBudget { .. }), "{err}");
    assert!(err.to_string().contains("14.7 MiB"), "{err}");
    assert_eq!(lib, before);
}

#[test]
fn the_side_is_fixed_while_textures_use_it() {
    let mut lib = MaterialLibrary::default();
    lib.set_texture_side_px(1024).unwrap();
    lib.set_albedo(Material::SNOW, texture(1024, 200)).unwrap();
    assert_eq!(
        lib.set_texture_side_px(512),
        Err(LibraryError::SideInUse { count: 1 })
    );
    assert_eq!(
        lib.set_texture_side_px(1000),
        Err(LibraryError::BadSide { side_px: 1000 })
    );
}

#[test]
fn stored_parts_rebuild_the_same_library() {
    let mut lib = MaterialLibrary::default();
    lib.set_albedo(Material::MUD, texture(512, 40)).unwrap();
    lib.set_tint(Material::MUD, [200, 180, 160]).unwrap();
    lib.set_tiling(Material::MUD, 64).unwrap();
    let moss = lib.add_material("Moss", texture(512, 90), None).unwrap();
    let styles: Vec<(Material, MaterialStyle)> =
        lib.styles().map(|(m, s)| (m, s.clone())).collect();
    let textures: Vec<MaterialTexture> = lib.textures().cloned().collect();
    let back = MaterialLibrary::from_parts(512, styles.clone(), textures).unwrap();
    assert_eq!(back, lib);
    assert_eq!(back.albedo(Material::MUD), lib.albedo(Material::MUD));
    assert_eq!(back.albedo_layer(moss), Some(11));
    // Out of order, a built-in missing, or an added material without an
    // albedo: refused.
    let mut swapped = styles.clone();
    swapped.swap(0, 1);
    assert!(MaterialLibrary::from_parts(512, swapped, lib.textures().cloned().collect()).is_err());
    let mut no_albedo = styles.clone();
    no_albedo[9].1.albedo = None;
    assert_eq!(
        MaterialLibrary::from_parts(512, no_albedo, lib.textures().cloned().collect()),
        Err(LibraryError::NoBuiltInLook { id: 11 })
    );
    let missing = MaterialLibrary::from_parts(512, styles, Vec::new());
    assert!(matches!(
        missing,
        Err(LibraryError::MissingTexture { id: 7, .. })
    ));
}

#[test]
fn blend_sharpness_needs_a_height_map_and_goes_with_it() {
    use crate::terrain::materials::surface::pack_surface;
    let mut lib = MaterialLibrary::default();
    lib.set_texture_side_px(256).unwrap();
    assert_eq!(
        lib.set_blend_sharpness(Material::ROCK, 50),
        Err(LibraryError::NoHeightMap { id: 3 })
    );
    assert_eq!(lib.set_blend_sharpness(Material::ROCK, 0), Ok(()));
    let height = vec![200u8; 256 * 256 * 4];
    let with_height = pack_surface(256, None, false, None, Some(&height)).unwrap();
    lib.set_material_set(Material::ROCK, texture(256, 9), Some(with_height))
        .unwrap();
    assert_eq!(
        lib.style(Material::ROCK).unwrap().blend_sharpness_pct,
        DEFAULT_BLEND_SHARPNESS_PCT
    );
    assert_eq!(
        lib.set_blend_sharpness(Material::ROCK, 101),
        Err(LibraryError::BadSharpness { pct: 101 })
    );
    lib.set_blend_sharpness(Material::ROCK, 80).unwrap();
    // A set without a height map takes the sharpness away with the maps.
    lib.set_material_set(Material::ROCK, texture(256, 9), None)
        .unwrap();
    assert_eq!(lib.style(Material::ROCK).unwrap().blend_sharpness_pct, 0);
    assert!(lib.surface(Material::ROCK).is_none());
}

#[test]
fn added_materials_take_the_lowest_free_id_and_layers_after_the_built_ins() {
    let mut lib = MaterialLibrary::default();
    lib.set_texture_side_px(256).unwrap();
    let a = lib.add_material("Moss", texture(256, 1), None).unwrap();
    let b = lib.add_material("Cobble", texture(256, 2), None).unwrap();
    let c = lib.add_material("Tiles", texture(256, 3), None).unwrap();
    assert_eq!((a, b, c), (Material(11), Material(12), Material(13)));
    assert_eq!(lib.layer_count(), 14);
    assert_eq!(lib.material_named("cobble"), Some(b));
    assert_eq!(
        lib.add_material("moss", texture(256, 4), None),
        Err(LibraryError::DuplicateName {
            name: "Moss".into()
        })
    );
    assert_eq!(
        lib.add_material("ROCK", texture(256, 4), None),
        Err(LibraryError::DuplicateName {
            name: "Rock".into()
        })
    );
    // Case is ignored in every script, not only ASCII.
    let eclair = lib.add_material("Éclair", texture(256, 5), None).unwrap();
    assert_eq!(
        lib.add_material("éclair", texture(256, 6), None),
        Err(LibraryError::DuplicateName {
            name: "Éclair".into()
        })
    );
    assert_eq!(lib.material_named("ÉCLAIR"), Some(eclair));
    lib.add_material("ΣΟΦΙΑ", texture(256, 7), None).unwrap();
    assert!(lib.add_material("σοφια", texture(256, 8), None).is_err());
    // The Kelvin sign lowercases to k.
    assert!(
        lib.add_material("\u{212A}elvin", texture(256, 9), None)
            .is_ok()
    );
    assert!(lib.add_material("kelvin", texture(256, 10), None).is_err());
    for m in [eclair, Material(15), Material(16)] {
        lib.remove_material(m).unwrap();
    }
    // Removing the middle one frees its id and shifts the layers after it.
    let removed = lib.remove_material(b).unwrap();
    assert_eq!(removed.name, "Cobble");
    assert_eq!(lib.albedo_layer(c), Some(12));
    assert_eq!(lib.albedo_layer(b), None);
    assert!(!lib.contains(b));
    assert_eq!(lib.textures().count(), 2, "Cobble's texture went with it");
    assert_eq!(lib.add_material("Cobble 2", texture(256, 5), None), Ok(b));
    // A top variant takes a layer after every material's own.
    lib.set_top_albedo(a, texture(256, 6)).unwrap();
    assert_eq!(lib.top_layer(a), 14);
    assert_eq!(
        lib.layers()[11..],
        [(a, false), (b, false), (c, false), (a, true)]
    );
    // Built-ins stay.
    assert_eq!(
        lib.remove_material(Material::GRASS),
        Err(LibraryError::BuiltIn { id: 2 })
    );
    assert_eq!(lib.reset(a), Err(LibraryError::NoBuiltInLook { id: 11 }));
    assert_eq!(
        lib.clear_albedo(a),
        Err(LibraryError::NoBuiltInLook { id: 11 })
    );
}

#[test]
fn the_library_holds_254_solids_and_refuses_a_255th_or_a_257th_layer() {
    let mut lib = MaterialLibrary::default();
    lib.set_texture_side_px(256).unwrap();
    for k in 0..245u32 {
        lib.add_material(&format!("M{k}"), texture(256, k as u8), None)
            .unwrap();
    }
    assert_eq!(lib.solid_count(), 254);
    assert_eq!(lib.layer_count(), MAX_TEXTURE_LAYERS);
    assert!(lib.contains(Material(255)));
    let before = lib.clone();
    assert_eq!(
        lib.add_material("One more", texture(256, 7), None),
        Err(LibraryError::LibraryFull)
    );
    assert_eq!(
        lib.set_top_albedo(Material(200), texture(256, 8)),
        Err(LibraryError::TooManyLayers {
            layers: 257,
            max: MAX_TEXTURE_LAYERS
        })
    );
    assert_eq!(lib, before, "refusals change nothing");
}
