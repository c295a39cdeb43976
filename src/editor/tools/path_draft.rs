//! The Path tool's editable control points before a path is applied: a
//! click on the surface appends a point, a press near a point drags it, a
//! press near the polyline between two points inserts one there, Delete
//! removes the point under the cursor (or the last one). Points are world
//! xz positions in studs; the path core turns them into a spline and cells.
//! Kept apart from the window so every gesture is testable without one.

use glam::DVec2;

/// Most control points one path may have (a path core limit mirrors it).
pub const MAX_DRAFT_POINTS: usize = 256;

/// What a press on the surface did to the draft.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DraftPress {
    /// A point was appended at the end.
    Appended(usize),
    /// A point was inserted before index `.0` (between `.0 - 1` and `.0`).
    Inserted(usize),
    /// An existing point is being dragged.
    Dragging(usize),
    /// The draft is full ([`MAX_DRAFT_POINTS`]); nothing changed.
    Full,
}

/// The control points of a path being laid, world xz in studs, in order
/// from the first click (for a river: upstream first).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathDraft {
    points_studs: Vec<DVec2>,
    dragging: Option<usize>,
}

impl PathDraft {
    /// A draft holding `points_studs` (a path reopened from the history).
    pub fn from_points(points_studs: Vec<DVec2>) -> PathDraft {
        PathDraft {
            points_studs,
            dragging: None,
        }
    }

    /// The control points, world xz studs.
    pub fn points_studs(&self) -> &[DVec2] {
        &self.points_studs
    }

    /// True with no points.
    pub fn is_empty(&self) -> bool {
        self.points_studs.is_empty()
    }

    /// The point being dragged, if any.
    pub fn dragging(&self) -> Option<usize> {
        self.dragging
    }

    /// The point within `pick_studs` of `at_studs`, the nearest if several.
    pub fn point_near(&self, at_studs: DVec2, pick_studs: f64) -> Option<usize> {
        self.points_studs
            .iter()
            .enumerate()
            .map(|(i, p)| (i, p.distance(at_studs)))
            .filter(|&(_, d)| d <= pick_studs)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    }

    /// The segment (between points `i - 1` and `i`, returned as `i`) whose
    /// straight line passes within `pick_studs` of `at_studs`, the nearest.
    fn segment_near(&self, at_studs: DVec2, pick_studs: f64) -> Option<usize> {
        self.points_studs
            .windows(2)
            .enumerate()
            .map(|(i, w)| (i + 1, distance_to_segment(at_studs, w[0], w[1])))
            .filter(|&(_, d)| d <= pick_studs)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    }

    /// A press of the left button on the surface at `at_studs`: drags a
    /// point within `pick_studs`, else inserts a point on a segment within
    /// `pick_studs`, else appends one. Non-finite positions change nothing
    /// and return `None`.
    pub fn press(&mut self, at_studs: DVec2, pick_studs: f64) -> Option<DraftPress> {
        if !at_studs.is_finite() {
            return None;
        }
        if let Some(i) = self.point_near(at_studs, pick_studs) {
            self.dragging = Some(i);
            return Some(DraftPress::Dragging(i));
        }
        if self.points_studs.len() >= MAX_DRAFT_POINTS {
            return Some(DraftPress::Full);
        }
        if let Some(i) = self.segment_near(at_studs, pick_studs) {
            self.points_studs.insert(i, at_studs);
            self.dragging = Some(i);
            return Some(DraftPress::Inserted(i));
        }
        self.points_studs.push(at_studs);
        let i = self.points_studs.len() - 1;
        self.dragging = Some(i);
        Some(DraftPress::Appended(i))
    }

    /// Moves the dragged point to `at_studs` while the button is held.
    pub fn drag_to(&mut self, at_studs: DVec2) {
        if let Some(i) = self.dragging
            && at_studs.is_finite()
            && let Some(p) = self.points_studs.get_mut(i)
        {
            *p = at_studs;
        }
    }

