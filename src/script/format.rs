//! Scripted editing sessions: tool operations with the frame on which each
//! is applied, replayed through the same edit, history and meshing pipeline
//! as the window (`strata --headless --script FILE`). Plain data, parsed
//! with serde; every value is validated when the file is loaded.
//!
//! ```json
//! {
//!   "frame_rate_hz": 60,
//!   "history_budget_mib": 512,
//!   "strokes": [
//!     { "frame": 0, "tool": "add", "centre": [512.0, 180.0, 640.0],
//!       "radius_cells": 8, "strength": 0.5, "material": "grass" },
//!     { "frame": 1, "tool": "paint", "path_xz": [[530.0, 650.0], [600.0, 660.0]],
//!       "spacing": 0.25, "radius_cells": 6, "shape": "cylinder",
//!       "falloff": "smooth", "material": "sand" },
//!     { "frame": 2, "tool": "undo" },
//!     { "frame": 3, "tool": "fill", "region_min": [10, 40, 10],
//!       "region_max": [20, 50, 20], "material": "rock" }
//!   ]
//! }
//! ```
//!
//! Every entry is one undo step (or an undo or redo).
//!
//! Brush tools (`add`, `subtract`, `add_water`, `remove_water`, `grow`,
//! `erode`, `smooth`, `flatten`, `paint`, `replace`, `hydraulic_erode`,
//! `thermal_erode`): one application at
//! `centre` (world studs) or `centre_xz` (dropped onto the surface below
//! `(x, z)` as it was when the replay began), or a continuous stroke along
//! `path` (world studs) or `path_xz`, applied every `spacing` × radius along
//! the path (default 0.25). `radius_cells` 1–64; `strength` in (0, 1]
//! (default 0.5); `material` names a solid (Add, Grow, Smooth, Flatten,
//! Paint; the Replace target; default Grass); `ignore_water` (default false);
//! `shape` `sphere`/`cube`/`cylinder` (default sphere); `falloff`
//! `none`/`linear`/`smooth` (default none); `plane_lock` (default false)
//! keeps a path on the plane of its first point. Flatten: `flatten_height`
//! (studs) or `flatten_normal` (with the first point as the plane's point;
//! default: the surface normal picked at the first `*_xz` point, else up),
//! and `flatten_limit` `both`/`raise_only`/`lower_only`. Replace:
//! `replace_from` (a solid material name). Hydraulic and thermal erode:
//! `iterations` 1–64 (default 8) per application.
//!
//! Region tools, on the box `region_min` (inclusive) to `region_max`
//! (exclusive) in cells: `fill` (`material`, which may be `water`, and
//! `occupancy` 1–255, default 255), `clear`, `copy`, `generate` (re-runs the
//! world generator there); `paste` writes the clipboard with its minimum
//! corner at `at` (cells) turned `quarter_turns` × 90° about +Y.
//! `ignore_water` applies to `fill` and `clear`.
//!
//! `stamp` presses a stamp file into the terrain as one undo step (issue
//! 18): `stamp` names a grayscale PNG or a `.stamp` cell file, relative to
//! the script's folder or else the shipped `assets/stamps/` (e.g.
//! `"crater.png"`); `centre_xz` (world studs) centres it; `radius_cells`
//! (0.5–512, required) is half its longer side; `rotation_deg` (default 0)
//! turns +X toward +Z; `height_scale_cells` (0–1024; default 32 for a
//! height stamp, a cell stamp's own height); `edge_falloff` (0–1, default
//! 0); `mode` `add`/`subtract`/`raise_to`/`lower_to`/`replace` (default
//! add); `base_cells` the base height (default: the surface under the
//! centre when the entry runs); `material` a solid (default: the column's
//! own, or the cell stamp's).
//!
//! `undo` and `redo` take no other field.
//!
//! `path` lays a road, river or routed road along a spline:
//! `mode` `road` (default) / `river` / `route`; `points` world `[x, z]`
//! studs (2 to 1000 control points, a river's from upstream; a route's
//! two endpoints); `width` (bed width, studs, 4–128), `max_grade_deg`
//! (0.5–45), `bank_slope_deg` (10–80), `depth` (river water depth, studs,
//! 1–64) and `material` (a solid: the road band, default gravel; a
//! river's banks, default sand). Defaults as [`PathSpec::road`] and
//! [`PathSpec::river`].
//!
//! A camera keyframe, `{"frame": N, "camera": [x, y, z, yaw_deg,
//! pitch_deg]}` (no `tool`, no other field), moves the replay's camera;
//! see [`Script::camera_at`] for the interpolation.
//!
//! Loading refuses, before anything runs: a file that is not a regular file
//! or is above [`MAX_SCRIPT_FILE_BYTES`], more than [`MAX_SCRIPT_WORK_CELLS`]
//! of estimated work, and a replay longer than [`MAX_REPLAY_SECONDS`].
//!
//! An optional `"walk"` (see [`WalkScript`]) walks a capsule character
//! across the terrain after the strokes:
//! `"walk": {"start_xz": [8.0, 2048.0], "steps": [{"frames": 600, "move_xz": [1, 0]}]}`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use glam::{DVec3, IVec3};
use serde::Deserialize;

use crate::terrain::command::edit_command::EditCommand;
use crate::terrain::command::history::DEFAULT_HISTORY_BUDGET_BYTES;
use crate::terrain::editing::brush::{
    Brush, BrushMode, BrushOptions, BrushShape, EditError, Falloff, FlattenLimit, FlattenPlane,
};
use crate::terrain::editing::stroke::{DEFAULT_SPACING_FRACTION, SPACING_FRACTION_RANGE};
use crate::terrain::path::carve::reach_cells;
use crate::terrain::path::route::ROUTE_MARGIN_CELLS;
use crate::terrain::path::spec::{PathError, PathMode, PathSpec};
use crate::terrain::path::spline::chord_length;
use crate::terrain::stamp::definition::{
    Stamp, StampBase, StampError, StampMode, StampPlacement, StampShape,
};
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::{CELL_SIZE_STUDS, CellBox};

/// Default frame rate of a replay, frames per second.
pub const DEFAULT_FRAME_RATE_HZ: f64 = 60.0;

/// Largest frame number a script may use (about 4.6 hours at 60 Hz).
pub const MAX_SCRIPT_FRAME: u32 = 1_000_000;

/// Most points a stroke path may have.
pub const MAX_PATH_POINTS: usize = 10_000;

/// Most cells of brush work all of a script's entries may cost, estimated
/// when the script is parsed (see [`Script::estimated_work_cells`]): a brush
/// application costs its bounding box, `(2 × radius)³` cells, and a stroke
/// applies the brush once plus once every `spacing × radius` along its path;
/// `generate` costs its box; `fill`, `clear` and `copy` cost their box times
/// [`COPY_CELL_COST`], a paste the largest copy, an undo or redo the largest
/// entry times [`COPY_CELL_COST`]. Measured: a Smooth stroke of radius 64 along
/// 2048 studs at spacing 0.05 (3.4 × 10⁸ cells) took 42 s in the test build
/// on a shared 2-core machine, about 10⁷ cells a second, so 3 × 10⁸ cells is
/// about half a minute of brush work (less in a release build); the shipped
/// 1000-stroke session estimates 8.4 × 10⁷.
pub const MAX_SCRIPT_WORK_CELLS: f64 = 3.0e8;

/// Cost of a cell that a fill, clear, copy, paste, undo or redo writes,
/// relative to a brush cell: a 512³ fill with its undo and redo took 1.8 s,
/// about 16 times faster per cell than a brush (and than `generate`).
pub const COPY_CELL_COST: f64 = 1.0 / 16.0;

/// Longest a replay may last in real time, seconds: its last frame divided
/// by `frame_rate_hz` (one hour).
pub const MAX_REPLAY_SECONDS: f64 = 3600.0;

/// Largest script file that is read, bytes (16 MiB).
pub const MAX_SCRIPT_FILE_BYTES: u64 = 16 << 20;

/// Where a brush application is centred.
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

