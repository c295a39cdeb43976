//! Audits of the shown low-poly meshes: the triangle
//! census per chunk, the lattice, winding, downward faces and non-finite
//! vertices, and the watertightness of every cell face between two shown
//! columns: where two neighbouring cells show tops at different heights,
//! the walls on their shared face must cover the whole drop, exactly (the
//! heights come from one global lattice, so "bit-identical shared edges"
//! means no gap at all, not a small one).
//!
//! The low-poly view's chunks are not Surface Nets meshes, so the vertex
//! matching of [`super::seam_audit`] does not apply to them; this audit
//! looks at the surface they draw instead, and works across chunks shown
//! at different levels too (decimated blocks meet full-detail ones).

use glam::{DVec3, IVec2, Vec3};
use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::mesh::ChunkMesh;
use crate::terrain::storage::coords::{
    CELL_SIZE_STUDS, CHUNK_SIZE_CELLS, CHUNK_SIZE_STUDS, ChunkCoord,
};

/// Largest gap between walls (or between a wall and a top) that still
/// counts as closed, studs: every height is a multiple of a terrace step
/// or a chunk boundary, so a true seam has no gap at all.
pub const GAP_TOLERANCE_STUDS: f64 = 1e-3;

/// Cells per chunk side, as an index range length.
const SIDE: usize = CHUNK_SIZE_CELLS as usize;

/// Minimum, mean and maximum triangles over the audited chunks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct TriangleCensus {
    /// Fewest triangles of a non-empty chunk mesh.
    pub min: usize,
    /// Mean triangles per non-empty chunk mesh.
    pub mean: f64,
    /// Most triangles of a chunk mesh.
    pub max: usize,
}

/// A place where the low-poly surface is open: two neighbouring cells show
/// tops at different heights and the walls between them leave a gap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LowPolyCrack {
    /// The chunk whose column holds the lower-x (or lower-z) cell, at the
    /// gap's height.
    pub chunk: ChunkCoord,
    /// The chunk across the face, at the gap's height.
    pub neighbour: ChunkCoord,
    /// The middle of the gap on the shared face, world studs.
    pub pos_world: DVec3,
}

/// What the audit found over every shown low-poly chunk mesh.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LowPolyAudit {
    /// Low-poly chunk meshes audited (non-empty ones).
    pub chunks: usize,
    /// Triangles over them.
    pub triangles: usize,
    /// Triangles per chunk mesh.
    pub triangles_per_chunk: TriangleCensus,
    /// Vertices whose world x or z is not a whole cell (4 studs), or whose
    /// y is neither a whole terrace step nor a chunk layer boundary.
    pub off_lattice_vertices: usize,
    /// Triangles whose winding disagrees with their stored face normal (or
    /// whose normal is not a unit axis).
    pub winding_errors: usize,
    /// Triangles facing down: a heightfield has none, so a view from below
    /// shows nothing of the tops (they are back faces from there).
    pub downward_faces: usize,
    /// Vertices with a NaN or infinite coordinate.
    pub non_finite_vertices: usize,
    /// Cell faces between two shown columns whose tops differ, checked for
    /// a gap.
    pub seam_faces: usize,
    /// Of those, the faces on a chunk column boundary (the shared edges of
    /// two meshes).
    pub chunk_seam_faces: usize,
    /// Faces whose walls leave a gap (0 when the surface is watertight).
    pub cracks: usize,
    /// Where the gaps are (the first [`MAX_REPORTED_CRACKS`]).
    #[serde(skip)]
    pub crack_sites: Vec<LowPolyCrack>,
}

/// Most crack sites kept for markers.
pub const MAX_REPORTED_CRACKS: usize = 4096;

/// Tops and walls of one chunk column (all its shown chunks together),
/// column-local cells.
struct ColumnSurface {
    /// Highest top over each cell, world studs (`-inf` where none), index
    /// `z * 32 + x`.
    tops: Vec<f64>,
    /// World y-intervals of the walls on each x-facing cell face: plane
    /// `x` (0..=32) × row `z`, index `x * 32 + z`.
    walls_x: Vec<Vec<(f64, f64)>>,
    /// The same for z-facing faces: plane `z` × row `x`.
    walls_z: Vec<Vec<(f64, f64)>>,
    /// The shown chunk layers (for naming a crack's chunk).
    layers: Vec<i32>,
}

