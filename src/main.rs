//! The `strata` binary: the windowed editor, or `--headless` offscreen
//! screenshots for CI and tools. Errors become `anyhow` messages here only.
#![warn(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::Parser;
use glam::DVec3;

use strata::app::cli_values::{
    CameraArg, MaterialFlags, Size, parse_camera, parse_export_region, parse_seed, parse_size,
    parse_stall_timeout, parse_time, parse_world_size,
};
use strata::app::headless::{self, ScreenshotOptions};
use strata::app::heightmap_options::{HeightmapOptions, heightmap_info_lines, heightmap_settings};
use strata::app::output_checks::OutputPaths;
use strata::app::streamed_world::StreamedWorld;
use strata::app::world_outputs::{self, Exports, OpenedWorld};
use strata::camera::{Camera, FramedView};
use strata::io::heightmap::heightmap_import::HeightmapSettings;
use strata::io::heightmap::world_georeference::WorldGeoreference;
use strata::io::world::streaming_file::StreamingWorldFile;
use strata::io::world::world_source::WorldSource;
use strata::mesh::MeshStyle;
use strata::pipeline::lod::{LodSettings, MAX_DRAW_DISTANCE_STUDS};
use strata::render::lines::overlays::{Overlay, OverlaySet};
use strata::render::terrain::material_textures;
use strata::script::Script;
use strata::terrain::generation::generate::GeneratorSettings;
use strata::terrain::materials::MaterialLibrary;
use strata::terrain::storage::coords::CellBox;

/// The terrain style of the view and of an export.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Style {
    /// Surface Nets, blended materials.
    Smooth,
    /// Greedy heightfield meshes with a palette atlas.
    LowPoly,
}

/// Strata: a voxel terrain editor.
///
/// Without flags, opens the editor window. With `--headless --screenshot OUT.png`,
/// renders one frame offscreen (no display needed) and exits; `--headless`
/// with `--save`, `--export-glb` or `--export-heightmap` writes files without
/// rendering.
#[derive(Debug, Parser)]
#[command(name = "strata", version, about)]
#[command(group(
    clap::ArgGroup::new("headless_output")
        .args(["screenshot", "save", "export_glb", "export_heightmap"])
        .multiple(true)
))]
struct Cli {
    /// A saved world (.strata) to open instead of generating one.
    #[arg(value_name = "WORLD.strata", conflicts_with_all = ["world", "seed", "heightmap", "world_size", "recipe"])]
    world_file: Option<PathBuf>,

    /// Render offscreen without a window (requires --screenshot, --save or an
    /// export; a streaming world, one larger than 4096 cells or opened from a
    /// streaming file, requires --screenshot).
    #[arg(long, requires = "headless_output")]
    headless: bool,

    /// Load this saved world (.strata) instead of generating one (same as the
    /// positional WORLD.strata).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["seed", "heightmap", "world_size", "recipe"])]
    world: Option<PathBuf>,

    /// Save the world (after any --script) to this .strata file (with
    /// --headless). Saving back to the --world file writes only the changed chunks.
    #[arg(long, value_name = "FILE", requires = "headless")]
    save: Option<PathBuf>,

    /// Export the world (after any --script) at full detail as binary glTF (with --headless).
    /// Smooth meshes are compact unless --glb-plain: one node per chunk, quantized
    /// (KHR_mesh_quantization) and compressed (EXT_meshopt_compression), both required.
    #[arg(long, value_name = "FILE.glb", requires = "headless")]
    export_glb: Option<PathBuf>,

    /// With --export-glb: write the smooth mesh plain (f32 positions and normals, u32
    /// indices, uncompressed) for importers without those two extensions.
    #[arg(long, requires = "export_glb")]
    glb_plain: bool,

    /// The terrain style the view draws and --export-glb writes: `smooth`
    /// (Surface Nets, the default) or `low-poly` (greedy heightfield tops and
    /// skirts in `--step-cells` steps, flat-shaded palette colours; exported
    /// as one mesh per chunk column with the palette atlas embedded).
    #[arg(long, value_enum, default_value_t = Style::Smooth)]
    style: Style,

