//! Stamps: a shape saved once and pressed into the terrain many
//! times, anywhere, at any angle and size. A *height stamp* is a grid of
//! samples in `0..=1` (a grayscale image, decoded in `io::world::stamp_file`)
//! that raises, lowers or levels the surface; a *cell stamp* is a box of
//! cells (the region tool's clipboard) that adds overhangs, arches and caves
//! a heightfield cannot hold.
//!
//! This file holds the stamp data and where one is placed
//! ([`StampPlacement`]); [`crate::terrain::stamp::press`] turns a placement into cells.
//! Both are plain in-memory algorithms, so the window and scripts share them
//! through [`crate::terrain::command::edit_command::EditCommand::Stamp`].
//!
//! # Placement frame
//! A stamp is centred at `centre_xz_cells` and turned `rotation_deg` about
//! +Y; positive angles turn +X toward +Z, the sense of Paste's quarter turns
//! ([`crate::terrain::editing::region::Clipboard::rotated`]), so a placement at `90·k` degrees
//! matches `rotated(k)` exactly. Before the turn, stamp axis x (image
//! columns) lies along world +x and stamp axis z (image rows) along +z. Its
//! longer horizontal side spans `2 × radius_cells`; the other side keeps the
//! stamp's aspect ratio.

use crate::terrain::message_numbers::short_number;
use glam::{DVec2, IVec3};

use crate::terrain::editing::region::{Clipboard, MAX_CLIPBOARD_VOLUME_CELLS};
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::{MAX_CELL_COORD, MIN_CELL_COORD, OutsideLattice};
use crate::terrain::storage::grid::GridError;

/// Largest height stamp side, pixels (a 4096² stamp holds 64 MiB of samples).
pub const MAX_STAMP_SIDE_PX: u32 = 4096;

/// Radius range of a placement, cells: a stamp 1 to 1024 cells
/// (4 to 4096 studs) across.
pub const STAMP_RADIUS_RANGE_CELLS: std::ops::RangeInclusive<f64> = 0.5..=512.0;

/// Largest height scale of a placement, cells (a sample of 1.0 raises the
/// surface by at most this).
pub const MAX_STAMP_HEIGHT_SCALE_CELLS: f64 = 1024.0;

/// Largest absolute angle accepted, degrees (beyond it `f64` angles lose
/// the precision of a small turn).
pub const MAX_STAMP_ROTATION_DEG: f64 = 1.0e6;

/// How a placement combines with the terrain.
///
/// For a height stamp, with `H` the column's surface before, `h` the sample
/// times the height scale, `B` the base height and `w` the edge falloff
/// weight, the surface after is `H + w·(T − H)` where `T` is:
///
/// | mode | `T` |
/// |---|---|
/// | Add | `H + h` |
/// | Subtract | `H − h` |
/// | RaiseTo | `max(H, B + h)` |
/// | LowerTo | `min(H, B + h)` |
/// | Replace | `B + h` |
///
/// For a cell stamp, with `o` a cell's solid occupancy before and `s` the
/// stamp cell's (both `0..=255`), the occupancy after is `o + w·(t − o)`
/// (rounded) where `t` is:
///
/// | mode | `t` |
/// |---|---|
/// | Add | `min(255, o + s)` (a full stamp cell is a union) |
/// | Subtract | `max(0, o − s)` (a carve) |
/// | RaiseTo | `max(o, s)` |
/// | LowerTo | `min(o, s)` (an intersection within the stamp's box) |
/// | Replace | `s` (the stamp's cells, empty ones too, like Paste) |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StampMode {
    /// Raise the surface by the stamp (cells: sum occupancy).
    Add,
    /// Lower the surface by the stamp (cells: remove occupancy).
    Subtract,
    /// Raise the surface to at least the stamp (cells: max).
    RaiseTo,
    /// Lower the surface to at most the stamp (cells: min).
    LowerTo,
    /// Set the surface to the stamp (cells: the stamp's cells).
    Replace,
}

impl StampMode {
    /// Every mode, in panel order.
    pub const ALL: [StampMode; 5] = [
        StampMode::Add,
        StampMode::Subtract,
        StampMode::RaiseTo,
        StampMode::LowerTo,
        StampMode::Replace,
    ];

