//! The material drop-down every tool section shares: the open world's
//! solid materials (and Water where a tool places it), each with a swatch
//! of its colour and its name in the world's library, filtered by name
//! when the library is long.

use std::sync::Arc;

use crate::terrain::storage::cell::Material;

/// Each solid material of the open world: id, name, swatch colour (sRGB).
pub type MaterialLooks = Arc<Vec<(Material, String, [u8; 3])>>;

/// Materials past which the drop-down shows a name filter.
const FILTER_FROM_MATERIALS: usize = 12;

fn looks_id() -> egui::Id {
    egui::Id::unique("strata.material_looks")
}

fn filter_id(id: &str) -> egui::Id {
    egui::Id::unique("strata.material_filter").with(id)
}

/// Makes `looks` the materials every [`material_combo`] drawn in `ctx`
/// offers (the side panel publishes them each frame).
pub fn publish_looks(ctx: &egui::Context, looks: &[(Material, String, [u8; 3])]) {
    let looks: MaterialLooks = Arc::new(looks.to_vec());
    ctx.data_mut(|d| d.insert_temp(looks_id(), looks));
}

/// The published looks, or the built-ins before any were published.
fn published_looks(ui: &egui::Ui) -> MaterialLooks {
    ui.data(|d| d.get_temp::<MaterialLooks>(looks_id()))
        .unwrap_or_else(|| {
            Arc::new(
                Material::solids()
                    .map(|m| (m, m.name().to_string(), m.base_color_srgb()))
                    .collect(),
            )
        })
}

/// True when `name` matches the filter text (case-insensitive substring;
/// an empty filter matches every name).
pub fn name_matches(name: &str, filter: &str) -> bool {
    let filter = filter.trim();
    filter.is_empty() || name.to_lowercase().contains(&filter.to_lowercase())
}

/// A swatch of an sRGB colour.
pub fn swatch(ui: &mut egui::Ui, [r, g, b]: [u8; 3]) {
    let (rect, _) = ui.allocate_exact_size(egui::vec2(14.0, 14.0), egui::Sense::hover());
    ui.painter()
        .rect_filled(rect, 2.0, egui::Color32::from_rgb(r, g, b));
}

/// A material drop-down with swatches (the world's solids; Water too when
/// `with_water`).
pub fn material_combo(ui: &mut egui::Ui, id: &str, value: &mut Material, with_water: bool) {
    let looks = published_looks(ui);
    let water = (
        Material::WATER,
        Material::WATER.name().to_string(),
        Material::WATER.base_color_srgb(),
    );
    let current = looks
        .iter()
        .chain(std::iter::once(&water))
        .find(|(m, _, _)| m == value)
        .map_or_else(
            || (value.to_string(), [255, 0, 255]),
            |(_, n, c)| (n.clone(), *c),
        );
    swatch(ui, current.1);
    egui::ComboBox::from_id_salt(id)
        .selected_text(current.0)
        .show_ui(ui, |ui| {
            let mut filter = ui
                .data(|d| d.get_temp::<String>(filter_id(id)))
                .unwrap_or_default();
            if looks.len() > FILTER_FROM_MATERIALS {
                ui.add(egui::TextEdit::singleline(&mut filter).hint_text("filter by name"));
                ui.data_mut(|d| d.insert_temp(filter_id(id), filter.clone()));
            }
            let water_row = with_water.then_some(&water);
            for (m, name, colour) in water_row
                .into_iter()
                .chain(looks.iter())
                .filter(|(_, n, _)| name_matches(n, &filter))
            {
                ui.horizontal(|ui| {
                    swatch(ui, *colour);
                    ui.selectable_value(value, *m, name.as_str());
                });
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_is_a_case_insensitive_substring() {
        assert!(name_matches("Mossy Cobble", ""));
        assert!(name_matches("Mossy Cobble", " cob "));
        assert!(name_matches("Mossy Cobble", "MOSS"));
        assert!(!name_matches("Mossy Cobble", "sand"));
    }
}
