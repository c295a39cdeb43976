//! Generator recipes: a small ordered list of named stages, kept as JSON
//! text an artist can read and edit (`assets/recipes/*.json`), cooked into
//! a world by [`crate::terrain::recipe::cook`].
//!
//! # Why a recipe
//! One fixed noise landscape gives every world the same character. A recipe
//! states the land as steps a terrain artist already thinks in (relief,
//! erosion, water, materials, caves), so alpine ranges, coasts, mesas and
//! canyons come from the same engine with different text. The same recipe,
//! seed and size always cook the same cells (spec §11: generation is a pure
//! function), so a recipe file is a complete description of a world.
//!
//! # Format
//! ```json
//! { "name": "Alpine", "description": "…",
//!   "stages": [ { "stage": "relief", "kind": "ridged", … }, … ] }
//! ```
//! Stages run in the order given. Every number is checked by
//! [`Recipe::validate`] before anything is cooked: a NaN, a negative
//! wavelength or an unknown field is an error naming the stage and field,
//! never a silent clamp.

use serde::{Deserialize, Serialize};

use crate::terrain::materials::MaterialLibrary;
use crate::terrain::storage::cell::Material;

/// Most stages a recipe may hold.
pub const MAX_STAGES: usize = 32;

/// Most droplets a hydraulic stage may simulate per plan sample.
pub const MAX_DROPLETS_PER_SAMPLE: f64 = 8.0;

/// Most iterations an iterative stage (thermal erosion) may run.
pub const MAX_ITERATIONS: u32 = 500;

/// The recipes shipped in `assets/recipes/`, built into the binary for the
/// New dialog: `(name, JSON text)`, the name as the recipe's own `"name"`.
pub const SHIPPED_RECIPES: [(&str, &str); 5] = [
    (
        "Alpine",
        include_str!("../../../assets/recipes/alpine.json"),
    ),
    (
        "Coast with rivers",
        include_str!("../../../assets/recipes/coast_rivers.json"),
    ),
    (
        "Desert mesas",
        include_str!("../../../assets/recipes/desert_mesas.json"),
    ),
    (
        "Islands",
        include_str!("../../../assets/recipes/islands.json"),
    ),
    (
        "Canyon with caves",
        include_str!("../../../assets/recipes/canyon_caves.json"),
    ),
];

/// A generator recipe: its name and its ordered stages.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    /// Shown in the New dialog, e.g. `"Alpine"` (required: a recipe without
    /// one is refused by [`Recipe::validate`], with its other mistakes).
    #[serde(default)]
    pub name: String,
    /// One line on what the recipe makes.
    #[serde(default)]
    pub description: String,
    /// The stages, run in order.
    pub stages: Vec<Stage>,
}

/// One stage of a recipe (the `"stage"` field names it).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum Stage {
    /// Adds noise relief to the plan's heights.
    Relief(ReliefStage),
    /// Lowers the land toward the map rim (islands, a coast).
    Falloff(FalloffStage),
    /// Flattens heights into steps (mesas, benches).
    Terrace(TerraceStage),
    /// Thermal erosion: slopes above the talus angle slump.
    ThermalErosion(ThermalStage),
    /// Hydraulic erosion by simulated droplets.
    HydraulicErosion(HydraulicStage),
    /// The Lipschitz slope cap: lowers land so no grade exceeds the cap.
    SlopeCap(SlopeCapStage),
    /// Sea level: water connected to the map rim below it.
    Sea(SeaStage),
    /// Rivers, lakes and the breach that drains every basin.
    Rivers(RiversStage),
    /// Surface materials by height, slope, wetness and deposition.
    Materials(MaterialsStage),
    /// Caves and overhangs from 3D noise (cells, not the plan).
    Caves(CavesStage),
}

/// Shape of a relief stage's noise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReliefKind {
    /// Fractal Brownian motion: rolling hills and plains.
    Fbm,
    /// Ridged multifractal: sharp mountain crests.
    Ridged,
    /// Domain-warped fBm: swirling, folded relief.
    Warped,
}

