//! The padded sample field a chunk is meshed from (spec §4 "Padding").
//!
//! Surface Nets for one chunk reads its own samples plus 2 samples beyond each
//! face: one for the quads of edges that cross into the neighbour, one more
//! for central-difference normals. The field copies those samples out of the
//! (up to 27) chunks once, into flat arrays the mesher can index without
//! hashing, and records a bit per sample (inside or not) row by row so the
//! mesher can find crossing edges with word operations.
//!
//! ```text
//!   sample index  -2 -1 | 0 1 ... n-1 | n n+1      (n = samples per chunk axis)
//!   padded index   0  1 | 2 3 ... n+1 | n+2 n+3    (PAD = 2)
//! ```

use glam::IVec3;

use crate::terrain::storage::cell::Cell;
use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::{CHUNK_SIZE_CELLS, ChunkCoord};
use crate::terrain::storage::grid::Grid;

/// Samples of padding read beyond each face of the chunk.
pub const PAD: usize = 2;
/// Padded samples per axis at full detail (32 + 2·2).
pub const PADDED_L0: usize = CHUNK_SIZE_CELLS as usize + 2 * PAD;

/// Samples of a chunk plus padding, in flat arrays (x fastest, then y, then z).
///
/// `dim = n + 4` samples per axis where `n` is samples per chunk axis.
#[derive(Clone, Debug)]
pub struct SampleField {
    /// Samples per chunk axis (32 at full detail).
    pub n: usize,
    /// Padded samples per axis, `n + 4`.
    pub dim: usize,
    /// Cells per sample along each axis (1 at full detail).
    pub spacing_cells: u32,
    /// Solid occupancy (0..=255) per padded sample.
    pub solid: Vec<u8>,
    /// Material id per padded sample (the solid material, or Air/Water).
    pub material: Vec<u8>,
    /// Water occupancy per padded sample.
    pub water: Vec<u8>,
    /// One `u64` per padded row `(y, z)`: bit `x` set when sample `(x, y, z)`
    /// is inside (solid occupancy >= 128). Index `y + dim·z`.
    pub inside_rows: Vec<u64>,
}

impl Default for SampleField {
    fn default() -> Self {
        SampleField::new(CHUNK_SIZE_CELLS as usize)
    }
}

impl SampleField {
    /// An all-empty field for `n` samples per chunk axis (`n + 4 <= 64`).
    pub fn new(n: usize) -> SampleField {
        let dim = n + 2 * PAD;
        assert!(dim <= 64, "inside rows are 64-bit words");
        SampleField {
            n,
            dim,
            spacing_cells: (CHUNK_SIZE_CELLS as usize / n.max(1)) as u32,
            solid: vec![0; dim * dim * dim],
            material: vec![0; dim * dim * dim],
            water: vec![0; dim * dim * dim],
            inside_rows: vec![0; dim * dim],
        }
    }

    /// Flat index of padded sample `(x, y, z)` (each in `0..dim`).
    #[inline]
    pub fn index(&self, x: usize, y: usize, z: usize) -> usize {
        x + self.dim * (y + self.dim * z)
    }

    /// Fills the field at full detail for the chunk at `coord` from `grid`.
    pub fn gather_l0(&mut self, grid: &Grid, coord: ChunkCoord) {
        let neighbourhood = Neighbourhood::from_grid(grid, coord);
        self.gather_l0_from(&neighbourhood);
    }

    /// Fills the field at full detail from a chunk's 3×3×3 neighbourhood.
    pub fn gather_l0_from(&mut self, hood: &Neighbourhood) {
        if self.n != CHUNK_SIZE_CELLS as usize {
            *self = SampleField::new(CHUNK_SIZE_CELLS as usize);
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2.
            unsafe { self.gather_l0_avx2(hood) };
            return;
        }
        self.gather_l0_any(hood);
    }

