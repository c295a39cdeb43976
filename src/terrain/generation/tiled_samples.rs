//! Elevation samples read a tile at a time, on demand: the samples of a
//! large elevation model (a GeoTIFF above the streaming threshold) that a
//! streaming world never holds whole. A column reads only the tiles (or
//! strips) its bilinear samples fall in; decoded tiles stay in a bounded
//! least-recently-used cache, so memory is [`TILE_CACHE_BYTES`] whatever
//! the raster's size.
//!
//! Decoding is the file format's business (`io::heightmap`, above this
//! layer): it hands a [`SampleTiles`] source in, and this module caches and
//! looks up. Missing samples (NaN from the source) read as the fill value
//! the import chose, exactly as a raster decoded whole has them filled.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Bytes of decoded tiles a [`TiledSamples`] keeps (192 MiB: 768 tiles of
/// 256² `f32`).
pub const TILE_CACHE_BYTES: usize = 192 << 20;

/// Fewest tiles the cache keeps, whatever their size (a bilinear sample
/// touches up to four).
const MIN_CACHED_TILES: usize = 8;

/// Where a raster's samples come from, a tile at a time.
pub trait SampleTiles: Send + Sync + std::fmt::Debug {
    /// The size of every tile `(width, height)` in pixels; tile `(tx, ty)`
    /// starts at pixel `(tx · width, ty · height)`. Both are at least 1.
    fn tile_size_px(&self) -> (u32, u32);

    /// The samples of tile `(tile_x, tile_y)`: `width × height` of
    /// [`SampleTiles::tile_size_px`], row-major, in metres, NaN where the
    /// file marks a sample missing; pixels past the raster's edge may hold
    /// anything.
    ///
    /// # Errors
    /// A message saying why the tile cannot be read (a damaged file, an
    /// I/O error).
    fn read_tile(&self, tile_x: u32, tile_y: u32) -> Result<Vec<f32>, String>;
}

/// A tile of a [`TiledSamples`] could not be read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("elevation tile ({tile_x}, {tile_y}) cannot be read: {message}")]
pub struct TileReadError {
    /// Tile column.
    pub tile_x: u32,
    /// Tile row.
    pub tile_y: u32,
    /// Why.
    pub message: String,
}

/// Identity of a [`TiledSamples`], for equality.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A raster's samples read through a [`SampleTiles`] source and a bounded
/// tile cache. Shared between the workers that build columns (it is
/// `Sync`); two workers that miss the same tile may both decode it.
pub struct TiledSamples {
    id: u64,
    width_px: u32,
    height_px: u32,
    tile_w: u32,
    tile_h: u32,
    tiles_across: u32,
    /// The value of a missing sample, metres.
    fill_m: f32,
    /// Lowest and highest sample after filling, metres.
    range_m: (f64, f64),
    /// The raster reduced by block means, for samples that stand for a
    /// wide patch of ground.
    overview: SampleOverview,
    source: Arc<dyn SampleTiles>,
    cache: Mutex<TileCache>,
    tiles_read: AtomicU64,
}

/// Decoded tiles by index, with the use clock for eviction.
struct TileCache {
    tiles: HashMap<u32, (Arc<[f32]>, u64)>,
    clock: u64,
    capacity_tiles: usize,
}

