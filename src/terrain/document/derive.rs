//! Deriving cells from a document (spec §14): the base cells, then every
//! visible operation in order. A change re-derives only its dirty closure
//! ([`crate::terrain::document::closure`]) in a scratch grid holding the
//! base cells of the columns the closure reads, then writes the dirty
//! columns back as one recorded edit: the live cells stay as they were
//! until the new ones are complete, and chunks whose cells come out equal
//! are not touched (nothing re-meshes for them).

use std::convert::Infallible;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::terrain::document::base::BaseColumns;
use crate::terrain::document::closure::{Closure, changed_footprints, dirty_closure};
use crate::terrain::document::layers::LayerStack;
use crate::terrain::document::operation::{ColumnRect, Operation, OperationError, OperationId};
use crate::terrain::editing::recorder::Recorder;
use crate::terrain::path::spec::PathReport;
use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::{
    CHUNK_SIZE_CELLS, CellBox, ChunkCoord, ColumnCoord, LATTICE_CELLS, local_index,
};
use crate::terrain::storage::grid::{Grid, GridError};
use crate::terrain::streaming::column_source::{EditStore, SourceError};

/// What one derivation did.
#[derive(Debug, Default, PartialEq)]
pub struct DeriveReport {
    /// Chunk columns re-derived and written back.
    pub dirty_columns: usize,
    /// Operations applied (the closure's members).
    pub applied_operations: usize,
    /// Operations that could not apply on the ground they met (a route
    /// with no way through after a seed change, a path with no terrain
    /// under it): skipped, each with why. Deterministic like the rest.
    pub failures: Vec<(OperationId, OperationError)>,
    /// The figures of every path applied (roads re-graded on new ground).
    pub paths: Vec<(OperationId, PathReport)>,
}

/// Applies `ops` to `grid` in order; an operation that fails changes
/// nothing and is reported.
fn apply_in_order<'a>(grid: &mut Grid, ops: impl Iterator<Item = &'a Operation>) -> DeriveReport {
    let mut report = DeriveReport::default();
    for op in ops {
        // The scratch grid is thrown away; the recorder only satisfies the
        // tools' recording interface.
        let mut rec = Recorder::new(String::new());
        match op.kind().apply(grid, &mut rec) {
            Ok(applied) => {
                report.applied_operations += 1;
                if let Some(path) = applied.path {
                    report.paths.push((op.id, path.report));
                }
            }
            Err(e) => {
                rec.revert(grid);
                report.failures.push((op.id, e));
            }
        }
    }
    report
}

/// The cells of `stack` over `base`, derived whole: the base, then every
/// visible operation in order.
pub fn derive_whole(base: &BaseColumns, stack: &LayerStack) -> (Grid, DeriveReport) {
    let mut grid = base.whole();
    let mut report = apply_in_order(&mut grid, stack.visible_operations());
    let columns: FxHashSet<ColumnCoord> = grid
        .chunks()
        .map(|(c, _)| ColumnCoord::of(c))
        .chain(base.all_columns().iter().copied())
        .collect();
    report.dirty_columns = columns.len();
    (grid, report)
}

/// Refuses a re-derivation on a streaming grid that does not hold every
/// column it would write (spec §12): nothing has changed yet, and it can
/// run once they are loaded.
fn check_resident(grid: &Grid, closure: &Closure) -> Result<(), GridError> {
    if !grid.is_streaming() {
        return Ok(());
    }
    let mut missing: Vec<ColumnCoord> = closure
        .dirty
        .iter()
        .copied()
        .filter(|c| !grid.is_column_resident(*c))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    missing.sort();
    Err(GridError::NotResident(missing))
}

/// Brings `grid` (the cells of `old` over `base`) to the cells of `new`
/// over `base`, re-deriving only the dirty closure of the change; every
/// chunk it changes is recorded in `rec` (one undo step).
///
/// # Errors
/// [`GridError::NotResident`] listing the closure's columns a streaming
/// grid does not hold; nothing changed.
pub fn rederive(
    grid: &mut Grid,
    rec: &mut Recorder,
    base: &BaseColumns,
    old: &LayerStack,
    new: &LayerStack,
) -> Result<DeriveReport, GridError> {
    let old_ops: Vec<&Operation> = old.visible_operations().collect();
    let new_ops: Vec<&Operation> = new.visible_operations().collect();
    let seeds = changed_footprints(&old_ops, &new_ops);
    if seeds.is_empty() {
        return Ok(DeriveReport::default());
    }
    let closure = dirty_closure(&new_ops, &seeds);
    check_resident(grid, &closure)?;
    Ok(derive_closure(grid, rec, base, &new_ops, &closure))
}