/// [`Stage::Relief`]: adds `base_cells + amplitude_cells · n` where `n ∈
/// [0, 1]` is the noise at wavelength `wavelength_cells`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ReliefStage {
    /// Noise shape.
    pub kind: ReliefKind,
    /// Height added everywhere, cells (may be negative).
    #[serde(default)]
    pub base_cells: f64,
    /// Height of the noise's full range, cells; negative values cut the
    /// noise's shape into the land (ridged noise then carves canyons).
    pub amplitude_cells: f64,
    /// Wavelength of the largest features, cells (`> 0`).
    pub wavelength_cells: f64,
    /// Octaves of detail, 1..=10 (default 6).
    #[serde(default = "default_octaves")]
    pub octaves: u32,
    /// Ruggedness: each octave's amplitude relative to the previous, in
    /// `[0.2, 0.8]` (default 0.5).
    #[serde(default = "default_ruggedness")]
    pub ruggedness: f64,
    /// Exponent applied to `n` (1 keeps it; 2 flattens lowlands and sharpens
    /// peaks), in `[0.25, 4]`.
    #[serde(default = "one")]
    pub sharpness: f64,
    /// Domain warp distance of [`ReliefKind::Warped`], cells (`>= 0`).
    #[serde(default)]
    pub warp_cells: f64,
}

/// Shape of a [`Stage::Falloff`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FalloffShape {
    /// Radial: land in the middle, sea all round.
    Island,
    /// Toward the `+z` edge only: a coastline across the map.
    Coast,
}

/// [`Stage::Falloff`]: within `edge_fraction` of the world's width from
/// the rim (or the `+z` edge), heights are lowered smoothly by up to
/// `depth_cells`. The band scales with the world, so an island recipe
/// makes an island at any size.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FalloffStage {
    /// Island or coast.
    pub shape: FalloffShape,
    /// Width of the falloff band as a fraction of the world's width, `(0, 1]`.
    pub edge_fraction: f64,
    /// Lowering at the rim, cells (`>= 0`).
    pub depth_cells: f64,
}

/// [`Stage::Terrace`]: heights snap toward multiples of `step_cells`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TerraceStage {
    /// Step height, cells (`>= 1`).
    pub step_cells: f64,
    /// 0 keeps the land, 1 makes flat benches with sheer risers.
    pub strength: f64,
    /// Only land above this height is terraced, cells.
    #[serde(default)]
    pub above_cells: f64,
}

/// [`Stage::ThermalErosion`].
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ThermalStage {
    /// Talus angle, degrees in `(0, 89]`: steeper slopes slump.
    pub talus_deg: f64,
    /// Passes, 1..=[`MAX_ITERATIONS`].
    pub iterations: u32,
    /// Fraction of the excess moved per pass, `(0, 1]` (default 0.5).
    #[serde(default = "half")]
    pub rate: f64,
}

/// [`Stage::HydraulicErosion`]: droplet erosion (Beyer 2015, "Implementation
/// of a method for hydraulic erosion").
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HydraulicStage {
    /// Droplets per plan sample, `(0, 8]`.
    pub droplets_per_sample: f64,
    /// Most steps a droplet takes, 1..=512 (default 64).
    #[serde(default = "default_steps")]
    pub max_steps: u32,
    /// Sediment capacity factor, `(0, 64]` (default 4).
    #[serde(default = "four")]
    pub capacity: f64,
    /// Fraction of the capacity deficit eroded per step, `(0, 1]` (default 0.3).
    #[serde(default = "point_three")]
    pub erosion: f64,
    /// Fraction of the excess sediment deposited per step, `(0, 1]` (default 0.3).
    #[serde(default = "point_three")]
    pub deposition: f64,
    /// Water lost per step, `[0, 1)` (default 0.02).
    #[serde(default = "point_zero_two")]
    pub evaporation: f64,
    /// Direction kept from the previous step, `[0, 1)` (default 0.1).
    #[serde(default = "point_one")]
    pub inertia: f64,
    /// Resistance to erosion of each rock stratum's material, `[0, 1)`: the
    /// rock under a droplet is the strata layer at that height, so hard
    /// layers stand as ledges. Materials not named have hardness 0.
    #[serde(default)]
    pub hardness: Vec<MaterialHardness>,
}

/// One material's resistance in [`HydraulicStage::hardness`].
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialHardness {
    /// Material name, e.g. `"rock"`.
    pub material: String,
    /// `[0, 1)`: the fraction of erosion it resists.
    pub hardness: f64,
}

/// [`Stage::SlopeCap`]: the Lipschitz lower envelope of the heights
/// (`h(p) = min_q h(q) + tan(grade)·d(p, q)`), erosion only.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SlopeCapStage {
    /// Steepest grade between neighbouring columns, degrees in `(0, 89]`.
    pub grade_deg: f64,
}

/// [`Stage::Sea`].
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SeaStage {
    /// Sea level, cells (`>= 1`).
    pub level_cells: f64,
}

