//! Which chunk columns the view needs, nearest first (spec §12), and whether
//! the drawn ground has holes.
//!
//! Meshing within the draw distance is the main demand: every column whose
//! chunks may be meshed (the preload range) plus one column around them,
//! because Surface Nets reads the neighbours of a chunk. The ring of offsets
//! is sorted once per radius, so a frame's demand costs one pass over it and
//! allocates nothing once the buffers have grown.

use glam::DVec3;

use crate::terrain::storage::coords::{CHUNK_SIZE_STUDS, ColumnCoord};
use crate::terrain::storage::grid::Grid;

use super::lod::distance_to_chunk_studs;
use super::world_meshes::WorldMeshes;

/// The columns around a camera within a radius, nearest first.
#[derive(Clone, Debug, Default)]
pub struct ColumnDemand {
    /// Offsets `(dx, dz)` in chunks within `radius_chunks`, sorted by distance.
    offsets: Vec<(i32, i32)>,
    radius_chunks: i32,
    columns: Vec<ColumnCoord>,
}

impl ColumnDemand {
    /// The columns whose footprint lies within `radius_studs` (horizontally)
    /// of `camera_pos_world`, nearest first.
    pub fn columns_around(&mut self, camera_pos_world: DVec3, radius_studs: f64) -> &[ColumnCoord] {
        let chunk = CHUNK_SIZE_STUDS as f64;
        let radius_chunks = (radius_studs / chunk).ceil() as i32 + 1;
        if radius_chunks != self.radius_chunks || self.offsets.is_empty() {
            self.radius_chunks = radius_chunks;
            self.offsets.clear();
            for dz in -radius_chunks..=radius_chunks {
                for dx in -radius_chunks..=radius_chunks {
                    self.offsets.push((dx, dz));
                }
            }
            self.offsets
                .sort_by_key(|&(dx, dz)| (dx * dx + dz * dz, dz, dx));
        }
        let cx = (camera_pos_world.x / chunk).floor() as i32;
        let cz = (camera_pos_world.z / chunk).floor() as i32;
        self.columns.clear();
        for &(dx, dz) in &self.offsets {
            let column = ColumnCoord::new(cx.saturating_add(dx), cz.saturating_add(dz));
            if column.distance_xz_studs(camera_pos_world) <= radius_studs {
                self.columns.push(column);
            }
        }
        &self.columns
    }
}

/// Non-empty chunks within `draw_distance_studs` of the camera that have no
/// mesh at any level, plus columns within it that are not resident (their
/// ground is unknown, so counted as missing unless outside the world per
/// `is_outside`). Zero means the drawn ground has no hole. Measured over the
/// whole draw distance, not only the frustum, so it is the stricter count.
pub fn missing_chunks(
    grid: &Grid,
    meshes: &WorldMeshes,
    columns: &[ColumnCoord],
    camera_pos_world: DVec3,
    draw_distance_studs: f64,
    is_outside: impl Fn(ColumnCoord) -> bool,
) -> usize {
    let mut missing = columns
        .iter()
        .filter(|c| {
            c.distance_xz_studs(camera_pos_world) <= draw_distance_studs
                && !grid.is_column_resident(**c)
                && !is_outside(**c)
        })
        .count();
    missing += grid
        .chunks()
        .filter(|(coord, _)| {
            meshes.level_of(*coord).is_none()
                && distance_to_chunk_studs(camera_pos_world, *coord) <= draw_distance_studs
        })
        .count();
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_come_nearest_first_and_within_the_radius() {
        let mut d = ColumnDemand::default();
        let cam = DVec3::new(64.0, 500.0, 64.0);
        let cols = d.columns_around(cam, 300.0).to_vec();
        assert_eq!(cols[0], ColumnCoord::new(0, 0));
        assert!(cols.iter().all(|c| c.distance_xz_studs(cam) <= 300.0));
        // Every column within the radius is listed (a 5×5 block at least).
        for z in -2..=2 {
            for x in -2..=2 {
                assert!(cols.contains(&ColumnCoord::new(x, z)), "{x},{z}");
            }
        }
        let far = d.columns_around(DVec3::new(2_097_152.0, 0.0, 2_097_152.0), 300.0);
        assert_eq!(far[0], ColumnCoord::new(16384, 16384));
    }
}
