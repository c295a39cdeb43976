//! Integer coordinates on the global cell lattice and the chunk lattice (spec §1).
//!
//! Everything that addresses terrain data is an integer: positions only become
//! `f32` once, chunk-local, when a mesh is built. Chunk coordinates come from
//! Euclidean (floor) division so that cell −1 lies in chunk −1 at local 31;
//! truncating division would fold cells −31..=−1 into chunk 0.

use glam::IVec3;

/// Cells along each axis of a chunk.
pub const CHUNK_SIZE_CELLS: i32 = 32;
/// `log2(CHUNK_SIZE_CELLS)`, for shifts.
pub const CHUNK_SHIFT: u32 = 5;
/// Cells in one chunk (32³).
pub const CHUNK_VOLUME_CELLS: usize = 32 * 32 * 32;
/// Studs spanned by one cell along each axis.
pub const CELL_SIZE_STUDS: f32 = 4.0;
/// Studs spanned by one chunk along each axis (128).
pub const CHUNK_SIZE_STUDS: f32 = CELL_SIZE_STUDS * CHUNK_SIZE_CELLS as f32;

/// A cell coordinate on the global lattice. Cell `(i, j, k)` covers
/// `[4i, 4i + 4)` studs on each axis; its sample point is `4·(i + 0.5)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct CellCoord(pub IVec3);

/// A chunk coordinate: the floor division of a cell coordinate by 32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct ChunkCoord(pub IVec3);

impl CellCoord {
    /// Builds a cell coordinate from its three components.
    pub const fn new(x: i32, y: i32, z: i32) -> Self {
        Self(IVec3::new(x, y, z))
    }

    /// The chunk that contains this cell (Euclidean division by 32).
    pub fn chunk(self) -> ChunkCoord {
        ChunkCoord(IVec3::new(
            self.0.x >> CHUNK_SHIFT,
            self.0.y >> CHUNK_SHIFT,
            self.0.z >> CHUNK_SHIFT,
        ))
    }

    /// Position of this cell inside its chunk, each component in `0..32`.
    pub fn local(self) -> IVec3 {
        self.0 & IVec3::splat(CHUNK_SIZE_CELLS - 1)
    }

    /// Index of this cell in its chunk's dense array (x fastest, then y, then z).
    pub fn local_index(self) -> usize {
        local_index(self.local())
    }

    /// World-space position of the cell's sample point (its centre), in studs.
    pub fn sample_point_world(self) -> glam::DVec3 {
        (self.0.as_dvec3() + glam::DVec3::splat(0.5)) * CELL_SIZE_STUDS as f64
    }

    /// The cell containing a world-space point given in studs.
    pub fn containing_world(pos_world: glam::DVec3) -> Self {
        let c = (pos_world / CELL_SIZE_STUDS as f64).floor();
        Self(IVec3::new(c.x as i32, c.y as i32, c.z as i32))
    }
}

impl ChunkCoord {
    /// Builds a chunk coordinate from its three components.
    pub const fn new(x: i32, y: i32, z: i32) -> Self {
        Self(IVec3::new(x, y, z))
    }

    /// The global coordinate of this chunk's minimum cell.
    pub fn min_cell(self) -> CellCoord {
        CellCoord(self.0 * CHUNK_SIZE_CELLS)
    }

    /// The chunk's minimum corner in world studs, exact in `f64`.
    pub fn origin_world(self) -> glam::DVec3 {
        self.0.as_dvec3() * CHUNK_SIZE_STUDS as f64
    }

    /// The chunk's cells as an inclusive-exclusive box.
    pub fn cell_box(self) -> CellBox {
        let min = self.min_cell().0;
        CellBox::new(min, min + IVec3::splat(CHUNK_SIZE_CELLS))
    }

    /// The 26 face, edge and corner neighbours, in a fixed order.
    pub fn neighbours(self) -> impl Iterator<Item = ChunkCoord> {
        (-1..=1).flat_map(move |dz| {
            (-1..=1).flat_map(move |dy| {
                (-1..=1)
                    .filter(move |&dx| dx != 0 || dy != 0 || dz != 0)
                    .map(move |dx| ChunkCoord(self.0 + IVec3::new(dx, dy, dz)))
            })
        })
    }
}

/// Index into a 32³ dense chunk array for a local position in `0..32`³
/// (x fastest, then y, then z).
#[inline]
pub fn local_index(local: IVec3) -> usize {
    debug_assert!(local.cmpge(IVec3::ZERO).all() && local.cmplt(IVec3::splat(32)).all());
    (local.x | (local.y << 5) | (local.z << 10)) as usize
}

