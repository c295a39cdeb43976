//! The overlay lines of one frame, on the CPU: a [`LineBatch`] of
//! depth-tested lines and lines drawn on top, and the shapes pushed into it
//! (boxes, markers, editor previews such as the paste preview and the
//! Flatten plane's disc). Vertices are camera-relative, rebuilt each frame
//! from `f64` world positions (spec §1).

use std::sync::Arc;

use glam::{DVec3, Vec3};

use super::gpu_data::LineVertex;

/// Colour of chunk bound lines (sRGB + alpha).
pub const CHUNK_LINE_COLOR: [u8; 4] = [250, 250, 235, 200];
/// Colour of seam-audit markers (sRGB + alpha).
pub const MARKER_COLOR: [u8; 4] = [255, 30, 30, 255];

/// Lines of an editor preview (the paste preview, the Flatten plane): segments
/// relative to an origin, so cached geometry moves with the cursor by a new
/// origin alone. Drawn depth-tested in `color`, and on top in `hidden_color`
/// (fainter, so the parts behind the terrain still show) when set.
#[derive(Clone, Debug, PartialEq)]
pub struct PreviewLines {
    /// Where the segments' origin lies, world studs.
    pub origin_world: DVec3,
    /// Segment end points, studs from `origin_world`.
    pub segments_studs: Arc<[[Vec3; 2]]>,
    /// Colour where the lines are in front of the terrain (sRGB + alpha).
    pub color: [u8; 4],
    /// Colour drawn over everything, for the hidden parts (sRGB + alpha).
    pub hidden_color: Option<[u8; 4]>,
}

/// The outline of a flat disc of `radius_studs` around the origin,
/// perpendicular to the unit `normal`: a circle of `segments` pieces and
/// chords parallel to two in-plane axes every third of the radius, so it
/// reads as a plane. Studs, relative to the disc's centre.
pub fn disc_segments(normal: Vec3, radius_studs: f32, segments: usize) -> Vec<[Vec3; 2]> {
    let n = normal.normalize_or(Vec3::Y);
    let (u, v) = n.any_orthonormal_pair();
    let point = |i: usize| {
        let a = i as f32 / segments.max(3) as f32 * std::f32::consts::TAU;
        (u * a.cos() + v * a.sin()) * radius_studs
    };
    let mut out: Vec<[Vec3; 2]> = (0..segments.max(3))
        .map(|i| [point(i), point(i + 1)])
        .collect();
    for k in [-2.0f32, -1.0, 0.0, 1.0, 2.0] {
        let offset = k / 3.0 * radius_studs;
        let half = (radius_studs * radius_studs - offset * offset)
            .max(0.0)
            .sqrt();
        out.push([u * offset - v * half, u * offset + v * half]);
        out.push([v * offset - u * half, v * offset + u * half]);
    }
    out
}

/// Line vertices of one frame: depth-tested lines and lines drawn on top.
#[derive(Clone, Debug, Default)]
pub struct LineBatch {
    /// Depth-tested against the terrain (chunk bounds).
    pub tested: Vec<LineVertex>,
    /// Drawn over everything (markers).
    pub on_top: Vec<LineVertex>,
}

impl LineBatch {
    /// Empties both lists, keeping their allocations.
    pub fn clear(&mut self) {
        self.tested.clear();
        self.on_top.clear();
    }

    /// True when there is nothing to draw.
    pub fn is_empty(&self) -> bool {
        self.tested.is_empty() && self.on_top.is_empty()
    }

    /// Appends the 12 edges of the box `[min_rel, max_rel]` (camera-relative studs).
    pub fn push_box(out: &mut Vec<LineVertex>, min_rel: Vec3, max_rel: Vec3, color: [u8; 4]) {
        let corner = |i: usize| {
            Vec3::new(
                if i & 1 == 0 { min_rel.x } else { max_rel.x },
                if i & 2 == 0 { min_rel.y } else { max_rel.y },
                if i & 4 == 0 { min_rel.z } else { max_rel.z },
            )
        };
        for a in 0..8usize {
            for axis in [1usize, 2, 4] {
                if a & axis == 0 {
                    for p in [corner(a), corner(a | axis)] {
                        out.push(LineVertex {
                            pos_rel: p.to_array(),
                            color,
                        });
                    }
                }
            }
        }
    }

