//! Strata: a voxel terrain editor.
//!
//! The modules below form layers, declared here lowest first; a file names
//! only its own module or one declared before it, and no circle of files
//! forms inside a folder (`tests/architecture.rs` parses every file and
//! reads the order from this list). Only the modules marked "GUI layer" and
//! the binary touch wgpu, winit or egui.
#![warn(missing_docs)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

// Progress reporting and cancellation for long jobs (no dependencies).
pub mod progress;

// Cells, chunks, the grid and its edits, generation, stamps, paths and
// streaming sources.
pub mod terrain;

// The editor camera (position, orientation, projection).
pub mod camera;

// Surface Nets, materials, water, skirts, nodes and collision meshes.
pub mod mesh;

// Meshing workers, LOD, publication, the horizon, picking and audits.
pub mod pipeline;

// parry3d colliders, queries and the walking character.
pub mod collision;

// World files, heightmap import and export, glTF, where a world comes from.
pub mod io;

// The script format, runner and replay.
pub mod script;

// GUI layer: wgpu pipelines, buffers, the offscreen target.
pub mod render;

// GUI layer: tools, panels and file dialogs (egui).
pub mod editor;

// GUI layer: the window's event loop and the headless run.
pub mod app;
