//! A streaming world and its backing file (spec §12): the generator (or a
//! heightmap's samples) makes unedited columns, the file keeps edited ones.
//! A new world spills to a recovery file until it is saved; an opened world
//! spills into its own file's pending changes, which the next save keeps and
//! a crash leaves for the next open to find.

use crate::progress::Progress;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::camera::{Camera, FramedView};
use crate::io::heightmap::heightmap_format::{HeightmapFormat, detect_format, import_extent_cells};
use crate::io::heightmap::heightmap_import::{
    HeightmapSettings, MAX_STREAMING_SIDE_CELLS, read_sidecar_text,
};
use crate::io::heightmap::world_georeference::WorldGeoreference;
use crate::io::world::recovery_files::{RecoveryLock, remove_recovery_files};
use crate::io::world::streaming_file::plan_cache::plan_key;
use crate::io::world::streaming_file::{SaveReport, StreamingFileError, StreamingWorldFile};
use crate::terrain::ColumnCoord;
use crate::terrain::command::document_action::{BaseSource, DocumentBase, WorldDocument};
use crate::terrain::document::base::BaseColumns;
use crate::terrain::document::closure::changed_footprints;
use crate::terrain::document::derive::rederive_stored;
use crate::terrain::document::layers::LayerStack;
use crate::terrain::document::operation::{ColumnRect, Operation};
use crate::terrain::generation::generate::GeneratorSettings;
use crate::terrain::generation::generated_columns::GeneratedColumns;
use crate::terrain::generation::heightmap_terrain::HeightmapTerrain;
use crate::terrain::recipe::cook::CookReport;
use crate::terrain::recipe::recipe_materials::RecipeMaterials;
use crate::terrain::recipe::stages::Recipe;
use crate::terrain::recipe::terrain_source::RecipeTerrain;
use crate::terrain::storage::coords::CELL_SIZE_STUDS;
use crate::terrain::storage::grid::Grid;
use crate::terrain::streaming::column_source::{ColumnChunks, ColumnSource, EditStore};
use crate::terrain::streaming::residency::Residency;

/// Where a streaming world's unedited columns come from.
#[derive(Clone, Debug)]
pub enum StreamedTerrain {
    /// The generator with these settings.
    Generated(GeneratorSettings),
    /// A heightmap's samples (held in memory: 2 bytes a pixel).
    Heightmap(Arc<HeightmapTerrain>),
    /// A cooked recipe's plan (held in memory: at most 92 MiB).
    Recipe(Arc<RecipeTerrain>),
}

/// A streaming world's terrain source and backing file.
#[derive(Debug)]
pub struct StreamedWorld {
    /// Where unedited columns come from (from the file when opened).
    pub terrain: StreamedTerrain,
    /// The backing file: the opened world file, or the recovery file of a
    /// new world.
    pub file: Arc<StreamingWorldFile>,
    /// Columns with unsaved spills when the file was opened (work a crash
    /// left behind, recovered by loading them).
    pub recovered_columns: usize,
    /// True while the backing file is a recovery file (a new world).
    pub untitled: bool,
    /// What cooking the recipe did, for a recipe world.
    pub generation: Option<CookReport>,
    /// The recipe of a recipe world and its seed and size (what its base
    /// source names).
    recipe: Option<(Arc<Recipe>, GeneratorSettings)>,
    /// The layers saved in the file (spec §14), `None` when it has none.
    layers: Option<LayerStack>,
    /// Saved columns whose cached cells were stale when the file opened
    /// (their operations changed while it was closed), and the columns
    /// re-derived for them into the file's pending changes.
    pub stale_columns: (usize, usize),
    /// Where a heightmap world sits on the ground its file surveys.
    georeference: Option<WorldGeoreference>,
    /// This session's lock on its recovery file (untitled worlds): while
    /// held, no other session offers the file as a crash's leftover.
    _recovery_lock: Option<RecoveryLock>,
}

/// Columns re-derived at once when a file opens (their closures' base
/// columns are held in memory meanwhile).
const REDERIVE_BATCH: usize = 256;

/// Keeps the cooked plan of `terrain` in `file` so the next open reads it
/// instead of cooking; a failure only costs that next open a cook.
fn keep_plan(
    file: &StreamingWorldFile,
    terrain: &RecipeTerrain,
    recipe_json: &str,
    settings: &GeneratorSettings,
) {
    let start = std::time::Instant::now();
    match file.store_plan(terrain.plan(), plan_key(recipe_json, settings)) {
        Ok(()) => log::info!(
            "kept the cooked plan in the world file in {:.0} ms",
            start.elapsed().as_secs_f64() * 1e3
        ),
        Err(e) => log::warn!("the cooked plan could not be kept in the world file: {e}"),
    }
}

