//! Loading a world file: reading the chunk rows in bounded batches,
//! decoding and verifying each batch in parallel against the stored chunk
//! hashes and the world hash, within a budget of decoded bytes, and the
//! report of what was loaded or left out.

use std::path::Path;
use std::time::Instant;

use rayon::prelude::*;
use rusqlite::Connection;
use rustc_hash::{FxHashMap, FxHashSet};

use super::chunk_size::DENSE_CHUNK_BYTES;
use super::codec::{ChunkFault, MAX_BLOB_BYTES, decode_blob};
use super::error::{WorldFileError, fmt_coord, sqlite_err};
use super::journal::noting;
use super::journal_recovery::JournalRecovery;
use super::material_rows::read_library;
use super::schema::{WorldMeta, open_existing, read_meta_table, require_table};
use super::{MAX_CHUNKS, chunk_count_fits, ms_since, world_hash_from_chunk_hashes};
use crate::progress::Progress;
use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::{ChunkCoord, MAX_CHUNK_COORD, MIN_CHUNK_COORD};
use crate::terrain::storage::grid::Grid;

pub use super::chunk_size::MAX_DECODED_BYTES;

/// Chunk rows read, decoded and verified together (in parallel) by a load.
const LOAD_BATCH_ROWS: usize = 512;

/// Options for [`load`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Load every chunk that decodes and verifies and list the others in
    /// [`LoadReport::skipped`] (also tolerating a world hash mismatch),
    /// instead of failing on the first damaged chunk.
    pub skip_bad_chunks: bool,
    /// Most bytes of decoded chunk cells the load may keep
    /// ([`DENSE_CHUNK_BYTES`] per dense chunk); `None` means
    /// [`MAX_DECODED_BYTES`]. A world over it fails with
    /// [`WorldFileError::TooMuchChunkData`] before any chunk is decoded.
    pub max_decoded_bytes: Option<u64>,
}

/// A chunk [`load`] left out under [`LoadOptions::skip_bad_chunks`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedChunk {
    /// The chunk.
    pub coord: ChunkCoord,
    /// Why it was skipped.
    pub reason: String,
}

/// What [`load`] found.
#[derive(Clone, Debug, Default)]
pub struct LoadReport {
    /// Chunks loaded into the grid.
    pub chunks: usize,
    /// Damaged chunks left out (only with [`LoadOptions::skip_bad_chunks`]).
    pub skipped: Vec<SkippedChunk>,
    /// True when the loaded grid's content hash equals the stored world hash
    /// (always true for a load without `skip_bad_chunks`).
    pub world_hash_ok: bool,
    /// Wall time of the load, ms.
    pub elapsed_ms: f64,
    /// The world's layers over its base (spec §14), for a file that has
    /// them; the grid's stale cached columns were re-derived.
    pub document: Option<super::document::OpenedDocument>,
    /// Why the layers were left out (only with
    /// [`LoadOptions::skip_bad_chunks`], when they cannot be read).
    pub document_dropped: Option<String>,
    /// A leftover journal that opening the file rolled back into it, and
    /// where the untouched copies of the file and journal were kept: a
    /// notice for the user (the editor shows it, the command line prints it).
    pub journal_recovery: Option<JournalRecovery>,
}

/// Reads only the metadata of a world file (fast: no chunk is read), e.g. to
/// restore the editor camera before loading.
///
/// # Errors
/// Every file-level [`WorldFileError`] ([`WorldFileError::NotFound`],
/// [`WorldFileError::NotSqlite`], [`WorldFileError::Truncated`],
/// [`WorldFileError::NewerFormat`], [`WorldFileError::BadMeta`], …).
///
/// Like every open, it rolls back a leftover journal after keeping copies
/// (logged; see [`JournalRecovery`]): prefer
/// [`WorldFile::open`](super::WorldFile::open) or [`load`], whose report
/// carries the notice, when the world is about to be loaded.
pub fn read_meta(path: &Path) -> Result<WorldMeta, WorldFileError> {
    let (conn, recovery) = open_existing(path)?;
    noting(&recovery, read_meta_with_materials(&conn, path))
}

