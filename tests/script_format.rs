//! Every committed script (`assets/scripts/*.json`) parses to the same
//! in-memory [`Script`] as the snapshot taken before the format's parser was
//! split into one struct per tool: `tests/data/script-snapshots/NAME.txt`
//! holds the `Debug` dump of the parsed script, one entry per line.
//!
//! After a deliberate change to what a script parses to, regenerate the
//! snapshots with `STRATA_BLESS_SCRIPT_SNAPSHOTS=1 cargo test --test
//! script_format` and review the diff.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use strata::script::Script;

/// The parsed script as text: its settings, then one line per entry,
/// camera keyframe and walk.
fn dump(script: &Script) -> String {
    let mut out = String::new();
    writeln!(out, "frame_rate_hz: {:?}", script.frame_rate_hz).unwrap();
    writeln!(out, "history_budget_bytes: {}", script.history_budget_bytes).unwrap();
    writeln!(out, "strokes: {}", script.strokes.len()).unwrap();
    for stroke in &script.strokes {
        writeln!(out, "{stroke:?}").unwrap();
    }
    writeln!(out, "camera_keys: {}", script.camera_keys.len()).unwrap();
    for key in &script.camera_keys {
        writeln!(out, "{key:?}").unwrap();
    }
    writeln!(out, "walk: {:?}", script.walk).unwrap();
    out
}

fn committed_scripts() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scripts");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
}

#[test]
fn committed_scripts_parse_to_their_snapshots() {
    let snapshots = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/script-snapshots");
    let bless = std::env::var_os("STRATA_BLESS_SCRIPT_SNAPSHOTS").is_some();
    let scripts = committed_scripts();
    assert!(scripts.len() >= 12, "{scripts:?}");
    let mut mismatched = Vec::new();
    for path in &scripts {
        let script = Script::load(path).unwrap_or_else(|e| panic!("{e}"));
        let text = dump(&script);
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let snapshot = snapshots.join(format!("{name}.txt"));
        if bless {
            std::fs::create_dir_all(&snapshots).unwrap();
            std::fs::write(&snapshot, &text).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&snapshot)
            .unwrap_or_else(|e| panic!("{}: {e}", snapshot.display()));
        if text != expected {
            let first = text
                .lines()
                .zip(expected.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(text.lines().count().min(expected.lines().count()));
            mismatched.push(format!(
                "{name}: first difference on line {}:\n  got      {}\n  expected {}",
                first + 1,
                text.lines().nth(first).unwrap_or("<end>"),
                expected.lines().nth(first).unwrap_or("<end>")
            ));
        }
    }
    // Every snapshot belongs to a committed script.
    if !bless {
        for entry in std::fs::read_dir(&snapshots).unwrap() {
            let stem = entry.unwrap().path().file_stem().unwrap().to_owned();
            assert!(
                scripts.iter().any(|p| p.file_stem() == Some(&*stem)),
                "snapshot {stem:?} has no script"
            );
        }
    }
    assert!(mismatched.is_empty(), "{}", mismatched.join("\n"));
}
