//! Whether a click belongs to the UI or to the tools. egui's own
//! `wants_pointer_input` reads the hover state of its last pass, so a click
//! made within one frame of the pointer arriving over a dialog used to fall
//! through to the terrain behind it. This decides from the cursor position
//! the window reported and the layout the last pass left, before the next
//! pass runs.

use crate::render::ViewportRect;

/// True when a click at `cursor_px` (window pixels) belongs to the UI: a
/// File dialog or prompt is open (`modal_open`), a menu or popup is open,
/// the cursor lies outside the 3D `viewport` (over the side panel or the
/// menu bar), or it lies over an egui window or area laid out in the last
/// pass. `None` (the cursor left the window) claims nothing.
pub fn ui_claims_pointer(
    ctx: &egui::Context,
    cursor_px: Option<[f32; 2]>,
    viewport: ViewportRect,
    modal_open: bool,
) -> bool {
    if modal_open || egui::Popup::is_any_open(ctx) {
        return true;
    }
    let Some([x, y]) = cursor_px else {
        return false;
    };
    let v = viewport;
    let in_viewport = x >= v.x && y >= v.y && x < v.x + v.width && y < v.y + v.height;
    if !in_viewport {
        return true;
    }
    let ppp = ctx.pixels_per_point();
    ctx.layer_id_at(egui::pos2(x / ppp, y / ppp))
        .is_some_and(|layer| layer.order != egui::Order::Background)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(events: Vec<egui::Event>) -> egui::RawInput {
        egui::RawInput {
            screen_rect: Some(egui::Rect::from_min_size(
                egui::Pos2::ZERO,
                egui::vec2(800.0, 600.0),
            )),
            events,
            ..Default::default()
        }
    }

    /// A pass showing a dialog window in the middle of the screen.
    fn pass(ctx: &egui::Context, events: Vec<egui::Event>) {
        let mut out = ctx.run_pass(input(events), |ctx| {
            egui::Window::new("Save As")
                .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
                .show(ctx, |ui| {
                    let mut path = String::from("world.strata");
                    ui.text_edit_singleline(&mut path);
                });
        });
        out.textures_delta.clear();
    }

    #[test]
    fn a_click_as_the_pointer_arrives_over_a_dialog_belongs_to_the_ui() {
        // The input that showed it: the dialog is open, the pointer was over
        // the terrain, then arrives over the dialog and clicks within the
        // same frame.
        let ctx = egui::Context::default();
        let far = egui::pos2(20.0, 20.0);
        pass(&ctx, vec![egui::Event::PointerMoved(far)]);
        pass(&ctx, vec![egui::Event::PointerMoved(far)]);
        let viewport = ViewportRect {
            x: 0.0,
            y: 0.0,
            width: 800.0,
            height: 600.0,
        };
        let centre = [400.0, 300.0];
        // egui's own answer is still the stale one from the last pass...
        assert!(!ctx.egui_wants_pointer_input());
        // ...while the layout of that pass already puts the dialog there.
        assert!(ui_claims_pointer(&ctx, Some(centre), viewport, false));
        assert!(!ui_claims_pointer(
            &ctx,
            Some([20.0, 20.0]),
            viewport,
            false
        ));
        // With a File dialog or prompt open, no click reaches the tools.
        assert!(ui_claims_pointer(&ctx, Some([20.0, 20.0]), viewport, true));
        // Outside the 3D viewport (the side panel, the menu bar) is UI too.
        let right_of_panel = ViewportRect {
            x: 250.0,
            y: 24.0,
            width: 550.0,
            height: 576.0,
        };
        assert!(ui_claims_pointer(
            &ctx,
            Some([100.0, 300.0]),
            right_of_panel,
            false
        ));
        assert!(ui_claims_pointer(
            &ctx,
            Some([600.0, 10.0]),
            right_of_panel,
            false
        ));
        assert!(!ui_claims_pointer(
            &ctx,
            Some([700.0, 580.0]),
            right_of_panel,
            false
        ));
        assert!(!ui_claims_pointer(&ctx, None, right_of_panel, false));
    }
}
