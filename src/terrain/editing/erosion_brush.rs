//! The erosion brushes: Hydraulic erode (droplets run downhill from the
//! brush, carry occupancy away and drop it downstream, cutting gullies) and
//! Thermal erode (slopes above the talus angle slump). They run the
//! recipe engine's erosion ([`crate::terrain::recipe::hydraulic_erosion`],
//! [`crate::terrain::recipe::thermal_erosion`]) on a small height field read from the cells
//! under the brush, then move each column's top by the change, peeling or
//! adding occupancy at the surface only, so caves and overhangs below the
//! surface stay as they are.
//!
//! Hardness is the real material's: a droplet over rock erodes less than
//! one over dirt. Where the droplets soak the foot of a face at least two
//! cells tall, Hydraulic erode also cuts the row just above the foot out
//! of the face, under a roof: water undercuts cliffs, a shape no height
//! field can hold. Deposits are sand (hydraulic: the alluvial fan at the
//! gully's foot) or gravel (thermal: scree).

use glam::{DVec3, IVec3};

use crate::progress::Progress;
use crate::terrain::editing::brush::{Brush, BrushMode, BrushOptions, EditError};
use crate::terrain::generation::noise::{hash2, tan_deg};
use crate::terrain::recipe::hydraulic_erosion::{RockAt, erode_hydraulic};
use crate::terrain::recipe::plan::Plan;
use crate::terrain::recipe::recipe_materials::RecipeMaterials;
use crate::terrain::recipe::stages::{HydraulicStage, MaterialHardness};
use crate::terrain::recipe::thermal_erosion::erode_thermal;
use crate::terrain::storage::cell::{Cell, Material};
use crate::terrain::storage::coords::{CELL_SIZE_STUDS, CellBox, CellCoord};
use crate::terrain::storage::grid::{EditReport, Grid};

/// Talus angle of the Thermal erode brush, degrees.
pub const BRUSH_TALUS_DEG: f64 = 33.0;

/// Resistance of each material to the Hydraulic erode brush, `[0, 1)`.
const BRUSH_HARDNESS: [(Material, f64); 6] = [
    (Material::ROCK, 0.8),
    (Material::SLATE, 0.7),
    (Material::LIMESTONE, 0.6),
    (Material::GRAVEL, 0.3),
    (Material::GRASS, 0.2),
    (Material::SNOW, 0.1),
];

/// The columns and rows an erosion brush reads and writes: a square of
/// columns reaching the brush's radius plus half of it around the centre
/// (deposits land downstream), and twice its radius up and down (the
/// surface may lie anywhere in it).
///
/// # Errors
/// As [`Brush::region`].
pub fn erosion_box(brush: &Brush, centre_world: DVec3) -> Result<CellBox, EditError> {
    let core = brush.region(centre_world)?;
    let reach = (brush.radius_cells * 1.5).ceil() as i32 + 2;
    let centre = (centre_world / CELL_SIZE_STUDS as f64).floor();
    let (cx, cz) = (centre.x as i32, centre.z as i32);
    let r = brush.radius_cells.ceil() as i32;
    // Off-lattice boxes are refused by `Grid::edit_region` before anything
    // changes; the core box was checked above.
    Ok(CellBox::new(
        IVec3::new(cx - reach, core.min.y - r, cz - reach),
        IVec3::new(cx + reach + 1, core.max.y + r, cz + reach + 1),
    ))
}

/// The surface height of each column of `area` (x fastest), cells: the
/// highest row holding solid plus its occupancy (the box's floor where the
/// column holds none), and the top solid material.
fn read_columns(grid: &Grid, area: &CellBox) -> (Vec<f32>, Vec<Material>) {
    let size = area.max - area.min;
    let mut heights = Vec::with_capacity((size.x * size.z) as usize);
    let mut tops = Vec::with_capacity(heights.capacity());
    for z in area.min.z..area.max.z {
        for x in area.min.x..area.max.x {
            let mut surface = (area.min.y as f32, Material::DIRT);
            for y in (area.min.y..area.max.y).rev() {
                let cell = grid.cell(CellCoord(IVec3::new(x, y, z)));
                let solid = cell.solid_occupancy();
                if solid > 0 {
                    surface = (y as f32 + f32::from(solid) / 255.0, cell.material());
                    break;
                }
            }
            heights.push(surface.0);
            tops.push(surface.1);
        }
    }
    (heights, tops)
}

