//! Splat maps beside a heightmap export: each sample's weights sum to 255
//! where there is ground, the index map names the heaviest material, a
//! column's own surface material (found here from the cells, independently
//! of the exporter) always weighs in, and the sidecar names the library's
//! materials.

use std::path::{Path, PathBuf};

use strata::io::heightmap::heightmap_export::{
    EngineSize, HeightmapExportOptions, export_heightmap_with_library,
};
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};
use strata::terrain::materials::MaterialLibrary;
use strata::terrain::storage::coords::CHUNK_SIZE_CELLS;
use strata::terrain::{CellCoord, Material};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-splat-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every sample's weights over all maps, `[sample][slot]`.
fn weights(maps: &[PathBuf], slots: usize) -> (u32, u32, Vec<Vec<u8>>) {
    let images: Vec<image::RgbaImage> = maps
        .iter()
        .map(|m| image::open(m).unwrap().to_rgba8())
        .collect();
    let (w, h) = images[0].dimensions();
    let samples = (0..(w * h) as usize)
        .map(|i| {
            (0..slots)
                .map(|s| images[s / 4].as_raw()[i * 4 + s % 4])
                .collect()
        })
        .collect();
    (w, h, samples)
}

/// The surface material of cell column `(x, z)`, read from the cells: the
/// first cell from the top at least half solid.
fn surface_material(grid: &strata::terrain::Grid, x: i32, z: i32) -> u8 {
    let top = grid
        .chunks()
        .map(|(c, _)| (c.0.y + 1) * CHUNK_SIZE_CELLS)
        .max()
        .unwrap_or(0);
    (0..top)
        .rev()
        .map(|y| grid.cell(CellCoord(glam::IVec3::new(x, y, z))))
        .find(|c| c.solid_occupancy() >= 128)
        .map_or(0, |c| c.material().0)
}

fn check(path: &Path, grid: &strata::terrain::Grid, options: &HeightmapExportOptions) {
    let mut library = MaterialLibrary::default();
    library.rename(Material::GRASS, "Studio moss").unwrap();
    let e = export_heightmap_with_library(grid, path, None, options, &library).unwrap();
    let splat = e.splat.expect("splat maps written");
    let slots = splat.channels.len();
    assert!(slots >= 3, "{slots} materials on the surface");
    assert_eq!(splat.maps.len(), slots.div_ceil(4));
    let (w, h, samples) = weights(&splat.maps, slots);
    assert_eq!((w, h), (e.width_px, e.height_px));
    let index = image::open(&splat.index_map).unwrap().to_luma8();
    let ids: Vec<u8> = splat.channels.iter().map(|c| c.id).collect();
    let mut with_ground = 0;
    for (i, sample) in samples.iter().enumerate() {
        let sum: u32 = sample.iter().map(|&b| u32::from(b)).sum();
        let heaviest = index.as_raw()[i];
        if heaviest == 0 {
            assert_eq!(sum, 0, "sample {i} without ground has weights");
            continue;
        }
        with_ground += 1;
        assert_eq!(sum, 255, "sample {i}: {sample:?}");
        let max = *sample.iter().max().unwrap();
        let first_max = sample.iter().position(|&b| b == max).unwrap();
        assert_eq!(heaviest, ids[first_max], "sample {i}: {sample:?}");
    }
    assert!(
        with_ground * 10 >= samples.len() * 9,
        "{with_ground} samples with ground"
    );
    let sidecar: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&splat.sidecar).unwrap()).unwrap();
    let grass = splat.channels.iter().position(|c| c.id == 2).unwrap();
    assert_eq!(sidecar["channels"][grass]["name"], "Studio moss");
    assert_eq!(sidecar["width"], w);
    if options.size.is_none() {
        // One sample a column: each column's own material weighs at least
        // 1/9 of 255 (it is in its own 3 × 3 box), and a column whose box
        // is all one material weighs 255.
        let (x0, z0) = e.origin_cells;
        let surface: Vec<u8> = (0..h as i32)
            .flat_map(|z| (0..w as i32).map(move |x| (x, z)))
            .map(|(x, z)| surface_material(grid, x0 + x, z0 + z))
            .collect();
        let at = |x: i32, z: i32| surface[(z * w as i32 + x) as usize];
        let mut uniform = 0;
        for z in 0..h as i32 {
            for x in 0..w as i32 {
                let own = at(x, z);
                let sample = &samples[(z * w as i32 + x) as usize];
                let slot = ids.iter().position(|&id| id == own).unwrap();
                assert!(sample[slot] >= 255 / 9, "({x}, {z}) {own}: {sample:?}");
                let box_uniform = (-1..=1).all(|dz| {
                    (-1..=1).all(|dx| {
                        let (bx, bz) = (x + dx, z + dz);
                        bx < 0 || bz < 0 || bx >= w as i32 || bz >= h as i32 || at(bx, bz) == own
                    })
                });
                if box_uniform {
                    uniform += 1;
                    assert_eq!(sample[slot], 255, "({x}, {z})");
                }
            }
        }
        assert!(uniform > 0);
    }
}

#[test]
fn splat_maps_weigh_the_surface_materials_to_255_and_name_them() {
    let dir = scratch("native");
    let grid = generate_world(&GeneratorSettings {
        seed: 3,
        size_cells: 128,
    })
    .unwrap();
    check(
        &dir.join("h.png"),
        &grid,
        &HeightmapExportOptions::default(),
    );
    // Resampled to an engine size, the maps follow the heightmap's samples.
    check(
        &dir.join("u.r16"),
        &grid,
        &HeightmapExportOptions {
            size: Some(EngineSize::Pixels(65)),
            big_endian: false,
        },
    );
    assert!(dir.join("u_splat0.png").is_file() && dir.join("u_materials.png").is_file());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_export_whose_splat_file_cannot_be_written_writes_nothing() {
    let dir = scratch("blocked");
    let grid = generate_world(&GeneratorSettings {
        seed: 3,
        size_cells: 64,
    })
    .unwrap();
    // A folder where the second splat file would go.
    std::fs::create_dir_all(dir.join("y_splat1.png")).unwrap();
    let err = export_heightmap_with_library(
        &grid,
        &dir.join("y.png"),
        None,
        &HeightmapExportOptions::default(),
        &MaterialLibrary::default(),
    )
    .expect_err("refused");
    assert!(err.to_string().contains("y_splat1.png"), "{err}");
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["y_splat1.png"], "nothing else written");
    std::fs::remove_dir_all(&dir).unwrap();
}
