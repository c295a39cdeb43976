//! The document's invariants: every incremental re-derivation gives the
//! cells a whole derivation of the same document gives.

use std::sync::Arc;

use glam::{DVec2, DVec3, IVec3};

use super::base::BaseColumns;
use super::derive::{derive_whole, rederive};
use super::layers::{LayerId, LayerStack};
use super::operation::{OperationId, OperationKind, RecordedStroke};
use crate::terrain::editing::brush::{Brush, BrushMode, BrushOptions};
use crate::terrain::editing::recorder::Recorder;
use crate::terrain::generation::generate::{
    GeneratorSettings, generate_world, surface_height_cells,
};
use crate::terrain::generation::noise::mix64;
use crate::terrain::path::spec::PathSpec;
use crate::terrain::stamp::definition::{Stamp, StampBase, StampMode, StampPlacement};
use crate::terrain::storage::cell::Material;
use crate::terrain::storage::coords::CellBox;
use crate::terrain::storage::grid::Grid;

const SIZE_CELLS: u32 = 256;

fn settings() -> GeneratorSettings {
    GeneratorSettings {
        seed: 11,
        size_cells: SIZE_CELLS,
    }
}

/// A base world, the live cells derived from it and the stack.
struct Doc {
    base: BaseColumns,
    live: Grid,
    stack: LayerStack,
}

impl Doc {
    fn new() -> Doc {
        // The live cells are the generator's whole world; the base makes
        // its columns on demand: the two must agree.
        Doc {
            live: generate_world(&settings()).unwrap(),
            base: BaseColumns::generated(&settings()),
            stack: LayerStack::new(),
        }
    }

    /// Runs one document action and re-derives its closure.
    fn act<T>(&mut self, f: impl FnOnce(&mut LayerStack) -> T) -> T {
        let old = self.stack.clone();
        let out = f(&mut self.stack);
        let mut rec = Recorder::new("t");
        rederive(&mut self.live, &mut rec, &self.base, &old, &self.stack).unwrap();
        out
    }

    fn hash(&self) -> u64 {
        self.live.content_hash()
    }

    fn whole_hash(&self) -> u64 {
        derive_whole(&self.base, &self.stack).0.content_hash()
    }
}

fn mesa() -> Arc<Stamp> {
    let side = 16u32;
    let samples: Vec<f32> = (0..side * side)
        .map(|i| {
            let (x, z) = ((i % side) as f32 - 7.5, (i / side) as f32 - 7.5);
            (1.0 - (x * x + z * z) / 64.0).clamp(0.0, 1.0)
        })
        .collect();
    Arc::new(Stamp::height("mesa", side, side, samples).unwrap())
}

fn stamp(stamp: &Arc<Stamp>, x: f64, z: f64, radius: f64) -> OperationKind {
    OperationKind::Stamp {
        stamp: stamp.clone(),
        placement: StampPlacement {
            centre_xz_cells: DVec2::new(x, z),
            base: StampBase::SurfaceUnderCentre,
            rotation_deg: 0.0,
            radius_cells: radius,
            height_scale_cells: 10.0,
            falloff_fraction: 0.3,
            mode: StampMode::Add,
            material: None,
        },
    }
}

/// A stroke of `mode` through `centres` (cells x, z), dropped on the
/// generator's surface.
fn stroke(mode: BrushMode, centres: &[(f64, f64)]) -> OperationKind {
    let s = settings();
    let centres_world: Vec<DVec3> = centres
        .iter()
        .map(|&(x, z)| {
            let h = surface_height_cells(&s, x as i32, z as i32).unwrap_or(20.0);
            DVec3::new(x, h, z) * 4.0
        })
        .collect();
    OperationKind::Stroke(RecordedStroke {
        brush: Brush {
            mode,
            radius_cells: 4.0,
            strength: 0.6,
            material: Material::SAND,
            ignore_water: false,
        },
        options: BrushOptions::default(),
        surface_offsets_studs: (mode != BrushMode::Subtract)
            .then(|| vec![Some(2.0); centres_world.len()].into()),
        centres_world: centres_world.into(),
    })
}

fn road(points_cells: &[(f64, f64)]) -> OperationKind {
    OperationKind::Path(PathSpec::road(
        points_cells
            .iter()
            .map(|&(x, z)| DVec2::new(x, z) * 4.0)
            .collect(),
    ))
}

fn fill(x: i32, z: i32) -> OperationKind {
    OperationKind::Fill {
        region: CellBox::new(IVec3::new(x, 30, z), IVec3::new(x + 6, 40, z + 6)),
        material: Material::SNOW,
        occupancy: 255,
        ignore_water: false,
    }
}

