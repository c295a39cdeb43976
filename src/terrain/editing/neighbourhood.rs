//! What the neighbour-reading brush tools (Grow, Erode, Smooth, Paint)
//! read: a copy of the brush region's cells taken before the edit,
//! so the result does not depend on the order cells are visited in, with
//! the 3×3×3 sums Smooth and Paint read precomputed as separable passes.

use glam::IVec3;

use crate::terrain::editing::brush::BrushMode;
use crate::terrain::storage::cell::{Cell, Material};
use crate::terrain::storage::coords::CellBox;
use crate::terrain::storage::grid::Grid;

/// A copy of the cells of a box (taken before an edit), for tools that read
/// neighbours. Cells outside the box read as empty.
pub(super) struct Neighbourhood {
    min: IVec3,
    size: IVec3,
    cells: Vec<Cell>,
    /// Sums of solid occupancy over the 3×3×3 block around each cell one in
    /// from the border (see [`Neighbourhood::with_sums_for`]); empty until
    /// asked for.
    solid_sums: Vec<u16>,
    /// Cells inside the surface among the same 27, for Paint; empty until
    /// asked for.
    inside_counts: Vec<u16>,
}

impl Neighbourhood {
    pub(super) fn read(grid: &Grid, region: CellBox) -> Neighbourhood {
        let size = region.max - region.min;
        let mut cells = vec![Cell::EMPTY; (size.x * size.y * size.z).max(0) as usize];
        for coord in region.chunks() {
            let sub = region.intersect(&coord.cell_box());
            let Some(chunk) = grid.chunk(coord) else {
                continue;
            };
            let base = coord.min_cell().0;
            for z in sub.min.z..sub.max.z {
                for y in sub.min.y..sub.max.y {
                    let row =
                        ((z - region.min.z) * size.y + (y - region.min.y)) * size.x - region.min.x;
                    for x in sub.min.x..sub.max.x {
                        cells[(row + x) as usize] = chunk.cells.get(IVec3::new(x, y, z) - base);
                    }
                }
            }
        }
        Neighbourhood {
            min: region.min,
            size,
            cells,
            solid_sums: Vec::new(),
            inside_counts: Vec::new(),
        }
    }

    /// Adds the 3×3×3 sums the mode reads for every cell one in from the
    /// border: solid occupancy for Smooth, cells inside the surface for
    /// Paint. The same integer sums as reading the 27 cells, so the tools
    /// give bit-identical cells.
    pub(super) fn with_sums_for(mut self, mode: BrushMode) -> Neighbourhood {
        match mode {
            BrushMode::Smooth => {
                self.solid_sums = self.box_sums(|c| u16::from(c.solid_occupancy()));
            }
            BrushMode::Paint => {
                self.inside_counts = self.box_sums(|c| u16::from(c.is_inside()));
            }
            _ => {}
        }
        self
    }

    /// Sums of `value` over the 3×3×3 block around every cell one in from
    /// the border, `(size − 2)³` in z, y, x order, as three separable 3-tap
    /// passes (x, then y, then z): 9 adds a cell instead of 27
    /// bounds-checked reads. `value` is at most 255 (27 × 255 fits `u16`).
    /// Empty when the block is under 3 cells on a side.
    fn box_sums(&self, value: impl Fn(Cell) -> u16) -> Vec<u16> {
        let n = self.size;
        if n.cmplt(IVec3::splat(3)).any() {
            return Vec::new();
        }
        let inner = n - 2;
        let values: Vec<u16> = self.cells.iter().map(|c| value(*c)).collect();
        // x pass: (inner.x, n.y, n.z).
        let mut sx = Vec::with_capacity((inner.x * n.y * n.z) as usize);
        for row in values.chunks_exact(n.x as usize) {
            sx.extend(row.windows(3).map(|w| w[0] + w[1] + w[2]));
        }
        // y pass: (inner.x, inner.y, n.z).
        let plane_x = inner.x as usize;
        let mut sy = Vec::with_capacity((inner.x * inner.y * n.z) as usize);
        for slab in sx.chunks_exact(plane_x * n.y as usize) {
            for y in 0..inner.y as usize {
                let rows = [y, y + 1, y + 2].map(|r| &slab[r * plane_x..(r + 1) * plane_x]);
                sy.extend((0..plane_x).map(|x| rows[0][x] + rows[1][x] + rows[2][x]));
            }
        }
        // z pass: (inner.x, inner.y, inner.z).
        let slab = plane_x * inner.y as usize;
        let mut sums = Vec::with_capacity(slab * inner.z as usize);
        for z in 0..inner.z as usize {
            let slabs = [z, z + 1, z + 2].map(|s| &sy[s * slab..(s + 1) * slab]);
            sums.extend((0..slab).map(|i| slabs[0][i] + slabs[1][i] + slabs[2][i]));
        }
        sums
    }

