//! Walk mode and fly-camera collision for the editor window.
//!
//! Walk mode drops a capsule [`Walker`] onto the terrain under the camera
//! and runs it in fixed 1/60 s physics steps (so it behaves the same at any
//! frame rate); the camera follows at eye height and keeps its yaw and pitch
//! for looking around. Before every step the [`CollisionCache`] is updated
//! around the walker, so an edit (e.g. digging under the feet) takes effect
//! on the next step. Optionally the fly camera collides with the terrain as
//! a small sphere. Kept out of `app.rs` and `panel.rs` so the editor's other
//! features merge independently.
//!
//! On a streaming world (spec §12) the walker's collision is demand: the
//! window pins and requests [`WalkMode::ground_columns`], and the walker
//! holds still (it never falls into ground that is not loaded yet) while
//! any of them is not resident.

use glam::{DVec2, DVec3, IVec3};
use winit::keyboard::KeyCode;

use crate::camera::Camera;
use crate::collision::character::{FIXED_DT_S, column_surface_height_studs};
use crate::collision::query::CapsuleSpec;
use crate::collision::{
    CollisionCache, CollisionStats, QueryOutcome, TerrainId, WalkInput, Walker, WalkerSettings,
};
use crate::terrain::storage::coords::{CELL_SIZE_STUDS, CellBox, CellCoord, ColumnCoord};
use crate::terrain::storage::grid::Grid;

/// The editor's one terrain instance.
pub const EDITOR_TERRAIN: TerrainId = TerrainId(0);
/// Most physics steps run in one frame (a stall does not fast-forward).
pub const MAX_STEPS_PER_FRAME: u32 = 15;
/// Radius of the fly camera's collision sphere, studs.
pub const FLY_COLLISION_RADIUS_STUDS: f32 = 1.0;
/// Fly motions longer than this per frame skip collision (the region to
/// build would be too large), studs.
pub const FLY_COLLISION_MAX_STEP_STUDS: f64 = 512.0;

/// Walk mode state, its keys, and the collision cache it uses.
#[derive(Debug, Default)]
pub struct WalkMode {
    walker: Option<Walker>,
    /// The fly camera stops at the terrain.
    pub fly_collides: bool,
    cache: CollisionCache,
    accumulator_s: f64,
    forward: bool,
    back: bool,
    left: bool,
    right: bool,
    jump: bool,
    /// The last problem (shown in the panel), if any.
    pub last_error: Option<String>,
    /// Columns of the walker's region not resident at the last update (a
    /// streaming world still loading them; the walker holds still).
    loading_columns: usize,
    /// Walk mode was on when the world was replaced: the walker is dropped
    /// again under the camera as soon as the ground there is resident.
    drop_pending: bool,
}

/// How far along the camera's view ray a walker may be dropped, studs.
pub const DROP_RAY_STUDS: f64 = 20_000.0;

/// Step of the march along the view ray, studs (one cell).
const DROP_RAY_STEP_STUDS: f64 = CELL_SIZE_STUDS as f64;

/// The first point (world studs) within `max_studs` along the ray from
/// `origin_world` in direction `dir` (unit) that is at or below the surface
/// of its cell column; `None` when the ray meets no known ground (columns
/// without solid or not resident are passed over).
pub fn ground_along_ray(
    grid: &Grid,
    origin_world: DVec3,
    dir: DVec3,
    max_studs: f64,
) -> Option<DVec3> {
    if !(origin_world.is_finite() && dir.is_finite() && max_studs.is_finite()) {
        return None;
    }
    let steps = (max_studs / DROP_RAY_STEP_STUDS).ceil() as usize;
    (0..=steps)
        .map(|i| origin_world + dir * (i as f64 * DROP_RAY_STEP_STUDS))
        // Below the world's floor nothing is met any more.
        .take_while(|p| p.y >= 0.0)
        .find(|p| column_surface_height_studs(grid, p.x, p.z).is_some_and(|g| p.y <= g))
}

