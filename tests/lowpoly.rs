//! The low-poly mesher: greedy tops, merged full-drop skirts,
//! watertight across chunk columns, every vertex on the global lattice,
//! counter-clockwise winding, no NaN.

use glam::{DVec3, IVec3, Vec3};
use strata::mesh::lowpoly::column_heightfield::{ColumnHeightfield, SIDE};
use strata::mesh::lowpoly::greedy_heightfield::{LowPolyMesh, mesh_low_poly};
use strata::terrain::storage::coords::{CELL_SIZE_STUDS, CHUNK_SIZE_CELLS};
use strata::terrain::{Cell, CellBox, ColumnCoord, Grid, Material};

/// A grid of `columns`² chunk columns whose cell column `(x, z)` is solid
/// up to `height(x, z)` cells (whole cells), grass on top of rock.
fn heightfield_grid(columns: i32, height: impl Fn(i32, i32) -> i32) -> Grid {
    let side = columns * CHUNK_SIZE_CELLS;
    let mut grid = Grid::new();
    grid.edit_region(
        CellBox::new(IVec3::ZERO, IVec3::new(side, 64, side)),
        |c, _| {
            let h = height(c.0.x, c.0.z);
            if c.0.y < h - 1 {
                Cell::full(Material::ROCK)
            } else if c.0.y == h - 1 {
                Cell::full(Material::GRASS)
            } else {
                Cell::EMPTY
            }
        },
    )
    .unwrap();
    grid
}

fn mesh(grid: &Grid, column: ColumnCoord) -> LowPolyMesh {
    let field = ColumnHeightfield::from_grid(grid, column, 1.0);
    let mut out = LowPolyMesh::default();
    mesh_low_poly(&field, &mut out);
    out
}

/// Area of each quad (4 vertices each) by its normal's axis: (tops, walls).
fn areas(m: &LowPolyMesh) -> (f64, f64) {
    let (mut tops, mut walls) = (0.0, 0.0);
    for q in m.positions.chunks_exact(4) {
        let (u, v) = (q[1] - q[0], q[2] - q[0]);
        let area = f64::from(u.cross(v).length());
        if u.cross(v).y.abs() > 0.0 {
            tops += area;
        } else {
            walls += area;
        }
    }
    (tops, walls)
}

#[test]
fn a_flat_world_is_one_top_per_chunk_column_and_walls_only_at_its_edge() {
    let grid = heightfield_grid(2, |_, _| 10);
    for (column, walls) in [
        (ColumnCoord::new(0, 0), 2),
        (ColumnCoord::new(1, 0), 2),
        (ColumnCoord::new(1, 1), 2),
    ] {
        let m = mesh(&grid, column);
        assert_eq!(m.top_quads, 1, "{column:?}");
        assert_eq!(
            m.skirt_quads, walls,
            "{column:?}: the world's two outer edges"
        );
        assert_eq!(m.triangle_count(), 2 * (1 + walls));
        // The top at 10 cells, 40 studs; the edge walls drop to y = 0.
        let top_y = m.positions[0].y;
        assert_eq!(top_y, 10.0 * CELL_SIZE_STUDS);
    }
    assert!(
        mesh(&grid, ColumnCoord::new(5, 5)).is_empty(),
        "outside the grid"
    );
}

#[test]
fn terraces_merge_into_one_top_and_one_wall_per_step() {
    // Steps of 8 columns along x: 4 terraces per chunk column, rising to +x
    // (5..=8 cells in the first chunk column, 9..=12 in the second).
    let grid = heightfield_grid(2, |x, _| 5 + x / 8);
    let facing = |m: &LowPolyMesh, n: Vec3| {
        m.normals
            .chunks_exact(4)
            .zip(m.skirt.chunks_exact(4))
            .filter(|(q, s)| s[0] && q[0] == n)
            .count()
    };
    let first = mesh(&grid, ColumnCoord::new(0, 0));
    assert_eq!(first.top_quads, 4);
    // 3 risers inside and the world's edge at x = 0 face −x; the riser at
    // the +x border belongs to the higher chunk column beside it.
    assert_eq!(facing(&first, Vec3::NEG_X), 4);
    assert_eq!(facing(&first, Vec3::X), 0);
    // Along the world's edge at z = 0 one wall per terrace (the steps
    // differ); toward +z the next chunk column has the same terraces.
    assert_eq!(facing(&first, Vec3::NEG_Z), 4);
    assert_eq!(facing(&first, Vec3::Z), 0);
    assert_eq!(first.skirt_quads, 8);
    let second = mesh(&grid, ColumnCoord::new(1, 0));
    // Its 3 risers and the one-step riser over the border at x = 32.
    assert_eq!(facing(&second, Vec3::NEG_X), 4);
    assert_eq!(facing(&second, Vec3::X), 1, "the world's edge at x = 64");
    assert_eq!(second.skirt_quads, 9);
    // A per-column mesher would emit 32 × 32 tops: the greedy tops merge 256×.
    assert_eq!(SIDE * SIDE / first.top_quads, 256);
}

