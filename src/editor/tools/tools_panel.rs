//! The tool section of the side panel: tool buttons with their shortcuts,
//! brush shape and falloff, Flatten and Replace settings, stroke spacing and
//! plane lock, and the region tools (selection, Fill, Clear, Copy, Paste
//! with rotation, Generate). Also the keyboard map, so tooltips and key
//! handling share one table.

use crate::editor::material_combo::material_combo;
use winit::keyboard::{KeyCode, ModifiersState};

use crate::editor::labels::group_digits;
use crate::editor::tools::box_handles::BoxHandle;
use crate::terrain::command::history::DEFAULT_HISTORY_BUDGET_BYTES;
use crate::terrain::editing::brush::{BrushMode, BrushOptions, BrushShape, Falloff, FlattenLimit};
use crate::terrain::editing::stroke::{DEFAULT_SPACING_FRACTION, SPACING_FRACTION_RANGE};
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::CellBox;
use crate::terrain::storage::grid::MAX_EDIT_VOLUME_CELLS;

/// Which kind of tool the left mouse button uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ActiveTool {
    /// The brush (sculpt, paint).
    #[default]
    Brush,
    /// Box selection by dragging on the surface.
    Region,
    /// Paste preview follows the cursor; a click pastes.
    Paste,
    /// The chosen stamp's ghost follows the cursor; a click presses it in.
    Stamp,
    /// Clicks lay and edit a path's control points; Enter applies it.
    Path,
}

/// A one-shot action the panel or a shortcut asks the editor for.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolRequest {
    /// Undo the newest step.
    Undo,
    /// Redo the last undone step.
    Redo,
    /// Fill the selection.
    Fill,
    /// Clear the selection.
    Clear,
    /// Copy the selection.
    Copy,
    /// Paste at the cursor.
    Paste,
    /// Re-run the generator in the selection.
    Generate,
    /// Set the history budget, bytes.
    SetBudget(usize),
    /// Undo or redo until this many steps are applied (a click in the history list).
    JumpTo(usize),
    /// A world-document action from the Layers section.
    Document(Box<crate::terrain::command::document_action::DocumentAction>),
    /// Stop the base seed change running in the background.
    CancelBaseSeed,
    /// Put back the operation being dragged in the view (Esc).
    CancelDrag,
}

/// What the Layers section edits before it becomes a request: the name
/// being typed, the selected operation and the settings typed for it.
#[derive(Clone, Debug, PartialEq)]
pub struct LayersUiState {
    /// The new name typed for the active layer.
    pub rename: String,
    /// The selected operation's id.
    pub selected_operation: Option<u32>,
    /// How far Move shifts the selected operation, studs `[x, z]`.
    pub move_by_studs: [f64; 2],
    /// The base seed typed for "Change seed".
    pub seed: u64,
    /// Settings typed for the selected operation (radius, strength, ...).
    pub edit: crate::terrain::document::operation_edit::OperationEdit,
    /// A click in the view picks the operation under it (and a drag moves
    /// it) instead of using the active tool.
    pub pick_in_view: bool,
}

impl Default for LayersUiState {
    fn default() -> Self {
        LayersUiState {
            rename: String::new(),
            selected_operation: None,
            move_by_studs: [0.0, 0.0],
            seed: 1,
            edit: Default::default(),
            pick_in_view: false,
        }
    }
}

