//! Material votes of mixed coarse blocks, shared by every coarse gather.
//!
//! A coarse sample's material is a vote over its block and a two-cell border
//! (spec §6), the costliest part of meshing levels 1–3. Each block lies in
//! the padded read region of up to 27 chunks, and an edit re-meshes tens of
//! chunks whose blocks mostly did not change, so votes are cached by what
//! determines them: the level, the block's place in its chunk, and the
//! storages of the chunks its cells and border lie in. A dense storage is
//! named by its address and pinned by a `Weak` while entries name it, so
//! the address cannot be reused for other cells; entries of storages that
//! died are purged as the cache grows.

use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};

use rustc_hash::FxHashMap;

use crate::terrain::storage::cell::Cell;
use crate::terrain::storage::chunk::ChunkCells;

/// The chunks a block's cells and border lie in, at most 2 per axis.
pub const MAX_BLOCK_CHUNKS: usize = 8;

/// What a vote depends on: level, the block's cell position in its own
/// chunk, and the storages it reads (in a fixed order; 0 = none).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VoteKey {
    level: u8,
    local: [u8; 3],
    storages: [u64; MAX_BLOCK_CHUNKS],
}

/// Tag of a uniform storage's id (dense ids are addresses, far below it).
const UNIFORM_TAG: u64 = 1 << 63;

impl VoteKey {
    /// The key of the block at chunk-local cell `local` (`0..32` each) of
    /// `level`, reading `storages` (in a fixed order of neighbour offsets).
    /// Returns the key and the dense storages to pin.
    pub fn new<'a>(
        level: u8,
        local: [u8; 3],
        storages: impl Iterator<Item = &'a ChunkCells>,
    ) -> (VoteKey, Vec<&'a Arc<[Cell]>>) {
        let mut ids = [0u64; MAX_BLOCK_CHUNKS];
        let mut dense = Vec::new();
        for (slot, cells) in ids.iter_mut().zip(storages) {
            *slot = match cells {
                ChunkCells::Uniform(c) => {
                    UNIFORM_TAG
                        | (u64::from(c.material().0) << 8)
                        | u64::from(c.solid_occupancy().max(c.water_occupancy()))
                }
                ChunkCells::Dense(data) => {
                    dense.push(data);
                    Arc::as_ptr(data) as *const Cell as usize as u64
                }
            };
        }
        (
            VoteKey {
                level,
                local,
                storages: ids,
            },
            dense,
        )
    }
}

#[derive(Default)]
struct VoteCache {
    votes: FxHashMap<VoteKey, u8>,
    /// Storage address → weak pin.
    pins: FxHashMap<u64, Weak<[Cell]>>,
    inserts_since_purge: usize,
}

static VOTE_CACHE: LazyLock<Mutex<VoteCache>> = LazyLock::new(|| Mutex::new(VoteCache::default()));

/// Fewest inserts between two purges of dead storages' entries.
const PURGE_EVERY_INSERTS: usize = 4096;
/// A purge also waits for inserts of at least the cache's size over this:
/// a purge scans every entry, so each insert pays for at most this many
/// scanned entries (a fixed interval made purging a large cache a sixth of
/// a streaming flight's CPU).
const PURGE_SCAN_PER_INSERT: usize = 8;
/// Entries above which (after a purge) the cache starts over.
const MAX_ENTRIES: usize = 1 << 18;

fn is_pinned_to(pins: &FxHashMap<u64, Weak<[Cell]>>, data: &Arc<[Cell]>) -> bool {
    let id = Arc::as_ptr(data) as *const Cell as usize as u64;
    pins.get(&id)
        .and_then(Weak::upgrade)
        .is_some_and(|live| Arc::ptr_eq(&live, data))
}

/// The cached vote for `key`, if its dense storages are the ones it was made from.
pub fn cached_vote(key: &VoteKey, dense: &[&Arc<[Cell]>]) -> Option<u8> {
    let cache = VOTE_CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    let vote = *cache.votes.get(key)?;
    dense
        .iter()
        .all(|d| is_pinned_to(&cache.pins, d))
        .then_some(vote)
}

