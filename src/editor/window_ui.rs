//! The window's egui pass, composed from the editor's parts: the File menu
//! bar and its dialogs, the side panel, the region box with its handles and
//! the paste box over the 3D view, the note beside the cursor while an edit
//! waits, the heightmap-import progress window and the walk window.
//!
//! The window gathers what the pass shows ([`UiScene`]) and gets back the
//! egui output, the space the bar and panel took (which decides the 3D
//! viewport) and what the File menu asked for.

use std::sync::Arc;

use glam::DVec3;

use crate::camera::Camera;
use crate::editor::files::file_session::{FileSession, SessionEvent};
use crate::editor::navigation::walk::WalkMode;
use crate::editor::panel::side_panel::{EditorPanel, PanelStats};
use crate::editor::panel::ui_input::split_raw_input;
use crate::editor::tools::tool_session::ToolSession;
use crate::editor::tools::tools_panel::{
    ActiveTool, HandleView, PASTE_COLOR, SELECTION_COLOR, draw_boxes,
};
use crate::pipeline::picking::PickHit;
use crate::progress::Progress;
use crate::terrain::storage::coords::CellBox;
use crate::terrain::storage::grid::Grid;

/// What one egui pass shows besides the panel's own state.
pub struct UiScene<'a> {
    /// The panel's statistics this frame.
    pub stats: &'a PanelStats,
    /// The camera (the boxes are projected with it; the menu saves it).
    pub camera: Camera,
    /// The 3D view, `[x, y, width, height]` in physical pixels.
    pub viewport_px: [f32; 4],
    /// Boxes drawn over the 3D view (cells) and their colours.
    pub boxes: Vec<(CellBox, egui::Color32)>,
    /// The selection box's handles, when the Region tool shows them.
    pub handles: Option<HandleView>,
    /// A note beside the cursor (text, cursor position in physical pixels).
    pub cursor_note: Option<(String, [f32; 2])>,
    /// A streaming world being read on its own thread (a heightmap import,
    /// a file whose recipe is cooked again).
    pub reading_world: Option<ReadingWorld>,
    /// Where the camera is when it is lost (inside the terrain, below the
    /// floor, outside the world), shown over the top of the 3D view.
    pub view_note: Option<String>,
    /// The surface point at the centre of the view, for walk mode (lazy: a
    /// pick costs a ray cast).
    pub look_at: &'a dyn Fn() -> Option<DVec3>,
}

/// What one egui pass produced.
pub struct UiFrame {
    /// The egui output (shapes, textures, platform output).
    pub output: egui::FullOutput,
    /// Width of the side panel, points.
    pub panel_points: f32,
    /// Height of the menu bar, points.
    pub bar_points: f32,
    /// What the File menu asked for, in order.
    pub session_events: Vec<SessionEvent>,
}

/// The boxes the tools show over the 3D view: the region selection, and
/// the paste box under the cursor while Paste follows it; with the
/// selection's handles while the Region tool is active (`hot` is the handle
/// under the cursor or being dragged).
pub fn tool_boxes(
    panel: &EditorPanel,
    tools: &ToolSession,
    hit: Option<PickHit>,
    hot: impl FnOnce(&CellBox) -> Option<crate::editor::tools::box_handles::BoxHandle>,
) -> (Vec<(CellBox, egui::Color32)>, Option<HandleView>) {
    let mut boxes = Vec::new();
    if let Some(b) = panel.tools.region {
        boxes.push((b, SELECTION_COLOR));
    }
    if panel.tools.active == ActiveTool::Paste
        && let Some(hit) = hit
        && let Some(b) = tools.paste_box(&hit, panel.tools.paste_quarter_turns)
    {
        boxes.push((b, PASTE_COLOR));
    }
    let handles = match panel.tools.region {
        Some(region) if panel.tools.active == ActiveTool::Region => Some(HandleView {
            region,
            hot: hot(&region),
        }),
        _ => None,
    };
    (boxes, handles)
}

/// Runs the window's egui passes over one frame's `raw_input`: one pass
/// per part [`split_raw_input`] cuts it into (so every click and key
/// counts, whatever the frame time), their outputs appended.
pub fn run_ui(
    ctx: &egui::Context,
    raw_input: egui::RawInput,
    session: &mut FileSession,
    panel: &mut EditorPanel,
    walk: &mut WalkMode,
    grid: &mut Grid,
    scene: UiScene<'_>,
) -> UiFrame {
    let mut frame = UiFrame {
        output: egui::FullOutput::default(),
        panel_points: 0.0,
        bar_points: 0.0,
        session_events: Vec::new(),
    };
    for pass in split_raw_input(raw_input) {
        let output = ui_pass(ctx, pass, session, panel, walk, grid, &scene, &mut frame);
        frame.output.append(output);
    }
    frame
}

