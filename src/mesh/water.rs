//! The water surface of one chunk (spec §9).
//!
//! Water is cells of the Water material, but it is not meshed by Surface
//! Nets: a lake must read as one flat, animated sheet whose outline the shore
//! cuts, not as a blobby solid. So water has its own mesher, always cell by
//! cell at every level of detail:
//!
//! ```text
//!   shore   water  water  shore         top sheet: one quad per cell of the
//!    ___ _ _ _ _ _ _ _ _ _ ___          sheet — every water cell open above
//!   /###|~~~~~~|~~~~~~|~~~|###\        plus the shore cells beside one — at
//!  /####|      |      |   |####\       the water's height, so the terrain
//!   extension  water  water extension  surface cuts the outline smoothly.
//! ```
//!
//! - A water cell is *open above* when the cell above holds no water. Its top
//!   is at the cell's bottom plus its water fraction × 4 studs.
//! - The sheet also covers each *shore cell* (not water, with some solid in
//!   it) 4-adjacent to an open water cell in the same row, at that water's
//!   height, and no further: the terrain surface passes through those cells
//!   and cuts the sheet's outline. Sheet corners take the highest height of
//!   the sheet cells around them, so the sheet is continuous.
//! - Where water meets air horizontally (a waterfall over a cliff, a pool
//!   edge in the air), the water cell gets a vertical side face.
//! - Each vertex carries a wave fade: 0 on every corner that touches a
//!   non-water sheet cell or the sheet's edge, rising to 1 two cells into
//!   open water; side faces are 0. The shader scales waves by it.
//! - A chunk emits the sheet cells and side faces of its own cells; corner
//!   values depend only on cells, so neighbouring chunks agree exactly.

use glam::{IVec3, Vec3};

use crate::terrain::storage::cell::Cell;
use crate::terrain::storage::coords::{CELL_SIZE_STUDS, CHUNK_SIZE_CELLS};

use super::field::Neighbourhood;

/// Cells of open water a vertex must be from the sheet's edge for full waves.
pub const WAVE_FADE_CELLS: i32 = 2;

/// The water mesh of one chunk: positions in chunk-local studs, an up (or
/// side) normal and a wave fade per vertex, and a triangle list.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WaterMesh {
    /// Chunk-local studs.
    pub positions: Vec<Vec3>,
    /// Unit normals: +Y on the sheet, horizontal on side faces.
    pub normals: Vec<Vec3>,
    /// Wave fade in `[0, 1]`: 0 at the sheet's edge, 1 in open water.
    pub wave_fade: Vec<f32>,
    /// Triangles, counter-clockwise seen from the side the normal faces.
    pub indices: Vec<u32>,
}

impl WaterMesh {
    /// Heap bytes of its arrays (capacity, not length).
    pub fn heap_bytes(&self) -> usize {
        self.positions.capacity() * std::mem::size_of::<Vec3>()
            + self.normals.capacity() * std::mem::size_of::<Vec3>()
            + self.wave_fade.capacity() * std::mem::size_of::<f32>()
            + self.indices.capacity() * std::mem::size_of::<u32>()
    }

    /// True when the chunk shows no water.
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }

    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    fn push_vertex(&mut self, p: Vec3, n: Vec3, fade: f32) -> u32 {
        let i = self.positions.len() as u32;
        self.positions.push(p);
        self.normals.push(n);
        self.wave_fade.push(fade);
        i
    }
}

/// Cells padding the chunk on every side: the wave fade looks up to
/// `WAVE_FADE_CELLS` cells from a corner, one more for the shore test.
const PAD: i32 = WAVE_FADE_CELLS + 2;
/// Cells per axis of the padded block.
const DIM: i32 = CHUNK_SIZE_CELLS + 2 * PAD;

/// The chunk's cells plus [`PAD`] cells around, copied once into a flat
/// array (positions are chunk-local, `-PAD..32+PAD`).
struct Cells {
    cells: Vec<Cell>,
}

