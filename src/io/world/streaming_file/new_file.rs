//! Creating a streaming world file: a complete new file written at a
//! temporary path (schema, origin and metadata in one transaction) for the
//! atomic write, and the old journal of a replaced file removed.

use std::path::Path;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use super::error::StreamingFileError;
use super::meta::{put_meta, writer};
use super::schema::{SUMMARY_HEIGHTMAP_SCHEMA_SQL, SUMMARY_SCHEMA_SQL};
use super::{STREAMING_FORMAT_VERSION, STREAMING_KIND};
use crate::io::heightmap::heightmap_import::HeightmapSettings;
use crate::io::heightmap::streaming_heightmap::{
    CopyError, StoredHeightmap, copy_source, heightmap_meta_text,
};
use crate::io::world::world_file::{
    configure_new_file, generator_text, io_err, sqlite_err, with_suffix,
};
use crate::terrain::generation::generate::GeneratorSettings;

/// What a new streaming file is made from.
pub(super) enum NewOrigin<'a> {
    /// Generator settings (a format-4 file).
    Generated(&'a GeneratorSettings),
    /// A recipe for these settings (a format-4 file with a `recipe` row).
    Recipe(&'a GeneratorSettings, &'a str),
    /// A heightmap import (a format-4 file): the file is copied in.
    Heightmap {
        /// The heightmap file to copy.
        png: &'a Path,
        /// Its format.
        format: crate::io::heightmap::heightmap_format::HeightmapFormat,
        /// The import settings.
        settings: &'a HeightmapSettings,
        /// The sidecar's text.
        sidecar_text: Option<&'a str>,
    },
}

/// Writes a complete new streaming file at `tmp` (which must not exist),
/// for [`crate::io::write_atomically`]; errors name `target`.
pub(super) fn write_new_file(
    tmp: &Path,
    target: &Path,
    origin: &NewOrigin<'_>,
    now: u64,
) -> Result<(), StreamingFileError> {
    let sql = |e| StreamingFileError::File(sqlite_err(target, e));
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut conn = Connection::open_with_flags(tmp, flags).map_err(sql)?;
    // A fresh temporary file needs no journal: the rename is the commit.
    configure_new_file(&conn).map_err(sql)?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Exclusive)
        .map_err(sql)?;
    let origin_meta: Vec<(&str, Option<String>)> = match origin {
        NewOrigin::Generated(settings) => {
            tx.execute_batch(SUMMARY_SCHEMA_SQL).map_err(sql)?;
            vec![
                ("format_version", Some(STREAMING_FORMAT_VERSION.to_string())),
                ("generator", Some(generator_text(settings))),
            ]
        }
        NewOrigin::Recipe(settings, recipe_json) => {
            tx.execute_batch(SUMMARY_SCHEMA_SQL).map_err(sql)?;
            vec![
                ("format_version", Some(STREAMING_FORMAT_VERSION.to_string())),
                ("generator", Some(generator_text(settings))),
                ("recipe", Some((*recipe_json).to_string())),
            ]
        }
        NewOrigin::Heightmap {
            png,
            format,
            settings,
            sidecar_text,
        } => {
            tx.execute_batch(SUMMARY_HEIGHTMAP_SCHEMA_SQL)
                .map_err(sql)?;
            let (png_bytes, png_hash) = copy_source(&tx, png, *format).map_err(|e| match e {
                CopyError::Read(source) => StreamingFileError::Heightmap {
                    path: target.to_path_buf(),
                    source: Box::new(source),
                },
                CopyError::Sql(e) => sql(e),
            })?;
            let stored = StoredHeightmap {
                settings: (*settings).clone(),
                sidecar_text: sidecar_text.map(str::to_string),
                format: *format,
                png_bytes,
                png_hash,
            };
            vec![
                ("format_version", Some(STREAMING_FORMAT_VERSION.to_string())),
                ("heightmap", Some(heightmap_meta_text(&stored))),
                ("heightmap_sidecar", stored.sidecar_text),
            ]
        }
    };
    put_meta(&tx, &origin_meta).map_err(sql)?;
    put_meta(
        &tx,
        &[
            ("kind", Some(STREAMING_KIND.to_string())),
            ("created_unix", Some(now.to_string())),
            ("modified_unix", Some(now.to_string())),
            ("writer", Some(writer())),
        ],
    )
    .map_err(sql)?;
    tx.commit().map_err(sql)?;
    // synchronous = OFF skipped SQLite's fsync: `write_atomically` fsyncs
    // the file before the rename makes it the world.
    conn.close().map_err(|(_, e)| sql(e))
}

/// Removes a journal beside `path` after a new file was renamed over it:
/// it belonged to the replaced file, and rolled into the new one it would
/// corrupt it.
pub(super) fn remove_replaced_journal(path: &Path) -> Result<(), StreamingFileError> {
    let journal = with_suffix(path, "-journal");
    match std::fs::remove_file(&journal) {
        Ok(()) => {
            log::info!(
                "removed {}, the journal of the replaced file",
                journal.display()
            );
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_err(&journal, e).into()),
    }
}
