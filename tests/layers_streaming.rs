//! Layers on a streaming world (spec §14 over §12): a 1,048,576-cell world
//! whose document holds 500 operations spread over 40 km. Moving one far
//! operation re-derives only its closure, from the columns its file holds
//! (the spilled derived columns are the cache); the layers are saved in the
//! streaming file and the far operation is still editable after reopening.

mod common;

use common::layer_record::rewrite_record;
use strata::app::streamed_world::StreamedWorld;
use strata::io::world::streaming_file::StreamingFileError;
use strata::script::format::StrokeAction;
use strata::script::{Script, ScriptRunner};
use strata::terrain::command::document_action::{DocumentAction, WorldDocument};
use strata::terrain::command::edit_command::{CommandError, EditCommand};
use strata::terrain::document::base::BaseColumns;
use strata::terrain::document::derive::derive_whole;
use strata::terrain::document::layers::LayerStack;
use strata::terrain::document::operation::{ColumnRect, OperationId};
use strata::terrain::generation::generate::GeneratorSettings;
use strata::terrain::generation::generated_columns::GeneratedColumns;
use strata::terrain::storage::coords::ColumnCoord;
use strata::terrain::storage::grid::Grid;
use strata::terrain::streaming::column_source::ColumnSource;
use strata::terrain::streaming::residency::Residency;

const SIZE_CELLS: u32 = 1 << 20;
/// Operations on a 25 × 20 lattice, 400 cells (1.6 km) apart: 40 km by 32 km.
const COLUMNS_OF_OPS: usize = 25;
const SPACING_CELLS: i32 = 400;
const OPERATIONS: usize = 500;

fn settings() -> GeneratorSettings {
    GeneratorSettings {
        seed: 23,
        size_cells: SIZE_CELLS,
    }
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "strata-layers-streaming-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Lattice corner of operation `i`, cells.
fn corner(i: usize) -> (i32, i32) {
    let x = (i % COLUMNS_OF_OPS) as i32 * SPACING_CELLS + 100;
    let z = (i / COLUMNS_OF_OPS) as i32 * SPACING_CELLS + 100;
    (x, z)
}

/// 490 fills and, every 50th, a radius-24 stamp, one per lattice point.
fn build_script() -> String {
    let entries: Vec<String> = (0..OPERATIONS)
        .map(|i| {
            let (x, z) = corner(i);
            if i % 50 == 49 {
                format!(
                    r#"{{"frame": {i}, "tool": "stamp", "stamp": "mesa.png",
                        "centre_xz": [{}, {}], "radius_cells": 24,
                        "height_scale_cells": 16, "mode": "raise_to"}}"#,
                    x * 4,
                    z * 4
                )
            } else {
                format!(
                    r#"{{"frame": {i}, "tool": "fill", "region_min": [{x}, 40, {z}],
                        "region_max": [{}, 48, {}], "material": "snow"}}"#,
                    x + 8,
                    z + 8
                )
            }
        })
        .collect();
    format!(
        r#"{{"strokes": [{{"frame": 0, "tool": "layer", "action": "add", "layer": "Town"}}, {}]}}"#,
        entries.join(", ")
    )
}

/// A streaming world being edited: its grid, residency and script runner
/// (whose session keeps the document).
struct Session {
    world: StreamedWorld,
    grid: Grid,
    residency: Residency,
    runner: ScriptRunner,
}

