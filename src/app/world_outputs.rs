//! What a headless run does with its one world besides drawing it: open it
//! (keeping a world file open so saving back is incremental), apply a
//! script without rendering, and save it. The screenshot path and the
//! save/export path share the world, so a script is applied exactly once.

use std::path::Path;

use crate::camera::Camera;
use crate::io::materials::{RestyleError, RestyleRequest, restyle};
use crate::io::world::world_file::{
    JournalRecovery, LoadOptions, SaveBatch, SaveReport, WorldFile, WorldFileError, WorldMeta,
};
use crate::io::world::world_source::{WorldSource, WorldSourceError};
use crate::script::{RunError, Script, ScriptRunner};
use crate::terrain::Grid;
use crate::terrain::command::document_action::{BaseSource, WorldDocument};
use crate::terrain::generation::generate::GeneratorSettings;
use crate::terrain::materials::MaterialLibrary;
use crate::terrain::recipe::cook::StagePreview;

/// A world opened for a headless run.
pub struct OpenedWorld {
    /// The cells.
    pub grid: Grid,
    /// What the world file stores besides cells (camera, generator).
    pub meta: WorldMeta,
    /// The world file it came from, kept open so saving back to it is incremental.
    pub file: Option<WorldFile>,
    /// A leftover journal that opening the file rolled back into it (with
    /// the copies kept first), for the caller to tell the user.
    pub journal_recovery: Option<JournalRecovery>,
    /// What cooking the recipe did, for a recipe world.
    pub generation: Option<crate::terrain::recipe::cook::CookReport>,
    /// The world's layers over its base (spec §14): as opened from its
    /// file, then as a script left them; saved with the cells.
    pub document: Option<WorldDocument>,
}

impl OpenedWorld {
    /// A world of `grid` with `meta`, not from a file and without layers.
    pub fn from_grid(grid: Grid, meta: WorldMeta) -> OpenedWorld {
        OpenedWorld {
            grid,
            meta,
            file: None,
            journal_recovery: None,
            generation: None,
            document: None,
        }
    }

    /// The generator the world was made by (serves `generate`), if any.
    pub fn generator(&self) -> Option<GeneratorSettings> {
        self.meta.generator.clone()
    }
}

/// Why a headless script could not be applied.
#[derive(Debug, thiserror::Error)]
#[error("stroke {index} (frame {frame}): {source}")]
pub struct ApplyScriptError {
    /// Index of the failing entry in frame order.
    pub index: usize,
    /// Its frame.
    pub frame: u32,
    /// Why.
    pub source: RunError,
}

/// Opens `source`: a world file is opened and kept open; any other source
/// is built, with the generator's settings in its meta when generated.
///
/// # Errors
/// [`WorldSourceError`] when the world cannot be built or loaded.
pub fn open_world(source: &WorldSource) -> Result<OpenedWorld, WorldSourceError> {
    if let WorldSource::File(path) = source {
        let (file, grid, meta, report) = WorldFile::open(path, LoadOptions::default())?;
        return Ok(OpenedWorld {
            grid,
            meta,
            file: Some(file),
            journal_recovery: report.journal_recovery,
            generation: None,
            document: report.document.map(|d| d.document),
        });
    }
    let meta = match source {
        WorldSource::Generated(settings) => WorldMeta::generated(settings),
        _ => WorldMeta::default(),
    };
    let built = source.build_with_report(&crate::progress::Progress::new())?;
    let meta = WorldMeta {
        georeference: built.georeference,
        ..meta
    };
    Ok(OpenedWorld {
        generation: built.generation,
        ..OpenedWorld::from_grid(built.grid, meta)
    })
}

/// Applies `script`'s entries to `world` in order, without meshing or
/// drawing: the same edits as the headless replay (both drop `*_xz` points
/// onto the full-detail surface as it was before the first entry). The
/// edits land in the world's layers (a fresh stack over `base_source`, or
/// the cells as they are, when it has none), which the world then keeps.
/// Returns the entries that changed the grid.
///
/// # Errors
/// [`ApplyScriptError`] naming the first entry that failed; entries before
/// it stay applied.
pub fn apply_script(
    script: &Script,
    world: &mut OpenedWorld,
    base_source: Option<BaseSource>,
) -> Result<usize, ApplyScriptError> {
    let mut runner = ScriptRunner::for_script(script, &world.grid, world.generator());
    match (world.document.take(), base_source) {
        (Some(document), _) => runner.session.restore_document(document),
        (None, Some(source)) => runner.session.set_base_source(source),
        (None, None) => {}
    }
    let mut edits = 0;
    let result = apply_entries(script, &mut world.grid, &mut runner, &mut edits);
    world.document = runner.session.document_snapshot();
    result.map(|()| edits)
}

