//! The `column_summaries` rows of a streaming world file (format 4; spec
//! §13 "edited terrain keeps coarse summaries ... stored with them"): the
//! summary of an edited column, so a reopened world shows its edits from
//! afar without reading any chunk.
//!
//! `data` is exactly [`SUMMARY_BYTES`] bytes: per cell column of the chunk
//! column (x fastest, then z, 32 × 32), the top of the solid as a
//! little-endian `f32` (cells; negative infinity for none), then the 1,024
//! material ids (`u8`), then the 1,024 tops of the water (`f32`, negative
//! infinity for none). Heights are finite or negative infinity and every
//! material id is known; anything else is damaged.

use crate::terrain::storage::coords::CHUNK_SIZE_CELLS;
use crate::terrain::streaming::column_summary::ColumnSummary;

/// Cell columns per chunk column.
const AREA: usize = (CHUNK_SIZE_CELLS * CHUNK_SIZE_CELLS) as usize;

/// Length of a summary row's `data`, bytes.
pub const SUMMARY_BYTES: usize = AREA * 9;

/// Encodes `summary` as a row's `data`.
pub fn encode_summary(summary: &ColumnSummary) -> Vec<u8> {
    let mut out = Vec::with_capacity(SUMMARY_BYTES);
    for h in summary.height_cells.iter() {
        out.extend_from_slice(&h.to_le_bytes());
    }
    out.extend_from_slice(&summary.material);
    for w in summary.water_cells.iter() {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out
}

/// Decodes a row's `data`.
///
/// # Errors
/// A message saying what is wrong: another length, a height that is NaN
/// or positive infinity, an unknown material id.
pub fn decode_summary(data: &[u8]) -> Result<ColumnSummary, String> {
    if data.len() != SUMMARY_BYTES {
        return Err(format!(
            "a summary has {SUMMARY_BYTES} bytes, not {}",
            data.len()
        ));
    }
    let floats = |bytes: &[u8], what: &str| -> Result<Box<[f32]>, String> {
        bytes
            .chunks_exact(4)
            .map(|b| {
                let v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                if v.is_finite() || v == f32::NEG_INFINITY {
                    Ok(v)
                } else {
                    Err(format!("a {what} of {v}"))
                }
            })
            .collect()
    };
    let height_cells = floats(&data[..AREA * 4], "height")?;
    let material: Box<[u8]> = data[AREA * 4..AREA * 5].into();
    let water_cells = floats(&data[AREA * 5..], "water level")?;
    Ok(ColumnSummary {
        height_cells,
        material,
        water_cells,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::Material;

    #[test]
    fn a_summary_round_trips_and_damage_is_refused() {
        let mut s = ColumnSummary {
            height_cells: vec![f32::NEG_INFINITY; AREA].into(),
            material: vec![Material::AIR.0; AREA].into(),
            water_cells: vec![f32::NEG_INFINITY; AREA].into(),
        };
        s.height_cells[5] = 123.25;
        s.material[5] = Material::GRASS.0;
        s.water_cells[7] = 40.5;
        let data = encode_summary(&s);
        assert_eq!(data.len(), SUMMARY_BYTES);
        assert_eq!(decode_summary(&data), Ok(s));
        assert!(decode_summary(&data[1..]).is_err(), "short");
        let mut nan = data.clone();
        nan[20..24].copy_from_slice(&f32::NAN.to_le_bytes());
        assert!(decode_summary(&nan).is_err(), "NaN height");
        // Every id is a material: ids past the built-ins are library ones.
        let mut library_material = data;
        library_material[AREA * 4 + 3] = 250;
        let decoded = decode_summary(&library_material).expect("a library id");
        assert_eq!(decoded.material[3], 250);
    }
}
