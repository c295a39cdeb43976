//! The background meshing pipeline (spec §3, §7, §8), driven step by step:
//! jobs are run and their results submitted in a chosen order, and time comes
//! from a fake clock, so nothing depends on thread timing.

use std::cell::Cell as StdCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use glam::{DVec3, IVec3};
use strata::mesh::ChunkMesh;
use strata::pipeline::mesh_pipeline::{MAX_RESULTS_PER_FRAME, UPLOAD_BUDGET};
use strata::pipeline::{ChunkUploader, MeshPipeline, MeshResult, WorldMeshes};
use strata::terrain::editing::brush::{Brush, BrushMode};
use strata::terrain::editing::kernels::apply_brush;
use strata::terrain::storage::grid::Changes;
use strata::terrain::{Cell, CellBox, ChunkCoord, Grid, Material};

/// Records what publication does; each upload takes `upload_cost` of fake time.
struct FakeUploader {
    now: Rc<StdCell<Duration>>,
    upload_cost: Duration,
    staged: Vec<(ChunkCoord, Duration, usize)>,
    promoted: Vec<Vec<ChunkCoord>>,
}

impl FakeUploader {
    fn new(now: Rc<StdCell<Duration>>, upload_cost: Duration) -> Self {
        FakeUploader {
            now,
            upload_cost,
            staged: Vec::new(),
            promoted: Vec::new(),
        }
    }
}

impl ChunkUploader for FakeUploader {
    fn stage(&mut self, coord: ChunkCoord, _level: u8, mesh: &Arc<ChunkMesh>) {
        self.staged
            .push((coord, self.now.get(), mesh.triangle_count()));
        self.now.set(self.now.get() + self.upload_cost);
    }
    fn promote(&mut self, coords: &[ChunkCoord]) {
        self.promoted.push(coords.to_vec());
    }
    fn evict(&mut self, _coords: &[ChunkCoord]) {}
}

/// A flat floor at y = 8 cells over chunks x, z in -2..=2, y = 0.
fn floor_world() -> Grid {
    let mut g = Grid::new();
    g.edit_region(
        CellBox::new(IVec3::new(-64, 0, -64), IVec3::new(96, 8, 96)),
        |_, _| Cell::full(Material::ROCK),
    )
    .unwrap();
    g
}

fn synced(grid: &Grid) -> MeshPipeline {
    let mut p = MeshPipeline::new();
    p.mark_synced(grid);
    p
}

fn stamp(grid: &mut Grid, cell: IVec3, material: Material) {
    grid.edit_region(CellBox::new(cell, cell + IVec3::ONE), |_, _| {
        Cell::full(material)
    })
    .unwrap();
}

/// Runs every pending job synchronously and returns the results in job order.
fn run_all(p: &mut MeshPipeline, grid: &Grid) -> Vec<MeshResult> {
    p.take_jobs(grid, DVec3::ZERO, usize::MAX)
        .iter()
        .flat_map(|j| j.run())
        .collect()
}

fn fake_clock(start: Instant, now: &Rc<StdCell<Duration>>) -> impl FnMut() -> Instant {
    let now = Rc::clone(now);
    move || start + now.get()
}

