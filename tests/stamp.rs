//! The stamp tool's core: height and cell stamps placed at any
//! angle and size through the one edit-command path, their files, and
//! scripted stamps replayed by the binary.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use glam::{DVec2, IVec3};
use strata::io::world::stamp_file::{
    StampFileError, decode_cell_stamp, encode_cell_stamp, list_stamps, read_height_stamp,
    read_stamp, save_cell_stamp, thumbnail_rgba,
};
use strata::io::world::world_file::{self, LoadOptions};
use strata::terrain::command::edit_command::{
    CommandError, CommandOutcome, EditCommand, EditSession,
};
use strata::terrain::editing::region::{self, Clipboard};
use strata::terrain::generation::generate::{GeneratorSettings, flat_world, generate_world};
use strata::terrain::stamp::definition::{
    Stamp, StampBase, StampError, StampKind, StampMode, StampPlacement,
};
use strata::terrain::stamp::press::{apply_stamp, surface_height_cells};
use strata::terrain::storage::cell::{Cell, Material};
use strata::terrain::storage::coords::{CellBox, CellCoord};
use strata::terrain::storage::grid::{Grid, GridError};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-stamp-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A 6 × 4 × 4 box of distinct cells (materials and occupancies vary with
/// position, a quarter of them empty).
fn distinct_clipboard() -> Clipboard {
    let size = IVec3::new(6, 4, 4);
    let solids: Vec<Material> = Material::solids().collect();
    let cells = (0..size.x * size.y * size.z)
        .map(|i| {
            if i % 4 == 3 {
                Cell::EMPTY
            } else {
                Cell::new(solids[i as usize % solids.len()], (40 + i * 7 % 215) as u8)
            }
        })
        .collect();
    Clipboard::from_cells(size, cells).unwrap()
}

fn cell_placement(stamp: &Stamp, centre: DVec2, base: f64, mode: StampMode) -> StampPlacement {
    StampPlacement {
        mode,
        ..stamp.native_placement(centre, StampBase::Cells(base))
    }
}

/// Every cell of `region` in `a` and `b`, compared one by one.
fn assert_same_cells(a: &Grid, b: &Grid, region: CellBox) {
    for z in region.min.z..region.max.z {
        for y in region.min.y..region.max.y {
            for x in region.min.x..region.max.x {
                let c = CellCoord::new(x, y, z);
                assert_eq!(a.cell(c), b.cell(c), "cell {x},{y},{z}");
            }
        }
    }
}

#[test]
fn a_cell_stamp_at_quarter_turns_equals_the_rotated_clipboard_cell_for_cell() {
    let clip = distinct_clipboard();
    let stamp = Stamp::cells("block", clip.clone()).unwrap();
    let centre = DVec2::new(100.0, 200.0);
    for turns in 0..4u8 {
        for mode in [StampMode::Replace, StampMode::Add, StampMode::RaiseTo] {
            let mut stamped = Grid::new();
            let placement = StampPlacement {
                rotation_deg: 90.0 * f64::from(turns),
                ..cell_placement(&stamp, centre, 10.0, mode)
            };
            let report = apply_stamp(&mut stamped, &stamp, &placement).unwrap();
            assert!(report.is_change());
            let turned = clip.rotated(turns);
            let s = turned.size();
            let at = IVec3::new(100 - s.x / 2, 10, 200 - s.z / 2);
            let mut pasted = Grid::new();
            region::paste(&mut pasted, &clip, at, turns).unwrap();
            assert_eq!(
                stamped.content_hash(),
                pasted.content_hash(),
                "{turns} turns, {mode:?}"
            );
            assert_same_cells(&stamped, &pasted, CellBox::new(at, at + s).expanded(2));
        }
    }
    // -270° is +90°, and 360° is 0°.
    let mut a = Grid::new();
    let mut b = Grid::new();
    let p = cell_placement(&stamp, centre, 10.0, StampMode::Replace);
    apply_stamp(
        &mut a,
        &stamp,
        &StampPlacement {
            rotation_deg: -270.0,
            ..p
        },
    )
    .unwrap();
    apply_stamp(
        &mut b,
        &stamp,
        &StampPlacement {
            rotation_deg: 90.0,
            ..p
        },
    )
    .unwrap();
    assert_eq!(a.content_hash(), b.content_hash());
}

#[test]
fn cell_stamp_modes_combine_occupancy_as_documented() {
    // One column of three cells: full rock, half sand, empty.
    let cells = vec![
        Cell::full(Material::ROCK),
        Cell::new(Material::SAND, 128),
        Cell::EMPTY,
    ];
    let clip = Clipboard::from_cells(IVec3::new(1, 3, 1), cells).unwrap();
    let stamp = Stamp::cells("col", clip).unwrap();
    // The terrain: the same column holds 100 of slate in every cell.
    let fresh = || {
        let mut g = Grid::new();
        region::fill(
            &mut g,
            CellBox::new(IVec3::new(0, 0, 0), IVec3::new(1, 3, 1)),
            Material::SLATE,
            100,
            false,
        )
        .unwrap();
        g
    };
    let centre = DVec2::new(0.5, 0.5);
    let run = |mode: StampMode| {
        let mut g = fresh();
        apply_stamp(&mut g, &stamp, &cell_placement(&stamp, centre, 0.0, mode)).unwrap();
        (0..3)
            .map(|y| g.cell(CellCoord::new(0, y, 0)))
            .collect::<Vec<_>>()
    };
    let slate = |o| Cell::new(Material::SLATE, o);
    // Add sums (a solid cell fills up in its own material).
    assert_eq!(
        run(StampMode::Add),
        vec![slate(255), slate(228), slate(100)]
    );
    // Subtract removes the stamp's occupancy.
    assert_eq!(
        run(StampMode::Subtract),
        vec![Cell::EMPTY, Cell::EMPTY, slate(100)]
    );
    // RaiseTo: the larger, in the stamp's material where the stamp wins.
    assert_eq!(
        run(StampMode::RaiseTo),
        vec![
            Cell::full(Material::ROCK),
            Cell::new(Material::SAND, 128),
            slate(100)
        ]
    );
    // LowerTo: the smaller.
    assert_eq!(
        run(StampMode::LowerTo),
        vec![slate(100), slate(100), Cell::EMPTY]
    );
    // Replace: the stamp's cells, empty ones too.
    assert_eq!(
        run(StampMode::Replace),
        vec![
            Cell::full(Material::ROCK),
            Cell::new(Material::SAND, 128),
            Cell::EMPTY
        ]
    );
    // A material override paints every solid cell the stamp writes.
    let mut g = fresh();
    let p = StampPlacement {
        material: Some(Material::SNOW),
        ..cell_placement(&stamp, centre, 0.0, StampMode::Replace)
    };
    apply_stamp(&mut g, &stamp, &p).unwrap();
    assert_eq!(
        g.cell(CellCoord::new(0, 1, 0)),
        Cell::new(Material::SNOW, 128)
    );
    // Twice the size: each stamp cell covers 2×2×2 cells.
    let mut g = Grid::new();
    let p = StampPlacement {
        radius_cells: 1.0,
        height_scale_cells: 6.0,
        ..cell_placement(&stamp, DVec2::new(1.0, 1.0), 0.0, StampMode::Replace)
    };
    apply_stamp(&mut g, &stamp, &p).unwrap();
    for (x, y, z) in [(0, 0, 0), (1, 1, 1), (0, 1, 1)] {
        assert_eq!(g.cell(CellCoord::new(x, y, z)), Cell::full(Material::ROCK));
    }
    assert_eq!(
        g.cell(CellCoord::new(1, 3, 0)),
        Cell::new(Material::SAND, 128)
    );
    assert_eq!(g.cell(CellCoord::new(1, 4, 1)), Cell::EMPTY);
    assert_eq!(g.cell(CellCoord::new(2, 0, 0)), Cell::EMPTY);
}

/// A height stamp of `w × h` samples, each distinct.
fn distinct_height_stamp(name: &str, w: u32, h: u32) -> (Vec<f32>, Stamp) {
    let samples: Vec<f32> = (0..w * h)
        .map(|i| ((i * 37) % 101) as f32 / 100.0)
        .collect();
    (samples.clone(), Stamp::height(name, w, h, samples).unwrap())
}

#[test]
fn a_height_stamp_at_90_degrees_equals_the_turned_image_cell_for_cell() {
    let (w, h) = (16u32, 8u32);
    let (samples, stamp) = distinct_height_stamp("ramp", w, h);
    // The image turned as Clipboard::rotated turns cells: (x, z) -> (h − 1 − z, x).
    let mut turned = vec![0.0f32; samples.len()];
    for z in 0..h {
        for x in 0..w {
            let (tx, tz) = (h - 1 - z, x);
            turned[(tz * h + tx) as usize] = samples[(z * w + x) as usize];
        }
    }
    let turned_stamp = Stamp::height("ramp", h, w, turned).unwrap();
    let world = flat_world(64, 20).unwrap();
    let centre = DVec2::new(32.0, 32.0);
    for mode in [StampMode::Add, StampMode::Subtract, StampMode::Replace] {
        let placement = StampPlacement {
            centre_xz_cells: centre,
            base: StampBase::Cells(18.0),
            rotation_deg: 90.0,
            radius_cells: 8.0,
            height_scale_cells: 6.0,
            falloff_fraction: 0.0,
            mode,
            material: Some(Material::SAND),
        };
        let mut a = world.clone();
        apply_stamp(&mut a, &stamp, &placement).unwrap();
        let mut b = world.clone();
        apply_stamp(
            &mut b,
            &turned_stamp,
            &StampPlacement {
                rotation_deg: 0.0,
                ..placement
            },
        )
        .unwrap();
        assert_ne!(a.content_hash(), world.content_hash(), "{mode:?}");
        assert_eq!(a.content_hash(), b.content_hash(), "{mode:?}");
        assert_same_cells(
            &a,
            &b,
            CellBox::new(IVec3::new(20, 0, 20), IVec3::new(44, 40, 44)),
        );
    }
    // At one pixel per cell and no turn, each column rises by its own sample.
    let mut g = world.clone();
    let p = StampPlacement {
        centre_xz_cells: centre,
        base: StampBase::Cells(0.0),
        rotation_deg: 0.0,
        radius_cells: 8.0,
        height_scale_cells: 6.0,
        falloff_fraction: 0.0,
        mode: StampMode::Add,
        material: None,
    };
    apply_stamp(&mut g, &stamp, &p).unwrap();
    for (px, pz) in [(3u32, 2u32), (10, 5), (7, 4)] {
        let (x, z) = (24 + px as i32, 28 + pz as i32);
        let want = 20.0 + 6.0 * f64::from(samples[(pz * w + px) as usize]);
        let got = surface_height_cells(&g, x, z).unwrap();
        // Steep between distinct samples: the ramp reading is within ~1/(8 r).
        assert!((got - want).abs() < 0.1, "{x},{z}: {got} vs {want}");
    }
}

/// A flat world with ground at 20 and a stamp of all ones, 16 × 16 cells.
fn plateau() -> (Grid, Stamp, StampPlacement) {
    let stamp = Stamp::height("plateau", 8, 8, vec![1.0; 64]).unwrap();
    let placement = StampPlacement {
        centre_xz_cells: DVec2::new(32.0, 32.0),
        base: StampBase::Cells(0.0),
        rotation_deg: 0.0,
        radius_cells: 8.0,
        height_scale_cells: 5.0,
        falloff_fraction: 0.0,
        mode: StampMode::Add,
        material: None,
    };
    (flat_world(64, 20).unwrap(), stamp, placement)
}

#[test]
fn each_height_mode_sets_the_documented_surface_on_a_flat_world() {
    let (world, stamp, p) = plateau();
    let height_after = |p: StampPlacement| {
        let mut g = world.clone();
        apply_stamp(&mut g, &stamp, &p).unwrap();
        let inside = surface_height_cells(&g, 32, 32).unwrap();
        let outside = surface_height_cells(&g, 20, 32).unwrap();
        (inside, outside, g)
    };
    for (mode, base, want) in [
        (StampMode::Add, 0.0, 25.0),
        (StampMode::Subtract, 0.0, 15.0),
        (StampMode::RaiseTo, 22.0, 27.0),
        (StampMode::RaiseTo, 10.0, 20.0),
        (StampMode::LowerTo, 10.0, 15.0),
        (StampMode::LowerTo, 30.0, 20.0),
        (StampMode::Replace, 8.0, 13.0),
        (StampMode::Replace, 30.5, 35.5),
    ] {
        let (inside, outside, _) = height_after(StampPlacement {
            mode,
            base: StampBase::Cells(base),
            ..p
        });
        // Within half a 255th: the top cell's occupancy is rounded.
        assert!(
            (inside - want).abs() <= 0.5 / 255.0 + 1e-9,
            "{mode:?} on {base}: {inside} vs {want}"
        );
        assert_eq!(outside, 20.0, "{mode:?}: outside the footprint");
    }
    // Added solid takes the column's top material (grass), or the override.
    let (_, _, g) = height_after(p);
    assert_eq!(
        g.cell(CellCoord::new(32, 22, 32)),
        Cell::full(Material::GRASS)
    );
    // The dirt under the old surface is untouched.
    assert_eq!(
        g.cell(CellCoord::new(32, 17, 32)),
        Cell::full(Material::DIRT)
    );
    let (_, _, g) = height_after(StampPlacement {
        material: Some(Material::SAND),
        ..p
    });
    assert_eq!(
        g.cell(CellCoord::new(32, 22, 32)),
        Cell::full(Material::SAND)
    );
    // The surface under the centre as the base: Replace with h lifts it by h.
    let (inside, _, _) = height_after(StampPlacement {
        mode: StampMode::Replace,
        base: StampBase::SurfaceUnderCentre,
        ..p
    });
    assert!((inside - 25.0).abs() < 1e-9, "{inside}");
    // A full falloff blends: at the centre column the weight is
    // smoothstep(1 − 0.5/8) = 0.98877.
    let (inside, _, _) = height_after(StampPlacement {
        falloff_fraction: 1.0,
        ..p
    });
    let t: f64 = 1.0 - 0.5 / 8.0;
    let want = 20.0 + 5.0 * t * t * (3.0 - 2.0 * t);
    // The blend slopes the surface (ramp 1.04 here), read within ~1/(8 r).
    assert!((inside - want).abs() < 0.03, "{inside} vs {want}");
    // A point near the edge, where the weight is small, rises a little.
    let t: f64 = (1.0 - 6.5 / 8.0) / 1.0;
    let edge_weight = t * t * (3.0 - 2.0 * t);
    let mut g = world.clone();
    apply_stamp(
        &mut g,
        &stamp,
        &StampPlacement {
            falloff_fraction: 1.0,
            ..p
        },
    )
    .unwrap();
    let edge = surface_height_cells(&g, 38, 32).unwrap();
    assert!((edge - (20.0 + 5.0 * edge_weight)).abs() < 0.1, "{edge}");
    // A fractional height reads back within a 255th.
    let (inside, _, _) = height_after(StampPlacement {
        height_scale_cells: 2.3,
        ..p
    });
    assert!((inside - 22.3).abs() < 0.5 / 255.0 + 1e-9, "{inside}");
}

#[test]
fn a_stamp_command_is_one_undo_step_that_restores_the_world_hash() {
    let (mut grid, stamp, placement) = plateau();
    let before = grid.content_hash();
    let mut session = EditSession::new(1 << 26, None);
    let command = EditCommand::Stamp {
        stamp: Arc::new(stamp),
        placement: StampPlacement {
            rotation_deg: 30.0,
            falloff_fraction: 0.5,
            ..placement
        },
    };
    assert_eq!(command.label(), "Stamp plateau (Add)");
    let out = session.apply(&mut grid, &command).unwrap();
    assert_eq!(out, CommandOutcome::Edited { changed: true });
    let after = grid.content_hash();
    assert_ne!(after, before);
    assert_eq!(session.history.undo_len(), 1);
    assert_eq!(
        session.history.undo_steps().last().unwrap().label(),
        "Stamp plateau (Add)"
    );
    session.apply(&mut grid, &EditCommand::Undo).unwrap();
    assert_eq!(grid.content_hash(), before);
    session.apply(&mut grid, &EditCommand::Redo).unwrap();
    assert_eq!(grid.content_hash(), after);
    // The command clones cheaply: the stamp is shared.
    let copy = command.clone();
    let (EditCommand::Stamp { stamp: a, .. }, EditCommand::Stamp { stamp: b, .. }) =
        (&command, &copy)
    else {
        unreachable!()
    };
    assert!(Arc::ptr_eq(a, b));
    // A 3D stamp too.
    let cells = Arc::new(Stamp::cells("block", distinct_clipboard()).unwrap());
    let at = cells.native_placement(DVec2::new(10.0, 10.0), StampBase::SurfaceUnderCentre);
    let command = EditCommand::Stamp {
        stamp: cells,
        placement: StampPlacement {
            rotation_deg: 17.0,
            ..at
        },
    };
    session.apply(&mut grid, &command).unwrap();
    assert_eq!(session.history.undo_len(), 2);
    assert_ne!(grid.content_hash(), after);
    session.apply(&mut grid, &EditCommand::Undo).unwrap();
    assert_eq!(grid.content_hash(), after);
}

#[test]
fn bad_stamp_input_is_refused_and_changes_nothing() {
    let (mut grid, stamp, p) = plateau();
    let before = grid.content_hash();
    let revision = grid.revision();
    let mut session = EditSession::new(1 << 26, None);
    let stamp = Arc::new(stamp);
    let refused = |session: &mut EditSession, grid: &mut Grid, p: StampPlacement| {
        let command = EditCommand::Stamp {
            stamp: stamp.clone(),
            placement: p,
        };
        match session.apply(grid, &command) {
            Err(CommandError::Stamp(e)) => e,
            other => panic!("{other:?}"),
        }
    };
    let cases: Vec<(StampPlacement, StampError)> = vec![
        (
            StampPlacement {
                radius_cells: f64::NAN,
                ..p
            },
            StampError::NonFinite("radius"),
        ),
        (
            StampPlacement {
                radius_cells: 0.0,
                ..p
            },
            StampError::Radius(0.0),
        ),
        (
            StampPlacement {
                radius_cells: 1e6,
                ..p
            },
            StampError::Radius(1e6),
        ),
        (
            StampPlacement {
                centre_xz_cells: DVec2::new(f64::INFINITY, 0.0),
                ..p
            },
            StampError::NonFinite("centre x"),
        ),
        (
            StampPlacement {
                falloff_fraction: -0.1,
                ..p
            },
            StampError::Falloff(-0.1),
        ),
        (
            StampPlacement {
                height_scale_cells: 5000.0,
                ..p
            },
            StampError::HeightScale(5000.0),
        ),
        (
            StampPlacement {
                material: Some(Material::AIR),
                ..p
            },
            StampError::InvalidMaterial(0),
        ),
        (
            StampPlacement {
                centre_xz_cells: DVec2::new(5000.0, 5000.0),
                base: StampBase::SurfaceUnderCentre,
                mode: StampMode::Replace,
                ..p
            },
            StampError::NoSurfaceUnderCentre {
                x: 5000.0,
                z: 5000.0,
            },
        ),
        (
            StampPlacement {
                centre_xz_cells: DVec2::new(2.0e9, 0.0),
                ..p
            },
            StampError::Position {
                x: 2.0e9,
                y: 0.0,
                z: 0.0,
            },
        ),
    ];
    for (placement, want) in cases {
        assert_eq!(refused(&mut session, &mut grid, placement), want);
    }
    // A footprint too large: Replace 980 cells up over 512² columns.
    let big = flat_world(512, 20).unwrap();
    let mut big_grid = big.clone();
    let e = apply_stamp(
        &mut big_grid,
        &stamp,
        &StampPlacement {
            centre_xz_cells: DVec2::new(256.0, 256.0),
            radius_cells: 256.0,
            mode: StampMode::Replace,
            base: StampBase::Cells(1000.0),
            height_scale_cells: 1.0,
            ..p
        },
    )
    .unwrap_err();
    assert!(matches!(e, StampError::FootprintTooLarge { .. }), "{e:?}");
    assert_eq!(big_grid.revision(), big.revision());
    // A 3D stamp as large as the limits allow in every direction is refused.
    let cells = Stamp::cells("block", distinct_clipboard()).unwrap();
    let e = apply_stamp(
        &mut grid,
        &cells,
        &StampPlacement {
            radius_cells: 512.0,
            height_scale_cells: 1024.0,
            ..cells.native_placement(DVec2::ZERO, StampBase::Cells(0.0))
        },
    )
    .unwrap_err();
    assert!(matches!(e, StampError::FootprintTooLarge { .. }), "{e:?}");
    // A streaming grid without the footprint's columns names them.
    let mut streaming = Grid::streaming();
    let e = session
        .apply(
            &mut streaming,
            &EditCommand::Stamp {
                stamp: stamp.clone(),
                placement: p,
            },
        )
        .unwrap_err();
    assert!(matches!(
        e,
        CommandError::Stamp(StampError::Grid(GridError::NotResident(_)))
    ));
    assert!(!e.missing_columns().unwrap().is_empty());
    assert_eq!(grid.content_hash(), before);
    assert_eq!(grid.revision(), revision);
    assert_eq!(session.history.undo_len(), 0);
}

fn write_gray8(path: &Path, w: u32, h: u32, f: impl Fn(u32, u32) -> u8) {
    let img = image::GrayImage::from_fn(w, h, |x, z| image::Luma([f(x, z)]));
    img.save(path).unwrap();
}

#[test]
fn grayscale_pngs_of_8_and_16_bits_load_and_bad_images_are_refused() {
    let dir = scratch("png");
    let p8 = dir.join("eight.png");
    write_gray8(&p8, 3, 2, |x, z| (x * 100 + z * 20) as u8);
    let s = read_height_stamp(&p8).unwrap();
    assert_eq!(s.name(), "eight");
    assert_eq!(s.kind(), StampKind::Height);
    assert_eq!(s.dims(), [3, 1, 2]);
    let strata::terrain::stamp::definition::StampShape::Height(h) = s.shape() else {
        panic!()
    };
    let want: Vec<f32> = [0u8, 100, 200, 20, 120, 220]
        .iter()
        .map(|&v| (f64::from(v) / 255.0) as f32)
        .collect();
    assert_eq!(h.samples(), want.as_slice());

    let p16 = dir.join("sixteen.png");
    let img = image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::from_raw(
        2,
        2,
        vec![0, 1000, 65535, 40000],
    )
    .unwrap();
    img.save(&p16).unwrap();
    let s = read_stamp(&p16).unwrap();
    let strata::terrain::stamp::definition::StampShape::Height(h) = s.shape() else {
        panic!()
    };
    assert_eq!(h.samples()[1], (1000.0f64 / 65535.0) as f32);
    assert_eq!(h.samples()[2], 1.0);

    // Colour is refused; so is a corrupt file and one too large.
    let colour = dir.join("colour.png");
    image::RgbImage::from_fn(2, 2, |x, _| image::Rgb([x as u8 * 200, 0, 0]))
        .save(&colour)
        .unwrap();
    let e = read_height_stamp(&colour).unwrap_err();
    assert!(
        matches!(&e, StampFileError::Image { message, .. } if message.contains("not grayscale")),
        "{e}"
    );
    let corrupt = dir.join("corrupt.png");
    std::fs::write(&corrupt, b"\x89PNG\r\n\x1a\nnot really").unwrap();
    assert!(matches!(
        read_height_stamp(&corrupt),
        Err(StampFileError::Image { .. })
    ));
    let wide = dir.join("wide.png");
    write_gray8(&wide, 4097, 1, |_, _| 7);
    assert!(matches!(
        read_height_stamp(&wide),
        Err(StampFileError::ImageTooLarge { width_px: 4097, .. })
    ));
    assert!(matches!(
        read_stamp(&dir.join("missing.png")),
        Err(StampFileError::Read { .. })
    ));
    assert!(matches!(
        read_stamp(&dir.join("notes.txt")),
        Err(StampFileError::UnknownExtension(_))
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cell_stamp_files_round_trip_and_damaged_ones_are_refused() {
    let dir = scratch("cells");
    let clip = distinct_clipboard();
    let path = dir.join("block.stamp");
    save_cell_stamp(&path, &clip).unwrap();
    let s = read_stamp(&path).unwrap();
    assert_eq!(s.name(), "block");
    assert_eq!(s.dims(), [6, 4, 4]);
    let strata::terrain::stamp::definition::StampShape::Cells(read) = s.shape() else {
        panic!()
    };
    assert_eq!(read, &clip);

    let good = encode_cell_stamp(&clip);
    let corrupt = |bytes: Vec<u8>| match decode_cell_stamp(&bytes, Path::new("x.stamp")) {
        Err(StampFileError::Corrupt { reason, .. }) => reason,
        other => panic!("{other:?}"),
    };
    assert!(corrupt(good[..20].to_vec()).contains("header"));
    let mut magic = good.clone();
    magic[0] = b'X';
    assert!(corrupt(magic).contains("STRATA3D"));
    let mut version = good.clone();
    version[8] = 2;
    assert!(corrupt(version).contains("version 2"));
    let mut huge = good.clone();
    huge[12..16].copy_from_slice(&100_000u32.to_le_bytes());
    assert!(corrupt(huge).contains("outside"));
    let mut zero = good.clone();
    zero[16..20].copy_from_slice(&0u32.to_le_bytes());
    assert!(corrupt(zero).contains("outside"));
    let mut checksum = good.clone();
    checksum[24] ^= 1;
    assert!(corrupt(checksum).contains("checksum"));
    let mut cut = good.clone();
    cut.truncate(good.len() - 3);
    assert!(corrupt(cut).contains("decompress"));
    // A size that claims more cells than the data holds.
    let mut bigger = good.clone();
    bigger[12..16].copy_from_slice(&7u32.to_le_bytes());
    let reason = corrupt(bigger);
    assert!(
        reason.contains("bytes of cells") || reason.contains("decompress"),
        "{reason}"
    );
    // A library material's id (every id is a material; the world's
    // library names it), with a correct checksum, reads back as that id.
    let mut raw: Vec<u8> = clip.cells().iter().flat_map(|c| c.to_bytes()).collect();
    raw[0] = 200;
    raw[1] = 255;
    let mut library_id = good[..24].to_vec();
    library_id.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&raw).to_le_bytes());
    library_id.extend_from_slice(&zstd::bulk::compress(&raw, 3).unwrap());
    let read = decode_cell_stamp(&library_id, Path::new("x.stamp")).expect("a library id");
    let strata::terrain::stamp::definition::StampShape::Cells(cells) = read.shape() else {
        panic!()
    };
    assert_eq!(cells.cells()[0], Cell::new(Material(200), 255));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_library_lists_the_shipped_and_user_stamps_from_their_headers() {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/stamps");
    let user = scratch("library");
    write_gray8(&user.join("mine.png"), 40, 30, |x, _| x as u8);
    std::fs::write(user.join("broken.stamp"), b"nope").unwrap();
    std::fs::write(user.join("readme.txt"), b"ignored").unwrap();
    let library = list_stamps(&[&shipped, &user, Path::new("/no/such/dir")]);
    let names: Vec<&str> = library.stamps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "canyon_segment",
            "cliff_arch",
            "crater",
            "dunes",
            "eroded_hill",
            "mesa",
            "mine",
            "ridge",
            "volcano"
        ]
    );
    let arch = &library.stamps[1];
    assert_eq!(arch.kind, StampKind::Cells);
    assert_eq!(arch.dims, [48, 40, 16]);
    assert_eq!(library.stamps[6].dims, [40, 1, 30]);
    assert_eq!(library.refused.len(), 1);
    assert!(library.refused[0].0.ends_with("broken.stamp"));
    // Every shipped stamp loads, is under 1 MB, and its dims match its header.
    for listing in library
        .stamps
        .iter()
        .filter(|s| s.path.starts_with(&shipped))
    {
        let stamp = read_stamp(&listing.path).unwrap();
        assert_eq!(stamp.dims(), listing.dims, "{}", listing.name);
        assert!(std::fs::metadata(&listing.path).unwrap().len() < 1 << 20);
        let thumb = thumbnail_rgba(&stamp, 64);
        assert_eq!(thumb.len(), 64 * 64 * 4);
        // Something shows: not all one gray.
        let grays: std::collections::BTreeSet<u8> = thumb.chunks(4).map(|p| p[0]).collect();
        assert!(grays.len() > 8, "{}: {} grays", listing.name, grays.len());
    }
    let _ = std::fs::remove_dir_all(&user);
}

#[test]
fn the_shipped_arch_has_a_hole_under_its_span() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/stamps/cliff_arch.stamp");
    let stamp = read_stamp(&path).unwrap();
    let strata::terrain::stamp::definition::StampShape::Cells(clip) = stamp.shape() else {
        panic!()
    };
    let inside = |x, y, z| clip.get(IVec3::new(x, y, z)).is_inside();
    // Under the middle of the span: open from the ground up, then rock above.
    assert!((0..20).all(|y| !inside(24, y, 8)));
    assert!((30..36).all(|y| inside(24, y, 8)));
    // The pillars stand on the ground.
    assert!(inside(4, 1, 8) && inside(44, 1, 8));
}

