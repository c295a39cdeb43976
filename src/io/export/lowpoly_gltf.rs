//! Low-poly export: the world as greedy heightfield meshes
//! ([`crate::mesh::lowpoly::greedy_heightfield`]) in one binary glTF 2.0 file, a
//! light mesh to drop into an engine.
//!
//! # What is exported
//! One node per non-empty chunk column (named `chunk column X Z`, in (z, x)
//! order) under one root node `terrain`, each with one mesh of one
//! triangle-list primitive:
//!
//! - `POSITION` (`f32` VEC3): world studs (chunk column origin + local
//!   position, every value a whole cell or step, exact in `f32`).
//! - `NORMAL` (`f32` VEC3): the face normal (flat shading).
//! - `TEXCOORD_0` (`f32` VEC2): the centre of the face's palette-atlas
//!   cell ([`crate::mesh::lowpoly::palette_atlas`]), constant over the face.
//!
//! Every primitive uses the one material, whose base colour texture is the
//! palette atlas, embedded as a PNG in the binary chunk and sampled
//! nearest. Indices are `u32`, counter-clockwise seen from the front
//! (glTF's front faces).
//!
//! With a collision block size, a second root node `collision` holds one
//! node per chunk column (`collision X Z`) with the coarse block-max
//! collision mesh ([`ColumnHeightfield::block_max_from_grid`]): `POSITION`
//! and `NORMAL` only, no material, to be used as the engine's collider and
//! not drawn.

use std::io::Write;
use std::path::Path;

use gltf_json as json;
use json::validation::{Checked, USize64};
use rayon::prelude::*;

use std::sync::Arc;

use crate::io::ExportError;
use crate::io::export::glb::{CHUNK_BIN, glb_header};
use crate::mesh::lowpoly::column_heightfield::{ColumnHeightfield, check_block_cells};
use crate::mesh::lowpoly::greedy_heightfield::{LowPolyMesh, mesh_low_poly};
use crate::mesh::lowpoly::palette_atlas::{atlas_cell, atlas_rgba, cell_centre_uv};
use crate::terrain::ColumnCoord;
use crate::terrain::materials::MaterialLibrary;
use crate::terrain::storage::coords::{CELL_SIZE_STUDS, CHUNK_SIZE_CELLS};
use crate::terrain::storage::grid::Grid;
use crate::terrain::streaming::column_summary::{ColumnSummaries, ColumnSummary};

/// What [`export_low_poly_glb`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LowPolyGlbExport {
    /// Non-empty chunk columns (one node and mesh each).
    pub chunk_columns: usize,
    /// Vertices written.
    pub vertices: usize,
    /// Triangles written.
    pub triangles: usize,
    /// Triangles of the collision meshes (0 without them).
    pub collision_triangles: usize,
    /// File size, bytes.
    pub file_bytes: u64,
}

/// The low-poly meshes of every chunk column `grid` stores, in (z, x)
/// order, empty ones left out.
pub fn mesh_world_low_poly(grid: &Grid, step_cells: f32) -> Vec<(ColumnCoord, LowPolyMesh)> {
    let summaries = summarise_columns(grid);
    mesh_columns(&summaries, |column| {
        Ok(ColumnHeightfield::from_summaries(
            &summaries, column, step_cells,
        ))
    })
    .unwrap_or_default()
}

/// The summary of every chunk column `grid` stores, each made once (a
/// heightfield reads its column's and its four neighbours').
fn summarise_columns(grid: &Grid) -> ColumnSummaries {
    let mut columns: Vec<ColumnCoord> = grid.chunks().map(|(c, _)| ColumnCoord::of(c)).collect();
    columns.sort_by_key(|c| (c.z, c.x));
    columns.dedup();
    columns
        .into_par_iter()
        .map(|c| {
            (
                c,
                Arc::new(ColumnSummary::from_chunks(&grid.column_chunks(c))),
            )
        })
        .collect::<Vec<_>>()
        .into_iter()
        .collect()
}

