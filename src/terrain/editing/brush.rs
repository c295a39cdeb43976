//! Brush settings: what a brush does ([`BrushMode`]), its shape, falloff
//! and strength ([`Brush`]) and the per-tool options ([`BrushOptions`]),
//! with the checks every entry point runs before a cell changes
//! ([`EditError`]). The per-cell kernels that turn a brush into new cells
//! live in [`super::kernels`].

use glam::{DVec3, IVec3};

use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::{
    CELL_SIZE_STUDS, CellBox, LATTICE_CELLS, MAX_CELL_COORD, MIN_CELL_COORD,
};
use crate::terrain::storage::grid::GridError;

/// Smallest and largest brush radius, in cells.
pub const BRUSH_RADIUS_RANGE_CELLS: std::ops::RangeInclusive<f32> = 1.0..=64.0;

/// Occupancy Grow adds and Erode removes per application at full weight
/// (a quarter cell).
pub const GROW_STEP_OCCUPANCY: f64 = 64.0;

/// What a brush does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BrushMode {
    /// Raise solid occupancy toward the brush shape, filling empty cells with
    /// the brush material.
    Add,
    /// Lower solid occupancy toward the outside of the brush shape.
    Subtract,
    /// Raise water toward the brush shape in cells without solid (air or water).
    AddWater,
    /// Lower water toward the outside of the brush shape.
    RemoveWater,
    /// Raise solid occupancy of cells on the surface (the surface moves outward).
    Grow,
    /// Lower solid occupancy of exposed cells (the surface moves inward).
    Erode,
    /// Blur solid occupancy toward the 3×3×3 neighbourhood mean.
    Smooth,
    /// Move solid occupancy toward a plane (see [`FlattenPlane`]).
    Flatten,
    /// Set the material of solid surface cells; occupancy untouched.
    Paint,
    /// Replace one solid material by another; occupancy untouched.
    Replace,
    /// Droplets run downhill from the brush, carrying occupancy away and
    /// depositing it downstream ([`crate::terrain::editing::erosion_brush`]).
    HydraulicErode,
    /// Slopes steeper than the talus angle slump ([`crate::terrain::editing::erosion_brush`]).
    ThermalErode,
}

impl BrushMode {
    /// Every mode, in panel order.
    pub const ALL: [BrushMode; 12] = [
        BrushMode::Add,
        BrushMode::Subtract,
        BrushMode::AddWater,
        BrushMode::RemoveWater,
        BrushMode::Grow,
        BrushMode::Erode,
        BrushMode::Smooth,
        BrushMode::Flatten,
        BrushMode::Paint,
        BrushMode::Replace,
        BrushMode::HydraulicErode,
        BrushMode::ThermalErode,
    ];

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            BrushMode::Add => "Add",
            BrushMode::Subtract => "Subtract",
            BrushMode::AddWater => "Add water",
            BrushMode::RemoveWater => "Remove water",
            BrushMode::Grow => "Grow",
            BrushMode::Erode => "Erode",
            BrushMode::Smooth => "Smooth",
            BrushMode::Flatten => "Flatten",
            BrushMode::Paint => "Paint",
            BrushMode::Replace => "Replace",
            BrushMode::HydraulicErode => "Hydraulic erode",
            BrushMode::ThermalErode => "Thermal erode",
        }
    }

    /// Name used in scripts, e.g. `"add_water"`.
    pub fn script_name(self) -> &'static str {
        match self {
            BrushMode::Add => "add",
            BrushMode::Subtract => "subtract",
            BrushMode::AddWater => "add_water",
            BrushMode::RemoveWater => "remove_water",
            BrushMode::Grow => "grow",
            BrushMode::Erode => "erode",
            BrushMode::Smooth => "smooth",
            BrushMode::Flatten => "flatten",
            BrushMode::Paint => "paint",
            BrushMode::Replace => "replace",
            BrushMode::HydraulicErode => "hydraulic_erode",
            BrushMode::ThermalErode => "thermal_erode",
        }
    }

    /// True for the modes that move solid terrain (and honour "ignore water").
    pub fn is_sculpt(self) -> bool {
        matches!(
            self,
            BrushMode::Add
                | BrushMode::Subtract
                | BrushMode::Grow
                | BrushMode::Erode
                | BrushMode::Smooth
                | BrushMode::Flatten
        )
    }

    /// True for the erosion brushes, which move whole column tops
    /// ([`crate::terrain::editing::erosion_brush`]) instead of cells one by one.
    pub fn is_erosion(self) -> bool {
        matches!(self, BrushMode::HydraulicErode | BrushMode::ThermalErode)
    }

    /// True for the modes that change materials only.
    pub fn is_paint(self) -> bool {
        matches!(self, BrushMode::Paint | BrushMode::Replace)
    }

    /// True when the brush material is used (and must be a known solid).
    pub fn uses_material(self) -> bool {
        matches!(
            self,
            BrushMode::Add
                | BrushMode::Grow
                | BrushMode::Smooth
                | BrushMode::Flatten
                | BrushMode::Paint
                | BrushMode::Replace
        )
    }

    /// True for modes whose result at a cell depends on its neighbours.
    pub(crate) fn reads_neighbours(self) -> bool {
        matches!(
            self,
            BrushMode::Grow | BrushMode::Erode | BrushMode::Smooth | BrushMode::Paint
        )
    }
}

