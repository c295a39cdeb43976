//! The Layers section of the side panel (spec §14): the layer stack top
//! first (show, lock, select, reorder, solo, duplicate, merge down,
//! delete), a new layer, Bake and a base seed change; under it the active
//! layer's operations, where the selected one can be moved, edited or
//! deleted. Every button becomes a document request; the world re-derives
//! the closure and the action is one undo step.

use crate::editor::panel::layers_view::{LayersView, OperationRow};
use crate::editor::tools::tools_panel::{LayersUiState, ToolRequest, ToolSettings};
use crate::terrain::command::document_action::{DocumentAction, LayerRef};
use crate::terrain::document::layers::LayerId;
use crate::terrain::document::operation::OperationId;
use crate::terrain::document::operation_edit::OperationEdit;

fn request(tools: &mut ToolSettings, action: DocumentAction) {
    tools.requests.push(ToolRequest::Document(Box::new(action)));
}

/// Draws the Layers section; presses become requests in `tools`.
pub fn layers_ui(ui: &mut egui::Ui, view: &LayersView, tools: &mut ToolSettings) {
    if !view.enabled {
        ui.label("This world keeps no layers.");
        return;
    }
    stack_buttons(ui, view, tools);
    ui.checkbox(&mut tools.layers.pick_in_view, "Pick in view")
        .on_hover_text(
            "A click in the view selects the stamp, path or stroke under the cursor \
             (its layer becomes active); drag to move it",
        );
    for row in &view.layers {
        layer_row(ui, row, view.layers.len(), tools);
    }
    if let Some(active) = view.layers.iter().find(|l| l.active) {
        rename_row(ui, active.id, &mut tools.layers, &mut tools.requests);
    }
    if let Some((columns, operations, ms)) = view.last_derive {
        ui.label(format!(
            "last re-derive: {columns} columns, {operations} operations, {ms:.0} ms"
        ))
        .on_hover_text("Chunk columns rebuilt from the base and the operations that meet them");
    }
    for failure in &view.failures {
        ui.colored_label(egui::Color32::from_rgb(230, 170, 60), failure);
    }
    egui::CollapsingHeader::new(format!("Operations ({})", view.operations.len()))
        .id_salt("layer_operations")
        .default_open(true)
        .show(ui, |ui| operations_ui(ui, &view.operations, tools));
}

/// New layer, Bake and the base seed.
fn stack_buttons(ui: &mut egui::Ui, view: &LayersView, tools: &mut ToolSettings) {
    ui.horizontal(|ui| {
        if ui
            .button("New layer")
            .on_hover_text("Add a layer above the active one; new edits land on it")
            .clicked()
        {
            // The first "Layer N" no layer has (names address layers).
            let name = (view.layers.len() + 1..)
                .map(|n| format!("Layer {n}"))
                .find(|name| view.layers.iter().all(|l| &l.name != name))
                .unwrap_or_default();
            request(tools, DocumentAction::AddLayer(name));
        }
        if view.streamed {
            // A streaming world is never all in memory: nothing to bake into.
            return;
        }
        if ui
            .add_enabled(view.operation_count > 0, egui::Button::new("Bake"))
            .on_hover_text("Flatten every layer into the base cells (one undo step)")
            .clicked()
        {
            request(tools, DocumentAction::Bake);
        }
    });
    if let Some(job) = &view.base_job {
        ui.horizontal(|ui| {
            let bar = egui::ProgressBar::new(job.fraction.unwrap_or(0.0))
                .text(format!("seed {}: {}", job.seed, job.stage))
                .desired_width(150.0);
            ui.add(bar);
            if ui
                .button("Cancel")
                .on_hover_text("Stop making the new base; nothing changes")
                .clicked()
            {
                tools.requests.push(ToolRequest::CancelBaseSeed);
            }
        });
    } else if let (Some(seed), true) = (view.base_seed, view.streamed) {
        ui.label(format!("base seed {seed} (a streaming world's own)"))
            .on_hover_text(
                "A streaming world's seed is part of its file; make a new world for another seed",
            );
    } else if let Some(seed) = view.base_seed {
        ui.horizontal(|ui| {
            ui.label(format!("base seed {seed}, new:"));
            ui.add(egui::DragValue::new(&mut tools.layers.seed));
            if ui
                .button("Change")
                .on_hover_text("Make the base again with this seed and re-apply every layer")
                .clicked()
            {
                let seed = tools.layers.seed;
                request(tools, DocumentAction::SetBaseSeed(seed));
            }
        });
    }
}