    /// With `--style low-poly`: also export a coarse collision mesh whose
    /// blocks of CELLS × CELLS columns (1, 2, 4, 8, 16 or 32) take their
    /// highest ground, under a root node `collision`.
    #[arg(long, value_name = "CELLS", requires = "export_glb")]
    collision_block: Option<u32>,

    /// With `--style low-poly`: the height of one terrace step, cells
    /// (default 1; tops are quantized to the nearest step).
    #[arg(long, value_name = "CELLS", default_value_t = 1.0)]
    step_cells: f32,

    /// Export the world's top surface (after any --script) as a 16-bit PNG
    /// heightmap with a JSON sidecar (with --headless).
    #[arg(long, value_name = "FILE.png", requires = "headless")]
    export_heightmap: Option<PathBuf>,

    /// Export only this box of cells, `X0,Y0,Z0,X1,Y1,Z1` (min inclusive,
    /// max exclusive; at most 4096 cells along x and z). Needed to export a
    /// streaming world; its columns are loaded for the export.
    #[arg(long, value_name = "X0,Y0,Z0,X1,Y1,Z1", allow_hyphen_values = true, value_parser = parse_export_region)]
    export_region: Option<CellBox>,

    /// PNG file to write the rendered frame to (with --headless).
    #[arg(long, value_name = "OUT.png", requires = "headless")]
    screenshot: Option<PathBuf>,

    /// Image size in pixels.
    #[arg(long, value_name = "WxH", default_value = "1280x720", value_parser = parse_size)]
    size: Size,

    /// World generator seed (a whole number from 0 to 2^64 - 1).
    #[arg(long, value_name = "N", conflicts_with = "heightmap", allow_hyphen_values = true, value_parser = parse_seed)]
    seed: Option<u64>,

    /// Import a heightmap instead of generating a world: a 16- or 8-bit PNG
    /// (with an optional JSON sidecar) or a GeoTIFF (float or integer
    /// samples, imported at its true scale unless a scale is given).
    #[arg(long, value_name = "FILE")]
    heightmap: Option<PathBuf>,

    /// The heightmap import's scale, NoData and RAW16 layout, and the
    /// heightmap export's size.
    #[command(flatten)]
    heightmap_options: HeightmapOptions,

    /// Generate the world from a recipe (JSON stages, e.g.
    /// assets/recipes/alpine.json); --seed and --world-size still apply.
    #[arg(long, value_name = "RECIPE.json", conflicts_with = "heightmap")]
    recipe: Option<PathBuf>,

    /// With --recipe and --headless: write a 512-pixel top-down picture of
    /// the plan after every stage to DIR (NN-stage.png).
    #[arg(long, value_name = "DIR", requires_all = ["recipe", "headless"])]
    recipe_previews: Option<PathBuf>,

    /// Generated world extent along x and z, in cells (a multiple of 32, up
    /// to 1048576). Worlds larger than 4096 cells stream: chunks are
    /// generated when the view needs them and evicted over the memory budget.
    #[arg(long, value_name = "CELLS", conflicts_with = "heightmap", allow_hyphen_values = true, value_parser = parse_world_size)]
    world_size: Option<u32>,

    /// Stream a generated world or a heightmap import of any size (worlds
    /// and imports larger than 4096 cells always stream).
    #[arg(long)]
    stream: bool,

