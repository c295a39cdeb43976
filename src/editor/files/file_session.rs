//! Carries out what the File menu asks for: keeps the [`Document`], runs
//! one background [`Job`] at a time, asks before unsaved changes would be
//! lost, autosaves to the recovery file, and hands finished worlds to the
//! editor.
//!
//! The open world is never touched by a failed or cancelled operation: a
//! job builds its world on the side and the editor swaps it in only when it
//! is complete; a save writes a captured batch while editing goes on.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::camera::Camera;
use crate::io::world::streaming_file::StreamingWorldFile;
use crate::io::world::world_file::{SaveBatch, WorldFile, WorldMeta};
use crate::terrain::command::document_action::WorldDocument;
use crate::terrain::generation::generate::GeneratorSettings;
use crate::terrain::storage::grid::Grid;

use crate::editor::files::document::{Document, RecentFiles, grid_state, newer_recovery};
use crate::editor::files::file_action::{FileAction, UnsavedAnswer};
use crate::editor::files::file_dialogs::new_world_streams;
use crate::editor::files::file_jobs::{
    self, Job, JobError, JobKind, JobOutput, LoadedWorld, ViewSetup, merge_import,
};
use crate::editor::files::file_menu::{FileMenu, FileMenuView};

/// What the editor must do after a file action or a finished job.
#[derive(Debug)]
pub enum SessionEvent {
    /// Replace the open world (grid, meshes, camera) with this one.
    ReplaceWorld(Box<LoadedWorld>),
    /// Close the editor.
    Quit,
    /// Make a new streaming world of these settings (larger than a world
    /// built whole, spec §12); the editor answers with
    /// [`FileSession::streamed_opened`].
    NewStreamed(GeneratorSettings),
    /// Open this streaming world file; the editor answers with
    /// [`FileSession::streamed_opened`].
    OpenStreamed(PathBuf),
    /// Reopen the recovery file of a new streaming world a crash left
    /// behind, as the untitled world it was; the editor answers with
    /// [`FileSession::streamed_opened`] (no path).
    RecoverStreamed(PathBuf),
    /// Save the streaming world to this file; the editor answers with
    /// [`FileSession::streamed_saved`].
    SaveStreamed(PathBuf),
    /// Import this heightmap as a new streaming world (it is larger than a
    /// world built whole, spec §12); the editor answers with
    /// [`FileSession::streamed_opened`] (no path).
    ImportStreamed(
        PathBuf,
        crate::io::heightmap::heightmap_import::HeightmapSettings,
    ),
    /// Export the selected region box of the streaming world to this file;
    /// the editor snapshots the box's columns and hands the job back with
    /// [`FileSession::start_job`].
    ExportStreamed(PathBuf, crate::editor::files::file_jobs::ExportFormat),
    /// Store the streaming world's edited resident columns in its backing
    /// file (the autosave of a streaming world: a crash then loses nothing).
    CheckpointStreamed,
}

/// The File menu's state and the open world's document.
pub struct FileSession {
    /// The open world's file and save state.
    pub doc: Document,
    /// Recently used files.
    pub recent: RecentFiles,
    /// The menu and its dialogs.
    pub menu: FileMenu,
    job: Option<Job>,
    /// An action the user asked for while a job ran; runs when it ends.
    queued: Option<FileAction>,
    /// The action to carry out once the running save succeeds (from the
    /// unsaved-changes prompt).
    after_save: Option<FileAction>,
    /// The world file a recovery copy being opened belongs to.
    recovering_for: Option<PathBuf>,
    /// How a new world is first shown (the editor updates it every frame).
    pub view: ViewSetup,
    /// Export needs a region box first (a streaming world with none
    /// selected; the editor updates it every frame).
    pub export_needs_box: bool,
    /// The world's layers as the tools hold them (the editor updates it
    /// every frame): saved with the cells.
    pub layers: Option<WorldDocument>,
    /// The Materials window, editing `doc.meta.materials`.
    pub materials: crate::editor::materials_window::MaterialsWindow,
}

impl FileSession {
    /// A session for the open world `doc`.
    pub fn new(doc: Document, recent: RecentFiles) -> FileSession {
        FileSession {
            doc,
            recent,
            menu: FileMenu::default(),
            job: None,
            queued: None,
            after_save: None,
            recovering_for: None,
            view: ViewSetup::default(),
            export_needs_box: false,
            layers: None,
            materials: Default::default(),
        }
    }

    /// Offers to recover when the open world's recovery file is newer than
    /// the world (call once at start).
    pub fn offer_recovery_if_newer(&mut self) {
        let Some(recovery) = self.doc.recovery_path() else {
            return;
        };
        if let Some(written) = newer_recovery(&recovery, self.doc.path()) {
            self.menu.offer_recovery(recovery, written);
        }
    }

