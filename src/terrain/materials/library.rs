//! The material library of one world: for each solid material id, the
//! style it is drawn with (name, albedo texture, top variant, surface maps
//! and their height-blend sharpness, tint, tiling), and the textures those
//! styles use, each kept once.
//!
//! The nine solid built-ins (ids 2 to 10) are always there; a world adds
//! its own materials at ids 11 to 255 (up to 254 solids in all), each drawn
//! from an imported texture. The default library is the built-ins as they
//! have always looked (their procedural textures, no tint, a 32-stud tile),
//! and a world whose library is the default stores nothing for it.
//! Restyling changes only how a material id is drawn and named, never the
//! cells, so the world's cells and their hash stay as they are.

use std::collections::BTreeMap;

use super::surface::{SurfaceMaps, flip_normal_green};
use super::texture::{
    DEFAULT_TEXTURE_SIDE_PX, MaterialTexture, TEXTURE_SIDES_PX, gpu_bytes_of_side,
};
use crate::terrain::storage::cell::Material;

pub use super::library_error::LibraryError;
pub use super::memory_report::{MaterialMemory, TextureMemoryReport};

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
/// (256 MiB: the built-ins at 2048², 96 layers with surface maps at 512²,
/// or all 256 layers at 256² with them).
pub const DEFAULT_TEXTURE_BUDGET_BYTES: u64 = 256 << 20;

/// Layers the library's texture arrays may have: the array-layer limit
/// every wgpu adapter grants (`max_texture_array_layers`, 256 by default,
/// which the renderer requests), so a library that fits draws on any GPU.
/// One layer per built-in id, one per added material, one per top variant.
pub const MAX_TEXTURE_LAYERS: u32 = 256;

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

/// A world's material library: one [`MaterialStyle`] per solid id it
/// holds (the built-ins 2 to 10 always, added materials from 11) and the
/// textures they use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaterialLibrary {
    texture_side_px: u32,
    texture_budget_bytes: u64,
    /// Styles by material id.
    styles: BTreeMap<u8, MaterialStyle>,
    textures: BTreeMap<u64, MaterialTexture>,
}

