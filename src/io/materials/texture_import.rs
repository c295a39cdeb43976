//! Importing a material's textures: a folder of PBR maps with the usual
//! names (as texture sites and Substance export them), or one albedo image,
//! decoded (PNG 8/16-bit, JPEG) and resized to the world's texture side.
//!
//! Every check that can be made from the file's header (its size, its
//! pixel count) runs before any pixel is decoded, and decoding runs under
//! the `image` crate's allocation limit, so a hostile image costs bounded
//! memory and time and changes nothing.
//!
//! A folder's normal, roughness and height maps are decoded the same way
//! and packed into the material's surface texture
//! ([`crate::terrain::materials::surface`]); a DirectX normal map (named
//! `nor_dx`, `normal_dx`, ...) has its green flipped to the OpenGL
//! convention on the way in.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use image::imageops::FilterType;

use crate::io::{BoundedReadError, read_bounded};
use crate::terrain::materials::surface::{SurfaceMaps, pack_surface};
use crate::terrain::materials::texture::{MaterialTexture, TEXTURE_SIDES_PX};

/// Largest texture file read, bytes.
pub const MAX_TEXTURE_FILE_BYTES: u64 = 256 << 20;

/// Largest source side accepted, pixels (8192²; a 16k² map is refused
/// before it is decoded).
pub const MAX_SOURCE_SIDE_PX: u32 = 8192;

/// Smallest source side accepted, pixels.
pub const MIN_SOURCE_SIDE_PX: u32 = 16;

/// Most directory entries a material folder may hold.
pub const MAX_FOLDER_ENTRIES: usize = 4096;

/// What a texture file in a material folder is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TextureRole {
    /// Base colour (albedo, diffuse, color).
    Albedo,
    /// Tangent-space normal map, OpenGL convention (green up).
    NormalGl,
    /// Tangent-space normal map, DirectX convention (green down).
    NormalDx,
    /// Roughness.
    Roughness,
    /// Height or displacement.
    Height,
}

impl TextureRole {
    /// The role's name as the import summary shows it.
    pub fn label(self) -> &'static str {
        match self {
            TextureRole::Albedo => "albedo",
            TextureRole::NormalGl => "normal (OpenGL)",
            TextureRole::NormalDx => "normal (DirectX)",
            TextureRole::Roughness => "roughness",
            TextureRole::Height => "height",
        }
    }
}

/// One file of a material folder and the role its name gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchedTexture {
    /// What the file is for.
    pub role: TextureRole,
    /// The file.
    pub path: PathBuf,
}

/// A material read from disk, ready for the library.
#[derive(Clone, Debug)]
pub struct ImportedMaterial {
    /// A name for it: the folder's name, or the image's file stem.
    pub name: String,
    /// The albedo, resized to the side asked for.
    pub albedo: MaterialTexture,
    /// The albedo file's size before resizing, pixels.
    pub source_side_px: u32,
    /// The file the albedo was read from.
    pub albedo_file: PathBuf,
    /// Other files named like an albedo, not used (a folder holding more
    /// than one).
    pub ignored_albedos: Vec<PathBuf>,
    /// Every file matched to a role (for a single image, just the albedo).
    pub matched: Vec<MatchedTexture>,
    /// The folder's normal, roughness and height maps packed into one
    /// surface texture, and which of them it had; `None` when it had none
    /// (or for a single image).
    pub surface: Option<PackedSurface>,
    /// The files the surface texture was packed from.
    pub surface_files: Vec<MatchedTexture>,
}