/// [`Stage::Rivers`]: drainage by priority flood (Barnes et al. 2014), the
/// breach of every basin shallower than `max_breach_cells` along its
/// shallowest saddle (Lindsay 2016), lakes in the rest, and river channels
/// where the catchment is large enough.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RiversStage {
    /// Catchment area that starts a river, cells² (`>= 1`).
    pub min_catchment_cells: f64,
    /// Channel width at the source, cells (`>= 1`).
    pub min_width_cells: f64,
    /// Channel width at the largest catchment, cells (`>= min_width_cells`,
    /// at most 64).
    pub max_width_cells: f64,
    /// Channel depth below the water surface, cells (`> 0`, at most 32).
    pub depth_cells: f64,
    /// Deepest cut the breach may make through a saddle, cells (`>= 0`);
    /// deeper basins become lakes.
    pub max_breach_cells: f64,
}

/// [`Stage::Materials`]: the first matching rule gives a column its surface.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialsStage {
    /// Rules in priority order.
    pub rules: Vec<MaterialRule>,
    /// Material where no rule matches (default `"grass"`).
    #[serde(default = "default_fallback")]
    pub fallback: String,
}

/// One material rule: every bound given must hold. Bounds are dithered per
/// column by up to `dither` of their unit (cells or degrees) so transitions
/// interleave instead of drawing contour lines.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialRule {
    /// Surface material, or `"strata"` for exposed layered rock.
    pub material: String,
    /// Material of the soil rows under the surface (default: the surface's).
    #[serde(default)]
    pub soil: Option<String>,
    /// Lowest surface height, cells.
    #[serde(default)]
    pub min_height_cells: Option<f64>,
    /// Highest surface height, cells.
    #[serde(default)]
    pub max_height_cells: Option<f64>,
    /// Gentlest slope, degrees.
    #[serde(default)]
    pub min_slope_deg: Option<f64>,
    /// Steepest slope, degrees.
    #[serde(default)]
    pub max_slope_deg: Option<f64>,
    /// Least wetness in `[0, 1]` (log catchment; rivers are 1).
    #[serde(default)]
    pub min_wetness: Option<f64>,
    /// Least sediment deposited by hydraulic erosion, cells.
    #[serde(default)]
    pub min_deposit_cells: Option<f64>,
    /// Least scree deposited by thermal erosion, cells.
    #[serde(default)]
    pub min_talus_cells: Option<f64>,
    /// `true`: only under water (lake and river beds, the sea floor);
    /// `false`: only dry land.
    #[serde(default)]
    pub underwater: Option<bool>,
    /// Dither amplitude of the bounds, their units (default 2).
    #[serde(default = "two")]
    pub dither: f64,
}

/// [`Stage::Caves`]: tunnels where two 3D noise fields both lie near zero
/// ("spaghetti" caves) between `min_depth_cells` and `max_depth_cells`
/// under the surface, and undercuts on slopes steeper than
/// `overhang_slope_deg`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CavesStage {
    /// Wavelength of the tunnel noise, cells (`>= 4`).
    pub wavelength_cells: f64,
    /// Tunnel radius in noise units, `(0, 0.5]`: larger is wider.
    pub radius: f64,
    /// Shallowest tunnel, cells below the surface (`>= 0`).
    pub min_depth_cells: f64,
    /// Deepest tunnel, cells below the surface (`> min_depth_cells`).
    pub max_depth_cells: f64,
    /// Slopes steeper than this get undercuts, degrees (default 60; 90 for none).
    #[serde(default = "sixty")]
    pub overhang_slope_deg: f64,
    /// Depth of the undercuts into the slope, cells (`[0, 12]`, default 4).
    #[serde(default = "four")]
    pub overhang_depth_cells: f64,
    /// Height of the notch cut into river banks at the waterline, cells
    /// (`[0, 4]`, default 0: none): banks rising at least a cell over a
    /// river lose their cells at the water's level under a roof of at
    /// least one cell, where the pocket noise allows (undercut banks).
    #[serde(default)]
    pub bank_undercut_cells: f64,
}

fn default_octaves() -> u32 {
    6
}
fn default_ruggedness() -> f64 {
    0.5
}
fn one() -> f64 {
    1.0
}
fn two() -> f64 {
    2.0
}
fn four() -> f64 {
    4.0
}
fn half() -> f64 {
    0.5
}
fn sixty() -> f64 {
    60.0
}
fn point_three() -> f64 {
    0.3
}
fn point_one() -> f64 {
    0.1
}
fn point_zero_two() -> f64 {
    0.02
}
fn default_steps() -> u32 {
    64
}
fn default_fallback() -> String {
    "grass".to_owned()
}

