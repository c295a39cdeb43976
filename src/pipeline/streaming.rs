//! One frame of terrain streaming, shared by the window and scripted replays:
//! read grid changes, choose levels and residency, dispatch workers; later in
//! the frame, publish what finished.

use std::time::Instant;

use glam::DVec3;

use crate::mesh::MeshStyle;
use crate::terrain::storage::coords::{CHUNK_SIZE_STUDS, ChunkCoord, ColumnCoord};
use crate::terrain::storage::grid::Grid;
use crate::terrain::streaming::residency::Residency;

use crate::camera::{Camera, Frustum};

use super::camera_lead::CameraLead;
use super::column_demand::{ColumnDemand, missing_chunks};
use super::horizon::{Horizon, HorizonView, chunk_range_studs, chunks_ready};

use super::lod::{LodController, LodSettings};
use super::mesh_pipeline::{ChunkUploader, MeshPipeline, PublishReport};
use super::stats::Samples;
use super::world_meshes::WorldMeshes;

/// The meshing pipeline plus level-of-detail control, and for a streaming
/// world the residency of its chunk columns.
#[derive(Debug, Default)]
pub struct TerrainStreaming {
    /// Requests, workers and publication.
    pipeline: MeshPipeline,
    /// Level selection and residency.
    lod: LodController,
    /// Duration of every LOD scan, ms.
    lod_scan_ms: Samples,
    /// Column residency of a streaming world (`None`: the grid holds the
    /// whole world).
    residency: Option<Residency>,
    /// The levels above the chunk of a streaming world whose source answers
    /// coarse samples (spec §13); `None` otherwise.
    horizon: Option<Horizon>,
    demand: ColumnDemand,
    camera_lead: CameraLead,
    /// The lead is off while the budget is nearly full (see
    /// [`LEAD_OFF_BUDGET_FRACTION`]).
    lead_off: bool,
    /// Frames [`TerrainStreaming::stream_columns`] ran.
    streamed_frames: u64,
    /// Of those, frames in which ground within the draw distance had no
    /// mesh ([`missing_chunks`]), and the frame index of each.
    frames_with_missing_chunks: Vec<u64>,
    /// The missing count of the last streamed frame.
    last_missing_chunks: usize,
    last_waiting: usize,
}

/// Share of the memory budget above which a moving camera's lead is
/// dropped: prefetching ahead must never push the view past the budget.
pub const LEAD_OFF_BUDGET_FRACTION: f64 = 0.75;
/// Share of the budget below which the lead comes back (hysteresis, so the
/// preload ring does not flicker at the threshold).
pub const LEAD_ON_BUDGET_FRACTION: f64 = 0.6;

/// What one [`TerrainStreaming::stream_columns`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamReport {
    /// Columns installed this frame.
    pub installed: usize,
    /// Loads started this frame.
    pub requested: usize,
    /// Columns the view wants that are not resident yet (loading or queued).
    pub waiting: usize,
}

impl TerrainStreaming {
    /// Requests, workers and publication.
    pub fn pipeline(&self) -> &MeshPipeline {
        &self.pipeline
    }

    /// See [`TerrainStreaming::pipeline`].
    pub fn pipeline_mut(&mut self) -> &mut MeshPipeline {
        &mut self.pipeline
    }

    /// Level selection and its settings.
    pub fn lod(&self) -> &LodController {
        &self.lod
    }

    /// See [`TerrainStreaming::lod`].
    pub fn lod_mut(&mut self) -> &mut LodController {
        &mut self.lod
    }

    /// Column residency of a streaming world (`None`: the grid holds the
    /// whole world).
    pub fn residency(&self) -> Option<&Residency> {
        self.residency.as_ref()
    }

    /// See [`TerrainStreaming::residency`].
    pub fn residency_mut(&mut self) -> Option<&mut Residency> {
        self.residency.as_mut()
    }

    /// Takes the residency out (to save what it holds after a run).
    pub fn take_residency(&mut self) -> Option<Residency> {
        self.residency.take()
    }

