//! The fly camera: position in `f64` world studs, orientation as yaw/pitch,
//! and the camera-relative matrices the renderer uses.
//!
//! Why camera-relative: the terrain lattice is `i32` cells, so worlds can sit a
//! million cells from the origin where `f32` studs have a resolution of half a
//! stud. The camera therefore never puts its translation into an `f32` matrix:
//! [`Camera::view_from_world`] is a pure rotation, and every chunk is drawn at
//! `chunk.origin_world() - camera.pos_world` computed in `f64` and only then cast
//! to `f32` (spec §1). Near the camera those offsets are small and exact.
//!
//! Depth uses a reversed-Z infinite perspective (near plane maps to depth 1,
//! infinity to 0; clear depth to 0 and test with `Greater`). With a
//! `Depth32Float` buffer that spreads float precision evenly in log-space, so a
//! 4096-stud world and a close-up of a single cell both resolve without
//! z-fighting.
//!
//! Conventions: +Y up, right-handed. `yaw_deg = 0` looks along −Z; positive yaw
//! turns right (toward +X). `pitch_deg` is positive looking up, clamped to
//! ±[`MAX_PITCH_DEG`].

use glam::{DMat3, DVec3, Mat4, Vec3, Vec4, Vec4Swizzles};

use crate::terrain::Grid;
use crate::terrain::storage::coords::CELL_SIZE_STUDS;

/// The six planes of a camera-relative view frustum, `ax + by + cz + d >= 0` inside.
/// Reversed-Z infinite projection: the far plane is at infinity and is omitted.
#[derive(Clone, Copy, Debug)]
pub struct Frustum {
    planes: [Vec4; 5],
}

impl Frustum {
    /// Extracts the planes from a camera-relative `clip_from_world` (Gribb–Hartmann).
    pub fn from_clip_from_world(m: Mat4) -> Frustum {
        let (r0, r1, r2, r3) = (m.row(0), m.row(1), m.row(2), m.row(3));
        Frustum {
            // Left, right, bottom, top, near (reversed-Z: z <= w).
            planes: [r3 + r0, r3 - r0, r3 + r1, r3 - r1, r3 - r2],
        }
    }

    /// True when the box `[min, max]` (camera-relative studs) may be visible.
    pub fn intersects_aabb(&self, min: Vec3, max: Vec3) -> bool {
        self.planes.iter().all(|p| {
            let n = p.truncate();
            let v = Vec3::select(n.cmpge(Vec3::ZERO), max, min);
            n.dot(v) + p.w >= 0.0
        })
    }
}

/// Largest allowed |pitch| in degrees; keeps the view away from the poles where yaw degenerates.
pub const MAX_PITCH_DEG: f32 = 89.0;

/// Default vertical field of view in degrees.
pub const DEFAULT_FOV_Y_DEG: f32 = 55.0;

/// Distance of the near clip plane in studs. Reversed-Z makes a small value cheap.
pub const NEAR_PLANE_STUDS: f32 = 0.25;

/// A perspective fly camera.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// Eye position in world studs (`f64` so far-away worlds stay precise).
    pub pos_world: DVec3,
    /// Heading in degrees: 0 looks along −Z, 90 along +X.
    pub yaw_deg: f32,
    /// Elevation in degrees: positive looks up, negative down; within ±[`MAX_PITCH_DEG`].
    pub pitch_deg: f32,
    /// Vertical field of view in degrees, in `(0, 180)`.
    pub fov_y_deg: f32,
    /// Viewport width divided by height.
    pub aspect: f32,
}

impl Default for Camera {
    fn default() -> Self {
        Camera {
            pos_world: DVec3::new(0.0, 64.0, 0.0),
            yaw_deg: 0.0,
            pitch_deg: 0.0,
            fov_y_deg: DEFAULT_FOV_Y_DEG,
            aspect: 16.0 / 9.0,
        }
    }
}

