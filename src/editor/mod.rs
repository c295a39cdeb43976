//! The interactive editor: winit window, egui panel, fly camera, brush
//! picking and sculpting. The only layer (with `render`) that touches
//! windowing and GUI crates.

pub mod files;
pub mod labels;
pub mod navigation;
pub mod panel;
pub mod tools;
pub mod view_menu;
pub mod window_ui;
