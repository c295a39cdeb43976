//! One authored operation of a layer (spec §14): what it is, the columns
//! it may write (its footprint), the columns it reads beyond them (its
//! halo), and how it is applied to a grid. An operation keeps everything it
//! needs to apply again (stamp image, clipboard cells, the brush centres of
//! a stroke), so re-deriving never depends on anything outside it.

use std::sync::Arc;

use glam::{DVec3, IVec2, IVec3};

use crate::terrain::document::stroke_anchor::anchored_centre;
use crate::terrain::editing::brush::{Brush, BrushOptions, EditError};
use crate::terrain::editing::kernels::{apply_tool, tool_region};
use crate::terrain::editing::recorder::Recorder;
use crate::terrain::editing::region::{self, Clipboard, RegionError};
use crate::terrain::editing::water_tools::{self, SeaLevelError};
use crate::terrain::generation::generate::GeneratorSettings;
use crate::terrain::path::carve::reach_cells;
use crate::terrain::path::route::search_area;
use crate::terrain::path::spec::{PathError, PathMode, PathSpec};
use crate::terrain::path::spline::sample_spline;
use crate::terrain::path::tool::{PathOutcome, SAMPLE_SPACING_CELLS, apply_path, footprint_rect};
use crate::terrain::stamp::definition::{Stamp, StampError, StampPlacement};
use crate::terrain::stamp::press::{StampPlan, footprint_columns};
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::{CHUNK_SHIFT, CHUNK_SIZE_CELLS, CellBox, ColumnCoord};
use crate::terrain::storage::grid::Grid;

/// Stable id of an operation: unique within its document, kept through
/// save, reopen, reorder, undo and every edit of the operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OperationId(pub u32);

/// Cells a brush kernel reads beyond the box it writes (neighbour
/// averages and material votes), cells.
pub const STROKE_HALO_CELLS: i32 = 2;

/// Cells a stamp, a path or a water tool reads beyond the columns it may
/// write (slopes from neighbouring columns), cells.
pub const SURFACE_HALO_CELLS: i32 = 1;

/// Columns `[min, max)` on the x and z axes, cells: where an operation may
/// write (its footprint) or read. Empty when `min >= max` on an axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnRect {
    /// Smallest column, cells `(x, z)`.
    pub min: IVec2,
    /// One past the largest column, cells `(x, z)`.
    pub max: IVec2,
}

impl ColumnRect {
    /// The empty rectangle.
    pub const EMPTY: ColumnRect = ColumnRect {
        min: IVec2::ZERO,
        max: IVec2::ZERO,
    };

    /// The x and z extent of `b` (its height is ignored).
    pub fn of_box(b: &CellBox) -> ColumnRect {
        if b.is_empty() {
            return ColumnRect::EMPTY;
        }
        ColumnRect {
            min: IVec2::new(b.min.x, b.min.z),
            max: IVec2::new(b.max.x, b.max.z),
        }
    }

    /// The cell columns of chunk column `c` (32 × 32).
    pub fn of_chunk_column(c: ColumnCoord) -> ColumnRect {
        let size = CHUNK_SIZE_CELLS;
        ColumnRect {
            min: IVec2::new(c.x * size, c.z * size),
            max: IVec2::new((c.x + 1) * size, (c.z + 1) * size),
        }
    }

    /// True when it holds no column.
    pub fn is_empty(&self) -> bool {
        self.min.x >= self.max.x || self.min.y >= self.max.y
    }

    /// The smallest rectangle holding both.
    pub fn union(&self, other: &ColumnRect) -> ColumnRect {
        match (self.is_empty(), other.is_empty()) {
            (true, _) => *other,
            (_, true) => *self,
            _ => ColumnRect {
                min: self.min.min(other.min),
                max: self.max.max(other.max),
            },
        }
    }

    /// True when it holds column `column` (cells `(x, z)`).
    pub fn contains(&self, column: IVec2) -> bool {
        column.x >= self.min.x
            && column.x < self.max.x
            && column.y >= self.min.y
            && column.y < self.max.y
    }

    /// True when the two share a column.
    pub fn intersects(&self, other: &ColumnRect) -> bool {
        !self.is_empty()
            && !other.is_empty()
            && self.min.x < other.max.x
            && other.min.x < self.max.x
            && self.min.y < other.max.y
            && other.min.y < self.max.y
    }

    /// The columns both hold (empty when they share none).
    pub fn intersection(&self, other: &ColumnRect) -> ColumnRect {
        if !self.intersects(other) {
            return ColumnRect::EMPTY;
        }
        ColumnRect {
            min: self.min.max(other.min),
            max: self.max.min(other.max),
        }
    }

