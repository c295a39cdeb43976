//! Surface materials of a recipe world: an ordered rule list over each
//! plan sample's height, slope, wetness, deposition and water, first match
//! wins. Bounds are dithered per sample with a hash so bands interleave
//! along their edges instead of drawing contour lines.

use crate::progress::{Cancelled, Progress};
use rayon::prelude::*;

use crate::terrain::generation::noise::{atan_deg, hash2, unit_f64};
use crate::terrain::recipe::plan::{Plan, STRATA_MATERIAL};
use crate::terrain::recipe::recipe_materials::RecipeMaterials;
use crate::terrain::recipe::stages::{MaterialRule, MaterialsStage, is_strata};
use crate::terrain::storage::cell::Material;

/// A rule with its names resolved.
struct Resolved<'a> {
    rule: &'a MaterialRule,
    surface: u8,
    soil: u8,
}

/// Material id of `name` for the plan (`"strata"` gives [`STRATA_MATERIAL`]).
fn plan_id(name: &str, materials: &RecipeMaterials) -> u8 {
    // Names were checked by `Recipe::validate_for`; an unknown one reads as
    // rock.
    materials.material(name).map_or(
        if is_strata(name) {
            STRATA_MATERIAL
        } else {
            Material::ROCK.0
        },
        |m| m.0,
    )
}

/// The soil under a surface material when the rule names none.
fn default_soil(surface: u8) -> u8 {
    match Material(surface) {
        Material::GRASS | Material::MUD => Material::DIRT.0,
        Material::SNOW => Material::ROCK.0,
        m => m.0,
    }
}

/// Slope at sample `(i, j)` in degrees, by central differences.
pub(crate) fn slope_deg(plan: &Plan, i: usize, j: usize) -> f64 {
    let side = plan.side;
    let h = |i: usize, j: usize| f64::from(plan.height_cells[plan.index(i, j)]);
    let (il, ir) = (i.saturating_sub(1), (i + 1).min(side - 1));
    let (jd, ju) = (j.saturating_sub(1), (j + 1).min(side - 1));
    let s = f64::from(plan.spacing_cells);
    let gx = (h(ir, j) - h(il, j)) / (((ir - il).max(1)) as f64 * s);
    let gz = (h(i, ju) - h(i, jd)) / (((ju - jd).max(1)) as f64 * s);
    atan_deg((gx * gx + gz * gz).sqrt())
}

/// Applies `stage`'s rules to every sample of `plan`, with dither from `seed`,
/// its names meaning what `materials` says (built-ins where it is silent).
/// Once `progress` is cancelled the samples not yet reached are skipped.
///
/// # Errors
/// [`Cancelled`] when `progress` was cancelled; `plan` is then unchanged.
pub fn apply_materials(
    plan: &mut Plan,
    stage: &MaterialsStage,
    materials: &RecipeMaterials,
    seed: u64,
    progress: &Progress,
) -> Result<(), Cancelled> {
    let rules: Vec<Resolved> = stage
        .rules
        .iter()
        .map(|rule| {
            let surface = plan_id(&rule.material, materials);
            Resolved {
                rule,
                surface,
                soil: rule
                    .soil
                    .as_deref()
                    .map_or(default_soil(surface), |soil| plan_id(soil, materials)),
            }
        })
        .collect();
    let fallback = plan_id(&stage.fallback, materials);
    let side = plan.side;
    let chosen: Vec<(u8, u8)> = (0..plan.len())
        .into_par_iter()
        .map(|k| {
            if progress.is_cancelled() {
                return (fallback, default_soil(fallback));
            }
            let (i, j) = (k % side, k / side);
            let slope = slope_deg(plan, i, j);
            rules
                .iter()
                .enumerate()
                .find(|(r, rule)| matches(plan, k, slope, rule.rule, seed, *r as i64, i, j))
                .map_or((fallback, default_soil(fallback)), |(_, rule)| {
                    (rule.surface, rule.soil)
                })
        })
        .collect();
    progress.check()?;
    for (k, (surface, soil)) in chosen.into_iter().enumerate() {
        plan.material[k] = surface;
        plan.soil[k] = soil;
    }
    Ok(())
}

