//! The brush kernels through their public entry points (`apply_brush`,
//! `apply_tool`): every tool's effect on hand-built grids, shape fields and
//! falloff, the water guard, input checks, and convergence of weak
//! strengths.

use glam::{DVec3, IVec3};
use strata::terrain::editing::brush::{
    Brush, BrushMode, BrushOptions, BrushShape, EditError, Falloff, FlattenLimit, FlattenPlane,
};
use strata::terrain::editing::kernels::{apply_brush, apply_tool};
use strata::terrain::storage::cell::{Cell, Material};
use strata::terrain::storage::coords::{
    CELL_SIZE_STUDS, CellBox, CellCoord, LATTICE_CELLS, MAX_CELL_COORD, MIN_CELL_COORD,
};
use strata::terrain::storage::grid::Grid;

fn brush(mode: BrushMode) -> Brush {
    Brush {
        mode,
        radius_cells: 3.0,
        strength: 1.0,
        material: Material::SAND,
        ignore_water: false,
    }
}

#[test]
fn add_fills_sphere_with_brush_material_then_subtract_clears_it() {
    let mut g = Grid::new();
    let centre = DVec3::splat(2.0); // inside cell (0,0,0)
    let r = apply_brush(&mut g, &brush(BrushMode::Add), centre).unwrap();
    assert!(r.is_change());
    assert_eq!(g.cell(CellCoord::new(0, 0, 0)), Cell::full(Material::SAND));
    assert_eq!(g.cell(CellCoord::new(-2, 0, 0)), Cell::full(Material::SAND));
    assert_eq!(g.cell(CellCoord::new(5, 0, 0)), Cell::EMPTY);
    // The ramp cell at distance 3 from the centre is half full.
    assert_eq!(g.cell(CellCoord::new(3, 0, 0)).occupancy(), 128);
    // Spans chunks -1 and 0 on every axis.
    assert_eq!(g.chunk_count(), 8);
    apply_brush(&mut g, &brush(BrushMode::Subtract), centre).unwrap();
    // Inside the sphere everything is gone; at most a sub-threshold film
    // (occupancy < 128, no surface) remains on the ramp.
    assert_eq!(g.cell(CellCoord::new(0, 0, 0)), Cell::EMPTY);
    assert_eq!(g.cell(CellCoord::new(-2, 0, 0)), Cell::EMPTY);
    for (coord, chunk) in g.chunks() {
        for z in 0..32 {
            for y in 0..32 {
                for x in 0..32 {
                    let c = chunk.cells.get(IVec3::new(x, y, z));
                    assert!(
                        !c.is_inside(),
                        "cell {x},{y},{z} of {coord:?} still inside: {c:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn add_keeps_existing_solid_material() {
    let mut g = Grid::new();
    g.edit_region(CellBox::new(IVec3::ZERO, IVec3::ONE), |_, _| {
        Cell::new(Material::ROCK, 10)
    })
    .unwrap();
    apply_brush(&mut g, &brush(BrushMode::Add), DVec3::splat(2.0)).unwrap();
    assert_eq!(g.cell(CellCoord::new(0, 0, 0)), Cell::full(Material::ROCK));
}

#[test]
fn weak_strength_converges() {
    let mut g = Grid::new();
    let b = Brush {
        strength: 0.05,
        ..brush(BrushMode::Add)
    };
    let mut steps = 0;
    while apply_brush(&mut g, &b, DVec3::splat(2.0))
        .unwrap()
        .is_change()
    {
        steps += 1;
        assert!(steps < 500, "brush never converged");
    }
    assert_eq!(g.cell(CellCoord::new(0, 0, 0)).occupancy(), 255);
}

/// Rock below row 0, water in rows 0..2, air above; 16 cells square.
fn lake() -> Grid {
    let mut g = Grid::new();
    g.edit_region(
        CellBox::new(IVec3::new(-8, -4, -8), IVec3::new(8, 4, 8)),
        |c, _| match c.0.y {
            y if y < 0 => Cell::full(Material::ROCK),
            0 | 1 => Cell::full(Material::WATER),
            _ => Cell::EMPTY,
        },
    )
    .unwrap();
    g
}

#[test]
fn water_brushes_fill_air_and_drain_water_but_never_touch_solid() {
    let mut g = lake();
    let add = Brush {
        mode: BrushMode::AddWater,
        material: Material::AIR, // unused by water modes
        ..brush(BrushMode::Add)
    };
    apply_brush(&mut g, &add, DVec3::new(2.0, 10.0, 2.0)).unwrap();
    assert_eq!(g.cell(CellCoord::new(0, 2, 0)), Cell::full(Material::WATER));
    assert_eq!(g.cell(CellCoord::new(0, -1, 0)), Cell::full(Material::ROCK));
    let remove = Brush {
        mode: BrushMode::RemoveWater,
        radius_cells: 6.0,
        ..add
    };
    apply_brush(&mut g, &remove, DVec3::new(2.0, 4.0, 2.0)).unwrap();
    assert_eq!(g.cell(CellCoord::new(0, 0, 0)), Cell::EMPTY);
    assert_eq!(g.cell(CellCoord::new(0, -1, 0)), Cell::full(Material::ROCK));
    assert_eq!(
        g.cell(CellCoord::new(-8, 0, -8)),
        Cell::full(Material::WATER)
    );
}

#[test]
fn ignore_water_leaves_water_cells_bit_identical() {
    let water_cells = |g: &Grid| -> Vec<Cell> {
        let mut v = Vec::new();
        for z in -8..8 {
            for x in -8..8 {
                for y in 0..2 {
                    v.push(g.cell(CellCoord::new(x, y, z)));
                }
            }
        }
        v
    };
    let sculpt = Brush {
        radius_cells: 5.0,
        ..brush(BrushMode::Add)
    };
    let mut g = lake();
    let before = water_cells(&g);
    let ignoring = Brush {
        ignore_water: true,
        ..sculpt
    };
    let r = apply_brush(&mut g, &ignoring, DVec3::new(2.0, 4.0, 2.0)).unwrap();
    assert!(r.is_change(), "air above the water is still filled");
    assert_eq!(water_cells(&g), before);
    // Without the option, Add replaces water with the brush material.
    let mut g = lake();
    apply_brush(&mut g, &sculpt, DVec3::new(2.0, 4.0, 2.0)).unwrap();
    assert_eq!(g.cell(CellCoord::new(0, 0, 0)), Cell::full(Material::SAND));
}

#[test]
fn bad_input_is_rejected_without_change() {
    let mut g = Grid::new();
    let nan_radius = Brush {
        radius_cells: f32::NAN,
        ..brush(BrushMode::Add)
    };
    assert!(matches!(
        apply_brush(&mut g, &nan_radius, DVec3::ZERO),
        Err(EditError::InvalidRadius(_))
    ));
    let zero_strength = Brush {
        strength: 0.0,
        ..brush(BrushMode::Add)
    };
    assert!(apply_brush(&mut g, &zero_strength, DVec3::ZERO).is_err());
    let water = Brush {
        material: Material::WATER,
        ..brush(BrushMode::Add)
    };
    assert!(apply_brush(&mut g, &water, DVec3::ZERO).is_err());
    assert!(matches!(
        apply_brush(
            &mut g,
            &brush(BrushMode::Add),
            DVec3::new(f64::NAN, 0.0, 0.0)
        ),
        Err(EditError::InvalidCentre(_))
    ));
    assert!(apply_brush(&mut g, &brush(BrushMode::Add), DVec3::splat(1e300)).is_err());
    assert_eq!(g.revision(), 0);
    assert_eq!(g.chunk_count(), 0);
}

#[test]
fn brushes_stay_on_the_lattice() {
    let mut g = Grid::new();
    let b = brush(BrushMode::Add);
    let studs = |cell: f64| cell * CELL_SIZE_STUDS as f64;
    // Centred on the last cells: the reach crosses the lattice's ends.
    for centre in [
        DVec3::new(studs(MIN_CELL_COORD as f64), 0.0, 0.0),
        DVec3::new(0.0, studs(MAX_CELL_COORD as f64 + 0.5), 0.0),
        DVec3::new(studs(i32::MIN as f64), 0.0, 0.0),
    ] {
        let err = apply_brush(&mut g, &b, centre).unwrap_err();
        assert_eq!(err, EditError::InvalidCentre(centre));
        assert!(err.to_string().contains("lattice"), "{err}");
    }
    assert_eq!(g.revision(), 0);
    // Far enough inside, the brush reaches the last cells.
    let reach = b.radius_cells as f64 + 1.0;
    let centre = DVec3::splat(studs(MAX_CELL_COORD as f64 + 1.0 - reach));
    let region = b.region(centre).unwrap();
    assert_eq!(region.max, LATTICE_CELLS.max);
    assert!(apply_brush(&mut g, &b, centre).unwrap().is_change());
}

fn tool(mode: BrushMode, radius_cells: f32) -> Brush {
    Brush {
        mode,
        radius_cells,
        strength: 1.0,
        material: Material::SAND,
        ignore_water: false,
    }
}

fn opts(shape: BrushShape, falloff: Falloff) -> BrushOptions {
    BrushOptions {
        shape,
        falloff,
        ..BrushOptions::default()
    }
}

/// Centre of cell `c` in world studs.
fn at_cell(c: [i32; 3]) -> DVec3 {
    CellCoord::new(c[0], c[1], c[2]).sample_point_world()
}

fn occ(g: &Grid, x: i32, y: i32, z: i32) -> u8 {
    g.cell(CellCoord::new(x, y, z)).occupancy()
}

#[test]
fn shapes_give_exact_shape_fields() {
    let add = tool(BrushMode::Add, 3.0);
    let mut g = Grid::new();
    apply_tool(
        &mut g,
        &add,
        &opts(BrushShape::Cube, Falloff::None),
        at_cell([0, 0, 0]),
    )
    .unwrap();
    assert_eq!(occ(&g, 2, 2, 2), 255);
    assert_eq!(occ(&g, 3, 3, 0), 128); // Chebyshev 3: field 0.5
    assert_eq!(occ(&g, 4, 0, 0), 0);
    let mut g = Grid::new();
    apply_tool(
        &mut g,
        &add,
        &opts(BrushShape::Sphere, Falloff::None),
        at_cell([0, 0, 0]),
    )
    .unwrap();
    assert_eq!(occ(&g, 2, 2, 2), 10); // field 3.5 - sqrt(12) = 0.0359
    assert_eq!(occ(&g, 3, 0, 0), 128);
    let mut g = Grid::new();
    apply_tool(
        &mut g,
        &add,
        &opts(BrushShape::Cylinder, Falloff::None),
        at_cell([0, 0, 0]),
    )
    .unwrap();
    assert_eq!(occ(&g, 2, 0, 2), 172); // field 3.5 - sqrt(8) = 0.6716
    assert_eq!(occ(&g, 0, 2, 2), 255);
    assert_eq!(occ(&g, 0, 3, 0), 128);
    assert_eq!(g.cell(CellCoord::new(0, 0, 0)).material(), Material::SAND);
}

#[test]
fn falloff_weights_the_strength() {
    assert_eq!(Falloff::None.weight(0.7), 1.0);
    assert_eq!(Falloff::Linear.weight(0.25), 0.75);
    assert_eq!(Falloff::Smooth.weight(0.25), 0.84375);
    assert_eq!(Falloff::Smooth.weight(1.0), 0.0);
    let mut g = Grid::new();
    apply_tool(
        &mut g,
        &tool(BrushMode::Add, 4.0),
        &opts(BrushShape::Sphere, Falloff::Linear),
        at_cell([0, 0, 0]),
    )
    .unwrap();
    assert_eq!(occ(&g, 0, 0, 0), 255);
    assert_eq!(occ(&g, 2, 0, 0), 128); // weight 0.5 of 255
    assert_eq!(occ(&g, 3, 0, 0), 64); // weight 0.25: ceil(63.75)
}

/// Full rock in rows y < 4 over x, z in -8..8, air above.
fn floor() -> Grid {
    let mut g = Grid::new();
    g.edit_region(
        CellBox::new(IVec3::new(-8, 0, -8), IVec3::new(8, 4, 8)),
        |_, _| Cell::full(Material::ROCK),
    )
    .unwrap();
    g
}

#[test]
fn grow_raises_only_surface_cells_and_erode_lowers_only_exposed_ones() {
    let cube = opts(BrushShape::Cube, Falloff::None);
    let mut g = floor();
    apply_tool(
        &mut g,
        &tool(BrushMode::Grow, 3.0),
        &cube,
        at_cell([0, 4, 0]),
    )
    .unwrap();
    for x in -2..=2 {
        for z in -2..=2 {
            // The air row on the floor gains a quarter cell of the floor's material.
            assert_eq!(
                g.cell(CellCoord::new(x, 4, z)),
                Cell::new(Material::ROCK, 64)
            );
            assert_eq!(occ(&g, x, 5, z), 0);
            assert_eq!(occ(&g, x, 3, z), 255);
        }
    }
    let mut g = floor();
    apply_tool(
        &mut g,
        &tool(BrushMode::Erode, 3.0),
        &cube,
        at_cell([0, 3, 0]),
    )
    .unwrap();
    for x in -2..=2 {
        for z in -2..=2 {
            assert_eq!(occ(&g, x, 3, z), 191);
            assert_eq!(occ(&g, x, 2, z), 255);
            assert_eq!(occ(&g, x, 4, z), 0);
        }
    }
}

#[test]
fn smooth_lowers_a_spike_and_raises_its_neighbours() {
    let mut g = Grid::new();
    g.edit_region(CellBox::new(IVec3::ZERO, IVec3::ONE), |_, _| {
        Cell::full(Material::ROCK)
    })
    .unwrap();
    apply_tool(
        &mut g,
        &tool(BrushMode::Smooth, 4.0),
        &opts(BrushShape::Sphere, Falloff::None),
        at_cell([0, 0, 0]),
    )
    .unwrap();
    // Mean of the 3x3x3 block is 255 / 27 = 9.44 everywhere it reaches.
    assert_eq!(
        g.cell(CellCoord::new(0, 0, 0)),
        Cell::new(Material::ROCK, 9)
    );
    assert_eq!(
        g.cell(CellCoord::new(1, 0, 0)),
        Cell::new(Material::ROCK, 9)
    );
    assert_eq!(
        g.cell(CellCoord::new(-1, 1, -1)),
        Cell::new(Material::ROCK, 9)
    );
    assert_eq!(g.cell(CellCoord::new(2, 0, 0)), Cell::EMPTY);
}

/// Columns over x, z in -8..8 of rock up to a height between 5 and 11.
fn bumpy() -> Grid {
    let mut g = Grid::new();
    g.edit_region(
        CellBox::new(IVec3::new(-8, 0, -8), IVec3::new(8, 16, 8)),
        |c, _| {
            let h = 5 + (c.0.x * 3 + c.0.z * 5).rem_euclid(7);
            if c.0.y < h {
                Cell::full(Material::DIRT)
            } else {
                Cell::EMPTY
            }
        },
    )
    .unwrap();
    g
}

#[test]
fn flatten_puts_every_touched_column_within_one_step_of_the_plane() {
    let mut g = bumpy();
    let height_cells = 8.3;
    let options = BrushOptions {
        flatten_plane: Some(FlattenPlane::Height {
            height_world: height_cells * CELL_SIZE_STUDS as f64,
        }),
        ..opts(BrushShape::Cube, Falloff::None)
    };
    apply_tool(
        &mut g,
        &tool(BrushMode::Flatten, 6.0),
        &options,
        at_cell([0, 8, 0]),
    )
    .unwrap();
    // Cells with offset <= 5 on every axis have shape field 1.
    for x in -5..=5 {
        for z in -5..=5 {
            for y in 3..=13 {
                let target = (height_cells - y as f64).clamp(0.0, 1.0) * 255.0;
                let o = occ(&g, x, y, z) as f64;
                assert!(
                    (o - target).abs() < 1.0,
                    "cell {x},{y},{z}: {o} vs plane target {target}"
                );
            }
            // The column's surface row holds 0.3 of a cell: 76 or 77.
            assert!((76..=77).contains(&occ(&g, x, 8, z)));
        }
    }
    // Outside the brush nothing moved.
    assert_eq!(
        g.cell(CellCoord::new(7, 12, 7)),
        bumpy().cell(CellCoord::new(7, 12, 7))
    );
}

#[test]
fn flatten_raise_only_and_lower_only_move_one_way_along_a_picked_plane() {
    let plane = FlattenPlane::Picked {
        point_world: DVec3::new(0.0, 8.0 * CELL_SIZE_STUDS as f64, 0.0),
        normal: DVec3::new(1.0, 3.0, 0.0),
    };
    for limit in [FlattenLimit::RaiseOnly, FlattenLimit::LowerOnly] {
        let before = bumpy();
        let mut g = bumpy();
        let options = BrushOptions {
            flatten_plane: Some(plane),
            flatten_limit: limit,
            ..opts(BrushShape::Sphere, Falloff::None)
        };
        let r = apply_tool(
            &mut g,
            &tool(BrushMode::Flatten, 6.0),
            &options,
            at_cell([0, 8, 0]),
        )
        .unwrap();
        assert!(r.is_change());
        for x in -8..8 {
            for z in -8..8 {
                for y in 0..16 {
                    let (a, b) = (occ(&before, x, y, z), occ(&g, x, y, z));
                    match limit {
                        FlattenLimit::RaiseOnly => assert!(b >= a),
                        _ => assert!(b <= a),
                    }
                }
            }
        }
    }
}

#[test]
fn paint_changes_materials_of_surface_cells_only_never_occupancy() {
    let mut g = bumpy();
    let before = bumpy();
    let paint = Brush {
        strength: 0.7,
        ..tool(BrushMode::Paint, 6.0)
    };
    let r = apply_tool(
        &mut g,
        &paint,
        &opts(BrushShape::Sphere, Falloff::Smooth),
        at_cell([0, 8, 0]),
    )
    .unwrap();
    assert!(r.is_change());
    let mut painted = 0;
    for x in -8..8 {
        for z in -8..8 {
            for y in 0..16 {
                let (a, b) = (
                    before.cell(CellCoord::new(x, y, z)),
                    g.cell(CellCoord::new(x, y, z)),
                );
                assert_eq!(a.occupancy(), b.occupancy());
                if a != b {
                    painted += 1;
                    assert_eq!(b.material(), Material::SAND);
                    // Every painted cell touches the outside through a
                    // face, an edge or a corner.
                    let exposed = (-1..=1).any(|dx| {
                        (-1..=1)
                            .any(|dy| (-1..=1).any(|dz| occ(&before, x + dx, y + dy, z + dz) < 128))
                    });
                    assert!(exposed, "cell {x},{y},{z} is buried");
                }
            }
        }
    }
    assert!(painted > 20, "only {painted} cells painted");
}

#[test]
fn full_strength_paint_covers_the_cells_beside_a_terrain_step() {
    // The input that showed it: a one-cell step in grass; the full cell
    // at the foot of the step touches the air only along an edge.
    let mut g = Grid::new();
    g.edit_region(
        CellBox::new(IVec3::splat(-12), IVec3::new(12, 0, 12)),
        |c, _| {
            if c.0.y >= -1 && c.0.x >= 0 {
                Cell::full(Material::GRASS)
            } else if c.0.y < -1 {
                Cell::full(Material::DIRT)
            } else {
                Cell::EMPTY
            }
        },
    )
    .unwrap();
    g.edit_region(
        CellBox::new(IVec3::new(-12, -2, -12), IVec3::new(12, -1, 12)),
        |_, _| Cell::full(Material::GRASS),
    )
    .unwrap();
    let before = g.clone();
    let paint = Brush {
        strength: 1.0,
        material: Material::MUD,
        ..tool(BrushMode::Paint, 4.0)
    };
    apply_tool(
        &mut g,
        &paint,
        &opts(BrushShape::Cube, Falloff::None),
        DVec3::new(0.5, -1.0, 0.5) * CELL_SIZE_STUDS as f64,
    )
    .unwrap();
    let mut checked = 0;
    for x in -3..=3 {
        for y in -4..=2 {
            for z in -3..=3 {
                let c = CellCoord::new(x, y, z);
                let cell = before.cell(c);
                let exposed = (-1..=1).any(|dx| {
                    (-1..=1).any(|dy| {
                        (-1..=1).any(|dz| {
                            before
                                .cell(CellCoord::new(x + dx, y + dy, z + dz))
                                .occupancy()
                                < 128
                        })
                    })
                });
                if cell.material().is_solid() && exposed {
                    checked += 1;
                    assert_eq!(
                        g.cell(c).material(),
                        Material::MUD,
                        "surface cell {x},{y},{z} kept {:?}",
                        cell.material()
                    );
                }
            }
        }
    }
    // The foot of the step (x = -1, y = -2) is among them.
    assert!(checked > 40, "{checked}");
    assert_eq!(g.cell(CellCoord::new(-1, -2, 0)).material(), Material::MUD);
    // Buried cells keep their material.
    assert_eq!(g.cell(CellCoord::new(0, -4, 0)).material(), Material::DIRT);
}

#[test]
fn replace_touches_only_the_source_material() {
    let mut g = Grid::new();
    g.edit_region(CellBox::new(IVec3::splat(-6), IVec3::splat(6)), |c, _| {
        if (c.0.x + c.0.y + c.0.z).rem_euclid(2) == 0 {
            Cell::new(Material::ROCK, 200)
        } else {
            Cell::new(Material::DIRT, 100)
        }
    })
    .unwrap();
    let before = g.clone();
    let replace = tool(BrushMode::Replace, 4.0);
    let options = BrushOptions {
        replace_from: Material::ROCK,
        ..opts(BrushShape::Cube, Falloff::None)
    };
    apply_tool(&mut g, &replace, &options, at_cell([0, 0, 0])).unwrap();
    let replace_to = Brush {
        material: Material::SNOW,
        ..replace
    };
    apply_tool(
        &mut g,
        &replace_to,
        &BrushOptions {
            replace_from: Material::SAND,
            ..options
        },
        at_cell([0, 0, 0]),
    )
    .unwrap();
    for x in -6..6 {
        for y in -6..6 {
            for z in -6..6 {
                let c = CellCoord::new(x, y, z);
                let (a, b) = (before.cell(c), g.cell(c));
                let reach = x.abs().max(y.abs()).max(z.abs());
                if a.material() == Material::ROCK && reach <= 3 {
                    assert_eq!(b, Cell::new(Material::SNOW, 200));
                } else if a.material() == Material::ROCK && reach == 4 {
                    // Shape field 0.5 at the cube's face: dithered, each
                    // application with its own pattern.
                    assert!(
                        b == a
                            || b == Cell::new(Material::SAND, 200)
                            || b == Cell::new(Material::SNOW, 200)
                    );
                } else {
                    assert_eq!(a, b, "cell {x},{y},{z}");
                }
            }
        }
    }
}

#[test]
fn ignore_water_leaves_water_bit_identical_for_every_sculpt_tool() {
    let water_cells = |g: &Grid| -> Vec<Cell> {
        (-8..8)
            .flat_map(|z| (-8..8).flat_map(move |x| (0..2).map(move |y| (x, y, z))))
            .map(|(x, y, z)| g.cell(CellCoord::new(x, y, z)))
            .collect()
    };
    for mode in BrushMode::ALL.into_iter().filter(|m| m.is_sculpt()) {
        let mut g = lake();
        let before = water_cells(&g);
        let b = Brush {
            ignore_water: true,
            ..tool(mode, 5.0)
        };
        apply_tool(
            &mut g,
            &b,
            &opts(BrushShape::Cylinder, Falloff::Smooth),
            DVec3::new(2.0, 4.0, 2.0),
        )
        .unwrap();
        assert_eq!(water_cells(&g), before, "{mode:?}");
    }
}

#[test]
fn bad_tool_input_is_rejected_without_change() {
    let mut g = floor();
    let rev = g.revision();
    let hash = g.content_hash();
    let c = at_cell([0, 4, 0]);
    let d = BrushOptions::default();
    for radius in [0.0, 64.5, f32::INFINITY] {
        assert_eq!(
            apply_tool(&mut g, &tool(BrushMode::Smooth, radius), &d, c),
            Err(EditError::InvalidRadius(radius))
        );
    }
    // Brushes paint solids only (every id from 2 is one: a library's own
    // from 11); Water has its own tools.
    let not_solid = Brush {
        material: Material::WATER,
        ..tool(BrushMode::Paint, 4.0)
    };
    assert_eq!(
        apply_tool(&mut g, &not_solid, &d, c),
        Err(EditError::InvalidMaterial(1))
    );
    let from_water = BrushOptions {
        replace_from: Material::WATER,
        ..d
    };
    assert_eq!(
        apply_tool(&mut g, &tool(BrushMode::Replace, 4.0), &from_water, c),
        Err(EditError::InvalidReplaceMaterial(1))
    );
    let bad_plane = BrushOptions {
        flatten_plane: Some(FlattenPlane::Picked {
            point_world: c,
            normal: DVec3::ZERO,
        }),
        ..d
    };
    assert!(matches!(
        apply_tool(&mut g, &tool(BrushMode::Flatten, 4.0), &bad_plane, c),
        Err(EditError::InvalidPlane(_))
    ));
    assert!(matches!(
        apply_tool(
            &mut g,
            &tool(BrushMode::Grow, 4.0),
            &d,
            DVec3::new(0.0, f64::INFINITY, 0.0)
        ),
        Err(EditError::InvalidCentre(_))
    ));
    assert_eq!(g.revision(), rev);
    assert_eq!(g.content_hash(), hash);
}

#[test]
fn repeated_weak_paint_accumulates_coverage() {
    let mut g = floor();
    let weak = Brush {
        strength: 0.3,
        ..tool(BrushMode::Paint, 6.0)
    };
    let cube = opts(BrushShape::Cube, Falloff::None);
    let painted = |g: &Grid| {
        (-4..=4)
            .flat_map(|x| (-4..=4).map(move |z| (x, z)))
            .filter(|&(x, z)| g.cell(CellCoord::new(x, 3, z)).material() == Material::SAND)
            .count()
    };
    apply_tool(&mut g, &weak, &cube, at_cell([0, 3, 0])).unwrap();
    let once = painted(&g);
    for _ in 0..15 {
        apply_tool(&mut g, &weak, &cube, at_cell([0, 3, 0])).unwrap();
    }
    let many = painted(&g);
    assert!(once > 5 && once < 50, "{once} of 81 after one application");
    assert!(many > 75, "{many} of 81 after sixteen");
}
