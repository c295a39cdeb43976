//! Background meshing and budgeted, crack-free publication (spec §3, §7, §8).
//!
//! ```text
//!  grid edits ──changes_since──▶ requests (serial per chunk; one edit batch,
//!        ▲                        with an epoch, per frame's edits)
//!        │                              │ edits first, nearest first,
//!        │                              │ batches of ≤ 32 chunks / ~6 ms
//!        │                              ▼
//!   main thread ◀── bounded channel ◀── rayon workers mesh selective snapshots
//!        │                              (items a better result made moot are skipped)
//!        └─▶ each frame: keep useful results, choose what may show together
//!            (publication.rs), upload at most 32 and stop after 2 ms, and
//!            make each fully uploaded component visible in one step.
//! ```
//!
//! Why batches and epochs: an edit near a chunk border changes the surface on
//! both sides. If one side showed it before the other, the border would crack
//! for a frame, so each frame's edits become visible atomically over the
//! chunks they dirtied (see [`super::publication`]). The old meshes stay drawn
//! until then, so nothing ever disappears.
//!
//! Why serials: workers finish in any order. A result never replaces a
//! better one: it must be newer content (epoch), a real level over a preview,
//! or answer a newer request — an older job can never overwrite a newer edit.
//!
//! Previews: when the edited chunks' full-detail work queued ahead would take
//! longer than [`PREVIEW_BACKLOG_MS`], each edited chunk is first meshed two
//! levels coarser (editor-only; skirts keep it hole-free against its
//! neighbours) and replaced by its own level as soon as that is ready.
//!
//! The state machine is plain Rust; the GPU side is reached through
//! [`ChunkUploader`], and time through an injectable clock, so every rule is
//! tested deterministically.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use glam::DVec3;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::mesh::water::WaterMesh;
use crate::mesh::{ChunkMesh, MeshStyle};
use crate::terrain::storage::coords::{CHUNK_SIZE_STUDS, ChunkCoord, ColumnCoord};
use crate::terrain::storage::grid::{Changes, Grid};

use super::invalidation::{chunks_reading_at_levels, columns_reading};
use super::lod::LEVEL_COUNT;
use super::publication::{Candidate, Component, EditBatch, ResultKey, choose_components};
use super::stats::PipelineStats;
use super::world_meshes::{WorldMeshes, mesh_styled, mesh_water_one};

/// Most chunks one worker batch meshes.
pub const MAX_BATCH_CHUNKS: usize = 32;
/// Estimated meshing time after which a worker batch takes no further chunk, ms.
pub const BATCH_BUDGET_MS: f64 = 6.0;
/// Most results uploaded (staged) in one frame.
pub const MAX_RESULTS_PER_FRAME: usize = 32;
/// Upload time after which a frame starts no further upload.
pub const UPLOAD_BUDGET: Duration = Duration::from_millis(2);
/// Capacity of the worker → main-thread result channel.
pub const RESULT_CHANNEL_CAPACITY: usize = 512;
/// Queued full-detail work on edited chunks (per worker thread) above which
/// edited chunks are first meshed as coarser previews, ms.
pub const PREVIEW_BACKLOG_MS: f64 = 40.0;
/// Levels a preview is coarser than the chunk's requested level.
pub const PREVIEW_LEVEL_STEP: u8 = 2;
/// Most results one chunk holds while waiting to be shown.
pub const MAX_CANDIDATES_PER_CHUNK: usize = 4;
/// Starting estimates of one chunk's meshing time per level, ms (refined
/// from measured jobs as the session runs).
const INITIAL_COST_MS: [f64; LEVEL_COUNT] = [3.0, 0.8, 0.25, 0.08];

/// One chunk of a worker batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobItem {
    /// The chunk to mesh.
    pub coord: ChunkCoord,
    /// The request serial the result answers.
    pub serial: u64,
    /// Epoch of the newest edit batch of the chunk when the job was taken:
    /// the snapshot shows exactly the edits up to it.
    pub epoch: u64,
    /// Level of detail (0 = full detail; coarser levels come with LOD).
    pub level: u8,
    /// A coarser editor-only preview (replaced by `level` of the request later).
    pub preview: bool,
    /// Also re-mesh the chunk's water (an edit dirtied it; level-only
    /// requests reuse the water mesh).
    pub water: bool,
}

impl JobItem {
    /// The rank its result will have.
    pub fn key(&self) -> ResultKey {
        ResultKey {
            epoch: self.epoch,
            full: !self.preview,
            serial: self.serial,
        }
    }
}

/// A batch of chunks to mesh from a selective snapshot of the grid.
#[derive(Debug)]
pub struct MeshJob {
    /// At most [`MAX_BATCH_CHUNKS`] chunks.
    pub items: Vec<JobItem>,
    /// The requested chunks and their neighbours (in the low-poly style,
    /// whole chunk columns), sharing storage with the live grid.
    pub snapshot: Grid,
    /// The mesher to run.
    pub style: MeshStyle,
}

impl MeshJob {
    /// Meshes every item (on the calling thread).
    pub fn run(&self) -> Vec<MeshResult> {
        self.run_useful(|_| true)
    }

    /// Meshes the items for which `is_useful` holds, skipping those a better
    /// result already made moot (they would be dropped on arrival).
    pub fn run_useful(&self, is_useful: impl Fn(&JobItem) -> bool) -> Vec<MeshResult> {
        self.items
            .iter()
            .filter(|item| is_useful(item))
            .map(|item| self.mesh_item(item))
            .collect()
    }

