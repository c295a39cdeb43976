//! Undo/redo history: exact restoration of content hashes over random
//! operation sequences, shared before-state storage, and the memory budget.

use glam::{DVec3, IVec3};
use strata::terrain::command::history::History;
use strata::terrain::editing::brush::{
    Brush, BrushMode, BrushOptions, BrushShape, Falloff, FlattenLimit,
};
use strata::terrain::editing::kernels::apply_tool;
use strata::terrain::editing::recorder::Recorder;
use strata::terrain::editing::region;
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};
use strata::terrain::storage::cell::Material;
use strata::terrain::storage::coords::CellBox;
use strata::terrain::storage::grid::Grid;

/// SplitMix64: a tiny seeded generator, so every failure is reproducible by seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
}

fn small_world() -> Grid {
    generate_world(&GeneratorSettings {
        seed: 11,
        size_cells: 96,
    })
    .expect("valid settings")
}

/// Height of the top inside cell of the column containing `(x, z)` studs.
fn surface_y_studs(grid: &Grid, x: f64, z: f64) -> f64 {
    let (cx, cz) = ((x / 4.0).floor() as i32, (z / 4.0).floor() as i32);
    (0..256)
        .rev()
        .find(|&y| {
            grid.cell(strata::terrain::storage::coords::CellCoord::new(cx, y, cz))
                .is_inside()
        })
        .map_or(40.0, |y| (y as f64 + 0.5) * 4.0)
}

fn random_material(rng: &mut Rng) -> Material {
    let solids: Vec<Material> = Material::solids().collect();
    solids[rng.below(solids.len() as u64) as usize]
}

/// Applies one random operation (a stroke of 1–4 applications or a region
/// operation) through a recorder.
fn random_op(
    rng: &mut Rng,
    grid: &mut Grid,
    clipboard: &mut Option<region::Clipboard>,
) -> Recorder {
    let mut rec = Recorder::new("random");
    let kind = rng.below(10);
    if kind < 7 {
        let mode = BrushMode::ALL[rng.below(BrushMode::ALL.len() as u64) as usize];
        let brush = Brush {
            mode,
            radius_cells: rng.range(1.0, 9.0) as f32,
            strength: rng.range(0.05, 1.0) as f32,
            material: random_material(rng),
            ignore_water: rng.below(2) == 0,
        };
        let options = BrushOptions {
            shape: BrushShape::ALL[rng.below(3) as usize],
            falloff: Falloff::ALL[rng.below(3) as usize],
            flatten_limit: FlattenLimit::ALL[rng.below(3) as usize],
            replace_from: random_material(rng),
            flatten_plane: None,
            erosion_iterations: 1 + rng.below(8) as u32,
        };
        let (x, z) = (rng.range(0.0, 384.0), rng.range(0.0, 384.0));
        let mut centre = DVec3::new(x, surface_y_studs(grid, x, z) + rng.range(-8.0, 8.0), z);
        for _ in 0..1 + rng.below(4) {
            let region = strata::terrain::editing::kernels::tool_region(&brush, &options, centre)
                .expect("valid brush");
            rec.record(grid, region, |g| apply_tool(g, &brush, &options, centre))
                .expect("valid stroke");
            centre += DVec3::new(rng.range(-6.0, 6.0), 0.0, rng.range(-6.0, 6.0));
        }
    } else {
        let min = IVec3::new(
            rng.below(80) as i32,
            20 + rng.below(30) as i32,
            rng.below(80) as i32,
        );
        let size = IVec3::new(
            1 + rng.below(20) as i32,
            1 + rng.below(20) as i32,
            1 + rng.below(20) as i32,
        );
        let b = CellBox::new(min, min + size);
        match rng.below(5) {
            0 => {
                let m = random_material(rng);
                let o = 1 + rng.below(255) as u8;
                rec.record(grid, b, |g| region::fill(g, b, m, o, false))
                    .expect("fill");
            }
            1 => {
                rec.record(grid, b, |g| region::clear(g, b, true))
                    .expect("clear");
            }
            2 => *clipboard = Some(region::copy(grid, b).expect("copy")),
            3 => {
                if let Some(clip) = clipboard.as_ref() {
                    let turns = rng.below(4) as u8;
                    let to = region::paste_region(clip, min, turns).expect("paste box");
                    rec.record(grid, to, |g| region::paste(g, clip, min, turns))
                        .expect("paste");
                }
            }
            _ => {
                let settings = GeneratorSettings {
                    seed: 11,
                    size_cells: 96,
                };
                rec.record(grid, b, |g| region::generate(g, b, &settings))
                    .expect("generate");
            }
        }
    }
    rec
}

