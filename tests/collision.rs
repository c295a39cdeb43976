//! World collision (spec §10): collision meshing with flat-patch reduction,
//! the collider cache, queries and the walker.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use glam::{DVec2, DVec3, IVec3, Vec3};
use strata::collision::character::{FIXED_DT_S, column_surface_height_studs};
use strata::collision::query::CapsuleSpec;
use strata::collision::{
    CollisionCache, CollisionCensus, QueryError, QueryOutcome, TerrainId, WalkInput, Walker,
    WalkerSettings,
};
use strata::mesh::MeshOptions;
use strata::mesh::collision_mesh::{CollisionMesh, CollisionMesher};
use strata::pipeline::world_meshes::{mesh_one, mesh_one_l0};
use strata::terrain::editing::brush::{Brush, BrushMode};
use strata::terrain::editing::kernels::apply_brush;
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};
use strata::terrain::storage::cell::{Cell, Material};
use strata::terrain::storage::coords::{CellBox, CellCoord, ChunkCoord};
use strata::terrain::storage::grid::Grid;

const TERRAIN: TerrainId = TerrainId(1);

/// A flat ground: cells below `height_cells` full grass, the row at
/// `floor(height)` fractional, over the cell box `b` (x/z) from y = 0.
fn flat_ground(b_min: IVec3, b_max: IVec3, height_cells: f64) -> Grid {
    let mut grid = Grid::new();
    grid.edit_region(CellBox::new(b_min, b_max), |c, _| {
        let occ = ((height_cells - c.0.y as f64).clamp(0.0, 1.0) * 255.0).round() as u8;
        Cell::new(Material::GRASS, occ)
    })
    .unwrap();
    grid
}

fn mesh(grid: &Grid, coord: ChunkCoord) -> CollisionMesh {
    let mut m = CollisionMesh::default();
    CollisionMesher::new().mesh_chunk(grid, coord, &mut m);
    m
}

/// Undirected edge → number of triangles using it, and directed edge counts.
/// Edge (vertex pair) → number of triangles using it.
type EdgeCounts = HashMap<(u32, u32), u32>;

fn edge_counts(m: &CollisionMesh) -> (EdgeCounts, EdgeCounts) {
    let mut undirected = HashMap::new();
    let mut directed = HashMap::new();
    for t in &m.indices {
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            *undirected.entry((a.min(b), a.max(b))).or_insert(0) += 1;
            *directed.entry((a, b)).or_insert(0) += 1;
        }
    }
    (undirected, directed)
}

#[test]
fn flat_plane_keeps_every_perimeter_vertex_and_fans_from_a_centre() {
    // Plane at 10.4 cells over 3×3 chunks: chunk (0,0,0) sees the plane on
    // every side, so its 32×32 owned quads form one regular flat patch.
    let grid = flat_ground(IVec3::new(-32, 0, -32), IVec3::new(64, 16, 64), 10.4);
    let m = mesh(&grid, ChunkCoord::new(0, 0, 0));
    assert_eq!(m.triangles_before_reduction, 2 * 32 * 32);
    assert_eq!(m.reduced_patches, 1);
    // Perimeter of a 32×32 quad patch: 33×33 cube vertices, 128 on the ring.
    assert_eq!(m.centre_start_vertex, 128);
    assert_eq!(m.positions.len(), 129);
    assert_eq!(m.triangle_count(), 128);
    let y = m.positions[0].y;
    assert!(m.positions.iter().all(|p| p.y.to_bits() == y.to_bits()));
    // Every ring vertex: cube vertices sit at (i + 1) · 4 studs for cubes
    // i = -1..=31; the ring holds those with i = -1 or 31 on x or z.
    let mut expected = HashSet::new();
    for i in -1..=31 {
        for (a, b) in [(i, -1), (i, 31), (-1, i), (31, i)] {
            expected.insert((a, b));
        }
    }
    let ring_exact: HashSet<(i64, i64)> = m.positions[..128]
        .iter()
        .map(|p| ((p.x * 4.0) as i64, (p.z * 4.0) as i64))
        .collect();
    let expected_exact: HashSet<(i64, i64)> = expected
        .iter()
        .map(|&(a, b)| ((a as i64 * 16 + 8 + 8), (b as i64 * 16 + 8 + 8)))
        .collect();
    assert_eq!(ring_exact, expected_exact);
    // Centre in the middle of the ring, in the plane; triangles face up.
    assert_eq!(m.positions[128], Vec3::new(64.0, y, 64.0));
    for t in &m.indices {
        let [a, b, c] = t.map(|i| m.positions[i as usize]);
        assert!((b - a).cross(c - a).y > 0.0);
    }
    // The open border: every ring edge used once, every spoke twice.
    let (undirected, _) = edge_counts(&m);
    assert_eq!(undirected.values().filter(|&&n| n == 1).count(), 128);
    assert_eq!(undirected.values().filter(|&&n| n == 2).count(), 128);
}

