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

/// Collision shapes of the non-empty chunks in a region, kept current with
/// the grid (see the module docs).
#[derive(Debug, Default)]
pub struct CollisionCache {
    /// `(terrain, generation, revision)` the colliders reflect.
    key: Option<(TerrainId, u64, u64)>,
    /// Inclusive chunk range of the built region.
    region: Option<(IVec3, IVec3)>,
    colliders: FxHashMap<ChunkCoord, ChunkCollider>,
    body: TerrainBody,
    stats: CollisionStats,
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
        self.colliders.get(&coord)
    }

    /// All colliders, in no particular order.
    pub fn colliders(&self) -> impl Iterator<Item = &ChunkCollider> {
        self.colliders.values()
    }

    /// Totals and the last rebuild.
    pub fn stats(&self) -> CollisionStats {
        self.stats
    }

    /// The built region as a box of cells (whole chunks), if any.
    pub fn region_cells(&self) -> Option<CellBox> {
        self.region.map(|(lo, hi)| {
            CellBox::new(
                ChunkCoord(lo).min_cell().0,
                ChunkCoord(hi + IVec3::ONE).min_cell().0,
            )
        })
    }

    /// True when the colliders reflect `grid` of `terrain` as it is now.
    pub fn is_current(&self, grid: &Grid, terrain: TerrainId) -> bool {
        self.key == Some((terrain, grid.generation(), grid.revision()))
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
        let start = Instant::now();
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
        if let Some((id, generation, revision)) = self.key
            && id == terrain
            && let Changes::Incremental { changed, removed } =
                grid.changes_since(generation, revision)
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
        let in_old_region = |c: ChunkCoord| match self.region {
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

        let build = |mesher: &mut CollisionMesher, coord: ChunkCoord| {
            build_collider(mesher, grid, coord).map(|c| (coord, c))
        };
        let built: Result<Vec<_>, CollisionError> = if to_build.len() > PARALLEL_BUILD_MIN_CHUNKS {
            to_build
                .par_iter()
                .map_init(CollisionMesher::new, |m, &c| build(m, c))
                .collect()
        } else {
            let mut mesher = CollisionMesher::new();
            to_build.iter().map(|&c| build(&mut mesher, c)).collect()
        };
        let built = built?;

        // Apply: nothing above changed the cache.
        if full {
            self.colliders.clear();
        }
        self.colliders
            .retain(|c, _| c.0.cmpge(lo).all() && c.0.cmple(hi).all());
        for (coord, collider) in built {
            match collider {
                Some(c) => {
                    self.colliders.insert(coord, c);
                }
                None => {
                    self.colliders.remove(&coord);
                }
            }
        }
        self.key = Some((terrain, grid.generation(), grid.revision()));
        self.region = Some((lo, hi));
        let rebuilt: FxHashSet<ChunkCoord> = to_build.iter().copied().collect();
        let report = UpdateReport {
            rebuilt_chunks: to_build.len(),
            edited_chunks: to_build.iter().filter(|c| affected.contains(c)).count(),
            kept_colliders: self
                .colliders
                .keys()
                .filter(|c| !rebuilt.contains(c))
                .count(),
            full,
            ms: start.elapsed().as_secs_f64() * 1000.0,
        };
        self.stats.colliders = self.colliders.len();
        self.stats.triangles_before_reduction = self
            .colliders
            .values()
            .map(|c| u64::from(c.triangles_before_reduction))
            .sum();
        self.stats.triangles = self
            .colliders
            .values()
            .map(|c| u64::from(c.triangles))
            .sum();
        if report.rebuilt_chunks > 0 {
            self.stats.last_rebuild = report;
        }
        if report.edited_chunks > 0 {
            self.stats.last_edit_rebuild = report;
        }
        Ok(report)
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
