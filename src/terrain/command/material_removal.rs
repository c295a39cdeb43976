//! Removing a material from the world's library while cells use it: every
//! cell of it takes a replacement the artist chose, and so does everything
//! that could bring it back (the layer stack's operations, a kept base,
//! the clipboard). The cells, the document and the library change as one
//! undo step, so undo puts the material, its cells and its operations
//! back exactly.

use rayon::prelude::*;

use crate::terrain::command::document_action::{BaseSource, DocumentBase};
use crate::terrain::command::edit_command::{CommandError, EditSession};
use crate::terrain::command::history::{DocumentSwap, LibraryChange, LibrarySwap};
use crate::terrain::document::base::BaseColumns;
use crate::terrain::editing::recorder::Recorder;
use crate::terrain::materials::{LibraryError, MaterialLibrary};
use crate::terrain::recipe::recipe_materials::RecipeMaterials;
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::chunk::ChunkCells;
use crate::terrain::storage::coords::{CellBox, ChunkCoord};
use crate::terrain::storage::grid::Grid;

/// What removing a material did.
#[derive(Clone, Debug, PartialEq)]
pub struct MaterialRemoval {
    /// The library without the material (the caller installs it).
    pub library: MaterialLibrary,
    /// Chunks whose cells were remapped.
    pub chunks: usize,
    /// Operations of the layer stack that named or carried the material.
    pub operations: usize,
    /// True when the base held the material and was remapped (kept
    /// cells, or a recipe base that named it).
    pub base_remapped: bool,
}

/// Kept base cells with `from` made `to`; `None` when none held `from`.
fn kept_base_replaced(cells: &BaseColumns, from: Material, to: Material) -> Option<BaseColumns> {
    let mut whole = cells.whole();
    let chunks = whole
        .chunks()
        .map(|(c, ch)| (c, ch.cells.clone()))
        .collect();
    let remapped = remapped_chunks(chunks, from, to);
    (!remapped.is_empty()).then(|| {
        let _ = whole.restore_chunks(remapped);
        BaseColumns::kept(&whole)
    })
}

/// A recipe base with `from` made `to`: in the names its recipe resolved,
/// and in its cells: the cooked plan when the base is made from it
/// (nothing cooked again), else the cells it keeps. `None` when neither
/// holds `from`.
fn recipe_base_replaced(
    cells: &BaseColumns,
    materials: &RecipeMaterials,
    (from, to): (Material, Material),
    library: &MaterialLibrary,
) -> Option<(BaseColumns, RecipeMaterials)> {
    let names = materials.with_material_replaced(from, to, library);
    let replaced = match cells.recipe_terrain() {
        Some(terrain) => terrain
            .with_material_replaced(from, to)
            .map(BaseColumns::recipe),
        None => kept_base_replaced(cells, from, to),
    };
    if names.is_none() && replaced.is_none() {
        return None;
    }
    Some((
        replaced.unwrap_or_else(|| cells.clone()),
        names.unwrap_or_else(|| materials.clone()),
    ))
}

/// `chunks` with `from` replaced by `to`, only those that held it, with
/// each chunk's global cell box.
fn remapped_chunks(
    chunks: Vec<(ChunkCoord, ChunkCells)>,
    from: Material,
    to: Material,
) -> Vec<(ChunkCoord, ChunkCells, CellBox)> {
    chunks
        .into_par_iter()
        .filter_map(|(c, cells)| {
            cells
                .with_material_replaced(from, to)
                .map(|new| (c, new, c.cell_box()))
        })
        .collect()
}

