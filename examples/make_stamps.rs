//! Writes the shipped stamps of the stamp tool into
//! `assets/stamps/` (or the folder given): seven 512² 16-bit grayscale
//! height stamps and one cell stamp. Procedural and deterministic (fixed
//! seeds, the terrain's own noise), so a rerun writes the same files.
//!
//! `cargo run --release --example make_stamps [-- DIR]`
//!
//! Every height stamp is 0 along its border, so it blends into the terrain
//! in Add mode without a seam; shapes are in normalized coordinates `(u, v)`
//! in `−1..=1` with `r` the distance from the centre.

use std::f64::consts::PI;
use std::path::{Path, PathBuf};

use glam::IVec3;
use strata::io::world::stamp_file::save_cell_stamp;
use strata::terrain::editing::region::Clipboard;
use strata::terrain::generation::noise::{fbm, ridged, smoothstep};
use strata::terrain::storage::cell::{Cell, Material};

/// Side of the height stamps, pixels.
const SIDE_PX: u32 = 512;

/// Fades a shape to 0 over the outer `width` of the square (so edges are 0).
fn border(u: f64, v: f64, width: f64) -> f64 {
    let e = u.abs().max(v.abs());
    smoothstep(1.0, 1.0 - width, e)
}

/// Crater: a raised rim at r ≈ 0.55, a bowl whose floor lies at 0.15 and
/// a central peak, with ejecta noise outside the rim.
fn crater(u: f64, v: f64) -> f64 {
    let r = (u * u + v * v).sqrt();
    let rim_r = 0.55 + 0.03 * fbm(11, u * 3.0, v * 3.0, 3);
    let outside = (1.0 - ((r - rim_r) / (0.92 - rim_r)).clamp(0.0, 1.0)).powf(2.2);
    let ejecta = 0.06 * fbm(12, u * 9.0, v * 9.0, 4).abs() * outside;
    let bowl = 0.15 + 0.85 * smoothstep(0.0, rim_r, r).powf(3.0);
    let peak = 0.45 * (-(r / 0.09).powi(2)).exp();
    let h = if r < rim_r {
        bowl.max(0.15 + peak)
    } else {
        outside + ejecta
    };
    h * border(u, v, 0.06)
}

/// Mesa: a flat top with a noisy outline and three terraces of steep
/// risers down to the plain.
fn mesa(u: f64, v: f64) -> f64 {
    let r = (u * u + v * v).sqrt() + 0.08 * fbm(21, u * 2.5, v * 2.5, 4);
    // 0 at the top's edge, 1 at the foot.
    let t = ((r - 0.35) / 0.5).clamp(0.0, 1.0);
    // Terraces: each step a flat bench and a steep riser (smoothstep per step).
    let steps = 4.0;
    let s = t * steps;
    let level = s.floor() + smoothstep(0.7, 1.0, s.fract());
    let h = 1.0 - (level / steps).min(1.0);
    let talus = 0.03 * fbm(22, u * 12.0, v * 12.0, 3) * (1.0 - h);
    (h + talus).clamp(0.0, 1.0) * border(u, v, 0.06)
}

/// Volcano: a concave cone with radial gullies and a caldera whose floor
/// lies at 0.7 of the summit.
fn volcano(u: f64, v: f64) -> f64 {
    let r = (u * u + v * v).sqrt();
    let angle = v.atan2(u);
    let cone = (1.0 - r / 0.95).clamp(0.0, 1.0).powf(1.6);
    let gullies = 0.04 * (1.0 - radial_ridged(31, angle, r, 6.0, 2.0)) * r;
    let caldera_r = 0.16;
    let rim = 1.0 - ((r - caldera_r).abs() / 0.25).min(1.0).powi(2) * 0.1;
    let h = if r < caldera_r {
        0.7 + 0.2 * smoothstep(0.0, caldera_r, r).powi(4)
    } else {
        (cone * rim + 0.12 * smoothstep(0.35, caldera_r, r)).min(1.0) - gullies
    };
    h.clamp(0.0, 1.0) * border(u, v, 0.05)
}

