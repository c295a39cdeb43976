//! The editor's side of the tools: the stroke in progress, the undo history,
//! the clipboard and the region selection. Every change goes through the
//! edit engine ([`crate::terrain::editing::brush`], [`crate::terrain::editing::region`]) and is
//! recorded in the [`History`]; the meshing pipeline sees it through the
//! grid's change tracking, as it sees undo and redo.

use glam::{DVec3, IVec3};

use crate::editor::tools::base_job::{BaseJobStatus, RunningBaseJob};
use crate::editor::tools::box_handles::{BoxHandle, HandleDrag, pick_handle};
use crate::pipeline::picking::PickHit;
use crate::terrain::command::brush_stroke::{BrushStrokeError, StrokeInProgress};
use crate::terrain::command::document_action::DocumentAction;
use crate::terrain::command::edit_command::{CommandError, EditCommand, EditSession};
use crate::terrain::command::history::History;
use crate::terrain::editing::brush::{Brush, FlattenPlane};
use crate::terrain::editing::region;
use crate::terrain::editing::stroke::LockPlane;
use crate::terrain::generation::generate::GenerateError;
use crate::terrain::generation::generate::GeneratorSettings;
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::{CELL_SIZE_STUDS, CellBox, CellCoord, ColumnCoord};
use crate::terrain::storage::grid::{Grid, MAX_EDIT_VOLUME_CELLS};

use crate::editor::tools::column_wait::WaitingEdit;
use crate::editor::tools::tools_panel::{ToolRequest, ToolSettings};

/// Why a tool did not apply.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolError {
    /// Rejected input, as a message for the artist (nothing changed).
    Refused(String),
    /// A streaming world does not hold these chunk columns yet: the edit
    /// changed nothing and waits for them as `edit` ([`ToolSession::retry`]
    /// runs it once they are resident).
    NotResident {
        /// The missing columns.
        columns: Vec<ColumnCoord>,
        /// What runs again.
        edit: WaitingEdit,
    },
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolError::Refused(m) => f.write_str(m),
            ToolError::NotResident { columns, .. } => {
                write!(f, "waiting for {} chunk columns to load", columns.len())
            }
        }
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError::Refused(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::Refused(message.to_string())
    }
}

/// A command's error as a [`ToolError`]: missing columns wait with
/// `command`, anything else is refused.
fn command_error(e: CommandError, command: &EditCommand) -> ToolError {
    match e.missing_columns() {
        Some(columns) => ToolError::NotResident {
            columns: columns.to_vec(),
            edit: WaitingEdit::Command(command.clone()),
        },
        None => ToolError::Refused(e.to_string()),
    }
}

/// A stroke's error as a [`ToolError`]: missing columns make the stroke
/// wait (its unapplied applications are kept).
fn stroke_error(e: BrushStrokeError) -> ToolError {
    match e.missing_columns() {
        Some(columns) => ToolError::NotResident {
            columns: columns.to_vec(),
            edit: WaitingEdit::Stroke,
        },
        None => ToolError::Refused(e.to_string()),
    }
}

/// A brush stroke while the mouse button is held: the shared stroke engine
/// plus the plane the cursor is locked to.
struct ActiveStroke {
    stroke: StrokeInProgress,
    lock: Option<LockPlane>,
}

/// Tool state that lives as long as the editor: the edit session (history,
/// clipboard, generator), the stroke in progress and the region drag.
pub struct ToolSession {
    /// History, clipboard and generator; the script runner uses the same type.
    pub session: EditSession,
    stroke: Option<ActiveStroke>,
    /// Region drag: the cell where it started.
    drag_start: Option<IVec3>,
    /// A drag of one of the selection box's handles, from press to release.
    handle_drag: Option<HandleDrag>,
    /// A base seed change being made in the background.
    base_job: Option<RunningBaseJob>,
}

impl ToolSession {
    /// A session with an empty history of `budget_bytes`.
    pub fn new(budget_bytes: usize, generator: Option<GeneratorSettings>) -> ToolSession {
        ToolSession {
            session: EditSession::new(budget_bytes, generator),
            stroke: None,
            drag_start: None,
            handle_drag: None,
            base_job: None,
        }
    }

