//! Frame-by-frame recordings of a replay (`--record DIR`) and the measure
//! that finds pops in them (spec §13: "level changes do not pop").
//!
//! A camera dolly changes every frame a little; a level switch that pops
//! changes one frame much more than its neighbours. The change between two
//! frames is the mean absolute difference of their RGB values (0–255); a
//! recording's spikiness is its largest change over the median change, so
//! a smooth dolly scores near 1 and a pop stands out (a smooth flight
//! should score at most 2).

use std::path::{Path, PathBuf};

/// The file `--record DIR` writes for replayed frame `frame`.
pub fn recorded_frame_path(dir: &Path, frame: u32) -> PathBuf {
    dir.join(format!("frame_{frame:05}.png"))
}

/// Removes the frames of an earlier recording from `dir` (files named
/// `frame_NNNNN.png`; nothing else is touched), so a new, shorter
/// recording is not followed by stale frames. Returns how many went; a
/// missing folder has none.
///
/// # Errors
/// The first file that could not be removed.
pub fn clear_recording(dir: &Path) -> std::io::Result<usize> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        let is_frame = name.to_str().is_some_and(|n| {
            n.strip_prefix("frame_")
                .and_then(|r| r.strip_suffix(".png"))
                .is_some_and(|d| d.len() >= 5 && d.bytes().all(|b| b.is_ascii_digit()))
        });
        if is_frame && entry.file_type()?.is_file() {
            std::fs::remove_file(entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Why a recording could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    /// A frame could not be read or decoded.
    #[error("cannot read {path}: {message}")]
    Frame {
        /// The frame file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// Two frames differ in size.
    #[error("{path} is {got:?} pixels, the recording's frames are {want:?}")]
    SizeMismatch {
        /// The frame file.
        path: PathBuf,
        /// Its size.
        got: (u32, u32),
        /// The first frame's size.
        want: (u32, u32),
    },
    /// The recording's folder does not exist or is not a folder.
    #[error("{0} is not a folder of recorded frames")]
    NotAFolder(PathBuf),
    /// Fewer than three frames: no median change to compare with.
    #[error("{dir} holds {frames} recorded frames; at least 3 are needed")]
    TooFew {
        /// The recording's folder.
        dir: PathBuf,
        /// Frames found (`frame_00000.png` on, without gaps).
        frames: u32,
    },
}

/// How much a recording changes from frame to frame.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FrameChangeReport {
    /// Frames measured.
    pub frames: u32,
    /// Change from frame `i` to `i + 1` (mean absolute RGB difference, 0–255).
    pub changes: Vec<f64>,
    /// Median of `changes`.
    pub median: f64,
    /// Largest of `changes`.
    pub max: f64,
    /// The frame the largest change leads to.
    pub max_at_frame: u32,
    /// `max / median` (1 for a perfectly even dolly; a pop is a spike).
    pub max_over_median: f64,
    /// The local change from frame `i` to `i + 1`: the largest mean
    /// absolute RGB difference of any [`TILE_PX`]-pixel square tile. A pop
    /// changes a patch of the image; the camera's own motion changes all of
    /// it, so this shows pops the whole-image mean hides.
    pub tile_changes: Vec<f64>,
    /// Median of `tile_changes`.
    pub tile_median: f64,
    /// Largest of `tile_changes`.
    pub tile_max: f64,
    /// The frame the largest tile change leads to.
    pub tile_max_at_frame: u32,
    /// `tile_max / tile_median`.
    pub tile_max_over_median: f64,
}

/// Side of the square tiles of [`FrameChangeReport::tile_changes`], pixels.
pub const TILE_PX: u32 = 16;

/// Mean absolute RGB difference of two images of the same size (0–255).
pub fn frame_change(a: &image::RgbaImage, b: &image::RgbaImage) -> f64 {
    let total: u64 = a
        .as_raw()
        .chunks_exact(4)
        .zip(b.as_raw().chunks_exact(4))
        .map(|(p, q)| (0..3).map(|i| u64::from(p[i].abs_diff(q[i]))).sum::<u64>())
        .sum();
    let samples = (a.width() as u64 * a.height() as u64 * 3).max(1);
    total as f64 / samples as f64
}

/// The largest mean absolute RGB difference (0–255) of any whole
/// [`TILE_PX`] × [`TILE_PX`] tile of two images of the same size (the whole
/// image for one smaller than a tile).
pub fn tile_change(a: &image::RgbaImage, b: &image::RgbaImage) -> f64 {
    let (w, h) = a.dimensions();
    let (tw, th) = ((w / TILE_PX).max(1), (h / TILE_PX).max(1));
    let (sw, sh) = (w.min(TILE_PX), h.min(TILE_PX));
    let mut best = 0.0f64;
    for ty in 0..th {
        for tx in 0..tw {
            let mut total = 0u64;
            for y in ty * sh..(ty + 1) * sh {
                for x in tx * sw..(tx + 1) * sw {
                    let (p, q) = (a.get_pixel(x, y), b.get_pixel(x, y));
                    total += (0..3).map(|i| u64::from(p[i].abs_diff(q[i]))).sum::<u64>();
                }
            }
            best = best.max(total as f64 / (u64::from(sw * sh) * 3) as f64);
        }
    }
    best
}

/// Measures the recording in `dir`: `frame_00000.png` on, up to the first
/// missing number, one frame in memory at a time besides the previous.
///
/// # Errors
/// [`RecordingError`] for an unreadable frame, frames of different sizes,
/// or fewer than three frames.
pub fn measure_recording(dir: &Path) -> Result<FrameChangeReport, RecordingError> {
    if !dir.is_dir() {
        return Err(RecordingError::NotAFolder(dir.to_path_buf()));
    }
    let read = |path: &Path| {
        image::open(path)
            .map(|i| i.to_rgba8())
            .map_err(|e| RecordingError::Frame {
                path: path.to_path_buf(),
                message: e.to_string(),
            })
    };
    let mut changes = Vec::new();
    let mut tile_changes = Vec::new();
    let mut previous: Option<image::RgbaImage> = None;
    let mut frames = 0u32;
    loop {
        let path = recorded_frame_path(dir, frames);
        if !path.exists() {
            break;
        }
        let image = read(&path)?;
        if let Some(prev) = &previous {
            if prev.dimensions() != image.dimensions() {
                return Err(RecordingError::SizeMismatch {
                    path,
                    got: image.dimensions(),
                    want: prev.dimensions(),
                });
            }
            changes.push(frame_change(prev, &image));
            tile_changes.push(tile_change(prev, &image));
        }
        previous = Some(image);
        frames += 1;
    }
    if frames < 3 {
        return Err(RecordingError::TooFew {
            dir: dir.to_path_buf(),
            frames,
        });
    }
    Ok(report_of(frames, changes, tile_changes))
}

/// Median, largest, the frame the largest leads to, and their ratio, of
/// `changes` (at least two).
fn spread(changes: &[f64]) -> (f64, f64, u32, f64) {
    let mut sorted = changes.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) * 0.5
    };
    let (max_index, max) =
        changes
            .iter()
            .copied()
            .enumerate()
            .fold(
                (0, f64::MIN),
                |best, (i, c)| if c > best.1 { (i, c) } else { best },
            );
    let ratio = if median > 0.0 {
        max / median
    } else {
        f64::INFINITY
    };
    (median, max, max_index as u32 + 1, ratio)
}

