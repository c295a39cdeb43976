//! Cells and materials (spec §2).
//!
//! A cell is two bytes: a material id and an 8-bit occupancy (fraction
//! `occupancy / 255`). Air, or zero occupancy, always canonicalizes to the one
//! empty cell `{0, 0}` so that equality of cells is equality of terrain.

use std::fmt;

/// A terrain material id. 0 is Air, 1 is Water, everything else is solid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[repr(transparent)]
pub struct Material(pub u8);

impl Material {
    /// No material: the empty cell.
    pub const AIR: Material = Material(0);
    /// Water: not solid; meshed by the water mesher.
    pub const WATER: Material = Material(1);
    /// Grass-covered soil (the default brush material).
    pub const GRASS: Material = Material(2);
    /// Bare grey rock, used on cliffs.
    pub const ROCK: Material = Material(3);
    /// Brown soil under the grass.
    pub const DIRT: Material = Material(4);
    /// Beach and lake-shore sand.
    pub const SAND: Material = Material(5);
    /// Snow on peaks.
    pub const SNOW: Material = Material(6);
    /// Wet mud on lake beds.
    pub const MUD: Material = Material(7);
    /// Dark layered slate.
    pub const SLATE: Material = Material(8);
    /// Loose gravel.
    pub const GRAVEL: Material = Material(9);
    /// Pale limestone.
    pub const LIMESTONE: Material = Material(10);

    /// Number of built-in material ids (`0..COUNT`); ids from `COUNT` to
    /// 255 are a world's own library materials.
    pub const COUNT: usize = 11;

    /// Number of ids a cell can hold (every `u8`): per-id tables are this
    /// long.
    pub const ID_COUNT: usize = 256;

    /// Every material, in id order.
    pub const ALL: [Material; Material::COUNT] = [
        Material::AIR,
        Material::WATER,
        Material::GRASS,
        Material::ROCK,
        Material::DIRT,
        Material::SAND,
        Material::SNOW,
        Material::MUD,
        Material::SLATE,
        Material::GRAVEL,
        Material::LIMESTONE,
    ];

    /// The solid materials, in id order.
    pub fn solids() -> impl Iterator<Item = Material> {
        Self::ALL.into_iter().filter(|m| m.is_solid())
    }

    /// True for every material except Air and Water: the built-in solids
    /// and every library id past them.
    #[inline]
    pub const fn is_solid(self) -> bool {
        self.0 >= 2
    }

    /// True for the eleven built-in ids (Air, Water and the nine built-in
    /// solids), which every world has; the others exist in a world when
    /// its material library defines them.
    #[inline]
    pub const fn is_built_in(self) -> bool {
        (self.0 as usize) < Self::COUNT
    }

    /// The material named `name` (case-insensitive, as [`Material::name`]
    /// spells it, e.g. `"grass"`), or `None` for an unknown name.
    pub fn from_name(name: &str) -> Option<Material> {
        Self::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(name))
    }

    /// Built-in name, e.g. `"Grass"`; `"Unknown"` for a library id (its
    /// name lives in the world's library).
    pub fn name(self) -> &'static str {
        match self.0 {
            0 => "Air",
            1 => "Water",
            2 => "Grass",
            3 => "Rock",
            4 => "Dirt",
            5 => "Sand",
            6 => "Snow",
            7 => "Mud",
            8 => "Slate",
            9 => "Gravel",
            10 => "Limestone",
            _ => "Unknown",
        }
    }

    /// Representative linear-ish sRGB colour of the material, used for UI
    /// swatches and to seed the procedural albedo textures.
    pub fn base_color_srgb(self) -> [u8; 3] {
        match self.0 {
            0 => [0, 0, 0],
            1 => [40, 90, 140],
            2 => [86, 128, 52],
            3 => [118, 114, 108],
            4 => [112, 84, 58],
            5 => [204, 186, 140],
            6 => [236, 240, 246],
            7 => [84, 70, 56],
            8 => [72, 76, 84],
            9 => [136, 130, 122],
            10 => [196, 190, 170],
            _ => [255, 0, 255],
        }
    }
}

/// A built-in's name, or `material #<id>` for a library id.
impl fmt::Display for Material {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_built_in() {
            f.write_str(self.name())
        } else {
            write!(f, "material #{}", self.0)
        }
    }
}

/// A built-in is serialized as its name (`"Grass"`), so files say what they
/// mean; a library material as its id (a number), which the world's
/// library, stored beside it, names.
impl serde::Serialize for Material {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.is_built_in() {
            s.serialize_str(self.name())
        } else {
            s.serialize_u8(self.0)
        }
    }
}

