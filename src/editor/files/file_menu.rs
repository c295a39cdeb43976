//! The File menu and its dialogs: New, Open, Open Recent, Save, Save As,
//! Import Heightmap, Export, the unsaved-changes prompt, the recovery offer,
//! error messages and the progress window of a running file job.
//!
//! Pure UI: it turns clicks and shortcuts into [`FileAction`]s for
//! [`crate::editor::files::file_session::FileSession`] to carry out. Paths come from the
//! native dialog (`rfd`) when a dialog service exists (an XDG desktop portal
//! on the session bus, or `zenity`), and always from an in-app path field,
//! so the editor works on bare X servers too.

use crate::editor::labels::count_noun;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, channel};
use std::time::SystemTime;

use egui::{Key, KeyboardShortcut, Modifiers};

use crate::io::heightmap::heightmap_import::HeightmapSettings;
use crate::progress::Progress;
use crate::terrain::generation::generate::{
    DEFAULT_SEED, DEFAULT_SIZE_CELLS, GeneratorSettings, MAX_SIZE_CELLS,
};
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::CELL_SIZE_STUDS;

use crate::editor::files::file_jobs::{ImportPlacement, WorldPreset};

/// Ctrl+N.
pub const SHORTCUT_NEW: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::N);
/// Ctrl+O.
pub const SHORTCUT_OPEN: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::O);
/// Ctrl+S.
pub const SHORTCUT_SAVE: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::S);
/// Ctrl+Shift+S.
pub const SHORTCUT_SAVE_AS: KeyboardShortcut =
    KeyboardShortcut::new(Modifiers::COMMAND.plus(Modifiers::SHIFT), Key::S);

/// World sizes offered by File ▸ New, cells across. Sizes above
/// [`MAX_SIZE_CELLS`] make streaming worlds ([`new_world_streams`]).
pub const NEW_WORLD_SIZES_CELLS: [u32; 9] = [
    512, 1024, 2048, 4096, 16_384, 65_536, 262_144, 524_288, 1_048_576,
];

/// True when File ▸ New makes a streaming world of `size_cells` across
/// (spec §12): larger than a world generated whole may be. Nothing is
/// generated up front; columns are generated as the view needs them.
pub fn new_world_streams(size_cells: u32) -> bool {
    size_cells > MAX_SIZE_CELLS
}

/// A world size for the New dialog: cells across and the side in
/// kilometres (a cell is 4 studs; a stud is taken as one metre, as in
/// the 1,048,576 cells = 4,194 km), e.g. `"65 536 cells · 262 km"`.
pub fn size_label(size_cells: u32) -> String {
    let km = f64::from(size_cells) * f64::from(CELL_SIZE_STUDS) / 1000.0;
    let km = if km >= 100.0 {
        format!("{km:.0} km")
    } else {
        format!("{km:.1} km")
    };
    let grouped = crate::editor::labels::group_digits(u64::from(size_cells));
    format!("{grouped} cells · {km}")
}

/// What the user asked the File menu for.
#[derive(Clone, Debug, PartialEq)]
pub enum FileAction {
    /// Make a new world.
    New(GeneratorSettings, WorldPreset),
    /// Open a world file.
    Open(PathBuf),
    /// Open a world file, loading the chunks that verify and leaving out the damaged ones.
    OpenSkippingBadChunks(PathBuf),
    /// Save to the current file (Save As when there is none).
    Save,
    /// Save to a new file.
    SaveAs(PathBuf),
    /// Import a heightmap.
    Import(PathBuf, HeightmapSettings, ImportPlacement),
    /// Export the world at full detail as binary glTF.
    ExportGlb(PathBuf),
    /// Export the top surface as a 16-bit PNG heightmap.
    ExportHeightmap(PathBuf),
    /// Export the low-poly meshes (and collision) as binary glTF, with the
    /// menu's [`FileMenu::low_poly_export`] settings.
    ExportLowPolyGlb(PathBuf),
    /// Open a recovery copy in place of its world.
    Recover(PathBuf),
    /// Delete a recovery copy the user declined.
    DiscardRecovery(PathBuf),
    /// Cancel the running job.
    CancelJob,
    /// Close the editor.
    Quit,
}

impl FileAction {
    /// True for actions that replace the open world (they ask first when
    /// it has unsaved changes).
    pub fn replaces_world(&self) -> bool {
        matches!(
            self,
            FileAction::New(..)
                | FileAction::Open(_)
                | FileAction::OpenSkippingBadChunks(_)
                | FileAction::Recover(_)
                | FileAction::Import(_, _, ImportPlacement::NewWorld)
                | FileAction::Quit
        )
    }
}

/// The user's answer to "save changes first?".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnsavedAnswer {
    /// Save, then go on.
    Save,
    /// Go on without saving.
    Discard,
    /// Do nothing.
    Cancel,
}

