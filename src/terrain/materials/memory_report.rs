//! What a material library's textures take on the GPU, per array and per
//! material, as the Materials window and `--stats-json` report it.

use super::surface::SurfaceMaps;

/// GPU memory of a library's textures, for the panel and `--stats-json`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TextureMemoryReport {
    /// Side imported textures are resized to, pixels.
    pub texture_side_px: u32,
    /// Side the texture array is drawn at (256 until a texture is imported).
    pub drawn_side_px: u32,
    /// GPU bytes of the albedo array (one layer per material id, with
    /// mips) and of the surface array beside it (as many layers, once any
    /// material has surface maps; else nothing).
    pub array_gpu_bytes: u64,
    /// Layers of the array: one per material id, then one per top variant.
    pub layers: u32,
    /// The arrays' bytes per layer (albedo, plus surface when drawn).
    pub gpu_bytes_per_layer: u64,
    /// Whether the surface array (normal, roughness, height) is drawn.
    pub surface_array: bool,
    /// One entry per solid material.
    pub materials: Vec<MaterialMemory>,
}

/// One material in a [`TextureMemoryReport`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MaterialMemory {
    /// Material id.
    pub id: u8,
    /// Its name in the world.
    pub name: String,
    /// True when drawn with an imported texture.
    pub imported: bool,
    /// GPU bytes of its imported textures with mips (0 for a built-in).
    pub texture_gpu_bytes: u64,
    /// The surface maps it has.
    pub surface_maps: SurfaceMaps,
}
