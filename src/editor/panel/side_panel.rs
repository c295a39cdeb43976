//! The editor's left side panel: tool, brush settings, material and stats.
//!
//! The same panel is drawn in the window and, with `--ui`, into headless
//! screenshots, so what a test image shows is what an artist sees.

use crate::editor::labels::group_digits;
use crate::pipeline::lod::{LEVEL_THRESHOLDS_STUDS, LodSettings};
use crate::pipeline::stats::LatencySummary;
use crate::render::lines::overlays::{
    LEVEL_TINTS_SRGB, NODE_LEVEL_TINTS_SRGB, Overlay, OverlaySet, SKIRT_TINT_SRGB,
};
use crate::render::lines::residency_overlay::ResidencyTint;
use crate::terrain::editing::brush::{BRUSH_RADIUS_RANGE_CELLS, Brush, BrushMode};
use crate::terrain::storage::cell::Material;

/// Width of the side panel in points.
pub const PANEL_WIDTH_POINTS: f32 = 250.0;

/// Numbers shown in the stats section.
#[derive(Clone, Debug, Default)]
pub struct PanelStats {
    /// Adapter name and backend, e.g. `"llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan)"`.
    pub adapter: String,
    /// The world, its meshes, the meshing pipeline and the level of detail
    /// (the same reading `--stats-json` writes).
    pub world: crate::pipeline::world_stats::WorldStats,
    /// Chunks drawn this frame (after frustum culling).
    pub drawn_chunks: usize,
    /// Horizon nodes drawn this frame and their triangles (spec §13; 0
    /// without a horizon).
    pub drawn_nodes: (usize, usize),
    /// Duration of the last frame, in milliseconds.
    pub frame_ms: f32,
    /// Fly speed in studs per second.
    pub camera_speed_studs_per_s: f32,
    /// Boundary vertices on which equal-level neighbours disagree, from the
    /// last seam audit (`None` when no audit ran, e.g. the overlay is off).
    pub seam_mismatches: Option<usize>,
    /// The undo history as the history section shows it.
    pub history: crate::editor::tools::history_view::HistoryView,
    /// The world document as the Layers section shows it.
    pub layers: crate::editor::panel::layers_view::LayersView,
    /// True when the clipboard holds a copied region.
    pub has_clipboard: bool,
    /// Residency of a streaming world (`None`: the world is held whole).
    pub streaming: Option<StreamingPanelStats>,
}

/// What the panel shows of a streaming world's residency (spec §12).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamingPanelStats {
    /// Resident bytes: chunk cells plus CPU mesh copies.
    pub resident_bytes: usize,
    /// The memory budget, bytes.
    pub budget_bytes: usize,
    /// Resident chunks.
    pub resident_chunks: usize,
    /// Column loads in flight.
    pub loading: usize,
    /// Columns spilled to the backing store so far.
    pub spilled: u64,
    /// True when the budget holds only part of the view.
    pub budget_limited: bool,
    /// What a waiting edit says, e.g. `"loading 3 chunk columns…"`.
    pub edit_waiting: Option<String>,
    /// Writes of edited columns to the backing file that failed so far.
    pub failed_writes: u64,
    /// Edited columns whose writes are not confirmed yet (held in memory).
    pub writes_pending: usize,
}

impl StreamingPanelStats {
    /// The warning when writes to the backing file failed and their columns
    /// are still only in memory (`None` otherwise).
    pub fn write_warning(&self) -> Option<String> {
        (self.failed_writes > 0 && self.writes_pending > 0).then(|| {
            format!(
                "{} could not be written to the world file; kept in memory, written again at the next save",
                crate::editor::labels::count_noun(self.writes_pending, "edited chunk column")
            )
        })
    }

    /// The memory line, e.g. `"612 / 2048 MiB, 1 234 chunks, 3 loading"`.
    pub fn memory_line(&self) -> String {
        format!(
            "{} / {} MiB, {} chunks, {} loading",
            self.resident_bytes >> 20,
            self.budget_bytes >> 20,
            group_digits(self.resident_chunks as u64),
            self.loading
        )
    }
}

