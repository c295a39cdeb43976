//! Cross-fades of the horizon's level changes (spec §13 "level changes do
//! not pop"): a node replaced by its children, children replaced by their
//! ancestor, and a level-4 node handed to its chunks or taken back from them.
//!
//! Each frame's draw list is compared with the last one. An entry that
//! enters the list while an ancestor or descendant of it (or, for a level-4
//! node, its chunks) leaves it fades in, and the entries it replaces stay
//! drawn for [`FADE_FRAMES`] frames fading out, with the complementary
//! screen-door mask of [`super::level_fades`]: each pixel shows exactly one
//! of the two levels, and the change spreads over the fade. An entry that
//! enters or leaves with no relative on the other side (it came into view,
//! it left the draw distance) appears or goes at once: fading it would show
//! the sky through it.
//!
//! The masks are complementary only where both sides cover the same ground,
//! so a pair fades only when the finer side covers the whole of the coarser
//! entry's node column (a camera that flies or turns fast replaces a coarse
//! node by children only some of which are in view; a dithered half of that
//! node would show the sky through the rest). Chunks handed back to a node
//! fade out only while their meshes are kept: chunks evicted during the fade
//! end it at once and their node is drawn whole.
//!
//! Fades run on the chunk fades' frame clock, so `--no-morph`, the debug
//! panel's pause and its step act on both.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::pipeline::horizon::HorizonDraw;
use crate::terrain::storage::coords::ChunkCoord;
use crate::terrain::storage::node::{FIRST_NODE_LEVEL, MAX_NODE_LEVEL, NodeKey};

use super::level_fades::{FADE_FRAMES, FadeSide};

/// The horizon's fades under way.
#[derive(Default)]
pub struct HorizonFades {
    /// The last draw list, as a set.
    shown: FxHashSet<HorizonDraw>,
    /// Entries fading, with their side and the clock frame they started.
    fading: FxHashMap<HorizonDraw, (FadeSide, u32)>,
    entered: FxHashSet<HorizonDraw>,
    left: FxHashSet<HorizonDraw>,
    next: FxHashSet<HorizonDraw>,
    clock: u32,
    /// Level-4 nodes some of whose chunks were evicted since the last update.
    evicted: FxHashSet<NodeKey>,
    /// Node columns `(level, x, z)` of the entries that entered and left.
    entered_columns: FxHashSet<(u8, i32, i32)>,
    left_columns: FxHashSet<(u8, i32, i32)>,
}

/// The node column `(level, x, z)` of a draw: the unit selection draws,
/// refines or replaces as one.
fn column_of(draw: HorizonDraw) -> (u8, i32, i32) {
    let k = match draw {
        HorizonDraw::Node(k) | HorizonDraw::Chunks(k) => k,
    };
    (k.level, k.index.x, k.index.z)
}

/// True when node column `(level, x, z)` meets the footprint `[0, w) × [0,
/// d)` cells.
fn column_in_footprint(level: u8, x: i32, z: i32, extent_cells: [i64; 2]) -> bool {
    let side = NodeKey::new(level, glam::IVec3::ZERO).side_cells();
    let (x0, z0) = (i64::from(x) * side, i64::from(z) * side);
    x0 < extent_cells[0] && z0 < extent_cells[1] && x0 + side > 0 && z0 + side > 0
}

/// Node column `column` and its ancestor columns up to the coarsest level.
fn ancestors_and_self(column: (u8, i32, i32)) -> impl Iterator<Item = (u8, i32, i32)> {
    std::iter::successors(Some(column), |&(l, x, z)| {
        (l < MAX_NODE_LEVEL).then(|| (l + 1, x.div_euclid(2), z.div_euclid(2)))
    })
}

/// True when `columns` cover node column `(level, x, z)`: it, an ancestor,
/// or (recursively) each of its child columns in the footprint is there.
fn covers(
    columns: &FxHashSet<(u8, i32, i32)>,
    (level, x, z): (u8, i32, i32),
    extent_cells: [i64; 2],
) -> bool {
    ancestors_and_self((level, x, z)).any(|a| columns.contains(&a))
        || covered_below(columns, (level, x, z), extent_cells)
}

/// [`covers`] by descendants only.
fn covered_below(
    columns: &FxHashSet<(u8, i32, i32)>,
    (level, x, z): (u8, i32, i32),
    extent_cells: [i64; 2],
) -> bool {
    if level <= FIRST_NODE_LEVEL {
        return false;
    }
    [(0, 0), (1, 0), (0, 1), (1, 1)].iter().all(|&(dx, dz)| {
        let child = (level - 1, 2 * x + dx, 2 * z + dz);
        !column_in_footprint(child.0, child.1, child.2, extent_cells)
            || columns.contains(&child)
            || covered_below(columns, child, extent_cells)
    })
}