/// Tool settings edited in the panel (the brush radius, strength, material
/// and "ignore water" stay in [`crate::editor::panel::side_panel::EditorPanel`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSettings {
    /// What the left button does.
    pub active: ActiveTool,
    /// Brush shape.
    pub shape: BrushShape,
    /// Brush falloff.
    pub falloff: Falloff,
    /// Flatten toward a fixed height instead of the picked plane.
    pub flatten_fixed_height: bool,
    /// Flatten's fixed height, studs.
    pub flatten_height_studs: f64,
    /// Flatten: raise only, lower only or both.
    pub flatten_limit: FlattenLimit,
    /// Replace's source material (the brush material is the target).
    pub replace_from: Material,
    /// Iterations per application of the erosion brushes.
    pub erosion_iterations: u32,
    /// Stroke spacing as a fraction of the radius.
    pub spacing_fraction: f32,
    /// Keep strokes on the plane of their first hit.
    pub plane_lock: bool,
    /// The selected region, cells.
    pub region: Option<CellBox>,
    /// Fill material.
    pub fill_material: Material,
    /// Fill occupancy.
    pub fill_occupancy: u8,
    /// Fill and Clear leave water alone.
    pub region_ignore_water: bool,
    /// Paste rotation, quarter turns about +Y.
    pub paste_quarter_turns: u8,
    /// History budget in MiB (applied with a request).
    pub history_budget_mib: u32,
    /// Actions asked for this frame, consumed by the editor.
    pub requests: Vec<ToolRequest>,
    /// The last tool message (errors in red).
    pub message: Option<(String, bool)>,
    /// The Stamp tool: library, chosen stamp and placement.
    pub stamp: crate::editor::tools::stamp_panel::StampToolSettings,
    /// The Path tool: mode, shape and the points being laid.
    pub path: crate::editor::tools::path_panel::PathToolSettings,
    /// The file path typed for "Save as stamp".
    pub stamp_save_path: String,
    /// "Save as stamp" pressed this frame: where to save the clipboard
    /// (consumed by the editor).
    pub save_stamp_to: Option<std::path::PathBuf>,
    /// The Layers section's typed values.
    pub layers: LayersUiState,
}

impl ToolSettings {
    /// Gives every tool setting that names `from` (Replace's source, Fill,
    /// the path band, the stamp override) `to`: a material removed from
    /// the library must not stay selected.
    pub fn replace_material(&mut self, from: Material, to: Material) {
        for m in [
            &mut self.replace_from,
            &mut self.fill_material,
            &mut self.path.material,
            &mut self.stamp.material,
        ] {
            if *m == from {
                *m = to;
            }
        }
    }
}

impl Default for ToolSettings {
    fn default() -> Self {
        ToolSettings {
            active: ActiveTool::Brush,
            shape: BrushShape::Sphere,
            falloff: Falloff::Smooth,
            flatten_fixed_height: false,
            flatten_height_studs: 160.0,
            flatten_limit: FlattenLimit::Both,
            replace_from: Material::GRASS,
            erosion_iterations: BrushOptions::default().erosion_iterations,
            spacing_fraction: DEFAULT_SPACING_FRACTION,
            plane_lock: false,
            region: None,
            fill_material: Material::ROCK,
            fill_occupancy: 255,
            region_ignore_water: false,
            paste_quarter_turns: 0,
            history_budget_mib: (DEFAULT_HISTORY_BUDGET_BYTES >> 20) as u32,
            requests: Vec::new(),
            message: None,
            stamp_save_path: String::new(),
            save_stamp_to: None,
            stamp: crate::editor::tools::stamp_panel::StampToolSettings::default(),
            path: crate::editor::tools::path_panel::PathToolSettings::default(),
            layers: LayersUiState::default(),
        }
    }
}

/// The key of each brush tool, in [`BrushMode::ALL`] order.
pub const TOOL_KEYS: [(BrushMode, KeyCode, &str); 10] = [
    (BrushMode::Add, KeyCode::Digit1, "1"),
    (BrushMode::Subtract, KeyCode::Digit2, "2"),
    (BrushMode::AddWater, KeyCode::Digit3, "3"),
    (BrushMode::RemoveWater, KeyCode::Digit4, "4"),
    (BrushMode::Grow, KeyCode::Digit5, "5"),
    (BrushMode::Erode, KeyCode::Digit6, "6"),
    (BrushMode::Smooth, KeyCode::Digit7, "7"),
    (BrushMode::Flatten, KeyCode::Digit8, "8"),
    (BrushMode::Paint, KeyCode::Digit9, "9"),
    (BrushMode::Replace, KeyCode::Digit0, "0"),
];