    /// Appends `preview` seen from `camera_world`: camera-relative (the
    /// origin's offset in `f64`, then one cast, spec §1).
    pub fn push_preview(&mut self, preview: &PreviewLines, camera_world: DVec3) {
        let origin_rel = (preview.origin_world - camera_world).as_vec3();
        let vertex = |p: Vec3, color| LineVertex {
            pos_rel: (origin_rel + p).to_array(),
            color,
        };
        for [a, b] in preview.segments_studs.iter() {
            self.tested.push(vertex(*a, preview.color));
            self.tested.push(vertex(*b, preview.color));
        }
        if let Some(hidden) = preview.hidden_color {
            for [a, b] in preview.segments_studs.iter() {
                self.on_top.push(vertex(*a, hidden));
                self.on_top.push(vertex(*b, hidden));
            }
        }
    }

    /// Appends a marker at `pos_world` seen from `camera_world`: a 3D cross
    /// inside a box, sized to stay a few pixels large at any distance.
    pub fn push_marker(&mut self, pos_world: DVec3, camera_world: DVec3, color: [u8; 4]) {
        // f64 subtraction first, one cast (spec §1).
        let c = (pos_world - camera_world).as_vec3();
        let half = (c.length() * 0.012).max(1.5);
        Self::push_box(
            &mut self.on_top,
            c - Vec3::splat(half),
            c + Vec3::splat(half),
            color,
        );
        for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
            for p in [c - axis * half * 1.8, c + axis * half * 1.8] {
                self.on_top.push(LineVertex {
                    pos_rel: p.to_array(),
                    color,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_box_has_twelve_axis_aligned_edges() {
        let mut v = Vec::new();
        LineBatch::push_box(&mut v, Vec3::ZERO, Vec3::splat(128.0), [0; 4]);
        assert_eq!(v.len(), 24);
        for e in v.chunks_exact(2) {
            let d = Vec3::from(e[1].pos_rel) - Vec3::from(e[0].pos_rel);
            assert_eq!(d.abs().max_element(), 128.0);
            assert_eq!(d.abs().element_sum(), 128.0);
        }
    }

    #[test]
    fn previews_move_with_their_origin() {
        let mut b = LineBatch::default();
        let cam = DVec3::new(1.0e6, 50.0, 0.0);
        let preview = PreviewLines {
            origin_world: cam + DVec3::new(10.0, 0.0, 0.0),
            segments_studs: vec![[Vec3::ZERO, Vec3::new(4.0, 0.0, 0.0)]].into(),
            color: [1, 2, 3, 255],
            hidden_color: Some([1, 2, 3, 60]),
        };
        b.push_preview(&preview, cam);
        assert_eq!(b.tested.len(), 2);
        assert_eq!(b.tested[0].pos_rel, [10.0, 0.0, 0.0]);
        assert_eq!(b.tested[1].pos_rel, [14.0, 0.0, 0.0]);
        assert_eq!(b.on_top.len(), 2);
        assert_eq!(b.on_top[1].color, [1, 2, 3, 60]);
    }

    #[test]
    fn a_disc_lies_in_its_plane_within_its_radius() {
        let n = Vec3::new(0.0, 1.0, 1.0).normalize();
        let segs = disc_segments(n, 20.0, 48);
        assert_eq!(segs.len(), 48 + 10);
        for [a, b] in &segs {
            for p in [a, b] {
                assert!(p.dot(n).abs() < 1e-4, "{p} off the plane");
                assert!(p.length() <= 20.0 + 1e-3);
            }
        }
        // The circle's points are on the rim.
        for [a, _] in &segs[..48] {
            assert!((a.length() - 20.0).abs() < 1e-3);
        }
    }

    #[test]
    fn markers_are_camera_relative() {
        let mut b = LineBatch::default();
        let cam = DVec3::new(1.0e7, 0.0, -1.0e7);
        b.push_marker(cam + DVec3::new(100.0, 0.0, 0.0), cam, MARKER_COLOR);
        assert_eq!(b.on_top.len(), 24 + 6);
        assert!(b.tested.is_empty());
        for v in &b.on_top {
            assert!((Vec3::from(v.pos_rel) - Vec3::new(100.0, 0.0, 0.0)).length() < 10.0);
        }
    }
}