impl HorizonFades {
    /// Takes this frame's draw list at fade clock `clock` for a world whose
    /// footprint is `[0, w) × [0, d)` cells (`extent_cells`): starts the
    /// fades of the entries that replace one another where both sides cover
    /// the same ground, ends the fades that are done or whose chunks were
    /// evicted. With `enabled` false nothing fades.
    pub fn update(
        &mut self,
        draws: &[HorizonDraw],
        clock: u32,
        enabled: bool,
        extent_cells: [i64; 2],
    ) {
        self.clock = clock;
        self.fading
            .retain(|_, (_, start)| clock.wrapping_sub(*start) < FADE_FRAMES);
        if !enabled {
            self.fading.clear();
        }
        self.end_fades_of_evicted_chunks();
        self.next.clear();
        self.next.extend(draws.iter().copied());
        self.entered.clear();
        self.entered.extend(
            self.next
                .iter()
                .filter(|d| !self.shown.contains(d))
                .copied(),
        );
        self.left.clear();
        self.left.extend(
            self.shown
                .iter()
                .filter(|d| !self.next.contains(d))
                .copied(),
        );
        // An entry drawn again is no longer fading out.
        for d in &self.entered {
            self.fading.remove(d);
        }
        if enabled {
            self.start_fades(extent_cells);
        }
        self.evicted.clear();
        std::mem::swap(&mut self.shown, &mut self.next);
    }

    /// Starts the fades of the entries that entered and left where the two
    /// sides cover the same ground. The unit is the node column, as in
    /// selection: the surface passes between the nodes stacked in a column
    /// at different heights at different levels, so a node pairs with no
    /// single node of the other side. An entry fades when the other side
    /// holds its column or an ancestor column that its own side covers
    /// (it is the finer side), or covers its column with descendants (it is
    /// the coarser side). Chunks evicted as they leave cover nothing.
    fn start_fades(&mut self, extent_cells: [i64; 2]) {
        let evicted = &self.evicted;
        let kept = |d: &&HorizonDraw| match **d {
            HorizonDraw::Chunks(k) => !evicted.contains(&k),
            HorizonDraw::Node(_) => true,
        };
        self.entered_columns.clear();
        self.entered_columns
            .extend(self.entered.iter().map(|&d| column_of(d)));
        self.left_columns.clear();
        self.left_columns
            .extend(self.left.iter().filter(kept).map(|&d| column_of(d)));
        let fades = |column: (u8, i32, i32),
                     own: &FxHashSet<(u8, i32, i32)>,
                     other: &FxHashSet<(u8, i32, i32)>| {
            let finer = ancestors_and_self(column)
                .any(|a| other.contains(&a) && covers(own, a, extent_cells));
            finer || covered_below(other, column, extent_cells)
        };
        for &d in &self.entered {
            if fades(column_of(d), &self.entered_columns, &self.left_columns) {
                self.fading.insert(d, (FadeSide::Incoming, self.clock));
            }
        }
        for &d in self.left.iter().filter(kept) {
            if fades(column_of(d), &self.left_columns, &self.entered_columns) {
                self.fading.insert(d, (FadeSide::Outgoing, self.clock));
            }
        }
    }

    /// Chunks fading out whose meshes were evicted stop fading, and so do
    /// the entries fading in over them (their column's node or an
    /// ancestor), which are then drawn whole.
    fn end_fades_of_evicted_chunks(&mut self) {
        if self.evicted.is_empty() {
            return;
        }
        let mut ended: Vec<(u8, i32, i32)> = Vec::new();
        for &k in &self.evicted {
            let chunks = HorizonDraw::Chunks(k);
            if matches!(self.fading.get(&chunks), Some((FadeSide::Outgoing, _))) {
                self.fading.remove(&chunks);
                ended.extend(ancestors_and_self(column_of(chunks)));
            }
        }
        if !ended.is_empty() {
            self.fading.retain(|d, (side, _)| {
                *side == FadeSide::Outgoing || !ended.contains(&column_of(*d))
            });
        }
    }

    /// Notes chunks whose meshes were evicted: a fade that shows them
    /// fading out ends at the next [`HorizonFades::update`].
    pub fn note_evicted_chunks(&mut self, coords: &[ChunkCoord]) {
        self.evicted.extend(
            coords
                .iter()
                .map(|&c| NodeKey::containing_chunk(FIRST_NODE_LEVEL, c)),
        );
    }

    /// Moves the clock on (the chunk fades' clock, after its step).
    pub fn set_clock(&mut self, clock: u32) {
        self.clock = clock;
    }

