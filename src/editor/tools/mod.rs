//! TODO room doc

pub mod box_handles;
pub mod brush_cursor;
pub mod column_wait;
pub mod history_view;
pub mod material_combo;
pub mod path_draft;
pub mod path_panel;
pub mod previews;
pub mod shape_previews;
pub mod stamp_panel;
pub mod tool_session;
pub mod tools_panel;
