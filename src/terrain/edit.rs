//! Brush edits: the only way tools change terrain. Brushes compute new cell
//! values and hand them to [`Grid::edit_region`], which applies the cells that
//! differ under one revision and reports the region it touched; the mesh
//! pipeline and the renderer re-mesh and re-upload exactly that.
//!
//! Brushes edit cells, never vertices: a brush is a smooth occupancy field
//! (1 inside, 0 outside, a linear ramp one cell wide at its surface) that the
//! mode blends into the grid with a strength.

use glam::{DVec3, IVec3};

use super::cell::{Cell, Material};
use super::coords::{CELL_SIZE_STUDS, CellBox};
use super::grid::{EditReport, Grid, GridError};

/// Smallest and largest brush radius, in cells.
pub const BRUSH_RADIUS_RANGE_CELLS: std::ops::RangeInclusive<f32> = 1.0..=64.0;

/// What a brush does to occupancy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BrushMode {
    /// Raise solid occupancy toward the brush shape, filling empty cells with
    /// the brush material.
    Add,
    /// Lower solid occupancy toward the outside of the brush shape.
    Subtract,
    /// Raise water toward the brush shape in cells without solid (air or water).
    AddWater,
    /// Lower water toward the outside of the brush shape.
    RemoveWater,
}

impl BrushMode {
    /// Every mode, in panel order.
    pub const ALL: [BrushMode; 4] = [
        BrushMode::Add,
        BrushMode::Subtract,
        BrushMode::AddWater,
        BrushMode::RemoveWater,
    ];

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            BrushMode::Add => "Add",
            BrushMode::Subtract => "Subtract",
            BrushMode::AddWater => "Add water",
            BrushMode::RemoveWater => "Remove water",
        }
    }

    /// True for the modes that move solid terrain (and honour "ignore water").
    pub fn is_sculpt(self) -> bool {
        matches!(self, BrushMode::Add | BrushMode::Subtract)
    }
}

/// A sphere brush.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Brush {
    /// Add or subtract.
    pub mode: BrushMode,
    /// Sphere radius in cells, within [`BRUSH_RADIUS_RANGE_CELLS`].
    pub radius_cells: f32,
    /// Fraction of the way each application moves occupancy toward the brush field, `(0, 1]`.
    pub strength: f32,
    /// Material given to cells the brush fills (must be solid; unused by the water modes).
    pub material: Material,
    /// Sculpt modes leave water cells bit-identical (Add does not replace water).
    pub ignore_water: bool,
}

/// Bad brush input. The grid is never changed when one of these is returned.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum EditError {
    /// Radius not finite or outside [`BRUSH_RADIUS_RANGE_CELLS`].
    #[error("brush radius {0} cells is outside 1..=64")]
    InvalidRadius(f32),
    /// Strength not finite or outside `(0, 1]`.
    #[error("brush strength {0} is outside (0, 1]")]
    InvalidStrength(f32),
    /// Centre with a NaN or infinite component, or beyond the `i32` cell lattice.
    #[error("brush centre {0:?} is not a finite position on the cell lattice")]
    InvalidCentre(DVec3),
    /// Material is Air or Water, or unknown.
    #[error("brush material {0} is not a solid material")]
    InvalidMaterial(u8),
    /// The grid refused the region.
    #[error(transparent)]
    Grid(#[from] GridError),
}

impl Brush {
    /// Checks every field; see [`EditError`].
    pub fn validate(&self) -> Result<(), EditError> {
        if !self.radius_cells.is_finite() || !BRUSH_RADIUS_RANGE_CELLS.contains(&self.radius_cells)
        {
            return Err(EditError::InvalidRadius(self.radius_cells));
        }
        if !self.strength.is_finite() || self.strength <= 0.0 || self.strength > 1.0 {
            return Err(EditError::InvalidStrength(self.strength));
        }
        if self.mode == BrushMode::Add
            && (!self.material.is_solid() || Material::from_id(self.material.0).is_none())
        {
            return Err(EditError::InvalidMaterial(self.material.0));
        }
        Ok(())
    }

    /// The box of cells this brush can touch when centred at `centre_world`.
    pub fn region(&self, centre_world: DVec3) -> Result<CellBox, EditError> {
        self.validate()?;
        let limit = (i32::MAX / 2) as f64 * CELL_SIZE_STUDS as f64;
        if !centre_world.is_finite() || centre_world.abs().max_element() > limit {
            return Err(EditError::InvalidCentre(centre_world));
        }
        let centre_cells = centre_world / CELL_SIZE_STUDS as f64;
        let reach = self.radius_cells as f64 + 1.0;
        let lo = (centre_cells - DVec3::splat(reach)).floor();
        let hi = (centre_cells + DVec3::splat(reach)).ceil();
        Ok(CellBox::new(
            IVec3::new(lo.x as i32, lo.y as i32, lo.z as i32),
            IVec3::new(hi.x as i32, hi.y as i32, hi.z as i32),
        ))
    }
}