/// A layer carried by a drag of its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct DraggedLayer {
    /// Its id.
    id: u32,
    /// Its place in the stack (0 lowest).
    position: usize,
}

/// One layer: show, lock, name (click makes it active, drag it onto
/// another layer to move it to that layer's place), order and tools.
fn layer_row(
    ui: &mut egui::Ui,
    row: &crate::editor::panel::layers_view::LayerRow,
    count: usize,
    tools: &mut ToolSettings,
) {
    let layer = LayerRef::Id(LayerId(row.id));
    ui.horizontal(|ui| {
        let mut visible = row.visible;
        if ui
            .checkbox(&mut visible, "")
            .on_hover_text("Show or hide the layer's operations")
            .changed()
        {
            request(tools, DocumentAction::SetVisible(layer.clone(), visible));
        }
        let lock = if row.locked { "locked" } else { "lock" };
        if ui
            .selectable_label(row.locked, lock)
            .on_hover_text("Lock: the layer refuses new, edited and deleted operations")
            .clicked()
        {
            request(tools, DocumentAction::SetLocked(layer.clone(), !row.locked));
        }
        let name = format!("{} ({})", row.name, row.operation_count);
        let named = ui
            .selectable_label(row.active, name)
            .interact(egui::Sense::drag())
            .on_hover_text("Click to make it active; drag onto another layer to move it there");
        if named.clicked() {
            request(tools, DocumentAction::SelectLayer(layer.clone()));
        }
        named.dnd_set_drag_payload(DraggedLayer {
            id: row.id,
            position: row.position,
        });
        if let Some(dragged) = named.dnd_hover_payload::<DraggedLayer>()
            && dragged.id != row.id
        {
            // Where it would land: above this layer when it comes from
            // below (the list is top first), else under it.
            let rect = named.rect.expand(2.0);
            let y = if dragged.position < row.position {
                rect.top()
            } else {
                rect.bottom()
            };
            ui.painter()
                .hline(rect.x_range(), y, ui.visuals().selection.stroke);
        }
        if let Some(dragged) = named.dnd_release_payload::<DraggedLayer>()
            && dragged.id != row.id
        {
            request(
                tools,
                DocumentAction::MoveLayer(LayerRef::Id(LayerId(dragged.id)), row.position),
            );
        }
    });
    if !row.active {
        return;
    }
    ui.horizontal(|ui| {
        if ui
            .add_enabled(row.position + 1 < count, egui::Button::new("Up").small())
            .on_hover_text("Move the layer up: its operations apply later")
            .clicked()
        {
            request(
                tools,
                DocumentAction::MoveLayer(layer.clone(), row.position + 1),
            );
        }
        if ui
            .add_enabled(row.position > 0, egui::Button::new("Down").small())
            .on_hover_text("Move the layer down: its operations apply earlier")
            .clicked()
        {
            request(
                tools,
                DocumentAction::MoveLayer(layer.clone(), row.position - 1),
            );
        }
    });
    ui.horizontal(|ui| {
        let buttons: [(&str, &str, DocumentAction); 4] = [
            (
                "Solo",
                "Show only this layer",
                DocumentAction::Solo(layer.clone()),
            ),
            (
                "Copy",
                "Duplicate the layer",
                DocumentAction::DuplicateLayer(layer.clone()),
            ),
            (
                "Merge",
                "Append its operations to the layer below",
                DocumentAction::MergeDown(layer.clone()),
            ),
            (
                "Delete",
                "Delete the layer and its operations",
                DocumentAction::RemoveLayer(layer.clone()),
            ),
        ];
        for (label, hover, action) in buttons {
            let enabled = !(label == "Merge" && row.position == 0);
            if ui
                .add_enabled(enabled, egui::Button::new(label).small())
                .on_hover_text(hover)
                .clicked()
            {
                request(tools, action);
            }
        }
    });
}