#[test]
fn a_re_edited_chunk_coalesces_and_an_older_result_never_replaces_a_newer_one() {
    let mut grid = floor_world();
    let mut p = synced(&grid);
    let coord = ChunkCoord::new(0, 0, 0);
    // Edit 1 raises a cell strictly inside chunk (0,0,0); its job starts.
    stamp(&mut grid, IVec3::new(10, 8, 10), Material::SAND);
    assert_eq!(
        p.sync_grid(&grid, &mut WorldMeshes::default(), Instant::now(), |_| true),
        1
    );
    let old = run_all(&mut p, &grid);
    assert_eq!(old.len(), 1);
    // Edits 2 and 3 on the same chunk while that job runs: no second job
    // starts until it returns, then one job meshes both.
    for (x, m) in [(20, Material::SNOW), (24, Material::MUD)] {
        stamp(&mut grid, IVec3::new(x, 8, 20), m);
        assert_eq!(
            p.sync_grid(&grid, &mut WorldMeshes::default(), Instant::now(), |_| true),
            1
        );
        assert!(
            run_all(&mut p, &grid).is_empty(),
            "waits for the running job"
        );
    }
    assert!(p.submit_result(old[0].clone()), "edit 1 can still be shown");
    let new = run_all(&mut p, &grid);
    assert_eq!(new.len(), 1);
    assert!(new[0].serial > old[0].serial && new[0].epoch > old[0].epoch);
    assert_ne!(old[0].mesh, new[0].mesh);
    assert!(p.submit_result(new[0].clone()));
    // The same old result arriving again is moot beside the newer one.
    assert!(!p.submit_result(old[0].clone()));
    assert_eq!(p.stats.stale_results, 1);

    let now = Rc::new(StdCell::new(Duration::ZERO));
    let mut up = FakeUploader::new(Rc::clone(&now), Duration::ZERO);
    let mut meshes = WorldMeshes::build_all(&floor_world());
    p.publish_with_clock(&mut up, &mut meshes, &mut fake_clock(Instant::now(), &now));
    assert_eq!(up.promoted, vec![vec![coord]]);
    assert_eq!(**meshes.get(coord).unwrap(), *new[0].mesh);
    // After the newer mesh is shown, the older one is stale on arrival.
    assert!(!p.submit_result(old[0].clone()));
    assert!(p.is_idle());
    p.frame_presented(Instant::now());
    assert_eq!(
        p.stats.edit_to_visible.count(),
        3,
        "every edit is sampled once"
    );
    assert_eq!(p.stats.edit_to_full_detail.count(), 3);
}

#[test]
fn full_refresh_on_generation_mismatch_future_and_expired_revisions() {
    let grid = floor_world();
    // Another grid instance (same content, fresh generation): full refresh.
    let other = grid.clone();
    let mut p = synced(&grid);
    assert_eq!(
        other.changes_since(grid.generation(), grid.revision()),
        Changes::FullRefresh
    );
    let n = p.sync_grid(&other, &mut WorldMeshes::default(), Instant::now(), |_| {
        true
    });
    assert_eq!(n, other.meshing_candidates().len());
    // A revision newer than the grid's.
    assert_eq!(
        grid.changes_since(grid.generation(), grid.revision() + 1),
        Changes::FullRefresh
    );
    // Older than the retained removal history.
    let mut g = Grid::new();
    let generation = g.generation();
    for i in 0..(strata::terrain::storage::grid::REMOVAL_LOG_CAPACITY as i32 + 1) {
        let b = CellBox::new(IVec3::new(i * 32, 0, 0), IVec3::new(i * 32 + 1, 1, 1));
        g.edit_region(b, |_, _| Cell::full(Material::ROCK)).unwrap();
        g.edit_region(b, |_, _| Cell::EMPTY).unwrap();
    }
    assert_eq!(g.changes_since(generation, 0), Changes::FullRefresh);
}

#[test]
fn removed_chunk_invalidates_all_its_neighbours() {
    let mut g = Grid::new();
    stamp(&mut g, IVec3::new(40, 40, 40), Material::ROCK);
    let mut p = synced(&g);
    g.edit_region(
        CellBox::new(IVec3::new(40, 40, 40), IVec3::new(41, 41, 41)),
        |_, _| Cell::EMPTY,
    )
    .unwrap();
    assert_eq!(g.chunk_count(), 0);
    assert_eq!(
        p.sync_grid(&g, &mut WorldMeshes::default(), Instant::now(), |_| true),
        27
    );
}

