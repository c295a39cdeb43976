//! `stamp` entries: a stamp file pressed into the terrain, and the stamp
//! files a script's entries read ([`StampFiles`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use glam::DVec2;
use serde::Deserialize;

use crate::terrain::command::edit_command::EditCommand;
use crate::terrain::stamp::definition::{Stamp, StampBase, StampMode, StampPlacement, StampShape};
use crate::terrain::storage::coords::CELL_SIZE_STUDS;

use crate::script::format::error::EntryError;

use super::material::solid_material;
use crate::terrain::materials::MaterialLibrary;

/// `stamp`: which stamp, where, and how it is pressed in.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StampEntry {
    /// A grayscale PNG or `.stamp` file (required).
    stamp: Option<String>,
    /// Centre, world `(x, z)` studs (required).
    centre_xz: Option<[f64; 2]>,
    /// Half the stamp's longer side, cells (required).
    radius_cells: Option<f32>,
    /// Turn from +X toward +Z, degrees (default 0).
    rotation_deg: Option<f64>,
    /// Height of a full sample, cells (default: 32, or a cell stamp's own).
    height_scale_cells: Option<f64>,
    /// Edge falloff, fraction 0–1 (default 0).
    edge_falloff: Option<f64>,
    /// `add`, `subtract`, `raise_to`, `lower_to` or `replace` (default add).
    mode: Option<String>,
    /// Base height, cells (default: the surface under the centre).
    base_cells: Option<f64>,
    /// A solid (default: the column's own, or the cell stamp's).
    material: Option<String>,
}

/// Stamps a script's entries read, by resolved path (entries naming one
/// file share it), and the folder relative names are looked up in first.
pub struct StampFiles {
    dir: Option<PathBuf>,
    loaded: HashMap<PathBuf, Arc<Stamp>>,
}

impl StampFiles {
    /// No stamp read yet; relative names are looked up in `dir` first (the
    /// working directory for `None`).
    pub fn new(dir: Option<PathBuf>) -> StampFiles {
        StampFiles {
            dir,
            loaded: HashMap::new(),
        }
    }

    /// The stamp `name`: absolute as it is; relative, in the script's
    /// folder (the working directory for scripts given as text) and else in
    /// the shipped stamps ([`crate::io::world::stamp_file::default_stamp_dir`]).
    fn get(&mut self, name: &str) -> Result<Arc<Stamp>, EntryError> {
        let given = Path::new(name);
        let local = match &self.dir {
            Some(dir) => dir.join(given),
            None => given.to_path_buf(),
        };
        let path = if given.is_absolute() || local.exists() {
            local
        } else {
            crate::io::world::stamp_file::default_stamp_dir().join(given)
        };
        if let Some(stamp) = self.loaded.get(&path) {
            return Ok(stamp.clone());
        }
        let stamp =
            crate::io::world::stamp_file::read_stamp(&path).map_err(|e| EntryError::StampFile {
                path: path.display().to_string(),
                message: e.to_string(),
            })?;
        let stamp = Arc::new(stamp);
        self.loaded.insert(path, stamp.clone());
        Ok(stamp)
    }
}

impl StampEntry {
    /// The [`EditCommand::Stamp`], reading the stamp through `files`.
    ///
    /// # Errors
    /// A missing `stamp`, `centre_xz` or `radius_cells`, an unknown mode, a
    /// material that is not solid, an unreadable stamp, or a placement the
    /// stamp tool rejects (checked in that order).
    pub fn parse(
        self,
        files: &mut StampFiles,
        library: &MaterialLibrary,
    ) -> Result<EditCommand, EntryError> {
        let name = self
            .stamp
            .as_deref()
            .ok_or(EntryError::MissingStampField("stamp"))?;
        let [x, z] = self
            .centre_xz
            .ok_or(EntryError::MissingStampField("centre_xz"))?;
        let radius_cells = self.radius_cells.ok_or(EntryError::MissingRadius)?;
        let mode = match &self.mode {
            None => StampMode::Add,
            Some(m) => StampMode::from_script_name(m)
                .ok_or_else(|| EntryError::UnknownStampMode(m.clone()))?,
        };
        let material = solid_material(self.material.as_deref(), library)?;
        let stamp = files.get(name)?;
        let default_height = match stamp.shape() {
            StampShape::Height(_) => 32.0,
            StampShape::Cells(c) => f64::from(c.size().y),
        };
        let stud = f64::from(CELL_SIZE_STUDS);
        let placement = StampPlacement {
            centre_xz_cells: DVec2::new(x / stud, z / stud),
            base: self
                .base_cells
                .map_or(StampBase::SurfaceUnderCentre, StampBase::Cells),
            rotation_deg: self.rotation_deg.unwrap_or(0.0),
            radius_cells: f64::from(radius_cells),
            height_scale_cells: self.height_scale_cells.unwrap_or(default_height),
            falloff_fraction: self.edge_falloff.unwrap_or(0.0),
            mode,
            material,
        };
        placement.validate()?;
        Ok(EditCommand::Stamp { stamp, placement })
    }
}
