//! Lays a path's profile into the cells: every column near the centreline
//! gets a target surface (the bed across the width, cut and fill banks
//! beside it), its cells are cut or filled to that height with a
//! fractional top cell like the rest of the terrain, the bed is painted
//! (a road band, a river's mud bed and sand banks, with dithered edges),
//! and a river's channel is filled with water up to its surface.
//!
//! Each column takes the profile of its nearest centreline sample, found
//! by rasterising a disc around every sample over the footprint (samples
//! are half a cell apart, so this costs `samples × reach²`, not a search
//! per column). Cross-section at distance `d` from the centreline with
//! `e = max(0, d − width/2)`, bed `B`, bank slope `s` and crest `C` (the
//! bed for a road, the water plus [`RIVER_FREEBOARD_CELLS`] for a river):
//!
//! ```text
//! inner(e) = B + s·e                        the cut bank / channel wall
//! levee(e) = C − s·max(0, e − (C − B)/s)    the fill bank falling away
//! target   = B                              on the bed (d ≤ width/2)
//!          = max(min(terrain, inner), min(inner, levee))   beside it
//! ```
//!
//! The bed columns' heights are then limited in the plane as well
//! ([`crate::terrain::path::bed`]), so tight turns do not leave steps steeper than
//! the profile between neighbouring columns.
//!
//! So a road's banks are the usual cut (down to the bed at slope `s`) and
//! fill (up to it); a river's channel walls always rise to the crest, so
//! the water is contained. Banks reach at most [`MAX_BANK_REACH_CELLS`]
//! beyond the bed; terrain that meets them farther out keeps a step there.
//!
//! The work is split per chunk column into boxes just tall enough for the
//! rows that change, each one [`Grid::edit_region`] recorded by the same
//! [`Recorder`], so the whole path is one undo step.

use glam::{DVec2, IVec2, IVec3};

use crate::terrain::editing::recorder::Recorder;
use crate::terrain::generation::column_fill::fractional_occupancy;
use crate::terrain::generation::noise::{hash2, unit_f64};
use crate::terrain::path::bed::limit_bed_slope;
use crate::terrain::path::profile::{Profile, RIVER_FREEBOARD_CELLS, profile_slope_limit};
use crate::terrain::path::spec::{PathError, PathMode, PathSpec};
use crate::terrain::path::spline::SampledCurve;
use crate::terrain::path::surface::SurfacePatch;
use crate::terrain::storage::cell::{Cell, Material};
use crate::terrain::storage::coords::{CHUNK_SIZE_CELLS, CellBox, CellCoord, check_on_lattice};
use crate::terrain::storage::grid::Grid;

/// Farthest a bank reaches beyond the bed, cells (64 studs).
pub const MAX_BANK_REACH_CELLS: f64 = 16.0;

/// Width of the dithered edge of a painted band, cells.
pub const DITHER_EDGE_CELLS: f64 = 1.5;

/// Rows below a column's surfaces that are rewritten too: the generator's
/// fractional band reaches this far down on steep slopes
/// (`generate::MAX_RAMP_CELLS`).
const RAMP_ROWS: i32 = 4;

/// Rows of a road's band or a river's bank material under the new surface.
const PAINT_ROWS: i32 = 2;

/// Least half width of the bed whose slope is limited in the plane,
/// cells: every column a centreline sample lies in is within it.
const MIN_BED_HALF_WIDTH_CELLS: f64 = 0.75;

/// Material of filled ground under a road or in a levee.
pub const FILL_MATERIAL: Material = Material::DIRT;

/// Material of a river's bed.
pub const RIVER_BED_MATERIAL: Material = Material::MUD;

/// Salt of the per-column dither hash.
const DITHER_SEED: u64 = 0x5041_5448_4449_5448;

/// What the carve changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CarveCounts {
    /// Cells whose solid occupancy went down.
    pub cut_cells: u64,
    /// Cells whose solid occupancy went up.
    pub fill_cells: u64,
    /// Union of the changed cells' bounds (global cells).
    pub touched: CellBox,
}

/// The cross-section of a path, cells.
#[derive(Clone, Copy, Debug)]
struct Section {
    mode: PathMode,
    half_width: f64,
    /// Bank slope, cells of height per cell of distance.
    bank_slope: f64,
    /// Steepest bed slope, cells per cell (the profile's limit).
    bed_slope: f64,
    material: Material,
}

impl Section {
    fn of(spec: &PathSpec) -> Section {
        Section {
            mode: spec.mode,
            half_width: 0.5 * spec.width_cells(),
            bank_slope: spec.bank_slope_deg.to_radians().tan(),
            bed_slope: profile_slope_limit(spec.max_grade_deg),
            material: spec.material,
        }
    }
}

/// How far from the centreline a path can change cells, cells: half its
/// width, a river's channel wall (water depth plus freeboard at the bank
/// slope) and [`MAX_BANK_REACH_CELLS`].
pub fn reach_cells(spec: &PathSpec) -> f64 {
    let s = Section::of(spec);
    let wall = match spec.mode {
        PathMode::River => (spec.depth_studs / 4.0 + RIVER_FREEBOARD_CELLS) / s.bank_slope,
        _ => 0.0,
    };
    s.half_width + wall + MAX_BANK_REACH_CELLS + 1.0
}

