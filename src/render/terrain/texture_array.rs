//! Uploading a square RGBA8 2D texture array with its CPU-built mip
//! chains: the one upload the material albedo and surface arrays share.

/// Uploads a square RGBA8 2D array of `format` from each layer's mip
/// chain (level 0 first, all layers the same side; at least one layer) and
/// returns it with its `D2Array` view.
pub fn upload_levels(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    label: &str,
    format: wgpu::TextureFormat,
    layers: &[Vec<(u32, Vec<u8>)>],
) -> (wgpu::Texture, wgpu::TextureView) {
    let n = layers
        .first()
        .and_then(|l| l.first())
        .map_or(1, |(side, _)| *side);
    let mip_count = layers.first().map_or(1, |l| l.len().max(1) as u32);
    let texture = device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d {
            width: n,
            height: n,
            depth_or_array_layers: layers.len().max(1) as u32,
        },
        mip_level_count: mip_count,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    for (layer, chain) in layers.iter().enumerate() {
        for (mip, (size, data)) in chain.iter().enumerate() {
            queue.write_texture(
                wgpu::TexelCopyTextureInfo {
                    texture: &texture,
                    mip_level: mip as u32,
                    origin: wgpu::Origin3d {
                        x: 0,
                        y: 0,
                        z: layer as u32,
                    },
                    aspect: wgpu::TextureAspect::All,
                },
                data,
                wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(4 * size),
                    rows_per_image: Some(*size),
                },
                wgpu::Extent3d {
                    width: *size,
                    height: *size,
                    depth_or_array_layers: 1,
                },
            );
        }
    }
    let view = texture.create_view(&wgpu::TextureViewDescriptor {
        label: Some(label),
        dimension: Some(wgpu::TextureViewDimension::D2Array),
        ..Default::default()
    });
    (texture, view)
}