impl ColumnSurface {
    fn new() -> Self {
        ColumnSurface {
            tops: vec![f64::NEG_INFINITY; SIDE * SIDE],
            walls_x: vec![Vec::new(); (SIDE + 1) * SIDE],
            walls_z: vec![Vec::new(); (SIDE + 1) * SIDE],
            layers: Vec::new(),
        }
    }
}

/// Audits every low-poly mesh among `meshes` (chunk coordinate and mesh;
/// Surface Nets meshes are skipped). `None` when there is none.
pub fn audit<'a>(
    meshes: impl IntoIterator<Item = (ChunkCoord, &'a ChunkMesh)>,
) -> Option<LowPolyAudit> {
    let mut out = LowPolyAudit::default();
    let mut columns: FxHashMap<IVec2, ColumnSurface> = FxHashMap::default();
    let mut min_tris = usize::MAX;
    for (coord, mesh) in meshes {
        let crate::mesh::MeshStyle::LowPoly { step_cells } = mesh.style else {
            continue;
        };
        if mesh.indices.is_empty() {
            continue;
        }
        let tris = mesh.indices.len() / 3;
        out.chunks += 1;
        out.triangles += tris;
        min_tris = min_tris.min(tris);
        out.triangles_per_chunk.max = out.triangles_per_chunk.max.max(tris);
        audit_vertices(coord, mesh, step_cells, &mut out);
        let column = columns
            .entry(IVec2::new(coord.0.x, coord.0.z))
            .or_insert_with(ColumnSurface::new);
        column.layers.push(coord.0.y);
        add_faces(coord, mesh, column, &mut out);
    }
    if out.chunks == 0 {
        return None;
    }
    out.triangles_per_chunk.min = min_tris;
    out.triangles_per_chunk.mean = out.triangles as f64 / out.chunks as f64;
    check_seams(&columns, &mut out);
    Some(out)
}

/// The lattice and finiteness of every vertex.
fn audit_vertices(coord: ChunkCoord, mesh: &ChunkMesh, step_cells: f32, out: &mut LowPolyAudit) {
    let origin = coord.origin_world();
    let cell = f64::from(CELL_SIZE_STUDS);
    let step_studs = f64::from(step_cells) * cell;
    let layer = f64::from(CHUNK_SIZE_STUDS);
    let on =
        |v: f64, unit: f64| (v / unit - (v / unit).round()).abs() * unit <= GAP_TOLERANCE_STUDS;
    for p in &mesh.positions {
        if !p.is_finite() {
            out.non_finite_vertices += 1;
            continue;
        }
        let w = origin + p.as_dvec3();
        let xz_on = w.x / cell == (w.x / cell).round() && w.z / cell == (w.z / cell).round();
        if !xz_on || !(on(w.y, step_studs) || on(w.y, layer)) {
            out.off_lattice_vertices += 1;
        }
    }
}

/// Records each triangle's top or wall in `column`, counting winding
/// errors and downward faces.
fn add_faces(
    coord: ChunkCoord,
    mesh: &ChunkMesh,
    column: &mut ColumnSurface,
    out: &mut LowPolyAudit,
) {
    let floor_studs = coord.origin_world().y;
    for tri in mesh.indices.chunks_exact(3) {
        let [a, b, c] = [0, 1, 2].map(|i| mesh.positions[tri[i] as usize]);
        if !(a.is_finite() && b.is_finite() && c.is_finite()) {
            continue;
        }
        let n = mesh.normals[tri[0] as usize];
        let axis_unit = n.abs().max_element() == 1.0 && n.length() == 1.0;
        if !axis_unit || (b - a).cross(c - a).dot(n) <= 0.0 {
            out.winding_errors += 1;
            continue;
        }
        let local = [a, b, c].map(|p| p / CELL_SIZE_STUDS);
        if n.y == 1.0 {
            add_top(&local, floor_studs + f64::from(a.y), &mut column.tops);
        } else if n.y == -1.0 {
            out.downward_faces += 1;
        } else if n.x != 0.0 {
            // A wall on plane x: rows run along z, heights along y.
            let plane = local[0].x.round() as usize;
            let yz = local.map(|p| (p.z, p.y));
            add_wall(plane, yz, floor_studs, &mut column.walls_x);
        } else {
            let plane = local[0].z.round() as usize;
            let yx = local.map(|p| (p.x, p.y));
            add_wall(plane, yx, floor_studs, &mut column.walls_z);
        }
    }
}

