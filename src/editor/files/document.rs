//! The open world as a document: which file it lives in, whether it has
//! unsaved changes, where autosave writes its recovery copy, and the list of
//! recently opened files.
//!
//! "Unsaved" is exact, not a flag someone must remember to set: the document
//! records the grid state its file holds (generation, revision and a
//! copy-on-write snapshot of the cells), and compares content, not only
//! revisions: undoing back to the saved cells is clean again. No egui or
//! winit here, so the rules are unit-tested.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::io::world::world_file::{WorldFile, WorldMeta};
use crate::terrain::storage::grid::Grid;

/// Default time between autosaves of a world with unsaved changes.
pub const DEFAULT_AUTOSAVE_INTERVAL: Duration = Duration::from_secs(5 * 60);

/// Largest `recent.json` read: 8 paths fit in a few KiB; a FIFO, a device
/// or a huge file there is ignored instead of blocking or filling memory.
pub const MAX_RECENT_FILE_BYTES: u64 = 64 * 1024;

/// Most entries kept in the recent-files list.
pub const RECENT_FILES_MAX: usize = 8;

/// File name of the recovery copy of a world that was never saved, inside
/// [`data_dir`].
pub const UNTITLED_RECOVERY_NAME: &str = "untitled.recovery.strata";

/// A grid as a file holds it: its `(generation, revision)` and a
/// copy-on-write snapshot of its cells (no cell is copied; the chunks'
/// storage is shared until the live grid edits them).
#[derive(Clone, Debug)]
pub struct GridState {
    /// `(generation, revision)` when the state was taken.
    pub revision: (u64, u64),
    /// The cells (`None` for a streaming grid: a snapshot would keep every
    /// column resident at the time alive, past the memory budget).
    cells: Option<Box<Grid>>,
}

impl GridState {
    /// True when `grid` holds exactly these cells: the same revision, or
    /// (after edits and undos) the same content.
    pub fn matches(&self, grid: &Grid) -> bool {
        self.revision == (grid.generation(), grid.revision())
            || self.cells.as_ref().is_some_and(|c| grid.same_cells(c))
    }
}

/// The state of `grid` as a [`GridState`]. Of a streaming grid only the
/// revision is kept (loads and evictions change no revision, edits do).
pub fn grid_state(grid: &Grid) -> GridState {
    GridState {
        revision: (grid.generation(), grid.revision()),
        cells: (!grid.is_streaming()).then(|| Box::new(grid.clone())),
    }
}

/// The open world's file and save state.
#[derive(Debug)]
pub struct Document {
    path: Option<PathBuf>,
    /// Handle for incremental saves; `None` before the first save, or while a
    /// save job holds it.
    file: Option<WorldFile>,
    /// Metadata written with the next save (generator settings, created time).
    pub meta: WorldMeta,
    /// The grid state the file (or, for a new world, its generator) holds.
    saved: Option<GridState>,
    /// The grid state the recovery file holds.
    autosaved: Option<GridState>,
    last_autosave: Instant,
    /// True for a streaming world (saved through its streaming world file,
    /// not a [`WorldFile`]).
    streaming: bool,
    /// The material library's fingerprint as the file holds it.
    saved_materials: u64,
    /// [`Document::is_dirty`]'s answer for a grid `(generation, revision)`,
    /// so the content comparison runs once per revision, not every frame.
    dirty_cache: std::cell::Cell<Option<((u64, u64), bool)>>,
}

impl Document {
    /// A new world that is not in any file yet. It counts as unchanged until
    /// edited (it can be generated again from its settings).
    pub fn untitled(grid: &Grid, meta: WorldMeta) -> Document {
        Document {
            path: None,
            file: None,
            saved_materials: meta.materials.fingerprint(),
            meta,
            saved: Some(grid_state(grid)),
            autosaved: None,
            last_autosave: Instant::now(),
            streaming: false,
            dirty_cache: std::cell::Cell::new(None),
        }
    }

