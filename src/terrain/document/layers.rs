//! The layer stack of a world document (spec §14): ordered layers, each an
//! ordered list of operations, with stable ids, names, visible and locked
//! flags and the active layer new edits land on. Every action here only
//! changes the document; the cells follow through
//! [`crate::terrain::document::derive`].

use crate::terrain::document::operation::{Operation, OperationId, OperationKind};
use crate::terrain::storage::cell::Material;

/// Stable id of a layer: unique within its document, kept through save,
/// reopen, reorder and undo.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LayerId(pub u32);

/// One layer: a named, ordered list of operations.
#[derive(Clone, Debug, PartialEq)]
pub struct Layer {
    /// Stable id.
    pub id: LayerId,
    /// What the artist calls it.
    pub name: String,
    /// Hidden layers take no part in deriving cells.
    pub visible: bool,
    /// Locked layers refuse new, edited and deleted operations.
    pub locked: bool,
    /// Operations, applied first to last. A persistent vector: a copy of
    /// the stack (an undo step keeps one) shares every operation.
    pub operations: imbl::Vector<Operation>,
}

/// Longest layer name, characters.
pub const MAX_LAYER_NAME_CHARS: usize = 64;

/// Why a document action was refused. The document is unchanged.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DocumentError {
    /// No layer has this id.
    #[error("there is no layer {0}")]
    UnknownLayer(u32),
    /// No operation has this id.
    #[error("there is no operation {0}")]
    UnknownOperation(u32),
    /// The layer is locked.
    #[error("layer \"{0}\" is locked (unlock it to change its operations)")]
    Locked(String),
    /// New edits on a hidden layer.
    #[error("layer \"{0}\" is hidden (show it to edit on it)")]
    Hidden(String),
    /// Merge down on the lowest layer.
    #[error("layer \"{0}\" is the lowest: there is no layer to merge it into")]
    NothingBelow(String),
    /// A layer position past the end of the stack.
    #[error("layer position {position} is outside 0..{count}")]
    BadPosition {
        /// The position asked for.
        position: usize,
        /// Layers in the stack.
        count: usize,
    },
    /// Another layer already has this name (scripts name layers).
    #[error("there is already a layer named \"{0}\"")]
    NameTaken(String),
    /// An empty, too long or control-character name.
    #[error("a layer name needs 1 to {MAX_LAYER_NAME_CHARS} printable characters")]
    BadName,
    /// An edit that would change an operation's kind (a stamp into a path).
    #[error("operation {0} is a {1}: it can only be replaced by another {1}")]
    KindChange(u32, &'static str),
    /// A setting the operation lacks, or a value its tool refuses.
    #[error("operation {0}: {1}")]
    Refused(u32, String),
    /// No layer has this name.
    #[error("there is no layer named \"{0}\"")]
    UnknownLayerName(String),
    /// A saved stack whose ids do not add up.
    #[error("the saved layer stack is inconsistent: {0}")]
    Inconsistent(String),
}

/// The authored part of a world: the layer stack over the base, lowest
/// layer first.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerStack {
    layers: Vec<Layer>,
    active: Option<LayerId>,
    next_layer: u32,
    next_operation: u32,
}

impl Default for LayerStack {
    fn default() -> Self {
        LayerStack::new()
    }
}

fn check_name(name: &str) -> Result<(), DocumentError> {
    let n = name.chars().count();
    if n == 0 || n > MAX_LAYER_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(DocumentError::BadName);
    }
    Ok(())
}

impl LayerStack {
    /// An empty stack: no layer yet (the first edit makes "Layer 1").
    pub fn new() -> LayerStack {
        LayerStack {
            layers: Vec::new(),
            active: None,
            next_layer: 1,
            next_operation: 1,
        }
    }

    /// The layers, lowest first.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// The layer new edits land on.
    pub fn active(&self) -> Option<LayerId> {
        self.active
    }

    /// Operations in all layers.
    pub fn operation_count(&self) -> usize {
        self.layers.iter().map(|l| l.operations.len()).sum()
    }

    /// The operations that derive cells, in order: every visible layer's,
    /// lowest layer first.
    pub fn visible_operations(&self) -> impl Iterator<Item = &Operation> {
        self.layers
            .iter()
            .filter(|l| l.visible)
            .flat_map(|l| l.operations.iter())
    }

    /// The id of the layer named `name` (the lowest, when several are).
    ///
    /// # Errors
    /// [`DocumentError::UnknownLayerName`].
    pub fn layer_named(&self, name: &str) -> Result<LayerId, DocumentError> {
        self.layers
            .iter()
            .find(|l| l.name == name)
            .map(|l| l.id)
            .ok_or_else(|| DocumentError::UnknownLayerName(name.to_string()))
    }