/// What a key press means (see [`shortcut`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Shortcut {
    /// Select a brush tool.
    Tool(BrushMode),
    /// Select the region tool.
    RegionTool,
    /// Select the stamp tool.
    StampTool,
    /// Select the path tool.
    PathTool,
    /// Apply the path being laid (Enter).
    Confirm,
    /// Remove the path's last point (Backspace).
    DeleteLast,
    /// Next brush shape.
    CycleShape,
    /// Next falloff.
    CycleFalloff,
    /// Toggle plane lock.
    TogglePlaneLock,
    /// Rotate the paste by 90°.
    RotatePaste,
    /// Arm the paste preview.
    ArmPaste,
    /// Leave paste or region mode.
    Cancel,
    /// Focus the camera on the cursor.
    Focus,
    /// A request for the editor.
    Request(ToolRequest),
}

/// Maps a key with modifiers to a tool shortcut; `None` for other keys
/// (the editor's older keys, like `[`, `]`, `I`, `G`, `H`, stay in the app).
pub fn shortcut(code: KeyCode, mods: ModifiersState) -> Option<Shortcut> {
    let ctrl = mods.control_key() || mods.super_key();
    if ctrl {
        return match code {
            KeyCode::KeyZ if mods.shift_key() => Some(Shortcut::Request(ToolRequest::Redo)),
            KeyCode::KeyZ => Some(Shortcut::Request(ToolRequest::Undo)),
            KeyCode::KeyY => Some(Shortcut::Request(ToolRequest::Redo)),
            KeyCode::KeyC => Some(Shortcut::Request(ToolRequest::Copy)),
            KeyCode::KeyV => Some(Shortcut::ArmPaste),
            KeyCode::KeyF => Some(Shortcut::Request(ToolRequest::Fill)),
            KeyCode::KeyG => Some(Shortcut::Request(ToolRequest::Generate)),
            _ => None,
        };
    }
    if let Some((mode, _, _)) = TOOL_KEYS.iter().find(|(_, k, _)| *k == code) {
        return Some(Shortcut::Tool(*mode));
    }
    match code {
        KeyCode::KeyB => Some(Shortcut::RegionTool),
        KeyCode::KeyK => Some(Shortcut::StampTool),
        KeyCode::KeyP => Some(Shortcut::PathTool),
        KeyCode::Enter | KeyCode::NumpadEnter => Some(Shortcut::Confirm),
        KeyCode::Backspace => Some(Shortcut::DeleteLast),
        KeyCode::KeyT => Some(Shortcut::CycleShape),
        KeyCode::KeyU => Some(Shortcut::CycleFalloff),
        KeyCode::KeyL => Some(Shortcut::TogglePlaneLock),
        KeyCode::KeyR => Some(Shortcut::RotatePaste),
        KeyCode::Escape => Some(Shortcut::Cancel),
        KeyCode::KeyF => Some(Shortcut::Focus),
        KeyCode::Delete => Some(Shortcut::Request(ToolRequest::Clear)),
        _ => None,
    }
}

/// The tooltip text of a brush tool.
pub fn tool_tooltip(mode: BrushMode) -> String {
    let key = TOOL_KEYS
        .iter()
        .find(|(m, _, _)| *m == mode)
        .map_or("", |(_, _, k)| k);
    let what = match mode {
        BrushMode::Add => "raise terrain toward the brush shape",
        BrushMode::Subtract => "carve the brush shape out",
        BrushMode::AddWater => "fill air with water",
        BrushMode::RemoveWater => "drain water",
        BrushMode::Grow => "raise occupancy along the surface",
        BrushMode::Erode => "lower occupancy along the surface",
        BrushMode::Smooth => "blur occupancy toward the neighbourhood mean",
        BrushMode::Flatten => "move terrain toward the plane of the first hit (or a height)",
        BrushMode::Paint => "set the material of the surface (Alt+click picks a material)",
        BrushMode::Replace => "replace one material by the brush material",
        BrushMode::HydraulicErode => {
            "water runs downhill from the brush, cutting gullies and leaving sand below"
        }
        BrushMode::ThermalErode => "slopes steeper than 33° slump into scree",
    };
    if key.is_empty() {
        format!("{}: {what}", mode.name())
    } else {
        format!("{}: {what} ({key})", mode.name())
    }
}

