// Overlay lines: chunk bounds (depth-tested against the terrain) and seam
// audit markers (drawn on top). Vertices arrive camera-relative (studs,
// computed in f64 on the CPU, spec §1) with an sRGB colour and alpha; lines
// fade with distance so far chunk grids do not turn into a solid mesh.

// `Globals` and its binding come from globals.wgsl, prepended when the
// module is built (src/render/shaders.rs).

// Keep in sync with `LineVertex` in src/render/lines/gpu_data.rs.
struct VertexIn {
    // Camera-relative position, studs.
    @location(0) pos_rel: vec3<f32>,
    // sRGB colour and linear alpha (unorm8x4).
    @location(1) color: vec4<f32>,
}

struct VsOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec4<f32>,
    @location(1) dist: f32,
}

fn srgb_to_linear(c: vec3<f32>) -> vec3<f32> {
    let lo = c / 12.92;
    let hi = pow((c + 0.055) / 1.055, vec3<f32>(2.4));
    return select(hi, lo, c <= vec3<f32>(0.04045));
}

@vertex
fn vs_main(in: VertexIn) -> VsOut {
    var out: VsOut;
    out.clip = globals.clip_from_world * vec4<f32>(in.pos_rel, 1.0);
    out.color = in.color;
    out.dist = length(in.pos_rel);
    return out;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    // Fade with distance, relative to the fog distance (1 / fog.x).
    let fog_distance = 1.0 / max(globals.fog_density, 1e-6);
    let fade = mix(1.0, 0.15, smoothstep(0.05 * fog_distance, 0.5 * fog_distance, in.dist));
    var color = srgb_to_linear(in.color.rgb);
    if globals.encode_srgb == 1u {
        color = linear_to_srgb(color);
    }
    return vec4<f32>(color, in.color.a * fade);
}

// Markers drawn on top of everything: full strength at any distance.
@fragment
fn fs_on_top(in: VsOut) -> @location(0) vec4<f32> {
    var color = srgb_to_linear(in.color.rgb);
    if globals.encode_srgb == 1u {
        color = linear_to_srgb(color);
    }
    return vec4<f32>(color, in.color.a);
}
