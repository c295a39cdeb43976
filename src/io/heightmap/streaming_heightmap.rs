//! The heightmap inside a streaming world file (formats 3 and 4): a streamed
//! heightmap import keeps the imported PNG's bytes, its sidecar's text and
//! the import settings in its own file, so the file rebuilds every unedited
//! column by itself (spec §12: "an unedited chunk is never stored") without
//! the original PNG, which may have moved or changed since.
//!
//! # Why the PNG bytes, not decoded samples
//! The PNG is the smallest exact form of the samples (a 16-bit PNG is
//! already deflate-compressed, and re-encoding the samples could only match
//! it), it costs no encoder of our own, and decoding the stored copy runs
//! the very decoder the import ran
//! ([`decode_heightmap`](crate::io::heightmap::heightmap_import::decode_heightmap)), so the reopened
//! terrain is bit-identical to the imported one. Opening decodes the PNG
//! once (seconds for 16 384² pixels); no chunk is built.
//!
//! # Storage
//! - Table `heightmap_png(part INTEGER PRIMARY KEY, data BLOB)`: the PNG's
//!   bytes in order, in parts of [`HEIGHTMAP_PART_BYTES`] (the last one
//!   shorter), numbered from 0 without gaps.
//! - Meta `heightmap`: JSON `{"cells_per_pixel", "vertical_scale",
//!   "base_height_cells", "sea_level_m", "base_material", "png_bytes",
//!   "png_hash"}`. Floats are decimal strings in Rust's shortest round-trip
//!   form (exact through a re-parse, unlike JSON numbers through a
//!   best-effort float parser); `sea_level_m` and `base_material` (a
//!   material id) may be `null`; `png_hash` is the XXH3-64 of the PNG bytes
//!   as 16 hex digits.
//! - Meta `heightmap_sidecar` (optional): the sidecar's text as imported.
//!
//! A load never trusts a size from the file: at most
//! [`MAX_HEIGHTMAP_FILE_BYTES`] in all, parts at most
//! [`HEIGHTMAP_PART_BYTES`], and the bytes must match `png_bytes` and
//! `png_hash` before they are decoded.

use std::io::Read;
use std::path::Path;

use rusqlite::{Connection, params};

use crate::io::heightmap::heightmap_format::HeightmapFormat;
use crate::io::heightmap::heightmap_import::{
    HeightmapSettings, ImportError, MAX_SIDECAR_FILE_BYTES, read_error,
};
use crate::io::open_bounded;
use crate::terrain::Material;
use crate::terrain::generation::heightmap::{NoDataFill, RawLayout};

/// Bytes of one stored part of a heightmap world's PNG (1 MiB).
pub const HEIGHTMAP_PART_BYTES: usize = 1 << 20;

/// The table of a format-3 or format-4 heightmap file that holds its PNG.
pub(crate) const HEIGHTMAP_TABLE: &str = "heightmap_png";

/// A heightmap world's import, as its file records it (the PNG itself is in
/// the file's `heightmap_png` table).
#[derive(Clone, Debug, PartialEq)]
pub struct StoredHeightmap {
    /// The import settings.
    pub settings: HeightmapSettings,
    /// The sidecar's text, when the import had one.
    pub sidecar_text: Option<String>,
    /// The stored file's format (PNG for files written before other formats
    /// could stream).
    pub format: HeightmapFormat,
    /// Length of the stored PNG, bytes.
    pub png_bytes: u64,
    /// XXH3-64 of the stored PNG bytes.
    pub png_hash: u64,
}

/// Why the stored PNG could not be copied in.
pub(crate) enum CopyError {
    /// The PNG file could not be read (names the PNG).
    Read(ImportError),
    /// SQLite failed.
    Sql(rusqlite::Error),
}

