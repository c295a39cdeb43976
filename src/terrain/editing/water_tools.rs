//! Placing water by level: the Sea Level tool fills every air cell below a
//! height inside a region with water, and Evaporate removes the water there.
//!
//! A cell holds one material, so water only ever goes into cells without
//! solid: sea level never floods the inside of terrain, and partially solid
//! cells (the terrain surface) stay as they are — the water sheet extends
//! over them (see the water mesher) so the shore still looks continuous.

use glam::IVec3;

use crate::terrain::storage::cell::{Cell, Material};
use crate::terrain::storage::coords::CellBox;
use crate::terrain::storage::grid::{EditReport, Grid, GridError};

/// Bad sea-level input. The grid is unchanged when one is returned.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SeaLevelError {
    /// The level is NaN or infinite.
    #[error("sea level {0} cells is not a finite number")]
    InvalidLevel(f64),
    /// The region holds no cell.
    #[error("the sea level region is empty")]
    EmptyRegion,
    /// The grid refused the region (too large).
    #[error(transparent)]
    Grid(#[from] GridError),
}

/// The part of `region` a level `level_cells` can affect: its rows below the
/// level (the top one fractional).
fn rows_below(region: CellBox, level_cells: f64) -> Result<CellBox, SeaLevelError> {
    if !level_cells.is_finite() {
        return Err(SeaLevelError::InvalidLevel(level_cells));
    }
    if region.is_empty() {
        return Err(SeaLevelError::EmptyRegion);
    }
    let top = (level_cells.ceil().clamp(i32::MIN as f64, i32::MAX as f64)) as i32;
    Ok(CellBox::new(
        region.min,
        IVec3::new(region.max.x, region.max.y.min(top), region.max.z),
    ))
}

/// Fills every cell without solid in `region` (global cells) whose row lies
/// below `level_cells` with water up to that level: full cells below it, the
/// cell containing it at `round((level − row) · 255)`. Existing water is
/// raised, never lowered.
///
/// # Errors
/// [`SeaLevelError`] for a non-finite level, an empty or too large region;
/// the grid is unchanged.
pub fn fill_sea_level(
    grid: &mut Grid,
    region: CellBox,
    level_cells: f64,
) -> Result<EditReport, SeaLevelError> {
    let rows = rows_below(region, level_cells)?;
    if rows.is_empty() {
        return Ok(EditReport::default());
    }
    Ok(grid.edit_region(rows, |cell, old| {
        if old.material().is_solid() {
            return old;
        }
        let fraction = (level_cells - cell.0.y as f64).clamp(0.0, 1.0);
        let water = (fraction * 255.0).round() as u8;
        if water <= old.water_occupancy() {
            return old;
        }
        Cell::new(Material::WATER, water)
    })?)
}

/// Removes all water in `region` (global cells) below `level_cells`.
///
/// # Errors
/// As [`fill_sea_level`].
pub fn evaporate(
    grid: &mut Grid,
    region: CellBox,
    level_cells: f64,
) -> Result<EditReport, SeaLevelError> {
    let rows = rows_below(region, level_cells)?;
    if rows.is_empty() {
        return Ok(EditReport::default());
    }
    Ok(grid.edit_region(rows, |_, old| {
        if old.water_occupancy() > 0 {
            Cell::EMPTY
        } else {
            old
        }
    })?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::coords::CellCoord;

    /// A rock floor at rows 0..3 with a rock pillar at x = 4 up to row 9, and
    /// a half-solid surface cell at (2, 3, 0).
    fn basin() -> Grid {
        let mut g = Grid::new();
        g.edit_region(CellBox::new(IVec3::ZERO, IVec3::new(8, 10, 1)), |c, _| {
            if c.0.y < 3 || c.0.x == 4 {
                Cell::full(Material::ROCK)
            } else if c.0 == IVec3::new(2, 3, 0) {
                Cell::new(Material::ROCK, 100)
            } else {
                Cell::EMPTY
            }
        })
        .unwrap();
        g
    }

    #[test]
    fn fills_air_below_the_level_with_a_fractional_top() {
        let mut g = basin();
        let region = CellBox::new(IVec3::ZERO, IVec3::new(8, 20, 1));
        let r = fill_sea_level(&mut g, region, 5.25).unwrap();
        assert!(r.is_change());
        assert_eq!(g.cell(CellCoord::new(0, 3, 0)), Cell::full(Material::WATER));
        assert_eq!(g.cell(CellCoord::new(0, 4, 0)), Cell::full(Material::WATER));
        assert_eq!(
            g.cell(CellCoord::new(0, 5, 0)),
            Cell::new(Material::WATER, 64)
        );
        assert_eq!(g.cell(CellCoord::new(0, 6, 0)), Cell::EMPTY);
        // Solid and partially solid cells are untouched.
        assert_eq!(g.cell(CellCoord::new(4, 4, 0)), Cell::full(Material::ROCK));
        assert_eq!(
            g.cell(CellCoord::new(2, 3, 0)),
            Cell::new(Material::ROCK, 100)
        );
        assert_eq!(g.cell(CellCoord::new(0, 1, 0)), Cell::full(Material::ROCK));
        // Filling again changes nothing; a lower level never lowers water.
        assert!(!fill_sea_level(&mut g, region, 5.25).unwrap().is_change());
        assert!(!fill_sea_level(&mut g, region, 4.0).unwrap().is_change());
    }

    #[test]
    fn evaporate_removes_the_water_and_nothing_else() {
        let mut g = basin();
        let before = g.content_hash();
        let region = CellBox::new(IVec3::ZERO, IVec3::new(8, 20, 1));
        fill_sea_level(&mut g, region, 7.5).unwrap();
        assert_ne!(g.content_hash(), before);
        evaporate(&mut g, region, 100.0).unwrap();
        assert_eq!(g.content_hash(), before);
    }

    #[test]
    fn bad_levels_and_regions_are_rejected() {
        let mut g = basin();
        let region = CellBox::new(IVec3::ZERO, IVec3::new(8, 20, 1));
        assert!(matches!(
            fill_sea_level(&mut g, region, f64::NAN),
            Err(SeaLevelError::InvalidLevel(_))
        ));
        assert!(matches!(
            evaporate(&mut g, region, f64::INFINITY),
            Err(SeaLevelError::InvalidLevel(_))
        ));
        assert!(matches!(
            fill_sea_level(&mut g, CellBox::new(IVec3::ZERO, IVec3::ZERO), 3.0),
            Err(SeaLevelError::EmptyRegion)
        ));
        let huge = CellBox::new(IVec3::splat(-5000), IVec3::splat(5000));
        assert!(matches!(
            fill_sea_level(&mut g, huge, 100.0),
            Err(SeaLevelError::Grid(GridError::RegionTooLarge { .. }))
        ));
        assert_eq!(g.revision(), 1);
    }
}