/// The `meta` table with the material library and its textures.
fn read_meta_with_materials(conn: &Connection, path: &Path) -> Result<WorldMeta, WorldFileError> {
    let stored = read_meta_table(conn, path)?;
    let materials = read_library(conn, path, stored.materials_text.as_deref())?;
    Ok(WorldMeta {
        materials,
        ..stored.meta
    })
}

/// A chunk row as read: coordinate, stored hash, and the blob (`None` when
/// it is longer than any valid encoding and was not read).
type ChunkRow = (ChunkCoord, u64, Result<Vec<u8>, usize>);

/// Reads every chunk row, refusing more than [`MAX_CHUNKS`], more dense
/// rows than `max_decoded_bytes` can hold (before any is read),
/// coordinates off the valid lattice ([`ChunkCoord::from_i64`], the same
/// range edits and saves check) and a coordinate stored twice. Rows are handed to `sink`
/// [`LOAD_BATCH_ROWS`] at a time, so only one batch of blobs is in memory;
/// `begin(count)` is called with the number of rows before the first batch.
fn read_chunk_rows(
    conn: &Connection,
    path: &Path,
    max_decoded_bytes: u64,
    begin: impl FnOnce(u64) -> Result<(), WorldFileError>,
    mut sink: impl FnMut(Vec<ChunkRow>) -> Result<(), WorldFileError>,
) -> Result<(), WorldFileError> {
    require_table(conn, path, "chunks")?;
    // `length` reads no blob. Uniform blobs are 3 bytes; every longer one
    // decodes to a dense chunk or is refused.
    let (count, dense): (i64, i64) = conn
        .query_row(
            "SELECT count(*), count(CASE WHEN length(data) > 3 THEN 1 END) FROM chunks",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|e| sqlite_err(path, e))?;
    if !chunk_count_fits(count.max(0) as u64) {
        return Err(WorldFileError::TooManyChunks {
            path: path.to_path_buf(),
            count: count as u64,
            limit: MAX_CHUNKS,
        });
    }
    let dense_bytes = (dense.max(0) as u64).saturating_mul(DENSE_CHUNK_BYTES as u64);
    if dense_bytes > max_decoded_bytes {
        return Err(WorldFileError::TooMuchChunkData {
            path: path.to_path_buf(),
            dense_chunks: dense.max(0) as u64,
            bytes: dense_bytes,
            limit: max_decoded_bytes,
        });
    }
    begin(count.max(0) as u64)?;
    let mut stmt = conn
        .prepare(
            "SELECT x, y, z, hash, length(data), \
             CASE WHEN length(data) <= ?1 THEN data END FROM chunks",
        )
        .map_err(|e| sqlite_err(path, e))?;
    let mut rows = stmt
        .query([MAX_BLOB_BYTES as i64])
        .map_err(|e| sqlite_err(path, e))?;
    let corrupt = |message: String| WorldFileError::Corrupt {
        path: path.to_path_buf(),
        message,
    };
    let mut out = Vec::with_capacity(LOAD_BATCH_ROWS);
    let mut seen: FxHashSet<ChunkCoord> = FxHashSet::default();
    while let Some(row) = rows.next().map_err(|e| sqlite_err(path, e))? {
        let int = |i: usize| -> Result<i64, WorldFileError> {
            row.get::<_, i64>(i)
                .map_err(|e| corrupt(format!("chunk row column {i} is not an integer: {e}")))
        };
        let (x, y, z, hash, len) = (int(0)?, int(1)?, int(2)?, int(3)?, int(4)?);
        let Some(coord) = ChunkCoord::from_i64(x, y, z) else {
            return Err(corrupt(format!(
                "chunk row ({x}, {y}, {z}) lies outside the cell lattice (chunks \
                 {MIN_CHUNK_COORD}..={MAX_CHUNK_COORD} on each axis)"
            )));
        };
        if !seen.insert(coord) {
            return Err(WorldFileError::DuplicateChunk {
                path: path.to_path_buf(),
                coord,
            });
        }
        let blob = match row.get_ref(5).map_err(|e| sqlite_err(path, e))? {
            rusqlite::types::ValueRef::Blob(b) => Ok(b.to_vec()),
            rusqlite::types::ValueRef::Null => Err(len.max(0) as usize),
            other => {
                return Err(corrupt(format!(
                    "chunk {} data is {:?}, not a blob",
                    fmt_coord(coord),
                    other.data_type()
                )));
            }
        };
        out.push((coord, hash as u64, blob));
        if out.len() == LOAD_BATCH_ROWS {
            sink(std::mem::replace(
                &mut out,
                Vec::with_capacity(LOAD_BATCH_ROWS),
            ))?;
        }
    }
    if !out.is_empty() {
        sink(out)?;
    }
    Ok(())
}

