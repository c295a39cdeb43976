//! Picking an operation in the view and dragging it (spec §14): a press
//! selects the stamp, path, stroke or box under the cursor (and makes its
//! layer active); dragging moves it, or, on a selected stamp's handle,
//! turns and scales it. The world re-derives live while the button is held
//! and the whole drag is one undo step (releasing where it began changes
//! nothing).

use glam::{DVec2, DVec3};

use crate::editor::tools::shape_previews::stamp_handle_xz_cells;
use crate::editor::tools::tool_session::ToolSession;
use crate::editor::tools::tools_panel::ToolSettings;
use crate::pipeline::picking::PickHit;
use crate::terrain::document::operation::{OperationId, OperationKind};
use crate::terrain::stamp::definition::StampPlacement;
use crate::terrain::storage::coords::{CELL_SIZE_STUDS, CellCoord};
use crate::terrain::storage::grid::Grid;

/// Finest step of a live move, cells: the drag re-derives when the cursor
/// has moved this far (a move is rounded to whole cells anyway).
const MOVE_STEP_CELLS: f64 = 1.0;

/// Finest step of a live turn, degrees.
const TURN_STEP_DEG: f64 = 1.0;

/// Finest step of a live scale, cells.
const SCALE_STEP_CELLS: f64 = 0.5;

/// What a held press on an operation does.
#[derive(Clone, Copy, Debug, PartialEq)]
enum DragMode {
    /// Moves it by the cursor's travel from `start_world` (studs).
    Move { start_world: DVec3 },
    /// Turns and scales a stamp about its centre (cells `(x, z)`): the
    /// handle follows the cursor.
    TurnScale { centre_xz_cells: DVec2 },
}

/// The pick-in-view state of one press.
#[derive(Debug, Default)]
pub struct OperationPick {
    /// The button went down this press (one pick per press).
    pressed: bool,
    mode: Option<DragMode>,
    /// The operation as last shown, so an unchanged cursor re-derives
    /// nothing.
    last_shown: Option<OperationKind>,
}

/// `kind` (a stamp) turned and scaled so its handle lies at `cursor`
/// (cells `(x, z)`) around `centre`: the rotation in whole degrees, the
/// radius in half cells. `None` for other kinds or a cursor on the centre.
fn turned_and_scaled(kind: &OperationKind, centre: DVec2, cursor: DVec2) -> Option<OperationKind> {
    let OperationKind::Stamp { stamp, placement } = kind else {
        return None;
    };
    let v = cursor - centre;
    if v.length() < SCALE_STEP_CELLS {
        return None;
    }
    let rotation_deg = (v.y.atan2(v.x).to_degrees() / TURN_STEP_DEG).round() * TURN_STEP_DEG;
    let radius_cells = (v.length() / SCALE_STEP_CELLS).round() * SCALE_STEP_CELLS;
    Some(OperationKind::Stamp {
        stamp: stamp.clone(),
        placement: StampPlacement {
            rotation_deg,
            radius_cells,
            ..*placement
        },
    })
}

/// The surface point's `(x, z)`, cells.
fn xz_cells(pos_world: DVec3) -> DVec2 {
    DVec2::new(pos_world.x, pos_world.z) / f64::from(CELL_SIZE_STUDS)
}

impl OperationPick {
    /// True from a press in pick mode until its release is seen (so a
    /// release after pick mode was turned off still ends the press and
    /// any drag).
    pub fn holds_press(&self) -> bool {
        self.pressed || self.mode.is_some()
    }

    /// One frame of the pick tool: `held` is the left button, `hit` the
    /// surface under the cursor, `handle_studs` how close to the selected
    /// stamp's handle a press grabs it, and `meshing_behind` holds a live
    /// re-derivation back while the last one is still being meshed.
    /// Returns a message for the status line, if any.
    #[allow(clippy::too_many_arguments)]
    pub fn frame(
        &mut self,
        tools: &mut ToolSession,
        grid: &mut Grid,
        settings: &mut ToolSettings,
        hit: Option<&PickHit>,
        held: bool,
        handle_studs: f64,
        meshing_behind: bool,
    ) -> Option<(String, bool)> {
        match (held, self.mode) {
            (true, None) if !self.pressed => {
                self.pressed = true;
                self.press(tools, grid, settings, hit?, handle_studs)
            }
            (true, Some(mode)) if !meshing_behind => self.drag(tools, grid, mode, hit?),
            (false, _) => {
                self.pressed = false;
                self.last_shown = None;
                let done = match self.mode.take() {
                    Some(DragMode::TurnScale { .. }) => "turned and scaled; one undo step",
                    _ => "moved; one undo step",
                };
                tools
                    .session
                    .finish_operation_drag(grid)
                    .then(|| (done.to_string(), false))
            }
            _ => None,
        }
    }