/// The `heightmap` meta value of `stored`.
pub(crate) fn heightmap_meta_text(stored: &StoredHeightmap) -> String {
    let s = &stored.settings;
    serde_json::json!({
        "cells_per_pixel": s.cells_per_pixel.to_string(),
        "vertical_scale": s.vertical_scale.to_string(),
        "base_height_cells": s.base_height_cells,
        "sea_level_m": s.sea_level_m.map(|v| v.to_string()),
        "base_material": s.base_material.map(|m| m.0),
        "nodata": s.nodata.name(),
        "raw_size_px": s.raw.size_px.map(|(w, h)| [w, h]),
        "raw_big_endian": s.raw.big_endian,
        "format": stored.format.key(),
        "png_bytes": stored.png_bytes,
        "png_hash": format!("{:016x}", stored.png_hash),
    })
    .to_string()
}

/// Parses a `heightmap` meta value (the sidecar text comes separately);
/// `Err` says what is wrong. The settings are checked as an import checks
/// them.
pub(crate) fn parse_heightmap_meta(
    text: &str,
    sidecar_text: Option<String>,
) -> Result<StoredHeightmap, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let field = |name: &str| v.get(name).ok_or_else(|| format!("missing field `{name}`"));
    let float_text = |name: &str| -> Result<Option<&str>, String> {
        match field(name)? {
            serde_json::Value::Null => Ok(None),
            serde_json::Value::String(t) => Ok(Some(t.as_str())),
            other => Err(format!(
                "field `{name}` must be a decimal string, got {other}"
            )),
        }
    };
    let f32_of = |name: &str| -> Result<f32, String> {
        float_text(name)?
            .ok_or_else(|| format!("field `{name}` must not be null"))?
            .parse::<f32>()
            .map_err(|e| format!("field `{name}`: {e}"))
    };
    let whole = |name: &str| -> Result<u64, String> {
        field(name)?
            .as_u64()
            .ok_or_else(|| format!("field `{name}` must be a whole number"))
    };
    let base_height_cells = field("base_height_cells")?
        .as_i64()
        .and_then(|n| i32::try_from(n).ok())
        .ok_or("field `base_height_cells` must be a whole number of cells")?;
    let sea_level_m = float_text("sea_level_m")?
        .map(|t| t.parse::<f64>())
        .transpose()
        .map_err(|e| format!("field `sea_level_m`: {e}"))?;
    let base_material = match field("base_material")? {
        serde_json::Value::Null => None,
        m => Some(Material(
            m.as_u64()
                .and_then(|n| u8::try_from(n).ok())
                .ok_or("field `base_material` must be a material id (0 to 255)")?,
        )),
    };
    // Files written before NoData fills existed hold PNGs, which have none.
    let nodata = match v.get("nodata") {
        None => NoDataFill::Floor,
        Some(serde_json::Value::String(name)) => NoDataFill::from_name(name)
            .ok_or_else(|| format!("field `nodata` is `{name}`, not `floor` or `sea`"))?,
        Some(other) => return Err(format!("field `nodata` must be a name, got {other}")),
    };
    let raw = parse_raw_layout(&v)?;
    let settings = HeightmapSettings {
        cells_per_pixel: f32_of("cells_per_pixel")?,
        vertical_scale: f32_of("vertical_scale")?,
        base_height_cells,
        sea_level_m,
        base_material,
        nodata,
        raw,
    };
    crate::terrain::generation::heightmap::check_settings(&settings).map_err(|e| e.to_string())?;
    let format = match v.get("format") {
        None => HeightmapFormat::Png,
        Some(serde_json::Value::String(key)) => HeightmapFormat::from_key(key)
            .ok_or_else(|| format!("field `format` is `{key}`, not a heightmap format"))?,
        Some(other) => return Err(format!("field `format` must be a name, got {other}")),
    };
    let png_bytes = whole("png_bytes")?;
    let limit = format.max_file_bytes();
    if png_bytes == 0 || png_bytes > limit {
        return Err(format!(
            "field `png_bytes` is {png_bytes}, not between 1 and {limit}"
        ));
    }
    let png_hash = match field("png_hash")? {
        serde_json::Value::String(t) if t.len() == 16 => u64::from_str_radix(t, 16).ok(),
        _ => None,
    }
    .ok_or("field `png_hash` must be 16 hex digits")?;
    if let Some(t) = &sidecar_text
        && t.len() as u64 > MAX_SIDECAR_FILE_BYTES
    {
        return Err(format!(
            "the sidecar is {} bytes, more than {MAX_SIDECAR_FILE_BYTES}",
            t.len()
        ));
    }
    Ok(StoredHeightmap {
        settings,
        sidecar_text,
        format,
        png_bytes,
        png_hash,
    })
}

