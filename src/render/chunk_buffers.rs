//! Per-chunk GPU vertex and index buffers, kept in step with
//! [`WorldMeshes`], and the per-frame list of chunks to draw.
//!
//! Uploads follow [`WorldMeshes::take_changed`]: exactly the chunks whose mesh
//! changed are re-uploaded, and chunks whose mesh is gone are dropped, so an
//! edit costs GPU traffic proportional to what it touched. Each frame the
//! chunks are culled on the CPU against the view frustum (chunk mesh bounds,
//! camera-relative) and sorted front to back, which lets early depth testing
//! skip hidden fragments (valuable on software rasterizers).

use glam::{Mat4, Vec3, Vec4};
use rustc_hash::FxHashMap;
use wgpu::util::DeviceExt;

use crate::camera::Camera;
use crate::mesh::ChunkMesh;
use crate::pipeline::WorldMeshes;
use crate::terrain::coords::ChunkCoord;

use super::terrain_pipeline::{ChunkInstance, TerrainVertex};

/// GPU copy of one chunk's mesh.
pub struct ChunkGpu {
    /// [`TerrainVertex`] buffer.
    pub vertex_buffer: wgpu::Buffer,
    /// `u32` triangle-list index buffer.
    pub index_buffer: wgpu::Buffer,
    /// Number of indices.
    pub index_count: u32,
    /// Number of vertices.
    pub vertex_count: u32,
    /// Mesh bounds in chunk-local studs `(min, max)`.
    pub bounds_local: (Vec3, Vec3),
    /// Level of detail the mesh was built at.
    pub level: u8,
}

/// What [`ChunkBuffers::sync`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyncStats {
    /// Chunks (re)uploaded.
    pub uploaded: usize,
    /// Chunks whose buffers were dropped because their mesh is gone.
    pub removed: usize,
    /// Bytes written to new vertex and index buffers.
    pub bytes: usize,
}

/// What [`ChunkBuffers::prepare`] selected for this frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrawStats {
    /// Chunks with GPU buffers.
    pub resident_chunks: usize,
    /// Chunks inside the view frustum (drawn).
    pub drawn_chunks: usize,
    /// Triangles in the drawn chunks.
    pub drawn_triangles: usize,
}

/// All chunk buffers plus this frame's instance buffer and draw list.
pub struct ChunkBuffers {
    chunks: FxHashMap<ChunkCoord, ChunkGpu>,
    /// Uploaded but not yet drawn (`None`: the chunk's removal is staged).
    staged: FxHashMap<ChunkCoord, Option<ChunkGpu>>,
    instance_buffer: wgpu::Buffer,
    instance_capacity: usize,
    /// Chunks to draw this frame; draw `i` uses instance `i`.
    draws: Vec<ChunkCoord>,
}

/// The six planes of a camera-relative view frustum, `ax + by + cz + d >= 0` inside.
/// Reversed-Z infinite projection: the far plane is at infinity and is omitted.
#[derive(Clone, Copy, Debug)]
pub struct Frustum {
    planes: [Vec4; 5],
}

impl Frustum {
    /// Extracts the planes from a camera-relative `clip_from_world` (Gribb–Hartmann).
    pub fn from_clip_from_world(m: Mat4) -> Frustum {
        let (r0, r1, r2, r3) = (m.row(0), m.row(1), m.row(2), m.row(3));
        Frustum {
            // Left, right, bottom, top, near (reversed-Z: z <= w).
            planes: [r3 + r0, r3 - r0, r3 + r1, r3 - r1, r3 - r2],
        }
    }

    /// True when the box `[min, max]` (camera-relative studs) may be visible.
    pub fn intersects_aabb(&self, min: Vec3, max: Vec3) -> bool {
        self.planes.iter().all(|p| {
            let n = p.truncate();
            let v = Vec3::select(n.cmpge(Vec3::ZERO), max, min);
            n.dot(v) + p.w >= 0.0
        })
    }
}

impl ChunkBuffers {
    /// An empty set.
    pub fn new(device: &wgpu::Device) -> Self {
        let instance_capacity = 256;
        ChunkBuffers {
            chunks: FxHashMap::default(),
            staged: FxHashMap::default(),
            instance_buffer: Self::create_instance_buffer(device, instance_capacity),
            instance_capacity,
            draws: Vec::new(),
        }
    }