    /// The layer `id`.
    pub fn layer(&self, id: LayerId) -> Option<&Layer> {
        self.layers.iter().find(|l| l.id == id)
    }

    fn index_of(&self, id: LayerId) -> Result<usize, DocumentError> {
        self.layers
            .iter()
            .position(|l| l.id == id)
            .ok_or(DocumentError::UnknownLayer(id.0))
    }

    /// The operation `id` and the layer holding it.
    pub fn operation(&self, id: OperationId) -> Option<(LayerId, &Operation)> {
        self.layers
            .iter()
            .find_map(|l| l.operations.iter().find(|o| o.id == id).map(|o| (l.id, o)))
    }

    /// The operation an artist points at in column `column` (cells
    /// `(x, z)`): the topmost visible one whose footprint holds it, stamps
    /// and paths before strokes and boxes (they are what one moves).
    pub fn operation_at(&self, column: glam::IVec2) -> Option<(LayerId, OperationId)> {
        let topmost = |movable: bool| {
            self.layers
                .iter()
                .rev()
                .filter(|l| l.visible)
                .find_map(|l| {
                    l.operations
                        .iter()
                        .rev()
                        .find(|o| {
                            let is_movable = matches!(
                                o.kind(),
                                OperationKind::Stamp { .. } | OperationKind::Path(_)
                            );
                            is_movable == movable && o.footprint().contains(column)
                        })
                        .map(|o| (l.id, o.id))
                })
        };
        topmost(true).or_else(|| topmost(false))
    }

    /// Adds a layer named `name` just above the active one (on top when
    /// there is none) and makes it active.
    ///
    /// # Errors
    /// [`DocumentError::BadName`], [`DocumentError::NameTaken`].
    pub fn add_layer(&mut self, name: &str) -> Result<LayerId, DocumentError> {
        check_name(name)?;
        self.check_free(name, None)?;
        let id = LayerId(self.next_layer);
        self.next_layer += 1;
        let at = match self.active.and_then(|a| self.index_of(a).ok()) {
            Some(i) => i + 1,
            None => self.layers.len(),
        };
        self.layers.insert(
            at,
            Layer {
                id,
                name: name.to_string(),
                visible: true,
                locked: false,
                operations: imbl::Vector::new(),
            },
        );
        self.active = Some(id);
        Ok(id)
    }

    /// Refuses `name` when a layer other than `except` has it: a name is
    /// how scripts address a layer.
    fn check_free(&self, name: &str, except: Option<LayerId>) -> Result<(), DocumentError> {
        if self
            .layers
            .iter()
            .any(|l| l.name == name && Some(l.id) != except)
        {
            return Err(DocumentError::NameTaken(name.to_string()));
        }
        Ok(())
    }

    /// `base`, or `base 2`, `base 3`, ... : the first name no layer has.
    fn free_name(&self, base: &str) -> String {
        let base: String = base.chars().take(MAX_LAYER_NAME_CHARS - 6).collect();
        (1..)
            .map(|n| {
                if n == 1 {
                    base.clone()
                } else {
                    format!("{base} {n}")
                }
            })
            .find(|name| self.check_free(name, None).is_ok())
            .unwrap_or(base)
    }

    /// Makes `id` the layer new edits land on.
    ///
    /// # Errors
    /// [`DocumentError::UnknownLayer`].
    pub fn select_layer(&mut self, id: LayerId) -> Result<(), DocumentError> {
        self.index_of(id)?;
        self.active = Some(id);
        Ok(())
    }

    /// Renames layer `id`.
    ///
    /// # Errors
    /// [`DocumentError::UnknownLayer`], [`DocumentError::BadName`],
    /// [`DocumentError::NameTaken`] (by another layer).
    pub fn rename_layer(&mut self, id: LayerId, name: &str) -> Result<(), DocumentError> {
        check_name(name)?;
        let i = self.index_of(id)?;
        self.check_free(name, Some(id))?;
        self.layers[i].name = name.to_string();
        Ok(())
    }

    /// Shows or hides layer `id`.
    ///
    /// # Errors
    /// [`DocumentError::UnknownLayer`].
    pub fn set_visible(&mut self, id: LayerId, visible: bool) -> Result<(), DocumentError> {
        let i = self.index_of(id)?;
        self.layers[i].visible = visible;
        Ok(())
    }

    /// Shows layer `id` and hides every other.
    ///
    /// # Errors
    /// [`DocumentError::UnknownLayer`].
    pub fn solo(&mut self, id: LayerId) -> Result<(), DocumentError> {
        self.index_of(id)?;
        for l in &mut self.layers {
            l.visible = l.id == id;
        }
        Ok(())
    }

