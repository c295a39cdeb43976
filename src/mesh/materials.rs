//! Material sets and blend weights on surface vertices (spec §5).
//!
//! Each cube vertex sums the solid occupancy of its 8 samples per material.
//! A quad picks up to 4 materials from its 4 vertices' summed contributions
//! (largest first, ties to the lower id) and sorts them by id; every vertex of
//! the quad then carries that set with its own 8-bit weights summing to exactly
//! 255, so the shader interpolates weights but never material ids.
//! All arithmetic is integer, hence identical on every machine.

/// Largest material id a quad set can hold, plus one.
pub const MAX_MATERIALS: usize = 32;
const _: () = assert!(crate::terrain::storage::cell::Material::COUNT <= MAX_MATERIALS);

/// The 8 samples of one cube as material contributions: sample `i` adds
/// `values[i]` (its solid occupancy) to material `ids[i]`. Samples with value
/// 0 contribute nothing; ids at or above [`MAX_MATERIALS`] are ignored.
///
/// Contributions are computed with SWAR (8 samples in one `u64`) so no
/// per-material table is written: writes to a small table in memory, one per
/// sample, serialize on store forwarding and dominated the mesher's profile.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CornerMaterials {
    ids: u64,
    values: u64,
    /// Bit `m` set when material `m` contributes.
    mask: u32,
}

const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const HIGH: u64 = 0x8080_8080_8080_8080;
const ONES: u64 = 0x0101_0101_0101_0101;

/// High bit of each byte of `x` set where that byte is non-zero.
#[inline]
fn nonzero_bytes_high(x: u64) -> u64 {
    (x | ((x & LOW7) + LOW7)) & HIGH
}

impl CornerMaterials {
    /// Contributions of 8 samples: material `ids[i]` with solid occupancy `values[i]`.
    #[inline]
    pub fn new(ids: [u8; 8], values: [u8; 8]) -> CornerMaterials {
        let mut mask = 0u32;
        for i in 0..8 {
            let valid = (values[i] > 0) & ((ids[i] as usize) < MAX_MATERIALS);
            mask |= (valid as u32) << (ids[i] & 31);
        }
        // Zero the values of ignored samples so contributions never count them.
        let mut kept = values;
        for i in 0..8 {
            if (ids[i] as usize) >= MAX_MATERIALS {
                kept[i] = 0;
            }
        }
        CornerMaterials {
            ids: u64::from_le_bytes(ids),
            values: u64::from_le_bytes(kept),
            mask,
        }
    }

    /// [`CornerMaterials::new`] for 8 samples packed little-endian (byte `i`
    /// is sample `i`).
    #[inline]
    pub fn from_words(ids: u64, values: u64) -> CornerMaterials {
        CornerMaterials::new(ids.to_le_bytes(), values.to_le_bytes())
    }

    /// Bit `m` set when material `m` contributes.
    #[inline]
    pub fn mask(&self) -> u32 {
        self.mask
    }

    /// The one material all contributing samples share, if they share one.
    #[inline]
    pub fn single(&self) -> Option<u8> {
        (self.mask.count_ones() == 1).then(|| self.mask.trailing_zeros() as u8)
    }

    /// Summed contribution of material `id` (at most 8 × 255).
    #[inline]
    pub fn contribution(&self, id: u8) -> u32 {
        packed_contribution(self.ids, self.values, id)
    }
}

/// Summed value of the bytes of `values` whose byte in `ids` is `id`.
#[inline(always)]
fn packed_contribution(ids: u64, values: u64, id: u8) -> u32 {
    let diff = ids ^ (u64::from(id) * ONES);
    let equal_high = !nonzero_bytes_high(diff) & HIGH;
    let picked = values & ((equal_high >> 7) * 0xff);
    // Pairwise byte sums into four u16 lanes, then a multiply adds the lanes.
    let lanes = (picked & 0x00ff_00ff_00ff_00ff) + ((picked >> 8) & 0x00ff_00ff_00ff_00ff);
    (lanes.wrapping_mul(0x0001_0001_0001_0001) >> 48) as u32
}

