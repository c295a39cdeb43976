//! The per-cell kernels of the brush tools: the new value of one cell under
//! a brush, from its old value, the shape field and weight there and (for
//! the tools that read neighbours) the pre-edit [`Neighbourhood`]. The
//! module documentation of [`kernels`](super::kernels) says what each tool
//! does; [`apply_tool`](super::kernels::apply_tool) runs these over a region.

use glam::{DVec3, IVec3};

use crate::terrain::editing::brush::{
    Brush, BrushMode, BrushOptions, FlattenLimit, GROW_STEP_OCCUPANCY,
};
use crate::terrain::editing::neighbourhood::Neighbourhood;
use crate::terrain::storage::cell::{Cell, Material};
use crate::terrain::storage::coords::CellCoord;

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

/// One cell under a brush: where, its value, the shape field and weight
/// there (both in `(0, 1]`) and the dither salt.
pub(super) struct CellSample {
    pub(super) cell: CellCoord,
    pub(super) old: Cell,
    pub(super) field: f64,
    pub(super) weight: f64,
    pub(super) salt: u64,
}

/// The new value of one cell under a brush: the water guard shared by the
/// sculpt tools, then the phase of the brush's mode.
pub(super) fn tool_cell(
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
