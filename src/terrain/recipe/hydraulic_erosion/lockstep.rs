//! A round of all [`LANES`] droplets stepped together: their motion (the
//! ground under them, the turn, the move, the ground ahead, capacity and
//! speed) as 4-wide operations, then each lane's sediment exchange in lane
//! order.
//!
//! # The same bits as one lane after another
//! A step writes only the ground within `-1 ..= +2` samples of the
//! droplet's sample on each axis (the erosion brush's 4 × 4 box, the
//! deposit's 2 × 2, the visit) and reads within `-2 ..= +3` (the bilinear
//! corners here and ahead); see [`footprints_apart`]. When
//! the lanes' footprints are apart, reading every lane's ground before any
//! lane writes gives the values the lanes would read one after another.
//! Each 4-wide operation is the IEEE-754 operation the scalar step does on
//! each lane (no fused multiply-add, no approximate reciprocal), so each
//! lane computes the same bits; a test compares the two paths.

use super::{Droplet, GRAVITY, LANES, MIN_SLOPE, Region, Roller, max_f32};

/// Samples a step can reach from its droplet's sample, per axis: the
/// erosion brush spans `-1 ..= +2`, the corners ahead `-1 ..= +2`, and a
/// move of a unit direction rounded a hair above 1 can put the droplet one
/// sample further (`+3`); `-2` covers the same on the low side.
const REACH_LOW: u32 = 2;
const REACH_HIGH: u32 = 3;

/// True when no two lanes' footprints (each `i - REACH_LOW ..= i +
/// REACH_HIGH` by `j - REACH_LOW ..= j + REACH_HIGH`) share a sample, so
/// the lanes' steps commute.
#[inline(always)]
pub(super) fn footprints_apart(lanes: &[Droplet; LANES]) -> bool {
    let apart = REACH_LOW + REACH_HIGH;
    for a in 0..LANES {
        for b in a + 1..LANES {
            if lanes[a].i.abs_diff(lanes[b].i) <= apart && lanes[a].j.abs_diff(lanes[b].j) <= apart
            {
                return false;
            }
        }
    }
    true
}

/// One value per lane; every operation is the scalar operation per lane
/// (which the compiler turns into one vector instruction).
#[derive(Clone, Copy)]
struct F4([f32; LANES]);

impl F4 {
    #[inline(always)]
    fn splat(x: f32) -> F4 {
        F4([x; LANES])
    }

    #[inline(always)]
    fn of(f: impl FnMut(usize) -> f32) -> F4 {
        F4(std::array::from_fn(f))
    }

    #[inline(always)]
    fn zip(self, other: F4, f: impl Fn(f32, f32) -> f32) -> F4 {
        F4(std::array::from_fn(|l| f(self.0[l], other.0[l])))
    }

    /// [`max_f32`] per lane.
    #[inline(always)]
    fn max(self, other: F4) -> F4 {
        self.zip(other, max_f32)
    }

    #[inline(always)]
    fn sqrt(self) -> F4 {
        F4(self.0.map(f32::sqrt))
    }
}

macro_rules! f4_op {
    ($trait:ident, $method:ident, $op:tt) => {
        impl std::ops::$trait for F4 {
            type Output = F4;
            #[inline(always)]
            fn $method(self, other: F4) -> F4 {
                self.zip(other, |a, b| a $op b)
            }
        }
    };
}
f4_op!(Add, add, +);
f4_op!(Sub, sub, -);
f4_op!(Mul, mul, *);
f4_op!(Div, div, /);

impl std::ops::Neg for F4 {
    type Output = F4;
    #[inline(always)]
    fn neg(self) -> F4 {
        F4(self.0.map(|a| -a))
    }
}

/// The 4 corner heights of each lane, by corner.
#[inline(always)]
fn corners(region: &Region, k: [usize; LANES]) -> [F4; 4] {
    let c: [[f32; 4]; LANES] = std::array::from_fn(|l| region.corners(k[l]));
    std::array::from_fn(|corner| F4::of(|l| c[l][corner]))
}

/// [`bilinear`](super::bilinear) per lane.
#[inline(always)]
fn bilinear4([h00, h10, h01, h11]: [F4; 4], u: F4, v: F4) -> F4 {
    let top = h00 + (h10 - h00) * u;
    let bottom = h01 + (h11 - h01) * u;
    top + (bottom - top) * v
}

