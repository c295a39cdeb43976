//! Removing a library material that cells use: the artist picks a
//! replacement, every cell of the material and every operation that names
//! or carries it take the replacement, and one undo puts the material, its
//! cells and its operations back exactly.

mod common;

use common::libraries::flat_texture as texture;
use glam::IVec3;
use strata::terrain::Material;
use strata::terrain::command::edit_command::{CommandError, EditCommand, EditSession};
use strata::terrain::document::derive::derive_whole;
use strata::terrain::document::operation::OperationKind;
use strata::terrain::generation::generate::flat_world;
use strata::terrain::materials::{LibraryError, MaterialLibrary};
use strata::terrain::storage::cell::Cell;
use strata::terrain::storage::chunk::ChunkCells;
use strata::terrain::storage::coords::{CellBox, ChunkCoord};
use strata::terrain::storage::grid::Grid;

/// The default library plus "Moss" (id 11) and "Clay" (id 12).
fn library() -> (MaterialLibrary, Material, Material) {
    common::libraries::moss_and_clay()
}

/// Every stored chunk's cells.
fn cells(grid: &Grid) -> Vec<(ChunkCoord, ChunkCells)> {
    let mut v: Vec<_> = grid.chunks().map(|(c, ch)| (c, ch.cells.clone())).collect();
    v.sort_by_key(|(c, _)| (c.0.x, c.0.y, c.0.z));
    v
}

fn local(i: usize) -> IVec3 {
    IVec3::new((i % 32) as i32, (i / 32 % 32) as i32, (i / 1024) as i32)
}

/// Asserts `after` is `before` with `from` cells drawn as `to`, occupancy
/// kept, cell by cell; returns how many cells changed.
fn assert_remapped(
    before: &[(ChunkCoord, ChunkCells)],
    after: &Grid,
    from: Material,
    to: Material,
) -> usize {
    let mut changed = 0;
    for (c, cells) in before {
        let now = after.chunk_cells(*c);
        for i in 0..32 * 32 * 32 {
            let (was, is) = (cells.get(local(i)), now.get(local(i)));
            if was.material() == from {
                assert_eq!(is, Cell::new(to, was.occupancy()), "{c:?} {i}");
                changed += 1;
            } else {
                assert_eq!(is, was, "{c:?} {i}");
            }
        }
    }
    changed
}

/// A 64² flat world whose kept base has a patch of moss, with a layer
/// holding a moss Fill and a clay Fill.
fn world(moss: Material, clay: Material) -> (Grid, EditSession) {
    let mut grid = flat_world(64, 8).unwrap();
    grid.edit_region(
        CellBox::new(IVec3::new(4, 4, 4), IVec3::new(20, 8, 20)),
        |_, c| {
            if c.is_empty() {
                c
            } else {
                Cell::new(moss, c.occupancy())
            }
        },
    )
    .unwrap();
    let mut session = EditSession::new(1 << 28, None);
    session.enable_document(&grid);
    for (min, material) in [(IVec3::new(30, 8, 30), moss), (IVec3::new(40, 8, 10), clay)] {
        session
            .apply(
                &mut grid,
                &EditCommand::Fill {
                    region: CellBox::new(min, min + IVec3::new(10, 3, 10)),
                    material,
                    occupancy: 180,
                    ignore_water: false,
                },
            )
            .unwrap();
    }
    (grid, session)
}

fn fill_materials(session: &EditSession) -> Vec<Material> {
    session
        .document
        .stack
        .visible_operations()
        .filter_map(|o| match o.kind() {
            OperationKind::Fill { material, .. } => Some(*material),
            _ => None,
        })
        .collect()
}

#[test]
fn removing_a_material_in_use_remaps_cells_operations_and_base_and_undoes_exactly() {
    let (library, moss, clay) = library();
    let (mut grid, mut session) = world(moss, clay);
    let before_cells = cells(&grid);
    let before_hash = grid.content_hash();
    let before_stack = session.document.stack.clone();
    let before_base = session.document.base().unwrap().whole().content_hash();
    let steps = session.history.undo_len();

    let removal = session
        .remove_material(&mut grid, &library, moss, clay)
        .unwrap();
    assert!(!removal.library.contains(moss));
    assert!(removal.library.contains(clay));
    assert_eq!(removal.operations, 1);
    assert!(removal.base_remapped);
    // The base patch (17×4×17 under the top layer) and the 11×4×11 fill.
    let changed = assert_remapped(&before_cells, &grid, moss, clay);
    assert_eq!(changed, 16 * 4 * 16 + 10 * 3 * 10, "moss cells remapped");
    assert_eq!(fill_materials(&session), vec![clay, clay]);
    // The document derives exactly the cells now held: the material cannot
    // come back when any column is re-derived.
    let base = session.document.base().unwrap();
    assert_eq!(
        derive_whole(base, &session.document.stack).0.content_hash(),
        grid.content_hash()
    );
    assert_eq!(session.history.undo_len(), steps + 1);
    let label = session
        .history
        .undo_steps()
        .last()
        .unwrap()
        .label()
        .to_string();
    assert_eq!(label, "Remove material Moss (now Clay)");
    let after_hash = grid.content_hash();

    let undo = session.apply(&mut grid, &EditCommand::Undo).unwrap();
    assert!(undo.message().contains("undone"));
    assert_eq!(grid.content_hash(), before_hash);
    let mut now = removal.library.clone();
    assert!(session.take_library_change().unwrap().apply(&mut now));
    assert_eq!(now, library);
    assert!(session.take_library_change().is_none(), "handed over once");
    assert_eq!(session.document.stack, before_stack);
    assert_eq!(
        session.document.base().unwrap().whole().content_hash(),
        before_base
    );
    assert_eq!(assert_remapped(&before_cells, &grid, moss, moss), changed);

    session.apply(&mut grid, &EditCommand::Redo).unwrap();
    assert_eq!(grid.content_hash(), after_hash);
    assert!(session.take_library_change().unwrap().apply(&mut now));
    assert_eq!(now, removal.library);
    assert_eq!(fill_materials(&session), vec![clay, clay]);
}

