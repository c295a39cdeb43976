//! Background meshing and budgeted, crack-free publication (spec §3, §7, §8).
//!
//! ```text
//!  grid edits ──changes_since──▶ requests (serial per chunk, grouped by edit)
//!        ▲                              │ nearest first, ≤ 32 chunks a batch
//!        │                              ▼
//!   main thread ◀── bounded channel ◀── rayon workers mesh selective snapshots
//!        │
//!        └─▶ each frame: accept results whose serial is still current, upload
//!            (stage) at most 32 and stop after 2 ms, then make visible every
//!            group whose chunks are all staged — all in the same frame.
//! ```
//!
//! Why groups: an edit near a chunk border changes the surface on both sides.
//! If one side were shown before the other, the border would crack for a
//! frame, so the chunks one edit dirtied become visible together, and a later
//! edit that re-dirties a chunk of an unpublished group merges the groups.
//! The old meshes stay drawn until then, so nothing ever disappears.
//!
//! Why serials: workers finish in any order. A result is accepted only if its
//! serial is still the chunk's current one, so an older job can never overwrite
//! a newer edit.
//!
//! The state machine is plain Rust; the GPU side is reached through
//! [`ChunkUploader`], and time through an injectable clock, so every rule is
//! tested deterministically.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use glam::DVec3;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::mesh::ChunkMesh;
use crate::terrain::coords::{CHUNK_SIZE_STUDS, ChunkCoord};
use crate::terrain::grid::{Changes, Grid};

use super::invalidation::chunks_reading_at_levels;
use super::stats::PipelineStats;
use super::world_meshes::{WorldMeshes, mesh_one, mesh_water_one};
use crate::mesh::MeshOptions;
use crate::mesh::water::WaterMesh;

/// Most chunks one worker batch meshes.
pub const MAX_BATCH_CHUNKS: usize = 32;
/// Most results uploaded (staged) in one frame.
pub const MAX_RESULTS_PER_FRAME: usize = 32;
/// Upload time after which a frame starts no further upload.
pub const UPLOAD_BUDGET: Duration = Duration::from_millis(2);
/// Capacity of the worker → main-thread result channel.
pub const RESULT_CHANNEL_CAPACITY: usize = 512;

/// One chunk of a worker batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobItem {
    /// The chunk to mesh.
    pub coord: ChunkCoord,
    /// The request serial the result must carry.
    pub serial: u64,
    /// Level of detail (0 = full detail; coarser levels come with LOD).
    pub level: u8,
    /// Also re-mesh the chunk's water (an edit dirtied it; level-only
    /// requests reuse the water mesh).
    pub water: bool,
}

/// A batch of chunks to mesh from a selective snapshot of the grid.
#[derive(Debug)]
pub struct MeshJob {
    /// At most [`MAX_BATCH_CHUNKS`] chunks.
    pub items: Vec<JobItem>,
    /// The requested chunks and their neighbours, sharing storage with the live grid.
    pub snapshot: Grid,
}

impl MeshJob {
    /// Meshes every item (on the calling thread).
    pub fn run(&self) -> Vec<MeshResult> {
        self.run_current(|_| true)
    }

    /// Meshes the items for which `is_current` holds, skipping those a newer
    /// request has already replaced (their results would be rejected anyway).
    pub fn run_current(&self, is_current: impl Fn(&JobItem) -> bool) -> Vec<MeshResult> {
        self.items
            .iter()
            .filter(|item| is_current(item))
            .map(|item| MeshResult {
                coord: item.coord,
                serial: item.serial,
                level: item.level,
                mesh: Arc::new(mesh_one(
                    &self.snapshot,
                    item.coord,
                    item.level,
                    MeshOptions::default(),
                )),
                water: item
                    .water
                    .then(|| Arc::new(mesh_water_one(&self.snapshot, item.coord))),
            })
            .collect()
    }
}

