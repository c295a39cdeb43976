//! The `strata` binary: the windowed editor, or `--headless` offscreen
//! screenshots for CI and tools. Errors become `anyhow` messages here only.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::Parser;
use glam::DVec3;

use strata::camera::Camera;
use strata::pipeline::lod::LodSettings;
use strata::render::headless::{self, ScreenshotOptions, WorldSource};
use strata::render::material_textures;
use strata::render::overlays::{Overlay, OverlaySet};
use strata::terrain::generate::GeneratorSettings;
use strata::terrain::heightmap::HeightmapSettings;

/// Image size `WIDTHxHEIGHT` in pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Size(u32, u32);

fn parse_size(s: &str) -> Result<Size, String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("expected WIDTHxHEIGHT like 1280x720, got {s:?}"))?;
    let parse = |v: &str, what: &str| {
        v.trim()
            .parse::<u32>()
            .map_err(|_| format!("{what} {v:?} is not a whole number"))
    };
    let (w, h) = (parse(w, "width")?, parse(h, "height")?);
    if w == 0 || h == 0 || w > headless::MAX_IMAGE_SIDE || h > headless::MAX_IMAGE_SIDE {
        return Err(format!(
            "{w}x{h}: each side must be between 1 and {} pixels",
            headless::MAX_IMAGE_SIDE
        ));
    }
    Ok(Size(w, h))
}

/// Camera `X,Y,Z,YAW_DEG,PITCH_DEG`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct CameraArg {
    pos: DVec3,
    yaw_deg: f32,
    pitch_deg: f32,
}

fn parse_camera(s: &str) -> Result<CameraArg, String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() != 5 {
        return Err(format!(
            "expected 5 comma-separated numbers X,Y,Z,YAW_DEG,PITCH_DEG, got {} in {s:?}",
            parts.len()
        ));
    }
    let mut v = [0.0f64; 5];
    for (i, (p, name)) in parts
        .iter()
        .zip(["X", "Y", "Z", "YAW_DEG", "PITCH_DEG"])
        .enumerate()
    {
        v[i] = p
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("{name} {p:?} is not a finite number"))?;
    }
    if v[4].abs() > strata::camera::MAX_PITCH_DEG as f64 {
        return Err(format!(
            "PITCH_DEG {} is outside -{m}..={m}",
            v[4],
            m = strata::camera::MAX_PITCH_DEG
        ));
    }
    Ok(CameraArg {
        pos: DVec3::new(v[0], v[1], v[2]),
        // Any heading is accepted; it is wrapped to 0..360 degrees.
        yaw_deg: v[3].rem_euclid(360.0) as f32,
        pitch_deg: v[4] as f32,
    })
}

/// Strata: a voxel terrain editor.
///
/// Without flags, opens the editor window. With `--headless --screenshot OUT.png`,
/// renders one frame offscreen (no display needed) and exits.
#[derive(Debug, Parser)]
#[command(name = "strata", version, about)]
struct Cli {
    /// Render offscreen without a window (requires --screenshot).
    #[arg(long, requires = "screenshot")]
    headless: bool,

    /// PNG file to write the rendered frame to (with --headless).
    #[arg(long, value_name = "OUT.png", requires = "headless")]
    screenshot: Option<PathBuf>,

    /// Image size in pixels.
    #[arg(long, value_name = "WxH", default_value = "1280x720", value_parser = parse_size)]
    size: Size,

    /// World generator seed.
    #[arg(long, value_name = "N", conflicts_with = "heightmap")]
    seed: Option<u64>,

    /// Import a heightmap PNG instead of generating a world.
    #[arg(long, value_name = "PNG")]
    heightmap: Option<PathBuf>,

