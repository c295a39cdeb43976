//! The editor's file session without a window: autosave writes a recovery
//! copy that loads to the edited world, a save removes it, and actions that
//! would lose unsaved changes wait for an answer.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use glam::{DVec3, IVec3};

use strata::camera::Camera;
use strata::editor::files::document::{Document, RecentFiles, recovery_path_for};
use strata::editor::files::file_action::FileAction;
use strata::editor::files::file_session::{FileSession, SessionEvent};
use strata::io::world::world_file::{LoadOptions, WorldFile, WorldMeta, load};
use strata::terrain::generation::generate::flat_world;
use strata::terrain::storage::cell::Cell;
use strata::terrain::storage::coords::CellBox;
use strata::terrain::storage::grid::Grid;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-session-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn camera() -> Camera {
    Camera::new(DVec3::new(100.0, 300.0, 100.0), 30.0, -40.0)
}

/// Polls until the running job finished (or 30 s passed).
fn settle(session: &mut FileSession, grid: &mut Grid) -> Option<SessionEvent> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let event = session.poll(grid, &camera(), Instant::now());
        if event.is_some() || !session.busy() {
            return event;
        }
        assert!(Instant::now() < deadline, "job did not finish");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn dig(grid: &mut Grid) {
    grid.edit_region(
        CellBox::new(IVec3::new(10, 20, 10), IVec3::new(20, 32, 20)),
        |_, _| Cell::EMPTY,
    )
    .unwrap();
}

fn opened_session(dir: &std::path::Path) -> (FileSession, Grid, PathBuf) {
    let path = dir.join("world.strata");
    let grid = flat_world(64, 32).unwrap();
    let (file, _) = WorldFile::save_full(&path, &grid, &WorldMeta::default()).unwrap();
    let doc = Document::opened(path.clone(), Some(file), &grid, WorldMeta::default());
    let session = FileSession::new(doc, RecentFiles::load(Some(dir.join("recent.json"))));
    (session, grid, path)
}

#[test]
fn autosave_writes_a_loadable_recovery_copy_and_a_save_removes_it() {
    let dir = scratch("autosave");
    let (mut session, mut grid, path) = opened_session(&dir);
    let recovery = recovery_path_for(&path);
    // Nothing to autosave while the world equals its file.
    session.menu.autosave_minutes = 1e-6;
    assert!(settle(&mut session, &mut grid).is_none());
    assert!(!session.busy() && !recovery.exists());

    dig(&mut grid);
    assert!(session.doc.is_dirty(&grid));
    std::thread::sleep(Duration::from_millis(5));
    session.poll(&mut grid, &camera(), Instant::now());
    assert!(session.busy(), "an autosave started");
    settle(&mut session, &mut grid);
    let (recovered, meta, _) = load(&recovery, LoadOptions::default()).unwrap();
    assert_eq!(recovered.content_hash(), grid.content_hash());
    assert!(meta.camera.is_some(), "the recovery copy keeps the camera");
    // The world file itself still holds the state before the edit.
    let (on_disk, _, _) = load(&path, LoadOptions::default()).unwrap();
    assert_ne!(on_disk.content_hash(), grid.content_hash());
    // The recovery copy is newer than the world: offered on the next start.
    assert!(strata::editor::files::document::newer_recovery(&recovery, Some(&path)).is_some());

    assert!(
        session
            .handle(FileAction::Save, &mut grid, &camera())
            .is_none()
    );
    settle(&mut session, &mut grid);
    assert!(!session.doc.is_dirty(&grid));
    assert!(!recovery.exists(), "saving removes the recovery copy");
    let (on_disk, _, _) = load(&path, LoadOptions::default()).unwrap();
    assert_eq!(on_disk.content_hash(), grid.content_hash());
    assert_eq!(session.recent.paths()[0], path);
}

#[test]
fn opening_with_unsaved_changes_waits_for_an_answer_and_a_clean_open_replaces_the_world() {
    let dir = scratch("open");
    let (mut session, mut grid, path) = opened_session(&dir);
    let saved_hash = grid.content_hash();
    dig(&mut grid);
    let edited_hash = grid.content_hash();
    // Asks first: nothing runs, the grid is untouched.
    assert!(
        session
            .handle(FileAction::Open(path.clone()), &mut grid, &camera())
            .is_none()
    );
    assert!(!session.busy());
    assert!(
        !session.request_close(&mut grid, &camera()),
        "closing asks too"
    );
    assert_eq!(grid.content_hash(), edited_hash);

    // A clean session opens at once, and the opened world is the saved one.
    let mut clean = flat_world(64, 32).unwrap();
    let mut other = FileSession::new(
        Document::untitled(&clean, WorldMeta::default()),
        RecentFiles::load(None),
    );
    other.handle(FileAction::Open(path.clone()), &mut clean, &camera());
    assert!(other.busy());
    let Some(SessionEvent::ReplaceWorld(world)) = settle(&mut other, &mut clean) else {
        panic!("expected a world");
    };
    assert_eq!(world.grid.content_hash(), saved_hash);
    assert!(
        world.prepared.is_some(),
        "the first view is meshed off the editor thread"
    );
    assert_eq!(other.doc.path(), Some(path.as_path()));
    assert!(!other.doc.is_dirty(&world.grid));
    let mut opened = world.grid;
    assert!(
        other.request_close(&mut opened, &camera()),
        "nothing unsaved: closes at once"
    );
}

