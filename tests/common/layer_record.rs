//! Editing the layer record of a saved world behind Strata's back, as a
//! tool or a person editing the file while Strata is closed would.

/// Rewrites the layer record (`document` row `record`, one part) of the
/// world file or streaming world file at `path` through `change`.
pub fn rewrite_record(path: &std::path::Path, change: impl FnOnce(&mut serde_json::Value)) {
    let conn = rusqlite::Connection::open(path).unwrap();
    let frame: Vec<u8> = conn
        .query_row(
            "SELECT data FROM document WHERE name = 'record' AND part = 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let parts: i64 = conn
        .query_row(
            "SELECT count(*) FROM document WHERE name = 'record'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(parts, 1, "a small record is one part");
    let json = zstd::decode_all(&frame[..]).unwrap();
    let mut value: serde_json::Value = serde_json::from_slice(&json).unwrap();
    change(&mut value);
    let json = serde_json::to_vec(&value).unwrap();
    let frame = zstd::bulk::compress(&json, 3).unwrap();
    conn.execute(
        "UPDATE document SET data = ?1 WHERE name = 'record' AND part = 0",
        [frame],
    )
    .unwrap();
}
