//! The `meta` table of a streaming world file: writing rows, and reading
//! and validating them when the file opens (format version first, then the
//! kind, the origin, the times and the camera).

use std::path::Path;

use rusqlite::{Connection, params};

use super::error::StreamingFileError;
use super::{
    GENERATED_FORMAT_VERSION, HEIGHTMAP_FORMAT_VERSION, LAYERED_FORMAT_VERSION,
    STREAMING_FORMAT_VERSION, STREAMING_KIND, StreamingOrigin,
};
use crate::io::heightmap::streaming_heightmap::parse_heightmap_meta;
use crate::io::world::world_file::{
    meta_number, meta_text, parse_camera, parse_generator, read_meta_map,
};

/// Inserts or replaces (or deletes, for `None`) meta rows.
pub(super) fn put_meta(
    tx: &rusqlite::Transaction<'_>,
    rows: &[(&str, Option<String>)],
) -> rusqlite::Result<()> {
    let mut put = tx.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")?;
    let mut del = tx.prepare("DELETE FROM meta WHERE key = ?1")?;
    for (key, value) in rows {
        match value {
            Some(v) => put.execute(params![key, v])?,
            None => del.execute(params![key])?,
        };
    }
    Ok(())
}

/// The `writer` meta value of this build.
pub(super) fn writer() -> String {
    format!("strata {}", env!("CARGO_PKG_VERSION"))
}

/// The metadata of a streaming file, as read.
pub(super) struct StreamingMeta {
    pub(super) origin: StreamingOrigin,
    pub(super) camera: Option<[f64; 5]>,
    pub(super) created_unix: u64,
    pub(super) modified_unix: u64,
}

/// Reads and validates the `meta` table of a streaming file whose schema
/// is that of `schema_version`: the format version first (it must be that
/// one), then the kind, the origin (generator settings or heightmap
/// import), the times and the camera. Unknown keys are ignored.
pub(super) fn read_streaming_meta(
    conn: &Connection,
    path: &Path,
    (schema_version, heightmap): (u32, bool),
) -> Result<StreamingMeta, StreamingFileError> {
    let map = read_meta_map(conn, path)?;
    let bad = |key: &str, message: String| StreamingFileError::BadMeta {
        path: path.to_path_buf(),
        key: key.to_string(),
        message,
    };
    let get = |key: &str| meta_text(&map, key).map_err(|f| bad(&f.key, f.message));
    let number = |key: &str| meta_number(&map, key).map_err(|f| bad(&f.key, f.message));
    let found = number("format_version")?;
    let known = [
        GENERATED_FORMAT_VERSION,
        HEIGHTMAP_FORMAT_VERSION,
        STREAMING_FORMAT_VERSION,
        LAYERED_FORMAT_VERSION,
    ];
    if !known.iter().any(|&v| u64::from(v) == found) {
        return Err(StreamingFileError::UnsupportedVersion {
            path: path.to_path_buf(),
            found,
            supported: LAYERED_FORMAT_VERSION,
        });
    }
    if found != schema_version as u64 {
        return Err(bad(
            "format_version",
            format!("format {found} but the tables of format {schema_version}"),
        ));
    }
    let kind = get("kind")?;
    if kind != STREAMING_KIND {
        return Err(bad("kind", format!("{kind:?} is not {STREAMING_KIND:?}")));
    }
    let origin = if !heightmap {
        let settings = parse_generator(get("generator")?).map_err(|m| bad("generator", m))?;
        settings
            .validate_streaming()
            .map_err(|e| bad("generator", e.to_string()))?;
        match map.get("recipe") {
            Some(text) => {
                crate::terrain::recipe::stages::Recipe::from_json(text)
                    .map_err(|e| bad("recipe", e.to_string()))?;
                StreamingOrigin::Recipe {
                    settings,
                    recipe_json: text.clone(),
                }
            }
            None => StreamingOrigin::Generated(settings),
        }
    } else {
        let sidecar = map.get("heightmap_sidecar").cloned();
        StreamingOrigin::Heightmap(
            parse_heightmap_meta(get("heightmap")?, sidecar).map_err(|m| bad("heightmap", m))?,
        )
    };
    let created_unix = number("created_unix")?;
    let modified_unix = number("modified_unix")?;
    let camera = match map.get("camera") {
        None => None,
        Some(text) => Some(parse_camera(text).map_err(|m| bad("camera", m))?),
    };
    Ok(StreamingMeta {
        origin,
        camera,
        created_unix,
        modified_unix,
    })
}
