//! The independent readers and writers the interchange tests compare
//! Strata with (`tools/oracles`, installed into `.oracles/` by `.ci/setup`):
//! Python's tifffile, rasterio and OpenEXR, and the Khronos glTF validator.
//! A test that needs one and finds it missing fails, naming the command that
//! installs it; it never passes without running.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's `.oracles/` folder.
fn oracles_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".oracles")
}

/// The Python interpreter of the oracles' virtual environment.
///
/// # Panics
/// When `.oracles/venv` is missing: run `.ci/setup`.
pub fn python() -> PathBuf {
    let python = oracles_dir().join("venv/bin/python");
    assert!(
        python.is_file(),
        "the Python oracles are not installed at {}: run .ci/setup",
        python.display()
    );
    python
}

/// Runs the oracle script `tools/oracles/<script>` with `args` under the
/// oracles' Python and returns its standard output.
///
/// # Panics
/// When the interpreter is missing or the script exits with an error (its
/// standard error is in the message).
pub fn run_python(script: &str, args: &[&str]) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tools/oracles")
        .join(script);
    let out = Command::new(python())
        .arg(&path)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", path.display()));
    assert!(
        out.status.success(),
        "{script} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("oracle output is UTF-8")
}

/// The `node_modules` folder holding `gltf-validator`.
///
/// # Panics
/// When the validator is missing: run `.ci/setup`.
pub fn gltf_validator_modules() -> PathBuf {
    let modules = oracles_dir().join("node_modules");
    assert!(
        modules.join("gltf-validator").is_dir(),
        "the glTF validator is not installed in {}: run .ci/setup",
        modules.display()
    );
    modules
}

/// The Khronos validator's report of the glTF file at `path`
/// (`tools/oracles/validate_gltf.mjs`), as JSON.
///
/// # Panics
/// When the validator is missing or fails to run, or prints no JSON.
pub fn validate_gltf(path: &Path) -> serde_json::Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/oracles/validate_gltf.mjs");
    let out = Command::new("node")
        .arg(&script)
        .arg(path)
        .env("GLTF_VALIDATOR_MODULES", gltf_validator_modules())
        .output()
        .expect("run node (installed by .ci/setup)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "validator output is not JSON ({e}): {stdout} {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(out.status.success(), "{}: {report:#}", path.display());
    report
}
