//! Headerless 16-bit RAW heightmaps (Unity's `.r16`/`.raw`, World Machine,
//! Gaea): row-major `u16` samples, row 0 north, little- or big-endian,
//! nothing else in the file. The size comes from the import settings
//! ([`RawLayout`]) or, when none is given, from the file's length as a
//! square (as Unity writes them). Elevations come from the same JSON
//! sidecar a PNG heightmap uses (`<stem>.json`: spacing and the elevations
//! of 0 and 65535); without one the codes are the normalized 0–1 range, as
//! for a PNG without sidecar.

use std::io::{BufReader, Read, Write};
use std::path::Path;

use crate::io::heightmap::heightmap_import::{
    parse_sidecar, read_error, read_sidecar_text, sidecar_path,
};
use crate::io::open_bounded;
use crate::terrain::generation::heightmap::{
    HeightSamples, Heightmap, HeightmapSidecar, ImportError, RawLayout, check_image_size,
};

/// Largest RAW16 file that is read, bytes: [`MAX_PIXELS`] samples of 2
/// bytes (2 GiB).
///
/// [`MAX_PIXELS`]: crate::terrain::generation::heightmap::MAX_PIXELS
pub const MAX_RAW16_FILE_BYTES: u64 = 2 * crate::terrain::generation::heightmap::MAX_PIXELS;

/// The `(width, height)` of a RAW16 file of `bytes` bytes under `layout`.
///
/// # Errors
/// [`ImportError::RawSize`] for an odd length, a length that does not
/// match the given size, or no size and a sample count that is not square;
/// [`ImportError::ZeroSize`] and [`ImportError::ImageTooLarge`] for the size.
pub fn raw16_size(path: &Path, bytes: u64, layout: &RawLayout) -> Result<(u32, u32), ImportError> {
    let refuse = |message: String| ImportError::RawSize {
        path: path.to_path_buf(),
        message,
    };
    if !bytes.is_multiple_of(2) {
        return Err(refuse(format!(
            "a RAW16 file holds 2-byte samples, but it is {bytes} bytes (odd)"
        )));
    }
    let samples = bytes / 2;
    let (width, height) = match layout.size_px {
        Some((w, h)) => {
            if u64::from(w) * u64::from(h) != samples {
                return Err(refuse(format!(
                    "{bytes} bytes are {samples} samples, not the {w} × {h} = {} given",
                    u64::from(w) * u64::from(h)
                )));
            }
            (w, h)
        }
        None => {
            let side = samples.isqrt();
            if side * side != samples {
                return Err(refuse(format!(
                    "{bytes} bytes are {samples} samples, not a square; give the width and height"
                )));
            }
            let side = u32::try_from(side)
                .map_err(|_| refuse(format!("{samples} samples are more than any heightmap")))?;
            (side, side)
        }
    };
    check_image_size(width, height)?;
    Ok((width, height))
}

/// Opens the RAW16 file at `path` (a regular file within
/// [`MAX_RAW16_FILE_BYTES`]) and says its length, bytes.
fn open_raw16(path: &Path) -> Result<(std::io::Take<std::fs::File>, u64), ImportError> {
    let file = open_bounded(path, MAX_RAW16_FILE_BYTES).map_err(|e| read_error(path, e))?;
    let bytes = file
        .get_ref()
        .metadata()
        .map_err(|source| ImportError::Io {
            path: path.to_path_buf(),
            source,
        })?
        .len();
    Ok((file, bytes))
}

/// Reads the RAW16 heightmap at `path` laid out as `layout`, with its
/// sidecar when there is one.
///
/// # Errors
/// File errors ([`ImportError::NotFound`], [`ImportError::Io`],
/// [`ImportError::NotRegularFile`], [`ImportError::FileTooLarge`]), the
/// size errors of [`raw16_size`] (before any sample is read), and
/// [`ImportError::Sidecar`].
pub fn read_raw16(path: &Path, layout: &RawLayout) -> Result<Heightmap, ImportError> {
    let (file, bytes) = open_raw16(path)?;
    // The decoder checks the size before it allocates or reads a sample.
    let sidecar_text = read_sidecar_text(path)?;
    decode_raw16(file, bytes, layout, sidecar_text.as_deref(), path)
}

/// What a RAW16 file's length, layout and sidecar say (see
/// [`read_raw16_header`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Raw16Header {
    /// Pixels along x.
    pub width_px: u32,
    /// Pixels along z.
    pub height_px: u32,
    /// The sidecar (metres and pixel size), when there is one.
    pub sidecar: Option<HeightmapSidecar>,
    /// The samples' byte order: the layout's, or big-endian where the
    /// sidecar says so.
    pub big_endian: bool,
}

/// What a RAW16 file's length, `layout` and sidecar say, without reading a
/// sample.
///
/// # Errors
/// As [`read_raw16`], except reading the samples.
pub fn read_raw16_header(path: &Path, layout: &RawLayout) -> Result<Raw16Header, ImportError> {
    let (_, bytes) = open_raw16(path)?;
    let sidecar_text = read_sidecar_text(path)?;
    let layout = layout_with_sidecar(layout, sidecar_text.as_deref(), path)?;
    let (width_px, height_px) = raw16_size(path, bytes, &layout)?;
    let sidecar = sidecar_text
        .map(|t| parse_sidecar(&t, &sidecar_path(path), width_px, height_px))
        .transpose()?;
    Ok(Raw16Header {
        width_px,
        height_px,
        sidecar,
        big_endian: layout.big_endian,
    })
}

