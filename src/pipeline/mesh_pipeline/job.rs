//! One worker batch: the chunks it meshes ([`JobItem`]), the selective
//! snapshot it meshes them from ([`MeshJob`]), and what comes back for each
//! ([`MeshResult`]). Plain data and the meshing call; runs on any thread.

use std::sync::Arc;
use std::time::Instant;

use crate::mesh::water::WaterMesh;
use crate::mesh::{ChunkMesh, MeshStyle};
use crate::pipeline::publication::ResultKey;
use crate::pipeline::world_meshes::{mesh_styled, mesh_water_one};
use crate::terrain::storage::coords::ChunkCoord;
use crate::terrain::storage::grid::Grid;

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
    /// At most [`MAX_BATCH_CHUNKS`](super::MAX_BATCH_CHUNKS) chunks.
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
