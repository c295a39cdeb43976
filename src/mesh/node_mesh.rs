//! Meshes of the nodes above the chunk (spec §13), from coarse samples a
//! [`SurfaceSampler`] answers directly.
//!
//! A node's sample field has the shape of a level-3 chunk's (4 samples per
//! axis plus 2 of padding) with `s = 2^level` cells per sample, so the same
//! Surface Nets extraction and the same skirts make its mesh.
//!
//! A sample's solid and water fractions are averages over the block of
//! `2s` cells centred on the sample, estimated from 2×2 columns of the
//! source's surface. Centred blocks two samples tall make the fraction of a
//! column with surface height `h` at sample height `y` exactly
//! `clamp(0.5 + (h − y) / 2s, 0, 1)`: linear between neighbouring samples,
//! so the extracted surface crosses at `h` whatever the spacing. (Blocks
//! one sample tall, as at the chunk levels, lose the whole relief once a
//! sample is taller than the land: at level 9 one sample is 512 cells and
//! the world's hills are 240.) Below the world's floor counts as solid, so
//! nodes show no underside. The material follows the §6 vote: the surface
//! material where the block holds the surface or lies just under it
//! (exposed cells outweigh buried ones), the body rock deeper down.

use crate::terrain::storage::cell::Material;
use crate::terrain::storage::node::{NODE_SAMPLES, NodeKey};
use crate::terrain::streaming::surface_sampler::{SurfaceColumn, SurfaceSampler};

use super::chunk_mesh::ChunkMesh;
use super::field::{PAD, SampleField, inside_bits};
use super::skirts::{add_skirts_sized, skirt_depth_studs};
use super::surface_nets::{MeshOptions, SurfaceNets};

/// Sub-columns per block axis whose heights are averaged into a sample.
pub const HEIGHTS_PER_BLOCK_AXIS: usize = 2;

/// How far skirts of a node reach past its side faces, studs.
pub const NODE_SKIRT_OVERHANG_STUDS: f32 = 1.5;

/// Share of the block `[y − s, y + s)` that lies in `[lo, hi)`, in `0..=1`.
#[inline]
fn band_fraction(lo: f64, hi: f64, y: f64, s: f64) -> f64 {
    let (b0, b1) = (y - s, y + s);
    (hi.clamp(b0, b1) - lo.clamp(b0, b1)).max(0.0) / (2.0 * s)
}

/// Padded sample columns per node axis.
const DIM: usize = NODE_SAMPLES + 2 * PAD;

/// The source's surface under one column of nodes: what every node of a
/// `(level, x, z)` column reads, sampled once for all its heights (a
/// level-4 column has six nodes from under the floor to over the hills).
pub struct NodeColumns {
    /// `(level, index x, index z)` these columns belong to.
    key: Option<(u8, i32, i32)>,
    /// Heights around each padded sample column (x fastest), cells; NaN
    /// outside the footprint.
    heights: [[f64; HEIGHTS_PER_BLOCK_AXIS * HEIGHTS_PER_BLOCK_AXIS]; DIM * DIM],
    /// Each padded sample column's own description.
    centre: [Option<SurfaceColumn>; DIM * DIM],
}

impl Default for NodeColumns {
    fn default() -> Self {
        NodeColumns {
            key: None,
            heights: [[f64::NAN; HEIGHTS_PER_BLOCK_AXIS * HEIGHTS_PER_BLOCK_AXIS]; DIM * DIM],
            centre: [None; DIM * DIM],
        }
    }
}