/// Applies an erosion brush ([`BrushMode::HydraulicErode`] or
/// [`BrushMode::ThermalErode`]) once at `centre_world` (studs):
/// `options.erosion_iterations` passes (thermal) or droplet batches
/// (hydraulic), blended into the terrain by the brush's falloff and
/// strength. Reports the cells it changed.
///
/// # Errors
/// [`EditError`] for invalid brush parameters, iterations or centre; the
/// grid is unchanged.
pub fn apply_erosion(
    grid: &mut Grid,
    brush: &Brush,
    options: &BrushOptions,
    centre_world: DVec3,
) -> Result<EditReport, EditError> {
    options.validate(brush.mode)?;
    let area = erosion_box(brush, centre_world)?;
    let side = (area.max.x - area.min.x) as usize;
    let (heights, tops) = read_columns(grid, &area);
    let mut plan = Plan::new(side as u32);
    plan.height_cells.copy_from_slice(&heights);
    let seed = hash2(grid.revision(), area.min.x as i64, area.min.z as i64);
    match brush.mode {
        BrushMode::HydraulicErode => {
            let stage = brush_stage(options.erosion_iterations);
            let tops = &tops;
            // Nothing cancels a brush dab: a fresh progress is never cancelled.
            let _ = erode_hydraulic(
                &mut plan,
                &stage,
                &RecipeMaterials::default(),
                seed,
                RockAt::BySample(tops),
                &Progress::new(),
            );
        }
        _ => {
            // Nothing cancels a brush dab: a fresh progress is never cancelled.
            let _ = erode_thermal(
                &mut plan,
                tan_deg(BRUSH_TALUS_DEG),
                options.erosion_iterations,
                0.5,
                &Progress::new(),
            );
        }
    }
    let centre_cells = centre_world / CELL_SIZE_STUDS as f64;
    let radius = f64::from(brush.radius_cells);
    let deposit = if brush.mode == BrushMode::HydraulicErode {
        Material::SAND
    } else {
        Material::GRAVEL
    };
    // The change of each column's top, weighted by falloff and strength.
    let delta: Vec<f64> = (0..side * side)
        .map(|k| {
            let (x, z) = (
                area.min.x + (k % side) as i32,
                area.min.z + (k / side) as i32,
            );
            let d = DVec3::new(
                f64::from(x) + 0.5 - centre_cells.x,
                0.0,
                f64::from(z) + 0.5 - centre_cells.z,
            )
            .length();
            // Full effect inside the radius, fading over the margin.
            let fade = (1.0 - (d - radius) / (radius * 0.5 + 1.0)).clamp(0.0, 1.0);
            let weight =
                f64::from(brush.strength) * options.falloff.weight((d / radius).min(1.0)) * fade;
            f64::from(plan.height_cells[k] - heights[k]) * weight
        })
        .collect();
    let notches = if brush.mode == BrushMode::HydraulicErode {
        undercut_rows(&plan, &heights, &delta, side)
    } else {
        vec![None; side * side]
    };
    let report = grid.edit_region(area, |cell, old| {
        let k = ((cell.0.z - area.min.z) as usize) * side + (cell.0.x - area.min.x) as usize;
        if notches[k] == Some(cell.0.y) && old.material().is_solid() {
            return Cell::EMPTY;
        }
        let d = delta[k];
        if d.abs() < 1.0 / 512.0 {
            return old;
        }
        move_top(old, cell.0.y, f64::from(heights[k]), d, deposit)
    })?;
    Ok(report)
}

/// Least droplet wetness ([`Plan::wetness`]) at a face's foot that cuts
/// under the face.
const UNDERCUT_WETNESS: f32 = 0.2;

/// Where running water undercuts a face: for each column standing at
/// least 2 cells over an axis neighbour whose foot the droplets soaked
/// (wetness at least [`UNDERCUT_WETNESS`]) and that the brush changed, the
/// cell row just above that neighbour's new surface, under a roof of at
/// least one cell of the column's own new surface.
fn undercut_rows(plan: &Plan, heights: &[f32], delta: &[f64], side: usize) -> Vec<Option<i32>> {
    let top = |k: usize| f64::from(heights[k]) + delta[k];
    (0..side * side)
        .map(|k| {
            let (i, j) = (k % side, k / side);
            let own = top(k);
            [(1i64, 0i64), (-1, 0), (0, 1), (0, -1)]
                .into_iter()
                .filter_map(|(di, dj)| {
                    let (ni, nj) = (i as i64 + di, j as i64 + dj);
                    if ni < 0 || nj < 0 || ni >= side as i64 || nj >= side as i64 {
                        return None;
                    }
                    let q = nj as usize * side + ni as usize;
                    let foot = top(q);
                    let row = foot.floor() as i32;
                    let soaked = plan.wetness[q] >= UNDERCUT_WETNESS && delta[q].abs() > 1e-3;
                    (soaked && own - foot >= 2.0 && own - f64::from(row + 1) >= 1.0).then_some(row)
                })
                .min()
        })
        .collect()
}

/// The hydraulic stage a brush runs: `iterations` × 0.04 droplets per column.
fn brush_stage(iterations: u32) -> HydraulicStage {
    HydraulicStage {
        droplets_per_sample: (f64::from(iterations) * 0.04).min(8.0),
        max_steps: 48,
        capacity: 4.0,
        erosion: 0.3,
        deposition: 0.3,
        evaporation: 0.05,
        inertia: 0.1,
        hardness: BRUSH_HARDNESS
            .iter()
            .map(|(m, h)| MaterialHardness {
                material: m.name().to_owned(),
                hardness: *h,
            })
            .collect(),
    }
}

/// A cell of a column whose top (height `top_cells`) moves by `delta`
/// cells: erosion lowers the solid between the new and old top, deposition
/// fills the air between them with `deposit`. Cells outside that band keep
/// their value.
fn move_top(old: Cell, y: i32, top_cells: f64, delta: f64, deposit: Material) -> Cell {
    let (lo, hi) = if delta < 0.0 {
        (top_cells + delta, top_cells)
    } else {
        (top_cells, top_cells + delta)
    };
    let (y0, y1) = (f64::from(y), f64::from(y) + 1.0);
    if y1 <= lo || y0 >= hi {
        return old;
    }
    // The new solid fraction of this row under a top at `lo` or `hi`.
    let solid = old.solid_occupancy();
    if delta < 0.0 {
        let keep = ((lo - y0).clamp(0.0, 1.0) * 255.0).round() as u8;
        if keep >= solid {
            return old;
        }
        if keep == 0 {
            Cell::EMPTY
        } else {
            Cell::new(old.material(), keep)
        }
    } else {
        let want = ((hi - y0).clamp(0.0, 1.0) * 255.0).round() as u8;
        if want <= solid {
            return old;
        }
        let material = if old.material().is_solid() {
            old.material()
        } else {
            deposit
        };
        Cell::new(material, want)
    }
}