    /// A new world with nothing saved yet that already differs from any
    /// file, e.g. a recovered copy: unsaved until the user saves it.
    pub fn unsaved(path: Option<PathBuf>, meta: WorldMeta) -> Document {
        Document {
            path,
            file: None,
            saved_materials: meta.materials.fingerprint(),
            meta,
            saved: None,
            autosaved: None,
            last_autosave: Instant::now(),
            streaming: false,
            dirty_cache: std::cell::Cell::new(None),
        }
    }

    /// A world just loaded from `path` (with the handle that loaded it, when
    /// it loaded cleanly).
    pub fn opened(
        path: PathBuf,
        file: Option<WorldFile>,
        grid: &Grid,
        meta: WorldMeta,
    ) -> Document {
        let clean = file.is_some();
        Document {
            path: Some(path),
            file,
            saved_materials: meta.materials.fingerprint(),
            meta,
            saved: clean.then(|| grid_state(grid)),
            autosaved: None,
            last_autosave: Instant::now(),
            streaming: false,
            dirty_cache: std::cell::Cell::new(None),
        }
    }

    /// A streaming world (spec §12), new (`path` `None`) or opened from its
    /// streaming world file: `clean` when it holds what the file (or, for a
    /// new world, its generator) holds, so unchanged until edited.
    pub fn streamed(path: Option<PathBuf>, grid: &Grid, meta: WorldMeta, clean: bool) -> Document {
        let saved = clean.then(|| grid_state(grid));
        Document {
            path,
            streaming: true,
            saved,
            ..Document::unsaved(None, meta)
        }
    }

    /// True for a streaming world.
    pub fn is_streaming(&self) -> bool {
        self.streaming
    }

    /// Records a successful save of a streaming world in state `state` to
    /// `path` (its streaming world file from now on).
    pub fn saved_streamed(&mut self, path: PathBuf, state: GridState) {
        self.path = Some(path);
        self.saved = Some(state);
        self.saved_materials = self.meta.materials.fingerprint();
        self.dirty_cache.set(None);
    }

    /// The world's file, if it has one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// True when `grid` or the material library differs from what the
    /// file holds.
    pub fn is_dirty(&self, grid: &Grid) -> bool {
        if self.meta.materials.fingerprint() != self.saved_materials {
            return true;
        }
        let key = (grid.generation(), grid.revision());
        if let Some((k, dirty)) = self.dirty_cache.get()
            && k == key
        {
            return dirty;
        }
        let dirty = !self.saved.as_ref().is_some_and(|s| s.matches(grid));
        self.dirty_cache.set(Some((key, dirty)));
        dirty
    }

    /// The file name, or "Untitled".
    pub fn display_name(&self) -> String {
        self.path
            .as_deref()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "Untitled".to_string())
    }

    /// The window title: `"*name.strata — Strata"` with unsaved changes,
    /// `"name.strata — Strata"` without.
    pub fn window_title(&self, grid: &Grid) -> String {
        let mark = if self.is_dirty(grid) { "*" } else { "" };
        format!("{mark}{} — Strata", self.display_name())
    }

    /// Takes the incremental-save handle if it belongs to `path` (a save job
    /// borrows it and gives it back through [`Document::saved`]).
    pub fn take_file_for(&mut self, path: &Path) -> Option<WorldFile> {
        match &self.file {
            Some(f) if f.path() == path => self.file.take(),
            _ => None,
        }
    }

    /// Gives back a handle taken with [`Document::take_file_for`] after a
    /// save that failed or was cancelled.
    pub fn return_file(&mut self, file: WorldFile) {
        if self.path.as_deref() == Some(file.path()) {
            self.file = Some(file);
        }
    }

    /// Records a successful save of grid state `state` to `path`.
    pub fn saved(&mut self, path: PathBuf, file: WorldFile, state: GridState) {
        self.path = Some(path);
        self.file = Some(file);
        self.saved = Some(state);
        self.saved_materials = self.meta.materials.fingerprint();
        self.dirty_cache.set(None);
    }

    /// Where autosave writes this world's recovery copy: beside the world
    /// file (`name.recovery.strata`), or in [`data_dir`] for an untitled world.
    /// `None` for a streaming world: its edits spill into its own streaming
    /// world file (or the recovery file of a new one), see
    /// `crate::app::streamed_world`.
    pub fn recovery_path(&self) -> Option<PathBuf> {
        if self.streaming {
            return None;
        }
        match &self.path {
            Some(p) => Some(recovery_path_for(p)),
            None => data_dir().map(|d| d.join(UNTITLED_RECOVERY_NAME)),
        }
    }

    /// True when an autosave is due at `now`: the world has changes that
    /// neither the file nor the recovery copy holds, and `interval` has
    /// passed since the last autosave (or since the document was opened).
    pub fn autosave_due(&self, grid: &Grid, now: Instant, interval: Duration) -> bool {
        let holds = |s: &Option<GridState>| s.as_ref().is_some_and(|s| s.matches(grid));
        now.saturating_duration_since(self.last_autosave) >= interval
            && !holds(&self.saved)
            && !holds(&self.autosaved)
    }

    /// Records that the recovery copy now holds `state` (or that an autosave
    /// was attempted at `now`, with `state` `None` when it failed).
    pub fn autosaved(&mut self, state: Option<GridState>, now: Instant) {
        if state.is_some() {
            self.autosaved = state;
        }
        self.last_autosave = now;
    }
}

