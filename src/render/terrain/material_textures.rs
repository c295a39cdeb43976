//! Material albedo textures: the committed PNGs of the deterministic
//! procedural generator ([`super::material_texels`]), and the loader that
//! turns them into the terrain's texture array.
//!
//! Why procedural: the editor ships without an art pipeline, yet triplanar
//! terrain needs tileable, recognizable surfaces (grass blades, rock cracks,
//! sand ripples, slate layers, …). The generator is plain Rust and uses only
//! `+ − × ÷ floor sqrt` (all exactly specified by IEEE 754; no `sin`/`pow` from
//! the platform libm), so every machine produces bit-identical pixels. The
//! output is committed as `assets/materials/<id>_<name>.png`; a test checks the
//! committed files still equal the generator's output, and
//! `strata --write-material-textures DIR` regenerates them.
//!
//! At start-up [`load_material_images`] reads those PNGs (falling back to
//! generating a missing or malformed one in memory, with a warning) and
//! [`MaterialTextures::new`] uploads them as one `Rgba8UnormSrgb`
//! `texture_2d_array` with one layer per material id and a CPU-built mip chain.
//!
//! Every texture tiles with period [`MATERIAL_TEXTURE_SIZE`] pixels; the shader
//! maps one tile to [`TEXTURE_PERIOD_STUDS`], which divides the 128-stud chunk,
//! so texturing is continuous across chunk borders.

use std::path::{Path, PathBuf};

use super::material_surfaces::{SurfaceSources, upload_surface_array};
use super::texture_array::upload_levels;
use crate::terrain::Material;
use crate::terrain::materials::MaterialLibrary;

pub use super::material_texels::{MATERIAL_TEXTURE_SIZE, generate_material_image};

/// World studs covered by one texture tile; divides [`crate::terrain::storage::coords::CHUNK_SIZE_STUDS`].
/// Keep in sync with `DETAIL_PERIOD_STUDS` in `shaders/terrain.wgsl`.
pub const TEXTURE_PERIOD_STUDS: f32 = 32.0;

const _: () = assert!(128 % (TEXTURE_PERIOD_STUDS as u32) == 0);

/// Errors while writing material textures.
#[derive(Debug, thiserror::Error)]
pub enum MaterialTextureError {
    /// The output directory could not be created.
    #[error("cannot create directory {path}: {source}")]
    CreateDir {
        /// Directory that failed.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
    /// A PNG could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// File that failed.
        path: PathBuf,
        /// Underlying error.
        source: image::ImageError,
    },
}

/// File name of a material's texture, e.g. `"2_grass.png"`.
pub fn material_file_name(material: Material) -> String {
    format!(
        "{}_{}.png",
        material.0,
        material.name().to_ascii_lowercase()
    )
}

/// Writes every material's generated texture into `dir` (created if needed).
/// Returns the written paths in material id order.
///
/// # Errors
/// [`MaterialTextureError`] when the directory or a file cannot be written.
pub fn write_material_textures(dir: &Path) -> Result<Vec<PathBuf>, MaterialTextureError> {
    std::fs::create_dir_all(dir).map_err(|source| MaterialTextureError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut written = Vec::new();
    for material in Material::ALL {
        let path = dir.join(material_file_name(material));
        let img = generate_material_image(material);
        let file = std::fs::File::create(&path).map_err(|e| MaterialTextureError::Write {
            path: path.clone(),
            source: image::ImageError::IoError(e),
        })?;
        let encoder = image::codecs::png::PngEncoder::new_with_quality(
            std::io::BufWriter::new(file),
            image::codecs::png::CompressionType::Best,
            image::codecs::png::FilterType::Adaptive,
        );
        img.write_with_encoder(encoder)
            .map_err(|source| MaterialTextureError::Write {
                path: path.clone(),
                source,
            })?;
        written.push(path);
    }
    Ok(written)
}

/// The directory holding the committed material PNGs: `$STRATA_ASSETS/materials`
/// when set, else `assets/materials` next to the executable, in the working
/// directory, or in the crate source tree, whichever exists first.
pub fn default_material_dir() -> PathBuf {
    let mut candidates = Vec::new();
    if let Some(root) = std::env::var_os("STRATA_ASSETS") {
        candidates.push(PathBuf::from(root).join("materials"));
    }
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        candidates.push(dir.join("assets/materials"));
    }
    candidates.push(PathBuf::from("assets/materials"));
    let source_tree = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/materials");
    candidates
        .into_iter()
        .find(|d| d.is_dir())
        .unwrap_or(source_tree)
}

