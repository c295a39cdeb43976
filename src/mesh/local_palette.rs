//! A chunk's own material palette, so the mesher's 32-bit material sets
//! serve every id a cell can hold (256).
//!
//! The material sets of Surface Nets quads (spec §5) are bit sets of 32
//! ids: one word, which keeps the mesher's inner loop fast. A world's
//! library may use any id up to 255, but one chunk and its padding rarely
//! hold more than a handful. When a field holds an id of 32 or more, its
//! distinct ids are renumbered in order (Air and Water keep 0 and 1; the
//! solids follow from 2, smallest id first), the field is meshed in those
//! local ids, and each vertex's ids are mapped back. The renumbering keeps
//! the order of ids, so the tie rules (ties to the lower id) and the sorted
//! sets come out exactly as a 256-bit set would give them.
//!
//! A field with more than [`MAX_LOCAL_SOLIDS`] distinct solid materials
//! (a 144-stud neighbourhood painted with 31 or more) keeps the most common
//! ones, ties to the lower id; the others draw as the most common solid of
//! the field, and [`LocalPalette::merged_materials`] counts them so the
//! pipeline can say so.

use super::field::SampleField;
use super::materials::MAX_MATERIALS;
use crate::terrain::storage::cell::Material;

/// Solid materials one field can mesh exactly: the 32 ids of a quad set,
/// less Air and Water.
pub const MAX_LOCAL_SOLIDS: usize = MAX_MATERIALS - 2;

/// The renumbering of one field's material ids.
#[derive(Clone, Debug)]
pub struct LocalPalette {
    /// The id each local id stands for.
    global_of_local: [u8; MAX_MATERIALS],
    /// Distinct solid materials that had no local id of their own.
    merged: u32,
}

impl LocalPalette {
    /// True when `field` holds an id of 32 or more and so needs a palette:
    /// one OR over the ids (below 32 exactly when no byte has bits 5..7).
    pub fn needed(field: &SampleField) -> bool {
        field.material.iter().fold(0u8, |acc, &m| acc | m) >= MAX_MATERIALS as u8
    }

    /// The palette `field` needs, writing its renumbered copy into `local`
    /// (reusing its buffers); `None` when every id is already below 32
    /// (the field meshes as it is, and `local` is untouched).
    pub fn localize(field: &SampleField, local: &mut SampleField) -> Option<LocalPalette> {
        if !LocalPalette::needed(field) {
            return None;
        }
        let mut counts = [0u32; Material::ID_COUNT];
        for &m in &field.material {
            counts[usize::from(m)] += 1;
        }
        let mut solids: Vec<u8> = (2..=u8::MAX)
            .filter(|&m| counts[usize::from(m)] > 0)
            .collect();
        let mut merged = 0;
        let mut most_common = None;
        if solids.len() > MAX_LOCAL_SOLIDS {
            // Most samples first, ties to the lower id; the rest merge.
            solids.sort_by_key(|&m| (std::cmp::Reverse(counts[usize::from(m)]), m));
            most_common = solids.first().copied();
            merged = (solids.len() - MAX_LOCAL_SOLIDS) as u32;
            solids.truncate(MAX_LOCAL_SOLIDS);
            solids.sort_unstable();
        }
        let mut global_of_local = [0u8; MAX_MATERIALS];
        global_of_local[1] = Material::WATER.0;
        let mut local_of_global = [0u8; Material::ID_COUNT];
        local_of_global[1] = 1;
        for (k, &m) in solids.iter().enumerate() {
            global_of_local[k + 2] = m;
            local_of_global[usize::from(m)] = (k + 2) as u8;
        }
        if let Some(kept) = most_common {
            let to = local_of_global[usize::from(kept)];
            for m in 2..=u8::MAX {
                if counts[usize::from(m)] > 0 && local_of_global[usize::from(m)] == 0 {
                    local_of_global[usize::from(m)] = to;
                }
            }
        }
        local.clone_from(field);
        for m in local.material.iter_mut() {
            *m = local_of_global[usize::from(*m)];
        }
        Some(LocalPalette {
            global_of_local,
            merged,
        })
    }

    /// Maps vertex material ids from local ids back to the world's.
    pub fn restore(&self, ids: &mut [[u8; 4]]) {
        for set in ids {
            *set = set.map(|m| self.global_of_local[usize::from(m) & (MAX_MATERIALS - 1)]);
        }
    }

    /// Distinct solid materials the field held past [`MAX_LOCAL_SOLIDS`],
    /// drawn as its most common solid.
    pub fn merged_materials(&self) -> u32 {
        self.merged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_with(ids: &[u8]) -> SampleField {
        let mut field = SampleField::new(4);
        for (i, m) in field.material.iter_mut().enumerate() {
            *m = ids[i % ids.len()];
        }
        field
    }

    #[test]
    fn fields_below_id_32_mesh_unchanged() {
        let mut local = SampleField::new(4);
        assert!(LocalPalette::localize(&field_with(&[0, 1, 2, 31]), &mut local).is_none());
    }

    #[test]
    fn library_ids_renumber_in_order_and_map_back() {
        let field = field_with(&[0, 200, 1, 40, 3, 200]);
        let mut local = SampleField::new(4);
        let palette = LocalPalette::localize(&field, &mut local).expect("ids past 31");
        // Air 0, Water 1, then 3, 40, 200 in order.
        assert_eq!(&local.material[..6], &[0, 4, 1, 3, 2, 4]);
        assert_eq!(palette.merged_materials(), 0);
        let mut ids = vec![[2, 3, 4, 2], [4, 4, 4, 4]];
        palette.restore(&mut ids);
        assert_eq!(ids, vec![[3, 40, 200, 3], [200, 200, 200, 200]]);
    }

    #[test]
    fn past_thirty_solids_the_rarest_merge_into_the_most_common_and_are_counted() {
        // 34 solids: id 100 most common, ids 2..=34 once each except 2..=5
        // twice; the four rarest with the highest ids (31..=34) merge.
        let mut ids: Vec<u8> = vec![100; 10];
        ids.extend(2..=34u8);
        ids.extend(2..=5u8);
        let mut field = SampleField::new(4);
        field.material.fill(0);
        field.material[..ids.len()].copy_from_slice(&ids);
        let mut local = SampleField::new(4);
        let palette = LocalPalette::localize(&field, &mut local).expect("id 100");
        assert_eq!(palette.merged_materials(), 4);
        let hundred = local.material[0];
        let mut back = vec![[hundred; 4]];
        palette.restore(&mut back);
        assert_eq!(back, vec![[100; 4]]);
        // Ids 31..=34 (indices 39..=42) draw as 100.
        assert!(local.material[39..43].iter().all(|&m| m == hundred));
        // Ids 2..=30 keep their own local ids, in order.
        let kept: Vec<u8> = local.material[10..39].to_vec();
        assert!(kept.windows(2).all(|w| w[0] < w[1]), "{kept:?}");
    }
}