/// The low-poly meshes of the heightfields `field` makes for every column
/// of `summaries`, in (z, x) order, empty ones left out.
fn mesh_columns(
    summaries: &ColumnSummaries,
    field: impl Fn(ColumnCoord) -> Result<ColumnHeightfield, String> + Sync,
) -> Result<Vec<(ColumnCoord, LowPolyMesh)>, String> {
    let mut columns: Vec<ColumnCoord> = summaries.keys().copied().collect();
    columns.sort_by_key(|c| (c.z, c.x));
    let meshed: Vec<_> = columns
        .into_par_iter()
        .map(|column| {
            let mut mesh = LowPolyMesh::default();
            mesh_low_poly(&field(column)?, &mut mesh);
            Ok((column, mesh))
        })
        .collect::<Result<_, String>>()?;
    Ok(meshed.into_iter().filter(|(_, m)| !m.is_empty()).collect())
}

/// Checks the settings of a low-poly export: a step of a finite, positive
/// number of cells and a collision block that divides a chunk side (1, 2,
/// 4, 8, 16 or 32 cells).
///
/// # Errors
/// A message naming the setting and the value.
pub fn check_low_poly_settings(
    step_cells: f32,
    collision_block_cells: Option<u32>,
) -> Result<(), String> {
    if !(step_cells.is_finite() && step_cells > 0.0) {
        return Err(format!(
            "the step height must be a positive number of cells, got {step_cells}"
        ));
    }
    collision_block_cells.map_or(Ok(()), check_block_cells)
}

/// Appends `bytes` to `bin` at a 4-byte boundary; returns (offset, length).
fn append(bin: &mut Vec<u8>, bytes: &[u8]) -> (u64, u64) {
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let offset = bin.len() as u64;
    bin.extend_from_slice(bytes);
    (offset, bytes.len() as u64)
}

/// Meshes `grid` in the low-poly style (steps of `step_cells` cells,
/// finite and positive) and writes it to `path` as binary glTF (see the
/// module docs), with block-max collision meshes of `collision_block_cells`
/// cells when given. Parent directories are created; a failed export
/// leaves an existing file as it was.
///
/// # Errors
/// [`ExportError::NoSurface`] for a world without surface,
/// [`ExportError::TooLarge`] past the 4 GiB a GLB can hold,
/// [`ExportError::InvalidSettings`] when the step is not a positive number
/// of cells or the collision block does not divide a chunk side (nothing
/// written), [`ExportError::Write`] when the file cannot be written.
pub fn export_low_poly_glb(
    grid: &Grid,
    path: &Path,
    step_cells: f32,
    collision_block_cells: Option<u32>,
) -> Result<LowPolyGlbExport, ExportError> {
    let built_ins = MaterialLibrary::default();
    export_low_poly_glb_with_library(grid, path, step_cells, collision_block_cells, &built_ins)
}

