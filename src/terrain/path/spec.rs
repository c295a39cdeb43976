//! What a path is: the artist's control points and the road or
//! river parameters, shared by the window's path tool and script `path`
//! entries, checked before anything is read or changed; and what applying
//! one reports.
//!
//! Points are world `(x, z)` in studs (what a click on the surface gives);
//! widths and depths are studs too. The tool converts to cells (1 cell =
//! 4 studs) itself.

use glam::DVec2;

use crate::terrain::path::spline::{chord_length, dedup_points};
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::CELL_SIZE_STUDS;
use crate::terrain::storage::grid::GridError;

/// Most control points a path may have.
pub const MAX_PATH_POINTS: usize = 1000;

/// Longest path, studs (measured along its control points): 8192 studs,
/// 2048 cells, half the largest world built whole.
pub const MAX_PATH_LENGTH_STUDS: f64 = 8192.0;

/// Farthest apart a route's two endpoints may be, studs (the search grid
/// around them then stays bounded, see [`crate::terrain::path::route`]).
pub const MAX_ROUTE_SPAN_STUDS: f64 = 2048.0;

/// Bed width range, studs (1 to 32 cells).
pub const WIDTH_RANGE_STUDS: std::ops::RangeInclusive<f64> = 4.0..=128.0;

/// Grade cap range, degrees.
pub const MAX_GRADE_RANGE_DEG: std::ops::RangeInclusive<f64> = 0.5..=45.0;

/// Bank slope range, degrees from horizontal.
pub const BANK_SLOPE_RANGE_DEG: std::ops::RangeInclusive<f64> = 10.0..=80.0;

/// River water depth range, studs.
pub const DEPTH_RANGE_STUDS: std::ops::RangeInclusive<f64> = 1.0..=64.0;

/// What a path lays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PathMode {
    /// A bed of constant width following the terrain under a grade cap,
    /// cut and filled with bank slopes, topped with a material band.
    Road,
    /// A channel carved below a water surface that never rises
    /// downstream (from the first point to the last), filled with water,
    /// with a mud bed and sand banks.
    River,
    /// Two endpoints; the path between them is searched (A* under the
    /// grade cap, see [`crate::terrain::path::route`]) and laid as a road.
    Route,
}

impl PathMode {
    /// Every mode, in panel order.
    pub const ALL: [PathMode; 3] = [PathMode::Road, PathMode::River, PathMode::Route];

    /// Display name, e.g. `"Road"`.
    pub fn name(self) -> &'static str {
        match self {
            PathMode::Road => "Road",
            PathMode::River => "River",
            PathMode::Route => "Route",
        }
    }

    /// Name in scripts and `--stats-json`, e.g. `"road"`.
    pub fn script_name(self) -> &'static str {
        match self {
            PathMode::Road => "road",
            PathMode::River => "river",
            PathMode::Route => "route",
        }
    }

    /// The mode named `name` (case-insensitive) in a script.
    pub fn from_script_name(name: &str) -> Option<PathMode> {
        PathMode::ALL
            .into_iter()
            .find(|m| m.script_name().eq_ignore_ascii_case(name))
    }
}

/// A path to apply: mode, control points and shape parameters.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathSpec {
    /// What is laid.
    pub mode: PathMode,
    /// Control points, world `(x, z)` studs, in order (for a river, from
    /// upstream to downstream); a route takes exactly two (its endpoints).
    pub points_xz_studs: Vec<DVec2>,
    /// Width of the flat bed (road surface, river bed), studs.
    pub width_studs: f64,
    /// Steepest the bed may climb or fall along the path, degrees. Rivers
    /// use it to bound waterfalls.
    pub max_grade_deg: f64,
    /// Slope of the cut and fill banks beside the bed, degrees.
    pub bank_slope_deg: f64,
    /// River: water depth above the bed, studs (unused by roads).
    pub depth_studs: f64,
    /// Road: the band's material (gravel by default). River: the banks'
    /// material (sand by default; the bed is mud).
    pub material: Material,
}

