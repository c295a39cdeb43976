//! The renderer's one per-frame input, [`FrameSettings`], in the
//! renderer's own terms: the look (sun, fog, draw distance, style, time),
//! the cursor ring to draw on the surface ([`Cursor`]: a colour, a shape
//! and a radius, not an editing tool), the debug overlays that are on and
//! what they show (residency states, seam-audit markers) and the editor's
//! previews. The caller builds one each frame and hands it to
//! `Renderer::prepare`; nothing of it is kept between frames.

use glam::{DVec3, Vec3};

use super::super::lines::{OverlaySet, PreviewLines, ResidencyView};

/// The outline the cursor ring follows on the surface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CursorShape {
    /// A sphere around the centre.
    Sphere,
    /// An axis-aligned cube around the centre.
    Cube,
    /// A vertical cylinder around the centre.
    Cylinder,
}

/// How the tint inside the cursor fades from its centre to its rim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CursorFalloff {
    /// Even all over.
    None,
    /// Linearly to the rim.
    Linear,
    /// Smoothly (smoothstep) to the rim.
    Smooth,
}

/// The cursor the terrain shader draws on the surface: a ring along the
/// shape's outline and a faint tint inside it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cursor {
    /// Centre in world studs.
    pub centre_world: DVec3,
    /// Radius in studs (half the side of a cube).
    pub radius_studs: f32,
    /// Ring colour, linear RGB.
    pub color: [f32; 3],
    /// The outline the ring follows.
    pub shape: CursorShape,
    /// How the inside tint fades.
    pub falloff: CursorFalloff,
}

impl Cursor {
    /// The code the shader decodes from `GlobalUniforms::brush_style`: `1 + shape + 3 · falloff`
    /// (shape: sphere 0, cube 1, cylinder 2; falloff: none 0, linear 1, smooth 2).
    pub fn style_code(&self) -> f32 {
        let shape = match self.shape {
            CursorShape::Sphere => 0,
            CursorShape::Cube => 1,
            CursorShape::Cylinder => 2,
        };
        let falloff = match self.falloff {
            CursorFalloff::None => 0,
            CursorFalloff::Linear => 1,
            CursorFalloff::Smooth => 2,
        };
        (1 + shape + 3 * falloff) as f32
    }
}

/// Everything a frame draws besides the meshes and the camera: the look,
/// the cursor, the overlays and what they show, the editor's previews.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameSettings {
    /// The cursor to draw on the surface, if any.
    pub cursor: Option<Cursor>,
    /// Unit direction toward the sun (world space).
    pub sun_dir: Vec3,
    /// Distance (studs) at which fog reaches about 63 % of its maximum.
    pub fog_distance_studs: f32,
    /// Maximum fog amount in `[0, 1]`.
    pub fog_max: f32,
    /// Distance (studs) at which the ground is lost in the fog entirely,
    /// over the last quarter before it; 0 for none (see
    /// `GlobalUniforms::fog_full_studs`; the renderer replaces it by the
    /// reach of the ground it draws).
    pub fog_full_studs: f32,
    /// Chunks whose bounds lie entirely farther than this (studs) are not
    /// drawn; `f32::INFINITY` draws everything in the frustum.
    pub draw_distance_studs: f32,
    /// Debug overlays to draw (see `render::lines::overlays`).
    pub overlays: OverlaySet,
    /// Animation time in seconds (water waves). The window advances it with
    /// real time; headless frames take `--time` so screenshots reproduce.
    pub time_secs: f32,
    /// Shade the terrain in the low-poly style: each face the flat palette
    /// colour of its material, walls darkened.
    pub low_poly: bool,
    /// The column states the `residency` overlay tints and outlines
    /// (`None`: a world that does not stream; the overlay draws nothing).
    pub residency: Option<ResidencyView>,
    /// Editor previews (paste preview, Flatten plane) drawn with the
    /// overlay lines, whatever the overlays.
    pub previews: Vec<PreviewLines>,
    /// Where the `seam-audit` overlay draws its markers (the mismatches of
    /// the last seam audit), world studs.
    pub seam_markers_world: Vec<DVec3>,
    /// The ground every downward view ray must meet, for the `holes`
    /// overlay: `None` draws no holes.
    pub ground: Option<GroundExtent>,
}

/// Where the ground is certain: the world's footprint is solid from its
/// floor (y = 0) up, and drawn out to `reach_studs` from the camera. A view
/// ray that reaches the floor inside it without meeting a triangle shows
/// the sky through a hole (the `holes` overlay paints it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroundExtent {
    /// The footprint's corner with the smallest x and z, world studs.
    pub min_xz_world: glam::DVec2,
    /// The opposite corner, world studs.
    pub max_xz_world: glam::DVec2,
    /// Horizontal distance from the camera out to which the ground is
    /// drawn, studs (the draw distance).
    pub reach_studs: f64,
}

impl Default for FrameSettings {
    fn default() -> Self {
        FrameSettings {
            cursor: None,
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
            residency: None,
            previews: Vec::new(),
            seam_markers_world: Vec::new(),
            ground: None,
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
        mesh_bounds_world: Option<(DVec3, DVec3)>,
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
