//! Tests of the extraction: both builds and both batch layouts agree bit
//! for bit, and meshes match the spec's offsets and edge count.

use super::*;
use crate::mesh::field::inside_bits;

/// A deterministic pseudo-random field of `n` samples per chunk axis:
/// occupancy and material per sample from a hash, `materials` solid ids
/// starting at 2 plus air and water.
fn random_field(n: usize, seed: u32, materials: u32, binary: bool) -> SampleField {
    let mut f = SampleField::new(n);
    for i in 0..f.solid.len() {
        let mut h = (i as u32 ^ seed.wrapping_mul(0x9e37_79b9)).wrapping_mul(0x85eb_ca6b);
        h ^= h >> 13;
        h = h.wrapping_mul(0xc2b2_ae35);
        h ^= h >> 16;
        let m = (h % (materials + 2)) as u8;
        let occ = if binary {
            if h & 0x100 != 0 { 255 } else { 0 }
        } else {
            (h >> 9) as u8
        };
        f.material[i] = m;
        f.solid[i] = if m >= 2 { occ } else { 0 };
    }
    for r in 0..f.dim * f.dim {
        f.inside_rows[r] = inside_bits(&f.solid[r * f.dim..(r + 1) * f.dim]);
    }
    f
}

/// Every float as bits, so that -0.0 and 0.0 differ.
fn bits(m: &ChunkMesh) -> Vec<u32> {
    let vecs = m.positions.iter().chain(&m.normals).chain(&m.cube_offsets);
    vecs.flat_map(|v| v.to_array().map(f32::to_bits)).collect()
}

#[test]
#[cfg(target_arch = "x86_64")]
fn avx2_and_baseline_builds_agree_bit_for_bit() {
    if !avx2_available() {
        return;
    }
    let options = MeshOptions {
        keep_cube_offsets: true,
    };
    for (n, seed, materials, binary) in [
        (32, 1, 2, false),
        (32, 2, 9, false),
        (32, 3, 1, true),
        (8, 4, 3, false),
    ] {
        let field = random_field(n, seed, materials, binary);
        let (mut a, mut b) = (ChunkMesh::default(), ChunkMesh::default());
        let mut scratch = Scratch::default();
        scratch.extract_baseline(&field, options, &mut a);
        // SAFETY: AVX2 and its companions were detected above.
        unsafe { scratch.extract_avx2(&field, options, &mut b) };
        assert!(!a.is_empty());
        assert_eq!(bits(&a), bits(&b));
        assert_eq!(
            (
                &a.indices,
                &a.material_ids,
                &a.material_weights,
                &a.vertex_cubes
            ),
            (
                &b.indices,
                &b.material_ids,
                &b.material_weights,
                &b.vertex_cubes
            )
        );
    }
}

#[test]
fn every_field_size_meshes_to_the_spec_offsets() {
    let mut mesher = SurfaceNets::new();
    let mut m = ChunkMesh::default();
    let options = MeshOptions {
        keep_cube_offsets: true,
    };
    for n in [1, 2, 4, 8, 16, 32, 60] {
        let f = random_field(n, n as u32, 5, false);
        mesher.mesh_field(&f, options, &mut m);
        assert!(!m.is_empty(), "n = {n}");
        let dim = f.dim;
        let s = |p: [i32; 3]| {
            f64::from(f.solid[p[0] as usize + dim * (p[1] as usize + dim * p[2] as usize)])
        };
        let mut used = vec![false; m.vertex_count()];
        for &i in &m.indices {
            used[i as usize] = true;
        }
        assert!(used.iter().all(|&u| u), "every vertex is used");
        let mut distinct = std::collections::HashSet::new();
        for v in 0..m.vertex_count() {
            let vertex = (m.vertex_cubes[v], m.material_ids[v], m.material_weights[v]);
            assert!(distinct.insert(vertex), "no two equal vertices");
        }
        for v in 0..m.vertex_count() {
            let c = m.vertex_cubes[v].map(|x| x as i32 + PAD as i32);
            // Mean of the linear 0.5 crossings, in f64.
            let (mut sum, mut count) = ([0.0f64; 3], 0.0);
            for i in 0..8 {
                for axis in 0..3 {
                    if i & (1 << axis) != 0 {
                        continue;
                    }
                    let p = [0, 1, 2].map(|a| c[a] + ((i >> a) & 1));
                    let mut q = p;
                    q[axis] += 1;
                    let (a, b) = (s(p), s(q));
                    if (a >= 128.0) != (b >= 128.0) {
                        for (ax, total) in sum.iter_mut().enumerate() {
                            *total += if ax == axis {
                                (127.5 - a) / (b - a)
                            } else {
                                ((i >> ax) & 1) as f64
                            };
                        }
                        count += 1.0;
                    }
                }
            }
            for (&got, &total) in m.cube_offsets[v].as_ref().iter().zip(&sum) {
                assert!((got as f64 - total / count).abs() < 1e-6);
            }
            let w = m.material_weights[v];
            assert_eq!(w.iter().map(|&x| u32::from(x)).sum::<u32>(), 255);
            assert!((m.normals[v].length() - 1.0).abs() < 1e-5);
        }
    }
}

