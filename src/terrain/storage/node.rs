//! Nodes of the levels above the chunk (spec §13).
//!
//! Levels 0–3 are one mesh per chunk. A node of level `L >= 4` covers
//! `2^(L-3)` chunks per axis (2×2×2 nodes of level `L - 1`, a level-4 node
//! 2×2×2 chunks) and is meshed from [`NODE_SAMPLES`] coarse samples per axis,
//! the sample count of a level-3 chunk, each standing for a block of `2^L`
//! cells on a side. Node indices count node sides from the world origin, so
//! a node's minimum corner is always a chunk corner.

use glam::{DVec3, IVec3};

use crate::terrain::storage::coords::{
    CELL_SIZE_STUDS, CHUNK_SIZE_CELLS, CHUNK_SIZE_STUDS, ChunkCoord,
};

/// The first level above the chunk.
pub const FIRST_NODE_LEVEL: u8 = 4;
/// The coarsest level: a node 16,384 cells (65,536 studs) on a side, which
/// spans the longest draw distance.
pub const MAX_NODE_LEVEL: u8 = 12;
/// Samples per node axis at every node level (a level-3 chunk's count).
pub const NODE_SAMPLES: usize = 4;

/// One node: its level (`FIRST_NODE_LEVEL..=MAX_NODE_LEVEL`) and its index
/// in node sides of that level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeKey {
    /// Level of detail, at least [`FIRST_NODE_LEVEL`].
    pub level: u8,
    /// Index of the node in node sides (cells `index · side_cells`).
    pub index: IVec3,
}

impl NodeKey {
    /// The node of `level` at `index`.
    pub const fn new(level: u8, index: IVec3) -> NodeKey {
        NodeKey { level, index }
    }

    /// Chunks per node axis: `2^(level-3)`.
    pub fn chunks_per_axis(self) -> i32 {
        1 << (self.level - 3)
    }

    /// Cells per node side.
    pub fn side_cells(self) -> i64 {
        i64::from(CHUNK_SIZE_CELLS) << (self.level - 3)
    }

    /// Studs per node side.
    pub fn side_studs(self) -> f64 {
        f64::from(CHUNK_SIZE_STUDS) * f64::from(self.chunks_per_axis())
    }

    /// Cells per sample along each axis: `2^level`.
    pub fn spacing_cells(self) -> i64 {
        1 << self.level
    }

    /// The node's minimum chunk.
    pub fn min_chunk(self) -> ChunkCoord {
        ChunkCoord(self.index * self.chunks_per_axis())
    }

    /// The node's minimum corner, cells (i64: level 12 indices reach 2^38 cells).
    pub fn min_cell(self) -> [i64; 3] {
        let side = self.side_cells();
        [
            i64::from(self.index.x) * side,
            i64::from(self.index.y) * side,
            i64::from(self.index.z) * side,
        ]
    }

    /// The node's minimum corner in world studs.
    pub fn origin_world(self) -> DVec3 {
        let [x, y, z] = self.min_cell();
        DVec3::new(x as f64, y as f64, z as f64) * f64::from(CELL_SIZE_STUDS)
    }

    /// The node's box in world studs `(min, max)`.
    pub fn bounds_world(self) -> (DVec3, DVec3) {
        let min = self.origin_world();
        (min, min + DVec3::splat(self.side_studs()))
    }

    /// Distance from `pos_world` to the node's box, studs (0 inside).
    pub fn distance_studs(self, pos_world: DVec3) -> f64 {
        let (lo, hi) = self.bounds_world();
        (pos_world.clamp(lo, hi) - pos_world).length()
    }

    /// The node one level up that contains this one (`None` at [`MAX_NODE_LEVEL`]).
    pub fn parent(self) -> Option<NodeKey> {
        (self.level < MAX_NODE_LEVEL).then(|| NodeKey {
            level: self.level + 1,
            index: self.index.div_euclid(IVec3::splat(2)),
        })
    }

    /// The 8 nodes of the level below (`None` at [`FIRST_NODE_LEVEL`], whose
    /// children are chunks: see [`NodeKey::chunks`]).
    pub fn children(self) -> Option<[NodeKey; 8]> {
        (self.level > FIRST_NODE_LEVEL).then(|| {
            std::array::from_fn(|i| NodeKey {
                level: self.level - 1,
                index: self.index * 2
                    + IVec3::new((i & 1) as i32, ((i >> 1) & 1) as i32, (i >> 2) as i32),
            })
        })
    }

    /// The chunks a node covers, x fastest, then z, then y (`chunks_per_axis³`).
    pub fn chunks(self) -> impl Iterator<Item = ChunkCoord> {
        let n = self.chunks_per_axis();
        let min = self.min_chunk().0;
        (0..n).flat_map(move |y| {
            (0..n).flat_map(move |z| (0..n).map(move |x| ChunkCoord(min + IVec3::new(x, y, z))))
        })
    }

    /// The node of `level` containing `chunk`.
    pub fn containing_chunk(level: u8, chunk: ChunkCoord) -> NodeKey {
        let n = 1i32 << (level - 3);
        NodeKey {
            level,
            index: chunk.0.div_euclid(IVec3::splat(n)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_4_node_covers_2x2x2_chunks_with_16_cell_samples() {
        let k = NodeKey::new(4, IVec3::new(1, 0, -1));
        assert_eq!(k.chunks_per_axis(), 2);
        assert_eq!(k.side_cells(), 64);
        assert_eq!(k.spacing_cells() * NODE_SAMPLES as i64, k.side_cells());
        assert_eq!(k.min_chunk(), ChunkCoord::new(2, 0, -2));
        assert_eq!(k.chunks().count(), 8);
        assert!(k.chunks().all(|c| NodeKey::containing_chunk(4, c) == k));
        assert_eq!(k.origin_world(), DVec3::new(256.0, 0.0, -256.0));
        assert_eq!(k.side_studs(), 256.0);
    }

    #[test]
    fn parents_and_children_agree_at_every_level() {
        for level in FIRST_NODE_LEVEL + 1..=MAX_NODE_LEVEL {
            let k = NodeKey::new(level, IVec3::new(-3, 1, 5));
            let children = k.children().unwrap();
            for c in children {
                assert_eq!(c.parent(), Some(k));
                let (lo, hi) = c.bounds_world();
                let (plo, phi) = k.bounds_world();
                assert!(lo.cmpge(plo).all() && hi.cmple(phi).all());
            }
            assert_eq!(children[0].origin_world(), k.origin_world());
        }
        assert!(NodeKey::new(4, IVec3::ZERO).children().is_none());
        assert!(NodeKey::new(MAX_NODE_LEVEL, IVec3::ZERO).parent().is_none());
        // The coarsest node spans 65,536 studs: the longest draw distance.
        assert_eq!(
            NodeKey::new(MAX_NODE_LEVEL, IVec3::ZERO).side_studs(),
            65_536.0
        );
    }

    #[test]
    fn distance_is_to_the_box() {
        let k = NodeKey::new(4, IVec3::ZERO);
        assert_eq!(k.distance_studs(DVec3::splat(10.0)), 0.0);
        assert_eq!(k.distance_studs(DVec3::new(356.0, 10.0, 10.0)), 100.0);
    }
}
