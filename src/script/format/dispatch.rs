//! One script entry: its `frame`, then either a camera keyframe or the
//! tool its `tool` names, read into that tool's struct and validated. A
//! tool's fields are its struct's: a key outside them is refused, naming
//! the entry's tool and the key, before any value is read; only another
//! tool's field left at its default (`null`, or `false` for a flag) is
//! ignored, as the format always has.

use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::terrain::command::edit_command::EditCommand;
use crate::terrain::editing::brush::BrushMode;
use crate::terrain::materials::MaterialLibrary;

use super::entries::brush::{
    BrushEntry, ErosionEntry, FlattenEntry, ReplaceEntry, brush_field_elsewhere,
};
use super::entries::camera::CameraEntry;
use super::entries::document::{BaseEntry, LayerEntry, OperationEntry};
use super::entries::path::PathEntry;
use super::entries::region::{ClearEntry, FillEntry, PasteEntry, RegionEntry};
use super::entries::stamp::{StampEntry, StampFiles};
use super::error::EntryError;
use super::fields::fields_of;
use super::limits::MAX_SCRIPT_FRAME;
use super::raw_entry::{Blank, EntryHeader, RawEntry};
use super::script::{CameraKey, Stroke, StrokeAction};
use super::tool::Tool;

/// `undo` and `redo`: no field besides `frame` and `tool`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HistoryEntry {}

/// What the loader asks of an entry struct: its fields, and whether a
/// blank value (`null` or `false`) of one of them reads as its default.
struct EntryStruct {
    fields: fn() -> &'static [&'static str],
    reads_as_default: fn(&str, Blank) -> bool,
}

impl EntryStruct {
    const fn of<T: DeserializeOwned>() -> EntryStruct {
        EntryStruct {
            fields: fields_of::<T>,
            reads_as_default: reads_as_default::<T>,
        }
    }
}

/// Every entry struct: to tell a field another tool uses from one no tool
/// knows, and to ignore another tool's field left at its default.
const ENTRY_STRUCTS: [EntryStruct; 15] = [
    EntryStruct::of::<BrushEntry>(),
    EntryStruct::of::<FlattenEntry>(),
    EntryStruct::of::<ReplaceEntry>(),
    EntryStruct::of::<ErosionEntry>(),
    EntryStruct::of::<FillEntry>(),
    EntryStruct::of::<ClearEntry>(),
    EntryStruct::of::<RegionEntry>(),
    EntryStruct::of::<PasteEntry>(),
    EntryStruct::of::<PathEntry>(),
    EntryStruct::of::<StampEntry>(),
    EntryStruct::of::<HistoryEntry>(),
    EntryStruct::of::<CameraEntry>(),
    EntryStruct::of::<LayerEntry>(),
    EntryStruct::of::<OperationEntry>(),
    EntryStruct::of::<BaseEntry>(),
];

/// True when `T` has the field `key` and reads `blank` there as if the
/// field were not given (`null` for an optional field, `false` for a flag).
fn reads_as_default<T: DeserializeOwned>(key: &str, blank: Blank) -> bool {
    let Some(value) = blank.to_json() else {
        return false;
    };
    let object = serde_json::Map::from_iter([(key.to_string(), value)]);
    fields_of::<T>().contains(&key)
        && serde_json::from_value::<T>(serde_json::Value::Object(object)).is_ok()
}

/// True when `key`, which the entry's struct lacks, is another tool's field
/// left at its default (as if it were not given).
fn unset(key: &str, blank: Blank) -> bool {
    blank != Blank::No
        && ENTRY_STRUCTS
            .iter()
            .any(|s| (s.reads_as_default)(key, blank))
}

/// A parsed entry.
#[derive(Debug)]
pub(super) enum Entry {
    /// A tool operation.
    Stroke(Stroke),
    /// A camera keyframe.
    Camera(CameraKey),
}

/// Parses and validates one entry; stamps are read through `stamps`.
///
/// # Errors
/// The first [`EntryError`] found: serde's errors for the entry's shape,
/// `frame` and `tool`, then [`EntryError::FrameTooLarge`], then a camera
/// keyframe's or the tool's own checks.
pub(super) fn parse_entry(
    raw: &RawEntry,
    stamps: &mut StampFiles,
    library: &MaterialLibrary,
) -> Result<Entry, EntryError> {
    let header = raw.header().map_err(EntryError::Json)?;
    if header.frame > MAX_SCRIPT_FRAME {
        return Err(EntryError::FrameTooLarge(header.frame));
    }
    if let Some(key) = camera_keyframe(raw, &header)? {
        return Ok(Entry::Camera(key));
    }
    let name = header.tool.clone().unwrap_or_default();
    let tool = Tool::from_name(&name).ok_or(EntryError::UnknownTool(name))?;
    let reader = ToolReader {
        raw,
        header: &header,
        tool,
        library,
    };
    Ok(Entry::Stroke(Stroke {
        frame: header.frame,
        action: reader.action(stamps)?,
    }))
}