/// A field of `n` samples per axis whose solid occupancy is a ball around
/// padded sample `centre`, with a smooth falloff and two materials.
fn ball_field(n: usize, centre: [f32; 3], radius: f32) -> SampleField {
    let mut f = SampleField::new(n);
    let dim = f.dim;
    for z in 0..dim {
        for y in 0..dim {
            for x in 0..dim {
                let d = [x, y, z]
                    .iter()
                    .zip(centre)
                    .map(|(&p, c)| (p as f32 - c).powi(2))
                    .sum::<f32>()
                    .sqrt();
                let i = f.index(x, y, z);
                f.solid[i] = ((radius - d + 0.5).clamp(0.0, 1.0) * 255.0).round() as u8;
                f.material[i] = if y % 3 == 0 { 2 } else { 5 };
            }
        }
    }
    for r in 0..dim * dim {
        f.inside_rows[r] = inside_bits(&f.solid[r * dim..(r + 1) * dim]);
    }
    f
}

/// Every output array of a mesh: floats as bits, indices, material ids and
/// weights, vertex cubes.
type AllArrays = (Vec<u32>, Vec<u32>, Vec<[u8; 4]>, Vec<[u8; 4]>, Vec<[i8; 3]>);

/// Every output array of `m`, floats as bits.
fn all_arrays(m: &ChunkMesh) -> AllArrays {
    (
        bits(m),
        m.indices.clone(),
        m.material_ids.clone(),
        m.material_weights.clone(),
        m.vertex_cubes.clone(),
    )
}

#[test]
fn staged_and_in_place_batches_agree_bit_for_bit() {
    let options = MeshOptions {
        keep_cube_offsets: true,
    };
    let fields = [
        random_field(32, 5, 3, false),
        random_field(32, 6, 1, true),
        random_field(16, 7, 4, false),
        random_field(4, 8, 2, false),
        ball_field(32, [17.3, 16.0, 18.6], 11.0),
        ball_field(32, [10.0, 12.5, 30.0], 6.5),
    ];
    for (f, field) in fields.iter().enumerate() {
        let meshes = [0, SPARSE_LANES, LANES as u32].map(|sparse_lanes| {
            let mut scratch = Scratch {
                sparse_lanes,
                ..Scratch::default()
            };
            let mut m = ChunkMesh::default();
            scratch.extract(field, options, &mut m);
            // Twice with the same scratch: nothing of the first call leaks.
            scratch.extract(field, options, &mut m);
            m.clear();
            scratch.extract(field, options, &mut m);
            m
        });
        assert!(!meshes[0].is_empty(), "field {f}");
        for m in &meshes[1..] {
            assert_eq!(all_arrays(&meshes[0]), all_arrays(m), "field {f}");
        }
    }
}

