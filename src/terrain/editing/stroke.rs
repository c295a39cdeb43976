//! Continuous strokes: where along the cursor path a held brush is applied.
//!
//! Applications are spaced by distance along the path (a fraction of the
//! brush radius), not by frame rate, so a stroke's result depends on where
//! the cursor went and not on how fast the editor drew frames. Plane lock
//! keeps a stroke on the plane of its first hit: later cursor rays are
//! intersected with that plane instead of the (changing) surface.

use glam::DVec3;

use crate::terrain::storage::coords::CELL_SIZE_STUDS;

/// Default spacing between applications, as a fraction of the brush radius.
pub const DEFAULT_SPACING_FRACTION: f32 = 0.25;

/// Allowed spacing fractions.
pub const SPACING_FRACTION_RANGE: std::ops::RangeInclusive<f32> = 0.05..=4.0;

/// Bad stroke settings.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum StrokeError {
    /// Spacing not finite or outside [`SPACING_FRACTION_RANGE`].
    #[error("stroke spacing {0} is outside 0.05..=4 (a fraction of the radius)")]
    InvalidSpacing(f32),
    /// Radius not finite or not positive.
    #[error("stroke radius {0} cells is not a positive number")]
    InvalidRadius(f32),
    /// A path point with a NaN or infinite component.
    #[error("stroke point {0:?} is not finite")]
    InvalidPoint(DVec3),
    /// One segment of the path would apply the brush more than
    /// [`MAX_APPLICATIONS_PER_SEGMENT`] times (a point far off the world).
    #[error(
        "stroke segment of {length_studs:.0} studs would apply the brush more than {limit} times"
    )]
    SegmentTooLong {
        /// Length of the segment, studs.
        length_studs: f64,
        /// The limit on applications.
        limit: usize,
    },
}

/// Most brush applications one path segment may produce: a 64-cell brush at
/// the smallest spacing crosses a 4096-cell world in under 2,000, so this
/// only stops a runaway (a point millions of studs away).
pub const MAX_APPLICATIONS_PER_SEGMENT: usize = 100_000;

/// Emits brush centres every `spacing` studs along a polyline fed one cursor
/// position at a time.
#[derive(Clone, Debug)]
pub struct StrokeSampler {
    spacing_studs: f64,
    /// The last cursor position fed.
    last: Option<DVec3>,
    /// Path length walked since the last emitted centre.
    since_emit_studs: f64,
}

impl StrokeSampler {
    /// A sampler for a brush of `radius_cells` applying every
    /// `spacing_fraction × radius` along the path.
    ///
    /// # Errors
    /// [`StrokeError`] for a spacing outside [`SPACING_FRACTION_RANGE`] or a
    /// non-positive radius.
    pub fn new(radius_cells: f32, spacing_fraction: f32) -> Result<StrokeSampler, StrokeError> {
        if !spacing_fraction.is_finite() || !SPACING_FRACTION_RANGE.contains(&spacing_fraction) {
            return Err(StrokeError::InvalidSpacing(spacing_fraction));
        }
        if !radius_cells.is_finite() || radius_cells <= 0.0 {
            return Err(StrokeError::InvalidRadius(radius_cells));
        }
        Ok(StrokeSampler {
            spacing_studs: (spacing_fraction * radius_cells * CELL_SIZE_STUDS) as f64,
            last: None,
            since_emit_studs: 0.0,
        })
    }

    /// Distance between applications, studs.
    pub fn spacing_studs(&self) -> f64 {
        self.spacing_studs
    }

    /// Feeds the next cursor position and returns the brush centres reached
    /// on the way from the previous one: the first position itself, then one
    /// every spacing along the straight segments between positions.
    ///
    /// # Errors
    /// [`StrokeError::InvalidPoint`] for a non-finite point and
    /// [`StrokeError::SegmentTooLong`] for a segment that would apply the
    /// brush more than [`MAX_APPLICATIONS_PER_SEGMENT`] times (nothing
    /// changes either way).
    pub fn advance(&mut self, to: DVec3) -> Result<Vec<DVec3>, StrokeError> {
        if !to.is_finite() {
            return Err(StrokeError::InvalidPoint(to));
        }
        if let Some(from) = self.last {
            let length_studs = from.distance(to);
            if length_studs / self.spacing_studs > MAX_APPLICATIONS_PER_SEGMENT as f64 {
                return Err(StrokeError::SegmentTooLong {
                    length_studs,
                    limit: MAX_APPLICATIONS_PER_SEGMENT,
                });
            }
        }
        let Some(from) = self.last else {
            self.last = Some(to);
            self.since_emit_studs = 0.0;
            return Ok(vec![to]);
        };
        self.last = Some(to);
        let length = from.distance(to);
        let mut out = Vec::new();
        if length <= 0.0 {
            return Ok(out);
        }
        let dir = (to - from) / length;
        let mut at = self.spacing_studs - self.since_emit_studs;
        while at <= length {
            out.push(from + dir * at);
            at += self.spacing_studs;
        }
        self.since_emit_studs = length - (at - self.spacing_studs);
        Ok(out)
    }
}

