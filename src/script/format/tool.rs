//! The script tools: the names an entry's `tool` field may take.

use crate::terrain::editing::brush::BrushMode;

/// What an entry's `tool` names (matched case-insensitively).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// A brush tool (`add`, `subtract`, … `thermal_erode`).
    Brush(BrushMode),
    /// `fill`: a box set to one material.
    Fill,
    /// `clear`: a box emptied.
    Clear,
    /// `copy`: a box copied to the clipboard.
    Copy,
    /// `paste`: the clipboard written at a corner.
    Paste,
    /// `generate`: the world generator re-run on a box.
    Generate,
    /// `path`: a road, river or routed road.
    Path,
    /// `stamp`: a stamp file pressed into the terrain.
    Stamp,
    /// `layer`: an action on a layer of the world document.
    Layer,
    /// `operation`: move, edit or delete an operation of the document.
    Operation,
    /// `base`: re-make the world's base with another seed.
    Base,
    /// `undo`.
    Undo,
    /// `redo`.
    Redo,
}

/// The tools that are not brushes, in the order error messages list them.
const OTHER_TOOLS: [Tool; 12] = [
    Tool::Fill,
    Tool::Clear,
    Tool::Copy,
    Tool::Paste,
    Tool::Generate,
    Tool::Path,
    Tool::Stamp,
    Tool::Layer,
    Tool::Operation,
    Tool::Base,
    Tool::Undo,
    Tool::Redo,
];

impl Tool {
    /// Every tool: the brushes in [`BrushMode::ALL`] order, then the others.
    pub fn all() -> impl Iterator<Item = Tool> {
        BrushMode::ALL
            .into_iter()
            .map(Tool::Brush)
            .chain(OTHER_TOOLS)
    }

    /// The name scripts use, e.g. `"add_water"` or `"fill"`.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Brush(mode) => mode.script_name(),
            Tool::Fill => "fill",
            Tool::Clear => "clear",
            Tool::Copy => "copy",
            Tool::Paste => "paste",
            Tool::Generate => "generate",
            Tool::Path => "path",
            Tool::Stamp => "stamp",
            Tool::Layer => "layer",
            Tool::Operation => "operation",
            Tool::Base => "base",
            Tool::Undo => "undo",
            Tool::Redo => "redo",
        }
    }

    /// The tool named `name` (case-insensitive).
    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::all().find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// Every tool's name for messages: `"add, subtract, … undo or redo"`.
    pub fn list() -> String {
        let names: Vec<&str> = Tool::all().map(Tool::name).collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.concat(),
        }
    }
}

/// The brush tool named `name` (case-insensitive), e.g. `"add_water"`.
pub fn parse_tool(name: &str) -> Option<BrushMode> {
    match Tool::from_name(name)? {
        Tool::Brush(mode) => Some(mode),
        _ => None,
    }
}
