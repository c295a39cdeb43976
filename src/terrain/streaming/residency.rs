//! Which chunk columns of a streaming world are in memory (spec §12).
//!
//! A column is absent, loading or resident. Demand (meshing within the draw
//! distance, nearest first; picking; edits; undo; the walker; exports) asks
//! for columns each frame; absent ones are loaded on worker threads and
//! installed into the [`Grid`] when they arrive, unless something newer has
//! replaced the request (the serial rule of §7, for loads). When resident
//! bytes pass the budget, the least recently needed unpinned columns that
//! no one needs this frame are evicted; an edited column is written to the
//! [`EditStore`] first, so eviction never loses an edit: the write runs on
//! the [`SpillQueue`]'s thread and the column's cells stay in memory until
//! it lands. The frame never waits for a load or a write: it asks, and
//! draws what is there.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Instant;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::terrain::storage::chunk::{Chunk, ChunkCells};
use crate::terrain::storage::coords::{ChunkCoord, ColumnCoord};
use crate::terrain::storage::grid::Grid;
use crate::terrain::streaming::column_source::{
    ColumnChunks, ColumnSource, EditStore, LoadOrigin, SourceError,
};
use crate::terrain::streaming::spill_queue::SpillQueue;

/// Default memory budget for resident chunks and their CPU mesh copies: 2 GiB.
pub const DEFAULT_BUDGET_BYTES: usize = 2048 << 20;

/// Loads in flight at once (per residency).
pub const MAX_LOADS_IN_FLIGHT: usize = 8;

/// Columns no one needs this frame stay resident (a cache for a camera that
/// turns back) only while resident bytes are within 1/this of the budget.
pub const CACHE_SHARE_DIVISOR: usize = 2;

/// Spilled columns remembered for the `residency` overlay (the newest).
pub const RECENT_SPILLS_KEPT: usize = 256;

/// What a column costs before its first load is measured: four dense chunks.
const INITIAL_COLUMN_ESTIMATE_BYTES: usize = 4 * 65_536;

/// Bytes a resident chunk costs: its dense cells plus its map entry.
pub fn chunk_resident_bytes(cells: &ChunkCells) -> usize {
    cells.heap_bytes() + std::mem::size_of::<ChunkCoord>() + std::mem::size_of::<Chunk>()
}

fn column_bytes(chunks: &[(ChunkCoord, ChunkCells)]) -> usize {
    // The column's set entry counts even when it holds no chunk.
    std::mem::size_of::<ColumnCoord>() * 2
        + chunks
            .iter()
            .map(|(_, c)| chunk_resident_bytes(c))
            .sum::<usize>()
}

/// The state of a column that is not absent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnState {
    /// A load was requested on a worker; `ticket` identifies it.
    Loading {
        /// The request's ticket: only the result carrying it is installed.
        ticket: u64,
    },
    /// In the grid.
    Resident {
        /// The frame that last needed it.
        last_needed_frame: u64,
        /// Its resident bytes.
        bytes: usize,
        /// Changed since it was last stored: it must be spilled before it
        /// is evicted.
        edited: bool,
    },
}

/// Counters of a residency, for `--stats-json` (`"streaming"`) and the panel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamingStats {
    /// Columns read from a file or the edit store.
    pub loaded: u64,
    /// Columns generated.
    pub generated: u64,
    /// Columns evicted.
    pub evicted: u64,
    /// Edited columns written to the edit store before eviction.
    pub spilled: u64,
    /// Finished loads dropped because something newer replaced their request.
    pub stale_loads: u64,
    /// Loads that failed (the column stays absent and is asked for again).
    pub failed_loads: u64,
    /// Writes to the store that failed (the cells stay in memory and are
    /// written again by the next flush).
    pub failed_spills: u64,
    /// Finished loads dropped because the budget had no room for them and
    /// nothing could be evicted (asked for again later).
    pub dropped_over_budget: u64,
    /// Worker time of each finished load, ms.
    pub load_ms: Vec<f64>,
    /// Highest resident bytes (chunks plus the caller's extra bytes) seen.
    pub peak_resident_bytes: usize,
}

