// Water surface (spec §9): the per-chunk water sheets and side faces, drawn
// after the opaque terrain with alpha blending, depth test on and depth write
// off.
//
// - Waves: a few summed Gerstner waves displace the sheet in the vertex
//   shader, scaled by the vertex's wave fade (0 at the shore, 1 in open
//   water). Their wave vectors lie on an integer lattice of 2π/128 per stud,
//   so every wave repeats exactly across a 128-stud chunk: the phase only
//   needs chunk-local positions (exact, spec §1) and neighbouring chunks
//   agree on their shared border vertices. Their angular frequencies are
//   whole cycles per WAVE_LOOP_SECS, so the CPU wraps time without a jump.
//   Waves move only this rendered sheet, never voxels or collision.
// - Normals: the analytic derivative of the same waves, plus a few small
//   ripples evaluated per fragment, perturb the mesh's up normal (side faces
//   keep their horizontal normal).
// - Colour: light scattered in the water body, absorbed along the view ray
//   through the water (its thickness comes from the opaque pass's depth), so
//   shallow water shows the bed and deep water turns blue-green; Fresnel
//   reflection of the sky (the sky shader's colour functions) and a sun
//   glint; fog like the terrain's. The alpha falls to 0 where the water
//   thins to nothing, so the shoreline has no hard edge.
//
// Three fragment entry points differ only in how they read the opaque depth:
// fs_main (single-sampled depth), fs_main_msaa (multisampled depth, averaged
// over the pixel's samples) and fs_main_flat (no depth available: a fixed
// thickness, used inside a caller's own pass or on adapters that cannot bind
// a read-only depth attachment as a texture).

// `Globals` and its binding come from globals.wgsl, prepended when the
// module is built (src/render/shaders.rs).
@group(1) @binding(0) var scene_depth: texture_depth_2d;
@group(1) @binding(1) var scene_depth_ms: texture_depth_multisampled_2d;

const PI: f32 = 3.14159265;
const CHUNK_SIZE_STUDS: f32 = 128.0;
// Keep in sync with WAVE_LOOP_SECS in src/render/water/gpu_data.rs.
const WAVE_LOOP_SECS: f32 = 60.0;
// Horizontal (Gerstner) displacement relative to the height amplitude.
const GERSTNER_Q: f32 = 0.6;

// Waves that displace the sheet: xy = wave vector in lattice units (2π/128
// per stud, integers, so each wave tiles the chunk), z = amplitude (studs),
// w = whole cycles per WAVE_LOOP_SECS. Wavelengths 40, 36, 26 and 18 studs,
// mostly downwind along +x; periods follow deep-water dispersion.
// Keep the amplitude sum in sync with WAVE_MAX_DISPLACEMENT_STUDS in
// src/render/water/gpu_data.rs.
const WAVES = array<vec4<f32>, 4>(
    vec4<f32>(3.0, 1.0, 0.45, 19.0),
    vec4<f32>(3.0, -2.0, 0.35, 20.0),
    vec4<f32>(4.0, 3.0, 0.28, 24.0),
    vec4<f32>(7.0, 2.0, 0.20, 29.0),
);
// Ripples that only bend the normal (per fragment), crossing at varied
// angles so the surface does not read as parallel stripes: wavelengths 10
// to 5 studs.
const RIPPLES = array<vec4<f32>, 4>(
    vec4<f32>(12.0, -5.0, 0.035, 38.0),
    vec4<f32>(-6.0, 13.0, 0.03, 40.0),
    vec4<f32>(21.0, -4.0, 0.02, 49.0),
    vec4<f32>(-15.0, -19.0, 0.018, 52.0),
);

// Linear colour of light scattered back out of the water body (before
// lighting): a deep blue-green.
const SCATTER_COLOR: vec3<f32> = vec3<f32>(0.012, 0.07, 0.068);
// Studs of water along the view ray that leave 1/e of the bed's light.
const EXTINCTION_STUDS: f32 = 9.0;
// Vertical water depth (studs) over which the shore fades in. It starts a
// little below the surface: on beaches flatter than one cell per cell the
// sheet ends (along cell edges) up to a cell above the bed, and the water
// must be nearly clear there for that end not to show.
const SHORE_FADE_START_STUDS: f32 = 0.4;
const SHORE_FADE_END_STUDS: f32 = 2.5;
// Reflectance at normal incidence (water, n ≈ 1.33).
const FRESNEL_F0: f32 = 0.02;
// Water thickness assumed where no depth is available (fs_main_flat).
const FLAT_THICKNESS_STUDS: f32 = 6.0;