/// Loads one `MATERIAL_TEXTURE_SIZE²` image per material id from `dir`,
/// generating any that is missing or has the wrong size (logged as a warning).
/// Returns `Material::COUNT` images in id order.
pub fn load_material_images(dir: &Path) -> Vec<image::RgbImage> {
    Material::ALL
        .iter()
        .map(|&material| {
            let path = dir.join(material_file_name(material));
            match image::open(&path) {
                Ok(img)
                    if img.width() == MATERIAL_TEXTURE_SIZE
                        && img.height() == MATERIAL_TEXTURE_SIZE =>
                {
                    img.to_rgb8()
                }
                Ok(img) => {
                    log::warn!(
                        "{} is {}x{}, expected {n}x{n}; generating {} in memory",
                        path.display(),
                        img.width(),
                        img.height(),
                        material.name(),
                        n = MATERIAL_TEXTURE_SIZE
                    );
                    generate_material_image(material)
                }
                Err(e) => {
                    log::warn!(
                        "cannot load {} ({e}); generating {} in memory",
                        path.display(),
                        material.name()
                    );
                    generate_material_image(material)
                }
            }
        })
        .collect()
}

fn srgb_to_linear(c: u8) -> f32 {
    let c = c as f32 / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

fn linear_to_srgb(l: f32) -> u8 {
    let s = if l <= 0.003_130_8 {
        l * 12.92
    } else {
        1.055 * l.powf(1.0 / 2.4) - 0.055
    };
    (s * 255.0 + 0.5).clamp(0.0, 255.0) as u8
}

/// Full mip chain of a square power-of-two sRGB image as RGBA8 levels,
/// level 0 first. Each level is a 2×2 box filter of the previous one,
/// averaged in linear light so distant terrain keeps its brightness.
pub fn build_mip_chain(img: &image::RgbImage) -> Vec<(u32, Vec<u8>)> {
    let mut size = img.width();
    let mut level: Vec<[f32; 3]> = img
        .pixels()
        .map(|p| {
            [
                srgb_to_linear(p[0]),
                srgb_to_linear(p[1]),
                srgb_to_linear(p[2]),
            ]
        })
        .collect();
    let encode = |level: &[[f32; 3]]| -> Vec<u8> {
        level
            .iter()
            .flat_map(|c| {
                [
                    linear_to_srgb(c[0]),
                    linear_to_srgb(c[1]),
                    linear_to_srgb(c[2]),
                    255,
                ]
            })
            .collect()
    };
    let mut out = vec![(size, encode(&level))];
    while size > 1 {
        let half = size / 2;
        let mut next = vec![[0.0f32; 3]; (half * half) as usize];
        for y in 0..half {
            for x in 0..half {
                let mut acc = [0.0f32; 3];
                for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    let p = level[((2 * y + dy) * size + 2 * x + dx) as usize];
                    for k in 0..3 {
                        acc[k] += p[k] * 0.25;
                    }
                }
                next[(y * half + x) as usize] = acc;
            }
        }
        size = half;
        level = next;
        out.push((size, encode(&level)));
    }
    out
}