    /// Panel and history name, e.g. `"Raise to"`.
    pub fn name(self) -> &'static str {
        match self {
            StampMode::Add => "Add",
            StampMode::Subtract => "Subtract",
            StampMode::RaiseTo => "Raise to",
            StampMode::LowerTo => "Lower to",
            StampMode::Replace => "Replace",
        }
    }

    /// Script name, e.g. `"raise_to"`.
    pub fn script_name(self) -> &'static str {
        match self {
            StampMode::Add => "add",
            StampMode::Subtract => "subtract",
            StampMode::RaiseTo => "raise_to",
            StampMode::LowerTo => "lower_to",
            StampMode::Replace => "replace",
        }
    }

    /// The mode whose script name is `name` (case-insensitive).
    pub fn from_script_name(name: &str) -> Option<StampMode> {
        StampMode::ALL
            .into_iter()
            .find(|m| m.script_name().eq_ignore_ascii_case(name))
    }

    /// A height stamp's new surface height, cells, at a column whose
    /// surface is `old_cells`, where the stamp reads `h_cells` (sample ×
    /// height scale) above `base_cells`, before the edge falloff (the
    /// table in the type's docs).
    #[inline]
    pub fn surface_cells(self, old_cells: f64, h_cells: f64, base_cells: f64) -> f64 {
        match self {
            StampMode::Add => old_cells + h_cells,
            StampMode::Subtract => old_cells - h_cells,
            StampMode::RaiseTo => old_cells.max(base_cells + h_cells),
            StampMode::LowerTo => old_cells.min(base_cells + h_cells),
            StampMode::Replace => base_cells + h_cells,
        }
    }
}

/// The height a placement's `B` is measured from, cells.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StampBase {
    /// An absolute height, cells (`y`).
    Cells(f64),
    /// The terrain's surface height in the column under the centre, read
    /// when the placement is applied (see
    /// [`crate::terrain::stamp::press::surface_height_cells`]).
    SurfaceUnderCentre,
}

/// Where and how a stamp is pressed into the terrain. All lengths in cells.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StampPlacement {
    /// Centre of the footprint, cells `(x, z)` (column `i` spans `[i, i+1)`).
    pub centre_xz_cells: DVec2,
    /// The base height `B` (see [`StampMode`]); a cell stamp's bottom face.
    pub base: StampBase,
    /// Turn about +Y, degrees, any angle; +X turns toward +Z.
    pub rotation_deg: f64,
    /// Half the footprint's longer side, cells, within
    /// [`STAMP_RADIUS_RANGE_CELLS`].
    pub radius_cells: f64,
    /// Height of a sample of 1.0 (height stamp), or of the whole stamp box
    /// (cell stamp), cells; `0..=`[`MAX_STAMP_HEIGHT_SCALE_CELLS`].
    pub height_scale_cells: f64,
    /// Width of the edge falloff, as a fraction `0..=1` of the half extent:
    /// full effect inside `1 − falloff`, smoothstep to none at the edge.
    pub falloff_fraction: f64,
    /// How the stamp combines with the terrain.
    pub mode: StampMode,
    /// Material of the solid cells the stamp adds: `None` keeps the column's
    /// top material (height stamp) or the stamp's own materials (cell stamp).
    pub material: Option<Material>,
}