    /// Memory budget of a streaming world in MiB: resident chunks and their
    /// CPU mesh copies (default 2048).
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u32).range(16..=1_048_576))]
    memory_budget_mib: Option<u32>,

    /// Camera position (studs) and orientation (degrees); default frames the terrain.
    #[arg(long, value_name = "X,Y,Z,YAW_DEG,PITCH_DEG", value_parser = parse_camera, allow_hyphen_values = true)]
    camera: Option<CameraArg>,

    /// Also draw the editor panel into the screenshot.
    #[arg(long)]
    ui: bool,

    /// Write render statistics as JSON to this file (with --headless).
    #[arg(long, value_name = "OUT.json", requires = "headless")]
    stats_json: Option<PathBuf>,

    /// Draw distance in studs, up to 65536 (chunks beyond it are not drawn
    /// or meshed; a streaming world draws the horizon's nodes out to it).
    #[arg(long, value_name = "STUDS")]
    draw_distance: Option<f64>,

    /// Mesh and draw every chunk at this level of detail (0–3) instead of by distance.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=3))]
    force_level: Option<u8>,

    /// Draw a debug overlay (repeatable): lod, chunks, wireframe, skirts,
    /// hide-skirts, seams, seam-audit, remesh, residency. In the window they start ticked
    /// in the panel's "Debug overlays" section.
    #[arg(long = "overlay", value_name = "NAME", value_enum)]
    overlays: Vec<Overlay>,

    /// Replay brush strokes from a JSON script through the meshing pipeline
    /// before taking the screenshot (format in docs/scripts.md).
    #[arg(long, value_name = "FILE.json", requires = "headless")]
    script: Option<PathBuf>,

    /// Replay a `--script` without drawing its frames: edit-to-visible then
    /// ends at publication (meshing and upload only), not at a drawn frame.
    #[arg(long, requires = "script")]
    no_replay_frames: bool,

    /// Write every replayed frame of the `--script` as DIR/frame_NNNNN.png
    /// (NNNNN: the frame, from 0), to inspect level transitions frame by
    /// frame. Each frame is drawn and read back, so replays run slower.
    #[arg(
        long,
        value_name = "DIR",
        requires = "script",
        conflicts_with = "no_replay_frames"
    )]
    record: Option<PathBuf>,

    /// With `--record`: script time follows the wall clock, as in the
    /// window, so slow frames move the camera as far as they would there
    /// (workers get no extra time); by default each recorded frame is one
    /// script frame. With `--overlay holes`, `--stats-json` reports the sky
    /// seen through the ground in every frame (`"coverage"`).
    #[arg(long, requires = "record")]
    real_time: bool,

    /// Debug: level changes replace a chunk's mesh at once instead of
    /// cross-fading over 16 frames (to see the pops the fades remove,
    /// e.g. with `--record`).
    #[arg(long)]
    no_morph: bool,

    /// Animation time in seconds for the headless frame (water waves), so
    /// screenshots are reproducible.
    #[arg(long = "time", value_name = "SECONDS", default_value_t = 0.0, requires = "headless", allow_negative_numbers = true, value_parser = parse_time)]
    time_secs: f32,

    /// How long a headless run waits for meshing or streaming while nothing
    /// progresses before it fails (default 120 s). A slow machine only makes
    /// the run longer: every wait goes on while work keeps finishing.
    #[arg(long = "stall-timeout-s", value_name = "SECONDS", requires = "headless", allow_negative_numbers = true, value_parser = parse_stall_timeout)]
    stall_timeout: Option<std::time::Duration>,

    #[command(flatten)]
    materials: MaterialFlags,

    /// Regenerate the procedural material textures into DIR and exit.
    #[arg(long, value_name = "DIR", hide = true)]
    write_material_textures: Option<PathBuf>,
}

fn main() -> ExitCode {
    strata::app::startup_log::PROCESS_START.get_or_init(std::time::Instant::now);
    // Before any thread starts: chunk storage freed by edits returns to the system.
    strata::terrain::storage::chunk::map_dense_chunks_separately();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", error_message(&e));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes joined by ": ", leaving out a cause whose text
/// the message already contains (library errors include their source's
/// text, so `{:#}` would print it twice).
fn error_message(e: &anyhow::Error) -> String {
    let mut message = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if message.contains(&text) {
            continue;
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&text);
    }
    message
}

fn run(cli: Cli) -> anyhow::Result<()> {
    if let Some(dir) = &cli.write_material_textures {
        let written = material_textures::write_material_textures(dir)?;
        for p in written {
            println!("{}", p.display());
        }
        return Ok(());
    }
    if let (true, Some(path)) = (cli.heightmap_options.heightmap_info, &cli.heightmap) {
        heightmap_info_lines(path, &cli.heightmap_options)?
            .iter()
            .for_each(|line| println!("{line}"));
        return Ok(());
    }
    // Bad view settings are refused before any world is opened or built,
    // whatever the run would have done with them.
    lod_settings(&cli)?;
    if cli.headless {
        return run_headless(&cli);
    }
    run_windowed(&cli)
}

