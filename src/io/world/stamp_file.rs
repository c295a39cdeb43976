//! Stamp files: height stamps are 8- or 16-bit grayscale PNGs,
//! cell (3D) stamps are `.stamp` files written from the region tool's Copy.
//! Both are read with bounded reads and checked before anything large is
//! allocated; [`list_stamps`] reads just their headers for the library panel.
//!
//! # `.stamp` format (version 1, little-endian)
//! | bytes | field |
//! |---|---|
//! | 8 | magic `STRATA3D` |
//! | 4 | version, `u32` = 1 |
//! | 12 | size x, y, z in cells, `u32` each, each `1..=256`, volume at most [`MAX_CLIPBOARD_VOLUME_CELLS`] |
//! | 8 | XXH3-64 of the uncompressed cells |
//! | rest | zstd of the cells, 2 bytes each (`[material, occupancy]`), x fastest, then y, then z |

use std::io::Cursor;
use std::path::{Path, PathBuf};

use glam::IVec3;
use image::ImageDecoder;

use crate::io::BoundedReadError;
use crate::io::open_bounded;
use crate::io::read_bounded;
use crate::terrain::editing::region::{Clipboard, MAX_CLIPBOARD_VOLUME_CELLS};
use crate::terrain::generation::heightmap::ImportError;
use crate::terrain::stamp::definition::{MAX_STAMP_SIDE_PX, Stamp, StampError, StampKind};
use crate::terrain::storage::cell::Cell;

/// Magic bytes opening a `.stamp` file.
pub const CELL_STAMP_MAGIC: [u8; 8] = *b"STRATA3D";

/// The `.stamp` version this build writes and reads.
pub const CELL_STAMP_VERSION: u32 = 1;

/// Extension of cell stamp files.
pub const CELL_STAMP_EXTENSION: &str = "stamp";

/// Largest stamp file read, bytes (64 MiB: an incompressible 4096² 16-bit
/// PNG is 32 MiB, the largest cell stamp 32 MiB of cells before zstd).
pub const MAX_STAMP_FILE_BYTES: u64 = 64 << 20;

/// Largest cell stamp axis, cells.
pub const MAX_CELL_STAMP_SIDE_CELLS: u32 = 256;

/// Header bytes of a `.stamp` file.
const HEADER_BYTES: usize = 8 + 4 + 12 + 8;

/// Why a stamp file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StampFileError {
    /// A refused or failed bounded read (missing, not a regular file, too large).
    #[error("cannot read stamp {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: BoundedReadError,
    },
    /// The PNG could not be decoded, or is coloured.
    #[error("stamp {path}: {message}")]
    Image {
        /// The file.
        path: PathBuf,
        /// What the decoder said.
        message: String,
    },
    /// A PNG larger than [`MAX_STAMP_SIDE_PX`] a side (from its header).
    #[error("stamp {path} is {width_px}×{height_px} pixels, more than {MAX_STAMP_SIDE_PX} a side")]
    ImageTooLarge {
        /// The file.
        path: PathBuf,
        /// Width, pixels.
        width_px: u32,
        /// Height, pixels.
        height_px: u32,
    },
    /// A `.stamp` file that is not one, of another version, or damaged.
    #[error("stamp {path} is not a valid cell stamp: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// Neither `.png` nor `.stamp`.
    #[error("stamp {0} is neither a .png nor a .stamp file")]
    UnknownExtension(PathBuf),
    /// The data made no valid stamp.
    #[error("stamp {path}: {source}")]
    Stamp {
        /// The file.
        path: PathBuf,
        /// Why.
        source: StampError,
    },
    /// Writing failed.
    #[error("cannot write stamp {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// The stamp's name from its file: the file stem, e.g. `"crater"`.
fn stamp_name(path: &Path) -> String {
    path.file_stem()
        .map_or_else(|| "stamp".into(), |s| s.to_string_lossy().into_owned())
}

/// What a path's extension says it holds.
fn kind_of(path: &Path) -> Option<StampKind> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "png" => Some(StampKind::Height),
        CELL_STAMP_EXTENSION => Some(StampKind::Cells),
        _ => None,
    }
}