/// A finished chunk mesh (possibly empty) for one request serial.
#[derive(Clone, Debug)]
pub struct MeshResult {
    /// The chunk.
    pub coord: ChunkCoord,
    /// Serial of the request this answers.
    pub serial: u64,
    /// Level of detail it was meshed at.
    pub level: u8,
    /// The mesh; empty when the chunk owns no surface.
    pub mesh: Arc<ChunkMesh>,
    /// The chunk's new water surface, or `None` when the request kept it.
    pub water: Option<Arc<WaterMesh>>,
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
    /// Groups made visible this frame.
    pub promoted_groups: usize,
}

#[derive(Debug)]
struct Pending {
    serial: u64,
    level: u8,
    group: u64,
    /// Serial of the job in flight for this chunk, if any.
    dispatched: Option<u64>,
    /// The current serial's result, uploaded and waiting for its group.
    staged: Option<Arc<ChunkMesh>>,
    /// Its water, when the request re-meshed water.
    staged_water: Option<Arc<WaterMesh>>,
    /// The water must be re-meshed (an edit touched it); kept by later
    /// level-only requests until a result with water is staged.
    water_dirty: bool,
}

#[derive(Debug, Default)]
struct Group {
    members: FxHashSet<ChunkCoord>,
    edit_times: Vec<Instant>,
}

