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
//! Materials (spec §5): a cube emits one vertex per distinct material set
//! (and hence weights) among its quads. A quad whose 4 cubes carry at most 4
//! contributing materials, each cube some, takes all of them as its set, so
//! its set follows from the cubes' material masks alone: the dominant
//! material only decides the weights of a vertex without contribution, and
//! there is none. Other quads go through
//! [`select_quad_set`](super::materials::select_quad_set). Weights are
//! computed once per vertex, after all quads.
//!
//! Speed: crossing edges are found with word operations on the per-row inside
//! bits of the [`SampleField`]; only cubes next to a crossing edge are ever
//! evaluated, and chunks that provably own no surface are skipped before any
//! cell is read. Surface cubes are evaluated in batches of 8 consecutive cubes
//! along x with one branch-free formula per lane (see
//! [`batch_geometry`]), which the compiler
//! turns into SIMD. On x86_64 the whole extraction is also
//! compiled for AVX2 and chosen at run time; every lane operation is a single
//! IEEE-754 operation (no fused multiply-add, no approximate reciprocal), so
//! both builds give bit-identical results, which a test checks. All buffers
//! are owned by the mesher and reused.

mod cube_geometry;
mod quad_emitter;

use glam::{IVec3, Vec3};

use cube_geometry::{BatchGeometry, BatchOffsets, LANES, batch_geometry, sample_offsets};
pub(crate) use cube_geometry::{edge, mixed_cubes};
use quad_emitter::{Emitter, corner_word, vertex_set};

use super::chunk_mesh::ChunkMesh;
use super::field::{Neighbourhood, PAD, PADDED_L0, SampleField};
use super::materials::{single_material_weights, weights_from_words};
use crate::terrain::storage::coords::{CELL_SIZE_STUDS, ChunkCoord};
use crate::terrain::storage::grid::Grid;

/// No cube, vertex or batch.
const NO_SLOT: u32 = u32::MAX;

/// Never a [`vertex_key`](quad_emitter::vertex_key) (those use bits 0..32
/// and 40..43 only).
const NO_KEY: u64 = u64::MAX;

/// Options for one meshing call.
#[derive(Clone, Copy, Debug, Default)]
pub struct MeshOptions {
    /// Also fill [`ChunkMesh::cube_offsets`] (seam tests and audits).
    pub keep_cube_offsets: bool,
}

/// Per-cube state of pass 2 (kept small: quads touch 4 of these each).
#[derive(Clone, Copy, Debug)]
struct Cube {
    /// [`vertex_key`](quad_emitter::vertex_key) of the cube's first vertex,
    /// or [`NO_KEY`] before it has one. Kept here so that the common lookup
    /// (a cube with one vertex) reads only the cube, not also the vertex
    /// record.
    first_key: u64,
    /// [`CornerMaterials::mask`](super::materials::CornerMaterials::mask) of
    /// the cube's samples: one bit when a single material contributes.
    mask: u32,
    /// First emitted vertex of this cube, chained through [`Vertex::next`]: a
    /// cube emits one vertex per distinct material set (and weights) among
    /// its quads.
    first_vertex: u32,
    /// Padded index of the cube's min-corner sample.
    key: u32,
    /// Where the cube's geometry is: batch `geo / LANES`, lane `geo % LANES`.
    geo: u32,
}

