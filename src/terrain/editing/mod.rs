//! Changing cells: brush settings ([`brush`]) apart from the entry points
//! that apply them ([`kernels`]), the per-cell kernels of each tool
//! (`cell_kernels`) and the pre-edit neighbourhood they read
//! (`neighbourhood`), the erosion brushes, where along
//! a cursor path a stroke applies ([`stroke`]), region and water tools, and
//! the [`recorder::Recorder`] that keeps what one operation overwrote so it
//! can be undone. Nothing here knows about stamps, paths or the history
//! stack; those build on it.

pub mod brush;
mod cell_kernels;
pub mod erosion_brush;
pub mod kernels;
mod neighbourhood;
pub mod recorder;
pub mod region;
pub mod stroke;
pub mod water_tools;