/// Smallest and largest memory budget the panel offers, MiB.
pub const MEMORY_BUDGET_RANGE_MIB: std::ops::RangeInclusive<u32> = 64..=65_536;

impl PanelStats {
    /// The panel's figures of `world` on `adapter`; frame, draw and
    /// session figures start at zero.
    pub fn new(adapter: &str, world: crate::pipeline::world_stats::WorldStats) -> PanelStats {
        PanelStats {
            adapter: adapter.to_string(),
            world,
            ..PanelStats::default()
        }
    }
}

/// What the Sea Level tool should do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeaAction {
    /// Fill air below the level with water.
    Fill,
    /// Remove water below the level.
    Evaporate,
}

/// Tool and brush settings edited by the panel.
#[derive(Clone, Debug, PartialEq)]
pub struct EditorPanel {
    /// Current sculpt tool.
    pub tool: BrushMode,
    /// Brush radius in cells (1..=64).
    pub radius_cells: f32,
    /// Brush strength in `(0, 1]`.
    pub strength: f32,
    /// Material the Add tool fills with.
    pub material: Material,
    /// Sculpt tools leave water cells untouched.
    pub ignore_water: bool,
    /// Sea Level tool: water level in studs.
    pub sea_level_studs: f64,
    /// Sea Level tool: half-width of the square region around the cursor, in cells.
    pub sea_region_half_cells: i32,
    /// A Sea Level action the user asked for this frame (consumed by the editor).
    pub sea_action: Option<SeaAction>,
    /// Draw distance and level-of-detail controls.
    pub lod: LodSettings,
    /// Level cross-fades hold where they are (debug: inspect a transition).
    pub fades_paused: bool,
    /// One frame of the paused fades was asked for (consumed by the window).
    pub fade_step_requested: bool,
    /// Debug overlays that are on.
    pub overlays: OverlaySet,
    /// Shape, falloff, tool-specific and region settings.
    pub tools: crate::editor::tools::tools_panel::ToolSettings,
    /// Memory budget of a streaming world, MiB (applied live).
    pub memory_budget_mib: u32,
    /// Each solid material's name and swatch colour in the open world (its
    /// material library; the editor updates it every frame).
    pub material_looks: Vec<(Material, String, [u8; 3])>,
    /// The Materials window was asked for (consumed by the editor).
    pub materials_window_requested: bool,
}

impl Default for EditorPanel {
    fn default() -> Self {
        EditorPanel {
            tool: BrushMode::Add,
            radius_cells: 6.0,
            strength: 0.35,
            material: Material::GRASS,
            ignore_water: false,
            sea_level_studs: 160.0,
            sea_region_half_cells: 64,
            sea_action: None,
            lod: LodSettings::default(),
            fades_paused: false,
            fade_step_requested: false,
            overlays: OverlaySet::NONE,
            tools: crate::editor::tools::tools_panel::ToolSettings::default(),
            memory_budget_mib: (crate::terrain::streaming::residency::DEFAULT_BUDGET_BYTES >> 20)
                as u32,
            material_looks: Material::solids()
                .map(|m| (m, m.name().to_string(), m.base_color_srgb()))
                .collect(),
            materials_window_requested: false,
        }
    }
}

impl EditorPanel {
    /// Gives the brush and every tool setting that names `from` `to` (a
    /// material removed from the library).
    pub fn replace_material(&mut self, from: Material, to: Material) {
        if self.material == from {
            self.material = to;
        }
        self.tools.replace_material(from, to);
    }
}

impl EditorPanel {
    /// The brush these settings describe.
    pub fn brush(&self) -> Brush {
        Brush {
            mode: self.tool,
            radius_cells: self.radius_cells,
            strength: self.strength,
            material: self.material,
            ignore_water: self.ignore_water,
        }
    }

