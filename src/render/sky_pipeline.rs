//! The sky pipeline (`shaders/sky.wgsl`): one fullscreen triangle drawn first
//! in the frame, without depth test or write, whose horizon colour is the
//! terrain's fog colour so distant terrain dissolves into the sky.

use super::globals::GlobalsBinding;
use super::pipeline_state;

/// The fullscreen sky pipeline.
pub struct SkyPipeline {
    pipeline: wgpu::RenderPipeline,
}

impl SkyPipeline {
    /// Builds the pipeline for `target_format` with `sample_count` samples; it
    /// is compatible with a [`pipeline_state::DEPTH_FORMAT`] depth attachment but ignores it.
    pub fn new(
        device: &wgpu::Device,
        globals: &GlobalsBinding,
        target_format: wgpu::TextureFormat,
        sample_count: u32,
    ) -> Self {
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("sky.wgsl"),
            source: wgpu::ShaderSource::Wgsl(super::shaders::SKY_WGSL.into()),
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("sky pipeline layout"),
            bind_group_layouts: &[Some(&globals.layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("sky pipeline"),
            layout: Some(&layout),
            vertex: wgpu::VertexState {
                module: &shader,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: Some(pipeline_state::reversed_z_depth(
                false,
                wgpu::CompareFunction::Always,
            )),
            multisample: pipeline_state::multisample(sample_count),
            fragment: Some(wgpu::FragmentState {
                module: &shader,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &[Some(pipeline_state::opaque_target(target_format))],
            }),
            multiview_mask: None,
            cache: None,
        });
        SkyPipeline { pipeline }
    }

    /// Draws the sky over the whole viewport.
    pub fn paint(&self, pass: &mut wgpu::RenderPass<'_>, globals: &GlobalsBinding) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &globals.bind_group, &[]);
        pass.draw(0..3, 0..1);
    }
}