#[test]
fn a_missing_file_reports_an_error_and_keeps_the_open_world() {
    let dir = scratch("missing");
    let (mut session, mut grid, _) = opened_session(&dir);
    let before = grid.content_hash();
    session.handle(
        FileAction::Open(dir.join("nope.strata")),
        &mut grid,
        &camera(),
    );
    assert!(settle(&mut session, &mut grid).is_none());
    assert_eq!(grid.content_hash(), before);
    assert!(!session.doc.is_dirty(&grid));
}

#[test]
fn a_heightmap_too_large_to_build_whole_is_imported_as_a_streaming_world() {
    use strata::editor::files::file_jobs::ImportPlacement;
    use strata::io::heightmap::heightmap_import::HeightmapSettings;
    let dir = scratch("import-streams");
    let (mut session, mut grid, _) = opened_session(&dir);
    // A real PNG header of 16,384² pixels (no pixel data is read to decide).
    let big = dir.join("big.png");
    let tiny = dir.join("tiny.png");
    image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::from_raw(1, 1, vec![7])
        .unwrap()
        .save(&tiny)
        .unwrap();
    let mut bytes = std::fs::read(&tiny).unwrap();
    bytes[16..20].copy_from_slice(&16384u32.to_be_bytes());
    bytes[20..24].copy_from_slice(&16384u32.to_be_bytes());
    let crc = crc32fast::hash(&bytes[12..29]);
    bytes[29..33].copy_from_slice(&crc.to_be_bytes());
    std::fs::write(&big, bytes).unwrap();
    let settings = HeightmapSettings::default();
    let event = session.handle(
        FileAction::Import(big.clone(), settings.clone(), ImportPlacement::NewWorld),
        &mut grid,
        &camera(),
    );
    assert!(
        matches!(&event, Some(SessionEvent::ImportStreamed(p, s)) if *p == big && *s == settings),
        "{event:?}"
    );
    assert!(!session.busy(), "no whole import was started");
    // A small map is built whole, as before.
    let event = session.handle(
        FileAction::Import(tiny, settings, ImportPlacement::NewWorld),
        &mut grid,
        &camera(),
    );
    assert!(event.is_none(), "{event:?}");
    assert!(session.busy(), "the whole import runs as a job");
    settle(&mut session, &mut grid);
}

/// A chunk that does not decode (an unknown storage tag), not only one
/// that fails its hash, is offered to be left out; loading the rest opens
/// every other chunk, and its notice is not an error (it was titled
/// "Error" in red).
#[test]
fn an_undecodable_chunk_is_offered_to_be_left_out_and_the_rest_opens() {
    let dir = scratch("undecodable");
    let (_, _, path) = opened_session(&dir);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let (x, y, z): (i32, i32, i32) = conn
        .query_row("SELECT x, y, z FROM chunks LIMIT 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    let stored: i64 = conn
        .query_row("SELECT COUNT(*) FROM chunks", [], |r| r.get(0))
        .unwrap();
    conn.execute(
        "UPDATE chunks SET data = ?1 WHERE x = ?2 AND y = ?3 AND z = ?4",
        rusqlite::params![vec![9u8, 0, 0], x, y, z],
    )
    .unwrap();
    drop(conn);

    let mut grid = flat_world(64, 8).unwrap();
    let mut session = FileSession::new(
        Document::untitled(&grid, WorldMeta::default()),
        RecentFiles::load(None),
    );
    session.handle(FileAction::Open(path.clone()), &mut grid, &camera());
    assert!(
        settle(&mut session, &mut grid).is_none(),
        "not opened whole"
    );
    assert_eq!(session.menu.offered_bad_chunks(), Some(path.as_path()));

    session.handle(
        FileAction::OpenSkippingBadChunks(path.clone()),
        &mut grid,
        &camera(),
    );
    let Some(SessionEvent::ReplaceWorld(world)) = settle(&mut session, &mut grid) else {
        panic!("the rest did not open");
    };
    assert_eq!(world.grid.chunk_count() as i64, stored - 1);
    let (text, error) = session.menu.message().expect("a notice");
    assert!(!error, "{text}");
    assert!(
        text.contains("left out 1 damaged") && text.contains("world.strata"),
        "{text}"
    );
}
