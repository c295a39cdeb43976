//! Long file operations (generate, open, import, save, autosave, export) on a
//! background thread, so the editor keeps drawing and a progress bar with a
//! cancel button can follow them.
//!
//! The thread gets everything it needs up front: the grid is shared by
//! copy-on-write (a clone or a captured [`SaveBatch`] copies no cells), and
//! an incremental-save handle is moved into the job and handed back with
//! its result, whether the save worked or not.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError, channel};
use std::time::Instant;

use crate::io::world::world_file::{
    LoadOptions, LoadReport, SaveBatch, SaveReport, WorldFile, WorldFileError, WorldMeta,
};
use glam::IVec3;

use crate::camera::Camera;
use crate::camera::frame_terrain;
use crate::io::heightmap::heightmap_format::import_heightmap_georeferenced;
use crate::io::heightmap::heightmap_import::{HeightmapSettings, ImportError};
use crate::io::heightmap::world_georeference::WorldGeoreference;
use crate::pipeline::lod::LodSettings;
use crate::pipeline::{TerrainStreaming, WorldMeshes};
use crate::progress::Progress;
use crate::terrain::generation::generate::{
    GenerateError, GeneratorSettings, flat_world, generate_world_with_progress,
};
use crate::terrain::materials::MaterialLibrary;
use crate::terrain::recipe::recipe_materials::RecipeMaterials;
use crate::terrain::recipe::stages::{Recipe, SHIPPED_RECIPES};
use crate::terrain::recipe::terrain_source::RecipeTerrain;
use crate::terrain::storage::cell::Cell;
use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::ChunkCoord;
use crate::terrain::storage::grid::Grid;

use crate::editor::files::document::GridState;

/// A world a job built or loaded, ready to replace the open one.
#[derive(Debug)]
pub struct LoadedWorld {
    /// The grid.
    pub grid: Grid,
    /// Its metadata (camera, generator settings).
    pub meta: WorldMeta,
    /// The file it came from (`None` for generated and imported worlds).
    pub path: Option<PathBuf>,
    /// The incremental-save handle, when the file loaded cleanly.
    pub file: Option<WorldFile>,
    /// What the load found (`None` when not loaded from a file).
    pub report: Option<LoadReport>,
    /// True for a recovered copy: it differs from the world file.
    pub recovered: bool,
    /// Its first view, meshed on the job's thread (when a [`ViewSetup`] was given).
    pub prepared: Option<PreparedView>,
}

/// How a new world is first shown: the level-of-detail settings and the
/// view's aspect ratio (for framing the terrain when the world has no camera).
#[derive(Clone, Copy, Debug)]
pub struct ViewSetup {
    /// Level-of-detail settings.
    pub lod: LodSettings,
    /// Width / height of the 3D view.
    pub aspect: f32,
}

impl Default for ViewSetup {
    fn default() -> Self {
        ViewSetup {
            lod: LodSettings::default(),
            aspect: 16.0 / 9.0,
        }
    }
}

/// A world's first view, built off the editor thread: the camera (stored in
/// the file, or framing the terrain), the streaming state and the meshes
/// around that camera.
pub struct PreparedView {
    /// The camera.
    pub camera: Camera,
    /// Level of detail and meshing pipeline, primed for `camera`.
    pub streaming: TerrainStreaming,
    /// The meshes to draw first.
    pub meshes: WorldMeshes,
}

impl std::fmt::Debug for PreparedView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedView")
            .field("camera", &self.camera.pos_world)
            .field("meshes", &self.meshes.len())
            .finish_non_exhaustive()
    }
}

/// Meshes the first view of `grid` (stage "meshing").
fn prepare_view(
    grid: &Grid,
    meta: &WorldMeta,
    view: ViewSetup,
    progress: &Progress,
) -> PreparedView {
    progress.begin_stage("meshing", 0);
    let mut camera = meta
        .camera()
        .unwrap_or_else(|| frame_terrain(grid, None, view.aspect));
    camera.aspect = view.aspect;
    let mut streaming = TerrainStreaming::new(view.lod);
    let meshes = streaming.build_initial(grid, camera.pos_world);
    PreparedView {
        camera,
        streaming,
        meshes,
    }
}