/// One finished load, sent by a worker.
struct LoadDone {
    column: ColumnCoord,
    ticket: u64,
    result: Result<(ColumnChunks, LoadOrigin), SourceError>,
    ms: f64,
}

/// What one [`Residency::receive`] installed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstallReport {
    /// Columns installed into the grid.
    pub installed: Vec<ColumnCoord>,
    /// Results dropped as stale.
    pub stale: usize,
}

/// Residency of one streaming world: states, pins, the budget and the
/// loader workers.
pub struct Residency {
    source: Arc<dyn ColumnSource>,
    store: Arc<dyn EditStore>,
    budget_bytes: usize,
    columns: FxHashMap<ColumnCoord, ColumnState>,
    pins: FxHashMap<ColumnCoord, u32>,
    frame: u64,
    next_ticket: u64,
    in_flight: usize,
    resident_chunk_bytes: usize,
    extra_bytes: usize,
    column_estimate_bytes: usize,
    tx: Sender<LoadDone>,
    rx: Receiver<LoadDone>,
    /// The grid `(generation, revision)` whose edits were last noted.
    edits_seen: Option<(u64, u64)>,
    /// Every column an edit has touched since creation.
    ever_edited: FxHashSet<ColumnCoord>,
    first_load_error: Option<SourceError>,
    /// The last [`Residency::demand`] left wanted columns unrequested
    /// because the budget was full of columns needed this frame.
    budget_blocked: bool,
    /// The newest spilled columns and the frame of each spill, oldest
    /// first (at most [`RECENT_SPILLS_KEPT`]).
    recent_spills: std::collections::VecDeque<(ColumnCoord, u64)>,
    /// Edited columns on their way to the store (spills and checkpoints).
    spills: SpillQueue,
    /// Counters since creation.
    pub stats: StreamingStats,
}

impl std::fmt::Debug for Residency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Residency")
            .field("source", &self.source)
            .field("budget_bytes", &self.budget_bytes)
            .field("columns", &self.columns.len())
            .field("in_flight", &self.in_flight)
            .field("resident_bytes", &self.resident_bytes())
            .finish()
    }
}

impl Residency {
    /// A residency loading from `source` (edited columns from `store`) that
    /// keeps resident bytes within `budget_bytes`.
    pub fn new(
        source: Arc<dyn ColumnSource>,
        store: Arc<dyn EditStore>,
        budget_bytes: usize,
    ) -> Residency {
        let (tx, rx) = channel();
        Residency {
            source,
            budget_bytes,
            columns: FxHashMap::default(),
            pins: FxHashMap::default(),
            frame: 0,
            next_ticket: 1,
            in_flight: 0,
            resident_chunk_bytes: 0,
            extra_bytes: 0,
            column_estimate_bytes: INITIAL_COLUMN_ESTIMATE_BYTES,
            tx,
            rx,
            edits_seen: None,
            ever_edited: FxHashSet::default(),
            first_load_error: None,
            budget_blocked: false,
            recent_spills: std::collections::VecDeque::new(),
            spills: SpillQueue::new(Arc::clone(&store)),
            store,
            stats: StreamingStats::default(),
        }
    }

    /// The column source.
    pub fn source(&self) -> &Arc<dyn ColumnSource> {
        &self.source
    }

    /// The edit store.
    pub fn store(&self) -> &Arc<dyn EditStore> {
        &self.store
    }

    /// Replaces the edit store (after Save As moved the world into another
    /// file that holds everything the old store held): queued writes land
    /// in the old store first, later spills and loads use `store`.
    ///
    /// # Errors
    /// A queued write that fails; the store is not replaced then.
    pub fn set_store(&mut self, store: Arc<dyn EditStore>) -> Result<(), SourceError> {
        self.spills
            .switch_store(self.store.as_ref(), Arc::clone(&store))?;
        self.store = store;
        Ok(())
    }

