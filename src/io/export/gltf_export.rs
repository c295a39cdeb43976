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
//! One mesh holds one primitive per chunk, in (z, y, x) chunk order, with
//! these vertex attributes:
//!
//! - `POSITION` (`f32` VEC3): world studs relative to the world origin
//!   (chunk origin + chunk-local position, added in `f64`, then rounded).
//! - `NORMAL` (`f32` VEC3): unit normals pointing out of the solid.
//! - `COLOR_0` (normalized `u8` VEC4): the vertex's 4 material weights
//!   (`weight / 255`, summing to 1), i.e. the blend factors of `_MATERIAL_IDS`.
//! - `_MATERIAL_IDS` (`u8` VEC4, application-specific): the quad's material
//!   ids ([`crate::terrain::Material`]), sorted; unused slots repeat the first
//!   id with weight 0.
//!
//! Indices are `u32` triangle lists, counter-clockwise seen from outside
//! (glTF's front faces). Vertices are not shared between chunks, so the
//! vertex count is exactly the sum of the chunk meshes' vertex counts.
//!
//! The plain file is streamed: the JSON is laid out from the mesh sizes
//! first, then each attribute is written chunk by chunk, so no copy of the
//! whole geometry is held in memory. The compact encodings hold each
//! chunk's reordered indices and, while compressing, one uncompressed
//! view.

use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::path::Path;

use glam::Vec3;
use gltf_json as json;
use json::validation::{Checked, USize64};

use super::glb::{CHUNK_BIN, Part, glb_header, json_chunk, pad4, surface_parts};
pub use super::gltf_compact::GlbEncoding;
use super::gltf_compact::{CompactParts, compact_glb, write_compact_glb};
use crate::io::ExportError;
use crate::pipeline::WorldMeshes;
use crate::progress::Progress;
use crate::terrain::storage::grid::Grid;

/// What [`export_glb`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlbExport {
    /// Chunks with surface (one primitive each).
    pub primitives: usize,
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

/// Per-vertex bytes of each attribute, in the order they are laid out.
const STRIDES: [u64; 4] = [12, 12, 4, 4];

/// `values` as little-endian bytes (glTF's byte order).
fn le_bytes_f32(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// `values` as little-endian bytes (glTF's byte order).
fn le_bytes_u32(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Meshes `grid` at full detail and writes it to `path` as binary glTF
/// stored as `encoding` says. Parent directories are created; a failed
/// export leaves an existing file as it was.
///
/// # Errors
/// [`ExportError::NoSurface`] for a world without surface,
/// [`ExportError::TooLarge`] when the geometry exceeds the 4 GiB a GLB
/// can hold (or, quantized, a vertex lies beyond the ±511 studs a chunk's
/// `i16` positions hold), [`ExportError::Write`] when the file cannot be
/// written.
pub fn export_glb(
    grid: &Grid,
    path: &Path,
    encoding: GlbEncoding,
) -> Result<GlbExport, ExportError> {
    export_glb_with_progress(grid, path, encoding, &Progress::new())
}

/// [`export_glb`], counting chunks meshed in `progress` (stage "meshing")
/// and stopping before anything is written when it is cancelled.
///
/// # Errors
/// As [`export_glb`], and [`ExportError::Cancelled`].
pub fn export_glb_with_progress(
    grid: &Grid,
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
    export_meshes_glb(&meshes, path, encoding)
}

/// Writes already-built meshes (full detail expected) to `path` as binary
/// glTF stored as `encoding` says; see [`export_glb`].
///
/// # Errors
/// As [`export_glb`].
pub fn export_meshes_glb(
    meshes: &WorldMeshes,
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
    // All or nothing: a failed export leaves an existing file as it was.
    let total = if encoding == GlbEncoding::Plain {
        let layout = BinLayout::new(total_vertices, total_indices);
        let json_bytes =
            json_chunk(&gltf_root(&parts, &layout)).map_err(|e| ExportError::write(path, e))?;
        let total = 12 + 8 + json_bytes.len() as u64 + 8 + layout.bin_len;
        if total > u64::from(u32::MAX) {
            return Err(too_large(total));
        }
        crate::io::write_atomically(
            path,
            |tmp| write_glb_file(tmp, path, &parts, &json_bytes, total, &layout),
            |e| ExportError::write(path, e),
        )?;
        total
    } else {
        let compact = CompactParts::new(&parts, path)?;
        let (json_bytes, bin_len, views) =
            compact_glb(&compact, encoding).map_err(|e| ExportError::write(path, e))?;
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
                    &compact,
                    encoding,
                    (&json_bytes, bin_len, &views),
                )
            },
            |e| ExportError::write(path, e),
        )?;
        total
    };
    let file_bytes = std::fs::metadata(path).map_or(total, |m| m.len());
    Ok(GlbExport {
        primitives: parts.len(),
        vertices: total_vertices as usize,
        triangles: (total_indices / 3) as usize,
        file_bytes,
        encoding,
    })
}

