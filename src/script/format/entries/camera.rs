//! Camera keyframes: `{"frame": N, "camera": [x, y, z, yaw_deg,
//! pitch_deg]}` entries, which move the replay's camera.

use serde::Deserialize;

use crate::script::format::error::EntryError;
use crate::script::format::script::CameraKey;

/// Farthest a keyframe's position may be from the origin on any axis,
/// world studs.
const MAX_CAMERA_COORD_STUDS: f64 = 4.0e9;

/// A camera keyframe's one field besides `frame` (`null` is no camera).
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CameraEntry {
    /// `[x, y, z, yaw_deg, pitch_deg]`, world studs and degrees.
    camera: Option<[f64; 5]>,
}

impl CameraEntry {
    /// The keyframe on `frame`; `None` without a camera.
    ///
    /// # Errors
    /// [`EntryError::BadCamera`] for a non-finite number, a pitch outside
    /// -89..=89 or a coordinate beyond ±4 × 10⁹ studs.
    pub fn parse(self, frame: u32) -> Result<Option<CameraKey>, EntryError> {
        let Some(camera) = self.camera else {
            return Ok(None);
        };
        let [x, y, z, yaw_deg, pitch_deg] = camera;
        let in_range = camera.iter().all(|v| v.is_finite())
            && [x, y, z].iter().all(|v| v.abs() <= MAX_CAMERA_COORD_STUDS)
            && (-89.0..=89.0).contains(&pitch_deg);
        if !in_range {
            return Err(EntryError::BadCamera(camera));
        }
        Ok(Some(CameraKey {
            frame,
            pos_world: [x, y, z],
            yaw_deg,
            pitch_deg,
        }))
    }
}
