//! Distance level-of-detail selection and residency (spec §6).
//!
//! Each chunk's level comes from the distance between the camera and the
//! chunk's bounding sphere: thresholds 320, 720 and 1500 studs separate levels
//! 0–3, and each threshold moves 48 studs in favour of the level the chunk has
//! now, so a camera hovering near a threshold does not make chunks flip back
//! and forth. A scan proposes at most 48 level transitions, nearest first; if
//! more remain the view is not settled and the next frame scans again.
//! Scans run only when something can have changed: the grid, the draw
//! distance, or a camera move of at least 8 studs since the last settled scan.

use glam::DVec3;
use rustc_hash::FxHashMap;

use crate::mesh::MeshStyle;
use crate::terrain::storage::coords::{CHUNK_SIZE_STUDS, ChunkCoord};

/// Number of levels of detail: 32, 16, 8 and 4 samples per chunk axis.
pub const LEVEL_COUNT: usize = 4;
/// Level thresholds in studs (between levels 0|1, 1|2, 2|3).
pub const LEVEL_THRESHOLDS_STUDS: [f64; LEVEL_COUNT - 1] = [320.0, 720.0, 1500.0];
/// Shift of each threshold in favour of a chunk's current level, studs.
pub const HYSTERESIS_STUDS: f64 = 48.0;
/// Most level transitions one scan proposes.
pub const MAX_TRANSITIONS_PER_SCAN: usize = 48;
/// Camera movement that triggers a rescan of a settled view, studs.
pub const RESCAN_DISTANCE_STUDS: f64 = 8.0;

/// Radius of a chunk's bounding sphere, studs (half the cube diagonal).
pub fn chunk_bounding_radius_studs() -> f64 {
    CHUNK_SIZE_STUDS as f64 * 0.5 * 3f64.sqrt()
}

/// Distance from `camera_pos_world` to the bounding sphere of `coord` (0 inside it).
pub fn distance_to_chunk_studs(camera_pos_world: DVec3, coord: ChunkCoord) -> f64 {
    let centre = coord.origin_world() + DVec3::splat(CHUNK_SIZE_STUDS as f64 * 0.5);
    (centre.distance(camera_pos_world) - chunk_bounding_radius_studs()).max(0.0)
}

/// Distance from `camera_pos_world` to the vertical prism of `coord`'s chunk
/// column (its footprint's bounding circle; 0 inside it), studs: the same
/// for every chunk stacked in one column, so the low-poly style, whose
/// meshes share one heightfield per column, gives them one level.
pub fn distance_to_column_studs(camera_pos_world: DVec3, coord: ChunkCoord) -> f64 {
    let half = CHUNK_SIZE_STUDS as f64 * 0.5;
    let o = coord.origin_world();
    let centre = glam::DVec2::new(o.x + half, o.z + half);
    let radius = half * 2f64.sqrt();
    (centre.distance(glam::DVec2::new(camera_pos_world.x, camera_pos_world.z)) - radius).max(0.0)
}

/// The distance a chunk's level is chosen by: to its bounding sphere, or
/// with `by_column` to its chunk column ([`distance_to_column_studs`]).
pub fn level_distance_studs(camera_pos_world: DVec3, coord: ChunkCoord, by_column: bool) -> f64 {
    if by_column {
        distance_to_column_studs(camera_pos_world, coord)
    } else {
        distance_to_chunk_studs(camera_pos_world, coord)
    }
}

/// The level for a chunk at `distance_studs` whose current level is `current`
/// (`None` for a chunk without a mesh, which gets the nominal thresholds).
/// Thresholds at or above the current level move out by the hysteresis
/// (coarsening is harder), those below it move in (refining is harder).
pub fn select_level(distance_studs: f64, current: Option<u8>) -> u8 {
    let mut level = 0u8;
    for (i, &t) in LEVEL_THRESHOLDS_STUDS.iter().enumerate() {
        let shifted = match current {
            Some(c) if (c as usize) <= i => t + HYSTERESIS_STUDS,
            Some(_) => t - HYSTERESIS_STUDS,
            None => t,
        };
        if distance_studs > shifted {
            level = i as u8 + 1;
        }
    }
    level
}

/// A level change a scan proposes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transition {
    /// The chunk.
    pub coord: ChunkCoord,
    /// Its level now (`None`: no mesh yet).
    pub from: Option<u8>,
    /// The level it should have.
    pub to: u8,
    /// Distance to the camera, studs.
    pub distance_studs: f64,
}

