//! The outline of a block of cells as line segments: the edges of the
//! outer faces of its solid cells (those [`Cell::is_inside`]), so a preview
//! shows the shape the cells make, not only their bounding box. Used for the
//! paste preview: built once per clipboard (and turn), then moved with the
//! cursor by an offset.

use glam::{IVec3, Vec3};
use rustc_hash::FxHashMap;

use crate::terrain::editing::region::Clipboard;
use crate::terrain::storage::cell::Cell;
use crate::terrain::storage::coords::CELL_SIZE_STUDS;

/// At most this many segments are kept: beyond it, only crease edges
/// (where two outer faces meet at an angle) are drawn, and past that the
/// outline stops adding edges.
pub const MAX_OUTLINE_SEGMENTS: usize = 400_000;

/// Line segments outlining the solid cells of a block, in studs relative to
/// the block's minimum corner.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CellOutline {
    /// Segment end points, studs from the block's minimum corner.
    pub segments_studs: Vec<[Vec3; 2]>,
    /// Solid cells in the block.
    pub solid_cells: usize,
    /// The smallest box holding every solid cell, cells from the block's
    /// minimum corner (min inclusive, max exclusive); `None` when no cell is solid.
    pub solid_bounds_cells: Option<(IVec3, IVec3)>,
    /// True when the block had too many edges and only creases are drawn.
    pub creases_only: bool,
    /// True when even the creases were cut at [`MAX_OUTLINE_SEGMENTS`].
    pub truncated: bool,
}

/// A cell edge: its lower end (cells) and its direction axis (0, 1, 2).
type EdgeKey = (IVec3, u8);

/// Per edge: a bit per outer-face normal touching it (bit `2·axis + max_side`).
type EdgeNormals = FxHashMap<EdgeKey, u8>;

/// The outline of `clipboard` turned `quarter_turns` × 90° about +Y
/// (as [`Clipboard::rotated`] turns it, so it matches a paste).
pub fn clipboard_outline(clipboard: &Clipboard, quarter_turns: u8) -> CellOutline {
    let turned = clipboard.rotated(quarter_turns);
    outline(turned.size(), |c| turned.get(c))
}

/// The outline of a block of `size` cells whose cell at local `c` is
/// `cell(c)`: every edge of a face between a solid cell and a non-solid one
/// (or the outside of the block), each edge once.
pub fn outline(size: IVec3, cell: impl Fn(IVec3) -> Cell) -> CellOutline {
    let inside =
        |c: IVec3| c.cmpge(IVec3::ZERO).all() && c.cmplt(size).all() && cell(c).is_inside();
    let mut edges: EdgeNormals = FxHashMap::default();
    let mut solid_cells = 0usize;
    let mut bounds: Option<(IVec3, IVec3)> = None;
    for z in 0..size.z.max(0) {
        for y in 0..size.y.max(0) {
            for x in 0..size.x.max(0) {
                let c = IVec3::new(x, y, z);
                if !inside(c) {
                    continue;
                }
                solid_cells += 1;
                bounds = Some(match bounds {
                    None => (c, c + IVec3::ONE),
                    Some((lo, hi)) => (lo.min(c), hi.max(c + IVec3::ONE)),
                });
                for axis in 0..3usize {
                    for max_side in [false, true] {
                        let mut n = IVec3::ZERO;
                        n[axis] = if max_side { 1 } else { -1 };
                        if inside(c + n) {
                            continue;
                        }
                        add_face_edges(&mut edges, c, axis, max_side);
                    }
                }
            }
        }
    }
    let s = CELL_SIZE_STUDS;
    let to_segment = |(lo, axis): &EdgeKey| {
        let mut hi = *lo;
        hi[*axis as usize] += 1;
        [lo.as_vec3() * s, hi.as_vec3() * s]
    };
    let creases_only = edges.len() > MAX_OUTLINE_SEGMENTS;
    let mut keys: Vec<(&EdgeKey, &u8)> = edges
        .iter()
        .filter(|(_, normals)| !creases_only || !is_flat(**normals))
        .collect();
    // A stable order, so the same clipboard always gives the same lines.
    keys.sort_unstable_by_key(|((p, a), _)| (p.z, p.y, p.x, *a));
    let truncated = keys.len() > MAX_OUTLINE_SEGMENTS;
    keys.truncate(MAX_OUTLINE_SEGMENTS);
    CellOutline {
        segments_studs: keys.into_iter().map(|(k, _)| to_segment(k)).collect(),
        solid_cells,
        solid_bounds_cells: bounds,
        creases_only,
        truncated,
    }
}

