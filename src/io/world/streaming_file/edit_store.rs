//! The edited columns of a streaming world file as an [`EditStore`] for
//! residency: loads (pending copy first, then saved) verified against their
//! hash, spills written durably, stored summaries and the list of edited
//! columns.

use std::sync::atomic::Ordering;

use rusqlite::TransactionBehavior;

use super::column_codec::{column_on_lattice, decode_column, encode_column};
use super::column_rows::{ColumnRow, RowFault, Table, read_row, read_summary, write_columns};
use super::{Inner, MAX_COLUMN_BYTES, MAX_EDITED_COLUMNS, StreamingWorldFile};
use crate::io::world::summary_rows::encode_summary;
use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::{ChunkCoord, ColumnCoord};
use crate::terrain::streaming::column_source::{ColumnChunks, EditStore, SourceError};
use crate::terrain::streaming::column_summary::ColumnSummary;

impl StreamingWorldFile {
    /// The row of `column` in `table`, as a load result.
    fn load_from(
        &self,
        inner: &Inner,
        table: Table,
        column: ColumnCoord,
    ) -> Result<Option<ColumnRow>, SourceError> {
        let row = read_row(&inner.conn, table, column).map_err(|fault| match fault {
            RowFault::Sqlite(e) => {
                let message = format!("{} ({}): {e}", self.path.display(), table.name());
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseCorrupt) {
                    SourceError::Corrupt { column, message }
                } else {
                    SourceError::Io { column, message }
                }
            }
            RowFault::Damaged(reason) => SourceError::Corrupt {
                column,
                message: format!("{} ({}): {reason}", self.path.display(), table.name()),
            },
        })?;
        if row.is_some() {
            self.rows_read.fetch_add(1, Ordering::Relaxed);
        }
        Ok(row)
    }
}

impl EditStore for StreamingWorldFile {
    /// The pending copy of `column` when there is one, else the saved copy,
    /// else `None`; verified against its stored hash. The row is read under
    /// the lock and decoded after it is released, so loads on several
    /// workers decode in parallel.
    ///
    /// # Errors
    /// [`SourceError::Corrupt`] for a damaged row (undecodable, too long,
    /// failing its hash) or a damaged database; [`SourceError::Io`] for
    /// other SQLite failures.
    fn load_edited(&self, column: ColumnCoord) -> Result<Option<ColumnChunks>, SourceError> {
        let (table, row) = {
            let inner = self.lock();
            match self.load_from(&inner, Table::Pending, column)? {
                Some(row) => (Table::Pending, row),
                None => match self.load_from(&inner, Table::Saved, column)? {
                    Some(row) => (Table::Saved, row),
                    None => return Ok(None),
                },
            }
        };
        let corrupt = |reason: String| SourceError::Corrupt {
            column,
            message: format!("{} ({}): {reason}", self.path.display(), table.name()),
        };
        match row {
            (_, Err(len)) => Err(corrupt(format!(
                "{len} bytes of data, longer than any column ({MAX_COLUMN_BYTES} bytes)"
            ))),
            (hash, Ok(data)) => decode_column(column, hash, &data)
                .map(Some)
                .map_err(corrupt),
        }
    }