    /// Grown by `cells` on every side (saturating; empty stays empty).
    pub fn grown(&self, cells: i32) -> ColumnRect {
        if self.is_empty() {
            return *self;
        }
        ColumnRect {
            min: self.min.saturating_sub(IVec2::splat(cells)),
            max: self.max.saturating_add(IVec2::splat(cells)),
        }
    }

    /// The chunk columns (32 × 32 cells) it overlaps, as an inclusive
    /// range `(lo, hi)`; `None` when empty.
    pub fn chunk_columns(&self) -> Option<(ColumnCoord, ColumnCoord)> {
        if self.is_empty() {
            return None;
        }
        let lo = self.min >> CHUNK_SHIFT;
        let hi = (self.max - IVec2::ONE) >> CHUNK_SHIFT;
        Some((ColumnCoord::new(lo.x, lo.y), ColumnCoord::new(hi.x, hi.y)))
    }

    /// Every chunk column it overlaps, z outermost.
    pub fn columns(&self) -> impl Iterator<Item = ColumnCoord> + use<> {
        let (lo, hi) = match self.chunk_columns() {
            Some((lo, hi)) => ((lo.x, lo.z), (hi.x, hi.z)),
            None => ((0, 0), (-1, -1)),
        };
        (lo.1..=hi.1).flat_map(move |z| (lo.0..=hi.0).map(move |x| ColumnCoord::new(x, z)))
    }
}

/// A brush stroke as it was painted: the brush, its options (with the
/// Flatten plane chosen when it began) and every application centre in
/// order, world studs. Applying it again repeats exactly those applications.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedStroke {
    /// The brush (mode, radius, strength, material).
    pub brush: Brush,
    /// Shape, falloff and tool settings.
    pub options: BrushOptions,
    /// Application centres, world studs, in the order they were applied.
    pub centres_world: Arc<[DVec3]>,
    /// For a stroke painted on the surface: each application's height
    /// above the surface under it (studs; `None` where there was none), so
    /// it lands on the ground as it is when re-derived
    /// ([`crate::terrain::document::stroke_anchor`]). `None`: the centres
    /// are world positions (a plane-locked or world-space stroke).
    pub surface_offsets_studs: Option<Arc<[Option<f64>]>>,
}

impl RecordedStroke {
    /// The history label, e.g. `"Paint (Sand) ×12"`.
    pub fn label(&self) -> String {
        self.brush.stroke_label(self.centres_world.len())
    }
}

/// What an operation does.
#[derive(Clone, Debug, PartialEq)]
pub enum OperationKind {
    /// A box set to one material at one occupancy.
    Fill {
        /// The box, cells.
        region: CellBox,
        /// Solid or water.
        material: Material,
        /// 1..=255.
        occupancy: u8,
        /// Leave water cells as they are.
        ignore_water: bool,
    },
    /// A box emptied.
    Clear {
        /// The box, cells.
        region: CellBox,
        /// Leave water cells as they are.
        ignore_water: bool,
    },
    /// Clipboard cells written with their minimum corner at `at`.
    Paste {
        /// The cells pasted (kept with the operation).
        clipboard: Arc<Clipboard>,
        /// Minimum corner of the pasted box, cells.
        at: IVec3,
        /// Quarter turns about +Y, 0..=3.
        quarter_turns: u8,
    },
    /// The generator re-run in a box.
    Generate {
        /// The box, cells.
        region: CellBox,
        /// The generator it re-runs.
        settings: GeneratorSettings,
    },
    /// The air of a box filled with water up to a level.
    SeaLevel {
        /// The box, cells.
        region: CellBox,
        /// Water surface height, cells.
        level_cells: f64,
    },
    /// The water of a box removed down to a level.
    Evaporate {
        /// The box, cells.
        region: CellBox,
        /// Height above which water is removed, cells.
        level_cells: f64,
    },
    /// A road, river or routed road.
    Path(PathSpec),
    /// A stamp pressed into the terrain.
    Stamp {
        /// The stamp (kept with the operation).
        stamp: Arc<Stamp>,
        /// Where and how.
        placement: StampPlacement,
    },
    /// A brush stroke, erosion strokes included.
    Stroke(RecordedStroke),
}

