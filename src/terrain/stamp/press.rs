//! Pressing a stamp ([`crate::terrain::stamp::definition`]) into the grid: a [`StampPlan`] reads
//! the terrain under the footprint and works out every column's new surface
//! (in parallel) before anything is written, then [`StampPlan::apply`]
//! writes the cells through [`Grid::edit_region`], one box per chunk column,
//! touching only chunks under the footprint.
//!
//! # Height stamps
//! Each column's surface height `H` is read from its cells: the top solid
//! cell and the fractional ones under it down to the first full cell, whose
//! occupancies add up to the height (see [`surface_height_cells`]). The target height `T`
//! ([`crate::terrain::stamp::definition::StampMode`]) becomes occupancies with the generator's
//! distance-like ramp ([`ramp_occupancy`] with [`ramp_for_slope`] of the
//! target surface's slope), so a stamped slope is as smooth as a generated
//! one: a column whose height changes is rewritten near its surface, from
//! under the lower of its old and new bands to above the higher, exactly
//! as the generator writes a column of that height. Cells that gain solid
//! take the placement's material (or the column's top material), cells
//! that lose it keep theirs; rows further down are never touched, so caves
//! under a stamp stay. Columns holding no solid, and columns whose height
//! does not change, are left alone.
//!
//! Water resting on a column moves with it (see `water_over`): a stamp
//! displaces water only where it puts solid; ground carved from under
//! water fills with it up to its old level; a shallow stream or river
//! (at most [`MAX_CARRIED_WATER_CELLS`] deep) raised by an Add stamp rides
//! up with its bed, as deep as it was; deep water keeps its level, and
//! ground raised out of it is dry. Water in columns the stamp does not
//! change stays as it is.
//!
//! # Cell stamps
//! Every cell in the box around the turned, scaled stamp reads the stamp cell
//! under its centre (nearest-cell resampling: exact at multiples of 90° and
//! at one stamp cell per cell) and combines with it as the mode's table says.

use glam::{DVec2, IVec3};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::terrain::editing::region::Clipboard;
use crate::terrain::generation::column_fill::{ramp_for_slope, ramp_occupancy, slope_3x3};
use crate::terrain::stamp::definition::{
    HeightStamp, Stamp, StampBase, StampError, StampMode, StampPlacement, StampShape,
};
use crate::terrain::storage::cell::{Cell, Material};
use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::{CHUNK_SIZE_CELLS, CellBox, CellCoord, check_on_lattice};
use crate::terrain::storage::grid::{EditReport, Grid, GridError, MAX_EDIT_VOLUME_CELLS};

/// Rows under a column's top solid cell searched for its first full cell.
const SURFACE_SEARCH_ROWS: i32 = 8;

/// A column's top as read from its cells.
#[derive(Clone, Copy, Debug, PartialEq)]
struct ColumnTop {
    /// Surface height, cells.
    height_cells: f64,
    /// Row of the top solid cell.
    top_row: i32,
    /// Material of the top solid cell.
    material: Material,
    /// Top of the water resting on the surface (the run of water cells
    /// straight above the top solid cell), cells; `None` when dry.
    water_top_cells: Option<f64>,
}

/// Water shallower than this (cells) rides up with an Add stamp that would
/// otherwise bury it: a stream or a river keeps flowing in its raised
/// channel. Deeper water (a lake, the sea) is displaced where solid
/// replaces it instead, so no water stands above its level.
pub const MAX_CARRIED_WATER_CELLS: f64 = 4.0;

/// The stored chunks of one chunk column, highest first.
type ChunkStack = Vec<(i32, ChunkCells)>;

/// The stored chunks of the chunk columns `(cx, cz)` in `[lo, hi]`, each
/// highest first (one pass over the grid's chunks).
fn chunk_stacks(grid: &Grid, lo: (i32, i32), hi: (i32, i32)) -> FxHashMap<(i32, i32), ChunkStack> {
    let mut stacks: FxHashMap<(i32, i32), ChunkStack> = FxHashMap::default();
    for (coord, chunk) in grid.chunks() {
        let (cx, cz) = (coord.0.x, coord.0.z);
        if (lo.0..=hi.0).contains(&cx) && (lo.1..=hi.1).contains(&cz) {
            stacks
                .entry((cx, cz))
                .or_default()
                .push((coord.0.y, chunk.cells.clone()));
        }
    }
    for stack in stacks.values_mut() {
        stack.sort_by_key(|(cy, _)| std::cmp::Reverse(*cy));
    }
    stacks
}