    /// A new press: the selected stamp's handle, else the operation under
    /// the cursor.
    fn press(
        &mut self,
        tools: &mut ToolSession,
        grid: &mut Grid,
        settings: &mut ToolSettings,
        hit: &PickHit,
        handle_studs: f64,
    ) -> Option<(String, bool)> {
        let cursor = xz_cells(hit.pos_world);
        let stack = &tools.session.document.stack;
        let selected = settings
            .layers
            .selected_operation
            .and_then(|id| stack.operation(OperationId(id)));
        if let Some((_, op)) = selected
            && let OperationKind::Stamp { placement, .. } = op.kind()
            && (stamp_handle_xz_cells(placement) - cursor).length() * f64::from(CELL_SIZE_STUDS)
                <= handle_studs
        {
            let (id, centre) = (op.id, placement.centre_xz_cells);
            return self.begin(
                tools,
                grid,
                id,
                DragMode::TurnScale {
                    centre_xz_cells: centre,
                },
            );
        }
        let column = CellCoord::containing_world(hit.pos_world).0;
        let doc = &mut tools.session.document;
        let Some((layer, id)) = doc.stack.operation_at(glam::IVec2::new(column.x, column.z)) else {
            settings.layers.selected_operation = None;
            return Some(("no operation under the cursor".into(), false));
        };
        // The layer exists: it was just found.
        let _ = doc.stack.select_layer(layer);
        settings.layers.selected_operation = Some(id.0);
        let start_world = hit.pos_world;
        self.begin(tools, grid, id, DragMode::Move { start_world })
            .or_else(|| Some((format!("picked operation {}: drag to move it", id.0), false)))
    }

    fn begin(
        &mut self,
        tools: &mut ToolSession,
        grid: &mut Grid,
        id: OperationId,
        mode: DragMode,
    ) -> Option<(String, bool)> {
        match tools.session.begin_operation_drag(grid, id) {
            Ok(()) => {
                self.mode = Some(mode);
                self.last_shown = None;
                match mode {
                    DragMode::TurnScale { .. } => {
                        Some(("drag the handle to turn and scale the stamp".into(), false))
                    }
                    DragMode::Move { .. } => None,
                }
            }
            // A locked layer: selected, not draggable.
            Err(e) => Some((e.to_string(), true)),
        }
    }