    /// The levels above the chunk (spec §13), when the world has them.
    pub fn horizon(&self) -> Option<&Horizon> {
        self.horizon.as_ref()
    }

    /// See [`TerrainStreaming::horizon`].
    pub fn horizon_mut(&mut self) -> Option<&mut Horizon> {
        self.horizon.as_mut()
    }

    /// Duration of every LOD scan, ms.
    pub fn lod_scan_ms_mut(&mut self) -> &mut Samples {
        &mut self.lod_scan_ms
    }

    /// Frames [`TerrainStreaming::stream_columns`] ran.
    pub fn streamed_frames(&self) -> u64 {
        self.streamed_frames
    }

    /// Of those, the index of each frame in which ground within the draw
    /// distance had no mesh.
    pub fn frames_with_missing_chunks(&self) -> &[u64] {
        &self.frames_with_missing_chunks
    }

    /// The missing count of the last streamed frame.
    pub fn last_missing_chunks(&self) -> usize {
        self.last_missing_chunks
    }

    /// Streaming with `settings`, not yet synced to any grid.
    pub fn new(settings: LodSettings) -> TerrainStreaming {
        let mut pipeline = MeshPipeline::new();
        pipeline.set_style(settings.style);
        TerrainStreaming {
            pipeline,
            lod: LodController::new(settings),
            lod_scan_ms: Samples::default(),
            ..TerrainStreaming::default()
        }
    }

    /// Streaming of a world whose columns `residency` loads on demand.
    /// Where the source answers coarse samples, the horizon draws beyond
    /// the chunk levels and chunks are meshed only out to
    /// [`chunk_range_studs`].
    pub fn streaming(settings: LodSettings, residency: Residency) -> TerrainStreaming {
        let mut horizon = Horizon::new(residency.source().clone());
        if let Some(h) = horizon.as_mut() {
            h.summarise_store(residency.store().clone());
        }
        let mut streaming = TerrainStreaming {
            residency: Some(residency),
            ..TerrainStreaming::new(settings)
        };
        if horizon.is_some() {
            streaming.lod.set_chunk_range_cap(Some(chunk_range_studs()));
        }
        streaming.horizon = horizon;
        streaming
    }

    /// Switches the mesher of the view (also done by the next
    /// [`TerrainStreaming::begin_frame`] when `lod.settings.style` changed):
    /// every chunk is meshed again with the new style.
    pub fn set_style(&mut self, style: MeshStyle) {
        self.lod.settings.style = style;
        if self.pipeline.style() != style {
            self.pipeline.set_style(style);
            self.lod.rescan();
        }
    }

    /// The mesher of the view.
    pub fn style(&self) -> MeshStyle {
        self.pipeline.style()
    }

    /// Late in the frame, with the camera the frame is drawn from: takes
    /// finished node builds, selects the horizon's draw list for `camera`'s
    /// frustum, requests missing nodes coarsest first and hands the result
    /// to `uploader`. Does nothing without a horizon.
    pub fn horizon_frame(
        &mut self,
        grid: &Grid,
        meshes: &WorldMeshes,
        camera: &Camera,
        uploader: &mut dyn ChunkUploader,
    ) {
        let Some(horizon) = self.horizon.as_mut() else {
            return;
        };
        horizon.receive();
        horizon.note_grid_changes(grid);
        horizon.set_frozen(self.lod.settings.frozen);
        let frustum = Frustum::from_clip_from_world(camera.clip_from_world());
        let pos = camera.pos_world;
        let in_view = |lo: DVec3, hi: DVec3| {
            frustum.intersects_aabb((lo - pos).as_vec3(), (hi - pos).as_vec3())
        };
        let ready = |key| chunks_ready(grid, meshes, key);
        horizon.select(&HorizonView {
            camera_pos_world: pos,
            draw_distance_studs: self.lod.settings.draw_distance_studs,
            in_view: &in_view,
            chunks_ready: &ready,
        });
        horizon.dispatch();
        uploader.sync_horizon(horizon);
    }