#[test]
fn a_built_in_replacement_and_a_world_without_layers_work_too() {
    let (library, moss, clay) = library();
    let (mut grid, _) = world(moss, clay);
    let before_cells = cells(&grid);
    let before_hash = grid.content_hash();
    let mut plain = EditSession::new(1 << 28, None);
    let removal = plain
        .remove_material(&mut grid, &library, moss, Material::SAND)
        .unwrap();
    assert_eq!(removal.operations, 0);
    assert_eq!(
        assert_remapped(&before_cells, &grid, moss, Material::SAND),
        16 * 4 * 16 + 10 * 3 * 10
    );
    plain.apply(&mut grid, &EditCommand::Undo).unwrap();
    assert_eq!(grid.content_hash(), before_hash);
    let mut now = removal.library.clone();
    assert!(plain.take_library_change().unwrap().apply(&mut now));
    assert_eq!(now, library);
}

#[test]
fn undo_keeps_later_library_edits_and_falls_back_when_the_id_was_taken() {
    let (library, moss, clay) = library();
    let (mut grid, mut session) = world(moss, clay);
    let before_hash = grid.content_hash();
    let removal = session
        .remove_material(&mut grid, &library, moss, clay)
        .unwrap();
    // Sand is tinted after the removal: undo brings Moss back, keeps the tint.
    let mut now = removal.library.clone();
    now.set_tint(Material::SAND, [200, 10, 10]).unwrap();
    session.apply(&mut grid, &EditCommand::Undo).unwrap();
    assert!(session.take_library_change().unwrap().apply(&mut now));
    assert_eq!(now.style(moss), library.style(moss));
    assert_eq!(now.albedo(moss), library.albedo(moss));
    assert_eq!(now.style(Material::SAND).unwrap().tint_srgb, [200, 10, 10]);
    assert_eq!(grid.content_hash(), before_hash);

    // Redo removes it again; a material added then takes id 11, so undo
    // cannot put Moss back at its id: the library before the step returns.
    session.apply(&mut grid, &EditCommand::Redo).unwrap();
    assert!(session.take_library_change().unwrap().apply(&mut now));
    assert!(!now.contains(moss));
    let pebbles = now
        .add_material("Pebbles", texture([120, 120, 120]), None)
        .unwrap();
    assert_eq!(pebbles, moss, "the lowest free id is reused");
    session.apply(&mut grid, &EditCommand::Undo).unwrap();
    assert!(!session.take_library_change().unwrap().apply(&mut now));
    assert_eq!(now, library);
    assert_eq!(grid.content_hash(), before_hash);
}

#[test]
fn bad_removals_are_refused_and_change_nothing() {
    let (library, moss, clay) = library();
    let (mut grid, mut session) = world(moss, clay);
    let hash = grid.content_hash();
    let steps = session.history.undo_len();
    let stack = session.document.stack.clone();
    let cases = [
        (Material::ROCK, clay, "built"),
        (Material(50), clay, "not a solid material of"),
        (moss, moss, "cannot replace"),
        (moss, Material::WATER, "cannot replace"),
        (moss, Material::AIR, "cannot replace"),
        (moss, Material(99), "cannot replace"),
    ];
    for (material, replacement, says) in cases {
        let e = session
            .remove_material(&mut grid, &library, material, replacement)
            .unwrap_err();
        assert!(
            e.to_string().contains(says),
            "{material:?} → {replacement:?}: {e}"
        );
        assert_eq!(grid.content_hash(), hash);
        assert_eq!(session.history.undo_len(), steps);
        assert_eq!(session.document.stack, stack);
    }
    assert!(matches!(
        session.remove_material(&mut grid, &library, Material::ROCK, clay),
        Err(CommandError::Library(LibraryError::BuiltIn { id: 3 }))
    ));
    let mut streaming = Grid::streaming();
    assert!(matches!(
        EditSession::new(1 << 20, None).remove_material(&mut streaming, &library, moss, clay),
        Err(CommandError::StreamedReplacement)
    ));
}