/// The entry's camera keyframe; `None` unless it gives a `camera`.
///
/// # Errors
/// [`EntryError::CameraWithTool`] when it also names a tool or gives a
/// field (other than one left at its default), serde's error for a camera
/// that is not five numbers, [`EntryError::BadCamera`].
fn camera_keyframe(raw: &RawEntry, header: &EntryHeader) -> Result<Option<CameraKey>, EntryError> {
    if !header.given("camera") {
        return Ok(None);
    }
    let skip =
        keys_outside(header, fields_of::<CameraEntry>()).map_err(|_| EntryError::CameraWithTool)?;
    if header.tool.as_ref().is_some_and(|t| !t.is_empty()) {
        return Err(EntryError::CameraWithTool);
    }
    let entry: CameraEntry = raw.read(&skip).map_err(EntryError::Json)?;
    entry.parse(header.frame)
}

/// The keys of the entry outside `fields`, which are all another tool's
/// fields left at their default (to be skipped).
///
/// # Errors
/// The first key outside `fields` (in file order) that is not.
fn keys_outside<'h>(header: &'h EntryHeader, fields: &[&str]) -> Result<Vec<&'h str>, &'h str> {
    let mut skip = Vec::new();
    for (key, blank) in &header.keys {
        if fields.contains(&key.as_str()) {
            continue;
        }
        if !unset(key, *blank) {
            return Err(key);
        }
        skip.push(key.as_str());
    }
    Ok(skip)
}

/// An entry whose tool is known, to be read into that tool's struct.
struct ToolReader<'a> {
    raw: &'a RawEntry<'a>,
    header: &'a EntryHeader,
    tool: Tool,
    /// The library whose names the entry's materials are looked up in.
    library: &'a MaterialLibrary,
}

impl ToolReader<'_> {
    /// The entry's action: its tool's struct, validated.
    fn action(&self, stamps: &mut StampFiles) -> Result<StrokeAction, EntryError> {
        use StrokeAction::{Brush, Command};
        Ok(match self.tool {
            Tool::Brush(BrushMode::Flatten) => {
                Brush(self.read::<FlattenEntry>()?.parse(self.library)?)
            }
            Tool::Brush(BrushMode::Replace) => {
                Brush(self.read::<ReplaceEntry>()?.parse(self.library)?)
            }
            Tool::Brush(mode) if mode.is_erosion() => {
                Brush(self.read::<ErosionEntry>()?.parse(mode, self.library)?)
            }
            Tool::Brush(mode) => Brush(self.read::<BrushEntry>()?.parse(mode, self.library)?),
            Tool::Fill => Command(self.read::<FillEntry>()?.parse(self.library)?),
            Tool::Clear => Command(self.read::<ClearEntry>()?.parse()?),
            Tool::Copy => Command(EditCommand::Copy {
                region: self.read::<RegionEntry>()?.region("copy")?,
            }),
            Tool::Generate => Command(EditCommand::Generate {
                region: self.read::<RegionEntry>()?.region("generate")?,
            }),
            Tool::Paste => Command(self.read::<PasteEntry>()?.parse()?),
            Tool::Path => Command(self.read::<PathEntry>()?.parse(self.library)?),
            Tool::Stamp => Command(self.read::<StampEntry>()?.parse(stamps, self.library)?),
            Tool::Layer => Command(self.read::<LayerEntry>()?.parse()?),
            Tool::Operation => Command(self.read::<OperationEntry>()?.parse(self.library)?),
            Tool::Base => Command(self.read::<BaseEntry>()?.parse()?),
            Tool::Undo => {
                self.read::<HistoryEntry>()?;
                Command(EditCommand::Undo)
            }
            Tool::Redo => {
                self.read::<HistoryEntry>()?;
                Command(EditCommand::Redo)
            }
        })
    }

    /// The entry read into the tool's struct `T`, whose fields are the
    /// keys the tool takes; another tool's field left at its default
    /// (`null`, or `false` for a flag) is ignored.
    ///
    /// # Errors
    /// For the first other key `T` lacks (in file order): the Flatten- or
    /// Replace-only error on another brush, [`EntryError::UnusedField`]
    /// for a field of another tool, [`EntryError::UnknownField`] for one no
    /// tool has; then serde's error for a value of the wrong type.
    fn read<T: DeserializeOwned>(&self) -> Result<T, EntryError> {
        let fields = fields_of::<T>();
        let skip = keys_outside(self.header, fields).map_err(|key| self.misplaced(key, fields))?;
        self.raw
            .read::<T>(&skip)
            .map_err(|message| EntryError::Json(format!("{}: {message}", self.tool.name())))
    }

    /// The error for `key`, which the tool (taking `fields`) does not use.
    fn misplaced(&self, key: &str, fields: &'static [&'static str]) -> EntryError {
        let brush_only = match self.tool {
            Tool::Brush(_) => brush_field_elsewhere(key),
            _ => None,
        };
        if let Some(e) = brush_only {
            return e;
        }
        let tool = self.tool.name().to_string();
        match ENTRY_STRUCTS
            .iter()
            .flat_map(|s| (s.fields)())
            .find(|f| **f == key)
        {
            Some(field) => EntryError::UnusedField { field, tool },
            None => EntryError::UnknownField {
                field: key.to_string(),
                tool,
                expected: fields,
            },
        }
    }
}