    /// Writes `chunks` as the whole content of `column` into
    /// `pending_columns` in one committed transaction (on disk when it
    /// returns); all-empty chunks are left out.
    ///
    /// # Errors
    /// [`SourceError::Io`] when the column cannot be stored (a chunk of
    /// another column or off the lattice, a chunk given twice, more than
    /// [`MAX_COLUMN_CHUNKS`] chunks) or SQLite fails (disk full, read-only);
    /// nothing is written, and the caller keeps the column in memory.
    ///
    /// [`MAX_COLUMN_CHUNKS`]: super::MAX_COLUMN_CHUNKS
    fn store_edited(
        &self,
        column: ColumnCoord,
        chunks: &[(ChunkCoord, ChunkCells)],
    ) -> Result<(), SourceError> {
        let io = |message: String| SourceError::Io {
            column,
            message: format!("cannot store it in {}: {message}", self.path.display()),
        };
        let mut encoded = encode_column(column, chunks).map_err(io)?;
        if self.has_summaries() {
            encoded.summary = Some(encode_summary(&ColumnSummary::from_chunks(chunks)));
        }
        let mut inner = self.lock();
        let tx = inner
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| io(e.to_string()))?;
        write_columns(&tx, Table::Pending, std::slice::from_ref(&encoded))
            .map_err(|e| io(e.to_string()))?;
        tx.commit().map_err(|e| io(e.to_string()))
    }

    /// Every column with a saved or a pending copy, sorted.
    ///
    /// # Errors
    /// [`SourceError::Store`] when SQLite fails, a row's coordinate is not
    /// a column on the lattice, or there are more than
    /// [`MAX_EDITED_COLUMNS`].
    /// The summary stored with `column`'s current copy (format 4), or
    /// `None`: a file of format 2 or 3, a column without a summary, or one
    /// whose summary was made from another copy (see the module docs).
    ///
    /// # Errors
    /// [`SourceError::Corrupt`] for a damaged summary or database;
    /// [`SourceError::Io`] for other SQLite failures.
    fn stored_summary(&self, column: ColumnCoord) -> Result<Option<ColumnSummary>, SourceError> {
        if !self.has_summaries() {
            return Ok(None);
        }
        let inner = self.lock();
        read_summary(&inner.conn, column).map_err(|fault| {
            let message = |m: String| format!("{} (column_summaries): {m}", self.path.display());
            match fault {
                RowFault::Sqlite(e)
                    if e.sqlite_error_code() != Some(rusqlite::ErrorCode::DatabaseCorrupt) =>
                {
                    SourceError::Io {
                        column,
                        message: message(e.to_string()),
                    }
                }
                RowFault::Sqlite(e) => SourceError::Corrupt {
                    column,
                    message: message(e.to_string()),
                },
                RowFault::Damaged(reason) => SourceError::Corrupt {
                    column,
                    message: message(reason),
                },
            }
        })
    }

    fn edited_columns(&self) -> Result<Vec<ColumnCoord>, SourceError> {
        self.list_columns(
            "SELECT x, z FROM columns UNION SELECT x, z FROM pending_columns LIMIT ?1",
        )
    }
}

impl StreamingWorldFile {
    /// The columns spilled since the last save (`pending_columns`), sorted.
    ///
    /// # Errors
    /// As [`EditStore::edited_columns`].
    pub fn pending_columns(&self) -> Result<Vec<ColumnCoord>, SourceError> {
        self.list_columns("SELECT x, z FROM pending_columns LIMIT ?1")
    }

    /// The columns `sql` lists (`x, z` rows, at most `?1`), checked and
    /// sorted; more than [`MAX_EDITED_COLUMNS`] is an error.
    fn list_columns(&self, sql: &str) -> Result<Vec<ColumnCoord>, SourceError> {
        let store = |message: String| SourceError::Store {
            message: format!("{}: {message}", self.path.display()),
        };
        let inner = self.lock();
        let mut stmt = inner.conn.prepare(sql).map_err(|e| store(e.to_string()))?;
        let mut rows = stmt
            .query([MAX_EDITED_COLUMNS as i64 + 1])
            .map_err(|e| store(e.to_string()))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(|e| store(e.to_string()))? {
            let (x, z) = match (row.get::<_, i64>(0), row.get::<_, i64>(1)) {
                (Ok(x), Ok(z)) => (x, z),
                _ => return Err(store("a column coordinate is not an integer".to_string())),
            };
            let column = match (i32::try_from(x), i32::try_from(z)) {
                (Ok(x), Ok(z)) => Some(ColumnCoord::new(x, z)),
                _ => None,
            }
            .filter(|c| column_on_lattice(*c))
            .ok_or_else(|| store(format!("column ({x}, {z}) lies outside the cell lattice")))?;
            out.push(column);
        }
        if out.len() > MAX_EDITED_COLUMNS {
            return Err(store(format!(
                "more than {MAX_EDITED_COLUMNS} edited columns"
            )));
        }
        out.sort_unstable();
        Ok(out)
    }
}
