//! The materials of the smooth glTF export ([`super::gltf_export`]): which
//! glTF material each triangle is drawn with, the texture coordinates
//! those materials sample, and the glTF materials, textures and images
//! made from the world's [`MaterialLibrary`].
//!
//! # How the 4-way blend is represented
//! Every vertex keeps its exact blend: `COLOR_0` holds its 4 material
//! weights (`/255`) and `_MATERIAL_IDS` the 4 library ids they weigh, so a
//! custom shader can draw the blend as Strata does. For a renderer without
//! one, each chunk is split into one primitive per glTF material: a
//! triangle goes to its *dominant* material ([`dominant_material`]: the id
//! with the largest weight summed over its 3 vertices, the lowest id on a
//! tie), or to that material's top variant where the material has one and
//! the triangle faces up ([`faces_up`]). All of a chunk's primitives share
//! its vertex accessors.
//!
//! # Materials
//! One glTF material per (library material, top) pair some triangle is
//! drawn with, in id order, the top variant (named `NAME (top)`) after
//! its material; each has the extras `{"strata_material_id": ID,
//! "strata_top": BOOL}`. `pbrMetallicRoughness` has metallic 0; with an
//! imported albedo (or top texture) the base colour texture is it (a PNG,
//! RGBA8 sRGB, level 0) and the base colour factor the tint (linear);
//! without one, the factor is the material's flat colour (its built-in
//! colour times its tint, linear). A material with a normal map gets a
//! `normalTexture` (RGB PNG: x and y as packed, OpenGL convention as glTF
//! wants it, z rebuilt from them) and one with a roughness map a
//! `metallicRoughnessTexture` (green = roughness, blue = metallic 0, red
//! unused 255). Images are kept once per texture and use; one sampler
//! (repeat, linear mipmapped) serves them all.
//!
//! The root's extras `{"strata_materials": [...]}` list every id that has
//! weight at some vertex or draws some triangle, in id order, as
//! `{"id", "name", "material", "top_material"}` (the glTF material
//! indices, each absent when no triangle is drawn with it), so every
//! `_MATERIAL_IDS` value resolves to a name and, where there is one, a
//! material.
//!
//! # Texture coordinates
//! Strata projects textures triplanar; a glTF material needs `TEXCOORD_0`.
//! A vertex's coordinate ([`texcoord_studs`]) is its chunk-local position
//! (studs from the chunk's minimum corner) projected along its normal's
//! dominant axis as the renderer's projections are: `(z, −y)` on x, `(x, z)`
//! on y, `(x, −y)` on z. Every tiling divides the 128-stud chunk, so the
//! tiling is continuous across chunks. Each texture reference carries
//! `KHR_texture_transform` with `scale` = 1 / (tiling studs × the
//! coordinates' steps per stud), so one tile covers `tiling_studs`; the
//! extension is used, not required (without it a tile covers one stud or
//! one quantization step). Only primitives of a textured material list
//! `TEXCOORD_0`.

use std::collections::{BTreeMap, BTreeSet};

use glam::Vec3;
use gltf_json as json;
use json::validation::{Checked, USize64};

use super::glb::{Part, pad4};
use crate::mesh::ChunkMesh;
use crate::terrain::Material;
use crate::terrain::materials::MaterialLibrary;
use crate::terrain::materials::library::DEFAULT_TILING_STUDS;
use crate::terrain::materials::texture::MaterialTexture;

/// A primitive's vertex attributes by semantic.
pub(super) type Attributes = BTreeMap<Checked<json::mesh::Semantic>, json::Index<json::Accessor>>;

/// The vertex attributes every primitive of a chunk shares: `POSITION`,
/// `NORMAL`, `COLOR_0` (the 4 blend weights) and `_MATERIAL_IDS`.
pub(super) fn vertex_attributes(
    positions: json::Index<json::Accessor>,
    normals: json::Index<json::Accessor>,
    weights: json::Index<json::Accessor>,
    ids: json::Index<json::Accessor>,
) -> Attributes {
    use json::mesh::Semantic as S;
    BTreeMap::from([
        (Checked::Valid(S::Positions), positions),
        (Checked::Valid(S::Normals), normals),
        (Checked::Valid(S::Colors(0)), weights),
        (Checked::Valid(S::Extras("MATERIAL_IDS".to_string())), ids),
    ])
}

/// A triangle's glTF material before numbering: `2 × id + top`.
pub(super) type MaterialKey = u16;

