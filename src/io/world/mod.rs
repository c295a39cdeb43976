//! World files: everything that keeps a world (or a piece of one) on disk
//! between sessions.
//!
//! - [`world_file`]: the `.strata` world format (SQLite), with atomic full
//!   saves, incremental saves of only the changed chunks, and verified loads.
//! - [`streaming_file`]: the streaming world format (SQLite): generator
//!   settings and only the edited chunk columns, saved and pending, opened
//!   without reading any column (spec §12).
//! - [`summary_rows`]: the coarse column summaries a streaming world file
//!   stores beside its edited columns.
//! - [`recovery_files`]: which new-world recovery files a crash left
//!   behind (no running session holds their lock).
//! - [`stamp_file`]: stamps for the stamp tool, grayscale PNGs and `.stamp`
//!   cell files, and the library listing.
//! - [`world_source`]: where a world comes from (generator, heightmap,
//!   world file or a given grid), turned into a grid.
//!
//! Needs only `terrain`, and the [`heightmap`](super::heightmap) room for
//! heightmap worlds and grayscale stamps.

pub mod recovery_files;
pub mod stamp_file;
pub mod streaming_file;
pub mod summary_rows;
pub mod world_file;
pub mod world_source;