fn lod_settings(cli: &Cli) -> anyhow::Result<LodSettings> {
    let mut lod = LodSettings::default();
    if let Some(d) = cli.draw_distance {
        if !(d.is_finite() && d > 0.0 && d <= MAX_DRAW_DISTANCE_STUDS) {
            bail!(
                "--draw-distance must be a positive number of studs up to {MAX_DRAW_DISTANCE_STUDS}, got {d}"
            );
        }
        lod.draw_distance_studs = d;
        // The draw distance asked for holds for the default view too.
        lod.fit_default_view = false;
    }
    lod.force_level = cli.force_level;
    if cli.style == Style::LowPoly {
        strata::io::export::lowpoly_gltf::check_low_poly_settings(
            cli.step_cells,
            cli.collision_block,
        )
        .map_err(|m| anyhow::anyhow!("--style low-poly: {m}"))?;
        lod.style = MeshStyle::LowPoly {
            step_cells: cli.step_cells,
        };
    } else if cli.step_cells != 1.0 || cli.collision_block.is_some() {
        bail!("--step-cells and --collision-block need --style low-poly");
    }
    Ok(lod)
}

fn overlay_set(cli: &Cli) -> OverlaySet {
    cli.overlays.iter().copied().collect()
}

/// The saved world to open (`--world` or the positional argument), if any.
fn world_path(cli: &Cli) -> Option<&PathBuf> {
    cli.world.as_ref().or(cli.world_file.as_ref())
}

/// `--camera`; without it the editor uses the camera stored in the world
/// file it opens (reading it here would open the file once more, and that
/// first open would roll back a leftover journal without the notice).
fn initial_camera(cli: &Cli) -> Option<Camera> {
    cli.camera
        .map(|c| Camera::new(c.pos, c.yaw_deg, c.pitch_deg))
}

/// Side of the stage pictures `--recipe-previews` writes, pixels.
const RECIPE_PREVIEW_PX: u32 = 512;

/// The world `cli` asks for; a recipe's material names are resolved in
/// `library` (the library the new world starts with; the default without).
fn world_source(cli: &Cli, library: Option<&MaterialLibrary>) -> anyhow::Result<WorldSource> {
    if let Some(path) = world_path(cli) {
        return Ok(WorldSource::File(path.clone()));
    }
    if let Some(path) = &cli.heightmap {
        let settings = heightmap_settings(path, &cli.heightmap_options)?;
        return Ok(WorldSource::Heightmap {
            path: path.clone(),
            settings,
        });
    }
    let settings = generator_settings(cli);
    if streams(cli, &settings) {
        settings
            .validate_streaming()
            .context("invalid --world-size")?;
    } else {
        settings.validate().context("invalid --world-size")?;
    }
    if let Some(path) = &cli.recipe {
        let default = MaterialLibrary::default();
        let library = library.unwrap_or(&default);
        let recipe = strata::terrain::recipe::stages::Recipe::load_for(path, library)?;
        let materials =
            strata::terrain::recipe::recipe_materials::RecipeMaterials::resolve(&recipe, library)?;
        return Ok(WorldSource::Recipe {
            recipe: Box::new(recipe),
            materials,
            settings,
            preview_px: cli.recipe_previews.as_ref().map(|_| RECIPE_PREVIEW_PX),
        });
    }
    Ok(WorldSource::Generated(settings))
}

/// The seed and size `--seed` and `--world-size` give a new world.
fn generator_settings(cli: &Cli) -> GeneratorSettings {
    let mut settings = GeneratorSettings::default();
    if let Some(seed) = cli.seed {
        settings.seed = seed;
    }
    if let Some(size) = cli.world_size {
        settings.size_cells = size;
    }
    settings
}

/// True when the generated world `settings` is streamed (spec §12): asked
/// for with `--stream`, or larger than a world built whole may be.
fn streams(cli: &Cli, settings: &GeneratorSettings) -> bool {
    cli.stream || settings.size_cells > strata::terrain::generation::generate::MAX_SIZE_CELLS
}

