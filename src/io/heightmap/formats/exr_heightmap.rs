//! OpenEXR elevation rasters, in and out (the `exr` crate): terrain tools
//! trade heights as 32-bit float EXRs, one channel or the first of RGB.
//!
//! Reading takes the first layer's only channel, else its `R`, else `Y`,
//! else the first channel by name, at full resolution, as `f32` metres
//! (half and integer samples are widened). EXR has no NoData field: NaN
//! samples are missing (as GDAL writes a float raster's NoData), infinite
//! ones are refused. The size is checked from the header against
//! [`MAX_EXR_PIXELS`] before anything is decoded. The pixel size comes from
//! the JSON sidecar beside the file when there is one (the same
//! `<stem>.json` a PNG heightmap uses; its elevation fields are ignored,
//! the samples being metres already).
//!
//! Writing makes a single-channel `Y` float32 EXR, ZIP-compressed
//! (lossless), scan lines top (north) to bottom.

use std::path::Path;

use exr::prelude::*;

use super::elevation_raster::{ElevationRaster, first_infinite};
use crate::io::heightmap::heightmap_import::{
    parse_sidecar, read_error, read_sidecar_text, sidecar_path,
};
use crate::io::open_bounded;
use crate::terrain::generation::heightmap::{ImportError, check_raster_size};

/// Largest EXR raster read, samples (2²⁸, a 16 384² map: 1 GiB as `f32`).
pub const MAX_EXR_PIXELS: u64 = 1 << 28;

/// Largest EXR file read, bytes (4 GiB).
pub const MAX_EXR_FILE_BYTES: u64 = 4 << 30;

/// The format name errors use.
const FORMAT: &str = "EXR";

fn unreadable(path: &Path, message: impl std::fmt::Display) -> ImportError {
    ImportError::Unreadable {
        path: path.to_path_buf(),
        format: FORMAT,
        message: message.to_string(),
    }
}

/// The channel an elevation is read from: the only one, `R`, `Y`, or the
/// first by name.
fn elevation_channel(names: &[String]) -> Option<&str> {
    if let [only] = names {
        return Some(only);
    }
    ["R", "Y"]
        .into_iter()
        .find(|want| names.iter().any(|n| n == want))
        .or_else(|| names.first().map(String::as_str))
}

/// The first layer's size (checked against the limits), the channel the
/// elevation is read from and its sample type, from a header.
fn elevation_layer(
    meta: &MetaData,
    path: &Path,
) -> std::result::Result<(u32, u32, String, SampleType), ImportError> {
    let header = meta
        .headers
        .first()
        .ok_or_else(|| unreadable(path, "the file has no layer"))?;
    let size = header.layer_size;
    let (width_px, height_px) = (
        u32::try_from(size.width()).unwrap_or(u32::MAX),
        u32::try_from(size.height()).unwrap_or(u32::MAX),
    );
    check_raster_size(width_px, height_px, MAX_EXR_PIXELS)?;
    let names: Vec<String> = header
        .channels
        .list
        .iter()
        .map(|c| c.name.to_string())
        .collect();
    let name = elevation_channel(&names)
        .ok_or_else(|| unreadable(path, "the layer has no channel"))?
        .to_string();
    let sample = header
        .channels
        .list
        .iter()
        .find(|c| c.name.to_string() == name)
        .map_or(SampleType::F32, |c| c.sample_type);
    Ok((width_px, height_px, name, sample))
}

/// An EXR's `(width, height)` in pixels and its pixel size in metres (from
/// its sidecar, when it has one).
pub type ExrHeader = (u32, u32, Option<(f64, f64)>);

/// What the EXR at `path` and its sidecar say without decoding a sample:
/// `(width, height, pixel size in metres)`.
///
/// # Errors
/// As [`read_exr`], except decoding the samples.
pub fn read_exr_header(path: &Path) -> std::result::Result<ExrHeader, ImportError> {
    drop(open_bounded(path, MAX_EXR_FILE_BYTES).map_err(|e| read_error(path, e))?);
    let meta = MetaData::read_from_file(path, false).map_err(|e| unreadable(path, e))?;
    let (width_px, height_px, _, _) = elevation_layer(&meta, path)?;
    let sidecar = read_sidecar_text(path)?
        .map(|t| parse_sidecar(&t, &sidecar_path(path), width_px, height_px))
        .transpose()?;
    Ok((
        width_px,
        height_px,
        sidecar.map(|s| (s.spacing_x_m, s.spacing_y_m)),
    ))
}

/// Reads the EXR at `path` as an elevation raster (see the module docs).
///
/// # Errors
/// File errors ([`ImportError::NotFound`], [`ImportError::Io`],
/// [`ImportError::NotRegularFile`], [`ImportError::FileTooLarge`]);
/// [`ImportError::Unreadable`] for a file that is not an EXR, is corrupt or
/// holds deep data; [`ImportError::ZeroSize`] and
/// [`ImportError::ImageTooLarge`] from the header;
/// [`ImportError::BadSample`] for an infinite sample;
/// [`ImportError::Sidecar`] for a bad sidecar.
pub fn read_exr(path: &Path) -> std::result::Result<ElevationRaster, ImportError> {
    // Bounds first: a regular file within the limit.
    let file = open_bounded(path, MAX_EXR_FILE_BYTES).map_err(|e| read_error(path, e))?;
    let file = file.into_inner();
    let sidecar_text = read_sidecar_text(path)?;
    decode_exr(std::io::BufReader::new(file), path, sidecar_text.as_deref())
}