impl NodeColumns {
    /// Samples the columns of `key`'s node column unless they are held already.
    pub fn sample(&mut self, sampler: &dyn SurfaceSampler, key: NodeKey) {
        let id = (key.level, key.index.x, key.index.z);
        if self.key == Some(id) {
            return;
        }
        let s_cells = key.spacing_cells();
        let s = s_cells as f64;
        let [min_x, _, min_z] = key.min_cell();
        let k = HEIGHTS_PER_BLOCK_AXIS;
        for pz in 0..DIM {
            // Samples sit at block centres, where the mesher places them.
            let z = min_z + (pz as i64 - PAD as i64) * s_cells + s_cells / 2;
            for px in 0..DIM {
                let x = min_x + (px as i64 - PAD as i64) * s_cells + s_cells / 2;
                let c = px + DIM * pz;
                for (i, h) in self.heights[c].iter_mut().enumerate() {
                    let fx = ((i % k) as f64 + 0.5) / k as f64 - 0.5;
                    let fz = ((i / k) as f64 + 0.5) / k as f64 - 0.5;
                    *h = sampler
                        .height_cells_coarse(x as f64 + fx * s, z as f64 + fz * s, s)
                        .unwrap_or(f64::NAN);
                }
                self.centre[c] = sampler.column_coarse(x, z, s);
            }
        }
        self.key = Some(id);
    }
}

/// Fills `field` (reshaped to [`NODE_SAMPLES`] per axis) with the coarse
/// samples of node `key` from `sampler` (see the module docs). Columns
/// outside the sampler's footprint are empty.
pub fn gather_node(field: &mut SampleField, sampler: &dyn SurfaceSampler, key: NodeKey) {
    let mut columns = NodeColumns::default();
    columns.sample(sampler, key);
    gather_node_from(field, &columns, key);
}

/// [`gather_node`] from columns already sampled for `key`'s node column.
pub fn gather_node_from(field: &mut SampleField, columns: &NodeColumns, key: NodeKey) {
    if field.n != NODE_SAMPLES {
        *field = SampleField::new(NODE_SAMPLES);
    }
    let s_cells = key.spacing_cells();
    field.spacing_cells = s_cells as u32;
    let s = s_cells as f64;
    let dim = field.dim;
    let min_y = key.min_cell()[1];
    for pz in 0..dim {
        for px in 0..dim {
            let heights = &columns.heights[px + DIM * pz];
            let centre = columns.centre[px + DIM * pz];
            for py in 0..dim {
                let y = (min_y + (py as i64 - PAD as i64) * s_cells) as f64 + 0.5 * s;
                let i = px + dim * (py + dim * pz);
                let Some(col) = centre else {
                    field.solid[i] = 0;
                    field.water[i] = 0;
                    field.material[i] = Material::AIR.0;
                    continue;
                };
                let mut solid = 0.0;
                let mut water = 0.0;
                for &h in heights {
                    // A sub-column past the footprint's edge takes the centre's height.
                    let h = if h.is_nan() { col.height_cells } else { h };
                    solid += band_fraction(f64::NEG_INFINITY, h, y, s);
                    if col.water_level_cells > h {
                        water += band_fraction(h, col.water_level_cells, y, s);
                    }
                }
                let solid = (solid / heights.len() as f64 * 255.0).round() as u8;
                let water = (water / heights.len() as f64 * 255.0).round() as u8;
                field.solid[i] = solid;
                field.water[i] = water;
                field.material[i] = if solid > 0 {
                    // Exposed cells outweigh buried ones: a sample within
                    // two samples under the surface takes its material.
                    if col.height_cells < y + 2.0 * s {
                        col.material.0
                    } else {
                        Material::ROCK.0
                    }
                } else if water > 0 {
                    Material::WATER.0
                } else {
                    Material::AIR.0
                };
            }
        }
    }
    for pz in 0..dim {
        for py in 0..dim {
            let row = dim * (py + dim * pz);
            field.inside_rows[py + dim * pz] = inside_bits(&field.solid[row..row + dim]);
        }
    }
}