    /// The fade of `draw`, an entry of the current draw list or one fading
    /// out: its side and progress `0..=1`.
    pub fn fade_of(&self, draw: HorizonDraw) -> Option<(FadeSide, f32)> {
        self.fading.get(&draw).and_then(|&(side, start)| {
            let t = self.clock.wrapping_sub(start) as f32 / FADE_FRAMES as f32;
            (t < 1.0).then_some((side, t))
        })
    }

    /// Entries no longer in the draw list that are still fading out.
    pub fn outgoing(&self) -> impl Iterator<Item = (HorizonDraw, f32)> + '_ {
        self.fading.keys().filter_map(|&d| match self.fade_of(d) {
            Some((FadeSide::Outgoing, t)) if !self.shown.contains(&d) => Some((d, t)),
            _ => None,
        })
    }

    /// True when the last [`HorizonFades::update`] saw entries enter or leave
    /// the draw list.
    pub fn draw_list_changed(&self) -> bool {
        !self.entered.is_empty() || !self.left.is_empty()
    }

    /// True when a fade is under way.
    pub fn is_active(&self) -> bool {
        !self.fading.is_empty()
    }

    /// Ends every fade at once: entries fading out are dropped, those fading
    /// in are drawn as they are (a final screenshot).
    pub fn finish(&mut self) {
        self.fading.clear();
    }

    /// Drops every fade and the last draw list (a different world).
    pub fn clear(&mut self) {
        self.shown.clear();
        self.fading.clear();
        self.evicted.clear();
    }
}

#[cfg(test)]
mod tests {
    use glam::IVec3;

    use super::*;

    /// A footprint far larger than the tests' nodes.
    const WORLD: [i64; 2] = [1 << 20, 1 << 20];

    #[test]
    fn a_node_refined_into_its_children_fades_both_ways() {
        let parent = NodeKey::new(6, IVec3::new(1, 0, 1));
        let children = parent.children().expect("level 6 has children");
        let mut fades = HorizonFades::default();
        fades.update(&[HorizonDraw::Node(parent)], 0, true, WORLD);
        assert_eq!(
            fades.fade_of(HorizonDraw::Node(parent)),
            None,
            "came into view: no fade"
        );
        let draws: Vec<_> = children.iter().map(|&k| HorizonDraw::Node(k)).collect();
        fades.update(&draws, 10, true, WORLD);
        fades.set_clock(14);
        assert_eq!(
            fades.fade_of(HorizonDraw::Node(children[3])),
            Some((FadeSide::Incoming, 0.25))
        );
        let out: Vec<_> = fades.outgoing().collect();
        assert_eq!(out, vec![(HorizonDraw::Node(parent), 0.25)]);
        // Done after FADE_FRAMES frames.
        fades.update(&draws, 10 + FADE_FRAMES, true, WORLD);
        assert_eq!(fades.fade_of(HorizonDraw::Node(children[0])), None);
        assert_eq!(fades.outgoing().count(), 0);
        assert!(!fades.is_active());
    }

    #[test]
    fn a_level_4_node_hands_over_to_its_chunks_and_back() {
        let key = NodeKey::new(4, IVec3::new(3, 0, 2));
        let mut fades = HorizonFades::default();
        fades.update(&[HorizonDraw::Node(key)], 0, true, WORLD);
        fades.update(&[HorizonDraw::Chunks(key)], 1, true, WORLD);
        assert_eq!(
            fades.fade_of(HorizonDraw::Chunks(key)),
            Some((FadeSide::Incoming, 0.0))
        );
        assert_eq!(fades.outgoing().count(), 1);
        // Taken back before the fade ends: the node fades in again.
        fades.update(&[HorizonDraw::Node(key)], 5, true, WORLD);
        assert_eq!(
            fades.fade_of(HorizonDraw::Node(key)),
            Some((FadeSide::Incoming, 0.0))
        );
        assert_eq!(
            fades.outgoing().collect::<Vec<_>>(),
            vec![(HorizonDraw::Chunks(key), 0.0)]
        );
    }

    #[test]
    fn unrelated_entries_and_disabled_fades_switch_at_once() {
        let a = NodeKey::new(5, IVec3::new(0, 0, 0));
        let b = NodeKey::new(5, IVec3::new(1, 0, 0));
        let mut fades = HorizonFades::default();
        fades.update(&[HorizonDraw::Node(a)], 0, true, WORLD);
        fades.update(&[HorizonDraw::Node(b)], 1, true, WORLD);
        assert!(!fades.is_active(), "a neighbour is not a relative");
        let children = a.children().expect("level 5 has children");
        fades.update(&[HorizonDraw::Node(a)], 2, false, WORLD);
        fades.update(&[HorizonDraw::Node(children[0])], 3, false, WORLD);
        assert!(!fades.is_active(), "--no-morph");
    }

