//! The Stamp tool's section of the side panel and its settings: the stamp
//! library (the shipped `assets/stamps/` and the user's own folder, each
//! with a thumbnail), the chosen stamp, and the placement the cursor
//! carries: rotation, radius, height scale, edge falloff, mode and
//! material. A click on the terrain presses the stamp in as one undo step
//! through [`crate::terrain::command::edit_command::EditCommand::Stamp`], the path a
//! script `stamp` entry takes too.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use glam::DVec2;

use crate::io::world::stamp_file::{self, StampListing};
use crate::terrain::stamp::definition::{
    MAX_STAMP_HEIGHT_SCALE_CELLS, STAMP_RADIUS_RANGE_CELLS, Stamp, StampBase, StampMode,
    StampPlacement,
};
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::CELL_SIZE_STUDS;

use crate::editor::material_combo::material_combo;

/// The stamp the Stamp tool starts with (a shipped one).
pub const DEFAULT_STAMP: &str = "crater";

/// Side of a library thumbnail, pixels.
pub const THUMBNAIL_SIDE_PX: u32 = 48;

/// Degrees one press of R turns the stamp.
pub const ROTATE_STEP_DEG: f64 = 15.0;

/// One library row: the file, and its thumbnail once it was loaded.
#[derive(Clone)]
struct LibraryRow {
    entry: StampListing,
    thumbnail: Option<egui::TextureHandle>,
    /// Loading failed: the message (the row stays, greyed).
    error: Option<String>,
}

/// The Stamp tool's settings, the library and the loaded stamp.
#[derive(Clone)]
pub struct StampToolSettings {
    /// Folders listed, in order (shipped stamps first).
    folders: Vec<PathBuf>,
    rows: Vec<LibraryRow>,
    /// Index of the chosen row.
    selected: Option<usize>,
    /// The chosen stamp, decoded.
    stamp: Option<Arc<Stamp>>,
    /// Turn about +Y, degrees.
    pub rotation_deg: f64,
    /// Half the footprint's longer side, cells.
    pub radius_cells: f64,
    /// Height of a full sample, cells.
    pub height_scale_cells: f64,
    /// Edge falloff, fraction of the half extent.
    pub falloff_fraction: f64,
    /// How the stamp combines with the terrain.
    pub mode: StampMode,
    /// Use `material` for added solid (else the terrain's or stamp's own).
    pub use_material: bool,
    /// Material of added solid when `use_material`.
    pub material: Material,
    /// A message for the artist (a file that did not load).
    pub message: Option<String>,
    /// The path typed into the panel's "Add file" field.
    pub add_path: String,
    /// [`StampToolSettings::ensure_chosen`] already ran.
    default_tried: bool,
}

impl Default for StampToolSettings {
    fn default() -> Self {
        StampToolSettings::new(vec![stamp_file::default_stamp_dir()])
    }
}

impl std::fmt::Debug for StampToolSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StampToolSettings")
            .field("folders", &self.folders)
            .field("stamps", &self.rows.len())
            .field("selected", &self.selected)
            .finish_non_exhaustive()
    }
}

/// Settings are equal when they list the same files, chose the same one
/// and place it alike (thumbnails and messages are not compared).
impl PartialEq for StampToolSettings {
    fn eq(&self, other: &Self) -> bool {
        let paths = |s: &Self| {
            s.rows
                .iter()
                .map(|r| r.entry.path.clone())
                .collect::<Vec<_>>()
        };
        self.folders == other.folders
            && paths(self) == paths(other)
            && self.selected == other.selected
            && self.rotation_deg == other.rotation_deg
            && self.radius_cells == other.radius_cells
            && self.height_scale_cells == other.height_scale_cells
            && self.falloff_fraction == other.falloff_fraction
            && self.mode == other.mode
            && self.use_material == other.use_material
            && self.material == other.material
    }
}

impl StampToolSettings {
    /// Settings listing the stamps of `folders` (missing folders list nothing).
    pub fn new(folders: Vec<PathBuf>) -> StampToolSettings {
        let mut s = StampToolSettings {
            folders,
            rows: Vec::new(),
            selected: None,
            stamp: None,
            rotation_deg: 0.0,
            radius_cells: 32.0,
            height_scale_cells: 16.0,
            falloff_fraction: 0.25,
            mode: StampMode::Add,
            use_material: false,
            material: Material::ROCK,
            message: None,
            add_path: String::new(),
            default_tried: false,
        };
        s.rescan();
        s
    }