/// The RAW16 layout of a `heightmap` meta value (fields absent in files
/// written before RAW imports: the default layout).
fn parse_raw_layout(v: &serde_json::Value) -> Result<RawLayout, String> {
    let size_px = match v.get("raw_size_px") {
        None | Some(serde_json::Value::Null) => None,
        Some(size) => {
            let side = |i: usize| {
                size.get(i)
                    .and_then(serde_json::Value::as_u64)
                    .and_then(|n| u32::try_from(n).ok())
            };
            match (side(0), side(1)) {
                (Some(w), Some(h)) => Some((w, h)),
                _ => {
                    return Err(format!(
                        "field `raw_size_px` must be [width, height], got {size}"
                    ));
                }
            }
        }
    };
    let big_endian = match v.get("raw_big_endian") {
        None => false,
        Some(b) => b
            .as_bool()
            .ok_or_else(|| format!("field `raw_big_endian` must be true or false, got {b}"))?,
    };
    Ok(RawLayout {
        size_px,
        big_endian,
    })
}

/// Copies the heightmap file at `png_path` (of `format`) into the
/// `heightmap_png` table of `conn` (inside the caller's transaction) part by
/// part, so memory holds one part at a time. Returns the byte count and
/// XXH3-64 of what was stored.
pub(crate) fn copy_source(
    conn: &Connection,
    png_path: &Path,
    format: HeightmapFormat,
) -> Result<(u64, u64), CopyError> {
    let limit = format.max_file_bytes();
    let mut file =
        open_bounded(png_path, limit).map_err(|e| CopyError::Read(read_error(png_path, e)))?;
    let mut insert = conn
        .prepare(&format!(
            "INSERT INTO {HEIGHTMAP_TABLE} (part, data) VALUES (?1, ?2)"
        ))
        .map_err(CopyError::Sql)?;
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; HEIGHTMAP_PART_BYTES];
    let (mut total, mut part) = (0u64, 0i64);
    loop {
        let mut filled = 0;
        while filled < buf.len() {
            match file.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(CopyError::Read(ImportError::Io {
                        path: png_path.to_path_buf(),
                        source,
                    }));
                }
            }
        }
        if filled == 0 {
            break;
        }
        total += filled as u64;
        if total > limit {
            // The file grew past the limit after it was checked.
            return Err(CopyError::Read(ImportError::FileTooLarge {
                path: png_path.to_path_buf(),
                size_bytes: total,
                limit_bytes: limit,
            }));
        }
        hasher.update(&buf[..filled]);
        insert
            .execute(params![part, &buf[..filled]])
            .map_err(CopyError::Sql)?;
        part += 1;
        if filled < buf.len() {
            break;
        }
    }
    Ok((total, hasher.digest()))
}

