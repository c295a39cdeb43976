// Shading shared by the sky, terrain and water modules (and sRGB output for
// the overlays): the sky and fog colours, the tonemap and the sRGB encoding.
// Prepended after globals.wgsl by src/render/shaders.rs, since WGSL has no
// includes; one definition keeps the sky, the fogged terrain and the water's
// sky reflection the same colour.

// The horizon colour in direction `dir`, brightened toward the sun: the fog
// colour of the terrain and water, and the sky's colour at the horizon.
fn fog_color(dir: vec3<f32>) -> vec3<f32> {
    let sun = max(dot(dir, globals.sun_dir), 0.0);
    let glow = pow(sun, 6.0) * 0.35;
    return globals.sky_horizon + globals.sun_color * glow * 0.3;
}

// The sky in direction `dir` without the sun's disk: horizon to zenith, a
// darker haze below the horizon (never visible through terrain), and the
// sun's halo. The sky adds the disk; the water's reflection adds a glint.
fn sky_gradient(dir: vec3<f32>) -> vec3<f32> {
    let up = dir.y;
    let above = pow(clamp(up, 0.0, 1.0), 0.45);
    var c = mix(fog_color(dir), globals.sky_zenith, above);
    let below = clamp(-up * 4.0, 0.0, 1.0);
    c = mix(c, globals.sky_horizon * 0.8, below);
    let sun = max(dot(dir, globals.sun_dir), 0.0);
    c += globals.sun_color * pow(sun, 64.0) * 0.4;
    return c;
}

// Filmic shoulder (Narkowicz's ACES fit) so sunlit snow does not clip.
fn tonemap(c: vec3<f32>) -> vec3<f32> {
    let x = c * 0.8;
    return clamp((x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14), vec3<f32>(0.0), vec3<f32>(1.0));
}

fn linear_to_srgb(c: vec3<f32>) -> vec3<f32> {
    let lo = c * 12.92;
    let hi = 1.055 * pow(max(c, vec3<f32>(0.0)), vec3<f32>(1.0 / 2.4)) - 0.055;
    return select(hi, lo, c <= vec3<f32>(0.0031308));
}
