//! The heightmap a heightmap world's file keeps: read in place from its
//! stored copy (verified first, then decoded a part at a time, so memory is
//! the samples) into the terrain its unedited columns come from, with the
//! georeference the import had.

use super::{StreamingFileError, StreamingOrigin, StreamingWorldFile};
use crate::io::heightmap::heightmap_format::decode_source;
use crate::io::heightmap::streaming_heightmap::{SourceReader, verify_source};
use crate::io::heightmap::world_georeference::WorldGeoreference;
use crate::io::world::world_file::sqlite_err;
use crate::terrain::generation::heightmap_terrain::{HeightmapTerrain, elevation_scale};

impl StreamingWorldFile {
    /// The terrain of a heightmap world (`None` for a generated one): the
    /// stored file (PNG, GeoTIFF, EXR or RAW16) checked and decoded in place
    /// with the stored sidecar and settings, ready to build any column, and
    /// the georeference of a file with a pixel size. Seconds for a 16 384²
    /// map; memory is the samples and one stored part.
    ///
    /// # Errors
    /// [`StreamingFileError::CorruptHeightmap`] for a damaged stored copy;
    /// [`StreamingFileError::Heightmap`] when it cannot be decoded or its
    /// terrain is invalid; [`StreamingFileError::File`] when SQLite fails.
    pub fn heightmap_terrain(
        &self,
    ) -> Result<Option<(HeightmapTerrain, Option<WorldGeoreference>)>, StreamingFileError> {
        let StreamingOrigin::Heightmap(stored) = &self.origin else {
            return Ok(None);
        };
        let import = |source| StreamingFileError::Heightmap {
            path: self.path.clone(),
            source: Box::new(source),
        };
        let read = {
            let inner = self.lock();
            verify_source(&inner.conn, stored).map_err(|e| match e {
                Ok(message) => StreamingFileError::CorruptHeightmap {
                    path: self.path.clone(),
                    message,
                },
                Err(e) => StreamingFileError::File(sqlite_err(&self.path, e)),
            })?;
            // Read in place, a part at a time: memory is the samples.
            let reader = std::io::BufReader::with_capacity(
                1 << 16,
                SourceReader::new(&inner.conn, stored.png_bytes),
            );
            decode_source(
                reader,
                stored.png_bytes,
                stored.format,
                stored.sidecar_text.as_deref(),
                &stored.settings,
                &self.path,
                &crate::progress::Progress::new(),
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
