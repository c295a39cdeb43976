//! Splat maps beside a heightmap export, so a game engine's terrain paints
//! the same materials the world shows: RGBA8 PNGs of four material weights
//! each, a material-index map, and a JSON sidecar saying which material
//! each channel holds.
//!
//! # What is written
//! Beside `<stem>.<ext>`:
//! - `<stem>_splat<k>.png` (k = 0, 1, ...): RGBA8, one sample per heightmap
//!   sample; channel `c` of map `k` is the weight of the surface's
//!   `4k + c`-th material (the materials on the surface, in id order). A
//!   sample's weights sum to exactly 255 where the column has ground and
//!   are all 0 where it has none.
//! - `<stem>_materials.png`: 8-bit gray, the id of the sample's heaviest
//!   material (the lower id on a tie), 0 where there is no ground.
//! - `<stem>_splat.json`: the maps, the index map, and per channel the
//!   map, the channel letter, the material id and its name in the world's
//!   library.
//!
//! # Weights
//! Each column's surface material is that of its top band's first cell at
//! least half solid (see `heightmap_export`). A sample's weights are the
//! share of each material among the columns of a box around it: 3 × 3
//! columns at one sample a column (the neighbourhood the mesher blends a
//! vertex's materials over), wider for resampled exports (half a sample's
//! footprint each side), so a splat map blends across material borders as
//! the editor draws them. Shares become bytes by largest remainder, so they
//! sum to 255 exactly.
//!
//! Each file is written whole or not at all; the maps are held in memory
//! while they are written (4 bytes a sample each, and 1 for the index map).
//! Splat maps past the last one written (left by an earlier export of more
//! materials to the same path) are removed.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::io::{ExportError, write_atomically};
use crate::terrain::Material;
use crate::terrain::materials::MaterialLibrary;

/// One channel of the splat maps.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SplatChannel {
    /// Which map (`<stem>_splat<map>.png`).
    pub map: usize,
    /// `"r"`, `"g"`, `"b"` or `"a"`.
    pub channel: &'static str,
    /// The material id.
    pub id: u8,
    /// Its name in the world's library.
    pub name: String,
}

/// What [`write_splats`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplatExport {
    /// The RGBA splat maps, four materials each.
    pub maps: Vec<PathBuf>,
    /// The 8-bit material-index map.
    pub index_map: PathBuf,
    /// The JSON sidecar naming every channel's material.
    pub sidecar: PathBuf,
    /// The channels, map by map.
    pub channels: Vec<SplatChannel>,
}

impl SplatExport {
    /// What was written, for the user: "2 splat maps of 6 materials".
    pub fn summary(&self) -> String {
        let maps = self.maps.len();
        format!(
            "{maps} splat map{} of {} material{}",
            if maps == 1 { "" } else { "s" },
            self.channels.len(),
            if self.channels.len() == 1 { "" } else { "s" }
        )
    }
}

/// The surface materials of a heightmap export's crop, one id a cell
/// column, row-major (row 0 north), 0 where a column has no ground.
pub(crate) struct SurfaceMaterials<'a> {
    /// Columns along +x.
    pub width: u32,
    /// Columns along +z.
    pub depth: u32,
    /// The ids.
    pub ids: &'a [u8],
}

/// Most splat maps an export writes: four materials each, 254 solid ids.
pub const MAX_SPLAT_MAPS: usize = 64;

/// Every file a heightmap export at `path` may write beside it for its
/// materials: the index map, the sidecar and splat maps 0 to
/// [`MAX_SPLAT_MAPS`] − 1 (an export writes the first few of these), so a
/// caller can refuse other outputs and inputs that would be replaced.
pub fn splat_paths(path: &Path) -> Vec<PathBuf> {
    let mut out = vec![beside(path, "_materials.png"), beside(path, "_splat.json")];
    out.extend((0..MAX_SPLAT_MAPS).map(|k| beside(path, &format!("_splat{k}.png"))));
    out
}

