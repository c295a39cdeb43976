//! From grid edits to meshes ready for upload: invalidation and meshing.

pub mod invalidation;
pub mod world_meshes;

pub use world_meshes::WorldMeshes;
