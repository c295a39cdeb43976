//! Material votes of mixed coarse blocks, shared by every coarse gather.
//!
//! A coarse sample's material is a vote over its block and a two-cell border
//! (spec §6), the costliest part of meshing levels 1–3. Each block lies in
//! the padded read region of up to 27 chunks, and an edit re-meshes tens of
//! chunks whose blocks mostly did not change, so votes are cached by what
//! determines them: the level, the block's place in its chunk, and the
//! storages of the chunks its cells and border lie in.
//!
//! A dense storage is named in the cache by a serial number, given the first
//! time a vote reads it and never reused. A pin keyed by the storage's
//! address holds its serial and a `Weak` that tells the same storage from a
//! later one at a reused address. A `Weak` keeps the storage's allocation
//! (its 64 KiB of cells) alive, so [`release_dead_storages`] drops the pins
//! of storages that died, which frees their cells at once; votes that name
//! a dead serial can never match again and are purged as the cache grows.

use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};

use rustc_hash::{FxHashMap, FxHashSet};

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
    /// A uniform storage's value (tagged with [`UNIFORM_TAG`]); a dense
    /// storage's address (as built by [`VoteKey::new`]) or, in the cache's
    /// map, its serial.
    storages: [u64; MAX_BLOCK_CHUNKS],
}

/// Tag of a uniform storage's id (dense addresses and serials are far below it).
const UNIFORM_TAG: u64 = 1 << 63;

fn is_dense_slot(id: u64) -> bool {
    id != 0 && id & UNIFORM_TAG == 0
}

fn address_of(data: &Arc<[Cell]>) -> u64 {
    Arc::as_ptr(data) as *const Cell as usize as u64
}

impl VoteKey {
    /// The key of the block at chunk-local cell `local` (`0..32` each) of
    /// `level`, reading `storages` (in a fixed order of neighbour offsets).
    /// Returns the key and the dense storages it reads, in slot order.
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
                    address_of(data)
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

/// A dense storage the cache names: its serial, and a `Weak` that keeps its
/// address from being handed to another storage while the pin exists.
struct Pin {
    weak: Weak<[Cell]>,
    serial: u64,
}

impl Pin {
    /// True when `data` is the storage this pin was made for. The `Weak`
    /// keeps the pinned allocation from being reused, so a live storage at
    /// the same address is that very storage.
    fn names(&self, data: &Arc<[Cell]>) -> bool {
        std::ptr::eq(
            self.weak.as_ptr() as *const Cell,
            Arc::as_ptr(data) as *const Cell,
        )
    }
}

#[derive(Default)]
struct VoteCache {
    /// Keyed with serials in place of dense addresses.
    votes: FxHashMap<VoteKey, u8>,
    /// Storage address → pin.
    pins: FxHashMap<u64, Pin>,
    /// The last serial given (serials start at 1).
    last_serial: u64,
    inserts_since_purge: usize,
}

impl VoteCache {
    /// `key` with each dense address replaced by the serial of the storage
    /// in `dense` (slot order); `None` when one of them has no pin.
    fn serial_key(&self, key: &VoteKey, dense: &[&Arc<[Cell]>]) -> Option<VoteKey> {
        let mut out = *key;
        let mut storages = dense.iter();
        for slot in out.storages.iter_mut().filter(|s| is_dense_slot(**s)) {
            let data = storages.next()?;
            let pin = self.pins.get(slot).filter(|p| p.names(data))?;
            *slot = pin.serial;
        }
        Some(out)
    }

    /// Pins every storage of `dense` that has no pin yet.
    fn pin_all(&mut self, dense: &[&Arc<[Cell]>]) {
        for d in dense {
            let address = address_of(d);
            if self.pins.get(&address).is_some_and(|p| p.names(d)) {
                continue;
            }
            self.last_serial += 1;
            let pin = Pin {
                weak: Arc::downgrade(d),
                serial: self.last_serial,
            };
            self.pins.insert(address, pin);
        }
    }