/// Dunes: transverse dunes whose crests meander; each has a long windward
/// slope (wind from −x) and a steep slip face, under a window that fades
/// the field out at the border.
fn dunes(u: f64, v: f64) -> f64 {
    let wavelength = 0.28;
    let x = u + 0.12 * fbm(41, v * 1.5, 0.3, 3) + 0.04 * (v * 7.0).sin();
    let phase = (x / wavelength).rem_euclid(1.0);
    // Windward: 0 → 1 over 0.78 of the wavelength; slip face: 1 → 0 over the rest.
    let profile = if phase < 0.78 {
        smoothstep(0.0, 0.78, phase)
    } else {
        1.0 - smoothstep(0.78, 1.0, phase)
    };
    let crest_height = 0.6 + 0.4 * fbm(42, v * 2.0, u * 0.7, 3).abs().min(1.0);
    let ripples = 0.02 * (u * 90.0 + 3.0 * fbm(43, u * 4.0, v * 4.0, 2)).sin();
    let window = smoothstep(1.0, 0.6, u.abs()) * smoothstep(1.0, 0.6, v.abs());
    ((profile * crest_height + ripples) * window).clamp(0.0, 1.0)
}

/// Ridge: a ridge line along x that meanders in z, with a sharp crest and
/// ridged-noise spurs down its flanks, tapering at both ends.
fn ridge(u: f64, v: f64) -> f64 {
    let line = 0.18 * (u * PI * 1.2).sin() + 0.06 * fbm(51, u * 3.0, 0.5, 3);
    let dist = (v - line).abs();
    let flank = (1.0 - dist / 0.6).clamp(0.0, 1.0);
    let crest = flank.powf(1.8);
    let spurs = 0.25 * ridged(52, u * 6.0, v * 6.0, 4) * flank;
    let along = smoothstep(1.0, 0.55, u.abs()) * (0.85 + 0.15 * fbm(53, u * 2.0, 7.0, 2));
    ((crest * 0.8 + spurs) * along).clamp(0.0, 1.0) * border(u, v, 0.05)
}

/// Canyon segment: a plateau cut by a meandering canyon along x with two
/// benches in its walls and a flat floor at 0.1.
fn canyon_segment(u: f64, v: f64) -> f64 {
    let centre = 0.28 * (u * PI * 1.1).sin() + 0.04 * fbm(61, u * 4.0, 1.0, 3);
    let dist = (v - centre).abs() + 0.02 * fbm(62, u * 10.0, v * 10.0, 3);
    // Floor inside 0.08, bench at 0.55 between 0.16 and 0.22, rim at 0.3.
    let wall = smoothstep(0.08, 0.16, dist) * 0.45 + smoothstep(0.22, 0.3, dist) * 0.45;
    let plateau = 0.1 + wall + 0.03 * fbm(63, u * 6.0, v * 6.0, 3);
    plateau.clamp(0.0, 1.0) * border(u, v, 0.12)
}

/// Eroded hill: a rounded dome carved by radial gullies that deepen
/// toward the foot, with debris fans.
fn eroded_hill(u: f64, v: f64) -> f64 {
    let r = (u * u + v * v).sqrt();
    let angle = v.atan2(u);
    let dome = (1.0 - (r / 0.9).powi(2)).clamp(0.0, 1.0).powf(1.5);
    let warp = 0.3 * fbm(72, u * 2.0, v * 2.0, 2);
    let gully = 1.0 - radial_ridged(71, angle + warp, r, 4.0, 1.5);
    let depth = 0.22 * smoothstep(0.1, 0.6, r) * dome.sqrt();
    let fans = 0.05 * smoothstep(0.6, 0.85, r) * smoothstep(0.95, 0.85, r) * gully;
    (dome - depth * (1.0 - gully) + fans).clamp(0.0, 1.0) * border(u, v, 0.05)
}

/// Noise around the centre that varies fast with the angle and slowly
/// with the distance `r` (radial streaks), without a seam at ±π: sampled on
/// a circle of radius `around` (noise units) pushed out by `r · along`.
fn radial_ridged(seed: u64, angle: f64, r: f64, around: f64, along: f64) -> f64 {
    let radius = around + r * along;
    ridged(seed, angle.cos() * radius, angle.sin() * radius, 3)
}

