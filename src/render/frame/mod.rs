//! The frame renderer: the device, the per-frame inputs and uniforms, and
//! the orchestration that composes the feature renderers (sky, terrain,
//! water, lines) into one frame, offscreen or into a window surface.
//!
//! It owns
//! - the device ([`Gpu`]: instance, adapter, device, queue, capabilities);
//! - the one per-frame input, [`FrameSettings`] (with its [`Cursor`]), and
//!   the uniforms every pipeline reads as group 0 ([`globals`]:
//!   [`GlobalUniforms`], [`GlobalsBinding`]);
//! - the [`Renderer`]: every feature's pipeline and the three buffer owners
//!   side by side (terrain chunks, horizon nodes, water), fed by the meshing
//!   pipeline through [`RendererUploader`] or [`Renderer::sync_meshes`]
//!   ([`mesh_sync`]), prepared once a frame ([`renderer`]) and recorded in
//!   one or two passes ([`frame_passes`]) into its own targets
//!   ([`FrameTargets`]);
//! - what is drawn around the 3D view: the offscreen target and its
//!   readback ([`offscreen`]) and the egui pass ([`egui_pass`]), which knows
//!   nothing of the editor's panels.
//!
//! This room sits on top of the others: the feature renderers never import
//! it (they take the globals' layout and bind group as plain wgpu objects).
//! Inside it, imports run one way: [`gpu`], [`viewport`], [`draw_stats`],
//! [`frame_settings`] and [`egui_pass`] at the bottom, then [`globals`],
//! [`targets`], [`mesh_sync`], [`renderer`], [`frame_passes`], and
//! [`offscreen`] on top.

pub mod draw_stats;
pub mod egui_pass;
pub mod frame_passes;
pub mod frame_settings;
pub mod globals;
pub mod gpu;
pub mod mesh_sync;
pub mod offscreen;
pub mod renderer;
pub mod targets;
pub mod viewport;

pub use draw_stats::{DrawStats, SyncStats};
pub use frame_settings::{Cursor, CursorFalloff, CursorShape, FrameSettings};
pub use globals::{GlobalUniforms, GlobalsBinding};
pub use gpu::{Gpu, GpuError};
pub use mesh_sync::RendererUploader;
pub use renderer::Renderer;
pub use targets::FrameTargets;
pub use viewport::ViewportRect;
