//! A recipe world's cooked plan kept in its streaming file, so reopening
//! reads it instead of cooking the recipe again (cooking takes seconds to
//! tens of seconds; reading the plan, a fraction of one).
//!
//! The plan is a cache: it is stored as the payload `cache/plan` of the
//! `document` table (format 5), zstd-compressed in parts like the layers'
//! payloads, and is used only when its key equals the key of what the
//! file would cook now: the XXH3-64 of the recipe's text, the seed, the
//! size, [`PLAN_REVISION`] (the cooking code's) and the encoding's version.
//! A missing, stale or damaged plan is cooked again; it never stops a file
//! from opening.
//!
//! # Encoding (before compression, little-endian)
//! `"STRP"`, the encoding version (`u32`, [`PLAN_ENCODING`]), the key
//! (`u64`), the side in samples (`u32`), the spacing in cells (`u32`), the
//! XXH3-64 of everything after this header (`u64`), then the arrays in the
//! order of [`Plan`]'s fields: height, water, wetness, sediment and talus
//! (`f32` each), then material, soil and water body (`u8` each), `side²`
//! values per array.

use super::{LAYERED_FORMAT_VERSION, StreamingFileError, StreamingWorldFile};
use crate::io::world::world_file::document::{read_named, write_named};
use crate::terrain::generation::generate::GeneratorSettings;
use crate::terrain::recipe::cook::PLAN_REVISION;
use crate::terrain::recipe::plan::{
    DRY, LAKE, MAX_PLAN_SIDE_SAMPLES, PLAN_BYTES_PER_SAMPLE, Plan, RIVER, SEA,
};
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::LATTICE_CELLS;

/// The version of this encoding.
pub const PLAN_ENCODING: u32 = 1;

/// The payload's name in the `document` table.
pub(super) const PLAN_PAYLOAD: &str = "cache/plan";

const MAGIC: &[u8; 4] = b"STRP";

/// Bytes before the arrays.
const HEADER_BYTES: usize = 4 + 4 + 8 + 4 + 4 + 8;

/// Most bytes an encoded plan may decode to: the largest plan and its
/// header.
pub(super) const MAX_PLAN_BYTES: u64 = (HEADER_BYTES
    + (MAX_PLAN_SIDE_SAMPLES as usize) * (MAX_PLAN_SIDE_SAMPLES as usize) * PLAN_BYTES_PER_SAMPLE)
    as u64;

/// The key of the plan a recipe world cooks: its recipe text, seed and
/// size, the cooking code's revision and this encoding's version.
pub fn plan_key(recipe_json: &str, settings: &GeneratorSettings) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(recipe_json.as_bytes());
    h.update(&settings.seed.to_le_bytes());
    h.update(&settings.size_cells.to_le_bytes());
    h.update(&PLAN_REVISION.to_le_bytes());
    h.update(&PLAN_ENCODING.to_le_bytes());
    h.digest()
}

/// `plan` encoded under `key`.
pub(super) fn encode_plan(plan: &Plan, key: u64) -> Vec<u8> {
    let n = plan.len();
    let mut body = Vec::with_capacity(n * PLAN_BYTES_PER_SAMPLE);
    for layer in plan.f32_layers() {
        body.extend(layer.iter().flat_map(|v| v.to_le_bytes()));
    }
    for layer in plan.u8_layers() {
        body.extend_from_slice(layer);
    }
    let mut out = Vec::with_capacity(HEADER_BYTES + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&PLAN_ENCODING.to_le_bytes());
    out.extend_from_slice(&key.to_le_bytes());
    out.extend_from_slice(&(plan.side as u32).to_le_bytes());
    out.extend_from_slice(&plan.spacing_cells.to_le_bytes());
    out.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&body).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

/// Why a stored plan was not used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanCacheMiss {
    /// The file holds none (a file written before plans were kept, or by
    /// a build that could not write it).
    #[error("the file holds no cooked plan")]
    Missing,
    /// It was made for another recipe, seed, size or cooking code.
    #[error("the stored plan was cooked from another recipe, seed, size or build")]
    Stale,
    /// It does not decode to a plan of the world's size.
    #[error("the stored plan is damaged: {0}")]
    Damaged(String),
}

