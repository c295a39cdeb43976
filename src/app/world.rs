//! The world open in the window: the grid, its meshes, the streaming state
//! (level of detail, meshing pipeline, residency, the horizon) and, for a
//! streaming world, its backing file. One value the window passes as
//! `&mut World`, with the ways it is opened and replaced: at start-up, by a
//! finished File ▸ New or Open job, or by the File menu's events for
//! streaming worlds (new, open, recover, save, import, export, autosave
//! checkpoint).

use std::path::PathBuf;

use crate::camera::{Camera, frame_terrain};
use crate::editor::files::document::Document;
use crate::editor::files::file_dialogs::new_world_streams;
use crate::editor::files::file_jobs::{
    ExportFormat, Job, LoadedWorld, PreparedView, export_region,
};
use crate::editor::files::file_session::{FileSession, SessionEvent};
use crate::io::world::world_file::{LoadOptions, WorldFile, WorldMeta};
use crate::io::world::world_source::{WorldSource, WorldSourceError};
use crate::pipeline::lod::LodSettings;
use crate::pipeline::{TerrainStreaming, WorldMeshes};
use crate::terrain::command::document_action::WorldDocument;
use crate::terrain::editing::region::check_crop_box;
use crate::terrain::generation::generate::GeneratorSettings;
use crate::terrain::storage::coords::CellBox;
use crate::terrain::storage::grid::Grid;

use super::window_stream::{PendingKind, PendingWorld, WindowStream};

/// The world open in the window.
pub struct World {
    /// The cells (a streaming grid holds only the resident columns).
    pub grid: Grid,
    /// The meshes shown (and picked against).
    pub meshes: WorldMeshes,
    /// Level of detail, meshing pipeline, residency and the horizon.
    pub streaming: TerrainStreaming,
    /// The backing file of a streaming world (`None`: the grid holds the
    /// whole world).
    pub stream: Option<WindowStream>,
}

/// A world as the window starts with it: the world, its document and the
/// camera it asks for (`None`: frame the terrain).
pub struct OpenedWorld {
    /// The world.
    pub world: World,
    /// Its document (file, metadata, unsaved state).
    pub doc: Document,
    /// The camera the world file stored, or a streaming world's default view.
    pub camera: Option<Camera>,
    /// The layers its file holds (spec §14).
    pub layers: Option<WorldDocument>,
}

/// What a streaming-world event needs besides the world: the panel's
/// memory budget and the camera a save records.
#[derive(Clone, Copy, Debug)]
pub struct StreamEventContext {
    /// Memory budget of a streaming world, bytes.
    pub budget_bytes: usize,
    /// The camera now (saved with the world).
    pub camera: Camera,
}

/// What handling a File menu event did to the world.
pub enum WorldChange {
    /// Nothing was replaced.
    None,
    /// The world was replaced: the window takes this camera, forgets its
    /// stroke, hit and waiting edit, and the tools start a new history
    /// with the new world's generator.
    Replaced {
        /// The new world's first camera.
        camera: Camera,
        /// The generator `Generate` re-runs in the new world.
        generator: Option<GeneratorSettings>,
    },
}

impl World {
    /// Opens `source` for the window: a streaming world (a generated world
    /// with `stream` or larger than a world built whole, or a streaming
    /// world file; opening reads no column) or a world built whole (a world
    /// file is opened through [`WorldFile::open`] so the first save is
    /// incremental). `aspect` frames a world that has no camera.
    ///
    /// # Errors
    /// [`WorldOpenError`] when the world cannot be built or opened.
    pub fn open(
        source: &WorldSource,
        stream: bool,
        lod: LodSettings,
        budget_bytes: usize,
        camera: Option<Camera>,
        aspect: f32,
    ) -> Result<OpenedWorld, WorldOpenError> {
        if let Some(mut opened) = open_streamed(source, stream, lod, budget_bytes, camera)? {
            opened.camera = camera.or(opened.camera);
            return Ok(opened);
        }
        let (grid, doc, stored, layers) = open_document(source)?;
        let camera = camera
            .or(stored)
            .unwrap_or_else(|| frame_terrain(&grid, None, aspect));
        let mut streaming = TerrainStreaming::new(lod);
        let meshes = streaming.build_initial(&grid, camera.pos_world);
        Ok(OpenedWorld {
            world: World {
                grid,
                meshes,
                streaming,
                stream: None,
            },
            doc,
            camera: Some(camera),
            layers,
        })
    }