    /// True while a job builds a world that will replace the open one: the
    /// editor does not edit then (the edits would be lost).
    pub fn replacing_world(&self) -> bool {
        self.job
            .as_ref()
            .is_some_and(|j| j.kind == JobKind::ReplaceWorld)
    }

    /// True while any job runs.
    pub fn busy(&self) -> bool {
        self.job.is_some()
    }

    /// The window title for `grid`.
    pub fn window_title(&self, grid: &Grid) -> String {
        self.doc.window_title(grid)
    }

    /// True while a File dialog or prompt is open (see
    /// [`FileMenu::is_modal_open`]): the viewport takes no clicks then.
    pub fn is_modal_open(&self) -> bool {
        self.menu.is_modal_open()
    }

    /// Draws the menu bar and windows; carries out what the user asked for.
    /// `world_being_read`: a world read on its own thread will replace the
    /// open one (Save, Save As and the exports are greyed out meanwhile).
    /// Returns the bar's height in points and an event for the editor.
    pub fn ui(
        &mut self,
        ctx: &egui::Context,
        grid: &mut Grid,
        camera: &Camera,
        world_being_read: bool,
    ) -> (f32, Option<SessionEvent>) {
        let name = self.doc.display_name();
        let (height, actions, answer) = {
            // Borrows disjoint fields: the view reads the document, recent
            // list and job while the menu updates itself.
            let job = self.job.as_ref().map(|j| (j.label.as_str(), &*j.progress));
            let view = FileMenuView {
                name: &name,
                path: self.doc.path(),
                dirty: self.doc.is_dirty(grid),
                recent: self.recent.paths(),
                job,
                export_blocked: self
                    .export_needs_box
                    .then_some(crate::editor::files::file_menu::EXPORT_NEEDS_BOX),
                world_being_read,
            };
            self.menu.show(ctx, &view)
        };
        let mut event = None;
        if let Some(answer) = answer {
            event = self.answer(answer, grid, camera);
        }
        for action in actions {
            if let Some(e) = self.handle(action, grid, camera) {
                event = Some(e);
            }
        }
        (height, event)
    }

    /// The user asked to close the window: `true` when it may close now,
    /// else the unsaved-changes prompt is shown.
    pub fn request_close(&mut self, grid: &mut Grid, camera: &Camera) -> bool {
        matches!(
            self.handle(FileAction::Quit, grid, camera),
            Some(SessionEvent::Quit)
        )
    }

    /// Carries out `action`, first asking about unsaved changes when it
    /// would replace the world.
    pub fn handle(
        &mut self,
        action: FileAction,
        grid: &mut Grid,
        camera: &Camera,
    ) -> Option<SessionEvent> {
        if action.replaces_world() && self.doc.is_dirty(grid) {
            self.menu.ask_unsaved(action);
            return None;
        }
        self.run(action, grid, camera)
    }

    fn answer(
        &mut self,
        answer: UnsavedAnswer,
        grid: &mut Grid,
        camera: &Camera,
    ) -> Option<SessionEvent> {
        let pending = self.menu.take_pending()?;
        match answer {
            UnsavedAnswer::Cancel => None,
            UnsavedAnswer::Save => {
                self.after_save = Some(pending);
                self.run(FileAction::Save, grid, camera)
            }
            UnsavedAnswer::Discard => {
                // The user chose to lose these changes: their recovery copy goes too.
                self.remove_recovery();
                self.run(pending, grid, camera)
            }
        }
    }