impl PathSpec {
    /// A road through `points_xz_studs` with the default shape: 8 studs
    /// wide, 8° grade cap, 35° banks, gravel.
    pub fn road(points_xz_studs: Vec<DVec2>) -> PathSpec {
        PathSpec {
            mode: PathMode::Road,
            points_xz_studs,
            width_studs: 8.0,
            max_grade_deg: 8.0,
            bank_slope_deg: 35.0,
            depth_studs: 4.0,
            material: Material::GRAVEL,
        }
    }

    /// A river through `points_xz_studs` (upstream first) with the default
    /// shape: 12 studs wide, 4 studs deep, 30° banks and falls, sand banks.
    pub fn river(points_xz_studs: Vec<DVec2>) -> PathSpec {
        PathSpec {
            mode: PathMode::River,
            width_studs: 12.0,
            max_grade_deg: 30.0,
            bank_slope_deg: 30.0,
            material: Material::SAND,
            ..PathSpec::road(points_xz_studs)
        }
    }

    /// A route between two endpoints (studs), laid as a default road.
    pub fn route(from_xz_studs: DVec2, to_xz_studs: DVec2) -> PathSpec {
        PathSpec {
            mode: PathMode::Route,
            ..PathSpec::road(vec![from_xz_studs, to_xz_studs])
        }
    }

    /// The history label, e.g. `"Road (4 points)"` or `"Route"`.
    pub fn label(&self) -> String {
        match self.mode {
            PathMode::Route => "Route".into(),
            mode => format!("{} ({} points)", mode.name(), self.points_xz_studs.len()),
        }
    }

    /// Bed width, cells.
    pub fn width_cells(&self) -> f64 {
        self.width_studs / f64::from(CELL_SIZE_STUDS)
    }

    /// Control points in cells (world `(x, z)` / 4).
    pub fn points_xz_cells(&self) -> Vec<DVec2> {
        self.points_xz_studs
            .iter()
            .map(|p| *p / f64::from(CELL_SIZE_STUDS))
            .collect()
    }

    /// Checks every field before anything is read or changed.
    ///
    /// # Errors
    /// [`PathError`]: fewer than 2 or more than [`MAX_PATH_POINTS`] points
    /// (a route exactly 2), a non-finite number, a path longer than
    /// [`MAX_PATH_LENGTH_STUDS`] or with no length, a route whose ends are
    /// over [`MAX_ROUTE_SPAN_STUDS`] apart, a width, grade, bank slope or
    /// depth out of range, or a material that is not a known solid.
    pub fn validate(&self) -> Result<(), PathError> {
        let n = self.points_xz_studs.len();
        if self.mode == PathMode::Route && n != 2 {
            return Err(PathError::RouteEndpoints(n));
        }
        if !(2..=MAX_PATH_POINTS).contains(&n) {
            return Err(PathError::PointCount(n));
        }
        if !self.points_xz_studs.iter().all(|p| p.is_finite()) {
            return Err(PathError::NonFinitePoint);
        }
        let in_range = |v: f64, r: &std::ops::RangeInclusive<f64>| v.is_finite() && r.contains(&v);
        if !in_range(self.width_studs, &WIDTH_RANGE_STUDS) {
            return Err(PathError::Width(self.width_studs));
        }
        if !in_range(self.max_grade_deg, &MAX_GRADE_RANGE_DEG) {
            return Err(PathError::MaxGrade(self.max_grade_deg));
        }
        if !in_range(self.bank_slope_deg, &BANK_SLOPE_RANGE_DEG) {
            return Err(PathError::BankSlope(self.bank_slope_deg));
        }
        if !in_range(self.depth_studs, &DEPTH_RANGE_STUDS) {
            return Err(PathError::Depth(self.depth_studs));
        }
        if !self.material.is_solid() {
            return Err(PathError::Material(self.material.0));
        }
        let length_studs = chord_length(&self.points_xz_studs);
        if !length_studs.is_finite() || length_studs > MAX_PATH_LENGTH_STUDS {
            return Err(PathError::TooLong { length_studs });
        }
        if dedup_points(&self.points_xz_studs).len() < 2 {
            return Err(PathError::NoLength);
        }
        if self.mode == PathMode::Route {
            let span_studs = self.points_xz_studs[0].distance(self.points_xz_studs[1]);
            if span_studs > MAX_ROUTE_SPAN_STUDS {
                return Err(PathError::RouteTooFar { span_studs });
            }
        }
        Ok(())
    }
}