/// Why a recipe was refused. Nothing is cooked for a refused recipe.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum RecipeError {
    /// The file could not be read.
    #[error("cannot read recipe {path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The system's message.
        message: String,
    },
    /// The text is not a recipe (bad JSON, an unknown stage or field).
    #[error("recipe is not valid: {0}")]
    Parse(String),
    /// The recipe has no `"name"`.
    #[error("a recipe needs a \"name\"")]
    NoName,
    /// A stage stands where it cannot work: a second one of a kind that may
    /// come once, or one that reads what a later stage makes.
    #[error("stage {index} ({stage}): {problem}")]
    Order {
        /// 0-based stage index.
        index: usize,
        /// The stage's name.
        stage: &'static str,
        /// What is wrong, in words.
        problem: String,
    },
    /// Two bounds of one field contradict each other.
    #[error(
        "stage {index} ({stage}): {field} {low} is above {high_field} {high}; the rule can never \
         match"
    )]
    Contradiction {
        /// 0-based stage index.
        index: usize,
        /// The stage's name.
        stage: &'static str,
        /// The lower bound's field.
        field: &'static str,
        /// Its value.
        low: f64,
        /// The upper bound's field.
        high_field: &'static str,
        /// Its value.
        high: f64,
    },
    /// A name table stored with the recipe (in a world file) that no
    /// resolution could have made.
    #[error("the recipe's stored material {name:?} {problem}")]
    BadNameTable {
        /// The entry's name.
        name: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// Several of the above, in the order found.
    #[error("{}", join_problems(.0))]
    Several(Vec<RecipeError>),
    /// Any of the above in the recipe file at `path`.
    #[error("recipe {path}: {source}")]
    InFile {
        /// The file.
        path: String,
        /// What is wrong.
        source: Box<RecipeError>,
    },
    /// No stage, or more than [`MAX_STAGES`].
    #[error("a recipe needs 1 to {MAX_STAGES} stages, this one has {0}")]
    StageCount(usize),
    /// The recipe has no relief stage (it would be flat nothing).
    #[error("a recipe needs at least one relief stage")]
    NoRelief,
    /// A number is out of its range or not finite.
    #[error(
        "stage {index} ({stage}): {field} = {} is not allowed; expected {expected}",
        crate::terrain::message_numbers::short_number(*.value)
    )]
    Invalid {
        /// 0-based stage index.
        index: usize,
        /// The stage's name.
        stage: &'static str,
        /// The field.
        field: &'static str,
        /// The value given.
        value: f64,
        /// The allowed range, in words.
        expected: &'static str,
    },
    /// A material name is neither a built-in nor a solid material of the
    /// world's library.
    #[error(
        "stage {index} ({stage}): unknown material {name:?} (recipes name the built-in materials grass, rock, dirt, sand, snow, mud, slate, gravel, limestone, or a material the world's library adds, by its name; \"strata\", layered rock, only as a rule's material or the fallback)"
    )]
    UnknownMaterial {
        /// 0-based stage index.
        index: usize,
        /// The stage's name.
        stage: &'static str,
        /// The name given.
        name: String,
    },
}

/// `problems` as one message: `"2 mistakes: …; …"`.
fn join_problems(problems: &[RecipeError]) -> String {
    let parts: Vec<String> = problems.iter().map(ToString::to_string).collect();
    format!("{} mistakes: {}", parts.len(), parts.join("; "))
}

impl Stage {
    /// The stage's name as written in the recipe's `"stage"` field.
    pub fn name(&self) -> &'static str {
        match self {
            Stage::Relief(_) => "relief",
            Stage::Falloff(_) => "falloff",
            Stage::Terrace(_) => "terrace",
            Stage::ThermalErosion(_) => "thermal_erosion",
            Stage::HydraulicErosion(_) => "hydraulic_erosion",
            Stage::SlopeCap(_) => "slope_cap",
            Stage::Sea(_) => "sea",
            Stage::Rivers(_) => "rivers",
            Stage::Materials(_) => "materials",
            Stage::Caves(_) => "caves",
        }
    }
}