#[test]
fn invalidation_counts_inside_near_a_face_and_at_a_corner() {
    let mut grid = floor_world();
    let mut p = synced(&grid);
    // Strictly inside chunk (0,0,0): only that chunk.
    stamp(&mut grid, IVec3::new(16, 8, 16), Material::SAND);
    assert_eq!(
        p.sync_grid(&grid, &mut WorldMeshes::default(), Instant::now(), |_| true),
        1
    );
    // One cell from the +x face (cell 30; cell 31 lies between it and the face).
    stamp(&mut grid, IVec3::new(30, 8, 16), Material::SAND);
    assert_eq!(
        p.sync_grid(&grid, &mut WorldMeshes::default(), Instant::now(), |_| true),
        2
    );
    // One cell from the -z face (cell 1).
    stamp(&mut grid, IVec3::new(16, 8, 1), Material::SAND);
    assert_eq!(
        p.sync_grid(&grid, &mut WorldMeshes::default(), Instant::now(), |_| true),
        2
    );
    // A brush centred on the chunk corner (0, 0, 0): exactly 8 chunks.
    let brush = Brush {
        mode: BrushMode::Add,
        radius_cells: 1.0,
        strength: 1.0,
        material: Material::SNOW,
        ignore_water: false,
    };
    let mut g = Grid::new();
    let mut p = synced(&g);
    apply_brush(&mut g, &brush, DVec3::ZERO).unwrap();
    assert_eq!(
        p.sync_grid(&g, &mut WorldMeshes::default(), Instant::now(), |_| true),
        8
    );
}

#[test]
fn seventh_edit_merges_the_oldest_bounds_conservatively() {
    let mut g = floor_world();
    let coord = ChunkCoord::new(0, 0, 0);
    let before = g.revision();
    let mut after_first = 0;
    for i in 0..7 {
        stamp(&mut g, IVec3::new(4 + i * 3, 8, 10), Material::SAND);
        if i == 0 {
            after_first = g.revision();
        }
    }
    let base = coord.min_cell().0;
    // Eight entries (the floor, then seven stamps) in a history of six: the
    // floor merged into the first stamp and that into the second. A reader
    // from before the stamps, or right after the first, gets a box holding
    // every change since (a superset: the floor's box too); later readers
    // get exactly the stamps since.
    let merged = CellBox::new(base, base + IVec3::new(32, 9, 32));
    assert_eq!(g.changed_extent_since(coord, before), merged);
    assert_eq!(g.changed_extent_since(coord, after_first), merged);
    assert_eq!(
        g.changed_extent_since(coord, after_first + 1),
        CellBox::new(base + IVec3::new(10, 8, 10), base + IVec3::new(23, 9, 11))
    );
}

/// Requests many chunks at once (a full refresh of a wide floor) and submits every result.
fn many_results(grid: &Grid) -> (MeshPipeline, WorldMeshes) {
    let mut p = MeshPipeline::new();
    assert!(p.sync_grid(grid, &mut WorldMeshes::default(), Instant::now(), |_| true) > 50);
    for r in run_all(&mut p, grid) {
        assert!(p.submit_result(r));
    }
    (p, WorldMeshes::default())
}

#[test]
fn a_frame_publishes_at_most_32_results() {
    let grid = floor_world();
    let (mut p, mut meshes) = many_results(&grid);
    let now = Rc::new(StdCell::new(Duration::ZERO));
    let mut up = FakeUploader::new(Rc::clone(&now), Duration::from_micros(10));
    let start = Instant::now();
    let r = p.publish_with_clock(&mut up, &mut meshes, &mut fake_clock(start, &now));
    assert_eq!(r.staged, MAX_RESULTS_PER_FRAME);
    assert_eq!(up.staged.len(), 32);
    let mut frames = 1;
    while !p.is_idle() {
        let before = up.staged.len();
        p.publish_with_clock(&mut up, &mut meshes, &mut fake_clock(start, &now));
        assert!(up.staged.len() - before <= 32);
        frames += 1;
        assert!(frames < 100);
    }
    assert_eq!(p.stats.max_results_per_frame, 32);
}

