//! Which chunks must be re-meshed after an edit (spec §8).
//!
//! A chunk at level L reads `2 << L` cells beyond each face. It needs a new
//! mesh exactly when an edit's changed extent intersects that padded read
//! region, which covers the chunk itself and, near borders, its face, edge and
//! corner neighbours. A removed chunk conservatively invalidates all 26.

use rustc_hash::FxHashSet;

use crate::terrain::storage::coords::{CHUNK_SIZE_CELLS, CellBox, ChunkCoord, ColumnCoord};
use crate::terrain::storage::grid::EditReport;

/// Cells read beyond each chunk face when meshing at `level` (2 at level 0, doubling per level).
pub fn padding_reach_cells(level: u8) -> i32 {
    2 << level
}

/// Chunks (the edited ones and their neighbours) whose padded read region at
/// `level` intersects `changed` (global cells, max exclusive).
pub fn chunks_reading(changed: &CellBox, level: u8) -> impl Iterator<Item = ChunkCoord> + '_ {
    let reach = padding_reach_cells(level);
    changed
        .expanded(reach)
        .chunks()
        .filter(move |c| !c.cell_box().expanded(reach).intersect(changed).is_empty())
}

/// Chunks whose padded read region at their own level (`level_of`) intersects
/// `changed`: the edited chunks and, near borders, their face, edge and corner
/// neighbours — farther for coarser neighbours, whose reach doubles per level.
pub fn chunks_reading_at_levels(
    changed: &CellBox,
    level_of: impl Fn(ChunkCoord) -> u8,
) -> Vec<ChunkCoord> {
    // The coarsest reach (level 3: 16 cells) never crosses a whole chunk.
    let max_reach = padding_reach_cells(3);
    changed
        .expanded(max_reach)
        .chunks()
        .filter(|&c| {
            let reach = padding_reach_cells(level_of(c));
            !c.cell_box().expanded(reach).intersect(changed).is_empty()
        })
        .collect()
}

/// The chunk columns whose low-poly heightfields read `changed` (global
/// cells, max exclusive): those it overlaps and, within one cell of their
/// border, the neighbours whose one-column apron reaches in.
pub fn columns_reading(changed: &CellBox) -> Vec<ColumnCoord> {
    if changed.is_empty() {
        return Vec::new();
    }
    let n = CHUNK_SIZE_CELLS;
    let (lo, hi) = (changed.min, changed.max);
    let x0 = (lo.x - 1).div_euclid(n);
    let x1 = hi.x.div_euclid(n);
    let z0 = (lo.z - 1).div_euclid(n);
    let z1 = hi.z.div_euclid(n);
    (z0..=z1)
        .flat_map(|z| (x0..=x1).map(move |x| ColumnCoord::new(x, z)))
        .collect()
}

/// The set of chunks to re-mesh at full detail after `report`, sorted (z, y, x).
pub fn chunks_to_remesh_l0(report: &EditReport) -> Vec<ChunkCoord> {
    let mut set: FxHashSet<ChunkCoord> = FxHashSet::default();
    for (_, bounds) in &report.changed {
        set.extend(chunks_reading(bounds, 0));
    }
    for removed in &report.removed {
        set.insert(*removed);
        set.extend(removed.neighbours());
    }
    let mut v: Vec<ChunkCoord> = set.into_iter().collect();
    v.sort_by_key(|c| (c.0.z, c.0.y, c.0.x));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::IVec3;

    fn edit(bounds: CellBox) -> EditReport {
        EditReport {
            revision: Some(1),
            changed: vec![(CellBox::chunks(&bounds).next().unwrap(), bounds)],
            removed: vec![],
        }
    }

    #[test]
    fn interior_edit_touches_only_its_chunk() {
        let b = CellBox::new(IVec3::splat(10), IVec3::splat(12));
        assert_eq!(
            chunks_to_remesh_l0(&edit(b)),
            vec![ChunkCoord::new(0, 0, 0)]
        );
    }

    #[test]
    fn edit_within_two_cells_of_a_face_reaches_that_neighbour() {
        // Cells 30..32 in x: within reach of chunk +x (which reads cells 30, 31).
        let b = CellBox::new(IVec3::new(30, 10, 10), IVec3::new(31, 11, 11));
        assert_eq!(
            chunks_to_remesh_l0(&edit(b)),
            vec![ChunkCoord::new(0, 0, 0), ChunkCoord::new(1, 0, 0)]
        );
        // Cell 29 is 3 cells from the face: no neighbour.
        let b = CellBox::new(IVec3::new(29, 10, 10), IVec3::new(30, 11, 11));
        assert_eq!(
            chunks_to_remesh_l0(&edit(b)),
            vec![ChunkCoord::new(0, 0, 0)]
        );
        // Cell 1 is read by chunk -x (which reads cells 32, 33 of its +x side = our 0, 1).
        let b = CellBox::new(IVec3::new(1, 10, 10), IVec3::new(2, 11, 11));
        assert_eq!(
            chunks_to_remesh_l0(&edit(b)),
            vec![ChunkCoord::new(-1, 0, 0), ChunkCoord::new(0, 0, 0)]
        );
    }

    #[test]
    fn corner_edit_reaches_all_seven_corner_neighbours() {
        let b = CellBox::new(IVec3::splat(31), IVec3::splat(32));
        assert_eq!(chunks_to_remesh_l0(&edit(b)).len(), 8);
    }

    #[test]
    fn coarser_neighbours_reach_farther() {
        // 3 cells from the +x face: beyond level 0's reach (2), within level 1's (4).
        let b = CellBox::new(IVec3::new(28, 10, 10), IVec3::new(29, 11, 11));
        let l0 = chunks_reading_at_levels(&b, |_| 0);
        assert_eq!(l0, vec![ChunkCoord::new(0, 0, 0)]);
        let coarse_east = |c: ChunkCoord| if c.0.x == 1 { 1 } else { 0 };
        let mut l1 = chunks_reading_at_levels(&b, coarse_east);
        l1.sort_by_key(|c| c.0.x);
        assert_eq!(l1, vec![ChunkCoord::new(0, 0, 0), ChunkCoord::new(1, 0, 0)]);
        assert_eq!(padding_reach_cells(3), 16);
    }

    #[test]
    fn columns_reading_reach_one_cell_across_a_column_border() {
        // Cells 10..12 in x and z: only the column itself.
        let b = CellBox::new(IVec3::new(10, 0, 10), IVec3::new(12, 5, 12));
        assert_eq!(columns_reading(&b), vec![ColumnCoord::new(0, 0)]);
        // Cell 31 in x is read by column +x's apron, cell 0 by column -x's.
        let b = CellBox::new(IVec3::new(31, 0, 10), IVec3::new(32, 5, 11));
        assert_eq!(
            columns_reading(&b),
            vec![ColumnCoord::new(0, 0), ColumnCoord::new(1, 0)]
        );
        let b = CellBox::new(IVec3::new(0, 0, 10), IVec3::new(1, 5, 11));
        assert_eq!(
            columns_reading(&b),
            vec![ColumnCoord::new(-1, 0), ColumnCoord::new(0, 0)]
        );
        assert!(columns_reading(&CellBox::new(IVec3::ZERO, IVec3::ZERO)).is_empty());
    }

    #[test]
    fn removal_invalidates_all_neighbours() {
        let r = EditReport {
            revision: Some(1),
            changed: vec![],
            removed: vec![ChunkCoord::new(0, 0, 0)],
        };
        assert_eq!(chunks_to_remesh_l0(&r).len(), 27);
    }
}
