//! Chunk blobs: the `data` column of the `chunks` table (see the format in
//! the [module docs](super)). Encoding and the hostile-input rules of
//! decoding live together so every size limit is checked in one place.

use crate::io::world::world_file::DENSE_CHUNK_BYTES;
use std::path::Path;

use rayon::prelude::*;

use super::error::{WorldFileError, io_err};
use crate::progress::Progress;
use crate::terrain::storage::cell::Cell;
use crate::terrain::storage::chunk::{ChunkCells, cell_bytes};
use crate::terrain::storage::coords::{CHUNK_VOLUME_CELLS, ChunkCoord};

/// zstd level for dense chunks: level 3 (zstd's default) compresses a chunk
/// in about 0.1 ms; level 19 would save a quarter of the bytes at 100× the time.
const ZSTD_LEVEL: i32 = 3;

/// Tag of a uniform chunk's blob: `[0, material, occupancy]`.
const TAG_UNIFORM: u8 = 0;
/// Tag of a dense chunk's blob: `[1]` and one zstd frame.
const TAG_DENSE_ZSTD: u8 = 1;

/// Longest `data` blob the loader reads: a tag and the worst-case zstd frame
/// of 65536 bytes (stored blocks, 3 bytes per 128 KiB block, plus headers),
/// rounded up generously.
pub(crate) const MAX_BLOB_BYTES: usize = DENSE_CHUNK_BYTES + 1024;

/// One chunk ready to be written.
pub(crate) struct EncodedChunk {
    /// The chunk.
    pub(crate) coord: ChunkCoord,
    /// Its [`ChunkCells::content_hash`].
    pub(crate) hash: u64,
    /// Its `data` blob.
    pub(crate) blob: Vec<u8>,
}

/// Encodes a chunk's cells as a `data` blob (see the module docs).
///
/// # Errors
/// Only when zstd itself fails (out of memory).
pub(crate) fn encode_cells(cells: &ChunkCells) -> std::io::Result<Vec<u8>> {
    match cells {
        ChunkCells::Uniform(c) => {
            let [m, o] = c.to_bytes();
            Ok(vec![TAG_UNIFORM, m, o])
        }
        ChunkCells::Dense(dense) => {
            let bytes = cell_bytes(dense);
            let mut planes = Vec::with_capacity(DENSE_CHUNK_BYTES);
            planes.extend(bytes.iter().step_by(2));
            planes.extend(bytes.iter().skip(1).step_by(2));
            let mut blob = vec![TAG_DENSE_ZSTD];
            // The bulk API writes the content size into the frame header,
            // which the loader requires.
            blob.extend(zstd::bulk::compress(&planes, ZSTD_LEVEL)?);
            Ok(blob)
        }
    }
}

/// A table of chunk rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChunkTable {
    /// `chunks`: the world's cells.
    Cells,
    /// `base_chunks`: the layers' base cells where they differ.
    Base,
}

/// Inserts or replaces the rows of `chunks` in `table`.
pub(crate) fn write_chunk_rows(
    tx: &rusqlite::Transaction<'_>,
    table: ChunkTable,
    chunks: &[EncodedChunk],
) -> rusqlite::Result<()> {
    let mut put = tx.prepare(match table {
        ChunkTable::Cells => {
            "INSERT OR REPLACE INTO chunks (x, y, z, hash, data) VALUES (?1, ?2, ?3, ?4, ?5)"
        }
        ChunkTable::Base => {
            "INSERT OR REPLACE INTO base_chunks (x, y, z, hash, data) VALUES (?1, ?2, ?3, ?4, ?5)"
        }
    })?;
    for c in chunks {
        put.execute(rusqlite::params![
            c.coord.0.x,
            c.coord.0.y,
            c.coord.0.z,
            c.hash as i64,
            c.blob
        ])?;
    }
    Ok(())
}

/// Encodes `chunks` in parallel; errors name `path`.
pub(crate) fn encode_chunks(
    path: &Path,
    chunks: &[(ChunkCoord, ChunkCells)],
    progress: &Progress,
) -> Result<Vec<EncodedChunk>, WorldFileError> {
    progress.begin_stage("saving", chunks.len() as u64);
    chunks
        .par_iter()
        .map(|(coord, cells)| {
            if progress.is_cancelled() {
                return Err(WorldFileError::Cancelled {
                    path: path.to_path_buf(),
                    operation: "saving",
                });
            }
            let blob = encode_cells(cells).map_err(|e| io_err(path, e))?;
            progress.advance(1);
            Ok(EncodedChunk {
                coord: *coord,
                hash: cells.content_hash(),
                blob,
            })
        })
        .collect()
}

