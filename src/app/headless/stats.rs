//! The statistics of a headless run (`--stats-json`): the figures of the
//! world, the meshing pipeline, the replayed script, the final frame, the
//! collision census and a streaming world's residency.

use crate::app::headless::HeadlessError;

use crate::collision::{CollisionCensus, UpdateReport};
use crate::pipeline::TerrainStreaming;
use crate::pipeline::stats::{LatencySummary, UploadSummary, ms_or_dash};
use crate::terrain::Grid;

/// `{"p50", "max", "count"}` of LOD scan times, ms.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct ScanSummary {
    /// Median scan time.
    pub p50: f64,
    /// Longest scan.
    pub max: f64,
    /// Scans run.
    pub count: usize,
}

impl ScanSummary {
    /// The summary of `samples`, ms; `None` when there are none.
    pub fn of(samples: &mut crate::pipeline::stats::Samples) -> Option<ScanSummary> {
        (samples.count() > 0).then(|| ScanSummary {
            p50: samples.quantile(0.5),
            max: samples.max(),
            count: samples.count(),
        })
    }
}

/// Statistics of a headless run, written by `--stats-json`.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct RenderStats {
    /// Adapter name and backend.
    pub adapter: String,
    /// Stored grid chunks.
    pub chunks: usize,
    /// Chunks with a non-empty mesh.
    pub nonempty_chunks: usize,
    /// Content hash of the grid after the script ([`Grid::content_hash`]),
    /// 16 hex digits: equal for equal cells, whatever the camera.
    pub world_hash: String,
    /// Stored chunks with uniform storage.
    pub uniform_chunks: usize,
    /// `Grid::heap_bytes()`.
    pub grid_bytes: usize,
    /// Volume of the grid's stored-chunk bounds, in cells.
    pub world_volume_cells: u64,
    /// Vertices over all meshes.
    pub vertices: usize,
    /// Triangles over all meshes.
    pub triangles: usize,
    /// Full-world meshing wall time, ms.
    pub mesh_ms: f64,
    /// World generation or import wall time, ms.
    pub world_ms: f64,
    /// A recipe world's stage times and audits (`None` for other worlds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<crate::terrain::recipe::cook::CookReport>,
    /// GPU upload of all chunk meshes at start-up, ms.
    pub initial_upload_ms: f64,
    /// Chunks with a meshing request not yet visible (after the script, if any).
    pub queue_len: usize,
    /// Results published (uploaded) in the last replayed frame.
    pub results_published_last_frame: usize,
    /// Upload time of the last replayed frame, ms.
    pub upload_ms_last_frame: f64,
    /// Edit to the presentation of the first frame that shows it (any
    /// level, previews included; upload and draw included), over the
    /// scripted session, ms (`null` when no edit was shown).
    pub edit_to_visible_ms: Option<LatencySummary>,
    /// Edit to the presentation of the first frame that shows it at every
    /// chunk's requested level of detail, ms (`null` when none).
    pub edit_to_full_detail_ms: Option<LatencySummary>,
    /// Edit to the publication step that made it visible (meshing and
    /// upload, without the frame's draw), ms (`null` when none).
    pub edit_to_published_ms: Option<LatencySummary>,
    /// Draw-and-present time of the replayed frames that showed something
    /// new, ms (`null` when no frame was presented).
    pub present_ms: Option<UploadSummary>,
    /// Replayed frames drawn and presented (those that showed something
    /// new; 0 with `--no-replay-frames`).
    pub presented_frames: u32,
    /// Whether those frames were drawn (false with `--no-replay-frames`:
    /// latencies then end at publication).
    pub replay_frames_drawn: bool,
    /// Per-frame upload time over frames that uploaded, ms (`null` when
    /// no frame uploaded).
    pub upload_ms: Option<UploadSummary>,
    /// Most results published in one frame.
    pub max_results_per_frame: usize,
    /// Triangles (surface and skirts) of the shown meshes per level of detail.
    pub triangles_by_level: Vec<usize>,
    /// Draw calls of the final frame (terrain chunks, horizon nodes, water).
    pub draws: usize,
    /// Triangles the final frame drew (terrain chunks, horizon nodes, water).
    pub drawn_triangles: usize,
    /// Chunks with a mesh per level of detail.
    pub chunks_by_level: [usize; 4],
    /// Shown chunk meshes that draw some materials as another (more than
    /// 30 solid materials near one chunk).
    pub merged_material_chunks: usize,
    /// Materials those chunks draw as another, summed over them.
    pub merged_materials: usize,
    /// LOD scan time over the run, ms (`null` when no scan ran).
    pub lod_scan_ms: Option<ScanSummary>,
    /// From an edit to the first frame whose horizon nodes all show it, ms
    /// (spec §13; `null` without a horizon or edits).
    pub edit_to_horizon_ms: Option<ScanSummary>,
    /// Horizon nodes built and kept at the end.
    pub horizon_nodes: usize,
    /// Boundary vertices on which equal-level neighbours disagree, plus
    /// the gaps in low-poly walls (must be 0).
    pub seam_audit_mismatches: usize,
    /// Audits of the shown low-poly meshes: triangle census per
    /// chunk, lattice, winding, downward faces, non-finite vertices and
    /// wall gaps; absent in the smooth style.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub low_poly_audit: Option<crate::pipeline::lowpoly_audit::LowPolyAudit>,
    /// Worker results that arrived from the workers (kept or dropped).
    pub meshed_results: usize,
    /// Of those, coarser editor-only previews.
    pub preview_results: usize,
    /// Worker results dropped on arrival because a better one was already
    /// shown or held (work thrown away).
    pub stale_results: usize,
    /// Worker items skipped before meshing because a better result already existed.
    pub skipped_items: usize,
    /// Results shown without an upload because they equal the drawn mesh.
    pub unchanged_results: usize,
    /// Frames replayed by `--script` (0 without a script).
    pub script_frames: u32,
    /// Strokes of the script that changed the grid.
    pub script_edits: usize,
    /// Wall time of the replay, ms.
    pub script_ms: f64,
    /// Undo steps the replay's history holds at the end.
    pub history_steps: usize,
    /// Bytes of chunk storage only the history holds at the end.
    pub history_bytes: usize,
    /// Most bytes the history held at any point of the replay.
    pub history_peak_bytes: usize,
    /// History steps dropped to stay within the budget.
    pub history_dropped_steps: usize,
    /// The history budget, bytes.
    pub history_budget_bytes: usize,
    /// One frame: record, render, read back, ms.
    pub render_ms: f64,
    /// Chunk meshes the final frame drew (inside the frustum, not hidden
    /// under a horizon node; old meshes fading out of a level change count).
    pub drawn_chunks: usize,
    /// `drawn_chunks` by the level (0–3) of the mesh drawn: compare with
    /// `chunks_by_level`, the meshes held.
    pub drawn_chunks_by_level: [usize; 4],
    /// MSAA samples used.
    pub msaa_samples: u32,
    /// Image size in pixels.
    pub width: u32,
    /// Image size in pixels.
    pub height: u32,
    /// Camera used: position (studs), yaw and pitch (degrees).
    pub camera: [f64; 5],
    /// Whole-world collision figures (with `--stats-json`), counted by a census.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collision: Option<CollisionSummary>,
    /// The script's walk, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub walk: Option<crate::collision::scripted_walk::WalkStats>,
    /// Residency figures of a streaming world (spec §12).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streaming: Option<StreamingSummary>,
    /// A recording's frame times and sky holes (`--record`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<crate::app::sky_holes::CoverageSummary>,
    /// One entry per path the script applied, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<crate::terrain::path::spec::PathReport>,
    /// The world document: layers, operations and the re-derivations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document: Option<crate::script::runner::DocumentSummary>,
    /// The material library's textures on the GPU.
    pub material_textures: Option<crate::terrain::materials::library::TextureMemoryReport>,
}