/// One emitted vertex: its cube and material set; the output arrays,
/// weights included, are filled from these at the end of the call (computing
/// weights there, one vertex after another, keeps their long dependency
/// chain of a division out of the quad loop).
#[derive(Clone, Copy, Debug)]
struct Vertex {
    /// Slot of the vertex's cube in `cubes`.
    cube: u32,
    /// Next vertex of the same cube.
    next: u32,
    /// The vertex's identity among its cube's vertices, which also gives its
    /// material set (see [`vertex_key`](quad_emitter::vertex_key)).
    key: u64,
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
    /// Slot of each surface cube in `cubes`, indexed by padded cube min
    /// corner. Only entries written by pass 1 of the current call are read.
    cube_slot: Vec<u32>,
    cubes: Vec<Cube>,
    /// Geometry of the pass-1 batches.
    batches: Vec<BatchGeometry>,
    /// Vertex offsets of the pass-1 batches (only with `keep_cube_offsets`).
    batch_offsets: Vec<BatchOffsets>,
    vertices: Vec<Vertex>,
    /// Solid and material samples of a batch window that runs past the end
    /// of a small field, zero-padded.
    padded: [Vec<u8>; 2],
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

impl Scratch {
    /// Extracts the surface of `field` into `out` (already cleared), with the
    /// best code the CPU runs (see the module docs).
    fn extract(&mut self, field: &SampleField, options: MeshOptions, out: &mut ChunkMesh) {
        #[cfg(target_arch = "x86_64")]
        if avx2_available() {
            // SAFETY: the CPU supports every feature `extract_avx2` enables.
            unsafe { self.extract_avx2(field, options, out) };
            return;
        }
        self.extract_baseline(field, options, out);
    }

    /// [`Scratch::extract_any`] compiled for the target's baseline features.
    fn extract_baseline(&mut self, field: &SampleField, options: MeshOptions, out: &mut ChunkMesh) {
        self.extract_any(field, options, out);
    }

    /// [`Scratch::extract_any`] compiled with AVX2 (and the bit-manipulation
    /// extensions every AVX2 CPU has). Same operations, wider registers.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
    fn extract_avx2(&mut self, field: &SampleField, options: MeshOptions, out: &mut ChunkMesh) {
        self.extract_any(field, options, out);
    }

    /// The padded dimensions of the 4 levels of detail (32, 16, 8, 4 samples
    /// per axis, plus padding) are constants so that sample offsets are too;
    /// other sizes use the same code with a run-time dimension.
    #[inline(always)]
    fn extract_any(&mut self, field: &SampleField, options: MeshOptions, out: &mut ChunkMesh) {
        match field.dim {
            PADDED_L0 => self.extract_dim::<PADDED_L0>(field, options, out),
            20 => self.extract_dim::<20>(field, options, out),
            12 => self.extract_dim::<12>(field, options, out),
            8 => self.extract_dim::<8>(field, options, out),
            _ => self.extract_dim::<0>(field, options, out),
        }
    }

    /// Pass 1 evaluates every surface cube (corners on both sides of the
    /// threshold) of the cube range the owned edges use; pass 2 walks the
    /// owned crossing edges and joins cube vertices into quads; the output
    /// arrays are then written in one go. `D` is the padded dimension, or 0
    /// to read it from the field.
    #[inline(always)]
    fn extract_dim<const D: usize>(
        &mut self,
        field: &SampleField,
        options: MeshOptions,
        out: &mut ChunkMesh,
    ) {
        let dim = if D == 0 { field.dim } else { D };
        if self.cube_slot.len() != dim * dim * dim {
            self.cube_slot = vec![NO_SLOT; dim * dim * dim];
        }
        self.cubes.clear();
        self.batches.clear();
        self.batch_offsets.clear();
        self.vertices.clear();
        let stud_scale = CELL_SIZE_STUDS * field.spacing_cells as f32;

        self.find_surface_cubes::<D>(field, options, dim, stud_scale);
        if self.cubes.is_empty() {
            // No surface cube, so no crossing edge either.
            return;
        }
        self.emit_quads(field, dim, out);
        self.write_vertices(field, options, out);
    }

