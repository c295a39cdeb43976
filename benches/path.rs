//! Cost of the path tool on the default world (1024 cells,
//! seed 7): applying a 1 km road (1000 studs, 250 cells; target ≤ 200 ms),
//! a 1 km river, and a route search between two points 600 studs apart
//! with the road it lays. Each iteration applies to a fresh clone of the
//! same grid (clones share chunk storage, so the first write per chunk pays
//! its copy, as in the editor) and commits the step to a history.
//!
//! Run: `cargo bench --bench path`.

use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use glam::DVec2;
use strata::terrain::command::edit_command::{CommandOutcome, EditCommand, EditSession};
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};
use strata::terrain::path::route::find_route;
use strata::terrain::path::spec::PathSpec;

fn studs(x_cells: f64, z_cells: f64) -> DVec2 {
    DVec2::new(x_cells, z_cells) * 4.0
}

fn path(c: &mut Criterion) {
    let settings = GeneratorSettings::default();
    let grid = generate_world(&settings).expect("valid settings");
    let road = PathSpec::road(vec![
        studs(300.0, 512.0),
        studs(425.0, 520.0),
        studs(550.0, 512.0),
    ]);
    let river = PathSpec::river(road.points_xz_studs.clone());
    let route = PathSpec {
        max_grade_deg: 15.0,
        ..PathSpec::route(studs(300.0, 512.0), studs(450.0, 512.0))
    };
    let apply = |spec: &PathSpec| {
        let mut g = grid.clone();
        let mut session = EditSession::new(1 << 30, None);
        match session.apply(&mut g, &EditCommand::Path(spec.clone())) {
            Ok(CommandOutcome::PathApplied { report, .. }) => report,
            other => panic!("{other:?}"),
        }
    };
    for spec in [&road, &river, &route] {
        println!("{}: {:?}", spec.label(), apply(spec));
    }
    let mut group = c.benchmark_group("path");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(3));
    for (name, spec) in [
        ("road_1km", &road),
        ("river_1km", &river),
        ("route_600_studs", &route),
    ] {
        group.bench_function(name, |b| {
            b.iter_batched(
                || (grid.clone(), EditSession::new(1 << 30, None)),
                |(mut g, mut session)| {
                    let out = session.apply(&mut g, &EditCommand::Path(spec.clone()));
                    (out.expect("applies"), g)
                },
                BatchSize::LargeInput,
            )
        });
    }
    let ends = route.points_xz_cells();
    group.bench_function("route_search_600_studs", |b| {
        b.iter(|| find_route(&grid, ends[0], ends[1], route.max_grade_deg).expect("a route"))
    });
    group.finish();
}

criterion_group!(benches, path);
criterion_main!(benches);