/// What the menu shows about the open world and the running job.
pub struct FileMenuView<'a> {
    /// The world's file name (or "Untitled").
    pub name: &'a str,
    /// Its file, if any.
    pub path: Option<&'a Path>,
    /// Unsaved changes.
    pub dirty: bool,
    /// Recently used files, newest first.
    pub recent: &'a [PathBuf],
    /// The running job's label and progress.
    pub job: Option<(&'a str, &'a Progress)>,
    /// Why Export cannot run now (a streaming world with no region box
    /// selected): shown instead of the path dialog.
    pub export_blocked: Option<&'a str>,
}

/// Why a streaming world cannot be exported without a region box.
pub const EXPORT_NEEDS_BOX: &str = "A streaming world exports a region box: select one with the \
     Region tool (B, then drag) and export again.";

#[derive(Clone, Debug)]
enum Dialog {
    New {
        seed: String,
        size_cells: u32,
        preset: WorldPreset,
    },
    Path {
        purpose: PathPurpose,
        path: String,
    },
    Import {
        path: String,
        cells_per_pixel: f32,
        vertical_scale: f32,
        base_height_cells: i32,
        base_material: Option<Material>,
        sea_level: Option<f64>,
        into_world: bool,
        offset_x_chunks: i32,
        offset_z_chunks: i32,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PathPurpose {
    Open,
    SaveAs,
    ExportGlb,
    ExportHeightmap,
    ExportLowPolyGlb,
}

impl PathPurpose {
    fn title(self) -> &'static str {
        match self {
            PathPurpose::Open => "Open world",
            PathPurpose::SaveAs => "Save world as",
            PathPurpose::ExportGlb => "Export mesh (binary glTF)",
            PathPurpose::ExportHeightmap => "Export heightmap (16-bit PNG)",
            PathPurpose::ExportLowPolyGlb => "Export low-poly mesh (binary glTF)",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            PathPurpose::Open | PathPurpose::SaveAs => "strata",
            PathPurpose::ExportGlb | PathPurpose::ExportLowPolyGlb => "glb",
            PathPurpose::ExportHeightmap => "png",
        }
    }

    fn saves(self) -> bool {
        self != PathPurpose::Open
    }
}

/// Where a native dialog's answer goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BrowseTarget {
    PathDialog,
    ImportFile,
}

/// State of the File menu and its windows.
pub struct FileMenu {
    dialog: Option<Dialog>,
    /// The action waiting for an answer to "save changes first?".
    pending: Option<FileAction>,
    /// A message for the user: text and whether it is an error.
    message: Option<(String, bool)>,
    /// A world with damaged chunks: path and the loader's message.
    bad_chunks: Option<(PathBuf, String)>,
    /// A recovery copy to offer: its path, when it was written and what
    /// it is (the offer's first line).
    recovery: Option<(PathBuf, SystemTime, String)>,
    browse: Option<(BrowseTarget, Receiver<Option<PathBuf>>)>,
    dialog_service: bool,
    /// Minutes between autosaves (0 turns autosave off).
    pub autosave_minutes: f32,
    /// Settings of File ▸ Export Low-poly Mesh.
    pub low_poly_export: crate::editor::files::file_jobs::LowPolyExport,
    /// The view's style as View ▸ Style shows and sets it (the editor
    /// copies it in before and out after each frame's menu).
    pub style: crate::mesh::MeshStyle,
}

impl Default for FileMenu {
    fn default() -> Self {
        FileMenu {
            dialog: None,
            pending: None,
            message: None,
            bad_chunks: None,
            recovery: None,
            browse: None,
            dialog_service: dialog_service_available(),
            autosave_minutes: crate::editor::files::document::DEFAULT_AUTOSAVE_INTERVAL
                .as_secs_f32()
                / 60.0,
            low_poly_export: crate::editor::files::file_jobs::LowPolyExport::default(),
            style: crate::mesh::MeshStyle::Smooth,
        }
    }
}

/// True when a native file dialog can appear: an XDG desktop portal may
/// answer on the session bus, or `zenity` (rfd's fallback) is installed.
pub fn dialog_service_available() -> bool {
    let bus = std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some_and(|v| !v.is_empty());
    let zenity = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join("zenity").is_file()));
    bus || zenity
}

impl FileMenu {
    /// Asks "save changes first?" before `action`.
    pub fn ask_unsaved(&mut self, action: FileAction) {
        self.pending = Some(action);
    }

    /// Shows a message (an error when `error`).
    pub fn show_message(&mut self, text: String, error: bool) {
        self.message = Some((text, error));
    }

    /// Offers to load the rest of a world whose chunks failed verification.
    pub fn offer_skip_bad_chunks(&mut self, path: PathBuf, message: String) {
        self.bad_chunks = Some((path, message));
    }

    /// Offers to recover from `recovery`, written at `written`.
    pub fn offer_recovery(&mut self, recovery: PathBuf, written: SystemTime) {
        let what = "An autosaved copy newer than the world was found:".to_string();
        self.recovery = Some((recovery, written, what));
    }

