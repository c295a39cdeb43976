//! Route mode: given only two endpoints, find where a road between them
//! should run. A* (Hart, Nilsson and Raphael 1968) over a coarse lattice
//! of column centres every [`ROUTE_STEP_CELLS`] cells on the grid's top
//! surface, 16-connected (the 8 neighbours and the 8 knight moves, so a
//! route can wind at 26.6° steps as well as 45°).
//!
//! An edge steeper than the grade cap (the profile's limit, see
//! [`profile_slope_limit`]) does not exist, so a route around a hill winds
//! or switchbacks instead of climbing it. An edge costs its length, more
//! the nearer it is to the cap, plus the earthwork it implies: how far the
//! terrain at three points along it strays from the straight line between
//! its ends (a cut or fill estimate). The heuristic is the straight
//! distance, a lower bound of every cost, so the route found is the
//! cheapest on the lattice.
//!
//! The search is bounded: it covers the endpoints' box grown by
//! [`ROUTE_MARGIN_CELLS`] (or half the span, if more), at most
//! `(2048 + 2·1024) / 2` nodes a side for the farthest endpoints
//! ([`crate::terrain::path::spec::MAX_ROUTE_SPAN_STUDS`]), and gives up after
//! [`MAX_ROUTE_NODES`] expansions with a typed error instead of running
//! on. The node path is thinned (Douglas–Peucker, [`SIMPLIFY_CELLS`]) into
//! control points for the road pipeline.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use glam::{DVec2, IVec2, IVec3};

use crate::terrain::path::profile::profile_slope_limit;
use crate::terrain::path::spec::PathError;
use crate::terrain::path::surface::SurfacePatch;
use crate::terrain::storage::coords::{CellBox, check_on_lattice};
use crate::terrain::storage::grid::{Grid, GridError};

/// Spacing of the search lattice, cells.
pub const ROUTE_STEP_CELLS: i32 = 2;

/// Least margin of the search area around the endpoints' box, cells.
pub const ROUTE_MARGIN_CELLS: f64 = 32.0;

/// Most nodes the search expands before it gives up.
pub const MAX_ROUTE_NODES: usize = 1 << 19;

/// Tolerance of the thinning of the node path into control points, cells.
pub const SIMPLIFY_CELLS: f64 = 1.5;

/// Corner-cutting passes over the thinned path (Chaikin 1974), so the
/// lattice's zigzags do not become wiggles of the spline (a wiggle is
/// longer than the cells it crosses and so steeper on them).
pub const SMOOTHING_PASSES: usize = 2;

/// Fraction of the profile's slope limit an edge may climb: the smoothed
/// path is shorter than the lattice path, so it needs the slack.
pub const EDGE_SLOPE_FRACTION: f64 = 0.85;

/// Weight of the grade term: an edge at the cap costs this much more per
/// cell of length than a level one.
const GRADE_WEIGHT: f64 = 0.5;

/// Cost of a cell of mean earthwork height per cell of length.
const EARTH_WEIGHT: f64 = 4.0;

/// The 16 neighbour offsets, in lattice steps.
const NEIGHBOURS: [(i32, i32); 16] = [
    (1, 0),
    (-1, 0),
    (0, 1),
    (0, -1),
    (1, 1),
    (1, -1),
    (-1, 1),
    (-1, -1),
    (2, 1),
    (2, -1),
    (-2, 1),
    (-2, -1),
    (1, 2),
    (1, -2),
    (-1, 2),
    (-1, -2),
];

/// The search lattice over a surface patch.
struct Lattice {
    patch: SurfacePatch,
    /// Nodes along x and z.
    n: IVec2,
    /// Height per node (x fastest), `None` where there is no terrain.
    height: Vec<Option<f64>>,
}

impl Lattice {
    fn new(patch: SurfacePatch) -> Lattice {
        let n = (patch.size() - 1) / ROUTE_STEP_CELLS + 1;
        let mut height = Vec::with_capacity((n.x * n.y) as usize);
        for z in 0..n.y {
            for x in 0..n.x {
                height.push(patch.height_cells(patch.min() + IVec2::new(x, z) * ROUTE_STEP_CELLS));
            }
        }
        Lattice { patch, n, height }
    }

    fn index(&self, node: IVec2) -> Option<usize> {
        (node.cmpge(IVec2::ZERO).all() && node.cmplt(self.n).all())
            .then(|| (node.y * self.n.x + node.x) as usize)
    }

    fn node_of(&self, index: usize) -> IVec2 {
        IVec2::new(index as i32 % self.n.x, index as i32 / self.n.x)
    }

    /// Centre of a node's column, cells.
    fn pos(&self, node: IVec2) -> DVec2 {
        (self.patch.min() + node * ROUTE_STEP_CELLS).as_dvec2() + 0.5
    }