/// The recovery file beside `world`: `dir/name.recovery.strata` for
/// `dir/name.strata`.
pub fn recovery_path_for(world: &Path) -> PathBuf {
    let stem = world
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "world".to_string());
    world.with_file_name(format!("{stem}.recovery.strata"))
}

/// The recovery file worth offering on start: `recovery` when it exists and
/// is newer than `world` (or `world` does not exist), with its modification time.
pub fn newer_recovery(recovery: &Path, world: Option<&Path>) -> Option<SystemTime> {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let recovered = modified(recovery)?;
    match world.and_then(modified) {
        Some(saved) if saved >= recovered => None,
        _ => Some(recovered),
    }
}

/// Strata's settings folder: `$STRATA_CONFIG_DIR`, else
/// `$XDG_CONFIG_HOME/strata`, else `$HOME/.config/strata`.
pub fn config_dir() -> Option<PathBuf> {
    dir_from_env("STRATA_CONFIG_DIR", "XDG_CONFIG_HOME", ".config")
}

/// Strata's data folder (untitled recovery files): `$STRATA_DATA_DIR`, else
/// `$XDG_DATA_HOME/strata`, else `$HOME/.local/share/strata`.
pub fn data_dir() -> Option<PathBuf> {
    dir_from_env("STRATA_DATA_DIR", "XDG_DATA_HOME", ".local/share")
}

fn dir_from_env(own: &str, xdg: &str, home_rel: &str) -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var(own)
        .or_else(|| var(xdg).map(|d| d.join("strata")))
        .or_else(|| var("HOME").map(|h| h.join(home_rel).join("strata")))
}

/// Recently opened or saved worlds, newest first, kept in
/// `recent.json` in [`config_dir`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecentFiles {
    paths: Vec<PathBuf>,
    store: Option<PathBuf>,
}

impl RecentFiles {
    /// The list stored in `store` (a JSON array of paths); empty when the
    /// file is missing or unreadable (a broken list is not worth an error).
    pub fn load(store: Option<PathBuf>) -> RecentFiles {
        let paths = store
            .as_deref()
            .and_then(|p| crate::io::read_bounded(p, MAX_RECENT_FILE_BYTES).ok())
            .and_then(|bytes| serde_json::from_slice::<Vec<PathBuf>>(&bytes).ok())
            .unwrap_or_default();
        RecentFiles { paths, store }
    }

    /// The list at its default place (`recent.json` in [`config_dir`]).
    pub fn load_default() -> RecentFiles {
        RecentFiles::load(config_dir().map(|d| d.join("recent.json")))
    }

