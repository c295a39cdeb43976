//! The files a headless run writes, checked before anything runs (so a
//! long replay never ends with a screenshot written and the statistics
//! refused): each can be written ([`crate::io::check_output_path`]), no two
//! are the same file ([`crate::io::same_file`]), and the outputs that come
//! from the rendered run are asked for with a screenshot.

use std::path::PathBuf;

use crate::io::OutputPathError;

/// The outputs a headless run was asked for (`None`: not asked).
#[derive(Clone, Debug, Default)]
pub struct OutputPaths {
    /// `--screenshot`.
    pub screenshot: Option<PathBuf>,
    /// `--stats-json`.
    pub stats_json: Option<PathBuf>,
    /// `--save`.
    pub save: Option<PathBuf>,
    /// `--export-glb`.
    pub export_glb: Option<PathBuf>,
    /// `--export-heightmap` (its `.json` sidecar and the splat files beside
    /// it are checked too).
    pub export_heightmap: Option<PathBuf>,
    /// `--record` (a folder of frames).
    pub record: Option<PathBuf>,
    /// `--no-replay-frames` was given.
    pub no_replay_frames: bool,
    /// The file the world is imported from (`--heightmap`), which no
    /// output may replace.
    pub input: Option<PathBuf>,
    /// The world file opened (`--world`), which no output but `--save`
    /// may replace.
    pub world: Option<PathBuf>,
}

/// Why the outputs of a headless run were refused.
#[derive(Debug, thiserror::Error)]
pub enum OutputCheckError {
    /// One output cannot be written.
    #[error("invalid {flag}: {source}")]
    Invalid {
        /// The flag that named it.
        flag: &'static str,
        /// Why.
        source: OutputPathError,
    },
    /// Two outputs are the same file.
    #[error("{flag} and {other} both write {}; give them different files", .path.display())]
    SameFile {
        /// The later flag.
        flag: &'static str,
        /// The earlier flag naming the same file.
        other: &'static str,
        /// The file.
        path: PathBuf,
    },
    /// An output that only the rendered run gives, asked for without `--screenshot`.
    #[error("{flag} needs --screenshot: {why}")]
    NeedsScreenshot {
        /// The flag.
        flag: &'static str,
        /// What the flag needs the rendered run for.
        why: &'static str,
    },
    /// The recording folder cannot take frames.
    #[error("--record {}: {source}", .dir.display())]
    Record {
        /// The folder.
        dir: PathBuf,
        /// Why its first frame could not be written.
        source: OutputPathError,
    },
    /// An output would replace the file the world is read from.
    #[error("{flag} would replace the input {}; write it elsewhere", .path.display())]
    OverwritesInput {
        /// The flag.
        flag: &'static str,
        /// The input file.
        path: PathBuf,
    },
    /// A streaming world was asked for what its headless run cannot give.
    #[error("{0}")]
    Streaming(String),
}

impl OutputPaths {
    /// Checks every output (see the module docs).
    ///
    /// # Errors
    /// [`OutputCheckError`] for the first output refused.
    pub fn check(&self) -> Result<(), OutputCheckError> {
        let outputs = self.files();
        for (i, (flag, path)) in outputs.iter().enumerate() {
            crate::io::check_output_path(path)
                .map_err(|source| OutputCheckError::Invalid { flag, source })?;
            let opened = self.world.as_ref().filter(|_| *flag != "--save");
            if let Some(input) = self.input.as_ref().or(opened)
                && crate::io::same_file(input, path)
            {
                return Err(OutputCheckError::OverwritesInput {
                    flag,
                    path: path.clone(),
                });
            }
            if let Some((other, _)) = outputs[..i]
                .iter()
                .find(|(_, p)| crate::io::same_file(p, path))
            {
                return Err(OutputCheckError::SameFile {
                    flag,
                    other,
                    path: path.clone(),
                });
            }
        }
        self.check_needs_screenshot()?;
        if let Some(dir) = &self.record {
            let first = crate::app::recording::recorded_frame_path(dir, 0);
            crate::io::check_output_path(&first).map_err(|source| OutputCheckError::Record {
                dir: dir.clone(),
                source,
            })?;
        }
        Ok(())
    }

