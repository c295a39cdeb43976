//! The window's pointer and keyboard state between events: where the
//! cursor is, which modifiers are held, whether the left button is held in
//! the 3D view or was pressed since the last frame (a click shorter than a
//! frame still applies the tool once), and the one-frame requests
//! (Alt+click to sample a material, `F` to focus). Plus the cursor's ray
//! through the 3D viewport.

use glam::DVec3;
use winit::keyboard::ModifiersState;

use crate::camera::Camera;
use crate::render::ViewportRect;

/// The pointer and keys as the window last saw them.
#[derive(Clone, Copy, Debug, Default)]
pub struct PointerState {
    /// The cursor in physical pixels of the window, when it is inside it.
    pub cursor_px: Option<[f32; 2]>,
    /// Keyboard modifiers held now.
    pub modifiers: ModifiersState,
    /// The left button is held and its press landed in the 3D view.
    pub sculpting: bool,
    /// A left press in the 3D view not yet seen by a frame.
    pub press_pending: bool,
    /// An Alt+click asked to sample the material under the cursor.
    pub sample_requested: bool,
    /// `F` asked to focus the camera on the cursor.
    pub focus_requested: bool,
}

impl PointerState {
    /// A left button press (`pressed`) or release; `over_ui` when the UI
    /// takes the press. Alt+press samples a material instead of editing.
    pub fn left_button(&mut self, pressed: bool, over_ui: bool) {
        if pressed && !over_ui && self.modifiers.alt_key() {
            self.sample_requested = true;
            return;
        }
        self.sculpting = pressed && !over_ui;
        self.press_pending |= self.sculpting;
    }

    /// True when the tools act this frame: the button is held, or a press
    /// came since the last frame (consumed here).
    pub fn take_held(&mut self) -> bool {
        self.sculpting || std::mem::take(&mut self.press_pending)
    }

    /// Drops a press (and a sample request) the UI took after all, and
    /// stops a stroke: the button counts as up until the next press.
    pub fn drop_press(&mut self) {
        self.press_pending = false;
        self.sample_requested = false;
        self.sculpting = false;
    }

    /// The button is up for the tools (the window lost focus, the world was
    /// replaced, or the tools ended the press).
    pub fn end_press(&mut self) {
        self.sculpting = false;
        self.press_pending = false;
    }
}

/// The cursor's ray (origin, unit direction) through `viewport` of
/// `camera`, when `cursor_px` is over the viewport.
pub fn cursor_ray(
    camera: &Camera,
    viewport: ViewportRect,
    cursor_px: Option<[f32; 2]>,
) -> Option<(DVec3, DVec3)> {
    let [cx, cy] = cursor_px?;
    let vp = viewport;
    if cx < vp.x || cy < vp.y || cx >= vp.x + vp.width || cy >= vp.y + vp.height {
        return None;
    }
    let (origin, dir) = camera.ray_from_screen(cx - vp.x, cy - vp.y, vp.width, vp.height);
    Some((origin, dir.as_dvec3().normalize_or_zero()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_click_within_one_frame_applies_once() {
        let mut p = PointerState::default();
        p.left_button(true, false);
        p.left_button(false, false);
        assert!(p.take_held(), "the press is seen by the next frame");
        assert!(!p.take_held(), "and only by that one");
    }

    #[test]
    fn a_press_over_the_ui_does_not_reach_the_tools() {
        let mut p = PointerState::default();
        p.left_button(true, true);
        assert!(!p.take_held());
        p.left_button(true, false);
        p.drop_press();
        assert!(!p.take_held());
    }

    #[test]
    fn alt_click_samples_instead_of_editing() {
        let mut p = PointerState {
            modifiers: ModifiersState::ALT,
            ..PointerState::default()
        };
        p.left_button(true, false);
        assert!(p.sample_requested);
        assert!(!p.take_held());
    }

    #[test]
    fn the_ray_leaves_the_camera_through_the_viewport_only() {
        let camera = Camera::new(DVec3::new(0.0, 10.0, 0.0), 0.0, 0.0);
        let vp = ViewportRect {
            x: 100.0,
            y: 0.0,
            width: 200.0,
            height: 100.0,
        };
        assert_eq!(cursor_ray(&camera, vp, Some([50.0, 50.0])), None);
        assert_eq!(cursor_ray(&camera, vp, None), None);
        let (origin, dir) = cursor_ray(&camera, vp, Some([200.0, 50.0])).unwrap();
        assert_eq!(origin, camera.pos_world);
        // The viewport's centre looks along the camera's forward (−Z at yaw 0).
        assert!((dir - DVec3::NEG_Z).length() < 1e-3, "{dir}");
    }
}
