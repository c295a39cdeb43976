//! Hostile elevation files: a TIFF whose tiles claim gigabytes, a raster
//! of a million pixels a side, truncated strips, predictors that do not fit
//! the samples, NaN and infinite elevations, an EXR whose header claims a
//! billion columns, RAW16 lengths that fit no size. Each is refused with a
//! clear error within 2 s, without allocating what it claims, and changes
//! nothing (the import builds no grid). Own test binary, so the peak-memory
//! check sees no other test.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use strata::io::heightmap::heightmap_format::{import_heightmap, read_elevation};
use strata::io::heightmap::heightmap_import::{
    HeightmapSettings, ImportError, MAX_SIDE_CELLS, RawLayout,
};
use strata::progress::Progress;

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("strata-hostile-dem-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Peak resident memory of this process so far, bytes (`VmHWM`).
fn peak_rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: u64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .expect("VmHWM in kB");
    kib * 1024
}

/// The import of `path` with `settings` on a thread; fails unless it ends
/// within 2 s.
fn import_within_2s(
    path: &Path,
    settings: &HeightmapSettings,
) -> (Result<(), ImportError>, Duration) {
    let (path, settings) = (path.to_path_buf(), settings.clone());
    let (tx, rx) = std::sync::mpsc::channel();
    let start = Instant::now();
    std::thread::spawn(move || {
        let _ = tx.send(import_heightmap(&path, &settings).map(|_| ()));
    });
    let result = rx
        .recv_timeout(Duration::from_secs(2))
        .expect("finished within 2 s");
    (result, start.elapsed())
}

/// A little-endian TIFF written by hand, so its tags can lie.
struct Tiff {
    width: u32,
    height: u32,
    /// `(tile width, tile length)`, or strips of `rows_per_strip`.
    tiles: Option<(u32, u32)>,
    rows_per_strip: u32,
    bits: u16,
    /// 1 unsigned, 2 signed, 3 float.
    sample_format: u16,
    compression: u16,
    predictor: u16,
    /// The chunks' bytes as stored.
    chunks: Vec<Vec<u8>>,
    /// Byte counts to declare instead of the chunks' lengths.
    declared_counts: Option<Vec<u32>>,
    /// Bytes the file is cut to after it is written (0: whole).
    cut_to: usize,
}

