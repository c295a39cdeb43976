//! Strokes that follow the ground: a brush application painted on the
//! surface keeps its height above the surface, not its world height, so
//! re-deriving it over a changed base (a new seed, a stamp moved under
//! it) places it on the new ground instead of in the air or underground.
//!
//! The surface of a column is the top of its highest solid cell (row plus
//! occupancy), read from the cells just before each application, live and
//! when re-derived alike, so both place the application identically.

use glam::DVec3;

use crate::terrain::storage::coords::{CELL_SIZE_STUDS, CHUNK_SIZE_CELLS, CellCoord, ChunkCoord};
use crate::terrain::storage::grid::Grid;

/// Highest chunk row probed for a column's surface (cells `y < 64 × 32`).
const TOP_PROBE_CHUNK: i32 = 64;

/// Lowest chunk row probed (cells `y ≥ −8 × 32`).
const BOTTOM_PROBE_CHUNK: i32 = -8;

/// The top of the highest solid cell of the column under `pos_world`
/// (studs), world y studs; `None` when the column holds no solid in the
/// probed rows.
pub fn surface_y_studs(grid: &Grid, pos_world: DVec3) -> Option<f64> {
    let cell = CellCoord::containing_world(pos_world).0;
    let (cx, cz) = (
        cell.x.div_euclid(CHUNK_SIZE_CELLS),
        cell.z.div_euclid(CHUNK_SIZE_CELLS),
    );
    for cy in (BOTTOM_PROBE_CHUNK..TOP_PROBE_CHUNK).rev() {
        let Some(chunk) = grid.chunk(ChunkCoord::new(cx, cy, cz)) else {
            continue;
        };
        let local_x = cell.x.rem_euclid(CHUNK_SIZE_CELLS);
        let local_z = cell.z.rem_euclid(CHUNK_SIZE_CELLS);
        for ly in (0..CHUNK_SIZE_CELLS).rev() {
            let c = chunk.cells.get(glam::IVec3::new(local_x, ly, local_z));
            if c.material().is_solid() && c.occupancy() > 0 {
                let y_cells =
                    f64::from(cy * CHUNK_SIZE_CELLS + ly) + f64::from(c.occupancy()) / 255.0;
                return Some(y_cells * f64::from(CELL_SIZE_STUDS));
            }
        }
    }
    None
}

/// Where an application recorded `offset_studs` above the surface lands
/// on `grid`: on the surface under `centre_world` plus the offset, or at
/// `centre_world` itself where the column holds no solid.
pub fn anchored_centre(grid: &Grid, centre_world: DVec3, offset_studs: Option<f64>) -> DVec3 {
    match (offset_studs, surface_y_studs(grid, centre_world)) {
        (Some(offset), Some(surface)) => {
            DVec3::new(centre_world.x, surface + offset, centre_world.z)
        }
        _ => centre_world,
    }
}

/// The offset above the surface to record for an application at
/// `centre_world` on `grid`, and where it lands (computed back from the
/// offset, so a re-derivation on the same cells lands at exactly the same
/// point).
pub fn anchor(grid: &Grid, centre_world: DVec3) -> (Option<f64>, DVec3) {
    match surface_y_studs(grid, centre_world) {
        Some(surface) => {
            let offset = centre_world.y - surface;
            (
                Some(offset),
                DVec3::new(centre_world.x, surface + offset, centre_world.z),
            )
        }
        None => (None, centre_world),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::cell::{Cell, Material};
    use crate::terrain::storage::coords::CellBox;
    use glam::IVec3;

    #[test]
    fn an_application_keeps_its_height_above_a_raised_ground() {
        let mut g = Grid::new();
        g.edit_region(CellBox::new(IVec3::ZERO, IVec3::new(8, 10, 8)), |_, _| {
            Cell::full(Material::ROCK)
        })
        .unwrap();
        let at = DVec3::new(10.0, 48.0, 10.0);
        assert_eq!(surface_y_studs(&g, at), Some(40.0));
        let (offset, landed) = anchor(&g, at);
        assert_eq!((offset, landed), (Some(8.0), at));
        // The ground rises by 20 cells: the application rises with it.
        g.edit_region(CellBox::new(IVec3::ZERO, IVec3::new(8, 30, 8)), |_, _| {
            Cell::full(Material::ROCK)
        })
        .unwrap();
        assert_eq!(anchored_centre(&g, at, offset).y, 128.0);
        // Over an empty column it stays where it was painted.
        let far = DVec3::new(400.0, 48.0, 400.0);
        assert_eq!(anchor(&g, far), (None, far));
    }
}
