//! The material library of one world: for each solid built-in material id,
//! the style it is drawn with (name, albedo texture, top variant, surface
//! maps and their height-blend sharpness, tint, tiling), and the textures
//! those styles use, each kept once.
//!
//! The default library is the eleven built-ins as they have always looked
//! (their procedural textures, no tint, a 32-stud tile), and a world whose
//! library is the default stores nothing for it. Restyling changes only how
//! a material id is drawn and named, never the cells, so the world's cells
//! and their hash stay as they are.

use std::collections::BTreeMap;

use super::surface::{SurfaceMaps, flip_normal_green};
use super::texture::{
    DEFAULT_TEXTURE_SIDE_PX, MaterialTexture, TEXTURE_SIDES_PX, gpu_bytes_of_side,
};
use crate::terrain::storage::cell::Material;

/// Studs one texture tile may cover. Each divides the 128-stud chunk, so
/// the triplanar projection (from chunk-local positions) stays continuous
/// across chunk borders.
pub const TILING_STUDS: [u32; 6] = [4, 8, 16, 32, 64, 128];

/// The tile size of a built-in material, studs (its procedural texture was
/// drawn for it).
pub const DEFAULT_TILING_STUDS: u32 = 32;

/// Longest material name, characters.
pub const MAX_NAME_CHARS: usize = 48;

/// Blend sharpness a material gets when a height map is imported for it
/// and it had none, percent.
pub const DEFAULT_BLEND_SHARPNESS_PCT: u8 = 60;

/// Default GPU memory the library's textures may take with their mips
/// (256 MiB: every slot at 2048² fits).
pub const DEFAULT_TEXTURE_BUDGET_BYTES: u64 = 256 << 20;

/// Why a library change was refused (the library is unchanged).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LibraryError {
    /// The material has no style: Air, Water, or an id past the built-ins.
    #[error(
        "material id {id} cannot be restyled: only the solid built-in materials (ids 2 to 10) can"
    )]
    NotStyled {
        /// The id given.
        id: u8,
    },
    /// The name is empty, too long, or has control characters.
    #[error("material name {name:?} is not allowed: use 1 to 48 printable characters")]
    BadName {
        /// The name given.
        name: String,
    },
    /// Another material already has the name (case-insensitive), or it is
    /// another material's built-in name (which scripts and the command line
    /// also use).
    #[error("another material is already named {name:?}")]
    DuplicateName {
        /// The name given.
        name: String,
    },
    /// The tile size is not one of [`TILING_STUDS`].
    #[error(
        "a texture tile of {studs} studs would not line up across chunks; use 4, 8, 16, 32, 64 or 128"
    )]
    BadTiling {
        /// The size given, studs.
        studs: u32,
    },
    /// The texture side is not the library's.
    #[error("the texture is {found}² pixels but this world's materials are {expected}²")]
    WrongTextureSide {
        /// The library's side, pixels.
        expected: u32,
        /// The texture's side, pixels.
        found: u32,
    },
    /// The side is not one of the allowed sides.
    #[error("{side_px}² is not a material texture size; use 256, 512, 1024 or 2048")]
    BadSide {
        /// The side given, pixels.
        side_px: u32,
    },
    /// Textures are in use, so the side cannot change.
    #[error("the texture size cannot change while {count} imported textures use the current one")]
    SideInUse {
        /// Textures in use.
        count: usize,
    },
    /// The textures would take more GPU memory than the budget.
    #[error(
        "the material textures would take {needed_mib:.1} MiB of GPU memory, over this world's budget of {budget_mib:.1} MiB"
    )]
    OverBudget {
        /// What the library would take, MiB.
        needed_mib: f64,
        /// The budget, MiB.
        budget_mib: f64,
    },
    /// A blend sharpness above 100 %.
    #[error("a blend sharpness of {pct} % is not allowed; use 0 to 100")]
    BadSharpness {
        /// The value given, percent.
        pct: u32,
    },
    /// A blend sharpness for a material without a height map.
    #[error(
        "material {id} has no height map to blend by; import a texture folder with one (named like height or displacement) first"
    )]
    NoHeightMap {
        /// The material id.
        id: u8,
    },
    /// The material has no normal map to flip.
    #[error("material {id} has no normal map")]
    NoNormalMap {
        /// The material id.
        id: u8,
    },
    /// A stored library names a texture it does not hold.
    #[error("material {id} uses texture {hash:016x}, which the library does not hold")]
    MissingTexture {
        /// The material id.
        id: u8,
        /// The texture's hash.
        hash: u64,
    },
}