/// The name of the texture transform extension.
const TEXTURE_TRANSFORM: &str = "KHR_texture_transform";

/// The library material whose weight, summed over a triangle's 3 vertices
/// (`ids` and `weights` of each, as in `_MATERIAL_IDS` and `COLOR_0`), is
/// the largest; on a tie the lowest id.
pub fn dominant_material(ids: [[u8; 4]; 3], weights: [[u8; 4]; 3]) -> Material {
    // Only the 12 ids listed can have weight: sum each over the 12 slots
    // (no per-triangle table of every id on this per-triangle path).
    let slots = || ids.iter().flatten().zip(weights.iter().flatten());
    let sum = |id: u8| -> u32 {
        slots()
            .filter(|(i, _)| **i == id)
            .map(|(_, w)| u32::from(*w))
            .sum()
    };
    let mut best = ids[0][0];
    let mut best_sum = sum(best);
    for &id in ids.iter().flatten() {
        let s = sum(id);
        if s > best_sum || (s == best_sum && s > 0 && id < best) {
            best = id;
            best_sum = s;
        }
    }
    Material(best)
}

/// True when the triangle `a, b, c` (counter-clockwise seen from outside)
/// faces up: its face normal's largest component is `+y`, so the
/// renderer's top projection (which shows a top variant) dominates it.
pub fn faces_up(a: Vec3, b: Vec3, c: Vec3) -> bool {
    let n = (b - a).cross(c - a);
    n.y > 0.0 && n.y >= n.x.abs() && n.y >= n.z.abs()
}

/// The dominant axis of a normal: 0 (x), 1 (y) or 2 (z); y wins ties.
fn dominant_axis(normal: Vec3) -> usize {
    let a = normal.abs();
    if a.y >= a.x && a.y >= a.z {
        1
    } else if a.x >= a.z {
        0
    } else {
        2
    }
}

/// A vertex's `TEXCOORD_0` in studs: its chunk-local position `local`
/// projected along `normal`'s dominant axis, `(z, −y)` on x, `(x, z)` on y
/// (y wins ties), `(x, −y)` on z (the renderer's triplanar projections).
pub fn texcoord_studs(local: Vec3, normal: Vec3) -> [f32; 2] {
    match dominant_axis(normal) {
        0 => [local.z, -local.y],
        1 => [local.x, local.z],
        _ => [local.x, -local.y],
    }
}

/// [`texcoord_studs`] of a quantized position (`q` = studs × 64): the same
/// projection in the same quantization steps.
pub(super) fn quantized_texcoord(q: [i16; 3], normal: Vec3) -> [i16; 2] {
    match dominant_axis(normal) {
        0 => [q[2], q[1].saturating_neg()],
        1 => [q[0], q[2]],
        _ => [q[0], q[1].saturating_neg()],
    }
}

/// What decides each triangle's glTF material: which library materials
/// have a top variant and which are textured.
pub(super) struct TriangleMaterials {
    has_top: [bool; 256],
    textured: Vec<bool>,
}

impl TriangleMaterials {
    /// The classification under `library`.
    pub fn new(library: &MaterialLibrary) -> TriangleMaterials {
        let mut has_top = [false; 256];
        let mut textured = vec![false; 512];
        for (m, style) in library.styles() {
            let id = usize::from(m.0);
            let maps = style.surface_maps;
            let surface = library.surface(m).is_some() && (maps.normal || maps.roughness);
            has_top[id] = library.top_albedo(m).is_some();
            textured[2 * id] = library.albedo(m).is_some() || surface;
            textured[2 * id + 1] = has_top[id];
        }
        TriangleMaterials { has_top, textured }
    }

    /// The key of triangle `t` (chunk-local vertex indices) of `mesh`.
    pub fn key(&self, mesh: &ChunkMesh, t: [u32; 3]) -> MaterialKey {
        let v = t.map(|i| i as usize);
        let m = dominant_material(
            v.map(|i| mesh.material_ids[i]),
            v.map(|i| mesh.material_weights[i]),
        );
        let top = self.has_top[usize::from(m.0)]
            && faces_up(
                mesh.positions[v[0]],
                mesh.positions[v[1]],
                mesh.positions[v[2]],
            );
        2 * MaterialKey::from(m.0) + MaterialKey::from(top)
    }

    /// True when the material of `key` samples a texture (its primitives
    /// need `TEXCOORD_0`).
    pub fn textured(&self, key: MaterialKey) -> bool {
        self.textured[usize::from(key)]
    }
}

