//! Per-chunk GPU buffers of the water surfaces and the per-frame list of
//! water chunks to draw. The frame renderer stages and promotes them in the
//! same steps as the chunk's terrain, so an edit's new terrain and new
//! water appear in the same frame.
//!
//! Water chunks are culled like terrain chunks (bounds grown by the waves'
//! reach, by the shared [`cull_and_sort`]) and drawn back to front, the
//! usual order for blended surfaces.

use glam::Vec3;
use rustc_hash::FxHashMap;
use wgpu::util::DeviceExt;

use crate::mesh::water::WaterMesh;
use crate::terrain::storage::coords::ChunkCoord;

use super::super::chunk_draw::{
    ChunkInstance, CullView, DrawOrder, InstanceBuffer, cull_and_sort, mesh_upload_usage,
};
use super::gpu_data::{WAVE_MAX_DISPLACEMENT_STUDS, WaterVertex};

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
    instance_buffer: InstanceBuffer,
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
        WaterBuffers {
            chunks: FxHashMap::default(),
            staged: FxHashMap::default(),
            instance_buffer: InstanceBuffer::new(device, "water instances", 64),
            draws: Vec::new(),
        }
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
        let upload = mesh_upload_usage(device);
        let vertex_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("water vertices"),
            contents: bytemuck::cast_slice(&vertices),
            usage: wgpu::BufferUsages::VERTEX | upload,
        });
        let index_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("water indices"),
            contents: bytemuck::cast_slice(&mesh.indices),
            usage: wgpu::BufferUsages::INDEX | upload,
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

    /// Culls for `view` the water of the chunks `shown` accepts (those whose
    /// terrain is drawn: under a horizon, not the chunks a node stands in
    /// for, whose water floated over the node's coarser ground), orders it
    /// back to front and writes the instances.
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        view: &CullView<'_>,
        shown: impl Fn(ChunkCoord) -> bool,
    ) -> WaterDrawStats {
        let visible = cull_and_sort(
            self.chunks.iter().filter(|(c, _)| shown(**c)),
            |gpu| gpu.bounds_local,
            view.camera_world,
            view.frustum,
            view.draw_distance_studs,
            DrawOrder::BackToFront,
            |coord, origin_rel, _| ChunkInstance {
                chunk_origin_rel: [origin_rel.x, origin_rel.y, origin_rel.z, 0.0],
                chunk_coord: [coord.0.x, coord.0.y, coord.0.z, 0],
            },
        );
        let instances: Vec<ChunkInstance> = visible.iter().map(|v| v.item).collect();
        self.instance_buffer.write(device, queue, &instances);
        self.draws = visible.iter().map(|v| v.coord).collect();
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
        pass.set_vertex_buffer(1, self.instance_buffer.buffer().slice(..));
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