    /// The paths, newest first.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// Moves `path` to the front (at most [`RECENT_FILES_MAX`] kept) and
    /// writes the list.
    ///
    /// # Errors
    /// The I/O error when the list cannot be written (the in-memory list is
    /// updated either way).
    pub fn push(&mut self, path: &Path) -> std::io::Result<()> {
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        self.paths.retain(|p| p != &path);
        self.paths.insert(0, path);
        self.paths.truncate(RECENT_FILES_MAX);
        let Some(store) = &self.store else {
            return Ok(());
        };
        if let Some(dir) = store.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let json = serde_json::to_vec_pretty(&self.paths).map_err(std::io::Error::other)?;
        std::fs::write(store, json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::cell::{Cell, Material};
    use crate::terrain::storage::coords::CellBox;
    use glam::IVec3;

    fn small_grid() -> Grid {
        let mut g = Grid::new();
        g.edit_region(CellBox::new(IVec3::ZERO, IVec3::splat(4)), |_, _| {
            Cell::full(Material::ROCK)
        })
        .unwrap();
        g
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("strata-doc-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn an_edit_makes_the_document_dirty_and_a_save_clean() {
        let mut grid = small_grid();
        let mut doc = Document::untitled(&grid, WorldMeta::default());
        assert!(!doc.is_dirty(&grid));
        assert_eq!(doc.window_title(&grid), "Untitled — Strata");
        grid.edit_region(CellBox::new(IVec3::ZERO, IVec3::ONE), |_, _| Cell::EMPTY)
            .unwrap();
        assert!(doc.is_dirty(&grid));
        assert_eq!(doc.window_title(&grid), "*Untitled — Strata");

        let path = scratch("dirty").join("w.strata");
        let (file, _) = WorldFile::save_full(&path, &grid, &doc.meta).unwrap();
        doc.saved(path.clone(), file, grid_state(&grid));
        assert!(!doc.is_dirty(&grid));
        assert_eq!(doc.window_title(&grid), "w.strata — Strata");
        assert!(doc.take_file_for(&path).is_some());
        assert!(
            doc.take_file_for(&path).is_none(),
            "the handle is lent once"
        );
    }

    #[test]
    fn restyling_a_material_makes_the_document_dirty_and_a_save_clean() {
        let grid = small_grid();
        let mut doc = Document::untitled(&grid, WorldMeta::default());
        doc.meta
            .materials
            .set_tint(crate::terrain::Material::ROCK, [200, 180, 160])
            .unwrap();
        assert!(doc.is_dirty(&grid));
        let path = scratch("restyled").join("w.strata");
        let (file, _) = WorldFile::save_full(&path, &grid, &doc.meta).unwrap();
        doc.saved(path, file, grid_state(&grid));
        assert!(!doc.is_dirty(&grid));
        doc.meta
            .materials
            .reset(crate::terrain::Material::ROCK)
            .unwrap();
        assert!(
            doc.is_dirty(&grid),
            "back to the built-in look is a change too"
        );
    }

    #[test]
    fn undoing_back_to_the_saved_cells_is_clean_again() {
        // The input that showed it: an edit, Ctrl+Z, and the title still
        // said unsaved because the revision had moved on.
        let mut grid = small_grid();
        let doc = Document::untitled(&grid, WorldMeta::default());
        let mut history = crate::terrain::command::history::History::new(1 << 20);
        let mut rec = crate::terrain::editing::recorder::Recorder::new("Clear");
        let b = CellBox::new(IVec3::ZERO, IVec3::ONE);
        rec.record(&mut grid, b, |g| g.edit_region(b, |_, _| Cell::EMPTY))
            .unwrap();
        history.commit(rec, &grid);
        assert!(doc.is_dirty(&grid));
        history.undo(&mut grid).unwrap();
        assert!(!doc.is_dirty(&grid), "undo restored the saved cells");
        assert_eq!(doc.window_title(&grid), "Untitled — Strata");
        history.redo(&mut grid).unwrap();
        assert!(doc.is_dirty(&grid));
        // Painting a cell back by hand (new storage, same content) is clean too.
        grid.edit_region(b, |_, _| Cell::full(Material::ROCK))
            .unwrap();
        assert!(!doc.is_dirty(&grid));
        // A world that gained a chunk differs even where the old ones match.
        grid.edit_region(CellBox::new(IVec3::splat(40), IVec3::splat(41)), |_, _| {
            Cell::full(Material::SAND)
        })
        .unwrap();
        assert!(doc.is_dirty(&grid));
    }

    #[test]
    fn autosave_is_due_only_for_changes_nothing_holds_after_the_interval() {
        let mut grid = small_grid();
        let mut doc = Document::untitled(&grid, WorldMeta::default());
        let t0 = Instant::now();
        let later = t0 + DEFAULT_AUTOSAVE_INTERVAL + Duration::from_secs(1);
        assert!(!doc.autosave_due(&grid, later, DEFAULT_AUTOSAVE_INTERVAL));
        grid.edit_region(CellBox::new(IVec3::ZERO, IVec3::ONE), |_, _| Cell::EMPTY)
            .unwrap();
        assert!(
            !doc.autosave_due(&grid, t0, DEFAULT_AUTOSAVE_INTERVAL),
            "too soon"
        );
        assert!(doc.autosave_due(&grid, later, DEFAULT_AUTOSAVE_INTERVAL));
        doc.autosaved(Some(grid_state(&grid)), later);
        let much_later = later + DEFAULT_AUTOSAVE_INTERVAL * 2;
        assert!(!doc.autosave_due(&grid, much_later, DEFAULT_AUTOSAVE_INTERVAL));
    }

    #[test]
    fn recovery_sits_beside_the_world_and_is_offered_only_when_newer() {
        let dir = scratch("recovery");
        let world = dir.join("valley.strata");
        let recovery = recovery_path_for(&world);
        assert_eq!(recovery, dir.join("valley.recovery.strata"));
        assert_eq!(
            newer_recovery(&recovery, Some(&world)),
            None,
            "no recovery file"
        );
        std::fs::write(&world, b"w").unwrap();
        std::fs::write(&recovery, b"r").unwrap();
        let old = SystemTime::now() - Duration::from_secs(600);
        std::fs::File::options()
            .write(true)
            .open(&world)
            .unwrap()
            .set_modified(old)
            .unwrap();
        assert!(newer_recovery(&recovery, Some(&world)).is_some());
        std::fs::File::options()
            .write(true)
            .open(&recovery)
            .unwrap()
            .set_modified(old - Duration::from_secs(60))
            .unwrap();
        assert_eq!(
            newer_recovery(&recovery, Some(&world)),
            None,
            "older than the world"
        );
    }

    #[test]
    fn recent_files_keep_the_newest_first_without_duplicates_and_persist() {
        let dir = scratch("recent");
        let store = dir.join("recent.json");
        let mut recent = RecentFiles::load(Some(store.clone()));
        assert!(recent.paths().is_empty());
        for i in 0..10 {
            recent.push(&dir.join(format!("w{i}.strata"))).unwrap();
        }
        recent.push(&dir.join("w5.strata")).unwrap();
        assert_eq!(recent.paths().len(), RECENT_FILES_MAX);
        assert_eq!(recent.paths()[0], dir.join("w5.strata"));
        assert_eq!(recent.paths()[1], dir.join("w9.strata"));
        assert_eq!(
            recent
                .paths()
                .iter()
                .filter(|p| p.ends_with("w5.strata"))
                .count(),
            1
        );
        assert_eq!(RecentFiles::load(Some(store)), recent);
        std::fs::write(dir.join("broken.json"), b"{not json").unwrap();
        assert!(
            RecentFiles::load(Some(dir.join("broken.json")))
                .paths()
                .is_empty()
        );
    }

    #[test]
    fn a_recent_list_that_is_a_device_or_too_large_is_ignored() {
        let dir = scratch("recent-hostile");
        assert!(
            RecentFiles::load(Some(PathBuf::from("/dev/zero")))
                .paths()
                .is_empty()
        );
        let big = dir.join("recent.json");
        std::fs::write(&big, vec![b' '; MAX_RECENT_FILE_BYTES as usize + 1]).unwrap();
        assert!(RecentFiles::load(Some(big)).paths().is_empty());
    }
}
