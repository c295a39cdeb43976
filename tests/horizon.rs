//! The horizon's node selection (spec §13): coverage without overlap, the
//! nearest built ancestor while nodes stream, coarsest-first requests,
//! edits reaching every level, and a frame's selection allocating nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use glam::{DVec3, IVec3};
use rustc_hash::FxHashSet;
use strata::camera::{Camera, Frustum};
use strata::pipeline::horizon::{Horizon, HorizonDraw, HorizonView, level_far_end_studs};
use strata::pipeline::seam_audit::audit_nodes;
use strata::terrain::generation::generate::GeneratorSettings;
use strata::terrain::generation::generated_columns::GeneratedColumns;
use strata::terrain::storage::node::{FIRST_NODE_LEVEL, MAX_NODE_LEVEL, NodeKey};
use strata::terrain::{Cell, CellBox, ChunkCoord, Grid, Material};

/// Counts allocations of this test binary (every test's, so the
/// allocation test measures a window of its own thread's calls only).
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static COUNT_HERE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNT_HERE.with(|c| c.get()) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNT_HERE.with(|c| c.get()) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn big_world() -> Horizon {
    let settings = GeneratorSettings {
        seed: 7,
        size_cells: 1 << 20,
    };
    Horizon::new(Arc::new(GeneratedColumns::new(&settings))).expect("the generator samples")
}

const CENTRE: f64 = 2_097_152.0;

/// Selects for `camera` with no chunk meshed.
fn select(h: &mut Horizon, camera: &Camera, draw_distance_studs: f64) {
    let frustum = Frustum::from_clip_from_world(camera.clip_from_world());
    let pos = camera.pos_world;
    let in_view =
        |lo: DVec3, hi: DVec3| frustum.intersects_aabb((lo - pos).as_vec3(), (hi - pos).as_vec3());
    let no_chunks = |_| false;
    h.select(&HorizonView {
        camera_pos_world: pos,
        draw_distance_studs,
        in_view: &in_view,
        chunks_ready: &no_chunks,
    });
}

/// No draw is an ancestor of another: nothing is drawn twice.
fn assert_no_overlap(draws: &[HorizonDraw]) {
    let keys: FxHashSet<NodeKey> = draws
        .iter()
        .map(|d| match *d {
            HorizonDraw::Node(k) | HorizonDraw::Chunks(k) => k,
        })
        .collect();
    assert_eq!(keys.len(), draws.len(), "a node drawn twice");
    for &k in &keys {
        let mut up = k.parent();
        while let Some(p) = up {
            assert!(!keys.contains(&p), "{k:?} drawn with its ancestor {p:?}");
            up = p.parent();
        }
    }
}

/// Every node column is drawn whole at one level: no two draws whose
/// footprints overlap are at different levels (a coarse fallback node
/// under a fine one drew a flat plane over the valleys).
fn assert_columns_whole(draws: &[HorizonDraw]) {
    let footprint = |k: NodeKey| {
        let [x, _, z] = k.min_cell();
        (x, z, x + k.side_cells(), z + k.side_cells())
    };
    let keys: Vec<NodeKey> = draws
        .iter()
        .map(|d| match *d {
            HorizonDraw::Node(k) | HorizonDraw::Chunks(k) => k,
        })
        .collect();
    for &a in &keys {
        let (ax0, az0, ax1, az1) = footprint(a);
        for &b in &keys {
            let (bx0, bz0, bx1, bz1) = footprint(b);
            let overlap = ax0 < bx1 && bx0 < ax1 && az0 < bz1 && bz0 < az1;
            assert!(
                !overlap || a.level == b.level,
                "{a:?} and {b:?} stand on one column at different levels"
            );
        }
    }
}

#[test]
fn the_view_to_65536_studs_is_covered_once_by_bounded_draws() {
    let mut h = big_world();
    let camera = Camera::new(DVec3::new(CENTRE, 2500.0, CENTRE), 0.0, -8.0);
    select(&mut h, &camera, 65_536.0);
    assert!(h.uncovered() > 0, "nothing is built yet");
    h.build_wanted_now();
    select(&mut h, &camera, 65_536.0);
    assert_eq!(h.uncovered(), 0);
    assert!(h.is_settled());
    let draws = h.draws();
    assert_no_overlap(draws);
    assert_columns_whole(draws);
    // Equal-level neighbours agree on their shared vertices (spec §11, §13),
    // and there are such neighbours at every level drawn.
    assert_eq!(audit_nodes(&h), vec![]);
    assert!(
        draws.len() > 100 && draws.len() <= 4000,
        "{} draws",
        draws.len()
    );
    // Levels follow distance: each drawn node's column above level 4 lies
    // beyond the far end of the level below it (it was not refined);
    // levels 4 to 8 all appear
    // (level 8 reaches 96 km, past the draw distance).
    let mut levels = FxHashSet::default();
    for d in draws {
        let HorizonDraw::Node(k) = *d else {
            panic!("no chunk is ready, so none is drawn: {d:?}");
        };
        // (Level 4 also stands in for the chunks, none of which is ready.)
        assert!(
            k.level == FIRST_NODE_LEVEL
                || h.column_distance_studs(k, camera.pos_world) >= level_far_end_studs(k.level - 1),
            "{k:?} drawn nearer than its level"
        );
        levels.insert(k.level);
    }
    for level in FIRST_NODE_LEVEL..=8 {
        assert!(levels.contains(&level), "level {level} missing: {levels:?}");
    }
}

