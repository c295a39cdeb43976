//! The sparse voxel grid: the single source of truth for terrain (spec §3).
//!
//! Only written chunks exist. Edits compute the cells that actually differ,
//! apply them together and stamp one new grid revision; an edit that changes
//! nothing stamps nothing, and a chunk that becomes all-empty is removed and
//! logged so readers that remember `(generation, revision)` learn about it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use glam::IVec3;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::terrain::storage::cell::Cell;
use crate::terrain::storage::chunk::{Chunk, ChunkCells};
use crate::terrain::storage::coords::{
    CHUNK_SIZE_CELLS, CellBox, CellCoord, ChunkCoord, ColumnCoord, OutsideLattice, check_on_lattice,
};

/// How many chunk removals the grid remembers for [`Grid::changes_since`].
pub const REMOVAL_LOG_CAPACITY: usize = 4096;

/// Generations are unique per process; 0 is never handed out.
static NEXT_GENERATION: AtomicU64 = AtomicU64::new(1);

fn fresh_generation() -> u64 {
    NEXT_GENERATION.fetch_add(1, Ordering::Relaxed)
}

/// What one edit changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EditReport {
    /// The new grid revision, or `None` when no cell changed.
    pub revision: Option<u64>,
    /// Chunks whose cells changed, with the global cell bounds of the changed cells.
    pub changed: Vec<(ChunkCoord, CellBox)>,
    /// Chunks removed because they became all-empty (also listed in `changed`).
    pub removed: Vec<ChunkCoord>,
}

impl EditReport {
    /// True when the edit changed at least one cell.
    pub fn is_change(&self) -> bool {
        self.revision.is_some()
    }

    /// Union of all changed bounds (global cells); empty when nothing changed.
    pub fn bounds(&self) -> CellBox {
        self.changed
            .iter()
            .fold(CellBox::new(IVec3::ZERO, IVec3::ZERO), |acc, (_, b)| {
                acc.union(b)
            })
    }
}

/// Answer to [`Grid::changes_since`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Changes {
    /// The reader must rebuild everything (other grid, future or expired revision).
    FullRefresh,
    /// Chunks changed (still present) and removed since the reader's revision.
    Incremental {
        /// Present chunks stamped after the reader's revision.
        changed: Vec<ChunkCoord>,
        /// Chunks removed after the reader's revision.
        removed: Vec<ChunkCoord>,
    },
}

/// Errors from grid operations given bad input.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GridError {
    /// An edit region larger than [`MAX_EDIT_VOLUME_CELLS`].
    #[error("edit region of {volume_cells} cells exceeds the limit of {limit} cells")]
    RegionTooLarge {
        /// Cells in the requested region.
        volume_cells: u64,
        /// The limit.
        limit: u64,
    },
    /// An edit region with cells off the valid lattice
    /// ([`crate::terrain::storage::coords::LATTICE_CELLS`]).
    #[error(transparent)]
    OutsideLattice(#[from] OutsideLattice),
    /// An edit region over chunk columns a streaming grid does not hold
    /// (spec §12: the edit waits until they are resident).
    #[error("edit region touches {} chunk columns that are not resident", .0.len())]
    NotResident(Vec<ColumnCoord>),
    /// [`Grid::install_column`] of a column that is already resident.
    #[error("chunk column {0:?} is already resident")]
    AlreadyResident(ColumnCoord),
}

impl GridError {
    /// The columns an edit waits for, when it was refused for them.
    pub fn missing_columns(&self) -> Option<&[ColumnCoord]> {
        match self {
            GridError::NotResident(columns) => Some(columns),
            _ => None,
        }
    }
}

/// The differing cells of one chunk found by an edit's first pass: the chunk,
/// `(local index, new cell)` pairs, and the global bounds of those cells.
type PendingChunkEdit = (ChunkCoord, Vec<(u16, Cell)>, CellBox);

/// Largest region one edit may touch: 512³ cells (2048 studs a side).
pub const MAX_EDIT_VOLUME_CELLS: u64 = 512 * 512 * 512;

