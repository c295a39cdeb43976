//! Scripted editing sessions: brush strokes with the frame on which each is
//! applied, replayed through the same edit and meshing pipeline as the window
//! (`strata --headless --script FILE`). Plain data, parsed with serde.
//!
//! ```json
//! {
//!   "frame_rate_hz": 60,
//!   "strokes": [
//!     { "frame": 0, "tool": "add", "centre": [512.0, 180.0, 640.0],
//!       "radius_cells": 8, "strength": 0.5, "material": "grass" },
//!     { "frame": 1, "tool": "subtract", "centre_xz": [530.0, 650.0],
//!       "radius_cells": 6, "strength": 0.8 }
//!   ]
//! }
//! ```
//!
//! An optional `"walk"` (see [`WalkScript`]) walks a capsule character
//! across the terrain after the strokes:
//! `"walk": {"start_xz": [8.0, 2048.0], "steps": [{"frames": 600, "move_xz": [1, 0]}]}`.
//!
//! `centre` is in world studs; `centre_xz` instead drops the brush onto the
//! surface below `(x, z)` as it was when the replay began. `tool` is `add`,
//! `subtract`, `add_water` or `remove_water`; `material` is a material name
//! (Add only, default Grass); `strength` defaults to 0.5; `ignore_water`
//! (default false) makes sculpt tools leave water cells untouched.

use std::path::Path;

use glam::DVec3;
use serde::Deserialize;

use crate::terrain::cell::Material;
use crate::terrain::edit::{Brush, BrushMode};

/// Default frame rate of a replay, frames per second.
pub const DEFAULT_FRAME_RATE_HZ: f64 = 60.0;

/// Largest frame number a script may use (about 4.6 hours at 60 Hz).
pub const MAX_SCRIPT_FRAME: u32 = 1_000_000;

/// Where a stroke is centred.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StrokeCentre {
    /// A point in world studs.
    World(DVec3),
    /// Dropped onto the surface below `(x, z)` (studs) as it was when the replay began.
    OnSurface {
        /// World x in studs.
        x: f64,
        /// World z in studs.
        z: f64,
    },
}

/// One brush application on one frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stroke {
    /// Frame (from 0) on which it is applied.
    pub frame: u32,
    /// Where.
    pub centre: StrokeCentre,
    /// The brush (validated when the script is loaded).
    pub brush: Brush,
}

/// A parsed, validated script.
#[derive(Clone, Debug, PartialEq)]
pub struct Script {
    /// Replay frame rate in frames per second.
    pub frame_rate_hz: f64,
    /// Strokes sorted by frame (stable: same-frame strokes keep file order).
    pub strokes: Vec<Stroke>,
    /// A scripted walk run after the strokes, if any.
    pub walk: Option<WalkScript>,
}

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