    /// Refuses, before a streaming world is built or opened, the outputs a
    /// headless run of one cannot give: whole-world exports (a box is
    /// needed, `has_export_region`), and a run without a screenshot.
    ///
    /// # Errors
    /// [`OutputCheckError::Streaming`] saying what to add.
    pub fn check_streamed(&self, has_export_region: bool) -> Result<(), OutputCheckError> {
        for (flag, set) in [
            ("--export-glb", self.export_glb.is_some()),
            ("--export-heightmap", self.export_heightmap.is_some()),
        ] {
            if set && !has_export_region {
                return Err(OutputCheckError::Streaming(format!(
                    "{flag} of a streaming world needs --export-region x0,y0,z0,x1,y1,z1 (a box \
                     of at most 4096 cells along x and z)"
                )));
            }
        }
        if self.screenshot.is_none() {
            return Err(OutputCheckError::Streaming(
                "a streaming world needs --screenshot with --headless".into(),
            ));
        }
        Ok(())
    }

    /// Every file the run writes, with the flag that names it.
    fn files(&self) -> Vec<(&'static str, PathBuf)> {
        let mut outputs: Vec<(&'static str, PathBuf)> = [
            ("--screenshot", &self.screenshot),
            ("--stats-json", &self.stats_json),
            ("--save", &self.save),
            ("--export-glb", &self.export_glb),
            ("--export-heightmap", &self.export_heightmap),
        ]
        .into_iter()
        .filter_map(|(flag, path)| path.clone().map(|p| (flag, p)))
        .collect();
        if let Some(png) = &self.export_heightmap {
            if let Some(sidecar) = crate::io::heightmap::heightmap_export::export_sidecar_path(png)
            {
                outputs.push(("--export-heightmap (sidecar)", sidecar));
            }
            for splat in crate::io::heightmap::splat_export::splat_paths(png) {
                outputs.push(("--export-heightmap (splat maps)", splat));
            }
        }
        outputs
    }

