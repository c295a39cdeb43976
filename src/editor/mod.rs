//! The interactive editor: winit window, egui panel, fly camera, brush
//! picking and sculpting. The only layer (with `render`) that touches
//! windowing and GUI crates.

pub mod column_wait;
pub mod document;
pub mod file_jobs;
pub mod file_menu;
pub mod file_session;
pub mod fly_controls;
pub mod history_panel;
pub mod panel;
pub mod path_draft;
pub mod path_panel;
pub mod previews;
pub mod shape_previews;
pub mod stamp_panel;
pub mod tool_session;
pub mod tools_panel;
pub mod ui_pointer;
pub mod view_menu;
pub mod walk;
