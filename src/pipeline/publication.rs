//! Which finished chunk meshes may become visible together (spec §7, §8).
//!
//! Every edit batch (the chunks one frame's edits dirtied) gets an *epoch*,
//! and every worker result is labelled with the epoch of the newest batch
//! that had touched its chunk when its snapshot was taken: it shows that
//! batch and every earlier one of the chunk, and none after. An edit near a
//! chunk border changes the surface on both sides, so the rule that keeps
//! borders crack-free is: **each batch becomes visible atomically** — after
//! a publication, either every chunk of the batch shows an epoch at or above
//! the batch's, or none of those still waiting does.
//!
//! Unlike merging whole request groups (which, under a steady stream of
//! overlapping edits, chains every pending chunk into one group that waits
//! for all of them), this looks only at results that exist: a chunk whose
//! newest result is too new for a batch that cannot complete yet falls back
//! to an older result it still holds, so earlier edits become visible while
//! later ones are being meshed. The choice is the largest consistent set
//! (a greatest fixpoint: a result is only ever dropped when a batch forces
//! it), split into independent components that can be uploaded and shown
//! one after another.

use std::sync::Arc;
use std::time::Instant;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::mesh::ChunkMesh;
use crate::mesh::water::WaterMesh;
use crate::terrain::storage::coords::ChunkCoord;

/// How good a result is, compared lexicographically: newer content first,
/// then a real level of detail over an editor preview, then the newer
/// request (a level change at the same content).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct ResultKey {
    /// Epoch of the newest edit batch of the chunk the result shows (0: none).
    pub epoch: u64,
    /// True for a mesh at the chunk's requested level, false for a coarser preview.
    pub full: bool,
    /// Serial of the request it answers.
    pub serial: u64,
}

/// A finished result of one chunk, held until it is shown or superseded.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// Its rank.
    pub key: ResultKey,
    /// Level of detail it was meshed at.
    pub level: u8,
    /// The mesh (empty when the chunk owns no surface).
    pub mesh: Arc<ChunkMesh>,
    /// New water surface, when the job re-meshed water.
    pub water: Option<Arc<WaterMesh>>,
}

/// The chunks one frame's edits dirtied, tracked until every one shows them
/// (first visible) and shows them at its requested level (full detail).
#[derive(Clone, Debug)]
pub struct EditBatch {
    /// Its epoch (strictly increasing per batch).
    pub epoch: u64,
    /// When each edit of the batch was made.
    pub edit_times: Vec<Instant>,
    /// Chunks not yet showing an epoch ≥ [`EditBatch::epoch`].
    pub unseen: FxHashSet<ChunkCoord>,
    /// Chunks not yet showing it from a full (non-preview) result; a superset of `unseen`.
    pub coarse: FxHashSet<ChunkCoord>,
    /// Whether any of its chunks has shown it (a batch whose chunks were all
    /// cancelled is dropped without a latency sample).
    pub shown_any: bool,
}

impl EditBatch {
    /// A batch of `chunks` made at `edit_times`.
    pub fn new(epoch: u64, chunks: &FxHashSet<ChunkCoord>, edit_times: Vec<Instant>) -> EditBatch {
        EditBatch {
            epoch,
            edit_times,
            unseen: chunks.clone(),
            coarse: chunks.clone(),
            shown_any: false,
        }
    }
}

/// One set of chunk results to upload and show in the same frame: the
/// candidate index chosen for each chunk.
pub type Component = Vec<(ChunkCoord, usize)>;