/// Roads and stamps on one layer, sculpting on another.
fn two_layers(doc: &mut Doc) -> (LayerId, LayerId, OperationId) {
    let m = mesa();
    let ground = doc.act(|s| s.add_layer("Ground").unwrap());
    let moved = doc.act(|s| s.add_operation(stamp(&m, 60.0, 60.0, 20.0)).unwrap());
    doc.act(|s| s.add_operation(stamp(&m, 180.0, 90.0, 24.0)).unwrap());
    doc.act(|s| {
        s.add_operation(road(&[(20.0, 40.0), (120.0, 70.0), (230.0, 60.0)]))
            .unwrap()
    });
    let sculpt = doc.act(|s| s.add_layer("Sculpt").unwrap());
    doc.act(|s| {
        s.add_operation(stroke(
            BrushMode::Add,
            &[(70.0, 60.0), (80.0, 64.0), (90.0, 66.0)],
        ))
        .unwrap()
    });
    doc.act(|s| {
        s.add_operation(stroke(BrushMode::Smooth, &[(110.0, 68.0), (118.0, 70.0)]))
            .unwrap()
    });
    doc.act(|s| s.add_operation(fill(150, 150)).unwrap());
    (ground, sculpt, moved)
}

#[test]
fn hiding_then_showing_a_layer_gives_the_same_hash() {
    let mut doc = Doc::new();
    let (_, sculpt, _) = two_layers(&mut doc);
    let shown = doc.hash();
    assert_eq!(shown, doc.whole_hash());
    doc.act(|s| s.set_visible(sculpt, false).unwrap());
    let hidden = doc.hash();
    assert_ne!(hidden, shown);
    assert_eq!(hidden, doc.whole_hash());
    doc.act(|s| s.set_visible(sculpt, true).unwrap());
    assert_eq!(doc.hash(), shown);
}

#[test]
fn moving_a_stamp_away_and_back_gives_the_same_hash() {
    let mut doc = Doc::new();
    let (_, _, mesa_id) = two_layers(&mut doc);
    let before = doc.hash();
    let m = mesa();
    doc.act(|s| {
        s.edit_operation(mesa_id, stamp(&m, 60.0, 200.0, 20.0))
            .unwrap()
    });
    assert_ne!(doc.hash(), before);
    assert_eq!(doc.hash(), doc.whole_hash());
    doc.act(|s| {
        s.edit_operation(mesa_id, stamp(&m, 60.0, 60.0, 20.0))
            .unwrap()
    });
    assert_eq!(doc.hash(), before);
}

#[test]
fn deleting_a_middle_layer_equals_a_document_built_without_it() {
    let m = mesa();
    let mut doc = Doc::new();
    doc.act(|s| s.add_layer("A").unwrap());
    doc.act(|s| s.add_operation(stamp(&m, 100.0, 100.0, 30.0)).unwrap());
    let middle = doc.act(|s| s.add_layer("B").unwrap());
    doc.act(|s| {
        s.add_operation(stroke(
            BrushMode::Subtract,
            &[(100.0, 100.0), (110.0, 104.0)],
        ))
        .unwrap()
    });
    doc.act(|s| s.add_operation(fill(96, 96)).unwrap());
    doc.act(|s| s.add_layer("C").unwrap());
    doc.act(|s| {
        s.add_operation(stroke(BrushMode::Smooth, &[(104.0, 100.0), (120.0, 100.0)]))
            .unwrap()
    });
    doc.act(|s| s.remove_layer(middle).unwrap());

    let mut without = Doc::new();
    without.act(|s| s.add_layer("A").unwrap());
    without.act(|s| s.add_operation(stamp(&m, 100.0, 100.0, 30.0)).unwrap());
    without.act(|s| s.add_layer("C").unwrap());
    without.act(|s| {
        s.add_operation(stroke(BrushMode::Smooth, &[(104.0, 100.0), (120.0, 100.0)]))
            .unwrap()
    });
    assert_eq!(doc.hash(), without.hash());
}

/// A tiny deterministic random source.
struct Dice(u64);

impl Dice {
    fn next(&mut self, n: usize) -> usize {
        self.0 = mix64(self.0.wrapping_add(0x9e37_79b9_7f4a_7c15));
        (self.0 % n as u64) as usize
    }

    fn cell(&mut self) -> f64 {
        16.0 + self.next(224) as f64
    }
}

fn random_operation(dice: &mut Dice, m: &Arc<Stamp>) -> OperationKind {
    let (x, z) = (dice.cell(), dice.cell());
    match dice.next(5) {
        0 => stamp(m, x, z, 8.0 + dice.next(16) as f64),
        1 => stroke(BrushMode::Add, &[(x, z), (x + 6.0, z + 3.0)]),
        2 => stroke(BrushMode::Smooth, &[(x, z), (x - 5.0, z + 4.0)]),
        3 => fill(x as i32, z as i32),
        _ => stroke(BrushMode::Subtract, &[(x, z)]),
    }
}

