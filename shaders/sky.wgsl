// Fullscreen sky: zenith-to-horizon gradient, horizon haze that equals the
// terrain fog colour, and a sun disk with glow. Drawn first, without depth.

// `Globals` and its binding come from globals.wgsl, prepended when the
// module is built (src/render/shaders.rs).

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
