//! A world's own look for its materials: the material library.
//!
//! Cells store a material id; what that id looks like (its name, its albedo
//! texture, a tint, the size one texture tile covers) is the world's
//! choice, so a studio's world can look like its game. The library keeps
//! that per world: the eleven built-ins are its default, and each solid
//! built-in slot can be restyled with the studio's own texture (decoded and
//! resized by `io::materials`, drawn by `render`). Plain data with no file
//! or GPU types, like the rest of `terrain`.
//!
//! - [`texture`]: one square RGBA8 texture, named by its content hash;
//! - [`surface`]: normal, roughness and height maps packed into one texture;
//! - [`library`]: the per-world styles and the textures they use.

pub mod library;
pub mod library_error;
pub mod memory_report;
pub mod surface;
pub mod texture;

pub use library::{LibraryError, MAX_TEXTURE_LAYERS, MaterialLibrary, MaterialStyle};
pub use surface::SurfaceMaps;
pub use texture::{MaterialTexture, TextureError};
