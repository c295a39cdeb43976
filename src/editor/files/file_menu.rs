//! The File menu and its dialogs: New, Open, Open Recent, Save, Save As,
//! Import Heightmap, Export, the unsaved-changes prompt, the recovery offer,
//! error messages and the progress window of a running file job.
//!
//! Pure UI: it turns clicks and shortcuts into [`FileAction`]s for
//! [`crate::editor::files::file_session::FileSession`] to carry out. Paths come from the
//! native dialog (`rfd`) when a dialog service exists (an XDG desktop portal
//! on the session bus, or `zenity`), and always from an in-app path field,
//! so the editor works on bare X servers too.

use crate::editor::files::file_action::FileAction;
use crate::editor::files::file_action::UnsavedAnswer;
use crate::editor::files::file_dialogs::Browser;
use crate::editor::files::file_dialogs::Dialog;
use crate::editor::files::file_dialogs::PathPurpose;
use crate::editor::files::file_dialogs::default_path;
use crate::editor::files::file_dialogs::import_dialog;
use crate::editor::files::file_dialogs::import_dialog_ui;
use crate::editor::files::file_dialogs::new_dialog;
use crate::editor::files::file_dialogs::new_world_dialog_ui;
use crate::editor::files::file_dialogs::path_dialog_ui;
use crate::editor::files::notices::Notices;
use crate::editor::files::notices::progress_window;
use crate::editor::labels::count_noun;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use egui::{Key, KeyboardShortcut, Modifiers};

use crate::progress::Progress;

/// Ctrl+N.
pub const SHORTCUT_NEW: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::N);
/// Ctrl+O.
pub const SHORTCUT_OPEN: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::O);
/// Ctrl+S.
pub const SHORTCUT_SAVE: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::S);
/// Ctrl+Shift+S.
pub const SHORTCUT_SAVE_AS: KeyboardShortcut =
    KeyboardShortcut::new(Modifiers::COMMAND.plus(Modifiers::SHIFT), Key::S);

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
    /// A world is being read to replace the open one (the window's
    /// start-up read, an import): Save, Save As and the exports are
    /// greyed out, since they would write the empty stand-in world the
    /// read then replaces. New and Open stay (the last asked for wins).
    pub world_being_read: bool,
}

/// Why a streaming world cannot be exported without a region box.
pub const EXPORT_NEEDS_BOX: &str = "A streaming world exports a region box: select one with the \
     Region tool (B, then drag) and export again.";