    /// Starts making the base with `seed` in the background (one at a time).
    ///
    /// # Errors
    /// [`ToolError::Refused`] while one runs, or for a world whose base has
    /// no seed.
    fn start_base_seed(&mut self, seed: u64) -> Result<String, ToolError> {
        if self.base_job.is_some() {
            return Err(ToolError::Refused(
                "a seed change is running: wait for it or cancel it".into(),
            ));
        }
        let job = self
            .session
            .base_seed_job(seed)
            .map_err(|e| ToolError::Refused(e.to_string()))?;
        self.base_job = Some(RunningBaseJob::start(job));
        Ok(format!("making the base with seed {seed}"))
    }

    /// The running seed change, for the panel.
    pub fn base_job_status(&self) -> Option<BaseJobStatus> {
        self.base_job.as_ref().map(RunningBaseJob::status)
    }

    /// Installs a finished seed change into `grid` (one undo step); returns
    /// the message for the artist (`true`: an error), `None` while it runs.
    pub fn poll_base_job(&mut self, grid: &mut Grid) -> Option<(String, bool)> {
        if !self.base_job.as_ref()?.is_finished() {
            return None;
        }
        let job = self.base_job.take()?;
        let seed = job.status().seed;
        Some(match job.join() {
            Ok(prepared) => {
                self.session.finish_base_seed(grid, prepared);
                (format!("base seed {seed}: layers re-applied"), false)
            }
            Err(GenerateError::Cancelled) => ("seed change cancelled".into(), false),
            Err(e) => (format!("seed change failed: {e}"), true),
        })
    }

    /// The undo history.
    pub fn history(&self) -> &History {
        &self.session.history
    }

    /// Starts over for a newly opened world: an empty history (same budget)
    /// and the new world's generator; the clipboard is kept, so a copy can be
    /// pasted into another world.
    /// A world held whole (`grid` not streaming) records its edits in a
    /// fresh world document over its cells as opened.
    pub fn reset_for_world(&mut self, generator: Option<GeneratorSettings>, grid: &Grid) {
        self.session.history = History::new(self.session.history.budget_bytes());
        self.session.generator = generator;
        self.session.document = Default::default();
        if !grid.is_streaming() {
            self.session.enable_document(grid);
        }
        self.stroke = None;
        self.drag_start = None;
        self.handle_drag = None;
    }

    /// The Flatten plane the stroke in progress began with (`None` without a stroke).
    pub fn stroke_flatten_plane(&self) -> Option<FlattenPlane> {
        self.stroke.as_ref()?.stroke.options().flatten_plane
    }

    /// True while a stroke is being painted.
    pub fn in_stroke(&self) -> bool {
        self.stroke.is_some()
    }

    /// Continues (or starts, at `hit`) the stroke of `brush` toward the
    /// cursor: `hit` is the surface under the cursor (picked against the
    /// surface as it was when the stroke began), `ray` the cursor ray for
    /// plane lock. Applies the brush at every spacing along the cursor path.
    ///
    /// # Errors
    /// [`ToolError::Refused`] for invalid brush settings: the stroke stops
    /// and what it already did is kept (committed when the button is
    /// released). [`ToolError::NotResident`] when an application needs
    /// chunk columns a streaming world does not hold: the stroke keeps its
    /// unapplied applications for [`ToolSession::retry`].
    pub fn stroke(
        &mut self,
        grid: &mut Grid,
        brush: Brush,
        settings: &ToolSettings,
        hit: Option<PickHit>,
        ray: (DVec3, DVec3),
    ) -> Result<(), ToolError> {
        if self.stroke.is_none() {
            let Some(hit) = hit else { return Ok(()) };
            let mut options = settings.options();
            let normal = hit.normal.as_dvec3();
            options.flatten_plane = Some(flatten_plane_for(settings, &hit));
            self.session.check_editable().map_err(|e| e.to_string())?;
            let mut stroke = StrokeInProgress::begin(brush, options, settings.spacing_fraction)
                .map_err(|e| e.to_string())?;
            // Painted on the surface: re-derived, it stays on the ground.
            if !settings.plane_lock {
                stroke = stroke.anchored_to_surface();
            }
            self.stroke = Some(ActiveStroke {
                stroke,
                lock: settings
                    .plane_lock
                    .then(|| LockPlane::new(hit.pos_world, normal))
                    .flatten(),
            });
        }
        let Some(active) = self.stroke.as_mut() else {
            return Ok(());
        };
        let point = match active.lock {
            Some(plane) => plane.intersect_ray(ray.0, ray.1),
            None => hit.map(|h| h.pos_world),
        };
        let Some(point) = point else { return Ok(()) };
        active.stroke.advance(grid, point).map_err(stroke_error)?;
        Ok(())
    }

