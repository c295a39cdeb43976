//! The per-frame uniforms every pipeline reads as bind group 0: the
//! [`GlobalUniforms`] Pod (the Rust mirror of `struct Globals` in
//! `shaders/globals.wgsl`), how they are built from the frame's
//! [`FrameSettings`], the sky palette, and their buffer, layout and bind
//! group ([`GlobalsBinding`]). The feature renderers take the layout when
//! they build their pipelines and the bind group when they draw; none of
//! them builds or writes the uniforms.
//!
//! Everything positional is camera-relative (spec §1): the cursor centre and
//! the matrices are relative to `camera.pos_world`, computed in `f64` and cast
//! once, so the shaders never see large world coordinates. The struct
//! asserts its size at compile time; `tests/gpu_layout.rs` checks every
//! field offset against what naga reports for the shaders.

use glam::{Mat4, Vec3};

use crate::camera::Camera;

use super::super::water::WAVE_LOOP_SECS;
use super::frame_settings::{FrameSettings, GroundExtent};

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
    /// Cursor centre relative to the camera, studs.
    pub brush_centre_rel: [f32; 3],
    /// Cursor radius, studs.
    pub brush_radius_studs: f32,
    /// Cursor ring colour, linear RGB.
    pub brush_color: [f32; 3],
    /// 0 when no cursor is drawn, else its style code
    /// ([`Cursor::style_code`](super::frame_settings::Cursor::style_code), 1..=9).
    pub brush_style: f32,
    /// Viewport size in pixels.
    pub viewport_size_px: [f32; 2],
    /// Reciprocals of `viewport_size_px`.
    pub viewport_inv_size_px: [f32; 2],
    /// 1 when shaders must sRGB-encode their output (non-sRGB target), else 0.
    pub encode_srgb: u32,
    /// The debug overlays that are on, an `OverlaySet` (bit `i` =
    /// `Overlay::ALL[i]`).
    pub overlay_bits: u32,
    /// Animation time in seconds, wrapped to `[0, WAVE_LOOP_SECS)` (the
    /// water's waves repeat exactly after that, so the wrap is seamless and
    /// the shader never sees a large time).
    pub time_secs: f32,
    /// How far from the camera (horizontal studs) the `holes` overlay
    /// expects ground under every downward ray; 0 without a ground extent.
    pub holes_reach_studs: f32,
    /// The world's footprint relative to the camera, studs: `[min x, min z,
    /// max x, max z]` (the `holes` overlay's ground; zeros without one).
    pub ground_footprint_rel: [f32; 4],
}

const _: () = assert!(std::mem::size_of::<GlobalUniforms>() == 2 * 64 + 11 * 16);

/// Sky colours shared by the sky, the fog and the clear colour (linear RGB).
pub mod palette {
    /// Sky at the zenith.
    pub const SKY_ZENITH: [f32; 3] = [0.14, 0.30, 0.66];
    /// Sky at the horizon; the fog colour.
    pub const SKY_HORIZON: [f32; 3] = [0.52, 0.64, 0.82];
    /// Direct sunlight.
    pub const SUN: [f32; 3] = [1.0, 0.93, 0.82];
    /// Ambient bounce from the ground.
    pub const GROUND_AMBIENT: [f32; 3] = [0.16, 0.14, 0.11];
}

/// `time_secs` wrapped into `[0, WAVE_LOOP_SECS)` (0 for non-finite input).
pub fn wrap_wave_time(time_secs: f32) -> f32 {
    if !time_secs.is_finite() {
        return 0.0;
    }
    let t = f64::from(time_secs).rem_euclid(f64::from(WAVE_LOOP_SECS)) as f32;
    // Rounding can land exactly on the loop length; that is time 0 again.
    if t >= WAVE_LOOP_SECS { 0.0 } else { t }
}

/// Fog density (1/studs) for fog reaching about 63 % at `fog_distance_studs`.
fn fog_density(fog_distance_studs: f32) -> f32 {
    1.0 / fog_distance_studs.max(1.0)
}

