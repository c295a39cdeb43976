//! Every `shaders/*.wgsl` parses and validates with naga, so shader mistakes
//! fail `cargo test` without needing a GPU.

use std::path::PathBuf;

fn shader_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|ext| ext == "wgsl"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_wgsl_shader_parses_and_validates() {
    let files = shader_files();
    assert!(
        files.iter().any(|p| p.ends_with("terrain.wgsl"))
            && files.iter().any(|p| p.ends_with("sky.wgsl")),
        "expected terrain.wgsl and sky.wgsl, found {files:?}"
    );
    for path in files {
        let source = std::fs::read_to_string(&path).expect("readable shader");
        let module = naga::front::wgsl::parse_str(&source)
            .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.emit_to_string(&source)));
        let mut validator = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        );
        validator
            .validate(&module)
            .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.emit_to_string(&source)));
        for entry in ["vs_main", "fs_main"] {
            assert!(
                module.entry_points.iter().any(|ep| ep.name == entry),
                "{}: missing entry point {entry}",
                path.display()
            );
        }
    }
}
