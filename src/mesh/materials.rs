//! Material sets and blend weights on surface vertices (spec §5).
//!
//! Each cube vertex sums the solid occupancy of its 8 samples per material.
//! A quad picks up to 4 materials from its 4 vertices' summed contributions
//! (largest first, ties to the lower id) and sorts them by id; every vertex of
//! the quad then carries that set with its own 8-bit weights summing to exactly
//! 255, so the shader interpolates weights but never material ids.
//! All arithmetic is integer, hence identical on every machine.

/// Solid material contributions of one cube's 8 samples: up to 8 distinct
/// `(material id, summed occupancy)` pairs, in first-seen order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaterialAccumulator {
    ids: [u8; 8],
    sums: [u32; 8],
    len: u8,
}

impl MaterialAccumulator {
    /// Adds `occupancy` (0..=255) of solid material `id`.
    #[inline]
    pub fn add(&mut self, id: u8, occupancy: u32) {
        let len = self.len as usize;
        for i in 0..len {
            if self.ids[i] == id {
                self.sums[i] += occupancy;
                return;
            }
        }
        // 8 samples give at most 8 distinct materials.
        if len < 8 {
            self.ids[len] = id;
            self.sums[len] = occupancy;
            self.len += 1;
        }
    }

    /// The summed contribution of material `id` (0 when absent).
    #[inline]
    pub fn get(&self, id: u8) -> u32 {
        (0..self.len as usize)
            .find(|&i| self.ids[i] == id)
            .map_or(0, |i| self.sums[i])
    }

    /// The `(id, sum)` pairs.
    pub fn entries(&self) -> impl Iterator<Item = (u8, u32)> + '_ {
        (0..self.len as usize).map(|i| (self.ids[i], self.sums[i]))
    }

    /// The only material when exactly one contributes.
    #[inline]
    pub fn single(&self) -> Option<u8> {
        (self.len == 1).then_some(self.ids[0])
    }
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

/// Chooses the material set of a quad from its 4 vertices' contributions:
/// up to 4 materials by summed contribution (largest first, ties to the lower
/// id), then sorted by id.
#[inline]
pub fn select_quad_set(vertices: [&MaterialAccumulator; 4]) -> QuadSet {
    // Fast path: one material everywhere (most of any terrain).
    if let Some(m) = vertices[0].single()
        && vertices[1..].iter().all(|v| v.single() == Some(m))
    {
        return QuadSet {
            ids: [m; 4],
            len: 1,
            dominant_slot: 0,
        };
    }
    let mut ids = [0u8; 32];
    let mut sums = [0u32; 32];
    let mut len = 0usize;
    for v in vertices {
        for (id, s) in v.entries() {
            match ids[..len].iter().position(|&x| x == id) {
                Some(i) => sums[i] += s,
                None => {
                    ids[len] = id;
                    sums[len] = s;
                    len += 1;
                }
            }
        }
    }
    if len == 0 {
        return QuadSet {
            ids: [0; 4],
            len: 0,
            dominant_slot: 0,
        };
    }
    // Partial selection of the top 4 by (sum desc, id asc).
    let mut order: [usize; 32] = std::array::from_fn(|i| i);
    let take = len.min(4);
    for k in 0..take {
        let mut best = k;
        for j in k + 1..len {
            let (a, b) = (order[j], order[best]);
            if sums[a] > sums[b] || (sums[a] == sums[b] && ids[a] < ids[b]) {
                best = j;
            }
        }
        order.swap(k, best);
    }
    let dominant_id = ids[order[0]];
    let mut chosen = [0u8; 4];
    for k in 0..take {
        chosen[k] = ids[order[k]];
    }
    chosen[..take].sort_unstable();
    for k in take..4 {
        chosen[k] = chosen[0];
    }
    let dominant_slot = chosen[..take]
        .iter()
        .position(|&x| x == dominant_id)
        .unwrap_or(0) as u8;
    QuadSet {
        ids: chosen,
        len: take as u8,
        dominant_slot,
    }
}

/// A vertex's 8-bit weights for `set`: its own contributions to the set's
/// materials scaled to sum to exactly 255 (floor, with the rounding remainder
/// given to the largest contribution, ties to the lower slot). A vertex with no
/// contribution in the set gives 255 to the set's dominant material.
#[inline]
pub fn vertex_weights(acc: &MaterialAccumulator, set: &QuadSet) -> [u8; 4] {
    let mut w = [0u8; 4];
    if set.len == 1 {
        w[0] = 255;
        return w;
    }
    let len = set.len as usize;
    let mut c = [0u32; 4];
    for k in 0..len {
        c[k] = acc.get(set.ids[k]);
    }
    let total: u32 = c.iter().sum();
    if total == 0 {
        w[set.dominant_slot as usize] = 255;
        return w;
    }
    let mut assigned = 0u32;
    let mut largest = 0usize;
    for k in 0..len {
        let v = c[k] * 255 / total;
        w[k] = v as u8;
        assigned += v;
        if c[k] > c[largest] {
            largest = k;
        }
    }
    w[largest] += (255 - assigned) as u8;
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(pairs: &[(u8, u32)]) -> MaterialAccumulator {
        let mut a = MaterialAccumulator::default();
        for &(id, s) in pairs {
            a.add(id, s);
        }
        a
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
    fn vertex_without_contribution_gives_all_to_dominant() {
        let set = QuadSet {
            ids: [2, 3, 2, 2],
            len: 2,
            dominant_slot: 1,
        };
        assert_eq!(vertex_weights(&acc(&[(9, 255)]), &set), [0, 255, 0, 0]);
    }
}
