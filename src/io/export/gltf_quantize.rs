//! The vertex data of the compact smooth export ([`super::gltf_compact`]):
//! each chunk's triangles reordered for the vertex cache and grouped by
//! material, its vertices renumbered in first-use order, and every
//! attribute (texture coordinates included) quantized to the
//! `KHR_mesh_quantization` types, as little-endian bytes per chunk.

use super::glb::Part;
use super::gltf_materials::{Group, TriangleMaterials, group_triangles, quantized_texcoord};

/// Quantization steps per stud of `POSITION`: a position is stored as
/// chunk-local studs × 64, rounded, and the node's scale is 1/64 (a power
/// of two, so dequantizing is exact in `f32`).
pub const POSITION_STEPS_PER_STUD: f32 = 64.0;

/// The most a dequantized coordinate differs from the mesher's
/// chunk-local position, studs: half a step, 1/128 stud (1/512 of a
/// 4-stud cell).
pub const POSITION_ERROR_STUDS: f32 = 0.5 / POSITION_STEPS_PER_STUD;

/// The farthest a vertex may lie from its chunk's origin on any axis,
/// studs, for its position to fit an `i16` (Surface Nets vertices lie
/// within −4 to 132 studs).
pub const MAX_LOCAL_STUDS: f32 = i16::MAX as f32 / POSITION_STEPS_PER_STUD;

/// The bit depth of the octahedral normal encoding (the most the
/// `EXT_meshopt_compression` filter allows in 4-byte elements).
const OCTAHEDRAL_BITS: i32 = 8;

/// One chunk's surface in export order.
pub(super) struct Reordered {
    /// Triangles in vertex-cache order, then grouped by material (each
    /// group keeping that order), each with its winding, indexing the
    /// renumbered vertices.
    pub indices: Vec<u32>,
    /// For each vertex in export order, its index in the chunk mesh: the
    /// vertices in the order the triangles first use them, then any no
    /// triangle uses, in mesh order.
    pub order: Vec<u32>,
    /// The material groups of `indices`, in rising key order.
    pub groups: Vec<Group>,
    /// Some group's material is textured: the chunk stores texture
    /// coordinates.
    pub textured: bool,
}

impl Reordered {
    /// Reorders `part`: triangles by `meshopt_optimizeVertexCache`, then
    /// grouped by their material under `classes`, then vertices by first
    /// use (which is what the index codec compresses best, and what the
    /// vertex fetch wants).
    pub fn of(part: &Part, classes: &TriangleMaterials) -> Reordered {
        let n = part.vertices;
        let optimized = meshopt::optimize_vertex_cache(part.indices(), n);
        let (mut indices, groups) = group_triangles(&optimized, |t| classes.key(&part.mesh, t));
        const UNSEEN: u32 = u32::MAX;
        let mut new_of_old = vec![UNSEEN; n];
        let mut order = Vec::with_capacity(n);
        for index in &mut indices {
            let old = *index as usize;
            if new_of_old[old] == UNSEEN {
                // Fewer than 2^32 vertices: a chunk has at most 33³.
                new_of_old[old] = order.len() as u32;
                order.push(old as u32);
            }
            *index = new_of_old[old];
        }
        order.extend((0..n as u32).filter(|&old| new_of_old[old as usize] == UNSEEN));
        let textured = groups.iter().any(|g| classes.textured(g.key));
        Reordered {
            indices,
            order,
            groups,
            textured,
        }
    }
}

/// The quantized position of a chunk-local position (studs): × 64,
/// rounded to the nearest integer, or `None` beyond [`MAX_LOCAL_STUDS`].
pub fn quantize_position(local: glam::Vec3) -> Option<[i16; 3]> {
    let q = (local.as_dvec3() * f64::from(POSITION_STEPS_PER_STUD)).round();
    let fits = |v: f64| (f64::from(i16::MIN)..=f64::from(i16::MAX)).contains(&v);
    (fits(q.x) && fits(q.y) && fits(q.z)).then_some([q.x as i16, q.y as i16, q.z as i16])
}

