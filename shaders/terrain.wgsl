// Terrain surface: blends up to 4 materials per triangle by interpolated
// weights (sharpened by the materials' height maps where they have them),
// textures each by triplanar projection from a texture_2d_array (one layer
// per material id) with its normal and roughness maps from a second array,
// lights with a wrapped Lambert sun, hemispherical sky ambient and, for
// materials with a roughness map, a sun highlight, fades to the sky's horizon colour with distance, and draws the
// brush cursor as a ring where the brush sphere meets the surface.
//
// Positions arrive chunk-local (studs); each drawn chunk is one instance whose
// attribute carries its origin relative to the camera (computed in f64 on the
// CPU, spec §1) and its integer chunk coordinate.
//
// Debug overlays (src/render/lines/overlays.rs) tint the shaded colour after
// tone mapping, so their colours read the same at any distance: by level of
// detail, by chunk, on skirts, and as a flash after a chunk is republished.

// `Globals` and its binding come from globals.wgsl, prepended when the
// module is built (src/render/shaders.rs).
@group(1) @binding(0) var material_albedo: texture_2d_array<f32>;
@group(1) @binding(1) var material_sampler: sampler;
// Per material id, from the world's material library. Keep in sync with
// `MaterialStyleGpu` and STYLE_SLOTS in src/render/terrain/material_textures.rs.
struct MaterialStyle {
    // Linear tint in xyz, texture tiles per DETAIL_PERIOD_STUDS in w.
    tint_scale: vec4<f32>,
    // The low-poly style's flat colour, sRGB 0..255 in xyz; in w the array
    // layers packed as albedo + 256 * top: the material's own layer and the
    // one upward-facing surfaces sample (its top variant's, or its own).
    palette_srgb: vec4<f32>,
    // x: height-blend sharpness (0 to 1); y, z, w: 1 when the material has a
    // normal, roughness, height map in material_surface (else it is skipped).
    surface: vec4<f32>,
}
// One per material id a cell can hold (256); ids the library does not hold
// read a magenta "missing material" style.
@group(1) @binding(2) var<uniform> material_styles: array<MaterialStyle, 256>;
// Per layer of material_albedo: tangent-space normal xy (OpenGL, green up)
// in rg, roughness in b, height in a; linear.
@group(1) @binding(3) var material_surface: texture_2d_array<f32>;

// How material textures pick their mip level (set per pipeline from
// `MipSelection` in src/render/terrain/terrain_pipeline.rs). False: each
// sample passes its plane's screen-space gradients, so an anisotropic
// sampler filters along them. True, for samplers without anisotropy (as on
// software adapters): each plane's isotropic level, log2 of the longer
// gradient in texels, is computed once per fragment and every material's
// samples read it with a per-material offset, which draws the same level
// while each sample skips the gradient work.
override EXPLICIT_MIP_LEVEL: bool = false;

// Height blending: a material's weight is multiplied by
// exp2(HEIGHT_BLEND_SCALE * sharpness * (height - 0.5)), so where the cell
// weights are close the higher texel wins (stones through grass) and a
// sharpness of 0 leaves the weights exactly as they were.
const HEIGHT_BLEND_SCALE: f32 = 24.0;
const PI: f32 = 3.14159265;

// Studs per texture tile; divides the 128-stud chunk so texturing is continuous
// across chunks. Keep in sync with TEXTURE_PERIOD_STUDS in material_textures.rs.
const DETAIL_PERIOD_STUDS: f32 = 32.0;
// Lattice spacing of the large-scale brightness variation (studs); divides 128.
const MACRO_PERIOD_STUDS: f32 = 64.0;
const CHUNK_SIZE_STUDS: f32 = 128.0;