#[test]
fn no_upload_starts_after_the_2ms_budget() {
    let grid = floor_world();
    let (mut p, mut meshes) = many_results(&grid);
    let now = Rc::new(StdCell::new(Duration::ZERO));
    // Each upload takes 0.3 ms: uploads start at 0, 0.3, ..., 1.8 ms; none at 2.1.
    let mut up = FakeUploader::new(Rc::clone(&now), Duration::from_micros(300));
    let frame_start = now.get();
    let r = p.publish_with_clock(&mut up, &mut meshes, &mut fake_clock(Instant::now(), &now));
    assert_eq!(r.staged, 7);
    for (_, started, _) in &up.staged {
        assert!(
            *started - frame_start < UPLOAD_BUDGET,
            "upload started at {started:?}"
        );
    }
    // The last upload may finish after the budget (one upload over).
    assert!(now.get() - frame_start >= UPLOAD_BUDGET);
    assert!((r.upload_ms - 2.1).abs() < 1e-6, "{}", r.upload_ms);
}

#[test]
fn all_chunks_of_one_edit_publish_in_the_same_frame() {
    // A rock block around the chunk corner (0, 0, 0); a small Subtract on the
    // corner dirties the 8 chunks that meet there.
    let mut grid = Grid::new();
    grid.edit_region(CellBox::new(IVec3::splat(-16), IVec3::splat(16)), |_, _| {
        Cell::full(Material::ROCK)
    })
    .unwrap();
    let mut p = synced(&grid);
    let brush = Brush {
        mode: BrushMode::Subtract,
        radius_cells: 3.0,
        strength: 1.0,
        material: Material::ROCK,
        ignore_water: false,
    };
    apply_brush(&mut grid, &brush, DVec3::ZERO).unwrap();
    let n = p.sync_grid(&grid, &mut WorldMeshes::default(), Instant::now(), |_| true);
    assert_eq!(n, 8, "corner edit dirties the 8 chunks meeting there");
    let results = run_all(&mut p, &grid);
    assert_eq!(results.len(), 8);
    let now = Rc::new(StdCell::new(Duration::ZERO));
    let mut up = FakeUploader::new(Rc::clone(&now), Duration::ZERO);
    let mut meshes = WorldMeshes::default();
    // Seven results arrive: uploaded, but nothing becomes visible.
    for r in &results[..7] {
        p.submit_result(r.clone());
    }
    let r = p.publish_with_clock(&mut up, &mut meshes, &mut fake_clock(Instant::now(), &now));
    assert_eq!((r.staged, r.promoted_chunks), (7, 0));
    assert!(up.promoted.is_empty());
    // The eighth arrives: all eight become visible together.
    p.submit_result(results[7].clone());
    let r = p.publish_with_clock(&mut up, &mut meshes, &mut fake_clock(Instant::now(), &now));
    assert_eq!((r.staged, r.promoted_chunks, r.promoted_groups), (1, 8, 1));
    assert_eq!(up.promoted.len(), 1);
    assert_eq!(up.promoted[0].len(), 8);
    assert_eq!(p.stats.edit_to_visible.count(), 0, "not presented yet");
    p.frame_presented(Instant::now());
    assert_eq!(p.stats.edit_to_visible.count(), 1);
}