/// A finished world, with its first view prepared when `view` is given.
fn loaded(
    grid: Grid,
    meta: WorldMeta,
    view: Option<ViewSetup>,
    progress: &Progress,
) -> LoadedWorld {
    let prepared = view.map(|v| prepare_view(&grid, &meta, v, progress));
    LoadedWorld {
        grid,
        meta,
        path: None,
        file: None,
        report: None,
        recovered: false,
        prepared,
    }
}

/// What a finished job produced.
#[derive(Debug)]
pub enum JobOutput {
    /// A world to open.
    World(Box<LoadedWorld>),
    /// A heightmap imported to merge into the open world.
    Imported(Grid),
    /// The world was saved to `path`; `file` now holds grid state `state`.
    Saved {
        /// The file written.
        path: PathBuf,
        /// Its handle, for the next incremental save.
        file: WorldFile,
        /// The grid state it holds.
        state: GridState,
        /// What the save wrote (boxed: it holds the world's metadata).
        report: Box<SaveReport>,
    },
    /// The recovery copy now holds grid state `state`.
    Autosaved {
        /// The recovery file.
        path: PathBuf,
        /// The grid state it holds.
        state: GridState,
    },
    /// A file was exported; the message says what.
    Exported(String),
}

/// Why a job produced nothing.
#[derive(Debug)]
pub enum JobError {
    /// The user cancelled it; nothing was changed.
    Cancelled,
    /// A world file has chunks whose hashes fail; the user may load the rest.
    BadChunks {
        /// The file.
        path: PathBuf,
        /// The loader's message (lists the chunk coordinates).
        message: String,
    },
    /// Anything else, as a message for the user (it names the file).
    Failed(String),
}

/// A finished job: its output or error, and the save handle it borrowed.
#[derive(Debug)]
pub struct JobResult {
    /// Output or error.
    pub output: Result<JobOutput, JobError>,
    /// A save handle the job borrowed and did not consume (a failed save).
    pub returned_file: Option<WorldFile>,
}

impl JobResult {
    /// A result without a borrowed handle.
    pub fn of(output: Result<JobOutput, JobError>) -> JobResult {
        JobResult {
            output,
            returned_file: None,
        }
    }
}

/// What kind of job runs: the editor allows one world-replacing or saving
/// job at a time, and never edits while a world is being replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobKind {
    /// Builds or loads a world that will replace the open one.
    ReplaceWorld,
    /// Imports into the open world.
    Import,
    /// Saves the world (or its recovery copy).
    Save,
    /// Writes an export file.
    Export,
}

/// A running background job.
#[derive(Debug)]
pub struct Job {
    /// What the progress window says, e.g. "Opening valley.strata".
    pub label: String,
    /// Its kind.
    pub kind: JobKind,
    /// Progress and cancellation, shared with the worker.
    pub progress: Arc<Progress>,
    /// When it started.
    pub started: Instant,
    rx: Receiver<JobResult>,
}

impl Job {
    /// Runs `work` on a new thread.
    pub fn spawn(
        label: String,
        kind: JobKind,
        work: impl FnOnce(&Progress) -> JobResult + Send + 'static,
    ) -> Job {
        let progress = Arc::new(Progress::new());
        let (tx, rx) = channel();
        let shared = Arc::clone(&progress);
        std::thread::spawn(move || {
            let result = work(&shared);
            // The editor may have gone away; then nobody wants the result.
            let _ = tx.send(result);
        });
        Job {
            label,
            kind,
            progress,
            started: Instant::now(),
            rx,
        }
    }

    /// The result once the job finished, else `None`. A job whose thread
    /// died without a result reports [`JobError::Failed`].
    pub fn try_finish(&self) -> Option<JobResult> {
        match self.rx.try_recv() {
            Ok(result) => Some(result),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(JobResult::of(Err(JobError::Failed(format!(
                "{}: the background task stopped unexpectedly",
                self.label
            ))))),
        }
    }

    /// Blocks until the job finishes (tests and shutdown).
    pub fn wait(self) -> JobResult {
        self.rx.recv().unwrap_or_else(|_| {
            JobResult::of(Err(JobError::Failed(format!(
                "{}: the background task stopped unexpectedly",
                self.label
            ))))
        })
    }
}

/// Maps a world-file error to a [`JobError`]: damage that loading the
/// rest of the file gets past (any damaged chunk, or rows that do not add
/// up, also after a journal rollback, whose message says where the copies
/// are) becomes [`JobError::BadChunks`], the offer to load the rest.
pub fn world_file_error(e: WorldFileError) -> JobError {
    if let WorldFileError::Cancelled { .. } = e {
        return JobError::Cancelled;
    }
    match e.damaged_chunks_path() {
        Some(path) => JobError::BadChunks {
            path: path.to_path_buf(),
            message: e.to_string(),
        },
        None => JobError::Failed(e.to_string()),
    }
}

