//! Every `#[repr(C)]` struct the GPU reads (uniforms, vertices, instances)
//! and the constants shared with the shaders, in one leaf module.
//!
//! Why a module of its own: the pipelines, the buffer managers and the
//! uniform builder all need these types, and when they lived inside the
//! pipeline files those files imported each other in a cycle. Keeping the
//! plain data here (no pipelines, no buffers, nothing else from `render/`)
//! lets every other render module depend on it without depending on each
//! other. Each struct names the WGSL struct it mirrors and asserts its size
//! at compile time; `tests/gpu_layout.rs` checks every field offset against
//! what naga reports for the shaders (after rerun's `re_renderer`
//! `gpu_data` modules).

/// Seconds after which the waves repeat exactly (every wave makes a whole
/// number of cycles). The animation time is wrapped to `[0, WAVE_LOOP_SECS)`
/// before it reaches the GPU. Keep in sync with `WAVE_LOOP_SECS` in
/// `shaders/water.wgsl`.
pub const WAVE_LOOP_SECS: f32 = 60.0;

/// Largest vertical wave displacement (the sum of the wave amplitudes in
/// `shaders/water.wgsl`), studs; culling bounds grow by it. Keep in sync.
pub const WAVE_MAX_DISPLACEMENT_STUDS: f32 = 0.45 + 0.35 + 0.28 + 0.20;

/// `TerrainVertex::normal[3]` of skirt vertices (1.0 as snorm8).
pub const SKIRT_MARK: i8 = 127;

/// `v` clamped to `[-1, 1]` as an `Snorm8` (127 steps per unit), the packing
/// of the terrain and water normals.
pub fn pack_snorm8(v: f32) -> i8 {
    (v.clamp(-1.0, 1.0) * 127.0).round() as i8
}

// ---------------------------------------------------------------------------
// Per-frame uniforms (group 0, binding 0 of every pipeline)

/// Mirrors `struct Globals` in `shaders/globals.wgsl` (prepended to every
/// shader module). Colours are linear RGB.
///
/// Uniform layout: a `vec3<f32>` is 16-byte aligned, so each `[f32; 3]` here
/// starts at a multiple of 16 and is followed by one `f32`, a named scalar
/// or a `_pad*` field that the WGSL struct has too; the size is a multiple
/// of 16.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GlobalUniforms {
    /// Camera-relative world (studs) → clip, reversed-Z infinite perspective.
    pub clip_from_world: [[f32; 4]; 4],
    /// Inverse of `clip_from_world`.
    pub world_from_clip: [[f32; 4]; 4],
    /// Unit direction toward the sun (world).
    pub sun_dir: [f32; 3],
    /// Sun intensity (multiplies `sun_color`).
    pub sun_intensity: f32,
    /// Sun colour.
    pub sun_color: [f32; 3],
    /// Diffuse wrap in `[0, 1]` (how far light wraps past the terminator).
    pub diffuse_wrap: f32,
    /// Sky colour at the zenith.
    pub sky_zenith: [f32; 3],
    /// Ambient strength from the sky (multiplies `sky_zenith`).
    pub sky_ambient: f32,
    /// Horizon colour, which is also the fog colour.
    pub sky_horizon: [f32; 3],
    /// Distance (studs) at which the ground is lost in the fog entirely,
    /// rising to it over the last quarter (the horizon's reach, so the
    /// farthest ground fades into the sky instead of ending in a line); 0
    /// for none.
    pub fog_full_studs: f32,
    /// Ambient light from below (hemisphere bottom).
    pub ground_ambient: [f32; 3],
    /// 1 when the terrain is drawn in the low-poly style (flat palette
    /// colours, walls darkened), else 0.
    pub low_poly: f32,
    /// Fog density, 1/studs.
    pub fog_density: f32,
    /// Maximum fog amount in `[0, 1]`.
    pub fog_max: f32,
    /// Fog height falloff, 1/studs.
    pub fog_height_falloff: f32,
    /// Camera height in world studs (for the height fog).
    pub camera_height_studs: f32,
    /// Brush centre relative to the camera, studs.
    pub brush_centre_rel: [f32; 3],
    /// Brush radius, studs.
    pub brush_radius_studs: f32,
    /// Brush colour.
    pub brush_color: [f32; 3],
    /// 0 when no brush is drawn, else its style code
    /// ([`super::BrushCursor::style_code`], 1..=9).
    pub brush_style: f32,
    /// Viewport size in pixels.
    pub viewport_size_px: [f32; 2],
    /// Reciprocals of `viewport_size_px`.
    pub viewport_inv_size_px: [f32; 2],
    /// 1 when shaders must sRGB-encode their output (non-sRGB target), else 0.
    pub encode_srgb: u32,
    /// The debug overlays that are on, an [`super::OverlaySet`] (bit `i` =
    /// `Overlay::ALL[i]`).
    pub overlay_bits: u32,
    /// Animation time in seconds, wrapped to `[0, WAVE_LOOP_SECS)` (the
    /// water's waves repeat exactly after that, so the wrap is seamless and
    /// the shader never sees a large time).
    pub time_secs: f32,
    /// Padding to a multiple of 16 bytes.
    pub _pad2: f32,
}

