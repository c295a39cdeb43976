//! One frame of the tools, from one input value: the window gathers what
//! the pointer and keys did ([`ToolInput`]) and [`ToolDriver::frame`] runs
//! the active tool on the grid: the brush stroke (one undo step from press to
//! release, applied every spacing along the cursor path, waiting while the
//! last applications are still being meshed), the region drag, paste and
//! stamp clicks, path points, Alt+click material sampling, camera focus,
//! the sea-level action and the panel's and shortcuts' requests (undo, redo,
//! region operations). An edit that needs chunk columns a streaming world
//! does not hold waits for them ([`ColumnWait`]) and runs once they are
//! resident.
//!
//! No window or GPU is involved, so a frame of the tools is tested directly.

use std::time::{Duration, Instant};

use glam::{DVec2, DVec3, IVec3};

use crate::editor::tools::column_wait::{ColumnWait, MAX_COLUMN_WAIT, WaitPoll, WaitingEdit};
use crate::editor::tools::operation_pick::OperationPick;
use crate::editor::tools::path_draft::DraftPress;
use crate::editor::tools::tool_session::{ToolError, ToolSession, sample_material};
use crate::editor::tools::tools_panel::{ActiveTool, ToolRequest, ToolSettings};
use crate::pipeline::picking::PickHit;
use crate::terrain::command::document_action::DocumentAction;
use crate::terrain::command::edit_command::EditCommand;
use crate::terrain::document::operation::{OperationId, OperationKind};
use crate::terrain::editing::brush::Brush;
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::{CELL_SIZE_STUDS, CellBox, CellCoord};
use crate::terrain::storage::grid::Grid;

/// Longest a held brush waits for its previous applications to become
/// visible before it applies the next ones anyway. While it waits, the
/// stroke's path keeps growing and is applied (at its spacing) when meshing
/// catches up, so a big brush stays under the cursor instead of queueing
/// seconds of edits.
pub const BRUSH_BACKPRESSURE_MAX: Duration = Duration::from_millis(250);

/// Depth below the sea level, in cells, the Sea Level tool's region reaches.
pub const SEA_REGION_DEPTH_CELLS: i32 = 256;

/// A Sea Level action asked for this frame, with the panel's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeaRequest {
    /// Fill air below the level with water, or evaporate it.
    pub fill: bool,
    /// The water level, studs.
    pub level_studs: f64,
    /// Half-width of the square region around the cursor, cells.
    pub half_cells: i32,
}

/// What the pointer, keys and pipeline did since the last frame, as the
/// tools need it.
#[derive(Clone, Debug)]
pub struct ToolInput {
    /// This frame's time.
    pub now: Instant,
    /// The cursor's ray (origin, unit direction) in world studs, when the
    /// cursor is over the 3D view.
    pub ray: Option<(DVec3, DVec3)>,
    /// The surface under the cursor (picked against the surface as it was
    /// when a stroke began).
    pub hit: Option<PickHit>,
    /// The left button is held, or was pressed since the last frame (a
    /// click shorter than a frame still applies the tool once).
    pub held: bool,
    /// An Alt+click asked to sample the material under the cursor.
    pub sample_requested: bool,
    /// `F` asked to focus the camera on the cursor.
    pub focus_requested: bool,
    /// Edits handed to the meshing workers are not all visible yet.
    pub meshing_pending: bool,
    /// How far off the cursor ray a region handle is still grabbed, radians.
    pub handle_tolerance_rad: f64,
    /// The camera's position, world studs (path point picking scales with
    /// its distance).
    pub camera_pos_world: DVec3,
    /// A Sea Level action asked for this frame.
    pub sea: Option<SeaRequest>,
    /// True while the world is being replaced (File ▸ New or Open, an
    /// import): nothing edits, a held stroke ends.
    pub world_locked: bool,
}

/// What a frame of the tools asks of the window.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ToolOutcome {
    /// The press is over for the tools (the stroke was refused or given
    /// up): the window treats the button as released until the next press.
    pub end_press: bool,
    /// Move the camera to look at this point from this far (`F`): `(point,
    /// distance_studs)`.
    pub focus: Option<(DVec3, f64)>,
    /// Alt+click picked this material.
    pub sampled: Option<Material>,
}