/// Why a material could not be imported (nothing was changed).
#[derive(Debug, thiserror::Error)]
pub enum MaterialImportError {
    /// The path could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: BoundedReadError,
    },
    /// The folder could not be listed.
    #[error("cannot list {path}: {source}")]
    List {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The folder has more entries than [`MAX_FOLDER_ENTRIES`].
    #[error("{path} has more than {MAX_FOLDER_ENTRIES} entries; pick the folder of one material")]
    TooManyEntries {
        /// The folder.
        path: PathBuf,
    },
    /// No file of the folder is named like an albedo map.
    #[error(
        "{path} has no albedo image (a PNG or JPEG named like basecolor, albedo, diffuse or color)"
    )]
    NoAlbedo {
        /// The folder.
        path: PathBuf,
    },
    /// The file is not a PNG or JPEG, or is corrupt.
    #[error("{path} is not a readable PNG or JPEG: {message}")]
    Decode {
        /// The file.
        path: PathBuf,
        /// What the decoder said.
        message: String,
    },
    /// The image is not square (textures tile on a square).
    #[error("{path} is {width}×{height} pixels; material textures must be square")]
    NotSquare {
        /// The file.
        path: PathBuf,
        /// Width, pixels.
        width: u32,
        /// Height, pixels.
        height: u32,
    },
    /// The image is larger than [`MAX_SOURCE_SIDE_PX`] or smaller than
    /// [`MIN_SOURCE_SIDE_PX`].
    #[error("{path} is {side}×{side} pixels; material textures must be 16² to 8192²")]
    BadSize {
        /// The file.
        path: PathBuf,
        /// Side, pixels.
        side: u32,
    },
    /// The side asked for is not a library side.
    #[error("{side_px}² is not a material texture size; use 256, 512, 1024 or 2048")]
    BadTargetSide {
        /// The side asked for.
        side_px: u32,
    },
}

/// The role a file name gives, from its lower-case stem's words (split at
/// `_`, `-`, `.` and spaces); `None` for files of no role we know (ambient
/// occlusion, metalness, previews).
pub fn role_of_file_name(file_name: &str) -> Option<TextureRole> {
    let lower = file_name.to_ascii_lowercase();
    let (stem, ext) = lower.rsplit_once('.')?;
    if !matches!(ext, "png" | "jpg" | "jpeg") {
        return None;
    }
    let words: Vec<&str> = stem
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let has = |w: &str| words.contains(&w);
    let pair = |a: &str, b: &str| words.windows(2).any(|p| p[0] == a && p[1] == b);
    if has("nor") || has("normal") || has("nrm") || has("normalgl") || has("normaldx") {
        let dx = has("dx") || has("directx") || has("normaldx");
        return Some(if dx {
            TextureRole::NormalDx
        } else {
            TextureRole::NormalGl
        });
    }
    if has("roughness") || has("rough") {
        return Some(TextureRole::Roughness);
    }
    if has("height") || has("displacement") || has("disp") {
        return Some(TextureRole::Height);
    }
    let albedo_words = [
        "basecolor",
        "albedo",
        "diffuse",
        "diff",
        "color",
        "colour",
        "col",
    ];
    if albedo_words.iter().any(|w| has(w)) || pair("base", "color") {
        return Some(TextureRole::Albedo);
    }
    None
}

/// The files of `dir` that have a role, sorted by role then name.
///
/// # Errors
/// [`MaterialImportError::List`], [`MaterialImportError::TooManyEntries`].
pub fn match_folder(dir: &Path) -> Result<Vec<MatchedTexture>, MaterialImportError> {
    let list = |source| MaterialImportError::List {
        path: dir.to_path_buf(),
        source,
    };
    let mut matched = Vec::new();
    for (count, entry) in std::fs::read_dir(dir).map_err(list)?.enumerate() {
        if count >= MAX_FOLDER_ENTRIES {
            return Err(MaterialImportError::TooManyEntries {
                path: dir.to_path_buf(),
            });
        }
        let entry = entry.map_err(list)?;
        let name = entry.file_name();
        if let Some(role) = name.to_str().and_then(role_of_file_name) {
            matched.push(MatchedTexture {
                role,
                path: entry.path(),
            });
        }
    }
    matched.sort_by(|a, b| (a.role, &a.path).cmp(&(b.role, &b.path)));
    Ok(matched)
}

/// Imports a material from `path`: a folder (its albedo by name, see
/// [`role_of_file_name`]; the first in name order when several match) or
/// one image used as the albedo, resized to `side_px`².
///
/// # Errors
/// [`MaterialImportError`] for a missing or unreadable path, a folder
/// without an albedo, and an image that is corrupt, not square, or outside
/// 16² to 8192².
pub fn import_material(path: &Path, side_px: u32) -> Result<ImportedMaterial, MaterialImportError> {
    import_with(path, side_px, true)
}