/// A run of one material's triangles in a chunk's index list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Group {
    /// Its material.
    pub key: MaterialKey,
    /// Its first index in the chunk's list.
    pub first: usize,
    /// Its indices (3 per triangle).
    pub count: usize,
}

/// `indices` (whole triangles) grouped by `key_of` each triangle, in rising
/// key order, each group's triangles in their order in `indices`.
pub(super) fn group_triangles(
    indices: &[u32],
    key_of: impl Fn([u32; 3]) -> MaterialKey,
) -> (Vec<u32>, Vec<Group>) {
    let mut triangles: Vec<(MaterialKey, [u32; 3])> = indices
        .chunks_exact(3)
        .map(|t| {
            let t = [t[0], t[1], t[2]];
            (key_of(t), t)
        })
        .collect();
    triangles.sort_by_key(|&(key, _)| key);
    let mut groups: Vec<Group> = Vec::new();
    for (i, &(key, _)) in triangles.iter().enumerate() {
        match groups.last_mut() {
            Some(g) if g.key == key => g.count += 3,
            _ => groups.push(Group {
                key,
                first: 3 * i,
                count: 3,
            }),
        }
    }
    (triangles.iter().flat_map(|(_, t)| *t).collect(), groups)
}

/// The ids with weight at some surface vertex of `parts`.
pub(super) fn blended_ids(parts: &[Part]) -> BTreeSet<u8> {
    let mut seen = [false; 256];
    for part in parts {
        let mesh = &part.mesh;
        for (ids, weights) in mesh.material_ids[..part.vertices]
            .iter()
            .zip(&mesh.material_weights[..part.vertices])
        {
            for (&id, &w) in ids.iter().zip(weights) {
                seen[usize::from(id)] |= w > 0;
            }
        }
    }
    (0..=255u8).filter(|&id| seen[usize::from(id)]).collect()
}

/// What one image holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum ImageUse {
    /// An albedo as stored (RGBA8 sRGB).
    Albedo,
    /// A packed surface texture's normal (RGB: x, y, rebuilt z).
    Normal,
    /// A packed surface texture's roughness (RGB: 255, roughness, 0).
    Roughness,
}

/// One glTF material to write.
struct MaterialSpec {
    name: String,
    id: u8,
    top: bool,
    /// Studs one texture tile covers.
    tiling_studs: u32,
    /// Linear RGBA.
    base_color: [f32; 4],
    base_image: Option<usize>,
    normal_image: Option<usize>,
    roughness_image: Option<usize>,
}

/// The glTF materials of an export and their PNG images, which lie at the
/// end of the binary chunk.
pub(super) struct GlbMaterials {
    keys: Vec<MaterialKey>,
    specs: Vec<MaterialSpec>,
    /// PNG bytes and names, in image order.
    images: Vec<(String, Vec<u8>)>,
    /// Ids with weight somewhere, for the root's extras.
    blended: BTreeSet<u8>,
    /// Texture coordinate steps per stud (1 plain, 64 quantized).
    uv_steps_per_stud: f32,
}

/// An sRGB byte as a linear value in 0..=1.
fn srgb_to_linear(c: u8) -> f32 {
    let c = f32::from(c) / 255.0;
    if c <= 0.040_45 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// `texels` (RGBA8 or RGB8 by `rgba`, `side`² pixels) as PNG bytes.
fn encode_png(texels: &[u8], side: u32, rgba: bool) -> Result<Vec<u8>, String> {
    let mut png = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::png::PngEncoder::new(&mut png),
        texels,
        side,
        side,
        if rgba {
            image::ExtendedColorType::Rgba8
        } else {
            image::ExtendedColorType::Rgb8
        },
    )
    .map_err(|e| format!("a material texture could not be encoded as PNG: {e}"))?;
    Ok(png)
}

/// The PNG of `texture` made for `usage`.
fn image_png(texture: &MaterialTexture, usage: ImageUse) -> Result<Vec<u8>, String> {
    let side = texture.side_px();
    let texels = texture.rgba8().chunks_exact(4);
    match usage {
        ImageUse::Albedo => encode_png(texture.rgba8(), side, true),
        ImageUse::Normal => {
            let rgb: Vec<u8> = texels
                .flat_map(|t| {
                    let x = f32::from(t[0]) / 255.0 * 2.0 - 1.0;
                    let y = f32::from(t[1]) / 255.0 * 2.0 - 1.0;
                    let z = (1.0 - x * x - y * y).max(0.0).sqrt();
                    [t[0], t[1], ((z * 0.5 + 0.5) * 255.0).round() as u8]
                })
                .collect();
            encode_png(&rgb, side, false)
        }
        ImageUse::Roughness => {
            let rgb: Vec<u8> = texels.flat_map(|t| [255, t[2], 0]).collect();
            encode_png(&rgb, side, false)
        }
    }
}