/// The body of [`apply_script`]: every entry in order, counting those
/// that changed the grid in `edits`.
fn apply_entries(
    script: &Script,
    grid: &mut Grid,
    runner: &mut ScriptRunner,
    edits: &mut usize,
) -> Result<(), ApplyScriptError> {
    for (index, stroke) in script.strokes.iter().enumerate() {
        let changed = runner
            .run(grid, &stroke.action)
            .map_err(|source| ApplyScriptError {
                index,
                frame: stroke.frame,
                source,
            })?;
        if changed {
            *edits += 1;
        }
    }
    Ok(())
}

/// Saves `world` to `path` with `camera` (if any) in its meta:
/// incrementally when `path` is the file the world was opened from, else a
/// full save.
///
/// # Errors
/// [`WorldFileError`] when the file cannot be written; a failed save leaves
/// an existing file as it was.
pub fn save_world(
    world: &mut OpenedWorld,
    path: &Path,
    opened_from: Option<&Path>,
    camera: Option<&Camera>,
) -> Result<SaveReport, WorldFileError> {
    if let Some(c) = camera {
        world.meta.set_camera(c);
    }
    let same_file = opened_from.is_some_and(|from| crate::io::same_file(from, path));
    let progress = crate::progress::Progress::new();
    match (&mut world.file, same_file) {
        (Some(file), true) => {
            let batch = file
                .prepare_save(&world.grid)
                .with_document(world.document.clone());
            file.write_batch(batch, &world.meta)
        }
        _ => {
            let batch = SaveBatch::full(&world.grid).with_document(world.document.clone());
            Ok(WorldFile::save_full_batch(path, batch, &world.meta, &progress)?.1)
        }
    }
}

/// The exports a headless run was asked for.
#[derive(Clone, Debug, Default)]
pub struct Exports {
    /// `--export-glb`.
    pub glb: Option<std::path::PathBuf>,
    /// `--export-heightmap` (`.png`, `.r16`/`.raw`, `.exr` with a `.json`
    /// sidecar beside it, or `.tif`).
    pub heightmap: Option<std::path::PathBuf>,
    /// How the heightmap is written (engine size, RAW16 byte order).
    pub heightmap_options: crate::io::heightmap::heightmap_export::HeightmapExportOptions,
    /// Where the world sits on surveyed ground: the heightmap's metres and
    /// GeoTIFF georeference (studs without one).
    pub georeference: Option<crate::io::heightmap::world_georeference::WorldGeoreference>,
    /// `--style low-poly`: the `.glb` holds greedy terraced blocks.
    pub low_poly: bool,
    /// `--glb-plain`: the smooth `.glb` in the plain encoding, else the
    /// compact default (quantized and meshopt-compressed).
    pub glb_plain: bool,
    /// `--step-cells`: the low-poly terrace height, cells.
    pub step_cells: f32,
    /// `--collision-block`: the low-poly export's collision block, cells.
    pub collision_block: Option<u32>,
    /// The world's material library: the names in the splat maps' sidecar
    /// and the low-poly `.glb`'s palette colours.
    pub materials: crate::terrain::materials::MaterialLibrary,
}

impl Exports {
    /// How the smooth `.glb` stores its geometry.
    pub fn glb_encoding(&self) -> crate::io::export::gltf_export::GlbEncoding {
        if self.glb_plain {
            crate::io::export::gltf_export::GlbEncoding::Plain
        } else {
            crate::io::export::gltf_export::GlbEncoding::default()
        }
    }
}

/// The line that says what a heightmap export wrote.
pub fn heightmap_line(e: &crate::io::heightmap::heightmap_export::HeightmapExport) -> String {
    let sidecar = e
        .sidecar
        .as_ref()
        .map(|s| format!(" and {}", s.display()))
        .unwrap_or_default();
    let splat = e
        .splat
        .as_ref()
        .map(|s| {
            format!(
                "; {}, {} and {}",
                s.summary(),
                s.index_map.display(),
                s.sidecar.display()
            )
        })
        .unwrap_or_default();
    format!(
        "exported {}{sidecar} ({}x{} samples, {:.2} to {:.2} m){splat}",
        e.path.display(),
        e.width_px,
        e.height_px,
        e.elevation_range_m.0,
        e.elevation_range_m.1
    )
}