impl WalkMode {
    /// Walk mode off, with the fly camera stopping at the terrain (the
    /// window's default).
    pub fn colliding() -> WalkMode {
        WalkMode {
            fly_collides: true,
            ..WalkMode::default()
        }
    }

    /// True while walking (or waiting to drop the walker into a world that
    /// just opened).
    pub fn is_walking(&self) -> bool {
        self.walker.is_some() || self.drop_pending
    }

    /// The world was replaced (File ▸ New, Open, an import): the collision
    /// cache belongs to the old cells and goes; a walker walks on in the
    /// new world, dropped under the camera (the new world's view) once the
    /// ground there is resident.
    pub fn world_replaced(&mut self) {
        self.cache = CollisionCache::default();
        self.accumulator_s = 0.0;
        self.loading_columns = 0;
        self.release_all();
        self.drop_pending = self.walker.take().is_some() || self.drop_pending;
    }

    /// The walker, while walking.
    pub fn walker(&self) -> Option<&Walker> {
        self.walker.as_ref()
    }

    /// Collision cache totals and the last rebuild.
    pub fn collision_stats(&self) -> CollisionStats {
        self.cache.stats()
    }

    /// Starts walking on the surface under the camera (or, when there is
    /// none, under `look_at`, the surface point the camera looks at), or
    /// stops walking.
    pub fn toggle(&mut self, grid: &Grid, camera: &Camera, look_at: Option<DVec3>) {
        self.release_all();
        if self.walker.take().is_some() || std::mem::take(&mut self.drop_pending) {
            return;
        }
        self.drop_walker(grid, camera, look_at);
    }

    /// Drops a walker onto the surface under the camera, or under
    /// `look_at`, or where the camera's view ray meets the ground (a world
    /// just opened, seen from outside its footprint); says why not in
    /// [`WalkMode::last_error`].
    fn drop_walker(&mut self, grid: &Grid, camera: &Camera, look_at: Option<DVec3>) {
        let spot = |p: DVec3| column_surface_height_studs(grid, p.x, p.z).map(|g| (p, g));
        let loading = |p: DVec3| {
            let cell = CellCoord::containing_world(p).0;
            !grid
                .missing_columns(&CellBox::new(cell, cell + IVec3::ONE))
                .is_empty()
        };
        if loading(camera.pos_world) {
            self.last_error =
                Some("the ground under the camera is still loading; try again in a moment".into());
            return;
        }
        let ahead = || {
            ground_along_ray(
                grid,
                camera.pos_world,
                camera.forward_world(),
                DROP_RAY_STUDS,
            )
            .and_then(spot)
        };
        match spot(camera.pos_world)
            .or_else(|| look_at.and_then(spot))
            .or_else(ahead)
        {
            Some((p, ground)) => {
                let settings = WalkerSettings::default();
                let feet = DVec3::new(p.x, ground + 1.0, p.z);
                self.walker = Some(Walker::new(feet, settings));
                self.accumulator_s = 0.0;
                self.last_error = None;
            }
            None => {
                self.last_error = Some("no terrain under or ahead of the camera to walk on".into());
            }
        }
    }

    /// Records a walk key while walking (W/A/S/D move, Space jumps); returns
    /// true when the key was used.
    pub fn set_key(&mut self, key: KeyCode, pressed: bool) -> bool {
        if self.walker.is_none() {
            return false;
        }
        let slot = match key {
            KeyCode::KeyW => &mut self.forward,
            KeyCode::KeyS => &mut self.back,
            KeyCode::KeyA => &mut self.left,
            KeyCode::KeyD => &mut self.right,
            KeyCode::Space => &mut self.jump,
            _ => return false,
        };
        *slot = pressed;
        true
    }

    /// Releases every walk key.
    pub fn release_all(&mut self) {
        self.forward = false;
        self.back = false;
        self.left = false;
        self.right = false;
        self.jump = false;
    }

