//! Surface Nets extraction of the solid surface of one chunk (spec §4, §5).
//!
//! Source: S. F. F. Gibson, "Constrained elastic surface nets" (1998), in the
//! naive form the spec fixes: samples at cell centres, threshold 0.5
//! (`occupancy >= 128` is inside), one vertex per surface cube at the mean of
//! its edges' linear 0.5 crossings, one quad per crossing sample edge.
//!
//! ```text
//!            cube (x-1,y,z) | cube (x,y,z)          a sample edge along x from
//!        ---------o---------+---------o-------      s to s+1 that crosses 0.5
//!                 |   v0    |    v1   |             joins the vertices of the
//!   y ^           |         |         |             4 cubes around it (in the
//!     |    -------o-------- s ======= s+1 ----      y/z plane) into one quad;
//!     +--> z      |   v3    |    v2   |             winding faces out of solid
//!        ---------o---------+---------o-------
//! ```
//!
//! Ownership: the chunk emits the quads of sample edges whose lower sample lies
//! inside it. Cube vertices are computed from the 8 samples alone (offset inside
//! the cube and normal), then placed with integer cube coordinates, so two
//! chunks that both build a boundary cube produce bit-identical offsets and
//! normals.
//!
//! Speed: crossing edges are found with word operations on the per-row inside
//! bits of the [`SampleField`]; only cubes next to a crossing edge are ever
//! evaluated, and chunks that provably own no surface are skipped before any
//! cell is read. All buffers are owned by the caller and reused.

use glam::{IVec3, Vec3};

use super::chunk_mesh::ChunkMesh;
use super::field::{Neighbourhood, PAD, SampleField};
use super::materials::{MaterialAccumulator, QuadSet, select_quad_set, vertex_weights};
use crate::terrain::coords::{CELL_SIZE_STUDS, ChunkCoord};
use crate::terrain::grid::Grid;

const NO_SLOT: u32 = u32::MAX;

/// Options for one meshing call.
#[derive(Clone, Copy, Debug, Default)]
pub struct MeshOptions {
    /// Also fill [`ChunkMesh::cube_offsets`] (seam tests and audits).
    pub keep_cube_offsets: bool,
}

/// Per-cube results cached while a chunk is meshed.
#[derive(Clone, Copy, Debug)]
struct CubeData {
    /// Vertex offset inside the cube, `[0, 1]³`.
    offset: Vec3,
    /// Outward unit normal.
    normal: Vec3,
    /// Solid material contributions of the 8 samples.
    materials: MaterialAccumulator,
    /// First emitted vertex of this cube (a cube emits one vertex per distinct
    /// material set among its quads), chained through `vertex_next`.
    first_vertex: u32,
}

/// A Surface Nets mesher with its reusable buffers (sample field and cube
/// scratch); keep one per worker thread.
#[derive(Debug, Default)]
pub struct SurfaceNets {
    field: SampleField,
    scratch: Scratch,
}

/// Per-call scratch memory of the extraction.
#[derive(Debug, Default)]
struct Scratch {
    /// Slot of each cube in `cubes`, indexed by padded cube coordinate.
    cube_slot: Vec<u32>,
    cubes: Vec<CubeData>,
    touched: Vec<u32>,
    vertex_next: Vec<u32>,
    vertex_sets: Vec<QuadSet>,
}

impl SurfaceNets {
    /// Fresh scratch buffers.
    pub fn new() -> SurfaceNets {
        SurfaceNets::default()
    }

    /// Meshes the chunk at `coord` of `grid` at full detail into `out`
    /// (cleared first). Returns without reading any cell when the chunk and its
    /// +x/+y/+z neighbours are uniform on the same side of the surface.
    pub fn mesh_chunk_l0(
        &mut self,
        grid: &Grid,
        coord: ChunkCoord,
        options: MeshOptions,
        out: &mut ChunkMesh,
    ) {
        out.clear();
        if owns_no_surface_l0(grid, coord) {
            return;
        }
        let hood = Neighbourhood::from_grid(grid, coord);
        self.field.gather_l0_from(&hood);
        self.scratch.extract(&self.field, options, out);
    }