/// GPU memory of a library's textures, for the panel and `--stats-json`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TextureMemoryReport {
    /// Side imported textures are resized to, pixels.
    pub texture_side_px: u32,
    /// Side the texture array is drawn at (256 until a texture is imported).
    pub drawn_side_px: u32,
    /// GPU bytes of the albedo array (one layer per material id, with
    /// mips) and of the surface array beside it (as many layers, once any
    /// material has surface maps; else nothing).
    pub array_gpu_bytes: u64,
    /// Layers of the array: one per material id, then one per top variant.
    pub layers: u32,
    /// The arrays' bytes per layer (albedo, plus surface when drawn).
    pub gpu_bytes_per_layer: u64,
    /// Whether the surface array (normal, roughness, height) is drawn.
    pub surface_array: bool,
    /// One entry per solid material.
    pub materials: Vec<MaterialMemory>,
}

/// One material in a [`TextureMemoryReport`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MaterialMemory {
    /// Material id.
    pub id: u8,
    /// Its name in the world.
    pub name: String,
    /// True when drawn with an imported texture.
    pub imported: bool,
    /// GPU bytes of its imported textures with mips (0 for a built-in).
    pub texture_gpu_bytes: u64,
    /// The surface maps it has.
    pub surface_maps: SurfaceMaps,
}

/// How one material id is drawn and named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaterialStyle {
    /// The name tools, panels and exports show.
    pub name: String,
    /// The albedo texture's hash in the library; `None` draws the built-in
    /// procedural texture of the id.
    pub albedo: Option<u64>,
    /// The texture's hash that upward-facing surfaces show instead (grass
    /// over dirt: the albedo then shows on the sides, cliffs and banks);
    /// `None` shows the albedo everywhere.
    pub top_albedo: Option<u64>,
    /// sRGB multiplier of the albedo (`[255, 255, 255]` leaves it as is).
    pub tint_srgb: [u8; 3],
    /// Studs one texture tile covers, one of [`TILING_STUDS`].
    pub tiling_studs: u32,
    /// The packed surface texture's hash (normal, roughness, height; see
    /// [`super::surface`]); `None` draws the material flat and fully rough.
    pub surface: Option<u64>,
    /// Which maps [`MaterialStyle::surface`] holds.
    pub surface_maps: SurfaceMaps,
    /// How strongly the material's height map decides where it shows
    /// among the blended materials of a surface, percent: 0 blends by the
    /// cell weights alone, 100 gives crisp edges along the height map.
    pub blend_sharpness_pct: u8,
}

impl MaterialStyle {
    /// The built-in style of `material`.
    pub fn built_in(material: Material) -> MaterialStyle {
        MaterialStyle {
            name: material.name().to_string(),
            albedo: None,
            top_albedo: None,
            tint_srgb: [255, 255, 255],
            tiling_studs: DEFAULT_TILING_STUDS,
            surface: None,
            surface_maps: SurfaceMaps::default(),
            blend_sharpness_pct: 0,
        }
    }
}

/// A world's material library: one [`MaterialStyle`] per solid built-in id
/// (2 to 10) and the textures they use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaterialLibrary {
    texture_side_px: u32,
    texture_budget_bytes: u64,
    /// Styles of ids `2..Material::COUNT`, in id order.
    styles: Vec<MaterialStyle>,
    textures: BTreeMap<u64, MaterialTexture>,
}

impl Default for MaterialLibrary {
    fn default() -> MaterialLibrary {
        MaterialLibrary {
            texture_side_px: DEFAULT_TEXTURE_SIDE_PX,
            texture_budget_bytes: DEFAULT_TEXTURE_BUDGET_BYTES,
            styles: Material::solids().map(MaterialStyle::built_in).collect(),
            textures: BTreeMap::new(),
        }
    }
}