impl Cells {
    fn gather(hood: &Neighbourhood) -> Cells {
        let n = CHUNK_SIZE_CELLS;
        let dim = DIM as usize;
        let mut cells = vec![Cell::EMPTY; dim * dim * dim];
        for z in -PAD..n + PAD {
            for y in -PAD..n + PAD {
                let row = ((z + PAD) as usize * dim + (y + PAD) as usize) * dim;
                let mut x = -PAD;
                while x < n + PAD {
                    let chunk = IVec3::new(x.div_euclid(n), y.div_euclid(n), z.div_euclid(n));
                    let local = IVec3::new(x, y, z) - chunk * n;
                    let run = ((n - local.x).min(n + PAD - x)) as usize;
                    let dst = &mut cells[row + (x + PAD) as usize..][..run];
                    match hood.get(chunk) {
                        crate::terrain::storage::chunk::ChunkCells::Uniform(c) => dst.fill(*c),
                        crate::terrain::storage::chunk::ChunkCells::Dense(data) => {
                            let start = crate::terrain::storage::coords::local_index(local);
                            dst.copy_from_slice(&data[start..start + run]);
                        }
                    }
                    x += run as i32;
                }
            }
        }
        Cells { cells }
    }

    /// True when some cell within `border` cells of the chunk holds water.
    fn any_water_within(&self, border: i32) -> bool {
        let lo = -border;
        let hi = CHUNK_SIZE_CELLS + border;
        (lo..hi).any(|z| {
            (lo..hi).any(|y| {
                let start = self.index(IVec3::new(lo, y, z));
                self.cells[start..start + (hi - lo) as usize]
                    .iter()
                    .any(|c| c.water_occupancy() > 0)
            })
        })
    }

    #[inline]
    fn index(&self, p: IVec3) -> usize {
        let q = p + IVec3::splat(PAD);
        ((q.z * DIM + q.y) * DIM + q.x) as usize
    }

    #[inline]
    fn get(&self, p: IVec3) -> Cell {
        self.cells[self.index(p)]
    }

    /// Water open above: water here, none in the cell above.
    fn open_water(&self, p: IVec3) -> bool {
        self.get(p).water_occupancy() > 0 && self.get(p + IVec3::Y).water_occupancy() == 0
    }

    /// Height of the open water top of cell `p`, in cells (chunk-local).
    fn water_top(&self, p: IVec3) -> f32 {
        p.y as f32 + self.get(p).water_occupancy() as f32 / 255.0
    }

    /// The sheet height over cell `p` in cells, if `p` is a sheet cell: open
    /// water, or a shore cell (some solid, no water) beside open water in the
    /// same row.
    fn sheet_height(&self, p: IVec3) -> Option<f32> {
        let c = self.get(p);
        if c.water_occupancy() > 0 {
            return self.open_water(p).then(|| self.water_top(p));
        }
        if c.solid_occupancy() == 0 {
            return None;
        }
        [IVec3::X, IVec3::NEG_X, IVec3::Z, IVec3::NEG_Z]
            .iter()
            .filter(|&&d| self.open_water(p + d))
            .map(|&d| self.water_top(p + d))
            .reduce(f32::max)
    }

    /// True when `p` is open water (not shore) and so part of the open sheet.
    fn is_open_sheet(&self, p: IVec3) -> bool {
        self.open_water(p)
    }
}

/// Meshes the water of the chunk whose 3×3×3 neighbourhood is `hood` into
/// `out` (cleared first).
pub fn mesh_water(hood: &Neighbourhood, out: &mut WaterMesh) {
    out.positions.clear();
    out.normals.clear();
    out.wave_fade.clear();
    out.indices.clear();
    if hood_has_no_water(hood) {
        return;
    }
    let cells = Cells::gather(hood);
    let n = CHUNK_SIZE_CELLS;
    // Sheet, shore and side faces all need water within one cell of the chunk.
    if !cells.any_water_within(1) {
        return;
    }
    let s = CELL_SIZE_STUDS;
    for z in 0..n {
        for y in 0..n {
            for x in 0..n {
                let p = IVec3::new(x, y, z);
                // Top sheet (water open above, or shore beside it).
                if let Some(_h) = cells.sheet_height(p) {
                    let corners = [
                        IVec3::new(x, y, z),
                        IVec3::new(x + 1, y, z),
                        IVec3::new(x + 1, y, z + 1),
                        IVec3::new(x, y, z + 1),
                    ];
                    let v = corners.map(|c| {
                        let (height, fade) = corner(&cells, c);
                        out.push_vertex(
                            Vec3::new(c.x as f32 * s, height * s, c.z as f32 * s),
                            Vec3::Y,
                            fade,
                        )
                    });
                    // Counter-clockwise seen from above (+Y): x then z.
                    out.indices
                        .extend_from_slice(&[v[0], v[3], v[2], v[0], v[2], v[1]]);
                }
                // Side faces where water meets air horizontally.
                let c = cells.get(p);
                if c.water_occupancy() == 0 {
                    continue;
                }
                let top = if cells.get(p + IVec3::Y).water_occupancy() > 0 {
                    (y + 1) as f32
                } else {
                    cells.water_top(p)
                };
                for d in [IVec3::X, IVec3::NEG_X, IVec3::Z, IVec3::NEG_Z] {
                    let nb = cells.get(p + d);
                    if nb.water_occupancy() > 0 || nb.solid_occupancy() > 0 {
                        continue;
                    }
                    side_face(out, p, d, y as f32, top);
                }
            }
        }
    }
}

