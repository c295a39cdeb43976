//! The low-poly mesher (background
//! `chunked-greedy-heightfield-terrain` §1–2): a second mesher reading the
//! same grid, through a [`ColumnHeightfield`] per chunk column.
//!
//! - **Tops**: 2D greedy meshing over the chunk column's 32 × 32 tops, one
//!   quad per maximal rectangle of equal (step, material).
//! - **Skirts**: where a column stands higher than its neighbour, one wall
//!   from the neighbour's top to its own, facing the neighbour; walls along
//!   an edge merge into runs where (own step, neighbour step, material)
//!   match, one quad spanning the whole drop. A column beside one with no
//!   top (a hole, the world's edge) drops to y = 0. Of two neighbours
//!   exactly the higher one builds the wall, so walls across a chunk column
//!   border are built once, by the side that reads both heights the same.
//! - **Seam law**: runs never cross a chunk column border and every vertex
//!   lies on the global cell lattice (integer cells × 4 studs, steps ×
//!   step height), so two chunk columns place a shared edge bit-identically.
//! - **Flat shading**: each quad has its own 4 vertices with the face normal.
//!
//! Winding: a quad with corner `a` and sides `u`, `v` is the triangles
//! `a, a+u, a+v` and `a+u, a+u+v, a+v`, counter-clockwise seen from the
//! front, whose normal is `u × v` (tops: +Y).

use glam::Vec3;

use crate::terrain::Material;
use crate::terrain::storage::coords::CELL_SIZE_STUDS;

use crate::mesh::lowpoly::column_heightfield::{ColumnHeightfield, SIDE};

/// A chunk column's low-poly mesh. Positions are studs relative to the
/// chunk column's minimum corner at y = 0 (world = column origin +
/// position).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LowPolyMesh {
    /// Vertex positions, chunk-column-local studs.
    pub positions: Vec<Vec3>,
    /// Face normal of each vertex's quad (unit, axis-aligned).
    pub normals: Vec<Vec3>,
    /// Material of each vertex's quad.
    pub materials: Vec<Material>,
    /// True for the vertices of skirt (wall) quads, drawn with the
    /// darkened palette variant.
    pub skirt: Vec<bool>,
    /// Triangle list, 6 indices per quad.
    pub indices: Vec<u32>,
    /// Top quads emitted.
    pub top_quads: usize,
    /// Skirt quads emitted.
    pub skirt_quads: usize,
}

impl LowPolyMesh {
    /// Empties the mesh, keeping its buffers.
    pub fn clear(&mut self) {
        self.positions.clear();
        self.normals.clear();
        self.materials.clear();
        self.skirt.clear();
        self.indices.clear();
        self.top_quads = 0;
        self.skirt_quads = 0;
    }

    /// Triangles in the mesh.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// True when the mesh has no triangle (an empty chunk column).
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }

    /// Appends the quad with corner `a` and sides `u`, `v` (front `u × v`).
    fn push_quad(&mut self, a: Vec3, u: Vec3, v: Vec3, material: Material, skirt: bool) {
        let base = self.positions.len() as u32;
        // Every quad is axis-aligned: rounding makes the normal an exact
        // unit axis (`normalize` alone leaves 0.99999994 on some walls,
        // e.g. 164 × 32 studs).
        let normal = u.cross(v).normalize_or_zero().round();
        for p in [a, a + u, a + v, a + u + v] {
            self.positions.push(p);
            self.normals.push(normal);
            self.materials.push(material);
            self.skirt.push(skirt);
        }
        self.indices
            .extend_from_slice(&[base, base + 1, base + 2, base + 1, base + 3, base + 2]);
        if skirt {
            self.skirt_quads += 1;
        } else {
            self.top_quads += 1;
        }
    }
}

/// Which blocks of a chunk column one mesh covers, and how coarse they are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LowPolyBlocks {
    /// Cell columns per block side, a power of two up to 32: level of
    /// detail by decimation (1 at level 0, `1 << level` coarser). A block
    /// stands at the highest top among its columns.
    pub block_cells: u32,
    /// `Some(cy)`: only the blocks one of whose columns has its top cell in
    /// chunk layer `cy`, with tops capped at that chunk's ceiling (the view
    /// draws one mesh per chunk); `None`: every block (the export draws one
    /// mesh per chunk column).
    pub chunk_y: Option<i32>,
}

impl LowPolyBlocks {
    /// Every column at full detail (the export).
    pub const WHOLE: LowPolyBlocks = LowPolyBlocks {
        block_cells: 1,
        chunk_y: None,
    };
}

/// Meshes `field` into `out` (cleared first) at full detail: greedy tops,
/// then merged skirts in the four directions (see the module docs).
pub fn mesh_low_poly(field: &ColumnHeightfield, out: &mut LowPolyMesh) {
    mesh_low_poly_blocks(field, LowPolyBlocks::WHOLE, out);
}