/// Unit view direction for a yaw and pitch in degrees (see the module docs for the convention).
pub fn forward_from_yaw_pitch(yaw_deg: f64, pitch_deg: f64) -> DVec3 {
    let (sy, cy) = yaw_deg.to_radians().sin_cos();
    let (sp, cp) = pitch_deg.to_radians().sin_cos();
    DVec3::new(sy * cp, sp, -cy * cp)
}

impl Camera {
    /// A camera at `pos_world` with the given orientation, default fov and a 16:9 aspect.
    pub fn new(pos_world: DVec3, yaw_deg: f32, pitch_deg: f32) -> Camera {
        Camera {
            pos_world,
            yaw_deg,
            pitch_deg: pitch_deg.clamp(-MAX_PITCH_DEG, MAX_PITCH_DEG),
            ..Camera::default()
        }
    }

    /// Unit view direction in world space (`f64`).
    pub fn forward_world(&self) -> DVec3 {
        forward_from_yaw_pitch(self.yaw_deg as f64, self.pitch_deg as f64)
    }

    /// Unit view direction in world space (`f32`; directions need no `f64`).
    pub fn forward(&self) -> Vec3 {
        self.forward_world().as_vec3()
    }

    /// Unit right vector (horizontal, perpendicular to the view direction).
    pub fn right(&self) -> Vec3 {
        let (sy, cy) = self.yaw_deg.to_radians().sin_cos();
        Vec3::new(cy, 0.0, sy)
    }

    /// Unit up vector of the view (perpendicular to forward and right).
    pub fn up(&self) -> Vec3 {
        self.right().cross(self.forward()).normalize()
    }

    /// Rotation-only view matrix: maps camera-relative world offsets
    /// (`pos_world - camera.pos_world`, in studs) to view space (−Z forward).
    pub fn view_from_world(&self) -> Mat4 {
        glam::camera::rh::view::look_to_mat4(Vec3::ZERO, self.forward(), Vec3::Y)
    }

    /// Reversed-Z infinite perspective projection (near plane at depth 1, infinity at 0).
    pub fn clip_from_view(&self) -> Mat4 {
        glam::camera::rh::proj::directx::perspective_infinite_reverse(
            self.fov_y_deg.to_radians(),
            self.aspect.max(1e-6),
            NEAR_PLANE_STUDS,
        )
    }

    /// `clip_from_view * view_from_world`: maps camera-relative world offsets to clip space.
    pub fn clip_from_world(&self) -> Mat4 {
        self.clip_from_view() * self.view_from_world()
    }

    /// Camera-relative offset of a world point, computed in `f64` and cast to `f32` once.
    pub fn relative(&self, pos_world: DVec3) -> Vec3 {
        (pos_world - self.pos_world).as_vec3()
    }

    /// Ray through a pixel for picking.
    ///
    /// `px, py` are in pixels from the top-left corner of a `width × height`
    /// viewport (use `x + 0.5` for pixel centres). Returns the ray origin (the
    /// eye, world studs) and a unit direction in world space.
    pub fn ray_from_screen(&self, px: f32, py: f32, width: f32, height: f32) -> (DVec3, Vec3) {
        let w = width.max(1.0);
        let h = height.max(1.0);
        let ndc_x = 2.0 * px / w - 1.0;
        let ndc_y = 1.0 - 2.0 * py / h;
        let tan_half = (self.fov_y_deg.to_radians() * 0.5).tan();
        let dir_view = Vec3::new(ndc_x * tan_half * (w / h), ndc_y * tan_half, -1.0);
        let world_from_view = self.view_from_world().inverse();
        let dir = world_from_view.transform_vector3(dir_view).normalize();
        (self.pos_world, dir)
    }

    /// Projects a world point to pixel coordinates in a `width × height`
    /// viewport (top-left origin). `None` when the point is behind the camera.
    pub fn project_to_screen(
        &self,
        pos_world: DVec3,
        width: f32,
        height: f32,
    ) -> Option<(f32, f32)> {
        let clip = self.clip_from_world() * self.relative(pos_world).extend(1.0);
        if clip.w <= 1e-6 {
            return None;
        }
        let ndc = clip.xy() / clip.w;
        Some(((ndc.x + 1.0) * 0.5 * width, (1.0 - ndc.y) * 0.5 * height))
    }

