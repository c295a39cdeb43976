//! The world document (spec §14): a base that generates cells without
//! authoring, under an ordered stack of layers whose operations (stamps,
//! paths, region operations, brush strokes) stay editable. Cells are
//! derived from it; a change re-derives only its dirty closure, so moving
//! a stamp, hiding a layer or editing a road keeps everything done after
//! it.
//!
//! - [`base`]: what makes the base cells, any column on demand;
//! - [`operation`]: one operation, its footprint and halo, and how it applies;
//! - [`layers`]: the layer stack and the actions on it;
//! - [`material_remap`]: a removed material's replacement in operations;
//! - [`operation_edit`]: moving an operation and changing its settings;
//! - [`stroke_anchor`]: strokes that keep their height above the ground;
//! - [`closure`]: which columns a change dirties;
//! - [`derive`]: whole and incremental derivation.

pub mod base;
pub mod closure;
pub mod derive;
pub mod layers;
pub mod material_remap;
pub mod operation;
pub mod operation_edit;
pub mod stroke_anchor;

#[cfg(test)]
mod tests;