/// The report of `changes` and `tile_changes` between `frames` frames (at
/// least two changes).
fn report_of(frames: u32, changes: Vec<f64>, tile_changes: Vec<f64>) -> FrameChangeReport {
    let (median, max, max_at_frame, max_over_median) = spread(&changes);
    let (tile_median, tile_max, tile_max_at_frame, tile_max_over_median) = spread(&tile_changes);
    FrameChangeReport {
        frames,
        median,
        max,
        max_at_frame,
        max_over_median,
        changes,
        tile_changes,
        tile_median,
        tile_max,
        tile_max_at_frame,
        tile_max_over_median,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 32×16 image: a grey ramp shifted by `shift` pixels.
    fn ramp(shift: u32) -> image::RgbaImage {
        image::RgbaImage::from_fn(32, 16, |x, _| {
            let v = (((x + shift) * 8) % 256) as u8;
            image::Rgba([v, v, v, 255])
        })
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("strata-rec-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn an_even_dolly_scores_near_one_and_a_pop_stands_out() {
        let dir = scratch("pop");
        // Frames 0..10 shift one pixel each; frame 6 jumps (a pop) and back.
        for f in 0..10u32 {
            let img = if f == 6 { ramp(f + 12) } else { ramp(f) };
            img.save(recorded_frame_path(&dir, f)).unwrap();
        }
        let r = measure_recording(&dir).unwrap();
        assert_eq!(r.frames, 10);
        assert_eq!(r.changes.len(), 9);
        assert_eq!(r.max_at_frame, 6);
        assert!(r.max_over_median > 3.0, "{r:?}");
        // Without the jump every step changes about as much as the others.
        let even = scratch("even");
        for f in 0..10u32 {
            ramp(f).save(recorded_frame_path(&even, f)).unwrap();
        }
        let r = measure_recording(&even).unwrap();
        assert!(r.max_over_median < 1.2, "{r:?}");
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&even);
    }

    #[test]
    fn a_local_pop_stands_out_in_the_tile_changes_only() {
        let dir = scratch("local-pop");
        // 64×32 frames that all change a little everywhere (the camera's
        // motion); frame 5 changes one 16×16 patch a lot (a pop) and stays.
        for f in 0..10u32 {
            let img = image::RgbaImage::from_fn(64, 32, |x, y| {
                let v = (((x + f) * 4) % 200) as u8;
                let pop = f >= 5 && x < 16 && y < 16;
                image::Rgba(if pop {
                    [255, 0, 0, 255]
                } else {
                    [v, v, v, 255]
                })
            });
            img.save(recorded_frame_path(&dir, f)).unwrap();
        }
        let r = measure_recording(&dir).unwrap();
        assert_eq!(r.tile_changes.len(), 9);
        assert_eq!(r.tile_max_at_frame, 5);
        assert!(r.tile_max_over_median > 5.0, "{r:?}");
        assert!(r.max_over_median < r.tile_max_over_median, "{r:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn bad_recordings_are_typed_errors() {
        let dir = scratch("bad");
        ramp(0).save(recorded_frame_path(&dir, 0)).unwrap();
        ramp(1).save(recorded_frame_path(&dir, 1)).unwrap();
        assert!(matches!(
            measure_recording(&dir),
            Err(RecordingError::TooFew { frames: 2, .. })
        ));
        image::RgbaImage::new(8, 8)
            .save(recorded_frame_path(&dir, 2))
            .unwrap();
        assert!(matches!(
            measure_recording(&dir),
            Err(RecordingError::SizeMismatch { .. })
        ));
        std::fs::write(recorded_frame_path(&dir, 2), b"not a png").unwrap();
        assert!(matches!(
            measure_recording(&dir),
            Err(RecordingError::Frame { .. })
        ));
        assert!(matches!(
            measure_recording(&dir.join("missing")),
            Err(RecordingError::NotAFolder(_))
        ));
        // Clearing takes the frames and leaves other files alone.
        std::fs::write(dir.join("notes.txt"), b"keep").unwrap();
        assert_eq!(clear_recording(&dir).unwrap(), 3);
        assert!(dir.join("notes.txt").exists());
        assert_eq!(clear_recording(&dir.join("missing")).unwrap(), 0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