/// Read from a built-in name, any case, or from an id `0..=255`; an
/// unknown name or an id past 255 is an error.
impl<'de> serde::Deserialize<'de> for Material {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Material, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Material;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a material name or an id from 0 to 255")
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Material, E> {
                Material::from_name(name)
                    .ok_or_else(|| E::custom(format!("unknown material \"{name}\"")))
            }
            fn visit_u64<E: serde::de::Error>(self, id: u64) -> Result<Material, E> {
                u8::try_from(id)
                    .map(Material)
                    .map_err(|_| E::custom(format!("material id {id} is past 255")))
            }
            fn visit_i64<E: serde::de::Error>(self, id: i64) -> Result<Material, E> {
                u8::try_from(id)
                    .map(Material)
                    .map_err(|_| E::custom(format!("material id {id} is not 0 to 255")))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// One terrain cell: a material and an occupancy in `0..=255`.
///
/// Construct through [`Cell::new`], which canonicalizes Air or zero occupancy
/// to [`Cell::EMPTY`]. Layout is two bytes, material first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(C)]
pub struct Cell {
    material: Material,
    occupancy: u8,
}

const _: () = assert!(std::mem::size_of::<Cell>() == 2);

impl Cell {
    /// The one empty cell `{Air, 0}`; unwritten cells read as this.
    pub const EMPTY: Cell = Cell {
        material: Material::AIR,
        occupancy: 0,
    };

    /// A canonical cell: Air or zero occupancy become [`Cell::EMPTY`].
    #[inline]
    pub const fn new(material: Material, occupancy: u8) -> Cell {
        if material.0 == 0 || occupancy == 0 {
            Cell::EMPTY
        } else {
            Cell {
                material,
                occupancy,
            }
        }
    }

    /// A fully occupied cell of `material`.
    pub const fn full(material: Material) -> Cell {
        Cell::new(material, 255)
    }

    /// The cell's material.
    #[inline]
    pub const fn material(self) -> Material {
        self.material
    }

    /// The cell's occupancy, `0..=255` (fraction `occupancy / 255`).
    #[inline]
    pub const fn occupancy(self) -> u8 {
        self.occupancy
    }

    /// True for the empty cell.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.occupancy == 0
    }

    /// Solid occupancy: the occupancy when the material is solid, else 0.
    #[inline]
    pub const fn solid_occupancy(self) -> u8 {
        if self.material.is_solid() {
            self.occupancy
        } else {
            0
        }
    }

    /// Water occupancy: the occupancy when the material is Water, else 0.
    #[inline]
    pub const fn water_occupancy(self) -> u8 {
        if self.material.0 == Material::WATER.0 {
            self.occupancy
        } else {
            0
        }
    }

    /// This cell with material `from` drawn as `to` (occupancy kept); any
    /// other cell unchanged. Used when a library material is removed and
    /// its cells take a replacement.
    #[inline]
    pub const fn with_material_replaced(self, from: Material, to: Material) -> Cell {
        if self.material.0 == from.0 {
            Cell::new(to, self.occupancy)
        } else {
            self
        }
    }

    /// `cells` with material `from` replaced by `to`
    /// ([`Cell::with_material_replaced`]); `None` when no cell holds `from`,
    /// so callers keep (and share) storage that needs no change.
    pub fn replaced_in(cells: &[Cell], from: Material, to: Material) -> Option<Vec<Cell>> {
        if !cells.iter().any(|c| c.material.0 == from.0) {
            return None;
        }
        Some(
            cells
                .iter()
                .map(|c| c.with_material_replaced(from, to))
                .collect(),
        )
    }

    /// Solid fraction in `[0, 1]`.
    pub fn solid_fraction(self) -> f32 {
        self.solid_occupancy() as f32 / 255.0
    }

    /// Water fraction in `[0, 1]`.
    pub fn water_fraction(self) -> f32 {
        self.water_occupancy() as f32 / 255.0
    }

    /// True when the sample is inside the solid surface (`occupancy >= 128`
    /// of a solid material, spec §4).
    #[inline]
    pub const fn is_inside(self) -> bool {
        self.solid_occupancy() >= 128
    }

    /// The two bytes `[material, occupancy]`, as hashed and stored.
    #[inline]
    pub const fn to_bytes(self) -> [u8; 2] {
        [self.material.0, self.occupancy]
    }

    /// Parses the two stored bytes, canonicalizing (every id is a
    /// material: ids past the built-ins are library materials).
    pub const fn from_bytes(bytes: [u8; 2]) -> Cell {
        Cell::new(Material(bytes[0]), bytes[1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn air_and_zero_occupancy_canonicalize() {
        assert_eq!(Cell::new(Material::AIR, 200), Cell::EMPTY);
        assert_eq!(Cell::new(Material::ROCK, 0), Cell::EMPTY);
        assert_eq!(Cell::new(Material::ROCK, 1).occupancy(), 1);
    }

    #[test]
    fn fractions_follow_material_kind() {
        let water = Cell::new(Material::WATER, 255);
        assert_eq!(water.solid_occupancy(), 0);
        assert_eq!(water.water_fraction(), 1.0);
        assert!(!water.is_inside());
        let rock = Cell::new(Material::ROCK, 128);
        assert!(rock.is_inside());
        assert!(!Cell::new(Material::ROCK, 127).is_inside());
    }

    #[test]
    fn at_least_eight_solids() {
        assert!(Material::solids().count() >= 8);
        assert!(!Material(Material::COUNT as u8).is_built_in());
        assert!(Material(Material::COUNT as u8).is_solid());
    }
}
