//! Debug overlays that make levels of detail, chunk ownership, skirts, seams
//! and republication visible: which exist ([`Overlay`]), the bit set the
//! shaders read ([`OverlaySet`], in `GlobalUniforms::overlay_bits`), the level
//! tints shared by the shader and the panel legend, and how the wireframe is
//! drawn on this adapter ([`WireframeMode`]). The seam audit whose
//! mismatches the `seam-audit` markers show runs on the CPU, outside the
//! renderer (`crate::pipeline::seam_audit`); the frame's input carries
//! their positions.
//!
//! | Overlay | Drawn by |
//! |---|---|
//! | `lod` | terrain shader: tint by the chunk's level (instance `chunk_coord.w`) |
//! | `chunks` | line pipeline: the 12 edges of each drawn chunk's 128-stud cube, top and bottom at its surface's height range |
//! | `wireframe` | wireframe pipeline: polygon-mode lines, or barycentric edges |
//! | `skirts` | terrain shader: magenta on skirt triangles (vertex `normal.w`) |
//! | `hide-skirts` | chunk draws stop at the first skirt index |
//! | `seams` | terrain shader: a hue per chunk coordinate |
//! | `seam-audit` | line pipeline: a marker (always on top) at every mismatch the caller passes |
//! | `remesh` | terrain shader: a 0.5 s flash after the chunk was promoted (instance `chunk_origin_rel.w`) |
//! | `residency` | terrain shader: tint by column state (instance `chunk_coord.w` bits 4+); loading and spilled columns as outlines ([`super::residency_overlay`]) |
//! | `holes` | sky shader: [`HOLE_COLOR_SRGB`] where a view ray that must meet the ground (it reaches the world's floor inside its footprint and draw distance) shows sky |

/// One debug overlay. The command-line names (`--overlay NAME`) are the
/// kebab-case variant names: `lod`, `chunks`, `wireframe`, `skirts`,
/// `hide-skirts`, `seams`, `seam-audit`, `remesh`, `residency`, `holes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Overlay {
    /// Tint each chunk by its level of detail.
    Lod,
    /// Draw chunk bounds as lines.
    Chunks,
    /// Draw triangle edges over the shaded terrain.
    Wireframe,
    /// Tint skirt triangles magenta.
    Skirts,
    /// Do not draw skirts, revealing the cracks they cover.
    HideSkirts,
    /// Colour each chunk's surface by a hue derived from its coordinate.
    Seams,
    /// Audit seams of the shown meshes and mark every mismatch.
    SeamAudit,
    /// Flash chunks briefly when they are republished.
    Remesh,
    /// Tint chunk columns of a streaming world by residency state.
    Residency,
    /// Paint sky seen through the ground in [`HOLE_COLOR_SRGB`].
    Holes,
}

/// The colour the `holes` overlay paints sky seen through the ground,
/// 8-bit sRGB: pure magenta, which neither the sky, the terrain nor the
/// water ever shows exactly (recordings count these pixels).
pub const HOLE_COLOR_SRGB: [u8; 3] = [255, 0, 255];

impl Overlay {
    /// Every overlay, in bit order.
    pub const ALL: [Overlay; 10] = [
        Overlay::Lod,
        Overlay::Chunks,
        Overlay::Wireframe,
        Overlay::Skirts,
        Overlay::HideSkirts,
        Overlay::Seams,
        Overlay::SeamAudit,
        Overlay::Remesh,
        Overlay::Residency,
        Overlay::Holes,
    ];

    /// The overlay's bit in [`OverlaySet`]. Keep in sync with the `OVERLAY_*`
    /// constants in `shaders/terrain.wgsl` and `shaders/wireframe.wgsl`.
    pub const fn bit(self) -> u32 {
        1 << self as u32
    }

