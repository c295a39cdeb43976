//! Brush entries (`add`, `subtract`, … `thermal_erode`): one struct per
//! group of brush tools with the same fields ([`BrushEntry`],
//! [`FlattenEntry`], [`ReplaceEntry`], [`ErosionEntry`]), each holding the
//! fields every brush takes plus its own, and their validation into a
//! [`BrushStroke`].

use glam::DVec3;
use serde::Deserialize;

use crate::terrain::editing::brush::{
    Brush, BrushMode, BrushOptions, BrushShape, Falloff, FlattenLimit, FlattenPlane,
};
use crate::terrain::editing::stroke::{DEFAULT_SPACING_FRACTION, SPACING_FRACTION_RANGE};
use crate::terrain::storage::cell::Material;

use crate::script::format::error::EntryError;
use crate::script::format::fields::fields_of;
use crate::script::format::limits::MAX_PATH_POINTS;
use crate::script::format::script::{BrushStroke, StrokeCentre};

use super::material::{parse_material, solid_material};
use crate::terrain::materials::MaterialLibrary;

/// Declares a brush entry struct: the fields every brush tool takes, then
/// the tool's own (`name: Type,` each, with its doc comment), and `split`,
/// which hands back the shared fields and a tuple of the tool's own.
macro_rules! brush_entry {
    (
        $(#[$doc:meta])*
        $name:ident { $($(#[$field_doc:meta])* $field:ident: $ty:ty,)* }
    ) => {
        $(#[$doc])*
        #[derive(Debug, Default, Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct $name {
            /// One application at this point, world studs.
            centre: Option<[f64; 3]>,
            /// One application on the surface below `(x, z)`, world studs.
            centre_xz: Option<[f64; 2]>,
            /// A stroke along these points, world studs.
            path: Option<Vec<[f64; 3]>>,
            /// A stroke along the surface below these `(x, z)` points, studs.
            path_xz: Option<Vec<[f64; 2]>>,
            /// Spacing between applications, fraction of the radius.
            spacing: Option<f32>,
            /// Keep the path on the plane of its first point.
            plane_lock: bool,
            /// Brush radius, cells.
            radius_cells: Option<f32>,
            /// Strength in (0, 1].
            strength: Option<f32>,
            /// A solid material name.
            material: Option<String>,
            /// Leave water alone.
            ignore_water: bool,
            /// `sphere`, `cube` or `cylinder`.
            shape: Option<String>,
            /// `none`, `linear` or `smooth`.
            falloff: Option<String>,
            $($(#[$field_doc])* $field: $ty,)*
        }

        impl $name {
            /// The fields every brush takes, and this tool's own.
            fn split(self) -> (BrushFields, ($($ty,)*)) {
                (
                    BrushFields {
                        centre: self.centre,
                        centre_xz: self.centre_xz,
                        path: self.path,
                        path_xz: self.path_xz,
                        spacing: self.spacing,
                        plane_lock: self.plane_lock,
                        radius_cells: self.radius_cells,
                        strength: self.strength,
                        material: self.material,
                        ignore_water: self.ignore_water,
                        shape: self.shape,
                        falloff: self.falloff,
                    },
                    ($(self.$field,)*),
                )
            }
        }
    };
}

brush_entry! {
    /// `add`, `subtract`, `add_water`, `remove_water`, `grow`, `erode`,
    /// `smooth` and `paint`: the fields every brush takes.
    BrushEntry {}
}

brush_entry! {
    /// `flatten`: a brush and the plane it flattens toward.
    FlattenEntry {
        /// Flatten toward this height, world studs.
        flatten_height: Option<f64>,
        /// Flatten toward the plane through the first point with this normal.
        flatten_normal: Option<[f64; 3]>,
        /// `both`, `raise_only` or `lower_only`.
        flatten_limit: Option<String>,
    }
}

brush_entry! {
    /// `replace`: a brush and the solid it replaces.
    ReplaceEntry {
        /// The solid material replaced by `material`.
        replace_from: Option<String>,
    }
}

brush_entry! {
    /// `hydraulic_erode` and `thermal_erode`: a brush and its iterations.
    ErosionEntry {
        /// Erosion iterations per application, 1–64.
        iterations: Option<u32>,
    }
}

impl BrushEntry {
    /// The stroke of brush `mode` (one that takes no field of its own).
    ///
    /// # Errors
    /// As [`BrushFields::parse`].
    pub fn parse(
        self,
        mode: BrushMode,
        library: &MaterialLibrary,
    ) -> Result<BrushStroke, EntryError> {
        let (fields, ()) = self.split();
        fields.parse(mode, OwnFields::default(), library)
    }
}

impl FlattenEntry {
    /// The Flatten stroke.
    ///
    /// # Errors
    /// As [`BrushFields::parse`].
    pub fn parse(self, library: &MaterialLibrary) -> Result<BrushStroke, EntryError> {
        let (fields, (flatten_height, flatten_normal, flatten_limit)) = self.split();
        let own = OwnFields {
            flatten_height,
            flatten_normal,
            flatten_limit,
            ..OwnFields::default()
        };
        fields.parse(BrushMode::Flatten, own, library)
    }
}

impl ReplaceEntry {
    /// The Replace stroke.
    ///
    /// # Errors
    /// As [`BrushFields::parse`].
    pub fn parse(self, library: &MaterialLibrary) -> Result<BrushStroke, EntryError> {
        let (fields, (replace_from,)) = self.split();
        let own = OwnFields {
            replace_from,
            ..OwnFields::default()
        };
        fields.parse(BrushMode::Replace, own, library)
    }
}

impl ErosionEntry {
    /// The stroke of erosion brush `mode`.
    ///
    /// # Errors
    /// As [`BrushFields::parse`].
    pub fn parse(
        self,
        mode: BrushMode,
        library: &MaterialLibrary,
    ) -> Result<BrushStroke, EntryError> {
        let (fields, (iterations,)) = self.split();
        let own = OwnFields {
            iterations,
            ..OwnFields::default()
        };
        fields.parse(mode, own, library)
    }
}

/// The error for `field` on a brush tool whose struct lacks it, when it is
/// one only Flatten or only Replace takes (the fields of [`FlattenEntry`]
/// or [`ReplaceEntry`] beyond [`BrushEntry`]'s); `None` for other fields.
pub fn brush_field_elsewhere(field: &str) -> Option<EntryError> {
    let shared = fields_of::<BrushEntry>();
    let own = |fields: &[&str]| fields.contains(&field) && !shared.contains(&field);
    if own(fields_of::<FlattenEntry>()) {
        Some(EntryError::FlattenFieldsUnused)
    } else if own(fields_of::<ReplaceEntry>()) {
        Some(EntryError::ReplaceFromUnused)
    } else {
        None
    }
}

/// The fields every brush entry holds (see `brush_entry!`).
struct BrushFields {
    centre: Option<[f64; 3]>,
    centre_xz: Option<[f64; 2]>,
    path: Option<Vec<[f64; 3]>>,
    path_xz: Option<Vec<[f64; 2]>>,
    spacing: Option<f32>,
    plane_lock: bool,
    radius_cells: Option<f32>,
    strength: Option<f32>,
    material: Option<String>,
    ignore_water: bool,
    shape: Option<String>,
    falloff: Option<String>,
}

/// The fields only some brush tools take; `None` where the tool's struct
/// has no such field.
#[derive(Default)]
struct OwnFields {
    flatten_height: Option<f64>,
    flatten_normal: Option<[f64; 3]>,
    flatten_limit: Option<String>,
    replace_from: Option<String>,
    iterations: Option<u32>,
}

impl BrushFields {
    /// Validates the entry into a stroke of brush `mode`, checking in
    /// order: material, centre or path, radius, the brush, shape, falloff,
    /// flatten limit, Replace's source, the flatten plane, the options and
    /// the spacing.
    ///
    /// # Errors
    /// The first [`EntryError`] found.
    fn parse(
        self,
        mode: BrushMode,
        own: OwnFields,
        library: &MaterialLibrary,
    ) -> Result<BrushStroke, EntryError> {
        let material =
            solid_material(self.material.as_deref(), library)?.unwrap_or(Material::GRASS);
        let path = self.stroke_path()?;
        let radius_cells = self.radius_cells.ok_or(EntryError::MissingRadius)?;
        let brush = Brush {
            mode,
            radius_cells,
            strength: self.strength.unwrap_or(0.5),
            material,
            ignore_water: self.ignore_water,
        };
        brush.validate()?;
        let first = path[0];
        let flatten_from_pick = mode == BrushMode::Flatten
            && own.flatten_height.is_none()
            && (own.flatten_normal.is_some() || matches!(first, StrokeCentre::OnSurface { .. }));
        let options = self.options(mode, own, first, library)?;
        let spacing_fraction = self.spacing.unwrap_or(DEFAULT_SPACING_FRACTION);
        if !spacing_fraction.is_finite() || !SPACING_FRACTION_RANGE.contains(&spacing_fraction) {
            return Err(EntryError::Spacing(spacing_fraction));
        }
        Ok(BrushStroke {
            brush,
            options,
            path,
            spacing_fraction,
            plane_lock: self.plane_lock,
            flatten_from_pick,
        })
    }

    /// The cursor path: exactly one of `centre`, `centre_xz`, `path` and
    /// `path_xz`, with finite points, 1 to [`MAX_PATH_POINTS`] of them.
    fn stroke_path(&self) -> Result<Vec<StrokeCentre>, EntryError> {
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        let path: Vec<StrokeCentre> =
            match (&self.centre, &self.centre_xz, &self.path, &self.path_xz) {
                (Some(c), None, None, None) if finite(c) => {
                    vec![StrokeCentre::World(DVec3::from_array(*c))]
                }
                (None, Some([x, z]), None, None) if x.is_finite() && z.is_finite() => {
                    vec![StrokeCentre::OnSurface { x: *x, z: *z }]
                }
                (None, None, Some(p), None) if p.iter().all(|c| finite(c)) => p
                    .iter()
                    .map(|c| StrokeCentre::World(DVec3::from_array(*c)))
                    .collect(),
                (None, None, None, Some(p)) if p.iter().all(|c| finite(c)) => p
                    .iter()
                    .map(|&[x, z]| StrokeCentre::OnSurface { x, z })
                    .collect(),
                (None, None, None, None) => return Err(EntryError::MissingCentre),
                (c, cxz, p, pxz)
                    if [c.is_some(), cxz.is_some(), p.is_some(), pxz.is_some()]
                        .iter()
                        .filter(|b| **b)
                        .count()
                        > 1 =>
                {
                    return Err(EntryError::SeveralCentres);
                }
                _ => return Err(EntryError::NonFinitePoint),
            };
        if path.is_empty() || path.len() > MAX_PATH_POINTS {
            return Err(EntryError::PathLength(path.len()));
        }
        Ok(path)
    }

    /// Shape, falloff and the tool's own settings, validated for `mode`;
    /// `first` is the path's first point (a flatten normal's plane point).
    fn options(
        &self,
        mode: BrushMode,
        own: OwnFields,
        first: StrokeCentre,
        library: &MaterialLibrary,
    ) -> Result<BrushOptions, EntryError> {
        let shape = match &self.shape {
            None => BrushShape::Sphere,
            Some(n) => parse_shape(n).ok_or_else(|| EntryError::UnknownShape(n.clone()))?,
        };
        let falloff = match &self.falloff {
            None => Falloff::None,
            Some(n) => parse_falloff(n).ok_or_else(|| EntryError::UnknownFalloff(n.clone()))?,
        };
        let flatten_limit = match &own.flatten_limit {
            None => FlattenLimit::Both,
            Some(n) => parse_limit(n).ok_or_else(|| EntryError::UnknownFlattenLimit(n.clone()))?,
        };
        let replace_from = match &own.replace_from {
            Some(n) => parse_material(n, library)
                .filter(|m| m.is_solid())
                .ok_or_else(|| EntryError::NotSolidReplaceFrom(n.clone()))?,
            None if mode == BrushMode::Replace => return Err(EntryError::MissingReplaceFrom),
            None => Material::ROCK,
        };
        let options = BrushOptions {
            shape,
            falloff,
            flatten_plane: flatten_plane(own.flatten_height, own.flatten_normal, first)?,
            flatten_limit,
            replace_from,
            erosion_iterations: own
                .iterations
                .unwrap_or(BrushOptions::default().erosion_iterations),
        };
        options.validate(mode)?;
        Ok(options)
    }
}

/// The plane Flatten flattens toward: a height, or the plane through the
/// first point (its `(x, z)` for a surface point, picked later) with the
/// given normal; `None` when neither is given.
fn flatten_plane(
    height: Option<f64>,
    normal: Option<[f64; 3]>,
    first: StrokeCentre,
) -> Result<Option<FlattenPlane>, EntryError> {
    Ok(match (height, normal) {
        (Some(_), Some(_)) => return Err(EntryError::FlattenHeightAndNormal),
        (Some(h), None) => Some(FlattenPlane::Height { height_world: h }),
        (None, Some(n)) => match first {
            StrokeCentre::World(p) => Some(FlattenPlane::Picked {
                point_world: p,
                normal: DVec3::from_array(n),
            }),
            // The point comes from the pick; the normal is fixed here.
            StrokeCentre::OnSurface { x, z } => Some(FlattenPlane::Picked {
                point_world: DVec3::new(x, 0.0, z),
                normal: DVec3::from_array(n),
            }),
        },
        (None, None) => None,
    })
}

fn parse_shape(name: &str) -> Option<BrushShape> {
    BrushShape::ALL
        .into_iter()
        .find(|s| s.name().eq_ignore_ascii_case(name))
}

fn parse_falloff(name: &str) -> Option<Falloff> {
    Falloff::ALL
        .into_iter()
        .find(|s| s.name().eq_ignore_ascii_case(name))
}

fn parse_limit(name: &str) -> Option<FlattenLimit> {
    match name.to_ascii_lowercase().as_str() {
        "both" => Some(FlattenLimit::Both),
        "raise_only" => Some(FlattenLimit::RaiseOnly),
        "lower_only" => Some(FlattenLimit::LowerOnly),
        _ => None,
    }
}