impl GlbMaterials {
    /// The materials of the triangle keys `used`, from `library`, with
    /// `blended` (the ids with weight at some vertex) for the root's
    /// extras and texture coordinates stored in `uv_steps_per_stud` steps.
    ///
    /// # Errors
    /// The message of a texture PNG could not be encoded.
    pub fn new(
        library: &MaterialLibrary,
        used: &BTreeSet<MaterialKey>,
        blended: BTreeSet<u8>,
        uv_steps_per_stud: f32,
    ) -> Result<GlbMaterials, String> {
        let mut image_of: BTreeMap<(u64, ImageUse), usize> = BTreeMap::new();
        let mut images = Vec::new();
        let mut image = |texture: Option<&MaterialTexture>, usage: ImageUse, name: &str| {
            let Some(texture) = texture else {
                return Ok::<_, String>(None);
            };
            if let Some(&i) = image_of.get(&(texture.hash(), usage)) {
                return Ok(Some(i));
            }
            images.push((name.to_string(), image_png(texture, usage)?));
            image_of.insert((texture.hash(), usage), images.len() - 1);
            Ok(Some(images.len() - 1))
        };
        let mut specs = Vec::with_capacity(used.len());
        for &key in used {
            let (m, top) = (Material((key / 2) as u8), key % 2 == 1);
            let style = library.style(m);
            let name = library.name(m);
            let albedo = if top {
                library.top_albedo(m)
            } else {
                library.albedo(m)
            };
            let tint = style.map_or([255; 3], |s| s.tint_srgb);
            let srgb = match (albedo, style.is_some_and(|s| s.top_albedo.is_some())) {
                (Some(_), _) => tint,
                // The built-in colour, tinted (the flat colour would be the
                // top variant's).
                (None, true) => {
                    let base = m.base_color_srgb();
                    std::array::from_fn(|k| {
                        ((u16::from(base[k]) * u16::from(tint[k]) + 127) / 255) as u8
                    })
                }
                (None, false) => library.flat_colour_srgb(m),
            };
            let maps = style.map(|s| s.surface_maps).unwrap_or_default();
            let surface = library.surface(m);
            let label = if top {
                format!("{name} (top)")
            } else {
                name.to_string()
            };
            specs.push(MaterialSpec {
                base_image: image(albedo, ImageUse::Albedo, &format!("{label} albedo"))?,
                normal_image: image(
                    surface.filter(|_| maps.normal),
                    ImageUse::Normal,
                    &format!("{name} normal"),
                )?,
                roughness_image: image(
                    surface.filter(|_| maps.roughness),
                    ImageUse::Roughness,
                    &format!("{name} roughness"),
                )?,
                base_color: [
                    srgb_to_linear(srgb[0]),
                    srgb_to_linear(srgb[1]),
                    srgb_to_linear(srgb[2]),
                    1.0,
                ],
                tiling_studs: style.map_or(DEFAULT_TILING_STUDS, |s| s.tiling_studs),
                name: label,
                id: m.0,
                top,
            });
        }
        Ok(GlbMaterials {
            keys: used.iter().copied().collect(),
            specs,
            images,
            blended,
            uv_steps_per_stud,
        })
    }

    /// The glTF material of `key` (materials are the first pushed, in key
    /// order).
    pub fn material(&self, key: MaterialKey) -> json::Index<json::Material> {
        // Every key drawn is in `keys`: they were collected from the same
        // triangles.
        json::Index::new(self.keys.binary_search(&key).unwrap_or(0) as u32)
    }

    /// True when the material of `key` has a texture (its primitives
    /// list `TEXCOORD_0`); [`TriangleMaterials::textured`] says the same.
    pub fn textured(&self, key: MaterialKey) -> bool {
        let spec = &self.specs[self.material(key).value()];
        spec.base_image.is_some() || spec.normal_image.is_some() || spec.roughness_image.is_some()
    }