    /// Meshes one item of this job from its snapshot.
    pub fn mesh_item(&self, item: &JobItem) -> MeshResult {
        let start = Instant::now();
        let mesh = Arc::new(mesh_styled(
            &self.snapshot,
            item.coord,
            item.level,
            self.style,
        ));
        let water = item
            .water
            .then(|| Arc::new(mesh_water_one(&self.snapshot, item.coord)));
        MeshResult {
            coord: item.coord,
            serial: item.serial,
            epoch: item.epoch,
            level: item.level,
            preview: item.preview,
            mesh,
            water,
            mesh_ms: start.elapsed().as_secs_f64() * 1e3,
        }
    }
}

/// A finished chunk mesh (possibly empty) for one request serial.
#[derive(Clone, Debug)]
pub struct MeshResult {
    /// The chunk.
    pub coord: ChunkCoord,
    /// Serial of the request this answers.
    pub serial: u64,
    /// Edit epoch its snapshot shows (see [`JobItem::epoch`]).
    pub epoch: u64,
    /// Level of detail it was meshed at.
    pub level: u8,
    /// Whether it is a coarser editor-only preview.
    pub preview: bool,
    /// The mesh; empty when the chunk owns no surface.
    pub mesh: Arc<ChunkMesh>,
    /// The chunk's new water surface, or `None` when the request kept it.
    pub water: Option<Arc<WaterMesh>>,
    /// Worker time spent meshing it, ms.
    pub mesh_ms: f64,
}

impl MeshResult {
    /// Its rank among the chunk's results.
    pub fn key(&self) -> ResultKey {
        ResultKey {
            epoch: self.epoch,
            full: !self.preview,
            serial: self.serial,
        }
    }
}

/// The GPU side of publication.
pub trait ChunkUploader {
    /// Uploads `mesh` (meshed at `level`) for `coord` without drawing it yet
    /// (an empty mesh stages the chunk's removal). Replaces anything staged
    /// earlier for `coord`.
    fn stage(&mut self, coord: ChunkCoord, level: u8, mesh: &Arc<ChunkMesh>);
    /// Makes the staged meshes of `coords` the drawn ones, all at once.
    fn promote(&mut self, coords: &[ChunkCoord]);
    /// Drops everything drawn or staged for `coords` (they left the retention range).
    fn evict(&mut self, coords: &[ChunkCoord]);
    /// Uploads the new water surface of `coord` (empty: no water) without
    /// drawing it yet; [`ChunkUploader::promote`] shows it with the chunk's mesh.
    fn stage_water(&mut self, coord: ChunkCoord, water: &Arc<WaterMesh>) {
        let _ = (coord, water);
    }
    /// Uploads the nodes the horizon built or dropped and takes its draw
    /// list (spec §13); uploaders without a GPU ignore it.
    fn sync_horizon(&mut self, horizon: &mut super::horizon::Horizon) {
        let _ = horizon;
    }
}

/// A borrowed uploader uploads (lets a caller hand out `&mut` to a boxed one).
impl<U: ChunkUploader + ?Sized> ChunkUploader for &mut U {
    fn stage(&mut self, coord: ChunkCoord, level: u8, mesh: &Arc<ChunkMesh>) {
        (**self).stage(coord, level, mesh);
    }
    fn promote(&mut self, coords: &[ChunkCoord]) {
        (**self).promote(coords);
    }
    fn evict(&mut self, coords: &[ChunkCoord]) {
        (**self).evict(coords);
    }
    fn stage_water(&mut self, coord: ChunkCoord, water: &Arc<WaterMesh>) {
        (**self).stage_water(coord, water);
    }
    fn sync_horizon(&mut self, horizon: &mut super::horizon::Horizon) {
        (**self).sync_horizon(horizon);
    }
}

/// What one [`MeshPipeline::publish`] call did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PublishReport {
    /// Results uploaded (staged) this frame.
    pub staged: usize,
    /// Wall time spent in uploads, ms.
    pub upload_ms: f64,
    /// Chunks made visible this frame.
    pub promoted_chunks: usize,
    /// Components (sets shown together) made visible this frame.
    pub promoted_groups: usize,
}

/// True when `cand` is exactly what `meshes` shows for `coord` (same level,
/// mesh and water), so showing it needs no upload.
fn shows_already(meshes: &WorldMeshes, coord: ChunkCoord, cand: &Candidate) -> bool {
    if meshes.level_of(coord) != Some(cand.level) {
        return false;
    }
    let mesh_same = match meshes.get(coord) {
        Some(m) => **m == *cand.mesh,
        None => cand.mesh.triangle_count() == 0,
    };
    let water_same = match (&cand.water, meshes.water_of(coord)) {
        (None, _) => true,
        (Some(w), Some(shown)) => **shown == **w,
        (Some(w), None) => w.triangle_count() == 0,
    };
    mesh_same && water_same
}

/// What a worker reports for one item.
#[derive(Debug)]
enum WorkerMessage {
    /// The item was meshed.
    Meshed(MeshResult),
    /// The item was skipped (a better result already existed).
    Skipped(JobItem),
}

/// What workers may skip, per pending chunk (shared with them).
#[derive(Clone, Copy, Debug)]
struct SkipRule {
    /// Results of requests older than this belong to finished work.
    min_serial: u64,
    /// Best result shown or held.
    best: ResultKey,
}

