//! Cooking a recipe: its stages run in order over the world's 2D
//! [`Plan`], each timed and reported, with progress and Cancel between
//! (and inside the long) stages. The whole-map stages (erosion, rivers,
//! the breach) run here once; chunks are then built from the plan on
//! demand by [`crate::terrain::recipe::terrain_source::RecipeTerrain`].

use std::time::Instant;

use serde::Serialize;

use crate::progress::{Cancelled, Progress};
use crate::terrain::generation::column_fill::Strata;
use crate::terrain::generation::generate::{GenerateError, GeneratorSettings};
use crate::terrain::generation::noise::{atan_deg, sub_seed, tan_deg};
use crate::terrain::recipe::hydraulic_erosion::{RockAt, erode_hydraulic, hydraulic_tiles};
use crate::terrain::recipe::hydrology::{flood_sea, run_rivers, stranded_rivers};
use crate::terrain::recipe::material_rules::{apply_materials, default_materials};
use crate::terrain::recipe::plan::{LAKE, Plan, RIVER, SEA};
use crate::terrain::recipe::preview::{MAX_PREVIEW_PX, plan_preview_rgb};
use crate::terrain::recipe::recipe_materials::RecipeMaterials;
use crate::terrain::recipe::relief::{apply_falloff, apply_relief, apply_terrace};
use crate::terrain::recipe::slope_cap::cap_slopes;
use crate::terrain::recipe::stages::{Recipe, Stage};
use crate::terrain::recipe::thermal_erosion::erode_thermal;

/// Lowest surface a recipe world keeps, cells: every column has ground.
pub const MIN_SURFACE_CELLS: f32 = 2.0;

/// Highest surface a recipe world keeps, cells.
pub const MAX_SURFACE_CELLS: f32 = 1000.0;

/// One stage's line in the report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StageReport {
    /// The stage's name (`"relief"`, …).
    pub stage: &'static str,
    /// Wall time, milliseconds.
    pub ms: f64,
    /// Droplet steps of a hydraulic erosion stage (its time over this is
    /// the time per droplet step); absent for other stages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub droplet_steps: Option<u64>,
}

/// A picture of the plan after one stage ([`crate::terrain::recipe::preview`]).
#[derive(Clone, Debug, PartialEq)]
pub struct StagePreview {
    /// 0-based stage index.
    pub index: usize,
    /// The stage's name.
    pub stage: &'static str,
    /// Side, pixels.
    pub size_px: u32,
    /// RGB bytes, row by row.
    pub rgb: Vec<u8>,
}

/// What cooking a recipe did: stage times and the water and slope audits
/// (the `"generation"` object of `--stats-json`). Areas are in cells
/// (columns), converted from plan samples.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CookReport {
    /// The recipe's name.
    pub recipe: String,
    /// Plan samples per side.
    pub plan_side_samples: usize,
    /// Columns per plan sample along each axis.
    pub plan_spacing_cells: u32,
    /// Heap bytes of the plan.
    pub plan_bytes: usize,
    /// Wall time of all stages, milliseconds.
    pub plan_ms: f64,
    /// Each stage in order.
    pub stages: Vec<StageReport>,
    /// Columns under river water (centre lines and banks).
    pub river_cells: u64,
    /// Columns under lake water.
    pub lake_cells: u64,
    /// Columns under the sea.
    pub sea_cells: u64,
    /// River systems whose water reaches neither the sea, a lake nor the
    /// map rim (must be 0).
    pub stranded_rivers: usize,
    /// Samples the breach lowered.
    pub breached_samples: usize,
    /// Deepest breach cut, cells.
    pub max_breach_cells: f64,
    /// The slope cap of the last slope-cap stage, degrees (`None`: no cap).
    pub slope_cap_deg: Option<f64>,
    /// Steepest grade between neighbouring dry samples, degrees, where a
    /// slope cap ran (at most the cap); over all dry land otherwise.
    pub max_slope_deg: f64,
    /// Solid cells with an empty cell right below them (overhangs, cave
    /// roofs), counted when the world is built whole (`None` until then).
    pub overhang_cells: Option<u64>,
    /// A picture of the plan after each stage, when asked for.
    #[serde(skip)]
    pub previews: Vec<StagePreview>,
}

/// Checks the world settings for a recipe world.
///
/// # Errors
/// As [`GeneratorSettings::validate_streaming`].
fn check_settings(settings: &GeneratorSettings) -> Result<(), GenerateError> {
    settings.validate_streaming()
}

/// The revision of the cooking code: raise it with any change that alters
/// a cooked plan (the pinned recipe results in the tests change with it),
/// so plans stored in streaming world files by an earlier build are
/// cooked again instead of used.
pub const PLAN_REVISION: u32 = 3;

