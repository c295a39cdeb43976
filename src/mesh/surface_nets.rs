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
use super::materials::{CornerMaterials, QuadSet, select_quad_set, vertex_weights};
use crate::terrain::coords::{CELL_SIZE_STUDS, ChunkCoord};
use crate::terrain::grid::Grid;

const NO_SLOT: u32 = u32::MAX;

/// Options for one meshing call.
#[derive(Clone, Copy, Debug, Default)]
pub struct MeshOptions {
    /// Also fill [`ChunkMesh::cube_offsets`] (seam tests and audits).
    pub keep_cube_offsets: bool,
}

/// Per-cube results of pass 1.
#[derive(Clone, Copy, Debug)]
struct CubeData {
    /// Vertex offset inside the cube, `[0, 1]³`.
    offset: Vec3,
    /// Outward unit normal.
    normal: Vec3,
    /// Material and solid occupancy of the 8 samples.
    materials: CornerMaterials,
    /// Padded min-corner sample of the cube.
    corner: [u8; 3],
    /// The only contributing material, or [`MIXED`] when several contribute.
    single: u16,
    /// The cube's vertex for the one-material set `{single}`, once emitted.
    single_vertex: u32,
    /// First emitted blended vertex of this cube (a cube emits one vertex per
    /// distinct material set among its quads), chained through `vertex_next`.
    first_vertex: u32,
}

/// `CubeData::single` when more than one material contributes.
const MIXED: u16 = u16::MAX;

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
    /// Slot of each surface cube in `cubes`, indexed by padded cube min
    /// corner. Only entries written by pass 1 of the current call are read.
    cube_slot: Vec<u32>,
    cubes: Vec<CubeData>,
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
    /// Pass 1 evaluates every surface cube (corners on both sides of the
    /// threshold) of the cube range the owned edges use; pass 2 walks the
    /// owned crossing edges and joins cube vertices into quads.
    fn extract(&mut self, field: &SampleField, options: MeshOptions, out: &mut ChunkMesh) {
        let dim = field.dim;
        let n = field.n;
        if self.cube_slot.len() != dim * dim * dim {
            self.cube_slot = vec![NO_SLOT; dim * dim * dim];
        }
        self.cubes.clear();
        self.vertex_next.clear();
        self.vertex_sets.clear();
        let rows = &field.inside_rows;

        // Pass 1: cubes with padded min corner in PAD-1 ..= PAD+n-1 on each axis.
        let cube_mask: u64 = ((1u64 << (n + 1)) - 1) << (PAD - 1);
        for cz in PAD - 1..PAD + n {
            for cy in PAD - 1..PAD + n {
                let r00 = rows[cy + dim * cz];
                let r10 = rows[cy + 1 + dim * cz];
                let r01 = rows[cy + dim * (cz + 1)];
                let r11 = rows[cy + 1 + dim * (cz + 1)];
                let any = r00 | r10 | r01 | r11;
                let all = r00 & r10 & r01 & r11;
                let mut mixed = (any | (any >> 1)) & !(all & (all >> 1)) & cube_mask;
                while mixed != 0 {
                    let cx = mixed.trailing_zeros() as usize;
                    mixed &= mixed - 1;
                    let key = cx + dim * (cy + dim * cz);
                    self.cube_slot[key] = self.cubes.len() as u32;
                    self.cubes.push(evaluate_cube(field, [cx, cy, cz]));
                }
            }
        }

        // Pass 2: quads of the owned crossing edges (lower sample in PAD..PAD+n).
        let stud_scale = CELL_SIZE_STUDS * field.spacing_cells as f32;
        let own_mask: u64 = ((1u64 << n) - 1) << PAD;
        let mut em = Emitter {
            dim,
            cube_slot: &self.cube_slot,
            cubes: &mut self.cubes,
            vertex_next: &mut self.vertex_next,
            vertex_sets: &mut self.vertex_sets,
            out,
            options,
            stud_scale,
        };
        let (sy, sz) = (dim, dim * dim);
        for pz in PAD..PAD + n {
            for py in PAD..PAD + n {
                let r = rows[py + dim * pz];
                let base = dim * (py + dim * pz);
                // X edges: sample x to x+1 in this row; cubes in the (y, z)
                // plane, ordered for a +x normal.
                let mut cross = (r ^ (r >> 1)) & own_mask;
                while cross != 0 {
                    let px = cross.trailing_zeros() as usize;
                    cross &= cross - 1;
                    let k = base + px;
                    em.quad([k - sy - sz, k - sz, k, k - sy], (r >> px) & 1 == 1);
                }
                // Y edges: row (y, z) against row (y+1, z); (z, x) plane for +y.
                let mut cross = (r ^ rows[py + 1 + dim * pz]) & own_mask;
                while cross != 0 {
                    let px = cross.trailing_zeros() as usize;
                    cross &= cross - 1;
                    let k = base + px;
                    em.quad([k - 1 - sz, k - 1, k, k - sz], (r >> px) & 1 == 1);
                }
                // Z edges: row (y, z) against row (y, z+1); (x, y) plane for +z.
                let mut cross = (r ^ rows[py + dim * (pz + 1)]) & own_mask;
                while cross != 0 {
                    let px = cross.trailing_zeros() as usize;
                    cross &= cross - 1;
                    let k = base + px;
                    em.quad([k - 1 - sy, k - sy, k, k - 1], (r >> px) & 1 == 1);
                }
            }
        }
        out.skirt_start_vertex = out.positions.len() as u32;
        out.skirt_start_index = out.indices.len() as u32;
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
    dim: usize,
    cube_slot: &'a [u32],
    cubes: &'a mut Vec<CubeData>,
    vertex_next: &'a mut Vec<u32>,
    vertex_sets: &'a mut Vec<QuadSet>,
    out: &'a mut ChunkMesh,
    options: MeshOptions,
    stud_scale: f32,
}

