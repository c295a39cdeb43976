//! Materials in from other tools: texture sets read from disk for the
//! world's material library (`terrain::materials`). Storing the library in
//! a world file is the world room's job.

pub mod restyle;
pub mod texture_import;

pub use restyle::{
    RestyleError, RestyleRequest, add_imported, apply_import, import_summary, restyle,
};
pub use texture_import::{
    ImportedMaterial, MatchedTexture, MaterialImportError, TextureRole, import_albedo_only,
    import_material,
};