    /// Locks or unlocks layer `id`.
    ///
    /// # Errors
    /// [`DocumentError::UnknownLayer`].
    pub fn set_locked(&mut self, id: LayerId, locked: bool) -> Result<(), DocumentError> {
        let i = self.index_of(id)?;
        self.layers[i].locked = locked;
        Ok(())
    }

    /// Moves layer `id` to `position` (0 = lowest).
    ///
    /// # Errors
    /// [`DocumentError::UnknownLayer`], [`DocumentError::BadPosition`].
    pub fn move_layer(&mut self, id: LayerId, position: usize) -> Result<(), DocumentError> {
        let i = self.index_of(id)?;
        if position >= self.layers.len() {
            return Err(DocumentError::BadPosition {
                position,
                count: self.layers.len(),
            });
        }
        let layer = self.layers.remove(i);
        self.layers.insert(position, layer);
        Ok(())
    }

    /// Deletes layer `id` with its operations; the active layer becomes the
    /// one below (or the lowest).
    ///
    /// # Errors
    /// [`DocumentError::UnknownLayer`], [`DocumentError::Locked`].
    pub fn remove_layer(&mut self, id: LayerId) -> Result<(), DocumentError> {
        let i = self.index_of(id)?;
        self.check_unlocked(i)?;
        self.layers.remove(i);
        if self.active == Some(id) {
            self.active = self
                .layers
                .get(i.saturating_sub(1))
                .or(self.layers.first())
                .map(|l| l.id);
        }
        Ok(())
    }

    /// Copies layer `id` (its operations get new ids) just above it and
    /// makes the copy active.
    ///
    /// # Errors
    /// [`DocumentError::UnknownLayer`].
    pub fn duplicate_layer(&mut self, id: LayerId) -> Result<LayerId, DocumentError> {
        let i = self.index_of(id)?;
        let mut copy = self.layers[i].clone();
        copy.id = LayerId(self.next_layer);
        self.next_layer += 1;
        copy.name = self.free_name(&format!("{} copy", copy.name));
        for op in &mut copy.operations {
            op.id = OperationId(self.next_operation);
            self.next_operation += 1;
        }
        let new_id = copy.id;
        self.layers.insert(i + 1, copy);
        self.active = Some(new_id);
        Ok(new_id)
    }

    /// Appends layer `id`'s operations to the layer below and removes it.
    /// A hidden layer's operations stay out of the cells only while it is
    /// hidden, so merging one makes them take part.
    ///
    /// # Errors
    /// [`DocumentError::UnknownLayer`], [`DocumentError::NothingBelow`],
    /// [`DocumentError::Locked`] when either layer is locked.
    pub fn merge_down(&mut self, id: LayerId) -> Result<LayerId, DocumentError> {
        let i = self.index_of(id)?;
        if i == 0 {
            return Err(DocumentError::NothingBelow(self.layers[i].name.clone()));
        }
        self.check_unlocked(i)?;
        self.check_unlocked(i - 1)?;
        let upper = self.layers.remove(i);
        let lower = &mut self.layers[i - 1];
        lower.operations.append(upper.operations);
        let lower_id = lower.id;
        if self.active == Some(id) {
            self.active = Some(lower_id);
        }
        Ok(lower_id)
    }

    fn check_unlocked(&self, i: usize) -> Result<(), DocumentError> {
        let l = &self.layers[i];
        if l.locked {
            Err(DocumentError::Locked(l.name.clone()))
        } else {
            Ok(())
        }
    }

    /// Appends `kind` to the active layer (making "Layer 1" when the stack
    /// is empty) and returns its id.
    ///
    /// # Errors
    /// [`DocumentError::Locked`] when the active layer is locked.
    pub fn add_operation(&mut self, kind: OperationKind) -> Result<OperationId, DocumentError> {
        let i = match self.active.and_then(|a| self.index_of(a).ok()) {
            Some(i) => i,
            None => {
                let name = self.free_name(&format!("Layer {}", self.next_layer));
                let id = self.add_layer(&name)?;
                self.index_of(id)?
            }
        };
        self.check_unlocked(i)?;
        let id = OperationId(self.next_operation);
        self.next_operation += 1;
        self.layers[i]
            .operations
            .push_back(Operation::new(id, kind));
        Ok(id)
    }

    /// True when an operation appended to the active layer now would be
    /// the last one applied (no visible layer above the active one holds
    /// an operation): it can then be applied straight onto the cells.
    pub fn appends_on_top(&self) -> bool {
        let Some(i) = self.active.and_then(|a| self.index_of(a).ok()) else {
            return self.visible_operations().next().is_none();
        };
        self.layers[i].visible
            && self.layers[i + 1..]
                .iter()
                .all(|l| !l.visible || l.operations.is_empty())
    }

