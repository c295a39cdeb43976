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
