//! What opening a world did with a leftover rollback journal, reported on
//! success and carried by the errors of a load that failed after it.

use std::path::PathBuf;

/// What opening a world did with a leftover rollback journal: SQLite rolled
/// it back into the file (the normal recovery after an interrupted save),
/// after untouched copies of the file and the journal were kept, so nothing
/// the user had is lost if the journal did not belong to the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalRecovery {
    /// The world file.
    pub path: PathBuf,
    /// The journal that was found (`NAME-journal`), now rolled back.
    pub journal: PathBuf,
    /// The file as it was before the rollback (`NAME.before-recovery`, or
    /// `NAME.before-recovery-N` when that exists).
    pub file_copy: PathBuf,
    /// The journal as it was (`<file_copy>.journal`; SQLite does not apply
    /// it to the copy by itself).
    pub journal_copy: PathBuf,
}

impl std::fmt::Display for JournalRecovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} had a leftover journal {} (from an interrupted save), which was rolled back into \
             it when it was opened; the file as it was before is kept at {} and the journal at {}",
            self.path.display(),
            self.journal.display(),
            self.file_copy.display(),
            self.journal_copy.display()
        )
    }
}
