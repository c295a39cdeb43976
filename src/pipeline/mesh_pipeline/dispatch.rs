//! Work out to the workers and results back: which requested chunks become
//! jobs next (previews of edited chunks while the edit backlog is long, then
//! edits, holes and level changes, nearest first), their batches on rayon
//! workers, and which returned results are kept as candidates.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use glam::DVec3;

use super::job::{JobItem, MeshJob, MeshResult};
use super::{
    BATCH_BUDGET_MS, MAX_BATCH_CHUNKS, MAX_CANDIDATES_PER_CHUNK, MeshPipeline, PREVIEW_BACKLOG_MS,
    PREVIEW_LEVEL_STEP, SkipRule, WorkerMessage,
};
use crate::pipeline::lod::LEVEL_COUNT;
use crate::pipeline::publication::Candidate;
use crate::terrain::storage::coords::{CHUNK_SIZE_STUDS, ChunkCoord};
use crate::terrain::storage::grid::Grid;

impl MeshPipeline {
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
}
