//! The world document as a JSON record (the `record` entry of the
//! `document` table): the base's source, and every layer with its
//! operations, each operation in the terms its tool takes (a stamp's
//! placement, a path's spec, a stroke's brush, options and centres).
//! Stamps and pasted clipboards are named by the hash of their blob
//! ([`super::blobs`]).
//!
//! Every value is checked when read: names and ids as a new layer or
//! operation would need them, materials by name, and every operation
//! through [`OperationKind::validate`], so an opened document holds only
//! what the editor itself could have made.

use std::sync::Arc;

use glam::{DVec3, IVec3};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::blobs::{clipboard_bytes, clipboard_from, stamp_bytes, stamp_from};
use crate::terrain::command::document_action::{BaseSource, WorldDocument};
use crate::terrain::document::layers::{Layer, LayerId, LayerStack};
use crate::terrain::document::operation::{
    ColumnRect, Operation, OperationId, OperationKind, RecordedStroke,
};
use crate::terrain::editing::brush::{Brush, BrushOptions};
use crate::terrain::editing::region::Clipboard;
use crate::terrain::generation::generate::GeneratorSettings;
use crate::terrain::path::spec::PathSpec;
use crate::terrain::recipe::recipe_materials::RecipeMaterials;
use crate::terrain::recipe::stages::Recipe;
use crate::terrain::stamp::definition::{Stamp, StampPlacement};
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::CellBox;

/// The version of the record this build writes and reads.
pub(super) const RECORD_VERSION: u32 = 1;

/// The whole document.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DocumentRecord {
    /// [`RECORD_VERSION`].
    pub(super) version: u32,
    /// What makes the base cells.
    pub(super) base: BaseRecord,
    /// The layer new edits land on.
    pub(super) active_layer: Option<u32>,
    /// The id the next new layer gets.
    pub(super) next_layer: u32,
    /// The id the next new operation gets.
    pub(super) next_operation: u32,
    /// Lowest first.
    pub(super) layers: Vec<LayerRecord>,
}

/// What makes the base cells (the cells themselves are stored apart).
#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum BaseRecord {
    /// Cells kept as they are.
    Cells,
    /// The default generator.
    Generator {
        /// Seed and size.
        settings: GeneratorSettings,
    },
    /// A recipe.
    Recipe {
        /// The recipe, as its file spells it.
        recipe: Recipe,
        /// What its names meant in the world's library (absent when it
        /// names built-ins only, as in files from before libraries).
        #[serde(default, skip_serializing_if = "RecipeMaterials::is_empty")]
        materials: RecipeMaterials,
        /// Seed and size.
        settings: GeneratorSettings,
    },
}

/// One layer.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LayerRecord {
    id: u32,
    name: String,
    visible: bool,
    locked: bool,
    operations: Vec<OperationRecord>,
}

/// One operation: its id and what it does.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct OperationRecord {
    id: u32,
    does: KindRecord,
}

/// What an operation does, as [`OperationKind`], with stamps and
/// clipboards named by blob.
#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum KindRecord {
    Fill {
        region: CellBox,
        material: Material,
        occupancy: u8,
        ignore_water: bool,
    },
    Clear {
        region: CellBox,
        ignore_water: bool,
    },
    Paste {
        clipboard: String,
        at: IVec3,
        quarter_turns: u8,
    },
    Generate {
        region: CellBox,
        settings: GeneratorSettings,
    },
    SeaLevel {
        region: CellBox,
        level_cells: f64,
    },
    Evaporate {
        region: CellBox,
        level_cells: f64,
    },
    Path {
        spec: PathSpec,
    },
    Stamp {
        stamp: String,
        placement: StampPlacement,
    },
    Stroke {
        brush: Brush,
        options: BrushOptions,
        centres_world: Vec<DVec3>,
        surface_offsets_studs: Option<Vec<Option<f64>>>,
    },
}

/// The name of a blob: its hash as 16 lowercase hex digits.
pub(super) fn blob_name(hash: u64) -> String {
    format!("{hash:016x}")
}

/// The blobs a record names, by hash, made once per stamp or clipboard
/// however often it is used.
#[derive(Default)]
pub(super) struct BlobSet {
    /// Hash → bytes.
    pub(super) blobs: FxHashMap<u64, Arc<Vec<u8>>>,
    stamps: FxHashMap<*const Stamp, u64>,
    clipboards: FxHashMap<*const Clipboard, u64>,
}