/// One material's style as the shader reads it (`MaterialStyle` in
/// `shaders/terrain.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct MaterialStyleGpu {
    /// The linear tint in `xyz`, and in `w` how many texture tiles fit one
    /// [`TEXTURE_PERIOD_STUDS`] (32 / the tile size in studs).
    pub tint_scale: [f32; 4],
    /// The low-poly style's flat colour, sRGB `0..=255` in `xyz` (the
    /// texture's average times the tint; the built-in base colour), and in
    /// `w` the array layers, packed as `albedo + 256 × top`: the layer of
    /// the material's albedo and surface maps
    /// ([`MaterialLibrary::albedo_layer`]) and the one upward-facing
    /// surfaces sample (its top variant's, else the same). Both are below
    /// 256, so the sum is exact in an `f32`; packing them keeps the style
    /// at 48 bytes (a fourth vector cost llvmpipe about a quarter of its
    /// frame time, the shader copying the whole style for each of a
    /// pixel's four materials).
    pub palette_srgb: [f32; 4],
    /// The surface maps: `x` the height-blend sharpness (0 to 1), and 1 in
    /// `y`, `z`, `w` when the material has a normal, roughness or height
    /// map in the surface array (0: the shader skips it, so a material
    /// without maps draws exactly as before).
    pub surface: [f32; 4],
}

/// [`MaterialStyleGpu::palette_srgb`]'s `w`: the albedo layer and the top
/// layer, packed.
pub fn packed_layers(albedo_layer: u32, top_layer: u32) -> f32 {
    (albedo_layer + 256 * top_layer) as f32
}

/// Entries of the shader's `material_styles` array: one per id a cell can
/// hold (16 KiB, the uniform size every GPU grants).
pub const STYLE_SLOTS: usize = Material::ID_COUNT;

/// The style of an id the library does not hold (a missing material):
/// Rock's texture tinted magenta, as editors draw a missing texture.
const MISSING_STYLE: MaterialStyleGpu = MaterialStyleGpu {
    tint_scale: [1.0, 0.0, 1.0, 1.0],
    palette_srgb: [255.0, 0.0, 255.0, (Material::ROCK.0 as u32 * 257) as f32],
    surface: [0.0; 4],
};

/// The shader styles of `library`, one per id (Air, Water untinted at the
/// built-in scale; ids the library does not hold [`MISSING_STYLE`]).
pub fn style_gpu_data(library: &MaterialLibrary) -> Vec<MaterialStyleGpu> {
    let mut out = vec![MISSING_STYLE; STYLE_SLOTS];
    for m in [Material::AIR, Material::WATER] {
        let [r, g, b] = m.base_color_srgb().map(f32::from);
        out[m.0 as usize] = MaterialStyleGpu {
            tint_scale: [1.0; 4],
            palette_srgb: [r, g, b, packed_layers(u32::from(m.0), u32::from(m.0))],
            surface: [0.0; 4],
        };
    }
    for (material, style) in library.styles() {
        let [r, g, b] = style.tint_srgb.map(srgb_to_linear);
        let slot = &mut out[material.0 as usize];
        let layer = library.albedo_layer(material).unwrap_or(0);
        slot.tint_scale = [r, g, b, TEXTURE_PERIOD_STUDS / style.tiling_studs as f32];
        let [pr, pg, pb] = library.flat_colour_srgb(material).map(f32::from);
        slot.palette_srgb = [
            pr,
            pg,
            pb,
            packed_layers(layer, library.top_layer(material)),
        ];
        let maps = style.surface_maps;
        let on = |b: bool| if b { 1.0 } else { 0.0 };
        slot.surface = [
            if maps.height {
                f32::from(style.blend_sharpness_pct) / 100.0
            } else {
                0.0
            },
            on(maps.normal),
            on(maps.roughness),
            on(maps.height),
        ];
    }
    out
}

/// The images of the texture array `library` draws with, at
/// [`MaterialLibrary::drawn_side_px`], one per layer of
/// [`MaterialLibrary::layers`]: a material's imported albedo or top
/// variant, else its built-in image from `built_ins` (resized when the
/// library is drawn at another side).
pub fn library_layer_images(
    library: &MaterialLibrary,
    built_ins: &[image::RgbImage],
) -> Vec<image::RgbImage> {
    let side = library.drawn_side_px();
    let rgb_of = |texture: &crate::terrain::materials::MaterialTexture| {
        let rgb: Vec<u8> = texture
            .rgba8()
            .chunks_exact(4)
            .flat_map(|t| [t[0], t[1], t[2]])
            .collect();
        image::RgbImage::from_raw(side, side, rgb)
    };
    library
        .layers()
        .into_iter()
        .map(|(m, top)| {
            let imported = if top {
                library.top_albedo(m)
            } else {
                library.albedo(m)
            };
            imported
                .and_then(rgb_of)
                .unwrap_or_else(|| built_in_layer(m, built_ins, side))
        })
        .collect()
}

