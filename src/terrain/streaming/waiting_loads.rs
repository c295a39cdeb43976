//! Loading, on the frame's own thread and within a time budget, the
//! columns an edit waits for: a document change on a streaming world may
//! need hundreds of columns far from the camera (its dirty closure), more
//! than the background loads bring in reasonable time.

use std::time::{Duration, Instant};

use crate::terrain::storage::coords::ColumnCoord;
use crate::terrain::storage::grid::Grid;
use crate::terrain::streaming::column_source::SourceError;
use crate::terrain::streaming::residency::Residency;

impl Residency {
    /// [`Residency::load_now`] for the absent ones of `columns`, in order,
    /// until `budget` has passed (at least one is loaded): for an edit the
    /// window waits on, so a large closure arrives faster than the
    /// background loads bring it while every frame stays bounded. Returns
    /// how many were loaded.
    ///
    /// # Errors
    /// As [`Residency::load_now`].
    pub fn load_now_within(
        &mut self,
        grid: &mut Grid,
        columns: &[ColumnCoord],
        budget: Duration,
    ) -> Result<usize, SourceError> {
        let start = Instant::now();
        let mut loaded = 0;
        for &column in columns {
            if grid.is_column_resident(column) {
                continue;
            }
            if loaded > 0 && start.elapsed() >= budget {
                break;
            }
            self.load_now(grid, [column])?;
            loaded += 1;
        }
        Ok(loaded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::streaming::column_source::{
        ColumnChunks, ColumnSource, LoadOrigin, MemoryEditStore,
    };
    use std::sync::Arc;

    /// Every column empty (what loads, not what it holds, is tested here).
    #[derive(Debug)]
    struct EmptyColumns;

    impl ColumnSource for EmptyColumns {
        fn load_column(&self, _: ColumnCoord) -> Result<ColumnChunks, SourceError> {
            Ok(Vec::new())
        }
        fn origin(&self) -> LoadOrigin {
            LoadOrigin::Generated
        }
        fn is_outside(&self, _: ColumnCoord) -> bool {
            false
        }
    }

    #[test]
    fn waiting_columns_load_at_least_one_a_call_and_all_with_time() {
        let mut residency = Residency::new(
            Arc::new(EmptyColumns),
            Arc::new(MemoryEditStore::default()),
            usize::MAX,
        );
        let mut grid = Grid::streaming();
        let columns: Vec<ColumnCoord> = (0..4).map(|x| ColumnCoord::new(x, 2)).collect();
        // No time at all: still one column, so a wait always progresses.
        assert_eq!(
            residency
                .load_now_within(&mut grid, &columns, Duration::ZERO)
                .unwrap(),
            1
        );
        assert!(grid.is_column_resident(columns[0]));
        let rest = residency
            .load_now_within(&mut grid, &columns, Duration::from_secs(3600))
            .unwrap();
        assert_eq!(rest, 3);
        assert!(columns.iter().all(|c| grid.is_column_resident(*c)));
    }
}