    /// Runs an edit that waited for chunk columns again (see
    /// [`crate::editor::tools::column_wait::ColumnWait`]): the stroke's unapplied
    /// applications, or the command. Returns the status message.
    ///
    /// # Errors
    /// As [`ToolSession::stroke`] and [`ToolSession::request`]: it may find
    /// more columns missing and wait again.
    pub fn retry(&mut self, grid: &mut Grid, edit: WaitingEdit) -> Result<String, ToolError> {
        match edit {
            WaitingEdit::Stroke => {
                let Some(active) = self.stroke.as_mut() else {
                    return Ok(String::new());
                };
                active.stroke.resume(grid).map_err(stroke_error)?;
                Ok(String::new())
            }
            WaitingEdit::Command(command) => self
                .session
                .apply(grid, &command)
                .map(|outcome| outcome.message())
                .map_err(|e| command_error(e, &command)),
        }
    }

    /// Runs `command` (a sea-level action or any other [`EditCommand`]) as
    /// one undo step. Returns the status message.
    ///
    /// # Errors
    /// [`ToolError::Refused`] for rejected input, [`ToolError::NotResident`]
    /// when it waits for chunk columns (nothing changed).
    pub fn apply_command(
        &mut self,
        grid: &mut Grid,
        command: &EditCommand,
    ) -> Result<String, ToolError> {
        self.session
            .apply(grid, command)
            .map(|outcome| outcome.message())
            .map_err(|e| command_error(e, command))
    }

    /// True while the stroke in progress has applications waiting for
    /// chunk columns.
    pub fn stroke_waits(&self) -> bool {
        self.stroke.as_ref().is_some_and(|a| a.stroke.is_waiting())
    }

    /// Ends the stroke: it becomes an operation of the active layer and
    /// one undo step. Returns why it was taken back, if it was (the active
    /// layer was locked meanwhile).
    pub fn end_stroke(&mut self, grid: &mut Grid) -> Option<String> {
        let active = self.stroke.take()?;
        self.session
            .finish_stroke(active.stroke, grid)
            .err()
            .map(|e| e.to_string())
    }

    /// Region drag: the box spanned from where the drag began to `hit`,
    /// from 4 cells below the lower end to 8 above the higher one.
    pub fn drag_region(&mut self, hit: &PickHit) -> CellBox {
        let cell = surface_cell(hit);
        let start = *self.drag_start.get_or_insert(cell);
        let lo = start.min(cell);
        let hi = start.max(cell);
        CellBox::new(
            IVec3::new(lo.x, lo.y - 4, lo.z),
            IVec3::new(hi.x + 1, hi.y + 8, hi.z + 1),
        )
    }

    /// One frame of a held press with the Region tool: a press that starts
    /// on a handle of `current` (within `tolerance_rad` of the cursor `ray`,
    /// origin and unit direction) drags that handle until release; any
    /// other press drags out a new box over the surface under the cursor
    /// ([`Self::drag_region`]). Returns the selection to show (`current`
    /// when this frame changes nothing).
    pub fn region_press(
        &mut self,
        current: Option<CellBox>,
        ray: Option<(DVec3, DVec3)>,
        hit: Option<&PickHit>,
        tolerance_rad: f64,
    ) -> Option<CellBox> {
        if let Some(drag) = &self.handle_drag {
            return ray.and_then(|(o, d)| drag.update(o, d)).or(current);
        }
        if self.drag_start.is_none()
            && let (Some(region), Some((o, d))) = (current, ray)
            && let Some(handle) = pick_handle(&region, o, d, tolerance_rad)
            && let Some(drag) = HandleDrag::begin(handle, region, o, d, MAX_EDIT_VOLUME_CELLS)
        {
            self.handle_drag = Some(drag);
            return current;
        }
        hit.map(|h| self.drag_region(h)).or(current)
    }

