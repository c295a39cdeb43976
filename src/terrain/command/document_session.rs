//! How the edit session keeps its world document (spec §14): every operation an edit
//! makes is recorded in the active layer, and document actions (hide a
//! layer, move a stamp, delete a stroke) re-derive the cells of their dirty
//! closure. Each is one undo step holding the cells it changed and the
//! layer stack before and after, so undo and redo restore both exactly.

use std::time::Instant;

use crate::terrain::command::brush_stroke::StrokeInProgress;
use crate::terrain::command::document_action::{
    BaseSource, DeriveStats, DocumentAction, DocumentBase, DocumentState, LayerRef, WorldDocument,
};
use crate::terrain::command::edit_command::{CommandError, CommandOutcome, EditSession};
use crate::terrain::command::history::{DocumentSwap, LibraryChange};
use crate::terrain::document::base::BaseColumns;
use crate::terrain::document::derive::{DeriveReport, rederive};
use crate::terrain::document::layers::{DocumentError, LayerId, LayerStack};
use crate::terrain::document::operation::{OperationError, OperationId, OperationKind};
use crate::terrain::editing::recorder::Recorder;
use crate::terrain::storage::grid::{Grid, GridError};

/// Refuses an edited operation its tool would refuse (off the lattice, a
/// bad placement), naming it.
fn checked(id: OperationId, kind: &OperationKind) -> Result<(), DocumentError> {
    kind.validate()
        .map_err(|e| DocumentError::Refused(id.0, e.to_string()))
}

impl From<OperationError> for CommandError {
    fn from(e: OperationError) -> Self {
        match e {
            OperationError::Region(e) => CommandError::Region(e),
            OperationError::Water(e) => CommandError::Water(e),
            OperationError::Stamp(e) => CommandError::Stamp(e),
            OperationError::Path(e) => CommandError::Path(e),
            OperationError::Brush(e) => CommandError::Brush(e),
            e @ OperationError::Footprint { .. } => CommandError::Operation(e),
        }
    }
}

const NO_BASE: &str = "this world keeps no layers: its edits are not recorded as operations";

impl EditSession {
    /// Records edits from now on as operations over `cells` (the world's
    /// cells as made or opened), with an empty layer stack. The base is the
    /// session's generator when it has one, else the cells as they are
    /// (see [`EditSession::set_base_source`] for a recipe).
    pub fn enable_document(&mut self, cells: &Grid) {
        self.document = DocumentState {
            base: Some(DocumentBase {
                cells: BaseColumns::kept(cells),
                source: BaseSource::Cells,
            }),
            ..Default::default()
        };
    }

    /// Records edits of a streaming world from now on as operations over
    /// `base` (its unedited columns, [`BaseColumns::streamed`], made by
    /// `source`), with an empty layer stack. Document actions then
    /// re-derive their closure once its columns are resident
    /// ([`GridError::NotResident`] lists those to load first).
    pub fn enable_streamed_document(&mut self, base: BaseColumns, source: BaseSource) {
        self.document = DocumentState {
            base: Some(DocumentBase {
                cells: base,
                source,
            }),
            ..Default::default()
        };
    }

    /// Records edits from now on in `document` (a world document opened
    /// from a file: its cells already derived), with an empty history.
    pub fn restore_document(&mut self, document: WorldDocument) {
        self.document = DocumentState {
            base: Some(document.base),
            stack: document.stack,
            ..Default::default()
        };
    }

    /// The document to save with the cells: `None` when edits are not
    /// recorded (a streaming world).
    pub fn document_snapshot(&self) -> Option<WorldDocument> {
        Some(WorldDocument {
            base: self.document.base.clone()?,
            stack: self.document.stack.clone(),
        })
    }

    /// Says what made the base cells, which must be exactly what `source`
    /// makes (a world just generated or cooked), so a seed change can make
    /// them again. A generator base then keeps no cells (each column is
    /// generated again when needed); a recipe base keeps its cells until a
    /// seed change cooks the recipe. Nothing changes without a document.
    pub fn set_base_source(&mut self, source: BaseSource) {
        if let Some(base) = self.document.base.as_mut() {
            if base.cells.is_streamed() {
                // A streaming world's base is its column source already.
            } else if let BaseSource::Generator(settings) = &source {
                base.cells = BaseColumns::generated(settings);
            }
            base.source = source;
        }
    }

    /// Refuses an edit when the active layer is locked or hidden.
    ///
    /// # Errors
    /// [`CommandError::Document`] with [`DocumentError::Locked`] or
    /// [`DocumentError::Hidden`].
    pub fn check_editable(&self) -> Result<(), CommandError> {
        let stack = &self.document.stack;
        let Some(layer) = stack.active().and_then(|id| stack.layer(id)) else {
            return Ok(());
        };
        if !self.document.is_enabled() {
            Ok(())
        } else if layer.locked {
            Err(DocumentError::Locked(layer.name.clone()).into())
        } else if !layer.visible {
            // An edit there would vanish from view the moment it lands.
            Err(DocumentError::Hidden(layer.name.clone()).into())
        } else {
            Ok(())
        }
    }

