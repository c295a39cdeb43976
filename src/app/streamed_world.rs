//! A streaming world and its backing file (spec §12): the generator makes
//! unedited columns, the file keeps edited ones. A new world spills to a
//! recovery file until it is saved; an opened world spills into its own
//! file's pending changes, which the next save keeps and a crash leaves for
//! the next open to find.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::io::streaming_file::{SaveReport, StreamingFileError, StreamingWorldFile};
use crate::terrain::ColumnCoord;
use crate::terrain::column_source::{ColumnChunks, EditStore, GeneratedColumns};
use crate::terrain::generate::GeneratorSettings;
use crate::terrain::grid::Grid;
use crate::terrain::residency::Residency;

/// A streaming world's settings and backing file.
#[derive(Debug)]
pub struct StreamedWorld {
    /// Generator settings (from the file when opened).
    pub settings: GeneratorSettings,
    /// The backing file: the opened world file, or the recovery file of a
    /// new world.
    pub file: Arc<StreamingWorldFile>,
    /// Columns with unsaved spills when the file was opened (work a crash
    /// left behind, recovered by loading them).
    pub recovered_columns: usize,
    /// True while the backing file is a recovery file (a new world).
    pub untitled: bool,
}

impl StreamedWorld {
    /// A new world of `settings` whose spills go to a fresh recovery file
    /// in `recovery_dir`.
    ///
    /// # Errors
    /// [`StreamingFileError`] when the recovery file cannot be made.
    pub fn new(
        settings: &GeneratorSettings,
        recovery_dir: &Path,
    ) -> Result<StreamedWorld, StreamingFileError> {
        let name = format!(
            "untitled-seed{}-{}-{}.strata",
            settings.seed,
            settings.size_cells,
            std::process::id()
        );
        let path = recovery_dir.join(name);
        let file = StreamingWorldFile::create(&path, settings)?;
        Ok(StreamedWorld {
            settings: settings.clone(),
            file: Arc::new(file),
            recovered_columns: 0,
            untitled: true,
        })
    }

    /// Opens a streaming world file (reads no column).
    ///
    /// # Errors
    /// [`StreamingFileError`] for a file that is not a valid streaming world.
    pub fn open(path: &Path) -> Result<StreamedWorld, StreamingFileError> {
        let file = StreamingWorldFile::open(path)?;
        let recovered_columns = file.pending_count()?;
        Ok(StreamedWorld {
            settings: file.settings().clone(),
            file: Arc::new(file),
            recovered_columns,
            untitled: false,
        })
    }

    /// The residency of this world within `budget_bytes`: generated
    /// columns, edited ones from (and spilled to) the file.
    pub fn residency(&self, budget_bytes: usize) -> Residency {
        Residency::new(
            Arc::new(GeneratedColumns::new(&self.settings)),
            Arc::clone(&self.file) as Arc<dyn EditStore>,
            budget_bytes,
        )
    }

    /// Saves to `target`: the resident edited columns and every spill go
    /// into the backing file in one transaction, then, when `target` is
    /// another file, the whole file is copied there. Only edited columns
    /// are ever written.
    ///
    /// # Errors
    /// [`StreamingFileError`]; the target is then unchanged (a failed copy
    /// leaves no partial file behind, SQLite writes it whole).
    pub fn save(
        &self,
        residency: &mut Residency,
        grid: &Grid,
        target: &Path,
        camera: Option<[f64; 5]>,
    ) -> Result<SaveReport, StreamingFileError> {
        residency.sync_edits(grid);
        let edited: Vec<ColumnCoord> = residency.edited_columns();
        let columns: Vec<(ColumnCoord, ColumnChunks)> = edited
            .iter()
            .map(|c| (*c, grid.column_chunks(*c)))
            .collect();
        if camera.is_some() {
            self.file.set_camera(camera);
        }
        let mut report = self.file.save(&columns)?;
        for c in edited {
            residency.mark_stored(c);
        }
        if !same_path(target, self.file.path()) {
            if target.exists() {
                std::fs::remove_file(target).map_err(|source| {
                    StreamingFileError::File(crate::io::world_file::WorldFileError::Io {
                        path: target.to_path_buf(),
                        source,
                    })
                })?;
            }
            let copy = self.file.save_as(target)?;
            report.file_bytes = std::fs::metadata(copy.path()).map_or(0, |m| m.len());
        }
        Ok(report)
    }

    /// Removes the recovery file of a new world (after a clean exit).
    pub fn remove_recovery(&self) {
        if self.untitled {
            let path: PathBuf = self.file.path().to_path_buf();
            for p in [path.clone(), path.with_extension("strata-journal")] {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

/// Where a new streaming world spills its edits until it is saved:
/// `$TMPDIR/strata-recovery/` (made when missing).
///
/// # Errors
/// [`StreamingFileError`] when the folder cannot be made.
pub fn default_recovery_dir() -> Result<PathBuf, StreamingFileError> {
    let dir = std::env::temp_dir().join("strata-recovery");
    std::fs::create_dir_all(&dir).map_err(|source| {
        StreamingFileError::File(crate::io::world_file::WorldFileError::Io {
            path: dir.clone(),
            source,
        })
    })?;
    Ok(dir)
}

/// True when `a` and `b` name the same file.
pub fn same_path(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}
