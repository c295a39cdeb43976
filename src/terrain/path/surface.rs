//! The grid's top surface over a rectangle of cell columns, read once for
//! a path: the profile follows it, the carve blends back to it, the route
//! search walks on it, and the grade check reads it again after the carve.
//!
//! Heights use the convention of [`ColumnSummary`] (the top solid cell
//! with occupancy `o` at row `y` puts the surface at `y + o / 255`), which
//! is exact for the flat-style columns the carve writes.

use glam::{DVec2, IVec2};
use rustc_hash::FxHashMap;

use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::{CHUNK_SIZE_CELLS, ChunkCoord, ColumnCoord};
use crate::terrain::storage::grid::Grid;
use crate::terrain::streaming::column_summary::ColumnSummary;

/// Top of the solid and of the water above it for a rectangle of columns.
#[derive(Clone, Debug)]
pub struct SurfacePatch {
    /// Minimum column `(x, z)`, cells.
    min: IVec2,
    /// Columns along x and z.
    size: IVec2,
    /// Surface height per column (x fastest), cells; `NEG_INFINITY` where
    /// the column holds no solid.
    height_cells: Vec<f32>,
    /// Water surface above the solid, cells; `NEG_INFINITY` for none.
    water_cells: Vec<f32>,
}

impl SurfacePatch {
    /// Reads columns `min..max` (cells, max exclusive) of `grid`: one pass
    /// over its stored chunks, then a [`ColumnSummary`] per chunk column.
    /// The caller bounds the rectangle (it allocates 8 bytes a column).
    pub fn read(grid: &Grid, min: IVec2, max: IVec2) -> SurfacePatch {
        let size = (max - min).max(IVec2::ZERO);
        let n = (size.x as usize) * (size.y as usize);
        let mut patch = SurfacePatch {
            min,
            size,
            height_cells: vec![f32::NEG_INFINITY; n],
            water_cells: vec![f32::NEG_INFINITY; n],
        };
        if n == 0 {
            return patch;
        }
        let lo = min.div_euclid(IVec2::splat(CHUNK_SIZE_CELLS));
        let hi = (max - 1).div_euclid(IVec2::splat(CHUNK_SIZE_CELLS));
        let mut columns: FxHashMap<ColumnCoord, Vec<(ChunkCoord, ChunkCells)>> =
            FxHashMap::default();
        for (coord, chunk) in grid.chunks() {
            let c = coord.0;
            if c.x >= lo.x && c.x <= hi.x && c.z >= lo.y && c.z <= hi.y {
                columns
                    .entry(ColumnCoord::of(coord))
                    .or_default()
                    .push((coord, chunk.cells.clone()));
            }
        }
        for (column, chunks) in columns {
            let summary = ColumnSummary::from_chunks(&chunks);
            let base = IVec2::new(column.x, column.z) * CHUNK_SIZE_CELLS;
            for lz in 0..CHUNK_SIZE_CELLS {
                for lx in 0..CHUNK_SIZE_CELLS {
                    let Some(i) = patch.index(base + IVec2::new(lx, lz)) else {
                        continue;
                    };
                    let j = (lz * CHUNK_SIZE_CELLS + lx) as usize;
                    patch.height_cells[i] = summary.height_cells[j];
                    patch.water_cells[i] = summary.water_cells[j];
                }
            }
        }
        patch
    }

    /// Minimum column, cells.
    pub fn min(&self) -> IVec2 {
        self.min
    }

    /// Columns along x and z.
    pub fn size(&self) -> IVec2 {
        self.size
    }

    fn index(&self, column: IVec2) -> Option<usize> {
        let p = column - self.min;
        (p.x >= 0 && p.y >= 0 && p.x < self.size.x && p.y < self.size.y)
            .then(|| (p.y as usize) * (self.size.x as usize) + p.x as usize)
    }

    /// Surface height of column `(x, z)` (cells), `None` outside the patch
    /// or where the column holds no solid.
    pub fn height_cells(&self, column: IVec2) -> Option<f64> {
        let h = self.height_cells[self.index(column)?];
        (h > f32::NEG_INFINITY).then_some(f64::from(h))
    }

    /// Water surface above column `(x, z)`'s solid (cells), `None` where
    /// there is no water (or outside the patch).
    pub fn water_cells(&self, column: IVec2) -> Option<f64> {
        let w = self.water_cells[self.index(column)?];
        (w > f32::NEG_INFINITY).then_some(f64::from(w))
    }

    /// Surface height at a point (cells, column centres at `i + 0.5`),
    /// bilinear between the four nearest column centres; where one of them
    /// has no surface, the height of the column holding the point. `None`
    /// when that column has none either.
    pub fn height_at(&self, p_cells: DVec2) -> Option<f64> {
        let q = p_cells - 0.5;
        let base = q.floor();
        let t = q - base;
        let c = IVec2::new(base.x as i32, base.y as i32);
        let corners = [
            self.height_cells(c),
            self.height_cells(c + IVec2::X),
            self.height_cells(c + IVec2::Y),
            self.height_cells(c + IVec2::ONE),
        ];
        if let [Some(a), Some(b), Some(d), Some(e)] = corners {
            let top = a + (b - a) * t.x;
            let bottom = d + (e - d) * t.x;
            return Some(top + (bottom - top) * t.y);
        }
        self.height_cells(column_of(p_cells))
    }
}

/// The column holding a point (cells).
pub fn column_of(p_cells: DVec2) -> IVec2 {
    let f = p_cells.floor();
    IVec2::new(f.x as i32, f.y as i32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::cell::{Cell, Material};
    use crate::terrain::storage::coords::CellBox;
    use glam::IVec3;

    #[test]
    fn reads_the_top_of_solid_and_water_and_interpolates() {
        let mut g = Grid::new();
        g.edit_region(
            CellBox::new(IVec3::new(-40, 0, 0), IVec3::new(40, 12, 4)),
            |c, _| {
                let top = if c.0.x < 0 { 5 } else { 9 };
                if c.0.y < top {
                    Cell::full(Material::ROCK)
                } else if c.0.y == top {
                    Cell::new(Material::ROCK, 51)
                } else if c.0.y == 10 && c.0.x < 0 {
                    Cell::new(Material::WATER, 128)
                } else {
                    Cell::EMPTY
                }
            },
        )
        .unwrap();
        let p = SurfacePatch::read(&g, IVec2::new(-36, 0), IVec2::new(36, 4));
        assert_eq!(p.size(), IVec2::new(72, 4));
        assert!((p.height_cells(IVec2::new(-3, 1)).unwrap() - 5.2).abs() < 1e-6);
        assert!((p.height_cells(IVec2::new(3, 1)).unwrap() - 9.2).abs() < 1e-6);
        assert!((p.water_cells(IVec2::new(-3, 1)).unwrap() - (10.0 + 128.0 / 255.0)).abs() < 1e-5);
        assert_eq!(p.water_cells(IVec2::new(3, 1)), None);
        assert_eq!(p.height_cells(IVec2::new(3, 4)), None);
        // Halfway between the column centres of x = -1 and x = 0.
        let mid = p.height_at(DVec2::new(0.0, 1.5)).unwrap();
        assert!((mid - 7.2).abs() < 1e-6, "{mid}");
        // On the patch's last row the row below is missing: the column's own.
        assert!((p.height_at(DVec2::new(3.9, 3.9)).unwrap() - 9.2).abs() < 1e-6);
    }
}
