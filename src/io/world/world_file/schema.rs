//! The file's schema: creating the tables of a new file, recognising a
//! Strata world when opening one (SQLite header, truncation, application id,
//! tables), and the `meta` table with [`WorldMeta`]. Kept apart from the
//! load and save flow so the format's rules are read in one place.

use crate::io::world::world_file::JournalRecovery;
use std::collections::HashMap;
use std::fs::File;
use std::io::{ErrorKind, Read as _};
use std::path::Path;
use std::time::Duration;

use glam::DVec3;
use rusqlite::{Connection, OpenFlags, params};

use super::codec::MAX_BLOB_BYTES;
use super::error::{WorldFileError, io_err, sqlite_err};
use super::journal::{keep_copies_before_rollback, noting};
use crate::camera::{Camera, MAX_PITCH_DEG};
use crate::io::heightmap::world_georeference::WorldGeoreference;
use crate::terrain::generation::generate::GeneratorSettings;
use crate::terrain::materials::MaterialLibrary;

/// The format this build writes, and the newest it reads.
pub const FORMAT_VERSION: u32 = 3;

/// The format a world without its own material library is written as
/// (format 3 only adds the library), so older builds still open it.
pub const FORMAT_VERSION_WITHOUT_MATERIALS: u32 = 2;

/// `PRAGMA application_id` of a world file: the bytes `"STRA"`.
pub const APPLICATION_ID: i32 = 0x5354_5241;

/// SQLite page size of new files. Blobs average about 2 KiB; 4 KiB pages
/// keep the slack per row small.
const PAGE_SIZE: u32 = 4096;

/// The tables of a format-1 file.
macro_rules! format_1_tables {
    () => {
        "
CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE chunks (
    x INTEGER NOT NULL,
    y INTEGER NOT NULL,
    z INTEGER NOT NULL,
    hash INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (x, y, z)
);
"
    };
}

/// The tables format 2 adds: the world document
/// ([`super::document`]).
macro_rules! document_tables {
    () => {
        "
CREATE TABLE document (
    name TEXT NOT NULL,
    part INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (name, part)
);
CREATE TABLE base_chunks (
    x INTEGER NOT NULL,
    y INTEGER NOT NULL,
    z INTEGER NOT NULL,
    hash INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (x, y, z)
);
CREATE TABLE column_keys (
    x INTEGER NOT NULL,
    z INTEGER NOT NULL,
    key INTEGER NOT NULL,
    PRIMARY KEY (x, z)
) WITHOUT ROWID;
"
    };
}

pub(crate) use document_tables;

/// The statements that add the document tables (format 2) to a format-1
/// file.
pub(crate) const DOCUMENT_TABLES_SQL: &str = document_tables!();

/// The tables of a new file.
const SCHEMA: &str = concat!(format_1_tables!(), document_tables!());

/// The exact schema a kind of Strata file must have: the statements that
/// create it and the tables it must hold. World files ([`WORLD_SCHEMA`]) and
/// streaming world files (`crate::io::world::streaming_file`) share the opening
/// rules and differ only in this.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FileSchema {
    /// The `CREATE` statements of a new file, exactly as SQLite stores them.
    pub(crate) sql: &'static str,
    /// The tables that must be present (named in [`WorldFileError::MissingTable`]).
    pub(crate) tables: &'static [&'static str],
}

/// The schema of a world file (format 2).
pub(crate) const WORLD_SCHEMA: FileSchema = FileSchema {
    sql: SCHEMA,
    tables: &["meta", "chunks", "document", "base_chunks", "column_keys"],
};

/// The schema of a format-1 world file (cells only): still read, and
/// given the document tables by the first save into it.
pub(crate) const WORLD_SCHEMA_V1: FileSchema = FileSchema {
    sql: format_1_tables!(),
    tables: &["meta", "chunks"],
};

