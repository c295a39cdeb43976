//! The per-frame [`ChunkInstance`] vertex buffer of a chunk draw list,
//! grown on demand; shared by the terrain and water draw lists, which
//! otherwise each repeated the same grow-and-write code.

use super::gpu_data::ChunkInstance;

/// A vertex buffer of [`ChunkInstance`]s, rewritten each frame.
pub struct InstanceBuffer {
    buffer: wgpu::Buffer,
    capacity: usize,
    label: &'static str,
}

impl InstanceBuffer {
    /// A buffer named `label` with room for `capacity` instances.
    pub fn new(device: &wgpu::Device, label: &'static str, capacity: usize) -> Self {
        InstanceBuffer {
            buffer: Self::create(device, label, capacity),
            capacity,
            label,
        }
    }

    fn create(device: &wgpu::Device, label: &str, capacity: usize) -> wgpu::Buffer {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: (capacity * std::mem::size_of::<ChunkInstance>()) as u64,
            usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Writes `instances` from the start of the buffer, first replacing it
    /// by one with room for the next power of two when they do not fit.
    pub fn write(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        instances: &[ChunkInstance],
    ) {
        if instances.len() > self.capacity {
            self.capacity = instances.len().next_power_of_two();
            self.buffer = Self::create(device, self.label, self.capacity);
        }
        if !instances.is_empty() {
            queue.write_buffer(&self.buffer, 0, bytemuck::cast_slice(instances));
        }
    }

    /// The buffer, to bind as a per-instance vertex buffer.
    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.buffer
    }
}
