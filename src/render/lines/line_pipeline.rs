//! The overlay line pipelines (`shaders/lines.wgsl`): a frame's
//! [`LineBatch`] drawn as a line list with alpha blending, the depth-tested
//! lines first (chunk bounds, previews), then those on top (seam-audit
//! markers, residency outlines, the hidden parts of previews) so none is
//! missed.

use super::super::pipeline_state::{self, PipelineDesc};
use super::super::shaders;
use super::gpu_data::LineVertex;
use super::line_batch::LineBatch;

/// The two line pipelines and the per-frame vertex buffer they share.
pub struct LinePipeline {
    tested: wgpu::RenderPipeline,
    on_top: wgpu::RenderPipeline,
    buffer: wgpu::Buffer,
    capacity: usize,
    tested_count: u32,
    on_top_count: u32,
}

impl LinePipeline {
    /// Builds both pipelines for `target_format` with `sample_count` samples
    /// and a [`pipeline_state::DEPTH_FORMAT`] reversed-Z depth buffer; group
    /// 0 has the layout `globals_layout`.
    pub fn new(
        device: &wgpu::Device,
        globals_layout: &wgpu::BindGroupLayout,
        target_format: wgpu::TextureFormat,
        sample_count: u32,
    ) -> Self {
        let shader = pipeline_state::shader_module(device, "lines.wgsl", shaders::LINES_WGSL);
        let layout = pipeline_state::pipeline_layout(
            device,
            "lines pipeline layout",
            &[Some(globals_layout)],
        );
        let make = |label, fragment_entry, compare| {
            pipeline_state::render_pipeline(
                device,
                &PipelineDesc {
                    label,
                    layout: &layout,
                    shader: &shader,
                    vertex_entry: "vs_main",
                    fragment_entry,
                    buffers: &[Some(LineVertex::layout())],
                    primitive: wgpu::PrimitiveState {
                        topology: wgpu::PrimitiveTopology::LineList,
                        ..Default::default()
                    },
                    depth: pipeline_state::reversed_z_depth(false, compare),
                    target: pipeline_state::alpha_blended_target(target_format),
                    sample_count,
                    fragment_constants: &[],
                },
            )
        };
        // Reversed-Z: nearer is greater.
        let tested = make(
            "lines (depth-tested)",
            "fs_main",
            wgpu::CompareFunction::GreaterEqual,
        );
        let on_top = make("lines (on top)", "fs_on_top", wgpu::CompareFunction::Always);
        let capacity = 1024;
        LinePipeline {
            tested,
            on_top,
            buffer: Self::create_buffer(device, capacity),
            capacity,
            tested_count: 0,
            on_top_count: 0,
        }
    }

    fn create_buffer(device: &wgpu::Device, capacity: usize) -> wgpu::Buffer {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("overlay lines"),
            size: (capacity * std::mem::size_of::<LineVertex>()) as u64,
            usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Uploads this frame's lines (growing the buffer when needed).
    pub fn prepare(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, batch: &LineBatch) {
        let total = batch.tested.len() + batch.on_top.len();
        self.tested_count = batch.tested.len() as u32;
        self.on_top_count = batch.on_top.len() as u32;
        if total == 0 {
            return;
        }
        if total > self.capacity {
            self.capacity = total.next_power_of_two();
            self.buffer = Self::create_buffer(device, self.capacity);
        }
        queue.write_buffer(&self.buffer, 0, bytemuck::cast_slice(&batch.tested));
        if !batch.on_top.is_empty() {
            let offset = std::mem::size_of_val(batch.tested.as_slice()) as u64;
            queue.write_buffer(&self.buffer, offset, bytemuck::cast_slice(&batch.on_top));
        }
    }

    /// Draws the prepared lines: depth-tested ones first, then those on top;
    /// `globals` is group 0.
    pub fn paint(&self, pass: &mut wgpu::RenderPass<'_>, globals: &wgpu::BindGroup) {
        if self.tested_count + self.on_top_count == 0 {
            return;
        }
        pass.set_bind_group(0, globals, &[]);
        pass.set_vertex_buffer(0, self.buffer.slice(..));
        if self.tested_count > 0 {
            pass.set_pipeline(&self.tested);
            pass.draw(0..self.tested_count, 0..1);
        }
        if self.on_top_count > 0 {
            pass.set_pipeline(&self.on_top);
            let start = self.tested_count;
            pass.draw(start..start + self.on_top_count, 0..1);
        }
    }
}
