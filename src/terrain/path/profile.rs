//! The vertical profile of a path along its sampled centreline: where the
//! bed lies at each sample, and for a river where the water stands.
//!
//! A road follows the terrain smoothed over about its width, then limited
//! to its grade: `lower` is the highest curve under the smoothed terrain
//! whose slope nowhere exceeds the limit and `upper` the lowest one above
//! it (each one forward and one backward pass, the 1-D Lipschitz
//! envelopes); the bed is their mean, which keeps the same slope bound, is
//! the grade-limited curve closest to the terrain in the largest deviation
//! (the largest cut equals the largest fill), and so balances cut against
//! fill.
//!
//! A river's water surface is the running minimum of the terrain (less a
//! freeboard) from the first sample to the last, so it never rises
//! downstream; its lower Lipschitz envelope then bounds the falls to the
//! grade cap (the envelope of a non-increasing curve is non-increasing).
//! The bed lies one depth below the water.
//!
//! All heights and arc lengths are cells.

/// Fraction of the grade cap the profile is built to, so the bed measured
/// on the cells (column to column, where a curve's inside bunches the
/// nearest samples together) stays under the cap.
pub const GRADE_SAFETY: f64 = 0.96;

/// Slope allowance for height quantization, cells per cell: the carve
/// rounds each column's surface to 1/255 cell, so two neighbours may
/// differ by 2/255 cell more than the profile says.
pub const QUANTIZATION_SLOPE: f64 = 2.0 / 255.0;

/// How far the water surface of a river lies below the terrain at its
/// lowest point so far, cells.
pub const RIVER_FREEBOARD_CELLS: f64 = 0.5;

/// The slope (cells per cell) the profile is limited to for a grade cap
/// of `cap_deg`: `tan(cap) · GRADE_SAFETY − QUANTIZATION_SLOPE`, at least 0.
pub fn profile_slope_limit(cap_deg: f64) -> f64 {
    (cap_deg.to_radians().tan() * GRADE_SAFETY - QUANTIZATION_SLOPE).max(0.0)
}

/// A path's profile, one value per centreline sample.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// Height of the flat bed, cells.
    pub bed_cells: Vec<f64>,
    /// Rivers: the water surface, cells (non-increasing); empty for roads.
    pub water_cells: Vec<f64>,
}

/// Moving average of `h` over `±radius` (cells of arc) around each sample;
/// `arc` holds the samples' arc positions (increasing).
pub fn smooth(h: &[f64], arc: &[f64], radius: f64) -> Vec<f64> {
    let mut prefix = Vec::with_capacity(h.len() + 1);
    prefix.push(0.0);
    for v in h {
        prefix.push(prefix[prefix.len() - 1] + v);
    }
    let (mut lo, mut hi) = (0usize, 0usize);
    (0..h.len())
        .map(|i| {
            while arc[lo] < arc[i] - radius {
                lo += 1;
            }
            while hi + 1 < h.len() && arc[hi + 1] <= arc[i] + radius {
                hi += 1;
            }
            (prefix[hi + 1] - prefix[lo]) / (hi + 1 - lo) as f64
        })
        .collect()
}

/// The highest curve at or below `h` whose slope between any two samples
/// is at most `slope` (cells per cell of arc).
pub fn lower_envelope(h: &[f64], arc: &[f64], slope: f64) -> Vec<f64> {
    let mut out = h.to_vec();
    for i in 1..out.len() {
        out[i] = out[i].min(out[i - 1] + slope * (arc[i] - arc[i - 1]));
    }
    for i in (0..out.len().saturating_sub(1)).rev() {
        out[i] = out[i].min(out[i + 1] + slope * (arc[i + 1] - arc[i]));
    }
    out
}

/// The lowest curve at or above `h` whose slope is at most `slope`.
pub fn upper_envelope(h: &[f64], arc: &[f64], slope: f64) -> Vec<f64> {
    let negated: Vec<f64> = h.iter().map(|v| -v).collect();
    lower_envelope(&negated, arc, slope)
        .into_iter()
        .map(|v| -v)
        .collect()
}