/// Bad stamp data or placement. Nothing was changed when one is returned.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum StampError {
    /// A stamp with no sample or no cell.
    #[error("the stamp holds no sample")]
    Empty,
    /// A height stamp wider or taller than [`MAX_STAMP_SIDE_PX`].
    #[error("stamp of {width_px}×{height_px} pixels exceeds {MAX_STAMP_SIDE_PX} pixels a side")]
    TooLarge {
        /// Width, pixels.
        width_px: u64,
        /// Height, pixels.
        height_px: u64,
    },
    /// Sample count that does not match the size.
    #[error("{got} samples for a {width_px}×{height_px} stamp")]
    SampleCount {
        /// Width, pixels.
        width_px: u32,
        /// Height, pixels.
        height_px: u32,
        /// Samples given.
        got: usize,
    },
    /// A sample outside `0..=1` or not finite.
    #[error("sample {index} is {value}, not within 0..=1")]
    BadSample {
        /// Index, row-major.
        index: usize,
        /// The value.
        value: f32,
    },
    /// A placement number that is NaN or infinite.
    #[error("stamp {0} must be a finite number")]
    NonFinite(&'static str),
    /// Radius outside [`STAMP_RADIUS_RANGE_CELLS`].
    #[error("stamp radius {} cells is outside 0.5..=512", short_number(*.0))]
    Radius(f64),
    /// Height scale outside `0..=`[`MAX_STAMP_HEIGHT_SCALE_CELLS`].
    #[error("stamp height scale {} cells is outside 0..=1024", short_number(*.0))]
    HeightScale(f64),
    /// Falloff outside `0..=1`.
    #[error("stamp edge falloff {} is outside 0..=1", short_number(*.0))]
    Falloff(f64),
    /// Rotation beyond [`MAX_STAMP_ROTATION_DEG`].
    #[error("stamp rotation {}° is beyond ±1e6°", short_number(*.0))]
    Rotation(f64),
    /// Centre or base off the cell lattice.
    #[error(
        "stamp position ({}, {}, {}) cells is outside the cell lattice",
        short_number(*.x),
        short_number(*.y),
        short_number(*.z)
    )]
    Position {
        /// Centre x, cells.
        x: f64,
        /// Base, cells (0 when the base is the surface).
        y: f64,
        /// Centre z, cells.
        z: f64,
    },
    /// Air, water or an unknown id as the stamp material.
    #[error("stamp material {0} is not a solid material")]
    InvalidMaterial(u8),
    /// [`StampBase::SurfaceUnderCentre`] over a column holding no solid.
    #[error(
        "no terrain under the stamp centre ({}, {}) cells",
        short_number(*.x),
        short_number(*.z)
    )]
    NoSurfaceUnderCentre {
        /// Centre x, cells.
        x: f64,
        /// Centre z, cells.
        z: f64,
    },
    /// The cells the placement would touch exceed the edit limit.
    #[error("the stamp would touch {volume_cells} cells, more than the limit of {limit}")]
    FootprintTooLarge {
        /// Cells in the boxes it edits.
        volume_cells: u64,
        /// [`crate::terrain::storage::grid::MAX_EDIT_VOLUME_CELLS`].
        limit: u64,
    },
    /// The footprint leaves the cell lattice.
    #[error(transparent)]
    OutsideLattice(#[from] OutsideLattice),
    /// The grid refused (columns not resident on a streaming grid).
    #[error(transparent)]
    Grid(#[from] GridError),
}

/// One level of a height stamp's mip chain: `width × height` samples,
/// row-major (x fastest).
#[derive(Clone, Debug, PartialEq)]
struct HeightLevel {
    width: u32,
    height: u32,
    samples: Vec<f32>,
}

impl HeightLevel {
    /// The sample at pixel `(x, z)`, clamped to the edges.
    #[inline]
    fn at(&self, x: i64, z: i64) -> f32 {
        let x = x.clamp(0, i64::from(self.width) - 1) as usize;
        let z = z.clamp(0, i64::from(self.height) - 1) as usize;
        self.samples[z * self.width as usize + x]
    }

    /// The next level: 2×2 box average (an odd last row or column averages
    /// with its clamped copy).
    fn halved(&self) -> HeightLevel {
        let width = self.width.div_ceil(2);
        let height = self.height.div_ceil(2);
        let mut samples = Vec::with_capacity(width as usize * height as usize);
        for z in 0..i64::from(height) {
            for x in 0..i64::from(width) {
                let (x2, z2) = (2 * x, 2 * z);
                let sum = self.at(x2, z2)
                    + self.at(x2 + 1, z2)
                    + self.at(x2, z2 + 1)
                    + self.at(x2 + 1, z2 + 1);
                samples.push(sum * 0.25);
            }
        }
        HeightLevel {
            width,
            height,
            samples,
        }
    }

    /// Bilinear sample at pixel coordinates `(px, pz)` (pixel centres at
    /// integers), clamped to the edges.
    #[inline]
    fn bilinear(&self, px: f64, pz: f64) -> f64 {
        let (x0, z0) = (px.floor(), pz.floor());
        let (fx, fz) = (px - x0, pz - z0);
        let (x0, z0) = (x0 as i64, z0 as i64);
        let a = f64::from(self.at(x0, z0));
        let b = f64::from(self.at(x0 + 1, z0));
        let c = f64::from(self.at(x0, z0 + 1));
        let d = f64::from(self.at(x0 + 1, z0 + 1));
        let top = a + (b - a) * fx;
        let bottom = c + (d - c) * fx;
        top + (bottom - top) * fz
    }
}

/// A height stamp: samples in `0..=1` and their mip chain (each level half
/// the last, down to one sample), so a large image placed small is
/// averaged rather than aliased.
#[derive(Clone, Debug, PartialEq)]
pub struct HeightStamp {
    levels: Vec<HeightLevel>,
}

impl HeightStamp {
    /// Width, pixels (along stamp x).
    pub fn width_px(&self) -> u32 {
        self.levels[0].width
    }

    /// Height, pixels (along stamp z).
    pub fn height_px(&self) -> u32 {
        self.levels[0].height
    }

    /// The full-resolution samples, row-major, `0..=1`.
    pub fn samples(&self) -> &[f32] {
        &self.levels[0].samples
    }

    /// The sample at normalized stamp coordinates `(u, v)`, each `−1..=1`
    /// across the stamp (pixel centres at `(i + 0.5) / n · 2 − 1`), read
    /// bilinearly from the mip level that has about `texels_per_sample`
    /// or fewer full-resolution pixels between samples.
    pub fn sample(&self, u: f64, v: f64, texels_per_sample: f64) -> f64 {
        let level = if texels_per_sample > 1.0 {
            (texels_per_sample.log2().floor() as usize).min(self.levels.len() - 1)
        } else {
            0
        };
        let l = &self.levels[level];
        let px = (u + 1.0) * 0.5 * f64::from(l.width) - 0.5;
        let pz = (v + 1.0) * 0.5 * f64::from(l.height) - 0.5;
        l.bilinear(px, pz)
    }
}

/// What a stamp holds.
#[derive(Clone, Debug, PartialEq)]
pub enum StampShape {
    /// A heightfield.
    Height(HeightStamp),
    /// A box of cells.
    Cells(Clipboard),
}

/// The two kinds of stamp, for lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StampKind {
    /// A grayscale height image.
    Height,
    /// A box of cells (3D).
    Cells,
}