#[test]
fn reduced_patch_next_to_a_curved_surface_has_no_t_junction() {
    // A closed solid inside one chunk: a box with a dome on top, so the
    // top, sides and bottom hold flat patches next to curved surface.
    let mut grid = Grid::new();
    grid.edit_region(CellBox::new(IVec3::ZERO, IVec3::splat(32)), |c, _| {
        let p = c.0;
        let in_box = (4..28).contains(&p.x) && (4..20).contains(&p.y) && (4..28).contains(&p.z);
        let d = (p.as_vec3() + 0.5 - Vec3::new(16.0, 20.0, 16.0)).length();
        let dome = (6.5 - d).clamp(0.0, 1.0);
        if in_box {
            Cell::full(Material::ROCK)
        } else if dome > 0.0 {
            Cell::new(Material::GRASS, (dome * 255.0) as u8)
        } else {
            Cell::EMPTY
        }
    })
    .unwrap();
    let m = mesh(&grid, ChunkCoord::new(0, 0, 0));
    assert!(m.reduced_patches >= 5, "patches: {}", m.reduced_patches);
    assert!(m.triangle_count() < m.triangles_before_reduction as usize);
    let (undirected, directed) = edge_counts(&m);
    // Closed surface: no boundary, so every edge is shared by exactly two
    // triangles, with opposite directions (consistent winding).
    for (e, n) in &undirected {
        assert_eq!(*n, 2, "edge {e:?} used by {n} triangles");
    }
    for (&(a, b), n) in &directed {
        assert_eq!(*n, 1);
        assert!(directed.contains_key(&(b, a)));
    }
    // Every triangle is non-degenerate.
    for t in &m.indices {
        let [a, b, c] = t.map(|i| m.positions[i as usize]);
        assert!((b - a).cross(c - a).length() > 1e-3);
    }
}

#[test]
fn collision_triangles_are_reduced_on_the_default_world() {
    let settings = GeneratorSettings {
        size_cells: 256,
        ..GeneratorSettings::default()
    };
    let grid = generate_world(&settings).unwrap();
    let mut cache = CollisionCache::new();
    let region = grid.bounds_cells().unwrap().expanded(1);
    let report = cache.update(&grid, TERRAIN, region).unwrap();
    assert!(report.full);
    let stats = cache.stats();
    assert!(stats.colliders > 0);
    let ratio = stats.triangles_before_reduction as f64 / stats.triangles as f64;
    println!(
        "default world 256: {} colliders, triangles {} -> {} (ratio {ratio:.3}), build {:.1} ms",
        stats.colliders, stats.triangles_before_reduction, stats.triangles, report.ms
    );
    assert!(stats.triangles < stats.triangles_before_reduction);
    // Every non-empty full-detail render chunk has a collider and vice versa.
    for coord in grid.meshing_candidates() {
        let render = mesh_one_l0(&grid, coord);
        assert_eq!(
            cache.collider(coord).is_some(),
            !render.is_empty(),
            "{coord:?}"
        );
        if let Some(c) = cache.collider(coord) {
            assert_eq!(
                c.triangles_before_reduction as usize,
                render.triangle_count()
            );
        }
    }
}