impl std::fmt::Debug for TiledSamples {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TiledSamples")
            .field("width_px", &self.width_px)
            .field("height_px", &self.height_px)
            .field("tile_px", &(self.tile_w, self.tile_h))
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// Two tiled sample sets are equal only when they are the same set (their
/// samples are not compared: that would read both files whole).
impl PartialEq for TiledSamples {
    fn eq(&self, other: &TiledSamples) -> bool {
        self.id == other.id
    }
}

impl TiledSamples {
    /// Samples of a `width_px × height_px` raster read from `source`, with
    /// missing samples read as `fill_m`, `range_m` the filled samples'
    /// `(lowest, highest)` and `overview` their block means (the caller
    /// scanned the raster for both), caching at most [`TILE_CACHE_BYTES`]
    /// of tiles.
    pub fn new(
        width_px: u32,
        height_px: u32,
        source: Arc<dyn SampleTiles>,
        fill_m: f32,
        range_m: (f64, f64),
        overview: SampleOverview,
    ) -> TiledSamples {
        let (tile_w, tile_h) = source.tile_size_px();
        let (tile_w, tile_h) = (tile_w.max(1), tile_h.max(1));
        let tile_bytes = tile_w as usize * tile_h as usize * std::mem::size_of::<f32>();
        TiledSamples {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            width_px,
            height_px,
            tile_w,
            tile_h,
            tiles_across: width_px.div_ceil(tile_w),
            fill_m,
            range_m,
            overview,
            source,
            cache: Mutex::new(TileCache {
                tiles: HashMap::new(),
                clock: 0,
                capacity_tiles: (TILE_CACHE_BYTES / tile_bytes.max(1)).max(MIN_CACHED_TILES),
            }),
            tiles_read: AtomicU64::new(0),
        }
    }

    /// The same samples keeping at most `bytes` of decoded tiles (at least
    /// a few tiles, whatever `bytes` says).
    pub fn with_cache_bytes(self, bytes: usize) -> TiledSamples {
        let tile_bytes = self.tile_w as usize * self.tile_h as usize * std::mem::size_of::<f32>();
        self.lock().capacity_tiles = (bytes / tile_bytes.max(1)).max(MIN_CACHED_TILES);
        self
    }

    /// Pixels `(along x, along z)`.
    pub fn size_px(&self) -> (u32, u32) {
        (self.width_px, self.height_px)
    }

    /// Lowest and highest sample after filling, metres.
    pub fn range_m(&self) -> (f64, f64) {
        self.range_m
    }

    /// The raster reduced by block means.
    pub fn overview(&self) -> &SampleOverview {
        &self.overview
    }

    /// Tiles decoded so far (a tile evicted and needed again counts again).
    pub fn tiles_read(&self) -> u64 {
        self.tiles_read.load(Ordering::Relaxed)
    }

    /// Bytes of decoded tiles held now.
    pub fn cached_bytes(&self) -> usize {
        let tile_bytes = self.tile_w as usize * self.tile_h as usize * std::mem::size_of::<f32>();
        self.lock().tiles.len() * tile_bytes
    }

    /// The sample at pixel `(x_px, y_px)` (inside the raster), metres.
    ///
    /// # Errors
    /// [`TileReadError`] when its tile cannot be read.
    #[inline]
    pub fn get(&self, x_px: u32, y_px: u32) -> Result<f32, TileReadError> {
        let tile = self.tile(x_px / self.tile_w, y_px / self.tile_h)?;
        Ok(self.in_tile(&tile, x_px, y_px))
    }

    /// The samples at pixels `(x0, y0)`, `(x1, y0)`, `(x0, y1)` and
    /// `(x1, y1)` (inside the raster; a bilinear sample's four taps), in
    /// that order, metres: one cache lookup when they share a tile, as
    /// they mostly do.
    ///
    /// # Errors
    /// [`TileReadError`] when a tile cannot be read.
    pub fn taps(
        &self,
        (x0, y0): (u32, u32),
        (x1, y1): (u32, u32),
    ) -> Result<[f32; 4], TileReadError> {
        let (tx, ty) = (x0 / self.tile_w, y0 / self.tile_h);
        if (x1 / self.tile_w, y1 / self.tile_h) != (tx, ty) {
            return Ok([
                self.get(x0, y0)?,
                self.get(x1, y0)?,
                self.get(x0, y1)?,
                self.get(x1, y1)?,
            ]);
        }
        let tile = self.tile(tx, ty)?;
        Ok([
            self.in_tile(&tile, x0, y0),
            self.in_tile(&tile, x1, y0),
            self.in_tile(&tile, x0, y1),
            self.in_tile(&tile, x1, y1),
        ])
    }

