//! How mesh vertex and index buffers receive their contents, for every
//! per-chunk mesh buffer (terrain chunks, horizon nodes, water).

/// Extra usage for mesh vertex and index buffers created with their contents:
/// `MAP_WRITE` on a device with `MAPPABLE_PRIMARY_BUFFERS` (requested only
/// on software and integrated adapters, whose memory is the host's), so the
/// contents are written into the buffer itself; otherwise none, and wgpu
/// writes them through a staging copy the queue holds until its next
/// submission. On llvmpipe the staging path doubled each upload's memory
/// and CPU copy.
pub fn mesh_upload_usage(device: &wgpu::Device) -> wgpu::BufferUsages {
    if device
        .features()
        .contains(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS)
    {
        wgpu::BufferUsages::MAP_WRITE
    } else {
        wgpu::BufferUsages::empty()
    }
}
