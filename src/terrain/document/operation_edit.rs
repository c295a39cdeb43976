//! Editing an operation in place: moving it, or changing the settings an
//! artist tunes after the fact (a stamp's radius, a road's width, a
//! stroke's strength). The result is checked as the tool checks its input,
//! so a bad edit is refused before it reaches the document.

use glam::{DVec2, DVec3, IVec3};

use crate::terrain::document::operation::{OperationKind, RecordedStroke};
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::{CELL_SIZE_STUDS, CellBox};

/// Settings to change on an operation; `None` keeps a setting. Each
/// applies to the kinds that have it (a stamp has no width).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OperationEdit {
    /// Stamp radius, or brush radius, cells.
    pub radius_cells: Option<f64>,
    /// Stamp turn about +Y, degrees.
    pub rotation_deg: Option<f64>,
    /// Stamp height scale, cells.
    pub height_scale_cells: Option<f64>,
    /// Brush strength, `(0, 1]`.
    pub strength: Option<f64>,
    /// Stamp, path, brush or fill material.
    pub material: Option<Material>,
    /// Path width, studs.
    pub width_studs: Option<f64>,
    /// Path grade cap, degrees.
    pub max_grade_deg: Option<f64>,
    /// River depth, studs.
    pub depth_studs: Option<f64>,
}

/// Why an edit was refused.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum EditRefused {
    /// The setting does not exist on this kind of operation.
    #[error("a {kind} has no {setting}")]
    NoSuchSetting {
        /// The operation's kind.
        kind: &'static str,
        /// The setting asked for.
        setting: &'static str,
    },
    /// The edited operation is not valid input for its tool.
    #[error("{0}")]
    Invalid(String),
}

/// Shifts a box by `by` cells on x and z (saturating: a box pushed off
/// the lattice is refused when the moved operation is validated).
fn shifted(b: &CellBox, by: IVec3) -> CellBox {
    CellBox::new(b.min.saturating_add(by), b.max.saturating_add(by))
}

impl OperationKind {
    /// The operation moved by `by_xz_studs` on the ground plane (boxes move
    /// by whole cells, rounded).
    pub fn translated(&self, by_xz_studs: DVec2) -> OperationKind {
        let by_cells = by_xz_studs / f64::from(CELL_SIZE_STUDS);
        let by_box = IVec3::new(by_cells.x.round() as i32, 0, by_cells.y.round() as i32);
        let mut out = self.clone();
        match &mut out {
            OperationKind::Fill { region, .. }
            | OperationKind::Clear { region, .. }
            | OperationKind::Generate { region, .. }
            | OperationKind::SeaLevel { region, .. }
            | OperationKind::Evaporate { region, .. } => *region = shifted(region, by_box),
            OperationKind::Paste { at, .. } => *at = at.saturating_add(by_box),
            OperationKind::Path(spec) => {
                for p in &mut spec.points_xz_studs {
                    *p += by_xz_studs;
                }
            }
            OperationKind::Stamp { placement, .. } => placement.centre_xz_cells += by_cells,
            OperationKind::Stroke(stroke) => {
                let by = DVec3::new(by_xz_studs.x, 0.0, by_xz_studs.y);
                stroke.centres_world = stroke.centres_world.iter().map(|c| *c + by).collect();
            }
        }
        out
    }

