//! The renderer's own multisampled colour target (when MSAA is on) and
//! reversed-Z depth target, [`FrameTargets`], plus the water's bind group
//! over that depth, recreated when the colour target's size changes.

use super::super::pipeline_state::DEPTH_FORMAT;
use super::super::water::WaterPipeline;

/// The renderer's own multisampled colour target (when MSAA is on) and depth
/// target, plus the water's bind group over that depth.
pub struct FrameTargets {
    /// Size `[width, height]` in pixels.
    pub size: [u32; 2],
    /// The multisampled colour target, resolved into the caller's texture
    /// (`None` at 1×: the caller's texture is drawn into directly).
    pub msaa_color: Option<wgpu::TextureView>,
    /// The [`DEPTH_FORMAT`] depth target.
    pub depth: wgpu::TextureView,
    /// Group 1 of the depth-reading water pipeline (`None` when the adapter
    /// cannot read the depth in a pass that uses it read-only).
    pub water_depth: Option<wgpu::BindGroup>,
}

impl FrameTargets {
    /// Targets for a `size` colour target of `color_format` with
    /// `sample_count` samples; the depth is also bound as a texture when
    /// `water` reads it.
    pub fn new(
        device: &wgpu::Device,
        size: [u32; 2],
        color_format: wgpu::TextureFormat,
        sample_count: u32,
        water: &WaterPipeline,
    ) -> FrameTargets {
        let extent = wgpu::Extent3d {
            width: size[0],
            height: size[1],
            depth_or_array_layers: 1,
        };
        let make = |label, format, usage| {
            device
                .create_texture(&wgpu::TextureDescriptor {
                    label: Some(label),
                    size: extent,
                    mip_level_count: 1,
                    sample_count,
                    dimension: wgpu::TextureDimension::D2,
                    format,
                    usage,
                    view_formats: &[],
                })
                .create_view(&Default::default())
        };
        let attachment = wgpu::TextureUsages::RENDER_ATTACHMENT;
        let msaa_color = (sample_count > 1).then(|| make("msaa colour", color_format, attachment));
        // The water pass reads the opaque depth as a texture.
        let depth_usage = if water.reads_depth() {
            attachment | wgpu::TextureUsages::TEXTURE_BINDING
        } else {
            attachment
        };
        let depth = make("depth", DEPTH_FORMAT, depth_usage);
        let water_depth = water.depth_bind_group(device, &depth);
        FrameTargets {
            size,
            msaa_color,
            depth,
            water_depth,
        }
    }
}