    /// Lists the folders again (a new file in the user's folder appears).
    pub fn rescan(&mut self) {
        let chosen = self.selected.map(|i| self.rows[i].entry.path.clone());
        let folders: Vec<&Path> = self.folders.iter().map(PathBuf::as_path).collect();
        let library = stamp_file::list_stamps(&folders);
        for (path, why) in &library.refused {
            log::warn!("stamp {} not listed: {why}", path.display());
        }
        self.rows = library
            .stamps
            .into_iter()
            .map(|entry| LibraryRow {
                entry,
                thumbnail: None,
                error: None,
            })
            .collect();
        self.selected = chosen.and_then(|p| self.rows.iter().position(|r| r.entry.path == p));
        if self.selected.is_none() {
            self.stamp = None;
        }
    }

    /// Adds the user's own stamp file and chooses it.
    pub fn add_file(&mut self, path: &Path) {
        if let Some(dir) = path.parent()
            && !self.folders.iter().any(|f| f == dir)
        {
            self.folders.push(dir.to_path_buf());
            self.rescan();
        }
        if let Some(i) = self.rows.iter().position(|r| r.entry.path == path) {
            self.choose(i);
        } else {
            self.message = Some(format!("{} is not a stamp file", path.display()));
        }
    }

    /// Chooses row `i`, loading its stamp.
    fn choose(&mut self, i: usize) {
        let Some(row) = self.rows.get_mut(i) else {
            return;
        };
        match stamp_file::read_stamp(&row.entry.path) {
            Ok(stamp) => {
                let stamp = Arc::new(stamp);
                // A cell stamp's natural size: one stamp cell per cell.
                let native = stamp.native_placement(DVec2::ZERO, StampBase::SurfaceUnderCentre);
                if matches!(
                    stamp.kind(),
                    crate::terrain::stamp::definition::StampKind::Cells
                ) {
                    self.radius_cells = native.radius_cells;
                    self.height_scale_cells = native.height_scale_cells;
                }
                self.stamp = Some(stamp);
                self.selected = Some(i);
                row.error = None;
                self.message = None;
            }
            Err(e) => {
                row.error = Some(e.to_string());
                self.message = Some(format!("{}: {e}", row.entry.name));
            }
        }
    }

    /// Chooses the stamp an artist starts with when none is chosen yet: the
    /// shipped [`DEFAULT_STAMP`] when listed, else the first listed one
    /// that loads. Does nothing once a stamp is chosen; tries each
    /// listed stamp at most once.
    pub fn ensure_chosen(&mut self) {
        if self.stamp.is_some() || self.default_tried {
            return;
        }
        self.default_tried = true;
        if self.choose_named(DEFAULT_STAMP) {
            return;
        }
        for i in 0..self.rows.len() {
            self.choose(i);
            if self.stamp.is_some() {
                return;
            }
        }
    }

    /// The chosen stamp, decoded.
    pub fn stamp(&self) -> Option<&Arc<Stamp>> {
        self.stamp.as_ref()
    }

    /// Names of the listed stamps, in order (for tests and logs).
    pub fn names(&self) -> Vec<String> {
        self.rows.iter().map(|r| r.entry.name.clone()).collect()
    }

    /// Chooses the listed stamp named `name` (case-insensitive); false when
    /// none is listed or it did not load.
    pub fn choose_named(&mut self, name: &str) -> bool {
        match self
            .rows
            .iter()
            .position(|r| r.entry.name.eq_ignore_ascii_case(name))
        {
            Some(i) => {
                self.choose(i);
                self.selected == Some(i)
            }
            None => false,
        }
    }

    /// Turns the stamp by one step (the R key).
    pub fn rotate_step(&mut self) {
        self.rotation_deg = (self.rotation_deg + ROTATE_STEP_DEG).rem_euclid(360.0);
    }

    /// The placement of the chosen stamp centred on `pos_world` (studs):
    /// its base is the surface under the centre.
    pub fn placement_at(&self, pos_world: glam::DVec3) -> StampPlacement {
        let cell = f64::from(CELL_SIZE_STUDS);
        StampPlacement {
            centre_xz_cells: DVec2::new(pos_world.x / cell, pos_world.z / cell),
            base: StampBase::SurfaceUnderCentre,
            rotation_deg: self.rotation_deg,
            radius_cells: self.radius_cells,
            height_scale_cells: self.height_scale_cells,
            falloff_fraction: self.falloff_fraction,
            mode: self.mode,
            material: self.use_material.then_some(self.material),
        }
    }

