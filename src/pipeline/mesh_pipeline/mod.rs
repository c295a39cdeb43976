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
//!
//! This file holds the pipeline's state and its requests (which chunks need
//! meshing at which level); `job` is one worker batch, `dispatch` sends
//! jobs to the workers and keeps the results that can still show, and
//! `publish` uploads and promotes them.

mod dispatch;
mod job;
mod publish;

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rustc_hash::{FxHashMap, FxHashSet};

use crate::mesh::MeshStyle;
use crate::terrain::storage::coords::{ChunkCoord, ColumnCoord};
use crate::terrain::storage::grid::{Changes, Grid};

use super::invalidation::{chunks_reading_at_levels, columns_reading};
use super::lod::LEVEL_COUNT;
use super::publication::{Candidate, EditBatch, ResultKey};
use super::stats::PipelineStats;
use super::world_meshes::WorldMeshes;
pub use job::{JobItem, MeshJob, MeshResult};
pub use publish::{ChunkUploader, PublishReport};

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

    /// Sets how many job batches may be on the workers at once (at least 2
    /// by default: two per worker thread). 0 holds every job back: nothing
    /// is meshed until it is raised again (a paused pipeline, as a stalled
    /// machine looks to the waits that watch it).
    pub fn set_max_in_flight_batches(&mut self, batches: usize) {
        self.max_in_flight_batches = batches;
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
        if !set.is_empty() {
            // The edits just read may have let go of chunk storages (replaced
            // cells, history steps dropped over budget): free the cells the
            // coarse caches would otherwise keep allocated until their purge.
            crate::mesh::coarse::release_dead_storages();
        }
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
}