impl Session {
    fn over(world: StreamedWorld) -> Session {
        let grid = Grid::streaming();
        let residency = world.residency(1 << 30);
        let script = Script::parse(r#"{"strokes": []}"#, "empty").unwrap();
        let mut runner = ScriptRunner::for_script(&script, &grid, world.generator());
        runner.session.restore_document(world.document());
        Session {
            world,
            grid,
            residency,
            runner,
        }
    }

    /// Runs `action`, loading the columns a refusal names and running it
    /// again (as a replay does); returns how many columns were loaded.
    fn run(&mut self, action: &StrokeAction) -> usize {
        let mut loaded = 0;
        loop {
            match self.runner.run(&mut self.grid, action) {
                Err(e) if e.missing_columns().is_some() => {
                    let missing = e.missing_columns().unwrap().to_vec();
                    loaded += missing.len();
                    self.residency.load_now(&mut self.grid, missing).unwrap();
                }
                other => {
                    other.unwrap();
                    return loaded;
                }
            }
        }
    }

    /// Runs every entry of the script `text` (stamps from the shipped
    /// folder).
    fn run_script(&mut self, text: &str) {
        let stamps = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/stamps");
        for entry in &Script::parse_in(text, "t", Some(stamps)).unwrap().strokes {
            self.run(&entry.action);
        }
    }

    /// Saves the world with its layers to `path` (its recovery file goes)
    /// and returns the saved document.
    fn save_to(&mut self, path: &std::path::Path) -> WorldDocument {
        let document = self.runner.session.document_snapshot().unwrap();
        self.world
            .save(&mut self.residency, &self.grid, path, None, Some(&document))
            .unwrap();
        self.world.remove_recovery();
        document
    }

    fn act(&mut self, action: DocumentAction) -> usize {
        self.run(&StrokeAction::Command(EditCommand::Document(Box::new(
            action,
        ))))
    }

    /// Spills every edited column and evicts every column: nothing is
    /// resident and the file's pending rows hold the derived cells.
    fn evict_all(&mut self) {
        let resident: Vec<ColumnCoord> = self.residency.column_states().map(|(c, _)| c).collect();
        self.residency.evict(&mut self.grid, &resident);
        self.residency.flush_spills().unwrap();
        assert_eq!(self.residency.resident_count(), 0);
    }

    fn stack(&self) -> &LayerStack {
        &self.runner.session.document.stack
    }

    /// Loads `columns` and checks each holds exactly the base plus
    /// `stack`'s operations derived whole over the base of `around`.
    /// Returns how many of them differ from the base (the operations
    /// really changed them).
    fn check_columns(
        &mut self,
        columns: &[ColumnCoord],
        stack: &LayerStack,
        around: ColumnRect,
    ) -> usize {
        let missing: Vec<ColumnCoord> = columns
            .iter()
            .copied()
            .filter(|c| !self.grid.is_column_resident(*c))
            .collect();
        self.residency.load_now(&mut self.grid, missing).unwrap();
        let source = GeneratedColumns::new(&settings());
        let base = BaseColumns::kept_chunks(
            around
                .columns()
                .flat_map(|c| source.load_column(c).unwrap()),
        );
        let (reference, _) = derive_whole(&base, stack);
        let base = base.whole();
        let mut changed = 0;
        for &c in columns {
            let hashes = |g: &Grid| -> Vec<(i32, u64)> {
                g.column_chunks(c)
                    .iter()
                    .filter(|(_, cells)| !cells.is_all_empty())
                    .map(|(k, cells)| (k.0.y, cells.content_hash()))
                    .collect()
            };
            assert_eq!(hashes(&self.grid), hashes(&reference), "column {c:?}");
            changed += usize::from(hashes(&reference) != hashes(&base));
        }
        changed
    }
}

/// A new world with one layer "Town" holding a snow fill at (5000, 5000)
/// cells, saved as `dir/NAME.strata`: the file and its document.
fn saved_town(dir: &std::path::Path, name: &str) -> (std::path::PathBuf, WorldDocument) {
    let mut s = Session::over(StreamedWorld::new(&settings(), dir).unwrap());
    s.run_script(
        r#"{"strokes": [{"frame": 0, "tool": "layer", "action": "add", "layer": "Town"},
        {"frame": 1, "tool": "fill", "region_min": [5000, 40, 5000],
         "region_max": [5008, 48, 5008], "material": "snow"}]}"#,
    );
    let path = dir.join(format!("{name}.strata"));
    let document = s.save_to(&path);
    (path, document)
}

/// The id of the stamp at lattice point `i` (the layer add is not an
/// operation; operations are numbered from 1 in order).
fn op_id(i: usize) -> OperationId {
    OperationId(i as u32 + 1)
}

/// `r` grown by a chunk column's width on every side: enough base for
/// the operations' halos.
fn grown(r: ColumnRect) -> ColumnRect {
    let by = glam::IVec2::splat(32);
    ColumnRect {
        min: r.min - by,
        max: r.max + by,
    }
}

/// A stack of one layer holding only `ops` of `from`.
fn only(from: &LayerStack, ops: &[OperationId]) -> LayerStack {
    let mut stack = LayerStack::default();
    stack.add_layer("Only").unwrap();
    for id in ops {
        let (_, op) = from.operation(*id).unwrap();
        stack.add_operation(op.kind().clone()).unwrap();
    }
    stack
}