/// The brush field at a cell: 1 well inside the sphere, 0 outside, a linear
/// ramp one cell wide centred on the sphere's surface.
fn sphere_field(centre_cells: DVec3, radius_cells: f64, cell: IVec3) -> f64 {
    let d = (cell.as_dvec3() + DVec3::splat(0.5)).distance(centre_cells);
    (radius_cells - d + 0.5).clamp(0.0, 1.0)
}

/// Applies `brush` once, centred at `centre_world` (studs).
///
/// Add raises each cell's occupancy a `strength` fraction of the way toward
/// the sphere field (never lowering it; empty or water cells take the brush
/// material, solid cells keep theirs). Subtract lowers occupancy toward
/// `1 − field` (never raising it). Progress is rounded away from the current
/// value, so repeated application always converges.
///
/// # Errors
/// [`EditError`] for invalid brush parameters or centre; the grid is unchanged.
pub fn apply_brush(
    grid: &mut Grid,
    brush: &Brush,
    centre_world: DVec3,
) -> Result<EditReport, EditError> {
    let region = brush.region(centre_world)?;
    let centre_cells = centre_world / CELL_SIZE_STUDS as f64;
    let radius = brush.radius_cells as f64;
    let strength = brush.strength as f64;
    let report = grid.edit_region(region, |cell, old| {
        let field = sphere_field(centre_cells, radius, cell.0);
        if field <= 0.0 {
            return old;
        }
        match brush.mode {
            BrushMode::Add => {
                if brush.ignore_water && old.water_occupancy() > 0 {
                    return old;
                }
                let old_solid = old.solid_occupancy() as f64;
                let target = field * 255.0;
                if target <= old_solid {
                    return old;
                }
                let new = (old_solid + (target - old_solid) * strength)
                    .ceil()
                    .min(255.0) as u8;
                let material = if old.material().is_solid() {
                    old.material()
                } else {
                    brush.material
                };
                Cell::new(material, new)
            }
            BrushMode::Subtract => {
                if !old.material().is_solid() {
                    return old;
                }
                let old_solid = old.solid_occupancy() as f64;
                let target = (1.0 - field) * 255.0;
                if target >= old_solid {
                    return old;
                }
                let new = (old_solid - (old_solid - target) * strength)
                    .floor()
                    .max(0.0) as u8;
                Cell::new(old.material(), new)
            }
            BrushMode::AddWater => {
                // Water fills only cells without solid: a cell holds one material.
                if old.material().is_solid() {
                    return old;
                }
                let old_water = old.water_occupancy() as f64;
                let target = field * 255.0;
                if target <= old_water {
                    return old;
                }
                let new = (old_water + (target - old_water) * strength)
                    .ceil()
                    .min(255.0) as u8;
                Cell::new(Material::WATER, new)
            }
            BrushMode::RemoveWater => {
                if old.water_occupancy() == 0 {
                    return old;
                }
                let old_water = old.water_occupancy() as f64;
                let target = (1.0 - field) * 255.0;
                if target >= old_water {
                    return old;
                }
                let new = (old_water - (old_water - target) * strength)
                    .floor()
                    .max(0.0) as u8;
                Cell::new(Material::WATER, new)
            }
        }
    })?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::coords::CellCoord;

    fn brush(mode: BrushMode) -> Brush {
        Brush {
            mode,
            radius_cells: 3.0,
            strength: 1.0,
            material: Material::SAND,
            ignore_water: false,
        }
    }

    #[test]
    fn add_fills_sphere_with_brush_material_then_subtract_clears_it() {
        let mut g = Grid::new();
        let centre = DVec3::splat(2.0); // inside cell (0,0,0)
        let r = apply_brush(&mut g, &brush(BrushMode::Add), centre).unwrap();
        assert!(r.is_change());
        assert_eq!(g.cell(CellCoord::new(0, 0, 0)), Cell::full(Material::SAND));
        assert_eq!(g.cell(CellCoord::new(-2, 0, 0)), Cell::full(Material::SAND));
        assert_eq!(g.cell(CellCoord::new(5, 0, 0)), Cell::EMPTY);
        // The ramp cell at distance 3 from the centre is half full.
        assert_eq!(g.cell(CellCoord::new(3, 0, 0)).occupancy(), 128);
        // Spans chunks -1 and 0 on every axis.
        assert_eq!(g.chunk_count(), 8);
        apply_brush(&mut g, &brush(BrushMode::Subtract), centre).unwrap();
        // Inside the sphere everything is gone; at most a sub-threshold film
        // (occupancy < 128, no surface) remains on the ramp.
        assert_eq!(g.cell(CellCoord::new(0, 0, 0)), Cell::EMPTY);
        assert_eq!(g.cell(CellCoord::new(-2, 0, 0)), Cell::EMPTY);
        for (coord, chunk) in g.chunks() {
            for z in 0..32 {
                for y in 0..32 {
                    for x in 0..32 {
                        let c = chunk.cells.get(IVec3::new(x, y, z));
                        assert!(
                            !c.is_inside(),
                            "cell {x},{y},{z} of {coord:?} still inside: {c:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn add_keeps_existing_solid_material() {
        let mut g = Grid::new();
        g.edit_region(CellBox::new(IVec3::ZERO, IVec3::ONE), |_, _| {
            Cell::new(Material::ROCK, 10)
        })
        .unwrap();
        apply_brush(&mut g, &brush(BrushMode::Add), DVec3::splat(2.0)).unwrap();
        assert_eq!(g.cell(CellCoord::new(0, 0, 0)), Cell::full(Material::ROCK));
    }

    #[test]
    fn weak_strength_converges() {
        let mut g = Grid::new();
        let b = Brush {
            strength: 0.05,
            ..brush(BrushMode::Add)
        };
        let mut steps = 0;
        while apply_brush(&mut g, &b, DVec3::splat(2.0))
            .unwrap()
            .is_change()
        {
            steps += 1;
            assert!(steps < 500, "brush never converged");
        }
        assert_eq!(g.cell(CellCoord::new(0, 0, 0)).occupancy(), 255);
    }

    /// Rock below row 0, water in rows 0..2, air above; 16 cells square.
    fn lake() -> Grid {
        let mut g = Grid::new();
        g.edit_region(
            CellBox::new(IVec3::new(-8, -4, -8), IVec3::new(8, 4, 8)),
            |c, _| match c.0.y {
                y if y < 0 => Cell::full(Material::ROCK),
                0 | 1 => Cell::full(Material::WATER),
                _ => Cell::EMPTY,
            },
        )
        .unwrap();
        g
    }

    #[test]
    fn water_brushes_fill_air_and_drain_water_but_never_touch_solid() {
        let mut g = lake();
        let add = Brush {
            mode: BrushMode::AddWater,
            material: Material::AIR, // unused by water modes
            ..brush(BrushMode::Add)
        };
        apply_brush(&mut g, &add, DVec3::new(2.0, 10.0, 2.0)).unwrap();
        assert_eq!(g.cell(CellCoord::new(0, 2, 0)), Cell::full(Material::WATER));
        assert_eq!(g.cell(CellCoord::new(0, -1, 0)), Cell::full(Material::ROCK));
        let remove = Brush {
            mode: BrushMode::RemoveWater,
            radius_cells: 6.0,
            ..add
        };
        apply_brush(&mut g, &remove, DVec3::new(2.0, 4.0, 2.0)).unwrap();
        assert_eq!(g.cell(CellCoord::new(0, 0, 0)), Cell::EMPTY);
        assert_eq!(g.cell(CellCoord::new(0, -1, 0)), Cell::full(Material::ROCK));
        assert_eq!(
            g.cell(CellCoord::new(-8, 0, -8)),
            Cell::full(Material::WATER)
        );
    }

    #[test]
    fn ignore_water_leaves_water_cells_bit_identical() {
        let water_cells = |g: &Grid| -> Vec<Cell> {
            let mut v = Vec::new();
            for z in -8..8 {
                for x in -8..8 {
                    for y in 0..2 {
                        v.push(g.cell(CellCoord::new(x, y, z)));
                    }
                }
            }
            v
        };
        let sculpt = Brush {
            radius_cells: 5.0,
            ..brush(BrushMode::Add)
        };
        let mut g = lake();
        let before = water_cells(&g);
        let ignoring = Brush {
            ignore_water: true,
            ..sculpt
        };
        let r = apply_brush(&mut g, &ignoring, DVec3::new(2.0, 4.0, 2.0)).unwrap();
        assert!(r.is_change(), "air above the water is still filled");
        assert_eq!(water_cells(&g), before);
        // Without the option, Add replaces water with the brush material.
        let mut g = lake();
        apply_brush(&mut g, &sculpt, DVec3::new(2.0, 4.0, 2.0)).unwrap();
        assert_eq!(g.cell(CellCoord::new(0, 0, 0)), Cell::full(Material::SAND));
    }

    #[test]
    fn bad_input_is_rejected_without_change() {
        let mut g = Grid::new();
        let nan_radius = Brush {
            radius_cells: f32::NAN,
            ..brush(BrushMode::Add)
        };
        assert!(matches!(
            apply_brush(&mut g, &nan_radius, DVec3::ZERO),
            Err(EditError::InvalidRadius(_))
        ));
        let zero_strength = Brush {
            strength: 0.0,
            ..brush(BrushMode::Add)
        };
        assert!(apply_brush(&mut g, &zero_strength, DVec3::ZERO).is_err());
        let water = Brush {
            material: Material::WATER,
            ..brush(BrushMode::Add)
        };
        assert!(apply_brush(&mut g, &water, DVec3::ZERO).is_err());
        assert!(matches!(
            apply_brush(
                &mut g,
                &brush(BrushMode::Add),
                DVec3::new(f64::NAN, 0.0, 0.0)
            ),
            Err(EditError::InvalidCentre(_))
        ));
        assert!(apply_brush(&mut g, &brush(BrushMode::Add), DVec3::splat(1e300)).is_err());
        assert_eq!(g.revision(), 0);
        assert_eq!(g.chunk_count(), 0);
    }
}
