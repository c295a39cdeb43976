//! Region tools: an axis-aligned box of cells filled, cleared, copied,
//! pasted (with quarter turns about the vertical axis) or regenerated.
//!
//! Every operation goes through [`Grid::edit_region`] like a brush, so it is
//! applied under one revision, reports exactly the cells it changed and can
//! be recorded as one undo step ([`crate::terrain::editing::recorder::Recorder`]).

use glam::IVec3;
use rustc_hash::FxHashMap;

use crate::terrain::generation::generate::{GeneratorSettings, generate_chunk};
use crate::terrain::storage::cell::{Cell, Material};
use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::{
    CellBox, CellCoord, ChunkCoord, OutsideLattice, check_on_lattice, local_index,
};
use crate::terrain::storage::grid::{EditReport, Grid, GridError, MAX_EDIT_VOLUME_CELLS};

/// Widest box [`crop`] takes along x and z: the largest world that is held
/// whole (4096 cells), so an export of a region of any world costs what an
/// export of the largest whole world does.
pub const MAX_CROP_SIDE_CELLS: i32 = 4096;

/// Largest box a clipboard may hold: 256³ cells (32 MiB of cells).
pub const MAX_CLIPBOARD_VOLUME_CELLS: u64 = 256 * 256 * 256;

/// Bad region input. The grid is unchanged when one is returned.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RegionError {
    /// The box holds no cell.
    #[error("region {0:?} is empty")]
    Empty(CellBox),
    /// Fill with Air (use Clear) or an unknown material id.
    #[error("fill material {0} is not a known solid or water material")]
    InvalidMaterial(u8),
    /// Fill with zero occupancy (use Clear).
    #[error("fill occupancy must be 1..=255 (0 is Clear)")]
    ZeroOccupancy,
    /// Copy of a box larger than [`MAX_CLIPBOARD_VOLUME_CELLS`].
    #[error("copy of {volume_cells} cells exceeds the clipboard limit of {limit} cells")]
    ClipboardTooLarge {
        /// Cells in the box.
        volume_cells: u64,
        /// The limit.
        limit: u64,
    },
    /// Paste position off the valid cell lattice.
    #[error("paste position {0} is outside the cell lattice")]
    InvalidPosition(IVec3),
    /// A box with cells off the valid lattice
    /// ([`crate::terrain::storage::coords::LATTICE_CELLS`]).
    #[error(transparent)]
    OutsideLattice(#[from] OutsideLattice),
    /// A crop wider than [`MAX_CROP_SIDE_CELLS`] along x or z.
    #[error(
        "region of {size_x_cells}×{size_z_cells} cells (x×z) exceeds the limit of {limit}×{limit}"
    )]
    CropTooLarge {
        /// Width along x, cells.
        size_x_cells: i64,
        /// Width along z, cells.
        size_z_cells: i64,
        /// The limit per axis, cells.
        limit: i32,
    },
    /// The grid refused the region (too large, or columns not resident).
    #[error(transparent)]
    Grid(#[from] GridError),
}

/// The checks every region tool makes before touching the grid: a box that
/// holds cells, all of them on the valid lattice, and not too many.
pub fn check_region(region: CellBox) -> Result<(), RegionError> {
    if region.is_empty() {
        return Err(RegionError::Empty(region));
    }
    check_on_lattice(&region)?;
    let volume_cells = region.volume_cells();
    if volume_cells > MAX_EDIT_VOLUME_CELLS {
        return Err(GridError::RegionTooLarge {
            volume_cells,
            limit: MAX_EDIT_VOLUME_CELLS,
        }
        .into());
    }
    Ok(())
}

/// Sets every cell of `region` to `material` at `occupancy` (Water allowed).
/// With `ignore_water`, water cells keep their value.
///
/// # Errors
/// [`RegionError`] for an empty or too large box or one off the lattice, Air
/// or an unknown material, or zero occupancy.
pub fn fill(
    grid: &mut Grid,
    region: CellBox,
    material: Material,
    occupancy: u8,
    ignore_water: bool,
) -> Result<EditReport, RegionError> {
    check_region(region)?;
    if material == Material::AIR {
        return Err(RegionError::InvalidMaterial(material.0));
    }
    if occupancy == 0 {
        return Err(RegionError::ZeroOccupancy);
    }
    let cell = Cell::new(material, occupancy);
    Ok(grid.edit_region(region, |_, old| {
        if ignore_water && old.water_occupancy() > 0 {
            old
        } else {
            cell
        }
    })?)
}