/// What applying a path did (one entry of `"paths"` in `--stats-json`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct PathReport {
    /// The mode of the path.
    pub mode: PathMode,
    /// Length of the laid centreline, studs (for a route, the found path).
    pub length_studs: f64,
    /// Steepest grade of the carved bed along the centreline, degrees,
    /// measured on the cells after the carve (between consecutive cell
    /// columns the centreline crosses).
    pub max_grade_deg: f64,
    /// The grade cap the profile was built under, degrees.
    pub grade_cap_deg: f64,
    /// Cells whose solid occupancy went down (cut).
    pub cut_cells: u64,
    /// Cells whose solid occupancy went up (fill).
    pub fill_cells: u64,
    /// Rivers: the largest rise of the water surface going downstream
    /// between consecutive centreline columns, studs, measured on the
    /// cells (0 for a correct river); `None` for roads and routes, which
    /// carry no water (absent from `--stats-json`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_upstream_rise_studs: Option<f64>,
}

/// Why a path was refused. Nothing changed.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PathError {
    /// Fewer than 2 or more than [`MAX_PATH_POINTS`] control points.
    #[error("a path needs 2 to {MAX_PATH_POINTS} points, not {0}")]
    PointCount(usize),
    /// A route with other than two points.
    #[error("a route takes exactly 2 points (its endpoints), not {0}")]
    RouteEndpoints(usize),
    /// A point with a NaN or infinite coordinate.
    #[error("path points must be finite numbers")]
    NonFinitePoint,
    /// All points coincide.
    #[error("the path's points all coincide: it has no length")]
    NoLength,
    /// The control points span more than [`MAX_PATH_LENGTH_STUDS`].
    #[error("the path is {length_studs:.0} studs long; at most {MAX_PATH_LENGTH_STUDS} studs")]
    TooLong {
        /// Length along the control points, studs.
        length_studs: f64,
    },
    /// A route's endpoints are more than [`MAX_ROUTE_SPAN_STUDS`] apart.
    #[error(
        "the route's endpoints are {span_studs:.0} studs apart; at most {MAX_ROUTE_SPAN_STUDS}"
    )]
    RouteTooFar {
        /// Straight distance between them, studs.
        span_studs: f64,
    },
    /// Width not finite or outside [`WIDTH_RANGE_STUDS`].
    #[error("path width {0} studs is outside 4..=128")]
    Width(f64),
    /// Grade cap not finite or outside [`MAX_GRADE_RANGE_DEG`].
    #[error("max grade {0}° is outside 0.5..=45")]
    MaxGrade(f64),
    /// Bank slope not finite or outside [`BANK_SLOPE_RANGE_DEG`].
    #[error("bank slope {0}° is outside 10..=80")]
    BankSlope(f64),
    /// Depth not finite or outside [`DEPTH_RANGE_STUDS`].
    #[error("river depth {0} studs is outside 1..=64")]
    Depth(f64),
    /// The material is Air, Water or unknown.
    #[error("path material {0} is not a solid material")]
    Material(u8),
    /// A point of the centreline has no terrain below it.
    #[error("no terrain below x={x_studs:.1}, z={z_studs:.1} (studs) on the path")]
    NoSurface {
        /// World x, studs.
        x_studs: f64,
        /// World z, studs.
        z_studs: f64,
    },
    /// No route within the grade cap joins the endpoints inside the
    /// search area.
    #[error(
        "no route within {grade_cap_deg}° joins the endpoints (the terrain between them is too \
         steep within the search area)"
    )]
    NoRoute {
        /// The grade cap searched under, degrees.
        grade_cap_deg: f64,
    },
    /// The route search visited its node limit without reaching the end.
    #[error("the route search gave up after {nodes} nodes")]
    RouteSearchLimit {
        /// Nodes expanded.
        nodes: usize,
    },
    /// The grid refused the edit (columns of a streaming world not
    /// resident, or off the lattice).
    #[error(transparent)]
    Grid(#[from] GridError),
}