/// The brush's shape around its centre.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum BrushShape {
    /// Euclidean distance.
    #[default]
    Sphere,
    /// Chebyshev distance: an axis-aligned cube of half-size `radius`.
    Cube,
    /// A vertical cylinder of radius `radius` and half-height `radius`.
    Cylinder,
}

impl BrushShape {
    /// Every shape, in panel order.
    pub const ALL: [BrushShape; 3] = [BrushShape::Sphere, BrushShape::Cube, BrushShape::Cylinder];

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            BrushShape::Sphere => "Sphere",
            BrushShape::Cube => "Cube",
            BrushShape::Cylinder => "Cylinder",
        }
    }

    /// Shape distance of `offset` (cells) from the centre: the brush covers
    /// distances below its radius.
    pub fn distance(self, offset: DVec3) -> f64 {
        match self {
            BrushShape::Sphere => offset.length(),
            BrushShape::Cube => offset.abs().max_element(),
            BrushShape::Cylinder => offset.x.hypot(offset.z).max(offset.y.abs()),
        }
    }
}

/// How the brush weight falls off from the centre to the radius.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Falloff {
    /// Full weight everywhere inside (the classic hard brush).
    #[default]
    None,
    /// `1 − t`, with `t` the distance over the radius.
    Linear,
    /// `1 − smoothstep(t) = 1 − t²(3 − 2t)`.
    Smooth,
}

impl Falloff {
    /// Every falloff, in panel order.
    pub const ALL: [Falloff; 3] = [Falloff::Smooth, Falloff::Linear, Falloff::None];

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            Falloff::None => "None",
            Falloff::Linear => "Linear",
            Falloff::Smooth => "Smooth",
        }
    }

    /// The weight at normalized distance `t` (clamped to `[0, 1]`).
    pub fn weight(self, t: f64) -> f64 {
        let t = t.clamp(0.0, 1.0);
        match self {
            Falloff::None => 1.0,
            Falloff::Linear => 1.0 - t,
            Falloff::Smooth => 1.0 - t * t * (3.0 - 2.0 * t),
        }
    }
}

/// The plane Flatten moves terrain toward.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlattenPlane {
    /// Through `point_world` (studs) with `normal` (need not be unit length);
    /// solid goes to the side opposite the normal.
    Picked {
        /// A point on the plane, world studs.
        point_world: DVec3,
        /// The plane normal (pointing out of the terrain).
        normal: DVec3,
    },
    /// The horizontal plane `y = height_world` (studs).
    Height {
        /// Plane height, world studs.
        height_world: f64,
    },
}

impl FlattenPlane {
    /// The plane as a point on it (world studs) and its unit normal, as
    /// Flatten uses it: solid goes below, toward `-normal`. A `Picked`
    /// normal of zero length gives NaN (rejected by [`BrushOptions::validate`]).
    pub fn point_and_normal_world(&self) -> (DVec3, DVec3) {
        match *self {
            FlattenPlane::Picked {
                point_world,
                normal,
            } => (point_world, normal.normalize()),
            FlattenPlane::Height { height_world } => (DVec3::new(0.0, height_world, 0.0), DVec3::Y),
        }
    }

