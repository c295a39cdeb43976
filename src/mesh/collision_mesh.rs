//! Collision geometry of one chunk (spec §10): full-detail Surface Nets
//! extraction with one shared vertex per surface cube, and flat-patch
//! reduction. Plain data; `crate::collision` turns it into parry3d shapes.
//!
//! # Why a separate extraction
//! The render mesher ([`super::SurfaceNets`]) emits one vertex per cube *and
//! material set* and computes normals and material weights; collision needs
//! none of that, only positions and a shared, indexed vertex per cube so that
//! the triangle mesh is watertight where the field is. This extractor reads
//! the same padded [`SampleField`] and computes every vertex position with
//! the render mesher's exact formula and order of IEEE-754 operations, so the
//! collision surface coincides bit for bit with the full-detail render
//! surface (before reduction). It never produces skirts (spec §6: skirts are
//! render-only), and it never uses a coarser level.
//!
//! # Flat-patch reduction
//! A cube is **regular along axis `a`** when exactly its 4 sample edges along
//! `a` cross the surface and no other edge does. Its vertex then sits at
//! offset 0.5 on the two other axes (every crossing edge lies at 0 or 1 on
//! them, two each), i.e. on a regular grid. A quad is a **flat candidate**
//! when its 4 cubes are regular along the quad's edge axis and their vertex
//! coordinates along that axis are bit-identical: the quad is then exactly
//! planar and perpendicular to `a`. A **regular flat patch** is an
//! axis-aligned rectangle of `w × h` flat candidates in one layer of owned
//! sample edges, chosen greedily (row by row: longest run along the first
//! in-plane axis, then as many following rows as hold the whole run). Since
//! every vertex of a patch belongs to a regular cube, its interior vertices
//! are used by the patch's quads only, so they can be dropped; all
//! `2·(w + h)` perimeter vertices are kept and the patch becomes a fan of
//! `2·(w + h)` triangles around one new centre vertex in the same plane.
//! Every perimeter edge of the fan is the edge of the neighbouring
//! (reduced or not) quad, so no T-junction appears; a rectangle is never
//! collapsed to 2 triangles. Patches are reduced only when that saves
//! triangles (`w·h > w + h`).

use glam::Vec3;

use super::field::{Neighbourhood, PAD, SampleField};
use super::surface_nets::{edge, mixed_cubes, owns_no_surface_l0};
use crate::terrain::storage::coords::{CELL_SIZE_STUDS, CHUNK_SIZE_CELLS, ChunkCoord};
use crate::terrain::storage::grid::Grid;

/// No vertex for this cube.
const NO_VERTEX: u32 = u32::MAX;
/// Samples per chunk axis at full detail.
const N: usize = CHUNK_SIZE_CELLS as usize;

/// Indexed collision triangles of one chunk in chunk-local studs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CollisionMesh {
    /// Vertex positions in chunk-local studs (origin at the chunk's minimum
    /// corner). One per surface cube used by an emitted triangle, plus one
    /// centre vertex per reduced patch.
    pub positions: Vec<Vec3>,
    /// Triangles, counter-clockwise seen from outside the solid.
    pub indices: Vec<[u32; 3]>,
    /// Triangles the full-detail surface has before flat-patch reduction
    /// (2 per owned crossing sample edge).
    pub triangles_before_reduction: u32,
    /// Number of reduced flat patches.
    pub reduced_patches: u32,
    /// Index of the first patch-centre vertex; vertices before it are cube
    /// vertices (bit-identical to the full-detail render mesh positions).
    pub centre_start_vertex: u32,
}

impl CollisionMesh {
    /// True when the chunk has no collision triangle.
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }

    /// Number of triangles after reduction.
    pub fn triangle_count(&self) -> usize {
        self.indices.len()
    }
}

