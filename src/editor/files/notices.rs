//! The File menu's notices and offers: a message (an error or not), the
//! offer to load the rest of a world whose chunks are damaged, the offer to
//! recover an autosaved or unsaved copy, and the progress window of a
//! running file job.

use std::path::PathBuf;
use std::time::SystemTime;

use crate::editor::files::file_action::FileAction;
use crate::progress::Progress;

/// The notices and offers open now.
#[derive(Default)]
pub(crate) struct Notices {
    /// A message for the user: text and whether it is an error.
    pub(crate) message: Option<(String, bool)>,
    /// A world with damaged chunks: path and the loader's message.
    pub(crate) bad_chunks: Option<(PathBuf, String)>,
    /// A recovery copy to offer: its path, when it was written and what
    /// it is (the offer's first line).
    pub(crate) recovery: Option<(PathBuf, SystemTime, String)>,
}

impl Notices {
    /// Draws the open notices and offers; a button's answer goes to `actions`.
    pub(crate) fn show(&mut self, ctx: &egui::Context, actions: &mut Vec<FileAction>) {
        if let Some((text, error)) = &self.message {
            let mut close = false;
            egui::Window::new(if *error { "Error" } else { "Strata" })
                .collapsible(false)
                .anchor(egui::Align2::CENTER_BOTTOM, [0.0, -24.0])
                .show(ctx, |ui| {
                    if *error {
                        ui.colored_label(egui::Color32::LIGHT_RED, text);
                    } else {
                        ui.label(text);
                    }
                    close = ui.button("OK").clicked();
                });
            if close {
                self.message = None;
            }
        }
        if let Some((path, message)) = &self.bad_chunks {
            let mut close = false;
            egui::Window::new("Damaged chunks")
                .collapsible(false)
                .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
                .show(ctx, |ui| {
                    ui.colored_label(egui::Color32::LIGHT_RED, message);
                    ui.label("The world that is open stays open. Load the rest of the file without the damaged chunks?");
                    ui.horizontal(|ui| {
                        if ui.button("Load the rest").clicked() {
                            actions.push(FileAction::OpenSkippingBadChunks(path.clone()));
                            close = true;
                        }
                        if ui.button("Cancel").clicked() {
                            close = true;
                        }
                    });
                });
            if close {
                self.bad_chunks = None;
            }
        }
        if let Some((path, written, what)) = &self.recovery {
            let mut close = false;
            let age = written.elapsed().map(|d| d.as_secs() / 60).unwrap_or(0);
            egui::Window::new("Recover unsaved work?")
                .collapsible(false)
                .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
                .show(ctx, |ui| {
                    ui.label(format!(
                        "{what}\n{}\n(written {age} min ago)",
                        path.display()
                    ));
                    ui.horizontal(|ui| {
                        if ui.button("Recover").clicked() {
                            actions.push(FileAction::Recover(path.clone()));
                            close = true;
                        }
                        if ui.button("Discard it").clicked() {
                            actions.push(FileAction::DiscardRecovery(path.clone()));
                            close = true;
                        }
                        if ui.button("Not now").clicked() {
                            close = true;
                        }
                    });
                });
            if close {
                self.recovery = None;
            }
        }
    }
}

/// The progress window of a running file job, with Cancel.
pub(crate) fn progress_window(
    ctx: &egui::Context,
    label: &str,
    progress: &Progress,
    actions: &mut Vec<FileAction>,
) {
    egui::Window::new("Working")
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_TOP, [0.0, 40.0])
        .show(ctx, |ui| {
            ui.label(label);
            let bar = match progress.fraction() {
                Some(f) => egui::ProgressBar::new(f).text(format!(
                    "{} {:.0}%",
                    progress.label(),
                    f * 100.0
                )),
                None => egui::ProgressBar::new(0.0)
                    .text(progress.label())
                    .animate(true),
            };
            ui.add(bar.desired_width(320.0));
            if progress.is_cancelled() {
                ui.label("Cancelling…");
            } else if ui.button("Cancel").clicked() {
                actions.push(FileAction::CancelJob);
            }
        });
    // Keep redrawing so the bar moves.
    ctx.request_repaint();
}