/// Longest string or blob SQLite may build on a connection to an existing
/// world (`SQLITE_LIMIT_LENGTH`): just above the longest chunk blob the
/// loader reads (and far above any valid `meta` value, which are a few
/// hundred bytes at most), so no expression in a hostile file can make
/// SQLite build a huge value.
pub(super) const MAX_VALUE_BYTES: usize = MAX_BLOB_BYTES + 4096;

/// Configures a connection to an existing (so untrusted) file as SQLite
/// advises for such databases: defensive mode, untrusted schema, no triggers
/// or views, a low length limit, and cell size checks. Runs no query on the
/// file.
fn harden(conn: &Connection) -> rusqlite::Result<()> {
    use rusqlite::config::DbConfig;
    use rusqlite::limits::Limit;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER, false)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_VIEW, false)?;
    conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES as i32)?;
    conn.execute_batch("PRAGMA trusted_schema = OFF; PRAGMA cell_size_check = ON;")
}

/// One row of `sqlite_schema`: type, name, table name, and the `CREATE`
/// statement with runs of whitespace collapsed (`None` for automatic indexes).
type SchemaRow = (String, String, String, Option<String>);

/// `text` with every run of whitespace replaced by one space.
fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The `sqlite_schema` rows of `conn`, sorted (at most `limit` of them).
fn schema_rows(conn: &Connection, limit: usize) -> rusqlite::Result<Vec<SchemaRow>> {
    let mut stmt = conn.prepare(
        "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name LIMIT ?1",
    )?;
    let rows = stmt.query_map([limit as i64], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, Option<String>>(3)?
                .map(|s| collapse_whitespace(&s)),
        ))
    })?;
    rows.collect()
}

/// The schema rows of `schema`, taken from an in-memory database built from
/// its statements so they match what SQLite stores byte for byte.
fn expected_schema_rows(schema: &FileSchema) -> rusqlite::Result<Vec<SchemaRow>> {
    let conn = Connection::open_in_memory()?;
    conn.execute_batch(schema.sql)?;
    schema_rows(&conn, 16)
}

/// Checks that the file's schema is exactly `schema`, before any row is
/// read: its tables declared exactly as its statements declare them (so no
/// generated column, default or constraint that could run an expression),
/// their automatic indexes, and nothing else (no other table, index, view or
/// trigger).
///
/// # Errors
/// [`WorldFileError::MissingTable`] when one of its tables is missing, else
/// [`WorldFileError::UnexpectedSchema`] naming the first difference.
fn verify_schema(
    conn: &Connection,
    path: &Path,
    schema: &FileSchema,
) -> Result<(), WorldFileError> {
    let expected = expected_schema_rows(schema).map_err(|e| sqlite_err(path, e))?;
    // A few more rows than expected are enough to name an extra one.
    let found = schema_rows(conn, expected.len() + 8).map_err(|e| sqlite_err(path, e))?;
    for &table in schema.tables {
        if !found.iter().any(|(t, n, _, _)| t == "table" && n == table) {
            return Err(WorldFileError::MissingTable {
                path: path.to_path_buf(),
                table,
            });
        }
    }
    let unexpected = |detail: String| WorldFileError::UnexpectedSchema {
        path: path.to_path_buf(),
        detail,
    };
    for row in &found {
        let (kind, name, _, sql) = row;
        match expected.iter().find(|(k, n, _, _)| k == kind && n == name) {
            None => return Err(unexpected(format!("unexpected {kind} `{name}`"))),
            Some(want) if want != row => {
                return Err(unexpected(format!(
                    "{kind} `{name}` is declared as `{}`, not `{}`",
                    sql.as_deref().unwrap_or(""),
                    want.3.as_deref().unwrap_or("")
                )));
            }
            Some(_) => {}
        }
    }
    if let Some((kind, name, _, _)) = expected.iter().find(|e| !found.contains(e)) {
        return Err(unexpected(format!("no {kind} `{name}`")));
    }
    Ok(())
}