    /// The point of the plane under a brush centred at `centre_world`
    /// (studs): the centre projected along the normal onto the plane. Flatten
    /// moves the terrain under the brush toward the plane around this point.
    pub fn foot_world(&self, centre_world: DVec3) -> DVec3 {
        let (point_world, normal) = self.point_and_normal_world();
        centre_world - normal * (centre_world - point_world).dot(normal)
    }
}

/// Which way Flatten may move occupancy.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum FlattenLimit {
    /// Raise and lower.
    #[default]
    Both,
    /// Only fill below the plane.
    RaiseOnly,
    /// Only cut above the plane.
    LowerOnly,
}

impl FlattenLimit {
    /// Every limit, in panel order.
    pub const ALL: [FlattenLimit; 3] = [
        FlattenLimit::Both,
        FlattenLimit::RaiseOnly,
        FlattenLimit::LowerOnly,
    ];

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            FlattenLimit::Both => "Both",
            FlattenLimit::RaiseOnly => "Raise only",
            FlattenLimit::LowerOnly => "Lower only",
        }
    }
}

/// A brush: mode, radius, strength, material and water handling.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Brush {
    /// What the brush does.
    pub mode: BrushMode,
    /// Brush radius in cells, within [`BRUSH_RADIUS_RANGE_CELLS`].
    pub radius_cells: f32,
    /// Fraction of the way each application moves toward the tool's target, `(0, 1]`.
    pub strength: f32,
    /// Material given to cells the brush fills, and the Paint material and
    /// the Replace target (must be solid for those modes; unused by the others).
    pub material: Material,
    /// Sculpt modes leave water cells bit-identical (Add does not replace water).
    pub ignore_water: bool,
}

/// Shape, falloff and tool-specific settings of a brush. The default is the
/// classic hard sphere ([`crate::terrain::editing::kernels::apply_brush`] uses it).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrushOptions {
    /// The brush's shape.
    pub shape: BrushShape,
    /// How its weight falls off toward the radius.
    pub falloff: Falloff,
    /// Flatten's plane; `None` flattens to the horizontal plane through the brush centre.
    pub flatten_plane: Option<FlattenPlane>,
    /// Which way Flatten may move occupancy.
    pub flatten_limit: FlattenLimit,
    /// Replace's source material (must be a known solid for Replace).
    pub replace_from: Material,
    /// Passes (Thermal erode) or droplet batches (Hydraulic erode) per
    /// application of an erosion brush, within [`EROSION_ITERATIONS_RANGE`].
    pub erosion_iterations: u32,
}

/// Allowed [`BrushOptions::erosion_iterations`].
pub const EROSION_ITERATIONS_RANGE: std::ops::RangeInclusive<u32> = 1..=64;

impl Default for BrushOptions {
    fn default() -> Self {
        BrushOptions {
            shape: BrushShape::default(),
            falloff: Falloff::default(),
            flatten_plane: None,
            flatten_limit: FlattenLimit::default(),
            replace_from: Material::default(),
            erosion_iterations: 8,
        }
    }
}

/// Bad brush input. The grid is never changed when one of these is returned.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum EditError {
    /// Radius not finite or outside [`BRUSH_RADIUS_RANGE_CELLS`].
    #[error("brush radius {0} cells is outside 1..=64")]
    InvalidRadius(f32),
    /// Strength not finite or outside `(0, 1]`.
    #[error("brush strength {0} is outside (0, 1]")]
    InvalidStrength(f32),
    /// Centre with a NaN or infinite component, or so far out that the
    /// brush would reach cells off the valid lattice
    /// ([`crate::terrain::storage::coords::LATTICE_CELLS`]).
    #[error(
        "brush centre {0:?} (studs) is not a finite position whose brush stays on the cell \
         lattice (cells {MIN_CELL_COORD}..={MAX_CELL_COORD} on each axis)"
    )]
    InvalidCentre(DVec3),
    /// Material is Air or Water, or unknown.
    #[error("brush material {0} is not a solid material")]
    InvalidMaterial(u8),
    /// Replace's source material is Air or Water, or unknown.
    #[error("replace source material {0} is not a solid material")]
    InvalidReplaceMaterial(u8),
    /// Erosion iterations outside [`EROSION_ITERATIONS_RANGE`].
    #[error("erosion iterations {0} is outside 1..=64")]
    InvalidIterations(u32),
    /// Flatten plane with a non-finite point or height, or a zero or non-finite normal.
    #[error("flatten plane {0:?} needs a finite point and a non-zero finite normal")]
    InvalidPlane(FlattenPlane),
    /// The grid refused the region.
    #[error(transparent)]
    Grid(#[from] GridError),
}

