//! WGSL sources of every pipeline, each with `shaders/globals.wgsl` (the one
//! definition of the per-frame `Globals` uniform) and `shaders/shading.wgsl`
//! (sky, fog, tonemap and sRGB functions shared by every module) prepended,
//! since WGSL has no includes.

/// `Globals` and its binding, shared by every module below.
pub const GLOBALS_WGSL: &str = include_str!("../../shaders/globals.wgsl");

/// Sky, fog, tonemap and sRGB functions, shared by every module below.
pub const SHADING_WGSL: &str = include_str!("../../shaders/shading.wgsl");

/// Sky pipeline.
pub const SKY_WGSL: &str = concat!(
    include_str!("../../shaders/globals.wgsl"),
    "\n",
    include_str!("../../shaders/shading.wgsl"),
    "\n",
    include_str!("../../shaders/sky.wgsl")
);

/// Terrain pipeline.
pub const TERRAIN_WGSL: &str = concat!(
    include_str!("../../shaders/globals.wgsl"),
    "\n",
    include_str!("../../shaders/shading.wgsl"),
    "\n",
    include_str!("../../shaders/terrain.wgsl")
);

/// Wireframe overlay pipeline.
pub const WIREFRAME_WGSL: &str = concat!(
    include_str!("../../shaders/globals.wgsl"),
    "\n",
    include_str!("../../shaders/shading.wgsl"),
    "\n",
    include_str!("../../shaders/wireframe.wgsl")
);

/// Overlay line pipeline.
pub const LINES_WGSL: &str = concat!(
    include_str!("../../shaders/globals.wgsl"),
    "\n",
    include_str!("../../shaders/shading.wgsl"),
    "\n",
    include_str!("../../shaders/lines.wgsl")
);

/// Water surface pipeline.
pub const WATER_WGSL: &str = concat!(
    include_str!("../../shaders/globals.wgsl"),
    "\n",
    include_str!("../../shaders/shading.wgsl"),
    "\n",
    include_str!("../../shaders/water.wgsl")
);

/// Every module: `(file name, full source)`.
pub const ALL: [(&str, &str); 5] = [
    ("sky.wgsl", SKY_WGSL),
    ("terrain.wgsl", TERRAIN_WGSL),
    ("wireframe.wgsl", WIREFRAME_WGSL),
    ("lines.wgsl", LINES_WGSL),
    ("water.wgsl", WATER_WGSL),
];
