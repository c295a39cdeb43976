//! Runs parsed script entries on a grid: brush strokes sampled along their
//! path, region operations, undo and redo, each recorded as one history step.
//! Shared by the headless replay (which also meshes and draws) and by
//! `--save`/export runs, so both produce the same world. Commands go through
//! the same [`EditSession`] as the window's panel, strokes through the same
//! [`StrokeInProgress`] as the window's brush.

use glam::DVec3;

use crate::terrain::command::brush_stroke::{BrushStrokeError, StrokeInProgress};
use crate::terrain::command::document_action::DeriveStats;
use crate::terrain::command::edit_command::{CommandError, CommandOutcome, EditSession};
use crate::terrain::command::history::History;
use crate::terrain::editing::brush::{BrushMode, FlattenPlane};
use crate::terrain::editing::region::Clipboard;
use crate::terrain::editing::stroke::LockPlane;
use crate::terrain::generation::generate::GeneratorSettings;
use crate::terrain::path::spec::PathReport;
use crate::terrain::storage::coords::CellBox;
use crate::terrain::storage::grid::Grid;

use super::format::{BrushStroke, StrokeAction, StrokeCentre};
use super::surface::SurfaceDrops;

/// Why a script entry could not be applied. The grid is unchanged by the
/// failing entry.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A `*_xz` point found no surface (or lock plane) below it.
    #[error("no terrain below x={x}, z={z}")]
    NoSurface {
        /// World x, studs.
        x: f64,
        /// World z, studs.
        z: f64,
    },
    /// The brush or the stroke rejected an application.
    #[error(transparent)]
    Stroke(#[from] BrushStrokeError),
    /// A region or history command was rejected.
    #[error(transparent)]
    Command(#[from] CommandError),
    /// A chunk column the entry needs could not be loaded.
    #[error(transparent)]
    Load(#[from] crate::terrain::streaming::column_source::SourceError),
}

impl RunError {
    /// The chunk columns the entry needs but a streaming grid does not hold
    /// (spec §12): the entry changed nothing and applies once they are loaded.
    pub fn missing_columns(&self) -> Option<&[crate::terrain::ColumnCoord]> {
        match self {
            RunError::Stroke(e) => e.missing_columns(),
            RunError::Command(e) => e.missing_columns(),
            _ => None,
        }
    }
}

/// `"document"` in `--stats-json`: the world document (spec §14) at the end
/// of a replay and every re-derivation its entries caused.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct DocumentSummary {
    /// Layers in the stack.
    pub layers: usize,
    /// Operations in all layers.
    pub operations: usize,
    /// Visible layers.
    pub visible_layers: usize,
    /// Each re-derivation, in order (moving, editing, hiding, deleting, or
    /// an operation added under others).
    pub rederives: Vec<DeriveStats>,
    /// The last one.
    pub last_rederive: Option<DeriveStats>,
    /// Every path operation still in the document, by id, with the
    /// figures of its latest application (re-graded after a base change).
    pub paths: Vec<DocumentPath>,
    /// Operations the last re-derivation skipped, with why (a route with
    /// no way through the new ground).
    pub failed: Vec<FailedOperation>,
}

/// An operation a re-derivation could not apply, in `--stats-json`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FailedOperation {
    /// The operation's id.
    pub operation: u32,
    /// Why.
    pub error: String,
}

/// One path of the document in `--stats-json`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DocumentPath {
    /// The operation's id.
    pub operation: u32,
    /// Its figures.
    #[serde(flatten)]
    pub report: crate::terrain::path::spec::PathReport,
}

/// Script execution state: the edit session (history, clipboard,
/// generator) and the surface `*_xz` points are dropped onto.
pub struct ScriptRunner {
    /// History, clipboard and generator, as in the window.
    pub session: EditSession,
    surface: Option<SurfaceDrops>,
    paths: Vec<PathReport>,
    /// The world's footprint (cells, x and z): brush applications wholly
    /// outside it are skipped (`None`: none is).
    footprint: Option<CellBox>,
    /// Brush applications skipped for lying wholly outside the footprint.
    skipped_applications: usize,
    /// How long the replay's waits let nothing progress before giving up.
    stall_limit: std::time::Duration,
    /// Every re-derivation of the document the entries caused.
    rederives: Vec<DeriveStats>,
}

