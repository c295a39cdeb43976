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

use glam::{DVec3, IVec3};

use crate::terrain::editing::brush::{
    Brush, BrushMode, BrushOptions, BrushShape, EditError, Falloff, FlattenLimit, FlattenPlane,
    GROW_STEP_OCCUPANCY,
};
use crate::terrain::storage::cell::{Cell, Material};
use crate::terrain::storage::coords::{CELL_SIZE_STUDS, CellBox, CellCoord};
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

/// A copy of the cells of a box (taken before an edit), for tools that read
/// neighbours. Cells outside the box read as empty.
struct Neighbourhood {
    min: IVec3,
    size: IVec3,
    cells: Vec<Cell>,
    /// Sums of solid occupancy over the 3×3×3 block around each cell one in
    /// from the border (see [`Neighbourhood::with_sums_for`]); empty until
    /// asked for.
    solid_sums: Vec<u16>,
    /// Cells inside the surface among the same 27, for Paint; empty until
    /// asked for.
    inside_counts: Vec<u16>,
}

impl Neighbourhood {
    fn read(grid: &Grid, region: CellBox) -> Neighbourhood {
        let size = region.max - region.min;
        let mut cells = vec![Cell::EMPTY; (size.x * size.y * size.z).max(0) as usize];
        for coord in region.chunks() {
            let sub = region.intersect(&coord.cell_box());
            let Some(chunk) = grid.chunk(coord) else {
                continue;
            };
            let base = coord.min_cell().0;
            for z in sub.min.z..sub.max.z {
                for y in sub.min.y..sub.max.y {
                    let row =
                        ((z - region.min.z) * size.y + (y - region.min.y)) * size.x - region.min.x;
                    for x in sub.min.x..sub.max.x {
                        cells[(row + x) as usize] = chunk.cells.get(IVec3::new(x, y, z) - base);
                    }
                }
            }
        }
        Neighbourhood {
            min: region.min,
            size,
            cells,
            solid_sums: Vec::new(),
            inside_counts: Vec::new(),
        }
    }

    /// Adds the 3×3×3 sums the mode reads for every cell one in from the
    /// border: solid occupancy for Smooth, cells inside the surface for
    /// Paint. The same integer sums as reading the 27 cells, so the tools
    /// give bit-identical cells.
    fn with_sums_for(mut self, mode: BrushMode) -> Neighbourhood {
        match mode {
            BrushMode::Smooth => {
                self.solid_sums = self.box_sums(|c| u16::from(c.solid_occupancy()));
            }
            BrushMode::Paint => {
                self.inside_counts = self.box_sums(|c| u16::from(c.is_inside()));
            }
            _ => {}
        }
        self
    }

    /// Sums of `value` over the 3×3×3 block around every cell one in from
    /// the border, `(size − 2)³` in z, y, x order, as three separable 3-tap
    /// passes (x, then y, then z): 9 adds a cell instead of 27
    /// bounds-checked reads. `value` is at most 255 (27 × 255 fits `u16`).
    /// Empty when the block is under 3 cells on a side.
    fn box_sums(&self, value: impl Fn(Cell) -> u16) -> Vec<u16> {
        let n = self.size;
        if n.cmplt(IVec3::splat(3)).any() {
            return Vec::new();
        }
        let inner = n - 2;
        let values: Vec<u16> = self.cells.iter().map(|c| value(*c)).collect();
        // x pass: (inner.x, n.y, n.z).
        let mut sx = Vec::with_capacity((inner.x * n.y * n.z) as usize);
        for row in values.chunks_exact(n.x as usize) {
            sx.extend(row.windows(3).map(|w| w[0] + w[1] + w[2]));
        }
        // y pass: (inner.x, inner.y, n.z).
        let plane_x = inner.x as usize;
        let mut sy = Vec::with_capacity((inner.x * inner.y * n.z) as usize);
        for slab in sx.chunks_exact(plane_x * n.y as usize) {
            for y in 0..inner.y as usize {
                let rows = [y, y + 1, y + 2].map(|r| &slab[r * plane_x..(r + 1) * plane_x]);
                sy.extend((0..plane_x).map(|x| rows[0][x] + rows[1][x] + rows[2][x]));
            }
        }
        // z pass: (inner.x, inner.y, inner.z).
        let slab = plane_x * inner.y as usize;
        let mut sums = Vec::with_capacity(slab * inner.z as usize);
        for z in 0..inner.z as usize {
            let slabs = [z, z + 1, z + 2].map(|s| &sy[s * slab..(s + 1) * slab]);
            sums.extend((0..slab).map(|i| slabs[0][i] + slabs[1][i] + slabs[2][i]));
        }
        sums
    }