impl RenderStats {
    /// What the run did, as lines for the terminal: the replay (when a
    /// script ran), the screenshot written to `output`, and a streaming
    /// world's residency.
    pub fn summary_lines(&self, output: &std::path::Path, scripted: bool) -> Vec<String> {
        let mut lines = Vec::new();
        if scripted {
            lines.push(format!(
                "replayed {} frames ({} drawn, p50 {}), {} edits: edit-to-visible p50 {}, p99 {}; \
                 to full detail p99 {}; published p99 {}; upload p99 {}; stale {} of {} meshed",
                self.script_frames,
                self.presented_frames,
                ms_or_dash(self.present_ms.map(|s| s.p50), 0),
                self.script_edits,
                ms_or_dash(self.edit_to_visible_ms.map(|s| s.p50), 1),
                ms_or_dash(self.edit_to_visible_ms.map(|s| s.p99), 1),
                ms_or_dash(self.edit_to_full_detail_ms.map(|s| s.p99), 1),
                ms_or_dash(self.edit_to_published_ms.map(|s| s.p99), 1),
                ms_or_dash(self.upload_ms.map(|s| s.p99), 2),
                self.stale_results,
                self.meshed_results,
            ));
        }
        lines.push(format!(
            "wrote {} ({}x{}, adapter {}, {} chunks in {} draws, {} triangles drawn (chunks, nodes, water), {} in chunk meshes, mesh {:.0} ms, \
             render {:.0} ms)",
            output.display(),
            self.width,
            self.height,
            self.adapter,
            self.drawn_chunks,
            self.draws,
            self.drawn_triangles,
            self.triangles,
            self.mesh_ms,
            self.render_ms
        ));
        if let Some(s) = &self.streaming {
            lines.push(format!(
                "streamed {} columns ({} generated, {} loaded, {} evicted, {} spilled), peak {:.0} MiB of {:.0} MiB, \
                 start-up {:.0} ms over {} frames, {} frames with missing chunks",
                s.resident_columns,
                s.generated,
                s.loaded,
                s.evicted,
                s.spilled,
                s.peak_resident_bytes as f64 / 1048576.0,
                s.budget_bytes as f64 / 1048576.0,
                s.startup_ms,
                s.startup_frames,
                s.frames_with_missing_chunks
            ));
        }
        lines
    }

