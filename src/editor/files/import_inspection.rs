//! The import dialog's look at the chosen file: what it is (format, size,
//! encoding, CRS, pixel size, elevation range, NoData) and the terrain the
//! current scale makes of it, read on a background thread whenever the path
//! (or a RAW16's layout) changes, so a large GeoTIFF never stalls a frame.

use std::sync::{Arc, Mutex};

use crate::io::heightmap::heightmap_format::HeightmapFormat;
use crate::io::heightmap::heightmap_import::{
    HeightmapSettings, MAX_STREAMING_SIDE_CELLS, RawLayout,
};
use crate::io::heightmap::heightmap_summary::{HeightmapSummary, inspect_heightmap};
use crate::progress::Progress;

/// What reading the file gave.
#[derive(Clone, Debug)]
enum Reading {
    /// On its thread.
    Running,
    /// Read: the summary, or why the file cannot be imported.
    Done(Result<HeightmapSummary, String>),
}

/// The dialog's reading of one file.
#[derive(Clone, Debug, Default)]
pub(crate) struct Inspection {
    /// The path and RAW16 layout read (or being read).
    key: Option<(String, RawLayout)>,
    reading: Option<Arc<Mutex<Reading>>>,
    /// The running read's progress, cancelled when the path changes so a
    /// large file read for a path since edited stops at its next tile.
    progress: Option<Arc<Progress>>,
    /// True once the file's default scale was applied to the dialog.
    defaults_applied: bool,
}

impl Inspection {
    /// Starts reading `path` with `raw` unless that is what was read last;
    /// an empty path reads nothing.
    pub(crate) fn follow(&mut self, path: &str, raw: RawLayout) {
        let path = path.trim();
        let key = (path.to_string(), raw);
        if self.key.as_ref() == Some(&key) {
            return;
        }
        self.key = Some(key);
        self.defaults_applied = false;
        if let Some(previous) = self.progress.take() {
            previous.cancel();
        }
        if path.is_empty() {
            self.reading = None;
            return;
        }
        let reading = Arc::new(Mutex::new(Reading::Running));
        self.reading = Some(Arc::clone(&reading));
        let progress = Arc::new(Progress::new());
        self.progress = Some(Arc::clone(&progress));
        let (path, settings) = (
            std::path::PathBuf::from(path),
            HeightmapSettings {
                raw,
                ..HeightmapSettings::default()
            },
        );
        std::thread::spawn(move || {
            let result = inspect_heightmap(&path, &settings, MAX_STREAMING_SIDE_CELLS, &progress)
                .map_err(|e| e.to_string());
            if let Ok(mut slot) = reading.lock() {
                *slot = Reading::Done(result);
            }
        });
    }

    /// The reading's state, cloned out of its lock.
    fn state(&self) -> Option<Reading> {
        let reading = self.reading.as_ref()?;
        reading.lock().ok().map(|r| r.clone())
    }

    /// Once per file: `Some((cells_per_pixel, vertical_scale))` of its true
    /// scale when it is elevation data in metres (GeoTIFF, EXR), as the
    /// command line defaults to.
    pub(crate) fn take_default_scale(&mut self) -> Option<(f32, f32)> {
        if self.defaults_applied {
            return None;
        }
        let Some(Reading::Done(Ok(summary))) = self.state() else {
            return None;
        };
        self.defaults_applied = true;
        matches!(
            summary.format,
            HeightmapFormat::GeoTiff | HeightmapFormat::Exr
        )
        .then_some((1.0, 1.0))
    }

    /// The summary lines, the terrain at `cells_per_pixel`; a spinner while
    /// reading, the error when the file cannot be imported.
    pub(crate) fn ui(&self, ui: &mut egui::Ui, cells_per_pixel: f32) {
        match self.state() {
            None => {}
            Some(Reading::Running) => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("Reading the file…");
                });
                ui.ctx()
                    .request_repaint_after(std::time::Duration::from_millis(100));
            }
            Some(Reading::Done(Err(message))) => {
                ui.colored_label(ui.visuals().error_fg_color, message);
            }
            Some(Reading::Done(Ok(summary))) => {
                for line in summary.lines_at(cells_per_pixel) {
                    ui.label(line);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        format!("{}/tests/data/elevation/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    /// Waits (up to 10 s) for the reading to finish.
    fn wait(inspection: &Inspection) -> Result<HeightmapSummary, String> {
        for _ in 0..1000 {
            if let Some(Reading::Done(result)) = inspection.state() {
                return result;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("the reading did not finish");
    }

    #[test]
    fn a_geotiff_is_read_once_and_opens_at_its_true_scale() {
        let mut inspection = Inspection::default();
        let path = fixture("float32_tiled_lzw_pred3.tif");
        inspection.follow(&path, RawLayout::default());
        let summary = wait(&inspection).unwrap();
        assert_eq!((summary.width_px, summary.height_px), (200, 150));
        assert_eq!(inspection.take_default_scale(), Some((1.0, 1.0)));
        assert_eq!(inspection.take_default_scale(), None);
        // Another path cancels this read's progress (a large file stops at
        // its next tile), then the first path reads again.
        let first = inspection.progress.clone().unwrap();
        inspection.follow(&fixture("unity_129.r16"), RawLayout::default());
        assert!(first.is_cancelled());
        inspection.follow(&path, RawLayout::default());
        wait(&inspection).unwrap();
        assert_eq!(inspection.take_default_scale(), Some((1.0, 1.0)));
        // The same path again reads nothing new and keeps the choice.
        inspection.follow(&format!(" {path} "), RawLayout::default());
        assert_eq!(inspection.take_default_scale(), None);
        // At 4 cells a pixel: 800 × 600 cells of 2.5 m.
        let lines = summary.lines_at(4.0);
        assert!(
            lines.contains(&"terrain: 800 × 600 cells at 2.500 m a cell".to_string()),
            "{lines:?}"
        );
    }

    #[test]
    fn a_raw16_needs_its_layout_and_a_missing_file_says_so() {
        let mut inspection = Inspection::default();
        inspection.follow(&fixture("unity_129.r16"), RawLayout::default());
        let summary = wait(&inspection).unwrap();
        assert_eq!((summary.width_px, summary.height_px), (129, 129));
        // PNG and RAW16 keep the dialog's scale.
        assert_eq!(inspection.take_default_scale(), None);
        let wrong = RawLayout {
            size_px: Some((100, 100)),
            big_endian: false,
        };
        inspection.follow(&fixture("unity_129.r16"), wrong);
        assert!(wait(&inspection).unwrap_err().contains("not the 100 × 100"));
        inspection.follow("/nowhere/dem.tif", RawLayout::default());
        assert!(wait(&inspection).unwrap_err().contains("does not exist"));
    }
}
