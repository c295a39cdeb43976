//! Coarse sample fields for levels of detail 1–3 (spec §6).
//!
//! At level `L` a chunk has `32 >> L` samples per axis, each standing for a
//! block of `s = 2^L` cells on a side. A coarse sample's solid and water
//! occupancies are the averages over its block; its material is a vote in
//! which exposed solid cells (a face neighbour is not solid) count
//! [`EXPOSED_VOTE_WEIGHT`] times more than buried ones, so the material an
//! artist sees on the surface survives even when most of the block is buried
//! rock. Padding is 2 samples, i.e. `2·s` cells: the reach doubles per level.

use glam::IVec3;

use crate::terrain::cell::{Cell, Material};
use crate::terrain::chunk::ChunkCells;
use crate::terrain::coords::CHUNK_SIZE_CELLS;

use super::field::{Neighbourhood, PAD, SampleField, inside_bits};

/// Vote weight of an exposed solid cell relative to a buried one.
pub const EXPOSED_VOTE_WEIGHT: u32 = 16;

/// Samples per chunk axis at `level` (32, 16, 8, 4).
pub fn samples_per_axis(level: u8) -> usize {
    CHUNK_SIZE_CELLS as usize >> level
}

/// Cells the padded region of `level` covers, as a dense block read once:
/// `[-2s - 1, 32 + 2s + 1)` on each axis (one extra cell for exposure tests).
struct DenseRegion {
    lo: i32,
    dim: usize,
    cells: Vec<Cell>,
}

impl DenseRegion {
    fn read(hood: &Neighbourhood, lo: i32, hi: i32) -> DenseRegion {
        let dim = (hi - lo) as usize;
        let mut cells = vec![Cell::EMPTY; dim * dim * dim];
        let n = CHUNK_SIZE_CELLS;
        for z in lo..hi {
            for y in lo..hi {
                let row = ((z - lo) as usize * dim + (y - lo) as usize) * dim;
                let mut x = lo;
                while x < hi {
                    let chunk = IVec3::new(x.div_euclid(n), y.div_euclid(n), z.div_euclid(n));
                    let local = IVec3::new(x.rem_euclid(n), y.rem_euclid(n), z.rem_euclid(n));
                    // Run to the end of this chunk's row or of the region.
                    let run = ((n - local.x) as usize).min((hi - x) as usize);
                    let dst = &mut cells[row + (x - lo) as usize..][..run];
                    match hood.get(chunk) {
                        ChunkCells::Uniform(c) => dst.fill(*c),
                        ChunkCells::Dense(data) => {
                            let start = crate::terrain::coords::local_index(local);
                            dst.copy_from_slice(&data[start..start + run]);
                        }
                    }
                    x += run as i32;
                }
            }
        }
        DenseRegion { lo, dim, cells }
    }

    #[inline]
    fn get(&self, p: IVec3) -> Cell {
        let q = p - IVec3::splat(self.lo);
        self.cells[(q.z as usize * self.dim + q.y as usize) * self.dim + q.x as usize]
    }
}

impl Neighbourhood {
    /// True when all 27 chunks are uniform and on the same side of the
    /// surface: no level can find a crossing anywhere in the padded region.
    pub fn is_uniform_on_one_side(&self) -> bool {
        let Some(first) = self.get(IVec3::ZERO).as_uniform() else {
            return false;
        };
        (-1..=1).all(|z| {
            (-1..=1).all(|y| {
                (-1..=1).all(|x| {
                    self.get(IVec3::new(x, y, z))
                        .as_uniform()
                        .is_some_and(|c| c.is_inside() == first.is_inside())
                })
            })
        })
    }
}