/// True when every bound of `rule` holds at sample `k`, each moved by the
/// sample's dither.
#[allow(clippy::too_many_arguments)]
fn matches(
    plan: &Plan,
    k: usize,
    slope_deg: f64,
    rule: &MaterialRule,
    seed: u64,
    rule_index: i64,
    i: usize,
    j: usize,
) -> bool {
    let jitter =
        (unit_f64(hash2(seed ^ rule_index as u64, i as i64, j as i64)) * 2.0 - 1.0) * rule.dither;
    let h = f64::from(plan.height_cells[k]) + jitter;
    let slope = slope_deg + jitter;
    let above = |v: f64, min: Option<f64>| min.is_none_or(|m| v >= m);
    let below = |v: f64, max: Option<f64>| max.is_none_or(|m| v <= m);
    // Wetness and deposits dither by a tenth of the jitter (their units are small).
    let small = jitter * 0.05;
    above(h, rule.min_height_cells)
        && below(h, rule.max_height_cells)
        && above(slope, rule.min_slope_deg)
        && below(slope, rule.max_slope_deg)
        && above(f64::from(plan.wetness[k]) + small, rule.min_wetness)
        && above(
            f64::from(plan.sediment_cells[k]) + small,
            rule.min_deposit_cells,
        )
        && above(f64::from(plan.talus_cells[k]) + small, rule.min_talus_cells)
        && rule.underwater.is_none_or(|u| u == plan.is_wet(k))
}

/// The rules used when a recipe has no materials stage: beds under water,
/// beaches, scree, strata on cliffs, snow high up, grass elsewhere.
pub fn default_materials() -> MaterialsStage {
    let rule = |material: &str| MaterialRule {
        material: material.to_owned(),
        soil: None,
        min_height_cells: None,
        max_height_cells: None,
        min_slope_deg: None,
        max_slope_deg: None,
        min_wetness: None,
        min_deposit_cells: None,
        min_talus_cells: None,
        underwater: None,
        dither: 2.0,
    };
    MaterialsStage {
        rules: vec![
            MaterialRule {
                underwater: Some(true),
                ..rule("mud")
            },
            MaterialRule {
                min_slope_deg: Some(50.0),
                ..rule("strata")
            },
            MaterialRule {
                min_slope_deg: Some(38.0),
                ..rule("rock")
            },
            MaterialRule {
                min_height_cells: Some(150.0),
                max_slope_deg: Some(35.0),
                ..rule("snow")
            },
            MaterialRule {
                min_talus_cells: Some(0.5),
                ..rule("gravel")
            },
            MaterialRule {
                min_wetness: Some(0.9),
                ..rule("mud")
            },
        ],
        fallback: "grass".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_pick_by_height_slope_and_water() {
        let mut plan = Plan::new(64);
        for j in 0..64 {
            for i in 0..64 {
                let k = plan.index(i, j);
                // Flat low land on the left, a 60° wall in the middle, flat high land right.
                plan.height_cells[k] = match i {
                    0..30 => 10.0,
                    30..34 => 10.0 + (i as f32 - 29.0) * 2.0,
                    _ => 200.0,
                };
            }
        }
        let k_lake = plan.index(5, 5);
        plan.water_cells[k_lake] = 12.0;
        let mut stage = default_materials();
        for r in &mut stage.rules {
            r.dither = 0.0;
        }
        apply_materials(
            &mut plan,
            &stage,
            &RecipeMaterials::default(),
            1,
            &Progress::new(),
        )
        .expect("not cancelled");
        assert_eq!(plan.material[k_lake], Material::MUD.0);
        assert_eq!(plan.material[plan.index(10, 20)], Material::GRASS.0);
        assert_eq!(plan.material[plan.index(31, 20)], STRATA_MATERIAL);
        assert_eq!(plan.material[plan.index(50, 20)], Material::SNOW.0);
        assert_eq!(plan.soil[plan.index(10, 20)], Material::DIRT.0);
    }
}
