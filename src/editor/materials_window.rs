//! The Materials window: the world's material library, one row per solid
//! material (filtered by name), edited live (the view redraws with each
//! change): its name, tint and tile size, a texture imported from a PBR
//! folder or one image (decoded on a helper thread), Reset to the built-in
//! look; and new materials added from a folder or image. Saved with the
//! world.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, channel};

use crate::editor::material_combo::material_combo;
use crate::io::materials::{
    ImportedMaterial, MaterialImportError, add_imported, apply_import, import_albedo_only,
    import_material,
};
use crate::terrain::Material;
use crate::terrain::command::edit_command::EditSession;
use crate::terrain::materials::MaterialLibrary;
use crate::terrain::materials::library::TILING_STUDS;
use crate::terrain::materials::texture::TEXTURE_SIDES_PX;
use crate::terrain::storage::grid::Grid;

/// What a texture being read is for.
#[derive(Clone, Debug, PartialEq)]
enum ImportTarget {
    /// An existing material: its albedo and maps, or (`top`) its top
    /// variant.
    Restyle { material: Material, top: bool },
    /// A new material of this name.
    Add { name: String },
}

/// A texture being read for one material.
struct ImportJob {
    target: ImportTarget,
    path: PathBuf,
    result: Receiver<Result<ImportedMaterial, MaterialImportError>>,
}

/// The Materials window's state.
#[derive(Default)]
pub struct MaterialsWindow {
    /// Shown.
    pub open: bool,
    /// The texture folder or image the Import buttons read.
    pub import_path: String,
    /// Name fields being typed, by material id (applied on Enter or when
    /// the field loses focus).
    names: Vec<(Material, String)>,
    job: Option<ImportJob>,
    folder_pick: Option<Receiver<Option<PathBuf>>>,
    /// The name a new material gets.
    new_name: String,
    /// Rows shown: those whose name holds this (case-insensitive).
    filter: String,
    /// The last outcome: `(is_error, text)`.
    message: Option<(bool, String)>,
    /// A removal being confirmed: the material and its replacement.
    removal: Option<(Material, Material)>,
    /// A confirmed removal, for [`MaterialsWindow::apply_library_changes`].
    removal_request: Option<(Material, Material)>,
}

/// What removing a material changed, for the tools to follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RemovedMaterial {
    /// The material removed.
    pub material: Material,
    /// What its cells and operations became.
    pub replacement: Material,
}

/// `n` and `noun`, plural unless one: "1 chunk", "14 chunks".
fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.2} MiB", bytes as f64 / f64::from(1u32 << 20))
}

impl MaterialsWindow {
    /// Applies a finished import to `library` (when `editable`, else drops
    /// it with a message).
    fn poll_import(&mut self, library: &mut MaterialLibrary, editable: bool) {
        if let Some(rx) = &self.folder_pick
            && let Ok(answer) = rx.try_recv()
        {
            if let Some(path) = answer {
                self.import_path = path.display().to_string();
            }
            self.folder_pick = None;
        }
        let Some(job) = &self.job else {
            return;
        };
        let Ok(result) = job.result.try_recv() else {
            return;
        };
        let target = job.target.clone();
        let path = job.path.display().to_string();
        self.job = None;
        self.message = Some(match result {
            Ok(_) if !editable => (true, "the world changed while the texture was read".into()),
            Ok(imported) => {
                let applied = match &target {
                    ImportTarget::Restyle { material, top } => {
                        apply_import(library, *material, *top, &imported)
                    }
                    ImportTarget::Add { name } => add_imported(library, name, &imported),
                };
                match applied {
                    Ok(text) => {
                        if matches!(target, ImportTarget::Add { .. }) {
                            self.new_name.clear();
                        }
                        (false, text)
                    }
                    Err(e) => (true, format!("{path}: {e}")),
                }
            }
            Err(e) => (true, e.to_string()),
        });
    }

    fn start_import(&mut self, target: ImportTarget, side_px: u32) {
        let top = matches!(target, ImportTarget::Restyle { top: true, .. });
        let path = PathBuf::from(self.import_path.trim());
        let (tx, rx) = channel();
        let job_path = path.clone();
        std::thread::spawn(move || {
            let imported = if top {
                import_albedo_only(&job_path, side_px)
            } else {
                import_material(&job_path, side_px)
            };
            let _ = tx.send(imported);
        });
        self.job = Some(ImportJob {
            target,
            path,
            result: rx,
        });
        self.message = None;
    }