/// True when the heightmap import of `path` with `settings` is streamed:
/// asked for with `--stream`, or its terrain is larger than a grid built
/// whole may be ([`strata::io::heightmap::heightmap_format::import_streams`]).
///
/// # Errors
/// The import's error for a PNG, sidecar or settings it refuses, or a
/// terrain larger than even a streamed world may be.
fn heightmap_streams(
    cli: &Cli,
    path: &std::path::Path,
    settings: &HeightmapSettings,
) -> anyhow::Result<bool> {
    let streams = strata::io::heightmap::heightmap_format::import_streams(path, settings)?;
    Ok(cli.stream || streams)
}

/// The memory budget of a streaming world, bytes (`--memory-budget-mib`).
fn budget_bytes(cli: &Cli) -> usize {
    cli.memory_budget_mib.map_or(
        strata::terrain::streaming::residency::DEFAULT_BUDGET_BYTES,
        |m| m as usize * (1 << 20),
    )
}

/// Where a new streaming world spills its edits until it is saved.
fn recovery_dir() -> anyhow::Result<PathBuf> {
    strata::app::streamed_world::default_recovery_dir()
        .context("cannot make the recovery folder for new streaming worlds")
}

/// The headless run: one world, the script applied once (through the
/// meshing pipeline when a screenshot is drawn), then the screenshot, the
/// statistics, the save and the exports, all of that same world.
fn run_headless(cli: &Cli) -> anyhow::Result<()> {
    // Every file the run would write, checked before anything runs.
    output_paths(cli).check()?;
    let restyles = cli.materials.requests();
    // A streaming world keeps no material library: its script names
    // built-ins. A whole world's script is read once its library is known.
    let built_in_script = || cli.script.as_deref().map(Script::load).transpose();
    let made = recipe_library(cli, &restyles)?;
    let source = world_source(cli, made.as_ref())?;
    match &source {
        WorldSource::Generated(settings) if streams(cli, settings) => {
            check_streamed_outputs(cli)?;
            let start = std::time::Instant::now();
            let world = StreamedWorld::new(settings, &recovery_dir()?)?;
            return run_headless_streamed(cli, world, built_in_script()?, start);
        }
        WorldSource::Recipe {
            recipe,
            settings,
            preview_px,
            ..
        } if streams(cli, settings) => {
            check_streamed_outputs(cli)?;
            let start = std::time::Instant::now();
            let path = cli.recipe.as_ref().context("a recipe world has --recipe")?;
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let world =
                StreamedWorld::new_recipe(recipe, &text, settings, *preview_px, &recovery_dir()?)?;
            if let (Some(dir), Some(g)) = (&cli.recipe_previews, &world.generation) {
                world_outputs::write_recipe_previews(dir, &g.previews)?;
            }
            return run_headless_streamed(cli, world, built_in_script()?, start);
        }
        WorldSource::Heightmap { path, settings } if heightmap_streams(cli, path, settings)? => {
            check_streamed_outputs(cli)?;
            let start = std::time::Instant::now();
            let world = StreamedWorld::import_heightmap(path, settings, &recovery_dir()?)?;
            return run_headless_streamed(cli, world, built_in_script()?, start);
        }
        WorldSource::File(path) if StreamingWorldFile::is_streaming_file(path) => {
            check_streamed_outputs(cli)?;
            let start = std::time::Instant::now();
            let world = StreamedWorld::open(path)?;
            if world.recovered_columns > 0 {
                eprintln!(
                    "strata: recovered {} edited columns that were not saved",
                    world.recovered_columns
                );
            }
            return run_headless_streamed(cli, world, built_in_script()?, start);
        }
        WorldSource::Generated(_) if cli.memory_budget_mib.is_some() => {
            bail!(
                "--memory-budget-mib applies to streaming worlds: add --stream, or use a \
                 --world-size above {}",
                strata::terrain::generation::generate::MAX_SIZE_CELLS
            );
        }
        WorldSource::Heightmap { .. } if cli.memory_budget_mib.is_some() => {
            bail!(
                "--memory-budget-mib applies to streaming worlds: add --stream, or import a \
                 heightmap larger than {} cells",
                strata::terrain::generation::generate::MAX_SIZE_CELLS
            );
        }
        _ if cli.memory_budget_mib.is_some() || cli.stream => {
            bail!(
                "--memory-budget-mib and --stream apply to generated worlds and heightmap \
                 imports only"
            );
        }
        _ => {}
    }
    let world_start = std::time::Instant::now();
    let mut world = world_outputs::open_world(&source)?;
    let world_ms = world_start.elapsed().as_secs_f64() * 1e3;
    if let (Some(dir), Some(g)) = (&cli.recipe_previews, &world.generation) {
        world_outputs::write_recipe_previews(dir, &g.previews)?;
    }
    if let Some(recovery) = &world.journal_recovery {
        eprintln!("strata: recovered: {recovery}");
    }
    let script =
        world_outputs::library_and_script(cli.script.as_deref(), &mut world, made, &restyles)?;
    // `--camera`, else the camera stored in the world just opened (read
    // from the open world, so no earlier open rolls back a leftover journal
    // without the notice above).
    let camera = initial_camera(cli).or_else(|| world.meta.camera());
    let generator = world.generator();
    if let Some(output) = &cli.screenshot {
        let mut options = screenshot_options(cli, output, camera, script.clone())?;
        // A world just generated or cooked is exactly what its source makes.
        options.base_source = source.fresh_base();
        options.document = world.document.clone();
        options.materials = world.meta.materials.clone();
        let grid = std::mem::take(&mut world.grid);
        let (mut stats, grid, document) = headless::render_world(&options, grid, generator)?;
        world.grid = grid;
        if document.is_some() {
            world.document = document;
        }
        stats.world_ms = world_ms;
        stats.generation = world.generation.take();
        if let Some(path) = &options.stats_json {
            headless::write_stats_json(path, &stats)?;
        }
        print_render_summary(cli, output, &stats);
    } else if let Some(script) = &script {
        let edits = world_outputs::apply_script(script, &mut world, source.fresh_base())?;
        println!(
            "applied {} strokes ({edits} changed the world)",
            script.strokes.len()
        );
    }
    write_world_outputs(cli, world, camera)
}