/// Refuses, before anything is written, an export whose splat files could
/// not replace what is at their paths (a folder, a device).
///
/// # Errors
/// [`ExportError::Write`] naming the first such path.
pub(crate) fn check_splat_paths(path: &Path) -> Result<(), ExportError> {
    for file in splat_paths(path) {
        crate::io::check_replaceable(&file).map_err(|e| ExportError::write(&file, e))?;
    }
    Ok(())
}

/// The sidecar's JSON.
#[derive(serde::Serialize)]
struct SplatSidecar<'a> {
    width: u32,
    height: u32,
    maps: Vec<String>,
    index_map: String,
    channels: &'a [SplatChannel],
}

const CHANNELS: [&str; 4] = ["r", "g", "b", "a"];

/// `path` with its stem suffixed (`x.png` + `_splat0.png` → `x_splat0.png`).
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let stem = path
        .file_stem()
        .map_or_else(|| "heightmap".into(), |s| s.to_string_lossy().into_owned());
    path.with_file_name(format!("{stem}{suffix}"))
}

/// Counts (`counts`, one per slot) turned into bytes summing to 255 by
/// largest remainder (ties to the lower slot); all 0 when every count is.
pub fn shares_to_bytes(counts: &[u32], out: &mut [u8]) {
    let total: u64 = counts.iter().map(|&c| u64::from(c)).sum();
    out.fill(0);
    if total == 0 {
        return;
    }
    let mut given = 0u64;
    let mut remainders: Vec<(u64, usize)> = Vec::with_capacity(counts.len());
    for (i, &c) in counts.iter().enumerate() {
        let scaled = u64::from(c) * 255;
        let floor = scaled / total;
        out[i] = floor as u8;
        given += floor;
        remainders.push((scaled % total, i));
    }
    remainders.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for &(_, i) in remainders.iter().take((255 - given) as usize) {
        out[i] += 1;
    }
}

/// Writes the splat maps, the index map and the sidecar beside `path` for
/// an export of `out_width × out_depth` samples whose samples lie
/// `sample_cells` columns apart over `surface`, naming materials as
/// `library` does. `ground[i]` says whether output sample `i` has ground
/// (the heightmap holds a height there); samples without get no weights.
/// Returns `None` when the surface has no material.
///
/// # Errors
/// [`ExportError::Write`] naming the file that could not be written.
pub(crate) fn write_splats(
    path: &Path,
    surface: &SurfaceMaterials<'_>,
    (out_width, out_depth, ground): (u32, u32, &[bool]),
    sample_cells: (f64, f64),
    library: &MaterialLibrary,
) -> Result<Option<SplatExport>, ExportError> {
    let mut present = [false; 256];
    for &id in surface.ids {
        present[usize::from(id)] = true;
    }
    present[0] = false;
    let ids: Vec<u8> = (1..=255u8).filter(|&id| present[usize::from(id)]).collect();
    if ids.is_empty() {
        return Ok(None);
    }
    let (maps, index) = splat_texels(surface, &ids, (out_width, out_depth, ground), sample_cells);
    let channels: Vec<SplatChannel> = ids
        .iter()
        .enumerate()
        .map(|(slot, &id)| SplatChannel {
            map: slot / 4,
            channel: CHANNELS[slot % 4],
            id,
            name: library.name(Material(id)).to_string(),
        })
        .collect();
    let mut written = Vec::new();
    for (k, map) in maps.into_iter().enumerate() {
        let file = beside(path, &format!("_splat{k}.png"));
        let image = image::RgbaImage::from_raw(out_width, out_depth, map)
            .ok_or_else(|| ExportError::write(&file, "splat buffer does not match its size"))?;
        save_png(&file, |tmp| {
            image.save_with_format(tmp, image::ImageFormat::Png)
        })?;
        written.push(file);
    }
    // Maps an earlier export of more materials left here would read as
    // part of this one: they go (the sidecar lists only the new ones).
    for k in written.len()..MAX_SPLAT_MAPS {
        let stale = beside(path, &format!("_splat{k}.png"));
        if stale.is_file() {
            std::fs::remove_file(&stale).map_err(|e| ExportError::write(&stale, e))?;
        }
    }
    let index_map = beside(path, "_materials.png");
    let index_image = image::GrayImage::from_raw(out_width, out_depth, index)
        .ok_or_else(|| ExportError::write(&index_map, "index buffer does not match its size"))?;
    save_png(&index_map, |tmp| {
        index_image.save_with_format(tmp, image::ImageFormat::Png)
    })?;
    let sidecar = beside(path, "_splat.json");
    let file_name = |p: &Path| {
        p.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    };
    let json = serde_json::to_string_pretty(&SplatSidecar {
        width: out_width,
        height: out_depth,
        maps: written.iter().map(|p| file_name(p)).collect(),
        index_map: file_name(&index_map),
        channels: &channels,
    })
    .map_err(|e| ExportError::write(&sidecar, &e))?;
    write_atomically(
        &sidecar,
        |tmp| std::fs::write(tmp, json.as_bytes()).map_err(|e| ExportError::write(&sidecar, &e)),
        |e| ExportError::write(&sidecar, &e),
    )?;
    Ok(Some(SplatExport {
        maps: written,
        index_map,
        sidecar,
        channels,
    }))
}