/// Why one chunk failed to load.
#[derive(Debug)]
pub(crate) enum ChunkFault {
    /// Undecodable data (damaged, or not a chunk encoding), and why.
    Invalid(String),
    /// A well-formed frame that would decompress to more than a chunk (a
    /// decompression bomb; the size it declares, when it declares one).
    TooLarge(Option<u64>),
    /// Decoded cells whose hash is not the stored one.
    HashMismatch {
        /// The stored hash.
        stored: u64,
        /// The decoded cells' hash.
        actual: u64,
    },
}

impl ChunkFault {
    /// The fault as a sentence fragment for [`super::SkippedChunk::reason`].
    pub(crate) fn describe(&self) -> String {
        match self {
            ChunkFault::Invalid(reason) => format!("damaged: {reason}"),
            ChunkFault::TooLarge(Some(n)) => {
                format!("would decompress to {n} bytes, more than {DENSE_CHUNK_BYTES}")
            }
            ChunkFault::TooLarge(None) => {
                format!("would decompress to more than {DENSE_CHUNK_BYTES} bytes")
            }
            ChunkFault::HashMismatch { stored, actual } => {
                format!("content hash {actual:016x} does not match the stored {stored:016x}")
            }
        }
    }
}

/// zstd's "destination buffer is too small" error code.
const ZSTD_DST_TOO_SMALL: usize =
    (zstd::zstd_safe::zstd_sys::ZSTD_ErrorCode::ZSTD_error_dstSize_tooSmall as usize)
        .wrapping_neg();

/// The most bytes one zstd block decompresses to (128 KiB).
const ZSTD_BLOCK_MAX_BYTES: u64 = 128 * 1024;