#[test]
fn a_far_operation_of_500_moves_by_its_closure_saves_and_reopens_editable() {
    let dir = scratch("far");
    let world = StreamedWorld::new(&settings(), &dir).unwrap();
    let mut s = Session::over(world);
    s.run_script(&build_script());
    assert_eq!(s.stack().operation_count(), OPERATIONS);
    s.evict_all();

    // The far stamp: lattice point 499, 38 km from the origin.
    let far = OPERATIONS - 1;
    let id = op_id(far);
    let (_, op) = s.stack().operation(id).unwrap();
    let old_footprint = op.footprint();
    let loaded = s.act(DocumentAction::MoveOperation(
        id,
        glam::DVec2::new(200.0, 0.0),
    ));
    let derive = s.runner.session.document.last_derive.unwrap();
    eprintln!(
        "moved operation {} of {OPERATIONS}: {} dirty columns, {} applied, {:.1} ms, {loaded} columns loaded",
        id.0, derive.dirty_columns, derive.applied_operations, derive.elapsed_ms
    );
    // Only the stamp itself: no other operation meets its old or new place.
    assert_eq!(derive.applied_operations, 1);
    let (_, moved) = s.stack().operation(id).unwrap();
    let new_footprint = moved.footprint();
    let dirty: Vec<ColumnCoord> = old_footprint
        .columns()
        .chain(new_footprint.columns())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(derive.dirty_columns, dirty.len());
    assert_eq!(
        loaded,
        dirty.len(),
        "only the closure's columns were loaded"
    );
    let around = grown(old_footprint.union(&new_footprint));
    let moved_stack = only(s.stack(), &[id]);
    let changed = s.check_columns(&dirty, &moved_stack, around);
    assert!(
        changed > 0 && changed < dirty.len(),
        "{changed} of {}",
        dirty.len()
    );

    // Save, reopen: the far stamp is still an operation, and moving it back
    // restores the cells it had.
    let path = dir.join("far.strata");
    let document = s.save_to(&path);
    drop(s);
    let reopened = StreamedWorld::open(&path).unwrap();
    assert_eq!(reopened.stale_columns, (0, 0));
    let mut s = Session::over(reopened);
    assert_eq!(s.stack().operation_count(), OPERATIONS);
    assert_eq!(*s.stack(), document.stack);
    s.act(DocumentAction::MoveOperation(
        id,
        glam::DVec2::new(-200.0, 0.0),
    ));
    assert_eq!(
        s.runner
            .session
            .document
            .last_derive
            .as_ref()
            .unwrap()
            .applied_operations,
        1
    );
    let back_stack = only(s.stack(), &[id]);
    assert!(s.check_columns(&dirty, &back_stack, around) > 0);
    // A fill far from the stamp was never touched: its column holds base
    // plus that fill.
    let fill = op_id(0);
    let (_, f) = s.stack().operation(fill).unwrap();
    let fill_columns: Vec<ColumnCoord> = f.footprint().columns().collect();
    let fill_around = grown(f.footprint());
    let fill_stack = only(s.stack(), &[fill]);
    assert_eq!(s.check_columns(&fill_columns, &fill_stack, fill_around), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_stale_saved_column_is_derived_again_on_opening() {
    let dir = scratch("stale");
    let world = StreamedWorld::new(&settings(), &dir).unwrap();
    let mut s = Session::over(world);
    s.run_script(
        r#"{"strokes": [
        {"frame": 0, "tool": "layer", "action": "add", "layer": "Town"},
        {"frame": 1, "tool": "fill", "region_min": [5000, 40, 5000],
         "region_max": [5008, 48, 5008], "material": "snow"},
        {"frame": 2, "tool": "stamp", "stamp": "mesa.png", "centre_xz": [20400, 20400],
         "radius_cells": 24, "height_scale_cells": 16, "mode": "raise_to"}
    ]}"#,
    );
    let path = dir.join("stale.strata");
    s.save_to(&path);
    drop(s);
    // Behind the file's back: the saved key of the fill's column no longer
    // matches (as if the fill had been edited while the file was closed).
    let conn = rusqlite::Connection::open(&path).unwrap();
    let changed = conn
        .execute(
            "UPDATE column_keys SET key = key + 1 WHERE x = 156 AND z = 156",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    // And its saved cells are wrong: the column's base cells.
    let fill_column = ColumnCoord::new(156, 156);
    drop(conn);
    {
        let file = strata::io::world::streaming_file::StreamingWorldFile::open(&path).unwrap();
        let base = GeneratedColumns::new(&settings())
            .load_column(fill_column)
            .unwrap();
        use strata::terrain::streaming::column_source::EditStore;
        file.store_edited(fill_column, &base).unwrap();
        file.save(&[], None).unwrap();
    }
    let reopened = StreamedWorld::open(&path).unwrap();
    assert_eq!(reopened.stale_columns, (1, 1));
    let mut s = Session::over(reopened);
    let stack = s.stack().clone();
    let fill = only(&stack, &[OperationId(1)]);
    let around = grown(ColumnRect::of_chunk_column(fill_column));
    assert_eq!(s.check_columns(&[fill_column], &fill, around), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_streaming_world_refuses_bake_and_seed_changes_and_changes_nothing() {
    let dir = scratch("refuse");
    let world = StreamedWorld::new(&settings(), &dir).unwrap();
    let mut s = Session::over(world);
    for action in [DocumentAction::Bake, DocumentAction::SetBaseSeed(7)] {
        let before = s.stack().clone();
        let e = s
            .runner
            .session
            .apply(&mut s.grid, &EditCommand::Document(Box::new(action)))
            .unwrap_err();
        assert!(
            matches!(e, CommandError::NoDocument(m) if m.contains("streaming world")),
            "{e}"
        );
        assert_eq!(*s.stack(), before);
    }
    s.world.remove_recovery();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn damaged_or_foreign_layers_in_a_streaming_file_are_refused_and_change_nothing() {
    let dir = scratch("hostile");
    let (good, document) = saved_town(&dir, "good");
    let opened = StreamedWorld::open(&good).unwrap();
    assert_eq!(opened.document().stack, document.stack);
    drop(opened);

    type Damage = (&'static str, Box<dyn Fn(&std::path::Path)>, &'static str);
    let cases: Vec<Damage> = vec![
        (
            "off-lattice",
            Box::new(|p| {
                rewrite_record(p, |v| {
                    v["layers"][0]["operations"][0]["does"]["region"]["max"][0] =
                        serde_json::json!(2_000_000_000);
                })
            }),
            "operation 1 of layer \"Town\"",
        ),
        (
            "foreign base",
            Box::new(|p| {
                let conn = rusqlite::Connection::open(p).unwrap();
                conn.execute(
                    "UPDATE meta SET value = '{\"seed\": 24, \"size_cells\": 1048576}' \
                     WHERE key = 'generator'",
                    [],
                )
                .unwrap();
            }),
            // The base check covers the file's terrain settings too.
            "does not match the base check",
        ),
        (
            "base chunk",
            Box::new(|p| {
                let conn = rusqlite::Connection::open(p).unwrap();
                conn.execute(
                    "INSERT INTO base_chunks (x, y, z, hash, data) VALUES (1, 0, 1, 0, x'00')",
                    [],
                )
                .unwrap();
            }),
            "base chunk (1, 0, 1)",
        ),
        (
            "not json",
            Box::new(|p| {
                let conn = rusqlite::Connection::open(p).unwrap();
                let frame = zstd::bulk::compress(b"{not json", 3).unwrap();
                conn.execute(
                    "UPDATE document SET data = ?1 WHERE name = 'record'",
                    [frame],
                )
                .unwrap();
            }),
            "the layer record",
        ),
    ];
    for (name, damage, expected) in cases {
        let path = dir.join(format!("{}.strata", name.replace(' ', "-")));
        std::fs::copy(&good, &path).unwrap();
        damage(&path);
        let e = StreamedWorld::open(&path).unwrap_err();
        assert!(
            matches!(e, StreamingFileError::BadLayers { .. }),
            "{name}: {e:?}"
        );
        let e = e.to_string();
        assert!(e.contains(expected), "{name}: {e}");
        assert!(
            e.contains(&*path.to_string_lossy()),
            "{name} names the file: {e}"
        );
        let file = strata::io::world::streaming_file::StreamingWorldFile::open(&path).unwrap();
        assert_eq!(file.pending_count().unwrap(), 0, "{name}: nothing written");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unsaved_spills_reopen_with_the_layers_of_their_autosave_and_drop_with_them() {
    let dir = scratch("pending");
    let world = StreamedWorld::new(&settings(), &dir).unwrap();
    let mut s = Session::over(world);
    let fill = |frame: u32, x: i32| {
        format!(
            r#"{{"frame": {frame}, "tool": "fill", "region_min": [{x}, 40, 5000],
                "region_max": [{}, 48, 5008], "material": "snow"}}"#,
            x + 8
        )
    };
    let text = format!(
        r#"{{"strokes": [{{"frame": 0, "tool": "layer", "action": "add", "layer": "Town"}}, {}]}}"#,
        fill(1, 5000)
    );
    s.run_script(&text);
    let path = dir.join("pending.strata");
    let saved = s.save_to(&path);
    drop(s);

    // Reopened, a second fill, spilled and autosaved, then a crash.
    let mut s = Session::over(StreamedWorld::open(&path).unwrap());
    s.run_script(&format!(r#"{{"strokes": [{}]}}"#, fill(0, 6000)));
    s.evict_all();
    let autosaved = s.runner.session.document_snapshot().unwrap();
    assert_eq!(autosaved.stack.operation_count(), 2);
    s.world.file.store_pending_document(&autosaved).unwrap();
    drop(s);

    let recovered = StreamedWorld::open(&path).unwrap();
    assert!(recovered.recovered_columns > 0);
    assert_eq!(recovered.document().stack, autosaved.stack);
    let mut s = Session::over(recovered);
    // The second fill is an operation again: it moves by its closure.
    s.act(DocumentAction::MoveOperation(
        OperationId(2),
        glam::DVec2::new(0.0, 200.0),
    ));
    let derive = s.runner.session.document.last_derive.unwrap();
    assert_eq!(derive.applied_operations, 1);
    drop(s);

    // "Don't recover": the spills and their layers go together.
    let file = strata::io::world::streaming_file::StreamingWorldFile::open(&path).unwrap();
    assert!(file.discard_pending().unwrap() > 0);
    drop(file);
    let reopened = StreamedWorld::open(&path).unwrap();
    assert_eq!(reopened.recovered_columns, 0);
    assert_eq!(reopened.document().stack, saved.stack);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn save_as_of_an_opened_world_leaves_the_opened_file_as_it_was() {
    let dir = scratch("save-as");
    let (src, saved) = saved_town(&dir, "src");
    // What the file holds: its saved columns and its layer rows.
    let contents = |path: &std::path::Path| -> Vec<(String, i64, i64, Vec<u8>)> {
        let conn = rusqlite::Connection::open(path).unwrap();
        let mut rows = Vec::new();
        for (table, sql) in [
            ("columns", "SELECT x, z, data FROM columns ORDER BY x, z"),
            (
                "pending",
                "SELECT x, z, data FROM pending_columns ORDER BY x, z",
            ),
            (
                "document",
                "SELECT part, 0, data FROM document ORDER BY name, part",
            ),
        ] {
            let mut stmt = conn.prepare(sql).unwrap();
            let found = stmt
                .query_map([], |r| {
                    Ok((table.to_string(), r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .unwrap();
            rows.extend(found.map(Result::unwrap));
        }
        rows
    };
    let before = contents(&src);

    let mut s = Session::over(StreamedWorld::open(&src).unwrap());
    s.run_script(
        r#"{"strokes": [{"frame": 0, "tool": "fill", "region_min": [6000, 40, 5000],
         "region_max": [6008, 48, 5008], "material": "mud"}]}"#,
    );
    s.evict_all();
    let dst = dir.join("dst.strata");
    let document = s.runner.session.document_snapshot().unwrap();
    s.world
        .save(&mut s.residency, &s.grid, &dst, None, Some(&document))
        .unwrap();
    drop(s);
    assert!(
        contents(&src) == before,
        "the opened file holds what it held"
    );
    let reopened = StreamedWorld::open(&src).unwrap();
    assert_eq!(reopened.recovered_columns, 0);
    assert_eq!(reopened.document().stack, saved.stack);
    let copy = StreamedWorld::open(&dst).unwrap();
    assert_eq!(copy.recovered_columns, 0);
    assert_eq!(copy.document().stack.operation_count(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A crash after an unsaved edit spilled but before any autosave kept the
/// layers: the spilled column is derived again from the layers there are,
/// so no cell shows that the layers do not make.
#[test]
fn a_spill_without_its_layers_reopens_as_the_layers_make_it() {
    let dir = scratch("orphan-spill");
    let (path, saved) = saved_town(&dir, "orphan");
    let mut s = Session::over(StreamedWorld::open(&path).unwrap());
    s.run_script(
        r#"{"strokes": [{"frame": 0, "tool": "fill", "region_min": [7000, 40, 5000],
         "region_max": [7008, 48, 5008], "material": "mud"}]}"#,
    );
    s.evict_all();
    drop(s);
    let reopened = StreamedWorld::open(&path).unwrap();
    assert!(reopened.recovered_columns > 0);
    assert_eq!(reopened.document().stack, saved.stack);
    let mut s = Session::over(reopened);
    let mud_column = ColumnCoord::new(7000 / 32, 5000 / 32);
    let around = grown(ColumnRect::of_chunk_column(mud_column));
    // The base alone: the unsaved fill is gone with its layers.
    assert_eq!(
        s.check_columns(&[mud_column], &LayerStack::default(), around),
        0
    );
    let _ = std::fs::remove_dir_all(&dir);
}