    /// The sample at pixel `(x_px, y_px)` of `tile`, its tile; missing
    /// samples read as the fill value.
    #[inline]
    fn in_tile(&self, tile: &[f32], x_px: u32, y_px: u32) -> f32 {
        let v = tile[((y_px % self.tile_h) * self.tile_w + x_px % self.tile_w) as usize];
        if v.is_nan() { self.fill_m } else { v }
    }

    fn lock(&self) -> MutexGuard<'_, TileCache> {
        // The cache is only a map of decoded tiles: a panic while it was
        // held cannot leave it inconsistent.
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Tile `(tx, ty)`, from the cache or decoded (outside the lock).
    fn tile(&self, tx: u32, ty: u32) -> Result<Arc<[f32]>, TileReadError> {
        let index = ty * self.tiles_across + tx;
        {
            let mut cache = self.lock();
            cache.clock += 1;
            let now = cache.clock;
            if let Some((tile, used)) = cache.tiles.get_mut(&index) {
                *used = now;
                return Ok(tile.clone());
            }
        }
        let error = |message: String| TileReadError {
            tile_x: tx,
            tile_y: ty,
            message,
        };
        let samples = self.source.read_tile(tx, ty).map_err(error)?;
        let expected = self.tile_w as usize * self.tile_h as usize;
        if samples.len() != expected {
            return Err(error(format!(
                "{} samples for a {} × {} tile",
                samples.len(),
                self.tile_w,
                self.tile_h
            )));
        }
        self.tiles_read.fetch_add(1, Ordering::Relaxed);
        let tile: Arc<[f32]> = samples.into();
        let mut cache = self.lock();
        cache.clock += 1;
        let now = cache.clock;
        if cache.tiles.len() >= cache.capacity_tiles
            && let Some(oldest) = cache
                .tiles
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| *k)
        {
            cache.tiles.remove(&oldest);
        }
        let kept = cache
            .tiles
            .entry(index)
            .or_insert_with(|| (tile, now))
            .0
            .clone();
        Ok(kept)
    }
}

/// A raster reduced by block means: sample `(i, j)` is the mean of source
/// pixels `[i·f, i·f + f) × [j·f, j·f + f)` (clipped at the edge), `f` the
/// [`SampleOverview::factor`]. A streamed GeoTIFF's coarse levels (horizon
/// nodes whose samples stand for many pixels) read it instead of the
/// tiles, so drawing the whole raster from afar decodes nothing; its
/// means also filter what point samples that far apart would alias.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleOverview {
    /// Source pixels per overview sample along each axis.
    pub factor: u32,
    /// Samples along x.
    pub width: u32,
    /// Samples along z.
    pub height: u32,
    /// `width × height` means, metres, row-major.
    pub samples_m: Vec<f32>,
}

/// Source pixels per overview sample along each axis (8: a 16 384² raster
/// gets a 2 048² overview, 16 MiB).
pub const OVERVIEW_FACTOR: u32 = 8;

impl SampleOverview {
    /// Bilinear value at source pixel coordinates `(u, v)` (pixel centres
    /// at integers), clamped to the raster.
    pub fn bilinear(&self, u: f64, v: f64) -> f64 {
        let f = f64::from(self.factor);
        // Block i's pixels are centred at i·f + (f − 1) / 2.
        let (max_x, max_y) = (f64::from(self.width - 1), f64::from(self.height - 1));
        let x = ((u - (f - 1.0) / 2.0) / f).clamp(0.0, max_x);
        let y = ((v - (f - 1.0) / 2.0) / f).clamp(0.0, max_y);
        let (x0, y0) = (x.floor() as usize, y.floor() as usize);
        let w = self.width as usize;
        let x1 = (x0 + 1).min(w - 1);
        let y1 = (y0 + 1).min(self.height as usize - 1);
        let (fx, fy) = (x - x0 as f64, y - y0 as f64);
        let at = |px: usize, py: usize| f64::from(self.samples_m[py * w + px]);
        let top = at(x0, y0) + (at(x1, y0) - at(x0, y0)) * fx;
        let bottom = at(x0, y1) + (at(x1, y1) - at(x0, y1)) * fx;
        top + (bottom - top) * fy
    }
}

