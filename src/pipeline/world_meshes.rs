//! The chunk meshes currently shown, with the level each was meshed at.
//!
//! This is also the editor's CPU copy of the displayed geometry (for brush
//! picking): the pipeline updates it in the same step that makes a new mesh
//! visible on the GPU. Start-up meshes everything in parallel in one go;
//! every chunk built that way is recorded as changed so the renderer uploads
//! exactly those.

use std::sync::Arc;
use std::time::Instant;

use glam::Vec3;
use rayon::prelude::*;

use crate::progress::{Cancelled, Progress};
use rustc_hash::FxHashMap;

use crate::mesh::coarse::gather_level;
use crate::mesh::field::{Neighbourhood, SampleField};
use crate::mesh::lowpoly::lowpoly_chunk::mesh_low_poly_chunk;
use crate::mesh::skirts::{add_skirts, skirt_depth_studs};
use crate::mesh::water::{WaterMesh, mesh_water};
use crate::mesh::{ChunkMesh, MeshOptions, MeshStyle, SurfaceNets};
use crate::terrain::storage::coords::ChunkCoord;
use crate::terrain::storage::grid::Grid;

use super::lod::LEVEL_COUNT;

/// Shown meshes of all chunks with surface, the level of every chunk that was
/// meshed (empty ones too, so they are not rescheduled), and the chunks whose
/// mesh changed since the renderer last took them.
#[derive(Debug, Default)]
pub struct WorldMeshes {
    meshes: FxHashMap<ChunkCoord, Arc<ChunkMesh>>,
    /// Chunk-local bounds of each mesh, computed once when it is set (picking
    /// tests them every frame).
    bounds: FxHashMap<ChunkCoord, (Vec3, Vec3)>,
    levels: FxHashMap<ChunkCoord, u8>,
    /// Water surface of each chunk that shows water (meshed cell by cell,
    /// the same at every level).
    water: FxHashMap<ChunkCoord, Arc<WaterMesh>>,
    changed: Vec<ChunkCoord>,
    /// Wall time of the last [`WorldMeshes::build_all`] or [`WorldMeshes::build`], ms.
    pub last_mesh_ms: f64,
}

/// Meshes the water surface of one chunk (the same at every level).
pub fn mesh_water_one(grid: &Grid, coord: ChunkCoord) -> WaterMesh {
    let mut water = WaterMesh::default();
    mesh_water(&Neighbourhood::from_grid(grid, coord), &mut water);
    water
}

/// How far skirts reach past the chunk's side faces, studs.
pub const SKIRT_OVERHANG_STUDS: f32 = 1.5;

thread_local! {
    static MESHER: std::cell::RefCell<SurfaceNets> = std::cell::RefCell::new(SurfaceNets::new());
    static COARSE_FIELD: std::cell::RefCell<SampleField> =
        std::cell::RefCell::new(SampleField::new(16));
}

/// Meshes one chunk at full detail with this thread's reusable mesher.
pub fn mesh_one_l0(grid: &Grid, coord: ChunkCoord) -> ChunkMesh {
    mesh_one(grid, coord, 0, MeshOptions::default())
}

/// Meshes one chunk at `level` in `style`: Surface Nets ([`mesh_one`]) or
/// the low-poly heightfield ([`mesh_low_poly_chunk`], which needs the
/// chunk's column and its neighbours in `grid`).
pub fn mesh_styled(grid: &Grid, coord: ChunkCoord, level: u8, style: MeshStyle) -> ChunkMesh {
    match style {
        MeshStyle::Smooth => mesh_one(grid, coord, level, MeshOptions::default()),
        MeshStyle::LowPoly { step_cells } => mesh_low_poly_chunk(grid, coord, level, step_cells),
    }
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
        // A small overhang past the chunk faces closes the slivers a finer
        // neighbour's border leaves; larger ones poke out of steep slopes.
        add_skirts(
            &mut mesh,
            skirt_depth_studs(level),
            crate::mesh::coarse::samples_per_axis(level),
            SKIRT_OVERHANG_STUDS,
        );
    }
    mesh
}

