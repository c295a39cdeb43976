//! The world document (spec §14) in a world file: the base's source and
//! the layer stack, the base cells where they differ from the derived
//! cells, and a key per chunk column that tells, on reopening, which of
//! the stored (derived) cells are stale.
//!
//! # Tables (world format 2)
//! - `document(name, part, data)`: named payloads, each one zstd frame
//!   (written with its size declared; one without is decoded as a stream
//!   within the same limit), split into parts of at most [`PART_BYTES`]
//!   (the hardened connection refuses longer values): `record`, the JSON
//!   record ([`record`]), and `blob/<16 hex digits>` for every stamp and
//!   pasted clipboard it names ([`blobs`]), named by the XXH3-64 of its
//!   bytes and checked against it.
//! - `base_chunks(x, y, z, hash, data)`: base chunks, encoded like
//!   `chunks` ([`cache`] says which are stored).
//! - `column_keys(x, z, key)`: the cache key of every chunk column some
//!   visible operation may write ([`cache`]).
//!
//! A world without a document (a format-1 file, or a world whose edits
//! are not recorded) has empty tables. Reading checks every size before
//! allocating, bounds the decoded total by [`MAX_DOCUMENT_BYTES`], and
//! checks every operation as its tool would, so a damaged or hostile
//! document is an error ([`WorldFileError::BadDocument`]), never a panic.

mod blobs;
mod cache;
mod record;

use std::path::Path;
use std::sync::Arc;

use rusqlite::{Connection, params};
use rustc_hash::FxHashMap;

use super::chunk_size::{DENSE_CHUNK_BYTES, MAX_CHUNKS, MAX_DECODED_BYTES};
use super::codec::{
    ChunkTable, EncodedChunk, MAX_BLOB_BYTES, decode_blob, encode_chunks, write_chunk_rows,
    zstd_output_bound,
};
use super::error::{WorldFileError, sqlite_err};
use super::schema::DOCUMENT_TABLES_SQL;
use crate::progress::Progress;
use crate::terrain::command::document_action::{DocumentBase, WorldDocument};
use crate::terrain::document::derive::rederive_seeds;
use crate::terrain::editing::recorder::Recorder;
use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::{ChunkCoord, ColumnCoord};
use crate::terrain::storage::grid::Grid;

/// Longest part of a payload, bytes.
pub const PART_BYTES: usize = 60_000;

/// Most bytes a document may decode to, record and blobs together (a
/// 4,096² height stamp is 64 MiB).
pub const MAX_DOCUMENT_BYTES: u64 = 1 << 30;

/// The name of the record payload.
const RECORD: &str = "record";

/// The prefix of a streaming world's pending document: the record and
/// blobs of the layers as they were at the last autosave, beside the
/// pending columns spilled since the last save (a save removes them).
const PENDING: &str = "pending/";

/// The name of the base check: the XXH3-64 (8 bytes, little-endian) of the
/// record's `base` and of every stored base chunk ([`base_check`]), so a
/// base source edited or base chunks removed while the file was closed
/// are found instead of re-deriving on the wrong ground.
const BASE_CHECK: &str = "base_check";

/// The base check of `base_json` (the record's `base`, as JSON) and the
/// stored base chunks (`rows`: coordinate and content hash).
fn base_check(base_json: &[u8], rows: impl IntoIterator<Item = (ChunkCoord, u64)>) -> u64 {
    let mut rows: Vec<(ChunkCoord, u64)> = rows.into_iter().collect();
    rows.sort_unstable_by_key(|(c, _)| (c.0.z, c.0.y, c.0.x));
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(base_json);
    for (c, hash) in rows {
        for v in [c.0.x, c.0.y, c.0.z] {
            h.update(&v.to_le_bytes());
        }
        h.update(&hash.to_le_bytes());
    }
    h.digest()
}

/// A named, compressed payload of the `document` table.
type Payload = (String, Vec<u8>);

