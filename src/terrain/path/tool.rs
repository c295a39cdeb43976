//! The path tool end to end: a [`PathSpec`] is checked, a route
//! is searched when only endpoints are given, the spline through the
//! control points is sampled every half cell, the profile is built over
//! the surface it crosses, the cells are carved (one undo step through the
//! caller's [`Recorder`]) and the result is measured on the cells.
//! [`crate::terrain::command::edit_command::EditCommand::Path`] runs it for the window and
//! scripts alike.

use glam::{DVec2, IVec2, IVec3};

use crate::terrain::editing::recorder::Recorder;
use crate::terrain::path::carve::{CarveCounts, carve, reach_cells};
use crate::terrain::path::profile::{Profile, river_profile, road_profile};
use crate::terrain::path::route::find_route;
use crate::terrain::path::spec::{
    MAX_PATH_LENGTH_STUDS, PathError, PathMode, PathReport, PathSpec,
};
use crate::terrain::path::spline::{SampledCurve, sample_spline};
use crate::terrain::path::surface::{SurfacePatch, column_of};
use crate::terrain::storage::coords::{CELL_SIZE_STUDS, CellBox, check_on_lattice};
use crate::terrain::storage::grid::{Grid, GridError};

/// Spacing of the centreline samples, cells (half a cell).
pub const SAMPLE_SPACING_CELLS: f64 = 0.5;

/// Least radius the road's terrain is smoothed over along the path, cells.
const MIN_SMOOTH_RADIUS_CELLS: f64 = 1.0;

/// What [`apply_path`] did: the report and the cells it touched.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathOutcome {
    /// The figures of the applied path.
    pub report: PathReport,
    /// Union of the changed cells' bounds (global cells); empty when no
    /// cell changed.
    pub touched: CellBox,
}

/// Applies `spec` to `grid`, recording every change in `rec` (commit it
/// as one step).
///
/// # Errors
/// [`PathError`] for invalid input ([`PathSpec::validate`]), no terrain
/// under the path, no route, or a grid that refuses the area (off the
/// lattice, streaming columns not resident). The grid is then unchanged
/// (every check runs before the first cell is written).
pub fn apply_path(
    grid: &mut Grid,
    rec: &mut Recorder,
    spec: &PathSpec,
) -> Result<PathOutcome, PathError> {
    spec.validate()?;
    let control = match spec.mode {
        PathMode::Route => {
            let ends = spec.points_xz_cells();
            find_route(grid, ends[0], ends[1], spec.max_grade_deg)?
        }
        _ => spec.points_xz_cells(),
    };
    let curve = sample_spline(&control, SAMPLE_SPACING_CELLS);
    let length_studs = curve.length() * f64::from(CELL_SIZE_STUDS);
    if length_studs > MAX_PATH_LENGTH_STUDS {
        return Err(PathError::TooLong { length_studs });
    }
    let (min, max) = footprint_rect(&curve, reach_cells(spec));
    let area = CellBox::new(IVec3::new(min.x, 0, min.y), IVec3::new(max.x, 1, max.y));
    check_on_lattice(&area).map_err(GridError::from)?;
    let missing = grid.missing_columns(&area);
    if !missing.is_empty() {
        return Err(GridError::NotResident(missing).into());
    }
    let before = SurfacePatch::read(grid, min, max);
    let terrain = terrain_along(&before, &curve)?;
    let profile = build_profile(spec, &before, &terrain, &curve);
    // A river that met standing water ends there (see `river_profile`).
    let curve = curve.truncated(profile.bed_cells.len());
    let length_studs = curve.length() * f64::from(CELL_SIZE_STUDS);
    let counts: CarveCounts = carve(grid, rec, &before, &curve, &profile, spec)?;
    let after = SurfacePatch::read(grid, min, max);
    let (max_grade_deg, rise_cells) = measure(&after, &curve);
    Ok(PathOutcome {
        report: PathReport {
            mode: spec.mode,
            length_studs,
            max_grade_deg,
            grade_cap_deg: spec.max_grade_deg,
            cut_cells: counts.cut_cells,
            fill_cells: counts.fill_cells,
            max_upstream_rise_studs: match spec.mode {
                PathMode::River => Some(rise_cells * f64::from(CELL_SIZE_STUDS)),
                PathMode::Road | PathMode::Route => None,
            },
        },
        touched: counts.touched,
    })
}