/// The top of cell column `(lx, lz)` of a chunk stack: the top solid cell,
/// then the fractional cells under it down to the first full one at row
/// `f`, give `H = f + 1 + Σ occupancy / 255` (for a ramp the fractional
/// cells add up to the distance from `f + 1` to the surface). Without a
/// full cell within [`SURFACE_SEARCH_ROWS`] (a film, a floating sliver),
/// `H` is the top cell's row plus its occupancy, as the column summaries read it.
fn column_top(stack: &ChunkStack, lx: i32, lz: i32) -> Option<ColumnTop> {
    let mut top: Option<ColumnTop> = None;
    let mut fractions = 0.0;
    let mut next_row = i32::MAX;
    // The top of the water run over the rows read so far (reset by a cell
    // holding neither water nor solid, or a skipped empty chunk row).
    let mut water_top: Option<f64> = None;
    for (cy, cells) in stack {
        let y0 = cy * CHUNK_SIZE_CELLS;
        if top.is_none() && y0 + CHUNK_SIZE_CELLS != next_row {
            water_top = None;
        }
        if cells.is_all_empty() {
            continue;
        }
        if top.is_some() && y0 + CHUNK_SIZE_CELLS != next_row {
            // A chunk row between is empty: the top was a sliver.
            break;
        }
        for ly in (0..CHUNK_SIZE_CELLS).rev() {
            let y = y0 + ly;
            let cell = cells.get(IVec3::new(lx, ly, lz));
            let s = cell.solid_occupancy();
            match top {
                None if s == 0 => {
                    let w = cell.water_occupancy();
                    water_top = match (w, water_top) {
                        (0, _) => None,
                        (_, Some(t)) => Some(t),
                        (_, None) => Some(f64::from(y) + f64::from(w) / 255.0),
                    };
                    next_row = y;
                    continue;
                }
                None => {
                    top = Some(ColumnTop {
                        height_cells: f64::from(y) + f64::from(s) / 255.0,
                        top_row: y,
                        material: cell.material(),
                        water_top_cells: water_top,
                    });
                    if s == 255 {
                        return top;
                    }
                    fractions = f64::from(s) / 255.0;
                }
                Some(mut t) => {
                    if s == 255 {
                        t.height_cells = f64::from(y + 1) + fractions;
                        return Some(t);
                    }
                    if s == 0 || t.top_row - y >= SURFACE_SEARCH_ROWS {
                        return top;
                    }
                    fractions += f64::from(s) / 255.0;
                }
            }
            next_row = y;
        }
    }
    top
}

/// The surface height of cell column `(x, z)`, cells, read from its cells
/// as a height stamp reads it (module docs); `None` when the column holds
/// no solid. A flat surface at height `h` reads as `h` within half a 255th;
/// a sloped one (a ramp `r` cells tall) within about `1 / (8 r)` of a cell.
pub fn surface_height_cells(grid: &Grid, x: i32, z: i32) -> Option<f64> {
    let (cx, cz) = (
        x.div_euclid(CHUNK_SIZE_CELLS),
        z.div_euclid(CHUNK_SIZE_CELLS),
    );
    let stacks = chunk_stacks(grid, (cx, cz), (cx, cz));
    let stack = stacks.get(&(cx, cz))?;
    column_top(
        stack,
        x.rem_euclid(CHUNK_SIZE_CELLS),
        z.rem_euclid(CHUNK_SIZE_CELLS),
    )
    .map(|t| t.height_cells)
}

/// One column's part of a height stamp: rows `[y_lo, y_hi)` take the
/// ramp occupancy of surface `target_cells`, and the water resting on the
/// surface is laid over the new one up to `water_top_cells`.
#[derive(Clone, Copy, Debug)]
struct ColumnEdit {
    y_lo: i32,
    y_hi: i32,
    target_cells: f64,
    ramp_cells: f64,
    material: Material,
    /// The top of the water over the new surface, cells (`None`: cells
    /// above the new surface keep what they hold).
    water_top_cells: Option<f64>,
}