/// Decides when to scan and which transitions a scan yields.
#[derive(Clone, Debug, Default)]
pub struct LodScanner {
    last_settled_camera: Option<DVec3>,
    last_draw_distance: Option<f64>,
    last_grid: Option<(u64, u64)>,
    settled: bool,
}

impl LodScanner {
    /// True when a scan is due: the last scan left transitions undone, the
    /// grid `(generation, revision)` or the draw distance changed, or the
    /// camera moved at least [`RESCAN_DISTANCE_STUDS`] since the last settled scan.
    pub fn needs_scan(
        &self,
        camera_pos_world: DVec3,
        draw_distance_studs: f64,
        grid: (u64, u64),
    ) -> bool {
        !self.settled
            || self.last_grid != Some(grid)
            || self.last_draw_distance != Some(draw_distance_studs)
            || self
                .last_settled_camera
                .is_none_or(|c| c.distance(camera_pos_world) >= RESCAN_DISTANCE_STUDS)
    }

    /// Scans `chunks` (each with its current level, `None` when it has no
    /// mesh) and returns at most [`MAX_TRANSITIONS_PER_SCAN`] transitions,
    /// nearest first. Chunks farther than `range_studs` are ignored (residency
    /// decides about them). Records whether the view is settled.
    pub fn scan(
        &mut self,
        camera_pos_world: DVec3,
        draw_distance_studs: f64,
        grid: (u64, u64),
        range_studs: f64,
        chunks: impl IntoIterator<Item = (ChunkCoord, Option<u8>)>,
    ) -> Vec<Transition> {
        self.scan_with(
            camera_pos_world,
            draw_distance_studs,
            grid,
            range_studs,
            chunks,
            |c| distance_to_chunk_studs(camera_pos_world, c),
            select_level,
        )
    }

    /// [`LodScanner::scan`] with the level chosen by `desired(distance,
    /// current)` from the distance `level_distance(coord)`; chunks beyond
    /// `range_studs` of their bounding sphere are ignored.
    #[allow(clippy::too_many_arguments)]
    pub fn scan_with(
        &mut self,
        camera_pos_world: DVec3,
        draw_distance_studs: f64,
        grid: (u64, u64),
        range_studs: f64,
        chunks: impl IntoIterator<Item = (ChunkCoord, Option<u8>)>,
        level_distance: impl Fn(ChunkCoord) -> f64,
        desired: impl Fn(f64, Option<u8>) -> u8,
    ) -> Vec<Transition> {
        let mut transitions: Vec<Transition> = chunks
            .into_iter()
            .filter_map(|(coord, from)| {
                if distance_to_chunk_studs(camera_pos_world, coord) > range_studs {
                    return None;
                }
                let distance_studs = level_distance(coord);
                let to = desired(distance_studs, from);
                (from != Some(to)).then_some(Transition {
                    coord,
                    from,
                    to,
                    distance_studs,
                })
            })
            .collect();
        // Chunks without a mesh (holes) first, then nearest first.
        transitions.sort_by(|a, b| {
            (a.from.is_some().cmp(&b.from.is_some()))
                .then(a.distance_studs.total_cmp(&b.distance_studs))
                .then_with(|| {
                    (a.coord.0.z, a.coord.0.y, a.coord.0.x).cmp(&(
                        b.coord.0.z,
                        b.coord.0.y,
                        b.coord.0.x,
                    ))
                })
        });
        self.settled = transitions.len() <= MAX_TRANSITIONS_PER_SCAN;
        transitions.truncate(MAX_TRANSITIONS_PER_SCAN);
        self.last_grid = Some(grid);
        self.last_draw_distance = Some(draw_distance_studs);
        if self.settled {
            self.last_settled_camera = Some(camera_pos_world);
        }
        transitions
    }

    /// True when the last scan proposed every transition it found.
    pub fn is_settled(&self) -> bool {
        self.settled
    }
}