#[test]
fn an_earlier_edit_shows_while_a_later_one_on_the_same_chunk_is_meshed() {
    let mut grid = floor_world();
    let mut p = synced(&grid);
    let (a, b) = (ChunkCoord::new(0, 0, 0), ChunkCoord::new(1, 0, 0));
    // Edit 1 near the +x face dirties chunks A = (0,0,0) and B = (1,0,0).
    stamp(&mut grid, IVec3::new(31, 8, 16), Material::SAND);
    assert_eq!(
        p.sync_grid(&grid, &mut WorldMeshes::default(), Instant::now(), |_| true),
        2
    );
    let first = run_all(&mut p, &grid);
    // Edit 2 re-dirties B only, before edit 1 is visible.
    stamp(&mut grid, IVec3::new(40, 8, 16), Material::SNOW);
    assert_eq!(
        p.sync_grid(&grid, &mut WorldMeshes::default(), Instant::now(), |_| true),
        1
    );
    let now = Rc::new(StdCell::new(Duration::ZERO));
    let mut up = FakeUploader::new(Rc::clone(&now), Duration::ZERO);
    let mut meshes = WorldMeshes::default();
    for r in first.iter().cloned() {
        assert!(p.submit_result(r));
    }
    // A and B from edit 1 show together at once: edit 2 (still being
    // meshed) does not hold edit 1 back, and the border A|B is consistent.
    let r = p.publish_with_clock(&mut up, &mut meshes, &mut fake_clock(Instant::now(), &now));
    assert_eq!((r.promoted_chunks, r.promoted_groups), (2, 1));
    assert_eq!(up.promoted, vec![vec![a, b]]);
    assert_eq!(p.pending_edits(), 1);
    let b_edit1 = first.iter().find(|r| r.coord == b).unwrap();
    assert_eq!(**meshes.get(b).unwrap(), *b_edit1.mesh);
    // Then B from edit 2.
    let second = run_all(&mut p, &grid);
    assert_eq!(second.len(), 1);
    for r in second.iter().cloned() {
        p.submit_result(r);
    }
    let r = p.publish_with_clock(&mut up, &mut meshes, &mut fake_clock(Instant::now(), &now));
    assert_eq!((r.promoted_chunks, r.promoted_groups), (1, 1));
    assert_eq!(up.promoted[1], vec![b]);
    assert_eq!(**meshes.get(b).unwrap(), *second[0].mesh);
    p.frame_presented(Instant::now());
    // Both edits are reported as visible, each with its own latency.
    assert_eq!(p.stats.edit_to_visible.count(), 2);
    assert!(p.is_idle());
}

#[test]
fn a_chain_of_edits_across_borders_shows_only_as_a_consistent_whole() {
    let mut grid = floor_world();
    let mut p = synced(&grid);
    let (a, b, c) = (
        ChunkCoord::new(0, 0, 0),
        ChunkCoord::new(1, 0, 0),
        ChunkCoord::new(2, 0, 0),
    );
    // Edit 1 on the A|B border, edit 2 on the B|C border, both before
    // anything is meshed: one job per chunk shows both edits.
    stamp(&mut grid, IVec3::new(31, 8, 16), Material::SAND);
    p.sync_grid(&grid, &mut WorldMeshes::default(), Instant::now(), |_| true);
    stamp(&mut grid, IVec3::new(63, 8, 16), Material::SNOW);
    p.sync_grid(&grid, &mut WorldMeshes::default(), Instant::now(), |_| true);
    let results = run_all(&mut p, &grid);
    assert_eq!(results.len(), 3);
    let of = |coord: ChunkCoord| results.iter().find(|r| r.coord == coord).unwrap().clone();
    let now = Rc::new(StdCell::new(Duration::ZERO));
    let mut up = FakeUploader::new(Rc::clone(&now), Duration::ZERO);
    let mut meshes = WorldMeshes::default();
    // A and B arrive: B shows edit 2 as well, so showing A and B without C
    // would crack the B|C border; nothing becomes visible.
    p.submit_result(of(a));
    p.submit_result(of(b));
    let r = p.publish_with_clock(&mut up, &mut meshes, &mut fake_clock(Instant::now(), &now));
    assert_eq!(r.promoted_chunks, 0);
    // C arrives: all three at once.
    p.submit_result(of(c));
    let r = p.publish_with_clock(&mut up, &mut meshes, &mut fake_clock(Instant::now(), &now));
    assert_eq!((r.promoted_chunks, r.promoted_groups), (3, 1));
    assert_eq!(up.promoted, vec![vec![a, b, c]]);
    assert!(p.is_idle());
}

