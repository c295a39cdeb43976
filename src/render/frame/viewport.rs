//! The 3D view's rectangle inside the colour target, [`ViewportRect`]
//! (e.g. the area of a window not covered by UI panels).

/// A sub-rectangle of the colour target in physical pixels (top-left origin),
/// e.g. the area of a window not covered by UI panels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewportRect {
    /// Left edge in pixels.
    pub x: f32,
    /// Top edge in pixels.
    pub y: f32,
    /// Width in pixels (> 0).
    pub width: f32,
    /// Height in pixels (> 0).
    pub height: f32,
}

impl ViewportRect {
    /// The whole `[width, height]` target.
    pub fn full(size_px: [u32; 2]) -> Self {
        ViewportRect {
            x: 0.0,
            y: 0.0,
            width: size_px[0] as f32,
            height: size_px[1] as f32,
        }
    }

    /// Size rounded to whole pixels (at least 1×1), for `Renderer::prepare`.
    pub fn size_px(&self) -> [u32; 2] {
        [
            (self.width.round() as u32).max(1),
            (self.height.round() as u32).max(1),
        ]
    }

    /// This rectangle clipped to a `target_size` = `[width, height]` target
    /// as `[x, y, width, height]` pixels, `None` when less than a pixel of
    /// it is left.
    pub fn clipped_to(&self, target_size: [u32; 2]) -> Option<[f32; 4]> {
        let x = self.x.clamp(0.0, target_size[0] as f32);
        let y = self.y.clamp(0.0, target_size[1] as f32);
        let w = self.width.min(target_size[0] as f32 - x);
        let h = self.height.min(target_size[1] as f32 - y);
        if w < 1.0 || h < 1.0 {
            None
        } else {
            Some([x, y, w, h])
        }
    }
}