// Keep in sync with `WaterVertex` in src/render/water/gpu_data.rs and
// `ChunkInstance` in src/render/chunk_draw/gpu_data.rs.
struct VertexIn {
    // Chunk-local position in studs.
    @location(0) pos_in_chunk: vec3<f32>,
    // xyz: unit normal (+Y on the sheet, horizontal on side faces); w: wave
    // fade in [0, 1] (snorm8x4).
    @location(1) normal_fade: vec4<f32>,
    // x: 0 on the sheet's open outline, 1 elsewhere (unorm8x4).
    @location(2) outline: vec4<f32>,
    // Instance: chunk origin minus camera position (studs); w unused.
    @location(4) chunk_origin_rel: vec4<f32>,
    // Instance: integer chunk coordinate; w unused.
    @location(5) chunk_coord: vec4<i32>,
}

struct VsOut {
    @builtin(position) clip: vec4<f32>,
    // Undisplaced chunk-local position (the waves' parameter).
    @location(0) pos_in_chunk: vec3<f32>,
    // Displaced camera-relative position.
    @location(1) pos_rel: vec3<f32>,
    @location(2) normal: vec3<f32>,
    @location(3) fade: f32,
    // 0 on the sheet's open outline, rising to 1 one cell inside.
    @location(4) outline: f32,
}

// Phase of lattice wave `w` at chunk-local `xz` and wrapped time `t`.
fn wave_phase(w: vec4<f32>, xz: vec2<f32>, t: f32) -> f32 {
    let k = w.xy * (2.0 * PI / CHUNK_SIZE_STUDS);
    return dot(k, xz) - w.w * (2.0 * PI / WAVE_LOOP_SECS) * t;
}

// Gerstner displacement of the point at chunk-local `xz`, scaled by `fade`.
fn wave_offset(xz: vec2<f32>, t: f32, fade: f32) -> vec3<f32> {
    var o = vec3<f32>(0.0);
    for (var i = 0; i < 4; i++) {
        let w = WAVES[i];
        let d = normalize(w.xy);
        let th = wave_phase(w, xz, t);
        let a = w.z * fade;
        o += vec3<f32>(d.x * GERSTNER_Q * a * cos(th), a * sin(th), d.y * GERSTNER_Q * a * cos(th));
    }
    return o;
}

// Share of a wave of wave number `k` (radians per stud) the normal keeps
// where one pixel spans `footprint_studs` of the sheet: all of it while a
// wavelength spans 8 pixels or more, none at 3 or fewer. A wave finer than
// the pixels would only alias into a lattice of sun glints (a blue and
// white checker on distant lakes).
fn resolved(k: f32, footprint_studs: f32) -> f32 {
    let pixels_per_wave = (2.0 * PI / k) / max(footprint_studs, 1e-4);
    return smoothstep(3.0, 8.0, pixels_per_wave);
}

// Unnormalized normal of the displaced sheet at chunk-local `xz`: the
// analytic Gerstner normal, plus ripples (weight `ripple`), each wave kept
// as far as the pixels (`footprint_studs` of sheet each) resolve it.
fn wave_normal(xz: vec2<f32>, t: f32, fade: f32, ripple: f32, footprint_studs: f32) -> vec3<f32> {
    var n = vec3<f32>(0.0, 1.0, 0.0);
    for (var i = 0; i < 4; i++) {
        let w = WAVES[i];
        let d = normalize(w.xy);
        let k = length(w.xy) * (2.0 * PI / CHUNK_SIZE_STUDS);
        let th = wave_phase(w, xz, t);
        let ka = k * w.z * fade * resolved(k, footprint_studs);
        n += vec3<f32>(-d.x * ka * cos(th), -GERSTNER_Q * ka * sin(th), -d.y * ka * cos(th));
    }
    for (var i = 0; i < 4; i++) {
        let w = RIPPLES[i];
        let d = normalize(w.xy);
        let k = length(w.xy) * (2.0 * PI / CHUNK_SIZE_STUDS);
        let ka = k * w.z * ripple * resolved(k, footprint_studs);
        let c = cos(wave_phase(w, xz, t));
        n += vec3<f32>(-d.x * ka * c, 0.0, -d.y * ka * c);
    }
    return n;
}

@vertex
fn vs_main(in: VertexIn) -> VsOut {
    let fade = clamp(in.normal_fade.w, 0.0, 1.0);
    var p = in.pos_in_chunk;
    // Only the top sheet moves (side faces have fade 0 anyway).
    if in.normal_fade.y > 0.5 {
        p += wave_offset(p.xz, globals.time_secs, fade);
    }
    let pos_rel = in.chunk_origin_rel.xyz + p;
    var out: VsOut;
    out.clip = globals.clip_from_world * vec4<f32>(pos_rel, 1.0);
    out.pos_in_chunk = in.pos_in_chunk;
    out.pos_rel = pos_rel;
    out.normal = in.normal_fade.xyz;
    out.fade = fade;
    out.outline = in.outline.x;
    return out;
}

// Studs of water along this fragment's view ray, from the opaque depth
// `scene_z` behind it (reversed-Z infinite projection: depth = near / view
// distance along the ray, so the distance to the bed is the water's distance
// scaled by the depth ratio). Sky behind (depth 0) is very thick water.
fn thickness_from_depth(frag_z: f32, scene_z: f32, dist: f32) -> f32 {
    if scene_z <= 1e-9 {
        return 1e6;
    }
    return max(dist * (frag_z / scene_z - 1.0), 0.0);
}

