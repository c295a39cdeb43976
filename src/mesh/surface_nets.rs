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
//! there is none. Other quads go through [`select_quad_set`]. Weights are
//! computed once per vertex, after all quads.
//!
//! Speed: crossing edges are found with word operations on the per-row inside
//! bits of the [`SampleField`]; only cubes next to a crossing edge are ever
//! evaluated, and chunks that provably own no surface are skipped before any
//! cell is read. Surface cubes are evaluated in batches of 8 consecutive cubes
//! along x with one branch-free formula per lane (see [`batch_geometry`]),
//! which the compiler turns into SIMD. On x86_64 the whole extraction is also
//! compiled for AVX2 and chosen at run time; every lane operation is a single
//! IEEE-754 operation (no fused multiply-add, no approximate reciprocal), so
//! both builds give bit-identical results, which a test checks. All buffers
//! are owned by the mesher and reused.

use glam::{IVec3, Vec3};

use super::chunk_mesh::ChunkMesh;
use super::field::{Neighbourhood, PAD, PADDED_L0, SampleField};
use super::materials::{
    CornerMaterials, QuadSet, select_quad_set, select_small_quad_set, single_material_weights,
    weights_from_words,
};
use crate::terrain::storage::coords::{CELL_SIZE_STUDS, ChunkCoord};
use crate::terrain::storage::grid::Grid;

/// No cube, vertex or batch.
const NO_SLOT: u32 = u32::MAX;

/// Never a [`vertex_key`] (those use bits 0..32 and 40..43 only).
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
    /// [`vertex_key`] of the cube's first vertex, or [`NO_KEY`] before it has
    /// one. Kept here so that the common lookup (a cube with one vertex)
    /// reads only the cube, not also the vertex record.
    first_key: u64,
    /// [`CornerMaterials::mask`] of the cube's samples: one bit when a
    /// single material contributes.
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
    /// material set (see [`vertex_key`]).
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

/// The materials of the 8 samples of the cube with padded min corner `k`.
#[inline(always)]
fn corner_materials(field: &SampleField, k: usize) -> CornerMaterials {
    let (sy, sz) = (field.dim, field.dim * field.dim);
    CornerMaterials::from_words(
        corner_word(&field.material, k, sy, sz),
        corner_word(&field.solid, k, sy, sz),
    )
}

/// The bytes of `f` at the 8 corners of the cube with padded min corner `k`,
/// byte `i = x + 2y + 4z`.
#[inline(always)]
fn corner_word(f: &[u8], k: usize, sy: usize, sz: usize) -> u64 {
    let w = &f[k..k + sy + sz + 2];
    u16_at(w, 0) | u16_at(w, sy) << 16 | u16_at(w, sz) << 32 | u16_at(w, sy + sz) << 48
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

struct Emitter<'a> {
    cubes: &'a mut [Cube],
    field: &'a SampleField,
    vertices: &'a mut Vec<Vertex>,
    indices: &'a mut Vec<u32>,
}