/// Re-derives the dirty closure of `seeds` (columns whose cells may be
/// stale, e.g. a world file's cached columns whose operations changed
/// while it was closed), recording the changed chunks in `rec`.
///
/// # Errors
/// [`GridError::NotResident`] as [`rederive`].
pub fn rederive_seeds(
    grid: &mut Grid,
    rec: &mut Recorder,
    base: &BaseColumns,
    stack: &LayerStack,
    seeds: &[ColumnRect],
) -> Result<DeriveReport, GridError> {
    if seeds.is_empty() {
        return Ok(DeriveReport::default());
    }
    let ops: Vec<&Operation> = stack.visible_operations().collect();
    let closure = dirty_closure(&ops, seeds);
    check_resident(grid, &closure)?;
    Ok(derive_closure(grid, rec, base, &ops, &closure))
}

/// Re-derives the dirty closure of `seeds` straight into a streaming
/// world's `store` (its spilled derived columns, the cache of spec §14),
/// without loading anything into a grid: each dirty column is derived from
/// the base columns the closure reads and the operations whose footprints
/// meet it, merged with its current copy (stored, else the base) outside
/// the dirty rectangles, and stored when it differs. Used on opening a
/// streaming world whose cached columns are stale, before any is resident.
///
/// # Errors
/// [`SourceError`] when the store cannot be read or written; columns
/// stored before the failure keep their new cells (each is whole).
pub fn rederive_stored(
    store: &dyn EditStore,
    base: &BaseColumns,
    stack: &LayerStack,
    seeds: &[ColumnRect],
) -> Result<DeriveReport, SourceError> {
    if seeds.is_empty() {
        return Ok(DeriveReport::default());
    }
    let ops: Vec<&Operation> = stack.visible_operations().collect();
    let closure = dirty_closure(&ops, seeds);
    let mut scratch = Grid::from_chunks(base.chunks_of(&closure.read));
    let report = apply_in_order(&mut scratch, closure.members.iter().map(|&i| ops[i]));
    let mut columns: Vec<ColumnCoord> = closure.dirty.iter().copied().collect();
    columns.sort();
    let mut live_chunks = Vec::new();
    for &column in &columns {
        match store.load_edited(column)? {
            Some(chunks) => live_chunks.extend(chunks),
            None => live_chunks.extend(base.chunks([&column])),
        }
    }
    let mut live = Grid::from_chunks(live_chunks);
    let mut rec = Recorder::new(String::new());
    write_back_rects(&mut live, &mut rec, &scratch, &closure);
    // The recorder holds the chunks that changed: only their columns are
    // stored.
    let changed: FxHashSet<ColumnCoord> = rec
        .into_parts()
        .1
        .keys()
        .map(|c| ColumnCoord::of(*c))
        .collect();
    for column in columns.into_iter().filter(|c| changed.contains(c)) {
        let set: FxHashSet<ColumnCoord> = [column].into_iter().collect();
        let mut coords = live.chunks_in_columns(&set);
        coords.sort_by_key(|c| c.0.y);
        let chunks: Vec<_> = coords
            .into_iter()
            .map(|c| (c, live.chunk_cells(c)))
            .filter(|(_, cells)| !cells.is_all_empty())
            .collect();
        store.store_edited(column, &chunks)?;
    }
    Ok(DeriveReport {
        dirty_columns: closure.dirty.len(),
        ..report
    })
}

/// Re-derives every column of `grid` from `base` and `stack` (after the
/// base itself changed), recording the changed chunks in `rec`.
pub fn rederive_all(
    grid: &mut Grid,
    rec: &mut Recorder,
    base: &BaseColumns,
    stack: &LayerStack,
) -> DeriveReport {
    let (derived, report) = derive_whole(base, stack);
    DeriveReport {
        dirty_columns: install_derived(grid, rec, &derived),
        ..report
    }
}

/// Makes `grid` hold exactly the cells of `derived` (a whole derivation),
/// recording the changed chunks in `rec`; chunks already equal are not
/// touched. Returns the chunk columns written.
pub fn install_derived(grid: &mut Grid, rec: &mut Recorder, derived: &Grid) -> usize {
    let columns: FxHashSet<ColumnCoord> = grid
        .chunks()
        .map(|(c, _)| ColumnCoord::of(c))
        .chain(derived.chunks().map(|(c, _)| ColumnCoord::of(c)))
        .collect();
    write_back(grid, rec, derived, &columns);
    columns.len()
}