impl Emitter<'_> {
    /// Emits the quad joining the vertices of 4 surface cubes (padded keys),
    /// given in the order that faces +axis; reversed when the lower sample is outside.
    #[inline(always)]
    fn quad(&mut self, keys: [usize; 4], lower_inside: bool) {
        let slots = keys.map(|k| self.cube_slot[k] as usize);
        let single = self.cubes[slots[0]].single;
        let v = if single != MIXED
            && self.cubes[slots[1]].single == single
            && self.cubes[slots[2]].single == single
            && self.cubes[slots[3]].single == single
        {
            // One material on all 4 vertices: the set is just that material,
            // and each cube has at most one such vertex.
            slots.map(|s| match self.cubes[s].single_vertex {
                NO_SLOT => {
                    let set = QuadSet {
                        ids: [single as u8; 4],
                        len: 1,
                        dominant_slot: 0,
                    };
                    let v = self.new_vertex(s, &set);
                    self.cubes[s].single_vertex = v;
                    v
                }
                v => v,
            })
        } else {
            let set = select_quad_set(slots.map(|s| &self.cubes[s].materials));
            slots.map(|s| self.blended_vertex(s, &set))
        };
        let idx = &mut self.out.indices;
        if lower_inside {
            idx.extend_from_slice(&[v[0], v[1], v[2], v[0], v[2], v[3]]);
        } else {
            idx.extend_from_slice(&[v[0], v[2], v[1], v[0], v[3], v[2]]);
        }
    }

    /// The vertex of cube `slot` carrying the multi-material `set`, created on
    /// first use; a cube's blended vertices are chained through `vertex_next`.
    #[inline]
    fn blended_vertex(&mut self, slot: usize, set: &QuadSet) -> u32 {
        let mut v = self.cubes[slot].first_vertex;
        let mut last = NO_SLOT;
        while v != NO_SLOT {
            if self.vertex_sets[v as usize] == *set {
                return v;
            }
            last = v;
            v = self.vertex_next[v as usize];
        }
        let index = self.new_vertex(slot, set);
        if last == NO_SLOT {
            self.cubes[slot].first_vertex = index;
        } else {
            self.vertex_next[last as usize] = index;
        }
        index
    }

    /// Appends the vertex of cube `slot` with material set `set`.
    fn new_vertex(&mut self, slot: usize, set: &QuadSet) -> u32 {
        let cube = &self.cubes[slot];
        let index = self.out.positions.len() as u32;
        let local = IVec3::new(
            cube.corner[0] as i32 - PAD as i32,
            cube.corner[1] as i32 - PAD as i32,
            cube.corner[2] as i32 - PAD as i32,
        );
        let pos = (local.as_vec3() + Vec3::splat(0.5) + cube.offset) * self.stud_scale;
        let weights = if set.len <= 1 {
            [255, 0, 0, 0]
        } else {
            vertex_weights(&cube.materials, set)
        };
        let out = &mut *self.out;
        out.positions.push(pos);
        out.normals.push(cube.normal);
        out.material_ids.push(set.ids);
        out.material_weights.push(weights);
        out.vertex_cubes
            .push([local.x as i8, local.y as i8, local.z as i8]);
        if self.options.keep_cube_offsets {
            out.cube_offsets.push(cube.offset);
        }
        self.vertex_next.push(NO_SLOT);
        self.vertex_sets.push(*set);
        index
    }
}