/// The columns `min..max` within `reach` cells of the curve's samples.
pub fn footprint_rect(curve: &SampledCurve, reach: f64) -> (IVec2, IVec2) {
    let (lo, hi) = curve.points.iter().fold(
        (DVec2::splat(f64::INFINITY), DVec2::splat(f64::NEG_INFINITY)),
        |(lo, hi), p| (lo.min(*p), hi.max(*p)),
    );
    let lo = (lo - reach - 1.0).floor();
    let hi = (hi + reach + 1.0).ceil();
    (
        IVec2::new(lo.x as i32, lo.y as i32),
        IVec2::new(hi.x as i32, hi.y as i32),
    )
}

/// The terrain height below every sample, cells.
///
/// # Errors
/// [`PathError::NoSurface`] at the first sample without terrain.
fn terrain_along(patch: &SurfacePatch, curve: &SampledCurve) -> Result<Vec<f64>, PathError> {
    curve
        .points
        .iter()
        .map(|p| {
            patch.height_at(*p).ok_or(PathError::NoSurface {
                x_studs: p.x * f64::from(CELL_SIZE_STUDS),
                z_studs: p.y * f64::from(CELL_SIZE_STUDS),
            })
        })
        .collect()
}

/// The water standing over the column of every sample before the carve,
/// cells.
fn standing_water_along(patch: &SurfacePatch, curve: &SampledCurve) -> Vec<Option<f64>> {
    curve
        .points
        .iter()
        .map(|p| patch.water_cells(column_of(*p)))
        .collect()
}

fn build_profile(
    spec: &PathSpec,
    patch: &SurfacePatch,
    terrain: &[f64],
    curve: &SampledCurve,
) -> Profile {
    let arc = &curve.arc;
    match spec.mode {
        PathMode::River => river_profile(
            terrain,
            &standing_water_along(patch, curve),
            arc,
            spec.depth_studs / f64::from(CELL_SIZE_STUDS),
            spec.max_grade_deg,
        ),
        _ => road_profile(
            terrain,
            arc,
            (0.5 * spec.width_cells()).max(MIN_SMOOTH_RADIUS_CELLS),
            spec.max_grade_deg,
        ),
    }
}

/// Measures the carved cells along the centreline: the steepest grade
/// between consecutive columns it crosses (degrees), and the largest rise
/// of the water surface from one such column to the next (cells; columns
/// without water are skipped).
pub fn measure(patch: &SurfacePatch, curve: &SampledCurve) -> (f64, f64) {
    let mut columns: Vec<IVec2> = Vec::new();
    for p in &curve.points {
        let c = column_of(*p);
        if columns.last() != Some(&c) {
            columns.push(c);
        }
    }
    let mut max_grade = 0.0f64;
    let mut max_rise = 0.0f64;
    let mut last_water: Option<f64> = None;
    for w in columns.windows(2) {
        let run = (w[1] - w[0]).as_dvec2().length();
        if let (Some(a), Some(b)) = (patch.height_cells(w[0]), patch.height_cells(w[1])) {
            max_grade = max_grade.max(((b - a).abs() / run).atan().to_degrees());
        }
    }
    for c in &columns {
        if let Some(water) = patch.water_cells(*c) {
            if let Some(prev) = last_water {
                max_rise = max_rise.max(water - prev);
            }
            last_water = Some(water);
        }
    }
    (max_grade, max_rise)
}
