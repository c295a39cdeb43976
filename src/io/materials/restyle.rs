//! Restyling a world's materials from outside the editor (the command line):
//! each request names a material by its name in the world and changes its
//! texture, tint or tile size. All requests apply together or not at all.

use std::path::PathBuf;

use super::texture_import::{
    ImportedMaterial, MaterialImportError, import_albedo_only, import_material,
};
use crate::terrain::materials::{LibraryError, MaterialLibrary};
use crate::terrain::storage::cell::Material;

/// One change to one material's style.
#[derive(Clone, Debug, PartialEq)]
pub enum RestyleRequest {
    /// Add a material drawn with a texture folder or image.
    Add {
        /// The new material's name.
        name: String,
        /// A folder of PBR maps, or one image.
        path: PathBuf,
    },
    /// Draw the material with the albedo of a texture folder or image.
    Texture {
        /// The material's name in the world (or its built-in name).
        material: String,
        /// A folder of PBR maps, or one image.
        path: PathBuf,
    },
    /// Give the material a top variant: the albedo of a texture folder or
    /// image on its upward-facing surfaces (its albedo stays on the sides).
    TopTexture {
        /// The material's name.
        material: String,
        /// A folder of PBR maps, or one image.
        path: PathBuf,
    },
    /// Tint the material (sRGB).
    Tint {
        /// The material's name.
        material: String,
        /// `[r, g, b]`.
        tint_srgb: [u8; 3],
    },
    /// Set the studs one texture tile covers.
    Tiling {
        /// The material's name.
        material: String,
        /// Studs.
        studs: u32,
    },
    /// Set how strongly the material's height map decides where it shows
    /// among blended materials.
    BlendSharpness {
        /// The material's name.
        material: String,
        /// Percent, 0 to 100.
        pct: u32,
    },
    /// Rename the material.
    Rename {
        /// The material's current name.
        material: String,
        /// The new name.
        name: String,
    },
}

