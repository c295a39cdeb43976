//! View ▸ Style in the menu bar: which mesher draws the terrain.
//! Switching re-meshes every chunk in the background; the old meshes stay
//! up until their replacements are published.

use crate::mesh::MeshStyle;

/// Draws the View menu; `style` is the view's style, changed in place when
/// the user picks another.
pub fn view_menu(ui: &mut egui::Ui, style: &mut MeshStyle) {
    ui.menu_button("View", |ui| {
        ui.menu_button("Style", |ui| {
            if ui
                .radio(*style == MeshStyle::Smooth, "Smooth (Surface Nets)")
                .clicked()
            {
                *style = MeshStyle::Smooth;
                ui.close();
            }
            if ui
                .radio(style.is_low_poly(), "Low-poly (greedy heightfield)")
                .clicked()
            {
                if !style.is_low_poly() {
                    *style = MeshStyle::LOW_POLY;
                }
                ui.close();
            }
        });
    });
}