/// Index of a solid built-in's style.
fn slot(material: Material) -> Result<usize, LibraryError> {
    if material.is_solid() && (material.0 as usize) < Material::COUNT {
        Ok(material.0 as usize - 2)
    } else {
        Err(LibraryError::NotStyled { id: material.0 })
    }
}

/// Characters that draw nothing or reorder text (zero-width, bidirectional
/// controls, the soft hyphen, the byte-order mark): a name with one would
/// look like another.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{061C}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

fn check_name(name: &str) -> Result<&str, LibraryError> {
    let trimmed = name.trim();
    let chars = trimmed.chars().count();
    if chars == 0
        || chars > MAX_NAME_CHARS
        || trimmed.chars().any(|c| c.is_control() || is_invisible(c))
    {
        return Err(LibraryError::BadName {
            name: name.to_string(),
        });
    }
    Ok(trimmed)
}

impl MaterialLibrary {
    /// A library from stored parts, checked as every edit checks them:
    /// `styles` for ids 2 to 10 in order, `textures` all of
    /// `texture_side_px` and each used by some style.
    ///
    /// # Errors
    /// The [`LibraryError`] of the first style that is not allowed.
    pub fn from_parts(
        texture_side_px: u32,
        styles: Vec<MaterialStyle>,
        textures: Vec<MaterialTexture>,
    ) -> Result<MaterialLibrary, LibraryError> {
        let mut library = MaterialLibrary::default();
        library.set_texture_side_px(texture_side_px)?;
        if styles.len() != library.styles.len() {
            return Err(LibraryError::NotStyled {
                id: (styles.len() + 2).min(255) as u8,
            });
        }
        for texture in textures {
            if texture.side_px() != texture_side_px {
                return Err(LibraryError::WrongTextureSide {
                    expected: texture_side_px,
                    found: texture.side_px(),
                });
            }
            library.textures.insert(texture.hash(), texture);
        }
        for (material, style) in Material::solids().zip(styles) {
            library.rename(material, &style.name)?;
            library.set_tiling(material, style.tiling_studs)?;
            library.set_tint(material, style.tint_srgb)?;
            for hash in [style.albedo, style.top_albedo, style.surface]
                .into_iter()
                .flatten()
            {
                if !library.textures.contains_key(&hash) {
                    return Err(LibraryError::MissingTexture {
                        id: material.0,
                        hash,
                    });
                }
            }
            let i = slot(material)?;
            library.styles[i].albedo = style.albedo;
            library.styles[i].top_albedo = style.top_albedo;
            library.styles[i].surface = style.surface;
            library.styles[i].surface_maps = if style.surface.is_some() {
                style.surface_maps
            } else {
                SurfaceMaps::default()
            };
            library.set_blend_sharpness(material, u32::from(style.blend_sharpness_pct))?;
        }
        library.drop_unused_textures();
        library.check_budget(library.needed_gpu_bytes())?;
        Ok(library)
    }

    /// True when every style is the built-in one (nothing to store).
    pub fn is_default(&self) -> bool {
        self.texture_side_px == DEFAULT_TEXTURE_SIDE_PX
            && self
                .styles
                .iter()
                .zip(Material::solids())
                .all(|(s, m)| *s == MaterialStyle::built_in(m))
    }

    /// XXH3-64 over everything that changes how the library draws (the
    /// side, every style, the texture hashes): a renderer re-uploads when it
    /// changes, without comparing texels.
    pub fn fingerprint(&self) -> u64 {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(&self.texture_side_px.to_le_bytes());
        for s in &self.styles {
            h.update(s.name.as_bytes());
            h.update(&[0]);
            for texture in [s.albedo, s.top_albedo, s.surface] {
                h.update(&texture.unwrap_or(0).to_le_bytes());
                h.update(&[u8::from(texture.is_some())]);
            }
            h.update(&s.tint_srgb);
            h.update(&s.tiling_studs.to_le_bytes());
            let m = s.surface_maps;
            h.update(&[
                u8::from(m.normal),
                u8::from(m.normal_directx),
                u8::from(m.roughness),
                u8::from(m.height),
                s.blend_sharpness_pct,
            ]);
        }
        h.digest()
    }

    /// Side imported textures are resized to, pixels.
    pub fn texture_side_px(&self) -> u32 {
        self.texture_side_px
    }