/// Where the water resting on a column (its top `water_cells`, over the
/// old surface `old_cells`) stands over the new surface `new_cells`, whose
/// highest cell holding solid is row `solid_top_row`:
/// - raised by an Add stamp and no deeper than [`MAX_CARRIED_WATER_CELLS`]:
///   it rides up with the ground, as deep as it was (a river keeps
///   flowing in its raised channel, with no dry band where the rise
///   nears its depth), and at least a cell (or its depth) over the solid
///   cells of a steep surface's ramp, which cannot hold water;
/// - else, still under the old water level (a raise that does not reach
///   it, or any lowering): the water fills the column up to its old level,
///   so ground carved from under a lake or a river fills with its water;
/// - else it is displaced by the solid that replaced it (`None`).
fn water_over(
    mode: StampMode,
    old_cells: f64,
    water_cells: Option<f64>,
    (new_cells, solid_top_row): (f64, i32),
) -> Option<f64> {
    let water = water_cells?;
    let depth = water - old_cells;
    if mode == StampMode::Add && new_cells > old_cells && depth <= MAX_CARRIED_WATER_CELLS {
        Some((new_cells + depth).max(f64::from(solid_top_row + 1) + depth.min(1.0)))
    } else if new_cells < water {
        Some(water)
    } else {
        None
    }
}

impl ColumnEdit {
    /// The new value of `old` at row `y`.
    #[inline]
    fn cell(&self, y: i32, old: Cell) -> Cell {
        if y < self.y_lo || y >= self.y_hi {
            return old;
        }
        let target = ramp_occupancy(self.target_cells, self.ramp_cells, y);
        if target == 0
            && let Some(water) = self.water_top_cells
        {
            let w = ((water - f64::from(y)).clamp(0.0, 1.0) * 255.0).round() as u8;
            if w > 0 {
                return Cell::new(Material::WATER, w);
            }
        }
        let solid = old.solid_occupancy();
        if target == solid {
            old
        } else if target > solid {
            let m = if old.material().is_solid() {
                old.material()
            } else {
                self.material
            };
            Cell::new(m, target)
        } else {
            // Only solid cells have occupancy to lose (target < solid).
            Cell::new(old.material(), target)
        }
    }
}

/// The columns of one chunk column a height stamp edits, and their box.
#[derive(Debug)]
struct ColumnBox {
    region: CellBox,
    /// `region`'s x and z extents, columns (x fastest).
    columns: Vec<Option<ColumnEdit>>,
}

/// A cell stamp resolved to world cells.
#[derive(Debug)]
struct CellsEdit {
    region: CellBox,
    base_cells: f64,
    scale_y: f64,
}

#[derive(Debug)]
enum PlanEdits {
    Height(Vec<ColumnBox>),
    Cells(CellsEdit),
}

/// A placement worked out against a grid, ready to write: its region
/// holds every cell it may change. Built by [`StampPlan::new`]; the grid
/// must not change between the two.
#[derive(Debug)]
pub struct StampPlan<'a> {
    stamp: &'a Stamp,
    placement: StampPlacement,
    edits: PlanEdits,
    region: CellBox,
}

/// The box `[x_lo, x_hi) × [z_lo, z_hi)` of columns around the turned
/// footprint (y `[0, 1)`).
pub fn footprint_columns(stamp: &Stamp, placement: &StampPlacement) -> CellBox {
    let c = placement.centre_xz_cells;
    let e = placement.turned_half_extents(stamp);
    let lo = (c - e).floor();
    let hi = (c + e).ceil();
    CellBox::new(
        IVec3::new(lo.x as i32, 0, lo.y as i32),
        IVec3::new(hi.x as i32, 1, hi.y as i32),
    )
}

/// Refuses a box over columns a streaming grid does not hold.
fn check_resident(grid: &Grid, region: &CellBox) -> Result<(), StampError> {
    let missing = grid.missing_columns(region);
    if missing.is_empty() {
        Ok(())
    } else {
        Err(GridError::NotResident(missing).into())
    }
}