    /// Pass 1: evaluates every surface cube (padded min corner in
    /// `PAD-1 ..= PAD+n-1` on each axis) into `self.cubes`, its vertex
    /// geometry into `self.batches`.
    #[inline(always)]
    fn find_surface_cubes<const D: usize>(
        &mut self,
        field: &SampleField,
        options: MeshOptions,
        dim: usize,
        stud_scale: f32,
    ) {
        let n = field.n;
        let rows = &field.inside_rows[..dim * dim];
        // Pass 1: cubes with padded min corner in PAD-1 ..= PAD+n-1 on each axis.
        let cube_mask: u64 = ((1u64 << (n + 1)) - 1) << (PAD - 1);
        for cz in PAD - 1..PAD + n {
            for cy in PAD - 1..PAD + n {
                let mixed = mixed_cubes(rows, dim, cy, cz) & cube_mask;
                if mixed != 0 {
                    self.evaluate_row::<D>(
                        field,
                        [cy, cz],
                        mixed,
                        stud_scale,
                        options.keep_cube_offsets,
                    );
                }
            }
        }
    }

    /// Pass 2: the quads of the owned crossing edges (lower sample in
    /// `PAD..PAD+n`), appended to `out.indices` with their vertex records.
    #[inline(always)]
    fn emit_quads(&mut self, field: &SampleField, dim: usize, out: &mut ChunkMesh) {
        let n = field.n;
        let rows = &field.inside_rows[..dim * dim];
        // Pass 2: quads of the owned crossing edges (lower sample in PAD..PAD+n).
        let own_mask: u64 = ((1u64 << n) - 1) << PAD;
        let mut em = Emitter {
            cubes: &mut self.cubes,
            field,
            vertices: &mut self.vertices,
            indices: &mut out.indices,
        };
        let (sy, sz) = (dim, dim * dim);
        let cube_slot = &self.cube_slot[..];
        // The quads of one sample row, gathered first (cube slots, lower
        // sample inside) and then joined, which keeps both loops small.
        let mut row_quads = [[0u32; 5]; 3 * 64];
        for pz in PAD..PAD + n {
            for py in PAD..PAD + n {
                let r = rows[py + dim * pz];
                let base = dim * (py + dim * pz);
                let mut count = 0;
                // Per axis: the crossing edges and the 4 cubes around each,
                // relative to the edge's lower sample, in the order that
                // faces +axis. X edges: sample x to x+1 in this row, cubes in
                // the (y, z) plane; y edges: row (y, z) against row (y+1, z),
                // (z, x) plane; z edges: row (y, z) against (y, z+1), (x, y) plane.
                let axes = [
                    (r ^ (r >> 1), [sy + sz, sz, 0, sy]),
                    (r ^ rows[py + 1 + dim * pz], [1 + sz, 1, 0, sz]),
                    (r ^ rows[py + dim * (pz + 1)], [1 + sy, sy, 0, 1]),
                ];
                for (crossing, back) in axes {
                    let mut cross = crossing & own_mask;
                    while cross != 0 {
                        let px = cross.trailing_zeros() as usize;
                        cross &= cross - 1;
                        let k = base + px;
                        let q = &mut row_quads[count];
                        for i in 0..4 {
                            q[i] = cube_slot[k - back[i]];
                        }
                        q[4] = ((r >> px) & 1) as u32;
                        count += 1;
                    }
                }
                for q in &row_quads[..count] {
                    em.quad(
                        [q[0] as usize, q[1] as usize, q[2] as usize, q[3] as usize],
                        q[4] == 1,
                    );
                }
            }
        }
    }