// Overlay bits of `globals.overlay_bits`. Keep in sync with `Overlay::bit` in
// src/render/lines/overlays.rs (bit i = Overlay::ALL[i]).
const OVERLAY_LOD: u32 = 1u;
const OVERLAY_SKIRTS: u32 = 8u;
const OVERLAY_SEAMS: u32 = 32u;
const OVERLAY_REMESH: u32 = 128u;
const OVERLAY_RESIDENCY: u32 = 256u;
// Residency state in `chunk_coord.w >> RESIDENCY_SHIFT` (1 resident, 2 edited),
// the level in the low bits. Keep in sync with STATE_SHIFT in
// src/render/terrain/gpu_data.rs and the tints in
// src/render/lines/residency_overlay.rs.
const RESIDENCY_SHIFT: u32 = 4u;
const RESIDENCY_TINTS = array<vec3<f32>, 2>(
    vec3<f32>(0.045, 0.305, 1.0),
    vec3<f32>(1.0, 0.223, 0.007),
);
// Linear versions of LEVEL_TINTS_SRGB (levels 0-3), NODE_LEVEL_TINTS_SRGB
// (levels 4-8, 8 also for coarser) and SKIRT_TINT_SRGB in src/render/lines/overlays.rs.
const LEVEL_TINTS = array<vec3<f32>, 9>(
    vec3<f32>(0.051, 0.262, 1.000),
    vec3<f32>(0.061, 0.680, 0.102),
    vec3<f32>(1.000, 0.680, 0.021),
    vec3<f32>(0.871, 0.061, 0.045),
    vec3<f32>(0.402, 0.102, 1.000),
    vec3<f32>(0.045, 0.716, 0.791),
    vec3<f32>(0.831, 0.831, 0.831),
    vec3<f32>(1.000, 0.223, 0.515),
    vec3<f32>(0.402, 0.188, 0.061),
);
const SKIRT_TINT: vec3<f32> = vec3<f32>(1.0, 0.021, 0.716);
// Keep in sync with REMESH_FLASH_SECS in src/render/lines/overlays.rs.
const REMESH_FLASH_SECS: f32 = 0.5;

// Keep in sync with `TerrainVertex` in src/render/terrain/gpu_data.rs and
// `ChunkInstance` in src/render/chunk_draw/gpu_data.rs.
struct VertexIn {
    // Chunk-local position in studs.
    @location(0) pos_in_chunk: vec3<f32>,
    // Unit normal (snorm8x4); w: 1 on render-only skirt vertices, else 0.
    @location(1) normal: vec4<f32>,
    // The quad's material set (constant over the quad).
    @location(2) material_ids: vec4<u32>,
    // Per-vertex weights for material_ids (unorm8x4, sum 1).
    @location(3) material_weights: vec4<f32>,
    // Instance: chunk origin minus camera position (studs); w: seconds since
    // the chunk's mesh was last promoted (republished).
    @location(4) chunk_origin_rel: vec4<f32>,
    // Instance: integer chunk coordinate; w: the mesh's level of detail.
    @location(5) chunk_coord: vec4<i32>,
}

struct VsOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) pos_in_chunk: vec3<f32>,
    @location(1) pos_rel: vec3<f32>,
    @location(2) normal: vec3<f32>,
    @location(3) @interpolate(flat, either) material_ids: vec4<u32>,
    @location(4) weights: vec4<f32>,
    @location(5) @interpolate(flat, either) chunk_coord: vec4<i32>,
    // Seconds since the chunk was republished.
    @location(6) @interpolate(flat, either) age: f32,
    // > 0 inside skirt triangles (every skirt triangle has a skirt vertex).
    @location(7) skirt: f32,
}

@vertex
fn vs_main(in: VertexIn) -> VsOut {
    let pos_rel = in.chunk_origin_rel.xyz + in.pos_in_chunk;
    var out: VsOut;
    out.clip = globals.clip_from_world * vec4<f32>(pos_rel, 1.0);
    out.pos_in_chunk = in.pos_in_chunk;
    out.pos_rel = pos_rel;
    out.normal = in.normal.xyz;
    out.material_ids = in.material_ids;
    out.weights = in.material_weights;
    out.chunk_coord = in.chunk_coord;
    out.age = in.chunk_origin_rel.w;
    out.skirt = in.normal.w;
    return out;
}

