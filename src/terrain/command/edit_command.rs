//! One path for every region and history command: the window's panel and
//! shortcuts and the script runner both build an [`EditCommand`] and run it
//! through [`EditSession::apply`], so labels, undo steps and behaviour
//! cannot drift between them. Brush strokes, which grow over many frames,
//! go through [`crate::terrain::command::brush_stroke::StrokeInProgress`] instead.

use std::sync::Arc;

use glam::IVec3;

use crate::terrain::command::document_action::{DocumentAction, DocumentState};
use crate::terrain::command::history::History;
use crate::terrain::document::layers::DocumentError;
use crate::terrain::document::operation::OperationKind;
use crate::terrain::editing::region::{self, Clipboard, RegionError};
use crate::terrain::editing::water_tools::SeaLevelError;
use crate::terrain::generation::generate::GeneratorSettings;
use crate::terrain::path::spec::{PathError, PathReport, PathSpec};
use crate::terrain::stamp::definition::{Stamp, StampError, StampPlacement};
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::{CellBox, ColumnCoord};
use crate::terrain::storage::grid::{Grid, GridError};

/// A region or history operation on the grid. Every variant that changes
/// cells becomes one undo step.
#[derive(Clone, Debug, PartialEq)]
pub enum EditCommand {
    /// Fill a box with a material at an occupancy.
    Fill {
        /// The box, cells.
        region: CellBox,
        /// Solid or Water.
        material: Material,
        /// 1..=255.
        occupancy: u8,
        /// Leave water cells as they are.
        ignore_water: bool,
    },
    /// Empty a box.
    Clear {
        /// The box, cells.
        region: CellBox,
        /// Leave water cells as they are.
        ignore_water: bool,
    },
    /// Copy a box to the clipboard (changes no cell).
    Copy {
        /// The box, cells.
        region: CellBox,
    },
    /// Paste the clipboard.
    Paste {
        /// Minimum corner of the pasted box, cells.
        at: IVec3,
        /// Quarter turns about +Y, 0..=3.
        quarter_turns: u8,
    },
    /// Re-run the world generator in a box.
    Generate {
        /// The box, cells.
        region: CellBox,
    },
    /// Fill the air of a box with water up to a level (the Sea level tool).
    FillSeaLevel {
        /// The box, cells.
        region: CellBox,
        /// Water surface height, cells.
        level_cells: f64,
    },
    /// Remove the water of a box down to a level (the Evaporate tool).
    Evaporate {
        /// The box, cells.
        region: CellBox,
        /// Height above which water is removed, cells.
        level_cells: f64,
    },
    /// Lay a road, a river or a routed road along a spline.
    /// The spec is kept with the history step ([`crate::terrain::command::history::Step::path_spec`]).
    Path(PathSpec),
    /// Press a stamp into the terrain ([`crate::terrain::stamp::press`]).
    Stamp {
        /// The stamp, shared (the command stays cheap to clone).
        stamp: Arc<Stamp>,
        /// Where and how.
        placement: StampPlacement,
    },
    /// Undo the newest step.
    Undo,
    /// Redo the last undone step.
    Redo,
    /// Undo or redo until `applied_steps` steps are applied (a click in the
    /// history list).
    JumpTo {
        /// Undo steps applied afterwards.
        applied_steps: usize,
    },
    /// A world-document action: a layer or operation changed (spec §14).
    Document(Box<DocumentAction>),
}