/// The splat maps' RGBA texels (one buffer a map) and the index map's
/// bytes of an export of `out_width × out_depth` samples `sample_cells`
/// columns apart over `surface`, whose materials are `ids` (in slot order).
fn splat_texels(
    surface: &SurfaceMaterials<'_>,
    ids: &[u8],
    (out_width, out_depth, ground): (u32, u32, &[bool]),
    sample_cells: (f64, f64),
) -> (Vec<Vec<u8>>, Vec<u8>) {
    let mut slot_of = [u8::MAX; 256];
    for (slot, &id) in ids.iter().enumerate() {
        slot_of[usize::from(id)] = slot as u8;
    }
    let map_count = ids.len().div_ceil(4);
    let (w, d) = (out_width as usize, out_depth as usize);
    let radius = (sample_cells.0.max(sample_cells.1) / 2.0).round().max(1.0) as i64;
    let mut maps = vec![vec![0u8; w * d * 4]; map_count];
    let mut index = vec![0u8; w * d];
    // Bands of rows, each band's rows in parallel (every map's row and the
    // index row), copied into place before the next band, so the rows in
    // flight stay a band's worth however large the export.
    const BAND_ROWS: usize = 64;
    for band in (0..d).step_by(BAND_ROWS) {
        let band_end = (band + BAND_ROWS).min(d);
        let rows: Vec<(Vec<u8>, Vec<u8>)> = (band..band_end)
            .into_par_iter()
            .map(|row| {
                let mut counts = vec![0u32; ids.len()];
                let mut bytes = vec![0u8; ids.len()];
                let mut splat_row = vec![0u8; w * 4 * map_count];
                let mut index_row = vec![0u8; w];
                let cz = (row as f64 * sample_cells.1).round() as i64;
                for col in 0..w {
                    let cx = (col as f64 * sample_cells.0).round() as i64;
                    counts.fill(0);
                    if !ground.get(row * w + col).copied().unwrap_or(false) {
                        // No ground here: no weights (the row stays 0).
                        continue;
                    }
                    for z in (cz - radius).max(0)..=(cz + radius).min(i64::from(surface.depth) - 1)
                    {
                        for x in
                            (cx - radius).max(0)..=(cx + radius).min(i64::from(surface.width) - 1)
                        {
                            let id = surface.ids[z as usize * surface.width as usize + x as usize];
                            if id != 0 {
                                counts[usize::from(slot_of[usize::from(id)])] += 1;
                            }
                        }
                    }
                    shares_to_bytes(&counts, &mut bytes);
                    for (slot, &b) in bytes.iter().enumerate() {
                        splat_row[(slot / 4) * w * 4 + col * 4 + slot % 4] = b;
                    }
                    let heaviest = bytes
                        .iter()
                        .enumerate()
                        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(&a.0)))
                        .filter(|(_, b)| **b > 0);
                    index_row[col] = heaviest.map_or(0, |(slot, _)| ids[slot]);
                }
                (splat_row, index_row)
            })
            .collect();
        // An indexed parallel range collects in row order.
        for (row, (splat_row, index_row)) in (band..band_end).zip(rows) {
            for (k, map) in maps.iter_mut().enumerate() {
                map[row * w * 4..(row + 1) * w * 4]
                    .copy_from_slice(&splat_row[k * w * 4..(k + 1) * w * 4]);
            }
            index[row * w..(row + 1) * w].copy_from_slice(&index_row);
        }
    }
    (maps, index)
}

