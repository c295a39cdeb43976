//! The set of current chunk meshes and how it follows the grid.
//!
//! This is the synchronous meshing path: build every candidate chunk in
//! parallel at start-up, and after an edit re-mesh exactly the chunks whose
//! padded reads the edit touched. Every replaced or removed mesh is recorded
//! so the renderer re-uploads exactly those chunks.

use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::mesh::coarse::gather_level;
use crate::mesh::field::{Neighbourhood, SampleField};
use crate::mesh::skirts::{add_skirts, skirt_depth_studs};
use crate::mesh::{ChunkMesh, MeshOptions, SurfaceNets};
use crate::terrain::coords::ChunkCoord;
use crate::terrain::grid::{EditReport, Grid};

use super::invalidation::chunks_to_remesh_l0;

/// Current full-detail meshes of all chunks with surface, plus the list of
/// chunks whose mesh changed since the renderer last took it.
#[derive(Debug, Default)]
pub struct WorldMeshes {
    meshes: FxHashMap<ChunkCoord, Arc<ChunkMesh>>,
    changed: Vec<ChunkCoord>,
    /// Wall time of the last [`WorldMeshes::build_all`] or [`WorldMeshes::remesh`], in milliseconds.
    pub last_mesh_ms: f64,
}

thread_local! {
    static MESHER: std::cell::RefCell<SurfaceNets> = std::cell::RefCell::new(SurfaceNets::new());
    static COARSE_FIELD: std::cell::RefCell<SampleField> =
        std::cell::RefCell::new(SampleField::new(16));
}

/// Meshes one chunk at full detail with this thread's reusable mesher.
pub fn mesh_one_l0(grid: &Grid, coord: ChunkCoord) -> ChunkMesh {
    mesh_one(grid, coord, 0, MeshOptions::default())
}

/// Meshes one chunk at `level` (0 = full detail, up to 3) with this thread's
/// reusable buffers. Coarse meshes get render-only skirts (spec §6).
pub fn mesh_one(grid: &Grid, coord: ChunkCoord, level: u8, options: MeshOptions) -> ChunkMesh {
    let mut mesh = ChunkMesh::default();
    if level == 0 {
        MESHER.with(|m| {
            m.borrow_mut()
                .mesh_chunk_l0(grid, coord, options, &mut mesh)
        });
        return mesh;
    }
    let hood = Neighbourhood::from_grid(grid, coord);
    if hood.is_uniform_on_one_side() {
        return mesh;
    }
    COARSE_FIELD.with(|f| {
        let mut field = f.borrow_mut();
        gather_level(&mut field, &hood, level);
        MESHER.with(|m| m.borrow_mut().mesh_field(&field, options, &mut mesh));
    });
    if !mesh.is_empty() {
        add_skirts(&mut mesh, skirt_depth_studs(level));
    }
    mesh
}

impl WorldMeshes {
    /// Meshes every meshing candidate of `grid` in parallel.
    pub fn build_all(grid: &Grid) -> WorldMeshes {
        let mut w = WorldMeshes::default();
        w.remesh(grid, &grid.meshing_candidates());
        w
    }

    /// Re-meshes `coords` (in parallel) and records them as changed.
    pub fn remesh(&mut self, grid: &Grid, coords: &[ChunkCoord]) {
        let start = Instant::now();
        let results: Vec<(ChunkCoord, ChunkMesh)> = if coords.len() > 4 {
            coords
                .par_iter()
                .map(|&c| (c, mesh_one_l0(grid, c)))
                .collect()
        } else {
            coords.iter().map(|&c| (c, mesh_one_l0(grid, c))).collect()
        };
        for (coord, mesh) in results {
            let had = if mesh.is_empty() {
                self.meshes.remove(&coord).is_some()
            } else {
                self.meshes.insert(coord, Arc::new(mesh));
                true
            };
            if had {
                self.changed.push(coord);
            }
        }
        self.last_mesh_ms = start.elapsed().as_secs_f64() * 1e3;
    }

    /// Re-meshes what `report` invalidated (spec §8) and returns those chunks.
    pub fn apply_edit(&mut self, grid: &Grid, report: &EditReport) -> Vec<ChunkCoord> {
        let coords = chunks_to_remesh_l0(report);
        self.remesh(grid, &coords);
        coords
    }

    /// Replaces the mesh of `coord` with one the pipeline just made visible
    /// (removing it when empty). Not recorded as changed: the pipeline already
    /// uploaded it to the GPU.
    pub fn set_published(&mut self, coord: ChunkCoord, mesh: Arc<ChunkMesh>) {
        if mesh.is_empty() {
            self.meshes.remove(&coord);
        } else {
            self.meshes.insert(coord, mesh);
        }
    }

    /// A copy sharing every mesh (`Arc`s, no geometry copied), without the
    /// pending change list: the surface as it is now, e.g. for picking during
    /// a brush stroke while the live meshes keep changing.
    pub fn snapshot(&self) -> WorldMeshes {
        WorldMeshes {
            meshes: self.meshes.clone(),
            changed: Vec::new(),
            last_mesh_ms: self.last_mesh_ms,
        }
    }

    /// Chunks whose mesh was replaced or removed since the last call.
    pub fn take_changed(&mut self) -> Vec<ChunkCoord> {
        let mut v = std::mem::take(&mut self.changed);
        v.sort_by_key(|c| (c.0.z, c.0.y, c.0.x));
        v.dedup();
        v
    }

    /// The current mesh of `coord`, if it has surface.
    pub fn get(&self, coord: ChunkCoord) -> Option<&Arc<ChunkMesh>> {
        self.meshes.get(&coord)
    }

    /// All non-empty meshes.
    pub fn iter(&self) -> impl Iterator<Item = (ChunkCoord, &Arc<ChunkMesh>)> {
        self.meshes.iter().map(|(k, v)| (*k, v))
    }

    /// Number of chunks with a non-empty mesh.
    pub fn len(&self) -> usize {
        self.meshes.len()
    }

    /// True when no chunk has surface.
    pub fn is_empty(&self) -> bool {
        self.meshes.is_empty()
    }

    /// Total `(vertices, triangles)` over all meshes.
    pub fn totals(&self) -> (usize, usize) {
        self.meshes.values().fold((0, 0), |(v, t), m| {
            (v + m.vertex_count(), t + m.triangle_count())
        })
    }
}