/// The material set of one quad.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QuadSet {
    /// Material ids sorted ascending; slots `len..4` repeat `ids[0]` (weight 0).
    pub ids: [u8; 4],
    /// Number of materials in the set (1..=4; 0 only when no vertex has any contribution).
    pub len: u8,
    /// Slot of the dominant material (largest summed contribution).
    pub dominant_slot: u8,
}

/// Chooses the material set of a quad from its 4 vertices' samples: up to 4
/// materials by summed contribution (largest first, ties to the lower id),
/// then sorted by id.
#[inline]
pub fn select_quad_set(vertices: [&CornerMaterials; 4]) -> QuadSet {
    let mask = vertices[0].mask | vertices[1].mask | vertices[2].mask | vertices[3].mask;
    if mask == 0 {
        return QuadSet {
            ids: [0; 4],
            len: 0,
            dominant_slot: 0,
        };
    }
    // Top 4 by (sum desc, id asc), kept sorted best first. Visiting ids in
    // ascending order makes "strictly greater" implement the tie rule.
    let mut top_ids = [0u8; 4];
    let mut top_sums = [0u32; 4];
    let mut top_len = 0usize;
    let mut m = mask;
    while m != 0 {
        let id = m.trailing_zeros() as usize;
        m &= m - 1;
        let sum = vertices[0].contribution(id as u8)
            + vertices[1].contribution(id as u8)
            + vertices[2].contribution(id as u8)
            + vertices[3].contribution(id as u8);
        let mut pos = top_len;
        while pos > 0 && sum > top_sums[pos - 1] {
            pos -= 1;
        }
        if pos < 4 {
            let mut k = top_len.min(3);
            while k > pos {
                top_ids[k] = top_ids[k - 1];
                top_sums[k] = top_sums[k - 1];
                k -= 1;
            }
            top_ids[pos] = id as u8;
            top_sums[pos] = sum;
            top_len = (top_len + 1).min(4);
        }
    }
    let dominant_id = top_ids[0];
    let mut ids = [top_ids[0]; 4];
    ids[..top_len].copy_from_slice(&top_ids[..top_len]);
    ids[..top_len].sort_unstable();
    let first = ids[0];
    for slot in ids.iter_mut().skip(top_len) {
        *slot = first;
    }
    let dominant_slot = ids[..top_len]
        .iter()
        .position(|&x| x == dominant_id)
        .unwrap_or(0) as u8;
    QuadSet {
        ids,
        len: top_len as u8,
        dominant_slot,
    }
}

impl QuadSet {
    /// A compact identity of the set: bit `id` for each material of the set,
    /// plus the dominant slot at bit 40. Two sets are equal exactly when
    /// their keys are.
    #[inline]
    pub fn key(&self) -> u64 {
        let mut bits = 0u64;
        for k in 0..4 {
            if k < self.len as usize {
                bits |= 1 << (self.ids[k] & 31);
            }
        }
        bits | (self.dominant_slot as u64) << 40
    }

    /// The set with identity `key` (see [`QuadSet::key`]).
    #[inline]
    pub fn from_key(key: u64) -> QuadSet {
        // Ids are collected in one word (see `weights_from_contributions`),
        // without branches: how many a set holds is unpredictable in a
        // mesh with blended materials.
        let bits = key as u32;
        let len = bits.count_ones().min(4);
        // The lowest 4 set bits; an empty set's ids are all 0.
        let mut rest = bits;
        let mut lowest = [0u32; 4];
        for id in &mut lowest {
            *id = if rest == 0 { 0 } else { rest.trailing_zeros() };
            rest &= rest.wrapping_sub(1);
        }
        // Padding repeats the first id.
        let mut ids = 0u32;
        for (slot, &id) in lowest.iter().enumerate() {
            let id = if (slot as u32) < len { id } else { lowest[0] };
            ids |= id << (8 * slot);
        }
        QuadSet {
            ids: ids.to_le_bytes(),
            len: len as u8,
            dominant_slot: (key >> 40) as u8,
        }
    }
}