/// A collision mesh extractor with reusable buffers; keep one per thread.
#[derive(Debug, Default)]
pub struct CollisionMesher {
    field: SampleField,
    /// Vertex index of each surface cube, by padded min-corner index.
    cube_vertex: Vec<u32>,
    /// Padded indices written into `cube_vertex` by the current call.
    touched: Vec<u32>,
    /// Per vertex: regular axis + 1, or 0 when the cube is not regular.
    regular: Vec<u8>,
    /// Whether a vertex is referenced by an emitted triangle.
    used: Vec<bool>,
    /// Flat candidates: `[axis][layer][v]` rows with bit `u` set.
    flat: Vec<u64>,
    /// Orientation of each candidate (bit set when the lower sample is inside).
    flat_inside: Vec<u64>,
}

impl CollisionMesher {
    /// Fresh buffers.
    pub fn new() -> CollisionMesher {
        CollisionMesher::default()
    }

    /// Extracts the collision mesh of the chunk at `coord` of `grid` into
    /// `out` (cleared first). Reads the chunk and 1 cell beyond each face
    /// (gathered from its 26 neighbours, unwritten ones empty).
    pub fn mesh_chunk(&mut self, grid: &Grid, coord: ChunkCoord, out: &mut CollisionMesh) {
        *out = CollisionMesh::default();
        if owns_no_surface_l0(grid, coord) {
            return;
        }
        let hood = Neighbourhood::from_grid(grid, coord);
        self.field.gather_l0_from(&hood);
        self.extract(out);
    }

    /// Extracts from the current full-detail field.
    fn extract(&mut self, out: &mut CollisionMesh) {
        let field = &self.field;
        let dim = field.dim;
        let (sy, sz) = (dim, dim * dim);
        if self.cube_vertex.len() != dim * dim * dim {
            self.cube_vertex = vec![NO_VERTEX; dim * dim * dim];
        }
        for &k in &self.touched {
            self.cube_vertex[k as usize] = NO_VERTEX;
        }
        self.touched.clear();
        self.regular.clear();
        self.flat.clear();
        self.flat.resize(3 * N * N, 0);
        self.flat_inside.clear();
        self.flat_inside.resize(3 * N * N, 0);
        let rows = &field.inside_rows[..dim * dim];

        // Pass 1: every surface cube with padded min corner in PAD-1 ..= PAD+N-1.
        let cube_mask: u64 = ((1u64 << (N + 1)) - 1) << (PAD - 1);
        for cz in PAD - 1..PAD + N {
            for cy in PAD - 1..PAD + N {
                let mut mixed = mixed_cubes(rows, dim, cy, cz) & cube_mask;
                while mixed != 0 {
                    let cx = mixed.trailing_zeros() as usize;
                    mixed &= mixed - 1;
                    let k = cx + sy * cy + sz * cz;
                    let (pos, regular) = cube_vertex(&field.solid, k, sy, sz, [cx, cy, cz]);
                    self.cube_vertex[k] = out.positions.len() as u32;
                    self.touched.push(k as u32);
                    out.positions.push(pos);
                    self.regular.push(regular);
                }
            }
        }
        if out.positions.is_empty() {
            return;
        }

        // Pass 2: owned crossing edges; flat candidates are set aside.
        let own_mask: u64 = ((1u64 << N) - 1) << PAD;
        for pz in PAD..PAD + N {
            for py in PAD..PAD + N {
                let r = rows[py + dim * pz];
                let base = dim * (py + dim * pz);
                // As in the render mesher: crossing edges per axis and the 4
                // cubes around each, relative to the lower sample, in the
                // order that faces +axis.
                let axes = [
                    (r ^ (r >> 1), [sy + sz, sz, 0, sy]),
                    (r ^ rows[py + 1 + dim * pz], [1 + sz, 1, 0, sz]),
                    (r ^ rows[py + dim * (pz + 1)], [1 + sy, sy, 0, 1]),
                ];
                for (axis, (crossing, back)) in axes.into_iter().enumerate() {
                    let mut cross = crossing & own_mask;
                    while cross != 0 {
                        let px = cross.trailing_zeros() as usize;
                        cross &= cross - 1;
                        let k = base + px;
                        // Invariant: both samples of a crossing edge differ,
                        // so its 4 cubes are surface cubes found in pass 1.
                        let v = back.map(|b| self.cube_vertex[k - b]);
                        let lower_inside = (r >> px) & 1 == 1;
                        out.triangles_before_reduction += 2;
                        let p = [px - PAD, py - PAD, pz - PAD];
                        if self.is_flat_candidate(&out.positions, v, axis) {
                            let (layer, u, w) = plane_coords(axis, p);
                            let row = (axis * N + layer) * N + w;
                            self.flat[row] |= 1 << u;
                            if lower_inside {
                                self.flat_inside[row] |= 1 << u;
                            }
                        } else {
                            push_quad(&mut out.indices, v, lower_inside);
                        }
                    }
                }
            }
        }

        // Pass 3: greedy rectangles of flat candidates per axis and layer.
        for axis in 0..3 {
            for layer in 0..N {
                let rows_at = (axis * N + layer) * N;
                for w0 in 0..N {
                    loop {
                        let avail = self.flat[rows_at + w0];
                        if avail == 0 {
                            break;
                        }
                        let u0 = avail.trailing_zeros() as usize;
                        let width = (avail >> u0).trailing_ones() as usize;
                        let run = ((1u64 << width) - 1) << u0;
                        let mut height = 1;
                        while w0 + height < N && self.flat[rows_at + w0 + height] & run == run {
                            height += 1;
                        }
                        let inside = self.flat_inside[rows_at + w0] >> u0 & 1 == 1;
                        for row in w0..w0 + height {
                            self.flat[rows_at + row] &= !run;
                        }
                        let rect = PatchRect {
                            axis,
                            layer,
                            u: u0..u0 + width,
                            w: w0..w0 + height,
                            inside,
                        };
                        self.emit_rect(&rect, out);
                    }
                }
            }
        }

        self.compact(out);
    }