/// Renames the active layer when Enter is pressed in the field.
fn rename_row(
    ui: &mut egui::Ui,
    id: u32,
    state: &mut LayersUiState,
    requests: &mut Vec<ToolRequest>,
) {
    ui.horizontal(|ui| {
        let r = ui.add(
            egui::TextEdit::singleline(&mut state.rename)
                .hint_text("rename the active layer")
                .desired_width(150.0),
        );
        if r.lost_focus()
            && ui.input(|i| i.key_pressed(egui::Key::Enter))
            && !state.rename.trim().is_empty()
        {
            let name = std::mem::take(&mut state.rename).trim().to_string();
            requests.push(ToolRequest::Document(Box::new(
                DocumentAction::RenameLayer(LayerRef::Id(LayerId(id)), name),
            )));
        }
    });
}

/// The active layer's operations (newest first); the selected one can be
/// moved, edited or deleted.
fn operations_ui(ui: &mut egui::Ui, operations: &[OperationRow], tools: &mut ToolSettings) {
    if operations.is_empty() {
        ui.label("No operations yet: strokes, stamps and paths land here.");
        return;
    }
    egui::ScrollArea::vertical()
        .id_salt("operation_list")
        .max_height(140.0)
        .show(ui, |ui| {
            for op in operations {
                let selected = tools.layers.selected_operation == Some(op.id);
                if ui
                    .selectable_label(selected, format!("#{} {}", op.id, op.label))
                    .clicked()
                {
                    tools.layers.selected_operation = Some(op.id);
                    tools.layers.edit = OperationEdit::default();
                }
            }
        });
    let Some(selected) = operations
        .iter()
        .find(|o| Some(o.id) == tools.layers.selected_operation)
    else {
        return;
    };
    selected_operation_ui(ui, selected, tools);
}