/// Empties every cell of `region`; with `ignore_water`, water stays.
///
/// # Errors
/// [`RegionError`] for an empty or too large box, or one off the lattice.
pub fn clear(
    grid: &mut Grid,
    region: CellBox,
    ignore_water: bool,
) -> Result<EditReport, RegionError> {
    check_region(region)?;
    Ok(grid.edit_region(region, |_, old| {
        if ignore_water && old.water_occupancy() > 0 {
            old
        } else {
            Cell::EMPTY
        }
    })?)
}

/// A copied box of cells, x fastest, then y, then z.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clipboard {
    size: IVec3,
    cells: Vec<Cell>,
}

impl Clipboard {
    /// Size of the box in cells.
    pub fn size(&self) -> IVec3 {
        self.size
    }

    /// The cell at `local` (each component within the size).
    pub fn get(&self, local: IVec3) -> Cell {
        self.cells[((local.z * self.size.y + local.y) * self.size.x + local.x) as usize]
    }

    /// The clipboard turned `quarter_turns` × 90° about +Y: each turn maps
    /// local `(x, z)` to `(size_z − 1 − z, x)`, so +X goes to +Z.
    pub fn rotated(&self, quarter_turns: u8) -> Clipboard {
        let mut out = self.clone();
        for _ in 0..quarter_turns % 4 {
            let s = out.size;
            let size = IVec3::new(s.z, s.y, s.x);
            let mut cells = vec![Cell::EMPTY; out.cells.len()];
            for z in 0..s.z {
                for y in 0..s.y {
                    for x in 0..s.x {
                        let to = IVec3::new(s.z - 1 - z, y, x);
                        cells[((to.z * size.y + to.y) * size.x + to.x) as usize] =
                            out.get(IVec3::new(x, y, z));
                    }
                }
            }
            out = Clipboard { size, cells };
        }
        out
    }

    /// A clipboard of `size` cells (x fastest, then y, then z, as
    /// [`Clipboard::get`] reads them), e.g. a 3D stamp read from a file;
    /// `None` when an axis is not positive, the volume exceeds
    /// [`MAX_CLIPBOARD_VOLUME_CELLS`] or `cells` has another length.
    pub fn from_cells(size: IVec3, cells: Vec<Cell>) -> Option<Clipboard> {
        if size.min_element() < 1 {
            return None;
        }
        let volume = size.as_u64vec3().element_product();
        (volume <= MAX_CLIPBOARD_VOLUME_CELLS && cells.len() as u64 == volume)
            .then_some(Clipboard { size, cells })
    }

    /// The cells, x fastest, then y, then z.
    pub fn cells(&self) -> &[Cell] {
        &self.cells
    }

    /// This clipboard with material `from` replaced by `to`; `None` when
    /// no cell holds `from`.
    pub fn with_material_replaced(&self, from: Material, to: Material) -> Option<Clipboard> {
        Cell::replaced_in(&self.cells, from, to).map(|cells| Clipboard {
            size: self.size,
            cells,
        })
    }

    /// Heap bytes of the copied cells.
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(self.cells.as_slice())
    }
}

/// Copies the cells of `region`.
///
/// # Errors
/// [`RegionError`] for an empty box, one off the lattice or one above
/// [`MAX_CLIPBOARD_VOLUME_CELLS`].
pub fn copy(grid: &Grid, region: CellBox) -> Result<Clipboard, RegionError> {
    if region.is_empty() {
        return Err(RegionError::Empty(region));
    }
    check_on_lattice(&region)?;
    let volume_cells = region.volume_cells();
    if volume_cells > MAX_CLIPBOARD_VOLUME_CELLS {
        return Err(RegionError::ClipboardTooLarge {
            volume_cells,
            limit: MAX_CLIPBOARD_VOLUME_CELLS,
        });
    }
    let size = region.max - region.min;
    let mut cells = Vec::with_capacity(volume_cells as usize);
    for z in region.min.z..region.max.z {
        for y in region.min.y..region.max.y {
            for x in region.min.x..region.max.x {
                cells.push(grid.cell(CellCoord::new(x, y, z)));
            }
        }
    }
    Ok(Clipboard { size, cells })
}

