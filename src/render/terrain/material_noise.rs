//! Deterministic noise and colour arithmetic for the procedural material
//! textures: integer hashing, tileable value, fractal and cellular noise, a
//! libm-free sine, and the colour helpers the patterns mix with. Only
//! IEEE-exact float arithmetic (`+ − × ÷ floor sqrt`), so every machine
//! computes the same bits.

pub(super) fn hash3(x: u32, y: u32, seed: u32) -> u32 {
    let mut h = x.wrapping_mul(0x27d4_eb2d)
        ^ y.wrapping_mul(0x1656_67b1).rotate_left(13)
        ^ seed.wrapping_mul(0x9e37_79b9);
    h ^= h >> 15;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h
}

/// Uniform value in `[0, 1)` for an integer lattice point.
pub(super) fn rand01(x: u32, y: u32, seed: u32) -> f32 {
    (hash3(x, y, seed) >> 8) as f32 * (1.0 / 16_777_216.0)
}

pub(super) fn fade(t: f32) -> f32 {
    t * t * t * (t * (t * 6.0 - 15.0) + 10.0)
}

pub(super) fn lerp(a: f32, b: f32, t: f32) -> f32 {
    a + (b - a) * t
}

pub(super) fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

pub(super) fn wrap(i: i64, period: u32) -> u32 {
    i.rem_euclid(period as i64) as u32
}

/// Tileable value noise in `[0, 1]`: `(u, v)` in tile units, `period` lattice cells per tile.
pub(super) fn value_noise(u: f32, v: f32, period: u32, seed: u32) -> f32 {
    let x = u * period as f32;
    let y = v * period as f32;
    let (xf, yf) = (x.floor(), y.floor());
    let (fx, fy) = (fade(x - xf), fade(y - yf));
    let (xi, yi) = (xf as i64, yf as i64);
    let (x0, x1) = (wrap(xi, period), wrap(xi + 1, period));
    let (y0, y1) = (wrap(yi, period), wrap(yi + 1, period));
    let a = lerp(rand01(x0, y0, seed), rand01(x1, y0, seed), fx);
    let b = lerp(rand01(x0, y1, seed), rand01(x1, y1, seed), fx);
    lerp(a, b, fy)
}

/// Tileable fractal noise in `[0, 1]`: `octaves` of value noise, period doubling.
pub(super) fn fbm(u: f32, v: f32, period: u32, octaves: u32, seed: u32) -> f32 {
    let (mut sum, mut amp, mut norm, mut p) = (0.0, 1.0, 0.0, period);
    for o in 0..octaves {
        sum += value_noise(u, v, p, seed.wrapping_add(o * 1013)) * amp;
        norm += amp;
        amp *= 0.5;
        p *= 2;
    }
    sum / norm
}

/// Tileable cellular noise: distances (in cells) to the nearest and second
/// nearest feature point, and a hash identifying the nearest cell.
pub(super) fn worley(u: f32, v: f32, period: u32, seed: u32) -> (f32, f32, u32) {
    let x = u * period as f32;
    let y = v * period as f32;
    let (xf, yf) = (x.floor(), y.floor());
    let (mut f1, mut f2, mut id) = (f32::MAX, f32::MAX, 0u32);
    for dy in -1i64..=1 {
        for dx in -1i64..=1 {
            let cx = xf as i64 + dx;
            let cy = yf as i64 + dy;
            let (wx, wy) = (wrap(cx, period), wrap(cy, period));
            let px = cx as f32 + 0.1 + 0.8 * rand01(wx, wy, seed);
            let py = cy as f32 + 0.1 + 0.8 * rand01(wx, wy, seed ^ 0x5bd1_e995);
            let d = ((px - x) * (px - x) + (py - y) * (py - y)).sqrt();
            if d < f1 {
                f2 = f1;
                f1 = d;
                id = hash3(wx, wy, seed ^ 0x68e3_1da4);
            } else if d < f2 {
                f2 = d;
            }
        }
    }
    (f1, f2, id)
}

/// `sin(2π·turns)` by Bhaskara's rational approximation (max error ~0.002),
/// so that ripples and layers do not depend on the platform's libm.
pub(super) fn sin_turns(turns: f32) -> f32 {
    let t = turns - turns.floor();
    let (x, sign) = if t < 0.5 {
        (2.0 * t, 1.0)
    } else {
        (2.0 * t - 1.0, -1.0)
    };
    let p = x * (1.0 - x);
    sign * 16.0 * p / (5.0 - 4.0 * p)
}

/// A colour in sRGB units (0..=255 per channel), before rounding.
pub(super) type Rgb = [f32; 3];

pub(super) fn scale(c: Rgb, m: f32) -> Rgb {
    [c[0] * m, c[1] * m, c[2] * m]
}

pub(super) fn mix(a: Rgb, b: Rgb, t: f32) -> Rgb {
    [
        lerp(a[0], b[0], t),
        lerp(a[1], b[1], t),
        lerp(a[2], b[2], t),
    ]
}

pub(super) fn rgb(c: [u8; 3]) -> Rgb {
    [c[0] as f32, c[1] as f32, c[2] as f32]
}

pub(super) fn to_u8(c: Rgb) -> [u8; 3] {
    c.map(|v| (v + 0.5).floor().clamp(0.0, 255.0) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sin_approximation_is_close() {
        for i in 0..100 {
            let t = i as f32 / 37.0 - 1.3;
            let exact = (t * std::f32::consts::TAU).sin();
            assert!((sin_turns(t) - exact).abs() < 0.003, "{t}");
        }
    }
}
