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
//! - [`heightmap_import`]: reads a heightmap PNG and its sidecar and builds
//!   a grid from it.
//! - [`gltf_export`]: the full-detail surface as binary glTF 2.0 (`.glb`).
//! - [`world_source`]: where a world comes from (generator, heightmap,
//!   world file or a given grid), turned into a grid.

pub mod gltf_export;
pub mod heightmap_export;
pub mod heightmap_import;
pub mod world_file;
pub mod world_source;

use std::path::{Path, PathBuf};

/// A sibling of `path` to write before renaming it over `path`:
/// `dir/.name.tmp-PID-N` (unique within the process).
pub(crate) fn temp_path_for(path: &Path) -> PathBuf {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.tmp-{}-{n}", std::process::id()))
}

/// `Err` when `path` exists and is not a regular file (a directory, a
/// device such as `/dev/full`): replacing it by renaming would destroy it.
pub(crate) fn check_replaceable(path: &Path) -> std::io::Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(std::io::Error::other(
            "exists and is not a regular file; choose a file path",
        )),
        _ => Ok(()),
    }
}

/// Writes `path` all or nothing, and durably: `write` fills a sibling
/// temporary file (which does not exist when it is called), the file is
/// fsynced, renamed over `path`, and the parent directory is fsynced so the
/// rename survives a power loss. Missing parent directories are created. On
/// any error the temporary file is removed and an existing `path` is left as
/// it was; a `path` that exists and is not a regular file (a directory, a
/// device) is never replaced. `io_err` turns the checks', the fsync's and
/// the rename's I/O errors into `E`.
///
/// The one atomic write of the crate: world saves, exports, screenshots and
/// stats all go through it.
pub(crate) fn write_atomically<E>(
    path: &Path,
    write: impl FnOnce(&Path) -> Result<(), E>,
    io_err: impl Fn(std::io::Error) -> E,
) -> Result<(), E> {
    check_replaceable(path).map_err(&io_err)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(&io_err)?;
    }
    let tmp = temp_path_for(path);
    // A leftover of a killed write by an earlier process that had the same id.
    let _ = std::fs::remove_file(&tmp);
    let result = write(&tmp).and_then(|()| {
        sync_file(&tmp)
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(&io_err)
    });
    match result {
        Ok(()) => sync_parent_dir(path),
        Err(_) => {
            // Best effort: the temporary file is nobody's output.
            let _ = std::fs::remove_file(&tmp);
        }
    }
    result
}

/// Flushes a written file's bytes to disk before it replaces anything.
fn sync_file(path: &Path) -> std::io::Result<()> {
    std::fs::File::open(path).and_then(|f| f.sync_all())
}

/// Flushes a directory entry change (the rename) to disk where the platform allows.
fn sync_parent_dir(path: &Path) {
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        // Best effort: the rename itself already happened atomically.
        let _ = std::fs::File::open(dir).and_then(|d| d.sync_all());
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_atomic_write_keeps_the_old_file_and_leaves_no_temp() {
        let dir = std::env::temp_dir().join(format!("strata-atomic-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.glb");
        std::fs::write(&path, b"ORIGINAL").unwrap();
        // A writer that fails half way (like a full disk during an export).
        let result: Result<(), std::io::Error> = write_atomically(
            &path,
            |tmp| {
                std::fs::write(tmp, b"PART")?;
                Err(std::io::Error::other("disk full"))
            },
            |e| e,
        );
        assert!(result.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"ORIGINAL");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "no temporary file left"
        );
        // A successful write replaces it.
        write_atomically(&path, |tmp| std::fs::write(tmp, b"NEW"), |e| e).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"NEW");
        // A device or directory is never replaced.
        assert!(
            write_atomically(
                Path::new("/dev/null"),
                |tmp| std::fs::write(tmp, b"x"),
                |e| e
            )
            .is_err()
        );
        assert!(write_atomically(&dir, |tmp| std::fs::write(tmp, b"x"), |e| e).is_err());
        assert!(
            Path::new("/dev/null")
                .metadata()
                .is_ok_and(|m| !m.is_file())
        );
    }
}
