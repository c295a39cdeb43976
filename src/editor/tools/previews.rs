//! The tools' 3D previews, drawn by the renderer's overlay lines: the
//! clipboard's solid cells where a paste would put them (the outer faces'
//! edges, built once per clipboard and turn, moved with the cursor by their
//! origin), the plane Flatten would flatten to under the cursor, and the
//! Stamp and Path tools' previews ([`crate::editor::tools::shape_previews`]).

use crate::editor::tools::tools_panel::ToolSettings;
use crate::terrain::editing::brush::Brush;
use std::sync::Arc;

use glam::{DVec3, IVec3, Vec3};

use crate::mesh::cell_outline::clipboard_outline;
use crate::pipeline::picking::PickHit;
use crate::render::lines::line_batch::{PreviewLines, disc_segments};
use crate::terrain::editing::brush::{BrushMode, FlattenPlane};
use crate::terrain::editing::region::Clipboard;
use crate::terrain::storage::coords::CELL_SIZE_STUDS;

use crate::terrain::storage::grid::Grid;

use crate::editor::tools::shape_previews::{path_preview, stamp_ghost, stamp_handle};
use crate::editor::tools::tool_session::{ToolSession, flatten_plane_for};
use crate::editor::tools::tools_panel::ActiveTool;

/// Colour of the paste preview's cell edges in front of the terrain (sRGB + alpha).
pub const PASTE_PREVIEW_COLOR: [u8; 4] = [80, 220, 255, 235];
/// Colour of the paste preview's edges hidden by the terrain.
pub const PASTE_PREVIEW_HIDDEN_COLOR: [u8; 4] = [80, 220, 255, 55];
/// Colour of the Flatten plane preview in front of the terrain.
pub const FLATTEN_PLANE_COLOR: [u8; 4] = [255, 150, 40, 235];
/// Colour of the Flatten plane preview where the terrain hides it.
pub const FLATTEN_PLANE_HIDDEN_COLOR: [u8; 4] = [255, 150, 40, 90];
/// Pieces of the Flatten plane's rim.
const FLATTEN_RIM_SEGMENTS: usize = 64;

/// The paste preview's outline for one clipboard and turn.
#[derive(Clone, Debug)]
struct PasteOutline {
    /// Clipboard revision and quarter turns it was built for.
    key: (u64, u8),
    segments_studs: Arc<[[Vec3; 2]]>,
}

/// Previews kept between frames: the paste outline is rebuilt only when the
/// clipboard or its turn changes.
#[derive(Clone, Debug, Default)]
pub struct ToolPreviews {
    paste: Option<PasteOutline>,
    paste_builds: usize,
}

impl ToolPreviews {
    /// How many times the paste outline was built (for tests and logs).
    pub fn paste_builds(&self) -> usize {
        self.paste_builds
    }

    /// The paste preview of `clipboard` (copy number `revision`) turned
    /// `quarter_turns`, its minimum corner at `min_cell`: the outline is
    /// built when the clipboard or turn differs from the last call, else
    /// reused with a new origin.
    pub fn paste_preview(
        &mut self,
        clipboard: &Clipboard,
        revision: u64,
        quarter_turns: u8,
        min_cell: IVec3,
    ) -> PreviewLines {
        let key = (revision, quarter_turns % 4);
        let outline = match &self.paste {
            Some(p) if p.key == key => p,
            _ => {
                let started = std::time::Instant::now();
                let built = clipboard_outline(clipboard, key.1);
                log::debug!(
                    "paste preview: {} solid cells, {} edges{} in {:.1} ms",
                    built.solid_cells,
                    built.segments_studs.len(),
                    if built.creases_only {
                        " (creases only)"
                    } else {
                        ""
                    },
                    started.elapsed().as_secs_f64() * 1e3
                );
                self.paste_builds += 1;
                self.paste.insert(PasteOutline {
                    key,
                    segments_studs: built.segments_studs.into(),
                })
            }
        };
        PreviewLines {
            origin_world: min_cell.as_dvec3() * f64::from(CELL_SIZE_STUDS),
            segments_studs: Arc::clone(&outline.segments_studs),
            color: PASTE_PREVIEW_COLOR,
            hidden_color: Some(PASTE_PREVIEW_HIDDEN_COLOR),
        }
    }

    /// This frame's previews: the ghost of the stamp selected in the
    /// Layers section, then the active tool's ([`Self::tool_previews`]).
    pub fn frame_previews(
        &mut self,
        grid: &Grid,
        tools: &ToolSession,
        settings: &ToolSettings,
        brush: &Brush,
        hit: Option<&PickHit>,
    ) -> Vec<PreviewLines> {
        let mut previews = selected_operation_preview(grid, tools, settings);
        previews.extend(self.tool_previews(grid, tools, settings, brush, hit));
        previews
    }