impl ScriptRunner {
    /// A runner with an empty history of `budget_bytes`; `generator` serves
    /// `generate`; `surface` (the `*_xz` points dropped onto the grid's
    /// full-detail surface when the script began, see [`SurfaceDrops`])
    /// serves `*_xz` points.
    pub fn new(
        budget_bytes: usize,
        generator: Option<GeneratorSettings>,
        surface: Option<SurfaceDrops>,
    ) -> ScriptRunner {
        ScriptRunner {
            session: EditSession::new(budget_bytes, generator),
            surface,
            paths: Vec::new(),
            footprint: None,
            skipped_applications: 0,
            stall_limit: crate::pipeline::stall_watch::DEFAULT_STALL_LIMIT,
            rederives: Vec::new(),
        }
    }

    /// How long the replay waits for meshing and streaming while nothing
    /// progresses (default [`crate::pipeline::stall_watch::DEFAULT_STALL_LIMIT`]).
    pub fn stall_limit(&self) -> std::time::Duration {
        self.stall_limit
    }

    /// Sets [`ScriptRunner::stall_limit`].
    pub fn set_stall_limit(&mut self, limit: std::time::Duration) {
        self.stall_limit = limit;
    }

    /// Skips brush applications wholly outside `footprint` (the world's
    /// cells; only x and z count): they could change nothing of the world.
    pub fn set_footprint(&mut self, footprint: CellBox) {
        self.footprint = Some(footprint);
    }

    /// The runner for `script` on `grid`: its history budget, `generator`
    /// for `generate` entries, and its `*_xz` points dropped onto the
    /// full-detail surface of `grid` now, as the script begins.
    /// The world's footprint is the generator's square, else (a world held
    /// whole) the chunks `grid` holds; brush applications wholly outside it
    /// are skipped.
    pub fn for_script(
        script: &super::format::Script,
        grid: &Grid,
        generator: Option<GeneratorSettings>,
    ) -> ScriptRunner {
        let footprint = match &generator {
            Some(g) => {
                let side = i32::try_from(g.size_cells).unwrap_or(i32::MAX);
                Some(CellBox::new(
                    glam::IVec3::new(0, i32::MIN / 2, 0),
                    glam::IVec3::new(side, i32::MAX / 2, side),
                ))
            }
            None if !grid.is_streaming() => grid.bounds_cells(),
            None => None,
        };
        let mut runner = ScriptRunner::new(
            script.history_budget_bytes,
            generator,
            script
                .needs_surface()
                .then(|| SurfaceDrops::resolve(grid, script.surface_points())),
        );
        runner.footprint = footprint;
        if !grid.is_streaming() {
            runner.session.enable_document(grid);
        }
        runner
    }

    /// Brush applications skipped so far for lying wholly outside the
    /// world's footprint.
    pub fn skipped_applications(&self) -> usize {
        self.skipped_applications
    }

    /// The undo history every entry is recorded in.
    pub fn history(&self) -> &History {
        &self.session.history
    }

    /// The report of every path entry applied so far, in order (`"paths"`
    /// in `--stats-json`).
    pub fn path_reports(&self) -> &[PathReport] {
        &self.paths
    }

    /// Applies one entry; returns true when the grid changed.
    ///
    /// # Errors
    /// [`RunError`]; the grid is unchanged by a failing entry.
    pub fn run(&mut self, grid: &mut Grid, action: &StrokeAction) -> Result<bool, RunError> {
        let derivations = self.session.document.derivations;
        let changed = self.run_entry(grid, action);
        if self.session.document.derivations != derivations
            && let Some(stats) = self.session.document.last_derive
        {
            self.rederives.push(stats);
        }
        changed
    }

    /// The world document at the end (`None` when edits were not recorded
    /// in one: a streaming world).
    pub fn document_summary(&self) -> Option<DocumentSummary> {
        let doc = &self.session.document;
        doc.is_enabled().then(|| DocumentSummary {
            layers: doc.stack.layers().len(),
            operations: doc.stack.operation_count(),
            visible_layers: doc.stack.layers().iter().filter(|l| l.visible).count(),
            rederives: self.rederives.clone(),
            last_rederive: self.rederives.last().copied(),
            paths: doc
                .path_reports
                .iter()
                .filter(|(id, _)| doc.stack.operation(**id).is_some())
                .map(|(id, r)| DocumentPath {
                    operation: id.0,
                    report: *r,
                })
                .collect(),
            failed: doc
                .last_failures
                .iter()
                .map(|(id, e)| FailedOperation {
                    operation: id.0,
                    error: e.to_string(),
                })
                .collect(),
        })
    }

    fn run_entry(&mut self, grid: &mut Grid, action: &StrokeAction) -> Result<bool, RunError> {
        match action {
            StrokeAction::Brush(stroke) => self.brush_stroke(grid, stroke),
            StrokeAction::Command(command) => {
                let outcome = self.session.apply(grid, command)?;
                if let CommandOutcome::PathApplied { report, .. } = outcome {
                    self.paths.push(report);
                }
                Ok(outcome.changed_grid())
            }
        }
    }