/// Builds a [`SampleOverview`] from samples given one at a time in any
/// order (a scan, tile by tile): sums and counts per block, the missing
/// samples counted apart until the fill value is known.
#[derive(Debug)]
pub struct OverviewBuilder {
    factor: u32,
    width: u32,
    height: u32,
    sums: Vec<f64>,
    valid: Vec<u8>,
    missing: Vec<u8>,
}

impl OverviewBuilder {
    /// A builder for a `width_px × height_px` raster (both at least 1) at
    /// [`OVERVIEW_FACTOR`].
    pub fn new(width_px: u32, height_px: u32) -> OverviewBuilder {
        let factor = OVERVIEW_FACTOR;
        let (width, height) = (
            width_px.div_ceil(factor).max(1),
            height_px.div_ceil(factor).max(1),
        );
        let n = width as usize * height as usize;
        OverviewBuilder {
            factor,
            width,
            height,
            sums: vec![0.0; n],
            valid: vec![0; n],
            missing: vec![0; n],
        }
    }

    /// Adds the samples of row `y_px` from pixel `x0_px` on (inside the
    /// raster), NaN for a missing one.
    pub fn add_row(&mut self, x0_px: u32, y_px: u32, values_m: &[f32]) {
        let row = (y_px / OVERVIEW_FACTOR) as usize * self.width as usize;
        for (dx, &v) in values_m.iter().enumerate() {
            let i = row + ((x0_px as usize + dx) / OVERVIEW_FACTOR as usize);
            if v.is_nan() {
                self.missing[i] += 1;
            } else {
                self.sums[i] += f64::from(v);
                self.valid[i] += 1;
            }
        }
    }