    /// The section's contents (the panel draws the header).
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        self.library_ui(ui);
        // Wrapped, so every mode stays inside the side panel however
        // narrow it is.
        ui.horizontal_wrapped(|ui| {
            for m in StampMode::ALL {
                ui.selectable_value(&mut self.mode, m, m.name());
            }
        });
        ui.add(
            egui::Slider::new(
                &mut self.radius_cells,
                *STAMP_RADIUS_RANGE_CELLS.start()..=*STAMP_RADIUS_RANGE_CELLS.end(),
            )
            .text("radius")
            .suffix(" cells")
            .logarithmic(true)
            .fixed_decimals(1),
        )
        .on_hover_text("Half the stamp's longer side (1 cell = 4 studs)");
        ui.add(
            egui::Slider::new(&mut self.rotation_deg, 0.0..=360.0)
                .text("rotation")
                .suffix("°")
                .fixed_decimals(0),
        )
        .on_hover_text("Turn about the vertical axis, any angle (R turns 15°)");
        ui.add(
            egui::Slider::new(&mut self.height_scale_cells, 0.0..=256.0)
                .text("height")
                .suffix(" cells")
                .fixed_decimals(1)
                .logarithmic(true),
        )
        .on_hover_text(format!(
            "Height of white in a height stamp, or of the whole box of a 3D stamp (up to {MAX_STAMP_HEIGHT_SCALE_CELLS} cells)"
        ));
        ui.add(
            egui::Slider::new(&mut self.falloff_fraction, 0.0..=1.0)
                .text("falloff")
                .fixed_decimals(2),
        )
        .on_hover_text("Edge falloff: full effect inside, blending to none at the edge");
        ui.horizontal(|ui| {
            ui.checkbox(&mut self.use_material, "material")
                .on_hover_text("Added solid takes this material (else the terrain's own)");
            if self.use_material {
                material_combo(ui, "stamp_material", &mut self.material, false);
            }
        });
        if let Some(m) = &self.message {
            ui.colored_label(egui::Color32::from_rgb(230, 120, 90), m);
        }
    }

    /// The library: a thumbnail and name per stamp; a click chooses it.
    fn library_ui(&mut self, ui: &mut egui::Ui) {
        if self.rows.is_empty() {
            ui.label("no stamps found in assets/stamps");
        }
        let mut clicked = None;
        egui::ScrollArea::vertical()
            .id_salt("stamp_library")
            .max_height(150.0)
            .show(ui, |ui| {
                ui.horizontal_wrapped(|ui| {
                    for (i, row) in self.rows.iter_mut().enumerate() {
                        let texture = row.thumbnail.get_or_insert_with(|| {
                            load_thumbnail(ui.ctx(), &row.entry, &mut row.error)
                        });
                        let size = egui::vec2(THUMBNAIL_SIDE_PX as f32, THUMBNAIL_SIDE_PX as f32);
                        let selected = self.selected == Some(i);
                        let button = egui::Button::image(egui::Image::new((texture.id(), size)))
                            .selected(selected);
                        let r = ui.add(button).on_hover_text(format!(
                            "{} ({}, {}×{}×{}){}",
                            row.entry.name,
                            row.entry.kind.name(),
                            row.entry.dims[0],
                            row.entry.dims[1],
                            row.entry.dims[2],
                            row.error
                                .as_ref()
                                .map(|e| format!("\n{e}"))
                                .unwrap_or_default()
                        ));
                        if r.clicked() {
                            clicked = Some(i);
                        }
                    }
                });
            });
        if let Some(i) = clicked {
            self.choose(i);
        }
        ui.horizontal(|ui| {
            let name = self
                .selected
                .and_then(|i| self.rows.get(i))
                .map_or("none", |r| r.entry.name.as_str());
            ui.label(format!("stamp: {name}"));
            if ui
                .small_button("Rescan")
                .on_hover_text("List the folders again")
                .clicked()
            {
                self.rescan();
            }
        });
        ui.horizontal(|ui| {
            ui.add(
                egui::TextEdit::singleline(&mut self.add_path)
                    .hint_text("your .png or .stamp file")
                    .desired_width(150.0),
            );
            if ui
                .add_enabled(
                    !self.add_path.trim().is_empty(),
                    egui::Button::new("Add file"),
                )
                .on_hover_text("List this file's folder in the library and choose the file")
                .clicked()
            {
                let path = PathBuf::from(self.add_path.trim());
                self.add_file(&path);
            }
        });
    }
}

/// The thumbnail texture of `entry` (a grey square when it does not load).
fn load_thumbnail(
    ctx: &egui::Context,
    entry: &StampListing,
    error: &mut Option<String>,
) -> egui::TextureHandle {
    let side = THUMBNAIL_SIDE_PX as usize;
    let rgba = match stamp_file::read_stamp(&entry.path) {
        Ok(stamp) => stamp_file::thumbnail_rgba(&stamp, THUMBNAIL_SIDE_PX),
        Err(e) => {
            *error = Some(e.to_string());
            [60, 60, 60, 255].repeat(side * side)
        }
    };
    let image = egui::ColorImage::from_rgba_unmultiplied([side, side], &rgba);
    ctx.load_texture(
        format!("stamp-thumb:{}", entry.path.display()),
        image,
        egui::TextureOptions::LINEAR,
    )
}