/// An axis-aligned box of cells, `min` inclusive and `max` exclusive, in global
/// cell coordinates. Empty when any `max` component is `<=` the `min` one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct CellBox {
    /// Inclusive minimum cell.
    pub min: IVec3,
    /// Exclusive maximum cell.
    pub max: IVec3,
}

impl CellBox {
    /// A box from an inclusive minimum and exclusive maximum.
    pub const fn new(min: IVec3, max: IVec3) -> Self {
        Self { min, max }
    }

    /// True when the box contains no cell.
    pub fn is_empty(&self) -> bool {
        self.max.cmple(self.min).any()
    }

    /// Number of cells in the box (0 when empty).
    pub fn volume_cells(&self) -> u64 {
        if self.is_empty() {
            return 0;
        }
        // In i64: a box spanning most of the i32 range must not wrap.
        let d = self.max.as_i64vec3() - self.min.as_i64vec3();
        (d.x as u64)
            .saturating_mul(d.y as u64)
            .saturating_mul(d.z as u64)
    }

    /// Intersection of two boxes (possibly empty).
    pub fn intersect(&self, other: &CellBox) -> CellBox {
        CellBox::new(self.min.max(other.min), self.max.min(other.max))
    }

    /// Smallest box containing both (an empty box is ignored).
    pub fn union(&self, other: &CellBox) -> CellBox {
        if self.is_empty() {
            return *other;
        }
        if other.is_empty() {
            return *self;
        }
        CellBox::new(self.min.min(other.min), self.max.max(other.max))
    }

    /// The box grown by `cells` on every side.
    pub fn expanded(&self, cells: i32) -> CellBox {
        CellBox::new(
            self.min - IVec3::splat(cells),
            self.max + IVec3::splat(cells),
        )
    }

    /// True when `cell` lies inside the box.
    pub fn contains(&self, cell: CellCoord) -> bool {
        cell.0.cmpge(self.min).all() && cell.0.cmplt(self.max).all()
    }

    /// Chunks overlapping the box, inclusive range of chunk coordinates
    /// `(min_chunk, max_chunk)`; `None` when the box is empty.
    pub fn chunk_range(&self) -> Option<(ChunkCoord, ChunkCoord)> {
        if self.is_empty() {
            return None;
        }
        Some((
            CellCoord(self.min).chunk(),
            CellCoord(self.max - IVec3::ONE).chunk(),
        ))
    }

    /// Iterates over the chunks overlapping the box, z outermost.
    pub fn chunks(&self) -> impl Iterator<Item = ChunkCoord> + use<> {
        let range = self.chunk_range();
        let (lo, hi) = match range {
            Some((lo, hi)) => (lo.0, hi.0),
            None => (IVec3::ZERO, IVec3::splat(-1)),
        };
        (lo.z..=hi.z).flat_map(move |z| {
            (lo.y..=hi.y).flat_map(move |y| (lo.x..=hi.x).map(move |x| ChunkCoord::new(x, y, z)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_cells_land_in_the_right_chunk() {
        let c = CellCoord::new(-1, -32, -33);
        assert_eq!(c.chunk(), ChunkCoord::new(-1, -1, -2));
        assert_eq!(c.local(), IVec3::new(31, 0, 31));
        assert_eq!(CellCoord::new(31, 32, 0).chunk(), ChunkCoord::new(0, 1, 0));
        assert_eq!(CellCoord::new(i32::MIN, 0, 0).chunk().0.x, i32::MIN / 32);
    }

    #[test]
    fn local_index_is_x_fastest() {
        assert_eq!(CellCoord::new(1, 0, 0).local_index(), 1);
        assert_eq!(CellCoord::new(0, 1, 0).local_index(), 32);
        assert_eq!(CellCoord::new(0, 0, 1).local_index(), 1024);
        assert_eq!(CellCoord::new(-1, -1, -1).local_index(), 32767);
    }

    #[test]
    fn box_chunks_cover_negative_ranges() {
        let b = CellBox::new(IVec3::new(-1, 0, 0), IVec3::new(1, 1, 1));
        let chunks: Vec<_> = b.chunks().collect();
        assert_eq!(
            chunks,
            vec![ChunkCoord::new(-1, 0, 0), ChunkCoord::new(0, 0, 0)]
        );
        assert_eq!(CellBox::new(IVec3::ZERO, IVec3::ZERO).chunks().count(), 0);
    }

    #[test]
    fn world_point_to_cell_floors() {
        let c = CellCoord::containing_world(glam::DVec3::new(-0.1, 3.99, 4.0));
        assert_eq!(c, CellCoord::new(-1, 0, 1));
    }
}