#[test]
fn a_census_counts_what_the_cache_builds_and_rebuilds() {
    let settings = GeneratorSettings {
        size_cells: 128,
        ..GeneratorSettings::default()
    };
    let mut grid = generate_world(&settings).unwrap();
    let region = grid.bounds_cells().unwrap().expanded(1);
    let mut cache = CollisionCache::new();
    let mut census = CollisionCensus::new();
    let same = |a: strata::collision::UpdateReport, b: strata::collision::UpdateReport| {
        assert_eq!(
            (a.rebuilt_chunks, a.edited_chunks, a.kept_colliders, a.full),
            (b.rebuilt_chunks, b.edited_chunks, b.kept_colliders, b.full)
        );
    };
    let built = cache.update(&grid, TERRAIN, region).unwrap();
    same(built, census.update(&grid, TERRAIN, region).unwrap());
    assert!(built.full && built.rebuilt_chunks > 0);
    let totals = |s: strata::collision::CollisionStats| {
        (s.colliders, s.triangles_before_reduction, s.triangles)
    };
    assert_eq!(totals(census.stats()), totals(cache.stats()));
    assert!(census.stats().triangles > 0);
    // Dig a pit across chunk borders: both rebuild the same chunks.
    let brush = Brush {
        mode: BrushMode::Subtract,
        radius_cells: 12.0,
        strength: 1.0,
        material: Material::GRASS,
        ignore_water: false,
    };
    let top = column_surface_height_studs(&grid, 256.0, 256.0).unwrap();
    apply_brush(&mut grid, &brush, DVec3::new(256.0, top, 256.0)).unwrap();
    let rebuilt = cache.update(&grid, TERRAIN, region).unwrap();
    same(rebuilt, census.update(&grid, TERRAIN, region).unwrap());
    assert!(!rebuilt.full && rebuilt.edited_chunks > 0);
    assert_eq!(totals(census.stats()), totals(cache.stats()));
    assert_eq!(
        census.stats().last_edit_rebuild.edited_chunks,
        rebuilt.edited_chunks
    );
}

#[test]
fn unchanged_chunks_keep_their_shape_and_edited_ones_are_replaced() {
    let grid0 = flat_ground(IVec3::new(0, 0, 0), IVec3::new(128, 16, 128), 10.5);
    let mut grid = grid0;
    let mut cache = CollisionCache::new();
    let region = CellBox::new(IVec3::new(0, -32, 0), IVec3::new(128, 64, 128));
    cache.update(&grid, TERRAIN, region).unwrap();
    // 16 chunks hold the ground's top, 16 below them its underside.
    assert_eq!(cache.stats().colliders, 32);
    let before: HashMap<ChunkCoord, Arc<_>> = cache
        .colliders()
        .map(|c| (c.coord, c.shape.clone()))
        .collect();
    // One cell in chunk (1,0,1) at x = 63, next to chunk (2,0,1) (its
    // collision reach is 1 cell), mid-chunk on z.
    grid.edit_region(
        CellBox::new(IVec3::new(63, 11, 48), IVec3::new(64, 12, 49)),
        |_, _| Cell::full(Material::ROCK),
    )
    .unwrap();
    assert!(!cache.is_current(&grid, TERRAIN));
    let report = cache.update(&grid, TERRAIN, region).unwrap();
    assert!(!report.full);
    assert!(cache.is_current(&grid, TERRAIN));
    let replaced: HashSet<ChunkCoord> = before
        .iter()
        .filter(|(c, shape)| !Arc::ptr_eq(shape, &cache.collider(**c).unwrap().shape))
        .map(|(c, _)| *c)
        .collect();
    let expected: HashSet<ChunkCoord> = [ChunkCoord::new(1, 0, 1), ChunkCoord::new(2, 0, 1)]
        .into_iter()
        .collect();
    assert_eq!(replaced, expected);
    assert_eq!(report.rebuilt_chunks, 2);
    assert_eq!(report.edited_chunks, 2);
    assert_eq!(report.kept_colliders, 30);
    assert_eq!(cache.stats().last_edit_rebuild, report);
    // An edit that changes nothing rebuilds nothing.
    let report = cache.update(&grid, TERRAIN, region).unwrap();
    assert_eq!(report.rebuilt_chunks, 0);
    // Another terrain instance, or a clone (new generation), rebuilds all.
    let clone = grid.clone();
    assert!(cache.update(&clone, TERRAIN, region).unwrap().full);
    assert!(cache.update(&clone, TerrainId(2), region).unwrap().full);
}

