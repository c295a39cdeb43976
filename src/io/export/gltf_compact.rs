//! The compact encodings of the smooth glTF export ([`GlbEncoding`]):
//! quantized vertex attributes (`KHR_mesh_quantization`), optionally
//! compressed with `EXT_meshopt_compression` (the default of
//! `--export-glb`).
//!
//! # Layout
//! One node per chunk with surface (named `chunk X Y Z`, in (z, y, x)
//! chunk order) under one root node `terrain`. Each chunk node holds one
//! mesh of one triangle-list primitive per glTF material its triangles
//! are drawn with (the materials, their textures and the blend as in the
//! plain layout; see [`super::gltf_materials`]), all sharing the chunk's
//! vertex accessors; its `translation` is the chunk's
//! minimum corner in world studs and its `scale` 1/64 on every axis, so a
//! vertex's world position is `translation + q / 64`:
//!
//! - `POSITION` (`i16` VEC3, not normalized, 8-byte stride): the
//!   chunk-local position in studs × 64, rounded to the nearest integer.
//!   Each coordinate of the dequantized position is within
//!   [`POSITION_ERROR_STUDS`] (1/128 stud, 1/512 of a 4-stud cell) of the
//!   mesher's position. `min`/`max` are in these integer units. A vertex
//!   more than [`MAX_LOCAL_STUDS`] from its chunk's origin is refused
//!   (Surface Nets vertices stay within −4 to 132 studs).
//! - `NORMAL` (normalized `i8` VEC3, 4-byte stride): the unit normal × 127,
//!   rounded toward unit length (within 1° of the mesher's normal); with
//!   meshopt, the filter's 8-bit octahedral encoding instead, which a
//!   decoder turns back into normalized `i8` xyz (within about 1.5°).
//! - `COLOR_0` (normalized `u8` VEC4) and `_MATERIAL_IDS` (`u8` VEC4):
//!   the material weights and ids, byte for byte as in the plain export.
//! - `TEXCOORD_0` (`i16` VEC2, not normalized, 4-byte stride), only in
//!   the primitives of a textured material: the plain export's texture
//!   coordinates in the positions' steps (studs × 64, the quantized
//!   position's components, so exact); the materials'
//!   `KHR_texture_transform` scale includes the 1/64.
//!
//! Indices are `u16` for a chunk of fewer than 65,536 vertices and
//! `u32` otherwise (two views; the `u32` one only when used). Each chunk's
//! triangles are reordered for the vertex cache
//! (`meshopt_optimizeVertexCache`), then grouped by material (one index
//! accessor per primitive), and its vertices renumbered in the
//! order the triangles first use them (any vertex no triangle uses comes
//! last): the same vertices and the same triangles, each with its winding,
//! as the plain export, in another order.
//!
//! # Compression
//! With [`GlbEncoding::Meshopt`] each buffer view is compressed on its own
//! (vertex views in `ATTRIBUTES` mode, bitstream version 0, normals with
//! the `OCTAHEDRAL` filter; index views in `TRIANGLES` mode). The
//! compressed bytes fill the GLB binary chunk (buffer 0); the views'
//! uncompressed ranges lie in buffer 1, a placeholder without data marked
//! `fallback`. With no uncompressed copy in the file,
//! `EXT_meshopt_compression` is in `extensionsRequired`, beside
//! `KHR_mesh_quantization` (required by the integer positions). The
//! material images are never compressed: they follow the geometry in
//! buffer 0.

use std::io::Write;
use std::path::Path;

use gltf_json as json;
use json::validation::{Checked, USize64};
use rayon::prelude::*;

use super::glb::{CHUNK_BIN, Part, glb_header, json_chunk, pad4};
use super::gltf_materials::{GlbMaterials, MaterialKey, TriangleMaterials, vertex_attributes};
pub use super::gltf_quantize::{MAX_LOCAL_STUDS, POSITION_ERROR_STUDS, POSITION_STEPS_PER_STUD};
use super::gltf_quantize::{Reordered, VertexStream, position_bounds, vertex_bytes};
use crate::io::ExportError;

