//! The surface array beside the albedo array: each material's packed
//! normal, roughness and height texture ([`crate::terrain::materials::surface`])
//! as one `Rgba8Unorm` (linear) layer, at the same layer index as its
//! albedo, so the shader reads both with one index.
//!
//! The array is built only while some material has surface maps; otherwise
//! it is one neutral texel the shader never samples (each material's style
//! says which maps it has), so worlds without maps pay nothing for it.
//! Layers of materials without maps, and of top variants (which draw their
//! albedo only), hold the neutral texel: a flat normal, full roughness and
//! the middle height.

use super::texture_array::upload_levels;
use crate::terrain::materials::MaterialLibrary;
use crate::terrain::materials::surface::{FLAT_NORMAL, NEUTRAL_HEIGHT, NEUTRAL_ROUGHNESS};

/// The neutral surface texel: flat normal, fully rough, middle height.
pub const NEUTRAL_TEXEL: [u8; 4] = [
    FLAT_NORMAL[0],
    FLAT_NORMAL[1],
    NEUTRAL_ROUGHNESS,
    NEUTRAL_HEIGHT,
];

/// What the surface array's layers come from: the side and each solid
/// material's surface texture (`None`: neutral). Empty while no material
/// has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SurfaceSources {
    side_px: u32,
    surfaces: Vec<(u8, Option<u64>)>,
    layers: u32,
}

impl SurfaceSources {
    /// The sources `library` draws with.
    pub fn of(library: &MaterialLibrary) -> SurfaceSources {
        if !library.has_surfaces() {
            return SurfaceSources {
                side_px: 1,
                surfaces: Vec::new(),
                layers: 1,
            };
        }
        SurfaceSources {
            side_px: library.drawn_side_px(),
            surfaces: library.styles().map(|(m, s)| (m.0, s.surface)).collect(),
            layers: library.layer_count(),
        }
    }
}

/// Level 0 of every layer of `library`'s surface array: its side and one
/// `side² × 4` RGBA8 buffer per layer ([`MaterialLibrary::layer_count`]
/// layers; one 1×1 neutral layer while no material has surface maps).
pub fn surface_layer_texels(library: &MaterialLibrary) -> (u32, Vec<Vec<u8>>) {
    if !library.has_surfaces() {
        return (1, vec![NEUTRAL_TEXEL.to_vec()]);
    }
    let side = library.drawn_side_px();
    let neutral = || NEUTRAL_TEXEL.repeat(side as usize * side as usize);
    // A top variant takes no surface maps of its own: its layer is neutral.
    let layers = library
        .layers()
        .into_iter()
        .map(|(material, top)| {
            (!top)
                .then(|| library.surface(material))
                .flatten()
                .map_or_else(neutral, |t| t.rgba8().to_vec())
        })
        .collect();
    (side, layers)
}

/// Full mip chain of one square linear RGBA8 layer, level 0 first: each
/// level a 2×2 box filter of the one above, every channel averaged as is
/// (normals, roughness and height are linear data).
pub fn linear_mip_chain(side_px: u32, level0: Vec<u8>) -> Vec<(u32, Vec<u8>)> {
    let mut out = vec![(side_px, level0)];
    let mut size = side_px;
    while size > 1 {
        let half = size / 2;
        let (_, above) = &out[out.len() - 1];
        let mut next = Vec::with_capacity((half * half * 4) as usize);
        for y in 0..half {
            for x in 0..half {
                for k in 0..4 {
                    let at = |dx: u32, dy: u32| {
                        u32::from(above[(((2 * y + dy) * size + 2 * x + dx) * 4 + k) as usize])
                    };
                    let sum = at(0, 0) + at(1, 0) + at(0, 1) + at(1, 1);
                    next.push(((sum + 2) / 4) as u8);
                }
            }
        }
        size = half;
        out.push((size, next));
    }
    out
}

/// Uploads `library`'s surface array and returns it with its view.
pub fn upload_surface_array(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    library: &MaterialLibrary,
) -> (wgpu::Texture, wgpu::TextureView) {
    let (side, layers) = surface_layer_texels(library);
    let levels: Vec<Vec<(u32, Vec<u8>)>> = layers
        .into_iter()
        .map(|l| linear_mip_chain(side, l))
        .collect();
    upload_levels(
        device,
        queue,
        "material surface array",
        wgpu::TextureFormat::Rgba8Unorm,
        &levels,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::Material;
    use crate::terrain::materials::MaterialTexture;
    use crate::terrain::materials::surface::pack_surface;

    #[test]
    fn no_maps_is_one_neutral_texel_and_maps_fill_their_own_layer() {
        let mut library = MaterialLibrary::default();
        assert_eq!(
            surface_layer_texels(&library),
            (1, vec![NEUTRAL_TEXEL.to_vec()])
        );
        library.set_texture_side_px(256).unwrap();
        let albedo = MaterialTexture::new(256, vec![90; 256 * 256 * 4]).unwrap();
        let height = vec![200u8; 256 * 256 * 4];
        let surface = pack_surface(256, None, false, None, Some(&height)).unwrap();
        library
            .set_material_set(Material::ROCK, albedo, Some(surface))
            .unwrap();
        let (side, layers) = surface_layer_texels(&library);
        assert_eq!(side, 256);
        assert_eq!(layers.len() as u32, library.layer_count());
        assert_eq!(&layers[3][..4], &[128, 128, 255, 200]);
        assert_eq!(&layers[2][..4], &NEUTRAL_TEXEL);
    }

    #[test]
    fn mips_average_each_channel_down_to_one_texel() {
        let level0: Vec<u8> = (0..16).flat_map(|i| [i * 16, 255, 0, 100]).collect();
        let chain = linear_mip_chain(4, level0);
        assert_eq!(chain.len(), 3);
        assert_eq!(chain[2].0, 1);
        // Mean of 0, 16, ..., 240 is 120.
        assert_eq!(chain[2].1, vec![120, 255, 0, 100]);
    }
}