/// What one column becomes.
#[derive(Clone, Copy, Debug)]
struct ColumnPlan {
    /// Surface height after the carve, cells.
    target: f64,
    /// Surface height before, cells.
    old: f64,
    /// Water surface to fill up to, cells (`NEG_INFINITY` for none).
    water: f64,
    /// Material of the top rows, if painted.
    paint: Option<Material>,
    /// Rows `lo..hi` may change.
    lo: i32,
    hi: i32,
}

impl ColumnPlan {
    /// The new value of the cell at row `y` (old value `old`).
    fn cell(&self, y: i32, old: Cell) -> Cell {
        if y < self.lo || y >= self.hi {
            return old;
        }
        // The painted band: the top two rows under the new surface.
        let paint = self
            .paint
            .filter(|_| y >= self.target.ceil() as i32 - PAINT_ROWS);
        let below_both = (y as f64) < self.target.min(self.old).floor();
        if below_both {
            // Under both surfaces: only the old fractional band is made
            // solid (and the band painted); caves stay.
            return if old.material().is_solid() {
                Cell::full(paint.unwrap_or(old.material()))
            } else {
                old
            };
        }
        let solid = fractional_occupancy(self.target, y);
        if solid > 0 {
            let material = paint.unwrap_or(if old.material().is_solid() {
                old.material()
            } else {
                FILL_MATERIAL
            });
            return Cell::new(material, solid);
        }
        if (y as f64) < self.water {
            let water = fractional_occupancy(self.water, y).max(old.water_occupancy());
            return Cell::new(Material::WATER, water);
        }
        if old.material().is_solid() {
            Cell::EMPTY
        } else {
            old
        }
    }
}

/// Nearest centreline sample of every column of a rectangle, within
/// `reach` cells: `(sample index, distance)` per column (x fastest).
struct Footprint {
    min: IVec2,
    size: IVec2,
    nearest: Vec<Option<(u32, f32)>>,
}

impl Footprint {
    fn rasterise(curve: &SampledCurve, min: IVec2, size: IVec2, reach: f64) -> Footprint {
        let mut nearest = vec![None; (size.x as usize) * (size.y as usize)];
        for (i, p) in curve.points.iter().enumerate() {
            let lo = ((*p - reach - 0.5).floor().as_ivec2() - min).max(IVec2::ZERO);
            let hi = ((*p + reach - 0.5).ceil().as_ivec2() - min).min(size - 1);
            for z in lo.y..=hi.y {
                for x in lo.x..=hi.x {
                    let centre = (min + IVec2::new(x, z)).as_dvec2() + 0.5;
                    let d = centre.distance(*p);
                    if d > reach {
                        continue;
                    }
                    let slot = &mut nearest[(z as usize) * (size.x as usize) + x as usize];
                    if slot.is_none_or(|(_, best)| (d as f32) < best) {
                        *slot = Some((i as u32, d as f32));
                    }
                }
            }
        }
        Footprint { min, size, nearest }
    }
}

/// The dither value of column `(x, z)`, in `[0, 1)`.
fn dither(column: IVec2) -> f64 {
    unit_f64(hash2(DITHER_SEED, i64::from(column.x), i64::from(column.y)))
}

/// True when a band ending `edge` cells from the centreline covers a
/// column at distance `d`, dithered over [`DITHER_EDGE_CELLS`].
fn in_band(column: IVec2, d: f64, edge: f64) -> bool {
    dither(column) < (0.5 + (edge - d) / DITHER_EDGE_CELLS).clamp(0.0, 1.0)
}

/// The plan of one column at distance `d` from sample `i`, or `None` when
/// it stays as it is.
fn plan_column(
    section: &Section,
    profile: &Profile,
    column: IVec2,
    old: f64,
    (i, d): (usize, f64),
    bed_column: Option<f64>,
) -> Option<ColumnPlan> {
    let bed = profile.bed_cells[i];
    let water = profile.water_cells.get(i).copied();
    let crest = water.map_or(bed, |w| w + RIVER_FREEBOARD_CELLS);
    let s = section.bank_slope;
    let e = (d - section.half_width).max(0.0);
    let run = (crest - bed) / s;
    let target = if let Some(b) = bed_column {
        b
    } else if d <= section.half_width {
        bed
    } else {
        let inner = bed + s * e;
        let levee = crest - s * (e - run).max(0.0);
        old.min(inner).max(inner.min(levee))
    };
    let (paint, water) = match section.mode {
        PathMode::River => {
            let wet = e <= run && water.is_some_and(|w| target < w);
            let paint = if in_band(column, d, section.half_width) {
                Some(RIVER_BED_MATERIAL)
            } else if in_band(column, d, section.half_width + run + 1.0) {
                Some(section.material)
            } else {
                None
            };
            (paint, if wet { water } else { None })
        }
        _ => (
            in_band(column, d, section.half_width).then_some(section.material),
            None,
        ),
    };
    let water = water.unwrap_or(f64::NEG_INFINITY);
    if (target - old).abs() < 0.5 / 255.0 && paint.is_none() && water == f64::NEG_INFINITY {
        return None;
    }
    let top = target.max(old).max(water);
    Some(ColumnPlan {
        target,
        old,
        water,
        paint,
        lo: target.min(old).floor() as i32 - RAMP_ROWS,
        hi: top.ceil() as i32 + 1,
    })
}