/// Which of `schemas` the file's schema is exactly ([`verify_schema`]), by
/// index; when none, the error for the first.
fn verify_schema_any(
    conn: &Connection,
    path: &Path,
    schemas: &[&FileSchema],
) -> Result<usize, WorldFileError> {
    let mut first_error = None;
    for (i, schema) in schemas.iter().enumerate() {
        match verify_schema(conn, path, schema) {
            Ok(()) => return Ok(i),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(
        first_error.unwrap_or_else(|| WorldFileError::UnexpectedSchema {
            path: path.to_path_buf(),
            detail: "no schema to compare with".to_string(),
        }),
    )
}

/// Sets up a fresh file: page size, no journal and no fsync (a new file is
/// written to a temporary path, and the rename is the commit), and the
/// application id.
pub(crate) fn configure_new_file(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(&format!(
        "PRAGMA page_size = {PAGE_SIZE};
         PRAGMA journal_mode = OFF;
         PRAGMA synchronous = OFF;
         PRAGMA application_id = {APPLICATION_ID};"
    ))
}

/// Creates the tables of a new file.
pub(super) fn create_tables(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(SCHEMA)
}

/// What a world file records besides its chunks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorldMeta {
    /// Generator settings, when the world was generated (absent for imports).
    pub generator: Option<GeneratorSettings>,
    /// The editor camera `[x, y, z, yaw_deg, pitch_deg]` (studs, degrees).
    pub camera: Option<[f64; 5]>,
    /// When the world was first saved (Unix seconds). A save writes the
    /// current time when this is 0.
    pub created_unix: u64,
    /// When the world was last saved (Unix seconds); every save sets it.
    pub modified_unix: u64,
    /// Where the world sits on the ground it was imported from (metres a
    /// cell, elevations, a GeoTIFF's model space); `None` for worlds that
    /// were not imported from elevation data.
    pub georeference: Option<WorldGeoreference>,
    /// How the world's materials are named and drawn (the default library
    /// for worlds that never restyled one).
    pub materials: MaterialLibrary,
}

impl WorldMeta {
    /// Metadata for a generated world.
    pub fn generated(settings: &GeneratorSettings) -> WorldMeta {
        WorldMeta {
            generator: Some(settings.clone()),
            ..WorldMeta::default()
        }
    }

    /// The stored editor camera as a [`Camera`] (default lens), if any.
    pub fn camera(&self) -> Option<Camera> {
        self.camera
            .map(|[x, y, z, yaw, pitch]| Camera::new(DVec3::new(x, y, z), yaw as f32, pitch as f32))
    }

    /// Records `camera`'s position and orientation.
    pub fn set_camera(&mut self, camera: &Camera) {
        let p = camera.pos_world;
        self.camera = Some([
            p.x,
            p.y,
            p.z,
            camera.yaw_deg as f64,
            camera.pitch_deg as f64,
        ]);
    }
}

/// Opens an existing world file read-write (so SQLite can roll back the hot
/// journal an interrupted save left) on a hardened connection (see
/// [`harden`]), runs the first query, which is where SQLite notices a file
/// that is not a database, and checks the schema ([`verify_schema`]) before
/// anything reads a row. Stale temporary files of killed full saves of
/// `path` are removed first ([`crate::io::remove_stale_temps`]).
///
/// When a hot journal lies beside the file, untouched copies of the file and
/// the journal are kept first ([`keep_copies_before_rollback`]) and returned
/// as a [`JournalRecovery`]; errors after that are wrapped in
/// [`WorldFileError::AfterJournalRollback`].
pub(super) fn open_existing(
    path: &Path,
) -> Result<(Connection, Option<JournalRecovery>), WorldFileError> {
    let (conn, _, recovery) = open_existing_as(path, &[&WORLD_SCHEMA, &WORLD_SCHEMA_V1])?;
    Ok((conn, recovery))
}

/// [`open_existing`] for a file that may have any of `schemas`: also
/// returns the index of the one it has. When it has none, the error is the
/// one for the first schema.
///
/// # Errors
/// As [`open_existing`].
pub(crate) fn open_existing_as(
    path: &Path,
    schemas: &[&FileSchema],
) -> Result<(Connection, usize, Option<JournalRecovery>), WorldFileError> {
    let md = std::fs::metadata(path).map_err(|e| io_err(path, e))?;
    if md.is_dir() {
        return Err(WorldFileError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::new(ErrorKind::IsADirectory, "is a directory"),
        });
    }
    if !md.is_file() {
        return Err(WorldFileError::NotSqlite {
            path: path.to_path_buf(),
            detail: format!(
                "it is a {}, not a file; open a .strata world file",
                crate::io::file_kind(md.file_type())
            ),
        });
    }
    // Leftovers of killed full saves of this world (best effort).
    crate::io::remove_stale_temps(path);
    if md.len() == 0 {
        return Err(WorldFileError::NotSqlite {
            path: path.to_path_buf(),
            detail: "the file is empty (0 bytes); it holds no world".to_string(),
        });
    }
    let recovery = keep_copies_before_rollback(path)?;
    let (conn, which) = noting(&recovery, connect(path, schemas))?;
    super::journal::remove_cold_journal(path);
    Ok((conn, which, recovery))
}

