//! The world as a file: the document (its path, unsaved state, autosave and
//! recent files), the File menu with its dialogs and notices, the actions
//! they produce, and the session that carries them out on background jobs
//! (new, open, import, save, autosave, export) with progress and Cancel.

pub mod document;
pub mod file_action;
pub mod file_dialogs;
pub mod file_jobs;
pub mod file_menu;
pub mod file_session;
pub mod import_inspection;
pub mod notices;