/// [`import_material`] for a top variant, which draws an albedo only: the
/// folder's other maps are matched and reported but not decoded, so a bad
/// one that would not be used refuses nothing.
///
/// # Errors
/// As [`import_material`], for the albedo.
pub fn import_albedo_only(
    path: &Path,
    side_px: u32,
) -> Result<ImportedMaterial, MaterialImportError> {
    import_with(path, side_px, false)
}

fn import_with(
    path: &Path,
    side_px: u32,
    with_surface: bool,
) -> Result<ImportedMaterial, MaterialImportError> {
    if !TEXTURE_SIDES_PX.contains(&side_px) {
        return Err(MaterialImportError::BadTargetSide { side_px });
    }
    let (name, matched) = if path.is_dir() {
        let matched = match_folder(path)?;
        (file_label(path), matched)
    } else {
        let stem = path.file_stem().map_or_else(
            || "Imported".to_string(),
            |s| s.to_string_lossy().into_owned(),
        );
        let only = vec![MatchedTexture {
            role: TextureRole::Albedo,
            path: path.to_path_buf(),
        }];
        (stem, only)
    };
    let mut albedos: Vec<&PathBuf> = matched
        .iter()
        .filter(|m| m.role == TextureRole::Albedo)
        .map(|m| &m.path)
        .collect();
    albedos.sort_by_key(|p| (albedo_rank(p), (*p).clone()));
    let albedo_path =
        albedos
            .first()
            .map(|p| (*p).clone())
            .ok_or_else(|| MaterialImportError::NoAlbedo {
                path: path.to_path_buf(),
            })?;
    let ignored_albedos = albedos.iter().skip(1).map(|p| (*p).clone()).collect();
    let (albedo, source_side_px) = decode_texture(&albedo_path, side_px)?;
    let (surface, surface_files) = if with_surface {
        import_surface(&matched, side_px)?
    } else {
        (None, Vec::new())
    };
    Ok(ImportedMaterial {
        name: tidy_name(&name),
        albedo,
        source_side_px,
        albedo_file: albedo_path,
        ignored_albedos,
        matched,
        surface,
        surface_files,
    })
}

/// A packed surface texture and the maps it holds.
pub type PackedSurface = (MaterialTexture, SurfaceMaps);

/// Decodes the first normal (OpenGL before DirectX), roughness and height
/// map of `matched` and packs them (`None` when there is none), with the
/// files used.
fn import_surface(
    matched: &[MatchedTexture],
    side_px: u32,
) -> Result<(Option<PackedSurface>, Vec<MatchedTexture>), MaterialImportError> {
    // `matched` is sorted by role, so each role's first file comes first.
    let first = |roles: &[TextureRole]| matched.iter().find(|m| roles.contains(&m.role)).cloned();
    let normal = first(&[TextureRole::NormalGl]).or_else(|| first(&[TextureRole::NormalDx]));
    let roughness = first(&[TextureRole::Roughness]);
    let height = first(&[TextureRole::Height]);
    let files: Vec<MatchedTexture> = [normal, roughness, height].into_iter().flatten().collect();
    if files.is_empty() {
        return Ok((None, files));
    }
    let decode = |role: &[TextureRole]| -> Result<Option<MaterialTexture>, MaterialImportError> {
        files
            .iter()
            .find(|m| role.contains(&m.role))
            .map(|m| decode_texture(&m.path, side_px).map(|(t, _)| t))
            .transpose()
    };
    let normal_map = decode(&[TextureRole::NormalGl, TextureRole::NormalDx])?;
    let directx = files.iter().any(|m| m.role == TextureRole::NormalDx);
    let roughness_map = decode(&[TextureRole::Roughness])?;
    let height_map = decode(&[TextureRole::Height])?;
    let packed = pack_surface(
        side_px,
        normal_map.as_ref().map(MaterialTexture::rgba8),
        directx,
        roughness_map.as_ref().map(MaterialTexture::rgba8),
        height_map.as_ref().map(MaterialTexture::rgba8),
    )
    .map_err(|e| MaterialImportError::Decode {
        path: files[0].path.clone(),
        message: e.to_string(),
    })?;
    Ok((Some(packed), files))
}

