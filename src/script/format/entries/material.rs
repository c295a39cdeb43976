//! Material names in script entries.

use crate::terrain::storage::cell::Material;

use crate::script::format::error::EntryError;

/// The material named `name` (case-insensitive), e.g. `"grass"`.
pub fn parse_material(name: &str) -> Option<Material> {
    Material::from_name(name)
}

/// The solid material a `material` field names, `None` when it is absent.
///
/// # Errors
/// [`EntryError::NotSolidMaterial`] for an unknown name, air or water.
pub(super) fn solid_material(name: Option<&str>) -> Result<Option<Material>, EntryError> {
    name.map(|n| {
        parse_material(n)
            .filter(|m| m.is_solid())
            .ok_or_else(|| EntryError::NotSolidMaterial(n.to_string()))
    })
    .transpose()
}