impl StampKind {
    /// `"height"` or `"3d"`.
    pub fn name(self) -> &'static str {
        match self {
            StampKind::Height => "height",
            StampKind::Cells => "3d",
        }
    }
}

/// A named stamp (validated when made).
#[derive(Clone, PartialEq)]
pub struct Stamp {
    name: String,
    shape: StampShape,
}

impl std::fmt::Debug for Stamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The samples are millions of numbers; the name and size say which stamp it is.
        f.debug_struct("Stamp")
            .field("name", &self.name)
            .field("kind", &self.kind())
            .field("dims", &self.dims())
            .finish()
    }
}

impl Stamp {
    /// A height stamp `name` of `width_px × height_px` samples in `0..=1`,
    /// row-major (row 0 is the stamp's `−z` edge).
    ///
    /// # Errors
    /// [`StampError::Empty`], [`StampError::TooLarge`] above
    /// [`MAX_STAMP_SIDE_PX`], [`StampError::SampleCount`] and
    /// [`StampError::BadSample`] for NaN or values outside `0..=1`.
    pub fn height(
        name: impl Into<String>,
        width_px: u32,
        height_px: u32,
        samples: Vec<f32>,
    ) -> Result<Stamp, StampError> {
        if width_px == 0 || height_px == 0 {
            return Err(StampError::Empty);
        }
        if width_px > MAX_STAMP_SIDE_PX || height_px > MAX_STAMP_SIDE_PX {
            return Err(StampError::TooLarge {
                width_px: u64::from(width_px),
                height_px: u64::from(height_px),
            });
        }
        if samples.len() != width_px as usize * height_px as usize {
            return Err(StampError::SampleCount {
                width_px,
                height_px,
                got: samples.len(),
            });
        }
        if let Some((index, &value)) = samples
            .iter()
            .enumerate()
            .find(|(_, v)| !(0.0..=1.0).contains(*v))
        {
            return Err(StampError::BadSample { index, value });
        }
        let mut levels = vec![HeightLevel {
            width: width_px,
            height: height_px,
            samples,
        }];
        while let Some(last) = levels.last()
            && (last.width > 1 || last.height > 1)
        {
            let next = last.halved();
            levels.push(next);
        }
        Ok(Stamp {
            name: name.into(),
            shape: StampShape::Height(HeightStamp { levels }),
        })
    }