impl EditCommand {
    /// The history label of the step the command records, e.g. `"Fill (Sand)"`.
    pub fn label(&self) -> String {
        match self {
            EditCommand::Fill { material, .. } => format!("Fill ({})", material.name()),
            EditCommand::Clear { .. } => "Clear".into(),
            EditCommand::Copy { .. } => "Copy".into(),
            EditCommand::Paste { quarter_turns, .. } => {
                format!("Paste ({}°)", u32::from(*quarter_turns) * 90)
            }
            EditCommand::Generate { .. } => "Generate".into(),
            EditCommand::FillSeaLevel { .. } => "Sea level".into(),
            EditCommand::Evaporate { .. } => "Evaporate".into(),
            EditCommand::Path(spec) => spec.label(),
            EditCommand::Stamp { stamp, placement } => placement.label(stamp),
            EditCommand::Undo => "Undo".into(),
            EditCommand::Redo => "Redo".into(),
            EditCommand::JumpTo { .. } => "Jump in history".into(),
            EditCommand::Document(action) => action.label(),
        }
    }
}

/// Why a command was refused. The grid and the history are unchanged.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CommandError {
    /// The region operation rejected its input.
    #[error(transparent)]
    Region(#[from] RegionError),
    /// The sea level or evaporate tool rejected its input.
    #[error(transparent)]
    Water(#[from] SeaLevelError),
    /// The stamp or its placement was rejected.
    #[error(transparent)]
    Stamp(#[from] StampError),
    /// Paste before any copy.
    #[error("the clipboard is empty (copy a region first)")]
    EmptyClipboard,
    /// Undo or redo over chunk columns a streaming grid does not hold yet
    /// (nothing changed; it applies once they are loaded).
    #[error(transparent)]
    Grid(#[from] GridError),
    /// The path tool rejected its input, or found no terrain or route.
    #[error(transparent)]
    Path(#[from] PathError),
    /// Generate on a world that was not made by the generator.
    #[error("generate needs a generated world (this one was imported or loaded)")]
    NoGenerator,
    /// A brush application was rejected.
    #[error(transparent)]
    Brush(#[from] crate::terrain::editing::brush::EditError),
    /// The operation reaches off the lattice or is too wide.
    #[error(transparent)]
    Operation(crate::terrain::document::operation::OperationError),
    /// The document refused the action (a locked layer, an unknown id).
    #[error(transparent)]
    Document(#[from] DocumentError),
    /// Making a new base failed (a seed change).
    #[error(transparent)]
    Generate(#[from] crate::terrain::generation::generate::GenerateError),
    /// The layers cannot be re-derived on this world.
    #[error("{0}")]
    NoDocument(&'static str),
    /// The material library refused the change (a built-in removed, an
    /// unknown id).
    #[error(transparent)]
    Library(#[from] crate::terrain::materials::LibraryError),
    /// A removed material's replacement is not a solid the library keeps.
    #[error(
        "{replacement} cannot replace {removed}: the replacement must be another solid material of the library"
    )]
    BadReplacement {
        /// The removed material's name.
        removed: String,
        /// The replacement's name or id.
        replacement: String,
    },
    /// Replacing a material everywhere needs every cell in memory.
    #[error(
        "a streaming world cannot replace a material everywhere: its cells are never all in memory"
    )]
    StreamedReplacement,
}

impl CommandError {
    /// The chunk columns the command needs but a streaming grid does not
    /// hold (spec §12): nothing changed, and it applies once they are loaded.
    pub fn missing_columns(&self) -> Option<&[ColumnCoord]> {
        match self {
            CommandError::Region(RegionError::Grid(e))
            | CommandError::Water(SeaLevelError::Grid(e))
            | CommandError::Stamp(StampError::Grid(e))
            | CommandError::Grid(e) => e.missing_columns(),
            CommandError::Path(e) => e.missing_columns(),
            _ => None,
        }
    }
}

/// What a command did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CommandOutcome {
    /// An editing command ran: `changed` when it changed cells (and so
    /// became an undo step).
    Edited {
        /// Cells changed.
        changed: bool,
    },
    /// A path was laid: `changed` when it changed cells (and so became an
    /// undo step), with its figures and the cells it touched.
    PathApplied {
        /// Cells changed.
        changed: bool,
        /// What the path did.
        report: PathReport,
        /// Union of the changed cells' bounds (global cells).
        touched: CellBox,
    },
    /// The clipboard now holds a box of this size, cells.
    Copied {
        /// `[x, y, z]` cells.
        size_cells: IVec3,
    },
    /// Undo or redo: `None` when there was no step to move over, else
    /// whether the step changed cells.
    Stepped {
        /// True for undo, false for redo.
        undo: bool,
        /// `Some(changed)` when a step was undone or redone.
        changed: Option<bool>,
    },
    /// A history jump moved over this many steps.
    Jumped {
        /// Steps undone or redone.
        moved_steps: usize,
    },
}

impl CommandOutcome {
    /// True when the grid's cells changed.
    pub fn changed_grid(&self) -> bool {
        match *self {
            CommandOutcome::Edited { changed } | CommandOutcome::PathApplied { changed, .. } => {
                changed
            }
            CommandOutcome::Copied { .. } => false,
            CommandOutcome::Stepped { changed, .. } => changed == Some(true),
            CommandOutcome::Jumped { moved_steps } => moved_steps > 0,
        }
    }

    /// A short status line for the artist, e.g. `"nothing to undo"`.
    pub fn message(&self) -> String {
        match *self {
            CommandOutcome::Edited { changed: true } => "done".into(),
            CommandOutcome::Edited { changed: false } => "nothing changed".into(),
            CommandOutcome::PathApplied { report: r, .. } => format!(
                "{} laid: {:.0} studs, steepest {:.1}° (cap {}°), {} cells cut, {} filled",
                r.mode.name(),
                r.length_studs,
                r.max_grade_deg,
                r.grade_cap_deg,
                r.cut_cells,
                r.fill_cells
            ),
            CommandOutcome::Copied { size_cells: s } => {
                format!("copied {}×{}×{} cells", s.x, s.y, s.z)
            }
            CommandOutcome::Stepped {
                undo: true,
                changed,
            } => if changed.is_some() {
                "undone"
            } else {
                "nothing to undo"
            }
            .into(),
            CommandOutcome::Stepped {
                undo: false,
                changed,
            } => if changed.is_some() {
                "redone"
            } else {
                "nothing to redo"
            }
            .into(),
            CommandOutcome::Jumped { moved_steps } => {
                format!("{moved_steps} steps undone or redone")
            }
        }
    }
}

/// The editing state every command runs against: the undo history, the
/// clipboard and the generator Generate re-runs.
#[derive(Debug)]
pub struct EditSession {
    /// Undo and redo.
    pub history: History,
    /// What Copy copied.
    pub clipboard: Option<Clipboard>,
    /// Counts the copies into [`Self::clipboard`] (a preview built from the
    /// clipboard is rebuilt when it changes).
    pub clipboard_revision: u64,
    /// The generator Generate re-runs: the world's own, `None` for worlds
    /// that were imported or loaded (Generate is then refused).
    pub generator: Option<GeneratorSettings>,
    /// The world document the edits are recorded in (spec §14).
    pub document: DocumentState,
    /// An operation being dragged in the view.
    pub(super) drag: Option<crate::terrain::command::document_action::OperationDrag>,
    /// The material library an undo or redo put back, for the owner of
    /// the library to take ([`EditSession::take_library_change`]).
    pub(super) library_change: Option<crate::terrain::command::history::LibraryChange>,
}

impl EditSession {
    /// A session with an empty history of `budget_bytes` and no clipboard.
    pub fn new(budget_bytes: usize, generator: Option<GeneratorSettings>) -> EditSession {
        EditSession {
            history: History::new(budget_bytes),
            clipboard: None,
            clipboard_revision: 0,
            generator,
            document: DocumentState::default(),
            drag: None,
            library_change: None,
        }
    }

    /// Runs `command` on `grid`; an editing command becomes one undo step
    /// labelled [`EditCommand::label`] when it changes cells.
    ///
    /// # Errors
    /// [`CommandError`] for rejected input; the grid and history are then unchanged.
    pub fn apply(
        &mut self,
        grid: &mut Grid,
        command: &EditCommand,
    ) -> Result<CommandOutcome, CommandError> {
        self.check_resident(grid, command)?;
        if let Some(kind) = self.operation_for(command)? {
            return self.apply_operation(grid, kind);
        }
        match *command {
            EditCommand::Copy { region: b } => {
                let clip = region::copy(grid, b)?;
                let size_cells = clip.size();
                self.clipboard = Some(clip);
                self.clipboard_revision = self.clipboard_revision.wrapping_add(1);
                Ok(CommandOutcome::Copied { size_cells })
            }
            EditCommand::Undo => Ok(CommandOutcome::Stepped {
                undo: true,
                changed: self.undo_step(grid),
            }),
            EditCommand::Redo => Ok(CommandOutcome::Stepped {
                undo: false,
                changed: self.redo_step(grid),
            }),
            EditCommand::JumpTo { applied_steps } => Ok(CommandOutcome::Jumped {
                moved_steps: self.jump_to(grid, applied_steps),
            }),
            EditCommand::Document(ref action) => self.document_action(grid, action),
            // Every other command is an operation (converted above).
            _ => Ok(CommandOutcome::Edited { changed: false }),
        }
    }

    /// The document operation an editing command makes (its clipboard or
    /// generator taken now), `None` for Copy, history and document commands.
    ///
    /// # Errors
    /// [`CommandError::EmptyClipboard`], [`CommandError::NoGenerator`].
    fn operation_for(&self, command: &EditCommand) -> Result<Option<OperationKind>, CommandError> {
        Ok(Some(match command {
            &EditCommand::Fill {
                region,
                material,
                occupancy,
                ignore_water,
            } => OperationKind::Fill {
                region,
                material,
                occupancy,
                ignore_water,
            },
            &EditCommand::Clear {
                region,
                ignore_water,
            } => OperationKind::Clear {
                region,
                ignore_water,
            },
            &EditCommand::Paste { at, quarter_turns } => OperationKind::Paste {
                clipboard: Arc::new(self.clipboard.clone().ok_or(CommandError::EmptyClipboard)?),
                at,
                quarter_turns,
            },
            &EditCommand::Generate { region } => OperationKind::Generate {
                region,
                settings: self.generator.clone().ok_or(CommandError::NoGenerator)?,
            },
            &EditCommand::FillSeaLevel {
                region,
                level_cells,
            } => OperationKind::SeaLevel {
                region,
                level_cells,
            },
            &EditCommand::Evaporate {
                region,
                level_cells,
            } => OperationKind::Evaporate {
                region,
                level_cells,
            },
            EditCommand::Path(spec) => OperationKind::Path(spec.clone()),
            EditCommand::Stamp { stamp, placement } => OperationKind::Stamp {
                stamp: stamp.clone(),
                placement: *placement,
            },
            EditCommand::Copy { .. }
            | EditCommand::Undo
            | EditCommand::Redo
            | EditCommand::JumpTo { .. }
            | EditCommand::Document(_) => return Ok(None),
        }))
    }

    /// On a streaming grid, refuses a command that reads or writes chunk
    /// columns the grid does not hold ([`GridError::NotResident`] lists
    /// them): undo and redo write their steps' columns, Copy reads its box.
    /// Edits that go through [`Grid::edit_region`] are refused there.
    fn check_resident(&self, grid: &Grid, command: &EditCommand) -> Result<(), CommandError> {
        if !grid.is_streaming() {
            return Ok(());
        }
        let now = self.history.undo_len();
        let missing: Vec<ColumnCoord> = match *command {
            EditCommand::Undo => self.history.columns_to_reach(now.saturating_sub(1)),
            EditCommand::Redo => self.history.columns_to_reach(now + 1),
            EditCommand::JumpTo { applied_steps } => self.history.columns_to_reach(applied_steps),
            EditCommand::Copy { region: b } => grid.missing_columns(&b),
            _ => Vec::new(),
        }
        .into_iter()
        .filter(|c| !grid.is_column_resident(*c))
        .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(GridError::NotResident(missing).into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::cell::Cell;
    use crate::terrain::storage::coords::CellCoord;

    fn boxed(lo: i32, hi: i32) -> CellBox {
        CellBox::new(IVec3::splat(lo), IVec3::splat(hi))
    }

    #[test]
    fn fill_copy_paste_undo_redo_and_jump() {
        let mut grid = Grid::new();
        let mut session = EditSession::new(1 << 24, None);
        let fill = EditCommand::Fill {
            region: boxed(0, 4),
            material: Material::SAND,
            occupancy: 255,
            ignore_water: false,
        };
        let out = session.apply(&mut grid, &fill).unwrap();
        assert_eq!(out, CommandOutcome::Edited { changed: true });
        assert_eq!(
            session.history.undo_steps().last().unwrap().label(),
            "Fill (Sand)"
        );
        // The same fill again changes nothing and records no step.
        let out = session.apply(&mut grid, &fill).unwrap();
        assert_eq!(out, CommandOutcome::Edited { changed: false });
        assert_eq!(session.history.undo_len(), 1);
        let copied = session
            .apply(
                &mut grid,
                &EditCommand::Copy {
                    region: boxed(0, 4),
                },
            )
            .unwrap();
        assert_eq!(
            copied,
            CommandOutcome::Copied {
                size_cells: IVec3::splat(4)
            }
        );
        let paste = EditCommand::Paste {
            at: IVec3::new(10, 0, 0),
            quarter_turns: 1,
        };
        assert!(session.apply(&mut grid, &paste).unwrap().changed_grid());
        assert_eq!(
            grid.cell(CellCoord::new(11, 1, 1)),
            Cell::full(Material::SAND)
        );
        let undo = session.apply(&mut grid, &EditCommand::Undo).unwrap();
        assert_eq!(undo.message(), "undone");
        assert_eq!(grid.cell(CellCoord::new(11, 1, 1)), Cell::EMPTY);
        let jump = session
            .apply(&mut grid, &EditCommand::JumpTo { applied_steps: 0 })
            .unwrap();
        assert_eq!(jump, CommandOutcome::Jumped { moved_steps: 1 });
        assert_eq!(grid.cell(CellCoord::new(1, 1, 1)), Cell::EMPTY);
        let jump = session
            .apply(&mut grid, &EditCommand::JumpTo { applied_steps: 2 })
            .unwrap();
        assert_eq!(jump, CommandOutcome::Jumped { moved_steps: 2 });
        assert_eq!(
            grid.cell(CellCoord::new(11, 1, 1)),
            Cell::full(Material::SAND)
        );
        let redo = session.apply(&mut grid, &EditCommand::Redo).unwrap();
        assert_eq!(redo.message(), "nothing to redo");
    }

    #[test]
    fn refused_commands_change_nothing() {
        let mut grid = Grid::new();
        let mut session = EditSession::new(1 << 24, None);
        let before = grid.content_hash();
        let paste = EditCommand::Paste {
            at: IVec3::ZERO,
            quarter_turns: 0,
        };
        assert_eq!(
            session.apply(&mut grid, &paste),
            Err(CommandError::EmptyClipboard)
        );
        let generate = EditCommand::Generate {
            region: boxed(0, 1),
        };
        assert_eq!(
            session.apply(&mut grid, &generate),
            Err(CommandError::NoGenerator)
        );
        let empty = EditCommand::Clear {
            region: boxed(3, 3),
            ignore_water: false,
        };
        assert!(matches!(
            session.apply(&mut grid, &empty),
            Err(CommandError::Region(RegionError::Empty(_)))
        ));
        assert_eq!(grid.content_hash(), before);
        assert_eq!(session.history.undo_len(), 0);
    }
}
