//! Moving through the world: the fly camera's controls and walk mode (a
//! capsule walker with collision, and fly-camera collision).

pub mod camera_place;
pub mod fly_controls;
pub mod walk;