/// [`mesh_low_poly`] over `blocks.block_cells`-sided blocks, limited to one
/// chunk's blocks when `blocks.chunk_y` is set.
///
/// A block's wall toward a neighbour drops from its top to the lowest
/// full-detail top of the neighbour's columns along that edge (y = 0 beside
/// a column with no top). A neighbour drawn at any level stands at or above
/// those tops, so blocks at different levels never leave a crack between
/// them; at full detail the wall ends exactly at the neighbour's top.
///
/// `blocks.block_cells` must be a power of two up to [`SIDE`] (checked by
/// the callers; [`crate::mesh::lowpoly::column_heightfield::check_block_cells`]).
pub fn mesh_low_poly_blocks(
    field: &ColumnHeightfield,
    blocks: LowPolyBlocks,
    out: &mut LowPolyMesh,
) {
    out.clear();
    let grid = BlockGrid::new(field, blocks);
    greedy_tops(&grid, out);
    for direction in Direction::ALL {
        skirts(field, &grid, direction, out);
    }
}

/// Studs along x or z of lattice line `i`.
fn lattice(i: i32) -> f32 {
    i as f32 * CELL_SIZE_STUDS
}

/// A drawn block's top: height in studs above y = 0 and material.
#[derive(Clone, Copy, Debug, PartialEq)]
struct BlockTop {
    y_studs: f32,
    material: Material,
}

/// The blocks of one mesh: `side` × `side` blocks of `cells` columns.
struct BlockGrid {
    cells: i32,
    side: i32,
    step_studs: f32,
    /// Row-major `side × side`; `None`: not drawn by this mesh.
    tops: Vec<Option<BlockTop>>,
}

/// The chunk layer holding the top cell of a column whose top is `step`
/// steps of `step_cells` (a top at y = 0 counts as layer 0).
fn top_chunk_y(step: i32, step_cells: f32) -> i32 {
    let top_cell = ((step as f32 * step_cells).ceil() as i32 - 1).max(0);
    top_cell.div_euclid(SIDE as i32)
}

impl BlockGrid {
    fn new(field: &ColumnHeightfield, blocks: LowPolyBlocks) -> BlockGrid {
        let cells = (blocks.block_cells.clamp(1, SIDE as u32)) as i32;
        let side = SIDE as i32 / cells;
        let step_studs = field.step_cells * CELL_SIZE_STUDS;
        let mut tops = Vec::with_capacity((side * side) as usize);
        for bz in 0..side {
            for bx in 0..side {
                tops.push(block_top(field, blocks, cells, bx, bz, step_studs));
            }
        }
        BlockGrid {
            cells,
            side,
            step_studs,
            tops,
        }
    }

    fn top(&self, bx: i32, bz: i32) -> Option<BlockTop> {
        self.tops[(bz * self.side + bx) as usize]
    }
}

/// The top of block `(bx, bz)`: the highest step among its columns, with the
/// most common material among the columns at that step (ties: the lowest
/// id), so a coarse block shows what full detail shows on top. `None` when
/// no column has a top, or when `blocks.chunk_y` is set and none of its
/// columns tops out in that chunk layer.
fn block_top(
    field: &ColumnHeightfield,
    blocks: LowPolyBlocks,
    cells: i32,
    bx: i32,
    bz: i32,
    step_studs: f32,
) -> Option<BlockTop> {
    let columns = || {
        (bz * cells..(bz + 1) * cells)
            .flat_map(move |z| (bx * cells..(bx + 1) * cells).map(move |x| (x, z)))
            .filter_map(|(x, z)| field.top(x, z))
    };
    let max_step = columns().map(|t| t.step).max()?;
    if let Some(cy) = blocks.chunk_y
        && !columns().any(|t| top_chunk_y(t.step, field.step_cells) == cy)
    {
        return None;
    }
    let mut counts = [0u16; Material::ID_COUNT];
    for t in columns().filter(|t| t.step == max_step) {
        counts[usize::from(t.material.0)] += 1;
    }
    let mut material = Material::ROCK;
    let mut best = 0;
    for (id, &n) in counts.iter().enumerate() {
        if n > best {
            best = n;
            // `counts` has one entry per u8 id.
            material = Material(id as u8);
        }
    }
    let mut y_studs = max_step as f32 * step_studs;
    if let Some(cy) = blocks.chunk_y {
        // A block whose highest column tops out in a chunk above ends at this
        // chunk's ceiling; the chunk above draws its real top.
        y_studs = y_studs.min(((cy + 1) * SIDE as i32) as f32 * CELL_SIZE_STUDS);
    }
    Some(BlockTop { y_studs, material })
}