/// The world hashes of the rows' stored chunk hashes, of every row and of
/// the rows that do not hold an empty uniform chunk (the loader drops
/// those). Reads no dense blob. `None` when a row is odd (the load then
/// reports it).
fn world_hashes_of_stored_rows(conn: &Connection) -> Option<(u64, u64)> {
    let mut stmt = conn
        .prepare(
            "SELECT x, y, z, hash, length(data) = 3 AND substr(data, 1, 1) = x'00' \
             AND substr(data, 3, 1) = x'00' FROM chunks",
        )
        .ok()?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, bool>(4)?,
            ))
        })
        .ok()?;
    let mut all: FxHashMap<ChunkCoord, u64> = FxHashMap::default();
    let mut non_empty: FxHashMap<ChunkCoord, u64> = FxHashMap::default();
    for row in rows {
        let (x, y, z, hash, empty) = row.ok()?;
        // A row off the lattice is "odd": the row reader names it.
        let c = ChunkCoord::from_i64(x, y, z)?;
        all.insert(c, hash as u64);
        if !empty {
            non_empty.insert(c, hash as u64);
        }
    }
    Some((
        world_hash_from_chunk_hashes(&all),
        world_hash_from_chunk_hashes(&non_empty),
    ))
}

/// Loads a world file into a new grid, verifying every chunk hash and the
/// world hash.
///
/// The caller's grids are never touched: the result is a fresh [`Grid`]
/// (fresh generation, revision 0).
///
/// # Errors
/// [`WorldFileError::NotFound`], [`WorldFileError::Io`],
/// [`WorldFileError::NotSqlite`], [`WorldFileError::Truncated`],
/// [`WorldFileError::Corrupt`], [`WorldFileError::NotAWorld`],
/// [`WorldFileError::MissingTable`], [`WorldFileError::NewerFormat`],
/// [`WorldFileError::BadMeta`], [`WorldFileError::TooManyChunks`],
/// [`WorldFileError::DuplicateChunk`]; and,
/// [`WorldFileError::UnexpectedSchema`],
/// [`WorldFileError::TooMuchChunkData`]; and,
/// unless [`LoadOptions::skip_bad_chunks`], [`WorldFileError::ChunkTooLarge`],
/// [`WorldFileError::InvalidChunk`], [`WorldFileError::BadChunk`] (listing
/// every chunk whose hash fails) and [`WorldFileError::WorldHashMismatch`].
pub fn load(
    path: &Path,
    options: LoadOptions,
) -> Result<(Grid, WorldMeta, LoadReport), WorldFileError> {
    load_with_progress(path, options, &Progress::new())
}

/// [`load`], counting chunks decoded in `progress` (stage "loading") and
/// stopping early, with [`WorldFileError::Cancelled`], when it is cancelled.
///
/// # Errors
/// As [`load`], and [`WorldFileError::Cancelled`].
pub fn load_with_progress(
    path: &Path,
    options: LoadOptions,
    progress: &Progress,
) -> Result<(Grid, WorldMeta, LoadReport), WorldFileError> {
    let (conn, recovery) = open_existing(path)?;
    let (grid, meta, mut report, _) = noting(&recovery, load_from(&conn, path, options, progress))?;
    report.journal_recovery = recovery;
    Ok((grid, meta, report))
}