/// Re-derives `closure` of `ops` in a scratch grid and writes its dirty
/// columns into `grid`.
fn derive_closure(
    grid: &mut Grid,
    rec: &mut Recorder,
    base: &BaseColumns,
    ops: &[&Operation],
    closure: &Closure,
) -> DeriveReport {
    let mut scratch = Grid::from_chunks(base.chunks_of(&closure.read));
    let report = apply_in_order(&mut scratch, closure.members.iter().map(|&i| ops[i]));
    write_back_rects(grid, rec, &scratch, closure);
    DeriveReport {
        dirty_columns: closure.dirty.len(),
        ..report
    }
}

/// Writes the dirty cells of `closure` (its rectangles, every row) from
/// `derived` into `grid` as one recorded edit. Cells of a dirty chunk
/// column outside the rectangles keep the live value: another operation
/// may have written them, and the closure did not re-derive them.
fn write_back_rects(grid: &mut Grid, rec: &mut Recorder, derived: &Grid, closure: &Closure) {
    let mut by_column: FxHashMap<ColumnCoord, Vec<ColumnRect>> = FxHashMap::default();
    for rect in &closure.dirty_rects {
        for column in rect.columns() {
            let part = rect.intersection(&ColumnRect::of_chunk_column(column));
            if !part.is_empty() {
                by_column.entry(column).or_default().push(part);
            }
        }
    }
    let columns: FxHashSet<ColumnCoord> = by_column.keys().copied().collect();
    let mut coords = grid.chunks_in_columns(&columns);
    coords.extend(derived.chunks_in_columns(&columns));
    coords.sort_by_key(|c| (c.0.z, c.0.y, c.0.x));
    coords.dedup();
    let items: Vec<_> = coords
        .into_iter()
        .map(|c| {
            let parts = &by_column[&ColumnCoord::of(c)];
            (c, merged(grid, derived, c, parts), c.cell_box())
        })
        .collect();
    let region = cover_box(&columns);
    // Restoring chunks cannot fail.
    let _ = rec.record(grid, region, |g| {
        Ok::<_, Infallible>(g.restore_chunks(items))
    });
}

/// Chunk `coord` with the cells of `parts` (columns, every row) from
/// `derived` and the rest from `live`; `derived`'s storage itself when the
/// parts cover the whole chunk.
fn merged(live: &Grid, derived: &Grid, coord: ChunkCoord, parts: &[ColumnRect]) -> ChunkCells {
    let whole = ColumnRect::of_chunk_column(ColumnCoord::of(coord));
    if parts.contains(&whole) {
        return derived.chunk_cells(coord);
    }
    let from = derived.chunk_cells(coord);
    let mut cells = live.chunk_cells(coord);
    let dense = cells.make_dense_mut();
    let origin = glam::IVec2::new(whole.min.x, whole.min.y);
    for part in parts {
        for z in part.min.y..part.max.y {
            for x in part.min.x..part.max.x {
                let (lx, lz) = (x - origin.x, z - origin.y);
                for ly in 0..CHUNK_SIZE_CELLS {
                    let local = glam::IVec3::new(lx, ly, lz);
                    dense[local_index(local)] = from.get(local);
                }
            }
        }
    }
    cells.compact();
    cells
}

/// A box over every row of `columns`' bounding rectangle.
fn cover_box(columns: &FxHashSet<ColumnCoord>) -> CellBox {
    let (lo, hi) = columns.iter().fold(
        (glam::IVec2::splat(i32::MAX), glam::IVec2::splat(i32::MIN)),
        |(lo, hi), c| {
            let v = glam::IVec2::new(c.x, c.z);
            (lo.min(v), hi.max(v))
        },
    );
    let size = CHUNK_SIZE_CELLS;
    CellBox::new(
        glam::IVec3::new(lo.x * size, LATTICE_CELLS.min.y, lo.y * size),
        glam::IVec3::new((hi.x + 1) * size, LATTICE_CELLS.max.y, (hi.y + 1) * size),
    )
}

/// Writes the chunks of `columns` from `derived` into `grid` as one
/// recorded edit (chunks already equal are skipped; storage is shared).
fn write_back(
    grid: &mut Grid,
    rec: &mut Recorder,
    derived: &Grid,
    columns: &FxHashSet<ColumnCoord>,
) {
    if columns.is_empty() {
        return;
    }
    let mut coords = grid.chunks_in_columns(columns);
    coords.extend(derived.chunks_in_columns(columns));
    coords.sort_by_key(|c| (c.0.z, c.0.y, c.0.x));
    coords.dedup();
    let region = cover_box(columns);
    let items: Vec<_> = coords
        .into_iter()
        .map(|c| (c, derived.chunk_cells(c), c.cell_box()))
        .collect();
    // Restoring chunks cannot fail.
    let _ = rec.record(grid, region, |g| {
        Ok::<_, Infallible>(g.restore_chunks(items))
    });
}