fn hash2(p: vec2<i32>) -> f32 {
    var h = bitcast<u32>(p.x) * 0x27d4eb2du ^ (bitcast<u32>(p.y) * 0x165667b1u);
    h = (h ^ (h >> 15u)) * 0x85ebca6bu;
    h = (h ^ (h >> 13u)) * 0xc2b2ae35u;
    h = h ^ (h >> 16u);
    return f32(h >> 8u) * (1.0 / 16777216.0);
}

// Value noise on a global integer lattice in the XZ plane, `cells_per_chunk`
// lattice cells per chunk: continuous across chunks because the lattice index
// is built from the integer chunk coordinate.
fn macro_noise(chunk_xz: vec2<i32>, local_xz: vec2<f32>, cells_per_chunk: i32) -> f32 {
    let period = CHUNK_SIZE_STUDS / f32(cells_per_chunk);
    let q = local_xz / period;
    let qf = floor(q);
    let f = q - qf;
    let base = chunk_xz * cells_per_chunk + vec2<i32>(qf);
    let s = f * f * (3.0 - 2.0 * f);
    let a = hash2(base);
    let b = hash2(base + vec2<i32>(1, 0));
    let c = hash2(base + vec2<i32>(0, 1));
    let d = hash2(base + vec2<i32>(1, 1));
    return mix(mix(a, b, s.x), mix(c, d, s.x), s.y);
}

struct Triplanar {
    uv_x: vec2<f32>,
    uv_y: vec2<f32>,
    uv_z: vec2<f32>,
    // Screen-space gradients of each plane's uv (explicit gradients or
    // levels work in non-uniform control flow, so zero-weight materials
    // can be skipped).
    ddx_x: vec2<f32>,
    ddy_x: vec2<f32>,
    ddx_y: vec2<f32>,
    ddy_y: vec2<f32>,
    ddx_z: vec2<f32>,
    ddy_z: vec2<f32>,
    w: vec3<f32>,
    // With EXPLICIT_MIP_LEVEL: each plane's mip level in the albedo array at
    // a tile scale of 1, and the surface array's level minus the albedo's
    // (log2 of the ratio of their sides).
    level: vec3<f32>,
    surface_level_offset: f32,
    // The surface faces up: the top projection samples a material's top
    // variant, when it has one.
    up: bool,
}

// One material's look at a fragment.
struct MaterialSample {
    albedo: vec3<f32>,
    // World-space normal: the surface's own without a normal map.
    normal: vec3<f32>,
    // 1 (fully rough) without a roughness map.
    roughness: f32,
    // 0.5 without a height map.
    height: f32,
}

// Triplanar normal mapping with the UDN blend (Ben Golus, "Normal Mapping
// for a Triplanar Shader", 2017): each plane's tangent-space x and y are
// added to the surface normal along that plane's texture axes (u right,
// image up). The X plane's uv is (z, -y): u = +z, up = +y; Y's is (x, z):
// u = +x, up = -z; Z's is (x, -y): u = +x, up = +y.
fn udn_normal(n: vec3<f32>, w: vec3<f32>, sx: vec4<f32>, sy: vec4<f32>, sz: vec4<f32>) -> vec3<f32> {
    let tx = sx.xy * 2.0 - 1.0;
    let ty = sy.xy * 2.0 - 1.0;
    let tz = sz.xy * 2.0 - 1.0;
    let offset = w.x * vec3<f32>(0.0, tx.y, tx.x) + w.y * vec3<f32>(ty.x, 0.0, -ty.y) + w.z * vec3<f32>(tz.x, tz.y, 0.0);
    return normalize(n + offset);
}

// One texel of `material_albedo`, filtered at `level` with
// EXPLICIT_MIP_LEVEL, else from the gradients.
fn albedo_texel(uv: vec2<f32>, layer: i32, ddx: vec2<f32>, ddy: vec2<f32>, level: f32) -> vec4<f32> {
    if EXPLICIT_MIP_LEVEL {
        return textureSampleLevel(material_albedo, material_sampler, uv, layer, level);
    }
    return textureSampleGrad(material_albedo, material_sampler, uv, layer, ddx, ddy);
}

