//! Meshes derived from the voxel grid: the solid surface by Surface Nets with
//! blended materials, or in the low-poly style by greedy heightfield meshing. Plain Rust; the renderer converts these to GPU buffers.

pub mod cell_outline;
pub mod chunk_mesh;
pub mod coarse;
pub mod coarse_vote_cache;
pub mod collision_mesh;
pub mod field;
pub mod local_palette;
pub mod lowpoly;
pub mod material_votes;
pub mod materials;
pub mod mesh_style;
pub mod node_mesh;
pub mod skirts;
pub mod surface_nets;
pub mod water;

pub use chunk_mesh::ChunkMesh;
pub use mesh_style::MeshStyle;
pub use surface_nets::{MeshOptions, SurfaceNets};
