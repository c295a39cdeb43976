//! The default generator as a streaming column source (spec §12): any
//! chunk column of a generated world, built on demand from the seed.

use crate::terrain::generation::generate::{ColumnGenerator, GeneratorSettings};
use crate::terrain::storage::coords::ColumnCoord;
use crate::terrain::streaming::column_source::{
    ColumnChunks, ColumnSource, LoadOrigin, SourceError,
};
use crate::terrain::streaming::surface_sampler::SurfaceSampler;

/// The default generator as a column source.
#[derive(Clone, Debug)]
pub struct GeneratedColumns {
    generator: ColumnGenerator,
}

impl GeneratedColumns {
    /// A source for `settings` (check them with
    /// [`GeneratorSettings::validate_streaming`] first).
    pub fn new(settings: &GeneratorSettings) -> GeneratedColumns {
        GeneratedColumns {
            generator: ColumnGenerator::new(settings),
        }
    }

    /// The generator settings.
    pub fn settings(&self) -> &GeneratorSettings {
        self.generator.settings()
    }
}

impl ColumnSource for GeneratedColumns {
    fn load_column(&self, column: ColumnCoord) -> Result<ColumnChunks, SourceError> {
        Ok(self.generator.column_chunks(column))
    }

    fn origin(&self) -> LoadOrigin {
        LoadOrigin::Generated
    }

    fn is_outside(&self, column: ColumnCoord) -> bool {
        self.generator.is_outside(column)
    }

    fn surface_sampler(&self) -> Option<&dyn SurfaceSampler> {
        Some(&self.generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::generation::generate::{generate_chunk, generate_world};
    use crate::terrain::storage::coords::ColumnCoord;
    use crate::terrain::streaming::column_source::ColumnSource;

    #[test]
    fn generated_columns_equal_the_whole_world() {
        let settings = GeneratorSettings {
            seed: 7,
            size_cells: 128,
        };
        let world = generate_world(&settings).unwrap();
        let source = GeneratedColumns::new(&settings);
        let mut count = 0;
        for z in -1..5 {
            for x in -1..5 {
                let column = ColumnCoord::new(x, z);
                let chunks = source.load_column(column).unwrap();
                assert_eq!(
                    source.is_outside(column),
                    !(0..4).contains(&x) || !(0..4).contains(&z)
                );
                for (coord, cells) in &chunks {
                    assert_eq!(
                        cells.content_hash(),
                        world.chunk(*coord).unwrap().cells.content_hash()
                    );
                    assert_eq!(
                        cells.content_hash(),
                        generate_chunk(&settings, *coord).content_hash()
                    );
                }
                count += chunks.len();
            }
        }
        assert_eq!(count, world.chunk_count());
    }
}