    /// Copies the replay's figures: frames, edits, time and the history.
    pub fn add_replay(&mut self, replay: &crate::script::ReplayReport) {
        self.script_frames = replay.frames;
        self.script_edits = replay.edits;
        self.script_ms = replay.replay_ms;
        self.history_steps = replay.history_steps;
        self.history_bytes = replay.history_bytes;
        self.history_peak_bytes = replay.history_peak_bytes;
        self.history_dropped_steps = replay.history_dropped_steps;
        self.history_budget_bytes = replay.history_budget_bytes;
        self.document = replay.document.clone();
    }

    /// Copies the level-of-detail scan times and the horizon's figures.
    pub fn add_lod_and_horizon(&mut self, streaming: &mut crate::pipeline::TerrainStreaming) {
        self.lod_scan_ms = ScanSummary::of(streaming.lod_scan_ms_mut());
        self.edit_to_horizon_ms = streaming
            .horizon_mut()
            .and_then(|h| ScanSummary::of(&mut h.edit_to_horizon_ms));
        self.horizon_nodes = streaming.horizon().map_or(0, |h| h.built_count());
    }
}

/// `"streaming"` in `--stats-json`: residency of a streaming world.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct StreamingSummary {
    /// Resident chunks at the end.
    pub resident_chunks: usize,
    /// Resident columns at the end.
    pub resident_columns: usize,
    /// Resident bytes (chunk cells and CPU mesh copies) at the end.
    pub resident_bytes: usize,
    /// Highest resident bytes over the run.
    pub peak_resident_bytes: usize,
    /// The memory budget, bytes.
    pub budget_bytes: usize,
    /// Columns read from a file or the edit store.
    pub loaded: u64,
    /// Columns generated.
    pub generated: u64,
    /// Columns evicted.
    pub evicted: u64,
    /// Edited columns written to the backing store before eviction.
    pub spilled: u64,
    /// Finished loads dropped as stale.
    pub stale_loads: u64,
    /// Per-column load time on a worker, ms (`null` when nothing loaded).
    pub load_ms: Option<LatencySummary>,
    /// Frames after the start-up in which non-empty ground within the draw
    /// distance had no mesh at any level (the whole draw distance is
    /// checked, not only the frustum).
    pub frames_with_missing_chunks: usize,
    /// Of those, frames after the replay's first 60.
    pub frames_with_missing_chunks_after_60: usize,
    /// Frames streamed (start-up and replay).
    pub frames: u64,
    /// Frames of the start-up until the first view was complete.
    pub startup_frames: u64,
    /// Wall time of that start-up, ms.
    pub startup_ms: f64,
    /// Columns the script's edits touched.
    pub edited_columns: usize,
    /// Content hash of those columns' cells at the end (loaded back if they
    /// were evicted), 16 hex digits: equal runs of the same edits agree
    /// whatever the camera did in between.
    pub edited_columns_hash: String,
}

