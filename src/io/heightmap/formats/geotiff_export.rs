//! GeoTIFF elevation output (the `tiff` crate's encoder): one band of
//! float32 samples in strips of [`ROWS_PER_STRIP`] rows, Deflate-compressed,
//! with the georeferencing tags of OGC GeoTIFF 1.1 (`ModelPixelScaleTag`,
//! `ModelTiepointTag`, the GeoKey directory and its parameter tags) and,
//! when some samples are missing, `GDAL_NODATA` = `nan`, so GDAL, QGIS and
//! rasterio read the file with its georeference and its holes.

use std::io::{Seek, Write};

use tiff::encoder::colortype::Gray32Float;
use tiff::encoder::{Compression, DeflateLevel, TiffEncoder};
use tiff::tags::Tag;

/// Rows in one strip of an exported GeoTIFF.
pub const ROWS_PER_STRIP: u32 = 16;

/// The georeferencing tags an exported GeoTIFF carries.
#[derive(Clone, Debug, PartialEq)]
pub struct GeoTiffTags<'a> {
    /// `ModelPixelScaleTag`: model units a pixel spans along X (east) and Y
    /// (north), and Z (0).
    pub pixel_scale: [f64; 3],
    /// `ModelTiepointTag`: raster point `(0, 0, 0)` and its model point.
    pub tiepoint: [f64; 6],
    /// The GeoKey directory (shorts).
    pub key_directory: &'a [u16],
    /// `GeoDoubleParamsTag` (written when not empty).
    pub double_params: &'a [f64],
    /// `GeoAsciiParamsTag` (written when not empty).
    pub ascii_params: &'a str,
}

/// Writes `samples` (`width_px × height_px` elevations, row-major, row 0
/// north; NaN where missing) to `out` as a float32 GeoTIFF with `tags`.
///
/// # Errors
/// The encoder's or `out`'s failure, as text; a sample count that does not
/// match the size.
pub fn write_geotiff<W: Write + Seek>(
    out: W,
    width_px: u32,
    height_px: u32,
    samples: &[f32],
    tags: &GeoTiffTags<'_>,
) -> Result<(), String> {
    if samples.len() != width_px as usize * height_px as usize {
        return Err(format!(
            "{} samples for {width_px} × {height_px} pixels",
            samples.len()
        ));
    }
    let text = |e: tiff::TiffError| e.to_string();
    let mut encoder = TiffEncoder::new(out)
        .map_err(text)?
        .with_compression(Compression::Deflate(DeflateLevel::Balanced));
    let mut image = encoder
        .new_image::<Gray32Float>(width_px, height_px)
        .map_err(text)?;
    image.rows_per_strip(ROWS_PER_STRIP).map_err(text)?;
    let dir = image.encoder();
    dir.write_tag(Tag::ModelPixelScaleTag, &tags.pixel_scale[..])
        .map_err(text)?;
    dir.write_tag(Tag::ModelTiepointTag, &tags.tiepoint[..])
        .map_err(text)?;
    dir.write_tag(Tag::GeoKeyDirectoryTag, tags.key_directory)
        .map_err(text)?;
    if !tags.double_params.is_empty() {
        dir.write_tag(Tag::GeoDoubleParamsTag, tags.double_params)
            .map_err(text)?;
    }
    if !tags.ascii_params.is_empty() {
        dir.write_tag(Tag::GeoAsciiParamsTag, tags.ascii_params)
            .map_err(text)?;
    }
    if samples.iter().any(|s| s.is_nan()) {
        dir.write_tag(Tag::GdalNodata, "nan").map_err(text)?;
    }
    image.write_data(samples).map_err(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::heightmap::formats::geotiff_import::read_geotiff;
    use crate::progress::Progress;

    #[test]
    fn a_written_geotiff_reads_back_with_its_samples_tags_and_holes() {
        let dir = std::env::temp_dir().join(format!("strata-geotiff-out-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.tif");
        // 5 × 40: three strips, the last one short.
        let samples: Vec<f32> = (0..200)
            .map(|i| {
                if i == 17 {
                    f32::NAN
                } else {
                    i as f32 * 0.25 - 10.0
                }
            })
            .collect();
        let keys = [1, 1, 0, 1, 1024, 0, 1, 1];
        let tags = GeoTiffTags {
            pixel_scale: [2.5, 2.5, 0.0],
            tiepoint: [0.0, 0.0, 0.0, 1000.0, 2000.0, 0.0],
            key_directory: &keys,
            double_params: &[],
            ascii_params: "",
        };
        let file = std::fs::File::create(&path).unwrap();
        write_geotiff(std::io::BufWriter::new(file), 5, 40, &samples, &tags).unwrap();
        let r = read_geotiff(&path, &Progress::new()).unwrap();
        assert_eq!((r.width_px, r.height_px), (5, 40));
        assert_eq!(r.pixel_size_m, Some((2.5, 2.5)));
        for (i, (a, b)) in r.samples_m.iter().zip(&samples).enumerate() {
            assert!(a == b || (i == 17 && a.is_nan()), "{i}: {a} vs {b}");
        }
        let g = r.georeference.unwrap();
        assert_eq!(g.tiepoint, tags.tiepoint);
        assert_eq!(g.key_directory, keys);
        let err = write_geotiff(std::io::Cursor::new(Vec::new()), 5, 41, &samples, &tags);
        assert!(err.unwrap_err().contains("200 samples for 5 × 41"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
