//! The brush as the renderer draws it: the editor's tool (mode, shape,
//! falloff, radius) turned into the renderer's [`Cursor`], a ring of one
//! colour per kind of tool along the brush's outline on the surface.

use glam::DVec3;

use crate::render::frame::frame_settings::{Cursor, CursorFalloff, CursorShape};
use crate::terrain::editing::brush::{BrushMode, BrushShape, Falloff};

/// Ring colours of the brush tools (linear RGB).
pub mod palette {
    /// Add and Grow.
    pub const BRUSH_ADD: [f32; 3] = [0.25, 0.9, 0.35];
    /// Subtract and the erosion tools.
    pub const BRUSH_SUBTRACT: [f32; 3] = [0.95, 0.25, 0.2];
    /// Add water.
    pub const BRUSH_ADD_WATER: [f32; 3] = [0.2, 0.55, 1.0];
    /// Remove water.
    pub const BRUSH_REMOVE_WATER: [f32; 3] = [1.0, 0.6, 0.15];
    /// Smooth and Flatten.
    pub const BRUSH_SMOOTH: [f32; 3] = [0.95, 0.9, 0.3];
    /// Paint and Replace.
    pub const BRUSH_PAINT: [f32; 3] = [0.85, 0.35, 0.95];
}

/// The brush under the cursor, in the editor's terms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BrushCursor {
    /// Brush centre in world studs.
    pub centre_world: DVec3,
    /// Brush radius in studs.
    pub radius_studs: f32,
    /// The tool (ring colour).
    pub mode: BrushMode,
    /// Brush shape: the ring follows its outline on the surface.
    pub shape: BrushShape,
    /// Falloff: the tint inside fades as the brush weight does.
    pub falloff: Falloff,
}

impl BrushCursor {
    /// The cursor the renderer draws for this brush.
    pub fn cursor(&self) -> Cursor {
        Cursor {
            centre_world: self.centre_world,
            radius_studs: self.radius_studs,
            color: ring_color(self.mode),
            shape: match self.shape {
                BrushShape::Sphere => CursorShape::Sphere,
                BrushShape::Cube => CursorShape::Cube,
                BrushShape::Cylinder => CursorShape::Cylinder,
            },
            falloff: match self.falloff {
                Falloff::None => CursorFalloff::None,
                Falloff::Linear => CursorFalloff::Linear,
                Falloff::Smooth => CursorFalloff::Smooth,
            },
        }
    }
}

/// The ring colour of `mode` (linear RGB): one per kind of tool.
pub fn ring_color(mode: BrushMode) -> [f32; 3] {
    match mode {
        BrushMode::Add | BrushMode::Grow => palette::BRUSH_ADD,
        BrushMode::Subtract
        | BrushMode::Erode
        | BrushMode::HydraulicErode
        | BrushMode::ThermalErode => palette::BRUSH_SUBTRACT,
        BrushMode::Smooth | BrushMode::Flatten => palette::BRUSH_SMOOTH,
        BrushMode::Paint | BrushMode::Replace => palette::BRUSH_PAINT,
        BrushMode::AddWater => palette::BRUSH_ADD_WATER,
        BrushMode::RemoveWater => palette::BRUSH_REMOVE_WATER,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_and_falloff_has_its_own_style_code() {
        let mut codes = std::collections::BTreeSet::new();
        for shape in BrushShape::ALL {
            for falloff in Falloff::ALL {
                let brush = BrushCursor {
                    centre_world: DVec3::ZERO,
                    radius_studs: 8.0,
                    mode: BrushMode::Add,
                    shape,
                    falloff,
                };
                codes.insert(brush.cursor().style_code() as u32);
            }
        }
        assert_eq!(codes, (1..=9).collect());
    }
}