/// Meshes node `key` from `sampler` into `out` (cleared first), with
/// skirts, using `mesher`, `field` and `columns` as scratch (`columns` is
/// reused when consecutive calls mesh nodes of one node column). Positions are node-local
/// studs (origin at [`NodeKey::origin_world`]).
pub fn mesh_node(
    mesher: &mut SurfaceNets,
    field: &mut SampleField,
    columns: &mut NodeColumns,
    sampler: &dyn SurfaceSampler,
    key: NodeKey,
    out: &mut ChunkMesh,
) {
    out.clear();
    let [_, min_y, _] = key.min_cell();
    let pad_cells = PAD as f64 * key.spacing_cells() as f64;
    let below = (min_y as f64 - pad_cells) > sampler.top_cells();
    if below {
        // Entirely above the highest surface: nothing to mesh.
        return;
    }
    columns.sample(sampler, key);
    gather_node_from(field, columns, key);
    mesher.mesh_field(field, MeshOptions::default(), out);
    add_water_sheet(out, sampler, key);
    if !out.is_empty() {
        add_skirts_sized(
            out,
            skirt_depth_studs(key.level),
            NODE_SAMPLES,
            NODE_SKIRT_OVERHANG_STUDS,
            key.side_studs() as f32,
        );
    }
}

