//! Measures a `--record DIR` recording for pops (spec §13): the change from
//! each frame to the next (mean absolute RGB difference, 0–255), their
//! median and largest, and the ratio of the two (at most 2 for a
//! dolly across level switches).
//!
//! `cargo run --release --example frame_change -- DIR [--json]`

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .ok_or_else(|| anyhow::anyhow!("usage: frame_change DIR [--json]"))?;
    let json = args.next().is_some_and(|a| a == "--json");
    let report = strata::app::recording::measure_recording(std::path::Path::new(&dir))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{} frames: median change {:.3}, largest {:.3} (into frame {}), largest/median {:.2}",
            report.frames, report.median, report.max, report.max_at_frame, report.max_over_median
        );
        println!(
            "largest 16-pixel tile: median {:.3}, largest {:.3} (into frame {}), largest/median {:.2}",
            report.tile_median,
            report.tile_max,
            report.tile_max_at_frame,
            report.tile_max_over_median
        );
    }
    Ok(())
}
