//! World collision (spec §10): a per-chunk cache of parry3d triangle meshes
//! built from the full-detail field, spatial queries against it, and a
//! capsule character controller. Plain Rust (no GPU or window types).
//!
//! # Why a cache of its own
//! Render meshes are derived per level of detail and change with the camera;
//! collision must be full detail wherever it is asked for and current after
//! every edit. The [`CollisionCache`] remembers the terrain instance, the
//! grid's generation and revision it was built from and the region (a box of
//! chunks) a caller asked for. [`CollisionCache::update`] asks the grid what
//! changed since ([`Grid::changes_since`]) and rebuilds exactly the chunks
//! whose collision mesh reads a changed cell (the changed chunks and, near
//! their borders, the affected face, edge and corner neighbours), keeping
//! the same `Arc` shape for every other chunk. It is synchronous, and builds
//! in parallel (rayon) when more than [`PARALLEL_BUILD_MIN_CHUNKS`] chunks
//! are affected.
//!
//! Colliders are placed at their chunk origin on one fixed [`TerrainBody`]
//! (at the world origin, grass physical properties). Queries run per chunk in
//! chunk-local `f32` coordinates computed from `f64` world positions, so they
//! are as precise far from the origin as near it.

pub mod character;
pub mod query;
pub mod scripted_walk;

use std::sync::Arc;
use std::time::Instant;

use glam::IVec3;
use parry3d::shape::{TriMesh, TriMeshFlags};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::mesh::collision_mesh::{CollisionMesh, CollisionMesher};
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::{CellBox, ChunkCoord};
use crate::terrain::storage::grid::{Changes, Grid};

pub use character::{WalkInput, Walker, WalkerSettings};
pub use query::{CapsuleHit, CapsuleSpec, QueryError, QueryOutcome, TerrainHit};

/// Cells a chunk's collision mesh reads beyond each face: its vertices come
/// from cubes whose corners lie at most 1 sample outside the chunk (no
/// normals are computed, unlike the render mesh's reach of 2).
pub const COLLISION_REACH_CELLS: i32 = 1;

/// More affected chunks than this are built in parallel.
pub const PARALLEL_BUILD_MIN_CHUNKS: usize = 8;

/// Largest region (in chunks) one update may cover: 32 × 32 × 16 chunks,
/// more than the whole 1024-cell default world.
pub const MAX_REGION_CHUNKS: u64 = 32 * 32 * 16;

/// Physical properties of a collider material.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhysicalMaterial {
    /// Density (Roblox units: relative to water).
    pub density: f32,
    /// Coulomb friction coefficient.
    pub friction: f32,
    /// Restitution (elasticity), 0..=1.
    pub restitution: f32,
}

impl PhysicalMaterial {
    /// Grass: the properties every terrain collider uses (spec §10), the
    /// Roblox defaults for Grass terrain (density 0.9, friction 0.4,
    /// elasticity 0.1).
    pub const GRASS: PhysicalMaterial = PhysicalMaterial {
        density: 0.9,
        friction: 0.4,
        restitution: 0.1,
    };
}

/// The one fixed body all terrain colliders attach to: at the world origin,
/// never moving, with grass physical properties. The material reported by a
/// query is looked up from the grid, not from the body.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TerrainBody {
    /// Physical properties of every collider of the body.
    pub physical: PhysicalMaterial,
    /// Material whose properties the body uses.
    pub material: Material,
}

impl Default for TerrainBody {
    fn default() -> Self {
        TerrainBody {
            physical: PhysicalMaterial::GRASS,
            material: Material::GRASS,
        }
    }
}

/// Identifies one terrain instance (e.g. one open world document). Together
/// with the grid's generation and revision it keys a [`CollisionCache`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TerrainId(pub u64);

