//! A large GeoTIFF read a tile (or strip) at a time: a streaming world
//! never holds the raster whole. Opening scans the file once, a chunk at a
//! time, for what the terrain's layout needs (the valid elevation range
//! and the NoData count; a sample that is neither finite nor NoData is
//! refused there, as a whole read refuses it); afterwards a column decodes
//! only the strips or tiles its samples fall in
//! ([`TiledSamples`](crate::terrain::generation::tiled_samples::TiledSamples)
//! caches them).
//!
//! Each decode takes an idle decoder from a small pool (one is opened per
//! worker that needs one at the same time), so the workers that build
//! columns decode in parallel.

use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tiff::decoder::Decoder;

use super::elevation_raster::{NoDataPlan, RasterStats};
use super::geotiff_import::{ChunkLayout, GeoTiffHeader, open, open_file, unreadable};
use crate::progress::Progress;
use crate::terrain::generation::heightmap::{
    HeightSamples, Heightmap, HeightmapSettings, ImportError,
};
use crate::terrain::generation::tiled_samples::{OverviewBuilder, SampleTiles, TiledSamples};

/// The tiles of one GeoTIFF, decoded on demand through readers that
/// `open_reader` makes (each over the same bytes).
pub struct GeoTiffTiles<R: Read + Seek, F: Fn() -> R> {
    open_reader: F,
    /// Idle decoders, ready for another chunk.
    idle: Mutex<Vec<Decoder<R>>>,
    layout: ChunkLayout,
    /// The name errors give.
    name: PathBuf,
}

impl<R: Read + Seek, F: Fn() -> R> std::fmt::Debug for GeoTiffTiles<R, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeoTiffTiles")
            .field("name", &self.name)
            .field("layout", &self.layout)
            .finish_non_exhaustive()
    }
}

impl<R, F> SampleTiles for GeoTiffTiles<R, F>
where
    R: Read + Seek + Send,
    F: Fn() -> R + Send + Sync,
{
    fn tile_size_px(&self) -> (u32, u32) {
        (self.layout.chunk_w, self.layout.chunk_h)
    }

    fn read_tile(&self, tile_x: u32, tile_y: u32) -> Result<Vec<f32>, String> {
        let (across, down) = self.layout.chunks();
        if tile_x >= across || tile_y >= down {
            return Err(format!("the raster has {across} × {down} strips or tiles"));
        }
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop();
        let mut decoder = match idle {
            Some(d) => d,
            None => {
                open((self.open_reader)(), &self.name)
                    .map_err(|e| e.to_string())?
                    .decoder
            }
        };
        let mut samples = Vec::new();
        let decoded = self
            .layout
            .decode(&mut decoder, tile_x, tile_y, &mut samples)?;
        self.idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(decoder);
        decoded.map_err(|(x, y, v)| format!("sample ({x}, {y}) is {v}"))?;
        Ok(samples)
    }
}