/// One egui pass: the menu bar and dialogs, the panel, the boxes, the
/// notes and windows. Records the bar's and panel's size and the File
/// menu's event in `frame`.
#[allow(clippy::too_many_arguments)]
fn ui_pass(
    ctx: &egui::Context,
    raw_input: egui::RawInput,
    session: &mut FileSession,
    panel: &mut EditorPanel,
    walk: &mut WalkMode,
    grid: &mut Grid,
    scene: &UiScene<'_>,
    frame: &mut UiFrame,
) -> egui::FullOutput {
    session.menu.style = panel.lod.style;
    let camera = scene.camera;
    ctx.run_pass(raw_input, |ctx| {
        let (bar, event) = session.ui(ctx, grid, &camera, scene.reading_world.is_some());
        // View ▸ Style: the panel's settings carry it to the streaming.
        panel.lod.style = session.menu.style;
        frame.bar_points = bar;
        frame.session_events.extend(event);
        panel.material_looks = material_looks(&session.doc.meta.materials);
        frame.panel_points = panel.show(ctx, scene.stats);
        if std::mem::take(&mut panel.materials_window_requested) {
            session.materials.open = !session.materials.open;
        }
        let editable = !session.doc.is_streaming() && scene.reading_world.is_none();
        session
            .materials
            .show(ctx, &mut session.doc.meta.materials, editable);
        draw_boxes(ctx, &camera, scene.viewport_px, &scene.boxes, scene.handles);
        if let Some((text, at)) = &scene.cursor_note {
            cursor_note(ctx, *at, text);
        }
        if let Some(reading) = &scene.reading_world {
            reading_window(ctx, reading);
        }
        if let Some(text) = &scene.view_note {
            view_note(ctx, scene.viewport_px, text);
        }
        walk_window(ctx, walk, grid, &camera, scene.look_at);
    })
}

/// Each solid material's name and swatch colour in `library`.
fn material_looks(
    library: &crate::terrain::materials::MaterialLibrary,
) -> Vec<(crate::terrain::Material, String, [u8; 3])> {
    library
        .styles()
        .map(|(m, s)| (m, s.name.clone(), library.flat_colour_srgb(m)))
        .collect()
}

/// Width of the "Walk and collision" window, points: it keeps this width
/// whatever the main window's size did before (egui sizes a window to its
/// wrapped text, so one squashed by a tiny main window stayed squashed).
pub const WALK_WINDOW_WIDTH_POINTS: f32 = 300.0;

/// The "Walk and collision" window at the top right of the view; returns
/// its rectangle (points).
fn walk_window(
    ctx: &egui::Context,
    walk: &mut WalkMode,
    grid: &Grid,
    camera: &Camera,
    look_at: impl FnOnce() -> Option<DVec3>,
) -> Option<egui::Rect> {
    egui::Window::new("Walk and collision")
        .anchor(egui::Align2::RIGHT_TOP, [-8.0, 36.0])
        .resizable(false)
        .min_width(WALK_WINDOW_WIDTH_POINTS)
        .max_width(WALK_WINDOW_WIDTH_POINTS)
        .show(ctx, |ui| walk.ui(ui, grid, camera, look_at))
        .map(|r| r.response.rect)
}

/// A streaming world being read on its own thread, as the progress window
/// shows it.
#[derive(Debug, Clone)]
pub struct ReadingWorld {
    /// What is read, e.g. "Opening islands.strata".
    pub what: String,
    /// Seconds so far.
    pub secs: f64,
    /// A recipe's cook while opening (stage and fraction) and its Cancel.
    pub progress: Arc<Progress>,
}

/// The progress window of a streaming world being read: a spinner and the
/// seconds, and while a recipe cooks its stage, a bar and Cancel.
fn reading_window(ctx: &egui::Context, reading: &ReadingWorld) {
    egui::Window::new("Reading world")
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
        .show(ctx, |ui| {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!("{}… {:.0} s", reading.what, reading.secs));
            });
            let progress = &reading.progress;
            if let Some(fraction) = progress.fraction() {
                ui.add(
                    egui::ProgressBar::new(fraction)
                        .text(format!("{} {:.0}%", progress.label(), fraction * 100.0))
                        .desired_width(320.0),
                );
                if progress.is_cancelled() {
                    ui.label("Cancelling…");
                } else if ui.button("Cancel").clicked() {
                    progress.cancel();
                }
            }
        });
    // Keep redrawing so the seconds and the bar move.
    ctx.request_repaint();
}

