//! Replacing one material by another in what operations hold: when a
//! library material is removed, every operation that names it (a fill, a
//! stroke's brush, a path's band, a stamp's material override) and every
//! cell an operation carries (a paste's clipboard, a cell stamp) take the
//! replacement, so re-deriving the document never brings the removed id
//! back.

use std::sync::Arc;

use crate::terrain::document::operation::OperationKind;
use crate::terrain::storage::cell::Material;

/// `m`, or `to` when `m` is `from`.
fn swap(m: Material, from: Material, to: Material) -> Material {
    if m == from { to } else { m }
}

impl OperationKind {
    /// This operation with material `from` replaced by `to` wherever it
    /// names or carries it; `None` when it holds no `from` (so an unchanged
    /// operation keeps sharing its data).
    pub fn with_material_replaced(&self, from: Material, to: Material) -> Option<OperationKind> {
        match self {
            OperationKind::Fill {
                region,
                material,
                occupancy,
                ignore_water,
            } => (*material == from).then_some(OperationKind::Fill {
                region: *region,
                material: to,
                occupancy: *occupancy,
                ignore_water: *ignore_water,
            }),
            OperationKind::Paste {
                clipboard,
                at,
                quarter_turns,
            } => clipboard
                .with_material_replaced(from, to)
                .map(|c| OperationKind::Paste {
                    clipboard: Arc::new(c),
                    at: *at,
                    quarter_turns: *quarter_turns,
                }),
            OperationKind::Path(spec) => (spec.material == from).then(|| {
                let mut spec = spec.clone();
                spec.material = to;
                OperationKind::Path(spec)
            }),
            OperationKind::Stamp { stamp, placement } => {
                let new_stamp = stamp.with_material_replaced(from, to).map(Arc::new);
                let names = placement.material == Some(from);
                (new_stamp.is_some() || names).then(|| {
                    let mut placement = *placement;
                    placement.material = placement.material.map(|m| swap(m, from, to));
                    OperationKind::Stamp {
                        stamp: new_stamp.unwrap_or_else(|| stamp.clone()),
                        placement,
                    }
                })
            }
            OperationKind::Stroke(stroke) => {
                let (material, replace_from) = (stroke.brush.material, stroke.options.replace_from);
                (material == from || replace_from == from).then(|| {
                    let mut stroke = stroke.clone();
                    stroke.brush.material = swap(material, from, to);
                    stroke.options.replace_from = swap(replace_from, from, to);
                    OperationKind::Stroke(stroke)
                })
            }
            // These name no material (Generate's generator makes built-ins).
            OperationKind::Clear { .. }
            | OperationKind::Generate { .. }
            | OperationKind::SeaLevel { .. }
            | OperationKind::Evaporate { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use glam::{DVec2, DVec3, IVec3};

    use super::*;
    use crate::terrain::document::operation::RecordedStroke;
    use crate::terrain::editing::brush::{Brush, BrushMode, BrushOptions};
    use crate::terrain::editing::region::Clipboard;
    use crate::terrain::path::spec::PathSpec;
    use crate::terrain::stamp::definition::{Stamp, StampBase};
    use crate::terrain::storage::cell::Cell;
    use crate::terrain::storage::coords::CellBox;

    const MOSS: Material = Material(40);
    const SAND: Material = Material::SAND;

    #[test]
    fn every_material_an_operation_holds_is_replaced() {
        let fill = OperationKind::Fill {
            region: CellBox::new(IVec3::ZERO, IVec3::splat(3)),
            material: MOSS,
            occupancy: 200,
            ignore_water: false,
        };
        match fill.with_material_replaced(MOSS, SAND) {
            Some(OperationKind::Fill {
                material,
                occupancy,
                ..
            }) => assert_eq!((material, occupancy), (SAND, 200)),
            other => panic!("{other:?}"),
        }
        assert!(fill.with_material_replaced(Material::ROCK, SAND).is_none());

        let cells = vec![
            Cell::new(MOSS, 90),
            Cell::full(Material::ROCK),
            Cell::EMPTY,
            Cell::new(MOSS, 7),
        ];
        let clipboard = Clipboard::from_cells(IVec3::new(4, 1, 1), cells).unwrap();
        let paste = OperationKind::Paste {
            clipboard: Arc::new(clipboard.clone()),
            at: IVec3::ZERO,
            quarter_turns: 1,
        };
        let Some(OperationKind::Paste { clipboard: c, .. }) =
            paste.with_material_replaced(MOSS, SAND)
        else {
            panic!("paste not replaced");
        };
        assert_eq!(
            c.cells(),
            &[
                Cell::new(SAND, 90),
                Cell::full(Material::ROCK),
                Cell::EMPTY,
                Cell::new(SAND, 7)
            ]
        );

        let mut spec = PathSpec::road(vec![DVec2::ZERO, DVec2::new(40.0, 0.0)]);
        spec.material = MOSS;
        let Some(OperationKind::Path(p)) =
            OperationKind::Path(spec).with_material_replaced(MOSS, SAND)
        else {
            panic!("path not replaced");
        };
        assert_eq!(p.material, SAND);

        let stamp = Arc::new(Stamp::cells("rock", clipboard).unwrap());
        let mut placement = stamp.native_placement(DVec2::ZERO, StampBase::SurfaceUnderCentre);
        placement.material = Some(Material::ROCK);
        let Some(OperationKind::Stamp {
            stamp: s,
            placement: p,
        }) = (OperationKind::Stamp { stamp, placement }).with_material_replaced(MOSS, SAND)
        else {
            panic!("stamp cells not replaced");
        };
        assert_eq!(p.material, Some(Material::ROCK));
        let crate::terrain::stamp::definition::StampShape::Cells(cells) = s.shape() else {
            panic!("a cell stamp");
        };
        assert_eq!(cells.cells()[0], Cell::new(SAND, 90));

        let brush = Brush {
            mode: BrushMode::Replace,
            radius_cells: 4.0,
            strength: 1.0,
            material: Material::ROCK,
            ignore_water: false,
        };
        let options = BrushOptions {
            replace_from: MOSS,
            ..BrushOptions::default()
        };
        let stroke = OperationKind::Stroke(RecordedStroke {
            brush,
            options,
            centres_world: Arc::from(vec![DVec3::ZERO]),
            surface_offsets_studs: None,
        });
        let Some(OperationKind::Stroke(s)) = stroke.with_material_replaced(MOSS, SAND) else {
            panic!("stroke not replaced");
        };
        assert_eq!(
            (s.brush.material, s.options.replace_from),
            (Material::ROCK, SAND)
        );
    }
}
