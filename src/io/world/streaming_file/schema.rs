//! The exact schemas of streaming world files, one per format version and
//! origin (generated or heightmap), in the order opening tries them.

use super::{
    GENERATED_FORMAT_VERSION, HEIGHTMAP_FORMAT_VERSION, LAYERED_FORMAT_VERSION,
    STREAMING_FORMAT_VERSION,
};
use crate::io::heightmap::streaming_heightmap::HEIGHTMAP_TABLE;
use crate::io::world::world_file::{
    DOCUMENT_TABLES_SQL, FileSchema, WORLD_SCHEMA, WORLD_SCHEMA_V1, document_tables,
};

/// The tables of a version-2 streaming world file (also in version 3).
macro_rules! streaming_tables_sql {
    () => {
        "
CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE columns (
    x INTEGER NOT NULL,
    z INTEGER NOT NULL,
    hash INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (x, z)
);
CREATE TABLE pending_columns (
    x INTEGER NOT NULL,
    z INTEGER NOT NULL,
    hash INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (x, z)
);
"
    };
}

/// The tables of a version-2 streaming world file.
const STREAMING_SCHEMA_SQL: &str = streaming_tables_sql!();

/// The tables of a version-3 (heightmap) streaming world file.
const HEIGHTMAP_SCHEMA_SQL: &str = concat!(
    streaming_tables_sql!(),
    "CREATE TABLE heightmap_png (part INTEGER PRIMARY KEY NOT NULL, data BLOB NOT NULL);\n"
);

/// The summaries table of version 4.
macro_rules! summaries_table_sql {
    () => {
        "CREATE TABLE column_summaries (
    x INTEGER NOT NULL,
    z INTEGER NOT NULL,
    hash INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (x, z)
);
"
    };
}

/// The tables of a version-4 generated streaming world file.
pub(super) const SUMMARY_SCHEMA_SQL: &str =
    concat!(streaming_tables_sql!(), summaries_table_sql!());

/// The tables of a version-4 heightmap streaming world file.
pub(super) const SUMMARY_HEIGHTMAP_SCHEMA_SQL: &str = concat!(
    streaming_tables_sql!(),
    "CREATE TABLE heightmap_png (part INTEGER PRIMARY KEY NOT NULL, data BLOB NOT NULL);\n",
    summaries_table_sql!()
);

/// The exact schema of a version-4 generated streaming world file.
const SUMMARY_SCHEMA: FileSchema = FileSchema {
    sql: SUMMARY_SCHEMA_SQL,
    tables: &["meta", "columns", "pending_columns", "column_summaries"],
};

/// The exact schema of a version-4 heightmap streaming world file.
const SUMMARY_HEIGHTMAP_SCHEMA: FileSchema = FileSchema {
    sql: SUMMARY_HEIGHTMAP_SCHEMA_SQL,
    tables: &[
        "meta",
        "columns",
        "pending_columns",
        HEIGHTMAP_TABLE,
        "column_summaries",
    ],
};

/// The tables of a version-5 generated streaming world file: version 4's
/// and the world document's (as world files hold them).
const LAYERED_SCHEMA_SQL: &str = concat!(
    streaming_tables_sql!(),
    summaries_table_sql!(),
    document_tables!()
);

/// The tables of a version-5 heightmap streaming world file.
const LAYERED_HEIGHTMAP_SCHEMA_SQL: &str = concat!(
    streaming_tables_sql!(),
    "CREATE TABLE heightmap_png (part INTEGER PRIMARY KEY NOT NULL, data BLOB NOT NULL);\n",
    summaries_table_sql!(),
    document_tables!()
);

/// The exact schema of a version-5 generated streaming world file.
const LAYERED_SCHEMA: FileSchema = FileSchema {
    sql: LAYERED_SCHEMA_SQL,
    tables: &[
        "meta",
        "columns",
        "pending_columns",
        "column_summaries",
        "document",
        "base_chunks",
        "column_keys",
    ],
};

/// The exact schema of a version-5 heightmap streaming world file.
const LAYERED_HEIGHTMAP_SCHEMA: FileSchema = FileSchema {
    sql: LAYERED_HEIGHTMAP_SCHEMA_SQL,
    tables: &[
        "meta",
        "columns",
        "pending_columns",
        HEIGHTMAP_TABLE,
        "column_summaries",
        "document",
        "base_chunks",
        "column_keys",
    ],
};

/// What a save that keeps a world document adds to a file of an earlier
/// version: the summaries table (versions 2 and 3 lack it) and the
/// document tables.
pub(super) fn upgrade_sql(version: u32) -> String {
    let mut sql = String::new();
    if version < STREAMING_FORMAT_VERSION {
        sql.push_str(summaries_table_sql!());
    }
    sql.push_str(DOCUMENT_TABLES_SQL);
    sql
}

/// The exact schema of a version-2 streaming world file.
const STREAMING_SCHEMA: FileSchema = FileSchema {
    sql: STREAMING_SCHEMA_SQL,
    tables: &["meta", "columns", "pending_columns"],
};

/// The exact schema of a version-3 streaming world file.
const HEIGHTMAP_SCHEMA: FileSchema = FileSchema {
    sql: HEIGHTMAP_SCHEMA_SQL,
    tables: &["meta", "columns", "pending_columns", HEIGHTMAP_TABLE],
};

/// The schemas a streaming file may have, in the order they are tried (the
/// first error is the one reported): version 2, version 3, version 4
/// generated and heightmap, version 5 generated and heightmap, and a world
/// file of format 2 or 1 (to name it).
pub(super) const OPEN_SCHEMAS: [&FileSchema; 8] = [
    &STREAMING_SCHEMA,
    &HEIGHTMAP_SCHEMA,
    &SUMMARY_SCHEMA,
    &SUMMARY_HEIGHTMAP_SCHEMA,
    &LAYERED_SCHEMA,
    &LAYERED_HEIGHTMAP_SCHEMA,
    &WORLD_SCHEMA,
    &WORLD_SCHEMA_V1,
];

/// The format version and origin kind (true: heightmap) of the streaming
/// schema at `index` of [`OPEN_SCHEMAS`]; `None` for a world file.
pub(super) fn schema_kind(index: usize) -> Option<(u32, bool)> {
    match index {
        0 => Some((GENERATED_FORMAT_VERSION, false)),
        1 => Some((HEIGHTMAP_FORMAT_VERSION, true)),
        2 => Some((STREAMING_FORMAT_VERSION, false)),
        3 => Some((STREAMING_FORMAT_VERSION, true)),
        4 => Some((LAYERED_FORMAT_VERSION, false)),
        5 => Some((LAYERED_FORMAT_VERSION, true)),
        _ => None,
    }
}
