//! GeoTIFF elevation models: decoded with the `tiff` crate (strips and
//! tiles; LZW, Deflate and PackBits; horizontal and floating-point
//! predictors; 8- to 64-bit integer and float samples) one strip or tile at
//! a time into an [`ElevationRaster`], with the NoData value
//! (`GDAL_NODATA`, tag 42113) marked and the georeference ([`super::geokeys`])
//! giving the pixel size in metres.
//!
//! # Bounds
//! The file is a regular file of at most [`MAX_GEOTIFF_FILE_BYTES`]; its
//! size is checked against [`MAX_GEOTIFF_PIXELS`] and [`MAX_SIDE_PX`](crate::terrain::generation::heightmap::MAX_SIDE_PX) from
//! the header, before the samples are allocated; one decoded strip or tile
//! may take at most [`CHUNK_LIMIT_BYTES`] (a TIFF that declares a huge tile
//! is refused before it is read), and a tag value at most
//! [`TAG_LIMIT_BYTES`]. Memory is the samples (4 bytes each) and one chunk.
//! Only the first image of the file and the first sample of each pixel
//! (the first band, pixel- or band-interleaved) are read.

use std::io::{BufReader, Read, Seek};
use std::path::Path;

use tiff::decoder::{ChunkType, Decoder, DecodingResult, Limits};
use tiff::tags::Tag;

use super::elevation_raster::ElevationRaster;
use super::geokeys::{GeoReference, GeoTags, georeference};
use crate::io::open_bounded;
use crate::progress::Progress;
use crate::terrain::generation::heightmap::{ImportError, check_raster_size};

/// Largest GeoTIFF that is read, bytes (4 GiB: an uncompressed 32 768²
/// float32 raster).
pub const MAX_GEOTIFF_FILE_BYTES: u64 = 4 << 30;

/// Largest GeoTIFF raster, samples (2²⁹, e.g. 23 170²): 2 GiB as `f32`.
pub const MAX_GEOTIFF_PIXELS: u64 = 1 << 29;

/// Largest decoded strip or tile, bytes (64 MiB).
pub const CHUNK_LIMIT_BYTES: usize = 64 << 20;

/// Largest tag value (offset tables, GeoKeys), bytes (16 MiB).
pub const TAG_LIMIT_BYTES: usize = 16 << 20;

/// The format name errors use.
const FORMAT: &str = "GeoTIFF";

/// What a GeoTIFF's header says, read without decoding a sample.
#[derive(Clone, Debug, PartialEq)]
pub struct GeoTiffHeader {
    /// Pixels along x (east).
    pub width_px: u32,
    /// Pixels along z (south).
    pub height_px: u32,
    /// The sample type, e.g. `"float32"`, `"int16"`.
    pub sample_type: String,
    /// How the samples are laid out, e.g. `"256 × 256 tiles"`.
    pub layout: String,
    /// The NoData value, when the file marks one.
    pub nodata: Option<f64>,
    /// The georeference, when the file has one.
    pub georeference: Option<GeoReference>,
    /// The pixel's size `(east–west, north–south)` in metres, from the
    /// georeference.
    pub pixel_size_m: Option<(f64, f64)>,
}

/// An [`ImportError::Unreadable`] naming `path`.
pub(super) fn unreadable(path: &Path, message: impl std::fmt::Display) -> ImportError {
    ImportError::Unreadable {
        path: path.to_path_buf(),
        format: FORMAT,
        message: message.to_string(),
    }
}

/// An [`ImportError::Unreadable`] for pixels of a `kind` that holds no
/// elevations.
fn not_elevations(path: &Path, kind: &str) -> ImportError {
    unreadable(
        path,
        format!("{kind} pixels are not elevations; save one band of numbers"),
    )
}

/// The decoder limits of every GeoTIFF read.
pub(super) fn limits() -> Limits {
    let mut limits = Limits::default();
    limits.decoding_buffer_size = CHUNK_LIMIT_BYTES;
    limits.intermediate_buffer_size = CHUNK_LIMIT_BYTES;
    limits.ifd_value_size = TAG_LIMIT_BYTES;
    limits
}

/// A decoder opened on `reader` with its header read and checked.
pub(super) struct Opened<R: Read + Seek> {
    pub(super) decoder: Decoder<R>,
    pub(super) header: GeoTiffHeader,
    /// Samples per pixel (only the first is read).
    pub(super) samples_per_pixel: usize,
}