    /// Carries out `action` without asking.
    fn run(
        &mut self,
        action: FileAction,
        grid: &mut Grid,
        camera: &Camera,
    ) -> Option<SessionEvent> {
        if let FileAction::CancelJob = action {
            if let Some(job) = &self.job {
                job.progress.cancel();
            }
            return None;
        }
        if matches!(action, FileAction::Quit) {
            // A running save finishes first (its file must not be left half written
            // by an exit); an autosave or export is just cancelled.
            if let Some(job) = &self.job {
                if job.kind != JobKind::Save || job.label.starts_with("Autosaving") {
                    job.progress.cancel();
                }
                self.queued = Some(action);
                return None;
            }
            return Some(SessionEvent::Quit);
        }
        if self.job.is_some() {
            // One file job at a time; the latest request waits its turn.
            self.queued = Some(action);
            return None;
        }
        if let Some(event) = self.streamed_action(&action) {
            return event;
        }
        let mut meta = self.doc.meta.clone();
        meta.set_camera(camera);
        self.job = match action {
            FileAction::New(settings, preset) => {
                Some(file_jobs::new_world(settings, preset, Some(self.view)))
            }
            FileAction::Open(path) => {
                Some(file_jobs::open_world(path, false, false, Some(self.view)))
            }
            FileAction::OpenSkippingBadChunks(path) => {
                Some(file_jobs::open_world(path, true, false, Some(self.view)))
            }
            FileAction::Recover(path) => {
                self.recovering_for = self.doc.path().map(|p| p.to_path_buf());
                Some(file_jobs::open_world(path, false, true, Some(self.view)))
            }
            FileAction::DiscardRecovery(path) => {
                // With its journal and lock file, if it has them.
                if let Err(e) = crate::io::world::recovery_files::remove_recovery_files(&path) {
                    self.menu
                        .show_message(format!("Cannot delete {}: {e}", path.display()), true);
                }
                None
            }
            FileAction::Save => match self.doc.path().map(|p| p.to_path_buf()) {
                None => {
                    self.menu.open_save_as(None);
                    None
                }
                Some(path) => Some(self.save_job(path, grid, meta)),
            },
            FileAction::SaveAs(path) => Some(self.save_job(path, grid, meta)),
            FileAction::Import(path, settings, placement) => Some(file_jobs::import_heightmap(
                path,
                settings,
                placement,
                Some(self.view),
            )),
            FileAction::ExportGlb(path) => Some(file_jobs::export_glb(
                grid.clone(),
                path,
                meta.materials.clone(),
            )),
            FileAction::ExportHeightmap(path) => Some(file_jobs::export_heightmap(
                grid.clone(),
                path,
                meta.georeference.clone(),
                meta.materials.clone(),
            )),
            FileAction::ExportLowPolyGlb(path) => Some(file_jobs::export_low_poly_glb(
                grid.clone(),
                path,
                self.menu.low_poly_export,
                meta.materials.clone(),
            )),
            FileAction::CancelJob | FileAction::Quit => None,
        };
        None
    }

    /// The streaming side of `action` (spec §12): a New larger than a world
    /// built whole, an Open of a streaming world file, and Save, Save As
    /// and exports of a streaming world. `None` when `action` is not one of
    /// them; `Some(event)` when it is (the event for the editor, if any).
    fn streamed_action(&mut self, action: &FileAction) -> Option<Option<SessionEvent>> {
        let streaming = self.doc.is_streaming();
        Some(match action {
            FileAction::New(settings, _) if new_world_streams(settings.size_cells) => {
                Some(SessionEvent::NewStreamed(settings.clone()))
            }
            FileAction::Open(path) if StreamingWorldFile::is_streaming_file(path) => {
                Some(SessionEvent::OpenStreamed(path.clone()))
            }
            // Only a new world's recovery file is a streaming recovery (an
            // opened streaming world keeps its spills in its own file).
            FileAction::Recover(path) if StreamingWorldFile::is_streaming_file(path) => {
                Some(SessionEvent::RecoverStreamed(path.clone()))
            }
            FileAction::Save if streaming => match self.doc.path() {
                Some(path) => Some(SessionEvent::SaveStreamed(path.to_path_buf())),
                None => {
                    self.menu.open_save_as(None);
                    None
                }
            },
            FileAction::SaveAs(path) if streaming => Some(SessionEvent::SaveStreamed(path.clone())),
            FileAction::ExportGlb(path) if streaming => Some(SessionEvent::ExportStreamed(
                path.clone(),
                crate::editor::files::file_jobs::ExportFormat::Glb,
            )),
            FileAction::ExportHeightmap(path) if streaming => Some(SessionEvent::ExportStreamed(
                path.clone(),
                crate::editor::files::file_jobs::ExportFormat::Heightmap,
            )),
            FileAction::ExportLowPolyGlb(path) if streaming => Some(SessionEvent::ExportStreamed(
                path.clone(),
                crate::editor::files::file_jobs::ExportFormat::LowPolyGlb(
                    self.menu.low_poly_export,
                ),
            )),
            // A refused PNG goes on to the whole import, which says why.
            FileAction::Import(
                path,
                settings,
                crate::editor::files::file_jobs::ImportPlacement::NewWorld,
            ) if crate::io::heightmap::heightmap_format::import_streams(path, settings)
                .is_ok_and(|s| s) =>
            {
                Some(SessionEvent::ImportStreamed(path.clone(), settings.clone()))
            }
            FileAction::Import(
                _,
                _,
                crate::editor::files::file_jobs::ImportPlacement::IntoWorld { .. },
            ) if streaming => {
                self.after_save = None;
                self.menu.show_message(
                    "A heightmap cannot be imported into a streaming world yet; \
                     import it as a new world instead."
                        .into(),
                    true,
                );
                None
            }
            _ => return None,
        })
    }