impl<'a> StampPlan<'a> {
    /// Validates `placement` and works out what pressing `stamp` into
    /// `grid` changes, reading the grid only.
    ///
    /// # Errors
    /// [`StampError`] for a bad placement, a footprint off the lattice or
    /// over columns a streaming grid lacks, no surface under the centre for
    /// [`StampBase::SurfaceUnderCentre`], or more than
    /// [`MAX_EDIT_VOLUME_CELLS`] cells to visit.
    pub fn new(
        grid: &Grid,
        stamp: &'a Stamp,
        placement: &StampPlacement,
    ) -> Result<StampPlan<'a>, StampError> {
        placement.validate()?;
        let columns = footprint_columns(stamp, placement);
        // One column of apron: the slope of the new surface reads neighbours.
        let apron = columns.expanded(1);
        let apron = CellBox::new(
            IVec3::new(apron.min.x, 0, apron.min.z),
            IVec3::new(apron.max.x, 1, apron.max.z),
        );
        check_on_lattice(&apron)?;
        check_resident(grid, &apron)?;
        let (edits, region) = match stamp.shape() {
            StampShape::Height(h) => {
                let boxes = plan_height(grid, stamp, h, placement, apron)?;
                let region = boxes
                    .iter()
                    .fold(CellBox::default(), |acc, b| acc.union(&b.region));
                (PlanEdits::Height(boxes), region)
            }
            StampShape::Cells(clip) => {
                let edit = plan_cells(grid, clip, placement, columns, apron)?;
                let region = edit.region;
                (PlanEdits::Cells(edit), region)
            }
        };
        Ok(StampPlan {
            stamp,
            placement: *placement,
            edits,
            region,
        })
    }

    /// Every cell the plan may change is in this box (empty when the plan
    /// changes nothing).
    pub fn region(&self) -> CellBox {
        self.region
    }

    /// Writes the plan's cells and reports them (one revision per chunk
    /// column edited; the report's revision is the last).
    ///
    /// # Errors
    /// [`StampError::Grid`] when the grid no longer holds the columns (it
    /// changed since the plan was made); nothing is written then.
    pub fn apply(&self, grid: &mut Grid) -> Result<EditReport, StampError> {
        if self.region.is_empty() {
            return Ok(EditReport::default());
        }
        check_resident(grid, &self.region)?;
        match &self.edits {
            PlanEdits::Height(boxes) => {
                let mut report = EditReport::default();
                for b in boxes {
                    let (x0, z0) = (b.region.min.x, b.region.min.z);
                    let w = (b.region.max.x - x0) as usize;
                    let part = grid.edit_region(b.region, |cell, old| {
                        let i = (cell.0.z - z0) as usize * w + (cell.0.x - x0) as usize;
                        match &b.columns[i] {
                            Some(c) => c.cell(cell.0.y, old),
                            None => old,
                        }
                    })?;
                    merge(&mut report, part);
                }
                Ok(report)
            }
            PlanEdits::Cells(edit) => {
                let StampShape::Cells(clip) = self.stamp.shape() else {
                    // `PlanEdits::Cells` is only made for cell stamps.
                    return Ok(EditReport::default());
                };
                let sampler = CellSampler::new(self.stamp, clip, &self.placement, edit);
                Ok(grid.edit_region(edit.region, |cell, old| sampler.cell(cell, old))?)
            }
        }
    }
}

/// Adds `part` (chunks disjoint from those in `report`) to `report`.
fn merge(report: &mut EditReport, part: EditReport) {
    if part.revision.is_some() {
        report.revision = part.revision;
    }
    report.changed.extend(part.changed);
    report.removed.extend(part.removed);
}

/// Presses `stamp` into `grid` at `placement` and reports the cells it
/// changed (not recorded in a history; see
/// [`crate::terrain::command::edit_command::EditCommand::Stamp`] for the undo step).
///
/// # Errors
/// As [`StampPlan::new`]; the grid is then unchanged.
pub fn apply_stamp(
    grid: &mut Grid,
    stamp: &Stamp,
    placement: &StampPlacement,
) -> Result<EditReport, StampError> {
    StampPlan::new(grid, stamp, placement)?.apply(grid)
}

/// The base height `B` of a placement (cells), from the column tops when it
/// is the surface under the centre.
fn resolve_base(
    placement: &StampPlacement,
    top_under_centre: impl FnOnce() -> Option<f64>,
) -> Result<f64, StampError> {
    match placement.base {
        StampBase::Cells(y) => Ok(y),
        StampBase::SurfaceUnderCentre => {
            top_under_centre().ok_or(StampError::NoSurfaceUnderCentre {
                x: placement.centre_xz_cells.x,
                z: placement.centre_xz_cells.y,
            })
        }
    }
}

