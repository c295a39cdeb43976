//! Tests of hydraulic erosion: gullies and deposits, the same bits on
//! every instruction set, Cancel, and the lookup tables.
use super::*;

fn slope_plan() -> Plan {
    let mut plan = Plan::new(256);
    for j in 0..plan.side {
        for i in 0..plan.side {
            let k = plan.index(i, j);
            let bump =
                crate::terrain::generation::noise::fbm(3, i as f64 / 20.0, j as f64 / 20.0, 4);
            plan.height_cells[k] = (100.0 - i as f64 * 0.3 + bump * 3.0) as f32;
        }
    }
    plan
}

fn stage() -> HydraulicStage {
    HydraulicStage {
        droplets_per_sample: 0.5,
        max_steps: 64,
        capacity: 4.0,
        erosion: 0.3,
        deposition: 0.3,
        evaporation: 0.02,
        inertia: 0.1,
        hardness: Vec::new(),
    }
}

#[test]
fn droplets_cut_gullies_and_deposit_downslope() {
    let mut plan = slope_plan();
    let before = plan.clone();
    erode_hydraulic(
        &mut plan,
        &stage(),
        &RecipeMaterials::default(),
        11,
        RockAt::ByHeight(&|_| Material::ROCK),
        &Progress::new(),
    )
    .expect("not cancelled");
    let lowered = plan
        .height_cells
        .iter()
        .zip(&before.height_cells)
        .filter(|(a, b)| *a < *b)
        .count();
    assert!(lowered > plan.len() / 10, "only {lowered} samples eroded");
    assert!(plan.sediment_cells.iter().any(|&s| s > 0.05));
    assert!(plan.wetness.iter().all(|w| (0.0..1.0).contains(w)));
    // Deterministic: a second run gives the same bits.
    let mut again = before.clone();
    erode_hydraulic(
        &mut again,
        &stage(),
        &RecipeMaterials::default(),
        11,
        RockAt::ByHeight(&|_| Material::ROCK),
        &Progress::new(),
    )
    .expect("not cancelled");
    assert_eq!(again, plan);
}

/// A layer's bits (`==` on f32 would take -0 for +0).
fn layer_bits(layer: &[f32]) -> Vec<u32> {
    layer.iter().map(|h| h.to_bits()).collect()
}

/// The bits of the layers erosion changes.
fn bits(plan: &Plan) -> [Vec<u32>; 3] {
    [
        layer_bits(&plan.height_cells),
        layer_bits(&plan.sediment_cells),
        layer_bits(&plan.wetness),
    ]
}

#[test]
fn every_droplet_path_gives_the_same_bits() {
    let erode = |path| {
        let mut plan = slope_plan();
        let rock = |y: i32| {
            if y % 7 < 3 {
                Material::ROCK
            } else {
                Material::SLATE
            }
        };
        let mut stage = stage();
        stage.hardness = vec![crate::terrain::recipe::stages::MaterialHardness {
            material: "rock".into(),
            hardness: 0.5,
        }];
        let steps = erode_hydraulic_on(
            &mut plan,
            &stage,
            &RecipeMaterials::default(),
            5,
            RockAt::ByHeight(&rock),
            &Progress::new(),
            path,
        )
        .expect("not cancelled");
        (plan, steps)
    };
    let (best, best_steps) = erode(DropletPath::FASTEST);
    assert!(best_steps > 10_000, "{best_steps} steps");
    for isa in [Isa::Best, Isa::Baseline] {
        for lockstep in [false, true] {
            let (plan, steps) = erode(DropletPath { isa, lockstep });
            assert_eq!(steps, best_steps, "{isa:?}, lockstep {lockstep}");
            assert_eq!(bits(&plan), bits(&best), "{isa:?}, lockstep {lockstep}");
        }
    }
}

