//! Worlds on disk and terrain interchange.
//!
//! Plain Rust on top of `terrain`, `mesh` and `pipeline` (no GPU types), so
//! the editor, the headless CLI and tests all save, load and export the same
//! way:
//!
//! - [`world_file`]: the `.strata` world format (SQLite), with atomic full
//!   saves, incremental saves of only the changed chunks, and verified loads.
//! - [`heightmap_export`]: the top surface as a 16-bit grayscale PNG with a
//!   JSON sidecar that the heightmap importer reads back.
//! - [`gltf_export`]: the full-detail surface as binary glTF 2.0 (`.glb`).

pub mod gltf_export;
pub mod heightmap_export;
pub mod world_file;

use std::path::PathBuf;

/// Why an export failed. Messages name the file.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The export was cancelled before anything was written.
    #[error("export to {path} was cancelled")]
    Cancelled {
        /// The requested output file.
        path: PathBuf,
    },
    /// The world has no solid surface to export.
    #[error("cannot export {path}: the world has no solid surface")]
    NoSurface {
        /// The requested output file.
        path: PathBuf,
    },
    /// The output would exceed what the format can hold.
    #[error("cannot export {path}: {message}")]
    TooLarge {
        /// The requested output file.
        path: PathBuf,
        /// Which limit.
        message: String,
    },
    /// Writing failed.
    #[error("cannot write {path}: {message}")]
    Write {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

impl ExportError {
    fn write(path: &std::path::Path, e: impl std::fmt::Display) -> ExportError {
        ExportError::Write {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    }
}