/// Height (cells) and wave fade of the sheet corner at lattice point `c`
/// (the corner shared by cells `c - (0|1, 0, 0|1)`): the highest sheet height
/// around it; fade 0 unless all four cells around are open water, then
/// growing with the distance (in cells, up to [`WAVE_FADE_CELLS`]) to the
/// nearest cell that is not.
fn corner(cells: &Cells, c: IVec3) -> (f32, f32) {
    let around = [
        IVec3::new(c.x - 1, c.y, c.z - 1),
        IVec3::new(c.x, c.y, c.z - 1),
        IVec3::new(c.x - 1, c.y, c.z),
        IVec3::new(c.x, c.y, c.z),
    ];
    let height = around
        .iter()
        .filter_map(|&p| cells.sheet_height(p))
        .reduce(f32::max)
        .unwrap_or(c.y as f32);
    let mut fade_cells = WAVE_FADE_CELLS;
    'ring: for r in 1..=WAVE_FADE_CELLS {
        // Cells within Chebyshev distance r of the corner.
        for dz in -r..r {
            for dx in -r..r {
                if !cells.is_open_sheet(IVec3::new(c.x + dx, c.y, c.z + dz)) {
                    fade_cells = r - 1;
                    break 'ring;
                }
            }
        }
    }
    (height, fade_cells as f32 / WAVE_FADE_CELLS as f32)
}

/// A vertical quad on the `d` face of water cell `p`, from `bottom` to `top` (cells).
fn side_face(out: &mut WaterMesh, p: IVec3, d: IVec3, bottom: f32, top: f32) {
    let s = CELL_SIZE_STUDS;
    let n = d.as_vec3();
    // The face's two horizontal corners, ordered so the quad faces +d.
    let (a, b) = match (d.x, d.z) {
        (1, _) => (IVec3::new(p.x + 1, 0, p.z), IVec3::new(p.x + 1, 0, p.z + 1)),
        (-1, _) => (IVec3::new(p.x, 0, p.z + 1), IVec3::new(p.x, 0, p.z)),
        (_, 1) => (IVec3::new(p.x + 1, 0, p.z + 1), IVec3::new(p.x, 0, p.z + 1)),
        _ => (IVec3::new(p.x, 0, p.z), IVec3::new(p.x + 1, 0, p.z)),
    };
    let v = |c: IVec3, y: f32, out: &mut WaterMesh| {
        out.push_vertex(Vec3::new(c.x as f32 * s, y * s, c.z as f32 * s), n, 0.0)
    };
    let a0 = v(a, bottom, out);
    let b0 = v(b, bottom, out);
    let b1 = v(b, top, out);
    let a1 = v(a, top, out);
    out.indices.extend_from_slice(&[a0, b0, b1, a0, b1, a1]);
}

