//! Helpers shared by the tests that need a GPU adapter or a shared data file.
//! Each says so when it skips; in CI (`CI` set) a missing data file fails the
//! test, and with `STRATA_REQUIRE_GPU=1` (set by `.ci/run` when an adapter
//! exists) a missing adapter does.

// Each test binary includes this module and uses only some of it.
#![allow(dead_code)]

use std::path::PathBuf;

use std::sync::Arc;

use strata::mesh::ChunkMesh;
use strata::pipeline::ChunkUploader;
use strata::render::Gpu;
use strata::terrain::ChunkCoord;

/// An uploader that keeps nothing: for pipeline tests without a GPU.
pub struct NoGpu;

impl ChunkUploader for NoGpu {
    fn stage(&mut self, _: ChunkCoord, _: u8, _: &Arc<ChunkMesh>) {}
    fn promote(&mut self, _: &[ChunkCoord]) {}
    fn evict(&mut self, _: &[ChunkCoord]) {}
}

/// True when `name` is set to a non-empty value other than `0`.
fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// A headless GPU, or `None` (with a message) when no adapter at all can be
/// created. CI installs lavapipe, so there the rendering tests always run.
///
/// # Panics
/// With `STRATA_REQUIRE_GPU=1` when no adapter can be created: the test
/// fails instead of skipping.
pub fn gpu_or_skip(test: &str) -> Option<Gpu> {
    match Gpu::new_headless() {
        Ok(gpu) => {
            eprintln!("{test}: adapter {}", gpu.adapter_summary());
            Some(gpu)
        }
        Err(e) if env_flag("STRATA_REQUIRE_GPU") => {
            panic!(
                "{test}: STRATA_REQUIRE_GPU is set but no graphics adapter could be created: {e}"
            )
        }
        Err(e) => {
            eprintln!("SKIPPING {test}: no graphics adapter could be created: {e}");
            None
        }
    }
}

/// A file of the project's shared data folder (`shared/data/NAME`): the
/// folder `STRATA_SHARED_DIR` names, else `shared/` beside the checkout
/// (found relative to the repository, never through an absolute path).
/// `None`, with a note, when it is missing.
///
/// # Panics
/// In CI (`CI` set) when the file is missing: the data must be there.
pub fn shared_data_file(name: &str) -> Option<PathBuf> {
    let candidates = std::env::var_os("STRATA_SHARED_DIR")
        .map(PathBuf::from)
        .into_iter()
        .chain([PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared")]);
    for dir in candidates {
        let path = dir.join("data").join(name);
        if path.exists() {
            return Some(path);
        }
    }
    let message = format!(
        "shared/data/{name} is not beside this checkout; set STRATA_SHARED_DIR to the \
         shared folder to run this test"
    );
    if env_flag("CI") {
        panic!("{message} (CI is set, so the data must be there)");
    }
    eprintln!("SKIPPED: {message}");
    None
}

/// The Jacksboro fault DEM (`shared/data/jacksboro_fault_dem.png`).
pub fn dem_path() -> Option<PathBuf> {
    shared_data_file("jacksboro_fault_dem.png")
}

/// Runs `cmd` (the `strata` binary, say) and asserts that it succeeded,
/// with its stderr in the failure message.
#[allow(dead_code)] // Not every test binary runs commands.
pub fn run_ok(cmd: &mut std::process::Command) -> std::process::Output {
    let out = cmd.output().expect("the command runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The JSON file at `path`, parsed.
#[allow(dead_code)] // Not every test binary reads statistics.
pub fn read_json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("json written")).expect("valid json")
}