    /// Index of `cell` in [`Neighbourhood::box_sums`], if it is one in
    /// from the border.
    fn inner_index(&self, cell: IVec3) -> Option<usize> {
        let inner = self.size - 2;
        let l = cell - self.min - 1;
        (l.cmpge(IVec3::ZERO).all() && l.cmplt(inner).all())
            .then(|| ((l.z * inner.y + l.y) * inner.x + l.x) as usize)
    }

    #[inline]
    fn get(&self, cell: IVec3) -> Cell {
        let l = cell - self.min;
        if l.cmplt(IVec3::ZERO).any() || l.cmpge(self.size).any() {
            return Cell::EMPTY;
        }
        self.cells[((l.z * self.size.y + l.y) * self.size.x + l.x) as usize]
    }

    const FACES: [IVec3; 6] = [
        IVec3::new(1, 0, 0),
        IVec3::new(-1, 0, 0),
        IVec3::new(0, 1, 0),
        IVec3::new(0, -1, 0),
        IVec3::new(0, 0, 1),
        IVec3::new(0, 0, -1),
    ];

    /// True when a face neighbour of `cell` is inside the solid surface.
    pub(super) fn any_face_inside(&self, cell: IVec3) -> bool {
        Self::FACES.iter().any(|&o| self.get(cell + o).is_inside())
    }

    /// True when a face neighbour of `cell` is outside the solid surface.
    pub(super) fn any_face_outside(&self, cell: IVec3) -> bool {
        Self::FACES.iter().any(|&o| !self.get(cell + o).is_inside())
    }

    /// True when any of the 26 neighbours of `cell` (faces, edges and
    /// corners) is outside the solid surface: the cell is then a corner of
    /// a surface cube, and its material shows on the surface (spec §6).
    pub(super) fn any_neighbour_outside(&self, cell: IVec3) -> bool {
        if let Some(&count) = self
            .inner_index(cell)
            .and_then(|i| self.inside_counts.get(i))
        {
            // 27 inside with the cell itself: none of the 26 is outside.
            return count < 27 - u16::from(!self.get(cell).is_inside());
        }
        (-1..=1).any(|dz| {
            (-1..=1).any(|dy| {
                (-1..=1).any(|dx| {
                    (dx, dy, dz) != (0, 0, 0)
                        && !self.get(cell + IVec3::new(dx, dy, dz)).is_inside()
                })
            })
        })
    }

    /// Mean solid occupancy over the 3×3×3 block around `cell`.
    pub(super) fn mean_solid(&self, cell: IVec3) -> f64 {
        if let Some(&sum) = self.inner_index(cell).and_then(|i| self.solid_sums.get(i)) {
            return f64::from(sum) / 27.0;
        }
        let mut sum = 0u32;
        for dz in -1..=1 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    sum += self.get(cell + IVec3::new(dx, dy, dz)).solid_occupancy() as u32;
                }
            }
        }
        sum as f64 / 27.0
    }

    /// The solid material with the highest occupancy among the 26 neighbours
    /// (first in z, y, x order on ties).
    pub(super) fn dominant_solid(&self, cell: IVec3) -> Option<Material> {
        let mut best: Option<(u8, Material)> = None;
        for dz in -1..=1 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let c = self.get(cell + IVec3::new(dx, dy, dz));
                    let s = c.solid_occupancy();
                    if s > 0 && best.is_none_or(|(b, _)| s > b) {
                        best = Some((s, c.material()));
                    }
                }
            }
        }
        best.map(|(_, m)| m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separable_sums_equal_the_27_cell_reads() {
        // A pseudo-random 7 × 6 × 5 block: every inner cell's sum from the
        // three passes equals the direct 27-cell sum.
        let region = CellBox::new(IVec3::new(-3, 10, 30), IVec3::new(4, 16, 35));
        let mut g = Grid::new();
        g.edit_region(region, |c, _| {
            let h = (c.0.x * 73 + c.0.y * 151 + c.0.z * 37).rem_euclid(256) as u8;
            Cell::new(Material::ROCK, h)
        })
        .unwrap();
        let plain = Neighbourhood::read(&g, region);
        let summed = Neighbourhood::read(&g, region).with_sums_for(BrushMode::Smooth);
        let counted = Neighbourhood::read(&g, region).with_sums_for(BrushMode::Paint);
        assert_eq!(summed.solid_sums.len(), 5 * 4 * 3);
        assert_eq!(counted.inside_counts.len(), 5 * 4 * 3);
        let mut checked = 0;
        for z in region.min.z + 1..region.max.z - 1 {
            for y in region.min.y + 1..region.max.y - 1 {
                for x in region.min.x + 1..region.max.x - 1 {
                    let c = IVec3::new(x, y, z);
                    assert_eq!(summed.mean_solid(c), plain.mean_solid(c), "{c}");
                    assert_eq!(
                        counted.any_neighbour_outside(c),
                        plain.any_neighbour_outside(c),
                        "{c}"
                    );
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 5 * 4 * 3);
    }
}
