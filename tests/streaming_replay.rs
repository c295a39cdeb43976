//! A scripted flight over a streaming world (spec §12): the edit waits for
//! its columns, is spilled when the camera flies away under a small budget,
//! and is there when it comes back; the ground the camera sees is meshed.

use std::sync::Arc;

use glam::DVec3;
use strata::camera::Camera;
use strata::pipeline::lod::LodSettings;
use strata::pipeline::{TerrainStreaming, WorldMeshes};
use strata::script::{Script, ScriptRunner, UploadOnly, replay_script};
use strata::terrain::generation::generate::GeneratorSettings;
use strata::terrain::generation::generated_columns::GeneratedColumns;
use strata::terrain::streaming::column_source::{EditStore, MemoryEditStore};
use strata::terrain::streaming::residency::Residency;
use strata::terrain::{ColumnCoord, Grid};

mod common;
use common::NoGpu;

fn settings() -> GeneratorSettings {
    GeneratorSettings {
        seed: 7,
        size_cells: 1024,
    }
}

/// A fill near (400, 400) studs, then (with `fly`) a flight to the far
/// corner and back, at 120 Hz.
fn script(fly: bool) -> Script {
    let flight = if fly {
        r#", {"frame": 20, "camera": [400, 700, 400, 0, -30]},
           {"frame": 140, "camera": [3700, 700, 3700, 0, -30]},
           {"frame": 200, "camera": [3700, 700, 3700, 0, -30]},
           {"frame": 320, "camera": [400, 700, 400, 0, -30]}"#
    } else {
        ""
    };
    let text = format!(
        r#"{{"frame_rate_hz": 120, "strokes": [
            {{"frame": 1, "tool": "fill", "material": "limestone",
              "region_min": [96, 30, 96], "region_max": [110, 90, 104]}}{flight}
        ]}}"#
    );
    Script::parse(&text, "flight.json").expect("script")
}

struct Run {
    streaming: TerrainStreaming,
    grid: Grid,
    meshes: WorldMeshes,
    store: Arc<MemoryEditStore>,
}

fn run(fly: bool, budget_bytes: usize) -> Run {
    let store = Arc::new(MemoryEditStore::default());
    let residency = Residency::new(
        Arc::new(GeneratedColumns::new(&settings())),
        store.clone() as Arc<dyn EditStore>,
        budget_bytes,
    );
    let lod = LodSettings {
        draw_distance_studs: 600.0,
        ..LodSettings::default()
    };
    let mut streaming = TerrainStreaming::streaming(lod, residency);
    let mut grid = Grid::streaming();
    let mut meshes = WorldMeshes::default();
    let mut runner = ScriptRunner::for_script(&script(fly), &grid, Some(settings()));
    replay_script(
        &script(fly),
        &mut grid,
        &mut meshes,
        &mut streaming,
        &mut UploadOnly(&mut NoGpu),
        Camera::new(DVec3::new(400.0, 700.0, 400.0), 0.0, -30.0),
        &mut runner,
    )
    .expect("replay");
    Run {
        streaming,
        grid,
        meshes,
        store,
    }
}

fn edited_hash(run: &mut Run) -> u64 {
    let r = run.streaming.residency_mut().expect("streaming");
    let edited = r.ever_edited_columns();
    assert!(!edited.is_empty());
    r.load_now(&mut run.grid, edited.iter().copied())
        .expect("loads");
    Grid::from_chunks(edited.iter().flat_map(|c| run.grid.column_chunks(*c))).content_hash()
}

#[test]
fn a_far_edit_is_spilled_under_a_small_budget_and_is_there_on_return() {
    let mut stay = run(false, usize::MAX);
    let budget = 40 << 20;
    let mut flown = run(true, budget);
    let r = flown.streaming.residency_mut().expect("streaming");
    // Spills are written off the frame thread; flush waits for them.
    r.flush_spills().expect("spills stored");
    let s = &r.stats;
    let figures = format!(
        "generated {}, loaded {}, evicted {}, spilled {}, peak {} of {budget}",
        s.generated, s.loaded, s.evicted, s.spilled, s.peak_resident_bytes
    );
    assert!(s.evicted > 0, "{figures}");
    assert!(s.spilled >= 1, "{figures}");
    assert!(
        s.loaded >= 1,
        "the spilled column came back from the store: {figures}"
    );
    assert!(s.peak_resident_bytes <= budget, "{figures}");
    assert!(
        !flown.store.edited_columns().unwrap().is_empty(),
        "the edit went to the store"
    );
    assert_eq!(edited_hash(&mut flown), edited_hash(&mut stay));
    // Back at the start, the view is loaded and every chunk in it meshed.
    assert!(flown.streaming.is_view_loaded());
    assert_eq!(flown.streaming.last_missing_chunks(), 0);
    assert!(flown.grid.is_column_resident(ColumnCoord::new(3, 3)));
    assert!(!flown.meshes.is_empty());
}

#[test]
fn streamed_ground_brings_its_water() {
    // Found by trying it: a streamed world drew its lake without water,
    // because first meshes were requested like level changes.
    let (lx, lz) = strata::terrain::generation::generate::lake_centre_cells(&settings());
    let cam = DVec3::new(lx * 4.0, 600.0, lz * 4.0);
    let residency = Residency::new(
        Arc::new(GeneratedColumns::new(&settings())),
        Arc::new(MemoryEditStore::default()),
        usize::MAX,
    );
    let lod = LodSettings {
        draw_distance_studs: 600.0,
        ..LodSettings::default()
    };
    let mut streaming = TerrainStreaming::streaming(lod, residency);
    let mut grid = Grid::streaming();
    let mut meshes = WorldMeshes::default();
    let script = Script::parse(r#"{"strokes": []}"#, "empty.json").expect("script");
    let mut runner = ScriptRunner::for_script(&script, &grid, Some(settings()));
    replay_script(
        &script,
        &mut grid,
        &mut meshes,
        &mut streaming,
        &mut UploadOnly(&mut NoGpu),
        Camera::new(cam, 0.0, -30.0),
        &mut runner,
    )
    .expect("replay");
    assert!(meshes.water_iter().count() > 0, "the lake shows water");
}