    /// The handle to highlight: the one being dragged, else the one of
    /// `region` under the cursor `ray` (see [`Self::region_press`]).
    pub fn hovered_handle(
        &self,
        region: &CellBox,
        ray: Option<(DVec3, DVec3)>,
        tolerance_rad: f64,
    ) -> Option<BoxHandle> {
        if let Some(drag) = &self.handle_drag {
            return Some(drag.handle());
        }
        if self.drag_start.is_some() {
            return None;
        }
        let (o, d) = ray?;
        pick_handle(region, o, d, tolerance_rad)
    }

    /// Ends a region or handle drag.
    pub fn end_drag(&mut self) {
        self.drag_start = None;
        self.handle_drag = None;
    }

    /// Saves the clipboard (the last Copy) as a 3D stamp file at `path`
    /// (`io::world::stamp_file` format). Returns the status message.
    ///
    /// # Errors
    /// A message when nothing was copied or the file cannot be written.
    pub fn save_clipboard_as_stamp(&self, path: &std::path::Path) -> Result<String, String> {
        let clip = self
            .session
            .clipboard
            .as_ref()
            .ok_or("copy a region first (Ctrl+C)")?;
        crate::io::world::stamp_file::save_cell_stamp(path, clip).map_err(|e| e.to_string())?;
        let size = clip.size();
        Ok(format!(
            "saved {} × {} × {} cells as {}",
            size.x,
            size.y,
            size.z,
            path.display()
        ))
    }

    /// Where a paste would go with the cursor on `hit`: the clipboard's box
    /// (turned as set) centred on the cursor cell horizontally, its floor there.
    pub fn paste_box(&self, hit: &PickHit, quarter_turns: u8) -> Option<CellBox> {
        let clip = self.session.clipboard.as_ref()?;
        let c = surface_cell(hit);
        let s = clip.rotated(quarter_turns).size();
        let min = IVec3::new(c.x - s.x / 2, c.y, c.z - s.z / 2);
        region::paste_region(clip, min, quarter_turns).ok()
    }

    /// The edit command a panel or shortcut request stands for, from the
    /// panel's settings (the selection, fill material, paste turn) and the
    /// surface under the cursor; `Ok(None)` for requests that are not edits.
    ///
    /// # Errors
    /// A message when the request lacks its input (no selection, no cursor
    /// on the terrain, an empty clipboard).
    pub fn command_for(
        &self,
        request: ToolRequest,
        settings: &ToolSettings,
        hit: Option<&PickHit>,
    ) -> Result<Option<EditCommand>, String> {
        let need_region = || {
            settings
                .region
                .ok_or("select a region first (B, then drag)")
        };
        Ok(Some(match request {
            ToolRequest::Undo => EditCommand::Undo,
            ToolRequest::Redo => EditCommand::Redo,
            ToolRequest::JumpTo(applied_steps) => EditCommand::JumpTo { applied_steps },
            ToolRequest::SetBudget(_) | ToolRequest::CancelBaseSeed | ToolRequest::CancelDrag => {
                return Ok(None);
            }
            ToolRequest::Document(action) => EditCommand::Document(action),
            ToolRequest::Fill => EditCommand::Fill {
                region: need_region()?,
                material: settings.fill_material,
                occupancy: settings.fill_occupancy,
                ignore_water: settings.region_ignore_water,
            },
            ToolRequest::Clear => EditCommand::Clear {
                region: need_region()?,
                ignore_water: settings.region_ignore_water,
            },
            ToolRequest::Generate => EditCommand::Generate {
                region: need_region()?,
            },
            ToolRequest::Copy => EditCommand::Copy {
                region: need_region()?,
            },
            ToolRequest::Paste => {
                let hit = hit.ok_or("point at the terrain to paste")?;
                let turns = settings.paste_quarter_turns;
                let b = self
                    .paste_box(hit, turns)
                    .ok_or("copy a region first (Ctrl+C)")?;
                EditCommand::Paste {
                    at: b.min,
                    quarter_turns: turns,
                }
            }
        }))
    }