    /// A `*_xz` point dropped onto the initial surface: point and normal.
    fn drop_onto_surface(&self, x: f64, z: f64) -> Result<(DVec3, DVec3), RunError> {
        self.surface
            .as_ref()
            .and_then(|s| s.drop_onto(x, z))
            .ok_or(RunError::NoSurface { x, z })
    }

    /// One brush stroke as one undo step; a stroke that fails midway is
    /// reverted.
    fn brush_stroke(&mut self, grid: &mut Grid, stroke: &BrushStroke) -> Result<bool, RunError> {
        self.session.check_editable()?;
        let mut active: Option<StrokeInProgress> = None;
        let result = self.paint_path(grid, stroke, &mut active);
        match (result, active) {
            (Ok(()), Some(active)) => {
                self.skipped_applications += active.skipped();
                Ok(self.session.finish_stroke(active, grid)?)
            }
            (Ok(()), None) => Ok(false),
            (Err(e), active) => {
                // Put back what earlier applications of this stroke did.
                if let Some(active) = active {
                    active.abandon(grid);
                }
                Err(e)
            }
        }
    }

    /// Applies `stroke` along its path; the stroke starts at the first point
    /// (where the plane lock and a picked Flatten plane are taken).
    fn paint_path(
        &mut self,
        grid: &mut Grid,
        stroke: &BrushStroke,
        active: &mut Option<StrokeInProgress>,
    ) -> Result<(), RunError> {
        let mut lock: Option<LockPlane> = None;
        for point in &stroke.path {
            let (pos, normal) = match (*point, lock) {
                (StrokeCentre::World(p), None) => (p, DVec3::Y),
                (StrokeCentre::World(p), Some(plane)) => (plane.project(p), plane.normal),
                (StrokeCentre::OnSurface { x, z }, None) => self.drop_onto_surface(x, z)?,
                (StrokeCentre::OnSurface { x, z }, Some(plane)) => (
                    plane
                        .intersect_ray(DVec3::new(x, 1.0e6, z), DVec3::NEG_Y)
                        .ok_or(RunError::NoSurface { x, z })?,
                    plane.normal,
                ),
            };
            if active.is_none() {
                if stroke.plane_lock {
                    lock = LockPlane::new(pos, normal);
                }
                let mut options = stroke.options;
                if stroke.brush.mode == BrushMode::Flatten {
                    options.flatten_plane = Some(flatten_plane(stroke, pos, normal));
                }
                let mut begun =
                    StrokeInProgress::begin(stroke.brush, options, stroke.spacing_fraction)?;
                // Painted on the surface: re-derived, it stays on the ground.
                if matches!(point, StrokeCentre::OnSurface { .. }) && lock.is_none() {
                    begun = begun.anchored_to_surface();
                }
                *active = Some(match self.footprint {
                    Some(f) => begun.with_footprint(f),
                    None => begun,
                });
            }
            if let Some(active) = active.as_mut() {
                active.advance(grid, pos)?;
            }
        }
        Ok(())
    }

    /// The clipboard, if something was copied.
    pub fn clipboard(&self) -> Option<&Clipboard> {
        self.session.clipboard.as_ref()
    }
}