    /// Shows the window (when open) over `ctx`, editing `library`; a
    /// streaming world (`editable` false) shows its library read-only.
    pub fn show(&mut self, ctx: &egui::Context, library: &mut MaterialLibrary, editable: bool) {
        self.poll_import(library, editable);
        if !self.open {
            return;
        }
        let mut open = self.open;
        egui::Window::new("Materials")
            .open(&mut open)
            .default_width(560.0)
            .show(ctx, |ui| {
                if !editable {
                    ui.label("Streaming worlds keep no material library yet: restyle materials in a whole world (.strata).");
                }
                ui.add_enabled_ui(editable, |ui| {
                    self.source_ui(ui, library);
                    ui.separator();
                    self.removal_ui(ui, library);
                    self.rows_ui(ui, library);
                });
                if let Some((error, text)) = &self.message {
                    let color = if *error {
                        ui.visuals().error_fg_color
                    } else {
                        ui.visuals().text_color()
                    };
                    ui.colored_label(color, text);
                }
                ui.label(
                    egui::RichText::new(format!(
                        "Texture memory: {} of {} ({} layers of {} each{})",
                        mib(library.needed_gpu_bytes()),
                        mib(library.texture_budget_bytes()),
                        library.layer_count(),
                        mib(library.needed_gpu_bytes() / u64::from(library.layer_count())),
                        if library.has_surfaces() {
                            ": albedo and surface maps"
                        } else {
                            ""
                        }
                    ))
                    .small()
                    .weak(),
                );
            });
        self.open = open;
    }

    /// The texture path, Browse, and the size imports are resized to.
    fn source_ui(&mut self, ui: &mut egui::Ui, library: &mut MaterialLibrary) {
        ui.horizontal(|ui| {
            ui.label("Texture folder or image");
            ui.add(egui::TextEdit::singleline(&mut self.import_path).desired_width(300.0));
            if ui
                .add_enabled(self.folder_pick.is_none(), egui::Button::new("Browse…"))
                .clicked()
            {
                let (tx, rx) = channel();
                std::thread::spawn(move || {
                    let _ = tx.send(rfd::FileDialog::new().pick_folder());
                });
                self.folder_pick = Some(rx);
            }
        });
        ui.horizontal(|ui| {
            ui.label("Texture size");
            let mut side = library.texture_side_px();
            egui::ComboBox::from_id_salt("material_texture_side")
                .selected_text(format!("{side}²"))
                .show_ui(ui, |ui| {
                    for s in TEXTURE_SIDES_PX {
                        ui.selectable_value(&mut side, s, format!("{s}²"));
                    }
                });
            if side != library.texture_side_px()
                && let Err(e) = library.set_texture_side_px(side)
            {
                self.message = Some((true, e.to_string()));
            }
            if self.job.is_some() {
                ui.spinner();
                ui.label("reading the texture…");
            }
        });
        ui.horizontal(|ui| {
            ui.label("New material");
            ui.add(
                egui::TextEdit::singleline(&mut self.new_name)
                    .hint_text("name")
                    .desired_width(140.0),
            );
            let can_add = self.job.is_none()
                && !self.import_path.trim().is_empty()
                && !self.new_name.trim().is_empty();
            if ui
                .add_enabled(can_add, egui::Button::new("Add from texture"))
                .on_hover_text(
                    "Add a material drawn with the texture folder or image above, at the next                      free id (up to 254 solid materials)",
                )
                .on_disabled_hover_text("Name it and choose a texture folder or image first")
                .clicked()
            {
                let name = self.new_name.trim().to_string();
                self.start_import(ImportTarget::Add { name }, library.texture_side_px());
            }
            ui.label(format!("{} materials", library.solid_count()));
        });
    }