/// A fresh recovery file name: `untitled-{what}-{pid}-{unix ms}.strata`,
/// unique across sessions (a reused process id has another time).
fn recovery_name(what: &str) -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("untitled-{what}-{}-{ms}.strata", std::process::id())
}

/// Locks the recovery file at `path` for this session.
fn lock_recovery(path: &Path) -> Result<RecoveryLock, StreamingFileError> {
    RecoveryLock::acquire(path).map_err(|e| {
        // The message names the file once (the Io variant adds the path).
        let source = match e {
            crate::io::world::recovery_files::RecoveryLockError::InUse(_) => {
                std::io::Error::other("it is in use by another Strata session")
            }
            crate::io::world::recovery_files::RecoveryLockError::Io { source, .. } => source,
        };
        StreamingFileError::File(crate::io::world::world_file::WorldFileError::Io {
            path: path.to_path_buf(),
            source,
        })
    })
}

impl StreamedWorld {
    /// A new world of `settings` whose spills go to a fresh recovery file
    /// in `recovery_dir`.
    ///
    /// # Errors
    /// [`StreamingFileError`] when the recovery file cannot be made.
    pub fn new(
        settings: &GeneratorSettings,
        recovery_dir: &Path,
    ) -> Result<StreamedWorld, StreamingFileError> {
        let path = recovery_dir.join(recovery_name(&format!(
            "seed{}-{}",
            settings.seed, settings.size_cells
        )));
        let lock = lock_recovery(&path)?;
        let file = StreamingWorldFile::create(&path, settings).inspect_err(|_| {
            let _ = remove_recovery_files(&path);
        })?;
        Ok(StreamedWorld {
            terrain: StreamedTerrain::Generated(settings.clone()),
            file: Arc::new(file),
            recovered_columns: 0,
            untitled: true,
            generation: None,
            recipe: None,
            layers: None,
            stale_columns: (0, 0),
            georeference: None,
            _recovery_lock: Some(lock),
        })
    }

    /// A new world cooked from `recipe` (whose JSON text is `recipe_json`)
    /// for `settings`, whose spills go to a fresh recovery file in
    /// `recovery_dir`. The whole-map stages run here (drawing the plan after
    /// each at `preview_px` when given); no chunk is built.
    ///
    /// # Errors
    /// [`StreamingFileError`] when the recovery file cannot be made or the
    /// recipe cannot be cooked (bad settings).
    pub fn new_recipe(
        recipe: &Recipe,
        recipe_json: &str,
        settings: &GeneratorSettings,
        preview_px: Option<u32>,
        recovery_dir: &Path,
    ) -> Result<StreamedWorld, StreamingFileError> {
        let path = recovery_dir.join(recovery_name(&format!(
            "recipe-seed{}-{}",
            settings.seed, settings.size_cells
        )));
        let lock = lock_recovery(&path)?;
        let file =
            StreamingWorldFile::create_recipe(&path, settings, recipe_json).inspect_err(|_| {
                let _ = remove_recovery_files(&path);
            })?;
        let progress = crate::progress::Progress::new();
        let (terrain, report) = RecipeTerrain::cook_with_previews(
            recipe,
            &RecipeMaterials::default(),
            settings,
            &progress,
            preview_px,
        )
        .map_err(|source| StreamingFileError::InvalidSettings {
            path: path.clone(),
            source,
        })?;
        keep_plan(&file, &terrain, recipe_json, settings);
        Ok(StreamedWorld {
            terrain: StreamedTerrain::Recipe(Arc::new(terrain)),
            file: Arc::new(file),
            recovered_columns: 0,
            untitled: true,
            generation: Some(report),
            recipe: Some((Arc::new(recipe.clone()), settings.clone())),
            layers: None,
            stale_columns: (0, 0),
            georeference: None,
            _recovery_lock: Some(lock),
        })
    }

