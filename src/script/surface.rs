//! The surface that script points given as `(x, z)` are dropped onto: the
//! full-detail (level 0) Surface Nets surface of the grid as it was when the
//! script began, meshed from the grid itself.
//!
//! Dropping onto what happens to be displayed would make a script's result
//! depend on the camera, the draw distance and `--force-level` (coarse
//! levels lie up to hundreds of studs off the full-detail surface far from
//! the camera, and chunks beyond the draw distance have no mesh at all).
//! The level-0 mesh is what an artist sees up close, and it depends only on
//! the cells.
//!
//! Every point is dropped before the first entry runs, one chunk column at a
//! time (in parallel), and only the answers are kept. Holding on to the grid
//! as it was, to drop each point when its entry runs, would pin the original
//! cells of every chunk the script edits since, and the level-0 meshes of
//! every column it drops onto: memory that grew with the number of strokes
//! up to the whole world's cells and surface.

use glam::{DVec3, IVec3, Vec3};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::mesh::ChunkMesh;
use crate::pipeline::picking::pick_chunk;
use crate::pipeline::world_meshes::mesh_one_l0;
use crate::terrain::storage::coords::{CHUNK_SIZE_CELLS, CHUNK_SIZE_STUDS, ChunkCoord};
use crate::terrain::storage::grid::Grid;

/// A surface point and its unit normal (facing up, out of the terrain).
pub type SurfaceHit = (DVec3, DVec3);

/// A chunk column, `(x, z)` in chunks.
type Column = (i32, i32);

/// A point's key (the bits of its `(x, z)`) and what lies below it.
type Answer = ([u64; 2], Option<SurfaceHit>);

/// The full-detail surface points below a set of `(x, z)` points, found on a
/// grid as it was when they were resolved (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct SurfaceDrops {
    /// Keyed by the bits of `(x, z)`; `None` where nothing lies below.
    drops: FxHashMap<[u64; 2], Option<SurfaceHit>>,
}

fn key(x: f64, z: f64) -> [u64; 2] {
    [x.to_bits(), z.to_bits()]
}

impl SurfaceDrops {
    /// Drops each of `points` (world `(x, z)`, studs) onto the full-detail
    /// surface of `grid` as it is now; later edits of `grid` do not move the
    /// answers. Each chunk is meshed at most once, and its mesh is dropped as
    /// soon as the points of its column are answered.
    pub fn resolve(grid: &Grid, points: impl IntoIterator<Item = (f64, f64)>) -> SurfaceDrops {
        let rows_y = grid.bounds_cells().map(|b| {
            (
                b.min.y.div_euclid(CHUNK_SIZE_CELLS) - 1,
                (b.max.y - 1).div_euclid(CHUNK_SIZE_CELLS),
            )
        });
        let size = CHUNK_SIZE_STUDS as f64;
        let mut seen: FxHashSet<[u64; 2]> = FxHashSet::default();
        let mut drops: FxHashMap<[u64; 2], Option<SurfaceHit>> = FxHashMap::default();
        let mut columns: FxHashMap<Column, Vec<(f64, f64)>> = FxHashMap::default();
        for (x, z) in points {
            if !seen.insert(key(x, z)) {
                continue;
            }
            if rows_y.is_none() || !(x.is_finite() && z.is_finite()) {
                drops.insert(key(x, z), None);
                continue;
            }
            let column = ((x / size).floor() as i32, (z / size).floor() as i32);
            columns.entry(column).or_default().push((x, z));
        }
        drop(seen);
        if let Some(rows) = rows_y {
            let columns: Vec<(Column, Vec<(f64, f64)>)> = columns.into_iter().collect();
            let answered: Vec<Vec<Answer>> = columns
                .par_iter()
                .map(|(column, points)| drop_in_column(grid, *column, rows, points))
                .collect();
            drops.extend(answered.into_iter().flatten());
        }
        SurfaceDrops { drops }
    }

    /// The topmost surface point below world `(x, z)` (studs) and its unit
    /// normal, or `None` where the column held no surface, for non-finite
    /// input, and for a point that was not resolved.
    pub fn drop_onto(&self, x: f64, z: f64) -> Option<SurfaceHit> {
        self.drops.get(&key(x, z)).copied().flatten()
    }

