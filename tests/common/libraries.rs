//! Material libraries for tests: flat-colour textures and a library with
//! two added materials.

use strata::terrain::Material;
use strata::terrain::materials::{MaterialLibrary, MaterialTexture};

/// A 256² texture of one colour.
pub fn flat_texture(rgb: [u8; 3]) -> MaterialTexture {
    MaterialTexture::new(256, [rgb[0], rgb[1], rgb[2], 255].repeat(256 * 256)).unwrap()
}

/// The default library at 256² plus "Moss" (id 11) and "Clay" (id 12).
pub fn moss_and_clay() -> (MaterialLibrary, Material, Material) {
    let mut library = MaterialLibrary::default();
    library.set_texture_side_px(256).unwrap();
    let moss = library
        .add_material("Moss", flat_texture([60, 120, 40]), None)
        .unwrap();
    let clay = library
        .add_material("Clay", flat_texture([170, 80, 50]), None)
        .unwrap();
    (library, moss, clay)
}
