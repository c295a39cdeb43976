//! Which columns a document change dirties (spec §14). A change dirties the
//! footprints of the operations it added, removed, edited or moved past
//! another, old and new. The **dirty closure** then grows to a fixed point:
//! an operation whose read area (footprint and halo) meets a dirty column
//! dirties its whole footprint, and an operation that writes a column some
//! member reads joins too (the member must see its writes, or their
//! absence, exactly as a whole derivation does). Re-deriving the members
//! alone, in document order, from the base cells of every column they read,
//! then gives exactly the cells of a whole derivation: no column outside the
//! closure changes, and no member reads a column another operation writes
//! without that operation being re-applied with it.
//!
//! Work is counted in the operations that meet the dirty area: an index
//! from chunk column to the operations writing and reading it finds the
//! candidates, and exact column rectangles decide, so far operations are
//! never visited and neighbours that only share a chunk column stay out.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::terrain::document::operation::{ColumnRect, Operation, OperationId};
use crate::terrain::storage::coords::ColumnCoord;

/// The footprints (chunk-column rectangles) a change from `old` to `new`
/// dirties: operations only in one, operations whose content differs (both
/// footprints), and operations whose order relative to the others changed
/// (found as those outside a longest run kept in order).
pub fn changed_footprints(old: &[&Operation], new: &[&Operation]) -> Vec<ColumnRect> {
    let old_by_id: FxHashMap<OperationId, &Operation> = old.iter().map(|o| (o.id, *o)).collect();
    let new_pos: FxHashMap<OperationId, (usize, &Operation)> = new
        .iter()
        .enumerate()
        .map(|(i, o)| (o.id, (i, *o)))
        .collect();
    let mut dirty = Vec::new();
    // Unchanged operations present in both, in old order, with new positions.
    let mut kept: Vec<(usize, &Operation)> = Vec::new();
    for o in old {
        match new_pos.get(&o.id) {
            Some((i, n)) if n.kind().is_same_as(o.kind()) => kept.push((*i, o)),
            Some((_, n)) => {
                dirty.push(o.footprint());
                dirty.push(n.footprint());
            }
            None => dirty.push(o.footprint()),
        }
    }
    for n in new {
        if !old_by_id.contains_key(&n.id) {
            dirty.push(n.footprint());
        }
    }
    let positions: Vec<usize> = kept.iter().map(|(i, _)| *i).collect();
    let in_order = longest_increasing(&positions);
    for (k, (_, o)) in kept.iter().enumerate() {
        if !in_order[k] {
            dirty.push(o.footprint());
        }
    }
    dirty.retain(|r| !r.is_empty());
    dirty
}

/// Marks the members of one longest strictly increasing subsequence of
/// `v` (patience sorting, O(n log n)).
fn longest_increasing(v: &[usize]) -> Vec<bool> {
    let mut tails: Vec<usize> = Vec::new(); // index into v of each pile's top
    let mut prev: Vec<Option<usize>> = vec![None; v.len()];
    for (i, &x) in v.iter().enumerate() {
        let pile = tails.partition_point(|&t| v[t] < x);
        prev[i] = pile.checked_sub(1).map(|p| tails[p]);
        if pile == tails.len() {
            tails.push(i);
        } else {
            tails[pile] = i;
        }
    }
    let mut keep = vec![false; v.len()];
    let mut at = tails.last().copied();
    while let Some(i) = at {
        keep[i] = true;
        at = prev[i];
    }
    keep
}

/// The dirty closure of a change over a document's visible operations.
/// Rectangles are exact columns (cells); the chunk-column sets cover them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Closure {
    /// Columns whose cells may change: the seeds and every member's
    /// footprint. Only these cells are written back.
    pub dirty_rects: Vec<ColumnRect>,
    /// The chunk columns the dirty rectangles cover.
    pub dirty: FxHashSet<ColumnCoord>,
    /// The chunk columns the members read (covering every member's read
    /// area and the seeds): the base cells a re-derivation starts from.
    pub read: FxHashSet<ColumnCoord>,
    /// Indices of the member operations in the visible order, ascending.
    pub members: Vec<usize>,
}

/// Per operation, its footprint and read area, and the index from chunk
/// column to the operations writing and reading it (candidates for the
/// exact rectangle tests).
struct ColumnIndex {
    writes: Vec<ColumnRect>,
    reads: Vec<ColumnRect>,
    writers: FxHashMap<ColumnCoord, Vec<usize>>,
    readers: FxHashMap<ColumnCoord, Vec<usize>>,
}

impl ColumnIndex {
    fn new(ops: &[&Operation]) -> ColumnIndex {
        let writes: Vec<ColumnRect> = ops.iter().map(|o| o.footprint()).collect();
        let reads: Vec<ColumnRect> = ops.iter().map(|o| o.read_area()).collect();
        let mut writers: FxHashMap<ColumnCoord, Vec<usize>> = FxHashMap::default();
        let mut readers: FxHashMap<ColumnCoord, Vec<usize>> = FxHashMap::default();
        for (i, rect) in writes.iter().enumerate() {
            for c in rect.columns() {
                writers.entry(c).or_default().push(i);
            }
        }
        for (i, rect) in reads.iter().enumerate() {
            for c in rect.columns() {
                readers.entry(c).or_default().push(i);
            }
        }
        ColumnIndex {
            writes,
            reads,
            writers,
            readers,
        }
    }
}

/// A rectangle entering the closure: dirty (members that read it join)
/// or read (members that write it join).
enum Growth {
    Dirty(ColumnRect),
    Read(ColumnRect),
}

