//! The horizon: levels above the chunk, selected per frame, built coarsest
//! first on worker threads, with the nearest built ancestor drawn wherever a
//! node is still missing (spec §13).
//!
//! Selection walks the tree of node columns (every node of one `(level, x,
//! z)`, floor to top, taken as one) from the coarsest level down. A column
//! is refined (its 2×2 child columns drawn instead) while the camera is
//! nearer than the far end of the level below: level 3 ends at [`CHUNK_LEVELS_END_STUDS`] and
//! each level ends at twice the distance of the one below. A refined level-4
//! node hands its 2×2×2 chunks to the chunk levels (spec §6). Where a node's
//! children are not all ready, the node itself is drawn, and where it is not
//! ready either its parent is, so the ground is always covered and nothing
//! is drawn twice. Every node wanted but not built is requested, coarsest
//! first, so a camera that turns or jumps sees coarse ground at once.
//!
//! Selection writes into buffers the horizon keeps: once they have grown it
//! allocates nothing per frame (a test checks this with a counting
//! allocator).

use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Instant;

use glam::{DVec3, IVec3};
use rustc_hash::FxHashMap;

use crate::mesh::ChunkMesh;
use crate::mesh::field::SampleField;
use crate::mesh::node_mesh::{NodeColumns, mesh_node};
use crate::mesh::surface_nets::SurfaceNets;
use crate::terrain::storage::coords::{CELL_SIZE_STUDS, CHUNK_SIZE_CELLS, ChunkCoord, ColumnCoord};
use crate::terrain::storage::grid::Changes;
use crate::terrain::storage::grid::Grid;
use crate::terrain::storage::node::{FIRST_NODE_LEVEL, MAX_NODE_LEVEL, NodeKey};
use crate::terrain::streaming::column_source::{ColumnSource, EditStore};
use crate::terrain::streaming::column_summary::{ColumnSummaries, ColumnSummary, EditedSurface};

use super::lod::LEVEL_THRESHOLDS_STUDS;
use super::stats::Samples;
use super::world_meshes::WorldMeshes;

/// Far end of level 3, the coarsest chunk level: twice its near end (spec §13).
pub const CHUNK_LEVELS_END_STUDS: f64 = 2.0 * LEVEL_THRESHOLDS_STUDS[2];

/// Most node builds in flight at once.
pub const MAX_NODE_BUILDS_IN_FLIGHT: usize = 256;
/// Nodes per worker job.
pub const NODES_PER_JOB: usize = 8;
/// Columns this many of their sides beyond the frustum or the draw
/// distance are requested (built ahead) but not drawn.
pub const PREFETCH_MARGIN_SIDES: f64 = 0.5;
/// Frames a built node stays cached after it was last selected or wanted.
pub const NODE_KEEP_FRAMES: u64 = 240;

/// Far end of `level`'s range, studs: [`CHUNK_LEVELS_END_STUDS`] for level
/// 3, doubling per level.
pub fn level_far_end_studs(level: u8) -> f64 {
    CHUNK_LEVELS_END_STUDS * f64::from(1u32 << level.saturating_sub(3))
}

/// Chunks need meshes out to this distance while the horizon draws beyond
/// them: a refined level-4 node is nearer than [`CHUNK_LEVELS_END_STUDS`],
/// and its chunks reach one node diagonal further.
pub fn chunk_range_studs() -> f64 {
    CHUNK_LEVELS_END_STUDS + NodeKey::new(FIRST_NODE_LEVEL, IVec3::ZERO).side_studs() * 3f64.sqrt()
}

/// One entry of the frame's draw list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HorizonDraw {
    /// The chunks of this level-4 node, at their chunk levels.
    Chunks(NodeKey),
    /// This node's mesh.
    Node(NodeKey),
}

/// A built node.
#[derive(Clone, Debug)]
struct BuiltNode {
    mesh: Arc<ChunkMesh>,
    last_used_frame: u64,
    /// The epoch its build started in.
    epoch: u64,
}

/// Finished builds from the workers: `(node, build epoch, mesh)`.
type NodeResult = (NodeKey, u64, ChunkMesh);

