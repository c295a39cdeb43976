//! Levels of detail end to end (spec §6, §11): skirts stay out of picking,
//! equal-level neighbours agree on every boundary vertex on the default world
//! and after 100 random edits published through the pipeline, and distance
//! LOD draws far fewer triangles than full detail.

use std::sync::Arc;
use std::time::{Duration, Instant};

use glam::{DVec3, IVec3, Vec3};
use strata::pipeline::lod::{LodSettings, distance_to_chunk_studs};
use strata::pipeline::picking::pick;
use strata::pipeline::seam_audit::audit;
use strata::pipeline::world_meshes::mesh_one;
use strata::pipeline::{TerrainStreaming, WorldMeshes};
use strata::terrain::editing::brush::{Brush, BrushMode};
use strata::terrain::editing::kernels::apply_brush;
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};
use strata::terrain::{Cell, CellBox, ChunkCoord, Grid, Material};

mod common;
use common::NoGpu;

#[test]
fn skirts_are_in_render_meshes_but_never_picked() {
    // A flat floor at y = 40 studs; chunk (0,0,0) meshed at level 2.
    let mut g = Grid::new();
    g.edit_region(
        CellBox::new(IVec3::new(-64, 0, -64), IVec3::new(96, 10, 96)),
        |_, _| Cell::full(Material::ROCK),
    )
    .unwrap();
    let mesh = mesh_one(&g, ChunkCoord::new(0, 0, 0), 2, Default::default());
    assert!(
        mesh.skirt_start_index < mesh.indices.len() as u32,
        "coarse meshes get skirts"
    );
    let skirt_lo = mesh.positions[mesh.skirt_start_vertex as usize..]
        .iter()
        .fold(f32::MAX, |a, p| a.min(p.y));
    assert!(
        skirt_lo < 39.0,
        "skirts hang below the surface ({skirt_lo})"
    );
    // Full detail has none.
    let l0 = mesh_one(&g, ChunkCoord::new(0, 0, 0), 0, Default::default());
    assert_eq!(l0.skirt_start_index as usize, l0.indices.len());

    // Only chunk (0,0,0) is shown. A horizontal ray under the floor crossing
    // the -x border passes through the skirt (checked against every triangle,
    // skirts included) but picking, which uses the surface only, misses.
    let origin = DVec3::new(-20.0, 36.0, 64.0);
    let through_skirt = mesh.indices.chunks_exact(3).any(|t| {
        let [a, b, c] = [0, 1, 2].map(|i| mesh.positions[t[i] as usize].as_dvec3());
        ray_hits_triangle(origin, DVec3::X, a, b, c)
    });
    assert!(through_skirt, "the test ray must cross a skirt");
    let mut meshes = WorldMeshes::default();
    meshes.set_published(ChunkCoord::new(0, 0, 0), 2, Arc::new(mesh), None);
    assert!(pick(&meshes, origin, Vec3::X, 30.0).is_none());
    // Straight down onto the surface: hits the floor, not a skirt.
    let hit = pick(&meshes, DVec3::new(64.0, 200.0, 64.0), -Vec3::Y, 1000.0).unwrap();
    assert!((hit.pos_world.y - 40.0).abs() < 0.5, "{hit:?}");
}

/// Möller–Trumbore, both faces, within 30 studs.
fn ray_hits_triangle(o: DVec3, d: DVec3, a: DVec3, b: DVec3, c: DVec3) -> bool {
    let (e1, e2) = (b - a, c - a);
    let p = d.cross(e2);
    let det = e1.dot(p);
    if det.abs() < 1e-12 {
        return false;
    }
    let s = o - a;
    let u = s.dot(p) / det;
    let q = s.cross(e1);
    let v = d.dot(q) / det;
    let t = e2.dot(q) / det;
    (0.0..=1.0).contains(&u) && v >= 0.0 && u + v <= 1.0 && (0.0..=30.0).contains(&t)
}

/// Runs the streaming pipeline until it is idle.
fn drain(s: &mut TerrainStreaming, grid: &Grid, meshes: &mut WorldMeshes, camera: DVec3) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        s.begin_frame(grid, meshes, camera, &mut NoGpu);
        std::thread::sleep(Duration::from_millis(2));
        s.publish(&mut NoGpu, meshes);
        if s.pipeline().is_idle() && s.lod().is_settled() {
            break;
        }
        assert!(Instant::now() < deadline, "streaming did not settle");
    }
}

#[test]
fn seam_audit_is_clean_on_the_default_world_and_after_100_random_edits() {
    let mut grid = generate_world(&GeneratorSettings::default()).unwrap();
    // A camera low over the middle of the world: all four levels are in use.
    let camera = DVec3::new(2048.0, 600.0, 2048.0);
    let mut s = TerrainStreaming::new(LodSettings::default());
    let mut meshes = s.build_initial(&grid, camera);
    let by_level = meshes.chunks_by_level();
    assert!(
        by_level.iter().all(|&n| n > 0),
        "levels in use: {by_level:?}"
    );
    assert_eq!(audit(&meshes), vec![]);

    // 100 random brush edits (deterministic LCG), each published through the pipeline.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as f64 / (1u64 << 31) as f64
    };
    for i in 0..100 {
        let x = 200.0 + next() * 3700.0;
        let z = 200.0 + next() * 3700.0;
        let Some(hit) = pick(&meshes, DVec3::new(x, 5000.0, z), -Vec3::Y, 10_000.0) else {
            continue;
        };
        let brush = Brush {
            mode: if i % 2 == 0 {
                BrushMode::Add
            } else {
                BrushMode::Subtract
            },
            radius_cells: 2.0 + (next() * 10.0) as f32,
            strength: 1.0,
            material: Material::SAND,
            ignore_water: false,
        };
        apply_brush(&mut grid, &brush, hit.pos_world).unwrap();
        if i % 10 == 9 {
            drain(&mut s, &grid, &mut meshes, camera);
        }
    }
    drain(&mut s, &grid, &mut meshes, camera);
    let mismatches = audit(&meshes);
    assert!(
        mismatches.is_empty(),
        "{} mismatches, first {:?}",
        mismatches.len(),
        mismatches.first()
    );
    // Every shown chunk carries the level its distance asks for (hysteresis aside).
    for (coord, level) in meshes.levels() {
        let d = distance_to_chunk_studs(camera, coord);
        let nominal = strata::pipeline::lod::select_level(d, None);
        assert!(
            level.abs_diff(nominal) <= 1,
            "{coord:?} at {d} studs has level {level}"
        );
    }
}

#[test]
fn distance_lod_draws_far_fewer_triangles_than_full_detail() {
    let grid = generate_world(&GeneratorSettings::default()).unwrap();
    // A fixed high camera over the world's centre.
    let camera = DVec3::new(2048.0, 2500.0, 2048.0);
    let lod = TerrainStreaming::new(LodSettings::default()).build_initial(&grid, camera);
    let full = TerrainStreaming::new(LodSettings {
        force_level: Some(0),
        ..LodSettings::default()
    })
    .build_initial(&grid, camera);
    let (_, t_lod) = lod.totals();
    let (_, t_full) = full.totals();
    assert!(t_full >= 8 * t_lod, "full detail {t_full} vs LOD {t_lod}");
}