/// [`export_low_poly_glb`] with the palette atlas of `library`'s flat
/// colours (the world's materials, as the low-poly view draws them).
///
/// # Errors
/// As [`export_low_poly_glb`].
pub fn export_low_poly_glb_with_library(
    grid: &Grid,
    path: &Path,
    step_cells: f32,
    collision_block_cells: Option<u32>,
    library: &MaterialLibrary,
) -> Result<LowPolyGlbExport, ExportError> {
    check_low_poly_settings(step_cells, collision_block_cells).map_err(|message| {
        ExportError::InvalidSettings {
            path: path.to_path_buf(),
            message,
        }
    })?;
    let summaries = summarise_columns(grid);
    let collision = match collision_block_cells {
        Some(b) => mesh_columns(&summaries, |column| {
            ColumnHeightfield::block_max_from_summaries(&summaries, column, step_cells, b)
        })
        .map_err(|e| ExportError::write(path, e))?,
        None => Vec::new(),
    };
    let meshes = mesh_columns(&summaries, |column| {
        Ok(ColumnHeightfield::from_summaries(
            &summaries, column, step_cells,
        ))
    })
    .map_err(|e| ExportError::write(path, e))?;
    if meshes.is_empty() {
        return Err(ExportError::NoSurface {
            path: path.to_path_buf(),
        });
    }
    let (json_bytes, bin) =
        glb_parts(&meshes, &collision, library).map_err(|e| ExportError::write(path, e))?;
    let total = 12 + 8 + json_bytes.len() as u64 + 8 + bin.len() as u64;
    if total > u64::from(u32::MAX) {
        return Err(ExportError::TooLarge {
            path: path.to_path_buf(),
            message: format!("{total} bytes exceed the 4 GiB a .glb can hold"),
        });
    }
    crate::io::write_atomically(
        path,
        |tmp| {
            let mut out = std::io::BufWriter::new(
                std::fs::File::create(tmp).map_err(|e| ExportError::write(path, e))?,
            );
            // `total` and both chunk lengths are below 4 GiB (checked above).
            out.write_all(&glb_header(total as u32, json_bytes.len() as u32))
                .and_then(|()| out.write_all(&json_bytes))
                .and_then(|()| out.write_all(&(bin.len() as u32).to_le_bytes()))
                .and_then(|()| out.write_all(&CHUNK_BIN.to_le_bytes()))
                .and_then(|()| out.write_all(&bin))
                .and_then(|()| out.flush())
                .map_err(|e| ExportError::write(path, e))
        },
        |e| ExportError::write(path, e),
    )?;
    Ok(LowPolyGlbExport {
        chunk_columns: meshes.len(),
        vertices: meshes.iter().map(|(_, m)| m.positions.len()).sum(),
        triangles: meshes.iter().map(|(_, m)| m.triangle_count()).sum(),
        collision_triangles: collision.iter().map(|(_, m)| m.triangle_count()).sum(),
        file_bytes: std::fs::metadata(path).map_or(total, |m| m.len()),
    })
}

/// The JSON chunk (padded with spaces to 4 bytes) and the binary chunk
/// (padded with zeros) of the GLB for `meshes`.
fn glb_parts(
    meshes: &[(ColumnCoord, LowPolyMesh)],
    collision: &[(ColumnCoord, LowPolyMesh)],
    library: &MaterialLibrary,
) -> Result<(Vec<u8>, Vec<u8>), String> {
    let mut glb = GlbBuilder {
        root: json::Root {
            asset: json::Asset {
                generator: Some(format!("Strata {} (low-poly)", env!("CARGO_PKG_VERSION"))),
                ..json::Asset::default()
            },
            ..json::Root::default()
        },
        bin: Vec::new(),
    };
    let material = glb.push_palette_material(library)?;
    let mut children = Vec::with_capacity(meshes.len());
    let mut collision_children = Vec::with_capacity(collision.len());
    let parts = meshes
        .iter()
        .map(|p| (p, false))
        .chain(collision.iter().map(|p| (p, true)));
    for ((column, mesh), is_collision) in parts {
        let node = glb.push_column(*column, mesh, is_collision, material);
        if is_collision {
            collision_children.push(node);
        } else {
            children.push(node);
        }
    }
    glb.finish(children, collision_children)
}

/// A GLB being built: the glTF JSON and the binary chunk its views point
/// into (buffer 0).
struct GlbBuilder {
    root: json::Root,
    bin: Vec<u8>,
}

impl GlbBuilder {
    /// Appends `bytes` to the binary chunk (4-byte aligned) and adds a view
    /// of them.
    fn view(
        &mut self,
        bytes: &[u8],
        target: Option<json::buffer::Target>,
    ) -> json::Index<json::buffer::View> {
        let (offset, length) = append(&mut self.bin, bytes);
        self.root.push(json::buffer::View {
            buffer: json::Index::new(0),
            byte_length: USize64(length),
            byte_offset: Some(USize64(offset)),
            byte_stride: None,
            name: None,
            target: target.map(Checked::Valid),
            extensions: None,
            extras: None,
        })
    }