    /// Turns the camera to look at `target_world`, keeping its position.
    /// Looking straight up or down clamps the pitch to ±[`MAX_PITCH_DEG`].
    pub fn look_at(&mut self, target_world: DVec3) {
        let d = target_world - self.pos_world;
        if d.length_squared() < 1e-12 {
            return;
        }
        let horiz = (d.x * d.x + d.z * d.z).sqrt();
        self.yaw_deg = d.x.atan2(-d.z).to_degrees() as f32;
        self.pitch_deg =
            (d.y.atan2(horiz).to_degrees() as f32).clamp(-MAX_PITCH_DEG, MAX_PITCH_DEG);
    }

    /// A camera that frames the box `[min_world, max_world]` (world studs) from
    /// above at an angle: looking across the box diagonal, 35° down, pulled back
    /// and panned until all 8 corners project inside the central 94 % of the view,
    /// centred. `aspect` is the viewport width over height.
    pub fn frame_bounds(min_world: DVec3, max_world: DVec3, aspect: f32) -> Camera {
        let centre = (min_world + max_world) * 0.5;
        let yaw = 45.0f32;
        let pitch = -35.0f32;
        let mut cam = Camera {
            pos_world: centre,
            yaw_deg: yaw,
            pitch_deg: pitch,
            fov_y_deg: DEFAULT_FOV_Y_DEG,
            aspect: aspect.max(1e-3),
        };
        let size = (max_world - min_world).abs();
        let radius = (size.length() * 0.5).max(1.0);
        // Aim slightly below the box centre so the top surface, which is what an
        // artist looks at, sits in the middle of the image.
        let aim = DVec3::new(centre.x, min_world.y + size.y * 0.4, centre.z);
        let back = -cam.forward_world();
        let corners: Vec<DVec3> = (0..8)
            .map(|i| {
                DVec3::new(
                    if i & 1 == 0 { min_world.x } else { max_world.x },
                    if i & 2 == 0 { min_world.y } else { max_world.y },
                    if i & 4 == 0 { min_world.z } else { max_world.z },
                )
            })
            .collect();
        let fits = |cam: &Camera| {
            let m = cam.clip_from_world();
            corners.iter().all(|&c| {
                let clip = m * cam.relative(c).extend(1.0);
                clip.w > 0.0 && (clip.x / clip.w).abs() <= 0.94 && (clip.y / clip.w).abs() <= 0.94
            })
        };
        let tan_half_y = (cam.fov_y_deg.to_radians() as f64 * 0.5).tan();
        let tan_half_x = tan_half_y * cam.aspect as f64;
        let right = cam.right().as_dvec3();
        let up = right.cross(cam.forward_world()).normalize();
        let mut aim = aim;
        for _ in 0..4 {
            // Bisect the pull-back distance: far enough always fits.
            let (mut lo, mut hi) = (0.0f64, radius * 8.0 + 16.0);
            for _ in 0..48 {
                let mid = 0.5 * (lo + hi);
                cam.pos_world = aim + back * mid;
                if fits(&cam) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            cam.pos_world = aim + back * hi;
            // Pan so the projected box is centred, then fit again.
            let m = cam.clip_from_world();
            let (mut nmin, mut nmax) = (glam::DVec2::splat(f64::MAX), glam::DVec2::splat(f64::MIN));
            for &c in &corners {
                let clip = m * cam.relative(c).extend(1.0);
                let ndc = glam::DVec2::new((clip.x / clip.w) as f64, (clip.y / clip.w) as f64);
                nmin = nmin.min(ndc);
                nmax = nmax.max(ndc);
            }
            let mid = (nmin + nmax) * 0.5;
            let depth = (centre - cam.pos_world).dot(cam.forward_world()).max(1.0);
            aim += right * (mid.x * tan_half_x * depth) + up * (mid.y * tan_half_y * depth);
        }
        cam.pos_world = aim + back * (cam.pos_world - aim).length();
        cam
    }

    /// [`Camera::frame_bounds`] of the box `[min_world, max_world]` with
    /// the distance from the camera to the box's farthest corner: the draw
    /// distance that shows the whole box.
    pub fn frame_view(min_world: DVec3, max_world: DVec3, aspect: f32) -> FramedView {
        let camera = Camera::frame_bounds(min_world, max_world, aspect);
        let reach_studs = (0..8)
            .map(|i| {
                let corner = DVec3::new(
                    if i & 1 == 0 { min_world.x } else { max_world.x },
                    if i & 2 == 0 { min_world.y } else { max_world.y },
                    if i & 4 == 0 { min_world.z } else { max_world.z },
                );
                corner.distance(camera.pos_world)
            })
            .fold(0.0, f64::max);
        FramedView {
            camera,
            reach_studs,
        }
    }

    /// Rotates the orientation by yaw/pitch deltas in degrees (pitch clamped).
    pub fn rotate(&mut self, d_yaw_deg: f32, d_pitch_deg: f32) {
        self.yaw_deg = (self.yaw_deg + d_yaw_deg).rem_euclid(360.0);
        self.pitch_deg = (self.pitch_deg + d_pitch_deg).clamp(-MAX_PITCH_DEG, MAX_PITCH_DEG);
    }

    /// Moves the eye by `forward`, `right` and world-`up` amounts in studs
    /// (forward follows the full view direction, including pitch).
    pub fn fly(&mut self, forward: f64, right: f64, up: f64) {
        let f = self.forward_world();
        let r = self.right().as_dvec3();
        self.pos_world += f * forward + r * right + DVec3::Y * up;
    }

    /// World-space rotation from view space (columns: right, up, back), in `f64`.
    pub fn world_from_view_rotation(&self) -> DMat3 {
        let f = self.forward_world();
        let r = self.right().as_dvec3();
        let u = r.cross(f).normalize();
        DMat3::from_cols(r, u, -f)
    }
}

/// A default view: its camera and how far it must draw to show all that it
/// frames.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FramedView {
    /// The camera.
    pub camera: Camera,
    /// Distance from the camera to the farthest point it frames, studs; 0
    /// for a view that frames nothing whole (a view over a large world's
    /// centre, a default view of nothing).
    pub reach_studs: f64,
}

