//! The window's start-up times, logged once each at `info` in ms since
//! [`PROCESS_START`]: how long an artist looks at no window, then at no
//! terrain, then at ground with holes. Each is a frame that was presented,
//! so the figures are what the artist saw, not when work finished.

use std::time::Instant;

/// When the process started: `main` sets it first thing (else the first
/// read does). The zero of the start-up times [`StartupLog`] logs.
pub static PROCESS_START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

/// What a presented frame showed, as far as start-up is concerned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PresentedView {
    /// A world named at start (or opened since) is still being read or
    /// cooked on its own thread: what is drawn is not that world yet.
    pub world_pending: bool,
    /// Terrain chunks drawn plus horizon nodes drawn.
    pub drawn_terrain: usize,
    /// For a streaming world, the drawn view's missing ground
    /// (`Streaming::last_missing_chunks`: chunks within the draw distance
    /// with no mesh and no horizon node over them); `None` for a world held
    /// whole in memory, whose meshing the count does not follow.
    pub missing_chunks: Option<usize>,
}

/// A start-up moment, in the order an artist meets them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartupMilestone {
    /// The first frame of the window was presented.
    FirstFrame,
    /// The first frame that draws the world's own terrain.
    TerrainShown,
    /// The first frame of a streaming world with no missing ground within
    /// the draw distance.
    ViewWhole,
}

impl StartupMilestone {
    /// The log line's words.
    pub fn describe(self) -> &'static str {
        match self {
            StartupMilestone::FirstFrame => "first frame presented",
            StartupMilestone::TerrainShown => "first frame with the world's terrain presented",
            StartupMilestone::ViewWhole => "first frame with no missing ground presented",
        }
    }
}

/// Which start-up moments were reached (each is logged once).
#[derive(Debug, Default)]
pub struct StartupLog {
    first_frame: bool,
    terrain_shown: bool,
    view_whole: bool,
}

impl StartupLog {
    /// A frame showing `view` was presented at `now`: logs the moments it
    /// reached first.
    pub fn frame_presented(&mut self, now: Instant, view: PresentedView) {
        let start = *PROCESS_START.get_or_init(Instant::now);
        let ms = now.duration_since(start).as_secs_f64() * 1e3;
        for milestone in self.reached(view) {
            log::info!("{} {ms:.0} ms after start", milestone.describe());
        }
    }

    /// The moments `view` reaches that no earlier frame did, in order.
    pub fn reached(&mut self, view: PresentedView) -> Vec<StartupMilestone> {
        let mut reached = Vec::new();
        if !self.first_frame {
            self.first_frame = true;
            reached.push(StartupMilestone::FirstFrame);
        }
        if view.world_pending || view.drawn_terrain == 0 {
            return reached;
        }
        if !self.terrain_shown {
            self.terrain_shown = true;
            reached.push(StartupMilestone::TerrainShown);
        }
        if !self.view_whole && view.missing_chunks == Some(0) {
            self.view_whole = true;
            reached.push(StartupMilestone::ViewWhole);
        }
        reached
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use StartupMilestone::*;

    fn view(world_pending: bool, drawn_terrain: usize, missing: Option<usize>) -> PresentedView {
        PresentedView {
            world_pending,
            drawn_terrain,
            missing_chunks: missing,
        }
    }

    #[test]
    fn a_reopened_streaming_world_reaches_each_moment_once_in_order() {
        let mut log = StartupLog::default();
        // The window opens on an empty world while the file is read.
        assert_eq!(log.reached(view(true, 0, Some(0))), vec![FirstFrame]);
        // The empty world's count of missing ground says nothing of the file's.
        assert_eq!(log.reached(view(true, 0, Some(0))), vec![]);
        // The world is in; nothing is meshed yet.
        assert_eq!(log.reached(view(false, 0, Some(40))), vec![]);
        assert_eq!(log.reached(view(false, 3, Some(37))), vec![TerrainShown]);
        assert_eq!(log.reached(view(false, 30, Some(5))), vec![]);
        assert_eq!(log.reached(view(false, 40, Some(0))), vec![ViewWhole]);
        // Flying on past the ground loaded so far logs nothing again.
        assert_eq!(log.reached(view(false, 40, Some(9))), vec![]);
        assert_eq!(log.reached(view(false, 45, Some(0))), vec![]);
    }

    #[test]
    fn a_world_meshed_in_one_frame_reaches_all_three_at_once() {
        let mut log = StartupLog::default();
        assert_eq!(
            log.reached(view(false, 12, Some(0))),
            vec![FirstFrame, TerrainShown, ViewWhole]
        );
    }

    #[test]
    fn a_world_held_in_memory_never_claims_a_whole_view() {
        let mut log = StartupLog::default();
        assert_eq!(log.reached(view(false, 0, None)), vec![FirstFrame]);
        assert_eq!(log.reached(view(false, 8, None)), vec![TerrainShown]);
        assert_eq!(log.reached(view(false, 800, None)), vec![]);
    }
}