/// How the smooth glTF export stores its geometry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GlbEncoding {
    /// `f32` world positions and normals and `u32` indices in one mesh of
    /// one primitive per chunk, uncompressed: readable by any glTF 2.0
    /// importer (`--glb-plain`).
    Plain,
    /// One node per chunk with `KHR_mesh_quantization` attributes (`i16`
    /// positions, `i8` normals) and `u16` indices, uncompressed.
    Quantized,
    /// [`GlbEncoding::Quantized`], every buffer view compressed with
    /// `EXT_meshopt_compression` (the default).
    #[default]
    Meshopt,
}

impl GlbEncoding {
    /// How the encoding is named in messages.
    pub const fn label(self) -> &'static str {
        match self {
            GlbEncoding::Plain => "plain",
            GlbEncoding::Quantized => "quantized",
            GlbEncoding::Meshopt => "quantized + meshopt",
        }
    }
}

/// The name of the compression extension.
const MESHOPT: &str = "EXT_meshopt_compression";
/// The name of the quantization extension.
const QUANTIZATION: &str = "KHR_mesh_quantization";

/// A primitive's index width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IndexWidth {
    U16,
    U32,
}

impl IndexWidth {
    /// `u16` below 65,536 vertices (so no index is 65,535, which glTF
    /// reserves), else `u32`.
    fn of(vertices: usize) -> IndexWidth {
        if vertices < 65_536 {
            IndexWidth::U16
        } else {
            IndexWidth::U32
        }
    }

    const fn bytes(self) -> usize {
        match self {
            IndexWidth::U16 => 2,
            IndexWidth::U32 => 4,
        }
    }
}

/// One buffer view of the compact layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stream {
    Vertex(VertexStream),
    Index(IndexWidth),
}

impl Stream {
    /// Every view, in the order of the binary chunk.
    const ALL: [Stream; 7] = [
        Stream::Vertex(VertexStream::Positions),
        Stream::Vertex(VertexStream::Normals),
        Stream::Vertex(VertexStream::Weights),
        Stream::Vertex(VertexStream::Ids),
        Stream::Vertex(VertexStream::Texcoords),
        Stream::Index(IndexWidth::U16),
        Stream::Index(IndexWidth::U32),
    ];

    /// Bytes per element.
    fn stride(self) -> usize {
        match self {
            Stream::Vertex(v) => v.stride(),
            Stream::Index(w) => w.bytes(),
        }
    }

    /// Elements of one chunk in this view.
    fn count(self, reordered: &Reordered) -> usize {
        match self {
            Stream::Vertex(VertexStream::Texcoords) if !reordered.textured => 0,
            Stream::Vertex(_) => reordered.order.len(),
            Stream::Index(w) if IndexWidth::of(reordered.order.len()) == w => {
                reordered.indices.len()
            }
            Stream::Index(_) => 0,
        }
    }

    /// The uncompressed bytes of one chunk in this view.
    fn bytes(self, part: &Part, reordered: &Reordered, encoding: GlbEncoding) -> Vec<u8> {
        match self {
            // A chunk without texture coordinates has none in their view.
            _ if self.count(reordered) == 0 => Vec::new(),
            Stream::Vertex(v) => vertex_bytes(v, part, reordered, encoding == GlbEncoding::Meshopt),
            Stream::Index(IndexWidth::U16) => reordered
                .indices
                .iter()
                .flat_map(|&i| (i as u16).to_le_bytes())
                .collect(),
            Stream::Index(IndexWidth::U32) => reordered
                .indices
                .iter()
                .flat_map(|&i| i.to_le_bytes())
                .collect(),
        }
    }
}

/// One non-empty view: where its uncompressed bytes lie (buffer 0, or the
/// fallback buffer 1 with meshopt) and, with meshopt, its compressed bytes
/// (in buffer 0 at `packed_offset`).
struct View {
    stream: Stream,
    count: u64,
    offset: u64,
    packed: Option<(u64, Vec<u8>)>,
}

impl View {
    fn len(&self) -> u64 {
        self.count * self.stream.stride() as u64
    }
}