/// Fills `field` with the coarse samples of `level` (1..=3) for the chunk
/// whose 3×3×3 neighbourhood is `hood`. Level 0 delegates to
/// [`SampleField::gather_l0_from`].
pub fn gather_level(field: &mut SampleField, hood: &Neighbourhood, level: u8) {
    if level == 0 {
        field.gather_l0_from(hood);
        return;
    }
    let level = level.min(3);
    let n = samples_per_axis(level);
    if field.n != n {
        *field = SampleField::new(n);
    }
    field.spacing_cells = 1 << level;
    let s = 1i32 << level;
    let dim = field.dim;
    let pad_cells = PAD as i32 * s;
    let region = DenseRegion::read(hood, -pad_cells - 1, CHUNK_SIZE_CELLS + pad_cells + 1);
    let block_cells = (s * s * s) as u32;
    let mut votes = [0u32; Material::COUNT];
    for pz in 0..dim {
        for py in 0..dim {
            for px in 0..dim {
                let base =
                    (IVec3::new(px as i32, py as i32, pz as i32) - IVec3::splat(PAD as i32)) * s;
                let mut solid_sum = 0u32;
                let mut water_sum = 0u32;
                votes.fill(0);
                let mut any_solid = false;
                for dz in 0..s {
                    for dy in 0..s {
                        for dx in 0..s {
                            let p = base + IVec3::new(dx, dy, dz);
                            let c = region.get(p);
                            water_sum += c.water_occupancy() as u32;
                            let occ = c.solid_occupancy() as u32;
                            if occ == 0 {
                                continue;
                            }
                            solid_sum += occ;
                            any_solid = true;
                            let exposed = [
                                IVec3::X,
                                IVec3::NEG_X,
                                IVec3::Y,
                                IVec3::NEG_Y,
                                IVec3::Z,
                                IVec3::NEG_Z,
                            ]
                            .iter()
                            .any(|&d| !region.get(p + d).is_inside());
                            let weight = if exposed { EXPOSED_VOTE_WEIGHT } else { 1 };
                            if let Some(v) = votes.get_mut(c.material().0 as usize) {
                                *v += weight * occ;
                            }
                        }
                    }
                }
                let i = px + dim * (py + dim * pz);
                let solid = ((solid_sum + block_cells / 2) / block_cells) as u8;
                let water = ((water_sum + block_cells / 2) / block_cells) as u8;
                field.solid[i] = solid;
                field.water[i] = water;
                field.material[i] = if any_solid {
                    // Largest vote, ties to the lower id.
                    let mut best = 0usize;
                    for (id, &v) in votes.iter().enumerate() {
                        if v > votes[best] {
                            best = id;
                        }
                    }
                    best as u8
                } else if water > 0 {
                    Material::WATER.0
                } else {
                    Material::AIR.0
                };
                if solid > 0 && !Material(field.material[i]).is_solid() {
                    // Averages can leave solid occupancy only with a solid vote.
                    field.material[i] = Material::ROCK.0;
                }
            }
        }
    }
    for pz in 0..dim {
        for py in 0..dim {
            let row = dim * (py + dim * pz);
            field.inside_rows[py + dim * pz] = inside_bits(&field.solid[row..row + dim]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::coords::{CellBox, ChunkCoord};
    use crate::terrain::grid::Grid;

    fn field_of(grid: &Grid, level: u8) -> SampleField {
        let mut f = SampleField::new(samples_per_axis(level));
        gather_level(
            &mut f,
            &Neighbourhood::from_grid(grid, ChunkCoord::new(0, 0, 0)),
            level,
        );
        f
    }

    #[test]
    fn coarse_samples_average_their_block() {
        let mut g = Grid::new();
        // Block of sample (1,1,1) at level 1 = cells 2..4 on each axis: 3 of 8 cells full.
        for (i, p) in [
            IVec3::new(2, 2, 2),
            IVec3::new(3, 2, 2),
            IVec3::new(2, 3, 3),
        ]
        .iter()
        .enumerate()
        {
            g.edit_region(CellBox::new(*p, *p + IVec3::ONE), |_, _| {
                Cell::full(if i == 0 {
                    Material::SAND
                } else {
                    Material::ROCK
                })
            })
            .unwrap();
        }
        let water = IVec3::new(6, 6, 6);
        g.edit_region(CellBox::new(water, water + IVec3::ONE), |_, _| {
            Cell::new(Material::WATER, 200)
        })
        .unwrap();
        let f = field_of(&g, 1);
        assert_eq!((f.n, f.dim, f.spacing_cells), (16, 20, 2));
        let i = f.index(PAD + 1, PAD + 1, PAD + 1);
        assert_eq!(f.solid[i], ((3 * 255 + 4) / 8) as u8);
        // All three cells are exposed; Rock has two votes to Sand's one.
        assert_eq!(f.material[i], Material::ROCK.0);
        let w = f.index(PAD + 3, PAD + 3, PAD + 3);
        assert_eq!(
            (f.water[w], f.material[w], f.solid[w]),
            (25, Material::WATER.0, 0)
        );
    }

    #[test]
    fn exposed_cells_outvote_buried_ones() {
        let mut g = Grid::new();
        // Rock fills y < 6; the top layer of one level-2 block (cells 0..4, y 2..6)
        // at y = 5 is grass. 48 buried-or-side rock cells vs 16 exposed grass cells;
        // rock cells at y = 5 do not exist, so only grass is exposed on top.
        g.edit_region(
            CellBox::new(IVec3::new(-8, -8, -8), IVec3::new(40, 6, 40)),
            |c, _| {
                if c.0.y == 5 {
                    Cell::full(Material::GRASS)
                } else {
                    Cell::full(Material::ROCK)
                }
            },
        )
        .unwrap();
        let f = field_of(&g, 2);
        // Sample y index 1 covers cells y 4..8: grass at y 5 exposed (air above).
        let i = f.index(PAD, PAD + 1, PAD);
        assert_eq!(f.material[i], Material::GRASS.0);
        // The block below (cells y 0..4) is all buried rock.
        let j = f.index(PAD, PAD, PAD);
        assert_eq!(f.material[j], Material::ROCK.0);
        assert_eq!(f.solid[j], 255);
    }
}