    /// The editor opened (or made) a streaming world: `path` is its file
    /// (`None` for a new world, which spills to a recovery file until it
    /// is saved). `recovered_columns` edited columns a crash left unsaved
    /// were found in the file.
    pub fn streamed_opened(
        &mut self,
        path: Option<PathBuf>,
        grid: &Grid,
        meta: WorldMeta,
        recovered_columns: usize,
    ) {
        self.after_save = None;
        self.queued = None;
        if let Some(path) = &path
            && let Err(e) = self.recent.push(path)
        {
            log::warn!("cannot update the recent files list: {e}");
        }
        if recovered_columns > 0 {
            self.menu.show_message(
                format!(
                    "Recovered {} a crash left unsaved. Save to keep them.",
                    crate::editor::labels::count_noun(recovered_columns, "edited chunk column")
                ),
                false,
            );
        }
        // Recovered spills differ from the file's saved columns: unsaved.
        self.doc = Document::streamed(path, grid, meta, recovered_columns == 0);
    }

    /// Runs `job` (an export the editor prepared, e.g. of a streaming
    /// world's region box) with the progress bar and Cancel of every file
    /// job; `Err(message)` is shown instead. One job at a time: a busy
    /// session refuses it with a message.
    pub fn start_job(&mut self, job: Result<file_jobs::Job, String>) {
        match job {
            Ok(_) if self.job.is_some() => self.menu.show_message(
                "Another file operation is running; try again when it ends.".into(),
                true,
            ),
            Ok(job) => self.job = Some(job),
            Err(message) => self.menu.show_message(message, true),
        }
    }

    /// The editor saved (or failed to save) the streaming world to `path`:
    /// `result` is the report's message or the error. Returns what to do
    /// next (e.g. close, when the save was asked for before closing).
    pub fn streamed_saved(
        &mut self,
        path: PathBuf,
        result: Result<String, String>,
        grid: &mut Grid,
        camera: &Camera,
    ) -> Option<SessionEvent> {
        match result {
            Ok(message) => {
                log::info!("{message}");
                if let Err(e) = self.recent.push(&path) {
                    log::warn!("cannot update the recent files list: {e}");
                }
                self.doc.saved_streamed(path, grid_state(grid));
                let next = self.after_save.take()?;
                self.run(next, grid, camera)
            }
            Err(message) => {
                self.after_save = None;
                self.menu.show_message(message, true);
                None
            }
        }
    }

    /// A save of `grid` to `path`: incremental through the document's
    /// handle when it belongs to `path`, else a complete new file.
    fn save_job(
        &mut self,
        path: PathBuf,
        grid: &Grid,
        meta: crate::io::world::world_file::WorldMeta,
    ) -> Job {
        let file: Option<WorldFile> = self.doc.take_file_for(&path);
        let batch = match &file {
            Some(f) => f.prepare_save(grid),
            None => SaveBatch::full(grid),
        }
        .with_document(self.layers.clone());
        file_jobs::save_world(path, batch, grid_state(grid), meta, file)
    }

    /// Checks the running job and the autosave timer. Returns an event when
    /// a finished job replaces the world or the editor should close.
    pub fn poll(&mut self, grid: &mut Grid, camera: &Camera, now: Instant) -> Option<SessionEvent> {
        if let Some(job) = &self.job
            && let Some(result) = job.try_finish()
        {
            let label = job.label.clone();
            self.job = None;
            if let Some(file) = result.returned_file {
                self.doc.return_file(file);
            }
            let event = self.finished(&label, result.output, grid, now);
            if event.is_some() {
                return event;
            }
            if let Some(next) = self.queued.take() {
                return self.run(next, grid, camera);
            }
            if let Some(next) = self.after_save.take() {
                // The save succeeded (a failure clears `after_save`).
                return self.run(next, grid, camera);
            }
        }
        let minutes = self.menu.autosave_minutes;
        if self.job.is_none() && minutes > 0.0 && self.doc.is_streaming() {
            let interval = Duration::from_secs_f32(minutes * 60.0);
            if self.doc.autosave_due(grid, now, interval) {
                self.doc.autosaved(Some(grid_state(grid)), now);
                return Some(SessionEvent::CheckpointStreamed);
            }
        } else if self.job.is_none() && minutes > 0.0 {
            let interval = Duration::from_secs_f32(minutes * 60.0);
            if self.doc.autosave_due(grid, now, interval)
                && let Some(path) = self.doc.recovery_path()
            {
                let mut meta = self.doc.meta.clone();
                meta.set_camera(camera);
                self.job = Some(file_jobs::autosave(
                    path,
                    SaveBatch::full(grid).with_document(self.layers.clone()),
                    grid_state(grid),
                    meta,
                ));
                self.doc.autosaved(None, now);
            }
        }
        None
    }