    /// Meshes the chunk whose 3×3×3 neighbourhood is `hood` at full detail.
    pub fn mesh_neighbourhood_l0(
        &mut self,
        hood: &Neighbourhood,
        options: MeshOptions,
        out: &mut ChunkMesh,
    ) {
        out.clear();
        if hood.owns_no_surface() {
            return;
        }
        self.field.gather_l0_from(hood);
        self.scratch.extract(&self.field, options, out);
    }

    /// Meshes an already-filled sample field into `out` (cleared first).
    pub fn mesh_field(&mut self, field: &SampleField, options: MeshOptions, out: &mut ChunkMesh) {
        out.clear();
        self.scratch.extract(field, options, out);
    }

    /// The sample field used by the last call (for inspection in tests).
    pub fn field(&self) -> &SampleField {
        &self.field
    }
}

impl Scratch {
    fn extract(&mut self, field: &SampleField, options: MeshOptions, out: &mut ChunkMesh) {
        let dim = field.dim;
        let n = field.n;
        let cube_dim = dim; // padded cube coordinates share the sample indexing
        if self.cube_slot.len() != cube_dim * cube_dim * cube_dim {
            self.cube_slot = vec![NO_SLOT; cube_dim * cube_dim * cube_dim];
        }
        self.cubes.clear();
        self.vertex_next.clear();
        self.vertex_sets.clear();
        let stud_scale = CELL_SIZE_STUDS * field.spacing_cells as f32;
        let rows = &field.inside_rows;
        // Owned lower samples are padded indices PAD..PAD+n on every axis.
        let own_mask: u64 = ((1u64 << n) - 1) << PAD;
        let mut em = Emitter {
            field,
            cube_slot: &mut self.cube_slot,
            cubes: &mut self.cubes,
            touched: &mut self.touched,
            vertex_next: &mut self.vertex_next,
            vertex_sets: &mut self.vertex_sets,
            out,
            options,
            stud_scale,
        };
        for pz in PAD..PAD + n {
            for py in PAD..PAD + n {
                let r = rows[py + dim * pz];
                // X edges: sample x to x+1 in this row.
                let mut cross = (r ^ (r >> 1)) & own_mask;
                while cross != 0 {
                    let px = cross.trailing_zeros() as usize;
                    cross &= cross - 1;
                    let lower_inside = (r >> px) & 1 == 1;
                    // Cubes around the edge in the (y, z) plane, ordered for a +x normal.
                    let c = [
                        [px, py - 1, pz - 1],
                        [px, py, pz - 1],
                        [px, py, pz],
                        [px, py - 1, pz],
                    ];
                    em.quad(c, lower_inside);
                }
                // Y edges: row (y, z) against row (y+1, z).
                let mut cross = (r ^ rows[py + 1 + dim * pz]) & own_mask;
                while cross != 0 {
                    let px = cross.trailing_zeros() as usize;
                    cross &= cross - 1;
                    let lower_inside = (r >> px) & 1 == 1;
                    // Ordered for a +y normal: (z, x) plane.
                    let c = [
                        [px - 1, py, pz - 1],
                        [px - 1, py, pz],
                        [px, py, pz],
                        [px, py, pz - 1],
                    ];
                    em.quad(c, lower_inside);
                }
                // Z edges: row (y, z) against row (y, z+1).
                let mut cross = (r ^ rows[py + dim * (pz + 1)]) & own_mask;
                while cross != 0 {
                    let px = cross.trailing_zeros() as usize;
                    cross &= cross - 1;
                    let lower_inside = (r >> px) & 1 == 1;
                    // Ordered for a +z normal: (x, y) plane.
                    let c = [
                        [px - 1, py - 1, pz],
                        [px, py - 1, pz],
                        [px, py, pz],
                        [px - 1, py, pz],
                    ];
                    em.quad(c, lower_inside);
                }
            }
        }
        out.skirt_start_vertex = out.positions.len() as u32;
        out.skirt_start_index = out.indices.len() as u32;
        // Reset only the cube slots this chunk used.
        for &i in self.touched.iter() {
            self.cube_slot[i as usize] = NO_SLOT;
        }
        self.touched.clear();
    }
}

