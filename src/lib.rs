//! Strata: a voxel terrain editor.
//!
//! The modules form layers; a file imports only from its own layer or the
//! ones below it (`tests/architecture.rs` checks every `use crate::` path).
//! Lowest first:
//!
//! 1. `terrain` (cells, chunks, the grid, edits and edit commands,
//!    generation), with the root helpers `camera` and `progress`;
//! 2. `mesh` (Surface Nets, materials, water and collision meshes);
//! 3. `pipeline` (meshing workers, LOD, publication, picking) and
//!    `collision` (parry3d colliders, queries, the walker);
//! 4. `io` (world files, heightmap import and export, glTF, where a world
//!    comes from);
//! 5. `script` (the script format, runner and replay);
//! 6. `render` (wgpu only: pipelines, buffers, the offscreen target);
//! 7. `editor` (tools, panels, file dialogs: egui);
//! 8. `app` (the window's event loop and the headless run: they compose
//!    everything below);
//! 9. the `strata` binary (`main.rs`: CLI parsing, `anyhow` errors).
//!
//! Only `render`, `editor`, `app` and the binary touch wgpu, winit or egui.
#![warn(missing_docs)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod app;
pub mod camera;
pub mod collision;
pub mod editor;
pub mod io;
pub mod mesh;
pub mod pipeline;
pub mod progress;
pub mod render;
pub mod script;
pub mod terrain;
