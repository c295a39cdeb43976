//! The rows of the column tables: reading one column's row without reading
//! data longer than a column may be, writing encoded columns with their
//! summaries, and reading a summary that is still current.

use rusqlite::{Connection, params};

use super::MAX_COLUMN_BYTES;
use super::column_codec::EncodedColumn;
use crate::io::world::summary_rows::{SUMMARY_BYTES, decode_summary};
use crate::terrain::storage::coords::ColumnCoord;
use crate::terrain::streaming::column_summary::ColumnSummary;

/// The two tables that hold columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Table {
    /// `columns`: saved.
    Saved,
    /// `pending_columns`: spilled since the last save.
    Pending,
}

impl Table {
    pub(super) fn name(self) -> &'static str {
        match self {
            Table::Saved => "columns",
            Table::Pending => "pending_columns",
        }
    }
}

/// A row as read: the stored hash and the data (`Err(length)` when it is
/// longer than [`MAX_COLUMN_BYTES`] and was not read).
pub(super) type ColumnRow = (u64, Result<Vec<u8>, i64>);

/// Why reading a row failed.
pub(super) enum RowFault {
    /// SQLite failed.
    Sqlite(rusqlite::Error),
    /// The row is not shaped as a column row.
    Damaged(String),
}

/// Reads the row of `column` in `table`, if any. Reads no data longer than
/// [`MAX_COLUMN_BYTES`].
pub(super) fn read_row(
    conn: &Connection,
    table: Table,
    column: ColumnCoord,
) -> Result<Option<ColumnRow>, RowFault> {
    let sql = format!(
        "SELECT hash, typeof(data), length(data), \
         CASE WHEN typeof(data) = 'blob' AND length(data) <= ?3 THEN data END \
         FROM {} WHERE x = ?1 AND z = ?2",
        table.name()
    );
    let mut stmt = conn.prepare(&sql).map_err(RowFault::Sqlite)?;
    let mut rows = stmt
        .query(params![column.x, column.z, MAX_COLUMN_BYTES as i64])
        .map_err(RowFault::Sqlite)?;
    let Some(row) = rows.next().map_err(RowFault::Sqlite)? else {
        return Ok(None);
    };
    let hash = row
        .get::<_, i64>(0)
        .map_err(|e| RowFault::Damaged(format!("its hash is not an integer: {e}")))?;
    let kind: String = row.get(1).map_err(RowFault::Sqlite)?;
    if kind != "blob" {
        return Err(RowFault::Damaged(format!("its data is {kind}, not a blob")));
    }
    let len: i64 = row.get(2).map_err(RowFault::Sqlite)?;
    let data = match row.get_ref(3).map_err(RowFault::Sqlite)? {
        rusqlite::types::ValueRef::Blob(b) => Ok(b.to_vec()),
        _ => Err(len),
    };
    // The hash column holds the u64 hash as the i64 with the same bits.
    Ok(Some((hash as u64, data)))
}

/// Inserts or replaces `columns` in `table`, and their summaries (those
/// that have one) in `column_summaries`.
pub(super) fn write_columns(
    tx: &rusqlite::Transaction<'_>,
    table: Table,
    columns: &[EncodedColumn],
) -> rusqlite::Result<()> {
    let mut put = tx.prepare(&format!(
        "INSERT OR REPLACE INTO {} (x, z, hash, data) VALUES (?1, ?2, ?3, ?4)",
        table.name()
    ))?;
    for c in columns {
        // The u64 hash is stored as the i64 with the same bits.
        put.execute(params![c.column.x, c.column.z, c.hash as i64, c.data])?;
    }
    if columns.iter().any(|c| c.summary.is_some()) {
        let mut put = tx.prepare(
            "INSERT OR REPLACE INTO column_summaries (x, z, hash, data) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for c in columns {
            if let Some(summary) = &c.summary {
                put.execute(params![c.column.x, c.column.z, c.hash as i64, summary])?;
            }
        }
    }
    Ok(())
}

/// Reads the stored summary of `column` if it was made from the column's
/// current copy (pending, else saved): `Ok(None)` when there is none or it
/// is stale, `Err` with a reason when it is damaged.
pub(super) fn read_summary(
    conn: &Connection,
    column: ColumnCoord,
) -> Result<Option<ColumnSummary>, RowFault> {
    let mut stmt = conn
        .prepare(
            "SELECT CASE WHEN typeof(data) = 'blob' AND length(data) = ?3 THEN data END \
             FROM column_summaries WHERE x = ?1 AND z = ?2 AND hash = \
             COALESCE((SELECT hash FROM pending_columns WHERE x = ?1 AND z = ?2), \
                      (SELECT hash FROM columns WHERE x = ?1 AND z = ?2))",
        )
        .map_err(RowFault::Sqlite)?;
    let mut rows = stmt
        .query(params![column.x, column.z, SUMMARY_BYTES as i64])
        .map_err(RowFault::Sqlite)?;
    let Some(row) = rows.next().map_err(RowFault::Sqlite)? else {
        return Ok(None);
    };
    match row.get_ref(0).map_err(RowFault::Sqlite)? {
        rusqlite::types::ValueRef::Blob(b) => {
            decode_summary(b).map(Some).map_err(RowFault::Damaged)
        }
        _ => Err(RowFault::Damaged(format!(
            "its summary is not a blob of {SUMMARY_BYTES} bytes"
        ))),
    }
}
