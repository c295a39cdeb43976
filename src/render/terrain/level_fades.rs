//! Cross-fades of chunk level changes (spec §13 "level changes do not pop:
//! ... or the two levels cross-fade").
//!
//! When a chunk's mesh is replaced by one of another level, the old GPU mesh
//! is kept for [`FADE_FRAMES`] frames and both are drawn with complementary
//! screen-door masks (`fs_main_fade` in `shaders/terrain.wgsl`): the new
//! mesh takes a growing share of each 4×4 pixel block, the old one the rest,
//! so each pixel shows exactly one of them and the change spreads over the
//! fade instead of landing in one frame. Fades count frames, not seconds, so
//! a frame-locked recording (`--record`) shows the same fade however long
//! each frame takes to draw. The debug panel can pause them and step one
//! frame at a time.

use rustc_hash::FxHashMap;

use crate::terrain::storage::coords::ChunkCoord;

use super::chunk_gpu::ChunkGpu;

/// Frames a level change takes to cross-fade (about a quarter second at 60 Hz).
pub const FADE_FRAMES: u32 = 16;
/// Bit of `ChunkInstance::chunk_coord.w` where the fade kind starts (2 bits:
/// 1 the new mesh, 2 the old one). Keep in sync with `FADE_SHIFT` in
/// `shaders/terrain.wgsl`.
pub const FADE_SHIFT: u32 = 8;
/// Bit where the fade progress (8 bits, 0..=255) starts. Keep in sync with
/// `FADE_T_SHIFT` in `shaders/terrain.wgsl`.
pub const FADE_T_SHIFT: u32 = 10;

/// Which side of a cross-fade an instance draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FadeSide {
    /// The new mesh: drawn where the mask is below the progress.
    Incoming,
    /// The old mesh: drawn where it is not.
    Outgoing,
}

/// The instance bits of a fade at `progress` (`0..=1`) for `side`.
pub fn fade_bits(side: FadeSide, progress: f32) -> i32 {
    let kind = match side {
        FadeSide::Incoming => 1,
        FadeSide::Outgoing => 2,
    };
    let t = (progress.clamp(0.0, 1.0) * 255.0).round() as i32;
    (kind << FADE_SHIFT) | (t << FADE_T_SHIFT)
}

/// The old meshes (`G`: their GPU buffers) being faded out and the fade clock.
pub struct LevelFades<G = ChunkGpu> {
    outgoing: FxHashMap<ChunkCoord, (G, u32)>,
    frame: u32,
    enabled: bool,
    paused: bool,
    step_pending: bool,
}

impl<G> Default for LevelFades<G> {
    fn default() -> Self {
        LevelFades {
            outgoing: FxHashMap::default(),
            frame: 0,
            enabled: true,
            paused: false,
            step_pending: false,
        }
    }
}

impl<G> LevelFades<G> {
    /// Turns fades on or off (`--no-morph`); off drops the fades under way.
    pub fn set_enabled(&mut self, enabled: bool) {
        self.enabled = enabled;
        if !enabled {
            self.outgoing.clear();
        }
    }

    /// True when level changes cross-fade.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Holds every fade where it is (debug panel), or lets them run again.
    pub fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
    }

    /// While paused, advances the fades by one frame at the next frame.
    pub fn step(&mut self) {
        self.step_pending = true;
    }

    /// Starts fading `old`, the mesh `coord` showed before a new level came.
    pub fn begin(&mut self, coord: ChunkCoord, old: G) {
        if self.enabled {
            self.outgoing.insert(coord, (old, self.frame));
        }
    }

    /// Stops the fade of `coord` (its chunk was removed).
    pub fn cancel(&mut self, coord: ChunkCoord) {
        self.outgoing.remove(&coord);
    }

    /// Advances the clock one frame (unless paused) and drops finished fades.
    pub fn next_frame(&mut self) {
        if !self.paused || std::mem::take(&mut self.step_pending) {
            self.frame = self.frame.wrapping_add(1);
        }
        let frame = self.frame;
        self.outgoing
            .retain(|_, (_, start)| frame.wrapping_sub(*start) < FADE_FRAMES);
    }

    /// The fade clock: frames advanced so far (it stands still while paused).
    pub fn clock(&self) -> u32 {
        self.frame
    }

    /// Progress `0..1` of `coord`'s fade, or `None` when it is not fading.
    pub fn progress(&self, coord: ChunkCoord) -> Option<f32> {
        self.outgoing
            .get(&coord)
            .map(|(_, start)| self.frame.wrapping_sub(*start) as f32 / FADE_FRAMES as f32)
    }

    /// The old meshes under way.
    pub fn outgoing(&self) -> impl Iterator<Item = (&ChunkCoord, &G)> {
        self.outgoing.iter().map(|(c, (g, _))| (c, g))
    }

    /// The old mesh of `coord`.
    pub fn outgoing_of(&self, coord: ChunkCoord) -> Option<&G> {
        self.outgoing.get(&coord).map(|(g, _)| g)
    }

    /// True when a fade is under way.
    pub fn is_active(&self) -> bool {
        !self.outgoing.is_empty()
    }

    /// Drops every fade.
    pub fn clear(&mut self) {
        self.outgoing.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fade_bits_hold_the_side_and_the_progress() {
        let w = fade_bits(FadeSide::Outgoing, 0.5);
        assert_eq!((w >> FADE_SHIFT) & 3, 2);
        assert_eq!((w >> FADE_T_SHIFT) & 255, 128);
        assert_eq!(fade_bits(FadeSide::Incoming, 1.0) >> FADE_T_SHIFT, 255);
        // The level and residency bits below stay free.
        assert_eq!(fade_bits(FadeSide::Incoming, 0.0) & 0xff, 0);
    }

    #[test]
    fn a_fade_lasts_16_frames_and_pauses_and_steps() {
        let mut fades: LevelFades<()> = LevelFades::default();
        let c = ChunkCoord::new(1, 0, 2);
        fades.begin(c, ());
        assert_eq!(fades.progress(c), Some(0.0));
        fades.next_frame();
        assert_eq!(fades.progress(c), Some(1.0 / 16.0));
        fades.set_paused(true);
        fades.next_frame();
        fades.next_frame();
        assert_eq!(fades.progress(c), Some(1.0 / 16.0), "paused");
        fades.step();
        fades.next_frame();
        fades.next_frame();
        assert_eq!(fades.progress(c), Some(2.0 / 16.0), "one step");
        fades.set_paused(false);
        for _ in 0..14 {
            fades.next_frame();
        }
        assert_eq!(fades.progress(c), None, "done after 16 frames");
        assert!(!fades.is_active());
        // Off: nothing fades.
        fades.set_enabled(false);
        fades.begin(c, ());
        assert_eq!(fades.progress(c), None);
    }
}
