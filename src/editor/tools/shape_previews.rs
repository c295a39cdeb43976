//! The Stamp and Path tools' 3D previews, drawn as overlay lines before
//! anything is applied: the stamp's ghost surface (a grid of lines at the
//! heights the stamp would leave, from the same mode rule and falloff the
//! stamp applies), or a 3D stamp's turned box; and the path's centreline
//! spline with its bed edges and control point markers, laid on the
//! current surface.

use std::sync::Arc;

use glam::{DVec2, DVec3, Vec3};

use crate::render::lines::line_batch::PreviewLines;
use crate::terrain::path::spec::PathMode;
use crate::terrain::path::spline::sample_spline;
use crate::terrain::stamp::definition::{Stamp, StampBase, StampPlacement, StampShape};
use crate::terrain::stamp::press::surface_height_cells;
use crate::terrain::storage::coords::CELL_SIZE_STUDS;
use crate::terrain::storage::grid::Grid;

use crate::editor::tools::path_panel::PathToolSettings;

/// Colour of the stamp ghost in front of the terrain.
pub const STAMP_GHOST_COLOR: [u8; 4] = [250, 220, 90, 220];
/// Colour of the stamp ghost where the terrain hides it.
pub const STAMP_GHOST_HIDDEN_COLOR: [u8; 4] = [250, 220, 90, 70];
/// Colour of the path's centreline and edges.
pub const PATH_COLOR: [u8; 4] = [255, 90, 200, 235];
/// Colour of the path where the terrain hides it.
pub const PATH_HIDDEN_COLOR: [u8; 4] = [255, 90, 200, 80];

/// Lines of the ghost grid along each stamp axis (odd, so one runs through the centre).
const GHOST_LINES: usize = 25;
/// Points along each ghost line (odd, so one lies on the centre).
const GHOST_STEPS: usize = 49;
/// Lifts preview lines above the surface they lie on, studs.
const LIFT_STUDS: f64 = 0.6;
/// Spacing of the path preview's samples, studs.
const PATH_SAMPLE_STUDS: f64 = 4.0;
/// Half size of a control point marker, studs.
const MARKER_STUDS: f32 = 2.5;

/// Surface height at world `(x, z)` studs, studs (`None` over empty columns).
fn surface_studs(grid: &Grid, xz_studs: DVec2) -> Option<f64> {
    let cell = f64::from(CELL_SIZE_STUDS);
    let c = (xz_studs / cell).floor();
    surface_height_cells(grid, c.x as i32, c.y as i32).map(|h| h * cell)
}