    /// A cell stamp `name` holding `cells` (any clipboard).
    ///
    /// # Errors
    /// [`StampError::Empty`] when no cell is solid or water.
    pub fn cells(name: impl Into<String>, cells: Clipboard) -> Result<Stamp, StampError> {
        if cells.cells().iter().all(|c| c.is_empty()) {
            return Err(StampError::Empty);
        }
        debug_assert!(cells.size().as_u64vec3().element_product() <= MAX_CLIPBOARD_VOLUME_CELLS);
        Ok(Stamp {
            name: name.into(),
            shape: StampShape::Cells(cells),
        })
    }

    /// A cell stamp with material `from` replaced by `to`; `None` for a
    /// height stamp (it holds no material) or when no cell holds `from`.
    pub fn with_material_replaced(&self, from: Material, to: Material) -> Option<Stamp> {
        match &self.shape {
            StampShape::Height(_) => None,
            StampShape::Cells(c) => c.with_material_replaced(from, to).map(|cells| Stamp {
                name: self.name.clone(),
                shape: StampShape::Cells(cells),
            }),
        }
    }

    /// The stamp's name, e.g. `"crater"`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What it holds.
    pub fn shape(&self) -> &StampShape {
        &self.shape
    }

    /// Height or cells.
    pub fn kind(&self) -> StampKind {
        match self.shape {
            StampShape::Height(_) => StampKind::Height,
            StampShape::Cells(_) => StampKind::Cells,
        }
    }

    /// Size `[x, y, z]`: pixels `[width, 1, height]` for a height stamp,
    /// cells for a cell stamp.
    pub fn dims(&self) -> [u32; 3] {
        match &self.shape {
            StampShape::Height(h) => [h.width_px(), 1, h.height_px()],
            StampShape::Cells(c) => c.size().as_uvec3().to_array(),
        }
    }

    /// The stamp's horizontal size `(x, z)` in its own units (pixels or cells).
    pub fn footprint_size(&self) -> DVec2 {
        let [x, _, z] = self.dims();
        DVec2::new(f64::from(x), f64::from(z))
    }

    /// A placement at `centre_xz_cells` on `base` at the stamp's own size:
    /// one pixel or cell per cell, a cell stamp `height_scale_cells` its
    /// own height (a height stamp 32 cells), no turn, no falloff, Add with
    /// the stamp's own materials.
    pub fn native_placement(&self, centre_xz_cells: DVec2, base: StampBase) -> StampPlacement {
        let [x, y, z] = self.dims();
        let height_scale_cells = match self.shape {
            StampShape::Height(_) => 32.0,
            StampShape::Cells(_) => f64::from(y),
        };
        StampPlacement {
            centre_xz_cells,
            base,
            rotation_deg: 0.0,
            radius_cells: f64::from(x.max(z)) * 0.5,
            height_scale_cells,
            falloff_fraction: 0.0,
            mode: StampMode::Add,
            material: None,
        }
    }

    /// A `side_px × side_px` grayscale preview (row-major, row 0 at −z):
    /// a height stamp's samples, a cell stamp's top surface seen from
    /// above (brighter is higher, black where the column is empty). The
    /// stamp is fitted into the square keeping its aspect ratio.
    pub fn thumbnail_gray(&self, side_px: u32) -> Vec<u8> {
        let side = side_px.max(1);
        let size = self.footprint_size();
        let longer = size.x.max(size.y);
        let mut out = vec![0u8; side as usize * side as usize];
        for (i, px) in out.iter_mut().enumerate() {
            let (tx, tz) = ((i % side as usize) as f64, (i / side as usize) as f64);
            // Normalized over the longer side, then into the stamp's own extents.
            let u = ((tx + 0.5) / f64::from(side) * 2.0 - 1.0) * longer / size.x;
            let v = ((tz + 0.5) / f64::from(side) * 2.0 - 1.0) * longer / size.y;
            if u.abs() > 1.0 || v.abs() > 1.0 {
                continue;
            }
            let value = match &self.shape {
                StampShape::Height(h) => h.sample(u, v, longer / f64::from(side)),
                StampShape::Cells(c) => column_top_fraction(c, u, v),
            };
            *px = (value.clamp(0.0, 1.0) * 255.0).round() as u8;
        }
        out
    }
}

