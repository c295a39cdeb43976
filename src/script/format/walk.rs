//! The optional `"walk"` of a script: a capsule character walked across
//! the terrain after the strokes, and the checks on its numbers.

use serde::Deserialize;

use super::error::SettingError;
use super::limits::MAX_SCRIPT_FRAME;

/// A scripted walk: the walker starts on the surface at `start_xz` and
/// runs each step for its number of fixed 1/60 s physics frames.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WalkScript {
    /// Start `(x, z)` in world studs; the walker is dropped onto the surface.
    pub start_xz: [f64; 2],
    /// Steps, run in order.
    pub steps: Vec<WalkStep>,
}

/// One walk step: a constant input for `frames` physics frames.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WalkStep {
    /// Physics frames (1/60 s each), 1..=1 000 000.
    pub frames: u32,
    /// Horizontal direction `(x, z)`, length at most 1 (full speed).
    pub move_xz: [f64; 2],
    /// Jump whenever standing on walkable ground.
    #[serde(default)]
    pub jump: bool,
}

/// Checks a walk's numbers: finite start, 1..=1 000 000 frames per step,
/// finite directions no longer than 1.
pub fn validate_walk(walk: &WalkScript) -> Result<(), SettingError> {
    if !walk.start_xz.iter().all(|v| v.is_finite()) {
        return Err(SettingError::WalkStart);
    }
    for (i, step) in walk.steps.iter().enumerate() {
        if !(1..=MAX_SCRIPT_FRAME).contains(&step.frames) {
            return Err(SettingError::WalkStepFrames(i));
        }
        let [x, z] = step.move_xz;
        if !(x.is_finite() && z.is_finite()) || x * x + z * z > 1.0 + 1e-9 {
            return Err(SettingError::WalkStepDirection(i));
        }
    }
    let total: u64 = walk.steps.iter().map(|s| u64::from(s.frames)).sum();
    if total > u64::from(MAX_SCRIPT_FRAME) {
        return Err(SettingError::WalkTooLong(total));
    }
    Ok(())
}