/// The collider of one non-empty chunk.
#[derive(Clone, Debug)]
pub struct ChunkCollider {
    /// The chunk; the shape is placed at its origin on the [`TerrainBody`].
    pub coord: ChunkCoord,
    /// Triangle mesh in chunk-local studs, shared with every reader.
    pub shape: Arc<TriMesh>,
    /// Triangles before flat-patch reduction.
    pub triangles_before_reduction: u32,
    /// Triangles of the shape.
    pub triangles: u32,
}

/// Errors of [`CollisionCache::update`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CollisionError {
    /// The requested region contains no cell.
    #[error("collision region is empty")]
    EmptyRegion,
    /// The requested region covers more than [`MAX_REGION_CHUNKS`] chunks.
    #[error("collision region of {chunks} chunks exceeds the limit of {limit}")]
    RegionTooLarge {
        /// Chunks in the requested region.
        chunks: u64,
        /// The limit.
        limit: u64,
    },
    /// parry3d rejected a chunk's triangle mesh.
    #[error("collision mesh of chunk {coord:?} rejected: {reason}")]
    Shape {
        /// The chunk.
        coord: ChunkCoord,
        /// parry3d's message.
        reason: String,
    },
}

/// What one [`CollisionCache::update`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UpdateReport {
    /// Chunks whose collision mesh was (re)built, empty results included.
    pub rebuilt_chunks: usize,
    /// Of those, chunks rebuilt because an edit changed cells they read
    /// (the rest are new to the region, or all of them on a full rebuild).
    pub edited_chunks: usize,
    /// Colliders kept unchanged (same `Arc`).
    pub kept_colliders: usize,
    /// True when everything in the region was rebuilt (first build, other
    /// terrain, other generation, or expired change history).
    pub full: bool,
    /// Wall-clock time of the update, milliseconds.
    pub ms: f64,
}

/// Totals over the cache's colliders and the last rebuild.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CollisionStats {
    /// Colliders (non-empty chunks) in the cache.
    pub colliders: usize,
    /// Triangles of all colliders before flat-patch reduction.
    pub triangles_before_reduction: u64,
    /// Triangles of all colliders after reduction.
    pub triangles: u64,
    /// The last update that rebuilt at least one chunk.
    pub last_rebuild: UpdateReport,
    /// The last update that rebuilt chunks because of an edit.
    pub last_edit_rebuild: UpdateReport,
}

/// What a [`ChunkTable`] keeps of each non-empty chunk's collider.
trait ChunkEntry: Send {
    /// Keeps what is needed of a freshly built collider.
    fn keep(collider: ChunkCollider) -> Self;
    /// Triangles before and after flat-patch reduction.
    fn triangles(&self) -> (u32, u32);
}

impl ChunkEntry for ChunkCollider {
    fn keep(collider: ChunkCollider) -> Self {
        collider
    }
    fn triangles(&self) -> (u32, u32) {
        (self.triangles_before_reduction, self.triangles)
    }
}

/// One entry per non-empty chunk of a region, kept current with the grid:
/// the update logic the [`CollisionCache`] (whole colliders) and the
/// [`CollisionCensus`] (triangle counts only) share.
#[derive(Debug)]
struct ChunkTable<T> {
    /// `(terrain, generation, revision)` the entries reflect.
    key: Option<(TerrainId, u64, u64)>,
    /// Inclusive chunk range of the built region.
    region: Option<(IVec3, IVec3)>,
    entries: FxHashMap<ChunkCoord, T>,
    stats: CollisionStats,
}

impl<T> Default for ChunkTable<T> {
    fn default() -> Self {
        ChunkTable {
            key: None,
            region: None,
            entries: FxHashMap::default(),
            stats: CollisionStats::default(),
        }
    }
}