/// The built-in image of `m` at `side` pixels (resized from `built_ins`,
/// or generated when `built_ins` lacks it).
fn built_in_layer(m: Material, built_ins: &[image::RgbImage], side: u32) -> image::RgbImage {
    {
        let built_in = built_ins
            .get(m.0 as usize)
            .cloned()
            .unwrap_or_else(|| generate_material_image(m));
        if built_in.width() == side {
            built_in
        } else {
            image::imageops::resize(&built_in, side, side, image::imageops::FilterType::Triangle)
        }
    }
}

/// The terrain's material texture array on the GPU, and the styles buffer
/// the shader tints and scales it with.
pub struct MaterialTextures {
    /// `Rgba8UnormSrgb` 2D array, one layer per material id, full mip chain.
    pub texture: wgpu::Texture,
    /// A `D2Array` view of [`MaterialTextures::texture`].
    pub view: wgpu::TextureView,
    /// Repeating, trilinear sampler, anisotropic as requested.
    pub sampler: wgpu::Sampler,
    /// Uniform buffer of [`STYLE_SLOTS`] [`MaterialStyleGpu`].
    pub styles: wgpu::Buffer,
    /// The surface array (normal, roughness, height; `Rgba8Unorm`), one
    /// layer per albedo layer while some material has surface maps, else
    /// one neutral texel.
    pub surface_texture: wgpu::Texture,
    /// A `D2Array` view of [`MaterialTextures::surface_texture`].
    pub surface_view: wgpu::TextureView,
    /// The sampler's anisotropic filtering limit (1: trilinear only).
    anisotropy: u16,
    /// The built-in images, kept to rebuild the array for a library.
    built_ins: Vec<image::RgbImage>,
    /// [`MaterialLibrary::fingerprint`] of what is uploaded.
    uploaded: u64,
    /// What the uploaded array's layers came from.
    uploaded_layers: LayerSources,
    /// What the uploaded surface array's layers came from.
    uploaded_surfaces: SurfaceSources,
}

/// What the texture array's layers come from: the side and each solid
/// material's imported albedo (`None`: its built-in image).
#[derive(Clone, Debug, PartialEq, Eq)]
struct LayerSources {
    side_px: u32,
    albedos: Vec<(u8, [Option<u64>; 2])>,
}

impl LayerSources {
    fn of(library: &MaterialLibrary) -> LayerSources {
        LayerSources {
            side_px: library.drawn_side_px(),
            albedos: library
                .styles()
                .map(|(m, s)| (m.0, [s.albedo, s.top_albedo]))
                .collect(),
        }
    }
}

fn upload_array(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    images: &[image::RgbImage],
) -> (wgpu::Texture, wgpu::TextureView) {
    let levels: Vec<Vec<(u32, Vec<u8>)>> = images.iter().map(build_mip_chain).collect();
    upload_levels(
        device,
        queue,
        "material albedo array",
        wgpu::TextureFormat::Rgba8UnormSrgb,
        &levels,
    )
}

