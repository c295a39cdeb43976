//! `--stats-json` and the run's summary lines tell what the run did: the
//! chunks the final frame drew on a streamed heightmap, latencies that are
//! absent (not zero) when nothing was edited.

mod common;

use std::path::PathBuf;

use common::{read_json, run_ok};

fn strata() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-run-stats-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// A 16-bit 768 × 768 relief of hills and a ridge (1,536 cells a side at
/// the default two cells per pixel: far ground is drawn at coarse levels).
fn write_relief_png(path: &std::path::Path) {
    let side = 768u32;
    let samples: Vec<u16> = (0..side * side)
        .map(|i| {
            let (fx, fy) = (
                f64::from(i % side) / f64::from(side),
                f64::from(i / side) / f64::from(side),
            );
            let hills = 0.3 + 0.15 * (fx * 13.0).sin() * (fy * 9.0).cos();
            let ridge = 0.3 * (-((fx - 0.6) * 8.0).powi(2)).exp();
            ((hills + ridge).clamp(0.0, 1.0) * 65535.0).round() as u16
        })
        .collect();
    image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::from_raw(side, side, samples)
        .expect("buffer of the right size")
        .save(path)
        .expect("png written");
}

fn as_levels(v: &serde_json::Value) -> [usize; 4] {
    let list: Vec<usize> = v
        .as_array()
        .expect("a list")
        .iter()
        .map(|n| n.as_u64().expect("a count") as usize)
        .collect();
    list.try_into().expect("four levels")
}

/// A streamed heightmap's final frame: `drawn_chunks` counts the chunk
/// meshes the frame draws at every level (it was 0 on such runs while
/// levels 1–3 drew), split by level, never more than the meshes held per
/// level; the summary line says the same numbers and the drawn triangles
/// apart from the meshed ones; streamed and generated columns agree (the
/// empty columns outside the world are neither); the collision skip is
/// said at most once.
#[test]
fn a_streamed_heightmap_reports_the_chunks_its_frame_draws() {
    common::require_gpu("a_streamed_heightmap_reports_the_chunks_its_frame_draws");
    let dir = scratch("heightmap");
    let png = dir.join("relief.png");
    write_relief_png(&png);
    let stats = dir.join("s.json");
    let out = run_ok(
        strata()
            .args(["--headless", "--stream", "--size", "320x180", "--heightmap"])
            .arg(&png)
            .arg("--screenshot")
            .arg(dir.join("o.png"))
            .arg("--stats-json")
            .arg(&stats),
    );
    let v = read_json(&stats);
    assert!(v["streaming"].is_object(), "a streamed run: {v}");
    let drawn = v["drawn_chunks"].as_u64().expect("drawn_chunks") as usize;
    let by_level = as_levels(&v["drawn_chunks_by_level"]);
    let held = as_levels(&v["chunks_by_level"]);
    assert_eq!(by_level.iter().sum::<usize>(), drawn, "{by_level:?}");
    assert!(drawn > 0, "{v}");
    assert!(
        by_level[1..].iter().sum::<usize>() > 0,
        "coarse levels drawn: {by_level:?} of {held:?}"
    );
    for level in 0..4 {
        assert!(by_level[level] <= held[level], "{by_level:?} of {held:?}");
    }
    // Columns outside the world are resident (empty) for meshing the edge
    // but neither streamed nor generated: the two counts agree.
    let s = &v["streaming"];
    let count = |key: &str| s[key].as_u64().expect(key);
    assert_eq!(
        count("resident_columns"),
        count("generated") + count("loaded") - count("evicted"),
        "{s}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let expected = format!(
        "{drawn} chunks in {} draws, {} triangles drawn (chunks, nodes, water), {} in chunk meshes",
        v["draws"], v["drawn_triangles"], v["triangles"]
    );
    assert!(stdout.contains(&expected), "{expected:?} not in {stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.matches("collision statistics skipped").count() <= 1,
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A script with no strokes: the latency summaries are `null` (there is
/// no latency, not a latency of 0 ms) and the summary line shows "—".
#[test]
fn an_empty_script_reports_no_latencies() {
    common::require_gpu("an_empty_script_reports_no_latencies");
    let dir = scratch("empty");
    let script = dir.join("empty.json");
    std::fs::write(&script, r#"{"strokes": []}"#).expect("script");
    let stats = dir.join("s.json");
    let out = run_ok(
        strata()
            .args(["--headless", "--world-size", "128", "--size", "64x36"])
            .arg("--script")
            .arg(&script)
            .arg("--screenshot")
            .arg(dir.join("o.png"))
            .arg("--stats-json")
            .arg(&stats),
    );
    let v = read_json(&stats);
    assert_eq!(v["script_edits"], 0);
    for key in [
        "edit_to_visible_ms",
        "edit_to_full_detail_ms",
        "edit_to_published_ms",
        "edit_to_horizon_ms",
    ] {
        assert!(v[key].is_null(), "{key}: {}", v[key]);
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "0 edits: edit-to-visible p50 —, p99 —; to full detail p99 —; published p99 —"
        ),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