impl StreamingWorldFile {
    /// Keeps `plan` (cooked for the key [`plan_key`] gives) in the file,
    /// replacing any earlier one; a file below format 5 gets the document
    /// tables first (format [`LAYERED_FORMAT_VERSION`]).
    ///
    /// # Errors
    /// [`StreamingFileError::File`] when SQLite or compression fails; the
    /// file is then unchanged.
    pub fn store_plan(&self, plan: &Plan, key: u64) -> Result<(), StreamingFileError> {
        let bytes = encode_plan(plan, key);
        self.write_layered(|tx, path| write_named(tx, path, PLAN_PAYLOAD, &bytes))
    }

    /// The plan kept in the file, if it was stored under `key` for a world
    /// of `size_cells`.
    ///
    /// # Errors
    /// [`PlanCacheMiss`]: none kept, kept for something else, or damaged
    /// (an SQLite failure reading it counts as damage: the caller cooks).
    pub fn stored_plan(&self, key: u64, size_cells: u32) -> Result<Plan, PlanCacheMiss> {
        if self.format_version() < LAYERED_FORMAT_VERSION {
            return Err(PlanCacheMiss::Missing);
        }
        let bytes = {
            let inner = self.lock();
            read_named(&inner.conn, &self.path, PLAN_PAYLOAD, MAX_PLAN_BYTES)
                .map_err(|e| PlanCacheMiss::Damaged(e.to_string()))?
                .ok_or(PlanCacheMiss::Missing)?
        };
        decode_plan(&bytes, key, size_cells)
    }
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(b)
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(b)
}

