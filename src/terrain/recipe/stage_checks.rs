//! Range and name checks of every recipe stage ([`Recipe::validate`]): one
//! check per stage kind, each reporting the first field out of range or the
//! first unknown material name.

use crate::terrain::materials::MaterialLibrary;
use crate::terrain::recipe::recipe_materials::{RecipeMaterials, library_solid};
use crate::terrain::recipe::stages::{
    CavesStage, FalloffStage, HydraulicStage, MAX_DROPLETS_PER_SAMPLE, MAX_ITERATIONS, MAX_STAGES,
    MaterialsStage, Recipe, RecipeError, ReliefStage, RiversStage, SeaStage, SlopeCapStage, Stage,
    TerraceStage, ThermalStage, is_strata,
};
use crate::terrain::storage::cell::Material;

/// What a material name means, `None` for a name it does not know.
type Names<'a> = &'a (dyn Fn(&str) -> Option<Material> + 'a);

impl Recipe {
    /// Checks every stage's numbers and names (see each stage's fields),
    /// the names against the built-ins ([`Recipe::validate_for`] with the
    /// default library).
    ///
    /// # Errors
    /// As [`Recipe::validate_for`].
    pub fn validate(&self) -> Result<(), RecipeError> {
        self.validate_for(&MaterialLibrary::default())
    }

    /// Checks every stage's numbers, and its material names against
    /// `library` (a built-in's name, or a name the world gave a material).
    ///
    /// # Errors
    /// [`RecipeError::NoName`], [`RecipeError::StageCount`],
    /// [`RecipeError::NoRelief`], and per stage its first
    /// [`RecipeError::Invalid`], [`RecipeError::UnknownMaterial`] or
    /// [`RecipeError::Contradiction`], then [`RecipeError::Order`]: one
    /// problem alone, or all of them in [`RecipeError::Several`].
    pub fn validate_for(&self, library: &MaterialLibrary) -> Result<(), RecipeError> {
        self.validate_names(&|name| library_solid(library, name))
    }

    /// [`Recipe::validate_for`] with the names `materials` resolves (a
    /// recipe read back with its table: the library may have renamed the
    /// materials since).
    ///
    /// # Errors
    /// As [`Recipe::validate_for`].
    pub fn validate_resolved(&self, materials: &RecipeMaterials) -> Result<(), RecipeError> {
        self.validate_names(&|name| materials.material(name))
    }

    /// The checks, names meaning what `names` says.
    fn validate_names(&self, names: Names) -> Result<(), RecipeError> {
        let mut problems = Vec::new();
        if self.name.trim().is_empty() {
            problems.push(RecipeError::NoName);
        }
        if self.stages.is_empty() || self.stages.len() > MAX_STAGES {
            problems.push(RecipeError::StageCount(self.stages.len()));
        }
        if !self.stages.is_empty() && !self.stages.iter().any(|s| matches!(s, Stage::Relief(_))) {
            problems.push(RecipeError::NoRelief);
        }
        for (index, stage) in self.stages.iter().enumerate() {
            if let Err(e) = validate_stage(index, stage, names) {
                problems.push(e);
            }
        }
        problems.extend(order_problems(&self.stages));
        match problems.len() {
            0 => Ok(()),
            1 => Err(problems.remove(0)),
            _ => Err(RecipeError::Several(problems)),
        }
    }
}

/// Stages that may come once in a recipe.
const ONCE: [&str; 4] = ["sea", "rivers", "materials", "caves"];

/// Where stages stand against each other: [`ONCE`] kinds at most once,
/// rivers after the sea (they drain to it), materials after the sea and
/// the rivers (their rules read water and wetness).
fn order_problems(stages: &[Stage]) -> Vec<RecipeError> {
    let first = |name: &str| stages.iter().position(|s| s.name() == name);
    let mut out = Vec::new();
    for (index, stage) in stages.iter().enumerate() {
        let name = stage.name();
        if ONCE.contains(&name) && first(name).is_some_and(|f| f < index) {
            out.push(RecipeError::Order {
                index,
                stage: name,
                problem: format!(
                    "a second {name} stage (the first is stage {}); a recipe has at most one",
                    first(name).unwrap_or(0)
                ),
            });
        }
        let after = |later: &str| first(later).filter(|&l| l > index);
        let must_follow: &[&str] = match name {
            "rivers" => &["sea"],
            "materials" => &["sea", "rivers"],
            _ => &[],
        };
        for earlier in must_follow {
            if let Some(at) = after(earlier) {
                out.push(RecipeError::Order {
                    index,
                    stage: name,
                    problem: format!(
                        "comes before the {earlier} stage (stage {at}); move it after"
                    ),
                });
            }
        }
    }
    out
}

/// Range checks of one stage.
struct Checker<'a> {
    index: usize,
    stage: &'static str,
    names: Names<'a>,
}

