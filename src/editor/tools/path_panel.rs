//! The Path tool's section of the side panel and its settings: mode (road,
//! river, route), width, grade cap, bank slope, river depth, band material,
//! the control points being laid ([`PathDraft`]) and the Apply and Clear
//! buttons. The settings become a [`PathSpec`], the one the script `path`
//! entry builds too.

use glam::DVec2;

use crate::terrain::path::spec::{
    BANK_SLOPE_RANGE_DEG, DEPTH_RANGE_STUDS, MAX_GRADE_RANGE_DEG, PathMode, PathSpec,
    WIDTH_RANGE_STUDS,
};
use crate::terrain::storage::cell::Material;

use crate::editor::material_combo::material_combo;
use crate::editor::tools::path_draft::PathDraft;

/// What the path section asks the editor to do this frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathAction {
    /// Lay the path through the draft's points (Enter).
    Apply,
}

/// The Path tool's settings and the path being laid.
#[derive(Clone, Debug, PartialEq)]
pub struct PathToolSettings {
    /// Road, river or route.
    pub mode: PathMode,
    /// Bed width, studs.
    pub width_studs: f64,
    /// Steepest grade along the path, degrees.
    pub max_grade_deg: f64,
    /// Cut and fill bank slope, degrees.
    pub bank_slope_deg: f64,
    /// River water depth, studs.
    pub depth_studs: f64,
    /// Road band material, or the river's bank material.
    pub material: Material,
    /// The control points being laid.
    pub draft: PathDraft,
    /// Asked for by the panel or a key, consumed by the editor.
    pub action: Option<PathAction>,
    /// The path operation whose points the draft edits (picked in the
    /// Layers section): Apply replaces it in its layer, and everything
    /// above it re-derives. `None`: Apply lays a new path.
    pub editing: Option<u32>,
}

impl Default for PathToolSettings {
    fn default() -> Self {
        PathToolSettings::for_mode(PathMode::Road, PathDraft::default())
    }
}

impl PathToolSettings {
    /// The default settings of `mode` (from [`PathSpec`]'s defaults) with `draft`.
    pub fn for_mode(mode: PathMode, draft: PathDraft) -> PathToolSettings {
        let spec = default_spec(mode);
        PathToolSettings {
            mode,
            width_studs: spec.width_studs,
            max_grade_deg: spec.max_grade_deg,
            bank_slope_deg: spec.bank_slope_deg,
            depth_studs: spec.depth_studs,
            material: spec.material,
            draft,
            action: None,
            editing: None,
        }
    }

    /// Settings that reproduce `spec`, its points in the draft (a path
    /// reopened from the history).
    pub fn from_spec(spec: &PathSpec) -> PathToolSettings {
        PathToolSettings {
            mode: spec.mode,
            width_studs: spec.width_studs,
            max_grade_deg: spec.max_grade_deg,
            bank_slope_deg: spec.bank_slope_deg,
            depth_studs: spec.depth_studs,
            material: spec.material,
            draft: PathDraft::from_points(spec.points_xz_studs.clone()),
            action: None,
            editing: None,
        }
    }

    /// The path these settings and the draft's points describe. A route
    /// uses the first and last points as its endpoints.
    pub fn spec(&self) -> PathSpec {
        let points = self.draft.points_studs();
        let points_xz_studs: Vec<DVec2> = match (self.mode, points) {
            (PathMode::Route, [first, .., last]) => vec![*first, *last],
            _ => points.to_vec(),
        };
        PathSpec {
            mode: self.mode,
            points_xz_studs,
            width_studs: self.width_studs,
            max_grade_deg: self.max_grade_deg,
            bank_slope_deg: self.bank_slope_deg,
            depth_studs: self.depth_studs,
            material: self.material,
        }
    }

