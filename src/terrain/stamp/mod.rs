//! Stamps: a height image or a box of cells ([`definition`]) pressed into
//! the terrain at any position, angle and size with a mode (add, subtract,
//! raise to, lower to, replace); [`press`] turns a placement into cells.

pub mod definition;
pub mod press;
