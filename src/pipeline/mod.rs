//! From grid edits to meshes on screen: which chunks an edit invalidates,
//! background meshing on worker threads, and budgeted publication that never
//! shows a stale mesh, a hole or a crack.

pub mod camera_lead;
pub mod column_demand;
pub mod horizon;
pub mod invalidation;
pub mod lod;
pub mod lowpoly_audit;
pub mod mesh_pipeline;
pub mod picking;
pub mod publication;
pub mod seam_audit;
pub mod stall_watch;
pub mod stats;
pub mod streaming;
pub mod world_meshes;
pub mod world_stats;

pub use mesh_pipeline::{ChunkUploader, MeshJob, MeshPipeline, MeshResult, PublishReport};
pub use streaming::{StreamReport, TerrainStreaming};
pub use world_meshes::WorldMeshes;