/// The tops of the columns of `apron` (x fastest), read in parallel rows.
fn column_tops(grid: &Grid, apron: CellBox) -> Vec<Option<ColumnTop>> {
    let n = CHUNK_SIZE_CELLS;
    let lo = (apron.min.x.div_euclid(n), apron.min.z.div_euclid(n));
    let hi = (
        (apron.max.x - 1).div_euclid(n),
        (apron.max.z - 1).div_euclid(n),
    );
    let stacks = chunk_stacks(grid, lo, hi);
    let w = (apron.max.x - apron.min.x) as usize;
    let mut tops = vec![None; w * (apron.max.z - apron.min.z) as usize];
    tops.par_chunks_mut(w).enumerate().for_each(|(row, out)| {
        let z = apron.min.z + row as i32;
        for (i, top) in out.iter_mut().enumerate() {
            let x = apron.min.x + i as i32;
            *top = stacks
                .get(&(x.div_euclid(n), z.div_euclid(n)))
                .and_then(|s| column_top(s, x.rem_euclid(n), z.rem_euclid(n)));
        }
    });
    tops
}

/// The per-chunk-column edits of a height stamp.
fn plan_height(
    grid: &Grid,
    stamp: &Stamp,
    height: &HeightStamp,
    placement: &StampPlacement,
    apron: CellBox,
) -> Result<Vec<ColumnBox>, StampError> {
    let tops = column_tops(grid, apron);
    let w = (apron.max.x - apron.min.x) as usize;
    let d = (apron.max.z - apron.min.z) as usize;
    let at = |x: i32, z: i32| (z - apron.min.z) as usize * w + (x - apron.min.x) as usize;
    let c = placement.centre_xz_cells;
    let base = resolve_base(placement, || {
        tops[at(c.x.floor() as i32, c.y.floor() as i32)].map(|t| t.height_cells)
    })?;
    let targets = target_heights(stamp, height, placement, apron, &tops, base);
    // Each inner column's edit, from the target surface's slope.
    let mut edits: Vec<Option<ColumnEdit>> = vec![None; w * d];
    edits.par_chunks_mut(w).enumerate().for_each(|(row, out)| {
        if row == 0 || row + 1 == d {
            return;
        }
        for i in 1..w - 1 {
            let k = row * w + i;
            let (Some(top), Some(t)) = (tops[k], targets[k]) else {
                continue;
            };
            if t == top.height_cells {
                continue;
            }
            let mut n = [[t; 3]; 3];
            for (dz, line) in n.iter_mut().enumerate() {
                for (dx, v) in line.iter_mut().enumerate() {
                    if let Some(h) = targets[(row + dz - 1) * w + i + dx - 1] {
                        *v = h;
                    }
                }
            }
            let ramp = ramp_for_slope(slope_3x3(&n));
            // From under both bands (the old one at most
            // MAX_RAMP_CELLS / 2 below the old surface) to above both.
            let band_lo = (t - 0.5 - 0.5 * ramp).floor() as i32;
            let y_lo = band_lo.min(top.height_cells.floor() as i32 - 2) - 1;
            // Only a wet column needs its new top row (a short search).
            let water_top_cells = top.water_top_cells.and_then(|water| {
                water_over(
                    placement.mode,
                    top.height_cells,
                    Some(water),
                    (t, highest_solid_row(t, ramp)),
                )
            });
            // The band reaches over the water laid down, and over the old
            // water it replaces.
            let water_hi = water_top_cells
                .into_iter()
                .chain(top.water_top_cells)
                .fold(f64::from(top.top_row), f64::max);
            let y_hi = (t - 0.5 + 0.5 * ramp).ceil().max(water_hi.ceil()) as i32 + 2;
            out[i] = Some(ColumnEdit {
                y_lo,
                y_hi,
                target_cells: t,
                ramp_cells: ramp,
                water_top_cells,
                material: placement.material.unwrap_or(if top.material.is_solid() {
                    top.material
                } else {
                    Material::ROCK
                }),
            });
        }
    });
    group_by_chunk_column(&edits, apron)
}

/// The highest row to which [`ramp_occupancy`] of surface `t_cells` with
/// ramp `ramp_cells` gives solid.
fn highest_solid_row(t_cells: f64, ramp_cells: f64) -> i32 {
    let mut y = (t_cells + 0.5 * ramp_cells).floor() as i32;
    while y > (t_cells - 1.0).floor() as i32 && ramp_occupancy(t_cells, ramp_cells, y) == 0 {
        y -= 1;
    }
    y
}

