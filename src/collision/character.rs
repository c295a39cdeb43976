//! A kinematic capsule character ("walker") on the terrain colliders.
//!
//! Collide-and-slide with capsule shape casts against the
//! [`CollisionCache`]: each fixed step moves horizontally (stepping up
//! ledges of at most one cell, sliding along walls and steep slopes), then
//! vertically under gravity (landing on walkable ground, sliding down steep
//! slopes), then snaps down to walkable ground it was standing on. A capsule
//! that overlaps the terrain at the start of a step (an edit added terrain
//! around it) is lifted onto the surface first. All arithmetic is plain IEEE
//! (`f64` positions, `f32` per-chunk casts), so a fixed `dt` gives exactly
//! reproducible runs.
//!
//! Numbers: 2 cells (8 studs) tall, radius 1.5 studs, eye at 7 studs; steps
//! up to 1 cell (4 studs); walkable up to 50°; gravity 196.2 studs/s², walk
//! speed 16 studs/s and jump speed 50 studs/s (the Roblox defaults).

use glam::{DVec2, DVec3, Vec3};
use parry3d::math::Pose;
use parry3d::query::intersection_test;
use parry3d::shape::Capsule;

use super::query::{CapsuleSpec, QueryError, QueryOutcome};
use super::{CollisionCache, TerrainId};
use crate::terrain::storage::coords::{CELL_SIZE_STUDS, CHUNK_SIZE_CELLS, CellBox, CellCoord};
use crate::terrain::storage::grid::Grid;

/// The fixed physics step the editor and scripts use, seconds.
pub const FIXED_DT_S: f64 = 1.0 / 60.0;

/// Shape and motion parameters of a [`Walker`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WalkerSettings {
    /// Capsule radius, studs.
    pub radius_studs: f64,
    /// Total capsule height, studs (2 cells).
    pub height_studs: f64,
    /// Eye height above the feet, studs.
    pub eye_height_studs: f64,
    /// Highest ledge climbed without jumping, studs (1 cell).
    pub step_height_studs: f64,
    /// Steepest walkable slope, degrees.
    pub max_slope_deg: f64,
    /// Downward acceleration, studs/s².
    pub gravity_studs_per_s2: f64,
    /// Horizontal speed at full input, studs/s.
    pub walk_speed_studs_per_s: f64,
    /// Upward speed of a jump, studs/s.
    pub jump_speed_studs_per_s: f64,
    /// Fastest fall, studs/s.
    pub terminal_speed_studs_per_s: f64,
    /// Gap kept between the capsule and the terrain, studs.
    pub skin_studs: f64,
}

impl Default for WalkerSettings {
    fn default() -> Self {
        WalkerSettings {
            radius_studs: 1.5,
            height_studs: 2.0 * f64::from(CELL_SIZE_STUDS),
            eye_height_studs: 7.0,
            step_height_studs: f64::from(CELL_SIZE_STUDS),
            max_slope_deg: 50.0,
            gravity_studs_per_s2: 196.2,
            walk_speed_studs_per_s: 16.0,
            jump_speed_studs_per_s: 50.0,
            terminal_speed_studs_per_s: 240.0,
            skin_studs: 0.02,
        }
    }
}

/// Input of one step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WalkInput {
    /// Desired horizontal direction in world `(x, z)`; length is clamped to 1
    /// (full speed).
    pub move_xz: DVec2,
    /// Jump if standing on walkable ground.
    pub jump: bool,
}

/// What one [`Walker::step`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepReport {
    /// Horizontal distance moved, studs.
    pub moved_xz_studs: f64,
    /// Standing on walkable ground after the step.
    pub grounded: bool,
    /// Climbed a ledge this step.
    pub stepped_up: bool,
    /// Was lifted out of terrain that overlapped it.
    pub lifted: bool,
}