    /// Output: the per-vertex arrays of `out` from the vertex records, in
    /// emission order, then the skirt start markers.
    #[inline(always)]
    fn write_vertices(&mut self, field: &SampleField, options: MeshOptions, out: &mut ChunkMesh) {
        // Output: per-vertex arrays from the vertex records, in emission order.
        // Written straight into reserved capacity: zero-filling ~35 bytes per
        // vertex first (`resize`) cost ~3% of the mesher, and pushing to 5
        // vectors checks 5 capacities per vertex.
        let count = self.vertices.len();
        let start = out.positions.len();
        // Checked in release too: the `set_len` below relies on it (a caller
        // that filled the arrays unevenly must not expose uninitialized
        // elements). Five compares per chunk.
        assert!(
            [
                out.normals.len(),
                out.material_ids.len(),
                out.material_weights.len(),
                out.vertex_cubes.len()
            ]
            .iter()
            .all(|&len| len == start),
            "ChunkMesh per-vertex arrays must have equal lengths"
        );
        out.positions.reserve(count);
        out.normals.reserve(count);
        out.material_ids.reserve(count);
        out.material_weights.reserve(count);
        out.vertex_cubes.reserve(count);
        let batches = &self.batches;
        let cubes = &self.cubes;
        for ((((v, pos), normal), ids), (weights, local)) in self
            .vertices
            .iter()
            .zip(out.positions.spare_capacity_mut())
            .zip(out.normals.spare_capacity_mut())
            .zip(out.material_ids.spare_capacity_mut())
            .zip(
                out.material_weights
                    .spare_capacity_mut()
                    .iter_mut()
                    .zip(out.vertex_cubes.spare_capacity_mut()),
            )
        {
            let cube = &cubes[v.cube as usize];
            let geo = cube.geo as usize;
            let b = &batches[geo / LANES];
            let j = geo % LANES;
            pos.write(Vec3::new(b.pos[0][j], b.pos[1][j], b.pos[2][j]));
            normal.write(Vec3::new(b.normal[0][j], b.normal[1][j], b.normal[2][j]));
            let set = vertex_set(v.key);
            ids.write(set.ids);
            let mask = cube.mask;
            weights.write(if set.len <= 1 {
                [255, 0, 0, 0]
            } else if mask != 0 && mask & (mask - 1) == 0 {
                // One contributing material (common): no contributions to sum.
                single_material_weights(mask.trailing_zeros() as u8, &set)
            } else {
                let (k, sy, sz) = (cube.key as usize, field.dim, field.dim * field.dim);
                let ids = corner_word(&field.material, k, sy, sz);
                weights_from_words(ids, corner_word(&field.solid, k, sy, sz), &set)
            });
            local.write([b.local[0] + j as i8, b.local[1], b.local[2]]);
        }
        // SAFETY: each vector had length `start` and room for `count` more
        // (reserved above), so each spare capacity holds at least `count`
        // elements and the zip above, as long as `vertices` (`count`), wrote
        // the first `count` of every one of them.
        unsafe {
            out.positions.set_len(start + count);
            out.normals.set_len(start + count);
            out.material_ids.set_len(start + count);
            out.material_weights.set_len(start + count);
            out.vertex_cubes.set_len(start + count);
        }
        if options.keep_cube_offsets {
            out.cube_offsets.extend(self.vertices.iter().map(|v| {
                let geo = cubes[v.cube as usize].geo as usize;
                let o = &self.batch_offsets[geo / LANES];
                let j = geo % LANES;
                Vec3::new(o[0][j], o[1][j], o[2][j])
            }));
        }
        out.skirt_start_vertex = out.positions.len() as u32;
        out.skirt_start_index = out.indices.len() as u32;
    }

