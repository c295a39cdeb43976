//! Per-chunk GPU buffers of the water surfaces, staged and promoted together
//! with the chunk's terrain (see [`super::ChunkBuffers`], which owns one
//! [`WaterBuffers`]), and the per-frame list of water chunks to draw.
//!
//! Water chunks are culled like terrain chunks (bounds grown by the waves'
//! reach) and drawn back to front, the usual order for blended surfaces.

use glam::Vec3;
use rustc_hash::FxHashMap;
use wgpu::util::DeviceExt;

use crate::camera::Camera;
use crate::mesh::water::WaterMesh;
use crate::terrain::coords::ChunkCoord;

use super::chunk_buffers::{Frustum, create_instance_buffer};
use super::terrain_pipeline::ChunkInstance;
use super::water_pipeline::{WAVE_MAX_DISPLACEMENT_STUDS, WaterVertex};

/// GPU copy of one chunk's water surface.
pub struct WaterGpu {
    /// [`WaterVertex`] buffer.
    pub vertex_buffer: wgpu::Buffer,
    /// `u32` triangle-list index buffer.
    pub index_buffer: wgpu::Buffer,
    /// Number of indices.
    pub index_count: u32,
    /// Bounds in chunk-local studs `(min, max)`, grown by the waves' reach.
    pub bounds_local: (Vec3, Vec3),
}

/// All water buffers plus this frame's instance buffer and draw list.
pub struct WaterBuffers {
    chunks: FxHashMap<ChunkCoord, WaterGpu>,
    /// Uploaded but not yet drawn (`None`: the water's removal is staged).
    staged: FxHashMap<ChunkCoord, Option<WaterGpu>>,
    instance_buffer: wgpu::Buffer,
    instance_capacity: usize,
    /// Water chunks to draw this frame, back to front; draw `i` uses instance `i`.
    draws: Vec<ChunkCoord>,
}

/// What [`WaterBuffers::prepare`] selected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaterDrawStats {
    /// Water chunks drawn.
    pub chunks: usize,
    /// Water triangles drawn.
    pub triangles: usize,
}

impl WaterBuffers {
    /// An empty set.
    pub fn new(device: &wgpu::Device) -> Self {
        let instance_capacity = 64;
        WaterBuffers {
            chunks: FxHashMap::default(),
            staged: FxHashMap::default(),
            instance_buffer: Self::create_instance_buffer(device, instance_capacity),
            instance_capacity,
            draws: Vec::new(),
        }
    }

    fn create_instance_buffer(device: &wgpu::Device, capacity: usize) -> wgpu::Buffer {
        create_instance_buffer(device, "water instances", capacity)
    }

    /// GPU buffers for `mesh` and their size in bytes; `None` for no water.
    fn create(device: &wgpu::Device, mesh: &WaterMesh) -> Option<(WaterGpu, usize)> {
        if mesh.is_empty() || mesh.positions.is_empty() {
            return None;
        }
        let mut lo = Vec3::splat(f32::INFINITY);
        let mut hi = Vec3::splat(f32::NEG_INFINITY);
        for p in &mesh.positions {
            lo = lo.min(*p);
            hi = hi.max(*p);
        }
        // Gerstner waves move vertices sideways by less than they lift them.
        let reach = Vec3::splat(WAVE_MAX_DISPLACEMENT_STUDS);
        let vertices = WaterVertex::from_mesh(mesh);
        let vertex_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("water vertices"),
            contents: bytemuck::cast_slice(&vertices),
            usage: wgpu::BufferUsages::VERTEX,
        });
        let index_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("water indices"),
            contents: bytemuck::cast_slice(&mesh.indices),
            usage: wgpu::BufferUsages::INDEX,
        });
        let bytes = std::mem::size_of_val(vertices.as_slice()) + mesh.indices.len() * 4;
        Some((
            WaterGpu {
                vertex_buffer,
                index_buffer,
                index_count: mesh.indices.len() as u32,
                bounds_local: (lo - reach, hi + reach),
            },
            bytes,
        ))
    }

    /// Creates (or replaces, or for an empty mesh drops) the drawn water of
    /// `coord` at once. Returns bytes uploaded.
    pub fn upload(&mut self, device: &wgpu::Device, coord: ChunkCoord, mesh: &WaterMesh) -> usize {
        match Self::create(device, mesh) {
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

    /// Uploads `mesh` for `coord` into a staging slot without drawing it (an
    /// empty mesh stages the water's removal). Returns bytes uploaded.
    pub fn stage(&mut self, device: &wgpu::Device, coord: ChunkCoord, mesh: &WaterMesh) -> usize {
        let (gpu, bytes) = match Self::create(device, mesh) {
            Some((gpu, bytes)) => (Some(gpu), bytes),
            None => (None, 0),
        };
        self.staged.insert(coord, gpu);
        bytes
    }

    /// Makes the staged water of `coords` the drawn one; chunks with no
    /// staged water keep theirs (a level-only change).
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

    /// Drops the drawn and staged water of `coord`; returns whether it had any drawn.
    pub fn remove(&mut self, coord: ChunkCoord) -> bool {
        self.staged.remove(&coord);
        self.chunks.remove(&coord).is_some()
    }

    /// Drops everything.
    pub fn clear(&mut self) {
        self.chunks.clear();
        self.staged.clear();
        self.draws.clear();
    }

    /// Number of chunks with drawn water.
    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    /// True when no chunk has drawn water.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// The drawn water of `coord`, if any.
    pub fn get(&self, coord: ChunkCoord) -> Option<&WaterGpu> {
        self.chunks.get(&coord)
    }

    /// The water chunks prepared for this frame, back to front.
    pub fn drawn(&self) -> &[ChunkCoord] {
        &self.draws
    }

    /// Culls against `frustum` (camera-relative) and `draw_distance_studs`,
    /// orders the visible water back to front and writes the instances.
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        camera: &Camera,
        frustum: &Frustum,
        draw_distance_studs: f32,
    ) -> WaterDrawStats {
        let max_d2 = draw_distance_studs * draw_distance_studs;
        let mut visible: Vec<(f32, ChunkCoord, ChunkInstance)> = Vec::new();
        for (&coord, gpu) in &self.chunks {
            // f64 subtraction first, one cast: exact near the camera (spec §1).
            let origin_rel = (coord.origin_world() - camera.pos_world).as_vec3();
            let (lo, hi) = (
                origin_rel + gpu.bounds_local.0,
                origin_rel + gpu.bounds_local.1,
            );
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
        // Back to front; ties by coordinate so the order is deterministic.
        visible.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then_with(|| (a.1.0.x, a.1.0.y, a.1.0.z).cmp(&(b.1.0.x, b.1.0.y, b.1.0.z)))
        });
        if visible.len() > self.instance_capacity {
            self.instance_capacity = visible.len().next_power_of_two();
            self.instance_buffer = Self::create_instance_buffer(device, self.instance_capacity);
        }
        if !visible.is_empty() {
            let instances: Vec<ChunkInstance> = visible.iter().map(|v| v.2).collect();
            queue.write_buffer(&self.instance_buffer, 0, bytemuck::cast_slice(&instances));
        }
        self.draws = visible.iter().map(|v| v.1).collect();
        WaterDrawStats {
            chunks: self.draws.len(),
            triangles: self
                .draws
                .iter()
                .filter_map(|c| self.chunks.get(c))
                .map(|g| g.index_count as usize / 3)
                .sum(),
        }
    }

    /// Issues one indexed draw per prepared water chunk (instance `i` for
    /// draw `i`). A water pipeline and its bind groups must already be set.
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