/// The sparse chunk map with its generation, revision and removal log.
#[derive(Debug)]
pub struct Grid {
    chunks: FxHashMap<ChunkCoord, Chunk>,
    generation: u64,
    revision: u64,
    removals: VecDeque<(u64, ChunkCoord)>,
    /// Removals at or before this revision may have been forgotten.
    removals_forgotten_through: u64,
    /// Bumped whenever a chunk is added or removed (not when cells change).
    layout_revision: u64,
    /// `None`: the grid holds the whole world (a chunk that is not stored
    /// is empty). `Some`: a streaming grid (spec §12) that knows only these
    /// columns; a chunk of any other column is unknown, not empty.
    resident_columns: Option<FxHashSet<ColumnCoord>>,
}

impl Default for Grid {
    fn default() -> Self {
        Self::new()
    }
}

impl Clone for Grid {
    /// Clones share every chunk's storage but get a fresh generation, so a
    /// reader of one grid never mistakes the other's revisions for its own.
    fn clone(&self) -> Self {
        Grid {
            chunks: self.chunks.clone(),
            generation: fresh_generation(),
            revision: self.revision,
            removals: self.removals.clone(),
            removals_forgotten_through: self.removals_forgotten_through,
            layout_revision: self.layout_revision,
            resident_columns: self.resident_columns.clone(),
        }
    }
}

impl Grid {
    /// An empty grid with a fresh generation and revision 0.
    pub fn new() -> Grid {
        Grid {
            chunks: FxHashMap::default(),
            generation: fresh_generation(),
            revision: 0,
            removals: VecDeque::new(),
            removals_forgotten_through: 0,
            layout_revision: 0,
            resident_columns: None,
        }
    }

    /// An empty streaming grid (spec §12): no column is resident until
    /// [`Grid::install_column`] puts it in.
    pub fn streaming() -> Grid {
        Grid {
            resident_columns: Some(FxHashSet::default()),
            ..Grid::new()
        }
    }

    /// True for a streaming grid ([`Grid::streaming`]).
    pub fn is_streaming(&self) -> bool {
        self.resident_columns.is_some()
    }

    /// True when the grid knows the cells of `column` (always, for a grid
    /// that holds the whole world).
    pub fn is_column_resident(&self, column: ColumnCoord) -> bool {
        self.resident_columns
            .as_ref()
            .is_none_or(|set| set.contains(&column))
    }

    /// True when the chunk's column and its 8 neighbours are resident:
    /// everything Surface Nets reads to mesh `coord` (spec §4, §12).
    pub fn neighbourhood_resident(&self, coord: ChunkCoord) -> bool {
        match &self.resident_columns {
            None => true,
            Some(set) => ColumnCoord::of(coord)
                .with_neighbours()
                .all(|c| set.contains(&c)),
        }
    }