/// The stamp's ghost for `placement` on `grid`: for a height stamp, a grid
/// of lines over the turned footprint at the surface the stamp would
/// leave; for a 3D stamp, its turned, scaled box on the base. `None` when
/// there is no surface under the centre.
pub fn stamp_ghost(grid: &Grid, stamp: &Stamp, placement: &StampPlacement) -> Option<PreviewLines> {
    let cell = f64::from(CELL_SIZE_STUDS);
    let centre = placement.centre_xz_cells;
    let base_cells = match placement.base {
        StampBase::Cells(y) => y,
        StampBase::SurfaceUnderCentre => surface_studs(grid, centre * cell)? / cell,
    };
    let half = placement.half_extents_cells(stamp);
    let (c, s) = placement.rotation_cos_sin();
    // Stamp (u, v) in −1..=1 to world xz cells: the inverse of `to_stamp_uv`.
    let to_world = |uv: DVec2| {
        let local = uv * half;
        centre + DVec2::new(local.x * c - local.y * s, local.x * s + local.y * c)
    };
    let origin = DVec3::new(centre.x * cell, base_cells * cell, centre.y * cell);
    let rel = |xz_cells: DVec2, y_cells: f64| {
        (DVec3::new(xz_cells.x * cell, y_cells * cell, xz_cells.y * cell) - origin).as_vec3()
    };
    let segments = match stamp.shape() {
        StampShape::Height(height) => {
            let size = stamp.footprint_size();
            let texels = size.x.max(size.y) / (2.0 * placement.radius_cells);
            let surface = |uv: DVec2| -> Option<Vec3> {
                let p = to_world(uv);
                let old = surface_studs(grid, p * cell)? / cell;
                let weight = placement.falloff_weight(uv);
                let h = height.sample(uv.x, uv.y, texels) * placement.height_scale_cells;
                let full = placement.mode.surface_cells(old, h, base_cells);
                let new = old + weight * (full - old);
                Some(rel(p, new + LIFT_STUDS / cell))
            };
            grid_lines(surface)
        }
        StampShape::Cells(_) => {
            let top = placement.height_scale_cells;
            let corners = [
                DVec2::new(-1.0, -1.0),
                DVec2::new(1.0, -1.0),
                DVec2::new(1.0, 1.0),
                DVec2::new(-1.0, 1.0),
            ]
            .map(to_world);
            let mut out = Vec::with_capacity(12);
            for i in 0..4 {
                let (a, b) = (corners[i], corners[(i + 1) % 4]);
                out.push([rel(a, base_cells), rel(b, base_cells)]);
                out.push([rel(a, base_cells + top), rel(b, base_cells + top)]);
                out.push([rel(a, base_cells), rel(a, base_cells + top)]);
            }
            out
        }
    };
    Some(PreviewLines {
        origin_world: origin,
        segments_studs: segments.into(),
        color: STAMP_GHOST_COLOR,
        hidden_color: Some(STAMP_GHOST_HIDDEN_COLOR),
    })
}

/// [`GHOST_LINES`] lines along each stamp axis through `surface` (stamp
/// `(u, v)` to a point), broken where it has no surface.
fn grid_lines(surface: impl Fn(DVec2) -> Option<Vec3>) -> Vec<[Vec3; 2]> {
    let mut out = Vec::with_capacity(2 * GHOST_LINES * GHOST_STEPS);
    let t = |i: usize, n: usize| i as f64 / (n - 1) as f64 * 2.0 - 1.0;
    for line in 0..GHOST_LINES {
        let a = t(line, GHOST_LINES);
        for along_u in [true, false] {
            let at = |k: usize| {
                let b = t(k, GHOST_STEPS);
                if along_u {
                    DVec2::new(b, a)
                } else {
                    DVec2::new(a, b)
                }
            };
            let mut prev = surface(at(0));
            for k in 1..GHOST_STEPS {
                let next = surface(at(k));
                if let (Some(p), Some(q)) = (prev, next) {
                    out.push([p, q]);
                }
                prev = next;
            }
        }
    }
    out
}

/// The path preview: the spline through the draft's points (a route: the
/// straight line between its ends, the searched path is only known when
/// applied) with both bed edges, on the current surface, and a cross at
/// every control point (the dragged one larger). `None` without points.
pub fn path_preview(grid: &Grid, settings: &PathToolSettings) -> Option<PreviewLines> {
    let points = settings.draft.points_studs();
    let first = *points.first()?;
    let origin = DVec3::new(first.x, surface_studs(grid, first).unwrap_or(0.0), first.y);
    let on_surface = |p: DVec2| -> Option<Vec3> {
        let y = surface_studs(grid, p)? + LIFT_STUDS;
        Some((DVec3::new(p.x, y, p.y) - origin).as_vec3())
    };
    let mut out = Vec::new();
    let centre_points: Vec<DVec2> = match (settings.mode, points) {
        (PathMode::Route, [a, .., b]) => vec![*a, *b],
        _ => points.to_vec(),
    };
    if centre_points.len() >= 2 {
        let curve = sample_spline(&centre_points, PATH_SAMPLE_STUDS);
        let half_width = settings.width_studs * 0.5;
        for offset in [0.0, -half_width, half_width] {
            let line: Vec<Option<Vec3>> = curve
                .points
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let prev = curve.points[i.saturating_sub(1)];
                    let next = curve.points[(i + 1).min(curve.points.len() - 1)];
                    let dir = (next - prev).normalize_or_zero();
                    on_surface(*p + dir.perp() * offset)
                })
                .collect();
            out.extend(
                line.windows(2)
                    .filter_map(|w| w[0].zip(w[1]).map(|(a, b)| [a, b])),
            );
        }
    }
    for (i, p) in points.iter().enumerate() {
        let Some(c) = on_surface(*p) else { continue };
        let r = if settings.draft.dragging() == Some(i) {
            MARKER_STUDS * 2.0
        } else {
            MARKER_STUDS
        };
        out.push([c - Vec3::X * r, c + Vec3::X * r]);
        out.push([c - Vec3::Z * r, c + Vec3::Z * r]);
        out.push([c, c + Vec3::Y * r * 2.0]);
    }
    Some(PreviewLines {
        origin_world: origin,
        segments_studs: Arc::from(out),
        color: PATH_COLOR,
        hidden_color: Some(PATH_HIDDEN_COLOR),
    })
}