/// A unit normal as normalized `i8` components (× 127, rounded), the
/// rounding of each component moved by one step where that brings the
/// vector's length closer to 1.
pub fn quantize_normal(n: glam::Vec3) -> [i8; 3] {
    let snorm = |v: f32| (v.clamp(-1.0, 1.0) * 127.0).round() as i32;
    let base = [snorm(n.x), snorm(n.y), snorm(n.z)];
    let target = n * 127.0;
    let mut best = (f32::INFINITY, base);
    for d in 0..27 {
        let c = [
            (base[0] + d % 3 - 1).clamp(-127, 127),
            (base[1] + d / 3 % 3 - 1).clamp(-127, 127),
            (base[2] + d / 9 - 1).clamp(-127, 127),
        ];
        let v = glam::Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32);
        // Length first (the validator's unit test), then direction.
        let cost = (v.length() / 127.0 - 1.0).abs() * 1e3 + (v - target).length_squared();
        if cost < best.0 {
            best = (cost, c);
        }
    }
    best.1.map(|c| c as i8)
}

/// The vertex attribute streams of the compact export, one buffer view
/// each, and their bytes per vertex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum VertexStream {
    /// `i16` × 3 plus 2 bytes of padding.
    Positions,
    /// `i8` × 3 plus 1 byte (xyz, or the octahedral encoding).
    Normals,
    /// `u8` × 4 material weights.
    Weights,
    /// `u8` × 4 material ids.
    Ids,
    /// `i16` × 2 texture coordinates in position steps (only chunks with
    /// a textured material).
    Texcoords,
}

impl VertexStream {
    /// Bytes per vertex (the view's byte stride).
    pub const fn stride(self) -> usize {
        match self {
            VertexStream::Positions => 8,
            _ => 4,
        }
    }

    /// The buffer view's name.
    pub const fn name(self) -> &'static str {
        match self {
            VertexStream::Positions => "positions",
            VertexStream::Normals => "normals",
            VertexStream::Weights => "material weights",
            VertexStream::Ids => "material ids",
            VertexStream::Texcoords => "texture coordinates",
        }
    }
}

/// The bytes of `stream` for the vertices of `part` in `reordered`'s
/// order; normals octahedral-encoded (`EXT_meshopt_compression`'s filter)
/// when `octahedral`, else as xyz. Positions beyond [`MAX_LOCAL_STUDS`]
/// are checked by [`position_bounds`] first.
pub(super) fn vertex_bytes(
    stream: VertexStream,
    part: &Part,
    reordered: &Reordered,
    octahedral: bool,
) -> Vec<u8> {
    let mesh = &part.mesh;
    let order = reordered.order.iter().map(|&v| v as usize);
    let mut out = Vec::with_capacity(reordered.order.len() * stream.stride());
    match stream {
        VertexStream::Positions => {
            for v in order {
                let q = quantize_position(mesh.positions[v]).unwrap_or_default();
                for c in [q[0], q[1], q[2], 0] {
                    out.extend_from_slice(&c.to_le_bytes());
                }
            }
        }
        VertexStream::Normals if octahedral => {
            let normals: Vec<[f32; 4]> = order
                .map(|v| mesh.normals[v].extend(0.0).to_array())
                .collect();
            let encoded = meshopt::encode_filter_oct::<i8>(&normals, OCTAHEDRAL_BITS);
            out.extend(encoded.as_flattened().iter().map(|&c| c as u8));
        }
        VertexStream::Normals => {
            for v in order {
                let [x, y, z] = quantize_normal(mesh.normals[v]);
                out.extend_from_slice(&[x as u8, y as u8, z as u8, 0]);
            }
        }
        VertexStream::Weights => out.extend(order.flat_map(|v| mesh.material_weights[v])),
        VertexStream::Ids => out.extend(order.flat_map(|v| mesh.material_ids[v])),
        VertexStream::Texcoords => {
            for v in order {
                let q = quantize_position(mesh.positions[v]).unwrap_or_default();
                for c in quantized_texcoord(q, mesh.normals[v]) {
                    out.extend_from_slice(&c.to_le_bytes());
                }
            }
        }
    }
    out
}