#[test]
fn ray_down_after_subtract_hits_the_new_lower_surface() {
    let mut grid = flat_ground(IVec3::new(0, 0, 0), IVec3::new(96, 16, 96), 10.5);
    let mut cache = CollisionCache::new();
    let region = CellBox::new(IVec3::new(0, 0, 0), IVec3::new(96, 64, 96));
    cache.update(&grid, TERRAIN, region).unwrap();
    let origin = DVec3::new(190.0, 200.0, 190.0);
    let down = DVec3::NEG_Y;
    let QueryOutcome::Hit(hit) = cache.cast_ray(&grid, TERRAIN, origin, down, 500.0).unwrap()
    else {
        panic!("no hit")
    };
    let surface = column_surface_height_studs(&grid, 190.0, 190.0).unwrap();
    assert!((hit.point_world.y - surface).abs() < 0.1, "{hit:?}");
    assert_eq!(hit.chunk, ChunkCoord::new(1, 0, 1));
    assert_eq!(hit.material, Some(Material::GRASS));
    assert!(hit.normal.y > 0.999);

    let brush = Brush {
        mode: BrushMode::Subtract,
        radius_cells: 6.0,
        strength: 1.0,
        material: Material::GRASS,
        ignore_water: false,
    };
    apply_brush(
        &mut grid,
        &brush,
        DVec3::new(190.0, hit.point_world.y, 190.0),
    )
    .unwrap();
    // Stale until updated: queries refuse instead of answering from old shapes.
    assert_eq!(
        cache.cast_ray(&grid, TERRAIN, origin, down, 500.0),
        Err(QueryError::Stale)
    );
    cache.update(&grid, TERRAIN, region).unwrap();
    let QueryOutcome::Hit(after) = cache.cast_ray(&grid, TERRAIN, origin, down, 500.0).unwrap()
    else {
        panic!("no hit after the edit")
    };
    assert!(after.point_world.y < hit.point_world.y - 16.0, "{after:?}");
    let column = column_surface_height_studs(&grid, 190.0, 190.0).unwrap();
    assert!(
        (after.point_world.y - column).abs() < 2.0,
        "{after:?} vs {column}"
    );
}

#[test]
fn queries_reject_bad_input_and_report_region_and_misses() {
    let grid = flat_ground(IVec3::new(0, 0, 0), IVec3::new(64, 16, 64), 10.5);
    let mut cache = CollisionCache::new();
    let region = CellBox::new(IVec3::new(0, 0, 0), IVec3::new(64, 32, 64));
    let o = DVec3::new(100.0, 100.0, 100.0);
    assert_eq!(
        cache.cast_ray(&grid, TERRAIN, o, DVec3::NEG_Y, 10.0),
        Err(QueryError::Stale)
    );
    cache.update(&grid, TERRAIN, region).unwrap();
    let bad = [
        cache.cast_ray(&grid, TERRAIN, DVec3::NAN, DVec3::NEG_Y, 10.0),
        cache.cast_ray(&grid, TERRAIN, o, DVec3::ZERO, 10.0),
        cache.cast_ray(&grid, TERRAIN, o, DVec3::NEG_Y, -1.0),
        cache.cast_ray(&grid, TERRAIN, o, DVec3::new(0.0, f64::NAN, 0.0), 1.0),
        cache.project_point(&grid, TERRAIN, o, f64::NAN),
    ];
    for r in bad {
        assert!(matches!(r, Err(QueryError::InvalidArgument(_))), "{r:?}");
    }
    let capsule = CapsuleSpec {
        centre_world: o,
        half_height_studs: 2.5,
        radius_studs: 0.0,
    };
    assert!(matches!(
        cache.cast_capsule(&grid, TERRAIN, &capsule, DVec3::NEG_Y, 10.0),
        Err(QueryError::InvalidArgument(_))
    ));
    // Up into the sky: leaves the region (y < 128 studs) → out of region;
    // a short one stays inside and misses.
    assert_eq!(
        cache.cast_ray(&grid, TERRAIN, o, DVec3::Y, 100.0).unwrap(),
        QueryOutcome::OutOfRegion
    );
    assert_eq!(
        cache.cast_ray(&grid, TERRAIN, o, DVec3::Y, 10.0).unwrap(),
        QueryOutcome::Miss
    );
    assert_eq!(
        cache
            .cast_ray(
                &grid,
                TERRAIN,
                DVec3::new(-10.0, 50.0, 5.0),
                DVec3::NEG_Y,
                10.0
            )
            .unwrap(),
        QueryOutcome::OutOfRegion
    );
    // Projection of a point 20 studs above the ground.
    let ground = column_surface_height_studs(&grid, 100.0, 100.0).unwrap();
    let p = DVec3::new(100.0, ground + 20.0, 100.0);
    let QueryOutcome::Hit(h) = cache.project_point(&grid, TERRAIN, p, 30.0).unwrap() else {
        panic!()
    };
    assert!((h.distance_studs - 20.0).abs() < 0.1, "{h:?}");
    assert_eq!(
        cache.project_point(&grid, TERRAIN, p, 10.0).unwrap(),
        QueryOutcome::Miss
    );
    // Capsule dropped onto the ground: stops with its bottom on it.
    let capsule = CapsuleSpec {
        centre_world: p,
        half_height_studs: 2.5,
        radius_studs: 1.5,
    };
    let QueryOutcome::Hit(c) = cache
        .cast_capsule(&grid, TERRAIN, &capsule, DVec3::NEG_Y, 30.0)
        .unwrap()
    else {
        panic!()
    };
    assert!((c.distance_studs - (20.0 - 4.0)).abs() < 0.1, "{c:?}");
    assert!(!c.penetrating);
    assert_eq!(c.material, Some(Material::GRASS));
}

