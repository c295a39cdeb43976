//! Mesh export: the meshed surface as binary glTF 2.0 (`.glb`) for other
//! tools.
//!
//! - [`gltf_export`]: the full-detail surface (Surface Nets at level 0),
//!   one primitive per chunk, with material weights; plain, or compact
//!   ([`gltf_compact`]: quantized, one node per chunk, and by default
//!   meshopt-compressed, with [`gltf_quantize`] making the vertex data);
//!   [`gltf_materials`] gives it the world's materials (one glTF material
//!   per library material drawn, with its textures).
//! - [`lowpoly_gltf`]: the low-poly surface (greedy heightfield meshes), one
//!   node per chunk column, textured with the palette atlas, and optionally
//!   a coarse collision mesh.
//!
//! The only room of `io` that names `pipeline` (for the world's meshes).

mod glb;
pub mod gltf_compact;
pub mod gltf_export;
pub mod gltf_materials;
pub mod gltf_quantize;
pub mod lowpoly_gltf;