/// Raises the top of every cell whose centre the flat triangle `t`
/// (column-local cells) covers to `y_world`.
fn add_top(t: &[Vec3; 3], y_world: f64, tops: &mut [f64]) {
    let p = t.map(|v| (v.x, v.z));
    let lo = |i: usize| {
        p.iter()
            .map(|q| [q.0, q.1][i])
            .fold(f32::INFINITY, f32::min)
    };
    let hi = |i: usize| {
        p.iter()
            .map(|q| [q.0, q.1][i])
            .fold(f32::NEG_INFINITY, f32::max)
    };
    let cells =
        |i: usize| (lo(i).floor().max(0.0) as usize)..(hi(i).ceil().min(SIDE as f32) as usize);
    let edge = |a: (f32, f32), b: (f32, f32), q: (f32, f32)| {
        (b.0 - a.0) * (q.1 - a.1) - (b.1 - a.1) * (q.0 - a.0)
    };
    for z in cells(1) {
        for x in cells(0) {
            let q = (x as f32 + 0.5, z as f32 + 0.5);
            let e = [
                edge(p[0], p[1], q),
                edge(p[1], p[2], q),
                edge(p[2], p[0], q),
            ];
            // A centre on the quad's diagonal belongs to both triangles
            // (the max makes that harmless); centres never lie on its sides.
            let inside = e.iter().all(|v| *v >= 0.0) || e.iter().all(|v| *v <= 0.0);
            if inside {
                let top = &mut tops[z * SIDE + x];
                *top = top.max(y_world);
            }
        }
    }
}

/// Adds the y-interval the wall triangle `t` (points as (row, height),
/// column-local cells) spans at each row centre it crosses on `plane`.
fn add_wall(plane: usize, t: [(f32, f32); 3], floor_studs: f64, walls: &mut [Vec<(f64, f64)>]) {
    if plane > SIDE {
        return;
    }
    let lo = t.iter().map(|p| p.0).fold(f32::INFINITY, f32::min);
    let hi = t.iter().map(|p| p.0).fold(f32::NEG_INFINITY, f32::max);
    let rows = (lo.floor().max(0.0) as usize)..(hi.ceil().min(SIDE as f32) as usize);
    for row in rows {
        let r = row as f64 + 0.5;
        let mut span = (f64::INFINITY, f64::NEG_INFINITY);
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            let (ar, br) = (f64::from(a.0), f64::from(b.0));
            if (ar - r) * (br - r) > 0.0 || ar == br {
                continue;
            }
            let y = f64::from(a.1) + (f64::from(b.1) - f64::from(a.1)) * (r - ar) / (br - ar);
            span = (span.0.min(y), span.1.max(y));
        }
        if span.0 < span.1 {
            let cell = f64::from(CELL_SIZE_STUDS);
            walls[plane * SIDE + row]
                .push((floor_studs + span.0 * cell, floor_studs + span.1 * cell));
        }
    }
}

/// Checks every face between two horizontally neighbouring cells of shown
/// columns: the walls on it must cover the drop between their tops.
fn check_seams(columns: &FxHashMap<IVec2, ColumnSurface>, out: &mut LowPolyAudit) {
    for (&key, column) in columns {
        for (axis, step) in [(0usize, IVec2::X), (1, IVec2::Y)] {
            let next = columns.get(&(key + step));
            for plane in 1..=SIDE {
                for row in 0..SIDE {
                    let (here, there, far_walls) = if plane < SIDE {
                        (
                            cell_top(column, axis, plane - 1, row),
                            cell_top(column, axis, plane, row),
                            None,
                        )
                    } else {
                        let Some(next) = next else { continue };
                        (
                            cell_top(column, axis, SIDE - 1, row),
                            cell_top(next, axis, 0, row),
                            Some(face_walls(next, axis, 0, row)),
                        )
                    };
                    if !here.is_finite() || !there.is_finite() || here == there {
                        continue;
                    }
                    out.seam_faces += 1;
                    if far_walls.is_some() {
                        out.chunk_seam_faces += 1;
                    }
                    let mut spans = face_walls(column, axis, plane, row).to_vec();
                    spans.extend_from_slice(far_walls.unwrap_or(&[]));
                    if let Some(gap_y) = first_gap(&mut spans, here.min(there), here.max(there)) {
                        out.cracks += 1;
                        if out.crack_sites.len() < MAX_REPORTED_CRACKS {
                            out.crack_sites
                                .push(crack_at(key, column, axis, plane, row, gap_y));
                        }
                    }
                }
            }
        }
    }
}