    /// Swaps in a world a file job finished: its grid, its meshes and
    /// streaming state (prepared on the job's thread, or here around
    /// `camera`), and closes a streaming world's backing file. Returns the
    /// new world's camera.
    pub fn replace_loaded(&mut self, world: LoadedWorld, camera: Camera) -> Camera {
        self.grid = world.grid;
        let prepared = world.prepared.unwrap_or_else(|| {
            let mut s = TerrainStreaming::new(self.streaming.lod().settings);
            let m = s.build_initial(&self.grid, camera.pos_world);
            PreparedView {
                camera,
                streaming: s,
                meshes: m,
            }
        });
        self.streaming = prepared.streaming;
        self.meshes = prepared.meshes;
        if let Some(old) = self.stream.take() {
            old.close();
        }
        prepared.camera
    }

    /// Swaps in a streaming world: an empty streaming grid (its columns
    /// load as the next frames ask), no meshes, and closes the old backing
    /// file. Returns the change (the world's first camera and generator).
    /// A world that opens on its default view draws all that the view
    /// frames ([`LodSettings::for_default_view`]).
    pub fn install_streamed(
        &mut self,
        stream: WindowStream,
        mut streaming: TerrainStreaming,
    ) -> WorldChange {
        let view = stream.initial_view();
        let camera = view.camera;
        let lod = streaming.lod().settings.for_default_view(view.reach_studs);
        streaming.lod_mut().settings = lod;
        let generator = stream.world.generator();
        self.grid = Grid::streaming();
        self.meshes = WorldMeshes::default();
        self.streaming = streaming;
        if let Some(old) = self.stream.replace(stream) {
            old.close();
        }
        WorldChange::Replaced { camera, generator }
    }

    /// The world's footprint in world studs, `[min_x, min_z, max_x, max_z]`:
    /// a streaming world's whole size, or the chunks a grid built whole
    /// holds (`None` for an empty one).
    pub fn extent_xz_studs(&self) -> Option<[f64; 4]> {
        let studs = f64::from(crate::terrain::storage::coords::CELL_SIZE_STUDS);
        if let Some(stream) = &self.stream {
            let [w, d] = stream.world.extent_cells();
            return Some([0.0, 0.0, w as f64 * studs, d as f64 * studs]);
        }
        let b = self.grid.bounds_cells()?;
        Some([
            f64::from(b.min.x) * studs,
            f64::from(b.min.z) * studs,
            f64::from(b.max.x) * studs,
            f64::from(b.max.z) * studs,
        ])
    }

    /// Closes the world: a new streaming world's recovery file goes.
    pub fn close(&mut self) {
        if let Some(stream) = self.stream.take() {
            stream.close();
        }
    }

