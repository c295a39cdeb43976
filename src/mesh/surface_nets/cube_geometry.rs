//! Pass 1 of the extraction: the geometry of surface cubes. Which cubes are
//! mixed (from the per-row inside bits), where each cube edge crosses 0.5,
//! and the vertex offset, normal and position of 8 consecutive cubes at
//! once, one branch-free IEEE-754 formula per lane. The collision mesher
//! shares [`mixed_cubes`] and [`edge`] so its vertices are bit-identical.

/// Cubes evaluated together in pass 1: consecutive cubes along x.
pub(super) const LANES: usize = 8;

/// The 32 samples the geometry of one cube reads, as offsets from the
/// sample at `(-1, -1, -1)` relative to the cube's min corner:
///
/// - `0..8`: the corners, `i = x + 2y + 4z`;
/// - `8..12` / `12..16`: x lines, samples at x = -1 / x = 2, line `l = y + 2z`;
/// - `16..20` / `20..24`: y lines, samples at y = -1 / y = 2, line `l = x + 2z`;
/// - `24..28` / `28..32`: z lines, samples at z = -1 / z = 2, line `l = x + 2y`.
///
/// The last one is the largest.
pub(super) const fn sample_offsets(sy: usize, sz: usize) -> [usize; 32] {
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
pub(super) type BatchOffsets = [[f32; LANES]; 3];

/// Geometry of one batch of cubes, per lane (lanes without a surface cube
/// hold garbage).
#[derive(Clone, Debug)]
pub(super) struct BatchGeometry {
    /// Outward unit normal.
    pub(super) normal: [[f32; LANES]; 3],
    /// Vertex position in chunk-local studs.
    pub(super) pos: [[f32; LANES]; 3],
    /// Chunk-local min-corner sample of each lane's cube, `[axis][lane]`.
    pub(super) local: [[i8; LANES]; 3],
}

/// [`sample_offsets`] of a staged batch: sample `k` of lane `j` at
/// `8k + j`, the layout [`evaluate_gathered`](super::Scratch) writes.
pub(super) const STAGED_OFFSETS: [usize; 32] = {
    let mut o = [0usize; 32];
    let mut k = 0;
    while k < 32 {
        o[k] = k * LANES;
        k += 1;
    }
    o
};

/// Bit `id` of lane `j` set when one of the lane's 8 corner samples (the
/// first 8 of `offsets`) has material `id` (below 32) and solid occupancy.
#[inline(always)]
pub(super) fn material_masks(solid: &[u8], material: &[u8], offsets: &[usize; 32]) -> [u32; LANES] {
    let mut masks = [0u32; LANES];
    for (j, mask) in masks.iter_mut().enumerate() {
        for &o in &offsets[..8] {
            let id = u32::from(material[o + j]);
            let contributes = (solid[o + j] != 0) & (id < 32);
            *mask |= u32::from(contributes) << (id & 31);
        }
    }
    masks
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
/// [`sample_offsets`] or [`STAGED_OFFSETS`]); lane `j` of the batch is the
/// cube at chunk-local min corner `local[..][j]`.
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
pub(super) fn batch_geometry(
    window: &[u8],
    offsets: &[usize; 32],
    local: [[i32; LANES]; 3],
    stud_scale: f32,
) -> (BatchGeometry, BatchOffsets) {
    let mut out = BatchGeometry {
        normal: [[0.0; LANES]; 3],
        pos: [[0.0; LANES]; 3],
        local: local.map(|axis| axis.map(|c| c as i8)),
    };
    let mut offset = [[0.0; LANES]; 3];
    // Cube centres: small integers plus 0.5, exact in f32.
    let first = local.map(|axis| axis.map(|c| c as f32 + 0.5));
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
        out.pos[0][j] = (first[0][j] + ox) * stud_scale;
        out.pos[1][j] = (first[1][j] + oy) * stud_scale;
        out.pos[2][j] = (first[2][j] + oz) * stud_scale;
    }
    (out, offset)
}
