//! World generation: the default generator (a pure function of seed and
//! cell coordinates, spec §11), grids built from heightmaps (held in memory
//! or read a tile at a time), the column filling both share, and the
//! IEEE-exact noise they draw from.

pub mod column_fill;
pub mod generate;
pub mod generated_columns;
pub mod heightmap;
pub mod heightmap_terrain;
pub mod noise;
pub mod tiled_samples;
