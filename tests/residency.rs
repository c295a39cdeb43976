//! Residency of streaming worlds (spec §12): loads, stale loads, eviction
//! under a tight budget, spills and undo over evicted columns.

use std::sync::Arc;
use std::time::{Duration, Instant};

use glam::IVec3;
use strata::terrain::command::edit_command::{CommandError, EditCommand, EditSession};
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};
use strata::terrain::generation::generated_columns::GeneratedColumns;
use strata::terrain::streaming::column_source::{
    ColumnChunks, ColumnSource, EditStore, MemoryEditStore, SourceError,
};
use strata::terrain::streaming::residency::{ColumnState, Residency};
use strata::terrain::{Cell, CellBox, CellCoord, ColumnCoord, Grid, GridError, Material};

fn settings() -> GeneratorSettings {
    GeneratorSettings {
        seed: 7,
        size_cells: 256,
    }
}

fn residency(budget_bytes: usize) -> (Residency, Arc<MemoryEditStore>) {
    let store = Arc::new(MemoryEditStore::default());
    let source: Arc<dyn ColumnSource> = Arc::new(GeneratedColumns::new(&settings()));
    let r = Residency::new(source, store.clone() as Arc<dyn EditStore>, budget_bytes);
    (r, store)
}

/// Receives until no load is in flight (at most 30 s).
fn drain(r: &mut Residency, grid: &mut Grid) {
    let start = Instant::now();
    while r.loads_in_flight() > 0 {
        r.receive(grid);
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "loads never finished"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Hash of the cells of `columns` as a fresh whole grid holds them.
fn columns_hash(grid: &Grid, columns: &[ColumnCoord]) -> u64 {
    Grid::from_chunks(columns.iter().flat_map(|c| grid.column_chunks(*c))).content_hash()
}

#[test]
fn loads_install_what_the_generator_makes_and_only_within_the_world() {
    let (mut r, _) = residency(usize::MAX);
    let mut grid = Grid::streaming();
    let wanted: Vec<ColumnCoord> = (-2..10)
        .flat_map(|z| (-2..10).map(move |x| ColumnCoord::new(x, z)))
        .collect();
    let mut rounds = 0;
    while grid.resident_column_count() < wanted.len() {
        r.demand(&mut grid, wanted.iter().copied());
        drain(&mut r, &mut grid);
        rounds += 1;
        assert!(rounds < 100);
    }
    assert_eq!(
        r.stats.generated, 64,
        "the 8×8 columns inside the world, none outside"
    );
    let whole = generate_world(&settings()).unwrap();
    assert_eq!(grid.content_hash(), whole.content_hash());
    assert!(grid.is_column_resident(ColumnCoord::new(3, 3)));
    // Columns outside the world are resident at once, empty (never loaded).
    assert!(grid.is_column_resident(ColumnCoord::new(-1, 3)));
    assert!(grid.column_chunks(ColumnCoord::new(-1, 3)).is_empty());
}

#[test]
fn a_stale_load_never_overwrites_an_edit() {
    let (mut r, _) = residency(usize::MAX);
    let mut grid = Grid::streaming();
    let column = ColumnCoord::new(2, 2);
    // A worker load is requested, then the column is loaded on this thread
    // (as an edit would) and edited before the worker's result is received.
    assert_eq!(r.demand(&mut grid, [column]), 1);
    assert!(matches!(r.state(column), Some(ColumnState::Loading { .. })));
    r.load_now(&mut grid, [column]).unwrap();
    let cell = CellCoord::new(70, 200, 70);
    grid.edit_region(CellBox::new(cell.0, cell.0 + IVec3::ONE), |_, _| {
        Cell::full(Material::SLATE)
    })
    .unwrap();
    drain(&mut r, &mut grid);
    assert_eq!(r.stats.stale_loads, 1);
    assert_eq!(grid.cell(cell), Cell::full(Material::SLATE));
}

#[test]
fn an_edit_on_a_column_that_is_not_resident_is_refused_and_changes_nothing() {
    let mut grid = Grid::streaming();
    let err = grid
        .edit_region(
            CellBox::new(IVec3::new(30, 0, 30), IVec3::new(40, 10, 40)),
            |_, _| Cell::full(Material::ROCK),
        )
        .unwrap_err();
    assert_eq!(
        err,
        GridError::NotResident(vec![
            ColumnCoord::new(0, 0),
            ColumnCoord::new(1, 0),
            ColumnCoord::new(0, 1),
            ColumnCoord::new(1, 1)
        ])
    );
    assert_eq!(grid.revision(), 0);
    assert_eq!(grid.chunk_count(), 0);
}

/// Tiny deterministic generator for the random test.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Random edits at random camera positions, once with a budget of a few
/// columns and once unbounded: the edited world is the same.
#[test]
fn eviction_under_a_small_budget_never_drops_an_edit() {
    let run = |budget_bytes: usize| -> (u64, Residency) {
        let (mut r, _) = residency(budget_bytes);
        let mut grid = Grid::streaming();
        let mut rng = Lcg(99);
        for _ in 0..60 {
            // The "camera" wants a 3×3 patch somewhere in the world.
            let cx = rng.next(8) as i32;
            let cz = rng.next(8) as i32;
            let patch: Vec<ColumnCoord> = ColumnCoord::new(cx, cz).with_neighbours().collect();
            r.demand(&mut grid, patch.iter().copied());
            r.receive(&mut grid);
            // An edit somewhere: it waits for (loads) its columns.
            let at = IVec3::new(
                rng.next(250) as i32,
                40 + rng.next(60) as i32,
                rng.next(250) as i32,
            );
            let region = CellBox::new(at, at + IVec3::new(6, 6, 6));
            let material = [Material::SLATE, Material::SAND, Material::SNOW][rng.next(3) as usize];
            let edit = |grid: &mut Grid| grid.edit_region(region, |_, _| Cell::full(material));
            if let Err(e) = edit(&mut grid) {
                r.load_now(&mut grid, e.missing_columns().unwrap().to_vec())
                    .unwrap();
                edit(&mut grid).unwrap();
            }
            r.end_frame();
        }
        drain(&mut r, &mut grid);
        // Bring every column back and hash the whole world.
        let all: Vec<ColumnCoord> = (0..8)
            .flat_map(|z| (0..8).map(move |x| ColumnCoord::new(x, z)))
            .collect();
        r.load_now(&mut grid, all.clone()).unwrap();
        (columns_hash(&grid, &all), r)
    };
    let (unbounded, r_unbounded) = run(usize::MAX);
    let budget = 6 * 70_000;
    let (small, r_small) = run(budget);
    assert_eq!(r_unbounded.stats.evicted, 0);
    assert!(r_small.stats.evicted > 20, "{:?}", r_small.stats);
    assert!(r_small.stats.spilled > 5, "{:?}", r_small.stats);
    assert_eq!(small, unbounded);
}

#[test]
fn undo_of_an_edit_whose_columns_were_evicted_restores_the_before_state() {
    let (mut r, store) = residency(usize::MAX);
    let mut grid = Grid::streaming();
    let columns: Vec<ColumnCoord> = ColumnCoord::new(3, 3).with_neighbours().collect();
    r.load_now(&mut grid, columns.iter().copied()).unwrap();
    let before = columns_hash(&grid, &columns);
    let mut session = EditSession::new(64 << 20, None);
    let region = CellBox::new(IVec3::new(100, 30, 100), IVec3::new(120, 80, 120));
    session
        .apply(
            &mut grid,
            &EditCommand::Fill {
                region,
                material: Material::LIMESTONE,
                occupancy: 255,
                ignore_water: true,
            },
        )
        .unwrap();
    let after = columns_hash(&grid, &columns);
    assert_ne!(before, after);
    r.end_frame();
    let evicted = r.evict(&mut grid, &columns);
    assert_eq!(evicted.len(), 9);
    assert!(r.stats.spilled >= 1);
    // Spills are written off the frame thread; flush waits for them.
    r.flush_spills().unwrap();
    assert!(!store.edited_columns().unwrap().is_empty());
    // Undo waits for its columns: refused (nothing changes) until they are back.
    let err = session.apply(&mut grid, &EditCommand::Undo).unwrap_err();
    let CommandError::Grid(GridError::NotResident(missing)) = err else {
        panic!("expected NotResident, got {err:?}");
    };
    assert_eq!(
        missing,
        vec![ColumnCoord::new(3, 3)],
        "the step's one column"
    );
    r.load_now(&mut grid, missing).unwrap();
    session.apply(&mut grid, &EditCommand::Undo).unwrap();
    session.apply(&mut grid, &EditCommand::Redo).unwrap();
    r.load_now(&mut grid, columns.iter().copied()).unwrap();
    assert_eq!(
        columns_hash(&grid, &columns),
        after,
        "the spilled edit came back"
    );
    session.apply(&mut grid, &EditCommand::Undo).unwrap();
    assert_eq!(columns_hash(&grid, &columns), before);
}

#[test]
fn an_edit_outside_the_world_survives_eviction() {
    // Found by trying it: outside columns were installed empty without
    // asking the store, so an edit there vanished after eviction.
    let (mut r, _) = residency(usize::MAX);
    let mut grid = Grid::streaming();
    let column = ColumnCoord::new(-2, 3);
    r.demand(&mut grid, [column]);
    assert!(grid.is_column_resident(column), "outside: resident at once");
    let at = IVec3::new(-50, 10, 100);
    grid.edit_region(CellBox::new(at, at + IVec3::ONE), |_, _| {
        Cell::full(Material::SNOW)
    })
    .unwrap();
    r.end_frame();
    assert_eq!(r.evict(&mut grid, &[column]), vec![column]);
    assert_eq!(r.stats.spilled, 1);
    r.demand(&mut grid, [column]);
    assert_eq!(grid.cell(CellCoord(at)), Cell::full(Material::SNOW));
    assert_eq!(r.stats.loaded, 1);
}

/// A store whose every column is damaged.
#[derive(Debug)]
struct DamagedStore;
impl EditStore for DamagedStore {
    fn load_edited(&self, column: ColumnCoord) -> Result<Option<ColumnChunks>, SourceError> {
        Err(SourceError::Corrupt {
            column,
            message: "test".into(),
        })
    }
    fn store_edited(
        &self,
        _: ColumnCoord,
        _: &[(strata::terrain::ChunkCoord, strata::terrain::ChunkCells)],
    ) -> Result<(), SourceError> {
        Ok(())
    }
    fn edited_columns(&self) -> Result<Vec<ColumnCoord>, SourceError> {
        Ok(Vec::new())
    }
}

#[test]
fn a_damaged_column_is_reported_not_left_as_a_silent_hole() {
    let source: Arc<dyn ColumnSource> = Arc::new(GeneratedColumns::new(&settings()));
    let mut r = Residency::new(source, Arc::new(DamagedStore), usize::MAX);
    let mut grid = Grid::streaming();
    r.demand(&mut grid, [ColumnCoord::new(2, 2)]);
    drain(&mut r, &mut grid);
    assert!(!grid.is_column_resident(ColumnCoord::new(2, 2)));
    assert!(matches!(
        r.first_load_error(),
        Some(SourceError::Corrupt { .. })
    ));
}

/// `--export-region` on a streaming world: the box's columns loaded on
/// demand and cropped give exactly the cells the same box of the whole
/// generated world holds (and the crop leaves nothing outside the box).
#[test]
fn a_cropped_box_of_a_streaming_world_equals_the_whole_worlds() {
    use strata::terrain::editing::region::crop;
    let settings = GeneratorSettings {
        seed: 11,
        size_cells: 512,
    };
    let whole = generate_world(&settings).expect("generated");
    let region = CellBox::new(IVec3::new(100, -64, 37), IVec3::new(300, 400, 211));
    let mut r = Residency::new(
        Arc::new(GeneratedColumns::new(&settings)),
        Arc::new(MemoryEditStore::default()) as Arc<dyn EditStore>,
        usize::MAX,
    );
    let mut grid = Grid::streaming();
    // Before loading, the crop names the columns it lacks.
    let missing = grid.missing_columns(&region);
    assert_eq!(missing.len(), 7 * 6);
    assert!(crop(&grid, region).is_err());
    r.load_now(&mut grid, missing).expect("loaded");
    let streamed = crop(&grid, region).expect("cropped");
    let expected = crop(&whole, region).expect("cropped");
    assert!(expected.chunk_count() > 0);
    assert_eq!(streamed.content_hash(), expected.content_hash());
    assert!(
        streamed
            .chunks()
            .all(|(c, _)| !c.cell_box().intersect(&region).is_empty())
    );
}

#[test]
fn a_walk_over_a_streaming_world_loads_its_ground_and_matches_the_whole_world() {
    use glam::DVec2;
    use strata::collision::scripted_walk::{WalkSegment, run_walk, whole_grid};
    use strata::collision::{TerrainId, WalkInput};
    let segments = [WalkSegment {
        frames: 900,
        input: WalkInput {
            move_xz: DVec2::new(1.0, 0.3).normalize(),
            jump: false,
        },
    }];
    let start = [300.0, 420.0];
    let mut whole = generate_world(&settings()).unwrap();
    let expected = run_walk(&mut whole, TerrainId(0), start, &segments, whole_grid).unwrap();
    // The streaming grid starts empty: the walk loads what it stands on.
    let (mut r, _) = residency(usize::MAX);
    let mut grid = Grid::streaming();
    let streamed = run_walk(&mut grid, TerrainId(0), start, &segments, |g, region| {
        let missing = g.missing_columns(&region);
        Ok(r.load_now(g, missing)?)
    })
    .unwrap();
    assert!(!streamed.fell_through);
    assert!(streamed.distance_studs > 100.0, "{streamed:?}");
    assert_eq!(streamed.end_world, expected.end_world);
    assert_eq!(
        streamed.distance_studs.to_bits(),
        expected.distance_studs.to_bits()
    );
    // Only the columns along the way were loaded, not the world (8 × 8).
    assert!(
        grid.resident_column_count() < 30,
        "{}",
        grid.resident_column_count()
    );
    // Without a way to load its ground the walk cannot start.
    let mut empty = Grid::streaming();
    assert!(run_walk(&mut empty, TerrainId(0), start, &segments, whole_grid).is_err());
}

#[test]
fn the_walkers_pinned_columns_survive_a_tight_budget_until_released() {
    let (mut r, _) = residency(6 * 70_000);
    let mut grid = Grid::streaming();
    let walker: Vec<ColumnCoord> = ColumnCoord::new(1, 1).with_neighbours().collect();
    r.load_now(&mut grid, walker.clone()).unwrap();
    let mut pins = Vec::new();
    r.repin(&mut pins, &walker);
    // The camera looks elsewhere for many frames, far more than fits.
    let far_frames = |r: &mut Residency, grid: &mut Grid| {
        for i in 0..12 {
            let patch: Vec<ColumnCoord> = ColumnCoord::new(5 + i % 2, 4 + (i / 2) % 4)
                .with_neighbours()
                .collect();
            r.demand(grid, patch.iter().copied());
            drain(r, grid);
            r.end_frame();
        }
    };
    far_frames(&mut r, &mut grid);
    assert!(r.stats.evicted > 0, "{:?}", r.stats);
    for c in &walker {
        assert!(grid.is_column_resident(*c), "pinned {c:?} was evicted");
        assert!(r.is_pinned(*c));
    }
    // The walker moves one column east: the shared columns stay pinned.
    let moved: Vec<ColumnCoord> = ColumnCoord::new(2, 1).with_neighbours().collect();
    r.load_now(&mut grid, moved.clone()).unwrap();
    r.repin(&mut pins, &moved);
    assert!(r.is_pinned(ColumnCoord::new(1, 1)));
    assert!(!r.is_pinned(ColumnCoord::new(0, 1)));
    // Walking stops: the group is released and may be evicted again.
    r.repin(&mut pins, &[]);
    assert!(pins.is_empty());
    assert!(moved.iter().all(|c| !r.is_pinned(*c)));
    far_frames(&mut r, &mut grid);
    assert!(
        moved.iter().any(|c| !grid.is_column_resident(*c)),
        "released columns stayed resident under a budget of six columns"
    );
}

#[test]
fn a_region_export_of_a_streaming_world_sees_resident_spilled_and_unloaded_columns() {
    use strata::editor::files::file_jobs::{ExportFormat, JobOutput, export_region};
    use strata::terrain::editing::region::crop;
    let (mut r, _) = residency(usize::MAX);
    let mut grid = Grid::streaming();
    let mut whole = generate_world(&settings()).unwrap();
    // An unsaved edit on a resident column, and one on a column that is
    // evicted afterwards (its edit is spilled to the store).
    let kept = CellBox::new(IVec3::new(10, 40, 10), IVec3::new(20, 60, 20));
    let spilled = CellBox::new(IVec3::new(200, 40, 200), IVec3::new(210, 60, 210));
    for (b, m) in [(kept, Material::SNOW), (spilled, Material::SLATE)] {
        let missing = grid.missing_columns(&b);
        r.load_now(&mut grid, missing).unwrap();
        grid.edit_region(b, |_, _| Cell::full(m)).unwrap();
        whole.edit_region(b, |_, _| Cell::full(m)).unwrap();
    }
    let gone = r.evict(&mut grid, &[ColumnCoord::new(6, 6)]);
    assert_eq!(gone, vec![ColumnCoord::new(6, 6)]);
    assert!(r.stats.spilled >= 1);
    // A box over all three kinds of column, most of them never loaded.
    let region = CellBox::new(IVec3::new(0, 0, 0), IVec3::new(224, 256, 224));
    let snapshot = r.snapshot_region(&grid, &region);
    assert!(snapshot.missing_columns() > 40, "{snapshot:?}");
    let resident_before = grid.resident_column_count();
    let streamed = snapshot
        .into_grid(|_, _| {}, || false)
        .unwrap()
        .expect("not cancelled");
    assert_eq!(
        crop(&streamed, region).unwrap().content_hash(),
        crop(&whole, region).unwrap().content_hash()
    );
    // The snapshot loaded off to the side: the world's residency is untouched.
    assert_eq!(grid.resident_column_count(), resident_before);
    // The export jobs write the box as glTF and as a heightmap.
    let dir = std::env::temp_dir().join(format!("strata-region-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, format) in [
        ("box.glb", ExportFormat::Glb),
        ("box.png", ExportFormat::Heightmap),
    ] {
        let snapshot = r.snapshot_region(&grid, &region);
        let done = export_region(snapshot, region, dir.join(name), format, None).wait();
        assert!(
            matches!(done.output, Ok(JobOutput::Exported(_))),
            "{:?}",
            done.output
        );
    }
    assert!(std::fs::metadata(dir.join("box.glb")).unwrap().len() > 10_000);
    let png = dir.join("box.png");
    let reimported = strata::io::heightmap::heightmap_import::read_heightmap(&png).unwrap();
    assert_eq!((reimported.width_px, reimported.height_px), (224, 224));
    std::fs::remove_dir_all(&dir).ok();
}

/// An edit store whose writes wait until the test opens the gate (a slow
/// disk), counting the writes that landed.
#[derive(Debug, Default)]
struct GatedStore {
    inner: MemoryEditStore,
    open: std::sync::Mutex<bool>,
    opened: std::sync::Condvar,
    writes: std::sync::atomic::AtomicUsize,
}

impl GatedStore {
    fn open_gate(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }
}

impl EditStore for GatedStore {
    fn load_edited(&self, column: ColumnCoord) -> Result<Option<ColumnChunks>, SourceError> {
        self.inner.load_edited(column)
    }
    fn store_edited(
        &self,
        column: ColumnCoord,
        chunks: &[(
            strata::terrain::ChunkCoord,
            strata::terrain::storage::chunk::ChunkCells,
        )],
    ) -> Result<(), SourceError> {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.opened.wait(open).unwrap();
        }
        drop(open);
        self.writes
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.inner.store_edited(column, chunks)
    }
    fn edited_columns(&self) -> Result<Vec<ColumnCoord>, SourceError> {
        self.inner.edited_columns()
    }
}

#[test]
fn a_spill_never_waits_for_the_disk_and_a_column_evicted_mid_write_comes_back_edited() {
    let store = Arc::new(GatedStore::default());
    let source: Arc<dyn ColumnSource> = Arc::new(GeneratedColumns::new(&settings()));
    let mut r = Residency::new(source, store.clone() as Arc<dyn EditStore>, usize::MAX);
    let mut grid = Grid::streaming();
    let column = ColumnCoord::new(2, 2);
    r.load_now(&mut grid, [column]).unwrap();
    let b = CellBox::new(IVec3::new(70, 50, 70), IVec3::new(74, 54, 74));
    grid.edit_region(b, |_, _| Cell::full(Material::SNOW))
        .unwrap();
    r.end_frame();
    // The disk is stuck: the eviction returns at once all the same.
    let start = Instant::now();
    assert_eq!(r.evict(&mut grid, &[column]), vec![column]);
    assert!(start.elapsed() < Duration::from_millis(500));
    assert_eq!(r.spills_in_flight(), 1);
    assert_eq!(store.writes.load(std::sync::atomic::Ordering::SeqCst), 0);
    // Asked for again before the write landed: it comes from the queued
    // copy at once, with the edit, not regenerated without it.
    r.demand(&mut grid, [column]);
    assert!(grid.is_column_resident(column));
    assert_eq!(
        grid.cell(CellCoord::new(71, 51, 71)),
        Cell::full(Material::SNOW)
    );
    // The write lands once the disk moves; flush waits for it.
    store.open_gate();
    r.flush_spills().unwrap();
    assert_eq!(r.spills_in_flight(), 0);
    let stored = Grid::from_chunks(store.load_edited(column).unwrap().unwrap());
    assert_eq!(
        stored.cell(CellCoord::new(71, 51, 71)),
        Cell::full(Material::SNOW)
    );
}

/// A scripted walk east for `frames` from `start_xz` (studs) on the
/// 1,048,576-cell world of seed 7, loading its ground as it goes.
fn walk_east_on_the_big_world(
    start_xz: [f64; 2],
    frames: u32,
) -> strata::collision::scripted_walk::WalkStats {
    use glam::DVec2;
    use strata::collision::scripted_walk::{WalkSegment, run_walk};
    use strata::collision::{TerrainId, WalkInput};
    let settings = GeneratorSettings {
        seed: 7,
        size_cells: 1 << 20,
    };
    let source: Arc<dyn ColumnSource> = Arc::new(GeneratedColumns::new(&settings));
    let store = Arc::new(MemoryEditStore::default());
    let mut r = Residency::new(source, store as Arc<dyn EditStore>, usize::MAX);
    let mut grid = Grid::streaming();
    let segments = [WalkSegment {
        frames,
        input: WalkInput {
            move_xz: DVec2::new(1.0, 0.0),
            jump: false,
        },
    }];
    run_walk(&mut grid, TerrainId(0), start_xz, &segments, |g, region| {
        let missing = g.missing_columns(&region);
        Ok(r.load_now(g, missing)?)
    })
    .unwrap()
}

#[test]
fn a_walk_across_a_river_bank_is_not_counted_as_falling_through() {
    // The input that failed (new-user trial): 10,500 frames east from
    // (3,000,010, 3,000,010) studs cross a river whose bank put the
    // interpolated surface above the feet at its foot.
    let walk = walk_east_on_the_big_world([3_000_010.0, 3_000_010.0], 10_500);
    assert!(!walk.fell_through, "{walk:?}");
    assert!(walk.distance_studs > 2000.0, "{walk:?}");
}

#[test]
fn a_walk_off_the_worlds_edge_is_counted_as_falling() {
    // The input that went unflagged (new-user trial): 300 frames east from
    // 14 studs inside the east edge of the world.
    let walk = walk_east_on_the_big_world([4_194_290.0, 3_000_010.0], 300);
    assert!(walk.end_world[0] > 4_194_304.0, "{walk:?}");
    assert!(walk.end_world[1] < 0.0, "{walk:?}");
    assert!(walk.fell_through, "{walk:?}");
}
