//! The grid through its public API: revisions only for real changes,
//! negative coordinates, removed chunks and the removal log, clones and
//! selective snapshots that share storage, the edit volume limit, and
//! changed extents.

use glam::IVec3;
use strata::terrain::storage::cell::{Cell, Material};
use strata::terrain::storage::coords::{CellBox, CellCoord, ChunkCoord};
use strata::terrain::storage::grid::{Changes, EditReport, Grid, GridError, REMOVAL_LOG_CAPACITY};

fn rock() -> Cell {
    Cell::full(Material::ROCK)
}

#[test]
fn unchanged_edit_makes_no_revision() {
    let mut g = Grid::new();
    let region = CellBox::new(IVec3::ZERO, IVec3::splat(4));
    let r1 = g.edit_region(region, |_, _| rock()).unwrap();
    assert_eq!(r1.revision, Some(1));
    let r2 = g.edit_region(region, |_, _| rock()).unwrap();
    assert_eq!(r2, EditReport::default());
    assert_eq!(g.revision(), 1);
    assert_eq!(g.chunk(ChunkCoord::new(0, 0, 0)).unwrap().revision, 1);
}

#[test]
fn negative_coordinate_edit_lands_in_negative_chunk() {
    let mut g = Grid::new();
    let c = CellCoord::new(-1, -1, -1);
    g.edit_region(CellBox::new(c.0, c.0 + IVec3::ONE), |_, _| rock())
        .unwrap();
    assert_eq!(g.chunk_count(), 1);
    let chunk = g.chunk(ChunkCoord::new(-1, -1, -1)).unwrap();
    assert_eq!(chunk.cells.get(IVec3::splat(31)), rock());
    assert_eq!(g.cell(c), rock());
    assert_eq!(g.cell(CellCoord::new(0, 0, 0)), Cell::EMPTY);
}

#[test]
fn emptied_chunk_is_removed_and_logged() {
    let mut g = Grid::new();
    let region = CellBox::new(IVec3::new(30, 0, 0), IVec3::new(34, 1, 1));
    g.edit_region(region, |_, _| rock()).unwrap();
    assert_eq!(g.chunk_count(), 2);
    let (generation, rev) = (g.generation(), g.revision());
    let report = g
        .edit_region(
            CellBox::new(IVec3::new(32, 0, 0), IVec3::new(34, 1, 1)),
            |_, _| Cell::EMPTY,
        )
        .unwrap();
    assert_eq!(report.removed, vec![ChunkCoord::new(1, 0, 0)]);
    assert_eq!(g.chunk_count(), 1);
    assert_eq!(
        g.changes_since(generation, rev),
        Changes::Incremental {
            changed: vec![],
            removed: vec![ChunkCoord::new(1, 0, 0)]
        }
    );
}

#[test]
fn clone_gets_fresh_generation_and_shares_storage() {
    let mut g = Grid::new();
    g.edit_region(CellBox::new(IVec3::ZERO, IVec3::new(2, 1, 1)), |_, _| {
        rock()
    })
    .unwrap();
    let c = g.clone();
    assert_ne!(c.generation(), g.generation());
    let coord = ChunkCoord::new(0, 0, 0);
    assert!(
        c.chunk(coord)
            .unwrap()
            .cells
            .shares_storage_with(&g.chunk(coord).unwrap().cells)
    );
    assert_eq!(c.content_hash(), g.content_hash());
    assert_eq!(g.changes_since(c.generation(), 1), Changes::FullRefresh);
    assert_eq!(g.changes_since(g.generation(), 2), Changes::FullRefresh);
}

