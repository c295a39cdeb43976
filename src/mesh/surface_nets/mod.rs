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
//! turns into SIMD; a window of a row with at most [`SPARSE_LANES`] surface
//! cubes is not evaluated in place but its cubes are copied into staged
//! batches shared with other rows, so few lanes are wasted. Pass 1 also
//! marks the cube rows holding surface cubes, and pass 2 visits only those. On x86_64 the whole extraction is also
//! compiled for AVX2 and chosen at run time; every lane operation is a single
//! IEEE-754 operation (no fused multiply-add, no approximate reciprocal), so
//! both builds give bit-identical results, which a test checks. All buffers
//! are owned by the mesher and reused.

mod cube_geometry;
mod quad_emitter;

use glam::{IVec3, Vec3};

use cube_geometry::{
    BatchGeometry, BatchOffsets, LANES, STAGED_OFFSETS, batch_geometry, material_masks,
    sample_offsets,
};
pub(crate) use cube_geometry::{edge, mixed_cubes};
use quad_emitter::{Emitter, corner_word, vertex_set};

use super::chunk_mesh::ChunkMesh;
use super::field::{Neighbourhood, PAD, PADDED_L0, SampleField};
use super::local_palette::LocalPalette;
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

/// A run of at most this many surface cubes in a batch window is not
/// evaluated in place but queued for a staged batch (see
/// [`Scratch::evaluate_row`]).
const SPARSE_LANES: u32 = 3;

/// Per-call scratch memory of the extraction.
#[derive(Debug)]
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
    /// Surface cubes queued for the next staged batch: padded min-corner
    /// index and chunk-local min corner `[axis][lane]`.
    pending: [u32; LANES],
    pending_local: [[i32; LANES]; 3],
    pending_len: usize,
    /// Windows with at most this many surface cubes are staged (tests set
    /// 0, never, and `LANES`, always, to compare both paths).
    sparse_lanes: u32,
    /// Per padded cube plane `cz`: bit `cy` set when the cube row `(cy, cz)`
    /// holds a surface cube. Pass 2 visits only those rows.
    surface_rows: Vec<u64>,
    /// The field renumbered to its local palette, for fields holding ids
    /// of 32 or more (allocated on first need).
    localized: Option<Box<SampleField>>,
}

impl Default for Scratch {
    fn default() -> Scratch {
        Scratch {
            cube_slot: Vec::new(),
            cubes: Vec::new(),
            batches: Vec::new(),
            batch_offsets: Vec::new(),
            vertices: Vec::new(),
            padded: [Vec::new(), Vec::new()],
            pending: [0; LANES],
            pending_local: [[0; LANES]; 3],
            pending_len: 0,
            sparse_lanes: SPARSE_LANES,
            surface_rows: Vec::new(),
            localized: None,
        }
    }
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
    /// Extracts the surface of `field` into `out` (already cleared), in
    /// the field's [`LocalPalette`] when it holds ids of 32 or more.
    fn extract(&mut self, field: &SampleField, options: MeshOptions, out: &mut ChunkMesh) {
        if !LocalPalette::needed(field) {
            self.extract_best(field, options, out);
            return;
        }
        // Allocated on first need only: most meshers never meet an id past 31.
        let mut local = self
            .localized
            .take()
            .unwrap_or_else(|| Box::new(SampleField::new(field.n)));
        if let Some(palette) = LocalPalette::localize(field, &mut local) {
            let start = out.material_ids.len();
            self.extract_best(&local, options, out);
            palette.restore(&mut out.material_ids[start..]);
            out.merged_materials = palette.merged_materials();
        }
        self.localized = Some(local);
    }

