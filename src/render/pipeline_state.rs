//! Pipeline state shared by every render pipeline (sky, terrain, water,
//! wireframe, lines): the reversed-Z depth convention, multisampling, the
//! colour targets, and [`render_pipeline`], the one function that turns a
//! [`PipelineDesc`] into a `wgpu::RenderPipeline`.
//!
//! Why: these blocks were copied into each pipeline descriptor, so a change
//! to the depth convention (say, the format) had to be made five times and
//! could silently be missed in one. Each pipeline now states only what is
//! its own (shader entry points, vertex buffers, primitive, depth write on
//! or off, the compare function, the blend); everything else (one colour
//! target, no multiview, no pipeline cache, default compilation options)
//! is filled in here.

/// Depth buffer format of every Strata pass: reversed-Z, cleared to 0, compare `Greater`.
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// Depth clear value for reversed-Z (infinitely far).
pub const DEPTH_CLEAR: f32 = 0.0;

/// A [`DEPTH_FORMAT`] depth state without stencil or bias that writes depth
/// when `write` and passes fragments by `compare` (reversed-Z: nearer is
/// greater).
pub fn reversed_z_depth(write: bool, compare: wgpu::CompareFunction) -> wgpu::DepthStencilState {
    wgpu::DepthStencilState {
        format: DEPTH_FORMAT,
        depth_write_enabled: Some(write),
        depth_compare: Some(compare),
        stencil: Default::default(),
        bias: Default::default(),
    }
}

/// Opaque geometry: nearer fragments (compare `Greater`) pass and write depth.
pub fn depth_write() -> wgpu::DepthStencilState {
    reversed_z_depth(true, wgpu::CompareFunction::Greater)
}

/// Geometry drawn over the opaque depth without changing it: nearer
/// fragments (compare `Greater`) pass, depth is not written.
pub fn depth_read_only() -> wgpu::DepthStencilState {
    reversed_z_depth(false, wgpu::CompareFunction::Greater)
}

/// Multisample state for `sample_count` samples: every sample written, no
/// alpha to coverage.
pub fn multisample(sample_count: u32) -> wgpu::MultisampleState {
    wgpu::MultisampleState {
        count: sample_count,
        mask: !0,
        alpha_to_coverage_enabled: false,
    }
}

/// An opaque colour target of `format`: no blending, all channels written.
pub fn opaque_target(format: wgpu::TextureFormat) -> wgpu::ColorTargetState {
    blended_target(format, None)
}

/// A colour target of `format` with standard alpha blending
/// ([`wgpu::BlendState::ALPHA_BLENDING`]), all channels written.
pub fn alpha_blended_target(format: wgpu::TextureFormat) -> wgpu::ColorTargetState {
    blended_target(format, Some(wgpu::BlendState::ALPHA_BLENDING))
}

/// Colour blended over by source alpha while the target's alpha stays as it
/// is, so an opaque target stays opaque (the water).
pub const BLEND_OVER_KEEP_ALPHA: wgpu::BlendState = wgpu::BlendState {
    color: wgpu::BlendComponent {
        src_factor: wgpu::BlendFactor::SrcAlpha,
        dst_factor: wgpu::BlendFactor::OneMinusSrcAlpha,
        operation: wgpu::BlendOperation::Add,
    },
    alpha: wgpu::BlendComponent {
        src_factor: wgpu::BlendFactor::Zero,
        dst_factor: wgpu::BlendFactor::One,
        operation: wgpu::BlendOperation::Add,
    },
};

/// A colour target of `format` with `blend` (`None`: opaque), all channels written.
pub fn blended_target(
    format: wgpu::TextureFormat,
    blend: Option<wgpu::BlendState>,
) -> wgpu::ColorTargetState {
    wgpu::ColorTargetState {
        format,
        blend,
        write_mask: wgpu::ColorWrites::ALL,
    }
}

/// Triangle lists, counter-clockwise front faces, culling `cull_mode`,
/// filled (the terrain culls back faces; the water culls nothing).
pub fn triangles(cull_mode: Option<wgpu::Face>) -> wgpu::PrimitiveState {
    wgpu::PrimitiveState {
        topology: wgpu::PrimitiveTopology::TriangleList,
        strip_index_format: None,
        front_face: wgpu::FrontFace::Ccw,
        cull_mode,
        unclipped_depth: false,
        polygon_mode: wgpu::PolygonMode::Fill,
        conservative: false,
    }
}

/// A WGSL shader module named `label` from `source` (see [`super::shaders`]).
pub fn shader_module(device: &wgpu::Device, label: &str, source: &str) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    })
}

/// A pipeline layout named `label` over `groups` (group `i` is
/// `groups[i]`; `None` leaves a group unused), without immediates.
pub fn pipeline_layout(
    device: &wgpu::Device,
    label: &str,
    groups: &[Option<&wgpu::BindGroupLayout>],
) -> wgpu::PipelineLayout {
    device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(label),
        bind_group_layouts: groups,
        immediate_size: 0,
    })
}

/// What distinguishes one render pipeline from another; [`render_pipeline`]
/// fills in the rest.
pub struct PipelineDesc<'a> {
    /// Debug label.
    pub label: &'a str,
    /// The pipeline layout (group 0 is always the globals).
    pub layout: &'a wgpu::PipelineLayout,
    /// The module holding both entry points.
    pub shader: &'a wgpu::ShaderModule,
    /// Vertex entry point.
    pub vertex_entry: &'a str,
    /// Fragment entry point.
    pub fragment_entry: &'a str,
    /// Vertex buffer layouts by slot.
    pub buffers: &'a [Option<wgpu::VertexBufferLayout<'a>>],
    /// Topology, culling, polygon mode (see [`triangles`]).
    pub primitive: wgpu::PrimitiveState,
    /// Depth state (see [`depth_write`], [`depth_read_only`], [`reversed_z_depth`]).
    pub depth: wgpu::DepthStencilState,
    /// The one colour target (see [`opaque_target`], [`blended_target`]).
    pub target: wgpu::ColorTargetState,
    /// MSAA samples per pixel (see [`multisample`]).
    pub sample_count: u32,
    /// Values of the fragment stage's pipeline-overridable constants, by
    /// name (`override` declarations in the shader; bools as 0 or 1).
    pub fragment_constants: &'a [(&'a str, f64)],
}

/// Builds the render pipeline `desc` describes: one colour target,
/// [`multisample`] state for its sample count, the fragment stage's
/// override constants, no multiview and no pipeline cache.
pub fn render_pipeline(device: &wgpu::Device, desc: &PipelineDesc<'_>) -> wgpu::RenderPipeline {
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(desc.label),
        layout: Some(desc.layout),
        vertex: wgpu::VertexState {
            module: desc.shader,
            entry_point: Some(desc.vertex_entry),
            compilation_options: Default::default(),
            buffers: desc.buffers,
        },
        primitive: desc.primitive,
        depth_stencil: Some(desc.depth.clone()),
        multisample: multisample(desc.sample_count),
        fragment: Some(wgpu::FragmentState {
            module: desc.shader,
            entry_point: Some(desc.fragment_entry),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants: desc.fragment_constants,
                ..Default::default()
            },
            targets: &[Some(desc.target.clone())],
        }),
        multiview_mask: None,
        cache: None,
    })
}