#[test]
fn a_steady_stream_of_overlapping_edits_never_chains_into_one_wait() {
    // Each frame edits the border of two chunks, sliding one chunk along x,
    // so every edit shares a chunk with the one before it. Under the old
    // group merging this chained every edit into a single group that waited
    // for all of them; here each edit shows within two frames.
    let mut grid = floor_world();
    let mut p = synced(&grid);
    let now = Rc::new(StdCell::new(Duration::ZERO));
    let mut up = FakeUploader::new(Rc::clone(&now), Duration::ZERO);
    let mut meshes = WorldMeshes::default();
    let mut in_flight: Vec<MeshResult> = Vec::new();
    let mut visible_by_frame = Vec::new();
    for frame in 0..8 {
        let x = -64 + 31 + 32 * (frame % 5);
        let material = [Material::SAND, Material::SNOW][frame as usize / 5];
        stamp(&mut grid, IVec3::new(x, 8, 16), material);
        p.sync_grid(&grid, &mut meshes, Instant::now(), |_| true);
        // Last frame's jobs return now; this frame's start.
        for r in in_flight.drain(..) {
            p.submit_result(r);
        }
        in_flight = run_all(&mut p, &grid);
        p.publish_with_clock(&mut up, &mut meshes, &mut fake_clock(Instant::now(), &now));
        p.frame_presented(Instant::now());
        visible_by_frame.push(p.stats.edit_to_visible.count());
    }
    // From frame 1 on, every frame makes at least the previous edit visible.
    for (frame, &visible) in visible_by_frame.iter().enumerate().skip(1) {
        assert!(visible >= frame, "frame {frame}: {visible_by_frame:?}");
    }
}

#[test]
fn background_workers_deliver_every_request() {
    let mut grid = floor_world();
    let mut p = synced(&grid);
    let mut meshes = WorldMeshes::build_all(&grid);
    let brush = Brush {
        mode: BrushMode::Add,
        radius_cells: 8.0,
        strength: 0.5,
        material: Material::GRASS,
        ignore_water: false,
    };
    for i in 0..10 {
        let centre = DVec3::new(-100.0 + 25.0 * i as f64, 32.0, 10.0);
        apply_brush(&mut grid, &brush, centre).unwrap();
        p.sync_grid(&grid, &mut meshes, Instant::now(), |_| true);
        p.dispatch(&grid, DVec3::ZERO);
    }
    let mut up = FakeUploader::new(Rc::new(StdCell::new(Duration::ZERO)), Duration::ZERO);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !p.is_idle() {
        p.receive();
        p.publish(&mut up, &mut meshes);
        p.dispatch(&grid, DVec3::ZERO);
        assert!(Instant::now() < deadline, "pipeline did not drain");
        std::thread::sleep(Duration::from_millis(1));
    }
    // The published picking copy equals a synchronous re-mesh of the final grid.
    let reference = WorldMeshes::build_all(&grid);
    for (coord, mesh) in reference.iter() {
        assert_eq!(
            meshes.get(coord).map(|m| &**m),
            Some(&**mesh),
            "chunk {coord:?}"
        );
    }
    assert_eq!(meshes.len(), reference.len());
    p.frame_presented(Instant::now());
    assert!(p.stats.edit_to_visible.count() >= 1);
}

#[test]
fn jobs_hold_at_most_32_chunks_and_start_nearest_the_camera() {
    let grid = floor_world();
    let mut p = MeshPipeline::new();
    let requested = p.sync_grid(&grid, &mut WorldMeshes::default(), Instant::now(), |_| true);
    assert!(requested > 64);
    let camera = DVec3::new(300.0, 40.0, 300.0);
    let jobs = p.take_jobs(&grid, camera, usize::MAX);
    assert!(
        jobs.iter()
            .all(|j| !j.items.is_empty() && j.items.len() <= 32)
    );
    assert_eq!(jobs.iter().map(|j| j.items.len()).sum::<usize>(), requested);
    // The first item of the first batch is the chunk nearest the camera.
    let dist = |c: ChunkCoord| (c.origin_world() + DVec3::splat(64.0)).distance(camera);
    let nearest = grid
        .meshing_candidates()
        .into_iter()
        .min_by(|a, b| dist(*a).total_cmp(&dist(*b)))
        .unwrap();
    assert_eq!(jobs[0].items[0].coord, nearest);
    // Dispatched requests are not handed out twice.
    assert!(p.take_jobs(&grid, camera, usize::MAX).is_empty());
}