impl EditSession {
    /// Removes `material` from `library` and gives every cell of it, every
    /// operation naming or carrying it (locked and hidden layers too: it
    /// must not come back when they are re-derived) and a kept base
    /// `replacement`, as one undo step labelled "Remove material …".
    /// Undo and redo of the step hand the library of that side to
    /// [`EditSession::take_library_change`]. The clipboard is remapped too
    /// (outside the history: a later Paste must not write the id back).
    ///
    /// # Errors
    /// [`CommandError::Library`] for a built-in or an id the library does
    /// not hold; [`CommandError::BadReplacement`] when `replacement` is the
    /// material itself, not solid, or not in the library;
    /// [`CommandError::StreamedReplacement`] on a streaming grid. Nothing
    /// changes then.
    pub fn remove_material(
        &mut self,
        grid: &mut Grid,
        library: &MaterialLibrary,
        material: Material,
        replacement: Material,
    ) -> Result<MaterialRemoval, CommandError> {
        let mut after = library.clone();
        after.remove_material(material)?;
        if !replacement.is_solid() || !after.contains(replacement) {
            return Err(CommandError::BadReplacement {
                removed: library.name(material).to_string(),
                replacement: library.name(replacement).to_string(),
            });
        }
        if grid.is_streaming() || self.document.base().is_some_and(BaseColumns::is_streamed) {
            return Err(CommandError::StreamedReplacement);
        }
        let style = library
            .style(material)
            .cloned()
            .ok_or(LibraryError::NotStyled { id: material.0 })?;
        let textures = [style.albedo, style.top_albedo, style.surface]
            .into_iter()
            .flatten()
            .filter_map(|h| library.texture(h).cloned())
            .collect();
        let label = format!(
            "Remove material {} (now {})",
            library.name(material),
            library.name(replacement)
        );
        let mut rec = Recorder::new(label);
        let cells = grid
            .chunks()
            .map(|(c, chunk)| (c, chunk.cells.clone()))
            .collect();
        let items = remapped_chunks(cells, material, replacement);
        let chunks = items.len();
        if let Some(region) = items.iter().map(|i| i.2).reduce(|a, b| a.union(&b)) {
            // Infallible: restoring storage cannot fail.
            let _ = rec.record(grid, region, |g| {
                Ok::<_, std::convert::Infallible>(g.restore_chunks(items))
            });
        }
        let (swap, operations, base_remapped) = self.remap_document(material, replacement, &after);
        if let Some(clip) = self
            .clipboard
            .as_ref()
            .and_then(|c| c.with_material_replaced(material, replacement))
        {
            self.clipboard = Some(clip);
            self.clipboard_revision = self.clipboard_revision.wrapping_add(1);
        }
        let library_swap = LibrarySwap {
            material,
            style,
            textures,
            before: library.clone(),
            after: after.clone(),
        };
        self.history.commit_library(rec, swap, library_swap, grid);
        Ok(MaterialRemoval {
            library: after,
            chunks,
            operations,
            base_remapped,
        })
    }

    /// Replaces `from` by `to` in the layer stack, a kept base and a recipe base; the
    /// document swap for the undo step (`None` without a document), the
    /// operations changed and whether the base changed.
    fn remap_document(
        &mut self,
        from: Material,
        to: Material,
        library: &MaterialLibrary,
    ) -> (Option<DocumentSwap>, usize, bool) {
        let Some(base) = self.document.base.clone() else {
            return (None, 0, false);
        };
        let before = self.document.stack.clone();
        let operations = self.document.stack.replace_material(from, to);
        // A generated base makes built-in materials only; kept cells and a
        // recipe that names library materials can hold an added one.
        let new_base = match base.source {
            BaseSource::Cells => {
                kept_base_replaced(&base.cells, from, to).map(|cells| DocumentBase {
                    cells,
                    source: BaseSource::Cells,
                })
            }
            BaseSource::Recipe {
                ref recipe,
                ref materials,
                ref settings,
            } => recipe_base_replaced(&base.cells, materials, (from, to), library).map(
                |(cells, materials)| DocumentBase {
                    cells,
                    source: BaseSource::Recipe {
                        recipe: recipe.clone(),
                        materials,
                        settings: settings.clone(),
                    },
                },
            ),
            BaseSource::Generator(_) => None,
        };
        let base_swap = new_base.map(|new| {
            self.document.base = Some(new.clone());
            (base, new)
        });
        let base_remapped = base_swap.is_some();
        let swap = DocumentSwap {
            before,
            after: self.document.stack.clone(),
            base: base_swap,
        };
        (Some(swap), operations, base_remapped)
    }

    /// The library change the last undo or redo made (a material removal
    /// undone or redone), once: the owner of the library applies it
    /// ([`LibraryChange::apply`]). `None` when no step since the last call
    /// changed the library.
    pub fn take_library_change(&mut self) -> Option<LibraryChange> {
        self.library_change.take()
    }
}