/// Reads a stamp: a grayscale PNG ([`read_height_stamp`]) or a `.stamp`
/// file ([`read_cell_stamp`]), by extension.
///
/// # Errors
/// [`StampFileError`]; [`StampFileError::UnknownExtension`] for other files.
pub fn read_stamp(path: &Path) -> Result<Stamp, StampFileError> {
    match kind_of(path) {
        Some(StampKind::Height) => read_height_stamp(path),
        Some(StampKind::Cells) => read_cell_stamp(path),
        None => Err(StampFileError::UnknownExtension(path.to_path_buf())),
    }
}

/// Reads an 8- or 16-bit grayscale PNG (with or without alpha, which is
/// ignored; RGB whose pixels are all gray is accepted as gray) as a height
/// stamp named after the file, samples `v / (2^bits − 1)`. The size is
/// checked from the header before any pixel is decoded.
///
/// # Errors
/// [`StampFileError::Read`] (at most [`MAX_STAMP_FILE_BYTES`]),
/// [`StampFileError::ImageTooLarge`], [`StampFileError::Image`] for a
/// corrupt or coloured image.
pub fn read_height_stamp(path: &Path) -> Result<Stamp, StampFileError> {
    let bytes =
        read_bounded(path, MAX_STAMP_FILE_BYTES).map_err(|source| StampFileError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    decode_height_stamp(&bytes, path)
}

/// [`read_height_stamp`] from PNG bytes in memory; `path` names the stamp
/// and its errors.
///
/// # Errors
/// As [`read_height_stamp`], without the read errors.
pub fn decode_height_stamp(png: &[u8], path: &Path) -> Result<Stamp, StampFileError> {
    let (width_px, height_px) = png_dims(Cursor::new(png), path)?;
    let map =
        crate::io::heightmap::heightmap_import::decode_heightmap(png, None, path).map_err(|e| {
            StampFileError::Image {
                path: path.to_path_buf(),
                message: match e {
                    ImportError::UnsupportedColor { color, .. } => {
                        format!("{color} is not grayscale (use an 8- or 16-bit gray PNG)")
                    }
                    other => other.to_string(),
                },
            }
        })?;
    // Without a sidecar the samples are the normalized pixel values.
    let samples: Vec<f32> = map.samples.iter().map(|v| v as f32).collect();
    Stamp::height(stamp_name(path), width_px, height_px, samples).map_err(|source| {
        StampFileError::Stamp {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// A PNG's size from its header, refused above [`MAX_STAMP_SIDE_PX`].
fn png_dims<R: std::io::BufRead + std::io::Seek>(
    reader: R,
    path: &Path,
) -> Result<(u32, u32), StampFileError> {
    let decoder =
        image::codecs::png::PngDecoder::new(reader).map_err(|e| StampFileError::Image {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    let (width_px, height_px) = decoder.dimensions();
    if width_px > MAX_STAMP_SIDE_PX || height_px > MAX_STAMP_SIDE_PX {
        return Err(StampFileError::ImageTooLarge {
            path: path.to_path_buf(),
            width_px,
            height_px,
        });
    }
    Ok((width_px, height_px))
}

/// The `.stamp` bytes of `clip` (see the module docs).
pub fn encode_cell_stamp(clip: &Clipboard) -> Vec<u8> {
    let raw: Vec<u8> = clip.cells().iter().flat_map(|c| c.to_bytes()).collect();
    let size = clip.size().as_uvec3();
    let mut out = Vec::with_capacity(HEADER_BYTES + raw.len() / 4);
    out.extend_from_slice(&CELL_STAMP_MAGIC);
    out.extend_from_slice(&CELL_STAMP_VERSION.to_le_bytes());
    for v in size.to_array() {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&raw).to_le_bytes());
    // Level 9: stamps are written once and read often; a 256³ box takes well under a second.
    match zstd::bulk::compress(&raw, 9) {
        Ok(z) => out.extend_from_slice(&z),
        // zstd fails only on allocation; the caller's write then reports a short file on read.
        Err(e) => log::error!("zstd failed on a cell stamp: {e}"),
    }
    out
}

/// Writes `clip` as a `.stamp` file at `path` (atomically: a failed write
/// leaves an existing file as it was).
///
/// # Errors
/// [`StampFileError::Write`].
pub fn save_cell_stamp(path: &Path, clip: &Clipboard) -> Result<(), StampFileError> {
    let bytes = encode_cell_stamp(clip);
    let write_err = |source: std::io::Error| StampFileError::Write {
        path: path.to_path_buf(),
        source,
    };
    crate::io::write_atomically(
        path,
        |tmp| std::fs::write(tmp, &bytes).map_err(write_err),
        write_err,
    )
}

/// The size `[x, y, z]` in a `.stamp` header, checked (module docs).
fn cell_stamp_header(bytes: &[u8], path: &Path) -> Result<(IVec3, u64), StampFileError> {
    let corrupt = |reason: String| StampFileError::Corrupt {
        path: path.to_path_buf(),
        reason,
    };
    if bytes.len() < HEADER_BYTES {
        return Err(corrupt(format!(
            "{} bytes, shorter than the {HEADER_BYTES}-byte header",
            bytes.len()
        )));
    }
    if bytes[0..8] != CELL_STAMP_MAGIC {
        return Err(corrupt("it does not start with STRATA3D".into()));
    }
    let u32_at =
        |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    let version = u32_at(8);
    if version != CELL_STAMP_VERSION {
        return Err(corrupt(format!(
            "version {version}; this build reads version {CELL_STAMP_VERSION}"
        )));
    }
    let size = [u32_at(12), u32_at(16), u32_at(20)];
    let volume: u64 = size.iter().map(|&v| u64::from(v)).product();
    if size
        .iter()
        .any(|&v| v == 0 || v > MAX_CELL_STAMP_SIDE_CELLS)
        || volume > MAX_CLIPBOARD_VOLUME_CELLS
    {
        return Err(corrupt(format!(
            "size {}×{}×{} cells is outside 1..={MAX_CELL_STAMP_SIDE_CELLS} a side",
            size[0], size[1], size[2]
        )));
    }
    let mut hash = [0u8; 8];
    hash.copy_from_slice(&bytes[24..32]);
    // Each side is at most 256, so the cast is exact.
    let size = IVec3::new(size[0] as i32, size[1] as i32, size[2] as i32);
    Ok((size, u64::from_le_bytes(hash)))
}

/// Decodes `.stamp` bytes (module docs); `path` names the stamp and errors.
///
/// # Errors
/// [`StampFileError::Corrupt`] for a short file, wrong magic or version, a
/// size out of range, cells that do not decompress to exactly the size, a
/// checksum mismatch or an unknown material; [`StampFileError::Stamp`] for
/// a stamp without any cell.
pub fn decode_cell_stamp(bytes: &[u8], path: &Path) -> Result<Stamp, StampFileError> {
    let corrupt = |reason: String| StampFileError::Corrupt {
        path: path.to_path_buf(),
        reason,
    };
    let (size, hash) = cell_stamp_header(bytes, path)?;
    let volume = size.as_u64vec3().element_product() as usize;
    // Bounded: zstd refuses to decompress past the announced size.
    let raw = zstd::bulk::decompress(&bytes[HEADER_BYTES..], volume * 2)
        .map_err(|e| corrupt(format!("the cells do not decompress: {e}")))?;
    if raw.len() != volume * 2 {
        return Err(corrupt(format!(
            "{} bytes of cells for {volume} cells",
            raw.len()
        )));
    }
    if xxhash_rust::xxh3::xxh3_64(&raw) != hash {
        return Err(corrupt("the cells' checksum does not match".into()));
    }
    let cells: Vec<Cell> = raw
        .chunks_exact(2)
        .map(|b| Cell::from_bytes([b[0], b[1]]))
        .collect();
    let clip = Clipboard::from_cells(size, cells)
        .ok_or_else(|| corrupt("the size does not match the cells".into()))?;
    Stamp::cells(stamp_name(path), clip).map_err(|source| StampFileError::Stamp {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads a `.stamp` file (at most [`MAX_STAMP_FILE_BYTES`]).
///
/// # Errors
/// [`StampFileError::Read`] and as [`decode_cell_stamp`].
pub fn read_cell_stamp(path: &Path) -> Result<Stamp, StampFileError> {
    let bytes =
        read_bounded(path, MAX_STAMP_FILE_BYTES).map_err(|source| StampFileError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    decode_cell_stamp(&bytes, path)
}

/// One stamp file found by [`list_stamps`].
#[derive(Clone, Debug, PartialEq)]
pub struct StampListing {
    /// Its name (the file stem).
    pub name: String,
    /// Where it is.
    pub path: PathBuf,
    /// Height or cells.
    pub kind: StampKind,
    /// Size `[x, y, z]` as [`Stamp::dims`] gives it, from the header.
    pub dims: [u32; 3],
}

/// The stamps of a library: what could be listed, and the files that could not.
#[derive(Debug, Default)]
pub struct StampLibrary {
    /// Stamps, sorted by name then path.
    pub stamps: Vec<StampListing>,
    /// `.png` or `.stamp` files whose header was refused, with the reason.
    pub refused: Vec<(PathBuf, String)>,
}

/// The first `bytes` bytes of the stamp file at `path` (fewer when it is shorter).
fn read_head(path: &Path, bytes: usize) -> Result<Vec<u8>, StampFileError> {
    use std::io::Read as _;
    let read_err = |source: BoundedReadError| StampFileError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut head = Vec::with_capacity(bytes);
    open_bounded(path, MAX_STAMP_FILE_BYTES)
        .map_err(read_err)?
        .take(bytes as u64)
        .read_to_end(&mut head)
        .map_err(|e| read_err(BoundedReadError::Io(e)))?;
    Ok(head)
}

/// The header of one stamp file: kind and dims.
fn listing(path: &Path, kind: StampKind) -> Result<StampListing, StampFileError> {
    let dims = match kind {
        StampKind::Height => {
            let (w, h) = png_header_dims(&read_head(path, 24)?, path)?;
            [w, 1, h]
        }
        StampKind::Cells => {
            let head = read_head(path, HEADER_BYTES)?;
            let (size, _) = cell_stamp_header(&head, path)?;
            size.as_uvec3().to_array()
        }
    };
    Ok(StampListing {
        name: stamp_name(path),
        path: path.to_path_buf(),
        kind,
        dims,
    })
}

/// Width and height from a PNG's leading IHDR chunk (its first 24 bytes).
fn png_header_dims(head: &[u8], path: &Path) -> Result<(u32, u32), StampFileError> {
    const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
    if head.len() < 24 || head[0..8] != SIGNATURE || &head[12..16] != b"IHDR" {
        return Err(StampFileError::Image {
            path: path.to_path_buf(),
            message: "not a PNG file (no PNG signature and IHDR header)".into(),
        });
    }
    let be = |i: usize| u32::from_be_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
    let (width_px, height_px) = (be(16), be(20));
    if width_px > MAX_STAMP_SIDE_PX || height_px > MAX_STAMP_SIDE_PX {
        return Err(StampFileError::ImageTooLarge {
            path: path.to_path_buf(),
            width_px,
            height_px,
        });
    }
    Ok((width_px, height_px))
}

/// Lists the `.png` and `.stamp` files directly in each of `dirs` (the
/// shipped `assets/stamps/` and the user's own folder), reading headers
/// only. Folders that do not exist are skipped; other files are ignored.
pub fn list_stamps(dirs: &[&Path]) -> StampLibrary {
    let mut library = StampLibrary::default();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(kind) = kind_of(&path) else {
                continue;
            };
            match listing(&path, kind) {
                Ok(l) => library.stamps.push(l),
                Err(e) => library.refused.push((path, e.to_string())),
            }
        }
    }
    library
        .stamps
        .sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.path.cmp(&b.path)));
    library.refused.sort();
    library
}

/// The folder of the shipped stamps: `$STRATA_ASSETS/stamps` when set, else
/// `assets/stamps` next to the executable, in the working directory, or in
/// the crate source tree, whichever exists first.
pub fn default_stamp_dir() -> PathBuf {
    let mut candidates = Vec::new();
    if let Some(root) = std::env::var_os("STRATA_ASSETS") {
        candidates.push(PathBuf::from(root).join("stamps"));
    }
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        candidates.push(dir.join("assets/stamps"));
    }
    candidates.push(PathBuf::from("assets/stamps"));
    let source_tree = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/stamps");
    candidates
        .into_iter()
        .find(|d| d.is_dir())
        .unwrap_or(source_tree)
}

/// A `side_px²` RGBA preview of `stamp` for the library panel: the gray
/// thumbnail ([`Stamp::thumbnail_gray`]) with empty cells of a cell stamp
/// transparent.
pub fn thumbnail_rgba(stamp: &Stamp, side_px: u32) -> Vec<u8> {
    let cells = stamp.kind() == StampKind::Cells;
    stamp
        .thumbnail_gray(side_px)
        .into_iter()
        .flat_map(|g| [g, g, g, if cells && g == 0 { 0 } else { 255 }])
        .collect()
}