/// The Flatten plane of a stroke whose first point is `pos` with surface
/// normal `normal`: a fixed height stays; a given normal takes the point;
/// otherwise the picked plane (with `flatten_from_pick`) or a level one.
fn flatten_plane(stroke: &BrushStroke, pos: DVec3, normal: DVec3) -> FlattenPlane {
    match stroke.options.flatten_plane {
        Some(FlattenPlane::Height { height_world }) => FlattenPlane::Height { height_world },
        Some(FlattenPlane::Picked { normal: n, .. }) => FlattenPlane::Picked {
            point_world: pos,
            normal: n,
        },
        None if stroke.flatten_from_pick => FlattenPlane::Picked {
            point_world: pos,
            normal,
        },
        None => FlattenPlane::Picked {
            point_world: pos,
            normal: DVec3::Y,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::format::Script;
    use crate::terrain::command::edit_command::EditCommand;
    use crate::terrain::storage::cell::{Cell, Material};
    use crate::terrain::storage::coords::{CellBox, CellCoord};
    use glam::IVec3;

    fn floor() -> Grid {
        let mut g = Grid::new();
        g.edit_region(
            CellBox::new(IVec3::new(0, 0, 0), IVec3::new(40, 8, 40)),
            |_, _| Cell::full(Material::ROCK),
        )
        .unwrap();
        g
    }

    fn run_all(grid: &mut Grid, text: &str) -> (ScriptRunner, Vec<u64>) {
        let script = Script::parse(text, "t").unwrap();
        let mut runner = ScriptRunner::new(script.history_budget_bytes, None, None);
        let mut hashes = vec![grid.content_hash()];
        for s in &script.strokes {
            runner.run(grid, &s.action).unwrap();
            hashes.push(grid.content_hash());
        }
        (runner, hashes)
    }

    #[test]
    fn script_steps_undo_and_redo_exactly() {
        let mut g = floor();
        let (runner, h) = run_all(
            &mut g,
            r#"{"strokes": [
                {"frame": 0, "tool": "paint", "path": [[20, 32, 20], [100, 32, 20]],
                 "radius_cells": 4, "strength": 1, "material": "sand"},
                {"frame": 1, "tool": "fill", "region_min": [0, 8, 0], "region_max": [4, 10, 4],
                 "material": "snow"},
                {"frame": 2, "tool": "copy", "region_min": [0, 8, 0], "region_max": [4, 10, 4]},
                {"frame": 3, "tool": "paste", "at": [30, 8, 30], "quarter_turns": 1},
                {"frame": 4, "tool": "undo"},
                {"frame": 4, "tool": "undo"},
                {"frame": 5, "tool": "redo"}
            ]}"#,
        );
        // Paint along the path: the surface row under it is sand, occupancy kept.
        assert_eq!(g.cell(CellCoord::new(15, 7, 5)), Cell::full(Material::SAND));
        assert_eq!(g.cell(CellCoord::new(15, 6, 5)), Cell::full(Material::ROCK));
        // Copy changes nothing; undo twice goes back to after the paint; redo re-fills.
        assert_eq!(h[3], h[2]);
        assert_eq!(h[5], h[2]);
        assert_eq!(h[6], h[1]);
        assert_eq!(h[7], h[2]);
        assert_eq!(g.cell(CellCoord::new(1, 9, 1)), Cell::full(Material::SNOW));
        assert_eq!(g.cell(CellCoord::new(31, 9, 31)), Cell::EMPTY);
        assert_eq!(runner.history().undo_len(), 2);
        assert_eq!(runner.history().redo_len(), 1);
    }

    #[test]
    fn a_failing_stroke_changes_nothing() {
        let mut g = floor();
        let before = g.content_hash();
        let script = Script::parse(
            r#"{"strokes": [{"frame": 0, "tool": "add", "path_xz": [[20, 20], [60, 20]],
                "radius_cells": 4}]}"#,
            "t",
        )
        .unwrap();
        // No surface to drop onto.
        let mut runner = ScriptRunner::new(1 << 20, None, None);
        let e = runner.run(&mut g, &script.strokes[0].action).unwrap_err();
        assert!(matches!(e, RunError::NoSurface { .. }));
        let generate = StrokeAction::Command(EditCommand::Generate {
            region: CellBox::new(IVec3::ZERO, IVec3::ONE),
        });
        assert!(matches!(
            runner.run(&mut g, &generate),
            Err(RunError::Command(CommandError::NoGenerator))
        ));
        let paste = StrokeAction::Command(EditCommand::Paste {
            at: IVec3::ZERO,
            quarter_turns: 0,
        });
        assert!(matches!(
            runner.run(&mut g, &paste),
            Err(RunError::Command(CommandError::EmptyClipboard))
        ));
        assert_eq!(g.content_hash(), before);
        assert_eq!(runner.history().undo_len(), 0);
    }

    #[test]
    fn a_stroke_that_fails_midway_is_reverted() {
        let mut g = floor();
        let before = g.content_hash();
        let stroke = StrokeAction::Brush(BrushStroke {
            brush: crate::terrain::editing::brush::Brush {
                mode: BrushMode::Add,
                radius_cells: 3.0,
                strength: 1.0,
                material: Material::SAND,
                ignore_water: false,
            },
            options: Default::default(),
            path: vec![
                StrokeCentre::World(DVec3::new(40.0, 34.0, 40.0)),
                StrokeCentre::OnSurface { x: 60.0, z: 40.0 },
            ],
            spacing_fraction: 0.25,
            plane_lock: false,
            flatten_from_pick: false,
        });
        let mut runner = ScriptRunner::new(1 << 20, None, None);
        assert!(runner.run(&mut g, &stroke).is_err());
        assert_eq!(g.content_hash(), before);
    }
}