    /// Draws the panel on the left of the screen. Call inside an egui pass
    /// (`ctx.run_pass(input, |ctx| panel.show(ctx, &stats))`). Returns the
    /// panel's width in points, so the 3D view can ignore input over it.
    pub fn show(&mut self, ctx: &egui::Context, stats: &PanelStats) -> f32 {
        crate::editor::material_combo::publish_looks(ctx, &self.material_looks);
        let mut width = 0.0;
        ctx.root_ui(|root| {
            let response = egui::Panel::left("strata_tools")
                .resizable(false)
                .exact_size(PANEL_WIDTH_POINTS)
                .show(root, |ui| {
                    egui::ScrollArea::vertical().show(ui, |ui| self.contents(ui, stats));
                });
            width = response.response.rect.width();
        });
        width
    }

    /// The panel's sections, top to bottom: the tools, brush and material
    /// always shown; the region and stats open by default; the history's
    /// details, sea level, view and overlays, and the detailed stats
    /// collapsed by default, so the panel fits a 720-pixel-high window (it
    /// scrolls when sections are opened).
    fn contents(&mut self, ui: &mut egui::Ui, stats: &PanelStats) {
        ui.horizontal(|ui| {
            ui.label(egui::RichText::new("Tool").strong());
            ui.checkbox(&mut self.ignore_water, "Ignore water")
                .on_hover_text("Sculpt tools leave water cells untouched (I toggles)");
        });
        self.tools.tool_buttons(ui, &mut self.tool);
        self.tools.message_ui(ui);
        ui.add_space(4.0);

        ui.horizontal(|ui| {
            ui.label(egui::RichText::new("Brush").strong());
            ui.checkbox(&mut self.tools.plane_lock, "Plane lock")
                .on_hover_text("Keep the stroke on the plane of its first hit (L)");
        });
        ui.add(
            egui::Slider::new(
                &mut self.radius_cells,
                *BRUSH_RADIUS_RANGE_CELLS.start()..=*BRUSH_RADIUS_RANGE_CELLS.end(),
            )
            .text("radius")
            .suffix(" cells")
            .fixed_decimals(1)
            .logarithmic(true),
        )
        .on_hover_text("Brush radius in cells (1 cell = 4 studs). Keys [ and ]");
        ui.add(
            egui::Slider::new(&mut self.strength, 0.05..=1.0)
                .text("strength")
                .fixed_decimals(2),
        )
        .on_hover_text("How far each application moves toward the brush shape");
        self.tools.brush_options_ui(ui, self.tool);
        ui.add_space(4.0);

        self.material_ui(ui);
        ui.separator();
        egui::CollapsingHeader::new(egui::RichText::new("Region").strong())
            .id_salt("region_section")
            .default_open(true)
            .show_unindented(ui, |ui| self.tools.region_ui(ui, stats.has_clipboard))
            .header_response
            .on_hover_text("B: select by dragging on the surface; Esc: back to the brush");
        let stamp_active =
            self.tools.active == crate::editor::tools::tools_panel::ActiveTool::Stamp;
        egui::CollapsingHeader::new(egui::RichText::new("Stamp").strong())
            .id_salt("stamp_section")
            .open(stamp_active.then_some(true))
            .default_open(false)
            .show(ui, |ui| self.tools.stamp.ui(ui))
            .header_response
            .on_hover_text("K: press a stamp into the terrain where you click; R turns it 15°");
        let path_active = self.tools.active == crate::editor::tools::tools_panel::ActiveTool::Path;
        egui::CollapsingHeader::new(egui::RichText::new("Path").strong())
            .id_salt("path_section")
            .open(path_active.then_some(true))
            .default_open(false)
            .show(ui, |ui| self.tools.path.ui(ui))
            .header_response
            .on_hover_text("P: click points on the terrain, drag to move, Enter lays the path");
        self.layers_and_history(ui, stats);
        egui::CollapsingHeader::new(egui::RichText::new("Sea level").strong())
            .id_salt("sea_section")
            .default_open(false)
            .show(ui, |ui| self.sea_level_ui(ui))
            .header_response
            .on_hover_text(
                "Fill air below a height with water, or evaporate it, in a square around the cursor",
            );
        egui::CollapsingHeader::new(egui::RichText::new("View and debug overlays").strong())
            .id_salt("view_section")
            .default_open(false)
            .show(ui, |ui| {
                ui.add(
                    egui::Slider::new(
                        &mut self.lod.draw_distance_studs,
                        256.0..=crate::pipeline::lod::MAX_DRAW_DISTANCE_STUDS,
                    )
                    .text("draw dist")
                    .logarithmic(true)
                    .fixed_decimals(0),
                )
                .on_hover_text(
                    "Draw distance in studs: nothing beyond it is drawn (streaming worlds \
                     draw coarse horizon nodes beyond 3000 studs)",
                );
                ui.checkbox(&mut self.lod.frozen, "Freeze LOD")
                    .on_hover_text("Stop choosing levels so you can fly away and inspect them");
                ui.horizontal(|ui| {
                    ui.checkbox(&mut self.fades_paused, "Pause level fades")
                        .on_hover_text(
                            "Hold level-change cross-fades where they are (they last 16 frames)",
                        );
                    if ui
                        .add_enabled(self.fades_paused, egui::Button::new("Step"))
                        .on_hover_text("Advance the paused fades by one frame")
                        .clicked()
                    {
                        self.fade_step_requested = true;
                    }
                });
                ui.separator();
                self.overlay_section(ui, stats);
            });
        if let Some(streaming) = &stats.streaming {
            self.streaming_ui(ui, streaming);
        }
        egui::CollapsingHeader::new(egui::RichText::new("Stats").strong())
            .id_salt("stats_section")
            .default_open(true)
            .show_unindented(ui, |ui| stats_ui(ui, stats));
        ui.separator();
        ui.label(
            egui::RichText::new(
                "LMB sculpt · RMB look · WASD/QE fly · wheel speed · [ ] radius · 1/2 tool",
            )
            .small()
            .weak(),
        );
    }
}