/// True when the chunk at `coord` provably owns no solid surface at full
/// detail: it and its +x, +y, +z neighbours are uniform (or unwritten) and on
/// the same side of the surface. Four map lookups; no cell is read.
pub fn owns_no_surface_l0(grid: &Grid, coord: ChunkCoord) -> bool {
    let inside_if_uniform = |c: ChunkCoord| match grid.chunk(c) {
        None => Some(false),
        Some(chunk) => chunk.cells.as_uniform().map(|cell| cell.is_inside()),
    };
    let Some(centre) = inside_if_uniform(coord) else {
        return false;
    };
    [IVec3::X, IVec3::Y, IVec3::Z]
        .iter()
        .all(|&d| inside_if_uniform(ChunkCoord(coord.0 + d)) == Some(centre))
}

struct Emitter<'a> {
    field: &'a SampleField,
    cube_slot: &'a mut Vec<u32>,
    cubes: &'a mut Vec<CubeData>,
    touched: &'a mut Vec<u32>,
    vertex_next: &'a mut Vec<u32>,
    vertex_sets: &'a mut Vec<QuadSet>,
    out: &'a mut ChunkMesh,
    options: MeshOptions,
    stud_scale: f32,
}

impl Emitter<'_> {
    /// Emits the quad joining the vertices of 4 cubes (padded min corners),
    /// given in the order that faces +axis; reversed when the lower sample is outside.
    #[inline]
    fn quad(&mut self, cubes: [[usize; 3]; 4], lower_inside: bool) {
        let slots = cubes.map(|c| self.cube(c));
        let set = {
            let accs = slots.map(|s| &self.cubes[s as usize].materials);
            select_quad_set(accs)
        };
        let v = [0, 1, 2, 3].map(|i| self.vertex(slots[i], cubes[i], &set));
        let idx = &mut self.out.indices;
        if lower_inside {
            idx.extend_from_slice(&[v[0], v[1], v[2], v[0], v[2], v[3]]);
        } else {
            idx.extend_from_slice(&[v[0], v[2], v[1], v[0], v[3], v[2]]);
        }
    }

    /// The slot of the cube with padded min corner `c`, evaluating it on first use.
    #[inline]
    fn cube(&mut self, c: [usize; 3]) -> u32 {
        let dim = self.field.dim;
        let key = c[0] + dim * (c[1] + dim * c[2]);
        let slot = self.cube_slot[key];
        if slot != NO_SLOT {
            return slot;
        }
        let slot = self.cubes.len() as u32;
        self.cubes.push(evaluate_cube(self.field, c));
        self.cube_slot[key] = slot;
        self.touched.push(key as u32);
        slot
    }

    /// The vertex of cube `slot` carrying material set `set`, created on first use.
    #[inline]
    fn vertex(&mut self, slot: u32, c: [usize; 3], set: &QuadSet) -> u32 {
        let cube = self.cubes[slot as usize];
        let mut v = cube.first_vertex;
        let mut last = NO_SLOT;
        while v != NO_SLOT {
            if self.vertex_sets[v as usize] == *set {
                return v;
            }
            last = v;
            v = self.vertex_next[v as usize];
        }
        let index = self.out.positions.len() as u32;
        let local = IVec3::new(
            c[0] as i32 - PAD as i32,
            c[1] as i32 - PAD as i32,
            c[2] as i32 - PAD as i32,
        );
        let pos = (local.as_vec3() + Vec3::splat(0.5) + cube.offset) * self.stud_scale;
        self.out.positions.push(pos);
        self.out.normals.push(cube.normal);
        self.out.material_ids.push(set.ids);
        self.out
            .material_weights
            .push(vertex_weights(&cube.materials, set));
        self.out
            .vertex_cubes
            .push([local.x as i8, local.y as i8, local.z as i8]);
        if self.options.keep_cube_offsets {
            self.out.cube_offsets.push(cube.offset);
        }
        self.vertex_next.push(NO_SLOT);
        self.vertex_sets.push(*set);
        if last == NO_SLOT {
            self.cubes[slot as usize].first_vertex = index;
        } else {
            self.vertex_next[last as usize] = index;
        }
        index
    }
}