/// Checks that `region` can be cropped ([`crop`]) before any column is
/// loaded or copied for it: not empty, on the lattice, at most
/// [`MAX_CROP_SIDE_CELLS`] along x and z.
///
/// # Errors
/// [`RegionError::Empty`], [`RegionError::OutsideLattice`] or
/// [`RegionError::CropTooLarge`].
pub fn check_crop_box(region: &CellBox) -> Result<(), RegionError> {
    if region.is_empty() {
        return Err(RegionError::Empty(*region));
    }
    check_on_lattice(region)?;
    let size = region.max.as_i64vec3() - region.min.as_i64vec3();
    let limit = i64::from(MAX_CROP_SIDE_CELLS);
    if size.x > limit || size.z > limit {
        return Err(RegionError::CropTooLarge {
            size_x_cells: size.x,
            size_z_cells: size.z,
            limit: MAX_CROP_SIDE_CELLS,
        });
    }
    Ok(())
}

/// A grid holding whole (not streaming) just the cells of `region`: chunks
/// inside it share their storage with `grid`, chunks across its faces are
/// copied with the cells outside it emptied. For exports of part of a world
/// (glTF and heightmap export of a region box of a world larger
/// than 4096 cells).
///
/// # Errors
/// [`RegionError::Empty`], [`RegionError::OutsideLattice`],
/// [`RegionError::CropTooLarge`] for a box wider than
/// [`MAX_CROP_SIDE_CELLS`] along x or z, and [`GridError::NotResident`]
/// (as [`RegionError::Grid`]) when a streaming `grid` lacks some of the
/// box's columns: load them and call again.
pub fn crop(grid: &Grid, region: CellBox) -> Result<Grid, RegionError> {
    check_crop_box(&region)?;
    let missing = grid.missing_columns(&region);
    if !missing.is_empty() {
        return Err(GridError::NotResident(missing).into());
    }
    // One pass over the stored chunks: the box may be tall (any y range on
    // the lattice) while the grid holds few chunks in it.
    let chunks = grid.chunks().filter_map(|(coord, chunk)| {
        let chunk_box = coord.cell_box();
        if region.intersect(&chunk_box).is_empty() {
            return None;
        }
        if region.contains_box(&chunk_box) {
            return Some((coord, chunk.cells.clone()));
        }
        let inside = region.intersect(&chunk_box);
        let origin = chunk_box.min;
        let mut cells = ChunkCells::Uniform(Cell::EMPTY);
        let dense = cells.make_dense_mut();
        for z in inside.min.z..inside.max.z {
            for y in inside.min.y..inside.max.y {
                for x in inside.min.x..inside.max.x {
                    let local = IVec3::new(x, y, z) - origin;
                    dense[local_index(local)] = chunk.cells.get(local);
                }
            }
        }
        cells.compact();
        Some((coord, cells))
    });
    Ok(Grid::from_chunks(chunks))
}

/// The box a paste of `clipboard` turned `quarter_turns` covers with its
/// minimum corner at `min_cell`.
///
/// # Errors
/// [`RegionError::InvalidPosition`] when `min_cell` is off the lattice,
/// [`RegionError::OutsideLattice`] when the rest of the box leaves it.
pub fn paste_region(
    clipboard: &Clipboard,
    min_cell: IVec3,
    quarter_turns: u8,
) -> Result<CellBox, RegionError> {
    let s = clipboard.size;
    let size = if quarter_turns % 2 == 1 {
        IVec3::new(s.z, s.y, s.x)
    } else {
        s
    };
    if !CellCoord(min_cell).is_on_lattice() {
        return Err(RegionError::InvalidPosition(min_cell));
    }
    // On the lattice, `min_cell` is within 2^30 of zero and a clipboard
    // axis at most 2^24 cells, so the sum cannot overflow.
    let region = CellBox::new(min_cell, min_cell + size);
    check_on_lattice(&region)?;
    Ok(region)
}