    /// Runs a panel or shortcut request through [`EditSession::apply`]
    /// (the script runner's path too). Every change is one undo step.
    ///
    /// # Errors
    /// [`ToolError::Refused`] for rejected input (nothing changed);
    /// [`ToolError::NotResident`] when the command waits for chunk columns.
    pub fn request(
        &mut self,
        grid: &mut Grid,
        request: ToolRequest,
        settings: &ToolSettings,
        hit: Option<&PickHit>,
    ) -> Result<String, ToolError> {
        match &request {
            ToolRequest::SetBudget(bytes) => {
                self.session.history.set_budget_bytes(*bytes, grid);
                return Ok(format!("history budget {} MiB", bytes >> 20));
            }
            ToolRequest::Document(action) => {
                if let DocumentAction::SetBaseSeed(seed) = **action {
                    return self.start_base_seed(seed);
                }
            }
            ToolRequest::CancelBaseSeed => {
                if let Some(job) = &self.base_job {
                    job.cancel();
                }
                return Ok("cancelling the seed change".into());
            }
            ToolRequest::CancelDrag => {
                if self.session.operation_drag().is_none() {
                    return Ok(String::new());
                }
                self.session.cancel_operation_drag(grid);
                return Ok("drag cancelled: the operation is back where it was".into());
            }
            _ => {}
        }
        let Some(command) = self.command_for(request, settings, hit)? else {
            return Ok(String::new());
        };
        self.apply_command(grid, &command)
    }
}

/// The plane a Flatten stroke starting at `hit` flattens toward: the fixed
/// height when the panel asks for one, else the plane through the hit along
/// its normal. The stroke and the Flatten preview both use it.
pub fn flatten_plane_for(settings: &ToolSettings, hit: &PickHit) -> FlattenPlane {
    if settings.flatten_fixed_height {
        FlattenPlane::Height {
            height_world: settings.flatten_height_studs,
        }
    } else {
        FlattenPlane::Picked {
            point_world: hit.pos_world,
            normal: hit.normal.as_dvec3(),
        }
    }
}

/// The cell just below the surface at a hit (inside the terrain).
pub fn surface_cell(hit: &PickHit) -> IVec3 {
    let inside = hit.pos_world - hit.normal.as_dvec3() * (0.5 * CELL_SIZE_STUDS as f64);
    CellCoord::containing_world(inside).0
}

