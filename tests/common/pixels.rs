//! Pixel expectations for the rendering tests, computed on the CPU: sRGB
//! conversions, the blends the shaders apply over a finished colour, and a
//! grid of pick rays through the pixel corners that says which chunk (if
//! any) covers each whole pixel.

use glam::{DVec3, Vec3};

use strata::camera::Camera;
use strata::pipeline::WorldMeshes;
use strata::pipeline::picking::{PickHit, pick};
use strata::terrain::ChunkCoord;

/// sRGB byte to linear.
pub fn to_linear(c: u8) -> f32 {
    let c = f32::from(c) / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// Linear to an sRGB byte (rounded).
pub fn to_srgb(l: f32) -> u8 {
    let l = l.clamp(0.0, 1.0);
    let c = if l <= 0.003_130_8 {
        l * 12.92
    } else {
        1.055 * l.powf(1.0 / 2.4) - 0.055
    };
    (c * 255.0).round() as u8
}

/// A pixel's RGB in linear space.
pub fn linear(p: &image::Rgba<u8>) -> Vec3 {
    Vec3::new(to_linear(p[0]), to_linear(p[1]), to_linear(p[2]))
}

/// A linear colour as sRGB bytes.
pub fn srgb(c: Vec3) -> [u8; 3] {
    [to_srgb(c.x), to_srgb(c.y), to_srgb(c.z)]
}

/// Largest channel difference between a pixel and an expected colour.
pub fn channel_error(p: &image::Rgba<u8>, want: [u8; 3]) -> u8 {
    (0..3).map(|k| p[k].abs_diff(want[k])).max().unwrap_or(0)
}

/// `overlay_tint` of `shaders/terrain.wgsl`: `tint`, shaded by the
/// luminance of `color`, blended over `color` by `amount` (all linear).
pub fn overlay_tint(color: Vec3, tint: Vec3, amount: f32) -> Vec3 {
    let lum = color.dot(Vec3::new(0.2126, 0.7152, 0.0722));
    let shaded = tint * (0.3 + 1.4 * lum).clamp(0.0, 1.0);
    color.lerp(shaded, amount)
}

/// The blend factor `f` that best explains `actual` as
/// `base + f * (toward - base)` (all linear), by least squares.
pub fn blend_factor(base: Vec3, toward: Vec3, actual: Vec3) -> f32 {
    let d = toward - base;
    (actual - base).dot(d) / d.length_squared().max(1e-9)
}

/// The linear colour of an sRGB byte triple.
pub fn linear_of(srgb: [u8; 3]) -> Vec3 {
    Vec3::new(to_linear(srgb[0]), to_linear(srgb[1]), to_linear(srgb[2]))
}

/// What covers one pixel, judged by the pick rays through its four corners.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cover {
    /// No corner ray hits the terrain: sky (unless a thin feature lies
    /// between the rays).
    Sky,
    /// Every corner ray hits this chunk's surface.
    Chunk(ChunkCoord),
    /// Corners see different chunks, or terrain and sky.
    Mixed,
}

/// Pick rays through every pixel corner of a `width × height` image seen
/// from `camera` (the whole image is the 3D view): `(width + 1) × (height
/// + 1)` hits on the CPU copy of the meshes, without skirts.
pub struct PickGrid {
    width: u32,
    height: u32,
    hits: Vec<Option<PickHit>>,
}

impl PickGrid {
    /// Casts the corner rays against `meshes`.
    pub fn new(camera: &Camera, meshes: &WorldMeshes, width: u32, height: u32) -> PickGrid {
        let mut hits = Vec::with_capacity(((width + 1) * (height + 1)) as usize);
        for y in 0..=height {
            for x in 0..=width {
                let (origin, dir) =
                    camera.ray_from_screen(x as f32, y as f32, width as f32, height as f32);
                hits.push(pick(meshes, origin, dir, 1.0e7));
            }
        }
        PickGrid {
            width,
            height,
            hits,
        }
    }

    /// The hits of the four corners of pixel `(x, y)`.
    pub fn corners(&self, x: u32, y: u32) -> [Option<PickHit>; 4] {
        let at = |cx: u32, cy: u32| self.hits[(cy * (self.width + 1) + cx) as usize];
        [at(x, y), at(x + 1, y), at(x, y + 1), at(x + 1, y + 1)]
    }

    /// What covers pixel `(x, y)`.
    pub fn cover(&self, x: u32, y: u32) -> Cover {
        let c = self.corners(x, y);
        if c.iter().all(Option::is_none) {
            return Cover::Sky;
        }
        match c[0] {
            Some(first) if c.iter().all(|h| h.is_some_and(|h| h.chunk == first.chunk)) => {
                Cover::Chunk(first.chunk)
            }
            _ => Cover::Mixed,
        }
    }

    /// True when no corner ray within `margin` pixels of pixel `(x, y)`
    /// hits the terrain: open sky, away from any silhouette.
    pub fn open_sky(&self, x: u32, y: u32, margin: u32) -> bool {
        let (x0, y0) = (x.saturating_sub(margin), y.saturating_sub(margin));
        let (x1, y1) = (
            (x + 1 + margin).min(self.width),
            (y + 1 + margin).min(self.height),
        );
        (y0..=y1).all(|cy| {
            (x0..=x1).all(|cx| self.hits[(cy * (self.width + 1) + cx) as usize].is_none())
        })
    }

    /// The pixels, row by row, as `(x, y)`.
    pub fn pixels(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..self.height).flat_map(move |y| (0..self.width).map(move |x| (x, y)))
    }
}

/// Distance from point `p` to the segment `a`–`b` (pixels).
pub fn segment_distance(p: (f32, f32), a: (f32, f32), b: (f32, f32)) -> f32 {
    let (px, py) = (p.0 - a.0, p.1 - a.1);
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 {
        ((px * dx + py * dy) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    ((px - t * dx).powi(2) + (py - t * dy).powi(2)).sqrt()
}

/// The 12 edges of the box `lo..hi` (world studs) projected to pixels of a
/// `width × height` view; edges with an end behind the camera are left out.
pub fn projected_box_edges(
    camera: &Camera,
    lo: DVec3,
    hi: DVec3,
    width: u32,
    height: u32,
) -> Vec<((f32, f32), (f32, f32))> {
    let corner = |i: usize| {
        DVec3::new(
            if i & 1 == 0 { lo.x } else { hi.x },
            if i & 2 == 0 { lo.y } else { hi.y },
            if i & 4 == 0 { lo.z } else { hi.z },
        )
    };
    let mut edges = Vec::new();
    for i in 0..8usize {
        for bit in [1usize, 2, 4] {
            if i & bit == 0 {
                let (a, b) = (corner(i), corner(i | bit));
                let project = |p| camera.project_to_screen(p, width as f32, height as f32);
                if let (Some(a), Some(b)) = (project(a), project(b)) {
                    edges.push((a, b));
                }
            }
        }
    }
    edges
}