    /// Pass 1 for the row of cubes `(cy, cz)` (padded) whose surface cubes
    /// are the bits of `mixed`: evaluates them in batches of consecutive cubes
    /// and appends their data to the scratch arrays.
    #[inline(always)]
    fn evaluate_row<const D: usize>(
        &mut self,
        field: &SampleField,
        [cy, cz]: [usize; 2],
        mut mixed: u64,
        stud_scale: f32,
        keep_offsets: bool,
    ) {
        let dim = if D == 0 { field.dim } else { D };
        let (sy, sz) = (dim, dim * dim);
        let offsets = if D == 0 {
            sample_offsets(sy, sz)
        } else {
            const { sample_offsets(D, D * D) }
        };
        let window = offsets[31] + LANES;
        let solid = &field.solid[..];
        let material = &field.material[..];
        // Batches start at the first remaining surface cube, but no later than
        // where the whole batch still reads samples of this row.
        let last_start = dim.saturating_sub(LANES + 2).max(1);
        let row = sy * cy + sz * cz;
        while mixed != 0 {
            let x0 = (mixed.trailing_zeros() as usize).min(last_start);
            let mut lanes = (mixed >> x0) & ((1 << LANES) - 1);
            mixed &= !(((1u64 << LANES) - 1) << x0);
            // The batch reads the window whose first sample is (-1, -1, -1)
            // from lane 0's cube; `offsets` index it.
            let base = row + x0 - 1 - sy - sz;
            let (w, mw) = match (
                solid.get(base..base + window),
                material.get(base..base + window),
            ) {
                (Some(w), Some(mw)) => (w, mw),
                _ => {
                    // Only near the very end of a small field: samples past
                    // the end read as empty (they belong to lanes whose cubes
                    // are not surface cubes).
                    for (pad, f) in self.padded.iter_mut().zip([solid, material]) {
                        pad.clear();
                        pad.extend_from_slice(&f[base.min(f.len())..]);
                        pad.resize(window, 0);
                    }
                    (&self.padded[0][..], &self.padded[1][..])
                }
            };
            // A constant length (with a constant dimension) lets the compiler
            // drop every bounds check of the batch.
            let (w, mw) = (&w[..window], &mw[..window]);
            let local = [
                x0 as i32 - PAD as i32,
                cy as i32 - PAD as i32,
                cz as i32 - PAD as i32,
            ];
            let batch = self.batches.len();
            let (geometry, batch_offsets) = batch_geometry(w, &offsets, local, stud_scale);
            self.batches.push(geometry);
            if keep_offsets {
                self.batch_offsets.push(batch_offsets);
            }
            // Material masks, lane-parallel: sample i of lane j sets the bit
            // of its id when it contributes (solid occupancy, id below 32).
            let mut masks = [0u32; LANES];
            for (j, mask) in masks.iter_mut().enumerate() {
                for &o in &offsets[..8] {
                    let id = u32::from(mw[o + j]);
                    let contributes = (w[o + j] != 0) & (id < 32);
                    *mask |= u32::from(contributes) << (id & 31);
                }
            }
            while lanes != 0 {
                let j = lanes.trailing_zeros() as usize;
                lanes &= lanes - 1;
                let k = row + x0 + j;
                self.cube_slot[k] = self.cubes.len() as u32;
                self.cubes.push(Cube {
                    mask: masks[j],
                    first_key: NO_KEY,
                    first_vertex: NO_SLOT,
                    key: k as u32,
                    geo: (batch * LANES + j) as u32,
                });
            }
        }
    }
}

/// True when this CPU runs [`Scratch::extract_avx2`] (detected once, cached by std).
#[cfg(target_arch = "x86_64")]
fn avx2_available() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("lzcnt")
        && std::arch::is_x86_feature_detected!("popcnt")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::field::inside_bits;

    /// A deterministic pseudo-random field of `n` samples per chunk axis:
    /// occupancy and material per sample from a hash, `materials` solid ids
    /// starting at 2 plus air and water.
    fn random_field(n: usize, seed: u32, materials: u32, binary: bool) -> SampleField {
        let mut f = SampleField::new(n);
        for i in 0..f.solid.len() {
            let mut h = (i as u32 ^ seed.wrapping_mul(0x9e37_79b9)).wrapping_mul(0x85eb_ca6b);
            h ^= h >> 13;
            h = h.wrapping_mul(0xc2b2_ae35);
            h ^= h >> 16;
            let m = (h % (materials + 2)) as u8;
            let occ = if binary {
                if h & 0x100 != 0 { 255 } else { 0 }
            } else {
                (h >> 9) as u8
            };
            f.material[i] = m;
            f.solid[i] = if m >= 2 { occ } else { 0 };
        }
        for r in 0..f.dim * f.dim {
            f.inside_rows[r] = inside_bits(&f.solid[r * f.dim..(r + 1) * f.dim]);
        }
        f
    }