    /// GPU bytes the library's textures may take with their mips.
    pub fn texture_budget_bytes(&self) -> u64 {
        self.texture_budget_bytes
    }

    /// Sets the GPU budget (not stored with the world; a machine setting).
    pub fn set_texture_budget_bytes(&mut self, bytes: u64) {
        self.texture_budget_bytes = bytes;
    }

    /// Changes the side imported textures are resized to.
    ///
    /// # Errors
    /// [`LibraryError::BadSide`] outside [`TEXTURE_SIDES_PX`];
    /// [`LibraryError::SideInUse`] while a style uses an imported texture.
    pub fn set_texture_side_px(&mut self, side_px: u32) -> Result<(), LibraryError> {
        if !TEXTURE_SIDES_PX.contains(&side_px) {
            return Err(LibraryError::BadSide { side_px });
        }
        if side_px != self.texture_side_px && !self.textures.is_empty() {
            return Err(LibraryError::SideInUse {
                count: self.textures.len(),
            });
        }
        self.texture_side_px = side_px;
        Ok(())
    }

    /// The style of `material`; `None` for Air, Water and unknown ids.
    pub fn style(&self, material: Material) -> Option<&MaterialStyle> {
        slot(material).ok().map(|i| &self.styles[i])
    }

    /// The styled materials and their styles, in id order.
    pub fn styles(&self) -> impl Iterator<Item = (Material, &MaterialStyle)> {
        Material::solids().zip(self.styles.iter())
    }

    /// The name of `material` in this world (a built-in name for Air and
    /// Water).
    pub fn name(&self, material: Material) -> &str {
        self.style(material)
            .map_or(material.name(), |s| s.name.as_str())
    }

    /// The material this world names `name` (case-insensitive), also by its
    /// built-in name when that is not another material's name here.
    pub fn material_named(&self, name: &str) -> Option<Material> {
        let name = name.trim();
        self.styles()
            .find(|(_, s)| s.name.eq_ignore_ascii_case(name))
            .map(|(m, _)| m)
            .or_else(|| Material::from_name(name))
    }

    /// The texture named `hash`.
    pub fn texture(&self, hash: u64) -> Option<&MaterialTexture> {
        self.textures.get(&hash)
    }

    /// Every texture in use, by hash.
    pub fn textures(&self) -> impl Iterator<Item = &MaterialTexture> {
        self.textures.values()
    }

    /// The albedo texture `material` is drawn with, when imported.
    pub fn albedo(&self, material: Material) -> Option<&MaterialTexture> {
        self.style(material)
            .and_then(|s| s.albedo)
            .and_then(|h| self.textures.get(&h))
    }

    /// The texture `material`'s upward-facing surfaces show, when it has
    /// a top variant.
    pub fn top_albedo(&self, material: Material) -> Option<&MaterialTexture> {
        self.style(material)
            .and_then(|s| s.top_albedo)
            .and_then(|h| self.textures.get(&h))
    }

    /// The packed surface texture of `material` (normal, roughness,
    /// height), when it has surface maps.
    pub fn surface(&self, material: Material) -> Option<&MaterialTexture> {
        self.style(material)
            .and_then(|s| s.surface)
            .and_then(|h| self.textures.get(&h))
    }

    /// True when some material has surface maps, so the renderer draws the
    /// surface array.
    pub fn has_surfaces(&self) -> bool {
        self.styles.iter().any(|s| s.surface.is_some())
    }

    /// GPU bytes of `material`'s own textures, its albedo, its top variant
    /// and its surface maps (with mips; 0 for a built-in texture, which is
    /// always loaded).
    pub fn texture_gpu_bytes(&self, material: Material) -> u64 {
        [
            self.albedo(material),
            self.top_albedo(material),
            self.surface(material),
        ]
        .into_iter()
        .flatten()
        .map(MaterialTexture::gpu_bytes)
        .sum()
    }

    /// Layers of the texture array the library draws with: one per
    /// material id, then one per top variant (in id order).
    pub fn layer_count(&self) -> u32 {
        Material::COUNT as u32
            + self
                .styles
                .iter()
                .filter(|s| s.top_albedo.is_some())
                .count() as u32
    }

