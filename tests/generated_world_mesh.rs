//! The default generated world meshed in full: every vertex's material
//! weights sum to exactly 255, every quad carries one sorted set of solid
//! materials, and the world really blends materials (spec §5).

use strata::pipeline::WorldMeshes;
use strata::terrain::Material;
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};

#[test]
fn weights_sum_to_255_on_every_vertex_of_the_default_world() {
    let grid = generate_world(&GeneratorSettings::default()).expect("default settings are valid");
    let meshes = WorldMeshes::build_all(&grid);
    let (vertices, triangles) = meshes.totals();
    assert!(vertices > 1_000_000, "{vertices} vertices");
    assert!(triangles > 1_000_000, "{triangles} triangles");
    let mut blended = 0usize;
    let mut materials_seen = [false; Material::COUNT];
    for (coord, mesh) in meshes.iter() {
        for (v, (ids, w)) in mesh
            .material_ids
            .iter()
            .zip(&mesh.material_weights)
            .enumerate()
        {
            let sum: u32 = w.iter().map(|&x| x as u32).sum();
            assert_eq!(sum, 255, "chunk {coord:?} vertex {v}: {ids:?} {w:?}");
            let len = 1 + ids.windows(2).take_while(|p| p[0] < p[1]).count();
            assert!(ids[len..].iter().all(|&x| x == ids[0]), "{ids:?}");
            assert!(w[len..].iter().all(|&x| x == 0), "{ids:?} {w:?}");
            for &id in &ids[..len] {
                assert!(
                    Material(id).is_solid() && (id as usize) < Material::COUNT,
                    "{ids:?}"
                );
                materials_seen[id as usize] = true;
            }
            if w.iter().filter(|&&x| x > 0).count() > 1 {
                blended += 1;
            }
        }
        for quad in mesh.indices.chunks_exact(6) {
            let set = mesh.material_ids[quad[0] as usize];
            assert!(quad.iter().all(|&i| mesh.material_ids[i as usize] == set));
        }
    }
    assert!(blended > 10_000, "only {blended} blended vertices");
    for m in [
        Material::GRASS,
        Material::ROCK,
        Material::DIRT,
        Material::SAND,
        Material::SNOW,
    ] {
        assert!(
            materials_seen[m.0 as usize],
            "{m} never reaches the surface"
        );
    }
}