    /// A new streamed world imported from the heightmap PNG at `png` (and
    /// its sidecar) with `settings`, whose spills go to a fresh recovery
    /// file in `recovery_dir`. The header and the terrain's size are
    /// checked first (up to [`MAX_STREAMING_SIDE_CELLS`] per side); the PNG
    /// is then copied into the recovery file and the stored copy decoded,
    /// so the world is exactly what its file rebuilds. No chunk is built:
    /// memory is the samples (2 bytes a pixel).
    ///
    /// # Errors
    /// [`StreamingFileError::Heightmap`] for a PNG, sidecar or settings the
    /// import refuses (nothing written); [`StreamingFileError`] otherwise.
    pub fn import_heightmap(
        png: &Path,
        settings: &HeightmapSettings,
        recovery_dir: &Path,
    ) -> Result<StreamedWorld, StreamingFileError> {
        let stem = png
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stem: String = stem
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .take(40)
            .collect();
        let path = recovery_dir.join(recovery_name(&format!("heightmap-{stem}")));
        let refuse = |source| StreamingFileError::Heightmap {
            path: path.clone(),
            source: Box::new(source),
        };
        // The format, the terrain's size and the sidecar before anything is
        // written (a GeoTIFF keeps its scale in its own tags).
        let format = detect_format(png).map_err(refuse)?;
        import_extent_cells(png, settings, MAX_STREAMING_SIDE_CELLS).map_err(refuse)?;
        let sidecar_text = match format {
            HeightmapFormat::GeoTiff => None,
            _ => read_sidecar_text(png).map_err(refuse)?,
        };
        let lock = lock_recovery(&path)?;
        let file = StreamingWorldFile::create_heightmap(
            &path,
            png,
            format,
            settings,
            sidecar_text.as_deref(),
        )
        .inspect_err(|_| {
            let _ = remove_recovery_files(&path);
        })?;
        let world = StreamedWorld::from_file(file, Some(lock), Some(png), &Progress::new());
        if let Err(e) = &world {
            // The recovery file of a world that never opened is of no use.
            let _ = remove_recovery_files(&path);
            log::debug!("removed {} after: {e}", path.display());
        }
        world
    }

    /// Opens a streaming world file (reads no column; a heightmap world
    /// decodes its stored PNG).
    ///
    /// # Errors
    /// [`StreamingFileError`] for a file that is not a valid streaming world.
    pub fn open(path: &Path) -> Result<StreamedWorld, StreamingFileError> {
        StreamedWorld::open_with(path, &Progress::new())
    }

    /// [`StreamedWorld::open`], counting a recipe world's cook (when the
    /// file's stored plan is missing or stale) in `progress` and stopping
    /// it when `progress` is cancelled.
    ///
    /// # Errors
    /// As [`StreamedWorld::open`]; a cancelled cook is
    /// [`StreamingFileError::BadMeta`] saying "cancelled".
    pub fn open_with(
        path: &Path,
        progress: &Progress,
    ) -> Result<StreamedWorld, StreamingFileError> {
        StreamedWorld::from_file(StreamingWorldFile::open(path)?, None, None, progress)
    }

    /// Reopens the recovery file of a new world that a crash left behind
    /// (see [`crate::io::world::recovery_files::orphaned_recoveries`]) as the
    /// untitled world it was: its spilled edits load as their columns are
    /// needed, Save asks for a path, and a clean exit deletes the file.
    ///
    /// # Errors
    /// [`StreamingFileError`] when another session holds the file or it is
    /// not a valid streaming world.
    pub fn recover(path: &Path) -> Result<StreamedWorld, StreamingFileError> {
        StreamedWorld::recover_with(path, &Progress::new())
    }

    /// [`StreamedWorld::recover`] with the cook counted in `progress`, as
    /// [`StreamedWorld::open_with`].
    ///
    /// # Errors
    /// As [`StreamedWorld::recover`] and [`StreamedWorld::open_with`].
    pub fn recover_with(
        path: &Path,
        progress: &Progress,
    ) -> Result<StreamedWorld, StreamingFileError> {
        let lock = lock_recovery(path)?;
        StreamedWorld::from_file(StreamingWorldFile::open(path)?, Some(lock), None, progress)
    }

