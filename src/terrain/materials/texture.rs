//! One material texture as the library keeps it: a square, power-of-two,
//! tileable image in RGBA8 (an sRGB albedo with alpha 255, or a packed
//! surface texture of linear normal, roughness and height), level 0 only (the
//! renderer builds the mips), named by the XXH3-64 of its bytes so equal
//! textures are stored once.

use std::sync::Arc;

/// The texture sides a library may use, pixels (square, powers of two: the
/// mip chain halves down to one pixel).
pub const TEXTURE_SIDES_PX: [u32; 4] = [256, 512, 1024, 2048];

/// The side a new library resizes imported textures to, pixels.
pub const DEFAULT_TEXTURE_SIDE_PX: u32 = 512;

/// Bytes per texel of a stored texture (RGBA8).
pub const BYTES_PER_TEXEL: u64 = 4;

/// Why texture bytes are not a library texture.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TextureError {
    /// The side is not one of [`TEXTURE_SIDES_PX`].
    #[error(
        "a material texture is {side_px}² pixels; the sides allowed are 256, 512, 1024 and 2048"
    )]
    BadSide {
        /// The side given, pixels.
        side_px: u32,
    },
    /// The byte count is not `side² × 4`.
    #[error("a {side_px}² RGBA8 texture has {expected} bytes, not {found}")]
    BadLength {
        /// The side, pixels.
        side_px: u32,
        /// `side² × 4`.
        expected: u64,
        /// The bytes given.
        found: u64,
    },
}

/// A square RGBA8 sRGB albedo texture (row-major, row 0 at the top, four
/// bytes a texel, alpha 255), shared cheaply between the library, the
/// undo history and the renderer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaterialTexture {
    side_px: u32,
    rgba8: Arc<[u8]>,
    hash: u64,
}

impl MaterialTexture {
    /// A texture from its texels; the alpha bytes are set to 255 (albedo is
    /// opaque).
    ///
    /// # Errors
    /// [`TextureError`] for a side outside [`TEXTURE_SIDES_PX`] or a byte
    /// count other than `side_px² × 4`.
    pub fn new(side_px: u32, mut rgba8: Vec<u8>) -> Result<MaterialTexture, TextureError> {
        for texel in rgba8.chunks_exact_mut(4) {
            texel[3] = 255;
        }
        MaterialTexture::from_texels(side_px, rgba8)
    }

    /// A texture from its texels as given, alpha included (a packed surface
    /// texture keeps its height there; see [`super::surface`]).
    ///
    /// # Errors
    /// As [`MaterialTexture::new`].
    pub fn from_texels(side_px: u32, rgba8: Vec<u8>) -> Result<MaterialTexture, TextureError> {
        if !TEXTURE_SIDES_PX.contains(&side_px) {
            return Err(TextureError::BadSide { side_px });
        }
        let expected = u64::from(side_px) * u64::from(side_px) * BYTES_PER_TEXEL;
        if rgba8.len() as u64 != expected {
            return Err(TextureError::BadLength {
                side_px,
                expected,
                found: rgba8.len() as u64,
            });
        }
        let hash = xxhash_rust::xxh3::xxh3_64(&rgba8);
        Ok(MaterialTexture {
            side_px,
            rgba8: rgba8.into(),
            hash,
        })
    }

    /// Side, pixels.
    pub fn side_px(&self) -> u32 {
        self.side_px
    }

    /// The texels: `side_px² × 4` bytes, RGBA8, row-major.
    pub fn rgba8(&self) -> &[u8] {
        &self.rgba8
    }

    /// XXH3-64 of [`MaterialTexture::rgba8`]: the texture's name in files.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// Bytes the texture takes on the GPU with its full mip chain (each
    /// level a quarter of the one above: at most 4/3 of level 0).
    pub fn gpu_bytes(&self) -> u64 {
        gpu_bytes_of_side(self.side_px)
    }

    /// The average sRGB colour of the texels (each channel's mean, rounded):
    /// what a far view or a palette swatch shows for it.
    pub fn average_srgb(&self) -> [u8; 3] {
        let mut sum = [0u64; 3];
        for texel in self.rgba8.chunks_exact(4) {
            for (s, &c) in sum.iter_mut().zip(texel) {
                *s += u64::from(c);
            }
        }
        let n = (self.rgba8.len() / 4).max(1) as u64;
        sum.map(|s| ((s + n / 2) / n) as u8)
    }
}

/// GPU bytes of one `side_px²` RGBA8 layer with its full mip chain.
pub fn gpu_bytes_of_side(side_px: u32) -> u64 {
    let mut side = u64::from(side_px);
    let mut total = 0;
    while side >= 1 {
        total += side * side * BYTES_PER_TEXEL;
        if side == 1 {
            break;
        }
        side /= 2;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_texture_is_named_by_its_bytes_and_opaque() {
        let mut texels = vec![7u8; 256 * 256 * 4];
        texels[3] = 0;
        let t = MaterialTexture::new(256, texels.clone()).unwrap();
        assert_eq!(t.rgba8()[3], 255);
        for texel in texels.chunks_exact_mut(4) {
            texel[3] = 255;
        }
        assert_eq!(t.hash(), xxhash_rust::xxh3::xxh3_64(&texels));
        assert_eq!(t.average_srgb(), [7, 7, 7]);
        assert_eq!(t.gpu_bytes(), 349_524);
    }

    #[test]
    fn wrong_sides_and_lengths_are_refused() {
        assert_eq!(
            MaterialTexture::new(300, vec![0; 300 * 300 * 4]),
            Err(TextureError::BadSide { side_px: 300 })
        );
        assert_eq!(
            MaterialTexture::new(256, vec![0; 10]),
            Err(TextureError::BadLength {
                side_px: 256,
                expected: 262_144,
                found: 10
            })
        );
    }
}
