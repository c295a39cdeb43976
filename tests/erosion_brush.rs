//! The erosion brushes (Hydraulic erode, Thermal erode) through the public
//! tool entry point: gullies and deposits, slumped cliffs, undercuts, one
//! undo step per stroke, and bad settings refused.

use glam::{DVec3, IVec3};
use strata::terrain::editing::brush::{Brush, BrushMode, BrushOptions};
use strata::terrain::editing::erosion_brush::erosion_box;
use strata::terrain::editing::kernels::apply_tool;
use strata::terrain::generation::generate::flat_world;
use strata::terrain::storage::coords::CELL_SIZE_STUDS;
use strata::terrain::{Cell, CellBox, CellCoord, Grid, Material};
/// A dirt slope of about 29° rising toward +x from x = 64, flat below.
fn slope() -> Grid {
    let mut grid = flat_world(128, 8).unwrap();
    let brush = Brush {
        mode: BrushMode::Add,
        radius_cells: 64.0,
        strength: 1.0,
        material: Material::DIRT,
        ignore_water: false,
    };
    grid.edit_region(
        CellBox::new(IVec3::new(0, 0, 0), IVec3::new(128, 80, 128)),
        |c, old| {
            let h = 8.0 + f64::from((c.0.x - 64).max(0)) * 0.55;
            let occ = ((h - f64::from(c.0.y)).clamp(0.0, 1.0) * 255.0).round() as u8;
            if occ == 0 {
                old
            } else {
                Cell::new(brush.material, occ.max(old.solid_occupancy()))
            }
        },
    )
    .unwrap();
    grid
}

fn erosion(mode: BrushMode) -> (Brush, BrushOptions) {
    (
        Brush {
            mode,
            radius_cells: 16.0,
            strength: 1.0,
            material: Material::GRASS,
            ignore_water: false,
        },
        BrushOptions {
            erosion_iterations: 16,
            ..BrushOptions::default()
        },
    )
}

#[test]
fn hydraulic_erode_cuts_downhill_and_deposits_sand() {
    let mut grid = slope();
    let before = grid.content_hash();
    let (brush, options) = erosion(BrushMode::HydraulicErode);
    let centre = DVec3::new(72.0, 12.0, 64.0) * CELL_SIZE_STUDS as f64;
    let top = |grid: &Grid, x: i32, z: i32| {
        (0..80)
            .map(|y| f32::from(grid.cell(CellCoord(IVec3::new(x, y, z))).solid_occupancy()))
            .sum::<f32>()
            / 255.0
    };
    let old: Vec<f32> = (56..90)
        .flat_map(|x| (48..80).map(move |z| (x, z)))
        .map(|(x, z)| top(&grid, x, z))
        .collect();
    let report = apply_tool(&mut grid, &brush, &options, centre).unwrap();
    assert!(report.is_change(), "{report:?}");
    let new: Vec<f32> = (56..90)
        .flat_map(|x| (48..80).map(move |z| (x, z)))
        .map(|(x, z)| top(&grid, x, z))
        .collect();
    let deepest = old.iter().zip(&new).map(|(a, b)| a - b).fold(0.0, f32::max);
    assert!(deepest > 0.3, "gullies {deepest} cells deep");
    let highest = old.iter().zip(&new).map(|(a, b)| b - a).fold(0.0, f32::max);
    assert!(highest > 0.05, "deposits {highest} cells high");
    assert!(
        deepest < 8.0,
        "one application cuts gullies, not canyons: {deepest}"
    );
    assert_ne!(grid.content_hash(), before);
    let sand = (0..128)
        .flat_map(|x| (0..128).map(move |z| (x, z)))
        .flat_map(|(x, z)| (0..80).map(move |y| IVec3::new(x, y, z)))
        .filter(|&c| grid.cell(CellCoord(c)).material() == Material::SAND)
        .count();
    assert!(sand > 0, "no deposit");
}