// One texel of `material_surface`, as `albedo_texel`.
fn surface_texel(uv: vec2<f32>, layer: i32, ddx: vec2<f32>, ddy: vec2<f32>, level: f32) -> vec4<f32> {
    if EXPLICIT_MIP_LEVEL {
        return textureSampleLevel(material_surface, material_sampler, uv, layer, level);
    }
    return textureSampleGrad(material_surface, material_sampler, uv, layer, ddx, ddy);
}

// Each plane's isotropic mip level in the albedo array at a tile scale of 1:
// log2 of the longer of the uv's two screen-space gradients, in texels (the
// level a sampler without anisotropy derives from those gradients: Vulkan
// spec, "Texel Filtering", scale factor and level-of-detail operations).
fn plane_levels(t: Triplanar) -> vec3<f32> {
    let rho2 = vec3<f32>(
        max(dot(t.ddx_x, t.ddx_x), dot(t.ddy_x, t.ddy_x)),
        max(dot(t.ddx_y, t.ddx_y), dot(t.ddy_y, t.ddy_y)),
        max(dot(t.ddx_z, t.ddx_z), dot(t.ddy_z, t.ddy_z)),
    );
    let side = f32(textureDimensions(material_albedo).x);
    return 0.5 * log2(max(rho2, vec3<f32>(1e-30))) + vec3<f32>(log2(side));
}

fn sample_material(t: Triplanar, n: vec3<f32>, material: u32) -> MaterialSample {
    var c = vec3<f32>(0.0);
    let slot = material_styles[min(material, 255u)];
    let layers = u32(slot.palette_srgb.w);
    let l = i32(layers & 255u);
    let style = slot.tint_scale;
    let top_layer = i32(layers >> 8u);
    let ly = select(l, top_layer, t.up);
    // The material's own tile size: scaling uv and its gradients together
    // keeps the mip selection right.
    let s = style.w;
    // Scaling uv by s moves the level up by log2(s).
    let ls = log2(s);
    if t.w.x > 0.0 {
        c += albedo_texel(t.uv_x * s, l, t.ddx_x * s, t.ddy_x * s, t.level.x + ls).rgb * t.w.x;
    }
    if t.w.y > 0.0 {
        c += albedo_texel(t.uv_y * s, ly, t.ddx_y * s, t.ddy_y * s, t.level.y + ls).rgb * t.w.y;
    }
    if t.w.z > 0.0 {
        c += albedo_texel(t.uv_z * s, l, t.ddx_z * s, t.ddy_z * s, t.level.z + ls).rgb * t.w.z;
    }
    var out: MaterialSample;
    out.albedo = c * style.xyz;
    out.normal = n;
    out.roughness = 1.0;
    out.height = 0.5;
    let maps = slot.surface;
    if maps.y + maps.z + maps.w > 0.0 {
        // The same projections from the surface array (a top variant's layer
        // there is neutral: flat, rough, middle height).
        let neutral = vec4<f32>(0.5, 0.5, 1.0, 0.5);
        var sx = neutral;
        var sy = neutral;
        var sz = neutral;
        if t.w.x > 0.0 {
            sx = surface_texel(t.uv_x * s, l, t.ddx_x * s, t.ddy_x * s, t.level.x + ls + t.surface_level_offset);
        }
        if t.w.y > 0.0 {
            sy = surface_texel(t.uv_y * s, ly, t.ddx_y * s, t.ddy_y * s, t.level.y + ls + t.surface_level_offset);
        }
        if t.w.z > 0.0 {
            sz = surface_texel(t.uv_z * s, l, t.ddx_z * s, t.ddy_z * s, t.level.z + ls + t.surface_level_offset);
        }
        if maps.y > 0.5 {
            out.normal = udn_normal(n, t.w, sx, sy, sz);
        }
        out.roughness = sx.z * t.w.x + sy.z * t.w.y + sz.z * t.w.z;
        out.height = sx.w * t.w.x + sy.w * t.w.y + sz.w * t.w.z;
    }
    return out;
}

