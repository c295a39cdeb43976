//! Where a world comes from: the default generator, a heightmap import, a
//! saved world file, or a grid built by the caller. One place that turns a choice into a [`Grid`],
//! shared by the window, headless screenshots and tests. It lives in `io`
//! because loading a saved world reads files; the terrain core does not.

use std::path::PathBuf;

use crate::io::heightmap::heightmap_format::import_heightmap_georeferenced;
use crate::io::heightmap::heightmap_import::{HeightmapSettings, ImportError};
use crate::io::heightmap::world_georeference::WorldGeoreference;
use crate::progress::Progress;
use crate::terrain::generation::generate::{GenerateError, GeneratorSettings, generate_world};
use crate::terrain::recipe::cook::CookReport;
use crate::terrain::recipe::recipe_materials::RecipeMaterials;
use crate::terrain::recipe::stages::Recipe;
use crate::terrain::recipe::terrain_source::RecipeTerrain;
use crate::terrain::storage::grid::Grid;

/// The source of a world.
#[derive(Clone, Debug)]
pub enum WorldSource {
    /// The default generator.
    Generated(GeneratorSettings),
    /// A heightmap PNG (with its optional JSON sidecar).
    Heightmap {
        /// The PNG file.
        path: PathBuf,
        /// Import settings.
        settings: HeightmapSettings,
    },
    /// A saved world file (`.strata`), loaded and verified
    /// ([`crate::io::world::world_file::load`]); any damaged chunk is an error.
    File(PathBuf),
    /// A generator recipe (`--recipe FILE`), cooked for a seed and size.
    Recipe {
        /// The recipe, validated.
        recipe: Box<Recipe>,
        /// What its material names mean in the world's library
        /// ([`RecipeMaterials::resolve`]; empty for built-ins only).
        materials: RecipeMaterials,
        /// Seed and size (cells) of the world.
        settings: GeneratorSettings,
        /// Draw the plan after every stage at this many pixels a side
        /// ([`CookReport::previews`]).
        preview_px: Option<u32>,
    },
    /// A grid built by the caller (tests, tools).
    Grid(Grid),
}

/// A world as [`WorldSource::build_with_report`] built it.
#[derive(Debug)]
pub struct BuiltWorld {
    /// The cells.
    pub grid: Grid,
    /// What cooking a recipe world did.
    pub generation: Option<CookReport>,
    /// Where an imported world sits on the ground its file surveys.
    pub georeference: Option<WorldGeoreference>,
}

impl WorldSource {
    /// What makes the cells of this world when it is just made: the
    /// generator or the recipe with its seed, so the world document's base
    /// can be made again with another seed (spec §14). `None` for worlds
    /// whose cells are their own (heightmaps, files, grids).
    pub fn fresh_base(&self) -> Option<crate::terrain::command::document_action::BaseSource> {
        use crate::terrain::command::document_action::BaseSource;
        match self {
            WorldSource::Generated(settings) => Some(BaseSource::Generator(settings.clone())),
            WorldSource::Recipe {
                recipe,
                materials,
                settings,
                ..
            } => Some(BaseSource::Recipe {
                recipe: std::sync::Arc::new((**recipe).clone()),
                materials: materials.clone(),
                settings: settings.clone(),
            }),
            _ => None,
        }
    }
}

/// Why a world could not be built.
#[derive(Debug, thiserror::Error)]
pub enum WorldSourceError {
    /// The world generator rejected its settings.
    #[error(transparent)]
    Generate(#[from] GenerateError),
    /// The heightmap could not be imported (the message names the file).
    #[error(transparent)]
    Import(#[from] ImportError),
    /// The world file could not be loaded (the message names the file).
    #[error(transparent)]
    Load(#[from] crate::io::world::world_file::WorldFileError),
}

impl WorldSource {
    /// Builds the grid: generates, imports, loads, or clones the given grid
    /// (a clone shares storage but has a fresh generation).
    ///
    /// # Errors
    /// [`WorldSourceError`] for invalid generator settings, a heightmap that
    /// cannot be imported, or a world file that cannot be loaded.
    pub fn build(&self) -> Result<Grid, WorldSourceError> {
        Ok(self.build_with_report(&Progress::new())?.grid)
    }

    /// [`WorldSource::build`], with the cooking report of a recipe world
    /// (its overhang count filled in) and progress for the recipe's stages
    /// and cells.
    ///
    /// # Errors
    /// As [`WorldSource::build`]; [`GenerateError::Cancelled`] when
    /// `progress` was cancelled while a recipe cooked.
    pub fn build_with_report(&self, progress: &Progress) -> Result<BuiltWorld, WorldSourceError> {
        let grid = match self {
            WorldSource::Generated(settings) => generate_world(settings)?,
            WorldSource::Heightmap { path, settings } => {
                let (grid, georeference) =
                    import_heightmap_georeferenced(path, settings, progress)?;
                return Ok(BuiltWorld {
                    grid,
                    generation: None,
                    georeference,
                });
            }
            WorldSource::File(path) => {
                crate::io::world::world_file::load(
                    path,
                    crate::io::world::world_file::LoadOptions::default(),
                )?
                .0
            }
            WorldSource::Grid(grid) => grid.clone(),
            WorldSource::Recipe {
                recipe,
                materials,
                settings,
                preview_px,
            } => {
                settings.validate()?;
                let (terrain, mut report) = RecipeTerrain::cook_with_previews(
                    recipe,
                    materials,
                    settings,
                    progress,
                    *preview_px,
                )?;
                let (grid, overhangs) = terrain.build_grid(progress)?;
                report.overhang_cells = Some(overhangs);
                return Ok(BuiltWorld {
                    grid,
                    generation: Some(report),
                    georeference: None,
                });
            }
        };
        Ok(BuiltWorld {
            grid,
            generation: None,
            georeference: None,
        })
    }
}