impl FramedView {
    /// A view of `camera` that frames nothing whole (reach 0).
    pub fn unframed(camera: Camera) -> FramedView {
        FramedView {
            camera,
            reach_studs: 0.0,
        }
    }
}

/// A camera framing the terrain from above at an angle (see
/// [`Camera::frame_bounds`]): around `mesh_bounds_world` (`(min, max)`
/// studs of the shown meshes) when given, else the grid's stored-chunk
/// bounds, else a default view of the origin. `aspect` is the viewport
/// width over height.
pub fn frame_terrain(
    grid: &Grid,
    mesh_bounds_world: Option<(DVec3, DVec3)>,
    aspect: f32,
) -> Camera {
    let bounds = mesh_bounds_world.or_else(|| {
        grid.bounds_cells().map(|b| {
            let s = CELL_SIZE_STUDS as f64;
            (b.min.as_dvec3() * s, b.max.as_dvec3() * s)
        })
    });
    match bounds {
        Some((lo, hi)) => Camera::frame_bounds(lo, hi, aspect),
        None => Camera {
            aspect,
            ..Camera::default()
        },
    }
}

/// The default view of an imported heightmap's terrain, `size_x_studs` ×
/// `size_z_studs` from the origin and from `bottom_studs` up to its highest
/// possible surface `top_studs`: the whole terrain framed from outside,
/// above it at an angle, as a generated world's default view frames it
/// ([`Camera::frame_view`], for a 16:9 view), whatever its size.
pub fn heightmap_overview(
    size_x_studs: f64,
    size_z_studs: f64,
    bottom_studs: f64,
    top_studs: f64,
) -> FramedView {
    Camera::frame_view(
        DVec3::new(0.0, bottom_studs, 0.0),
        DVec3::new(size_x_studs, top_studs.max(bottom_studs), size_z_studs),
        16.0 / 9.0,
    )
}