    /// The statistics and the replayed frames come from the rendered run.
    fn check_needs_screenshot(&self) -> Result<(), OutputCheckError> {
        if self.screenshot.is_some() {
            return Ok(());
        }
        let refuse = |flag, why| Err(OutputCheckError::NeedsScreenshot { flag, why });
        if self.stats_json.is_some() {
            return refuse("--stats-json", "the statistics come from the rendered run");
        }
        if self.no_replay_frames {
            return refuse("--no-replay-frames", "only the rendered run replays frames");
        }
        if self.record.is_some() {
            return refuse("--record", "only the rendered run draws frames");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sets the outputs named by command-line flags (`--flag value`; the
    /// switch `--no-replay-frames` alone; `--script` is ignored).
    fn set_flags(outputs: &mut OutputPaths, args: &[&str]) {
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            if *flag == "--no-replay-frames" {
                outputs.no_replay_frames = true;
                continue;
            }
            let value = Some(PathBuf::from(*it.next().expect("a value")));
            match *flag {
                "--screenshot" => outputs.screenshot = value,
                "--stats-json" => outputs.stats_json = value,
                "--save" => outputs.save = value,
                "--export-glb" => outputs.export_glb = value,
                "--export-heightmap" => outputs.export_heightmap = value,
                "--record" => outputs.record = value,
                "--script" => {}
                other => panic!("unknown flag {other}"),
            }
        }
    }

    #[test]
    fn stats_and_replay_frame_flags_without_a_screenshot_are_refused() {
        // Found by a fresh user: `--stats-json` with `--save` but no
        // `--screenshot` exited 0 and wrote no statistics.
        let dir = std::env::temp_dir().join(format!("strata-cli-nostats-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        let save = dir.join("w.strata");
        let stats = dir.join("s.json");
        let script = dir.join("s.json.script");
        std::fs::write(&script, r#"{"strokes": []}"#).expect("script");
        let run = |extra: &[&str]| {
            let mut outputs = OutputPaths {
                save: Some(save.clone()),
                ..OutputPaths::default()
            };
            set_flags(&mut outputs, extra);
            outputs.check().map_err(|e| e.to_string())
        };
        assert_eq!(run(&[]), Ok(()));
        // The imported file is never an output.
        let input = dir.join("dem.tif");
        std::fs::write(&input, b"II*\0").expect("input");
        let overwrite = OutputPaths {
            export_heightmap: Some(input.clone()),
            input: Some(input.clone()),
            ..OutputPaths::default()
        };
        let err = overwrite.check().expect_err("refused").to_string();
        assert!(
            err.contains("--export-heightmap would replace the input"),
            "{err}"
        );
        let err = run(&["--stats-json", stats.to_str().expect("utf-8")]).expect_err("refused");
        assert!(err.contains("--stats-json needs --screenshot"), "{err}");
        let err = run(&[
            "--script",
            script.to_str().expect("utf-8"),
            "--no-replay-frames",
        ])
        .expect_err("refused");
        assert!(
            err.contains("--no-replay-frames needs --screenshot"),
            "{err}"
        );
        assert!(!stats.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn unwritable_outputs_are_refused_before_the_run() {
        let dir = std::env::temp_dir().join(format!("strata-cli-outputs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        let shot = dir.join("shot.png");
        let shot = shot.to_str().expect("utf-8 path");
        let check = |extra: &[&str]| {
            let mut outputs = OutputPaths {
                screenshot: Some(PathBuf::from(shot)),
                ..OutputPaths::default()
            };
            set_flags(&mut outputs, extra);
            outputs.check().map_err(|e| e.to_string())
        };
        assert_eq!(check(&[]), Ok(()));
        let stats = dir.join("stats.json");
        assert_eq!(
            check(&["--stats-json", stats.to_str().expect("utf-8")]),
            Ok(())
        );
        for (args, needle) in [
            (
                &["--stats-json", "/proc/strata-stats.json"][..],
                "invalid --stats-json: cannot write /proc/strata-stats.json: cannot create a file in /proc",
            ),
            (
                &["--stats-json", "/dev/full/stats.json"][..],
                "/dev/full is not a directory",
            ),
            (
                &["--save", "/dev/null"][..],
                "invalid --save: cannot write /dev/null: it is a character device",
            ),
            (&["--export-glb", "/tmp"][..], "it is a directory"),
            (
                &["--export-heightmap", "/dev/full/h.png"][..],
                "invalid --export-heightmap",
            ),
            (
                &["--stats-json", shot][..],
                "--stats-json and --screenshot both write",
            ),
        ] {
            let err = check(args).expect_err("refused");
            assert!(err.contains(needle), "{args:?}: {err}");
        }
        // The heightmap export's sidecar may not be another output either.
        let png = dir.join("h.png");
        let json = dir.join("h.json");
        let err = check(&[
            "--export-heightmap",
            png.to_str().expect("utf-8"),
            "--stats-json",
            json.to_str().expect("utf-8"),
        ])
        .expect_err("sidecar clash");
        assert!(err.contains("both write"), "{err}");
        // A GeoTIFF export writes no sidecar: its name is free.
        let tif = dir.join("h.tif");
        check(&[
            "--export-heightmap",
            tif.to_str().expect("utf-8"),
            "--stats-json",
            json.to_str().expect("utf-8"),
        ])
        .expect("a GeoTIFF export has no sidecar");
        // Nor may its splat maps, index map or their sidecar.
        for clash in ["h_splat.json", "h_splat3.png", "h_materials.png"] {
            let other = dir.join(clash);
            let err = check(&[
                "--export-heightmap",
                png.to_str().expect("utf-8"),
                "--stats-json",
                other.to_str().expect("utf-8"),
            ])
            .expect_err("splat clash");
            assert!(err.contains("both write") && err.contains("splat"), "{err}");
        }
        // An opened world may be saved back, but no export may replace it.
        let world = dir.join("h_materials.png");
        let opened = |flag: &str, path: &PathBuf| {
            let mut outputs = OutputPaths {
                world: Some(world.clone()),
                ..OutputPaths::default()
            };
            set_flags(&mut outputs, &[flag, path.to_str().expect("utf-8")]);
            outputs.check().map_err(|e| e.to_string())
        };
        let err = opened("--export-heightmap", &png).expect_err("replaces the world");
        assert!(err.contains("would replace the input"), "{err}");
        assert_eq!(opened("--save", &world), Ok(()));
        assert_eq!(
            std::fs::read_dir(&dir).map(|d| d.count()).ok(),
            Some(0),
            "nothing written"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