    /// The command-line name, e.g. `"hide-skirts"`.
    pub fn name(self) -> &'static str {
        match self {
            Overlay::Lod => "lod",
            Overlay::Chunks => "chunks",
            Overlay::Wireframe => "wireframe",
            Overlay::Skirts => "skirts",
            Overlay::HideSkirts => "hide-skirts",
            Overlay::Seams => "seams",
            Overlay::SeamAudit => "seam-audit",
            Overlay::Remesh => "remesh",
            Overlay::Residency => "residency",
            Overlay::Holes => "holes",
        }
    }

    /// A short label for the editor panel.
    pub fn label(self) -> &'static str {
        match self {
            Overlay::Lod => "LOD levels",
            Overlay::Chunks => "Chunk bounds",
            Overlay::Wireframe => "Wireframe",
            Overlay::Skirts => "Tint skirts",
            Overlay::HideSkirts => "Hide skirts",
            Overlay::Seams => "Chunk owners",
            Overlay::SeamAudit => "Seam audit",
            Overlay::Remesh => "Remesh flash",
            Overlay::Residency => "Residency",
            Overlay::Holes => "Sky holes",
        }
    }

    /// One sentence on what the overlay shows (panel tooltip).
    pub fn description(self) -> &'static str {
        match self {
            Overlay::Lod => "Tint each chunk by its level of detail (legend below)",
            Overlay::Chunks => {
                "Draw each drawn chunk's 128-stud bounds, from the bottom to the top of its surface"
            }
            Overlay::Wireframe => "Draw triangle edges over the shaded terrain",
            Overlay::Skirts => "Tint the render-only skirts under coarse chunk borders magenta",
            Overlay::HideSkirts => "Do not draw skirts, revealing the cracks they cover",
            Overlay::Seams => "Colour each chunk's surface by a hue of its coordinate",
            Overlay::SeamAudit => {
                "Audit boundary vertices of equal-level neighbours and mark every mismatch"
            }
            Overlay::Remesh => "Flash chunks for half a second when a new mesh is shown",
            Overlay::Residency => {
                "Streaming worlds: tint columns resident (blue) or edited (orange); outline \
                 loading (yellow) and recently spilled (magenta) ones"
            }
            Overlay::Holes => {
                "Paint sky seen through the ground magenta: a view ray that reaches the \
                 world's floor inside the world and the draw distance must meet ground"
            }
        }
    }
}

/// A set of [`Overlay`]s as one `u32` bit set (bit `i` = `Overlay::ALL[i]`),
/// exactly as the shaders read it from `GlobalUniforms::overlay_bits`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
pub struct OverlaySet(u32);

impl OverlaySet {
    /// No overlay.
    pub const NONE: OverlaySet = OverlaySet(0);

    /// The raw bits (unknown bits are never set).
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// True when `overlay` is on.
    pub const fn contains(self, overlay: Overlay) -> bool {
        self.0 & overlay.bit() != 0
    }

    /// True when no overlay is on.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// This set with `overlay` on.
    #[must_use]
    pub const fn with(self, overlay: Overlay) -> OverlaySet {
        OverlaySet(self.0 | overlay.bit())
    }

    /// Turns `overlay` on or off.
    pub fn set(&mut self, overlay: Overlay, on: bool) {
        if on {
            self.0 |= overlay.bit();
        } else {
            self.0 &= !overlay.bit();
        }
    }

    /// The overlays that are on, in bit order.
    pub fn iter(self) -> impl Iterator<Item = Overlay> {
        Overlay::ALL.into_iter().filter(move |o| self.contains(*o))
    }
}

impl FromIterator<Overlay> for OverlaySet {
    fn from_iter<I: IntoIterator<Item = Overlay>>(iter: I) -> Self {
        iter.into_iter().fold(OverlaySet::NONE, OverlaySet::with)
    }
}

impl From<Overlay> for OverlaySet {
    fn from(o: Overlay) -> Self {
        OverlaySet::NONE.with(o)
    }
}

/// Tints of levels 0–3 in sRGB (blue, green, yellow, red: near to far).
/// Keep in sync with `LEVEL_TINTS` in `shaders/terrain.wgsl` (linear there).
pub const LEVEL_TINTS_SRGB: [[u8; 3]; 4] =
    [[64, 140, 255], [70, 215, 90], [255, 215, 40], [240, 70, 60]];

/// `lod` overlay tints of the horizon's node levels 4–8 (level 8 also for
/// coarser ones) in sRGB (spec §13). Keep in sync with `LEVEL_TINTS` in
/// `shaders/terrain.wgsl`.
pub const NODE_LEVEL_TINTS_SRGB: [[u8; 3]; 5] = [
    [170, 90, 255],
    [60, 220, 230],
    [235, 235, 235],
    [255, 130, 190],
    [170, 120, 70],
];

