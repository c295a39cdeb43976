//! The File menu's windows that ask for something: File ▸ New (preset,
//! seed and size), the path dialogs of Open, Save As and the exports, and
//! File ▸ Import Heightmap, with the native file dialog behind their
//! Browse… buttons ([`Browser`]). Each returns whether it stays open and
//! pushes the [`FileAction`] it asks for.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, channel};

use egui::Key;

use crate::editor::files::file_action::FileAction;
use crate::editor::files::file_jobs::{ImportPlacement, WorldPreset};
use crate::editor::files::import_inspection::Inspection;
use crate::io::heightmap::heightmap_import::{HeightmapSettings, NoDataFill, RawLayout};
use crate::terrain::generation::generate::{
    DEFAULT_SEED, DEFAULT_SIZE_CELLS, GeneratorSettings, MAX_SIZE_CELLS,
};
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::CELL_SIZE_STUDS;

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
/// kilometres (a cell is 4 studs; a stud is taken as one metre, so
/// 1,048,576 cells are 4,194 km), e.g. `"65 536 cells · 262 km"`.
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

/// A File menu window that waits for the user.
#[derive(Clone, Debug)]
pub(crate) enum Dialog {
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
        nodata: NoDataFill,
        raw: RawLayout,
        /// What the chosen file is, read in the background.
        inspection: Inspection,
        into_world: bool,
        offset_x_chunks: i32,
        offset_z_chunks: i32,
    },
}

/// What a path dialog asks a path for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PathPurpose {
    Open,
    SaveAs,
    ExportGlb,
    ExportHeightmap,
    ExportLowPolyGlb,
}

impl PathPurpose {
    pub(crate) fn title(self) -> &'static str {
        match self {
            PathPurpose::Open => "Open world",
            PathPurpose::SaveAs => "Save world as",
            PathPurpose::ExportGlb => "Export mesh (binary glTF)",
            PathPurpose::ExportHeightmap => "Export heightmap (PNG, RAW16, EXR or GeoTIFF)",
            PathPurpose::ExportLowPolyGlb => "Export low-poly mesh (binary glTF)",
        }
    }

    pub(crate) fn extension(self) -> &'static str {
        match self {
            PathPurpose::Open | PathPurpose::SaveAs => "strata",
            PathPurpose::ExportGlb | PathPurpose::ExportLowPolyGlb => "glb",
            PathPurpose::ExportHeightmap => "png",
        }
    }

    /// The extensions its native file dialog offers.
    pub(crate) fn extensions(self) -> &'static [&'static str] {
        match self {
            PathPurpose::Open | PathPurpose::SaveAs => &["strata"],
            PathPurpose::ExportGlb | PathPurpose::ExportLowPolyGlb => &["glb"],
            PathPurpose::ExportHeightmap => &["png", "tif", "tiff", "exr", "r16", "raw"],
        }
    }

    pub(crate) fn saves(self) -> bool {
        self != PathPurpose::Open
    }
}

/// Where a native dialog's answer goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BrowseTarget {
    PathDialog,
    ImportFile,
}

/// The native file dialog (`rfd`) behind the Browse… buttons: asked on a
/// helper thread so the editor keeps drawing while it is open.
pub(crate) struct Browser {
    /// The dialog open now: where its answer goes and the channel it comes on.
    pending: Option<(BrowseTarget, Receiver<Option<PathBuf>>)>,
    /// A dialog service exists (an XDG portal or zenity).
    service: bool,
}

impl Browser {
    /// A browser that offers the native dialog when `service` is true.
    pub(crate) fn new(service: bool) -> Browser {
        Browser {
            pending: None,
            service,
        }
    }

    /// Puts the native dialog's answer, once it came, into `dialog`'s path.
    pub(crate) fn poll(&mut self, dialog: &mut Option<Dialog>) {
        let Some((target, rx)) = &self.pending else {
            return;
        };
        let Ok(answer) = rx.try_recv() else {
            return;
        };
        let target = *target;
        self.pending = None;
        let Some(chosen) = answer else {
            return;
        };
        let text = chosen.display().to_string();
        match (dialog, target) {
            (Some(Dialog::Path { path, .. }), BrowseTarget::PathDialog)
            | (Some(Dialog::Import { path, .. }), BrowseTarget::ImportFile) => *path = text,
            _ => {}
        }
    }

