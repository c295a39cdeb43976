//! How often the window draws. While anything can move it draws every frame
//! it can. While a world is being read (and its plan perhaps cooked) on its
//! own thread, only the progress dialog changes, so it draws at
//! [`WAITING_FRAME_INTERVAL`]: where drawing takes the CPU (a software
//! renderer, two cores), the cook gets that time instead of redrawing the
//! same empty view.

use std::time::{Duration, Instant};

/// Time between frames while a world is being read or cooked: 10 frames a
/// second keeps the progress bar and the Cancel button responsive.
pub const WAITING_FRAME_INTERVAL: Duration = Duration::from_millis(100);

/// When the window should draw its next frame, given when it drew the last:
/// `None` for at once.
pub fn next_frame_at(last_frame: Instant, now: Instant, world_pending: bool) -> Option<Instant> {
    if !world_pending {
        return None;
    }
    let at = last_frame + WAITING_FRAME_INTERVAL;
    (now < at).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_draws_at_once_unless_a_world_is_pending() {
        let last = Instant::now();
        assert_eq!(next_frame_at(last, last, false), None);
        assert_eq!(
            next_frame_at(last, last + Duration::from_millis(1), false),
            None
        );
    }

    #[test]
    fn while_a_world_is_read_frames_come_every_interval() {
        let last = Instant::now();
        let due = last + WAITING_FRAME_INTERVAL;
        assert_eq!(next_frame_at(last, last, true), Some(due));
        assert_eq!(
            next_frame_at(last, last + Duration::from_millis(60), true),
            Some(due)
        );
        assert_eq!(next_frame_at(last, due, true), None);
        assert_eq!(
            next_frame_at(last, due + Duration::from_millis(5), true),
            None
        );
    }
}