    /// Drops the pins of storages that died (freeing their cells).
    fn release_dead(&mut self) {
        self.pins.retain(|_, p| p.weak.strong_count() > 0);
    }
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

/// The cached vote for `key`, if its dense storages (`dense`, as
/// [`VoteKey::new`] returned them) are the ones it was made from.
pub fn cached_vote(key: &VoteKey, dense: &[&Arc<[Cell]>]) -> Option<u8> {
    let cache = VOTE_CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    let key = cache.serial_key(key, dense)?;
    cache.votes.get(&key).copied()
}

/// Records `vote` for `key`, pinning its dense storages `dense`.
pub fn store_vote(key: VoteKey, dense: &[&Arc<[Cell]>], vote: u8) {
    let mut cache = VOTE_CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    cache.pin_all(dense);
    let Some(key) = cache.serial_key(&key, dense) else {
        // Only a `dense` that does not match `key`'s dense slots (not what
        // `VoteKey::new` returns): nothing sound to record.
        return;
    };
    cache.votes.insert(key, vote);
    cache.inserts_since_purge += 1;
    if cache.inserts_since_purge >= purge_interval(cache.votes.len()) {
        purge(&mut cache);
    }
}

/// Drops the pins of dense storages that died since the last call, so
/// their cells are freed now rather than at the next purge. Scans the pins
/// only (one per storage votes read), not the votes.
pub fn release_dead_storages() {
    VOTE_CACHE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .release_dead();
}

/// Inserts before the next purge of a cache of `entries` votes.
fn purge_interval(entries: usize) -> usize {
    PURGE_EVERY_INSERTS.max(entries / PURGE_SCAN_PER_INSERT)
}

/// Drops the pins of dead storages and the entries that name a storage
/// without a pin.
fn purge(cache: &mut VoteCache) {
    cache.inserts_since_purge = 0;
    cache.release_dead();
    let live: FxHashSet<u64> = cache.pins.values().map(|p| p.serial).collect();
    cache.votes.retain(|key, _| {
        key.storages
            .iter()
            .all(|&id| !is_dense_slot(id) || live.contains(&id))
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

    fn cache() -> std::sync::MutexGuard<'static, VoteCache> {
        VOTE_CACHE.lock().unwrap_or_else(PoisonError::into_inner)
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
    fn a_dead_storage_is_unpinned_on_release_and_its_votes_are_purged() {
        let a = dense(Material::SAND);
        let (key, pins) = VoteKey::new(1, [2, 4, 6], [&a].into_iter());
        store_vote(key, &pins, Material::SAND.0);
        let address = key.storages[0];
        let serial = {
            let c = cache();
            let pin = c.pins.get(&address).expect("pinned by the store");
            assert!(pin.names(pins[0]));
            pin.serial
        };
        let mut stored = key;
        stored.storages[0] = serial;
        assert!(cache().votes.contains_key(&stored));
        drop(pins);
        drop(a);
        release_dead_storages();
        let mut c = cache();
        // The pin let go of the cells: another storage could take the
        // address now, and would get a pin with a new serial.
        assert!(c.pins.get(&address).is_none_or(|p| p.serial != serial));
        assert!(c.pins.values().all(|p| p.serial != serial));
        purge(&mut c);
        assert!(!c.votes.contains_key(&stored));
    }

    #[test]
    fn serials_are_never_reused() {
        let a = dense(Material::MUD);
        let b = dense(Material::MUD);
        let (ka, pa) = VoteKey::new(2, [0, 0, 0], [&a].into_iter());
        let (kb, pb) = VoteKey::new(2, [0, 0, 0], [&b].into_iter());
        store_vote(ka, &pa, Material::MUD.0);
        store_vote(kb, &pb, Material::MUD.0);
        let c = cache();
        let sa = c.serial_key(&ka, &pa).expect("pinned").storages[0];
        let sb = c.serial_key(&kb, &pb).expect("pinned").storages[0];
        assert_ne!(sa, sb);
        assert!(is_dense_slot(sa) && is_dense_slot(sb));
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
