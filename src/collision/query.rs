//! Spatial queries against a [`CollisionCache`]: ray cast, point projection
//! and capsule shape cast, in world studs (`f64`).
//!
//! Every query validates its input first (finite values, non-zero
//! direction, non-negative distances, positive radii) and returns
//! [`QueryError`] instead of panicking. A query needs the cache to be
//! current for the grid it is given ([`QueryError::Stale`] otherwise), and to
//! lie inside the cache's region: when the answer could depend on terrain
//! outside it, the outcome is [`QueryOutcome::OutOfRegion`]. The material at
//! a hit is looked up from the grid (the solid sample with the highest
//! occupancy among the 8 around the hit point).

use glam::{DVec3, Vec3};
use parry3d::math::Pose;
use parry3d::query::{PointQuery, Ray, RayCast, ShapeCastOptions, ShapeCastStatus, cast_shapes};
use parry3d::shape::Capsule;

use super::{CollisionCache, TerrainId};
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::{CELL_SIZE_STUDS, CHUNK_SIZE_STUDS, CellCoord, ChunkCoord};
use crate::terrain::storage::grid::Grid;

/// Bad input or a cache that does not match the grid.
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum QueryError {
    /// A NaN or infinite value, a zero direction, a negative distance or a
    /// non-positive radius; names the argument.
    #[error("invalid query argument: {0}")]
    InvalidArgument(&'static str),
    /// The cache was built for another terrain, generation or revision:
    /// call [`CollisionCache::update`] first.
    #[error("collision cache is not current for this grid")]
    Stale,
}

/// Outcome of a valid query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueryOutcome<H> {
    /// The terrain was hit.
    Hit(H),
    /// Nothing within the query's distance, all of it inside the region.
    Miss,
    /// The query reaches outside the cache's region before any hit.
    OutOfRegion,
}

/// A point on the terrain surface found by a ray cast or point projection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TerrainHit {
    /// The point, world studs.
    pub point_world: DVec3,
    /// Unit normal of the hit triangle, facing the query origin (for a ray,
    /// against the ray; for a projection, toward the projected point).
    pub normal: Vec3,
    /// Distance from the query origin, studs.
    pub distance_studs: f64,
    /// The chunk whose collider was hit.
    pub chunk: ChunkCoord,
    /// Solid material at the hit, from the grid (`None` only when no solid
    /// sample lies around the point).
    pub material: Option<Material>,
}

/// A capsule shape-cast impact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CapsuleHit {
    /// Distance travelled before the impact, studs (0 when penetrating at start).
    pub distance_studs: f64,
    /// Contact point on the terrain, world studs.
    pub point_world: DVec3,
    /// Unit terrain normal at the contact (pointing out of the terrain,
    /// toward the capsule).
    pub normal: Vec3,
    /// The chunk whose collider was hit.
    pub chunk: ChunkCoord,
    /// Solid material at the contact, from the grid.
    pub material: Option<Material>,
    /// The capsule already touched or overlapped the terrain at the start.
    pub penetrating: bool,
}

/// A vertical capsule: the segment from `centre - half_height` to
/// `centre + half_height` along +Y, swept by `radius`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CapsuleSpec {
    /// Centre, world studs.
    pub centre_world: DVec3,
    /// Half the segment length, studs (>= 0).
    pub half_height_studs: f32,
    /// Radius, studs (> 0).
    pub radius_studs: f32,
}

fn finite(v: DVec3, what: &'static str) -> Result<(), QueryError> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(QueryError::InvalidArgument(what))
    }
}

fn distance_ok(d: f64, what: &'static str) -> Result<(), QueryError> {
    if d.is_finite() && d >= 0.0 {
        Ok(())
    } else {
        Err(QueryError::InvalidArgument(what))
    }
}

fn unit_direction(d: DVec3) -> Result<DVec3, QueryError> {
    finite(d, "direction is not finite")?;
    let len = d.length();
    if len.is_finite() && len > 1e-12 {
        Ok(d / len)
    } else {
        Err(QueryError::InvalidArgument("direction is zero"))
    }
}

/// World origin of a chunk, studs.
fn origin(coord: ChunkCoord) -> DVec3 {
    coord.origin_world()
}

/// Distance along `dir` (unit) from `from` at which a box of half extents
/// `half` centred there leaves the box `[lo, hi]`, or `None` when it starts
/// outside.
fn exit_distance(from: DVec3, half: DVec3, dir: DVec3, lo: DVec3, hi: DVec3) -> Option<f64> {
    let (lo, hi) = (lo + half, hi - half);
    if from.cmplt(lo).any() || from.cmpgt(hi).any() {
        return None;
    }
    let mut t = f64::INFINITY;
    for a in 0..3 {
        if dir[a] > 0.0 {
            t = t.min((hi[a] - from[a]) / dir[a]);
        } else if dir[a] < 0.0 {
            t = t.min((lo[a] - from[a]) / dir[a]);
        }
    }
    Some(t.max(0.0))
}

