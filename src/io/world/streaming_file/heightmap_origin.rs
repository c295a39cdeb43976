//! The heightmap a heightmap world's file keeps: read in place from its
//! stored copy (verified first, then decoded a part at a time) into the
//! terrain its unedited columns come from, with the georeference the import
//! had. A GeoTIFF is scanned once and then read a tile at a time as columns
//! need it, so memory does not grow with the raster; the other formats are
//! decoded whole (memory is the samples).

use std::path::Path;
use std::sync::Arc;

use super::{StreamingFileError, StreamingOrigin, StreamingWorldFile};
use crate::io::heightmap::formats::geotiff_tiles::open_tiled_geotiff;
use crate::io::heightmap::heightmap_format::{ElevationRead, HeightmapFormat, decode_source};
use crate::io::heightmap::streaming_heightmap::{
    SourceParts, SourceReader, read_source_part, verify_source,
};
use crate::io::heightmap::world_georeference::WorldGeoreference;
use crate::io::world::world_file::sqlite_err;
use crate::terrain::generation::heightmap_terrain::{HeightmapTerrain, elevation_scale};

/// The stored copy's parts read through the world file's own connection
/// (locked for each part), so tile reads never contend with a second
/// connection's locks.
impl SourceParts for Arc<StreamingWorldFile> {
    fn part(&self, index: u64) -> std::io::Result<Vec<u8>> {
        read_source_part(&self.lock().conn, index)
    }
}

/// Bytes a stored-copy reader buffers in front of its part.
const READ_BUFFER_BYTES: usize = 1 << 16;

impl StreamingWorldFile {
    /// The terrain of a heightmap world (`None` for a generated one): the
    /// stored file (PNG, GeoTIFF, EXR or RAW16) checked and read in place
    /// with the stored sidecar and settings, ready to build any column, and
    /// the georeference of a file with a pixel size. A GeoTIFF is scanned
    /// once (seconds for a 16 384² raster) and its tiles are read as
    /// columns need them, through this file; the other formats are decoded
    /// whole. The scan or decode is counted in `progress`; decoding errors
    /// name `name` (the file an import read, or this file).
    ///
    /// # Errors
    /// [`StreamingFileError::CorruptHeightmap`] for a damaged stored copy;
    /// [`StreamingFileError::Heightmap`] when it cannot be decoded or its
    /// terrain is invalid; [`StreamingFileError::File`] when SQLite fails.
    pub fn heightmap_terrain(
        self: &Arc<Self>,
        name: &Path,
        progress: &crate::progress::Progress,
    ) -> Result<Option<(HeightmapTerrain, Option<WorldGeoreference>)>, StreamingFileError> {
        let StreamingOrigin::Heightmap(stored) = &self.origin else {
            return Ok(None);
        };
        let import = |source| StreamingFileError::Heightmap {
            path: self.path.clone(),
            source: Box::new(source),
        };
        {
            let inner = self.lock();
            verify_source(&inner.conn, stored).map_err(|e| match e {
                Ok(message) => StreamingFileError::CorruptHeightmap {
                    path: self.path.clone(),
                    message,
                },
                Err(e) => StreamingFileError::File(sqlite_err(&self.path, e)),
            })?;
        }
        let read = if stored.format == HeightmapFormat::GeoTiff {
            let (file, len) = (Arc::clone(self), stored.png_bytes);
            let open_reader = move || {
                std::io::BufReader::with_capacity(
                    READ_BUFFER_BYTES,
                    SourceReader::new(Arc::clone(&file), len),
                )
            };
            let (map, settings, header) =
                open_tiled_geotiff(open_reader, &stored.settings, name, progress)
                    .map_err(import)?;
            ElevationRead {
                map,
                settings,
                georeference: header.georeference,
            }
        } else {
            // Read in place, a part at a time: memory is the samples.
            let inner = self.lock();
            let reader = std::io::BufReader::with_capacity(
                READ_BUFFER_BYTES,
                SourceReader::new(&inner.conn, stored.png_bytes),
            );
            decode_source(
                reader,
                stored.png_bytes,
                stored.format,
                stored.sidecar_text.as_deref(),
                &stored.settings,
                name,
                progress,
            )
            .map_err(import)?
        };
        let georeference = match read.map.sidecar {
            Some(_) => Some(WorldGeoreference::from_import(
                &elevation_scale(&read.map, &read.settings).map_err(import)?,
                read.georeference.as_ref(),
            )),
            None => None,
        };
        let terrain = HeightmapTerrain::streaming(read.map, &read.settings).map_err(import)?;
        Ok(Some((terrain, georeference)))
    }
}
