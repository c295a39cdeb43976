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
//! Fades run on the chunk fades' frame clock, so `--no-morph`, the debug
//! panel's pause and its step act on both.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::pipeline::horizon::HorizonDraw;
use crate::terrain::storage::node::FIRST_NODE_LEVEL;

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
}

/// The entries whose place `draw` can take or give: the other kind of its
/// own node (a level-4 node and its chunks) and every ancestor node.
fn relatives(draw: HorizonDraw) -> impl Iterator<Item = HorizonDraw> {
    let (key, other) = match draw {
        HorizonDraw::Node(k) => (
            k,
            (k.level == FIRST_NODE_LEVEL).then_some(HorizonDraw::Chunks(k)),
        ),
        HorizonDraw::Chunks(k) => (k, Some(HorizonDraw::Node(k))),
    };
    other
        .into_iter()
        .chain(std::iter::successors(key.parent(), |k| k.parent()).map(HorizonDraw::Node))
}

impl HorizonFades {
    /// Takes this frame's draw list at fade clock `clock`: starts the fades
    /// of the entries that replace one another, ends the fades that are
    /// done. With `enabled` false nothing fades.
    pub fn update(&mut self, draws: &[HorizonDraw], clock: u32, enabled: bool) {
        self.clock = clock;
        self.fading
            .retain(|_, (_, start)| clock.wrapping_sub(*start) < FADE_FRAMES);
        if !enabled {
            self.fading.clear();
        }
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
            for &d in &self.entered {
                for r in relatives(d).filter(|r| self.left.contains(r)) {
                    self.fading.insert(d, (FadeSide::Incoming, clock));
                    self.fading.insert(r, (FadeSide::Outgoing, clock));
                }
            }
            for &d in &self.left {
                for r in relatives(d).filter(|r| self.entered.contains(r)) {
                    self.fading.insert(d, (FadeSide::Outgoing, clock));
                    self.fading.insert(r, (FadeSide::Incoming, clock));
                }
            }
        }
        std::mem::swap(&mut self.shown, &mut self.next);
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
    }
}

#[cfg(test)]
mod tests {
    use glam::IVec3;

    use super::*;
    use crate::terrain::storage::node::NodeKey;

    #[test]
    fn a_node_refined_into_its_children_fades_both_ways() {
        let parent = NodeKey::new(6, IVec3::new(1, 0, 1));
        let children = parent.children().expect("level 6 has children");
        let mut fades = HorizonFades::default();
        fades.update(&[HorizonDraw::Node(parent)], 0, true);
        assert_eq!(
            fades.fade_of(HorizonDraw::Node(parent)),
            None,
            "came into view: no fade"
        );
        let draws: Vec<_> = children.iter().map(|&k| HorizonDraw::Node(k)).collect();
        fades.update(&draws, 10, true);
        fades.set_clock(14);
        assert_eq!(
            fades.fade_of(HorizonDraw::Node(children[3])),
            Some((FadeSide::Incoming, 0.25))
        );
        let out: Vec<_> = fades.outgoing().collect();
        assert_eq!(out, vec![(HorizonDraw::Node(parent), 0.25)]);
        // Done after FADE_FRAMES frames.
        fades.update(&draws, 10 + FADE_FRAMES, true);
        assert_eq!(fades.fade_of(HorizonDraw::Node(children[0])), None);
        assert_eq!(fades.outgoing().count(), 0);
        assert!(!fades.is_active());
    }

    #[test]
    fn a_level_4_node_hands_over_to_its_chunks_and_back() {
        let key = NodeKey::new(4, IVec3::new(3, 0, 2));
        let mut fades = HorizonFades::default();
        fades.update(&[HorizonDraw::Node(key)], 0, true);
        fades.update(&[HorizonDraw::Chunks(key)], 1, true);
        assert_eq!(
            fades.fade_of(HorizonDraw::Chunks(key)),
            Some((FadeSide::Incoming, 0.0))
        );
        assert_eq!(fades.outgoing().count(), 1);
        // Taken back before the fade ends: the node fades in again.
        fades.update(&[HorizonDraw::Node(key)], 5, true);
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
        fades.update(&[HorizonDraw::Node(a)], 0, true);
        fades.update(&[HorizonDraw::Node(b)], 1, true);
        assert!(!fades.is_active(), "a neighbour is not a relative");
        let children = a.children().expect("level 5 has children");
        fades.update(&[HorizonDraw::Node(a)], 2, false);
        fades.update(&[HorizonDraw::Node(children[0])], 3, false);
        assert!(!fades.is_active(), "--no-morph");
    }
}
