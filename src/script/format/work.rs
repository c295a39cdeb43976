//! The work estimate a script must fit in
//! ([`MAX_SCRIPT_WORK_CELLS`](super::limits::MAX_SCRIPT_WORK_CELLS)): cells
//! of brush work per entry, with paste, undo and redo priced from the
//! largest copy and the largest entry.

use crate::terrain::command::edit_command::EditCommand;
use crate::terrain::path::carve::reach_cells;
use crate::terrain::path::route::ROUTE_MARGIN_CELLS;
use crate::terrain::path::spec::{PathMode, PathSpec};
use crate::terrain::path::spline::chord_length;
use crate::terrain::storage::coords::CELL_SIZE_STUDS;

use super::limits::{APPLICATION_COST_CELLS, COPY_CELL_COST};
use super::script::{Script, StrokeAction, StrokeCentre};

/// The length of each segment of a brush stroke's path, studs.
fn segment_lengths_studs(path: &[StrokeCentre]) -> impl Iterator<Item = f64> + '_ {
    path.windows(2).map(|w| match (w[0], w[1]) {
        (StrokeCentre::World(a), StrokeCentre::World(c)) => a.distance(c),
        (StrokeCentre::OnSurface { x: ax, z: az }, StrokeCentre::OnSurface { x, z }) => {
            (x - ax).hypot(z - az)
        }
        // Mixed kinds only come from hand-built strokes; no length counted.
        _ => 0.0,
    })
}

/// A brush stroke's applications: in all, and on its longest segment.
pub(super) fn stroke_applications(action: &StrokeAction) -> Option<(f64, f64)> {
    let StrokeAction::Brush(b) = action else {
        return None;
    };
    let radius = f64::from(b.brush.radius_cells);
    let spacing_studs = f64::from(b.spacing_fraction) * radius * f64::from(CELL_SIZE_STUDS);
    let (mut total, mut longest) = (1.0, 0.0f64);
    for length in segment_lengths_studs(&b.path) {
        let n = length / spacing_studs;
        total += n;
        longest = longest.max(n);
    }
    Some((total, longest))
}

/// Estimated work of one entry whose paste and history costs are not yet
/// known: `(cells, brush applications)`. A brush application costs its box,
/// `(2 × radius)³` cells, plus its fixed cost ([`APPLICATION_COST_CELLS`]).
fn own_work(action: &StrokeAction) -> (f64, f64) {
    match action {
        StrokeAction::Brush(b) => {
            let radius = f64::from(b.brush.radius_cells);
            let (applications, _) = stroke_applications(action).unwrap_or((1.0, 0.0));
            (
                applications * ((2.0 * radius).powi(3) + APPLICATION_COST_CELLS),
                applications,
            )
        }
        StrokeAction::Command(EditCommand::Generate { region }) => {
            (region.volume_cells() as f64, 0.0)
        }
        StrokeAction::Command(
            EditCommand::Fill { region, .. }
            | EditCommand::Clear { region, .. }
            | EditCommand::Copy { region },
        ) => (region.volume_cells() as f64 * COPY_CELL_COST, 0.0),
        StrokeAction::Command(EditCommand::Path(spec)) => (path_work_cells(spec), 0.0),
        StrokeAction::Command(EditCommand::Stamp { stamp, placement }) => {
            (placement.estimated_cells(stamp), 0.0)
        }
        StrokeAction::Command(_) => (0.0, 0.0),
    }
}

/// Rows of an average column a path rewrites, for the work estimate.
const PATH_ROWS_PER_COLUMN: f64 = 48.0;

/// Brush-cell cost of one route search node (16 edges, 3 height samples each).
const ROUTE_NODE_COST: f64 = 16.0;

/// Estimated work of a path: its footprint (length plus the reach at both
/// ends, times twice the reach) times [`PATH_ROWS_PER_COLUMN`]; a route
/// counts its search area (one node every 2 cells) and a path half as
/// long again as its span.
fn path_work_cells(spec: &PathSpec) -> f64 {
    let span_cells = chord_length(&spec.points_xz_studs) / f64::from(CELL_SIZE_STUDS);
    let reach = reach_cells(spec);
    let (length, search) = match spec.mode {
        PathMode::Route => {
            let side = span_cells + 2.0 * ROUTE_MARGIN_CELLS.max(0.5 * span_cells);
            (1.5 * span_cells, side * side / 4.0 * ROUTE_NODE_COST)
        }
        _ => (span_cells, 0.0),
    };
    (length + 2.0 * reach) * 2.0 * reach * PATH_ROWS_PER_COLUMN + search
}

/// A script's estimated work (see
/// [`MAX_SCRIPT_WORK_CELLS`](super::limits::MAX_SCRIPT_WORK_CELLS)): total cells,
/// and the index, cells and brush applications of the costliest entry.
pub fn estimate_work<'a>(
    actions: impl Iterator<Item = &'a StrokeAction> + Clone,
) -> (f64, usize, f64, f64) {
    let mut largest_copy = 0.0f64;
    let mut largest = 0.0f64;
    for action in actions.clone() {
        let (cells, _) = own_work(action);
        largest = largest.max(cells);
        if let StrokeAction::Command(EditCommand::Copy { .. }) = action {
            largest_copy = largest_copy.max(cells);
        }
    }
    // A paste writes at most the largest box copied (`largest_copy`, a copy
    // cost already); an undo or redo copies back at most the cells of the
    // largest step.
    let undo_cells = largest * COPY_CELL_COST;
    let mut total = 0.0;
    let mut heaviest = (0usize, 0.0f64, 0.0f64);
    for (index, action) in actions.enumerate() {
        let (cells, applications) = match action {
            StrokeAction::Command(EditCommand::Paste { .. }) => (largest_copy, 0.0),
            StrokeAction::Command(EditCommand::Undo | EditCommand::Redo) => (undo_cells, 0.0),
            _ => own_work(action),
        };
        total += cells;
        if cells > heaviest.1 {
            heaviest = (index, cells, applications);
        }
    }
    (total, heaviest.0, heaviest.1, heaviest.2)
}

impl Script {
    /// The estimated cells of brush work of all entries, at most
    /// [`MAX_SCRIPT_WORK_CELLS`](super::limits::MAX_SCRIPT_WORK_CELLS) for a
    /// parsed script.
    pub fn estimated_work_cells(&self) -> f64 {
        estimate_work(self.strokes.iter().map(|s| &s.action)).0
    }
}
