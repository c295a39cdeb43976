//! Recovery files of new streaming worlds that outlived their session
//! (spec §12: an edit spilled before a crash is offered back).
//!
//! A new streaming world spills to `untitled-….strata` in the recovery
//! folder until it is saved; a clean exit deletes it. While a session uses
//! one it holds an exclusive lock on `<file>.lock` beside it
//! ([`RecoveryLock`]; an OS file lock, so a killed process drops it). A
//! recovery file whose lock can be taken belongs to no running session: it
//! is orphaned. The lock is a separate file because closing any handle of
//! an SQLite database drops SQLite's own POSIX locks on it.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// File names of new-world recovery files start with this.
pub const RECOVERY_PREFIX: &str = "untitled-";
/// ... and end with this.
pub const RECOVERY_SUFFIX: &str = ".strata";

/// Why a recovery file could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum RecoveryLockError {
    /// Another running session holds it.
    #[error("{} is in use by another Strata session", .0.display())]
    InUse(PathBuf),
    /// The lock file could not be made or locked.
    #[error("cannot lock {}: {source}", .path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// The exclusive lock a session holds on a recovery file while it uses it;
/// released when dropped (or when the process dies).
#[derive(Debug)]
pub struct RecoveryLock {
    _file: File,
    path: PathBuf,
}

impl RecoveryLock {
    /// Locks `recovery` (through `<recovery>.lock`, made when missing).
    ///
    /// # Errors
    /// [`RecoveryLockError::InUse`] while another session holds it, else
    /// [`RecoveryLockError::Io`].
    pub fn acquire(recovery: &Path) -> Result<RecoveryLock, RecoveryLockError> {
        let path = lock_path(recovery);
        let io = |source| RecoveryLockError::Io {
            path: path.clone(),
            source,
        };
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => Ok(RecoveryLock { _file: file, path }),
            Err(TryLockError::WouldBlock) => Err(RecoveryLockError::InUse(recovery.to_path_buf())),
            Err(TryLockError::Error(e)) => Err(io(e)),
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The lock file of `recovery`.
pub fn lock_path(recovery: &Path) -> PathBuf {
    with_suffix(recovery, ".lock")
}

/// `path` with `suffix` appended to its file name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// Deletes `recovery`, its SQLite journal and its lock file (missing ones
/// are fine).
///
/// # Errors
/// The first failure to delete a file that exists.
pub fn remove_recovery_files(recovery: &Path) -> std::io::Result<()> {
    for p in [
        recovery.to_path_buf(),
        // SQLite's rollback journal: the database's name + "-journal".
        with_suffix(recovery, "-journal"),
        lock_path(recovery),
    ] {
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A recovery file no running session holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrphanedRecovery {
    /// The recovery file.
    pub path: PathBuf,
    /// When it was last written.
    pub written: SystemTime,
}

/// The orphaned recovery files in `dir`, newest first. A folder that
/// cannot be read has none; files held by a running session are skipped.
pub fn orphaned_recoveries(dir: &Path) -> Vec<OrphanedRecovery> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<OrphanedRecovery> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name();
            let name = name.to_str()?;
            if !(name.starts_with(RECOVERY_PREFIX) && name.ends_with(RECOVERY_SUFFIX)) {
                return None;
            }
            let path = entry.path();
            // Held only for this check: dropped at the end of the closure.
            let _probe = RecoveryLock::acquire(&path).ok()?;
            let written = entry.metadata().and_then(|m| m.modified()).ok()?;
            Some(OrphanedRecovery { path, written })
        })
        .collect();
    out.sort_by(|a, b| b.written.cmp(&a.written).then_with(|| a.path.cmp(&b.path)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(tag: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("strata-recovery-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_held_recovery_file_is_not_orphaned_and_a_released_one_is() {
        let dir = temp_dir("held");
        let a = dir.join("untitled-seed1-512-a.strata");
        let b = dir.join("untitled-seed2-512-b.strata");
        std::fs::write(&a, b"a").unwrap();
        std::fs::write(&b, b"b").unwrap();
        std::fs::write(dir.join("other.strata"), b"x").unwrap();
        let held = RecoveryLock::acquire(&a).unwrap();
        assert!(matches!(
            RecoveryLock::acquire(&a),
            Err(RecoveryLockError::InUse(_))
        ));
        let orphans = orphaned_recoveries(&dir);
        assert_eq!(
            orphans.iter().map(|o| o.path.clone()).collect::<Vec<_>>(),
            vec![b.clone()]
        );
        drop(held);
        assert_eq!(orphaned_recoveries(&dir).len(), 2);
        remove_recovery_files(&a).unwrap();
        assert!(!a.exists() && !lock_path(&a).exists());
        assert_eq!(orphaned_recoveries(&dir).len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_missing_folder_has_no_orphans() {
        assert!(orphaned_recoveries(Path::new("/nonexistent/strata-recovery")).is_empty());
    }
}
