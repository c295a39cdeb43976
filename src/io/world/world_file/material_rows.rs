//! A world's material library in its world file, so a restyled world
//! travels as one file.
//!
//! # Storage (world format 3)
//! - Meta `materials`: JSON `{"texture_side_px": N, "styles": [{"id", "name",
//!   "albedo", "tint", "tiling_studs"}, ...]}`, one style per solid id the
//!   library holds in id order: the built-ins 2 to 10, then the materials
//!   the world added (ids 11 to 255, each with an albedo); `albedo` is the texture's XXH3-64 as 16 hex
//!   digits, or `null` for the built-in texture; `top_albedo` (optional,
//!   `null` when absent) the same for the texture upward-facing surfaces
//!   show; `tint` is `[r, g, b]` sRGB. Optional, for a material with surface
//!   maps: `surface` (the packed normal/roughness/height texture's hash),
//!   `surface_maps` (`{"normal", "normal_directx", "roughness", "height"}`,
//!   which maps it holds) and `blend_sharpness_pct` (0 to 100).
//! - Payload `materials/texture/<16 hex digits>` of the `document` table
//!   (zstd, in parts like every payload): the texture's RGBA8 texels,
//!   `side² × 4` bytes (alpha as stored: a surface texture's height),
//!   checked against the hash in its name on reading.
//!   Each texture is stored once however many styles use it, and written
//!   only when the file does not hold it yet.
//!
//! A world whose library is the default stores neither, and is written as
//! format 2 so older builds still open it.

use std::path::Path;

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};

use super::document::{read_named, write_named};
use super::error::WorldFileError;
use crate::terrain::Material;
use crate::terrain::materials::texture::TEXTURE_SIDES_PX;
use crate::terrain::materials::{MaterialLibrary, MaterialStyle, MaterialTexture, SurfaceMaps};

/// The meta key of the library.
pub(super) const MATERIALS_KEY: &str = "materials";

/// The format of a world file with its own library.
const LIBRARY_FORMAT_VERSION: u32 = super::FORMAT_VERSION;

/// The payload name prefix of the library's textures.
const TEXTURE_PREFIX: &str = "materials/texture/";

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredStyle {
    id: u8,
    name: String,
    albedo: Option<String>,
    #[serde(default)]
    top_albedo: Option<String>,
    tint: [u8; 3],
    tiling_studs: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    surface: Option<String>,
    #[serde(default, skip_serializing_if = "SurfaceMaps::is_empty")]
    surface_maps: SurfaceMaps,
    /// Wider than the library's `u8`, so a stored 300 is refused by the
    /// library with its message rather than by the parser.
    #[serde(default, skip_serializing_if = "is_zero")]
    blend_sharpness_pct: u32,
}

fn is_zero(pct: &u32) -> bool {
    *pct == 0
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredLibrary {
    texture_side_px: u32,
    styles: Vec<StoredStyle>,
}

/// The `materials` meta value of `library`; `None` for the default library
/// (nothing stored).
fn library_text(library: &MaterialLibrary) -> Option<String> {
    if library.is_default() {
        return None;
    }
    let stored = StoredLibrary {
        texture_side_px: library.texture_side_px(),
        styles: library
            .styles()
            .map(|(m, s)| StoredStyle {
                id: m.0,
                name: s.name.clone(),
                albedo: s.albedo.map(|h| format!("{h:016x}")),
                top_albedo: s.top_albedo.map(|h| format!("{h:016x}")),
                tint: s.tint_srgb,
                tiling_studs: s.tiling_studs,
                surface: s.surface.map(|h| format!("{h:016x}")),
                surface_maps: s.surface_maps,
                blend_sharpness_pct: u32::from(s.blend_sharpness_pct),
            })
            .collect(),
    };
    serde_json::to_string(&stored).ok()
}

fn texture_name(hash: u64) -> String {
    format!("{TEXTURE_PREFIX}{hash:016x}")
}

/// Writes the library after the other meta rows: the `materials` row and
/// the format version that holds it (or deletes the row for the default
/// library), the texture payloads the file lacks, and deletes those no
/// style uses any more. Needs the document tables (a save writes them
/// first).
///
/// # Errors
/// [`WorldFileError::Sqlite`], [`WorldFileError::BadDocument`] when
/// compression fails.
pub(super) fn write_textures(
    tx: &rusqlite::Transaction<'_>,
    path: &Path,
    library: &MaterialLibrary,
) -> Result<(), WorldFileError> {
    let sql = |e| super::error::sqlite_err(path, e);
    match library_text(library) {
        Some(text) => {
            tx.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2), ('format_version', ?3)",
                params![MATERIALS_KEY, text, LIBRARY_FORMAT_VERSION.to_string()],
            )
            .map_err(sql)?;
        }
        None => {
            tx.execute("DELETE FROM meta WHERE key = ?1", params![MATERIALS_KEY])
                .map_err(sql)?;
        }
    }
    let stored: Vec<String> = {
        let mut stmt = tx
            .prepare("SELECT DISTINCT name FROM document WHERE name LIKE 'materials/texture/%'")
            .map_err(sql)?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(sql)?;
        rows.collect::<rusqlite::Result<_>>().map_err(sql)?
    };
    let wanted: Vec<String> = library.textures().map(|t| texture_name(t.hash())).collect();
    for name in stored.iter().filter(|n| !wanted.contains(n)) {
        tx.execute("DELETE FROM document WHERE name = ?1", params![name])
            .map_err(sql)?;
    }
    for texture in library.textures() {
        let name = texture_name(texture.hash());
        if !stored.contains(&name) {
            write_named(tx, path, &name, texture.rgba8())?;
        }
    }
    Ok(())
}