/// Triangles are counter-clockwise seen from their normal's side, normals
/// are unit and axis-aligned, and nothing is NaN.
fn assert_winding_and_finite(m: &LowPolyMesh) {
    for tri in m.indices.chunks_exact(3) {
        let [a, b, c] = [0, 1, 2].map(|i| m.positions[tri[i] as usize]);
        let n = m.normals[tri[0] as usize];
        assert!(a.is_finite() && b.is_finite() && c.is_finite());
        assert!(
            (b - a).cross(c - a).dot(n) > 0.0,
            "clockwise triangle {tri:?}"
        );
        assert_eq!(n.length(), 1.0);
        assert_eq!(n.abs().max_element(), 1.0, "axis-aligned");
    }
}

#[test]
fn rough_land_is_watertight_on_the_global_lattice_across_chunk_columns() {
    // Noise heights 3..=40 over 3 × 3 chunk columns.
    let height = |x: i32, z: i32| {
        let (fx, fz) = (x as f64, z as f64);
        (20.0 + 9.0 * (fx * 0.21).sin() * (fz * 0.17).cos() + 6.0 * ((fx + 1.7 * fz) * 0.43).sin())
            .round()
            .clamp(3.0, 40.0) as i32
    };
    let n = 3;
    let grid = heightfield_grid(n, height);
    let side = n * CHUNK_SIZE_CELLS;
    let step_studs = f64::from(CELL_SIZE_STUDS);
    let cell = f64::from(CELL_SIZE_STUDS);
    let (mut tops, mut walls) = (0.0, 0.0);
    for cz in 0..n {
        for cx in 0..n {
            let column = ColumnCoord::new(cx, cz);
            let m = mesh(&grid, column);
            assert_winding_and_finite(&m);
            let (t, w) = areas(&m);
            tops += t;
            walls += w;
            // Every vertex lies on the global lattice: world x and z are
            // whole cells, y whole steps, exactly.
            let origin = DVec3::new(
                f64::from(cx * CHUNK_SIZE_CELLS) * cell,
                0.0,
                f64::from(cz * CHUNK_SIZE_CELLS) * cell,
            );
            for p in &m.positions {
                let world = origin + p.as_dvec3();
                for v in [world.x / cell, world.z / cell, world.y / step_studs] {
                    assert_eq!(v, v.round(), "{world:?} is off the lattice");
                }
            }
        }
    }
    // Tops cover every column once.
    assert_eq!(tops, f64::from(side * side) * cell * cell);
    // Walls cover every height difference between neighbours exactly once
    // (and the drop to y = 0 at the world's edge): no crack, no double wall.
    let h = |x: i32, z: i32| {
        if (0..side).contains(&x) && (0..side).contains(&z) {
            height(x, z)
        } else {
            0
        }
    };
    let mut expected = 0.0;
    for z in -1..side {
        for x in -1..side {
            expected += f64::from((h(x, z) - h(x + 1, z)).abs());
            expected += f64::from((h(x, z) - h(x, z + 1)).abs());
        }
    }
    assert_eq!(walls, expected * cell * step_studs);
}

#[test]
fn water_standing_above_the_ground_is_the_top() {
    let mut grid = heightfield_grid(1, |_, _| 6);
    grid.edit_region(
        CellBox::new(IVec3::new(4, 6, 4), IVec3::new(12, 9, 12)),
        |_, _| Cell::full(Material::WATER),
    )
    .unwrap();
    let m = mesh(&grid, ColumnCoord::new(0, 0));
    let water: Vec<_> = (0..m.positions.len())
        .filter(|&v| m.materials[v] == Material::WATER && !m.skirt[v])
        .collect();
    assert_eq!(water.len(), 4, "one merged water top");
    assert!(
        water
            .iter()
            .all(|&v| m.positions[v].y == 9.0 * CELL_SIZE_STUDS)
    );
}