/// The top of the solid in the column of `clip` at normalized `(u, v)`, as
/// a fraction of its height (0 where the column is empty).
fn column_top_fraction(clip: &Clipboard, u: f64, v: f64) -> f64 {
    let s = clip.size();
    let x = (((u + 1.0) * 0.5 * f64::from(s.x)) as i32).clamp(0, s.x - 1);
    let z = (((v + 1.0) * 0.5 * f64::from(s.z)) as i32).clamp(0, s.z - 1);
    (0..s.y)
        .rev()
        .find(|&y| clip.get(IVec3::new(x, y, z)).solid_occupancy() > 0)
        .map_or(0.0, |y| f64::from(y + 1) / f64::from(s.y))
}

impl StampPlacement {
    /// Checks every number: finite, radius within
    /// [`STAMP_RADIUS_RANGE_CELLS`], height scale within
    /// `0..=`[`MAX_STAMP_HEIGHT_SCALE_CELLS`], falloff within `0..=1`,
    /// rotation within ±[`MAX_STAMP_ROTATION_DEG`], centre and base on the
    /// cell lattice, a solid material.
    ///
    /// # Errors
    /// The first [`StampError`] found.
    pub fn validate(&self) -> Result<(), StampError> {
        let base = match self.base {
            StampBase::Cells(y) => y,
            StampBase::SurfaceUnderCentre => 0.0,
        };
        for (name, v) in [
            ("centre x", self.centre_xz_cells.x),
            ("centre z", self.centre_xz_cells.y),
            ("base height", base),
            ("rotation", self.rotation_deg),
            ("radius", self.radius_cells),
            ("height scale", self.height_scale_cells),
            ("edge falloff", self.falloff_fraction),
        ] {
            if !v.is_finite() {
                return Err(StampError::NonFinite(name));
            }
        }
        if !STAMP_RADIUS_RANGE_CELLS.contains(&self.radius_cells) {
            return Err(StampError::Radius(self.radius_cells));
        }
        if !(0.0..=MAX_STAMP_HEIGHT_SCALE_CELLS).contains(&self.height_scale_cells) {
            return Err(StampError::HeightScale(self.height_scale_cells));
        }
        if !(0.0..=1.0).contains(&self.falloff_fraction) {
            return Err(StampError::Falloff(self.falloff_fraction));
        }
        if self.rotation_deg.abs() > MAX_STAMP_ROTATION_DEG {
            return Err(StampError::Rotation(self.rotation_deg));
        }
        let on_lattice =
            |v: f64| (f64::from(MIN_CELL_COORD)..=f64::from(MAX_CELL_COORD)).contains(&v);
        if ![self.centre_xz_cells.x, base, self.centre_xz_cells.y]
            .into_iter()
            .all(on_lattice)
        {
            return Err(StampError::Position {
                x: self.centre_xz_cells.x,
                y: base,
                z: self.centre_xz_cells.y,
            });
        }
        if let Some(m) = self.material
            && !m.is_solid()
        {
            return Err(StampError::InvalidMaterial(m.0));
        }
        Ok(())
    }

    /// `(cos, sin)` of the turn; exact at multiples of 90° (so quarter
    /// turns map cells onto cells without rounding).
    pub fn rotation_cos_sin(&self) -> (f64, f64) {
        let deg = self.rotation_deg.rem_euclid(360.0);
        let quarters = deg / 90.0;
        let nearest = quarters.round();
        if (quarters - nearest).abs() < 1e-9 {
            return match nearest as i64 % 4 {
                0 => (1.0, 0.0),
                1 => (0.0, 1.0),
                2 => (-1.0, 0.0),
                _ => (0.0, -1.0),
            };
        }
        let rad = deg.to_radians();
        (rad.cos(), rad.sin())
    }

    /// Half extents `(x, z)` of the unturned footprint, cells: the longer
    /// side of `stamp` gets `radius_cells`, the other its share.
    pub fn half_extents_cells(&self, stamp: &Stamp) -> DVec2 {
        let size = stamp.footprint_size();
        size / size.x.max(size.y) * self.radius_cells
    }