    /// Distinct points resolved.
    pub fn len(&self) -> usize {
        self.drops.len()
    }

    /// True when no point was resolved.
    pub fn is_empty(&self) -> bool {
        self.drops.is_empty()
    }
}

/// Drops `points` (all in chunk column `column`) onto the level-0 meshes of
/// the column's chunks in rows `rows` (lowest, highest), each meshed on
/// first use, from the top down.
fn drop_in_column(
    grid: &Grid,
    column: Column,
    (low, high): (i32, i32),
    points: &[(f64, f64)],
) -> Vec<Answer> {
    let size = CHUNK_SIZE_STUDS as f64;
    let rows = usize::try_from(high - low + 1).unwrap_or(0);
    let mut meshes: Vec<Option<ChunkMesh>> = (0..rows).map(|_| None).collect();
    let mut out = Vec::with_capacity(points.len());
    for &(x, z) in points {
        let mut hit = None;
        for i in (0..rows).rev() {
            let cy = low + i as i32;
            let coord = ChunkCoord(IVec3::new(column.0, cy, column.1));
            let mesh = meshes[i].get_or_insert_with(|| mesh_one_l0(grid, coord));
            if mesh.is_empty() {
                continue;
            }
            // From just above this chunk's top, straight down through it.
            let top = (cy as f64 + 1.0) * size + 1.0;
            let origin = DVec3::new(x, top, z);
            if let Some(h) = pick_chunk(mesh, coord, origin, -Vec3::Y, size + 2.0) {
                hit = Some((h.pos_world, h.normal.as_dvec3()));
                break;
            }
        }
        out.push((key(x, z), hit));
    }
    out
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
        let s = SurfaceDrops::resolve(&g, [(100.0, 100.0), (1000.0, 100.0), (f64::NAN, 0.0)]);
        let (p, n) = s.drop_onto(100.0, 100.0).unwrap();
        // Full cells up to y = 40 cells: the 0.5 crossing is at the top face.
        assert!((p.y - 160.0).abs() < 2.5, "{p}");
        assert_eq!((p.x, p.z), (100.0, 100.0));
        assert!(n.y > 0.99, "{n}");
        g.edit_region(
            CellBox::new(IVec3::new(0, 40, 0), IVec3::new(64, 60, 64)),
            |_, _| Cell::full(Material::ROCK),
        )
        .unwrap();
        assert_eq!(s.drop_onto(100.0, 100.0).unwrap().0, p);
        // Outside the terrain, for bad input and for a point never resolved
        // there is nothing below.
        assert!(s.drop_onto(1000.0, 100.0).is_none());
        assert!(s.drop_onto(f64::NAN, 0.0).is_none());
        assert!(s.drop_onto(120.0, 100.0).is_none());
        assert_eq!(s.len(), 3);
        assert!(
            SurfaceDrops::resolve(&Grid::new(), [(0.0, 0.0)])
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
        let s = SurfaceDrops::resolve(&g, [(60.0, 60.0)]);
        let (p, _) = s.drop_onto(60.0, 60.0).unwrap();
        assert!((p.y - 128.0).abs() < 2.5, "{p}");
    }

    #[test]
    fn points_of_one_column_each_find_their_own_top_and_repeats_count_once() {
        let mut g = Grid::new();
        // One chunk column (x and z below 32 cells): solid up to cell 40 for
        // x < 16 cells (64 studs), up to cell 20 beyond.
        g.edit_region(
            CellBox::new(IVec3::new(0, 0, 0), IVec3::new(16, 40, 32)),
            |_, _| Cell::full(Material::ROCK),
        )
        .unwrap();
        g.edit_region(
            CellBox::new(IVec3::new(16, 0, 0), IVec3::new(32, 20, 32)),
            |_, _| Cell::full(Material::ROCK),
        )
        .unwrap();
        let points = [(20.0, 60.0), (100.0, 60.0), (20.0, 60.0), (100.0, 60.0)];
        let s = SurfaceDrops::resolve(&g, points);
        assert_eq!(s.len(), 2);
        let high = s.drop_onto(20.0, 60.0).unwrap().0;
        let low = s.drop_onto(100.0, 60.0).unwrap().0;
        assert!((high.y - 160.0).abs() < 2.5, "{high}");
        assert!((low.y - 80.0).abs() < 2.5, "{low}");
    }
}
