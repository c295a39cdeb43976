//! Water through the pipeline (spec §9): the water mesh does not depend on
//! the level of detail, level-only requests reuse it, and a level change
//! right after an edit never drops the water work the edit queued.

use std::sync::Arc;
use std::time::Instant;

use glam::{DVec3, IVec3};
use strata::mesh::ChunkMesh;
use strata::mesh::water::WaterMesh;
use strata::pipeline::world_meshes::mesh_water_one;
use strata::pipeline::{ChunkUploader, MeshPipeline, WorldMeshes};
use strata::terrain::{Cell, CellBox, ChunkCoord, Grid, Material};

#[derive(Default)]
struct Recorder {
    water_staged: Vec<ChunkCoord>,
}

impl ChunkUploader for Recorder {
    fn stage(&mut self, _: ChunkCoord, _: u8, _: &Arc<ChunkMesh>) {}
    fn promote(&mut self, _: &[ChunkCoord]) {}
    fn evict(&mut self, _: &[ChunkCoord]) {}
    fn stage_water(&mut self, coord: ChunkCoord, _: &Arc<WaterMesh>) {
        self.water_staged.push(coord);
    }
}

/// A rock basin with a pond at rows 4..6 (x, z in 8..20) inside chunk (0,0,0).
fn pond() -> Grid {
    let mut g = Grid::new();
    g.edit_region(
        CellBox::new(IVec3::new(0, 0, 0), IVec3::new(28, 8, 28)),
        |c, _| {
            let inside = (8..20).contains(&c.0.x) && (8..20).contains(&c.0.z);
            match (inside, c.0.y) {
                (_, y) if y < 4 => Cell::full(Material::ROCK),
                (true, y) if y < 6 => Cell::full(Material::WATER),
                (true, _) => Cell::EMPTY,
                (false, _) => Cell::full(Material::GRASS),
            }
        },
    )
    .unwrap();
    g
}

fn run(p: &mut MeshPipeline, grid: &Grid, meshes: &mut WorldMeshes, up: &mut Recorder) {
    for job in p.take_jobs(grid, DVec3::ZERO, usize::MAX) {
        for r in job.run() {
            p.submit_result(r);
        }
    }
    p.publish(up, meshes);
    assert!(p.is_idle());
}

#[test]
fn water_mesh_is_the_same_at_every_level() {
    let g = pond();
    let coord = ChunkCoord::new(0, 0, 0);
    let reference = WorldMeshes::build(&g, &[coord], |_| 0);
    let water = reference
        .water_of(coord)
        .expect("the pond shows water")
        .clone();
    assert!(water.triangle_count() >= 2 * 12 * 12);
    for level in 1..4 {
        let m = WorldMeshes::build(&g, &[coord], |_| level);
        assert_eq!(m.level_of(coord), Some(level));
        assert_eq!(**m.water_of(coord).unwrap(), *water, "level {level}");
    }
}

#[test]
fn level_only_requests_reuse_the_water_mesh() {
    let g = pond();
    let coord = ChunkCoord::new(0, 0, 0);
    let mut meshes = WorldMeshes::build(&g, &[coord], |_| 0);
    let before = meshes.water_of(coord).unwrap().clone();
    let mut p = MeshPipeline::new();
    p.mark_synced(&g);
    p.request([coord], 2, None);
    let jobs = p.take_jobs(&g, DVec3::ZERO, usize::MAX);
    assert!(jobs.iter().all(|j| j.items.iter().all(|i| !i.water)));
    for job in jobs {
        for r in job.run() {
            assert!(r.water.is_none());
            p.submit_result(r);
        }
    }
    let mut up = Recorder::default();
    p.publish(&mut up, &mut meshes);
    assert_eq!(meshes.level_of(coord), Some(2));
    assert!(up.water_staged.is_empty());
    assert!(
        Arc::ptr_eq(meshes.water_of(coord).unwrap(), &before),
        "water kept as is"
    );
}

#[test]
fn water_still_updates_after_an_edit_followed_by_a_level_change() {
    let mut g = pond();
    let coord = ChunkCoord::new(0, 0, 0);
    let mut meshes = WorldMeshes::build(&g, &g.meshing_candidates(), |_| 0);
    let mut p = MeshPipeline::new();
    p.mark_synced(&g);
    // The edit raises the pond by one row.
    g.edit_region(
        CellBox::new(IVec3::new(8, 6, 8), IVec3::new(20, 7, 20)),
        |_, _| Cell::full(Material::WATER),
    )
    .unwrap();
    p.sync_grid(&g, &mut meshes, Instant::now(), |_| true);
    // Before it is meshed, LOD moves the chunk to level 1 (a level-only request).
    p.request([coord], 1, None);
    let mut up = Recorder::default();
    run(&mut p, &g, &mut meshes, &mut up);
    assert!(up.water_staged.contains(&coord));
    assert_eq!(meshes.level_of(coord), Some(1));
    assert_eq!(**meshes.water_of(coord).unwrap(), mesh_water_one(&g, coord));
    // The sheet now sits at the new top: row 7's bottom, 28 studs.
    let top = meshes
        .water_of(coord)
        .unwrap()
        .positions
        .iter()
        .map(|p| p.y)
        .fold(0.0, f32::max);
    assert_eq!(top, 28.0);
}
