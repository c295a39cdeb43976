//! The tools: their settings and side-panel sections (brush, region, stamp,
//! path), the tool session (stroke, region drag, clipboard, undo history),
//! one frame of the tools from one input ([`tool_driver`]), edits that wait
//! for chunk columns, the region box's handles and the 3D previews (paste,
//! flatten plane, stamp ghost, path), picking and dragging an operation
//! in the view ([`operation_pick`]), and a base seed change running in
//! the background.

pub mod base_job;
pub mod box_handles;
pub mod brush_cursor;
pub mod column_wait;
pub mod history_view;
pub mod operation_pick;
pub mod path_draft;
pub mod path_panel;
pub mod previews;
pub mod shape_previews;
pub mod stamp_panel;
pub mod tool_driver;
pub mod tool_session;
pub mod tools_panel;
