//! Why a script could not be loaded: the file ([`ScriptError`]), a
//! script-wide setting ([`SettingError`]) or one entry ([`EntryError`]).

use crate::terrain::editing::brush::EditError;
use crate::terrain::path::spec::PathError;
use crate::terrain::stamp::definition::StampError;

use super::limits::{
    MAX_PATH_POINTS, MAX_REPLAY_SECONDS, MAX_SCRIPT_APPLICATIONS, MAX_SCRIPT_FRAME,
    MAX_SCRIPT_WORK_CELLS,
};
use super::tool::Tool;
use crate::terrain::editing::stroke::MAX_APPLICATIONS_PER_SEGMENT;

/// Why a script could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The file could not be read.
    #[error("cannot read script {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// What went wrong: an I/O error, not a regular file (a FIFO, a
        /// device such as `/dev/zero`), or above
        /// [`MAX_SCRIPT_FILE_BYTES`](super::limits::MAX_SCRIPT_FILE_BYTES).
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
    /// One stroke segment would apply the brush more often than a segment
    /// may ([`MAX_APPLICATIONS_PER_SEGMENT`]).
    #[error(
        "stroke {index}: one segment of its path would apply the brush about \
         {applications:.0} times; at most {MAX_APPLICATIONS_PER_SEGMENT} per segment (a larger \
         spacing or radius, or more points)"
    )]
    SegmentTooLong {
        /// Index in the file of the stroke.
        index: usize,
        /// Applications of its longest segment.
        applications: f64,
    },
    /// The strokes would apply the brush more often than a script may
    /// ([`MAX_SCRIPT_APPLICATIONS`]).
    #[error(
        "the strokes would apply the brush about {applications:.0} times in all; at most \
         {MAX_SCRIPT_APPLICATIONS:.0} per script"
    )]
    TooManyApplications {
        /// Applications of all strokes.
        applications: f64,
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
    #[error("unknown tool {0:?} (use {tools})", tools = Tool::list())]
    UnknownTool(String),
    /// The entry is not a JSON object, its `frame` or `tool` is missing or
    /// of the wrong type, or one of its tool's fields has the wrong type:
    /// serde's message, with the line and column in the file.
    #[error("{0}")]
    Json(String),
    /// A field no tool uses.
    #[error(
        "unknown field `{field}` ({tool} takes {})",
        with_frame_and_tool(expected)
    )]
    UnknownField {
        /// The field's name as written.
        field: String,
        /// The tool's script name.
        tool: String,
        /// The fields the tool takes besides `frame` and `tool`.
        expected: &'static [&'static str],
    },
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
    #[error("{0:?} is not a solid material name (a built-in or one of this world's materials)")]
    NotSolidMaterial(String),
    /// A fill `material` names neither a solid nor water.
    #[error(
        "{0:?} is not a solid or water material name (a built-in or one of this world's materials)"
    )]
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
    /// A `layer` or `operation` entry without what its action needs.
    #[error("{0}")]
    Document(String),
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

/// `"frame, tool, a, b"` for the fields `[a, b]` of a tool.
fn with_frame_and_tool(fields: &[&str]) -> String {
    ["frame", "tool"]
        .iter()
        .chain(fields)
        .copied()
        .collect::<Vec<_>>()
        .join(", ")
}