/// The solid material under a surface hit: the cell just inside the
/// surface, else the most solid cell around it. `None` over water or air.
pub fn sample_material(grid: &Grid, hit: &PickHit) -> Option<Material> {
    let c = surface_cell(hit);
    let cell = grid.cell(CellCoord(c));
    if cell.material().is_solid() {
        return Some(cell.material());
    }
    let mut best: Option<(u8, Material)> = None;
    for dz in -1..=1 {
        for dy in -1..=1 {
            for dx in -1..=1 {
                let n = grid.cell(CellCoord(c + IVec3::new(dx, dy, dz)));
                let s = n.solid_occupancy();
                if s > 0 && best.is_none_or(|(b, _)| s > b) {
                    best = Some((s, n.material()));
                }
            }
        }
    }
    best.map(|(_, m)| m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::editing::brush::BrushMode;
    use crate::terrain::storage::cell::Cell;
    use crate::terrain::storage::coords::ChunkCoord;
    use glam::Vec3;

    fn floor() -> Grid {
        let mut g = Grid::new();
        g.edit_region(
            CellBox::new(IVec3::new(0, 0, 0), IVec3::new(64, 8, 64)),
            |c, _| {
                if c.0.x < 32 {
                    Cell::full(Material::ROCK)
                } else {
                    Cell::full(Material::DIRT)
                }
            },
        )
        .unwrap();
        g
    }

    fn hit_at(x: f64, z: f64) -> PickHit {
        PickHit {
            pos_world: DVec3::new(x, 32.0, z),
            normal: Vec3::Y,
            distance_studs: 10.0,
            chunk: ChunkCoord::new(0, 0, 0),
        }
    }

    #[test]
    fn a_held_stroke_is_one_undo_step_sampled_by_distance() {
        let mut g = floor();
        let start = g.content_hash();
        let mut s = ToolSession::new(1 << 30, None);
        let settings = ToolSettings::default();
        let brush = Brush {
            mode: BrushMode::Paint,
            radius_cells: 4.0,
            strength: 1.0,
            material: Material::SNOW,
            ignore_water: false,
        };
        let ray = (DVec3::ZERO, DVec3::NEG_Y);
        // Many frames at the same spot apply once; moving 64 studs applies
        // every 0.25 x 16 studs = 4 studs.
        for _ in 0..10 {
            s.stroke(&mut g, brush, &settings, Some(hit_at(20.0, 20.0)), ray)
                .unwrap();
        }
        assert_eq!(s.stroke.as_ref().unwrap().stroke.applications(), 1);
        s.stroke(&mut g, brush, &settings, Some(hit_at(84.0, 20.0)), ray)
            .unwrap();
        assert_eq!(s.stroke.as_ref().unwrap().stroke.applications(), 17);
        s.end_stroke(&mut g);
        assert_eq!(s.history().undo_len(), 1);
        assert_eq!(
            s.history().undo_steps().next().unwrap().label(),
            "Paint (Snow) ×17"
        );
        s.request(&mut g, ToolRequest::Undo, &settings, None)
            .unwrap();
        assert_eq!(g.content_hash(), start);
    }

    #[test]
    fn edits_over_absent_columns_wait_and_apply_once_they_are_resident() {
        // The whole floor, and a streaming grid holding only its column
        // (0, 0): a stroke from there into column (1, 0) stops at the
        // first application that needs it, keeps the rest, and finishes
        // once the column is installed, exactly like the stroke on the
        // whole floor.
        let whole = floor();
        let columns = [ColumnCoord::new(0, 0), ColumnCoord::new(1, 0)];
        let mut g = Grid::streaming();
        g.install_column(columns[0], whole.column_chunks(columns[0]))
            .unwrap();
        let brush = Brush {
            // Add, not Paint: Paint dithers by the grid revision, which
            // differs between the two grids.
            mode: BrushMode::Add,
            radius_cells: 4.0,
            strength: 1.0,
            material: Material::SNOW,
            ignore_water: false,
        };
        let settings = ToolSettings::default();
        let ray = (DVec3::ZERO, DVec3::NEG_Y);
        let paint = |s: &mut ToolSession, g: &mut Grid| {
            s.stroke(g, brush, &settings, Some(hit_at(20.0, 20.0)), ray)?;
            s.stroke(g, brush, &settings, Some(hit_at(200.0, 20.0)), ray)
        };
        let hash = |g: &Grid| {
            Grid::from_chunks(columns.iter().flat_map(|c| g.column_chunks(*c))).content_hash()
        };
        let mut reference = whole.clone();
        let mut r = ToolSession::new(1 << 30, None);
        paint(&mut r, &mut reference).unwrap();
        r.end_stroke(&mut reference);

        let mut s = ToolSession::new(1 << 30, None);
        let err = paint(&mut s, &mut g).unwrap_err();
        let ToolError::NotResident {
            columns: missing,
            edit,
        } = err
        else {
            panic!("expected a wait, got {err:?}");
        };
        assert_eq!(missing, vec![columns[1]]);
        assert_eq!(edit, WaitingEdit::Stroke);
        assert!(s.stroke_waits());
        // Still missing: the retry waits again and changes nothing.
        assert!(matches!(
            s.retry(&mut g, WaitingEdit::Stroke),
            Err(ToolError::NotResident { .. })
        ));
        g.install_column(columns[1], whole.column_chunks(columns[1]))
            .unwrap();
        s.retry(&mut g, WaitingEdit::Stroke).unwrap();
        assert!(!s.stroke_waits());
        s.end_stroke(&mut g);
        assert_eq!(s.history().undo_len(), 1, "one stroke, one undo step");
        assert_eq!(hash(&g), hash(&reference));
        assert_ne!(hash(&g), hash(&whole));

        // Undo after the column was evicted waits for it too, then restores.
        let edited = g.evict_columns(
            &[columns[1]]
                .into_iter()
                .collect::<rustc_hash::FxHashSet<_>>(),
        );
        let err = s
            .request(&mut g, ToolRequest::Undo, &settings, None)
            .unwrap_err();
        let ToolError::NotResident { edit, .. } = err else {
            panic!("expected a wait, got {err:?}");
        };
        assert_eq!(edit, WaitingEdit::Command(EditCommand::Undo));
        assert_eq!(s.history().undo_len(), 1, "nothing undone yet");
        g.install_column(columns[1], edited).unwrap();
        assert_eq!(s.retry(&mut g, edit).unwrap(), "undone");
        assert_eq!(hash(&g), hash(&whole));
    }

    #[test]
    fn alt_click_samples_the_material_under_the_cursor() {
        let g = floor();
        assert_eq!(
            sample_material(&g, &hit_at(20.0, 20.0)),
            Some(Material::ROCK)
        );
        assert_eq!(
            sample_material(&g, &hit_at(140.0, 20.0)),
            Some(Material::DIRT)
        );
        assert_eq!(sample_material(&g, &hit_at(1000.0, 1000.0)), None);
    }

    #[test]
    fn region_requests_need_a_selection_and_paste_follows_the_cursor() {
        let mut g = floor();
        let mut s = ToolSession::new(1 << 30, None);
        let mut settings = ToolSettings::default();
        assert!(
            s.request(&mut g, ToolRequest::Fill, &settings, None)
                .is_err()
        );
        let b = s.drag_region(&hit_at(2.0, 2.0));
        let b2 = s.drag_region(&hit_at(14.0, 10.0));
        s.end_drag();
        assert_eq!(b.min, IVec3::new(0, 3, 0));
        assert_eq!(b2, CellBox::new(IVec3::new(0, 3, 0), IVec3::new(4, 15, 3)));
        settings.region = Some(b2);
        settings.fill_material = Material::SNOW;
        s.request(&mut g, ToolRequest::Fill, &settings, None)
            .unwrap();
        assert_eq!(g.cell(CellCoord::new(3, 10, 2)), Cell::full(Material::SNOW));
        s.request(&mut g, ToolRequest::Copy, &settings, None)
            .unwrap();
        let at = hit_at(100.0, 100.0);
        let pb = s.paste_box(&at, 1).unwrap();
        assert_eq!(pb.max - pb.min, IVec3::new(3, 12, 4));
        settings.paste_quarter_turns = 1;
        s.request(&mut g, ToolRequest::Paste, &settings, Some(&at))
            .unwrap();
        assert_eq!(
            g.cell(CellCoord(pb.min + IVec3::new(0, 7, 0))),
            Cell::full(Material::SNOW)
        );
        assert_eq!(s.history().undo_len(), 2);
    }

    #[test]
    fn generate_needs_a_generated_world_and_restores_it() {
        let settings = GeneratorSettings {
            seed: 5,
            size_cells: 64,
        };
        let original = crate::terrain::generation::generate::generate_world(&settings).unwrap();
        let mut g = original.clone();
        let mut tools = ToolSettings {
            region: Some(CellBox::new(IVec3::new(4, 0, 4), IVec3::new(40, 200, 40))),
            ..ToolSettings::default()
        };
        let mut none = ToolSession::new(1 << 30, None);
        assert!(
            none.request(&mut g, ToolRequest::Generate, &tools, None)
                .is_err()
        );
        let mut s = ToolSession::new(1 << 30, Some(settings));
        s.request(&mut g, ToolRequest::Clear, &tools, None).unwrap();
        assert_ne!(g.content_hash(), original.content_hash());
        s.request(&mut g, ToolRequest::Generate, &tools, None)
            .unwrap();
        assert_eq!(g.content_hash(), original.content_hash());
        tools.region = None;
        assert!(s.request(&mut g, ToolRequest::Clear, &tools, None).is_err());
        assert_eq!(s.history().undo_len(), 2);
    }

    #[test]
    fn jumping_in_the_history_undoes_and_redoes_to_that_step() {
        let mut g = floor();
        let mut s = ToolSession::new(1 << 30, None);
        let mut settings = ToolSettings::default();
        let mut hashes = vec![g.content_hash()];
        for (i, m) in [Material::SNOW, Material::SAND, Material::MUD]
            .into_iter()
            .enumerate()
        {
            settings.region = Some(CellBox::new(
                IVec3::new(i as i32 * 4, 8, 0),
                IVec3::new(i as i32 * 4 + 3, 10, 3),
            ));
            settings.fill_material = m;
            s.request(&mut g, ToolRequest::Fill, &settings, None)
                .unwrap();
            hashes.push(g.content_hash());
        }
        s.request(&mut g, ToolRequest::JumpTo(1), &settings, None)
            .unwrap();
        assert_eq!(g.content_hash(), hashes[1]);
        assert_eq!((s.history().undo_len(), s.history().redo_len()), (1, 2));
        s.request(&mut g, ToolRequest::JumpTo(3), &settings, None)
            .unwrap();
        assert_eq!(g.content_hash(), hashes[3]);
        s.request(&mut g, ToolRequest::JumpTo(0), &settings, None)
            .unwrap();
        assert_eq!(g.content_hash(), hashes[0]);
    }

    #[test]
    fn an_applied_path_reopens_from_the_history_and_applies_again() {
        use crate::editor::tools::history_view::HistoryView;
        use crate::editor::tools::tools_panel::ActiveTool;
        use crate::terrain::path::spec::PathSpec;
        use glam::DVec2;
        let mut g = floor();
        let mut s = ToolSession::new(1 << 28, None);
        let mut settings = ToolSettings::default();
        let start = g.content_hash();
        let spec = PathSpec {
            width_studs: 8.0,
            ..PathSpec::road(vec![DVec2::new(20.0, 60.0), DVec2::new(230.0, 200.0)])
        };
        let message = s
            .apply_command(&mut g, &EditCommand::Path(spec.clone()))
            .unwrap();
        assert!(message.starts_with("Road laid"), "{message}");
        let laid = g.content_hash();
        assert_ne!(laid, start);
        settings.region = Some(CellBox::new(IVec3::new(0, 8, 0), IVec3::new(3, 10, 3)));
        settings.fill_material = Material::SNOW;
        s.request(&mut g, ToolRequest::Fill, &settings, None)
            .unwrap();
        // The history lists the path step (second newest) with its spec.
        let view = HistoryView::of(s.history());
        let newest = view.undo_len + view.redo_len;
        let (k, row) = view
            .rows
            .iter()
            .enumerate()
            .find(|(_, r)| r.path.is_some())
            .expect("the path step is listed");
        assert_eq!(k, 1);
        assert_eq!(row.path.as_ref(), Some(&spec));
        // Reopen: the draft holds its points, Path is active, and the
        // request undoes back to before it.
        settings.reopen_path(row.path.as_ref().unwrap(), newest - k - 1);
        assert_eq!(settings.active, ActiveTool::Path);
        assert_eq!(
            settings.path.draft.points_studs(),
            &spec.points_xz_studs[..]
        );
        for r in std::mem::take(&mut settings.requests) {
            s.request(&mut g, r, &settings, None).unwrap();
        }
        assert_eq!(g.content_hash(), start);
        assert_eq!((s.history().undo_len(), s.history().redo_len()), (0, 2));
        // Applied again unchanged, it lays the same cells.
        s.apply_command(&mut g, &EditCommand::Path(settings.path.spec()))
            .unwrap();
        assert_eq!(g.content_hash(), laid);
        assert_eq!((s.history().undo_len(), s.history().redo_len()), (1, 0));
    }

    #[test]
    fn a_copied_region_saves_as_a_stamp_that_reads_back() {
        use crate::terrain::stamp::definition::StampShape;
        let mut g = floor();
        let mut s = ToolSession::new(1 << 28, None);
        let mut settings = ToolSettings::default();
        let dir = std::env::temp_dir().join(format!("strata-save-stamp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("floor.stamp");
        // Nothing copied yet: refused, no file.
        assert!(s.save_clipboard_as_stamp(&path).is_err());
        assert!(!path.exists());
        let region = CellBox::new(IVec3::new(28, 4, 2), IVec3::new(36, 10, 7));
        settings.region = Some(region);
        s.request(&mut g, ToolRequest::Copy, &settings, None)
            .unwrap();
        let message = s.save_clipboard_as_stamp(&path).unwrap();
        assert!(message.contains("8 × 6 × 5"), "{message}");
        let stamp = crate::io::world::stamp_file::read_stamp(&path).unwrap();
        let StampShape::Cells(clip) = stamp.shape() else {
            panic!("a cell stamp");
        };
        assert_eq!(clip.size(), IVec3::new(8, 6, 5));
        // The file holds exactly the copied cells.
        let expected = s.session.clipboard.as_ref().unwrap();
        assert_eq!(clip, expected);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