// The shaded water fragment: colour (to blend with src-alpha) and alpha, for
// `thickness` studs of water along the view ray.
fn shade(in: VsOut, thickness: f32) -> vec4<f32> {
    let dist = length(in.pos_rel);
    let view_dir = in.pos_rel / max(dist, 1e-4);
    let t = globals.time_secs;
    // Studs of sheet one pixel spans (longer where the view grazes it).
    let footprint = max(length(dpdx(in.pos_rel)), length(dpdy(in.pos_rel)));

    // Wave normal on the sheet; side faces keep their own. Ripples fade out
    // with distance, where they would only shimmer.
    var n = normalize(in.normal);
    if in.normal.y > 0.5 {
        let ripple = (0.35 + 0.65 * in.fade) * (1.0 - smoothstep(250.0, 900.0, dist));
        n = normalize(wave_normal(in.pos_in_chunk.xz, t, in.fade, ripple, footprint));
    }
    // Seen from below (camera under the surface), light the face we see.
    if dot(n, view_dir) > 0.0 {
        n = -n;
    }

    // Transmission of the bed's light through the water along the ray.
    let transmit = exp(-thickness / EXTINCTION_STUDS);
    // Vertical depth of the bed below the surface, for the soft shoreline.
    let depth_below = thickness * abs(view_dir.y);
    // Where a flat beach lets the sheet end above the bed (along cell edges),
    // the outline fade hides the cut.
    let shore = smoothstep(SHORE_FADE_START_STUDS, SHORE_FADE_END_STUDS, depth_below) * smoothstep(0.0, 1.0, in.outline);

    // Fresnel (Schlick) reflection of the sky, and the sun's glint.
    let cos_v = clamp(dot(n, -view_dir), 0.0, 1.0);
    let fresnel = FRESNEL_F0 + (1.0 - FRESNEL_F0) * pow(1.0 - cos_v, 5.0);
    var r = reflect(view_dir, n);
    r.y = abs(r.y);
    let sun_dir = globals.sun_dir;
    let sun = globals.sun_color * globals.sun_intensity;
    let rs = max(dot(r, sun_dir), 0.0);
    let glint = pow(rs, 1200.0) * 90.0 + pow(rs, 160.0) * 3.0;
    let reflected = sky_gradient(r) + sun * glint;

    // Light scattered by the water body: sun from above plus sky ambient.
    let ambient = globals.sky_zenith * globals.sky_ambient;
    let body = SCATTER_COLOR * (sun * max(sun_dir.y, 0.0) * 0.7 + ambient * 0.8);

    // Over the bed: bed · transmit · (1 − F) + body · (1 − transmit) · (1 − F)
    // + reflected · F. With src-alpha blending over the bed this is a colour
    // (the weighted mean of body and reflection) and an alpha.
    let w_body = (1.0 - transmit) * (1.0 - fresnel);
    let alpha = w_body + fresnel;
    var color = (body * w_body + reflected * fresnel) / max(alpha, 1e-4);

    // Distance fog toward the horizon colour, as on the terrain.
    let height = globals.camera_height_studs + in.pos_rel.y;
    let height_factor = exp(-max(height, 0.0) * globals.fog_height_falloff);
    let fd = dist * globals.fog_density;
    let fog_amount = (1.0 - exp(-fd * sqrt(fd))) * mix(0.6, 1.0, height_factor) * globals.fog_max;
    color = mix(color, fog_color(view_dir), clamp(fog_amount, 0.0, 1.0));

    color = tonemap(color);
    if globals.encode_srgb == 1u {
        color = linear_to_srgb(color);
    }
    return vec4<f32>(color, clamp(alpha * shore, 0.0, 1.0));
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    let scene_z = textureLoad(scene_depth, vec2<i32>(in.clip.xy), 0);
    return shade(in, thickness_from_depth(in.clip.z, scene_z, length(in.pos_rel)));
}

@fragment
fn fs_main_msaa(in: VsOut) -> @location(0) vec4<f32> {
    // Average over the samples behind the water (the others are terrain in
    // front of it, and the depth test drops the water there anyway).
    let px = vec2<i32>(in.clip.xy);
    let dist = length(in.pos_rel);
    var sum = 0.0;
    var count = 0.0;
    let samples = i32(textureNumSamples(scene_depth_ms));
    for (var i = 0; i < samples; i++) {
        let z = textureLoad(scene_depth_ms, px, i);
        if z <= in.clip.z {
            sum += min(thickness_from_depth(in.clip.z, z, dist), 1e4);
            count += 1.0;
        }
    }
    return shade(in, select(0.0, sum / max(count, 1.0), count > 0.0));
}

@fragment
fn fs_main_flat(in: VsOut) -> @location(0) vec4<f32> {
    return shade(in, FLAT_THICKNESS_STUDS);
}
