//! A scripted walk: a [`Walker`] driven by fixed inputs for fixed numbers of
//! 1/60 s physics frames, with the collision cache updated around it before
//! every step, checked against the grid's columns for falling through.
//!
//! "Fell through" means the walker's feet were ever more than
//! [`FELL_THROUGH_TOLERANCE_STUDS`] below the lowest of the topmost surfaces
//! of the sample columns around them ([`lowest_surface_near_studs`], from
//! the cells alone), i.e. it ended inside or under the terrain. (Against the
//! interpolated surface, a walker standing at the foot of a cliff or a
//! river bank would count as under it.) Feet with no ground around them
//! below the world's floor fell too: off the world's edge, into the void.
//!
//! On a streaming world (spec §12) the walker's ground is loaded before
//! each step by the caller's `load_ground` (the collision around the walker
//! is demand), so a walk may start and end anywhere in the world.

use glam::DVec3;

use super::character::{
    FIXED_DT_S, WalkError, column_surface_height_studs, lowest_surface_near_studs,
};
use super::{CollisionCache, TerrainId, WalkInput, Walker, WalkerSettings};
use crate::terrain::storage::coords::CellBox;
use crate::terrain::storage::grid::Grid;

/// How far below the column's surface the feet may be before the walk
/// counts as fallen through, studs: half a cell, well beyond the difference
/// between the column's linear crossings and the averaged Surface Nets
/// vertices, far below any real fall.
pub const FELL_THROUGH_TOLERANCE_STUDS: f64 = 2.0;

/// The bottom of every world (generated and imported terrain starts at
/// cell row 0), studs.
pub const WORLD_FLOOR_STUDS: f64 = 0.0;

/// Frames the walker settles onto the ground before the first step.
pub const SETTLE_FRAMES: u32 = 120;

/// One constant input held for `frames` physics frames.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WalkSegment {
    /// Physics frames of 1/60 s.
    pub frames: u32,
    /// The input.
    pub input: WalkInput,
}

/// Result of a scripted walk (`"walk"` in `--stats-json`).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct WalkStats {
    /// Horizontal distance walked, studs.
    pub distance_studs: f64,
    /// The feet were ever below the ground around them, or off the world
    /// below its floor (see the module docs).
    pub fell_through: bool,
    /// Lowest height of the feet above the lowest surface around them
    /// ([`lowest_surface_near_studs`]) over all steps, studs.
    pub min_height_above_ground_studs: f64,
    /// Physics frames simulated (settling included).
    pub frames: u32,
    /// Start and end feet positions, world studs.
    pub start_world: [f64; 3],
    /// End feet position, world studs.
    pub end_world: [f64; 3],
    /// Collision cache updates that rebuilt chunks.
    pub cache_rebuilds: u32,
    /// Slowest cache update, ms.
    pub max_update_ms: f64,
    /// Total time of the walk (cache updates and physics), ms.
    pub walk_ms: f64,
}

/// Drops a walker onto the surface at `start_xz` (world studs) of `grid`,
/// lets it settle, then plays `segments`. `load_ground(grid, region)` runs
/// before the drop and before every step with the cells the step reads
/// (global cells): a streaming world makes their columns resident there;
/// a grid that holds the whole world passes [`whole_grid`].
///
/// # Errors
/// [`WalkError`] when there is no surface at the start, a step fails, or
/// `load_ground` fails.
pub fn run_walk(
    grid: &mut Grid,
    terrain: TerrainId,
    start_xz: [f64; 2],
    segments: &[WalkSegment],
    mut load_ground: impl FnMut(&mut Grid, CellBox) -> Result<(), WalkError>,
) -> Result<WalkStats, WalkError> {
    let t0 = std::time::Instant::now();
    let [x, z] = start_xz;
    if !(x.is_finite() && z.is_finite()) {
        return Err(WalkError::InvalidInput("the walk's start is not finite"));
    }
    // The whole column under the start, so its surface is known.
    let start_cell =
        crate::terrain::storage::coords::CellCoord::containing_world(DVec3::new(x, 0.0, z)).0;
    let start_column = CellBox::new(
        glam::IVec3::new(start_cell.x, 0, start_cell.z),
        glam::IVec3::new(start_cell.x + 1, 1, start_cell.z + 1),
    );
    load_ground(grid, start_column)?;
    let ground = column_surface_height_studs(grid, x, z)
        .ok_or(WalkError::InvalidInput("no terrain below the walk's start"))?;
    let mut walker = Walker::new(DVec3::new(x, ground + 2.0, z), WalkerSettings::default());
    let mut cache = CollisionCache::new();
    let mut stats = WalkStats {
        min_height_above_ground_studs: f64::INFINITY,
        start_world: walker.feet_world.to_array(),
        ..WalkStats::default()
    };
    let settle = WalkSegment {
        frames: SETTLE_FRAMES,
        input: WalkInput::default(),
    };
    for segment in std::iter::once(&settle).chain(segments) {
        for _ in 0..segment.frames {
            load_ground(grid, walker.region())?;
            let update = cache
                .update(grid, terrain, walker.region())
                .map_err(|_| WalkError::OutOfRegion)?;
            if update.rebuilt_chunks > 0 {
                stats.cache_rebuilds += 1;
                stats.max_update_ms = stats.max_update_ms.max(update.ms);
            }
            let report = walker.step(&cache, grid, terrain, &segment.input, FIXED_DT_S)?;
            stats.frames += 1;
            stats.distance_studs += report.moved_xz_studs;
            let p = walker.feet_world;
            match lowest_surface_near_studs(grid, p.x, p.z) {
                Some(h) => {
                    let above = p.y - h;
                    stats.min_height_above_ground_studs =
                        stats.min_height_above_ground_studs.min(above);
                    if above < -FELL_THROUGH_TOLERANCE_STUDS {
                        stats.fell_through = true;
                    }
                }
                // No ground under the feet and below the world's floor: the
                // walker walked off the world's edge into the void.
                None if p.y < WORLD_FLOOR_STUDS - FELL_THROUGH_TOLERANCE_STUDS => {
                    stats.fell_through = true;
                }
                None => {}
            }
        }
    }
    stats.end_world = walker.feet_world.to_array();
    stats.walk_ms = t0.elapsed().as_secs_f64() * 1e3;
    Ok(stats)
}

/// The `load_ground` of [`run_walk`] for a grid that holds the whole world:
/// nothing to load.
pub fn whole_grid(_grid: &mut Grid, _region: CellBox) -> Result<(), WalkError> {
    Ok(())
}