/// Writes `shape` sampled at pixel centres as a 16-bit grayscale PNG.
fn write_height(dir: &Path, name: &str, shape: fn(f64, f64) -> f64) -> anyhow::Result<()> {
    let n = SIDE_PX;
    let pixels: Vec<u16> = (0..n * n)
        .map(|i| {
            let (x, z) = (f64::from(i % n), f64::from(i / n));
            let u = (x + 0.5) / f64::from(n) * 2.0 - 1.0;
            let v = (z + 0.5) / f64::from(n) * 2.0 - 1.0;
            (shape(u, v).clamp(0.0, 1.0) * 65535.0).round() as u16
        })
        .collect();
    let image = image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::from_raw(n, n, pixels)
        .ok_or_else(|| anyhow::anyhow!("pixel buffer of {name}"))?;
    let path = dir.join(format!("{name}.png"));
    image.save_with_format(&path, image::ImageFormat::Png)?;
    println!("wrote {}", path.display());
    Ok(())
}

/// The cliff arch: a limestone wall 48 × 40 × 16 cells with a rock base,
/// pierced by a half-elliptical opening 28 cells wide and 26 tall, the
/// surfaces roughened by noise. Occupancy follows a signed distance so the
/// surface is smooth.
fn cliff_arch() -> Clipboard {
    let size = IVec3::new(48, 40, 16);
    let mut cells = Vec::with_capacity((size.x * size.y * size.z) as usize);
    for z in 0..size.z {
        for y in 0..size.y {
            for x in 0..size.x {
                let p = glam::DVec3::new(f64::from(x), f64::from(y), f64::from(z)) + 0.5;
                let rough = 1.2 * fbm(81, p.x * 0.15, p.y * 0.15 + p.z * 0.1, 3);
                // The wall: a box that narrows toward the top (taper in z).
                let half_z = 6.5 - p.y * 0.05 + rough;
                let wall = (p.x - 24.0).abs() - 22.0 + rough * 0.5;
                let depth = (p.z - 8.0).abs() - half_z;
                let top = p.y - (37.0 + 1.5 * fbm(82, p.x * 0.2, p.z * 0.2, 2));
                let solid = wall.max(depth).max(top);
                // The opening: inside a half ellipse (negative inside).
                let (ex, ey) = ((p.x - 24.0) / 14.0, p.y / 26.0);
                let hole = ((ex * ex + ey * ey).sqrt() - 1.0) * 13.0 + rough * 0.4;
                let sdf = solid.max(-hole);
                let occupancy = ((0.5 - sdf).clamp(0.0, 1.0) * 255.0).round() as u8;
                let material = if p.y < 4.0 + rough {
                    Material::ROCK
                } else if (p.y + rough * 2.0).rem_euclid(9.0) < 1.5 {
                    Material::SLATE
                } else {
                    Material::LIMESTONE
                };
                cells.push(Cell::new(material, occupancy));
            }
        }
    }
    // The size is within the clipboard's limits and matches the cells.
    Clipboard::from_cells(size, cells).unwrap_or_else(|| unreachable!("48×40×16 cells"))
}

/// A height stamp's shape: stamp `(u, v)` in −1..=1 to height in 0..=1.
type HeightShape = fn(f64, f64) -> f64;

fn main() -> anyhow::Result<()> {
    let dir = std::env::args().nth(1).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/stamps"),
        PathBuf::from,
    );
    std::fs::create_dir_all(&dir)?;
    let shapes: [(&str, HeightShape); 7] = [
        ("crater", crater),
        ("mesa", mesa),
        ("volcano", volcano),
        ("dunes", dunes),
        ("ridge", ridge),
        ("canyon_segment", canyon_segment),
        ("eroded_hill", eroded_hill),
    ];
    for (name, shape) in shapes {
        write_height(&dir, name, shape)?;
    }
    let path = dir.join("cliff_arch.stamp");
    save_cell_stamp(&path, &cliff_arch())?;
    println!("wrote {}", path.display());
    Ok(())
}
