//! A rollback journal found beside a world when it is opened. SQLite rolls
//! a hot journal back into the file on the first read, whether or not the
//! journal belongs to that file: a world restored from a backup next to the
//! journal of a crashed save would be overwritten with the journal's pages.
//! So before the first read-write open, untouched copies of the file and the
//! journal are kept, and the open reports a [`JournalRecovery`].

use crate::io::world::world_file::JournalRecovery;
use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read as _};
use std::path::{Path, PathBuf};

use super::error::WorldFileError;

/// `path` with `suffix` appended to its file name.
pub(crate) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name: OsString = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// The journal SQLite would roll back into `path` on the next open: the
/// `-journal` sibling when it exists, is not empty and its first byte is
/// not zero (SQLite's own test for a hot journal, short of the lock check).
pub(super) fn hot_journal(path: &Path) -> Option<PathBuf> {
    let journal = with_suffix(path, "-journal");
    let mut file = File::open(&journal).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut first = [0u8; 1];
    match file.read(&mut first) {
        Ok(1) if first[0] != 0 => Some(journal),
        _ => None,
    }
}

/// Removes a cold journal beside `path`: a `-journal` file that is empty or
/// whose header is zeroed (left by a save killed before its first write,
/// or finished in SQLite's persist mode), which SQLite never rolls back and
/// never removes. Call only once the file opened cleanly. A hot journal
/// is left alone. Best effort: a failure to remove it is only logged.
pub(super) fn remove_cold_journal(path: &Path) {
    let journal = with_suffix(path, "-journal");
    let Ok(meta) = std::fs::symlink_metadata(&journal) else {
        return;
    };
    if !meta.is_file() || hot_journal(path).is_some() {
        return;
    }
    match std::fs::remove_file(&journal) {
        Ok(()) => log::info!("removed the cold journal {}", journal.display()),
        Err(e) => log::warn!("cannot remove the cold journal {}: {e}", journal.display()),
    }
}

/// Copies `from` to `to`, which must not exist, and flushes the copy.
fn copy_new(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut src = File::open(from)?;
    let mut dst = OpenOptions::new().write(true).create_new(true).open(to)?;
    let result = std::io::copy(&mut src, &mut dst).and_then(|_| dst.sync_all());
    if result.is_err() {
        let _ = std::fs::remove_file(to);
    }
    result
}

/// When a hot journal lies beside `path`, keeps untouched copies of the file
/// and the journal under names that do not exist yet (never overwriting an
/// earlier copy), before anything opens the file read-write.
///
/// # Errors
/// [`WorldFileError::RecoveryCopy`] when a copy cannot be written; the file
/// and journal are then left as they are, unopened.
pub(super) fn keep_copies_before_rollback(
    path: &Path,
) -> Result<Option<JournalRecovery>, WorldFileError> {
    let Some(journal) = hot_journal(path) else {
        return Ok(None);
    };
    let fail = |copy: &Path, source: std::io::Error| WorldFileError::RecoveryCopy {
        path: path.to_path_buf(),
        journal: journal.clone(),
        copy: copy.to_path_buf(),
        source,
    };
    for n in 1..=1000u32 {
        let suffix = if n == 1 {
            ".before-recovery".to_string()
        } else {
            format!(".before-recovery-{n}")
        };
        let file_copy = with_suffix(path, &suffix);
        let journal_copy = with_suffix(&file_copy, ".journal");
        if journal_copy.exists() {
            continue;
        }
        match copy_new(path, &file_copy) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(fail(&file_copy, e)),
        }
        if let Err(e) = copy_new(&journal, &journal_copy) {
            let _ = std::fs::remove_file(&file_copy);
            if e.kind() == ErrorKind::AlreadyExists {
                continue;
            }
            return Err(fail(&journal_copy, e));
        }
        let recovery = JournalRecovery {
            path: path.to_path_buf(),
            journal,
            file_copy,
            journal_copy,
        };
        log::warn!("{recovery}");
        return Ok(Some(recovery));
    }
    Err(fail(
        &with_suffix(path, ".before-recovery-1000"),
        std::io::Error::new(ErrorKind::AlreadyExists, "too many earlier copies"),
    ))
}

/// `result`, with an error wrapped in [`WorldFileError::AfterJournalRollback`]
/// when `recovery` says a journal was rolled back into the file first.
pub(crate) fn noting<T>(
    recovery: &Option<JournalRecovery>,
    result: Result<T, WorldFileError>,
) -> Result<T, WorldFileError> {
    match (result, recovery) {
        (Err(e), Some(r)) if !matches!(e, WorldFileError::AfterJournalRollback { .. }) => {
            Err(WorldFileError::AfterJournalRollback {
                recovery: Box::new(r.clone()),
                source: Box::new(e),
            })
        }
        (result, _) => result,
    }
}
