//! TODO room doc

pub mod history_panel;
pub mod panel_keys;
pub mod side_panel;
pub mod ui_pointer;