    /// The node nearest `p` (cells), clamped into the lattice.
    fn nearest(&self, p: DVec2) -> IVec2 {
        let k = ((p - 0.5 - self.patch.min().as_dvec2()) / f64::from(ROUTE_STEP_CELLS)).round();
        IVec2::new(k.x as i32, k.y as i32).clamp(IVec2::ZERO, self.n - 1)
    }

    /// Cost of the edge `a → b`, or `None` when it is steeper than `slope`
    /// or crosses columns without terrain.
    fn edge_cost(&self, a: IVec2, b: IVec2, ha: f64, hb: f64, slope: f64) -> Option<f64> {
        let (pa, pb) = (self.pos(a), self.pos(b));
        let len = pa.distance(pb);
        let grade = (hb - ha).abs() / len;
        if grade > slope {
            return None;
        }
        let mut earth = 0.0;
        for t in [0.25, 0.5, 0.75] {
            let h = self.patch.height_at(pa.lerp(pb, t))?;
            earth += (h - (ha + (hb - ha) * t)).abs();
        }
        let ratio = if slope > 0.0 { grade / slope } else { 0.0 };
        Some(len * (1.0 + GRADE_WEIGHT * ratio * ratio) + EARTH_WEIGHT * earth / 3.0 * len)
    }
}

/// The search area around endpoints `a`, `b` (cells): their box grown by
/// the margin, as columns `min..max`.
pub fn search_area(a: DVec2, b: DVec2) -> (IVec2, IVec2) {
    let margin = ROUTE_MARGIN_CELLS.max(0.5 * a.distance(b));
    let lo = (a.min(b) - margin).floor();
    let hi = (a.max(b) + margin).ceil();
    (
        IVec2::new(lo.x as i32, lo.y as i32),
        IVec2::new(hi.x as i32, hi.y as i32),
    )
}

/// Control points (cells) of a road from `from` to `to` (cells) whose
/// grade stays under `cap_deg` where the terrain allows: the first is
/// `from`, the last `to`.
///
/// # Errors
/// [`PathError::NoSurface`] when an endpoint has no terrain below it,
/// [`PathError::NoRoute`] when no lattice path within the cap joins them
/// inside the search area, [`PathError::RouteSearchLimit`] after
/// [`MAX_ROUTE_NODES`] expansions, [`PathError::Grid`] when the area
/// leaves the lattice or (streaming) is not resident.
pub fn find_route(
    grid: &Grid,
    from: DVec2,
    to: DVec2,
    cap_deg: f64,
) -> Result<Vec<DVec2>, PathError> {
    let (min, max) = search_area(from, to);
    let area = CellBox::new(IVec3::new(min.x, 0, min.y), IVec3::new(max.x, 1, max.y));
    check_on_lattice(&area).map_err(GridError::from)?;
    let missing = grid.missing_columns(&area);
    if !missing.is_empty() {
        return Err(GridError::NotResident(missing).into());
    }
    let lattice = Lattice::new(SurfacePatch::read(grid, min, max));
    let no_surface = |p: DVec2| PathError::NoSurface {
        x_studs: p.x * 4.0,
        z_studs: p.y * 4.0,
    };
    let start = lattice.nearest(from);
    let goal = lattice.nearest(to);
    let (Some(si), Some(gi)) = (lattice.index(start), lattice.index(goal)) else {
        return Err(no_surface(from));
    };
    if lattice.height[si].is_none() {
        return Err(no_surface(from));
    }
    if lattice.height[gi].is_none() {
        return Err(no_surface(to));
    }
    let slope = EDGE_SLOPE_FRACTION * profile_slope_limit(cap_deg);
    let nodes = search(&lattice, si, gi, slope).map_err(|e| match e {
        SearchFailure::Exhausted => PathError::NoRoute {
            grade_cap_deg: cap_deg,
        },
        SearchFailure::Limit(nodes) => PathError::RouteSearchLimit { nodes },
    })?;
    let mut points: Vec<DVec2> = nodes
        .iter()
        .map(|&i| lattice.pos(lattice.node_of(i)))
        .collect();
    // The exact endpoints replace their nodes (at most a step away).
    points[0] = from;
    let last = points.len() - 1;
    if last == 0 {
        points.push(to);
    } else {
        points[last] = to;
    }
    let mut points = simplify(&points, SIMPLIFY_CELLS);
    for _ in 0..SMOOTHING_PASSES {
        points = cut_corners(&points);
    }
    Ok(points)
}

