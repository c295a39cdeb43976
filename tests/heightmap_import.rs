//! Imports the real Jacksboro fault DEM (shared/data) with the default
//! settings and checks its extent, orientation and relief.

mod common;
use common::dem_path;

use strata::io::heightmap::heightmap_format::import_heightmap;
use strata::io::heightmap::heightmap_import::{
    BEDROCK_CELLS, HeightSamples, HeightmapSettings, ImportError, read_heightmap,
};
use strata::terrain::{Cell, CellCoord, Grid, Material};

/// Surface height of a column from its top solid cell: `y + occupancy / 255`.
fn surface_height(grid: &Grid, x: i32, z: i32) -> Option<f64> {
    (0..128).rev().find_map(|y| {
        let c = grid.cell(CellCoord::new(x, y, z));
        c.material()
            .is_solid()
            .then(|| y as f64 + c.occupancy() as f64 / 255.0)
    })
}

#[test]
fn jacksboro_dem_reads_with_its_sidecar() {
    let dem = dem_path();
    let map = read_heightmap(&dem).unwrap();
    assert_eq!((map.width_px, map.height_px), (403, 344));
    let sidecar = map.sidecar.as_ref().expect("sidecar next to the PNG");
    assert_eq!((sidecar.spacing_x_m, sidecar.spacing_y_m), (74.5, 92.1));
    let lo = map.samples.iter().fold(f64::MAX, f64::min);
    let hi = map.samples.iter().fold(f64::MIN, f64::max);
    assert!(lo >= 236.0 - 1e-9 && hi <= 1076.0 + 1e-9, "{lo}..{hi}");
    assert!(hi - lo > 700.0, "relief {lo}..{hi} m");
}

/// The import decodes the DEM a row at a time; its pixel codes are exactly
/// those of the whole image decoded by the `image` crate (how the import
/// decoded it before), so every sample is unchanged.
#[test]
fn jacksboro_dem_codes_equal_the_whole_image_decode() {
    let dem = dem_path();
    let map = read_heightmap(&dem).unwrap();
    let whole = match image::open(&dem).unwrap() {
        image::DynamicImage::ImageLuma16(img) => img.into_raw(),
        other => panic!("the DEM is 16-bit gray, not {:?}", other.color()),
    };
    assert_eq!(whole.len(), 403 * 344);
    match map.samples {
        HeightSamples::Codes {
            codes, max_code, ..
        } => {
            assert_eq!(max_code, 65535.0);
            assert!(codes == whole, "the codes differ from the whole decode");
        }
        HeightSamples::Values(_) | HeightSamples::Floats(_) | HeightSamples::Tiled(_) => {
            panic!("a PNG import keeps pixel codes")
        }
    }
}

#[test]
fn jacksboro_dem_imports_with_true_aspect_and_relief() {
    let dem = dem_path();
    let settings = HeightmapSettings::default();
    let grid = import_heightmap(&dem, &settings).unwrap();
    // x: 403 px × 2 cells; z: 344 px × 92.1 / (74.5 / 2) m = 850.6 → 851 cells.
    let (width, depth) = (806, 851);
    for (x, z) in [
        (0, 0),
        (width - 1, 0),
        (0, depth - 1),
        (width - 1, depth - 1),
    ] {
        assert!(
            surface_height(&grid, x, z).is_some(),
            "corner ({x}, {z}) has no ground"
        );
    }
    for y in [0, 10, 40] {
        assert_eq!(grid.cell(CellCoord::new(width, y, 5)), Cell::EMPTY);
        assert_eq!(grid.cell(CellCoord::new(5, y, depth)), Cell::EMPTY);
        assert_eq!(grid.cell(CellCoord::new(-1, y, 5)), Cell::EMPTY);
    }
    assert_eq!(grid.cell(CellCoord::new(5, -1, 5)), Cell::EMPTY);

    let mut lo = f64::MAX;
    let mut hi = f64::MIN;
    let mut materials = [0usize; Material::COUNT];
    for z in (0..depth).step_by(3) {
        for x in (0..width).step_by(3) {
            let h = surface_height(&grid, x, z).unwrap();
            lo = lo.min(h);
            hi = hi.max(h);
            let top = (0..128)
                .rev()
                .map(|y| grid.cell(CellCoord::new(x, y, z)))
                .find(|c| c.material().is_solid())
                .unwrap();
            materials[top.material().0 as usize] += 1;
        }
    }
    // 840 m of relief at 37.25 m per cell, exaggerated 3×: about 67.7 cells.
    assert!(
        (BEDROCK_CELLS - 0.01..BEDROCK_CELLS + 3.0).contains(&lo),
        "lowest surface {lo}"
    );
    assert!(hi - lo > 55.0 && hi - lo < 70.0, "relief {lo}..{hi} cells");
    let total: usize = materials.iter().sum();
    let share = |m: Material| materials[m.0 as usize] as f64 / total as f64;
    assert!(
        share(Material::GRASS) > 0.25,
        "grass {:.3}",
        share(Material::GRASS)
    );
    assert!(
        share(Material::ROCK) > 0.05,
        "rock {:.3}",
        share(Material::ROCK)
    );
    assert!(
        share(Material::DIRT) > 0.02,
        "dirt {:.3}",
        share(Material::DIRT)
    );
}

#[test]
fn jacksboro_dem_keeps_north_at_minus_z() {
    let path = dem_path();
    let map = read_heightmap(&path).unwrap();
    let grid = import_heightmap(&path, &HeightmapSettings::default()).unwrap();
    // Compare a DEM pixel near the north-west and one near the south-east
    // corner with the columns they land on (x = 2·px, z = 2.4725·py).
    let settings = HeightmapSettings::default();
    let cell_m = 74.5 / settings.cells_per_pixel as f64;
    let to_cells = |m: f64| BEDROCK_CELLS + (m - 236.0) / cell_m * settings.vertical_scale as f64;
    for (px, py) in [(20usize, 20usize), (380, 320), (200, 5), (5, 300)] {
        let expected = to_cells(map.samples.get(py * 403 + px));
        let x = (px as f64 * 2.0 + 1.0) as i32;
        let z = ((py as f64 + 0.5) * 92.1 / cell_m) as i32;
        let h = surface_height(&grid, x, z).unwrap();
        assert!(
            (h - expected).abs() < 3.0,
            "pixel ({px}, {py}) {expected:.1} vs column ({x}, {z}) {h:.1}"
        );
    }
}

#[test]
fn absurd_scale_is_refused_before_building() {
    let dem = dem_path();
    let settings = HeightmapSettings {
        cells_per_pixel: 64.0,
        ..HeightmapSettings::default()
    };
    match import_heightmap(&dem, &settings) {
        Err(ImportError::TerrainTooLarge { width_cells, .. }) => {
            assert_eq!(width_cells, 403.0 * 64.0)
        }
        other => panic!("expected TerrainTooLarge, got {other:?}"),
    }
}
