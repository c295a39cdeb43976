//! Valid PNGs of zeros of any size, written without holding the image: a
//! zlib stream of back-references (13 bits per 258 bytes), so a 16384²
//! RGBA16 PNG (2 GiB of pixels) is 13 MB and is written in a moment.

use std::path::Path;

/// Appends a PNG chunk of `kind` holding `data` to `out`.
pub fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let mut body = kind.to_vec();
    body.extend_from_slice(data);
    out.extend_from_slice(&body);
    out.extend_from_slice(&crc32fast::hash(&body).to_be_bytes());
}

/// Deflate bits, least significant first.
#[derive(Default)]
struct Bits {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl Bits {
    fn put(&mut self, value: u64, count: u32) {
        self.acc |= value << self.n;
        self.n += count;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }
    /// A Huffman code (written most significant bit first).
    fn code(&mut self, code: u64, count: u32) {
        let reversed = code.reverse_bits() >> (64 - count);
        self.put(reversed, count);
    }
    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// A zlib stream of `n` zero bytes: one fixed-Huffman block of a literal 0
/// and back-references of 258 bytes at distance 1 (13 bits per 258 bytes),
/// built without holding the `n` bytes.
pub fn zlib_zeros(n: u64) -> Vec<u8> {
    let mut bits = Bits::default();
    bits.put(1, 1); // BFINAL
    bits.put(1, 2); // BTYPE = fixed Huffman
    let literal_zero = |bits: &mut Bits| bits.code(0x30, 8);
    literal_zero(&mut bits);
    let mut left = n - 1;
    while left >= 258 {
        bits.code(0xC5, 8); // length code 285: 258 bytes
        bits.code(0, 5); // distance code 0: distance 1
        left -= 258;
    }
    for _ in 0..left {
        literal_zero(&mut bits);
    }
    bits.code(0, 7); // end of block
    let mut out = vec![0x78, 0x01];
    out.extend(bits.finish());
    // Adler-32 of n zero bytes: a = 1, b = n.
    let adler = (((n % 65521) as u32) << 16) | 1;
    out.extend_from_slice(&adler.to_be_bytes());
    out
}

/// A valid `side` × `side` 16-bit grayscale PNG of zeros, written without
/// holding the image (3.4 MB for 16384², which holds 512 MiB of pixels).
pub fn write_zero_png16(path: &Path, side: u32) {
    write_zero_png(path, side, ZeroPng::Gray16);
}

/// The colour types [`write_zero_png`] writes, all 16 bits a sample.
#[derive(Clone, Copy, Debug)]
pub enum ZeroPng {
    /// Gray: 2 bytes a pixel.
    Gray16,
    /// RGBA: 8 bytes a pixel.
    Rgba16,
}

/// A valid `side` × `side` PNG of zeros of colour type `kind`, written
/// without holding the image (a 16384² RGBA16 one is 13 MB and holds 2 GiB
/// of pixels).
pub fn write_zero_png(path: &Path, side: u32, kind: ZeroPng) {
    let (color_type, pixel_bytes) = match kind {
        ZeroPng::Gray16 => (0, 2),
        ZeroPng::Rgba16 => (6, 8),
    };
    let mut png = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&side.to_be_bytes());
    ihdr.extend_from_slice(&side.to_be_bytes());
    ihdr.extend_from_slice(&[16, color_type, 0, 0, 0]);
    chunk(&mut png, b"IHDR", &ihdr);
    // Each row: filter byte 0 and the pixels' bytes.
    let raw = side as u64 * (1 + pixel_bytes * side as u64);
    chunk(&mut png, b"IDAT", &zlib_zeros(raw));
    chunk(&mut png, b"IEND", &[]);
    std::fs::write(path, png).unwrap();
}