/// The tools across frames: the session (history, clipboard, stroke and
/// region drag), an edit waiting for columns, and the state of the current
/// press.
pub struct ToolDriver {
    /// Undo history, clipboard and the stroke in progress.
    pub session: ToolSession,
    /// An edit waiting for chunk columns of a streaming world.
    pub wait: ColumnWait,
    /// The current left press already pasted, stamped or placed a path
    /// point (one per click).
    pressed_once: bool,
    /// When the held brush last applied (for back-pressure).
    last_stroke_apply: Option<Instant>,
    /// Picking and dragging operations in the view.
    pick: OperationPick,
}

impl ToolDriver {
    /// Tools over `session` with nothing waiting and no press.
    pub fn new(session: ToolSession) -> ToolDriver {
        ToolDriver {
            session,
            wait: ColumnWait::default(),
            pressed_once: false,
            last_stroke_apply: None,
            pick: OperationPick::default(),
        }
    }

    /// Forgets the press and any waiting edit (the world was replaced).
    pub fn reset_press(&mut self) {
        self.wait.take();
        self.pressed_once = false;
        self.last_stroke_apply = None;
    }

    /// Runs the tools for one frame on `grid` with the panel's `settings`
    /// and `brush`. Messages for the panel go to `settings.message`.
    pub fn frame(
        &mut self,
        grid: &mut Grid,
        settings: &mut ToolSettings,
        brush: Brush,
        input: &ToolInput,
    ) -> ToolOutcome {
        let mut outcome = ToolOutcome::default();
        if settings.active == ActiveTool::Stamp {
            // K with no stamp chosen yet: start with the default one.
            settings.stamp.ensure_chosen();
        }
        if input.world_locked {
            // While the next world is built, edits would be lost.
            outcome.end_press = input.held;
        } else {
            self.pointer_tools(grid, settings, brush, input, &mut outcome);
        }
        if let Some(sea) = input.sea {
            self.apply_sea_level(grid, settings, sea, input);
        }
        outcome
    }

    /// The pointer-driven tools, sampling, focus and the queued requests.
    fn pointer_tools(
        &mut self,
        grid: &mut Grid,
        settings: &mut ToolSettings,
        brush: Brush,
        input: &ToolInput,
        outcome: &mut ToolOutcome,
    ) {
        let now = input.now;
        if let Some(message) = self.session.poll_base_job(grid) {
            settings.message = Some(message);
        }
        // An edit waiting for chunk columns runs first once they arrived;
        // until then nothing else edits (the stroke pauses).
        let waiting = self.run_waiting_edit(grid, settings, now, outcome);
        let held = input.held && !outcome.end_press;
        self.active_tool(grid, settings, brush, input, held, waiting, outcome);
        if settings.path.action.take().is_some() && !waiting {
            self.lay_path(grid, settings, now);
        }
        if let Some(path) = settings.save_stamp_to.take() {
            settings.message = Some(match self.session.save_clipboard_as_stamp(&path) {
                Ok(message) => {
                    settings.stamp.add_file(&path);
                    (message, false)
                }
                Err(e) => (e, true),
            });
        }
        if !held {
            self.release(grid, settings);
        }
        if input.sample_requested
            && let Some(hit) = input.hit
        {
            match sample_material(grid, &hit) {
                Some(m) => {
                    outcome.sampled = Some(m);
                    settings.message = Some((format!("picked {}", m.name()), false));
                }
                None => settings.message = Some(("no solid material there".into(), true)),
            }
        }
        if input.focus_requested
            && let Some(hit) = input.hit
        {
            let distance =
                (f64::from(brush.radius_cells) * f64::from(CELL_SIZE_STUDS) * 8.0).max(48.0);
            outcome.focus = Some((hit.pos_world, distance));
        }
        if !self.wait.is_waiting() {
            self.run_requests(grid, settings, input);
        }
    }

