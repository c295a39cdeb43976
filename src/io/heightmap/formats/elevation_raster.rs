//! A decoded elevation raster of any interchange format (GeoTIFF, EXR,
//! RAW16): samples in metres with the missing ones marked, the pixel size
//! when the file knows it, and the georeference to write back on export.
//! [`ElevationRaster::into_heightmap`] fills the missing samples as the
//! import settings ask and hands the terrain builder a [`Heightmap`] whose
//! sidecar carries the true pixel size and elevation range.

use std::path::Path;

use super::geokeys::GeoReference;
use crate::terrain::generation::heightmap::{
    HeightSamples, Heightmap, HeightmapSettings, HeightmapSidecar, ImportError, NoDataFill,
};

/// Sea-floor depth under a [`NoDataFill::Sea`] fill, as a fraction of the
/// raster's valid relief (at least [`MIN_SEA_DEPTH_M`]).
const SEA_DEPTH_OF_RELIEF: f64 = 1.0 / 64.0;

/// Smallest sea-floor depth under a [`NoDataFill::Sea`] fill, metres.
const MIN_SEA_DEPTH_M: f64 = 1.0;

/// An elevation raster as decoded from a file.
#[derive(Clone, Debug, PartialEq)]
pub struct ElevationRaster {
    /// Pixels along x (east).
    pub width_px: u32,
    /// Pixels along z (south); row 0 is north.
    pub height_px: u32,
    /// `width_px × height_px` elevations, metres, row-major, row 0 north;
    /// NaN where the file marks the sample missing (NoData).
    pub samples_m: Vec<f32>,
    /// The pixel's size `(east–west, north–south)` in metres, when the file
    /// says (a georeference); `None` for a plain raster.
    pub pixel_size_m: Option<(f64, f64)>,
    /// The georeference, kept for export.
    pub georeference: Option<GeoReference>,
}

/// What an import will make of a raster: for the import dialog and the
/// command line's summary.
#[derive(Clone, Debug, PartialEq)]
pub struct RasterStats {
    /// Lowest and highest valid elevation, metres (`None` when every sample
    /// is missing).
    pub elevation_range_m: Option<(f64, f64)>,
    /// Samples marked missing.
    pub nodata_samples: u64,
}

impl ElevationRaster {
    /// The valid samples' range and the count of missing ones, in one pass.
    pub fn stats(&self) -> RasterStats {
        let (mut lo, mut hi, mut missing) = (f32::INFINITY, f32::NEG_INFINITY, 0_u64);
        for &s in &self.samples_m {
            if s.is_nan() {
                missing += 1;
            } else {
                lo = lo.min(s);
                hi = hi.max(s);
            }
        }
        RasterStats {
            elevation_range_m: (lo <= hi).then_some((f64::from(lo), f64::from(hi))),
            nodata_samples: missing,
        }
    }

    /// The heightmap the terrain builder takes, and the settings with the
    /// sea level a [`NoDataFill::Sea`] fill sets when `settings` has none.
    /// Missing samples become the lowest valid elevation
    /// ([`NoDataFill::Floor`]) or a sea floor
    /// `max(1 m, relief / 64)` below the sea level ([`NoDataFill::Sea`]).
    /// Without a georeference a pixel is taken as 1 m square. Errors name
    /// `path`.
    ///
    /// # Errors
    /// [`ImportError::NoValidSample`] when every sample is missing.
    pub fn into_heightmap(
        self,
        settings: &HeightmapSettings,
        path: &Path,
    ) -> Result<(Heightmap, HeightmapSettings), ImportError> {
        let fill = NoDataPlan::new(&self.stats(), settings, path)?;
        let mut samples = self.samples_m;
        if fill.nodata_samples > 0 {
            samples
                .iter_mut()
                .filter(|s| s.is_nan())
                .for_each(|s| *s = fill.fill_m);
        }
        let map = fill.heightmap(
            self.width_px,
            self.height_px,
            self.pixel_size_m,
            HeightSamples::Floats(samples),
        );
        Ok((map, fill.settings))
    }
}

/// How an import fills a raster's missing samples, from the raster's
/// [`RasterStats`]: shared by rasters decoded whole and those read a tile
/// at a time, so both build the same terrain.
#[derive(Clone, Debug)]
pub(crate) struct NoDataPlan {
    /// The value of a missing sample, metres.
    pub(crate) fill_m: f32,
    /// Lowest and highest sample after filling, metres.
    pub(crate) range_m: (f64, f64),
    /// The samples marked missing.
    pub(crate) nodata_samples: u64,
    /// The import settings, with the sea level a [`NoDataFill::Sea`] fill
    /// sets when they have none.
    pub(crate) settings: HeightmapSettings,
}

