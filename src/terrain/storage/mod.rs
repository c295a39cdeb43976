//! The storage model every other room builds on (spec §1–§3, §13): a cell
//! (material and 8-bit occupancy), 32³-cell copy-on-write chunks, the
//! coordinate spaces (cells, chunks, chunk columns, studs), the sparse
//! [`grid::Grid`] whose edits run under one revision and report the region
//! they touched, and the node keys of the levels above the chunk.

pub mod cell;
pub mod chunk;
pub mod coords;
pub mod grid;
pub mod node;