/// Why an operation could not be applied. The grid is unchanged by it.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum OperationError {
    /// Fill, Clear, Paste or Generate rejected its input.
    #[error(transparent)]
    Region(#[from] RegionError),
    /// Sea level or Evaporate rejected its input.
    #[error(transparent)]
    Water(#[from] SeaLevelError),
    /// The stamp or its placement was rejected.
    #[error(transparent)]
    Stamp(#[from] StampError),
    /// The path was rejected or found no terrain or route.
    #[error(transparent)]
    Path(#[from] PathError),
    /// A brush application was rejected.
    #[error(transparent)]
    Brush(#[from] EditError),
    /// The columns it may write leave the cell lattice, or span more than
    /// [`MAX_FOOTPRINT_SIDE_CELLS`] on a side.
    #[error(
        "the operation's footprint, cells ({}, {}) to ({}, {}) in x and z, leaves the cell \
         lattice or is wider than {MAX_FOOTPRINT_SIDE_CELLS} cells",
        .min_xz.x, .min_xz.y, .max_xz.x, .max_xz.y
    )]
    Footprint {
        /// Smallest column, cells `(x, z)`.
        min_xz: IVec2,
        /// One past the largest, cells `(x, z)`.
        max_xz: IVec2,
    },
}

/// Widest footprint an operation may have, cells on a side (the largest
/// world held whole is 4,096 cells).
pub const MAX_FOOTPRINT_SIDE_CELLS: i32 = 8192;

/// An operation with its stable id. Its footprint and read area are
/// worked out once, when it is made or edited: the dirty closure reads
/// them for every operation of the document on every change.
#[derive(Clone, Debug, PartialEq)]
pub struct Operation {
    /// Stable id.
    pub id: OperationId,
    kind: OperationKind,
    footprint: ColumnRect,
    read_area: ColumnRect,
}

/// What applying an operation reported beyond the cells it wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Applied {
    /// A path's figures and touched cells.
    pub path: Option<PathOutcome>,
}

impl OperationKind {
    /// The label the Layers panel and the history show, e.g. `"Fill (Sand)"`.
    pub fn label(&self) -> String {
        match self {
            OperationKind::Fill { material, .. } => format!("Fill ({})", material.name()),
            OperationKind::Clear { .. } => "Clear".into(),
            OperationKind::Paste { quarter_turns, .. } => {
                format!("Paste ({}°)", u32::from(*quarter_turns) * 90)
            }
            OperationKind::Generate { .. } => "Generate".into(),
            OperationKind::SeaLevel { .. } => "Sea level".into(),
            OperationKind::Evaporate { .. } => "Evaporate".into(),
            OperationKind::Path(spec) => spec.label(),
            OperationKind::Stamp { stamp, placement } => placement.label(stamp),
            OperationKind::Stroke(s) => s.label(),
        }
    }

    /// The columns the operation may write, whatever the ground under it
    /// (a route's whole search area, a stamp's footprint with its one
    /// column of apron). Empty for input the operation would refuse.
    pub fn footprint(&self) -> ColumnRect {
        match self {
            OperationKind::Fill { region, .. }
            | OperationKind::Clear { region, .. }
            | OperationKind::Generate { region, .. }
            | OperationKind::SeaLevel { region, .. }
            | OperationKind::Evaporate { region, .. } => ColumnRect::of_box(region),
            OperationKind::Paste {
                clipboard,
                at,
                quarter_turns,
            } => region::paste_region(clipboard, *at, *quarter_turns)
                .map_or(ColumnRect::EMPTY, |b| ColumnRect::of_box(&b)),
            OperationKind::Stamp { stamp, placement } => {
                if placement.validate().is_err() {
                    return ColumnRect::EMPTY;
                }
                ColumnRect::of_box(&footprint_columns(stamp, placement)).grown(1)
            }
            OperationKind::Path(spec) => path_footprint(spec),
            OperationKind::Stroke(stroke) => stroke
                .centres_world
                .iter()
                .filter_map(|c| tool_region(&stroke.brush, &stroke.options, *c).ok())
                .fold(ColumnRect::EMPTY, |acc, b| {
                    acc.union(&ColumnRect::of_box(&b))
                }),
        }
    }

    /// Cells read beyond the footprint on every side.
    pub fn halo_cells(&self) -> i32 {
        match self {
            OperationKind::Fill { .. }
            | OperationKind::Clear { .. }
            | OperationKind::Paste { .. }
            | OperationKind::Generate { .. } => 0,
            OperationKind::SeaLevel { .. }
            | OperationKind::Evaporate { .. }
            | OperationKind::Path(_)
            | OperationKind::Stamp { .. } => SURFACE_HALO_CELLS,
            OperationKind::Stroke(_) => STROKE_HALO_CELLS,
        }
    }

    /// Checks the operation's input as its tool does before writing: the
    /// errors an operation can raise without reading the grid.
    ///
    /// # Errors
    /// [`OperationError`] for an empty or oversized box, a bad placement,
    /// path or brush.
    pub fn validate(&self) -> Result<(), OperationError> {
        self.validate_input()?;
        let f = self.footprint();
        let bad = OperationError::Footprint {
            min_xz: f.min,
            max_xz: f.max,
        };
        let on_lattice = crate::terrain::storage::coords::check_on_lattice(&CellBox::new(
            IVec3::new(f.min.x, 0, f.min.y),
            IVec3::new(f.max.x, 1, f.max.y),
        ))
        .is_ok();
        let size = f.max.as_i64vec2() - f.min.as_i64vec2();
        if f.is_empty() || !on_lattice || size.max_element() > i64::from(MAX_FOOTPRINT_SIDE_CELLS) {
            return Err(bad);
        }
        Ok(())
    }

    /// The tool's own checks of the operation's input.
    fn validate_input(&self) -> Result<(), OperationError> {
        match self {
            OperationKind::Fill { region, .. }
            | OperationKind::Clear { region, .. }
            | OperationKind::Generate { region, .. }
            | OperationKind::SeaLevel { region, .. }
            | OperationKind::Evaporate { region, .. } => Ok(region::check_region(*region)?),
            OperationKind::Paste {
                clipboard,
                at,
                quarter_turns,
            } => Ok(region::check_region(region::paste_region(
                clipboard,
                *at,
                *quarter_turns,
            )?)?),
            OperationKind::Path(spec) => Ok(spec.validate()?),
            OperationKind::Stamp { placement, .. } => Ok(placement.validate()?),
            OperationKind::Stroke(stroke) => {
                for c in stroke.centres_world.iter() {
                    tool_region(&stroke.brush, &stroke.options, *c)?;
                }
                Ok(())
            }
        }
    }

    /// Footprint and halo together: every column the operation reads.
    pub fn read_area(&self) -> ColumnRect {
        self.footprint().grown(self.halo_cells())
    }

    /// True when `self` and `other` do the same thing: `==`, with the
    /// shared data of stamps, clipboards and strokes compared by pointer
    /// first. The dirty closure asks this of every operation of the
    /// document on every change; an unchanged operation shares its stamp
    /// image or centres with its copy in the earlier stack, so a 4,096²
    /// stamp is not compared sample by sample.
    pub fn is_same_as(&self, other: &OperationKind) -> bool {
        fn same<T: PartialEq + ?Sized>(a: &Arc<T>, b: &Arc<T>) -> bool {
            Arc::ptr_eq(a, b) || a == b
        }
        use OperationKind as K;
        match (self, other) {
            (
                K::Stamp {
                    stamp: a,
                    placement: pa,
                },
                K::Stamp {
                    stamp: b,
                    placement: pb,
                },
            ) => pa == pb && same(a, b),
            (
                K::Paste {
                    clipboard: a,
                    at: at_a,
                    quarter_turns: qa,
                },
                K::Paste {
                    clipboard: b,
                    at: at_b,
                    quarter_turns: qb,
                },
            ) => at_a == at_b && qa == qb && same(a, b),
            (K::Stroke(a), K::Stroke(b)) => {
                a.brush == b.brush
                    && a.options == b.options
                    && same(&a.centres_world, &b.centres_world)
                    && match (&a.surface_offsets_studs, &b.surface_offsets_studs) {
                        (Some(x), Some(y)) => same(x, y),
                        (None, None) => true,
                        _ => false,
                    }
            }
            _ => self == other,
        }
    }

    /// Applies the operation to `grid`, recording every chunk it changes in
    /// `rec`.
    ///
    /// # Errors
    /// [`OperationError`] for input the tool refuses (the grid is then
    /// unchanged) or, on a streaming grid, columns it does not hold.
    pub fn apply(&self, grid: &mut Grid, rec: &mut Recorder) -> Result<Applied, OperationError> {
        match self {
            &OperationKind::Fill {
                region: b,
                material,
                occupancy,
                ignore_water,
            } => {
                rec.record(grid, b, |g| {
                    region::fill(g, b, material, occupancy, ignore_water)
                })?;
            }
            &OperationKind::Clear {
                region: b,
                ignore_water,
            } => {
                rec.record(grid, b, |g| region::clear(g, b, ignore_water))?;
            }
            OperationKind::Paste {
                clipboard,
                at,
                quarter_turns,
            } => {
                let b = region::paste_region(clipboard, *at, *quarter_turns)?;
                rec.record(grid, b, |g| {
                    region::paste(g, clipboard, *at, *quarter_turns)
                })?;
            }
            OperationKind::Generate {
                region: b,
                settings,
            } => {
                rec.record(grid, *b, |g| region::generate(g, *b, settings))?;
            }
            &OperationKind::SeaLevel {
                region: b,
                level_cells,
            } => {
                rec.record(grid, b, |g| water_tools::fill_sea_level(g, b, level_cells))?;
            }
            &OperationKind::Evaporate {
                region: b,
                level_cells,
            } => {
                rec.record(grid, b, |g| water_tools::evaporate(g, b, level_cells))?;
            }
            OperationKind::Path(spec) => {
                return match apply_path(grid, rec, spec) {
                    Ok(outcome) => Ok(Applied {
                        path: Some(outcome),
                    }),
                    Err(e) => Err(e.into()),
                };
            }
            OperationKind::Stamp { stamp, placement } => {
                let plan = StampPlan::new(grid, stamp, placement)?;
                rec.record(grid, plan.region(), |g| plan.apply(g))?;
            }
            OperationKind::Stroke(stroke) => apply_stroke(grid, rec, stroke)?,
        }
        Ok(Applied::default())
    }
}

/// Applies every centre of `stroke` in order.
fn apply_stroke(
    grid: &mut Grid,
    rec: &mut Recorder,
    stroke: &RecordedStroke,
) -> Result<(), EditError> {
    for (i, centre) in stroke.centres_world.iter().enumerate() {
        let centre = match &stroke.surface_offsets_studs {
            Some(offsets) => anchored_centre(grid, *centre, offsets.get(i).copied().flatten()),
            None => *centre,
        };
        let region = tool_region(&stroke.brush, &stroke.options, centre)?;
        rec.record(grid, region, |g| {
            apply_tool(g, &stroke.brush, &stroke.options, centre)
        })?;
    }
    Ok(())
}

/// The columns a path may write: the sampled spline's columns within the
/// bank reach (as the path tool computes them), or for a route, its whole
/// search area grown by the reach (the route it finds depends on the ground).
fn path_footprint(spec: &PathSpec) -> ColumnRect {
    if spec.validate().is_err() {
        return ColumnRect::EMPTY;
    }
    let points = spec.points_xz_cells();
    let reach = reach_cells(spec);
    match spec.mode {
        PathMode::Route => {
            let (min, max) = search_area(points[0], points[points.len() - 1]);
            // The curve through the route's points stays in the search
            // area; its footprint adds the reach and one column.
            ColumnRect { min, max }.grown(reach.ceil() as i32 + 2)
        }
        PathMode::Road | PathMode::River => {
            let curve = sample_spline(&points, SAMPLE_SPACING_CELLS);
            let (min, max) = footprint_rect(&curve, reach);
            ColumnRect { min, max }
        }
    }
}

impl Operation {
    /// Operation `id` doing `kind`.
    pub fn new(id: OperationId, kind: OperationKind) -> Operation {
        Operation {
            id,
            footprint: kind.footprint(),
            read_area: kind.read_area(),
            kind,
        }
    }

    /// What it does.
    pub fn kind(&self) -> &OperationKind {
        &self.kind
    }

    /// Replaces what it does (its id stays).
    pub fn set_kind(&mut self, kind: OperationKind) {
        *self = Operation::new(self.id, kind);
    }

    /// See [`OperationKind::footprint`].
    pub fn footprint(&self) -> ColumnRect {
        self.footprint
    }

    /// See [`OperationKind::read_area`].
    pub fn read_area(&self) -> ColumnRect {
        self.read_area
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rect_lists_the_chunk_columns_it_overlaps() {
        let r = ColumnRect {
            min: IVec2::new(-1, 0),
            max: IVec2::new(33, 32),
        };
        let cols: Vec<ColumnCoord> = r.columns().collect();
        assert_eq!(
            cols,
            vec![
                ColumnCoord::new(-1, 0),
                ColumnCoord::new(0, 0),
                ColumnCoord::new(1, 0)
            ]
        );
        assert_eq!(ColumnRect::EMPTY.columns().count(), 0);
        assert_eq!(r.grown(1).min, IVec2::new(-2, -1));
        assert!(ColumnRect::EMPTY.union(&r) == r);
    }

    #[test]
    fn a_fill_writes_its_box_and_reads_nothing_more() {
        let op = OperationKind::Fill {
            region: CellBox::new(IVec3::new(3, 0, 5), IVec3::new(10, 4, 9)),
            material: Material::SAND,
            occupancy: 255,
            ignore_water: false,
        };
        assert_eq!(
            op.footprint(),
            ColumnRect {
                min: IVec2::new(3, 5),
                max: IVec2::new(10, 9)
            }
        );
        assert_eq!(op.read_area(), op.footprint());
    }
}
