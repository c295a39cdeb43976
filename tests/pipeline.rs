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
use strata::terrain::edit::{Brush, BrushMode, apply_brush};
use strata::terrain::grid::Changes;
use strata::terrain::{Cell, CellBox, CellCoord, ChunkCoord, Grid, Material};

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
fn stale_result_is_rejected_and_the_newer_one_is_published() {
    for newer_first in [true, false] {
        let mut grid = floor_world();
        let mut p = synced(&grid);
        // Edit 1 raises a cell strictly inside chunk (0,0,0).
        stamp(&mut grid, IVec3::new(10, 8, 10), Material::SAND);
        assert_eq!(
            p.sync_grid(&grid, &mut WorldMeshes::default(), Instant::now(), |_| true),
            1
        );
        let old = run_all(&mut p, &grid);
        // Edit 2 on the same chunk, requested and meshed before the old job reports.
        stamp(&mut grid, IVec3::new(20, 8, 20), Material::SNOW);
        assert_eq!(
            p.sync_grid(&grid, &mut WorldMeshes::default(), Instant::now(), |_| true),
            1
        );
        let new = run_all(&mut p, &grid);
        assert_eq!((old.len(), new.len()), (1, 1));
        assert!(new[0].serial > old[0].serial);
        assert_ne!(old[0].mesh, new[0].mesh);
        let (first, second) = if newer_first {
            (new[0].clone(), old[0].clone())
        } else {
            (old[0].clone(), new[0].clone())
        };
        let first_accepted = p.submit_result(first);
        let second_accepted = p.submit_result(second);
        assert_eq!(
            (first_accepted, second_accepted),
            (newer_first, !newer_first)
        );
        assert_eq!(p.stats.stale_results, 1);

        let now = Rc::new(StdCell::new(Duration::ZERO));
        let mut up = FakeUploader::new(Rc::clone(&now), Duration::ZERO);
        let mut meshes = WorldMeshes::build_all(&floor_world());
        p.publish_with_clock(&mut up, &mut meshes, &mut fake_clock(Instant::now(), &now));
        assert_eq!(up.staged.len(), 1);
        assert_eq!(up.promoted, vec![vec![ChunkCoord::new(0, 0, 0)]]);
        assert_eq!(
            **meshes.get(ChunkCoord::new(0, 0, 0)).unwrap(),
            *new[0].mesh
        );
        assert!(p.is_idle());
    }
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
    for i in 0..(strata::terrain::grid::REMOVAL_LOG_CAPACITY as i32 + 1) {
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
fn seventh_edit_expires_the_first_edits_bounds() {
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
    assert_eq!(g.changed_extent_since(coord, before), coord.cell_box());
    assert_eq!(
        g.changed_extent_since(coord, after_first),
        CellBox::new(base + IVec3::new(7, 8, 10), base + IVec3::new(23, 9, 11))
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
    assert_eq!(p.stats.edit_to_visible.count(), 1);
}

#[test]
fn a_later_edit_merges_the_unpublished_group_it_touches() {
    let mut grid = floor_world();
    let mut p = synced(&grid);
    // Edit 1 near the +x face dirties chunks (0,0,0) and (1,0,0).
    stamp(&mut grid, IVec3::new(31, 8, 16), Material::SAND);
    assert_eq!(
        p.sync_grid(&grid, &mut WorldMeshes::default(), Instant::now(), |_| true),
        2
    );
    let first = run_all(&mut p, &grid);
    // Edit 2 re-dirties (1,0,0) only before edit 1 is visible.
    stamp(&mut grid, IVec3::new(40, 8, 16), Material::SNOW);
    assert_eq!(
        p.sync_grid(&grid, &mut WorldMeshes::default(), Instant::now(), |_| true),
        1
    );
    let second = run_all(&mut p, &grid);
    let now = Rc::new(StdCell::new(Duration::ZERO));
    let mut up = FakeUploader::new(Rc::clone(&now), Duration::ZERO);
    let mut meshes = WorldMeshes::default();
    for r in first {
        p.submit_result(r);
    }
    // (0,0,0) from edit 1 is current; (1,0,0) from edit 1 is stale. The merged
    // group must wait for (1,0,0) from edit 2, or the border would crack.
    let r = p.publish_with_clock(&mut up, &mut meshes, &mut fake_clock(Instant::now(), &now));
    assert_eq!((r.staged, r.promoted_chunks), (1, 0));
    for r in second {
        p.submit_result(r);
    }
    let r = p.publish_with_clock(&mut up, &mut meshes, &mut fake_clock(Instant::now(), &now));
    assert_eq!((r.promoted_chunks, r.promoted_groups), (2, 1));
    assert_eq!(
        up.promoted,
        vec![vec![ChunkCoord::new(0, 0, 0), ChunkCoord::new(1, 0, 0)]]
    );
    // Both edits are reported as visible, each with its own latency.
    assert_eq!(p.stats.edit_to_visible.count(), 2);
    assert_eq!(
        grid.cell(CellCoord::new(40, 8, 16)),
        Cell::full(Material::SNOW)
    );
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