/// A new recipe world's library, made before it cooks so its recipe can
/// name what `--material-*` adds (`None` for other worlds, or without).
fn recipe_library(
    cli: &Cli,
    restyles: &[strata::io::materials::RestyleRequest],
) -> anyhow::Result<Option<MaterialLibrary>> {
    if cli.recipe.is_none() || restyles.is_empty() {
        return Ok(None);
    }
    if streams(cli, &generator_settings(cli)) {
        // Said before the recipe is read, which could name what they add.
        bail!(STREAMED_MATERIALS);
    }
    Ok(Some(world_outputs::restyled(
        &MaterialLibrary::default(),
        restyles,
    )?))
}

/// Why `--material-*` are refused for a streaming world.
const STREAMED_MATERIALS: &str =
    "--material-* apply to whole worlds: streaming worlds keep no material library yet";

/// The screenshot run's options from the command line.
fn screenshot_options(
    cli: &Cli,
    output: &std::path::Path,
    camera: Option<Camera>,
    script: Option<Script>,
) -> anyhow::Result<ScreenshotOptions> {
    Ok(ScreenshotOptions {
        output: output.to_path_buf(),
        size_px: [cli.size.0, cli.size.1],
        camera,
        ui: cli.ui,
        stats_json: cli.stats_json.clone(),
        lod: lod_settings(cli)?,
        script,
        overlays: overlay_set(cli),
        time_secs: cli.time_secs,
        replay_frames: !cli.no_replay_frames,
        record_dir: cli.record.clone(),
        record_real_time: cli.real_time,
        level_fades: !cli.no_morph,
        stall_limit: cli
            .stall_timeout
            .unwrap_or(strata::pipeline::stall_watch::DEFAULT_STALL_LIMIT),
        base_source: None,
        document: None,
        materials: Default::default(),
    })
}

/// The headless run of a streaming world: the screenshot (after the
/// script) with its statistics, then `--save` (generator settings and the
/// edited columns only). Exports of a streaming world are refused for now.
fn run_headless_streamed(
    cli: &Cli,
    world: StreamedWorld,
    script: Option<Script>,
    opened_at: std::time::Instant,
) -> anyhow::Result<()> {
    // Making or opening the world: for a heightmap, copying its PNG into
    // the world file and decoding it; no chunk is built yet.
    let world_ms = opened_at.elapsed().as_secs_f64() * 1e3;
    println!("opened the streaming world in {world_ms:.0} ms");
    let result = run_streamed_outputs(cli, &world, script, world_ms);
    // A new world's recovery file goes on success and on refusal alike; an
    // opened world keeps its pending spills in its own file.
    world.remove_recovery();
    result
}

