//! Draggable handles on a [`CellBox`]: the 6 face centres and the 8 corners,
//! the hit test of a pick ray against them, and the drag that moves a face
//! along its axis or a corner in a plane, snapped to whole cells and clamped
//! so the box never inverts and stays within the region size limit.
//!
//! Pure geometry in world studs (`f64`, spec §1): the editor draws the
//! handles and feeds this module the cursor's ray.

use glam::DVec3;

use crate::terrain::storage::coords::{CELL_SIZE_STUDS, CellBox, MAX_CELL_COORD, MIN_CELL_COORD};

/// Rays closer to parallel than this (`1 − cos²` of the angle between the
/// ray and a drag axis, or `|cos|` between the ray and a drag plane) do not
/// move the handle: the projection would run off to infinity.
const PARALLEL_EPSILON: f64 = 1e-6;

/// One handle of a box.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoxHandle {
    /// The centre of a face: `axis` 0, 1, 2 for x, y, z; `max_side` for the
    /// face at `max[axis]`, else the one at `min[axis]`.
    Face {
        /// The face's normal axis (0 = x, 1 = y, 2 = z).
        axis: usize,
        /// The face at the box's maximum on that axis.
        max_side: bool,
    },
    /// A corner: per axis, whether it sits at the maximum.
    Corner {
        /// Per axis (x, y, z): the corner is at `max` (else at `min`).
        max_side: [bool; 3],
    },
}

impl BoxHandle {
    /// All 14 handles: the 6 faces (−x, +x, −y, +y, −z, +z), then the 8 corners.
    pub const ALL: [BoxHandle; 14] = {
        let mut all = [BoxHandle::Face {
            axis: 0,
            max_side: false,
        }; 14];
        let mut i = 0;
        while i < 6 {
            all[i] = BoxHandle::Face {
                axis: i / 2,
                max_side: i % 2 == 1,
            };
            i += 1;
        }
        let mut c = 0;
        while c < 8 {
            all[6 + c] = BoxHandle::Corner {
                max_side: [c & 1 != 0, c & 2 != 0, c & 4 != 0],
            };
            c += 1;
        }
        all
    };

    /// True for a corner handle.
    pub fn is_corner(self) -> bool {
        matches!(self, BoxHandle::Corner { .. })
    }

    /// Where the handle sits on `region`, world studs: a face centre or a
    /// corner of the box's outer bounds.
    pub fn pos_world(self, region: &CellBox) -> DVec3 {
        let s = f64::from(CELL_SIZE_STUDS);
        let lo = region.min.as_dvec3() * s;
        let hi = region.max.as_dvec3() * s;
        match self {
            BoxHandle::Face { axis, max_side } => {
                let mut p = (lo + hi) * 0.5;
                p[axis] = if max_side { hi[axis] } else { lo[axis] };
                p
            }
            BoxHandle::Corner { max_side } => DVec3::new(
                if max_side[0] { hi.x } else { lo.x },
                if max_side[1] { hi.y } else { lo.y },
                if max_side[2] { hi.z } else { lo.z },
            ),
        }
    }
}

/// The pick tolerance, radians off the ray, of a handle drawn
/// `radius_px` pixels wide in a view `viewport_height_px` tall with a
/// vertical field of view of `fov_y_deg` (at the view centre).
pub fn pick_tolerance_rad(radius_px: f32, fov_y_deg: f32, viewport_height_px: f32) -> f64 {
    let tan_half = (f64::from(fov_y_deg).to_radians() * 0.5).tan();
    let px_per_unit = 0.5 * f64::from(viewport_height_px.max(1.0)) / tan_half;
    (f64::from(radius_px) / px_per_unit).atan()
}

/// The handle of `region` the ray from `origin_world` along `dir` (any
/// length) hits: within `tolerance_rad` of the ray, in front of its origin;
/// of several (handles that overlap on screen), the nearest along the ray,
/// the one drawn on top. `None` when none is.
pub fn pick_handle(
    region: &CellBox,
    origin_world: DVec3,
    dir: DVec3,
    tolerance_rad: f64,
) -> Option<BoxHandle> {
    let dir = dir.try_normalize()?;
    let tan_tolerance = tolerance_rad.tan();
    let mut best: Option<(f64, BoxHandle)> = None;
    for handle in BoxHandle::ALL {
        let to_handle = handle.pos_world(region) - origin_world;
        let along_studs = to_handle.dot(dir);
        if along_studs <= 0.0 {
            continue;
        }
        let off_studs = (to_handle - dir * along_studs).length();
        if off_studs <= along_studs * tan_tolerance
            && best.is_none_or(|(nearest, _)| along_studs < nearest)
        {
            best = Some((along_studs, handle));
        }
    }
    best.map(|(_, h)| h)
}