/// The body of [`open_existing_as`] after the journal check.
fn connect(path: &Path, schemas: &[&FileSchema]) -> Result<(Connection, usize), WorldFileError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| sqlite_err(path, e))?;
    conn.busy_timeout(Duration::from_secs(5))
        .map_err(|e| sqlite_err(path, e))?;
    harden(&conn).map_err(|e| sqlite_err(path, e))?;
    let first: Result<i32, _> = conn.query_row("PRAGMA application_id", [], |r| r.get(0));
    let application_id = match first {
        Ok(id) => id,
        Err(e) => {
            check_truncation(path)?;
            return Err(sqlite_err(path, e));
        }
    };
    check_truncation(path)?;
    if application_id != APPLICATION_ID {
        return Err(WorldFileError::NotAWorld {
            path: path.to_path_buf(),
            application_id,
        });
    }
    let which = verify_schema_any(&conn, path, schemas)?;
    Ok((conn, which))
}

/// Compares the size the SQLite header promises with the file's size.
fn check_truncation(path: &Path) -> Result<(), WorldFileError> {
    let mut header = [0u8; 100];
    let mut file = File::open(path).map_err(|e| io_err(path, e))?;
    let actual = file.metadata().map_err(|e| io_err(path, e))?.len();
    let mut read = 0;
    while read < header.len() {
        match file.read(&mut header[read..]) {
            Ok(0) => break,
            Ok(n) => read += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(io_err(path, e)),
        }
    }
    if read < header.len() || &header[..16] != b"SQLite format 3\0" {
        return Err(WorldFileError::NotSqlite {
            path: path.to_path_buf(),
            detail: super::error::not_a_world_detail(path),
        });
    }
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65536u64,
        n => n as u64,
    };
    let pages = u32::from_be_bytes([header[28], header[29], header[30], header[31]]) as u64;
    // The in-header page count is valid when the change counter (offset 24)
    // equals the version-valid-for number (offset 92), as SQLite writes it.
    let valid = header[24..28] == header[92..96];
    let expected = page_size * pages;
    if valid && expected > actual {
        return Err(WorldFileError::Truncated {
            path: path.to_path_buf(),
            expected_bytes: expected,
            actual_bytes: actual,
        });
    }
    Ok(())
}

/// Checks that `table` exists.
pub(super) fn require_table(
    conn: &Connection,
    path: &Path,
    table: &'static str,
) -> Result<(), WorldFileError> {
    let n: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [table],
            |r| r.get(0),
        )
        .map_err(|e| sqlite_err(path, e))?;
    if n == 0 {
        return Err(WorldFileError::MissingTable {
            path: path.to_path_buf(),
            table,
        });
    }
    Ok(())
}

