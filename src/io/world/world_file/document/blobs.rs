//! The cells and samples an operation keeps (a stamp, a pasted clipboard)
//! as blobs of the `document` table, named by the XXH3-64 of their bytes so
//! a stamp pressed fifty times is stored once.
//!
//! A blob is one of (all integers little-endian):
//! - a clipboard: `b"CLIP"`, size `[x, y, z]` as three `u32`s, then the
//!   cells, two bytes each (material, occupancy), x fastest, then y;
//! - a stamp: `b"STMP"`, the name as a `u32` byte length and UTF-8, then
//!   `0` and a height stamp (`u32` width, `u32` height, `f32` samples
//!   row-major) or `1` and a clipboard blob.

use glam::IVec3;

use crate::terrain::editing::region::{Clipboard, MAX_CLIPBOARD_VOLUME_CELLS};
use crate::terrain::stamp::definition::{Stamp, StampShape};
use crate::terrain::storage::cell::Cell;

const CLIPBOARD_MAGIC: &[u8; 4] = b"CLIP";
const STAMP_MAGIC: &[u8; 4] = b"STMP";

/// Longest stamp name kept, bytes.
const MAX_NAME_BYTES: usize = 1024;

/// The blob of `clip`.
pub(super) fn clipboard_bytes(clip: &Clipboard) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + clip.cells().len() * 2);
    out.extend_from_slice(CLIPBOARD_MAGIC);
    for v in clip.size().to_array() {
        // A clipboard's sides are positive and bounded by its volume cap.
        out.extend_from_slice(&(v as u32).to_le_bytes());
    }
    for c in clip.cells() {
        out.extend_from_slice(&c.to_bytes());
    }
    out
}

/// The blob of `stamp`.
pub(super) fn stamp_bytes(stamp: &Stamp) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(STAMP_MAGIC);
    let name = stamp.name().as_bytes();
    let name = &name[..name.len().min(MAX_NAME_BYTES)];
    out.extend_from_slice(&(name.len() as u32).to_le_bytes());
    out.extend_from_slice(name);
    match stamp.shape() {
        StampShape::Height(h) => {
            out.push(0);
            out.extend_from_slice(&h.width_px().to_le_bytes());
            out.extend_from_slice(&h.height_px().to_le_bytes());
            for s in h.samples() {
                out.extend_from_slice(&s.to_le_bytes());
            }
        }
        StampShape::Cells(clip) => {
            out.push(1);
            out.extend(clipboard_bytes(clip));
        }
    }
    out
}

/// A cursor over blob bytes whose reads fail instead of running past the end.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.bytes.len() < n {
            return Err(format!(
                "it ends early ({} bytes left, {n} needed)",
                self.bytes.len()
            ));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
}

/// Reads a clipboard blob.
///
/// # Errors
/// Why the bytes are not a clipboard (wrong magic, a size of zero or over
/// [`MAX_CLIPBOARD_VOLUME_CELLS`], too few or too many bytes, an unknown
/// material).
pub(super) fn clipboard_from(bytes: &[u8]) -> Result<Clipboard, String> {
    clipboard_from_reader(&mut Reader { bytes })
}

fn clipboard_from_reader(r: &mut Reader<'_>) -> Result<Clipboard, String> {
    if r.take(4)? != CLIPBOARD_MAGIC {
        return Err("a clipboard blob does not start with CLIP".into());
    }
    let size = [r.u32()?, r.u32()?, r.u32()?];
    let volume: u64 = size.iter().map(|&v| u64::from(v)).product();
    if size.contains(&0) || volume > MAX_CLIPBOARD_VOLUME_CELLS {
        return Err(format!(
            "clipboard size {}×{}×{} cells is empty or above {MAX_CLIPBOARD_VOLUME_CELLS} cells",
            size[0], size[1], size[2]
        ));
    }
    let raw = r.take(volume as usize * 2)?;
    if !r.bytes.is_empty() {
        return Err(format!(
            "{} bytes follow the clipboard's cells",
            r.bytes.len()
        ));
    }
    let cells: Vec<Cell> = raw
        .chunks_exact(2)
        .map(|b| Cell::from_bytes([b[0], b[1]]))
        .collect();
    // The volume cap keeps every side within i32.
    let size = IVec3::new(size[0] as i32, size[1] as i32, size[2] as i32);
    Clipboard::from_cells(size, cells).ok_or_else(|| "the size does not match the cells".into())
}

