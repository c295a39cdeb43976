//! The window's streaming world (spec §12): making or opening one, its
//! first camera, saving it to its streaming world file (Save and Save As),
//! the autosave checkpoint, the live memory budget and the panel's figures.
//!
//! The window drives the same per-frame step as a headless replay
//! ([`TerrainStreaming::stream_columns_with`]): it never waits for a load,
//! so the first frame appears before any column is generated and terrain
//! fills in as workers finish. An edit that waits for columns puts them
//! first in that step's demand ([`crate::editor::tools::column_wait`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::camera::{Camera, FramedView};
use crate::editor::files::file_session::FileSession;
use crate::editor::panel::side_panel::StreamingPanelStats;
use crate::io::world::recovery_files::{orphaned_recoveries, remove_recovery_files};
use crate::io::world::streaming_file::{StreamingFileError, StreamingWorldFile};
use crate::pipeline::TerrainStreaming;
use crate::pipeline::WorldMeshes;
use crate::pipeline::lod::LodSettings;
use crate::progress::Progress;
use crate::terrain::command::document_action::WorldDocument;
use crate::terrain::generation::generate::GeneratorSettings;
use crate::terrain::storage::coords::ColumnCoord;
use crate::terrain::storage::grid::Grid;
use crate::terrain::streaming::column_source::EditStore;

use super::streamed_world::{StreamedWorld, default_recovery_dir};

/// What a [`PendingWorld`] is making.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PendingKind {
    /// A heightmap imported as a new streaming world.
    Import(PathBuf),
    /// A streaming world file opened (or, `recovering`, a crash's recovery
    /// file reopened as the untitled world it was).
    Open {
        /// The file.
        path: PathBuf,
        /// A recovery file reopened.
        recovering: bool,
    },
}

/// A streaming world made on its own thread, so the window keeps drawing:
/// a heightmap import ([`StreamedWorld::import_heightmap`]: seconds of
/// decoding for a 16,384² map) or an opened file whose recipe plan must be
/// cooked again (missing or stale in the file: seconds per stage, counted
/// in [`PendingWorld::progress`] and cancellable there). The editor takes
/// no edits meanwhile (the open world is about to be replaced).
#[derive(Debug)]
pub struct PendingWorld {
    kind: PendingKind,
    started: std::time::Instant,
    progress: Arc<Progress>,
    handle: std::thread::JoinHandle<Result<StreamedWorld, StreamingFileError>>,
}

impl PendingWorld {
    /// Starts importing `png` with `settings` (its recovery file goes to
    /// the default recovery folder).
    ///
    /// # Errors
    /// The I/O error when no thread can be started.
    pub fn start_import(
        png: PathBuf,
        settings: crate::io::heightmap::heightmap_import::HeightmapSettings,
    ) -> std::io::Result<PendingWorld> {
        let path = png.clone();
        PendingWorld::start(
            PendingKind::Import(png),
            "strata-heightmap-import",
            move |_| StreamedWorld::import_heightmap(&path, &settings, &default_recovery_dir()?),
        )
    }

    /// Starts opening the streaming world file `path` (`recovering`: a
    /// recovery file, as [`StreamedWorld::recover`]).
    ///
    /// # Errors
    /// The I/O error when no thread can be started.
    pub fn start_open(path: PathBuf, recovering: bool) -> std::io::Result<PendingWorld> {
        let file = path.clone();
        PendingWorld::start(
            PendingKind::Open { path, recovering },
            "strata-world-open",
            move |progress| {
                if recovering {
                    StreamedWorld::recover_with(&file, progress)
                } else {
                    StreamedWorld::open_with(&file, progress)
                }
            },
        )
    }

    fn start(
        kind: PendingKind,
        thread_name: &str,
        make: impl FnOnce(&Progress) -> Result<StreamedWorld, StreamingFileError> + Send + 'static,
    ) -> std::io::Result<PendingWorld> {
        let progress = Arc::new(Progress::new());
        let shared = Arc::clone(&progress);
        let handle = std::thread::Builder::new()
            .name(thread_name.into())
            .spawn(move || make(&shared))?;
        Ok(PendingWorld {
            kind,
            started: std::time::Instant::now(),
            progress,
            handle,
        })
    }

    /// What is being made.
    pub fn kind(&self) -> &PendingKind {
        &self.kind
    }

    /// The file read: the heightmap or the world file.
    pub fn path(&self) -> &Path {
        match &self.kind {
            PendingKind::Import(png) => png,
            PendingKind::Open { path, .. } => path,
        }
    }

    /// The progress of a recipe's cook while opening (stage label and
    /// fraction), and its Cancel.
    pub fn progress(&self) -> &Arc<Progress> {
        &self.progress
    }