#[test]
fn a_scripted_stamp_replays_headless_like_in_process() {
    let dir = scratch("script");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/stamps/crater.png"),
        dir.join("my_crater.png"),
    )
    .unwrap();
    let script_path = dir.join("stamps.json");
    std::fs::write(
        &script_path,
        r#"{"strokes": [
            {"frame": 0, "tool": "stamp", "stamp": "my_crater.png", "centre_xz": [256, 256],
             "radius_cells": 40, "rotation_deg": 25, "height_scale_cells": 12,
             "edge_falloff": 0.2, "mode": "add"},
            {"frame": 1, "tool": "stamp", "stamp": "cliff_arch.stamp", "centre_xz": [300, 200],
             "radius_cells": 24, "rotation_deg": 90, "mode": "raise_to", "material": "slate"},
            {"frame": 2, "tool": "stamp", "stamp": "mesa.png", "centre_xz": [150, 300],
             "radius_cells": 20, "mode": "replace", "base_cells": 40, "height_scale_cells": 10}
        ]}"#,
    )
    .unwrap();
    let settings = GeneratorSettings {
        seed: 7,
        size_cells: 128,
    };
    let script = strata::script::Script::load(&script_path).unwrap();
    assert_eq!(script.strokes.len(), 3);
    let mut world = strata::app::world_outputs::OpenedWorld::from_grid(
        generate_world(&settings).unwrap(),
        strata::io::world::world_file::WorldMeta::generated(&settings),
    );
    let unedited = world.grid.content_hash();
    let edits = strata::app::world_outputs::apply_script(&script, &mut world, None).unwrap();
    assert_eq!(edits, 3);
    let expected = world.grid;
    let world = dir.join("w.strata");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
        .args([
            "--headless",
            "--seed",
            "7",
            "--world-size",
            "128",
            "--script",
        ])
        .arg(&script_path)
        .arg("--save")
        .arg(&world)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("3 changed the world"));
    let (loaded, _, _) = world_file::load(&world, LoadOptions::default()).unwrap();
    assert_eq!(loaded.content_hash(), expected.content_hash());
    assert_ne!(loaded.content_hash(), unedited);

    // Bad entries are refused when the script loads, naming the problem.
    for (entry, needle) in [
        (
            r#""stamp": "nowhere.png", "centre_xz": [1, 1], "radius_cells": 4"#,
            "cannot use stamp",
        ),
        (
            r#""stamp": "crater.png", "centre_xz": [1, 1]"#,
            "radius_cells",
        ),
        (r#""stamp": "crater.png", "radius_cells": 4"#, "centre_xz"),
        (
            r#""stamp": "crater.png", "centre_xz": [1, 1], "radius_cells": 4, "mode": "melt""#,
            "unknown stamp mode",
        ),
        (
            r#""stamp": "crater.png", "centre_xz": [1, 1], "radius_cells": 4, "edge_falloff": 3"#,
            "falloff",
        ),
        (
            r#""stamp": "crater.png", "centre_xz": [1, 1], "radius_cells": 4, "strength": 1"#,
            "strength is not used by stamp",
        ),
        (
            r#""stamp": "crater.png", "centre_xz": [1, 1], "radius_cells": 4, "material": "water""#,
            "not a solid material",
        ),
    ] {
        let text = format!(r#"{{"strokes": [{{"frame": 0, "tool": "stamp", {entry}}}]}}"#);
        let e = strata::script::Script::parse_in(&text, "s.json", Some(dir.clone()))
            .unwrap_err()
            .to_string();
        assert!(e.contains(needle), "{entry}: {e}");
    }
    // Stamp fields on a brush are refused too.
    let e = strata::script::Script::parse(
        r#"{"strokes": [{"frame": 0, "tool": "add", "centre": [1, 2, 3], "radius_cells": 4,
            "rotation_deg": 5}]}"#,
        "s.json",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("rotation_deg is not used by add"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The top of the highest water in cell column `(x, z)`, cells.
fn water_top_cells(g: &Grid, x: i32, z: i32) -> Option<f64> {
    (0..96).rev().find_map(|y| {
        let w = g.cell(CellCoord(IVec3::new(x, y, z))).water_occupancy();
        (w > 0).then(|| f64::from(y) + f64::from(w) / 255.0)
    })
}

/// A flat world (ground at 20) with water over `[x0, x1) × [z0, z1)` from
/// `bed_cells` (the ground carved down to it) up to `water_cells`.
fn with_water(bed_cells: i32, water_cells: i32, lo: (i32, i32), hi: (i32, i32)) -> Grid {
    let mut g = flat_world(128, 20).unwrap();
    let region = CellBox::new(
        IVec3::new(lo.0, bed_cells, lo.1),
        IVec3::new(hi.0, water_cells.max(20), hi.1),
    );
    g.edit_region(region, |c, _| {
        if c.0.y < water_cells {
            Cell::new(Material::WATER, 255)
        } else {
            Cell::EMPTY
        }
    })
    .unwrap();
    g
}

/// The input that drained a river: the shipped crater (Add, radius 32
/// cells, height 16) pressed beside a channel 2 cells deep. Every channel
/// column keeps 2 cells of water over its new bed (the skirt raised the bed
/// by up to 16 cells, which buried the water before), and no bank gains
/// water.
#[test]
fn a_crater_beside_a_river_keeps_the_river() {
    let mut g = with_water(18, 20, (0, 60), (128, 66));
    let stamp = read_stamp(&Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/stamps/crater.png"))
        .unwrap();
    let p = StampPlacement {
        centre_xz_cells: DVec2::new(64.0, 40.0),
        base: StampBase::SurfaceUnderCentre,
        rotation_deg: 0.0,
        radius_cells: 32.0,
        height_scale_cells: 16.0,
        falloff_fraction: 0.0,
        mode: StampMode::Add,
        material: None,
    };
    apply_stamp(&mut g, &stamp, &p).unwrap();
    let (mut raised, mut buried_before) = (0, 0);
    for z in 56..70 {
        for x in 0..128 {
            let ground = surface_height_cells(&g, x, z).unwrap();
            let water = water_top_cells(&g, x, z);
            if (60..66).contains(&z) {
                let water = water.unwrap_or_else(|| {
                    panic!(
                        "({x}, {z}) drained: {:?}",
                        (14..40)
                            .map(|y| g.cell(CellCoord(IVec3::new(x, y, z))))
                            .collect::<Vec<_>>()
                    )
                });
                // As deep as it was, a little more over a steep ramp
                // (its partly solid cells hold no water).
                assert!(
                    (1.8..=4.0).contains(&(water - ground)),
                    "({x}, {z}): water {water} over ground {ground}"
                );
                if ground > 18.01 {
                    raised += 1;
                }
                if ground >= 20.0 {
                    buried_before += 1;
                }
            } else {
                assert_eq!(water, None, "({x}, {z}) is a bank");
            }
        }
    }
    // The crater reaches the channel: of the 384 columns under its square
    // footprint, those inside its round skirt were raised (214), many of
    // them above the old water (which buried the river before).
    assert!(raised >= 200, "{raised} channel columns raised");
    assert!(
        buried_before >= 90,
        "{buried_before} raised above the old water"
    );
}

/// A Subtract stamp under a lake: the carved ground fills with the lake's
/// water up to its old level (no air under the water); deep water over a
/// raised floor keeps its level (no mound), and a floor raised out of deep
/// water stays dry (no film on top).
#[test]
fn water_over_a_stamp_fills_the_carved_ground_and_keeps_its_level() {
    let (_, stamp, p) = plateau();
    let lake = || with_water(20, 26, (16, 16), (48, 48));
    let column = |g: &Grid| -> Vec<Cell> {
        (0..30)
            .map(|y| g.cell(CellCoord(IVec3::new(32, y, 32))))
            .collect()
    };
    let mut g = lake();
    let subtract = StampPlacement {
        mode: StampMode::Subtract,
        height_scale_cells: 3.0,
        ..p
    };
    apply_stamp(&mut g, &stamp, &subtract).unwrap();
    let cells = column(&g);
    assert!((surface_height_cells(&g, 32, 32).unwrap() - 17.0).abs() < 0.01);
    for (y, cell) in cells.iter().enumerate().take(26).skip(17) {
        assert_eq!(*cell, Cell::new(Material::WATER, 255), "row {y}: {cells:?}");
    }
    assert_eq!(water_top_cells(&g, 32, 32), Some(26.0));

    let raised = |height_scale_cells: f64| {
        let mut g = lake();
        let placement = StampPlacement {
            height_scale_cells,
            ..p
        };
        apply_stamp(&mut g, &stamp, &placement).unwrap();
        g
    };
    // Raised under deep water (6 cells), not out of it: the level stays.
    let g = raised(3.0);
    assert!((surface_height_cells(&g, 32, 32).unwrap() - 23.0).abs() < 0.01);
    assert_eq!(water_top_cells(&g, 32, 32), Some(26.0));

    // Raised out of deep water: displaced, dry on top.
    let g = raised(10.0);
    assert!((surface_height_cells(&g, 32, 32).unwrap() - 30.0).abs() < 0.01);
    assert_eq!(water_top_cells(&g, 32, 32), None);
    // Beside the stamp the lake is as it was.
    assert_eq!(water_top_cells(&g, 20, 20), Some(26.0));
}