/// Requests, workers and publication of chunk meshes.
#[derive(Debug)]
pub struct MeshPipeline {
    reader: Option<(u64, u64)>,
    pending: FxHashMap<ChunkCoord, Pending>,
    groups: FxHashMap<u64, Group>,
    ready: VecDeque<MeshResult>,
    next_serial: u64,
    next_group: u64,
    tx: SyncSender<MeshResult>,
    rx: Receiver<MeshResult>,
    in_flight: Arc<AtomicUsize>,
    /// Current serial per pending chunk, shared with workers so they skip
    /// items a newer request replaced while the batch waited or ran.
    current_serials: Arc<Mutex<FxHashMap<ChunkCoord, u64>>>,
    max_in_flight_batches: usize,
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
            pending: FxHashMap::default(),
            groups: FxHashMap::default(),
            ready: VecDeque::new(),
            next_serial: 1,
            next_group: 1,
            tx,
            rx,
            in_flight: Arc::new(AtomicUsize::new(0)),
            current_serials: Arc::new(Mutex::new(FxHashMap::default())),
            max_in_flight_batches: (rayon::current_num_threads() * 2).max(2),
            stats: PipelineStats::default(),
        }
    }

    /// Records that the current meshes already reflect `grid` as it is now
    /// (e.g. after meshing the whole world synchronously at start-up).
    pub fn mark_synced(&mut self, grid: &Grid) {
        self.reader = Some((grid.generation(), grid.revision()));
    }

    /// Chunks with a request not yet made visible.
    pub fn queue_len(&self) -> usize {
        self.pending.len()
    }

    /// Worker batches running or queued on the thread pool.
    pub fn in_flight_batches(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// True when nothing is requested, running or waiting to be published.
    pub fn is_idle(&self) -> bool {
        self.pending.is_empty() && self.ready.is_empty() && self.in_flight_batches() == 0
    }

    /// Edits made but not yet fully visible.
    pub fn pending_edits(&self) -> usize {
        self.groups.values().map(|g| g.edit_times.len()).sum()
    }

    /// The level `coord` is requested at, if it has a pending request.
    pub fn pending_level(&self, coord: ChunkCoord) -> Option<u8> {
        self.pending.get(&coord).map(|p| p.level)
    }

    /// Forgets the pending request of `coord` (e.g. it left the retention
    /// range); its group no longer waits for it and late results are dropped.
    pub fn cancel(&mut self, coord: ChunkCoord) {
        if let Some(p) = self.pending.remove(&coord) {
            if let Some(group) = self.groups.get_mut(&p.group) {
                group.members.remove(&coord);
                if group.members.is_empty() {
                    self.groups.remove(&p.group);
                }
            }
            self.current_serials
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&coord);
        }
    }

    /// The current request serial of `coord`, if it has one.
    pub fn serial_of(&self, coord: ChunkCoord) -> Option<u64> {
        self.pending.get(&coord).map(|p| p.serial)
    }

    /// Reads what changed in `grid` since the last call and requests new
    /// meshes, each chunk at its current level (pending request, else shown
    /// mesh in `meshes`, else 0): for an incremental change, the chunks whose
    /// padded reads at their level the changed extents touch (spec §8) — plus
    /// all 26 neighbours of a removed chunk — as one group stamped with `now`;
    /// on a full refresh, every meshing candidate. Chunks for which `keep` is
    /// false (outside the preload range) are not requested, and their shown
    /// mesh, now outdated, is discarded from `meshes`. Returns the number of
    /// chunks requested.
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
        let level_of = |c: ChunkCoord| {
            self.pending
                .get(&c)
                .map(|p| p.level)
                .or_else(|| meshes.level_of(c))
                .unwrap_or(0)
        };
        let mut set: FxHashSet<ChunkCoord> = FxHashSet::default();
        let full = match changes {
            Changes::FullRefresh => {
                set.extend(grid.meshing_candidates());
                true
            }
            Changes::Incremental { changed, removed } => {
                for coord in changed {
                    let extent = grid.changed_extent_since(coord, since);
                    set.extend(chunks_reading_at_levels(&extent, level_of));
                }
                for coord in removed {
                    set.insert(coord);
                    set.extend(coord.neighbours());
                }
                false
            }
        };
        let mut coords: Vec<(ChunkCoord, u8)> = Vec::with_capacity(set.len());
        let mut outside: Vec<ChunkCoord> = Vec::new();
        for coord in set {
            if keep(coord) {
                coords.push((coord, level_of(coord)));
            } else {
                outside.push(coord);
            }
        }
        for coord in outside {
            meshes.evict(coord);
        }
        coords.sort_by_key(|(c, _)| (c.0.z, c.0.y, c.0.x));
        let n = coords.len();
        if full {
            for item in coords {
                self.request_levels([item], None, true);
            }
        } else if n > 0 {
            self.request_levels(coords, Some(now), true);
        }
        n
    }

    /// Requests new meshes of `coords` at `level` as one group (see
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

    /// Requests new meshes of chunks, each at its own level, as one group
    /// (made visible together). Each chunk gets a fresh serial, so results of
    /// earlier requests for it are rejected; a group that shared a chunk with
    /// this one and is not yet visible merges into it. `edit_time` (when the
    /// change was made) feeds the edit-to-visible latency. `water` marks the
    /// chunks' water as changed; a request without it (a level change) keeps
    /// water work an earlier, still pending request queued.
    pub fn request_levels(
        &mut self,
        items: impl IntoIterator<Item = (ChunkCoord, u8)>,
        edit_time: Option<Instant>,
        water: bool,
    ) {
        let group_id = self.next_group;
        self.next_group += 1;
        let mut group = Group {
            members: FxHashSet::default(),
            edit_times: edit_time.into_iter().collect(),
        };
        for (coord, level) in items {
            if let Some(old) = self.pending.get(&coord)
                && old.group != group_id
                && let Some(old_group) = self.groups.remove(&old.group)
            {
                for &m in &old_group.members {
                    if let Some(p) = self.pending.get_mut(&m) {
                        p.group = group_id;
                    }
                }
                group.members.extend(old_group.members);
                group.edit_times.extend(old_group.edit_times);
            }
            let serial = self.next_serial;
            self.next_serial += 1;
            let dispatched = self.pending.get(&coord).and_then(|p| p.dispatched);
            let water_dirty = water || self.pending.get(&coord).is_some_and(|p| p.water_dirty);
            self.pending.insert(
                coord,
                Pending {
                    serial,
                    level,
                    group: group_id,
                    dispatched,
                    staged: None,
                    staged_water: None,
                    water_dirty,
                },
            );
            group.members.insert(coord);
        }
        if !group.members.is_empty() {
            let mut current = self
                .current_serials
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            for m in &group.members {
                if let Some(p) = self.pending.get(m) {
                    current.insert(*m, p.serial);
                }
            }
            drop(current);
            self.groups.insert(group_id, group);
        }
    }

    /// Takes up to `max_batches` batches of requests whose current serial has
    /// not been dispatched, nearest to `camera_pos_world` first, each with a
    /// selective snapshot of `grid`. Marks them dispatched.
    pub fn take_jobs(
        &mut self,
        grid: &Grid,
        camera_pos_world: DVec3,
        max_batches: usize,
    ) -> Vec<MeshJob> {
        if max_batches == 0 {
            return Vec::new();
        }
        let half = CHUNK_SIZE_STUDS as f64 * 0.5;
        let mut todo: Vec<(f64, ChunkCoord)> = self
            .pending
            .iter()
            .filter(|(_, p)| p.dispatched != Some(p.serial))
            .map(|(&c, _)| {
                let centre = c.origin_world() + DVec3::splat(half);
                (centre.distance_squared(camera_pos_world), c)
            })
            .collect();
        todo.sort_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then_with(|| (a.1.0.z, a.1.0.y, a.1.0.x).cmp(&(b.1.0.z, b.1.0.y, b.1.0.x)))
        });
        todo.truncate(max_batches.saturating_mul(MAX_BATCH_CHUNKS));
        // Spread small workloads over the worker threads (a single edit's
        // chunks would otherwise mesh one after another on one thread); large
        // ones use full batches of MAX_BATCH_CHUNKS.
        let threads = rayon::current_num_threads().max(1);
        let per_batch = todo.len().div_ceil(threads).clamp(1, MAX_BATCH_CHUNKS);
        todo.chunks(per_batch)
            .take(max_batches)
            .map(|batch| {
                let items: Vec<JobItem> = batch
                    .iter()
                    .filter_map(|&(_, coord)| {
                        let p = self.pending.get_mut(&coord)?;
                        p.dispatched = Some(p.serial);
                        Some(JobItem {
                            coord,
                            serial: p.serial,
                            level: p.level,
                            water: p.water_dirty,
                        })
                    })
                    .collect();
                let coords: Vec<ChunkCoord> = items.iter().map(|i| i.coord).collect();
                MeshJob {
                    items,
                    snapshot: grid.snapshot_for(&coords),
                }
            })
            .collect()
    }

    /// Starts worker batches on the rayon pool (keeping at most a few batches
    /// per thread in flight); results arrive through the bounded channel.
    pub fn dispatch(&mut self, grid: &Grid, camera_pos_world: DVec3) {
        let free = self
            .max_in_flight_batches
            .saturating_sub(self.in_flight_batches());
        for job in self.take_jobs(grid, camera_pos_world, free) {
            let tx = self.tx.clone();
            let in_flight = Arc::clone(&self.in_flight);
            let current = Arc::clone(&self.current_serials);
            in_flight.fetch_add(1, Ordering::AcqRel);
            rayon::spawn(move || {
                let is_current = |item: &JobItem| {
                    let serials = current.lock().unwrap_or_else(PoisonError::into_inner);
                    serials.get(&item.coord) == Some(&item.serial)
                };
                for result in job.run_current(is_current) {
                    // Blocks while the channel is full (bounded); a closed
                    // channel means the pipeline is gone and results are moot.
                    if tx.send(result).is_err() {
                        break;
                    }
                }
                in_flight.fetch_sub(1, Ordering::AcqRel);
            });
        }
    }

    /// Moves finished worker results from the channel into the pipeline.
    pub fn receive(&mut self) {
        while let Ok(result) = self.rx.try_recv() {
            self.submit_result(result);
        }
    }

    /// Accepts `result` when its serial is still the chunk's current one;
    /// otherwise drops it (a newer request replaced it). Returns whether it
    /// was accepted.
    pub fn submit_result(&mut self, result: MeshResult) -> bool {
        let current = self
            .pending
            .get(&result.coord)
            .is_some_and(|p| p.serial == result.serial);
        if current {
            self.stats.accepted_results += 1;
            self.ready.push_back(result);
        } else {
            self.stats.stale_results += 1;
        }
        current
    }

    /// One frame of publication with the wall clock: see [`MeshPipeline::publish_with_clock`].
    pub fn publish(
        &mut self,
        uploader: &mut dyn ChunkUploader,
        meshes: &mut WorldMeshes,
    ) -> PublishReport {
        self.publish_with_clock(uploader, meshes, &mut Instant::now)
    }

    /// One frame of publication: uploads accepted results in arrival order
    /// (at most [`MAX_RESULTS_PER_FRAME`], and none once [`UPLOAD_BUDGET`] has
    /// elapsed, checked before each upload), then makes visible every group
    /// whose chunks are all uploaded, updating `meshes` (the CPU picking copy)
    /// in the same step. `clock` gives the current time.
    pub fn publish_with_clock(
        &mut self,
        uploader: &mut dyn ChunkUploader,
        meshes: &mut WorldMeshes,
        clock: &mut dyn FnMut() -> Instant,
    ) -> PublishReport {
        let start = clock();
        let mut report = PublishReport::default();
        let mut touched_groups: FxHashSet<u64> = FxHashSet::default();
        while report.staged < MAX_RESULTS_PER_FRAME && clock().duration_since(start) < UPLOAD_BUDGET
        {
            let Some(result) = self.ready.pop_front() else {
                break;
            };
            let Some(p) = self.pending.get_mut(&result.coord) else {
                self.stats.stale_results += 1;
                continue;
            };
            if p.serial != result.serial {
                self.stats.stale_results += 1;
                continue;
            }
            uploader.stage(result.coord, result.level, &result.mesh);
            if let Some(water) = &result.water {
                uploader.stage_water(result.coord, water);
            }
            p.staged = Some(result.mesh);
            p.staged_water = result.water;
            touched_groups.insert(p.group);
            report.staged += 1;
        }
        let end = clock();
        report.upload_ms = if report.staged > 0 {
            end.duration_since(start).as_secs_f64() * 1e3
        } else {
            0.0
        };

        let mut complete: Vec<u64> = touched_groups
            .into_iter()
            .filter(|g| {
                self.groups.get(g).is_some_and(|group| {
                    group
                        .members
                        .iter()
                        .all(|m| self.pending.get(m).is_some_and(|p| p.staged.is_some()))
                })
            })
            .collect();
        complete.sort_unstable();
        for g in complete {
            let Some(group) = self.groups.remove(&g) else {
                continue;
            };
            let mut members: Vec<ChunkCoord> = group.members.into_iter().collect();
            members.sort_by_key(|c| (c.0.z, c.0.y, c.0.x));
            uploader.promote(&members);
            {
                let mut current = self
                    .current_serials
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                for coord in &members {
                    current.remove(coord);
                }
            }
            for coord in &members {
                if let Some(p) = self.pending.remove(coord)
                    && let Some(mesh) = p.staged
                {
                    meshes.set_published(*coord, p.level, mesh, p.staged_water);
                }
            }
            let visible_at = clock();
            for t in group.edit_times {
                self.stats
                    .edit_to_visible
                    .push(visible_at.duration_since(t).as_secs_f64() * 1e3);
            }
            report.promoted_chunks += members.len();
            report.promoted_groups += 1;
            self.stats.groups_published += 1;
        }

        self.stats.results_last_frame = report.staged;
        self.stats.upload_ms_last_frame = report.upload_ms;
        self.stats.max_results_per_frame = self.stats.max_results_per_frame.max(report.staged);
        if report.staged > 0 {
            self.stats.upload.push(report.upload_ms);
        }
        report
    }
}