/// A document encoded for writing (done before the save's transaction,
/// off the thread that owns the grid).
pub(crate) struct EncodedDocument {
    payloads: Vec<Payload>,
    base_rows: Vec<EncodedChunk>,
    keys: Vec<(ColumnCoord, u64)>,
}

/// A document read from a world file, its base made, its stale columns
/// re-derived.
#[derive(Clone, Debug)]
pub struct OpenedDocument {
    /// The base and the layer stack.
    pub document: WorldDocument,
    /// Chunk columns whose stored cells were stale.
    pub stale_columns: usize,
    /// Chunk columns re-derived for them (their dirty closure).
    pub rebuilt_columns: usize,
}

fn bad(path: &Path, reason: impl Into<String>) -> WorldFileError {
    WorldFileError::BadDocument {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

fn compress(path: &Path, bytes: &[u8]) -> Result<Vec<u8>, WorldFileError> {
    // The bulk API writes the content size into the frame header, which
    // reading requires.
    zstd::bulk::compress(bytes, 3).map_err(|e| bad(path, format!("zstd failed: {e}")))
}

/// Encodes `doc` for a save whose chunks will have the hashes `derived`.
///
/// # Errors
/// [`WorldFileError::BadDocument`] when compression fails (out of memory)
/// or the document is larger than [`MAX_DOCUMENT_BYTES`] (it would not
/// reopen); [`WorldFileError::Cancelled`].
pub(crate) fn encode(
    path: &Path,
    doc: &WorldDocument,
    derived: &FxHashMap<ChunkCoord, u64>,
    progress: &Progress,
) -> Result<EncodedDocument, WorldFileError> {
    let (record, blob_set, footprints, keyed) = record::record_of(doc);
    let (mut payloads, base_json) = record_payloads(path, &record, blob_set)?;
    let overrides = cache::base_overrides(&doc.base.cells, &footprints, derived);
    let base_rows = encode_chunks(path, &overrides, progress)?;
    let check = base_check(&base_json, base_rows.iter().map(|r| (r.coord, r.hash)));
    payloads.push((
        BASE_CHECK.to_string(),
        compress(path, &check.to_le_bytes())?,
    ));
    Ok(EncodedDocument {
        payloads,
        base_rows,
        keys: sorted_keys(&keyed),
    })
}

/// The record and blob payloads of a document, compressed, and the
/// record's `base` as JSON.
///
/// # Errors
/// As [`encode`].
fn record_payloads(
    path: &Path,
    record: &record::DocumentRecord,
    blob_set: record::BlobSet,
) -> Result<(Vec<Payload>, Vec<u8>), WorldFileError> {
    let json = serde_json::to_vec(record).map_err(|e| bad(path, e.to_string()))?;
    let total: u64 =
        json.len() as u64 + blob_set.blobs.values().map(|b| b.len() as u64).sum::<u64>();
    if total > MAX_DOCUMENT_BYTES {
        return Err(bad(
            path,
            format!(
                "the layers take {total} bytes, more than the {MAX_DOCUMENT_BYTES} a file holds"
            ),
        ));
    }
    let mut payloads = vec![(RECORD.to_string(), compress(path, &json)?)];
    let mut blob_list: Vec<(u64, Arc<Vec<u8>>)> = blob_set.blobs.into_iter().collect();
    blob_list.sort_by_key(|(h, _)| *h);
    for (hash, bytes) in blob_list {
        payloads.push((
            format!("blob/{}", record::blob_name(hash)),
            compress(path, &bytes)?,
        ));
    }
    let base_json = serde_json::to_vec(&record.base).map_err(|e| bad(path, e.to_string()))?;
    Ok((payloads, base_json))
}

/// The column keys of the visible operations, sorted by column.
fn sorted_keys(keyed: &[record::KeyedOperation]) -> Vec<(ColumnCoord, u64)> {
    let mut keys: Vec<(ColumnCoord, u64)> = cache::column_keys(keyed).into_iter().collect();
    keys.sort();
    keys
}

/// True when any layer row besides the record is there (blobs, base
/// chunks, column keys).
fn has_layer_rows(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT (SELECT count(*) FROM document \
                 WHERE name NOT LIKE 'pending/%' AND name NOT LIKE 'cache/%' \
                 AND name NOT LIKE 'materials/%') \
         + (SELECT count(*) FROM base_chunks) + (SELECT count(*) FROM column_keys)",
        [],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

/// True when the file has the document tables (format 2).
pub(crate) fn has_tables(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'document'",
        [],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

/// Replaces the document rows with `doc` (none: a world without layers),
/// adding the document tables to a format-1 file first.
pub(crate) fn write(
    tx: &rusqlite::Transaction<'_>,
    doc: Option<&EncodedDocument>,
) -> rusqlite::Result<()> {
    if !has_tables(tx)? {
        tx.execute_batch(DOCUMENT_TABLES_SQL)?;
    }
    // Caches (a streaming recipe world's plan) and the material library's
    // textures stay: they follow their own keys, not the layers.
    tx.execute_batch(
        "DELETE FROM document WHERE name NOT LIKE 'cache/%' AND name NOT LIKE 'materials/%'; \
         DELETE FROM base_chunks; \
         DELETE FROM column_keys;",
    )?;
    let Some(doc) = doc else {
        return Ok(());
    };
    let mut put = tx.prepare("INSERT INTO document (name, part, data) VALUES (?1, ?2, ?3)")?;
    for (name, frame) in &doc.payloads {
        for (i, part) in frame.chunks(PART_BYTES).enumerate() {
            put.execute(params![name, i as i64, part])?;
        }
    }
    write_chunk_rows(tx, ChunkTable::Base, &doc.base_rows)?;
    let mut put = tx.prepare("INSERT INTO column_keys (x, z, key) VALUES (?1, ?2, ?3)")?;
    for (c, key) in &doc.keys {
        put.execute(params![c.x, c.z, *key as i64])?;
    }
    Ok(())
}

/// Reads the payload `name`: its parts in order, checked and decoded
/// within `budget` bytes (reduced by what it decodes to). `None` when
/// the file has no such payload.
fn read_payload(
    conn: &Connection,
    path: &Path,
    name: &str,
    budget: &mut u64,
) -> Result<Option<Vec<u8>>, WorldFileError> {
    let mut stmt = conn
        .prepare(
            "SELECT part, length(data), CASE WHEN length(data) <= ?2 THEN data END \
             FROM document WHERE name = ?1 ORDER BY part",
        )
        .map_err(|e| sqlite_err(path, e))?;
    let mut rows = stmt
        .query(params![name, PART_BYTES as i64])
        .map_err(|e| sqlite_err(path, e))?;
    let max_parts = (MAX_DOCUMENT_BYTES as usize).div_ceil(PART_BYTES) + 1;
    let mut frame = Vec::new();
    let mut parts = 0usize;
    while let Some(row) = rows.next().map_err(|e| sqlite_err(path, e))? {
        let part: i64 = row.get(0).map_err(|e| bad(path, format!("{name}: {e}")))?;
        if part != parts as i64 || parts >= max_parts {
            return Err(bad(path, format!("{name}: part {part} out of order")));
        }
        match row.get_ref(2).map_err(|e| sqlite_err(path, e))? {
            rusqlite::types::ValueRef::Blob(b) => frame.extend_from_slice(b),
            _ => {
                return Err(bad(
                    path,
                    format!("{name}: part {part} is not a blob of at most {PART_BYTES} bytes"),
                ));
            }
        }
        parts += 1;
    }
    if parts == 0 {
        return Ok(None);
    }
    let bytes = match zstd::zstd_safe::get_frame_content_size(&frame) {
        Ok(Some(declared)) => {
            if declared > *budget || zstd_output_bound(&frame).is_none_or(|b| b < declared) {
                return Err(bad(
                    path,
                    format!(
                        "{name} declares {declared} bytes, more than its data or the layers' limit"
                    ),
                ));
            }
            let bytes = zstd::bulk::decompress(&frame, declared as usize)
                .map_err(|e| bad(path, format!("{name} does not decompress: {e}")))?;
            if bytes.len() as u64 != declared {
                return Err(bad(
                    path,
                    format!(
                        "{name} decompresses to {} bytes, not {declared}",
                        bytes.len()
                    ),
                ));
            }
            bytes
        }
        // A frame written without its size (e.g. by the zstd tool from a
        // pipe): decoded as a stream, stopping one byte past the budget.
        Ok(None) => {
            use std::io::Read as _;
            let decoder = zstd::stream::Decoder::new(&frame[..])
                .map_err(|e| bad(path, format!("{name} is not a zstd frame: {e}")))?;
            let mut bytes = Vec::new();
            decoder
                .take(*budget + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| bad(path, format!("{name} does not decompress: {e}")))?;
            if bytes.len() as u64 > *budget {
                return Err(bad(
                    path,
                    format!("{name} decompresses past the layers' limit"),
                ));
            }
            bytes
        }
        Err(_) => return Err(bad(path, format!("{name} is not a zstd frame"))),
    };
    *budget -= bytes.len() as u64;
    Ok(Some(bytes))
}

/// Reads the stored base chunks, each checked against its hash.
fn read_base_chunks(
    conn: &Connection,
    path: &Path,
) -> Result<Vec<(ChunkCoord, ChunkCells)>, WorldFileError> {
    let (count, dense): (i64, i64) = conn
        .query_row(
            "SELECT count(*), count(CASE WHEN length(data) > 3 THEN 1 END) FROM base_chunks",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|e| sqlite_err(path, e))?;
    if count as u64 > MAX_CHUNKS as u64
        || (dense.max(0) as u64).saturating_mul(DENSE_CHUNK_BYTES as u64) > MAX_DECODED_BYTES
    {
        return Err(bad(
            path,
            format!("{count} base chunks, more than a world holds"),
        ));
    }
    let mut stmt = conn
        .prepare(
            "SELECT x, y, z, hash, CASE WHEN length(data) <= ?1 THEN data END FROM base_chunks",
        )
        .map_err(|e| sqlite_err(path, e))?;
    let mut rows = stmt
        .query([MAX_BLOB_BYTES as i64])
        .map_err(|e| sqlite_err(path, e))?;
    let mut out = Vec::with_capacity(count.max(0) as usize);
    while let Some(row) = rows.next().map_err(|e| sqlite_err(path, e))? {
        let int = |i: usize| {
            row.get::<_, i64>(i)
                .map_err(|e| bad(path, format!("a base chunk row: {e}")))
        };
        let (x, y, z, hash) = (int(0)?, int(1)?, int(2)?, int(3)?);
        let coord = ChunkCoord::from_i64(x, y, z).ok_or_else(|| {
            bad(
                path,
                format!("base chunk ({x}, {y}, {z}) is off the lattice"),
            )
        })?;
        let blob = match row.get_ref(4).map_err(|e| sqlite_err(path, e))? {
            rusqlite::types::ValueRef::Blob(b) => b,
            _ => {
                return Err(bad(
                    path,
                    format!("base chunk ({x}, {y}, {z}) is not a chunk blob"),
                ));
            }
        };
        let cells = decode_blob(blob).map_err(|f| {
            bad(
                path,
                format!("base chunk ({x}, {y}, {z}): {}", f.describe()),
            )
        })?;
        if cells.content_hash() != hash as u64 {
            return Err(bad(
                path,
                format!("base chunk ({x}, {y}, {z}) fails its hash"),
            ));
        }
        out.push((coord, cells));
    }
    Ok(out)
}

/// Reads the stored column keys.
fn read_keys(
    conn: &Connection,
    path: &Path,
) -> Result<FxHashMap<ColumnCoord, u64>, WorldFileError> {
    let count: i64 = conn
        .query_row("SELECT count(*) FROM column_keys", [], |r| r.get(0))
        .map_err(|e| sqlite_err(path, e))?;
    if count as u64 > MAX_CHUNKS as u64 {
        return Err(bad(
            path,
            format!("{count} column keys, more than a world holds"),
        ));
    }
    let mut stmt = conn
        .prepare("SELECT x, z, key FROM column_keys")
        .map_err(|e| sqlite_err(path, e))?;
    let mut rows = stmt.query([]).map_err(|e| sqlite_err(path, e))?;
    let mut keys = FxHashMap::default();
    while let Some(row) = rows.next().map_err(|e| sqlite_err(path, e))? {
        let int = |i: usize| {
            row.get::<_, i64>(i)
                .map_err(|e| bad(path, format!("a column key row: {e}")))
        };
        let (x, z, key) = (int(0)?, int(1)?, int(2)?);
        let column = ChunkCoord::from_i64(x, 0, z)
            .ok_or_else(|| bad(path, format!("column key ({x}, {z}) is off the lattice")))?;
        keys.insert(ColumnCoord::of(column), key as u64);
    }
    Ok(keys)
}

/// The record of a file's document, its blobs read and checked, every
/// operation checked as its tool would; `None` for a file without one.
/// Also returns the record's `base` as JSON (for the base check) and the
/// decoding budget left.
fn read_record(
    conn: &Connection,
    path: &Path,
    streamed: bool,
    prefix: &str,
) -> Result<Option<(record::ReadDocument, Vec<u8>, u64)>, WorldFileError> {
    if !has_tables(conn).map_err(|e| sqlite_err(path, e))? {
        return Ok(None);
    }
    let mut budget = MAX_DOCUMENT_BYTES;
    let Some(json) = read_payload(conn, path, &format!("{prefix}{RECORD}"), &mut budget)? else {
        if !prefix.is_empty() {
            return Ok(None);
        }
        return match has_layer_rows(conn).map_err(|e| sqlite_err(path, e))? {
            true => Err(bad(
                path,
                "the layer record is missing, but its other rows are there",
            )),
            false => Ok(None),
        };
    };
    let parsed: record::DocumentRecord =
        serde_json::from_slice(&json).map_err(|e| bad(path, format!("the layer record: {e}")))?;
    let base_json = serde_json::to_vec(&parsed.base).map_err(|e| bad(path, e.to_string()))?;
    let mut blobs: FxHashMap<String, Arc<Vec<u8>>> = FxHashMap::default();
    let mut lookup = |name: &str| -> Result<Arc<Vec<u8>>, String> {
        if let Some(b) = blobs.get(name) {
            return Ok(b.clone());
        }
        let bytes = read_payload(conn, path, &format!("{prefix}blob/{name}"), &mut budget)
            .map_err(|e| match e {
                WorldFileError::BadDocument { reason, .. } => reason,
                other => other.to_string(),
            })?
            .ok_or_else(|| format!("blob {name} is missing"))?;
        if record::blob_name(xxhash_rust::xxh3::xxh3_64(&bytes)) != name {
            return Err(format!("blob {name} fails its hash"));
        }
        let bytes = Arc::new(bytes);
        blobs.insert(name.to_string(), bytes.clone());
        Ok(bytes)
    };
    let read = record::document_from(parsed, &mut lookup, streamed).map_err(|e| bad(path, e))?;
    Ok(Some((read, base_json, budget)))
}

/// Checks the stored base check against the record's base and the stored
/// base chunks.
fn check_base(
    conn: &Connection,
    path: &Path,
    base_json: &[u8],
    overrides: &[(ChunkCoord, ChunkCells)],
    budget: &mut u64,
) -> Result<(), WorldFileError> {
    let stored_check = read_payload(conn, path, BASE_CHECK, budget)?
        .and_then(|b| <[u8; 8]>::try_from(b.as_slice()).ok())
        .map(u64::from_le_bytes);
    let check = base_check(
        base_json,
        overrides
            .iter()
            .map(|(c, cells)| (*c, cells.content_hash())),
    );
    if stored_check != Some(check) {
        return Err(bad(
            path,
            "the base (its source or its stored chunks) does not match the base check",
        ));
    }
    Ok(())
}

/// Reads the document of a format-2 file into `grid` (the file's derived
/// cells, just loaded): makes its base, and re-derives the dirty closure
/// of every stale column in `grid`. `None` for a world without layers.
///
/// # Errors
/// [`WorldFileError::BadDocument`] naming what is wrong; `grid` is then
/// unchanged. [`WorldFileError::Sqlite`] when the tables cannot be read.
pub(crate) fn read(
    conn: &Connection,
    path: &Path,
    grid: &mut Grid,
) -> Result<Option<OpenedDocument>, WorldFileError> {
    let Some((read, base_json, mut budget)) = read_record(conn, path, false, "")? else {
        return Ok(None);
    };
    let overrides = read_base_chunks(conn, path)?;
    check_base(conn, path, &base_json, &overrides, &mut budget)?;
    let stored_keys = read_keys(conn, path)?;
    let base = cache::base_from(grid, overrides);
    let seeds = cache::stale_columns(&stored_keys, &cache::column_keys(&read.keyed));
    let mut rec = Recorder::new(String::new());
    // A world file's grid is held whole: every column is resident.
    let rebuilt = rederive_seeds(grid, &mut rec, &base, &read.stack, &seeds)
        .map_err(|e| bad(path, e.to_string()))?;
    if !seeds.is_empty() {
        log::info!(
            "{}: {} chunk columns of cached cells were stale; re-derived {}",
            path.display(),
            seeds.len(),
            rebuilt.dirty_columns
        );
    }
    Ok(Some(OpenedDocument {
        document: WorldDocument {
            base: DocumentBase {
                cells: base,
                source: read.source,
            },
            stack: read.stack,
        },
        stale_columns: seeds.len(),
        rebuilt_columns: rebuilt.dirty_columns,
    }))
}

/// Encodes `doc` (a streaming world's document, whose base is the file's
/// own terrain source) for a streaming world file: the record, its blobs,
/// the base check (over the record's base and `terrain`, what the file's
/// metadata says makes its unedited columns, so a changed heightmap
/// setting is caught like a changed seed; no base chunks: the file makes
/// its unedited columns) and the column keys.
///
/// # Errors
/// As [`encode`].
pub(crate) fn encode_streamed(
    path: &Path,
    doc: &WorldDocument,
    terrain: &[u8],
) -> Result<EncodedDocument, WorldFileError> {
    let (record, blob_set, _, keyed) = record::record_of(doc);
    let (mut payloads, mut base_json) = record_payloads(path, &record, blob_set)?;
    base_json.extend_from_slice(terrain);
    let check = base_check(&base_json, std::iter::empty());
    payloads.push((
        BASE_CHECK.to_string(),
        compress(path, &check.to_le_bytes())?,
    ));
    Ok(EncodedDocument {
        payloads,
        base_rows: Vec::new(),
        keys: sorted_keys(&keyed),
    })
}

/// The document of a streaming world file, read and checked: the base's
/// source as recorded (the caller checks it against the file's terrain),
/// the stack, and the saved columns whose cached cells are stale (their
/// key in the file differs from the record's).
#[derive(Clone, Debug)]
pub struct StreamedDocument {
    /// What the record says makes the base.
    pub source: crate::terrain::command::document_action::BaseSource,
    /// The layers.
    pub stack: crate::terrain::document::layers::LayerStack,
    /// Chunk columns (as rectangles) whose stored cells are stale.
    pub stale: Vec<crate::terrain::document::operation::ColumnRect>,
}

/// Reads the document of a streaming world file (`None`: no tables, or no
/// record); `terrain` as [`encode_streamed`] took it.
///
/// # Errors
/// [`WorldFileError::BadDocument`] naming what is wrong (base chunks are
/// never stored in a streaming file); [`WorldFileError::Sqlite`].
pub(crate) fn read_streamed(
    conn: &Connection,
    path: &Path,
    terrain: &[u8],
) -> Result<Option<StreamedDocument>, WorldFileError> {
    let Some((read, mut base_json, mut budget)) = read_record(conn, path, true, "")? else {
        return Ok(None);
    };
    base_json.extend_from_slice(terrain);
    let overrides = read_base_chunks(conn, path)?;
    if !overrides.is_empty() {
        return Err(bad(
            path,
            "a streaming world stores no base chunks (its file makes its unedited columns)",
        ));
    }
    check_base(conn, path, &base_json, &overrides, &mut budget)?;
    let stored_keys = read_keys(conn, path)?;
    let stale = cache::stale_columns(&stored_keys, &cache::column_keys(&read.keyed));
    Ok(Some(StreamedDocument {
        source: read.source,
        stack: read.stack,
        stale,
    }))
}

/// Reads a streaming world's pending document (the layers at its last
/// autosave, see [`write_pending`]); `None` when it has none. Its columns
/// are the pending ones spilled with it, so nothing is stale.
///
/// # Errors
/// As [`read_streamed`].
pub(crate) fn read_pending(
    conn: &Connection,
    path: &Path,
    _terrain: &[u8],
) -> Result<Option<StreamedDocument>, WorldFileError> {
    let Some((read, _, _)) = read_record(conn, path, true, PENDING)? else {
        return Ok(None);
    };
    Ok(Some(StreamedDocument {
        source: read.source,
        stack: read.stack,
        stale: Vec::new(),
    }))
}

/// Replaces a streaming world's pending document with `doc`'s record and
/// blobs (its keys and base check belong to the saved document only); the
/// document tables must be there.
pub(crate) fn write_pending(
    tx: &rusqlite::Transaction<'_>,
    doc: &EncodedDocument,
) -> rusqlite::Result<()> {
    clear_pending(tx)?;
    let mut put = tx.prepare("INSERT INTO document (name, part, data) VALUES (?1, ?2, ?3)")?;
    for (name, frame) in doc.payloads.iter().filter(|(n, _)| n != BASE_CHECK) {
        for (i, part) in frame.chunks(PART_BYTES).enumerate() {
            put.execute(params![format!("{PENDING}{name}"), i as i64, part])?;
        }
    }
    Ok(())
}

/// Removes a streaming world's pending document (its pending columns were
/// saved or dropped); nothing without the document tables.
pub(crate) fn clear_pending(conn: &Connection) -> rusqlite::Result<()> {
    if has_tables(conn)? {
        conn.execute("DELETE FROM document WHERE name LIKE 'pending/%'", [])?;
    }
    Ok(())
}

/// Reads the payload `name` of the `document` table, decoding at most
/// `max_bytes`; `None` when there is none. For caches kept beside the
/// layers (a streaming recipe world's plan).
///
/// # Errors
/// [`WorldFileError::BadDocument`] for parts out of order, a frame that
/// does not decode or decodes past `max_bytes`; [`WorldFileError::Sqlite`].
pub(crate) fn read_named(
    conn: &Connection,
    path: &Path,
    name: &str,
    max_bytes: u64,
) -> Result<Option<Vec<u8>>, WorldFileError> {
    let mut budget = max_bytes;
    read_payload(conn, path, name, &mut budget)
}

/// Replaces the payload `name` of the `document` table with `bytes`,
/// compressed (zstd level 1: a cache is written often and read once) and
/// split into parts; the document tables must be there.
///
/// # Errors
/// [`WorldFileError::BadDocument`] when compression fails;
/// [`WorldFileError::Sqlite`].
pub(crate) fn write_named(
    tx: &rusqlite::Transaction<'_>,
    path: &Path,
    name: &str,
    bytes: &[u8],
) -> Result<(), WorldFileError> {
    let frame =
        zstd::bulk::compress(bytes, 1).map_err(|e| bad(path, format!("zstd failed: {e}")))?;
    let sql = |e| sqlite_err(path, e);
    tx.execute("DELETE FROM document WHERE name = ?1", [name])
        .map_err(sql)?;
    let mut put = tx
        .prepare("INSERT INTO document (name, part, data) VALUES (?1, ?2, ?3)")
        .map_err(sql)?;
    for (i, part) in frame.chunks(PART_BYTES).enumerate() {
        put.execute(params![name, i as i64, part]).map_err(sql)?;
    }
    Ok(())
}