    /// Index of `cell` in [`Neighbourhood::box_sums`], if it is one in
    /// from the border.
    fn inner_index(&self, cell: IVec3) -> Option<usize> {
        let inner = self.size - 2;
        let l = cell - self.min - 1;
        (l.cmpge(IVec3::ZERO).all() && l.cmplt(inner).all())
            .then(|| ((l.z * inner.y + l.y) * inner.x + l.x) as usize)
    }

    #[inline]
    fn get(&self, cell: IVec3) -> Cell {
        let l = cell - self.min;
        if l.cmplt(IVec3::ZERO).any() || l.cmpge(self.size).any() {
            return Cell::EMPTY;
        }
        self.cells[((l.z * self.size.y + l.y) * self.size.x + l.x) as usize]
    }

    const FACES: [IVec3; 6] = [
        IVec3::new(1, 0, 0),
        IVec3::new(-1, 0, 0),
        IVec3::new(0, 1, 0),
        IVec3::new(0, -1, 0),
        IVec3::new(0, 0, 1),
        IVec3::new(0, 0, -1),
    ];

    /// True when a face neighbour of `cell` is inside the solid surface.
    fn any_face_inside(&self, cell: IVec3) -> bool {
        Self::FACES.iter().any(|&o| self.get(cell + o).is_inside())
    }

    /// True when a face neighbour of `cell` is outside the solid surface.
    fn any_face_outside(&self, cell: IVec3) -> bool {
        Self::FACES.iter().any(|&o| !self.get(cell + o).is_inside())
    }

    /// True when any of the 26 neighbours of `cell` (faces, edges and
    /// corners) is outside the solid surface: the cell is then a corner of
    /// a surface cube, and its material shows on the surface (spec §6).
    fn any_neighbour_outside(&self, cell: IVec3) -> bool {
        if let Some(&count) = self
            .inner_index(cell)
            .and_then(|i| self.inside_counts.get(i))
        {
            // 27 inside with the cell itself: none of the 26 is outside.
            return count < 27 - u16::from(!self.get(cell).is_inside());
        }
        (-1..=1).any(|dz| {
            (-1..=1).any(|dy| {
                (-1..=1).any(|dx| {
                    (dx, dy, dz) != (0, 0, 0)
                        && !self.get(cell + IVec3::new(dx, dy, dz)).is_inside()
                })
            })
        })
    }

    /// Mean solid occupancy over the 3×3×3 block around `cell`.
    fn mean_solid(&self, cell: IVec3) -> f64 {
        if let Some(&sum) = self.inner_index(cell).and_then(|i| self.solid_sums.get(i)) {
            return f64::from(sum) / 27.0;
        }
        let mut sum = 0u32;
        for dz in -1..=1 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    sum += self.get(cell + IVec3::new(dx, dy, dz)).solid_occupancy() as u32;
                }
            }
        }
        sum as f64 / 27.0
    }

    /// The solid material with the highest occupancy among the 26 neighbours
    /// (first in z, y, x order on ties).
    fn dominant_solid(&self, cell: IVec3) -> Option<Material> {
        let mut best: Option<(u8, Material)> = None;
        for dz in -1..=1 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let c = self.get(cell + IVec3::new(dx, dy, dz));
                    let s = c.solid_occupancy();
                    if s > 0 && best.is_none_or(|(b, _)| s > b) {
                        best = Some((s, c.material()));
                    }
                }
            }
        }
        best.map(|(_, m)| m)
    }
}

