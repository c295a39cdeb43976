//! The interchange formats of elevation data besides PNG: GeoTIFF (with its
//! georeference), OpenEXR and headerless RAW16, read into an
//! [`elevation_raster::ElevationRaster`] (or, for RAW16, pixel codes) and
//! written from a world's surface.
//!
//! - [`geotiff_import`]: GeoTIFF decoding, a strip or tile at a time.
//! - [`geotiff_tiles`]: a large GeoTIFF scanned once and read a tile at a
//!   time on demand (streaming worlds, the import summary).
//! - [`geotiff_export`]: float32 GeoTIFF output with the georeferencing tags.
//! - [`geokeys`]: the GeoTIFF georeference and the pixel size in metres.
//! - [`exr_heightmap`]: EXR in and out.
//! - [`raw16`]: RAW16 in and out.
//! - [`engine_sizes`]: Unreal and Unity heightmap sizes and resampling.
//! - [`elevation_raster`]: the decoded raster and its NoData fill.

pub mod elevation_raster;
pub mod engine_sizes;
pub mod exr_heightmap;
pub mod geokeys;
pub mod geotiff_export;
pub mod geotiff_import;
pub mod geotiff_tiles;
pub mod raw16;