    /// True once the reading thread is done ([`PendingWorld::try_finish`]
    /// then returns its result).
    pub fn is_finished(&self) -> bool {
        self.handle.is_finished()
    }

    /// Seconds since it started.
    pub fn elapsed_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// The world once the thread is done (`Err(self)` while it still
    /// runs); a panicked thread is reported as an I/O error.
    pub fn try_finish(self) -> Result<Result<StreamedWorld, StreamingFileError>, PendingWorld> {
        if !self.handle.is_finished() {
            return Err(self);
        }
        let path = self.path().to_path_buf();
        Ok(self.handle.join().unwrap_or_else(|_| {
            Err(StreamingFileError::File(
                crate::io::world::world_file::WorldFileError::Io {
                    path,
                    source: std::io::Error::other("the thread stopped unexpectedly"),
                },
            ))
        }))
    }
}

/// A streaming world open in the window and its backing file.
#[derive(Debug)]
pub struct WindowStream {
    /// The world's settings and backing file.
    pub world: StreamedWorld,
    /// The columns pinned for the walker's collision (spec §12).
    walker_pins: Vec<ColumnCoord>,
}

impl WindowStream {
    /// A new streaming world of `settings` (it spills to a recovery file
    /// until saved) and its streaming state within `budget_bytes`.
    ///
    /// # Errors
    /// [`StreamingFileError`] when the recovery file cannot be made.
    pub fn create(
        settings: &GeneratorSettings,
        lod: LodSettings,
        budget_bytes: usize,
    ) -> Result<(WindowStream, TerrainStreaming), StreamingFileError> {
        let world = StreamedWorld::new(settings, &default_recovery_dir()?)?;
        Ok(Self::streaming(world, lod, budget_bytes))
    }

    /// Opens the streaming world file at `path` (reads no column).
    ///
    /// # Errors
    /// [`StreamingFileError`] for a file that is not a valid streaming world.
    pub fn open(
        path: &Path,
        lod: LodSettings,
        budget_bytes: usize,
    ) -> Result<(WindowStream, TerrainStreaming), StreamingFileError> {
        Ok(Self::streaming(
            StreamedWorld::open(path)?,
            lod,
            budget_bytes,
        ))
    }

    /// The window's streaming state for `world` (a finished
    /// [`PendingImport`], say) within `budget_bytes`.
    pub fn from_world(
        world: StreamedWorld,
        lod: LodSettings,
        budget_bytes: usize,
    ) -> (WindowStream, TerrainStreaming) {
        Self::streaming(world, lod, budget_bytes)
    }

    /// At start: offers the newest recovery file of a new streaming world
    /// that no running session holds (a crash or a kill left it) and that
    /// holds spilled edits; those that hold none are deleted. Does nothing
    /// while another recovery offer is open.
    pub fn offer_orphaned_recovery(session: &mut FileSession) {
        if session.menu.recovery_offer().is_some() {
            return;
        }
        let Ok(dir) = default_recovery_dir() else {
            return;
        };
        for orphan in orphaned_recoveries(&dir) {
            let edited = StreamingWorldFile::open(&orphan.path).and_then(|f| f.pending_count());
            match edited {
                Ok(0) => {
                    if let Err(e) = remove_recovery_files(&orphan.path) {
                        log::warn!("cannot remove {}: {e}", orphan.path.display());
                    }
                }
                Ok(columns) => {
                    session
                        .menu
                        .offer_streamed_recovery(orphan.path, orphan.written, columns);
                    return;
                }
                // Not a streaming world (or damaged): left alone, and said.
                Err(e) => log::warn!("recovery file {}: {e}", orphan.path.display()),
            }
        }
    }

    fn streaming(
        world: StreamedWorld,
        lod: LodSettings,
        budget_bytes: usize,
    ) -> (WindowStream, TerrainStreaming) {
        let streaming = TerrainStreaming::streaming(lod, world.residency(budget_bytes));
        (
            WindowStream {
                world,
                walker_pins: Vec::new(),
            },
            streaming,
        )
    }

    /// The camera the world opens with ([`WindowStream::initial_view`]).
    pub fn initial_camera(&self) -> Camera {
        self.initial_view().camera
    }

    /// The view the world opens with: the camera stored in its file (which
    /// frames nothing), else the world's default view
    /// ([`StreamedWorld::default_view`]) with the draw distance it needs.
    pub fn initial_view(&self) -> FramedView {
        self.world
            .file
            .camera()
            .map(|[x, y, z, yaw, pitch]| {
                FramedView::unframed(Camera::new(
                    glam::DVec3::new(x, y, z),
                    yaw as f32,
                    pitch as f32,
                ))
            })
            .unwrap_or_else(|| self.world.default_view())
    }

