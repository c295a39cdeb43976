//! The centreline of a path: a smooth curve through the artist's control
//! points, sampled at even arc-length spacing so every later phase (the
//! vertical profile, the carve, the grade measurement) can treat the path
//! as a list of equally spaced points.
//!
//! The curve is a centripetal Catmull-Rom spline (α = 0.5), which passes
//! through every control point and, unlike the uniform variant, never forms
//! cusps or self-intersections within a segment (Yuksel, Schaefer and
//! Keyser, "Parameterization and applications of Catmull-Rom curves",
//! CAD 2011). It is evaluated with the Barry–Goldman pyramid. The ends use
//! phantom points mirrored through the first and last control points, so
//! the curve starts and ends heading along its first and last chord.
//!
//! The spline is unit-agnostic: points and spacing share one unit (the
//! path tool works in cells).

use glam::DVec2;

/// Dense evaluation steps per unit of chord length before resampling
/// (8 per cell when the unit is cells: far finer than the half-cell output).
const DENSE_STEPS_PER_UNIT: f64 = 8.0;

/// Consecutive control points closer than this are merged (a zero-length
/// chord has no direction).
pub const MIN_CHORD: f64 = 1e-6;

/// A curve sampled at even arc-length spacing.
#[derive(Clone, Debug, PartialEq)]
pub struct SampledCurve {
    /// Sample points in the plane, in the unit of the control points; the
    /// first is the first control point, the last the last one.
    pub points: Vec<DVec2>,
    /// Arc length from the start to each sample, same unit; increasing.
    pub arc: Vec<f64>,
}

impl SampledCurve {
    /// Arc length of the whole curve.
    pub fn length(&self) -> f64 {
        self.arc.last().copied().unwrap_or(0.0)
    }

    /// The first `samples` samples (all of them when there are fewer).
    pub fn truncated(mut self, samples: usize) -> SampledCurve {
        self.points.truncate(samples);
        self.arc.truncate(samples);
        self
    }
}

/// The control points with consecutive duplicates (closer than
/// [`MIN_CHORD`]) removed.
pub fn dedup_points(points: &[DVec2]) -> Vec<DVec2> {
    let mut out: Vec<DVec2> = Vec::with_capacity(points.len());
    for &p in points {
        if out.last().is_none_or(|q| q.distance(p) >= MIN_CHORD) {
            out.push(p);
        }
    }
    out
}

/// Sum of the chord lengths between consecutive points (the polyline
/// length; the spline is about as long).
pub fn chord_length(points: &[DVec2]) -> f64 {
    points.windows(2).map(|w| w[0].distance(w[1])).sum()
}

/// One point of the centripetal Catmull-Rom segment from `p[1]` to `p[2]`
/// at `t` in `[0, 1]` (Barry–Goldman). Chords must be longer than
/// [`MIN_CHORD`].
fn segment_point(p: [DVec2; 4], t: f64) -> DVec2 {
    // Knot spacing: the square root of the chord length (α = 0.5).
    let k1 = p[0].distance(p[1]).sqrt().max(MIN_CHORD);
    let k2 = p[1].distance(p[2]).sqrt().max(MIN_CHORD);
    let k3 = p[2].distance(p[3]).sqrt().max(MIN_CHORD);
    let (t0, t1) = (0.0, k1);
    let t2 = t1 + k2;
    let t3 = t2 + k3;
    let u = t1 + (t2 - t1) * t;
    let lerp = |a: DVec2, b: DVec2, ta: f64, tb: f64| {
        a * ((tb - u) / (tb - ta)) + b * ((u - ta) / (tb - ta))
    };
    let a1 = lerp(p[0], p[1], t0, t1);
    let a2 = lerp(p[1], p[2], t1, t2);
    let a3 = lerp(p[2], p[3], t2, t3);
    let b1 = lerp(a1, a2, t0, t2);
    let b2 = lerp(a2, a3, t1, t3);
    lerp(b1, b2, t1, t2)
}

