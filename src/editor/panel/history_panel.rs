//! The history section of the side panel: the undo steps (newest first)
//! with the memory each holds, the redo steps greyed (a click on a step
//! undoes or redoes up to it), Undo and Redo buttons,
//! the memory budget and a note when old steps were dropped to stay within it.
//! A path step has a Reopen button that loads it back into the Path tool.

use crate::editor::tools::history_view::HistoryView;

use crate::editor::tools::tools_panel::{ToolRequest, ToolSettings};

fn mib(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// Draws the history section (Undo and Redo, the steps and memory under a
/// collapsed header); button presses become requests in `tools`.
pub fn history_ui(ui: &mut egui::Ui, view: &HistoryView, tools: &mut ToolSettings) {
    ui.horizontal(|ui| {
        ui.label(egui::RichText::new("History").strong());
        if ui
            .add_enabled(view.undo_len > 0, egui::Button::new("Undo"))
            .on_hover_text("Undo the last stroke or region operation (Ctrl+Z)")
            .clicked()
        {
            tools.requests.push(ToolRequest::Undo);
        }
        if ui
            .add_enabled(view.redo_len > 0, egui::Button::new("Redo"))
            .on_hover_text("Redo (Ctrl+Shift+Z or Ctrl+Y)")
            .clicked()
        {
            tools.requests.push(ToolRequest::Redo);
        }
        ui.label(format!("{} / {} steps", view.undo_len, view.redo_len));
    });
    egui::CollapsingHeader::new("Steps and memory")
        .id_salt("history_details")
        .default_open(false)
        .show(ui, |ui| {
            history_details(ui, view, tools);
        });
}

/// The history's steps (a click jumps to one), memory held and budget.
/// Returns the steps list's viewport (points).
fn history_details(ui: &mut egui::Ui, view: &HistoryView, tools: &mut ToolSettings) -> egui::Rect {
    ui.label(format!(
        "holds {} of {} (peak {})",
        mib(view.held_bytes),
        mib(view.budget_bytes),
        mib(view.peak_bytes)
    ))
    .on_hover_text(
        "Chunk storage only the history keeps (before-states the grid no longer holds); \
         each 32³ chunk copy is 64 KiB",
    );
    ui.horizontal(|ui| {
        let r = ui
            .add(
                egui::DragValue::new(&mut tools.history_budget_mib)
                    .range(16..=16384)
                    .suffix(" MiB"),
            )
            .on_hover_text("Memory budget: the oldest steps are dropped when it is exceeded");
        ui.label("budget");
        if r.changed() {
            tools.requests.push(ToolRequest::SetBudget(
                (tools.history_budget_mib as usize) << 20,
            ));
        }
    });
    if view.dropped_steps > 0 {
        ui.label(
            egui::RichText::new(format!(
                "{} oldest steps dropped to stay within the budget",
                view.dropped_steps
            ))
            .color(egui::Color32::from_rgb(230, 170, 60)),
        );
    }
    egui::ScrollArea::vertical()
        .id_salt("history_rows")
        .max_height(160.0)
        // Inside the panel's own scroll area the default minimum (64
        // points) showed about three rows.
        .min_scrolled_height(160.0)
        .show(ui, |ui| {
            egui::Grid::new("history_grid")
                .num_columns(3)
                .show(ui, |ui| {
                    // Row k (newest first) is the state after step
                    // undo_len + redo_len - k of the timeline.
                    let newest = view.undo_len + view.redo_len;
                    for (k, row) in view.rows.iter().enumerate() {
                        let text = egui::RichText::new(&row.label);
                        let text = if row.undone {
                            text.weak().italics()
                        } else {
                            text
                        };
                        let current = newest - k == view.undo_len;
                        if ui
                            .selectable_label(current, text)
                            .on_hover_text("Undo or redo up to this step")
                            .clicked()
                        {
                            tools.requests.push(ToolRequest::JumpTo(newest - k));
                        }
                        ui.label(egui::RichText::new(mib(row.bytes)).weak());
                        match (&row.path, row.path_operation) {
                            (Some(spec), Some(id)) if !row.undone => {
                                if ui
                                    .small_button("Edit")
                                    .on_hover_text(
                                        "Load this path into the Path tool: edit its points \
                                         and Apply replaces it in its layer (nothing is undone)",
                                    )
                                    .clicked()
                                {
                                    tools.edit_path_operation(id, spec);
                                }
                            }
                            (Some(spec), None) if !row.undone => {
                                if ui
                                    .small_button("Reopen")
                                    .on_hover_text(
                                        "Undo back to before this path and load its points into \
                                         the Path tool to edit and apply again",
                                    )
                                    .clicked()
                                {
                                    tools.reopen_path(spec, newest - k - 1);
                                }
                            }
                            _ => {
                                ui.label("");
                            }
                        }
                        ui.end_row();
                    }
                });
        })
        .inner_rect
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::editor::tools::history_view::StepRow;

    /// The input that showed it: inside the side panel's own scroll area
    /// the steps list showed about three rows (an inner scroll area's
    /// default minimum height). At least eight of 30 steps show now.
    #[test]
    fn the_steps_list_shows_eight_rows_inside_the_panel() {
        let view = HistoryView {
            rows: (0..30)
                .map(|i| StepRow {
                    label: format!("step {i}"),
                    bytes: 1024,
                    undone: false,
                    path: None,
                    path_operation: None,
                })
                .collect(),
            undo_len: 30,
            ..HistoryView::default()
        };
        let mut tools = ToolSettings::default();
        let ctx = egui::Context::default();
        let raw = egui::RawInput {
            screen_rect: Some(egui::Rect::from_min_size(
                egui::Pos2::ZERO,
                egui::vec2(320.0, 720.0),
            )),
            ..egui::RawInput::default()
        };
        let mut list = egui::Rect::NOTHING;
        let mut out = ctx.run_pass(raw, |ctx| {
            ctx.root_ui(|root| {
                egui::Panel::left("panel")
                    .exact_size(300.0)
                    .show(root, |ui| {
                        // As the side panel: the steps near the bottom of what
                        // shows, and everything inside a vertical scroll area.
                        egui::ScrollArea::vertical().show(ui, |ui| {
                            ui.add_space(640.0);
                            list = history_details(ui, &view, &mut tools);
                            ui.add_space(600.0);
                        });
                    });
            });
        });
        out.textures_delta.clear();
        let row_points = 18.0;
        assert!(
            list.height() >= 8.0 * row_points,
            "the steps list is {} points tall: {:.1} rows",
            list.height(),
            list.height() / row_points
        );
    }
}