    /// Carries out a File menu event for a streaming world: a new one, an
    /// opened or recovered one, a save, an import, a region export or an
    /// autosave checkpoint. `pending_world` holds a heightmap import or a
    /// file opening on its own thread. Returns what changed and the session's
    /// next event (an event that is not about streaming worlds is handed
    /// back untouched).
    pub fn on_streamed_event(
        &mut self,
        event: SessionEvent,
        session: &mut FileSession,
        pending_world: &mut Option<PendingWorld>,
        region: Option<CellBox>,
        context: StreamEventContext,
        document: Option<&WorldDocument>,
    ) -> (WorldChange, Option<SessionEvent>) {
        let lod = self.streaming.lod().settings;
        let budget = context.budget_bytes;
        match event {
            SessionEvent::NewStreamed(settings) => {
                // The world asked for last wins: one still being read is
                // dropped when it ends.
                if let Some(pending) = pending_world.as_ref() {
                    pending.progress().cancel();
                }
                let change = match WindowStream::create(&settings, lod, budget) {
                    Ok((stream, streaming)) => {
                        let change = self.install_streamed(stream, streaming);
                        let meta = WorldMeta::generated(&settings);
                        session.streamed_opened(None, &self.grid, meta, 0);
                        change
                    }
                    Err(e) => {
                        session
                            .menu
                            .show_message(format!("Cannot make the world: {e}"), true);
                        WorldChange::None
                    }
                };
                (change, None)
            }
            SessionEvent::OpenStreamed(path) => {
                start_pending(pending_world, session, || {
                    PendingWorld::start_open(path, false)
                });
                (WorldChange::None, None)
            }
            SessionEvent::RecoverStreamed(path) => {
                start_pending(pending_world, session, || {
                    PendingWorld::start_open(path, true)
                });
                (WorldChange::None, None)
            }
            SessionEvent::SaveStreamed(path) => {
                let result = match self.stream.as_mut() {
                    Some(stream) => stream.save(
                        &mut self.streaming,
                        &self.grid,
                        &path,
                        &context.camera,
                        document,
                    ),
                    None => Err("this world does not stream".to_string()),
                };
                let next = session.streamed_saved(path, result, &mut self.grid, &context.camera);
                (WorldChange::None, next)
            }
            SessionEvent::ImportStreamed(png, settings) => {
                start_pending(pending_world, session, || {
                    PendingWorld::start_import(png, settings)
                });
                (WorldChange::None, None)
            }
            SessionEvent::ExportStreamed(path, format) => {
                session.start_job(self.region_export_job(region, path, format));
                (WorldChange::None, None)
            }
            SessionEvent::CheckpointStreamed => {
                let n = WindowStream::checkpoint(&mut self.streaming, &self.grid);
                log::info!("autosave: queued {n} edited chunk columns for the world file");
                // The layers go with the spills, so a crash reopens both.
                if let (Some(stream), Some(doc)) = (&self.stream, document)
                    && let Err(e) = stream.world.file.store_pending_document(doc)
                {
                    log::warn!("autosave: the layers could not be kept: {e}");
                }
                (WorldChange::None, None)
            }
            other => (WorldChange::None, Some(other)),
        }
    }

    /// A finished background import or opening replaces the world (an
    /// unfinished one stays pending; a failed or cancelled one says so and
    /// keeps the world there is, also when Cancel came after the reading
    /// was done but before this frame took it).
    pub fn finish_pending_world(
        &mut self,
        pending_world: &mut Option<PendingWorld>,
        session: &mut FileSession,
        budget_bytes: usize,
    ) -> WorldChange {
        let Some(pending) = pending_world.take() else {
            return WorldChange::None;
        };
        let kind = pending.kind().clone();
        let cancelled = pending.progress().is_cancelled();
        match pending.try_finish() {
            Err(still_running) => {
                *pending_world = Some(still_running);
                WorldChange::None
            }
            Ok(Ok(world)) if cancelled => {
                // A new world's recovery file is of no use; a crash's
                // recovery file stays for another try.
                if matches!(kind, PendingKind::Import(_)) {
                    world.remove_recovery();
                }
                session
                    .menu
                    .show_message(format!("{} was cancelled.", pending_label(&kind)), false);
                WorldChange::None
            }
            Ok(Ok(world)) => {
                let lod = self.streaming.lod().settings;
                let recovered = world.recovered_columns;
                let (stream, streaming) = WindowStream::from_world(world, lod, budget_bytes);
                let meta = stream.world.meta();
                let change = self.install_streamed(stream, streaming);
                // An import and a recovered new world stay untitled: Save
                // asks where.
                let titled = match kind {
                    PendingKind::Open {
                        path,
                        recovering: false,
                    } => Some(path),
                    _ => None,
                };
                session.streamed_opened(titled, &self.grid, meta, recovered);
                change
            }
            Ok(Err(e)) => {
                let message = match (&kind, cancelled) {
                    (_, true) => format!("{} was cancelled.", pending_label(&kind)),
                    (PendingKind::Import(png), false) => {
                        format!("Cannot import {}: {e}", png.display())
                    }
                    (PendingKind::Open { path, .. }, false) => {
                        format!("Cannot open {}: {e}", path.display())
                    }
                };
                session.menu.show_message(message, !cancelled);
                WorldChange::None
            }
        }
    }