/// The spline through `points` (at least two, no consecutive duplicates:
/// see [`dedup_points`]) as a dense polyline.
fn dense_polyline(points: &[DVec2]) -> Vec<DVec2> {
    let n = points.len();
    let at = |i: isize| -> DVec2 {
        if i < 0 {
            points[0] * 2.0 - points[1]
        } else if i as usize >= n {
            points[n - 1] * 2.0 - points[n - 2]
        } else {
            points[i as usize]
        }
    };
    let mut out = vec![points[0]];
    for i in 0..n - 1 {
        let quad = [
            at(i as isize - 1),
            at(i as isize),
            at(i as isize + 1),
            at(i as isize + 2),
        ];
        let chord = quad[1].distance(quad[2]);
        let steps = (chord * DENSE_STEPS_PER_UNIT).ceil().max(4.0) as usize;
        for k in 1..=steps {
            out.push(segment_point(quad, k as f64 / steps as f64));
        }
    }
    out
}

/// Samples the spline through `points` every `spacing` along its arc
/// length; the last sample is the last control point (its interval may be
/// shorter). With fewer than two distinct points the curve is that one
/// point (a single sample).
///
/// `spacing` must be positive and finite; the caller bounds the length
/// (the sample count is `length / spacing + 2`).
pub fn sample_spline(points: &[DVec2], spacing: f64) -> SampledCurve {
    let points = dedup_points(points);
    if points.len() < 2 {
        return SampledCurve {
            points: points.clone(),
            arc: vec![0.0; points.len()],
        };
    }
    let dense = dense_polyline(&points);
    let mut out_points = vec![dense[0]];
    let mut out_arc = vec![0.0];
    let mut travelled = 0.0;
    let mut next = spacing;
    for w in dense.windows(2) {
        let seg = w[0].distance(w[1]);
        while seg > 0.0 && travelled + seg >= next {
            let t = (next - travelled) / seg;
            out_points.push(w[0].lerp(w[1], t));
            out_arc.push(next);
            next += spacing;
        }
        travelled += seg;
    }
    // The end point, unless the last even sample already sits on it.
    let end = dense[dense.len() - 1];
    if travelled - out_arc[out_arc.len() - 1] > spacing * 1e-3 {
        out_points.push(end);
        out_arc.push(travelled);
    } else {
        let last = out_points.len() - 1;
        out_points[last] = end;
    }
    SampledCurve {
        points: out_points,
        arc: out_arc,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_through_every_control_point_at_even_spacing() {
        let pts = [
            DVec2::new(0.0, 0.0),
            DVec2::new(10.0, 0.0),
            DVec2::new(20.0, 10.0),
            DVec2::new(20.0, 30.0),
        ];
        let c = sample_spline(&pts, 0.5);
        assert_eq!(c.points[0], pts[0]);
        assert_eq!(*c.points.last().unwrap(), pts[3]);
        // Every control point lies on the sampled curve (within a spacing).
        for p in &pts {
            let nearest = c
                .points
                .iter()
                .map(|q| q.distance(*p))
                .fold(f64::INFINITY, f64::min);
            assert!(nearest < 0.26, "{p}: {nearest}");
        }
        // Consecutive samples are one spacing apart along the curve, and
        // the straight distance between them is just under it.
        for (w, a) in c
            .points
            .windows(2)
            .zip(c.arc.windows(2))
            .take(c.points.len() - 2)
        {
            assert!((a[1] - a[0] - 0.5).abs() < 1e-9);
            let d = w[0].distance(w[1]);
            assert!(d <= 0.5 + 1e-9 && d > 0.49, "{d}");
        }
        // Longer than the chords (it bends), but not by much.
        let chords = chord_length(&pts);
        assert!(c.length() >= chords - 1e-6 && c.length() < chords * 1.1);
    }

    #[test]
    fn a_straight_line_stays_straight_and_duplicates_are_merged() {
        let pts = [
            DVec2::new(0.0, 5.0),
            DVec2::new(3.0, 5.0),
            DVec2::new(3.0, 5.0),
            DVec2::new(9.0, 5.0),
        ];
        let c = sample_spline(&pts, 0.5);
        assert!(c.points.iter().all(|p| (p.y - 5.0).abs() < 1e-9));
        assert!((c.length() - 9.0).abs() < 1e-6);
        assert_eq!(c.points.len(), 19);
        assert_eq!(dedup_points(&pts).len(), 3);
        let one = sample_spline(&[DVec2::ONE, DVec2::ONE], 0.5);
        assert_eq!(one.points, vec![DVec2::ONE]);
    }
}