const _: () = assert!(std::mem::size_of::<GlobalUniforms>() == 2 * 64 + 10 * 16);

// ---------------------------------------------------------------------------
// Terrain (also read by the wireframe overlay)

/// One terrain vertex as the GPU reads it: mirrors `struct VertexIn` in
/// `shaders/terrain.wgsl` (locations 0–3) and the words `vertex_words`
/// decodes in `shaders/wireframe.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct TerrainVertex {
    /// Position in chunk-local studs (`Float32x3`).
    pub pos_in_chunk: [f32; 3],
    /// Unit normal pointing out of the solid, `Snorm8x4`; w is
    /// [`SKIRT_MARK`] on render-only skirt vertices, else 0 (the `skirts`
    /// overlay tints the triangles that use them).
    pub normal: [i8; 4],
    /// The quad's material set, ascending (`Uint8x4`, flat in the shader).
    pub material_ids: [u8; 4],
    /// Weights for `material_ids`, summing to 255 (`Unorm8x4`).
    pub material_weights: [u8; 4],
}

const _: () = assert!(std::mem::size_of::<TerrainVertex>() == 24);

impl TerrainVertex {
    /// Vertex attributes at shader locations 0..=3.
    pub const ATTRIBUTES: [wgpu::VertexAttribute; 4] = wgpu::vertex_attr_array![
        0 => Float32x3,
        1 => Snorm8x4,
        2 => Uint8x4,
        3 => Unorm8x4,
    ];

    /// Vertex buffer layout (slot 0, per vertex).
    pub fn layout() -> wgpu::VertexBufferLayout<'static> {
        wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<TerrainVertex>() as u64,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &Self::ATTRIBUTES,
        }
    }
}

/// Per-instance data of one drawn chunk (terrain, water and wireframe
/// draws): mirrors the instance members of `struct VertexIn` in
/// `shaders/terrain.wgsl` (locations 4–5), `shaders/water.wgsl` and
/// `shaders/wireframe.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ChunkInstance {
    /// xyz: `chunk.origin_world() - camera.pos_world` in studs, computed in
    /// `f64` and cast once; w: seconds since the chunk's mesh was last
    /// promoted, for the `remesh` overlay (`Float32x4`).
    pub chunk_origin_rel: [f32; 4],
    /// xyz: the integer chunk coordinate, which lets the shader build
    /// globally continuous noise without large float coordinates; w: the
    /// mesh's level of detail (`Sint32x4`).
    pub chunk_coord: [i32; 4],
}

const _: () = assert!(std::mem::size_of::<ChunkInstance>() == 32);

impl ChunkInstance {
    /// Instance attributes at shader locations 4..=5.
    pub const ATTRIBUTES: [wgpu::VertexAttribute; 2] = wgpu::vertex_attr_array![
        4 => Float32x4,
        5 => Sint32x4,
    ];

    /// Vertex buffer layout (per instance; slot 1 of the terrain and water
    /// pipelines, slot 0 of the vertex-pulling wireframe).
    pub fn layout() -> wgpu::VertexBufferLayout<'static> {
        wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<ChunkInstance>() as u64,
            step_mode: wgpu::VertexStepMode::Instance,
            attributes: &Self::ATTRIBUTES,
        }
    }
}

// ---------------------------------------------------------------------------
// Water

/// One water vertex as the GPU reads it: mirrors `struct VertexIn` in
/// `shaders/water.wgsl` (locations 0–2).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct WaterVertex {
    /// Position in chunk-local studs (`Float32x3`).
    pub pos_in_chunk: [f32; 3],
    /// xyz: unit normal (+Y on the sheet, horizontal on side faces); w: the
    /// wave fade in `[0, 1]` (`Snorm8x4`, so the fade has 127 steps).
    pub normal_fade: [i8; 4],
    /// x: the sheet's outline fade, 0 on the sheet's open outline and 1
    /// everywhere else (see [`super::water_buffers::outline_fade`]); yzw
    /// unused (`Unorm8x4`).
    pub outline: [u8; 4],
}

const _: () = assert!(std::mem::size_of::<WaterVertex>() == 20);

impl WaterVertex {
    /// Vertex attributes at shader locations 0..=2.
    pub const ATTRIBUTES: [wgpu::VertexAttribute; 3] = wgpu::vertex_attr_array![
        0 => Float32x3,
        1 => Snorm8x4,
        2 => Unorm8x4,
    ];

    /// Vertex buffer layout (slot 0, per vertex).
    pub fn layout() -> wgpu::VertexBufferLayout<'static> {
        wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<WaterVertex>() as u64,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &Self::ATTRIBUTES,
        }
    }
}

// ---------------------------------------------------------------------------
// Overlay lines

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normals_pack_to_snorm8() {
        assert_eq!(pack_snorm8(1.0), 127);
        assert_eq!(pack_snorm8(-1.0), -127);
        assert_eq!(pack_snorm8(0.0), 0);
    }
}
