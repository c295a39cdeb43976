// Per-frame uniforms shared by every Strata shader. Prepended to each shader
// module's source when it is built (src/render/shaders.rs), so this is the one
// WGSL definition of `Globals`.
//
// Keep in sync with `GlobalUniforms` in src/render/frame/globals.rs (checked by
// tests/gpu_layout.rs). Colours are linear RGB. A vec3 is 16-byte aligned, so
// each is followed by one scalar: a named one, or an explicit `_pad*` that
// keeps the next member where the Rust struct has it.
struct Globals {
    // Camera-relative world (studs) -> clip, reversed-Z infinite perspective.
    clip_from_world: mat4x4<f32>,
    // Inverse of clip_from_world (for view rays).
    world_from_clip: mat4x4<f32>,
    // Unit direction toward the sun (world).
    sun_dir: vec3<f32>,
    // Sun intensity (multiplies sun_color).
    sun_intensity: f32,
    // Sun colour.
    sun_color: vec3<f32>,
    // Diffuse wrap (0..1).
    diffuse_wrap: f32,
    // Sky colour at the zenith.
    sky_zenith: vec3<f32>,
    // Ambient strength from the sky (multiplies sky_zenith).
    sky_ambient: f32,
    // Horizon colour = fog colour.
    sky_horizon: vec3<f32>,
    // Distance (studs) where the ground is lost in the fog entirely (0: none).
    fog_full_studs: f32,
    // Ambient from the ground (hemisphere bottom).
    ground_ambient: vec3<f32>,
    // 1 when the terrain is drawn in the low-poly style, else 0.
    low_poly: f32,
    // Fog density (1/studs).
    fog_density: f32,
    // Maximum fog amount.
    fog_max: f32,
    // Fog height falloff (1/studs).
    fog_height_falloff: f32,
    // Camera height (world studs).
    camera_height_studs: f32,
    // Brush centre, camera-relative studs.
    brush_centre_rel: vec3<f32>,
    // Brush radius (studs).
    brush_radius_studs: f32,
    // Brush colour.
    brush_color: vec3<f32>,
    // 0 when no brush is shown, else its style code (1 + shape + 3 * falloff).
    brush_style: f32,
    // Viewport size in pixels.
    viewport_size_px: vec2<f32>,
    // Reciprocals of viewport_size_px.
    viewport_inv_size_px: vec2<f32>,
    // 1 when the shader must sRGB-encode (non-sRGB target).
    encode_srgb: u32,
    // Debug overlay bits (`OverlaySet` in src/render/lines/overlays.rs).
    overlay_bits: u32,
    // Animation time in seconds, wrapped to [0, WAVE_LOOP_SECS) (water waves
    // repeat exactly after that).
    time_secs: f32,
    // How far (horizontal studs) the `holes` overlay expects ground under
    // every downward ray; 0 without a ground extent.
    holes_reach_studs: f32,
    // The world's footprint relative to the camera, studs: min x, min z,
    // max x, max z (the `holes` overlay's ground).
    ground_footprint_rel: vec4<f32>,
}

@group(0) @binding(0) var<uniform> globals: Globals;
