//! Mesh export: the meshed surface as binary glTF 2.0 (`.glb`) for other
//! tools.
//!
//! - [`gltf_export`]: the full-detail surface (Surface Nets at level 0),
//!   one primitive per chunk, with material weights.
//! - [`lowpoly_gltf`]: the low-poly surface (greedy heightfield meshes), one
//!   node per chunk column, textured with the palette atlas, and optionally
//!   a coarse collision mesh.
//!
//! The only room of `io` that names `pipeline` (for the world's meshes).

pub mod gltf_export;
pub mod lowpoly_gltf;
