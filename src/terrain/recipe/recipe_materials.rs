//! The material names of a recipe resolved against a world's material
//! library, so a recipe's rules can name the studio's own materials
//! (`"Moss"`) beside the built-ins (`"grass"`).
//!
//! A recipe stays text that names materials; which id a name means is the
//! world's business. [`RecipeMaterials`] holds only the names that mean
//! something other than the built-in of that name (an added material, or a
//! built-in the world renamed), with the id they resolved to when the
//! world was made. It is kept with the recipe in the world document, so a
//! later re-cook (a seed change) makes the same cells even after the
//! material is renamed; removing the material remaps its entries to the
//! replacement ([`RecipeMaterials::with_material_replaced`]). A recipe that
//! names only built-ins resolves to the empty table, which is what a
//! streaming world (no library) and an older world file use.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::terrain::materials::MaterialLibrary;
use crate::terrain::recipe::stages::{Recipe, RecipeError, Stage, is_strata, solid_material};
use crate::terrain::storage::cell::Material;

/// The material a recipe name resolved to in the world's library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResolvedMaterial {
    /// The material's id (a solid: neither air nor water).
    pub id: u8,
    /// Its flat colour (sRGB) when it was resolved, for the recipe's stage
    /// pictures.
    pub preview_srgb: [u8; 3],
}

/// A recipe's library names: the names (as the recipe writes them) that do
/// not mean the built-in of that name, with the material each resolved
/// to. Names it lacks are built-ins ([`solid_material`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RecipeMaterials {
    names: BTreeMap<String, ResolvedMaterial>,
}

/// Every material name `recipe` writes, `"strata"` left out: the materials
/// stage's fallback, rules and soils, then hydraulic hardness entries.
pub(crate) fn recipe_material_names(recipe: &Recipe) -> impl Iterator<Item = &str> {
    recipe
        .stages
        .iter()
        .flat_map(|stage| -> Vec<&str> {
            match stage {
                Stage::Materials(m) => std::iter::once(m.fallback.as_str())
                    .chain(m.rules.iter().flat_map(|r| {
                        std::iter::once(r.material.as_str()).chain(r.soil.as_deref())
                    }))
                    .collect(),
                Stage::HydraulicErosion(h) => {
                    h.hardness.iter().map(|m| m.material.as_str()).collect()
                }
                _ => Vec::new(),
            }
        })
        .filter(|name| !is_strata(name))
}

/// The solid material `library` calls `name` (case-insensitive; a built-in
/// also by its built-in name unless another material took it), as scripts
/// resolve names.
pub fn library_solid(library: &MaterialLibrary, name: &str) -> Option<Material> {
    library.material_named(name).filter(|m| m.is_solid())
}

impl RecipeMaterials {
    /// Resolves every material name of `recipe` in `library`, keeping those
    /// that do not mean the built-in of that name.
    ///
    /// # Errors
    /// The errors of [`Recipe::validate_for`] (an unknown name among them).
    pub fn resolve(recipe: &Recipe, library: &MaterialLibrary) -> Result<Self, RecipeError> {
        recipe.validate_for(library)?;
        let mut names = BTreeMap::new();
        for name in recipe_material_names(recipe) {
            let Some(material) = library_solid(library, name) else {
                continue; // validate_for refused unknown names above
            };
            if solid_material(name) != Some(material) {
                names.insert(
                    name.to_owned(),
                    ResolvedMaterial {
                        id: material.0,
                        preview_srgb: library.flat_colour_srgb(material),
                    },
                );
            }
        }
        Ok(RecipeMaterials { names })
    }