#[test]
fn surface_rows_mark_exactly_the_rows_with_surface_cubes() {
    // One inside sample at padded (10, 12, 14): the 8 cubes around it, with
    // min corners y in 11..=12 and z in 13..=14, are the only surface cubes.
    let mut f = SampleField::new(32);
    let i = f.index(10, 12, 14);
    f.solid[i] = 200;
    f.material[i] = 3;
    f.inside_rows[12 + f.dim * 14] = 1 << 10;
    let mut scratch = Scratch::default();
    let mut m = ChunkMesh::default();
    scratch.extract(&f, MeshOptions::default(), &mut m);
    let mut expected = vec![0u64; f.dim];
    expected[13] = 0b11 << 11;
    expected[14] = 0b11 << 11;
    assert_eq!(scratch.surface_rows, expected);
    assert_eq!(scratch.cubes.len(), 8);
    // A closed box: 6 quads over the 8 cube vertices. Each cube's 3
    // crossing edges meet at the inside sample and cross 127.5/200 of the
    // way from the outside samples in.
    assert_eq!((m.vertex_count(), m.triangle_count()), (8, 12));
    let t = 127.5f32 / 200.0;
    for (v, c) in m.positions.iter().zip(&m.vertex_cubes) {
        for axis in 0..3 {
            // Chunk-local min corner of the cubes below the inside sample.
            let below = [7, 9, 11][axis];
            let offset = if c[axis] == below {
                (t + 2.0) / 3.0
            } else {
                (1.0 - t) / 3.0
            };
            let expected = (c[axis] as f32 + 0.5 + offset) * CELL_SIZE_STUDS;
            assert!((v[axis] - expected).abs() < 1e-4, "{v} {c:?}");
        }
    }
}

#[test]
fn every_owned_crossing_edge_gets_one_quad() {
    for field in [
        random_field(32, 9, 3, false),
        ball_field(32, [4.0, 30.0, 20.0], 9.0),
    ] {
        let (dim, n) = (field.dim, field.n);
        let inside = |x: usize, y: usize, z: usize| field.solid[field.index(x, y, z)] >= 128;
        let mut crossings = 0;
        for z in PAD..PAD + n {
            for y in PAD..PAD + n {
                for x in PAD..PAD + n {
                    let s = inside(x, y, z);
                    crossings += usize::from(s != inside(x + 1, y, z))
                        + usize::from(s != inside(x, y + 1, z))
                        + usize::from(s != inside(x, y, z + 1));
                }
            }
        }
        assert!(crossings > 0 && dim == n + 2 * PAD);
        let mut m = ChunkMesh::default();
        SurfaceNets::new().mesh_field(&field, MeshOptions::default(), &mut m);
        assert_eq!(m.triangle_count(), 2 * crossings);
    }
}

#[test]
fn library_ids_past_31_mesh_as_their_order_preserving_renumbering() {
    // 12 solid materials (ids 2..=13) against the same field with each solid
    // id mapped in order onto library ids up to 255: the geometry and the
    // weights are the same bit for bit, and the ids are the mapped ones.
    let ids: [u8; 12] = [2, 9, 31, 32, 63, 64, 100, 127, 128, 191, 200, 255];
    let low = random_field(32, 7, 12, false);
    let mut high = low.clone();
    for m in high.material.iter_mut() {
        if *m >= 2 {
            *m = ids[usize::from(*m - 2)];
        }
    }
    let (mut a, mut b) = (ChunkMesh::default(), ChunkMesh::default());
    let mut nets = SurfaceNets::new();
    nets.mesh_field(&low, MeshOptions::default(), &mut a);
    nets.mesh_field(&high, MeshOptions::default(), &mut b);
    assert!(a.vertex_count() > 1000, "{}", a.vertex_count());
    assert_eq!(bits(&a), bits(&b));
    assert_eq!(a.indices, b.indices);
    assert_eq!(a.material_weights, b.material_weights);
    let mapped: Vec<[u8; 4]> = a
        .material_ids
        .iter()
        .map(|set| set.map(|m| if m >= 2 { ids[usize::from(m - 2)] } else { m }))
        .collect();
    assert_eq!(b.material_ids, mapped);
    assert_eq!(b.merged_materials, 0);
    // The scratch goes back to plain meshing for a plain field.
    let mut c = ChunkMesh::default();
    nets.mesh_field(&low, MeshOptions::default(), &mut c);
    assert_eq!(c, a);
}
