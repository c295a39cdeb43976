//! One frame of terrain streaming, shared by the window and scripted replays:
//! read grid changes, choose levels and residency, dispatch workers; later in
//! the frame, publish what finished.

use std::time::Instant;

use glam::DVec3;

use crate::terrain::coords::ChunkCoord;
use crate::terrain::grid::Grid;

use super::lod::{LodController, LodSettings};
use super::mesh_pipeline::{ChunkUploader, MeshPipeline, PublishReport};
use super::stats::Samples;
use super::world_meshes::WorldMeshes;

/// The meshing pipeline plus level-of-detail control.
#[derive(Debug, Default)]
pub struct TerrainStreaming {
    /// Requests, workers and publication.
    pub pipeline: MeshPipeline,
    /// Level selection and residency.
    pub lod: LodController,
    /// Duration of every LOD scan, ms.
    pub lod_scan_ms: Samples,
}

impl TerrainStreaming {
    /// Streaming with `settings`, not yet synced to any grid.
    pub fn new(settings: LodSettings) -> TerrainStreaming {
        TerrainStreaming {
            pipeline: MeshPipeline::new(),
            lod: LodController::new(settings),
            lod_scan_ms: Samples::default(),
        }
    }

    /// Meshes the chunks within the preload range of `camera_pos_world` at
    /// their distance levels, synchronously and in parallel (start-up), and
    /// marks the pipeline as synced with `grid`.
    pub fn build_initial(&mut self, grid: &Grid, camera_pos_world: DVec3) -> WorldMeshes {
        let initial = self.lod.initial_levels(grid, camera_pos_world);
        let levels: rustc_hash::FxHashMap<ChunkCoord, u8> = initial.iter().copied().collect();
        let coords: Vec<ChunkCoord> = initial.iter().map(|(c, _)| *c).collect();
        let meshes = WorldMeshes::build(grid, &coords, |c| levels.get(&c).copied().unwrap_or(0));
        self.pipeline.mark_synced(grid);
        meshes
    }

    /// Frame start, right after edits: requests meshes for what the grid
    /// changed (within the preload range), runs a LOD scan when one is due,
    /// evicts chunks beyond the retention range, and dispatches workers.
    pub fn begin_frame(
        &mut self,
        grid: &Grid,
        meshes: &mut WorldMeshes,
        camera_pos_world: DVec3,
        uploader: &mut dyn ChunkUploader,
    ) {
        let lod = &self.lod;
        self.pipeline.sync_grid(grid, meshes, Instant::now(), |c| {
            lod.keep(camera_pos_world, c)
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
            self.pipeline.request([t.coord], t.to, None);
        }
        if !update.evicted.is_empty() {
            for &c in &update.evicted {
                meshes.evict(c);
                self.pipeline.cancel(c);
            }
            uploader.evict(&update.evicted);
        }
        self.pipeline.dispatch(grid, camera_pos_world);
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