/// [`read_raw16`] from any reader of `bytes` bytes (a streaming world's
/// stored copy), with the sidecar's text; errors name `path`.
///
/// # Errors
/// As [`read_raw16`], without the file errors.
pub fn decode_raw16<R: Read>(
    reader: R,
    bytes: u64,
    layout: &RawLayout,
    sidecar_text: Option<&str>,
    path: &Path,
) -> Result<Heightmap, ImportError> {
    let layout = &layout_with_sidecar(layout, sidecar_text, path)?;
    let (width_px, height_px) = raw16_size(path, bytes, layout)?;
    let sidecar = sidecar_text
        .map(|t| parse_sidecar(t, &sidecar_path(path), width_px, height_px))
        .transpose()?;
    let mut codes = vec![0_u16; width_px as usize * height_px as usize];
    let mut reader = BufReader::with_capacity(1 << 20, reader);
    let mut row = vec![0_u8; width_px as usize * 2];
    for out in codes.chunks_exact_mut(width_px as usize) {
        reader
            .read_exact(&mut row)
            .map_err(|source| ImportError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        for (code, pair) in out.iter_mut().zip(row.chunks_exact(2)) {
            let pair = [pair[0], pair[1]];
            *code = if layout.big_endian {
                u16::from_be_bytes(pair)
            } else {
                u16::from_le_bytes(pair)
            };
        }
    }
    let (offset, scale) = match &sidecar {
        Some(s) => (s.min_elevation_m, s.max_elevation_m - s.min_elevation_m),
        None => (0.0, 1.0),
    };
    Ok(Heightmap {
        width_px,
        height_px,
        samples: HeightSamples::Codes {
            codes,
            max_code: 65535.0,
            offset,
            scale,
        },
        sidecar,
    })
}

/// `layout` completed by the sidecar's `width`, `height` and `byte_order`
/// (`"little"` or `"big"`, as the RAW16 export writes it): the sidecar's
/// size when none is given, big-endian when the sidecar says so.
///
/// # Errors
/// [`ImportError::Sidecar`] for a sidecar that is not JSON, a byte order
/// that is neither, or one that contradicts `layout` (little in the
/// sidecar, big asked for).
fn layout_with_sidecar(
    layout: &RawLayout,
    sidecar_text: Option<&str>,
    path: &Path,
) -> Result<RawLayout, ImportError> {
    let Some(text) = sidecar_text else {
        return Ok(*layout);
    };
    let bad = |message: String| ImportError::Sidecar {
        path: sidecar_path(path),
        message,
    };
    let json: serde_json::Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    let side = |name: &str| {
        json.get(name)
            .and_then(serde_json::Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
    };
    let size_px = layout.size_px.or_else(|| side("width").zip(side("height")));
    let big_endian = match json.get("byte_order").and_then(serde_json::Value::as_str) {
        None => layout.big_endian,
        Some("big") => true,
        Some("little") if layout.big_endian => {
            return Err(bad(
                "field `byte_order` says little-endian but big-endian samples were asked for"
                    .to_string(),
            ));
        }
        Some("little") => false,
        Some(other) => {
            return Err(bad(format!(
                "field `byte_order` is `{other}`, not `little` or `big`"
            )));
        }
    };
    Ok(RawLayout {
        size_px,
        big_endian,
    })
}

/// Writes `codes` (row-major, row 0 north) to `out` as RAW16 in the byte
/// order of `big_endian`.
///
/// # Errors
/// What `out` reports.
pub fn write_raw16(out: &mut impl Write, codes: &[u16], big_endian: bool) -> std::io::Result<()> {
    let mut buffer = Vec::with_capacity(codes.len().min(1 << 19) * 2);
    for chunk in codes.chunks(1 << 19) {
        buffer.clear();
        for &c in chunk {
            buffer.extend_from_slice(&if big_endian {
                c.to_be_bytes()
            } else {
                c.to_le_bytes()
            });
        }
        out.write_all(&buffer)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_size_comes_from_the_layout_or_a_square_length() {
        let p = Path::new("m.r16");
        let square = RawLayout::default();
        assert_eq!(raw16_size(p, 2 * 513 * 513, &square).unwrap(), (513, 513));
        let given = RawLayout {
            size_px: Some((300, 200)),
            big_endian: false,
        };
        assert_eq!(raw16_size(p, 2 * 300 * 200, &given).unwrap(), (300, 200));
        for (bytes, layout, needle) in [
            (2 * 300 * 200, square, "not a square"),
            (2 * 300 * 200 + 1, square, "(odd)"),
            (2 * 300 * 201, given, "not the 300 × 200 = 60000 given"),
            (0, square, "zero size"),
        ] {
            let err = raw16_size(p, bytes, &layout).unwrap_err();
            assert!(err.to_string().contains(needle), "{bytes}: {err}");
        }
    }

    #[test]
    fn samples_round_trip_in_both_byte_orders() {
        let dir = std::env::temp_dir().join(format!("strata-raw16-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let codes: Vec<u16> = (0..12).map(|i| (i * 5461) as u16 ^ 0x0102).collect();
        for big_endian in [false, true] {
            let path = dir.join(format!("m-{big_endian}.r16"));
            let mut bytes = Vec::new();
            write_raw16(&mut bytes, &codes, big_endian).unwrap();
            assert_eq!(bytes.len(), 24);
            let first = if big_endian {
                [0x01, 0x02]
            } else {
                [0x02, 0x01]
            };
            assert_eq!(bytes[..2], first);
            std::fs::write(&path, &bytes).unwrap();
            let layout = RawLayout {
                size_px: Some((4, 3)),
                big_endian,
            };
            let map = read_raw16(&path, &layout).unwrap();
            assert_eq!((map.width_px, map.height_px), (4, 3));
            let back: Vec<f64> = map.samples.iter().collect();
            let want: Vec<f64> = codes.iter().map(|&c| f64::from(c) / 65535.0).collect();
            assert_eq!(back, want);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