impl EditorPanel {
    /// The material picker: one swatch per solid material (its name on
    /// hover), the selected one outlined and named.
    fn material_ui(&mut self, ui: &mut egui::Ui) {
        let name_of = |m: Material| -> String {
            self.material_looks
                .iter()
                .find(|(l, _, _)| *l == m)
                .map_or_else(|| m.name().to_string(), |(_, n, _)| n.clone())
        };
        ui.horizontal(|ui| {
            ui.label(egui::RichText::new("Material").strong());
            ui.label(name_of(self.material));
            if ui
                .small_button("Materials…")
                .on_hover_text("This world's materials: names, textures, tints, tile sizes")
                .clicked()
            {
                self.materials_window_requested = true;
            }
        });
        let filter_id = egui::Id::unique("strata.palette_filter");
        let mut filter = ui
            .data(|d| d.get_temp::<String>(filter_id))
            .unwrap_or_default();
        if self.material_looks.len() > 12 {
            ui.add(
                egui::TextEdit::singleline(&mut filter)
                    .hint_text("filter materials by name")
                    .desired_width(160.0),
            );
            ui.data_mut(|d| d.insert_temp(filter_id, filter.clone()));
        }
        ui.horizontal_wrapped(|ui| {
            ui.spacing_mut().item_spacing.x = 4.0;
            for (m, name, [r, g, b]) in self
                .material_looks
                .clone()
                .into_iter()
                .filter(|(_, n, _)| crate::editor::material_combo::name_matches(n, &filter))
            {
                let selected = self.material == m;
                let (rect, response) =
                    ui.allocate_exact_size(egui::vec2(18.0, 18.0), egui::Sense::click());
                ui.painter()
                    .rect_filled(rect, 3.0, egui::Color32::from_rgb(r, g, b));
                if selected {
                    ui.painter().rect_stroke(
                        rect.expand(1.0),
                        3.0,
                        egui::Stroke::new(2.0, ui.visuals().selection.stroke.color),
                        egui::StrokeKind::Outside,
                    );
                }
                if response.on_hover_text(name).clicked() {
                    self.material = m;
                }
            }
        });
    }