    /// One row per solid material whose name matches the filter.
    fn rows_ui(&mut self, ui: &mut egui::Ui, library: &mut MaterialLibrary) {
        if library.solid_count() > 12 {
            ui.add(
                egui::TextEdit::singleline(&mut self.filter)
                    .hint_text("filter by name")
                    .desired_width(160.0),
            );
        }
        let shown: Vec<Material> = library
            .styles()
            .filter(|(_, s)| crate::editor::material_combo::name_matches(&s.name, &self.filter))
            .map(|(m, _)| m)
            .collect();
        egui::ScrollArea::vertical()
            .max_height(420.0)
            .show(ui, |ui| {
                egui::Grid::new("material_rows")
                    .striped(true)
                    .num_columns(10)
                    .show(ui, |ui| {
                        for material in shown {
                            self.row_ui(ui, library, material);
                            ui.end_row();
                        }
                    });
            });
    }

    /// The row's surface maps (which it has, the DirectX switch) and its
    /// height-blend sharpness.
    fn surface_ui(
        &mut self,
        ui: &mut egui::Ui,
        library: &mut MaterialLibrary,
        material: Material,
        style: &crate::terrain::materials::MaterialStyle,
    ) {
        let maps = style.surface_maps;
        ui.horizontal(|ui| {
            let letter = |on: bool, c: &str| if on { c.to_string() } else { "·".to_string() };
            ui.monospace(format!(
                "{}{}{}",
                letter(maps.normal, "N"),
                letter(maps.roughness, "R"),
                letter(maps.height, "H")
            ))
            .on_hover_text(
                "Surface maps imported with the texture: N normal, R roughness, H height \
                 (import a folder holding them)",
            );
            let mut directx = maps.normal_directx;
            if ui
                .add_enabled(maps.normal, egui::Checkbox::new(&mut directx, "DX"))
                .on_hover_text(
                    "The normal map was made for DirectX (green down): flip its green. \
                     Set from the file name on import; switch it if the lighting looks inverted",
                )
                .changed()
                && let Err(e) = library.flip_normal_green(material)
            {
                self.message = Some((true, e.to_string()));
            }
        });
        let mut pct = u32::from(style.blend_sharpness_pct);
        if ui
            .add_enabled(
                maps.height,
                egui::DragValue::new(&mut pct).range(0..=100).suffix(" %"),
            )
            .on_hover_text(
                "Height blend: how strongly this material's height map decides where it shows \
                 among blended materials (0 blends by weight; higher lets stones poke through \
                 grass instead of fading into it)",
            )
            .on_disabled_hover_text("Import a folder with a height map to blend by height")
            .changed()
        {
            let _ = library.set_blend_sharpness(material, pct);
        }
    }

    /// The confirmation of a removal: which material replaces the one
    /// removed, then Remove or Cancel.
    fn removal_ui(&mut self, ui: &mut egui::Ui, library: &MaterialLibrary) {
        let Some((material, mut replacement)) = self.removal else {
            return;
        };
        if !library.contains(material) {
            self.removal = None;
            return;
        }
        ui.horizontal(|ui| {
            ui.label(format!(
                "Remove {}: its cells and the operations that use it become",
                library.name(material)
            ));
            material_combo(ui, "removal_replacement", &mut replacement, false);
        });
        self.removal = Some((material, replacement));
        ui.horizontal(|ui| {
            let valid = replacement != material && library.contains(replacement);
            if ui
                .add_enabled(valid, egui::Button::new("Remove"))
                .on_hover_text("One undo step: Undo puts the material and its cells back")
                .on_disabled_hover_text("Choose another material to replace it")
                .clicked()
            {
                self.removal_request = Some((material, replacement));
                self.removal = None;
            }
            if ui.button("Cancel").clicked() {
                self.removal = None;
            }
        });
        ui.separator();
    }

    /// Carries out a removal confirmed in the window (the cells, the
    /// layers' operations and the library change as one undo step of
    /// `session`) and installs a library an undo or redo of such a step put
    /// back. Returns the removal, so the tools stop naming the material.
    pub fn apply_library_changes(
        &mut self,
        library: &mut MaterialLibrary,
        session: &mut EditSession,
        grid: &mut Grid,
    ) -> Option<RemovedMaterial> {
        if let Some(change) = session.take_library_change()
            && !change.apply(library)
        {
            self.message = Some((
                false,
                "The material library was put back as it was at that step \
                 (the removed material's id or name was taken since)"
                    .into(),
            ));
        }
        let (material, replacement) = self.removal_request.take()?;
        match session.remove_material(grid, library, material, replacement) {
            Ok(removal) => {
                self.message = Some((
                    false,
                    format!(
                        "Removed {}: {} and {} now use {} (Undo puts it back)",
                        library.name(material),
                        counted(removal.chunks, "chunk"),
                        counted(removal.operations, "operation"),
                        library.name(replacement)
                    ),
                ));
                *library = removal.library;
                self.names.retain(|(m, _)| *m != material);
                Some(RemovedMaterial {
                    material,
                    replacement,
                })
            }
            Err(e) => {
                self.message = Some((true, e.to_string()));
                None
            }
        }
    }

