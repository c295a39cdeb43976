//! The water renderer: the water surfaces of the chunks, drawn after the
//! opaque terrain, blended, reading the opaque depth to colour the water by
//! its thickness.
//!
//! It owns
//! - its pipelines, [`WaterPipeline`] (`shaders/water.wgsl`: the
//!   depth-reading one and the flat fallback) and the bind group over the
//!   opaque depth;
//! - its GPU structs ([`gpu_data`]: the [`WaterVertex`], the wave loop and
//!   the waves' reach) and the shoreline fade baked into the vertices
//!   ([`outline_fade()`]);
//! - its buffers, [`WaterBuffers`]: one surface per chunk, staged and
//!   promoted by the frame renderer in the same steps as the chunk's
//!   terrain, culled and sorted back to front each frame.
//!
//! The instance format and culling come from `render::chunk_draw`; the
//! water knows nothing of the terrain's buffers.

pub mod gpu_data;
pub mod outline_fade;
pub mod water_buffers;
pub mod water_pipeline;

pub use gpu_data::{WAVE_LOOP_SECS, WAVE_MAX_DISPLACEMENT_STUDS, WaterVertex};
pub use outline_fade::outline_fade;
pub use water_buffers::{WaterBuffers, WaterDrawStats, WaterGpu};
pub use water_pipeline::{WaterPipeline, can_read_depth_in_pass};