    /// Maps a world offset from the centre `(dx, dz)` cells to the stamp's
    /// normalized coordinates `(u, v)` (each `−1..=1` inside).
    #[inline]
    pub fn to_stamp_uv(&self, d: DVec2, cos_sin: (f64, f64), half: DVec2) -> DVec2 {
        let (c, s) = cos_sin;
        // Inverse of the turn that takes stamp x to (cos, sin) in (x, z).
        let local = DVec2::new(d.x * c + d.y * s, -d.x * s + d.y * c);
        local / half
    }

    /// Edge falloff weight at normalized `(u, v)`: 1 inside `1 − falloff`
    /// of the half extent (the larger of `|u|`, `|v|`), smoothstep to 0 at
    /// the edge, 0 outside.
    #[inline]
    pub fn falloff_weight(&self, uv: DVec2) -> f64 {
        let e = uv.x.abs().max(uv.y.abs());
        if e > 1.0 {
            return 0.0;
        }
        if self.falloff_fraction <= 0.0 {
            return 1.0;
        }
        let t = ((1.0 - e) / self.falloff_fraction).clamp(0.0, 1.0);
        t * t * (3.0 - 2.0 * t)
    }

    /// Half extents `(x, z)` of the axis-aligned box around the turned
    /// footprint, cells.
    pub fn turned_half_extents(&self, stamp: &Stamp) -> DVec2 {
        let h = self.half_extents_cells(stamp);
        let (c, s) = self.rotation_cos_sin();
        DVec2::new(h.x * c.abs() + h.y * s.abs(), h.x * s.abs() + h.y * c.abs())
    }

    /// Estimated cells the placement visits (for script work budgets): the
    /// turned footprint's box times the height scale plus a margin of 10 rows.
    pub fn estimated_cells(&self, stamp: &Stamp) -> f64 {
        let e = self.turned_half_extents(stamp) * 2.0 + 2.0;
        e.x * e.y * (self.height_scale_cells + 10.0)
    }

