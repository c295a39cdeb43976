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

// The valid lattice: the one definition that edits, saving and loading all
// check against. It is half the `i32` range on every axis (cells
// −2^30..2^30, chunks −2^25..2^25), so any arithmetic a tool does next to a
// valid cell (a chunk's exclusive maximum, the cells one chunk beyond a
// mesh's border, a brush's reach, a paste's size) stays far from `i32`
// overflow, and every chunk a valid cell lies in can be saved and reopened.

/// Smallest chunk coordinate of the valid lattice, on every axis (−2^25).
pub const MIN_CHUNK_COORD: i32 = -(1 << 25);
/// Largest chunk coordinate of the valid lattice, on every axis (2^25 − 1).
pub const MAX_CHUNK_COORD: i32 = (1 << 25) - 1;
/// Smallest cell coordinate of the valid lattice, on every axis (−2^30):
/// the minimum cell of chunk [`MIN_CHUNK_COORD`].
pub const MIN_CELL_COORD: i32 = MIN_CHUNK_COORD * CHUNK_SIZE_CELLS;
/// Largest cell coordinate of the valid lattice, on every axis (2^30 − 1):
/// the maximum cell of chunk [`MAX_CHUNK_COORD`].
pub const MAX_CELL_COORD: i32 = (MAX_CHUNK_COORD + 1) * CHUNK_SIZE_CELLS - 1;
/// Every valid cell, as an inclusive-exclusive box.
pub const LATTICE_CELLS: CellBox = CellBox::new(
    IVec3::splat(MIN_CELL_COORD),
    IVec3::splat(MAX_CELL_COORD + 1),
);

/// True when a chunk coordinate component (as read from a file, any `i64`)
/// lies on the valid lattice: a range check, so no value wraps.
pub fn chunk_component_on_lattice(v: i64) -> bool {
    (i64::from(MIN_CHUNK_COORD)..=i64::from(MAX_CHUNK_COORD)).contains(&v)
}

/// A box of cells that leaves the valid lattice ([`LATTICE_CELLS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "region from {} to {} (exclusive) leaves the cell lattice: every cell must lie within \
     {MIN_CELL_COORD}..={MAX_CELL_COORD} on each axis",
    .0.min, .0.max
)]
pub struct OutsideLattice(pub CellBox);

/// Checks that every cell of `region` lies on the valid lattice (an empty
/// box passes: it holds no cell).
///
/// # Errors
/// [`OutsideLattice`] naming the box otherwise.
pub fn check_on_lattice(region: &CellBox) -> Result<(), OutsideLattice> {
    if region.is_empty() || LATTICE_CELLS.contains_box(region) {
        Ok(())
    } else {
        Err(OutsideLattice(*region))
    }
}

/// A cell coordinate on the global lattice. Cell `(i, j, k)` covers
/// `[4i, 4i + 4)` studs on each axis; its sample point is `4·(i + 0.5)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct CellCoord(pub IVec3);

/// A chunk coordinate: the floor division of a cell coordinate by 32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct ChunkCoord(pub IVec3);

/// A chunk column: the chunks `(x, *, z)` at every height. Streaming worlds
/// load, keep and evict whole columns (spec §12), because the generator and
/// heightmap imports build a column's chunks together from one table of
/// surface heights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct ColumnCoord {
    /// Chunk x.
    pub x: i32,
    /// Chunk z.
    pub z: i32,
}

impl ColumnCoord {
    /// The column at chunk `(x, z)`.
    pub const fn new(x: i32, z: i32) -> Self {
        ColumnCoord { x, z }
    }

    /// The column holding `chunk`.
    pub const fn of(chunk: ChunkCoord) -> Self {
        ColumnCoord {
            x: chunk.0.x,
            z: chunk.0.z,
        }
    }

    /// The column and its 8 neighbours, row by row (z, then x).
    pub fn with_neighbours(self) -> impl Iterator<Item = ColumnCoord> {
        (-1..=1)
            .flat_map(move |dz| (-1..=1).map(move |dx| ColumnCoord::new(self.x + dx, self.z + dz)))
    }

    /// World-space centre of the column's footprint `(x, z)`, in studs.
    pub fn centre_xz_world(self) -> glam::DVec2 {
        (glam::DVec2::new(self.x as f64, self.z as f64) + 0.5) * CHUNK_SIZE_STUDS as f64
    }

