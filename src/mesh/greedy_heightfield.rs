//! The low-poly mesher (issue 19; background
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
use crate::terrain::coords::CELL_SIZE_STUDS;

use super::column_heightfield::{ColumnHeightfield, ColumnTop, SIDE};

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
        let normal = u.cross(v).normalize_or_zero();
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

/// Meshes `field` into `out` (cleared first): greedy tops, then merged
/// skirts in the four directions (see the module docs).
pub fn mesh_low_poly(field: &ColumnHeightfield, out: &mut LowPolyMesh) {
    out.clear();
    let step_studs = field.step_cells * CELL_SIZE_STUDS;
    greedy_tops(field, step_studs, out);
    for direction in Direction::ALL {
        skirts(field, direction, step_studs, out);
    }
}

/// Studs along x or z of lattice line `i`.
fn lattice(i: i32) -> f32 {
    i as f32 * CELL_SIZE_STUDS
}

/// Tops: maximal rectangles of equal (step, material), row by row.
fn greedy_tops(field: &ColumnHeightfield, step_studs: f32, out: &mut LowPolyMesh) {
    let n = SIDE as i32;
    let mut done = [[false; SIDE]; SIDE];
    for z in 0..n {
        for x in 0..n {
            if done[z as usize][x as usize] {
                continue;
            }
            let Some(top) = field.top(x, z) else {
                continue;
            };
            let same = |x: i32, z: i32, done: &[[bool; SIDE]; SIDE]| {
                !done[z as usize][x as usize] && field.top(x, z) == Some(top)
            };
            let mut w = 1;
            while x + w < n && same(x + w, z, &done) {
                w += 1;
            }
            let mut d = 1;
            while z + d < n && (x..x + w).all(|xi| same(xi, z + d, &done)) {
                d += 1;
            }
            for row in &mut done[z as usize..(z + d) as usize] {
                for cell in &mut row[x as usize..(x + w) as usize] {
                    *cell = true;
                }
            }
            let y = top.step as f32 * step_studs;
            out.push_quad(
                Vec3::new(lattice(x), y, lattice(z)),
                Vec3::new(0.0, 0.0, lattice(d)),
                Vec3::new(lattice(w), 0.0, 0.0),
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

    /// The neighbour's offset `(dx, dz)`.
    fn offset(self) -> (i32, i32) {
        match self {
            Direction::PlusX => (1, 0),
            Direction::MinusX => (-1, 0),
            Direction::PlusZ => (0, 1),
            Direction::MinusZ => (0, -1),
        }
    }
}

/// The wall a column at `(x, z)` builds toward `direction`: (own top,
/// neighbour step) when it stands higher than the neighbour's top (or than
/// y = 0 beside a column with no top).
fn wall(
    field: &ColumnHeightfield,
    x: i32,
    z: i32,
    direction: Direction,
) -> Option<(ColumnTop, i32)> {
    let own = field.top(x, z)?;
    let (dx, dz) = direction.offset();
    let below = field.top(x + dx, z + dz).map_or(0, |t| t.step);
    (own.step > below).then_some((own, below))
}

/// Skirts toward `direction`: along each line of columns, runs of equal
/// (own step, neighbour step, material) become one quad each.
fn skirts(field: &ColumnHeightfield, direction: Direction, step_studs: f32, out: &mut LowPolyMesh) {
    let n = SIDE as i32;
    let along_x = matches!(direction, Direction::PlusZ | Direction::MinusZ);
    for line in 0..n {
        let at = |i: i32| if along_x { (i, line) } else { (line, i) };
        let mut i = 0;
        while i < n {
            let (x, z) = at(i);
            let Some(key) = wall(field, x, z, direction) else {
                i += 1;
                continue;
            };
            let mut run = 1;
            while i + run < n && {
                let (x2, z2) = at(i + run);
                wall(field, x2, z2, direction) == Some(key)
            } {
                run += 1;
            }
            let (top, below) = key;
            let (y0, y1) = (below as f32 * step_studs, top.step as f32 * step_studs);
            let rise = Vec3::new(0.0, y1 - y0, 0.0);
            let (a, u, v) = match direction {
                Direction::PlusX => (
                    Vec3::new(lattice(x + 1), y0, lattice(z)),
                    rise,
                    Vec3::new(0.0, 0.0, lattice(run)),
                ),
                Direction::MinusX => (
                    Vec3::new(lattice(x), y0, lattice(z)),
                    Vec3::new(0.0, 0.0, lattice(run)),
                    rise,
                ),
                Direction::PlusZ => (
                    Vec3::new(lattice(x), y0, lattice(z + 1)),
                    Vec3::new(lattice(run), 0.0, 0.0),
                    rise,
                ),
                Direction::MinusZ => (
                    Vec3::new(lattice(x), y0, lattice(z)),
                    rise,
                    Vec3::new(lattice(run), 0.0, 0.0),
                ),
            };
            out.push_quad(a, u, v, top.material, true);
            i += run;
        }
    }
}