    /// Offers to recover the new streaming world whose recovery file
    /// `recovery` (written at `written`, holding `edited_columns` spilled
    /// chunk columns) a crash left behind. Does not replace an offer
    /// already open.
    pub fn offer_streamed_recovery(
        &mut self,
        recovery: PathBuf,
        written: SystemTime,
        edited_columns: usize,
    ) {
        if self.recovery.is_none() {
            let what = format!(
                "A new streaming world was not saved before Strata closed \
                 ({}):",
                count_noun(edited_columns, "edited chunk column")
            );
            self.recovery = Some((recovery, written, what));
        }
    }

    /// The recovery offer open now, if any: its path.
    pub fn recovery_offer(&self) -> Option<&Path> {
        self.recovery.as_ref().map(|(p, _, _)| p.as_path())
    }

    /// Opens the Save As dialog (Save of an untitled world).
    pub fn open_save_as(&mut self, suggested: Option<&Path>) {
        self.dialog = Some(Dialog::Path {
            purpose: PathPurpose::SaveAs,
            path: suggested
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| default_path("world.strata")),
        });
    }

    /// Draws the menu bar (at the top of the screen), its windows and
    /// dialogs, and reads the File shortcuts. Returns the bar's height in
    /// points and what the user asked for. Call inside an egui pass before
    /// the side panel.
    pub fn show(
        &mut self,
        ctx: &egui::Context,
        view: &FileMenuView<'_>,
    ) -> (f32, Vec<FileAction>, Option<UnsavedAnswer>) {
        let mut actions = Vec::new();
        let busy = view.job.is_some();
        if !busy {
            self.read_shortcuts(ctx, view, &mut actions);
        }
        let mut height = 0.0;
        ctx.root_ui(|root| {
            let response = egui::Panel::top("strata_menu_bar").show(root, |ui| {
                egui::MenuBar::new().ui(ui, |ui| {
                    ui.add_enabled_ui(!busy, |ui| self.file_menu(ui, view, &mut actions));
                    crate::editor::view_menu::view_menu(ui, &mut self.style);
                    ui.separator();
                    let mark = if view.dirty {
                        " •  unsaved changes"
                    } else {
                        ""
                    };
                    ui.label(format!("{}{mark}", view.name));
                });
            });
            height = response.response.rect.height();
        });
        // Escape closes the topmost: the "save changes first?" prompt
        // (as Cancel), else the open dialog. (egui closes menus and popups
        // on Escape itself.)
        let escape = ctx.input(|i| i.key_pressed(Key::Escape));
        if escape && self.pending.is_none() {
            self.dialog = None;
        }
        self.dialogs(ctx, &mut actions);
        let answer = self.unsaved_prompt(ctx, view, escape);
        self.notices(ctx, &mut actions);
        if let Some((label, progress)) = view.job {
            progress_window(ctx, label, progress, &mut actions);
        }
        (height, actions, answer)
    }

    /// True while a dialog or prompt of the File menu waits for the user
    /// (New, Open, Save As, Import, an export path, "save changes first?",
    /// damaged chunks, recovery): clicks must not reach the tools then.
    pub fn is_modal_open(&self) -> bool {
        self.dialog.is_some()
            || self.pending.is_some()
            || self.bad_chunks.is_some()
            || self.recovery.is_some()
    }

    /// Takes the action that waited for "save changes first?".
    pub fn take_pending(&mut self) -> Option<FileAction> {
        self.pending.take()
    }

    fn read_shortcuts(
        &mut self,
        ctx: &egui::Context,
        view: &FileMenuView<'_>,
        actions: &mut Vec<FileAction>,
    ) {
        ctx.input_mut(|i| {
            if i.consume_shortcut(&SHORTCUT_SAVE_AS) {
                self.open_save_as(view.path);
            } else if i.consume_shortcut(&SHORTCUT_SAVE) {
                actions.push(FileAction::Save);
            } else if i.consume_shortcut(&SHORTCUT_OPEN) {
                self.open_path_dialog(PathPurpose::Open, view.path);
            } else if i.consume_shortcut(&SHORTCUT_NEW) {
                self.dialog = Some(new_dialog());
            }
        });
    }

    fn open_path_dialog(&mut self, purpose: PathPurpose, current: Option<&Path>) {
        let suggested = match (purpose, current) {
            (PathPurpose::SaveAs, Some(p)) => p.to_path_buf(),
            (_, Some(p)) => p.with_extension(purpose.extension()),
            (_, None) => PathBuf::from(default_path(&format!("world.{}", purpose.extension()))),
        };
        self.dialog = Some(Dialog::Path {
            purpose,
            path: suggested.display().to_string(),
        });
    }

    fn file_menu(
        &mut self,
        ui: &mut egui::Ui,
        view: &FileMenuView<'_>,
        actions: &mut Vec<FileAction>,
    ) {
        ui.menu_button("File", |ui| {
            let fmt = |s: &KeyboardShortcut| ui.ctx().format_shortcut(s);
            let (new, open, save, save_as) = (
                fmt(&SHORTCUT_NEW),
                fmt(&SHORTCUT_OPEN),
                fmt(&SHORTCUT_SAVE),
                fmt(&SHORTCUT_SAVE_AS),
            );
            if ui
                .add(egui::Button::new("New…").shortcut_text(new))
                .clicked()
            {
                self.dialog = Some(new_dialog());
                ui.close();
            }
            if ui
                .add(egui::Button::new("Open…").shortcut_text(open))
                .clicked()
            {
                self.open_path_dialog(PathPurpose::Open, view.path);
                ui.close();
            }
            ui.menu_button("Open Recent", |ui| {
                if view.recent.is_empty() {
                    ui.label("No recent files");
                }
                for path in view.recent {
                    if ui.button(path.display().to_string()).clicked() {
                        actions.push(FileAction::Open(path.clone()));
                        ui.close();
                    }
                }
            });
            ui.separator();
            if ui
                .add(egui::Button::new("Save").shortcut_text(save))
                .clicked()
            {
                actions.push(FileAction::Save);
                ui.close();
            }
            if ui
                .add(egui::Button::new("Save As…").shortcut_text(save_as))
                .clicked()
            {
                self.open_save_as(view.path);
                ui.close();
            }
            ui.separator();
            if ui.button("Import Heightmap…").clicked() {
                self.dialog = Some(import_dialog());
                ui.close();
            }
            for (label, purpose) in [
                ("Export Heightmap (PNG)…", PathPurpose::ExportHeightmap),
                ("Export Mesh (glTF .glb)…", PathPurpose::ExportGlb),
            ] {
                if ui.button(label).clicked() {
                    match view.export_blocked {
                        Some(why) => self.show_message(why.to_string(), true),
                        None => self.open_path_dialog(purpose, view.path),
                    }
                    ui.close();
                }
            }
            ui.menu_button("Export Low-poly Mesh (.glb)", |ui| {
                let settings = &mut self.low_poly_export;
                ui.horizontal(|ui| {
                    ui.label("Terrace step");
                    ui.add(
                        egui::DragValue::new(&mut settings.step_cells)
                            .range(0.25..=32.0)
                            .speed(0.25)
                            .suffix(" cells"),
                    );
                });
                ui.horizontal(|ui| {
                    ui.label("Collision block");
                    egui::ComboBox::from_id_salt("low_poly_collision_block")
                        .selected_text(match settings.collision_block_cells {
                            0 => "none".to_string(),
                            n => format!("{n} cells"),
                        })
                        .show_ui(ui, |ui| {
                            ui.selectable_value(&mut settings.collision_block_cells, 0, "none");
                            for n in [1u32, 2, 4, 8, 16, 32] {
                                ui.selectable_value(
                                    &mut settings.collision_block_cells,
                                    n,
                                    format!("{n} cells"),
                                );
                            }
                        });
                });
                if ui.button("Export…").clicked() {
                    match view.export_blocked {
                        Some(why) => self.show_message(why.to_string(), true),
                        None => self.open_path_dialog(PathPurpose::ExportLowPolyGlb, view.path),
                    }
                    ui.close();
                }
            });
            ui.separator();
            ui.horizontal(|ui| {
                ui.label("Autosave every");
                ui.add(
                    egui::DragValue::new(&mut self.autosave_minutes)
                        .range(0.0..=120.0)
                        .speed(0.5)
                        .suffix(" min"),
                )
                .on_hover_text("Writes a recovery copy beside the world; 0 turns autosave off");
            });
            ui.separator();
            if ui.button("Quit").clicked() {
                actions.push(FileAction::Quit);
                ui.close();
            }
        });
    }

    fn poll_browse(&mut self) {
        let Some((target, rx)) = &self.browse else {
            return;
        };
        let Ok(answer) = rx.try_recv() else {
            return;
        };
        let target = *target;
        self.browse = None;
        let Some(chosen) = answer else {
            return;
        };
        let text = chosen.display().to_string();
        match (&mut self.dialog, target) {
            (Some(Dialog::Path { path, .. }), BrowseTarget::PathDialog)
            | (Some(Dialog::Import { path, .. }), BrowseTarget::ImportFile) => *path = text,
            _ => {}
        }
    }

    /// A "Browse…" button that asks the native dialog on a helper thread
    /// (the editor keeps drawing while it is open).
    fn browse_button(
        &mut self,
        ui: &mut egui::Ui,
        target: BrowseTarget,
        title: &str,
        extension: &str,
        save: bool,
        current: &str,
    ) {
        let waiting = self.browse.is_some();
        let button = ui
            .add_enabled(
                self.dialog_service && !waiting,
                egui::Button::new("Browse…"),
            )
            .on_disabled_hover_text(if waiting {
                "A file dialog is open"
            } else {
                "No file dialog service (XDG portal or zenity): type the path"
            });
        if !button.clicked() {
            return;
        }
        let (tx, rx) = channel();
        let current = PathBuf::from(current);
        let (title, extension) = (title.to_string(), extension.to_string());
        std::thread::spawn(move || {
            let mut dialog = rfd::FileDialog::new()
                .set_title(title)
                .add_filter(extension.to_uppercase(), &[extension.as_str()]);
            if let Some(dir) = current.parent().filter(|d| d.is_dir()) {
                dialog = dialog.set_directory(dir);
            }
            let answer = if save {
                if let Some(name) = current.file_name() {
                    dialog = dialog.set_file_name(name.to_string_lossy());
                }
                dialog.save_file()
            } else {
                dialog.pick_file()
            };
            let _ = tx.send(answer);
        });
        self.browse = Some((target, rx));
    }

    fn dialogs(&mut self, ctx: &egui::Context, actions: &mut Vec<FileAction>) {
        self.poll_browse();
        let Some(mut dialog) = self.dialog.take() else {
            return;
        };
        let title = match &dialog {
            Dialog::New { .. } => "New world",
            Dialog::Path { purpose, .. } => purpose.title(),
            Dialog::Import { .. } => "Import heightmap",
        };
        let mut keep = true;
        egui::Window::new(title)
            .collapsible(false)
            .resizable(false)
            .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
            .show(ctx, |ui| {
                keep = match &mut dialog {
                    Dialog::New {
                        seed,
                        size_cells,
                        preset,
                    } => new_world_dialog_ui(ui, seed, size_cells, preset, actions),
                    Dialog::Path { purpose, path } => {
                        self.path_dialog_ui(ui, *purpose, path, actions)
                    }
                    import @ Dialog::Import { .. } => self.import_dialog_ui(ui, import, actions),
                };
            });
        if keep {
            self.dialog = Some(dialog);
        }
    }

    /// File ▸ Open / Save As / Export: a path field, Browse…, OK and Cancel.
    /// Returns false when the dialog closes.
    fn path_dialog_ui(
        &mut self,
        ui: &mut egui::Ui,
        purpose: PathPurpose,
        path: &mut String,
        actions: &mut Vec<FileAction>,
    ) -> bool {
        let mut keep = true;
        ui.horizontal(|ui| {
            ui.label("File");
            let edit = ui.add(egui::TextEdit::singleline(path).desired_width(360.0));
            if edit.lost_focus()
                && ui.input(|i| i.key_pressed(Key::Enter))
                && !path.trim().is_empty()
            {
                actions.push(path_action(purpose, path));
                keep = false;
            }
        });
        let current = path.clone();
        ui.horizontal(|ui| {
            self.browse_button(
                ui,
                BrowseTarget::PathDialog,
                purpose.title(),
                purpose.extension(),
                purpose.saves(),
                &current,
            );
            let ok = if purpose.saves() { "Save" } else { "Open" };
            if ui
                .add_enabled(!current.trim().is_empty(), egui::Button::new(ok))
                .clicked()
            {
                actions.push(path_action(purpose, &current));
                keep = false;
            }
            if ui.button("Cancel").clicked() {
                keep = false;
            }
        });
        keep
    }

    /// File ▸ Import Heightmap: the file, the import settings and where the
    /// terrain goes. Returns false when the dialog closes.
    fn import_dialog_ui(
        &mut self,
        ui: &mut egui::Ui,
        dialog: &mut Dialog,
        actions: &mut Vec<FileAction>,
    ) -> bool {
        let Dialog::Import {
            path,
            cells_per_pixel,
            vertical_scale,
            base_height_cells,
            base_material,
            sea_level,
            into_world,
            offset_x_chunks,
            offset_z_chunks,
        } = dialog
        else {
            return true;
        };
        let mut keep = true;
        let current = path.clone();
        ui.horizontal(|ui| {
            ui.label("PNG");
            ui.add(egui::TextEdit::singleline(path).desired_width(300.0));
        });
        self.browse_button(
            ui,
            BrowseTarget::ImportFile,
            "Import heightmap",
            "png",
            false,
            &current,
        );
        ui.label("A JSON sidecar beside the PNG sets the elevation range and pixel spacing.");
        egui::Grid::new("import").num_columns(2).show(ui, |ui| {
            ui.label("Cells per pixel");
            ui.add(
                egui::DragValue::new(cells_per_pixel)
                    .range(0.125..=64.0)
                    .speed(0.05),
            );
            ui.end_row();
            ui.label("Vertical scale");
            ui.add(
                egui::DragValue::new(vertical_scale)
                    .range(0.05..=50.0)
                    .speed(0.05),
            );
            ui.end_row();
            ui.label("Base material");
            egui::ComboBox::from_id_salt("base_material")
                .selected_text(base_material.map_or("Layered rock", |m| m.name()))
                .show_ui(ui, |ui| {
                    ui.selectable_value(base_material, None, "Layered rock");
                    for m in Material::solids() {
                        ui.selectable_value(base_material, Some(m), m.name());
                    }
                });
            ui.end_row();
            ui.label("Base height");
            ui.add(
                egui::DragValue::new(base_height_cells)
                    .range(-1024..=1024)
                    .suffix(" cells"),
            );
            ui.end_row();
            let mut sea = sea_level.is_some();
            ui.checkbox(&mut sea, "Sea level");
            let mut value = sea_level.unwrap_or(0.0);
            ui.add_enabled(sea, egui::DragValue::new(&mut value).speed(1.0))
                .on_hover_text(
                    "Elevation (metres with a sidecar, else 0–1) below which air becomes water",
                );
            *sea_level = sea.then_some(value);
            ui.end_row();
            ui.label("Placement");
            ui.vertical(|ui| {
                ui.radio_value(into_world, false, "New world");
                ui.radio_value(
                    into_world,
                    true,
                    "Into this world, replacing the columns it covers",
                );
            });
            ui.end_row();
            if *into_world {
                ui.label("Offset (chunks)");
                ui.horizontal(|ui| {
                    ui.add(egui::DragValue::new(offset_x_chunks).prefix("x "));
                    ui.add(egui::DragValue::new(offset_z_chunks).prefix("z "));
                });
                ui.end_row();
            }
        });
        ui.horizontal(|ui| {
            if ui
                .add_enabled(!current.trim().is_empty(), egui::Button::new("Import"))
                .clicked()
            {
                let settings = HeightmapSettings {
                    cells_per_pixel: *cells_per_pixel,
                    vertical_scale: *vertical_scale,
                    base_height_cells: *base_height_cells,
                    sea_level_m: *sea_level,
                    base_material: *base_material,
                };
                let placement = if *into_world {
                    ImportPlacement::IntoWorld {
                        offset_x_chunks: *offset_x_chunks,
                        offset_z_chunks: *offset_z_chunks,
                    }
                } else {
                    ImportPlacement::NewWorld
                };
                actions.push(FileAction::Import(
                    PathBuf::from(current.trim()),
                    settings,
                    placement,
                ));
                keep = false;
            }
            if ui.button("Cancel").clicked() {
                keep = false;
            }
        });
        keep
    }

    fn unsaved_prompt(
        &mut self,
        ctx: &egui::Context,
        view: &FileMenuView<'_>,
        escape: bool,
    ) -> Option<UnsavedAnswer> {
        let pending = self.pending.as_ref()?;
        let verb = match pending {
            FileAction::Quit => "closing",
            FileAction::New(..) => "creating a new world",
            FileAction::Import(..) => "importing",
            _ => "opening another world",
        };
        let mut answer = None;
        egui::Modal::new(egui::Id::unique("strata_unsaved_changes")).show(ctx, |ui| {
            ui.heading("Unsaved changes");
            ui.label(format!("Save the changes to {} before {verb}?", view.name));
            ui.horizontal(|ui| {
                if ui.button("Save").clicked() {
                    answer = Some(UnsavedAnswer::Save);
                }
                if ui.button("Don't save").clicked() {
                    answer = Some(UnsavedAnswer::Discard);
                }
                if ui.button("Cancel").clicked() {
                    answer = Some(UnsavedAnswer::Cancel);
                }
            });
        });
        if escape {
            answer = Some(UnsavedAnswer::Cancel);
        }
        if answer == Some(UnsavedAnswer::Cancel) {
            self.pending = None;
        }
        answer
    }

    fn notices(&mut self, ctx: &egui::Context, actions: &mut Vec<FileAction>) {
        if let Some((text, error)) = &self.message {
            let mut close = false;
            egui::Window::new(if *error { "Error" } else { "Strata" })
                .collapsible(false)
                .anchor(egui::Align2::CENTER_BOTTOM, [0.0, -24.0])
                .show(ctx, |ui| {
                    if *error {
                        ui.colored_label(egui::Color32::LIGHT_RED, text);
                    } else {
                        ui.label(text);
                    }
                    close = ui.button("OK").clicked();
                });
            if close {
                self.message = None;
            }
        }
        if let Some((path, message)) = &self.bad_chunks {
            let mut close = false;
            egui::Window::new("Damaged chunks")
                .collapsible(false)
                .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
                .show(ctx, |ui| {
                    ui.colored_label(egui::Color32::LIGHT_RED, message);
                    ui.label("The world that is open stays open. Load the rest of the file without the damaged chunks?");
                    ui.horizontal(|ui| {
                        if ui.button("Load the rest").clicked() {
                            actions.push(FileAction::OpenSkippingBadChunks(path.clone()));
                            close = true;
                        }
                        if ui.button("Cancel").clicked() {
                            close = true;
                        }
                    });
                });
            if close {
                self.bad_chunks = None;
            }
        }
        if let Some((path, written, what)) = &self.recovery {
            let mut close = false;
            let age = written.elapsed().map(|d| d.as_secs() / 60).unwrap_or(0);
            egui::Window::new("Recover unsaved work?")
                .collapsible(false)
                .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
                .show(ctx, |ui| {
                    ui.label(format!(
                        "{what}\n{}\n(written {age} min ago)",
                        path.display()
                    ));
                    ui.horizontal(|ui| {
                        if ui.button("Recover").clicked() {
                            actions.push(FileAction::Recover(path.clone()));
                            close = true;
                        }
                        if ui.button("Discard it").clicked() {
                            actions.push(FileAction::DiscardRecovery(path.clone()));
                            close = true;
                        }
                        if ui.button("Not now").clicked() {
                            close = true;
                        }
                    });
                });
            if close {
                self.recovery = None;
            }
        }
    }
}