    fn locate(&self, id: OperationId) -> Result<(usize, usize), DocumentError> {
        self.layers
            .iter()
            .enumerate()
            .find_map(|(li, l)| {
                l.operations
                    .iter()
                    .position(|o| o.id == id)
                    .map(|oi| (li, oi))
            })
            .ok_or(DocumentError::UnknownOperation(id.0))
    }

    /// Replaces what operation `id` does (move a stamp, edit a path's
    /// points, change a stroke's strength), keeping its id and place.
    ///
    /// # Errors
    /// [`DocumentError::UnknownOperation`], [`DocumentError::Locked`],
    /// [`DocumentError::KindChange`] when `kind` is another kind.
    pub fn edit_operation(
        &mut self,
        id: OperationId,
        kind: OperationKind,
    ) -> Result<(), DocumentError> {
        let (li, oi) = self.locate(id)?;
        self.check_unlocked(li)?;
        let op = &mut self.layers[li].operations[oi];
        let old = op.kind().kind_name();
        if old != kind.kind_name() {
            return Err(DocumentError::KindChange(id.0, old));
        }
        op.set_kind(kind);
        Ok(())
    }

    /// Replaces material `from` by `to` in every operation of every layer
    /// ([`OperationKind::with_material_replaced`]), locked and hidden layers
    /// included: a removed material must not come back when any of them is
    /// re-derived. Ids and order are kept. Returns the operations changed.
    pub fn replace_material(&mut self, from: Material, to: Material) -> usize {
        let mut changed = 0;
        for layer in &mut self.layers {
            for op in layer.operations.iter_mut() {
                if let Some(kind) = op.kind().with_material_replaced(from, to) {
                    op.set_kind(kind);
                    changed += 1;
                }
            }
        }
        changed
    }

    /// Deletes operation `id`.
    ///
    /// # Errors
    /// [`DocumentError::UnknownOperation`], [`DocumentError::Locked`].
    pub fn delete_operation(&mut self, id: OperationId) -> Result<(), DocumentError> {
        let (li, oi) = self.locate(id)?;
        self.check_unlocked(li)?;
        self.layers[li].operations.remove(oi);
        Ok(())
    }

    /// The ids the next new layer and operation get (`(layer, operation)`):
    /// saved with the document so ids are never reused.
    pub fn next_ids(&self) -> (u32, u32) {
        (self.next_layer, self.next_operation)
    }

    /// A stack as saved: `layers` lowest first, the active layer and the
    /// next ids (raised past every id in use when lower, so a file whose
    /// counters were lost still never reuses one).
    ///
    /// # Errors
    /// [`DocumentError::BadName`] or [`DocumentError::NameTaken`] for a
    /// layer name a new layer could not have, and
    /// [`DocumentError::Inconsistent`] for a layer or operation id used
    /// twice (or 0, or the largest id) or an active layer that is not
    /// there.
    pub fn from_saved(
        layers: Vec<Layer>,
        active: Option<LayerId>,
        next_ids: (u32, u32),
    ) -> Result<LayerStack, DocumentError> {
        let mut layer_ids = std::collections::BTreeSet::new();
        let mut op_ids = std::collections::BTreeSet::new();
        let mut names = std::collections::BTreeSet::new();
        let bad_id = |id: u32| id == 0 || id == u32::MAX;
        for layer in &layers {
            check_name(&layer.name)?;
            if !names.insert(layer.name.as_str()) {
                return Err(DocumentError::NameTaken(layer.name.clone()));
            }
            if bad_id(layer.id.0) || !layer_ids.insert(layer.id.0) {
                return Err(DocumentError::Inconsistent(format!(
                    "layer id {} is 0, too large or used twice",
                    layer.id.0
                )));
            }
            for op in &layer.operations {
                if bad_id(op.id.0) || !op_ids.insert(op.id.0) {
                    return Err(DocumentError::Inconsistent(format!(
                        "operation id {} is 0, too large or used twice",
                        op.id.0
                    )));
                }
            }
        }
        if let Some(a) = active
            && !layer_ids.contains(&a.0)
        {
            return Err(DocumentError::Inconsistent(format!(
                "the active layer {} is not in the stack",
                a.0
            )));
        }
        let past = |ids: &std::collections::BTreeSet<u32>| ids.last().map_or(1, |m| m + 1);
        Ok(LayerStack {
            next_layer: next_ids.0.max(past(&layer_ids)),
            next_operation: next_ids.1.max(past(&op_ids)),
            layers,
            active,
        })
    }

    /// Removes every layer (after a bake: the cells became the base).
    pub fn clear(&mut self) {
        self.layers.clear();
        self.active = None;
    }
}
