//! Streaming (spec §12): generating one chunk column of the 1,048,576-cell
//! world on demand, opening a file of 2000 edited columns (which reads no
//! column), and loading one edited column from it.
//!
//! Run: `cargo bench --bench streaming`. Prints the file size and the p50
//! and p95 of one `load_edited` over every stored column first.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use strata::io::world::streaming_file::StreamingWorldFile;
use strata::terrain::generation::generate::{ColumnGenerator, GeneratorSettings};
use strata::terrain::streaming::column_source::{ColumnChunks, EditStore};
use strata::terrain::{Cell, ChunkCells, ColumnCoord, Material};

/// Stored columns: a 50 × 40 patch of a 2048-cell world.
const COLUMNS: i32 = 2000;

fn streaming_file(c: &mut Criterion) {
    let settings = GeneratorSettings {
        seed: 11,
        size_cells: 2048,
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench_streaming");
    std::fs::create_dir_all(&dir).expect("bench dir");
    let path = dir.join("streaming.strata");
    let file = StreamingWorldFile::create(&path, &settings).expect("create");
    // Real generated columns with a few cells changed in every dense
    // (surface) chunk; uniform chunks (rock below, air above) stay uniform.
    let generator = ColumnGenerator::new(&settings);
    let columns: Vec<ColumnCoord> = (0..COLUMNS)
        .map(|i| ColumnCoord::new(i % 50, i / 50))
        .collect();
    let edited: Vec<(ColumnCoord, ColumnChunks)> = columns
        .iter()
        .map(|&column| {
            let mut chunks = generator.column_chunks(column);
            for (_, cells) in &mut chunks {
                if !matches!(cells, ChunkCells::Dense(_)) {
                    continue;
                }
                let dense = cells.make_dense_mut();
                for k in 0..8 {
                    dense[k * 4099] = Cell::new(Material::SNOW, 200);
                }
            }
            (column, chunks)
        })
        .collect();
    let report = file.save(&edited, None).expect("save");
    drop(edited);
    drop(file);
    println!(
        "{COLUMNS} edited columns: {} bytes, saved in {:.0} ms",
        report.file_bytes, report.elapsed_ms
    );

    let file = StreamingWorldFile::open(&path).expect("open");
    let mut times: Vec<Duration> = columns
        .iter()
        .map(|&column| {
            let start = Instant::now();
            let chunks = file.load_edited(column).expect("load");
            let t = start.elapsed();
            assert!(chunks.is_some());
            t
        })
        .collect();
    times.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "load_edited over {COLUMNS} columns: p50 {:.3} ms, p95 {:.3} ms, max {:.3} ms",
        ms(times[times.len() / 2]),
        ms(times[times.len() * 95 / 100]),
        ms(times[times.len() - 1])
    );

    let mut group = c.benchmark_group("streaming_file_open");
    group.bench_function("open_2000_columns", |b| {
        b.iter(|| StreamingWorldFile::open(&path).expect("open"))
    });
    group.finish();

    let mut group = c.benchmark_group("column_load_from_file");
    let mut next = 0usize;
    group.bench_function("load_edited_one_column", |b| {
        b.iter(|| {
            next = (next + 7) % columns.len();
            file.load_edited(columns[next]).expect("load")
        })
    });
    group.finish();
}

/// One column generated on demand, far out in the largest world: p50 and
/// p99 over 2000 columns first, then criterion's estimate.
fn column_generation(c: &mut Criterion) {
    let generator = ColumnGenerator::new(&GeneratorSettings {
        seed: 7,
        size_cells: 1 << 20,
    });
    let base = 16_384;
    let mut times: Vec<Duration> = (0..COLUMNS)
        .map(|i| {
            let column = ColumnCoord::new(base + i % 50, base + i / 50);
            let start = Instant::now();
            let chunks = generator.column_chunks(column);
            let t = start.elapsed();
            assert!(!chunks.is_empty());
            t
        })
        .collect();
    times.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "column generation over {COLUMNS} columns: p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        ms(times[times.len() / 2]),
        ms(times[times.len() * 99 / 100]),
        ms(times[times.len() - 1])
    );
    let mut group = c.benchmark_group("column_generation");
    let mut next = 0i32;
    group.bench_function("generate_one_column_1m_world", |b| {
        b.iter(|| {
            next = (next + 7) % COLUMNS;
            generator.column_chunks(ColumnCoord::new(base + next % 50, base + next / 50))
        })
    });
    group.finish();
}

criterion_group!(benches, column_generation, streaming_file);
criterion_main!(benches);