    /// The array layer `material`'s upward-facing surfaces sample: its top
    /// variant's layer (after the per-id layers, in id order), else its own.
    pub fn top_layer(&self, material: Material) -> u32 {
        let mut next = Material::COUNT as u32;
        for (m, s) in self.styles() {
            if s.top_albedo.is_some() {
                if m == material {
                    return next;
                }
                next += 1;
            }
        }
        u32::from(material.0)
    }

    /// GPU bytes of the texture arrays the library draws with
    /// ([`MaterialLibrary::layer_count`] layers at the drawn side, with
    /// mips, twice over when the surface array is drawn).
    pub fn needed_gpu_bytes(&self) -> u64 {
        let arrays = if self.has_surfaces() { 2 } else { 1 };
        gpu_bytes_of_side(self.drawn_side_px()) * u64::from(self.layer_count()) * arrays
    }

    /// The flat colour that stands for `material` where no texture is
    /// drawn (the low-poly style, swatches): its top variant's average, else
    /// its imported texture's, else its built-in colour, times its tint
    /// (sRGB, rounded).
    pub fn flat_colour_srgb(&self, material: Material) -> [u8; 3] {
        let base = self
            .top_albedo(material)
            .or_else(|| self.albedo(material))
            .map_or(material.base_color_srgb(), MaterialTexture::average_srgb);
        let tint = self.style(material).map_or([255; 3], |s| s.tint_srgb);
        let mut out = [0u8; 3];
        for k in 0..3 {
            out[k] = ((u16::from(base[k]) * u16::from(tint[k]) + 127) / 255) as u8;
        }
        out
    }

    /// What the library's textures take on the GPU.
    pub fn memory_report(&self) -> TextureMemoryReport {
        let array = self.needed_gpu_bytes();
        TextureMemoryReport {
            texture_side_px: self.texture_side_px,
            drawn_side_px: self.drawn_side_px(),
            array_gpu_bytes: array,
            layers: self.layer_count(),
            gpu_bytes_per_layer: array / u64::from(self.layer_count()),
            surface_array: self.has_surfaces(),
            materials: self
                .styles()
                .map(|(m, s)| MaterialMemory {
                    id: m.0,
                    name: s.name.clone(),
                    imported: s.albedo.is_some(),
                    texture_gpu_bytes: self.texture_gpu_bytes(m),
                    surface_maps: s.surface_maps,
                })
                .collect(),
        }
    }

    /// The side the texture array is drawn at: the library's side once a
    /// texture is imported, else the built-ins' own 256 pixels.
    pub fn drawn_side_px(&self) -> u32 {
        if self.textures.is_empty() {
            TEXTURE_SIDES_PX[0]
        } else {
            self.texture_side_px
        }
    }

    fn check_budget(&self, needed: u64) -> Result<(), LibraryError> {
        if needed > self.texture_budget_bytes {
            return Err(LibraryError::OverBudget {
                needed_mib: needed as f64 / (1u64 << 20) as f64,
                budget_mib: self.texture_budget_bytes as f64 / (1u64 << 20) as f64,
            });
        }
        Ok(())
    }

    /// Renames `material` (trimmed).
    ///
    /// # Errors
    /// [`LibraryError::NotStyled`], [`LibraryError::BadName`],
    /// [`LibraryError::DuplicateName`].
    pub fn rename(&mut self, material: Material, name: &str) -> Result<(), LibraryError> {
        let i = slot(material)?;
        let name = check_name(name)?;
        let taken = self
            .styles()
            .any(|(m, s)| m != material && s.name.eq_ignore_ascii_case(name))
            || Material::ALL
                .iter()
                .any(|&m| m != material && m.name().eq_ignore_ascii_case(name));
        if taken {
            return Err(LibraryError::DuplicateName {
                name: name.to_string(),
            });
        }
        self.styles[i].name = name.to_string();
        Ok(())
    }

    /// Sets `material`'s tint.
    ///
    /// # Errors
    /// [`LibraryError::NotStyled`].
    pub fn set_tint(&mut self, material: Material, tint_srgb: [u8; 3]) -> Result<(), LibraryError> {
        let i = slot(material)?;
        self.styles[i].tint_srgb = tint_srgb;
        Ok(())
    }

