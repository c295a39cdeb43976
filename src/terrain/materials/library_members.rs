//! Which materials a library holds: adding a material at the lowest free
//! id, removing an added one, and putting a removed one back (undo).

use super::{LibraryError, MaterialLibrary, MaterialStyle};
use crate::terrain::materials::surface::SurfaceMaps;
use crate::terrain::materials::texture::MaterialTexture;
use crate::terrain::storage::cell::Material;

impl MaterialLibrary {
    /// Adds a material named `name` (trimmed), drawn with `albedo` and
    /// `surface` maps as [`MaterialLibrary::set_material_set`] draws them,
    /// at the lowest free id from 11. All or nothing.
    ///
    /// # Errors
    /// [`LibraryError::LibraryFull`] when ids 11 to 255 are all taken;
    /// [`LibraryError::BadName`], [`LibraryError::DuplicateName`]; as
    /// [`MaterialLibrary::set_material_set`] for the textures, and
    /// [`LibraryError::TooManyLayers`].
    pub fn add_material(
        &mut self,
        name: &str,
        albedo: MaterialTexture,
        surface: Option<(MaterialTexture, SurfaceMaps)>,
    ) -> Result<Material, LibraryError> {
        let id = (Material::COUNT as u8..=u8::MAX)
            .find(|id| !self.styles.contains_key(id))
            .ok_or(LibraryError::LibraryFull)?;
        let material = Material(id);
        let mut next = self.clone();
        let mut style = MaterialStyle::built_in(material);
        style.name = String::new();
        next.styles.insert(id, style);
        next.rename(material, name)?;
        next.set_material_set(material, albedo, surface)?;
        *self = next;
        Ok(material)
    }

    /// Removes an added material and the textures only it used, returning
    /// its style. Cells of the material must be given another one first
    /// (the editor replaces them in the same undo step); a cell left with
    /// the id draws as a missing material (magenta).
    ///
    /// # Errors
    /// [`LibraryError::BuiltIn`] for ids 2 to 10, [`LibraryError::NotStyled`]
    /// for an id the library does not hold.
    pub fn remove_material(&mut self, material: Material) -> Result<MaterialStyle, LibraryError> {
        self.style_mut(material)?;
        if material.is_built_in() {
            return Err(LibraryError::BuiltIn { id: material.0 });
        }
        let removed = self
            .styles
            .remove(&material.0)
            .ok_or(LibraryError::NotStyled { id: material.0 })?;
        self.drop_unused_textures();
        Ok(removed)
    }

    /// Puts back a material [`MaterialLibrary::remove_material`] removed
    /// (undo of a removal): `style` at `material`'s id, with `textures`,
    /// the textures it draws with. All or nothing.
    ///
    /// # Errors
    /// [`LibraryError::BuiltIn`] for ids 2 to 10 (never removed),
    /// [`LibraryError::IdTaken`] when another material holds the id now,
    /// [`LibraryError::DuplicateName`] when another material took its name,
    /// [`LibraryError::WrongTextureSide`] when the library's texture size
    /// changed since, [`LibraryError::NotStyled`] when a texture the style
    /// names is not among `textures`, and the limits of
    /// [`MaterialLibrary::add_material`].
    pub fn restore_material(
        &mut self,
        material: Material,
        style: &MaterialStyle,
        textures: &[MaterialTexture],
    ) -> Result<(), LibraryError> {
        if material.is_built_in() {
            return Err(LibraryError::BuiltIn { id: material.0 });
        }
        if !material.is_solid() {
            return Err(LibraryError::NotStyled { id: material.0 });
        }
        if self.styles.contains_key(&material.0) {
            return Err(LibraryError::IdTaken { id: material.0 });
        }
        let mut next = self.clone();
        for t in textures {
            if t.side_px() != next.texture_side_px {
                return Err(LibraryError::WrongTextureSide {
                    found: t.side_px(),
                    expected: next.texture_side_px,
                });
            }
            next.textures.insert(t.hash(), t.clone());
        }
        let named = [style.albedo, style.top_albedo, style.surface];
        if named
            .iter()
            .flatten()
            .any(|h| !next.textures.contains_key(h))
        {
            return Err(LibraryError::NotStyled { id: material.0 });
        }
        next.styles.insert(
            material.0,
            MaterialStyle {
                name: String::new(),
                ..style.clone()
            },
        );
        next.rename(material, &style.name)?;
        next.check_limits()?;
        *self = next;
        Ok(())
    }

    pub(super) fn drop_unused_textures(&mut self) {
        let used: Vec<u64> = self
            .styles
            .values()
            .flat_map(|s| [s.albedo, s.top_albedo, s.surface])
            .flatten()
            .collect();
        self.textures.retain(|h, _| used.contains(h));
    }
}
