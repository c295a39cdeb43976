//! Writes a replay script that flies the camera over a generated world at a
//! steady speed and height above the ground (camera keyframes, see the
//! README's script format), optionally after an edit and back again.
//!
//! ```text
//! cargo run --release --example flight_script -- --world-size 1048576 --seed 7 \
//!     --from 2097152,2097152 --km 20 --speed 250 > assets/scripts/flight-20km.json
//! ```
//!
//! The camera keeps 300–700 studs above the generated ground under it on
//! every frame; the tool checks that before it writes anything.

use anyhow::{Context as _, bail};
use clap::Parser;
use serde_json::json;
use strata::terrain::generation::generate::{GeneratorSettings, surface_height_cells};
use strata::terrain::storage::coords::CELL_SIZE_STUDS;

#[derive(Parser)]
struct Args {
    /// World size, cells.
    #[arg(long, default_value_t = 1_048_576)]
    world_size: u32,
    /// Seed.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Start `x,z`, studs.
    #[arg(long, value_delimiter = ',', required = true)]
    from: Vec<f64>,
    /// Flight length, km (a stud is a metre: 1000 studs each).
    #[arg(long, default_value_t = 20.0)]
    km: f64,
    /// Speed, studs per second.
    #[arg(long, default_value_t = 250.0)]
    speed: f64,
    /// Height above the highest ground near the path, studs.
    #[arg(long, default_value_t = 420.0)]
    clearance: f64,
    /// Fly back to the start after reaching the end.
    #[arg(long)]
    back: bool,
    /// An edit before the flight: a Fill box `x0,y0,z0,x1,y1,z1` in cells (limestone).
    #[arg(long, value_delimiter = ',')]
    fill: Option<Vec<i32>>,
}

const FRAME_RATE_HZ: f64 = 60.0;
/// Frames between keyframes.
const KEY_EVERY_FRAMES: u32 = 30;

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let settings = GeneratorSettings {
        seed: args.seed,
        size_cells: args.world_size,
    };
    settings
        .validate_streaming()
        .context("invalid --world-size")?;
    let [x0, z0] = <[f64; 2]>::try_from(args.from.as_slice())
        .map_err(|_| anyhow::anyhow!("--from takes x,z"))?;
    let cell = f64::from(CELL_SIZE_STUDS);
    let ground = |x: f64, z: f64| -> f64 {
        surface_height_cells(
            &settings,
            (x / cell).floor() as i32,
            (z / cell).floor() as i32,
        )
        .map_or(0.0, |h| h * cell)
    };
    let length_studs = args.km * 1000.0;
    let leg_frames = (length_studs / args.speed * FRAME_RATE_HZ).round() as u32;
    // The path: north (−z) for `length`, then back when asked.
    let legs: Vec<(f64, f64, f64)> = if args.back {
        vec![(0.0, -1.0, 0.0), (0.0, 1.0, 180.0)]
    } else {
        vec![(0.0, -1.0, 0.0)]
    };
    let start_frame = if args.fill.is_some() { 60 } else { 0 };
    let mut entries = Vec::new();
    if let Some(b) = &args.fill {
        entries.push(json!({
            "frame": 1, "tool": "fill", "material": "limestone",
            "region_min": [b[0], b[1], b[2]], "region_max": [b[3], b[4], b[5]]
        }));
    }
    let mut keys: Vec<(u32, [f64; 5])> = Vec::new();
    let (mut x, mut z) = (x0, z0);
    let mut frame = start_frame;
    for (leg, &(dx, dz, yaw)) in legs.iter().enumerate() {
        let steps = leg_frames / KEY_EVERY_FRAMES;
        for i in 0..=steps {
            if leg > 0 && i == 0 {
                continue;
            }
            let t = f64::from(i * KEY_EVERY_FRAMES) / FRAME_RATE_HZ * args.speed;
            let (kx, kz) = (x + dx * t, z + dz * t);
            // Highest ground within ±96 studs along and across the path.
            let mut high: f64 = 0.0;
            for a in -3..=3 {
                for c in -3..=3 {
                    high = high.max(ground(kx + 32.0 * f64::from(c), kz + 32.0 * f64::from(a)));
                }
            }
            // Over the highest ground near the path, but never more than
            // 680 (nor less than 320) studs over the ground right below.
            let below = ground(kx, kz);
            let y = (high + args.clearance).clamp(below + 320.0, below + 680.0);
            keys.push((frame + i * KEY_EVERY_FRAMES, [kx, y, kz, yaw, -20.0]));
        }
        x += dx * f64::from(steps * KEY_EVERY_FRAMES) / FRAME_RATE_HZ * args.speed;
        z += dz * f64::from(steps * KEY_EVERY_FRAMES) / FRAME_RATE_HZ * args.speed;
        frame += steps * KEY_EVERY_FRAMES;
    }
    // Every frame between keyframes keeps 300–700 studs over the ground.
    for pair in keys.windows(2) {
        let ((fa, a), (fb, b)) = (pair[0], pair[1]);
        for f in fa..=fb {
            let t = f64::from(f - fa) / f64::from(fb - fa);
            let p: Vec<f64> = (0..3).map(|j| a[j] + (b[j] - a[j]) * t).collect();
            let above = p[1] - ground(p[0], p[2]);
            if !(300.0..=700.0).contains(&above) {
                bail!(
                    "frame {f}: {above:.0} studs above the ground at ({:.0}, {:.0})",
                    p[0],
                    p[2]
                );
            }
        }
    }
    for (frame, camera) in keys {
        entries.push(json!({ "frame": frame, "camera": camera }));
    }
    let script = json!({ "frame_rate_hz": FRAME_RATE_HZ, "strokes": entries });
    println!("{}", serde_json::to_string_pretty(&script)?);
    Ok(())
}