// Blends `tint`, shaded by the luminance of `color`, over `color`.
fn overlay_tint(color: vec3<f32>, tint: vec3<f32>, amount: f32) -> vec3<f32> {
    let lum = dot(color, vec3<f32>(0.2126, 0.7152, 0.0722));
    let shaded = tint * clamp(0.3 + 1.4 * lum, 0.0, 1.0);
    return mix(color, shaded, amount);
}

fn hsv_to_rgb(h: f32, s: f32, v: f32) -> vec3<f32> {
    let k = fract(vec3<f32>(h) + vec3<f32>(0.0, 2.0 / 3.0, 1.0 / 3.0)) * 6.0;
    let rgb = clamp(abs(k - 3.0) - 1.0, vec3<f32>(0.0), vec3<f32>(1.0));
    return v * mix(vec3<f32>(1.0), rgb, s);
}

// A hue in [0, 1) per chunk coordinate, spread so neighbours rarely match.
fn chunk_hue(c: vec3<i32>) -> f32 {
    var h = bitcast<u32>(c.x) * 0x8da6b343u ^ bitcast<u32>(c.y) * 0xd8163841u ^ bitcast<u32>(c.z) * 0xcb1ab31fu;
    h = (h ^ (h >> 16u)) * 0x7feb352du;
    h = (h ^ (h >> 15u)) * 0x846ca68bu;
    h = h ^ (h >> 16u);
    return f32(h >> 8u) * (1.0 / 16777216.0);
}

// Walls take the top colour times this, like the atlas's skirt cells. Keep
// in sync with SKIRT_SHADE in src/mesh/palette_atlas.rs.
const LOW_POLY_SKIRT_SHADE: f32 = 0.7;

fn srgb_to_linear(c: vec3<f32>) -> vec3<f32> {
    let lo = c / 12.92;
    let hi = pow((c + 0.055) / 1.055, vec3<f32>(2.4));
    return select(hi, lo, c <= vec3<f32>(0.04045));
}

// Linear albedo of a low-poly face: its material's palette colour, darkened
// on walls (faces whose normal is horizontal).
fn low_poly_albedo(material: u32, n: vec3<f32>) -> vec3<f32> {
    // The material's flat colour (its built-in colour, or its imported
    // texture's average times its tint), as the material library gives it.
    var srgb = material_styles[min(material, 255u)].palette_srgb.xyz / 255.0;
    if abs(n.y) < 0.5 {
        srgb *= LOW_POLY_SKIRT_SHADE;
    }
    return srgb_to_linear(srgb);
}

// The blended look of a quad's up-to-4 materials at a fragment.
struct Blended {
    albedo: vec3<f32>,
    normal: vec3<f32>,
    roughness: f32,
    highlight: f32,
}

