//! CPU culling of chunks: the camera-relative view [`Frustum`] and the one
//! visible-chunk cull-and-sort loop, [`cull_and_sort`], shared by the
//! terrain (`render::terrain::chunk_buffers`) and water
//! (`render::water::water_buffers`) draw lists.
//!
//! Why in one place: both lists must agree on what "visible" means (the same
//! frustum test, draw distance and `f64` origin arithmetic); only the
//! per-chunk bounds, the instance data and the draw order differ.

use glam::{DVec3, Vec3};

use crate::terrain::storage::coords::ChunkCoord;

pub use crate::camera::Frustum;

/// The order of a draw list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrawOrder {
    /// Nearest first, so early depth testing skips hidden fragments (opaque).
    FrontToBack,
    /// Farthest first, the usual order for blended surfaces.
    BackToFront,
}

/// What a draw list is culled for this frame: the camera's position, its
/// camera-relative view frustum and the draw distance.
#[derive(Clone, Copy, Debug)]
pub struct CullView<'a> {
    /// The camera's position, world studs.
    pub camera_world: DVec3,
    /// The view frustum, camera-relative (see [`Frustum::from_clip_from_world`]).
    pub frustum: &'a Frustum,
    /// Chunks whose bounds lie entirely farther than this (studs) are
    /// dropped; `f32::INFINITY` keeps everything in the frustum.
    pub draw_distance_studs: f32,
}

/// One chunk that passed [`cull_and_sort`].
#[derive(Clone, Copy, Debug)]
pub struct VisibleChunk<T> {
    /// The chunk.
    pub coord: ChunkCoord,
    /// `coord.origin_world() - camera_world`, computed in `f64` and cast once.
    pub origin_rel: Vec3,
    /// What the caller made of it (its instance data).
    pub item: T,
}

/// The chunks of `chunks` that may be visible from `camera_world`, sorted in
/// `order` by the distance to their bounds' centre (ties by coordinate, so
/// the order is deterministic).
///
/// Each chunk gives its bounds in chunk-local studs `(min, max)` and a value;
/// it is kept when the nearest point of its camera-relative box lies within
/// `draw_distance_studs` and the box meets `frustum`. `make` turns a kept
/// chunk, its camera-relative origin and its value into the item stored.
pub fn cull_and_sort<'a, V: 'a, T>(
    chunks: impl IntoIterator<Item = (&'a ChunkCoord, &'a V)>,
    bounds_local: impl Fn(&V) -> (Vec3, Vec3),
    camera_world: DVec3,
    frustum: &Frustum,
    draw_distance_studs: f32,
    order: DrawOrder,
    mut make: impl FnMut(ChunkCoord, Vec3, &V) -> T,
) -> Vec<VisibleChunk<T>> {
    let max_d2 = draw_distance_studs * draw_distance_studs;
    let mut visible: Vec<(f32, VisibleChunk<T>)> = Vec::new();
    for (&coord, value) in chunks {
        // f64 subtraction first, one cast: exact near the camera (spec §1).
        let origin_rel = (coord.origin_world() - camera_world).as_vec3();
        let (lo_local, hi_local) = bounds_local(value);
        let (lo, hi) = (origin_rel + lo_local, origin_rel + hi_local);
        // Nearest point of the box to the camera (the origin).
        let nearest = Vec3::ZERO.clamp(lo, hi);
        if nearest.length_squared() > max_d2 || !frustum.intersects_aabb(lo, hi) {
            continue;
        }
        let centre = (lo + hi) * 0.5;
        visible.push((
            centre.length_squared(),
            VisibleChunk {
                coord,
                origin_rel,
                item: make(coord, origin_rel, value),
            },
        ));
    }
    visible.sort_by(|a, b| {
        let by_distance = match order {
            DrawOrder::FrontToBack => a.0.total_cmp(&b.0),
            DrawOrder::BackToFront => b.0.total_cmp(&a.0),
        };
        by_distance.then_with(|| cmp_coord(a.1.coord, b.1.coord))
    });
    visible.into_iter().map(|(_, v)| v).collect()
}

fn cmp_coord(a: ChunkCoord, b: ChunkCoord) -> std::cmp::Ordering {
    (a.0.x, a.0.y, a.0.z).cmp(&(b.0.x, b.0.y, b.0.z))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::Camera;
    use glam::IVec3;

    #[test]
    fn frustum_keeps_boxes_in_front_and_drops_boxes_behind() {
        let cam = Camera::new(DVec3::new(1.0e6, 0.0, 0.0), 0.0, 0.0);
        let f = Frustum::from_clip_from_world(cam.clip_from_world());
        // In front (−Z).
        assert!(f.intersects_aabb(
            Vec3::new(-10.0, -10.0, -200.0),
            Vec3::new(10.0, 10.0, -100.0)
        ));
        // Behind.
        assert!(!f.intersects_aabb(Vec3::new(-10.0, -10.0, 100.0), Vec3::new(10.0, 10.0, 200.0)));
        // Far to the side.
        assert!(!f.intersects_aabb(
            Vec3::new(5000.0, -10.0, -200.0),
            Vec3::new(5010.0, 10.0, -100.0)
        ));
        // Around the camera.
        assert!(f.intersects_aabb(Vec3::splat(-1.0), Vec3::splat(1.0)));
        // Very far in front (infinite far plane).
        assert!(f.intersects_aabb(Vec3::new(-1.0, -1.0, -1.0e7), Vec3::new(1.0, 1.0, -0.9e7)));
    }

    #[test]
    fn culls_by_frustum_and_distance_and_sorts_both_ways() {
        let cam = Camera::new(DVec3::ZERO, 0.0, 0.0);
        let f = Frustum::from_clip_from_world(cam.clip_from_world());
        let full = (Vec3::ZERO, Vec3::splat(128.0));
        // The camera looks along −Z: chunks at z = -1, -2, -3 in front, z = 1 behind.
        let chunks: Vec<(ChunkCoord, (Vec3, Vec3))> = [-1, -2, -3, 1]
            .into_iter()
            .map(|z| (ChunkCoord(IVec3::new(0, 0, z)), full))
            .collect();
        let run = |distance, order| {
            cull_and_sort(
                chunks.iter().map(|(c, b)| (c, b)),
                |b| *b,
                cam.pos_world,
                &f,
                distance,
                order,
                |c, _, _| c.0.z,
            )
            .into_iter()
            .map(|v| v.item)
            .collect::<Vec<i32>>()
        };
        assert_eq!(run(f32::INFINITY, DrawOrder::FrontToBack), [-1, -2, -3]);
        assert_eq!(run(f32::INFINITY, DrawOrder::BackToFront), [-3, -2, -1]);
        assert_eq!(run(200.0, DrawOrder::FrontToBack), [-1, -2]);
    }
}
