//! The sky renderer: one fullscreen triangle drawn first in the frame,
//! whose horizon colour is the terrain's fog colour. It owns only its
//! pipeline ([`SkyPipeline`]); it reads nothing but the frame's globals.

pub mod sky_pipeline;

pub use sky_pipeline::SkyPipeline;
