//! A column's `data` and `hash` (see the format in the module docs of
//! [`streaming_file`](super)): encoding the chunks of one edited column, and
//! decoding a stored one, checked against its hash, without trusting any
//! size in it.

use super::MAX_COLUMN_CHUNKS;
use crate::io::world::world_file::{MAX_BLOB_BYTES, decode_blob, encode_cells};
use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::{ChunkCoord, ColumnCoord};
use crate::terrain::streaming::column_source::ColumnChunks;

/// One column ready to be written.
pub(super) struct EncodedColumn {
    pub(super) column: ColumnCoord,
    pub(super) hash: u64,
    pub(super) data: Vec<u8>,
    /// Its summary's row data (format 4 only).
    pub(super) summary: Option<Vec<u8>>,
}

/// True when the column lies on the chunk lattice.
pub(super) fn column_on_lattice(column: ColumnCoord) -> bool {
    ChunkCoord::new(column.x, 0, column.z).is_on_lattice()
}

/// The stored hash of a column: XXH3-64 over x, z, then each chunk's
/// `(y, content hash)` (see the module docs).
fn column_hash(column: ColumnCoord, chunks: impl IntoIterator<Item = (i32, u64)>) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&column.x.to_le_bytes());
    h.update(&column.z.to_le_bytes());
    for (y, hash) in chunks {
        h.update(&y.to_le_bytes());
        h.update(&hash.to_le_bytes());
    }
    h.digest()
}

/// Encodes `chunks` as the `data` of `column` (see the module docs);
/// all-empty chunks are left out. `Err` says why the column cannot be
/// stored.
pub(super) fn encode_column(
    column: ColumnCoord,
    chunks: &[(ChunkCoord, ChunkCells)],
) -> Result<EncodedColumn, String> {
    if !column_on_lattice(column) {
        return Err("the column lies outside the cell lattice".to_string());
    }
    let mut kept: Vec<&(ChunkCoord, ChunkCells)> = Vec::with_capacity(chunks.len());
    for entry @ (coord, cells) in chunks {
        if ColumnCoord::of(*coord) != column {
            return Err(format!(
                "chunk ({}, {}, {}) is not in the column",
                coord.0.x, coord.0.y, coord.0.z
            ));
        }
        if !coord.is_on_lattice() {
            return Err(format!(
                "chunk y {} lies outside the cell lattice",
                coord.0.y
            ));
        }
        if !cells.is_all_empty() {
            kept.push(entry);
        }
    }
    kept.sort_by_key(|(c, _)| c.0.y);
    if let Some(w) = kept.windows(2).find(|w| w[0].0.0.y == w[1].0.0.y) {
        return Err(format!("chunk y {} is given twice", w[0].0.0.y));
    }
    if kept.len() > MAX_COLUMN_CHUNKS {
        return Err(format!(
            "{} non-empty chunks, more than the {MAX_COLUMN_CHUNKS} a stored column may hold",
            kept.len()
        ));
    }
    let mut data = Vec::with_capacity(4 + kept.len() * 64);
    // At most MAX_COLUMN_CHUNKS (checked above), so it fits in u32.
    data.extend_from_slice(&(kept.len() as u32).to_le_bytes());
    let mut hashes = Vec::with_capacity(kept.len());
    for (coord, cells) in kept {
        let blob = encode_cells(cells).map_err(|e| format!("cannot encode a chunk: {e}"))?;
        data.extend_from_slice(&coord.0.y.to_le_bytes());
        // A chunk blob is at most MAX_BLOB_BYTES (one chunk), far below u32::MAX.
        data.extend_from_slice(&(blob.len() as u32).to_le_bytes());
        data.extend_from_slice(&blob);
        hashes.push((coord.0.y, cells.content_hash()));
    }
    Ok(EncodedColumn {
        column,
        hash: column_hash(column, hashes),
        data,
        summary: None,
    })
}

/// Reads `N` bytes at `*at`, moving `*at` past them.
fn take<const N: usize>(data: &[u8], at: &mut usize) -> Option<[u8; N]> {
    let end = at.checked_add(N)?;
    let bytes: [u8; N] = data.get(*at..end)?.try_into().ok()?;
    *at = end;
    Some(bytes)
}