    /// Waits until every queued write of an edited column is in the store
    /// (before a save reads the store, or at exit), writing failed ones again.
    ///
    /// # Errors
    /// The first write that fails again; its cells stay in memory.
    pub fn flush_spills(&mut self) -> Result<(), SourceError> {
        let result = self.spills.flush(self.store.as_ref());
        if result.is_err() {
            self.stats.failed_spills += 1;
        }
        result
    }

    /// Edited columns whose writes to the store are not confirmed yet.
    pub fn spills_in_flight(&self) -> usize {
        self.spills.pending_count()
    }

    /// The budget, bytes.
    pub fn budget_bytes(&self) -> usize {
        self.budget_bytes
    }

    /// Changes the budget; the next [`Residency::demand`] evicts down to it.
    pub fn set_budget_bytes(&mut self, budget_bytes: usize) {
        self.budget_bytes = budget_bytes;
    }

    /// Resident bytes: chunk cells plus the caller's extra bytes (CPU mesh
    /// copies, [`Residency::set_extra_bytes`]).
    pub fn resident_bytes(&self) -> usize {
        self.resident_chunk_bytes + self.extra_bytes + self.spills.bytes()
    }

    /// Sets the bytes resident outside the grid that count against the
    /// budget (the CPU copies of meshes, spec §12).
    pub fn set_extra_bytes(&mut self, bytes: usize) {
        self.extra_bytes = bytes;
    }

    /// The state of `column` (`None`: absent).
    pub fn state(&self, column: ColumnCoord) -> Option<ColumnState> {
        self.columns.get(&column).copied()
    }