/// A road's bed over terrain heights `terrain` (per sample): smoothed over
/// `±smooth_radius` cells, then the mean of the two grade envelopes for
/// the cap `cap_deg`.
pub fn road_profile(terrain: &[f64], arc: &[f64], smooth_radius: f64, cap_deg: f64) -> Profile {
    let slope = profile_slope_limit(cap_deg);
    let smoothed = smooth(terrain, arc, smooth_radius);
    let lower = lower_envelope(&smoothed, arc, slope);
    let upper = upper_envelope(&smoothed, arc, slope);
    Profile {
        bed_cells: lower
            .iter()
            .zip(&upper)
            .map(|(a, b)| 0.5 * (a + b))
            .collect(),
        water_cells: Vec::new(),
    }
}

/// A river over terrain heights `terrain` (per sample, upstream first):
/// water at the running minimum of the terrain less
/// [`RIVER_FREEBOARD_CELLS`], falls bounded by `cap_deg`, bed `depth_cells`
/// below the water.
///
/// `standing_water` is the water already over each sample's column
/// (cells, `None` for none; the same length as `terrain`). The river ends
/// where it flows into standing water at or above its own surface (a lake,
/// the sea, another river): the profile then holds the samples up to and
/// including that junction only (see [`river_junction`]), and the water
/// upstream of it is raised to the standing surface where it lay lower
/// (the water body backs up the channel; the bed stays where it was), so
/// the surface never rises going downstream into the water body.
pub fn river_profile(
    terrain: &[f64],
    standing_water: &[Option<f64>],
    arc: &[f64],
    depth_cells: f64,
    cap_deg: f64,
) -> Profile {
    let mut running = f64::INFINITY;
    let level: Vec<f64> = terrain
        .iter()
        .map(|h| {
            running = running.min(h - RIVER_FREEBOARD_CELLS);
            running
        })
        .collect();
    let mut water = lower_envelope(&level, arc, profile_slope_limit(cap_deg));
    let mut bed_cells: Vec<f64> = water.iter().map(|w| w - depth_cells).collect();
    if let Some(end) = river_junction(&water, standing_water) {
        water.truncate(end + 1);
        bed_cells.truncate(end + 1);
        if let Some(surface) = standing_water[end] {
            for w in &mut water {
                *w = w.max(surface);
            }
        }
    }
    Profile {
        bed_cells,
        water_cells: water,
    }
}