    fn row_ui(&mut self, ui: &mut egui::Ui, library: &mut MaterialLibrary, material: Material) {
        let Some(style) = library.style(material).cloned() else {
            return;
        };
        let [r, g, b] = library.flat_colour_srgb(material);
        let (rect, _) = ui.allocate_exact_size(egui::vec2(18.0, 18.0), egui::Sense::hover());
        ui.painter()
            .rect_filled(rect, 3.0, egui::Color32::from_rgb(r, g, b));
        let slot = match self.names.iter().position(|(m, _)| *m == material) {
            Some(i) => i,
            None => {
                self.names.push((material, style.name.clone()));
                self.names.len() - 1
            }
        };
        let edit = ui.add_sized(
            [120.0, 18.0],
            egui::TextEdit::singleline(&mut self.names[slot].1),
        );
        if edit.lost_focus() {
            let typed = self.names[slot].1.clone();
            if typed != style.name {
                if let Err(e) = library.rename(material, &typed) {
                    self.message = Some((true, e.to_string()));
                }
                self.names[slot].1 = library.name(material).to_string();
            }
        } else if !edit.has_focus() {
            self.names[slot].1 = style.name.clone();
        }
        let mut tint = style.tint_srgb;
        if ui.color_edit_button_srgb(&mut tint).changed() {
            let _ = library.set_tint(material, tint);
        }
        let mut tiling = style.tiling_studs;
        egui::ComboBox::from_id_salt(("material_tiling", material.0))
            .width(70.0)
            .selected_text(format!("{tiling} studs"))
            .show_ui(ui, |ui| {
                for t in TILING_STUDS {
                    ui.selectable_value(&mut tiling, t, format!("{t} studs"));
                }
            });
        if tiling != style.tiling_studs {
            let _ = library.set_tiling(material, tiling);
        }
        self.surface_ui(ui, library, material, &style);
        let can_import = self.job.is_none() && !self.import_path.trim().is_empty();
        if ui
            .add_enabled(can_import, egui::Button::new("Import"))
            .on_hover_text("Draw this material with the texture folder or image above")
            .on_disabled_hover_text("Type or browse a texture folder or image above first")
            .clicked()
        {
            self.start_import(
                ImportTarget::Restyle {
                    material,
                    top: false,
                },
                library.texture_side_px(),
            );
        }
        if ui
            .add_enabled(can_import, egui::Button::new("Top"))
            .on_hover_text(
                "Show the texture folder or image above on this material's upward-facing \
                 surfaces (its texture stays on the sides: grass over dirt)",
            )
            .on_disabled_hover_text("Type or browse a texture folder or image above first")
            .clicked()
        {
            self.start_import(
                ImportTarget::Restyle {
                    material,
                    top: true,
                },
                library.texture_side_px(),
            );
        }
        if ui
            .add_enabled(
                material.is_built_in()
                    && style != crate::terrain::materials::MaterialStyle::built_in(material),
                egui::Button::new("Reset"),
            )
            .on_disabled_hover_text("An added material has no built-in look")
            .clicked()
        {
            let _ = library.reset(material);
        }
        if !material.is_built_in()
            && ui
                .button("Remove…")
                .on_hover_text("Remove this material; its cells take a material you choose")
                .clicked()
        {
            let replacement = library
                .styles()
                .map(|(m, _)| m)
                .find(|m| *m != material)
                .unwrap_or(Material::ROCK);
            self.removal = Some((material, replacement));
        }
        let bytes = library.texture_gpu_bytes(material);
        ui.label(if bytes == 0 {
            "built-in".to_string()
        } else {
            mib(bytes)
        });
    }
}