/// Opens the GeoTIFF at `path` (a regular file within
/// [`MAX_GEOTIFF_FILE_BYTES`]).
pub(super) fn open_file(
    path: &Path,
) -> Result<BufReader<std::io::Take<std::fs::File>>, ImportError> {
    let file = open_bounded(path, MAX_GEOTIFF_FILE_BYTES)
        .map_err(|e| crate::io::heightmap::heightmap_import::read_error(path, e))?;
    Ok(BufReader::new(file))
}

/// Reads what the header of the GeoTIFF at `path` says, in milliseconds
/// whatever its size.
///
/// # Errors
/// File errors ([`ImportError::NotFound`], [`ImportError::Io`],
/// [`ImportError::NotRegularFile`], [`ImportError::FileTooLarge`]),
/// [`ImportError::Unreadable`] for a file that is not a TIFF, a sample
/// type that is not a number or unusable georeferencing tags,
/// [`ImportError::ZeroSize`] and [`ImportError::ImageTooLarge`].
pub fn read_geotiff_header(path: &Path) -> Result<GeoTiffHeader, ImportError> {
    Ok(open(open_file(path)?, path)?.header)
}

/// Decodes the GeoTIFF at `path` into an elevation raster, a strip or tile
/// at a time, counting them in `progress` (stage "reading GeoTIFF") and
/// stopping when it is cancelled.
///
/// # Errors
/// As [`read_geotiff_header`], and [`ImportError::Unreadable`] for a
/// corrupt or truncated chunk, [`ImportError::BadSample`] for a NaN or
/// infinite sample that is not the NoData value, and
/// [`ImportError::Cancelled`].
pub fn read_geotiff(path: &Path, progress: &Progress) -> Result<ElevationRaster, ImportError> {
    decode_geotiff(open_file(path)?, path, progress)
}

/// [`read_geotiff`] from any reader (a streaming world's stored copy);
/// errors name `path`.
///
/// # Errors
/// As [`read_geotiff`], without the file errors.
pub fn decode_geotiff<R: Read + Seek>(
    reader: R,
    path: &Path,
    progress: &Progress,
) -> Result<ElevationRaster, ImportError> {
    let mut opened = open(reader, path)?;
    let samples_m = read_samples(&mut opened, path, progress)?;
    let header = opened.header;
    Ok(ElevationRaster {
        width_px: header.width_px,
        height_px: header.height_px,
        samples_m,
        pixel_size_m: header.pixel_size_m,
        georeference: header.georeference,
    })
}

/// Opens a decoder on `reader` and reads and checks the header and tags.
pub(super) fn open<R: Read + Seek>(reader: R, path: &Path) -> Result<Opened<R>, ImportError> {
    let mut decoder = Decoder::new(reader)
        .map_err(|e| unreadable(path, e))?
        .with_limits(limits());
    let (width_px, height_px) = decoder.dimensions().map_err(|e| unreadable(path, e))?;
    check_raster_size(width_px, height_px, MAX_GEOTIFF_PIXELS)?;
    let color = decoder.colortype().map_err(|e| unreadable(path, e))?;
    let bands = match color {
        tiff::ColorType::Gray(_) => 1,
        tiff::ColorType::GrayA(_) => 2,
        tiff::ColorType::RGB(_) => 3,
        tiff::ColorType::RGBA(_) => 4,
        tiff::ColorType::Multiband { num_samples, .. } => usize::from(num_samples),
        tiff::ColorType::Palette(_) => return Err(not_elevations(path, "colour-mapped (palette)")),
        tiff::ColorType::YCbCr(_) => return Err(not_elevations(path, "YCbCr colour")),
        tiff::ColorType::CMYK(_) | tiff::ColorType::CMYKA(_) => {
            return Err(not_elevations(path, "CMYK colour"));
        }
        _ => return Err(not_elevations(path, "colour")),
    };
    // Band-interleaved (planar) files keep each band in its own strips or
    // tiles; the first band's come first, one sample a pixel.
    let planar = decoder
        .find_tag_unsigned::<u16>(Tag::PlanarConfiguration)
        .map_err(|e| unreadable(path, e))?
        == Some(2);
    let samples_per_pixel = if planar { 1 } else { bands };
    // One value per band (all equal for the files read): the first one.
    let mut first_value = |tag| -> Result<Option<u16>, ImportError> {
        Ok(decoder
            .find_tag(tag)
            .map_err(|e| unreadable(path, e))?
            .map(|v| v.into_u16_vec().map_err(|e| unreadable(path, e)))
            .transpose()?
            .and_then(|v| v.first().copied()))
    };
    let format = first_value(Tag::SampleFormat)?.unwrap_or(1);
    let bits = first_value(Tag::BitsPerSample)?.unwrap_or(1);
    let sample_type = match format {
        1 => format!("uint{bits}"),
        2 => format!("int{bits}"),
        3 => format!("float{bits}"),
        other => return Err(unreadable(path, format!("sample format {other}"))),
    };
    // A chunk over the decoding limit is refused here, in words, before
    // the decoder's own limit refuses it while reading.
    let (chunk_w, chunk_h) = decoder.chunk_dimensions();
    let chunk_bytes = u64::from(chunk_w)
        * u64::from(chunk_h)
        * u64::from(bits).div_ceil(8)
        * samples_per_pixel as u64;
    if chunk_bytes > CHUNK_LIMIT_BYTES as u64 {
        return Err(unreadable(
            path,
            format!(
                "a strip or tile of {chunk_w} × {chunk_h} pixels takes {:.1} MiB decoded, over \
                 the {} MiB limit; save it with smaller tiles or strips",
                chunk_bytes as f64 / f64::from(1 << 20),
                CHUNK_LIMIT_BYTES >> 20
            ),
        ));
    }
    let layout = describe_layout(&decoder);
    let tags = read_geo_tags(&mut decoder, path)?;
    let georeference = georeference(&tags).map_err(|e| unreadable(path, e))?;
    let pixel_size_m = georeference.as_ref().map(|g| g.pixel_size_m(height_px));
    let nodata = read_nodata(&mut decoder, path)?;
    Ok(Opened {
        decoder,
        header: GeoTiffHeader {
            width_px,
            height_px,
            sample_type,
            layout,
            nodata,
            georeference,
            pixel_size_m,
        },
        samples_per_pixel,
    })
}

