//! World-document entries (spec §14): `layer` acts on a layer named by
//! `layer` (`add`, `select`, `hide`, `show`, `solo`, `lock`, `unlock`,
//! `rename`, `move`, `delete`, `duplicate`, `merge_down`, `bake`);
//! `base` re-makes the base with a new `seed`;
//! `operation` moves, edits or deletes the operation whose id is
//! `operation` (ids count from 1 in the order operations were made).

use glam::DVec2;
use serde::Deserialize;

use crate::terrain::command::document_action::{DocumentAction, LayerRef};
use crate::terrain::command::edit_command::EditCommand;
use crate::terrain::document::operation::OperationId;
use crate::terrain::document::operation_edit::OperationEdit;

use crate::script::format::error::EntryError;

use super::material::solid_material;
use crate::terrain::materials::MaterialLibrary;

/// `layer`: an action on one layer.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LayerEntry {
    /// What to do (see the module documentation).
    action: Option<String>,
    /// The layer's name (for `add` and `rename`, the new name).
    layer: Option<String>,
    /// `rename`: the new name.
    name: Option<String>,
    /// `move`: the new position, 0 = lowest.
    position: Option<usize>,
}

/// The actions `layer` takes, for messages.
const LAYER_ACTIONS: &str = "add, select, hide, show, solo, lock, unlock, rename, move, delete, duplicate, merge_down or bake";

impl LayerEntry {
    /// The document command.
    ///
    /// # Errors
    /// [`EntryError::Document`] for an unknown action or a missing field.
    pub fn parse(self) -> Result<EditCommand, EntryError> {
        let bad = |why: String| EntryError::Document(why);
        let action = self
            .action
            .ok_or_else(|| bad(format!("layer needs an action: {LAYER_ACTIONS}")))?;
        if action == "bake" {
            return Ok(EditCommand::Document(Box::new(DocumentAction::Bake)));
        }
        let name = self.layer.ok_or_else(|| {
            bad(format!(
                "layer {action} needs the layer's name in \"layer\""
            ))
        })?;
        let layer = LayerRef::Name(name.clone());
        Ok(EditCommand::Document(Box::new(match action.as_str() {
            "add" => DocumentAction::AddLayer(name),
            "select" => DocumentAction::SelectLayer(layer),
            "hide" => DocumentAction::SetVisible(layer, false),
            "show" => DocumentAction::SetVisible(layer, true),
            "solo" => DocumentAction::Solo(layer),
            "lock" => DocumentAction::SetLocked(layer, true),
            "unlock" => DocumentAction::SetLocked(layer, false),
            "rename" => DocumentAction::RenameLayer(
                layer,
                self.name
                    .ok_or_else(|| bad("layer rename needs the new \"name\"".into()))?,
            ),
            "move" => DocumentAction::MoveLayer(
                layer,
                self.position
                    .ok_or_else(|| bad("layer move needs a \"position\" (0 = lowest)".into()))?,
            ),
            "delete" => DocumentAction::RemoveLayer(layer),
            "duplicate" => DocumentAction::DuplicateLayer(layer),
            "merge_down" => DocumentAction::MergeDown(layer),
            other => {
                return Err(bad(format!(
                    "unknown layer action \"{other}\" (use {LAYER_ACTIONS})"
                )));
            }
        })))
    }
}

/// `operation`: move, edit or delete one operation.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OperationEntry {
    /// `move`, `edit` or `delete`.
    action: Option<String>,
    /// The operation's id.
    operation: Option<u32>,
    /// `move`: how far on the ground plane, studs `[x, z]`.
    by_xz: Option<[f64; 2]>,
    /// `edit`: stamp or brush radius, cells.
    radius_cells: Option<f64>,
    /// `edit`: stamp turn, degrees.
    rotation_deg: Option<f64>,
    /// `edit`: stamp height scale, cells.
    height_scale_cells: Option<f64>,
    /// `edit`: brush strength.
    strength: Option<f64>,
    /// `edit`: a solid material.
    material: Option<String>,
    /// `edit`: path width, studs.
    width_studs: Option<f64>,
    /// `edit`: path grade cap, degrees.
    max_grade_deg: Option<f64>,
    /// `edit`: river depth, studs.
    depth_studs: Option<f64>,
}

impl OperationEntry {
    /// The document command.
    ///
    /// # Errors
    /// [`EntryError::Document`] for an unknown action, a missing id or
    /// offset, or a non-finite offset; [`EntryError::NotSolidMaterial`].
    pub fn parse(self, library: &MaterialLibrary) -> Result<EditCommand, EntryError> {
        let bad = |why: &str| EntryError::Document(why.to_string());
        let id = OperationId(
            self.operation
                .ok_or_else(|| bad("operation needs the operation's id in \"operation\""))?,
        );
        let action = self.action.as_deref().unwrap_or("");
        Ok(EditCommand::Document(Box::new(match action {
            "move" => {
                let by = self
                    .by_xz
                    .ok_or_else(|| bad("operation move needs \"by_xz\": [x, z] studs"))?;
                if !by.iter().all(|v| v.is_finite()) {
                    return Err(bad("operation move: by_xz must be finite numbers"));
                }
                DocumentAction::MoveOperation(id, DVec2::from_array(by))
            }
            "edit" => DocumentAction::EditOperation(
                id,
                OperationEdit {
                    radius_cells: self.radius_cells,
                    rotation_deg: self.rotation_deg,
                    height_scale_cells: self.height_scale_cells,
                    strength: self.strength,
                    material: solid_material(self.material.as_deref(), library)?,
                    width_studs: self.width_studs,
                    max_grade_deg: self.max_grade_deg,
                    depth_studs: self.depth_studs,
                },
            ),
            "delete" => DocumentAction::DeleteOperation(id),
            _ => return Err(bad("operation needs an action: move, edit or delete")),
        })))
    }
}

/// `base`: re-make the world's base (a generated or recipe world) with
/// another `seed`, re-applying every layer on it.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BaseEntry {
    /// The new seed.
    seed: Option<u64>,
}

impl BaseEntry {
    /// The document command.
    ///
    /// # Errors
    /// [`EntryError::Document`] without a seed.
    pub fn parse(self) -> Result<EditCommand, EntryError> {
        let seed = self
            .seed
            .ok_or_else(|| EntryError::Document("base needs the new \"seed\"".into()))?;
        Ok(EditCommand::Document(Box::new(
            DocumentAction::SetBaseSeed(seed),
        )))
    }
}
