//! A parsed, validated script in memory: its entries ([`Stroke`]), the
//! brush strokes and edit commands they run, and its camera keyframes.

use glam::DVec3;

use crate::terrain::command::edit_command::EditCommand;
use crate::terrain::editing::brush::{Brush, BrushOptions};

use super::walk::WalkScript;

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

    /// The last frame with a stroke (0 for an empty script).
    pub fn last_frame(&self) -> u32 {
        self.strokes.last().map_or(0, |s| s.frame)
    }

    /// True when some stroke drops onto the surface (needs the initial meshes to pick).
    pub fn needs_surface(&self) -> bool {
        self.surface_points().next().is_some()
    }

    /// Every `*_xz` point of the brush strokes, `(x, z)` in studs, in file
    /// order (repeats included).
    pub fn surface_points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.strokes
            .iter()
            .filter_map(|s| s.action.brush())
            .flat_map(|b| b.path.iter())
            .filter_map(|c| match *c {
                StrokeCentre::OnSurface { x, z } => Some((x, z)),
                StrokeCentre::World(_) => None,
            })
    }
}