/// Four droplets stepped in lockstep and one after another, for as long as
/// they stay apart: the same droplets and the same ground, bit for bit.
#[test]
fn a_lockstep_round_gives_the_bits_of_the_lanes_one_after_another() {
    let plan = slope_plan();
    let stage = stage();
    let params = Params::new(&stage, plan.spacing_cells);
    let materials = RecipeMaterials::default();
    let rock = |y: i32| {
        if y % 5 < 2 {
            Material::ROCK
        } else {
            Material::SLATE
        }
    };
    let resist = Resist::new(&stage, &materials, RockAt::ByHeight(&rock), &plan);
    let brush = BrushTable::new();
    let run = |together: bool| {
        let mut region = Region::copy(&plan, 0, 0, plan.side, plan.side);
        let mut roller = Roller {
            region: &mut region,
            params: &params,
            resist: &resist,
            brush: &brush,
            path: DropletPath::FASTEST,
        };
        let mut lanes =
            [(40.3, 50.7), (46.9, 50.2), (60.5, 120.5), (200.1, 20.9)].map(|p| roller.launch(p));
        let (mut rounds, mut exchanged) = (0, 0.0f32);
        while rounds < 40
            && lanes.iter().all(|d| d.steps_left > 0)
            && lockstep::footprints_apart(&lanes)
        {
            if together {
                roller.step_lockstep(&mut lanes);
            } else {
                for d in &mut lanes {
                    roller.step(d);
                }
            }
            exchanged += lanes.iter().map(|d| d.sediment).sum::<f32>();
            rounds += 1;
        }
        (lanes, rounds, exchanged, region)
    };
    let (one_by_one, rounds, exchanged, ground) = run(false);
    let (lockstep, lockstep_rounds, _, lockstep_ground) = run(true);
    assert!(rounds >= 20, "{rounds} rounds");
    assert!(exchanged > 0.0, "the droplets carried no sediment");
    assert_eq!(lockstep_rounds, rounds);
    let lane_bits = |lanes: &[Droplet; LANES]| -> Vec<u32> {
        lanes
            .iter()
            .flat_map(|d| {
                [d.x, d.z, d.u, d.v, d.dx, d.dz, d.speed, d.water, d.sediment].map(f32::to_bits)
            })
            .collect()
    };
    assert_eq!(lockstep, one_by_one);
    assert_eq!(lane_bits(&lockstep), lane_bits(&one_by_one));
    assert_eq!(
        layer_bits(&lockstep_ground.height),
        layer_bits(&ground.height)
    );
    assert_eq!(
        layer_bits(&lockstep_ground.sediment),
        layer_bits(&ground.sediment)
    );
    assert_eq!(
        layer_bits(&lockstep_ground.visits),
        layer_bits(&ground.visits)
    );
}

#[test]
fn footprints_within_five_samples_on_both_axes_are_not_apart() {
    let at = |i: u32, j: u32| Droplet {
        i,
        j,
        steps_left: 1,
        ..Droplet::default()
    };
    let far = [at(100, 100), at(200, 100), at(100, 200)];
    let with = |d: Droplet| [far[0], far[1], far[2], d];
    assert!(lockstep::footprints_apart(&with(at(200, 200))));
    assert!(!lockstep::footprints_apart(&with(at(105, 95))));
    assert!(lockstep::footprints_apart(&with(at(106, 95))));
    assert!(lockstep::footprints_apart(&with(at(105, 94))));
    assert!(!lockstep::footprints_apart(&with(at(195, 105))));
}

#[test]
fn a_cancelled_stage_stops_within_a_tile_and_says_so() {
    // 1,024² samples: 64 tiles. Cancelled once the first tile is done,
    // the stage must stop before its last colour of tiles.
    let mut plan = Plan::new(1024);
    let progress = Progress::new();
    progress.begin_stage("test", hydraulic_tiles(plan.side));
    let rock = |_: i32| Material::ROCK;
    let tiles_done = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while progress.fraction().unwrap_or(0.0) == 0.0 {
                std::thread::yield_now();
            }
            progress.cancel();
        });
        let result = erode_hydraulic(
            &mut plan,
            &stage(),
            &RecipeMaterials::default(),
            1,
            RockAt::ByHeight(&rock),
            &progress,
        );
        assert_eq!(result, Err(Cancelled));
        let f = progress.fraction().unwrap_or(1.0);
        tiles_done.store(
            (f * 64.0).round() as u64,
            std::sync::atomic::Ordering::Relaxed,
        );
    });
    let done = tiles_done.into_inner();
    assert!(
        (1..16).contains(&done),
        "{done} of 64 tiles ran after the cancel"
    );
    // Cancelled before it starts: no tile runs.
    let cancelled = Progress::new();
    cancelled.cancel();
    let mut plan = slope_plan();
    let before = plan.clone();
    let result = erode_hydraulic(
        &mut plan,
        &stage(),
        &RecipeMaterials::default(),
        1,
        RockAt::ByHeight(&rock),
        &cancelled,
    );
    assert_eq!(result, Err(Cancelled));
    assert_eq!(plan.height_cells, before.height_cells);
}

