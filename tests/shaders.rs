//! Every shader module parses and validates with naga, exactly as the
//! renderer builds it (with `shaders/globals.wgsl` and `shaders/shading.wgsl`
//! prepended), so shader
//! mistakes fail `cargo test` without needing a GPU.

use std::path::PathBuf;

use strata::render::shaders;

fn shader_files() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(|entry| entry.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".wgsl"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_wgsl_file_is_a_built_module_or_the_shared_globals() {
    for name in shader_files() {
        assert!(
            name == "globals.wgsl"
                || name == "shading.wgsl"
                || shaders::ALL.iter().any(|(n, _)| *n == name),
            "shaders/{name} is not built by src/render/shaders.rs"
        );
    }
}

#[test]
fn every_wgsl_shader_parses_and_validates() {
    assert!(
        shaders::ALL
            .iter()
            .all(|(_, source)| source.starts_with(shaders::GLOBALS_WGSL))
    );
    for (name, source) in shaders::ALL {
        let module = naga::front::wgsl::parse_str(source)
            .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
        let mut validator = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        );
        validator
            .validate(&module)
            .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
        for entry in ["vs_main", "fs_main"] {
            assert!(
                module.entry_points.iter().any(|ep| ep.name == entry),
                "{name}: missing entry point {entry}"
            );
        }
    }
}

/// The low-poly palette the terrain shader reads (the material styles) is
/// the materials' base colours for the default library, and the wall shade
/// is the atlas's skirt shade (the view shows what the export writes).
#[test]
fn the_low_poly_palette_matches_the_materials_and_the_atlas() {
    use strata::mesh::lowpoly::palette_atlas::SKIRT_SHADE;
    use strata::render::terrain::material_textures::style_gpu_data;
    use strata::terrain::Material;
    use strata::terrain::materials::MaterialLibrary;
    let source = include_str!("../shaders/terrain.wgsl");
    assert!(
        source.contains("material_styles[min(material, 255u)].palette_srgb"),
        "low_poly_albedo reads the palette from the material styles"
    );
    let styles = style_gpu_data(&MaterialLibrary::default());
    for m in Material::ALL {
        let [r, g, b] = m.base_color_srgb().map(f32::from);
        // w: the albedo and top layers, both the id's own.
        assert_eq!(
            styles[m.0 as usize].palette_srgb,
            [r, g, b, f32::from(m.0) * 257.0],
            "{m:?}"
        );
    }
    let shade_line = source
        .lines()
        .find(|l| l.starts_with("const LOW_POLY_SKIRT_SHADE"))
        .expect("terrain.wgsl declares LOW_POLY_SKIRT_SHADE");
    let shade: f32 = shade_line
        .split('=')
        .nth(1)
        .and_then(|v| v.trim().trim_end_matches(';').parse().ok())
        .expect("a number");
    assert_eq!(shade, SKIRT_SHADE);
}
