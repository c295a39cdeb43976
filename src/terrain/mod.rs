//! The terrain core: cells, chunks, the sparse grid and its edits, world
//! generation and grids built from in-memory heightmaps (file decoding is
//! in `io`). Plain Rust with no GPU types, so every
//! rule of the terrain contract can be tested directly.

pub mod box_handles;
pub mod brush_stroke;
pub mod cell;
pub mod chunk;
pub mod column_source;
pub mod column_summary;
pub mod coords;
pub mod edit;
pub mod edit_command;
pub mod erosion_brush;
pub mod generate;
pub mod grid;
pub mod heightmap;
pub mod history;
pub mod history_view;
pub mod hydraulic_erosion;
pub mod hydrology;
pub mod material_rules;
pub mod node;
pub mod noise;
pub mod path_bed;
pub mod path_carve;
pub mod path_profile;
pub mod path_route;
pub mod path_spec;
pub mod path_spline;
pub mod path_surface;
pub mod path_tool;
pub mod recipe;
pub mod recipe_cook;
pub mod recipe_plan;
pub mod recipe_preview;
pub mod recipe_relief;
pub mod recipe_terrain;
pub mod region;
pub mod residency;
pub mod slope_cap;
pub mod spill_queue;
pub mod stamp;
pub mod stamp_apply;
pub mod stroke;
pub mod surface_sampler;
pub mod thermal_erosion;
pub mod water_tools;

pub use cell::{Cell, Material};
pub use chunk::{Chunk, ChunkCells};
pub use coords::{CellBox, CellCoord, ChunkCoord, ColumnCoord};
pub use grid::{EditReport, Grid, GridError};
