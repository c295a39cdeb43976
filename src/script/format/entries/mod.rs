//! The entry structs, one per group of tools with the same fields: each
//! is the allow-list of its tools' keys (serde, `deny_unknown_fields`) and
//! validates itself into what the entry runs. Brushes in [`brush`]
//! (`BrushEntry` for the plain brushes, `FlattenEntry`, `ReplaceEntry`,
//! `ErosionEntry`), `fill`/`clear`/`copy`/`generate`/`paste` in [`region`],
//! `path` in [`path`], `stamp` in [`stamp`] (with the stamp files a script
//! reads), camera keyframes in [`camera`], `layer` and `operation` in [`document`]; [`material`] reads material
//! names.

pub mod brush;
pub mod camera;
pub mod document;
pub mod material;
pub mod path;
pub mod region;
pub mod stamp;
