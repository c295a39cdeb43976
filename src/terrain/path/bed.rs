//! The bed of a path made level enough in the plane, not only along its
//! centreline: each bed column takes the profile height of its nearest
//! centreline sample, and where the centreline turns tightly two
//! neighbouring columns can take samples farther apart along the arc than
//! they are apart on the ground, so their step would be steeper than the
//! profile. Clamping the bed columns to a Lipschitz bound over the
//! 8-connected column graph (the mean of the highest minorant and the
//! lowest majorant, which is the closest such field in the largest
//! deviation) removes those steps.

use glam::IVec2;

/// Most sweeps of each envelope (a forward and a backward raster pass
/// each); a band along a curve settles in a few.
const MAX_SWEEPS: usize = 16;

/// The 8 neighbour offsets with their distances, cells: the four that a
/// forward raster pass has already visited, then the four of a backward one.
const FORWARD: [(i32, i32, f64); 4] = [
    (-1, 0, 1.0),
    (-1, -1, std::f64::consts::SQRT_2),
    (0, -1, 1.0),
    (1, -1, std::f64::consts::SQRT_2),
];
const BACKWARD: [(i32, i32, f64); 4] = [
    (1, 0, 1.0),
    (1, 1, std::f64::consts::SQRT_2),
    (0, 1, 1.0),
    (-1, 1, std::f64::consts::SQRT_2),
];

/// The highest field at or below `values` (over the columns that hold a
/// value, x fastest over `size`) whose step between 8-neighbours is at
/// most `slope` times their distance.
fn lower_field(values: &mut [Option<f64>], size: IVec2, slope: f64) {
    for _ in 0..MAX_SWEEPS {
        let mut changed = false;
        for (offsets, forward) in [(FORWARD, true), (BACKWARD, false)] {
            for zi in 0..size.y {
                for xi in 0..size.x {
                    let (x, z) = if forward {
                        (xi, zi)
                    } else {
                        (size.x - 1 - xi, size.y - 1 - zi)
                    };
                    let k = (z * size.x + x) as usize;
                    let Some(mut v) = values[k] else {
                        continue;
                    };
                    for (dx, dz, len) in offsets {
                        let (nx, nz) = (x + dx, z + dz);
                        if nx < 0 || nz < 0 || nx >= size.x || nz >= size.y {
                            continue;
                        }
                        if let Some(n) = values[(nz * size.x + nx) as usize] {
                            let bound = n + slope * len;
                            if bound < v - 1e-12 {
                                v = bound;
                                changed = true;
                            }
                        }
                    }
                    values[k] = Some(v);
                }
            }
        }
        if !changed {
            break;
        }
    }
}

/// Replaces `values` by the mean of their two Lipschitz envelopes (see
/// the module docs): afterwards no two 8-neighbours differ by more than
/// `slope` times their distance (within [`MAX_SWEEPS`] sweeps).
pub fn limit_bed_slope(values: &mut [Option<f64>], size: IVec2, slope: f64) {
    let mut lower = values.to_vec();
    lower_field(&mut lower, size, slope);
    let mut upper: Vec<Option<f64>> = values.iter().map(|v| v.map(|x| -x)).collect();
    lower_field(&mut upper, size, slope);
    for ((v, lo), hi) in values.iter_mut().zip(lower).zip(upper) {
        if let (Some(v), Some(lo), Some(hi)) = (v.as_mut(), lo, hi) {
            *v = 0.5 * (lo - hi);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_in_a_band_becomes_a_ramp_within_the_slope() {
        let size = IVec2::new(20, 3);
        let mut v: Vec<Option<f64>> = (0..60)
            .map(|k| {
                let (x, z) = (k % 20, k / 20);
                (z != 2 || x < 5).then_some(if x < 10 { 0.0 } else { 4.0 })
            })
            .collect();
        limit_bed_slope(&mut v, size, 0.5);
        for z in 0..3 {
            for x in 0..19 {
                if let (Some(a), Some(b)) = (v[z * 20 + x], v[z * 20 + x + 1]) {
                    assert!((b - a).abs() <= 0.5 + 1e-9, "{x},{z}: {a} {b}");
                }
            }
        }
        // The ramp is centred on the step; far from it nothing moved.
        assert!((v[0].unwrap()).abs() < 1e-9 && (v[19].unwrap() - 4.0).abs() < 1e-9);
        assert!((v[9].unwrap() + v[10].unwrap() - 4.0).abs() < 1e-9);
        assert_eq!(v[2 * 20 + 12], None);
    }
}