    /// True when every name means its built-in.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The names and what they resolved to, in name order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, ResolvedMaterial)> {
        self.names.iter().map(|(n, r)| (n.as_str(), *r))
    }

    /// The solid material `name` means: its entry, else the built-in of
    /// that name. `None` for a name neither knows.
    pub fn material(&self, name: &str) -> Option<Material> {
        self.names
            .get(name)
            .map(|r| Material(r.id))
            .or_else(|| solid_material(name))
    }

    /// The colour `material`'s samples draw in the stage pictures (sRGB):
    /// an entry's, else the built-in colour.
    pub fn preview_srgb(&self, material: Material) -> [u8; 3] {
        self.names
            .values()
            .find(|r| r.id == material.0)
            .map_or(material.base_color_srgb(), |r| r.preview_srgb)
    }

    /// Checks a table read back with its recipe (a world file): every entry
    /// is a name `recipe` writes and resolves to a solid material, and the
    /// recipe passes [`Recipe::validate_resolved`] with it.
    ///
    /// # Errors
    /// [`RecipeError::BadNameTable`] for an entry that is not solid or not
    /// in the recipe; the errors of [`Recipe::validate_resolved`].
    pub fn check(&self, recipe: &Recipe) -> Result<(), RecipeError> {
        let written: Vec<&str> = recipe_material_names(recipe).collect();
        for (name, r) in &self.names {
            let problem = if !Material(r.id).is_solid() {
                "means air or water, not a solid material"
            } else if !written.contains(&name.as_str()) {
                "is not a name the recipe writes"
            } else {
                continue;
            };
            return Err(RecipeError::BadNameTable {
                name: name.clone(),
                problem,
            });
        }
        recipe.validate_resolved(self)
    }

    /// This table with every name that meant `from` meaning `to` (a material
    /// removed with a replacement), `to`'s preview colour from `library`.
    /// `None` when no entry meant `from`.
    pub fn with_material_replaced(
        &self,
        from: Material,
        to: Material,
        library: &MaterialLibrary,
    ) -> Option<RecipeMaterials> {
        if !self.names.values().any(|r| r.id == from.0) {
            return None;
        }
        let names = self
            .names
            .iter()
            .map(|(name, r)| {
                let r = if r.id == from.0 {
                    ResolvedMaterial {
                        id: to.0,
                        preview_srgb: library.flat_colour_srgb(to),
                    }
                } else {
                    *r
                };
                (name.clone(), r)
            })
            .collect();
        Some(RecipeMaterials { names })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::materials::MaterialTexture;

    const MOSS_RECIPE: &str = r#"{ "name": "t", "stages": [
        { "stage": "relief", "kind": "fbm", "wavelength_cells": 64, "amplitude_cells": 8, "base_cells": 40 },
        { "stage": "materials", "fallback": "Moss",
          "rules": [ { "material": "grass", "soil": "moss", "max_height_cells": 30 },
                     { "material": "strata", "min_slope_deg": 40 } ] } ] }"#;

    fn library_with_moss() -> (MaterialLibrary, Material) {
        let mut library = MaterialLibrary::default();
        library.set_texture_side_px(256).unwrap();
        let texels = (0..256 * 256).flat_map(|_| [60, 120, 40, 255]).collect();
        let moss = library
            .add_material("Moss", MaterialTexture::new(256, texels).unwrap(), None)
            .expect("a free id");
        (library, moss)
    }

    #[test]
    fn a_library_name_resolves_and_built_ins_stay_out_of_the_table() {
        let (library, moss) = library_with_moss();
        let recipe: Recipe = serde_json::from_str(MOSS_RECIPE).unwrap();
        assert!(matches!(
            recipe.validate(),
            Err(RecipeError::UnknownMaterial { ref name, .. }) if name == "Moss"
        ));
        let table = RecipeMaterials::resolve(&recipe, &library).unwrap();
        let entries: Vec<(&str, u8)> = table.entries().map(|(n, r)| (n, r.id)).collect();
        assert_eq!(entries, vec![("Moss", moss.0), ("moss", moss.0)]);
        assert_eq!(table.material("grass"), Some(Material::GRASS));
        assert_eq!(table.material("Moss"), Some(moss));
        assert_eq!(table.material("Clover"), None);
        assert_eq!(table.check(&recipe), Ok(()));
        assert!(RecipeMaterials::default().check(&recipe).is_err());
    }

    #[test]
    fn strata_is_the_layered_rock_keyword_even_beside_a_library_strata() {
        // A library material named "Strata" once passed the check as a
        // soil and then cooked as dirt, and the saved world did not reopen.
        let mut library = MaterialLibrary::default();
        library.set_texture_side_px(256).unwrap();
        let texels = (0..256 * 256).flat_map(|_| [200, 80, 160, 255]).collect();
        library
            .add_material("Strata", MaterialTexture::new(256, texels).unwrap(), None)
            .unwrap();
        let soil = MOSS_RECIPE
            .replace("\"Moss\"", "\"grass\"")
            .replace("\"moss\"", "\"Strata\"");
        let recipe: Recipe = serde_json::from_str(&soil).unwrap();
        assert!(matches!(
            recipe.validate_for(&library),
            Err(RecipeError::UnknownMaterial { ref name, .. }) if name == "Strata"
        ));
        // As a rule's material, any case means layered rock: no entry.
        let rule = MOSS_RECIPE
            .replace("\"Moss\"", "\"grass\"")
            .replace("\"soil\": \"moss\", ", "")
            .replace("\"material\": \"strata\"", "\"material\": \"STRATA\"");
        let recipe: Recipe = serde_json::from_str(&rule).unwrap();
        let table = RecipeMaterials::resolve(&recipe, &library).unwrap();
        assert!(table.is_empty());
        assert_eq!(table.check(&recipe), Ok(()));
    }

    #[test]
    fn a_renamed_built_in_is_an_entry() {
        let mut library = MaterialLibrary::default();
        library.rename(Material::GRASS, "Meadow").unwrap();
        let text = MOSS_RECIPE
            .replace("\"Moss\"", "\"meadow\"")
            .replace("\"moss\"", "\"rock\"");
        let recipe: Recipe = serde_json::from_str(&text).unwrap();
        let table = RecipeMaterials::resolve(&recipe, &library).unwrap();
        let entries: Vec<(&str, u8)> = table.entries().map(|(n, r)| (n, r.id)).collect();
        assert_eq!(entries, vec![("meadow", Material::GRASS.0)]);
    }

    #[test]
    fn replacing_a_material_remaps_only_its_entries() {
        let (mut library, moss) = library_with_moss();
        let recipe: Recipe = serde_json::from_str(MOSS_RECIPE).unwrap();
        let table = RecipeMaterials::resolve(&recipe, &library).unwrap();
        library.remove_material(moss).unwrap();
        let after = table
            .with_material_replaced(moss, Material::SAND, &library)
            .unwrap();
        assert_eq!(after.material("Moss"), Some(Material::SAND));
        assert_eq!(
            after.preview_srgb(Material::SAND),
            library.flat_colour_srgb(Material::SAND)
        );
        assert!(
            after
                .with_material_replaced(moss, Material::ROCK, &library)
                .is_none()
        );
    }

    #[test]
    fn a_stored_table_naming_water_or_a_stray_name_is_refused() {
        let (library, _) = library_with_moss();
        let recipe: Recipe = serde_json::from_str(MOSS_RECIPE).unwrap();
        let table = RecipeMaterials::resolve(&recipe, &library).unwrap();
        let mut watery = table.clone();
        for r in watery.names.values_mut() {
            r.id = Material::WATER.0;
        }
        assert!(watery.check(&recipe).is_err());
        let mut stray = table;
        stray.names.insert(
            "Clover".into(),
            ResolvedMaterial {
                id: 20,
                preview_srgb: [0; 3],
            },
        );
        assert!(stray.check(&recipe).is_err());
    }
}