    fn create_instance_buffer(device: &wgpu::Device, capacity: usize) -> wgpu::Buffer {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("chunk instances"),
            size: (capacity * std::mem::size_of::<ChunkInstance>()) as u64,
            usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Uploads exactly the chunks `meshes` reports as changed since the last
    /// call and drops the buffers of chunks whose mesh is gone.
    pub fn sync(&mut self, device: &wgpu::Device, meshes: &mut WorldMeshes) -> SyncStats {
        let mut stats = SyncStats::default();
        for coord in meshes.take_changed() {
            match meshes.get(coord) {
                Some(mesh) if !mesh.is_empty() => {
                    let level = meshes.level_of(coord).unwrap_or(0);
                    stats.bytes += self.upload(device, coord, level, mesh);
                    stats.uploaded += 1;
                }
                _ => {
                    if self.chunks.remove(&coord).is_some() {
                        stats.removed += 1;
                    }
                }
            }
        }
        stats
    }

    /// Creates (or replaces) the buffers of one chunk. Returns bytes uploaded.
    pub fn upload(
        &mut self,
        device: &wgpu::Device,
        coord: ChunkCoord,
        level: u8,
        mesh: &ChunkMesh,
    ) -> usize {
        match Self::create(device, level, mesh) {
            Some((gpu, bytes)) => {
                self.chunks.insert(coord, gpu);
                bytes
            }
            None => {
                self.chunks.remove(&coord);
                0
            }
        }
    }

    /// Uploads `mesh` for `coord` into a staging slot without drawing it
    /// (an empty mesh stages the chunk's removal). Returns bytes uploaded.
    pub fn stage(
        &mut self,
        device: &wgpu::Device,
        coord: ChunkCoord,
        level: u8,
        mesh: &ChunkMesh,
    ) -> usize {
        match Self::create(device, level, mesh) {
            Some((gpu, bytes)) => {
                self.staged.insert(coord, Some(gpu));
                bytes
            }
            None => {
                self.staged.insert(coord, None);
                0
            }
        }
    }

    /// Makes the staged buffers of `coords` the drawn ones (dropping the old
    /// ones), all at once; chunks with nothing staged are left as they are.
    pub fn promote(&mut self, coords: &[ChunkCoord]) {
        for coord in coords {
            match self.staged.remove(coord) {
                Some(Some(gpu)) => {
                    self.chunks.insert(*coord, gpu);
                }
                Some(None) => {
                    self.chunks.remove(coord);
                }
                None => {}
            }
        }
    }

    /// GPU buffers for `mesh` and their size in bytes; `None` for an empty mesh.
    fn create(device: &wgpu::Device, level: u8, mesh: &ChunkMesh) -> Option<(ChunkGpu, usize)> {
        let bounds_local = mesh.bounds_local()?;
        let vertices = TerrainVertex::from_mesh(mesh);
        let vertex_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("chunk vertices"),
            contents: bytemuck::cast_slice(&vertices),
            usage: wgpu::BufferUsages::VERTEX,
        });
        let index_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("chunk indices"),
            contents: bytemuck::cast_slice(&mesh.indices),
            usage: wgpu::BufferUsages::INDEX,
        });
        let bytes = std::mem::size_of_val(vertices.as_slice()) + mesh.indices.len() * 4;
        Some((
            ChunkGpu {
                vertex_buffer,
                index_buffer,
                index_count: mesh.indices.len() as u32,
                vertex_count: vertices.len() as u32,
                bounds_local,
                level,
            },
            bytes,
        ))
    }

    /// Drops the buffers of `coord`, if any.
    pub fn remove(&mut self, coord: ChunkCoord) {
        self.chunks.remove(&coord);
        self.staged.remove(&coord);
    }

    /// Drops every chunk (e.g. when a different world is loaded).
    pub fn clear(&mut self) {
        self.chunks.clear();
        self.staged.clear();
        self.draws.clear();
    }

    /// Number of chunks with GPU buffers.
    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    /// True when no chunk has GPU buffers.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// The GPU data of `coord`, if resident.
    pub fn get(&self, coord: ChunkCoord) -> Option<&ChunkGpu> {
        self.chunks.get(&coord)
    }

    /// Culls against `camera`'s frustum (`clip_from_world` must be the
    /// camera-relative matrix used for drawing) and `draw_distance_studs`,
    /// orders visible chunks front to back and writes their camera-relative
    /// origins to the instance buffer.
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        camera: &Camera,
        clip_from_world: Mat4,
        draw_distance_studs: f32,
    ) -> DrawStats {
        let max_d2 = draw_distance_studs * draw_distance_studs;
        let frustum = Frustum::from_clip_from_world(clip_from_world);
        let mut visible: Vec<(f32, ChunkCoord, ChunkInstance)> = Vec::new();
        for (&coord, gpu) in &self.chunks {
            // f64 subtraction first, one cast: exact near the camera (spec §1).
            let origin_rel = (coord.origin_world() - camera.pos_world).as_vec3();
            let (lo, hi) = (
                origin_rel + gpu.bounds_local.0,
                origin_rel + gpu.bounds_local.1,
            );
            // Nearest point of the box to the camera (the origin).
            let nearest = Vec3::ZERO.clamp(lo, hi);
            if nearest.length_squared() > max_d2 || !frustum.intersects_aabb(lo, hi) {
                continue;
            }
            let centre = (lo + hi) * 0.5;
            visible.push((
                centre.length_squared(),
                coord,
                ChunkInstance {
                    chunk_origin_rel: [origin_rel.x, origin_rel.y, origin_rel.z, 0.0],
                    chunk_coord: [coord.0.x, coord.0.y, coord.0.z, 0],
                },
            ));
        }
        visible.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| cmp_coord(a.1, b.1)));
        if visible.len() > self.instance_capacity {
            self.instance_capacity = visible.len().next_power_of_two();
            self.instance_buffer = Self::create_instance_buffer(device, self.instance_capacity);
        }
        let instances: Vec<ChunkInstance> = visible.iter().map(|v| v.2).collect();
        if !instances.is_empty() {
            queue.write_buffer(&self.instance_buffer, 0, bytemuck::cast_slice(&instances));
        }
        self.draws = visible.iter().map(|v| v.1).collect();
        DrawStats {
            resident_chunks: self.chunks.len(),
            drawn_chunks: self.draws.len(),
            drawn_triangles: self
                .draws
                .iter()
                .filter_map(|c| self.chunks.get(c))
                .map(|g| g.index_count as usize / 3)
                .sum(),
        }
    }

    /// Issues one indexed draw per prepared chunk (instance `i` for draw `i`).
    /// The terrain pipeline and its bind groups must already be set.
    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>) {
        if self.draws.is_empty() {
            return;
        }
        pass.set_vertex_buffer(1, self.instance_buffer.slice(..));
        for (i, coord) in self.draws.iter().enumerate() {
            let Some(gpu) = self.chunks.get(coord) else {
                continue;
            };
            let i = i as u32;
            pass.set_vertex_buffer(0, gpu.vertex_buffer.slice(..));
            pass.set_index_buffer(gpu.index_buffer.slice(..), wgpu::IndexFormat::Uint32);
            pass.draw_indexed(0..gpu.index_count, 0, i..i + 1);
        }
    }
}