/// One random document action: mostly new and edited operations, with
/// deletes, toggles, reorders, merges and duplicates among them.
fn random_action(s: &mut LayerStack, dice: &mut Dice, m: &Arc<Stamp>) {
    let ops: Vec<OperationId> = s
        .layers()
        .iter()
        .flat_map(|l| l.operations.iter().map(|o| o.id))
        .collect();
    let layers: Vec<LayerId> = s.layers().iter().map(|l| l.id).collect();
    let pick_layer = |dice: &mut Dice| layers[dice.next(layers.len())];
    match dice.next(10) {
        0 if layers.len() < 5 => {
            // Names are unique in a stack; the dice make one.
            let n = dice.next(1 << 20);
            s.add_layer(&format!("L{n}")).unwrap();
        }
        1 | 2 if !ops.is_empty() => {
            let id = ops[dice.next(ops.len())];
            let kind = random_operation(dice, m);
            // A kind change is refused and leaves the document as it was.
            let _ = s.edit_operation(id, kind);
        }
        3 if !ops.is_empty() => s.delete_operation(ops[dice.next(ops.len())]).unwrap(),
        4 if !layers.is_empty() => {
            let id = pick_layer(dice);
            let visible = s.layer(id).unwrap().visible;
            s.set_visible(id, !visible).unwrap();
        }
        5 if layers.len() > 1 => {
            let id = pick_layer(dice);
            let to = dice.next(layers.len());
            s.move_layer(id, to).unwrap();
        }
        6 if layers.len() > 1 && dice.next(3) == 0 => {
            let _ = s.merge_down(pick_layer(dice));
        }
        7 if !layers.is_empty() && layers.len() < 5 && dice.next(3) == 0 => {
            s.duplicate_layer(pick_layer(dice)).unwrap();
        }
        8 if !layers.is_empty() => s.select_layer(pick_layer(dice)).unwrap(),
        _ => {
            s.add_operation(random_operation(dice, m)).unwrap();
        }
    }
}

#[test]
fn two_hundred_random_edits_equal_a_whole_derivation() {
    let m = mesa();
    let mut doc = Doc::new();
    let mut dice = Dice(42);
    for step in 0..200 {
        doc.act(|s| random_action(s, &mut dice, &m));
        if step % 50 == 49 {
            assert_eq!(doc.hash(), doc.whole_hash(), "after {} edits", step + 1);
        }
    }
    assert!(doc.stack.operation_count() > 20);
    assert_eq!(doc.hash(), doc.whole_hash());
}

#[test]
fn derivation_is_the_same_on_one_thread_and_many() {
    let mut doc = Doc::new();
    two_layers(&mut doc);
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| doc.whole_hash());
    let many = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap()
        .install(|| doc.whole_hash());
    assert_eq!(one, many);
    assert_eq!(one, doc.hash());
}

#[test]
fn a_far_edit_re_derives_only_its_closure() {
    let m = mesa();
    let mut doc = Doc::new();
    doc.act(|s| s.add_layer("A").unwrap());
    for i in 0..6 {
        doc.act(|s| {
            s.add_operation(stroke(BrushMode::Add, &[(20.0 + 5.0 * i as f64, 20.0)]))
                .unwrap()
        });
    }
    let far = doc.act(|s| s.add_operation(stamp(&m, 200.0, 200.0, 10.0)).unwrap());
    let old = doc.stack.clone();
    doc.stack
        .edit_operation(far, stamp(&m, 210.0, 200.0, 10.0))
        .unwrap();
    let mut rec = Recorder::new("t");
    let report = rederive(&mut doc.live, &mut rec, &doc.base, &old, &doc.stack).unwrap();
    // The stamp alone: none of the six strokes 180 cells away is applied.
    assert_eq!(report.applied_operations, 1);
    // Radius 10 around x 200..210, z 200: columns 5..=7 by 5..=6 at most.
    assert!(report.dirty_columns <= 6, "{}", report.dirty_columns);
    assert_eq!(doc.hash(), doc.whole_hash());
}

#[test]
fn sameness_compares_shared_data_by_pointer_and_the_rest_by_value() {
    let m = mesa();
    let a = stamp(&m, 10.0, 10.0, 8.0);
    // The same image in another allocation is still the same stamp.
    let copy = Arc::new((*m).clone());
    assert!(a.is_same_as(&stamp(&m, 10.0, 10.0, 8.0)));
    assert!(a.is_same_as(&stamp(&copy, 10.0, 10.0, 8.0)));
    assert!(!a.is_same_as(&stamp(&m, 11.0, 10.0, 8.0)));
    let s = stroke(BrushMode::Add, &[(20.0, 20.0), (24.0, 20.0)]);
    assert!(s.is_same_as(&s.clone()));
    assert!(s.is_same_as(&stroke(BrushMode::Add, &[(20.0, 20.0), (24.0, 20.0)])));
    assert!(!s.is_same_as(&stroke(BrushMode::Add, &[(20.0, 20.0), (25.0, 20.0)])));
    assert!(!s.is_same_as(&stroke(BrushMode::Subtract, &[(20.0, 20.0), (24.0, 20.0)])));
    assert!(!s.is_same_as(&a));
}