    /// Every float as bits, so that -0.0 and 0.0 differ.
    fn bits(m: &ChunkMesh) -> Vec<u32> {
        let vecs = m.positions.iter().chain(&m.normals).chain(&m.cube_offsets);
        vecs.flat_map(|v| v.to_array().map(f32::to_bits)).collect()
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn avx2_and_baseline_builds_agree_bit_for_bit() {
        if !avx2_available() {
            return;
        }
        let options = MeshOptions {
            keep_cube_offsets: true,
        };
        for (n, seed, materials, binary) in [
            (32, 1, 2, false),
            (32, 2, 9, false),
            (32, 3, 1, true),
            (8, 4, 3, false),
        ] {
            let field = random_field(n, seed, materials, binary);
            let (mut a, mut b) = (ChunkMesh::default(), ChunkMesh::default());
            let mut scratch = Scratch::default();
            scratch.extract_baseline(&field, options, &mut a);
            // SAFETY: AVX2 and its companions were detected above.
            unsafe { scratch.extract_avx2(&field, options, &mut b) };
            assert!(!a.is_empty());
            assert_eq!(bits(&a), bits(&b));
            assert_eq!(
                (
                    &a.indices,
                    &a.material_ids,
                    &a.material_weights,
                    &a.vertex_cubes
                ),
                (
                    &b.indices,
                    &b.material_ids,
                    &b.material_weights,
                    &b.vertex_cubes
                )
            );
        }
    }

    #[test]
    fn every_field_size_meshes_to_the_spec_offsets() {
        let mut mesher = SurfaceNets::new();
        let mut m = ChunkMesh::default();
        let options = MeshOptions {
            keep_cube_offsets: true,
        };
        for n in [1, 2, 4, 8, 16, 32, 60] {
            let f = random_field(n, n as u32, 5, false);
            mesher.mesh_field(&f, options, &mut m);
            assert!(!m.is_empty(), "n = {n}");
            let dim = f.dim;
            let s = |p: [i32; 3]| {
                f64::from(f.solid[p[0] as usize + dim * (p[1] as usize + dim * p[2] as usize)])
            };
            let mut used = vec![false; m.vertex_count()];
            for &i in &m.indices {
                used[i as usize] = true;
            }
            assert!(used.iter().all(|&u| u), "every vertex is used");
            let mut distinct = std::collections::HashSet::new();
            for v in 0..m.vertex_count() {
                let vertex = (m.vertex_cubes[v], m.material_ids[v], m.material_weights[v]);
                assert!(distinct.insert(vertex), "no two equal vertices");
            }
            for v in 0..m.vertex_count() {
                let c = m.vertex_cubes[v].map(|x| x as i32 + PAD as i32);
                // Mean of the linear 0.5 crossings, in f64.
                let (mut sum, mut count) = ([0.0f64; 3], 0.0);
                for i in 0..8 {
                    for axis in 0..3 {
                        if i & (1 << axis) != 0 {
                            continue;
                        }
                        let p = [0, 1, 2].map(|a| c[a] + ((i >> a) & 1));
                        let mut q = p;
                        q[axis] += 1;
                        let (a, b) = (s(p), s(q));
                        if (a >= 128.0) != (b >= 128.0) {
                            for (ax, total) in sum.iter_mut().enumerate() {
                                *total += if ax == axis {
                                    (127.5 - a) / (b - a)
                                } else {
                                    ((i >> ax) & 1) as f64
                                };
                            }
                            count += 1.0;
                        }
                    }
                }
                for (&got, &total) in m.cube_offsets[v].as_ref().iter().zip(&sum) {
                    assert!((got as f64 - total / count).abs() < 1e-6);
                }
                let w = m.material_weights[v];
                assert_eq!(w.iter().map(|&x| u32::from(x)).sum::<u32>(), 255);
                assert!((m.normals[v].length() - 1.0).abs() < 1e-5);
            }
        }
    }
}