impl GlobalUniforms {
    /// Builds the uniforms for `camera` over a `viewport_px` = `[width, height]` viewport.
    /// `encode_srgb` is true when the colour target is not an sRGB format.
    pub fn new(
        camera: &Camera,
        settings: &FrameSettings,
        viewport_px: [u32; 2],
        encode_srgb: bool,
    ) -> Self {
        let mut cam = *camera;
        let (w, h) = (viewport_px[0].max(1) as f32, viewport_px[1].max(1) as f32);
        cam.aspect = w / h;
        let clip_from_world: Mat4 = cam.clip_from_world();
        let (brush_centre_rel, brush_radius_studs, brush_color, brush_style) = match settings.cursor
        {
            Some(c) => {
                let centre = cam.relative(c.centre_world);
                (
                    [centre.x, centre.y, centre.z],
                    c.radius_studs.max(0.0),
                    c.color,
                    c.style_code(),
                )
            }
            None => ([0.0; 3], 0.0, [0.0; 3], 0.0),
        };
        let sun = settings.sun_dir.try_normalize().unwrap_or(Vec3::Y);
        GlobalUniforms {
            clip_from_world: clip_from_world.to_cols_array_2d(),
            world_from_clip: clip_from_world.inverse().to_cols_array_2d(),
            sun_dir: sun.to_array(),
            sun_intensity: 2.3,
            sun_color: palette::SUN,
            diffuse_wrap: 0.25,
            sky_zenith: palette::SKY_ZENITH,
            sky_ambient: 1.3,
            sky_horizon: palette::SKY_HORIZON,
            fog_full_studs: settings.fog_full_studs.max(0.0),
            ground_ambient: palette::GROUND_AMBIENT,
            low_poly: if settings.low_poly { 1.0 } else { 0.0 },
            fog_density: fog_density(settings.fog_distance_studs),
            fog_max: settings.fog_max.clamp(0.0, 1.0),
            fog_height_falloff: 1.0 / 1500.0,
            camera_height_studs: camera.pos_world.y as f32,
            brush_centre_rel,
            brush_radius_studs,
            brush_color,
            brush_style,
            viewport_size_px: [w, h],
            viewport_inv_size_px: [1.0 / w, 1.0 / h],
            encode_srgb: u32::from(encode_srgb),
            overlay_bits: settings.overlays.bits(),
            time_secs: wrap_wave_time(settings.time_secs),
            holes_reach_studs: 0.0,
            ground_footprint_rel: [0.0; 4],
        }
        .with_ground(camera, settings.ground.as_ref())
    }

    /// Sets the `holes` overlay's ground: `ground`'s footprint relative to
    /// `camera` and its reach (a non-finite or negative reach, or none,
    /// turns the probe off).
    fn with_ground(mut self, camera: &Camera, ground: Option<&GroundExtent>) -> Self {
        if let Some(g) = ground
            && g.reach_studs.is_finite()
            && g.reach_studs > 0.0
        {
            let c = camera.pos_world;
            self.holes_reach_studs = g.reach_studs as f32;
            self.ground_footprint_rel = [
                (g.min_xz_world.x - c.x) as f32,
                (g.min_xz_world.y - c.z) as f32,
                (g.max_xz_world.x - c.x) as f32,
                (g.max_xz_world.y - c.z) as f32,
            ];
        }
        self
    }

    /// Thickens the fog toward `ground_reach_studs`, the farthest ground
    /// drawn (with a horizon its farthest node, not the chunk meshes'
    /// extent): the fog distance grows to it when `settings` put it nearer,
    /// and the ground is lost in the fog entirely at it, so the farthest
    /// nodes fade into the sky instead of ending in a line.
    pub fn fog_to_reach(&mut self, settings: &FrameSettings, ground_reach_studs: f32) {
        self.fog_density = fog_density(settings.fog_distance_studs.max(ground_reach_studs));
        self.fog_full_studs = ground_reach_studs.max(0.0);
    }
}

/// The uniform buffer, its layout and bind group (group 0 of every pipeline).
pub struct GlobalsBinding {
    /// Uniform buffer holding one [`GlobalUniforms`].
    pub buffer: wgpu::Buffer,
    /// Layout of group 0: binding 0 = the uniform, visible to vertex and fragment.
    pub layout: wgpu::BindGroupLayout,
    /// Bind group over [`GlobalsBinding::buffer`].
    pub bind_group: wgpu::BindGroup,
}

impl GlobalsBinding {
    /// Creates the buffer (zeroed), layout and bind group.
    pub fn new(device: &wgpu::Device) -> Self {
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("globals"),
            size: std::mem::size_of::<GlobalUniforms>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("globals layout"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: wgpu::BufferSize::new(
                        std::mem::size_of::<GlobalUniforms>() as u64
                    ),
                },
                count: None,
            }],
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("globals"),
            layout: &layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: buffer.as_entire_binding(),
            }],
        });
        GlobalsBinding {
            buffer,
            layout,
            bind_group,
        }
    }

    /// Writes this frame's uniforms.
    pub fn write(&self, queue: &wgpu::Queue, uniforms: &GlobalUniforms) {
        queue.write_buffer(&self.buffer, 0, bytemuck::bytes_of(uniforms));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wave_time_wraps_into_the_loop() {
        assert_eq!(wrap_wave_time(1.5), 1.5);
        assert_eq!(wrap_wave_time(WAVE_LOOP_SECS + 1.5), 1.5);
        assert!((wrap_wave_time(-1.0) - (WAVE_LOOP_SECS - 1.0)).abs() < 1e-4);
        assert_eq!(wrap_wave_time(f32::NAN), 0.0);
        assert!(wrap_wave_time(1.0e9) < WAVE_LOOP_SECS);
    }
}