    /// The world of an open file; untitled (a recovery file) when this
    /// session holds its `lock`.
    fn from_file(
        file: StreamingWorldFile,
        lock: Option<RecoveryLock>,
        imported: Option<&Path>,
        progress: &Progress,
    ) -> Result<StreamedWorld, StreamingFileError> {
        let untitled = lock.is_some();
        let recovered_columns = file.pending_count()?;
        if let Some((settings, text)) = file.recipe() {
            let (settings, text) = (settings.clone(), text.to_string());
            let settings = &settings;
            let bad = |message: String| StreamingFileError::BadMeta {
                path: file.path().to_path_buf(),
                key: "recipe".to_string(),
                message,
            };
            let recipe = Recipe::from_json(&text).map_err(|e| bad(e.to_string()))?;
            let key = plan_key(&text, settings);
            let (terrain, report) = match file.stored_plan(key, settings.size_cells) {
                Ok(plan) => (RecipeTerrain::from_plan(plan, &recipe, settings), None),
                Err(miss) => {
                    log::info!("{}: {miss}; cooking the recipe", file.path().display());
                    let start = std::time::Instant::now();
                    let (terrain, report) = RecipeTerrain::cook(
                        &recipe,
                        &RecipeMaterials::default(),
                        settings,
                        progress,
                    )
                    .map_err(|e| bad(e.to_string()))?;
                    log::info!(
                        "cooked the recipe in {:.0} ms",
                        start.elapsed().as_secs_f64() * 1e3
                    );
                    (terrain, Some(report))
                }
            };
            let world = StreamedWorld {
                terrain: StreamedTerrain::Recipe(Arc::new(terrain)),
                file: Arc::new(file),
                recovered_columns,
                untitled,
                generation: report,
                recipe: Some((Arc::new(recipe), settings.clone())),
                layers: None,
                stale_columns: (0, 0),
                georeference: None,
                _recovery_lock: lock,
            };
            // The plan is kept only once the layers were found to fit it:
            // a refused open writes nothing.
            let world = world.with_saved_layers()?;
            if world.generation.is_some()
                && let StreamedTerrain::Recipe(terrain) = &world.terrain
            {
                keep_plan(&world.file, terrain, &text, settings);
            }
            return Ok(world);
        }
        let mut georeference = None;
        let file = Arc::new(file);
        // An import's errors name the file it read, not its stored copy.
        let name = imported.unwrap_or(file.path()).to_path_buf();
        let terrain = match (file.generator(), file.heightmap_terrain(&name, progress)?) {
            (_, Some((terrain, geo))) => {
                georeference = geo;
                StreamedTerrain::Heightmap(Arc::new(terrain))
            }
            (Some(settings), None) => StreamedTerrain::Generated(settings.clone()),
            (None, None) => {
                return Err(StreamingFileError::BadMeta {
                    path: file.path().to_path_buf(),
                    key: "generator".to_string(),
                    message: "neither generator settings nor a heightmap".to_string(),
                });
            }
        };
        StreamedWorld {
            terrain,
            file,
            recovered_columns,
            untitled,
            generation: None,
            recipe: None,
            layers: None,
            stale_columns: (0, 0),
            georeference,
            _recovery_lock: lock,
        }
        .with_saved_layers()
    }

    /// Reads the layers in the file (those the last autosave kept beside
    /// unsaved spills, else the saved ones), checks that their base is the
    /// file's own terrain, and re-derives straight into the file's pending
    /// changes (nothing is resident yet) every column whose cells may not
    /// be theirs: stale saved columns, and, after unsaved spills, every
    /// spilled column and the closure of what changed since the save. A
    /// spill may come from layers newer than any kept (a crash before the
    /// autosave): it is derived again from the layers there are, so no
    /// cell is ever shown that the layers do not make.
    fn with_saved_layers(mut self) -> Result<StreamedWorld, StreamingFileError> {
        let saved = self.file.saved_document()?;
        let pending = self.file.pending_document()?;
        let Some(layers) = pending.as_ref().or(saved.as_ref()) else {
            return Ok(self);
        };
        if layers.source != self.base_source() {
            return Err(StreamingFileError::BadLayers {
                path: self.file.path().to_path_buf(),
                reason: "their base is not this file's terrain".to_string(),
            });
        }
        let mut seeds: Vec<ColumnRect> = saved.iter().flat_map(|d| d.stale.clone()).collect();
        let stale = seeds.len();
        if self.recovered_columns > 0 {
            let spilled = self
                .file
                .pending_columns()
                .map_err(StreamingFileError::Spill)?;
            seeds.extend(spilled.into_iter().map(ColumnRect::of_chunk_column));
            if let (Some(saved), Some(pending)) = (&saved, &pending) {
                let old: Vec<&Operation> = saved.stack.visible_operations().collect();
                let new: Vec<&Operation> = pending.stack.visible_operations().collect();
                seeds.extend(changed_footprints(&old, &new));
            }
        }
        let base = BaseColumns::streamed(self.source());
        let mut rebuilt = 0;
        // In batches, so memory follows the batch, not the whole recovery:
        // each batch derives its closure from the base, whatever the others.
        for batch in seeds.chunks(REDERIVE_BATCH) {
            rebuilt += rederive_stored(&*self.file, &base, &layers.stack, batch)
                .map_err(StreamingFileError::Spill)?
                .dirty_columns;
        }
        self.stale_columns = (stale, rebuilt);
        self.layers = Some(layers.stack.clone());
        Ok(self)
    }