    /// The overview, missing samples counted as `fill_m`.
    pub fn finish(self, fill_m: f32) -> SampleOverview {
        let samples_m = self
            .sums
            .iter()
            .zip(self.valid.iter().zip(&self.missing))
            .map(|(&sum, (&valid, &missing))| {
                let n = f64::from(valid) + f64::from(missing);
                if n == 0.0 {
                    fill_m
                } else {
                    ((sum + f64::from(missing) * f64::from(fill_m)) / n) as f32
                }
            })
            .collect();
        SampleOverview {
            factor: self.factor,
            width: self.width,
            height: self.height,
            samples_m,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 10 × 7 raster in 4 × 3 tiles whose sample at `(x, y)` is
    /// `x + 100 y`, NaN at `(5, 5)`; it counts tile reads and can fail.
    #[derive(Debug)]
    struct Counting {
        fail_tile: Option<(u32, u32)>,
    }

    impl SampleTiles for Counting {
        fn tile_size_px(&self) -> (u32, u32) {
            (4, 3)
        }

        fn read_tile(&self, tx: u32, ty: u32) -> Result<Vec<f32>, String> {
            if self.fail_tile == Some((tx, ty)) {
                return Err("damaged".to_string());
            }
            let mut out = Vec::new();
            for y in ty * 3..ty * 3 + 3 {
                for x in tx * 4..tx * 4 + 4 {
                    out.push(if (x, y) == (5, 5) {
                        f32::NAN
                    } else {
                        (x + 100 * y) as f32
                    });
                }
            }
            Ok(out)
        }
    }

    #[test]
    fn samples_come_from_their_tiles_with_missing_ones_filled() {
        let s = TiledSamples::new(
            10,
            7,
            Arc::new(Counting { fail_tile: None }),
            -3.0,
            (-3.0, 609.0),
            OverviewBuilder::new(10, 7).finish(0.0),
        );
        for y in 0..7 {
            for x in 0..10 {
                let want = if (x, y) == (5, 5) {
                    -3.0
                } else {
                    (x + 100 * y) as f32
                };
                assert_eq!(s.get(x, y), Ok(want), "({x}, {y})");
            }
        }
        // 3 × 3 tiles, each read once.
        assert_eq!(s.tiles_read(), 9);
        // Taps within a tile and across four of them read as single gets.
        for (a, b) in [((1, 1), (2, 2)), ((3, 2), (4, 3)), ((4, 5), (5, 5))] {
            let want = [
                s.get(a.0, a.1).unwrap(),
                s.get(b.0, a.1).unwrap(),
                s.get(a.0, b.1).unwrap(),
                s.get(b.0, b.1).unwrap(),
            ];
            assert_eq!(s.taps(a, b), Ok(want), "{a:?} {b:?}");
        }
        assert_eq!(s.cached_bytes(), 9 * 12 * 4);
        assert_eq!(s.range_m(), (-3.0, 609.0));
    }

    #[test]
    fn the_least_recently_used_tile_is_evicted_past_the_capacity() {
        let s = TiledSamples::new(
            10_000,
            3,
            Arc::new(Counting { fail_tile: None }),
            0.0,
            (0.0, 1.0),
            OverviewBuilder::new(10_000, 3).finish(0.0),
        )
        .with_cache_bytes(0);
        // Tiles 0..=8 fill the 8-tile minimum capacity and evict tile 0.
        for t in 0..=MIN_CACHED_TILES as u32 {
            s.get(t * 4, 0).unwrap();
        }
        assert_eq!(s.tiles_read(), 9);
        s.get(8 * 4, 1).unwrap();
        assert_eq!(s.tiles_read(), 9, "tile 8 is cached");
        s.get(0, 0).unwrap();
        assert_eq!(s.tiles_read(), 10, "tile 0 was evicted and is read again");
        assert_eq!(s.cached_bytes(), MIN_CACHED_TILES * 12 * 4);
    }

    #[test]
    fn a_tile_that_cannot_be_read_is_an_error_naming_it() {
        let s = TiledSamples::new(
            10,
            7,
            Arc::new(Counting {
                fail_tile: Some((1, 2)),
            }),
            0.0,
            (0.0, 1.0),
            OverviewBuilder::new(10, 7).finish(0.0),
        );
        assert_eq!(s.get(0, 0), Ok(0.0));
        let e = s.get(4, 6).unwrap_err();
        assert_eq!((e.tile_x, e.tile_y), (1, 2));
        assert!(e.to_string().contains("damaged"), "{e}");
    }

    #[test]
    fn the_overview_holds_block_means_with_missing_samples_filled() {
        // 10 × 9 pixels: blocks of 8 give 2 × 2 overview samples.
        let mut b = OverviewBuilder::new(10, 9);
        for y in 0..9 {
            let row: Vec<f32> = (0..10)
                .map(|x| {
                    if (x, y) == (9, 8) {
                        f32::NAN
                    } else {
                        (x + 10 * y) as f32
                    }
                })
                .collect();
            // Two pieces, as two tiles would give them.
            b.add_row(0, y, &row[..3]);
            b.add_row(3, y, &row[3..]);
        }
        let o = b.finish(-100.0);
        assert_eq!((o.width, o.height, o.factor), (2, 2, 8));
        // Block (0, 0): x 0..8, y 0..8, mean 3.5 + 10 · 3.5.
        assert_eq!(o.samples_m[0], 38.5);
        // Block (1, 1): (8, 8) = 88 and the missing (9, 8) filled as -100.
        assert_eq!(o.samples_m[3], -6.0);
        // Block (0, 0)'s pixels are centred at (3.5, 3.5); clamped beyond.
        assert_eq!(o.bilinear(3.5, 3.5), 38.5);
        assert_eq!(o.bilinear(-50.0, -50.0), 38.5);
        // Halfway between blocks (0, 0) and (1, 0) along x.
        let between = (o.samples_m[0] as f64 + o.samples_m[1] as f64) / 2.0;
        assert!((o.bilinear(7.5, 3.5) - between).abs() < 1e-9);
    }
}
