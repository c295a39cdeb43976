//! The interactive editor: winit window, egui panel, fly camera, brush
//! picking and sculpting. The only layer (with `render`) that touches
//! windowing and GUI crates.

pub mod app;
pub mod fly_controls;
pub mod panel;
pub mod picking;
pub mod script;
pub mod walk;

pub use app::{EditorError, EditorOptions, run};