/// [`select_quad_set`] for the common case of at most 4 materials among
/// the quad's 4 vertices, each with some contribution, from their material
/// masks alone: the set is then every material, and its dominant slot only
/// matters to a vertex without contribution, of which there is none. Returns
/// the set's [`QuadSet::key`] with dominant slot 0, or `None` when the case
/// does not apply.
#[inline(always)]
pub fn select_small_quad_set(masks: [u32; 4]) -> Option<u64> {
    let union = masks[0] | masks[1] | masks[2] | masks[3];
    // Clearing the 4 lowest bits leaves nothing when at most 4 are set.
    let mut rest = union;
    for _ in 0..4 {
        rest &= rest.wrapping_sub(1);
    }
    let all_contribute = masks[0] != 0 && masks[1] != 0 && masks[2] != 0 && masks[3] != 0;
    (rest == 0 && all_contribute).then_some(union as u64)
}

/// Largest total contribution of one vertex: 8 samples × 255.
const MAX_VERTEX_TOTAL: usize = 8 * 255;

/// `floor(numerator / total)` for `numerator <= 255 · total` and
/// `1 <= total <= MAX_VERTEX_TOTAL`, by one correctly rounded `f32`
/// division (4 of them, one per slot, fit in one SIMD division; an integer
/// division per vertex dominated the weights).
///
/// Exact: both operands are integers below 2^24, so they convert exactly.
/// When `n / t` is an integer the division returns it exactly. Otherwise
/// `n / t = k + r / t` with `1 <= r <= t - 1`, at least `1 / t >= 2^-11`
/// below `k + 1`, while the rounding error of a quotient below 256 is at most
/// `256 · 2^-24 = 2^-16`: the rounded quotient stays in `[k, k + 1)` and
/// truncates to `k`. A test checks every pair.
#[inline(always)]
fn floor_quotient(numerator: u32, total: u32) -> u32 {
    debug_assert!(numerator <= 255 * total && total as usize <= MAX_VERTEX_TOTAL);
    // Both below 2^24, so exact through `i32` (signed conversions are single
    // SIMD instructions; unsigned ones are not).
    let q = numerator as i32 as f32 / total as i32 as f32;
    // SAFETY: `q` is finite and in [0, 255] (numerator <= 255 · total,
    // total >= 1), so it truncates to an `i32` without overflow; this skips
    // the saturation code of `as`, which kept the division from vectorizing.
    unsafe { q.to_int_unchecked::<i32>() as u32 }
}

/// The 8-bit weights for `set` of a vertex whose contributing samples all
/// have material `id`: 255 on `id`'s slot, or on the dominant slot when the
/// set lacks `id` (the vertex then has no contribution in it). Equal to
/// [`vertex_weights`] for such a vertex, without computing contributions.
#[inline(always)]
pub fn single_material_weights(id: u8, set: &QuadSet) -> [u8; 4] {
    if set.len <= 1 {
        return [255, 0, 0, 0];
    }
    let mut slot = set.dominant_slot & 3;
    for k in (0..4).rev() {
        if k < set.len && set.ids[k as usize] == id {
            slot = k;
        }
    }
    (255u32 << (8 * slot)).to_le_bytes()
}

/// A vertex's 8-bit weights for `set`: its own contributions to the set's
/// materials scaled to sum to exactly 255 (floor, with the rounding remainder
/// given to the largest contribution, ties to the lower slot). A vertex with no
/// contribution in the set gives 255 to the set's dominant material.
#[inline(always)]
pub fn vertex_weights(corners: &CornerMaterials, set: &QuadSet) -> [u8; 4] {
    weights_from_words(corners.ids, corners.values, set)
}