#[test]
fn a_jump_draws_the_nearest_built_ancestors_and_asks_coarsest_first() {
    let mut h = big_world();
    let here = Camera::new(DVec3::new(CENTRE, 2500.0, CENTRE), 0.0, -8.0);
    select(&mut h, &here, 65_536.0);
    h.build_wanted_now();
    // 12 km on: the coarse nodes are shared, the fine ones are not built.
    let there = Camera::new(DVec3::new(CENTRE, 2500.0, CENTRE - 12_000.0), 0.0, -8.0);
    select(&mut h, &there, 65_536.0);
    assert_eq!(h.uncovered(), 0, "built ancestors cover the new view");
    assert_no_overlap(h.draws());
    assert_columns_whole(h.draws());
    assert!(h.wanted_count() > 0);
    assert!(
        h.draws().iter().any(|d| matches!(d, HorizonDraw::Node(k)
            if k.distance_studs(there.pos_world) < level_far_end_studs(k.level - 1))),
        "some ground is drawn coarser than its distance asks, for now"
    );
    let wanted: Vec<NodeKey> = h.wanted().collect();
    assert!(
        wanted.windows(2).all(|w| w[0].level >= w[1].level),
        "coarsest first"
    );
    h.build_wanted_now();
    select(&mut h, &there, 65_536.0);
    assert!(h.is_settled());
    assert_no_overlap(h.draws());
    assert_columns_whole(h.draws());
}

/// The slow flight that showed the bug: 1,400 studs up, flying −z at 150
/// studs/s (2.5 studs a frame) with nodes arriving a few per frame, as in
/// the window. At no frame may a column be drawn at two levels.
///
/// The builds run on a one-thread rayon pool that this test drives itself:
/// after each frame's requests it runs exactly one pending build job (up to
/// `NODES_PER_JOB` nodes of one node column), so the same nodes arrive at
/// the same frames on any machine, and the rest stay in flight. (Flying
/// 225 studs from a settled view, 176 nodes arrive in 17 frames, and builds
/// are still in flight after 11.)
#[test]
fn a_flight_with_nodes_streaming_in_never_stacks_two_levels_in_a_column() {
    /// Build jobs run between two frames.
    const JOBS_PER_FRAME: usize = 1;
    /// Frames with arrivals, and with builds left in flight, at least.
    const MIN_FRAMES_WITH_ARRIVALS: u32 = 15;
    const MIN_FRAMES_WITH_BUILDS_LEFT: u32 = 10;
    const FRAMES: u32 = 90;
    let mut h = big_world();
    let start = DVec3::new(CENTRE, 1400.0, CENTRE);
    let camera = |frame: u32| {
        Camera::new(
            start - DVec3::new(0.0, 0.0, 2.5 * f64::from(frame)),
            0.0,
            -8.0,
        )
    };
    select(&mut h, &camera(0), 16_384.0);
    h.build_wanted_now();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool");
    // Frames in which built nodes arrived, and in which some requested
    // builds were still in flight after the arrivals (the selection of the
    // next frame then falls back to ancestors for them).
    let (mut frames_with_arrivals, mut frames_with_builds_left) = (0u32, 0u32);
    let mut arrived = 0usize;
    pool.install(|| {
        for frame in 1..=FRAMES {
            select(&mut h, &camera(frame), 16_384.0);
            assert_no_overlap(h.draws());
            assert_columns_whole(h.draws());
            h.dispatch();
            for _ in 0..JOBS_PER_FRAME {
                // This thread is the pool's only worker: each call runs one
                // pending build job here, or finds none.
                if rayon::yield_now() != Some(rayon::Yield::Executed) {
                    break;
                }
            }
            let accepted = h.receive();
            arrived += accepted;
            frames_with_arrivals += u32::from(accepted > 0);
            frames_with_builds_left += u32::from(h.in_flight() > 0);
        }
        // Run what is left, so no job outlives the pool.
        while rayon::yield_now() == Some(rayon::Yield::Executed) {}
    });
    eprintln!(
        "  {arrived} nodes arrived in {frames_with_arrivals} of {FRAMES} frames; \
         builds left in flight after {frames_with_builds_left} frames"
    );
    assert!(
        frames_with_arrivals >= MIN_FRAMES_WITH_ARRIVALS,
        "nodes arrived in only {frames_with_arrivals} of {FRAMES} frames of the flight"
    );
    assert!(
        frames_with_builds_left >= MIN_FRAMES_WITH_BUILDS_LEFT,
        "builds were left in flight in only {frames_with_builds_left} of {FRAMES} frames"
    );
}