    /// The active tool's previews: the paste preview while Paste follows
    /// the cursor, the Flatten plane while the Flatten brush hovers the
    /// terrain (the plane of the stroke in progress, else the one a stroke
    /// starting at `hit` would use). Empty otherwise.
    fn tool_previews(
        &mut self,
        grid: &Grid,
        tools: &ToolSession,
        settings: &ToolSettings,
        brush: &Brush,
        hit: Option<&PickHit>,
    ) -> Vec<PreviewLines> {
        // The path's points stay visible while the cursor is off the terrain.
        if settings.active == ActiveTool::Path {
            return path_preview(grid, &settings.path).into_iter().collect();
        }
        let Some(hit) = hit else {
            return Vec::new();
        };
        match settings.active {
            ActiveTool::Stamp => match settings.stamp.stamp() {
                Some(stamp) => {
                    let placement = settings.stamp.placement_at(hit.pos_world);
                    stamp_ghost(grid, stamp, &placement).into_iter().collect()
                }
                None => Vec::new(),
            },
            ActiveTool::Paste => {
                let turns = settings.paste_quarter_turns;
                match (
                    tools.session.clipboard.as_ref(),
                    tools.paste_box(hit, turns),
                ) {
                    (Some(clip), Some(b)) => vec![self.paste_preview(
                        clip,
                        tools.session.clipboard_revision,
                        turns,
                        b.min,
                    )],
                    _ => Vec::new(),
                }
            }
            ActiveTool::Brush if brush.mode == BrushMode::Flatten => {
                let plane = tools
                    .stroke_flatten_plane()
                    .unwrap_or_else(|| flatten_plane_for(settings, hit));
                vec![flatten_preview(
                    plane,
                    hit.pos_world,
                    brush.radius_cells * CELL_SIZE_STUDS,
                )]
            }
            _ => Vec::new(),
        }
    }
}

/// The ghost of the operation selected in the Layers section when it is a
/// stamp: where it presses, so a pick in the view shows what it took.
fn selected_operation_preview(
    grid: &Grid,
    tools: &ToolSession,
    settings: &ToolSettings,
) -> Vec<PreviewLines> {
    let Some(id) = settings.layers.selected_operation else {
        return Vec::new();
    };
    let stack = &tools.session.document.stack;
    match stack
        .operation(crate::terrain::document::operation::OperationId(id))
        .map(|(_, op)| op.kind())
    {
        Some(crate::terrain::document::operation::OperationKind::Stamp { stamp, placement }) => {
            stamp_ghost(grid, stamp, placement)
                .into_iter()
                .chain(stamp_handle(grid, placement))
                .collect()
        }
        _ => Vec::new(),
    }
}

