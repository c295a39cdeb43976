//! What every per-chunk draw list shares (the terrain's chunks and horizon
//! nodes, the water surfaces): the per-chunk instance the shaders read
//! ([`ChunkInstance`], its Pod and vertex layout), the per-frame instance
//! buffer ([`InstanceBuffer`]), the CPU frustum and distance culling with
//! its sort ([`cull_and_sort`]) and how mesh buffers get their contents
//! ([`mesh_upload_usage`]).
//!
//! Why a room of its own: the terrain and the water draw the same chunks
//! with the same instance layout and must agree on what "visible" means;
//! keeping the shared part here lets both depend on it without depending on
//! each other. Nothing here knows a pipeline or a mesh type.

pub mod culling;
pub mod gpu_data;
pub mod instance_buffer;
pub mod mesh_upload;

pub use culling::{CullView, DrawOrder, Frustum, VisibleChunk, cull_and_sort};
pub use gpu_data::{ChunkInstance, pack_snorm8};
pub use instance_buffer::InstanceBuffer;
pub use mesh_upload::mesh_upload_usage;