fn next<T: Copy + PartialEq>(all: &[T], current: T) -> T {
    let i = all.iter().position(|v| *v == current).unwrap_or(0);
    all[(i + 1) % all.len()]
}

/// `typed`, the region as its fields now hold it, when an edit may take
/// it: a box with at least one cell and at most [`MAX_EDIT_VOLUME_CELLS`]
/// (512³, where the handles stop too).
///
/// # Errors
/// Why not, in words, when it is empty (a minimum at or past its maximum)
/// or too large; the region then keeps its last accepted value.
pub fn check_typed_region(typed: CellBox) -> Result<CellBox, String> {
    if typed.is_empty() {
        return Err(format!(
            "the region needs its min below its max on every axis (min {}, {}, {}; max {}, {}, {})",
            typed.min.x, typed.min.y, typed.min.z, typed.max.x, typed.max.y, typed.max.z
        ));
    }
    let cells = typed.volume_cells();
    if cells > MAX_EDIT_VOLUME_CELLS {
        return Err(format!(
            "a region holds at most {} cells (512³); this one would hold {}",
            group_digits(MAX_EDIT_VOLUME_CELLS),
            group_digits(cells)
        ));
    }
    Ok(typed)
}

impl ToolSettings {
    /// The brush options these settings describe (Flatten's plane is set
    /// when a stroke starts).
    pub fn options(&self) -> BrushOptions {
        BrushOptions {
            shape: self.shape,
            falloff: self.falloff,
            flatten_plane: None,
            flatten_limit: self.flatten_limit,
            replace_from: self.replace_from,
            erosion_iterations: self.erosion_iterations,
        }
    }

    /// Reopens an applied path from the history: undoes back to the state
    /// before it (`steps_before` applied steps; it and later steps stay
    /// redoable until something new is applied), loads its points and
    /// settings into the Path tool's draft and makes Path the active tool,
    /// so the artist edits the points and applies it again.
    pub fn reopen_path(
        &mut self,
        spec: &crate::terrain::path::spec::PathSpec,
        steps_before: usize,
    ) {
        self.path = crate::editor::tools::path_panel::PathToolSettings::from_spec(spec);
        self.active = ActiveTool::Path;
        self.requests.push(ToolRequest::JumpTo(steps_before));
    }

    /// Loads path operation `id` (laid as `spec`) into the Path tool to
    /// edit its points and settings: Apply replaces the operation in its
    /// layer (nothing is undone, everything above it follows).
    pub fn edit_path_operation(&mut self, id: u32, spec: &crate::terrain::path::spec::PathSpec) {
        self.path = crate::editor::tools::path_panel::PathToolSettings::from_spec(spec);
        self.path.editing = Some(id);
        self.active = ActiveTool::Path;
    }

    /// Applies a shortcut that only changes settings; returns it back when
    /// the editor must act on it (tool changes, focus, requests).
    pub fn apply_shortcut(&mut self, s: Shortcut) -> Option<Shortcut> {
        match s {
            Shortcut::CycleShape => self.shape = next(&BrushShape::ALL, self.shape),
            Shortcut::CycleFalloff => self.falloff = next(&Falloff::ALL, self.falloff),
            Shortcut::TogglePlaneLock => self.plane_lock = !self.plane_lock,
            Shortcut::RotatePaste if self.active == ActiveTool::Stamp => {
                self.stamp.rotate_step();
            }
            Shortcut::RotatePaste => self.paste_quarter_turns = (self.paste_quarter_turns + 1) % 4,
            Shortcut::StampTool => self.active = ActiveTool::Stamp,
            Shortcut::PathTool => self.active = ActiveTool::Path,
            Shortcut::Confirm if self.active == ActiveTool::Path => {
                self.path.action = Some(crate::editor::tools::path_panel::PathAction::Apply);
            }
            Shortcut::DeleteLast if self.active == ActiveTool::Path => {
                self.path.draft.delete_near(None, 0.0);
            }
            Shortcut::Confirm | Shortcut::DeleteLast => {}
            // With Pick in view, Esc puts back an operation being dragged.
            Shortcut::Cancel if self.layers.pick_in_view => {
                self.requests.push(ToolRequest::CancelDrag);
            }
            // Esc first drops the points being laid, then leaves the tool.
            Shortcut::Cancel if self.active == ActiveTool::Path && !self.path.draft.is_empty() => {
                self.path.draft.clear();
                self.path.editing = None;
            }
            // Del removes the path point under the cursor (the editor knows where it is).
            Shortcut::Request(ToolRequest::Clear) if self.active == ActiveTool::Path => {
                return Some(s);
            }
            Shortcut::ArmPaste => self.active = ActiveTool::Paste,
            Shortcut::RegionTool => self.active = ActiveTool::Region,
            Shortcut::Cancel => self.active = ActiveTool::Brush,
            Shortcut::Request(r) => self.requests.push(r),
            Shortcut::Tool(_) => {
                self.active = ActiveTool::Brush;
                return Some(s);
            }
            Shortcut::Focus => return Some(s),
        }
        None
    }