impl<T: ChunkEntry> ChunkTable<T> {
    /// See [`CollisionCache::update`]; each collider is reduced to `T` on
    /// the thread that built it.
    fn update(
        &mut self,
        grid: &Grid,
        terrain: TerrainId,
        region: CellBox,
    ) -> Result<UpdateReport, CollisionError> {
        let start = Instant::now();
        let since = self.key.and_then(|(id, generation, revision)| {
            (id == terrain).then_some((generation, revision))
        });
        let UpdatePlan {
            lo,
            hi,
            to_build,
            affected,
            full,
        } = plan_update(grid, since, self.region, region)?;
        let built = build_each(grid, &to_build, T::keep)?;

        // Apply: nothing above changed the table.
        if full {
            self.entries.clear();
        }
        self.entries
            .retain(|c, _| c.0.cmpge(lo).all() && c.0.cmple(hi).all());
        for (coord, entry) in built {
            match entry {
                Some(e) => {
                    self.entries.insert(coord, e);
                }
                None => {
                    self.entries.remove(&coord);
                }
            }
        }
        self.key = Some((terrain, grid.generation(), grid.revision()));
        self.region = Some((lo, hi));
        let rebuilt: FxHashSet<ChunkCoord> = to_build.iter().copied().collect();
        let report = UpdateReport {
            rebuilt_chunks: to_build.len(),
            edited_chunks: to_build.iter().filter(|c| affected.contains(c)).count(),
            kept_colliders: self.entries.keys().filter(|c| !rebuilt.contains(c)).count(),
            full,
            ms: start.elapsed().as_secs_f64() * 1000.0,
        };
        self.stats.colliders = self.entries.len();
        let (before, after) = self
            .entries
            .values()
            .map(ChunkEntry::triangles)
            .fold((0u64, 0u64), |(b, a), (tb, ta)| {
                (b + u64::from(tb), a + u64::from(ta))
            });
        self.stats.triangles_before_reduction = before;
        self.stats.triangles = after;
        if report.rebuilt_chunks > 0 {
            self.stats.last_rebuild = report;
        }
        if report.edited_chunks > 0 {
            self.stats.last_edit_rebuild = report;
        }
        Ok(report)
    }
}

/// Collision shapes of the non-empty chunks in a region, kept current with
/// the grid (see the module docs).
#[derive(Debug, Default)]
pub struct CollisionCache {
    table: ChunkTable<ChunkCollider>,
    body: TerrainBody,
}

impl CollisionCache {
    /// An empty cache (nothing built; queries report out-of-region).
    pub fn new() -> CollisionCache {
        CollisionCache::default()
    }

    /// The fixed body the colliders belong to.
    pub fn body(&self) -> &TerrainBody {
        &self.body
    }

    /// The collider of chunk `coord`, if it is in the region and non-empty.
    pub fn collider(&self, coord: ChunkCoord) -> Option<&ChunkCollider> {
        self.table.entries.get(&coord)
    }

    /// All colliders, in no particular order.
    pub fn colliders(&self) -> impl Iterator<Item = &ChunkCollider> {
        self.table.entries.values()
    }

    /// Totals and the last rebuild.
    pub fn stats(&self) -> CollisionStats {
        self.table.stats
    }

    /// The built region as a box of cells (whole chunks), if any.
    pub fn region_cells(&self) -> Option<CellBox> {
        self.table.region.map(|(lo, hi)| {
            CellBox::new(
                ChunkCoord(lo).min_cell().0,
                ChunkCoord(hi + IVec3::ONE).min_cell().0,
            )
        })
    }

    /// True when the colliders reflect `grid` of `terrain` as it is now.
    pub fn is_current(&self, grid: &Grid, terrain: TerrainId) -> bool {
        self.table.key == Some((terrain, grid.generation(), grid.revision()))
    }

    /// Makes the cache current for `grid` of `terrain` in the chunks
    /// overlapping `region` (global cells): builds chunks new to the region,
    /// rebuilds those whose collision mesh reads a cell changed since the last
    /// update, drops chunks outside the region, and keeps every other
    /// collider's shape (same `Arc`). Synchronous; parallel (rayon) when more
    /// than [`PARALLEL_BUILD_MIN_CHUNKS`] chunks need building.
    ///
    /// # Errors
    /// [`CollisionError::EmptyRegion`] or [`CollisionError::RegionTooLarge`]
    /// for a bad region, and [`CollisionError::Shape`] if parry3d rejects a
    /// mesh; the cache is unchanged in every case.
    pub fn update(
        &mut self,
        grid: &Grid,
        terrain: TerrainId,
        region: CellBox,
    ) -> Result<UpdateReport, CollisionError> {
        self.table.update(grid, terrain, region)
    }
}

