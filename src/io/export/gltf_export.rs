//! Mesh export: the terrain surface at full detail as binary glTF 2.0
//! (`.glb`), for DCC tools and engines.
//!
//! # What is exported
//! Every chunk is meshed at level 0 ([`WorldMeshes::build_all`]); surface
//! triangles only (no skirts, no water). How the geometry is stored is the
//! [`GlbEncoding`]: by default quantized and compressed
//! (`KHR_mesh_quantization` + `EXT_meshopt_compression`, one node per
//! chunk; see [`super::gltf_compact`]), or plain (`--glb-plain`), the
//! layout below, which any glTF 2.0 importer reads.
//!
//! # The plain layout
//! One mesh holds the chunks in (z, y, x) chunk order, each as one
//! primitive per glTF material its triangles are drawn with (in material
//! order; see [`super::gltf_materials`]). A chunk's primitives share its
//! vertex accessors, with these attributes:
//!
//! - `POSITION` (`f32` VEC3): world studs relative to the world origin
//!   (chunk origin + chunk-local position, added in `f64`, then rounded).
//! - `NORMAL` (`f32` VEC3): unit normals pointing out of the solid.
//! - `COLOR_0` (normalized `u8` VEC4): the vertex's 4 material weights
//!   (`weight / 255`, summing to 1), i.e. the blend factors of `_MATERIAL_IDS`.
//! - `_MATERIAL_IDS` (`u8` VEC4, application-specific): the quad's material
//!   ids ([`crate::terrain::Material`]), sorted; unused slots repeat the first
//!   id with weight 0.
//! - `TEXCOORD_0` (`f32` VEC2), only in the primitives of a textured
//!   material (and stored only for chunks that have one): the triplanar
//!   projection of the chunk-local position in studs
//!   ([`super::gltf_materials::texcoord_studs`]).
//!
//! `COLOR_0` and `_MATERIAL_IDS` are the exact 4-way blend, for a custom
//! shader; each primitive's `material` is the per-triangle fallback an
//! engine renders as is: the triangle's dominant material, or its top
//! variant on upward faces. The materials (named by the library, extras
//! `strata_material_id`), their PNG textures and the root's
//! `strata_materials` extras are described in [`super::gltf_materials`];
//! the images lie after the geometry in the binary chunk.
//!
//! Indices are `u32` triangle lists, counter-clockwise seen from outside
//! (glTF's front faces); each chunk's triangles are grouped by material,
//! in mesh order within a group. Vertices are not shared between chunks,
//! so the vertex count is exactly the sum of the chunk meshes' vertex
//! counts.
//!
//! The plain file is streamed: the JSON is laid out from the mesh sizes
//! (and each chunk's material groups) first, then each attribute is
//! written chunk by chunk, so no copy of the whole geometry is held in
//! memory (the PNGs are). The compact encodings hold each
//! chunk's reordered indices and, while compressing, one uncompressed
//! view.

use std::collections::BTreeSet;
use std::io::{BufWriter, Write};
use std::path::Path;

use glam::Vec3;
use gltf_json as json;
use json::validation::{Checked, USize64};
use rayon::prelude::*;

use super::glb::{CHUNK_BIN, Part, glb_header, json_chunk, pad4, surface_parts};
pub use super::gltf_compact::GlbEncoding;
use super::gltf_compact::{CompactParts, compact_glb, write_compact_glb};
use super::gltf_materials::{
    GlbMaterials, Group, TriangleMaterials, blended_ids, group_triangles, texcoord_studs,
    vertex_attributes,
};
use super::gltf_quantize::POSITION_STEPS_PER_STUD;
use crate::io::ExportError;
use crate::pipeline::WorldMeshes;
use crate::progress::Progress;
use crate::terrain::materials::MaterialLibrary;
use crate::terrain::storage::grid::Grid;

/// What [`export_glb`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlbExport {
    /// Chunks with surface.
    pub chunks: usize,
    /// Primitives: one per chunk and glTF material its triangles use.
    pub primitives: usize,
    /// glTF materials (library materials drawn, and their top variants).
    pub materials: usize,
    /// Vertices written.
    pub vertices: usize,
    /// Triangles written.
    pub triangles: usize,
    /// File size, bytes.
    pub file_bytes: u64,
    /// How the geometry is stored.
    pub encoding: GlbEncoding,
}

