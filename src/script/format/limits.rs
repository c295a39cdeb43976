//! The script format's limits: frame numbers, path lengths, file size,
//! replay length and the work budget a loaded script must fit in.

/// Default frame rate of a replay, frames per second.
pub const DEFAULT_FRAME_RATE_HZ: f64 = 60.0;

/// Largest frame number a script may use (about 4.6 hours at 60 Hz).
pub const MAX_SCRIPT_FRAME: u32 = 1_000_000;

/// Most points a stroke path may have.
pub const MAX_PATH_POINTS: usize = 10_000;

/// Most cells of brush work all of a script's entries may cost, estimated
/// when the script is parsed (see
/// [`Script::estimated_work_cells`](super::script::Script::estimated_work_cells)):
/// a brush application costs its bounding box, `(2 × radius)³` cells, plus
/// [`APPLICATION_COST_CELLS`], and a
/// stroke applies the brush once plus once every `spacing × radius` along
/// its path; `generate` costs its box; `fill`, `clear` and `copy` cost their
/// box times [`COPY_CELL_COST`], a paste the largest copy, an undo or redo
/// the largest entry times [`COPY_CELL_COST`]. Measured: a Smooth stroke of
/// radius 64 along 2048 studs at spacing 0.05 (3.4 × 10⁸ cells) took 42 s in
/// the test build on a shared 2-core machine, about 10⁷ cells a second, so
/// 3 × 10⁸ cells is about half a minute of brush work (less in a release
/// build); the shipped 1000-stroke session estimates 8.4 × 10⁷.
pub const MAX_SCRIPT_WORK_CELLS: f64 = 3.0e8;

/// The fixed cost of one brush application, in brush cells, charged on top
/// of its box: finding the region, recording it for undo and reporting it
/// cost about 30 µs an application (99,950 applications at radius 1 took
/// 3 s), about 300 cells at the 10⁷ cells a second above; rounded up, so a
/// stroke of many tiny applications is priced by their number.
pub const APPLICATION_COST_CELLS: f64 = 512.0;

/// Most brush applications all of a script's strokes may make.
pub const MAX_SCRIPT_APPLICATIONS: f64 = 500_000.0;

/// Cost of a cell that a fill, clear, copy, paste, undo or redo writes,
/// relative to a brush cell: a 512³ fill with its undo and redo took 1.8 s,
/// about 16 times faster per cell than a brush (and than `generate`).
pub const COPY_CELL_COST: f64 = 1.0 / 16.0;

/// Longest a replay may last in real time, seconds: its last frame divided
/// by `frame_rate_hz` (one hour).
pub const MAX_REPLAY_SECONDS: f64 = 3600.0;

/// Largest script file that is read, bytes (16 MiB).
pub const MAX_SCRIPT_FILE_BYTES: u64 = 16 << 20;