    /// Sets the studs one tile of `material`'s texture covers.
    ///
    /// # Errors
    /// [`LibraryError::NotStyled`], [`LibraryError::BadTiling`].
    pub fn set_tiling(&mut self, material: Material, studs: u32) -> Result<(), LibraryError> {
        let i = slot(material)?;
        if !TILING_STUDS.contains(&studs) {
            return Err(LibraryError::BadTiling { studs });
        }
        self.styles[i].tiling_studs = studs;
        Ok(())
    }

    /// Draws `material` with `texture` (kept once if another style uses the
    /// same bytes).
    ///
    /// # Errors
    /// [`LibraryError::NotStyled`]; [`LibraryError::WrongTextureSide`] when
    /// the texture is not at the library's side; [`LibraryError::OverBudget`]
    /// when the array would pass the budget.
    pub fn set_albedo(
        &mut self,
        material: Material,
        texture: MaterialTexture,
    ) -> Result<(), LibraryError> {
        self.put_texture(material, texture, |style| &mut style.albedo)
    }

    /// Gives `material` a top variant: `texture` on its upward-facing
    /// surfaces, its albedo (imported or built-in) on the sides.
    ///
    /// # Errors
    /// As [`MaterialLibrary::set_albedo`].
    pub fn set_top_albedo(
        &mut self,
        material: Material,
        texture: MaterialTexture,
    ) -> Result<(), LibraryError> {
        self.put_texture(material, texture, |style| &mut style.top_albedo)
    }

    /// Draws `material` with an imported set: `albedo`, and `surface` maps
    /// (packed by [`super::surface::pack_surface`]) or none, replacing the
    /// maps it had. A material given a height map for the first time gets
    /// [`DEFAULT_BLEND_SHARPNESS_PCT`]. All or nothing.
    ///
    /// # Errors
    /// As [`MaterialLibrary::set_albedo`], for either texture.
    pub fn set_material_set(
        &mut self,
        material: Material,
        albedo: MaterialTexture,
        surface: Option<(MaterialTexture, SurfaceMaps)>,
    ) -> Result<(), LibraryError> {
        let i = slot(material)?;
        for texture in std::iter::once(&albedo).chain(surface.as_ref().map(|(t, _)| t)) {
            self.check_side(texture)?;
        }
        self.change_checked(|lib| {
            let style = &mut lib.styles[i];
            let had_height = style.surface_maps.height;
            style.albedo = Some(albedo.hash());
            match &surface {
                Some((texture, maps)) => {
                    style.surface = Some(texture.hash());
                    style.surface_maps = *maps;
                    if !maps.height {
                        style.blend_sharpness_pct = 0;
                    } else if !had_height && style.blend_sharpness_pct == 0 {
                        style.blend_sharpness_pct = DEFAULT_BLEND_SHARPNESS_PCT;
                    }
                }
                None => {
                    style.surface = None;
                    style.surface_maps = SurfaceMaps::default();
                    style.blend_sharpness_pct = 0;
                }
            }
            lib.textures.entry(albedo.hash()).or_insert(albedo);
            if let Some((texture, _)) = surface {
                lib.textures.entry(texture.hash()).or_insert(texture);
            }
        })
    }

    /// Sets how strongly `material`'s height map decides where it shows
    /// among blended materials, percent.
    ///
    /// # Errors
    /// [`LibraryError::NotStyled`], [`LibraryError::BadSharpness`] above
    /// 100, [`LibraryError::NoHeightMap`] for a sharpness above 0 on a
    /// material without a height map (it would change nothing).
    pub fn set_blend_sharpness(
        &mut self,
        material: Material,
        pct: u32,
    ) -> Result<(), LibraryError> {
        let i = slot(material)?;
        let pct = u8::try_from(pct)
            .ok()
            .filter(|p| *p <= 100)
            .ok_or(LibraryError::BadSharpness { pct })?;
        if pct > 0 && !self.styles[i].surface_maps.height {
            return Err(LibraryError::NoHeightMap { id: material.0 });
        }
        self.styles[i].blend_sharpness_pct = pct;
        Ok(())
    }

