//! Heightmap interchange: 16-bit grayscale PNGs with a JSON sidecar, and
//! GeoTIFF, EXR and RAW16 elevation data ([`formats`]).
//!
//! - [`heightmap_import`]: reads a heightmap PNG and its sidecar and builds
//!   a grid from it.
//! - [`heightmap_export`]: the top surface as a 16-bit grayscale PNG with a
//!   JSON sidecar that the heightmap importer reads back.
//! - [`streaming_heightmap`]: a heightmap kept inside a streaming world
//!   file (its PNG in parts, its settings as metadata).
//! - `png_rows`: decodes a heightmap PNG a row at a time straight into
//!   pixel codes, so an import never holds the decoded image.
//!
//! Needs only `terrain`; names no other room of `io`.

mod export_writers;
pub mod formats;
pub mod heightmap_export;
pub mod heightmap_format;
pub mod heightmap_import;
pub mod heightmap_summary;
pub mod splat_export;
pub mod streaming_heightmap;
pub mod world_georeference;

mod png_rows;