/// Why restyling failed (the library is unchanged).
#[derive(Debug, thiserror::Error)]
pub enum RestyleError {
    /// No material has the name.
    #[error("no material is named {name:?}")]
    UnknownMaterial {
        /// The name given.
        name: String,
    },
    /// The texture could not be imported.
    #[error(transparent)]
    Import(#[from] MaterialImportError),
    /// The library refused the change.
    #[error("{material}: {source}")]
    Library {
        /// The material's name.
        material: String,
        /// Why.
        source: LibraryError,
    },
}

/// What an import read, for the terminal and the Materials window: the
/// albedo file and its resize, the other albedo candidates it ignored, and
/// the other maps the folder held.
pub fn import_summary(imported: &ImportedMaterial) -> String {
    let file = |p: &std::path::Path| {
        p.file_name().map_or_else(
            || p.display().to_string(),
            |f| f.to_string_lossy().into_owned(),
        )
    };
    let side = imported.albedo.side_px();
    let size = if imported.source_side_px == side {
        format!("{side}²")
    } else {
        format!("{}² resized to {side}²", imported.source_side_px)
    };
    let mut text = format!("albedo from {} ({size})", imported.albedo_file.display());
    if !imported.ignored_albedos.is_empty() {
        let ignored: Vec<String> = imported.ignored_albedos.iter().map(|p| file(p)).collect();
        text.push_str(&format!(
            "; other albedo files ignored: {}",
            ignored.join(", ")
        ));
    }
    let surface: Vec<String> = imported
        .surface_files
        .iter()
        .map(|m| format!("{} from {}", m.role.label(), file(&m.path)))
        .collect();
    if !surface.is_empty() {
        text.push_str(&format!("; {}", surface.join(", ")));
    }
    let unused: Vec<String> = imported
        .matched
        .iter()
        .filter(|m| m.role != super::TextureRole::Albedo && !imported.surface_files.contains(m))
        .map(|m| format!("{} {}", m.role.label(), file(&m.path)))
        .collect();
    if !unused.is_empty() {
        text.push_str(&format!("; not used: {}", unused.join(", ")));
    }
    text
}

/// Puts an imported set on `material` (its albedo and surface maps; on its
/// upward-facing surfaces, albedo only, when `top`) and says what was
/// matched.
///
/// # Errors
/// The library's refusal (the library is unchanged).
pub fn apply_import(
    library: &mut MaterialLibrary,
    material: Material,
    top: bool,
    imported: &ImportedMaterial,
) -> Result<String, LibraryError> {
    let mut summary = import_summary(imported);
    if top {
        library.set_top_albedo(material, imported.albedo.clone())?;
        if imported
            .matched
            .iter()
            .any(|m| m.role != super::TextureRole::Albedo)
        {
            summary.push_str(" (a top variant draws its albedo only)");
        }
    } else {
        library.set_material_set(material, imported.albedo.clone(), imported.surface.clone())?;
        summary.push_str(&sharpness_note(library, material));
    }
    Ok(format!(
        "{}{}: {summary}",
        library.name(material),
        if top { " (top)" } else { "" },
    ))
}

/// `"; height blend sharpness N %"` for a material with a height map, else
/// nothing: the import summary's last part.
fn sharpness_note(library: &MaterialLibrary, material: Material) -> String {
    library
        .style(material)
        .filter(|s| s.surface_maps.height)
        .map_or_else(String::new, |s| {
            format!("; height blend sharpness {} %", s.blend_sharpness_pct)
        })
}

/// Adds a material named `name` drawn with an imported set, and says
/// what was matched and which id it took.
///
/// # Errors
/// The library's refusal (the library is unchanged).
pub fn add_imported(
    library: &mut MaterialLibrary,
    name: &str,
    imported: &ImportedMaterial,
) -> Result<String, LibraryError> {
    let material = library.add_material(name, imported.albedo.clone(), imported.surface.clone())?;
    let summary = import_summary(imported) + &sharpness_note(library, material);
    Ok(format!(
        "{} (added as id {}): {summary}",
        library.name(material),
        material.0
    ))
}

/// Applies `requests` in order to a copy of `library` and returns it with
/// one summary line per request (what was imported and matched).
///
/// # Errors
/// [`RestyleError`] for the first request that fails; `library` is never
/// changed.
pub fn restyle(
    library: &MaterialLibrary,
    requests: &[RestyleRequest],
) -> Result<(MaterialLibrary, Vec<String>), RestyleError> {
    let mut out = library.clone();
    let mut lines = Vec::new();
    for request in requests {
        if let RestyleRequest::Add { name, path } = request {
            let imported = import_material(path, out.texture_side_px())?;
            let refused = |source| RestyleError::Library {
                material: name.clone(),
                source,
            };
            let line = add_imported(&mut out, name, &imported).map_err(refused)?;
            lines.push(line);
            continue;
        }
        let name = match request {
            RestyleRequest::Add { name, .. } => name,
            RestyleRequest::Texture { material, .. }
            | RestyleRequest::TopTexture { material, .. }
            | RestyleRequest::Tint { material, .. }
            | RestyleRequest::Tiling { material, .. }
            | RestyleRequest::BlendSharpness { material, .. }
            | RestyleRequest::Rename { material, .. } => material,
        };
        let material = out
            .material_named(name)
            .ok_or_else(|| RestyleError::UnknownMaterial { name: name.clone() })?;
        let refused = |source| RestyleError::Library {
            material: name.clone(),
            source,
        };
        match request {
            RestyleRequest::Texture { path, .. } | RestyleRequest::TopTexture { path, .. } => {
                let top = matches!(request, RestyleRequest::TopTexture { .. });
                let imported = if top {
                    import_albedo_only(path, out.texture_side_px())?
                } else {
                    import_material(path, out.texture_side_px())?
                };
                let line = apply_import(&mut out, material, top, &imported).map_err(refused)?;
                lines.push(line);
            }
            RestyleRequest::Tint { tint_srgb, .. } => {
                out.set_tint(material, *tint_srgb).map_err(refused)?;
                let [r, g, b] = *tint_srgb;
                lines.push(format!(
                    "{}: tint #{r:02x}{g:02x}{b:02x}",
                    out.name(material)
                ));
            }
            RestyleRequest::Tiling { studs, .. } => {
                out.set_tiling(material, *studs).map_err(refused)?;
                lines.push(format!("{}: tile {studs} studs", out.name(material)));
            }
            RestyleRequest::BlendSharpness { pct, .. } => {
                out.set_blend_sharpness(material, *pct).map_err(refused)?;
                lines.push(format!("{}: blend sharpness {pct} %", out.name(material)));
            }
            // Added above, before the name lookup (the name is new).
            RestyleRequest::Add { .. } => {}
            RestyleRequest::Rename { name: new_name, .. } => {
                let old = out.name(material).to_string();
                out.rename(material, new_name).map_err(refused)?;
                lines.push(format!("{old}: renamed {}", out.name(material)));
            }
        }
    }
    Ok((out, lines))
}