    /// Resident columns of a streaming grid (unordered); empty for a grid
    /// that holds the whole world.
    pub fn resident_columns(&self) -> impl Iterator<Item = ColumnCoord> + '_ {
        self.resident_columns.iter().flat_map(|s| s.iter().copied())
    }

    /// Number of resident columns (0 for a grid that holds the whole world).
    pub fn resident_column_count(&self) -> usize {
        self.resident_columns.as_ref().map_or(0, |s| s.len())
    }

    /// The columns of `region` this grid does not hold, sorted.
    pub fn missing_columns(&self, region: &CellBox) -> Vec<ColumnCoord> {
        let Some(set) = &self.resident_columns else {
            return Vec::new();
        };
        region.columns().filter(|c| !set.contains(c)).collect()
    }

    /// Makes `column` resident with its chunks (all-empty ones are skipped).
    /// A load, not an edit: the revision and the removal log are untouched,
    /// the chunks are stamped with the current revision (so readers see no
    /// change), and the layout revision moves on (new meshing candidates).
    /// Chunks outside `column` are ignored. A no-op on a grid that holds the
    /// whole world.
    ///
    /// # Errors
    /// [`GridError::AlreadyResident`] when the column is resident already;
    /// nothing changes (a second copy would overwrite edits, spec §12).
    pub fn install_column(
        &mut self,
        column: ColumnCoord,
        chunks: impl IntoIterator<Item = (ChunkCoord, ChunkCells)>,
    ) -> Result<(), GridError> {
        let Some(set) = &mut self.resident_columns else {
            return Ok(());
        };
        if !set.insert(column) {
            return Err(GridError::AlreadyResident(column));
        }
        for (coord, cells) in chunks {
            if ColumnCoord::of(coord) == column && !cells.is_all_empty() {
                self.chunks.insert(coord, Chunk::new(cells, self.revision));
            }
        }
        self.layout_revision += 1;
        Ok(())
    }

    /// Drops `columns` from a streaming grid and returns their chunks,
    /// sorted: an eviction, not an edit (no revision, no removal log; the
    /// cells are unchanged, only no longer held). Columns that are not
    /// resident are ignored. One pass over the stored chunks, however many
    /// columns go.
    pub fn evict_columns(
        &mut self,
        columns: &FxHashSet<ColumnCoord>,
    ) -> Vec<(ChunkCoord, ChunkCells)> {
        let Some(set) = &mut self.resident_columns else {
            return Vec::new();
        };
        set.retain(|c| !columns.contains(c));
        let mut out = Vec::new();
        self.chunks.retain(|coord, chunk| {
            let keep = !columns.contains(&ColumnCoord::of(*coord));
            if !keep {
                out.push((*coord, chunk.cells.clone()));
            }
            keep
        });
        out.sort_by_key(|(c, _)| (c.0.z, c.0.y, c.0.x));
        self.layout_revision += 1;
        out
    }

    /// The stored chunks of `column`, sorted by y (one pass over the grid).
    pub fn column_chunks(&self, column: ColumnCoord) -> Vec<(ChunkCoord, ChunkCells)> {
        let mut out: Vec<(ChunkCoord, ChunkCells)> = self
            .chunks
            .iter()
            .filter(|(c, _)| ColumnCoord::of(**c) == column)
            .map(|(c, chunk)| (*c, chunk.cells.clone()))
            .collect();
        out.sort_by_key(|(c, _)| c.0.y);
        out
    }

    /// A fresh grid holding the given chunks at revision 0. All-empty chunks are skipped.
    pub fn from_chunks(chunks: impl IntoIterator<Item = (ChunkCoord, ChunkCells)>) -> Grid {
        let mut grid = Grid::new();
        for (coord, cells) in chunks {
            if !cells.is_all_empty() {
                grid.chunks.insert(coord, Chunk::new(cells, 0));
            }
        }
        grid
    }

    /// This grid instance's generation (fresh for every new, cloned or loaded grid).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Changes whenever a chunk is added or removed (cell edits inside
    /// existing chunks leave it alone): cached chunk sets, like meshing
    /// candidates, stay valid while it is unchanged.
    pub fn layout_revision(&self) -> u64 {
        self.layout_revision
    }

    /// The latest revision (0 until the first edit).
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Number of stored chunks.
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// The stored chunk at `coord`, if written.
    pub fn chunk(&self, coord: ChunkCoord) -> Option<&Chunk> {
        self.chunks.get(&coord)
    }

    /// The cells of the chunk at `coord`; unwritten chunks read as uniform empty.
    pub fn chunk_cells(&self, coord: ChunkCoord) -> ChunkCells {
        self.chunks
            .get(&coord)
            .map_or(ChunkCells::Uniform(Cell::EMPTY), |c| c.cells.clone())
    }

    /// Iterates over stored chunks in unspecified order.
    pub fn chunks(&self) -> impl Iterator<Item = (ChunkCoord, &Chunk)> {
        self.chunks.iter().map(|(k, v)| (*k, v))
    }

    /// A selective snapshot: a new grid (fresh generation) holding only the
    /// chunks in `coords` and the 26 neighbours of each — everything needed to
    /// mesh them — sharing storage with this grid (no cell is copied).
    /// Workers mesh from it while this grid stays editable.
    pub fn snapshot_for(&self, coords: &[ChunkCoord]) -> Grid {
        let mut chunks: FxHashMap<ChunkCoord, Chunk> = FxHashMap::default();
        for &coord in coords {
            for c in std::iter::once(coord).chain(coord.neighbours()) {
                if let Some(chunk) = self.chunks.get(&c) {
                    chunks.entry(c).or_insert_with(|| chunk.clone());
                }
            }
        }
        self.snapshot_of(chunks)
    }

    /// A snapshot made of `chunks` (shared with this grid), at this grid's
    /// revision and with a fresh generation.
    fn snapshot_of(&self, chunks: FxHashMap<ChunkCoord, Chunk>) -> Grid {
        Grid {
            chunks,
            generation: fresh_generation(),
            revision: self.revision,
            removals: VecDeque::new(),
            removals_forgotten_through: self.revision,
            layout_revision: 0,
            resident_columns: None,
        }
    }

    /// A selective snapshot holding every stored chunk of the chunk columns
    /// around `coords` (each one's column and its eight neighbours): what
    /// the low-poly mesher (whole-column heightfields with a one-column
    /// apron) and the water mesher (26 neighbours) read. Shares storage
    /// with this grid, like [`Grid::snapshot_for`].
    pub fn snapshot_for_columns(&self, coords: &[ChunkCoord]) -> Grid {
        let columns: FxHashSet<ColumnCoord> = coords
            .iter()
            .flat_map(|&c| {
                let col = ColumnCoord::of(c);
                (-1..=1).flat_map(move |dz| {
                    (-1..=1).map(move |dx| ColumnCoord::new(col.x + dx, col.z + dz))
                })
            })
            .collect();
        let chunks: FxHashMap<ChunkCoord, Chunk> = self
            .chunks
            .iter()
            .filter(|(c, _)| columns.contains(&ColumnCoord::of(**c)))
            .map(|(c, chunk)| (*c, chunk.clone()))
            .collect();
        self.snapshot_of(chunks)
    }

    /// Coordinates of the stored chunks in `columns`.
    pub fn chunks_in_columns(&self, columns: &FxHashSet<ColumnCoord>) -> Vec<ChunkCoord> {
        if columns.is_empty() {
            return Vec::new();
        }
        self.chunks
            .keys()
            .filter(|c| columns.contains(&ColumnCoord::of(**c)))
            .copied()
            .collect()
    }

    /// Stored chunk coordinates, sorted (z, then y, then x).
    pub fn sorted_coords(&self) -> Vec<ChunkCoord> {
        let mut v: Vec<ChunkCoord> = self.chunks.keys().copied().collect();
        v.sort_by_key(|c| (c.0.z, c.0.y, c.0.x));
        v
    }

    /// The cell at a global coordinate ([`Cell::EMPTY`] when unwritten).
    pub fn cell(&self, cell: CellCoord) -> Cell {
        self.chunks
            .get(&cell.chunk())
            .map_or(Cell::EMPTY, |c| c.cells.get(cell.local()))
    }

    /// Every chunk that could own surface: stored chunks plus their 26 neighbours
    /// (an unwritten chunk can own quads against a written neighbour, spec §4).
    /// A streaming grid lists only chunks whose neighbourhood is resident
    /// ([`Grid::neighbourhood_resident`]): the others cannot be meshed yet.
    pub fn meshing_candidates(&self) -> Vec<ChunkCoord> {
        if self.resident_columns.is_some() {
            return self.streaming_candidates();
        }
        let mut set: rustc_hash::FxHashSet<ChunkCoord> = rustc_hash::FxHashSet::default();
        for &coord in self.chunks.keys() {
            set.insert(coord);
            set.extend(coord.neighbours());
        }
        let mut v: Vec<ChunkCoord> = set.into_iter().collect();
        v.sort_by_key(|c| (c.0.z, c.0.y, c.0.x));
        v
    }

    /// [`Grid::meshing_candidates`] of a streaming grid, by column: every
    /// chunk of a column whose neighbourhood is resident, from one below
    /// the lowest to one above the highest stored chunk of its 3×3
    /// columns. One pass over the chunks and one over the columns (the
    /// view changes this set every frame a column arrives); it may list a
    /// few empty chunks in vertical gaps, which mesh to nothing.
    fn streaming_candidates(&self) -> Vec<ChunkCoord> {
        let mut y_range: FxHashMap<ColumnCoord, (i32, i32)> = FxHashMap::default();
        for coord in self.chunks.keys() {
            let r = y_range
                .entry(ColumnCoord::of(*coord))
                .or_insert((coord.0.y, coord.0.y));
            r.0 = r.0.min(coord.0.y);
            r.1 = r.1.max(coord.0.y);
        }
        let mut v: Vec<ChunkCoord> = Vec::new();
        for column in self.resident_columns() {
            if !self.neighbourhood_resident(ChunkCoord::new(column.x, 0, column.z)) {
                continue;
            }
            let (lo, hi) = column
                .with_neighbours()
                .filter_map(|c| y_range.get(&c))
                .fold((i32::MAX, i32::MIN), |(lo, hi), r| {
                    (lo.min(r.0), hi.max(r.1))
                });
            if lo > hi {
                continue;
            }
            for y in lo.saturating_sub(1)..=hi.saturating_add(1) {
                v.push(ChunkCoord::new(column.x, y, column.z));
            }
        }
        v.sort_by_key(|c| (c.0.z, c.0.y, c.0.x));
        v
    }

    /// True when `self` and `other` hold the same cells in every chunk
    /// (generation and revision aside): what an undo back to a saved state
    /// gives. Chunks sharing storage compare without reading cells, so this
    /// costs one map lookup per stored chunk plus the chunks that differ.
    /// A chunk that is not stored counts as empty.
    pub fn same_cells(&self, other: &Grid) -> bool {
        let empty = ChunkCells::Uniform(Cell::EMPTY);
        let covers = |a: &Grid, b: &Grid| {
            a.chunks
                .iter()
                .all(|(coord, chunk)| match b.chunks.get(coord) {
                    Some(o) => chunk.cells.same_cells(&o.cells),
                    None => chunk.cells.same_cells(&empty),
                })
        };
        covers(self, other)
            && other.chunks.iter().all(|(coord, chunk)| {
                self.chunks.contains_key(coord) || chunk.cells.same_cells(&empty)
            })
    }

    /// Bounds of the stored chunks in cells, or `None` for an empty grid.
    pub fn bounds_cells(&self) -> Option<CellBox> {
        let mut it = self.chunks.keys();
        let first = it.next()?;
        let (mut lo, mut hi) = (first.0, first.0);
        for c in it {
            lo = lo.min(c.0);
            hi = hi.max(c.0);
        }
        Some(CellBox::new(
            lo * CHUNK_SIZE_CELLS,
            (hi + IVec3::ONE) * CHUNK_SIZE_CELLS,
        ))
    }

    /// Stored chunks whose storage is uniform.
    pub fn uniform_chunk_count(&self) -> usize {
        self.chunks
            .values()
            .filter(|c| c.cells.as_uniform().is_some())
            .count()
    }

    /// Heap bytes held by chunk storage: dense cell arrays plus the map's table.
    pub fn heap_bytes(&self) -> usize {
        let table = self.chunks.capacity()
            * (std::mem::size_of::<ChunkCoord>() + std::mem::size_of::<Chunk>() + 1);
        table
            + self
                .chunks
                .values()
                .map(|c| c.cells.heap_bytes())
                .sum::<usize>()
    }

    /// Stable content hash of the whole grid: XXH3-64 over the sorted chunk
    /// coordinates (little-endian `i32`s) each followed by its chunk hash
    /// ([`ChunkCells::content_hash`]). Independent of generation, revision,
    /// storage form and machine.
    pub fn content_hash(&self) -> u64 {
        let coords = self.sorted_coords();
        let hashes: Vec<u64> = {
            use rayon::prelude::*;
            coords
                .par_iter()
                .map(|c| self.chunks[c].cells.content_hash())
                .collect()
        };
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        for (c, ch) in coords.iter().zip(hashes) {
            h.update(&c.0.x.to_le_bytes());
            h.update(&c.0.y.to_le_bytes());
            h.update(&c.0.z.to_le_bytes());
            h.update(&ch.to_le_bytes());
        }
        h.digest()
    }

    /// Applies `f` to every cell in `region` (global cells, max exclusive) and
    /// writes the cells whose value changed, all under one new revision.
    ///
    /// `f` receives the global cell coordinate and current cell and returns the
    /// new cell (canonicalized through [`Cell::new`] by construction). Chunks
    /// that become all-empty are removed and logged; chunks that become uniform
    /// are compacted. When nothing differs, no revision is created and the grid
    /// is untouched.
    ///
    /// # Errors
    /// [`GridError::RegionTooLarge`] when the region holds more than
    /// [`MAX_EDIT_VOLUME_CELLS`] cells, [`GridError::OutsideLattice`] when
    /// it has cells off the valid lattice; the grid is unchanged.
    pub fn edit_region(
        &mut self,
        region: CellBox,
        mut f: impl FnMut(CellCoord, Cell) -> Cell,
    ) -> Result<EditReport, GridError> {
        let volume_cells = region.volume_cells();
        if volume_cells > MAX_EDIT_VOLUME_CELLS {
            return Err(GridError::RegionTooLarge {
                volume_cells,
                limit: MAX_EDIT_VOLUME_CELLS,
            });
        }
        check_on_lattice(&region)?;
        let missing = self.missing_columns(&region);
        if !missing.is_empty() {
            return Err(GridError::NotResident(missing));
        }
        // Pass 1: compute the differing cells of every chunk without writing.
        let mut pending: Vec<PendingChunkEdit> = Vec::new();
        for coord in region.chunks() {
            let sub = region.intersect(&coord.cell_box());
            let cells = self.chunk_cells(coord);
            let base = coord.min_cell().0;
            let mut diffs = Vec::new();
            let mut lo = IVec3::splat(i32::MAX);
            let mut hi = IVec3::splat(i32::MIN);
            for z in sub.min.z..sub.max.z {
                for y in sub.min.y..sub.max.y {
                    for x in sub.min.x..sub.max.x {
                        let global = IVec3::new(x, y, z);
                        let local = global - base;
                        let old = cells.get(local);
                        let new = f(CellCoord(global), old);
                        let new = Cell::new(new.material(), new.occupancy());
                        if new != old {
                            diffs.push((
                                crate::terrain::storage::coords::local_index(local) as u16,
                                new,
                            ));
                            lo = lo.min(global);
                            hi = hi.max(global);
                        }
                    }
                }
            }
            if !diffs.is_empty() {
                pending.push((coord, diffs, CellBox::new(lo, hi + IVec3::ONE)));
            }
        }
        if pending.is_empty() {
            return Ok(EditReport::default());
        }
        // Pass 2: apply under one revision.
        self.revision += 1;
        let revision = self.revision;
        let mut report = EditReport {
            revision: Some(revision),
            ..EditReport::default()
        };
        for (coord, diffs, bounds) in pending {
            if !self.chunks.contains_key(&coord) {
                self.layout_revision += 1;
            }
            let chunk = self
                .chunks
                .entry(coord)
                .or_insert_with(|| Chunk::new(ChunkCells::Uniform(Cell::EMPTY), revision));
            let dense = chunk.cells.make_dense_mut();
            for (index, cell) in diffs {
                dense[index as usize] = cell;
            }
            chunk.cells.compact();
            chunk.revision = revision;
            let base = coord.min_cell().0;
            chunk
                .edits
                .push(revision, CellBox::new(bounds.min - base, bounds.max - base));
            report.changed.push((coord, bounds));
            if chunk.cells.is_all_empty() {
                self.chunks.remove(&coord);
                self.log_removal(revision, coord);
                report.removed.push(coord);
            }
        }
        Ok(report)
    }

    /// Replaces the cells of a whole chunk as one edit (e.g. regenerating or
    /// loading a chunk). Returns the new revision, or `None` when the content
    /// was already equal.
    pub fn replace_chunk(&mut self, coord: ChunkCoord, cells: ChunkCells) -> Option<u64> {
        let old = self.chunk_cells(coord);
        if old.shares_storage_with(&cells) || old.content_hash() == cells.content_hash() {
            return None;
        }
        self.revision += 1;
        let revision = self.revision;
        if cells.is_all_empty() {
            self.chunks.remove(&coord);
            self.log_removal(revision, coord);
        } else {
            if !self.chunks.contains_key(&coord) {
                self.layout_revision += 1;
            }
            let chunk = self
                .chunks
                .entry(coord)
                .or_insert_with(|| Chunk::new(cells.clone(), revision));
            chunk.cells = cells;
            chunk.revision = revision;
            chunk.edits.push(revision, Chunk::full_local_box());
        }
        Some(revision)
    }

    /// Puts back whole-chunk storage (undo and redo) as one edit: each item
    /// is a chunk, the storage it must hold (shared, not copied) and the
    /// global cell bounds of what differs (recorded as the chunk's edit
    /// extent, so readers re-mesh exactly that). Items whose content already
    /// matches are skipped; all-empty storage removes the chunk. Returns the
    /// report, with no revision when nothing changed.
    pub fn restore_chunks(
        &mut self,
        items: impl IntoIterator<Item = (ChunkCoord, ChunkCells, CellBox)>,
    ) -> EditReport {
        let mut report = EditReport::default();
        for (coord, cells, bounds) in items {
            let current = self.chunk_cells(coord);
            if current.shares_storage_with(&cells) || same_content(&current, &cells) {
                continue;
            }
            let revision = *report.revision.get_or_insert_with(|| {
                self.revision += 1;
                self.revision
            });
            report.changed.push((coord, bounds));
            if cells.is_all_empty() {
                self.chunks.remove(&coord);
                self.log_removal(revision, coord);
                report.removed.push(coord);
                continue;
            }
            if !self.chunks.contains_key(&coord) {
                self.layout_revision += 1;
            }
            let base = coord.min_cell().0;
            let chunk = self
                .chunks
                .entry(coord)
                .or_insert_with(|| Chunk::new(cells.clone(), revision));
            chunk.cells = cells;
            chunk.revision = revision;
            chunk
                .edits
                .push(revision, CellBox::new(bounds.min - base, bounds.max - base));
        }
        report
    }

    fn log_removal(&mut self, revision: u64, coord: ChunkCoord) {
        self.layout_revision += 1;
        if self.removals.len() == REMOVAL_LOG_CAPACITY
            && let Some((rev, _)) = self.removals.pop_front()
        {
            self.removals_forgotten_through = rev;
        }
        self.removals.push_back((revision, coord));
    }

    /// Chunks changed or removed since a reader's `(generation, revision)`.
    ///
    /// Returns [`Changes::FullRefresh`] on a generation mismatch, a revision
    /// newer than the grid's, or a revision older than the retained removal history.
    pub fn changes_since(&self, generation: u64, revision: u64) -> Changes {
        if generation != self.generation
            || revision > self.revision
            || revision < self.removals_forgotten_through
        {
            return Changes::FullRefresh;
        }
        let mut changed: Vec<ChunkCoord> = self
            .chunks
            .iter()
            .filter(|(_, c)| c.revision > revision)
            .map(|(k, _)| *k)
            .collect();
        changed.sort_by_key(|c| (c.0.z, c.0.y, c.0.x));
        let removed = self
            .removals
            .iter()
            .filter(|(rev, coord)| *rev > revision && !self.chunks.contains_key(coord))
            .map(|(_, c)| *c)
            .collect();
        Changes::Incremental { changed, removed }
    }

    /// The changed extent (global cells) of the chunk at `coord` since `revision`:
    /// the union of its recorded edit bounds newer than `revision`, or the whole
    /// chunk when that history has expired or the chunk is gone.
    pub fn changed_extent_since(&self, coord: ChunkCoord, revision: u64) -> CellBox {
        let base = coord.min_cell().0;
        let local = self
            .chunks
            .get(&coord)
            .and_then(|c| c.edits.changed_since(revision))
            .unwrap_or_else(Chunk::full_local_box);
        CellBox::new(local.min + base, local.max + base)
    }
}

/// True when two chunk storages hold the same cells (compared cell by cell).
pub fn same_content(a: &ChunkCells, b: &ChunkCells) -> bool {
    match (a, b) {
        (ChunkCells::Uniform(x), ChunkCells::Uniform(y)) => x == y,
        (ChunkCells::Dense(x), ChunkCells::Dense(y)) => x[..] == y[..],
        (ChunkCells::Uniform(u), ChunkCells::Dense(d))
        | (ChunkCells::Dense(d), ChunkCells::Uniform(u)) => d.iter().all(|c| c == u),
    }
}