/// True for the recipe word for exposed layered rock, `"strata"` (any
/// case). It is a keyword, never a library material's name: a rule's
/// `material` or the `fallback` may say it, nothing else.
pub fn is_strata(name: &str) -> bool {
    name.trim().eq_ignore_ascii_case("strata")
}

/// The built-in solid material named `name`.
pub(crate) fn solid_material(name: &str) -> Option<Material> {
    Material::from_name(name).filter(|m| m.is_solid())
}

impl Recipe {
    /// Parses recipe JSON and validates it.
    ///
    /// # Errors
    /// [`RecipeError::Parse`] for text that is not a recipe; the errors of
    /// [`Recipe::validate`].
    pub fn from_json(text: &str) -> Result<Recipe, RecipeError> {
        Recipe::from_json_for(text, &MaterialLibrary::default())
    }

    /// Parses recipe JSON and validates it, its material names against
    /// `library`.
    ///
    /// # Errors
    /// [`RecipeError::Parse`] for text that is not a recipe; the errors of
    /// [`Recipe::validate_for`].
    pub fn from_json_for(text: &str, library: &MaterialLibrary) -> Result<Recipe, RecipeError> {
        let recipe: Recipe =
            serde_json::from_str(text).map_err(|e| RecipeError::Parse(e.to_string()))?;
        recipe.validate_for(library)?;
        Ok(recipe)
    }

    /// Reads and validates the recipe file at `path`.
    ///
    /// # Errors
    /// [`RecipeError::Io`] when it cannot be read, else the errors of
    /// [`Recipe::from_json`] in a [`RecipeError::InFile`] naming the file.
    pub fn load(path: &std::path::Path) -> Result<Recipe, RecipeError> {
        Recipe::load_for(path, &MaterialLibrary::default())
    }

    /// Reads the recipe file at `path` and validates it, its material names
    /// against `library`.
    ///
    /// # Errors
    /// As [`Recipe::load`], with the errors of [`Recipe::from_json_for`].
    pub fn load_for(
        path: &std::path::Path,
        library: &MaterialLibrary,
    ) -> Result<Recipe, RecipeError> {
        let text = std::fs::read_to_string(path).map_err(|e| RecipeError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Recipe::from_json_for(&text, library).map_err(|e| RecipeError::InFile {
            path: path.display().to_string(),
            source: Box::new(e),
        })
    }

    /// The recipe's caves stage (the first, if it has several), if any.
    pub fn caves(&self) -> Option<&CavesStage> {
        self.stages.iter().find_map(|s| match s {
            Stage::Caves(c) => Some(c),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"{ "name": "t", "stages": [
        { "stage": "relief", "kind": "fbm", "amplitude_cells": 40, "wavelength_cells": 200 }
    ] }"#;

    #[test]
    fn shipped_recipes_parse_under_their_listed_names() {
        for (name, text) in SHIPPED_RECIPES {
            assert_eq!(Recipe::from_json(text).unwrap().name, name);
        }
    }

    #[test]
    fn a_small_recipe_parses_with_defaults() {
        let r = Recipe::from_json(SMALL).unwrap();
        let Stage::Relief(relief) = &r.stages[0] else {
            panic!("not relief")
        };
        assert_eq!(relief.octaves, 6);
        assert_eq!(relief.ruggedness, 0.5);
    }

    #[test]
    fn bad_recipes_are_refused_with_the_stage_and_field() {
        let bad = SMALL.replace("200", "-5");
        assert!(matches!(
            Recipe::from_json(&bad),
            Err(RecipeError::Invalid {
                index: 0,
                field: "wavelength_cells",
                ..
            })
        ));
        let unknown_field = SMALL.replace("\"kind\"", "\"knd\": 1, \"kind\"");
        assert!(matches!(
            Recipe::from_json(&unknown_field),
            Err(RecipeError::Parse(_))
        ));
        let unknown_stage = r#"{ "name": "t", "stages": [ { "stage": "volcano" } ] }"#;
        assert!(matches!(
            Recipe::from_json(unknown_stage),
            Err(RecipeError::Parse(_))
        ));
        let no_relief = r#"{ "name": "t", "stages": [ { "stage": "sea", "level_cells": 10 } ] }"#;
        assert_eq!(Recipe::from_json(no_relief), Err(RecipeError::NoRelief));
        let material = SMALL.replace(
            "] }",
            r#", { "stage": "materials", "rules": [ { "material": "lava" } ] } ] }"#,
        );
        assert!(matches!(
            Recipe::from_json(&material),
            Err(RecipeError::UnknownMaterial { index: 1, .. })
        ));
    }
}