    /// True when the quad of cube vertices `v` across an edge along `axis`
    /// is a flat candidate (see the module docs).
    fn is_flat_candidate(&self, positions: &[Vec3], v: [u32; 4], axis: usize) -> bool {
        let want = axis as u8 + 1;
        let plane = positions[v[0] as usize][axis].to_bits();
        v.iter().all(|&i| {
            self.regular[i as usize] == want && positions[i as usize][axis].to_bits() == plane
        })
    }

    /// Emits one rectangle of flat candidates: as a fan around a centre
    /// vertex when that saves triangles, otherwise quad by quad.
    fn emit_rect(&self, rect: &PatchRect, out: &mut CollisionMesh) {
        let (width, height) = (rect.u.len(), rect.w.len());
        // Cube grid point (i, j) of the rectangle, in padded in-plane
        // coordinates: quad (u, w) joins the cubes at local u-1..=u and
        // w-1..=w, padded u+PAD-1..=u+PAD.
        let dim = self.field.dim;
        let vertex = |i: usize, j: usize| -> u32 {
            let p = unplane(rect.axis, rect.layer + PAD, i, j);
            self.cube_vertex[p[0] + dim * (p[1] + dim * p[2])]
        };
        let (i0, i1) = (rect.u.start + PAD - 1, rect.u.end + PAD - 1);
        let (j0, j1) = (rect.w.start + PAD - 1, rect.w.end + PAD - 1);
        if width * height <= width + height {
            for j in j0..j1 {
                for i in i0..i1 {
                    // Counter-clockwise around +axis: the in-plane axes are
                    // (axis+1, axis+2) in cyclic order.
                    let q = [
                        vertex(i, j),
                        vertex(i + 1, j),
                        vertex(i + 1, j + 1),
                        vertex(i, j + 1),
                    ];
                    push_quad(&mut out.indices, q, rect.inside);
                }
            }
            return;
        }
        // Perimeter, counter-clockwise around +axis.
        let mut ring = Vec::with_capacity(2 * (width + height));
        ring.extend((i0..i1).map(|i| vertex(i, j0)));
        ring.extend((j0..j1).map(|j| vertex(i1, j)));
        ring.extend((i0 + 1..=i1).rev().map(|i| vertex(i, j1)));
        ring.extend((j0 + 1..=j1).rev().map(|j| vertex(i0, j)));
        let (a, c) = (
            out.positions[vertex(i0, j0) as usize],
            out.positions[vertex(i1, j1) as usize],
        );
        // The plane coordinate is shared bit for bit; the in-plane ones are
        // the midpoint of the rectangle's corners.
        let mut centre = (a + c) * 0.5;
        centre[rect.axis] = a[rect.axis];
        let centre_index = out.positions.len() as u32;
        out.positions.push(centre);
        out.reduced_patches += 1;
        for s in 0..ring.len() {
            let (p, q) = (ring[s], ring[(s + 1) % ring.len()]);
            out.indices.push(if rect.inside {
                [centre_index, p, q]
            } else {
                [centre_index, q, p]
            });
        }
    }