    /// The active tool under a held (or just pressed) button.
    #[allow(clippy::too_many_arguments)]
    fn active_tool(
        &mut self,
        grid: &mut Grid,
        settings: &mut ToolSettings,
        brush: Brush,
        input: &ToolInput,
        held: bool,
        waiting: bool,
        outcome: &mut ToolOutcome,
    ) {
        let now = input.now;
        // Back-pressure: while the last applications are still being
        // meshed (at most BRUSH_BACKPRESSURE_MAX), the stroke waits.
        let meshing_behind = input.meshing_pending
            && self
                .last_stroke_apply
                .is_some_and(|t| now.duration_since(t) < BRUSH_BACKPRESSURE_MAX);
        if settings.layers.pick_in_view || self.pick.holds_press() {
            let handle_studs = input
                .hit
                .map_or(0.0, |h| path_pick_studs(input, h.pos_world));
            // Turning pick off mid-drag ends the drag.
            let held = held && settings.layers.pick_in_view;
            if let Some(m) = self.pick.frame(
                &mut self.session,
                grid,
                settings,
                input.hit.as_ref(),
                held,
                handle_studs,
                meshing_behind,
            ) {
                settings.message = Some(m);
            }
            return;
        }
        match settings.active {
            ActiveTool::Brush if !held => {}
            ActiveTool::Brush if waiting || (self.session.in_stroke() && meshing_behind) => {}
            ActiveTool::Brush => {
                self.last_stroke_apply = Some(now);
                let Some(ray) = input.ray else { return };
                match self.session.stroke(grid, brush, settings, input.hit, ray) {
                    Ok(()) => {}
                    Err(ToolError::Refused(e)) => {
                        log::warn!("brush not applied: {e}");
                        settings.message = Some((e, true));
                        outcome.end_press = true;
                        let _ = self.session.end_stroke(grid);
                    }
                    Err(e) => self.wait_for_columns(e, settings, now),
                }
            }
            ActiveTool::Region if held => {
                settings.region = self.session.region_press(
                    settings.region,
                    input.ray,
                    input.hit.as_ref(),
                    input.handle_tolerance_rad,
                );
            }
            ActiveTool::Paste if held && !self.pressed_once => {
                self.pressed_once = true;
                settings.requests.push(ToolRequest::Paste);
            }
            ActiveTool::Stamp if held && !self.pressed_once && !waiting => {
                self.pressed_once = true;
                self.press_stamp(grid, settings, input);
            }
            ActiveTool::Path if held => self.edit_path_points(settings, input),
            _ => {}
        }
    }

    /// The button is up: path drags and region drags end, a stroke commits
    /// (unless its applications still wait for columns), the next press may
    /// paste or stamp again.
    fn release(&mut self, grid: &mut Grid, settings: &mut ToolSettings) {
        settings.path.draft.release();
        if !self.wait.is_stroke_waiting()
            && let Some(e) = self.session.end_stroke(grid)
        {
            settings.message = Some((e, true));
        }
        self.session.end_drag();
        self.pressed_once = false;
    }

    /// The panel's and shortcuts' requests, in order; one that waits for
    /// columns keeps the rest queued behind it.
    fn run_requests(&mut self, grid: &mut Grid, settings: &mut ToolSettings, input: &ToolInput) {
        let mut requests = std::mem::take(&mut settings.requests).into_iter();
        while let Some(request) = requests.next() {
            match self
                .session
                .request(grid, request, settings, input.hit.as_ref())
            {
                Ok(m) => settings.message = Some((m, false)),
                Err(ToolError::Refused(e)) => settings.message = Some((e, true)),
                Err(e) => {
                    self.wait_for_columns(e, settings, input.now);
                    settings.requests.extend(requests);
                    break;
                }
            }
        }
    }

