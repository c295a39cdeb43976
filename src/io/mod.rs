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

/// Age past which a temporary file of [`temp_path_for`]'s naming is stale
/// even when a process with its id is running (the id may have been reused).
const STALE_TEMP_AGE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// The process id in `file_name` when it is a temporary name that
/// [`temp_path_for`] makes for a file named `name` (`.name.tmp-PID-N`).
fn temp_file_pid(file_name: &str, name: &str) -> Option<u32> {
    let rest = file_name
        .strip_prefix('.')?
        .strip_prefix(name)?
        .strip_prefix(".tmp-")?;
    let (pid, n) = rest.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(n) {
        return None;
    }
    pid.parse().ok()
}

/// Whether process `pid` is running: `Some` where the platform can tell
/// (Linux, through `/proc`), `None` elsewhere.
fn process_running(pid: u32) -> Option<bool> {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return None;
    }
    Some(proc.join(pid.to_string()).exists())
}

/// Removes the temporary siblings of `path` that killed writes left behind
/// (`.NAME.tmp-PID-N` for `path`'s NAME, see [`temp_path_for`]): those of a
/// process that is no longer running, and any older than a day (the id may
/// have been reused; where the platform cannot tell whether a process runs,
/// age alone decides). This process's own are kept unless that old: another
/// thread may be writing one. Best effort: returns the files removed.
pub(crate) fn remove_stale_temps(path: &Path) -> Vec<PathBuf> {
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Vec::new();
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let own = std::process::id();
    let mut removed = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let file_name = entry.file_name();
        let Some(pid) = temp_file_pid(&file_name.to_string_lossy(), &name) else {
            continue;
        };
        let Ok(md) = entry.metadata() else { continue };
        if !md.is_file() {
            continue;
        }
        let old = md
            .modified()
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_TEMP_AGE);
        let dead = pid != own && process_running(pid) == Some(false);
        if (old || dead) && std::fs::remove_file(entry.path()).is_ok() {
            log::info!(
                "removed {}, left by an interrupted write of {}",
                entry.path().display(),
                path.display()
            );
            removed.push(entry.path());
        }
    }
    removed
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
/// device) is never replaced. Stale temporary files of earlier, killed
/// writes of `path` are removed first ([`remove_stale_temps`]). `io_err` turns the checks', the fsync's and
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
    // Leftovers of killed writes of `path` by processes that are gone.
    remove_stale_temps(path);
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
