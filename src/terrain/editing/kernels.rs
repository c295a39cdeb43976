//! Brush kernels: the only way brush tools change terrain. Brushes compute new cell
//! values and hand them to [`Grid::edit_region`], which applies the cells that
//! differ under one revision and reports the region it touched; the mesh
//! pipeline, the undo history and scripted replay all see that same report.
//!
//! Brushes edit cells, never vertices. A brush has a shape (sphere, cube or
//! vertical cylinder) whose *shape field* is 1 well inside, 0 outside and a
//! linear ramp one cell wide at its surface, and a *falloff* that weights the
//! strength by the normalized distance from the centre (none, linear or
//! smoothstep). Each tool turns shape field and weight into a new cell:
//!
//! | tool | effect on a cell inside the brush |
//! |---|---|
//! | Add / Subtract | solid occupancy toward the shape field / its complement |
//! | Add water / Remove water | water occupancy likewise, only in cells without solid |
//! | Grow / Erode | solid occupancy up / down by [`GROW_STEP_OCCUPANCY`], only on the surface |
//! | Smooth | solid occupancy toward the mean of the 3×3×3 neighbourhood |
//! | Flatten | solid occupancy toward the half-space below a plane |
//! | Paint | material of solid surface cells (occupancy untouched) |
//! | Replace | material A → B (occupancy untouched) |
//!
//! Tools that look at neighbours (Grow, Erode, Smooth, Paint) read a copy of
//! the brush region taken before the edit, so the result does not depend on
//! the order cells are visited in. Paint and Replace change whole cells; a
//! strength or falloff below 1 paints a deterministic dither (a hash of the
//! cell coordinate against the weight), which the mesher's per-vertex
//! material weights turn into a smooth blend.
//!
//! [`GROW_STEP_OCCUPANCY`]: crate::terrain::editing::brush::GROW_STEP_OCCUPANCY

use glam::{DVec3, IVec3};

use crate::terrain::editing::brush::{
    Brush, BrushOptions, BrushShape, EditError, Falloff, FlattenPlane,
};
use crate::terrain::editing::cell_kernels::{CellSample, tool_cell};
use crate::terrain::editing::neighbourhood::Neighbourhood;
use crate::terrain::storage::coords::{CELL_SIZE_STUDS, CellBox};
use crate::terrain::storage::grid::{EditReport, Grid};

/// Shape field and weight of a brush placed at a centre (cells).
struct Footprint {
    centre_cells: DVec3,
    radius_cells: f64,
    shape: BrushShape,
    falloff: Falloff,
    strength: f64,
}

impl Footprint {
    /// `(shape field, weight)` at `cell`, or `None` where the brush has no effect.
    #[inline]
    fn at(&self, cell: IVec3) -> Option<(f64, f64)> {
        let offset = cell.as_dvec3() + DVec3::splat(0.5) - self.centre_cells;
        let d = self.shape.distance(offset);
        let field = (self.radius_cells - d + 0.5).clamp(0.0, 1.0);
        if field <= 0.0 {
            return None;
        }
        let weight = self.strength * self.falloff.weight(d / self.radius_cells);
        (weight > 0.0).then_some((field, weight))
    }
}

/// Flatten's plane in cell space: a point and a unit normal (without a
/// plane, the horizontal one through the brush centre).
fn flatten_plane_cells(options: &BrushOptions, centre_world: DVec3) -> (DVec3, DVec3) {
    let plane = options.flatten_plane.unwrap_or(FlattenPlane::Picked {
        point_world: centre_world,
        normal: DVec3::Y,
    });
    let (point_world, normal) = plane.point_and_normal_world();
    (point_world / CELL_SIZE_STUDS as f64, normal)
}

/// Applies `brush` once with the default options (hard sphere), centred at
/// `centre_world` (studs). See [`apply_tool`].
///
/// # Errors
/// [`EditError`] for invalid brush parameters or centre; the grid is unchanged.
pub fn apply_brush(
    grid: &mut Grid,
    brush: &Brush,
    centre_world: DVec3,
) -> Result<EditReport, EditError> {
    apply_tool(grid, brush, &BrushOptions::default(), centre_world)
}

/// The box of cells one application of `brush` with `options` at
/// `centre_world` may change: [`Brush::region`], or the wider box of the
/// erosion brushes ([`crate::terrain::editing::erosion_brush::erosion_box`]). The history
/// records this box before the application.
///
/// # Errors
/// As [`Brush::region`].
pub fn tool_region(
    brush: &Brush,
    options: &BrushOptions,
    centre_world: DVec3,
) -> Result<CellBox, EditError> {
    options.validate(brush.mode)?;
    if brush.mode.is_erosion() {
        crate::terrain::editing::erosion_brush::erosion_box(brush, centre_world)
    } else {
        brush.region(centre_world)
    }
}

/// Applies `brush` with `options` once, centred at `centre_world` (studs),
/// and reports the cells it changed.
///
/// Add raises each cell's occupancy a weight fraction of the way toward the
/// shape field (never lowering it; empty or water cells take the brush
/// material, solid cells keep theirs). Subtract lowers occupancy toward
/// `1 − field` (never raising it). Progress is rounded away from the current
/// value, so repeated application always converges. The other tools are
/// described in the module documentation. Cells that gain solid take the
/// dominant solid material of their neighbours (Grow, Smooth, Flatten) or
/// the brush material when there is none.
///
/// # Errors
/// [`EditError`] for invalid brush parameters, options or centre; the grid
/// is unchanged.
pub fn apply_tool(
    grid: &mut Grid,
    brush: &Brush,
    options: &BrushOptions,
    centre_world: DVec3,
) -> Result<EditReport, EditError> {
    if brush.mode.is_erosion() {
        return crate::terrain::editing::erosion_brush::apply_erosion(
            grid,
            brush,
            options,
            centre_world,
        );
    }
    options.validate(brush.mode)?;
    let region = brush.region(centre_world)?;
    let fp = Footprint {
        centre_cells: centre_world / CELL_SIZE_STUDS as f64,
        radius_cells: brush.radius_cells as f64,
        shape: options.shape,
        falloff: options.falloff,
        strength: brush.strength as f64,
    };
    let plane = flatten_plane_cells(options, centre_world);
    let salt = grid.revision();
    let nb = brush
        .mode
        .reads_neighbours()
        .then(|| Neighbourhood::read(grid, region.expanded(1)))
        .map(|nb| nb.with_sums_for(brush.mode));
    let report = grid.edit_region(region, |cell, old| {
        let Some((field, weight)) = fp.at(cell.0) else {
            return old;
        };
        let at = CellSample {
            cell,
            old,
            field,
            weight,
            salt,
        };
        tool_cell(brush, options, plane, nb.as_ref(), at)
    })?;
    Ok(report)
}
