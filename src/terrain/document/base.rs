//! The base of a world document (spec §14): what generates its cells
//! without authoring, answered one chunk column at a time. A generated or
//! recipe base keeps no cells (any column is made again on demand, so an
//! edited world holds its original cells nowhere); a base of plain cells
//! (an imported heightmap, a world opened from an earlier format, a baked
//! stack) keeps them, indexed by column.

use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::terrain::generation::generate::GeneratorSettings;
use crate::terrain::generation::generated_columns::GeneratedColumns;
use crate::terrain::recipe::recipe_materials::RecipeMaterials;
use crate::terrain::recipe::stages::Recipe;
use crate::terrain::recipe::terrain_source::RecipeTerrain;
use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::{CHUNK_SIZE_CELLS, ChunkCoord, ColumnCoord};
use crate::terrain::storage::grid::Grid;
use crate::terrain::streaming::column_source::{
    ColumnChunks, ColumnSource, LoadOrigin, SourceError,
};

/// What makes a world's base cells.
#[derive(Clone, Debug, PartialEq)]
pub enum BaseSource {
    /// Cells kept as they are: an imported heightmap, a world opened from
    /// an earlier format, or a baked stack.
    Cells,
    /// The default generator.
    Generator(GeneratorSettings),
    /// A generator recipe, cooked for a seed and size.
    Recipe {
        /// The validated recipe.
        recipe: Arc<Recipe>,
        /// What its material names meant in the world's library when the
        /// world was made (empty when it names built-ins only).
        materials: RecipeMaterials,
        /// Seed and size.
        settings: GeneratorSettings,
    },
}

impl BaseSource {
    /// The seed, for a generated base.
    pub fn seed(&self) -> Option<u64> {
        match self {
            BaseSource::Cells => None,
            BaseSource::Generator(s) | BaseSource::Recipe { settings: s, .. } => Some(s.seed),
        }
    }
}

/// Plain cells as a column source: every stored chunk, by column (storage
/// shared with the grid it was taken from).
#[derive(Debug)]
struct KeptColumns {
    by_column: FxHashMap<ColumnCoord, ColumnChunks>,
}

impl ColumnSource for KeptColumns {
    fn load_column(&self, column: ColumnCoord) -> Result<ColumnChunks, SourceError> {
        Ok(self.by_column.get(&column).cloned().unwrap_or_default())
    }

    fn origin(&self) -> LoadOrigin {
        LoadOrigin::Loaded
    }

    fn is_outside(&self, column: ColumnCoord) -> bool {
        !self.by_column.contains_key(&column)
    }
}

/// The base's cells, any chunk column on demand.
#[derive(Clone, Debug)]
pub struct BaseColumns {
    source: Arc<dyn ColumnSource>,
    /// Every column the base has cells in (empty for a streamed base).
    columns: Arc<Vec<ColumnCoord>>,
    /// True for a streaming world's base: its columns are never listed or
    /// made all at once, only those a derivation reads.
    streamed: bool,
    /// The cooked recipe behind `source`, for a recipe base (so a material
    /// can be replaced in its plan without cooking again).
    recipe: Option<RecipeTerrain>,
}

/// The columns `[0, size / 32)²` of a generated world.
fn square_columns(size_cells: u32) -> Vec<ColumnCoord> {
    let n = (size_cells / CHUNK_SIZE_CELLS as u32) as i32;
    (0..n)
        .flat_map(|z| (0..n).map(move |x| ColumnCoord::new(x, z)))
        .collect()
}

impl BaseColumns {
    /// The cells of `grid`, kept (storage shared, not copied).
    pub fn kept(grid: &Grid) -> BaseColumns {
        BaseColumns::kept_chunks(grid.chunks().map(|(c, chunk)| (c, chunk.cells.clone())))
    }

    /// `chunks`, kept as the base (empty chunks left out).
    pub fn kept_chunks(chunks: impl IntoIterator<Item = (ChunkCoord, ChunkCells)>) -> BaseColumns {
        let mut by_column: FxHashMap<ColumnCoord, ColumnChunks> = FxHashMap::default();
        for (coord, cells) in chunks {
            if cells.is_all_empty() {
                continue;
            }
            by_column
                .entry(ColumnCoord::of(coord))
                .or_default()
                .push((coord, cells));
        }
        let mut columns: Vec<ColumnCoord> = by_column.keys().copied().collect();
        columns.sort();
        BaseColumns {
            source: Arc::new(KeptColumns { by_column }),
            columns: Arc::new(columns),
            streamed: false,
            recipe: None,
        }
    }

    /// The default generator's cells for `settings`, made on demand.
    pub fn generated(settings: &GeneratorSettings) -> BaseColumns {
        BaseColumns {
            source: Arc::new(GeneratedColumns::new(settings)),
            columns: Arc::new(square_columns(settings.size_cells)),
            streamed: false,
            recipe: None,
        }
    }

    /// A cooked recipe's cells, made on demand.
    pub fn recipe(terrain: RecipeTerrain) -> BaseColumns {
        let columns = square_columns(terrain.size_cells());
        BaseColumns {
            source: Arc::new(terrain.clone()),
            columns: Arc::new(columns),
            streamed: false,
            recipe: Some(terrain),
        }
    }

    /// A streaming world's unedited columns (spec §12) as the base: any
    /// column is made on demand by `source` (the generator, a cooked
    /// recipe's plan, a heightmap's samples), and none is ever listed or
    /// made all at once: a derivation reads only the columns its closure
    /// needs.
    pub fn streamed(source: Arc<dyn ColumnSource>) -> BaseColumns {
        BaseColumns {
            source,
            columns: Arc::new(Vec::new()),
            streamed: true,
            recipe: None,
        }
    }

    /// The cooked recipe behind a recipe base ([`BaseColumns::recipe`]).
    pub fn recipe_terrain(&self) -> Option<&RecipeTerrain> {
        self.recipe.as_ref()
    }

    /// True for a streaming world's base ([`BaseColumns::streamed`]): it
    /// cannot be made whole ([`BaseColumns::whole`] would hold nothing).
    pub fn is_streamed(&self) -> bool {
        self.streamed
    }

    /// Every column the base has cells in (none listed for a streamed base).
    pub fn all_columns(&self) -> &[ColumnCoord] {
        &self.columns
    }

    /// The base chunks of `columns`, made in parallel. A column the source
    /// cannot answer is left empty (only a file-backed source can fail,
    /// and the bases here are in memory).
    pub fn chunks<'a>(
        &self,
        columns: impl IntoIterator<Item = &'a ColumnCoord>,
    ) -> Vec<(ChunkCoord, ChunkCells)> {
        let columns: Vec<ColumnCoord> = columns
            .into_iter()
            .copied()
            .filter(|c| !self.source.is_outside(*c))
            .collect();
        columns
            .par_iter()
            .flat_map_iter(|c| self.source.load_column(*c).unwrap_or_default())
            .collect()
    }

    /// The base chunks of the columns in `set`.
    pub fn chunks_of(&self, set: &FxHashSet<ColumnCoord>) -> Vec<(ChunkCoord, ChunkCells)> {
        let mut columns: Vec<&ColumnCoord> = set.iter().collect();
        columns.sort();
        self.chunks(columns)
    }

    /// The whole base as a grid.
    pub fn whole(&self) -> Grid {
        Grid::from_chunks(self.chunks(self.columns.iter()))
    }
}
