//! Strata: a voxel terrain editor.
//!
//! Data flows `terrain` (cells, chunks, grid, edits, generation, import) →
//! `mesh` (Surface Nets, materials) → `pipeline` (meshing and publication) →
//! `render` (wgpu) and `editor` (winit, egui). Only `render`, `editor` and the
//! binary touch wgpu, winit or egui.
#![warn(missing_docs)]

pub mod camera;
pub mod collision;
pub mod editor;
pub mod io;
pub mod mesh;
pub mod pipeline;
pub mod progress;
pub mod render;
pub mod terrain;