    /// [`SampleField::gather_l0_any`] compiled with AVX2 (same results).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn gather_l0_avx2(&mut self, hood: &Neighbourhood) {
        self.gather_l0_any(hood);
    }

    #[inline(always)]
    fn gather_l0_any(&mut self, hood: &Neighbourhood) {
        let dim = self.dim;
        let n = CHUNK_SIZE_CELLS as usize;
        // Segments of a padded row: (padded start, chunk offset -1/0/+1, local start, len).
        let segs: [(usize, i32, usize, usize); 3] =
            [(0, -1, n - PAD, PAD), (PAD, 0, 0, n), (PAD + n, 1, 0, PAD)];
        for pz in 0..dim {
            let (cz, lz) = split_axis(pz, n);
            for py in 0..dim {
                let (cy, ly) = split_axis(py, n);
                let row_start = dim * (py + dim * pz);
                for &(p0, cx, lx0, len) in &segs {
                    let dst = row_start + p0..row_start + p0 + len;
                    match hood.get(IVec3::new(cx, cy, cz)) {
                        ChunkCells::Uniform(c) => {
                            let (s, m, w) = sample_of(*c);
                            self.solid[dst.clone()].fill(s);
                            self.material[dst.clone()].fill(m);
                            self.water[dst].fill(w);
                        }
                        ChunkCells::Dense(data) => {
                            let src = lx0 + n * (ly + n * lz);
                            let row = &data[src..src + len];
                            let solid = &mut self.solid[dst.clone()];
                            let material = &mut self.material[dst.clone()];
                            let water = &mut self.water[dst];
                            // Branch-free so the compiler can vectorize the row.
                            for i in 0..len {
                                let (s, m, w) = sample_of(row[i]);
                                solid[i] = s;
                                material[i] = m;
                                water[i] = w;
                            }
                        }
                    }
                }
            }
        }
        // Inside bits once all rows are written: reading a row back right
        // after writing it stalls on store forwarding.
        for (bits, row) in self
            .inside_rows
            .iter_mut()
            .zip(self.solid.chunks_exact(dim))
        {
            *bits = inside_bits(row);
        }
    }
}

/// Bit `i` set when `solid[i] >= 128`, for up to 64 samples. Works 8 samples
/// at a time: the high bit of each byte is gathered by one multiply.
#[inline(always)]
pub fn inside_bits(solid: &[u8]) -> u64 {
    debug_assert!(solid.len() <= 64);
    let mut bits = 0u64;
    let mut chunks = solid.chunks_exact(8);
    let mut shift = 0;
    for c in &mut chunks {
        let word = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        let high = (word & 0x8080_8080_8080_8080) >> 7;
        // Moves the low bit of byte k to bit 56 + k.
        let packed = high.wrapping_mul(0x0102_0408_1020_4080) >> 56;
        bits |= packed << shift;
        shift += 8;
    }
    for (i, &s) in chunks.remainder().iter().enumerate() {
        bits |= ((s >> 7) as u64) << (shift + i);
    }
    bits
}

#[inline(always)]
fn sample_of(c: Cell) -> (u8, u8, u8) {
    let [m, occ] = c.to_bytes();
    let solid_mask = ((m >= 2) as u8).wrapping_neg();
    let water_mask = ((m == 1) as u8).wrapping_neg();
    (occ & solid_mask, m, occ & water_mask)
}

/// Maps a padded index to (chunk offset -1/0/+1, local index in that chunk).
#[inline]
fn split_axis(p: usize, n: usize) -> (i32, usize) {
    if p < PAD {
        (-1, n - PAD + p)
    } else if p < PAD + n {
        (0, p - PAD)
    } else {
        (1, p - PAD - n)
    }
}

/// The cells of a chunk and its 26 neighbours (unwritten ones read as empty).
#[derive(Clone, Debug)]
pub struct Neighbourhood {
    /// Indexed `(dx+1) + 3·(dy+1) + 9·(dz+1)`.
    cells: [ChunkCells; 27],
}

impl Neighbourhood {
    /// Collects the 27 chunks around `coord` from `grid`, sharing storage.
    pub fn from_grid(grid: &Grid, coord: ChunkCoord) -> Neighbourhood {
        Neighbourhood {
            cells: std::array::from_fn(|i| {
                let d = IVec3::new(i as i32 % 3 - 1, (i as i32 / 3) % 3 - 1, i as i32 / 9 - 1);
                grid.chunk_cells(ChunkCoord(coord.0 + d))
            }),
        }
    }

    /// The chunk at offset `d` (each component in `-1..=1`).
    #[inline]
    pub fn get(&self, d: IVec3) -> &ChunkCells {
        &self.cells[(d.x + 1 + 3 * (d.y + 1) + 9 * (d.z + 1)) as usize]
    }

    /// True when the centre chunk provably owns no solid surface: it and its +x,
    /// +y and +z face neighbours are uniform and all on the same side of the
    /// surface, so no owned sample edge crosses it. Touches no cells.
    pub fn owns_no_surface(&self) -> bool {
        let centre = match self.get(IVec3::ZERO).as_uniform() {
            Some(c) => c.is_inside(),
            None => return false,
        };
        [IVec3::X, IVec3::Y, IVec3::Z].iter().all(|&d| {
            self.get(d)
                .as_uniform()
                .is_some_and(|c| c.is_inside() == centre)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_bits_match_a_plain_loop() {
        let solid: Vec<u8> = (0..36u32).map(|i| ((i * 97 + 13) % 256) as u8).collect();
        let expected = solid
            .iter()
            .enumerate()
            .fold(0u64, |b, (i, &s)| b | (((s >= 128) as u64) << i));
        assert_eq!(inside_bits(&solid), expected);
        assert_eq!(inside_bits(&[128; 36]), (1u64 << 36) - 1);
        assert_eq!(inside_bits(&[127; 36]), 0);
    }
}