/// Checks the stored file against `stored` without holding it: every part
/// in order (numbers from 0 without gaps, sizes), the total length and the
/// hash, one part at a time. `Err(Ok(message))` says how the stored copy is
/// damaged; `Err(Err(e))` is a SQLite failure.
pub(crate) fn verify_source(
    conn: &Connection,
    stored: &StoredHeightmap,
) -> Result<(), Result<String, rusqlite::Error>> {
    let mut select = conn
        .prepare(&format!(
            "SELECT part, length(data), data FROM {HEIGHTMAP_TABLE} ORDER BY part"
        ))
        .map_err(Err)?;
    let mut rows = select.query([]).map_err(Err)?;
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let (mut total, mut expected_part) = (0_u64, 0_i64);
    while let Some(row) = rows.next().map_err(Err)? {
        let part: i64 = row.get(0).map_err(Err)?;
        let len: i64 = row.get(1).map_err(Err)?;
        if part != expected_part {
            return Err(Ok(format!("heightmap part {expected_part} is missing")));
        }
        let left = stored.png_bytes - total;
        if !(1..=HEIGHTMAP_PART_BYTES as i64).contains(&len) || len as u64 > left {
            return Err(Ok(format!(
                "heightmap part {part} is {len} bytes, more than the {left} bytes left"
            )));
        }
        let data = row.get_ref(2).map_err(Err)?;
        let bytes = data
            .as_blob()
            .map_err(|_| Ok(format!("heightmap part {part} is not a blob")))?;
        hasher.update(bytes);
        total += bytes.len() as u64;
        expected_part += 1;
    }
    if total != stored.png_bytes {
        return Err(Ok(format!(
            "the stored heightmap is {total} bytes, not {}",
            stored.png_bytes
        )));
    }
    if hasher.digest() != stored.png_hash {
        return Err(Ok("the stored heightmap fails its hash".to_string()));
    }
    Ok(())
}

/// Where a [`SourceReader`] gets the stored file's parts: a connection, or
/// an owner of one that locks it for each part.
pub(crate) trait SourceParts {
    /// The bytes of part `index` (each [`HEIGHTMAP_PART_BYTES`] long but
    /// the last).
    ///
    /// # Errors
    /// An I/O error wrapping the SQLite error (a missing part included).
    fn part(&self, index: u64) -> std::io::Result<Vec<u8>>;
}

impl SourceParts for &Connection {
    fn part(&self, index: u64) -> std::io::Result<Vec<u8>> {
        read_source_part(self, index)
    }
}

/// Part `index` of the stored heightmap file in `conn`.
///
/// # Errors
/// As [`SourceParts::part`].
pub(crate) fn read_source_part(conn: &Connection, index: u64) -> std::io::Result<Vec<u8>> {
    conn.query_row(
        &format!("SELECT data FROM {HEIGHTMAP_TABLE} WHERE part = ?1"),
        params![index as i64],
        |row| row.get(0),
    )
    .map_err(std::io::Error::other)
}

/// The stored heightmap file read in place, a part at a time: a
/// `Read + Seek` over the `heightmap_png` rows that `parts` reads, holding
/// one part. For a copy [`verify_source`] checked (a part that went missing
/// since reads as an I/O error).
pub(crate) struct SourceReader<P: SourceParts> {
    parts: P,
    len: u64,
    pos: u64,
    /// The part held and its number.
    part: Option<(u64, Vec<u8>)>,
}

impl<P: SourceParts> SourceReader<P> {
    /// A reader over the stored file of `len` bytes.
    pub(crate) fn new(parts: P, len: u64) -> SourceReader<P> {
        SourceReader {
            parts,
            len,
            pos: 0,
            part: None,
        }
    }

    fn load(&mut self, index: u64) -> std::io::Result<&[u8]> {
        if self.part.as_ref().is_none_or(|(i, _)| *i != index) {
            let data = self.parts.part(index)?;
            self.part = Some((index, data));
        }
        Ok(self.part.as_ref().map_or(&[][..], |(_, d)| d.as_slice()))
    }
}

impl<P: SourceParts> std::io::Read for SourceReader<P> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.len || buf.is_empty() {
            return Ok(0);
        }
        let part_bytes = HEIGHTMAP_PART_BYTES as u64;
        let (index, offset) = (self.pos / part_bytes, (self.pos % part_bytes) as usize);
        let data = self.load(index)?;
        let available = data.get(offset..).unwrap_or(&[]);
        if available.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("heightmap part {index} is short"),
            ));
        }
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl<P: SourceParts> std::io::Seek for SourceReader<P> {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let target = match to {
            std::io::SeekFrom::Start(p) => Some(p),
            std::io::SeekFrom::End(d) => self.len.checked_add_signed(d),
            std::io::SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = target.ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek before the start")
        })?;
        Ok(self.pos)
    }
}