    /// Applies a new operation: straight onto the cells when it lands on
    /// top of everything drawn, else through a re-derivation of its
    /// closure. One undo step.
    pub(super) fn apply_operation(
        &mut self,
        grid: &mut Grid,
        kind: OperationKind,
    ) -> Result<CommandOutcome, CommandError> {
        self.check_editable()?;
        let mut rec = Recorder::new(kind.label());
        let path = match &kind {
            OperationKind::Path(spec) => Some(spec.clone()),
            _ => None,
        };
        let before = self.document.stack.clone();
        let on_top = !self.document.is_enabled() || before.appends_on_top();
        kind.validate()?;
        let applied = if on_top {
            match kind.apply(grid, &mut rec) {
                Ok(applied) => Some(applied),
                Err(e) => {
                    rec.revert(grid);
                    return Err(e.into());
                }
            }
        } else {
            None
        };
        let changed = if !self.document.is_enabled() {
            match path.clone() {
                Some(spec) => self.history.commit_path(rec, spec, grid),
                None => self.history.commit(rec, grid),
            }
        } else {
            // Recorded even when no cell changed on top of everything: the
            // same fill on two layers, a stamp under the ground. Its cells
            // show once what lies under it changes (the other fill hidden).
            let id = self.document.stack.add_operation(kind)?;
            if let Some(outcome) = applied.and_then(|a| a.path) {
                self.document.path_reports.insert(id, outcome.report);
            }
            if !on_top {
                if let Err(e) = self.rederive_into(grid, &mut rec, &before) {
                    self.document.stack = before;
                    return Err(e.into());
                }
                let failures = &mut self.document.last_failures;
                if let Some(i) = failures.iter().position(|(f, _)| *f == id) {
                    let (_, e) = failures.swap_remove(i);
                    rec.revert(grid);
                    self.document.stack = before;
                    return Err(e.into());
                }
            }
            self.commit_swap(rec, before, path, grid)
        };
        Ok(match applied.and_then(|a| a.path) {
            Some(outcome) => CommandOutcome::PathApplied {
                changed,
                report: outcome.report,
                touched: outcome.touched,
            },
            None => CommandOutcome::Edited { changed },
        })
    }

    /// Ends a brush stroke: it becomes an operation of the active layer
    /// and one undo step. A stroke painted under other layers' operations
    /// is taken back and re-derived in its place.
    ///
    /// # Errors
    /// [`CommandError::Document`] when the active layer was locked meanwhile
    /// (the stroke is taken back).
    pub fn finish_stroke(
        &mut self,
        stroke: StrokeInProgress,
        grid: &mut Grid,
    ) -> Result<bool, CommandError> {
        if !self.document.is_enabled() {
            return Ok(stroke.finish(&mut self.history, grid));
        }
        let recorded = stroke.recorded();
        let mut rec = stroke.into_recorder();
        if recorded.centres_world.is_empty() {
            return Ok(false);
        }
        // A stroke that changed no cell (Add inside solid rock) is still an
        // operation: it shows once what lies under it changes.
        if let Err(e) = self.check_editable() {
            rec.revert(grid);
            return Err(e);
        }
        let before = self.document.stack.clone();
        let on_top = before.appends_on_top();
        self.document
            .stack
            .add_operation(OperationKind::Stroke(recorded))?;
        if !on_top {
            let label = rec.label().to_string();
            rec.revert(grid);
            rec = Recorder::new(label);
            if let Err(e) = self.rederive_into(grid, &mut rec, &before) {
                // A streaming grid lacks columns of the closure: the
                // stroke is taken back whole.
                self.document.stack = before;
                return Err(e.into());
            }
        }
        Ok(self.commit_swap(rec, before, None, grid))
    }

    /// Re-derives the closure of the change from `before` to the current
    /// stack, recording into `rec` and keeping the figures.
    ///
    /// # Errors
    /// [`GridError::NotResident`] when a streaming grid lacks columns of
    /// the closure (nothing changed).
    fn rederive_into(
        &mut self,
        grid: &mut Grid,
        rec: &mut Recorder,
        before: &LayerStack,
    ) -> Result<(), GridError> {
        let Some(base) = self.document.base.as_ref() else {
            return Ok(());
        };
        let started = Instant::now();
        let report: DeriveReport = rederive(grid, rec, &base.cells, before, &self.document.stack)?;
        self.keep_figures(report, started);
        Ok(())
    }