    /// A streaming world's memory against its budget, the budget setting
    /// and what a waiting edit says.
    fn streaming_ui(&mut self, ui: &mut egui::Ui, stats: &StreamingPanelStats) {
        ui.label(egui::RichText::new("Memory").strong());
        {
            let over = stats.resident_bytes > stats.budget_bytes;
            let text = egui::RichText::new(stats.memory_line());
            ui.label(if over {
                text.color(egui::Color32::from_rgb(255, 120, 80))
            } else {
                text
            })
            .on_hover_text(format!(
                "Resident chunk cells and CPU mesh copies of the streaming world \
                 against the budget; {} columns spilled to the backing file so far",
                stats.spilled
            ));
        }
        ui.add(
            egui::Slider::new(&mut self.memory_budget_mib, MEMORY_BUDGET_RANGE_MIB)
                .text("budget")
                .suffix(" MiB")
                .logarithmic(true),
        )
        .on_hover_text(
            "Memory budget of the streaming world (--memory-budget-mib): the least \
             recently needed columns are evicted above it, edited ones written to the \
             backing file first",
        );
        if let Some(warning) = stats.write_warning() {
            ui.label(egui::RichText::new(warning).color(egui::Color32::from_rgb(255, 120, 80)));
        }
        if stats.budget_limited {
            ui.label(
                egui::RichText::new("the budget holds only part of the view")
                    .small()
                    .color(egui::Color32::from_rgb(255, 190, 90)),
            );
        }
        if let Some(waiting) = &stats.edit_waiting {
            ui.label(
                egui::RichText::new(format!("edit waits: {waiting}"))
                    .color(egui::Color32::from_rgb(255, 225, 90)),
            );
        }
        ui.separator();
    }

    /// The Layers section (open by default), then the history.
    fn layers_and_history(&mut self, ui: &mut egui::Ui, stats: &PanelStats) {
        egui::CollapsingHeader::new(egui::RichText::new("Layers").strong())
            .id_salt("layers_section")
            .default_open(true)
            .show(ui, |ui| {
                crate::editor::panel::layers_panel::layers_ui(ui, &stats.layers, &mut self.tools)
            })
            .header_response
            .on_hover_text(
                "Every stroke, stamp and path stays editable: hide a layer, move a stamp, \
                 change the base seed",
            );
        crate::editor::panel::history_panel::history_ui(ui, &stats.history, &mut self.tools);
    }

    /// The sea level section's sliders and buttons.
    fn sea_level_ui(&mut self, ui: &mut egui::Ui) {
        ui.add(
            egui::Slider::new(&mut self.sea_level_studs, -512.0..=2048.0)
                .text("level")
                .fixed_decimals(0),
        )
        .on_hover_text("Water level, studs");
        ui.add(
            egui::Slider::new(&mut self.sea_region_half_cells, 8..=512)
                .text("half-width")
                .logarithmic(true),
        )
        .on_hover_text("Half-width of the square around the cursor, cells");
        ui.horizontal(|ui| {
            if ui
                .button("Fill")
                .on_hover_text("Fill air below the level with water (G)")
                .clicked()
            {
                self.sea_action = Some(SeaAction::Fill);
            }
            if ui
                .button("Evaporate")
                .on_hover_text("Remove water below the level (H)")
                .clicked()
            {
                self.sea_action = Some(SeaAction::Evaporate);
            }
        });
    }