/// The parameter `s` (studs along the unit `axis` from `point_world`) of the
/// point on that axis line closest to the ray from `origin_world` along the
/// unit `dir`; `None` when the ray is parallel to the axis or the closest
/// point of the ray lies behind its origin.
pub fn closest_on_axis(
    point_world: DVec3,
    axis: DVec3,
    origin_world: DVec3,
    dir: DVec3,
) -> Option<f64> {
    let w0 = origin_world - point_world;
    let b = dir.dot(axis);
    let d = dir.dot(w0);
    let e = axis.dot(w0);
    let denom = 1.0 - b * b;
    if denom < PARALLEL_EPSILON {
        return None;
    }
    let t_ray = (b * e - d) / denom;
    if t_ray <= 0.0 {
        return None;
    }
    Some((e - b * d) / denom)
}

/// Where the ray from `origin_world` along the unit `dir` meets the plane
/// through `point_world` with the unit `normal`; `None` when it runs
/// (nearly) parallel to it or meets it behind its origin.
fn ray_plane(point_world: DVec3, normal: DVec3, origin_world: DVec3, dir: DVec3) -> Option<DVec3> {
    let cos = dir.dot(normal);
    if cos.abs() < PARALLEL_EPSILON {
        return None;
    }
    let t = (point_world - origin_world).dot(normal) / cos;
    (t > 0.0).then(|| origin_world + dir * t)
}

/// A world coordinate in studs snapped to the nearest cell boundary, cells
/// (saturating far outside the lattice; the clamp brings it back).
fn snap_to_cells(coord_studs: f64) -> i64 {
    (coord_studs / f64::from(CELL_SIZE_STUDS)).round() as i64
}

/// Sets `region`'s `max_side` bound on `axis` to `value_cells`, clamped so
/// the box keeps at least 1 cell on that axis, its volume stays at most
/// `max_volume_cells` (with the other two extents as they are) and every
/// cell stays on the lattice.
pub fn set_bound_clamped(
    region: &mut CellBox,
    axis: usize,
    max_side: bool,
    value_cells: i64,
    max_volume_cells: u64,
) {
    let extents = (region.max - region.min)
        .as_i64vec3()
        .max(glam::I64Vec3::ONE);
    let others = (0..3)
        .filter(|a| *a != axis)
        .fold(1u64, |p, a| p.saturating_mul(extents[a] as u64));
    let max_extent = (max_volume_cells / others).clamp(1, i64::MAX as u64) as i64;
    let min_cells = i64::from(region.min[axis]);
    let max_cells = i64::from(region.max[axis]);
    if max_side {
        let hi = min_cells
            .saturating_add(max_extent)
            .min(i64::from(MAX_CELL_COORD) + 1);
        let v = value_cells.clamp(min_cells + 1, hi.max(min_cells + 1));
        region.max[axis] = v as i32;
    } else {
        let lo = max_cells
            .saturating_sub(max_extent)
            .max(i64::from(MIN_CELL_COORD));
        let v = value_cells.clamp(lo.min(max_cells - 1), max_cells - 1);
        region.min[axis] = v as i32;
    }
}

/// A handle drag in progress: the handle, the box when it began and how the
/// mouse ray maps to the handle's new position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HandleDrag {
    handle: BoxHandle,
    start: CellBox,
    /// Face: the unit axis. Corner: the normal of the drag plane (the box
    /// axis most aligned with the view when the drag began).
    axis_index: usize,
    /// Handle position minus the point the ray first grabbed, studs, so the
    /// handle does not jump to the cursor when the press was a little off.
    grab_offset_studs: DVec3,
    max_volume_cells: u64,
}