/// The body of [`load`], also returning the verified chunk hashes.
pub(super) fn load_from(
    conn: &Connection,
    path: &Path,
    options: LoadOptions,
    progress: &Progress,
) -> Result<(Grid, WorldMeta, LoadReport, FxHashMap<ChunkCoord, u64>), WorldFileError> {
    let start = Instant::now();
    progress.begin_stage("reading", 0);
    let mut stored = read_meta_table(conn, path)?;
    stored.meta.materials = read_library(conn, path, stored.materials_text.as_deref())?;
    let budget = options.max_decoded_bytes.unwrap_or(MAX_DECODED_BYTES);
    let cancelled = || WorldFileError::Cancelled {
        path: path.to_path_buf(),
        operation: "loading",
    };
    let mut kept = KeptChunks::default();
    // Each batch is decoded and verified before the next is read: a load
    // without `skip_bad_chunks` stops at the first undecodable chunk, keeps
    // no cells once a chunk has failed its hash (it only lists the others
    // that fail), and never keeps more than `budget` bytes of cells.
    read_chunk_rows(
        conn,
        path,
        budget,
        |count| {
            // After the row count and budget checks (at most MAX_CHUNKS
            // rows): a strict load whose rows' stored hashes cannot add up
            // to the world hash fails now, before any chunk is decoded.
            if !options.skip_bad_chunks {
                check_stored_rows_add_up(conn, path, stored.world_hash)?;
            }
            progress.begin_stage("loading", count);
            Ok(())
        },
        |rows| {
            progress.check().map_err(|_| cancelled())?;
            let decoded = decode_rows(rows, progress);
            progress.check().map_err(|_| cancelled())?;
            kept.keep(decoded, path, options, budget)
        },
    )?;
    progress.check().map_err(|_| cancelled())?;
    let mut report = kept.finish(path, options, stored.world_hash)?;
    let mut grid = Grid::from_chunks(kept.chunks);
    report.chunks = grid.chunk_count();
    // A recovery load (chunks left out) keeps the cells it could read and
    // leaves the layers: they would re-derive over missing cells.
    if report.skipped.is_empty() {
        match super::document::read(conn, path, &mut grid) {
            Ok(document) => report.document = document,
            // Loading the rest: the cells, without the layers.
            Err(e @ WorldFileError::BadDocument { .. }) if options.skip_bad_chunks => {
                report.document_dropped = Some(e.to_string());
            }
            Err(e) => return Err(e),
        }
    }
    report.elapsed_ms = ms_since(start);
    Ok((grid, stored.meta, report, kept.hashes))
}

/// Fails with [`WorldFileError::WorldHashMismatch`] when the rows' stored
/// chunk hashes cannot add up to the stored world hash (rows missing, added
/// or re-hashed; neither counting every row nor leaving out empty ones).
/// Reads no dense blob; odd rows pass (the row reader reports them).
fn check_stored_rows_add_up(
    conn: &Connection,
    path: &Path,
    stored_world_hash: u64,
) -> Result<(), WorldFileError> {
    if let Some((all, non_empty)) = world_hashes_of_stored_rows(conn)
        && all != stored_world_hash
        && non_empty != stored_world_hash
    {
        return Err(WorldFileError::WorldHashMismatch {
            path: path.to_path_buf(),
            stored: stored_world_hash,
            actual: non_empty,
        });
    }
    Ok(())
}

/// A chunk row after decoding: coordinate, stored hash, and the cells when
/// they decode and match the stored hash.
type DecodedRow = (ChunkCoord, u64, Result<ChunkCells, ChunkFault>);

/// Decodes and verifies one batch of rows in parallel, counting each in
/// `progress`; once it is cancelled the remaining rows are not decoded.
fn decode_rows(rows: Vec<ChunkRow>, progress: &Progress) -> Vec<DecodedRow> {
    rows.into_par_iter()
        .map(|(coord, stored_hash, blob)| {
            progress.advance(1);
            if progress.is_cancelled() {
                return (coord, stored_hash, Err(ChunkFault::Invalid(String::new())));
            }
            let cells = match blob {
                Err(len) => Err(ChunkFault::Invalid(format!(
                    "{len} bytes of data, longer than any chunk encoding"
                ))),
                Ok(blob) => decode_blob(&blob).and_then(|cells| {
                    let actual = cells.content_hash();
                    if actual == stored_hash {
                        Ok(cells)
                    } else {
                        Err(ChunkFault::HashMismatch {
                            stored: stored_hash,
                            actual,
                        })
                    }
                }),
            };
            (coord, stored_hash, cells)
        })
        .collect()
}

/// What a load keeps as batches arrive: the verified chunks and their
/// hashes, the faults found so far, and the bytes of dense cells kept.
#[derive(Default)]
struct KeptChunks {
    chunks: Vec<(ChunkCoord, ChunkCells)>,
    hashes: FxHashMap<ChunkCoord, u64>,
    faults: Vec<(ChunkCoord, ChunkFault)>,
    kept_bytes: u64,
}

