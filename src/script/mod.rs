//! Scripted editing sessions (`strata --headless --script FILE`): the file
//! format ([`format`]), the runner that applies entries through the same
//! edit commands and brush strokes as the window ([`runner`]), the
//! full-detail surface `*_xz` points are dropped onto ([`surface`]), and the
//! frame-by-frame replay through the meshing pipeline ([`replay`]).
//!
//! Above `io` and below `render`: a replay publishes and presents through a
//! [`ReplayTarget`] (the pipeline's [`crate::pipeline::ChunkUploader`] and a
//! present call), never through a GPU type, so scripts run the same with or
//! without a renderer.

pub mod format;
pub mod replay;
pub mod runner;
pub mod surface;

pub use format::{Script, ScriptError};
pub use replay::{ReplayError, ReplayReport, ReplayTarget, UploadOnly, replay_script};
pub use runner::{RunError, ScriptRunner};
