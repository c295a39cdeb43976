//! The shoreline fade of a water sheet: which of its vertices lie on the
//! sheet's open outline, where the water shader fades the surface out.

use crate::mesh::water::WaterMesh;

/// Per vertex of `mesh`: 0 on the top sheet's open outline, 1 elsewhere.
///
/// The sheet reaches one cell past the water over the shore so the terrain
/// cuts its outline; where a beach is flatter than that, the sheet instead
/// ends in the air a little above the bed, along cell edges. The water
/// shader fades its alpha to 0 toward this outline (over one cell), so such
/// an end reads as a soft shoreline instead of a staircase.
///
/// The outline is every sheet edge used by one sheet triangle, except edges
/// in the chunk's border planes (the sheet goes on in the neighbour) and
/// edges shared with a side face (the lip of a waterfall stays opaque).
/// Vertices are matched by exact position: corners are computed from cells
/// alone, so every quad around a corner agrees. A vertex's value depends
/// only on the edges at it, so neighbouring chunks agree on shared vertices.
pub fn outline_fade(mesh: &WaterMesh) -> Vec<f32> {
    use rustc_hash::{FxHashMap, FxHashSet};
    type Key = [u32; 3];
    let key = |i: u32| -> Key {
        let p = mesh.positions[i as usize];
        [p.x.to_bits(), p.y.to_bits(), p.z.to_bits()]
    };
    let edge = |a: Key, b: Key| if a <= b { (a, b) } else { (b, a) };
    let is_sheet = |i: u32| mesh.normals.get(i as usize).is_some_and(|n| n.y > 0.5);
    let mut sheet_edges: FxHashMap<(Key, Key), u32> = FxHashMap::default();
    let mut side_edges: FxHashSet<(Key, Key)> = FxHashSet::default();
    for tri in mesh.indices.chunks_exact(3) {
        if tri.iter().any(|&i| i as usize >= mesh.positions.len()) {
            continue;
        }
        let sheet = tri.iter().all(|&i| is_sheet(i));
        for k in 0..3 {
            let e = edge(key(tri[k]), key(tri[(k + 1) % 3]));
            if sheet {
                *sheet_edges.entry(e).or_default() += 1;
            } else {
                side_edges.insert(e);
            }
        }
    }
    let border = crate::terrain::storage::coords::CHUNK_SIZE_STUDS;
    let in_border_plane = |(a, b): (Key, Key)| {
        let (ax, az) = (f32::from_bits(a[0]), f32::from_bits(a[2]));
        let (bx, bz) = (f32::from_bits(b[0]), f32::from_bits(b[2]));
        [0.0, border]
            .iter()
            .any(|&v| (ax == v && bx == v) || (az == v && bz == v))
    };
    let mut outline: FxHashSet<Key> = FxHashSet::default();
    for (&e, &count) in &sheet_edges {
        if count == 1 && !in_border_plane(e) && !side_edges.contains(&e) {
            outline.insert(e.0);
            outline.insert(e.1);
        }
    }
    (0..mesh.positions.len() as u32)
        .map(|i| {
            if is_sheet(i) && outline.contains(&key(i)) {
                0.0
            } else {
                1.0
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    /// A sheet of `w × d` cell quads (4 unshared vertices each, like the
    /// mesher's) with its lower-left cell corner at `origin` (cells).
    fn sheet(origin: (i32, i32), w: i32, d: i32) -> WaterMesh {
        let mut m = WaterMesh::default();
        for z in 0..d {
            for x in 0..w {
                let base = m.positions.len() as u32;
                for (dx, dz) in [(0, 0), (1, 0), (1, 1), (0, 1)] {
                    let (cx, cz) = (origin.0 + x + dx, origin.1 + z + dz);
                    m.positions
                        .push(Vec3::new(cx as f32 * 4.0, 40.0, cz as f32 * 4.0));
                    m.normals.push(Vec3::Y);
                    m.wave_fade.push(0.0);
                }
                m.indices
                    .extend_from_slice(&[base, base + 3, base + 2, base, base + 2, base + 1]);
            }
        }
        m
    }

    fn fade_at(m: &WaterMesh, fade: &[f32], cell_corner: (i32, i32)) -> f32 {
        let p = Vec3::new(cell_corner.0 as f32 * 4.0, 40.0, cell_corner.1 as f32 * 4.0);
        let values: Vec<f32> = (0..m.positions.len())
            .filter(|&i| m.positions[i] == p)
            .map(|i| fade[i])
            .collect();
        assert!(!values.is_empty(), "no vertex at {cell_corner:?}");
        assert!(
            values.iter().all(|v| *v == values[0]),
            "vertices at one corner agree"
        );
        values[0]
    }

    #[test]
    fn outline_is_zero_on_the_open_edge_only() {
        // A 4 × 4 pond in the chunk's interior: its rim is the outline.
        let m = sheet((10, 10), 4, 4);
        let f = outline_fade(&m);
        assert_eq!(fade_at(&m, &f, (10, 10)), 0.0);
        assert_eq!(fade_at(&m, &f, (12, 14)), 0.0);
        assert_eq!(fade_at(&m, &f, (12, 12)), 1.0);
        assert_eq!(fade_at(&m, &f, (11, 13)), 1.0);
    }

    #[test]
    fn chunk_borders_are_not_an_outline() {
        // Water running over the chunk's x = 0 border and on.
        let m = sheet((0, 10), 3, 4);
        let f = outline_fade(&m);
        assert_eq!(
            fade_at(&m, &f, (0, 12)),
            1.0,
            "border vertex inside the sheet"
        );
        assert_eq!(
            fade_at(&m, &f, (0, 10)),
            0.0,
            "where the real outline meets the border"
        );
        assert_eq!(fade_at(&m, &f, (3, 12)), 0.0);
    }

    #[test]
    fn waterfall_lips_are_not_an_outline() {
        let mut m = sheet((10, 10), 2, 3);
        // Side faces below the sheet's whole +x edge (x = 12 cells).
        let base = m.positions.len() as u32;
        for z in 10..13 {
            let b = m.positions.len() as u32;
            for (dz, y) in [(0, 30.0), (1, 30.0), (1, 40.0), (0, 40.0)] {
                m.positions.push(Vec3::new(48.0, y, (z + dz) as f32 * 4.0));
                m.normals.push(Vec3::X);
                m.wave_fade.push(0.0);
            }
            m.indices
                .extend_from_slice(&[b, b + 1, b + 2, b, b + 2, b + 3]);
        }
        let f = outline_fade(&m);
        assert_eq!(fade_at(&m, &f, (12, 11)), 1.0, "mid-lip stays opaque");
        assert_eq!(fade_at(&m, &f, (10, 11)), 0.0, "the open -x edge fades");
        assert!(
            f[base as usize..].iter().all(|v| *v == 1.0),
            "side faces never fade"
        );
    }
}