fn cmp_coord(a: ChunkCoord, b: ChunkCoord) -> std::cmp::Ordering {
    (a.0.x, a.0.y, a.0.z).cmp(&(b.0.x, b.0.y, b.0.z))
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;

    #[test]
    fn frustum_keeps_boxes_in_front_and_drops_boxes_behind() {
        let cam = Camera::new(DVec3::new(1.0e6, 0.0, 0.0), 0.0, 0.0);
        let f = Frustum::from_clip_from_world(cam.clip_from_world());
        // In front (−Z).
        assert!(f.intersects_aabb(
            Vec3::new(-10.0, -10.0, -200.0),
            Vec3::new(10.0, 10.0, -100.0)
        ));
        // Behind.
        assert!(!f.intersects_aabb(Vec3::new(-10.0, -10.0, 100.0), Vec3::new(10.0, 10.0, 200.0)));
        // Far to the side.
        assert!(!f.intersects_aabb(
            Vec3::new(5000.0, -10.0, -200.0),
            Vec3::new(5010.0, 10.0, -100.0)
        ));
        // Around the camera.
        assert!(f.intersects_aabb(Vec3::splat(-1.0), Vec3::splat(1.0)));
        // Very far in front (infinite far plane).
        assert!(f.intersects_aabb(Vec3::new(-1.0, -1.0, -1.0e7), Vec3::new(1.0, 1.0, -0.9e7)));
    }
}
