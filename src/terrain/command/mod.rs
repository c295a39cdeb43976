//! Edits as undoable commands: the [`history::History`] of steps with its
//! memory budget, a brush stroke recorded while it is painted
//! ([`brush_stroke`]), and [`edit_command::EditCommand`], the one path by
//! which the window and scripts run region, water, stamp and path
//! operations, so both label and undo them the same way; an operation
//! dragged in the view re-derives live as one step ([`operation_drag`]); a
//! material removed from the library takes a replacement everywhere in one
//! step ([`material_removal`]).

pub mod base_seed;
pub mod brush_stroke;
pub mod document_action;
pub mod document_session;
pub mod edit_command;
pub mod history;
pub mod material_removal;
pub mod operation_drag;