/// Length of a zstd frame's header (magic number included), from its frame
/// header descriptor; `None` when the frame is too short to have one.
fn zstd_frame_header_len(frame: &[u8]) -> Option<usize> {
    let descriptor = *frame.get(4)?;
    let single_segment = descriptor & 0x20 != 0;
    let dictionary_id = [0, 1, 2, 4][usize::from(descriptor & 0x03)];
    let content_size = match descriptor >> 6 {
        0 => usize::from(single_segment),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    Some(4 + 1 + usize::from(!single_segment) + dictionary_id + content_size)
}

/// The most bytes a zstd frame's blocks can decompress to, read from the
/// block headers alone (raw and RLE blocks say their size, a compressed one
/// makes at most [`ZSTD_BLOCK_MAX_BYTES`]); `None` when the blocks do not
/// parse. A frame that really decompresses to `n` bytes has a bound of at
/// least `n`, so a header declaring more than the bound is damaged.
pub(crate) fn zstd_output_bound(frame: &[u8]) -> Option<u64> {
    let mut at = zstd_frame_header_len(frame)?;
    let mut bound = 0u64;
    loop {
        let h = frame.get(at..at.checked_add(3)?)?;
        let header = u32::from(h[0]) | u32::from(h[1]) << 8 | u32::from(h[2]) << 16;
        let size = (header >> 3) as usize;
        let (makes, stored) = match (header >> 1) & 0x03 {
            0 => (size as u64, size),
            1 => (size as u64, 1),
            2 => (ZSTD_BLOCK_MAX_BYTES, size),
            _ => return None,
        };
        bound = bound.saturating_add(makes);
        at = at.checked_add(3 + stored)?;
        if at > frame.len() {
            return None;
        }
        if header & 1 != 0 {
            return Some(bound);
        }
    }
}

/// Decodes a `data` blob. Allocates at most one chunk's bytes, plus one
/// zstd block's for a frame that declares slightly more than a chunk.
pub(crate) fn decode_blob(blob: &[u8]) -> Result<ChunkCells, ChunkFault> {
    let invalid = |s: String| ChunkFault::Invalid(s);
    match blob.split_first() {
        None => Err(invalid("empty data".to_string())),
        Some((&TAG_UNIFORM, rest)) => match rest {
            &[m, o] => Ok(ChunkCells::Uniform(Cell::from_bytes([m, o]))),
            _ => Err(invalid(format!(
                "a uniform chunk has 3 bytes of data, not {}",
                blob.len()
            ))),
        },
        Some((&TAG_DENSE_ZSTD, frame)) => decode_dense(frame),
        Some((tag, _)) => Err(invalid(format!("unknown encoding tag {tag}"))),
    }
}

/// Decodes the zstd frame of a dense chunk.
///
/// Every frame this build writes declares exactly [`DENSE_CHUNK_BYTES`], so
/// a frame that declares that size but does not decode to it, or declares
/// more than its blocks can hold, was damaged on disk (a flipped bit) and is
/// reported as [`ChunkFault::Invalid`]. Only a well-formed frame that really
/// holds more than a chunk (or declares no size and overflows one) is a
/// decompression bomb, [`ChunkFault::TooLarge`].
fn decode_dense(frame: &[u8]) -> Result<ChunkCells, ChunkFault> {
    use zstd::zstd_safe;
    let invalid = |s: String| ChunkFault::Invalid(s);
    let zstd_error = |code: usize| zstd_safe::get_error_name(code);
    let declared = match zstd_safe::get_frame_content_size(frame) {
        Err(_) => return Err(invalid("not a zstd frame".to_string())),
        Ok(declared) => declared,
    };
    match zstd_safe::find_frame_compressed_size(frame) {
        Ok(n) if n == frame.len() => {}
        Ok(n) => {
            return Err(invalid(format!(
                "{} bytes after the zstd frame",
                frame.len() - n
            )));
        }
        Err(code) => {
            return Err(invalid(format!(
                "the zstd frame does not parse (zstd: {})",
                zstd_error(code)
            )));
        }
    }
    match declared {
        Some(n) if n == DENSE_CHUNK_BYTES as u64 => {}
        Some(n) if n < DENSE_CHUNK_BYTES as u64 => {
            return Err(invalid(format!(
                "the zstd frame declares {n} bytes, not {DENSE_CHUNK_BYTES}"
            )));
        }
        Some(n) => {
            let bound = zstd_output_bound(frame).unwrap_or(0);
            if bound < n {
                return Err(invalid(format!(
                    "the zstd frame declares {n} bytes but its blocks hold at most {bound}"
                )));
            }
            // Slightly more than a chunk is what a flipped bit in the
            // declared size looks like: decode it (one block more than a
            // chunk, at most) to tell a damaged header from real data.
            if n <= DENSE_CHUNK_BYTES as u64 + ZSTD_BLOCK_MAX_BYTES {
                let mut out = vec![0u8; n as usize];
                if let Err(code) = zstd_safe::DCtx::create().decompress(&mut out[..], frame) {
                    return Err(invalid(format!(
                        "the zstd frame declares {n} bytes but its data does not decode to \
                         them (zstd: {})",
                        zstd_error(code)
                    )));
                }
            }
            return Err(ChunkFault::TooLarge(Some(n)));
        }
        // Undeclared: decoding into a buffer of exactly one chunk bounds the
        // output.
        None => {}
    }
    let mut planes = vec![0u8; DENSE_CHUNK_BYTES];
    let mut dctx = zstd_safe::DCtx::create();
    match dctx.decompress(&mut planes[..], frame) {
        Ok(n) if n == DENSE_CHUNK_BYTES => {}
        Ok(n) => {
            return Err(invalid(format!(
                "the zstd frame holds {n} bytes, not {DENSE_CHUNK_BYTES}"
            )));
        }
        Err(code) if code == ZSTD_DST_TOO_SMALL && declared.is_none() => {
            return Err(ChunkFault::TooLarge(None));
        }
        Err(code) => {
            return Err(invalid(format!(
                "the zstd frame declares {DENSE_CHUNK_BYTES} bytes but its data does not \
                 decode to them (zstd: {})",
                zstd_error(code)
            )));
        }
    }
    let (materials, occupancy) = planes.split_at(CHUNK_VOLUME_CELLS);
    let mut cells = Vec::with_capacity(CHUNK_VOLUME_CELLS);
    for (&m, &o) in materials.iter().zip(occupancy) {
        cells.push(Cell::from_bytes([m, o]));
    }
    Ok(ChunkCells::from_dense(cells))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::cell::Material;

    #[test]
    fn blobs_round_trip_and_reject_garbage() {
        let mut dense = vec![Cell::EMPTY; CHUNK_VOLUME_CELLS];
        for (i, c) in dense.iter_mut().enumerate() {
            *c = Cell::new(Material((i % 11) as u8), (i % 256) as u8);
        }
        let cells = ChunkCells::from_dense(dense);
        let blob = encode_cells(&cells).unwrap();
        let back = decode_blob(&blob).unwrap();
        assert_eq!(back.content_hash(), cells.content_hash());
        let uniform = ChunkCells::Uniform(Cell::full(Material::SNOW));
        let blob = encode_cells(&uniform).unwrap();
        assert_eq!(blob, vec![0, 6, 255]);
        assert!(
            matches!(decode_blob(&blob), Ok(ChunkCells::Uniform(c)) if c == Cell::full(Material::SNOW))
        );
        // A library id is a material like any other.
        assert!(
            matches!(decode_blob(&[0, 200, 1]), Ok(ChunkCells::Uniform(c)) if c == Cell::new(Material(200), 1))
        );
        for bad in [&[][..], &[0, 1], &[9, 1, 2], &[1, 1, 2, 3]] {
            assert!(
                matches!(decode_blob(bad), Err(ChunkFault::Invalid(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn single_bit_flips_of_a_dense_blob_never_panic() {
        let mut dense = vec![Cell::EMPTY; CHUNK_VOLUME_CELLS];
        for (i, c) in dense.iter_mut().enumerate() {
            let y = (i / 32) % 32;
            if y < 12 + i % 7 {
                *c = Cell::new(
                    Material((2 + i / 4096 % 4) as u8),
                    if y > 10 { 140 } else { 255 },
                );
            }
        }
        let cells = ChunkCells::from_dense(dense);
        let hash = cells.content_hash();
        let blob = encode_cells(&cells).unwrap();
        let (mut refused, mut changed) = (0, 0);
        for i in 0..blob.len() {
            for bit in [0x01u8, 0x80] {
                let mut bad = blob.clone();
                bad[i] ^= bit;
                // Refused, or decoded to cells whose hash the loader compares.
                match decode_blob(&bad) {
                    Err(_) => refused += 1,
                    Ok(decoded) if decoded.content_hash() != hash => changed += 1,
                    Ok(_) => {}
                }
            }
        }
        assert!(
            refused + changed > blob.len(),
            "{refused} refused, {changed} changed"
        );
    }

    /// A dense chunk's blob with varied cells.
    fn dense_blob() -> Vec<u8> {
        let mut dense = vec![Cell::EMPTY; CHUNK_VOLUME_CELLS];
        for (i, c) in dense.iter_mut().enumerate() {
            let y = (i / 32) % 32;
            if y < 9 + i % 13 {
                *c = Cell::new(Material((2 + i / 2048 % 5) as u8), (40 + i % 200) as u8);
            }
        }
        encode_cells(&ChunkCells::from_dense(dense)).unwrap()
    }

    #[test]
    fn every_single_bit_flip_reads_as_damage_never_as_a_bomb() {
        let blob = dense_blob();
        for i in 0..blob.len() {
            for bit in 0..8 {
                let mut bad = blob.clone();
                bad[i] ^= 1 << bit;
                if let Err(fault @ ChunkFault::TooLarge(_)) = decode_blob(&bad) {
                    panic!("flip of bit {bit} in byte {i}: {}", fault.describe());
                }
            }
        }
    }

    #[test]
    fn a_declared_size_just_over_a_chunk_with_a_chunk_of_data_is_damage() {
        let blob = dense_blob();
        let frame = &blob[1..];
        // Single-segment frame, 2-byte content size (stored as size − 256).
        assert_eq!(frame[4] >> 6, 1);
        assert_ne!(frame[4] & 0x20, 0);
        for declared in [DENSE_CHUNK_BYTES + 1, DENSE_CHUNK_BYTES + 128] {
            let mut bad = blob.clone();
            bad[6..8].copy_from_slice(&((declared - 256) as u16).to_le_bytes());
            match decode_blob(&bad) {
                Err(ChunkFault::Invalid(reason)) => {
                    assert!(
                        reason.contains(&format!("declares {declared} bytes")),
                        "{reason}"
                    );
                    assert!(reason.contains("does not decode"), "{reason}");
                }
                other => panic!("{:?}", other.map(|_| ())),
            }
        }
        // A flipped bit in the compressed data overflows the declared size.
        let mut bad = blob.clone();
        let at = blob.len() / 2;
        bad[at] ^= 0x40;
        if let Err(fault) = decode_blob(&bad) {
            assert!(matches!(fault, ChunkFault::Invalid(_)), "{fault:?}");
            assert!(fault.describe().starts_with("damaged: "), "{fault:?}");
        }
    }

    #[test]
    fn frames_larger_than_a_chunk_are_refused_before_decoding() {
        // Declared size: refused from the header.
        let mut blob = vec![TAG_DENSE_ZSTD];
        blob.extend(zstd::bulk::compress(&vec![0u8; 1 << 20], 3).unwrap());
        assert!(matches!(decode_blob(&blob), Err(ChunkFault::TooLarge(Some(n))) if n == 1 << 20));
        // Undeclared size (streaming frame): the fixed buffer overflows.
        let mut enc = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
        enc.include_contentsize(false).unwrap();
        std::io::Write::write_all(&mut enc, &vec![7u8; 1 << 20]).unwrap();
        let mut blob = vec![TAG_DENSE_ZSTD];
        blob.extend(enc.finish().unwrap());
        assert!(matches!(
            decode_blob(&blob),
            Err(ChunkFault::TooLarge(None))
        ));
    }
}
