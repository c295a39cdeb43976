//! A vote among material ids: every id a cell can hold (256) has a tally,
//! and a bit set of the ids that got votes keeps both clearing and picking
//! the winner proportional to the ids voted for, not to the 256 ids (a
//! coarse block usually sees one to three materials).

use crate::terrain::storage::cell::Material;

/// Tallies per material id, and which ids hold some.
#[derive(Clone, Debug)]
pub struct MaterialVotes {
    tally: [u32; Material::ID_COUNT],
    /// Bit `id` set once `id` got a vote.
    voted: [u64; 4],
}

impl Default for MaterialVotes {
    fn default() -> MaterialVotes {
        MaterialVotes {
            tally: [0; Material::ID_COUNT],
            voted: [0; 4],
        }
    }
}

impl MaterialVotes {
    /// Adds `weight` to material `id`'s tally.
    #[inline]
    pub fn add(&mut self, id: u8, weight: u32) {
        self.voted[usize::from(id >> 6)] |= 1 << (id & 63);
        self.tally[usize::from(id)] += weight;
    }

    /// The id with the largest tally, ties to the lower id (0 when nobody
    /// voted), and clears every tally for the next vote.
    #[inline]
    pub fn take_winner(&mut self) -> u8 {
        let mut best = 0u8;
        let mut best_tally = 0u32;
        for word in 0..4 {
            let mut bits = self.voted[word];
            while bits != 0 {
                let id = (word * 64) as u32 + bits.trailing_zeros();
                bits &= bits - 1;
                let tally = std::mem::take(&mut self.tally[id as usize]);
                // Ids come in ascending order, so "strictly greater" keeps
                // ties with the lower id.
                if tally > best_tally {
                    best_tally = tally;
                    best = id as u8;
                }
            }
            self.voted[word] = 0;
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_tally_wins_ties_go_to_the_lower_id_and_the_next_vote_starts_empty() {
        let mut votes = MaterialVotes::default();
        votes.add(200, 5);
        votes.add(3, 7);
        votes.add(200, 2);
        votes.add(64, 7);
        // 3 and 200 tie at 7 with 64; the lowest id of the tie wins.
        assert_eq!(votes.take_winner(), 3);
        assert_eq!(votes.tally, [0; Material::ID_COUNT]);
        votes.add(255, 1);
        assert_eq!(votes.take_winner(), 255);
        assert_eq!(votes.take_winner(), 0, "nobody voted");
    }
}