    #[test]
    fn a_node_replaced_by_children_only_partly_in_view_switches_at_once() {
        // The input that showed the sky through the ground in a fast
        // flight: a level-7 node replaced by two of its four child columns
        // (the others out of view), so half its area had no complement.
        let parent = NodeKey::new(7, IVec3::new(40, 0, 40));
        let children = parent.children().expect("level 7 has children");
        let mut fades = HorizonFades::default();
        fades.update(&[HorizonDraw::Node(parent)], 0, true, WORLD);
        let two: Vec<_> = children[..2]
            .iter()
            .map(|&k| HorizonDraw::Node(k))
            .collect();
        fades.update(&two, 1, true, WORLD);
        assert!(!fades.is_active(), "no half-covered cross-fade");
        assert_eq!(fades.outgoing().count(), 0);
        // Back to the parent from two children: the parent's area was not
        // all drawn before, so it appears at once too.
        fades.update(&[HorizonDraw::Node(parent)], 2, true, WORLD);
        assert!(!fades.is_active());
        // Children outside the world's footprint need no cover: a node at
        // the world's edge with its in-world children all drawn fades.
        let edge = NodeKey::new(5, IVec3::new(0, 0, 0));
        let side = edge.side_cells();
        let half = [side / 2, side / 2];
        let inside = edge
            .children()
            .expect("level 5 has children")
            .into_iter()
            .filter(|k| k.index.x == 0 && k.index.z == 0)
            .map(HorizonDraw::Node)
            .collect::<Vec<_>>();
        let mut fades = HorizonFades::default();
        fades.update(&[HorizonDraw::Node(edge)], 0, true, half);
        fades.update(&inside, 1, true, half);
        assert_eq!(
            fades.outgoing().collect::<Vec<_>>(),
            vec![(HorizonDraw::Node(edge), 0.0)]
        );
    }

    #[test]
    fn chunks_evicted_while_handed_back_end_the_fade() {
        let key = NodeKey::new(4, IVec3::new(3, 0, 2));
        let chunk = key.chunks().next().expect("a node has chunks");
        let mut fades = HorizonFades::default();
        fades.update(&[HorizonDraw::Chunks(key)], 0, true, WORLD);
        fades.update(&[HorizonDraw::Node(key)], 1, true, WORLD);
        assert_eq!(
            fades.fade_of(HorizonDraw::Node(key)),
            Some((FadeSide::Incoming, 0.0))
        );
        // The chunks' meshes go mid-fade: the node is drawn whole at once.
        fades.note_evicted_chunks(&[chunk]);
        fades.update(&[HorizonDraw::Node(key)], 3, true, WORLD);
        assert_eq!(fades.fade_of(HorizonDraw::Node(key)), None);
        assert_eq!(fades.outgoing().count(), 0);
        // Chunks evicted the frame they leave do not fade out at all.
        let mut fades = HorizonFades::default();
        fades.update(&[HorizonDraw::Chunks(key)], 0, true, WORLD);
        fades.note_evicted_chunks(&[chunk]);
        fades.update(&[HorizonDraw::Node(key)], 1, true, WORLD);
        assert!(!fades.is_active());
    }

    #[test]
    fn a_column_fades_as_one_whatever_heights_its_nodes_have() {
        // The parent column's surface lies in its nodes at y = 0 and 1, the
        // children's all in y = 0 (coarse and fine surfaces pass between
        // stacked nodes at different heights): both parent nodes fade out,
        // or the children fading in would show the sky where the y = 1 node
        // had the surface.
        let low = NodeKey::new(6, IVec3::new(10, 0, 10));
        let high = NodeKey::new(6, IVec3::new(10, 1, 10));
        let children: Vec<_> = low
            .children()
            .expect("level 6 has children")
            .into_iter()
            .filter(|k| k.index.y == 0)
            .map(HorizonDraw::Node)
            .collect();
        assert_eq!(children.len(), 4);
        let mut fades = HorizonFades::default();
        fades.update(
            &[HorizonDraw::Node(low), HorizonDraw::Node(high)],
            0,
            true,
            WORLD,
        );
        fades.update(&children, 1, true, WORLD);
        let mut out: Vec<_> = fades.outgoing().map(|(d, _)| d).collect();
        out.sort_by_key(|d| match d {
            HorizonDraw::Node(k) | HorizonDraw::Chunks(k) => k.index.y,
        });
        assert_eq!(out, vec![HorizonDraw::Node(low), HorizonDraw::Node(high)]);
        for c in &children {
            assert_eq!(fades.fade_of(*c), Some((FadeSide::Incoming, 0.0)));
        }
    }
}