/// Carves `profile` along `curve` (cells) into `grid`, recording every
/// change in `rec`. `patch` is the surface before the carve and must cover
/// the curve's points `±` [`reach_cells`]; columns without terrain stay
/// empty.
///
/// # Errors
/// [`PathError::Grid`] when a box leaves the lattice or (streaming) a
/// column is not resident, checked before any cell changes.
pub fn carve(
    grid: &mut Grid,
    rec: &mut Recorder,
    patch: &SurfacePatch,
    curve: &SampledCurve,
    profile: &Profile,
    spec: &PathSpec,
) -> Result<CarveCounts, PathError> {
    let section = Section::of(spec);
    let footprint = Footprint::rasterise(curve, patch.min(), patch.size(), reach_cells(spec));
    let plans = plan_columns(&section, profile, patch, &footprint);
    let boxes = chunk_column_boxes(&footprint, &plans);
    for b in &boxes {
        check_on_lattice(b).map_err(crate::terrain::storage::grid::GridError::from)?;
        let missing = grid.missing_columns(b);
        if !missing.is_empty() {
            return Err(crate::terrain::storage::grid::GridError::NotResident(missing).into());
        }
    }
    let mut counts = CarveCounts::default();
    let width = footprint.size.x;
    for b in boxes {
        let plan_at = |c: CellCoord| {
            let p = IVec2::new(c.0.x, c.0.z) - footprint.min;
            plans[(p.y * width + p.x) as usize]
        };
        let report = rec.record(grid, b, |g| {
            g.edit_region(b, |c, old| {
                let Some(plan) = plan_at(c) else {
                    return old;
                };
                let new = plan.cell(c.0.y, old);
                let (was, now) = (old.solid_occupancy(), new.solid_occupancy());
                if now < was {
                    counts.cut_cells += 1;
                } else if now > was {
                    counts.fill_cells += 1;
                }
                new
            })
        })?;
        if report.is_change() {
            counts.touched = counts.touched.union(&report.bounds());
        }
    }
    Ok(counts)
}

/// The plan of every footprint column (x fastest), `None` where nothing
/// changes or there is no terrain.
fn plan_columns(
    section: &Section,
    profile: &Profile,
    patch: &SurfacePatch,
    footprint: &Footprint,
) -> Vec<Option<ColumnPlan>> {
    let bed_half_width = section.half_width.max(MIN_BED_HALF_WIDTH_CELLS);
    let mut beds: Vec<Option<f64>> = footprint
        .nearest
        .iter()
        .map(|n| {
            n.and_then(|(i, d)| {
                (f64::from(d) <= bed_half_width).then(|| profile.bed_cells[i as usize])
            })
        })
        .collect();
    limit_bed_slope(&mut beds, footprint.size, section.bed_slope);
    let mut plans = vec![None; footprint.nearest.len()];
    for z in 0..footprint.size.y {
        for x in 0..footprint.size.x {
            let k = (z * footprint.size.x + x) as usize;
            let Some((i, d)) = footprint.nearest[k] else {
                continue;
            };
            let column = footprint.min + IVec2::new(x, z);
            let Some(old) = patch.height_cells(column) else {
                continue;
            };
            plans[k] = plan_column(
                section,
                profile,
                column,
                old,
                (i as usize, f64::from(d)),
                beds[k],
            );
        }
    }
    plans
}

/// One box per chunk column holding planned columns: their xz bounds and
/// the union of their row ranges.
fn chunk_column_boxes(footprint: &Footprint, plans: &[Option<ColumnPlan>]) -> Vec<CellBox> {
    let mut boxes: rustc_hash::FxHashMap<IVec2, CellBox> = rustc_hash::FxHashMap::default();
    for z in 0..footprint.size.y {
        for x in 0..footprint.size.x {
            let Some(plan) = plans[(z * footprint.size.x + x) as usize] else {
                continue;
            };
            let column = footprint.min + IVec2::new(x, z);
            let key = column.div_euclid(IVec2::splat(CHUNK_SIZE_CELLS));
            let b = CellBox::new(
                IVec3::new(column.x, plan.lo, column.y),
                IVec3::new(column.x + 1, plan.hi, column.y + 1),
            );
            boxes
                .entry(key)
                .and_modify(|acc| *acc = acc.union(&b))
                .or_insert(b);
        }
    }
    let mut out: Vec<CellBox> = boxes.into_values().collect();
    out.sort_by_key(|b| (b.min.z, b.min.x));
    out
}

/// Distance from `p` to the nearest centreline sample (cells), brute
/// force: for tests and measurements.
pub fn distance_to_curve(curve: &SampledCurve, p: DVec2) -> f64 {
    curve
        .points
        .iter()
        .map(|q| q.distance(p))
        .fold(f64::INFINITY, f64::min)
}