/// Opens the world at `path` (verified; with `skip_bad_chunks`, loading the
/// chunks that verify). `recovered` marks a recovery copy.
pub fn open_world(
    path: PathBuf,
    skip_bad_chunks: bool,
    recovered: bool,
    view: Option<ViewSetup>,
) -> Job {
    let name = path.display().to_string();
    Job::spawn(
        format!("Opening {name}"),
        JobKind::ReplaceWorld,
        move |progress| {
            let options = LoadOptions {
                skip_bad_chunks,
                ..LoadOptions::default()
            };
            let (file, grid, meta, report) =
                match WorldFile::open_with_progress(&path, options, progress) {
                    Ok(opened) => opened,
                    Err(e) => return JobResult::of(Err(world_file_error(e))),
                };
            let clean = report.skipped.is_empty() && report.world_hash_ok;
            let mut world = loaded(grid, meta, view, progress);
            // A recovery copy is saved to the world's own file, not over itself.
            world.path = (!recovered).then_some(path);
            world.file = (clean && !recovered).then_some(file);
            world.report = Some(report);
            world.recovered = recovered;
            JobResult::of(Ok(JobOutput::World(Box::new(world))))
        },
    )
}

/// Saves `batch` (captured from the grid on the editor thread) to `path`:
/// incrementally through `file` when given (it must be the handle of
/// `path`), else as a complete new file.
pub fn save_world(
    path: PathBuf,
    batch: SaveBatch,
    state: GridState,
    meta: WorldMeta,
    file: Option<WorldFile>,
) -> Job {
    let label = format!("Saving {}", path.display());
    Job::spawn(label, JobKind::Save, move |progress| match file {
        Some(mut file) => match file.write_batch_with_progress(batch, &meta, progress) {
            Ok(report) => JobResult::of(Ok(JobOutput::Saved {
                path,
                file,
                state,
                report: Box::new(report),
            })),
            Err(e) => JobResult {
                output: Err(world_file_error(e)),
                returned_file: Some(file),
            },
        },
        None => JobResult::of(
            WorldFile::save_full_batch(&path, batch, &meta, progress)
                .map(|(file, report)| JobOutput::Saved {
                    path,
                    file,
                    state,
                    report: Box::new(report),
                })
                .map_err(world_file_error),
        ),
    })
}

/// Writes the recovery copy: a complete save of `batch` to `path`.
pub fn autosave(path: PathBuf, batch: SaveBatch, state: GridState, meta: WorldMeta) -> Job {
    let label = format!("Autosaving to {}", path.display());
    Job::spawn(label, JobKind::Save, move |progress| {
        JobResult::of(
            WorldFile::save_full_batch(&path, batch, &meta, progress)
                .map(|_| JobOutput::Autosaved { path, state })
                .map_err(world_file_error),
        )
    })
}

/// The kind of world File ▸ New makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorldPreset {
    /// The default generator: hills, valleys, cliffs, a lake.
    Generated,
    /// A flat grass plain at [`FLAT_GROUND_CELLS`], to sculpt from scratch.
    Flat,
    /// A shipped generator recipe: its index in [`SHIPPED_RECIPES`].
    Recipe(usize),
}

impl WorldPreset {
    /// Every preset, in menu order: the generator, the flat plain, then
    /// the shipped recipes.
    pub fn all() -> impl Iterator<Item = WorldPreset> {
        [WorldPreset::Generated, WorldPreset::Flat]
            .into_iter()
            .chain((0..SHIPPED_RECIPES.len()).map(WorldPreset::Recipe))
    }

    /// Name shown in the New dialog.
    pub fn name(self) -> &'static str {
        match self {
            WorldPreset::Generated => "Generated terrain",
            WorldPreset::Flat => "Flat plain",
            WorldPreset::Recipe(i) => SHIPPED_RECIPES.get(i).map_or("Recipe", |r| r.0),
        }
    }

    /// True when the preset takes a seed.
    pub fn is_seeded(self) -> bool {
        !matches!(self, WorldPreset::Flat)
    }

    /// True when the preset can make a streaming world (larger than
    /// [`crate::terrain::generation::generate::MAX_SIZE_CELLS`]); the others are built whole.
    pub fn streams(self) -> bool {
        matches!(self, WorldPreset::Generated)
    }
}