impl KeptChunks {
    /// Takes one decoded batch: keeps the good chunks (within `budget` bytes
    /// of dense cells) and records the faults; a strict load fails at the
    /// first undecodable chunk and keeps nothing once a chunk has failed.
    fn keep(
        &mut self,
        decoded: Vec<DecodedRow>,
        path: &Path,
        options: LoadOptions,
        budget: u64,
    ) -> Result<(), WorldFileError> {
        for (coord, hash, result) in decoded {
            match result {
                // Empty chunks are never stored; one in a file is dropped like
                // `Grid::from_chunks` drops it, and left out of the world hash.
                Ok(cells) if cells.is_all_empty() => {}
                // A strict load that already failed keeps nothing more.
                Ok(_) if !options.skip_bad_chunks && !self.faults.is_empty() => {}
                Ok(cells) => {
                    if !matches!(cells, ChunkCells::Uniform(_)) {
                        self.kept_bytes += DENSE_CHUNK_BYTES as u64;
                        if self.kept_bytes > budget {
                            return Err(WorldFileError::TooMuchChunkData {
                                path: path.to_path_buf(),
                                dense_chunks: self.kept_bytes / DENSE_CHUNK_BYTES as u64,
                                bytes: self.kept_bytes,
                                limit: budget,
                            });
                        }
                    }
                    self.hashes.insert(coord, hash);
                    self.chunks.push((coord, cells));
                }
                Err(fault) => {
                    let undecodable = !matches!(fault, ChunkFault::HashMismatch { .. });
                    self.faults.push((coord, fault));
                    if !options.skip_bad_chunks {
                        // The load fails: free the cells kept so far.
                        self.chunks = Vec::new();
                        if undecodable {
                            return Err(first_fault(path, std::mem::take(&mut self.faults)));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// After the last batch: the report (its skipped chunks and whether
    /// the world hash matches), or the error of a strict load (the faults,
    /// or a world hash mismatch). The kept chunks and hashes stay in `self`.
    fn finish(
        &mut self,
        path: &Path,
        options: LoadOptions,
        stored_world_hash: u64,
    ) -> Result<LoadReport, WorldFileError> {
        self.faults.sort_by_key(|(c, _)| (c.0.z, c.0.y, c.0.x));
        let mut report = LoadReport::default();
        if options.skip_bad_chunks {
            report.skipped = self
                .faults
                .iter()
                .map(|(coord, fault)| SkippedChunk {
                    coord: *coord,
                    reason: fault.describe(),
                })
                .collect();
        } else if !self.faults.is_empty() {
            return Err(first_fault(path, std::mem::take(&mut self.faults)));
        }
        let actual = world_hash_from_chunk_hashes(&self.hashes);
        report.world_hash_ok = actual == stored_world_hash;
        if !report.world_hash_ok && !options.skip_bad_chunks {
            return Err(WorldFileError::WorldHashMismatch {
                path: path.to_path_buf(),
                stored: stored_world_hash,
                actual,
            });
        }
        Ok(report)
    }
}

/// The error for a load without `skip_bad_chunks`: a decompression bomb
/// first, then undecodable data, then every hash mismatch together.
fn first_fault(path: &Path, faults: Vec<(ChunkCoord, ChunkFault)>) -> WorldFileError {
    let path = path.to_path_buf();
    if let Some((coord, ChunkFault::TooLarge(claimed_bytes))) = faults
        .iter()
        .find(|(_, f)| matches!(f, ChunkFault::TooLarge(_)))
    {
        return WorldFileError::ChunkTooLarge {
            path,
            coord: *coord,
            claimed_bytes: *claimed_bytes,
        };
    }
    if let Some((coord, ChunkFault::Invalid(reason))) = faults
        .iter()
        .find(|(_, f)| matches!(f, ChunkFault::Invalid(_)))
    {
        return WorldFileError::InvalidChunk {
            path,
            coord: *coord,
            reason: reason.clone(),
        };
    }
    WorldFileError::BadChunk {
        path,
        coords: faults.into_iter().map(|(c, _)| c).collect(),
    }
}