/// One Chaikin pass: every inner corner is replaced by the points a
/// quarter and three quarters along its two edges; the ends stay.
pub fn cut_corners(points: &[DVec2]) -> Vec<DVec2> {
    if points.len() < 3 {
        return points.to_vec();
    }
    let mut out = vec![points[0]];
    for (k, w) in points.windows(2).enumerate() {
        if k > 0 {
            out.push(w[0].lerp(w[1], 0.25));
        }
        if k + 2 < points.len() {
            out.push(w[0].lerp(w[1], 0.75));
        }
    }
    out.push(points[points.len() - 1]);
    out
}

enum SearchFailure {
    /// Every reachable node was expanded.
    Exhausted,
    /// The node limit was reached.
    Limit(usize),
}

/// A* from node `start` to node `goal`; the node indices of the path.
fn search(
    lattice: &Lattice,
    start: usize,
    goal: usize,
    slope: f64,
) -> Result<Vec<usize>, SearchFailure> {
    let count = lattice.height.len();
    let mut g = vec![f64::INFINITY; count];
    let mut parent = vec![u32::MAX; count];
    let mut closed = vec![false; count];
    let goal_pos = lattice.pos(lattice.node_of(goal));
    let h = |i: usize| lattice.pos(lattice.node_of(i)).distance(goal_pos);
    // Costs are finite and non-negative, so their bit patterns order like
    // the numbers.
    let mut open: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    g[start] = 0.0;
    open.push(Reverse((h(start).to_bits(), start as u32)));
    let mut expanded = 0usize;
    while let Some(Reverse((_, i))) = open.pop() {
        let i = i as usize;
        if closed[i] {
            continue;
        }
        if i == goal {
            let mut path = vec![goal];
            let mut at = goal;
            while at != start {
                at = parent[at] as usize;
                path.push(at);
            }
            path.reverse();
            return Ok(path);
        }
        closed[i] = true;
        expanded += 1;
        if expanded > MAX_ROUTE_NODES {
            return Err(SearchFailure::Limit(expanded));
        }
        let node = lattice.node_of(i);
        // Expanded nodes all have terrain (only such nodes are pushed).
        let Some(hi) = lattice.height[i] else {
            continue;
        };
        for (dx, dz) in NEIGHBOURS {
            let next = node + IVec2::new(dx, dz);
            let Some(j) = lattice.index(next) else {
                continue;
            };
            let Some(hj) = lattice.height[j] else {
                continue;
            };
            if closed[j] {
                continue;
            }
            let Some(cost) = lattice.edge_cost(node, next, hi, hj, slope) else {
                continue;
            };
            let tentative = g[i] + cost;
            if tentative < g[j] {
                g[j] = tentative;
                parent[j] = i as u32;
                open.push(Reverse(((tentative + h(j)).to_bits(), j as u32)));
            }
        }
    }
    Err(SearchFailure::Exhausted)
}

/// Douglas–Peucker thinning of a polyline: keeps the ends and every point
/// farther than `tolerance` from the chord of the points it stands for.
pub fn simplify(points: &[DVec2], tolerance: f64) -> Vec<DVec2> {
    if points.len() < 3 {
        return points.to_vec();
    }
    let mut keep = vec![false; points.len()];
    keep[0] = true;
    keep[points.len() - 1] = true;
    let mut stack = vec![(0usize, points.len() - 1)];
    while let Some((a, b)) = stack.pop() {
        let (pa, pb) = (points[a], points[b]);
        let chord = pb - pa;
        let len = chord.length();
        let mut worst = (0.0, a);
        for (k, p) in points.iter().enumerate().take(b).skip(a + 1) {
            let d = if len > 0.0 {
                (chord.perp_dot(*p - pa) / len).abs()
            } else {
                p.distance(pa)
            };
            if d > worst.0 {
                worst = (d, k);
            }
        }
        if worst.0 > tolerance {
            keep[worst.1] = true;
            stack.push((a, worst.1));
            stack.push((worst.1, b));
        }
    }
    points
        .iter()
        .zip(keep)
        .filter_map(|(p, k)| k.then_some(*p))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simplify_keeps_corners_and_drops_collinear_points() {
        let pts: Vec<DVec2> = (0..=10)
            .map(|i| DVec2::new(i as f64, 0.0))
            .chain((1..=10).map(|i| DVec2::new(10.0, i as f64)))
            .collect();
        assert_eq!(
            simplify(&pts, 0.5),
            vec![DVec2::ZERO, DVec2::new(10.0, 0.0), DVec2::new(10.0, 10.0)]
        );
        let corner = [DVec2::ZERO, DVec2::new(4.0, 0.0), DVec2::new(4.0, 4.0)];
        assert_eq!(
            cut_corners(&corner),
            vec![
                DVec2::ZERO,
                DVec2::new(3.0, 0.0),
                DVec2::new(4.0, 1.0),
                DVec2::new(4.0, 4.0)
            ]
        );
    }
}