/// [`read_exr`] from any reader (a streaming world's stored copy), with
/// the sidecar's text; errors name `path`.
///
/// # Errors
/// As [`read_exr`], without the file errors.
pub fn decode_exr<R: std::io::Read + std::io::Seek>(
    mut reader: R,
    path: &Path,
    sidecar_text: Option<&str>,
) -> std::result::Result<ElevationRaster, ImportError> {
    let meta = MetaData::read_from_buffered(&mut reader, false).map_err(|e| unreadable(path, e))?;
    reader
        .seek(std::io::SeekFrom::Start(0))
        .map_err(|e| unreadable(path, e))?;
    let (width_px, height_px, channel, _) = elevation_layer(&meta, path)?;
    let width = width_px as usize;
    let image = read()
        .no_deep_data()
        .largest_resolution_level()
        .specific_channels()
        .required(channel.as_str())
        .collect_pixels(
            move |resolution, _| vec![f32::NAN; resolution.width() * resolution.height()],
            move |samples: &mut Vec<f32>, at, (s,): (f32,)| {
                if let Some(out) = samples.get_mut(at.y() * width + at.x()) {
                    *out = s;
                }
            },
        )
        .first_valid_layer()
        .all_attributes()
        .from_buffered(reader)
        .map_err(|e| unreadable(path, e))?;
    let samples_m = image.layer_data.channel_data.pixels;
    if samples_m.len() != width * height_px as usize {
        return Err(unreadable(path, "the layer's size differs from its header"));
    }
    if let Some((x_px, y_px, value)) = first_infinite(&samples_m, width_px) {
        return Err(ImportError::BadSample {
            path: path.to_path_buf(),
            x_px,
            y_px,
            value,
        });
    }
    let sidecar = sidecar_text
        .map(|t| parse_sidecar(t, &sidecar_path(path), width_px, height_px))
        .transpose()?;
    Ok(ElevationRaster {
        width_px,
        height_px,
        samples_m,
        pixel_size_m: sidecar.map(|s| (s.spacing_x_m, s.spacing_y_m)),
        georeference: None,
    })
}

/// The channel an EXR's elevation is read from and its sample type, e.g.
/// `"float16, channel R"`, from the header alone (for the import summary).
///
/// # Errors
/// [`ImportError::Unreadable`] for a file whose header cannot be read.
pub fn exr_encoding(path: &Path) -> std::result::Result<String, ImportError> {
    let meta = MetaData::read_from_file(path, false).map_err(|e| unreadable(path, e))?;
    let (_, _, name, sample) = elevation_layer(&meta, path)?;
    let sample = match sample {
        SampleType::F16 => "float16",
        SampleType::F32 => "float32",
        SampleType::U32 => "uint32",
    };
    Ok(format!("{sample}, channel {name}"))
}

/// Writes `samples_m` (`width_px × height_px`, row-major, row 0 north) to
/// `path` as a single-channel `Y` float32 EXR, ZIP-compressed.
///
/// # Errors
/// What the encoder or the file reports, as text.
pub fn write_exr(
    path: &Path,
    width_px: u32,
    height_px: u32,
    samples_m: &[f32],
) -> std::result::Result<(), String> {
    let width = width_px as usize;
    if samples_m.len() != width * height_px as usize {
        return Err(format!(
            "{} samples for {width_px} × {height_px} pixels",
            samples_m.len()
        ));
    }
    let channels = SpecificChannels::build()
        .with_channel("Y")
        .with_pixel_fn(|at: Vec2<usize>| (samples_m[at.y() * width + at.x()],));
    let image = Image::from_encoded_channels(
        (width, height_px as usize),
        Encoding::SMALL_LOSSLESS,
        channels,
    );
    image.write().to_file(path).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_elevation_channel_is_the_only_one_then_red_then_luma() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(elevation_channel(&names(&["Z"])), Some("Z"));
        assert_eq!(elevation_channel(&names(&["B", "G", "R"])), Some("R"));
        assert_eq!(elevation_channel(&names(&["A", "Y"])), Some("Y"));
        assert_eq!(
            elevation_channel(&names(&["depth", "height"])),
            Some("depth")
        );
        assert_eq!(elevation_channel(&[]), None);
    }

    #[test]
    fn samples_round_trip_and_infinite_ones_are_refused() {
        let dir = std::env::temp_dir().join(format!("strata-exr-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.exr");
        let samples = vec![-12.5, 0.0, 1e-3, 4321.25, f32::NAN, 8848.86];
        write_exr(&path, 3, 2, &samples).unwrap();
        let r = read_exr(&path).unwrap();
        assert_eq!((r.width_px, r.height_px), (3, 2));
        for (a, b) in r.samples_m.iter().zip(&samples) {
            assert!(a == b || (a.is_nan() && b.is_nan()), "{a} vs {b}");
        }
        assert_eq!(r.pixel_size_m, None);
        let bad = dir.join("inf.exr");
        write_exr(&bad, 2, 1, &[1.0, f32::INFINITY]).unwrap();
        let err = read_exr(&bad).unwrap_err();
        assert!(
            matches!(
                err,
                ImportError::BadSample {
                    x_px: 1,
                    y_px: 0,
                    ..
                }
            ),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