    /// Horizontal distance from `pos_world` to the column's footprint
    /// (0 inside it), in studs.
    pub fn distance_xz_studs(self, pos_world: glam::DVec3) -> f64 {
        let half = CHUNK_SIZE_STUDS as f64 * 0.5;
        let d = (glam::DVec2::new(pos_world.x, pos_world.z) - self.centre_xz_world()).abs()
            - glam::DVec2::splat(half);
        d.max(glam::DVec2::ZERO).length()
    }
}

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

    /// True when the cell lies on the valid lattice ([`LATTICE_CELLS`]).
    pub fn is_on_lattice(self) -> bool {
        LATTICE_CELLS.contains(self)
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

    /// The chunk at `(x, y, z)` as read from a file, when every component
    /// lies on the valid lattice (`None` otherwise, never a wrapped value).
    pub fn from_i64(x: i64, y: i64, z: i64) -> Option<Self> {
        if [x, y, z].into_iter().all(chunk_component_on_lattice) {
            // In range, so each fits in an `i32`.
            Some(Self::new(x as i32, y as i32, z as i32))
        } else {
            None
        }
    }

    /// True when every component lies in
    /// [`MIN_CHUNK_COORD`]`..=`[`MAX_CHUNK_COORD`].
    pub fn is_on_lattice(self) -> bool {
        self.0.cmpge(IVec3::splat(MIN_CHUNK_COORD)).all()
            && self.0.cmple(IVec3::splat(MAX_CHUNK_COORD)).all()
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
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(deny_unknown_fields)]
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

    /// True when every cell of `other` lies inside this box (always for an
    /// empty `other`).
    pub fn contains_box(&self, other: &CellBox) -> bool {
        other.is_empty() || (other.min.cmpge(self.min).all() && other.max.cmple(self.max).all())
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

    /// Iterates over the chunk columns the box overlaps (whatever its
    /// height), z outermost.
    pub fn columns(&self) -> impl Iterator<Item = ColumnCoord> + use<> {
        let (lo, hi) = match self.chunk_range() {
            Some((lo, hi)) => (lo.0, hi.0),
            None => (IVec3::ZERO, IVec3::splat(-1)),
        };
        (lo.z..=hi.z).flat_map(move |z| (lo.x..=hi.x).map(move |x| ColumnCoord::new(x, z)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_box_lists_the_columns_it_overlaps_once_each() {
        // Cells -1..33 in x (columns -1, 0, 1), 0..100 high, 5..6 in z.
        let b = CellBox::new(IVec3::new(-1, 0, 5), IVec3::new(33, 100, 6));
        let cols: Vec<ColumnCoord> = b.columns().collect();
        assert_eq!(
            cols,
            vec![
                ColumnCoord::new(-1, 0),
                ColumnCoord::new(0, 0),
                ColumnCoord::new(1, 0)
            ]
        );
        assert_eq!(CellBox::new(IVec3::ZERO, IVec3::ZERO).columns().count(), 0);
    }

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
    fn the_lattice_is_one_range_of_cells_and_chunks() {
        assert_eq!(MIN_CELL_COORD, -(1 << 30));
        assert_eq!(MAX_CELL_COORD, (1 << 30) - 1);
        let lo = CellCoord::new(MIN_CELL_COORD, MIN_CELL_COORD, MIN_CELL_COORD);
        let hi = CellCoord::new(MAX_CELL_COORD, MAX_CELL_COORD, MAX_CELL_COORD);
        assert!(lo.is_on_lattice() && hi.is_on_lattice());
        assert_eq!(lo.chunk(), ChunkCoord(IVec3::splat(MIN_CHUNK_COORD)));
        assert_eq!(hi.chunk(), ChunkCoord(IVec3::splat(MAX_CHUNK_COORD)));
        assert!(lo.chunk().is_on_lattice() && hi.chunk().is_on_lattice());
        assert!(!CellCoord::new(MIN_CELL_COORD - 1, 0, 0).is_on_lattice());
        assert!(!CellCoord::new(0, MAX_CELL_COORD + 1, 0).is_on_lattice());
        assert!(!CellCoord::new(i32::MIN, 0, 0).chunk().is_on_lattice());
        assert!(!ChunkCoord::new(0, 0, MAX_CHUNK_COORD + 1).is_on_lattice());
        // Chunk boxes at both ends stay representable.
        assert_eq!(
            ChunkCoord(IVec3::splat(MAX_CHUNK_COORD)).cell_box().max,
            LATTICE_CELLS.max
        );
        // Rows read from a file: range checks, no wrapping.
        for bad in [
            i64::MIN,
            i64::MAX,
            i64::from(MIN_CHUNK_COORD) - 1,
            i64::from(MAX_CHUNK_COORD) + 1,
            i64::from(i32::MIN),
        ] {
            assert!(!chunk_component_on_lattice(bad), "{bad}");
            assert_eq!(ChunkCoord::from_i64(bad, 0, 0), None);
            assert_eq!(ChunkCoord::from_i64(0, 0, bad), None);
        }
        assert_eq!(
            ChunkCoord::from_i64(MIN_CHUNK_COORD.into(), 0, MAX_CHUNK_COORD.into()),
            Some(ChunkCoord::new(MIN_CHUNK_COORD, 0, MAX_CHUNK_COORD))
        );
        // Boxes: inside, touching the ends, or leaving them.
        let edge = CellBox::new(lo.0, lo.0 + IVec3::splat(8));
        assert_eq!(check_on_lattice(&edge), Ok(()));
        assert_eq!(check_on_lattice(&LATTICE_CELLS), Ok(()));
        let out = CellBox::new(IVec3::new(i32::MIN, 0, 0), IVec3::new(-2147483600, 8, 8));
        let err = check_on_lattice(&out).unwrap_err();
        assert_eq!(err, OutsideLattice(out));
        assert!(err.to_string().contains("leaves the cell lattice"), "{err}");
        let past_max = CellBox::new(IVec3::ZERO, IVec3::new(1, MAX_CELL_COORD + 2, 1));
        assert!(check_on_lattice(&past_max).is_err());
        assert_eq!(
            check_on_lattice(&CellBox::new(IVec3::MIN, IVec3::MIN)),
            Ok(())
        );
    }

    #[test]
    fn world_point_to_cell_floors() {
        let c = CellCoord::containing_world(glam::DVec3::new(-0.1, 3.99, 4.0));
        assert_eq!(c, CellCoord::new(-1, 0, 1));
    }
}
