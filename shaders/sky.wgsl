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

// The sky with the sun's disk (shading.wgsl has the rest).
fn sky_color(dir: vec3<f32>) -> vec3<f32> {
    let sun = max(dot(dir, globals.sun_dir), 0.0);
    let disk = smoothstep(0.9994, 0.9997, sun);
    return sky_gradient(dir) + globals.sun_color * (disk * 4.0);
}

// `Overlay::Holes` in src/render/lines/overlays.rs.
const OVERLAY_HOLES: u32 = 512u;

// True when the ray `dir` from a camera over the world's footprint must
// meet the ground before the sky: it reaches the world's floor (y = 0,
// solid everywhere in the footprint unless an edit cleared it) inside the
// footprint and within the draw distance. The sky is drawn first, so such a
// pixel that keeps the sky shows a hole.
fn ray_meets_ground(dir: vec3<f32>) -> bool {
    let height = globals.camera_height_studs;
    if globals.holes_reach_studs <= 0.0 || height <= 0.0 || dir.y >= 0.0 {
        return false;
    }
    let floor_xz = dir.xz * (height / -dir.y);
    let fp = globals.ground_footprint_rel;
    let inside = floor_xz.x > fp.x && floor_xz.x < fp.z && floor_xz.y > fp.y && floor_xz.y < fp.w;
    // Judged from over the footprint only: from outside, a ray enters
    // through the world's side wall, which is not the ground under the view.
    let over = fp.x < 0.0 && fp.z > 0.0 && fp.y < 0.0 && fp.w > 0.0;
    return over && inside && length(floor_xz) < globals.holes_reach_studs;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    // A point on the near plane (reversed-Z: depth 1) along this pixel's ray;
    // the camera sits at the camera-relative origin.
    let p = globals.world_from_clip * vec4<f32>(in.ndc, 1.0, 1.0);
    let dir = normalize(p.xyz / p.w);
    if (globals.overlay_bits & OVERLAY_HOLES) != 0u && ray_meets_ground(dir) {
        // Exact magenta in either encoding (0 and 1 are their own sRGB values).
        return vec4<f32>(1.0, 0.0, 1.0, 1.0);
    }
    var c = tonemap(sky_color(dir));
    if globals.encode_srgb == 1u {
        c = linear_to_srgb(c);
    }
    return vec4<f32>(c, 1.0);
}
