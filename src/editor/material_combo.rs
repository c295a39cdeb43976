//! The material drop-down every tool section shares: solid materials (and
//! Water where a tool places it), each with a swatch of its colour.

use crate::terrain::storage::cell::Material;

/// A swatch of a material's colour.
pub fn swatch(ui: &mut egui::Ui, m: Material) {
    let [r, g, b] = m.base_color_srgb();
    let (rect, _) = ui.allocate_exact_size(egui::vec2(14.0, 14.0), egui::Sense::hover());
    ui.painter()
        .rect_filled(rect, 2.0, egui::Color32::from_rgb(r, g, b));
}

/// A material drop-down with swatches (solids; Water too when `with_water`).
pub fn material_combo(ui: &mut egui::Ui, id: &str, value: &mut Material, with_water: bool) {
    swatch(ui, *value);
    egui::ComboBox::from_id_salt(id)
        .selected_text(value.name())
        .show_ui(ui, |ui| {
            for m in Material::ALL
                .into_iter()
                .filter(|m| m.is_solid() || (with_water && *m == Material::WATER))
            {
                ui.horizontal(|ui| {
                    swatch(ui, m);
                    ui.selectable_value(value, m, m.name());
                });
            }
        });
}
