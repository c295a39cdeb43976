//! Where the fly camera is, when that is somewhere an artist gets lost:
//! inside the terrain (the view shows only sky, since the ground's faces
//! point away), below the world's floor, or far outside the world. The
//! window shows a note saying so, and Home brings the camera back above
//! the ground ([`return_above_ground`]).

use glam::DVec3;

use crate::camera::Camera;
use crate::collision::character::column_surface_height_studs;
use crate::terrain::storage::coords::{CELL_SIZE_STUDS, CellCoord};
use crate::terrain::storage::grid::Grid;

/// Height above the ground Home puts the camera at, studs.
pub const RETURN_HEIGHT_STUDS: f64 = 64.0;

/// Height Home uses where the ground under the camera is not known (a
/// streaming world's column not loaded yet), studs.
pub const RETURN_HEIGHT_UNKNOWN_STUDS: f64 = 1200.0;

/// How far past the world's edge the camera may always go before the note
/// says it is outside, studs.
pub const OUTSIDE_MARGIN_STUDS: f64 = 256.0;

/// How far past the edge the camera may go before the note says it is
/// outside, studs: [`OUTSIDE_MARGIN_STUDS`] or the footprint's longer side,
/// whichever is more. A camera that sees the whole world stands outside it
/// (the default view of a 256-cell world is 604 studs out, of a 1,024-cell
/// one 1,057), and is not lost.
pub fn outside_margin_studs([x0, z0, x1, z1]: ExtentXz) -> f64 {
    OUTSIDE_MARGIN_STUDS.max((x1 - x0).max(z1 - z0))
}

/// The world's footprint in world studs: `[min_x, min_z, max_x, max_z]`.
pub type ExtentXz = [f64; 4];

/// Where the camera is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CameraPlace {
    /// In the open: above the ground, in a cave, or over the world.
    Open,
    /// Inside solid terrain, this far below the surface of its column.
    InsideTerrain {
        /// Studs below the topmost surface (0 when the surface is unknown).
        depth_studs: f64,
    },
    /// Below the world's floor (y 0, where solid cells start).
    BelowFloor {
        /// The camera's height, studs (negative).
        y_studs: f64,
    },
    /// Outside the world's footprint.
    Outside {
        /// Distance to the nearest edge, studs.
        distance_studs: f64,
        /// The side it is off: "north", "south", "east", "west" (or two).
        side: &'static str,
    },
}

impl CameraPlace {
    /// The note the view shows, or `None` in the open.
    pub fn note(self) -> Option<String> {
        let home = "press Home to return above the ground";
        match self {
            CameraPlace::Open => None,
            CameraPlace::InsideTerrain { depth_studs } if depth_studs > 0.0 => Some(format!(
                "The camera is inside the terrain, {} below the surface: {home}",
                distance_text(depth_studs)
            )),
            CameraPlace::InsideTerrain { .. } => {
                Some(format!("The camera is inside the terrain: {home}"))
            }
            CameraPlace::BelowFloor { y_studs } => Some(format!(
                "The camera is {} below the world's floor: {home}",
                distance_text(-y_studs)
            )),
            CameraPlace::Outside {
                distance_studs,
                side,
            } => Some(format!(
                "The camera is {} {side} of the world's edge: {home}",
                distance_text(distance_studs)
            )),
        }
    }
}

/// `studs` as the note prints it: studs up to 10,000, then kilometres (a
/// stud taken as a metre).
fn distance_text(studs: f64) -> String {
    if studs >= 10_000.0 {
        format!("{:.1} km", studs / 1000.0)
    } else {
        format!("{studs:.0} studs")
    }
}

/// Where `pos_world` is in the world whose cells `grid` holds (the
/// resident ones, for a streaming world) and whose footprint is `extent`
/// (`None`: unknown, never "outside").
pub fn camera_place(grid: &Grid, extent: Option<ExtentXz>, pos_world: DVec3) -> CameraPlace {
    if let Some([x0, z0, x1, z1]) = extent {
        let dx = (x0 - pos_world.x).max(pos_world.x - x1).max(0.0);
        let dz = (z0 - pos_world.z).max(pos_world.z - z1).max(0.0);
        let distance_studs = dx.hypot(dz);
        if distance_studs > outside_margin_studs([x0, z0, x1, z1]) {
            let ew = if pos_world.x < x0 {
                "west"
            } else if pos_world.x > x1 {
                "east"
            } else {
                ""
            };
            // Yaw 0 looks along −Z: north is −Z.
            let ns = if pos_world.z < z0 {
                "north"
            } else if pos_world.z > z1 {
                "south"
            } else {
                ""
            };
            let side = match (ns, ew) {
                ("north", "east") => "north-east",
                ("north", "west") => "north-west",
                ("south", "east") => "south-east",
                ("south", "west") => "south-west",
                ("", s) | (s, "") => s,
                _ => "",
            };
            return CameraPlace::Outside {
                distance_studs,
                side,
            };
        }
    }
    if pos_world.y < 0.0 {
        return CameraPlace::BelowFloor {
            y_studs: pos_world.y,
        };
    }
    if grid
        .cell(CellCoord::containing_world(pos_world))
        .is_inside()
    {
        let surface = column_surface_height_studs(grid, pos_world.x, pos_world.z);
        return CameraPlace::InsideTerrain {
            depth_studs: surface.map_or(0.0, |s| (s - pos_world.y).max(0.0)),
        };
    }
    CameraPlace::Open
}