/// The chunks to write, reordered, with their position bounds.
pub(super) struct CompactParts<'a> {
    parts: &'a [Part],
    reordered: Vec<Reordered>,
    bounds: Vec<([i16; 3], [i16; 3])>,
}

impl CompactParts<'_> {
    /// Reorders every part (in parallel) and finds its position bounds.
    ///
    /// # Errors
    /// [`ExportError::TooLarge`] naming a chunk with a vertex beyond
    /// [`MAX_LOCAL_STUDS`] of its origin; [`ExportError::Write`] naming a
    /// chunk whose surface indices are not whole triangles of its surface
    /// vertices (meshoptimizer would abort on them).
    pub fn new<'a>(
        parts: &'a [Part],
        classes: &TriangleMaterials,
        path: &Path,
    ) -> Result<CompactParts<'a>, ExportError> {
        if let Some(p) = parts.iter().find(|p| {
            !p.indices().len().is_multiple_of(3)
                || p.indices().iter().any(|&i| i as usize >= p.vertices)
        }) {
            return Err(ExportError::write(
                path,
                format!(
                    "chunk {}'s mesh has indices that are not triangles of its {} surface vertices",
                    p.coord.0, p.vertices
                ),
            ));
        }
        let bounds = parts
            .iter()
            .map(|p| {
                position_bounds(p).map_err(|local| ExportError::TooLarge {
                    path: path.to_path_buf(),
                    message: format!(
                        "chunk {} has a vertex at {local} studs from its origin, beyond the \
                         ±{MAX_LOCAL_STUDS} studs quantized positions hold; export with --glb-plain",
                        p.coord.0
                    ),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let reordered = parts
            .par_iter()
            .map(|p| Reordered::of(p, classes))
            .collect();
        Ok(CompactParts {
            parts,
            reordered,
            bounds,
        })
    }

    /// The materials the triangles are drawn with.
    pub fn used_keys(&self) -> std::collections::BTreeSet<MaterialKey> {
        self.reordered
            .iter()
            .flat_map(|r| r.groups.iter().map(|g| g.key))
            .collect()
    }

    /// Primitives: one per chunk and material.
    pub fn primitive_count(&self) -> usize {
        self.reordered.iter().map(|r| r.groups.len()).sum()
    }
}

/// Lays out the views of `compact` (compressing them with meshopt) and
/// returns them with the total uncompressed length.
fn layout(compact: &CompactParts, encoding: GlbEncoding) -> Result<(Vec<View>, u64), String> {
    let mut views = Vec::new();
    let (mut offset, mut packed_offset) = (0u64, 0u64);
    for stream in Stream::ALL {
        let count: usize = compact.reordered.iter().map(|r| stream.count(r)).sum();
        if count == 0 {
            continue;
        }
        let packed = if encoding == GlbEncoding::Meshopt {
            let bytes = compress(stream, compact)?;
            let at = packed_offset;
            packed_offset = pad4(at + bytes.len() as u64);
            Some((at, bytes))
        } else {
            None
        };
        let view = View {
            stream,
            count: count as u64,
            offset,
            packed,
        };
        offset = pad4(offset + view.len());
        views.push(view);
    }
    Ok((views, offset))
}

/// The meshopt encoding of `stream` over every part.
fn compress(stream: Stream, compact: &CompactParts) -> Result<Vec<u8>, String> {
    let codec = |e: meshopt::Error| format!("meshopt could not encode the {stream:?} view: {e}");
    match stream {
        Stream::Vertex(v) => {
            let mut raw = Vec::new();
            for (part, reordered) in compact.parts.iter().zip(&compact.reordered) {
                raw.extend(stream.bytes(part, reordered, GlbEncoding::Meshopt));
            }
            // Version 0: the bitstream `EXT_meshopt_compression` specifies.
            let encoded = match v.stride() {
                8 => meshopt::encode_vertex_buffer_level(raw.as_chunks::<8>().0, 2, Some(0)),
                _ => meshopt::encode_vertex_buffer_level(raw.as_chunks::<4>().0, 2, Some(0)),
            };
            encoded.map_err(codec)
        }
        Stream::Index(_) => {
            let mut indices = Vec::new();
            let mut vertices = 0;
            for r in &compact.reordered {
                if stream.count(r) > 0 {
                    indices.extend_from_slice(&r.indices);
                    vertices = vertices.max(r.order.len());
                }
            }
            meshopt::encode_index_buffer(&indices, vertices).map_err(codec)
        }
    }
}

/// The JSON chunk and the binary chunk's length of the compact GLB (the
/// geometry, then the images of `materials`), and the views (with
/// meshopt, their compressed bytes).
pub(super) fn compact_glb(
    compact: &CompactParts,
    encoding: GlbEncoding,
    materials: &GlbMaterials,
) -> Result<(Vec<u8>, u64, CompactViews), String> {
    let (views, raw_len) = layout(compact, encoding)?;
    let image_offset = match views.last() {
        Some(View {
            packed: Some((at, bytes)),
            ..
        }) => pad4(at + bytes.len() as u64),
        _ => raw_len,
    };
    let bin_len = image_offset + materials.bin_len();
    let mut root = gltf_root(compact, &views, encoding, raw_len, bin_len, materials);
    materials.push(&mut root, json::Index::new(0), image_offset);
    Ok((json_chunk(&root)?, bin_len, CompactViews(views)))
}

/// The views [`compact_glb`] laid out, for [`write_compact_glb`].
pub(super) struct CompactViews(Vec<View>);

/// The glTF JSON of the compact layout.
fn gltf_root(
    compact: &CompactParts,
    views: &[View],
    encoding: GlbEncoding,
    raw_len: u64,
    bin_len: u64,
    materials: &GlbMaterials,
) -> json::Root {
    let meshopt = encoding == GlbEncoding::Meshopt;
    let mut extensions = vec![QUANTIZATION.to_string()];
    if meshopt {
        extensions.push(MESHOPT.to_string());
    }
    let mut root = json::Root {
        asset: json::Asset {
            generator: Some(format!("Strata {}", env!("CARGO_PKG_VERSION"))),
            ..json::Asset::default()
        },
        extensions_used: extensions.clone(),
        extensions_required: extensions,
        ..json::Root::default()
    };
    root.push(json::Buffer {
        byte_length: USize64(bin_len),
        name: None,
        uri: None,
        extensions: None,
        extras: None,
    });
    let data_buffer = if meshopt {
        root.push(json::Buffer {
            byte_length: USize64(raw_len),
            name: Some("uncompressed views (not stored)".to_string()),
            uri: None,
            extensions: Some(json::extensions::buffer::Buffer {
                others: meshopt_object(serde_json::json!({ "fallback": true })),
            }),
            extras: None,
        })
    } else {
        json::Index::new(0)
    };
    let mut view_of = [None; Stream::ALL.len()];
    for v in views {
        view_of[stream_rank(v.stream)] = Some(push_view(&mut root, v, data_buffer));
    }
    // The next element of each view.
    let mut next = [0u64; Stream::ALL.len()];
    let mut children = Vec::with_capacity(compact.parts.len());
    for ((part, reordered), bounds) in compact
        .parts
        .iter()
        .zip(&compact.reordered)
        .zip(&compact.bounds)
    {
        let slots = Stream::ALL.map(|stream| {
            let rank = stream_rank(stream);
            let count = stream.count(reordered) as u64;
            let slot = Slot {
                view: view_of[rank],
                byte_offset: next[rank] * stream.stride() as u64,
                count,
            };
            next[rank] += count;
            slot
        });
        children.push(push_chunk(
            &mut root,
            (part, reordered),
            *bounds,
            &slots,
            materials,
        ));
    }
    let terrain = root.push(json::Node {
        children: Some(children),
        name: Some("terrain".to_string()),
        ..json::Node::default()
    });
    let scene = root.push(json::Scene {
        extensions: None,
        extras: None,
        name: None,
        nodes: vec![terrain],
    });
    root.scene = Some(scene);
    root
}

/// A stream's place in [`Stream::ALL`].
fn stream_rank(stream: Stream) -> usize {
    Stream::ALL.iter().position(|s| *s == stream).unwrap_or(0)
}

/// `{ "EXT_meshopt_compression": value }`, the extensions of a buffer or
/// view.
fn meshopt_object(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    let mut others = serde_json::Map::new();
    others.insert(MESHOPT.to_string(), value);
    others
}

/// Adds the buffer view of `view` on `buffer` (with its
/// `EXT_meshopt_compression` object when it is compressed).
fn push_view(
    root: &mut json::Root,
    view: &View,
    buffer: json::Index<json::Buffer>,
) -> json::Index<json::buffer::View> {
    let stride = view.stream.stride();
    let (name, target, stride_field, mode, filter) = match view.stream {
        Stream::Vertex(v) => (
            v.name(),
            json::buffer::Target::ArrayBuffer,
            Some(json::buffer::Stride(stride)),
            "ATTRIBUTES",
            (v == VertexStream::Normals).then_some("OCTAHEDRAL"),
        ),
        Stream::Index(_) => (
            "indices",
            json::buffer::Target::ElementArrayBuffer,
            None,
            "TRIANGLES",
            None,
        ),
    };
    let extensions = view.packed.as_ref().map(|(at, bytes)| {
        let mut object = serde_json::json!({
            "buffer": 0,
            "byteOffset": at,
            "byteLength": bytes.len(),
            "byteStride": stride,
            "count": view.count,
            "mode": mode,
        });
        if let (Some(filter), Some(map)) = (filter, object.as_object_mut()) {
            map.insert("filter".to_string(), filter.into());
        }
        json::extensions::buffer::View {
            others: meshopt_object(object),
        }
    });
    root.push(json::buffer::View {
        buffer,
        byte_length: USize64(view.len()),
        byte_offset: Some(USize64(view.offset)),
        byte_stride: stride_field,
        name: Some(name.to_string()),
        target: Some(Checked::Valid(target)),
        extensions,
        extras: None,
    })
}

/// Where one chunk's elements lie in one view (`view` is `None` for an
/// index view the layout does not have).
#[derive(Clone, Copy, Debug)]
struct Slot {
    view: Option<json::Index<json::buffer::View>>,
    byte_offset: u64,
    count: u64,
}

/// Adds the accessors, mesh and node of one chunk; `slots` are its places
/// in the views of [`Stream::ALL`].
fn push_chunk(
    root: &mut json::Root,
    (part, reordered): (&Part, &Reordered),
    (lo, hi): ([i16; 3], [i16; 3]),
    slots: &[Slot; 7],
    materials: &GlbMaterials,
) -> json::Index<json::Node> {
    use json::accessor::{ComponentType as C, Type as T};
    let mut accessor = |slot: Slot, component, type_, normalized, bounds: Option<[i16; 3]>| {
        let bound = |b: Option<[i16; 3]>| b.map(|b| json::Value::from(b.to_vec()));
        root.push(json::Accessor {
            buffer_view: slot.view,
            byte_offset: Some(USize64(slot.byte_offset)),
            count: USize64(slot.count),
            component_type: Checked::Valid(json::accessor::GenericComponentType(component)),
            extensions: None,
            extras: None,
            type_: Checked::Valid(type_),
            min: bound(bounds.map(|_| lo)),
            max: bound(bounds.map(|_| hi)),
            name: None,
            normalized,
            sparse: None,
        })
    };
    let positions = accessor(slots[0], C::I16, T::Vec3, false, Some(lo));
    let normals = accessor(slots[1], C::I8, T::Vec3, true, None);
    let weights = accessor(slots[2], C::U8, T::Vec4, true, None);
    let ids = accessor(slots[3], C::U8, T::Vec4, false, None);
    let texcoords = (slots[4].count > 0).then(|| accessor(slots[4], C::I16, T::Vec2, false, None));
    let (index_slot, index_type, index_bytes) = if slots[5].count > 0 {
        (slots[5], C::U16, 2)
    } else {
        (slots[6], C::U32, 4)
    };
    let attributes = vertex_attributes(positions, normals, weights, ids);
    let primitives = reordered
        .groups
        .iter()
        .map(|g| {
            let slot = Slot {
                view: index_slot.view,
                byte_offset: index_slot.byte_offset + g.first as u64 * index_bytes,
                count: g.count as u64,
            };
            let indices = accessor(slot, index_type, T::Scalar, false, None);
            materials.primitive(g.key, &attributes, texcoords, indices)
        })
        .collect();
    let c = part.coord.0;
    let mesh = root.push(json::Mesh {
        extensions: None,
        extras: None,
        name: None,
        primitives,
        weights: None,
    });
    let step = 1.0 / POSITION_STEPS_PER_STUD;
    root.push(json::Node {
        mesh: Some(mesh),
        name: Some(format!("chunk {} {} {}", c.x, c.y, c.z)),
        translation: Some(part.coord.origin_world().as_vec3().to_array()),
        scale: Some([step; 3]),
        ..json::Node::default()
    })
}

/// Writes the compact GLB to `tmp` (errors name `path`, the requested
/// file): the header, `json_bytes`, and the binary chunk of `views`, the
/// compressed bytes or, without meshopt, each view's bytes made again
/// chunk by chunk, then the images of `materials`.
pub(super) fn write_compact_glb(
    tmp: &Path,
    path: &Path,
    (compact, materials): (&CompactParts, &GlbMaterials),
    encoding: GlbEncoding,
    (json_bytes, bin_len, views): (&[u8], u64, &CompactViews),
) -> Result<(), ExportError> {
    let total = 12 + 8 + json_bytes.len() as u64 + 8 + bin_len;
    let file = std::fs::File::create(tmp).map_err(|e| ExportError::write(path, e))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    let mut write = |bytes: &[u8]| {
        out.write_all(bytes)
            .map_err(|e| ExportError::write(path, e))
    };
    // `total` is below 4 GiB (checked by the caller), so are both chunks.
    write(&glb_header(total as u32, json_bytes.len() as u32))?;
    write(json_bytes)?;
    write(&(bin_len as u32).to_le_bytes())?;
    write(&CHUNK_BIN.to_le_bytes())?;
    let mut written = 0u64;
    for view in &views.0 {
        let end = match &view.packed {
            Some((at, bytes)) => {
                write(bytes)?;
                at + bytes.len() as u64
            }
            None => {
                for (part, reordered) in compact.parts.iter().zip(&compact.reordered) {
                    write(&view.stream.bytes(part, reordered, encoding))?;
                }
                view.offset + view.len()
            }
        };
        write(&[0u8; 3][..(pad4(end) - end) as usize])?;
        written = pad4(end);
    }
    debug_assert_eq!(written + materials.bin_len(), bin_len);
    materials.write_images(&mut write)?;
    out.flush().map_err(|e| ExportError::write(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::ChunkMesh;
    use crate::terrain::ChunkCoord;
    use crate::terrain::materials::MaterialLibrary;
    use glam::{IVec3, Vec3};
    use std::sync::Arc;

    /// A strip of `n` vertices (two triangles per step) in chunk `coord`.
    fn strip(n: u32, coord: IVec3) -> Part {
        let positions: Vec<Vec3> = (0..n)
            .map(|i| {
                Vec3::new(
                    (i / 2 % 256) as f32 * 0.5,
                    (i % 2) as f32,
                    (i / 512) as f32 * 0.25,
                )
            })
            .collect();
        let indices: Vec<u32> = (0..n - 2)
            .flat_map(|i| {
                if i % 2 == 0 {
                    [i, i + 1, i + 2]
                } else {
                    [i + 1, i, i + 2]
                }
            })
            .collect();
        let mesh = ChunkMesh {
            normals: vec![Vec3::Y; n as usize],
            material_ids: vec![[1, 2, 1, 1]; n as usize],
            material_weights: vec![[200, 55, 0, 0]; n as usize],
            skirt_start_vertex: n,
            skirt_start_index: indices.len() as u32,
            positions,
            indices,
            ..ChunkMesh::default()
        };
        Part {
            coord: ChunkCoord(coord),
            mesh: Arc::new(mesh),
            vertices: n as usize,
        }
    }

    /// The triangles of `indices` over `order` in mesh numbering, each
    /// rotated to start at its smallest index, sorted.
    fn triangles(indices: &[u32], order: &[u32]) -> Vec<[u32; 3]> {
        let mut out: Vec<[u32; 3]> = indices
            .chunks_exact(3)
            .map(|t| {
                let t = [
                    order[t[0] as usize],
                    order[t[1] as usize],
                    order[t[2] as usize],
                ];
                let r = (0..3).min_by_key(|&k| t[k]).unwrap_or(0);
                [t[r], t[(r + 1) % 3], t[(r + 2) % 3]]
            })
            .collect();
        out.sort_unstable();
        out
    }

    #[test]
    fn primitives_of_65536_vertices_or_more_get_a_u32_index_view() {
        let parts = [strip(70_000, IVec3::ZERO), strip(600, IVec3::new(1, 0, 0))];
        let path = Path::new("unused.glb");
        let library = MaterialLibrary::default();
        let classes = TriangleMaterials::new(&library);
        let compact = CompactParts::new(&parts, &classes, path).unwrap();
        let materials =
            GlbMaterials::new(&library, &compact.used_keys(), Default::default(), 64.0).unwrap();
        let (json_bytes, _, views) =
            compact_glb(&compact, GlbEncoding::Meshopt, &materials).unwrap();
        let streams: Vec<Stream> = views.0.iter().map(|v| v.stream).collect();
        assert_eq!(
            &streams[4..],
            [
                Stream::Index(IndexWidth::U16),
                Stream::Index(IndexWidth::U32)
            ]
        );
        for (view, (part, reordered)) in views.0[4..]
            .iter()
            .rev()
            .zip(parts.iter().zip(&compact.reordered))
        {
            let (_, packed) = view.packed.as_ref().unwrap();
            let decoded: Vec<u32> = match view.stream {
                Stream::Index(IndexWidth::U32) => {
                    meshopt::decode_index_buffer(packed, view.count as usize).unwrap()
                }
                _ => meshopt::decode_index_buffer::<u16>(packed, view.count as usize)
                    .unwrap()
                    .into_iter()
                    .map(u32::from)
                    .collect(),
            };
            assert_eq!(decoded.len(), part.indices().len());
            let identity: Vec<u32> = (0..part.vertices as u32).collect();
            assert_eq!(
                triangles(&decoded, &reordered.order),
                triangles(part.indices(), &identity)
            );
        }
        let root: json::Root = serde_json::from_slice(&json_bytes).unwrap();
        let index_type = |mesh: usize| {
            let primitive = &root.meshes[mesh].primitives[0];
            root.accessors[primitive.indices.unwrap().value()]
                .component_type
                .as_ref()
                .unwrap()
                .0
        };
        assert_eq!(index_type(0), json::accessor::ComponentType::U32);
        assert_eq!(index_type(1), json::accessor::ComponentType::U16);
    }

    #[test]
    fn a_vertex_beyond_the_i16_range_is_refused_with_its_chunk() {
        let mut part = strip(10, IVec3::new(2, 3, 4));
        Arc::make_mut(&mut part.mesh).positions[5] = Vec3::new(0.0, 600.0, 0.0);
        let parts = [part];
        let classes = TriangleMaterials::new(&MaterialLibrary::default());
        let err = CompactParts::new(&parts, &classes, Path::new("far.glb"))
            .err()
            .unwrap();
        assert!(matches!(err, ExportError::TooLarge { .. }), "{err}");
        let message = err.to_string();
        assert!(
            message.contains("[2, 3, 4]") && message.contains("--glb-plain"),
            "{message}"
        );
        // An index past the surface vertices is an error, not an abort in
        // meshoptimizer.
        let mut part = strip(10, IVec3::new(2, 3, 4));
        Arc::make_mut(&mut part.mesh).indices[4] = 10;
        let err = CompactParts::new(&[part], &classes, Path::new("bad.glb"))
            .err()
            .unwrap();
        assert!(matches!(err, ExportError::Write { .. }), "{err}");
        assert!(err.to_string().contains("10 surface vertices"), "{err}");
    }
}