    /// What makes this world's unedited columns, as a world document's
    /// base names it: the generator, the recipe, or (a heightmap) plain
    /// cells kept by the file.
    pub fn base_source(&self) -> BaseSource {
        match (&self.terrain, &self.recipe) {
            (StreamedTerrain::Generated(settings), _) => BaseSource::Generator(settings.clone()),
            // A streaming world keeps no library: its recipe names built-ins.
            (StreamedTerrain::Recipe(_), Some((recipe, settings))) => BaseSource::Recipe {
                recipe: Arc::clone(recipe),
                materials: RecipeMaterials::default(),
                settings: settings.clone(),
            },
            (StreamedTerrain::Recipe(_) | StreamedTerrain::Heightmap(_), _) => BaseSource::Cells,
        }
    }

    /// The world document of this world: its unedited columns as the base
    /// and the layers saved in its file (an empty stack when it has none).
    pub fn document(&self) -> WorldDocument {
        WorldDocument {
            base: DocumentBase {
                cells: BaseColumns::streamed(self.source()),
                source: self.base_source(),
            },
            stack: self.layers.clone().unwrap_or_default(),
        }
    }

    /// The generator settings of a generated world (`None` for a
    /// heightmap): they serve a script's `generate` entries.
    pub fn generator(&self) -> Option<GeneratorSettings> {
        match &self.terrain {
            StreamedTerrain::Generated(settings) => Some(settings.clone()),
            StreamedTerrain::Heightmap(_) | StreamedTerrain::Recipe(_) => None,
        }
    }

    /// The document metadata of this world: its generator settings, or for
    /// a heightmap world its georeference (its terrain lives in the
    /// streaming file).
    pub fn meta(&self) -> crate::io::world::world_file::WorldMeta {
        match &self.terrain {
            StreamedTerrain::Generated(settings) => {
                crate::io::world::world_file::WorldMeta::generated(settings)
            }
            StreamedTerrain::Heightmap(_) => crate::io::world::world_file::WorldMeta {
                georeference: self.georeference.clone(),
                ..crate::io::world::world_file::WorldMeta::default()
            },
            StreamedTerrain::Recipe(_) => crate::io::world::world_file::WorldMeta::default(),
        }
    }

    /// The column source of this world's unedited columns.
    pub fn source(&self) -> Arc<dyn ColumnSource> {
        match &self.terrain {
            StreamedTerrain::Generated(settings) => Arc::new(GeneratedColumns::new(settings)),
            StreamedTerrain::Heightmap(terrain) => Arc::clone(terrain) as Arc<dyn ColumnSource>,
            StreamedTerrain::Recipe(terrain) => Arc::clone(terrain) as Arc<dyn ColumnSource>,
        }
    }

    /// The camera the world opens with when none is given or stored
    /// ([`StreamedWorld::default_view`]).
    pub fn default_camera(&self) -> Camera {
        self.default_view().camera
    }

    /// The view the world opens with when no camera is given or stored,
    /// with the draw distance it needs: for a generated world
    /// [`streaming_default_view`](crate::camera::streaming_default_view);
    /// for a recipe, [`streaming_overview_view`](crate::camera::streaming_overview_view)
    /// 240 studs above its highest possible surface; for a heightmap, the
    /// whole terrain framed from outside
    /// ([`heightmap_overview`](crate::camera::heightmap_overview)), as a
    /// generated world's default view frames it.
    pub fn default_view(&self) -> FramedView {
        let studs = f64::from(CELL_SIZE_STUDS);
        match &self.terrain {
            StreamedTerrain::Generated(settings) => crate::camera::streaming_default_view(settings),
            StreamedTerrain::Recipe(terrain) => {
                let side = f64::from(terrain.size_cells()) * studs;
                let top = crate::terrain::streaming::surface_sampler::SurfaceSampler::top_cells(
                    &**terrain,
                );
                crate::camera::streaming_overview_view(side, side, top * studs + 240.0)
            }
            StreamedTerrain::Heightmap(terrain) => {
                let (w, d) = terrain.extent_cells();
                let bottom = f64::from(terrain.settings().base_height_cells) * studs;
                crate::camera::heightmap_overview(
                    w as f64 * studs,
                    d as f64 * studs,
                    bottom,
                    terrain.top_cells() * studs,
                )
            }
        }
    }