/// Where Home puts `camera`: over the nearest point of the world's
/// footprint, [`RETURN_HEIGHT_STUDS`] above the ground there (or at
/// [`RETURN_HEIGHT_UNKNOWN_STUDS`] where the ground is not known), looking
/// the same way but never steeper down than 30°.
pub fn return_above_ground(grid: &Grid, extent: Option<ExtentXz>, camera: &Camera) -> Camera {
    let mut pos = camera.pos_world;
    if let Some([x0, z0, x1, z1]) = extent {
        let inset = f64::from(CELL_SIZE_STUDS);
        pos.x = pos.x.clamp(x0 + inset, (x1 - inset).max(x0 + inset));
        pos.z = pos.z.clamp(z0 + inset, (z1 - inset).max(z0 + inset));
    }
    pos.y = match column_surface_height_studs(grid, pos.x, pos.z) {
        Some(ground) => ground + RETURN_HEIGHT_STUDS,
        None => RETURN_HEIGHT_UNKNOWN_STUDS.max(pos.y),
    };
    let mut out = *camera;
    out.pos_world = pos;
    out.pitch_deg = out.pitch_deg.max(-30.0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::cell::{Cell, Material};
    use crate::terrain::storage::coords::CellBox;
    use glam::IVec3;

    /// Rock 10 cells deep (surface at 40 studs) over x, z in [0, 256) studs.
    fn world() -> (Grid, ExtentXz) {
        let mut g = Grid::new();
        g.edit_region(CellBox::new(IVec3::ZERO, IVec3::new(64, 10, 64)), |_, _| {
            Cell::full(Material::ROCK)
        })
        .unwrap();
        (g, [0.0, 0.0, 256.0, 256.0])
    }

    #[test]
    fn each_lost_place_is_named_and_the_open_is_not() {
        let (g, extent) = world();
        let at = |x, y, z| camera_place(&g, Some(extent), DVec3::new(x, y, z));
        assert_eq!(at(100.0, 80.0, 100.0), CameraPlace::Open);
        assert_eq!(at(100.0, 80.0, 100.0).note(), None);
        // Flown 13 km down through the ground (the input that showed it).
        assert_eq!(
            at(100.0, -13_000.0, 100.0),
            CameraPlace::BelowFloor { y_studs: -13_000.0 }
        );
        let note = at(100.0, -13_000.0, 100.0).note().unwrap();
        assert!(note.contains("13.0 km below the world's floor") && note.contains("Home"));
        match at(100.0, 30.0, 100.0) {
            CameraPlace::InsideTerrain { depth_studs } => {
                assert!((depth_studs - 10.0).abs() < 0.5, "{depth_studs}")
            }
            other => panic!("{other:?}"),
        }
        match at(2000.0, 80.0, -500.0) {
            CameraPlace::Outside {
                distance_studs,
                side,
            } => {
                assert_eq!(side, "north-east");
                assert!((distance_studs - 1744.0f64.hypot(500.0)).abs() < 1e-9);
            }
            other => panic!("{other:?}"),
        }
        // Just past the edge is still the open.
        assert_eq!(at(300.0, 80.0, 100.0), CameraPlace::Open);
    }

    /// The input that showed it: the default world's start-up view stands
    /// 1,057 studs south-west of its 4,096-stud footprint, looking at the
    /// whole world, and the note called the artist lost at once.
    #[test]
    fn a_view_of_the_whole_world_from_outside_is_not_lost() {
        let (g, _) = world();
        let extent = [0.0, 0.0, 4096.0, 4096.0];
        assert_eq!(outside_margin_studs(extent), 4096.0);
        let start = DVec3::new(-747.0, 1800.0, 4096.0 + 747.0);
        assert_eq!(camera_place(&g, Some(extent), start), CameraPlace::Open);
        // The 256-cell world's start-up view, 604 studs out.
        let small = [0.0, 0.0, 1024.0, 1024.0];
        let small_start = DVec3::new(-427.0, 900.0, 1024.0 + 427.0);
        assert_eq!(
            camera_place(&g, Some(small), small_start),
            CameraPlace::Open
        );
        // Farther out than the world is wide is outside.
        let far = DVec3::new(-3000.0, 1800.0, 7096.0);
        assert!(matches!(
            camera_place(&g, Some(extent), far),
            CameraPlace::Outside {
                side: "south-west",
                ..
            }
        ));
        // A small world keeps the fixed margin.
        assert_eq!(
            outside_margin_studs([0.0, 0.0, 256.0, 256.0]),
            OUTSIDE_MARGIN_STUDS
        );
    }

    #[test]
    fn home_puts_the_camera_above_the_ground_inside_the_world() {
        let (g, extent) = world();
        let lost = Camera::new(DVec3::new(5000.0, -13_000.0, 100.0), 10.0, -80.0);
        let back = return_above_ground(&g, Some(extent), &lost);
        assert_eq!(back.pos_world.x, 252.0);
        assert_eq!(back.pos_world.z, 100.0);
        assert!((back.pos_world.y - (40.0 + RETURN_HEIGHT_STUDS)).abs() < 0.5);
        assert_eq!(back.yaw_deg, 10.0);
        assert_eq!(back.pitch_deg, -30.0);
        assert_eq!(
            camera_place(&g, Some(extent), back.pos_world),
            CameraPlace::Open
        );
    }
}