/// The new surface height of every column of `apron` (`None` where the
/// column holds no solid; the old height outside the footprint).
fn target_heights(
    stamp: &Stamp,
    height: &HeightStamp,
    placement: &StampPlacement,
    apron: CellBox,
    tops: &[Option<ColumnTop>],
    base: f64,
) -> Vec<Option<f64>> {
    let w = (apron.max.x - apron.min.x) as usize;
    let cos_sin = placement.rotation_cos_sin();
    let half = placement.half_extents_cells(stamp);
    let size = stamp.footprint_size();
    let texels_per_sample = size.x.max(size.y) / (2.0 * placement.radius_cells);
    let c = placement.centre_xz_cells;
    let mut targets = vec![None; tops.len()];
    targets
        .par_chunks_mut(w)
        .enumerate()
        .for_each(|(row, out)| {
            let z = apron.min.z + row as i32;
            for (i, target) in out.iter_mut().enumerate() {
                let Some(top) = tops[row * w + i] else {
                    continue;
                };
                let x = apron.min.x + i as i32;
                let d = DVec2::new(f64::from(x) + 0.5, f64::from(z) + 0.5) - c;
                let uv = placement.to_stamp_uv(d, cos_sin, half);
                let weight = placement.falloff_weight(uv);
                let old = top.height_cells;
                *target = Some(if weight <= 0.0 {
                    old
                } else {
                    let h =
                        height.sample(uv.x, uv.y, texels_per_sample) * placement.height_scale_cells;
                    let full = placement.mode.surface_cells(old, h, base);
                    old + weight * (full - old)
                });
            }
        });
    targets
}

/// Splits the columns' edits into one box per chunk column (rows: the
/// union of its columns' windows) and checks the total against the limit.
fn group_by_chunk_column(
    edits: &[Option<ColumnEdit>],
    apron: CellBox,
) -> Result<Vec<ColumnBox>, StampError> {
    let n = CHUNK_SIZE_CELLS;
    let w = (apron.max.x - apron.min.x) as usize;
    let mut boxes: Vec<ColumnBox> = Vec::new();
    let mut volume: u64 = 0;
    let (cx0, cz0) = (apron.min.x.div_euclid(n), apron.min.z.div_euclid(n));
    let (cx1, cz1) = (
        (apron.max.x - 1).div_euclid(n),
        (apron.max.z - 1).div_euclid(n),
    );
    for cz in cz0..=cz1 {
        for cx in cx0..=cx1 {
            let x_lo = (cx * n).max(apron.min.x);
            let x_hi = (cx * n + n).min(apron.max.x);
            let z_lo = (cz * n).max(apron.min.z);
            let z_hi = (cz * n + n).min(apron.max.z);
            let (mut y_lo, mut y_hi) = (i32::MAX, i32::MIN);
            let mut columns = Vec::with_capacity(((x_hi - x_lo) * (z_hi - z_lo)) as usize);
            for z in z_lo..z_hi {
                for x in x_lo..x_hi {
                    let e = edits[(z - apron.min.z) as usize * w + (x - apron.min.x) as usize];
                    if let Some(e) = e {
                        y_lo = y_lo.min(e.y_lo);
                        y_hi = y_hi.max(e.y_hi);
                    }
                    columns.push(e);
                }
            }
            if y_lo >= y_hi {
                continue;
            }
            let region = CellBox::new(IVec3::new(x_lo, y_lo, z_lo), IVec3::new(x_hi, y_hi, z_hi));
            check_on_lattice(&region)?;
            volume = volume.saturating_add(region.volume_cells());
            if volume > MAX_EDIT_VOLUME_CELLS {
                return Err(StampError::FootprintTooLarge {
                    volume_cells: volume,
                    limit: MAX_EDIT_VOLUME_CELLS,
                });
            }
            boxes.push(ColumnBox { region, columns });
        }
    }
    Ok(boxes)
}