    /// The tool buttons (brush tools, then the region tool).
    pub fn tool_buttons(&mut self, ui: &mut egui::Ui, tool: &mut BrushMode) {
        ui.horizontal_wrapped(|ui| {
            for mode in BrushMode::ALL {
                let selected = self.active == ActiveTool::Brush && *tool == mode;
                if ui
                    .selectable_label(selected, mode.name())
                    .on_hover_text(tool_tooltip(mode))
                    .clicked()
                {
                    *tool = mode;
                    self.active = ActiveTool::Brush;
                }
            }
            if ui
                .selectable_label(
                    matches!(self.active, ActiveTool::Region | ActiveTool::Paste),
                    "Region",
                )
                .on_hover_text(
                    "Region: drag on the surface to select a box, drag its handles to resize it (B)",
                )
                .clicked()
            {
                self.active = ActiveTool::Region;
            }
            if ui
                .selectable_label(self.active == ActiveTool::Stamp, "Stamp")
                .on_hover_text(
                    "Stamp: press a height image or a saved 3D region into the terrain (K; R turns it)",
                )
                .clicked()
            {
                self.active = ActiveTool::Stamp;
            }
            if ui
                .selectable_label(self.active == ActiveTool::Path, "Path")
                .on_hover_text(
                    "Path: click points to lay a road, river or route; Enter applies (P)",
                )
                .clicked()
            {
                self.active = ActiveTool::Path;
            }
        });
    }

    /// Shape, falloff, spacing and the current tool's settings (the panel
    /// puts plane lock next to the Brush heading).
    pub fn brush_options_ui(&mut self, ui: &mut egui::Ui, tool: BrushMode) {
        ui.horizontal(|ui| {
            ui.label("shape").on_hover_text("Brush shape (T cycles)");
            for s in BrushShape::ALL {
                ui.selectable_value(&mut self.shape, s, s.name())
                    .on_hover_text(format!("{} brush (T cycles)", s.name()));
            }
        });
        ui.horizontal(|ui| {
            ui.label("falloff")
                .on_hover_text("Strength falloff toward the radius (U cycles)");
            for f in Falloff::ALL {
                ui.selectable_value(&mut self.falloff, f, f.name())
                    .on_hover_text(format!("{} falloff (U cycles)", f.name()));
            }
        });
        ui.add(
            egui::Slider::new(
                &mut self.spacing_fraction,
                *SPACING_FRACTION_RANGE.start()..=*SPACING_FRACTION_RANGE.end(),
            )
            .text("spacing")
            .logarithmic(true)
            .fixed_decimals(2),
        )
        .on_hover_text("Distance between applications along a stroke, as a fraction of the radius");
        if tool == BrushMode::Flatten {
            ui.horizontal(|ui| {
                ui.radio_value(&mut self.flatten_fixed_height, false, "Picked plane")
                    .on_hover_text(
                        "Flatten toward the plane through the first hit, along its normal",
                    );
                ui.radio_value(&mut self.flatten_fixed_height, true, "Height");
            });
            if self.flatten_fixed_height {
                ui.add(
                    egui::DragValue::new(&mut self.flatten_height_studs)
                        .speed(1.0)
                        .suffix(" studs"),
                );
            }
            ui.horizontal(|ui| {
                for l in FlattenLimit::ALL {
                    ui.selectable_value(&mut self.flatten_limit, l, l.name());
                }
            });
        }
        if tool.is_erosion() {
            ui.add(
                egui::Slider::new(
                    &mut self.erosion_iterations,
                    crate::terrain::editing::brush::EROSION_ITERATIONS_RANGE,
                )
                .text("iterations"),
            );
        }
        if tool == BrushMode::Replace {
            ui.horizontal(|ui| {
                ui.label("replace");
                material_combo(ui, "replace_from", &mut self.replace_from, false);
                ui.label("→ brush material");
            });
        }
    }