#[test]
fn fifty_random_operations_undo_to_the_start_and_redo_to_the_end() {
    let base = small_world();
    for seed in 0..24u64 {
        let mut rng = Rng(seed);
        let mut grid = base.clone();
        let mut history = History::default();
        let mut clipboard = None;
        let mut hashes = vec![grid.content_hash()];
        for _ in 0..50 {
            let rec = random_op(&mut rng, &mut grid, &mut clipboard);
            if history.commit(rec, &grid) {
                hashes.push(grid.content_hash());
            } else {
                assert_eq!(grid.content_hash(), *hashes.last().expect("start hash"));
            }
        }
        assert!(
            hashes.len() > 25,
            "seed {seed}: only {} steps changed terrain",
            hashes.len() - 1
        );
        assert_eq!(history.undo_len(), hashes.len() - 1);
        // Undo all: every intermediate state comes back, then the start.
        for k in (0..hashes.len() - 1).rev() {
            let report = history.undo(&mut grid).expect("a step to undo");
            assert!(report.is_change());
            assert_eq!(grid.content_hash(), hashes[k], "seed {seed}, undo to {k}");
        }
        assert!(history.undo(&mut grid).is_none());
        assert_eq!(grid.content_hash(), hashes[0]);
        for (k, h) in hashes.iter().enumerate().skip(1) {
            history.redo(&mut grid).expect("a step to redo");
            assert_eq!(grid.content_hash(), *h, "seed {seed}, redo to {k}");
        }
        assert!(history.redo(&mut grid).is_none());
    }
}

#[test]
fn a_step_keeps_the_before_storage_shared_and_undo_reports_the_step_bounds() {
    let mut grid = small_world();
    let brush = Brush {
        mode: BrushMode::Subtract,
        radius_cells: 3.0,
        strength: 1.0,
        material: Material::GRASS,
        ignore_water: false,
    };
    // A point inside dense terrain near the surface of chunk (1, y, 1).
    let column_top = (0..256)
        .rev()
        .find(|&y| {
            grid.cell(strata::terrain::storage::coords::CellCoord::new(48, y, 48))
                .is_inside()
        })
        .expect("ground");
    let centre =
        strata::terrain::storage::coords::CellCoord::new(48, column_top, 48).sample_point_world();
    let chunk = strata::terrain::storage::coords::CellCoord::new(48, column_top, 48).chunk();
    let before = grid.chunk(chunk).expect("stored").cells.clone();
    let original = grid.clone();
    let mut rec = Recorder::new("Subtract");
    let region = brush.region(centre).unwrap();
    let edit = rec
        .record(&mut grid, region, |g| {
            apply_tool(g, &brush, &BrushOptions::default(), centre)
        })
        .unwrap();
    let mut history = History::default();
    assert!(history.commit(rec, &grid));
    let step = history.undo_steps().next().expect("one step");
    assert_eq!(step.bounds(), edit.bounds());
    assert_eq!(step.chunk_count(), edit.changed.len());
    // The history holds exactly the before-states the grid let go of: each
    // changed chunk's old dense array (64 KiB), uniform ones cost nothing.
    assert!(before.as_dense().is_some());
    let expected: usize = edit
        .changed
        .iter()
        .map(|(c, _)| original.chunk_cells(*c).heap_bytes())
        .sum();
    assert!(expected >= 65536);
    assert_eq!(history.held_bytes(), expected);
    let undo = history.undo(&mut grid).expect("undo");
    assert_eq!(undo.bounds(), edit.bounds());
    // Undo puts the very same array back (no copy).
    assert!(
        grid.chunk(chunk)
            .unwrap()
            .cells
            .shares_storage_with(&before)
    );
    assert_eq!(grid.content_hash(), original.content_hash());
    // Now the after-states are what only the history holds.
    let after_bytes: usize = history.redo_steps().map(|s| s.held_bytes()).sum::<usize>();
    assert_eq!(history.held_bytes(), after_bytes);
    assert!(after_bytes >= 65536);
}