    /// Heightmap import: cells per heightmap pixel.
    #[arg(
        long,
        value_name = "F",
        requires = "heightmap",
        allow_negative_numbers = true
    )]
    cells_per_pixel: Option<f32>,

    /// Heightmap import: vertical scale factor.
    #[arg(
        long,
        value_name = "F",
        requires = "heightmap",
        allow_negative_numbers = true
    )]
    vertical_scale: Option<f32>,

    /// Heightmap import: fill everything below this elevation with water (metres
    /// with a sidecar, else the 0–1 value range), e.g. 0 for a coastline DEM.
    #[arg(
        long,
        value_name = "ELEVATION",
        requires = "heightmap",
        allow_negative_numbers = true
    )]
    sea_level: Option<f64>,

    /// Generated world extent along x and z, in cells (a multiple of 32).
    #[arg(long, value_name = "CELLS", conflicts_with = "heightmap")]
    world_size: Option<u32>,

    /// Camera position (studs) and orientation (degrees); default frames the terrain.
    #[arg(long, value_name = "X,Y,Z,YAW_DEG,PITCH_DEG", value_parser = parse_camera, allow_hyphen_values = true)]
    camera: Option<CameraArg>,

    /// Also draw the editor panel into the screenshot.
    #[arg(long)]
    ui: bool,

    /// Write render statistics as JSON to this file (with --headless).
    #[arg(long, value_name = "OUT.json", requires = "headless")]
    stats_json: Option<PathBuf>,

    /// Draw distance in studs (chunks beyond it are not drawn or meshed).
    #[arg(long, value_name = "STUDS")]
    draw_distance: Option<f64>,

    /// Mesh and draw every chunk at this level of detail (0–3) instead of by distance.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=3))]
    force_level: Option<u8>,

    /// Draw a debug overlay (repeatable): lod, chunks, wireframe, skirts,
    /// hide-skirts, seams, seam-audit, remesh. In the window they start ticked
    /// in the panel's "Debug overlays" section.
    #[arg(long = "overlay", value_name = "NAME", value_enum)]
    overlays: Vec<Overlay>,

    /// Replay brush strokes from a JSON script through the meshing pipeline
    /// before taking the screenshot (format in README.md).
    #[arg(long, value_name = "FILE.json", requires = "headless")]
    script: Option<PathBuf>,

    /// Regenerate the procedural material textures into DIR and exit.
    #[arg(long, value_name = "DIR", hide = true)]
    write_material_textures: Option<PathBuf>,
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    if let Some(dir) = &cli.write_material_textures {
        let written = material_textures::write_material_textures(dir)?;
        for p in written {
            println!("{}", p.display());
        }
        return Ok(());
    }
    if cli.headless {
        return run_headless(&cli);
    }
    run_windowed(&cli)
}

fn lod_settings(cli: &Cli) -> anyhow::Result<LodSettings> {
    let mut lod = LodSettings::default();
    if let Some(d) = cli.draw_distance {
        if !(d.is_finite() && d > 0.0 && d <= 1.0e6) {
            bail!("--draw-distance must be a positive number of studs up to 1000000, got {d}");
        }
        lod.draw_distance_studs = d;
    }
    lod.force_level = cli.force_level;
    Ok(lod)
}

fn overlay_set(cli: &Cli) -> OverlaySet {
    cli.overlays.iter().copied().collect()
}

fn world_source(cli: &Cli) -> anyhow::Result<WorldSource> {
    if let Some(path) = &cli.heightmap {
        let mut settings = HeightmapSettings::default();
        if let Some(c) = cli.cells_per_pixel {
            if !(c.is_finite() && c > 0.0) {
                bail!("--cells-per-pixel must be a positive number, got {c}");
            }
            settings.cells_per_pixel = c;
        }
        if let Some(level) = cli.sea_level {
            if !level.is_finite() {
                bail!("--sea-level must be a finite elevation, got {level}");
            }
            settings.sea_level_m = Some(level);
        }
        if let Some(v) = cli.vertical_scale {
            if !(v.is_finite() && v > 0.0) {
                bail!("--vertical-scale must be a positive number, got {v}");
            }
            settings.vertical_scale = v;
        }
        return Ok(WorldSource::Heightmap {
            path: path.clone(),
            settings,
        });
    }
    let mut settings = GeneratorSettings::default();
    if let Some(seed) = cli.seed {
        settings.seed = seed;
    }
    if let Some(size) = cli.world_size {
        settings.size_cells = size;
    }
    settings.validate().context("invalid --world-size")?;
    Ok(WorldSource::Generated(settings))
}