/// Skirt tint in sRGB. Keep in sync with `SKIRT_TINT` in `shaders/terrain.wgsl`.
pub const SKIRT_TINT_SRGB: [u8; 3] = [255, 40, 220];

/// Seconds a republished chunk flashes with the `remesh` overlay. Keep in
/// sync with `REMESH_FLASH_SECS` in `shaders/terrain.wgsl`.
pub const REMESH_FLASH_SECS: f32 = 0.5;

/// How the `wireframe` overlay is drawn on this adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireframeMode {
    /// A second pipeline drawing the chunk triangles with
    /// `PolygonMode::Line` (needs `Features::POLYGON_MODE_LINE`).
    PolygonLines,
    /// Non-indexed draws that read vertices and indices from storage buffers
    /// in the vertex shader, so each triangle corner knows its barycentric
    /// coordinate and the fragment shader draws anti-aliased edges (needs
    /// vertex-stage storage buffers, `DownlevelFlags::VERTEX_STORAGE`).
    Barycentric,
    /// Neither is available (e.g. WebGL2): the overlay draws nothing.
    Unavailable,
}

impl WireframeMode {
    /// The best mode for `device` on `adapter` (polygon lines when the
    /// device has `POLYGON_MODE_LINE`, else barycentric). The environment
    /// variable `STRATA_WIREFRAME=barycentric` (or `lines`) overrides the
    /// choice when the adapter supports it.
    pub fn for_device(device: &wgpu::Device, adapter: &wgpu::Adapter) -> WireframeMode {
        let lines = device
            .features()
            .contains(wgpu::Features::POLYGON_MODE_LINE);
        let bary = Self::barycentric_supported(adapter);
        let forced = std::env::var("STRATA_WIREFRAME").ok();
        match forced.as_deref() {
            Some("barycentric") if bary => return WireframeMode::Barycentric,
            Some("lines") if lines => return WireframeMode::PolygonLines,
            Some(other) => log::warn!(
                "STRATA_WIREFRAME={other:?} is not available here (lines: {lines}, \
                 barycentric: {bary}); choosing automatically"
            ),
            None => {}
        }
        if lines {
            WireframeMode::PolygonLines
        } else if bary {
            WireframeMode::Barycentric
        } else {
            WireframeMode::Unavailable
        }
    }

    /// True when `adapter` can read storage buffers in vertex shaders.
    pub fn barycentric_supported(adapter: &wgpu::Adapter) -> bool {
        adapter
            .get_downlevel_capabilities()
            .flags
            .contains(wgpu::DownlevelFlags::VERTEX_STORAGE)
            && adapter.limits().max_storage_buffers_per_shader_stage >= 2
    }

    /// A short name for logs and the panel.
    pub fn name(self) -> &'static str {
        match self {
            WireframeMode::PolygonLines => "polygon lines",
            WireframeMode::Barycentric => "barycentric",
            WireframeMode::Unavailable => "unavailable",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn bits_are_distinct_and_names_round_trip() {
        let mut all = 0u32;
        for o in Overlay::ALL {
            assert_eq!(all & o.bit(), 0);
            all |= o.bit();
            let parsed = Overlay::from_str(o.name(), false).expect("name parses");
            assert_eq!(parsed, o);
            assert_eq!(o.to_possible_value().expect("listed").get_name(), o.name());
        }
        assert_eq!(all, 0x3ff);
        assert!(Overlay::from_str("bogus", false).is_err());
    }

    #[test]
    fn set_operations() {
        let mut s: OverlaySet = [Overlay::Lod, Overlay::Remesh].into_iter().collect();
        assert!(s.contains(Overlay::Lod) && s.contains(Overlay::Remesh));
        assert!(!s.contains(Overlay::Chunks));
        s.set(Overlay::Lod, false);
        s.set(Overlay::Chunks, true);
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            [Overlay::Chunks, Overlay::Remesh]
        );
        assert_eq!(s.bits(), Overlay::Chunks.bit() | Overlay::Remesh.bit());
        assert!(OverlaySet::NONE.is_empty());
    }
}
