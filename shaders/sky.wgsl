// Fullscreen sky: zenith-to-horizon gradient, horizon haze that equals the
// terrain fog colour, and a sun disk with glow. Drawn first, without depth.

// Keep in sync with `GlobalUniforms` in src/render/globals.rs and with terrain.wgsl,
// wireframe.wgsl and lines.wgsl.
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
}

@group(0) @binding(0) var<uniform> globals: Globals;

struct VsOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) ndc: vec2<f32>,
}

@vertex
fn vs_main(@builtin(vertex_index) index: u32) -> VsOut {
    // One triangle covering the screen: (-1,-1), (3,-1), (-1,3).
    let uv = vec2<f32>(f32((index << 1u) & 2u), f32(index & 2u));
    let ndc = uv * 2.0 - 1.0;
    var out: VsOut;
    out.clip = vec4<f32>(ndc, 0.0, 1.0);
    out.ndc = ndc;
    return out;
}

// Keep in sync with `fog_color` in terrain.wgsl.
fn fog_color(dir: vec3<f32>) -> vec3<f32> {
    let sun = max(dot(dir, globals.sun_dir.xyz), 0.0);
    let glow = pow(sun, 6.0) * 0.35;
    return globals.sky_horizon.rgb + globals.sun_color.rgb * glow * 0.3;
}

fn sky_color(dir: vec3<f32>) -> vec3<f32> {
    let up = dir.y;
    let above = pow(clamp(up, 0.0, 1.0), 0.45);
    var c = mix(fog_color(dir), globals.sky_zenith.rgb, above);
    // Below the horizon: a slightly darker haze (never visible through terrain).
    let below = clamp(-up * 4.0, 0.0, 1.0);
    c = mix(c, globals.sky_horizon.rgb * 0.8, below);
    let sun = max(dot(dir, globals.sun_dir.xyz), 0.0);
    let disk = smoothstep(0.9994, 0.9997, sun);
    let halo = pow(sun, 64.0) * 0.4;
    c += globals.sun_color.rgb * (disk * 4.0 + halo);
    return c;
}

// Filmic shoulder (Narkowicz's ACES fit) so sunlit snow does not clip.
// Keep in sync between terrain.wgsl and sky.wgsl.
fn tonemap(c: vec3<f32>) -> vec3<f32> {
    let x = c * 0.8;
    return clamp((x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14), vec3<f32>(0.0), vec3<f32>(1.0));
}

fn linear_to_srgb(c: vec3<f32>) -> vec3<f32> {
    let lo = c * 12.92;
    let hi = 1.055 * pow(max(c, vec3<f32>(0.0)), vec3<f32>(1.0 / 2.4)) - 0.055;
    return select(hi, lo, c <= vec3<f32>(0.0031308));
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    // A point on the near plane (reversed-Z: depth 1) along this pixel's ray;
    // the camera sits at the camera-relative origin.
    let p = globals.world_from_clip * vec4<f32>(in.ndc, 1.0, 1.0);
    let dir = normalize(p.xyz / p.w);
    var c = tonemap(sky_color(dir));
    if globals.options.x == 1u {
        c = linear_to_srgb(c);
    }
    return vec4<f32>(c, 1.0);
}
