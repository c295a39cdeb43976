//! TODO room doc

pub mod fly_controls;
pub mod walk;