    /// Columns spilled to the store and evicted since frame `since_frame`
    /// that are still absent (the newest [`RECENT_SPILLS_KEPT`] spills).
    pub fn recent_spills(&self, since_frame: u64) -> impl Iterator<Item = ColumnCoord> + '_ {
        self.recent_spills
            .iter()
            .filter(move |(c, f)| *f >= since_frame && !self.columns.contains_key(c))
            .map(|(c, _)| *c)
    }

    /// Every column that is not absent, with its state (any order).
    pub fn column_states(&self) -> impl Iterator<Item = (ColumnCoord, ColumnState)> + '_ {
        self.columns.iter().map(|(c, s)| (*c, *s))
    }

    /// Number of resident columns.
    pub fn resident_count(&self) -> usize {
        self.columns
            .values()
            .filter(|s| matches!(s, ColumnState::Resident { .. }))
            .count()
    }

    /// Loads in flight.
    pub fn loads_in_flight(&self) -> usize {
        self.in_flight
    }

    /// The current frame number (advanced by [`Residency::end_frame`]).
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// True when `column` is known to be empty without a load.
    pub fn is_outside(&self, column: ColumnCoord) -> bool {
        self.source.is_outside(column)
    }

    /// Pins `column` (counted): a pinned column is never evicted.
    pub fn pin(&mut self, column: ColumnCoord) {
        *self.pins.entry(column).or_insert(0) += 1;
    }

    /// Releases one pin of `column`.
    pub fn unpin(&mut self, column: ColumnCoord) {
        if let Some(n) = self.pins.get_mut(&column) {
            *n -= 1;
            if *n == 0 {
                self.pins.remove(&column);
            }
        }
    }

    /// Moves a group of pins (e.g. the walker's collision columns) from
    /// `held` to `columns`: pins the new ones first, then releases the old,
    /// so a column in both stays pinned throughout. `held` becomes
    /// `columns`; an empty `columns` releases the group.
    pub fn repin(&mut self, held: &mut Vec<ColumnCoord>, columns: &[ColumnCoord]) {
        for &c in columns {
            self.pin(c);
        }
        for &c in held.iter() {
            self.unpin(c);
        }
        held.clear();
        held.extend_from_slice(columns);
    }

    /// True when `column` is pinned.
    pub fn is_pinned(&self, column: ColumnCoord) -> bool {
        self.pins.contains_key(&column)
    }

    /// Notes every edit of `grid` since the last call (brush strokes, region
    /// tools, undo and redo alike, through the grid's change tracking): their
    /// columns must be stored before eviction. Runs before every eviction,
    /// so no edit can be evicted unnoticed; a grid it has not seen (or whose
    /// history expired) marks every resident column edited.
    pub fn sync_edits(&mut self, grid: &Grid) {
        let now = (grid.generation(), grid.revision());
        if self.edits_seen == Some(now) {
            return;
        }
        match self.edits_seen {
            Some((generation, revision)) => match grid.changes_since(generation, revision) {
                crate::terrain::storage::grid::Changes::Incremental { changed, removed } => {
                    self.note_edited(grid, changed.into_iter().chain(removed));
                }
                crate::terrain::storage::grid::Changes::FullRefresh => self.note_all_edited(grid),
            },
            None if grid.revision() > 0 => self.note_all_edited(grid),
            None => {}
        }
        self.edits_seen = Some(now);
    }

    fn note_all_edited(&mut self, grid: &Grid) {
        let all: Vec<ChunkCoord> = self
            .columns
            .iter()
            .filter(|(_, s)| matches!(s, ColumnState::Resident { .. }))
            .map(|(c, _)| ChunkCoord::new(c.x, 0, c.z))
            .collect();
        self.note_edited(grid, all);
    }

    /// Marks the columns of edited chunks as changed since their last store
    /// and recounts their bytes from `grid` ([`Residency::sync_edits`] calls
    /// it for every edit).
    pub fn note_edited(&mut self, grid: &Grid, chunks: impl IntoIterator<Item = ChunkCoord>) {
        let columns: FxHashSet<ColumnCoord> = chunks
            .into_iter()
            .map(ColumnCoord::of)
            .filter(|c| grid.is_column_resident(*c))
            .collect();
        if columns.is_empty() {
            return;
        }
        // Their bytes in one pass over the grid, however many columns.
        let mut bytes_of: FxHashMap<ColumnCoord, usize> =
            columns.iter().map(|c| (*c, column_bytes(&[]))).collect();
        for (coord, chunk) in grid.chunks() {
            if let Some(b) = bytes_of.get_mut(&ColumnCoord::of(coord)) {
                *b += chunk_resident_bytes(&chunk.cells);
            }
        }
        for column in columns {
            self.ever_edited.insert(column);
            // Every column of `columns` has an entry (made above).
            let bytes = bytes_of[&column];
            if let Some(ColumnState::Resident {
                bytes: b,
                edited,
                last_needed_frame,
            }) = self.columns.get_mut(&column)
            {
                self.resident_chunk_bytes = self.resident_chunk_bytes - *b + bytes;
                *b = bytes;
                *edited = true;
                *last_needed_frame = self.frame;
            }
        }
        self.note_peak();
    }

    /// Every column an edit touched since this residency was made, sorted
    /// (resident or not).
    pub fn ever_edited_columns(&self) -> Vec<ColumnCoord> {
        let mut v: Vec<ColumnCoord> = self.ever_edited.iter().copied().collect();
        v.sort();
        v
    }

    /// Columns changed since they were last stored (sorted).
    pub fn edited_columns(&self) -> Vec<ColumnCoord> {
        let mut v: Vec<ColumnCoord> = self
            .columns
            .iter()
            .filter(|(_, s)| matches!(s, ColumnState::Resident { edited: true, .. }))
            .map(|(c, _)| *c)
            .collect();
        v.sort();
        v
    }

    /// Marks `column` as stored (after a save wrote its current cells).
    pub fn mark_stored(&mut self, column: ColumnCoord) {
        if let Some(ColumnState::Resident { edited, .. }) = self.columns.get_mut(&column) {
            *edited = false;
        }
    }

    /// This frame's demand, nearest first: resident columns are marked as
    /// needed now; absent ones are requested from the workers in order while
    /// fewer than [`MAX_LOADS_IN_FLIGHT`] loads run and the budget has room
    /// (evicting columns no one needed this frame to make it). Columns
    /// outside the world become resident (empty) at once. Returns how many
    /// loads it started.
    pub fn demand(
        &mut self,
        grid: &mut Grid,
        columns: impl IntoIterator<Item = ColumnCoord>,
    ) -> usize {
        let mut started = 0;
        let mut wanted: Vec<ColumnCoord> = Vec::new();
        self.budget_blocked = false;
        for column in columns {
            match self.columns.get_mut(&column) {
                Some(ColumnState::Resident {
                    last_needed_frame, ..
                }) => *last_needed_frame = self.frame,
                Some(ColumnState::Loading { .. }) => {}
                None if self.spills.get(column).is_some() => {
                    // Evicted while its write is still on its way: the
                    // queued copy is the newest, at no disk or generator cost.
                    self.install_spilled(grid, column);
                }
                None if self.source.is_outside(column) => {
                    // Generated empty: resident at once without a worker
                    // load, so the chunks along the world's edge can be
                    // meshed; an edit made out there comes from the store.
                    self.install_outside(grid, column);
                }
                None => wanted.push(column),
            }
        }
        // Marked first, so this frame's columns are not evicted to fit.
        // Columns no one needs are kept only as a cache within a share of
        // the budget (a column is resident while something needs it).
        self.make_room_within(grid, self.budget_bytes / CACHE_SHARE_DIVISOR, 0);
        self.note_peak();
        for column in wanted {
            if self.in_flight >= MAX_LOADS_IN_FLIGHT {
                break;
            }
            let reserve = (self.in_flight + 1) * self.column_estimate_bytes;
            if !self.make_room(grid, reserve) {
                self.budget_blocked = true;
                break;
            }
            self.start_load(column);
            started += 1;
        }
        started
    }

    /// Evicts until resident bytes plus `reserve_bytes` fit the budget,
    /// taking only unpinned columns not needed this frame, least recently
    /// needed first. True when it fits.
    fn make_room(&mut self, grid: &mut Grid, reserve_bytes: usize) -> bool {
        self.make_room_within(grid, self.budget_bytes, reserve_bytes)
    }

    /// [`Residency::make_room`] against `limit_bytes` instead of the budget.
    fn make_room_within(
        &mut self,
        grid: &mut Grid,
        limit_bytes: usize,
        reserve_bytes: usize,
    ) -> bool {
        self.sync_edits(grid);
        if self.resident_bytes() + reserve_bytes <= limit_bytes {
            return true;
        }
        let mut candidates: Vec<(u64, ColumnCoord, usize)> = self
            .columns
            .iter()
            .filter_map(|(c, s)| match s {
                ColumnState::Resident {
                    last_needed_frame,
                    bytes,
                    ..
                } if *last_needed_frame < self.frame && !self.pins.contains_key(c) => {
                    Some((*last_needed_frame, *c, *bytes))
                }
                _ => None,
            })
            .collect();
        candidates.sort_unstable();
        let mut over = self.resident_bytes() + reserve_bytes - limit_bytes;
        let mut evict: Vec<ColumnCoord> = Vec::new();
        for (_, column, bytes) in candidates {
            if over == 0 {
                break;
            }
            evict.push(column);
            over = over.saturating_sub(bytes);
        }
        self.evict(grid, &evict);
        self.resident_bytes() + reserve_bytes <= limit_bytes
    }

    /// Evicts `columns` (resident, unpinned ones; others are skipped),
    /// spilling edited ones to the store first. A column whose spill fails
    /// stays resident. Returns the columns evicted.
    pub fn evict(&mut self, grid: &mut Grid, columns: &[ColumnCoord]) -> Vec<ColumnCoord> {
        self.sync_edits(grid);
        let mut gone: FxHashSet<ColumnCoord> = FxHashSet::default();
        for &column in columns {
            let Some(ColumnState::Resident { edited, .. }) = self.columns.get(&column) else {
                continue;
            };
            if self.pins.contains_key(&column) {
                continue;
            }
            if *edited {
                // Written on the spill thread; the queue holds the cells
                // (and counts their bytes) until the write lands.
                let chunks = grid.column_chunks(column);
                let bytes = column_bytes(&chunks);
                self.spills.push(column, chunks, bytes);
                self.stats.spilled += 1;
                if self.recent_spills.len() == RECENT_SPILLS_KEPT {
                    self.recent_spills.pop_front();
                }
                self.recent_spills.push_back((column, self.frame));
            }
            gone.insert(column);
        }
        if gone.is_empty() {
            return Vec::new();
        }
        grid.evict_columns(&gone);
        for column in &gone {
            if let Some(ColumnState::Resident { bytes, .. }) = self.columns.remove(column) {
                self.resident_chunk_bytes -= bytes;
            }
        }
        self.stats.evicted += gone.len() as u64;
        let mut out: Vec<ColumnCoord> = gone.into_iter().collect();
        out.sort();
        out
    }

    fn start_load(&mut self, column: ColumnCoord) {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        self.columns.insert(column, ColumnState::Loading { ticket });
        self.in_flight += 1;
        let source = Arc::clone(&self.source);
        let store = Arc::clone(&self.store);
        let tx = self.tx.clone();
        rayon::spawn(move || {
            let start = Instant::now();
            let result = load_column(source.as_ref(), store.as_ref(), column);
            let ms = start.elapsed().as_secs_f64() * 1e3;
            // A closed channel means the residency is gone; the load is moot.
            let _ = tx.send(LoadDone {
                column,
                ticket,
                result,
                ms,
            });
        });
    }

    /// Installs finished loads into `grid`. A result is installed only while
    /// its column is still loading under the same ticket: a column made
    /// resident meanwhile (by [`Residency::load_now`], and maybe edited
    /// since) keeps what it has.
    pub fn receive(&mut self, grid: &mut Grid) -> InstallReport {
        let mut report = InstallReport::default();
        for e in self.spills.receive() {
            // The cells stay queued in memory; the next flush writes again.
            log::error!("kept an edited chunk column in memory: {e}");
            self.stats.failed_spills += 1;
        }
        while let Ok(done) = self.rx.try_recv() {
            self.in_flight = self.in_flight.saturating_sub(1);
            let current = matches!(
                self.columns.get(&done.column),
                Some(ColumnState::Loading { ticket }) if *ticket == done.ticket
            );
            if !current {
                self.stats.stale_loads += 1;
                report.stale += 1;
                continue;
            }
            match done.result {
                Ok((chunks, origin)) => {
                    self.stats.load_ms.push(done.ms);
                    let bytes = column_bytes(&chunks);
                    self.column_estimate_bytes = (self.column_estimate_bytes * 7 + bytes) / 8;
                    self.columns.remove(&done.column);
                    if !self.make_room(grid, bytes) {
                        // Over budget and nothing may go: drop the result
                        // (the column is absent again and asked for later),
                        // so resident bytes never pass the budget.
                        self.stats.dropped_over_budget += 1;
                        continue;
                    }
                    self.install(grid, done.column, chunks, Some(origin));
                    report.installed.push(done.column);
                }
                Err(e) => self.note_failed_load(done.column, e),
            }
        }
        report
    }

    /// Installs `column` from its copy in the spill queue (the newest
    /// cells; their write may still be running). It counts as loaded and
    /// stays edited until its write is confirmed stored: a column installed
    /// from the queue is spilled again if evicted (the queue's copy may be
    /// the only one if that write fails).
    fn install_spilled(&mut self, grid: &mut Grid, column: ColumnCoord) {
        let Some(chunks) = self.spills.get(column).cloned() else {
            return;
        };
        self.install(grid, column, chunks, Some(LoadOrigin::Loaded));
        if let Some(ColumnState::Resident { edited, .. }) = self.columns.get_mut(&column) {
            *edited = true;
        }
    }

    fn install_outside(&mut self, grid: &mut Grid, column: ColumnCoord) {
        match self.store.load_edited(column) {
            Ok(None) => self.install(grid, column, Vec::new(), None),
            Ok(Some(chunks)) => self.install(grid, column, chunks, Some(LoadOrigin::Loaded)),
            Err(e) => self.note_failed_load(column, e),
        }
    }

    fn note_failed_load(&mut self, column: ColumnCoord, e: SourceError) {
        log::error!("{e}");
        self.stats.failed_loads += 1;
        self.columns.remove(&column);
        self.first_load_error.get_or_insert(e);
    }

    /// True when the last [`Residency::demand`] could not ask for every
    /// wanted column because the budget is full of columns needed now.
    pub fn is_budget_blocked(&self) -> bool {
        self.budget_blocked
    }

    /// The first load that failed (a damaged stored column, an unreadable
    /// file), if any: the column stays absent, so its ground is missing.
    pub fn first_load_error(&self) -> Option<&SourceError> {
        self.first_load_error.as_ref()
    }

    /// Puts `column` into the grid and marks it resident; `origin` counts
    /// the load (`None`: a column outside the world, which is not loaded).
    fn install(
        &mut self,
        grid: &mut Grid,
        column: ColumnCoord,
        chunks: ColumnChunks,
        origin: Option<LoadOrigin>,
    ) {
        let bytes = column_bytes(&chunks);
        match origin {
            Some(LoadOrigin::Generated) => self.stats.generated += 1,
            Some(LoadOrigin::Loaded) => self.stats.loaded += 1,
            None => {}
        }
        if grid.install_column(column, chunks).is_err() {
            // The grid already holds it (installed outside this residency):
            // keep the grid's copy, which may carry edits.
            log::warn!(
                "chunk column ({}, {}) was already resident",
                column.x,
                column.z
            );
        }
        self.columns.insert(
            column,
            ColumnState::Resident {
                last_needed_frame: self.frame,
                bytes,
                edited: false,
            },
        );
        self.resident_chunk_bytes += bytes;
        self.note_peak();
    }

    /// Loads the absent or loading ones of `columns` on this thread and
    /// installs them: for work that cannot proceed without them (an edit
    /// applied from a script, an export, a save). A load already in flight
    /// for one of them becomes stale. Marks them needed this frame.
    ///
    /// # Errors
    /// The first [`SourceError`]; columns loaded before it stay resident.
    pub fn load_now(
        &mut self,
        grid: &mut Grid,
        columns: impl IntoIterator<Item = ColumnCoord>,
    ) -> Result<(), SourceError> {
        for column in columns {
            match self.columns.get_mut(&column) {
                Some(ColumnState::Resident {
                    last_needed_frame, ..
                }) => {
                    *last_needed_frame = self.frame;
                    continue;
                }
                Some(ColumnState::Loading { .. }) | None => {}
            }
            if self.spills.get(column).is_some() {
                // Replacing the Loading state makes the in-flight result stale.
                self.install_spilled(grid, column);
                continue;
            }
            let start = Instant::now();
            let (chunks, origin) = load_column(self.source.as_ref(), self.store.as_ref(), column)?;
            self.stats.load_ms.push(start.elapsed().as_secs_f64() * 1e3);
            // Replacing the Loading state makes the in-flight result stale.
            self.install(grid, column, chunks, Some(origin));
        }
        Ok(())
    }

    /// Ends the frame: later demand counts as a new frame, so columns needed
    /// only until now become evictable.
    pub fn end_frame(&mut self) {
        self.frame += 1;
    }

    /// Queues every edited resident column for the store (a recovery
    /// point: the autosave); they stay resident and the frame does not wait
    /// for the writes ([`Residency::flush_spills`] does). Returns how many
    /// were queued.
    pub fn store_edited(&mut self, grid: &Grid) -> usize {
        self.sync_edits(grid);
        let edited = self.edited_columns();
        for &column in &edited {
            let chunks = grid.column_chunks(column);
            let bytes = column_bytes(&chunks);
            self.spills.push(column, chunks, bytes);
            // The queue keeps the cells until the write lands (or retries
            // it), so the column may be evicted without another spill.
            self.mark_stored(column);
        }
        edited.len()
    }

    fn note_peak(&mut self) {
        self.stats.peak_resident_bytes = self.stats.peak_resident_bytes.max(self.resident_bytes());
    }
}