/// [`vertex_weights`] for 8 samples packed little-endian (byte `i` is sample
/// `i`, as [`CornerMaterials::from_words`] takes them), without building the
/// material mask that weights do not need.
#[inline(always)]
pub fn weights_from_words(ids: u64, values: u64, set: &QuadSet) -> [u8; 4] {
    // Values of ids >= MAX_MATERIALS (32: bytes with any of bits 5..7) do
    // not count, even for a set naming such an id.
    let foreign = nonzero_bytes_high(ids & 0xe0e0_e0e0_e0e0_e0e0);
    let values = values & !((foreign >> 7) * 0xff);
    weights_from_contributions(slot_contributions(ids, values, set), set)
}

/// The contributions of 8 samples (packed as [`weights_from_words`] takes
/// them) to each slot of `set`: slot `k < set.len` sums the values of the
/// samples whose id is `set.ids[k]`; slots `set.len..` are 0.
#[inline(always)]
fn slot_contributions(ids: u64, values: u64, set: &QuadSet) -> [u32; 4] {
    #[cfg(target_arch = "x86_64")]
    {
        slot_contributions_sse2(ids, values, set)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        slot_contributions_swar(ids, values, set)
    }
}

/// [`slot_contributions`] one slot after another, in `u64` words (the
/// reference the SIMD form is tested against).
#[inline(always)]
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn slot_contributions_swar(ids: u64, values: u64, set: &QuadSet) -> [u32; 4] {
    // One value, not element-wise stores: reading those back as a vector
    // would stall on store forwarding. A plain loop rather than a closure:
    // the closure was compiled out of line, with its captures passed through
    // memory, and cost the mesher ~12%.
    let mut c = [0u32; 4];
    for (k, ck) in c.iter_mut().enumerate() {
        if k < set.len as usize {
            *ck = packed_contribution(ids, values, set.ids[k]);
        }
    }
    c
}

/// [`slot_contributions`] two slots to an SSE2 register (part of every
/// x86-64 CPU): the 8 sample ids are compared bytewise with a slot's id
/// repeated 8 times, the matching values kept, and `psadbw` against zero
/// sums the 8 bytes of each half. About a tenth of the instructions of
/// four [`packed_contribution`] calls.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn slot_contributions_sse2(ids: u64, values: u64, set: &QuadSet) -> [u32; 4] {
    use std::arch::x86_64::{
        _mm_and_si128, _mm_cmpeq_epi8, _mm_cvtsi128_si32, _mm_sad_epu8, _mm_set_epi64x,
        _mm_set1_epi64x, _mm_setzero_si128, _mm_srli_si128,
    };
    // Slots past the set's length repeat its first id; their sums are
    // dropped below.
    let slot_word = |k: usize| (u64::from(set.ids[k]) * ONES) as i64;
    // SAFETY: SSE2 is part of the x86-64 baseline, so these intrinsics are
    // available on every CPU this code runs on; they touch registers only.
    let sums = unsafe {
        let id_words = _mm_set1_epi64x(ids as i64);
        let value_words = _mm_set1_epi64x(values as i64);
        let zero = _mm_setzero_si128();
        let pair = |lo: usize, hi: usize| {
            let slot_ids = _mm_set_epi64x(slot_word(hi), slot_word(lo));
            let picked = _mm_and_si128(_mm_cmpeq_epi8(id_words, slot_ids), value_words);
            let sad = _mm_sad_epu8(picked, zero);
            [
                _mm_cvtsi128_si32(sad) as u32,
                _mm_cvtsi128_si32(_mm_srli_si128::<8>(sad)) as u32,
            ]
        };
        let [c0, c1] = pair(0, 1);
        let [c2, c3] = pair(2, 3);
        [c0, c1, c2, c3]
    };
    let mut c = [0u32; 4];
    for k in 0..4 {
        c[k] = if k < set.len as usize { sums[k] } else { 0 };
    }
    c
}

