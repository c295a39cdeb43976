//! TODO room doc

pub mod document;
pub mod file_jobs;
pub mod file_menu;
pub mod file_session;
