//! Streaming worlds (spec §12): where chunk columns come from
//! ([`column_source::ColumnSource`]) and where edited ones go when they
//! leave memory, which columns stay resident ([`residency`]), the queue of
//! columns waiting to be written ([`spill_queue`]), and the point queries
//! and per-column summaries the levels above the chunk read
//! ([`surface_sampler`], [`column_summary`]).

pub mod column_source;
pub mod column_summary;
pub mod residency;
pub mod spill_queue;
pub mod surface_sampler;
pub mod waiting_loads;