/// Metadata read from a file, with its stored world hash.
pub(super) struct StoredMeta {
    /// The `materials` row, read with the textures it names by the loader.
    pub(super) materials_text: Option<String>,
    /// The metadata (with the default material library).
    pub(super) meta: WorldMeta,
    /// The stored world hash.
    pub(super) world_hash: u64,
}

/// The rows of the `meta` table as a map; a key stored twice, or a key or
/// value that is not text, is refused ([`WorldFileError::BadMeta`]).
pub(crate) fn read_meta_map(
    conn: &Connection,
    path: &Path,
) -> Result<HashMap<String, String>, WorldFileError> {
    require_table(conn, path, "meta")?;
    let mut map: HashMap<String, String> = HashMap::new();
    let mut stmt = conn
        .prepare("SELECT key, value FROM meta")
        .map_err(|e| sqlite_err(path, e))?;
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .map_err(|e| sqlite_err(path, e))?;
    for row in rows {
        let (k, v) = row.map_err(|e| match e {
            rusqlite::Error::InvalidColumnType(..)
            | rusqlite::Error::FromSqlConversionFailure(..) => WorldFileError::BadMeta {
                path: path.to_path_buf(),
                key: "?".to_string(),
                message: format!("a key or value is not text: {e}"),
            },
            e => sqlite_err(path, e),
        })?;
        if map.contains_key(&k) {
            // Only a file whose schema was changed can hold this: which
            // value counts cannot be told, so neither is trusted.
            return Err(WorldFileError::BadMeta {
                path: path.to_path_buf(),
                key: k,
                message: "stored in more than one row".to_string(),
            });
        }
        map.insert(k, v);
    }
    Ok(map)
}

/// A `generator` meta value (`{"seed": N, "size_cells": N}`) as settings,
/// not yet validated; `Err` says what is wrong with the text.
pub(crate) fn parse_generator(text: &str) -> Result<GeneratorSettings, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let field = |name: &str| {
        v.get(name)
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| format!("field `{name}` must be a whole number"))
    };
    Ok(GeneratorSettings {
        seed: field("seed")?,
        size_cells: u32::try_from(field("size_cells")?)
            .map_err(|_| "size_cells is too large".to_string())?,
    })
}

/// The `generator` meta value of `settings`.
pub(crate) fn generator_text(settings: &GeneratorSettings) -> String {
    serde_json::json!({ "seed": settings.seed, "size_cells": settings.size_cells }).to_string()
}

/// A `camera` meta value (`[x, y, z, yaw_deg, pitch_deg]`, finite, pitch
/// within ±[`MAX_PITCH_DEG`]); `Err` says what is wrong with the text.
pub(crate) fn parse_camera(text: &str) -> Result<[f64; 5], String> {
    let c: [f64; 5] = serde_json::from_str(text)
        .map_err(|e| format!("expected [x, y, z, yaw_deg, pitch_deg]: {e}"))?;
    if !c.iter().all(|v| v.is_finite()) || c[4].abs() > MAX_PITCH_DEG as f64 {
        return Err(format!(
            "{c:?} has a non-finite value or a pitch beyond ±{MAX_PITCH_DEG}°"
        ));
    }
    Ok(c)
}

/// The `camera` meta value of `camera`.
pub(crate) fn camera_text(camera: &[f64; 5]) -> String {
    serde_json::Value::from(camera.to_vec()).to_string()
}

/// What is wrong with one `meta` value: its key and why. Each file kind
/// turns it into its own `BadMeta` error.
pub(crate) struct MetaFault {
    /// The key.
    pub key: String,
    /// What is wrong.
    pub message: String,
}

/// The text stored under `key`, or a fault saying it is missing.
pub(crate) fn meta_text<'a>(
    map: &'a HashMap<String, String>,
    key: &str,
) -> Result<&'a str, MetaFault> {
    map.get(key).map(String::as_str).ok_or_else(|| MetaFault {
        key: key.to_string(),
        message: "missing".to_string(),
    })
}

