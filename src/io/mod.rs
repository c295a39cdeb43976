//! Worlds on disk and terrain interchange.
//!
//! Plain Rust on top of `terrain`, `mesh` and `pipeline` (no GPU types), so
//! the editor, the headless CLI and tests all save, load and export the same
//! way. Three rooms, each with one job:
//!
//! - [`world`]: world files and what else an editing session keeps on disk:
//!   the `.strata` world format, the streaming world format, recovery files,
//!   stamp files, and where a world comes from. Needs only `terrain` (and
//!   the heightmap room, for heightmap worlds).
//! - [`heightmap`]: heightmap interchange: importing a 16-bit grayscale PNG
//!   and its sidecar, exporting the top surface as one, and keeping a
//!   heightmap inside a streaming world file.
//! - [`export`]: meshes out to other tools: binary glTF 2.0 (`.glb`) of the
//!   full-detail and the low-poly surface. The only room that names
//!   `pipeline`.
//! - [`materials`]: texture sets read from disk for a world's material
//!   library.
//!
//! This file holds what every room shares: bounded reads of untrusted
//! files, output path checks, the one atomic write, and [`ExportError`].
//! The rooms name this file and `world` names `heightmap`; nothing else
//! crosses between them.

pub mod export;
pub mod heightmap;
pub mod materials;
pub mod world;

use std::io::Read as _;
use std::path::{Path, PathBuf};

/// Why [`read_bounded`] or [`open_bounded`] refused or failed to read a file.
#[derive(Debug, thiserror::Error)]
pub enum BoundedReadError {
    /// Opening, inspecting or reading the file failed (e.g. it does not exist).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The path (after following symlinks) is a FIFO, a device, a directory
    /// or a socket: reading it could block forever or never end.
    #[error("it is a {kind}, not a regular file")]
    NotRegularFile {
        /// What it is, e.g. "FIFO" or "character device".
        kind: &'static str,
    },
    /// The file is larger than the reader's limit.
    #[error("it is {size_bytes} bytes, more than the limit of {limit_bytes} bytes")]
    TooLarge {
        /// The file's size (or the bytes read before the limit was hit).
        size_bytes: u64,
        /// The limit.
        limit_bytes: u64,
    },
}

impl BoundedReadError {
    /// True when the file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, BoundedReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

/// A name for what a non-regular file is, for messages.
pub(crate) fn file_kind(file_type: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if file_type.is_fifo() {
            return "FIFO";
        }
        if file_type.is_char_device() {
            return "character device";
        }
        if file_type.is_block_device() {
            return "block device";
        }
        if file_type.is_socket() {
            return "socket";
        }
    }
    if file_type.is_dir() {
        "directory"
    } else {
        "special file"
    }
}

/// Checks that `path` is a regular file (following symlinks) of at most
/// `max_bytes` before anything is read, then opens it; the returned reader
/// stops after `max_bytes` (so a file that grows is still bounded). The
/// opened file is checked again, so a path swapped for a device after the
/// first check is refused too.
///
/// # Errors
/// [`BoundedReadError`]: I/O errors (a missing file has kind `NotFound`),
/// a FIFO, device, directory or socket, or a file above `max_bytes`.
pub fn open_bounded(
    path: &Path,
    max_bytes: u64,
) -> Result<std::io::Take<std::fs::File>, BoundedReadError> {
    let check = |meta: std::fs::Metadata| {
        if !meta.is_file() {
            return Err(BoundedReadError::NotRegularFile {
                kind: file_kind(meta.file_type()),
            });
        }
        if meta.len() > max_bytes {
            return Err(BoundedReadError::TooLarge {
                size_bytes: meta.len(),
                limit_bytes: max_bytes,
            });
        }
        Ok(())
    };
    // Before opening: opening a FIFO blocks until a writer appears.
    check(std::fs::metadata(path)?)?;
    let file = std::fs::File::open(path)?;
    check(file.metadata()?)?;
    Ok(file.take(max_bytes))
}

/// Reads all of `path`, a regular file of at most `max_bytes` (see
/// [`open_bounded`]); the file type and size are checked before reading, so
/// `/dev/zero`, a FIFO or a huge file is refused at once.
///
/// # Errors
/// As [`open_bounded`], and [`BoundedReadError::TooLarge`] for a file that
/// grew past `max_bytes` while it was read.
pub fn read_bounded(path: &Path, max_bytes: u64) -> Result<Vec<u8>, BoundedReadError> {
    let mut reader = open_bounded(path, max_bytes)?;
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes)?;
    // One more byte past the limit means the file grew while it was read.
    let mut probe = [0u8; 1];
    if reader.into_inner().read(&mut probe)? > 0 {
        return Err(BoundedReadError::TooLarge {
            size_bytes: bytes.len() as u64 + 1,
            limit_bytes: max_bytes,
        });
    }
    Ok(bytes)
}