/// A brush stroke: one or more applications along a path.
#[derive(Clone, Debug, PartialEq)]
pub struct BrushStroke {
    /// The brush (validated when the script is loaded).
    pub brush: Brush,
    /// Shape, falloff and tool settings (validated when the script is loaded).
    pub options: BrushOptions,
    /// The cursor path: one point for a single application.
    pub path: Vec<StrokeCentre>,
    /// Spacing between applications along the path, fraction of the radius.
    pub spacing_fraction: f32,
    /// Keep the path on the plane of its first point.
    pub plane_lock: bool,
    /// Flatten toward the plane of the surface picked at the first point
    /// (point and normal) when no plane was given.
    pub flatten_from_pick: bool,
}

/// What one script entry does.
#[derive(Clone, Debug, PartialEq)]
pub enum StrokeAction {
    /// A brush stroke.
    Brush(BrushStroke),
    /// A region or history command (the same commands the window's panel runs).
    Command(EditCommand),
}

impl StrokeAction {
    /// The brush tool, for brush strokes.
    pub fn brush(&self) -> Option<&BrushStroke> {
        match self {
            StrokeAction::Brush(b) => Some(b),
            _ => None,
        }
    }
}

/// One entry on one frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Stroke {
    /// Frame (from 0) on which it is applied.
    pub frame: u32,
    /// What it does.
    pub action: StrokeAction,
}

/// A parsed, validated script.
#[derive(Clone, Debug, PartialEq)]
pub struct Script {
    /// Replay frame rate in frames per second.
    pub frame_rate_hz: f64,
    /// Undo history budget in bytes.
    pub history_budget_bytes: usize,
    /// Entries sorted by frame (stable: same-frame entries keep file order).
    pub strokes: Vec<Stroke>,
    /// A scripted walk run after the strokes, if any.
    pub walk: Option<WalkScript>,
    /// Camera keyframes sorted by frame (`{"frame": N, "camera": [x, y, z,
    /// yaw_deg, pitch_deg]}` entries); empty when the camera stays put.
    pub camera_keys: Vec<CameraKey>,
}

/// A camera keyframe: where the replay's camera is on `frame`; between two
/// keyframes every number is interpolated linearly (yaw too, without
/// wrapping: write 350 → 370 to turn through north).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraKey {
    /// Frame (from 0).
    pub frame: u32,
    /// Camera position, world studs.
    pub pos_world: [f64; 3],
    /// Yaw, degrees.
    pub yaw_deg: f64,
    /// Pitch, degrees, within -89..=89.
    pub pitch_deg: f64,
}

impl Script {
    /// The camera at (fractional) `frame`: linear between the keyframes
    /// around it, the first keyframe before it and the last after it;
    /// `None` without keyframes. As `[x, y, z, yaw_deg, pitch_deg]`.
    pub fn camera_at(&self, frame: f64) -> Option<[f64; 5]> {
        let keys = &self.camera_keys;
        let first = keys.first()?;
        let as_array = |k: &CameraKey| {
            [
                k.pos_world[0],
                k.pos_world[1],
                k.pos_world[2],
                k.yaw_deg,
                k.pitch_deg,
            ]
        };
        if frame <= f64::from(first.frame) {
            return Some(as_array(first));
        }
        let i = keys.partition_point(|k| f64::from(k.frame) <= frame);
        let Some(b) = keys.get(i) else {
            return keys.last().map(as_array);
        };
        let a = &keys[i - 1];
        let t = (frame - f64::from(a.frame)) / f64::from(b.frame - a.frame);
        let (va, vb) = (as_array(a), as_array(b));
        Some(std::array::from_fn(|j| va[j] + (vb[j] - va[j]) * t))
    }

    /// The last frame with a stroke or a camera keyframe (0 when empty).
    pub fn last_timed_frame(&self) -> u32 {
        self.last_frame()
            .max(self.camera_keys.last().map_or(0, |k| k.frame))
    }
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
    #[error("cannot read script {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// What went wrong: an I/O error, not a regular file (a FIFO, a
        /// device such as `/dev/zero`), or above [`MAX_SCRIPT_FILE_BYTES`].
        source: crate::io::BoundedReadError,
    },
    /// Not valid JSON for the format (serde names the line and column).
    #[error("script {path} is not valid: {source}")]
    Parse {
        /// The file.
        path: String,
        /// What went wrong, with its position.
        source: serde_json::Error,
    },
    /// A script-wide setting or the walk is out of range.
    #[error("script {path} is not valid: {source}")]
    Setting {
        /// The file.
        path: String,
        /// What is wrong.
        source: SettingError,
    },
    /// A stroke with an invalid value.
    #[error("script {path}, stroke {index}: {source}")]
    Stroke {
        /// The file.
        path: String,
        /// Index of the stroke in the file (from 0).
        index: usize,
        /// What is wrong.
        source: EntryError,
    },
}

/// A script-wide value out of range.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SettingError {
    /// `frame_rate_hz` outside 1..=1000.
    #[error("frame_rate_hz {0} is outside 1..=1000")]
    FrameRate(f64),
    /// `history_budget_mib` outside 1..=65536.
    #[error("history_budget_mib {0} is outside 1..=65536")]
    HistoryBudget(f64),
    /// The walk's start is not finite.
    #[error("walk start_xz must be finite")]
    WalkStart,
    /// A walk step's frame count is out of range.
    #[error("walk step {0}: frames must be 1..={MAX_SCRIPT_FRAME}")]
    WalkStepFrames(usize),
    /// A walk step's direction is not finite or longer than 1.
    #[error("walk step {0}: move_xz must be finite with length <= 1")]
    WalkStepDirection(usize),
    /// The walk's steps add up to too many frames.
    #[error("walk steps add up to {0} frames; at most {MAX_SCRIPT_FRAME} in all")]
    WalkTooLong(u64),
    /// The entries would cost more than [`MAX_SCRIPT_WORK_CELLS`] cells of brush work.
    #[error(
        "the strokes would cost about {cells:.2e} cells of brush work in all (stroke \
         {heaviest_index}: about {heaviest_cells:.2e} cells in {heaviest_applications:.0} brush \
         applications); at most {MAX_SCRIPT_WORK_CELLS:.0e} cells per script"
    )]
    TooMuchWork {
        /// Estimated cells of brush work of all entries.
        cells: f64,
        /// Index in the file of the costliest entry.
        heaviest_index: usize,
        /// Its estimated cells.
        heaviest_cells: f64,
        /// Its brush applications (0 for a region or history command).
        heaviest_applications: f64,
    },
    /// The replay would last longer than [`MAX_REPLAY_SECONDS`].
    #[error(
        "the last stroke is on frame {last_frame} at {frame_rate_hz} Hz: the replay would take \
         {seconds:.0} s ({hours:.1} hours); at most {MAX_REPLAY_SECONDS:.0} s",
        hours = seconds / 3600.0
    )]
    ReplayTooLong {
        /// The last stroke's frame.
        last_frame: u32,
        /// The script's frame rate.
        frame_rate_hz: f64,
        /// `last_frame / frame_rate_hz`.
        seconds: f64,
    },
}