impl GlbExport {
    /// File bytes per triangle.
    pub fn bytes_per_triangle(&self) -> f64 {
        self.file_bytes as f64 / self.triangles.max(1) as f64
    }
}

/// Per-vertex bytes of each vertex view (positions, normals, weights,
/// ids, texture coordinates), in the order they are laid out.
const STRIDES: [u64; 5] = [12, 12, 4, 4, 8];

/// The view of the texture coordinates, and of the indices.
const TEXCOORD_VIEW: usize = 4;
const INDEX_VIEW: usize = 5;

/// `values` as little-endian bytes (glTF's byte order).
fn le_bytes_f32(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// `values` as little-endian bytes (glTF's byte order).
fn le_bytes_u32(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Meshes `grid` at full detail and writes it to `path` as binary glTF
/// stored as `encoding` says, with the materials of `library` (the
/// world's). Parent directories are created; a failed export leaves an
/// existing file as it was.
///
/// # Errors
/// [`ExportError::NoSurface`] for a world without surface,
/// [`ExportError::TooLarge`] when the geometry exceeds the 4 GiB a GLB
/// can hold (or, quantized, a vertex lies beyond the ±511 studs a chunk's
/// `i16` positions hold), [`ExportError::Write`] when the file cannot be
/// written or a texture not encoded.
pub fn export_glb(
    grid: &Grid,
    library: &MaterialLibrary,
    path: &Path,
    encoding: GlbEncoding,
) -> Result<GlbExport, ExportError> {
    export_glb_with_progress(grid, library, path, encoding, &Progress::new())
}

/// [`export_glb`], counting chunks meshed in `progress` (stage "meshing")
/// and stopping before anything is written when it is cancelled.
///
/// # Errors
/// As [`export_glb`], and [`ExportError::Cancelled`].
pub fn export_glb_with_progress(
    grid: &Grid,
    library: &MaterialLibrary,
    path: &Path,
    encoding: GlbEncoding,
    progress: &Progress,
) -> Result<GlbExport, ExportError> {
    let meshes = WorldMeshes::build_with_progress(
        grid,
        &grid.meshing_candidates(),
        |_| 0,
        crate::mesh::MeshStyle::Smooth,
        progress,
    )
    .map_err(|_| ExportError::Cancelled {
        path: path.to_path_buf(),
    })?;
    progress.begin_stage("writing", 0);
    export_meshes_glb(&meshes, library, path, encoding)
}

/// One chunk's material groups in the plain layout (its indices grouped
/// again when written), and whether it stores texture coordinates.
struct PlainChunk {
    groups: Vec<Group>,
    textured: bool,
}

impl PlainChunk {
    fn of(part: &Part, classes: &TriangleMaterials) -> PlainChunk {
        let groups = grouped_indices(part, classes).1;
        let textured = groups.iter().any(|g| classes.textured(g.key));
        PlainChunk { groups, textured }
    }
}

/// `part`'s surface indices grouped by material.
fn grouped_indices(part: &Part, classes: &TriangleMaterials) -> (Vec<u32>, Vec<Group>) {
    group_triangles(part.indices(), |t| classes.key(&part.mesh, t))
}

/// Writes already-built meshes (full detail expected) to `path` as binary
/// glTF stored as `encoding` says, with the materials of `library`; see
/// [`export_glb`].
///
/// # Errors
/// As [`export_glb`].
pub fn export_meshes_glb(
    meshes: &WorldMeshes,
    library: &MaterialLibrary,
    path: &Path,
    encoding: GlbEncoding,
) -> Result<GlbExport, ExportError> {
    let parts = surface_parts(meshes);
    if parts.is_empty() {
        return Err(ExportError::NoSurface {
            path: path.to_path_buf(),
        });
    }
    let total_vertices: u64 = parts.iter().map(|p| p.vertices as u64).sum();
    let total_indices: u64 = parts.iter().map(|p| p.indices().len() as u64).sum();
    let too_large = |total: u64| ExportError::TooLarge {
        path: path.to_path_buf(),
        message: format!(
            "{total} bytes of geometry exceed the 4 GiB a .glb can hold; export a smaller world"
        ),
    };
    let classes = TriangleMaterials::new(library);
    let blended = blended_ids(&parts);
    // All or nothing: a failed export leaves an existing file as it was.
    let (total, primitives, materials) = if encoding == GlbEncoding::Plain {
        let chunks: Vec<PlainChunk> = parts
            .par_iter()
            .map(|p| PlainChunk::of(p, &classes))
            .collect();
        let used: BTreeSet<_> = chunks
            .iter()
            .flat_map(|c| c.groups.iter().map(|g| g.key))
            .collect();
        let materials = GlbMaterials::new(library, &used, blended, 1.0)
            .map_err(|e| ExportError::write(path, e))?;
        let textured_vertices: u64 = parts
            .iter()
            .zip(&chunks)
            .filter(|(_, c)| c.textured)
            .map(|(p, _)| p.vertices as u64)
            .sum();
        let layout = BinLayout::new(
            [total_vertices, textured_vertices],
            total_indices,
            materials.bin_len(),
        );
        let json_bytes = json_chunk(&gltf_root(&parts, &chunks, &layout, &materials))
            .map_err(|e| ExportError::write(path, e))?;
        let total = 12 + 8 + json_bytes.len() as u64 + 8 + layout.bin_len;
        if total > u64::from(u32::MAX) {
            return Err(too_large(total));
        }
        let file = PlainFile {
            parts: &parts,
            chunks: &chunks,
            classes: &classes,
            materials: &materials,
            layout: &layout,
        };
        crate::io::write_atomically(
            path,
            |tmp| write_glb_file(tmp, path, &file, &json_bytes, total),
            |e| ExportError::write(path, e),
        )?;
        let primitives = chunks.iter().map(|c| c.groups.len()).sum();
        (total, primitives, materials.count())
    } else {
        let compact = CompactParts::new(&parts, &classes, path)?;
        let materials = GlbMaterials::new(
            library,
            &compact.used_keys(),
            blended,
            POSITION_STEPS_PER_STUD,
        )
        .map_err(|e| ExportError::write(path, e))?;
        let (json_bytes, bin_len, views) =
            compact_glb(&compact, encoding, &materials).map_err(|e| ExportError::write(path, e))?;
        let total = 12 + 8 + json_bytes.len() as u64 + 8 + bin_len;
        if total > u64::from(u32::MAX) {
            return Err(too_large(total));
        }
        crate::io::write_atomically(
            path,
            |tmp| {
                write_compact_glb(
                    tmp,
                    path,
                    (&compact, &materials),
                    encoding,
                    (&json_bytes, bin_len, &views),
                )
            },
            |e| ExportError::write(path, e),
        )?;
        (total, compact.primitive_count(), materials.count())
    };
    let file_bytes = std::fs::metadata(path).map_or(total, |m| m.len());
    Ok(GlbExport {
        chunks: parts.len(),
        primitives,
        materials,
        vertices: total_vertices as usize,
        triangles: (total_indices / 3) as usize,
        file_bytes,
        encoding,
    })
}

/// Where the buffer views lie in the binary chunk: the five vertex views
/// ([`STRIDES`] bytes per vertex; the texture coordinates' only for the
/// textured chunks' vertices, and empty without them), then the index
/// view, each 4-byte aligned, then the images; bytes.
#[derive(Clone, Copy, Debug)]
struct BinLayout {
    view_offsets: [u64; 6],
    view_lengths: [u64; 6],
    /// Where the images start.
    image_offset: u64,
    /// Length of the binary chunk.
    bin_len: u64,
}

impl BinLayout {
    /// The layout of `vertices` (all, and those with texture
    /// coordinates), `indices` and `image_bytes`.
    fn new(vertices: [u64; 2], indices: u64, image_bytes: u64) -> BinLayout {
        let mut view_offsets = [0u64; 6];
        let mut view_lengths = [0u64; 6];
        let mut offset = 0u64;
        let counts = [
            vertices[0],
            vertices[0],
            vertices[0],
            vertices[0],
            vertices[1],
        ];
        for (i, len) in STRIDES
            .iter()
            .zip(counts)
            .map(|(s, n)| s * n)
            .chain([4 * indices])
            .enumerate()
        {
            view_offsets[i] = offset;
            view_lengths[i] = len;
            offset = pad4(offset + len);
        }
        BinLayout {
            view_offsets,
            view_lengths,
            image_offset: offset,
            bin_len: offset + image_bytes,
        }
    }
}

/// The glTF JSON of `parts` laid out as `layout` says: one buffer, the
/// views, one primitive per chunk and material in one mesh, one node, one
/// scene, and the materials.
fn gltf_root(
    parts: &[Part],
    chunks: &[PlainChunk],
    layout: &BinLayout,
    materials: &GlbMaterials,
) -> json::Root {
    let mut root = json::Root {
        asset: json::Asset {
            generator: Some(format!("Strata {}", env!("CARGO_PKG_VERSION"))),
            ..json::Asset::default()
        },
        ..json::Root::default()
    };
    let buffer = root.push(json::Buffer {
        byte_length: USize64(layout.bin_len),
        name: None,
        uri: None,
        extensions: None,
        extras: None,
    });
    let views = push_views(&mut root, buffer, layout);
    materials.push(&mut root, buffer, layout.image_offset);
    let mut primitives = Vec::with_capacity(parts.len());
    let mut first = Firsts::default();
    for (part, chunk) in parts.iter().zip(chunks) {
        primitives.extend(push_primitives(
            &mut root,
            &views,
            (part, chunk),
            first,
            materials,
        ));
        first.vertex += part.vertices as u64;
        if chunk.textured {
            first.texcoord += part.vertices as u64;
        }
        first.index += part.indices().len() as u64;
    }
    let mesh = root.push(json::Mesh {
        extensions: None,
        extras: None,
        name: Some("terrain".to_string()),
        primitives,
        weights: None,
    });
    let node = root.push(json::Node {
        mesh: Some(mesh),
        name: Some("terrain".to_string()),
        ..json::Node::default()
    });
    let scene = root.push(json::Scene {
        extensions: None,
        extras: None,
        name: None,
        nodes: vec![node],
    });
    root.scene = Some(scene);
    root
}

/// Adds the buffer views of `layout` (positions, normals, material
/// weights, material ids, texture coordinates when there are any,
/// indices) on `buffer`. The vertex views declare their stride, as glTF
/// requires of a view that several accessors (one per chunk) read.
fn push_views(
    root: &mut json::Root,
    buffer: json::Index<json::Buffer>,
    layout: &BinLayout,
) -> Vec<Option<json::Index<json::buffer::View>>> {
    let view_names = [
        "positions",
        "normals",
        "material weights",
        "material ids",
        "texture coordinates",
        "indices",
    ];
    (0..6)
        .map(|i| {
            (layout.view_lengths[i] > 0).then(|| {
                root.push(json::buffer::View {
                    buffer,
                    byte_length: USize64(layout.view_lengths[i]),
                    byte_offset: Some(USize64(layout.view_offsets[i])),
                    byte_stride: STRIDES.get(i).map(|&s| json::buffer::Stride(s as usize)),
                    name: Some(view_names[i].to_string()),
                    target: Some(Checked::Valid(if i < INDEX_VIEW {
                        json::buffer::Target::ArrayBuffer
                    } else {
                        json::buffer::Target::ElementArrayBuffer
                    })),
                    extensions: None,
                    extras: None,
                })
            })
        })
        .collect()
}

/// Where a chunk's elements start in their views: its first vertex, its
/// first vertex with texture coordinates, its first index.
#[derive(Clone, Copy, Debug, Default)]
struct Firsts {
    vertex: u64,
    texcoord: u64,
    index: u64,
}

/// Adds the accessors of one chunk (its elements start at `first` in
/// their views) and returns its primitives, one per material group.
fn push_primitives(
    root: &mut json::Root,
    views: &[Option<json::Index<json::buffer::View>>],
    (part, chunk): (&Part, &PlainChunk),
    first: Firsts,
    materials: &GlbMaterials,
) -> Vec<json::mesh::Primitive> {
    let count = part.vertices as u64;
    let (lo, hi) = part.world_positions().fold(
        (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
        |(lo, hi), p| (lo.min(p), hi.max(p)),
    );
    let mut accessor =
        |view: usize,
         offset: u64,
         count: u64,
         (component, type_): (json::accessor::ComponentType, json::accessor::Type),
         normalized: bool,
         bounds: Option<(Vec3, Vec3)>| {
            root.push(json::Accessor {
                buffer_view: views[view],
                byte_offset: Some(USize64(offset)),
                count: USize64(count),
                component_type: Checked::Valid(json::accessor::GenericComponentType(component)),
                extensions: None,
                extras: None,
                type_: Checked::Valid(type_),
                min: bounds.map(|(lo, _)| json::Value::from(lo.to_array().to_vec())),
                max: bounds.map(|(_, hi)| json::Value::from(hi.to_array().to_vec())),
                name: None,
                normalized,
                sparse: None,
            })
        };
    use json::accessor::{ComponentType as C, Type as T};
    let v = first.vertex;
    let positions = accessor(0, v * 12, count, (C::F32, T::Vec3), false, Some((lo, hi)));
    let normals = accessor(1, v * 12, count, (C::F32, T::Vec3), false, None);
    let weights = accessor(2, v * 4, count, (C::U8, T::Vec4), true, None);
    let ids = accessor(3, v * 4, count, (C::U8, T::Vec4), false, None);
    let texcoords = chunk.textured.then(|| {
        let at = first.texcoord * 8;
        accessor(TEXCOORD_VIEW, at, count, (C::F32, T::Vec2), false, None)
    });
    let attributes = vertex_attributes(positions, normals, weights, ids);
    chunk
        .groups
        .iter()
        .map(|g| {
            let at = (first.index + g.first as u64) * 4;
            let indices = accessor(
                INDEX_VIEW,
                at,
                g.count as u64,
                (C::U32, T::Scalar),
                false,
                None,
            );
            materials.primitive(g.key, &attributes, texcoords, indices)
        })
        .collect()
}

/// What the plain file is written from.
struct PlainFile<'a> {
    parts: &'a [Part],
    chunks: &'a [PlainChunk],
    classes: &'a TriangleMaterials,
    materials: &'a GlbMaterials,
    layout: &'a BinLayout,
}

/// Writes the GLB bytes to `tmp`; errors name `path`, the requested file.
fn write_glb_file(
    tmp: &Path,
    path: &Path,
    file: &PlainFile,
    json_bytes: &[u8],
    total: u64,
) -> Result<(), ExportError> {
    let BinLayout {
        view_offsets,
        view_lengths,
        image_offset,
        bin_len,
    } = *file.layout;
    let out = std::fs::File::create(tmp).map_err(|e| ExportError::write(path, e))?;
    let mut out = BufWriter::with_capacity(1 << 20, out);
    let mut write = |bytes: &[u8]| {
        out.write_all(bytes)
            .map_err(|e| ExportError::write(path, e))
    };
    // `total`, `json_bytes.len()` and `bin_len` are below 4 GiB (checked above).
    write(&glb_header(total as u32, json_bytes.len() as u32))?;
    write(json_bytes)?;
    write(&(bin_len as u32).to_le_bytes())?;
    write(&CHUNK_BIN.to_le_bytes())?;
    let mut written = 0u64;
    for view in 0..6 {
        for (part, chunk) in file.parts.iter().zip(file.chunks) {
            let mesh = &part.mesh;
            let n = part.vertices;
            match view {
                0 => {
                    let positions: Vec<f32> =
                        part.world_positions().flat_map(|p| p.to_array()).collect();
                    write(&le_bytes_f32(&positions))?;
                }
                1 => {
                    let normals: Vec<f32> = mesh.normals[..n]
                        .iter()
                        .flat_map(|v| v.to_array())
                        .collect();
                    write(&le_bytes_f32(&normals))?;
                }
                2 => write(mesh.material_weights[..n].as_flattened())?,
                3 => write(mesh.material_ids[..n].as_flattened())?,
                TEXCOORD_VIEW if chunk.textured => {
                    let uvs: Vec<f32> = mesh.positions[..n]
                        .iter()
                        .zip(&mesh.normals[..n])
                        .flat_map(|(&p, &normal)| texcoord_studs(p, normal))
                        .collect();
                    write(&le_bytes_f32(&uvs))?;
                }
                TEXCOORD_VIEW => {}
                _ => write(&le_bytes_u32(&grouped_indices(part, file.classes).0))?,
            }
        }
        written = view_offsets[view] + view_lengths[view];
        let padding = pad4(written) - written;
        write(&[0u8; 3][..padding as usize])?;
        written += padding;
    }
    debug_assert_eq!(written, image_offset);
    file.materials.write_images(&mut write)?;
    out.flush().map_err(|e| ExportError::write(path, e))
}
