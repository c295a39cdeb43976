//! What the user asks the File menu for ([`FileAction`]) and how they
//! answer "save changes first?" ([`UnsavedAnswer`]): the menu's dialogs
//! produce these and the file session carries them out.

use std::path::PathBuf;

use crate::editor::files::file_jobs::{ImportPlacement, WorldPreset};
use crate::io::heightmap::heightmap_import::HeightmapSettings;
use crate::terrain::generation::generate::GeneratorSettings;

/// What the user asked the File menu for.
#[derive(Clone, Debug, PartialEq)]
pub enum FileAction {
    /// Make a new world.
    New(GeneratorSettings, WorldPreset),
    /// Open a world file.
    Open(PathBuf),
    /// Open a world file, loading the chunks that verify and leaving out the damaged ones.
    OpenSkippingBadChunks(PathBuf),
    /// Save to the current file (Save As when there is none).
    Save,
    /// Save to a new file.
    SaveAs(PathBuf),
    /// Import a heightmap.
    Import(PathBuf, HeightmapSettings, ImportPlacement),
    /// Export the world at full detail as binary glTF.
    ExportGlb(PathBuf),
    /// Export the top surface as a 16-bit PNG heightmap.
    ExportHeightmap(PathBuf),
    /// Export the low-poly meshes (and collision) as binary glTF, with the
    /// menu's [`crate::editor::files::file_menu::FileMenu::low_poly_export`] settings.
    ExportLowPolyGlb(PathBuf),
    /// Open a recovery copy in place of its world.
    Recover(PathBuf),
    /// Delete a recovery copy the user declined.
    DiscardRecovery(PathBuf),
    /// Cancel the running job.
    CancelJob,
    /// Close the editor.
    Quit,
}

impl FileAction {
    /// True for actions that replace the open world (they ask first when
    /// it has unsaved changes).
    pub fn replaces_world(&self) -> bool {
        matches!(
            self,
            FileAction::New(..)
                | FileAction::Open(_)
                | FileAction::OpenSkippingBadChunks(_)
                | FileAction::Recover(_)
                | FileAction::Import(_, _, ImportPlacement::NewWorld)
                | FileAction::Quit
        )
    }
}

/// The user's answer to "save changes first?".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnsavedAnswer {
    /// Save, then go on.
    Save,
    /// Go on without saving.
    Discard,
    /// Do nothing.
    Cancel,
}