impl Emitter<'_> {
    /// Emits the quad joining the vertices of 4 surface cubes (slots in
    /// `cubes`), given in the order that faces +axis; reversed when the lower
    /// sample is outside.
    #[inline(always)]
    fn quad(&mut self, slots: [usize; 4], lower_inside: bool) {
        let mut masks = [0u32; 4];
        for i in 0..4 {
            masks[i] = self.cubes[slots[i]].mask;
        }
        let m = masks[0];
        let mut v = [0u32; 4];
        if m & m.wrapping_sub(1) == 0 && m != 0 && masks[1] == m && masks[2] == m && masks[3] == m {
            // One material on all 4 vertices: the set is just that material.
            for i in 0..4 {
                v[i] = match self.find_vertex(slots[i], m as u64) {
                    Ok(index) => index,
                    Err(last) => self.add_vertex(slots[i], last, m as u64),
                };
            }
        } else {
            v = self.blended_quad(slots, masks);
        }
        // [v0, v1, v2, v0, v2, v3], or with each pair after v0 swapped when
        // the lower sample is outside; branch-free, as the winding of
        // neighbouring quads is unpredictable.
        let swap = (lower_inside as u32).wrapping_sub(1);
        let d12 = (v[1] ^ v[2]) & swap;
        let d23 = (v[2] ^ v[3]) & swap;
        let quad = [v[0], v[1] ^ d12, v[2] ^ d12, v[0], v[2] ^ d23, v[3] ^ d23];
        self.indices.extend_from_slice(&quad);
    }

    /// The vertices of a quad whose cubes do not all carry the same single
    /// material: picks the quad's set, then each cube's vertex for it.
    #[inline(always)]
    fn blended_quad(&mut self, slots: [usize; 4], masks: [u32; 4]) -> [u32; 4] {
        let mut v = [0u32; 4];
        if let Some(set_key) = select_small_quad_set(masks) {
            for i in 0..4 {
                let key = vertex_key(set_key, masks[i]);
                v[i] = match self.find_vertex(slots[i], key) {
                    Ok(index) => index,
                    Err(last) => self.add_vertex(slots[i], last, key),
                };
            }
        } else {
            let corners = slots.map(|s| corner_materials(self.field, self.cubes[s].key as usize));
            let set = select_quad_set([&corners[0], &corners[1], &corners[2], &corners[3]]);
            let set_key = set.key();
            for i in 0..4 {
                let key = vertex_key(set_key, masks[i]);
                v[i] = match self.find_vertex(slots[i], key) {
                    Ok(index) => index,
                    Err(last) => self.add_vertex(slots[i], last, key),
                };
            }
        }
        v
    }

    /// The vertex of cube `slot` with [`vertex_key`] `key`, or else the last
    /// vertex of the cube's chain (or [`NO_SLOT`]).
    #[inline(always)]
    fn find_vertex(&self, slot: usize, key: u64) -> Result<u32, u32> {
        let cube = &self.cubes[slot];
        if cube.first_key == key {
            return Ok(cube.first_vertex);
        }
        if cube.first_vertex == NO_SLOT {
            return Err(NO_SLOT);
        }
        // The first vertex's key was compared above.
        let mut last = cube.first_vertex;
        let mut v = self.vertices[last as usize].next;
        while v != NO_SLOT {
            let vertex = &self.vertices[v as usize];
            if vertex.key == key {
                return Ok(v);
            }
            last = v;
            v = vertex.next;
        }
        Err(last)
    }

    /// Appends a vertex of cube `slot` to the vertices and to the cube's
    /// chain after `last` (or as its first).
    #[inline(always)]
    fn add_vertex(&mut self, slot: usize, last: u32, key: u64) -> u32 {
        let index = self.vertices.len() as u32;
        self.vertices.push(Vertex {
            cube: slot as u32,
            next: NO_SLOT,
            key,
        });
        if last == NO_SLOT {
            self.cubes[slot].first_vertex = index;
            self.cubes[slot].first_key = key;
        } else {
            self.vertices[last as usize].next = index;
        }
        index
    }
}

/// The identity of a cube's vertex for the quad set with [`QuadSet::key`]
/// `set_key`, given the cube's material mask: the set's materials, plus the
/// dominant slot only when the cube contributes to none of them (its weights
/// then depend on it). Vertices of a cube with equal keys have equal ids and
/// weights, so quads share them; [`vertex_set`] recovers the set.
#[inline(always)]
fn vertex_key(set_key: u64, mask: u32) -> u64 {
    let materials = set_key & 0xffff_ffff;
    if materials & u64::from(mask) != 0 {
        materials
    } else {
        // Dominant slot + 1, so an empty set (slot 0) differs from none.
        set_key + (1 << 40)
    }
}

/// The material set of a vertex from its [`vertex_key`]: exact when the cube
/// contributes to the set; otherwise the dominant slot is kept too, which is
/// all the weights of such a vertex depend on.
#[inline(always)]
fn vertex_set(key: u64) -> QuadSet {
    let dominant = (key >> 40).saturating_sub(1);
    QuadSet::from_key((key & 0xffff_ffff) | dominant << 40)
}

/// Cubes evaluated together in pass 1: consecutive cubes along x.
const LANES: usize = 8;

