//! A plain-data summary of the world document for the Layers section
//! (layers top first with their flags and operations, the last
//! re-derivation's figures and what it skipped), copied once per frame. No
//! GUI types, so the headless `--ui` picture and the window agree.

use crate::terrain::command::document_action::DocumentState;

/// Most operations listed for the active layer (the newest ones).
pub const LISTED_OPERATIONS: usize = 60;

/// One listed layer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LayerRow {
    /// Stable id.
    pub id: u32,
    /// Name.
    pub name: String,
    /// Drawn.
    pub visible: bool,
    /// Refuses edits.
    pub locked: bool,
    /// New edits land on it.
    pub active: bool,
    /// Operations it holds.
    pub operation_count: usize,
    /// Position in the stack, 0 = lowest.
    pub position: usize,
}

/// One listed operation of the active layer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OperationRow {
    /// Stable id.
    pub id: u32,
    /// What it is, e.g. `"Stamp mesa (raise to)"`.
    pub label: String,
    /// Its kind, e.g. `"stamp"`.
    pub kind: &'static str,
    /// A path operation's spec (its points and settings, to edit them in
    /// the Path tool).
    pub path: Option<crate::terrain::path::spec::PathSpec>,
}

/// What the Layers section shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LayersView {
    /// False when the world keeps no document (a streaming world).
    pub enabled: bool,
    /// Layers, top first.
    pub layers: Vec<LayerRow>,
    /// The active layer's operations, newest first.
    pub operations: Vec<OperationRow>,
    /// Operations in all layers.
    pub operation_count: usize,
    /// The last re-derivation: dirty columns, operations applied, ms.
    pub last_derive: Option<(usize, usize, f64)>,
    /// Operations the last re-derivation skipped, with why.
    pub failures: Vec<String>,
    /// The base's seed (generated and recipe worlds).
    pub base_seed: Option<u64>,
    /// True on a streaming world: its base is its file's terrain (no seed
    /// change) and its cells are never all in memory (no Bake).
    pub streamed: bool,
    /// A seed change running in the background (set by the window).
    pub base_job: Option<crate::editor::tools::base_job::BaseJobStatus>,
}

impl LayersView {
    /// A view of `doc`.
    pub fn of(doc: &DocumentState) -> LayersView {
        if !doc.is_enabled() {
            return LayersView::default();
        }
        let stack = &doc.stack;
        let active = stack.active();
        let layers = stack
            .layers()
            .iter()
            .enumerate()
            .rev()
            .map(|(position, l)| LayerRow {
                id: l.id.0,
                name: l.name.clone(),
                visible: l.visible,
                locked: l.locked,
                active: Some(l.id) == active,
                operation_count: l.operations.len(),
                position,
            })
            .collect();
        let operations = active
            .and_then(|id| stack.layer(id))
            .map(|l| {
                l.operations
                    .iter()
                    .rev()
                    .take(LISTED_OPERATIONS)
                    .map(|o| OperationRow {
                        id: o.id.0,
                        label: o.kind().label(),
                        kind: o.kind().kind_name(),
                        path: match o.kind() {
                            crate::terrain::document::operation::OperationKind::Path(spec) => {
                                Some(spec.clone())
                            }
                            _ => None,
                        },
                    })
                    .collect()
            })
            .unwrap_or_default();
        LayersView {
            enabled: true,
            layers,
            operations,
            operation_count: stack.operation_count(),
            last_derive: doc
                .last_derive
                .map(|d| (d.dirty_columns, d.applied_operations, d.elapsed_ms)),
            failures: doc
                .last_failures
                .iter()
                .map(|(id, e)| format!("operation {} skipped: {e}", id.0))
                .collect(),
            base_seed: doc.base_source().and_then(|s| s.seed()),
            streamed: doc.base().is_some_and(|b| b.is_streamed()),
            base_job: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::command::edit_command::EditSession;
    use crate::terrain::document::operation::OperationKind;
    use crate::terrain::storage::cell::Material;
    use crate::terrain::storage::coords::CellBox;
    use crate::terrain::storage::grid::Grid;
    use glam::IVec3;

    #[test]
    fn the_view_lists_layers_top_first_and_the_active_layers_operations() {
        let mut session = EditSession::new(1 << 24, None);
        assert!(!LayersView::of(&session.document).enabled);
        session.enable_document(&Grid::new());
        let stack = &mut session.document.stack;
        stack.add_layer("Ground").unwrap();
        stack
            .add_operation(OperationKind::Fill {
                region: CellBox::new(IVec3::ZERO, IVec3::ONE),
                material: Material::SAND,
                occupancy: 255,
                ignore_water: false,
            })
            .unwrap();
        stack.add_layer("Sculpt").unwrap();
        let view = LayersView::of(&session.document);
        let names: Vec<&str> = view.layers.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["Sculpt", "Ground"]);
        assert!(view.layers[0].active);
        assert_eq!(view.layers[1].operation_count, 1);
        assert_eq!(view.operation_count, 1);
        // The active layer (Sculpt) has no operation yet.
        assert!(view.operations.is_empty());
    }

    #[test]
    fn a_streaming_worlds_view_says_so_and_keeps_its_seed() {
        use crate::terrain::document::base::{BaseColumns, BaseSource};
        use crate::terrain::generation::generate::GeneratorSettings;
        use crate::terrain::generation::generated_columns::GeneratedColumns;
        let settings = GeneratorSettings {
            seed: 9,
            size_cells: 1 << 20,
        };
        let mut session = EditSession::new(1 << 24, None);
        session.enable_streamed_document(
            BaseColumns::streamed(std::sync::Arc::new(GeneratedColumns::new(&settings))),
            BaseSource::Generator(settings),
        );
        let view = LayersView::of(&session.document);
        assert!(view.enabled && view.streamed);
        assert_eq!(view.base_seed, Some(9));
        session.enable_document(&Grid::new());
        assert!(!LayersView::of(&session.document).streamed);
    }
}