/// Why a script could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The file could not be read.
    #[error("cannot read script {path}: {message}")]
    Read {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// Not valid JSON for the format (serde names the line and column).
    #[error("script {path} is not valid: {message}")]
    Parse {
        /// The file.
        path: String,
        /// What went wrong, with its position.
        message: String,
    },
    /// A stroke with an invalid value.
    #[error("script {path}, stroke {index}: {message}")]
    Stroke {
        /// The file.
        path: String,
        /// Index of the stroke in the file (from 0).
        index: usize,
        /// What is wrong.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptFile {
    #[serde(default)]
    frame_rate_hz: Option<f64>,
    strokes: Vec<StrokeFile>,
    #[serde(default)]
    walk: Option<WalkScript>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StrokeFile {
    frame: u32,
    tool: String,
    #[serde(default)]
    centre: Option<[f64; 3]>,
    #[serde(default)]
    centre_xz: Option<[f64; 2]>,
    radius_cells: f32,
    #[serde(default)]
    strength: Option<f32>,
    #[serde(default)]
    material: Option<String>,
    #[serde(default)]
    ignore_water: bool,
}

/// The tool named `name` (case-insensitive).
pub fn parse_tool(name: &str) -> Option<BrushMode> {
    match name.to_ascii_lowercase().as_str() {
        "add" => Some(BrushMode::Add),
        "subtract" => Some(BrushMode::Subtract),
        "add_water" => Some(BrushMode::AddWater),
        "remove_water" => Some(BrushMode::RemoveWater),
        _ => None,
    }
}

/// Checks a walk's numbers: finite start, 1..=1 000 000 frames per step,
/// finite directions no longer than 1.
fn validate_walk(walk: &WalkScript) -> Result<(), String> {
    if !walk.start_xz.iter().all(|v| v.is_finite()) {
        return Err("walk start_xz must be finite".into());
    }
    for (i, step) in walk.steps.iter().enumerate() {
        if !(1..=MAX_SCRIPT_FRAME).contains(&step.frames) {
            return Err(format!(
                "walk step {i}: frames must be 1..={MAX_SCRIPT_FRAME}"
            ));
        }
        let [x, z] = step.move_xz;
        if !(x.is_finite() && z.is_finite()) || x * x + z * z > 1.0 + 1e-9 {
            return Err(format!(
                "walk step {i}: move_xz must be finite with length <= 1"
            ));
        }
    }
    Ok(())
}

/// The material named `name` (case-insensitive), e.g. `"grass"`.
pub fn parse_material(name: &str) -> Option<Material> {
    Material::ALL
        .into_iter()
        .find(|m| m.name().eq_ignore_ascii_case(name))
}

impl Script {
    /// Reads and validates a script file.
    ///
    /// # Errors
    /// [`ScriptError`] naming the file (and the stroke) for unreadable files,
    /// invalid JSON, unknown tools or materials, a missing or doubled centre,
    /// non-finite numbers, or brush values out of range.
    pub fn load(path: &Path) -> Result<Script, ScriptError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScriptError::Read {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Script::parse(&text, &path.display().to_string())
    }

    /// Parses and validates script text; `name` labels errors.
    ///
    /// # Errors
    /// As [`Script::load`].
    pub fn parse(text: &str, name: &str) -> Result<Script, ScriptError> {
        let file: ScriptFile = serde_json::from_str(text).map_err(|e| ScriptError::Parse {
            path: name.to_string(),
            message: e.to_string(),
        })?;
        let frame_rate_hz = file.frame_rate_hz.unwrap_or(DEFAULT_FRAME_RATE_HZ);
        if !(frame_rate_hz.is_finite() && (1.0..=1000.0).contains(&frame_rate_hz)) {
            return Err(ScriptError::Parse {
                path: name.to_string(),
                message: format!("frame_rate_hz {frame_rate_hz} is outside 1..=1000"),
            });
        }
        let mut strokes = Vec::with_capacity(file.strokes.len());
        for (index, s) in file.strokes.into_iter().enumerate() {
            let fail = |message: String| ScriptError::Stroke {
                path: name.to_string(),
                index,
                message,
            };
            if s.frame > MAX_SCRIPT_FRAME {
                return Err(fail(format!(
                    "frame {} is above {MAX_SCRIPT_FRAME}",
                    s.frame
                )));
            }
            let mode = parse_tool(&s.tool).ok_or_else(|| {
                fail(format!(
                    "unknown tool {:?} (use add, subtract, add_water or remove_water)",
                    s.tool
                ))
            })?;
            let material = match &s.material {
                None => Material::GRASS,
                Some(m) => parse_material(m)
                    .filter(|m| m.is_solid())
                    .ok_or_else(|| fail(format!("{m:?} is not a solid material name")))?,
            };
            let centre = match (s.centre, s.centre_xz) {
                (Some(c), None) if c.iter().all(|v| v.is_finite()) => {
                    StrokeCentre::World(DVec3::from_array(c))
                }
                (None, Some([x, z])) if x.is_finite() && z.is_finite() => {
                    StrokeCentre::OnSurface { x, z }
                }
                (Some(_), Some(_)) => {
                    return Err(fail("give either centre or centre_xz, not both".into()));
                }
                (None, None) => return Err(fail("missing centre (or centre_xz)".into())),
                _ => return Err(fail("centre must be finite numbers".into())),
            };
            let brush = Brush {
                mode,
                radius_cells: s.radius_cells,
                strength: s.strength.unwrap_or(0.5),
                material,
                ignore_water: s.ignore_water,
            };
            brush.validate().map_err(|e| fail(e.to_string()))?;
            strokes.push(Stroke {
                frame: s.frame,
                centre,
                brush,
            });
        }
        strokes.sort_by_key(|s| s.frame);
        if let Some(walk) = &file.walk {
            validate_walk(walk).map_err(|message| ScriptError::Parse {
                path: name.to_string(),
                message,
            })?;
        }
        Ok(Script {
            frame_rate_hz,
            strokes,
            walk: file.walk,
        })
    }

    /// The last frame with a stroke (0 for an empty script).
    pub fn last_frame(&self) -> u32 {
        self.strokes.last().map_or(0, |s| s.frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_centre_forms_and_sorts_by_frame() {
        let s = Script::parse(
            r#"{"strokes": [
                {"frame": 3, "tool": "Subtract", "centre_xz": [1, 2], "radius_cells": 4},
                {"frame": 1, "tool": "add", "centre": [1, 2, 3], "radius_cells": 6,
                 "strength": 0.25, "material": "sand"}
            ]}"#,
            "t",
        )
        .unwrap();
        assert_eq!(s.frame_rate_hz, 60.0);
        assert_eq!(s.strokes[0].frame, 1);
        assert_eq!(s.strokes[0].brush.material, Material::SAND);
        assert_eq!(
            s.strokes[0].centre,
            StrokeCentre::World(DVec3::new(1.0, 2.0, 3.0))
        );
        assert_eq!(
            s.strokes[1].centre,
            StrokeCentre::OnSurface { x: 1.0, z: 2.0 }
        );
        assert_eq!(s.strokes[1].brush.mode, BrushMode::Subtract);
        assert_eq!(s.last_frame(), 3);
    }

    #[test]
    fn bad_strokes_name_their_index_and_problem() {
        let err = |text: &str| Script::parse(text, "bad.json").unwrap_err().to_string();
        assert!(err(r#"{"strokes": [{"frame": 0, "tool": "smear", "centre": [0,0,0], "radius_cells": 4}]}"#)
            .contains("stroke 0: unknown tool"));
        assert!(
            err(r#"{"strokes": [{"frame": 0, "tool": "add", "radius_cells": 4}]}"#)
                .contains("missing centre")
        );
        assert!(err(r#"{"strokes": [{"frame": 0, "tool": "add", "centre": [0,0,0], "radius_cells": 400}]}"#)
            .contains("radius"));
        assert!(err(r#"{"strokes": [{"frame": 0, "tool": "add", "centre": [0,0,0], "radius_cells": 4, "material": "water"}]}"#)
            .contains("not a solid material"));
        assert!(err(r#"{"strokes": [{"frame": 0, "tool": "add", "centre": [0,0,0], "radius_cells": 4, "colour": 1}]}"#)
            .contains("unknown field"));
        assert!(err("{not json").contains("bad.json"));
        assert!(err(r#"{"frame_rate_hz": 0, "strokes": []}"#).contains("frame_rate_hz"));
    }

    #[test]
    fn walk_steps_parse_and_bad_ones_are_rejected() {
        let s = Script::parse(
            r#"{"strokes": [], "walk": {"start_xz": [8, 16],
                "steps": [{"frames": 60, "move_xz": [1, 0]}, {"frames": 2, "move_xz": [0, -1], "jump": true}]}}"#,
            "w",
        )
        .unwrap();
        let walk = s.walk.unwrap();
        assert_eq!(walk.start_xz, [8.0, 16.0]);
        assert_eq!(
            walk.steps[1],
            WalkStep {
                frames: 2,
                move_xz: [0.0, -1.0],
                jump: true
            }
        );
        let err = |text: &str| Script::parse(text, "w.json").unwrap_err().to_string();
        assert!(
            err(r#"{"strokes": [], "walk": {"start_xz": [0, 0], "steps": [{"frames": 0, "move_xz": [1, 0]}]}}"#)
                .contains("walk step 0: frames")
        );
        assert!(
            err(r#"{"strokes": [], "walk": {"start_xz": [0, 0], "steps": [{"frames": 1, "move_xz": [1, 1]}]}}"#)
                .contains("length <= 1")
        );
        assert!(
            err(r#"{"strokes": [], "walk": {"start_xz": [0, 0], "steps": [{"frames": 1, "move_xz": [1, 0], "run": true}]}}"#)
                .contains("unknown field")
        );
    }
}