/// 1,000 strokes (each a few applications along a path) on the same small
/// world: the history never holds more than its budget, and steps are dropped
/// once it is reached. Prints the peak for the report.
#[test]
fn thousand_strokes_stay_within_the_budget() {
    for budget in [512usize << 20, 16 << 20] {
        let mut grid = small_world();
        let mut history = History::new(budget);
        let mut rng = Rng(1000);
        let mut clipboard = None;
        let mut steps = 0;
        for _ in 0..1000 {
            let rec = random_op(&mut rng, &mut grid, &mut clipboard);
            steps += usize::from(history.commit(rec, &grid));
            assert!(history.held_bytes() <= budget);
        }
        println!(
            "budget {} MiB: {steps} steps, peak held {} bytes ({:.1} MiB), now {} bytes in {} steps, {} dropped",
            budget >> 20,
            history.peak_held_bytes(),
            history.peak_held_bytes() as f64 / (1 << 20) as f64,
            history.held_bytes(),
            history.undo_len(),
            history.dropped_steps()
        );
        assert!(history.peak_held_bytes() <= budget);
        if budget == 16 << 20 {
            assert!(history.dropped_steps() > 0);
        }
        // Whatever is left can still be undone exactly to some earlier state.
        let n = history.undo_len();
        for _ in 0..n {
            history.undo(&mut grid).expect("undo");
        }
    }
}

/// Undo and redo reach the meshing pipeline like the edit did: the grid
/// records the step's bounds as the changed extent, so the pipeline requests
/// exactly the chunks the original edit made it request.
#[test]
fn undo_and_redo_invalidate_the_same_chunks_as_the_edit() {
    use std::time::Instant;
    use strata::pipeline::{MeshPipeline, WorldMeshes};
    let mut grid = small_world();
    let mut pipeline = MeshPipeline::new();
    let mut meshes = WorldMeshes::default();
    pipeline.mark_synced(&grid);
    let brush = Brush {
        mode: BrushMode::Smooth,
        radius_cells: 5.0,
        strength: 1.0,
        material: Material::GRASS,
        ignore_water: false,
    };
    let centre = DVec3::new(126.0, surface_y_studs(&grid, 126.0, 130.0), 130.0);
    let mut rec = Recorder::new("Smooth");
    let edit = rec
        .record(&mut grid, brush.region(centre).unwrap(), |g| {
            apply_tool(g, &brush, &BrushOptions::default(), centre)
        })
        .unwrap();
    assert!(edit.is_change());
    let mut history = History::default();
    history.commit(rec, &grid);
    let extents = |grid: &Grid, since: u64| -> Vec<CellBox> {
        edit.changed
            .iter()
            .map(|(c, _)| grid.changed_extent_since(*c, since))
            .collect()
    };
    let edited = extents(&grid, grid.revision() - 1);
    let requested = pipeline.sync_grid(&grid, &mut meshes, Instant::now(), |_| true);
    assert!(requested > 0);
    history.undo(&mut grid).unwrap();
    assert_eq!(extents(&grid, grid.revision() - 1), edited);
    assert_eq!(
        pipeline.sync_grid(&grid, &mut meshes, Instant::now(), |_| true),
        requested
    );
    history.redo(&mut grid).unwrap();
    assert_eq!(extents(&grid, grid.revision() - 1), edited);
    assert_eq!(
        pipeline.sync_grid(&grid, &mut meshes, Instant::now(), |_| true),
        requested
    );
}

#[test]
fn a_huge_region_operation_is_rejected_at_once_and_changes_nothing() {
    // The input that hung a script: clear over ±100000 cells on each axis,
    // and a fill spanning most of the i32 range (its volume used to wrap).
    let mut grid = strata::terrain::generation::generate::flat_world(64, 32).unwrap();
    let before = grid.content_hash();
    let started = std::time::Instant::now();
    for bounds in [
        CellBox::new(IVec3::splat(-100_000), IVec3::splat(100_000)),
        CellBox::new(IVec3::splat(-2_000_000_000), IVec3::splat(2_000_000_000)),
    ] {
        let mut recorder = Recorder::new("clear");
        let result = recorder.record(&mut grid, bounds, |g| region::clear(g, bounds, false));
        assert!(result.is_err(), "{bounds:?} must be rejected");
        assert!(recorder.is_empty());
        let mut recorder = Recorder::new("fill");
        let result = recorder.record(&mut grid, bounds, |g| {
            region::fill(g, bounds, Material::ROCK, 255, false)
        });
        assert!(result.is_err(), "{bounds:?} must be rejected");
    }
    assert_eq!(grid.content_hash(), before);
    assert!(started.elapsed().as_secs() < 5, "rejected at once");
}