/// The blob name of the value behind `key`, made by `bytes` the first
/// time that value is met (`seen` remembers it by address, `blobs` by
/// hash).
fn blob_of<T>(
    blobs: &mut FxHashMap<u64, Arc<Vec<u8>>>,
    seen: &mut FxHashMap<*const T, u64>,
    key: &Arc<T>,
    bytes: impl FnOnce(&T) -> Vec<u8>,
) -> String {
    let hash = *seen.entry(Arc::as_ptr(key)).or_insert_with(|| {
        let bytes = bytes(key);
        let hash = xxhash_rust::xxh3::xxh3_64(&bytes);
        blobs.entry(hash).or_insert_with(|| Arc::new(bytes));
        hash
    });
    blob_name(hash)
}

impl BlobSet {
    fn stamp(&mut self, stamp: &Arc<Stamp>) -> String {
        blob_of(&mut self.blobs, &mut self.stamps, stamp, stamp_bytes)
    }

    fn clipboard(&mut self, clip: &Arc<Clipboard>) -> String {
        blob_of(&mut self.blobs, &mut self.clipboards, clip, clipboard_bytes)
    }
}

fn kind_record(kind: &OperationKind, blobs: &mut BlobSet) -> KindRecord {
    match kind.clone() {
        OperationKind::Fill {
            region,
            material,
            occupancy,
            ignore_water,
        } => KindRecord::Fill {
            region,
            material,
            occupancy,
            ignore_water,
        },
        OperationKind::Clear {
            region,
            ignore_water,
        } => KindRecord::Clear {
            region,
            ignore_water,
        },
        OperationKind::Paste {
            clipboard,
            at,
            quarter_turns,
        } => KindRecord::Paste {
            clipboard: blobs.clipboard(&clipboard),
            at,
            quarter_turns,
        },
        OperationKind::Generate { region, settings } => KindRecord::Generate { region, settings },
        OperationKind::SeaLevel {
            region,
            level_cells,
        } => KindRecord::SeaLevel {
            region,
            level_cells,
        },
        OperationKind::Evaporate {
            region,
            level_cells,
        } => KindRecord::Evaporate {
            region,
            level_cells,
        },
        OperationKind::Path(spec) => KindRecord::Path { spec },
        OperationKind::Stamp { stamp, placement } => KindRecord::Stamp {
            stamp: blobs.stamp(&stamp),
            placement,
        },
        OperationKind::Stroke(s) => KindRecord::Stroke {
            brush: s.brush,
            options: s.options,
            centres_world: s.centres_world.to_vec(),
            surface_offsets_studs: s.surface_offsets_studs.map(|o| o.to_vec()),
        },
    }
}

/// The XXH3-64 of an operation's record, what a column's cache key is
/// made of: equal for equal operations, in the file and in memory.
fn record_hash(op: &OperationRecord) -> u64 {
    // Serializing plain records into a Vec cannot fail (no map with
    // non-string keys, no failing Serialize impl).
    let bytes = serde_json::to_vec(op).unwrap_or_default();
    xxhash_rust::xxh3::xxh3_64(&bytes)
}

/// A visible operation as the cache keys see it: where it may write and
/// the hash of its record.
pub(super) type KeyedOperation = (ColumnRect, u64);

/// The record of `doc`, the blobs it names, every operation's footprint
/// (visible and hidden), and the visible operations in order with their
/// record hashes.
pub(super) fn record_of(
    doc: &WorldDocument,
) -> (
    DocumentRecord,
    BlobSet,
    Vec<ColumnRect>,
    Vec<KeyedOperation>,
) {
    let mut blobs = BlobSet::default();
    let mut footprints = Vec::new();
    let mut keyed = Vec::new();
    let layers = doc
        .stack
        .layers()
        .iter()
        .map(|layer| LayerRecord {
            id: layer.id.0,
            name: layer.name.clone(),
            visible: layer.visible,
            locked: layer.locked,
            operations: layer
                .operations
                .iter()
                .map(|op| {
                    let record = OperationRecord {
                        id: op.id.0,
                        does: kind_record(op.kind(), &mut blobs),
                    };
                    footprints.push(op.footprint());
                    if layer.visible {
                        keyed.push((op.footprint(), record_hash(&record)));
                    }
                    record
                })
                .collect(),
        })
        .collect();
    let base = match &doc.base.source {
        BaseSource::Cells => BaseRecord::Cells,
        BaseSource::Generator(settings) => BaseRecord::Generator {
            settings: settings.clone(),
        },
        BaseSource::Recipe {
            recipe,
            materials,
            settings,
        } => BaseRecord::Recipe {
            recipe: (**recipe).clone(),
            materials: materials.clone(),
            settings: settings.clone(),
        },
    };
    let (next_layer, next_operation) = doc.stack.next_ids();
    let record = DocumentRecord {
        version: RECORD_VERSION,
        base,
        active_layer: doc.stack.active().map(|l| l.0),
        next_layer,
        next_operation,
        layers,
    };
    (record, blobs, footprints, keyed)
}