/// State of the File menu and its windows.
pub struct FileMenu {
    dialog: Option<Dialog>,
    /// The action waiting for an answer to "save changes first?".
    pending: Option<FileAction>,
    /// Messages, the damaged-chunks offer and the recovery offer.
    notices: Notices,
    /// The native file dialog behind Browse….
    browser: Browser,
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
            notices: Notices::default(),
            browser: Browser::new(dialog_service_available()),
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
        self.notices.message = Some((text, error));
    }

    /// The message shown now, and whether it is an error.
    pub fn message(&self) -> Option<(&str, bool)> {
        self.notices
            .message
            .as_ref()
            .map(|(text, error)| (text.as_str(), *error))
    }

    /// The world whose damaged chunks the menu offers to leave out, if it
    /// offers that now.
    pub fn offered_bad_chunks(&self) -> Option<&std::path::Path> {
        self.notices
            .bad_chunks
            .as_ref()
            .map(|(path, _)| path.as_path())
    }

    /// Offers to load the rest of a world whose chunks failed verification.
    pub fn offer_skip_bad_chunks(&mut self, path: PathBuf, message: String) {
        self.notices.bad_chunks = Some((path, message));
    }

    /// Offers to recover from `recovery`, written at `written`.
    pub fn offer_recovery(&mut self, recovery: PathBuf, written: SystemTime) {
        let what = "An autosaved copy newer than the world was found:".to_string();
        self.notices.recovery = Some((recovery, written, what));
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
        if self.notices.recovery.is_none() {
            let what = format!(
                "A new streaming world was not saved before Strata closed \
                 ({}):",
                count_noun(edited_columns, "edited chunk column")
            );
            self.notices.recovery = Some((recovery, written, what));
        }
    }

    /// The recovery offer open now, if any: its path.
    pub fn recovery_offer(&self) -> Option<&Path> {
        self.notices.recovery.as_ref().map(|(p, _, _)| p.as_path())
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
        self.notices.show(ctx, &mut actions);
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
            || self.notices.bad_chunks.is_some()
            || self.notices.recovery.is_some()
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
                if !view.world_being_read {
                    self.open_save_as(view.path);
                }
            } else if i.consume_shortcut(&SHORTCUT_SAVE) {
                if !view.world_being_read {
                    actions.push(FileAction::Save);
                }
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

    /// File ▸ Export Low-poly Mesh: the terrace step, the collision block
    /// and Export….
    fn low_poly_export_menu(&mut self, ui: &mut egui::Ui, view: &FileMenuView<'_>) {
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
            let writable = !view.world_being_read;
            if ui
                .add_enabled(writable, egui::Button::new("Save").shortcut_text(save))
                .clicked()
            {
                actions.push(FileAction::Save);
                ui.close();
            }
            if ui
                .add_enabled(
                    writable,
                    egui::Button::new("Save As…").shortcut_text(save_as),
                )
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
                ("Export Heightmap…", PathPurpose::ExportHeightmap),
                ("Export Mesh (glTF .glb)…", PathPurpose::ExportGlb),
            ] {
                if ui.add_enabled(writable, egui::Button::new(label)).clicked() {
                    match view.export_blocked {
                        Some(why) => self.show_message(why.to_string(), true),
                        None => self.open_path_dialog(purpose, view.path),
                    }
                    ui.close();
                }
            }
            ui.add_enabled_ui(writable, |ui| {
                ui.menu_button("Export Low-poly Mesh (.glb)", |ui| {
                    self.low_poly_export_menu(ui, view);
                });
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

    fn dialogs(&mut self, ctx: &egui::Context, actions: &mut Vec<FileAction>) {
        self.browser.poll(&mut self.dialog);
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
                        path_dialog_ui(ui, &mut self.browser, *purpose, path, actions)
                    }
                    import @ Dialog::Import { .. } => {
                        import_dialog_ui(ui, &mut self.browser, import, actions)
                    }
                };
            });
        if keep {
            self.dialog = Some(dialog);
        }
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::editor::files::file_dialogs::NEW_WORLD_SIZES_CELLS;
    use crate::editor::files::file_dialogs::new_world_streams;
    use crate::editor::files::file_dialogs::path_action;
    use crate::editor::files::file_dialogs::size_label;
    use crate::editor::files::file_jobs::ImportPlacement;
    use crate::io::heightmap::heightmap_import::HeightmapSettings;
    use crate::terrain::generation::generate::GeneratorSettings;

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
        show_while(menu, ctx, events, false)
    }

    /// As [`show_with`], with a world being read (`world_being_read`) or not.
    fn show_while(
        menu: &mut FileMenu,
        ctx: &egui::Context,
        events: Vec<egui::Event>,
        world_being_read: bool,
    ) -> (Vec<FileAction>, Option<UnsavedAnswer>) {
        let view = FileMenuView {
            name: "w.strata",
            path: None,
            dirty: true,
            recent: &[],
            job: None,
            export_blocked: None,
            world_being_read,
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
        key(Key::Escape, Modifiers::NONE)
    }

    fn key(key: Key, modifiers: Modifiers) -> egui::Event {
        egui::Event::Key {
            key,
            physical_key: None,
            pressed: true,
            repeat: false,
            modifiers,
        }
    }

    #[test]
    fn save_and_save_as_shortcuts_do_nothing_while_a_world_is_read() {
        let ctx = egui::Context::default();
        let mut menu = FileMenu::default();
        let save = || key(Key::S, Modifiers::COMMAND);
        let save_as = || key(Key::S, Modifiers::COMMAND.plus(Modifiers::SHIFT));
        let (actions, _) = show_while(&mut menu, &ctx, vec![save()], true);
        assert!(actions.is_empty(), "no Save of the stand-in world");
        show_while(&mut menu, &ctx, vec![save_as()], true);
        assert!(!menu.is_modal_open(), "no Save As dialog either");
        // Once the world is read, both work again.
        let (actions, _) = show_while(&mut menu, &ctx, vec![save()], false);
        assert_eq!(actions, vec![FileAction::Save]);
        show_while(&mut menu, &ctx, vec![save_as()], false);
        assert!(menu.is_modal_open(), "Save As opened its dialog");
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