    /// Drops cube vertices no triangle uses (interior vertices of reduced
    /// patches, padding cubes of unowned edges) and renumbers, keeping
    /// cube vertices first and patch centres after them.
    fn compact(&mut self, out: &mut CollisionMesh) {
        let count = out.positions.len();
        self.used.clear();
        self.used.resize(count, false);
        for t in &out.indices {
            for &i in t {
                self.used[i as usize] = true;
            }
        }
        let cube_count = self.regular.len();
        out.centre_start_vertex = self.used[..cube_count].iter().filter(|&&u| u).count() as u32;
        let mut remap = vec![NO_VERTEX; count];
        let mut next = 0u32;
        for (i, slot) in remap.iter_mut().enumerate() {
            if self.used[i] {
                *slot = next;
                out.positions[next as usize] = out.positions[i];
                next += 1;
            }
        }
        out.positions.truncate(next as usize);
        for t in &mut out.indices {
            for i in t.iter_mut() {
                *i = remap[*i as usize];
            }
        }
    }

    /// The sample field used by the last call (for tests).
    pub fn field(&self) -> &SampleField {
        &self.field
    }
}

/// A rectangle of flat candidate quads: quads `u × w` in `layer` of the
/// sample edges along `axis`.
struct PatchRect {
    axis: usize,
    layer: usize,
    u: std::ops::Range<usize>,
    w: std::ops::Range<usize>,
    /// Lower sample inside: the surface faces +axis.
    inside: bool,
}

/// `(layer, u, w)` of chunk-local sample `p` for quads across edges along
/// `axis`: the coordinate along `axis`, then the in-plane coordinates along
/// `axis + 1` and `axis + 2` (cyclic, so `u × w` points along +axis).
#[inline]
fn plane_coords(axis: usize, p: [usize; 3]) -> (usize, usize, usize) {
    (p[axis], p[(axis + 1) % 3], p[(axis + 2) % 3])
}

/// Inverse of [`plane_coords`] (any consistent coordinates, e.g. padded).
#[inline]
fn unplane(axis: usize, layer: usize, i: usize, j: usize) -> [usize; 3] {
    let mut p = [0usize; 3];
    p[axis] = layer;
    p[(axis + 1) % 3] = i;
    p[(axis + 2) % 3] = j;
    p
}

/// Two triangles `[v0, v1, v2], [v0, v2, v3]` of a quad given counter-clockwise
/// around +axis, reversed when the surface faces -axis (lower sample outside).
#[inline]
fn push_quad(indices: &mut Vec<[u32; 3]>, v: [u32; 4], facing_plus: bool) {
    if facing_plus {
        indices.push([v[0], v[1], v[2]]);
        indices.push([v[0], v[2], v[3]]);
    } else {
        indices.push([v[0], v[2], v[1]]);
        indices.push([v[0], v[3], v[2]]);
    }
}