#[test]
fn render_skirts_never_appear_in_collision() {
    // A slope so the coarse chunk has open borders with skirts hanging below.
    let mut grid = Grid::new();
    grid.edit_region(
        CellBox::new(IVec3::new(-32, 0, -32), IVec3::new(64, 40, 64)),
        |c, _| {
            let h = 12.0 + 0.3 * c.0.x as f64 + 0.1 * c.0.z as f64;
            let occ = ((h - c.0.y as f64).clamp(0.0, 1.0) * 255.0).round() as u8;
            Cell::new(Material::GRASS, occ)
        },
    )
    .unwrap();
    let coord = ChunkCoord::new(0, 0, 0);
    let coarse = mesh_one(&grid, coord, 2, MeshOptions::default());
    assert!(
        (coarse.skirt_start_index as usize) < coarse.indices.len(),
        "coarse mesh has skirts"
    );
    let m = mesh(&grid, coord);
    let l0 = mesh_one_l0(&grid, coord);
    // Collision = the full-detail surface (no level, no skirt).
    assert_eq!(m.triangles_before_reduction as usize, l0.triangle_count());
    assert_eq!(l0.skirt_start_index as usize, l0.indices.len());
    let collision_points: HashSet<[u32; 3]> = m
        .positions
        .iter()
        .map(|p| p.to_array().map(f32::to_bits))
        .collect();
    let mut cache = CollisionCache::new();
    cache
        .update(
            &grid,
            TERRAIN,
            CellBox::new(IVec3::splat(0), IVec3::new(32, 64, 32)),
        )
        .unwrap();
    let o = coord.origin_world();
    for p in &coarse.positions[coarse.skirt_start_vertex as usize..] {
        assert!(!collision_points.contains(&p.to_array().map(f32::to_bits)));
        // Straight down from above the skirt vertex: the collision surface
        // lies above the skirt's bottom (which hangs inside the solid).
        let top = DVec3::new(o.x + p.x as f64, 250.0, o.z + p.z as f64);
        if !(0.5..127.5).contains(&p.x) || !(0.5..127.5).contains(&p.z) {
            continue;
        }
        if let QueryOutcome::Hit(h) = cache
            .cast_ray(&grid, TERRAIN, top, DVec3::NEG_Y, 240.0)
            .unwrap()
        {
            assert!(
                h.point_world.y > o.y + p.y as f64,
                "skirt at {p} vs hit {h:?}"
            );
        }
    }
}