/// Writes a PNG to `file` whole or not at all.
fn save_png(
    file: &Path,
    save: impl FnOnce(&Path) -> image::ImageResult<()>,
) -> Result<(), ExportError> {
    write_atomically(
        file,
        |tmp| save(tmp).map_err(|e| ExportError::write(file, &e)),
        |e| ExportError::write(file, &e),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_sum_to_255_by_largest_remainder() {
        let mut out = [0u8; 3];
        shares_to_bytes(&[1, 1, 1], &mut out);
        assert_eq!(out, [85, 85, 85]);
        shares_to_bytes(&[2, 1, 0], &mut out);
        // 170 and 85 exactly.
        assert_eq!(out, [170, 85, 0]);
        shares_to_bytes(&[4, 3, 2], &mut out);
        // 113.33, 85, 56.67: the largest remainder (56.67) gets the unit.
        assert_eq!(out, [113, 85, 57]);
        assert_eq!(out.iter().map(|&b| u32::from(b)).sum::<u32>(), 255);
        shares_to_bytes(&[0, 0, 0], &mut out);
        assert_eq!(out, [0, 0, 0]);
    }

    #[test]
    fn a_border_blends_over_three_columns_and_the_index_is_the_heaviest() {
        let dir = std::env::temp_dir().join(format!("strata-splat-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        // Four columns: grass, grass, rock, no ground; one row. The
        // column without ground gets no weights although rock is beside it.
        let ids = [2u8, 2, 3, 0];
        let surface = SurfaceMaterials {
            width: 4,
            depth: 1,
            ids: &ids,
        };
        let path = dir.join("h.png");
        // A map left by an earlier export of more materials.
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("h_splat1.png"), b"old").unwrap();
        let library = MaterialLibrary::default();
        let ground = [true, true, true, false];
        let out = write_splats(&path, &surface, (4, 1, &ground), (1.0, 1.0), &library)
            .unwrap()
            .unwrap();
        assert_eq!(out.maps, [dir.join("h_splat0.png")]);
        assert!(!dir.join("h_splat1.png").exists(), "the stale map is gone");
        assert_eq!(
            out.channels,
            [
                SplatChannel {
                    map: 0,
                    channel: "r",
                    id: 2,
                    name: "Grass".into()
                },
                SplatChannel {
                    map: 0,
                    channel: "g",
                    id: 3,
                    name: "Rock".into()
                }
            ]
        );
        let splat = image::open(&out.maps[0]).unwrap().to_rgba8();
        let texels: Vec<[u8; 4]> = splat.pixels().map(|p| p.0).collect();
        assert_eq!(
            texels,
            [
                [255, 0, 0, 0],
                [170, 85, 0, 0],
                [128, 127, 0, 0],
                [0, 0, 0, 0]
            ]
        );
        let index = image::open(&out.index_map).unwrap().to_luma8();
        assert_eq!(index.as_raw(), &vec![2, 2, 2, 0]);
        let sidecar: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out.sidecar).unwrap()).unwrap();
        assert_eq!(sidecar["maps"][0], "h_splat0.png");
        assert_eq!(sidecar["channels"][1]["name"], "Rock");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