    /// Adds an accessor of `count` elements over the whole of `view`, with
    /// the bounds glTF requires for positions.
    fn accessor(
        &mut self,
        view: json::Index<json::buffer::View>,
        count: u64,
        component: json::accessor::ComponentType,
        type_: json::accessor::Type,
        bounds: Option<(glam::Vec3, glam::Vec3)>,
    ) -> json::Index<json::Accessor> {
        self.root.push(json::Accessor {
            buffer_view: Some(view),
            byte_offset: Some(USize64(0)),
            count: USize64(count),
            component_type: Checked::Valid(json::accessor::GenericComponentType(component)),
            extensions: None,
            extras: None,
            type_: Checked::Valid(type_),
            min: bounds.map(|(lo, _)| json::Value::from(lo.to_array().to_vec())),
            max: bounds.map(|(_, hi)| json::Value::from(hi.to_array().to_vec())),
            name: None,
            normalized: false,
            sparse: None,
        })
    }

    /// Adds the palette atlas (a PNG in the binary chunk), its nearest
    /// sampler and texture, and the one material that uses it.
    fn push_palette_material(
        &mut self,
        library: &MaterialLibrary,
    ) -> Result<json::Index<json::Material>, String> {
        let (w, h, pixels) = atlas_rgba(library);
        let mut png = Vec::new();
        image::ImageEncoder::write_image(
            image::codecs::png::PngEncoder::new(&mut png),
            &pixels,
            w,
            h,
            image::ExtendedColorType::Rgba8,
        )
        .map_err(|e| format!("the palette atlas could not be encoded: {e}"))?;
        let png_view = self.view(&png, None);
        let root = &mut self.root;
        let image = root.push(json::Image {
            buffer_view: Some(png_view),
            mime_type: Some(json::image::MimeType("image/png".to_string())),
            name: Some("palette atlas".to_string()),
            uri: None,
            extensions: None,
            extras: None,
        });
        let sampler = root.push(json::texture::Sampler {
            mag_filter: Some(Checked::Valid(json::texture::MagFilter::Nearest)),
            min_filter: Some(Checked::Valid(json::texture::MinFilter::Nearest)),
            wrap_s: Checked::Valid(json::texture::WrappingMode::ClampToEdge),
            wrap_t: Checked::Valid(json::texture::WrappingMode::ClampToEdge),
            ..json::texture::Sampler::default()
        });
        let texture = root.push(json::Texture {
            name: None,
            sampler: Some(sampler),
            source: image,
            extensions: None,
            extras: None,
        });
        Ok(root.push(json::Material {
            name: Some("palette".to_string()),
            pbr_metallic_roughness: json::material::PbrMetallicRoughness {
                base_color_texture: Some(json::texture::Info {
                    index: texture,
                    tex_coord: 0,
                    extensions: None,
                    extras: None,
                }),
                metallic_factor: json::material::StrengthFactor(0.0),
                roughness_factor: json::material::StrengthFactor(1.0),
                ..json::material::PbrMetallicRoughness::default()
            },
            ..json::Material::default()
        }))
    }