    /// A chunk's primitive drawing `indices` with the glTF material of
    /// `key`: the chunk's shared vertex `attributes` ([`vertex_attributes`]),
    /// and `texcoords` as `TEXCOORD_0` when that material is textured.
    pub fn primitive(
        &self,
        key: MaterialKey,
        attributes: &Attributes,
        texcoords: Option<json::Index<json::Accessor>>,
        indices: json::Index<json::Accessor>,
    ) -> json::mesh::Primitive {
        let mut attributes = attributes.clone();
        if let (Some(t), true) = (texcoords, self.textured(key)) {
            attributes.insert(Checked::Valid(json::mesh::Semantic::TexCoords(0)), t);
        }
        json::mesh::Primitive {
            attributes,
            extensions: None,
            extras: None,
            indices: Some(indices),
            material: Some(self.material(key)),
            mode: Checked::Valid(json::mesh::Mode::Triangles),
            targets: None,
        }
    }

    /// glTF materials written.
    pub fn count(&self) -> usize {
        self.specs.len()
    }

    /// Bytes the images take at the end of the binary chunk (each padded
    /// to 4).
    pub fn bin_len(&self) -> u64 {
        self.images
            .iter()
            .map(|(_, png)| pad4(png.len() as u64))
            .sum()
    }

    /// Writes the images' bytes, each padded to 4, with `write`.
    ///
    /// # Errors
    /// The first error of `write`.
    pub fn write_images<E>(&self, mut write: impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), E> {
        for (_, png) in &self.images {
            write(png)?;
            let end = png.len() as u64;
            write(&[0u8; 3][..(pad4(end) - end) as usize])?;
        }
        Ok(())
    }

    /// Adds the images (views on `buffer` from `offset`), their sampler
    /// and textures, the materials (the root must have none yet), the
    /// root's extras and `KHR_texture_transform` in `extensionsUsed`.
    pub fn push(&self, root: &mut json::Root, buffer: json::Index<json::Buffer>, offset: u64) {
        debug_assert!(root.materials.is_empty());
        let mut at = offset;
        let mut textures = Vec::with_capacity(self.images.len());
        let sampler = (!self.images.is_empty()).then(|| {
            root.push(json::texture::Sampler {
                mag_filter: Some(Checked::Valid(json::texture::MagFilter::Linear)),
                min_filter: Some(Checked::Valid(json::texture::MinFilter::LinearMipmapLinear)),
                wrap_s: Checked::Valid(json::texture::WrappingMode::Repeat),
                wrap_t: Checked::Valid(json::texture::WrappingMode::Repeat),
                ..json::texture::Sampler::default()
            })
        });
        for (name, png) in &self.images {
            let view = root.push(json::buffer::View {
                buffer,
                byte_length: USize64(png.len() as u64),
                byte_offset: Some(USize64(at)),
                byte_stride: None,
                name: Some(name.clone()),
                target: None,
                extensions: None,
                extras: None,
            });
            at = pad4(at + png.len() as u64);
            let image = root.push(json::Image {
                buffer_view: Some(view),
                mime_type: Some(json::image::MimeType("image/png".to_string())),
                name: Some(name.clone()),
                uri: None,
                extensions: None,
                extras: None,
            });
            textures.push(root.push(json::Texture {
                name: Some(name.clone()),
                sampler,
                source: image,
                extensions: None,
                extras: None,
            }));
        }
        for (spec, &key) in self.specs.iter().zip(&self.keys) {
            let material = self.material_json(spec, &textures, spec.tiling_studs as f32);
            let index = root.push(material);
            debug_assert_eq!(index, self.material(key));
        }
        if !self.images.is_empty() {
            root.extensions_used.push(TEXTURE_TRANSFORM.to_string());
        }
        root.extras = raw_json(&self.root_extras());
    }

    /// The root's extras: every id with weight or triangles, its name and
    /// glTF materials.
    fn root_extras(&self) -> serde_json::Value {
        let mut entries: BTreeMap<u8, serde_json::Map<String, serde_json::Value>> = self
            .blended
            .iter()
            .map(|&id| (id, serde_json::Map::new()))
            .collect();
        for (i, spec) in self.specs.iter().enumerate() {
            let entry = entries.entry(spec.id).or_default();
            let field = if spec.top { "top_material" } else { "material" };
            entry.insert(field.to_string(), i.into());
            if !spec.top {
                entry.insert("name".to_string(), spec.name.clone().into());
            }
        }
        let list: Vec<serde_json::Value> = entries
            .into_iter()
            .map(|(id, mut entry)| {
                entry.insert("id".to_string(), id.into());
                serde_json::Value::Object(entry)
            })
            .collect();
        serde_json::json!({ "strata_materials": list })
    }