/// Writes `exports` of `grid` (the world, or a region crop of it) and
/// returns one line per file written, for the user.
///
/// # Errors
/// [`crate::io::ExportError`] for the first export that failed.
pub fn write_exports(
    exports: &Exports,
    grid: &Grid,
) -> Result<Vec<String>, crate::io::ExportError> {
    let mut lines = Vec::new();
    if let Some(path) = &exports.glb {
        lines.push(if exports.low_poly {
            let e = crate::io::export::lowpoly_gltf::export_low_poly_glb_with_library(
                grid,
                path,
                exports.step_cells,
                exports.collision_block,
                &exports.materials,
            )?;
            format!(
                "exported {} (low-poly: {} chunk columns, {} vertices, {} triangles, {} collision \
                 triangles, {} bytes)",
                path.display(),
                e.chunk_columns,
                e.vertices,
                e.triangles,
                e.collision_triangles,
                e.file_bytes
            )
        } else {
            let e = crate::io::export::gltf_export::export_glb(
                grid,
                &exports.materials,
                path,
                exports.glb_encoding(),
            )?;
            format!(
                "exported {} ({}: {} vertices, {} triangles, {} materials, {} bytes, {:.2} bytes \
                 per triangle)",
                path.display(),
                e.encoding.label(),
                e.vertices,
                e.triangles,
                e.materials,
                e.file_bytes,
                e.bytes_per_triangle()
            )
        });
    }
    if let Some(path) = &exports.heightmap {
        let e = crate::io::heightmap::heightmap_export::export_heightmap_with_library(
            grid,
            path,
            exports.georeference.as_ref(),
            &exports.heightmap_options,
            &exports.materials,
        )?;
        lines.push(heightmap_line(&e));
    }
    Ok(lines)
}

/// Why [`write_recipe_previews`] failed.
#[derive(Debug, thiserror::Error)]
pub enum PreviewWriteError {
    /// The folder could not be made.
    #[error("cannot make {path}: {source}")]
    Folder {
        /// The folder.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A picture could not be written.
    #[error("cannot write {path}: {source}")]
    Picture {
        /// The picture's file.
        path: String,
        /// Why.
        source: image::ImageError,
    },
    /// A preview's bytes are not `size_px² × 3`.
    #[error("the stage preview of {stage} has the wrong size")]
    Size {
        /// The stage.
        stage: &'static str,
    },
}

/// Writes a recipe world's stage pictures (RGB, [`StagePreview::size_px`]
/// a side) into `dir` as `NN-stage.png`, making `dir` when it is missing.
///
/// # Errors
/// [`PreviewWriteError`] naming the folder or file that failed.
pub fn write_recipe_previews(
    dir: &Path,
    previews: &[StagePreview],
) -> Result<(), PreviewWriteError> {
    std::fs::create_dir_all(dir).map_err(|source| PreviewWriteError::Folder {
        path: dir.display().to_string(),
        source,
    })?;
    for p in previews {
        let path = dir.join(format!("{:02}-{}.png", p.index, p.stage));
        let image = image::RgbImage::from_raw(p.size_px, p.size_px, p.rgb.clone())
            .ok_or(PreviewWriteError::Size { stage: p.stage })?;
        image
            .save(&path)
            .map_err(|source| PreviewWriteError::Picture {
                path: path.display().to_string(),
                source,
            })?;
    }
    Ok(())
}

/// Why [`library_and_script`] failed.
#[derive(Debug, thiserror::Error)]
pub enum LibraryScriptError {
    /// A `--material-*` request was refused (the library is unchanged).
    #[error(transparent)]
    Restyle(#[from] RestyleError),
    /// The script could not be read.
    #[error(transparent)]
    Script(#[from] crate::script::ScriptError),
}

/// `library` with the `requests` (`--material-*`) applied, printing a line
/// on what each did.
///
/// # Errors
/// [`RestyleError`] for the first request refused.
pub fn restyled(
    library: &MaterialLibrary,
    requests: &[RestyleRequest],
) -> Result<MaterialLibrary, RestyleError> {
    let (restyled, lines) = restyle(library, requests)?;
    lines.iter().for_each(|l| println!("material {l}"));
    Ok(restyled)
}

/// Gives a whole `world` its library: `made_before` (a new recipe world's,
/// made before it cooked so its recipe could name what `requests` add),
/// else its own with `requests` applied; then reads the script at
/// `script` with the names that library gives its materials.
///
/// # Errors
/// [`LibraryScriptError`]; the world's library is unchanged when a request
/// is refused.
pub fn library_and_script(
    script: Option<&Path>,
    world: &mut OpenedWorld,
    made_before: Option<MaterialLibrary>,
    requests: &[RestyleRequest],
) -> Result<Option<Script>, LibraryScriptError> {
    if let Some(library) = made_before {
        world.meta.materials = library;
    } else if !requests.is_empty() {
        world.meta.materials = restyled(&world.meta.materials, requests)?;
    }
    let library = &world.meta.materials;
    Ok(script.map(|p| Script::load_for(p, library)).transpose()?)
}