/// The 32 samples the geometry of one cube reads, as offsets from the
/// sample at `(-1, -1, -1)` relative to the cube's min corner:
///
/// - `0..8`: the corners, `i = x + 2y + 4z`;
/// - `8..12` / `12..16`: x lines, samples at x = -1 / x = 2, line `l = y + 2z`;
/// - `16..20` / `20..24`: y lines, samples at y = -1 / y = 2, line `l = x + 2z`;
/// - `24..28` / `28..32`: z lines, samples at z = -1 / z = 2, line `l = x + 2y`.
///
/// The last one is the largest.
const fn sample_offsets(sy: usize, sz: usize) -> [usize; 32] {
    let mut o = [0usize; 32];
    let mut i = 0;
    while i < 8 {
        o[i] = (1 + (i & 1)) + sy * (1 + ((i >> 1) & 1)) + sz * (1 + (i >> 2));
        i += 1;
    }
    let mut l = 0;
    while l < 4 {
        let (lo, hi) = (l & 1, l >> 1);
        o[8 + l] = sy * (1 + lo) + sz * (1 + hi);
        o[12 + l] = 3 + sy * (1 + lo) + sz * (1 + hi);
        o[16 + l] = (1 + lo) + sz * (1 + hi);
        o[20 + l] = (1 + lo) + 3 * sy + sz * (1 + hi);
        o[24 + l] = (1 + lo) + sy * (1 + hi);
        o[28 + l] = (1 + lo) + sy * (1 + hi) + 3 * sz;
        l += 1;
    }
    o
}

/// Vertex offsets inside the cubes of a batch, `[axis][lane]`, in `[0, 1]`.
type BatchOffsets = [[f32; LANES]; 3];

/// Geometry of one batch of cubes, per lane (lanes without a surface cube
/// hold garbage).
#[derive(Clone, Debug)]
struct BatchGeometry {
    /// Outward unit normal.
    normal: [[f32; LANES]; 3],
    /// Vertex position in chunk-local studs.
    pos: [[f32; LANES]; 3],
    /// Chunk-local min-corner sample of lane 0's cube.
    local: [i8; 3],
}

/// Bit `x` set for every cube with min corner `(x, cy, cz)` (padded sample
/// coordinates) whose 8 corners are neither all inside nor all outside, from
/// the per-row inside bit masks `rows` (`dim` rows per plane). Shared with the
/// collision mesher, which must find exactly the same surface cubes.
#[inline(always)]
pub(crate) fn mixed_cubes(rows: &[u64], dim: usize, cy: usize, cz: usize) -> u64 {
    let r00 = rows[cy + dim * cz];
    let r10 = rows[cy + 1 + dim * cz];
    let r01 = rows[cy + dim * (cz + 1)];
    let r11 = rows[cy + 1 + dim * (cz + 1)];
    let any = r00 | r10 | r01 | r11;
    let all = r00 & r10 & r01 & r11;
    (any | (any >> 1)) & !(all & (all >> 1))
}

/// One cube edge `a`–`b` (occupancy samples, 0–255): the linear 0.5
/// crossing parameter (0 when the edge does not cross) and 1.0 when it
/// crosses, else 0.0. Shared with the collision mesher, whose vertices must
/// be bit-identical to these.
#[inline(always)]
pub(crate) fn edge(a: f32, b: f32) -> (f32, f32) {
    let cross = (a >= 128.0) != (b >= 128.0);
    let t = (127.5 - a) / (b - a);
    (if cross { t } else { 0.0 }, if cross { 1.0 } else { 0.0 })
}

