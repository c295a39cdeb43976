//! `path` entries: a road, river or routed road laid along a spline.

use glam::DVec2;
use serde::Deserialize;

use crate::terrain::command::edit_command::EditCommand;
use crate::terrain::path::spec::{PathMode, PathSpec};

use crate::script::format::error::EntryError;

use super::material::solid_material;
use crate::terrain::materials::MaterialLibrary;

/// `path`: the mode, control points and shape (defaults as
/// [`PathSpec::road`] and [`PathSpec::river`]).
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PathEntry {
    /// `road` (default), `river` or `route`.
    mode: Option<String>,
    /// Control points, world `(x, z)` studs.
    points: Option<Vec<[f64; 2]>>,
    /// Bed width, studs.
    width: Option<f64>,
    /// Steepest grade along the path, degrees.
    max_grade_deg: Option<f64>,
    /// Bank slope, degrees.
    bank_slope_deg: Option<f64>,
    /// River water depth, studs.
    depth: Option<f64>,
    /// A solid: the road band, or a river's banks.
    material: Option<String>,
}

impl PathEntry {
    /// The [`EditCommand::Path`].
    ///
    /// # Errors
    /// An unknown mode, no points, a material that is not solid, or a value
    /// the path tool rejects (checked in that order).
    pub fn parse(self, library: &MaterialLibrary) -> Result<EditCommand, EntryError> {
        let mode = match &self.mode {
            None => PathMode::Road,
            Some(m) => PathMode::from_script_name(m)
                .ok_or_else(|| EntryError::UnknownPathMode(m.clone()))?,
        };
        let points: Vec<DVec2> = self
            .points
            .as_ref()
            .ok_or(EntryError::MissingPoints)?
            .iter()
            .map(|p| DVec2::from_array(*p))
            .collect();
        let defaults = match mode {
            PathMode::River => PathSpec::river(points),
            _ => PathSpec {
                mode,
                ..PathSpec::road(points)
            },
        };
        let material =
            solid_material(self.material.as_deref(), library)?.unwrap_or(defaults.material);
        let spec = PathSpec {
            width_studs: self.width.unwrap_or(defaults.width_studs),
            max_grade_deg: self.max_grade_deg.unwrap_or(defaults.max_grade_deg),
            bank_slope_deg: self.bank_slope_deg.unwrap_or(defaults.bank_slope_deg),
            depth_studs: self.depth.unwrap_or(defaults.depth_studs),
            material,
            ..defaults
        };
        spec.validate()?;
        Ok(EditCommand::Path(spec))
    }
}