    /// The "Debug overlays" section: one checkbox per overlay, the level
    /// legend while `lod` is on, and the seam audit result while
    /// `seam-audit` is on.
    fn overlay_section(&mut self, ui: &mut egui::Ui, stats: &PanelStats) {
        ui.label(egui::RichText::new("Debug overlays").strong());
        egui::Grid::new("overlays").num_columns(2).show(ui, |ui| {
            for (i, overlay) in Overlay::ALL.into_iter().enumerate() {
                let mut on = self.overlays.contains(overlay);
                if ui
                    .checkbox(&mut on, overlay.label())
                    .on_hover_text(format!(
                        "{} (--overlay {})",
                        overlay.description(),
                        overlay.name()
                    ))
                    .changed()
                {
                    self.overlays.set(overlay, on);
                }
                if i % 2 == 1 {
                    ui.end_row();
                }
            }
        });
        let swatch = |ui: &mut egui::Ui, [r, g, b]: [u8; 3]| {
            let (rect, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
            ui.painter()
                .rect_filled(rect, 2.0, egui::Color32::from_rgb(r, g, b));
        };
        if self.overlays.contains(Overlay::Lod) {
            let [t1, t2, t3] = LEVEL_THRESHOLDS_STUDS;
            let legend = [
                (format!("L0 < {t1:.0}"), 32),
                (format!("L1 < {t2:.0}"), 16),
                (format!("L2 < {t3:.0}"), 8),
                (format!("L3 ≥ {t3:.0}"), 4),
            ];
            egui::Grid::new("lod legend")
                .num_columns(2)
                .spacing([12.0, 2.0])
                .show(ui, |ui| {
                    for (level, (tint, (text, samples))) in
                        LEVEL_TINTS_SRGB.into_iter().zip(legend).enumerate()
                    {
                        ui.horizontal(|ui| {
                            swatch(ui, tint);
                            ui.label(text).on_hover_text(format!(
                                "Level {level}: {samples} samples per chunk axis; \
                                 distance from the camera to the chunk's bounding \
                                 sphere in studs"
                            ));
                        });
                        if level % 2 == 1 {
                            ui.end_row();
                        }
                    }
                    // The horizon's nodes of a streaming world (spec §13).
                    ui.horizontal(|ui| {
                        for tint in NODE_LEVEL_TINTS_SRGB {
                            swatch(ui, tint);
                        }
                        ui.label("L4–8 horizon").on_hover_text(
                            "Streaming worlds draw nodes of 2×2×2 chunks and up beyond \
                             level 3, each level out to twice the distance of the one below",
                        );
                    });
                    ui.end_row();
                });
        }
        if self.overlays.contains(Overlay::Skirts) {
            ui.horizontal(|ui| {
                swatch(ui, SKIRT_TINT_SRGB);
                ui.label("skirts (render-only)");
            });
        }
        if self.overlays.contains(Overlay::Residency) {
            egui::Grid::new("residency legend")
                .num_columns(2)
                .spacing([12.0, 2.0])
                .show(ui, |ui| {
                    for (i, tint) in ResidencyTint::ALL.into_iter().enumerate() {
                        ui.horizontal(|ui| {
                            swatch(ui, tint.srgb());
                            ui.label(tint.label());
                        });
                        if i % 2 == 1 {
                            ui.end_row();
                        }
                    }
                });
            if stats.streaming.is_none() {
                ui.label(
                    egui::RichText::new("(this world does not stream)")
                        .small()
                        .weak(),
                );
            }
        }
        if self.overlays.contains(Overlay::SeamAudit) {
            let (text, color) = match stats.seam_mismatches {
                Some(0) => (
                    "seam audit: 0 mismatches".to_string(),
                    egui::Color32::from_rgb(90, 200, 110),
                ),
                Some(n) => (
                    format!("seam audit: {n} mismatches (red markers)"),
                    egui::Color32::from_rgb(255, 80, 70),
                ),
                None => (
                    "seam audit: pending".to_string(),
                    ui.visuals().weak_text_color(),
                ),
            };
            ui.label(egui::RichText::new(text).color(color));
        }
    }
}

/// The stats section: the figures an artist watches (chunks, triangles and
/// their split by level, frame and meshing times, edit latency), the rest
/// under a collapsed "More".
fn stats_ui(ui: &mut egui::Ui, stats: &PanelStats) {
    let row = |ui: &mut egui::Ui, k: &str, v: String| {
        ui.label(k);
        ui.label(v);
        ui.end_row();
    };
    egui::Grid::new("stats").num_columns(2).show(ui, |ui| {
        row(
            ui,
            "chunks",
            format!(
                "{} meshed, {} drawn",
                stats.world.nonempty_chunks, stats.drawn_chunks
            ),
        );
        row(ui, "triangles", format_count(stats.world.triangles));
        if stats.drawn_nodes.0 > 0 {
            row(
                ui,
                "horizon",
                format!(
                    "{} nodes, {} tris",
                    stats.drawn_nodes.0,
                    format_count(stats.drawn_nodes.1)
                ),
            );
        }
        if stats.world.merged_materials.0 > 0 {
            let (chunks, materials) = stats.world.merged_materials;
            ui.colored_label(ui.visuals().warn_fg_color, "materials")
                .on_hover_text(
                    "Over 30 solid materials lie near these chunks: their rarest draw as \
                     the most common one there (the cells keep their own)",
                );
            ui.label(format!("{materials} drawn as another in {chunks} chunks"));
            ui.end_row();
        }
        let [t0, t1, t2, t3] = stats.world.triangles_by_level.map(format_count_short);
        ui.label("by level")
            .on_hover_text("Triangles at levels of detail 0 / 1 / 2 / 3");
        ui.label(format!("{t0}/{t1}/{t2}/{t3}"));
        ui.end_row();
        row(
            ui,
            "frame",
            format!(
                "{:.1} ms, mesh {:.0} ms",
                stats.frame_ms, stats.world.mesh_ms
            ),
        );
        let latency = |s: Option<LatencySummary>| match s {
            Some(s) => format!("{:.0} ms (p99 {:.0})", s.last, s.p99),
            None => "— (no edit shown yet)".to_string(),
        };
        row(ui, "edit latency", latency(stats.world.edit_to_visible_ms));
        row(
            ui,
            "full detail",
            latency(stats.world.edit_to_full_detail_ms),
        );
    });
    egui::CollapsingHeader::new("More")
        .id_salt("stats_more")
        .default_open(false)
        .show(ui, |ui| {
            egui::Grid::new("stats_more_grid")
                .num_columns(2)
                .show(ui, |ui| {
                    row(ui, "stored chunks", format!("{}", stats.world.chunks));
                    let [c0, c1, c2, c3] = stats.world.chunks_by_level;
                    row(ui, "chunks/level", format!("{c0}/{c1}/{c2}/{c3}"));
                    row(
                        ui,
                        "seam audit",
                        match stats.seam_mismatches {
                            Some(n) => format!("{n} mismatches"),
                            None => "off".to_string(),
                        },
                    );
                    row(ui, "vertices", format_count(stats.world.vertices));
                    row(
                        ui,
                        "grid memory",
                        format!(
                            "{:.1} MiB",
                            stats.world.grid_bytes as f64 / (1024.0 * 1024.0)
                        ),
                    );
                    row(ui, "mesh queue", format!("{}", stats.world.queue_len));
                    row(
                        ui,
                        "published",
                        format!(
                            "{} in {:.2} ms",
                            stats.world.results_last_frame, stats.world.upload_ms_last_frame
                        ),
                    );
                    let p = stats.world.camera_pos_world;
                    row(
                        ui,
                        "camera",
                        format!("{:.0}, {:.0}, {:.0}", p[0], p[1], p[2]),
                    );
                    row(
                        ui,
                        "speed",
                        format!("{:.0} studs/s", stats.camera_speed_studs_per_s),
                    );
                });
            ui.label(egui::RichText::new(&stats.adapter).small().weak());
        });
}

/// Formats a count with a k/M suffix and no space, e.g. `47.3k`, for
/// tight rows.
fn format_count_short(n: usize) -> String {
    format_count(n).replace(' ', "")
}

/// Formats a count with a k/M suffix, e.g. `1.25 M`.
fn format_count(n: usize) -> String {
    if n >= 1_000_000 {
        format!("{:.2} M", n as f64 / 1e6)
    } else if n >= 10_000 {
        format!("{:.1} k", n as f64 / 1e3)
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memory_line_shows_resident_memory_against_the_budget() {
        let s = StreamingPanelStats {
            resident_bytes: 612 << 20,
            budget_bytes: 2048 << 20,
            resident_chunks: 1234,
            loading: 3,
            ..StreamingPanelStats::default()
        };
        assert_eq!(s.memory_line(), "612 / 2048 MiB, 1 234 chunks, 3 loading");
        assert_eq!(group_digits(1_048_576), "1 048 576");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(0), "0");
        assert!(MEMORY_BUDGET_RANGE_MIB.contains(&EditorPanel::default().memory_budget_mib));
        // Failed writes are shown while their columns are only in memory.
        assert_eq!(s.write_warning(), None);
        let failing = StreamingPanelStats {
            failed_writes: 2,
            writes_pending: 1,
            ..s.clone()
        };
        assert!(
            failing
                .write_warning()
                .unwrap()
                .starts_with("1 edited chunk column could not be written")
        );
        let retried = StreamingPanelStats {
            writes_pending: 0,
            ..failing
        };
        assert_eq!(retried.write_warning(), None);
    }

    /// Every text the panel draws with the Stamp tool active, as `(text,
    /// its rectangle, the rectangle it is clipped to)` in points.
    fn stamp_panel_texts() -> Vec<(String, egui::Rect, egui::Rect)> {
        let ctx = egui::Context::default();
        let mut panel = EditorPanel::default();
        panel.tools.active = crate::editor::tools::tools_panel::ActiveTool::Stamp;
        let raw = egui::RawInput {
            // As tall as needed to show the whole panel; its width is fixed.
            screen_rect: Some(egui::Rect::from_min_size(
                egui::Pos2::ZERO,
                egui::vec2(1280.0, 2400.0),
            )),
            ..egui::RawInput::default()
        };
        let mut out = ctx.run_pass(raw, |ctx| {
            panel.show(ctx, &PanelStats::default());
        });
        out.textures_delta.clear();
        out.shapes
            .into_iter()
            .filter_map(|c| match c.shape {
                egui::Shape::Text(t) => Some((
                    t.galley.text().to_string(),
                    t.visual_bounding_rect(),
                    c.clip_rect,
                )),
                _ => None,
            })
            .collect()
    }

    /// The input that showed it: a tool's message was drawn at the end of
    /// the Region section. It now sits right under the tool buttons, above
    /// the Brush section.
    #[test]
    fn the_tool_message_sits_under_the_tool_buttons() {
        let ctx = egui::Context::default();
        let mut panel = EditorPanel::default();
        panel.tools.message = Some(("stroke refused: TEST".into(), true));
        let raw = egui::RawInput {
            screen_rect: Some(egui::Rect::from_min_size(
                egui::Pos2::ZERO,
                egui::vec2(1280.0, 720.0),
            )),
            ..egui::RawInput::default()
        };
        let mut out = ctx.run_pass(raw, |ctx| {
            panel.show(ctx, &PanelStats::default());
        });
        out.textures_delta.clear();
        let top = |needle: &str| {
            out.shapes
                .iter()
                .find_map(|c| match &c.shape {
                    egui::Shape::Text(t) if t.galley.text() == needle => {
                        Some(t.visual_bounding_rect().min.y)
                    }
                    _ => None,
                })
                .unwrap_or_else(|| panic!("{needle} not drawn"))
        };
        let (message, brush) = (top("stroke refused: TEST"), top("Brush"));
        assert!(message < brush, "message at {message}, Brush at {brush}");
    }

    /// The input that failed: at 1280×720 "Replace" lay past the panel's
    /// right edge and "Lower to" was a sliver.
    #[test]
    fn every_stamp_mode_fits_inside_the_side_panel() {
        let texts = stamp_panel_texts();
        for mode in crate::terrain::stamp::definition::StampMode::ALL {
            let (_, rect, clip) = texts
                .iter()
                .find(|(t, _, _)| t == mode.name())
                .unwrap_or_else(|| panic!("{} not drawn", mode.name()));
            assert!(
                rect.max.x <= PANEL_WIDTH_POINTS && rect.max.x <= clip.max.x + 0.5,
                "{}: {rect:?} clipped to {clip:?}",
                mode.name()
            );
            assert!(rect.width() > 10.0, "{}: {rect:?}", mode.name());
        }
    }
}