impl Tiff {
    fn float(width: u32, height: u32, samples: &[f32]) -> Tiff {
        Tiff {
            width,
            height,
            tiles: None,
            rows_per_strip: height,
            bits: 32,
            sample_format: 3,
            compression: 1,
            predictor: 1,
            chunks: vec![samples.iter().flat_map(|s| s.to_le_bytes()).collect()],
            declared_counts: None,
            cut_to: 0,
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = self.layout();
        if self.cut_to > 0 {
            out.truncate(self.cut_to);
        }
        out
    }

    /// The file: header, IFD (with its arrays), then the chunks last, so a
    /// cut file loses chunk bytes first.
    fn layout(&self) -> Vec<u8> {
        // The IFD is written at offset 8 with the chunk offsets it will
        // have; its size is known before the chunks are placed.
        let arrays = |n: usize| if n > 1 { 8 * n } else { 0 };
        let entry_count = if self.tiles.is_some() { 12 } else { 11 };
        let ifd_bytes = 2 + 12 * entry_count + 4 + arrays(self.chunks.len());
        let mut at = 8 + ifd_bytes as u32;
        let mut offsets = Vec::new();
        for c in &self.chunks {
            offsets.push(at);
            at += c.len() as u32;
        }
        let mut out = b"II*\0".to_vec();
        out.extend_from_slice(&8_u32.to_le_bytes());
        let mut ifd = self.ifd(&offsets, 8);
        out.append(&mut ifd);
        for c in &self.chunks {
            out.extend_from_slice(c);
        }
        out
    }

    /// The IFD at file offset `ifd_at`, its LONG arrays after it.
    fn ifd(&self, offsets: &[u32], ifd_at: u32) -> Vec<u8> {
        let counts = self
            .declared_counts
            .clone()
            .unwrap_or_else(|| self.chunks.iter().map(|c| c.len() as u32).collect());
        let short = |v: u16| {
            let mut b = [0; 4];
            b[..2].copy_from_slice(&v.to_le_bytes());
            b
        };
        let long = |v: u32| v.to_le_bytes();
        let entry_count: u32 = if self.tiles.is_some() { 12 } else { 11 };
        let arrays_at = ifd_at + 2 + 12 * entry_count + 4;
        let mut arrays = Vec::new();
        let mut array = |values: &[u32]| -> (u32, [u8; 4]) {
            if values.len() == 1 {
                return (1, values[0].to_le_bytes());
            }
            let at = arrays_at + arrays.len() as u32;
            values
                .iter()
                .for_each(|v| arrays.extend_from_slice(&v.to_le_bytes()));
            (values.len() as u32, at.to_le_bytes())
        };
        let (n_off, off) = array(offsets);
        let (n_cnt, cnt) = array(&counts);
        let mut entries: Vec<(u16, u16, u32, [u8; 4])> = vec![
            (256, 4, 1, long(self.width)),
            (257, 4, 1, long(self.height)),
            (258, 3, 1, short(self.bits)),
            (259, 3, 1, short(self.compression)),
            (262, 3, 1, short(1)),
            (277, 3, 1, short(1)),
            (317, 3, 1, short(self.predictor)),
            (339, 3, 1, short(self.sample_format)),
        ];
        match self.tiles {
            Some((tw, tl)) => entries.extend([
                (322, 4, 1, long(tw)),
                (323, 4, 1, long(tl)),
                (324, 4, n_off, off),
                (325, 4, n_cnt, cnt),
            ]),
            None => entries.extend([
                (273, 4, n_off, off),
                (278, 4, 1, long(self.rows_per_strip)),
                (279, 4, n_cnt, cnt),
            ]),
        }
        entries.sort_by_key(|e| e.0);
        let mut out = (entries.len() as u16).to_le_bytes().to_vec();
        for (tag, ty, count, value) in entries {
            out.extend_from_slice(&tag.to_le_bytes());
            out.extend_from_slice(&ty.to_le_bytes());
            out.extend_from_slice(&count.to_le_bytes());
            out.extend_from_slice(&value);
        }
        out.extend_from_slice(&0_u32.to_le_bytes());
        out.extend_from_slice(&arrays);
        out
    }
}

fn true_scale() -> HeightmapSettings {
    HeightmapSettings {
        cells_per_pixel: 1.0,
        vertical_scale: 1.0,
        ..HeightmapSettings::default()
    }
}

#[test]
fn the_hand_written_tiff_reads_as_written() {
    let dir = scratch("valid");
    let path = dir.join("ok.tif");
    let samples: Vec<f32> = (0..12).map(|i| i as f32 * 1.5).collect();
    std::fs::write(&path, Tiff::float(4, 3, &samples).bytes()).unwrap();
    let read = read_elevation(&path, &true_scale(), MAX_SIDE_CELLS, &Progress::new()).unwrap();
    let got: Vec<f64> = read.map.samples.iter().collect();
    assert_eq!(
        got,
        samples.iter().map(|&s| f64::from(s)).collect::<Vec<_>>()
    );
}

#[test]
fn hostile_elevation_files_are_refused_quickly_and_in_bounded_memory() {
    let dir = scratch("hostile");
    let before = peak_rss_bytes();
    let ok: Vec<f32> = vec![100.0; 16];
    let mut cases: Vec<(&str, Vec<u8>, &str)> = Vec::new();
    // A 4 × 4 raster in one tile that claims 65 536 × 65 536 samples (16 GiB).
    let mut bomb = Tiff::float(4, 4, &ok);
    bomb.tiles = Some((65_536, 65_536));
    cases.push(("tile-bomb.tif", bomb.bytes(), "not a readable GeoTIFF"));
    // A million pixels a side, from the header.
    let mut huge = Tiff::float(4, 4, &ok);
    (huge.width, huge.height, huge.rows_per_strip) = (1_000_000, 1_000_000, 1_000_000);
    cases.push(("huge.tif", huge.bytes(), "exceeds the limits"));
    // One strip of 4096 × 4097 float samples: 64.02 MiB decoded, over the
    // 64 MiB a strip or tile may take (the decoder's own refusal said only
    // "decoder limits exceeded").
    let mut strip = Tiff::float(4, 4, &ok);
    (strip.width, strip.height, strip.rows_per_strip) = (4096, 4097, 4097);
    cases.push(("big-strip.tif", strip.bytes(), "over the 64 MiB limit"));
    // The file ends 44 bytes into its 64-byte strip.
    let mut short = Tiff::float(4, 4, &ok);
    short.cut_to = short.bytes().len() - 44;
    cases.push(("truncated.tif", short.bytes(), "not a readable GeoTIFF"));
    // The floating-point predictor on integers, and a predictor that does not exist.
    let mut ints = Tiff::float(4, 4, &ok);
    (ints.bits, ints.sample_format, ints.predictor) = (16, 2, 3);
    ints.chunks[0].truncate(32);
    cases.push(("int-pred3.tif", ints.bytes(), "not a readable GeoTIFF"));
    let mut odd = Tiff::float(4, 4, &ok);
    odd.predictor = 9;
    cases.push(("pred9.tif", odd.bytes(), "not a readable GeoTIFF"));
    // NaN and infinite elevations with no NoData value.
    let mut nan = ok.clone();
    nan[6] = f32::NAN;
    cases.push((
        "nan.tif",
        Tiff::float(4, 4, &nan).bytes(),
        "pixel (2, 1) is NaN",
    ));
    let mut inf = ok.clone();
    inf[13] = f32::NEG_INFINITY;
    cases.push((
        "inf.tif",
        Tiff::float(4, 4, &inf).bytes(),
        "pixel (1, 3) is -inf",
    ));
    // A RAW16 whose length fits no size.
    cases.push(("odd.r16", vec![0; 2 * 3 * 7], "not a square"));
    cases.push(("half.raw", vec![0; 9], "(odd)"));
    // An EXR whose header claims a billion columns, and one cut short.
    let exr = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/elevation/rgb_float32.exr"),
    )
    .unwrap();
    let key = b"dataWindow\0box2i\0";
    let at = exr.windows(key.len()).position(|w| w == key).unwrap() + key.len() + 4;
    let mut wide = exr.clone();
    wide[at + 8..at + 12].copy_from_slice(&1_000_000_000_i32.to_le_bytes());
    cases.push(("wide.exr", wide, "exceeds the limits"));
    cases.push((
        "cut.exr",
        exr[..exr.len() / 3].to_vec(),
        "not a readable EXR",
    ));

    for (name, bytes, needle) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let (result, took) = import_within_2s(&path, &true_scale());
        let err = result.expect_err(name);
        assert!(err.to_string().contains(needle), "{name}: {err}");
        // Size limits say the size; every other refusal names the file.
        if !matches!(err, ImportError::ImageTooLarge { .. }) {
            assert!(
                err.to_string().contains(name),
                "{name}: the error names the file: {err}"
            );
        }
        assert!(took < Duration::from_secs(2), "{name}: {took:?}");
    }
    // A size given for a RAW16 that does not match it.
    let path = dir.join("sized.r16");
    std::fs::write(&path, vec![0; 2 * 100]).unwrap();
    let settings = HeightmapSettings {
        raw: RawLayout {
            size_px: Some((10, 11)),
            big_endian: false,
        },
        ..true_scale()
    };
    let err = import_within_2s(&path, &settings).0.unwrap_err();
    assert!(
        err.to_string().contains("not the 10 × 11 = 110 given"),
        "{err}"
    );
    // None of the claims was allocated: 64 MiB over the start at most.
    let grown = peak_rss_bytes().saturating_sub(before);
    assert!(grown < 64 << 20, "peak memory grew by {} MiB", grown >> 20);
}
