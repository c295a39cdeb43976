// Wireframe overlay: the triangle edges of the drawn chunks over the shaded
// terrain, blended, depth-tested against it (drawn after it, nudged toward
// the camera by a depth bias).
//
// Two entry points feed one fragment shader:
// - `vs_main`, for a `PolygonMode::Line` pipeline with the terrain's vertex
//   buffers: the rasterizer draws only edges, so every fragment is on one.
// - `vs_pull`, for adapters without polygon-mode lines: a non-indexed draw of
//   `index_count` vertices per chunk that reads the index and vertex buffers
//   as storage, so vertex `i` is corner `i % 3` of triangle `i / 3` and carries
//   a one-hot barycentric coordinate. The fragment shader turns the distance
//   to the nearest edge, in pixels (barycentric / fwidth), into ~1 px
//   anti-aliased lines at any distance and angle.

// `Globals` and its binding come from globals.wgsl, prepended when the
// module is built (src/render/shaders.rs).

// `vs_pull` only: one chunk's `TerrainVertex` buffer as 32-bit words (6 per
// vertex: position xyz as f32 bits, normal snorm8x4, material ids, weights)
// and its u32 triangle-list index buffer.
@group(1) @binding(0) var<storage, read> vertex_words: array<u32>;
@group(1) @binding(1) var<storage, read> indices: array<u32>;

// Keep in sync with `TerrainVertex` in src/render/terrain/gpu_data.rs.
const WORDS_PER_VERTEX: u32 = 6u;
// Keep in sync with `Overlay::bit` in src/render/lines/overlays.rs.
const OVERLAY_SKIRTS: u32 = 8u;
// Linear SKIRT_TINT_SRGB of src/render/lines/overlays.rs.
const SKIRT_TINT: vec3<f32> = vec3<f32>(1.0, 0.021, 0.716);
const LINE_COLOR: vec3<f32> = vec3<f32>(0.01, 0.012, 0.02);

// Keep in sync with `TerrainVertex` in src/render/terrain/gpu_data.rs and
// `ChunkInstance` in src/render/chunk_draw/gpu_data.rs.
struct VertexIn {
    // Chunk-local position in studs.
    @location(0) pos_in_chunk: vec3<f32>,
    // Unit normal (snorm8x4); w: 1 on skirt vertices.
    @location(1) normal: vec4<f32>,
    // Instance: chunk origin minus camera position (studs); w: age (unused here).
    @location(4) chunk_origin_rel: vec4<f32>,
}

struct VsOut {
    @builtin(position) clip: vec4<f32>,
    // Distance from the camera, studs.
    @location(0) dist: f32,
    // One-hot corner weights (vs_pull); all zero for polygon-mode lines.
    @location(1) bary: vec3<f32>,
    // > 0 inside skirt triangles.
    @location(2) skirt: f32,
}

fn project(pos_rel: vec3<f32>, skirt: f32, bary: vec3<f32>) -> VsOut {
    var out: VsOut;
    out.clip = globals.clip_from_world * vec4<f32>(pos_rel, 1.0);
    out.dist = length(pos_rel);
    out.bary = bary;
    out.skirt = skirt;
    return out;
}

@vertex
fn vs_main(in: VertexIn) -> VsOut {
    return project(in.chunk_origin_rel.xyz + in.pos_in_chunk, in.normal.w, vec3<f32>(0.0));
}

@vertex
fn vs_pull(@builtin(vertex_index) vertex_index: u32, @location(4) chunk_origin_rel: vec4<f32>) -> VsOut {
    let base = indices[vertex_index] * WORDS_PER_VERTEX;
    let pos_in_chunk = vec3<f32>(
        bitcast<f32>(vertex_words[base]),
        bitcast<f32>(vertex_words[base + 1u]),
        bitcast<f32>(vertex_words[base + 2u]),
    );
    let normal = unpack4x8snorm(vertex_words[base + 3u]);
    let corner = vertex_index % 3u;
    let bary = vec3<f32>(f32(corner == 0u), f32(corner == 1u), f32(corner == 2u));
    return project(chunk_origin_rel.xyz + pos_in_chunk, normal.w, bary);
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    // Distance to the nearest edge in pixels (0 for polygon-mode lines).
    let px = in.bary / max(fwidth(in.bary), vec3<f32>(1e-6));
    let edge_px = min(px.x, min(px.y, px.z));
    var alpha = 1.0 - smoothstep(0.2, 0.9, edge_px);
    // Far away triangles are a few pixels wide: fade so the mesh stays readable.
    alpha *= mix(0.8, 0.25, smoothstep(400.0, 4000.0, in.dist));
    var color = LINE_COLOR;
    if (globals.overlay_bits & OVERLAY_SKIRTS) != 0u && in.skirt > 0.001 {
        color = SKIRT_TINT;
        alpha = min(alpha * 1.3, 1.0);
    }
    if alpha <= 0.002 {
        discard;
    }
    if globals.encode_srgb == 1u {
        color = linear_to_srgb(color);
    }
    return vec4<f32>(color, clamp(alpha, 0.0, 1.0));
}