fn progress_window(
    ctx: &egui::Context,
    label: &str,
    progress: &Progress,
    actions: &mut Vec<FileAction>,
) {
    egui::Window::new("Working")
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_TOP, [0.0, 40.0])
        .show(ctx, |ui| {
            ui.label(label);
            let bar = match progress.fraction() {
                Some(f) => egui::ProgressBar::new(f).text(format!(
                    "{} {:.0}%",
                    progress.stage(),
                    f * 100.0
                )),
                None => egui::ProgressBar::new(0.0)
                    .text(progress.stage())
                    .animate(true),
            };
            ui.add(bar.desired_width(320.0));
            if progress.is_cancelled() {
                ui.label("Cancelling…");
            } else if ui.button("Cancel").clicked() {
                actions.push(FileAction::CancelJob);
            }
        });
    // Keep redrawing so the bar moves.
    ctx.request_repaint();
}

fn path_action(purpose: PathPurpose, text: &str) -> FileAction {
    let mut path = PathBuf::from(text.trim());
    if purpose.saves() && path.extension().is_none() {
        path.set_extension(purpose.extension());
    }
    match purpose {
        PathPurpose::Open => FileAction::Open(path),
        PathPurpose::SaveAs => FileAction::SaveAs(path),
        PathPurpose::ExportGlb => FileAction::ExportGlb(path),
        PathPurpose::ExportHeightmap => FileAction::ExportHeightmap(path),
        PathPurpose::ExportLowPolyGlb => FileAction::ExportLowPolyGlb(path),
    }
}