/// Opens the GeoTIFF that `open_reader` reads (errors name `name`) for an
/// import with `settings` without decoding it whole: one pass over its
/// chunks (counted in `progress`, stage "scanning GeoTIFF", and stopped
/// when it is cancelled) finds the elevation range and NoData count, and
/// the heightmap's samples are read a tile at a time afterwards, NoData
/// filled as a whole read fills it ([`NoDataPlan`]). Returns the heightmap,
/// the settings the fill made (a sea level) and the header.
///
/// # Errors
/// As [`super::geotiff_import::decode_geotiff`]: [`ImportError::Unreadable`]
/// for a file that is not a usable TIFF or a corrupt chunk,
/// [`ImportError::BadSample`], [`ImportError::NoValidSample`] and
/// [`ImportError::Cancelled`].
pub fn open_tiled_geotiff<R, F>(
    open_reader: F,
    settings: &HeightmapSettings,
    name: &Path,
    progress: &Progress,
) -> Result<(Heightmap, HeightmapSettings, GeoTiffHeader), ImportError>
where
    R: Read + Seek + Send + 'static,
    F: Fn() -> R + Send + Sync + 'static,
{
    let mut opened = open(open_reader(), name)?;
    let layout = ChunkLayout::of(&opened, name)?;
    let mut overview = OverviewBuilder::new(layout.width_px, layout.height_px);
    let stats = scan(
        &layout,
        &mut opened.decoder,
        name,
        progress,
        Some(&mut overview),
    )?;
    let plan = NoDataPlan::new(&stats, settings, name)?;
    let header = opened.header;
    let tiles = GeoTiffTiles {
        open_reader,
        idle: Mutex::new(vec![opened.decoder]),
        layout,
        name: name.to_path_buf(),
    };
    let samples = TiledSamples::new(
        header.width_px,
        header.height_px,
        Arc::new(tiles),
        plan.fill_m,
        plan.range_m,
        overview.finish(plan.fill_m),
    );
    let map = plan.heightmap(
        header.width_px,
        header.height_px,
        header.pixel_size_m,
        HeightSamples::Tiled(Arc::new(samples)),
    );
    Ok((map, plan.settings, header))
}

/// The header of the GeoTIFF at `path` and its samples' valid elevation
/// range and NoData count, from one pass a strip or tile at a time (memory
/// is one chunk, whatever the raster's size), counted in `progress` (stage
/// "scanning GeoTIFF") and stopped when it is cancelled.
///
/// # Errors
/// As [`super::geotiff_import::read_geotiff`].
pub fn scan_geotiff(
    path: &Path,
    progress: &Progress,
) -> Result<(GeoTiffHeader, RasterStats), ImportError> {
    let mut opened = open(open_file(path)?, path)?;
    let layout = ChunkLayout::of(&opened, path)?;
    let stats = scan(&layout, &mut opened.decoder, path, progress, None)?;
    Ok((opened.header, stats))
}

/// The valid elevation range and NoData count of every chunk, decoding one
/// chunk at a time; every sample also goes into `overview` when given.
fn scan<R: Read + Seek>(
    layout: &ChunkLayout,
    decoder: &mut Decoder<R>,
    name: &Path,
    progress: &Progress,
    mut overview: Option<&mut OverviewBuilder>,
) -> Result<RasterStats, ImportError> {
    let (across, down) = layout.chunks();
    progress.begin_stage("scanning GeoTIFF", u64::from(across) * u64::from(down));
    let (mut lo, mut hi, mut missing) = (f32::INFINITY, f32::NEG_INFINITY, 0_u64);
    let mut samples = Vec::new();
    for cy in 0..down {
        for cx in 0..across {
            progress.check().map_err(|_| ImportError::Cancelled)?;
            layout
                .decode(decoder, cx, cy, &mut samples)
                .map_err(|m| unreadable(name, m))?
                .map_err(|(x_px, y_px, value)| ImportError::BadSample {
                    path: name.to_path_buf(),
                    x_px,
                    y_px,
                    value,
                })?;
            // Only the part of the chunk inside the raster counts.
            let w = (layout.width_px - cx * layout.chunk_w).min(layout.chunk_w) as usize;
            let h = (layout.height_px - cy * layout.chunk_h).min(layout.chunk_h) as usize;
            let (x0, y0) = (cx * layout.chunk_w, cy * layout.chunk_h);
            for (dy, row) in samples
                .chunks_exact(layout.chunk_w as usize)
                .take(h)
                .enumerate()
            {
                if let Some(o) = overview.as_deref_mut() {
                    o.add_row(x0, y0 + dy as u32, &row[..w]);
                }
                for &s in &row[..w] {
                    if s.is_nan() {
                        missing += 1;
                    } else {
                        lo = lo.min(s);
                        hi = hi.max(s);
                    }
                }
            }
            progress.advance(1);
        }
    }
    Ok(RasterStats {
        elevation_range_m: (lo <= hi).then_some((f64::from(lo), f64::from(hi))),
        nodata_samples: missing,
    })
}