    /// One glTF material; its textures' tiles cover `tiling` studs.
    fn material_json(
        &self,
        spec: &MaterialSpec,
        textures: &[json::Index<json::Texture>],
        tiling: f32,
    ) -> json::Material {
        let scale = 1.0 / (tiling * self.uv_steps_per_stud);
        let transform = || {
            let mut others = serde_json::Map::new();
            others.insert(
                TEXTURE_TRANSFORM.to_string(),
                serde_json::json!({ "scale": [scale, scale] }),
            );
            others
        };
        let info = |image: Option<usize>| {
            image.map(|i| json::texture::Info {
                index: textures[i],
                tex_coord: 0,
                extensions: Some(json::extensions::texture::Info {
                    others: transform(),
                }),
                extras: None,
            })
        };
        json::Material {
            name: Some(spec.name.clone()),
            pbr_metallic_roughness: json::material::PbrMetallicRoughness {
                base_color_factor: json::material::PbrBaseColorFactor(spec.base_color),
                base_color_texture: info(spec.base_image),
                metallic_factor: json::material::StrengthFactor(0.0),
                roughness_factor: json::material::StrengthFactor(1.0),
                metallic_roughness_texture: info(spec.roughness_image),
                ..json::material::PbrMetallicRoughness::default()
            },
            normal_texture: spec.normal_image.map(|i| json::material::NormalTexture {
                index: textures[i],
                scale: 1.0,
                tex_coord: 0,
                extensions: Some(json::extensions::material::NormalTexture {
                    others: transform(),
                }),
                extras: None,
            }),
            extras: raw_json(&serde_json::json!({
                "strata_material_id": spec.id,
                "strata_top": spec.top,
            })),
            ..json::Material::default()
        }
    }
}

/// `value` as glTF extras.
fn raw_json(value: &serde_json::Value) -> json::Extras {
    serde_json::value::to_raw_value(value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dominant_material_sums_weights_over_the_triangle_lowest_id_on_a_tie() {
        let ids = [[3, 11, 3, 3], [3, 11, 3, 3], [11, 12, 11, 11]];
        // Rock 200 + 100 = 300; 11: 55 + 155 + 128 = 338; 12: 127.
        let weights = [[200, 55, 0, 0], [100, 155, 0, 0], [128, 127, 0, 0]];
        assert_eq!(dominant_material(ids, weights), Material(11));
        // 3, 5 and 11 all sum to 255: the lowest id wins.
        let ids = [[3, 11, 3, 3], [3, 11, 3, 3], [5, 5, 5, 5]];
        let weights = [[100, 155, 0, 0], [155, 100, 0, 0], [255, 0, 0, 0]];
        assert_eq!(dominant_material(ids, weights), Material(3));
        // Unused slots repeat an id with weight 0 and count nothing.
        let ids = [[12, 4, 4, 4], [12, 4, 4, 4], [12, 4, 4, 4]];
        let weights = [[0, 255, 0, 0], [0, 255, 0, 0], [0, 255, 0, 0]];
        assert_eq!(dominant_material(ids, weights), Material(4));
    }

    #[test]
    fn tops_face_up_and_texture_coordinates_follow_the_dominant_axis() {
        let (a, b, c) = (
            Vec3::ZERO,
            Vec3::new(0.0, 0.0, 1.0),
            Vec3::new(1.0, 0.0, 0.0),
        );
        assert!(faces_up(a, b, c));
        assert!(!faces_up(a, c, b));
        // A 30° slope is a top, a 60° one (steeper than 45°) a side.
        let slope = |deg: f32| {
            let r = deg.to_radians();
            faces_up(
                a,
                Vec3::new(0.0, 0.0, 1.0),
                Vec3::new(r.cos(), r.sin(), 0.0),
            )
        };
        assert!(!slope(60.0));
        assert!(slope(30.0));
        let p = Vec3::new(1.0, 2.0, 3.0);
        assert_eq!(texcoord_studs(p, Vec3::Y), [1.0, 3.0]);
        assert_eq!(texcoord_studs(p, Vec3::new(-0.9, 0.3, 0.1)), [3.0, -2.0]);
        assert_eq!(texcoord_studs(p, Vec3::new(0.1, 0.3, 0.9)), [1.0, -2.0]);
        assert_eq!(quantized_texcoord([64, 128, 192], -Vec3::X), [192, -128]);
    }
}
