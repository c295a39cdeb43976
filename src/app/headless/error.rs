//! The errors of a headless run.

use std::path::PathBuf;

use crate::io::world::world_source::WorldSourceError;
use crate::render::GpuError;
use crate::render::frame::offscreen::OffscreenError;
use crate::script::ReplayError;

/// Errors of a headless run.
#[derive(Debug, thiserror::Error)]
pub enum HeadlessError {
    /// No GPU device.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// The offscreen target could not be made, read back or written.
    #[error(transparent)]
    Offscreen(#[from] OffscreenError),
    /// The world could not be generated or imported.
    #[error(transparent)]
    World(#[from] WorldSourceError),
    /// The script could not be replayed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The script's walk failed.
    #[error("scripted walk failed: {0}")]
    Walk(String),
    /// A chunk column of a streaming world could not be loaded.
    #[error(transparent)]
    Load(#[from] crate::terrain::streaming::column_source::SourceError),
    /// A streaming world's first view stopped loading and meshing: nothing
    /// progressed for the stall limit (`--stall-timeout-s`).
    #[error(transparent)]
    Stalled(#[from] crate::pipeline::stall_watch::Stalled),
    /// Writing an output file failed.
    #[error("cannot write {path}: {message}")]
    Write {
        /// The output file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}