/// Ground height of the flat preset, cells.
pub const FLAT_GROUND_CELLS: i32 = 32;

/// Cooks shipped recipe `index` for `settings` and builds its cells.
fn recipe_world(
    index: usize,
    settings: &GeneratorSettings,
    progress: &Progress,
) -> Result<Grid, String> {
    let text = SHIPPED_RECIPES
        .get(index)
        .ok_or_else(|| format!("no shipped recipe {index}"))?
        .1;
    let recipe = Recipe::from_json(text).map_err(|e| e.to_string())?;
    settings.validate().map_err(|e| e.to_string())?;
    let (terrain, _) =
        RecipeTerrain::cook(&recipe, &RecipeMaterials::default(), settings, progress)
            .map_err(|e| e.to_string())?;
    Ok(terrain.build_grid(progress).map_err(|e| e.to_string())?.0)
}

/// Builds a new world from `settings` (seed and size) and `preset`.
pub fn new_world(settings: GeneratorSettings, preset: WorldPreset, view: Option<ViewSetup>) -> Job {
    let what = match preset {
        WorldPreset::Recipe(_) => format!("a world from the {} recipe", preset.name()),
        _ => format!("a {} world", preset.name().to_lowercase()),
    };
    let label = format!("Creating {what} ({} cells across)", settings.size_cells);
    Job::spawn(label, JobKind::ReplaceWorld, move |progress| {
        let grid =
            match preset {
                WorldPreset::Generated => generate_world_with_progress(&settings, progress)
                    .map_err(|e| match e {
                        GenerateError::Cancelled => None,
                        e => Some(e.to_string()),
                    }),
                WorldPreset::Flat => flat_world(settings.size_cells, FLAT_GROUND_CELLS)
                    .map_err(|e| Some(e.to_string())),
                WorldPreset::Recipe(i) => recipe_world(i, &settings, progress)
                    .map_err(|e| (!progress.is_cancelled()).then_some(e)),
            };
        let meta = match preset {
            WorldPreset::Generated => WorldMeta::generated(&settings),
            WorldPreset::Flat | WorldPreset::Recipe(_) => WorldMeta::default(),
        };
        JobResult::of(match grid {
            Ok(grid) => Ok(JobOutput::World(Box::new(loaded(
                grid, meta, view, progress,
            )))),
            Err(None) => Err(JobError::Cancelled),
            Err(Some(e)) => Err(JobError::Failed(e)),
        })
    })
}

/// Where an imported heightmap goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportPlacement {
    /// It becomes a new world.
    NewWorld,
    /// It replaces the chunk columns it covers in the open world, shifted by
    /// whole chunks (x, z).
    IntoWorld {
        /// Shift along x, chunks.
        offset_x_chunks: i32,
        /// Shift along z, chunks.
        offset_z_chunks: i32,
    },
}

/// Imports the heightmap at `path` (PNG, GeoTIFF, EXR or RAW16) with
/// `settings`; a new world remembers where it sits on the surveyed ground.
pub fn import_heightmap(
    path: PathBuf,
    settings: HeightmapSettings,
    placement: ImportPlacement,
    view: Option<ViewSetup>,
) -> Job {
    let label = format!("Importing {}", path.display());
    let kind = match placement {
        ImportPlacement::NewWorld => JobKind::ReplaceWorld,
        ImportPlacement::IntoWorld { .. } => JobKind::Import,
    };
    Job::spawn(label, kind, move |progress| {
        let (grid, georeference) = match import_heightmap_georeferenced(&path, &settings, progress)
        {
            Ok(imported) => imported,
            Err(ImportError::Cancelled) => return JobResult::of(Err(JobError::Cancelled)),
            Err(e) => return JobResult::of(Err(JobError::Failed(e.to_string()))),
        };
        JobResult::of(Ok(match placement {
            ImportPlacement::NewWorld => {
                let meta = WorldMeta {
                    georeference,
                    ..WorldMeta::default()
                };
                JobOutput::World(Box::new(loaded(grid, meta, view, progress)))
            }
            ImportPlacement::IntoWorld {
                offset_x_chunks,
                offset_z_chunks,
            } => {
                let shift = IVec3::new(offset_x_chunks, 0, offset_z_chunks);
                JobOutput::Imported(Grid::from_chunks(
                    grid.chunks()
                        .map(|(c, chunk)| (ChunkCoord(c.0 + shift), chunk.cells.clone())),
                ))
            }
        }))
    })
}