    /// The kind's name for messages, e.g. `"stamp"`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            OperationKind::Fill { .. } => "fill",
            OperationKind::Clear { .. } => "clear",
            OperationKind::Paste { .. } => "paste",
            OperationKind::Generate { .. } => "generate",
            OperationKind::SeaLevel { .. } => "sea level",
            OperationKind::Evaporate { .. } => "evaporate",
            OperationKind::Path(_) => "path",
            OperationKind::Stamp { .. } => "stamp",
            OperationKind::Stroke(_) => "stroke",
        }
    }

    /// The operation with `edit`'s settings.
    ///
    /// # Errors
    /// [`EditRefused`] for a setting the kind lacks or a value its tool
    /// refuses.
    pub fn edited(&self, edit: &OperationEdit) -> Result<OperationKind, EditRefused> {
        let kind = self.kind_name();
        let lacks = |setting| EditRefused::NoSuchSetting { kind, setting };
        if *edit == OperationEdit::default() {
            // Would be an undo step that changes nothing.
            return Err(EditRefused::Invalid(
                "the edit names no setting to change".to_string(),
            ));
        }
        let mut out = self.clone();
        match &mut out {
            OperationKind::Stamp { placement, .. } => {
                if edit.strength.is_some() {
                    return Err(lacks("strength"));
                }
                if edit.width_studs.is_some() || edit.max_grade_deg.is_some() {
                    return Err(lacks("width or grade"));
                }
                if edit.depth_studs.is_some() {
                    return Err(lacks("depth"));
                }
                placement.radius_cells = edit.radius_cells.unwrap_or(placement.radius_cells);
                placement.rotation_deg = edit.rotation_deg.unwrap_or(placement.rotation_deg);
                placement.height_scale_cells = edit
                    .height_scale_cells
                    .unwrap_or(placement.height_scale_cells);
                if let Some(m) = edit.material {
                    placement.material = Some(m);
                }
                placement
                    .validate()
                    .map_err(|e| EditRefused::Invalid(e.to_string()))?;
            }
            OperationKind::Path(spec) => {
                if edit.radius_cells.is_some()
                    || edit.rotation_deg.is_some()
                    || edit.height_scale_cells.is_some()
                    || edit.strength.is_some()
                {
                    return Err(lacks("radius, rotation, height scale or strength"));
                }
                spec.width_studs = edit.width_studs.unwrap_or(spec.width_studs);
                spec.max_grade_deg = edit.max_grade_deg.unwrap_or(spec.max_grade_deg);
                spec.depth_studs = edit.depth_studs.unwrap_or(spec.depth_studs);
                spec.material = edit.material.unwrap_or(spec.material);
                spec.validate()
                    .map_err(|e| EditRefused::Invalid(e.to_string()))?;
            }
            OperationKind::Stroke(stroke) => edit_stroke(stroke, edit, kind)?,
            OperationKind::Fill { material, .. } => {
                if *edit
                    != (OperationEdit {
                        material: edit.material,
                        ..OperationEdit::default()
                    })
                {
                    return Err(lacks("setting other than its material"));
                }
                *material = edit.material.unwrap_or(*material);
            }
            _ => return Err(lacks("settings to edit (move or delete it)")),
        }
        Ok(out)
    }
}

fn edit_stroke(
    stroke: &mut RecordedStroke,
    edit: &OperationEdit,
    kind: &'static str,
) -> Result<(), EditRefused> {
    if edit.rotation_deg.is_some()
        || edit.height_scale_cells.is_some()
        || edit.width_studs.is_some()
        || edit.max_grade_deg.is_some()
        || edit.depth_studs.is_some()
    {
        return Err(EditRefused::NoSuchSetting {
            kind,
            setting: "rotation, height scale, width, grade or depth",
        });
    }
    let b = &mut stroke.brush;
    if let Some(r) = edit.radius_cells {
        b.radius_cells = r as f32;
    }
    if let Some(s) = edit.strength {
        b.strength = s as f32;
    }
    b.material = edit.material.unwrap_or(b.material);
    b.validate()
        .map_err(|e| EditRefused::Invalid(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::path::spec::PathSpec;

    #[test]
    fn a_road_moves_and_takes_a_new_width_but_refuses_a_radius() {
        let road = OperationKind::Path(PathSpec::road(vec![
            DVec2::new(0.0, 0.0),
            DVec2::new(100.0, 0.0),
        ]));
        let OperationKind::Path(moved) = road.translated(DVec2::new(200.0, 8.0)) else {
            unreachable!()
        };
        assert_eq!(moved.points_xz_studs[1], DVec2::new(300.0, 8.0));
        let wide = road
            .edited(&OperationEdit {
                width_studs: Some(16.0),
                ..Default::default()
            })
            .unwrap();
        let OperationKind::Path(wide) = wide else {
            unreachable!()
        };
        assert_eq!(wide.width_studs, 16.0);
        assert!(matches!(
            road.edited(&OperationEdit {
                radius_cells: Some(3.0),
                ..Default::default()
            }),
            Err(EditRefused::NoSuchSetting { kind: "path", .. })
        ));
        assert!(matches!(
            road.edited(&OperationEdit {
                width_studs: Some(f64::NAN),
                ..Default::default()
            }),
            Err(EditRefused::Invalid(_))
        ));
        // An edit that names nothing would be an empty undo step.
        assert_eq!(
            road.edited(&OperationEdit::default()),
            Err(EditRefused::Invalid(
                "the edit names no setting to change".into()
            ))
        );
    }
}
