//! The interactive editor's parts, without the event loop: the File menu
//! and its jobs ([`files`]), the tools and their panel sections ([`tools`]),
//! the side panel ([`panel`]), moving through the world ([`navigation`]),
//! the View menu, the material picker the tool sections share, and the
//! egui pass that composes them ([`window_ui`]).
//! With `render` and `app`, the only layers that touch egui and winit.

pub mod files;
pub mod labels;
pub mod material_combo;
pub mod materials_window;
pub mod navigation;
pub mod panel;
pub mod tools;
pub mod view_menu;
pub mod window_ui;