/// Current level of every chunk that has (or is getting) a mesh.
pub type LevelMap = FxHashMap<ChunkCoord, u8>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hysteresis_favours_the_current_level() {
        assert_eq!(select_level(330.0, Some(0)), 0, "stays fine within +48");
        assert_eq!(select_level(310.0, Some(1)), 1, "stays coarse within -48");
        assert_eq!(select_level(375.0, Some(0)), 1, "beyond 368 it coarsens");
        assert_eq!(select_level(260.0, Some(1)), 0, "below 272 it refines");
        assert_eq!(select_level(330.0, None), 1);
        assert_eq!(select_level(0.0, Some(3)), 0);
        assert_eq!(select_level(10_000.0, Some(0)), 3);
        assert_eq!(select_level(1540.0, Some(3)), 3);
        assert_eq!(select_level(1540.0, Some(2)), 2);
    }

    #[test]
    fn a_default_view_raises_the_draw_distance_to_its_reach_only() {
        let lod = LodSettings::default();
        // Raised to the reach, never lowered, at most the horizon's reach.
        assert_eq!(lod.for_default_view(20_000.0).draw_distance_studs, 20_000.0);
        assert_eq!(
            lod.for_default_view(1_000.0).draw_distance_studs,
            DEFAULT_DRAW_DISTANCE_STUDS
        );
        assert_eq!(
            lod.for_default_view(210_000.0).draw_distance_studs,
            MAX_DRAW_DISTANCE_STUDS
        );
        assert_eq!(lod.for_default_view(f64::NAN), lod);
        // A draw distance asked for holds.
        let asked = LodSettings {
            draw_distance_studs: 4096.0,
            fit_default_view: false,
            ..lod
        };
        assert_eq!(asked.for_default_view(20_000.0), asked);
    }

    #[test]
    fn distance_is_to_the_bounding_sphere() {
        let c = ChunkCoord::new(0, 0, 0);
        assert_eq!(distance_to_chunk_studs(DVec3::splat(64.0), c), 0.0);
        let far = DVec3::new(64.0, 64.0, 64.0 + 1000.0);
        assert!(
            (distance_to_chunk_studs(far, c) - (1000.0 - chunk_bounding_radius_studs())).abs()
                < 1e-9
        );
    }

    #[test]
    fn scan_budget_is_48_nearest_first_and_rescans_until_settled() {
        let mut s = LodScanner::default();
        // 100 chunks in a row along +x, all without meshes.
        let chunks: Vec<(ChunkCoord, Option<u8>)> =
            (0..100).map(|x| (ChunkCoord::new(x, 0, 0), None)).collect();
        let cam = DVec3::new(-500.0, 64.0, 64.0);
        let t = s.scan(cam, 1e9, (1, 0), 1e9, chunks.clone());
        assert_eq!(t.len(), MAX_TRANSITIONS_PER_SCAN);
        assert!(
            t.windows(2)
                .all(|w| w[0].distance_studs <= w[1].distance_studs)
        );
        assert_eq!(t[0].coord, ChunkCoord::new(0, 0, 0));
        assert!(!s.is_settled());
        assert!(s.needs_scan(cam, 1e9, (1, 0)), "unsettled views scan again");
        // Once every chunk has its level, the view settles.
        let levelled: Vec<(ChunkCoord, Option<u8>)> = chunks
            .iter()
            .map(|&(c, _)| (c, Some(select_level(distance_to_chunk_studs(cam, c), None))))
            .collect();
        assert!(s.scan(cam, 1e9, (1, 0), 1e9, levelled).is_empty());
        assert!(s.is_settled());
    }

    #[test]
    fn rescan_after_8_studs_not_after_7() {
        let mut s = LodScanner::default();
        let cam = DVec3::new(0.0, 100.0, 0.0);
        s.scan(cam, 2000.0, (1, 5), 1e9, std::iter::empty());
        assert!(!s.needs_scan(cam + DVec3::new(7.0, 0.0, 0.0), 2000.0, (1, 5)));
        assert!(s.needs_scan(cam + DVec3::new(8.0, 0.0, 0.0), 2000.0, (1, 5)));
        assert!(s.needs_scan(cam, 2500.0, (1, 5)), "draw distance changed");
        assert!(s.needs_scan(cam, 2000.0, (1, 6)), "grid changed");
    }
}

/// The longest draw distance, studs: the horizon's coarsest level (12,
/// 65,536 studs a side) reaches it within its bounded draws (spec §13).
pub const MAX_DRAW_DISTANCE_STUDS: f64 = 65_536.0;

/// Level-of-detail and residency settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LodSettings {
    /// Chunks farther than this (bounding sphere) are not drawn, studs.
    pub draw_distance_studs: f64,
    /// Draw every chunk at this level instead of choosing by distance.
    pub force_level: Option<u8>,
    /// Stop level selection (and residency changes) so the camera can inspect
    /// the current levels from elsewhere.
    pub frozen: bool,
    /// The mesher the view draws with. In the low-poly style levels are
    /// chosen by the distance to each chunk's column instead of its bounding
    /// sphere, so stacked chunks share one level
    /// ([`distance_to_column_studs`]).
    pub style: MeshStyle,
    /// A streaming world that opens on its default view (no camera given
    /// or stored) gets a draw distance that reaches all the view frames
    /// ([`LodSettings::for_default_view`]): its horizon draws the far
    /// ground cheaply. False when a draw distance was asked for
    /// (`--draw-distance`). A world built whole keeps its draw distance (it
    /// would mesh every chunk out to it).
    pub fit_default_view: bool,
}