impl PathError {
    /// The chunk columns the path needs but a streaming grid does not hold.
    pub fn missing_columns(&self) -> Option<&[crate::terrain::storage::coords::ColumnCoord]> {
        match self {
            PathError::Grid(e) => e.missing_columns(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(v: &[[f64; 2]]) -> Vec<DVec2> {
        v.iter().map(|p| DVec2::from_array(*p)).collect()
    }

    #[test]
    fn validation_names_each_bad_field() {
        let ok = PathSpec::road(pts(&[[0.0, 0.0], [100.0, 0.0]]));
        assert_eq!(ok.validate(), Ok(()));
        assert_eq!(ok.label(), "Road (2 points)");
        let cases: Vec<(PathSpec, PathError)> = vec![
            (PathSpec::road(pts(&[[0.0, 0.0]])), PathError::PointCount(1)),
            (
                PathSpec::road(vec![DVec2::ZERO; MAX_PATH_POINTS + 1]),
                PathError::PointCount(MAX_PATH_POINTS + 1),
            ),
            (
                PathSpec::road(pts(&[[0.0, f64::NAN], [1.0, 0.0]])),
                PathError::NonFinitePoint,
            ),
            (
                PathSpec::road(pts(&[[5.0, 5.0], [5.0, 5.0]])),
                PathError::NoLength,
            ),
            (
                PathSpec::road(pts(&[[0.0, 0.0], [9000.0, 0.0]])),
                PathError::TooLong {
                    length_studs: 9000.0,
                },
            ),
            (
                PathSpec {
                    width_studs: 2.0,
                    ..ok.clone()
                },
                PathError::Width(2.0),
            ),
            (
                PathSpec {
                    max_grade_deg: f64::NAN,
                    ..ok.clone()
                },
                PathError::MaxGrade(f64::NAN),
            ),
            (
                PathSpec {
                    bank_slope_deg: 90.0,
                    ..ok.clone()
                },
                PathError::BankSlope(90.0),
            ),
            (
                PathSpec {
                    material: Material::WATER,
                    ..ok.clone()
                },
                PathError::Material(1),
            ),
            (
                PathSpec {
                    mode: PathMode::Route,
                    ..PathSpec::road(pts(&[[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]]))
                },
                PathError::RouteEndpoints(3),
            ),
            (
                PathSpec::route(DVec2::ZERO, DVec2::new(3000.0, 0.0)),
                PathError::RouteTooFar { span_studs: 3000.0 },
            ),
        ];
        for (spec, want) in cases {
            let got = spec.validate().unwrap_err();
            // NaN never equals itself: compare the messages.
            assert_eq!(got.to_string(), want.to_string());
        }
    }

    #[test]
    fn modes_round_trip_through_their_script_names() {
        for m in PathMode::ALL {
            assert_eq!(PathMode::from_script_name(m.script_name()), Some(m));
        }
        assert_eq!(PathMode::from_script_name("RIVER"), Some(PathMode::River));
        assert_eq!(PathMode::from_script_name("canal"), None);
        assert_eq!(
            serde_json::to_string(&PathMode::Route).unwrap(),
            "\"route\""
        );
    }
}