/// The dirty closure of `seeds` (dirtied footprints) over `ops` (the
/// visible operations in order); see the module documentation. The growth
/// tests exact rectangles, so operations that only share a chunk column
/// with the dirty area stay out.
pub fn dirty_closure(ops: &[&Operation], seeds: &[ColumnRect]) -> Closure {
    let index = ColumnIndex::new(ops);
    let mut closure = Closure::default();
    let mut member = vec![false; ops.len()];
    let mut queue: Vec<Growth> = Vec::new();
    for seed in seeds {
        queue.push(Growth::Dirty(*seed));
        queue.push(Growth::Read(*seed));
    }
    while let Some(growth) = queue.pop() {
        let (rect, candidates, areas) = match growth {
            Growth::Dirty(rect) => {
                closure.dirty_rects.push(rect);
                closure.dirty.extend(rect.columns());
                (rect, &index.readers, &index.reads)
            }
            Growth::Read(rect) => {
                closure.read.extend(rect.columns());
                (rect, &index.writers, &index.writes)
            }
        };
        for column in rect.columns() {
            for &j in candidates.get(&column).into_iter().flatten() {
                if !member[j] && areas[j].intersects(&rect) {
                    member[j] = true;
                    queue.push(Growth::Dirty(index.writes[j]));
                    queue.push(Growth::Read(index.reads[j]));
                }
            }
        }
    }
    closure.members = (0..ops.len()).filter(|i| member[*i]).collect();
    closure
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::document::operation::OperationKind;
    use crate::terrain::storage::cell::Material;
    use crate::terrain::storage::coords::CellBox;
    use glam::IVec3;

    fn fill(id: u32, x0: i32, x1: i32) -> Operation {
        Operation::new(
            OperationId(id),
            OperationKind::Fill {
                region: CellBox::new(IVec3::new(x0, 0, 0), IVec3::new(x1, 4, 4)),
                material: Material::SAND,
                occupancy: 255,
                ignore_water: false,
            },
        )
    }

    #[test]
    fn longest_run_keeps_the_most_in_order() {
        assert_eq!(
            longest_increasing(&[0, 1, 2, 3]),
            vec![true, true, true, true]
        );
        // One moved to the front: only it leaves the run.
        let keep = longest_increasing(&[1, 2, 3, 0]);
        assert_eq!(keep, vec![true, true, true, false]);
    }

    #[test]
    fn only_changed_and_reordered_operations_are_dirty() {
        let (a, b, c) = (fill(1, 0, 10), fill(2, 100, 110), fill(3, 200, 210));
        let old = [&a, &b, &c];
        assert!(changed_footprints(&old, &old).is_empty());
        // c moved below a: only c's footprint is dirty.
        let swapped = [&c, &a, &b];
        assert_eq!(changed_footprints(&old, &swapped), vec![c.footprint()]);
        // b edited: both its footprints.
        let b2 = fill(2, 300, 310);
        let edited = [&a, &b2, &c];
        assert_eq!(
            changed_footprints(&old, &edited),
            vec![b.footprint(), b2.footprint()]
        );
    }

    fn sea(id: u32, x0: i32, x1: i32) -> Operation {
        Operation::new(
            OperationId(id),
            OperationKind::SeaLevel {
                region: CellBox::new(IVec3::new(x0, 0, 0), IVec3::new(x1, 4, 4)),
                level_cells: 3.0,
            },
        )
    }

    #[test]
    fn a_halo_over_a_dirty_column_and_a_write_into_a_read_column_both_join() {
        // The sea level writes column 0 only but reads one cell into
        // columns -1 and 1.
        let s = sea(1, 0, 32);
        let right = fill(2, 32, 40);
        let ops = [&s, &right];
        // Its halo meets the dirty cells at x = 32: it joins, column 0 is
        // dirty. A fill further right (x 40..50) shares column 1 with the
        // halo but no cell, and stays out.
        assert!(
            dirty_closure(&[&s], &[fill(3, 40, 50).footprint()])
                .members
                .is_empty()
        );
        let cl = dirty_closure(&[&s], &[right.footprint()]);
        assert_eq!(cl.members, vec![0]);
        assert!(cl.dirty.contains(&ColumnCoord::new(0, 0)));
        // The fill writes column 1, which the sea level reads: when the sea
        // level is dirtied, the fill is re-applied with it.
        let cl = dirty_closure(&ops, &[fill(3, 0, 4).footprint()]);
        assert_eq!(cl.members, vec![0, 1]);
        assert!(cl.read.contains(&ColumnCoord::new(-1, 0)));
        assert!(!cl.dirty.contains(&ColumnCoord::new(-1, 0)));
    }

    #[test]
    fn the_closure_follows_overlaps_not_the_whole_document() {
        // a and b overlap in chunk column 0; c lies far away.
        let (a, b, c) = (fill(1, 0, 10), fill(2, 5, 40), fill(3, 1000, 1010));
        let ops = [&a, &b, &c];
        let cl = dirty_closure(&ops, &[a.footprint()]);
        assert_eq!(cl.members, vec![0, 1]);
        // b reaches into column 1.
        assert!(cl.dirty.contains(&ColumnCoord::new(1, 0)));
        assert!(!cl.dirty.contains(&ColumnCoord::new(31, 0)));
        let far = dirty_closure(&ops, &[c.footprint()]);
        assert_eq!(far.members, vec![2]);
    }
}
