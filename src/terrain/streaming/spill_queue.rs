//! Writes of edited chunk columns to the edit store, off the frame thread
//! (spec §12: the frame never waits for disk).
//!
//! An evicted edited column (a spill) or an autosaved one is handed to one
//! writer thread, in order, and its cells stay here, in memory, until the
//! writer reports them stored: a column that is loaded again before its
//! write lands comes from this copy, and a write that fails keeps its copy
//! (retried by the next [`SpillQueue::flush`]), so no edit is ever only on
//! its way to disk. One thread keeps writes of the same column in the order
//! they were made.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;

use rustc_hash::FxHashMap;

use crate::terrain::storage::coords::ColumnCoord;
use crate::terrain::streaming::column_source::{ColumnChunks, EditStore, SourceError};

/// One write for the writer thread.
struct SpillJob {
    column: ColumnCoord,
    ticket: u64,
    chunks: Arc<ColumnChunks>,
}

/// What the writer did with a [`SpillJob`].
struct SpillDone {
    column: ColumnCoord,
    ticket: u64,
    result: Result<(), SourceError>,
}

/// A column whose newest cells are not known to be stored yet.
struct Pending {
    ticket: u64,
    chunks: Arc<ColumnChunks>,
    bytes: usize,
    /// The writer reported this ticket failed: written again by the next flush.
    failed: bool,
}

/// The writer thread and the columns on their way to the store.
pub struct SpillQueue {
    tx: Option<Sender<SpillJob>>,
    done: Receiver<SpillDone>,
    done_tx: Sender<SpillDone>,
    worker: Option<JoinHandle<()>>,
    pending: FxHashMap<ColumnCoord, Pending>,
    next_ticket: u64,
    bytes: usize,
}

impl std::fmt::Debug for SpillQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpillQueue")
            .field("pending", &self.pending.len())
            .field("bytes", &self.bytes)
            .finish()
    }
}

impl SpillQueue {
    /// A queue writing to `store` on its own thread.
    pub fn new(store: Arc<dyn EditStore>) -> SpillQueue {
        let (done_tx, done) = channel();
        let mut queue = SpillQueue {
            tx: None,
            done,
            done_tx,
            worker: None,
            pending: FxHashMap::default(),
            next_ticket: 1,
            bytes: 0,
        };
        queue.start_writer(store);
        queue
    }

    fn start_writer(&mut self, store: Arc<dyn EditStore>) {
        let (tx, rx) = channel::<SpillJob>();
        let done_tx = self.done_tx.clone();
        let worker = std::thread::Builder::new()
            .name("strata-spill-writer".into())
            .spawn(move || {
                for job in rx {
                    let result = store.store_edited(job.column, &job.chunks);
                    // A closed channel: the queue is gone, nobody waits.
                    let _ = done_tx.send(SpillDone {
                        column: job.column,
                        ticket: job.ticket,
                        result,
                    });
                }
            });
        match worker {
            Ok(handle) => {
                self.tx = Some(tx);
                self.worker = Some(handle);
            }
            Err(e) => {
                // No thread: every write stays pending (in memory) and is
                // retried by flush, which then writes on the calling thread.
                log::error!("cannot start the spill writer: {e}");
                self.tx = None;
                self.worker = None;
            }
        }
    }

    /// Queues the write of `column`'s cells `chunks` (`bytes` in memory).
    /// A newer write of the same column replaces the older one's copy.
    pub fn push(&mut self, column: ColumnCoord, chunks: ColumnChunks, bytes: usize) {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        let chunks = Arc::new(chunks);
        if let Some(old) = self.pending.insert(
            column,
            Pending {
                ticket,
                chunks: Arc::clone(&chunks),
                bytes,
                failed: false,
            },
        ) {
            self.bytes -= old.bytes;
        }
        self.bytes += bytes;
        self.send(column, ticket, chunks);
    }

    fn send(&mut self, column: ColumnCoord, ticket: u64, chunks: Arc<ColumnChunks>) {
        let sent = self.tx.as_ref().is_some_and(|tx| {
            tx.send(SpillJob {
                column,
                ticket,
                chunks,
            })
            .is_ok()
        });
        if !sent && let Some(p) = self.pending.get_mut(&column) {
            p.failed = true;
        }
    }

    /// The cells of `column` still on their way to the store (newest), if any.
    pub fn get(&self, column: ColumnCoord) -> Option<&ColumnChunks> {
        self.pending.get(&column).map(|p| p.chunks.as_ref())
    }

    /// Bytes held by pending writes (they count against the budget).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Columns whose writes have not been confirmed.
    pub fn pending_count(&self) -> usize {
        self.pending.len()
    }

    /// Takes the writer's reports: stored columns leave the queue; failed
    /// ones stay (in memory) for the next flush. Returns the failures.
    pub fn receive(&mut self) -> Vec<SourceError> {
        let mut failures = Vec::new();
        while let Ok(done) = self.done.try_recv() {
            self.note_done(done, &mut failures);
        }
        failures
    }

    fn note_done(&mut self, done: SpillDone, failures: &mut Vec<SourceError>) {
        let current = self
            .pending
            .get(&done.column)
            .is_some_and(|p| p.ticket == done.ticket);
        match done.result {
            Ok(()) if current => {
                if let Some(p) = self.pending.remove(&done.column) {
                    self.bytes -= p.bytes;
                }
            }
            Ok(()) => {}
            Err(e) => {
                if current && let Some(p) = self.pending.get_mut(&done.column) {
                    p.failed = true;
                }
                failures.push(e);
            }
        }
    }