/// The camera a streaming world opens with when none is given: over the
/// world's centre, 1200 studs up, looking north and 25° down; a world at most
/// [`FRAMED_WORLD_MAX_STUDS`] across is framed whole instead (from the centre
/// that view would look past its edge).
pub fn streaming_default_camera(
    generator: &crate::terrain::generation::generate::GeneratorSettings,
) -> Camera {
    streaming_default_view(generator).camera
}

/// [`streaming_default_camera`] with the draw distance its view needs (0
/// for the view over the centre).
pub fn streaming_default_view(
    generator: &crate::terrain::generation::generate::GeneratorSettings,
) -> FramedView {
    let side = f64::from(generator.size_cells) * f64::from(CELL_SIZE_STUDS);
    streaming_overview_view(side, side, 1200.0)
}

/// Widest world (studs, either axis) that a streaming world's default camera
/// frames whole: the default world's size.
pub const FRAMED_WORLD_MAX_STUDS: f64 = 4096.0;

/// The default view over a streaming world of `size_x_studs` ×
/// `size_z_studs` (origin at 0): `height_studs` above its centre, looking
/// north and 25° down (reach 0), or, for a world at most
/// [`FRAMED_WORLD_MAX_STUDS`] across, [`Camera::frame_view`] of the world up
/// to `height_studs`.
pub fn streaming_overview_view(
    size_x_studs: f64,
    size_z_studs: f64,
    height_studs: f64,
) -> FramedView {
    if size_x_studs.max(size_z_studs) <= FRAMED_WORLD_MAX_STUDS {
        return Camera::frame_view(
            glam::DVec3::ZERO,
            glam::DVec3::new(size_x_studs, height_studs * 0.5, size_z_studs),
            16.0 / 9.0,
        );
    }
    FramedView::unframed(Camera::new(
        glam::DVec3::new(size_x_studs * 0.5, height_studs, size_z_studs * 0.5),
        0.0,
        -25.0,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forward_convention() {
        let c = Camera::new(DVec3::ZERO, 0.0, 0.0);
        assert!((c.forward() - Vec3::NEG_Z).length() < 1e-6);
        let c = Camera::new(DVec3::ZERO, 90.0, 0.0);
        assert!((c.forward() - Vec3::X).length() < 1e-6);
        assert!((c.right() - Vec3::Z).length() < 1e-6);
    }

    #[test]
    fn reversed_z_near_is_one_far_tends_to_zero() {
        let c = Camera::new(DVec3::ZERO, 0.0, 0.0);
        let m = c.clip_from_world();
        let near = m * Vec3::new(0.0, 0.0, -NEAR_PLANE_STUDS).extend(1.0);
        assert!((near.z / near.w - 1.0).abs() < 1e-5);
        let far = m * Vec3::new(0.0, 0.0, -1.0e6).extend(1.0);
        assert!(far.z / far.w < 1e-6 && far.z / far.w > 0.0);
    }

    #[test]
    fn view_matrix_has_no_translation() {
        let c = Camera::new(DVec3::new(4.0e6, 10.0, -3.0e6), 33.0, -20.0);
        let v = c.view_from_world();
        assert_eq!(v.w_axis.truncate(), Vec3::ZERO);
    }

    #[test]
    fn centre_ray_is_forward_and_projects_back() {
        let c = Camera::new(DVec3::new(1.0e6, 50.0, 2.0), 30.0, -25.0);
        let (o, d) = c.ray_from_screen(320.0, 180.0, 640.0, 360.0);
        assert_eq!(o, c.pos_world);
        assert!((d - c.forward()).length() < 1e-5);
        let p = o + d.as_dvec3() * 100.0;
        let (x, y) = c.project_to_screen(p, 640.0, 360.0).unwrap();
        assert!((x - 320.0).abs() < 0.01 && (y - 180.0).abs() < 0.01);
        // An off-centre pixel round-trips too.
        let (_, d2) = c.ray_from_screen(100.0, 50.0, 640.0, 360.0);
        let (x, y) = c
            .project_to_screen(o + d2.as_dvec3() * 300.0, 640.0, 360.0)
            .unwrap();
        assert!(
            (x - 100.0).abs() < 0.05 && (y - 50.0).abs() < 0.05,
            "{x} {y}"
        );
    }

    #[test]
    fn look_at_points_forward_at_target() {
        let mut c = Camera::new(DVec3::new(10.0, 20.0, 30.0), 0.0, 0.0);
        let t = DVec3::new(-50.0, 0.0, 100.0);
        c.look_at(t);
        let want = (t - c.pos_world).normalize();
        assert!((c.forward_world() - want).length() < 1e-5);
    }

    #[test]
    fn frame_bounds_sees_every_corner_from_above() {
        let min = DVec3::new(0.0, 0.0, 0.0);
        let max = DVec3::new(4096.0, 512.0, 4096.0);
        let c = Camera::frame_bounds(min, max, 16.0 / 9.0);
        assert!(c.pos_world.y > max.y, "camera above the terrain");
        assert!(c.pitch_deg <= -35.0 && c.pitch_deg >= -45.0);
        for i in 0..8 {
            let p = DVec3::new(
                if i & 1 == 0 { min.x } else { max.x },
                if i & 2 == 0 { min.y } else { max.y },
                if i & 4 == 0 { min.z } else { max.z },
            );
            let (x, y) = c.project_to_screen(p, 1600.0, 900.0).unwrap();
            assert!((0.0..=1600.0).contains(&x) && (0.0..=900.0).contains(&y));
        }
    }

    /// A heightmap of any size is framed whole from outside: the camera is
    /// above its highest surface and beyond its footprint, and every corner
    /// of the terrain projects into the view; the reach is the farthest
    /// corner's distance.
    #[test]
    fn heightmap_overview_frames_the_terrain_from_outside() {
        for (sx, sz, bottom, top) in [
            (3224.0, 3404.0, 0.0, 300.0),
            (131_072.0, 131_072.0, 0.0, 800.0),
            (131_072.0, 40_000.0, -400.0, 12_000.0),
        ] {
            let view = heightmap_overview(sx, sz, bottom, top);
            let c = view.camera;
            let p = c.pos_world;
            assert!(p.y > top, "{c:?}");
            assert!(!((0.0..=sx).contains(&p.x) && (0.0..=sz).contains(&p.z)));
            let mut farthest = 0.0f64;
            for i in 0..8 {
                let corner = DVec3::new(
                    if i & 1 == 0 { 0.0 } else { sx },
                    if i & 2 == 0 { bottom } else { top },
                    if i & 4 == 0 { 0.0 } else { sz },
                );
                let (x, y) = c.project_to_screen(corner, 1600.0, 900.0).unwrap();
                assert!(
                    (0.0..=1600.0).contains(&x) && (0.0..=900.0).contains(&y),
                    "{corner} at ({x}, {y})"
                );
                farthest = farthest.max(corner.distance(p));
            }
            assert_eq!(view.reach_studs, farthest);
        }
    }

    #[test]
    fn far_from_origin_offsets_are_exact() {
        let c = Camera::new(DVec3::new(4.0e6 + 0.25, 0.0, 0.0), 0.0, 0.0);
        let r = c.relative(DVec3::new(4.0e6 + 128.0, 0.0, 0.0));
        assert_eq!(r.x, 127.75);
    }
}
