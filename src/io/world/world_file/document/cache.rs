//! The file's cells as a cache of the derivation, and the base cells they
//! were derived from.
//!
//! - **Column keys.** Every chunk column some visible operation may write
//!   gets a key: the XXH3-64 of the record hashes of those operations, in
//!   order. Reopening computes the keys again from the document; a column
//!   whose key differs (an operation changed, moved, hid or appeared while
//!   the file was closed) is stale, and its dirty closure is re-derived
//!   before the world is shown.
//! - **Base columns.** Where the derived cells differ from the base's, the
//!   base's chunks of that column are stored (a column whose base holds
//!   no chunk stores one empty chunk, so it is still listed); everywhere
//!   else the base is the derived cells themselves.

use rustc_hash::{FxHashMap, FxHashSet};

use super::record::KeyedOperation;
use crate::terrain::document::base::BaseColumns;
use crate::terrain::document::operation::ColumnRect;
use crate::terrain::storage::cell::Cell;
use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::{ChunkCoord, ColumnCoord};
use crate::terrain::storage::grid::Grid;

/// The key of every chunk column a visible operation may write.
pub(super) fn column_keys(keyed: &[KeyedOperation]) -> FxHashMap<ColumnCoord, u64> {
    let mut hashes: FxHashMap<ColumnCoord, Vec<u64>> = FxHashMap::default();
    for (footprint, hash) in keyed {
        for column in footprint.columns() {
            hashes.entry(column).or_default().push(*hash);
        }
    }
    hashes
        .into_iter()
        .map(|(column, list)| {
            let bytes: Vec<u8> = list.iter().flat_map(|h| h.to_le_bytes()).collect();
            (column, xxhash_rust::xxh3::xxh3_64(&bytes))
        })
        .collect()
}

/// The chunk columns whose cached cells may be stale: keyed differently
/// in the file (`stored`) and now (`current`), or keyed in only one.
pub(super) fn stale_columns(
    stored: &FxHashMap<ColumnCoord, u64>,
    current: &FxHashMap<ColumnCoord, u64>,
) -> Vec<ColumnRect> {
    let mut stale: Vec<ColumnCoord> = stored
        .iter()
        .filter(|(c, k)| current.get(c) != Some(k))
        .map(|(c, _)| *c)
        .chain(current.keys().filter(|c| !stored.contains_key(c)).copied())
        .collect();
    stale.sort();
    stale.into_iter().map(ColumnRect::of_chunk_column).collect()
}

/// A column's chunks as `(y, hash)`, sorted, empty chunks left out: equal
/// lists are equal cells.
fn column_signature(mut chunks: Vec<(i32, u64)>) -> Vec<(i32, u64)> {
    chunks.sort_unstable();
    chunks
}

/// The base chunks to store: those of every chunk column any operation
/// (visible or hidden) may write whose base cells differ from the derived
/// cells (`derived`: every stored chunk's hash after the save), each such
/// column whole, or as one empty chunk when its base holds none.
pub(super) fn base_overrides(
    base: &BaseColumns,
    footprints: &[ColumnRect],
    derived: &FxHashMap<ChunkCoord, u64>,
) -> Vec<(ChunkCoord, ChunkCells)> {
    let columns: FxHashSet<ColumnCoord> = footprints.iter().flat_map(|f| f.columns()).collect();
    if columns.is_empty() {
        return Vec::new();
    }
    let empty_hash = ChunkCells::Uniform(Cell::EMPTY).content_hash();
    let mut derived_by_column: FxHashMap<ColumnCoord, Vec<(i32, u64)>> = FxHashMap::default();
    for (coord, hash) in derived {
        let column = ColumnCoord::of(*coord);
        if *hash != empty_hash && columns.contains(&column) {
            derived_by_column
                .entry(column)
                .or_default()
                .push((coord.0.y, *hash));
        }
    }
    let mut sorted: Vec<ColumnCoord> = columns.into_iter().collect();
    sorted.sort();
    let mut base_by_column: FxHashMap<ColumnCoord, Vec<(ChunkCoord, ChunkCells)>> =
        FxHashMap::default();
    for (coord, cells) in base.chunks(&sorted) {
        if !cells.is_all_empty() {
            base_by_column
                .entry(ColumnCoord::of(coord))
                .or_default()
                .push((coord, cells));
        }
    }
    let mut out = Vec::new();
    for column in sorted {
        let chunks = base_by_column.remove(&column).unwrap_or_default();
        let base_sig = column_signature(
            chunks
                .iter()
                .map(|(c, cells)| (c.0.y, cells.content_hash()))
                .collect(),
        );
        let derived_sig = column_signature(derived_by_column.remove(&column).unwrap_or_default());
        if base_sig == derived_sig {
            continue;
        }
        if chunks.is_empty() {
            out.push((
                ChunkCoord::new(column.x, 0, column.z),
                ChunkCells::Uniform(Cell::EMPTY),
            ));
        } else {
            out.extend(chunks);
        }
    }
    out
}

/// The base of an opened world: its derived cells (`grid`), with every
/// column that has stored base chunks (`overrides`) taken from those.
pub(super) fn base_from(grid: &Grid, overrides: Vec<(ChunkCoord, ChunkCells)>) -> BaseColumns {
    let replaced: FxHashSet<ColumnCoord> =
        overrides.iter().map(|(c, _)| ColumnCoord::of(*c)).collect();
    let kept = grid
        .chunks()
        .filter(|(c, _)| !replaced.contains(&ColumnCoord::of(*c)))
        .map(|(c, chunk)| (c, chunk.cells.clone()));
    BaseColumns::kept_chunks(kept.chain(overrides))
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::IVec2;

    fn rect(x0: i32, z0: i32, x1: i32, z1: i32) -> ColumnRect {
        ColumnRect {
            min: IVec2::new(x0, z0),
            max: IVec2::new(x1, z1),
        }
    }

    #[test]
    fn keys_follow_the_operations_over_each_column_in_order() {
        let a = (rect(0, 0, 40, 10), 1);
        let b = (rect(40, 0, 70, 10), 2);
        let keys = column_keys(&[a, b]);
        assert_eq!(keys.len(), 3);
        let swapped = column_keys(&[b, a]);
        let c = |x| ColumnCoord::new(x, 0);
        assert_eq!(keys[&c(0)], swapped[&c(0)], "only a meets column 0");
        assert_eq!(keys[&c(2)], swapped[&c(2)], "only b meets column 2");
        assert_ne!(keys[&c(1)], swapped[&c(1)], "order matters where both meet");
        let moved = column_keys(&[(rect(64, 0, 100, 10), 1), b]);
        let stale = stale_columns(&keys, &moved);
        let listed: Vec<ColumnCoord> = stale.iter().flat_map(|r| r.columns()).collect();
        // Column 0 lost `a`, column 1 lost `a`, column 2 gained it, column 3 is new.
        assert_eq!(listed, vec![c(0), c(1), c(2), c(3)]);
        assert!(stale_columns(&keys, &keys).is_empty());
    }
}