impl Roller<'_, '_> {
    /// One step of every lane (all alive, footprints apart), with the
    /// results of [`Roller::step`] on each lane in lane order.
    #[inline(always)]
    pub(super) fn step_lockstep(&mut self, lanes: &mut [Droplet; LANES]) {
        let p = self.params;
        let w = self.region.w;
        let lane = |f: fn(&Droplet) -> f32| F4::of(|l| f(&lanes[l]));
        let (u, v) = (lane(|d| d.u), lane(|d| d.v));
        let k: [usize; LANES] =
            std::array::from_fn(|l| lanes[l].j as usize * w + lanes[l].i as usize);
        // The ground under each droplet and its slope.
        let [h00, h10, h01, h11] = corners(self.region, k);
        let h = bilinear4([h00, h10, h01, h11], u, v);
        let gx = (h10 - h00) + ((h11 - h01) - (h10 - h00)) * v;
        let gz = (h01 - h00) + ((h11 - h10) - (h01 - h00)) * u;
        // The turn and the move.
        let (inertia, pull) = (F4::splat(p.inertia), F4::splat(1.0 - p.inertia));
        let dx = lane(|d| d.dx) * inertia - gx * pull;
        let dz = lane(|d| d.dz) * inertia - gz * pull;
        let len_sq = dx * dx + dz * dz;
        let inv_len = F4::splat(1.0) / len_sq.sqrt();
        let (ndx, ndz) = (dx * inv_len, dz * inv_len);
        let (nx, nz) = (lane(|d| d.x) + ndx, lane(|d| d.z) + ndz);
        // As in `step`: a lane stalls below the least length (NaN does not).
        let stalled: [bool; LANES] = std::array::from_fn(|l| len_sq.0[l] < 1e-24);
        let moved: [bool; LANES] =
            std::array::from_fn(|l| !stalled[l] && self.inside(nx.0[l], nz.0[l]));
        // The ground ahead; a lane that stops reads its own sample instead
        // (in the region, and never used).
        let (sx, sz) = (
            F4::of(|l| if moved[l] { nx.0[l] } else { lanes[l].x }),
            F4::of(|l| if moved[l] { nz.0[l] } else { lanes[l].z }),
        );
        let ni: [i32; LANES] = sx.0.map(|x| x as i32);
        let nj: [i32; LANES] = sz.0.map(|z| z as i32);
        let nu = sx - F4::of(|l| ni[l] as f32);
        let nv = sz - F4::of(|l| nj[l] as f32);
        let nk: [usize; LANES] = std::array::from_fn(|l| nj[l] as usize * w + ni[l] as usize);
        let nh = bilinear4(corners(self.region, nk), nu, nv);
        // Capacity, speed and water after the move.
        let climb = nh - h;
        let slope = (-climb / F4::splat(p.spacing_cells)).max(F4::splat(MIN_SLOPE));
        let (speed, water) = (lane(|d| d.speed), lane(|d| d.water));
        let capacity = slope * speed * water * F4::splat(p.capacity);
        let speed_after = (speed * speed - climb * F4::splat(GRAVITY))
            .max(F4::splat(0.0))
            .sqrt();
        let water_after = water * F4::splat(p.keep_water);
        // Each lane's writes, in lane order.
        for (l, d) in lanes.iter_mut().enumerate() {
            d.steps_left -= 1;
            self.region.visits[k[l]] += d.water;
            if stalled[l] {
                d.steps_left = 0;
                continue;
            }
            (d.dx, d.dz) = (ndx.0[l], ndz.0[l]);
            if !moved[l] {
                d.steps_left = 0;
                continue;
            }
            self.exchange(d, k[l], h.0[l], nh.0[l], climb.0[l], capacity.0[l]);
            d.speed = speed_after.0[l];
            d.water = water_after.0[l];
            (d.x, d.z) = (nx.0[l], nz.0[l]);
            (d.i, d.j, d.u, d.v) = (ni[l] as u32, nj[l] as u32, nu.0[l], nv.0[l]);
            if d.water < 0.01 {
                d.steps_left = 0;
            }
        }
    }
}
