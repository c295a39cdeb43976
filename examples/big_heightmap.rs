//! Writes a large 16-bit heightmap PNG for measuring streamed heightmap
//! imports: the Jacksboro DEM (or any 16-bit grayscale PNG) upscaled with
//! bicubic (Catmull–Rom) filtering to `--side` pixels a side, plus a
//! deterministic fine relief so the upscale does not read as flat. No
//! sidecar is written: the map imports with normalized heights.
//!
//! ```text
//! cargo run --release --example big_heightmap -- \
//!     --from /work/shared/data/jacksboro_fault_dem.png --side 16384 --out /tmp/big.png
//! ```
//!
//! The output is large (hundreds of MB at 16384²): write it outside the
//! repository.

use std::path::PathBuf;

use anyhow::{Context as _, bail};
use clap::Parser;
use image::ImageEncoder as _;

#[derive(Parser)]
struct Args {
    /// The 16-bit (or 8-bit) grayscale PNG to upscale.
    #[arg(long)]
    from: PathBuf,
    /// Side of the square output, pixels.
    #[arg(long, default_value_t = 16384)]
    side: u32,
    /// Amplitude of the added fine relief, in 16-bit units (0 for none).
    #[arg(long, default_value_t = 600.0)]
    detail: f64,
    /// Output PNG.
    #[arg(long)]
    out: PathBuf,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if !(1..=65536).contains(&args.side) {
        bail!(
            "--side must be between 1 and 65536 pixels, got {}",
            args.side
        );
    }
    let start = std::time::Instant::now();
    let source = image::open(&args.from)
        .with_context(|| format!("cannot read {}", args.from.display()))?
        .into_luma16();
    let mut big = image::imageops::resize(
        &source,
        args.side,
        args.side,
        image::imageops::FilterType::CatmullRom,
    );
    let side = f64::from(args.side);
    for (x, y, p) in big.enumerate_pixels_mut() {
        let (u, v) = (f64::from(x) / side, f64::from(y) / side);
        let fine = (u * 1900.0).sin() * (v * 1700.0).cos() + 0.5 * ((u + v) * 3100.0).sin();
        let value = f64::from(p.0[0]) + args.detail * fine;
        p.0[0] = value.round().clamp(0.0, 65535.0) as u16;
    }
    let file = std::fs::File::create(&args.out)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    image::codecs::png::PngEncoder::new_with_quality(
        std::io::BufWriter::new(file),
        image::codecs::png::CompressionType::Fast,
        image::codecs::png::FilterType::Paeth,
    )
    .write_image(
        bytemuck::cast_slice(big.as_raw()),
        args.side,
        args.side,
        image::ExtendedColorType::L16,
    )
    .with_context(|| format!("cannot encode {}", args.out.display()))?;
    let bytes = std::fs::metadata(&args.out).map_or(0, |m| m.len());
    eprintln!(
        "wrote {} ({}x{} pixels, {bytes} bytes) in {:.1} s",
        args.out.display(),
        args.side,
        args.side,
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