/// Writes `clipboard`, turned `quarter_turns` × 90° about +Y, with its
/// minimum corner at `min_cell` (every cell of the box, empty ones too).
///
/// # Errors
/// [`RegionError`] for a position or box off the lattice.
pub fn paste(
    grid: &mut Grid,
    clipboard: &Clipboard,
    min_cell: IVec3,
    quarter_turns: u8,
) -> Result<EditReport, RegionError> {
    let region = paste_region(clipboard, min_cell, quarter_turns)?;
    check_region(region)?;
    let turned = clipboard.rotated(quarter_turns);
    Ok(grid.edit_region(region, |cell, _| turned.get(cell.0 - min_cell))?)
}

/// Re-runs the world generator inside `region`: every cell takes the value
/// [`generate_chunk`] gives it for `settings`.
///
/// # Errors
/// [`RegionError`] for an empty or too large box, or one off the lattice.
pub fn generate(
    grid: &mut Grid,
    region: CellBox,
    settings: &GeneratorSettings,
) -> Result<EditReport, RegionError> {
    check_region(region)?;
    let mut generated: FxHashMap<ChunkCoord, ChunkCells> = FxHashMap::default();
    Ok(grid.edit_region(region, |cell, _| {
        generated
            .entry(cell.chunk())
            .or_insert_with(|| generate_chunk(settings, cell.chunk()))
            .get(cell.local())
    })?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::storage::coords::{MAX_CELL_COORD, MIN_CELL_COORD};

    fn b(min: [i32; 3], max: [i32; 3]) -> CellBox {
        CellBox::new(IVec3::from_array(min), IVec3::from_array(max))
    }

    #[test]
    fn crop_keeps_exactly_the_cells_of_the_box() {
        let mut g = Grid::new();
        fill(
            &mut g,
            b([-40, 0, -40], [80, 40, 80]),
            Material::ROCK,
            255,
            false,
        )
        .unwrap();
        let region = b([-8, 2, 10], [40, 36, 33]);
        let cropped = crop(&g, region).unwrap();
        assert!(!cropped.is_streaming());
        for (x, y, z) in [(-8, 2, 10), (39, 35, 32), (0, 20, 20), (31, 31, 31)] {
            assert_eq!(
                cropped.cell(CellCoord::new(x, y, z)),
                Cell::full(Material::ROCK),
                "{x},{y},{z}"
            );
        }
        for (x, y, z) in [
            (-9, 2, 10),
            (40, 20, 20),
            (0, 1, 20),
            (0, 36, 20),
            (0, 20, 33),
        ] {
            assert_eq!(
                cropped.cell(CellCoord::new(x, y, z)),
                Cell::EMPTY,
                "{x},{y},{z}"
            );
        }
        // Cell count: solid cells of the crop equal the box volume.
        let solid: u64 = cropped
            .chunks()
            .map(|(c, chunk)| {
                c.cell_box()
                    .intersect(&region)
                    .volume_cells()
                    .min(32 * 32 * 32)
                    * u64::from(!chunk.cells.is_all_empty())
            })
            .sum();
        assert_eq!(solid, region.volume_cells());
        // A chunk wholly inside shares its storage with the source.
        let inside = ChunkCoord::new(0, 0, 0);
        let tall = b([0, 0, 0], [32, 32, 32]);
        let whole = crop(&g, tall).unwrap();
        assert!(
            whole
                .chunk(inside)
                .unwrap()
                .cells
                .shares_storage_with(&g.chunk(inside).unwrap().cells)
        );
    }

    #[test]
    fn crop_refuses_bad_boxes_and_absent_columns() {
        let g = Grid::new();
        assert!(matches!(
            crop(&g, b([0, 0, 0], [0, 5, 5])),
            Err(RegionError::Empty(_))
        ));
        assert_eq!(
            crop(&g, b([0, 0, 0], [4097, 1, 1])).unwrap_err(),
            RegionError::CropTooLarge {
                size_x_cells: 4097,
                size_z_cells: 1,
                limit: MAX_CROP_SIDE_CELLS
            }
        );
        // A tall box over an empty grid is fine (and fast: one pass over chunks).
        let tall = crop(&g, b([0, MIN_CELL_COORD, 0], [64, MAX_CELL_COORD, 64])).unwrap();
        assert_eq!(tall.chunk_count(), 0);
        // A streaming grid without the box's columns names them.
        let streaming = Grid::streaming();
        let e = crop(&streaming, b([0, 0, 0], [40, 8, 8])).unwrap_err();
        let RegionError::Grid(GridError::NotResident(cols)) = e else {
            panic!("{e:?}");
        };
        assert_eq!(
            cols,
            vec![
                crate::terrain::storage::coords::ColumnCoord::new(0, 0),
                crate::terrain::storage::coords::ColumnCoord::new(1, 0)
            ]
        );
    }

    #[test]
    fn fill_and_clear_set_exact_cells_and_respect_water() {
        let mut g = Grid::new();
        fill(&mut g, b([0, 0, 0], [2, 1, 1]), Material::WATER, 255, false).unwrap();
        let r = fill(&mut g, b([0, 0, 0], [4, 2, 1]), Material::ROCK, 200, true).unwrap();
        assert_eq!(r.bounds(), b([0, 0, 0], [4, 2, 1]));
        assert_eq!(g.cell(CellCoord::new(0, 0, 0)), Cell::full(Material::WATER));
        assert_eq!(
            g.cell(CellCoord::new(2, 0, 0)),
            Cell::new(Material::ROCK, 200)
        );
        assert_eq!(
            g.cell(CellCoord::new(0, 1, 0)),
            Cell::new(Material::ROCK, 200)
        );
        clear(&mut g, b([0, 0, 0], [4, 2, 1]), true).unwrap();
        assert_eq!(g.cell(CellCoord::new(1, 0, 0)), Cell::full(Material::WATER));
        assert_eq!(g.cell(CellCoord::new(2, 0, 0)), Cell::EMPTY);
        clear(&mut g, b([0, 0, 0], [4, 2, 1]), false).unwrap();
        assert_eq!(g.chunk_count(), 0);
    }

    #[test]
    fn copy_paste_with_rotation_maps_x_to_z() {
        let mut g = Grid::new();
        // A 3 x 1 x 2 box: distinct materials per cell.
        let mats = [
            Material::ROCK,
            Material::SAND,
            Material::DIRT,
            Material::SNOW,
            Material::MUD,
            Material::SLATE,
        ];
        g.edit_region(b([0, 0, 0], [3, 1, 2]), |c, _| {
            Cell::full(mats[(c.0.x + 3 * c.0.z) as usize])
        })
        .unwrap();
        let clip = copy(&g, b([0, 0, 0], [3, 1, 2])).unwrap();
        assert_eq!(clip.size(), IVec3::new(3, 1, 2));
        let at = IVec3::new(100, 0, 100);
        let r = paste(&mut g, &clip, at, 1).unwrap();
        assert_eq!(r.bounds(), b([100, 0, 100], [102, 1, 103]));
        // Local (x, z) -> (size_z - 1 - z, x) = (1 - z, x).
        for z in 0..2 {
            for x in 0..3 {
                let to = at + IVec3::new(1 - z, 0, x);
                assert_eq!(
                    g.cell(CellCoord(to)),
                    Cell::full(mats[(x + 3 * z) as usize]),
                    "cell {x},{z}"
                );
            }
        }
        // Four turns are the identity.
        assert_eq!(clip.rotated(4), clip);
        assert_eq!(clip.rotated(1).rotated(3), clip);
    }

    #[test]
    fn generate_restores_the_generated_cells() {
        let settings = GeneratorSettings {
            seed: 7,
            size_cells: 64,
        };
        let original = crate::terrain::generation::generate::generate_world(&settings).unwrap();
        let mut g = original.clone();
        let region = b([10, 0, 10], [30, 200, 30]);
        clear(&mut g, region, false).unwrap();
        assert_ne!(g.content_hash(), original.content_hash());
        let r = generate(&mut g, region, &settings).unwrap();
        assert!(r.is_change());
        assert_eq!(g.content_hash(), original.content_hash());
    }

    #[test]
    fn bad_region_input_changes_nothing() {
        let mut g = Grid::new();
        let ok = b([0, 0, 0], [2, 2, 2]);
        assert_eq!(
            fill(&mut g, ok, Material::AIR, 255, false),
            Err(RegionError::InvalidMaterial(0))
        );
        assert_eq!(
            fill(&mut g, ok, Material::ROCK, 0, false),
            Err(RegionError::ZeroOccupancy)
        );
        assert!(matches!(
            clear(&mut g, b([0, 0, 0], [0, 5, 5]), false),
            Err(RegionError::Empty(_))
        ));
        assert!(matches!(
            fill(
                &mut g,
                b([0, 0, 0], [1000, 1000, 1000]),
                Material::ROCK,
                255,
                false
            ),
            Err(RegionError::Grid(GridError::RegionTooLarge { .. }))
        ));
        assert!(matches!(
            copy(&g, b([0, 0, 0], [300, 300, 300])),
            Err(RegionError::ClipboardTooLarge { .. })
        ));
        assert_eq!(g.revision(), 0);
    }

    #[test]
    fn region_tools_refuse_boxes_off_the_lattice_and_accept_its_ends() {
        let settings = GeneratorSettings {
            seed: 3,
            size_cells: 64,
        };
        let mut g = Grid::new();
        // The script Fill that used to save a file that could not reopen.
        let far = b([i32::MIN, 0, 0], [-2147483600, 8, 8]);
        let past_max = b([MAX_CELL_COORD - 3, 0, 0], [MAX_CELL_COORD + 2, 4, 4]);
        let below_min = b([0, MIN_CELL_COORD - 1, 0], [4, MIN_CELL_COORD + 3, 4]);
        for region in [far, past_max, below_min] {
            let refused = || RegionError::OutsideLattice(OutsideLattice(region));
            assert_eq!(
                fill(&mut g, region, Material::ROCK, 255, false),
                Err(refused())
            );
            assert_eq!(clear(&mut g, region, false), Err(refused()));
            assert_eq!(copy(&g, region), Err(refused()));
            assert_eq!(generate(&mut g, region, &settings), Err(refused()));
            assert!(refused().to_string().contains("leaves the cell lattice"));
        }
        // The grid itself refuses such an edit too (brushes and water tools).
        assert_eq!(
            g.edit_region(far, |_, _| Cell::full(Material::ROCK)),
            Err(GridError::OutsideLattice(OutsideLattice(far)))
        );
        let clip = Clipboard {
            size: IVec3::splat(4),
            cells: vec![Cell::full(Material::SAND); 64],
        };
        assert_eq!(
            paste(&mut g, &clip, IVec3::new(i32::MIN, 0, 0), 0),
            Err(RegionError::InvalidPosition(IVec3::new(i32::MIN, 0, 0)))
        );
        let near_max = IVec3::new(0, MAX_CELL_COORD - 2, 0);
        assert!(matches!(
            paste(&mut g, &clip, near_max, 0),
            Err(RegionError::OutsideLattice(_))
        ));
        assert_eq!(g.revision(), 0);
        assert_eq!(g.chunk_count(), 0);
        // The extreme valid cells on both ends can be edited.
        let lo = b([MIN_CELL_COORD; 3], [MIN_CELL_COORD + 4; 3]);
        let hi = b([MAX_CELL_COORD - 3; 3], [MAX_CELL_COORD + 1; 3]);
        fill(&mut g, lo, Material::ROCK, 255, false).unwrap();
        paste(&mut g, &clip, IVec3::splat(MAX_CELL_COORD - 3), 0).unwrap();
        assert_eq!(
            g.cell(CellCoord::new(
                MAX_CELL_COORD,
                MAX_CELL_COORD,
                MAX_CELL_COORD
            )),
            Cell::full(Material::SAND)
        );
        assert_eq!(
            copy(&g, hi).unwrap().get(IVec3::splat(3)),
            Cell::full(Material::SAND)
        );
        assert_eq!(g.chunk_count(), 2);
    }
}