impl CollisionCache {
    fn check_current(&self, grid: &Grid, terrain: TerrainId) -> Result<(), QueryError> {
        if self.is_current(grid, terrain) {
            Ok(())
        } else {
            Err(QueryError::Stale)
        }
    }

    /// The region as world studs `(min, max)`.
    fn region_world(&self) -> Option<(DVec3, DVec3)> {
        self.table.region.map(|(lo, hi)| {
            (
                lo.as_dvec3() * CHUNK_SIZE_STUDS as f64,
                (hi + glam::IVec3::ONE).as_dvec3() * CHUNK_SIZE_STUDS as f64,
            )
        })
    }

    /// Colliders whose world bounds, grown by `margin`, meet the box `[lo, hi]`.
    fn colliders_near(
        &self,
        lo: DVec3,
        hi: DVec3,
        margin: f64,
    ) -> impl Iterator<Item = &super::ChunkCollider> {
        self.table.entries.values().filter(move |c| {
            let aabb = c.shape.local_aabb();
            let o = origin(c.coord);
            let (a, b) = (
                o + aabb.mins.as_dvec3() - margin,
                o + aabb.maxs.as_dvec3() + margin,
            );
            a.cmple(hi).all() && b.cmpge(lo).all()
        })
    }

    /// Casts a ray from `origin_world` along `direction` (any length, not
    /// zero) up to `max_distance_studs`; returns the nearest terrain hit.
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] for NaN/infinite input, a zero
    /// direction or a negative distance; [`QueryError::Stale`] when the cache
    /// is not current for `grid` of `terrain`.
    pub fn cast_ray(
        &self,
        grid: &Grid,
        terrain: TerrainId,
        origin_world: DVec3,
        direction: DVec3,
        max_distance_studs: f64,
    ) -> Result<QueryOutcome<TerrainHit>, QueryError> {
        finite(origin_world, "origin is not finite")?;
        let dir = unit_direction(direction)?;
        distance_ok(max_distance_studs, "max distance is negative or not finite")?;
        self.check_current(grid, terrain)?;
        let Some((lo, hi)) = self.region_world() else {
            return Ok(QueryOutcome::OutOfRegion);
        };
        let Some(exit) = exit_distance(origin_world, DVec3::ZERO, dir, lo, hi) else {
            return Ok(QueryOutcome::OutOfRegion);
        };
        let reach = max_distance_studs.min(exit);
        let end = origin_world + dir * reach;
        let mut best: Option<(f64, Vec3, ChunkCoord)> = None;
        for c in self.colliders_near(origin_world.min(end), origin_world.max(end), 0.0) {
            let local = (origin_world - origin(c.coord)).as_vec3();
            let ray = Ray::new(local, dir.as_vec3());
            let limit = best.map_or(reach, |b| b.0) as f32;
            if let Some(hit) = c.shape.cast_local_ray_and_get_normal(&ray, limit, true) {
                let t = f64::from(hit.time_of_impact);
                if best.is_none_or(|b| t < b.0) {
                    best = Some((t, hit.normal, c.coord));
                }
            }
        }
        Ok(match best {
            Some((t, normal, chunk)) => {
                let point = origin_world + dir * t;
                let normal = if normal.dot(dir.as_vec3()) > 0.0 {
                    -normal
                } else {
                    normal
                };
                QueryOutcome::Hit(TerrainHit {
                    point_world: point,
                    normal: normal.normalize_or(Vec3::Y),
                    distance_studs: t,
                    chunk,
                    material: material_at(grid, point),
                })
            }
            None if exit < max_distance_studs => QueryOutcome::OutOfRegion,
            None => QueryOutcome::Miss,
        })
    }

    /// The terrain point nearest to `point_world` within `max_distance_studs`.
    ///
    /// # Errors
    /// As [`CollisionCache::cast_ray`].
    pub fn project_point(
        &self,
        grid: &Grid,
        terrain: TerrainId,
        point_world: DVec3,
        max_distance_studs: f64,
    ) -> Result<QueryOutcome<TerrainHit>, QueryError> {
        finite(point_world, "point is not finite")?;
        distance_ok(max_distance_studs, "max distance is negative or not finite")?;
        self.check_current(grid, terrain)?;
        let Some((lo, hi)) = self.region_world() else {
            return Ok(QueryOutcome::OutOfRegion);
        };
        // Distance from the point to the region's boundary (inside only).
        let Some(room) = exit_distance(point_world, DVec3::ZERO, DVec3::X, lo, hi)
            .map(|_| (point_world - lo).min(hi - point_world).min_element())
        else {
            return Ok(QueryOutcome::OutOfRegion);
        };
        let r = DVec3::splat(max_distance_studs);
        let mut best: Option<(f64, DVec3, ChunkCoord)> = None;
        for c in self.colliders_near(point_world - r, point_world + r, 0.0) {
            let o = origin(c.coord);
            let local = (point_world - o).as_vec3();
            let proj = c.shape.project_local_point(local, false);
            let p = o + proj.point.as_dvec3();
            let d = p.distance(point_world);
            if d <= max_distance_studs && best.is_none_or(|b| d < b.0) {
                best = Some((d, p, c.coord));
            }
        }
        Ok(match best {
            Some((d, p, chunk)) if d <= room => {
                let normal = (point_world - p).as_vec3().normalize_or(Vec3::Y);
                QueryOutcome::Hit(TerrainHit {
                    point_world: p,
                    normal,
                    distance_studs: d,
                    chunk,
                    material: material_at(grid, p),
                })
            }
            None if max_distance_studs <= room => QueryOutcome::Miss,
            _ => QueryOutcome::OutOfRegion,
        })
    }

    /// Sweeps `capsule` along `direction` up to `max_distance_studs` and
    /// returns the first impact with the terrain (distance 0 and
    /// `penetrating` when it already touches it; motions that separate from a
    /// touching contact are not reported).
    ///
    /// # Errors
    /// As [`CollisionCache::cast_ray`], plus a non-positive radius or negative
    /// half height.
    pub fn cast_capsule(
        &self,
        grid: &Grid,
        terrain: TerrainId,
        capsule: &CapsuleSpec,
        direction: DVec3,
        max_distance_studs: f64,
    ) -> Result<QueryOutcome<CapsuleHit>, QueryError> {
        finite(capsule.centre_world, "capsule centre is not finite")?;
        if !(capsule.radius_studs.is_finite() && capsule.radius_studs > 0.0) {
            return Err(QueryError::InvalidArgument("capsule radius must be > 0"));
        }
        if !(capsule.half_height_studs.is_finite() && capsule.half_height_studs >= 0.0) {
            return Err(QueryError::InvalidArgument(
                "capsule half height must be >= 0",
            ));
        }
        let dir = unit_direction(direction)?;
        distance_ok(max_distance_studs, "max distance is negative or not finite")?;
        self.check_current(grid, terrain)?;
        let Some((lo, hi)) = self.region_world() else {
            return Ok(QueryOutcome::OutOfRegion);
        };
        let r = f64::from(capsule.radius_studs);
        let half = DVec3::new(r, r + f64::from(capsule.half_height_studs), r);
        let Some(exit) = exit_distance(capsule.centre_world, half, dir, lo, hi) else {
            return Ok(QueryOutcome::OutOfRegion);
        };
        let reach = max_distance_studs.min(exit);
        let start = capsule.centre_world;
        let end = start + dir * reach;
        let shape = Capsule::new_y(capsule.half_height_studs, capsule.radius_studs);
        let options = ShapeCastOptions {
            max_time_of_impact: reach as f32,
            target_distance: 0.0,
            stop_at_penetration: false,
            compute_impact_geometry_on_penetration: true,
        };
        let mut best: Option<(f64, CapsuleHit)> = None;
        for c in self.colliders_near(start.min(end) - half, start.max(end) + half, 0.0) {
            let o = origin(c.coord);
            let pose = Pose::from_translation((start - o).as_vec3());
            let Ok(Some(hit)) = cast_shapes(
                &pose,
                dir.as_vec3(),
                &shape,
                &Pose::IDENTITY,
                Vec3::ZERO,
                c.shape.as_ref(),
                options,
            ) else {
                continue;
            };
            let t = f64::from(hit.time_of_impact);
            if best.as_ref().is_none_or(|b| t < b.0) {
                let point = o + hit.witness2.as_dvec3();
                best = Some((
                    t,
                    CapsuleHit {
                        distance_studs: t,
                        point_world: point,
                        normal: hit.normal2.normalize_or(Vec3::Y),
                        chunk: c.coord,
                        material: None,
                        penetrating: hit.status == ShapeCastStatus::PenetratingOrWithinTargetDist,
                    },
                ));
            }
        }
        Ok(match best {
            Some((_, mut hit)) => {
                hit.material = material_at(grid, hit.point_world);
                QueryOutcome::Hit(hit)
            }
            None if exit < max_distance_studs => QueryOutcome::OutOfRegion,
            None => QueryOutcome::Miss,
        })
    }
}

/// The solid material at a surface point: of the 8 samples around it (the
/// cube containing the point), the solid one with the highest occupancy,
/// ties to the lower material id.
pub fn material_at(grid: &Grid, point_world: DVec3) -> Option<Material> {
    let cube = (point_world / f64::from(CELL_SIZE_STUDS) - 0.5).floor();
    if !cube.is_finite() || cube.abs().max_element() > f64::from(i32::MAX - 2) {
        return None;
    }
    let base = cube.as_ivec3();
    let mut best: Option<(u8, Material)> = None;
    for i in 0..8 {
        let d = glam::IVec3::new(i & 1, (i >> 1) & 1, i >> 2);
        let cell = grid.cell(CellCoord(base + d));
        let occ = cell.solid_occupancy();
        if occ == 0 {
            continue;
        }
        let m = cell.material();
        if best.is_none_or(|(o, bm)| occ > o || (occ == o && m.0 < bm.0)) {
            best = Some((occ, m));
        }
    }
    best.map(|b| b.1)
}
