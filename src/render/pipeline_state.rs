//! Pipeline state shared by every render pipeline (sky, terrain, water,
//! wireframe, lines): the reversed-Z depth convention, multisampling and the
//! colour targets.
//!
//! Why: these blocks were copied into each pipeline descriptor, so a change
//! to the depth convention (say, the format) had to be made five times and
//! could silently be missed in one. Each pipeline now states only what is
//! its own (depth write on or off, the compare function, the blend).

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