impl WorldMeshes {
    /// World-space bounds `(min, max)` in studs of every mesh, or `None` when empty.
    pub fn bounds_world(&self) -> Option<(glam::DVec3, glam::DVec3)> {
        let mut acc: Option<(glam::DVec3, glam::DVec3)> = None;
        for (coord, mesh) in self.iter() {
            let Some((lo, hi)) = mesh.bounds_local() else {
                continue;
            };
            let o = coord.origin_world();
            let (lo, hi) = (o + lo.as_dvec3(), o + hi.as_dvec3());
            acc = Some(match acc {
                Some((a, b)) => (a.min(lo), b.max(hi)),
                None => (lo, hi),
            });
        }
        acc
    }

    /// Meshes every meshing candidate of `grid` at full detail, in parallel.
    pub fn build_all(grid: &Grid) -> WorldMeshes {
        WorldMeshes::build(grid, &grid.meshing_candidates(), |_| 0)
    }

    /// Meshes `coords` in parallel, each at `level_of(coord)`, recording every
    /// chunk with a mesh as changed (for the renderer's first upload).
    pub fn build(
        grid: &Grid,
        coords: &[ChunkCoord],
        level_of: impl Fn(ChunkCoord) -> u8 + Sync,
    ) -> WorldMeshes {
        WorldMeshes::build_styled(grid, coords, level_of, MeshStyle::Smooth)
    }

    /// [`WorldMeshes::build`] with the `style`'s mesher.
    pub fn build_styled(
        grid: &Grid,
        coords: &[ChunkCoord],
        level_of: impl Fn(ChunkCoord) -> u8 + Sync,
        style: MeshStyle,
    ) -> WorldMeshes {
        // A fresh progress is never cancelled, so this is always `Ok`.
        WorldMeshes::build_with_progress(grid, coords, level_of, style, &Progress::new())
            .unwrap_or_default()
    }

    /// [`WorldMeshes::build_styled`], counting chunks meshed in `progress` (stage
    /// "meshing") and stopping early when it is cancelled.
    ///
    /// # Errors
    /// [`Cancelled`] when `progress` was cancelled; nothing is returned.
    pub fn build_with_progress(
        grid: &Grid,
        coords: &[ChunkCoord],
        level_of: impl Fn(ChunkCoord) -> u8 + Sync,
        style: MeshStyle,
        progress: &Progress,
    ) -> Result<WorldMeshes, Cancelled> {
        let start = Instant::now();
        progress.begin_stage("meshing", coords.len() as u64);
        let results: Vec<(ChunkCoord, u8, ChunkMesh, WaterMesh)> = coords
            .par_iter()
            .filter(|_| !progress.is_cancelled())
            .map(|&c| {
                let level = level_of(c);
                let mesh = mesh_styled(grid, c, level, style);
                progress.advance(1);
                (c, level, mesh, mesh_water_one(grid, c))
            })
            .collect();
        progress.check()?;
        let mut w = WorldMeshes::default();
        for (coord, level, mesh, water) in results {
            w.levels.insert(coord, level);
            let shown = !mesh.is_empty() || !water.is_empty();
            if !mesh.is_empty() {
                w.insert(coord, Arc::new(mesh));
            }
            if !water.is_empty() {
                w.water.insert(coord, Arc::new(water));
            }
            if shown {
                w.changed.push(coord);
            }
        }
        w.last_mesh_ms = start.elapsed().as_secs_f64() * 1e3;
        Ok(w)
    }

    /// Replaces the mesh of `coord` with one the pipeline just made visible at
    /// `level` (removing it when empty; the level is kept either way). Not
    /// recorded as changed: the pipeline already uploaded it to the GPU.
    /// `water` replaces the chunk's water surface (removed when empty);
    /// `None` keeps it (a level-only change).
    pub fn set_published(
        &mut self,
        coord: ChunkCoord,
        level: u8,
        mesh: Arc<ChunkMesh>,
        water: Option<Arc<WaterMesh>>,
    ) {
        self.levels.insert(coord, level);
        match water {
            Some(w) if w.is_empty() => {
                self.water.remove(&coord);
            }
            Some(w) => {
                self.water.insert(coord, w);
            }
            None => {}
        }
        if mesh.is_empty() {
            self.meshes.remove(&coord);
            self.bounds.remove(&coord);
        } else {
            self.insert(coord, mesh);
        }
    }