/// True when every outer face touching an edge has the same normal (the
/// edge lies inside a flat patch).
fn is_flat(normals: u8) -> bool {
    normals.count_ones() == 1
}

/// Records the 4 edges of the face of cell `c` on `axis` (`max_side` for the
/// face at `c[axis] + 1`).
fn add_face_edges(edges: &mut EdgeNormals, c: IVec3, axis: usize, max_side: bool) {
    let mut base = c;
    if max_side {
        base[axis] += 1;
    }
    let bit = 1u8 << (2 * axis + usize::from(max_side));
    let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
    let mut du = IVec3::ZERO;
    du[u] = 1;
    let mut dv = IVec3::ZERO;
    dv[v] = 1;
    for (start, dir) in [(base, v), (base + du, v), (base, u), (base + dv, u)] {
        *edges.entry((start, dir as u8)).or_insert(0) |= bit;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::cell::Material;

    fn block(size: IVec3, solid: impl Fn(IVec3) -> bool) -> CellOutline {
        outline(size, |c| {
            if solid(c) {
                Cell::full(Material::ROCK)
            } else {
                Cell::EMPTY
            }
        })
    }

    #[test]
    fn one_cell_is_a_cube_of_twelve_edges() {
        let o = block(IVec3::ONE, |_| true);
        assert_eq!(o.segments_studs.len(), 12);
        assert_eq!(o.solid_cells, 1);
        assert_eq!(o.solid_bounds_cells, Some((IVec3::ZERO, IVec3::ONE)));
        for [a, b] in &o.segments_studs {
            assert_eq!((*b - *a).length(), 4.0);
            assert!(a.cmpge(Vec3::ZERO).all() && b.cmple(Vec3::splat(4.0)).all());
        }
    }

    #[test]
    fn a_slab_draws_every_outer_face_edge_once() {
        // 2 × 1 × 1 cells: the shared face is inside, so 12 + 8 = 20 edges
        // (the long top and bottom edges are split at the middle).
        let o = block(IVec3::new(2, 1, 1), |_| true);
        assert_eq!(o.segments_studs.len(), 20);
        let mut seen = std::collections::HashSet::new();
        for [a, b] in &o.segments_studs {
            assert!(seen.insert((
                a.to_array().map(f32::to_bits),
                b.to_array().map(f32::to_bits)
            )));
        }
    }

    #[test]
    fn an_l_shape_is_not_its_bounding_box() {
        // A 3 × 2 × 1 block with the top-right cell empty: the step shows.
        let o = block(IVec3::new(3, 2, 1), |c| !(c.x == 2 && c.y == 1));
        assert_eq!(o.solid_cells, 5);
        assert_eq!(
            o.solid_bounds_cells,
            Some((IVec3::ZERO, IVec3::new(3, 2, 1)))
        );
        // The empty cell's centre (10, 6) studs is outside; the edge along z
        // at the inner corner of the step (8, 4) exists.
        let has_z_edge_at = |x: f32, y: f32| {
            o.segments_studs.iter().any(|[a, b]| {
                a.x == x && a.y == y && b.x == x && b.y == y && a.z == 0.0 && b.z == 4.0
            })
        };
        assert!(has_z_edge_at(8.0, 4.0));
        assert!(has_z_edge_at(12.0, 4.0));
        assert!(!has_z_edge_at(12.0, 8.0), "the empty corner has no edge");
    }

    #[test]
    fn water_and_thin_cells_are_not_solid() {
        let o = outline(IVec3::new(3, 1, 1), |c| match c.x {
            0 => Cell::full(Material::WATER),
            1 => Cell::new(Material::ROCK, 100),
            _ => Cell::new(Material::ROCK, 200),
        });
        assert_eq!(o.solid_cells, 1);
        assert_eq!(
            o.solid_bounds_cells,
            Some((IVec3::new(2, 0, 0), IVec3::new(3, 1, 1)))
        );
        assert!(block(IVec3::splat(2), |_| false).segments_studs.is_empty());
    }

    #[test]
    fn flat_patches_lose_their_inner_edges_in_crease_mode() {
        let flat = |normals: u8| is_flat(normals);
        assert!(flat(0b0000_1000));
        assert!(!flat(0b0000_1010));
    }
}