/// Replaces every chunk column of `grid` that `imported` covers with the
/// imported chunks (one grid edit per chunk, so the meshing pipeline and the
/// next incremental save see exactly those). Returns the chunks changed.
pub fn merge_import(grid: &mut Grid, imported: &Grid) -> usize {
    let columns: std::collections::BTreeSet<(i32, i32)> =
        imported.chunks().map(|(c, _)| (c.0.x, c.0.z)).collect();
    let stale: Vec<ChunkCoord> = grid
        .chunks()
        .map(|(c, _)| c)
        .filter(|c| columns.contains(&(c.0.x, c.0.z)) && imported.chunk(*c).is_none())
        .collect();
    let mut changed = 0;
    for c in stale {
        if grid
            .replace_chunk(c, ChunkCells::Uniform(Cell::EMPTY))
            .is_some()
        {
            changed += 1;
        }
    }
    for (c, chunk) in imported.chunks() {
        if grid.replace_chunk(c, chunk.cells.clone()).is_some() {
            changed += 1;
        }
    }
    changed
}

/// Exports `grid` (a copy-on-write clone of the open world) at full detail
/// to binary glTF at `path`, in the default (compact) encoding, with the
/// materials of `library` (the open world's).
pub fn export_glb(grid: Grid, path: PathBuf, library: MaterialLibrary) -> Job {
    let label = format!("Exporting {}", path.display());
    Job::spawn(label, JobKind::Export, move |progress| {
        glb_result(&grid, &path, &library, progress)
    })
}

/// Writes `grid` as binary glTF with `library`'s materials to `path`: the
/// job's result.
fn glb_result(
    grid: &Grid,
    path: &std::path::Path,
    library: &MaterialLibrary,
    progress: &Progress,
) -> JobResult {
    JobResult::of(
        match crate::io::export::gltf_export::export_glb_with_progress(
            grid,
            library,
            path,
            crate::io::export::gltf_export::GlbEncoding::default(),
            progress,
        ) {
            Ok(e) => Ok(JobOutput::Exported(format!(
                "Exported {} ({} vertices, {} triangles, {} materials, {:.1} MB)",
                path.display(),
                e.vertices,
                e.triangles,
                e.materials,
                e.file_bytes as f64 / 1e6
            ))),
            Err(crate::io::ExportError::Cancelled { .. }) => Err(JobError::Cancelled),
            Err(e) => Err(JobError::Failed(e.to_string())),
        },
    )
}

/// Writes `grid`'s heightmap to `path` in the metres of `georeference`:
/// the job's result.
fn heightmap_result(
    grid: &Grid,
    path: &std::path::Path,
    georeference: Option<&WorldGeoreference>,
    library: &MaterialLibrary,
) -> JobResult {
    let options = crate::io::heightmap::heightmap_export::HeightmapExportOptions::default();
    JobResult::of(
        match crate::io::heightmap::heightmap_export::export_heightmap_with_library(
            grid,
            path,
            georeference,
            &options,
            library,
        ) {
            Ok(e) => {
                let sidecar = e
                    .sidecar
                    .map(|s| format!(" and {}", s.display()))
                    .unwrap_or_default();
                let splat = e.splat.map(|s| format!(", {} beside it", s.summary()));
                let splat = splat.unwrap_or_default();
                Ok(JobOutput::Exported(format!(
                    "Exported {} ({} × {} samples){sidecar}{splat}",
                    e.path.display(),
                    e.width_px,
                    e.height_px,
                )))
            }
            Err(e) => Err(JobError::Failed(e.to_string())),
        },
    )
}

/// What an export writes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ExportFormat {
    /// The full-detail surface as binary glTF.
    Glb,
    /// The top surface as a heightmap (the format the path's extension
    /// names).
    Heightmap,
    /// The low-poly meshes as binary glTF.
    LowPolyGlb(LowPolyExport),
}

/// Settings of a low-poly export (File ▸ Export Low-poly Mesh).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LowPolyExport {
    /// Height of one terrace step, cells.
    pub step_cells: f32,
    /// Side of the collision mesh's blocks, cells (1, 2, 4, 8, 16 or 32);
    /// 0 exports no collision mesh.
    pub collision_block_cells: u32,
}

