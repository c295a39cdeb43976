//! A small top-down picture of a recipe's plan, drawn after each stage so
//! an artist sees what every stage did: shaded relief, coloured by the
//! surface material once the materials stage ran (by height before it),
//! water in blue by depth.

use crate::terrain::recipe::plan::{Plan, STRATA_MATERIAL};
use crate::terrain::recipe::recipe_materials::RecipeMaterials;
use crate::terrain::storage::cell::Material;

/// Largest preview side, pixels.
pub const MAX_PREVIEW_PX: u32 = 1024;

/// An RGB colour ramp by height for plans without materials yet: lowland
/// green, upland brown, peaks white.
fn height_colour(h: f32, lo: f32, hi: f32) -> [f32; 3] {
    let t = ((h - lo) / (hi - lo).max(1.0)).clamp(0.0, 1.0);
    let stops: [(f32, [f32; 3]); 4] = [
        (0.0, [70.0, 120.0, 60.0]),
        (0.45, [140.0, 150.0, 90.0]),
        (0.75, [130.0, 105.0, 80.0]),
        (1.0, [240.0, 240.0, 240.0]),
    ];
    for w in stops.windows(2) {
        let ((t0, c0), (t1, c1)) = (w[0], w[1]);
        if t <= t1 {
            let f = (t - t0) / (t1 - t0);
            return [0, 1, 2].map(|i| c0[i] + (c1[i] - c0[i]) * f);
        }
    }
    stops[3].1
}

/// The plan drawn `size_px` × `size_px` (at most [`MAX_PREVIEW_PX`]), RGB
/// bytes row by row, north (z = 0) at the top; each pixel shows the
/// nearest plan sample, lit from the north-west. Materials draw in their
/// colour (`materials` gives the library's where the recipe named one).
pub fn plan_preview_rgb(plan: &Plan, materials: &RecipeMaterials, size_px: u32) -> Vec<u8> {
    let size = size_px.clamp(1, MAX_PREVIEW_PX) as usize;
    let (lo, hi) = plan
        .height_cells
        .iter()
        .fold((f32::MAX, f32::MIN), |(a, b), &h| (a.min(h), b.max(h)));
    let side = plan.side;
    let s = plan.spacing_cells as f32;
    let mut out = Vec::with_capacity(size * size * 3);
    for py in 0..size {
        let j = (py * side / size).min(side - 1);
        for px in 0..size {
            let i = (px * side / size).min(side - 1);
            let k = plan.index(i, j);
            let h = plan.height_cells[k];
            let colour = if plan.is_wet(k) {
                let depth = (plan.water_cells[k] - h).clamp(0.0, 24.0) / 24.0;
                [
                    60.0 - 30.0 * depth,
                    110.0 - 50.0 * depth,
                    170.0 - 40.0 * depth,
                ]
            } else {
                let shade = {
                    let at = |i: usize, j: usize| plan.height_cells[plan.index(i, j)];
                    let (il, ir) = (i.saturating_sub(1), (i + 1).min(side - 1));
                    let (ju, jd) = (j.saturating_sub(1), (j + 1).min(side - 1));
                    let gx = (at(ir, j) - at(il, j)) / (2.0 * s);
                    let gz = (at(i, jd) - at(i, ju)) / (2.0 * s);
                    // Light from the north-west, 45° up.
                    let lit = (1.0 + gx + gz) / (2.0 * (1.0 + gx * gx + gz * gz).sqrt());
                    (0.35 + 0.9 * lit).clamp(0.25, 1.25)
                };
                let base = match plan.material[k] {
                    0 => height_colour(h, lo, hi),
                    STRATA_MATERIAL => Material::ROCK.base_color_srgb().map(f32::from),
                    id => materials.preview_srgb(Material(id)).map(f32::from),
                };
                base.map(|c| c * shade)
            };
            out.extend(colour.map(|c| c.clamp(0.0, 255.0) as u8));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn water_is_blue_and_slopes_are_shaded() {
        let mut plan = Plan::new(64);
        for j in 0..64 {
            for i in 0..64 {
                let k = plan.index(i, j);
                plan.height_cells[k] = i as f32;
            }
        }
        let wet = plan.index(0, 0);
        plan.water_cells[wet] = 10.0;
        let rgb = plan_preview_rgb(&plan, &RecipeMaterials::default(), 64);
        assert_eq!(rgb.len(), 64 * 64 * 3);
        let (r, b) = (rgb[0], rgb[2]);
        assert!(b > r, "water pixel {r} {b}");
    }
}