impl HandleDrag {
    /// Starts dragging `handle` of `region` with the ray from `origin_world`
    /// along `dir`; the box may grow to at most `max_volume_cells`. `None`
    /// when the ray cannot move this handle (parallel to its axis or plane).
    pub fn begin(
        handle: BoxHandle,
        region: CellBox,
        origin_world: DVec3,
        dir: DVec3,
        max_volume_cells: u64,
    ) -> Option<HandleDrag> {
        let dir = dir.try_normalize()?;
        let pos = handle.pos_world(&region);
        let (axis_index, grabbed) = match handle {
            BoxHandle::Face { axis, .. } => {
                let unit = DVec3::AXES[axis];
                let s = closest_on_axis(pos, unit, origin_world, dir)?;
                (axis, pos + unit * s)
            }
            BoxHandle::Corner { .. } => {
                let axis = dir.abs().max_position();
                let grabbed = ray_plane(pos, DVec3::AXES[axis], origin_world, dir)?;
                (axis, grabbed)
            }
        };
        Some(HandleDrag {
            handle,
            start: region,
            axis_index,
            grab_offset_studs: pos - grabbed,
            max_volume_cells,
        })
    }

    /// The handle being dragged.
    pub fn handle(&self) -> BoxHandle {
        self.handle
    }

