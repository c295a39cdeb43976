//! The low-poly palette atlas (background
//! `chunked-greedy-heightfield-terrain` §4): one small image of flat
//! colours, a cell per material for tops and a darkened cell per material
//! for skirts (cheap fake ambient occlusion). Every face points a constant
//! UV at its cell's centre, so no filtering or mip level ever blends two
//! colours, at any distance. The atlas is a function of the palette alone
//! (each material's flat colour in the world's material library):
//! recolouring regenerates it and leaves the grid and its hash untouched.

use crate::terrain::Material;
use crate::terrain::materials::MaterialLibrary;

/// Atlas cells per row.
pub const ATLAS_COLUMNS: u32 = 16;
/// Atlas rows: a top and a skirt cell for every material id a cell can
/// hold (the built-ins and every library id).
pub const ATLAS_ROWS: u32 = (2 * Material::ID_COUNT as u32).div_ceil(ATLAS_COLUMNS);
/// Pixels per cell side.
pub const CELL_PX: u32 = 4;
/// Skirt colours are the top colour times this.
pub const SKIRT_SHADE: f32 = 0.7;

/// The atlas cell of `material`'s tops (`skirt` false) or skirts.
pub fn atlas_cell(material: Material, skirt: bool) -> u32 {
    u32::from(material.0) + if skirt { Material::ID_COUNT as u32 } else { 0 }
}

/// UV of the centre of atlas cell `cell` (`u` right, `v` down, 0..1).
pub fn cell_centre_uv(cell: u32) -> [f32; 2] {
    let (col, row) = (cell % ATLAS_COLUMNS, cell / ATLAS_COLUMNS);
    [
        (col as f32 + 0.5) / ATLAS_COLUMNS as f32,
        (row as f32 + 0.5) / ATLAS_ROWS as f32,
    ]
}

/// The atlas of `library`'s flat colours
/// ([`MaterialLibrary::flat_colour_srgb`]) as sRGB RGBA8 pixels, row-major
/// from the top: `(width_px, height_px, pixels)`. Ids the library does not
/// define hold their fallback colour (magenta: a missing material).
pub fn atlas_rgba(library: &MaterialLibrary) -> (u32, u32, Vec<u8>) {
    let (w, h) = (ATLAS_COLUMNS * CELL_PX, ATLAS_ROWS * CELL_PX);
    let mut pixels = vec![0u8; (w * h * 4) as usize];
    for id in 0..=u8::MAX {
        let material = Material(id);
        let base = library.flat_colour_srgb(material);
        for skirt in [false, true] {
            let shade = if skirt { SKIRT_SHADE } else { 1.0 };
            let rgb = base.map(|c| (f32::from(c) * shade).round() as u8);
            let cell = atlas_cell(material, skirt);
            let (x0, y0) = (
                (cell % ATLAS_COLUMNS) * CELL_PX,
                (cell / ATLAS_COLUMNS) * CELL_PX,
            );
            for y in y0..y0 + CELL_PX {
                for x in x0..x0 + CELL_PX {
                    let i = ((y * w + x) * 4) as usize;
                    pixels[i..i + 4].copy_from_slice(&[rgb[0], rgb[1], rgb[2], 255]);
                }
            }
        }
    }
    (w, h, pixels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cell_centre_samples_its_own_flat_colour() {
        let (w, h, pixels) = atlas_rgba(&MaterialLibrary::default());
        for id in 0..Material::COUNT as u8 {
            let m = Material(id);
            for skirt in [false, true] {
                let [u, v] = cell_centre_uv(atlas_cell(m, skirt));
                let (x, y) = ((u * w as f32) as u32, (v * h as f32) as u32);
                let i = ((y * w + x) * 4) as usize;
                let want = m
                    .base_color_srgb()
                    .map(|c| (f32::from(c) * if skirt { SKIRT_SHADE } else { 1.0 }).round() as u8);
                assert_eq!(pixels[i..i + 3], want, "{m:?} skirt {skirt}");
                // The whole cell is that colour: no neighbour bleeds in.
                let (x0, y0) = (x - x % CELL_PX, y - y % CELL_PX);
                for yy in y0..y0 + CELL_PX {
                    for xx in x0..x0 + CELL_PX {
                        let j = ((yy * w + xx) * 4) as usize;
                        assert_eq!(pixels[j..j + 3], want);
                    }
                }
            }
        }
    }

    #[test]
    fn a_tinted_library_colours_its_cells() {
        let mut library = MaterialLibrary::default();
        library.set_tint(Material::SAND, [255, 0, 0]).unwrap();
        let (w, h, pixels) = atlas_rgba(&library);
        let at = |cell: u32| {
            let [u, v] = cell_centre_uv(cell);
            let (x, y) = ((u * w as f32) as u32, (v * h as f32) as u32);
            let i = ((y * w + x) * 4) as usize;
            [pixels[i], pixels[i + 1], pixels[i + 2]]
        };
        // Sand's built-in colour (204, 186, 140) times a red tint.
        assert_eq!(at(atlas_cell(Material::SAND, false)), [204, 0, 0]);
        assert_eq!(at(atlas_cell(Material::SAND, true)), [143, 0, 0]);
        assert_eq!(
            at(atlas_cell(Material::GRASS, false)),
            Material::GRASS.base_color_srgb()
        );
    }
}
