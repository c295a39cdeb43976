//! The low-poly style: the column heightfield read from the grid (the top
//! of each cell column quantized to steps), the greedy mesher that turns it
//! into terraced blocks with merged skirts, the per-chunk mesh of the
//! low-poly view, and the palette atlas its materials are drawn from.

pub mod column_heightfield;
pub mod greedy_heightfield;
pub mod lowpoly_chunk;
pub mod palette_atlas;