/// Errors of [`Walker::step`].
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum WalkError {
    /// A query against the cache failed (stale cache, bad input).
    #[error(transparent)]
    Query(#[from] QueryError),
    /// The step's input is not finite or `dt` is not positive.
    #[error("invalid walk input: {0}")]
    InvalidInput(&'static str),
    /// The motion left the cache's region (update it with
    /// [`Walker::region`] before each step).
    #[error("walker left the collision region")]
    OutOfRegion,
    /// The chunk columns under the walker of a streaming world could not be
    /// loaded (spec §12).
    #[error("the walker's ground could not be loaded: {0}")]
    Ground(#[from] crate::terrain::streaming::column_source::SourceError),
}

/// A capsule character standing or moving on the terrain.
#[derive(Clone, Debug, PartialEq)]
pub struct Walker {
    /// Bottom of the capsule, world studs.
    pub feet_world: DVec3,
    /// Velocity, studs/s.
    pub velocity: DVec3,
    /// Standing on walkable ground.
    pub grounded: bool,
    /// Shape and motion parameters.
    pub settings: WalkerSettings,
}

impl Walker {
    /// A walker with its feet at `feet_world`, at rest, not grounded.
    pub fn new(feet_world: DVec3, settings: WalkerSettings) -> Walker {
        Walker {
            feet_world,
            velocity: DVec3::ZERO,
            grounded: false,
            settings,
        }
    }

    /// The eye (camera) position, world studs.
    pub fn eye_world(&self) -> DVec3 {
        self.feet_world + DVec3::Y * self.settings.eye_height_studs
    }

    /// The collision region a step needs: the chunks within one chunk of
    /// the walker's centre cell (27 chunks), which holds any motion of one
    /// step at up to terminal speed.
    pub fn region(&self) -> CellBox {
        let centre = self.feet_world + DVec3::Y * (self.settings.height_studs * 0.5);
        let cell = CellCoord::containing_world(centre).0;
        CellBox::new(cell, cell + glam::IVec3::ONE).expanded(CHUNK_SIZE_CELLS)
    }

    /// The capsule with its feet at `feet`.
    fn capsule(&self, feet: DVec3) -> CapsuleSpec {
        let s = &self.settings;
        CapsuleSpec {
            centre_world: feet + DVec3::Y * (s.height_studs * 0.5),
            half_height_studs: (s.height_studs * 0.5 - s.radius_studs) as f32,
            radius_studs: s.radius_studs as f32,
        }
    }

    fn walkable(&self, normal: Vec3) -> bool {
        f64::from(normal.y) >= self.settings.max_slope_deg.to_radians().cos()
    }

    /// Advances the walker by `dt` seconds with `input`. The cache must be
    /// current for `grid` and cover [`Walker::region`].
    ///
    /// # Errors
    /// [`WalkError`] for bad input, a stale cache or a motion leaving the
    /// region; the walker is unchanged only for bad input.
    pub fn step(
        &mut self,
        cache: &CollisionCache,
        grid: &Grid,
        terrain: TerrainId,
        input: &WalkInput,
        dt: f64,
    ) -> Result<StepReport, WalkError> {
        if !(dt.is_finite() && dt > 0.0) {
            return Err(WalkError::InvalidInput("dt must be positive and finite"));
        }
        if !input.move_xz.is_finite() {
            return Err(WalkError::InvalidInput("move direction is not finite"));
        }
        let w = World {
            cache,
            grid,
            terrain,
        };
        let s = self.settings;
        let mut report = StepReport {
            lifted: self.lift_out_of_terrain(&w)?,
            ..StepReport::default()
        };
        let was_grounded = self.grounded;
        // Resting on a steep lip (not grounded, barely moving vertically)
        // may step up too, or a ledge's rounded edge could hold it forever.
        let resting = self.velocity.y.abs() <= 2.0 * s.gravity_studs_per_s2 * dt;
        let mut jumped = false;
        if self.grounded && input.jump {
            self.velocity.y = s.jump_speed_studs_per_s;
            self.grounded = false;
            jumped = true;
        }
        let mv = input.move_xz.clamp_length_max(1.0) * s.walk_speed_studs_per_s;
        self.velocity.x = mv.x;
        self.velocity.z = mv.y;
        self.velocity.y =
            (self.velocity.y - s.gravity_studs_per_s2 * dt).max(-s.terminal_speed_studs_per_s);

        let before = self.feet_world;
        report.stepped_up = self.move_horizontal(
            &w,
            DVec3::new(mv.x * dt, 0.0, mv.y * dt),
            (was_grounded || resting) && !jumped,
        )?;
        self.move_vertical(&w, self.velocity.y * dt, dt)?;
        if !self.grounded && was_grounded && !jumped && self.velocity.y <= 0.0 {
            self.snap_down(&w)?;
        }
        report.grounded = self.grounded;
        let d = self.feet_world - before;
        report.moved_xz_studs = DVec2::new(d.x, d.z).length();
        Ok(report)
    }

    /// First impact of the capsule moved from `feet` along unit `dir` up to
    /// `dist`, as (distance, normal).
    fn cast(
        &self,
        w: &World,
        feet: DVec3,
        dir: DVec3,
        dist: f64,
    ) -> Result<Option<(f64, Vec3)>, WalkError> {
        match w
            .cache
            .cast_capsule(w.grid, w.terrain, &self.capsule(feet), dir, dist)?
        {
            QueryOutcome::Hit(h) => Ok(Some((h.distance_studs, h.normal))),
            QueryOutcome::Miss => Ok(None),
            QueryOutcome::OutOfRegion => Err(WalkError::OutOfRegion),
        }
    }

    /// True when the capsule at `feet` overlaps a collider, or its centre
    /// sample lies inside the solid (buried entirely by an edit).
    fn overlaps(&self, w: &World, feet: DVec3) -> bool {
        let c = self.capsule(feet);
        let centre_cell = CellCoord::containing_world(c.centre_world);
        if w.grid.cell(centre_cell).is_inside() {
            return true;
        }
        let shape = Capsule::new_y(c.half_height_studs, c.radius_studs);
        w.cache.colliders().any(|col| {
            let o = col.coord.origin_world();
            let local = c.centre_world - o;
            let reach = c.half_height_studs as f64 + c.radius_studs as f64;
            let aabb = col.shape.local_aabb();
            if (local + reach).cmplt(aabb.mins.as_dvec3()).any()
                || (local - reach).cmpgt(aabb.maxs.as_dvec3()).any()
            {
                return false;
            }
            let pose = Pose::from_translation(local.as_vec3());
            intersection_test(&pose, &shape, &Pose::IDENTITY, col.shape.as_ref())
                .is_ok_and(|i| i.intersecting)
        })
    }

    /// Lifts a capsule that overlaps the terrain onto the surface above it:
    /// tries heights of 1, 2, 4, … 64 cells above the feet and drops from the
    /// first free one. Returns whether it moved.
    fn lift_out_of_terrain(&mut self, w: &World) -> Result<bool, WalkError> {
        if !self.overlaps(w, self.feet_world) {
            return Ok(false);
        }
        for cells in [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0] {
            let lift = cells * f64::from(CELL_SIZE_STUDS);
            let from = self.feet_world + DVec3::Y * lift;
            if self.overlaps(w, from) {
                continue;
            }
            let drop = match self.cast(w, from, DVec3::NEG_Y, lift)? {
                Some((d, _)) => (d - self.settings.skin_studs).max(0.0),
                None => lift,
            };
            self.feet_world = from - DVec3::Y * drop;
            self.velocity.y = 0.0;
            return Ok(true);
        }
        Ok(false)
    }

    /// Collide-and-slide along horizontal displacement `d`; tries a step up
    /// at the first wall when `allow_step`. Returns whether it stepped up.
    fn move_horizontal(
        &mut self,
        w: &World,
        d: DVec3,
        allow_step: bool,
    ) -> Result<bool, WalkError> {
        let skin = self.settings.skin_studs;
        let mut remaining = d;
        let mut stepped = false;
        for _ in 0..4 {
            let len = remaining.length();
            if len < 1e-9 {
                break;
            }
            let dir = remaining / len;
            let Some((dist, normal)) = self.cast(w, self.feet_world, dir, len)? else {
                self.feet_world += remaining;
                break;
            };
            if dist < skin && dir.dot(normal.as_dvec3()) > -0.05 {
                // Grazing the surface it stands on (within the skin): motion
                // along it or away from it is not blocked.
                self.feet_world += remaining;
                break;
            }
            let travel = (dist - skin).max(0.0);
            self.feet_world += dir * travel;
            remaining = dir * (len - travel);
            if allow_step
                && !stepped
                && !self.walkable(normal)
                && let Some(feet) = self.try_step_up(w, remaining)?
            {
                self.feet_world = feet;
                stepped = true;
                break;
            }
            let mut n = normal.as_dvec3();
            if !self.walkable(normal) {
                // Walls and steep slopes block horizontally only: never climb them.
                n.y = 0.0;
                n = n.normalize_or_zero();
                if n == DVec3::ZERO {
                    break;
                }
            }
            remaining -= n * remaining.dot(n);
        }
        Ok(stepped)
    }

    /// Up by at most one step height, forward by `remaining`, down onto
    /// walkable ground; the new feet, or `None` when that does not land.
    fn try_step_up(&self, w: &World, remaining: DVec3) -> Result<Option<DVec3>, WalkError> {
        let s = &self.settings;
        let len = remaining.length();
        if len < 1e-6 {
            return Ok(None);
        }
        let up = match self.cast(w, self.feet_world, DVec3::Y, s.step_height_studs)? {
            Some((d, _)) => (d - s.skin_studs).max(0.0),
            None => s.step_height_studs,
        };
        if up < 0.25 * s.step_height_studs {
            return Ok(None);
        }
        let raised = self.feet_world + DVec3::Y * up;
        let dir = remaining / len;
        // Probe at least a radius and half a cell ahead: Surface Nets
        // rounds a ledge's lip over about a cell, and a capsule resting
        // against it must find the ledge's top, not the lip.
        let probe = len.max(s.radius_studs + 0.5 * f64::from(CELL_SIZE_STUDS));
        let ahead = match self.cast(w, raised, dir, probe)? {
            Some((d, _)) => (d - s.skin_studs).max(0.0),
            None => probe,
        };
        if ahead < 1e-3 {
            return Ok(None);
        }
        let landing = raised + dir * ahead;
        match self.cast(w, landing, DVec3::NEG_Y, up)? {
            Some((_, n)) if self.walkable(n) => {}
            _ => return Ok(None),
        }
        // Walk only `len` forward, then settle down onto whatever is there.
        let moved = raised + dir * ahead.min(len);
        Ok(Some(match self.cast(w, moved, DVec3::NEG_Y, up)? {
            Some((d, _)) => moved - DVec3::Y * (d - s.skin_studs).max(0.0),
            None => moved - DVec3::Y * up,
        }))
    }

    /// Vertical motion by `dy` studs: lands on walkable ground, slides down
    /// steep slopes, stops at ceilings.
    fn move_vertical(&mut self, w: &World, dy: f64, dt: f64) -> Result<(), WalkError> {
        let skin = self.settings.skin_studs;
        self.grounded = false;
        let mut remaining = DVec3::Y * dy;
        for _ in 0..4 {
            let len = remaining.length();
            if len < 1e-9 {
                break;
            }
            let dir = remaining / len;
            let Some((dist, normal)) = self.cast(w, self.feet_world, dir, len)? else {
                self.feet_world += remaining;
                break;
            };
            let travel = (dist - skin).max(0.0);
            self.feet_world += dir * travel;
            if dir.y < 0.0 && self.walkable(normal) {
                self.grounded = true;
                self.velocity.y = 0.0;
                break;
            }
            let n = normal.as_dvec3();
            if dir.y > 0.0 && n.y < 0.0 {
                self.velocity.y = 0.0;
                break;
            }
            // Steep slope: slide along it (downhill and away).
            remaining = dir * (len - travel);
            remaining -= n * remaining.dot(n);
            // Only the vertical velocity slides (horizontal input must not
            // turn into climbing): vy · (1 - n.y²), never upward.
            let v = DVec3::Y * self.velocity.y;
            self.velocity.y = (v - n * v.dot(n)).y.min(0.0);
            if remaining.length() * 1e3 < dt {
                break;
            }
        }
        Ok(())
    }

    /// Moves down onto walkable ground within one step height (keeps the
    /// walker on the ground walking down slopes and steps).
    fn snap_down(&mut self, w: &World) -> Result<(), WalkError> {
        let s = self.settings;
        if let Some((d, n)) = self.cast(w, self.feet_world, DVec3::NEG_Y, s.step_height_studs)?
            && self.walkable(n)
        {
            self.feet_world.y -= (d - s.skin_studs).max(0.0);
            self.grounded = true;
            self.velocity.y = 0.0;
        }
        Ok(())
    }
}

/// What a step reads.
struct World<'a> {
    cache: &'a CollisionCache,
    grid: &'a Grid,
    terrain: TerrainId,
}

/// Height (world studs) of the topmost solid surface in the column through
/// `(x, z)` (world studs), from the grid alone: per sample column the 0.5
/// crossing of the highest inside sample and the one above it (linear, as
/// Surface Nets places crossings), bilinearly interpolated between the 4
/// sample columns around the point. `None` when one of those columns holds
/// no solid.
pub fn column_surface_height_studs(grid: &Grid, x: f64, z: f64) -> Option<f64> {
    let ([h00, h10, h01, h11], tx, tz) = surrounding_surfaces_studs(grid, x, z)?;
    Some((h00 * (1.0 - tx) + h10 * tx) * (1.0 - tz) + (h01 * (1.0 - tx) + h11 * tx) * tz)
}

/// The lowest of the 4 sample columns' topmost surfaces around `(x, z)`
/// (world studs; see [`column_surface_height_studs`]): feet below it are
/// under the ground wherever they stand between those columns. At the foot
/// of a cliff the interpolated surface lies up to the cliff's height above
/// the ground the feet stand on; this one does not. `None` when one of
/// those columns holds no solid.
pub fn lowest_surface_near_studs(grid: &Grid, x: f64, z: f64) -> Option<f64> {
    let (h, _, _) = surrounding_surfaces_studs(grid, x, z)?;
    Some(h.into_iter().fold(f64::INFINITY, f64::min))
}

/// The topmost surfaces (studs) of the 4 sample columns around `(x, z)`,
/// `[x0z0, x1z0, x0z1, x1z1]`, and the point's fractions between them.
fn surrounding_surfaces_studs(grid: &Grid, x: f64, z: f64) -> Option<([f64; 4], f64, f64)> {
    let bounds = grid.bounds_cells()?;
    let cell = f64::from(CELL_SIZE_STUDS);
    let (fx, fz) = (x / cell - 0.5, z / cell - 0.5);
    if !(fx.is_finite() && fz.is_finite()) {
        return None;
    }
    let (x0, z0) = (fx.floor(), fz.floor());
    let (tx, tz) = (fx - x0, fz - z0);
    let column = |cx: i32, cz: i32| -> Option<f64> {
        for y in (bounds.min.y..bounds.max.y).rev() {
            let c = grid.cell(CellCoord::new(cx, y, cz));
            if c.is_inside() {
                let a = f64::from(c.solid_occupancy());
                let b = f64::from(grid.cell(CellCoord::new(cx, y + 1, cz)).solid_occupancy());
                let t = (127.5 - a) / (b - a);
                return Some((f64::from(y) + 0.5 + t) * cell);
            }
        }
        None
    };
    let (ix, iz) = (x0 as i32, z0 as i32);
    Some((
        [
            column(ix, iz)?,
            column(ix + 1, iz)?,
            column(ix, iz + 1)?,
            column(ix + 1, iz + 1)?,
        ],
        tx,
        tz,
    ))
}
