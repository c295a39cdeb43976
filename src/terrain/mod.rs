//! The terrain core: cells, chunks, the sparse grid and its edits, world
//! generation and grids built from in-memory heightmaps (file decoding is
//! in `io`). Plain Rust with no GPU types, so every rule of the terrain
//! contract can be tested directly.
//!
//! One room per subsystem, lowest first:
//! - [`storage`]: cells, chunks, coordinates, the grid, nodes (spec §1–§3, §13);
//! - [`streaming`]: where columns come from and go (spec §12);
//! - [`generation`]: the default generator, heightmap grids, noise;
//! - [`recipe`]: generator recipes and their stages (erosion, rivers, materials);
//! - [`editing`]: brushes and their per-cell kernels, strokes, region tools,
//!   water tools, undo history and the edit commands every tool runs through;
//! - [`stamp`]: height and cell stamps and how a placement becomes cells;
//! - [`path`]: roads, rivers and routes laid along splines;
//! - [`document`]: the world document, a base under editable layers (spec §14);
//! - [`materials`]: the per-world material library (names, textures, tints).

pub mod command;
pub mod document;
pub mod editing;
pub mod generation;
pub mod materials;
pub mod message_numbers;
pub mod path;
pub mod recipe;
pub mod stamp;
pub mod storage;
pub mod streaming;

pub use storage::cell::{Cell, Material};
pub use storage::chunk::{Chunk, ChunkCells};
pub use storage::coords::{CellBox, CellCoord, ChunkCoord, ColumnCoord};
pub use storage::grid::{EditReport, Grid, GridError};