/// A value in `[0, 1)` from a cell coordinate and a salt (SplitMix64
/// finalizer over both), the dither threshold of Paint and Replace. The salt
/// is the grid revision before the application, so repeated applications
/// dither differently (coverage accumulates) yet a replay is reproducible.
fn dither(cell: IVec3, salt: u64) -> f64 {
    let mut z = (cell.x as u32 as u64)
        ^ ((cell.y as u32 as u64) << 21)
        ^ ((cell.z as u32 as u64) << 42)
        ^ salt.wrapping_mul(0xD6E8_FEB8_6659_FD93);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// Moves `old` toward `target` by `fraction`, rounding away from `old` so
/// repeated application always converges.
#[inline]
fn step_toward(old: f64, target: f64, fraction: f64) -> u8 {
    let v = old + (target - old) * fraction;
    let v = if target > old { v.ceil() } else { v.floor() };
    v.clamp(0.0, 255.0) as u8
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

/// One cell under a brush: where, its value, the shape field and weight
/// there (both in `(0, 1]`) and the dither salt.
struct CellSample {
    cell: CellCoord,
    old: Cell,
    field: f64,
    weight: f64,
    salt: u64,
}

/// The new value of one cell under a brush: the water guard shared by the
/// sculpt tools, then the phase of the brush's mode.
fn tool_cell(
    brush: &Brush,
    options: &BrushOptions,
    plane: (DVec3, DVec3),
    nb: Option<&Neighbourhood>,
    at: CellSample,
) -> Cell {
    let old = at.old;
    if brush.ignore_water && brush.mode.is_sculpt() && old.water_occupancy() > 0 {
        return old;
    }
    match brush.mode {
        BrushMode::Add => add_cell(brush, &at),
        BrushMode::Subtract => subtract_cell(&at),
        BrushMode::AddWater => add_water_cell(&at),
        BrushMode::RemoveWater => remove_water_cell(&at),
        BrushMode::Grow => nb.map_or(old, |nb| grow_cell(brush, nb, &at)),
        BrushMode::Erode => nb.map_or(old, |nb| erode_cell(nb, &at)),
        BrushMode::Smooth => nb.map_or(old, |nb| smooth_cell(brush, nb, &at)),
        BrushMode::Flatten => flatten_cell(brush, options, plane, nb, &at),
        BrushMode::Paint => nb.map_or(old, |nb| paint_cell(brush, nb, &at)),
        BrushMode::Replace => replace_cell(brush, options, &at),
        // Erosion brushes move column tops; `apply_tool` sends them to
        // `erosion_brush` before any cell is visited.
        BrushMode::HydraulicErode | BrushMode::ThermalErode => old,
    }
}

impl CellSample {
    /// The cell's solid occupancy, `0..=255`.
    fn solid(&self) -> f64 {
        self.old.solid_occupancy() as f64
    }

    /// Material for this cell when it gains solid: its own when solid, else
    /// the dominant solid of its neighbours, else the brush material.
    fn fill_material(&self, brush: &Brush, nb: Option<&Neighbourhood>) -> Material {
        if self.old.material().is_solid() {
            self.old.material()
        } else {
            nb.and_then(|n| n.dominant_solid(self.cell.0))
                .unwrap_or(brush.material)
        }
    }
}

/// Add: raises occupancy toward the shape field; empty or water cells take
/// the brush material, solid cells keep theirs.
fn add_cell(brush: &Brush, at: &CellSample) -> Cell {
    let (old, solid) = (at.old, at.solid());
    let target = at.field * 255.0;
    if target <= solid {
        return old;
    }
    let material = if old.material().is_solid() {
        old.material()
    } else {
        brush.material
    };
    Cell::new(material, step_toward(solid, target, at.weight))
}

/// Subtract: lowers the occupancy of solid cells toward `1 − field`.
fn subtract_cell(at: &CellSample) -> Cell {
    let (old, solid) = (at.old, at.solid());
    if !old.material().is_solid() {
        return old;
    }
    let target = (1.0 - at.field) * 255.0;
    if target >= solid {
        return old;
    }
    Cell::new(old.material(), step_toward(solid, target, at.weight))
}

/// Add Water: raises the water of cells without solid toward the field.
fn add_water_cell(at: &CellSample) -> Cell {
    let old = at.old;
    // Water fills only cells without solid: a cell holds one material.
    if old.material().is_solid() {
        return old;
    }
    let water = old.water_occupancy() as f64;
    let target = at.field * 255.0;
    if target <= water {
        return old;
    }
    Cell::new(Material::WATER, step_toward(water, target, at.weight))
}

/// Remove Water: lowers water toward `1 − field`.
fn remove_water_cell(at: &CellSample) -> Cell {
    let old = at.old;
    let water = old.water_occupancy() as f64;
    let target = (1.0 - at.field) * 255.0;
    if water == 0.0 || target >= water {
        return old;
    }
    Cell::new(Material::WATER, step_toward(water, target, at.weight))
}

/// Grow: raises cells that are partly solid or touch solid by a step.
fn grow_cell(brush: &Brush, nb: &Neighbourhood, at: &CellSample) -> Cell {
    let (old, solid) = (at.old, at.solid());
    if solid >= 255.0 || (solid == 0.0 && !nb.any_face_inside(at.cell.0)) {
        return old;
    }
    let new = (solid + (GROW_STEP_OCCUPANCY * at.field * at.weight).ceil()).min(255.0);
    Cell::new(at.fill_material(brush, Some(nb)), new as u8)
}

/// Erode: lowers cells that are partly solid or exposed by a step.
fn erode_cell(nb: &Neighbourhood, at: &CellSample) -> Cell {
    let (old, solid) = (at.old, at.solid());
    if solid == 0.0 || (solid >= 255.0 && !nb.any_face_outside(at.cell.0)) {
        return old;
    }
    let new = (solid - (GROW_STEP_OCCUPANCY * at.field * at.weight).ceil()).max(0.0);
    Cell::new(old.material(), new as u8)
}

/// Smooth: moves occupancy toward the neighbourhood mean.
fn smooth_cell(brush: &Brush, nb: &Neighbourhood, at: &CellSample) -> Cell {
    let (old, solid) = (at.old, at.solid());
    let mean = nb.mean_solid(at.cell.0);
    let new = (solid + (mean - solid) * at.field * at.weight)
        .round()
        .clamp(0.0, 255.0);
    if new == solid {
        return old;
    }
    if new > solid {
        Cell::new(at.fill_material(brush, Some(nb)), new as u8)
    } else {
        Cell::new(old.material(), new as u8)
    }
}

/// Flatten: moves occupancy toward the plane's half-space, within the limit.
fn flatten_cell(
    brush: &Brush,
    options: &BrushOptions,
    plane: (DVec3, DVec3),
    nb: Option<&Neighbourhood>,
    at: &CellSample,
) -> Cell {
    let (old, solid) = (at.old, at.solid());
    let (point, normal) = plane;
    let signed = (at.cell.0.as_dvec3() + DVec3::splat(0.5) - point).dot(normal);
    let target = (0.5 - signed).clamp(0.0, 1.0) * 255.0;
    let raise = target > solid;
    let allowed = match options.flatten_limit {
        FlattenLimit::Both => target != solid,
        FlattenLimit::RaiseOnly => raise,
        FlattenLimit::LowerOnly => target < solid,
    };
    if !allowed || (!raise && !old.material().is_solid()) {
        return old;
    }
    let new = step_toward(solid, target, at.field * at.weight);
    if raise {
        Cell::new(at.fill_material(brush, nb), new)
    } else {
        Cell::new(old.material(), new)
    }
}

/// Paint: recolours exposed solid cells, dithered by the weighted field.
/// Exposed means any of the 26 neighbours is outside: a full cell beside a
/// terrain step touches the air only along an edge or a corner, yet its
/// material shows on the surface (it used to stay as a one-cell line of the
/// old material).
fn paint_cell(brush: &Brush, nb: &Neighbourhood, at: &CellSample) -> Cell {
    let (old, solid) = (at.old, at.solid());
    let c = at.cell.0;
    if !old.material().is_solid()
        || old.material() == brush.material
        || (solid >= 255.0 && !nb.any_neighbour_outside(c))
        || dither(c, at.salt) >= at.field * at.weight
    {
        return old;
    }
    Cell::new(brush.material, old.occupancy())
}

/// Replace: recolours cells of the source material, dithered.
fn replace_cell(brush: &Brush, options: &BrushOptions, at: &CellSample) -> Cell {
    let old = at.old;
    if old.material() != options.replace_from || dither(at.cell.0, at.salt) >= at.field * at.weight
    {
        return old;
    }
    Cell::new(brush.material, old.occupancy())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::coords::CellCoord;
    use crate::terrain::storage::coords::{LATTICE_CELLS, MAX_CELL_COORD, MIN_CELL_COORD};

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

    #[test]
    fn brushes_stay_on_the_lattice() {
        let mut g = Grid::new();
        let b = brush(BrushMode::Add);
        let studs = |cell: f64| cell * CELL_SIZE_STUDS as f64;
        // Centred on the last cells: the reach crosses the lattice's ends.
        for centre in [
            DVec3::new(studs(MIN_CELL_COORD as f64), 0.0, 0.0),
            DVec3::new(0.0, studs(MAX_CELL_COORD as f64 + 0.5), 0.0),
            DVec3::new(studs(i32::MIN as f64), 0.0, 0.0),
        ] {
            let err = apply_brush(&mut g, &b, centre).unwrap_err();
            assert_eq!(err, EditError::InvalidCentre(centre));
            assert!(err.to_string().contains("lattice"), "{err}");
        }
        assert_eq!(g.revision(), 0);
        // Far enough inside, the brush reaches the last cells.
        let reach = b.radius_cells as f64 + 1.0;
        let centre = DVec3::splat(studs(MAX_CELL_COORD as f64 + 1.0 - reach));
        let region = b.region(centre).unwrap();
        assert_eq!(region.max, LATTICE_CELLS.max);
        assert!(apply_brush(&mut g, &b, centre).unwrap().is_change());
    }

    fn tool(mode: BrushMode, radius_cells: f32) -> Brush {
        Brush {
            mode,
            radius_cells,
            strength: 1.0,
            material: Material::SAND,
            ignore_water: false,
        }
    }

    fn opts(shape: BrushShape, falloff: Falloff) -> BrushOptions {
        BrushOptions {
            shape,
            falloff,
            ..BrushOptions::default()
        }
    }

    /// Centre of cell `c` in world studs.
    fn at_cell(c: [i32; 3]) -> DVec3 {
        CellCoord::new(c[0], c[1], c[2]).sample_point_world()
    }

    fn occ(g: &Grid, x: i32, y: i32, z: i32) -> u8 {
        g.cell(CellCoord::new(x, y, z)).occupancy()
    }

    #[test]
    fn shapes_give_exact_shape_fields() {
        let add = tool(BrushMode::Add, 3.0);
        let mut g = Grid::new();
        apply_tool(
            &mut g,
            &add,
            &opts(BrushShape::Cube, Falloff::None),
            at_cell([0, 0, 0]),
        )
        .unwrap();
        assert_eq!(occ(&g, 2, 2, 2), 255);
        assert_eq!(occ(&g, 3, 3, 0), 128); // Chebyshev 3: field 0.5
        assert_eq!(occ(&g, 4, 0, 0), 0);
        let mut g = Grid::new();
        apply_tool(
            &mut g,
            &add,
            &opts(BrushShape::Sphere, Falloff::None),
            at_cell([0, 0, 0]),
        )
        .unwrap();
        assert_eq!(occ(&g, 2, 2, 2), 10); // field 3.5 - sqrt(12) = 0.0359
        assert_eq!(occ(&g, 3, 0, 0), 128);
        let mut g = Grid::new();
        apply_tool(
            &mut g,
            &add,
            &opts(BrushShape::Cylinder, Falloff::None),
            at_cell([0, 0, 0]),
        )
        .unwrap();
        assert_eq!(occ(&g, 2, 0, 2), 172); // field 3.5 - sqrt(8) = 0.6716
        assert_eq!(occ(&g, 0, 2, 2), 255);
        assert_eq!(occ(&g, 0, 3, 0), 128);
        assert_eq!(g.cell(CellCoord::new(0, 0, 0)).material(), Material::SAND);
    }

    #[test]
    fn falloff_weights_the_strength() {
        assert_eq!(Falloff::None.weight(0.7), 1.0);
        assert_eq!(Falloff::Linear.weight(0.25), 0.75);
        assert_eq!(Falloff::Smooth.weight(0.25), 0.84375);
        assert_eq!(Falloff::Smooth.weight(1.0), 0.0);
        let mut g = Grid::new();
        apply_tool(
            &mut g,
            &tool(BrushMode::Add, 4.0),
            &opts(BrushShape::Sphere, Falloff::Linear),
            at_cell([0, 0, 0]),
        )
        .unwrap();
        assert_eq!(occ(&g, 0, 0, 0), 255);
        assert_eq!(occ(&g, 2, 0, 0), 128); // weight 0.5 of 255
        assert_eq!(occ(&g, 3, 0, 0), 64); // weight 0.25: ceil(63.75)
    }

    /// Full rock in rows y < 4 over x, z in -8..8, air above.
    fn floor() -> Grid {
        let mut g = Grid::new();
        g.edit_region(
            CellBox::new(IVec3::new(-8, 0, -8), IVec3::new(8, 4, 8)),
            |_, _| Cell::full(Material::ROCK),
        )
        .unwrap();
        g
    }

    #[test]
    fn grow_raises_only_surface_cells_and_erode_lowers_only_exposed_ones() {
        let cube = opts(BrushShape::Cube, Falloff::None);
        let mut g = floor();
        apply_tool(
            &mut g,
            &tool(BrushMode::Grow, 3.0),
            &cube,
            at_cell([0, 4, 0]),
        )
        .unwrap();
        for x in -2..=2 {
            for z in -2..=2 {
                // The air row on the floor gains a quarter cell of the floor's material.
                assert_eq!(
                    g.cell(CellCoord::new(x, 4, z)),
                    Cell::new(Material::ROCK, 64)
                );
                assert_eq!(occ(&g, x, 5, z), 0);
                assert_eq!(occ(&g, x, 3, z), 255);
            }
        }
        let mut g = floor();
        apply_tool(
            &mut g,
            &tool(BrushMode::Erode, 3.0),
            &cube,
            at_cell([0, 3, 0]),
        )
        .unwrap();
        for x in -2..=2 {
            for z in -2..=2 {
                assert_eq!(occ(&g, x, 3, z), 191);
                assert_eq!(occ(&g, x, 2, z), 255);
                assert_eq!(occ(&g, x, 4, z), 0);
            }
        }
    }

    #[test]
    fn separable_sums_equal_the_27_cell_reads() {
        // A pseudo-random 7 × 6 × 5 block: every inner cell's sum from the
        // three passes equals the direct 27-cell sum.
        let region = CellBox::new(IVec3::new(-3, 10, 30), IVec3::new(4, 16, 35));
        let mut g = Grid::new();
        g.edit_region(region, |c, _| {
            let h = (c.0.x * 73 + c.0.y * 151 + c.0.z * 37).rem_euclid(256) as u8;
            Cell::new(Material::ROCK, h)
        })
        .unwrap();
        let plain = Neighbourhood::read(&g, region);
        let summed = Neighbourhood::read(&g, region).with_sums_for(BrushMode::Smooth);
        let counted = Neighbourhood::read(&g, region).with_sums_for(BrushMode::Paint);
        assert_eq!(summed.solid_sums.len(), 5 * 4 * 3);
        assert_eq!(counted.inside_counts.len(), 5 * 4 * 3);
        let mut checked = 0;
        for z in region.min.z + 1..region.max.z - 1 {
            for y in region.min.y + 1..region.max.y - 1 {
                for x in region.min.x + 1..region.max.x - 1 {
                    let c = IVec3::new(x, y, z);
                    assert_eq!(summed.mean_solid(c), plain.mean_solid(c), "{c}");
                    assert_eq!(
                        counted.any_neighbour_outside(c),
                        plain.any_neighbour_outside(c),
                        "{c}"
                    );
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 5 * 4 * 3);
    }

    #[test]
    fn smooth_lowers_a_spike_and_raises_its_neighbours() {
        let mut g = Grid::new();
        g.edit_region(CellBox::new(IVec3::ZERO, IVec3::ONE), |_, _| {
            Cell::full(Material::ROCK)
        })
        .unwrap();
        apply_tool(
            &mut g,
            &tool(BrushMode::Smooth, 4.0),
            &opts(BrushShape::Sphere, Falloff::None),
            at_cell([0, 0, 0]),
        )
        .unwrap();
        // Mean of the 3x3x3 block is 255 / 27 = 9.44 everywhere it reaches.
        assert_eq!(
            g.cell(CellCoord::new(0, 0, 0)),
            Cell::new(Material::ROCK, 9)
        );
        assert_eq!(
            g.cell(CellCoord::new(1, 0, 0)),
            Cell::new(Material::ROCK, 9)
        );
        assert_eq!(
            g.cell(CellCoord::new(-1, 1, -1)),
            Cell::new(Material::ROCK, 9)
        );
        assert_eq!(g.cell(CellCoord::new(2, 0, 0)), Cell::EMPTY);
    }

    /// Columns over x, z in -8..8 of rock up to a height between 5 and 11.
    fn bumpy() -> Grid {
        let mut g = Grid::new();
        g.edit_region(
            CellBox::new(IVec3::new(-8, 0, -8), IVec3::new(8, 16, 8)),
            |c, _| {
                let h = 5 + (c.0.x * 3 + c.0.z * 5).rem_euclid(7);
                if c.0.y < h {
                    Cell::full(Material::DIRT)
                } else {
                    Cell::EMPTY
                }
            },
        )
        .unwrap();
        g
    }

    #[test]
    fn flatten_puts_every_touched_column_within_one_step_of_the_plane() {
        let mut g = bumpy();
        let height_cells = 8.3;
        let options = BrushOptions {
            flatten_plane: Some(FlattenPlane::Height {
                height_world: height_cells * CELL_SIZE_STUDS as f64,
            }),
            ..opts(BrushShape::Cube, Falloff::None)
        };
        apply_tool(
            &mut g,
            &tool(BrushMode::Flatten, 6.0),
            &options,
            at_cell([0, 8, 0]),
        )
        .unwrap();
        // Cells with offset <= 5 on every axis have shape field 1.
        for x in -5..=5 {
            for z in -5..=5 {
                for y in 3..=13 {
                    let target = (height_cells - y as f64).clamp(0.0, 1.0) * 255.0;
                    let o = occ(&g, x, y, z) as f64;
                    assert!(
                        (o - target).abs() < 1.0,
                        "cell {x},{y},{z}: {o} vs plane target {target}"
                    );
                }
                // The column's surface row holds 0.3 of a cell: 76 or 77.
                assert!((76..=77).contains(&occ(&g, x, 8, z)));
            }
        }
        // Outside the brush nothing moved.
        assert_eq!(
            g.cell(CellCoord::new(7, 12, 7)),
            bumpy().cell(CellCoord::new(7, 12, 7))
        );
    }

    #[test]
    fn flatten_raise_only_and_lower_only_move_one_way_along_a_picked_plane() {
        let plane = FlattenPlane::Picked {
            point_world: DVec3::new(0.0, 8.0 * CELL_SIZE_STUDS as f64, 0.0),
            normal: DVec3::new(1.0, 3.0, 0.0),
        };
        for limit in [FlattenLimit::RaiseOnly, FlattenLimit::LowerOnly] {
            let before = bumpy();
            let mut g = bumpy();
            let options = BrushOptions {
                flatten_plane: Some(plane),
                flatten_limit: limit,
                ..opts(BrushShape::Sphere, Falloff::None)
            };
            let r = apply_tool(
                &mut g,
                &tool(BrushMode::Flatten, 6.0),
                &options,
                at_cell([0, 8, 0]),
            )
            .unwrap();
            assert!(r.is_change());
            for x in -8..8 {
                for z in -8..8 {
                    for y in 0..16 {
                        let (a, b) = (occ(&before, x, y, z), occ(&g, x, y, z));
                        match limit {
                            FlattenLimit::RaiseOnly => assert!(b >= a),
                            _ => assert!(b <= a),
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn paint_changes_materials_of_surface_cells_only_never_occupancy() {
        let mut g = bumpy();
        let before = bumpy();
        let paint = Brush {
            strength: 0.7,
            ..tool(BrushMode::Paint, 6.0)
        };
        let r = apply_tool(
            &mut g,
            &paint,
            &opts(BrushShape::Sphere, Falloff::Smooth),
            at_cell([0, 8, 0]),
        )
        .unwrap();
        assert!(r.is_change());
        let mut painted = 0;
        for x in -8..8 {
            for z in -8..8 {
                for y in 0..16 {
                    let (a, b) = (
                        before.cell(CellCoord::new(x, y, z)),
                        g.cell(CellCoord::new(x, y, z)),
                    );
                    assert_eq!(a.occupancy(), b.occupancy());
                    if a != b {
                        painted += 1;
                        assert_eq!(b.material(), Material::SAND);
                        // Every painted cell touches the outside through a
                        // face, an edge or a corner.
                        let exposed = (-1..=1).any(|dx| {
                            (-1..=1).any(|dy| {
                                (-1..=1).any(|dz| occ(&before, x + dx, y + dy, z + dz) < 128)
                            })
                        });
                        assert!(exposed, "cell {x},{y},{z} is buried");
                    }
                }
            }
        }
        assert!(painted > 20, "only {painted} cells painted");
    }

    #[test]
    fn full_strength_paint_covers_the_cells_beside_a_terrain_step() {
        // The input that showed it: a one-cell step in grass; the full cell
        // at the foot of the step touches the air only along an edge.
        let mut g = Grid::new();
        g.edit_region(
            CellBox::new(IVec3::splat(-12), IVec3::new(12, 0, 12)),
            |c, _| {
                if c.0.y >= -1 && c.0.x >= 0 {
                    Cell::full(Material::GRASS)
                } else if c.0.y < -1 {
                    Cell::full(Material::DIRT)
                } else {
                    Cell::EMPTY
                }
            },
        )
        .unwrap();
        g.edit_region(
            CellBox::new(IVec3::new(-12, -2, -12), IVec3::new(12, -1, 12)),
            |_, _| Cell::full(Material::GRASS),
        )
        .unwrap();
        let before = g.clone();
        let paint = Brush {
            strength: 1.0,
            material: Material::MUD,
            ..tool(BrushMode::Paint, 4.0)
        };
        apply_tool(
            &mut g,
            &paint,
            &opts(BrushShape::Cube, Falloff::None),
            DVec3::new(0.5, -1.0, 0.5) * CELL_SIZE_STUDS as f64,
        )
        .unwrap();
        let mut checked = 0;
        for x in -3..=3 {
            for y in -4..=2 {
                for z in -3..=3 {
                    let c = CellCoord::new(x, y, z);
                    let cell = before.cell(c);
                    let exposed = (-1..=1).any(|dx| {
                        (-1..=1).any(|dy| {
                            (-1..=1).any(|dz| {
                                before
                                    .cell(CellCoord::new(x + dx, y + dy, z + dz))
                                    .occupancy()
                                    < 128
                            })
                        })
                    });
                    if cell.material().is_solid() && exposed {
                        checked += 1;
                        assert_eq!(
                            g.cell(c).material(),
                            Material::MUD,
                            "surface cell {x},{y},{z} kept {:?}",
                            cell.material()
                        );
                    }
                }
            }
        }
        // The foot of the step (x = -1, y = -2) is among them.
        assert!(checked > 40, "{checked}");
        assert_eq!(g.cell(CellCoord::new(-1, -2, 0)).material(), Material::MUD);
        // Buried cells keep their material.
        assert_eq!(g.cell(CellCoord::new(0, -4, 0)).material(), Material::DIRT);
    }

    #[test]
    fn replace_touches_only_the_source_material() {
        let mut g = Grid::new();
        g.edit_region(CellBox::new(IVec3::splat(-6), IVec3::splat(6)), |c, _| {
            if (c.0.x + c.0.y + c.0.z).rem_euclid(2) == 0 {
                Cell::new(Material::ROCK, 200)
            } else {
                Cell::new(Material::DIRT, 100)
            }
        })
        .unwrap();
        let before = g.clone();
        let replace = tool(BrushMode::Replace, 4.0);
        let options = BrushOptions {
            replace_from: Material::ROCK,
            ..opts(BrushShape::Cube, Falloff::None)
        };
        apply_tool(&mut g, &replace, &options, at_cell([0, 0, 0])).unwrap();
        let replace_to = Brush {
            material: Material::SNOW,
            ..replace
        };
        apply_tool(
            &mut g,
            &replace_to,
            &BrushOptions {
                replace_from: Material::SAND,
                ..options
            },
            at_cell([0, 0, 0]),
        )
        .unwrap();
        for x in -6..6 {
            for y in -6..6 {
                for z in -6..6 {
                    let c = CellCoord::new(x, y, z);
                    let (a, b) = (before.cell(c), g.cell(c));
                    let reach = x.abs().max(y.abs()).max(z.abs());
                    if a.material() == Material::ROCK && reach <= 3 {
                        assert_eq!(b, Cell::new(Material::SNOW, 200));
                    } else if a.material() == Material::ROCK && reach == 4 {
                        // Shape field 0.5 at the cube's face: dithered, each
                        // application with its own pattern.
                        assert!(
                            b == a
                                || b == Cell::new(Material::SAND, 200)
                                || b == Cell::new(Material::SNOW, 200)
                        );
                    } else {
                        assert_eq!(a, b, "cell {x},{y},{z}");
                    }
                }
            }
        }
    }

    #[test]
    fn ignore_water_leaves_water_bit_identical_for_every_sculpt_tool() {
        let water_cells = |g: &Grid| -> Vec<Cell> {
            (-8..8)
                .flat_map(|z| (-8..8).flat_map(move |x| (0..2).map(move |y| (x, y, z))))
                .map(|(x, y, z)| g.cell(CellCoord::new(x, y, z)))
                .collect()
        };
        for mode in BrushMode::ALL.into_iter().filter(|m| m.is_sculpt()) {
            let mut g = lake();
            let before = water_cells(&g);
            let b = Brush {
                ignore_water: true,
                ..tool(mode, 5.0)
            };
            apply_tool(
                &mut g,
                &b,
                &opts(BrushShape::Cylinder, Falloff::Smooth),
                DVec3::new(2.0, 4.0, 2.0),
            )
            .unwrap();
            assert_eq!(water_cells(&g), before, "{mode:?}");
        }
    }

    #[test]
    fn bad_tool_input_is_rejected_without_change() {
        let mut g = floor();
        let rev = g.revision();
        let hash = g.content_hash();
        let c = at_cell([0, 4, 0]);
        let d = BrushOptions::default();
        for radius in [0.0, 64.5, f32::INFINITY] {
            assert_eq!(
                apply_tool(&mut g, &tool(BrushMode::Smooth, radius), &d, c),
                Err(EditError::InvalidRadius(radius))
            );
        }
        let unknown = Brush {
            material: Material(200),
            ..tool(BrushMode::Paint, 4.0)
        };
        assert_eq!(
            apply_tool(&mut g, &unknown, &d, c),
            Err(EditError::InvalidMaterial(200))
        );
        let from_water = BrushOptions {
            replace_from: Material::WATER,
            ..d
        };
        assert_eq!(
            apply_tool(&mut g, &tool(BrushMode::Replace, 4.0), &from_water, c),
            Err(EditError::InvalidReplaceMaterial(1))
        );
        let bad_plane = BrushOptions {
            flatten_plane: Some(FlattenPlane::Picked {
                point_world: c,
                normal: DVec3::ZERO,
            }),
            ..d
        };
        assert!(matches!(
            apply_tool(&mut g, &tool(BrushMode::Flatten, 4.0), &bad_plane, c),
            Err(EditError::InvalidPlane(_))
        ));
        assert!(matches!(
            apply_tool(
                &mut g,
                &tool(BrushMode::Grow, 4.0),
                &d,
                DVec3::new(0.0, f64::INFINITY, 0.0)
            ),
            Err(EditError::InvalidCentre(_))
        ));
        assert_eq!(g.revision(), rev);
        assert_eq!(g.content_hash(), hash);
    }

    #[test]
    fn repeated_weak_paint_accumulates_coverage() {
        let mut g = floor();
        let weak = Brush {
            strength: 0.3,
            ..tool(BrushMode::Paint, 6.0)
        };
        let cube = opts(BrushShape::Cube, Falloff::None);
        let painted = |g: &Grid| {
            (-4..=4)
                .flat_map(|x| (-4..=4).map(move |z| (x, z)))
                .filter(|&(x, z)| g.cell(CellCoord::new(x, 3, z)).material() == Material::SAND)
                .count()
        };
        apply_tool(&mut g, &weak, &cube, at_cell([0, 3, 0])).unwrap();
        let once = painted(&g);
        for _ in 0..15 {
            apply_tool(&mut g, &weak, &cube, at_cell([0, 3, 0])).unwrap();
        }
        let many = painted(&g);
        assert!(once > 5 && once < 50, "{once} of 81 after one application");
        assert!(many > 75, "{many} of 81 after sixteen");
    }
}
