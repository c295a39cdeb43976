//! One 32³ chunk of cells in copy-on-write storage (spec §3).
//!
//! Most generated chunks are all one cell (solid rock underground, air above),
//! so storage is either a single [`Cell`] or a dense array behind an [`Arc`].
//! Cloning a chunk never copies cells; a write copies shared storage first.

use std::sync::Arc;

use glam::IVec3;

use crate::terrain::storage::cell::{Cell, Material};
use crate::terrain::storage::coords::{CHUNK_SIZE_CELLS, CHUNK_VOLUME_CELLS, CellBox, local_index};

/// Number of recent edit bounds each chunk remembers (spec §3).
pub const EDIT_HISTORY_LEN: usize = 6;

/// The cells of one chunk: either one cell repeated 32768 times, or a dense
/// array indexed by [`local_index`] (x fastest), shared by reference count.
#[derive(Clone, Debug)]
pub enum ChunkCells {
    /// Every cell of the chunk equals this one.
    Uniform(Cell),
    /// 32768 cells, x fastest, then y, then z.
    Dense(Arc<[Cell]>),
}

impl ChunkCells {
    /// True when both hold the same 32768 cells, whatever their storage
    /// form. Shared storage (the same `Arc`, as after an undo) is equal
    /// without reading a cell.
    pub fn same_cells(&self, other: &ChunkCells) -> bool {
        match (self, other) {
            (ChunkCells::Uniform(a), ChunkCells::Uniform(b)) => a == b,
            (ChunkCells::Dense(a), ChunkCells::Dense(b)) => Arc::ptr_eq(a, b) || a[..] == b[..],
            (ChunkCells::Uniform(u), ChunkCells::Dense(d))
            | (ChunkCells::Dense(d), ChunkCells::Uniform(u)) => d.iter().all(|c| c == u),
        }
    }

    /// Dense storage from a 32768-cell vector, compacted to [`ChunkCells::Uniform`]
    /// when every cell is equal.
    ///
    /// # Panics
    /// When `cells.len() != 32768` (a caller bug, not bad input).
    pub fn from_dense(cells: Vec<Cell>) -> ChunkCells {
        assert_eq!(cells.len(), CHUNK_VOLUME_CELLS, "a chunk holds 32768 cells");
        match uniform_value(&cells) {
            Some(c) => ChunkCells::Uniform(c),
            None => ChunkCells::Dense(Arc::from(cells)),
        }
    }

    /// This storage with material `from` replaced by `to` (occupancies
    /// kept); `None` when no cell holds `from`.
    pub fn with_material_replaced(&self, from: Material, to: Material) -> Option<ChunkCells> {
        match self {
            ChunkCells::Uniform(c) => (c.material() == from)
                .then(|| ChunkCells::Uniform(c.with_material_replaced(from, to))),
            ChunkCells::Dense(cells) => {
                Cell::replaced_in(cells, from, to).map(ChunkCells::from_dense)
            }
        }
    }

    /// The cell at a local position in `0..32`³.
    #[inline]
    pub fn get(&self, local: IVec3) -> Cell {
        match self {
            ChunkCells::Uniform(c) => *c,
            ChunkCells::Dense(cells) => cells[local_index(local)],
        }
    }

    /// The single cell when storage is uniform.
    pub fn as_uniform(&self) -> Option<Cell> {
        match self {
            ChunkCells::Uniform(c) => Some(*c),
            ChunkCells::Dense(_) => None,
        }
    }

    /// The dense array when storage is dense.
    pub fn as_dense(&self) -> Option<&[Cell]> {
        match self {
            ChunkCells::Uniform(_) => None,
            ChunkCells::Dense(cells) => Some(cells),
        }
    }

    /// True when every cell is [`Cell::EMPTY`].
    pub fn is_all_empty(&self) -> bool {
        matches!(self, ChunkCells::Uniform(c) if c.is_empty())
    }

    /// Heap bytes held by this storage (the dense array; 0 when uniform).
    /// Shared storage is counted in full by every holder.
    pub fn heap_bytes(&self) -> usize {
        match self {
            ChunkCells::Uniform(_) => 0,
            ChunkCells::Dense(cells) => std::mem::size_of_val::<[Cell]>(cells),
        }
    }

    /// True when both values share the same dense allocation (or are equal uniform cells).
    pub fn shares_storage_with(&self, other: &ChunkCells) -> bool {
        match (self, other) {
            (ChunkCells::Dense(a), ChunkCells::Dense(b)) => Arc::ptr_eq(a, b),
            (ChunkCells::Uniform(a), ChunkCells::Uniform(b)) => a == b,
            _ => false,
        }
    }

    /// Mutable access to dense cells, copying shared storage first
    /// (copy-on-write) and expanding uniform storage.
    pub fn make_dense_mut(&mut self) -> &mut [Cell] {
        if let ChunkCells::Uniform(c) = *self {
            *self = ChunkCells::Dense(Arc::from(vec![c; CHUNK_VOLUME_CELLS]));
        }
        match self {
            ChunkCells::Dense(cells) => Arc::make_mut(cells),
            // Just replaced a uniform value by dense storage above.
            ChunkCells::Uniform(_) => unreachable!("storage was made dense above"),
        }
    }