impl SkipRule {
    fn is_useful(&self, key: ResultKey) -> bool {
        key.serial >= self.min_serial && key > self.best
    }
}

#[derive(Debug)]
struct ChunkWork {
    /// Serial of the newest request.
    serial: u64,
    /// Results of older serials are moot (they predate this work).
    min_serial: u64,
    /// Requested level.
    level: u8,
    /// Serial of the last full-level dispatch.
    dispatched: Option<u64>,
    /// A full-level job of this chunk is on the workers: the next one waits
    /// for it, so edits made meanwhile coalesce into one job.
    full_running: bool,
    /// Epoch of the last preview dispatch (0: none).
    preview_epoch: u64,
    /// Epoch of the newest edit batch touching the chunk (0: none).
    edit_epoch: u64,
    /// The water must be re-meshed (an edit touched it); kept by later
    /// level-only requests until a result with water that shows the newest
    /// edit is shown.
    water_dirty: bool,
    /// Rank of what is shown (default: whatever was there before this work).
    shown: ResultKey,
    /// Results waiting to be shown, ascending by key.
    candidates: Vec<Candidate>,
    /// Key of the candidate sitting in the uploader's staging slot, if any.
    gpu_staged: Option<ResultKey>,
    /// Part of a component being uploaded.
    busy: bool,
}

impl ChunkWork {
    fn best_key(&self) -> ResultKey {
        self.candidates
            .last()
            .map_or(self.shown, |c| c.key.max(self.shown))
    }

    /// The chunk has an edit it does not show yet.
    fn edit_pending(&self) -> bool {
        self.edit_epoch > self.shown.epoch
    }
}

/// A component being uploaded: chunks and the candidate each will show.
#[derive(Debug)]
struct Staging {
    members: Vec<(ChunkCoord, Candidate)>,
    next: usize,
}

/// Requests, workers and publication of chunk meshes.
#[derive(Debug)]
pub struct MeshPipeline {
    reader: Option<(u64, u64)>,
    work: FxHashMap<ChunkCoord, ChunkWork>,
    batches: BTreeMap<u64, EditBatch>,
    staging: VecDeque<Staging>,
    /// Results arrived since the last choice of components.
    choice_stale: bool,
    next_serial: u64,
    epoch: u64,
    tx: SyncSender<WorkerMessage>,
    rx: Receiver<WorkerMessage>,
    in_flight: Arc<AtomicUsize>,
    skip_rules: Arc<Mutex<FxHashMap<ChunkCoord, SkipRule>>>,
    /// Items workers skipped because a better result was already there.
    skipped_items: Arc<AtomicUsize>,
    cost_ms: [f64; LEVEL_COUNT],
    max_in_flight_batches: usize,
    /// Chunks whose uploader staging slot may hold a mesh staged before a
    /// reset: their next result is always uploaded (never skipped as
    /// unchanged), so a promotion cannot show the leftover.
    stale_slots: FxHashSet<ChunkCoord>,
    /// Input times of the edits made since the last sync (see
    /// [`MeshPipeline::note_edit_times`]).
    noted_edit_times: Vec<Instant>,
    /// The mesher every job runs.
    style: MeshStyle,
    /// Statistics over the session.
    pub stats: PipelineStats,
}

impl Default for MeshPipeline {
    fn default() -> Self {
        Self::new()
    }
}

impl MeshPipeline {
    /// An idle pipeline that has read nothing yet (its first
    /// [`MeshPipeline::sync_grid`] requests everything).
    pub fn new() -> MeshPipeline {
        let (tx, rx) = sync_channel(RESULT_CHANNEL_CAPACITY);
        MeshPipeline {
            reader: None,
            work: FxHashMap::default(),
            batches: BTreeMap::new(),
            staging: VecDeque::new(),
            choice_stale: false,
            next_serial: 1,
            epoch: 0,
            tx,
            rx,
            in_flight: Arc::new(AtomicUsize::new(0)),
            skip_rules: Arc::new(Mutex::new(FxHashMap::default())),
            skipped_items: Arc::new(AtomicUsize::new(0)),
            cost_ms: INITIAL_COST_MS,
            max_in_flight_batches: (rayon::current_num_threads() * 2).max(2),
            stale_slots: FxHashSet::default(),
            noted_edit_times: Vec::new(),
            style: MeshStyle::Smooth,
            stats: PipelineStats::default(),
        }
    }

    /// The mesher jobs run.
    pub fn style(&self) -> MeshStyle {
        self.style
    }

    /// Switches the mesher: the next [`MeshPipeline::sync_grid`] requests
    /// every chunk again (shown meshes stay up until their replacements are
    /// published; results of the old style still in flight are stale).
    pub fn set_style(&mut self, style: MeshStyle) {
        if style != self.style {
            self.style = style;
            self.reader = None;
        }
    }

    /// Records that the current meshes already reflect `grid` as it is now
    /// (e.g. after meshing the whole world synchronously at start-up).
    pub fn mark_synced(&mut self, grid: &Grid) {
        self.reader = Some((grid.generation(), grid.revision()));
    }

    /// Chunks with a request not yet fulfilled.
    pub fn queue_len(&self) -> usize {
        self.work.len()
    }