    /// A world opened (or recovered, or built): the document it becomes,
    /// and the notices it brings (a journal recovery, damaged chunks left
    /// out, a recovered copy).
    fn opened(&mut self, mut world: Box<file_jobs::LoadedWorld>) -> Option<SessionEvent> {
        self.after_save = None;
        self.queued = None;
        self.doc = if world.recovered {
            let doc = Document::unsaved(self.recovering_for.take(), world.meta.clone());
            self.menu.show_message(
                "Recovered the autosaved copy. Save to keep it in the world file.".into(),
                false,
            );
            doc
        } else if let Some(path) = &world.path {
            if let Err(e) = self.recent.push(path) {
                log::warn!("cannot update the recent files list: {e}");
            }
            let mut doc = Document::opened(
                path.clone(),
                world.file.take(),
                &world.grid,
                world.meta.clone(),
            );
            if let Some(recovery) = world
                .report
                .as_ref()
                .and_then(|r| r.journal_recovery.as_ref())
            {
                self.menu
                    .show_message(format!("Recovered: {recovery}."), false);
            }
            if let Some(report) = &world.report
                && !report.skipped.is_empty()
            {
                self.menu.show_message(
                    format!(
                        "Opened {}: loaded {} chunks and left out {} damaged ones. Saving writes the \
                         world without them (to keep the damaged file as it is, use File ▸ Save As).",
                        path.display(),
                        report.chunks,
                        report.skipped.len()
                    ),
                    false,
                );
                doc = Document::unsaved(Some(path.clone()), world.meta.clone());
            }
            doc
        } else {
            Document::untitled(&world.grid, world.meta.clone())
        };
        Some(SessionEvent::ReplaceWorld(world))
    }

    fn finished(
        &mut self,
        label: &str,
        output: Result<JobOutput, JobError>,
        grid: &mut Grid,
        now: Instant,
    ) -> Option<SessionEvent> {
        match output {
            Ok(JobOutput::World(world)) => self.opened(world),
            Ok(JobOutput::Imported(imported)) => {
                let changed = merge_import(grid, &imported);
                self.menu.show_message(
                    format!("Imported the heightmap: {changed} chunks replaced."),
                    false,
                );
                None
            }
            Ok(JobOutput::Saved {
                path,
                file,
                state,
                report,
            }) => {
                log::info!(
                    "saved {} ({} chunks written, {} deleted, {:.0} ms)",
                    path.display(),
                    report.chunks_written,
                    report.chunks_deleted,
                    report.elapsed_ms
                );
                if let Err(e) = self.recent.push(&path) {
                    log::warn!("cannot update the recent files list: {e}");
                }
                self.doc.saved(path, file, state);
                self.remove_recovery();
                if self.after_save == Some(FileAction::Quit) {
                    self.after_save = None;
                    return Some(SessionEvent::Quit);
                }
                None
            }
            Ok(JobOutput::Autosaved { path, state }) => {
                log::info!("autosaved to {}", path.display());
                self.doc.autosaved(Some(state), now);
                None
            }
            Ok(JobOutput::Exported(message)) => {
                self.menu.show_message(message, false);
                None
            }
            Err(JobError::Cancelled) => {
                self.after_save = None;
                if self.queued != Some(FileAction::Quit) {
                    self.menu
                        .show_message(format!("{label}: cancelled. Nothing was changed."), false);
                }
                None
            }
            Err(JobError::BadChunks { path, message }) => {
                self.queued = None;
                self.menu.offer_skip_bad_chunks(path, message);
                None
            }
            Err(JobError::Failed(message)) => {
                self.after_save = None;
                if self.queued == Some(FileAction::Quit) {
                    // Do not close after a failed save: the work is not on disk.
                    self.queued = None;
                }
                self.menu.show_message(message, true);
                None
            }
        }
    }

    fn remove_recovery(&mut self) {
        if let Some(path) = self.doc.recovery_path()
            && path.exists()
            && let Err(e) = std::fs::remove_file(&path)
        {
            log::warn!("cannot delete the recovery file {}: {e}", path.display());
        }
    }

    /// Waits for the running job (at exit).
    pub fn finish_running_job(&mut self) {
        if let Some(job) = self.job.take() {
            let _ = job.wait();
        }
    }
}
