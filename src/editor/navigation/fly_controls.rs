//! Fly-camera controls: hold the right mouse button to look, WASD to move,
//! Q/E down/up, Shift to go faster, the wheel to change speed.

use glam::DVec3;
use winit::keyboard::KeyCode;

use crate::camera::{Camera, MAX_PITCH_DEG};

/// Slowest and fastest fly speed, studs per second.
pub const FLY_SPEED_RANGE_STUDS_PER_S: (f32, f32) = (4.0, 8000.0);
/// Look sensitivity in degrees per pixel of mouse motion.
pub const LOOK_DEG_PER_PIXEL: f32 = 0.15;
/// Altitude (studs above y = 0) up to which the fly speed is not scaled;
/// above it the speed grows in proportion, so climbing high enough to see the
/// whole world and crossing it from there take seconds, not minutes.
pub const SPEED_SCALE_ALTITUDE_STUDS: f64 = 256.0;
/// Largest altitude speed factor.
pub const MAX_ALTITUDE_SPEED_FACTOR: f64 = 64.0;

/// Fly speed factor for a camera at `altitude_studs` above y = 0.
pub fn altitude_speed_factor(altitude_studs: f64) -> f64 {
    if !altitude_studs.is_finite() {
        return 1.0;
    }
    (altitude_studs / SPEED_SCALE_ALTITUDE_STUDS).clamp(1.0, MAX_ALTITUDE_SPEED_FACTOR)
}

/// Keyboard and mouse state of the fly camera.
#[derive(Clone, Debug)]
pub struct FlyControls {
    forward: bool,
    back: bool,
    left: bool,
    right: bool,
    up: bool,
    down: bool,
    fast: bool,
    /// True while the right mouse button is held (mouse motion turns the camera).
    pub looking: bool,
    /// Base fly speed in studs per second (the wheel scales it).
    pub speed_studs_per_s: f32,
}

impl Default for FlyControls {
    fn default() -> Self {
        FlyControls {
            forward: false,
            back: false,
            left: false,
            right: false,
            up: false,
            down: false,
            fast: false,
            looking: false,
            speed_studs_per_s: 160.0,
        }
    }
}

impl FlyControls {
    /// Records a movement key; returns true when the key is a fly key.
    pub fn set_key(&mut self, key: KeyCode, pressed: bool) -> bool {
        let slot = match key {
            KeyCode::KeyW => &mut self.forward,
            KeyCode::KeyS => &mut self.back,
            KeyCode::KeyA => &mut self.left,
            KeyCode::KeyD => &mut self.right,
            KeyCode::KeyE | KeyCode::Space => &mut self.up,
            KeyCode::KeyQ => &mut self.down,
            KeyCode::ShiftLeft | KeyCode::ShiftRight => &mut self.fast,
            _ => return false,
        };
        *slot = pressed;
        true
    }

    /// Releases every key (e.g. when the window loses focus).
    pub fn release_all(&mut self) {
        let speed = self.speed_studs_per_s;
        *self = FlyControls {
            speed_studs_per_s: speed,
            ..FlyControls::default()
        };
    }

    /// Turns the camera by a mouse motion in pixels while looking.
    pub fn on_mouse_delta(&self, camera: &mut Camera, dx_px: f64, dy_px: f64) {
        if !self.looking {
            return;
        }
        camera.yaw_deg = (camera.yaw_deg + dx_px as f32 * LOOK_DEG_PER_PIXEL).rem_euclid(360.0);
        camera.pitch_deg = (camera.pitch_deg - dy_px as f32 * LOOK_DEG_PER_PIXEL)
            .clamp(-MAX_PITCH_DEG, MAX_PITCH_DEG);
    }

    /// Scales the fly speed by 1.25 per wheel line (negative slows down).
    pub fn on_wheel(&mut self, lines: f32) {
        let (lo, hi) = FLY_SPEED_RANGE_STUDS_PER_S;
        if lines.is_finite() {
            self.speed_studs_per_s = (self.speed_studs_per_s * 1.25f32.powf(lines)).clamp(lo, hi);
        }
    }

    /// True while any movement key is held.
    pub fn is_moving(&self) -> bool {
        self.forward || self.back || self.left || self.right || self.up || self.down
    }

    /// Moves the camera for a frame of `dt_secs` seconds.
    pub fn update(&self, camera: &mut Camera, dt_secs: f32) {
        let f = camera.forward_world();
        let r = camera.right().as_dvec3();
        let mut d = DVec3::ZERO;
        let axis = |pos: bool, neg: bool| (pos as i32 - neg as i32) as f64;
        d += f * axis(self.forward, self.back);
        d += r * axis(self.right, self.left);
        d += DVec3::Y * axis(self.up, self.down);
        if d == DVec3::ZERO || !dt_secs.is_finite() {
            return;
        }
        let boost = if self.fast { 4.0 } else { 1.0 };
        let altitude = altitude_speed_factor(camera.pos_world.y);
        camera.pos_world +=
            d.normalize() * (self.speed_studs_per_s * boost * dt_secs) as f64 * altitude;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forward_moves_along_view_at_speed() {
        let mut cam = Camera::new(DVec3::ZERO, 90.0, 0.0);
        let mut c = FlyControls::default();
        c.set_key(KeyCode::KeyW, true);
        c.update(&mut cam, 0.5);
        // Yaw 90 looks along +X.
        assert!((cam.pos_world - DVec3::new(80.0, 0.0, 0.0)).length() < 1e-3);
        c.on_wheel(f32::NAN);
        assert_eq!(c.speed_studs_per_s, 160.0);
    }

    #[test]
    fn speed_scales_with_altitude() {
        assert_eq!(altitude_speed_factor(100.0), 1.0);
        assert_eq!(altitude_speed_factor(2048.0), 8.0);
        assert_eq!(altitude_speed_factor(1.0e9), MAX_ALTITUDE_SPEED_FACTOR);
        assert_eq!(altitude_speed_factor(f64::NAN), 1.0);
        let mut cam = Camera::new(DVec3::new(0.0, 2048.0, 0.0), 90.0, 0.0);
        let mut c = FlyControls::default();
        c.set_key(KeyCode::KeyW, true);
        c.update(&mut cam, 0.5);
        assert!((cam.pos_world.x - 80.0 * 8.0).abs() < 1e-3);
    }

    #[test]
    fn looking_clamps_pitch() {
        let mut cam = Camera::default();
        let mut c = FlyControls::default();
        c.on_mouse_delta(&mut cam, 100.0, 0.0);
        assert_eq!(
            cam.yaw_deg, 0.0,
            "no turning unless the look button is held"
        );
        c.looking = true;
        c.on_mouse_delta(&mut cam, 0.0, -10_000.0);
        assert_eq!(cam.pitch_deg, MAX_PITCH_DEG);
    }
}
