//! Row-by-row decoding of a heightmap PNG straight into pixel codes: one
//! `u16` a pixel, whatever the PNG's colour type, so the import never holds
//! the decoded image. A 16,384² RGBA16 PNG decodes to 2 GiB of pixels, of
//! which the import keeps the 512 MiB of gray codes; decoding a row at a
//! time keeps only those and one row.
//!
//! The `png` crate decodes with [`png::Transformations::EXPAND`], the
//! transformation the `image` crate used before: palettes become RGB(A),
//! gray below 8 bits becomes 8-bit gray, a `tRNS` chunk becomes alpha. Each
//! decoded row is then reduced to codes: gray (with or without alpha, which
//! is ignored) as it is, RGB(A) only when every pixel is gray (R = G = B),
//! its red value. 16-bit samples are big-endian in the rows.
//!
//! Interlaced (Adam7) PNGs are decoded a pass row at a time too: each pass
//! row is reduced to codes, then placed into the codes with
//! [`png::expand_interlaced_row`], as the `png` crate places pixels itself.

use std::io::{BufRead, Seek};
use std::path::Path;

use crate::terrain::generation::heightmap::ImportError;

/// Memory the PNG decoder may allocate for itself (its row buffers and
/// chunk data), bytes. The codes are allocated here, not by the decoder.
const DECODER_LIMIT_BYTES: usize = 64 << 20;

/// The pixel layout of the decoded rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    /// Samples a pixel (1 gray, 2 gray and alpha, 3 RGB, 4 RGBA).
    channels: usize,
    /// True for 16-bit samples, false for 8-bit ones.
    sixteen: bool,
}

impl Layout {
    /// Bytes of one decoded pixel.
    fn pixel_bytes(self) -> usize {
        self.channels * if self.sixteen { 2 } else { 1 }
    }
}

/// A heightmap PNG opened for decoding: its header and the chunks before
/// its pixels are read, no pixel is decoded yet.
pub(crate) struct PngRows<R: BufRead + Seek> {
    reader: png::Reader<R>,
    layout: Layout,
    /// The decoded colour type, named as errors name it (`"L16"`, `"Rgba8"`).
    color: &'static str,
}

