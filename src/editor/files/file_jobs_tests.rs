//! Unit tests of the file jobs: opening damaged files, saving and opening
//! in the background, merging an import, and a cancelled save.

use super::*;
use crate::terrain::storage::cell::{Cell, Material};
use crate::terrain::storage::coords::CellBox;
use glam::IVec3;

fn grid() -> Grid {
    let mut g = Grid::new();
    g.edit_region(CellBox::new(IVec3::ZERO, IVec3::new(70, 8, 40)), |c, _| {
        Cell::new(Material::GRASS, if c.0.y < 5 { 255 } else { 0 })
    })
    .unwrap();
    g
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-jobs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every damage "Load the rest" gets past is offered (before, only a
/// failed hash was; a chunk that did not decode was a plain error),
/// also after a journal rollback; other errors are not.
#[test]
fn every_damage_loading_the_rest_gets_past_is_offered() {
    use crate::io::world::world_file::JournalRecovery;
    use crate::terrain::storage::coords::ChunkCoord;
    let path = PathBuf::from("/tmp/w.strata");
    let coord = ChunkCoord::new(1, 0, 2);
    let damage = |i: usize| match i {
        0 => WorldFileError::BadChunk {
            path: path.clone(),
            coords: vec![coord],
        },
        1 => WorldFileError::InvalidChunk {
            path: path.clone(),
            coord,
            reason: "unknown tag 9".into(),
        },
        2 => WorldFileError::ChunkTooLarge {
            path: path.clone(),
            coord,
            claimed_bytes: Some(1 << 40),
        },
        _ => WorldFileError::WorldHashMismatch {
            path: path.clone(),
            stored: 1,
            actual: 2,
        },
    };
    for i in 0..4 {
        let rolled_back = WorldFileError::AfterJournalRollback {
            recovery: Box::new(JournalRecovery {
                path: path.clone(),
                journal: path.with_extension("strata-journal"),
                file_copy: path.with_extension("before-recovery"),
                journal_copy: path.with_extension("before-recovery.journal"),
            }),
            source: Box::new(damage(i)),
        };
        for e in [damage(i), rolled_back] {
            let text = e.to_string();
            match world_file_error(e) {
                JobError::BadChunks { path: p, message } => {
                    assert_eq!(p, path);
                    assert_eq!(message, text);
                }
                _ => panic!("not offered: {text}"),
            }
        }
    }
    let missing = WorldFileError::NotFound { path: path.clone() };
    assert!(matches!(world_file_error(missing), JobError::Failed(_)));
}

#[test]
fn save_then_open_in_the_background_round_trips_the_world() {
    let g = grid();
    let path = scratch("roundtrip").join("w.strata");
    let state = crate::editor::files::document::grid_state(&g);
    let saved = save_world(
        path.clone(),
        SaveBatch::full(&g),
        state.clone(),
        WorldMeta::default(),
        None,
    )
    .wait();
    let Ok(JobOutput::Saved { state: s, .. }) = saved.output else {
        panic!("save failed: {:?}", saved.output);
    };
    assert_eq!(s.revision, state.revision);
    let opened = open_world(path.clone(), false, false, None).wait();
    let Ok(JobOutput::World(world)) = opened.output else {
        panic!("open failed: {:?}", opened.output);
    };
    assert_eq!(world.grid.content_hash(), g.content_hash());
    assert_eq!(world.path.as_deref(), Some(path.as_path()));
    assert!(world.file.is_some());
    // A recovery copy opens without a path: saving it goes to the world's file.
    let recovered = open_world(path, false, true, None).wait();
    let Ok(JobOutput::World(world)) = recovered.output else {
        panic!("open failed");
    };
    assert!(world.recovered && world.path.is_none() && world.file.is_none());
}

#[test]
fn merging_an_import_replaces_exactly_the_columns_it_covers() {
    let mut world = flat_world(128, 40).unwrap();
    let before = world.content_hash();
    let imported = Grid::from_chunks([(
        ChunkCoord::new(1, 0, 2),
        ChunkCells::Uniform(Cell::full(Material::SAND)),
    )]);
    let changed = merge_import(&mut world, &imported);
    // Column (1, 2) had chunk rows 0 and 1: row 0 replaced, row 1 removed.
    assert_eq!(changed, 2);
    assert!(matches!(
        world.chunk_cells(ChunkCoord::new(1, 0, 2)),
        ChunkCells::Uniform(c) if c == Cell::full(Material::SAND)
    ));
    assert!(world.chunk(ChunkCoord::new(1, 1, 2)).is_none());
    assert!(
        world.chunk(ChunkCoord::new(1, 1, 1)).is_some(),
        "other columns untouched"
    );
    assert_ne!(world.content_hash(), before);
}

#[test]
fn a_cancelled_save_keeps_the_previous_file() {
    let mut g = grid();
    let path = scratch("cancel").join("w.strata");
    let (file, first) = WorldFile::save_full(&path, &g, &WorldMeta::default()).unwrap();
    g.edit_region(CellBox::new(IVec3::ZERO, IVec3::new(64, 2, 2)), |_, _| {
        Cell::EMPTY
    })
    .unwrap();
    let batch = file.prepare_save(&g);
    // Cancel before the worker starts encoding: no chunk is written.
    let progress = Arc::new(Progress::new());
    progress.cancel();
    let mut file = file;
    let result = file.write_batch_with_progress(batch, &WorldMeta::default(), &progress);
    assert!(matches!(result, Err(WorldFileError::Cancelled { .. })));
    let (reloaded, _, _) =
        crate::io::world::world_file::load(&path, LoadOptions::default()).unwrap();
    assert_eq!(reloaded.content_hash(), first.world_hash);
    assert_ne!(g.content_hash(), first.world_hash);
}