/// Tops: maximal rectangles of blocks with equal (height, material), row by row.
fn greedy_tops(grid: &BlockGrid, out: &mut LowPolyMesh) {
    let n = grid.side;
    let mut done = vec![false; (n * n) as usize];
    let at = |x: i32, z: i32| (z * n + x) as usize;
    for z in 0..n {
        for x in 0..n {
            if done[at(x, z)] {
                continue;
            }
            let Some(top) = grid.top(x, z) else {
                continue;
            };
            let same =
                |x: i32, z: i32, done: &[bool]| !done[at(x, z)] && grid.top(x, z) == Some(top);
            let mut w = 1;
            while x + w < n && same(x + w, z, &done) {
                w += 1;
            }
            let mut d = 1;
            while z + d < n && (x..x + w).all(|xi| same(xi, z + d, &done)) {
                d += 1;
            }
            for zi in z..z + d {
                for xi in x..x + w {
                    done[at(xi, zi)] = true;
                }
            }
            let c = grid.cells;
            out.push_quad(
                Vec3::new(lattice(x * c), top.y_studs, lattice(z * c)),
                Vec3::new(0.0, 0.0, lattice(d * c)),
                Vec3::new(lattice(w * c), 0.0, 0.0),
                top.material,
                false,
            );
        }
    }
}

/// The four wall directions.
#[derive(Clone, Copy, Debug)]
enum Direction {
    PlusX,
    MinusX,
    PlusZ,
    MinusZ,
}

impl Direction {
    const ALL: [Direction; 4] = [
        Direction::PlusX,
        Direction::MinusX,
        Direction::PlusZ,
        Direction::MinusZ,
    ];
}

/// The wall block `(bx, bz)` builds toward `direction`: (its top, the
/// wall's foot in studs) when it stands higher than the lowest full-detail
/// top of the neighbour columns along that edge (or than y = 0 beside a
/// column with no top).
fn wall(
    field: &ColumnHeightfield,
    grid: &BlockGrid,
    bx: i32,
    bz: i32,
    direction: Direction,
) -> Option<(BlockTop, f32)> {
    let own = grid.top(bx, bz)?;
    let c = grid.cells;
    let edge = |i: i32| -> (i32, i32) {
        match direction {
            Direction::PlusX => ((bx + 1) * c, bz * c + i),
            Direction::MinusX => (bx * c - 1, bz * c + i),
            Direction::PlusZ => (bx * c + i, (bz + 1) * c),
            Direction::MinusZ => (bx * c + i, bz * c - 1),
        }
    };
    let foot = (0..c)
        .map(|i| {
            let (x, z) = edge(i);
            field
                .top(x, z)
                .map_or(0.0, |t| t.step as f32 * grid.step_studs)
        })
        .fold(f32::INFINITY, f32::min);
    (own.y_studs > foot).then_some((own, foot))
}

/// Skirts toward `direction`: along each line of blocks, runs of equal
/// (top, foot, material) become one quad each.
fn skirts(
    field: &ColumnHeightfield,
    grid: &BlockGrid,
    direction: Direction,
    out: &mut LowPolyMesh,
) {
    let n = grid.side;
    let c = grid.cells;
    let along_x = matches!(direction, Direction::PlusZ | Direction::MinusZ);
    for line in 0..n {
        let at = |i: i32| if along_x { (i, line) } else { (line, i) };
        let mut i = 0;
        while i < n {
            let (bx, bz) = at(i);
            let Some(key) = wall(field, grid, bx, bz, direction) else {
                i += 1;
                continue;
            };
            let mut run = 1;
            while i + run < n && {
                let (bx2, bz2) = at(i + run);
                wall(field, grid, bx2, bz2, direction) == Some(key)
            } {
                run += 1;
            }
            let (top, y0) = key;
            let rise = Vec3::new(0.0, top.y_studs - y0, 0.0);
            let (x, z) = (bx * c, bz * c);
            let length = lattice(run * c);
            let (a, u, v) = match direction {
                Direction::PlusX => (
                    Vec3::new(lattice(x + c), y0, lattice(z)),
                    rise,
                    Vec3::new(0.0, 0.0, length),
                ),
                Direction::MinusX => (
                    Vec3::new(lattice(x), y0, lattice(z)),
                    Vec3::new(0.0, 0.0, length),
                    rise,
                ),
                Direction::PlusZ => (
                    Vec3::new(lattice(x), y0, lattice(z + c)),
                    Vec3::new(length, 0.0, 0.0),
                    rise,
                ),
                Direction::MinusZ => (
                    Vec3::new(lattice(x), y0, lattice(z)),
                    rise,
                    Vec3::new(length, 0.0, 0.0),
                ),
            };
            out.push_quad(a, u, v, top.material, true);
            i += run;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quad_normals_are_exact_unit_axes_at_any_size() {
        // 164 × 32 studs: a level-3 wall of the default world whose
        // normalized normal was 0.99999994.
        let mut mesh = LowPolyMesh::default();
        for rise in (1..200).map(|i| i as f32 * 2.0) {
            for length in [4.0, 8.0, 32.0, 64.0, 128.0] {
                let (up, along) = (Vec3::Y * rise, Vec3::Z * length);
                mesh.push_quad(Vec3::ZERO, up, along, Material::ROCK, true);
                mesh.push_quad(Vec3::ZERO, along, up, Material::ROCK, true);
            }
        }
        for n in &mesh.normals {
            assert!(*n == Vec3::X || *n == Vec3::NEG_X, "{n}");
        }
    }
}