// Blends the materials `ids` by `weights` (normalized; those under 0.4 %
// are skipped). Where a material has a height map and a blend sharpness,
// its weight is scaled by its height (HEIGHT_BLEND_SCALE) and the weights
// renormalized; without any, the weights are used exactly as given. The
// normal and roughness are blended only where some material has those maps.
fn blend_materials(t: Triplanar, n: vec3<f32>, ids: vec4<u32>, weights: vec4<f32>) -> Blended {
    var out: Blended;
    out.albedo = vec3<f32>(0.0);
    out.normal = n;
    out.roughness = 1.0;
    out.highlight = 0.0;
    var mw = weights / max(weights.x + weights.y + weights.z + weights.w, 1e-5);
    mw = select(vec4<f32>(0.0), mw, mw > vec4<f32>(0.004));
    var samples: array<MaterialSample, 4>;
    var sharp = vec4<f32>(0.0);
    var has_normal = vec4<f32>(0.0);
    var has_rough = vec4<f32>(0.0);
    for (var i = 0u; i < 4u; i++) {
        if mw[i] > 0.0 {
            samples[i] = sample_material(t, n, ids[i]);
            let maps = material_styles[min(ids[i], 255u)].surface;
            sharp[i] = maps.x * maps.w;
            has_normal[i] = maps.y;
            has_rough[i] = maps.z;
        }
    }
    if any(sharp > vec4<f32>(0.0)) {
        let h = vec4<f32>(samples[0].height, samples[1].height, samples[2].height, samples[3].height);
        let scaled = mw * exp2(HEIGHT_BLEND_SCALE * sharp * (h - 0.5));
        mw = scaled / max(scaled.x + scaled.y + scaled.z + scaled.w, 1e-20) * (mw.x + mw.y + mw.z + mw.w);
    }
    for (var i = 0u; i < 4u; i++) {
        if mw[i] > 0.0 {
            out.albedo += samples[i].albedo * mw[i];
        }
    }
    if dot(has_normal, mw) > 0.0 {
        var sum = vec3<f32>(0.0);
        for (var i = 0u; i < 4u; i++) {
            if mw[i] > 0.0 {
                sum += samples[i].normal * mw[i];
            }
        }
        out.normal = normalize(sum);
    }
    out.highlight = dot(has_rough, mw);
    if out.highlight > 0.0 {
        var r = 0.0;
        for (var i = 0u; i < 4u; i++) {
            if mw[i] > 0.0 {
                r += samples[i].roughness * has_rough[i] * mw[i];
            }
        }
        out.roughness = r / out.highlight;
    }
    return out;
}

// The sun's specular highlight on a surface of `roughness` seen from
// direction `to_eye`: energy-normalized Blinn-Phong (exponent 2/α² - 2
// with α = roughness², the usual mapping to a microfacet width) with
// Schlick's Fresnel for a dielectric (F0 = 0.04).
fn sun_highlight(nm: vec3<f32>, to_eye: vec3<f32>, roughness: f32) -> vec3<f32> {
    let l = globals.sun_dir;
    let h = normalize(l + to_eye);
    let a = max(roughness * roughness, 0.03);
    let exponent = 2.0 / (a * a) - 2.0;
    let ndh = max(dot(nm, h), 0.0);
    let ndl = max(dot(nm, l), 0.0);
    let d = (exponent + 8.0) / (8.0 * PI) * pow(ndh, exponent);
    let fresnel = 0.04 + 0.96 * pow(1.0 - max(dot(h, to_eye), 0.0), 5.0);
    return globals.sun_color * globals.sun_intensity * d * fresnel * ndl;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    return shade(in);
}

// Level transitions cross-fade (spec §13 "the two levels cross-fade"): for
// a few frames a chunk draws its new mesh and its old one with
// complementary 4x4 screen-door masks, so each pixel shows exactly one of
// them and the share of the new one grows with the fade. Bits of
// `chunk_coord.w`: FADE_SHIFT..+2 the kind (1 the new mesh, 2 the old
// one), FADE_T_SHIFT..+8 the progress 0..255. Keep in sync with
// src/render/terrain/level_fades.rs.
const FADE_SHIFT: u32 = 8u;
const FADE_T_SHIFT: u32 = 10u;
const BAYER4 = array<f32, 16>(
    0.0, 8.0, 2.0, 10.0,
    12.0, 4.0, 14.0, 6.0,
    3.0, 11.0, 1.0, 9.0,
    15.0, 7.0, 13.0, 5.0,
);

@fragment
fn fs_main_fade(in: VsOut) -> @location(0) vec4<f32> {
    let w = u32(in.chunk_coord.w);
    let kind = (w >> FADE_SHIFT) & 3u;
    let t = f32((w >> FADE_T_SHIFT) & 255u) / 255.0;
    let p = vec2<u32>(in.clip.xy) & vec2<u32>(3u);
    var bayer = BAYER4;
    let d = (bayer[p.y * 4u + p.x] + 0.5) / 16.0;
    if (kind == 1u && d >= t) || (kind == 2u && d < t) {
        discard;
    }
    return shade(in);
}

