//! How meshes reach the GPU: the meshing pipeline's uploader over the
//! renderer's three buffer owners ([`RendererUploader`]), and the direct
//! sync of every changed chunk ([`sync_meshes`]). A chunk's terrain and its
//! water are staged, promoted and evicted in the same steps, so an edit's
//! new terrain and new water appear in the same frame; the horizon's nodes
//! are synced with the terrain's buffer usage and fade clock.

use std::sync::Arc;

use crate::mesh::ChunkMesh;
use crate::mesh::water::WaterMesh;
use crate::pipeline::horizon::Horizon;
use crate::pipeline::{ChunkUploader, WorldMeshes};
use crate::terrain::storage::coords::ChunkCoord;

use super::super::terrain::{ChunkBuffers, NodeBuffers};
use super::super::water::WaterBuffers;
use super::draw_stats::SyncStats;

/// [`ChunkUploader`] over a renderer's chunk, node and water buffers (see
/// `Renderer::uploader`).
pub struct RendererUploader<'a> {
    /// The device new buffers are created on.
    pub(super) device: &'a wgpu::Device,
    /// The terrain's chunk buffers.
    pub(super) chunks: &'a mut ChunkBuffers,
    /// The horizon's node buffers.
    pub(super) nodes: &'a mut NodeBuffers,
    /// The water surfaces.
    pub(super) water: &'a mut WaterBuffers,
}

impl ChunkUploader for RendererUploader<'_> {
    fn stage(&mut self, coord: ChunkCoord, level: u8, mesh: &Arc<ChunkMesh>) {
        self.chunks.stage(self.device, coord, level, mesh);
    }

    /// Promotes the staged terrain and water of `coords` together; chunks
    /// with nothing staged keep theirs (a level-only change keeps its water).
    fn promote(&mut self, coords: &[ChunkCoord]) {
        self.chunks.promote(coords);
        self.water.promote(coords);
    }

    fn evict(&mut self, coords: &[ChunkCoord]) {
        self.nodes.note_evicted_chunks(coords);
        for c in coords {
            self.chunks.remove(*c);
            self.water.remove(*c);
        }
    }

    fn stage_water(&mut self, coord: ChunkCoord, water: &Arc<WaterMesh>) {
        self.water.stage(self.device, coord, water);
    }

    fn sync_horizon(&mut self, horizon: &mut Horizon) {
        let fades = self.chunks.fades();
        self.nodes.sync(
            self.device,
            horizon,
            self.chunks.extra_usage(),
            fades.clock(),
            fades.is_enabled(),
        );
    }
}

/// Uploads exactly the chunks `meshes` reports as changed since the last
/// call (terrain into `chunks`, water into `water`) and drops the buffers
/// of chunks whose mesh or water is gone.
pub fn sync_meshes(
    device: &wgpu::Device,
    meshes: &mut WorldMeshes,
    chunks: &mut ChunkBuffers,
    water: &mut WaterBuffers,
) -> SyncStats {
    let mut stats = SyncStats::default();
    for coord in meshes.take_changed() {
        match meshes.water_of(coord) {
            Some(surface) if !surface.is_empty() => {
                stats.bytes += water.upload(device, coord, surface);
                stats.water_uploaded += 1;
            }
            _ => {
                water.remove(coord);
            }
        }
        match meshes.get(coord) {
            Some(mesh) if !mesh.is_empty() => {
                let level = meshes.level_of(coord).unwrap_or(0);
                stats.bytes += chunks.upload(device, coord, level, mesh);
                stats.uploaded += 1;
            }
            _ => {
                if chunks.drop_drawn(coord) {
                    stats.removed += 1;
                }
            }
        }
    }
    stats
}