/// The first sample (after the start) where a river with surface `water`
/// enters standing water at or above it, coming from a sample that was
/// not under such water (so a river that leaves a lake it starts in runs
/// on until the next one); `None` when it meets none.
pub fn river_junction(water: &[f64], standing_water: &[Option<f64>]) -> Option<usize> {
    let submerged = |i: usize| {
        standing_water
            .get(i)
            .copied()
            .flatten()
            .is_some_and(|s| s >= water[i])
    };
    (1..water.len()).find(|&i| submerged(i) && !submerged(i - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arc(n: usize) -> Vec<f64> {
        (0..n).map(|i| i as f64 * 0.5).collect()
    }

    fn max_slope(h: &[f64], arc: &[f64]) -> f64 {
        h.windows(2)
            .zip(arc.windows(2))
            .map(|(w, a)| (w[1] - w[0]).abs() / (a[1] - a[0]))
            .fold(0.0, f64::max)
    }

    #[test]
    fn a_road_over_a_spike_and_a_cliff_keeps_its_grade_and_its_ends() {
        let n = 1000;
        let a = arc(n);
        // Flat at 10, a 3-sample spike to 30, a cliff up to 20 at sample 600.
        let terrain: Vec<f64> = (0..n)
            .map(|i| match i {
                300..=302 => 30.0,
                _ if i >= 600 => 20.0,
                _ => 10.0,
            })
            .collect();
        let p = road_profile(&terrain, &a, 1.0, 10.0);
        let limit = profile_slope_limit(10.0);
        assert!(max_slope(&p.bed_cells, &a) <= limit + 1e-12);
        assert!(limit < 10f64.to_radians().tan());
        // Far from the features the bed is on the terrain.
        assert!((p.bed_cells[5] - 10.0).abs() < 1e-9);
        assert!((p.bed_cells[n - 5] - 20.0).abs() < 1e-9);
        // The cliff is ramped: cut above the middle of the ramp, filled below it.
        assert!(p.bed_cells[600] < 20.0 && p.bed_cells[599] > 10.0);
        // The spike is mostly cut: the bed over it is far below 30.
        assert!(p.bed_cells[301] < 20.0, "{}", p.bed_cells[301]);
        assert!(p.water_cells.is_empty());
    }

    #[test]
    fn envelopes_bracket_the_input() {
        let a = arc(50);
        let h: Vec<f64> = (0..50).map(|i| ((i * 37) % 11) as f64).collect();
        let lo = lower_envelope(&h, &a, 0.2);
        let hi = upper_envelope(&h, &a, 0.2);
        for i in 0..50 {
            assert!(lo[i] <= h[i] && h[i] <= hi[i]);
        }
        assert!(max_slope(&lo, &a) <= 0.2 + 1e-12);
        assert!(max_slope(&hi, &a) <= 0.2 + 1e-12);
        // The smallest value survives in the lower envelope.
        assert_eq!(lo.iter().cloned().fold(f64::INFINITY, f64::min), 0.0);
        let s = smooth(&[0.0, 0.0, 3.0, 0.0, 0.0], &arc(5), 0.5);
        assert_eq!(s, vec![0.0, 1.0, 1.0, 1.0, 0.0]);
    }

    #[test]
    fn a_river_never_rises_downstream_and_lies_below_the_terrain() {
        let n = 300;
        let a = arc(n);
        // Downhill with a bump up in the middle and a sudden drop.
        let terrain: Vec<f64> = (0..n)
            .map(|i| {
                let base = 40.0 - i as f64 * 0.05;
                let bump = if (100..150).contains(&i) { 6.0 } else { 0.0 };
                let drop = if i >= 250 { -15.0 } else { 0.0 };
                base + bump + drop
            })
            .collect();
        let p = river_profile(&terrain, &vec![None; n], &a, 1.5, 20.0);
        for (i, (w, (bed, h))) in p
            .water_cells
            .iter()
            .zip(p.bed_cells.iter().zip(&terrain))
            .enumerate()
        {
            assert!(i == 0 || *w <= p.water_cells[i - 1], "rises at {i}");
            assert!(*w <= h - RIVER_FREEBOARD_CELLS + 1e-9);
            assert!((w - bed - 1.5).abs() < 1e-12);
        }
        assert!(max_slope(&p.water_cells, &a) <= profile_slope_limit(20.0) + 1e-12);
        // Through the bump the water stays at the level before it.
        assert!((p.water_cells[110] - p.water_cells[99]).abs() < 1e-9);
    }

    #[test]
    fn a_river_ends_where_it_meets_higher_standing_water_and_never_rises_into_it() {
        let n = 200;
        let a = arc(n);
        // Downhill from 60 to a lake floor at 30 from sample 150 on, with
        // the lake's surface at 38 (above the carved level there).
        let terrain: Vec<f64> = (0..n)
            .map(|i| {
                if i >= 150 {
                    30.0
                } else {
                    60.0 - 0.2 * i as f64
                }
            })
            .collect();
        let standing: Vec<Option<f64>> = (0..n).map(|i| (i >= 150).then_some(38.0)).collect();
        let p = river_profile(&terrain, &standing, &a, 2.0, 30.0);
        assert_eq!(p.water_cells.len(), 151, "ends at the lake");
        assert_eq!(p.bed_cells.len(), 151);
        assert_eq!(p.water_cells[150], 38.0);
        for i in 1..p.water_cells.len() {
            assert!(p.water_cells[i] <= p.water_cells[i - 1], "rises at {i}");
        }
        // Upstream of the backwater the water is the carved one.
        assert!((p.water_cells[10] - (58.0 - RIVER_FREEBOARD_CELLS)).abs() < 1e-9);
        // A river starting in a lake runs on after leaving it.
        let from_lake: Vec<Option<f64>> = (0..n).map(|i| (i < 5).then_some(70.0)).collect();
        let q = river_profile(&terrain[..140], &from_lake[..140], &a[..140], 2.0, 30.0);
        assert_eq!(q.water_cells.len(), 140);
        assert_eq!(river_junction(&q.water_cells, &from_lake[..140]), None);
    }
}