/// The levels above the chunk of one streaming world.
pub struct Horizon {
    source: Arc<dyn ColumnSource>,
    /// Footprint `[0, w) × [0, d)` in cells.
    extent_cells: [i64; 2],
    top_cells: f64,
    built: FxHashMap<NodeKey, BuiltNode>,
    /// Builds in flight, with the epoch they were started in.
    in_flight: FxHashMap<NodeKey, u64>,
    /// Bumped by [`Horizon::invalidate`]; results of older epochs for
    /// invalidated nodes are dropped.
    epoch: u64,
    /// Epoch from which each invalidated node's builds are current.
    invalid_since: FxHashMap<NodeKey, u64>,
    /// Summaries of the edited columns (shared with the workers' builds).
    edited: Arc<ColumnSummaries>,
    /// The grid `(generation, revision)` whose edits are summarised.
    grid_reader: Option<(u64, u64)>,
    /// Summaries of the store's edited columns, read in the background
    /// after opening ([`Horizon::summarise_store`]).
    stored_rx: Option<Receiver<(ColumnCoord, ColumnSummary)>>,
    tx: Sender<NodeResult>,
    rx: Receiver<NodeResult>,
    draws: Vec<HorizonDraw>,
    /// Nodes to build: key, distance (studs) and whether it is drawn once
    /// built (else it is an ancestor or a node just outside the view, built
    /// ahead).
    wanted: Vec<(NodeKey, f64, bool)>,
    changed: Vec<NodeKey>,
    frame: u64,
    uncovered: usize,
    frozen: bool,
    /// When the oldest edit not yet shown by every drawn node was noted.
    edit_waiting_since: Option<Instant>,
    /// Edit-to-horizon latencies: from noting an edit to the first
    /// selection that draws no node built before it, ms.
    pub edit_to_horizon_ms: Samples,
}

impl std::fmt::Debug for Horizon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Horizon")
            .field("built", &self.built.len())
            .field("in_flight", &self.in_flight.len())
            .field("draws", &self.draws.len())
            .finish()
    }
}

/// What [`Horizon::select`] needs to know about the view.
pub struct HorizonView<'a> {
    /// Camera position, world studs.
    pub camera_pos_world: DVec3,
    /// Nothing farther is drawn, studs.
    pub draw_distance_studs: f64,
    /// True when a world box `(min, max)` may be visible (the frustum).
    pub in_view: &'a dyn Fn(DVec3, DVec3) -> bool,
    /// True when every chunk of a level-4 node has its mesh
    /// ([`chunks_ready`]).
    pub chunks_ready: &'a dyn Fn(NodeKey) -> bool,
}

impl Horizon {
    /// The horizon of a world whose columns come from `source`, or `None`
    /// when the source cannot answer coarse samples.
    pub fn new(source: Arc<dyn ColumnSource>) -> Option<Horizon> {
        let sampler = source.surface_sampler()?;
        let extent_cells = sampler.extent_cells();
        let top_cells = sampler.top_cells();
        let (tx, rx) = channel();
        Some(Horizon {
            source,
            extent_cells,
            top_cells,
            built: FxHashMap::default(),
            in_flight: FxHashMap::default(),
            epoch: 0,
            invalid_since: FxHashMap::default(),
            edited: Arc::new(ColumnSummaries::default()),
            grid_reader: None,
            stored_rx: None,
            tx,
            rx,
            draws: Vec::new(),
            wanted: Vec::new(),
            changed: Vec::new(),
            frame: 0,
            uncovered: 0,
            frozen: false,
            edit_waiting_since: None,
            edit_to_horizon_ms: Samples::default(),
        })
    }

    /// Stops selection: the last draw list stays as it is (debug panel).
    pub fn set_frozen(&mut self, frozen: bool) {
        self.frozen = frozen;
    }

    /// This frame's draw list, from the last [`Horizon::select`].
    pub fn draws(&self) -> &[HorizonDraw] {
        &self.draws
    }

    /// The built mesh of `key`.
    pub fn mesh(&self, key: NodeKey) -> Option<&Arc<ChunkMesh>> {
        self.built.get(&key).map(|b| &b.mesh)
    }

    /// Nodes whose mesh was built or dropped since the last call (for upload).
    pub fn take_changed(&mut self) -> Vec<NodeKey> {
        std::mem::take(&mut self.changed)
    }