/// An [`ImportError::Decode`] naming `path` for a decoder error.
fn decode_error(path: &Path, e: &png::DecodingError) -> ImportError {
    ImportError::Decode {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

impl<R: BufRead + Seek> PngRows<R> {
    /// Reads the PNG header of `reader` (errors name `path`) and hands its
    /// size to `check_size`, which may refuse it before anything past the
    /// header is read; then reads the chunks up to the pixels.
    ///
    /// # Errors
    /// [`ImportError::Decode`] for a file that is not a PNG or is corrupt,
    /// and what `check_size` returns.
    pub(crate) fn open(
        reader: R,
        path: &Path,
        check_size: impl FnOnce(u32, u32) -> Result<(), ImportError>,
    ) -> Result<PngRows<R>, ImportError> {
        let mut decoder = png::Decoder::new_with_limits(
            reader,
            png::Limits {
                bytes: DECODER_LIMIT_BYTES,
            },
        );
        // Text and colour profiles are of no use to a heightmap.
        decoder.set_ignore_text_chunk(true);
        decoder.set_ignore_iccp_chunk(true);
        decoder.set_transformations(png::Transformations::EXPAND);
        let (width, height) = decoder
            .read_header_info()
            .map_err(|e| decode_error(path, &e))?
            .size();
        check_size(width, height)?;
        let reader = decoder.read_info().map_err(|e| decode_error(path, &e))?;
        let (color, depth) = reader.output_color_type();
        let unsupported = || ImportError::UnsupportedColor {
            path: path.to_path_buf(),
            color: format!("{color:?} at {depth:?} bits"),
        };
        let sixteen = match depth {
            png::BitDepth::Eight => false,
            png::BitDepth::Sixteen => true,
            // EXPAND widens gray below 8 bits to 8.
            _ => return Err(unsupported()),
        };
        let (channels, name) = match (color, sixteen) {
            (png::ColorType::Grayscale, false) => (1, "L8"),
            (png::ColorType::Grayscale, true) => (1, "L16"),
            (png::ColorType::GrayscaleAlpha, false) => (2, "La8"),
            (png::ColorType::GrayscaleAlpha, true) => (2, "La16"),
            (png::ColorType::Rgb, false) => (3, "Rgb8"),
            (png::ColorType::Rgb, true) => (3, "Rgb16"),
            (png::ColorType::Rgba, false) => (4, "Rgba8"),
            (png::ColorType::Rgba, true) => (4, "Rgba16"),
            // EXPAND turns palettes into RGB(A).
            (png::ColorType::Indexed, _) => return Err(unsupported()),
        };
        Ok(PngRows {
            reader,
            layout: Layout { channels, sixteen },
            color: name,
        })
    }

    /// The image's `(width, height)` in pixels.
    pub(crate) fn size(&self) -> (u32, u32) {
        self.reader.info().size()
    }

    /// Decodes every pixel into its code, row by row (errors name `path`):
    /// the codes in row-major order and the largest code of the bit depth
    /// (255 or 65535). Memory: the codes (2 bytes a pixel) and one row.
    ///
    /// # Errors
    /// [`ImportError::Decode`] for corrupt or truncated pixel data;
    /// [`ImportError::UnsupportedColor`] at the first RGB(A) pixel that is
    /// not gray (the rest is not decoded).
    pub(crate) fn read_codes(mut self, path: &Path) -> Result<(Vec<u16>, f64), ImportError> {
        let (width, height) = self.size();
        let width = width as usize;
        // The caller checked the size against the import's limits (at most
        // 2^30 pixels), so the codes fit a usize.
        let mut codes = vec![0u16; width * height as usize];
        // One pass row of an interlaced image, reduced to codes.
        let mut pass_codes: Vec<u16> = Vec::new();
        let (layout, color) = (self.layout, self.color);
        let unsupported = || ImportError::UnsupportedColor {
            path: path.to_path_buf(),
            color: color.to_string(),
        };
        // Rows of a PNG that is not interlaced arrive in order.
        let mut next_row = 0usize;
        while let Some(row) = self
            .reader
            .next_interlaced_row()
            .map_err(|e| decode_error(path, &e))?
        {
            let data = row.data();
            match row.interlace() {
                png::InterlaceInfo::Null(_) => {
                    // The decoder yields exactly `height` rows of `width`
                    // pixels; a surplus row would be its bug, refused here.
                    let out = codes
                        .get_mut(next_row * width..(next_row + 1) * width)
                        .ok_or_else(|| ImportError::Decode {
                            path: path.to_path_buf(),
                            message: "more rows than the header announces".to_string(),
                        })?;
                    reduce_row(layout, data, out).ok_or_else(unsupported)?;
                    next_row += 1;
                }
                png::InterlaceInfo::Adam7(info) => {
                    pass_codes.resize(data.len() / layout.pixel_bytes(), 0);
                    reduce_row(layout, data, &mut pass_codes).ok_or_else(unsupported)?;
                    // Codes are placed as 16-bit pixels: their bytes move
                    // as they are, in native order.
                    png::expand_interlaced_row(
                        bytemuck::cast_slice_mut(&mut codes),
                        width * 2,
                        bytemuck::cast_slice(&pass_codes),
                        info,
                        16,
                    );
                }
            }
        }
        let max_code = if layout.sixteen { 65535.0 } else { 255.0 };
        Ok((codes, max_code))
    }
}

/// Reduces one decoded row (`data`, pixels of `layout`) to codes in `out`
/// (one per pixel): the first sample of each pixel, big-endian for 16 bits.
/// `None` when an RGB(A) pixel is not gray.
fn reduce_row(layout: Layout, data: &[u8], out: &mut [u16]) -> Option<()> {
    let pixels = data.chunks_exact(layout.pixel_bytes());
    let gray_rgb = layout.channels >= 3;
    if layout.sixteen {
        for (code, px) in out.iter_mut().zip(pixels) {
            let sample = |i: usize| u16::from_be_bytes([px[2 * i], px[2 * i + 1]]);
            if gray_rgb && (sample(1) != sample(0) || sample(2) != sample(0)) {
                return None;
            }
            *code = sample(0);
        }
    } else {
        for (code, px) in out.iter_mut().zip(pixels) {
            if gray_rgb && (px[1] != px[0] || px[2] != px[0]) {
                return None;
            }
            *code = u16::from(px[0]);
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PNG chunk.
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend_from_slice(data);
        out.extend_from_slice(&body);
        out.extend_from_slice(&crc32fast::hash(&body).to_be_bytes());
    }

    /// A zlib stream of `data` in stored (uncompressed) deflate blocks.
    fn zlib_stored(data: &[u8]) -> Vec<u8> {
        let mut out = vec![0x78, 0x01];
        let blocks: Vec<&[u8]> = data.chunks(65535).collect();
        for (i, block) in blocks.iter().enumerate() {
            out.push(u8::from(i + 1 == blocks.len()));
            let len = block.len() as u16;
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&(!len).to_le_bytes());
            out.extend_from_slice(block);
        }
        if blocks.is_empty() {
            out.extend_from_slice(&[1, 0, 0, 0xFF, 0xFF]);
        }
        let (mut a, mut b) = (1u32, 0u32);
        for &byte in data {
            a = (a + u32::from(byte)) % 65521;
            b = (b + a) % 65521;
        }
        out.extend_from_slice(&((b << 16) | a).to_be_bytes());
        out
    }

    /// Packs one row of `samples` (each below 2^depth) at `depth` bits.
    fn pack_row(samples: &[u16], depth: u8) -> Vec<u8> {
        match depth {
            16 => samples.iter().flat_map(|s| s.to_be_bytes()).collect(),
            8 => samples.iter().map(|&s| s as u8).collect(),
            _ => {
                let per_byte = (8 / depth) as usize;
                samples
                    .chunks(per_byte)
                    .map(|group| {
                        group.iter().enumerate().fold(0u8, |acc, (i, &s)| {
                            acc | ((s as u8) << (8 - depth as usize * (i + 1)))
                        })
                    })
                    .collect()
            }
        }
    }

    /// Adam7 passes: (x offset, x step, y offset, y step).
    const PASSES: [(usize, usize, usize, usize); 7] = [
        (0, 8, 0, 8),
        (4, 8, 0, 8),
        (0, 4, 4, 8),
        (2, 4, 0, 4),
        (0, 2, 2, 4),
        (1, 2, 0, 2),
        (0, 1, 1, 2),
    ];

    /// A PNG of `width` × `height` pixels whose pixel `(x, y)` has the
    /// samples `pixel(x, y)` (`channels` of them at `depth` bits), colour
    /// type `color`, optionally Adam7-interlaced, with `extra` chunks (a
    /// palette, `tRNS`) before the pixels.
    #[allow(clippy::too_many_arguments)]
    fn png_bytes(
        width: usize,
        height: usize,
        color: u8,
        depth: u8,
        interlaced: bool,
        extra: &[(&[u8; 4], Vec<u8>)],
        pixel: impl Fn(usize, usize) -> Vec<u16>,
    ) -> Vec<u8> {
        let mut raw = Vec::new();
        let mut add_row = |xs: &mut dyn Iterator<Item = usize>, y: usize| {
            let samples: Vec<u16> = xs.flat_map(|x| pixel(x, y)).collect();
            if !samples.is_empty() {
                raw.push(0);
                raw.extend(pack_row(&samples, depth));
            }
        };
        if interlaced {
            for (x0, dx, y0, dy) in PASSES {
                if x0 >= width {
                    continue;
                }
                for y in (y0..height).step_by(dy) {
                    add_row(&mut (x0..width).step_by(dx), y);
                }
            }
        } else {
            for y in 0..height {
                add_row(&mut (0..width), y);
            }
        }
        let mut png = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
        let mut ihdr = Vec::new();
        ihdr.extend_from_slice(&(width as u32).to_be_bytes());
        ihdr.extend_from_slice(&(height as u32).to_be_bytes());
        ihdr.extend_from_slice(&[depth, color, 0, 0, u8::from(interlaced)]);
        chunk(&mut png, b"IHDR", &ihdr);
        for (kind, data) in extra {
            chunk(&mut png, kind, data);
        }
        chunk(&mut png, b"IDAT", &zlib_stored(&raw));
        chunk(&mut png, b"IEND", &[]);
        png
    }

    /// The codes as the import made them before it decoded by rows: the
    /// whole image through the `image` crate, then reduced.
    fn codes_via_image(png: &[u8]) -> Result<(Vec<u16>, f64), String> {
        let image = image::load_from_memory(png).map_err(|e| e.to_string())?;
        let gray = |pixels: Vec<[u16; 3]>| -> Result<Vec<u16>, String> {
            pixels
                .into_iter()
                .map(|[r, g, b]| (r == g && g == b).then_some(r))
                .collect::<Option<_>>()
                .ok_or_else(|| "coloured".to_string())
        };
        let rgb8 = |p: &[u8]| [u16::from(p[0]), u16::from(p[1]), u16::from(p[2])];
        Ok(match image {
            image::DynamicImage::ImageLuma8(i) => {
                (i.pixels().map(|p| p.0[0].into()).collect(), 255.0)
            }
            image::DynamicImage::ImageLumaA8(i) => {
                (i.pixels().map(|p| p.0[0].into()).collect(), 255.0)
            }
            image::DynamicImage::ImageLuma16(i) => (i.into_raw(), 65535.0),
            image::DynamicImage::ImageLumaA16(i) => (i.pixels().map(|p| p.0[0]).collect(), 65535.0),
            image::DynamicImage::ImageRgb8(i) => {
                (gray(i.pixels().map(|p| rgb8(&p.0)).collect())?, 255.0)
            }
            image::DynamicImage::ImageRgba8(i) => {
                (gray(i.pixels().map(|p| rgb8(&p.0)).collect())?, 255.0)
            }
            image::DynamicImage::ImageRgb16(i) => (
                gray(i.pixels().map(|p| [p.0[0], p.0[1], p.0[2]]).collect())?,
                65535.0,
            ),
            image::DynamicImage::ImageRgba16(i) => (
                gray(i.pixels().map(|p| [p.0[0], p.0[1], p.0[2]]).collect())?,
                65535.0,
            ),
            other => return Err(format!("{:?}", other.color())),
        })
    }

    fn codes_by_rows(png: &[u8]) -> Result<(Vec<u16>, f64), ImportError> {
        let path = Path::new("test.png");
        PngRows::open(std::io::Cursor::new(png), path, |_, _| Ok(()))?.read_codes(path)
    }

    /// Every gray layout, 8 and 16 bits (and gray below 8 bits and gray
    /// palettes, which decode as 8 bits), interlaced or not, over sizes
    /// whose Adam7 passes are partly empty: the codes equal those of the
    /// whole-image decode they replace.
    #[test]
    fn row_codes_equal_the_whole_image_decode() {
        let value = |x: usize, y: usize, bits: u32| -> u16 {
            let max = (1u32 << bits) - 1;
            ((x as u32 * 37 + y as u32 * 101 + x as u32 * y as u32 * 7) % (max + 1)) as u16
        };
        // (colour type, depth, channels, extra chunks)
        type Case<'a> = (u8, u8, usize, Vec<(&'a [u8; 4], Vec<u8>)>);
        let palette: Vec<u8> = (0..=255u8).flat_map(|v| [v, v, v]).collect();
        let cases: Vec<Case> = vec![
            (0, 1, 1, vec![]),
            (0, 2, 1, vec![]),
            (0, 4, 1, vec![]),
            (0, 8, 1, vec![]),
            (0, 16, 1, vec![]),
            (0, 16, 1, vec![(b"tRNS", vec![0, 5])]),
            (4, 8, 2, vec![]),
            (4, 16, 2, vec![]),
            (2, 8, 3, vec![]),
            (2, 16, 3, vec![]),
            (6, 8, 4, vec![]),
            (6, 16, 4, vec![]),
            (3, 8, 1, vec![(b"PLTE", palette.clone())]),
            (3, 4, 1, vec![(b"PLTE", palette[..48].to_vec())]),
        ];
        let mut checked = 0;
        for (color, depth, channels, extra) in &cases {
            for (w, h) in [(1, 1), (3, 2), (5, 9), (13, 11), (40, 17)] {
                for interlaced in [false, true] {
                    let bits = u32::from(*depth);
                    let png = png_bytes(w, h, *color, *depth, interlaced, extra, |x, y| {
                        let v = value(x, y, bits);
                        match channels {
                            1 => vec![v],
                            2 => vec![v, value(y, x, bits)],
                            3 => vec![v, v, v],
                            _ => vec![v, v, v, value(y, x, bits)],
                        }
                    });
                    let want = codes_via_image(&png).unwrap();
                    let got = codes_by_rows(&png).unwrap();
                    let what = format!("colour {color}, {depth} bits, {w}×{h}, Adam7 {interlaced}");
                    assert_eq!(got, want, "{what}");
                    assert_eq!(got.0.len(), w * h, "{what}");
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, cases.len() * 10);
    }

    /// A coloured RGB(A) pixel is refused, named as before, interlaced or not.
    #[test]
    fn a_coloured_pixel_is_refused_by_its_colour_type() {
        for (color, depth, channels, name) in [
            (2, 8, 3, "Rgb8"),
            (2, 16, 3, "Rgb16"),
            (6, 8, 4, "Rgba8"),
            (6, 16, 4, "Rgba16"),
        ] {
            for interlaced in [false, true] {
                let png = png_bytes(9, 9, color, depth, interlaced, &[], |x, y| {
                    let g = if (x, y) == (8, 8) { 1 } else { 0 };
                    vec![0, g, 0, 0][..channels].to_vec()
                });
                match codes_by_rows(&png) {
                    Err(ImportError::UnsupportedColor { color, .. }) => assert_eq!(color, name),
                    other => panic!("{name}: {other:?}"),
                }
            }
        }
    }

    /// Truncated or corrupt pixel data is a decoding error, not a panic or
    /// a short image.
    #[test]
    fn damaged_pixel_data_is_a_decode_error() {
        let png = png_bytes(16, 16, 0, 16, false, &[], |x, _| vec![x as u16]);
        let idat = png.len() - 12 - 4; // before IEND and the IDAT CRC
        let short = png[..idat - 40].to_vec();
        assert!(matches!(
            codes_by_rows(&short),
            Err(ImportError::Decode { .. })
        ));
        let mut flipped = png.clone();
        flipped[idat - 10] ^= 0xFF;
        assert!(matches!(
            codes_by_rows(&flipped),
            Err(ImportError::Decode { .. })
        ));
    }

    /// The size check sees the header before anything else is read.
    #[test]
    fn the_size_check_runs_on_the_header() {
        let png = png_bytes(7, 3, 0, 8, false, &[], |_, _| vec![0]);
        let path = Path::new("sized.png");
        let mut seen = None;
        let refused = PngRows::open(std::io::Cursor::new(&png), path, |w, h| {
            seen = Some((w, h));
            Err(ImportError::ZeroSize {
                width_px: w,
                height_px: h,
            })
        });
        assert!(matches!(refused, Err(ImportError::ZeroSize { .. })));
        assert_eq!(seen, Some((7, 3)));
    }
}
