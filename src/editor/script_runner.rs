//! Runs parsed script entries on a grid: brush strokes sampled along their
//! path, region operations, undo and redo, each recorded as one history step.
//! Shared by the headless replay (which also meshes and draws) and by
//! `--save`/export runs, so both produce the same world.

use glam::{DVec3, Vec3};

use crate::pipeline::WorldMeshes;
use crate::terrain::edit::{BrushMode, EditError, FlattenPlane, apply_tool};
use crate::terrain::generate::GeneratorSettings;
use crate::terrain::grid::Grid;
use crate::terrain::history::{History, Recorder};
use crate::terrain::region::{self, Clipboard, RegionError};
use crate::terrain::stroke::{LockPlane, StrokeError, StrokeSampler};

use super::picking::pick;
use super::script::{BrushStroke, StrokeAction, StrokeCentre};

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
    /// The brush rejected an application.
    #[error(transparent)]
    Brush(#[from] EditError),
    /// Bad stroke spacing or point.
    #[error(transparent)]
    Stroke(#[from] StrokeError),
    /// A region operation was rejected.
    #[error(transparent)]
    Region(#[from] RegionError),
    /// Paste before any copy.
    #[error("paste with an empty clipboard (copy a region first)")]
    EmptyClipboard,
    /// Generate on a world that was not made by the generator.
    #[error("generate needs a generated world (this one was imported or loaded)")]
    NoGenerator,
}

/// Script execution state: the history, the clipboard and what `*_xz`
/// points are dropped onto.
pub struct ScriptRunner {
    /// The undo history every entry is recorded in.
    pub history: History,
    clipboard: Option<Clipboard>,
    generator: Option<GeneratorSettings>,
    surface: Option<WorldMeshes>,
}

impl ScriptRunner {
    /// A runner with an empty history of `budget_bytes`; `generator` serves
    /// `generate`, `surface` (the meshes when the replay began) serves `*_xz` points.
    pub fn new(
        budget_bytes: usize,
        generator: Option<GeneratorSettings>,
        surface: Option<WorldMeshes>,
    ) -> ScriptRunner {
        ScriptRunner {
            history: History::new(budget_bytes),
            clipboard: None,
            generator,
            surface,
        }
    }

    /// Applies one entry; returns true when the grid changed.
    ///
    /// # Errors
    /// [`RunError`]; the grid is unchanged by a failing entry.
    pub fn run(&mut self, grid: &mut Grid, action: &StrokeAction) -> Result<bool, RunError> {
        let mut rec = Recorder::new(label(action));
        match action {
            StrokeAction::Brush(stroke) => {
                if let Err(e) = self.brush_stroke(grid, stroke, &mut rec) {
                    // Put back what earlier applications of this stroke did.
                    rec.revert(grid);
                    return Err(e);
                }
            }
            StrokeAction::Fill {
                region: b,
                material,
                occupancy,
                ignore_water,
            } => {
                rec.record(grid, *b, |g| {
                    region::fill(g, *b, *material, *occupancy, *ignore_water)
                })?;
            }
            StrokeAction::Clear {
                region: b,
                ignore_water,
            } => {
                rec.record(grid, *b, |g| region::clear(g, *b, *ignore_water))?;
            }
            StrokeAction::Copy { region: b } => {
                self.clipboard = Some(region::copy(grid, *b)?);
                return Ok(false);
            }
            StrokeAction::Paste { at, quarter_turns } => {
                let clip = self.clipboard.as_ref().ok_or(RunError::EmptyClipboard)?;
                let b = region::paste_region(clip, *at, *quarter_turns)?;
                rec.record(grid, b, |g| region::paste(g, clip, *at, *quarter_turns))?;
            }
            StrokeAction::Generate { region: b } => {
                let settings = self.generator.as_ref().ok_or(RunError::NoGenerator)?;
                rec.record(grid, *b, |g| region::generate(g, *b, settings))?;
            }
            StrokeAction::Undo => {
                return Ok(self.history.undo(grid).is_some_and(|r| r.is_change()));
            }
            StrokeAction::Redo => {
                return Ok(self.history.redo(grid).is_some_and(|r| r.is_change()));
            }
        }
        Ok(self.history.commit(rec, grid))
    }

    /// A `*_xz` point dropped onto the initial surface: point and normal.
    fn drop_onto_surface(&self, x: f64, z: f64) -> Result<(DVec3, DVec3), RunError> {
        self.surface
            .as_ref()
            .and_then(|s| pick(s, DVec3::new(x, 1.0e6, z), -Vec3::Y, 2.0e6))
            .map(|hit| (hit.pos_world, hit.normal.as_dvec3()))
            .ok_or(RunError::NoSurface { x, z })
    }

    fn brush_stroke(
        &self,
        grid: &mut Grid,
        stroke: &BrushStroke,
        rec: &mut Recorder,
    ) -> Result<(), RunError> {
        let brush = stroke.brush;
        let mut options = stroke.options;
        let mut sampler = StrokeSampler::new(brush.radius_cells, stroke.spacing_fraction)?;
        let mut lock: Option<LockPlane> = None;
        for (i, point) in stroke.path.iter().enumerate() {
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
            if i == 0 {
                if stroke.plane_lock {
                    lock = LockPlane::new(pos, normal);
                }
                if brush.mode == BrushMode::Flatten {
                    options.flatten_plane = Some(match options.flatten_plane {
                        Some(FlattenPlane::Height { height_world }) => {
                            FlattenPlane::Height { height_world }
                        }
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
                    });
                }
            }
            for centre in sampler.advance(pos)? {
                let region = brush.region(centre)?;
                rec.record(grid, region, |g| apply_tool(g, &brush, &options, centre))?;
            }
        }
        Ok(())
    }

    /// The clipboard, if something was copied.
    pub fn clipboard(&self) -> Option<&Clipboard> {
        self.clipboard.as_ref()
    }
}

/// A history label for an entry, e.g. `"Paint (Sand)"`.
pub fn label(action: &StrokeAction) -> String {
    match action {
        StrokeAction::Brush(b) => {
            let mode = b.brush.mode;
            if mode.uses_material() {
                format!("{} ({})", mode.name(), b.brush.material.name())
            } else {
                mode.name().to_string()
            }
        }
        StrokeAction::Fill { material, .. } => format!("Fill ({})", material.name()),
        StrokeAction::Clear { .. } => "Clear".into(),
        StrokeAction::Copy { .. } => "Copy".into(),
        StrokeAction::Paste { quarter_turns, .. } => {
            format!("Paste ({}°)", *quarter_turns as u32 * 90)
        }
        StrokeAction::Generate { .. } => "Generate".into(),
        StrokeAction::Undo => "Undo".into(),
        StrokeAction::Redo => "Redo".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::editor::script::Script;
    use crate::terrain::cell::{Cell, Material};
    use crate::terrain::coords::{CellBox, CellCoord};
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
        assert_eq!(runner.history.undo_len(), 2);
        assert_eq!(runner.history.redo_len(), 1);
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
        let generate = StrokeAction::Generate {
            region: CellBox::new(IVec3::ZERO, IVec3::ONE),
        };
        assert!(matches!(
            runner.run(&mut g, &generate),
            Err(RunError::NoGenerator)
        ));
        let paste = StrokeAction::Paste {
            at: IVec3::ZERO,
            quarter_turns: 0,
        };
        assert!(matches!(
            runner.run(&mut g, &paste),
            Err(RunError::EmptyClipboard)
        ));
        assert_eq!(g.content_hash(), before);
        assert_eq!(runner.history.undo_len(), 0);
    }

    #[test]
    fn a_stroke_that_fails_midway_is_reverted() {
        let mut g = floor();
        let before = g.content_hash();
        let stroke = StrokeAction::Brush(BrushStroke {
            brush: crate::terrain::edit::Brush {
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