#[test]
fn under_a_backlog_edited_chunks_show_first_as_coarser_previews() {
    use strata::pipeline::mesh_pipeline::{PREVIEW_BACKLOG_MS, PREVIEW_LEVEL_STEP};
    let mut grid = floor_world();
    let mut meshes = WorldMeshes::build_all(&grid);
    let mut p = synced(&grid);
    // Repaint the whole floor's top: every floor chunk (and the ones above
    // and below that read it) needs a new full-detail mesh.
    grid.edit_region(
        CellBox::new(IVec3::new(-64, 7, -64), IVec3::new(96, 8, 96)),
        |_, _| Cell::full(Material::SNOW),
    )
    .unwrap();
    let edited = p.sync_grid(&grid, &mut meshes, Instant::now(), |_| true);
    let threads = rayon::current_num_threads() as f64;
    assert!(
        edited as f64 * 3.0 / threads > PREVIEW_BACKLOG_MS,
        "{edited} chunks make a backlog"
    );
    let jobs = p.take_jobs(&grid, DVec3::ZERO, usize::MAX);
    let items: Vec<_> = jobs.iter().flat_map(|j| j.items.iter().copied()).collect();
    let previews: Vec<_> = items.iter().filter(|i| i.preview).collect();
    assert_eq!(previews.len(), edited, "one preview per edited chunk");
    assert!(previews.iter().all(|i| i.level == PREVIEW_LEVEL_STEP));
    // Previews are handed out before any full-detail item.
    let first_full = items.iter().position(|i| !i.preview).unwrap();
    assert!(items[..first_full].iter().all(|i| i.preview));
    assert_eq!(first_full, edited);

    let now = Rc::new(StdCell::new(Duration::ZERO));
    let mut up = FakeUploader::new(Rc::clone(&now), Duration::ZERO);
    let chunks_before = meshes.len();
    // The previews arrive first and become visible (over several frames).
    for job in &jobs {
        for r in job.run_useful(|i| i.preview) {
            assert!(p.submit_result(r));
        }
    }
    for _ in 0..10 {
        p.publish_with_clock(&mut up, &mut meshes, &mut fake_clock(Instant::now(), &now));
    }
    p.frame_presented(Instant::now());
    assert_eq!(p.stats.edit_to_visible.count(), 1, "visible as previews");
    assert_eq!(p.stats.edit_to_full_detail.count(), 0);
    let coarse = meshes
        .levels()
        .filter(|(_, l)| *l == PREVIEW_LEVEL_STEP)
        .count();
    assert!(coarse > 0);
    assert!(meshes.len() >= chunks_before - 1, "no chunk disappeared");
    // The requested level is unchanged, so LOD still sees level 0.
    assert!(
        meshes
            .levels()
            .all(|(c, _)| p.pending_level(c).is_none_or(|l| l == 0))
    );
    // Full detail replaces every preview.
    for job in &jobs {
        for r in job.run_useful(|i| !i.preview) {
            assert!(p.submit_result(r));
        }
    }
    for _ in 0..10 {
        p.publish_with_clock(&mut up, &mut meshes, &mut fake_clock(Instant::now(), &now));
    }
    p.frame_presented(Instant::now());
    assert_eq!(p.stats.edit_to_full_detail.count(), 1);
    assert!(meshes.levels().all(|(_, l)| l == 0));
    assert!(p.is_idle());
    let reference = WorldMeshes::build_all(&grid);
    for (coord, mesh) in reference.iter() {
        assert_eq!(meshes.get(coord).map(|m| &**m), Some(&**mesh), "{coord:?}");
    }
}