    /// [`TerrainStreaming::horizon_frame`] that waits until every node the
    /// view draws is built (headless first frames); ancestors and nodes just
    /// outside the view stream in after.
    pub fn horizon_frame_settled(
        &mut self,
        grid: &Grid,
        meshes: &WorldMeshes,
        camera: &Camera,
        uploader: &mut dyn ChunkUploader,
    ) {
        self.horizon_frame(grid, meshes, camera, uploader);
        if let Some(h) = self.horizon.as_mut() {
            h.build_drawn_now();
        }
        self.horizon_frame(grid, meshes, camera, uploader);
    }

    /// True when every column the view wanted at the last
    /// [`TerrainStreaming::stream_columns`] was resident and no load is in
    /// flight (always true for a grid that holds the whole world).
    pub fn is_view_loaded(&self) -> bool {
        self.residency
            .as_ref()
            .is_none_or(|r| self.last_waiting == 0 && r.loads_in_flight() == 0)
    }

    /// True when the last frame wanted columns it could not ask for because
    /// the memory budget is full of columns the view needs: the view is as
    /// complete as the budget allows (a larger `--memory-budget-mib` or a
    /// shorter draw distance completes it).
    pub fn is_budget_limited(&self) -> bool {
        self.residency.as_ref().is_some_and(|r| {
            self.last_waiting > 0 && r.is_budget_blocked() && r.loads_in_flight() == 0
        })
    }

    /// Columns the last frame wanted that were not resident.
    pub fn last_waiting_columns(&self) -> usize {
        self.last_waiting
    }

    /// True when nothing more will arrive for the current view: it is
    /// loaded, or the budget allows no more of it.
    pub fn is_view_settled(&self) -> bool {
        self.is_view_loaded() || self.is_budget_limited()
    }

    /// Horizontal radius of the column demand: the preload range plus the
    /// one column of neighbours a chunk needs to be meshed.
    pub fn demand_radius_studs(&self) -> f64 {
        self.lod.preload_range_studs() + CHUNK_SIZE_STUDS as f64
    }

    /// Frame start of a streaming world, before edits: installs finished
    /// loads, asks for the columns the view needs (nearest first), evicts
    /// over the budget (spilling edits), cancels meshing that lost its
    /// neighbours, and counts missing ground. Never waits for a load.
    /// Does nothing for a grid that holds the whole world.
    pub fn stream_columns(
        &mut self,
        grid: &mut Grid,
        meshes: &WorldMeshes,
        camera_pos_world: DVec3,
    ) -> StreamReport {
        self.stream_columns_with(grid, meshes, camera_pos_world, &[])
    }

    /// [`TerrainStreaming::stream_columns`] with `priority` columns asked
    /// for before the view's (an edit waiting for them, spec §12): they are
    /// loaded first and kept this frame, without waiting for them either.
    pub fn stream_columns_with(
        &mut self,
        grid: &mut Grid,
        meshes: &WorldMeshes,
        camera_pos_world: DVec3,
        priority: &[ColumnCoord],
    ) -> StreamReport {
        let radius = self.demand_radius_studs();
        let draw = self.lod.settings.draw_distance_studs;
        let Some(residency) = self.residency.as_mut() else {
            return StreamReport::default();
        };
        let mut report = StreamReport::default();
        residency.set_extra_bytes(meshes.heap_bytes());
        let evicted_before = residency.stats.evicted;
        // Demand first: it marks this frame's columns, so the installs
        // below never evict them to make room.
        let columns = self.demand.columns_around(camera_pos_world, radius);
        report.requested = residency.demand(grid, priority.iter().chain(columns.iter()).copied());
        report.installed = residency.receive(grid).installed.len();
        report.waiting = columns
            .iter()
            .filter(|c| !grid.is_column_resident(**c) && !residency.is_outside(**c))
            .count();
        self.last_waiting = report.waiting;
        if residency.stats.evicted != evicted_before {
            self.pipeline.cancel_unmeshable(grid);
        }
        // With a horizon, ground the chunks have not reached yet is covered
        // by nodes; what is missing is what no node covers either.
        self.last_missing_chunks = match &self.horizon {
            Some(h) => h.uncovered(),
            None => missing_chunks(grid, meshes, columns, camera_pos_world, draw, |c| {
                residency.is_outside(c)
            }),
        };
        if self.streamed_frames.is_multiple_of(60) {
            log::debug!(
                "stream frame {}: {} missing, {} waiting, {} loads in flight, {} MiB resident, {} meshing",
                self.streamed_frames,
                self.last_missing_chunks,
                report.waiting,
                residency.loads_in_flight(),
                residency.resident_bytes() >> 20,
                self.pipeline.queue_len()
            );
        }
        if self.last_missing_chunks > 0 {
            self.frames_with_missing_chunks.push(self.streamed_frames);
        }
        residency.end_frame();
        self.streamed_frames += 1;
        report
    }