fn shade(in: VsOut) -> vec4<f32> {
    let n = normalize(in.normal);

    // Triplanar projection from chunk-local studs (period divides the chunk).
    let p = in.pos_in_chunk / DETAIL_PERIOD_STUDS;
    let dpx = dpdx(p);
    let dpy = dpdy(p);
    var t: Triplanar;
    t.uv_x = vec2<f32>(p.z, -p.y);
    t.uv_y = vec2<f32>(p.x, p.z);
    t.uv_z = vec2<f32>(p.x, -p.y);
    t.ddx_x = vec2<f32>(dpx.z, -dpx.y);
    t.ddy_x = vec2<f32>(dpy.z, -dpy.y);
    t.ddx_y = dpx.xz;
    t.ddy_y = dpy.xz;
    t.ddx_z = vec2<f32>(dpx.x, -dpx.y);
    t.ddy_z = vec2<f32>(dpy.x, -dpy.y);
    // Sharpened blend; planes under 5% are dropped (and the rest renormalized).
    var w = n * n;
    w = w * w;
    w = w / (w.x + w.y + w.z);
    w = max(w - vec3<f32>(0.05), vec3<f32>(0.0));
    t.w = w / max(w.x + w.y + w.z, 1e-5);
    t.up = n.y > 0.0;
    t.level = vec3<f32>(0.0);
    t.surface_level_offset = 0.0;
    if EXPLICIT_MIP_LEVEL {
        t.level = plane_levels(t);
        let surface_side = f32(textureDimensions(material_surface).x);
        let albedo_side = f32(textureDimensions(material_albedo).x);
        t.surface_level_offset = log2(surface_side / albedo_side);
    }

    var albedo = vec3<f32>(0.0);
    // The normal the light sees (normal-mapped where a material has a
    // normal map), the roughness and the share of the surface whose
    // material has a roughness map (the only share with a highlight).
    var lit_normal = n;
    var roughness = 1.0;
    var highlight = 0.0;
    if globals.low_poly > 0.5 {
        albedo = low_poly_albedo(in.material_ids.x, n);
    } else {
        // Blend the quad's materials by the interpolated weights, sharpened
        // by their height maps where they have them.
        let blended = blend_materials(t, n, in.material_ids, in.weights);
        albedo = blended.albedo;
        lit_normal = blended.normal;
        roughness = blended.roughness;
        highlight = blended.highlight;

        // Large-scale variation hides the 32-stud texture repetition: brightness
        // on 64- and 16-stud lattices plus a hue drift (greener / drier) on the
        // 64-stud one. All lattices are global, so there are no chunk seams.
        let m1 = macro_noise(in.chunk_coord.xz, in.pos_in_chunk.xz, i32(CHUNK_SIZE_STUDS / MACRO_PERIOD_STUDS));
        let m2 = macro_noise(in.chunk_coord.xz, in.pos_in_chunk.xz, i32(CHUNK_SIZE_STUDS / MACRO_PERIOD_STUDS) * 4);
        let m3 = macro_noise(in.chunk_coord.xz + vec2<i32>(7919, 104729), in.pos_in_chunk.xz, i32(CHUNK_SIZE_STUDS / MACRO_PERIOD_STUDS) * 2);
        albedo *= 0.8 + 0.26 * m1 + 0.14 * m2;
        albedo *= mix(vec3<f32>(0.92, 1.04, 0.96), vec3<f32>(1.07, 0.98, 0.9), m3);
    }

    // Sun (wrapped Lambert) plus hemispherical sky ambient.
    let sun_dir = globals.sun_dir;
    let wrap = globals.diffuse_wrap;
    let ndl = dot(lit_normal, sun_dir);
    let diffuse = max((ndl + wrap) / (1.0 + wrap), 0.0);
    let hemi = lit_normal.y * 0.5 + 0.5;
    let ambient = mix(globals.ground_ambient, globals.sky_zenith * globals.sky_ambient, hemi);
    var color = albedo * (globals.sun_color * globals.sun_intensity * diffuse + ambient);

    let dist = length(in.pos_rel);
    let view_dir = in.pos_rel / max(dist, 1e-4);
    if highlight > 0.0 {
        color += sun_highlight(lit_normal, -view_dir, roughness) * highlight;
    }

    // Distance fog toward the horizon colour, thinner with altitude.
    let height = globals.camera_height_studs + in.pos_rel.y;
    let height_factor = exp(-max(height, 0.0) * globals.fog_height_falloff);
    let fd = dist * globals.fog_density;
    var fog_amount = (1.0 - exp(-fd * sqrt(fd))) * mix(0.6, 1.0, height_factor) * globals.fog_max;
    if globals.fog_full_studs > 0.0 {
        // The horizon's farthest ground fades out entirely over the last quarter.
        let full = globals.fog_full_studs;
        fog_amount = max(fog_amount, smoothstep(0.75 * full, full, dist));
    }
    color = mix(color, fog_color(view_dir), clamp(fog_amount, 0.0, 1.0));

    color = tonemap(color);

    // Debug overlays, after tone mapping so their colours stay exact.
    let overlays = globals.overlay_bits;
    if (overlays & OVERLAY_LOD) != 0u {
        var tints = LEVEL_TINTS;
        color = overlay_tint(color, tints[clamp(in.chunk_coord.w & 15, 0, 8)], 0.6);
    }
    let residency = (u32(in.chunk_coord.w) >> RESIDENCY_SHIFT) & 15u;
    if (overlays & OVERLAY_RESIDENCY) != 0u && residency > 0u {
        var rtints = RESIDENCY_TINTS;
        color = overlay_tint(color, rtints[min(residency, 2u) - 1u], 0.55);
    }
    if (overlays & OVERLAY_SEAMS) != 0u {
        color = overlay_tint(color, hsv_to_rgb(chunk_hue(in.chunk_coord.xyz), 0.8, 1.0), 0.65);
    }
    if (overlays & OVERLAY_SKIRTS) != 0u && in.skirt > 0.001 {
        color = overlay_tint(color, SKIRT_TINT, 0.85);
    }
    if (overlays & OVERLAY_REMESH) != 0u {
        let flash = clamp(1.0 - in.age / REMESH_FLASH_SECS, 0.0, 1.0);
        color = mix(color, vec3<f32>(1.0, 0.95, 0.6), 0.8 * flash);
    }

    // Brush cursor: an anti-aliased ring just inside where the brush shape
    // meets the surface, plus a tint inside that fades with the brush
    // falloff. brush_color.w encodes 1 + shape + 3 * falloff (shape: sphere,
    // cube, cylinder; falloff: none, linear, smooth). Drawn after fog and
    // tone mapping so it keeps its exact UI colour at any distance.
    if globals.brush_style > 0.5 {
        let code = u32(globals.brush_style + 0.5) - 1u;
        let shape = code % 3u;
        let falloff = code / 3u;
        let o = in.pos_rel - globals.brush_centre_rel;
        var d = length(o);
        if shape == 1u {
            d = max(max(abs(o.x), abs(o.y)), abs(o.z));
        } else if shape == 2u {
            d = max(length(o.xz), abs(o.y));
        }
        let fw = max(fwidth(d), 1e-4);
        let r = globals.brush_radius_studs;
        let band = max(r * 0.06, 2.0 * fw);
        let outer = 1.0 - smoothstep(r - fw, r, d);
        let inner = smoothstep(r - band - fw, r - band, d);
        let ring = outer * inner;
        let t = clamp(d / max(r, 1e-3), 0.0, 1.0);
        var weight = 1.0;
        if falloff == 1u {
            weight = 1.0 - t;
        } else if falloff == 2u {
            weight = 1.0 - t * t * (3.0 - 2.0 * t);
        }
        let inside = outer * (0.06 + 0.3 * weight);
        color = mix(color, globals.brush_color, max(ring * 0.9, inside));
    }

    if globals.encode_srgb == 1u {
        color = linear_to_srgb(color);
    }
    return vec4<f32>(color, 1.0);
}