fn settle(walker: &mut Walker, cache: &mut CollisionCache, grid: &Grid, steps: usize) {
    for _ in 0..steps {
        cache.update(grid, TERRAIN, walker.region()).unwrap();
        walker
            .step(cache, grid, TERRAIN, &WalkInput::default(), FIXED_DT_S)
            .unwrap();
    }
}

#[test]
fn walker_on_a_chunk_corner_stays_up_while_the_four_chunks_rebuild() {
    let mut grid = flat_ground(IVec3::new(-64, 0, -64), IVec3::new(64, 16, 64), 10.5);
    let mut cache = CollisionCache::new();
    let mut walker = Walker::new(DVec3::new(0.0, 60.0, 0.0), WalkerSettings::default());
    settle(&mut walker, &mut cache, &grid, 90);
    assert!(walker.grounded);
    let standing = walker.feet_world;
    let ground = column_surface_height_studs(&grid, 0.0, 0.0).unwrap();
    assert!((standing.y - ground).abs() < 0.1, "{standing} vs {ground}");
    let corners = [
        ChunkCoord::new(-1, 0, -1),
        ChunkCoord::new(0, 0, -1),
        ChunkCoord::new(-1, 0, 0),
        ChunkCoord::new(0, 0, 0),
    ];
    for frame in 0..60u32 {
        // Each frame edits all four chunks around the corner (a small bump
        // 60 studs from the feet in each), then rebuilds and steps.
        let shapes: Vec<_> = corners
            .iter()
            .map(|c| cache.collider(*c).unwrap().shape.clone())
            .collect();
        for (i, sx) in [(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)]
            .iter()
            .enumerate()
        {
            let brush = Brush {
                mode: if frame.is_multiple_of(2) {
                    BrushMode::Add
                } else {
                    BrushMode::Subtract
                },
                radius_cells: 2.0,
                strength: 1.0,
                material: Material::ROCK,
                ignore_water: false,
            };
            let centre = DVec3::new(60.0 * sx.0, 44.0, 60.0 * sx.1);
            apply_brush(&mut grid, &brush, centre).unwrap();
            let _ = i;
        }
        cache.update(&grid, TERRAIN, walker.region()).unwrap();
        for (c, old) in corners.iter().zip(&shapes) {
            assert!(
                !Arc::ptr_eq(old, &cache.collider(*c).unwrap().shape),
                "{c:?} rebuilt"
            );
        }
        let r = walker
            .step(&cache, &grid, TERRAIN, &WalkInput::default(), FIXED_DT_S)
            .unwrap();
        assert!(r.grounded, "frame {frame}");
        assert!(
            (walker.feet_world - standing).length() < 1e-9,
            "frame {frame}: {}",
            walker.feet_world
        );
    }
}

