//! A brush stroke while it is being painted: applications spaced along the
//! cursor path, all recorded into one undo step. The window (one cursor
//! point a frame) and the script runner (a path given up front) both drive
//! strokes through [`StrokeInProgress`], so a stroke is applied, labelled
//! and undone the same way whoever paints it.

use std::collections::VecDeque;

use glam::DVec3;

use crate::terrain::command::history::History;
use crate::terrain::document::operation::RecordedStroke;
use crate::terrain::document::stroke_anchor::anchor;
use crate::terrain::editing::brush::{Brush, BrushOptions, EditError};
use crate::terrain::editing::kernels::apply_tool;
use crate::terrain::editing::recorder::Recorder;
use crate::terrain::editing::stroke::{StrokeError, StrokeSampler};
use crate::terrain::storage::coords::CellBox;
use crate::terrain::storage::grid::{EditReport, Grid};

/// Why a stroke could not start or continue. Applications made before the
/// error stay recorded (see [`StrokeInProgress::abandon`] to undo them).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BrushStrokeError {
    /// The brush or its options rejected a value or an application.
    #[error(transparent)]
    Brush(#[from] EditError),
    /// Bad stroke spacing or point.
    #[error(transparent)]
    Stroke(#[from] StrokeError),
}

impl BrushStrokeError {
    /// The chunk columns an application needs but a streaming grid does not
    /// hold (spec §12): it changed nothing and applies once they are loaded.
    pub fn missing_columns(&self) -> Option<&[crate::terrain::storage::coords::ColumnCoord]> {
        match self {
            BrushStrokeError::Brush(EditError::Grid(e)) => e.missing_columns(),
            _ => None,
        }
    }
}

/// The history label of a stroke of `brush` with `applications`
/// applications, e.g. `"Paint (Sand) ×12"` or `"Subtract ×3"`.
pub fn stroke_label(brush: &Brush, applications: usize) -> String {
    brush.stroke_label(applications)
}

/// A stroke being painted: its recorder, spacing sampler and settings.
#[derive(Debug)]
pub struct StrokeInProgress {
    recorder: Recorder,
    sampler: StrokeSampler,
    brush: Brush,
    options: BrushOptions,
    applications: usize,
    /// Centres sampled but not applied yet: an application waits for chunk
    /// columns a streaming grid does not hold ([`StrokeInProgress::resume`]).
    waiting: VecDeque<DVec3>,
    /// The world's footprint (cells; only x and z count): an application
    /// whose box lies wholly outside it is skipped (`None`: none is).
    footprint: Option<CellBox>,
    /// Applications skipped for lying outside the footprint.
    skipped: usize,
    /// Centres applied, in order (the stroke's document operation).
    centres_world: Vec<DVec3>,
    /// Each applied centre's height above the surface under it, when the
    /// stroke is anchored to the surface (`None` otherwise).
    surface_offsets_studs: Option<Vec<Option<f64>>>,
}

impl StrokeInProgress {
    /// Starts a stroke of `brush` with `options` (the Flatten plane already
    /// chosen), applied every `spacing_fraction` × radius along its path.
    ///
    /// # Errors
    /// [`BrushStrokeError`] for an invalid brush, options or spacing.
    pub fn begin(
        brush: Brush,
        options: BrushOptions,
        spacing_fraction: f32,
    ) -> Result<StrokeInProgress, BrushStrokeError> {
        brush.validate()?;
        options.validate(brush.mode)?;
        let sampler = StrokeSampler::new(brush.radius_cells, spacing_fraction)?;
        Ok(StrokeInProgress {
            recorder: Recorder::new(stroke_label(&brush, 0)),
            sampler,
            brush,
            options,
            applications: 0,
            waiting: VecDeque::new(),
            footprint: None,
            skipped: 0,
            centres_world: Vec::new(),
            surface_offsets_studs: None,
        })
    }

    /// Skips applications whose box lies wholly outside `footprint` (the
    /// world's cells; only x and z count): they could change nothing of the
    /// world, so they cost nothing.
    pub fn with_footprint(mut self, footprint: CellBox) -> StrokeInProgress {
        self.footprint = Some(footprint);
        self
    }

    /// Records each application's height above the surface under it
    /// (a stroke painted on the ground), so re-deriving it over changed
    /// ground keeps it on the ground
    /// ([`crate::terrain::document::stroke_anchor`]).
    pub fn anchored_to_surface(mut self) -> StrokeInProgress {
        self.surface_offsets_studs = Some(Vec::new());
        self
    }

    /// Applications skipped for lying wholly outside the footprint.
    pub fn skipped(&self) -> usize {
        self.skipped
    }

    /// Moves the stroke's path to `point_world` (studs) and applies the
    /// brush at every spacing along the way (the first call applies once at
    /// the point). Returns the applications made.
    ///
    /// # Errors
    /// [`BrushStrokeError`] for a non-finite or too distant point, or an
    /// application the brush rejects; earlier applications stay recorded.
    pub fn advance(
        &mut self,
        grid: &mut Grid,
        point_world: DVec3,
    ) -> Result<usize, BrushStrokeError> {
        let mut applied = self.resume(grid)?;
        let centres = self.sampler.advance(point_world)?;
        self.waiting = centres.into();
        applied += self.resume(grid)?;
        Ok(applied)
    }

    /// Applies the centres that wait for chunk columns (see
    /// [`StrokeInProgress::is_waiting`]), in order. Returns the applications
    /// made.
    ///
    /// # Errors
    /// As [`StrokeInProgress::advance`]; when an application finds columns
    /// missing ([`BrushStrokeError::missing_columns`]) it and the centres
    /// after it keep waiting, and nothing of it was applied.
    pub fn resume(&mut self, grid: &mut Grid) -> Result<usize, BrushStrokeError> {
        let (brush, options) = (self.brush, self.options);
        let mut applied = 0;
        while let Some(&sampled) = self.waiting.front() {
            let (offset, centre) = match self.surface_offsets_studs {
                Some(_) => anchor(grid, sampled),
                None => (None, sampled),
            };
            let region = crate::terrain::editing::kernels::tool_region(&brush, &options, centre)?;
            if self.footprint.is_some_and(|f| !overlaps_xz(&f, &region)) {
                self.waiting.pop_front();
                self.skipped += 1;
                continue;
            }
            match self
                .recorder
                .record(grid, region, |g| apply_tool(g, &brush, &options, centre))
            {
                Ok(_) => {}
                Err(e) => {
                    let e = BrushStrokeError::from(e);
                    if e.missing_columns().is_none() {
                        self.waiting.clear();
                    }
                    return Err(e);
                }
            }
            self.waiting.pop_front();
            self.centres_world.push(centre);
            if let Some(offsets) = self.surface_offsets_studs.as_mut() {
                offsets.push(offset);
            }
            self.applications += 1;
            applied += 1;
        }
        Ok(applied)
    }

    /// True while sampled centres wait for chunk columns to be loaded.
    pub fn is_waiting(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// The brush this stroke paints with.
    pub fn brush(&self) -> &Brush {
        &self.brush
    }

    /// The stroke's options (with the Flatten plane it began with).
    pub fn options(&self) -> &BrushOptions {
        &self.options
    }

    /// Applications made so far.
    pub fn applications(&self) -> usize {
        self.applications
    }

    /// Ends the stroke: it becomes one undo step in `history`, labelled
    /// [`stroke_label`]. Returns true when it changed cells.
    pub fn finish(mut self, history: &mut History, grid: &Grid) -> bool {
        self.recorder
            .set_label(stroke_label(&self.brush, self.applications));
        history.commit(self.recorder, grid)
    }

    /// The stroke as a document operation: its brush, options and the
    /// centres applied so far.
    pub fn recorded(&self) -> RecordedStroke {
        RecordedStroke {
            brush: self.brush,
            options: self.options,
            centres_world: self.centres_world.clone().into(),
            surface_offsets_studs: self.surface_offsets_studs.clone().map(Into::into),
        }
    }

    /// The recorder holding the before-state of every chunk the stroke
    /// changed, labelled [`stroke_label`].
    pub fn into_recorder(mut self) -> Recorder {
        self.recorder
            .set_label(stroke_label(&self.brush, self.applications));
        self.recorder
    }

    /// Abandons the stroke, putting back every cell it changed.
    pub fn abandon(self, grid: &mut Grid) -> EditReport {
        self.recorder.revert(grid)
    }
}

/// True when `a` and `b` overlap on the x and z axes.
fn overlaps_xz(a: &CellBox, b: &CellBox) -> bool {
    a.min.x < b.max.x && b.min.x < a.max.x && a.min.z < b.max.z && b.min.z < a.max.z
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::editing::brush::BrushMode;
    use crate::terrain::storage::cell::{Cell, Material};
    use crate::terrain::storage::coords::CellBox;
    use glam::IVec3;

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
    fn a_stroke_is_one_labelled_step_and_abandon_restores() {
        let mut grid = Grid::new();
        grid.edit_region(CellBox::new(IVec3::ZERO, IVec3::new(40, 8, 40)), |_, _| {
            Cell::full(Material::ROCK)
        })
        .unwrap();
        let before = grid.content_hash();
        let mut history = History::new(1 << 24);
        let mut s =
            StrokeInProgress::begin(brush(BrushMode::Add), BrushOptions::default(), 0.25).unwrap();
        assert_eq!(
            s.advance(&mut grid, DVec3::new(40.0, 32.0, 40.0)).unwrap(),
            1
        );
        assert!(s.advance(&mut grid, DVec3::new(80.0, 32.0, 40.0)).unwrap() > 1);
        let n = s.applications();
        assert!(s.finish(&mut history, &grid));
        assert_eq!(
            history.undo_steps().last().unwrap().label(),
            format!("Add (Sand) ×{n}")
        );
        history.undo(&mut grid);
        assert_eq!(grid.content_hash(), before);

        let mut s =
            StrokeInProgress::begin(brush(BrushMode::Subtract), BrushOptions::default(), 0.25)
                .unwrap();
        s.advance(&mut grid, DVec3::new(40.0, 32.0, 40.0)).unwrap();
        assert_ne!(grid.content_hash(), before);
        s.abandon(&mut grid);
        assert_eq!(grid.content_hash(), before);
    }

    #[test]
    fn invalid_settings_are_refused_before_any_change() {
        let mut bad = brush(BrushMode::Add);
        bad.radius_cells = f32::NAN;
        assert!(matches!(
            StrokeInProgress::begin(bad, BrushOptions::default(), 0.25),
            Err(BrushStrokeError::Brush(_))
        ));
        assert!(matches!(
            StrokeInProgress::begin(brush(BrushMode::Add), BrushOptions::default(), 0.0),
            Err(BrushStrokeError::Stroke(_))
        ));
        assert_eq!(stroke_label(&brush(BrushMode::Subtract), 2), "Subtract ×2");
    }
}