    /// The history label, e.g. `"Stamp crater (Add)"`.
    pub fn label(&self, stamp: &Stamp) -> String {
        format!("Stamp {} ({})", stamp.name(), self.mode.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placement() -> StampPlacement {
        StampPlacement {
            centre_xz_cells: DVec2::new(10.0, 10.0),
            base: StampBase::Cells(5.0),
            rotation_deg: 0.0,
            radius_cells: 8.0,
            height_scale_cells: 4.0,
            falloff_fraction: 0.25,
            mode: StampMode::Add,
            material: None,
        }
    }

    #[test]
    fn height_stamps_are_validated_and_mipped() {
        assert_eq!(Stamp::height("a", 0, 4, vec![]), Err(StampError::Empty));
        assert!(matches!(
            Stamp::height("a", 5000, 1, vec![0.0; 5000]),
            Err(StampError::TooLarge { .. })
        ));
        assert!(matches!(
            Stamp::height("a", 2, 2, vec![0.0; 3]),
            Err(StampError::SampleCount { got: 3, .. })
        ));
        assert!(matches!(
            Stamp::height("a", 2, 1, vec![0.0, f32::NAN]),
            Err(StampError::BadSample { index: 1, .. })
        ));
        let s =
            Stamp::height("ramp", 4, 2, vec![0.0, 0.25, 0.5, 0.75, 1.0, 1.0, 1.0, 1.0]).unwrap();
        let StampShape::Height(h) = s.shape() else {
            panic!()
        };
        // Levels 4×2, 2×1, 1×1.
        assert_eq!(h.levels.len(), 3);
        assert_eq!(h.levels[1].samples, vec![(0.0 + 0.25 + 2.0) / 4.0, 0.8125]);
        // Pixel centre (1, 0) at full resolution.
        assert_eq!(h.sample(-0.25, -0.5, 1.0), 0.25);
        // Half-way between pixels 1 and 2 of row 0.
        assert!((h.sample(0.0, -0.5, 1.0) - 0.375).abs() < 1e-12);
        // Eight texels per sample reads the 1×1 level: the mean.
        let mean = (0.0 + 0.25 + 0.5 + 0.75 + 4.0) / 8.0;
        assert!((h.sample(0.3, 0.3, 8.0) - mean).abs() < 1e-6);
        assert_eq!(s.dims(), [4, 1, 2]);
        assert_eq!(
            format!("{s:?}"),
            "Stamp { name: \"ramp\", kind: Height, dims: [4, 1, 2] }"
        );
    }

    #[test]
    fn placement_validation_names_the_bad_value() {
        assert_eq!(placement().validate(), Ok(()));
        let with = |f: fn(&mut StampPlacement)| {
            let mut p = placement();
            f(&mut p);
            p.validate()
        };
        assert_eq!(
            with(|p| p.radius_cells = f64::NAN),
            Err(StampError::NonFinite("radius"))
        );
        assert_eq!(with(|p| p.radius_cells = 0.0), Err(StampError::Radius(0.0)));
        assert_eq!(with(|p| p.radius_cells = 1e9), Err(StampError::Radius(1e9)));
        assert_eq!(
            with(|p| p.height_scale_cells = -1.0),
            Err(StampError::HeightScale(-1.0))
        );
        assert_eq!(
            with(|p| p.falloff_fraction = 1.5),
            Err(StampError::Falloff(1.5))
        );
        assert_eq!(
            with(|p| p.rotation_deg = f64::INFINITY),
            Err(StampError::NonFinite("rotation"))
        );
        assert_eq!(
            with(|p| p.base = StampBase::Cells(1e12)),
            Err(StampError::Position {
                x: 10.0,
                y: 1e12,
                z: 10.0
            })
        );
        assert_eq!(
            with(|p| p.material = Some(Material::WATER)),
            Err(StampError::InvalidMaterial(1))
        );
    }

    #[test]
    fn quarter_turns_are_exact_and_uv_follows_the_turn() {
        let mut p = placement();
        for (deg, cs) in [
            (0.0, (1.0, 0.0)),
            (90.0, (0.0, 1.0)),
            (180.0, (-1.0, 0.0)),
            (-90.0, (0.0, -1.0)),
            (450.0, (0.0, 1.0)),
        ] {
            p.rotation_deg = deg;
            assert_eq!(p.rotation_cos_sin(), cs, "{deg}");
        }
        // At 90° stamp +x lies along world +z: an offset (0, 4) is u = 0.5.
        p.rotation_deg = 90.0;
        let half = DVec2::splat(8.0);
        let uv = p.to_stamp_uv(DVec2::new(0.0, 4.0), p.rotation_cos_sin(), half);
        assert_eq!(uv, DVec2::new(0.5, 0.0));
        // Falloff: full inside 0.75, half at the smoothstep's middle, 0 outside.
        assert_eq!(p.falloff_weight(DVec2::new(0.7, 0.0)), 1.0);
        assert!((p.falloff_weight(DVec2::new(0.0, 0.875)) - 0.5).abs() < 1e-12);
        assert_eq!(p.falloff_weight(DVec2::new(1.01, 0.0)), 0.0);
        // A 45° turn of a square widens its box by √2.
        p.rotation_deg = 45.0;
        let stamp = Stamp::height("s", 2, 2, vec![0.5; 4]).unwrap();
        let e = p.turned_half_extents(&stamp);
        assert!((e.x - 8.0 * 2f64.sqrt()).abs() < 1e-9);
    }

    #[test]
    fn thumbnails_show_the_samples_and_the_cell_tops() {
        let s = Stamp::height("g", 2, 1, vec![0.0, 1.0]).unwrap();
        let t = s.thumbnail_gray(4);
        // A 2×1 stamp fills the middle two rows of a 4×4 square.
        assert_eq!(&t[0..4], &[0, 0, 0, 0]);
        assert_eq!(t[4], 0);
        assert_eq!(t[7], 255);
        let mut cells = vec![crate::terrain::Cell::EMPTY; 2 * 2];
        cells[0] = crate::terrain::Cell::full(Material::ROCK);
        cells[3] = crate::terrain::Cell::full(Material::ROCK);
        let clip = Clipboard::from_cells(IVec3::new(2, 2, 1), cells).unwrap();
        let c = Stamp::cells("c", clip).unwrap();
        // Both rows see columns x = 0 (top at half height) and x = 1 (full).
        assert_eq!(c.thumbnail_gray(2), vec![128, 255, 128, 255]);
        assert_eq!(
            Stamp::cells(
                "e",
                Clipboard::from_cells(IVec3::ONE, vec![crate::terrain::Cell::EMPTY]).unwrap()
            ),
            Err(StampError::Empty)
        );
    }
}