#[test]
fn walker_climbs_one_cell_steps_is_blocked_by_walls_and_falls_into_a_dug_hole() {
    // Ground at 10.5 cells; a 1-cell ledge from x >= 16 cells; a 3-cell wall
    // from x >= 40 cells.
    let mut grid = Grid::new();
    grid.edit_region(
        CellBox::new(IVec3::new(-32, 0, -32), IVec3::new(96, 32, 32)),
        |c, _| {
            let h = if c.0.x >= 40 {
                14.5
            } else if c.0.x >= 16 {
                11.5
            } else {
                10.5
            };
            let occ = ((h - c.0.y as f64).clamp(0.0, 1.0) * 255.0).round() as u8;
            Cell::new(Material::GRASS, occ)
        },
    )
    .unwrap();
    // Surface Nets chamfers a 1-cell ledge at about 45°: with the default
    // 50° limit the walker walks up it; with a 30° limit it must step up.
    for (max_slope_deg, must_step) in [(50.0, false), (30.0, true)] {
        let settings = WalkerSettings {
            max_slope_deg,
            ..WalkerSettings::default()
        };
        let mut cache = CollisionCache::new();
        let mut walker = Walker::new(DVec3::new(20.0, 50.0, 8.0), settings);
        settle(&mut walker, &mut cache, &grid, 60);
        let y0 = walker.feet_world.y;
        let east = WalkInput {
            move_xz: DVec2::X,
            jump: false,
        };
        let mut stepped = false;
        for _ in 0..600 {
            cache.update(&grid, TERRAIN, walker.region()).unwrap();
            let r = walker
                .step(&cache, &grid, TERRAIN, &east, FIXED_DT_S)
                .unwrap();
            if std::env::var("WALK_DEBUG").is_ok() {
                eprintln!(
                    "{max_slope_deg} {} {:?} {r:?}",
                    walker.feet_world, walker.velocity
                );
            }
            stepped |= r.stepped_up;
        }
        assert!(
            stepped || !must_step,
            "{max_slope_deg}: {} from {y0}",
            walker.feet_world
        );
        // On the ledge (4 studs up), stopped before the 3-cell wall at x = 160 studs.
        let p = walker.feet_world;
        assert!(p.y > y0 + 3.5 && p.y < y0 + 6.0, "{p} from {y0}");
        assert!(p.x < 160.0 && p.x > 150.0, "{p}");
    }
    let mut cache = CollisionCache::new();
    let mut walker = Walker::new(DVec3::new(120.0, 60.0, 8.0), WalkerSettings::default());
    settle(&mut walker, &mut cache, &grid, 60);
    let y0 = walker.feet_world.y - 4.0;
    // A jump lifts it.
    cache.update(&grid, TERRAIN, walker.region()).unwrap();
    let jump = WalkInput {
        move_xz: DVec2::ZERO,
        jump: true,
    };
    walker
        .step(&cache, &grid, TERRAIN, &jump, FIXED_DT_S)
        .unwrap();
    settle(&mut walker, &mut cache, &grid, 10);
    assert!(
        walker.feet_world.y > y0 + 4.0 + 3.0,
        "{}",
        walker.feet_world
    );
    settle(&mut walker, &mut cache, &grid, 60);
    assert!(walker.grounded);
    // Dig under the feet: the next step starts falling.
    let feet = walker.feet_world;
    let brush = Brush {
        mode: BrushMode::Subtract,
        radius_cells: 5.0,
        strength: 1.0,
        material: Material::GRASS,
        ignore_water: false,
    };
    apply_brush(&mut grid, &brush, feet - DVec3::Y * 8.0).unwrap();
    settle(&mut walker, &mut cache, &grid, 1);
    assert!(!walker.grounded);
    settle(&mut walker, &mut cache, &grid, 60);
    assert!(walker.grounded);
    assert!(walker.feet_world.y < feet.y - 8.0, "{}", walker.feet_world);
    let ground =
        column_surface_height_studs(&grid, walker.feet_world.x, walker.feet_world.z).unwrap();
    assert!(walker.feet_world.y > ground - 2.0);
}

#[test]
fn walker_slides_down_steep_slopes() {
    // 60° slope (tan = 1.73) rising toward +x.
    let mut grid = Grid::new();
    grid.edit_region(
        CellBox::new(IVec3::new(-32, 0, -32), IVec3::new(32, 64, 32)),
        |c, _| {
            // Occupancy from the distance to the plane (ramp = sqrt(1 + slope²)).
            let h = 20.0 + 1.732 * c.0.x as f64;
            let occ =
                ((0.5 + (h - (c.0.y as f64 + 0.5)) / 2.0).clamp(0.0, 1.0) * 255.0).round() as u8;
            Cell::new(Material::ROCK, occ)
        },
    )
    .unwrap();
    let mut cache = CollisionCache::new();
    let mut walker = Walker::new(DVec3::new(40.0, 180.0, 0.0), WalkerSettings::default());
    settle(&mut walker, &mut cache, &grid, 30);
    let x0 = walker.feet_world.x;
    for _ in 0..60 {
        settle(&mut walker, &mut cache, &grid, 1);
        println!(
            "{} {:?} {}",
            walker.feet_world, walker.velocity, walker.grounded
        );
    }
    assert!(!walker.grounded);
    assert!(
        walker.feet_world.x < x0 - 4.0,
        "{} from {x0}",
        walker.feet_world
    );
    let _ = CellCoord::new(0, 0, 0);
}