#[test]
fn the_hardness_table_answers_as_the_rock_does_in_and_out_of_its_range() {
    let mut plan = slope_plan();
    plan.height_cells[0] = -3.5;
    plan.height_cells[1] = 140.25;
    let rock = |y: i32| match y.rem_euclid(5) {
        0 => Material::ROCK,
        1 => Material::SLATE,
        _ => Material::LIMESTONE,
    };
    let mut stage = stage();
    stage.hardness = vec![
        crate::terrain::recipe::stages::MaterialHardness {
            material: "rock".into(),
            hardness: 0.5,
        },
        crate::terrain::recipe::stages::MaterialHardness {
            material: "slate".into(),
            hardness: 0.25,
        },
    ];
    let resist = Resist::new(
        &stage,
        &RecipeMaterials::default(),
        RockAt::ByHeight(&rock),
        &plan,
    );
    for h in [
        -400.0f32, -4.0, -3.5, -0.25, 0.0, 0.75, 99.9, 140.25, 141.0, 900.0,
    ] {
        let expected = match rock(h.floor() as i32) {
            Material::ROCK => 0.5,
            Material::SLATE => 0.75,
            _ => 1.0,
        };
        assert_eq!(resist.at(0, h), expected, "height {h}");
    }
    let materials = vec![Material::SLATE; plan.len()];
    let by_sample = Resist::new(
        &stage,
        &RecipeMaterials::default(),
        RockAt::BySample(&materials),
        &plan,
    );
    assert_eq!(by_sample.at(17, 3.0), 0.75);
    assert_eq!(floor_i32(-0.5), -1);
    assert_eq!(floor_i32(-3e9), i32::MIN);
    assert_eq!(floor_i32(3e9), i32::MAX);
    assert_eq!(floor_i32(f32::NAN), 0);
    assert_eq!(floor_i32(-2.0), -2);
    assert_eq!(floor_i32(2.999), 2);
}

#[test]
fn every_brush_sums_to_one_and_falls_to_zero_at_its_radius() {
    let table = BrushTable::new();
    for (n, weights) in table.0.iter().enumerate() {
        let total: f32 = weights.iter().flatten().sum();
        assert!((total - 1.0).abs() < 1e-6, "brush {n}: {total}");
        let u = ((n % BRUSH_STEPS) as f32 + 0.5) / BRUSH_STEPS as f32;
        let v = ((n / BRUSH_STEPS) as f32 + 0.5) / BRUSH_STEPS as f32;
        for (l, row) in weights.iter().enumerate() {
            for (k, &w) in row.iter().enumerate() {
                let dist = ((k as f32 - 1.0 - u).powi(2) + (l as f32 - 1.0 - v).powi(2)).sqrt();
                assert_eq!(w > 0.0, dist < BRUSH_RADIUS, "brush {n} tap {k},{l}");
            }
        }
    }
    // The sub-square is found from the fractions.
    assert!(std::ptr::eq(table.at(0.99, 0.0), &table.0[BRUSH_STEPS - 1]));
    assert!(std::ptr::eq(
        table.at(0.0, 0.5),
        &table.0[BRUSH_STEPS * BRUSH_STEPS / 2]
    ));
}

/// Heights beyond the range of `i32` (no recipe makes them, but the API
/// takes any plan) erode without an overflow.
#[test]
fn heights_beyond_i32_erode_without_overflow() {
    for base in [3e9f32, -3e9, -2_147_483_000.0] {
        let mut plan = slope_plan();
        for (k, h) in plan.height_cells.iter_mut().enumerate() {
            *h = base - k as f32 * 1000.0;
        }
        let rock = |_: i32| Material::ROCK;
        let steps = erode_hydraulic(
            &mut plan,
            &stage(),
            &RecipeMaterials::default(),
            3,
            RockAt::ByHeight(&rock),
            &Progress::new(),
        );
        assert!(steps.is_ok(), "base {base}");
    }
}