    /// A copy sharing every mesh (`Arc`s, no geometry copied), without the
    /// pending change list: the surface as it is now, e.g. for picking during
    /// a brush stroke while the live meshes keep changing.
    pub fn snapshot(&self) -> WorldMeshes {
        WorldMeshes {
            meshes: self.meshes.clone(),
            bounds: self.bounds.clone(),
            levels: self.levels.clone(),
            water: self.water.clone(),
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

    fn insert(&mut self, coord: ChunkCoord, mesh: Arc<ChunkMesh>) {
        if let Some(b) = mesh.bounds_local() {
            self.bounds.insert(coord, b);
        }
        self.meshes.insert(coord, mesh);
    }

    /// Every non-empty mesh with its chunk-local bounds `(min, max)` in studs.
    pub fn iter_with_bounds(
        &self,
    ) -> impl Iterator<Item = (ChunkCoord, &Arc<ChunkMesh>, (Vec3, Vec3))> {
        self.meshes
            .iter()
            .filter_map(|(c, m)| self.bounds.get(c).map(|b| (*c, m, *b)))
    }

    /// The water surface of `coord`, if it shows water.
    pub fn water_of(&self, coord: ChunkCoord) -> Option<&Arc<WaterMesh>> {
        self.water.get(&coord)
    }

    /// Every chunk's water surface.
    pub fn water_iter(&self) -> impl Iterator<Item = (ChunkCoord, &Arc<WaterMesh>)> {
        self.water.iter().map(|(c, w)| (*c, w))
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

    /// The level `coord` was last meshed at (also for empty chunks), if any.
    pub fn level_of(&self, coord: ChunkCoord) -> Option<u8> {
        self.levels.get(&coord).copied()
    }

    /// Every chunk that has been meshed, with its level.
    pub fn levels(&self) -> impl Iterator<Item = (ChunkCoord, u8)> + '_ {
        self.levels.iter().map(|(c, l)| (*c, *l))
    }

    /// Forgets `coord` entirely (mesh and level), e.g. when it leaves the
    /// retention range; returns whether it had a mesh.
    pub fn evict(&mut self, coord: ChunkCoord) -> bool {
        self.levels.remove(&coord);
        self.bounds.remove(&coord);
        self.water.remove(&coord);
        self.meshes.remove(&coord).is_some()
    }

    /// Heap bytes of the CPU copies of every mesh and water surface (they
    /// count against a streaming world's memory budget, spec §12).
    pub fn heap_bytes(&self) -> usize {
        self.meshes.values().map(|m| m.heap_bytes()).sum::<usize>()
            + self
                .water
                .values()
                .map(|w| std::mem::size_of_val(w.as_ref()) + w.heap_bytes())
                .sum::<usize>()
    }

    /// Triangles (surface and skirts) per level of detail.
    pub fn triangles_by_level(&self) -> [usize; LEVEL_COUNT] {
        let mut t = [0; LEVEL_COUNT];
        for (coord, mesh) in &self.meshes {
            let level = self.levels.get(coord).copied().unwrap_or(0) as usize;
            t[level.min(LEVEL_COUNT - 1)] += mesh.triangle_count();
        }
        t
    }

    /// Chunks whose mesh draws some materials as another (more than 30
    /// solid materials near one chunk: see
    /// [`crate::mesh::local_palette`]), and the materials so drawn summed
    /// over them.
    pub fn merged_materials(&self) -> (usize, usize) {
        self.meshes
            .values()
            .filter(|m| m.merged_materials > 0)
            .fold((0, 0), |(c, n), m| (c + 1, n + m.merged_materials as usize))
    }

    /// Chunks with a mesh per level of detail.
    pub fn chunks_by_level(&self) -> [usize; LEVEL_COUNT] {
        let mut n = [0; LEVEL_COUNT];
        for coord in self.meshes.keys() {
            let level = self.levels.get(coord).copied().unwrap_or(0) as usize;
            n[level.min(LEVEL_COUNT - 1)] += 1;
        }
        n
    }

    /// Total `(vertices, triangles)` over all meshes.
    pub fn totals(&self) -> (usize, usize) {
        self.meshes.values().fold((0, 0), |(v, t), m| {
            (v + m.vertex_count(), t + m.triangle_count())
        })
    }
}
