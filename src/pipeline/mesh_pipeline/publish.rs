//! Publication: the GPU side ([`ChunkUploader`]) and each frame's
//! budgeted uploads. Held results are grouped into components that must
//! show together, uploaded component by component within the frame's
//! budget, and each fully uploaded component is made visible in one step,
//! so no border cracks and nothing disappears.

use std::sync::Arc;
use std::time::Instant;

use rustc_hash::{FxHashMap, FxHashSet};

use super::{MAX_RESULTS_PER_FRAME, MeshPipeline, SkipRule, Staging, UPLOAD_BUDGET};
use crate::mesh::ChunkMesh;
use crate::mesh::water::WaterMesh;
use crate::pipeline::publication::{Candidate, Component, ResultKey, choose_components};
use crate::pipeline::world_meshes::WorldMeshes;
use crate::terrain::storage::coords::ChunkCoord;

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
    fn sync_horizon(&mut self, horizon: &mut crate::pipeline::horizon::Horizon) {
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
    fn sync_horizon(&mut self, horizon: &mut crate::pipeline::horizon::Horizon) {
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

impl MeshPipeline {
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