/// `"256 × 256 tiles"` or `"strips of 16 rows"`.
fn describe_layout<R: Read + Seek>(decoder: &Decoder<R>) -> String {
    let (w, h) = decoder.chunk_dimensions();
    match decoder.get_chunk_type() {
        ChunkType::Tile => format!("{w} × {h} tiles"),
        ChunkType::Strip => format!("strips of {h} rows"),
    }
}

/// The georeferencing tags (each optional).
fn read_geo_tags<R: Read + Seek>(
    decoder: &mut Decoder<R>,
    path: &Path,
) -> Result<GeoTags, ImportError> {
    let mut doubles = |tag| -> Result<Option<Vec<f64>>, ImportError> {
        decoder
            .find_tag(tag)
            .map_err(|e| unreadable(path, e))?
            .map(|v| v.into_f64_vec().map_err(|e| unreadable(path, e)))
            .transpose()
    };
    let pixel_scale = doubles(Tag::ModelPixelScaleTag)?;
    let tiepoint = doubles(Tag::ModelTiepointTag)?;
    let transformation = doubles(Tag::ModelTransformationTag)?;
    let double_params = doubles(Tag::GeoDoubleParamsTag)?;
    let key_directory = decoder
        .find_tag(Tag::GeoKeyDirectoryTag)
        .map_err(|e| unreadable(path, e))?
        .map(|v| v.into_u16_vec().map_err(|e| unreadable(path, e)))
        .transpose()?;
    let ascii_params = decoder
        .find_tag(Tag::GeoAsciiParamsTag)
        .map_err(|e| unreadable(path, e))?
        .map(|v| v.into_string().map_err(|e| unreadable(path, e)))
        .transpose()?;
    Ok(GeoTags {
        pixel_scale,
        tiepoint,
        transformation,
        key_directory,
        double_params,
        ascii_params,
    })
}

/// The `GDAL_NODATA` value: decimal text (`"-9999"`, `"nan"`).
fn read_nodata<R: Read + Seek>(
    decoder: &mut Decoder<R>,
    path: &Path,
) -> Result<Option<f64>, ImportError> {
    let Some(value) = decoder
        .find_tag(Tag::GdalNodata)
        .map_err(|e| unreadable(path, e))?
    else {
        return Ok(None);
    };
    let text = value.into_string().map_err(|e| unreadable(path, e))?;
    let text = text.trim_matches(|c: char| c == '\0' || c.is_whitespace());
    text.to_ascii_lowercase()
        .parse::<f64>()
        .map(Some)
        .map_err(|_| unreadable(path, format!("GDAL_NODATA `{text}` is not a number")))
}