/// Reads a stamp blob.
///
/// # Errors
/// Why the bytes are not a stamp, or what the stamp's constructor refused.
pub(super) fn stamp_from(bytes: &[u8]) -> Result<Stamp, String> {
    let mut r = Reader { bytes };
    if r.take(4)? != STAMP_MAGIC {
        return Err("a stamp blob does not start with STMP".into());
    }
    let name_len = r.u32()? as usize;
    if name_len > MAX_NAME_BYTES {
        return Err(format!("a stamp name of {name_len} bytes"));
    }
    let name = std::str::from_utf8(r.take(name_len)?)
        .map_err(|_| "the stamp name is not UTF-8".to_string())?
        .to_string();
    match r.u8()? {
        0 => {
            let (w, h) = (r.u32()?, r.u32()?);
            let n = u64::from(w) * u64::from(h);
            if n.saturating_mul(4) != r.bytes.len() as u64 {
                return Err(format!(
                    "a {w}×{h} height stamp with {} bytes of samples",
                    r.bytes.len()
                ));
            }
            let samples: Vec<f32> = r
                .bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            Stamp::height(name, w, h, samples).map_err(|e| e.to_string())
        }
        1 => {
            let clip = clipboard_from_reader(&mut r)?;
            Stamp::cells(name, clip).map_err(|e| e.to_string())
        }
        k => Err(format!(
            "stamp kind {k} is neither 0 (height) nor 1 (cells)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::cell::Material;

    fn clip() -> Clipboard {
        let size = IVec3::new(2, 3, 4);
        let cells = (0..24)
            .map(|i| Cell::new(Material::ALL[i % Material::COUNT], (i * 10) as u8))
            .collect();
        Clipboard::from_cells(size, cells).unwrap()
    }

    #[test]
    fn clipboards_and_stamps_round_trip_exactly() {
        let c = clip();
        assert_eq!(clipboard_from(&clipboard_bytes(&c)).unwrap(), c);
        let height = Stamp::height("mesa", 3, 2, vec![0.0, 0.25, 0.5, 0.75, 1.0, 0.125]).unwrap();
        assert_eq!(stamp_from(&stamp_bytes(&height)).unwrap(), height);
        let cells = Stamp::cells("arch", c).unwrap();
        assert_eq!(stamp_from(&stamp_bytes(&cells)).unwrap(), cells);
    }

    #[test]
    fn damaged_blobs_are_refused_with_a_reason() {
        let good = clipboard_bytes(&clip());
        assert!(clipboard_from(&good[..good.len() - 1]).is_err());
        let mut extra = good.clone();
        extra.push(0);
        assert!(clipboard_from(&extra).unwrap_err().contains("follow"));
        // A library id is a material like any other.
        let mut library_id = good.clone();
        library_id[16] = 200;
        assert!(clipboard_from(&library_id).is_ok());
        let mut huge = good;
        huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(clipboard_from(&huge).unwrap_err().contains("above"));
        let height = stamp_bytes(&Stamp::height("h", 1, 1, vec![0.5]).unwrap());
        let mut nan = height.clone();
        let n = nan.len();
        nan[n - 4..].copy_from_slice(&f32::NAN.to_le_bytes());
        assert!(stamp_from(&nan).is_err());
        for cut in 0..height.len() {
            assert!(stamp_from(&height[..cut]).is_err(), "cut at {cut}");
        }
    }
}