    /// The world's footprint in cells, `[width, depth]` (from x, z = 0).
    pub fn extent_cells(&self) -> [i64; 2] {
        match &self.terrain {
            StreamedTerrain::Generated(settings) => [
                i64::from(settings.size_cells),
                i64::from(settings.size_cells),
            ],
            StreamedTerrain::Recipe(terrain) => [
                i64::from(terrain.size_cells()),
                i64::from(terrain.size_cells()),
            ],
            StreamedTerrain::Heightmap(terrain) => {
                let (w, d) = terrain.extent_cells();
                [w, d]
            }
        }
    }

    /// The residency of this world within `budget_bytes`: generated (or
    /// heightmap) columns, edited ones from (and spilled to) the file.
    pub fn residency(&self, budget_bytes: usize) -> Residency {
        Residency::new(
            self.source(),
            Arc::clone(&self.file) as Arc<dyn EditStore>,
            budget_bytes,
        )
    }

    /// Saves to `target`: the resident edited columns and every spill go
    /// into the backing file in one transaction; a new world's file is then
    /// copied to `target`. Saved elsewhere, an opened world's file is copied
    /// first and the save goes into the copy: the opened file keeps its
    /// saved state (its unsaved spills are dropped, now kept by the copy).
    /// Only edited columns are ever written.
    ///
    /// # Errors
    /// [`StreamingFileError`]; the target is then unchanged (a failed copy
    /// leaves no partial file behind, SQLite writes it whole).
    pub fn save(
        &self,
        residency: &mut Residency,
        grid: &Grid,
        target: &Path,
        camera: Option<[f64; 5]>,
        document: Option<&WorldDocument>,
    ) -> Result<SaveReport, StreamingFileError> {
        // Spills and autosave writes still on their way land first: the
        // save moves every pending column into the saved ones.
        residency
            .flush_spills()
            .map_err(StreamingFileError::Spill)?;
        residency.sync_edits(grid);
        let edited: Vec<ColumnCoord> = residency.edited_columns();
        let columns: Vec<(ColumnCoord, ColumnChunks)> = edited
            .iter()
            .map(|c| (*c, grid.column_chunks(*c)))
            .collect();
        let elsewhere = !crate::io::same_file(target, self.file.path());
        if elsewhere && target.exists() {
            std::fs::remove_file(target).map_err(|source| {
                StreamingFileError::File(crate::io::world::world_file::WorldFileError::Io {
                    path: target.to_path_buf(),
                    source,
                })
            })?;
        }
        let report = if elsewhere && !self.untitled {
            // Save As of an opened world: the copy gets the spills and the
            // resident edits; the opened file goes back to its saved state
            // (what it held before this session's unsaved changes).
            let copy = self.file.save_as(target)?;
            if camera.is_some() {
                copy.set_camera(camera);
            }
            let mut report = copy.save(&columns, document)?;
            self.file.discard_pending()?;
            report.file_bytes = std::fs::metadata(copy.path()).map_or(0, |m| m.len());
            report
        } else {
            // Save, or the first save of a new world: its own file, then
            // (a new world) a copy of it at the target.
            if camera.is_some() {
                self.file.set_camera(camera);
            }
            let mut report = self.file.save(&columns, document)?;
            if elsewhere {
                let copy = self.file.save_as(target)?;
                report.file_bytes = std::fs::metadata(copy.path()).map_or(0, |m| m.len());
            }
            report
        };
        for c in edited {
            residency.mark_stored(c);
        }
        Ok(report)
    }

    /// Removes the recovery file of a new world (after a clean exit).
    pub fn remove_recovery(&self) {
        if self.untitled {
            let path: PathBuf = self.file.path().to_path_buf();
            if let Err(e) = remove_recovery_files(&path) {
                log::warn!("cannot remove the recovery file {}: {e}", path.display());
            }
        }
    }
}

/// Where a new streaming world spills its edits until it is saved:
/// `$TMPDIR/strata-recovery/` (made when missing).
///
/// # Errors
/// [`StreamingFileError`] when the folder cannot be made.
pub fn default_recovery_dir() -> Result<PathBuf, StreamingFileError> {
    let dir = std::env::temp_dir().join("strata-recovery");
    std::fs::create_dir_all(&dir).map_err(|source| {
        StreamingFileError::File(crate::io::world::world_file::WorldFileError::Io {
            path: dir.clone(),
            source,
        })
    })?;
    Ok(dir)
}