impl NoDataPlan {
    /// The fill of a raster with `stats` under `settings`: the lowest valid
    /// elevation ([`NoDataFill::Floor`]) or a sea floor `max(1 m, relief /
    /// 64)` below the sea level ([`NoDataFill::Sea`]). Errors name `path`.
    ///
    /// # Errors
    /// [`ImportError::NoValidSample`] when every sample is missing.
    pub(crate) fn new(
        stats: &RasterStats,
        settings: &HeightmapSettings,
        path: &Path,
    ) -> Result<NoDataPlan, ImportError> {
        let (lo, hi) = stats
            .elevation_range_m
            .ok_or_else(|| ImportError::NoValidSample {
                path: path.to_path_buf(),
            })?;
        let mut settings = settings.clone();
        let fill_m = match settings.nodata {
            NoDataFill::Floor => lo,
            NoDataFill::Sea => {
                let sea = *settings.sea_level_m.get_or_insert(lo);
                sea.min(lo) - ((hi - lo) * SEA_DEPTH_OF_RELIEF).max(MIN_SEA_DEPTH_M)
            }
        };
        let fill = fill_m as f32;
        let low = if stats.nodata_samples > 0 {
            lo.min(f64::from(fill))
        } else {
            lo
        };
        Ok(NoDataPlan {
            fill_m: fill,
            range_m: (low, hi),
            nodata_samples: stats.nodata_samples,
            settings,
        })
    }

    /// The heightmap of `samples` (filled as planned) with the sidecar the
    /// terrain builder takes: the pixel size (1 m square without a
    /// georeference) and the filled range.
    pub(crate) fn heightmap(
        &self,
        width_px: u32,
        height_px: u32,
        pixel_size_m: Option<(f64, f64)>,
        samples: HeightSamples,
    ) -> Heightmap {
        let (spacing_x_m, spacing_y_m) = pixel_size_m.unwrap_or((1.0, 1.0));
        Heightmap {
            width_px,
            height_px,
            samples,
            sidecar: Some(HeightmapSidecar {
                spacing_x_m,
                spacing_y_m,
                min_elevation_m: self.range_m.0,
                max_elevation_m: self.range_m.1,
                width: Some(width_px),
                height: Some(height_px),
            }),
        }
    }
}

/// The first sample of `samples_m` (row-major, `width_px` wide) that is
/// infinite, as `(x, y, value)`: for readers whose format marks missing
/// samples with NaN only.
pub(crate) fn first_infinite(samples_m: &[f32], width_px: u32) -> Option<(u32, u32, f64)> {
    let i = samples_m.iter().position(|s| s.is_infinite())?;
    let w = width_px.max(1) as usize;
    Some(((i % w) as u32, (i / w) as u32, f64::from(samples_m[i])))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raster(samples_m: Vec<f32>) -> ElevationRaster {
        ElevationRaster {
            width_px: 2,
            height_px: 2,
            samples_m,
            pixel_size_m: Some((30.0, 25.0)),
            georeference: None,
        }
    }

    #[test]
    fn missing_samples_become_the_floor_or_a_sea_floor() {
        let path = Path::new("dem.tif");
        let r = raster(vec![100.0, f32::NAN, 164.0, 120.0]);
        assert_eq!(
            r.stats(),
            RasterStats {
                elevation_range_m: Some((100.0, 164.0)),
                nodata_samples: 1
            }
        );
        let floor = HeightmapSettings::default();
        let (map, s) = r.clone().into_heightmap(&floor, path).unwrap();
        assert_eq!(map.samples.get(1), 100.0);
        assert_eq!(s.sea_level_m, None);
        let side = map.sidecar.unwrap();
        assert_eq!((side.spacing_x_m, side.spacing_y_m), (30.0, 25.0));
        assert_eq!((side.min_elevation_m, side.max_elevation_m), (100.0, 164.0));

        let sea = HeightmapSettings {
            nodata: NoDataFill::Sea,
            ..HeightmapSettings::default()
        };
        let (map, s) = r.clone().into_heightmap(&sea, path).unwrap();
        // Relief 64 m: the sea floor 1 m under the lowest valid sample.
        assert_eq!(map.samples.get(1), 99.0);
        assert_eq!(s.sea_level_m, Some(100.0));
        assert_eq!(map.sidecar.unwrap().min_elevation_m, 99.0);
        // A sea level of the user's stays, and the floor goes under it.
        let high_sea = HeightmapSettings {
            sea_level_m: Some(90.0),
            ..sea
        };
        let (map, s) = r.into_heightmap(&high_sea, path).unwrap();
        assert_eq!(map.samples.get(1), 89.0);
        assert_eq!(s.sea_level_m, Some(90.0));
    }

    #[test]
    fn a_raster_of_only_missing_samples_is_refused() {
        let r = raster(vec![f32::NAN; 4]);
        let err = r
            .into_heightmap(&HeightmapSettings::default(), Path::new("void.tif"))
            .unwrap_err();
        assert!(matches!(err, ImportError::NoValidSample { .. }), "{err}");
        assert_eq!(
            first_infinite(&[1.0, f32::NAN, 3.0, f32::INFINITY], 2),
            Some((1, 1, f64::INFINITY))
        );
    }
}