    /// Ends a drag (button released).
    pub fn release(&mut self) {
        self.dragging = None;
    }

    /// Deletes the point within `pick_studs` of `at_studs`, else the last
    /// point. Returns the index removed.
    pub fn delete_near(&mut self, at_studs: Option<DVec2>, pick_studs: f64) -> Option<usize> {
        let i = at_studs
            .and_then(|a| self.point_near(a, pick_studs))
            .or_else(|| self.points_studs.len().checked_sub(1))?;
        self.points_studs.remove(i);
        self.dragging = None;
        Some(i)
    }

    /// Removes every point.
    pub fn clear(&mut self) {
        self.points_studs.clear();
        self.dragging = None;
    }
}

/// Distance from `p` to the segment `a`–`b`, studs.
fn distance_to_segment(p: DVec2, a: DVec2, b: DVec2) -> f64 {
    let ab = b - a;
    let len2 = ab.length_squared();
    let t = if len2 > 0.0 {
        ((p - a).dot(ab) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    p.distance(a + ab * t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: f64, z: f64) -> DVec2 {
        DVec2::new(x, z)
    }

    #[test]
    fn clicks_append_then_a_press_near_a_point_drags_it() {
        let mut d = PathDraft::default();
        assert_eq!(d.press(v(0.0, 0.0), 8.0), Some(DraftPress::Appended(0)));
        d.release();
        assert_eq!(d.press(v(100.0, 0.0), 8.0), Some(DraftPress::Appended(1)));
        d.release();
        assert_eq!(d.press(v(103.0, 2.0), 8.0), Some(DraftPress::Dragging(1)));
        d.drag_to(v(120.0, 40.0));
        d.release();
        assert_eq!(d.points_studs(), &[v(0.0, 0.0), v(120.0, 40.0)]);
        // Drag without a press moves nothing.
        d.drag_to(v(5.0, 5.0));
        assert_eq!(d.points_studs()[0], v(0.0, 0.0));
    }

    #[test]
    fn a_press_on_a_segment_inserts_between_its_points() {
        let mut d = PathDraft::from_points(vec![v(0.0, 0.0), v(100.0, 0.0), v(100.0, 100.0)]);
        assert_eq!(d.press(v(50.0, 3.0), 8.0), Some(DraftPress::Inserted(1)));
        d.release();
        assert_eq!(d.points_studs()[1], v(50.0, 3.0));
        assert_eq!(d.points_studs().len(), 4);
        // Far from everything: appended at the end.
        assert_eq!(d.press(v(300.0, 300.0), 8.0), Some(DraftPress::Appended(4)));
    }

    #[test]
    fn delete_removes_the_point_under_the_cursor_else_the_last() {
        let mut d = PathDraft::from_points(vec![v(0.0, 0.0), v(50.0, 0.0), v(100.0, 0.0)]);
        assert_eq!(d.delete_near(Some(v(49.0, 1.0)), 8.0), Some(1));
        assert_eq!(d.points_studs(), &[v(0.0, 0.0), v(100.0, 0.0)]);
        assert_eq!(d.delete_near(None, 8.0), Some(1));
        assert_eq!(d.delete_near(Some(v(500.0, 0.0)), 8.0), Some(0));
        assert_eq!(d.delete_near(None, 8.0), None);
    }

    #[test]
    fn non_finite_presses_and_a_full_draft_change_nothing() {
        let mut d = PathDraft::default();
        assert_eq!(d.press(v(f64::NAN, 0.0), 8.0), None);
        assert!(d.is_empty());
        let full: Vec<DVec2> = (0..MAX_DRAFT_POINTS)
            .map(|i| v(i as f64 * 100.0, 0.0))
            .collect();
        let mut d = PathDraft::from_points(full.clone());
        assert_eq!(d.press(v(50.0, 500.0), 8.0), Some(DraftPress::Full));
        assert_eq!(d.points_studs(), full.as_slice());
    }
}