/// Where the five buffer views lie in the binary chunk: the four attribute
/// views ([`STRIDES`] bytes per vertex), then the index view, each 4-byte
/// aligned; bytes.
#[derive(Clone, Copy, Debug)]
struct BinLayout {
    view_offsets: [u64; 5],
    view_lengths: [u64; 5],
    /// Length of the binary chunk.
    bin_len: u64,
}

impl BinLayout {
    fn new(total_vertices: u64, total_indices: u64) -> BinLayout {
        let mut view_offsets = [0u64; 5];
        let mut view_lengths = [0u64; 5];
        let mut offset = 0u64;
        for (i, len) in STRIDES
            .iter()
            .map(|s| s * total_vertices)
            .chain([4 * total_indices])
            .enumerate()
        {
            view_offsets[i] = offset;
            view_lengths[i] = len;
            offset = pad4(offset + len);
        }
        BinLayout {
            view_offsets,
            view_lengths,
            bin_len: offset,
        }
    }
}

/// The glTF JSON of `parts` laid out as `layout` says: one buffer, five
/// views, one primitive per part in one mesh, one node, one scene.
fn gltf_root(parts: &[Part], layout: &BinLayout) -> json::Root {
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
    let mut primitives = Vec::with_capacity(parts.len());
    let (mut first_vertex, mut first_index) = (0u64, 0u64);
    for part in parts {
        primitives.push(push_primitive(
            &mut root,
            &views,
            part,
            first_vertex,
            first_index,
        ));
        first_vertex += part.vertices as u64;
        first_index += part.indices().len() as u64;
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

/// Adds the five buffer views of `layout` (positions, normals, material
/// weights, material ids, indices) on `buffer`. The vertex views declare
/// their stride, as glTF requires of a view that several accessors (one
/// per chunk) read.
fn push_views(
    root: &mut json::Root,
    buffer: json::Index<json::Buffer>,
    layout: &BinLayout,
) -> Vec<json::Index<json::buffer::View>> {
    let view_names = [
        "positions",
        "normals",
        "material weights",
        "material ids",
        "indices",
    ];
    (0..5)
        .map(|i| {
            root.push(json::buffer::View {
                buffer,
                byte_length: USize64(layout.view_lengths[i]),
                byte_offset: Some(USize64(layout.view_offsets[i])),
                byte_stride: STRIDES.get(i).map(|&s| json::buffer::Stride(s as usize)),
                name: Some(view_names[i].to_string()),
                target: Some(Checked::Valid(if i < 4 {
                    json::buffer::Target::ArrayBuffer
                } else {
                    json::buffer::Target::ElementArrayBuffer
                })),
                extensions: None,
                extras: None,
            })
        })
        .collect()
}

/// Adds the accessors of one part (its vertices start at `first_vertex`,
/// its indices at `first_index` in their views) and returns its primitive.
fn push_primitive(
    root: &mut json::Root,
    views: &[json::Index<json::buffer::View>],
    part: &Part,
    first_vertex: u64,
    first_index: u64,
) -> json::mesh::Primitive {
    let count = part.vertices as u64;
    let (lo, hi) = part.world_positions().fold(
        (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
        |(lo, hi), p| (lo.min(p), hi.max(p)),
    );
    let mut accessor = |view: usize,
                        offset: u64,
                        count: u64,
                        component: json::accessor::ComponentType,
                        type_: json::accessor::Type,
                        normalized: bool,
                        bounds: Option<(Vec3, Vec3)>| {
        root.push(json::Accessor {
            buffer_view: Some(views[view]),
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
    let positions = accessor(
        0,
        first_vertex * 12,
        count,
        C::F32,
        T::Vec3,
        false,
        Some((lo, hi)),
    );
    let normals = accessor(1, first_vertex * 12, count, C::F32, T::Vec3, false, None);
    let weights = accessor(2, first_vertex * 4, count, C::U8, T::Vec4, true, None);
    let ids = accessor(3, first_vertex * 4, count, C::U8, T::Vec4, false, None);
    let n_indices = part.indices().len() as u64;
    let indices = accessor(
        4,
        first_index * 4,
        n_indices,
        C::U32,
        T::Scalar,
        false,
        None,
    );
    let mut attributes = BTreeMap::new();
    attributes.insert(Checked::Valid(json::mesh::Semantic::Positions), positions);
    attributes.insert(Checked::Valid(json::mesh::Semantic::Normals), normals);
    attributes.insert(Checked::Valid(json::mesh::Semantic::Colors(0)), weights);
    attributes.insert(
        Checked::Valid(json::mesh::Semantic::Extras("MATERIAL_IDS".to_string())),
        ids,
    );
    json::mesh::Primitive {
        attributes,
        extensions: None,
        extras: None,
        indices: Some(indices),
        material: None,
        mode: Checked::Valid(json::mesh::Mode::Triangles),
        targets: None,
    }
}

/// Writes the GLB bytes to `tmp`; errors name `path`, the requested file.
fn write_glb_file(
    tmp: &Path,
    path: &Path,
    parts: &[Part],
    json_bytes: &[u8],
    total: u64,
    layout: &BinLayout,
) -> Result<(), ExportError> {
    let BinLayout {
        view_offsets,
        view_lengths,
        bin_len,
    } = *layout;
    let file = std::fs::File::create(tmp).map_err(|e| ExportError::write(path, e))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let write = |out: &mut BufWriter<std::fs::File>, bytes: &[u8]| {
        out.write_all(bytes)
            .map_err(|e| ExportError::write(path, e))
    };
    // `total`, `json_bytes.len()` and `bin_len` are below 4 GiB (checked above).
    write(&mut out, &glb_header(total as u32, json_bytes.len() as u32))?;
    write(&mut out, json_bytes)?;
    write(&mut out, &(bin_len as u32).to_le_bytes())?;
    write(&mut out, &CHUNK_BIN.to_le_bytes())?;
    let mut written = 0u64;
    for view in 0..5 {
        for part in parts {
            let mesh = &part.mesh;
            let n = part.vertices;
            match view {
                0 => {
                    let positions: Vec<f32> =
                        part.world_positions().flat_map(|p| p.to_array()).collect();
                    write(&mut out, &le_bytes_f32(&positions))?;
                }
                1 => {
                    let normals: Vec<f32> = mesh.normals[..n]
                        .iter()
                        .flat_map(|v| v.to_array())
                        .collect();
                    write(&mut out, &le_bytes_f32(&normals))?;
                }
                2 => write(&mut out, mesh.material_weights[..n].as_flattened())?,
                3 => write(&mut out, mesh.material_ids[..n].as_flattened())?,
                _ => write(&mut out, &le_bytes_u32(part.indices()))?,
            }
        }
        written = view_offsets[view] + view_lengths[view];
        let padding = pad4(written) - written;
        write(&mut out, &[0u8; 3][..padding as usize])?;
        written += padding;
    }
    debug_assert_eq!(written, bin_len);
    out.flush().map_err(|e| ExportError::write(path, e))
}
