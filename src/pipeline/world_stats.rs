//! One GUI-free reading of the world, its shown meshes, the meshing
//! pipeline and the level of detail, which the window's panel and
//! `--stats-json` both show: the figures are read one way for both.

use crate::pipeline::stats::LatencySummary;

/// One GUI-free reading of the world, its shown meshes, the meshing
/// pipeline and the level of detail: the figures the window's panel and
/// `--stats-json` share, read one way for both.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorldStats {
    /// Chunks stored in the grid.
    pub chunks: usize,
    /// Chunks with a mesh.
    pub nonempty_chunks: usize,
    /// Heap bytes of the grid's chunk storage.
    pub grid_bytes: usize,
    /// Vertices of the shown meshes.
    pub vertices: usize,
    /// Triangles of the shown meshes.
    pub triangles: usize,
    /// Wall time of the last whole-world meshing, ms.
    pub mesh_ms: f64,
    /// Chunks waiting for a meshing worker.
    pub queue_len: usize,
    /// Results published in the last frame.
    pub results_last_frame: usize,
    /// Upload time of the last frame, ms.
    pub upload_ms_last_frame: f64,
    /// Edit to the first presented frame showing it, ms (`None`: no edit
    /// shown yet).
    pub edit_to_visible_ms: Option<LatencySummary>,
    /// Edit to the first presented frame showing it at full detail, ms
    /// (`None`: none yet).
    pub edit_to_full_detail_ms: Option<LatencySummary>,
    /// Triangles of the shown chunk meshes per level 0–3.
    pub triangles_by_level: [usize; 4],
    /// Shown chunk meshes per level 0–3.
    pub chunks_by_level: [usize; 4],
    /// Shown chunk meshes that draw some of their materials as another
    /// (more than 30 solid materials near one chunk), and how many
    /// materials they draw so, summed.
    pub merged_materials: (usize, usize),
    /// The camera's position, world studs.
    pub camera_pos_world: [f64; 3],
}

impl WorldStats {
    /// Reads `grid`, its shown `meshes` and `streaming` (pipeline and level
    /// of detail) with the camera at `camera_pos_world`.
    pub fn read(
        grid: &crate::terrain::Grid,
        meshes: &crate::pipeline::WorldMeshes,
        streaming: &mut crate::pipeline::TerrainStreaming,
        camera_pos_world: glam::DVec3,
    ) -> WorldStats {
        let (vertices, triangles) = meshes.totals();
        let pipeline = streaming.pipeline_mut();
        WorldStats {
            chunks: grid.chunk_count(),
            nonempty_chunks: meshes.len(),
            grid_bytes: grid.heap_bytes(),
            vertices,
            triangles,
            mesh_ms: meshes.last_mesh_ms,
            queue_len: pipeline.queue_len(),
            results_last_frame: pipeline.stats.results_last_frame,
            upload_ms_last_frame: pipeline.stats.upload_ms_last_frame,
            edit_to_visible_ms: pipeline.stats.latency_summary(),
            edit_to_full_detail_ms: pipeline.stats.full_detail_summary(),
            triangles_by_level: meshes.triangles_by_level(),
            chunks_by_level: meshes.chunks_by_level(),
            merged_materials: meshes.merged_materials(),
            camera_pos_world: camera_pos_world.to_array(),
        }
    }
}