/// Vertex offsets, normals and positions of `LANES` cubes from their samples
/// (sample `k` of lane `j` at `window[offsets[k] + j]`, in the order of
/// [`sample_offsets`]); lane `j` of the batch is the cube at chunk-local min
/// corner `local + (j, 0, 0)`.
///
/// Every lane evaluates the same scalar formula, written out below in its
/// exact order of IEEE-754 operations, so a cube's offset and normal depend on
/// its samples alone, whatever lane or batch it is evaluated in. Lanes whose
/// cube has no crossing edge produce garbage that is never read.
///
/// - Offset: per axis, the sum of the crossing parameters of that axis's 4
///   edges as `(e0 + e1) + (e2 + e3)`, plus the number of crossing edges of
///   the other axes lying at 1 on this axis; divided by the number of crossing
///   edges.
/// - Normal: per axis, for each of the 4 lines of samples along it (through
///   the cube's edges of that axis), the central differences at both ends of
///   the edge, `b - m` and `p - a`, interpolated linearly at the offset along
///   the axis; then bilinearly over the 4 lines with weights
///   `(w_u * w_v) * g` summed as `(g0 + g1) + (g2 + g3)`; the gradient is
///   negated and divided by its length (`(x² + y²) + z²`, square root), or is
///   +Y when that length is 0 or not finite.
#[inline(always)]
fn batch_geometry(
    window: &[u8],
    offsets: &[usize; 32],
    local: [i32; 3],
    stud_scale: f32,
) -> (BatchGeometry, BatchOffsets) {
    let mut out = BatchGeometry {
        normal: [[0.0; LANES]; 3],
        pos: [[0.0; LANES]; 3],
        local: [local[0] as i8, local[1] as i8, local[2] as i8],
    };
    let mut offset = [[0.0; LANES]; 3];
    let first = [
        local[0] as f32 + 0.5,
        local[1] as f32 + 0.5,
        local[2] as f32 + 0.5,
    ];
    for j in 0..LANES {
        let s = |k: usize| window[offsets[k] + j] as f32;
        let c = [s(0), s(1), s(2), s(3), s(4), s(5), s(6), s(7)];
        // Edges along x at (y, z) = (l & 1, l >> 1), along y at (x, z), along
        // z at (x, y).
        let (tx0, fx0) = edge(c[0], c[1]);
        let (tx1, fx1) = edge(c[2], c[3]);
        let (tx2, fx2) = edge(c[4], c[5]);
        let (tx3, fx3) = edge(c[6], c[7]);
        let (ty0, fy0) = edge(c[0], c[2]);
        let (ty1, fy1) = edge(c[1], c[3]);
        let (ty2, fy2) = edge(c[4], c[6]);
        let (ty3, fy3) = edge(c[5], c[7]);
        let (tz0, fz0) = edge(c[0], c[4]);
        let (tz1, fz1) = edge(c[1], c[5]);
        let (tz2, fz2) = edge(c[2], c[6]);
        let (tz3, fz3) = edge(c[3], c[7]);
        // Counts are small integers: exact in any order.
        let count = (fx0 + fx1 + fx2 + fx3) + (fy0 + fy1 + fy2 + fy3) + (fz0 + fz1 + fz2 + fz3);
        let nx = fy1 + fy3 + fz1 + fz3;
        let ny = fx1 + fx3 + fz2 + fz3;
        let nz = fx2 + fx3 + fy2 + fy3;
        let ox = ((tx0 + tx1) + (tx2 + tx3) + nx) / count;
        let oy = ((ty0 + ty1) + (ty2 + ty3) + ny) / count;
        let oz = ((tz0 + tz1) + (tz2 + tz3) + nz) / count;

        let (wx0, wy0, wz0) = (1.0 - ox, 1.0 - oy, 1.0 - oz);
        // Along x: line l has m = s(-1), a = c[2l], b = c[2l+1], p = s(2).
        let gxl = |l: usize| wx0 * (c[2 * l + 1] - s(8 + l)) + ox * (s(12 + l) - c[2 * l]);
        let gx = ((wy0 * wz0) * gxl(0) + (oy * wz0) * gxl(1))
            + ((wy0 * oz) * gxl(2) + (oy * oz) * gxl(3));
        // Along y: line l = x + 2z has a = c[x + 4z], b = c[x + 2 + 4z].
        let gyl = |l: usize| {
            let a = (l & 1) + 4 * (l >> 1);
            wy0 * (c[a + 2] - s(16 + l)) + oy * (s(20 + l) - c[a])
        };
        let gy = ((wx0 * wz0) * gyl(0) + (ox * wz0) * gyl(1))
            + ((wx0 * oz) * gyl(2) + (ox * oz) * gyl(3));
        // Along z: line l = x + 2y has a = c[l], b = c[l + 4].
        let gzl = |l: usize| wz0 * (c[l + 4] - s(24 + l)) + oz * (s(28 + l) - c[l]);
        let gz = ((wx0 * wy0) * gzl(0) + (ox * wy0) * gzl(1))
            + ((wx0 * oy) * gzl(2) + (ox * oy) * gzl(3));
        let (nx, ny, nz) = (-gx, -gy, -gz);
        let len = ((nx * nx + ny * ny) + nz * nz).sqrt();
        let ok = len > 0.0 && len < f32::INFINITY;
        out.normal[0][j] = if ok { nx / len } else { 0.0 };
        out.normal[1][j] = if ok { ny / len } else { 1.0 };
        out.normal[2][j] = if ok { nz / len } else { 0.0 };
        offset[0][j] = ox;
        offset[1][j] = oy;
        offset[2][j] = oz;
        out.pos[0][j] = ((first[0] + j as f32) + ox) * stud_scale;
        out.pos[1][j] = (first[1] + oy) * stud_scale;
        out.pos[2][j] = (first[2] + oz) * stud_scale;
    }
    (out, offset)
}

/// Little-endian `u16` at `w[i..i + 2]`, widened.
#[inline(always)]
fn u16_at(w: &[u8], i: usize) -> u64 {
    u16::from_le_bytes([w[i], w[i + 1]]) as u64
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