/// The smallest and largest quantized position of `part` on each axis.
///
/// # Errors
/// The first vertex farther than [`MAX_LOCAL_STUDS`] from the chunk's
/// origin, in studs.
pub(super) fn position_bounds(part: &Part) -> Result<([i16; 3], [i16; 3]), glam::Vec3> {
    let mut lo = [i16::MAX; 3];
    let mut hi = [i16::MIN; 3];
    for &p in &part.mesh.positions[..part.vertices] {
        let q = quantize_position(p).ok_or(p)?;
        for axis in 0..3 {
            lo[axis] = lo[axis].min(q[axis]);
            hi[axis] = hi[axis].max(q[axis]);
        }
    }
    Ok((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn positions_round_to_the_nearest_64th_of_a_stud_within_the_bound() {
        assert_eq!(
            quantize_position(Vec3::new(0.0, -4.0, 132.0)),
            Some([0, -256, 8448])
        );
        // 1/128 stud is exactly half a step: rounds away from zero.
        assert_eq!(quantize_position(Vec3::splat(1.0 / 128.0)), Some([1, 1, 1]));
        assert_eq!(
            quantize_position(Vec3::splat(MAX_LOCAL_STUDS)),
            Some([i16::MAX; 3])
        );
        assert_eq!(quantize_position(Vec3::new(0.0, 512.0, 0.0)), None);
        let mut worst = 0.0f32;
        for i in 0..10_000 {
            let p = Vec3::new(
                i as f32 * 0.013_7 - 4.0,
                i as f32 * 0.003_1,
                131.9 - i as f32 * 0.011,
            );
            let q = quantize_position(p).unwrap();
            let back = Vec3::new(q[0] as f32, q[1] as f32, q[2] as f32) / POSITION_STEPS_PER_STUD;
            worst = worst.max((back - p).abs().max_element());
        }
        assert!(
            worst <= POSITION_ERROR_STUDS && worst > 0.9 * POSITION_ERROR_STUDS,
            "{worst}"
        );
    }

    #[test]
    fn quantized_normals_keep_unit_length_and_direction() {
        let mut worst_length = 0.0f32;
        let mut worst_angle = 0.0f32;
        // Directions spread over the whole sphere (a Fibonacci lattice).
        let n = 100_000;
        for i in 0..n {
            let y = 1.0 - 2.0 * (i as f32 + 0.5) / n as f32;
            let r = (1.0 - y * y).sqrt();
            let phi = i as f32 * 2.399_963;
            let normal = Vec3::new(r * phi.cos(), y, r * phi.sin()).normalize();
            let q = quantize_normal(normal);
            let v = Vec3::new(q[0] as f32, q[1] as f32, q[2] as f32) / 127.0;
            worst_length = worst_length.max((v.length() - 1.0).abs());
            worst_angle = worst_angle.max(v.normalize().angle_between(normal).to_degrees());
        }
        // The Khronos validator's limit is 0.00674; plain rounding reaches 0.0068.
        assert!(worst_length < 0.004, "{worst_length}");
        assert!(worst_angle < 1.0, "{worst_angle}°");
        assert_eq!(quantize_normal(Vec3::Y), [0, 127, 0]);
        assert_eq!(quantize_normal(-Vec3::X), [-127, 0, 0]);
    }

    #[test]
    fn octahedral_normals_decode_within_a_degree_and_a_half() {
        let n = 100_000;
        let normals: Vec<[f32; 4]> = (0..n)
            .map(|i| {
                let y = 1.0 - 2.0 * (i as f32 + 0.5) / n as f32;
                let r = (1.0 - y * y).sqrt();
                let phi = i as f32 * 2.399_963;
                [r * phi.cos(), y, r * phi.sin(), 0.0]
            })
            .collect();
        let mut coded = meshopt::encode_filter_oct::<i8>(&normals, OCTAHEDRAL_BITS);
        meshopt::decode_filter_oct(&mut coded);
        let worst = normals
            .iter()
            .zip(&coded)
            .map(|(a, q)| {
                let v = Vec3::new(q[0] as f32, q[1] as f32, q[2] as f32);
                Vec3::from_slice(a)
                    .angle_between(v.normalize())
                    .to_degrees()
            })
            .fold(0.0f32, f32::max);
        assert!(worst < 1.5 && worst > 0.5, "{worst}°");
    }
}
