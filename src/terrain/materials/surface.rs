//! A material's surface maps, packed into one texture the renderer samples
//! beside the albedo: tangent-space normal x and y (OpenGL convention, green
//! up) in red and green, roughness in blue, height in alpha, all linear.
//!
//! One packed texture instead of three keeps a material's surface to one
//! stored, hashed image and one texture fetch per projection. A channel
//! without a source map holds the neutral value ([`FLAT_NORMAL`],
//! [`NEUTRAL_ROUGHNESS`], [`NEUTRAL_HEIGHT`]) and [`SurfaceMaps`] records
//! which maps were given, so the renderer skips what a material lacks and a
//! material without maps draws exactly as before.

use super::texture::{MaterialTexture, TextureError};

/// A flat normal's red and green bytes (x = y = 0 maps to 128).
pub const FLAT_NORMAL: [u8; 2] = [128, 128];

/// Roughness where no roughness map was given: fully rough (the built-ins'
/// diffuse look, no highlight).
pub const NEUTRAL_ROUGHNESS: u8 = 255;

/// Height where no height map was given: the middle.
pub const NEUTRAL_HEIGHT: u8 = 128;

/// Which of a material's surface maps were given (the other channels of its
/// packed texture are neutral).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SurfaceMaps {
    /// A normal map is packed in red and green.
    pub normal: bool,
    /// The normal map was written in the DirectX convention (green down)
    /// and had its green flipped when packed; flipping again undoes it.
    #[serde(default)]
    pub normal_directx: bool,
    /// A roughness map is packed in blue.
    pub roughness: bool,
    /// A height map is packed in alpha.
    pub height: bool,
}

impl SurfaceMaps {
    /// True when no map was given.
    pub fn is_empty(&self) -> bool {
        !(self.normal || self.roughness || self.height)
    }
}

/// One decoded source map at the library's side: `side_px² × 4` RGBA8
/// bytes, row-major (only red and green of a normal map, and only red of a
/// roughness or height map, are read).
pub type SourceTexels<'a> = &'a [u8];

/// Packs the given maps into one surface texture of `side_px`².
///
/// `normal_directx` flips the normal map's green (DirectX convention, green
/// down, to the OpenGL convention the renderer reads). Maps not given get
/// their neutral value. Returns the texture and the maps it holds.
///
/// # Errors
/// [`TextureError`] when `side_px` is not a library side or a source is not
/// `side_px² × 4` bytes.
pub fn pack_surface(
    side_px: u32,
    normal: Option<SourceTexels>,
    normal_directx: bool,
    roughness: Option<SourceTexels>,
    height: Option<SourceTexels>,
) -> Result<(MaterialTexture, SurfaceMaps), TextureError> {
    let texels = side_px as usize * side_px as usize;
    for source in [normal, roughness, height].into_iter().flatten() {
        if source.len() != texels * 4 {
            return Err(TextureError::BadLength {
                side_px,
                expected: texels as u64 * 4,
                found: source.len() as u64,
            });
        }
    }
    let mut out = Vec::with_capacity(texels * 4);
    for i in 0..texels {
        let [nx, ny] = normal.map_or(FLAT_NORMAL, |n| {
            let g = n[4 * i + 1];
            [n[4 * i], if normal_directx { 255 - g } else { g }]
        });
        let r = roughness.map_or(NEUTRAL_ROUGHNESS, |t| t[4 * i]);
        let h = height.map_or(NEUTRAL_HEIGHT, |t| t[4 * i]);
        out.extend_from_slice(&[nx, ny, r, h]);
    }
    let maps = SurfaceMaps {
        normal: normal.is_some(),
        normal_directx: normal.is_some() && normal_directx,
        roughness: roughness.is_some(),
        height: height.is_some(),
    };
    Ok((MaterialTexture::from_texels(side_px, out)?, maps))
}

/// `surface` with its normal's green flipped (255 - g): the switch between
/// the OpenGL and DirectX conventions. Flipping twice gives the texture back.
pub fn flip_normal_green(surface: &MaterialTexture) -> MaterialTexture {
    let mut texels = surface.rgba8().to_vec();
    for texel in texels.chunks_exact_mut(4) {
        texel[1] = 255 - texel[1];
    }
    // The side and length are the source's, which were checked when it was
    // made, so this cannot fail.
    MaterialTexture::from_texels(surface.side_px(), texels).unwrap_or_else(|_| surface.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_are_packed_into_their_channels_with_neutral_defaults() {
        let side = 256usize;
        let n = side * side;
        let normal: Vec<u8> = (0..n)
            .flat_map(|i| [10, (i % 256) as u8, 77, 255])
            .collect();
        let height: Vec<u8> = (0..n).flat_map(|_| [200, 0, 0, 255]).collect();
        let (t, maps) = pack_surface(256, Some(&normal), true, None, Some(&height)).unwrap();
        assert_eq!(
            maps,
            SurfaceMaps {
                normal: true,
                normal_directx: true,
                roughness: false,
                height: true
            }
        );
        // Texel 3: red kept, green flipped, neutral roughness, height from red.
        assert_eq!(&t.rgba8()[12..16], &[10, 252, NEUTRAL_ROUGHNESS, 200]);
        let back = flip_normal_green(&flip_normal_green(&t));
        assert_eq!(back, t);
        assert_eq!(flip_normal_green(&t).rgba8()[13], 3);

        let (empty, none) = pack_surface(256, None, true, None, None).unwrap();
        assert!(none.is_empty());
        assert!(!none.normal_directx);
        assert_eq!(&empty.rgba8()[..4], &[128, 128, 255, 128]);
    }

    #[test]
    fn a_source_of_the_wrong_size_is_refused() {
        let short = vec![0u8; 16];
        assert!(matches!(
            pack_surface(256, None, false, Some(&short), None),
            Err(TextureError::BadLength { found: 16, .. })
        ));
    }
}