#[test]
fn selective_snapshot_shares_storage_and_holds_only_what_meshing_needs() {
    let mut g = Grid::new();
    // Chunks x = 0..4 along one row.
    g.edit_region(CellBox::new(IVec3::ZERO, IVec3::new(160, 1, 1)), |_, _| {
        rock()
    })
    .unwrap();
    assert_eq!(g.chunk_count(), 5);
    let snap = g.snapshot_for(&[ChunkCoord::new(1, 0, 0)]);
    assert_ne!(snap.generation(), g.generation());
    let mut coords = snap.sorted_coords();
    coords.sort_by_key(|c| c.0.x);
    assert_eq!(
        coords,
        vec![
            ChunkCoord::new(0, 0, 0),
            ChunkCoord::new(1, 0, 0),
            ChunkCoord::new(2, 0, 0)
        ]
    );
    let c = ChunkCoord::new(1, 0, 0);
    assert!(
        snap.chunk(c)
            .unwrap()
            .cells
            .shares_storage_with(&g.chunk(c).unwrap().cells)
    );
    // Editing the live grid afterwards leaves the snapshot unchanged.
    g.edit_region(
        CellBox::new(IVec3::new(40, 0, 0), IVec3::new(41, 1, 1)),
        |_, _| Cell::EMPTY,
    )
    .unwrap();
    assert_eq!(snap.cell(CellCoord::new(40, 0, 0)), rock());
    assert_eq!(g.cell(CellCoord::new(40, 0, 0)), Cell::EMPTY);
}

#[test]
fn full_refresh_on_expired_removal_history() {
    let mut g = Grid::new();
    let (generation, start) = (g.generation(), g.revision());
    // More removals than the log retains.
    for i in 0..(REMOVAL_LOG_CAPACITY as i32 + 1) {
        let b = CellBox::new(IVec3::new(i * 32, 0, 0), IVec3::new(i * 32 + 1, 1, 1));
        g.edit_region(b, |_, _| rock()).unwrap();
        g.edit_region(b, |_, _| Cell::EMPTY).unwrap();
    }
    assert_eq!(g.changes_since(generation, start), Changes::FullRefresh);
    // A reader that kept up is still answered incrementally.
    let recent = g.revision() - 1;
    assert!(matches!(
        g.changes_since(generation, recent),
        Changes::Incremental { .. }
    ));
}

#[test]
fn removed_chunk_is_reported_to_a_reader_that_was_behind() {
    let mut g = Grid::new();
    let b = CellBox::new(IVec3::new(0, 0, 0), IVec3::new(1, 1, 1));
    g.edit_region(b, |_, _| rock()).unwrap();
    let (generation, behind) = (g.generation(), g.revision());
    // Several unrelated edits, then the removal, then more edits.
    let other = CellBox::new(IVec3::new(100, 0, 0), IVec3::new(101, 1, 1));
    g.edit_region(other, |_, _| rock()).unwrap();
    g.edit_region(b, |_, _| Cell::EMPTY).unwrap();
    g.edit_region(other, |_, _| Cell::new(Material::DIRT, 200))
        .unwrap();
    match g.changes_since(generation, behind) {
        Changes::Incremental { changed, removed } => {
            assert_eq!(removed, vec![ChunkCoord::new(0, 0, 0)]);
            assert_eq!(changed, vec![ChunkCoord::new(3, 0, 0)]);
        }
        Changes::FullRefresh => panic!("a reader within history gets increments"),
    }
}

#[test]
fn huge_region_is_rejected_without_change() {
    let mut g = Grid::new();
    let err = g
        .edit_region(
            CellBox::new(IVec3::splat(-10_000), IVec3::splat(10_000)),
            |_, _| rock(),
        )
        .unwrap_err();
    assert!(matches!(err, GridError::RegionTooLarge { .. }));
    assert_eq!(g.revision(), 0);
}

#[test]
fn changed_extent_unions_recent_edits() {
    let mut g = Grid::new();
    g.edit_region(
        CellBox::new(IVec3::new(1, 1, 1), IVec3::new(2, 2, 2)),
        |_, _| rock(),
    )
    .unwrap();
    g.edit_region(
        CellBox::new(IVec3::new(5, 5, 5), IVec3::new(6, 6, 6)),
        |_, _| rock(),
    )
    .unwrap();
    let coord = ChunkCoord::new(0, 0, 0);
    assert_eq!(
        g.changed_extent_since(coord, 0),
        CellBox::new(IVec3::new(1, 1, 1), IVec3::new(6, 6, 6))
    );
    assert_eq!(
        g.changed_extent_since(coord, 1),
        CellBox::new(IVec3::new(5, 5, 5), IVec3::new(6, 6, 6))
    );
}