/// Appends the node's water as a flat sheet at the source's water level
/// (spec §13 "a water sheet one cell deep is not averaged away"): one quad
/// per sample square where any corner's ground lies below the water, at
/// the level itself, so lakes and sea reach the horizon however coarse the
/// samples. Only the node whose height range holds the level draws it. The
/// sheet is terrain geometry with the Water material (far water needs no
/// waves); the terrain surface hides it where the shore rises above it.
pub fn add_water_sheet(out: &mut ChunkMesh, sampler: &dyn SurfaceSampler, key: NodeKey) {
    let n = NODE_SAMPLES;
    let s = key.spacing_cells();
    let [x0, y0, z0] = key.min_cell();
    let side = key.side_cells();
    let [w, d] = sampler.extent_cells();
    // The level of the sea (one per source), read inside the footprint.
    let probe = |v: i64, extent: i64| (v + side / 2).clamp(0, (extent - 1).max(0));
    let Some(level) = sampler
        .column_coarse(probe(x0, w), probe(z0, d), s as f64)
        .map(|c| c.water_level_cells)
    else {
        return;
    };
    if !level.is_finite() || level < y0 as f64 || level >= (y0 + side) as f64 {
        return;
    }
    let mut ground = [[f64::INFINITY; NODE_SAMPLES + 1]; NODE_SAMPLES + 1];
    for (j, row) in ground.iter_mut().enumerate() {
        for (i, h) in row.iter_mut().enumerate() {
            let (x, z) = ((x0 + i as i64 * s) as f64, (z0 + j as i64 * s) as f64);
            *h = sampler
                .height_cells_coarse(x, z, s as f64)
                .unwrap_or(f64::INFINITY);
        }
    }
    let mut vertex_of = [[u32::MAX; NODE_SAMPLES + 1]; NODE_SAMPLES + 1];
    let y_studs = ((level - y0 as f64) * 4.0) as f32;
    let spacing_studs = s as f32 * 4.0;
    let mut vertex = |out: &mut ChunkMesh, i: usize, j: usize| -> u32 {
        if vertex_of[j][i] == u32::MAX {
            vertex_of[j][i] = out.positions.len() as u32;
            out.positions.push(glam::Vec3::new(
                i as f32 * spacing_studs,
                y_studs,
                j as f32 * spacing_studs,
            ));
            out.normals.push(glam::Vec3::Y);
            out.material_ids.push([Material::WATER.0; 4]);
            out.material_weights.push([255, 0, 0, 0]);
            // The cube a border vertex lies on, for the skirts' overhang.
            let cube = |c: usize| (c as i32 - 1).clamp(-1, n as i32 - 1) as i8;
            out.vertex_cubes.push([cube(i), 0, cube(j)]);
        }
        vertex_of[j][i]
    };
    for j in 0..n {
        for i in 0..n {
            let lowest = ground[j][i]
                .min(ground[j][i + 1])
                .min(ground[j + 1][i])
                .min(ground[j + 1][i + 1]);
            if lowest >= level {
                continue;
            }
            let a = vertex(out, i, j);
            let b = vertex(out, i, j + 1);
            let c = vertex(out, i + 1, j + 1);
            let e = vertex(out, i + 1, j);
            out.indices.extend_from_slice(&[a, b, c, a, c, e]);
        }
    }
    out.skirt_start_vertex = out.positions.len() as u32;
    out.skirt_start_index = out.indices.len() as u32;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::streaming::surface_sampler::SurfaceColumn;
    use glam::IVec3;

    /// A flat plain at `height` cells with water up to `water` cells, on
    /// `[0, size)²`.
    struct Plain {
        height: f64,
        water: f64,
        size: f64,
    }

    impl SurfaceSampler for Plain {
        fn height_cells(&self, x: f64, z: f64) -> Option<f64> {
            ((0.0..self.size).contains(&x) && (0.0..self.size).contains(&z)).then_some(self.height)
        }
        fn column(&self, x: i64, z: i64) -> Option<SurfaceColumn> {
            self.height_cells(x as f64, z as f64)
                .map(|h| SurfaceColumn {
                    height_cells: h,
                    material: Material::GRASS,
                    water_level_cells: self.water,
                    floor_cells: 0.0,
                })
        }
        fn top_cells(&self) -> f64 {
            self.height.max(self.water)
        }
        fn extent_cells(&self) -> [i64; 2] {
            [self.size as i64; 2]
        }
    }

    #[test]
    fn samples_average_the_block_and_keep_a_thin_water_sheet() {
        // Ground at 40 cells, water to 41: one cell of water over a
        // 16-cell block is 1/16 of it, not averaged away.
        let plain = Plain {
            height: 40.0,
            water: 41.0,
            size: 1e6,
        };
        let mut field = SampleField::new(NODE_SAMPLES);
        let key = NodeKey::new(4, IVec3::new(3, 0, 3));
        gather_node(&mut field, &plain, key);
        assert_eq!(field.spacing_cells, 16);
        let at = |py: usize| field.index(3, py, 3);
        // Samples at y = 40 and 56 average [24, 56) and [40, 72): 16 and
        // 0 of 32 cells solid; y = 24 averages [8, 40): full.
        assert_eq!(field.solid[at(PAD + 2)], 128);
        assert_eq!(field.solid[at(PAD + 3)], 0);
        assert_eq!(field.solid[at(PAD + 1)], 255);
        assert_eq!(field.water[at(PAD + 2)], 8, "1 of 32 cells");
        assert_eq!(field.water[at(PAD + 3)], 8, "[40, 72) holds it too");
        assert_eq!(field.material[at(PAD + 2)], Material::GRASS.0);
        assert_eq!(field.material[at(PAD)], Material::ROCK.0, "buried deep");
        assert_eq!(field.material[at(PAD + 1)], Material::GRASS.0, "just under");
    }

    #[test]
    fn a_plain_meshes_flat_at_its_height_with_skirts() {
        let plain = Plain {
            height: 40.0,
            water: f64::NEG_INFINITY,
            size: 1e6,
        };
        for level in [4u8, 6, 9] {
            // The surface belongs to the node holding the sample below it:
            // at level 9 samples sit at ±256 cells, so that is the node
            // under y = 0.
            let mut mesh = ChunkMesh::default();
            let mut owner = None;
            for y in [-1, 0] {
                let key = NodeKey::new(level, IVec3::new(2, y, 2));
                mesh_node(
                    &mut SurfaceNets::new(),
                    &mut SampleField::new(NODE_SAMPLES),
                    &mut NodeColumns::default(),
                    &plain,
                    key,
                    &mut mesh,
                );
                if !mesh.is_empty() {
                    assert!(owner.is_none(), "level {level}: one owner");
                    owner = Some((key, mesh.clone()));
                }
            }
            let (key, mesh) = owner.unwrap_or_else(|| panic!("level {level}: no mesh"));
            assert!(mesh.skirt_start_index < mesh.indices.len() as u32);
            let side = key.side_studs() as f32;
            for p in &mesh.positions[..mesh.skirt_start_vertex as usize] {
                assert!(p.x >= -1e-3 && p.x <= side + 1e-3 && p.z >= -1e-3 && p.z <= side + 1e-3);
            }
            // Centred two-sample blocks put the crossing at the true height
            // (40 cells = 160 studs) at every level, up to the 8-bit
            // rounding of the fractions (2 samples / 255).
            let rounding_studs = 2.0 * 4.0 * key.spacing_cells() as f32 / 255.0;
            let origin_y = key.origin_world().y as f32;
            let ys: Vec<f32> = mesh.positions[..mesh.skirt_start_vertex as usize]
                .iter()
                .map(|p| p.y + origin_y)
                .collect();
            let y = ys[0];
            assert!(ys.iter().all(|&v| (v - y).abs() < 1e-3), "flat");
            assert!((y - 160.0).abs() <= rounding_studs, "level {level}: {y}");
        }
    }

    #[test]
    fn a_one_cell_lake_stays_a_sheet_at_every_level() {
        // Ground at 39.5 cells, water at 40.5: one cell deep.
        let lake = Plain {
            height: 39.5,
            water: 40.5,
            size: 1e6,
        };
        for level in [4u8, 7, 10] {
            let key = NodeKey::new(level, IVec3::new(1, 0, 1));
            let mut mesh = ChunkMesh::default();
            mesh_node(
                &mut SurfaceNets::new(),
                &mut SampleField::new(NODE_SAMPLES),
                &mut NodeColumns::default(),
                &lake,
                key,
                &mut mesh,
            );
            let water: Vec<usize> = (0..mesh.skirt_start_vertex as usize)
                .filter(|&v| mesh.material_ids[v][0] == Material::WATER.0)
                .collect();
            // A 5 × 5 grid of sheet corners over the whole node.
            assert_eq!(water.len(), 25, "level {level}");
            for v in water {
                assert!((mesh.positions[v].y - 162.0).abs() < 1e-3);
                assert_eq!(mesh.normals[v], glam::Vec3::Y);
            }
        }
    }

    #[test]
    fn nodes_of_one_column_share_their_samples_exactly() {
        let source = crate::terrain::generation::generated_columns::GeneratedColumns::new(
            &crate::terrain::generation::generate::GeneratorSettings {
                seed: 7,
                size_cells: 1 << 16,
            },
        );
        use crate::terrain::streaming::column_source::ColumnSource;
        let sampler = source.surface_sampler().unwrap();
        let mut shared = NodeColumns::default();
        let (mut mesher, mut field) = (SurfaceNets::new(), SampleField::new(NODE_SAMPLES));
        let mut surfaces = 0;
        for y in -1..5 {
            let key = NodeKey::new(4, IVec3::new(300, y, 211));
            let (mut a, mut b) = (ChunkMesh::default(), ChunkMesh::default());
            mesh_node(&mut mesher, &mut field, &mut shared, sampler, key, &mut a);
            let mut fresh = NodeColumns::default();
            mesh_node(&mut mesher, &mut field, &mut fresh, sampler, key, &mut b);
            assert_eq!(a, b, "y {y}");
            surfaces += usize::from(!a.is_empty());
        }
        assert!(surfaces >= 1);
    }

    #[test]
    fn nodes_above_the_highest_surface_are_empty_without_sampling() {
        let plain = Plain {
            height: 40.0,
            water: 0.0,
            size: 1e6,
        };
        let mut mesh = ChunkMesh::default();
        mesh_node(
            &mut SurfaceNets::new(),
            &mut SampleField::new(NODE_SAMPLES),
            &mut NodeColumns::default(),
            &plain,
            NodeKey::new(4, IVec3::new(0, 5, 0)),
            &mut mesh,
        );
        assert!(mesh.is_empty());
    }
}