    /// A "Browse…" button that asks the native dialog on a helper thread
    /// (the editor keeps drawing while it is open).
    pub(crate) fn button(
        &mut self,
        ui: &mut egui::Ui,
        target: BrowseTarget,
        title: &str,
        extensions: &'static [&'static str],
        save: bool,
        current: &str,
    ) {
        let waiting = self.pending.is_some();
        let button = ui
            .add_enabled(self.service && !waiting, egui::Button::new("Browse…"))
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
        let title = title.to_string();
        let filter = extensions.join(", ").to_uppercase();
        std::thread::spawn(move || {
            let mut dialog = rfd::FileDialog::new()
                .set_title(title)
                .add_filter(filter, extensions);
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
        self.pending = Some((target, rx));
    }
}

/// File ▸ Open / Save As / Export: a path field, Browse…, OK and Cancel.
/// Returns false when the dialog closes.
pub(crate) fn path_dialog_ui(
    ui: &mut egui::Ui,
    browser: &mut Browser,
    purpose: PathPurpose,
    path: &mut String,
    actions: &mut Vec<FileAction>,
) -> bool {
    let mut keep = true;
    ui.horizontal(|ui| {
        ui.label("File");
        let edit = ui.add(egui::TextEdit::singleline(path).desired_width(360.0));
        if edit.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter)) && !path.trim().is_empty() {
            actions.push(path_action(purpose, path));
            keep = false;
        }
    });
    let current = path.clone();
    ui.horizontal(|ui| {
        browser.button(
            ui,
            BrowseTarget::PathDialog,
            purpose.title(),
            purpose.extensions(),
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

/// The import settings: scale, base material and height, sea level and
/// where the terrain goes (a new world, or into this one at an offset).
fn import_settings_grid(
    ui: &mut egui::Ui,
    cells_per_pixel: &mut f32,
    vertical_scale: &mut f32,
    base_material: &mut Option<Material>,
    base_height_cells: &mut i32,
    (sea_level, nodata): (&mut Option<f64>, &mut NoDataFill),
    (into_world, offset_x_chunks, offset_z_chunks): (&mut bool, &mut i32, &mut i32),
) {
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
        ui.label("Missing samples");
        ui.horizontal(|ui| {
            ui.radio_value(nodata, NoDataFill::Floor, "World floor")
                .on_hover_text("NoData samples become the lowest valid elevation");
            ui.radio_value(nodata, NoDataFill::Sea, "Sea")
                .on_hover_text("NoData samples become sea floor under water");
        });
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
}

/// The RAW16 layout fields, for a path that names a RAW16 (`.r16`, `.raw`):
/// the size (or the square the length gives) and the byte order.
fn raw_layout_ui(ui: &mut egui::Ui, path: &str, raw: &mut RawLayout) {
    let is_raw = std::path::Path::new(path.trim())
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("r16") || e.eq_ignore_ascii_case("raw"));
    if !is_raw {
        return;
    }
    ui.horizontal(|ui| {
        let mut sized = raw.size_px.is_some();
        ui.checkbox(&mut sized, "Size")
            .on_hover_text("Off: a square whose side the file's length gives");
        let (mut w, mut h) = raw.size_px.unwrap_or((1025, 1025));
        ui.add_enabled(
            sized,
            egui::DragValue::new(&mut w).range(1..=65_536).prefix("w "),
        );
        ui.add_enabled(
            sized,
            egui::DragValue::new(&mut h).range(1..=65_536).prefix("h "),
        );
        raw.size_px = sized.then_some((w, h));
        ui.checkbox(&mut raw.big_endian, "Big-endian (Mac)");
    });
}

/// File ▸ Import Heightmap: the file, the import settings and where the
/// terrain goes. Returns false when the dialog closes.
pub(crate) fn import_dialog_ui(
    ui: &mut egui::Ui,
    browser: &mut Browser,
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
        nodata,
        raw,
        inspection,
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
        ui.label("File");
        ui.add(egui::TextEdit::singleline(path).desired_width(300.0));
    });
    browser.button(
        ui,
        BrowseTarget::ImportFile,
        "Import heightmap",
        &["png", "tif", "tiff", "exr", "r16", "raw"],
        false,
        &current,
    );
    ui.label(
        "PNG, GeoTIFF, EXR or RAW16 (.r16, .raw). A JSON sidecar beside a PNG, EXR or RAW16 \
         sets its pixel spacing (and a PNG's or RAW16's elevation range); a GeoTIFF's \
         georeference gives its own.",
    );
    inspection.follow(&current, *raw);
    if let Some((cpp, vertical)) = inspection.take_default_scale() {
        // Elevation data in metres opens at its true scale, as on the
        // command line.
        (*cells_per_pixel, *vertical_scale) = (cpp, vertical);
    }
    inspection.ui(ui, *cells_per_pixel);
    raw_layout_ui(ui, &current, raw);
    import_settings_grid(
        ui,
        cells_per_pixel,
        vertical_scale,
        base_material,
        base_height_cells,
        (sea_level, nodata),
        (into_world, offset_x_chunks, offset_z_chunks),
    );
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
                nodata: *nodata,
                raw: *raw,
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

/// The action a path dialog's text asks for (a saved file gets the
/// purpose's extension when it has none).
pub(crate) fn path_action(purpose: PathPurpose, text: &str) -> FileAction {
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

/// File ▸ New with the default seed and size.
pub(crate) fn new_dialog() -> Dialog {
    Dialog::New {
        seed: DEFAULT_SEED.to_string(),
        size_cells: DEFAULT_SIZE_CELLS,
        preset: WorldPreset::Generated,
    }
}

/// File ▸ Import Heightmap with the default settings.
pub(crate) fn import_dialog() -> Dialog {
    let d = HeightmapSettings::default();
    Dialog::Import {
        path: String::new(),
        cells_per_pixel: d.cells_per_pixel,
        vertical_scale: d.vertical_scale,
        base_height_cells: d.base_height_cells,
        base_material: d.base_material,
        sea_level: d.sea_level_m,
        nodata: d.nodata,
        raw: d.raw,
        inspection: Inspection::default(),
        into_world: false,
        offset_x_chunks: 0,
        offset_z_chunks: 0,
    }
}

/// `name` in the current directory, as text for a path field.
pub(crate) fn default_path(name: &str) -> String {
    std::env::current_dir()
        .map(|d| d.join(name))
        .unwrap_or_else(|_| PathBuf::from(name))
        .display()
        .to_string()
}

/// File ▸ New: preset, seed and size, Create and Cancel. Returns false
/// when the dialog closes.
pub(crate) fn new_world_dialog_ui(
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
        // At the body size: it says what the recipe makes (it was small and
        // weak, hard to read).
        ui.label(description);
        ui.label(
            egui::RichText::new(
                "Erosion, rivers and the breach run once, with progress and Cancel.",
            )
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