    /// The box with the handle moved to follow the ray from `origin_world`
    /// along `dir`: a face moves along its axis to the point of the axis
    /// closest to the ray, a corner moves in its drag plane to where the
    /// ray meets it; the moved bounds snap to whole cells and are clamped
    /// (see [`set_bound_clamped`]). `None` when the ray cannot place the
    /// handle this frame (the caller keeps the box it has).
    pub fn update(&self, origin_world: DVec3, dir: DVec3) -> Option<CellBox> {
        let dir = dir.try_normalize()?;
        let pos = self.handle.pos_world(&self.start);
        let mut region = self.start;
        match self.handle {
            BoxHandle::Face { axis, max_side } => {
                let unit = DVec3::AXES[axis];
                let s = closest_on_axis(pos, unit, origin_world, dir)?;
                let target = pos[axis] + s + self.grab_offset_studs[axis];
                set_bound_clamped(
                    &mut region,
                    axis,
                    max_side,
                    snap_to_cells(target),
                    self.max_volume_cells,
                );
            }
            BoxHandle::Corner { max_side } => {
                let normal = DVec3::AXES[self.axis_index];
                let hit = ray_plane(pos, normal, origin_world, dir)?;
                let target = hit + self.grab_offset_studs;
                for axis in (0..3).filter(|a| *a != self.axis_index) {
                    set_bound_clamped(
                        &mut region,
                        axis,
                        max_side[axis],
                        snap_to_cells(target[axis]),
                        self.max_volume_cells,
                    );
                }
            }
        }
        Some(region)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::IVec3;

    const BIG: u64 = u64::MAX;

    fn b(min: [i32; 3], max: [i32; 3]) -> CellBox {
        CellBox::new(IVec3::from(min), IVec3::from(max))
    }

    /// A ray from `origin` toward `target`.
    fn ray(origin: DVec3, target: DVec3) -> (DVec3, DVec3) {
        (origin, (target - origin).normalize())
    }

    #[test]
    fn handles_sit_on_face_centres_and_corners_in_studs() {
        let r = b([0, 0, 0], [10, 4, 6]);
        let top = BoxHandle::Face {
            axis: 1,
            max_side: true,
        };
        assert_eq!(top.pos_world(&r), DVec3::new(20.0, 16.0, 12.0));
        let min_x = BoxHandle::Face {
            axis: 0,
            max_side: false,
        };
        assert_eq!(min_x.pos_world(&r), DVec3::new(0.0, 8.0, 12.0));
        let corner = BoxHandle::Corner {
            max_side: [true, false, true],
        };
        assert_eq!(corner.pos_world(&r), DVec3::new(40.0, 0.0, 24.0));
        let distinct: std::collections::HashSet<_> = BoxHandle::ALL.iter().collect();
        assert_eq!(distinct.len(), 14);
        assert_eq!(BoxHandle::ALL.iter().filter(|h| h.is_corner()).count(), 8);
    }

    #[test]
    fn a_ray_picks_the_handle_it_points_at_within_the_tolerance() {
        let r = b([0, 0, 0], [10, 4, 6]);
        let eye = DVec3::new(20.0, 200.0, 12.0);
        let tol = 0.02;
        // Straight down onto the top face centre.
        let (o, d) = ray(eye, DVec3::new(20.0, 16.0, 12.0));
        assert_eq!(
            pick_handle(&r, o, d, tol),
            Some(BoxHandle::Face {
                axis: 1,
                max_side: true
            })
        );
        // 184 studs away, 2 studs off: 0.0109 rad, inside 0.02.
        let (o, d) = ray(eye, DVec3::new(22.0, 16.0, 12.0));
        assert!(pick_handle(&r, o, d, tol).is_some());
        // 6 studs off: 0.0326 rad, outside.
        let (o, d) = ray(eye, DVec3::new(26.0, 16.0, 12.0));
        assert_eq!(pick_handle(&r, o, d, tol), None);
        // The top corner at (40, 16, 24).
        let (o, d) = ray(eye, DVec3::new(40.0, 16.0, 24.0));
        assert_eq!(
            pick_handle(&r, o, d, tol),
            Some(BoxHandle::Corner {
                max_side: [true, true, true]
            })
        );
        // Seen from the side, the −x face centre hides the +x one: the
        // nearer one is picked.
        let side = DVec3::new(-300.0, 8.0, 12.0);
        let (o, d) = ray(side, DVec3::new(0.0, 8.0, 12.0));
        assert_eq!(
            pick_handle(&r, o, d, tol),
            Some(BoxHandle::Face {
                axis: 0,
                max_side: false
            })
        );
        // Pointing away: nothing behind the eye is picked.
        assert_eq!(pick_handle(&r, o, -d, tol), None);
    }

    #[test]
    fn the_tolerance_matches_pixels_at_the_view_centre() {
        // 90° fov, 800 px tall: 400 px per unit of tan; 10 px = atan(0.025).
        let t = pick_tolerance_rad(10.0, 90.0, 800.0);
        assert!((t - 0.025f64.atan()).abs() < 1e-12);
    }

    #[test]
    fn the_axis_projection_is_the_closest_point_to_the_ray() {
        // Axis: the y axis through (0, 0, 0). A horizontal ray at height 10
        // passing 5 studs in front of it: closest axis point y = 10.
        let s = closest_on_axis(
            DVec3::ZERO,
            DVec3::Y,
            DVec3::new(-50.0, 10.0, 5.0),
            DVec3::X,
        );
        assert_eq!(s, Some(10.0));
        // A tilted ray from (0, 100, -100) toward (0, 30, 0): it crosses the
        // axis's plane x = 0 at (0, 30, 0), so s = 30.
        let (o, d) = ray(DVec3::new(0.0, 100.0, -100.0), DVec3::new(0.0, 30.0, 0.0));
        let s = closest_on_axis(DVec3::ZERO, DVec3::Y, o, d).unwrap();
        assert!((s - 30.0).abs() < 1e-9, "{s}");
        // Parallel to the axis: no answer.
        assert_eq!(
            closest_on_axis(DVec3::ZERO, DVec3::Y, DVec3::X, DVec3::Y),
            None
        );
        // The closest point would be behind the ray's origin.
        assert_eq!(
            closest_on_axis(
                DVec3::ZERO,
                DVec3::Y,
                DVec3::new(-50.0, 10.0, 5.0),
                -DVec3::X
            ),
            None
        );
    }

    #[test]
    fn dragging_the_top_face_follows_the_ray_and_snaps_to_cells() {
        let r = b([0, 0, 0], [10, 4, 6]);
        let top = BoxHandle::Face {
            axis: 1,
            max_side: true,
        };
        // The camera looks at the box from the side (-z), grabbing the top
        // face centre at (20, 16, 12) exactly.
        let eye = DVec3::new(20.0, 16.0, -200.0);
        let (o, d) = ray(eye, DVec3::new(20.0, 16.0, 12.0));
        let drag = HandleDrag::begin(top, r, o, d, BIG).unwrap();
        assert_eq!(drag.handle(), top);
        // Aim at height 41 studs on the axis: 10.25 cells, snaps to 10.
        let (o, d) = ray(eye, DVec3::new(20.0, 41.0, 12.0));
        assert_eq!(drag.update(o, d), Some(b([0, 0, 0], [10, 10, 6])));
        // 42.5 studs: 10.6 cells, snaps to 11.
        let (o, d) = ray(eye, DVec3::new(20.0, 42.5, 12.0));
        assert_eq!(drag.update(o, d), Some(b([0, 0, 0], [10, 11, 6])));
        // Below the bottom: the box keeps one cell, never inverts.
        let (o, d) = ray(eye, DVec3::new(20.0, -80.0, 12.0));
        assert_eq!(drag.update(o, d), Some(b([0, 0, 0], [10, 1, 6])));
    }

    #[test]
    fn a_press_off_the_handle_centre_does_not_make_it_jump() {
        let r = b([0, 0, 0], [10, 4, 6]);
        let min_x = BoxHandle::Face {
            axis: 0,
            max_side: false,
        };
        // From above, grabbing 3 studs to +x of the −x face centre (0, 8, 12).
        let eye = DVec3::new(0.0, 300.0, 12.0);
        let (o, d) = ray(eye, DVec3::new(3.0, 8.0, 12.0));
        let drag = HandleDrag::begin(min_x, r, o, d, BIG).unwrap();
        // Not moving: the box is unchanged.
        assert_eq!(drag.update(o, d), Some(r));
        // Moving the cursor 8 studs further (+x) moves the face 2 cells.
        let (o, d) = ray(eye, DVec3::new(11.0, 8.0, 12.0));
        assert_eq!(drag.update(o, d), Some(b([2, 0, 0], [10, 4, 6])));
        // Past the far face: one cell left.
        let (o, d) = ray(eye, DVec3::new(400.0, 8.0, 12.0));
        assert_eq!(drag.update(o, d), Some(b([9, 0, 0], [10, 4, 6])));
    }

    #[test]
    fn a_corner_moves_in_the_plane_facing_the_view() {
        let r = b([0, 0, 0], [10, 4, 6]);
        let corner = BoxHandle::Corner {
            max_side: [true, true, true],
        };
        // From above: the drag plane is y = 16 (the corner's height).
        let eye = DVec3::new(40.0, 400.0, 24.0);
        let (o, d) = ray(eye, DVec3::new(40.0, 16.0, 24.0));
        let drag = HandleDrag::begin(corner, r, o, d, BIG).unwrap();
        // Aim at (61, 16, 9): x 15.25 → 15, z 2.25 → 2; y unchanged.
        let (o, d) = ray(eye, DVec3::new(61.0, 16.0, 9.0));
        assert_eq!(drag.update(o, d), Some(b([0, 0, 0], [15, 4, 2])));
        // Across the opposite corner: each axis keeps one cell.
        let (o, d) = ray(eye, DVec3::new(-100.0, 16.0, -100.0));
        assert_eq!(drag.update(o, d), Some(b([0, 0, 0], [1, 4, 1])));
        // A min corner seen from the side (+x): the plane is x = 0; it moves y and z.
        let low = BoxHandle::Corner {
            max_side: [false, false, false],
        };
        let eye = DVec3::new(300.0, 0.0, 0.0);
        let (o, d) = ray(eye, DVec3::ZERO);
        let drag = HandleDrag::begin(low, r, o, d, BIG).unwrap();
        let (o, d) = ray(eye, DVec3::new(0.0, -8.0, 12.0));
        assert_eq!(drag.update(o, d), Some(b([0, -2, 3], [10, 4, 6])));
    }

    #[test]
    fn the_box_stays_within_the_volume_limit() {
        let r = b([0, 0, 0], [10, 4, 6]);
        let top = BoxHandle::Face {
            axis: 1,
            max_side: true,
        };
        let eye = DVec3::new(20.0, 16.0, -200.0);
        let (o, d) = ray(eye, DVec3::new(20.0, 16.0, 12.0));
        // At most 600 cells: with a 10 × 6 footprint the height stops at 10.
        let drag = HandleDrag::begin(top, r, o, d, 600).unwrap();
        let (o, d) = ray(eye, DVec3::new(20.0, 400.0, 12.0));
        let grown = drag.update(o, d).unwrap();
        assert_eq!(grown, b([0, 0, 0], [10, 10, 6]));
        assert_eq!(grown.volume_cells(), 600);
        assert_eq!(grown.max - grown.min, IVec3::new(10, 10, 6));
    }

    #[test]
    fn bounds_clamp_to_the_lattice() {
        let mut r = b([0, 0, 0], [4, 4, 4]);
        set_bound_clamped(&mut r, 0, true, i64::from(MAX_CELL_COORD) + 50, BIG);
        assert_eq!(r.max.x, MAX_CELL_COORD + 1);
        set_bound_clamped(&mut r, 2, false, i64::from(MIN_CELL_COORD) - 50, BIG);
        assert_eq!(r.min.z, MIN_CELL_COORD);
        set_bound_clamped(&mut r, 1, false, 10, BIG);
        assert_eq!(r.min.y, 3);
    }
}
