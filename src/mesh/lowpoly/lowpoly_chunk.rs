//! The low-poly view's mesh of one chunk: the part
//! of its chunk column's greedy heightfield mesh whose blocks top out in
//! this chunk, at the chunk's level by decimation, as an ordinary
//! [`ChunkMesh`] so the pipeline, publication, culling and picking treat
//! it like a Surface Nets mesh.
//!
//! A chunk draws a block when one of the block's columns has its top cell
//! in the chunk; a block whose highest column lies in a chunk above is
//! capped at this chunk's ceiling (hidden under the real top the chunk
//! above draws). Walls drop from a block's top to the neighbours' lowest
//! full-detail top, past the chunk's floor where the land falls further,
//! so stacked chunks never need to agree on where a wall ends.

use glam::Vec3;

use crate::terrain::storage::coords::{CHUNK_SIZE_STUDS, ChunkCoord, ColumnCoord};
use crate::terrain::storage::grid::Grid;

use crate::mesh::ChunkMesh;
use crate::mesh::lowpoly::column_heightfield::ColumnHeightfield;
use crate::mesh::lowpoly::greedy_heightfield::{LowPolyBlocks, LowPolyMesh, mesh_low_poly_blocks};
use crate::mesh::mesh_style::low_poly_block_cells;

/// Meshes chunk `coord` of `grid` in the low-poly style at `level` with
/// terraces of `step_cells` (finite, positive), reading the chunk's column
/// and its four edge neighbours (every chunk of them must be in `grid`).
/// Positions are chunk-local studs; every quad has one material with
/// weight 255 and its face normal; there are no render-only skirts.
pub fn mesh_low_poly_chunk(
    grid: &Grid,
    coord: ChunkCoord,
    level: u8,
    step_cells: f32,
) -> ChunkMesh {
    let field = ColumnHeightfield::ground_from_grid(grid, ColumnCoord::of(coord), step_cells);
    let mut low = LowPolyMesh::default();
    mesh_low_poly_blocks(
        &field,
        LowPolyBlocks {
            block_cells: low_poly_block_cells(level),
            chunk_y: Some(coord.0.y),
        },
        &mut low,
    );
    let mut mesh = to_chunk_mesh(&low, coord.0.y);
    mesh.style = crate::mesh::MeshStyle::LowPoly { step_cells };
    mesh
}

/// `low` (chunk-column-local, y from 0) as the mesh of chunk layer `chunk_y`.
fn to_chunk_mesh(low: &LowPolyMesh, chunk_y: i32) -> ChunkMesh {
    let floor_studs = chunk_y as f32 * CHUNK_SIZE_STUDS;
    let mut mesh = ChunkMesh::default();
    mesh.positions = low
        .positions
        .iter()
        .map(|p| Vec3::new(p.x, p.y - floor_studs, p.z))
        .collect();
    mesh.normals = low.normals.clone();
    mesh.material_ids = low.materials.iter().map(|m| [m.0; 4]).collect();
    mesh.material_weights = vec![[255, 0, 0, 0]; low.positions.len()];
    // The cell each vertex sits on, clamped to the chunk's sample range
    // (walls reach below the floor): it names the vertex for audits.
    mesh.vertex_cubes = mesh
        .positions
        .iter()
        .map(|p| {
            let cell = (*p / crate::terrain::storage::coords::CELL_SIZE_STUDS).floor();
            [
                cell.x.clamp(-1.0, 127.0) as i8,
                cell.y.clamp(-1.0, 127.0) as i8,
                cell.z.clamp(-1.0, 127.0) as i8,
            ]
        })
        .collect();
    mesh.indices = low.indices.clone();
    mesh.skirt_start_vertex = mesh.positions.len() as u32;
    mesh.skirt_start_index = mesh.indices.len() as u32;
    mesh
}
