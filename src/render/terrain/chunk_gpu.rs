//! The GPU copy of one terrain mesh, [`ChunkGpu`]: a chunk's at levels 0–3
//! or a horizon node's (a chunk mesh with a larger origin and sample
//! spacing). Shared by the chunk buffers, the node buffers and the level
//! fades, which keep old meshes drawn while they fade out; it depends on
//! none of them.

use std::time::Instant;

use glam::Vec3;
use wgpu::util::DeviceExt;

use crate::mesh::ChunkMesh;

use super::gpu_data::TerrainVertex;

/// GPU copy of one chunk's mesh.
pub struct ChunkGpu {
    /// [`TerrainVertex`] buffer.
    pub vertex_buffer: wgpu::Buffer,
    /// `u32` triangle-list index buffer.
    pub index_buffer: wgpu::Buffer,
    /// Number of indices.
    pub index_count: u32,
    /// Number of indices before the first skirt triangle (surface only).
    pub surface_index_count: u32,
    /// Number of vertices.
    pub vertex_count: u32,
    /// Mesh bounds in chunk-local studs `(min, max)`.
    pub bounds_local: (Vec3, Vec3),
    /// Level of detail the mesh was built at.
    pub level: u8,
    /// When `ChunkBuffers::promote` last made this mesh visible (`None`
    /// for direct uploads, e.g. at start-up).
    pub promoted_at: Option<Instant>,
    /// Group 1 of the barycentric wireframe (vertex and index buffers as
    /// storage), created on first use.
    wire_bind_group: Option<wgpu::BindGroup>,
}

impl ChunkGpu {
    /// GPU buffers for `mesh` (meshed at `level`; buffers get usage
    /// `extra_usage` besides `VERTEX`/`INDEX`) and their size in bytes;
    /// `None` for an empty mesh.
    pub fn create(
        device: &wgpu::Device,
        level: u8,
        mesh: &ChunkMesh,
        extra_usage: wgpu::BufferUsages,
    ) -> Option<(ChunkGpu, usize)> {
        let bounds_local = mesh.bounds_local()?;
        let vertices = TerrainVertex::from_mesh(mesh);
        let vertex_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("chunk vertices"),
            contents: bytemuck::cast_slice(&vertices),
            usage: wgpu::BufferUsages::VERTEX | extra_usage,
        });
        let index_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("chunk indices"),
            contents: bytemuck::cast_slice(&mesh.indices),
            usage: wgpu::BufferUsages::INDEX | extra_usage,
        });
        let index_count = mesh.indices.len() as u32;
        let bytes = std::mem::size_of_val(vertices.as_slice()) + mesh.indices.len() * 4;
        Some((
            ChunkGpu {
                vertex_buffer,
                index_buffer,
                index_count,
                surface_index_count: mesh.skirt_start_index.min(index_count),
                vertex_count: vertices.len() as u32,
                bounds_local,
                level,
                promoted_at: None,
                wire_bind_group: None,
            },
            bytes,
        ))
    }

    /// Draws this mesh as instance `instance` of the bound instance buffer,
    /// stopping before the skirts when `hide_skirts`. A pipeline with the
    /// terrain's vertex layouts and its bind groups must already be set.
    pub fn draw_instance(&self, pass: &mut wgpu::RenderPass<'_>, instance: u32, hide_skirts: bool) {
        let count = if hide_skirts {
            self.surface_index_count
        } else {
            self.index_count
        };
        if count == 0 {
            return;
        }
        pass.set_vertex_buffer(0, self.vertex_buffer.slice(..));
        pass.set_index_buffer(self.index_buffer.slice(..), wgpu::IndexFormat::Uint32);
        pass.draw_indexed(0..count, 0, instance..instance + 1);
    }

    /// Creates the barycentric-wireframe bind group (`layout`: binding 0 =
    /// vertices, binding 1 = indices, both read-only storage) unless there
    /// is one already or the buffers are not storage-readable.
    pub fn ensure_wire_bind_group(
        &mut self,
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
    ) {
        if self.wire_bind_group.is_some()
            || !self
                .vertex_buffer
                .usage()
                .contains(wgpu::BufferUsages::STORAGE)
        {
            return;
        }
        self.wire_bind_group = Some(device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("chunk wireframe storage"),
            layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: self.vertex_buffer.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: self.index_buffer.as_entire_binding(),
                },
            ],
        }));
    }

    /// The barycentric-wireframe bind group, once created (see
    /// [`ChunkGpu::ensure_wire_bind_group`]).
    pub fn wire_bind_group(&self) -> Option<&wgpu::BindGroup> {
        self.wire_bind_group.as_ref()
    }
}
