//! The `residency` overlay (spec §12): which chunk columns of a streaming
//! world are resident and unchanged, resident with unsaved edits, loading,
//! or were recently spilled to the backing store and evicted.
//!
//! Resident chunks have meshes, so the terrain shader tints them (the state
//! rides in the upper bits of the instance's `chunk_coord.w`, the level of
//! detail in the low four). Loading and spilled columns have no geometry:
//! they are drawn as column outlines with the overlay lines.

use glam::{DVec3, Vec3};
use rustc_hash::FxHashMap;

use crate::terrain::storage::coords::{CHUNK_SIZE_STUDS, ChunkCoord, ColumnCoord};
use crate::terrain::streaming::residency::{ColumnState, Residency};

use super::super::terrain::gpu_data::level_state_bits;
use super::line_batch::LineBatch;

pub use super::super::terrain::gpu_data::STATE_SHIFT;

/// Frames a spilled column stays outlined after its spill (10 s at 60 Hz).
pub const SPILL_SHOWN_FRAMES: u64 = 600;

/// Farthest column outlined, studs from the camera (horizontally).
pub const OUTLINE_RANGE_STUDS: f64 = 16_384.0;

/// The state a chunk column is tinted or outlined with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResidencyTint {
    /// Resident, the same as its generator or stored copy.
    Clean,
    /// Resident with edits not yet stored (spilled before eviction).
    Edited,
    /// A worker is loading or generating it.
    Loading,
    /// Written to the backing store and evicted recently.
    Spilled,
}

impl ResidencyTint {
    /// Every state, in legend order.
    pub const ALL: [ResidencyTint; 4] = [
        ResidencyTint::Clean,
        ResidencyTint::Edited,
        ResidencyTint::Loading,
        ResidencyTint::Spilled,
    ];

    /// The tint of a column in `state` (`None`: absent), `recently_spilled`
    /// when it was spilled and evicted within [`SPILL_SHOWN_FRAMES`].
    /// `None` for an absent column nothing happened to.
    pub fn of(state: Option<ColumnState>, recently_spilled: bool) -> Option<ResidencyTint> {
        match state {
            Some(ColumnState::Resident { edited: false, .. }) => Some(ResidencyTint::Clean),
            Some(ColumnState::Resident { edited: true, .. }) => Some(ResidencyTint::Edited),
            Some(ColumnState::Loading { .. }) => Some(ResidencyTint::Loading),
            None if recently_spilled => Some(ResidencyTint::Spilled),
            None => None,
        }
    }

    /// The colour in sRGB. Keep `Clean` and `Edited` in sync with
    /// `RESIDENCY_TINTS` in `shaders/terrain.wgsl` (linear there).
    pub fn srgb(self) -> [u8; 3] {
        match self {
            ResidencyTint::Clean => [60, 150, 255],
            ResidencyTint::Edited => [255, 130, 20],
            ResidencyTint::Loading => [255, 235, 60],
            ResidencyTint::Spilled => [235, 50, 235],
        }
    }

    /// The code the terrain shader reads (0: no tint). Only resident
    /// states have meshes to tint.
    pub fn shader_code(self) -> i32 {
        match self {
            ResidencyTint::Clean => 1,
            ResidencyTint::Edited => 2,
            ResidencyTint::Loading | ResidencyTint::Spilled => 0,
        }
    }

    /// The legend's label.
    pub fn label(self) -> &'static str {
        match self {
            ResidencyTint::Clean => "resident",
            ResidencyTint::Edited => "resident, edited",
            ResidencyTint::Loading => "loading",
            ResidencyTint::Spilled => "spilled (evicted)",
        }
    }
}

/// `chunk_coord.w` of a terrain instance: the level of detail in the low
/// bits and the residency code above them (see
/// [`ResidencyView::state_code_of`]).
pub fn instance_w(level: u8, tint: Option<ResidencyTint>) -> i32 {
    level_state_bits(level, tint.map_or(0, ResidencyTint::shader_code))
}

/// What the overlay draws this frame: a tint per resident column and the
/// outlined (loading, spilled) ones.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResidencyView {
    tints: FxHashMap<ColumnCoord, ResidencyTint>,
    outlined: Vec<(ColumnCoord, ResidencyTint)>,
}

impl ResidencyView {
    /// The states of `residency` around `camera_world`: every resident
    /// column's tint, and outlines for loading columns and columns spilled
    /// within the last [`SPILL_SHOWN_FRAMES`] (within
    /// [`OUTLINE_RANGE_STUDS`]).
    pub fn of(residency: &Residency, camera_world: DVec3) -> ResidencyView {
        let near = |c: &ColumnCoord| c.distance_xz_studs(camera_world) <= OUTLINE_RANGE_STUDS;
        let since = residency.frame().saturating_sub(SPILL_SHOWN_FRAMES);
        let states = residency
            .column_states()
            .filter_map(|(c, s)| ResidencyTint::of(Some(s), false).map(|t| (c, t)))
            .chain(
                residency
                    .recent_spills(since)
                    .map(|c| (c, ResidencyTint::Spilled)),
            )
            .filter(|(c, t)| matches!(t, ResidencyTint::Clean | ResidencyTint::Edited) || near(c));
        ResidencyView::from_states(states)
    }