#[test]
fn thermal_erode_lowers_a_cliff_top_and_fills_its_foot() {
    let mut grid = flat_world(96, 8).unwrap();
    // A 12-cell tall block: a cliff all round.
    grid.edit_region(
        CellBox::new(IVec3::new(40, 8, 40), IVec3::new(56, 20, 56)),
        |_, _| Cell::full(Material::DIRT),
    )
    .unwrap();
    let (brush, options) = erosion(BrushMode::ThermalErode);
    let centre = DVec3::new(48.0, 20.0, 48.0) * CELL_SIZE_STUDS as f64;
    apply_tool(&mut grid, &brush, &options, centre).unwrap();
    let edge_top = grid.cell(CellCoord(IVec3::new(40, 19, 48)));
    assert!(edge_top.solid_occupancy() < 255, "the rim slumped");
    let foot = grid.cell(CellCoord(IVec3::new(38, 8, 48)));
    assert_eq!(foot.material(), Material::GRAVEL, "scree at the foot");
}

/// The default world's script input that failed: a stroke at a
/// centre whose brush box is 35 × 36 columns (a non-square plan), and
/// changes outside the box the history recorded.
#[test]
fn a_stroke_at_any_centre_is_one_undo_step_that_restores_the_world() {
    use strata::terrain::command::brush_stroke::StrokeInProgress;
    use strata::terrain::command::history::History;
    let mut grid = slope();
    let before = grid.content_hash();
    let (brush, options) = erosion(BrushMode::HydraulicErode);
    for centre in [
        DVec3::new(290.3, 60.7, 255.9),
        DVec3::new(2000.0 / 8.0, 45.0, 1360.0 / 8.0),
    ] {
        let b = erosion_box(&brush, centre).unwrap();
        assert_eq!(b.max.x - b.min.x, b.max.z - b.min.z, "{b:?}");
    }
    let mut history = History::new(64 << 20);
    let mut stroke = StrokeInProgress::begin(brush, options, 0.5).unwrap();
    stroke
        .advance(&mut grid, DVec3::new(290.3, 60.7, 255.9))
        .unwrap();
    stroke
        .advance(&mut grid, DVec3::new(270.1, 50.2, 240.6))
        .unwrap();
    assert!(stroke.finish(&mut history, &grid));
    assert_ne!(grid.content_hash(), before);
    history.undo(&mut grid).unwrap();
    assert_eq!(grid.content_hash(), before);
}

#[test]
fn hydraulic_erode_undercuts_a_face_whose_foot_runs_wet() {
    // A 10-cell step across a slope: water runs down the lower ground
    // along the face's foot.
    let mut grid = flat_world(128, 8).unwrap();
    grid.edit_region(
        CellBox::new(IVec3::new(0, 0, 0), IVec3::new(128, 40, 128)),
        |c, old| {
            let ground = 8.0 + f64::from(c.0.z) * 0.2;
            let h = if c.0.x >= 64 { ground + 10.0 } else { ground };
            let occ = ((h - f64::from(c.0.y)).clamp(0.0, 1.0) * 255.0).round() as u8;
            if occ == 0 {
                old
            } else {
                Cell::new(Material::DIRT, occ.max(old.solid_occupancy()))
            }
        },
    )
    .unwrap();
    let (brush, mut options) = erosion(BrushMode::HydraulicErode);
    options.erosion_iterations = 64;
    let centre = DVec3::new(62.0, 18.0, 64.0) * CELL_SIZE_STUDS as f64;
    apply_tool(&mut grid, &brush, &options, centre).unwrap();
    // Solid over a cell that is not: an overhang, in the face's columns.
    let overhangs = (0..128)
        .flat_map(|z| (50..80).map(move |x| (x, z)))
        .flat_map(|(x, z)| (1..40).map(move |y| IVec3::new(x, y, z)))
        .filter(|&c| {
            grid.cell(CellCoord(c)).is_inside() && !grid.cell(CellCoord(c - IVec3::Y)).is_inside()
        })
        .count();
    assert!(overhangs > 0, "no undercut");
}

#[test]
fn bad_iterations_change_nothing() {
    let mut grid = slope();
    let before = grid.content_hash();
    let (brush, mut options) = erosion(BrushMode::ThermalErode);
    options.erosion_iterations = 0;
    let centre = DVec3::new(256.0, 200.0, 256.0);
    assert!(apply_tool(&mut grid, &brush, &options, centre).is_err());
    assert_eq!(grid.content_hash(), before);
}