impl Default for LodSettings {
    fn default() -> Self {
        LodSettings {
            draw_distance_studs: DEFAULT_DRAW_DISTANCE_STUDS,
            force_level: None,
            frozen: false,
            style: MeshStyle::Smooth,
            fit_default_view: true,
        }
    }
}

impl LodSettings {
    /// These settings for a world that opens on its default view, which
    /// frames everything within `reach_studs` of the camera: with
    /// [`LodSettings::fit_default_view`], the draw distance is raised to
    /// `reach_studs` (never lowered, and at most
    /// [`MAX_DRAW_DISTANCE_STUDS`]), so the framed terrain is drawn rather
    /// than its near part only (or, framed from afar, nothing).
    pub fn for_default_view(self, reach_studs: f64) -> LodSettings {
        if !self.fit_default_view || !reach_studs.is_finite() {
            return self;
        }
        LodSettings {
            draw_distance_studs: self
                .draw_distance_studs
                .max(reach_studs.min(MAX_DRAW_DISTANCE_STUDS)),
            ..self
        }
    }
}

/// Default draw distance: the whole default world (4096 studs across) from
/// any point above it.
pub const DEFAULT_DRAW_DISTANCE_STUDS: f64 = 8192.0;

/// What one [`LodController::update`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LodUpdate {
    /// True when a scan ran.
    pub scanned: bool,
    /// Level changes requested, nearest first.
    pub transitions: Vec<Transition>,
    /// Chunks dropped because they left the retention range.
    pub evicted: Vec<ChunkCoord>,
    /// Duration of the scan, ms (0 without a scan).
    pub scan_ms: f64,
}

/// Chooses levels and residency each frame (spec §6).
#[derive(Clone, Debug, Default)]
pub struct LodController {
    scanner: LodScanner,
    /// Current settings.
    pub settings: LodSettings,
    candidates: Vec<ChunkCoord>,
    candidates_key: Option<(u64, u64)>,
    lead_studs: f64,
    /// Chunks are meshed no farther than this while a horizon draws beyond
    /// (spec §13); `None`: out to the draw distance.
    chunk_range_cap_studs: Option<f64>,
}

impl LodController {
    /// A controller with `settings`.
    pub fn new(settings: LodSettings) -> LodController {
        LodController {
            settings,
            ..LodController::default()
        }
    }

    /// Chunks within this distance have (or get) meshes: one chunk beyond
    /// the draw distance, plus the lead of a moving camera
    /// ([`LodController::set_lead_studs`]).
    pub fn preload_range_studs(&self) -> f64 {
        self.chunk_draw_distance_studs() + CHUNK_SIZE_STUDS as f64 + self.lead_studs
    }

    /// How far chunks are drawn: the draw distance, or less where the
    /// horizon's nodes take over ([`LodController::set_chunk_range_cap`]).
    pub fn chunk_draw_distance_studs(&self) -> f64 {
        match self.chunk_range_cap_studs {
            Some(cap) => self.settings.draw_distance_studs.min(cap),
            None => self.settings.draw_distance_studs,
        }
    }

    /// Caps the chunk levels' range at `cap_studs` (a horizon draws
    /// beyond it), or lifts the cap with `None`.
    pub fn set_chunk_range_cap(&mut self, cap_studs: Option<f64>) {
        self.chunk_range_cap_studs = cap_studs;
    }

    /// Meshes are kept up to this distance: one chunk beyond the preload range.
    pub fn retain_range_studs(&self) -> f64 {
        self.preload_range_studs() + CHUNK_SIZE_STUDS as f64
    }

    /// Sets how far beyond the draw distance a moving camera needs its
    /// ground ready, studs (from [`super::camera_lead::CameraLead`]; 0 for
    /// a still camera). Negative or non-finite values count as 0.
    pub fn set_lead_studs(&mut self, lead_studs: f64) {
        self.lead_studs = if lead_studs.is_finite() {
            lead_studs.max(0.0)
        } else {
            0.0
        };
    }

