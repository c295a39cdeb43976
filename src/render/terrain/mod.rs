//! The terrain renderer: everything that draws the ground's surface, and
//! nothing that knows the editor.
//!
//! It owns
//! - its pipeline, [`TerrainPipeline`] (`shaders/terrain.wgsl`: triplanar
//!   material textures, lighting, fog, the brush ring, the terrain's debug
//!   tints) and its material texture array ([`MaterialTextures`], generated
//!   procedurally by [`material_texels`] over the private `material_noise`);
//! - its GPU structs ([`gpu_data`]: the [`TerrainVertex`] and the
//!   terrain's bits of the shared chunk instance);
//! - its buffers: the chunk meshes of levels 0–3 and the per-frame draw
//!   list ([`ChunkBuffers`]), the horizon's node meshes ([`NodeBuffers`]),
//!   and the level cross-fades of both ([`LevelFades`], [`HorizonFades`]).
//!   One mesh on the GPU is a [`ChunkGpu`], the type all of them share.
//!
//! The frame renderer (`render::frame`) owns one [`ChunkBuffers`] and one
//! [`NodeBuffers`] side by side and passes the nodes to the chunk buffers
//! when it prepares and draws (their instances share one buffer). Culling
//! and the instance format come from `render::chunk_draw`.
//!
//! Imports inside this room run one way: [`gpu_data`] and [`chunk_gpu`]
//! at the bottom, then [`level_fades`], [`horizon_fades`],
//! [`node_buffers`], [`chunk_buffers`], and the pipeline on top.

pub mod chunk_buffers;
pub mod chunk_gpu;
pub mod gpu_data;
pub mod horizon_fades;
pub mod level_fades;
mod material_noise;
pub mod material_surfaces;
pub mod material_texels;
pub mod material_textures;
pub mod node_buffers;
pub mod terrain_pipeline;
pub mod texture_array;

pub use chunk_buffers::{ChunkBuffers, TerrainDrawStats};
pub use chunk_gpu::ChunkGpu;
pub use gpu_data::{SKIRT_MARK, TerrainVertex};
pub use horizon_fades::HorizonFades;
pub use level_fades::LevelFades;
pub use material_textures::MaterialTextures;
pub use node_buffers::{NodeBuffers, NodeDrawStats};
pub use terrain_pipeline::{MipSelection, TerrainPipeline};