/// Chooses the results to show: for every chunk in `candidates` (each list
/// sorted by ascending [`ResultKey`]) and not in `busy` (already being
/// uploaded), the best result such that every batch of `batches` stays
/// atomic, then splits the choice into independent components (chunks that
/// complete a batch together share one). Components that complete the oldest
/// batches come first; within one, chunks are sorted (z, y, x).
pub fn choose_components<'a>(
    batches: impl Iterator<Item = &'a EditBatch> + Clone,
    candidates: &FxHashMap<ChunkCoord, &[Candidate]>,
    busy: &FxHashSet<ChunkCoord>,
) -> Vec<Component> {
    let mut chosen: FxHashMap<ChunkCoord, usize> = candidates
        .iter()
        .filter(|(c, list)| !list.is_empty() && !busy.contains(*c))
        .map(|(&c, list)| (c, list.len() - 1))
        .collect();
    let epoch_of = |chosen: &FxHashMap<ChunkCoord, usize>, c: &ChunkCoord| {
        chosen
            .get(c)
            .and_then(|&i| candidates.get(c).map(|list| list[i].key.epoch))
    };
    // Greatest fixpoint: a blocked batch (one of its waiting chunks will
    // stay below its epoch) forces each of its chunks chosen at or above the
    // epoch down to its best result below it, or out of the choice.
    loop {
        let mut changed = false;
        for batch in batches.clone() {
            let blocked = batch
                .unseen
                .iter()
                .any(|c| epoch_of(&chosen, c).is_none_or(|e| e < batch.epoch));
            if !blocked {
                continue;
            }
            for c in &batch.unseen {
                let Some(&i) = chosen.get(c) else { continue };
                let Some(list) = candidates.get(c) else {
                    continue;
                };
                if list[i].key.epoch < batch.epoch {
                    continue;
                }
                changed = true;
                match list[..i].iter().rposition(|k| k.key.epoch < batch.epoch) {
                    Some(j) => {
                        chosen.insert(*c, j);
                    }
                    None => {
                        chosen.remove(c);
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    group_into_components(batches, chosen)
}

/// Splits `chosen` into components: the waiting chunks of each batch the
/// choice completes are joined (union–find).
fn group_into_components<'a>(
    batches: impl Iterator<Item = &'a EditBatch>,
    chosen: FxHashMap<ChunkCoord, usize>,
) -> Vec<Component> {
    let mut coords: Vec<ChunkCoord> = chosen.keys().copied().collect();
    coords.sort_by_key(|c| (c.0.z, c.0.y, c.0.x));
    let index: FxHashMap<ChunkCoord, usize> =
        coords.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let mut parent: Vec<usize> = (0..coords.len()).collect();
    // Oldest completed batch per root, for ordering.
    let mut oldest: Vec<u64> = vec![u64::MAX; coords.len()];
    fn find(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for batch in batches {
        // After the fixpoint a batch is either complete (every waiting chunk
        // chosen at or above its epoch) or untouched by the choice.
        let members: Vec<usize> = batch
            .unseen
            .iter()
            .filter_map(|c| index.get(c).copied())
            .collect();
        if members.len() != batch.unseen.len() || members.is_empty() {
            continue;
        }
        let root = find(&mut parent, members[0]);
        for &m in &members[1..] {
            let r = find(&mut parent, m);
            if r != root {
                parent[r] = root;
                oldest[root] = oldest[root].min(oldest[r]);
            }
        }
        oldest[root] = oldest[root].min(batch.epoch);
    }
    let mut by_root: FxHashMap<usize, Component> = FxHashMap::default();
    let mut order: Vec<usize> = Vec::new();
    for (i, &c) in coords.iter().enumerate() {
        let root = find(&mut parent, i);
        let entry = by_root.entry(root).or_insert_with(|| {
            order.push(root);
            Vec::new()
        });
        entry.push((c, chosen[&c]));
    }
    order.sort_by_key(|&root| (oldest[root], root));
    order
        .into_iter()
        .filter_map(|root| by_root.remove(&root))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(epoch: u64, serial: u64) -> Candidate {
        Candidate {
            key: ResultKey {
                epoch,
                full: true,
                serial,
            },
            level: 0,
            mesh: Arc::new(ChunkMesh::default()),
            water: None,
        }
    }

    fn batch(epoch: u64, chunks: &[ChunkCoord]) -> EditBatch {
        let set: FxHashSet<ChunkCoord> = chunks.iter().copied().collect();
        EditBatch::new(epoch, &set, vec![])
    }

    fn c(x: i32) -> ChunkCoord {
        ChunkCoord::new(x, 0, 0)
    }

    fn run(batches: &[EditBatch], lists: &[(ChunkCoord, Vec<Candidate>)]) -> Vec<Vec<(i32, u64)>> {
        let map: FxHashMap<ChunkCoord, &[Candidate]> =
            lists.iter().map(|(c, l)| (*c, l.as_slice())).collect();
        choose_components(batches.iter(), &map, &FxHashSet::default())
            .into_iter()
            .map(|comp| {
                comp.into_iter()
                    .map(|(coord, i)| {
                        let list = &lists.iter().find(|(k, _)| *k == coord).unwrap().1;
                        (coord.0.x, list[i].key.epoch)
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn an_incomplete_batch_holds_back_only_its_own_chunks() {
        // Batch 1 {A, B} complete; batch 2 {B, C} lacks C: B falls back to
        // its epoch-1 result and shows batch 1 with A.
        let batches = [batch(1, &[c(0), c(1)]), batch(2, &[c(1), c(2)])];
        let lists = [
            (c(0), vec![cand(1, 1)]),
            (c(1), vec![cand(1, 2), cand(2, 3)]),
        ];
        assert_eq!(run(&batches, &lists), vec![vec![(0, 1), (1, 1)]]);
    }

    #[test]
    fn without_an_older_result_the_chain_waits_as_a_whole() {
        let batches = [batch(1, &[c(0), c(1)]), batch(2, &[c(1), c(2)])];
        // B holds only its epoch-2 result and C has none: nothing can show.
        let lists = [(c(0), vec![cand(1, 1)]), (c(1), vec![cand(2, 3)])];
        assert!(run(&batches, &lists).is_empty());
        // C arrives: all three show together, in one component.
        let lists = [
            (c(0), vec![cand(1, 1)]),
            (c(1), vec![cand(2, 3)]),
            (c(2), vec![cand(2, 4)]),
        ];
        assert_eq!(run(&batches, &lists), vec![vec![(0, 1), (1, 2), (2, 2)]]);
    }

    #[test]
    fn independent_batches_are_separate_components_oldest_first() {
        let batches = [batch(2, &[c(5), c(6)]), batch(1, &[c(0), c(1)])];
        let lists = [
            (c(0), vec![cand(1, 1)]),
            (c(1), vec![cand(1, 2)]),
            (c(5), vec![cand(2, 3)]),
            (c(6), vec![cand(2, 4)]),
            // A level change with no batch: its own component, last.
            (c(9), vec![cand(0, 5)]),
        ];
        assert_eq!(
            run(&batches, &lists),
            vec![vec![(0, 1), (1, 1)], vec![(5, 2), (6, 2)], vec![(9, 0)]]
        );
    }

    #[test]
    fn busy_chunks_count_as_not_yet_showing() {
        let batches = [batch(1, &[c(0), c(1)])];
        let lists = [(c(0), vec![cand(1, 1)]), (c(1), vec![cand(1, 2)])];
        let map: FxHashMap<ChunkCoord, &[Candidate]> =
            lists.iter().map(|(c, l)| (*c, l.as_slice())).collect();
        let busy: FxHashSet<ChunkCoord> = [c(1)].into_iter().collect();
        assert!(choose_components(batches.iter(), &map, &busy).is_empty());
    }
}
