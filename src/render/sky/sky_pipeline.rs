//! The sky pipeline (`shaders/sky.wgsl`): one fullscreen triangle drawn first
//! in the frame, without depth test or write, whose horizon colour is the
//! terrain's fog colour so distant terrain dissolves into the sky.

use super::super::pipeline_state::{self, PipelineDesc};
use super::super::shaders;

/// The fullscreen sky pipeline.
pub struct SkyPipeline {
    pipeline: wgpu::RenderPipeline,
}

impl SkyPipeline {
    /// Builds the pipeline for `target_format` with `sample_count` samples; it
    /// is compatible with a [`pipeline_state::DEPTH_FORMAT`] depth attachment but ignores it.
    /// Group 0 has the layout `globals_layout`.
    pub fn new(
        device: &wgpu::Device,
        globals_layout: &wgpu::BindGroupLayout,
        target_format: wgpu::TextureFormat,
        sample_count: u32,
    ) -> Self {
        let shader = pipeline_state::shader_module(device, "sky.wgsl", shaders::SKY_WGSL);
        let layout =
            pipeline_state::pipeline_layout(device, "sky pipeline layout", &[Some(globals_layout)]);
        let pipeline = pipeline_state::render_pipeline(
            device,
            &PipelineDesc {
                label: "sky pipeline",
                layout: &layout,
                shader: &shader,
                vertex_entry: "vs_main",
                fragment_entry: "fs_main",
                buffers: &[],
                primitive: wgpu::PrimitiveState::default(),
                depth: pipeline_state::reversed_z_depth(false, wgpu::CompareFunction::Always),
                target: pipeline_state::opaque_target(target_format),
                sample_count,
                fragment_constants: &[],
            },
        );
        SkyPipeline { pipeline }
    }

    /// Draws the sky over the whole viewport; `globals` is group 0.
    pub fn paint(&self, pass: &mut wgpu::RenderPass<'_>, globals: &wgpu::BindGroup) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, globals, &[]);
        pass.draw(0..3, 0..1);
    }
}