/// A document read back: what makes its base, the stack, and the visible
/// operations with their record hashes.
pub(super) struct ReadDocument {
    pub(super) source: BaseSource,
    pub(super) stack: LayerStack,
    pub(super) keyed: Vec<KeyedOperation>,
}

/// Looks up a blob by its name.
pub(super) type BlobLookup<'a> = dyn FnMut(&str) -> Result<Arc<Vec<u8>>, String> + 'a;

fn operation_kind(does: KindRecord, blob: &mut BlobLookup<'_>) -> Result<OperationKind, String> {
    Ok(match does {
        KindRecord::Fill {
            region,
            material,
            occupancy,
            ignore_water,
        } => OperationKind::Fill {
            region,
            material,
            occupancy,
            ignore_water,
        },
        KindRecord::Clear {
            region,
            ignore_water,
        } => OperationKind::Clear {
            region,
            ignore_water,
        },
        KindRecord::Paste {
            clipboard,
            at,
            quarter_turns,
        } => OperationKind::Paste {
            clipboard: Arc::new(clipboard_from(&blob(&clipboard)?)?),
            at,
            quarter_turns,
        },
        KindRecord::Generate { region, settings } => OperationKind::Generate { region, settings },
        KindRecord::SeaLevel {
            region,
            level_cells,
        } => OperationKind::SeaLevel {
            region,
            level_cells,
        },
        KindRecord::Evaporate {
            region,
            level_cells,
        } => OperationKind::Evaporate {
            region,
            level_cells,
        },
        KindRecord::Path { spec } => OperationKind::Path(spec),
        KindRecord::Stamp { stamp, placement } => OperationKind::Stamp {
            stamp: Arc::new(stamp_from(&blob(&stamp)?)?),
            placement,
        },
        KindRecord::Stroke {
            brush,
            options,
            centres_world,
            surface_offsets_studs,
        } => {
            if let Some(o) = &surface_offsets_studs
                && o.len() != centres_world.len()
            {
                return Err(format!(
                    "a stroke of {} applications with {} surface offsets",
                    centres_world.len(),
                    o.len()
                ));
            }
            OperationKind::Stroke(RecordedStroke {
                brush,
                options,
                centres_world: centres_world.into(),
                surface_offsets_studs: surface_offsets_studs.map(Into::into),
            })
        }
    })
}

/// The document of `record`, every operation checked as its tool would
/// check it; stamps and clipboards come from `blob`. Errors say which
/// layer or operation is wrong and why.
/// `streamed`: the record belongs to a streaming world, whose generated
/// base may be as large as a streaming world is.
pub(super) fn document_from(
    record: DocumentRecord,
    blob: &mut BlobLookup<'_>,
    streamed: bool,
) -> Result<ReadDocument, String> {
    let check = |settings: &GeneratorSettings| {
        match streamed {
            true => settings.validate_streaming(),
            false => settings.validate(),
        }
        .map_err(|e| e.to_string())
    };
    if record.version != RECORD_VERSION {
        return Err(format!(
            "layer record version {} (this build reads {RECORD_VERSION})",
            record.version
        ));
    }
    let source = match record.base {
        BaseRecord::Cells => BaseSource::Cells,
        BaseRecord::Generator { settings } => {
            check(&settings)?;
            BaseSource::Generator(settings)
        }
        BaseRecord::Recipe {
            recipe,
            materials,
            settings,
        } => {
            check(&settings)?;
            materials.check(&recipe).map_err(|e| e.to_string())?;
            BaseSource::Recipe {
                recipe: Arc::new(recipe),
                materials,
                settings,
            }
        }
    };
    let mut keyed = Vec::new();
    let mut layers = Vec::with_capacity(record.layers.len());
    for layer in record.layers {
        let mut operations = imbl::Vector::new();
        for op in layer.operations {
            let hash = record_hash(&op);
            let id = op.id;
            let kind = operation_kind(op.does, blob)
                .map_err(|e| format!("operation {id} of layer \"{}\": {e}", layer.name))?;
            kind.validate()
                .map_err(|e| format!("operation {id} of layer \"{}\": {e}", layer.name))?;
            let op = Operation::new(OperationId(id), kind);
            if layer.visible {
                keyed.push((op.footprint(), hash));
            }
            operations.push_back(op);
        }
        layers.push(Layer {
            id: LayerId(layer.id),
            name: layer.name,
            visible: layer.visible,
            locked: layer.locked,
            operations,
        });
    }
    let stack = LayerStack::from_saved(
        layers,
        record.active_layer.map(LayerId),
        (record.next_layer, record.next_operation),
    )
    .map_err(|e| e.to_string())?;
    Ok(ReadDocument {
        source,
        stack,
        keyed,
    })
}