    /// Worker batches running or queued on the thread pool.
    pub fn in_flight_batches(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// True when nothing is requested, running or waiting to be published.
    pub fn is_idle(&self) -> bool {
        self.work.is_empty() && self.staging.is_empty() && self.in_flight_batches() == 0
    }

    /// Edits made but not yet visible.
    pub fn pending_edits(&self) -> usize {
        self.batches
            .values()
            .filter(|b| !b.unseen.is_empty())
            .map(|b| b.edit_times.len())
            .sum()
    }

    /// The level `coord` is requested at, if it has a pending request.
    pub fn pending_level(&self, coord: ChunkCoord) -> Option<u8> {
        self.work.get(&coord).map(|w| w.level)
    }

    /// The current request serial of `coord`, if it has one.
    pub fn serial_of(&self, coord: ChunkCoord) -> Option<u64> {
        self.work.get(&coord).map(|w| w.serial)
    }

    /// Items workers skipped so far because a better result already existed.
    pub fn skipped_items(&self) -> usize {
        self.skipped_items.load(Ordering::Acquire)
    }

    fn lock_rules(&self) -> std::sync::MutexGuard<'_, FxHashMap<ChunkCoord, SkipRule>> {
        self.skip_rules
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Cancels every request whose chunk a streaming `grid` can no longer
    /// mesh (a neighbouring column was evicted); returns how many.
    pub fn cancel_unmeshable(&mut self, grid: &Grid) -> usize {
        let gone: Vec<ChunkCoord> = self
            .work
            .keys()
            .copied()
            .filter(|c| !grid.neighbourhood_resident(*c))
            .collect();
        for &c in &gone {
            self.cancel(c);
        }
        gone.len()
    }

    /// Forgets the request of `coord` (e.g. it left the retention range); the
    /// edits waiting for it no longer do, and late results are dropped.
    pub fn cancel(&mut self, coord: ChunkCoord) {
        if self.work.remove(&coord).is_none() {
            return;
        }
        self.lock_rules().remove(&coord);
        for staging in &mut self.staging {
            if let Some(i) = staging.members.iter().position(|(c, _)| *c == coord) {
                staging.members.remove(i);
                if staging.next > i {
                    staging.next -= 1;
                }
            }
        }
        self.staging.retain(|s| !s.members.is_empty());
        let now = Instant::now();
        let mut done: Vec<u64> = Vec::new();
        for batch in self.batches.values_mut() {
            let was_unseen = batch.unseen.remove(&coord);
            let was_coarse = batch.coarse.remove(&coord);
            if was_unseen && batch.unseen.is_empty() && batch.shown_any {
                self.stats.record_published(&batch.edit_times, now);
            }
            if was_coarse && batch.coarse.is_empty() {
                if batch.shown_any {
                    self.stats.record_full_detail(&batch.edit_times, now);
                }
                done.push(batch.epoch);
            }
        }
        for e in done {
            self.batches.remove(&e);
        }
        self.choice_stale = true;
    }

    /// Drops every request, held result and tracked edit (the grid was
    /// replaced); results still on their way are dropped when they arrive.
    fn reset_requests(&mut self) {
        let staged = self
            .work
            .iter()
            .filter(|(_, w)| w.gpu_staged.is_some() || w.busy)
            .map(|(c, _)| *c);
        self.stale_slots.extend(staged);
        self.work.clear();
        self.batches.clear();
        self.staging.clear();
        self.lock_rules().clear();
        self.choice_stale = false;
    }

    /// Records when the edits made since the last sync were input (one time
    /// per edit): the next [`MeshPipeline::sync_grid`] stamps its batch with
    /// them instead of its own `now`, so each edit gets its own latency from
    /// its input (a replay applies several inputs in one long frame).
    pub fn note_edit_times(&mut self, times: impl IntoIterator<Item = Instant>) {
        self.noted_edit_times.extend(times);
    }

    /// Reads what changed in `grid` since the last call and requests new
    /// meshes, each chunk at its current level (pending request, else shown
    /// mesh in `meshes`, else 0): for an incremental change, the chunks whose
    /// padded reads at their level the changed extents touch (spec §8) — plus
    /// all 26 neighbours of a removed chunk — as one edit batch stamped with
    /// `now`; on a full refresh, every meshing candidate. Chunks for which
    /// `keep` is false (outside the preload range) are not requested, and
    /// their shown mesh, now outdated, is discarded from `meshes`. Returns the
    /// number of chunks requested.
    pub fn sync_grid(
        &mut self,
        grid: &Grid,
        meshes: &mut WorldMeshes,
        now: Instant,
        keep: impl Fn(ChunkCoord) -> bool,
    ) -> usize {
        let changes = match self.reader {
            Some((generation, revision)) => grid.changes_since(generation, revision),
            None => Changes::FullRefresh,
        };
        let since = self.reader.map_or(0, |(_, r)| r);
        self.reader = Some((grid.generation(), grid.revision()));
        let mut set: FxHashSet<ChunkCoord> = FxHashSet::default();
        let full = match changes {
            Changes::FullRefresh => {
                self.reset_requests();
                set.extend(grid.meshing_candidates());
                true
            }
            Changes::Incremental { changed, removed } => {
                let level_of = |c: ChunkCoord| {
                    self.work
                        .get(&c)
                        .map(|w| w.level)
                        .or_else(|| meshes.level_of(c))
                        .unwrap_or(0)
                };
                let mut columns: FxHashSet<ColumnCoord> = FxHashSet::default();
                for coord in changed {
                    let extent = grid.changed_extent_since(coord, since);
                    set.extend(chunks_reading_at_levels(&extent, level_of));
                    columns.extend(columns_reading(&extent));
                }
                for coord in removed {
                    set.insert(coord);
                    set.extend(coord.neighbours());
                    columns.extend(columns_reading(&coord.cell_box()));
                }
                if self.style.is_low_poly() {
                    // A column's heightfield feeds every chunk stacked in it
                    // and the walls of its neighbours.
                    set.extend(grid.chunks_in_columns(&columns));
                }
                false
            }
        };
        let mut coords: Vec<(ChunkCoord, u8)> = Vec::with_capacity(set.len());
        let mut outside: Vec<ChunkCoord> = Vec::new();
        for coord in set {
            if keep(coord) {
                let level = self
                    .work
                    .get(&coord)
                    .map(|w| w.level)
                    .or_else(|| meshes.level_of(coord))
                    .unwrap_or(0);
                coords.push((coord, level));
            } else {
                outside.push(coord);
            }
        }
        for coord in outside {
            meshes.evict(coord);
        }
        coords.sort_by_key(|(c, _)| (c.0.z, c.0.y, c.0.x));
        let n = coords.len();
        let noted = std::mem::take(&mut self.noted_edit_times);
        if full {
            self.request_levels(coords, None, true);
        } else if n > 0 {
            self.request_levels(coords, Some(now), true);
            if !noted.is_empty()
                && let Some(batch) = self.batches.get_mut(&self.epoch)
            {
                batch.edit_times = noted;
            }
        }
        n
    }

    /// Requests new meshes of `coords` at `level` (see
    /// [`MeshPipeline::request_levels`]).
    pub fn request(
        &mut self,
        coords: impl IntoIterator<Item = ChunkCoord>,
        level: u8,
        edit_time: Option<Instant>,
    ) {
        let water = edit_time.is_some();
        self.request_levels(coords.into_iter().map(|c| (c, level)), edit_time, water);
    }

    /// Requests new meshes of chunks, each at its own level. Each chunk gets
    /// a fresh serial. With `edit_time` (when the change was made) the chunks
    /// form one edit batch with a new epoch: it becomes visible atomically
    /// and feeds the edit-to-visible and edit-to-full-detail latencies.
    /// Without it (a level change) no batch is made. `water` marks the
    /// chunks' water as changed; a request without it keeps water work an
    /// earlier, still pending request queued.
    pub fn request_levels(
        &mut self,
        items: impl IntoIterator<Item = (ChunkCoord, u8)>,
        edit_time: Option<Instant>,
        water: bool,
    ) {
        let epoch = match edit_time {
            Some(_) => {
                self.epoch += 1;
                Some(self.epoch)
            }
            None => None,
        };
        let mut members: FxHashSet<ChunkCoord> = FxHashSet::default();
        let mut rules = self
            .skip_rules
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for (coord, level) in items {
            let serial = self.next_serial;
            self.next_serial += 1;
            let work = self.work.entry(coord).or_insert_with(|| ChunkWork {
                serial,
                min_serial: serial,
                level,
                dispatched: None,
                full_running: false,
                preview_epoch: 0,
                edit_epoch: 0,
                water_dirty: false,
                shown: ResultKey::default(),
                candidates: Vec::new(),
                gpu_staged: None,
                busy: false,
            });
            work.serial = serial;
            work.level = level;
            work.water_dirty |= water;
            if let Some(e) = epoch {
                work.edit_epoch = e;
            }
            rules.insert(
                coord,
                SkipRule {
                    min_serial: work.min_serial,
                    best: work.best_key(),
                },
            );
            members.insert(coord);
        }
        drop(rules);
        if let (Some(e), Some(t)) = (epoch, edit_time)
            && !members.is_empty()
        {
            self.batches.insert(e, EditBatch::new(e, &members, vec![t]));
        }
        self.choice_stale = true;
    }

    /// Estimated full-detail work queued on edited chunks, per worker thread, ms.
    fn edit_backlog_ms(&self) -> f64 {
        let queued: f64 = self
            .work
            .values()
            .filter(|w| w.edit_pending() && w.dispatched != Some(w.serial) && !w.full_running)
            .map(|w| self.cost_ms[usize::from(w.level).min(LEVEL_COUNT - 1)])
            .sum();
        let running = self.in_flight_batches() as f64 * BATCH_BUDGET_MS;
        (queued + running) / rayon::current_num_threads().max(1) as f64
    }

    /// Takes up to `max_batches` batches of work not yet dispatched, each
    /// with a selective snapshot of `grid`, and marks it dispatched: previews
    /// of edited chunks first (only while the edit backlog exceeds
    /// [`PREVIEW_BACKLOG_MS`]), then edited chunks, then other requests
    /// (level changes, refreshes), each class nearest to `camera_pos_world`
    /// first. Takes nothing while `grid` has changes this pipeline has not
    /// read (a snapshot must show exactly the edits its epoch names).
    pub fn take_jobs(
        &mut self,
        grid: &Grid,
        camera_pos_world: DVec3,
        max_batches: usize,
    ) -> Vec<MeshJob> {
        self.take_jobs_ranked(grid, camera_pos_world, max_batches, &|_| true)
    }

    /// [`MeshPipeline::take_jobs`], with chunks for which `is_shown` is
    /// false (nothing drawn there at any level: a hole) meshed before level
    /// changes of chunks that show something, so a moving camera never
    /// leaves new ground waiting behind refinements.
    pub fn take_jobs_ranked(
        &mut self,
        grid: &Grid,
        camera_pos_world: DVec3,
        max_batches: usize,
        is_shown: &dyn Fn(ChunkCoord) -> bool,
    ) -> Vec<MeshJob> {
        if max_batches == 0 || self.reader != Some((grid.generation(), grid.revision())) {
            return Vec::new();
        }
        let previews = self.edit_backlog_ms() > PREVIEW_BACKLOG_MS;
        let half = CHUNK_SIZE_STUDS as f64 * 0.5;
        // (class, distance², coord, preview)
        let mut todo: Vec<(u8, f64, ChunkCoord, bool)> = Vec::new();
        for (&coord, w) in &self.work {
            // A streaming grid meshes a chunk only once its neighbours are in.
            if !grid.neighbourhood_resident(coord) {
                continue;
            }
            let centre = coord.origin_world() + DVec3::splat(half);
            let d2 = centre.distance_squared(camera_pos_world);
            let full_due = w.dispatched != Some(w.serial) && !w.full_running;
            if previews
                && full_due
                && w.edit_pending()
                && usize::from(w.level) + 1 < LEVEL_COUNT
                && w.preview_epoch < w.edit_epoch
                && w.best_key().epoch < w.edit_epoch
            {
                todo.push((0, d2, coord, true));
            }
            if full_due {
                let class = if w.edit_pending() {
                    1
                } else if !is_shown(coord) {
                    2
                } else {
                    3
                };
                todo.push((class, d2, coord, false));
            }
        }
        todo.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| a.1.total_cmp(&b.1))
                .then_with(|| (a.2.0.z, a.2.0.y, a.2.0.x).cmp(&(b.2.0.z, b.2.0.y, b.2.0.x)))
        });
        // Spread small workloads over the worker threads (a single edit's
        // chunks would otherwise mesh one after another on one thread); large
        // ones fill batches up to the chunk and time limits.
        let threads = rayon::current_num_threads().max(1);
        let per_batch = todo.len().div_ceil(threads).clamp(1, MAX_BATCH_CHUNKS);
        let mut batches: Vec<Vec<JobItem>> = Vec::new();
        let mut current: Vec<JobItem> = Vec::new();
        let mut current_ms = 0.0;
        for (_, _, coord, preview) in todo {
            if current.len() >= per_batch || current_ms >= BATCH_BUDGET_MS {
                batches.push(std::mem::take(&mut current));
                current_ms = 0.0;
                if batches.len() >= max_batches {
                    break;
                }
            }
            let Some(w) = self.work.get_mut(&coord) else {
                continue;
            };
            let level = if preview {
                (w.level + PREVIEW_LEVEL_STEP).min(LEVEL_COUNT as u8 - 1)
            } else {
                w.level
            };
            if preview {
                w.preview_epoch = w.edit_epoch;
            } else {
                w.dispatched = Some(w.serial);
                w.full_running = true;
            }
            current_ms += self.cost_ms[usize::from(level)];
            current.push(JobItem {
                coord,
                serial: w.serial,
                epoch: w.edit_epoch,
                level,
                preview,
                water: w.water_dirty,
            });
        }
        if !current.is_empty() && batches.len() < max_batches {
            batches.push(current);
        }
        batches
            .into_iter()
            .map(|items| {
                let coords: Vec<ChunkCoord> = items.iter().map(|i| i.coord).collect();
                let snapshot = if self.style.is_low_poly() {
                    grid.snapshot_for_columns(&coords)
                } else {
                    grid.snapshot_for(&coords)
                };
                MeshJob {
                    items,
                    snapshot,
                    style: self.style,
                }
            })
            .collect()
    }

    /// Starts worker batches on the rayon pool (keeping at most a few batches
    /// per thread in flight); results arrive through the bounded channel.
    pub fn dispatch(&mut self, grid: &Grid, camera_pos_world: DVec3) {
        self.dispatch_ranked(grid, camera_pos_world, &|_| true);
    }

    /// [`MeshPipeline::dispatch`] with holes first (see
    /// [`MeshPipeline::take_jobs_ranked`]).
    pub fn dispatch_ranked(
        &mut self,
        grid: &Grid,
        camera_pos_world: DVec3,
        is_shown: &dyn Fn(ChunkCoord) -> bool,
    ) {
        let free = self
            .max_in_flight_batches
            .saturating_sub(self.in_flight_batches());
        for job in self.take_jobs_ranked(grid, camera_pos_world, free, is_shown) {
            let tx = self.tx.clone();
            let in_flight = Arc::clone(&self.in_flight);
            let rules = Arc::clone(&self.skip_rules);
            let skipped = Arc::clone(&self.skipped_items);
            in_flight.fetch_add(1, Ordering::AcqRel);
            rayon::spawn(move || {
                let is_useful = |item: &JobItem| {
                    let rules = rules.lock().unwrap_or_else(PoisonError::into_inner);
                    rules
                        .get(&item.coord)
                        .is_some_and(|r| r.is_useful(item.key()))
                };
                for item in &job.items {
                    let message = if is_useful(item) {
                        WorkerMessage::Meshed(job.mesh_item(item))
                    } else {
                        skipped.fetch_add(1, Ordering::AcqRel);
                        WorkerMessage::Skipped(*item)
                    };
                    // Blocks while the channel is full (bounded); a closed
                    // channel means the pipeline is gone and results are moot.
                    if tx.send(message).is_err() {
                        break;
                    }
                }
                in_flight.fetch_sub(1, Ordering::AcqRel);
            });
        }
    }

    /// Moves finished worker results from the channel into the pipeline.
    pub fn receive(&mut self) {
        while let Ok(message) = self.rx.try_recv() {
            match message {
                WorkerMessage::Meshed(result) => {
                    self.submit_result(result);
                }
                WorkerMessage::Skipped(item) => self.job_returned(item.coord, item.preview),
            }
        }
    }

    /// A job item of `coord` came back (meshed or skipped): a full-level one
    /// frees the chunk for its next full job.
    fn job_returned(&mut self, coord: ChunkCoord, preview: bool) {
        if !preview && let Some(w) = self.work.get_mut(&coord) {
            w.full_running = false;
        }
    }

    /// Keeps `result` when it can still be shown: its chunk is pending, it
    /// answers a request of the current work, and it beats what the chunk
    /// shows and every held result of the same content. Otherwise drops it
    /// (counted as stale). Returns whether it was kept.
    pub fn submit_result(&mut self, result: MeshResult) -> bool {
        self.job_returned(result.coord, result.preview);
        self.stats.meshed_results += 1;
        if result.preview {
            self.stats.preview_results += 1;
        }
        let level = usize::from(result.level).min(LEVEL_COUNT - 1);
        if result.mesh_ms.is_finite() && result.mesh_ms > 0.0 {
            self.cost_ms[level] = 0.8 * self.cost_ms[level] + 0.2 * result.mesh_ms;
        }
        let key = result.key();
        let Some(w) = self.work.get_mut(&result.coord) else {
            self.stats.stale_results += 1;
            return false;
        };
        let same_content_better = w
            .candidates
            .iter()
            .any(|c| c.key.epoch == key.epoch && c.key >= key);
        if key.serial < w.min_serial || key <= w.shown || same_content_better {
            self.stats.stale_results += 1;
            return false;
        }
        // Held results of the same content it beats are moot.
        w.candidates.retain(|c| c.key.epoch != key.epoch);
        let at = w.candidates.partition_point(|c| c.key < key);
        w.candidates.insert(
            at,
            Candidate {
                key,
                level: result.level,
                mesh: result.mesh,
                water: result.water,
            },
        );
        if w.candidates.len() > MAX_CANDIDATES_PER_CHUNK {
            w.candidates.remove(0);
        }
        let rule = SkipRule {
            min_serial: w.min_serial,
            best: w.best_key(),
        };
        self.lock_rules().insert(result.coord, rule);
        self.stats.accepted_results += 1;
        self.choice_stale = true;
        true
    }

    /// One frame of publication with the wall clock: see [`MeshPipeline::publish_with_clock`].
    pub fn publish(
        &mut self,
        uploader: &mut dyn ChunkUploader,
        meshes: &mut WorldMeshes,
    ) -> PublishReport {
        self.publish_with_clock(uploader, meshes, &mut Instant::now)
    }

    /// One frame of publication: chooses which held results may show
    /// together (when new ones arrived), uploads them component by component
    /// (at most [`MAX_RESULTS_PER_FRAME`], none once [`UPLOAD_BUDGET`] has
    /// elapsed, checked before each upload), makes each fully uploaded
    /// component visible at once, updating `meshes` (the CPU picking copy)
    /// in the same step, and with time to spare uploads the best held result
    /// of other chunks ahead of their turn. `clock` gives the current time.
    pub fn publish_with_clock(
        &mut self,
        uploader: &mut dyn ChunkUploader,
        meshes: &mut WorldMeshes,
        clock: &mut dyn FnMut() -> Instant,
    ) -> PublishReport {
        let start = clock();
        let mut report = PublishReport::default();
        if self.choice_stale {
            self.choice_stale = false;
            self.start_components();
        }
        let within_budget = |report: &PublishReport, clock: &mut dyn FnMut() -> Instant| {
            report.staged < MAX_RESULTS_PER_FRAME && clock().duration_since(start) < UPLOAD_BUDGET
        };
        // Upload components in order; show each one whose members are all up.
        while let Some(mut staging) = self.staging.pop_front() {
            while staging.next < staging.members.len() {
                let (coord, cand) = &staging.members[staging.next];
                let gpu_staged = self.work.get(coord).and_then(|w| w.gpu_staged);
                let already = gpu_staged == Some(cand.key);
                // A re-mesh that came out identical to what is drawn (a
                // neighbour whose samples the edit did not change) needs no
                // upload; promoting a chunk with nothing staged keeps it.
                if !already
                    && gpu_staged.is_none()
                    && !self.stale_slots.contains(coord)
                    && shows_already(meshes, *coord, cand)
                {
                    self.stats.unchanged_results += 1;
                } else if !already {
                    if !within_budget(&report, clock) {
                        break;
                    }
                    uploader.stage(*coord, cand.level, &cand.mesh);
                    if let Some(water) = &cand.water {
                        uploader.stage_water(*coord, water);
                    }
                    self.stale_slots.remove(coord);
                    if let Some(w) = self.work.get_mut(coord) {
                        w.gpu_staged = Some(cand.key);
                    }
                    report.staged += 1;
                }
                staging.next += 1;
            }
            if staging.next < staging.members.len() {
                self.staging.push_front(staging);
                break;
            }
            let now = clock();
            self.promote(staging, uploader, meshes, now, &mut report);
        }
        // Spare budget: upload ahead the best held result of idle chunks,
        // so their component needs no upload when it is chosen.
        if self.staging.is_empty() {
            let mut ahead: Vec<ChunkCoord> = self
                .work
                .iter()
                .filter(|(_, w)| {
                    !w.busy
                        && w.candidates
                            .last()
                            .is_some_and(|c| w.gpu_staged != Some(c.key))
                })
                .map(|(c, _)| *c)
                .collect();
            ahead.sort_by_key(|c| (c.0.z, c.0.y, c.0.x));
            for coord in ahead {
                if !within_budget(&report, clock) {
                    break;
                }
                let Some(w) = self.work.get_mut(&coord) else {
                    continue;
                };
                let Some(cand) = w.candidates.last() else {
                    continue;
                };
                if shows_already(meshes, coord, cand) {
                    continue;
                }
                self.stale_slots.remove(&coord);
                uploader.stage(coord, cand.level, &cand.mesh);
                if let Some(water) = &cand.water {
                    uploader.stage_water(coord, water);
                }
                w.gpu_staged = Some(cand.key);
                report.staged += 1;
            }
        }
        let end = clock();
        report.upload_ms = if report.staged > 0 {
            end.duration_since(start).as_secs_f64() * 1e3
        } else {
            0.0
        };
        self.stats.results_last_frame = report.staged;
        self.stats.upload_ms_last_frame = report.upload_ms;
        self.stats.max_results_per_frame = self.stats.max_results_per_frame.max(report.staged);
        if report.staged > 0 {
            self.stats.upload.push(report.upload_ms);
        }
        report
    }

    /// Chooses components from the held results of chunks not already being
    /// uploaded and queues them for upload.
    fn start_components(&mut self) {
        let busy: FxHashSet<ChunkCoord> = self
            .work
            .iter()
            .filter(|(_, w)| w.busy)
            .map(|(c, _)| *c)
            .collect();
        let candidates: FxHashMap<ChunkCoord, &[Candidate]> = self
            .work
            .iter()
            .filter(|(_, w)| !w.candidates.is_empty())
            .map(|(c, w)| (*c, w.candidates.as_slice()))
            .collect();
        let components: Vec<Component> = choose_components(
            self.batches.values().filter(|b| !b.unseen.is_empty()),
            &candidates,
            &busy,
        );
        drop(candidates);
        for component in components {
            let mut members = Vec::with_capacity(component.len());
            for (coord, i) in component {
                if let Some(w) = self.work.get_mut(&coord) {
                    w.busy = true;
                    members.push((coord, w.candidates[i].clone()));
                }
            }
            self.staging.push_back(Staging { members, next: 0 });
        }
    }

    /// Shows an uploaded component: promotes it on the GPU, updates the
    /// picking copy, the chunks' work and the edit batches it completes.
    fn promote(
        &mut self,
        done: Staging,
        uploader: &mut dyn ChunkUploader,
        meshes: &mut WorldMeshes,
        now: Instant,
        report: &mut PublishReport,
    ) {
        let coords: Vec<ChunkCoord> = done.members.iter().map(|(c, _)| *c).collect();
        uploader.promote(&coords);
        let mut finished: Vec<ChunkCoord> = Vec::new();
        for (coord, cand) in done.members {
            let Some(w) = self.work.get_mut(&coord) else {
                continue;
            };
            w.busy = false;
            w.gpu_staged = None;
            w.shown = cand.key;
            w.candidates.retain(|c| c.key > cand.key);
            if cand.water.is_some() && cand.key.epoch >= w.edit_epoch {
                w.water_dirty = false;
            }
            if cand.key.full && cand.key.serial == w.serial {
                finished.push(coord);
            }
            meshes.set_published(coord, cand.level, cand.mesh, cand.water);
            self.mark_shown(coord, cand.key, now);
        }
        {
            let mut rules = self.lock_rules();
            for coord in &coords {
                match self.work.get(coord) {
                    Some(w) if !finished.contains(coord) => {
                        rules.insert(
                            *coord,
                            SkipRule {
                                min_serial: w.min_serial,
                                best: w.best_key(),
                            },
                        );
                    }
                    _ => {
                        rules.remove(coord);
                    }
                }
            }
        }
        for coord in finished {
            self.work.remove(&coord);
        }
        self.choice_stale = true;
        report.promoted_chunks += coords.len();
        report.promoted_groups += 1;
        self.stats.groups_published += 1;
    }

    /// `coord` now shows `key`: updates the batches up to its epoch, records
    /// the edits that became visible or reached full detail.
    fn mark_shown(&mut self, coord: ChunkCoord, key: ResultKey, now: Instant) {
        let mut done: Vec<u64> = Vec::new();
        for batch in self.batches.range_mut(..=key.epoch).map(|(_, b)| b) {
            if batch.unseen.remove(&coord) {
                batch.shown_any = true;
                if batch.unseen.is_empty() {
                    self.stats.record_published(&batch.edit_times, now);
                }
            }
            if key.full && batch.coarse.remove(&coord) && batch.coarse.is_empty() {
                self.stats.record_full_detail(&batch.edit_times, now);
                done.push(batch.epoch);
            }
        }
        for e in done {
            self.batches.remove(&e);
        }
    }

    /// The frame that shows everything published so far was presented at
    /// `at` (drawn and handed to the display, or read back headless): the
    /// edits published since the last call get their edit-to-visible and
    /// edit-to-full-detail samples.
    pub fn frame_presented(&mut self, at: Instant) {
        self.stats.frame_presented(at);
    }
}
