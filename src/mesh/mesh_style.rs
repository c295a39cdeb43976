//! Which mesher draws the terrain ("the mesher interface is the
//! migration seam"). Both read the same grid; the style only decides how a
//! chunk's cells become triangles.

use crate::terrain::storage::coords::CHUNK_SIZE_CELLS;

/// How chunks are meshed for the view.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum MeshStyle {
    /// Surface Nets with blended materials (spec §5–6).
    #[default]
    Smooth,
    /// Greedy heightfield tops and full-drop skirts in terrace steps,
    /// flat-shaded with the palette (see [`crate::mesh::lowpoly::lowpoly_chunk`]).
    LowPoly {
        /// Height of one terrace step, cells (finite, positive).
        step_cells: f32,
    },
}

impl MeshStyle {
    /// The low-poly style with 1-cell steps.
    pub const LOW_POLY: MeshStyle = MeshStyle::LowPoly { step_cells: 1.0 };

    /// True for the low-poly style.
    pub fn is_low_poly(self) -> bool {
        matches!(self, MeshStyle::LowPoly { .. })
    }

    /// The style's name as the CLI and the menus spell it.
    pub fn name(self) -> &'static str {
        match self {
            MeshStyle::Smooth => "smooth",
            MeshStyle::LowPoly { .. } => "low-poly",
        }
    }
}

/// Cell columns per low-poly block side at `level`: decimation doubles per
/// level (1 at full detail, 8 at level 3).
pub fn low_poly_block_cells(level: u8) -> u32 {
    (1u32 << level.min(5)).min(CHUNK_SIZE_CELLS as u32)
}