    /// Adds the mesh of one chunk column (positions moved to world studs;
    /// texture coordinates and `material` unless it is a collision mesh)
    /// and the node that holds it.
    fn push_column(
        &mut self,
        column: ColumnCoord,
        mesh: &LowPolyMesh,
        is_collision: bool,
        material: json::Index<json::Material>,
    ) -> json::Index<json::Node> {
        use json::accessor::{ComponentType as C, Type as T};
        let array = Some(json::buffer::Target::ArrayBuffer);
        let origin = glam::Vec3::new(
            (column.x * CHUNK_SIZE_CELLS) as f32 * CELL_SIZE_STUDS,
            0.0,
            (column.z * CHUNK_SIZE_CELLS) as f32 * CELL_SIZE_STUDS,
        );
        let positions: Vec<glam::Vec3> = mesh.positions.iter().map(|&p| origin + p).collect();
        let (lo, hi) = positions.iter().fold(
            (glam::Vec3::INFINITY, glam::Vec3::NEG_INFINITY),
            |(lo, hi), &p| (lo.min(p), hi.max(p)),
        );
        let f32s = |values: &mut dyn Iterator<Item = f32>| -> Vec<u8> {
            values.flat_map(f32::to_le_bytes).collect()
        };
        let pos_bytes = f32s(&mut positions.iter().flat_map(|p| p.to_array()));
        let normal_bytes = f32s(&mut mesh.normals.iter().flat_map(|n| n.to_array()));
        let index_bytes: Vec<u8> = mesh.indices.iter().flat_map(|i| i.to_le_bytes()).collect();
        let n = mesh.positions.len() as u64;
        let pos_view = self.view(&pos_bytes, array);
        let normal_view = self.view(&normal_bytes, array);
        // Collision meshes are not drawn: no texture coordinates.
        let uv_view = (!is_collision).then(|| {
            let uv_bytes = f32s(
                &mut (0..mesh.positions.len())
                    .flat_map(|v| cell_centre_uv(atlas_cell(mesh.materials[v], mesh.skirt[v]))),
            );
            self.view(&uv_bytes, array)
        });
        let index_view = self.view(&index_bytes, Some(json::buffer::Target::ElementArrayBuffer));
        let pos = self.accessor(pos_view, n, C::F32, T::Vec3, Some((lo, hi)));
        let normal = self.accessor(normal_view, n, C::F32, T::Vec3, None);
        let uv = uv_view.map(|v| self.accessor(v, n, C::F32, T::Vec2, None));
        let indices = self.accessor(
            index_view,
            mesh.indices.len() as u64,
            C::U32,
            T::Scalar,
            None,
        );
        let mut attributes = std::collections::BTreeMap::new();
        attributes.insert(Checked::Valid(json::mesh::Semantic::Positions), pos);
        attributes.insert(Checked::Valid(json::mesh::Semantic::Normals), normal);
        if let Some(uv) = uv {
            attributes.insert(Checked::Valid(json::mesh::Semantic::TexCoords(0)), uv);
        }
        let mesh_index = self.root.push(json::Mesh {
            extensions: None,
            extras: None,
            name: None,
            primitives: vec![json::mesh::Primitive {
                attributes,
                extensions: None,
                extras: None,
                indices: Some(indices),
                material: (!is_collision).then_some(material),
                mode: Checked::Valid(json::mesh::Mode::Triangles),
                targets: None,
            }],
            weights: None,
        });
        self.root.push(json::Node {
            mesh: Some(mesh_index),
            name: Some(if is_collision {
                format!("collision {} {}", column.x, column.z)
            } else {
                format!("chunk column {} {}", column.x, column.z)
            }),
            ..json::Node::default()
        })
    }

    /// Pads the binary chunk, adds its buffer, the `terrain` root node (and
    /// the `collision` one when there are collision meshes) and the scene,
    /// and returns the padded JSON chunk and the binary chunk.
    fn finish(
        mut self,
        children: Vec<json::Index<json::Node>>,
        collision_children: Vec<json::Index<json::Node>>,
    ) -> Result<(Vec<u8>, Vec<u8>), String> {
        let GlbBuilder { root, bin } = &mut self;
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        root.push(json::Buffer {
            byte_length: USize64(bin.len() as u64),
            name: None,
            uri: None,
            extensions: None,
            extras: None,
        });
        let terrain = root.push(json::Node {
            children: Some(children),
            name: Some("terrain".to_string()),
            ..json::Node::default()
        });
        let mut nodes = vec![terrain];
        if !collision_children.is_empty() {
            nodes.push(root.push(json::Node {
                children: Some(collision_children),
                name: Some("collision".to_string()),
                ..json::Node::default()
            }));
        }
        let scene = root.push(json::Scene {
            extensions: None,
            extras: None,
            name: None,
            nodes,
        });
        root.scene = Some(scene);
        let mut json_bytes = root.to_vec().map_err(|e| e.to_string())?;
        while !json_bytes.len().is_multiple_of(4) {
            json_bytes.push(b' ');
        }
        Ok((json_bytes, self.bin))
    }
}