impl Checker<'_> {
    fn range(
        &self,
        field: &'static str,
        value: f64,
        ok: bool,
        expected: &'static str,
    ) -> Result<(), RecipeError> {
        if value.is_finite() && ok {
            Ok(())
        } else {
            Err(RecipeError::Invalid {
                index: self.index,
                stage: self.stage,
                field,
                value,
                expected,
            })
        }
    }

    /// Refuses a lower bound above its upper bound (both given).
    fn ordered(
        &self,
        (field, low): (&'static str, Option<f64>),
        (high_field, high): (&'static str, Option<f64>),
    ) -> Result<(), RecipeError> {
        match (low, high) {
            (Some(low), Some(high)) if low > high => Err(RecipeError::Contradiction {
                index: self.index,
                stage: self.stage,
                field,
                low,
                high_field,
                high,
            }),
            _ => Ok(()),
        }
    }

    fn material(&self, name: &str, strata_allowed: bool) -> Result<(), RecipeError> {
        // "strata" is the layered-rock keyword in every case, never a
        // library name, so checking and cooking read it alike.
        let known = if is_strata(name) {
            strata_allowed
        } else {
            (self.names)(name).is_some()
        };
        if known {
            Ok(())
        } else {
            Err(RecipeError::UnknownMaterial {
                index: self.index,
                stage: self.stage,
                name: name.to_owned(),
            })
        }
    }
}

/// Largest height any stage may name, cells (the world is `y ∈ [0, 256)`
/// for the default generator; recipes keep to `[−1024, 1024]`).
const HEIGHT_LIMIT_CELLS: f64 = 1024.0;

/// True when `v` is within [`HEIGHT_LIMIT_CELLS`] of zero.
fn within_height_limit(v: f64) -> bool {
    v.abs() <= HEIGHT_LIMIT_CELLS
}

/// The checks of `stage`, the `index`th of its recipe.
fn validate_stage(index: usize, stage: &Stage, names: Names) -> Result<(), RecipeError> {
    let c = Checker {
        index,
        stage: stage.name(),
        names,
    };
    match stage {
        Stage::Relief(r) => check_relief(&c, r),
        Stage::Falloff(f) => check_falloff(&c, f),
        Stage::Terrace(t) => check_terrace(&c, t),
        Stage::ThermalErosion(t) => check_thermal_erosion(&c, t),
        Stage::HydraulicErosion(h) => check_hydraulic_erosion(&c, h),
        Stage::SlopeCap(s) => check_slope_cap(&c, s),
        Stage::Sea(s) => check_sea(&c, s),
        Stage::Rivers(r) => check_rivers(&c, r),
        Stage::Materials(m) => check_materials(&c, m),
        Stage::Caves(k) => check_caves(&c, k),
    }
}

/// The noise relief stage: each field's range, first failure first.
fn check_relief(c: &Checker, r: &ReliefStage) -> Result<(), RecipeError> {
    c.range(
        "base_cells",
        r.base_cells,
        within_height_limit(r.base_cells),
        "|v| <= 1024",
    )?;
    c.range(
        "amplitude_cells",
        r.amplitude_cells,
        within_height_limit(r.amplitude_cells),
        "|v| <= 1024",
    )?;
    c.range(
        "wavelength_cells",
        r.wavelength_cells,
        r.wavelength_cells >= 1.0 && r.wavelength_cells <= 1e6,
        "1 to 1e6",
    )?;
    c.range(
        "octaves",
        f64::from(r.octaves),
        (1..=10).contains(&r.octaves),
        "1 to 10",
    )?;
    c.range(
        "ruggedness",
        r.ruggedness,
        (0.2..=0.8).contains(&r.ruggedness),
        "0.2 to 0.8",
    )?;
    c.range(
        "sharpness",
        r.sharpness,
        (0.25..=4.0).contains(&r.sharpness),
        "0.25 to 4",
    )?;
    c.range(
        "warp_cells",
        r.warp_cells,
        (0.0..=1e5).contains(&r.warp_cells),
        "0 to 1e5",
    )?;
    Ok(())
}

/// The rim falloff stage: each field's range, first failure first.
fn check_falloff(c: &Checker, f: &FalloffStage) -> Result<(), RecipeError> {
    c.range(
        "edge_fraction",
        f.edge_fraction,
        f.edge_fraction > 0.0 && f.edge_fraction <= 1.0,
        "above 0, at most 1",
    )?;
    c.range(
        "depth_cells",
        f.depth_cells,
        (0.0..=HEIGHT_LIMIT_CELLS).contains(&f.depth_cells),
        "0 to 1024",
    )?;
    Ok(())
}

/// The terraces stage: each field's range, first failure first.
fn check_terrace(c: &Checker, t: &TerraceStage) -> Result<(), RecipeError> {
    c.range(
        "step_cells",
        t.step_cells,
        (1.0..=256.0).contains(&t.step_cells),
        "1 to 256",
    )?;
    c.range(
        "strength",
        t.strength,
        (0.0..=1.0).contains(&t.strength),
        "0 to 1",
    )?;
    c.range(
        "above_cells",
        t.above_cells,
        within_height_limit(t.above_cells),
        "|v| <= 1024",
    )?;
    Ok(())
}

/// The thermal erosion stage: each field's range, first failure first.
fn check_thermal_erosion(c: &Checker, t: &ThermalStage) -> Result<(), RecipeError> {
    c.range(
        "talus_deg",
        t.talus_deg,
        t.talus_deg > 0.0 && t.talus_deg <= 89.0,
        "above 0, at most 89",
    )?;
    c.range(
        "iterations",
        f64::from(t.iterations),
        (1..=MAX_ITERATIONS).contains(&t.iterations),
        "1 to 500",
    )?;
    c.range(
        "rate",
        t.rate,
        t.rate > 0.0 && t.rate <= 1.0,
        "above 0, at most 1",
    )?;
    Ok(())
}

/// The hydraulic erosion stage: each field's range and its hardness
/// materials, first failure first.
fn check_hydraulic_erosion(c: &Checker, h: &HydraulicStage) -> Result<(), RecipeError> {
    c.range(
        "droplets_per_sample",
        h.droplets_per_sample,
        h.droplets_per_sample > 0.0 && h.droplets_per_sample <= MAX_DROPLETS_PER_SAMPLE,
        "above 0, at most 8",
    )?;
    c.range(
        "max_steps",
        f64::from(h.max_steps),
        (1..=512).contains(&h.max_steps),
        "1 to 512",
    )?;
    c.range(
        "capacity",
        h.capacity,
        h.capacity > 0.0 && h.capacity <= 64.0,
        "above 0, at most 64",
    )?;
    let unit = |v: f64| v > 0.0 && v <= 1.0;
    c.range("erosion", h.erosion, unit(h.erosion), "above 0, at most 1")?;
    c.range(
        "deposition",
        h.deposition,
        unit(h.deposition),
        "above 0, at most 1",
    )?;
    let fraction = |v: f64| (0.0..1.0).contains(&v);
    c.range(
        "evaporation",
        h.evaporation,
        fraction(h.evaporation),
        "0 to below 1",
    )?;
    c.range("inertia", h.inertia, fraction(h.inertia), "0 to below 1")?;
    for m in &h.hardness {
        c.material(&m.material, false)?;
        c.range("hardness", m.hardness, fraction(m.hardness), "0 to below 1")?;
    }
    Ok(())
}

/// The slope cap stage: each field's range, first failure first.
fn check_slope_cap(c: &Checker, s: &SlopeCapStage) -> Result<(), RecipeError> {
    c.range(
        "grade_deg",
        s.grade_deg,
        s.grade_deg > 0.0 && s.grade_deg <= 89.0,
        "above 0, at most 89",
    )?;
    Ok(())
}

/// The sea level stage: each field's range, first failure first.
fn check_sea(c: &Checker, s: &SeaStage) -> Result<(), RecipeError> {
    c.range(
        "level_cells",
        s.level_cells,
        (1.0..=HEIGHT_LIMIT_CELLS).contains(&s.level_cells),
        "1 to 1024",
    )?;
    Ok(())
}

/// The rivers stage: each field's range, first failure first.
fn check_rivers(c: &Checker, r: &RiversStage) -> Result<(), RecipeError> {
    c.range(
        "min_catchment_cells",
        r.min_catchment_cells,
        r.min_catchment_cells >= 1.0 && r.min_catchment_cells <= 1e13,
        "1 to 1e13",
    )?;
    c.range(
        "min_width_cells",
        r.min_width_cells,
        (1.0..=64.0).contains(&r.min_width_cells),
        "1 to 64",
    )?;
    c.range(
        "max_width_cells",
        r.max_width_cells,
        r.max_width_cells >= r.min_width_cells && r.max_width_cells <= 64.0,
        "min_width_cells to 64",
    )?;
    c.range(
        "depth_cells",
        r.depth_cells,
        r.depth_cells > 0.0 && r.depth_cells <= 32.0,
        "above 0, at most 32",
    )?;
    c.range(
        "max_breach_cells",
        r.max_breach_cells,
        (0.0..=HEIGHT_LIMIT_CELLS).contains(&r.max_breach_cells),
        "0 to 1024",
    )?;
    Ok(())
}

/// The surface materials stage: its material names and each rule's bounds,
/// first failure first.
fn check_materials(c: &Checker, m: &MaterialsStage) -> Result<(), RecipeError> {
    c.material(&m.fallback, true)?;
    for rule in &m.rules {
        c.material(&rule.material, true)?;
        if let Some(soil) = &rule.soil {
            c.material(soil, false)?;
        }
        let optional = |field, v: Option<f64>| match v {
            Some(v) => c.range(field, v, v.abs() <= 1e6, "a finite number"),
            None => Ok(()),
        };
        optional("min_height_cells", rule.min_height_cells)?;
        optional("max_height_cells", rule.max_height_cells)?;
        c.ordered(
            ("min_height_cells", rule.min_height_cells),
            ("max_height_cells", rule.max_height_cells),
        )?;
        optional("min_slope_deg", rule.min_slope_deg)?;
        optional("max_slope_deg", rule.max_slope_deg)?;
        c.ordered(
            ("min_slope_deg", rule.min_slope_deg),
            ("max_slope_deg", rule.max_slope_deg),
        )?;
        optional("min_wetness", rule.min_wetness)?;
        optional("min_deposit_cells", rule.min_deposit_cells)?;
        optional("min_talus_cells", rule.min_talus_cells)?;
        c.range(
            "dither",
            rule.dither,
            (0.0..=64.0).contains(&rule.dither),
            "0 to 64",
        )?;
    }
    Ok(())
}

/// The caves and overhangs stage: each field's range, first failure first.
fn check_caves(c: &Checker, k: &CavesStage) -> Result<(), RecipeError> {
    c.range(
        "wavelength_cells",
        k.wavelength_cells,
        (4.0..=4096.0).contains(&k.wavelength_cells),
        "4 to 4096",
    )?;
    c.range(
        "radius",
        k.radius,
        k.radius > 0.0 && k.radius <= 0.5,
        "above 0, at most 0.5",
    )?;
    c.range(
        "min_depth_cells",
        k.min_depth_cells,
        (0.0..=HEIGHT_LIMIT_CELLS).contains(&k.min_depth_cells),
        "0 to 1024",
    )?;
    c.range(
        "max_depth_cells",
        k.max_depth_cells,
        k.max_depth_cells > k.min_depth_cells && k.max_depth_cells <= HEIGHT_LIMIT_CELLS,
        "above min_depth_cells, at most 1024",
    )?;
    c.range(
        "overhang_slope_deg",
        k.overhang_slope_deg,
        (1.0..=90.0).contains(&k.overhang_slope_deg),
        "1 to 90",
    )?;
    c.range(
        "overhang_depth_cells",
        k.overhang_depth_cells,
        (0.0..=12.0).contains(&k.overhang_depth_cells),
        "0 to 12",
    )?;
    c.range(
        "bank_undercut_cells",
        k.bank_undercut_cells,
        (0.0..=4.0).contains(&k.bank_undercut_cells),
        "0 to 4",
    )?;
    Ok(())
}