impl Default for MaterialLibrary {
    fn default() -> MaterialLibrary {
        MaterialLibrary {
            texture_side_px: DEFAULT_TEXTURE_SIDE_PX,
            texture_budget_bytes: DEFAULT_TEXTURE_BUDGET_BYTES,
            styles: Material::solids()
                .map(|m| (m.0, MaterialStyle::built_in(m)))
                .collect(),
            textures: BTreeMap::new(),
        }
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

/// True when two material names are the same ignoring case, in any script
/// (`"Éclair"` and `"éclair"`, `"ΣΟΦΙΑ"` and `"σοφια"`): each compared as
/// its characters' Unicode lowercase mappings.
pub fn same_name(a: &str, b: &str) -> bool {
    a.chars()
        .flat_map(char::to_lowercase)
        .eq(b.chars().flat_map(char::to_lowercase))
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
    /// `styles` by id, the built-ins (2 to 10) first and in order, then
    /// added materials in rising id order, each with an albedo; `textures`
    /// all of `texture_side_px` and each used by some style.
    ///
    /// # Errors
    /// The [`LibraryError`] of the first style that is not allowed
    /// ([`LibraryError::NotStyled`] for a missing built-in, an id out of
    /// order, Air or Water; [`LibraryError::NoBuiltInLook`] for an added
    /// material without an albedo).
    pub fn from_parts(
        texture_side_px: u32,
        styles: Vec<(Material, MaterialStyle)>,
        textures: Vec<MaterialTexture>,
    ) -> Result<MaterialLibrary, LibraryError> {
        let mut library = MaterialLibrary::default();
        library.set_texture_side_px(texture_side_px)?;
        let mut built_ins = Material::solids();
        let mut last_id = 1u8;
        for (material, style) in &styles {
            let expected = built_ins.next();
            let in_order = match expected {
                Some(b) => *material == b,
                None => material.0 > last_id,
            };
            if !in_order {
                return Err(LibraryError::NotStyled {
                    id: expected.unwrap_or(*material).0,
                });
            }
            if !material.is_built_in() && style.albedo.is_none() {
                return Err(LibraryError::NoBuiltInLook { id: material.0 });
            }
            last_id = material.0;
        }
        if let Some(missing) = built_ins.next() {
            return Err(LibraryError::NotStyled { id: missing.0 });
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
        for (material, style) in styles {
            if !material.is_built_in() {
                library.styles.insert(material.0, style.clone());
            }
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
            let stored = library.style_mut(material)?;
            stored.albedo = style.albedo;
            stored.top_albedo = style.top_albedo;
            stored.surface = style.surface;
            stored.surface_maps = if style.surface.is_some() {
                style.surface_maps
            } else {
                SurfaceMaps::default()
            };
            stored.blend_sharpness_pct = 0;
            library.set_blend_sharpness(material, u32::from(style.blend_sharpness_pct))?;
        }
        library.drop_unused_textures();
        library.check_limits()?;
        Ok(library)
    }

    /// True when the library holds the built-ins only, each in its
    /// built-in style (nothing to store).
    pub fn is_default(&self) -> bool {
        self.texture_side_px == DEFAULT_TEXTURE_SIDE_PX
            && self.styles.iter().all(|(&id, s)| {
                Material(id).is_built_in() && *s == MaterialStyle::built_in(Material(id))
            })
    }

    /// XXH3-64 over everything that changes how the library draws (the
    /// side, every style, the texture hashes): a renderer re-uploads when it
    /// changes, without comparing texels.
    pub fn fingerprint(&self) -> u64 {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(&self.texture_side_px.to_le_bytes());
        for (&id, s) in &self.styles {
            h.update(&[id]);
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

    /// The style of `material`; `None` for Air, Water and ids the library
    /// does not hold.
    pub fn style(&self, material: Material) -> Option<&MaterialStyle> {
        self.styles.get(&material.0)
    }

    fn style_mut(&mut self, material: Material) -> Result<&mut MaterialStyle, LibraryError> {
        self.styles
            .get_mut(&material.0)
            .ok_or(LibraryError::NotStyled { id: material.0 })
    }

    /// The styled materials and their styles, in id order.
    pub fn styles(&self) -> impl Iterator<Item = (Material, &MaterialStyle)> {
        self.styles.iter().map(|(&id, s)| (Material(id), s))
    }

    /// True when `material` is Air, Water or a solid the library holds:
    /// an id a tool may write.
    pub fn contains(&self, material: Material) -> bool {
        !material.is_solid() || self.styles.contains_key(&material.0)
    }

    /// Solid materials the library holds (9 to 254).
    pub fn solid_count(&self) -> usize {
        self.styles.len()
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
            .find(|(_, s)| same_name(&s.name, name))
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
        self.styles.values().any(|s| s.surface.is_some())
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
    /// built-in id (0 to 10, Air and Water's unused), one per added
    /// material, then one per top variant (each in id order).
    pub fn layer_count(&self) -> u32 {
        Material::COUNT as u32
            + self.added_count() as u32
            + self
                .styles
                .values()
                .filter(|s| s.top_albedo.is_some())
                .count() as u32
    }

    /// Materials added to the built-ins.
    pub fn added_count(&self) -> usize {
        self.styles.len() - (Material::COUNT - 2)
    }

    /// What each layer of the texture arrays holds, in layer order: the
    /// material and whether it is its top variant (`false`: its albedo and
    /// surface maps). Layers 0 and 1 (Air, Water) hold their built-in
    /// images and draw nothing.
    pub fn layers(&self) -> Vec<(Material, bool)> {
        let own = (0..Material::COUNT as u8)
            .map(Material)
            .chain(
                self.styles
                    .keys()
                    .map(|&id| Material(id))
                    .filter(|m| !m.is_built_in()),
            )
            .map(|m| (m, false));
        let tops = self
            .styles()
            .filter(|(_, s)| s.top_albedo.is_some())
            .map(|(m, _)| (m, true));
        own.chain(tops).collect()
    }

    /// The array layer `material`'s albedo (and surface maps) are in: a
    /// built-in's id, an added material's place after the built-ins (in id
    /// order); `None` for an id the library does not hold.
    pub fn albedo_layer(&self, material: Material) -> Option<u32> {
        if material.is_built_in() {
            return Some(u32::from(material.0));
        }
        self.styles.contains_key(&material.0).then(|| {
            let added_before = self.styles.range(Material::COUNT as u8..material.0).count();
            (Material::COUNT + added_before) as u32
        })
    }

    /// The array layer `material`'s upward-facing surfaces sample: its top
    /// variant's layer (after the per-material layers, in id order), else
    /// its own ([`MaterialLibrary::albedo_layer`]).
    pub fn top_layer(&self, material: Material) -> u32 {
        let mut next = (Material::COUNT + self.added_count()) as u32;
        for (m, s) in self.styles() {
            if s.top_albedo.is_some() {
                if m == material {
                    return next;
                }
                next += 1;
            }
        }
        self.albedo_layer(material)
            .unwrap_or(u32::from(Material::ROCK.0))
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

    /// Refuses a library past [`MAX_TEXTURE_LAYERS`] or the budget.
    fn check_limits(&self) -> Result<(), LibraryError> {
        let layers = self.layer_count();
        if layers > MAX_TEXTURE_LAYERS {
            return Err(LibraryError::TooManyLayers {
                layers,
                max: MAX_TEXTURE_LAYERS,
            });
        }
        self.check_budget(self.needed_gpu_bytes())
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
        self.style_mut(material)?;
        let name = check_name(name)?;
        let taken = self
            .styles()
            .find(|(m, s)| *m != material && same_name(&s.name, name))
            .map(|(_, s)| s.name.as_str())
            .or_else(|| {
                Material::ALL
                    .iter()
                    .find(|&&m| m != material && same_name(m.name(), name))
                    .map(|m| m.name())
            });
        if let Some(taken) = taken {
            return Err(LibraryError::DuplicateName {
                name: taken.to_string(),
            });
        }
        self.style_mut(material)?.name = name.to_string();
        Ok(())
    }

    /// Sets `material`'s tint.
    ///
    /// # Errors
    /// [`LibraryError::NotStyled`].
    pub fn set_tint(&mut self, material: Material, tint_srgb: [u8; 3]) -> Result<(), LibraryError> {
        self.style_mut(material)?.tint_srgb = tint_srgb;
        Ok(())
    }

    /// Sets the studs one tile of `material`'s texture covers.
    ///
    /// # Errors
    /// [`LibraryError::NotStyled`], [`LibraryError::BadTiling`].
    pub fn set_tiling(&mut self, material: Material, studs: u32) -> Result<(), LibraryError> {
        let style = self.style_mut(material)?;
        if !TILING_STUDS.contains(&studs) {
            return Err(LibraryError::BadTiling { studs });
        }
        style.tiling_studs = studs;
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
        self.style_mut(material)?;
        for texture in std::iter::once(&albedo).chain(surface.as_ref().map(|(t, _)| t)) {
            self.check_side(texture)?;
        }
        self.change_checked(material, |lib, style| {
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
            lib.entry(albedo.hash()).or_insert(albedo);
            if let Some((texture, _)) = surface {
                lib.entry(texture.hash()).or_insert(texture);
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
        let style = self.style_mut(material)?;
        let pct = u8::try_from(pct)
            .ok()
            .filter(|p| *p <= 100)
            .ok_or(LibraryError::BadSharpness { pct })?;
        if pct > 0 && !style.surface_maps.height {
            return Err(LibraryError::NoHeightMap { id: material.0 });
        }
        style.blend_sharpness_pct = pct;
        Ok(())
    }

    /// Flips the green of `material`'s normal map: the switch between a map
    /// written for OpenGL (green up) and one written for DirectX.
    ///
    /// # Errors
    /// [`LibraryError::NotStyled`], [`LibraryError::NoNormalMap`].
    pub fn flip_normal_green(&mut self, material: Material) -> Result<(), LibraryError> {
        let has_normal = self.style_mut(material)?.surface_maps.normal;
        let Some(surface) = self.surface(material).filter(|_| has_normal) else {
            return Err(LibraryError::NoNormalMap { id: material.0 });
        };
        let flipped = flip_normal_green(surface);
        self.change_checked(material, |textures, style| {
            style.surface = Some(flipped.hash());
            style.surface_maps.normal_directx = !style.surface_maps.normal_directx;
            textures.entry(flipped.hash()).or_insert(flipped);
        })
    }

    /// Removes `material`'s surface maps (drawn flat and fully rough).
    ///
    /// # Errors
    /// [`LibraryError::NotStyled`].
    pub fn clear_surface(&mut self, material: Material) -> Result<(), LibraryError> {
        let style = self.style_mut(material)?;
        style.surface = None;
        style.surface_maps = SurfaceMaps::default();
        style.blend_sharpness_pct = 0;
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
        self.style_mut(material)?;
        self.check_side(&texture)?;
        self.change_checked(material, |textures, style| {
            let hash = texture.hash();
            textures.entry(hash).or_insert(texture);
            *field(style) = Some(hash);
        })
    }

    /// Applies `change` to `material`'s style (which must exist) and the
    /// textures when the library it makes fits the layer limit and the
    /// budget; keeps this one otherwise.
    fn change_checked(
        &mut self,
        material: Material,
        change: impl FnOnce(&mut BTreeMap<u64, MaterialTexture>, &mut MaterialStyle),
    ) -> Result<(), LibraryError> {
        let mut next = self.clone();
        let style = next
            .styles
            .get_mut(&material.0)
            .ok_or(LibraryError::NotStyled { id: material.0 })?;
        change(&mut next.textures, style);
        next.drop_unused_textures();
        next.check_limits()?;
        *self = next;
        Ok(())
    }

    /// Draws `material` with its built-in texture again, without surface
    /// maps (they belonged to the imported set).
    ///
    /// # Errors
    /// [`LibraryError::NotStyled`].
    pub fn clear_albedo(&mut self, material: Material) -> Result<(), LibraryError> {
        let style = self.style_mut(material)?;
        if !material.is_built_in() {
            return Err(LibraryError::NoBuiltInLook { id: material.0 });
        }
        style.albedo = None;
        style.surface = None;
        style.surface_maps = SurfaceMaps::default();
        style.blend_sharpness_pct = 0;
        self.drop_unused_textures();
        Ok(())
    }

    /// Removes `material`'s top variant (its albedo shows everywhere).
    ///
    /// # Errors
    /// [`LibraryError::NotStyled`].
    pub fn clear_top_albedo(&mut self, material: Material) -> Result<(), LibraryError> {
        self.style_mut(material)?.top_albedo = None;
        self.drop_unused_textures();
        Ok(())
    }

    /// Gives `material` its built-in style back.
    ///
    /// # Errors
    /// [`LibraryError::NotStyled`].
    pub fn reset(&mut self, material: Material) -> Result<(), LibraryError> {
        let style = self.style_mut(material)?;
        if !material.is_built_in() {
            return Err(LibraryError::NoBuiltInLook { id: material.0 });
        }
        *style = MaterialStyle::built_in(material);
        self.drop_unused_textures();
        Ok(())
    }
}

#[path = "library_members.rs"]
mod members;

#[cfg(test)]
#[path = "library_tests.rs"]
mod tests;