    /// A view of columns in the given states: resident ones are tinted,
    /// loading and spilled ones outlined.
    pub fn from_states(
        states: impl IntoIterator<Item = (ColumnCoord, ResidencyTint)>,
    ) -> ResidencyView {
        let mut view = ResidencyView::default();
        for (column, tint) in states {
            match tint {
                ResidencyTint::Clean | ResidencyTint::Edited => {
                    view.tints.insert(column, tint);
                }
                ResidencyTint::Loading | ResidencyTint::Spilled => {
                    view.outlined.push((column, tint));
                }
            }
        }
        view.outlined.sort_by_key(|(c, t)| (*c, *t as u8));
        view.outlined.dedup();
        view
    }

    /// The tint of the column holding `chunk`.
    pub fn tint_of(&self, chunk: ChunkCoord) -> Option<ResidencyTint> {
        self.tints.get(&ColumnCoord::of(chunk)).copied()
    }

    /// The code the terrain shader tints `chunk` by (0: none): what the
    /// terrain's instances carry in the bits above the level.
    pub fn state_code_of(&self, chunk: ChunkCoord) -> i32 {
        self.tint_of(chunk).map_or(0, ResidencyTint::shader_code)
    }

    /// The outlined columns and their states.
    pub fn outlined(&self) -> &[(ColumnCoord, ResidencyTint)] {
        &self.outlined
    }

    /// Appends the outlines, seen from `camera_world`, between heights
    /// `y_range_world` (studs; where the drawn ground lies), on top of the
    /// terrain so columns behind hills still show.
    pub fn push_outlines(
        &self,
        batch: &mut LineBatch,
        camera_world: DVec3,
        y_range_world: [f64; 2],
    ) {
        let size = f64::from(CHUNK_SIZE_STUDS);
        for &(column, tint) in &self.outlined {
            let [r, g, b] = tint.srgb();
            let min = DVec3::new(
                f64::from(column.x) * size,
                y_range_world[0],
                f64::from(column.z) * size,
            );
            let max = DVec3::new(min.x + size, y_range_world[1], min.z + size);
            // f64 subtraction first, one cast (spec §1); inset so
            // neighbouring outlines stay apart.
            let inset = Vec3::new(4.0, 0.0, 4.0);
            LineBatch::push_box(
                &mut batch.on_top,
                (min - camera_world).as_vec3() + inset,
                (max - camera_world).as_vec3() - inset,
                [r, g, b, 220],
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_state_gets_its_own_tint_and_only_resident_ones_reach_the_shader() {
        let resident = |edited| ColumnState::Resident {
            last_needed_frame: 0,
            bytes: 0,
            edited,
        };
        assert_eq!(
            ResidencyTint::of(Some(resident(false)), false),
            Some(ResidencyTint::Clean)
        );
        assert_eq!(
            ResidencyTint::of(Some(resident(true)), true),
            Some(ResidencyTint::Edited),
            "a resident column is not shown as spilled"
        );
        assert_eq!(
            ResidencyTint::of(Some(ColumnState::Loading { ticket: 3 }), false),
            Some(ResidencyTint::Loading)
        );
        assert_eq!(ResidencyTint::of(None, true), Some(ResidencyTint::Spilled));
        assert_eq!(ResidencyTint::of(None, false), None);
        let colours: std::collections::HashSet<[u8; 3]> =
            ResidencyTint::ALL.iter().map(|t| t.srgb()).collect();
        assert_eq!(colours.len(), 4, "four distinct colours");
        // Level in the low bits, state above: the LOD overlay still reads
        // its level, the residency overlay its state.
        assert_eq!(instance_w(3, None), 3);
        assert_eq!(instance_w(2, Some(ResidencyTint::Edited)), 2 | (2 << 4));
        assert_eq!(instance_w(1, Some(ResidencyTint::Loading)), 1);
        assert_eq!(instance_w(0, Some(ResidencyTint::Clean)) >> STATE_SHIFT, 1);
    }

    #[test]
    fn a_view_of_a_residency_tints_resident_columns_and_outlines_loading_ones() {
        use crate::terrain::generation::generate::GeneratorSettings;
        use crate::terrain::generation::generated_columns::GeneratedColumns;
        use crate::terrain::storage::grid::Grid;
        use crate::terrain::streaming::column_source::MemoryEditStore;
        let settings = GeneratorSettings {
            seed: 7,
            size_cells: 65_536,
        };
        let mut residency = Residency::new(
            std::sync::Arc::new(GeneratedColumns::new(&settings)),
            std::sync::Arc::new(MemoryEditStore::default()),
            1 << 30,
        );
        let mut grid = Grid::streaming();
        let here = ColumnCoord::new(1000, 1000);
        residency.load_now(&mut grid, [here]).expect("generated");
        let far = ColumnCoord::new(1003, 1000);
        residency.demand(&mut grid, [far]);
        let camera = DVec3::new(1000.5 * 128.0, 500.0, 1000.5 * 128.0);
        let view = ResidencyView::of(&residency, camera);
        assert_eq!(
            view.tint_of(ChunkCoord::new(1000, 0, 1000)),
            Some(ResidencyTint::Clean)
        );
        assert_eq!(view.tint_of(ChunkCoord::new(5, 0, 5)), None);
        if residency
            .state(far)
            .is_some_and(|s| matches!(s, ColumnState::Loading { .. }))
        {
            assert_eq!(view.outlined(), &[(far, ResidencyTint::Loading)]);
        }
        let mut batch = LineBatch::default();
        view.push_outlines(&mut batch, camera, [0.0, 300.0]);
        assert_eq!(batch.on_top.len(), view.outlined().len() * 24);
    }
}