#[test]
fn a_re_mesh_identical_to_the_drawn_mesh_shows_without_an_upload() {
    // A buried cell near the +x face changes material: both chunks that read
    // it are re-meshed, and neither mesh changes, so nothing is uploaded;
    // the edit still counts as shown.
    let mut grid = floor_world();
    let mut meshes = WorldMeshes::build_all(&grid);
    let mut p = synced(&grid);
    stamp(&mut grid, IVec3::new(30, 2, 16), Material::SAND);
    assert_eq!(p.sync_grid(&grid, &mut meshes, Instant::now(), |_| true), 2);
    for r in run_all(&mut p, &grid) {
        assert_eq!(*r.mesh, **meshes.get(r.coord).unwrap());
        assert!(p.submit_result(r));
    }
    let now = Rc::new(StdCell::new(Duration::ZERO));
    let mut up = FakeUploader::new(Rc::clone(&now), Duration::ZERO);
    let r = p.publish_with_clock(&mut up, &mut meshes, &mut fake_clock(Instant::now(), &now));
    assert_eq!((r.staged, r.promoted_chunks), (0, 2));
    assert!(up.staged.is_empty());
    assert_eq!(p.stats.unchanged_results, 2);
    p.frame_presented(Instant::now());
    assert_eq!(p.stats.edit_to_visible.count(), 1);
    assert!(p.is_idle());
    // A visible change is uploaded as usual.
    stamp(&mut grid, IVec3::new(16, 8, 16), Material::SNOW);
    p.sync_grid(&grid, &mut meshes, Instant::now(), |_| true);
    for r in run_all(&mut p, &grid) {
        p.submit_result(r);
    }
    let r = p.publish_with_clock(&mut up, &mut meshes, &mut fake_clock(Instant::now(), &now));
    assert_eq!((r.staged, r.promoted_chunks), (1, 1));
}

#[test]
fn after_a_full_refresh_a_mesh_left_in_the_staging_slot_is_never_shown() {
    let mut grid = floor_world();
    let mut meshes = WorldMeshes::build_all(&grid);
    let mut p = synced(&grid);
    let (a, b) = (ChunkCoord::new(0, 0, 0), ChunkCoord::new(1, 0, 0));
    let original = meshes.get(a).unwrap().triangle_count();
    // An edit on the A|B border; only A's result arrives, and spare upload
    // time stages it ahead of its turn.
    stamp(&mut grid, IVec3::new(31, 8, 16), Material::SAND);
    p.sync_grid(&grid, &mut meshes, Instant::now(), |_| true);
    let results = run_all(&mut p, &grid);
    let of_a = results.iter().find(|r| r.coord == a).unwrap().clone();
    assert_ne!(of_a.mesh.triangle_count(), original);
    p.submit_result(of_a);
    let now = Rc::new(StdCell::new(Duration::ZERO));
    let mut up = FakeUploader::new(Rc::clone(&now), Duration::ZERO);
    p.publish_with_clock(&mut up, &mut meshes, &mut fake_clock(Instant::now(), &now));
    assert!(up.staged.iter().any(|(c, _, _)| *c == a) && up.promoted.is_empty());
    // The edit is reverted and the grid replaced (a full refresh): A's new
    // mesh equals the drawn one, yet it must be uploaded again, or promoting
    // A would show the edited mesh still in its staging slot.
    grid.edit_region(
        CellBox::new(IVec3::new(31, 8, 16), IVec3::new(32, 9, 17)),
        |_, _| Cell::EMPTY,
    )
    .unwrap();
    let other = grid.clone();
    p.sync_grid(&other, &mut meshes, Instant::now(), |_| true);
    for r in run_all(&mut p, &other) {
        p.submit_result(r);
    }
    for _ in 0..20 {
        p.publish_with_clock(&mut up, &mut meshes, &mut fake_clock(Instant::now(), &now));
    }
    assert!(up.promoted.iter().flatten().any(|c| *c == a && *c != b));
    let last_staged_a = up.staged.iter().rev().find(|(c, _, _)| *c == a).unwrap();
    assert_eq!(last_staged_a.2, original);
}