/// [`vertex_weights`] from the vertex's contributions `c` to the slots of
/// `set` (slots `set.len..` must be 0).
#[inline(always)]
fn weights_from_contributions(c: [u32; 4], set: &QuadSet) -> [u8; 4] {
    // The weights are assembled in one word: writing single bytes of an
    // array and reading it back whole stalls on store forwarding.
    if set.len <= 1 {
        return [255, 0, 0, 0];
    }
    let total: u32 = c[0] + c[1] + c[2] + c[3];
    if total == 0 {
        return (255u32 << (8 * (set.dominant_slot & 3))).to_le_bytes();
    }
    // floor(c·255 / total). Slots past the set have no contribution, so they
    // get 0 and never are the largest.
    debug_assert!(total as usize <= MAX_VERTEX_TOTAL);
    let mut packed = 0u32;
    let mut assigned = 0u32;
    let mut largest = 0u32;
    let mut largest_c = c[0];
    for (k, &ck) in c.iter().enumerate() {
        let v = floor_quotient(ck * 255, total);
        packed |= v << (8 * k);
        assigned += v;
        if ck > largest_c {
            largest_c = ck;
            largest = k as u32;
        }
    }
    // The weights sum to 255, so adding the remainder never carries out of its byte.
    (packed + ((255 - assigned) << (8 * largest))).to_le_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples adding up to the given per-material sums (255 per sample at most).
    fn acc(pairs: &[(u8, u32)]) -> CornerMaterials {
        let mut ids = [0u8; 8];
        let mut values = [0u8; 8];
        let mut n = 0;
        for &(id, mut s) in pairs {
            while s > 0 {
                let v = s.min(255);
                ids[n] = id;
                values[n] = v as u8;
                n += 1;
                s -= v;
            }
        }
        CornerMaterials::new(ids, values)
    }

    #[test]
    fn contributions_ignore_empty_and_foreign_samples() {
        let c = CornerMaterials::new(
            [3, 3, 9, 3, 3, 3, 3, 3],
            [200, 100, 0, 255, 255, 255, 255, 255],
        );
        assert_eq!(c.single(), Some(3));
        assert_eq!(c.contribution(3), 200 + 100 + 5 * 255);
        assert_eq!(c.contribution(9), 0);
        let c = CornerMaterials::new([3, 3, 9, 40, 3, 3, 3, 3], [255; 8]);
        assert_eq!(c.single(), None);
        assert_eq!(c.contribution(9), 255);
        assert_eq!(c.contribution(40), 0, "ids >= 32 never contribute");
        assert_eq!(c.mask(), (1 << 3) | (1 << 9));
        assert_eq!(CornerMaterials::default().single(), None);
    }

    #[test]
    fn set_takes_top_four_then_sorts_by_id() {
        let a = acc(&[(9, 100), (3, 50)]);
        let b = acc(&[(5, 80), (7, 10), (2, 10)]);
        let c = acc(&[(3, 40)]);
        let d = acc(&[(4, 10)]);
        let set = select_quad_set([&a, &b, &c, &d]);
        // Sums: 9→100, 3→90, 5→80, 2→10, 4→10, 7→10; ties at 10 go to the lower id (2).
        assert_eq!(set.ids, [2, 3, 5, 9]);
        assert_eq!(set.len, 4);
        assert_eq!(set.ids[set.dominant_slot as usize], 9);
    }

    #[test]
    fn weights_sum_to_255_with_remainder_on_largest() {
        let set = QuadSet {
            ids: [2, 3, 5, 2],
            len: 3,
            dominant_slot: 0,
        };
        let w = vertex_weights(&acc(&[(2, 1), (3, 1), (5, 1)]), &set);
        assert_eq!(w.iter().map(|&x| x as u32).sum::<u32>(), 255);
        assert_eq!(w, [85, 85, 85, 0]);
        let w = vertex_weights(&acc(&[(2, 100), (3, 200), (5, 7)]), &set);
        assert_eq!(w.iter().map(|&x| x as u32).sum::<u32>(), 255);
        // floor(100*255/307)=83, floor(200*255/307)=166, floor(7*255/307)=5; remainder 1 to slot 1.
        assert_eq!(w, [83, 167, 5, 0]);
    }

    #[test]
    fn simd_slot_contributions_match_the_word_ones() {
        let mut next = crate::terrain::generation::noise::hash_stream(0x5eed);
        for round in 0..20_000 {
            // Ids from a small range so slots often match, foreign ones too.
            let ids = u64::from_le_bytes(std::array::from_fn(|_| {
                let r = next();
                if r.is_multiple_of(7) {
                    32 + (r >> 8) as u8 % 200
                } else {
                    (r >> 8) as u8 % 6
                }
            }));
            let values = next() & [u64::MAX, 0xff00_ff00_00ff_ffff][round % 2];
            let set = QuadSet {
                ids: std::array::from_fn(|_| (next() % 6) as u8),
                len: (next() % 5) as u8,
                dominant_slot: (next() % 4) as u8,
            };
            #[cfg(target_arch = "x86_64")]
            assert_eq!(
                slot_contributions_sse2(ids, values, &set),
                slot_contributions_swar(ids, values, &set),
                "ids {ids:016x} values {values:016x} set {set:?}"
            );
            assert_eq!(
                slot_contributions(ids, values, &set),
                slot_contributions_swar(ids, values, &set)
            );
        }
    }

    #[test]
    fn sets_from_keys_match_the_loop_that_collected_them() {
        // The loop form: ids collected until 4 or no bits are left.
        let looped = |key: u64| {
            let mut ids = [0u8; 4];
            let mut len = 0;
            let mut bits = key as u32;
            while bits != 0 && len < 4 {
                ids[len] = bits.trailing_zeros() as u8;
                bits &= bits - 1;
                len += 1;
            }
            for slot in len..4 {
                ids[slot] = ids[0];
            }
            QuadSet {
                ids,
                len: len as u8,
                dominant_slot: (key >> 40) as u8,
            }
        };
        let mut keys = vec![0u64, 1, 1 << 31, u64::from(u32::MAX), 3 << 40 | 0b1011];
        for n in 0..50_000 {
            let r = crate::terrain::generation::noise::hash1(3, n);
            // Sparse and dense bit sets, and dominant slots 0..=3.
            let bits = if r.is_multiple_of(3) {
                r & (r >> 7) & (r >> 13)
            } else {
                r
            };
            keys.push((bits & 0xffff_ffff) | ((r >> 62) << 40));
        }
        for key in keys {
            assert_eq!(QuadSet::from_key(key), looped(key), "key {key:#x}");
        }
    }

    #[test]
    fn float_division_is_exact_for_every_vertex_total() {
        for total in 1..=MAX_VERTEX_TOTAL as u32 {
            for c in 0..=total {
                let n = c * 255;
                assert_eq!(floor_quotient(n, total), n / total, "{c}/{total}");
            }
        }
    }

    #[test]
    fn single_material_weights_match_the_general_path() {
        let sets = [
            QuadSet {
                ids: [2, 3, 5, 2],
                len: 3,
                dominant_slot: 2,
            },
            QuadSet {
                ids: [3, 9, 3, 3],
                len: 2,
                dominant_slot: 1,
            },
            QuadSet {
                ids: [2, 4, 6, 8],
                len: 4,
                dominant_slot: 3,
            },
            QuadSet {
                ids: [7, 7, 7, 7],
                len: 1,
                dominant_slot: 0,
            },
        ];
        for set in &sets {
            for id in 2..12u8 {
                for values in [[255u8; 8], [0, 0, 0, 9, 200, 0, 1, 255]] {
                    let mut ids = [id; 8];
                    // Empty and foreign samples do not make a second material.
                    ids[0] = 40;
                    ids[1] = 13;
                    let mut values = values;
                    values[1] = 0;
                    let corners = CornerMaterials::new(ids, values);
                    assert_eq!(corners.single(), Some(id));
                    assert_eq!(
                        single_material_weights(id, set),
                        vertex_weights(&corners, set),
                        "id {id}, set {set:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn vertex_without_contribution_gives_all_to_dominant() {
        let set = QuadSet {
            ids: [2, 3, 2, 2],
            len: 2,
            dominant_slot: 1,
        };
        assert_eq!(vertex_weights(&acc(&[(9, 255)]), &set), [0, 255, 0, 0]);
    }
}