    /// The section's contents (the panel draws the header).
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            for mode in PathMode::ALL {
                if ui
                    .selectable_label(self.mode == mode, mode.name())
                    .on_hover_text(mode_tooltip(mode))
                    .clicked()
                    && self.mode != mode
                {
                    let draft = std::mem::take(&mut self.draft);
                    let editing = self.editing;
                    *self = PathToolSettings::for_mode(mode, draft);
                    self.editing = editing;
                }
            }
        });
        ui.add(
            egui::Slider::new(
                &mut self.width_studs,
                *WIDTH_RANGE_STUDS.start()..=*WIDTH_RANGE_STUDS.end(),
            )
            .text("width")
            .suffix(" studs")
            .logarithmic(true)
            .fixed_decimals(0),
        )
        .on_hover_text("Width of the flat bed (1 cell = 4 studs)");
        ui.add(
            egui::Slider::new(
                &mut self.max_grade_deg,
                *MAX_GRADE_RANGE_DEG.start()..=*MAX_GRADE_RANGE_DEG.end(),
            )
            .text("max grade")
            .suffix("°")
            .fixed_decimals(1),
        )
        .on_hover_text("Steepest the bed may climb or fall along the path");
        ui.add(
            egui::Slider::new(
                &mut self.bank_slope_deg,
                *BANK_SLOPE_RANGE_DEG.start()..=*BANK_SLOPE_RANGE_DEG.end(),
            )
            .text("banks")
            .suffix("°")
            .fixed_decimals(0),
        )
        .on_hover_text("Slope of the cut and fill banks beside the bed");
        if self.mode == PathMode::River {
            ui.add(
                egui::Slider::new(
                    &mut self.depth_studs,
                    *DEPTH_RANGE_STUDS.start()..=*DEPTH_RANGE_STUDS.end(),
                )
                .text("depth")
                .suffix(" studs")
                .fixed_decimals(0),
            )
            .on_hover_text("Water depth above the river bed");
        }
        ui.horizontal(|ui| {
            ui.label(if self.mode == PathMode::River {
                "banks"
            } else {
                "band"
            });
            material_combo(ui, "path_material", &mut self.material, false);
        });
        let n = self.draft.points_studs().len();
        let needed = 2;
        ui.label(match (self.mode, n) {
            (_, 0) => "click on the terrain to place points".to_string(),
            (PathMode::Route, 1) => "click the route's other end".to_string(),
            (PathMode::Route, _) => "route between the first and last point".to_string(),
            (_, n) => format!("{n} points: drag to move, click a segment to insert, Del removes"),
        });
        if let Some(id) = self.editing {
            ui.label(format!(
                "editing operation {id}: Apply replaces it in its layer"
            ));
        }
        ui.horizontal(|ui| {
            let (apply, tip) = match self.editing {
                Some(_) => (
                    "Apply to operation",
                    "Replace the path operation with these points and settings; \
                     everything above it follows (one undo step, Enter)",
                ),
                None => ("Apply", "Lay the path as one undo step (Enter)"),
            };
            if ui
                .add_enabled(n >= needed, egui::Button::new(apply))
                .on_hover_text(tip)
                .clicked()
            {
                self.action = Some(PathAction::Apply);
            }
            if ui
                .add_enabled(n > 0, egui::Button::new("Clear points"))
                .on_hover_text("Remove every point (Esc); stops editing an operation")
                .clicked()
            {
                self.draft.clear();
                self.editing = None;
            }
        });
    }
}

/// The default spec of `mode` (no points).
fn default_spec(mode: PathMode) -> PathSpec {
    match mode {
        PathMode::Road => PathSpec::road(Vec::new()),
        PathMode::River => PathSpec::river(Vec::new()),
        PathMode::Route => PathSpec::route(DVec2::ZERO, DVec2::ZERO),
    }
}

fn mode_tooltip(mode: PathMode) -> &'static str {
    match mode {
        PathMode::Road => "Road: a bed following the terrain under a grade cap, cut and filled",
        PathMode::River => {
            "River: a channel whose water never rises downstream (first point upstream)"
        }
        PathMode::Route => "Route: the road between two points is searched under the grade cap",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_and_spec_round_trip_and_a_route_keeps_its_ends() {
        let mut s = PathToolSettings::for_mode(PathMode::River, PathDraft::default());
        for p in [[0.0, 0.0], [40.0, 8.0], [80.0, 0.0]] {
            s.draft.press(DVec2::from_array(p), 1.0);
            s.draft.release();
        }
        s.width_studs = 20.0;
        let spec = s.spec();
        assert_eq!(spec.mode, PathMode::River);
        assert_eq!(spec.points_xz_studs.len(), 3);
        assert_eq!(spec.width_studs, 20.0);
        assert_eq!(PathToolSettings::from_spec(&spec).spec(), spec);
        s.mode = PathMode::Route;
        assert_eq!(
            s.spec().points_xz_studs,
            vec![DVec2::new(0.0, 0.0), DVec2::new(80.0, 0.0)]
        );
    }
}