/// The Flatten plane preview: a disc of the brush radius (studs) in
/// `plane`, centred where the plane lies under a brush at `centre_world`
/// ([`FlattenPlane::foot_world`], the rule Flatten itself uses).
pub fn flatten_preview(
    plane: FlattenPlane,
    centre_world: DVec3,
    radius_studs: f32,
) -> PreviewLines {
    let (_, normal) = plane.point_and_normal_world();
    PreviewLines {
        origin_world: plane.foot_world(centre_world),
        segments_studs: disc_segments(normal.as_vec3(), radius_studs, FLATTEN_RIM_SEGMENTS).into(),
        color: FLATTEN_PLANE_COLOR,
        hidden_color: Some(FLATTEN_PLANE_HIDDEN_COLOR),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::editing::brush::Brush;
    use crate::terrain::storage::cell::{Cell, Material};
    use crate::terrain::storage::coords::{CellBox, CellCoord, ChunkCoord};
    use crate::terrain::storage::grid::Grid;

    use crate::editor::tools::tools_panel::ToolRequest;

    /// The panel settings the previews read: the tool settings and a brush
    /// (the side panel's defaults).
    struct Panel {
        tools: ToolSettings,
        tool: BrushMode,
        radius_cells: f32,
        strength: f32,
    }

    impl Default for Panel {
        fn default() -> Panel {
            Panel {
                tools: ToolSettings::default(),
                tool: BrushMode::Add,
                radius_cells: 6.0,
                strength: 0.35,
            }
        }
    }

    impl Panel {
        fn brush(&self) -> Brush {
            Brush {
                mode: self.tool,
                radius_cells: self.radius_cells,
                strength: self.strength,
                material: Material::GRASS,
                ignore_water: false,
            }
        }
    }

    /// A floor 8 cells high with a 2 × 3 × 2 tower of snow on it at x, z 4..6.
    fn world() -> Grid {
        let mut g = Grid::new();
        g.edit_region(CellBox::new(IVec3::ZERO, IVec3::new(64, 8, 64)), |_, _| {
            Cell::full(Material::ROCK)
        })
        .unwrap();
        g.edit_region(
            CellBox::new(IVec3::new(4, 8, 4), IVec3::new(6, 11, 6)),
            |_, _| Cell::full(Material::SNOW),
        )
        .unwrap();
        g
    }

    fn hit_at(x: f64, y: f64, z: f64) -> PickHit {
        PickHit {
            pos_world: DVec3::new(x, y, z),
            normal: Vec3::Y,
            distance_studs: 10.0,
            chunk: ChunkCoord::new(0, 0, 0),
        }
    }

    /// The bounds of a preview's segments in world studs.
    fn bounds_world(p: &PreviewLines) -> (DVec3, DVec3) {
        let mut lo = DVec3::splat(f64::INFINITY);
        let mut hi = DVec3::splat(f64::NEG_INFINITY);
        for s in p.segments_studs.iter() {
            for v in s {
                let w = p.origin_world + v.as_dvec3();
                lo = lo.min(w);
                hi = hi.max(w);
            }
        }
        (lo, hi)
    }

    #[test]
    fn the_paste_preview_shows_the_copied_cells_at_the_paste_position() {
        let mut g = world();
        let mut tools = ToolSession::new(1 << 30, None);
        let mut panel = Panel::default();
        // Copy the tower with the air around it: 4 × 4 × 4 cells from (3, 8, 3).
        panel.tools.region = Some(CellBox::new(IVec3::new(3, 8, 3), IVec3::new(7, 12, 7)));
        tools
            .request(&mut g, ToolRequest::Copy, &panel.tools, None)
            .unwrap();
        panel.tools.active = ActiveTool::Paste;
        let mut previews = ToolPreviews::default();
        let at = hit_at(100.0, 32.0, 100.0);
        let lines = previews.frame_previews(&g, &tools, &panel.tools, &panel.brush(), Some(&at));
        assert_eq!(lines.len(), 1);
        let b = tools.paste_box(&at, 0).unwrap();
        // The paste box: centred on cell (25, 7, 25), 4 cells wide.
        assert_eq!(b.min, IVec3::new(23, 7, 23));
        assert_eq!(lines[0].origin_world, DVec3::new(92.0, 28.0, 92.0));
        // The lines outline the 2 × 3 × 2 tower (12 cells), not the 4³ box:
        // the tower sat 1 cell in from the box's min corner.
        let (lo, hi) = bounds_world(&lines[0]);
        let s = 4.0;
        assert_eq!(lo, (b.min + IVec3::new(1, 0, 1)).as_dvec3() * s);
        assert_eq!(hi, (b.min + IVec3::new(3, 3, 3)).as_dvec3() * s);
        let outline = clipboard_outline(tools.session.clipboard.as_ref().unwrap(), 0);
        assert_eq!(outline.solid_cells, 12);
        assert_eq!(
            outline.solid_bounds_cells,
            Some((IVec3::new(1, 0, 1), IVec3::new(3, 3, 3)))
        );
        assert_eq!(lines[0].segments_studs.len(), outline.segments_studs.len());
        assert_eq!(previews.paste_builds(), 1);
        // Moving the cursor moves the origin without a rebuild.
        let moved = previews.frame_previews(
            &g,
            &tools,
            &panel.tools,
            &panel.brush(),
            Some(&hit_at(140.0, 32.0, 100.0)),
        );
        assert_eq!(moved[0].origin_world, DVec3::new(132.0, 28.0, 92.0));
        assert!(Arc::ptr_eq(
            &moved[0].segments_studs,
            &lines[0].segments_studs
        ));
        assert_eq!(previews.paste_builds(), 1);
        // A turn or a new copy rebuilds it.
        panel.tools.paste_quarter_turns = 1;
        previews.frame_previews(&g, &tools, &panel.tools, &panel.brush(), Some(&at));
        assert_eq!(previews.paste_builds(), 2);
        tools
            .request(&mut g, ToolRequest::Copy, &panel.tools, None)
            .unwrap();
        previews.frame_previews(&g, &tools, &panel.tools, &panel.brush(), Some(&at));
        assert_eq!(previews.paste_builds(), 3);
        // Other tools draw no paste preview.
        panel.tools.active = ActiveTool::Region;
        assert!(
            previews
                .frame_previews(&g, &tools, &panel.tools, &panel.brush(), Some(&at))
                .is_empty()
        );
    }

    /// Height of the solid surface in the column of cell `(x, z)`, studs:
    /// the column's solid occupancy summed (a floor from y = 0).
    fn column_height_studs(g: &Grid, x: i32, z: i32) -> f64 {
        (0..64)
            .map(|y| f64::from(g.cell(CellCoord::new(x, y, z)).solid_fraction()))
            .sum::<f64>()
            * 4.0
    }

    #[test]
    fn the_flatten_plane_is_where_a_flatten_stroke_levels_the_terrain() {
        for (fixed, height_studs) in [(true, 46.0), (true, 20.0), (false, 32.0)] {
            let mut g = world();
            let mut tools = ToolSession::new(1 << 30, None);
            let mut panel = Panel {
                tool: BrushMode::Flatten,
                radius_cells: 5.0,
                strength: 1.0,
                ..Panel::default()
            };
            panel.tools.flatten_fixed_height = fixed;
            panel.tools.flatten_height_studs = height_studs;
            // The cursor on the floor (top at 32 studs), over cell (20, 20).
            let hit = hit_at(82.0, 32.0, 82.0);
            let previews = ToolPreviews::default().frame_previews(
                &g,
                &tools,
                &panel.tools,
                &panel.brush(),
                Some(&hit),
            );
            assert_eq!(previews.len(), 1);
            let plane_y = previews[0].origin_world.y;
            assert_eq!(plane_y, height_studs);
            assert_eq!(previews[0].origin_world.x, 82.0);
            // Every disc point lies at the plane's height.
            let (lo, hi) = bounds_world(&previews[0]);
            assert_eq!((lo.y, hi.y), (plane_y, plane_y));
            assert!((hi.x - lo.x - 40.0).abs() < 1e-3);
            // Flatten there until it settles: the surface under the brush
            // centre ends at the previewed height.
            let brush: Brush = panel.brush();
            for _ in 0..8 {
                tools
                    .stroke(
                        &mut g,
                        brush,
                        &panel.tools,
                        Some(hit),
                        (DVec3::ZERO, DVec3::NEG_Y),
                    )
                    .unwrap();
                tools.end_stroke(&mut g);
            }
            let surface = column_height_studs(&g, 20, 20);
            assert!(
                (surface - plane_y).abs() <= 0.5,
                "flattened to {surface} studs, preview at {plane_y}"
            );
            // While a stroke is held, the preview keeps the stroke's plane
            // even when the cursor moves up a bump.
            let moved = hit_at(20.0, 44.0, 20.0);
            tools
                .stroke(
                    &mut g,
                    brush,
                    &panel.tools,
                    Some(hit),
                    (DVec3::ZERO, DVec3::NEG_Y),
                )
                .unwrap();
            let held = ToolPreviews::default().frame_previews(
                &g,
                &tools,
                &panel.tools,
                &panel.brush(),
                Some(&moved),
            );
            assert_eq!(held[0].origin_world.y, plane_y);
            tools.end_stroke(&mut g);
        }
    }

    #[test]
    fn the_selected_stamp_shows_its_ghost_whatever_the_tool() {
        let g = world();
        let mut tools = ToolSession::new(1 << 30, None);
        tools.session.enable_document(&g);
        let stamp = Arc::new(
            crate::terrain::stamp::definition::Stamp::height("bump", 3, 3, vec![0.5; 9])
                .expect("stamp"),
        );
        let placement = stamp.native_placement(
            glam::DVec2::new(30.0, 30.0),
            crate::terrain::stamp::definition::StampBase::SurfaceUnderCentre,
        );
        let id = tools
            .session
            .document
            .stack
            .add_operation(crate::terrain::document::operation::OperationKind::Stamp {
                stamp: stamp.clone(),
                placement,
            })
            .unwrap();
        let mut panel = Panel::default();
        let mut previews = ToolPreviews::default();
        let none = previews.frame_previews(&g, &tools, &panel.tools, &panel.brush(), None);
        assert!(none.is_empty());
        panel.tools.layers.selected_operation = Some(id.0);
        let lines = previews.frame_previews(&g, &tools, &panel.tools, &panel.brush(), None);
        assert_eq!(lines.len(), 2, "the ghost and the turn-and-scale handle");
        let ghost = crate::editor::tools::shape_previews::stamp_ghost(&g, &stamp, &placement);
        assert_eq!(Some(&lines[0]), ghost.as_ref());
        let handle = crate::editor::tools::shape_previews::stamp_handle(&g, &placement).unwrap();
        assert_eq!(lines[1], handle);
        // The handle stands one radius east of the centre (rotation 0), and
        // its bar reaches back over the centre.
        let radius_studs = placement.radius_cells * 4.0;
        let centre_x = placement.centre_xz_cells.x * 4.0;
        assert!((handle.origin_world.x - (centre_x + radius_studs)).abs() < 1e-9);
        let bar_end = handle.segments_studs[9][1];
        assert!((bar_end.x + radius_studs as f32).abs() < 1e-3 && bar_end.z.abs() < 1e-3);
    }
}