/// Evaluates the cube with padded min corner `c`: vertex offset (mean of the
/// 0.5 crossings on its crossing edges), normal (negated, normalized trilinear
/// interpolation of central-difference gradients at its 8 samples) and
/// material contributions. Depends on the samples only, never on `c` itself,
/// so equal cubes in two chunks give bit-identical results.
#[inline]
fn evaluate_cube(field: &SampleField, c: [usize; 3]) -> CubeData {
    let dim = field.dim;
    let (sy, sz) = (dim, dim * dim);
    let base = c[0] + sy * c[1] + sz * c[2];
    let s = &field.solid[..];
    let corner_offsets = [0, 1, sy, sy + 1, sz, sz + 1, sz + sy, sz + sy + 1];
    // Plain loops rather than `array::map`, which does not always inline here.
    let mut v = [0i32; 8];
    let mut ids = [0u8; 8];
    let mut values = [0u8; 8];
    for i in 0..8 {
        let k = base + corner_offsets[i];
        values[i] = s[k];
        v[i] = s[k] as i32;
        ids[i] = field.material[k];
    }

    // Offset: mean of the crossings (threshold 127.5 in occupancy units).
    // Crossing edges from the corners' inside bits: along axis a, corner i
    // (with bit a clear) pairs with corner i | (1 << a). Each component of the
    // sum is updated through registers, never a dynamically indexed array.
    let mut inside = 0u32;
    for (i, &x) in v.iter().enumerate() {
        inside |= ((x >= 128) as u32) << i;
    }
    const LOWER: [u32; 3] = [0b0101_0101, 0b0011_0011, 0b0000_1111];
    let mut sum = [0.0f32; 3];
    let mut count = 0u32;
    for axis in 0..3 {
        let (u, w) = ((axis + 1) % 3, (axis + 2) % 3);
        let mut cross = (inside ^ (inside >> (1 << axis))) & LOWER[axis];
        while cross != 0 {
            let a = cross.trailing_zeros() as usize;
            cross &= cross - 1;
            let b = a | (1 << axis);
            let t = (127.5 - v[a] as f32) / (v[b] - v[a]) as f32;
            sum[axis] += t;
            sum[u] += ((a >> u) & 1) as f32;
            sum[w] += ((a >> w) & 1) as f32;
            count += 1;
        }
    }
    // A surface cube has at least one crossing edge.
    let inv = 1.0 / count.max(1) as f32;
    let offset = Vec3::new(sum[0] * inv, sum[1] * inv, sum[2] * inv);

    // Normal: central differences at each corner, trilinearly interpolated.
    // Along each axis a corner's difference uses its partner corner and one
    // sample just outside the cube.
    let w = [
        [1.0 - offset.x, offset.x],
        [1.0 - offset.y, offset.y],
        [1.0 - offset.z, offset.z],
    ];
    let strides = [1usize, sy, sz];
    let mut grad = [0.0f32; 3];
    for i in 0..8 {
        let bits = [i & 1, (i >> 1) & 1, (i >> 2) & 1];
        let weight = w[0][bits[0]] * w[1][bits[1]] * w[2][bits[2]];
        let k = base + corner_offsets[i];
        for axis in 0..3 {
            let bit = 1 << axis;
            let d = if bits[axis] == 0 {
                v[i | bit] - s[k - strides[axis]] as i32
            } else {
                s[k + strides[axis]] as i32 - v[i & !bit]
            };
            grad[axis] += d as f32 * weight;
        }
    }
    let normal = Vec3::new(-grad[0], -grad[1], -grad[2])
        .try_normalize()
        .unwrap_or(Vec3::Y);

    // Materials: solid contributions of the 8 samples.
    let m = &field.material[..];
    // Materials: solid contributions of the 8 samples (spec §5).
    let materials = CornerMaterials::new(ids, values);
    let single = materials.single().map_or(MIXED, u16::from);
    CubeData {
        offset,
        normal,
        materials,
        corner: [c[0] as u8, c[1] as u8, c[2] as u8],
        single,
        single_vertex: NO_SLOT,
        first_vertex: NO_SLOT,
    }
}