#[test]
fn scripted_walk_on_a_generated_world_stays_on_the_ground_and_is_deterministic() {
    use strata::collision::scripted_walk::{WalkSegment, run_walk, whole_grid};
    let settings = GeneratorSettings {
        size_cells: 256,
        ..GeneratorSettings::default()
    };
    let mut grid = generate_world(&settings).unwrap();
    let segments = [
        WalkSegment {
            frames: 900,
            input: WalkInput {
                move_xz: DVec2::new(1.0, 0.2).normalize(),
                jump: false,
            },
        },
        WalkSegment {
            frames: 300,
            input: WalkInput {
                move_xz: DVec2::new(0.0, 1.0),
                jump: true,
            },
        },
    ];
    let a = run_walk(&mut grid, TERRAIN, [60.0, 300.0], &segments, whole_grid).unwrap();
    let b = run_walk(&mut grid, TERRAIN, [60.0, 300.0], &segments, whole_grid).unwrap();
    println!("{a:?}");
    assert!(!a.fell_through);
    assert!(a.min_height_above_ground_studs > -2.0);
    assert!(a.distance_studs > 50.0);
    assert_eq!(a.frames, 120 + 900 + 300);
    // Fixed steps: bit-identical runs.
    assert_eq!(a.end_world, b.end_world);
    assert_eq!(a.distance_studs.to_bits(), b.distance_studs.to_bits());
    assert_eq!(
        a.min_height_above_ground_studs.to_bits(),
        b.min_height_above_ground_studs.to_bits()
    );
}

/// Asserts that `cache` (updated incrementally) holds exactly the colliders
/// a fresh build of `region` would.
fn assert_matches_fresh_build(cache: &CollisionCache, grid: &Grid, region: CellBox) {
    let mut fresh = CollisionCache::new();
    fresh.update(grid, TERRAIN, region).unwrap();
    let coords: HashSet<ChunkCoord> = fresh.colliders().map(|c| c.coord).collect();
    assert_eq!(
        coords,
        cache.colliders().map(|c| c.coord).collect::<HashSet<_>>()
    );
    for c in fresh.colliders() {
        let cached = cache.collider(c.coord).unwrap();
        assert_eq!(cached.shape.vertices(), c.shape.vertices(), "{:?}", c.coord);
        assert_eq!(cached.shape.indices(), c.shape.indices(), "{:?}", c.coord);
    }
}

#[test]
fn incremental_updates_match_a_fresh_build_after_edits_near_borders() {
    let mut grid = flat_ground(IVec3::new(-32, 0, -32), IVec3::new(64, 24, 64), 10.5);
    let region = CellBox::new(IVec3::new(-32, -32, -32), IVec3::new(64, 64, 64));
    let mut cache = CollisionCache::new();
    cache.update(&grid, TERRAIN, region).unwrap();
    // Single cells on the last row of a chunk: only the neighbour's
    // collision reach (1 cell) sees them from across the border — a face
    // (x = 31 next to chunk 1) and a corner (-1, -1 next to three chunks).
    for cell in [
        IVec3::new(31, 10, 20),
        IVec3::new(-1, 10, -1),
        IVec3::new(20, 10, 31),
    ] {
        grid.edit_region(CellBox::new(cell, cell + IVec3::ONE), |_, old| {
            if old.is_inside() {
                Cell::EMPTY
            } else {
                Cell::full(Material::ROCK)
            }
        })
        .unwrap();
        assert!(!cache.update(&grid, TERRAIN, region).unwrap().full);
        assert_matches_fresh_build(&cache, &grid, region);
    }
    // Brush edits across borders, edges and a corner.
    let centres = [
        DVec3::new(128.0, 44.0, 60.0),
        DVec3::new(124.0, 44.0, 126.0),
        DVec3::new(4.0, 44.0, 4.0),
        DVec3::new(-6.0, 40.0, 200.0),
        DVec3::new(0.0, 42.0, 0.0),
    ];
    for (i, &centre) in centres.iter().enumerate() {
        let brush = Brush {
            mode: if i % 2 == 0 {
                BrushMode::Subtract
            } else {
                BrushMode::Add
            },
            radius_cells: 1.0 + i as f32,
            strength: 1.0,
            material: Material::ROCK,
            ignore_water: false,
        };
        apply_brush(&mut grid, &brush, centre).unwrap();
        assert!(!cache.update(&grid, TERRAIN, region).unwrap().full);
        assert_matches_fresh_build(&cache, &grid, region);
    }
}