/// Move, settings and Delete for the selected operation.
fn selected_operation_ui(ui: &mut egui::Ui, op: &OperationRow, tools: &mut ToolSettings) {
    let id = OperationId(op.id);
    ui.horizontal(|ui| {
        ui.label("move x");
        ui.add(egui::DragValue::new(&mut tools.layers.move_by_studs[0]).suffix(" studs"));
        ui.label("z");
        ui.add(egui::DragValue::new(&mut tools.layers.move_by_studs[1]).suffix(" studs"));
    });
    ui.horizontal(|ui| {
        if ui.button("Move").clicked() {
            let by = glam::DVec2::from_array(tools.layers.move_by_studs);
            request(tools, DocumentAction::MoveOperation(id, by));
        }
        if ui.button("Delete").clicked() {
            tools.layers.selected_operation = None;
            request(tools, DocumentAction::DeleteOperation(id));
        }
    });
    if let Some(spec) = &op.path
        && ui
            .button("Edit points")
            .on_hover_text(
                "Load the path into the Path tool: drag, insert and delete its \
                 points, then Apply replaces it (everything above it follows)",
            )
            .clicked()
    {
        tools.edit_path_operation(op.id, spec);
    }
    let edit = &mut tools.layers.edit;
    let field = |ui: &mut egui::Ui, label: &str, value: &mut Option<f64>, default: f64| {
        ui.horizontal(|ui| {
            let mut on = value.is_some();
            ui.checkbox(&mut on, label);
            let mut v = value.unwrap_or(default);
            if on {
                ui.add(egui::DragValue::new(&mut v).speed(0.1));
            }
            *value = on.then_some(v);
        });
    };
    match op.kind {
        "stamp" => {
            field(ui, "radius (cells)", &mut edit.radius_cells, 32.0);
            field(ui, "rotation (°)", &mut edit.rotation_deg, 0.0);
            field(
                ui,
                "height scale (cells)",
                &mut edit.height_scale_cells,
                20.0,
            );
        }
        "path" => {
            field(ui, "width (studs)", &mut edit.width_studs, 8.0);
            field(ui, "grade cap (°)", &mut edit.max_grade_deg, 8.0);
            field(ui, "depth (studs)", &mut edit.depth_studs, 4.0);
        }
        "stroke" => {
            field(ui, "radius (cells)", &mut edit.radius_cells, 8.0);
            field(ui, "strength", &mut edit.strength, 0.5);
        }
        _ => {}
    }
    if ["stamp", "path", "stroke"].contains(&op.kind)
        && ui
            .add_enabled(
                *edit != OperationEdit::default(),
                egui::Button::new("Apply settings"),
            )
            .clicked()
    {
        let edit = *edit;
        request(tools, DocumentAction::EditOperation(id, edit));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::editor::panel::layers_view::LayerRow;
    use crate::editor::tools::tools_panel::ToolRequest;

    fn view() -> LayersView {
        // Top first, as the panel lists them.
        let row = |id: u32, name: &str, position: usize| LayerRow {
            id,
            name: name.into(),
            visible: true,
            locked: false,
            active: false,
            operation_count: 0,
            position,
        };
        LayersView {
            enabled: true,
            layers: vec![row(3, "Top", 2), row(2, "Middle", 1), row(1, "Bottom", 0)],
            ..LayersView::default()
        }
    }

    /// Runs one pass of the section with `events`; returns where each
    /// layer's name was drawn (by the text's first word).
    fn pass(
        ctx: &egui::Context,
        view: &LayersView,
        tools: &mut ToolSettings,
        events: Vec<egui::Event>,
    ) -> std::collections::HashMap<String, egui::Pos2> {
        let raw = egui::RawInput {
            screen_rect: Some(egui::Rect::from_min_size(
                egui::Pos2::ZERO,
                egui::vec2(320.0, 600.0),
            )),
            events,
            ..egui::RawInput::default()
        };
        let mut out = ctx.run_pass(raw, |ctx| {
            ctx.root_ui(|root| {
                egui::Panel::left("panel")
                    .exact_size(300.0)
                    .show(root, |ui| layers_ui(ui, view, tools));
            });
        });
        out.textures_delta.clear();
        let mut at = std::collections::HashMap::new();
        for clipped in out.shapes {
            if let egui::epaint::Shape::Text(t) = clipped.shape {
                let word = t.galley.text().split(' ').next().unwrap_or("").to_string();
                at.insert(word, t.pos + t.galley.rect.center().to_vec2());
            }
        }
        at
    }

    fn pointer(pos: egui::Pos2, pressed: Option<bool>) -> Vec<egui::Event> {
        let mut e = vec![egui::Event::PointerMoved(pos)];
        if let Some(pressed) = pressed {
            e.push(egui::Event::PointerButton {
                pos,
                button: egui::PointerButton::Primary,
                pressed,
                modifiers: egui::Modifiers::NONE,
            });
        }
        e
    }

    #[test]
    fn dragging_a_layer_name_onto_another_moves_it_to_that_place() {
        let ctx = egui::Context::default();
        let view = view();
        let mut tools = ToolSettings::default();
        let at = pass(&ctx, &view, &mut tools, Vec::new());
        let (bottom, top) = (at["Bottom"], at["Top"]);
        // Press on "Bottom", drag it up over "Top" in steps, release there.
        pass(&ctx, &view, &mut tools, pointer(bottom, Some(true)));
        for i in 1..=6 {
            let p = bottom + (top - bottom) * (i as f32 / 6.0);
            pass(&ctx, &view, &mut tools, pointer(p, None));
        }
        pass(&ctx, &view, &mut tools, pointer(top, Some(false)));
        pass(&ctx, &view, &mut tools, Vec::new());
        let moves: Vec<&ToolRequest> = tools
            .requests
            .iter()
            .filter(|r| matches!(r, ToolRequest::Document(a) if matches!(**a, DocumentAction::MoveLayer(..))))
            .collect();
        assert_eq!(moves.len(), 1, "{:?}", tools.requests);
        let ToolRequest::Document(action) = moves[0] else {
            unreachable!()
        };
        assert_eq!(
            **action,
            DocumentAction::MoveLayer(LayerRef::Id(LayerId(1)), 2),
            "Bottom goes to Top's place"
        );
        // A click (no drag) only makes a layer active.
        tools.requests.clear();
        let middle = at["Middle"];
        pass(&ctx, &view, &mut tools, pointer(middle, Some(true)));
        pass(&ctx, &view, &mut tools, pointer(middle, Some(false)));
        pass(&ctx, &view, &mut tools, Vec::new());
        assert!(
            tools.requests.iter().all(|r| matches!(r, ToolRequest::Document(a) if matches!(**a, DocumentAction::SelectLayer(_)))),
            "{:?}",
            tools.requests
        );
        assert!(!tools.requests.is_empty());
    }
}