    /// The selection's bounds as fields; a typed box an edit cannot take is
    /// refused with a message (see [`check_typed_region`]).
    fn region_fields(&mut self, ui: &mut egui::Ui) {
        match self.region {
            None => {
                ui.label("no selection (B, then drag)");
            }
            Some(before) => {
                let mut typed = before;
                for (name, v) in [("min", &mut typed.min), ("max", &mut typed.max)] {
                    ui.horizontal(|ui| {
                        ui.label(name);
                        ui.add(egui::DragValue::new(&mut v.x).prefix("x "));
                        ui.add(egui::DragValue::new(&mut v.y).prefix("y "));
                        ui.add(egui::DragValue::new(&mut v.z).prefix("z "));
                    });
                }
                if typed != before {
                    match check_typed_region(typed) {
                        Ok(region) => self.region = Some(region),
                        Err(why) => self.message = Some((why, true)),
                    }
                }
            }
        }
    }

    /// The region section's contents (the panel draws its header): selection
    /// bounds, Fill, Clear, Copy, Paste, Generate.
    pub fn region_ui(&mut self, ui: &mut egui::Ui, has_clipboard: bool) {
        self.region_fields(ui);
        if self.region.is_some() && self.active == ActiveTool::Region {
            ui.label(
                egui::RichText::new("drag a handle to move a face or corner")
                    .small()
                    .weak(),
            );
        }
        ui.horizontal(|ui| {
            ui.label("fill");
            material_combo(ui, "fill_material", &mut self.fill_material, true);
            ui.add(egui::DragValue::new(&mut self.fill_occupancy).range(1..=255))
                .on_hover_text("Fill occupancy, 1–255");
        });
        ui.checkbox(&mut self.region_ignore_water, "Fill/Clear ignore water");
        ui.horizontal_wrapped(|ui| {
            let selected = self.region.is_some();
            let mut button =
                |ui: &mut egui::Ui, label: &str, tip: &str, enabled: bool, r: ToolRequest| {
                    if ui
                        .add_enabled(enabled, egui::Button::new(label))
                        .on_hover_text(tip)
                        .clicked()
                    {
                        self.requests.push(r);
                    }
                };
            button(
                ui,
                "Fill",
                "Fill the box with the fill material (Ctrl+F)",
                selected,
                ToolRequest::Fill,
            );
            button(
                ui,
                "Clear",
                "Empty the box (Delete)",
                selected,
                ToolRequest::Clear,
            );
            button(
                ui,
                "Copy",
                "Copy the box (Ctrl+C)",
                selected,
                ToolRequest::Copy,
            );
            button(
                ui,
                "Generate",
                "Re-run the world generator in the box (Ctrl+G)",
                selected,
                ToolRequest::Generate,
            );
        });
        ui.horizontal(|ui| {
            if ui
                .add_enabled(has_clipboard, egui::Button::new("Paste…"))
                .on_hover_text("Preview the clipboard at the cursor; click to paste (Ctrl+V)")
                .clicked()
            {
                self.active = ActiveTool::Paste;
            }
            if ui
                .button(format!("Rotate {}°", self.paste_quarter_turns as u32 * 90))
                .on_hover_text("Turn the paste 90° about the vertical (R)")
                .clicked()
            {
                self.paste_quarter_turns = (self.paste_quarter_turns + 1) % 4;
            }
        });
        ui.horizontal(|ui| {
            ui.add(
                egui::TextEdit::singleline(&mut self.stamp_save_path)
                    .hint_text("my_arch.stamp")
                    .desired_width(130.0),
            );
            let path = self.stamp_save_path.trim();
            if ui
                .add_enabled(
                    has_clipboard && !path.is_empty(),
                    egui::Button::new("Save as stamp"),
                )
                .on_hover_text(
                    "Save the copied cells as a 3D stamp file (.stamp); it joins the stamp library",
                )
                .clicked()
            {
                let mut path = std::path::PathBuf::from(path);
                if path.extension().is_none() {
                    path.set_extension("stamp");
                }
                self.save_stamp_to = Some(path);
            }
        });
    }