/// What is wrong with one script entry.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum EntryError {
    /// The tool name is not known.
    #[error(
        "unknown tool {0:?} (use add, subtract, add_water, remove_water, grow, erode, smooth, \
         flatten, paint, replace, fill, clear, copy, paste, generate, path, stamp, undo or redo)"
    )]
    UnknownTool(String),
    /// The frame number is too large.
    #[error("frame {0} is above {MAX_SCRIPT_FRAME}")]
    FrameTooLarge(u32),
    /// A camera keyframe with a non-finite number, a pitch outside -89..=89
    /// or a position beyond the lattice.
    #[error(
        "camera {0:?} needs finite [x, y, z, yaw_deg, pitch_deg] with pitch in -89..=89 and |x|, |y|, |z| ≤ 4e9 studs"
    )]
    BadCamera([f64; 5]),
    /// A camera keyframe that also names a tool or sets tool fields.
    #[error("a camera keyframe takes only frame and camera")]
    CameraWithTool,
    /// Two camera keyframes on one frame.
    #[error("two camera keyframes on frame {0}")]
    DuplicateCameraFrame(u32),
    /// A field the entry's tool does not use.
    #[error("{field} is not used by {tool}")]
    UnusedField {
        /// The field's name.
        field: &'static str,
        /// The tool's script name.
        tool: String,
    },
    /// `material` (or the Replace target) names no solid material.
    #[error("{0:?} is not a solid material name")]
    NotSolidMaterial(String),
    /// A fill `material` names neither a solid nor water.
    #[error("{0:?} is not a solid or water material name")]
    NotFillMaterial(String),
    /// A brush entry without a centre or path.
    #[error("missing centre (or centre_xz, path, path_xz)")]
    MissingCentre,
    /// More than one of the centre and path fields.
    #[error("give one of centre, centre_xz, path or path_xz")]
    SeveralCentres,
    /// A centre or path point with a non-finite coordinate.
    #[error("centre and path points must be finite numbers")]
    NonFinitePoint,
    /// A path with no point or too many.
    #[error("a path needs 1 to {MAX_PATH_POINTS} points, not {0}")]
    PathLength(usize),
    /// A brush entry without `radius_cells`.
    #[error("missing radius_cells")]
    MissingRadius,
    /// The brush or its options rejected a value.
    #[error(transparent)]
    Brush(#[from] EditError),
    /// An unknown `shape`.
    #[error("unknown shape {0:?} (use sphere, cube or cylinder)")]
    UnknownShape(String),
    /// An unknown `falloff`.
    #[error("unknown falloff {0:?} (use none, linear or smooth)")]
    UnknownFalloff(String),
    /// An unknown `flatten_limit`.
    #[error("unknown flatten_limit {0:?} (use both, raise_only or lower_only)")]
    UnknownFlattenLimit(String),
    /// `replace_from` names no solid material.
    #[error("replace_from {0:?} is not a solid material name")]
    NotSolidReplaceFrom(String),
    /// Replace without `replace_from`.
    #[error("replace needs replace_from")]
    MissingReplaceFrom,
    /// `replace_from` on another tool.
    #[error("replace_from is only used by replace")]
    ReplaceFromUnused,
    /// Flatten fields on another tool.
    #[error("flatten_height, flatten_normal and flatten_limit are only used by flatten")]
    FlattenFieldsUnused,
    /// Both a flatten height and a flatten normal.
    #[error("give flatten_height or flatten_normal, not both")]
    FlattenHeightAndNormal,
    /// `spacing` out of range.
    #[error("spacing {0} is outside 0.05..=4 (a fraction of the radius)")]
    Spacing(f32),
    /// `region_min`..`region_max` holds no cell.
    #[error("region {min:?}..{max:?} is empty")]
    EmptyRegion {
        /// `region_min`, cells.
        min: [i32; 3],
        /// `region_max`, cells.
        max: [i32; 3],
    },
    /// A region tool without both corners.
    #[error("{0} needs region_min and region_max")]
    MissingRegion(String),
    /// Fill with occupancy 0.
    #[error("occupancy must be 1..=255 (use clear to empty)")]
    ZeroOccupancy,
    /// Paste without `at`.
    #[error("paste needs at")]
    MissingAt,
    /// `quarter_turns` above 3.
    #[error("quarter_turns {0} is outside 0..=3")]
    QuarterTurns(u8),
    /// A path without `points`.
    #[error("path needs points")]
    MissingPoints,
    /// An unknown path `mode`.
    #[error("unknown path mode {0:?} (use road, river or route)")]
    UnknownPathMode(String),
    /// The path tool rejected a value.
    #[error(transparent)]
    Path(#[from] PathError),
    /// A stamp entry without `stamp` or `centre_xz`.
    #[error("stamp needs {0}")]
    MissingStampField(&'static str),
    /// The stamp file could not be read.
    #[error("cannot use stamp {path}: {message}")]
    StampFile {
        /// The file as resolved.
        path: String,
        /// Why.
        message: String,
    },
    /// An unknown stamp `mode`.
    #[error("unknown stamp mode {0:?} (use add, subtract, raise_to, lower_to or replace)")]
    UnknownStampMode(String),
    /// The stamp placement rejected a value.
    #[error(transparent)]
    StampPlacement(#[from] StampError),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptFile {
    #[serde(default)]
    frame_rate_hz: Option<f64>,
    #[serde(default)]
    history_budget_mib: Option<f64>,
    strokes: Vec<StrokeFile>,
    #[serde(default)]
    walk: Option<WalkScript>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct StrokeFile {
    frame: u32,
    #[serde(default)]
    tool: String,
    #[serde(default)]
    camera: Option<[f64; 5]>,
    #[serde(default)]
    centre: Option<[f64; 3]>,
    #[serde(default)]
    centre_xz: Option<[f64; 2]>,
    #[serde(default)]
    path: Option<Vec<[f64; 3]>>,
    #[serde(default)]
    path_xz: Option<Vec<[f64; 2]>>,
    #[serde(default)]
    spacing: Option<f32>,
    #[serde(default)]
    plane_lock: bool,
    #[serde(default)]
    radius_cells: Option<f32>,
    #[serde(default)]
    strength: Option<f32>,
    #[serde(default)]
    material: Option<String>,
    #[serde(default)]
    ignore_water: bool,
    #[serde(default)]
    shape: Option<String>,
    #[serde(default)]
    falloff: Option<String>,
    #[serde(default)]
    flatten_height: Option<f64>,
    #[serde(default)]
    flatten_normal: Option<[f64; 3]>,
    #[serde(default)]
    flatten_limit: Option<String>,
    #[serde(default)]
    replace_from: Option<String>,
    #[serde(default)]
    iterations: Option<u32>,
    #[serde(default)]
    region_min: Option<[i32; 3]>,
    #[serde(default)]
    region_max: Option<[i32; 3]>,
    #[serde(default)]
    occupancy: Option<u8>,
    #[serde(default)]
    at: Option<[i32; 3]>,
    #[serde(default)]
    quarter_turns: Option<u8>,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    points: Option<Vec<[f64; 2]>>,
    #[serde(default)]
    width: Option<f64>,
    #[serde(default)]
    max_grade_deg: Option<f64>,
    #[serde(default)]
    bank_slope_deg: Option<f64>,
    #[serde(default)]
    depth: Option<f64>,
    #[serde(default)]
    stamp: Option<String>,
    #[serde(default)]
    rotation_deg: Option<f64>,
    #[serde(default)]
    height_scale_cells: Option<f64>,
    #[serde(default)]
    edge_falloff: Option<f64>,
    #[serde(default)]
    base_cells: Option<f64>,
}

/// The brush tool named `name` (case-insensitive), e.g. `"add_water"`.
pub fn parse_tool(name: &str) -> Option<BrushMode> {
    BrushMode::ALL
        .into_iter()
        .find(|m| m.script_name().eq_ignore_ascii_case(name))
}

/// Checks a walk's numbers: finite start, 1..=1 000 000 frames per step,
/// finite directions no longer than 1.
fn validate_walk(walk: &WalkScript) -> Result<(), SettingError> {
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

/// The material named `name` (case-insensitive), e.g. `"grass"`.
pub fn parse_material(name: &str) -> Option<Material> {
    Material::from_name(name)
}

fn parse_shape(name: &str) -> Option<BrushShape> {
    BrushShape::ALL
        .into_iter()
        .find(|s| s.name().eq_ignore_ascii_case(name))
}

fn parse_falloff(name: &str) -> Option<Falloff> {
    Falloff::ALL
        .into_iter()
        .find(|s| s.name().eq_ignore_ascii_case(name))
}

fn parse_limit(name: &str) -> Option<FlattenLimit> {
    match name.to_ascii_lowercase().as_str() {
        "both" => Some(FlattenLimit::Both),
        "raise_only" => Some(FlattenLimit::RaiseOnly),
        "lower_only" => Some(FlattenLimit::LowerOnly),
        _ => None,
    }
}

/// Estimated work of one entry whose paste and history costs are not yet
/// known: `(cells, brush applications)`.
fn own_work(action: &StrokeAction) -> (f64, f64) {
    match action {
        StrokeAction::Brush(b) => {
            let length_studs: f64 = b
                .path
                .windows(2)
                .map(|w| match (w[0], w[1]) {
                    (StrokeCentre::World(a), StrokeCentre::World(c)) => a.distance(c),
                    (
                        StrokeCentre::OnSurface { x: ax, z: az },
                        StrokeCentre::OnSurface { x, z },
                    ) => (x - ax).hypot(z - az),
                    // Mixed kinds only come from hand-built strokes; no length counted.
                    _ => 0.0,
                })
                .sum();
            let radius = f64::from(b.brush.radius_cells);
            let spacing_studs = f64::from(b.spacing_fraction) * radius * f64::from(CELL_SIZE_STUDS);
            let applications = 1.0 + length_studs / spacing_studs;
            (applications * (2.0 * radius).powi(3), applications)
        }
        StrokeAction::Command(EditCommand::Generate { region }) => {
            (region.volume_cells() as f64, 0.0)
        }
        StrokeAction::Command(
            EditCommand::Fill { region, .. }
            | EditCommand::Clear { region, .. }
            | EditCommand::Copy { region },
        ) => (region.volume_cells() as f64 * COPY_CELL_COST, 0.0),
        StrokeAction::Command(EditCommand::Path(spec)) => (path_work_cells(spec), 0.0),
        StrokeAction::Command(EditCommand::Stamp { stamp, placement }) => {
            (placement.estimated_cells(stamp), 0.0)
        }
        StrokeAction::Command(_) => (0.0, 0.0),
    }
}

/// Rows of an average column a path rewrites, for the work estimate.
const PATH_ROWS_PER_COLUMN: f64 = 48.0;

/// Brush-cell cost of one route search node (16 edges, 3 height samples each).
const ROUTE_NODE_COST: f64 = 16.0;

/// Estimated work of a path: its footprint (length plus the reach at both
/// ends, times twice the reach) times [`PATH_ROWS_PER_COLUMN`]; a route
/// counts its search area (one node every 2 cells) and a path half as
/// long again as its span.
fn path_work_cells(spec: &PathSpec) -> f64 {
    let span_cells = chord_length(&spec.points_xz_studs) / f64::from(CELL_SIZE_STUDS);
    let reach = reach_cells(spec);
    let (length, search) = match spec.mode {
        PathMode::Route => {
            let side = span_cells + 2.0 * ROUTE_MARGIN_CELLS.max(0.5 * span_cells);
            (1.5 * span_cells, side * side / 4.0 * ROUTE_NODE_COST)
        }
        _ => (span_cells, 0.0),
    };
    (length + 2.0 * reach) * 2.0 * reach * PATH_ROWS_PER_COLUMN + search
}

/// A script's estimated work (see [`MAX_SCRIPT_WORK_CELLS`]): total cells,
/// and the index, cells and brush applications of the costliest entry.
fn estimate_work<'a>(
    actions: impl Iterator<Item = &'a StrokeAction> + Clone,
) -> (f64, usize, f64, f64) {
    let mut largest_copy = 0.0f64;
    let mut largest = 0.0f64;
    for action in actions.clone() {
        let (cells, _) = own_work(action);
        largest = largest.max(cells);
        if let StrokeAction::Command(EditCommand::Copy { .. }) = action {
            largest_copy = largest_copy.max(cells);
        }
    }
    // A paste writes at most the largest box copied (`largest_copy`, a copy
    // cost already); an undo or redo copies back at most the cells of the
    // largest step.
    let undo_cells = largest * COPY_CELL_COST;
    let mut total = 0.0;
    let mut heaviest = (0usize, 0.0f64, 0.0f64);
    for (index, action) in actions.enumerate() {
        let (cells, applications) = match action {
            StrokeAction::Command(EditCommand::Paste { .. }) => (largest_copy, 0.0),
            StrokeAction::Command(EditCommand::Undo | EditCommand::Redo) => (undo_cells, 0.0),
            _ => own_work(action),
        };
        total += cells;
        if cells > heaviest.1 {
            heaviest = (index, cells, applications);
        }
    }
    (total, heaviest.0, heaviest.1, heaviest.2)
}

const REGION_TOOLS: [&str; 5] = ["fill", "clear", "copy", "paste", "generate"];

/// Names of the fields a stroke set, for "field not used by this tool" errors.
fn set_fields(s: &StrokeFile) -> Vec<&'static str> {
    let mut v = Vec::new();
    let mut add = |set: bool, name: &'static str| {
        if set {
            v.push(name);
        }
    };
    add(s.centre.is_some(), "centre");
    add(s.centre_xz.is_some(), "centre_xz");
    add(s.path.is_some(), "path");
    add(s.path_xz.is_some(), "path_xz");
    add(s.spacing.is_some(), "spacing");
    add(s.plane_lock, "plane_lock");
    add(s.radius_cells.is_some(), "radius_cells");
    add(s.strength.is_some(), "strength");
    add(s.material.is_some(), "material");
    add(s.ignore_water, "ignore_water");
    add(s.shape.is_some(), "shape");
    add(s.falloff.is_some(), "falloff");
    add(s.flatten_height.is_some(), "flatten_height");
    add(s.flatten_normal.is_some(), "flatten_normal");
    add(s.flatten_limit.is_some(), "flatten_limit");
    add(s.replace_from.is_some(), "replace_from");
    add(s.iterations.is_some(), "iterations");
    add(s.region_min.is_some(), "region_min");
    add(s.region_max.is_some(), "region_max");
    add(s.occupancy.is_some(), "occupancy");
    add(s.at.is_some(), "at");
    add(s.quarter_turns.is_some(), "quarter_turns");
    add(s.mode.is_some(), "mode");
    add(s.points.is_some(), "points");
    add(s.width.is_some(), "width");
    add(s.max_grade_deg.is_some(), "max_grade_deg");
    add(s.bank_slope_deg.is_some(), "bank_slope_deg");
    add(s.depth.is_some(), "depth");
    add(s.stamp.is_some(), "stamp");
    add(s.rotation_deg.is_some(), "rotation_deg");
    add(s.height_scale_cells.is_some(), "height_scale_cells");
    add(s.edge_falloff.is_some(), "edge_falloff");
    add(s.base_cells.is_some(), "base_cells");
    v
}

fn parse_brush_stroke(s: &StrokeFile, mode: BrushMode) -> Result<BrushStroke, EntryError> {
    const NON_BRUSH_FIELDS: [&str; 16] = [
        "region_min",
        "region_max",
        "occupancy",
        "at",
        "quarter_turns",
        "mode",
        "points",
        "width",
        "max_grade_deg",
        "bank_slope_deg",
        "depth",
        "stamp",
        "rotation_deg",
        "height_scale_cells",
        "edge_falloff",
        "base_cells",
    ];
    if let Some(f) = set_fields(s)
        .into_iter()
        .find(|f| NON_BRUSH_FIELDS.contains(f))
    {
        return Err(EntryError::UnusedField {
            field: f,
            tool: mode.script_name().to_string(),
        });
    }
    let material = match &s.material {
        None => Material::GRASS,
        Some(m) => parse_material(m)
            .filter(|m| m.is_solid())
            .ok_or_else(|| EntryError::NotSolidMaterial(m.clone()))?,
    };
    let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
    let path: Vec<StrokeCentre> = match (&s.centre, &s.centre_xz, &s.path, &s.path_xz) {
        (Some(c), None, None, None) if finite(c) => {
            vec![StrokeCentre::World(DVec3::from_array(*c))]
        }
        (None, Some([x, z]), None, None) if x.is_finite() && z.is_finite() => {
            vec![StrokeCentre::OnSurface { x: *x, z: *z }]
        }
        (None, None, Some(p), None) if p.iter().all(|c| finite(c)) => p
            .iter()
            .map(|c| StrokeCentre::World(DVec3::from_array(*c)))
            .collect(),
        (None, None, None, Some(p)) if p.iter().all(|c| finite(c)) => p
            .iter()
            .map(|&[x, z]| StrokeCentre::OnSurface { x, z })
            .collect(),
        (None, None, None, None) => {
            return Err(EntryError::MissingCentre);
        }
        (c, cxz, p, pxz)
            if [c.is_some(), cxz.is_some(), p.is_some(), pxz.is_some()]
                .iter()
                .filter(|b| **b)
                .count()
                > 1 =>
        {
            return Err(EntryError::SeveralCentres);
        }
        _ => return Err(EntryError::NonFinitePoint),
    };
    if path.is_empty() || path.len() > MAX_PATH_POINTS {
        return Err(EntryError::PathLength(path.len()));
    }
    let radius_cells = s.radius_cells.ok_or(EntryError::MissingRadius)?;
    let brush = Brush {
        mode,
        radius_cells,
        strength: s.strength.unwrap_or(0.5),
        material,
        ignore_water: s.ignore_water,
    };
    brush.validate()?;
    let shape = match &s.shape {
        None => BrushShape::Sphere,
        Some(n) => parse_shape(n).ok_or_else(|| EntryError::UnknownShape(n.clone()))?,
    };
    let falloff = match &s.falloff {
        None => Falloff::None,
        Some(n) => parse_falloff(n).ok_or_else(|| EntryError::UnknownFalloff(n.clone()))?,
    };
    let flatten_limit = match &s.flatten_limit {
        None => FlattenLimit::Both,
        Some(n) => parse_limit(n).ok_or_else(|| EntryError::UnknownFlattenLimit(n.clone()))?,
    };
    let replace_from = match (&s.replace_from, mode) {
        (Some(n), BrushMode::Replace) => parse_material(n)
            .filter(|m| m.is_solid())
            .ok_or_else(|| EntryError::NotSolidReplaceFrom(n.clone()))?,
        (None, BrushMode::Replace) => return Err(EntryError::MissingReplaceFrom),
        (Some(_), _) => return Err(EntryError::ReplaceFromUnused),
        (None, _) => Material::ROCK,
    };
    let erosion_iterations = match (s.iterations, mode.is_erosion()) {
        (Some(n), true) => n,
        (Some(_), false) => {
            return Err(EntryError::UnusedField {
                field: "iterations",
                tool: mode.script_name().to_string(),
            });
        }
        (None, _) => BrushOptions::default().erosion_iterations,
    };
    if mode != BrushMode::Flatten
        && (s.flatten_height.is_some() || s.flatten_normal.is_some() || s.flatten_limit.is_some())
    {
        return Err(EntryError::FlattenFieldsUnused);
    }
    let first = path[0];
    let flatten_plane = match (s.flatten_height, s.flatten_normal) {
        (Some(_), Some(_)) => {
            return Err(EntryError::FlattenHeightAndNormal);
        }
        (Some(h), None) => Some(FlattenPlane::Height { height_world: h }),
        (None, Some(n)) => match first {
            StrokeCentre::World(p) => Some(FlattenPlane::Picked {
                point_world: p,
                normal: DVec3::from_array(n),
            }),
            // The point comes from the pick; the normal is fixed here.
            StrokeCentre::OnSurface { x, z } => Some(FlattenPlane::Picked {
                point_world: DVec3::new(x, 0.0, z),
                normal: DVec3::from_array(n),
            }),
        },
        (None, None) => None,
    };
    let flatten_from_pick = mode == BrushMode::Flatten
        && s.flatten_height.is_none()
        && (s.flatten_normal.is_some() || matches!(first, StrokeCentre::OnSurface { .. }));
    let options = BrushOptions {
        shape,
        falloff,
        flatten_plane,
        flatten_limit,
        replace_from,
        erosion_iterations,
    };
    options.validate(mode)?;
    let spacing_fraction = s.spacing.unwrap_or(DEFAULT_SPACING_FRACTION);
    if !spacing_fraction.is_finite() || !SPACING_FRACTION_RANGE.contains(&spacing_fraction) {
        return Err(EntryError::Spacing(spacing_fraction));
    }
    Ok(BrushStroke {
        brush,
        options,
        path,
        spacing_fraction,
        plane_lock: s.plane_lock,
        flatten_from_pick,
    })
}

/// A `path` entry (see the module docs).
fn parse_path_command(s: &StrokeFile) -> Result<EditCommand, EntryError> {
    const FIELDS: [&str; 7] = [
        "mode",
        "points",
        "width",
        "max_grade_deg",
        "bank_slope_deg",
        "depth",
        "material",
    ];
    if let Some(f) = set_fields(s).into_iter().find(|f| !FIELDS.contains(f)) {
        return Err(EntryError::UnusedField {
            field: f,
            tool: "path".to_string(),
        });
    }
    let mode = match &s.mode {
        None => PathMode::Road,
        Some(m) => {
            PathMode::from_script_name(m).ok_or_else(|| EntryError::UnknownPathMode(m.clone()))?
        }
    };
    let points: Vec<glam::DVec2> = s
        .points
        .as_ref()
        .ok_or(EntryError::MissingPoints)?
        .iter()
        .map(|p| glam::DVec2::from_array(*p))
        .collect();
    let defaults = match mode {
        PathMode::River => PathSpec::river(points),
        _ => PathSpec {
            mode,
            ..PathSpec::road(points)
        },
    };
    let material = match &s.material {
        None => defaults.material,
        Some(m) => parse_material(m)
            .filter(|m| m.is_solid())
            .ok_or_else(|| EntryError::NotSolidMaterial(m.clone()))?,
    };
    let spec = PathSpec {
        width_studs: s.width.unwrap_or(defaults.width_studs),
        max_grade_deg: s.max_grade_deg.unwrap_or(defaults.max_grade_deg),
        bank_slope_deg: s.bank_slope_deg.unwrap_or(defaults.bank_slope_deg),
        depth_studs: s.depth.unwrap_or(defaults.depth_studs),
        material,
        ..defaults
    };
    spec.validate()?;
    Ok(EditCommand::Path(spec))
}

fn parse_region_command(s: &StrokeFile, tool: &str) -> Result<EditCommand, EntryError> {
    let allowed: &[&str] = match tool {
        "fill" => &[
            "region_min",
            "region_max",
            "material",
            "occupancy",
            "ignore_water",
        ],
        "clear" => &["region_min", "region_max", "ignore_water"],
        "copy" | "generate" => &["region_min", "region_max"],
        "paste" => &["at", "quarter_turns"],
        _ => &[],
    };
    if let Some(f) = set_fields(s).into_iter().find(|f| !allowed.contains(f)) {
        return Err(EntryError::UnusedField {
            field: f,
            tool: tool.to_string(),
        });
    }
    let region = || -> Result<CellBox, EntryError> {
        match (s.region_min, s.region_max) {
            (Some(a), Some(b)) => {
                let region = CellBox::new(IVec3::from_array(a), IVec3::from_array(b));
                if region.is_empty() {
                    Err(EntryError::EmptyRegion { min: a, max: b })
                } else {
                    Ok(region)
                }
            }
            _ => Err(EntryError::MissingRegion(tool.to_string())),
        }
    };
    Ok(match tool {
        "fill" => {
            let material = match &s.material {
                None => Material::GRASS,
                Some(m) => parse_material(m)
                    .filter(|m| *m != Material::AIR)
                    .ok_or_else(|| EntryError::NotFillMaterial(m.clone()))?,
            };
            let occupancy = s.occupancy.unwrap_or(255);
            if occupancy == 0 {
                return Err(EntryError::ZeroOccupancy);
            }
            EditCommand::Fill {
                region: region()?,
                material,
                occupancy,
                ignore_water: s.ignore_water,
            }
        }
        "clear" => EditCommand::Clear {
            region: region()?,
            ignore_water: s.ignore_water,
        },
        "copy" => EditCommand::Copy { region: region()? },
        "generate" => EditCommand::Generate { region: region()? },
        _ => {
            let at = s.at.ok_or(EntryError::MissingAt)?;
            let quarter_turns = s.quarter_turns.unwrap_or(0);
            if quarter_turns > 3 {
                return Err(EntryError::QuarterTurns(quarter_turns));
            }
            EditCommand::Paste {
                at: IVec3::from_array(at),
                quarter_turns,
            }
        }
    })
}

/// Stamps a script's entries read, by resolved path (entries naming one
/// file share it), and the folder relative names are looked up in first.
struct StampFiles {
    dir: Option<PathBuf>,
    loaded: std::collections::HashMap<PathBuf, Arc<Stamp>>,
}

impl StampFiles {
    /// The stamp `name`: absolute as it is; relative, in the script's
    /// folder (the working directory for scripts given as text) and else in
    /// the shipped stamps ([`crate::io::world::stamp_file::default_stamp_dir`]).
    fn get(&mut self, name: &str) -> Result<Arc<Stamp>, EntryError> {
        let given = Path::new(name);
        let local = match &self.dir {
            Some(dir) => dir.join(given),
            None => given.to_path_buf(),
        };
        let path = if given.is_absolute() || local.exists() {
            local
        } else {
            crate::io::world::stamp_file::default_stamp_dir().join(given)
        };
        if let Some(stamp) = self.loaded.get(&path) {
            return Ok(stamp.clone());
        }
        let stamp =
            crate::io::world::stamp_file::read_stamp(&path).map_err(|e| EntryError::StampFile {
                path: path.display().to_string(),
                message: e.to_string(),
            })?;
        let stamp = Arc::new(stamp);
        self.loaded.insert(path, stamp.clone());
        Ok(stamp)
    }
}

/// A `stamp` entry as an [`EditCommand::Stamp`].
fn parse_stamp(s: &StrokeFile, files: &mut StampFiles) -> Result<EditCommand, EntryError> {
    const ALLOWED: [&str; 9] = [
        "stamp",
        "centre_xz",
        "radius_cells",
        "rotation_deg",
        "height_scale_cells",
        "edge_falloff",
        "mode",
        "base_cells",
        "material",
    ];
    if let Some(f) = set_fields(s).into_iter().find(|f| !ALLOWED.contains(f)) {
        return Err(EntryError::UnusedField {
            field: f,
            tool: "stamp".into(),
        });
    }
    let name = s
        .stamp
        .as_deref()
        .ok_or(EntryError::MissingStampField("stamp"))?;
    let [x, z] = s
        .centre_xz
        .ok_or(EntryError::MissingStampField("centre_xz"))?;
    let radius_cells = s.radius_cells.ok_or(EntryError::MissingRadius)?;
    let mode = match &s.mode {
        None => StampMode::Add,
        Some(m) => {
            StampMode::from_script_name(m).ok_or_else(|| EntryError::UnknownStampMode(m.clone()))?
        }
    };
    let material = match &s.material {
        None => None,
        Some(m) => Some(
            parse_material(m)
                .filter(|m| m.is_solid())
                .ok_or_else(|| EntryError::NotSolidMaterial(m.clone()))?,
        ),
    };
    let stamp = files.get(name)?;
    let default_height = match stamp.shape() {
        StampShape::Height(_) => 32.0,
        StampShape::Cells(c) => f64::from(c.size().y),
    };
    let stud = f64::from(CELL_SIZE_STUDS);
    let placement = StampPlacement {
        centre_xz_cells: glam::DVec2::new(x / stud, z / stud),
        base: s
            .base_cells
            .map_or(StampBase::SurfaceUnderCentre, StampBase::Cells),
        rotation_deg: s.rotation_deg.unwrap_or(0.0),
        radius_cells: f64::from(radius_cells),
        height_scale_cells: s.height_scale_cells.unwrap_or(default_height),
        falloff_fraction: s.edge_falloff.unwrap_or(0.0),
        mode,
        material,
    };
    placement.validate()?;
    Ok(EditCommand::Stamp { stamp, placement })
}

impl Script {
    /// Reads and validates a script file: a regular file (after following
    /// symlinks) of at most [`MAX_SCRIPT_FILE_BYTES`], checked before reading.
    ///
    /// # Errors
    /// [`ScriptError`] naming the file (and the stroke) for unreadable files,
    /// invalid JSON, unknown tools, shapes or materials, a missing or doubled
    /// centre, non-finite numbers, fields a tool does not use, or values out
    /// of range.
    pub fn load(path: &Path) -> Result<Script, ScriptError> {
        let text =
            crate::io::read_bounded_to_string(path, MAX_SCRIPT_FILE_BYTES).map_err(|source| {
                ScriptError::Read {
                    path: path.display().to_string(),
                    source,
                }
            })?;
        Script::parse_in(
            &text,
            &path.display().to_string(),
            path.parent().map(Path::to_path_buf),
        )
    }

    /// Parses and validates script text; `name` labels errors.
    ///
    /// # Errors
    /// As [`Script::load`].
    pub fn parse(text: &str, name: &str) -> Result<Script, ScriptError> {
        Script::parse_in(text, name, None)
    }

    /// [`Script::parse`] with relative stamp files looked up first in
    /// `stamp_dir` (the script's folder; the working directory for `None`).
    ///
    /// # Errors
    /// As [`Script::load`].
    pub fn parse_in(
        text: &str,
        name: &str,
        stamp_dir: Option<PathBuf>,
    ) -> Result<Script, ScriptError> {
        let mut stamp_files = StampFiles {
            dir: stamp_dir,
            loaded: std::collections::HashMap::new(),
        };
        let file: ScriptFile = serde_json::from_str(text).map_err(|source| ScriptError::Parse {
            path: name.to_string(),
            source,
        })?;
        let setting = |source: SettingError| ScriptError::Setting {
            path: name.to_string(),
            source,
        };
        let frame_rate_hz = file.frame_rate_hz.unwrap_or(DEFAULT_FRAME_RATE_HZ);
        if !(frame_rate_hz.is_finite() && (1.0..=1000.0).contains(&frame_rate_hz)) {
            return Err(setting(SettingError::FrameRate(frame_rate_hz)));
        }
        let history_budget_bytes = match file.history_budget_mib {
            None => DEFAULT_HISTORY_BUDGET_BYTES,
            Some(m) if m.is_finite() && (1.0..=65536.0).contains(&m) => {
                (m * (1u64 << 20) as f64) as usize
            }
            Some(m) => return Err(setting(SettingError::HistoryBudget(m))),
        };
        let mut strokes = Vec::with_capacity(file.strokes.len());
        let mut camera_keys: Vec<CameraKey> = Vec::new();
        for (index, s) in file.strokes.into_iter().enumerate() {
            let fail = |source: EntryError| ScriptError::Stroke {
                path: name.to_string(),
                index,
                source,
            };
            if s.frame > MAX_SCRIPT_FRAME {
                return Err(fail(EntryError::FrameTooLarge(s.frame)));
            }
            if let Some(camera) = s.camera {
                if !s.tool.is_empty() || !set_fields(&s).is_empty() {
                    return Err(fail(EntryError::CameraWithTool));
                }
                let [x, y, z, yaw_deg, pitch_deg] = camera;
                let in_range = camera.iter().all(|v| v.is_finite())
                    && [x, y, z].iter().all(|v| v.abs() <= 4.0e9)
                    && (-89.0..=89.0).contains(&pitch_deg);
                if !in_range {
                    return Err(fail(EntryError::BadCamera(camera)));
                }
                if camera_keys.iter().any(|k| k.frame == s.frame) {
                    return Err(fail(EntryError::DuplicateCameraFrame(s.frame)));
                }
                camera_keys.push(CameraKey {
                    frame: s.frame,
                    pos_world: [x, y, z],
                    yaw_deg,
                    pitch_deg,
                });
                continue;
            }
            let tool = s.tool.to_ascii_lowercase();
            let action = if let Some(mode) = parse_tool(&tool) {
                StrokeAction::Brush(parse_brush_stroke(&s, mode).map_err(fail)?)
            } else if tool == "path" {
                StrokeAction::Command(parse_path_command(&s).map_err(fail)?)
            } else if tool == "stamp" {
                StrokeAction::Command(parse_stamp(&s, &mut stamp_files).map_err(fail)?)
            } else if REGION_TOOLS.contains(&tool.as_str()) {
                StrokeAction::Command(parse_region_command(&s, &tool).map_err(fail)?)
            } else if tool == "undo" || tool == "redo" {
                if let Some(f) = set_fields(&s).first() {
                    return Err(fail(EntryError::UnusedField {
                        field: f,
                        tool: tool.clone(),
                    }));
                }
                StrokeAction::Command(if tool == "undo" {
                    EditCommand::Undo
                } else {
                    EditCommand::Redo
                })
            } else {
                return Err(fail(EntryError::UnknownTool(s.tool.clone())));
            };
            strokes.push(Stroke {
                frame: s.frame,
                action,
            });
        }
        let (cells, heaviest_index, heaviest_cells, heaviest_applications) =
            estimate_work(strokes.iter().map(|s| &s.action));
        if cells.is_nan() || cells > MAX_SCRIPT_WORK_CELLS {
            return Err(setting(SettingError::TooMuchWork {
                cells,
                heaviest_index,
                heaviest_cells,
                heaviest_applications,
            }));
        }
        strokes.sort_by_key(|s| s.frame);
        camera_keys.sort_by_key(|k| k.frame);
        let last_frame = strokes
            .last()
            .map_or(0, |s| s.frame)
            .max(camera_keys.last().map_or(0, |k| k.frame));
        let seconds = f64::from(last_frame) / frame_rate_hz;
        if seconds > MAX_REPLAY_SECONDS {
            return Err(setting(SettingError::ReplayTooLong {
                last_frame,
                frame_rate_hz,
                seconds,
            }));
        }
        if let Some(walk) = &file.walk {
            validate_walk(walk).map_err(setting)?;
        }
        Ok(Script {
            frame_rate_hz,
            history_budget_bytes,
            strokes,
            walk: file.walk,
            camera_keys,
        })
    }

    /// The estimated cells of brush work of all entries, at most
    /// [`MAX_SCRIPT_WORK_CELLS`] for a parsed script.
    pub fn estimated_work_cells(&self) -> f64 {
        estimate_work(self.strokes.iter().map(|s| &s.action)).0
    }

    /// The last frame with a stroke (0 for an empty script).
    pub fn last_frame(&self) -> u32 {
        self.strokes.last().map_or(0, |s| s.frame)
    }

    /// True when some stroke drops onto the surface (needs the initial meshes to pick).
    pub fn needs_surface(&self) -> bool {
        self.strokes.iter().any(|s| {
            s.action.brush().is_some_and(|b| {
                b.path
                    .iter()
                    .any(|c| matches!(c, StrokeCentre::OnSurface { .. }))
            })
        })
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
        assert_eq!(
            s.strokes[0].action.brush().unwrap().brush.material,
            Material::SAND
        );
        assert_eq!(
            s.strokes[0].action.brush().unwrap().path[0],
            StrokeCentre::World(DVec3::new(1.0, 2.0, 3.0))
        );
        assert_eq!(
            s.strokes[1].action.brush().unwrap().path[0],
            StrokeCentre::OnSurface { x: 1.0, z: 2.0 }
        );
        assert_eq!(
            s.strokes[1].action.brush().unwrap().brush.mode,
            BrushMode::Subtract
        );
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
    fn parses_every_tool_with_its_settings() {
        let s = Script::parse(
            r#"{"history_budget_mib": 64, "strokes": [
                {"frame": 0, "tool": "grow", "centre": [0, 0, 0], "radius_cells": 4,
                 "shape": "cube", "falloff": "smooth"},
                {"frame": 0, "tool": "erode", "path": [[0, 0, 0], [40, 0, 0]], "spacing": 0.5,
                 "radius_cells": 4, "plane_lock": true},
                {"frame": 1, "tool": "smooth", "centre_xz": [1, 2], "radius_cells": 3},
                {"frame": 1, "tool": "flatten", "path_xz": [[1, 2], [3, 4]], "radius_cells": 3,
                 "flatten_limit": "raise_only"},
                {"frame": 1, "tool": "flatten", "centre": [1, 2, 3], "radius_cells": 3,
                 "flatten_height": 40},
                {"frame": 2, "tool": "paint", "centre": [1, 2, 3], "radius_cells": 3,
                 "material": "snow", "shape": "cylinder", "falloff": "linear"},
                {"frame": 2, "tool": "replace", "centre": [1, 2, 3], "radius_cells": 3,
                 "replace_from": "rock", "material": "slate"},
                {"frame": 3, "tool": "fill", "region_min": [0, 0, 0], "region_max": [4, 4, 4],
                 "material": "water", "occupancy": 200},
                {"frame": 3, "tool": "clear", "region_min": [0, 0, 0], "region_max": [4, 4, 4],
                 "ignore_water": true},
                {"frame": 3, "tool": "copy", "region_min": [0, 0, 0], "region_max": [4, 4, 4]},
                {"frame": 3, "tool": "paste", "at": [10, 0, 0], "quarter_turns": 3},
                {"frame": 3, "tool": "generate", "region_min": [0, 0, 0], "region_max": [4, 4, 4]},
                {"frame": 4, "tool": "undo"},
                {"frame": 4, "tool": "redo"}
            ]}"#,
            "t",
        )
        .unwrap();
        assert_eq!(s.history_budget_bytes, 64 << 20);
        assert_eq!(s.strokes.len(), 14);
        let b0 = s.strokes[0].action.brush().unwrap();
        assert_eq!(b0.brush.mode, BrushMode::Grow);
        assert_eq!(b0.options.shape, BrushShape::Cube);
        assert_eq!(b0.options.falloff, Falloff::Smooth);
        let b1 = s.strokes[1].action.brush().unwrap();
        assert_eq!(b1.path.len(), 2);
        assert!(b1.plane_lock);
        assert_eq!(b1.spacing_fraction, 0.5);
        let flat = s.strokes[3].action.brush().unwrap();
        assert!(flat.flatten_from_pick);
        assert_eq!(flat.options.flatten_limit, FlattenLimit::RaiseOnly);
        assert_eq!(
            s.strokes[4].action.brush().unwrap().options.flatten_plane,
            Some(FlattenPlane::Height { height_world: 40.0 })
        );
        let replace = s.strokes[6].action.brush().unwrap();
        assert_eq!(replace.options.replace_from, Material::ROCK);
        assert_eq!(replace.brush.material, Material::SLATE);
        assert_eq!(
            s.strokes[7].action,
            StrokeAction::Command(EditCommand::Fill {
                region: CellBox::new(IVec3::ZERO, IVec3::splat(4)),
                material: Material::WATER,
                occupancy: 200,
                ignore_water: false
            })
        );
        assert_eq!(
            s.strokes[10].action,
            StrokeAction::Command(EditCommand::Paste {
                at: IVec3::new(10, 0, 0),
                quarter_turns: 3
            })
        );
        assert_eq!(
            s.strokes[12].action,
            StrokeAction::Command(EditCommand::Undo)
        );
        assert_eq!(
            s.strokes[13].action,
            StrokeAction::Command(EditCommand::Redo)
        );
        assert!(s.needs_surface());
    }

    #[test]
    fn bad_tool_values_are_rejected_with_the_stroke_index() {
        let err = |stroke: &str| {
            Script::parse(&format!(r#"{{"strokes": [{stroke}]}}"#), "bad.json")
                .unwrap_err()
                .to_string()
        };
        let e = err(r#"{"frame": 0, "tool": "smooth", "centre": [0,0,0], "radius_cells": 0}"#);
        assert!(e.contains("stroke 0") && e.contains("radius"), "{e}");
        assert!(
            err(r#"{"frame": 0, "tool": "paint", "centre": [0,0,0], "radius_cells": 65}"#)
                .contains("radius")
        );
        assert!(err(r#"{"frame": 0, "tool": "paint", "centre": [0,0,0], "radius_cells": 4, "material": "plasma"}"#)
            .contains("not a solid material"));
        assert!(err(r#"{"frame": 0, "tool": "grow", "centre": [0,0,0], "radius_cells": 4, "shape": "torus"}"#)
            .contains("unknown shape"));
        assert!(
            err(r#"{"frame": 0, "tool": "replace", "centre": [0,0,0], "radius_cells": 4}"#)
                .contains("replace_from")
        );
        assert!(err(r#"{"frame": 0, "tool": "add", "centre": [0,0,0], "radius_cells": 4, "flatten_height": 3}"#)
            .contains("only used by flatten"));
        assert!(err(r#"{"frame": 0, "tool": "flatten", "centre": [0,0,0], "radius_cells": 4, "flatten_normal": [0,0,0]}"#)
            .contains("flatten plane"));
        assert!(
            err(r#"{"frame": 0, "tool": "fill", "region_min": [0,0,0], "region_max": [0,4,4]}"#)
                .contains("empty")
        );
        assert!(err(r#"{"frame": 0, "tool": "fill", "region_min": [0,0,0], "region_max": [4,4,4], "radius_cells": 3}"#)
            .contains("radius_cells is not used by fill"));
        assert!(
            err(r#"{"frame": 0, "tool": "paste", "at": [0,0,0], "quarter_turns": 4}"#)
                .contains("quarter_turns")
        );
        assert!(
            err(r#"{"frame": 0, "tool": "undo", "centre": [0,0,0]}"#).contains("not used by undo")
        );
        assert!(
            err(r#"{"frame": 0, "tool": "erode", "path": [], "radius_cells": 4}"#)
                .contains("path needs")
        );
        assert!(err(r#"{"frame": 0, "tool": "erode", "centre": [0,0,0], "spacing": 0, "radius_cells": 4}"#)
            .contains("spacing"));
        // Infinite numbers are not JSON; serde rejects them with a position.
        assert!(
            err(r#"{"frame": 0, "tool": "add", "centre": [1e999,0,0], "radius_cells": 4}"#)
                .contains("bad.json")
        );
    }

    #[test]
    fn committed_scripts_parse() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scripts");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                Script::load(&path).unwrap_or_else(|e| panic!("{e}"));
                n += 1;
            }
        }
        assert!(n >= 1);
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
        // The input that ran for hours: 2001 steps of a million frames each.
        let many = vec![r#"{"frames": 1000000, "move_xz": [1, 0]}"#; 2001].join(",");
        assert!(
            err(&format!(
                r#"{{"strokes": [], "walk": {{"start_xz": [0, 0], "steps": [{many}]}}}}"#
            ))
            .contains("at most 1000000 in all")
        );
        assert!(
            err(r#"{"strokes": [], "walk": {"start_xz": [0, 0], "steps": [{"frames": 1, "move_xz": [1, 0], "run": true}]}}"#)
                .contains("unknown field")
        );
    }

    /// Runs `f` on a thread and fails unless it returns within 2 s (so a
    /// read that blocks fails the test instead of hanging it).
    fn within_2s<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> (T, f64) {
        let (tx, rx) = std::sync::mpsc::channel();
        let start = std::time::Instant::now();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        let value = rx
            .recv_timeout(std::time::Duration::from_secs(2))
            .expect("finished within 2 s");
        (value, start.elapsed().as_secs_f64())
    }

    /// The three inputs of the issue that ran for hours or days are refused
    /// at parse time, with the estimate in the message.
    #[test]
    fn unbounded_work_and_replay_time_are_refused_up_front() {
        // 10,000 points zig-zagging across a 4096-cell world, Smooth radius
        // 64 at spacing 0.05: ~15 hours of brush work.
        let points: Vec<String> = (0..MAX_PATH_POINTS)
            .map(|i| {
                let x = if i % 2 == 0 { 16.0 } else { 16368.0 };
                format!("[{x}, {:.1}]", i as f64 * 1.6)
            })
            .collect();
        let long = format!(
            r#"{{"strokes": [{{"frame": 0, "tool": "smooth", "radius_cells": 64, "spacing": 0.05, "path_xz": [{}]}}]}}"#,
            points.join(", ")
        );
        assert!(long.len() > 150_000, "{}", long.len());
        // Two points across a 4096-cell world at radius 64.
        let two = r#"{"strokes":[{"frame":0,"tool":"smooth","path":[[0,300,2048],[16384,300,2048]],"radius_cells":64,"spacing":0.05}]}"#;
        assert!(two.len() <= 130);
        // Two points 2048 studs apart at radius 64: measured 42 s of work.
        let measured = r#"{"strokes":[{"frame":0,"tool":"smooth","path":[[0,200,1024],[2048,200,1024]],"radius_cells":64,"spacing":0.05}]}"#;
        // One stroke on frame 1,000,000 at 1 Hz: 11.6 days in real time.
        let late = r#"{"frame_rate_hz": 1, "strokes": [{"frame": 1000000, "tool": "add", "centre": [0, 0, 0], "radius_cells": 4}]}"#;
        for (text, needles) in [
            (long, &["e13 cells", "stroke 0", "at most 3e8"][..]),
            (
                measured.to_string(),
                &["about 3.38e8 cells", "161 brush applications"][..],
            ),
            (
                two.to_string(),
                &["about 2.69e9 cells", "1281 brush applications"][..],
            ),
            (
                late.to_string(),
                &[
                    "frame 1000000 at 1 Hz",
                    "1000000 s",
                    "277.8 hours",
                    "at most 3600 s",
                ][..],
            ),
        ] {
            let (result, secs) = within_2s(move || Script::parse(&text, "hostile.json"));
            let message = result.unwrap_err().to_string();
            assert!(secs < 2.0, "{secs} s");
            println!("refused in {:.1} ms: {message}", secs * 1e3);
            for needle in needles {
                assert!(message.contains(needle), "{needle:?} not in {message}");
            }
        }
        // A thousand largest fills, or one fill undone and redone a thousand
        // times, are bounded the same way.
        let fills = vec![
            r#"{"frame": 0, "tool": "fill", "region_min": [0, 0, 0], "region_max": [512, 512, 512]}"#;
            1000
        ]
        .join(",");
        let e = Script::parse(&format!(r#"{{"strokes": [{fills}]}}"#), "f").unwrap_err();
        assert!(
            matches!(
                e,
                ScriptError::Setting {
                    source: SettingError::TooMuchWork { .. },
                    ..
                }
            ),
            "{e}"
        );
        let storm =
            vec![r#"{"frame": 1, "tool": "undo"}, {"frame": 1, "tool": "redo"}"#; 500].join(",");
        let e = Script::parse(
            &format!(r#"{{"strokes": [{{"frame": 0, "tool": "fill", "region_min": [0, 0, 0], "region_max": [512, 512, 512]}}, {storm}]}}"#),
            "u",
        )
        .unwrap_err();
        assert!(e.to_string().contains("cells of brush work in all"), "{e}");
        // One largest fill with its undo and redo is cheap and allowed.
        assert!(Script::parse(
            r#"{"strokes": [{"frame": 0, "tool": "fill", "region_min": [0, 0, 0], "region_max": [512, 512, 512]},
                {"frame": 1, "tool": "undo"}, {"frame": 2, "tool": "redo"}]}"#,
            "ok"
        )
        .is_ok());
        // Real work stays allowed: radius 64 across half a 4096-cell world
        // at the default spacing, and an hour of replay.
        let across = Script::parse(
            r#"{"strokes":[{"frame":216000,"tool":"smooth","path":[[0,300,2048],[8192,300,2048]],"radius_cells":64}]}"#,
            "ok",
        )
        .unwrap();
        assert!(across.estimated_work_cells() < MAX_SCRIPT_WORK_CELLS);
    }

    #[test]
    fn shipped_scripts_are_well_within_the_work_budget() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scripts");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                let script = Script::load(&path).unwrap_or_else(|e| panic!("{e}"));
                let cells = script.estimated_work_cells();
                println!("{}: about {cells:.2e} cells", path.display());
                assert!(cells < MAX_SCRIPT_WORK_CELLS / 2.0, "{}", path.display());
            }
        }
    }

    /// Devices, FIFOs, symlinks to devices and oversize files are refused
    /// before anything is read.
    #[cfg(unix)]
    #[test]
    fn unbounded_script_files_are_refused_before_reading() {
        let dir = std::env::temp_dir().join(format!("strata-script-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let link = dir.join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let big = dir.join("big.json");
        // Sparse: no bytes written, 16 MiB + 1 long.
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_SCRIPT_FILE_BYTES + 1)
            .unwrap();
        for (path, needle) in [
            (std::path::PathBuf::from("/dev/zero"), "character device"),
            (std::path::PathBuf::from("/dev/urandom"), "character device"),
            (link, "character device"),
            (fifo, "FIFO"),
            (dir.clone(), "directory"),
            (big, "16777217 bytes, more than the limit of 16777216"),
        ] {
            let shown = path.display().to_string();
            let (result, secs) = within_2s(move || Script::load(&path));
            let e = result.unwrap_err();
            println!("{shown}: refused in {:.2} ms: {e}", secs * 1e3);
            assert!(matches!(e, ScriptError::Read { .. }), "{e}");
            let message = e.to_string();
            assert!(
                message.contains(needle) && message.contains(&shown),
                "{message}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