/// True when no chunk of the neighbourhood can hold water (uniform non-water
/// chunks only): the common case, decided without reading cells.
fn hood_has_no_water(hood: &Neighbourhood) -> bool {
    (-1..=1).all(|z| {
        (-1..=1).all(|y| {
            (-1..=1).all(|x| {
                hood.get(IVec3::new(x, y, z))
                    .as_uniform()
                    .is_some_and(|c| c.water_occupancy() == 0)
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::cell::Material;
    use crate::terrain::storage::coords::{CellBox, ChunkCoord};
    use crate::terrain::storage::grid::Grid;
    use std::collections::BTreeSet;

    fn mesh_of(g: &Grid) -> WaterMesh {
        let mut m = WaterMesh::default();
        mesh_water(
            &Neighbourhood::from_grid(g, ChunkCoord::new(0, 0, 0)),
            &mut m,
        );
        m
    }

    /// Rock floor below y = 4 and rock walls around a 6×6 pool (x, z in 10..16)
    /// holding water in rows 4..=5, the top row `top_occupancy` full.
    fn pool(top_occupancy: u8) -> Grid {
        let mut g = Grid::new();
        g.edit_region(
            CellBox::new(IVec3::new(4, 0, 4), IVec3::new(22, 8, 22)),
            |c, _| {
                let inside = (10..16).contains(&c.0.x) && (10..16).contains(&c.0.z);
                match (inside, c.0.y) {
                    (_, y) if y < 4 => Cell::full(Material::ROCK),
                    (true, 4) => Cell::full(Material::WATER),
                    (true, 5) => Cell::new(Material::WATER, top_occupancy),
                    (true, _) => Cell::EMPTY,
                    (false, _) => Cell::full(Material::ROCK),
                }
            },
        )
        .unwrap();
        g
    }

    /// Sheet cells (x, z) covered by upward quads, from their first vertex.
    fn sheet_cells(m: &WaterMesh) -> BTreeSet<(i32, i32)> {
        m.indices
            .chunks_exact(6)
            .filter(|q| m.normals[q[0] as usize] == Vec3::Y)
            .map(|q| {
                let p = m.positions[q[0] as usize] / CELL_SIZE_STUDS;
                (p.x.round() as i32, p.z.round() as i32)
            })
            .collect()
    }

    #[test]
    fn top_height_is_cell_bottom_plus_water_fraction() {
        let m = mesh_of(&pool(128));
        let expected = (5.0 + 128.0 / 255.0) * CELL_SIZE_STUDS;
        for (p, n) in m.positions.iter().zip(&m.normals) {
            if *n == Vec3::Y {
                assert!((p.y - expected).abs() < 1e-4, "{p} vs {expected}");
            }
        }
    }

    #[test]
    fn sheet_covers_the_water_and_its_shore_cells_and_no_further() {
        let m = mesh_of(&pool(255));
        let mut expected = BTreeSet::new();
        for z in 10..16 {
            for x in 10..16 {
                expected.insert((x, z));
            }
        }
        // The shore ring: 4-neighbours of the pool (not its diagonal corners).
        for i in 10..16 {
            for c in [(9, i), (16, i), (i, 9), (i, 16)] {
                expected.insert(c);
            }
        }
        assert_eq!(sheet_cells(&m), expected);
        // Enclosed by rock: no side faces.
        assert!(m.normals.iter().all(|n| *n == Vec3::Y));
    }

    #[test]
    fn side_faces_exactly_where_water_meets_air() {
        // Open the pool's +x wall at the water rows: water meets air there.
        let mut g = pool(255);
        g.edit_region(
            CellBox::new(IVec3::new(16, 4, 10), IVec3::new(22, 8, 16)),
            |_, _| Cell::EMPTY,
        )
        .unwrap();
        let m = mesh_of(&g);
        let sides: BTreeSet<(i32, i32, i32)> = m
            .indices
            .chunks_exact(6)
            .filter(|q| m.normals[q[0] as usize] == Vec3::X)
            .map(|q| {
                let p = m.positions[q[0] as usize] / CELL_SIZE_STUDS;
                (p.x.round() as i32, p.y.round() as i32, p.z.round() as i32)
            })
            .collect();
        let expected: BTreeSet<(i32, i32, i32)> =
            (10..16).flat_map(|z| [(16, 4, z), (16, 5, z)]).collect();
        assert_eq!(sides, expected);
        assert!(m.normals.iter().all(|n| *n == Vec3::Y || *n == Vec3::X));
        // Nothing hangs over the air beyond the opening.
        assert!(!sheet_cells(&m).iter().any(|&(x, _)| x >= 16));
    }

    #[test]
    fn wave_fade_is_zero_on_every_edge_vertex_and_one_in_open_water() {
        let m = mesh_of(&pool(255));
        // Edge: corners on the sheet's outline (x or z at 9 or 17).
        for (p, f) in m.positions.iter().zip(&m.wave_fade) {
            let c = (*p / CELL_SIZE_STUDS).round();
            let on_outline = c.x <= 10.0 || c.x >= 16.0 || c.z <= 10.0 || c.z >= 16.0;
            if on_outline {
                assert_eq!(*f, 0.0, "corner {c}");
            }
            if (12.0..=14.0).contains(&c.x) && (12.0..=14.0).contains(&c.z) {
                assert_eq!(*f, 1.0, "corner {c}");
            }
        }
    }
}
