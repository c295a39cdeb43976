//! A streaming world whose process is killed after an edit was spilled
//! (spec §12): the edit is in the world file's pending changes, and the
//! next open finds it. Runs the real `strata` binary headless, so it needs a
//! graphics adapter (llvmpipe is enough) and fails without one.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use strata::io::world::streaming_file::StreamingWorldFile;
use strata::terrain::generation::generate::GeneratorSettings;
use strata::terrain::streaming::column_source::EditStore;
use strata::terrain::{Cell, ColumnCoord, Grid, Material};

mod common;

/// A fill at (100, *, 100) cells, then the camera flies 12,000 studs away
/// and waits there for a minute (the run is killed long before).
const AWAY_SCRIPT: &str = r#"{"frame_rate_hz": 60, "strokes": [
    {"frame": 1, "tool": "fill", "material": "limestone",
     "region_min": [100, 20, 100], "region_max": [110, 90, 110]},
    {"frame": 10, "camera": [420, 600, 420, 0, -30]},
    {"frame": 130, "camera": [420, 600, 12420, 180, -30]},
    {"frame": 3600, "camera": [420, 600, 12420, 180, -30]}
]}"#;

#[test]
fn a_killed_session_leaves_its_spilled_edit_for_the_next_open() {
    common::require_gpu("a_killed_session_leaves_its_spilled_edit_for_the_next_open");
    let dir = std::env::temp_dir().join(format!("strata-crash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let world = dir.join("far.strata");
    let settings = GeneratorSettings {
        seed: 7,
        size_cells: 1 << 16,
    };
    drop(StreamingWorldFile::create(&world, &settings).unwrap());
    let script = dir.join("away.json");
    std::fs::write(&script, AWAY_SCRIPT).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["--headless", "--world"])
        .arg(&world)
        .args([
            "--draw-distance",
            "500",
            "--memory-budget-mib",
            "16",
            "--size",
            "64x64",
        ])
        .args(["--no-replay-frames", "--screenshot"])
        .arg(dir.join("never.png"))
        .arg("--script")
        .arg(&script)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("strata runs");
    // Wait (at most 120 s) until the spill is in the file, then kill.
    let start = Instant::now();
    let spilled = loop {
        std::thread::sleep(Duration::from_millis(500));
        if let Ok(file) = StreamingWorldFile::open(&world)
            && file.pending_count().unwrap_or(0) > 0
        {
            break true;
        }
        if start.elapsed() > Duration::from_secs(120) || child.try_wait().unwrap().is_some() {
            break false;
        }
    };
    child.kill().ok();
    child.wait().ok();
    assert!(spilled, "no spill reached the file");
    let file = StreamingWorldFile::open(&world).expect("reopens");
    assert!(file.pending_count().unwrap() >= 1);
    let chunks = file
        .load_edited(ColumnCoord::new(3, 3))
        .unwrap()
        .expect("the edited column is stored");
    let grid = Grid::from_chunks(chunks);
    assert_eq!(
        grid.cell(strata::terrain::CellCoord::new(105, 50, 105)),
        Cell::full(Material::LIMESTONE)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_killed_new_world_is_offered_back_from_its_recovery_file() {
    use strata::app::streamed_world::StreamedWorld;
    use strata::io::world::recovery_files::orphaned_recoveries;
    common::require_gpu("a_killed_new_world_is_offered_back_from_its_recovery_file");
    // TMPDIR decides where new worlds spill (`$TMPDIR/strata-recovery`).
    let tmp = std::env::temp_dir().join(format!("strata-crash-new-{}", std::process::id()));
    let recovery_dir = tmp.join("strata-recovery");
    std::fs::create_dir_all(&recovery_dir).unwrap();
    let script = tmp.join("away.json");
    std::fs::write(&script, AWAY_SCRIPT).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
        .env("TMPDIR", &tmp)
        .args(["--headless", "--world-size", "65536", "--seed", "7"])
        .args(["--camera", "420,600,420,0,-30"])
        .args(["--draw-distance", "500", "--memory-budget-mib", "16"])
        .args(["--size", "64x64", "--no-replay-frames", "--screenshot"])
        .arg(tmp.join("never.png"))
        .arg("--script")
        .arg(&script)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("strata runs");
    // Wait (at most 120 s) until the spill is in the recovery file; while
    // the session runs, its file is not offered to anyone.
    let start = Instant::now();
    let recovery = loop {
        std::thread::sleep(Duration::from_millis(500));
        let spilled = std::fs::read_dir(&recovery_dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.extension().is_some_and(|e| e == "strata")
                    && StreamingWorldFile::open(p).is_ok_and(|f| f.pending_count().unwrap_or(0) > 0)
            });
        if let Some(path) = spilled {
            assert!(
                orphaned_recoveries(&recovery_dir).is_empty(),
                "a running session's recovery file was offered"
            );
            break Some(path);
        }
        if start.elapsed() > Duration::from_secs(120) || child.try_wait().unwrap().is_some() {
            break None;
        }
    };
    child.kill().ok();
    child.wait().ok();
    let recovery = recovery.expect("no spill reached the recovery file");
    // The killed session's file is orphaned now: offered, and it reopens as
    // the untitled world with the edit.
    let orphans = orphaned_recoveries(&recovery_dir);
    assert_eq!(orphans.len(), 1, "{orphans:?}");
    assert_eq!(orphans[0].path, recovery);
    let world = StreamedWorld::recover(&recovery).expect("recovers");
    assert!(world.untitled);
    assert!(world.recovered_columns >= 1);
    assert!(
        orphaned_recoveries(&recovery_dir).is_empty(),
        "a recovered file is held by its new session"
    );
    let mut residency = world.residency(usize::MAX);
    let mut grid = Grid::streaming();
    residency
        .load_now(&mut grid, [ColumnCoord::new(3, 3)])
        .unwrap();
    assert_eq!(
        grid.cell(strata::terrain::CellCoord::new(105, 50, 105)),
        Cell::full(Material::LIMESTONE)
    );
    world.remove_recovery();
    drop(world);
    assert!(!recovery.exists());
    std::fs::remove_dir_all(&tmp).ok();
}