    /// A click with the Stamp tool: presses the chosen stamp in, centred on
    /// the surface under the cursor, as one undo step.
    fn press_stamp(&mut self, grid: &mut Grid, settings: &mut ToolSettings, input: &ToolInput) {
        let Some(hit) = input.hit else { return };
        let Some(stamp) = settings.stamp.stamp().cloned() else {
            settings.message = Some(("choose a stamp in the Stamp section".into(), true));
            return;
        };
        let command = EditCommand::Stamp {
            placement: settings.stamp.placement_at(hit.pos_world),
            stamp,
        };
        match self.session.apply_command(grid, &command) {
            Ok(message) => settings.message = Some((message, false)),
            Err(e) => self.wait_for_columns(e, settings, input.now),
        }
    }

    /// One frame of a held press with the Path tool: the press appends,
    /// inserts or picks up a control point; later frames drag it.
    fn edit_path_points(&mut self, settings: &mut ToolSettings, input: &ToolInput) {
        let Some(hit) = input.hit else { return };
        let at = DVec2::new(hit.pos_world.x, hit.pos_world.z);
        if self.pressed_once {
            settings.path.draft.drag_to(at);
            return;
        }
        self.pressed_once = true;
        let pick_studs = path_pick_studs(input, hit.pos_world);
        if settings.path.draft.press(at, pick_studs) == Some(DraftPress::Full) {
            settings.message = Some(("a path holds at most 256 points".into(), true));
        }
    }

    /// Lays the path being drawn (Enter or Apply) as one undo step; the
    /// points are cleared once it is laid.
    fn lay_path(&mut self, grid: &mut Grid, settings: &mut ToolSettings, now: Instant) {
        let spec = settings.path.spec();
        let command = match settings.path.editing {
            // The edited operation keeps its id and place in its layer.
            Some(id) => EditCommand::Document(Box::new(DocumentAction::ReplaceOperation(
                OperationId(id),
                OperationKind::Path(spec),
            ))),
            None => EditCommand::Path(spec),
        };
        match self.session.apply_command(grid, &command) {
            Ok(message) => {
                settings.path.draft.clear();
                settings.path.editing = None;
                settings.message = Some((message, false));
            }
            Err(e) => self.wait_for_columns(e, settings, now),
        }
    }

    /// Runs the Sea Level tool in the square region around the cursor's
    /// surface point, from [`SEA_REGION_DEPTH_CELLS`] below the level up to it.
    fn apply_sea_level(
        &mut self,
        grid: &mut Grid,
        settings: &mut ToolSettings,
        sea: SeaRequest,
        input: &ToolInput,
    ) {
        let Some(hit) = input.hit else {
            log::warn!("sea level: point the cursor at the terrain to choose the region");
            return;
        };
        let Some(command) = sea_command(hit.pos_world, sea) else {
            settings.message = Some(("the sea level is not a finite height".into(), true));
            return;
        };
        if self.wait.is_waiting() {
            settings.message = Some(("an edit is still loading".into(), true));
            return;
        }
        match self.session.apply_command(grid, &command) {
            Ok(_) => {}
            Err(ToolError::Refused(e)) => log::warn!("sea level not applied: {e}"),
            Err(e) => self.wait_for_columns(e, settings, input.now),
        }
    }

    /// Parks an edit that found chunk columns missing (spec §12) until
    /// they are resident; the panel and the cursor say "loading".
    fn wait_for_columns(&mut self, e: ToolError, settings: &mut ToolSettings, now: Instant) {
        match e {
            ToolError::NotResident { columns, edit } => {
                log::debug!("edit waits for {} chunk columns", columns.len());
                self.wait.start(edit, &columns, now);
                settings.message =
                    Some((format!("loading {} chunk columns…", columns.len()), false));
            }
            ToolError::Refused(e) => settings.message = Some((e, true)),
        }
    }

