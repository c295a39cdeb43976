//! Why a change to a world's material library was refused: each variant
//! says what was wrong in words an artist can act on; the library is
//! unchanged whenever one is returned.

/// Why a library change was refused (the library is unchanged).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LibraryError {
    /// The material has no style: Air, Water, or an id the library does
    /// not hold.
    #[error("material id {id} is not a solid material of this world's library")]
    NotStyled {
        /// The id given.
        id: u8,
    },
    /// Every id from 11 to 255 holds a material.
    #[error("the library already holds 254 solid materials, one per id; remove one first")]
    LibraryFull,
    /// The texture arrays would need more layers than every GPU grants.
    #[error(
        "the materials would need {layers} texture layers, past the {max} every GPU grants; remove a material or a top variant first"
    )]
    TooManyLayers {
        /// Layers the change would need.
        layers: u32,
        /// [`MAX_TEXTURE_LAYERS`].
        max: u32,
    },
    /// A built-in material cannot be removed (recipes and tools name it);
    /// it can be restyled or reset.
    #[error(
        "material {id} is built in and cannot be removed; reset it to its built-in look instead"
    )]
    BuiltIn {
        /// The id given.
        id: u8,
    },
    /// A removed material cannot come back at its id: another material
    /// was added there since.
    #[error("material id {id} is held by another material now")]
    IdTaken {
        /// The id given.
        id: u8,
    },
    /// An added material needs its albedo: it has no built-in texture.
    #[error("material {id} was added to this world and has no built-in look to go back to")]
    NoBuiltInLook {
        /// The id given.
        id: u8,
    },
    /// The name is empty, too long, or has control characters.
    #[error("material name {name:?} is not allowed: use 1 to 48 printable characters")]
    BadName {
        /// The name given.
        name: String,
    },
    /// Another material already has the name (case-insensitive), or it is
    /// another material's built-in name (which scripts and the command line
    /// also use).
    #[error("another material is already named {name:?}")]
    DuplicateName {
        /// The name of the material that has it (as that material spells it).
        name: String,
    },
    /// The tile size is not one of [`TILING_STUDS`].
    #[error(
        "a texture tile of {studs} studs would not line up across chunks; use 4, 8, 16, 32, 64 or 128"
    )]
    BadTiling {
        /// The size given, studs.
        studs: u32,
    },
    /// The texture side is not the library's.
    #[error("the texture is {found}² pixels but this world's materials are {expected}²")]
    WrongTextureSide {
        /// The library's side, pixels.
        expected: u32,
        /// The texture's side, pixels.
        found: u32,
    },
    /// The side is not one of the allowed sides.
    #[error("{side_px}² is not a material texture size; use 256, 512, 1024 or 2048")]
    BadSide {
        /// The side given, pixels.
        side_px: u32,
    },
    /// Textures are in use, so the side cannot change.
    #[error("the texture size cannot change while {count} imported textures use the current one")]
    SideInUse {
        /// Textures in use.
        count: usize,
    },
    /// The textures would take more GPU memory than the budget.
    #[error(
        "the material textures would take {needed_mib:.1} MiB of GPU memory, over this world's budget of {budget_mib:.1} MiB"
    )]
    OverBudget {
        /// What the library would take, MiB.
        needed_mib: f64,
        /// The budget, MiB.
        budget_mib: f64,
    },
    /// A blend sharpness above 100 %.
    #[error("a blend sharpness of {pct} % is not allowed; use 0 to 100")]
    BadSharpness {
        /// The value given, percent.
        pct: u32,
    },
    /// A blend sharpness for a material without a height map.
    #[error(
        "material {id} has no height map to blend by; import a texture folder with one (named like height or displacement) first"
    )]
    NoHeightMap {
        /// The material id.
        id: u8,
    },
    /// The material has no normal map to flip.
    #[error("material {id} has no normal map")]
    NoNormalMap {
        /// The material id.
        id: u8,
    },
    /// A stored library names a texture it does not hold.
    #[error("material {id} uses texture {hash:016x}, which the library does not hold")]
    MissingTexture {
        /// The material id.
        id: u8,
        /// The texture's hash.
        hash: u64,
    },
}