/// Cooks `recipe` for the world `settings` (seed and size), its material
/// names meaning what `materials` says (built-ins where it is silent;
/// [`RecipeMaterials::resolve`] makes it from the world's library): every stage in
/// order, each a progress stage of its own (labelled "cooking: STAGE";
/// hydraulic erosion counts its tiles, other stages one unit), then the
/// audits. Pure: the same recipe and settings give the
/// same plan bits on every machine and thread count.
///
/// # Errors
/// [`GenerateError`] for bad world settings; [`GenerateError::Cancelled`]
/// when `progress` was cancelled (checked between stages and every few
/// milliseconds inside the erosion stages).
pub fn cook_plan(
    recipe: &Recipe,
    materials: &RecipeMaterials,
    settings: &GeneratorSettings,
    progress: &Progress,
) -> Result<(Plan, CookReport), GenerateError> {
    cook_plan_with_previews(recipe, materials, settings, progress, None)
}

/// [`cook_plan`], drawing the plan after every stage at `preview_px`
/// pixels a side when given ([`CookReport::previews`]).
///
/// # Errors
/// As [`cook_plan`].
pub fn cook_plan_with_previews(
    recipe: &Recipe,
    materials: &RecipeMaterials,
    settings: &GeneratorSettings,
    progress: &Progress,
    preview_px: Option<u32>,
) -> Result<(Plan, CookReport), GenerateError> {
    check_settings(settings)?;
    let mut previews = Vec::new();
    let start = Instant::now();
    let mut plan = Plan::new(settings.size_cells);
    let strata = Strata::new(settings.seed);
    let mut stages = Vec::with_capacity(recipe.stages.len());
    let mut cap_grade: Option<f64> = None;
    let mut slope_cap_deg = None;
    let mut rivers = None;
    let mut materials_ran = false;
    let stage_count = recipe.stages.len();
    for (index, stage) in recipe.stages.iter().enumerate() {
        begin_cook_stage(progress, Some(stage), plan.side, index, stage_count)?;
        let t = Instant::now();
        let stage_seed = sub_seed(settings.seed, 0x5ec1_0000 + index as u64);
        let mut droplet_steps = None;
        match stage {
            Stage::Relief(r) => apply_relief(&mut plan, r, stage_seed, progress),
            Stage::Falloff(f) => {
                apply_falloff(&mut plan, f, f64::from(settings.size_cells), progress)
            }
            Stage::Terrace(t) => apply_terrace(&mut plan, t, progress),
            Stage::ThermalErosion(t) => erode_thermal(
                &mut plan,
                tan_deg(t.talus_deg),
                t.iterations,
                t.rate,
                progress,
            )
            .map_err(|Cancelled| GenerateError::Cancelled)?,
            Stage::HydraulicErosion(h) => {
                let rock = |y: i32| strata.material(y, 0.0);
                let rock = RockAt::ByHeight(&rock);
                let steps = erode_hydraulic(&mut plan, h, materials, stage_seed, rock, progress);
                droplet_steps = Some(steps.map_err(|Cancelled| GenerateError::Cancelled)?);
            }
            Stage::SlopeCap(s) => {
                let grade = tan_deg(s.grade_deg);
                let wet: Vec<bool> = (0..plan.len()).map(|k| plan.is_wet(k)).collect();
                cap_slopes(&mut plan, grade, Some(wet.as_slice()), progress)
                    .map_err(|Cancelled| GenerateError::Cancelled)?;
                cap_grade = Some(grade);
                slope_cap_deg = Some(s.grade_deg);
            }
            Stage::Sea(s) => {
                flood_sea(&mut plan, s.level_cells);
            }
            Stage::Rivers(r) => {
                rivers = Some(
                    run_rivers(&mut plan, r, cap_grade, progress)
                        .map_err(|Cancelled| GenerateError::Cancelled)?,
                )
            }
            Stage::Materials(m) => {
                apply_materials(&mut plan, m, materials, stage_seed, progress)
                    .map_err(|Cancelled| GenerateError::Cancelled)?;
                materials_ran = true;
            }
            // Caves are 3D detail, added when chunks are built.
            Stage::Caves(_) => {}
        }
        stages.push(StageReport {
            stage: stage.name(),
            ms: t.elapsed().as_secs_f64() * 1e3,
            droplet_steps,
        });
        if let Some(size_px) = preview_px {
            previews.push(StagePreview {
                index,
                stage: stage.name(),
                size_px: size_px.clamp(1, MAX_PREVIEW_PX),
                rgb: plan_preview_rgb(&plan, materials, size_px),
            });
        }
        if !matches!(stage, Stage::HydraulicErosion(_)) {
            progress.advance(1);
        }
    }
    begin_cook_stage(progress, None, plan.side, stage_count, stage_count)?;
    clamp_surface(&mut plan);
    if !materials_ran {
        apply_materials(
            &mut plan,
            &default_materials(),
            &RecipeMaterials::default(),
            settings.seed,
            progress,
        )
        .map_err(|Cancelled| GenerateError::Cancelled)?;
    }
    let rivers = rivers.unwrap_or_default();
    let area = u64::from(plan.spacing_cells) * u64::from(plan.spacing_cells);
    let count = |body: u8| plan.water_body.iter().filter(|&&b| b == body).count() as u64 * area;
    let report = CookReport {
        recipe: recipe.name.clone(),
        plan_side_samples: plan.side,
        plan_spacing_cells: plan.spacing_cells,
        plan_bytes: plan.heap_bytes(),
        plan_ms: start.elapsed().as_secs_f64() * 1e3,
        stages,
        river_cells: count(RIVER),
        lake_cells: count(LAKE),
        sea_cells: count(SEA),
        stranded_rivers: stranded_rivers(&plan),
        breached_samples: rivers.breached_samples,
        max_breach_cells: rivers.max_breach_cells,
        slope_cap_deg,
        max_slope_deg: max_dry_grade_deg(&plan),
        overhang_cells: None,
        previews,
    };
    Ok((plan, report))
}

