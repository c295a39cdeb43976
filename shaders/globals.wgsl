// Per-frame uniforms shared by every Strata shader. Prepended to each shader
// module's source when it is built (src/render/shaders.rs), so this is the one
// WGSL definition of `Globals`.
//
// Keep in sync with `GlobalUniforms` in src/render/globals.rs.
struct Globals {
    // Camera-relative world (studs) -> clip, reversed-Z infinite perspective.
    clip_from_world: mat4x4<f32>,
    // Inverse of clip_from_world (for view rays).
    world_from_clip: mat4x4<f32>,
    // xyz: unit direction toward the sun (world); w: sun intensity.
    sun_dir: vec4<f32>,
    // rgb: linear sun colour; w: diffuse wrap (0..1).
    sun_color: vec4<f32>,
    // rgb: linear sky colour at the zenith; w: ambient strength from the sky.
    sky_zenith: vec4<f32>,
    // rgb: linear horizon colour = fog colour; w: unused.
    sky_horizon: vec4<f32>,
    // rgb: linear ambient from the ground (hemisphere bottom); w: unused.
    ground_ambient: vec4<f32>,
    // x: fog density (1/studs); y: max fog amount; z: height falloff (1/studs); w: camera height (studs).
    fog: vec4<f32>,
    // xyz: brush centre, camera-relative studs; w: brush radius (studs).
    brush: vec4<f32>,
    // rgb: linear brush colour; w: 1 when the brush is shown.
    brush_color: vec4<f32>,
    // x, y: viewport size in pixels; z, w: reciprocals.
    viewport: vec4<f32>,
    // x: 1 when the shader must sRGB-encode (non-sRGB target); yzw: unused.
    options: vec4<u32>,
    // x: debug overlay bits (`OverlaySet` in src/render/overlays.rs); yzw: unused.
    overlays: vec4<u32>,
    // x: animation time in seconds, wrapped to [0, WAVE_LOOP_SECS) (water waves
    // repeat exactly after that); yzw: unused.
    time: vec4<f32>,
}

@group(0) @binding(0) var<uniform> globals: Globals;