/// Corner `i` of a cube has offset `(i & 1, (i >> 1) & 1, (i >> 2) & 1)`.
const CUBE_EDGES: [(usize, usize); 12] = [
    (0, 1),
    (2, 3),
    (4, 5),
    (6, 7),
    (0, 2),
    (1, 3),
    (4, 6),
    (5, 7),
    (0, 4),
    (1, 5),
    (2, 6),
    (3, 7),
];

#[inline]
fn corner_offset(i: usize) -> Vec3 {
    Vec3::new((i & 1) as f32, ((i >> 1) & 1) as f32, ((i >> 2) & 1) as f32)
}

/// Evaluates the cube with padded min corner `c`: vertex offset (mean of the
/// 0.5 crossings on its crossing edges), normal (negated, normalized trilinear
/// interpolation of central-difference gradients at its 8 samples) and
/// material contributions. Depends on the samples only, never on `c` itself,
/// so equal cubes in two chunks give bit-identical results.
#[inline]
fn evaluate_cube(field: &SampleField, c: [usize; 3]) -> CubeData {
    let dim = field.dim;
    let base = c[0] + dim * (c[1] + dim * c[2]);
    let sx = 1usize;
    let sy = dim;
    let sz = dim * dim;
    let corner_index = |i: usize| base + (i & 1) * sx + ((i >> 1) & 1) * sy + ((i >> 2) & 1) * sz;
    let s = &field.solid;
    let values: [u8; 8] = std::array::from_fn(|i| s[corner_index(i)]);

    // Offset: mean of the crossings (threshold 127.5 in occupancy units).
    let mut sum = Vec3::ZERO;
    let mut count = 0u32;
    for &(a, b) in &CUBE_EDGES {
        let (va, vb) = (values[a], values[b]);
        if (va >= 128) != (vb >= 128) {
            let t = (127.5 - va as f32) / (vb as f32 - va as f32);
            sum += corner_offset(a) + (corner_offset(b) - corner_offset(a)) * t;
            count += 1;
        }
    }
    let offset = if count > 0 {
        sum / count as f32
    } else {
        Vec3::splat(0.5)
    };

    // Normal: central differences at each corner, trilinearly interpolated.
    let mut grad = Vec3::ZERO;
    for i in 0..8 {
        let k = corner_index(i);
        let g = Vec3::new(
            s[k + sx] as f32 - s[k - sx] as f32,
            s[k + sy] as f32 - s[k - sy] as f32,
            s[k + sz] as f32 - s[k - sz] as f32,
        );
        let o = corner_offset(i);
        let w = (if o.x > 0.0 { offset.x } else { 1.0 - offset.x })
            * (if o.y > 0.0 { offset.y } else { 1.0 - offset.y })
            * (if o.z > 0.0 { offset.z } else { 1.0 - offset.z });
        grad += g * w;
    }
    let normal = (-grad).try_normalize().unwrap_or(Vec3::Y);

    let mut materials = MaterialAccumulator::default();
    let m = &field.material;
    for i in 0..8 {
        if values[i] > 0 {
            materials.add(m[corner_index(i)], values[i] as u32);
        }
    }
    CubeData {
        offset,
        normal,
        materials,
        first_vertex: NO_SLOT,
    }
}