    /// The file the world saves to without asking: its own streaming world
    /// file, `None` for a new world (Save asks for a path).
    pub fn saved_path(&self) -> Option<&Path> {
        (!self.world.untitled).then(|| self.world.file.path())
    }

    /// Saves to `target` (Save or Save As): the edited columns, resident
    /// and spilled, and the world `document` (its layers) go into the
    /// world's file; a different `target` gets a
    /// copy and becomes the world's file from now on (a new world's
    /// recovery file is then removed). Returns the status message.
    ///
    /// # Errors
    /// A message naming the file; the world keeps its old file.
    pub fn save(
        &mut self,
        streaming: &mut TerrainStreaming,
        grid: &Grid,
        target: &Path,
        camera: &Camera,
        document: Option<&WorldDocument>,
    ) -> Result<String, String> {
        let Some(residency) = streaming.residency_mut() else {
            return Err("this world does not stream".to_string());
        };
        let p = camera.pos_world;
        let camera = [
            p.x,
            p.y,
            p.z,
            f64::from(camera.yaw_deg),
            f64::from(camera.pitch_deg),
        ];
        let failed = |e: StreamingFileError| format!("Cannot save {}: {e}", target.display());
        let report = self
            .world
            .save(residency, grid, target, Some(camera), document)
            .map_err(failed)?;
        if !crate::io::same_file(target, self.world.file.path()) {
            // Spills from now on go to the saved copy, which holds every
            // edit the old file held (the save moved them into it).
            let saved = StreamedWorld::open(target).map_err(failed)?;
            residency
                .set_store(Arc::clone(&saved.file) as Arc<dyn EditStore>)
                .map_err(|e| failed(StreamingFileError::Spill(e)))?;
            let old = std::mem::replace(&mut self.world, saved);
            old.remove_recovery();
        }
        Ok(format!(
            "Saved {} ({} edited columns written, {} spilled ones kept, {:.1} MB)",
            target.display(),
            report.columns_written,
            report.pending_saved,
            report.file_bytes as f64 / 1e6
        ))
    }

    /// The autosave of a streaming world: queues every edited resident
    /// column for the backing file's pending changes (they stay resident;
    /// the writes run off the frame thread), so a crash loses nothing.
    /// Returns the columns queued. A write that fails is logged, counted
    /// (`failed_spills`) and written again by the next save.
    pub fn checkpoint(streaming: &mut TerrainStreaming, grid: &Grid) -> usize {
        streaming
            .residency_mut()
            .map_or(0, |r| r.store_edited(grid))
    }

    /// Applies the panel's memory budget (MiB) when it changed: the next
    /// frame evicts down to it.
    /// One frame's streaming step of the window: pins the walker's ground
    /// (`walker_columns`, empty when not walking; released when it is
    /// empty), then asks for the columns a waiting edit needs, the
    /// walker's, and the view's, in that order ([`TerrainStreaming::stream_columns_with`]).
    /// Never waits for a load.
    pub fn stream_frame(
        &mut self,
        streaming: &mut TerrainStreaming,
        grid: &mut Grid,
        meshes: &WorldMeshes,
        camera_pos_world: glam::DVec3,
        edit_columns: &[ColumnCoord],
        walker_columns: &[ColumnCoord],
    ) {
        if let Some(r) = streaming.residency_mut() {
            r.repin(&mut self.walker_pins, walker_columns);
        }
        let priority: Vec<ColumnCoord> =
            edit_columns.iter().chain(walker_columns).copied().collect();
        streaming.stream_columns_with(grid, meshes, camera_pos_world, &priority);
    }

    /// Sets the residency's budget to `budget_mib` (the panel's slider).
    pub fn apply_budget(streaming: &mut TerrainStreaming, budget_mib: u32) {
        if let Some(r) = streaming.residency_mut() {
            let bytes = (budget_mib as usize) << 20;
            if r.budget_bytes() != bytes {
                r.set_budget_bytes(bytes);
            }
        }
    }

    /// The panel's memory figures of `streaming` (`None` for a world held
    /// whole), with what a waiting edit says.
    pub fn panel_stats(
        streaming: &TerrainStreaming,
        grid: &Grid,
        edit_waiting: Option<String>,
    ) -> Option<StreamingPanelStats> {
        let r = streaming.residency()?;
        Some(StreamingPanelStats {
            resident_bytes: r.resident_bytes(),
            budget_bytes: r.budget_bytes(),
            resident_chunks: grid.chunk_count(),
            loading: r.loads_in_flight(),
            spilled: r.stats.spilled,
            budget_limited: streaming.is_budget_limited(),
            edit_waiting,
            failed_writes: r.stats.failed_spills,
            writes_pending: r.spills_in_flight(),
        })
    }