/// A note centred at the top of the 3D view (`viewport_px` is `[x, y,
/// width, height]` in physical pixels), e.g. where a lost camera is.
pub fn view_note(ctx: &egui::Context, viewport_px: [f32; 4], text: &str) {
    let ppp = ctx.pixels_per_point();
    let [x, y, w, _] = viewport_px;
    let painter = ctx.layer_painter(egui::LayerId::new(
        egui::Order::Tooltip,
        egui::Id::unique("strata_view_note"),
    ));
    let galley = painter.layout(
        text.to_string(),
        egui::FontId::proportional(15.0),
        egui::Color32::from_rgb(255, 225, 90),
        view_note_wrap_points(w / ppp),
    );
    let pos = egui::pos2((x + w * 0.5) / ppp - galley.size().x * 0.5, y / ppp + 12.0);
    let rect = egui::Rect::from_min_size(pos, galley.size()).expand(6.0);
    painter.rect_filled(rect, 4.0, egui::Color32::from_black_alpha(200));
    painter.galley(pos, galley, egui::Color32::WHITE);
}

/// Width a view note wraps at in a 3D view `viewport_points` wide: centred,
/// it keeps clear of the Walk window at the view's top right (it covered
/// that window's title) in views of 768 points or more, and is never
/// narrower than 120 points.
pub fn view_note_wrap_points(viewport_points: f32) -> f32 {
    (viewport_points - 2.0 * (WALK_WINDOW_WIDTH_POINTS + 24.0)).max(120.0)
}

/// A short note next to the mouse cursor (`cursor_px` in physical
/// pixels), e.g. "loading 3 chunk columns…" while an edit waits.
pub fn cursor_note(ctx: &egui::Context, cursor_px: [f32; 2], text: &str) {
    let ppp = ctx.pixels_per_point();
    let pos = egui::pos2(cursor_px[0] / ppp + 18.0, cursor_px[1] / ppp + 14.0);
    let painter = ctx.layer_painter(egui::LayerId::new(
        egui::Order::Tooltip,
        egui::Id::unique("strata_column_wait_note"),
    ));
    let font = egui::FontId::proportional(14.0);
    let galley = painter.layout_no_wrap(
        text.to_string(),
        font,
        egui::Color32::from_rgb(255, 225, 90),
    );
    let rect = egui::Rect::from_min_size(pos, galley.size()).expand(4.0);
    painter.rect_filled(rect, 4.0, egui::Color32::from_black_alpha(190));
    painter.galley(pos, galley, egui::Color32::WHITE);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk window's width after frames at each `sizes` (points).
    fn walk_window_width(sizes: &[(f32, f32)]) -> f32 {
        let ctx = egui::Context::default();
        let mut walk = WalkMode::default();
        walk.last_error = Some("no terrain under or ahead of the camera to walk on".into());
        let grid = Grid::new();
        let camera = Camera::default();
        let mut width = 0.0f32;
        for &(w, h) in sizes {
            for _ in 0..3 {
                let raw = egui::RawInput {
                    screen_rect: Some(egui::Rect::from_min_size(
                        egui::Pos2::ZERO,
                        egui::vec2(w, h),
                    )),
                    ..egui::RawInput::default()
                };
                let mut out = ctx.run_pass(raw, |ctx| {
                    width = walk_window(ctx, &mut walk, &grid, &camera, || None)
                        .map_or(0.0, |r| r.width());
                });
                out.textures_delta.clear();
            }
        }
        width
    }

    /// The note "The camera is 306.5 km south-west of the world's edge…"
    /// covered the Walk window's title: centred in a 980-point view it now
    /// ends left of the window (8 points of margin and the note's 6-point
    /// frame included).
    #[test]
    fn a_view_note_keeps_clear_of_the_walk_window() {
        for view in [800.0f32, 980.0, 1600.0] {
            let wrap = view_note_wrap_points(view);
            let note_right = view * 0.5 + wrap * 0.5 + 6.0;
            let walk_left = view - 8.0 - WALK_WINDOW_WIDTH_POINTS;
            assert!(
                note_right <= walk_left,
                "{view}: {note_right} > {walk_left}"
            );
        }
    }

    /// The input that showed it: the main window resized very small, then
    /// back; the walk window stayed squashed to the small width.
    #[test]
    fn the_walk_window_regains_its_width_after_a_tiny_main_window() {
        let fresh = walk_window_width(&[(1280.0, 720.0)]);
        assert!(fresh >= WALK_WINDOW_WIDTH_POINTS - 1.0, "{fresh}");
        let after = walk_window_width(&[(1280.0, 720.0), (120.0, 90.0), (1280.0, 720.0)]);
        assert!(
            (after - fresh).abs() < 1.0,
            "{after} after a tiny window, {fresh} fresh"
        );
    }
}