fn run_headless(cli: &Cli) -> anyhow::Result<()> {
    let output = cli
        .screenshot
        .clone()
        .context("--headless needs --screenshot OUT.png")?;
    let camera = cli
        .camera
        .map(|c| Camera::new(c.pos, c.yaw_deg, c.pitch_deg));
    let options = ScreenshotOptions {
        output: output.clone(),
        size_px: [cli.size.0, cli.size.1],
        world: world_source(cli)?,
        camera,
        ui: cli.ui,
        stats_json: cli.stats_json.clone(),
        lod: lod_settings(cli)?,
        script: cli
            .script
            .as_deref()
            .map(strata::editor::script::Script::load)
            .transpose()?,
        overlays: overlay_set(cli),
    };
    let stats = headless::render_screenshot(&options)?;
    if cli.script.is_some() {
        println!(
            "replayed {} frames, {} edits: edit-to-visible p50 {:.1} ms, p99 {:.1} ms; upload p99 {:.2} ms",
            stats.script_frames,
            stats.script_edits,
            stats.edit_to_visible_ms.p50,
            stats.edit_to_visible_ms.p99,
            stats.upload_ms.p99
        );
    }
    println!(
        "wrote {} ({}x{}, adapter {}, {} chunks drawn, {} triangles, mesh {:.0} ms, render {:.0} ms)",
        output.display(),
        stats.width,
        stats.height,
        stats.adapter,
        stats.drawn_chunks,
        stats.triangles,
        stats.mesh_ms,
        stats.render_ms
    );
    Ok(())
}

fn run_windowed(cli: &Cli) -> anyhow::Result<()> {
    let has_display = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()));
    if !has_display {
        bail!(
            "no display found (DISPLAY/WAYLAND_DISPLAY unset); run with --headless --screenshot \
             out.png to render without a window"
        );
    }
    let options = strata::editor::EditorOptions {
        world: world_source(cli)?,
        camera: cli
            .camera
            .map(|c| Camera::new(c.pos, c.yaw_deg, c.pitch_deg)),
        window_size: [cli.size.0, cli.size.1],
        lod: lod_settings(cli)?,
        overlays: overlay_set(cli),
    };
    strata::editor::run(options).context("the editor stopped with an error")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_reject_zero() {
        assert_eq!(parse_size("320x180"), Ok(Size(320, 180)));
        assert!(parse_size("0x5").is_err());
        assert!(parse_size("12").is_err());
        assert!(parse_size("ax5").is_err());
    }

    #[test]
    fn cameras_parse_and_reject_garbage() {
        let c = parse_camera("-10,20.5,3,45,-30").unwrap();
        assert_eq!(c.pos, DVec3::new(-10.0, 20.5, 3.0));
        assert_eq!((c.yaw_deg, c.pitch_deg), (45.0, -30.0));
        assert!(parse_camera("1,2,3,4").is_err());
        assert!(parse_camera("1,2,3,4,nan").is_err());
        assert!(parse_camera("1,2,3,4,95").is_err());
    }

    #[test]
    fn overlays_parse_repeated_and_reject_unknown_names() {
        let cli = Cli::try_parse_from([
            "strata",
            "--overlay",
            "lod",
            "--overlay",
            "hide-skirts",
            "--overlay",
            "seam-audit",
        ])
        .expect("valid overlays");
        let set = overlay_set(&cli);
        assert!(set.contains(Overlay::Lod));
        assert!(set.contains(Overlay::HideSkirts));
        assert!(set.contains(Overlay::SeamAudit));
        assert!(!set.contains(Overlay::Wireframe));
        let err = Cli::try_parse_from(["strata", "--overlay", "bogus"]).expect_err("bogus");
        let msg = err.to_string();
        assert!(msg.contains("bogus") && msg.contains("wireframe"), "{msg}");
    }

    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