    /// Runs the edit that waited for chunk columns once they are all
    /// resident. Returns true while an edit still waits.
    fn run_waiting_edit(
        &mut self,
        grid: &mut Grid,
        settings: &mut ToolSettings,
        now: Instant,
        outcome: &mut ToolOutcome,
    ) -> bool {
        match self.wait.poll(now, |c| grid.is_column_resident(c)) {
            WaitPoll::Idle => false,
            WaitPoll::Loading(_) => true,
            WaitPoll::Ready(edit) => {
                let stroke = edit == WaitingEdit::Stroke;
                match self.session.retry(grid, edit) {
                    Ok(m) => {
                        settings.message =
                            Some((if m.is_empty() { "loaded".into() } else { m }, false));
                        false
                    }
                    Err(ToolError::Refused(e)) => {
                        settings.message = Some((e, true));
                        if stroke {
                            outcome.end_press = true;
                            let _ = self.session.end_stroke(grid);
                        }
                        false
                    }
                    Err(e) => {
                        self.wait_for_columns(e, settings, now);
                        true
                    }
                }
            }
            WaitPoll::TimedOut(edit) => {
                settings.message = Some((
                    format!(
                        "gave up: chunk columns did not load within {} s",
                        MAX_COLUMN_WAIT.as_secs()
                    ),
                    true,
                ));
                if edit == WaitingEdit::Stroke {
                    outcome.end_press = true;
                    let _ = self.session.end_stroke(grid);
                }
                false
            }
        }
    }
}

/// How close to a control point (studs, on the surface at `pos_world`) a
/// click picks it: the handle pick radius at that distance from the camera.
pub fn path_pick_studs(input: &ToolInput, pos_world: DVec3) -> f64 {
    (input.handle_tolerance_rad * input.camera_pos_world.distance(pos_world)).max(2.0)
}