/// Refuses, before a streaming world is built or opened, the outputs a
/// headless run of one cannot give (see [`OutputPaths::check_streamed`]).
fn check_streamed_outputs(cli: &Cli) -> anyhow::Result<()> {
    if !cli.materials.requests().is_empty() {
        bail!(STREAMED_MATERIALS);
    }
    Ok(output_paths(cli).check_streamed(cli.export_region.is_some())?)
}

/// The body of [`run_headless_streamed`].
fn run_streamed_outputs(
    cli: &Cli,
    world: &StreamedWorld,
    script: Option<Script>,
    world_ms: f64,
) -> anyhow::Result<()> {
    check_streamed_outputs(cli)?;
    let Some(output) = &cli.screenshot else {
        bail!("a streaming world needs --screenshot with --headless");
    };
    let view = initial_camera(cli)
        .or_else(|| {
            world.file.camera().map(|[x, y, z, yaw, pitch]| {
                Camera::new(DVec3::new(x, y, z), yaw as f32, pitch as f32)
            })
        })
        .map_or_else(|| world.default_view(), FramedView::unframed);
    let mut options = screenshot_options(cli, output, Some(view.camera), script)?;
    options.lod = options.lod.for_default_view(view.reach_studs);
    // The script edits the world's layers (those its file holds).
    options.document = Some(world.document());
    let (mut stats, mut grid, mut residency, document) = headless::render_world_streamed(
        &options,
        strata::terrain::Grid::streaming(),
        world.generator(),
        Some(world.residency(budget_bytes(cli))),
    )?;
    stats.world_ms = world_ms;
    stats.generation = world.generation.clone();
    if let Some(path) = &options.stats_json {
        headless::write_stats_json(path, &stats)?;
    }
    print_render_summary(cli, output, &stats);
    if let (None, Some(residency), Some(doc)) = (&cli.save, residency.as_mut(), &document) {
        // Not saved: the spills stay pending in the world's file, and the
        // layers they were derived from go with them.
        residency.flush_spills()?;
        if world.file.pending_count()? > 0 {
            world.file.store_pending_document(doc)?;
        }
    }
    if let (Some(path), Some(residency)) = (&cli.save, residency.as_mut()) {
        let report = world.save(
            residency,
            &grid,
            path,
            Some(stats.camera),
            // Without a script, the layers the world opened with.
            Some(&document.unwrap_or_else(|| world.document())),
        )?;
        println!(
            "saved {} ({} edited columns written, {} spilled ones kept, {} bytes, {:.0} ms)",
            path.display(),
            report.columns_written,
            report.pending_saved,
            report.file_bytes,
            report.elapsed_ms
        );
    }
    let exports = cli.export_glb.is_some() || cli.export_heightmap.is_some();
    if let (Some(region), Some(residency), true) = (cli.export_region, residency.as_mut(), exports)
    {
        // The box's columns stay resident: nothing streams during exports.
        let missing = grid.missing_columns(&region);
        residency.load_now(&mut grid, missing)?;
        let crop = strata::terrain::editing::region::crop(&grid, region)?;
        write_exports(cli, &crop, (world.meta().georeference, Default::default()))?;
    }
    Ok(())
}

/// The outputs the command line asks for.
fn output_paths(cli: &Cli) -> OutputPaths {
    OutputPaths {
        screenshot: cli.screenshot.clone(),
        stats_json: cli.stats_json.clone(),
        save: cli.save.clone(),
        export_glb: cli.export_glb.clone(),
        export_heightmap: cli.export_heightmap.clone(),
        record: cli.record.clone(),
        no_replay_frames: cli.no_replay_frames,
        input: cli.heightmap.clone(),
        world: world_path(cli).cloned(),
    }
}

