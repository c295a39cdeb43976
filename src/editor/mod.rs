//! The interactive editor: winit window, egui panel, fly camera, brush
//! picking and sculpting. The only layer (with `render`) that touches
//! windowing and GUI crates.

pub mod app;
pub mod document;
pub mod file_jobs;
pub mod file_menu;
pub mod file_session;
pub mod fly_controls;
pub mod panel;
pub mod picking;
pub mod script;

pub use app::{EditorError, EditorOptions, run};
