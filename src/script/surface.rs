//! The surface that script points given as `(x, z)` are dropped onto: the
//! full-detail (level 0) Surface Nets surface of the grid as it was when the
//! script began, meshed on demand from the grid itself.
//!
//! Dropping onto what happens to be displayed would make a script's result
//! depend on the camera, the draw distance and `--force-level` (coarse
//! levels lie up to hundreds of studs off the full-detail surface far from
//! the camera, and chunks beyond the draw distance have no mesh at all).
//! The level-0 mesh is what an artist sees up close, and it depends only on
//! the cells.

use std::sync::Arc;

use glam::{DVec3, IVec3, Vec3};
use rustc_hash::FxHashMap;

use crate::mesh::ChunkMesh;
use crate::pipeline::picking::pick_chunk;
use crate::pipeline::world_meshes::mesh_one_l0;
use crate::terrain::storage::coords::{CHUNK_SIZE_CELLS, CHUNK_SIZE_STUDS, ChunkCoord};
use crate::terrain::storage::grid::Grid;

/// A snapshot of a grid's full-detail surface, meshed chunk by chunk as
/// points are dropped onto it (each chunk once).
pub struct SurfaceSnapshot {
    /// Copy-on-write snapshot of the cells (no cell is copied).
    grid: Grid,
    /// Lowest and highest chunk row (y) that can hold surface: the stored
    /// rows and one below them.
    rows_y: Option<(i32, i32)>,
    meshes: FxHashMap<ChunkCoord, Arc<ChunkMesh>>,
}

impl SurfaceSnapshot {
    /// The surface of `grid` as it is now; later edits of `grid` do not move it.
    pub fn of(grid: &Grid) -> SurfaceSnapshot {
        let rows_y = grid.bounds_cells().map(|b| {
            (
                b.min.y.div_euclid(CHUNK_SIZE_CELLS) - 1,
                (b.max.y - 1).div_euclid(CHUNK_SIZE_CELLS),
            )
        });
        SurfaceSnapshot {
            grid: grid.clone(),
            rows_y,
            meshes: FxHashMap::default(),
        }
    }

    /// The topmost surface point below world `(x, z)` (studs) and its unit
    /// normal (facing up, out of the terrain), or `None` where the column
    /// holds no surface (or for non-finite input).
    pub fn drop_onto(&mut self, x: f64, z: f64) -> Option<(DVec3, DVec3)> {
        if !(x.is_finite() && z.is_finite()) {
            return None;
        }
        let (low, high) = self.rows_y?;
        let size = CHUNK_SIZE_STUDS as f64;
        let column = IVec3::new((x / size).floor() as i32, 0, (z / size).floor() as i32);
        for cy in (low..=high).rev() {
            let coord = ChunkCoord(IVec3::new(column.x, cy, column.z));
            let mesh = self.mesh(coord);
            if mesh.is_empty() {
                continue;
            }
            // From just above this chunk's top, straight down through it.
            let top = (cy as f64 + 1.0) * size + 1.0;
            let origin = DVec3::new(x, top, z);
            if let Some(hit) = pick_chunk(&mesh, coord, origin, -Vec3::Y, size + 2.0) {
                return Some((hit.pos_world, hit.normal.as_dvec3()));
            }
        }
        None
    }

    /// The level-0 mesh of `coord` in the snapshot, meshed on first use.
    fn mesh(&mut self, coord: ChunkCoord) -> Arc<ChunkMesh> {
        let grid = &self.grid;
        self.meshes
            .entry(coord)
            .or_insert_with(|| Arc::new(mesh_one_l0(grid, coord)))
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::cell::{Cell, Material};
    use crate::terrain::storage::coords::CellBox;

    #[test]
    fn drops_onto_the_top_of_a_slab_across_chunk_rows_and_ignores_later_edits() {
        let mut g = Grid::new();
        // Solid up to cell 40 (160 studs): the top lies in chunk row 1.
        g.edit_region(
            CellBox::new(IVec3::new(0, -40, 0), IVec3::new(64, 40, 64)),
            |_, _| Cell::full(Material::ROCK),
        )
        .unwrap();
        let mut s = SurfaceSnapshot::of(&g);
        let (p, n) = s.drop_onto(100.0, 100.0).unwrap();
        // Full cells up to y = 40 cells: the 0.5 crossing is at the top face.
        assert!((p.y - 160.0).abs() < 2.5, "{p}");
        assert!(n.y > 0.99, "{n}");
        g.edit_region(
            CellBox::new(IVec3::new(0, 40, 0), IVec3::new(64, 60, 64)),
            |_, _| Cell::full(Material::ROCK),
        )
        .unwrap();
        assert_eq!(s.drop_onto(100.0, 100.0).unwrap().0, p);
        // Outside the terrain and for bad input there is nothing below.
        assert!(s.drop_onto(1000.0, 100.0).is_none());
        assert!(s.drop_onto(f64::NAN, 0.0).is_none());
        assert!(
            SurfaceSnapshot::of(&Grid::new())
                .drop_onto(0.0, 0.0)
                .is_none()
        );
    }

    #[test]
    fn a_top_at_a_chunk_row_boundary_is_found() {
        let mut g = Grid::new();
        // Solid up to exactly cell 32: the surface cubes belong to row 0's
        // top and row 1 is not stored.
        g.edit_region(
            CellBox::new(IVec3::new(0, 0, 0), IVec3::new(64, 32, 64)),
            |_, _| Cell::full(Material::ROCK),
        )
        .unwrap();
        let mut s = SurfaceSnapshot::of(&g);
        let (p, _) = s.drop_onto(60.0, 60.0).unwrap();
        assert!((p.y - 128.0).abs() < 2.5, "{p}");
    }
}