impl MaterialTextures {
    /// Uploads `images` (one per material id, all `MATERIAL_TEXTURE_SIZE²`,
    /// the built-ins), sampled with up to `anisotropy` × anisotropic
    /// filtering (1 = trilinear only), styled as the default library.
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        images: &[image::RgbImage],
        anisotropy: u16,
    ) -> Self {
        let (texture, view) = upload_array(device, queue, images);
        let anisotropy = anisotropy.clamp(1, 16);
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("material sampler"),
            address_mode_u: wgpu::AddressMode::Repeat,
            address_mode_v: wgpu::AddressMode::Repeat,
            address_mode_w: wgpu::AddressMode::Repeat,
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            mipmap_filter: wgpu::MipmapFilterMode::Linear,
            anisotropy_clamp: anisotropy,
            ..Default::default()
        });
        let library = MaterialLibrary::default();
        let styles = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("material styles"),
            size: (std::mem::size_of::<MaterialStyleGpu>() * STYLE_SLOTS) as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        queue.write_buffer(&styles, 0, bytemuck::cast_slice(&style_gpu_data(&library)));
        let (surface_texture, surface_view) = upload_surface_array(device, queue, &library);
        MaterialTextures {
            texture,
            view,
            sampler,
            styles,
            surface_texture,
            surface_view,
            anisotropy,
            built_ins: images.to_vec(),
            uploaded: library.fingerprint(),
            uploaded_layers: LayerSources::of(&library),
            uploaded_surfaces: SurfaceSources::of(&library),
        }
    }

    /// The sampler's anisotropic filtering limit, 1 to 16 (1: trilinear
    /// only).
    pub fn anisotropy(&self) -> u16 {
        self.anisotropy
    }

    /// Loads the committed PNGs from [`default_material_dir`] (generating any
    /// missing one) and uploads them.
    pub fn load_default(device: &wgpu::Device, queue: &wgpu::Queue, anisotropy: u16) -> Self {
        let images = load_material_images(&default_material_dir());
        Self::new(device, queue, &images, anisotropy)
    }

    /// Draws with `library` from now on: writes its styles, and rebuilds the
    /// texture array when its textures or side changed. Returns true when
    /// [`MaterialTextures::view`] is new (bind groups must be rebuilt).
    /// Costs nothing when the library is what was uploaded.
    pub fn apply_library(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        library: &MaterialLibrary,
    ) -> bool {
        let fingerprint = library.fingerprint();
        if fingerprint == self.uploaded {
            return false;
        }
        queue.write_buffer(
            &self.styles,
            0,
            bytemuck::cast_slice(&style_gpu_data(library)),
        );
        self.uploaded = fingerprint;
        // Names, tints and tiles live in the styles buffer; only the layers'
        // sources and the side need new arrays.
        let mut rebuilt = false;
        let surfaces = SurfaceSources::of(library);
        if surfaces != self.uploaded_surfaces {
            let (texture, view) = upload_surface_array(device, queue, library);
            self.surface_texture = texture;
            self.surface_view = view;
            self.uploaded_surfaces = surfaces;
            rebuilt = true;
        }
        let layers = LayerSources::of(library);
        if layers != self.uploaded_layers {
            let images = library_layer_images(library, &self.built_ins);
            let (texture, view) = upload_array(device, queue, &images);
            self.texture = texture;
            self.view = view;
            self.uploaded_layers = layers;
            rebuilt = true;
        }
        rebuilt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_pngs_match_the_generator() {
        // Regenerate with `strata --write-material-textures assets/materials`.
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/materials");
        for m in Material::ALL {
            let path = dir.join(material_file_name(m));
            let committed = image::open(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
                .to_rgb8();
            let generated = generate_material_image(m);
            assert!(
                committed == generated,
                "{} differs from the generator; run `strata --write-material-textures assets/materials`",
                path.display()
            );
        }
    }

    #[test]
    fn the_default_styles_draw_the_built_ins_unchanged() {
        let styles = style_gpu_data(&MaterialLibrary::default());
        for m in Material::ALL {
            let s = styles[m.0 as usize];
            assert_eq!(s.tint_scale, [1.0, 1.0, 1.0, 1.0], "{m:?}");
            let [r, g, b] = m.base_color_srgb().map(f32::from);
            let layers = packed_layers(u32::from(m.0), u32::from(m.0));
            assert_eq!(s.palette_srgb, [r, g, b, layers], "{m:?}");
        }
        // Ids the library does not hold draw as a missing material.
        assert_eq!(styles[11], MISSING_STYLE);
        assert_eq!(styles[255], MISSING_STYLE);
    }

    #[test]
    fn mip_chain_reaches_one_pixel() {
        let img = generate_material_image(Material::ROCK);
        let chain = build_mip_chain(&img);
        assert_eq!(chain.len() as u32, MATERIAL_TEXTURE_SIZE.ilog2() + 1);
        assert_eq!(chain.last().map(|l| l.0), Some(1));
        assert_eq!(chain[1].1.len() as u32, 128 * 128 * 4);
    }
}