/// Position (chunk-local studs) of the vertex of the cube with padded min
/// corner index `k` (padded coordinates `c`), and its regular axis + 1 (0 when
/// not regular). The offset uses the render mesher's formula in the same
/// order of operations, so positions are bit-identical to the render mesh.
#[inline(always)]
fn cube_vertex(solid: &[u8], k: usize, sy: usize, sz: usize, c: [usize; 3]) -> (Vec3, u8) {
    let s = |i: usize| solid[k + (i & 1) + sy * ((i >> 1) & 1) + sz * (i >> 2)] as f32;
    let c8 = [s(0), s(1), s(2), s(3), s(4), s(5), s(6), s(7)];
    let (tx0, fx0) = edge(c8[0], c8[1]);
    let (tx1, fx1) = edge(c8[2], c8[3]);
    let (tx2, fx2) = edge(c8[4], c8[5]);
    let (tx3, fx3) = edge(c8[6], c8[7]);
    let (ty0, fy0) = edge(c8[0], c8[2]);
    let (ty1, fy1) = edge(c8[1], c8[3]);
    let (ty2, fy2) = edge(c8[4], c8[6]);
    let (ty3, fy3) = edge(c8[5], c8[7]);
    let (tz0, fz0) = edge(c8[0], c8[4]);
    let (tz1, fz1) = edge(c8[1], c8[5]);
    let (tz2, fz2) = edge(c8[2], c8[6]);
    let (tz3, fz3) = edge(c8[3], c8[7]);
    let cx = fx0 + fx1 + fx2 + fx3;
    let cy = fy0 + fy1 + fy2 + fy3;
    let cz = fz0 + fz1 + fz2 + fz3;
    let count = (fx0 + fx1 + fx2 + fx3) + (fy0 + fy1 + fy2 + fy3) + (fz0 + fz1 + fz2 + fz3);
    let nx = fy1 + fy3 + fz1 + fz3;
    let ny = fx1 + fx3 + fz2 + fz3;
    let nz = fx2 + fx3 + fy2 + fy3;
    let ox = ((tx0 + tx1) + (tx2 + tx3) + nx) / count;
    let oy = ((ty0 + ty1) + (ty2 + ty3) + ny) / count;
    let oz = ((tz0 + tz1) + (tz2 + tz3) + nz) / count;
    let local = c.map(|x| x as i32 - PAD as i32);
    let pos = Vec3::new(
        ((local[0] as f32 + 0.5) + ox) * CELL_SIZE_STUDS,
        ((local[1] as f32 + 0.5) + oy) * CELL_SIZE_STUDS,
        ((local[2] as f32 + 0.5) + oz) * CELL_SIZE_STUDS,
    );
    let regular = match (cx as u8, cy as u8, cz as u8) {
        (4, 0, 0) => 1,
        (0, 4, 0) => 2,
        (0, 0, 4) => 3,
        _ => 0,
    };
    (pos, regular)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{ChunkMesh, MeshOptions, SurfaceNets};
    use crate::terrain::storage::cell::{Cell, Material};
    use crate::terrain::storage::coords::CellBox;
    use glam::IVec3;

    fn fill(grid: &mut Grid, b: CellBox, f: impl Fn(IVec3) -> Cell) {
        grid.edit_region(b, |c, _| f(c.0)).expect("small region");
    }

    #[test]
    fn cube_vertices_match_the_render_mesh_bit_for_bit() {
        let mut grid = Grid::new();
        let b = CellBox::new(IVec3::splat(-8), IVec3::splat(40));
        fill(&mut grid, b, |c| {
            let h = 12.0 + 5.0 * ((c.x as f32) * 0.3).sin() + 3.0 * ((c.z as f32) * 0.2).cos();
            let occ = ((h - c.y as f32).clamp(0.0, 1.0) * 255.0) as u8;
            Cell::new(Material::GRASS, occ)
        });
        let coord = ChunkCoord::new(0, 0, 0);
        let mut render = ChunkMesh::default();
        SurfaceNets::new().mesh_chunk_l0(&grid, coord, MeshOptions::default(), &mut render);
        let mut col = CollisionMesh::default();
        CollisionMesher::new().mesh_chunk(&grid, coord, &mut col);
        assert_eq!(
            col.triangles_before_reduction as usize,
            render.triangle_count()
        );
        let render_set: std::collections::HashSet<[u32; 3]> = render
            .positions
            .iter()
            .map(|p| p.to_array().map(f32::to_bits))
            .collect();
        let cube_set: std::collections::HashSet<[u32; 3]> = col.positions
            [..col.centre_start_vertex as usize]
            .iter()
            .map(|p| p.to_array().map(f32::to_bits))
            .collect();
        assert_eq!(cube_set.len(), col.centre_start_vertex as usize);
        assert_eq!(cube_set, render_set);
    }
}