    /// Keeps the figures of a re-derivation that ran (one that found
    /// nothing dirty, a rename or a new layer, leaves no figures).
    pub(super) fn keep_figures(&mut self, report: DeriveReport, started: Instant) {
        if report.dirty_columns == 0 {
            return;
        }
        self.document
            .path_reports
            .extend(report.paths.iter().copied());
        for (id, _) in &report.failures {
            // A path that found no way on the new ground has no figures.
            self.document.path_reports.remove(id);
        }
        self.document.last_derive = Some(DeriveStats {
            dirty_columns: report.dirty_columns,
            applied_operations: report.applied_operations,
            failed_operations: report.failures.len(),
            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
        });
        self.document.last_failures = report.failures;
        self.document.derivations += 1;
    }

    fn commit_swap(
        &mut self,
        rec: Recorder,
        before: LayerStack,
        path: Option<crate::terrain::path::spec::PathSpec>,
        grid: &Grid,
    ) -> bool {
        let swap = DocumentSwap {
            before,
            after: self.document.stack.clone(),
            base: None,
        };
        self.history.commit_document(rec, swap, path, grid)
    }

    fn layer_id(&self, layer: &LayerRef) -> Result<LayerId, DocumentError> {
        match layer {
            LayerRef::Id(id) => self
                .document
                .stack
                .layer(*id)
                .map(|l| l.id)
                .ok_or(DocumentError::UnknownLayer(id.0)),
            LayerRef::Name(name) => self.document.stack.layer_named(name),
        }
    }

    /// Changes the stack as `action` says (nothing else).
    fn change_stack(&mut self, action: &DocumentAction) -> Result<(), DocumentError> {
        use DocumentAction as A;
        let stack = &mut self.document.stack;
        match action {
            A::AddLayer(name) => stack.add_layer(name).map(|_| ()),
            A::SelectLayer(_) | A::Bake | A::SetBaseSeed(_) => Ok(()),
            A::RenameLayer(l, name) => {
                let id = self.layer_id(l)?;
                self.document.stack.rename_layer(id, name)
            }
            A::SetVisible(l, v) => {
                let id = self.layer_id(l)?;
                self.document.stack.set_visible(id, *v)
            }
            A::Solo(l) => {
                let id = self.layer_id(l)?;
                self.document.stack.solo(id)
            }
            A::SetLocked(l, v) => {
                let id = self.layer_id(l)?;
                self.document.stack.set_locked(id, *v)
            }
            A::MoveLayer(l, to) => {
                let id = self.layer_id(l)?;
                self.document.stack.move_layer(id, *to)
            }
            A::RemoveLayer(l) => {
                let id = self.layer_id(l)?;
                self.document.stack.remove_layer(id)
            }
            A::DuplicateLayer(l) => {
                let id = self.layer_id(l)?;
                self.document.stack.duplicate_layer(id).map(|_| ())
            }
            A::MergeDown(l) => {
                let id = self.layer_id(l)?;
                self.document.stack.merge_down(id).map(|_| ())
            }
            A::MoveOperation(id, by) => {
                let kind = self.operation_kind(*id)?.translated(*by);
                checked(*id, &kind)?;
                self.document.stack.edit_operation(*id, kind)
            }
            A::EditOperation(id, edit) => {
                let kind = self
                    .operation_kind(*id)?
                    .edited(edit)
                    .map_err(|e| DocumentError::Refused(id.0, e.to_string()))?;
                checked(*id, &kind)?;
                self.document.stack.edit_operation(*id, kind)
            }
            A::ReplaceOperation(id, kind) => {
                checked(*id, kind)?;
                self.document.stack.edit_operation(*id, kind.clone())
            }
            A::DeleteOperation(id) => self.document.stack.delete_operation(*id),
        }
    }

    fn operation_kind(&self, id: OperationId) -> Result<OperationKind, DocumentError> {
        self.document
            .stack
            .operation(id)
            .map(|(_, o)| o.kind().clone())
            .ok_or(DocumentError::UnknownOperation(id.0))
    }

