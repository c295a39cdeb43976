//! The side panel: brush and material settings, statistics, the history
//! list, view and overlay switches, the keys that change its settings, and
//! whether a click belongs to the UI or to the tools.

pub mod history_panel;
pub mod layers_panel;
pub mod layers_view;
pub mod panel_keys;
pub mod side_panel;
pub mod ui_input;
pub mod ui_pointer;