/// Prints what the screenshot run did.
fn print_render_summary(cli: &Cli, output: &std::path::Path, stats: &headless::RenderStats) {
    for line in stats.summary_lines(output, cli.script.is_some()) {
        println!("{line}");
    }
}

/// `--save`, `--export-glb` and `--export-heightmap` of the (edited) world.
fn write_world_outputs(
    cli: &Cli,
    mut world: OpenedWorld,
    camera: Option<Camera>,
) -> anyhow::Result<()> {
    if let Some(path) = &cli.save {
        let opened_from = world_path(cli).map(|p| p.as_path());
        let report = world_outputs::save_world(&mut world, path, opened_from, camera.as_ref())?;
        println!(
            "saved {} ({} chunks written, {} deleted{}, {} bytes, {:.0} ms)",
            path.display(),
            report.chunks_written,
            report.chunks_deleted,
            if report.full { ", full" } else { "" },
            report.file_bytes,
            report.elapsed_ms
        );
    }
    let meta = (
        world.meta.georeference.clone(),
        world.meta.materials.clone(),
    );
    match cli.export_region {
        Some(region) => write_exports(
            cli,
            &strata::terrain::editing::region::crop(&world.grid, region)?,
            meta,
        ),
        None => write_exports(cli, &world.grid, meta),
    }
}

/// `--export-glb` and `--export-heightmap` of `grid` (the world, or the
/// `--export-region` crop of it), the heightmap in the metres of the
/// georeference, its splat maps naming the library's materials.
fn write_exports(
    cli: &Cli,
    grid: &strata::terrain::Grid,
    (georeference, materials): (Option<WorldGeoreference>, MaterialLibrary),
) -> anyhow::Result<()> {
    let exports = Exports {
        materials,
        glb: cli.export_glb.clone(),
        heightmap: cli.export_heightmap.clone(),
        heightmap_options: cli.heightmap_options.export_options(),
        georeference,
        low_poly: cli.style == Style::LowPoly,
        glb_plain: cli.glb_plain,
        step_cells: cli.step_cells,
        collision_block: cli.collision_block,
    };
    for line in world_outputs::write_exports(&exports, grid)? {
        println!("{line}");
    }
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
    let options = strata::app::EditorOptions {
        world: world_source(cli, None)?,
        camera: initial_camera(cli),
        window_size: [cli.size.0, cli.size.1],
        lod: lod_settings(cli)?,
        overlays: overlay_set(cli),
        stream: cli.stream,
        memory_budget_bytes: budget_bytes(cli),
    };
    strata::app::run(options).context("the editor stopped with an error")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn negative_numbers_parse_where_allowed_and_are_refused_with_the_reason() {
        let cli = Cli::try_parse_from(["strata", "--heightmap", "m.png", "--sea-level", "-20"])
            .expect("a negative sea level");
        assert_eq!(cli.heightmap_options.sea_level, Some(-20.0));
        let cli = Cli::try_parse_from(["strata", "--heightmap", "m.png", "--sea-level=-0.5"])
            .expect("a negative sea level with =");
        assert_eq!(cli.heightmap_options.sea_level, Some(-0.5));
        let cli = Cli::try_parse_from(["strata", "--seed", "7", "--world-size", "256"])
            .expect("seed and size");
        assert_eq!((cli.seed, cli.world_size), (Some(7), Some(256)));
        for (args, needle) in [
            (
                &["--seed", "-5"][..],
                "the seed must be a whole number from 0 to",
            ),
            (&["--seed", "1.5"][..], "got \"1.5\""),
            (
                &["--world-size", "-20"][..],
                "the world size must be a positive whole number",
            ),
            (&["--world-size", "0"][..], "positive"),
            (
                &["--world-size", "99999999999"][..],
                "positive whole number",
            ),
            (
                &["--heightmap", "m.png", "--sea-level", "-inf"][..],
                "finite elevation",
            ),
            (
                &["--heightmap", "m.png", "--sea-level", "nan"][..],
                "finite elevation",
            ),
        ] {
            let err = Cli::try_parse_from(std::iter::once("strata").chain(args.iter().copied()))
                .expect_err("refused");
            let message = err.to_string();
            assert!(
                message.contains(needle) && !message.contains("unexpected argument"),
                "{args:?}: {message}"
            );
        }
    }
}