    /// The last tool message (errors in red), drawn under the tool buttons
    /// so it shows whichever section the tool belongs to.
    pub fn message_ui(&self, ui: &mut egui::Ui) {
        if let Some((text, error)) = &self.message {
            let color = if *error {
                egui::Color32::from_rgb(240, 90, 80)
            } else {
                ui.visuals().weak_text_color()
            };
            ui.label(egui::RichText::new(text).color(color));
        }
    }
}

/// Outline colour of the region selection.
pub const SELECTION_COLOR: egui::Color32 = egui::Color32::from_rgb(255, 210, 60);
/// Outline colour of the paste preview.
pub const PASTE_COLOR: egui::Color32 = egui::Color32::from_rgb(80, 220, 255);

/// Radius of a region handle on screen, physical pixels (drawn this large).
pub const HANDLE_RADIUS_PX: f32 = 6.0;
/// A press or hover this close to a handle's centre grabs it, physical pixels.
pub const HANDLE_PICK_RADIUS_PX: f32 = 10.0;
/// Fill of a handle that is not hovered.
const HANDLE_COLOR: egui::Color32 = egui::Color32::from_rgb(255, 235, 150);
/// Fill of the hovered or dragged handle.
const HANDLE_HOT_COLOR: egui::Color32 = egui::Color32::from_rgb(255, 120, 30);

/// The handles to draw on a box: the box and the hovered (or dragged) one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HandleView {
    /// The box whose handles are drawn, cells.
    pub region: CellBox,
    /// The handle under the cursor or being dragged.
    pub hot: Option<BoxHandle>,
}