    /// Waits until every queued write is stored, writing failed ones again
    /// (on the writer, or here when it is gone).
    ///
    /// # Errors
    /// The first write that fails again; the failed columns stay queued.
    pub fn flush(&mut self, store: &dyn EditStore) -> Result<(), SourceError> {
        let retry: Vec<(ColumnCoord, u64, Arc<ColumnChunks>)> = self
            .pending
            .iter_mut()
            .filter(|(_, p)| p.failed)
            .map(|(c, p)| {
                p.failed = false;
                (*c, p.ticket, Arc::clone(&p.chunks))
            })
            .collect();
        for (column, ticket, chunks) in retry {
            if self.tx.is_some() {
                self.send(column, ticket, chunks);
            } else {
                // No writer: write here, in order.
                let result = store.store_edited(column, &chunks);
                let mut failures = Vec::new();
                self.note_done(
                    SpillDone {
                        column,
                        ticket,
                        result,
                    },
                    &mut failures,
                );
                if let Some(e) = failures.into_iter().next() {
                    return Err(e);
                }
            }
        }
        while self.pending.values().any(|p| !p.failed) {
            let Ok(done) = self.done.recv() else {
                break;
            };
            let mut failures = Vec::new();
            self.note_done(done, &mut failures);
            if let Some(e) = failures.into_iter().next() {
                return Err(e);
            }
        }
        Ok(())
    }

    /// Flushes to the old store, then writes to `store` from now on.
    ///
    /// # Errors
    /// As [`SpillQueue::flush`]; the store is not switched then.
    pub fn switch_store(
        &mut self,
        old: &dyn EditStore,
        store: Arc<dyn EditStore>,
    ) -> Result<(), SourceError> {
        self.flush(old)?;
        self.stop_writer();
        self.start_writer(store);
        Ok(())
    }

    fn stop_writer(&mut self) {
        // Closing the channel ends the writer's loop after its last job.
        self.tx = None;
        if let Some(handle) = self.worker.take()
            && handle.join().is_err()
        {
            log::error!("the spill writer panicked");
        }
    }
}

impl Drop for SpillQueue {
    /// Lets the writer finish every queued write before the process may
    /// exit (a clean exit loses no spill).
    fn drop(&mut self) {
        self.stop_writer();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::streaming::column_source::MemoryEditStore;
    use crate::terrain::{Cell, ChunkCells, ChunkCoord, Material};

    fn column_of(material: Material) -> ColumnChunks {
        vec![(
            ChunkCoord::new(2, 1, 3),
            ChunkCells::Uniform(Cell::full(material)),
        )]
    }

    #[test]
    fn writes_land_in_order_and_the_copy_serves_until_they_do() {
        let store = Arc::new(MemoryEditStore::default());
        let mut q = SpillQueue::new(store.clone() as Arc<dyn EditStore>);
        let c = ColumnCoord::new(2, 3);
        q.push(c, column_of(Material::SAND), 100);
        q.push(c, column_of(Material::SNOW), 100);
        // The newest copy serves reads until the writes are confirmed.
        let snow = Cell::full(Material::SNOW);
        assert_eq!(q.get(c).unwrap()[0].1.get(glam::IVec3::ZERO), snow);
        assert_eq!(q.bytes(), 100);
        q.flush(store.as_ref()).unwrap();
        assert_eq!(q.pending_count(), 0);
        assert_eq!(q.bytes(), 0);
        assert!(q.get(c).is_none());
        let stored = store.load_edited(c).unwrap().unwrap();
        assert_eq!(stored[0].1.get(glam::IVec3::ZERO), snow);
    }

    /// A store whose writes fail until `healthy` is set.
    #[derive(Debug, Default)]
    struct FlakyStore {
        inner: MemoryEditStore,
        healthy: std::sync::atomic::AtomicBool,
    }

    impl EditStore for FlakyStore {
        fn load_edited(&self, column: ColumnCoord) -> Result<Option<ColumnChunks>, SourceError> {
            self.inner.load_edited(column)
        }
        fn store_edited(
            &self,
            column: ColumnCoord,
            chunks: &[(ChunkCoord, ChunkCells)],
        ) -> Result<(), SourceError> {
            if self.healthy.load(std::sync::atomic::Ordering::SeqCst) {
                self.inner.store_edited(column, chunks)
            } else {
                Err(SourceError::Io {
                    column,
                    message: "disk full".into(),
                })
            }
        }
        fn edited_columns(&self) -> Result<Vec<ColumnCoord>, SourceError> {
            self.inner.edited_columns()
        }
    }

    #[test]
    fn a_failed_write_keeps_its_cells_and_is_written_again_by_flush() {
        let store = Arc::new(FlakyStore::default());
        let mut q = SpillQueue::new(store.clone() as Arc<dyn EditStore>);
        let c = ColumnCoord::new(-4, 9);
        q.push(c, column_of(Material::SLATE), 64);
        assert!(q.flush(store.as_ref()).is_err());
        assert_eq!(q.pending_count(), 1, "the cells are still held");
        assert!(q.get(c).is_some());
        store
            .healthy
            .store(true, std::sync::atomic::Ordering::SeqCst);
        q.flush(store.as_ref()).unwrap();
        assert_eq!(q.pending_count(), 0);
        assert!(store.load_edited(c).unwrap().is_some());
    }
}