    /// The chunk columns the walker's collision reads (its region), which a
    /// streaming world must keep resident: pinned and asked for ahead of
    /// the view. Empty when not walking.
    pub fn ground_columns(&self) -> Vec<ColumnCoord> {
        self.walker
            .as_ref()
            .map(|w| w.region().columns().collect())
            .unwrap_or_default()
    }

    /// Columns under the walker that were still loading at the last
    /// [`WalkMode::update`] (0 when its ground is all resident).
    pub fn loading_columns(&self) -> usize {
        self.loading_columns
    }

    /// Runs the physics steps due after `dt_s` seconds and puts the camera
    /// at the walker's eye. Does nothing when not walking. While a column
    /// of the walker's region is not resident (a streaming world) no step
    /// runs and no time accumulates: the walker waits where it stands.
    pub fn update(&mut self, grid: &Grid, camera: &mut Camera, dt_s: f64) {
        if self.drop_pending {
            let cell = CellCoord::containing_world(camera.pos_world).0;
            if grid
                .missing_columns(&CellBox::new(cell, cell + IVec3::ONE))
                .is_empty()
            {
                self.drop_pending = false;
                self.drop_walker(grid, camera, None);
            }
        }
        let Some(walker) = self.walker.as_mut() else {
            self.loading_columns = 0;
            return;
        };
        self.loading_columns = grid.missing_columns(&walker.region()).len();
        if self.loading_columns > 0 {
            self.accumulator_s = 0.0;
            camera.pos_world = walker.eye_world();
            return;
        }
        // Horizontal input relative to the camera's yaw.
        let f = camera.forward_world();
        let fwd = DVec2::new(f.x, f.z).normalize_or_zero();
        let right = DVec2::new(-fwd.y, fwd.x);
        let axis = |pos: bool, neg: bool| (pos as i32 - neg as i32) as f64;
        let input = WalkInput {
            move_xz: (fwd * axis(self.forward, self.back) + right * axis(self.right, self.left))
                .normalize_or_zero(),
            jump: self.jump,
        };
        if dt_s.is_finite() && dt_s > 0.0 {
            self.accumulator_s =
                (self.accumulator_s + dt_s).min(f64::from(MAX_STEPS_PER_FRAME) * FIXED_DT_S);
        }
        while self.accumulator_s >= FIXED_DT_S {
            self.accumulator_s -= FIXED_DT_S;
            let step = self
                .cache
                .update(grid, EDITOR_TERRAIN, walker.region())
                .map_err(|e| e.to_string())
                .and_then(|_| {
                    walker
                        .step(&self.cache, grid, EDITOR_TERRAIN, &input, FIXED_DT_S)
                        .map_err(|e| e.to_string())
                });
            if let Err(e) = step {
                self.last_error = Some(e);
                break;
            }
        }
        camera.pos_world = walker.eye_world();
    }

    /// With [`WalkMode::fly_collides`], moves the camera from `from` toward
    /// its new position only as far as the terrain allows (a sphere of
    /// [`FLY_COLLISION_RADIUS_STUDS`]).
    pub fn collide_fly(&mut self, grid: &Grid, from: DVec3, camera: &mut Camera) {
        let to = camera.pos_world;
        let d = to - from;
        let len = d.length();
        if !self.fly_collides || self.walker.is_some() || len.is_nan() || len <= 1e-9 {
            return;
        }
        if len > FLY_COLLISION_MAX_STEP_STUDS {
            return;
        }
        let a = CellCoord::containing_world(from).0;
        let b = CellCoord::containing_world(to).0;
        let region = CellBox::new(a.min(b), a.max(b) + IVec3::ONE).expanded(4);
        if !grid.missing_columns(&region).is_empty() {
            // Ground still streaming in: nothing to collide with yet, and a
            // collider built now would stay empty after the load.
            return;
        }
        if let Err(e) = self.cache.update(grid, EDITOR_TERRAIN, region) {
            self.last_error = Some(e.to_string());
            return;
        }
        let sphere = CapsuleSpec {
            centre_world: from,
            half_height_studs: 0.0,
            radius_studs: FLY_COLLISION_RADIUS_STUDS,
        };
        match self
            .cache
            .cast_capsule(grid, EDITOR_TERRAIN, &sphere, d, len)
        {
            Ok(QueryOutcome::Hit(hit)) => {
                camera.pos_world = from + d / len * (hit.distance_studs - 0.05).max(0.0);
            }
            Ok(_) => {}
            Err(e) => self.last_error = Some(e.to_string()),
        }
    }

