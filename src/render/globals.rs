//! Per-frame uniforms shared by every pipeline (bind group 0): how the
//! [`GlobalUniforms`] (defined in [`super::gpu_data`]) are built from the
//! user-facing [`FrameSettings`], and their buffer and bind group.
//!
//! Everything positional is camera-relative (spec §1): the brush centre and
//! the matrices are relative to `camera.pos_world`, computed in `f64` and cast
//! once, so the shaders never see large world coordinates.

use glam::{DVec3, Mat4, Vec3};

use crate::camera::Camera;
use crate::terrain::editing::brush::{BrushMode, BrushShape, Falloff};

use super::gpu_data::WAVE_LOOP_SECS;
use super::overlays::OverlaySet;

pub use super::gpu_data::GlobalUniforms;

/// The brush cursor as the terrain shader draws it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BrushCursor {
    /// Sphere centre in world studs.
    pub centre_world: DVec3,
    /// Sphere radius in studs.
    pub radius_studs: f32,
    /// The tool (ring colour).
    pub mode: BrushMode,
    /// Brush shape: the ring follows its outline on the surface.
    pub shape: BrushShape,
    /// Falloff: the tint inside fades as the brush weight does.
    pub falloff: Falloff,
}

impl BrushCursor {
    /// The code the shader decodes from `GlobalUniforms::brush_style`: `1 + shape + 3 · falloff`
    /// (shape: sphere 0, cube 1, cylinder 2; falloff: none 0, linear 1, smooth 2).
    pub fn style_code(&self) -> f32 {
        let shape = match self.shape {
            BrushShape::Sphere => 0,
            BrushShape::Cube => 1,
            BrushShape::Cylinder => 2,
        };
        let falloff = match self.falloff {
            Falloff::None => 0,
            Falloff::Linear => 1,
            Falloff::Smooth => 2,
        };
        (1 + shape + 3 * falloff) as f32
    }
}

/// Look and per-frame options of a rendered frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameSettings {
    /// The brush ring to draw on the surface, if any.
    pub brush: Option<BrushCursor>,
    /// Unit direction toward the sun (world space).
    pub sun_dir: Vec3,
    /// Distance (studs) at which fog reaches about 63 % of its maximum.
    pub fog_distance_studs: f32,
    /// Maximum fog amount in `[0, 1]`.
    pub fog_max: f32,
    /// Distance (studs) at which the ground is lost in the fog entirely,
    /// over the last quarter before it; 0 for none (see
    /// [`GlobalUniforms::fog_full_studs`]).
    pub fog_full_studs: f32,
    /// Chunks whose bounds lie entirely farther than this (studs) are not
    /// drawn; `f32::INFINITY` draws everything in the frustum.
    pub draw_distance_studs: f32,
    /// Debug overlays to draw (see [`super::overlays`]).
    pub overlays: OverlaySet,
    /// Animation time in seconds (water waves). The window advances it with
    /// real time; headless frames take `--time` so screenshots reproduce.
    pub time_secs: f32,
    /// Shade the terrain in the low-poly style: each face the flat palette
    /// colour of its material, walls darkened.
    pub low_poly: bool,
}

impl Default for FrameSettings {
    fn default() -> Self {
        FrameSettings {
            brush: None,
            // Sun 35° high, from the left of and slightly behind the default
            // framing (which looks along +X −Z): raking light shows relief.
            sun_dir: Vec3::new(-0.28, 0.57, -0.78).normalize(),
            fog_distance_studs: 9000.0,
            fog_max: 0.85,
            fog_full_studs: 0.0,
            draw_distance_studs: f32::INFINITY,
            overlays: OverlaySet::NONE,
            time_secs: 0.0,
            low_poly: false,
        }
    }
}

impl FrameSettings {
    /// Default settings with fog scaled for a scene viewed from `view_distance_studs`
    /// (e.g. the distance from the camera to the terrain centre): the far side
    /// of the terrain gets noticeable haze, the near side almost none.
    pub fn for_view_distance(view_distance_studs: f32) -> FrameSettings {
        FrameSettings {
            fog_distance_studs: (view_distance_studs * 2.2).max(600.0),
            ..FrameSettings::default()
        }
    }

    /// Settings whose fog suits `camera` looking at terrain whose meshes
    /// span `mesh_bounds_world` (`(min, max)` studs): light haze over the
    /// terrain's own extent, more when the camera is far away. Defaults
    /// without meshes.
    pub fn for_camera(
        camera: &crate::camera::Camera,
        mesh_bounds_world: Option<(glam::DVec3, glam::DVec3)>,
    ) -> FrameSettings {
        match mesh_bounds_world {
            Some((lo, hi)) => {
                let centre = (lo + hi) * 0.5;
                let diagonal = (hi - lo).length() as f32;
                let view = centre.distance(camera.pos_world) as f32;
                FrameSettings::for_view_distance(view.max(diagonal * 0.6))
            }
            None => FrameSettings::default(),
        }
    }
}

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
    /// Brush colour in Add mode.
    pub const BRUSH_ADD: [f32; 3] = [0.25, 0.9, 0.35];
    /// Brush colour in Subtract mode.
    pub const BRUSH_SUBTRACT: [f32; 3] = [0.95, 0.25, 0.2];
    /// Brush ring colour of Add water.
    pub const BRUSH_ADD_WATER: [f32; 3] = [0.2, 0.55, 1.0];
    /// Brush ring colour of Remove water.
    pub const BRUSH_REMOVE_WATER: [f32; 3] = [1.0, 0.6, 0.15];
    /// Brush ring colour of Smooth and Flatten.
    pub const BRUSH_SMOOTH: [f32; 3] = [0.95, 0.9, 0.3];
    /// Brush ring colour of Paint and Replace.
    pub const BRUSH_PAINT: [f32; 3] = [0.85, 0.35, 0.95];
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
        let (brush_centre_rel, brush_radius_studs, brush_color, brush_style) = match settings.brush
        {
            Some(b) => {
                let c = cam.relative(b.centre_world);
                let col = match b.mode {
                    BrushMode::Add | BrushMode::Grow => palette::BRUSH_ADD,
                    BrushMode::Subtract
                    | BrushMode::Erode
                    | BrushMode::HydraulicErode
                    | BrushMode::ThermalErode => palette::BRUSH_SUBTRACT,
                    BrushMode::Smooth | BrushMode::Flatten => palette::BRUSH_SMOOTH,
                    BrushMode::Paint | BrushMode::Replace => palette::BRUSH_PAINT,
                    BrushMode::AddWater => palette::BRUSH_ADD_WATER,
                    BrushMode::RemoveWater => palette::BRUSH_REMOVE_WATER,
                };
                (
                    [c.x, c.y, c.z],
                    b.radius_studs.max(0.0),
                    col,
                    b.style_code(),
                )
            }
            None => ([0.0; 3], 0.0, [0.0; 3], 0.0),
        };
        let sun = settings.sun_dir.try_normalize().unwrap_or(Vec3::Y);
        let fog_density = 1.0 / settings.fog_distance_studs.max(1.0);
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
            fog_density,
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
            _pad2: 0.0,
        }
    }
}

/// The uniform buffer, its layout and bind group (group 0 of both pipelines).
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
