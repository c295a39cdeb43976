//! The headless run (`strata --headless`): build one world, apply a script
//! once, render a screenshot through the same renderer as the window, and
//! write the statistics JSON. Lives above `render` and `editor` because it
//! composes both: the offscreen target ([`crate::render::frame::offscreen`]) draws
//! the 3D view and the editor's egui panel is painted over it.

pub mod error;
pub mod options;
pub mod renderer;
pub mod run;
pub mod stats;

pub use crate::render::frame::offscreen::MAX_IMAGE_SIDE;
pub use error::HeadlessError;
pub use options::ScreenshotOptions;
pub use renderer::{FrameReport, HeadlessRenderer, UNDRAWN_FRAMES_PER_FLUSH};
pub use run::{generator_of, render_screenshot, render_world, render_world_streamed};
pub use stats::{CollisionSummary, RenderStats, ScanSummary, StreamingSummary, write_stats_json};