    /// True when `coord` is within the preload range of `camera_pos_world`.
    pub fn keep(&self, camera_pos_world: DVec3, coord: ChunkCoord) -> bool {
        distance_to_chunk_studs(camera_pos_world, coord) <= self.preload_range_studs()
    }

    /// The level `coord` should have, given its current level.
    pub fn desired_level(
        &self,
        camera_pos_world: DVec3,
        coord: ChunkCoord,
        current: Option<u8>,
    ) -> u8 {
        match self.settings.force_level {
            Some(level) => level.min(LEVEL_COUNT as u8 - 1),
            None => select_level(
                level_distance_studs(camera_pos_world, coord, self.settings.style.is_low_poly()),
                current,
            ),
        }
    }

    /// Meshing candidates of `grid` (cached until chunks are added or removed).
    pub fn candidates(&mut self, grid: &crate::terrain::storage::grid::Grid) -> &[ChunkCoord] {
        let key = (grid.generation(), grid.layout_revision());
        if self.candidates_key != Some(key) {
            self.candidates = grid.meshing_candidates();
            self.candidates_key = Some(key);
        }
        &self.candidates
    }

    /// The candidates within the preload range of `camera_pos_world`, each
    /// with the level it should start at (for a first, synchronous build).
    pub fn initial_levels(
        &mut self,
        grid: &crate::terrain::storage::grid::Grid,
        camera_pos_world: DVec3,
    ) -> Vec<(ChunkCoord, u8)> {
        let preload = self.preload_range_studs();
        let force = self.settings.force_level;
        let by_column = self.settings.style.is_low_poly();
        self.candidates(grid)
            .iter()
            .filter_map(|&c| {
                let d = distance_to_chunk_studs(camera_pos_world, c);
                (d <= preload).then(|| {
                    (
                        c,
                        force
                            .unwrap_or_else(|| {
                                select_level(
                                    level_distance_studs(camera_pos_world, c, by_column),
                                    None,
                                )
                            })
                            .min(LEVEL_COUNT as u8 - 1),
                    )
                })
            })
            .collect()
    }

    /// One frame of selection: when a scan is due (and not frozen), proposes
    /// at most 48 transitions among the candidates within the preload range —
    /// `level_now` gives a chunk's shown or pending level — and lists shown
    /// chunks beyond the retention range to evict.
    pub fn update(
        &mut self,
        grid: &crate::terrain::storage::grid::Grid,
        camera_pos_world: DVec3,
        level_now: impl Fn(ChunkCoord) -> Option<u8>,
        shown: impl Iterator<Item = ChunkCoord>,
    ) -> LodUpdate {
        let mut out = LodUpdate::default();
        // The scan is due again when the range it covers changes (the draw
        // distance or the camera's lead).
        let draw = self.chunk_draw_distance_studs() + self.lead_studs;
        // The revision moves with edits, the layout revision when chunks or
        // streamed columns come and go; both only grow, so their sum
        // changes whenever either does.
        let grid_key = (grid.generation(), grid.revision() + grid.layout_revision());
        if self.settings.frozen || !self.scanner.needs_scan(camera_pos_world, draw, grid_key) {
            return out;
        }
        let start = std::time::Instant::now();
        let preload = self.preload_range_studs();
        let force = self.settings.force_level;
        let candidates = self.candidates(grid).to_vec();
        let chunks = candidates.iter().map(|&c| (c, level_now(c)));
        let by_column = self.settings.style.is_low_poly();
        let transitions = self.scanner.scan_with(
            camera_pos_world,
            draw,
            grid_key,
            preload,
            chunks,
            |c| level_distance_studs(camera_pos_world, c, by_column),
            |d, current| match force {
                Some(level) => level.min(LEVEL_COUNT as u8 - 1),
                None => select_level(d, current),
            },
        );
        let retain = self.retain_range_studs();
        out.evicted = shown
            .filter(|&c| distance_to_chunk_studs(camera_pos_world, c) > retain)
            .collect();
        out.transitions = transitions;
        out.scanned = true;
        out.scan_ms = start.elapsed().as_secs_f64() * 1e3;
        out
    }

    /// True when the last scan proposed every transition it found.
    pub fn is_settled(&self) -> bool {
        self.scanner.is_settled()
    }

    /// Makes the next [`LodController::update`] scan whatever moved (the
    /// distance levels are chosen by changed, e.g. with the style).
    pub fn rescan(&mut self) {
        self.scanner = LodScanner::default();
    }
}