/// Triangle counts of one chunk's collider (what a [`CollisionCensus`] keeps).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ColliderCounts {
    before_reduction: u32,
    after_reduction: u32,
}

impl ChunkEntry for ColliderCounts {
    fn keep(collider: ChunkCollider) -> Self {
        ColliderCounts {
            before_reduction: collider.triangles_before_reduction,
            after_reduction: collider.triangles,
        }
    }
    fn triangles(&self) -> (u32, u32) {
        (self.before_reduction, self.after_reduction)
    }
}

/// The figures of a [`CollisionCache`] over a region (colliders, triangles,
/// what each update rebuilt and how long it took) without keeping any
/// shape: every collider is built exactly as the cache builds it, counted,
/// and dropped on the thread that built it. For statistics over a whole
/// world, whose shapes would take about 150 bytes a triangle (millions of
/// triangles) for nothing.
#[derive(Debug, Default)]
pub struct CollisionCensus {
    table: ChunkTable<ColliderCounts>,
}

impl CollisionCensus {
    /// An empty census (nothing counted).
    pub fn new() -> CollisionCensus {
        CollisionCensus::default()
    }

    /// Totals and the last rebuild, as [`CollisionCache::stats`] would give
    /// them after the same updates.
    pub fn stats(&self) -> CollisionStats {
        self.table.stats
    }

    /// Brings the counts up to date for `grid` of `terrain` in `region`,
    /// building exactly the chunks [`CollisionCache::update`] would.
    ///
    /// # Errors
    /// As [`CollisionCache::update`]; the census is unchanged then.
    pub fn update(
        &mut self,
        grid: &Grid,
        terrain: TerrainId,
        region: CellBox,
    ) -> Result<UpdateReport, CollisionError> {
        self.table.update(grid, terrain, region)
    }
}

/// What one update of a region builds.
struct UpdatePlan {
    /// Inclusive chunk range of the region.
    lo: IVec3,
    hi: IVec3,
    /// Chunks to (re)build, in the region's order.
    to_build: Vec<ChunkCoord>,
    /// Chunks whose collision mesh reads a cell changed since the last update.
    affected: FxHashSet<ChunkCoord>,
    /// Everything in the region is built.
    full: bool,
}

/// Which chunks of `region` (global cells) an update must build, given the
/// `(generation, revision)` of `grid` the last update of the same terrain
/// reflected (`since`; `None`: build everything) and the chunk range it
/// covered (`old_region`): chunks new to the region, and those whose
/// collision mesh reads a cell changed since.
fn plan_update(
    grid: &Grid,
    since: Option<(u64, u64)>,
    old_region: Option<(IVec3, IVec3)>,
    region: CellBox,
) -> Result<UpdatePlan, CollisionError> {
    let (lo, hi) = region.chunk_range().ok_or(CollisionError::EmptyRegion)?;
    let (lo, hi) = (lo.0, hi.0);
    let extent = (hi - lo + IVec3::ONE).as_i64vec3();
    let chunks = (extent.x * extent.y * extent.z) as u64;
    if chunks > MAX_REGION_CHUNKS {
        return Err(CollisionError::RegionTooLarge {
            chunks,
            limit: MAX_REGION_CHUNKS,
        });
    }

    let mut affected: FxHashSet<ChunkCoord> = FxHashSet::default();
    let mut full = true;
    if let Some((generation, revision)) = since
        && let Changes::Incremental { changed, removed } = grid.changes_since(generation, revision)
    {
        full = false;
        for coord in changed {
            let extent = grid.changed_extent_since(coord, revision);
            affected.extend(chunks_reading_for_collision(&extent));
        }
        for coord in removed {
            affected.insert(coord);
            affected.extend(coord.neighbours());
        }
    }
    let in_old_region = |c: ChunkCoord| match old_region {
        Some((a, b)) if !full => c.0.cmpge(a).all() && c.0.cmple(b).all(),
        _ => false,
    };
    let to_build: Vec<ChunkCoord> = CellBox::new(
        ChunkCoord(lo).min_cell().0,
        ChunkCoord(hi + IVec3::ONE).min_cell().0,
    )
    .chunks()
    .filter(|&c| !in_old_region(c) || affected.contains(&c))
    .collect();
    Ok(UpdatePlan {
        lo,
        hi,
        to_build,
        affected,
        full,
    })
}