/// Which albedo a folder holding several uses first: base colour, then
/// albedo, then diffuse, then colour.
fn albedo_rank(path: &Path) -> u8 {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let words: Vec<&str> = name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let has = |w: &str| words.contains(&w);
    if has("basecolor") || words.windows(2).any(|p| p == ["base", "color"]) {
        0
    } else if has("albedo") {
        1
    } else if has("diffuse") || has("diff") {
        2
    } else {
        3
    }
}

/// A folder's own name, for the material's name.
fn file_label(path: &Path) -> String {
    path.file_name().map_or_else(
        || "Imported".to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

/// A name a library accepts: separators become spaces, at most 48
/// characters, never empty.
fn tidy_name(raw: &str) -> String {
    let spaced: String = raw
        .chars()
        .map(|c| {
            if c == '_' || c == '-' || c.is_control() {
                ' '
            } else {
                c
            }
        })
        .collect();
    let words: Vec<&str> = spaced.split_whitespace().collect();
    let name: String = words.join(" ").chars().take(48).collect();
    if name.trim().is_empty() {
        "Imported".to_string()
    } else {
        name.trim().to_string()
    }
}

/// Reads one square image and resizes it to `side_px`² RGBA8 (Lanczos 3;
/// 16-bit channels are rounded to 8). Returns the texture and the source
/// side.
///
/// # Errors
/// As [`import_material`].
pub fn decode_texture(
    path: &Path,
    side_px: u32,
) -> Result<(MaterialTexture, u32), MaterialImportError> {
    let bytes =
        read_bounded(path, MAX_TEXTURE_FILE_BYTES).map_err(|source| MaterialImportError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    let decode_err = |e: image::ImageError| MaterialImportError::Decode {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let reader = || -> Result<image::ImageReader<Cursor<&[u8]>>, MaterialImportError> {
        let mut r = image::ImageReader::new(Cursor::new(bytes.as_slice()))
            .with_guessed_format()
            .map_err(|e| decode_err(image::ImageError::IoError(e)))?;
        let mut limits = image::Limits::default();
        limits.max_image_width = Some(MAX_SOURCE_SIDE_PX);
        limits.max_image_height = Some(MAX_SOURCE_SIDE_PX);
        // An 8192² RGBA16 image, plus the decoder's own buffers.
        limits.max_alloc = Some(600 << 20);
        r.limits(limits);
        Ok(r)
    };
    // The header alone (no pixels are decoded), without the limits, so a
    // refusal names the real size.
    let (width, height) = image::ImageReader::new(Cursor::new(bytes.as_slice()))
        .with_guessed_format()
        .map_err(|e| decode_err(image::ImageError::IoError(e)))?
        .into_dimensions()
        .map_err(decode_err)?;
    check_size(path, width, height)?;
    let format = reader()?.format();
    if format == Some(image::ImageFormat::Jpeg) && !jpeg_is_complete(&bytes) {
        // The decoder fills a cut-short JPEG's missing rows with grey
        // instead of failing.
        return Err(MaterialImportError::Decode {
            path: path.to_path_buf(),
            message: "the JPEG is cut short: no end-of-image marker follows its image data".into(),
        });
    }
    let image = reader()?.decode().map_err(decode_err)?;
    let rgba = image.to_rgba8();
    let resized = if width == side_px {
        rgba
    } else {
        image::imageops::resize(&rgba, side_px, side_px, FilterType::Lanczos3)
    };
    let texture = MaterialTexture::new(side_px, resized.into_raw()).map_err(|e| {
        MaterialImportError::Decode {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    })?;
    Ok((texture, width))
}

/// True when a JPEG's last start-of-scan marker (`FF DA`) is followed by an
/// end-of-image marker (`FF D9`). Entropy-coded data escapes every `FF`
/// byte, so neither marker can occur inside it: a file cut anywhere after
/// its headers ends without the end marker (JPEG, ITU-T T.81 §B.1.1).
fn jpeg_is_complete(bytes: &[u8]) -> bool {
    let last = |marker: u8| bytes.windows(2).rposition(|w| w == [0xFF, marker]);
    matches!((last(0xDA), last(0xD9)), (Some(sos), Some(eoi)) if eoi > sos)
}

fn check_size(path: &Path, width: u32, height: u32) -> Result<(), MaterialImportError> {
    if width != height {
        return Err(MaterialImportError::NotSquare {
            path: path.to_path_buf(),
            width,
            height,
        });
    }
    if !(MIN_SOURCE_SIDE_PX..=MAX_SOURCE_SIDE_PX).contains(&width) {
        return Err(MaterialImportError::BadSize {
            path: path.to_path_buf(),
            side: width,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pbr_file_names_get_their_roles() {
        let cases = [
            ("Rock030_2K_Color.png", Some(TextureRole::Albedo)),
            ("rock_basecolor.jpg", Some(TextureRole::Albedo)),
            ("mossy_base_color.png", Some(TextureRole::Albedo)),
            ("aerial_grass_rock_diff_2k.jpg", Some(TextureRole::Albedo)),
            ("T_Albedo.PNG", Some(TextureRole::Albedo)),
            (
                "aerial_grass_rock_nor_gl_2k.png",
                Some(TextureRole::NormalGl),
            ),
            (
                "aerial_grass_rock_nor_dx_2k.png",
                Some(TextureRole::NormalDx),
            ),
            ("Rock030_2K_NormalDX.png", Some(TextureRole::NormalDx)),
            ("Rock030_2K_Roughness.jpg", Some(TextureRole::Roughness)),
            ("x_rough.png", Some(TextureRole::Roughness)),
            ("Rock030_2K_Displacement.png", Some(TextureRole::Height)),
            ("x_height.png", Some(TextureRole::Height)),
            ("Rock030_2K_AmbientOcclusion.jpg", None),
            ("colorful.txt", None),
            ("preview.png", None),
        ];
        for (name, role) in cases {
            assert_eq!(role_of_file_name(name), role, "{name}");
        }
    }

    #[test]
    fn cut_short_jpegs_are_refused_and_whole_ones_read() {
        let dir = std::env::temp_dir().join(format!("strata-cut-jpeg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let whole = dir.join("whole.jpg");
        image::RgbImage::from_fn(256, 256, |x, y| {
            image::Rgb([x as u8, y as u8, (x ^ y) as u8])
        })
        .save(&whole)
        .unwrap();
        let bytes = std::fs::read(&whole).unwrap();
        let (texture, side) = decode_texture(&whole, 256).unwrap();
        assert_eq!((side, texture.side_px()), (256, 256));
        assert_eq!(bytes[bytes.len() - 2..], [0xFF, 0xD9]);
        // The first third (the decoder filled the rest grey), the headers
        // alone, and the whole file less its end marker.
        let cuts = [bytes.len() / 3, 700.min(bytes.len() / 2), bytes.len() - 2];
        for (i, cut) in cuts.into_iter().enumerate() {
            let path = dir.join(format!("cut{i}.jpg"));
            std::fs::write(&path, &bytes[..cut]).unwrap();
            match decode_texture(&path, 256) {
                Err(MaterialImportError::Decode { message, .. }) => {
                    assert!(message.contains("cut short"), "{cut}: {message}")
                }
                other => panic!("{cut} bytes of {}: {:?}", bytes.len(), other.map(|t| t.1)),
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn names_are_tidied_for_the_library() {
        assert_eq!(tidy_name("aerial_grass-rock"), "aerial grass rock");
        assert_eq!(tidy_name("__"), "Imported");
        assert_eq!(tidy_name(&"a".repeat(60)).len(), 48);
    }

    #[test]
    fn a_top_variant_import_does_not_decode_the_maps_it_would_not_use() {
        let dir = std::env::temp_dir().join(format!("strata-top-import-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        image::RgbImage::from_pixel(32, 32, image::Rgb([9, 99, 9]))
            .save(dir.join("x_basecolor.png"))
            .unwrap();
        std::fs::write(dir.join("x_roughness.png"), b"not a png").unwrap();
        assert!(matches!(
            import_material(&dir, 256),
            Err(MaterialImportError::Decode { .. })
        ));
        let top = import_albedo_only(&dir, 256).unwrap();
        assert_eq!(top.albedo.average_srgb(), [9, 99, 9]);
        assert!(top.surface.is_none() && top.surface_files.is_empty());
        assert_eq!(top.matched.len(), 2, "the roughness map is still reported");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
