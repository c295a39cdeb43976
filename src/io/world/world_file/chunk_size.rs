//! The sizes a world file is bounded by: a dense chunk's blob once
//! decompressed (the codec refuses larger frames), the most chunks a file
//! holds, and the most decoded cells a load keeps; shared by loading,
//! saving, the document tables and the errors that report them.

use crate::terrain::storage::coords::CHUNK_VOLUME_CELLS;

/// Bytes a dense chunk decompresses to: two planes of 32768 bytes.
pub const DENSE_CHUNK_BYTES: usize = CHUNK_VOLUME_CELLS * 2;

/// Most chunks a world file may hold: twice the chunks of the largest
/// generated world (4096² cells), so a hostile file cannot make the loader
/// allocate without bound. Saving refuses a world over it
/// ([`super::WorldFileError::WorldTooLarge`]) for the same reason loading
/// refuses a file over it ([`super::WorldFileError::TooManyChunks`]): see
/// [`super::chunk_count_fits`].
pub const MAX_CHUNKS: usize = 1 << 18;

/// Most bytes of decoded dense chunks a load keeps by default
/// ([`super::LoadOptions::max_decoded_bytes`]): 4 GiB, 65536 dense chunks of
/// [`DENSE_CHUNK_BYTES`], about twice the dense chunks of the largest
/// generated world. A file of many small rows that each decode to a dense
/// chunk is refused before it is decoded instead of exhausting memory.
pub const MAX_DECODED_BYTES: u64 = 4 << 30;