impl StreamingSummary {
    /// The summary of a streamed run; loads the edited columns back (if
    /// evicted) to hash them.
    ///
    /// # Errors
    /// [`HeadlessError::Load`] when an edited column cannot be loaded back.
    pub(super) fn of(
        streaming: &mut TerrainStreaming,
        grid: &mut Grid,
        startup_frames: u64,
        startup_ms: f64,
    ) -> Result<Option<Self>, HeadlessError> {
        let frames_missing = streaming.frames_with_missing_chunks().to_vec();
        let frames = streaming.streamed_frames();
        let Some(r) = streaming.residency_mut() else {
            return Ok(None);
        };
        r.sync_edits(grid);
        let edited = r.ever_edited_columns();
        let before_reload = (r.resident_bytes(), r.stats.peak_resident_bytes);
        r.load_now(grid, edited.iter().copied())?;
        let edited_hash =
            Grid::from_chunks(edited.iter().flat_map(|c| grid.column_chunks(*c))).content_hash();
        let mut load = crate::pipeline::stats::Samples::default();
        for &v in &r.stats.load_ms {
            load.push(v);
        }
        Ok(Some(StreamingSummary {
            resident_chunks: grid.chunk_count(),
            // Columns outside the world are resident (empty) only so edge
            // chunks can be meshed: not counted.
            resident_columns: grid
                .resident_columns()
                .filter(|c| !r.is_outside(*c))
                .count(),
            // As before the edited columns were loaded back for the hash.
            resident_bytes: before_reload.0,
            peak_resident_bytes: before_reload.1,
            budget_bytes: r.budget_bytes(),
            loaded: r.stats.loaded,
            generated: r.stats.generated,
            evicted: r.stats.evicted,
            spilled: r.stats.spilled,
            stale_loads: r.stats.stale_loads,
            load_ms: LatencySummary::of(&mut load),
            frames_with_missing_chunks: frames_missing
                .iter()
                .filter(|&&f| f >= startup_frames)
                .count(),
            frames_with_missing_chunks_after_60: frames_missing
                .iter()
                .filter(|&&f| f >= startup_frames + 60)
                .count(),
            frames,
            startup_frames,
            startup_ms,
            edited_columns: edited.len(),
            edited_columns_hash: format!("{edited_hash:016x}"),
        }))
    }
}