/// Checks Cancel, then begins `stage` in `progress` (`None`: the audits
/// after the recipe's `stages`), the `index`-th (0-based) of the `stages`
/// plus the audits, on a plan `side` samples wide.
///
/// # Errors
/// [`GenerateError::Cancelled`] when `progress` was cancelled.
fn begin_cook_stage(
    progress: &Progress,
    stage: Option<&Stage>,
    side: usize,
    index: usize,
    stages: usize,
) -> Result<(), GenerateError> {
    progress
        .check()
        .map_err(|Cancelled| GenerateError::Cancelled)?;
    match stage {
        Some(stage) => progress.begin_stage(stage_label(stage), stage_units(stage, side)),
        None => progress.begin_stage("cooking: audits", 1),
    }
    progress.set_place(index as u32 + 1, stages as u32 + 1);
    Ok(())
}

/// The progress label of `stage` while it cooks.
fn stage_label(stage: &Stage) -> &'static str {
    match stage {
        Stage::Relief(_) => "cooking: relief",
        Stage::Falloff(_) => "cooking: falloff",
        Stage::Terrace(_) => "cooking: terraces",
        Stage::ThermalErosion(_) => "cooking: thermal erosion",
        Stage::HydraulicErosion(_) => "cooking: hydraulic erosion",
        Stage::SlopeCap(_) => "cooking: slope cap",
        Stage::Sea(_) => "cooking: sea",
        Stage::Rivers(_) => "cooking: rivers",
        Stage::Materials(_) => "cooking: materials",
        Stage::Caves(_) => "cooking: caves",
    }
}

/// Progress units of `stage` on a plan `side` samples wide: hydraulic
/// erosion counts its tiles, the other stages one unit.
fn stage_units(stage: &Stage, side: usize) -> u64 {
    match stage {
        Stage::HydraulicErosion(_) => hydraulic_tiles(side),
        _ => 1,
    }
}

/// Keeps every surface within [`MIN_SURFACE_CELLS`]..[`MAX_SURFACE_CELLS`]
/// (stages may push land below 0, e.g. a deep falloff). Water over land
/// raised to the floor stays above it or goes.
fn clamp_surface(plan: &mut Plan) {
    for h in &mut plan.height_cells {
        *h = h.clamp(MIN_SURFACE_CELLS, MAX_SURFACE_CELLS);
    }
}

/// Steepest grade between neighbouring dry samples, degrees.
fn max_dry_grade_deg(plan: &Plan) -> f64 {
    let side = plan.side;
    let s = f64::from(plan.spacing_cells);
    let mut steepest: f64 = 0.0;
    for j in 0..side {
        for i in 0..side {
            let k = plan.index(i, j);
            if plan.is_wet(k) {
                continue;
            }
            // Each pair once: right, down, and the two lower diagonals.
            for (di, dj, dist) in [
                (1i64, 0i64, 1.0),
                (0, 1, 1.0),
                (1, 1, std::f64::consts::SQRT_2),
                (-1, 1, std::f64::consts::SQRT_2),
            ] {
                let (ni, nj) = (i as i64 + di, j as i64 + dj);
                if ni < 0 || ni >= side as i64 || nj >= side as i64 {
                    continue;
                }
                let q = plan.index(ni as usize, nj as usize);
                if plan.is_wet(q) {
                    continue;
                }
                let rise = f64::from(plan.height_cells[k] - plan.height_cells[q]).abs();
                steepest = steepest.max(rise / (dist * s));
            }
        }
    }
    atan_deg(steepest)
}