    /// A held press moved: shows the operation where the cursor puts it.
    fn drag(
        &mut self,
        tools: &mut ToolSession,
        grid: &mut Grid,
        mode: DragMode,
        hit: &PickHit,
    ) -> Option<(String, bool)> {
        let original = tools.session.operation_drag()?.original().clone();
        let kind = match mode {
            DragMode::Move { start_world } => {
                let by = xz_cells(hit.pos_world) - xz_cells(start_world);
                let by = (by / MOVE_STEP_CELLS).round() * MOVE_STEP_CELLS;
                original.translated(by * f64::from(CELL_SIZE_STUDS))
            }
            DragMode::TurnScale { centre_xz_cells } => {
                turned_and_scaled(&original, centre_xz_cells, xz_cells(hit.pos_world))?
            }
        };
        let unchanged = match &self.last_shown {
            Some(last) => *last == kind,
            None => kind == original,
        };
        if unchanged {
            return None;
        }
        let previous = self.last_shown.replace(kind.clone());
        match tools.session.drag_operation_to(grid, kind) {
            Ok(()) => None,
            // A streaming world lacks columns the move re-derives: the last
            // shown state stays and the move is tried again next frame.
            Err(e) if e.missing_columns().is_some() => {
                self.last_shown = previous;
                let n = e.missing_columns().map_or(0, <[_]>::len);
                Some((
                    format!("Waiting for {n} chunk columns the move re-derives to load"),
                    false,
                ))
            }
            // Off the lattice or too large: the last good state stays.
            Err(e) => Some((e.to_string(), true)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::editor::tools::shape_previews::stamp_handle_xz_cells;
    use crate::terrain::stamp::definition::{Stamp, StampBase, StampMode};
    use std::sync::Arc;

    fn stamp_kind(rotation_deg: f64, radius_cells: f64) -> OperationKind {
        OperationKind::Stamp {
            stamp: Arc::new(Stamp::height("s", 2, 2, vec![0.5; 4]).unwrap()),
            placement: StampPlacement {
                centre_xz_cells: DVec2::new(10.0, 20.0),
                base: StampBase::SurfaceUnderCentre,
                rotation_deg,
                radius_cells,
                height_scale_cells: 4.0,
                falloff_fraction: 0.2,
                mode: StampMode::Add,
                material: None,
            },
        }
    }

    #[test]
    fn the_handle_lies_one_radius_along_the_rotation_and_follows_the_cursor() {
        let OperationKind::Stamp { placement, .. } = stamp_kind(90.0, 8.0) else {
            unreachable!()
        };
        let h = stamp_handle_xz_cells(&placement);
        assert!((h - DVec2::new(10.0, 28.0)).length() < 1e-9, "{h}");
        let centre = placement.centre_xz_cells;
        // The cursor on the handle: nothing changes.
        assert_eq!(
            turned_and_scaled(&stamp_kind(90.0, 8.0), centre, h),
            Some(stamp_kind(90.0, 8.0))
        );
        // 12.3 cells out along −x: turned to 180°, radius rounded to 12.5.
        let to = centre + DVec2::new(-12.3, 0.0);
        assert_eq!(
            turned_and_scaled(&stamp_kind(90.0, 8.0), centre, to),
            Some(stamp_kind(180.0, 12.5))
        );
        // On the centre: no turn can be read.
        assert_eq!(
            turned_and_scaled(&stamp_kind(0.0, 8.0), centre, centre),
            None
        );
    }

    #[test]
    fn escape_puts_back_an_operation_being_dragged() {
        use crate::editor::tools::tools_panel::{Shortcut, ToolSettings};
        use crate::terrain::command::edit_command::EditCommand;
        use crate::terrain::storage::cell::{Cell, Material};
        use crate::terrain::storage::coords::{CellBox, ChunkCoord};
        use glam::{IVec3, Vec3};

        let mut g = Grid::new();
        g.edit_region(CellBox::new(IVec3::ZERO, IVec3::new(64, 8, 64)), |_, _| {
            Cell::full(Material::ROCK)
        })
        .unwrap();
        let mut tools = ToolSession::new(1 << 30, None);
        tools.session.enable_document(&g);
        let fill = EditCommand::Fill {
            region: CellBox::new(IVec3::new(4, 8, 4), IVec3::new(12, 12, 12)),
            material: Material::SAND,
            occupancy: 255,
            ignore_water: false,
        };
        tools.session.apply(&mut g, &fill).unwrap();
        let filled = g.content_hash();
        let steps = tools.session.history.undo_len();
        let mut settings = ToolSettings::default();
        settings.layers.pick_in_view = true;
        let hit = |x: f64, z: f64| PickHit {
            pos_world: DVec3::new(x, 40.0, z),
            normal: Vec3::Y,
            distance_studs: 10.0,
            chunk: ChunkCoord::new(0, 0, 0),
        };
        let mut pick = OperationPick::default();
        let frame = |pick: &mut OperationPick,
                     tools: &mut ToolSession,
                     g: &mut Grid,
                     s: &mut ToolSettings,
                     at: Option<PickHit>,
                     held| {
            pick.frame(tools, g, s, at.as_ref(), held, 4.0, false);
        };
        frame(
            &mut pick,
            &mut tools,
            &mut g,
            &mut settings,
            Some(hit(32.0, 32.0)),
            true,
        );
        assert_eq!(settings.layers.selected_operation, Some(1));
        frame(
            &mut pick,
            &mut tools,
            &mut g,
            &mut settings,
            Some(hit(132.0, 32.0)),
            true,
        );
        assert_ne!(g.content_hash(), filled, "moved live");
        // Esc while the button is still held.
        assert_eq!(settings.apply_shortcut(Shortcut::Cancel), None);
        for r in std::mem::take(&mut settings.requests) {
            tools.request(&mut g, r, &settings, None).unwrap();
        }
        assert_eq!(g.content_hash(), filled, "put back");
        frame(
            &mut pick,
            &mut tools,
            &mut g,
            &mut settings,
            Some(hit(150.0, 32.0)),
            true,
        );
        frame(&mut pick, &mut tools, &mut g, &mut settings, None, false);
        assert_eq!(g.content_hash(), filled);
        assert_eq!(tools.session.history.undo_len(), steps, "no step");
        // A press on bare ground holds the press until its release is
        // seen, so turning pick mode off meanwhile cannot swallow the next
        // press: the driver passes the release on while it holds.
        frame(
            &mut pick,
            &mut tools,
            &mut g,
            &mut settings,
            Some(hit(240.0, 240.0)),
            true,
        );
        assert_eq!(settings.layers.selected_operation, None);
        assert!(pick.holds_press());
        frame(&mut pick, &mut tools, &mut g, &mut settings, None, false);
        assert!(!pick.holds_press());
        frame(
            &mut pick,
            &mut tools,
            &mut g,
            &mut settings,
            Some(hit(32.0, 32.0)),
            true,
        );
        assert_eq!(
            settings.layers.selected_operation,
            Some(1),
            "the next press picks"
        );
    }
}