/// The top of the cell at `plane_cell` across and `row` along (`axis` 0:
/// x across, z along; 1: z across, x along).
fn cell_top(column: &ColumnSurface, axis: usize, plane_cell: usize, row: usize) -> f64 {
    let (x, z) = if axis == 0 {
        (plane_cell, row)
    } else {
        (row, plane_cell)
    };
    column.tops[z * SIDE + x]
}

/// The wall intervals on face `plane` × `row` of `column`.
fn face_walls(column: &ColumnSurface, axis: usize, plane: usize, row: usize) -> &[(f64, f64)] {
    let walls = if axis == 0 {
        &column.walls_x
    } else {
        &column.walls_z
    };
    &walls[plane * SIDE + row]
}

/// The middle of the first part of `[lo, hi]` that `spans` leave
/// uncovered (beyond [`GAP_TOLERANCE_STUDS`]), if any.
fn first_gap(spans: &mut [(f64, f64)], lo: f64, hi: f64) -> Option<f64> {
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut covered = lo;
    for &(a, b) in spans.iter() {
        if a > covered + GAP_TOLERANCE_STUDS {
            break;
        }
        covered = covered.max(b);
    }
    let end = spans
        .iter()
        .map(|s| s.0)
        .find(|a| *a > covered + GAP_TOLERANCE_STUDS)
        .unwrap_or(hi)
        .min(hi);
    (covered + GAP_TOLERANCE_STUDS < hi).then_some(0.5 * (covered + end))
}

/// The crack record for a gap at `y_world` on face `plane` × `row` of the
/// column at `key`.
fn crack_at(
    key: IVec2,
    column: &ColumnSurface,
    axis: usize,
    plane: usize,
    row: usize,
    y_world: f64,
) -> LowPolyCrack {
    let cell = f64::from(CELL_SIZE_STUDS);
    let origin = DVec3::new(f64::from(key.x), 0.0, f64::from(key.y)) * f64::from(CHUNK_SIZE_STUDS);
    let (across, along) = (plane as f64 * cell, (row as f64 + 0.5) * cell);
    let offset = if axis == 0 {
        DVec3::new(across, y_world, along)
    } else {
        DVec3::new(along, y_world, across)
    };
    let layer = (y_world / f64::from(CHUNK_SIZE_STUDS)).floor() as i32;
    let layer = column
        .layers
        .iter()
        .copied()
        .min_by_key(|l| (l - layer).abs())
        .unwrap_or(layer);
    let chunk = ChunkCoord::new(key.x, layer, key.y);
    let neighbour = if plane < SIDE {
        chunk
    } else if axis == 0 {
        ChunkCoord::new(key.x + 1, layer, key.y)
    } else {
        ChunkCoord::new(key.x, layer, key.y + 1)
    };
    LowPolyCrack {
        chunk,
        neighbour,
        pos_world: origin + offset,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_is_found_between_spans_and_a_cover_is_not() {
        assert_eq!(first_gap(&mut [(0.0, 4.0), (4.0, 8.0)], 0.0, 8.0), None);
        assert_eq!(first_gap(&mut [(4.0, 8.0), (-4.0, 4.0)], 0.0, 8.0), None);
        assert_eq!(
            first_gap(&mut [(0.0, 4.0), (6.0, 8.0)], 0.0, 8.0),
            Some(5.0)
        );
        assert_eq!(first_gap(&mut [(0.0, 4.0)], 0.0, 8.0), Some(6.0));
        assert_eq!(first_gap(&mut [], 0.0, 8.0), Some(4.0));
    }
}