    /// Runs a document action: the stack changes, the closure re-derives,
    /// and both become one undo step (selecting a layer is not a step).
    pub(super) fn document_action(
        &mut self,
        grid: &mut Grid,
        action: &DocumentAction,
    ) -> Result<CommandOutcome, CommandError> {
        if !self.document.is_enabled() {
            return Err(CommandError::NoDocument(NO_BASE));
        }
        if let DocumentAction::SelectLayer(l) = action {
            let id = self.layer_id(l)?;
            self.document.stack.select_layer(id)?;
            return Ok(CommandOutcome::Edited { changed: false });
        }
        if *action == DocumentAction::Bake {
            if self
                .document
                .base
                .as_ref()
                .is_some_and(|b| b.cells.is_streamed())
            {
                return Err(CommandError::NoDocument(
                    "a streaming world cannot be baked: its cells are never all in memory \
                     (its layers stay editable instead)",
                ));
            }
            if let Some(locked) = self.document.stack.layers().iter().find(|l| l.locked) {
                // Baking would remove what the lock protects.
                return Err(DocumentError::Locked(locked.name.clone()).into());
            }
            return Ok(CommandOutcome::Edited {
                changed: self.bake(grid),
            });
        }
        if let DocumentAction::SetBaseSeed(seed) = action {
            return Ok(CommandOutcome::Edited {
                changed: self.set_base_seed(grid, *seed)?,
            });
        }
        let before = self.document.stack.clone();
        if let Err(e) = self.change_stack(action) {
            self.document.stack = before;
            return Err(e.into());
        }
        let mut rec = Recorder::new(action.label());
        if let Err(e) = self.rederive_into(grid, &mut rec, &before) {
            self.document.stack = before;
            return Err(e.into());
        }
        Ok(CommandOutcome::Edited {
            changed: self.commit_swap(rec, before, None, grid),
        })
    }

    /// Makes the current cells the base and empties the stack (one undo
    /// step; no cell changes).
    fn bake(&mut self, grid: &Grid) -> bool {
        let new = DocumentBase {
            cells: BaseColumns::kept(grid),
            source: BaseSource::Cells,
        };
        let Some(old_base) = self.document.base.replace(new.clone()) else {
            return false;
        };
        let before = self.document.stack.clone();
        self.document.stack.clear();
        let swap = DocumentSwap {
            before,
            after: self.document.stack.clone(),
            base: Some((old_base, new)),
        };
        self.history
            .commit_document(Recorder::new("Bake layers"), swap, None, grid)
    }

    /// Undoes the newest step (cells and document); `Some(changed cells)`
    /// when there was one.
    pub(super) fn undo_step(&mut self, grid: &mut Grid) -> Option<bool> {
        let changed = self.history.undo(grid)?.is_change();
        let undone = self.history.redo_steps().next();
        if let Some(l) = undone.and_then(|s| s.library()) {
            self.library_change = Some(LibraryChange::Undone(l.clone()));
        }
        let side = undone
            .and_then(|s| s.document())
            .map(|d| (d.before.clone(), d.base.as_ref().map(|b| b.0.clone())));
        self.take_document_side(side);
        Some(changed)
    }

    /// Redoes the last undone step (cells and document).
    pub(super) fn redo_step(&mut self, grid: &mut Grid) -> Option<bool> {
        let changed = self.history.redo(grid)?.is_change();
        let redone = self.history.undo_steps().last();
        if let Some(l) = redone.and_then(|s| s.library()) {
            self.library_change = Some(LibraryChange::Redone(l.clone()));
        }
        let side = redone
            .and_then(|s| s.document())
            .map(|d| (d.after.clone(), d.base.as_ref().map(|b| b.1.clone())));
        self.take_document_side(side);
        Some(changed)
    }

    /// Takes one side of a step's document swap: its stack and, for a bake
    /// or seed change, its base.
    fn take_document_side(&mut self, side: Option<(LayerStack, Option<DocumentBase>)>) {
        let Some((stack, base)) = side else {
            return;
        };
        // The figures of the last re-derivation belong to the state left:
        // its skipped operations are forgotten, and so are the path figures
        // of operations that are gone or changed (not re-measured here).
        self.document.last_failures.clear();
        self.document.path_reports.retain(|id, _| {
            let now = stack.operation(*id).map(|(_, o)| o.kind());
            let then = self.document.stack.operation(*id).map(|(_, o)| o.kind());
            matches!((now, then), (Some(a), Some(b)) if a.is_same_as(b))
        });
        self.document.stack = stack;
        if let Some(base) = base {
            self.set_base(base);
        }
    }

    /// Puts back a base (undo or redo of a bake or seed change), with the
    /// generator Generate re-runs.
    pub(super) fn set_base(&mut self, base: DocumentBase) {
        if let BaseSource::Generator(g) = &base.source {
            self.generator = Some(g.clone());
        }
        self.document.base = Some(base);
    }

    /// Undoes or redoes until `applied_steps` undo steps are applied (or
    /// the history runs out); returns the steps moved over.
    pub(super) fn jump_to(&mut self, grid: &mut Grid, applied_steps: usize) -> usize {
        let mut moved = 0;
        while self.history.undo_len() > applied_steps && self.undo_step(grid).is_some() {
            moved += 1;
        }
        while self.history.undo_len() < applied_steps && self.redo_step(grid).is_some() {
            moved += 1;
        }
        moved
    }
}
