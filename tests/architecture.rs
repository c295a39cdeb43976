//! The layering of `src/`, checked: every `crate::` path in a library file
//! names a module of its own layer or a lower one, and only the GUI layers
//! name wgpu, winit or egui. The order, lowest first, is the one `lib.rs`
//! and the README state:
//!
//! terrain (with camera, progress) < mesh < pipeline, collision < io <
//! script < render < editor < app < main.rs

use std::path::{Path, PathBuf};

/// The layer rank of a top-level module of the crate, lowest first.
fn rank(module: &str) -> Option<u8> {
    Some(match module {
        "terrain" | "camera" | "progress" => 0,
        "mesh" => 1,
        "pipeline" | "collision" => 2,
        "io" => 3,
        "script" => 4,
        "render" => 5,
        "editor" => 6,
        "app" => 7,
        _ => return None,
    })
}

/// Modules that may name the GPU, window and GUI crates.
const GUI_MODULES: [&str; 3] = ["render", "editor", "app"];

/// Crates only [`GUI_MODULES`] (and the binary) may use.
const GUI_CRATES: [&str; 5] = ["wgpu", "winit", "egui", "egui_wgpu", "egui_winit"];

/// The top-level module a file under `src/` belongs to (`src/terrain/grid.rs`
/// → `terrain`, `src/camera.rs` → `camera`), `None` for `lib.rs`/`main.rs`.
fn module_of(relative: &Path) -> Option<String> {
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib" && name != "main").then(|| name.to_string())
}

/// The code of `source` without comments (line comments, doc comments and
/// block comments), so doc links do not count as imports.
fn strip_comments(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut depth = 0usize;
    for line in source.lines() {
        let mut rest = line;
        let mut kept = String::new();
        loop {
            if depth > 0 {
                match rest.find("*/") {
                    Some(i) => {
                        depth -= 1;
                        rest = &rest[i + 2..];
                    }
                    None => break,
                }
            } else {
                let line_comment = rest.find("//");
                let block = rest.find("/*");
                match (line_comment, block) {
                    (Some(l), Some(b)) if b < l => {
                        kept.push_str(&rest[..b]);
                        depth += 1;
                        rest = &rest[b + 2..];
                    }
                    (Some(l), _) => {
                        kept.push_str(&rest[..l]);
                        break;
                    }
                    (None, Some(b)) => {
                        kept.push_str(&rest[..b]);
                        depth += 1;
                        rest = &rest[b + 2..];
                    }
                    (None, None) => {
                        kept.push_str(rest);
                        break;
                    }
                }
            }
        }
        out.push_str(&kept);
        out.push('\n');
    }
    out
}

/// Every top-level module a `crate::` path in `code` names, with its line
/// (1-based): `crate::mesh::X`, `crate::{io, pipeline::Y}`.
fn crate_paths(code: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (i, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            // Skip identifiers that merely end in "crate" (e.g. `subcrate::`).
            let before = rest[..at].chars().next_back();
            rest = &rest[at + "crate::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                for item in group[..end].split(',') {
                    let name: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        found.push((i + 1, name));
                    }
                }
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.push((i + 1, name));
                }
            }
        }
    }
    found
}

/// True when `code` names `krate` as a path root (`wgpu::`, `use egui;`).
fn names_crate(code: &str, krate: &str) -> Option<usize> {
    for (i, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find(krate) {
            let before = rest[..at].chars().next_back();
            let after = &rest[at + krate.len()..];
            let bounded_before = before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            let used = after.starts_with("::") || after.starts_with(';');
            if bounded_before && used && !rest[..at].ends_with("crate::") {
                return Some(i + 1);
            }
            rest = &rest[at + krate.len()..];
        }
    }
    None
}

/// The layering violations of one file (`relative` to `src/`).
fn violations(relative: &Path, source: &str) -> Vec<String> {
    let Some(module) = module_of(relative) else {
        return Vec::new();
    };
    let Some(own) = rank(&module) else {
        return vec![format!(
            "{}: module `{module}` has no layer; add it to tests/architecture.rs and lib.rs",
            relative.display()
        )];
    };
    let code = strip_comments(source);
    let mut out = Vec::new();
    for (line, target) in crate_paths(&code) {
        match rank(&target) {
            Some(r) if r > own => out.push(format!(
                "{}:{line}: `{module}` (layer {own}) imports `crate::{target}` (layer {r}), \
                 which lies above it",
                relative.display()
            )),
            Some(_) => {}
            None => out.push(format!(
                "{}:{line}: `crate::{target}` is not a known module",
                relative.display()
            )),
        }
    }
    if !GUI_MODULES.contains(&module.as_str()) {
        for krate in GUI_CRATES {
            if let Some(line) = names_crate(&code, krate) {
                out.push(format!(
                    "{}:{line}: `{module}` uses `{krate}`; only render, editor and app may",
                    relative.display()
                ));
            }
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_file_imports_from_a_higher_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    assert!(files.len() > 50, "found only {} source files", files.len());
    let mut all = Vec::new();
    for path in &files {
        let source = std::fs::read_to_string(path).expect("readable source");
        let relative = path.strip_prefix(&src).expect("under src");
        all.extend(violations(relative, &source));
    }
    assert!(
        all.is_empty(),
        "{} layering violations:\n{}",
        all.len(),
        all.join("\n")
    );
}

#[test]
fn the_checker_catches_upward_imports_in_every_form() {
    let terrain = Path::new("terrain/grid.rs");
    assert!(
        violations(
            terrain,
            "use crate::terrain::cell::Cell;\nuse super::chunk;"
        )
        .is_empty()
    );
    assert_eq!(violations(terrain, "use crate::render::Gpu;").len(), 1);
    assert_eq!(
        violations(terrain, "use crate::{terrain::cell, io::world_file};").len(),
        1
    );
    assert_eq!(
        violations(terrain, "fn f() { crate::editor::panel::show(); }").len(),
        1
    );
    // Comments and doc links are not imports.
    assert!(violations(terrain, "/// See [`crate::render::Gpu`].\n// crate::app").is_empty());
    assert!(violations(terrain, "/* crate::app::x */ fn f() {}").is_empty());
    // The GUI crates stay in the GUI layers.
    assert_eq!(violations(terrain, "fn f(_: wgpu::Device) {}").len(), 1);
    assert!(violations(Path::new("render/gpu.rs"), "fn f(_: wgpu::Device) {}").is_empty());
    // Same layer and below are fine; a module with no layer is reported.
    let pipeline = Path::new("pipeline/lod.rs");
    assert!(violations(pipeline, "use crate::collision::X; use crate::mesh::Y;").is_empty());
    assert_eq!(violations(Path::new("gizmo/x.rs"), "").len(), 1);
    // lib.rs and main.rs sit above everything.
    assert!(violations(Path::new("lib.rs"), "pub mod app;").is_empty());
}