/// A first image's strips or tiles, and what decoding one needs besides
/// the decoder: the one chunk geometry of whole reads, scans and tile
/// reads.
#[derive(Clone, Debug)]
pub(super) struct ChunkLayout {
    pub(super) width_px: u32,
    pub(super) height_px: u32,
    pub(super) chunk_w: u32,
    pub(super) chunk_h: u32,
    chunk_type: ChunkType,
    stride: usize,
    nodata: Option<f64>,
    unit_m: f64,
}

impl ChunkLayout {
    /// The layout of `opened`'s first image; errors name `path`.
    pub(super) fn of<R: Read + Seek>(
        opened: &Opened<R>,
        path: &Path,
    ) -> Result<ChunkLayout, ImportError> {
        let (chunk_w, chunk_h) = opened.decoder.chunk_dimensions();
        if chunk_w == 0 || chunk_h == 0 {
            return Err(unreadable(path, "a strip or tile has zero size"));
        }
        Ok(ChunkLayout {
            width_px: opened.header.width_px,
            height_px: opened.header.height_px,
            chunk_w,
            chunk_h,
            chunk_type: opened.decoder.get_chunk_type(),
            stride: opened.samples_per_pixel,
            nodata: opened.header.nodata,
            unit_m: opened
                .header
                .georeference
                .as_ref()
                .map_or(1.0, |g| g.vertical_unit_m),
        })
    }

    /// Chunks across and down.
    pub(super) fn chunks(&self) -> (u32, u32) {
        (
            self.width_px.div_ceil(self.chunk_w),
            self.height_px.div_ceil(self.chunk_h),
        )
    }

    /// The file's index of the chunk at `(cx, cy)` in chunks (strips have
    /// one column).
    pub(super) fn index(&self, cx: u32, cy: u32) -> u32 {
        match self.chunk_type {
            ChunkType::Strip => cy,
            ChunkType::Tile => cy * self.chunks().0 + cx,
        }
    }

    /// Where chunk `(cx, cy)`, holding `data_px` pixels, goes: at
    /// `dst_origin` of a destination `dst_width_px` wide.
    fn placement(
        &self,
        (cx, cy): (u32, u32),
        data_px: (u32, u32),
        dst_origin: (u32, u32),
        dst_width_px: u32,
    ) -> Placement {
        Placement {
            x0: cx * self.chunk_w,
            y0: cy * self.chunk_h,
            dst_origin,
            data_w: data_px.0,
            data_h: data_px.1,
            width_px: dst_width_px,
            stride: self.stride,
            nodata: self.nodata,
            unit_m: self.unit_m,
        }
    }

    /// Decodes chunk `(cx, cy)` into `samples`, resized to `chunk_w ×
    /// chunk_h` (metres, NaN for NoData and past the raster's edge);
    /// `Err((x, y, value))` for the first sample that is neither finite nor
    /// NoData.
    pub(super) fn decode<R: Read + Seek>(
        &self,
        decoder: &mut Decoder<R>,
        cx: u32,
        cy: u32,
        samples: &mut Vec<f32>,
    ) -> Result<Result<(), (u32, u32, f64)>, String> {
        let index = self.index(cx, cy);
        let decoded = decoder
            .read_chunk(index)
            .map_err(|e| format!("strip or tile {index}: {e}"))?;
        let (data_w, data_h) = decoder.chunk_data_dimensions(index);
        samples.clear();
        samples.resize(self.chunk_w as usize * self.chunk_h as usize, f32::NAN);
        let place = self.placement(
            (cx, cy),
            (data_w.min(self.chunk_w), data_h.min(self.chunk_h)),
            (0, 0),
            self.chunk_w,
        );
        let mut bad = None;
        place
            .copy(&decoded, samples, &mut bad)
            .map_err(|m| format!("strip or tile {index}: {m}"))?;
        Ok(match bad {
            Some(b) => Err(b),
            None => Ok(()),
        })
    }
}

/// Decodes every chunk of the first plane into metres, NaN for NoData.
fn read_samples<R: Read + Seek>(
    opened: &mut Opened<R>,
    path: &Path,
    progress: &Progress,
) -> Result<Vec<f32>, ImportError> {
    let layout = ChunkLayout::of(opened, path)?;
    let (across, down) = layout.chunks();
    progress.begin_stage("reading GeoTIFF", u64::from(across) * u64::from(down));
    let mut samples = vec![f32::NAN; layout.width_px as usize * layout.height_px as usize];
    let mut bad = None;
    for cy in 0..down {
        for cx in 0..across {
            progress.check().map_err(|_| ImportError::Cancelled)?;
            let index = layout.index(cx, cy);
            let decoded = opened
                .decoder
                .read_chunk(index)
                .map_err(|e| unreadable(path, format!("strip or tile {index}: {e}")))?;
            let data_px = opened.decoder.chunk_data_dimensions(index);
            let origin = (cx * layout.chunk_w, cy * layout.chunk_h);
            layout
                .placement((cx, cy), data_px, origin, layout.width_px)
                .copy(&decoded, &mut samples, &mut bad)
                .map_err(|m| unreadable(path, format!("strip or tile {index}: {m}")))?;
            progress.advance(1);
        }
    }
    if let Some((x_px, y_px, value)) = bad {
        return Err(ImportError::BadSample {
            path: path.to_path_buf(),
            x_px,
            y_px,
            value,
        });
    }
    Ok(samples)
}