/// Reads the library a file stores (the default library when its meta has
/// no `materials` row), every texture checked against its hash.
///
/// # Errors
/// [`WorldFileError::BadMeta`] (key `materials`) for JSON that does not
/// parse, a style that is not allowed, or a texture that is missing, of the
/// wrong size, or whose bytes do not match its hash;
/// [`WorldFileError::Sqlite`].
pub(super) fn read_library(
    conn: &Connection,
    path: &Path,
    text: Option<&str>,
) -> Result<MaterialLibrary, WorldFileError> {
    let Some(text) = text else {
        return Ok(MaterialLibrary::default());
    };
    let bad = |message: String| WorldFileError::BadMeta {
        path: path.to_path_buf(),
        key: MATERIALS_KEY.to_string(),
        message,
    };
    let stored: StoredLibrary =
        serde_json::from_str(text).map_err(|e| bad(format!("not a material library: {e}")))?;
    let side = stored.texture_side_px;
    if !TEXTURE_SIDES_PX.contains(&side) {
        return Err(bad(format!(
            "{side} is not a library texture side (256, 512, 1024 or 2048)"
        )));
    }
    let built_ins = Material::solids().count();
    if stored.styles.len() < built_ins {
        return Err(bad(format!(
            "{} styles; a library has one per built-in solid material ({built_ins}) and one per material it adds",
            stored.styles.len()
        )));
    }
    let texture_bytes = u64::from(side) * u64::from(side) * 4;
    let mut styles = Vec::new();
    let mut textures: Vec<MaterialTexture> = Vec::new();
    let mut previous = None;
    for (i, s) in stored.styles.into_iter().enumerate() {
        let material = Material(s.id);
        let in_place = match Material::solids().nth(i) {
            Some(built_in) => material == built_in,
            None => previous.is_some_and(|p: Material| material.0 > p.0),
        };
        if !in_place {
            return Err(bad(format!(
                "style of id {} out of place: the built-ins 2 to 10 come first, then added materials in rising id order",
                s.id
            )));
        }
        previous = Some(material);
        let mut load = |hex: Option<String>| -> Result<Option<u64>, WorldFileError> {
            let Some(hex) = hex else {
                return Ok(None);
            };
            let hash = u64::from_str_radix(&hex, 16)
                .ok()
                .filter(|_| hex.len() == 16)
                .ok_or_else(|| bad(format!("{hex:?} is not 16 hex digits")))?;
            if !textures.iter().any(|t| t.hash() == hash) {
                let bytes = read_named(conn, path, &texture_name(hash), texture_bytes)
                    .map_err(|e| match e {
                        WorldFileError::BadDocument { reason, .. } => {
                            bad(format!("texture {hex}: {reason}"))
                        }
                        other => other,
                    })?
                    .ok_or_else(|| bad(format!("texture {hex} is not in the file")))?;
                let texture = MaterialTexture::from_texels(side, bytes)
                    .map_err(|e| bad(format!("texture {hex}: {e}")))?;
                if texture.hash() != hash {
                    return Err(bad(format!("texture {hex} does not match its hash")));
                }
                textures.push(texture);
            }
            Ok(Some(hash))
        };
        let albedo = load(s.albedo)?;
        let top_albedo = load(s.top_albedo)?;
        let surface = load(s.surface)?;
        let maps = s.surface_maps;
        if surface.is_some() == maps.is_empty() || (maps.normal_directx && !maps.normal) {
            return Err(bad(format!(
                "material {}: its surface texture and the maps it lists disagree",
                material.0
            )));
        }
        styles.push((
            material,
            MaterialStyle {
                name: s.name,
                albedo,
                top_albedo,
                tint_srgb: s.tint,
                tiling_studs: s.tiling_studs,
                surface,
                surface_maps: maps,
                blend_sharpness_pct: u8::try_from(s.blend_sharpness_pct).map_err(|_| {
                    bad(format!(
                        "material {}: a blend sharpness of {} % is not allowed; use 0 to 100",
                        material.0, s.blend_sharpness_pct
                    ))
                })?,
            },
        ));
    }
    MaterialLibrary::from_parts(side, styles, textures).map_err(|e| bad(e.to_string()))
}