/// The whole number stored under `key` (surrounding spaces allowed).
pub(crate) fn meta_number(map: &HashMap<String, String>, key: &str) -> Result<u64, MetaFault> {
    let v = meta_text(map, key)?;
    v.trim().parse::<u64>().map_err(|_| MetaFault {
        key: key.to_string(),
        message: format!("{v:?} is not a whole number"),
    })
}

/// Reads and validates the `meta` table (format version first); a key
/// stored twice is refused.
pub(super) fn read_meta_table(
    conn: &Connection,
    path: &Path,
) -> Result<StoredMeta, WorldFileError> {
    let map = read_meta_map(conn, path)?;
    let bad = |key: &str, message: String| WorldFileError::BadMeta {
        path: path.to_path_buf(),
        key: key.to_string(),
        message,
    };
    let get = |key: &str| meta_text(&map, key).map_err(|f| bad(&f.key, f.message));
    let number = |key: &str| meta_number(&map, key).map_err(|f| bad(&f.key, f.message));
    let found = number("format_version")?;
    if found > FORMAT_VERSION as u64 {
        return Err(WorldFileError::NewerFormat {
            path: path.to_path_buf(),
            found,
            supported: FORMAT_VERSION,
        });
    }
    if found == 0 {
        return Err(bad(
            "format_version",
            "0 is not a format version".to_string(),
        ));
    }
    let hash_text = get("world_hash")?;
    let world_hash = u64::from_str_radix(hash_text.trim(), 16)
        .map_err(|_| bad("world_hash", format!("{hash_text:?} is not 16 hex digits")))?;
    let created_unix = number("created_unix")?;
    let modified_unix = number("modified_unix")?;
    let generator = match map.get("generator") {
        None => None,
        Some(text) => {
            let settings = parse_generator(text).map_err(|m| bad("generator", m))?;
            settings
                .validate()
                .map_err(|e| bad("generator", e.to_string()))?;
            Some(settings)
        }
    };
    let camera = match map.get("camera") {
        None => None,
        Some(text) => Some(parse_camera(text).map_err(|m| bad("camera", m))?),
    };
    let georeference = map
        .get("georeference")
        .map(|text| WorldGeoreference::from_json(text).map_err(|m| bad("georeference", m)))
        .transpose()?;
    Ok(StoredMeta {
        materials_text: map.get("materials").cloned(),
        meta: WorldMeta {
            generator,
            camera,
            created_unix,
            modified_unix,
            georeference,
            // Read with its textures by the loader (`material_rows`).
            materials: MaterialLibrary::default(),
        },
        world_hash,
    })
}

/// The `meta` rows for `meta` and `world_hash`.
fn meta_rows(meta: &WorldMeta, world_hash: u64) -> Vec<(&'static str, Option<String>)> {
    // `material_rows` raises the version and writes the `materials` row
    // for a world with its own library.
    vec![
        (
            "format_version",
            Some(FORMAT_VERSION_WITHOUT_MATERIALS.to_string()),
        ),
        ("world_hash", Some(format!("{world_hash:016x}"))),
        ("created_unix", Some(meta.created_unix.to_string())),
        ("modified_unix", Some(meta.modified_unix.to_string())),
        (
            "writer",
            Some(format!("strata {}", env!("CARGO_PKG_VERSION"))),
        ),
        ("generator", meta.generator.as_ref().map(generator_text)),
        ("camera", meta.camera.as_ref().map(camera_text)),
        (
            "georeference",
            meta.georeference.as_ref().map(WorldGeoreference::to_json),
        ),
    ]
}

/// Writes (inserts or replaces, or deletes when `None`) every meta row.
pub(super) fn write_meta(
    tx: &rusqlite::Transaction<'_>,
    meta: &WorldMeta,
    world_hash: u64,
) -> rusqlite::Result<()> {
    let mut put = tx.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")?;
    let mut del = tx.prepare("DELETE FROM meta WHERE key = ?1")?;
    for (key, value) in meta_rows(meta, world_hash) {
        match value {
            Some(v) => put.execute(params![key, v])?,
            None => del.execute(params![key])?,
        };
    }
    Ok(())
}
