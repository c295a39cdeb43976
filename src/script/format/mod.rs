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
//! `stamp` presses a stamp file into the terrain as one undo step:
//! `stamp` names a grayscale PNG or a `.stamp` cell file, relative to
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
//! river's banks, default sand). Defaults as
//! [`PathSpec::road`](crate::terrain::path::spec::PathSpec::road) and
//! [`PathSpec::river`](crate::terrain::path::spec::PathSpec::river).
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
//!
//! Every entry kind has one struct whose fields are the entry's fields
//! (serde with `deny_unknown_fields`; the allow-list a key is checked
//! against is read from the struct by `fields`), in the `entries` room.
//! `dispatch` reads an entry's `frame` and `tool` (`raw_entry`) and hands
//! it to the struct of its tool (`tool`). `load` reads the file and checks
//! the script-wide limits (`limits`, `work`, `walk`); `script` holds the
//! parsed result; `error` says what was wrong.

mod dispatch;
mod entries;
mod error;
mod fields;
mod limits;
mod load;
mod raw_entry;
mod script;
mod tool;
mod walk;
mod work;

#[cfg(test)]
mod tests;

pub use entries::material::parse_material;
pub use error::{EntryError, ScriptError, SettingError};
pub use limits::{
    COPY_CELL_COST, DEFAULT_FRAME_RATE_HZ, MAX_PATH_POINTS, MAX_REPLAY_SECONDS,
    MAX_SCRIPT_FILE_BYTES, MAX_SCRIPT_FRAME, MAX_SCRIPT_WORK_CELLS,
};
pub use script::{BrushStroke, CameraKey, Script, Stroke, StrokeAction, StrokeCentre};
pub use tool::parse_tool;
pub use walk::{WalkScript, WalkStep};