/// True when `m` is a solid material (a built-in or a library id).
fn is_known_solid(m: Material) -> bool {
    m.is_solid()
}

impl Brush {
    /// Checks every field; see [`EditError`].
    pub fn validate(&self) -> Result<(), EditError> {
        if !self.radius_cells.is_finite() || !BRUSH_RADIUS_RANGE_CELLS.contains(&self.radius_cells)
        {
            return Err(EditError::InvalidRadius(self.radius_cells));
        }
        if !self.strength.is_finite() || self.strength <= 0.0 || self.strength > 1.0 {
            return Err(EditError::InvalidStrength(self.strength));
        }
        if self.mode.uses_material() && !is_known_solid(self.material) {
            return Err(EditError::InvalidMaterial(self.material.0));
        }
        Ok(())
    }

    /// The box of cells this brush can touch when centred at `centre_world`.
    /// Every shape lies within the cube of half-size `radius + 1` cells.
    pub fn region(&self, centre_world: DVec3) -> Result<CellBox, EditError> {
        self.validate()?;
        if !centre_world.is_finite() {
            return Err(EditError::InvalidCentre(centre_world));
        }
        let centre_cells = centre_world / CELL_SIZE_STUDS as f64;
        let reach = self.radius_cells as f64 + 1.0;
        let lo = (centre_cells - DVec3::splat(reach)).floor();
        let hi = (centre_cells + DVec3::splat(reach)).ceil();
        // Compared in f64, before any conversion could saturate a far value
        // into range: every cell the brush can reach must be on the lattice.
        if lo.min_element() < f64::from(LATTICE_CELLS.min.x)
            || hi.max_element() > f64::from(LATTICE_CELLS.max.x)
        {
            return Err(EditError::InvalidCentre(centre_world));
        }
        Ok(CellBox::new(
            IVec3::new(lo.x as i32, lo.y as i32, lo.z as i32),
            IVec3::new(hi.x as i32, hi.y as i32, hi.z as i32),
        ))
    }
}

impl Brush {
    /// The history and Layers label of a stroke of this brush with
    /// `applications` applications, e.g. `"Paint (Sand) ×12"` or
    /// `"Subtract ×3"`.
    pub fn stroke_label(&self, applications: usize) -> String {
        let mode = self.mode;
        if mode.uses_material() {
            format!("{} ({}) ×{applications}", mode.name(), self.material.name())
        } else {
            format!("{} ×{applications}", mode.name())
        }
    }
}

impl BrushOptions {
    /// Checks the settings `mode` uses; see [`EditError`].
    pub fn validate(&self, mode: BrushMode) -> Result<(), EditError> {
        if mode == BrushMode::Replace && !is_known_solid(self.replace_from) {
            return Err(EditError::InvalidReplaceMaterial(self.replace_from.0));
        }
        if mode.is_erosion() && !EROSION_ITERATIONS_RANGE.contains(&self.erosion_iterations) {
            return Err(EditError::InvalidIterations(self.erosion_iterations));
        }
        if mode == BrushMode::Flatten
            && let Some(plane) = self.flatten_plane
        {
            let ok = match plane {
                FlattenPlane::Picked {
                    point_world,
                    normal,
                } => {
                    point_world.is_finite()
                        && normal.is_finite()
                        && normal.length_squared() > 1e-12
                        && point_world.abs().max_element() < 1e12
                }
                FlattenPlane::Height { height_world } => {
                    height_world.is_finite() && height_world.abs() < 1e12
                }
            };
            if !ok {
                return Err(EditError::InvalidPlane(plane));
            }
        }
        Ok(())
    }
}