/// The plan in `bytes` if it was stored under `key` for a world of
/// `size_cells` (its side and spacing must be the ones that size cooks).
///
/// # Errors
/// [`PlanCacheMiss::Stale`] for another key; [`PlanCacheMiss::Damaged`]
/// for a header, length or checksum that does not hold.
pub(super) fn decode_plan(bytes: &[u8], key: u64, size_cells: u32) -> Result<Plan, PlanCacheMiss> {
    let damaged = |m: &str| PlanCacheMiss::Damaged(m.to_string());
    if bytes.len() < HEADER_BYTES || &bytes[..4] != MAGIC {
        return Err(damaged("no plan header"));
    }
    if u32_at(bytes, 4) != PLAN_ENCODING || u64_at(bytes, 8) != key {
        return Err(PlanCacheMiss::Stale);
    }
    let (side, spacing) = (u32_at(bytes, 16) as usize, u32_at(bytes, 20));
    let shape = crate::terrain::recipe::plan::plan_spacing_cells(size_cells);
    let side_expected = (size_cells / shape).max(1) as usize;
    if side != side_expected || spacing != shape {
        return Err(damaged("its size is not the world's"));
    }
    let n = side * side;
    let body = &bytes[HEADER_BYTES..];
    if body.len() != n * PLAN_BYTES_PER_SAMPLE {
        return Err(damaged("its length is not its size's"));
    }
    if xxhash_rust::xxh3::xxh3_64(body) != u64_at(bytes, 24) {
        return Err(damaged("it fails its checksum"));
    }
    let floats = |k: usize| -> Vec<f32> {
        body[k * 4 * n..(k + 1) * 4 * n]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    let bytes_at = |k: usize| -> Vec<u8> { body[20 * n + k * n..20 * n + (k + 1) * n].to_vec() };
    let plan = Plan {
        side,
        spacing_cells: spacing,
        height_cells: floats(0),
        water_cells: floats(1),
        wetness: floats(2),
        sediment_cells: floats(3),
        talus_cells: floats(4),
        material: bytes_at(0),
        soil: bytes_at(1),
        water_body: bytes_at(2),
    };
    check_values(&plan).map_err(PlanCacheMiss::Damaged)?;
    Ok(plan)
}

/// Refuses values no cook makes, so a forged plan with a valid checksum
/// (infinite or NaN heights, unknown materials) is cooked again instead of
/// building absurd columns: heights finite and on the cell lattice, water
/// on it or none (negative infinity), wetness in `[0, 1]`, sediment and
/// scree finite and not negative, known materials and water bodies.
fn check_values(plan: &Plan) -> Result<(), String> {
    let (lo, hi) = (
        f64::from(LATTICE_CELLS.min.y),
        f64::from(LATTICE_CELLS.max.y),
    );
    let on_lattice = |v: f32| v.is_finite() && (lo..=hi).contains(&f64::from(v));
    let bad = |what: &str| Err(format!("a {what} value no cook makes"));
    if !plan.height_cells.iter().all(|&h| on_lattice(h)) {
        return bad("height");
    }
    if !plan
        .water_cells
        .iter()
        .all(|&w| w == f32::NEG_INFINITY || on_lattice(w))
    {
        return bad("water");
    }
    if !plan.wetness.iter().all(|w| (0.0..=1.0).contains(w)) {
        return bad("wetness");
    }
    let amount = |v: &f32| v.is_finite() && *v >= 0.0;
    if !plan.sediment_cells.iter().all(amount) || !plan.talus_cells.iter().all(amount) {
        return bad("sediment or scree");
    }
    // A streaming world has no library: its plans name built-ins, the
    // strata marker (the water id) and 0 (no rules ran) only.
    let material = |m: &u8| usize::from(*m) < Material::COUNT;
    if !plan.material.iter().all(material) || !plan.soil.iter().all(material) {
        return bad("material");
    }
    if !plan
        .water_body
        .iter()
        .all(|b| [DRY, SEA, LAKE, RIVER].contains(b))
    {
        return bad("water body");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Plan {
        let mut p = Plan::new(64);
        for (i, h) in p.height_cells.iter_mut().enumerate() {
            *h = i as f32 * 0.25;
        }
        p.water_cells[3] = 7.5;
        p.material[5] = 9;
        p.soil[6] = 2;
        p.water_body[7] = 3;
        p
    }

    #[test]
    fn a_plan_reads_back_bit_for_bit_under_its_key_only() {
        let p = plan();
        let bytes = encode_plan(&p, 42);
        let back = decode_plan(&bytes, 42, 64).unwrap();
        assert_eq!(back.side, p.side);
        assert_eq!(back.height_cells, p.height_cells);
        assert_eq!(
            back.water_cells
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>(),
            p.water_cells
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>()
        );
        assert_eq!(
            (back.material, back.soil, back.water_body),
            (p.material, p.soil, p.water_body)
        );
        assert_eq!(
            decode_plan(&bytes, 43, 64).unwrap_err(),
            PlanCacheMiss::Stale
        );
        assert!(matches!(
            decode_plan(&bytes, 42, 128),
            Err(PlanCacheMiss::Damaged(_))
        ));
    }

    #[test]
    fn damaged_plans_are_misses_never_panics() {
        let bytes = encode_plan(&plan(), 1);
        for cut in [0, 3, HEADER_BYTES - 1, HEADER_BYTES, bytes.len() - 1] {
            assert!(decode_plan(&bytes[..cut], 1, 64).is_err(), "cut at {cut}");
        }
        let mut flipped = bytes.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert_eq!(
            decode_plan(&flipped, 1, 64).unwrap_err(),
            PlanCacheMiss::Damaged("it fails its checksum".into())
        );
        // A forged plan with a valid checksum: infinite heights, unknown
        // materials.
        for forge in [
            |p: &mut Plan| p.height_cells[7] = f32::INFINITY,
            |p: &mut Plan| p.height_cells[7] = f32::NAN,
            |p: &mut Plan| p.water_cells[7] = f32::NAN,
            |p: &mut Plan| p.material[7] = 250,
            |p: &mut Plan| p.water_body[7] = 9,
            |p: &mut Plan| p.sediment_cells[7] = -1.0,
        ] {
            let mut p = plan();
            forge(&mut p);
            assert!(matches!(
                decode_plan(&encode_plan(&p, 1), 1, 64),
                Err(PlanCacheMiss::Damaged(_))
            ));
        }
        let key = |text: &str, seed: u64, size_cells: u32| {
            plan_key(text, &GeneratorSettings { seed, size_cells })
        };
        let keys = [
            key("{}", 1, 64),
            key("{}", 2, 64),
            key("{ }", 1, 64),
            key("{}", 1, 128),
        ];
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}