/// The Sea Level command for the square around the surface point
/// `pos_world`: half-width `sea.half_cells`, from
/// [`SEA_REGION_DEPTH_CELLS`] below the level up to it (`None` for a level
/// that is not finite).
pub fn sea_command(pos_world: DVec3, sea: SeaRequest) -> Option<EditCommand> {
    if !sea.level_studs.is_finite() {
        return None;
    }
    let cell = CellCoord::containing_world(pos_world).0;
    let half = sea.half_cells;
    let level_cells = sea.level_studs / f64::from(CELL_SIZE_STUDS);
    let bottom = (level_cells.floor() as i32).saturating_sub(SEA_REGION_DEPTH_CELLS);
    let region = CellBox::new(
        IVec3::new(cell.x - half, bottom, cell.z - half),
        IVec3::new(cell.x + half, level_cells.ceil() as i32 + 1, cell.z + half),
    );
    Some(if sea.fill {
        EditCommand::FillSeaLevel {
            region,
            level_cells,
        }
    } else {
        EditCommand::Evaporate {
            region,
            level_cells,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::editor::tools::tools_panel::ToolSettings;
    use crate::terrain::editing::brush::BrushMode;
    use crate::terrain::storage::cell::Cell;
    use crate::terrain::storage::coords::ChunkCoord;
    use glam::Vec3;

    /// A 64 × 64 rock floor 8 cells thick (its top at 32 studs).
    fn floor() -> Grid {
        let mut g = Grid::new();
        g.edit_region(CellBox::new(IVec3::ZERO, IVec3::new(64, 8, 64)), |_, _| {
            Cell::full(Material::ROCK)
        })
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

    fn brush(mode: BrushMode) -> Brush {
        Brush {
            mode,
            radius_cells: 3.0,
            strength: 1.0,
            material: Material::SAND,
            ignore_water: false,
        }
    }

    /// One frame's input with the cursor over `hit`, looking straight down.
    fn input(hit: Option<PickHit>, held: bool, now: Instant) -> ToolInput {
        ToolInput {
            now,
            ray: hit.map(|h| (h.pos_world + DVec3::Y * 10.0, DVec3::NEG_Y)),
            hit,
            held,
            sample_requested: false,
            focus_requested: false,
            meshing_pending: false,
            handle_tolerance_rad: 0.01,
            camera_pos_world: DVec3::new(100.0, 200.0, 100.0),
            sea: None,
            world_locked: false,
        }
    }

    fn driver() -> ToolDriver {
        ToolDriver::new(ToolSession::new(1 << 30, None))
    }

    #[test]
    fn a_click_shorter_than_a_frame_is_one_application_and_one_undo_step() {
        let mut g = floor();
        let before = g.content_hash();
        let mut tools = driver();
        let mut settings = ToolSettings::default();
        let t = Instant::now();
        let hit = Some(hit_at(100.0, 100.0));
        tools.frame(
            &mut g,
            &mut settings,
            brush(BrushMode::Add),
            &input(hit, true, t),
        );
        assert_ne!(g.content_hash(), before, "the press applied the brush");
        let after_press = g.content_hash();
        tools.frame(
            &mut g,
            &mut settings,
            brush(BrushMode::Add),
            &input(hit, false, t),
        );
        assert_eq!(g.content_hash(), after_press, "the release applies nothing");
        assert_eq!(tools.session.history().undo_len(), 1);
        let label = tools
            .session
            .history()
            .undo_steps()
            .next_back()
            .map(|s| s.label().to_string());
        assert_eq!(label.as_deref(), Some("Add (Sand) ×1"));
    }

    #[test]
    fn a_stamp_press_held_over_frames_stamps_once() {
        let mut g = floor();
        let mut tools = driver();
        let mut settings = ToolSettings {
            active: ActiveTool::Stamp,
            ..ToolSettings::default()
        };
        let t = Instant::now();
        let hit = Some(hit_at(128.0, 128.0));
        // No stamp chosen: the press says so and changes nothing.
        settings.stamp = crate::editor::tools::stamp_panel::StampToolSettings::new(Vec::new());
        let before = g.content_hash();
        tools.frame(
            &mut g,
            &mut settings,
            brush(BrushMode::Add),
            &input(hit, true, t),
        );
        assert_eq!(g.content_hash(), before);
        assert_eq!(
            settings.message,
            Some(("choose a stamp in the Stamp section".into(), true))
        );
        tools.frame(
            &mut g,
            &mut settings,
            brush(BrushMode::Add),
            &input(hit, false, t),
        );
        // With a stamp, three frames of one press stamp once.
        let stamps = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/stamps");
        settings.stamp = crate::editor::tools::stamp_panel::StampToolSettings::new(vec![stamps]);
        assert!(settings.stamp.choose_named("crater"));
        settings.stamp.radius_cells = 8.0;
        settings.stamp.height_scale_cells = 4.0;
        for _ in 0..3 {
            tools.frame(
                &mut g,
                &mut settings,
                brush(BrushMode::Add),
                &input(hit, true, t),
            );
        }
        let once = g.content_hash();
        assert_ne!(once, before);
        tools.frame(
            &mut g,
            &mut settings,
            brush(BrushMode::Add),
            &input(hit, false, t),
        );
        assert_eq!(tools.session.history().undo_len(), 1);
        // The next press stamps again.
        tools.frame(
            &mut g,
            &mut settings,
            brush(BrushMode::Add),
            &input(hit, true, t),
        );
        assert_eq!(tools.session.history().undo_len(), 2);
    }

    /// The input that failed: K, then a click, did nothing until a stamp
    /// was chosen in the library.
    #[test]
    fn the_stamp_tool_starts_with_a_stamp_chosen() {
        let mut g = floor();
        let before = g.content_hash();
        let mut tools = driver();
        let stamps = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/stamps");
        let mut settings = ToolSettings {
            active: ActiveTool::Stamp,
            stamp: crate::editor::tools::stamp_panel::StampToolSettings::new(vec![stamps]),
            ..ToolSettings::default()
        };
        assert!(settings.stamp.stamp().is_none());
        settings.stamp.radius_cells = 8.0;
        settings.stamp.height_scale_cells = 4.0;
        let hit = Some(hit_at(128.0, 128.0));
        let frame = input(hit, true, Instant::now());
        tools.frame(&mut g, &mut settings, brush(BrushMode::Add), &frame);
        let chosen = settings.stamp.stamp().map(|s| s.name().to_string());
        assert_eq!(chosen.as_deref(), Some("crater"));
        assert_ne!(g.content_hash(), before);
        assert_eq!(tools.session.history().undo_len(), 1);
    }

    #[test]
    fn alt_click_samples_and_focus_frames_the_cursor() {
        let mut g = floor();
        let mut tools = driver();
        let mut settings = ToolSettings::default();
        let mut frame = input(Some(hit_at(100.0, 100.0)), false, Instant::now());
        frame.sample_requested = true;
        frame.focus_requested = true;
        let out = tools.frame(&mut g, &mut settings, brush(BrushMode::Add), &frame);
        assert_eq!(out.sampled, Some(Material::ROCK));
        // 3 cells × 4 studs × 8 = 96 studs back from the point.
        assert_eq!(out.focus, Some((DVec3::new(100.0, 32.0, 100.0), 96.0)));
        // Off the terrain there is nothing to sample or focus on.
        frame.hit = None;
        let out = tools.frame(&mut g, &mut settings, brush(BrushMode::Add), &frame);
        assert_eq!((out.sampled, out.focus), (None, None));
    }

    #[test]
    fn nothing_edits_while_the_world_is_replaced_and_the_press_ends() {
        let mut g = floor();
        let before = g.content_hash();
        let mut tools = driver();
        let mut settings = ToolSettings::default();
        let mut frame = input(Some(hit_at(100.0, 100.0)), true, Instant::now());
        frame.world_locked = true;
        let out = tools.frame(&mut g, &mut settings, brush(BrushMode::Add), &frame);
        assert!(out.end_press);
        assert_eq!(g.content_hash(), before);
    }

    #[test]
    fn the_sea_level_action_fills_air_below_the_level_around_the_cursor() {
        let mut g = floor();
        let mut tools = driver();
        let mut settings = ToolSettings::default();
        let mut frame = input(Some(hit_at(100.0, 100.0)), false, Instant::now());
        frame.sea = Some(SeaRequest {
            fill: true,
            level_studs: 40.0,
            half_cells: 4,
        });
        tools.frame(&mut g, &mut settings, brush(BrushMode::Add), &frame);
        // Cells 8 and 9 (32–40 studs) above the floor under the cursor are water now.
        let cell = |y| g.cell(CellCoord::new(25, y, 25));
        assert_eq!(cell(8).material(), Material::WATER);
        assert_eq!(cell(9).material(), Material::WATER);
        assert!(cell(10).is_empty());
        // Outside the square around the cursor nothing changed.
        assert!(g.cell(CellCoord::new(35, 8, 25)).is_empty());
        assert_eq!(tools.session.history().undo_len(), 1);
    }

    #[test]
    fn a_sea_level_that_is_not_finite_is_refused() {
        let sea = SeaRequest {
            fill: true,
            level_studs: f64::NAN,
            half_cells: 4,
        };
        assert_eq!(sea_command(DVec3::ZERO, sea), None);
    }

    #[test]
    fn pick_in_view_selects_the_stroke_under_the_cursor_and_a_drag_moves_it() {
        let mut g = floor();
        let mut tools = driver();
        tools.session.session.enable_document(&g);
        let mut settings = ToolSettings::default();
        let t = Instant::now();
        // A one-application stroke at (100, 100) studs.
        let at = Some(hit_at(100.0, 100.0));
        tools.frame(
            &mut g,
            &mut settings,
            brush(BrushMode::Add),
            &input(at, true, t),
        );
        tools.frame(
            &mut g,
            &mut settings,
            brush(BrushMode::Add),
            &input(at, false, t),
        );
        let stroked = g.content_hash();
        assert_eq!(tools.session.session.document.stack.operation_count(), 1);
        // Nothing under the cursor far away: no selection, nothing changes.
        settings.layers.pick_in_view = true;
        let far = Some(hit_at(240.0, 240.0));
        tools.frame(
            &mut g,
            &mut settings,
            brush(BrushMode::Add),
            &input(far, true, t),
        );
        tools.frame(
            &mut g,
            &mut settings,
            brush(BrushMode::Add),
            &input(far, false, t),
        );
        assert_eq!(settings.layers.selected_operation, None);
        assert_eq!(g.content_hash(), stroked);
        // Press on the stroke, release 40 studs east: it moves there.
        tools.frame(
            &mut g,
            &mut settings,
            brush(BrushMode::Add),
            &input(at, true, t),
        );
        assert_eq!(settings.layers.selected_operation, Some(1));
        let steps = tools.session.history().undo_len();
        let to = Some(hit_at(140.0, 100.0));
        tools.frame(
            &mut g,
            &mut settings,
            brush(BrushMode::Add),
            &input(to, true, t),
        );
        // Live: the cells follow while the button is still held.
        let live = g.content_hash();
        assert_ne!(live, stroked);
        tools.frame(
            &mut g,
            &mut settings,
            brush(BrushMode::Add),
            &input(to, false, t),
        );
        assert_eq!(g.content_hash(), live);
        assert_eq!(tools.session.history().undo_len(), steps + 1, "one step");
        let doc = &tools.session.session.document;
        let (_, op) = doc.stack.operation(OperationId(1)).unwrap();
        let crate::terrain::document::operation::OperationKind::Stroke(s) = op.kind() else {
            unreachable!("a stroke was recorded")
        };
        assert_eq!(s.centres_world[0].x, 140.0);
        let whole =
            crate::terrain::document::derive::derive_whole(doc.base().unwrap(), &doc.stack).0;
        assert_eq!(g.content_hash(), whole.content_hash());
        // One undo step puts it back.
        tools.frame(
            &mut g,
            &mut settings,
            brush(BrushMode::Add),
            &input(None, false, t),
        );
        settings.requests.push(ToolRequest::Undo);
        tools.frame(
            &mut g,
            &mut settings,
            brush(BrushMode::Add),
            &input(None, false, t),
        );
        assert_eq!(g.content_hash(), stroked);
    }

    #[test]
    fn a_path_operation_picked_for_editing_is_replaced_in_place() {
        let mut g = floor();
        let mut tools = driver();
        tools.session.session.enable_document(&g);
        let mut settings = ToolSettings::default();
        let t = Instant::now();
        let frame = |tools: &mut ToolDriver, g: &mut Grid, settings: &mut ToolSettings| {
            tools.frame(g, settings, brush(BrushMode::Add), &input(None, false, t));
        };
        let lay = |settings: &mut ToolSettings, points: &[(f64, f64)]| {
            let pts = points.iter().map(|&(x, z)| DVec2::new(x, z)).collect();
            settings.path.draft = crate::editor::tools::path_draft::PathDraft::from_points(pts);
            settings.path.action = Some(crate::editor::tools::path_panel::PathAction::Apply);
        };
        lay(&mut settings, &[(20.0, 20.0), (200.0, 40.0)]);
        frame(&mut tools, &mut g, &mut settings);
        let laid = g.content_hash();
        let steps = tools.session.history().undo_len();
        let doc = &tools.session.session.document;
        assert_eq!(doc.stack.operation_count(), 1);
        let (_, op) = doc.stack.operation(OperationId(1)).unwrap();
        let OperationKind::Path(spec) = op.kind().clone() else {
            unreachable!("a path was laid")
        };
        // Picked for editing: the draft holds its points, Path is active.
        settings.edit_path_operation(1, &spec);
        assert_eq!(
            settings.path.draft.points_studs(),
            &spec.points_xz_studs[..]
        );
        assert_eq!(settings.active, ActiveTool::Path);
        // A point moved and Apply: the same operation, re-laid.
        lay(&mut settings, &[(20.0, 20.0), (120.0, 200.0)]);
        frame(&mut tools, &mut g, &mut settings);
        assert_eq!(settings.path.editing, None, "editing ends with Apply");
        let doc = &tools.session.session.document;
        assert_eq!(doc.stack.operation_count(), 1, "replaced, not added");
        let (_, op) = doc.stack.operation(OperationId(1)).unwrap();
        let OperationKind::Path(edited) = op.kind() else {
            unreachable!("still a path")
        };
        assert_eq!(edited.points_xz_studs[1], DVec2::new(120.0, 200.0));
        assert_ne!(g.content_hash(), laid);
        let whole =
            crate::terrain::document::derive::derive_whole(doc.base().unwrap(), &doc.stack).0;
        assert_eq!(g.content_hash(), whole.content_hash());
        assert_eq!(tools.session.history().undo_len(), steps + 1);
    }
}
