//! Paint at strength 1 covers every surface cell the brush covers, on the
//! default world where a one-cell line of grass used to follow a terrain
//! step through the painted mud and slate.

use glam::{DVec3, IVec3};
use strata::script::surface::SurfaceDrops;
use strata::terrain::editing::brush::{Brush, BrushMode, BrushOptions, BrushShape, Falloff};
use strata::terrain::editing::kernels::apply_tool;
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};
use strata::terrain::storage::cell::Material;
use strata::terrain::storage::coords::{CELL_SIZE_STUDS, CellCoord};

#[test]
fn four_cube_paints_leave_no_line_of_the_old_material() {
    let mut grid = generate_world(&GeneratorSettings::default()).expect("default world");
    let options = BrushOptions {
        shape: BrushShape::Cube,
        falloff: Falloff::None,
        ..BrushOptions::default()
    };
    let paints = [
        ([2232.0, 2968.0], Material::MUD),
        ([2248.0, 2968.0], Material::SLATE),
        ([2232.0, 2984.0], Material::SAND),
        ([2248.0, 2984.0], Material::SNOW),
    ];
    let painted: Vec<Material> = paints.iter().map(|p| p.1).collect();
    // Every centre lands on the surface as it was before the first paint.
    let surface = SurfaceDrops::resolve(&grid, paints.iter().map(|([x, z], _)| (*x, *z)));
    let mut centres = Vec::new();
    for ([x, z], material) in paints {
        let (centre, _) = surface.drop_onto(x, z).expect("terrain there");
        let brush = Brush {
            mode: BrushMode::Paint,
            radius_cells: 4.0,
            strength: 1.0,
            material,
            ignore_water: false,
        };
        apply_tool(&mut grid, &brush, &options, centre).expect("paint");
        centres.push(centre);
    }
    // Every solid surface cell (one with any of its 26 neighbours outside)
    // whose centre lies inside a cube (3.5 cells: full field) is painted.
    let before = generate_world(&GeneratorSettings::default()).expect("default world");
    let mut surface_cells = 0;
    for centre in &centres {
        let c = *centre / CELL_SIZE_STUDS as f64;
        let lo = (c - DVec3::splat(4.0)).floor().as_ivec3();
        let hi = (c + DVec3::splat(4.0)).ceil().as_ivec3();
        for x in lo.x..=hi.x {
            for y in lo.y..=hi.y {
                for z in lo.z..=hi.z {
                    let cell = CellCoord::new(x, y, z);
                    let offset = (cell.0.as_dvec3() + DVec3::splat(0.5)) - c;
                    if offset.abs().max_element() > 3.5 {
                        continue;
                    }
                    let old = before.cell(cell);
                    let exposed = (-1..=1).any(|dx| {
                        (-1..=1).any(|dy| {
                            (-1..=1).any(|dz| {
                                before
                                    .cell(CellCoord(cell.0 + IVec3::new(dx, dy, dz)))
                                    .occupancy()
                                    < 128
                            })
                        })
                    });
                    if !old.material().is_solid() || !exposed {
                        continue;
                    }
                    surface_cells += 1;
                    let now = grid.cell(cell).material();
                    assert!(
                        painted.contains(&now),
                        "surface cell {x},{y},{z} under the brush kept {now:?}"
                    );
                }
            }
        }
    }
    assert!(
        surface_cells > 100,
        "only {surface_cells} surface cells checked"
    );
}
