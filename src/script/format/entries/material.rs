//! Material names in script entries.

use crate::terrain::materials::MaterialLibrary;
use crate::terrain::storage::cell::Material;

use crate::script::format::error::EntryError;

/// The material named `name` (case-insensitive, e.g. `"grass"`) in the
/// library of the world a script runs on: a built-in's name, or the name
/// of a material the world added (or gave a built-in).
pub fn parse_material(name: &str, library: &MaterialLibrary) -> Option<Material> {
    library.material_named(name)
}

/// The solid material a `material` field names, `None` when it is absent.
///
/// # Errors
/// [`EntryError::NotSolidMaterial`] for an unknown name, air or water.
pub(super) fn solid_material(
    name: Option<&str>,
    library: &MaterialLibrary,
) -> Result<Option<Material>, EntryError> {
    name.map(|n| {
        parse_material(n, library)
            .filter(|m| m.is_solid())
            .ok_or_else(|| EntryError::NotSolidMaterial(n.to_string()))
    })
    .transpose()
}
