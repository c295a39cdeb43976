//! The overlay renderers: everything drawn over the shaded scene as lines
//! or edges, for debugging and for the editor's previews, and the switches
//! that say which debug overlays are on.
//!
//! It owns
//! - the overlay switches ([`Overlay`], [`OverlaySet`]), their legend tints
//!   and how the wireframe is drawn on this adapter ([`WireframeMode`]);
//! - the line renderer: its pipelines and vertex buffer ([`LinePipeline`]),
//!   its GPU struct ([`gpu_data`]: [`LineVertex`]), the frame's lines on
//!   the CPU ([`LineBatch`], with the editor's [`PreviewLines`]) and what
//!   fills them each frame ([`build_overlay_lines`]: chunk bounds, residency
//!   outlines, previews, seam-audit markers);
//! - the `residency` overlay's column states ([`ResidencyView`]);
//! - the wireframe renderer ([`WireframePipeline`]), which draws the
//!   terrain's prepared chunks a second time as edges.
//!
//! The wireframe and the chunk bounds read the terrain's buffers
//! (`render::terrain`); the terrain knows nothing of the overlays (the
//! frame renderer hands it the residency codes and switches).

pub mod gpu_data;
pub mod line_batch;
pub mod line_pipeline;
pub mod overlay_lines;
pub mod overlays;
pub mod residency_overlay;
pub mod wireframe_pipeline;

pub use gpu_data::LineVertex;
pub use line_batch::{CHUNK_LINE_COLOR, LineBatch, MARKER_COLOR, PreviewLines, disc_segments};
pub use line_pipeline::LinePipeline;
pub use overlay_lines::{OverlayLinesInput, build_overlay_lines};
pub use overlays::{Overlay, OverlaySet, WireframeMode};
pub use residency_overlay::{ResidencyTint, ResidencyView};
pub use wireframe_pipeline::WireframePipeline;