    /// The walk and collision section of the editor: toggles and figures.
    /// `look_at` finds the surface point the camera looks at, if any (see
    /// [`WalkMode::toggle`]); it runs only when walk mode is switched on.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        grid: &Grid,
        camera: &Camera,
        look_at: impl FnOnce() -> Option<DVec3>,
    ) {
        let mut walking = self.is_walking();
        if ui
            .checkbox(&mut walking, "Walk mode (V)")
            .on_hover_text("A capsule character on the terrain; WASD walk, Space jumps")
            .changed()
        {
            let target = if walking { look_at() } else { None };
            self.toggle(grid, camera, target);
        }
        ui.checkbox(&mut self.fly_collides, "Fly camera collides");
        if self.loading_columns > 0 {
            ui.colored_label(
                egui::Color32::YELLOW,
                format!(
                    "loading {} chunk columns under the walker…",
                    self.loading_columns
                ),
            );
        }
        if let Some(w) = &self.walker {
            ui.label(format!(
                "feet {:.1}, {:.1}, {:.1}  {}",
                w.feet_world.x,
                w.feet_world.y,
                w.feet_world.z,
                if w.grounded { "on ground" } else { "in air" }
            ));
        }
        let s = self.cache.stats();
        ui.label(format!("colliders: {}", s.colliders));
        ui.label(format!(
            "collision triangles: {} -> {} after flat patches",
            s.triangles_before_reduction, s.triangles
        ));
        ui.label(format!(
            "last rebuild: {} chunks in {:.2} ms",
            s.last_rebuild.rebuilt_chunks, s.last_rebuild.ms
        ));
        ui.label(format!(
            "last edit: {} chunks rebuilt in {:.2} ms",
            s.last_edit_rebuild.edited_chunks, s.last_edit_rebuild.ms
        ));
        if let Some(e) = &self.last_error {
            ui.colored_label(egui::Color32::LIGHT_RED, e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::cell::{Cell, Material};

    /// Flat grass whose surface lies at about 42 studs.
    fn ground() -> Grid {
        let mut grid = Grid::new();
        grid.edit_region(
            CellBox::new(IVec3::new(-32, 0, -32), IVec3::new(32, 16, 32)),
            |c, _| {
                let occ = ((10.5 - c.0.y as f64).clamp(0.0, 1.0) * 255.0).round() as u8;
                Cell::new(Material::GRASS, occ)
            },
        )
        .unwrap();
        grid
    }

    /// `ground()` as a streaming grid holding only `columns`.
    fn streamed_ground(columns: &[ColumnCoord]) -> Grid {
        let whole = ground();
        let mut grid = Grid::streaming();
        for &c in columns {
            grid.install_column(c, whole.column_chunks(c)).unwrap();
        }
        grid
    }

    #[test]
    fn the_walker_waits_for_its_ground_on_a_streaming_world() {
        let mut camera = Camera::new(DVec3::new(10.0, 300.0, 10.0), 90.0, -10.0);
        let mut walk = WalkMode::default();
        // The camera's own column is not loaded yet: no walk, a clear note.
        let nothing = streamed_ground(&[]);
        walk.toggle(&nothing, &camera, None);
        assert!(!walk.is_walking());
        assert!(
            walk.last_error
                .as_deref()
                .unwrap()
                .contains("still loading")
        );
        // Its column is in, its neighbours are not: the walker stands still.
        let mut grid = streamed_ground(&[ColumnCoord::new(0, 0)]);
        walk.toggle(&grid, &camera, None);
        assert!(walk.is_walking());
        let wanted = walk.ground_columns();
        assert_eq!(wanted.len(), 9, "{wanted:?}");
        walk.set_key(KeyCode::KeyW, true);
        let feet = walk.walker().unwrap().feet_world;
        walk.update(&grid, &mut camera, 0.25);
        assert_eq!(walk.loading_columns(), 8);
        assert_eq!(
            walk.walker().unwrap().feet_world,
            feet,
            "moved on missing ground"
        );
        // The rest arrives: it settles and walks as on the whole grid.
        let whole = ground();
        for c in wanted {
            if !grid.is_column_resident(c) {
                grid.install_column(c, whole.column_chunks(c)).unwrap();
            }
        }
        walk.update(&grid, &mut camera, 0.25);
        assert_eq!(walk.loading_columns(), 0);
        assert!(walk.walker().unwrap().feet_world.x > feet.x + 1.0);
        walk.toggle(&grid, &camera, None);
        assert!(walk.ground_columns().is_empty());
    }

    #[test]
    fn walk_mode_puts_the_camera_at_eye_height_and_walks_with_the_view() {
        let grid = ground();
        let ground_y = column_surface_height_studs(&grid, 0.0, 0.0).unwrap();
        // Yaw 90 looks along +X.
        let mut camera = Camera::new(DVec3::new(0.0, 300.0, 0.0), 90.0, -10.0);
        let mut walk = WalkMode::default();
        walk.toggle(&grid, &camera, None);
        assert!(walk.is_walking());
        walk.update(&grid, &mut camera, 1.0);
        let eye = camera.pos_world;
        assert!((eye.y - (ground_y + 7.0)).abs() < 0.1, "{eye}");
        assert!(walk.set_key(KeyCode::KeyW, true));
        walk.update(&grid, &mut camera, 0.25);
        // 15 steps of 1/60 s at 16 studs/s along +X.
        assert!(
            (camera.pos_world.x - (eye.x + 4.0)).abs() < 1e-6,
            "{}",
            camera.pos_world
        );
        assert!(camera.pos_world.z.abs() < 1e-6);
        assert!(walk.last_error.is_none());
        walk.toggle(&grid, &camera, None);
        assert!(!walk.is_walking());
        assert!(!walk.set_key(KeyCode::KeyW, true), "fly keys again");
    }

    #[test]
    fn colliding_fly_camera_stops_above_the_ground() {
        let grid = ground();
        let ground_y = column_surface_height_studs(&grid, 10.0, 10.0).unwrap();
        let mut walk = WalkMode {
            fly_collides: true,
            ..WalkMode::default()
        };
        let from = DVec3::new(10.0, 60.0, 10.0);
        let mut camera = Camera::new(DVec3::new(10.0, 0.0, 10.0), 0.0, -89.0);
        walk.collide_fly(&grid, from, &mut camera);
        let y = camera.pos_world.y;
        assert!(y > ground_y && y < ground_y + 1.2, "{y} vs {ground_y}");
        // Without the option it flies through.
        walk.fly_collides = false;
        let mut camera = Camera::new(DVec3::new(10.0, 0.0, 10.0), 0.0, -89.0);
        walk.collide_fly(&grid, from, &mut camera);
        assert_eq!(camera.pos_world.y, 0.0);
    }

    /// The input that failed: walking on the default world, File ▸ New made
    /// another world and the walker kept its old feet (buried at the bottom
    /// of the new world, only sky in view).
    #[test]
    fn a_new_world_drops_the_walker_under_its_own_view() {
        let old = ground();
        let mut camera = Camera::new(DVec3::new(0.0, 300.0, 0.0), 90.0, -10.0);
        let mut walk = WalkMode::default();
        walk.toggle(&old, &camera, None);
        walk.update(&old, &mut camera, 0.5);
        // The new world: higher ground (surface near 90 studs) elsewhere.
        let mut new = Grid::new();
        new.edit_region(
            CellBox::new(IVec3::new(200, 0, 200), IVec3::new(264, 32, 264)),
            |c, _| {
                let occ = ((22.5 - c.0.y as f64).clamp(0.0, 1.0) * 255.0).round() as u8;
                Cell::new(Material::ROCK, occ)
            },
        )
        .unwrap();
        let new_ground = column_surface_height_studs(&new, 920.0, 920.0).unwrap();
        // The window takes the new world's camera, then walk mode hears of it.
        camera.pos_world = DVec3::new(920.0, 600.0, 920.0);
        walk.world_replaced();
        assert!(walk.is_walking(), "still in walk mode");
        walk.update(&new, &mut camera, 0.5);
        let feet = walk.walker().unwrap().feet_world;
        assert!((feet.x - 920.0).abs() < 1e-9 && (feet.z - 920.0).abs() < 1e-9);
        assert!((feet.y - new_ground).abs() < 0.5, "{feet} vs {new_ground}");
        assert!((camera.pos_world.y - (new_ground + 7.0)).abs() < 0.5);
        // V leaves walk mode as usual.
        walk.toggle(&new, &camera, None);
        assert!(!walk.is_walking());
    }

    /// The input that failed in the window: walking, File ▸ New; the new
    /// world's view stands outside its footprint looking at it, so there
    /// was no ground under the camera and walk mode switched itself off.
    #[test]
    fn a_new_world_seen_from_outside_drops_the_walker_where_the_view_meets_it() {
        let old = ground();
        let mut camera = Camera::new(DVec3::new(0.0, 300.0, 0.0), 90.0, -10.0);
        let mut walk = WalkMode::default();
        walk.toggle(&old, &camera, None);
        let new = ground();
        // South-west of the footprint, high, looking north-east and down.
        camera = Camera::new(DVec3::new(-150.0, 200.0, 150.0), 45.0, -35.0);
        assert!(column_surface_height_studs(&new, -150.0, 150.0).is_none());
        walk.world_replaced();
        walk.update(&new, &mut camera, 0.5);
        let feet = walk
            .walker()
            .unwrap_or_else(|| panic!("no walker: {:?}", walk.last_error))
            .feet_world;
        // Inside the footprint (x and z in [-128, 128) studs).
        assert!(feet.x.abs() < 128.0 && feet.z.abs() < 128.0, "{feet}");
        let ground_there = column_surface_height_studs(&new, feet.x, feet.z).unwrap();
        assert!(
            (feet.y - ground_there).abs() < 1.5,
            "{feet} on {ground_there}"
        );
        // The drop is on the view ray: its point lies on the camera's line.
        let hit = ground_along_ray(
            &new,
            DVec3::new(-150.0, 200.0, 150.0),
            Camera::new(DVec3::ZERO, 45.0, -35.0).forward_world(),
            DROP_RAY_STUDS,
        )
        .unwrap();
        assert!((hit.x - feet.x).abs() < 1e-9 && (hit.z - feet.z).abs() < 1e-9);
        // A ray that meets nothing (looking up) drops no walker.
        assert_eq!(
            ground_along_ray(
                &new,
                DVec3::new(-150.0, 200.0, 150.0),
                DVec3::Y,
                DROP_RAY_STUDS
            ),
            None
        );
    }

    #[test]
    fn a_new_streaming_world_drops_the_walker_once_its_ground_loads() {
        let mut camera = Camera::new(DVec3::new(10.0, 300.0, 10.0), 90.0, -10.0);
        let mut walk = WalkMode::default();
        walk.toggle(&ground(), &camera, None);
        walk.world_replaced();
        let mut grid = streamed_ground(&[]);
        walk.update(&grid, &mut camera, 0.5);
        assert!(
            walk.is_walking() && walk.walker().is_none(),
            "waits for its ground"
        );
        assert_eq!(camera.pos_world.y, 300.0);
        let whole = ground();
        grid.install_column(
            ColumnCoord::new(0, 0),
            whole.column_chunks(ColumnCoord::new(0, 0)),
        )
        .unwrap();
        walk.update(&grid, &mut camera, 0.5);
        assert!(walk.walker().is_some());
    }
}