/// Records `vote` for `key`, pinning its dense storages.
pub fn store_vote(key: VoteKey, dense: &[&Arc<[Cell]>], vote: u8) {
    let mut cache = VOTE_CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    for d in dense {
        let id = Arc::as_ptr(d) as *const Cell as usize as u64;
        let live = is_pinned_to(&cache.pins, d);
        if !live {
            cache.pins.insert(id, Arc::downgrade(d));
        }
    }
    cache.votes.insert(key, vote);
    cache.inserts_since_purge += 1;
    if cache.inserts_since_purge >= purge_interval(cache.votes.len()) {
        purge(&mut cache);
    }
}

/// Inserts before the next purge of a cache of `entries` votes.
fn purge_interval(entries: usize) -> usize {
    PURGE_EVERY_INSERTS.max(entries / PURGE_SCAN_PER_INSERT)
}

/// Drops entries that name a storage no longer alive, and their pins.
fn purge(cache: &mut VoteCache) {
    cache.inserts_since_purge = 0;
    cache.pins.retain(|_, w| w.strong_count() > 0);
    let pins = &cache.pins;
    cache.votes.retain(|key, _| {
        key.storages
            .iter()
            .all(|&id| id == 0 || id & UNIFORM_TAG != 0 || pins.contains_key(&id))
    });
    if cache.votes.len() > MAX_ENTRIES {
        cache.votes.clear();
        cache.pins.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::cell::Material;

    fn dense(m: Material) -> ChunkCells {
        ChunkCells::Dense(Arc::from(vec![Cell::full(m); 32 * 32 * 32]))
    }

    #[test]
    fn a_vote_is_found_only_for_the_same_storages() {
        let a = dense(Material::GRASS);
        let b = dense(Material::ROCK);
        let u = ChunkCells::Uniform(Cell::EMPTY);
        let (key, pins) = VoteKey::new(3, [8, 0, 24], [&a, &u].into_iter());
        store_vote(key, &pins, Material::GRASS.0);
        assert_eq!(cached_vote(&key, &pins), Some(Material::GRASS.0));
        // Another storage in the same place (an edit): a different key.
        let (other, other_pins) = VoteKey::new(3, [8, 0, 24], [&b, &u].into_iter());
        assert_ne!(other, key);
        assert_eq!(cached_vote(&other, &other_pins), None);
        // Another place or level in the same storages: a different key.
        let (moved, _) = VoteKey::new(3, [16, 0, 24], [&a, &u].into_iter());
        assert_ne!(moved, key);
        let (finer, _) = VoteKey::new(2, [8, 0, 24], [&a, &u].into_iter());
        assert_ne!(finer, key);
    }

    #[test]
    fn entries_of_dead_storages_are_purged() {
        let a = dense(Material::SAND);
        let (key, pins) = VoteKey::new(1, [2, 4, 6], [&a].into_iter());
        store_vote(key, &pins, Material::SAND.0);
        drop(pins);
        drop(a);
        let mut cache = VOTE_CACHE.lock().unwrap_or_else(PoisonError::into_inner);
        purge(&mut cache);
        assert!(!cache.votes.contains_key(&key));
    }

    #[test]
    fn purges_scan_a_bounded_number_of_entries_per_insert() {
        assert_eq!(purge_interval(0), PURGE_EVERY_INSERTS);
        assert_eq!(purge_interval(PURGE_EVERY_INSERTS), PURGE_EVERY_INSERTS);
        // A full cache: a purge scans MAX_ENTRIES entries, at most
        // PURGE_SCAN_PER_INSERT per insert since the last one.
        let interval = purge_interval(MAX_ENTRIES);
        assert_eq!(interval, MAX_ENTRIES / PURGE_SCAN_PER_INSERT);
        assert!(MAX_ENTRIES / interval <= PURGE_SCAN_PER_INSERT);
    }
}