#[test]
fn the_low_poly_glb_validates_and_reads_back_its_vertices() {
    use strata::io::export::lowpoly_gltf::export_low_poly_glb;
    let grid = heightfield_grid(2, |x, z| 4 + (x / 5 + z / 7) % 6);
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("lowpoly");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("terrain.glb");
    let export = export_low_poly_glb(&grid, &path, 1.0, None).unwrap();
    assert_eq!(export.chunk_columns, 4);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len() as u64, export.file_bytes);
    // `from_slice` parses and validates the whole document.
    let gltf = gltf::Gltf::from_slice(&bytes).expect("a valid glTF");
    let doc = &gltf.document;
    assert_eq!(doc.images().count(), 1, "the palette atlas is embedded");
    assert_eq!(doc.meshes().count(), 4, "one mesh per chunk column");
    let root = doc.scenes().next().unwrap().nodes().next().unwrap();
    assert_eq!(root.children().count(), 4);
    let (mut vertices, mut triangles) = (0, 0);
    for mesh in doc.meshes() {
        for p in mesh.primitives() {
            vertices += p.get(&gltf::Semantic::Positions).unwrap().count();
            assert!(p.get(&gltf::Semantic::TexCoords(0)).is_some());
            triangles += p.indices().unwrap().count() / 3;
        }
    }
    assert_eq!(vertices, export.vertices);
    assert_eq!(triangles, export.triangles);
    let expected: usize = (0..2)
        .flat_map(|z| (0..2).map(move |x| ColumnCoord::new(x, z)))
        .map(|c| mesh(&grid, c).positions.len())
        .sum();
    assert_eq!(vertices, expected);
    // A step of no height is refused, and nothing is written.
    let bad = dir.join("bad.glb");
    assert!(matches!(
        export_low_poly_glb(&grid, &bad, 0.0, None),
        Err(strata::io::ExportError::InvalidSettings { .. })
    ));
    assert!(!bad.exists());
}

#[test]
fn block_max_collision_never_lies_below_the_render_tops_and_is_lighter() {
    use strata::io::export::lowpoly_gltf::export_low_poly_glb;
    let height = |x: i32, z: i32| 4 + ((x * 7 + z * 13) % 9).abs();
    let grid = heightfield_grid(2, height);
    let column = ColumnCoord::new(1, 0);
    let render = ColumnHeightfield::from_grid(&grid, column, 1.0);
    let collision = ColumnHeightfield::block_max_from_grid(&grid, column, 1.0, 4).unwrap();
    let n = SIDE as i32;
    for z in 0..n {
        for x in 0..n {
            let (r, c) = (render.top(x, z).unwrap(), collision.top(x, z).unwrap());
            assert!(
                c.step >= r.step,
                "({x}, {z}): collision {} under {}",
                c.step,
                r.step
            );
            // The block's highest column.
            let (x0, z0) = (x - x % 4, z - z % 4);
            let highest = (z0..z0 + 4)
                .flat_map(|zz| (x0..x0 + 4).map(move |xx| height(32 + xx, zz)))
                .max()
                .unwrap();
            assert_eq!(c.step, highest);
        }
    }
    let (mut a, mut b) = (LowPolyMesh::default(), LowPolyMesh::default());
    mesh_low_poly(&render, &mut a);
    mesh_low_poly(&collision, &mut b);
    assert!(
        b.triangle_count() * 4 < a.triangle_count(),
        "{} vs {}",
        b.triangle_count(),
        a.triangle_count()
    );
    assert!(ColumnHeightfield::block_max_from_grid(&grid, column, 1.0, 3).is_err());

    // Exported beside the render meshes under its own root.
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("lowpoly");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("with-collision.glb");
    let e = export_low_poly_glb(&grid, &path, 1.0, Some(4)).unwrap();
    assert!(e.collision_triangles > 0 && e.collision_triangles < e.triangles);
    let gltf = gltf::Gltf::from_slice(&std::fs::read(&path).unwrap()).expect("a valid glTF");
    let roots: Vec<_> = gltf.document.scenes().next().unwrap().nodes().collect();
    assert_eq!(roots.len(), 2);
    let collision_meshes: Vec<_> = roots[1]
        .children()
        .map(|n| n.mesh().expect("a collision mesh"))
        .collect();
    assert_eq!(collision_meshes.len(), 4);
    for m in collision_meshes {
        for p in m.primitives() {
            assert!(p.get(&gltf::Semantic::TexCoords(0)).is_none(), "not drawn");
            assert!(p.material().index().is_none());
        }
    }
    let bad = dir.join("bad-block.glb");
    assert!(matches!(
        export_low_poly_glb(&grid, &bad, 1.0, Some(5)),
        Err(strata::io::ExportError::InvalidSettings { .. })
    ));
    assert!(!bad.exists());
}
