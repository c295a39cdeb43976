//! Helpers shared by the rendering tests.

use strata::render::Gpu;

/// A headless GPU, or `None` (with a message) when no adapter at all can be
/// created. CI installs lavapipe, so there the rendering tests always run.
pub fn gpu_or_skip(test: &str) -> Option<Gpu> {
    match Gpu::new_headless() {
        Ok(gpu) => {
            eprintln!("{test}: adapter {}", gpu.adapter_summary());
            Some(gpu)
        }
        Err(e) => {
            eprintln!("SKIPPING {test}: no graphics adapter could be created: {e}");
            None
        }
    }
}
