//! A bounded mutation fuzzer for the elevation readers (GeoTIFF, EXR,
//! RAW16). Starts from the fixtures other writers made
//! (`tests/data/elevation`) and mutates them as a damaged or hostile file
//! differs from a good one: flipped bits, overwritten bytes (often in the
//! first kilobytes, where TIFF and EXR headers and tag tables live),
//! 16- and 32-bit fields set to edge values, cuts, extensions and splices
//! of another fixture. Every input must read or fail with an error within
//! [`MAX_READ`], and never panic.
//!
//! It runs for `STRATA_FUZZ_SECS` seconds (default 5, so CI stays quick);
//! `STRATA_FUZZ_SECS=600 cargo test --release --test fuzz_heightmap_formats
//! -- --nocapture` is the long run. Inputs are deterministic per index: a
//! finding prints the index to reproduce it with `STRATA_FUZZ_FROM`.

mod common;

use common::fuzz_rng::Rng;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use strata::io::heightmap::heightmap_format::read_elevation;
use strata::io::heightmap::heightmap_import::{HeightmapSettings, MAX_SIDE_CELLS};
use strata::progress::Progress;

/// Longest one read of a (small) mutated file may take.
const MAX_READ: Duration = Duration::from_secs(2);

/// The fixtures mutated, with the extension their inputs keep.
const SEEDS: [&str; 5] = [
    "float32_tiled_lzw_pred3.tif",
    "int16_striped_deflate_pred2.tif",
    "uint16_nodata_packbits.tif",
    "rgb_float32.exr",
    "unity_129.r16",
];

/// A position, more often in the first 2 KiB (headers, tag tables).
fn position(rng: &mut Rng, len: usize) -> usize {
    if rng.below(3) > 0 {
        rng.below(len.min(2048))
    } else {
        rng.below(len)
    }
}

/// One mutation of `bytes`, `donor` another fixture.
fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>, donor: &[u8]) {
    let len = bytes.len().max(1);
    match rng.below(7) {
        0 => {
            let at = position(rng, len);
            if let Some(b) = bytes.get_mut(at) {
                *b ^= 1 << rng.below(8);
            }
        }
        1 => {
            let at = position(rng, len);
            if let Some(b) = bytes.get_mut(at) {
                *b = rng.next() as u8;
            }
        }
        2 => {
            // A 16- or 32-bit field set to an edge value.
            let edges: [u32; 6] = [0, 1, 0xFFFF, 0x7FFF_FFFF, 0xFFFF_FFFF, 65_537];
            let value = edges[rng.below(edges.len())].to_le_bytes();
            let at = position(rng, len);
            let width = if rng.below(2) == 0 { 2 } else { 4 };
            for (i, v) in value.iter().take(width).enumerate() {
                if let Some(b) = bytes.get_mut(at + i) {
                    *b = *v;
                }
            }
        }
        3 => bytes.truncate(rng.below(len)),
        4 => {
            let extra = rng.below(4096);
            bytes.extend((0..extra).map(|_| rng.next() as u8));
        }
        5 => {
            // A run of the donor over the file.
            let at = rng.below(len);
            let from = rng.below(donor.len());
            let n = rng.below(256).min(donor.len() - from);
            for i in 0..n {
                if let Some(b) = bytes.get_mut(at + i) {
                    *b = donor[from + i];
                }
            }
        }
        _ => {
            let a = rng.below(len);
            let b = (a + rng.below(64)).min(bytes.len());
            bytes.drain(a..b);
        }
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Reads `path` on a thread: `Ok(read)` whether the read succeeded or
/// failed cleanly, `Err` with what went wrong for a panic or a read past
/// [`MAX_READ`].
fn read_bounded(path: &Path) -> Result<bool, String> {
    let path = path.to_path_buf();
    let settings = HeightmapSettings {
        cells_per_pixel: 1.0,
        vertical_scale: 1.0,
        ..HeightmapSettings::default()
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let outcome = read_elevation(&path, &settings, MAX_SIDE_CELLS, &Progress::new());
        let _ = tx.send(outcome.is_ok());
    });
    match rx.recv_timeout(MAX_READ) {
        Ok(read) => handle
            .join()
            .map(|()| read)
            .map_err(|_| "panicked".to_string()),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(format!("ran past {MAX_READ:?}")),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err("panicked".to_string()),
    }
}

#[test]
fn mutated_elevation_files_read_or_fail_cleanly_in_bounded_time() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/elevation");
    let seeds: Vec<(PathBuf, Vec<u8>)> = SEEDS
        .iter()
        .map(|name| {
            let path = fixtures.join(name);
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    let dir = std::env::temp_dir().join(format!("fuzz_heightmap_formats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The RAW16's sidecar goes with its inputs.
    std::fs::copy(fixtures.join("unity_129.json"), dir.join("input.json")).unwrap();
    let budget = Duration::from_secs(env_u64("STRATA_FUZZ_SECS", 5));
    let first = env_u64("STRATA_FUZZ_FROM", 0);
    let start = Instant::now();
    let (mut inputs, mut read_ok) = (0_u64, 0_u64);
    let mut index = first;
    while start.elapsed() < budget || inputs < 20 {
        let mut rng = Rng::new(index);
        let (seed_path, seed) = &seeds[rng.below(seeds.len())];
        let donor = &seeds[rng.below(seeds.len())].1;
        let mut bytes = seed.clone();
        for _ in 0..1 + rng.below(4) {
            mutate(&mut rng, &mut bytes, donor);
        }
        let ext = seed_path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("bin");
        let path = dir.join(format!("input.{ext}"));
        std::fs::write(&path, &bytes).unwrap();
        match read_bounded(&path) {
            Ok(read) => read_ok += u64::from(read),
            Err(why) => panic!(
                "input {index} (from {}) {why}; reproduce with STRATA_FUZZ_FROM={index}",
                seed_path.display()
            ),
        }
        inputs += 1;
        index += 1;
    }
    eprintln!(
        "fuzzed {inputs} elevation inputs from {first} in {:.1} s ({read_ok} read)",
        start.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