impl Default for LowPolyExport {
    fn default() -> Self {
        LowPolyExport {
            step_cells: 1.0,
            collision_block_cells: 8,
        }
    }
}

/// Exports `grid` in the low-poly style to `path` with `settings`, its
/// palette the flat colours of `library`.
pub fn export_low_poly_glb(
    grid: Grid,
    path: PathBuf,
    settings: LowPolyExport,
    library: MaterialLibrary,
) -> Job {
    let label = format!("Exporting {}", path.display());
    Job::spawn(label, JobKind::Export, move |progress| {
        progress.begin_stage("writing", 0);
        low_poly_glb_result(&grid, &path, settings, &library)
    })
}

/// Writes `grid`'s low-poly meshes to `path`: the job's result.
fn low_poly_glb_result(
    grid: &Grid,
    path: &std::path::Path,
    settings: LowPolyExport,
    library: &MaterialLibrary,
) -> JobResult {
    let collision = (settings.collision_block_cells > 0).then_some(settings.collision_block_cells);
    JobResult::of(
        match crate::io::export::lowpoly_gltf::export_low_poly_glb_with_library(
            grid,
            path,
            settings.step_cells,
            collision,
            library,
        ) {
            Ok(e) => Ok(JobOutput::Exported(format!(
                "Exported {} (low-poly: {} chunk columns, {} triangles, {} collision triangles, \
                 {:.1} MB)",
                path.display(),
                e.chunk_columns,
                e.triangles,
                e.collision_triangles,
                e.file_bytes as f64 / 1e6
            ))),
            Err(e) => Err(JobError::Failed(e.to_string())),
        },
    )
}

/// Exports the box `region` of a streaming world to `path`: loads the
/// columns `snapshot` lacks (off the frame thread; progress and Cancel
/// follow the loads), crops the box ([`crate::terrain::editing::region::crop`]) and
/// writes it in `format` (a heightmap in the metres of `georeference`).
/// Memory: the box's columns twice at most (the loaded columns and the
/// crop), bounded by the crop's side limit.
pub fn export_region(
    snapshot: crate::terrain::streaming::residency::RegionSnapshot,
    region: crate::terrain::storage::coords::CellBox,
    path: PathBuf,
    format: ExportFormat,
    georeference: Option<WorldGeoreference>,
) -> Job {
    let label = format!("Exporting {}", path.display());
    Job::spawn(label, JobKind::Export, move |progress| {
        progress.begin_stage("loading chunk columns", snapshot.missing_columns() as u64);
        let loaded = snapshot.into_grid(|_, _| progress.advance(1), || progress.is_cancelled());
        let columns = match loaded {
            Ok(Some(grid)) => grid,
            Ok(None) => return JobResult::of(Err(JobError::Cancelled)),
            Err(e) => return JobResult::of(Err(JobError::Failed(e.to_string()))),
        };
        let cropped = match crate::terrain::editing::region::crop(&columns, region) {
            Ok(grid) => grid,
            Err(e) => return JobResult::of(Err(JobError::Failed(e.to_string()))),
        };
        drop(columns);
        match format {
            // Streaming worlds draw the built-in materials.
            ExportFormat::Glb => glb_result(&cropped, &path, &MaterialLibrary::default(), progress),
            ExportFormat::LowPolyGlb(settings) => {
                progress.begin_stage("writing", 0);
                low_poly_glb_result(&cropped, &path, settings, &MaterialLibrary::default())
            }
            ExportFormat::Heightmap => {
                progress.begin_stage("writing", 0);
                let built_ins = MaterialLibrary::default();
                heightmap_result(&cropped, &path, georeference.as_ref(), &built_ins)
            }
        }
    })
}

/// Exports the top surface of `grid` to a heightmap at `path` (the format
/// its extension names; a JSON sidecar beside PNG, RAW16 and EXR files), in
/// the metres of `georeference` (studs without one), with splat maps
/// naming `library`'s materials.
pub fn export_heightmap(
    grid: Grid,
    path: PathBuf,
    georeference: Option<WorldGeoreference>,
    library: MaterialLibrary,
) -> Job {
    let label = format!("Exporting {}", path.display());
    Job::spawn(label, JobKind::Export, move |progress| {
        progress.begin_stage("writing", 0);
        heightmap_result(&grid, &path, georeference.as_ref(), &library)
    })
}

#[cfg(test)]
#[path = "file_jobs_tests.rs"]
mod tests;