/// Colour of a selected stamp's turn-and-scale handle.
pub const STAMP_HANDLE_COLOR: [u8; 4] = [120, 230, 255, 240];

/// The handle where terrain hides it: fainter, but still seen.
const STAMP_HANDLE_HIDDEN_COLOR: [u8; 4] = [120, 230, 255, 110];

/// Half size of the handle's marker, studs.
const HANDLE_MARKER_STUDS: f32 = 8.0;

/// How far the handle's post rises above the higher of the stamp's
/// centre and the handle's ground, studs.
const HANDLE_POST_STUDS: f64 = 24.0;

/// Where a stamp's turn-and-scale handle lies, cells `(x, z)`: one radius
/// from its centre along its rotation (the stamp's +u axis).
pub fn stamp_handle_xz_cells(placement: &StampPlacement) -> DVec2 {
    let (c, s) = placement.rotation_cos_sin();
    placement.centre_xz_cells + DVec2::new(c, s) * placement.radius_cells
}

/// The selected stamp's handle: a post standing on the ground at the
/// handle (press at its foot and drag to turn and scale the stamp), a
/// diamond on top, and a bar from there back over the stamp's centre so
/// the handle reads as the stamp's radius and rotation. `None` when the
/// ground under the centre or the handle is not loaded.
pub fn stamp_handle(grid: &Grid, placement: &StampPlacement) -> Option<PreviewLines> {
    let cell = f64::from(CELL_SIZE_STUDS);
    let centre = placement.centre_xz_cells * cell;
    let handle = stamp_handle_xz_cells(placement) * cell;
    let centre_y = surface_studs(grid, centre)?;
    let foot_y = surface_studs(grid, handle)?;
    let top_y = centre_y.max(foot_y) + HANDLE_POST_STUDS;
    let origin = DVec3::new(handle.x, foot_y + LIFT_STUDS, handle.y);
    let top = Vec3::new(0.0, (top_y - origin.y) as f32, 0.0);
    let over_centre = (DVec3::new(centre.x, top_y, centre.y) - origin).as_vec3();
    let r = HANDLE_MARKER_STUDS;
    let segments = vec![
        [Vec3::ZERO, top],
        [top - Vec3::X * r, top + Vec3::Y * r],
        [top + Vec3::Y * r, top + Vec3::X * r],
        [top + Vec3::X * r, top - Vec3::Y * r],
        [top - Vec3::Y * r, top - Vec3::X * r],
        [top - Vec3::Z * r, top + Vec3::Y * r],
        [top + Vec3::Y * r, top + Vec3::Z * r],
        [top + Vec3::Z * r, top - Vec3::Y * r],
        [top - Vec3::Y * r, top - Vec3::Z * r],
        [top, over_centre],
        [Vec3::ZERO - Vec3::X * r, Vec3::X * r],
        [Vec3::ZERO - Vec3::Z * r, Vec3::Z * r],
    ];
    Some(PreviewLines {
        origin_world: origin,
        segments_studs: Arc::from(segments),
        color: STAMP_HANDLE_COLOR,
        hidden_color: Some(STAMP_HANDLE_HIDDEN_COLOR),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::stamp::definition::StampMode;
    use crate::terrain::storage::cell::{Cell, Material};
    use crate::terrain::storage::coords::CellBox;
    use glam::IVec3;

    /// A flat floor whose surface is 8 cells (32 studs) high.
    fn floor() -> Grid {
        let mut g = Grid::new();
        g.edit_region(
            CellBox::new(IVec3::ZERO, IVec3::new(128, 8, 128)),
            |_, _| Cell::full(Material::GRASS),
        )
        .expect("floor");
        g
    }

    #[test]
    fn the_stamp_ghost_lies_where_the_stamp_leaves_the_surface() {
        let g = floor();
        // A 3×3 stamp, white in the middle: Add raises the centre by the height scale.
        let mut samples = vec![0.0f32; 9];
        samples[4] = 1.0;
        let stamp = Stamp::height("bump", 3, 3, samples).expect("stamp");
        let placement = StampPlacement {
            centre_xz_cells: DVec2::new(64.0, 64.0),
            base: StampBase::SurfaceUnderCentre,
            rotation_deg: 30.0,
            radius_cells: 12.0,
            height_scale_cells: 10.0,
            falloff_fraction: 0.0,
            mode: StampMode::Add,
            material: None,
        };
        let ghost = stamp_ghost(&g, &stamp, &placement).expect("ghost");
        let ys: Vec<f64> = ghost
            .segments_studs
            .iter()
            .flatten()
            .map(|p| ghost.origin_world.y + f64::from(p.y))
            .collect();
        let top = ys.iter().copied().fold(f64::MIN, f64::max);
        let low = ys.iter().copied().fold(f64::MAX, f64::min);
        // The base is the floor (32 studs); the peak is 10 cells (40 studs) above.
        assert!((top - (32.0 + 40.0 + LIFT_STUDS)).abs() < 0.5, "top {top}");
        assert!((low - (32.0 + LIFT_STUDS)).abs() < 0.5, "low {low}");
        // Subtract mirrors it below the floor.
        let sub = StampPlacement {
            mode: StampMode::Subtract,
            ..placement
        };
        let ghost = stamp_ghost(&g, &stamp, &sub).expect("ghost");
        let low = ghost
            .segments_studs
            .iter()
            .flatten()
            .map(|p| ghost.origin_world.y + f64::from(p.y))
            .fold(f64::MAX, f64::min);
        assert!((low - (32.0 - 40.0 + LIFT_STUDS)).abs() < 0.5, "low {low}");
    }

    #[test]
    fn the_path_preview_follows_the_points_on_the_surface() {
        let g = floor();
        let mut s = PathToolSettings::default();
        assert!(path_preview(&g, &s).is_none());
        for p in [[40.0, 40.0], [200.0, 80.0], [400.0, 300.0]] {
            s.draft.press(DVec2::from_array(p), 1.0);
            s.draft.release();
        }
        let lines = path_preview(&g, &s).expect("preview");
        let world = |p: &Vec3| lines.origin_world + p.as_dvec3();
        for p in lines.segments_studs.iter().flatten().map(world) {
            // On the floor (the markers rise a few studs).
            assert!(p.y >= 32.0 && p.y <= 32.0 + 12.0, "{p}");
        }
        // The centreline passes through every control point.
        for c in [[40.0, 40.0], [200.0, 80.0], [400.0, 300.0]] {
            let c = DVec2::from_array(c);
            let nearest = lines
                .segments_studs
                .iter()
                .flatten()
                .map(|p| DVec2::new(world(p).x, world(p).z).distance(c))
                .fold(f64::MAX, f64::min);
            assert!(nearest < 0.01, "{c}: {nearest}");
        }
    }
}