    /// Re-checks dense storage and replaces it by a uniform cell when all cells are equal.
    pub fn compact(&mut self) {
        if let ChunkCells::Dense(cells) = self
            && let Some(c) = uniform_value(cells)
        {
            *self = ChunkCells::Uniform(c);
        }
    }

    /// Stable 64-bit content hash (XXH3-64 over the 32768 cells' `[material,
    /// occupancy]` bytes in index order). Uniform and dense storage of the same
    /// content hash equal; the value does not depend on machine or run.
    pub fn content_hash(&self) -> u64 {
        match self {
            ChunkCells::Dense(cells) => {
                // Cell is repr(C) {u8, u8}: its bytes are exactly [material, occupancy].
                let bytes: &[u8] = cell_bytes(cells);
                xxhash_rust::xxh3::xxh3_64(bytes)
            }
            ChunkCells::Uniform(c) => {
                let mut h = xxhash_rust::xxh3::Xxh3::new();
                let row = [c.to_bytes(); 1024];
                let row_bytes: Vec<u8> = row.iter().flatten().copied().collect();
                for _ in 0..CHUNK_VOLUME_CELLS / 1024 {
                    h.update(&row_bytes);
                }
                h.digest()
            }
        }
    }
}

/// Bytes of one chunk's dense storage (32768 cells of 2 bytes: 64 KiB).
const DENSE_STORAGE_BYTES: usize = CHUNK_VOLUME_CELLS * std::mem::size_of::<Cell>();

/// Asks the C allocator to serve every allocation of at least
/// [`DENSE_STORAGE_BYTES`] from its own memory mapping, so a dense chunk's
/// storage returns to the system the moment its last copy (the grid's, an
/// undo step's, a queued mesh job's) is dropped. Call it first thing in the
/// process, so every chunk is allocated under it.
///
/// Why: edits replace dense chunks all session long (copy on write) and the
/// undo history drops the oldest copies, so 64 KiB blocks are freed and
/// allocated between the small allocations of every frame. From the shared
/// heap, the holes they leave are split by smaller allocations and cannot
/// take the next chunk, and the heap grows with the number of strokes, not
/// with the world: from 500 to 2,000 strokes on the default world the main
/// heap grew 87 MiB while the cells alive grew 51 MiB. Mapped on its own, a
/// chunk costs exactly its pages (at the price of fresh, zeroed pages for
/// each chunk an edit copies).
///
/// glibc only (its `M_MMAP_THRESHOLD`; this also turns off glibc's moving
/// threshold, which would send 64 KiB blocks back to the heap after the
/// first large free). Elsewhere it does nothing. Returns whether the
/// allocator took the setting.
pub fn map_dense_chunks_separately() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let Ok(threshold) = libc::c_int::try_from(DENSE_STORAGE_BYTES) else {
            return false;
        };
        // SAFETY: mallopt only changes allocator parameters; glibc documents
        // M_MMAP_THRESHOLD as settable at any time, and it affects later
        // allocations only.
        unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, threshold) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// The raw bytes of a cell slice, `[material, occupancy]` per cell.
pub fn cell_bytes(cells: &[Cell]) -> &[u8] {
    // SAFETY: Cell is #[repr(C)] with two u8 fields (size asserted to 2, align 1),
    // so any slice of cells is a valid, fully initialized byte slice of twice its length.
    unsafe { std::slice::from_raw_parts(cells.as_ptr().cast::<u8>(), std::mem::size_of_val(cells)) }
}

fn uniform_value(cells: &[Cell]) -> Option<Cell> {
    let first = *cells.first()?;
    cells.iter().all(|&c| c == first).then_some(first)
}

/// The most recent edits' local bounds. When it is full, the two oldest
/// entries merge into one (the union of their boxes, stamped with the newer
/// revision): the answer for an old reader may grow, never miss an edit, and
/// a stroke of many brush applications keeps a tight bound instead of
/// falling back to the whole chunk.
#[derive(Clone, Debug, Default)]
pub struct EditHistory {
    /// Oldest first; at most [`EDIT_HISTORY_LEN`].
    entries: Vec<(u64, CellBox)>,
}

impl EditHistory {
    /// Records the local bounds (chunk-local cells, `0..=32`) of an edit at `revision`.
    pub fn push(&mut self, revision: u64, bounds_local: CellBox) {
        if self.entries.len() == EDIT_HISTORY_LEN {
            let (_, oldest) = self.entries.remove(0);
            let (_, next) = &mut self.entries[0];
            *next = next.union(&oldest);
        }
        self.entries.push((revision, bounds_local));
    }