    /// Areas of the view that neither a node nor its ancestors could cover
    /// at the last selection (0 once the coarsest nodes are built).
    pub fn uncovered(&self) -> usize {
        self.uncovered
    }

    /// The world's footprint `[width, depth]` in cells: `[0, w) × [0, d)`.
    pub fn extent_cells(&self) -> [i64; 2] {
        self.extent_cells
    }

    /// Nodes built and kept.
    pub fn built_count(&self) -> usize {
        self.built.len()
    }

    /// Builds in flight.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Nodes wanted at the last selection that were not built.
    pub fn wanted_count(&self) -> usize {
        self.wanted.len()
    }

    /// The nodes the last selection wanted, in request order (coarsest first,
    /// then nearest).
    pub fn wanted(&self) -> impl ExactSizeIterator<Item = NodeKey> + '_ {
        self.wanted.iter().map(|(k, _, _)| *k)
    }

    /// True when every node the last selection wanted is built and nothing
    /// is in flight.
    pub fn is_settled(&self) -> bool {
        self.wanted.is_empty() && self.in_flight.is_empty()
    }

    /// The y indices of `level`'s nodes that can hold surface: their boxes
    /// meet the band from one sample under the floor to one over the top.
    fn y_range(&self, level: u8) -> (i32, i32) {
        let k = NodeKey::new(level, IVec3::ZERO);
        let (side, spacing) = (k.side_cells() as f64, k.spacing_cells() as f64);
        let lo = (-spacing / side).floor() as i32;
        let hi = ((self.top_cells + spacing) / side).floor() as i32;
        (lo, hi)
    }

    /// True when `key`'s column meets the footprint (any y).
    fn in_footprint(&self, key: NodeKey) -> bool {
        let [x, _, z] = key.min_cell();
        let side = key.side_cells();
        x < self.extent_cells[0] && z < self.extent_cells[1] && x + side > 0 && z + side > 0
    }

    /// True when `key` meets the footprint and the vertical band of surface.
    fn may_hold_surface(&self, key: NodeKey) -> bool {
        let (lo, hi) = self.y_range(key.level);
        (lo..=hi).contains(&key.index.y) && self.in_footprint(key)
    }

    /// The box of node column `(level, x, z)` in world studs: its footprint
    /// from the floor to the highest surface.
    fn column_bounds_world(&self, level: u8, x: i32, z: i32) -> (DVec3, DVec3) {
        let (lo, hi) = NodeKey::new(level, IVec3::new(x, 0, z)).bounds_world();
        let top_studs = self.top_cells * f64::from(CELL_SIZE_STUDS);
        (
            DVec3::new(lo.x, 0.0, lo.z),
            DVec3::new(hi.x, top_studs, hi.z),
        )
    }

    /// Distance from `pos_world` to the column of `key` (its footprint from
    /// the floor to the highest surface), studs: the distance selection
    /// refines by, the same for every node of the column.
    pub fn column_distance_studs(&self, key: NodeKey, pos_world: DVec3) -> f64 {
        let (lo, hi) = self.column_bounds_world(key.level, key.index.x, key.index.z);
        (pos_world.clamp(lo, hi) - pos_world).length()
    }

    /// Chooses this frame's draw list and requests (see the module docs).
    /// Allocates nothing once its buffers have grown.
    pub fn select(&mut self, view: &HorizonView<'_>) {
        self.frame += 1;
        if self.frozen {
            return;
        }
        self.draws.clear();
        self.wanted.clear();
        self.uncovered = 0;
        let root = NodeKey::new(MAX_NODE_LEVEL, IVec3::ZERO);
        let side = root.side_studs();
        let reach = view.draw_distance_studs;
        let c = view.camera_pos_world;
        let lo_x = ((c.x - reach) / side).floor() as i32;
        let hi_x = ((c.x + reach) / side).floor() as i32;
        let lo_z = ((c.z - reach) / side).floor() as i32;
        let hi_z = ((c.z + reach) / side).floor() as i32;
        for z in lo_z..=hi_z {
            for x in lo_x..=hi_x {
                if !self.visit_column(MAX_NODE_LEVEL, x, z, view, true) {
                    self.uncovered += 1;
                }
            }
        }
        // The coarsest level is kept built one node beyond the view in every
        // direction, so a camera that turns, flies or jumps always has an
        // ancestor to draw.
        let (lo_y, hi_y) = self.y_range(MAX_NODE_LEVEL);
        for z in lo_z - 1..=hi_z + 1 {
            for y in lo_y..=hi_y {
                for x in lo_x - 1..=hi_x + 1 {
                    let key = NodeKey::new(MAX_NODE_LEVEL, IVec3::new(x, y, z));
                    if !self.may_hold_surface(key) {
                        continue;
                    }
                    match self.built.get_mut(&key) {
                        Some(node) => node.last_used_frame = self.frame,
                        None => {
                            let d = key.distance_studs(c);
                            if !self.wanted.iter().any(|(k, _, _)| *k == key) {
                                self.wanted.push((key, d, false));
                            }
                        }
                    }
                }
            }
        }
        if let Some(since) = self.edit_waiting_since
            && !self.draws_stale_node()
        {
            self.edit_to_horizon_ms
                .push(since.elapsed().as_secs_f64() * 1e3);
            self.edit_waiting_since = None;
        }
        // Coarsest first, then nearest.
        self.wanted.sort_unstable_by(|a, b| {
            b.0.level
                .cmp(&a.0.level)
                .then(a.1.total_cmp(&b.1))
                .then_with(|| (a.0.index.to_array()).cmp(&b.0.index.to_array()))
        });
    }

    /// True when a node of the draw list was built before an edit it samples.
    fn draws_stale_node(&self) -> bool {
        self.draws.iter().any(|d| match d {
            HorizonDraw::Node(k) => {
                let since = self.invalid_since.get(k).copied().unwrap_or(0);
                self.built.get(k).is_some_and(|n| n.epoch < since)
            }
            HorizonDraw::Chunks(_) => false,
        })
    }

    /// Selects node column `(level, x, z)` and below; false when the area
    /// is left uncovered.
    ///
    /// The unit is the column, every node of one `(level, x, z)` from the
    /// floor to the top together: its nodes are refined, drawn or replaced
    /// by an ancestor as one, because the surface of a column passes from
    /// one node to the one above or below it, and two levels stacked in one
    /// column would draw a coarse surface over a fine one.
    fn visit_column(
        &mut self,
        level: u8,
        x: i32,
        z: i32,
        view: &HorizonView<'_>,
        draw: bool,
    ) -> bool {
        if !self.in_footprint(NodeKey::new(level, IVec3::new(x, 0, z))) {
            return true;
        }
        let (lo, hi) = self.column_bounds_world(level, x, z);
        let pos = view.camera_pos_world;
        let d = self.column_distance_studs(NodeKey::new(level, IVec3::new(x, 0, z)), pos);
        let (lo_y, hi_y) = self.y_range(level);
        let side = NodeKey::new(level, IVec3::ZERO).side_studs();
        // Columns within half a side of the view are requested but not
        // drawn, so a column that comes into view as the camera moves or
        // turns is usually built already (else its parent is drawn in its
        // place and its siblings' whole area turns coarse for a moment).
        let margin = side * PREFETCH_MARGIN_SIDES;
        if d > view.draw_distance_studs + margin {
            return true;
        }
        let band = (
            DVec3::new(lo.x, f64::from(lo_y) * side, lo.z),
            DVec3::new(hi.x, f64::from(hi_y + 1) * side, hi.z),
        );
        let near = DVec3::splat(margin);
        if !(view.in_view)(band.0 - near, band.1 + near) {
            return true;
        }
        let draw = draw && d <= view.draw_distance_studs && (view.in_view)(band.0, band.1);
        let refined = d < level_far_end_studs(level - 1);
        // A refined column draws its children (for level 4: its chunks,
        // when every one has its mesh) if they cover its whole area.
        let mark = self.draws.len();
        let mut covered = refined;
        if refined {
            if level == FIRST_NODE_LEVEL {
                for y in lo_y..=hi_y {
                    let key = NodeKey::new(level, IVec3::new(x, y, z));
                    if (view.chunks_ready)(key) {
                        self.draws.push(HorizonDraw::Chunks(key));
                    } else {
                        covered = false;
                    }
                }
            } else {
                // Every child column is visited (not short-circuited), so
                // each missing node is requested.
                for (cx, cz) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    covered &= self.visit_column(level - 1, 2 * x + cx, 2 * z + cz, view, draw);
                }
            }
        }
        if !draw || !covered {
            self.draws.truncate(mark);
        }
        // The column's own nodes are kept built even while its children
        // are drawn: they are the ancestors that cover the children's area
        // while a child streams in (otherwise the fallback would reach the
        // coarsest level). They are wanted for the view itself only where
        // the column is drawn: it is not refined, or (level 4) its chunks
        // are not all ready.
        let for_view = draw && (!refined || (level == FIRST_NODE_LEVEL && !covered));
        let mut all_built = true;
        for y in lo_y..=hi_y {
            let key = NodeKey::new(level, IVec3::new(x, y, z));
            match self.built.get_mut(&key) {
                Some(node) => {
                    node.last_used_frame = self.frame;
                    // An edited node keeps its old mesh drawn until the new one comes.
                    if self
                        .invalid_since
                        .get(&key)
                        .is_some_and(|&since| node.epoch < since)
                    {
                        self.wanted.push((key, d, for_view));
                    }
                }
                None => {
                    self.wanted.push((key, d, for_view));
                    all_built = false;
                }
            }
        }
        if !draw || covered {
            return true;
        }
        if !all_built {
            return false;
        }
        for y in lo_y..=hi_y {
            let key = NodeKey::new(level, IVec3::new(x, y, z));
            if self.built.get(&key).is_some_and(|n| !n.mesh.is_empty()) {
                self.draws.push(HorizonDraw::Node(key));
            }
        }
        true
    }

    /// Starts builds for the wanted nodes, coarsest first, up to
    /// [`MAX_NODE_BUILDS_IN_FLIGHT`] (rayon workers, [`NODES_PER_JOB`] per job).
    pub fn dispatch(&mut self) {
        let mut batch: Vec<NodeKey> = Vec::new();
        for i in 0..self.wanted.len() {
            if self.in_flight.len() >= MAX_NODE_BUILDS_IN_FLIGHT {
                break;
            }
            let key = self.wanted[i].0;
            let since = self.invalid_since.get(&key).copied().unwrap_or(0);
            if self.in_flight.get(&key).is_some_and(|&e| e >= since) {
                continue;
            }
            self.in_flight.insert(key, self.epoch);
            batch.push(key);
        }
        // Coarsest first still, and the nodes of one node column together
        // so a job samples their columns once.
        batch.sort_by_key(|k| (std::cmp::Reverse(k.level), k.index.z, k.index.x, k.index.y));
        let mut start = 0;
        while start < batch.len() {
            let mut end = (start + NODES_PER_JOB).min(batch.len());
            let column = |k: &NodeKey| (k.level, k.index.x, k.index.z);
            while end < batch.len() && column(&batch[end]) == column(&batch[end - 1]) {
                end += 1;
            }
            self.spawn(batch[start..end].to_vec());
            start = end;
        }
    }

    fn spawn(&self, keys: Vec<NodeKey>) {
        let source = self.source.clone();
        let edited = self.edited.clone();
        let tx = self.tx.clone();
        let epoch = self.epoch;
        rayon::spawn(move || {
            let Some(base) = source.surface_sampler() else {
                return;
            };
            let sampler = EditedSurface {
                base,
                edited: &edited,
            };
            NODE_SCRATCH.with(|scratch| {
                let (mesher, field, columns) = &mut *scratch.borrow_mut();
                // A job's columns may differ from the last job's edits.
                **columns = NodeColumns::default();
                for key in keys {
                    let mut mesh = ChunkMesh::default();
                    mesh_node(mesher, field, columns, &sampler, key, &mut mesh);
                    // The receiver is gone only when the horizon was dropped.
                    if tx.send((key, epoch, mesh)).is_err() {
                        return;
                    }
                }
            });
        });
    }

    /// Summarises every column `store` holds, on a background thread, so
    /// edits of a reopened world show from afar before their columns are
    /// loaded: the summaries stored with them where the store keeps them
    /// (format-4 world files), else summaries of their chunks. Each summary arrives through [`Horizon::receive`]. Columns the
    /// store cannot read are skipped (their load reports the error).
    pub fn summarise_store(&mut self, store: Arc<dyn EditStore>) {
        let (tx, rx) = channel();
        self.stored_rx = Some(rx);
        std::thread::spawn(move || {
            let Ok(columns) = store.edited_columns() else {
                return;
            };
            for column in columns {
                // The summary stored with the column when the store keeps
                // one (no chunk is read), else one made from its chunks.
                let summary = match store.stored_summary(column) {
                    Ok(Some(summary)) => Some(summary),
                    _ => match store.load_edited(column) {
                        Ok(Some(chunks)) => Some(ColumnSummary::from_chunks(&chunks)),
                        _ => None,
                    },
                };
                if let Some(summary) = summary
                    && tx.send((column, summary)).is_err()
                {
                    return;
                }
            }
        });
    }

    /// Takes finished builds and stored summaries (never waits); returns how
    /// many builds were accepted. Also drops built nodes unused for
    /// [`NODE_KEEP_FRAMES`].
    pub fn receive(&mut self) -> usize {
        let mut stored = Vec::new();
        if let Some(rx) = &self.stored_rx {
            while let Ok(summary) = rx.try_recv() {
                stored.push(summary);
            }
        }
        for (column, summary) in stored {
            // An edit of this session summarised the column already.
            if !self.edited.contains_key(&column) {
                let top = summary.height_cells.iter().fold(0.0f32, |a, &b| a.max(b));
                self.top_cells = self.top_cells.max(f64::from(top));
                Arc::make_mut(&mut self.edited).insert(column, Arc::new(summary));
                self.invalidate_column(column);
            }
        }
        let mut accepted = 0;
        while let Ok(result) = self.rx.try_recv() {
            accepted += usize::from(self.accept(result));
        }
        if self.frame.is_multiple_of(60) {
            let frame = self.frame;
            let changed = &mut self.changed;
            self.built.retain(|&key, node| {
                let keep = frame.saturating_sub(node.last_used_frame) <= NODE_KEEP_FRAMES;
                if !keep {
                    changed.push(key);
                }
                keep
            });
        }
        accepted
    }

    /// Accepts one finished build unless an invalidation made it stale.
    fn accept(&mut self, (key, epoch, mesh): NodeResult) -> bool {
        if self.in_flight.get(&key) == Some(&epoch) {
            self.in_flight.remove(&key);
        }
        if self
            .invalid_since
            .get(&key)
            .is_some_and(|&since| epoch < since)
        {
            return false;
        }
        self.built.insert(
            key,
            BuiltNode {
                mesh: Arc::new(mesh),
                last_used_frame: self.frame,
                epoch,
            },
        );
        self.changed.push(key);
        true
    }

    /// Summarises the columns `grid`'s edits touched since the last call
    /// and invalidates every node that samples them (spec §13: an edit seen
    /// only from afar updates every level that shows it). The first call
    /// only starts reading.
    pub fn note_grid_changes(&mut self, grid: &Grid) {
        let now = (grid.generation(), grid.revision());
        let Some((generation, revision)) = self.grid_reader.replace(now) else {
            return;
        };
        if now == (generation, revision) {
            return;
        }
        let chunks: Vec<ChunkCoord> = match grid.changes_since(generation, revision) {
            Changes::Incremental { changed, removed } => {
                changed.into_iter().chain(removed).collect()
            }
            Changes::FullRefresh => return,
        };
        let mut columns: Vec<ColumnCoord> = chunks.iter().map(|&c| ColumnCoord::of(c)).collect();
        columns.sort_by_key(|c| (c.z, c.x));
        columns.dedup();
        let edited = Arc::make_mut(&mut self.edited);
        for &column in &columns {
            let summary = ColumnSummary::from_chunks(&grid.column_chunks(column));
            edited.insert(column, Arc::new(summary));
        }
        let top = self.top_cells.max(
            edited
                .values()
                .flat_map(|s| s.height_cells.iter())
                .fold(0.0f32, |a, &b| a.max(b)) as f64,
        );
        self.top_cells = top;
        self.edit_waiting_since.get_or_insert_with(Instant::now);
        for column in columns {
            self.invalidate_column(column);
        }
    }

    /// Invalidates every node that samples `column`, at every height.
    fn invalidate_column(&mut self, column: ColumnCoord) {
        let min = IVec3::new(column.x * CHUNK_SIZE_CELLS, 0, column.z * CHUNK_SIZE_CELLS);
        let max = min
            + IVec3::new(
                CHUNK_SIZE_CELLS,
                self.top_cells.ceil() as i32 + 1,
                CHUNK_SIZE_CELLS,
            );
        self.invalidate(min, max);
    }

    /// Edited columns with summaries.
    pub fn edited_columns(&self) -> usize {
        self.edited.len()
    }

    /// Blocks until every node the last selection wanted is built (tests).
    pub fn build_wanted_now(&mut self) {
        self.build_now(false);
    }

    /// Blocks until every node the last selection wanted to draw is built;
    /// ancestors and nodes outside the view are left to stream in later
    /// (headless first frames).
    pub fn build_drawn_now(&mut self) {
        self.build_now(true);
    }

    fn build_now(&mut self, drawn_only: bool) {
        if drawn_only {
            self.wanted.retain(|w| w.2);
        }
        loop {
            let (built, invalid) = (&self.built, &self.invalid_since);
            self.wanted.retain(|(k, _, _)| {
                built
                    .get(k)
                    .is_none_or(|n| invalid.get(k).is_some_and(|&e| n.epoch < e))
            });
            if self.wanted.is_empty() && self.in_flight.is_empty() {
                return;
            }
            self.dispatch();
            if let Ok(result) = self.rx.recv_timeout(std::time::Duration::from_millis(50)) {
                self.accept(result);
            }
        }
    }

    /// Marks every node whose samples read a cell of the box `[min_cell,
    /// max_cell)` as out of date: the next selection that uses it asks for a
    /// rebuild, and its old mesh stays drawn until the new one arrives.
    pub fn invalidate(&mut self, min_cell: IVec3, max_cell: IVec3) {
        self.epoch += 1;
        for level in FIRST_NODE_LEVEL..=MAX_NODE_LEVEL {
            let side = NodeKey::new(level, IVec3::ZERO).side_cells();
            // A node's samples reach 2 samples past its faces.
            let reach = 2 * NodeKey::new(level, IVec3::ZERO).spacing_cells() + 1;
            let lo = |v: i32| ((i64::from(v) - reach).div_euclid(side)) as i32;
            let hi = |v: i32| ((i64::from(v) + reach).div_euclid(side)) as i32;
            for z in lo(min_cell.z)..=hi(max_cell.z) {
                for y in lo(min_cell.y)..=hi(max_cell.y) {
                    for x in lo(min_cell.x)..=hi(max_cell.x) {
                        let key = NodeKey::new(level, IVec3::new(x, y, z));
                        self.invalid_since.insert(key, self.epoch);
                    }
                }
            }
        }
    }
}

thread_local! {
    static NODE_SCRATCH: std::cell::RefCell<(SurfaceNets, SampleField, Box<NodeColumns>)> =
        std::cell::RefCell::new((
            SurfaceNets::new(),
            SampleField::new(crate::terrain::storage::node::NODE_SAMPLES),
            Box::default(),
        ));
}

/// True when every chunk of level-4 node `key` that can own surface has a
/// mesh in `meshes`: its columns and their neighbours are resident and each
/// stored chunk (and each empty chunk beside a stored one above or to +x,
/// +z, which can own quads against it) has been meshed.
pub fn chunks_ready(grid: &Grid, meshes: &WorldMeshes, key: NodeKey) -> bool {
    key.chunks().all(|c| {
        if !grid.neighbourhood_resident(c) {
            return false;
        }
        if meshes.level_of(c).is_some() {
            return true;
        }
        let stored = |c: ChunkCoord| grid.chunk(c).is_some();
        !stored(c)
            && [IVec3::X, IVec3::Y, IVec3::Z]
                .iter()
                .all(|&d| !stored(ChunkCoord(c.0 + d)))
    })
}