/// Collision figures of the whole world (`"collision"` in `--stats-json`).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct CollisionSummary {
    /// Colliders (non-empty chunks).
    pub colliders: usize,
    /// Triangles before flat-patch reduction.
    pub triangles_before_reduction: u64,
    /// Triangles after reduction.
    pub triangles: u64,
    /// `triangles_before_reduction / triangles`.
    pub reduction_ratio: f64,
    /// Building every collider (parallel), ms.
    pub build_ms: f64,
    /// The update after the script's edits: chunks rebuilt and ms (0 without edits).
    pub last_rebuild_chunks: usize,
    /// See `last_rebuild_chunks`.
    pub last_rebuild_ms: f64,
}

/// Counts the collision of the whole `grid`: every collider built as the
/// collision cache builds it, counted and dropped (the whole world's shapes
/// would take about 150 bytes a triangle). `Ok(None)` for an empty grid.
///
/// # Errors
/// The census's error when the world is larger than a cache region may be.
pub(super) fn world_collision(
    census: &mut CollisionCensus,
    grid: &Grid,
) -> Result<Option<UpdateReport>, crate::collision::CollisionError> {
    let Some(bounds) = grid.bounds_cells() else {
        return Ok(None);
    };
    census
        .update(grid, crate::collision::TerrainId(0), bounds.expanded(1))
        .map(Some)
}

/// The collision figures after the script: the census's totals and the
/// update the script's edits needed, from `build` (the census taken before
/// the script, see [`world_collision`]). `None` for an empty world; when
/// either step failed (the world too large), `None` and the reason is
/// logged once.
pub(super) fn collision_summary(
    census: &mut CollisionCensus,
    grid: &Grid,
    build: Result<Option<UpdateReport>, crate::collision::CollisionError>,
) -> Option<CollisionSummary> {
    let figures = build.and_then(|build| {
        let Some(build) = build else {
            return Ok(None);
        };
        Ok(world_collision(census, grid)?.map(|after| (build, after)))
    });
    let (build, after) = match figures {
        Ok(figures) => figures?,
        Err(e) => {
            log::warn!("collision statistics skipped: {e}");
            return None;
        }
    };
    let c = census.stats();
    Some(CollisionSummary {
        colliders: c.colliders,
        triangles_before_reduction: c.triangles_before_reduction,
        triangles: c.triangles,
        reduction_ratio: c.triangles_before_reduction as f64 / c.triangles.max(1) as f64,
        build_ms: build.ms,
        last_rebuild_chunks: after.rebuilt_chunks,
        last_rebuild_ms: if after.rebuilt_chunks > 0 {
            after.ms
        } else {
            0.0
        },
    })
}

/// What `--stats-json` writes: the run's statistics and the process's
/// figures when they are written.
#[derive(serde::Serialize)]
struct StatsFile<'a> {
    #[serde(flatten)]
    stats: &'a RenderStats,
    /// [`peak_rss_bytes`] when the file is written (absent where unknown).
    #[serde(skip_serializing_if = "Option::is_none")]
    peak_rss_bytes: Option<u64>,
}

/// Peak resident memory of this process so far, bytes: `VmHWM` of
/// `/proc/self/status`. `None` where there is no such file (not Linux) or
/// it has no such line.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Writes `stats` as pretty JSON to `path`, all or nothing, with the
/// process's peak resident memory ([`peak_rss_bytes`]) as
/// `peak_rss_bytes`.
///
/// # Errors
/// [`HeadlessError::Write`] when the file cannot be written.
pub fn write_stats_json(path: &std::path::Path, stats: &RenderStats) -> Result<(), HeadlessError> {
    let err = |message: String| HeadlessError::Write {
        path: path.to_path_buf(),
        message,
    };
    let file = StatsFile {
        stats,
        peak_rss_bytes: peak_rss_bytes(),
    };
    let json = serde_json::to_string_pretty(&file).map_err(|e| err(e.to_string()))?;
    crate::io::write_atomically(
        path,
        |tmp| std::fs::write(tmp, json + "\n").map_err(|e| err(e.to_string())),
        |e| err(e.to_string()),
    )
}
