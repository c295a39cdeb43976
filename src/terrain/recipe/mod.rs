//! Generator recipes: JSON stages ([`stages`], checked by `stage_checks`)
//! cooked on a bounded 2D plan ([`plan`], [`cook`]): relief, falloff and terraces, thermal and
//! hydraulic erosion, the slope cap, sea and rivers ([`hydrology`]),
//! material rules (naming the world's materials: [`recipe_materials`]), and the recipe terrain that builds any chunk column from
//! the cooked plan ([`terrain_source`]). Same recipe, seed and size give the
//! same cells on every machine and thread count.

pub mod cook;
pub mod hydraulic_erosion;
pub mod hydrology;
pub mod material_rules;
pub mod plan;
pub mod preview;
pub mod recipe_materials;
pub mod relief;
pub mod slope_cap;
mod stage_checks;
pub mod stages;
pub mod terrain_source;
pub mod thermal_erosion;