/// The box a cell stamp writes, checked against the lattice and the limit.
fn plan_cells(
    grid: &Grid,
    clip: &Clipboard,
    placement: &StampPlacement,
    columns: CellBox,
    apron: CellBox,
) -> Result<CellsEdit, StampError> {
    let c = placement.centre_xz_cells;
    let base_cells = resolve_base(placement, || {
        let tops = column_tops(grid, apron);
        let w = (apron.max.x - apron.min.x) as usize;
        let (x, z) = (c.x.floor() as i32, c.y.floor() as i32);
        tops[(z - apron.min.z) as usize * w + (x - apron.min.x) as usize].map(|t| t.height_cells)
    })?;
    let scale_y = placement.height_scale_cells / f64::from(clip.size().y);
    let y_lo = base_cells.floor();
    let y_hi = (base_cells + placement.height_scale_cells).ceil();
    let region = if placement.height_scale_cells > 0.0 {
        CellBox::new(
            IVec3::new(columns.min.x, y_lo as i32, columns.min.z),
            IVec3::new(columns.max.x, y_hi as i32, columns.max.z),
        )
    } else {
        CellBox::default()
    };
    check_on_lattice(&region)?;
    let volume_cells = region.volume_cells();
    if volume_cells > MAX_EDIT_VOLUME_CELLS {
        return Err(StampError::FootprintTooLarge {
            volume_cells,
            limit: MAX_EDIT_VOLUME_CELLS,
        });
    }
    Ok(CellsEdit {
        region,
        base_cells,
        scale_y,
    })
}

/// Reads a cell stamp under world cells (nearest cell) and combines it with
/// the terrain (the mode table of [`StampMode`]).
struct CellSampler<'a> {
    clip: &'a Clipboard,
    placement: &'a StampPlacement,
    cos_sin: (f64, f64),
    half: DVec2,
    base_cells: f64,
    scale_y: f64,
}

impl<'a> CellSampler<'a> {
    fn new(
        stamp: &Stamp,
        clip: &'a Clipboard,
        placement: &'a StampPlacement,
        edit: &CellsEdit,
    ) -> CellSampler<'a> {
        CellSampler {
            clip,
            placement,
            cos_sin: placement.rotation_cos_sin(),
            half: placement.half_extents_cells(stamp),
            base_cells: edit.base_cells,
            scale_y: edit.scale_y,
        }
    }

    /// The stamp cell under the centre of `cell` and the falloff weight
    /// there, or `None` outside the stamp.
    fn stamp_cell(&self, cell: CellCoord) -> Option<(Cell, f64)> {
        let p = cell.0.as_dvec3() + 0.5;
        let d = DVec2::new(p.x, p.z) - self.placement.centre_xz_cells;
        let uv = self.placement.to_stamp_uv(d, self.cos_sin, self.half);
        if uv.x.abs() > 1.0 || uv.y.abs() > 1.0 {
            return None;
        }
        let size = self.clip.size();
        let index = |t: f64, n: i32| (((t + 1.0) * 0.5 * f64::from(n)).floor() as i32).min(n - 1);
        let sy = ((p.y - self.base_cells) / self.scale_y).floor();
        if !(0.0..f64::from(size.y)).contains(&sy) {
            return None;
        }
        let local = IVec3::new(index(uv.x, size.x), sy as i32, index(uv.y, size.z));
        Some((self.clip.get(local), self.placement.falloff_weight(uv)))
    }

    /// The new value of `old` at `cell`.
    fn cell(&self, cell: CellCoord, old: Cell) -> Cell {
        let Some((stamp, weight)) = self.stamp_cell(cell) else {
            return old;
        };
        let material = |c: Cell| self.placement.material.unwrap_or(c.material());
        let mode = self.placement.mode;
        if mode == StampMode::Replace && weight >= 1.0 {
            return if stamp.material().is_solid() {
                Cell::new(material(stamp), stamp.occupancy())
            } else {
                stamp
            };
        }
        let (o, s) = (
            f64::from(old.solid_occupancy()),
            f64::from(stamp.solid_occupancy()),
        );
        let t = match mode {
            StampMode::Add => (o + s).min(255.0),
            StampMode::Subtract => (o - s).max(0.0),
            StampMode::RaiseTo => o.max(s),
            StampMode::LowerTo => o.min(s),
            StampMode::Replace => s,
        };
        let new = (o + weight * (t - o)).round();
        if new == o {
            return old;
        }
        if new > o {
            // Only a solid stamp cell raises (t > o needs s > 0). Add fills
            // a solid cell up in its own material; otherwise the stamp's.
            let m = if mode == StampMode::Add && old.material().is_solid() {
                old.material()
            } else {
                material(stamp)
            };
            return Cell::new(m, new as u8);
        }
        // Lowered: only solid cells have occupancy to lose (new < o).
        Cell::new(old.material(), new as u8)
    }
}