/// [`read_bounded`] as UTF-8 text.
///
/// # Errors
/// As [`read_bounded`]; invalid UTF-8 is an [`std::io::ErrorKind::InvalidData`] I/O error.
pub fn read_bounded_to_string(path: &Path, max_bytes: u64) -> Result<String, BoundedReadError> {
    String::from_utf8(read_bounded(path, max_bytes)?)
        .map_err(|e| BoundedReadError::Io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
}

/// Why an output path cannot be written (see [`check_output_path`]).
#[derive(Debug, thiserror::Error)]
pub enum OutputPathError {
    /// The path names no file (`/`, `..`, a path ending in `..`).
    #[error("cannot write {path}: it names no file")]
    NoFileName {
        /// The output path.
        path: PathBuf,
    },
    /// The path exists and is not a regular file (a directory, a device).
    #[error("cannot write {path}: it is a {kind}, not a regular file")]
    NotAFile {
        /// The output path.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// The nearest existing ancestor of the path is not a directory.
    #[error("cannot write {path}: {dir} is not a directory")]
    ParentNotADirectory {
        /// The output path.
        path: PathBuf,
        /// Its nearest existing ancestor.
        dir: PathBuf,
    },
    /// No file can be created in the directory the output would go in.
    #[error("cannot write {path}: cannot create a file in {dir}: {source}")]
    NotWritable {
        /// The output path.
        path: PathBuf,
        /// The directory probed.
        dir: PathBuf,
        /// Why the probe file could not be created.
        source: std::io::Error,
    },
}

/// True when `a` and `b` name the same file: two existing files are
/// compared by their canonical paths (symbolic links resolved); otherwise by
/// the canonical path of their directory and their file name, so an output
/// that does not exist yet is compared too. The one test of "is this the
/// same file?" for incremental saves and output clashes.
pub fn same_file(a: &Path, b: &Path) -> bool {
    if let (Ok(x), Ok(y)) = (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        return x == y;
    }
    let key = |p: &Path| {
        let dir = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        (
            std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()),
            p.file_name().map(|n| n.to_os_string()),
        )
    };
    key(a) == key(b)
}

/// Checks, before a long run, that `path` can be written the way
/// [`write_atomically`] writes it: it names a file, is not an existing
/// directory or device, and its nearest existing ancestor directory accepts
/// a new file (probed by creating and removing an empty hidden file there;
/// missing directories below it would be created by the write).
///
/// # Errors
/// [`OutputPathError`] naming the path and the reason.
pub fn check_output_path(path: &Path) -> Result<(), OutputPathError> {
    let owned = || path.to_path_buf();
    if path.file_name().is_none() {
        return Err(OutputPathError::NoFileName { path: owned() });
    }
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
    {
        return Err(OutputPathError::NotAFile {
            path: owned(),
            kind: file_kind(meta.file_type()),
        });
    }
    let mut dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let meta = loop {
        match std::fs::metadata(&dir) {
            Ok(meta) => break meta,
            Err(_) => match dir.parent() {
                Some(up) if !up.as_os_str().is_empty() => dir = up.to_path_buf(),
                _ => {
                    break std::fs::metadata(".").map_err(|source| {
                        OutputPathError::NotWritable {
                            path: owned(),
                            dir: PathBuf::from("."),
                            source,
                        }
                    })?;
                }
            },
        }
    };
    if !meta.is_dir() {
        return Err(OutputPathError::ParentNotADirectory { path: owned(), dir });
    }
    let probe = temp_path_for(&dir.join("strata-write-probe"));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            // Best effort: an empty hidden file is all that could be left.
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(source) => Err(OutputPathError::NotWritable {
            path: owned(),
            dir,
            source,
        }),
    }
}

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
    /// A setting of the export is out of range; nothing was written.
    #[error("cannot export {path}: {message}")]
    InvalidSettings {
        /// The requested output file.
        path: PathBuf,
        /// Which setting and why.
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

    #[test]
    fn output_paths_are_checked_before_a_run() {
        let dir = std::env::temp_dir().join(format!("strata-outpath-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        assert!(check_output_path(&dir.join("stats.json")).is_ok());
        // Missing directories are created by the write.
        assert!(check_output_path(&dir.join("new/sub/stats.json")).is_ok());
        assert!(!dir.join("new").exists(), "the check creates nothing");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "no probe left");
        let file = dir.join("file");
        std::fs::write(&file, b"x").unwrap();
        assert!(
            check_output_path(&file).is_ok(),
            "an existing file is replaced"
        );
        assert!(matches!(
            check_output_path(&file.join("stats.json")),
            Err(OutputPathError::ParentNotADirectory { .. })
        ));
        assert!(matches!(
            check_output_path(&dir),
            Err(OutputPathError::NotAFile {
                kind: "directory",
                ..
            })
        ));
        assert!(matches!(
            check_output_path(Path::new("/dev/null")),
            Err(OutputPathError::NotAFile {
                kind: "character device",
                ..
            })
        ));
        assert!(matches!(
            check_output_path(Path::new("/dev/full/stats.json")),
            Err(OutputPathError::ParentNotADirectory { .. })
        ));
        assert!(matches!(
            check_output_path(Path::new("/")),
            Err(OutputPathError::NoFileName { .. })
        ));
        let e = check_output_path(Path::new("/proc/strata-stats.json")).unwrap_err();
        assert!(matches!(e, OutputPathError::NotWritable { .. }), "{e}");
        assert!(e.to_string().contains("/proc/strata-stats.json"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn same_file_sees_one_file_through_any_path_existing_or_not() {
        let dir = std::env::temp_dir().join(format!("strata-same-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let a = dir.join("w.strata");
        std::fs::write(&a, b"x").unwrap();
        // The same existing file through `..` and through a symbolic link.
        assert!(same_file(&a, &dir.join("sub/../w.strata")));
        std::os::unix::fs::symlink(&a, dir.join("link.strata")).unwrap();
        assert!(same_file(&a, &dir.join("link.strata")));
        // A file that does not exist yet, named two ways.
        assert!(same_file(&dir.join("new.png"), &dir.join("sub/../new.png")));
        assert!(!same_file(&dir.join("new.png"), &dir.join("other.png")));
        assert!(!same_file(&a, &dir.join("new.png")));
        // Relative to the working directory.
        assert!(same_file(Path::new("out.png"), Path::new("./out.png")));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