/// A plane through `point` with unit `normal`, world studs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LockPlane {
    /// A point on the plane.
    pub point: DVec3,
    /// Unit normal.
    pub normal: DVec3,
}

impl LockPlane {
    /// The plane through `point` with `normal` (normalized); `None` for a
    /// zero or non-finite normal or point.
    pub fn new(point: DVec3, normal: DVec3) -> Option<LockPlane> {
        let normal = normal.try_normalize()?;
        point.is_finite().then_some(LockPlane { point, normal })
    }

    /// Where the ray `origin + t·dir` (t > 0) meets the plane, if it does.
    pub fn intersect_ray(&self, origin: DVec3, dir: DVec3) -> Option<DVec3> {
        let denom = dir.dot(self.normal);
        if denom.abs() < 1e-9 {
            return None;
        }
        let t = (self.point - origin).dot(self.normal) / denom;
        (t > 0.0 && t.is_finite()).then(|| origin + dir * t)
    }

    /// The closest point of the plane to `p`.
    pub fn project(&self, p: DVec3) -> DVec3 {
        p - self.normal * (p - self.point).dot(self.normal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_by_distance_not_by_call_count() {
        // Radius 4 cells, spacing 0.5: one application every 8 studs.
        let mut s = StrokeSampler::new(4.0, 0.5).unwrap();
        assert_eq!(s.spacing_studs(), 8.0);
        assert_eq!(s.advance(DVec3::ZERO).unwrap(), vec![DVec3::ZERO]);
        // Many tiny moves add up: 20 moves of 1 stud emit at 8 and 16.
        let mut all = Vec::new();
        for i in 1..=20 {
            all.extend(s.advance(DVec3::new(i as f64, 0.0, 0.0)).unwrap());
        }
        assert_eq!(
            all,
            vec![DVec3::new(8.0, 0.0, 0.0), DVec3::new(16.0, 0.0, 0.0)]
        );
        // One big move from 20 to 40 emits at 24, 32 and 40.
        assert_eq!(
            s.advance(DVec3::new(40.0, 0.0, 0.0)).unwrap(),
            vec![
                DVec3::new(24.0, 0.0, 0.0),
                DVec3::new(32.0, 0.0, 0.0),
                DVec3::new(40.0, 0.0, 0.0)
            ]
        );
        assert!(s.advance(DVec3::new(40.0, 0.0, 0.0)).unwrap().is_empty());
    }

    #[test]
    fn bad_settings_and_points_are_rejected() {
        assert_eq!(
            StrokeSampler::new(4.0, 0.0).unwrap_err(),
            StrokeError::InvalidSpacing(0.0)
        );
        assert!(StrokeSampler::new(f32::NAN, 0.5).is_err());
        let mut s = StrokeSampler::new(4.0, 0.5).unwrap();
        assert!(s.advance(DVec3::new(f64::NAN, 0.0, 0.0)).is_err());
        assert_eq!(s.advance(DVec3::ONE).unwrap(), vec![DVec3::ONE]);
    }

    #[test]
    fn lock_plane_intersects_and_projects() {
        let p = LockPlane::new(DVec3::new(0.0, 10.0, 0.0), DVec3::new(0.0, 2.0, 0.0)).unwrap();
        assert_eq!(
            p.intersect_ray(DVec3::new(3.0, 20.0, 4.0), DVec3::new(0.0, -1.0, 0.0)),
            Some(DVec3::new(3.0, 10.0, 4.0))
        );
        assert_eq!(p.intersect_ray(DVec3::new(3.0, 20.0, 4.0), DVec3::Y), None);
        assert_eq!(
            p.project(DVec3::new(1.0, -5.0, 2.0)),
            DVec3::new(1.0, 10.0, 2.0)
        );
        assert!(LockPlane::new(DVec3::ZERO, DVec3::ZERO).is_none());
    }

    #[test]
    fn a_segment_to_a_point_far_off_the_world_is_rejected_without_change() {
        let mut sampler = StrokeSampler::new(64.0, 0.25).unwrap();
        sampler.advance(DVec3::new(0.0, 60.0, 0.0)).unwrap();
        // The input that ran away in a script: a path end at 1e15 studs.
        let far = DVec3::new(1e15, 60.0, 1e15);
        assert!(matches!(
            sampler.advance(far),
            Err(StrokeError::SegmentTooLong { .. })
        ));
        // The sampler still continues from the last accepted point.
        assert_eq!(
            sampler.advance(DVec3::new(64.0, 60.0, 0.0)).unwrap().len(),
            1
        );
    }
}
