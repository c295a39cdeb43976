//! What the line shader reads: the [`LineVertex`] of the overlay lines.
//!
//! The vertex names the WGSL struct it mirrors and asserts its size at
//! compile time; `tests/gpu_layout.rs` checks every attribute offset against
//! what naga reports for the shaders (after rerun's `re_renderer`
//! `gpu_data` modules).

/// One overlay line-list vertex: mirrors `struct VertexIn` in
/// `shaders/lines.wgsl` (locations 0–1).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct LineVertex {
    /// Camera-relative position in studs (`Float32x3`).
    pub pos_rel: [f32; 3],
    /// sRGB colour and linear alpha (`Unorm8x4`).
    pub color: [u8; 4],
}

const _: () = assert!(std::mem::size_of::<LineVertex>() == 16);

impl LineVertex {
    /// Vertex attributes at shader locations 0..=1.
    pub const ATTRIBUTES: [wgpu::VertexAttribute; 2] = wgpu::vertex_attr_array![
        0 => Float32x3,
        1 => Unorm8x4,
    ];

    /// Vertex buffer layout (slot 0, per vertex).
    pub fn layout() -> wgpu::VertexBufferLayout<'static> {
        wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<LineVertex>() as u64,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &Self::ATTRIBUTES,
        }
    }
}