/// Where one decoded chunk goes: its pixel origin in the raster (for
/// messages), where it lands in the destination and the destination's
/// width.
struct Placement {
    x0: u32,
    y0: u32,
    /// Where the chunk's first pixel goes in the destination `(x, y)`: its
    /// origin in a whole raster, `(0, 0)` in a buffer of one chunk.
    dst_origin: (u32, u32),
    data_w: u32,
    data_h: u32,
    /// Pixels a destination row holds.
    width_px: u32,
    /// Samples per pixel in the chunk.
    stride: usize,
    nodata: Option<f64>,
    /// Metres per elevation unit.
    unit_m: f64,
}

impl Placement {
    /// Copies `decoded` into `samples` (metres; NaN for NoData); the first
    /// non-finite sample that is not NoData is kept in `bad`. `Err` when the
    /// chunk holds fewer samples than its size.
    fn copy(
        &self,
        decoded: &DecodingResult,
        samples: &mut [f32],
        bad: &mut Option<(u32, u32, f64)>,
    ) -> Result<(), String> {
        match decoded {
            DecodingResult::F32(v) => self.copy_typed(v, f64::from, true, samples, bad),
            DecodingResult::F64(v) => self.copy_typed(v, |s| s, false, samples, bad),
            DecodingResult::I16(v) => self.copy_typed(v, f64::from, false, samples, bad),
            DecodingResult::U16(v) => self.copy_typed(v, f64::from, false, samples, bad),
            DecodingResult::I8(v) => self.copy_typed(v, f64::from, false, samples, bad),
            DecodingResult::U8(v) => self.copy_typed(v, f64::from, false, samples, bad),
            DecodingResult::I32(v) => self.copy_typed(v, f64::from, false, samples, bad),
            DecodingResult::U32(v) => self.copy_typed(v, f64::from, false, samples, bad),
            DecodingResult::U64(_) | DecodingResult::I64(_) => {
                Err("64-bit integer samples are not read; save float32 or int16".to_string())
            }
            DecodingResult::F16(_) => {
                Err("16-bit float samples are not read; save float32".to_string())
            }
        }
    }

    /// [`Placement::copy`] for one sample type; `as_f32` says the NoData
    /// value is compared after rounding to `f32` (GDAL compares in the
    /// data's type).
    fn copy_typed<T: Copy>(
        &self,
        chunk: &[T],
        value: impl Fn(T) -> f64,
        as_f32: bool,
        samples: &mut [f32],
        bad: &mut Option<(u32, u32, f64)>,
    ) -> Result<(), String> {
        let (w, h) = (self.data_w as usize, self.data_h as usize);
        let needed = w * h * self.stride;
        if chunk.len() < needed {
            return Err(format!("{} samples for {w} × {h} pixels", chunk.len()));
        }
        let nodata = self
            .nodata
            .map(|n| if as_f32 { f64::from(n as f32) } else { n });
        let width = self.width_px as usize;
        let (dst_x0, dst_y0) = (self.dst_origin.0 as usize, self.dst_origin.1 as usize);
        let rows = h.min(samples.len() / width - dst_y0);
        let cols = w.min(width - dst_x0);
        for row in 0..rows {
            let src = &chunk[row * w * self.stride..];
            let y = self.y0 as usize + row;
            let dst = &mut samples[(dst_y0 + row) * width + dst_x0..][..cols];
            for (col, out) in dst.iter_mut().enumerate() {
                let v = value(src[col * self.stride]);
                let missing = nodata.is_some_and(|n| v == n || (n.is_nan() && v.is_nan()));
                if missing {
                    *out = f32::NAN;
                } else if !v.is_finite() {
                    bad.get_or_insert(((self.x0 as usize + col) as u32, y as u32, v));
                    *out = f32::NAN;
                } else {
                    *out = (v * self.unit_m) as f32;
                }
            }
        }
        Ok(())
    }
}
