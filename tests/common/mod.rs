//! Helpers shared by the tests that need a GPU adapter or a shared data file.
//! Neither is optional: a test that cannot get its adapter or its data file
//! fails with a message saying which and why, never passes without running.

// Each test binary includes this module and uses only some of it.
#![allow(dead_code)]

pub mod fuzz_rng;
pub mod layer_record;
pub mod libraries;
pub mod oracles;
pub mod pixels;
pub mod zero_png;

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

/// A headless GPU for test `test`.
///
/// # Panics
/// When no graphics adapter can be created (no Vulkan, Metal, DX12 or GL
/// driver; lavapipe is enough): the test fails, it is not skipped.
pub fn require_gpu(test: &str) -> Gpu {
    match Gpu::new_headless() {
        Ok(gpu) => {
            eprintln!("{test}: adapter {}", gpu.adapter_summary());
            gpu
        }
        Err(e) => panic!("{test} needs a graphics adapter and none could be created: {e}"),
    }
}

/// The folder holding the project's shared data: `STRATA_SHARED_DIR/data`
/// when that variable is set, else `shared/data` beside the checkout (found
/// relative to the repository, never through an absolute path).
pub fn shared_data_dir() -> PathBuf {
    std::env::var_os("STRATA_SHARED_DIR")
        .map_or_else(
            || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"),
            PathBuf::from,
        )
        .join("data")
}

/// The file `name` of the shared data folder ([`shared_data_dir`]).
///
/// # Panics
/// When the file is not there: the test fails, it is not skipped.
pub fn shared_data_file(name: &str) -> PathBuf {
    let path = shared_data_dir().join(name);
    assert!(
        path.is_file(),
        "data file missing at {}: this test reads it; put the project's shared/ folder \
         beside the checkout or set STRATA_SHARED_DIR to it",
        path.display()
    );
    path
}

/// The Jacksboro fault DEM (`shared/data/jacksboro_fault_dem.png`).
pub fn dem_path() -> PathBuf {
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

/// Saves `grid` with its material library `library` as a whole world file
/// at `path`, and checks the world hash the save reports is the grid's.
pub fn save_with_library(
    path: &std::path::Path,
    grid: &strata::terrain::Grid,
    library: &strata::terrain::materials::MaterialLibrary,
) {
    use strata::io::world::world_file::{WorldFile, WorldMeta};
    let meta = WorldMeta {
        materials: library.clone(),
        ..WorldMeta::default()
    };
    let (_, report) = WorldFile::save_full(path, grid, &meta).unwrap();
    assert_eq!(report.world_hash, grid.content_hash());
}
