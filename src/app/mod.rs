//! The application layer, above `render` and `editor`: the window's event
//! loop ([`window`]) and the headless run ([`headless`]), which both compose
//! the world, the meshing pipeline, the renderer and the editor panel. Lower
//! layers never import this one, so `render` stays GPU work only and
//! `editor` stays the tools and panels.

pub mod cli_values;
pub mod headless;
pub mod heightmap_options;
pub mod output_checks;
pub mod recording;
pub mod sky_holes;
pub mod startup_log;
pub mod streamed_world;
pub mod window;
pub mod window_frame;
pub mod window_gpu;
pub mod window_input;
pub mod window_stream;
pub mod world;
pub mod world_outputs;

pub use window::{EditorError, EditorOptions, run};