/// Builds the collider of each of `coords` (in parallel when there are more
/// than [`PARALLEL_BUILD_MIN_CHUNKS`]) and hands it to `keep` on the thread
/// that built it; `None` for an empty chunk.
fn build_each<T: Send>(
    grid: &Grid,
    coords: &[ChunkCoord],
    keep: impl Fn(ChunkCollider) -> T + Sync,
) -> Result<Vec<(ChunkCoord, Option<T>)>, CollisionError> {
    let build = |mesher: &mut CollisionMesher, coord: ChunkCoord| {
        build_collider(mesher, grid, coord).map(|c| (coord, c.map(&keep)))
    };
    if coords.len() > PARALLEL_BUILD_MIN_CHUNKS {
        coords
            .par_iter()
            .map_init(CollisionMesher::new, |m, &c| build(m, c))
            .collect()
    } else {
        let mut mesher = CollisionMesher::new();
        coords.iter().map(|&c| build(&mut mesher, c)).collect()
    }
}

/// Chunks whose collision mesh reads a cell of `changed` (global cells, max
/// exclusive): those whose box grown by [`COLLISION_REACH_CELLS`] meets it.
pub fn chunks_reading_for_collision(changed: &CellBox) -> impl Iterator<Item = ChunkCoord> + '_ {
    changed
        .expanded(COLLISION_REACH_CELLS)
        .chunks()
        .filter(move |c| {
            !c.cell_box()
                .expanded(COLLISION_REACH_CELLS)
                .intersect(changed)
                .is_empty()
        })
}

/// Flags of every terrain collider (spec §10): duplicate vertices merged and
/// internal edges fixed (which also merges duplicates).
pub fn collider_flags() -> TriMeshFlags {
    TriMeshFlags::MERGE_DUPLICATE_VERTICES | TriMeshFlags::FIX_INTERNAL_EDGES
}

/// Builds the parry3d shape of a collision mesh; `None` when it is empty.
///
/// # Errors
/// [`CollisionError::Shape`] when parry3d rejects the mesh.
pub fn shape_from_mesh(
    coord: ChunkCoord,
    mesh: &CollisionMesh,
) -> Result<Option<ChunkCollider>, CollisionError> {
    if mesh.is_empty() {
        return Ok(None);
    }
    let shape = TriMesh::with_flags(
        mesh.positions.clone(),
        mesh.indices.clone(),
        collider_flags(),
    )
    .map_err(|e| CollisionError::Shape {
        coord,
        reason: e.to_string(),
    })?;
    Ok(Some(ChunkCollider {
        coord,
        triangles: shape.num_triangles() as u32,
        shape: Arc::new(shape),
        triangles_before_reduction: mesh.triangles_before_reduction,
    }))
}

/// Extracts and builds the collider of one chunk (`None` when empty).
///
/// # Errors
/// See [`shape_from_mesh`].
pub fn build_collider(
    mesher: &mut CollisionMesher,
    grid: &Grid,
    coord: ChunkCoord,
) -> Result<Option<ChunkCollider>, CollisionError> {
    let mut mesh = CollisionMesh::default();
    mesher.mesh_chunk(grid, coord, &mut mesh);
    shape_from_mesh(coord, &mesh)
}