    /// Closes the world: a new world's recovery file goes (the user saved
    /// or chose not to).
    pub fn close(self) {
        self.world.remove_recovery();
    }

    /// True when `path` is a streaming world file.
    pub fn is_streaming_file(path: &Path) -> bool {
        StreamingWorldFile::is_streaming_file(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::cell::{Cell, Material};
    use crate::terrain::storage::coords::{CellBox, ColumnCoord};
    use glam::{DVec3, IVec3};

    #[test]
    fn save_as_moves_a_new_world_into_its_file_and_later_spills_follow() {
        let settings = GeneratorSettings {
            seed: 3,
            size_cells: 16_384,
        };
        let (mut stream, mut streaming) =
            WindowStream::create(&settings, LodSettings::default(), 1 << 30).expect("created");
        let recovery = stream.world.file.path().to_path_buf();
        assert!(recovery.exists());
        assert_eq!(stream.saved_path(), None, "a new world asks for a path");
        let mut grid = Grid::streaming();
        let column = ColumnCoord::new(10, 10);
        let residency = streaming.residency_mut().expect("streams");
        residency.load_now(&mut grid, [column]).expect("generated");
        let b = CellBox::new(IVec3::new(330, 300, 330), IVec3::new(334, 304, 334));
        grid.edit_region(b, |_, _| Cell::full(Material::SNOW))
            .expect("resident");
        let dir = std::env::temp_dir().join(format!("strata-wstream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let target = dir.join("big.strata");
        let camera = Camera::new(DVec3::new(1.0, 2.0, 3.0), 10.0, -20.0);
        let message = stream
            .save(&mut streaming, &grid, &target, &camera, None)
            .expect("saved");
        assert!(message.contains("1 edited columns written"), "{message}");
        assert!(!recovery.exists(), "the recovery file went");
        assert_eq!(stream.saved_path(), Some(target.as_path()));
        assert_eq!(stream.initial_camera().pos_world, camera.pos_world);
        // Edit again and evict: the spill goes into the saved file.
        grid.edit_region(b, |_, _| Cell::full(Material::SAND))
            .expect("resident");
        let residency = streaming.residency_mut().expect("streams");
        residency.end_frame();
        residency.evict(&mut grid, &[column]);
        assert!(!grid.is_column_resident(column));
        // The spill is written off the frame thread; flush waits for it.
        residency.flush_spills().expect("stored");
        assert_eq!(stream.world.file.pending_count().expect("count"), 1);
        residency
            .load_now(&mut grid, [column])
            .expect("loaded back");
        assert_eq!(
            grid.cell(crate::terrain::storage::coords::CellCoord::new(
                331, 301, 331
            )),
            Cell::full(Material::SAND)
        );
        // The budget setting reaches the residency.
        WindowStream::apply_budget(&mut streaming, 300);
        let stats = WindowStream::panel_stats(&streaming, &grid, None).expect("streams");
        assert_eq!(stats.budget_bytes, 300 << 20);
        assert!(stats.resident_chunks > 0);
        stream.close();
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[cfg(test)]
mod import_tests {
    use super::*;

    /// Polls `pending` until its thread is done (at most 30 s).
    fn finish(mut pending: PendingWorld) -> Result<StreamedWorld, StreamingFileError> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            match pending.try_finish() {
                Ok(result) => return result,
                Err(still) => pending = still,
            }
            assert!(std::time::Instant::now() < deadline, "import never ended");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    #[test]
    fn a_heightmap_imports_as_a_streaming_world_off_the_frame_thread() {
        let dir =
            std::env::temp_dir().join(format!("strata-pending-import-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let png = dir.join("ramp.png");
        image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::from_fn(64, 48, |x, z| {
            image::Luma([(x * 700 + z * 300) as u16])
        })
        .save(&png)
        .expect("png");
        let settings = crate::io::heightmap::heightmap_import::HeightmapSettings::default();
        let pending = PendingWorld::start_import(png.clone(), settings.clone()).expect("thread");
        assert_eq!(pending.path(), png.as_path());
        assert_eq!(pending.kind(), &PendingKind::Import(png.clone()));
        let world = finish(pending).expect("imported");
        assert!(world.untitled);
        assert!(matches!(
            world.terrain,
            crate::app::streamed_world::StreamedTerrain::Heightmap(_)
        ));
        world.remove_recovery();
        // A file that is not a PNG is an error, reported once the thread ends.
        let bad = dir.join("bad.png");
        std::fs::write(&bad, b"not a png").expect("write");
        assert!(finish(PendingWorld::start_import(bad, settings).expect("thread")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