/// Decodes the `data` of `column` and checks it against `stored_hash`; the
/// chunks come back sorted by y, all-empty ones left out. Allocates at most
/// [`MAX_COLUMN_CHUNKS`] chunks. `Err` says what is damaged.
pub(super) fn decode_column(
    column: ColumnCoord,
    stored_hash: u64,
    data: &[u8],
) -> Result<ColumnChunks, String> {
    let mut at = 0usize;
    let count = u32::from_le_bytes(
        take::<4>(data, &mut at).ok_or_else(|| format!("{} bytes of data", data.len()))?,
    ) as usize;
    if count > MAX_COLUMN_CHUNKS {
        return Err(format!(
            "it claims {count} chunks, more than the {MAX_COLUMN_CHUNKS} a column may hold"
        ));
    }
    let mut chunks = Vec::with_capacity(count);
    let mut hashes = Vec::with_capacity(count);
    let mut previous_y: Option<i32> = None;
    for i in 0..count {
        let header = |what: &str| format!("chunk {i} of {count}: the data ends in its {what}");
        let y = i32::from_le_bytes(take::<4>(data, &mut at).ok_or_else(|| header("y"))?);
        let len =
            u32::from_le_bytes(take::<4>(data, &mut at).ok_or_else(|| header("length"))?) as usize;
        if previous_y.is_some_and(|p| y <= p) {
            return Err(format!(
                "chunk y {y} does not follow chunk y {previous_y:?} upwards"
            ));
        }
        previous_y = Some(y);
        let coord = ChunkCoord::new(column.x, y, column.z);
        if !coord.is_on_lattice() {
            return Err(format!("chunk y {y} lies outside the cell lattice"));
        }
        if len > MAX_BLOB_BYTES {
            return Err(format!(
                "chunk y {y} has {len} bytes of data, longer than any chunk encoding"
            ));
        }
        let blob = at
            .checked_add(len)
            .and_then(|end| data.get(at..end))
            .ok_or_else(|| format!("chunk y {y}: the data ends inside its {len} bytes"))?;
        at += len;
        let cells = decode_blob(blob).map_err(|f| format!("chunk y {y}: {}", f.describe()))?;
        hashes.push((y, cells.content_hash()));
        if !cells.is_all_empty() {
            chunks.push((coord, cells));
        }
    }
    if at != data.len() {
        return Err(format!("{} bytes after the last chunk", data.len() - at));
    }
    let actual = column_hash(column, hashes);
    if actual != stored_hash {
        return Err(format!(
            "content hash {actual:016x} does not match the stored {stored_hash:016x}"
        ));
    }
    Ok(chunks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::cell::{Cell, Material};
    use crate::terrain::storage::coords::CHUNK_VOLUME_CELLS;

    fn dense(seed: usize) -> ChunkCells {
        let mut cells = vec![Cell::EMPTY; CHUNK_VOLUME_CELLS];
        for (i, c) in cells.iter_mut().enumerate() {
            if !(i + seed).is_multiple_of(3) {
                *c = Cell::new(Material((i / 1000 % 10) as u8), (i % 256) as u8);
            }
        }
        ChunkCells::from_dense(cells)
    }

    #[test]
    fn columns_round_trip_and_empty_chunks_are_left_out() {
        let column = ColumnCoord::new(-3, 7);
        let rock = ChunkCells::Uniform(Cell::full(Material::ROCK));
        let chunks = vec![
            (ChunkCoord::new(-3, 2, 7), dense(1)),
            (ChunkCoord::new(-3, -1, 7), rock.clone()),
            (ChunkCoord::new(-3, 5, 7), ChunkCells::Uniform(Cell::EMPTY)),
        ];
        let encoded = encode_column(column, &chunks).unwrap();
        let back = decode_column(column, encoded.hash, &encoded.data).unwrap();
        let ys: Vec<i32> = back.iter().map(|(c, _)| c.0.y).collect();
        assert_eq!(ys, vec![-1, 2]);
        assert_eq!(back[1].1.content_hash(), dense(1).content_hash());
        // The same data under another coordinate fails its hash.
        assert!(decode_column(ColumnCoord::new(-3, 8), encoded.hash, &encoded.data).is_err());
        // An empty column is 4 bytes and comes back empty.
        let empty = encode_column(column, &[]).unwrap();
        assert_eq!(empty.data, vec![0, 0, 0, 0]);
        assert!(
            decode_column(column, empty.hash, &empty.data)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn bad_columns_are_refused_before_writing() {
        let column = ColumnCoord::new(0, 0);
        let rock = ChunkCells::Uniform(Cell::full(Material::ROCK));
        let other = [(ChunkCoord::new(1, 0, 0), rock.clone())];
        assert!(encode_column(column, &other).is_err());
        let twice = [
            (ChunkCoord::new(0, 3, 0), rock.clone()),
            (ChunkCoord::new(0, 3, 0), rock.clone()),
        ];
        assert!(encode_column(column, &twice).is_err());
        let tall: Vec<_> = (0..=MAX_COLUMN_CHUNKS as i32)
            .map(|y| (ChunkCoord::new(0, y, 0), rock.clone()))
            .collect();
        assert!(encode_column(column, &tall).is_err());
        assert!(encode_column(column, &tall[1..]).is_ok());
    }

    #[test]
    fn truncations_and_bit_flips_of_column_data_never_panic() {
        let column = ColumnCoord::new(2, 2);
        let chunks = vec![
            (
                ChunkCoord::new(2, 0, 2),
                ChunkCells::Uniform(Cell::full(Material::DIRT)),
            ),
            (ChunkCoord::new(2, 1, 2), dense(2)),
        ];
        let e = encode_column(column, &chunks).unwrap();
        for n in 0..e.data.len() {
            assert!(decode_column(column, e.hash, &e.data[..n]).is_err(), "{n}");
        }
        for i in 0..e.data.len().min(400) {
            for bit in [0x01u8, 0x10, 0x80] {
                let mut bad = e.data.clone();
                bad[i] ^= bit;
                if let Ok(back) = decode_column(column, e.hash, &bad) {
                    let hashes: Vec<u64> = back.iter().map(|(_, c)| c.content_hash()).collect();
                    let want: Vec<u64> = chunks.iter().map(|(_, c)| c.content_hash()).collect();
                    assert_eq!(hashes, want, "byte {i} bit {bit:#x}");
                }
            }
        }
        // A count beyond the limit is refused before anything is allocated.
        let mut huge = e.data.clone();
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode_column(column, e.hash, &huge).is_err());
    }
}