/// Draws cell boxes as outlines over the 3D view: each box's 12 edges
/// projected with `camera` into the viewport `[x, y, width, height]`
/// (physical pixels). Edges with an end behind the camera are skipped.
/// With `handles`, also that box's 14 handles (face centres as squares,
/// corners as dots; the hot one larger and orange; nearer ones on top).
pub fn draw_boxes(
    ctx: &egui::Context,
    camera: &crate::camera::Camera,
    viewport_px: [f32; 4],
    boxes: &[(CellBox, egui::Color32)],
    handles: Option<HandleView>,
) {
    if boxes.is_empty() && handles.is_none() {
        return;
    }
    let ppp = ctx.pixels_per_point();
    let [vx, vy, vw, vh] = viewport_px;
    // Clipped to the 3D view: a box reaching past it must not draw over
    // the side panel or the menu bar.
    let painter = ctx
        .layer_painter(egui::LayerId::new(
            egui::Order::Background,
            egui::Id::unique("strata_region_boxes"),
        ))
        .with_clip_rect(egui::Rect::from_min_size(
            egui::pos2(vx / ppp, vy / ppp),
            egui::vec2(vw / ppp, vh / ppp),
        ));
    let to_screen = |p: glam::DVec3| {
        camera
            .project_to_screen(p, vw, vh)
            .map(|(x, y)| egui::pos2((x + vx) / ppp, (y + vy) / ppp))
    };
    let s = crate::terrain::storage::coords::CELL_SIZE_STUDS as f64;
    for (b, color) in boxes {
        let corner = |i: usize| {
            let pick = |bit: usize, lo: i32, hi: i32| if i & bit == 0 { lo } else { hi };
            to_screen(
                glam::DVec3::new(
                    pick(1, b.min.x, b.max.x) as f64,
                    pick(2, b.min.y, b.max.y) as f64,
                    pick(4, b.min.z, b.max.z) as f64,
                ) * s,
            )
        };
        let corners: Vec<Option<egui::Pos2>> = (0..8).map(corner).collect();
        for a in 0..8usize {
            for bit in [1usize, 2, 4] {
                let other = a | bit;
                if other != a
                    && let (Some(p), Some(q)) = (corners[a], corners[other])
                {
                    painter.line_segment([p, q], egui::Stroke::new(2.0, *color));
                }
            }
        }
    }
    let Some(view) = handles else { return };
    let outline = egui::Stroke::new(1.0, egui::Color32::from_black_alpha(200));
    // Far to near, so overlapping handles show the one a press grabs on top.
    let mut order = BoxHandle::ALL;
    let distance = |h: &BoxHandle| h.pos_world(&view.region).distance(camera.pos_world);
    order.sort_by(|a, b| distance(b).total_cmp(&distance(a)));
    for handle in order {
        let Some(centre) = to_screen(handle.pos_world(&view.region)) else {
            continue;
        };
        let hot = view.hot == Some(handle);
        let radius = HANDLE_RADIUS_PX / ppp * if hot { 1.5 } else { 1.0 };
        let fill = if hot { HANDLE_HOT_COLOR } else { HANDLE_COLOR };
        if handle.is_corner() {
            painter.circle(centre, radius, fill, outline);
        } else {
            let rect = egui::Rect::from_center_size(centre, egui::vec2(2.0, 2.0) * radius);
            painter.rect(rect, 1.0, fill, outline, egui::StrokeKind::Outside);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The input that was accepted: a 1.5·10⁹-cell box typed into the
    /// region fields (the handles stop at 512³). It is refused with the
    /// numbers, as is a box whose min passed its max; 512³ is accepted.
    #[test]
    fn the_region_fields_refuse_a_box_an_edit_cannot_take() {
        use glam::IVec3;
        let typed = CellBox::new(IVec3::ZERO, IVec3::new(1500, 1000, 1000));
        let why = check_typed_region(typed).expect_err("too large");
        assert!(
            why.contains("134 217 728") && why.contains("1 500 000 000"),
            "{why}"
        );
        let inside_out = CellBox::new(IVec3::new(10, 0, 0), IVec3::new(5, 4, 4));
        assert!(check_typed_region(inside_out).is_err());
        let largest = CellBox::new(IVec3::splat(-256), IVec3::splat(256));
        assert_eq!(check_typed_region(largest), Ok(largest));
    }

    #[test]
    fn every_tool_has_a_distinct_key_and_undo_redo_keys_work() {
        let none = ModifiersState::empty();
        for (mode, key, _) in TOOL_KEYS {
            assert_eq!(shortcut(key, none), Some(Shortcut::Tool(mode)));
            assert!(tool_tooltip(mode).contains('('));
        }
        assert_eq!(
            shortcut(KeyCode::KeyZ, ModifiersState::CONTROL),
            Some(Shortcut::Request(ToolRequest::Undo))
        );
        assert_eq!(
            shortcut(
                KeyCode::KeyZ,
                ModifiersState::CONTROL | ModifiersState::SHIFT
            ),
            Some(Shortcut::Request(ToolRequest::Redo))
        );
        assert_eq!(
            shortcut(KeyCode::KeyY, ModifiersState::CONTROL),
            Some(Shortcut::Request(ToolRequest::Redo))
        );
        assert_eq!(shortcut(KeyCode::KeyF, none), Some(Shortcut::Focus));
        let mut t = ToolSettings::default();
        assert_eq!(t.apply_shortcut(Shortcut::CycleShape), None);
        assert_eq!(t.shape, BrushShape::Cube);
        t.apply_shortcut(Shortcut::RotatePaste);
        assert_eq!(t.paste_quarter_turns, 1);
    }
}
