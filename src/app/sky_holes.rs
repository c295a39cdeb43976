//! Sky seen through the ground: where the `holes` overlay expects ground
//! ([`ground_extent`]) and how many of a frame's pixels show a hole
//! ([`count_hole_pixels`]). A recorded flight counts them per frame, so
//! coverage while streaming (spec §13: "the visible ground is always
//! covered") is measured in the picture the artist sees, not only in the
//! horizon's own bookkeeping.

use std::time::Instant;

use glam::DVec2;

use crate::pipeline::stats::{Samples, UploadSummary};
use crate::pipeline::streaming::TerrainStreaming;
use crate::render::frame::frame_settings::GroundExtent;
use crate::render::lines::overlays::HOLE_COLOR_SRGB;
use crate::terrain::storage::coords::CELL_SIZE_STUDS;

/// The ground of a streaming world with a horizon: its footprint, drawn out
/// to the draw distance. `None` for a world held whole (its ground ends
/// where its chunks do) or an infinite draw distance.
pub fn ground_extent(streaming: &TerrainStreaming) -> Option<GroundExtent> {
    let horizon = streaming.horizon()?;
    let [w, d] = horizon.extent_cells();
    let cell = f64::from(CELL_SIZE_STUDS);
    let reach_studs = streaming.lod().settings.draw_distance_studs;
    reach_studs.is_finite().then(|| GroundExtent {
        min_xz_world: DVec2::ZERO,
        max_xz_world: DVec2::new(w as f64 * cell, d as f64 * cell),
        reach_studs,
    })
}

/// Pixels of `image` painted [`HOLE_COLOR_SRGB`] by the `holes` overlay.
pub fn count_hole_pixels(image: &image::RgbaImage) -> usize {
    image
        .pixels()
        .filter(|p| p.0[..3] == HOLE_COLOR_SRGB)
        .count()
}

/// Frames a coverage report leaves out at the start of a recording: the
/// first view streams in there, before the flight is under way.
pub const COVERAGE_WARMUP_FRAMES: u32 = 60;

/// What each recorded frame showed, in order.
#[derive(Clone, Debug, Default)]
pub struct CoverageLog {
    /// `(replayed frame, hole pixels or None without the overlay, when)`.
    frames: Vec<(u32, Option<usize>, Instant)>,
}

impl CoverageLog {
    /// Notes recorded frame `frame`, presented at `at`, with `hole_pixels`
    /// (`None` when the `holes` overlay was off, so nothing was counted).
    pub fn record(&mut self, frame: u32, hole_pixels: Option<usize>, at: Instant) {
        self.frames.push((frame, hole_pixels, at));
    }

    /// The report (`None` before any frame was recorded).
    pub fn summary(&self, real_time: bool) -> Option<CoverageSummary> {
        let first = self.frames.first()?;
        let mut frame_ms = Samples::default();
        for pair in self.frames.windows(2) {
            frame_ms.push(pair[1].2.duration_since(pair[0].2).as_secs_f64() * 1e3);
        }
        let counted = self.frames.iter().all(|f| f.1.is_some());
        let holes: Vec<usize> = self.frames.iter().map(|f| f.1.unwrap_or(0)).collect();
        let with_holes = |from: u32| {
            self.frames
                .iter()
                .filter(|f| f.0 >= from && f.1.is_some_and(|h| h > 0))
                .count()
        };
        Some(CoverageSummary {
            real_time,
            frames: self.frames.len(),
            flight_s: self
                .frames
                .last()
                .map_or(0.0, |l| l.2.duration_since(first.2).as_secs_f64()),
            frame_ms: UploadSummary::of(&mut frame_ms),
            holes_counted: counted,
            frames_with_holes: with_holes(0),
            frames_with_holes_after_warmup: with_holes(first.0 + COVERAGE_WARMUP_FRAMES),
            most_hole_pixels: holes.iter().copied().max().unwrap_or(0),
            hole_pixels_by_frame: if counted { holes } else { Vec::new() },
        })
    }
}

/// `"coverage"` in `--stats-json` for a recording: its frame times and, with
/// `--overlay holes`, the sky seen through the ground in each frame.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct CoverageSummary {
    /// Script time followed the wall clock (`--real-time`).
    pub real_time: bool,
    /// Frames recorded.
    pub frames: usize,
    /// Wall time from the first recorded frame to the last, seconds.
    pub flight_s: f64,
    /// Time between recorded frames, ms (`null` for a single frame).
    pub frame_ms: Option<UploadSummary>,
    /// True when the `holes` overlay was on, so holes were counted.
    pub holes_counted: bool,
    /// Frames showing at least one hole pixel.
    pub frames_with_holes: usize,
    /// Of those, frames after the first [`COVERAGE_WARMUP_FRAMES`].
    pub frames_with_holes_after_warmup: usize,
    /// Most hole pixels in one frame.
    pub most_hole_pixels: usize,
    /// Hole pixels of every frame, in order (empty when not counted).
    pub hole_pixels_by_frame: Vec<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exact_hole_pixels_count() {
        let mut image = image::RgbaImage::from_pixel(4, 2, image::Rgba([120, 170, 230, 255]));
        image.put_pixel(0, 0, image::Rgba([255, 0, 255, 255]));
        image.put_pixel(3, 1, image::Rgba([255, 0, 255, 128]));
        // A skirt tinted magenta and shaded is not a hole.
        image.put_pixel(1, 1, image::Rgba([250, 0, 250, 255]));
        assert_eq!(count_hole_pixels(&image), 2);
    }

    #[test]
    fn the_warm_up_frames_are_left_out_and_frame_times_come_from_presentations() {
        let t0 = Instant::now();
        let mut log = CoverageLog::default();
        for frame in 0..70u32 {
            let holes = match frame {
                3 => 40,
                65 => 7,
                _ => 0,
            };
            let at = t0 + std::time::Duration::from_millis(u64::from(frame) * 750);
            log.record(frame, Some(holes), at);
        }
        let s = log.summary(true).expect("frames were recorded");
        assert_eq!(s.frames, 70);
        assert_eq!(s.frames_with_holes, 2);
        assert_eq!(s.frames_with_holes_after_warmup, 1);
        assert_eq!(s.most_hole_pixels, 40);
        assert_eq!(s.hole_pixels_by_frame[65], 7);
        let ms = s.frame_ms.expect("69 intervals");
        assert!((ms.p50 - 750.0).abs() < 1e-6, "{ms:?}");
        assert!((s.flight_s - 69.0 * 0.75).abs() < 1e-9);
    }
}