    /// Flips the green of `material`'s normal map: the switch between a map
    /// written for OpenGL (green up) and one written for DirectX.
    ///
    /// # Errors
    /// [`LibraryError::NotStyled`], [`LibraryError::NoNormalMap`].
    pub fn flip_normal_green(&mut self, material: Material) -> Result<(), LibraryError> {
        let i = slot(material)?;
        let Some(surface) = self
            .surface(material)
            .filter(|_| self.styles[i].surface_maps.normal)
        else {
            return Err(LibraryError::NoNormalMap { id: material.0 });
        };
        let flipped = flip_normal_green(surface);
        self.change_checked(|lib| {
            let style = &mut lib.styles[i];
            style.surface = Some(flipped.hash());
            style.surface_maps.normal_directx = !style.surface_maps.normal_directx;
            lib.textures.entry(flipped.hash()).or_insert(flipped);
        })
    }

    /// Removes `material`'s surface maps (drawn flat and fully rough).
    ///
    /// # Errors
    /// [`LibraryError::NotStyled`].
    pub fn clear_surface(&mut self, material: Material) -> Result<(), LibraryError> {
        let i = slot(material)?;
        self.styles[i].surface = None;
        self.styles[i].surface_maps = SurfaceMaps::default();
        self.styles[i].blend_sharpness_pct = 0;
        self.drop_unused_textures();
        Ok(())
    }

    fn check_side(&self, texture: &MaterialTexture) -> Result<(), LibraryError> {
        if texture.side_px() != self.texture_side_px {
            return Err(LibraryError::WrongTextureSide {
                expected: self.texture_side_px,
                found: texture.side_px(),
            });
        }
        Ok(())
    }

    /// Puts `texture` in the library and names it in the field of
    /// `material`'s style that `field` picks, when the side and the budget
    /// allow.
    fn put_texture(
        &mut self,
        material: Material,
        texture: MaterialTexture,
        field: impl FnOnce(&mut MaterialStyle) -> &mut Option<u64>,
    ) -> Result<(), LibraryError> {
        let i = slot(material)?;
        self.check_side(&texture)?;
        self.change_checked(|lib| {
            let hash = texture.hash();
            lib.textures.entry(hash).or_insert(texture);
            *field(&mut lib.styles[i]) = Some(hash);
        })
    }

    /// Applies `change` when the library it makes fits the budget; keeps
    /// this one otherwise.
    fn change_checked(
        &mut self,
        change: impl FnOnce(&mut MaterialLibrary),
    ) -> Result<(), LibraryError> {
        let mut next = self.clone();
        change(&mut next);
        next.drop_unused_textures();
        next.check_budget(next.needed_gpu_bytes())?;
        *self = next;
        Ok(())
    }

    /// Draws `material` with its built-in texture again, without surface
    /// maps (they belonged to the imported set).
    ///
    /// # Errors
    /// [`LibraryError::NotStyled`].
    pub fn clear_albedo(&mut self, material: Material) -> Result<(), LibraryError> {
        let i = slot(material)?;
        self.styles[i].albedo = None;
        self.styles[i].surface = None;
        self.styles[i].surface_maps = SurfaceMaps::default();
        self.styles[i].blend_sharpness_pct = 0;
        self.drop_unused_textures();
        Ok(())
    }

    /// Removes `material`'s top variant (its albedo shows everywhere).
    ///
    /// # Errors
    /// [`LibraryError::NotStyled`].
    pub fn clear_top_albedo(&mut self, material: Material) -> Result<(), LibraryError> {
        let i = slot(material)?;
        self.styles[i].top_albedo = None;
        self.drop_unused_textures();
        Ok(())
    }

    /// Gives `material` its built-in style back.
    ///
    /// # Errors
    /// [`LibraryError::NotStyled`].
    pub fn reset(&mut self, material: Material) -> Result<(), LibraryError> {
        let i = slot(material)?;
        self.styles[i] = MaterialStyle::built_in(material);
        self.drop_unused_textures();
        Ok(())
    }

    fn drop_unused_textures(&mut self) {
        let used: Vec<u64> = self
            .styles
            .iter()
            .flat_map(|s| [s.albedo, s.top_albedo, s.surface])
            .flatten()
            .collect();
        self.textures.retain(|h, _| used.contains(h));
    }
}

#[cfg(test)]
#[path = "library_tests.rs"]
mod tests;