    /// The export of the selected region box of a streaming world to
    /// `path` (spec §12: an export is demand): the box is checked, its
    /// resident columns copied now, the rest loaded by the job. `Err` says
    /// why there is nothing to export.
    fn region_export_job(
        &self,
        region: Option<CellBox>,
        path: PathBuf,
        format: ExportFormat,
    ) -> Result<Job, String> {
        let Some(region) = region else {
            return Err(
                "A streaming world exports a region box: select one with the Region \
                 tool (B, then drag) and export again."
                    .into(),
            );
        };
        check_crop_box(&region).map_err(|e| format!("Cannot export the selected box: {e}"))?;
        let residency = self
            .streaming
            .residency()
            .ok_or_else(|| "this world does not stream".to_string())?;
        let snapshot = residency.snapshot_region(&self.grid, &region);
        let georeference = self
            .stream
            .as_ref()
            .and_then(|s| s.world.meta().georeference);
        Ok(export_region(snapshot, region, path, format, georeference))
    }
}

/// Why the window's world could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum WorldOpenError {
    /// The world could not be built or loaded.
    #[error(transparent)]
    World(#[from] WorldSourceError),
    /// A streaming world could not be made or opened.
    #[error(transparent)]
    Streaming(#[from] crate::io::world::streaming_file::StreamingFileError),
}

/// The streaming world the editor starts with, when it starts with one:
/// a generated world with `stream` or larger than a world built whole,
/// or a streaming world file (spec §12), with its (empty) streaming grid
/// and document. Opening reads no column. Without a `given_camera`, the
/// world opens on its own first view, whose framing may widen the draw
/// distance ([`LodSettings::for_default_view`]).
fn open_streamed(
    source: &WorldSource,
    stream: bool,
    lod: LodSettings,
    budget_bytes: usize,
    given_camera: Option<Camera>,
) -> Result<Option<OpenedWorld>, WorldOpenError> {
    let grid = Grid::streaming();
    let (window_stream, streaming, doc) = match source {
        WorldSource::Generated(settings) if stream || new_world_streams(settings.size_cells) => {
            let (ws, streaming) = WindowStream::create(settings, lod, budget_bytes)?;
            let doc = Document::streamed(None, &grid, WorldMeta::generated(settings), true);
            (ws, streaming, doc)
        }
        WorldSource::File(path) if WindowStream::is_streaming_file(path) => {
            let (ws, streaming) = WindowStream::open(path, lod, budget_bytes)?;
            if ws.world.recovered_columns > 0 {
                eprintln!(
                    "strata: recovered {} edited columns that were not saved",
                    ws.world.recovered_columns
                );
            }
            let meta = ws.world.meta();
            let clean = ws.world.recovered_columns == 0;
            let doc = Document::streamed(Some(path.clone()), &grid, meta, clean);
            (ws, streaming, doc)
        }
        _ => return Ok(None),
    };
    // Nothing is generated before the first frame: columns load as the
    // frames ask for them.
    let view = window_stream.initial_view();
    let mut streaming = streaming;
    if given_camera.is_none() {
        streaming.lod_mut().settings = lod.for_default_view(view.reach_studs);
    }
    let camera = view.camera;
    Ok(Some(OpenedWorld {
        world: World {
            grid,
            meshes: WorldMeshes::default(),
            streaming,
            stream: Some(window_stream),
        },
        doc,
        camera: Some(camera),
        layers: None,
    }))
}

/// The grid, document, stored camera and layers of a world built whole.
fn open_document(
    source: &WorldSource,
) -> Result<(Grid, Document, Option<Camera>, Option<WorldDocument>), WorldOpenError> {
    Ok(match source {
        WorldSource::File(path) => {
            let (file, grid, meta, report) = WorldFile::open(path, LoadOptions::default())
                .map_err(|e| WorldOpenError::World(WorldSourceError::Load(e)))?;
            if let Some(recovery) = report.journal_recovery {
                // Before the window exists: the terminal and the log say it.
                eprintln!("strata: recovered: {recovery}");
            }
            let camera = meta.camera();
            let doc = Document::opened(path.clone(), Some(file), &grid, meta);
            (grid, doc, camera, report.document.map(|d| d.document))
        }
        WorldSource::Generated(settings) => {
            let grid = source.build()?;
            let doc = Document::untitled(&grid, WorldMeta::generated(settings));
            (grid, doc, None, None)
        }
        _ => {
            let built = source.build_with_report(&crate::progress::Progress::new())?;
            let meta = WorldMeta {
                georeference: built.georeference,
                ..WorldMeta::default()
            };
            let doc = Document::untitled(&built.grid, meta);
            (built.grid, doc, None, None)
        }
    })
}

/// "Opening PATH" or "The import of PATH", for messages about `kind`.
fn pending_label(kind: &PendingKind) -> String {
    match kind {
        PendingKind::Import(png) => format!("The import of {}", png.display()),
        PendingKind::Open { path, .. } => format!("Opening {}", path.display()),
    }
}

/// The streaming world file the window reads after its first frame (on its
/// own thread, where a missing or stale plan is cooked with progress and
/// Cancel), or `None` when `source` opens before the window does. Opening a
/// streaming world file before the window would leave the artist without a
/// window for the whole cook.
pub fn startup_streaming_file(source: &WorldSource) -> Option<std::path::PathBuf> {
    match source {
        WorldSource::File(path) if WindowStream::is_streaming_file(path) => Some(path.clone()),
        _ => None,
    }
}

/// Starts a background import or opening into `pending_world` unless one
/// runs (then says so).
fn start_pending(
    pending_world: &mut Option<PendingWorld>,
    session: &mut FileSession,
    start: impl FnOnce() -> std::io::Result<PendingWorld>,
) {
    if let Some(running) = pending_world {
        session.menu.show_message(
            format!(
                "{} is still being read; try again when it is done.",
                running.path().display()
            ),
            true,
        );
        return;
    }
    match start() {
        Ok(pending) => *pending_world = Some(pending),
        Err(e) => session
            .menu
            .show_message(format!("Cannot start reading the world: {e}"), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::streamed_world::StreamedWorld;
    use crate::io::heightmap::heightmap_import::HeightmapSettings;

    /// A streamed heightmap world swapped in (what File ▸ Import Heightmap
    /// does when its import finishes) opens on its default view, the whole
    /// terrain framed from outside, with a draw distance that reaches the
    /// far side of what the view frames; a draw distance asked for holds.
    #[test]
    fn an_imported_heightmap_opens_framed_and_drawn_whole() {
        let dir = std::env::temp_dir().join(format!("strata-world-framed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let png = dir.join("ramp.png");
        image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::from_fn(100, 100, |x, z| {
            image::Luma([(x * 400 + z * 200) as u16])
        })
        .save(&png)
        .expect("png");
        // 4,000 cells (16,000 studs) a side.
        let settings = HeightmapSettings {
            cells_per_pixel: 40.0,
            ..HeightmapSettings::default()
        };
        for fit in [true, false] {
            let lod = LodSettings {
                fit_default_view: fit,
                ..LodSettings::default()
            };
            let imported = StreamedWorld::import_heightmap(&png, &settings, &dir).expect("import");
            let view = imported.default_view();
            let (stream, streaming) = WindowStream::from_world(imported, lod, 64 << 20);
            let mut world = World {
                grid: Grid::streaming(),
                meshes: WorldMeshes::default(),
                streaming: TerrainStreaming::new(lod),
                stream: None,
            };
            let WorldChange::Replaced { camera, .. } = world.install_streamed(stream, streaming)
            else {
                panic!("the world was replaced");
            };
            assert_eq!(camera, view.camera);
            let [w, d] = world
                .extent_xz_studs()
                .map(|[_, _, x, z]| [x, z])
                .expect("extent");
            assert_eq!([w, d], [16_000.0, 16_000.0]);
            let p = camera.pos_world;
            assert!(
                !((0.0..=w).contains(&p.x) && (0.0..=d).contains(&p.z)),
                "{camera:?}"
            );
            assert!(camera.pitch_deg < 0.0);
            // The far corner is beyond the default draw distance: the
            // framed view widens it to reach the far corner.
            assert!(view.reach_studs > 20_000.0 && view.reach_studs < 30_000.0);
            let drawn = world.streaming.lod().settings.draw_distance_studs;
            if fit {
                assert_eq!(drawn, view.reach_studs);
            } else {
                assert_eq!(drawn, lod.draw_distance_studs);
            }
            world.close();
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A streaming world file given on the command line is read after the
    /// window's first frame; a generated world, a whole world file and a
    /// missing file open as before (the last with its error).
    #[test]
    fn only_a_streaming_world_file_is_read_after_the_first_frame() {
        use crate::io::world::streaming_file::StreamingWorldFile;
        let dir = std::env::temp_dir().join(format!("strata-startup-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let settings = GeneratorSettings {
            seed: 7,
            size_cells: 256,
        };
        let streamed = dir.join("streamed.strata");
        drop(StreamingWorldFile::create(&streamed, &settings).expect("a streaming file"));
        assert_eq!(
            startup_streaming_file(&WorldSource::File(streamed.clone())),
            Some(streamed)
        );
        let whole = dir.join("whole.strata");
        let grid = WorldSource::Generated(settings.clone())
            .build()
            .expect("generated");
        WorldFile::save_full(&whole, &grid, &WorldMeta::generated(&settings)).expect("saved");
        assert_eq!(startup_streaming_file(&WorldSource::File(whole)), None);
        assert_eq!(
            startup_streaming_file(&WorldSource::File(dir.join("missing.strata"))),
            None
        );
        assert_eq!(
            startup_streaming_file(&WorldSource::Generated(settings.clone())),
            None
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Cancel clicked after the reading thread was done but before a frame
    /// took its world: nothing is replaced and the message says cancelled
    /// (not an error). Not cancelled, the same import replaces the world.
    #[test]
    fn a_pending_world_cancelled_after_it_was_read_replaces_nothing() {
        use crate::editor::files::document::{Document, RecentFiles};
        let dir = std::env::temp_dir().join(format!("strata-world-cancel-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let png = dir.join("ramp.png");
        image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::from_fn(40, 40, |x, z| {
            image::Luma([(x * 400 + z * 200) as u16])
        })
        .save(&png)
        .expect("png");
        let lod = LodSettings::default();
        let mut world = World {
            grid: Grid::streaming(),
            meshes: WorldMeshes::default(),
            streaming: TerrainStreaming::new(lod),
            stream: None,
        };
        let doc = Document::untitled(&world.grid, WorldMeta::default());
        let mut session = FileSession::new(doc, RecentFiles::load(Some(dir.join("recent.json"))));
        let finished = |cancel: bool| {
            let pending = PendingWorld::start_import(png.clone(), HeightmapSettings::default())
                .expect("thread");
            while !pending.is_finished() {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            if cancel {
                pending.progress().cancel();
            }
            Some(pending)
        };
        let mut pending = finished(true);
        let change = world.finish_pending_world(&mut pending, &mut session, 64 << 20);
        assert!(matches!(change, WorldChange::None));
        assert!(pending.is_none());
        assert!(world.stream.is_none(), "nothing was installed");
        let (message, error) = session.menu.message().expect("a message");
        assert!(message.ends_with("was cancelled."), "{message}");
        assert!(!error);
        let mut pending = finished(false);
        let change = world.finish_pending_world(&mut pending, &mut session, 64 << 20);
        assert!(matches!(change, WorldChange::Replaced { .. }));
        if let Some(stream) = &world.stream {
            stream.world.remove_recovery();
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
