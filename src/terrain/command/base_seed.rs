//! Changing the base seed of a world document (spec §14) in two halves, so
//! the window can make the new base off its thread with progress and
//! Cancel: [`BaseSeedJob::prepare`] cooks the base and derives the stack on
//! it (any thread), [`EditSession::finish_base_seed`] installs the result
//! as one undo step (the main thread). A script runs both at once.

use std::time::Instant;

use crate::progress::Progress;
use crate::terrain::command::document_action::{BaseSource, DocumentBase};
use crate::terrain::command::edit_command::{CommandError, EditSession};
use crate::terrain::command::history::DocumentSwap;
use crate::terrain::document::base::BaseColumns;
use crate::terrain::document::derive::{DeriveReport, derive_whole, install_derived};
use crate::terrain::document::layers::LayerStack;
use crate::terrain::editing::recorder::Recorder;
use crate::terrain::generation::generate::{GenerateError, GeneratorSettings};
use crate::terrain::recipe::terrain_source::RecipeTerrain;
use crate::terrain::storage::grid::Grid;

/// What a seed change needs, taken from the session when it starts.
#[derive(Clone, Debug)]
pub struct BaseSeedJob {
    /// The new seed.
    pub seed: u64,
    source: BaseSource,
    stack: LayerStack,
}

/// A new base with the stack derived on it, ready to install.
#[derive(Debug)]
pub struct PreparedBase {
    job: BaseSeedJob,
    cells: BaseColumns,
    derived: Grid,
    report: DeriveReport,
    started: Instant,
}

const NO_SEED: &str = "this world's base is plain cells (imported or opened): it has no seed";

const STREAMED_SEED: &str = "the seed of a streaming world is part of its file: a seed change \
     would re-derive every column of the world at once (make a new world with the seed instead)";

/// The cells `source` makes (a generated or cooked world, on demand).
///
/// # Errors
/// [`GenerateError`] from the generator or the recipe's cook, or
/// [`GenerateError::Cancelled`] through `progress`.
pub fn make_base(source: &BaseSource, progress: &Progress) -> Result<BaseColumns, GenerateError> {
    match source {
        BaseSource::Cells => Ok(BaseColumns::kept(&Grid::new())),
        BaseSource::Generator(settings) => {
            settings.validate()?;
            Ok(BaseColumns::generated(settings))
        }
        BaseSource::Recipe {
            recipe,
            materials,
            settings,
        } => {
            settings.validate()?;
            let (terrain, _) = RecipeTerrain::cook(recipe, materials, settings, progress)?;
            Ok(BaseColumns::recipe(terrain))
        }
    }
}

impl BaseSeedJob {
    /// Makes the new base and derives the stack on it whole.
    ///
    /// # Errors
    /// [`GenerateError`] from making the base, [`GenerateError::Cancelled`]
    /// when `progress` was cancelled.
    pub fn prepare(self, progress: &Progress) -> Result<PreparedBase, GenerateError> {
        let started = Instant::now();
        let cells = make_base(&self.source, progress)?;
        progress.check().map_err(|_| GenerateError::Cancelled)?;
        progress.begin_stage("applying the layers", 1);
        let (derived, report) = derive_whole(&cells, &self.stack);
        progress.advance(1);
        Ok(PreparedBase {
            job: self,
            cells,
            derived,
            report,
            started,
        })
    }
}

impl EditSession {
    /// Starts a change of the base seed to `seed`.
    ///
    /// # Errors
    /// [`CommandError::NoDocument`] without a document or for a base of
    /// plain cells (it has no seed).
    pub fn base_seed_job(&self, seed: u64) -> Result<BaseSeedJob, CommandError> {
        let base = self
            .document
            .base
            .as_ref()
            .ok_or(CommandError::NoDocument(NO_SEED))?;
        if base.cells.is_streamed() && base.source != BaseSource::Cells {
            return Err(CommandError::NoDocument(STREAMED_SEED));
        }
        let source = match &base.source {
            BaseSource::Cells => return Err(CommandError::NoDocument(NO_SEED)),
            BaseSource::Generator(s) => {
                BaseSource::Generator(GeneratorSettings { seed, ..s.clone() })
            }
            BaseSource::Recipe {
                recipe,
                materials,
                settings,
            } => BaseSource::Recipe {
                recipe: recipe.clone(),
                materials: materials.clone(),
                settings: GeneratorSettings {
                    seed,
                    ..settings.clone()
                },
            },
        };
        Ok(BaseSeedJob {
            seed,
            source,
            stack: self.document.stack.clone(),
        })
    }

    /// Installs a prepared base: every changed chunk of `grid` as one undo
    /// step with the base before and after. When the stack changed while
    /// the base was made, it is derived again on the new base first.
    /// Returns true when a step was recorded.
    pub fn finish_base_seed(&mut self, grid: &mut Grid, prepared: PreparedBase) -> bool {
        let Some(old) = self.document.base.clone() else {
            return false;
        };
        let PreparedBase {
            job,
            cells,
            mut derived,
            mut report,
            started,
        } = prepared;
        if job.stack != self.document.stack {
            (derived, report) = derive_whole(&cells, &self.document.stack);
        }
        let mut rec = Recorder::new(format!("Base seed {}", job.seed));
        report.dirty_columns = install_derived(grid, &mut rec, &derived);
        self.keep_figures(report, started);
        let new = DocumentBase {
            cells,
            source: job.source,
        };
        self.set_base(new.clone());
        let swap = DocumentSwap {
            before: self.document.stack.clone(),
            after: self.document.stack.clone(),
            base: Some((old, new)),
        };
        self.history.commit_document(rec, swap, None, grid)
    }

    /// Changes the base seed at once (scripts): [`EditSession::base_seed_job`],
    /// [`BaseSeedJob::prepare`], [`EditSession::finish_base_seed`].
    ///
    /// # Errors
    /// As those; nothing changed then.
    pub(super) fn set_base_seed(
        &mut self,
        grid: &mut Grid,
        seed: u64,
    ) -> Result<bool, CommandError> {
        let prepared = self.base_seed_job(seed)?.prepare(&Progress::new())?;
        Ok(self.finish_base_seed(grid, prepared))
    }
}
