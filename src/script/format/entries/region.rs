//! Region entries, on the box `region_min` (inclusive) to `region_max`
//! (exclusive) in cells: `fill` ([`FillEntry`]), `clear` ([`ClearEntry`]),
//! `copy` and `generate` ([`RegionEntry`]); and `paste` ([`PasteEntry`]),
//! which writes the clipboard at a corner.

use glam::IVec3;
use serde::Deserialize;

use crate::terrain::command::edit_command::EditCommand;
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::CellBox;

use crate::script::format::error::EntryError;

use super::material::parse_material;
use crate::terrain::materials::MaterialLibrary;

/// `fill`: the box set to one material.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FillEntry {
    /// Minimum corner, cells (inclusive).
    region_min: Option<[i32; 3]>,
    /// Maximum corner, cells (exclusive).
    region_max: Option<[i32; 3]>,
    /// A solid or `water` (default grass).
    material: Option<String>,
    /// 1–255 (default 255).
    occupancy: Option<u8>,
    /// Leave water alone.
    ignore_water: bool,
}

/// `clear`: the box emptied.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClearEntry {
    /// Minimum corner, cells (inclusive).
    region_min: Option<[i32; 3]>,
    /// Maximum corner, cells (exclusive).
    region_max: Option<[i32; 3]>,
    /// Leave water alone.
    ignore_water: bool,
}

/// `copy` and `generate`: a box and nothing else.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RegionEntry {
    /// Minimum corner, cells (inclusive).
    region_min: Option<[i32; 3]>,
    /// Maximum corner, cells (exclusive).
    region_max: Option<[i32; 3]>,
}

/// `paste`: the clipboard written with its minimum corner at `at`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PasteEntry {
    /// Minimum corner of the pasted box, cells.
    at: Option<[i32; 3]>,
    /// Turns of 90° about +Y, 0–3 (default 0).
    quarter_turns: Option<u8>,
}

/// The non-empty box `min..max` of a `tool` entry.
///
/// # Errors
/// [`EntryError::MissingRegion`] without both corners,
/// [`EntryError::EmptyRegion`] for a box without a cell.
fn region(min: Option<[i32; 3]>, max: Option<[i32; 3]>, tool: &str) -> Result<CellBox, EntryError> {
    match (min, max) {
        (Some(a), Some(b)) => {
            let region = CellBox::new(IVec3::from_array(a), IVec3::from_array(b));
            if region.is_empty() {
                Err(EntryError::EmptyRegion { min: a, max: b })
            } else {
                Ok(region)
            }
        }
        _ => Err(EntryError::MissingRegion(tool.to_string())),
    }
}

impl FillEntry {
    /// The [`EditCommand::Fill`].
    ///
    /// # Errors
    /// An unknown material or air, occupancy 0, or a missing or empty box
    /// (checked in that order).
    pub fn parse(self, library: &MaterialLibrary) -> Result<EditCommand, EntryError> {
        let material = match &self.material {
            None => Material::GRASS,
            Some(m) => parse_material(m, library)
                .filter(|m| *m != Material::AIR)
                .ok_or_else(|| EntryError::NotFillMaterial(m.clone()))?,
        };
        let occupancy = self.occupancy.unwrap_or(255);
        if occupancy == 0 {
            return Err(EntryError::ZeroOccupancy);
        }
        Ok(EditCommand::Fill {
            region: region(self.region_min, self.region_max, "fill")?,
            material,
            occupancy,
            ignore_water: self.ignore_water,
        })
    }
}

impl ClearEntry {
    /// The [`EditCommand::Clear`].
    ///
    /// # Errors
    /// A missing or empty box.
    pub fn parse(self) -> Result<EditCommand, EntryError> {
        Ok(EditCommand::Clear {
            region: region(self.region_min, self.region_max, "clear")?,
            ignore_water: self.ignore_water,
        })
    }
}

impl RegionEntry {
    /// The box of a `tool` (`copy` or `generate`) entry.
    ///
    /// # Errors
    /// A missing or empty box.
    pub fn region(self, tool: &str) -> Result<CellBox, EntryError> {
        region(self.region_min, self.region_max, tool)
    }
}

impl PasteEntry {
    /// The [`EditCommand::Paste`].
    ///
    /// # Errors
    /// [`EntryError::MissingAt`], [`EntryError::QuarterTurns`] above 3.
    pub fn parse(self) -> Result<EditCommand, EntryError> {
        let at = self.at.ok_or(EntryError::MissingAt)?;
        let quarter_turns = self.quarter_turns.unwrap_or(0);
        if quarter_turns > 3 {
            return Err(EntryError::QuarterTurns(quarter_turns));
        }
        Ok(EditCommand::Paste {
            at: IVec3::from_array(at),
            quarter_turns,
        })
    }
}