    /// Extracts with the best code the CPU runs (see the module docs).
    fn extract_best(&mut self, field: &SampleField, options: MeshOptions, out: &mut ChunkMesh) {
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
        self.surface_rows.clear();
        self.surface_rows.resize(dim, 0);
        self.pending_len = 0;
        for cz in PAD - 1..PAD + n {
            let mut surface_rows = 0u64;
            for cy in PAD - 1..PAD + n {
                let mixed = mixed_cubes(rows, dim, cy, cz) & cube_mask;
                if mixed != 0 {
                    surface_rows |= 1 << cy;
                    self.evaluate_row::<D>(
                        field,
                        [cy, cz],
                        mixed,
                        stud_scale,
                        options.keep_cube_offsets,
                    );
                }
            }
            self.surface_rows[cz] = surface_rows;
        }
        if self.pending_len != 0 {
            self.evaluate_staged::<D>(field, stud_scale, options.keep_cube_offsets);
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
        // A crossing edge in sample row (py, pz) is an edge of cube (py, pz)
        // (its min corner is the edge's lower sample), so only rows whose
        // cube row holds a surface cube can have one.
        let surface_rows = &self.surface_rows[..dim];
        for pz in PAD..PAD + n {
            let mut visit = surface_rows[pz] & own_mask;
            while visit != 0 {
                let py = visit.trailing_zeros() as usize;
                visit &= visit - 1;
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
            local.write([b.local[0][j], b.local[1][j], b.local[2][j]]);
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
        let (dim, offsets) = field_offsets::<D>(field);
        let (sy, sz) = (dim, dim * dim);
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
            if lanes.count_ones() <= self.sparse_lanes {
                // Few cubes: most lanes of a batch in place would be wasted.
                while lanes != 0 {
                    let j = lanes.trailing_zeros() as usize;
                    lanes &= lanes - 1;
                    self.queue_staged::<D>(field, [x0 + j, cy, cz], stud_scale, keep_offsets);
                }
                continue;
            }
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
                std::array::from_fn(|j| (x0 + j) as i32 - PAD as i32),
                [cy as i32 - PAD as i32; LANES],
                [cz as i32 - PAD as i32; LANES],
            ];
            let batch = self.batches.len();
            let (geometry, batch_offsets) = batch_geometry(w, &offsets, local, stud_scale);
            self.batches.push(geometry);
            if keep_offsets {
                self.batch_offsets.push(batch_offsets);
            }
            let masks = material_masks(w, mw, &offsets);
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

impl Scratch {
    /// Queues the surface cube with padded min corner `[x, cy, cz]` for a
    /// staged batch, evaluating the batch once it is full.
    #[inline(always)]
    fn queue_staged<const D: usize>(
        &mut self,
        field: &SampleField,
        [x, cy, cz]: [usize; 3],
        stud_scale: f32,
        keep_offsets: bool,
    ) {
        let dim = if D == 0 { field.dim } else { D };
        let j = self.pending_len;
        self.pending[j] = (x + dim * (cy + dim * cz)) as u32;
        for (axis, c) in [x, cy, cz].into_iter().enumerate() {
            self.pending_local[axis][j] = c as i32 - PAD as i32;
        }
        self.pending_len += 1;
        if self.pending_len == LANES {
            self.evaluate_staged::<D>(field, stud_scale, keep_offsets);
        }
    }

    /// Evaluates the queued cubes as one batch: each lane's 32 samples are
    /// copied into the lane-major layout of [`STAGED_OFFSETS`] first, so
    /// cubes of different rows share a batch. Lanes past the queue hold zero
    /// samples and garbage geometry that is never read.
    #[inline(always)]
    fn evaluate_staged<const D: usize>(
        &mut self,
        field: &SampleField,
        stud_scale: f32,
        keep_offsets: bool,
    ) {
        let (dim, offsets) = field_offsets::<D>(field);
        let (sy, sz) = (dim, dim * dim);
        // Samples of one cube: from (-1, -1, -1) to the last offset.
        let span = offsets[31] + 1;
        let count = self.pending_len;
        self.pending_len = 0;
        let mut solid = [0u8; 32 * LANES];
        let mut material = [0u8; 8 * LANES];
        for (j, &k) in self.pending[..count].iter().enumerate() {
            let base = k as usize - 1 - sy - sz;
            // In bounds: a queued cube's min corner is at least PAD - 1 and at
            // most PAD + n - 1 = dim - 3 on each axis, so its samples lie in
            // -1..=+2 of it, inside the padded field.
            let s = &field.solid[base..base + span];
            let m = &field.material[base..base + span];
            for (i, &o) in offsets.iter().enumerate() {
                solid[i * LANES + j] = s[o];
            }
            for (i, &o) in offsets[..8].iter().enumerate() {
                material[i * LANES + j] = m[o];
            }
        }
        let batch = self.batches.len();
        let (geometry, batch_offsets) =
            batch_geometry(&solid, &STAGED_OFFSETS, self.pending_local, stud_scale);
        self.batches.push(geometry);
        if keep_offsets {
            self.batch_offsets.push(batch_offsets);
        }
        let masks = material_masks(&solid, &material, &STAGED_OFFSETS);
        for (j, &k) in self.pending[..count].iter().enumerate() {
            self.cube_slot[k as usize] = self.cubes.len() as u32;
            self.cubes.push(Cube {
                mask: masks[j],
                first_key: NO_KEY,
                first_vertex: NO_SLOT,
                key: k,
                geo: (batch * LANES + j) as u32,
            });
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

/// The padded side of `field` (the constant `D` when not 0) and the 32
/// sample offsets of a cube in it.
#[inline(always)]
fn field_offsets<const D: usize>(field: &SampleField) -> (usize, [usize; 32]) {
    let dim = if D == 0 { field.dim } else { D };
    let offsets = if D == 0 {
        sample_offsets(dim, dim * dim)
    } else {
        const { sample_offsets(D, D * D) }
    };
    (dim, offsets)
}

#[cfg(test)]
mod tests;