fn new_dialog() -> Dialog {
    Dialog::New {
        seed: DEFAULT_SEED.to_string(),
        size_cells: DEFAULT_SIZE_CELLS,
        preset: WorldPreset::Generated,
    }
}

fn import_dialog() -> Dialog {
    let d = HeightmapSettings::default();
    Dialog::Import {
        path: String::new(),
        cells_per_pixel: d.cells_per_pixel,
        vertical_scale: d.vertical_scale,
        base_height_cells: d.base_height_cells,
        base_material: d.base_material,
        sea_level: d.sea_level_m,
        into_world: false,
        offset_x_chunks: 0,
        offset_z_chunks: 0,
    }
}

/// `name` in the current directory, as text for a path field.
fn default_path(name: &str) -> String {
    std::env::current_dir()
        .map(|d| d.join(name))
        .unwrap_or_else(|_| PathBuf::from(name))
        .display()
        .to_string()
}

/// File ▸ New: preset, seed and size, Create and Cancel. Returns false
/// when the dialog closes.
fn new_world_dialog_ui(
    ui: &mut egui::Ui,
    seed: &mut String,
    size_cells: &mut u32,
    preset: &mut WorldPreset,
    actions: &mut Vec<FileAction>,
) -> bool {
    let mut keep = true;
    egui::Grid::new("new_world").num_columns(2).show(ui, |ui| {
        ui.label("Preset");
        egui::ComboBox::from_id_salt("preset")
            .selected_text(preset.name())
            .show_ui(ui, |ui| {
                for p in WorldPreset::all() {
                    ui.selectable_value(preset, p, p.name());
                }
            });
        ui.end_row();
        ui.label("Seed");
        ui.add_enabled(
            preset.is_seeded(),
            egui::TextEdit::singleline(seed).desired_width(120.0),
        );
        ui.end_row();
        ui.label("Size");
        egui::ComboBox::from_id_salt("size")
            .selected_text(size_label(*size_cells))
            .show_ui(ui, |ui| {
                for s in NEW_WORLD_SIZES_CELLS {
                    let text = if new_world_streams(s) {
                        format!("{} (streams)", size_label(s))
                    } else {
                        size_label(s)
                    };
                    ui.selectable_value(size_cells, s, text);
                }
            });
        ui.end_row();
    });
    let streams = new_world_streams(*size_cells);
    let parsed = seed.trim().parse::<u64>();
    if parsed.is_err() {
        ui.colored_label(
            egui::Color32::LIGHT_RED,
            "The seed must be a whole number ≥ 0",
        );
    }
    let flat_streams = streams && !preset.streams();
    if flat_streams {
        ui.colored_label(
            egui::Color32::LIGHT_RED,
            format!(
                "A {} world is at most {MAX_SIZE_CELLS} cells across",
                preset.name().to_lowercase()
            ),
        );
    } else if let WorldPreset::Recipe(i) = *preset {
        let description = crate::terrain::recipe::stages::SHIPPED_RECIPES
            .get(i)
            .and_then(|(_, text)| crate::terrain::recipe::stages::Recipe::from_json(text).ok())
            .map(|r| r.description)
            .unwrap_or_default();
        ui.label(
            egui::RichText::new(format!(
                "{description} Erosion, rivers and the breach run once, with progress \
                 and Cancel."
            ))
            .small()
            .weak(),
        );
    } else if streams {
        ui.label(
            egui::RichText::new(
                "Streams: nothing is generated up front; chunks load as you fly \
                 and stay within the memory budget.",
            )
            .small()
            .weak(),
        );
    }
    ui.horizontal(|ui| {
        if ui
            .add_enabled(parsed.is_ok() && !flat_streams, egui::Button::new("Create"))
            .clicked()
        {
            if let Ok(seed) = parsed {
                actions.push(FileAction::New(
                    GeneratorSettings {
                        seed,
                        size_cells: *size_cells,
                    },
                    *preset,
                ));
            }
            keep = false;
        }
        if ui.button("Cancel").clicked() {
            keep = false;
        }
    });
    keep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_paths_get_the_purpose_extension_and_open_paths_stay() {
        assert_eq!(
            path_action(PathPurpose::SaveAs, " /tmp/valley "),
            FileAction::SaveAs(PathBuf::from("/tmp/valley.strata"))
        );
        assert_eq!(
            path_action(PathPurpose::ExportGlb, "/tmp/m"),
            FileAction::ExportGlb(PathBuf::from("/tmp/m.glb"))
        );
        assert_eq!(
            path_action(PathPurpose::Open, "/tmp/w"),
            FileAction::Open(PathBuf::from("/tmp/w"))
        );
    }

    #[test]
    fn new_offers_sizes_up_to_a_million_cells_and_large_ones_stream() {
        assert_eq!(NEW_WORLD_SIZES_CELLS.last(), Some(&1_048_576));
        assert!(NEW_WORLD_SIZES_CELLS.iter().all(|s| s % 32 == 0));
        assert!(!new_world_streams(512) && !new_world_streams(4096));
        assert!(new_world_streams(16_384) && new_world_streams(1_048_576));
        for s in NEW_WORLD_SIZES_CELLS {
            let settings = GeneratorSettings {
                seed: 1,
                size_cells: s,
            };
            let valid = if new_world_streams(s) {
                settings.validate_streaming()
            } else {
                settings.validate()
            };
            assert!(valid.is_ok(), "{s}: {valid:?}");
        }
        assert_eq!(size_label(1_048_576), "1 048 576 cells · 4194 km");
        assert_eq!(size_label(4096), "4 096 cells · 16.4 km");
        assert_eq!(size_label(512), "512 cells · 2.0 km");
    }

    #[test]
    fn only_world_replacing_actions_ask_about_unsaved_changes() {
        assert!(FileAction::Quit.replaces_world());
        assert!(FileAction::Open(PathBuf::from("a")).replaces_world());
        assert!(!FileAction::Save.replaces_world());
        assert!(!FileAction::ExportGlb(PathBuf::from("a")).replaces_world());
        let into = ImportPlacement::IntoWorld {
            offset_x_chunks: 0,
            offset_z_chunks: 0,
        };
        assert!(
            !FileAction::Import(PathBuf::from("a"), HeightmapSettings::default(), into)
                .replaces_world()
        );
    }

    /// One File-menu pass with `events` (e.g. a key press); returns what it asked for.
    fn show_with(
        menu: &mut FileMenu,
        ctx: &egui::Context,
        events: Vec<egui::Event>,
    ) -> (Vec<FileAction>, Option<UnsavedAnswer>) {
        let view = FileMenuView {
            name: "w.strata",
            path: None,
            dirty: true,
            recent: &[],
            job: None,
            export_blocked: None,
        };
        let input = egui::RawInput {
            screen_rect: Some(egui::Rect::from_min_size(
                egui::Pos2::ZERO,
                egui::vec2(800.0, 600.0),
            )),
            events,
            ..Default::default()
        };
        let mut result = (Vec::new(), None);
        let mut out = ctx.run_pass(input, |ctx| {
            let (_, actions, answer) = menu.show(ctx, &view);
            result = (actions, answer);
        });
        out.textures_delta.clear();
        result
    }

    fn escape() -> egui::Event {
        egui::Event::Key {
            key: Key::Escape,
            physical_key: None,
            pressed: true,
            repeat: false,
            modifiers: Modifiers::NONE,
        }
    }

    #[test]
    fn dialogs_and_prompts_are_modal_and_escape_closes_them() {
        let ctx = egui::Context::default();
        let mut menu = FileMenu::default();
        assert!(!menu.is_modal_open());
        menu.open_save_as(None);
        assert!(menu.is_modal_open(), "Save As takes the clicks");
        show_with(&mut menu, &ctx, vec![]);
        assert!(menu.is_modal_open());
        let (actions, _) = show_with(&mut menu, &ctx, vec![escape()]);
        assert!(actions.is_empty(), "Escape saves nothing");
        assert!(!menu.is_modal_open(), "Escape closed the dialog");

        // "Save changes first?": Escape answers Cancel.
        menu.pending = Some(FileAction::Quit);
        assert!(menu.is_modal_open());
        let (_, answer) = show_with(&mut menu, &ctx, vec![escape()]);
        assert_eq!(answer, Some(UnsavedAnswer::Cancel));
        assert!(!menu.is_modal_open());
    }
}