    /// A box holding every cell changed by edits newer than `since_revision`
    /// (exact while the history holds those edits separately; a superset
    /// once older entries merged). An empty box when no recorded edit is
    /// newer. Always `Some` (kept for callers that treat `None` as "the whole
    /// chunk").
    pub fn changed_since(&self, since_revision: u64) -> Option<CellBox> {
        let mut out = CellBox::new(IVec3::ZERO, IVec3::ZERO);
        for &(rev, bounds) in &self.entries {
            if rev > since_revision {
                out = out.union(&bounds);
            }
        }
        Some(out)
    }
}

/// A chunk: its cells, the revision that last changed it, and its recent edit bounds.
#[derive(Clone, Debug)]
pub struct Chunk {
    /// The chunk's cells.
    pub cells: ChunkCells,
    /// Grid revision of the last edit that changed this chunk (0 when generated).
    pub revision: u64,
    /// Bounds of the most recent edits, chunk-local.
    pub edits: EditHistory,
}

impl Chunk {
    /// A chunk holding `cells`, stamped with `revision` and no edit history.
    pub fn new(cells: ChunkCells, revision: u64) -> Chunk {
        Chunk {
            cells,
            revision,
            edits: EditHistory::default(),
        }
    }

    /// The chunk's local box `0..32`³ (used as "changed extent" when history expired).
    pub fn full_local_box() -> CellBox {
        CellBox::new(IVec3::ZERO, IVec3::splat(CHUNK_SIZE_CELLS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::cell::Material;

    #[test]
    fn dense_storage_is_one_64_kib_block_and_glibc_maps_it_separately() {
        assert_eq!(DENSE_STORAGE_BYTES, 65536);
        let cells = ChunkCells::from_dense(
            (0..CHUNK_VOLUME_CELLS)
                .map(|i| Cell::new(Material::ROCK, (i % 256) as u8))
                .collect(),
        );
        assert_eq!(cells.heap_bytes(), DENSE_STORAGE_BYTES);
        assert_eq!(
            map_dense_chunks_separately(),
            cfg!(all(target_os = "linux", target_env = "gnu"))
        );
    }

    #[test]
    fn uniform_chunk_is_stored_compactly() {
        let cells = ChunkCells::from_dense(vec![Cell::full(Material::ROCK); CHUNK_VOLUME_CELLS]);
        assert!(matches!(cells, ChunkCells::Uniform(c) if c == Cell::full(Material::ROCK)));
        assert_eq!(cells.heap_bytes(), 0);
        assert!(std::mem::size_of::<ChunkCells>() <= 16);
    }

    #[test]
    fn uniform_and_dense_hash_equal() {
        let u = ChunkCells::Uniform(Cell::full(Material::DIRT));
        let d = ChunkCells::Dense(Arc::from(vec![
            Cell::full(Material::DIRT);
            CHUNK_VOLUME_CELLS
        ]));
        assert_eq!(u.content_hash(), d.content_hash());
        let e = ChunkCells::Uniform(Cell::EMPTY);
        assert_ne!(u.content_hash(), e.content_hash());
    }

    #[test]
    fn write_copies_shared_storage() {
        let mut a = ChunkCells::from_dense({
            let mut v = vec![Cell::EMPTY; CHUNK_VOLUME_CELLS];
            v[5] = Cell::full(Material::ROCK);
            v
        });
        let b = a.clone();
        assert!(a.shares_storage_with(&b));
        a.make_dense_mut()[6] = Cell::full(Material::SAND);
        assert!(!a.shares_storage_with(&b));
        assert_eq!(b.get(IVec3::new(6, 0, 0)), Cell::EMPTY);
        assert_eq!(a.get(IVec3::new(6, 0, 0)), Cell::full(Material::SAND));
    }

    #[test]
    fn edit_history_expires_conservatively() {
        let mut h = EditHistory::default();
        let b = |x: i32| CellBox::new(IVec3::new(x, 0, 0), IVec3::new(x + 1, 1, 1));
        for rev in 1..=6 {
            h.push(rev, b(rev as i32));
        }
        assert_eq!(h.changed_since(4), Some(b(5).union(&b(6))));
        assert_eq!(
            h.changed_since(0),
            Some(CellBox::new(IVec3::new(1, 0, 0), IVec3::new(7, 1, 1)))
        );
        h.push(7, b(7));
        // Revisions 1 and 2 merged (stamped 2): every reader still gets a
        // box holding all edits since its revision, a reader at 1 a superset.
        let all = CellBox::new(IVec3::new(1, 0, 0), IVec3::new(8, 1, 1));
        assert_eq!(h.changed_since(0), Some(all));
        assert_eq!(h.changed_since(1), Some(all));
        assert_eq!(
            h.changed_since(2),
            Some(CellBox::new(IVec3::new(3, 0, 0), IVec3::new(8, 1, 1)))
        );
        // A long stroke along x keeps a tight bound (not the whole chunk).
        for rev in 8..=40 {
            h.push(rev, b(7));
        }
        assert_eq!(h.changed_since(0), Some(all));
    }
}