/// Fills a limestone pillar 100 cells wide and 300 tall into `grid`, 20 km
/// (5,000 cells) ahead of the centre along −z; returns its centre cell
/// column `(x, z)`.
fn add_pillar(grid: &mut Grid) -> (i32, i32) {
    let x = (CENTRE / 4.0) as i32;
    let z = x - 5000;
    let pillar = CellBox::new(
        IVec3::new(x - 50, 20, z - 50),
        IVec3::new(x + 50, 320, z + 50),
    );
    grid.edit_region(pillar, |_, _| Cell::full(Material::LIMESTONE))
        .unwrap();
    (x, z)
}

#[test]
fn an_edit_rebuilds_every_level_that_samples_it() {
    let mut h = big_world();
    let camera = Camera::new(DVec3::new(CENTRE, 2500.0, CENTRE), 0.0, -8.0);
    select(&mut h, &camera, 65_536.0);
    h.build_wanted_now();
    // A 100-cell pillar 20 km ahead, in a grid holding just its cells.
    let mut grid = Grid::new();
    h.note_grid_changes(&grid);
    let (x, z) = add_pillar(&mut grid);
    h.note_grid_changes(&grid);
    assert_eq!(h.edited_columns(), 16, "4 × 4 chunk columns summarised");
    let pillar_node =
        |level: u8| NodeKey::containing_chunk(level, ChunkCoord::new(x >> 5, 0, z >> 5));
    let before: Vec<_> = (FIRST_NODE_LEVEL..=MAX_NODE_LEVEL)
        .map(|l| h.mesh(pillar_node(l)).cloned())
        .collect();
    select(&mut h, &camera, 65_536.0);
    assert!(
        h.wanted_count() > 0,
        "the drawn node under the pillar is rebuilt"
    );
    h.build_wanted_now();
    select(&mut h, &camera, 65_536.0);
    // The node drawn at 20 km (level 6) now reaches the pillar's top.
    let k = pillar_node(6);
    assert!(h.draws().contains(&HorizonDraw::Node(k)), "{k:?} is drawn");
    let top = |m: &strata::mesh::ChunkMesh| {
        m.positions[..m.skirt_start_vertex as usize]
            .iter()
            .fold(f32::NEG_INFINITY, |a, p| a.max(p.y))
    };
    let old_top = before[(6 - FIRST_NODE_LEVEL) as usize]
        .as_deref()
        .map_or(0.0, top);
    let new_top = top(h.mesh(k).expect("built"));
    assert!(new_top > old_top + 400.0, "{old_top} → {new_top} studs");
}

#[test]
fn a_frame_of_selection_allocates_nothing() {
    let mut h = big_world();
    let mut camera = Camera::new(DVec3::new(CENTRE, 2500.0, CENTRE), 0.0, -8.0);
    select(&mut h, &camera, 65_536.0);
    h.build_wanted_now();
    select(&mut h, &camera, 65_536.0);
    // Small moves keep the node set; the buffers have grown already.
    ALLOCATIONS.store(0, Ordering::Relaxed);
    COUNT_HERE.with(|c| c.set(true));
    for i in 0..50 {
        camera.pos_world.x += 0.5 * f64::from(i % 2);
        camera.yaw_deg += 0.01;
        select(&mut h, &camera, 65_536.0);
    }
    COUNT_HERE.with(|c| c.set(false));
    assert_eq!(ALLOCATIONS.load(Ordering::Relaxed), 0);
    assert!(h.draws().len() > 100);
}

#[test]
fn a_reopened_worlds_stored_edits_show_from_afar_before_their_columns_load() {
    // The pillar of the edit test, stored as a reopened world's edits are.
    let mut grid = Grid::new();
    let (x, z) = add_pillar(&mut grid);
    let store = Arc::new(strata::terrain::streaming::column_source::MemoryEditStore::default());
    let mut columns: Vec<_> = grid
        .chunks()
        .map(|(c, _)| strata::terrain::ColumnCoord::of(c))
        .collect();
    columns.sort_by_key(|c| (c.x, c.z));
    columns.dedup();
    for &c in &columns {
        use strata::terrain::streaming::column_source::EditStore;
        store.store_edited(c, &grid.column_chunks(c)).unwrap();
    }
    let mut h = big_world();
    h.summarise_store(store);
    let start = std::time::Instant::now();
    while h.edited_columns() < columns.len() {
        assert!(start.elapsed().as_secs() < 30, "summaries never came");
        h.receive();
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let camera = Camera::new(DVec3::new(CENTRE, 2500.0, CENTRE), 0.0, -8.0);
    select(&mut h, &camera, 65_536.0);
    h.build_wanted_now();
    select(&mut h, &camera, 65_536.0);
    let k = NodeKey::containing_chunk(6, ChunkCoord::new(x >> 5, 0, z >> 5));
    let mesh = h.mesh(k).expect("the node under the pillar is built");
    let top = mesh.positions[..mesh.skirt_start_vertex as usize]
        .iter()
        .fold(f32::NEG_INFINITY, |a, p| a.max(p.y));
    assert!(top > 1000.0, "the pillar (1,280 studs) shows: top {top}");
}