    /// Meshes the chunks within the preload range of `camera_pos_world` at
    /// their distance levels, synchronously and in parallel (start-up), and
    /// marks the pipeline as synced with `grid`.
    pub fn build_initial(&mut self, grid: &Grid, camera_pos_world: DVec3) -> WorldMeshes {
        let initial = self.lod.initial_levels(grid, camera_pos_world);
        let levels: rustc_hash::FxHashMap<ChunkCoord, u8> = initial.iter().copied().collect();
        let coords: Vec<ChunkCoord> = initial.iter().map(|(c, _)| *c).collect();
        let meshes = WorldMeshes::build_styled(
            grid,
            &coords,
            |c| levels.get(&c).copied().unwrap_or(0),
            self.pipeline.style(),
        );
        self.pipeline.mark_synced(grid);
        meshes
    }

    /// Frame start, right after edits: measures the camera's lead (a moving
    /// camera preloads farther ahead while the memory budget has room),
    /// requests meshes for what the grid
    /// changed (within the preload range), runs a LOD scan when one is due,
    /// evicts chunks beyond the retention range, and dispatches workers.
    pub fn begin_frame(
        &mut self,
        grid: &Grid,
        meshes: &mut WorldMeshes,
        camera_pos_world: DVec3,
        uploader: &mut dyn ChunkUploader,
    ) {
        let lead_studs = self.camera_lead.observe(camera_pos_world, Instant::now());
        if let Some(r) = &self.residency {
            let used = r.resident_bytes() as f64 / r.budget_bytes().max(1) as f64;
            if used > LEAD_OFF_BUDGET_FRACTION {
                self.lead_off = true;
            } else if used < LEAD_ON_BUDGET_FRACTION {
                self.lead_off = false;
            }
        }
        self.lod
            .set_lead_studs(if self.lead_off { 0.0 } else { lead_studs });
        self.set_style(self.lod.settings.style);
        let lod = &self.lod;
        self.pipeline.sync_grid(grid, meshes, Instant::now(), |c| {
            lod.keep(camera_pos_world, c) && grid.neighbourhood_resident(c)
        });
        let pipeline = &self.pipeline;
        let shown: Vec<ChunkCoord> = meshes.levels().map(|(c, _)| c).collect();
        let update = self.lod.update(
            grid,
            camera_pos_world,
            |c| pipeline.pending_level(c).or_else(|| meshes.level_of(c)),
            shown.into_iter(),
        );
        if update.scanned {
            self.lod_scan_ms.push(update.scan_ms);
        }
        for t in &update.transitions {
            // A chunk's first mesh brings its water surface too (a level
            // change keeps the water it has).
            self.pipeline
                .request_levels([(t.coord, t.to)], None, t.from.is_none());
        }
        if !update.evicted.is_empty() {
            for &c in &update.evicted {
                meshes.evict(c);
                self.pipeline.cancel(c);
            }
            uploader.evict(&update.evicted);
        }
        self.pipeline
            .dispatch_ranked(grid, camera_pos_world, &|c| meshes.level_of(c).is_some());
    }

    /// Late in the frame, before drawing: accepts finished results and
    /// publishes within the budget.
    pub fn publish(
        &mut self,
        uploader: &mut dyn ChunkUploader,
        meshes: &mut WorldMeshes,
    ) -> PublishReport {
        self.pipeline.receive();
        self.pipeline.publish(uploader, meshes)
    }
}