/// The columns of a box of a streaming world as they are now, taken on the
/// frame thread without waiting for a load: resident columns are copied
/// (with their unsaved edits), the others are loaded later, off the frame
/// thread, from the store (spilled edits) or the source
/// ([`RegionSnapshot::into_grid`]). For exports of a region box from the
/// window (spec §12: an export is demand).
pub struct RegionSnapshot {
    source: Arc<dyn ColumnSource>,
    store: Arc<dyn EditStore>,
    resident: Vec<(ColumnCoord, ColumnChunks)>,
    missing: Vec<ColumnCoord>,
}

impl std::fmt::Debug for RegionSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegionSnapshot")
            .field("resident", &self.resident.len())
            .field("missing", &self.missing.len())
            .finish()
    }
}

impl RegionSnapshot {
    /// Columns still to load.
    pub fn missing_columns(&self) -> usize {
        self.missing.len()
    }

    /// A streaming grid holding every column of the box: the copied ones
    /// and the missing ones loaded now on the calling thread, reporting
    /// `(done, total)` loads to `progress` after each; `cancelled` is asked
    /// between loads.
    ///
    /// # Errors
    /// The first [`SourceError`] of a load; `Ok(None)` when cancelled.
    pub fn into_grid(
        self,
        mut progress: impl FnMut(usize, usize),
        cancelled: impl Fn() -> bool,
    ) -> Result<Option<Grid>, SourceError> {
        let mut grid = Grid::streaming();
        let total = self.missing.len();
        for (column, chunks) in self.resident {
            // Each column once: the box lists every column one time.
            let _ = grid.install_column(column, chunks);
        }
        for (i, column) in self.missing.into_iter().enumerate() {
            if cancelled() {
                return Ok(None);
            }
            let (chunks, _) = load_column(self.source.as_ref(), self.store.as_ref(), column)?;
            let _ = grid.install_column(column, chunks);
            progress(i + 1, total);
        }
        Ok(Some(grid))
    }
}

impl Residency {
    /// The columns of `region` in `grid` now, for reading off the frame
    /// thread ([`RegionSnapshot`]). Nothing is loaded or evicted here; edits
    /// of resident columns after the call are not in the snapshot.
    pub fn snapshot_region(
        &self,
        grid: &Grid,
        region: &crate::terrain::storage::coords::CellBox,
    ) -> RegionSnapshot {
        let mut resident = Vec::new();
        let mut missing = Vec::new();
        for column in region.columns() {
            if grid.is_column_resident(column) {
                resident.push((column, grid.column_chunks(column)));
            } else {
                missing.push(column);
            }
        }
        RegionSnapshot {
            source: Arc::clone(&self.source),
            store: Arc::clone(&self.store),
            resident,
            missing,
        }
    }
}

/// One load: the edit store's copy when it has one, else the source.
fn load_column(
    source: &dyn ColumnSource,
    store: &dyn EditStore,
    column: ColumnCoord,
) -> Result<(ColumnChunks, LoadOrigin), SourceError> {
    if let Some(chunks) = store.load_edited(column)? {
        return Ok((chunks, LoadOrigin::Loaded));
    }
    Ok((source.load_column(column)?, source.origin()))
}
