//! The size of a dense chunk's blob once decompressed, shared by the codec
//! (which refuses larger frames) and the error that reports them.

use crate::terrain::storage::coords::CHUNK_VOLUME_CELLS;

/// Bytes a dense chunk decompresses to: two planes of 32768 bytes.
pub const DENSE_CHUNK_BYTES: usize = CHUNK_VOLUME_CELLS * 2;
