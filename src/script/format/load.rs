//! Loading a script: the file's top-level object, its script-wide settings,
//! every entry in turn, and the limits the whole script must keep (work,
//! replay length, the walk), all checked before anything runs.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::terrain::command::history::DEFAULT_HISTORY_BUDGET_BYTES;
use crate::terrain::materials::MaterialLibrary;

use super::dispatch::{Entry, parse_entry};
use super::entries::stamp::StampFiles;
use super::error::{EntryError, ScriptError, SettingError};
use super::limits::{
    DEFAULT_FRAME_RATE_HZ, MAX_REPLAY_SECONDS, MAX_SCRIPT_FILE_BYTES, MAX_SCRIPT_WORK_CELLS,
};
use super::raw_entry::RawEntry;
use super::script::{CameraKey, Script, Stroke};
use super::walk::{WalkScript, validate_walk};
use super::work::{estimate_work, stroke_applications};

/// The file's top-level object; each entry is kept as its text, read by
/// [`parse_entry`] once its tool is known.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptFile<'a> {
    #[serde(default)]
    frame_rate_hz: Option<f64>,
    #[serde(default)]
    history_budget_mib: Option<f64>,
    #[serde(borrow)]
    strokes: Vec<&'a RawValue>,
    #[serde(default)]
    walk: Option<WalkScript>,
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
        Script::load_for(path, &MaterialLibrary::default())
    }

    /// [`Script::load`] for a world whose materials are `library`: its
    /// entries may name the world's added materials (and renamed
    /// built-ins) as well as the built-ins.
    ///
    /// # Errors
    /// As [`Script::load`].
    pub fn load_for(path: &Path, library: &MaterialLibrary) -> Result<Script, ScriptError> {
        let text =
            crate::io::read_bounded_to_string(path, MAX_SCRIPT_FILE_BYTES).map_err(|source| {
                ScriptError::Read {
                    path: path.display().to_string(),
                    source,
                }
            })?;
        Script::parse_for(
            &text,
            &path.display().to_string(),
            path.parent().map(Path::to_path_buf),
            library,
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
        Script::parse_for(text, name, stamp_dir, &MaterialLibrary::default())
    }

    /// [`Script::parse_in`] for a world whose materials are `library` (see
    /// [`Script::load_for`]).
    ///
    /// # Errors
    /// As [`Script::load`].
    pub fn parse_for(
        text: &str,
        name: &str,
        stamp_dir: Option<PathBuf>,
        library: &MaterialLibrary,
    ) -> Result<Script, ScriptError> {
        let file: ScriptFile = serde_json::from_str(text).map_err(|source| ScriptError::Parse {
            path: name.to_string(),
            source,
        })?;
        let setting = |source: SettingError| ScriptError::Setting {
            path: name.to_string(),
            source,
        };
        let frame_rate_hz = frame_rate(file.frame_rate_hz).map_err(setting)?;
        let history_budget_bytes = history_budget(file.history_budget_mib).map_err(setting)?;
        let (mut strokes, mut camera_keys) =
            parse_entries(text, &file.strokes, StampFiles::new(stamp_dir), library).map_err(
                |(index, source)| ScriptError::Stroke {
                    path: name.to_string(),
                    index,
                    source,
                },
            )?;
        check_work(&strokes).map_err(setting)?;
        strokes.sort_by_key(|s| s.frame);
        camera_keys.sort_by_key(|k| k.frame);
        check_replay_length(&strokes, &camera_keys, frame_rate_hz).map_err(setting)?;
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
}

/// `frame_rate_hz`, default [`DEFAULT_FRAME_RATE_HZ`], within 1..=1000.
fn frame_rate(given: Option<f64>) -> Result<f64, SettingError> {
    let hz = given.unwrap_or(DEFAULT_FRAME_RATE_HZ);
    if hz.is_finite() && (1.0..=1000.0).contains(&hz) {
        Ok(hz)
    } else {
        Err(SettingError::FrameRate(hz))
    }
}

/// The history budget in bytes from `history_budget_mib` (1..=65536),
/// default [`DEFAULT_HISTORY_BUDGET_BYTES`].
fn history_budget(given_mib: Option<f64>) -> Result<usize, SettingError> {
    match given_mib {
        None => Ok(DEFAULT_HISTORY_BUDGET_BYTES),
        Some(m) if m.is_finite() && (1.0..=65536.0).contains(&m) => {
            Ok((m * (1u64 << 20) as f64) as usize)
        }
        Some(m) => Err(SettingError::HistoryBudget(m)),
    }
}

/// Every entry in file order: the strokes and the camera keyframes.
///
/// # Errors
/// The first bad entry's index and error, including a second camera
/// keyframe on one frame.
fn parse_entries(
    text: &str,
    raws: &[&RawValue],
    mut stamps: StampFiles,
    library: &MaterialLibrary,
) -> Result<(Vec<Stroke>, Vec<CameraKey>), (usize, EntryError)> {
    let mut strokes = Vec::with_capacity(raws.len());
    let mut camera_keys: Vec<CameraKey> = Vec::new();
    for (index, raw) in raws.iter().enumerate() {
        let entry =
            parse_entry(&RawEntry::new(text, raw), &mut stamps, library).map_err(|e| (index, e))?;
        match entry {
            Entry::Camera(key) => {
                if camera_keys.iter().any(|k| k.frame == key.frame) {
                    return Err((index, EntryError::DuplicateCameraFrame(key.frame)));
                }
                camera_keys.push(key);
            }
            Entry::Stroke(stroke) => strokes.push(stroke),
        }
    }
    Ok((strokes, camera_keys))
}

/// Refuses strokes (in file order) estimated above [`MAX_SCRIPT_WORK_CELLS`],
/// a stroke with a segment of more than
/// [`MAX_APPLICATIONS_PER_SEGMENT`](crate::terrain::editing::stroke::MAX_APPLICATIONS_PER_SEGMENT)
/// applications, and strokes of more than
/// [`MAX_SCRIPT_APPLICATIONS`](super::limits::MAX_SCRIPT_APPLICATIONS)
/// applications in all.
fn check_work(strokes: &[Stroke]) -> Result<(), SettingError> {
    let (cells, heaviest_index, heaviest_cells, heaviest_applications) =
        estimate_work(strokes.iter().map(|s| &s.action));
    if cells.is_nan() || cells > MAX_SCRIPT_WORK_CELLS {
        return Err(SettingError::TooMuchWork {
            cells,
            heaviest_index,
            heaviest_cells,
            heaviest_applications,
        });
    }
    let mut applications = 0.0;
    for (index, stroke) in strokes.iter().enumerate() {
        if let Some((total, longest)) = stroke_applications(&stroke.action) {
            if longest.is_nan()
                || longest > crate::terrain::editing::stroke::MAX_APPLICATIONS_PER_SEGMENT as f64
            {
                return Err(SettingError::SegmentTooLong {
                    index,
                    applications: longest,
                });
            }
            applications += total;
        }
    }
    if applications.is_nan() || applications > super::limits::MAX_SCRIPT_APPLICATIONS {
        return Err(SettingError::TooManyApplications { applications });
    }
    Ok(())
}

/// Refuses a replay whose last stroke or keyframe (both sorted by frame)
/// comes after [`MAX_REPLAY_SECONDS`].
fn check_replay_length(
    strokes: &[Stroke],
    camera_keys: &[CameraKey],
    frame_rate_hz: f64,
) -> Result<(), SettingError> {
    let last_frame = strokes
        .last()
        .map_or(0, |s| s.frame)
        .max(camera_keys.last().map_or(0, |k| k.frame));
    let seconds = f64::from(last_frame) / frame_rate_hz;
    if seconds > MAX_REPLAY_SECONDS {
        return Err(SettingError::ReplayTooLong {
            last_frame,
            frame_rate_hz,
            seconds,
        });
    }
    Ok(())
}
