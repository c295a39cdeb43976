//! Keys that change the panel's settings outside egui: tool shortcuts (see
//! [`crate::editor::tools::tools_panel::shortcut`]), `I` (ignore water), `G`
//! / `H` (sea level fill / evaporate), `[` / `]` (brush radius), Delete on
//! a path point, and `F` (focus, which the window carries out).

use glam::{DVec2, DVec3};
use winit::keyboard::{KeyCode, ModifiersState};

use crate::editor::panel::side_panel::{EditorPanel, SeaAction};
use crate::editor::tools::tools_panel::{Shortcut, ToolRequest, shortcut};
use crate::terrain::editing::brush::BRUSH_RADIUS_RANGE_CELLS;

/// Each `[` divides and each `]` multiplies the brush radius by this.
pub const RADIUS_KEY_FACTOR: f32 = 1.2;

/// Where the cursor points when a key comes, for keys that act there.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KeyTarget {
    /// The surface point under the cursor, world studs.
    pub hit_world: Option<DVec3>,
    /// How close to a path control point (studs) the cursor picks it.
    pub pick_studs: f64,
}

/// What a key asks of the window beyond the panel's settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyOutcome {
    /// `F`: focus the camera on the cursor.
    pub focus: bool,
}

impl EditorPanel {
    /// Applies the key `code` (pressed, with `modifiers`) to the panel's
    /// settings.
    pub fn apply_key(
        &mut self,
        code: KeyCode,
        modifiers: ModifiersState,
        target: KeyTarget,
    ) -> KeyOutcome {
        let mut outcome = KeyOutcome::default();
        if let Some(s) = shortcut(code, modifiers) {
            match self.tools.apply_shortcut(s) {
                Some(Shortcut::Tool(mode)) => self.tool = mode,
                Some(Shortcut::Focus) => outcome.focus = true,
                Some(Shortcut::Request(ToolRequest::Clear)) => {
                    let at = target.hit_world.map(|p| DVec2::new(p.x, p.z));
                    let pick = if at.is_some() { target.pick_studs } else { 0.0 };
                    self.tools.path.draft.delete_near(at, pick);
                }
                _ => {}
            }
            return outcome;
        }
        let (lo, hi) = (
            *BRUSH_RADIUS_RANGE_CELLS.start(),
            *BRUSH_RADIUS_RANGE_CELLS.end(),
        );
        match code {
            KeyCode::KeyI => self.ignore_water = !self.ignore_water,
            KeyCode::KeyG => self.sea_action = Some(SeaAction::Fill),
            KeyCode::KeyH => self.sea_action = Some(SeaAction::Evaporate),
            KeyCode::BracketLeft => {
                self.radius_cells = (self.radius_cells / RADIUS_KEY_FACTOR).clamp(lo, hi);
            }
            KeyCode::BracketRight => {
                self.radius_cells = (self.radius_cells * RADIUS_KEY_FACTOR).clamp(lo, hi);
            }
            _ => {}
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::editing::brush::BrushMode;

    #[test]
    fn keys_change_the_settings_they_name() {
        let mut panel = EditorPanel::default();
        let none = ModifiersState::empty();
        let at = KeyTarget::default();
        panel.apply_key(KeyCode::Digit2, none, at);
        assert_eq!(panel.tool, BrushMode::Subtract);
        assert!(!panel.ignore_water);
        panel.apply_key(KeyCode::KeyI, none, at);
        assert!(panel.ignore_water);
        panel.apply_key(KeyCode::KeyG, none, at);
        assert_eq!(panel.sea_action, Some(SeaAction::Fill));
        panel.apply_key(KeyCode::KeyH, none, at);
        assert_eq!(panel.sea_action, Some(SeaAction::Evaporate));
        let r = panel.radius_cells;
        panel.apply_key(KeyCode::BracketRight, none, at);
        assert_eq!(panel.radius_cells, r * RADIUS_KEY_FACTOR);
        panel.apply_key(KeyCode::BracketLeft, none, at);
        panel.apply_key(KeyCode::BracketLeft, none, at);
        assert_eq!(
            panel.radius_cells,
            r * RADIUS_KEY_FACTOR / RADIUS_KEY_FACTOR / RADIUS_KEY_FACTOR
        );
        assert_eq!(
            panel.apply_key(KeyCode::KeyF, none, at),
            KeyOutcome { focus: true }
        );
    }

    #[test]
    fn the_radius_keys_stop_at_the_brush_limits() {
        let mut panel = EditorPanel::default();
        for _ in 0..100 {
            panel.apply_key(
                KeyCode::BracketRight,
                ModifiersState::empty(),
                KeyTarget::default(),
            );
        }
        assert_eq!(panel.radius_cells, *BRUSH_RADIUS_RANGE_CELLS.end());
        for _ in 0..100 {
            panel.apply_key(
                KeyCode::BracketLeft,
                ModifiersState::empty(),
                KeyTarget::default(),
            );
        }
        assert_eq!(panel.radius_cells, *BRUSH_RADIUS_RANGE_CELLS.start());
    }
}
