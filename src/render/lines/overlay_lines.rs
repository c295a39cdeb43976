//! What the overlay lines show in one frame: the `chunks` overlay's chunk
//! bounds, the `residency` overlay's outlines, the editor's previews and
//! the `seam-audit` markers, pushed into the frame's [`LineBatch`] in that
//! order (the order they are drawn in).

use glam::{DVec3, Vec3};

use crate::terrain::storage::coords::CHUNK_SIZE_STUDS;

use super::super::terrain::ChunkBuffers;
use super::line_batch::{CHUNK_LINE_COLOR, LineBatch, MARKER_COLOR, PreviewLines};
use super::overlays::{Overlay, OverlaySet};
use super::residency_overlay::ResidencyView;

/// The frame's inputs to the overlay lines.
#[derive(Clone, Copy)]
pub struct OverlayLinesInput<'a> {
    /// The overlays that are on.
    pub overlays: OverlaySet,
    /// The camera's position, world studs (lines are camera-relative).
    pub camera_world: DVec3,
    /// The terrain's chunk buffers, prepared for this frame.
    pub chunks: &'a ChunkBuffers,
    /// The column states of a streaming world, if any.
    pub residency: Option<&'a ResidencyView>,
    /// Editor previews, drawn whatever the overlays.
    pub previews: &'a [PreviewLines],
    /// Where the `seam-audit` overlay puts its markers, world studs.
    pub seam_markers_world: &'a [DVec3],
}

/// Replaces `batch` with the lines `input` asks for.
pub fn build_overlay_lines(batch: &mut LineBatch, input: &OverlayLinesInput<'_>) {
    batch.clear();
    if input.overlays.contains(Overlay::Chunks) {
        push_chunk_bounds(batch, input.chunks);
    }
    if input.overlays.contains(Overlay::Residency)
        && let Some(view) = input.residency
    {
        // Outlines span the height range of the drawn ground.
        view.push_outlines(batch, input.camera_world, drawn_height_range(input.chunks));
    }
    for preview in input.previews {
        batch.push_preview(preview, input.camera_world);
    }
    if input.overlays.contains(Overlay::SeamAudit) {
        for pos_world in input.seam_markers_world {
            batch.push_marker(*pos_world, input.camera_world, MARKER_COLOR);
        }
    }
}

/// Each drawn chunk's 128-stud cube, its top and bottom moved to the
/// mesh's height range: the edges that matter run along the surface
/// instead of floating in the air above it.
fn push_chunk_bounds(batch: &mut LineBatch, chunks: &ChunkBuffers) {
    for (coord, instance) in chunks.drawn() {
        let Some(gpu) = chunks.get(coord) else {
            continue;
        };
        let [x, y, z, _] = instance.chunk_origin_rel;
        let origin = Vec3::new(x, y, z);
        let (lo, hi) = gpu.bounds_local;
        let y_lo = lo.y.clamp(0.0, CHUNK_SIZE_STUDS);
        let y_hi = hi.y.clamp(y_lo, CHUNK_SIZE_STUDS);
        LineBatch::push_box(
            &mut batch.tested,
            origin + Vec3::new(0.0, y_lo, 0.0),
            origin + Vec3::new(CHUNK_SIZE_STUDS, y_hi, CHUNK_SIZE_STUDS),
            CHUNK_LINE_COLOR,
        );
    }
}

/// The world heights `[min, max]` (studs) the drawn chunks' meshes span,
/// `[0, 256]` without any.
fn drawn_height_range(chunks: &ChunkBuffers) -> [f64; 2] {
    let mut y = [f64::INFINITY, f64::NEG_INFINITY];
    for (coord, _) in chunks.drawn() {
        if let Some(gpu) = chunks.get(coord) {
            let base = coord.origin_world().y;
            y[0] = y[0].min(base + f64::from(gpu.bounds_local.0.y));
            y[1] = y[1].max(base + f64::from(gpu.bounds_local.1.y));
        }
    }
    if y[0] > y[1] {
        y = [0.0, 256.0];
    }
    y
}
