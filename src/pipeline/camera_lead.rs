//! How far ahead of a moving camera the terrain must be ready (spec §12:
//! "the frame never waits"): the preload range grows by the distance the
//! camera covers in [`LEAD_TIME_S`], so ground entering the draw distance was
//! loaded and meshed while it was still beyond it.
//!
//! A fixed margin is either too small for a fast flight (ground arrives late:
//! holes at the edge of the view) or wastes memory and meshing on a still
//! camera. The speed is measured over wall-clock windows of at least
//! [`SPEED_WINDOW_S`]; a move faster than [`MAX_TRACKED_SPEED_STUDS_PER_S`]
//! is a jump (a teleport, a new camera), which no lead can hide, and counts
//! as standing still. The lead shrinks by at most one chunk per window, so a
//! camera that pauses keeps its ring for a moment.

use std::time::Instant;

use glam::DVec3;

use crate::terrain::storage::coords::CHUNK_SIZE_STUDS;

/// Seconds of travel the preload range covers beyond the draw distance.
pub const LEAD_TIME_S: f64 = 1.5;
/// Shortest wall-clock window over which the speed is measured, s.
pub const SPEED_WINDOW_S: f64 = 0.1;
/// Faster moves are jumps, not travel, studs/s.
pub const MAX_TRACKED_SPEED_STUDS_PER_S: f64 = 4000.0;
/// Largest lead, in chunks (1,024 studs).
pub const MAX_LEAD_CHUNKS: u32 = 8;

/// Tracks the camera's speed and the lead distance it calls for.
#[derive(Clone, Debug, Default)]
pub struct CameraLead {
    window_start: Option<(Instant, DVec3)>,
    lead_chunks: u32,
}

impl CameraLead {
    /// Records the camera at `pos_world` at time `now`; returns the lead in
    /// studs (a whole number of chunks, 0 for a still camera).
    pub fn observe(&mut self, pos_world: DVec3, now: Instant) -> f64 {
        match self.window_start {
            None => self.window_start = Some((now, pos_world)),
            Some((start, start_pos)) => {
                let dt_s = now.saturating_duration_since(start).as_secs_f64();
                if dt_s >= SPEED_WINDOW_S {
                    let speed = pos_world.distance(start_pos) / dt_s;
                    let speed = if speed.is_finite() && speed <= MAX_TRACKED_SPEED_STUDS_PER_S {
                        speed
                    } else {
                        0.0
                    };
                    self.set_speed(speed);
                    self.window_start = Some((now, pos_world));
                }
            }
        }
        self.lead_studs()
    }

    /// The lead for a camera moving at `speed_studs_per_s`: grows at once,
    /// shrinks by at most one chunk per call.
    pub fn set_speed(&mut self, speed_studs_per_s: f64) {
        let wanted = (speed_studs_per_s * LEAD_TIME_S / CHUNK_SIZE_STUDS as f64)
            .ceil()
            .clamp(0.0, MAX_LEAD_CHUNKS as f64) as u32;
        self.lead_chunks = if wanted >= self.lead_chunks {
            wanted
        } else {
            self.lead_chunks - 1
        };
    }

    /// The current lead, studs.
    pub fn lead_studs(&self) -> f64 {
        f64::from(self.lead_chunks) * CHUNK_SIZE_STUDS as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_flight_at_250_studs_per_second_leads_by_three_chunks() {
        let mut lead = CameraLead::default();
        let t0 = Instant::now();
        let mut pos = DVec3::new(0.0, 500.0, 0.0);
        let mut studs = 0.0;
        for frame in 0..60 {
            pos.x += 250.0 / 60.0;
            studs = lead.observe(
                pos,
                t0 + Duration::from_secs_f64(f64::from(frame + 1) / 60.0),
            );
        }
        // 250 × 1.5 = 375 studs, rounded up to whole chunks: 3 × 128.
        assert_eq!(studs, 384.0);
    }

    #[test]
    fn a_still_camera_has_no_lead_and_a_jump_is_not_travel() {
        let mut lead = CameraLead::default();
        let t0 = Instant::now();
        let p = DVec3::new(10.0, 20.0, 30.0);
        assert_eq!(lead.observe(p, t0), 0.0);
        assert_eq!(lead.observe(p, t0 + Duration::from_millis(200)), 0.0);
        // 100 km in 0.2 s: a teleport.
        let far = p + DVec3::new(100_000.0, 0.0, 0.0);
        assert_eq!(lead.observe(far, t0 + Duration::from_millis(400)), 0.0);
        // Frames faster than the window never measure a speed.
        let mut fast = CameraLead::default();
        for i in 0..100 {
            fast.observe(DVec3::new(f64::from(i) * 50.0, 0.0, 0.0), t0);
        }
        assert_eq!(fast.lead_studs(), 0.0);
    }

    #[test]
    fn the_lead_is_capped_and_shrinks_one_chunk_at_a_time() {
        let mut lead = CameraLead::default();
        lead.set_speed(3000.0);
        assert_eq!(lead.lead_studs(), f64::from(MAX_LEAD_CHUNKS) * 128.0);
        lead.set_speed(0.0);
        assert_eq!(lead.lead_studs(), f64::from(MAX_LEAD_CHUNKS - 1) * 128.0);
        lead.set_speed(f64::NAN.max(0.0));
        assert_eq!(lead.lead_studs(), f64::from(MAX_LEAD_CHUNKS - 2) * 128.0);
    }
}
