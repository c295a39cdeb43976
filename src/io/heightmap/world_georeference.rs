//! Where a world's cells sit on the ground it was imported from: the
//! metres a cell spans, the elevation of each cell height, and for a
//! GeoTIFF import the model space (CRS keys, origin, units a cell spans).
//! An import records it in the world's metadata; the heightmap exports read
//! it to write elevations in metres and a GeoTIFF with the source's
//! georeference, so a DEM round-trips through a world with its scale.
//!
//! A world that was never imported (generated, recipe) uses
//! [`WorldGeoreference::studs`]: studs stand in for metres, as the PNG
//! export's sidecar has always done (a cell is 4 studs).

use serde::{Deserialize, Serialize};

use super::formats::geokeys::{GeoReference, UNIT_METRE};
use crate::terrain::generation::heightmap_terrain::ElevationScale;
use crate::terrain::storage::coords::CELL_SIZE_STUDS;

/// A world's placement on surveyed ground (see the module docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorldGeoreference {
    /// Metres a cell spans `[along x (east), along z (south)]`.
    pub metres_per_cell: [f64; 2],
    /// Elevation, metres, of height `y = 0` (cells).
    pub elevation_at_y0_m: f64,
    /// Metres per cell of height.
    pub vertical_metres_per_cell: f64,
    /// The GeoTIFF model space, for an import that had one (boxed: world
    /// metadata travels in save reports and stays small).
    pub model: Option<Box<ModelSpace>>,
}

/// A GeoTIFF model space as seen from the cell lattice.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelSpace {
    /// Model `(X, Y)` of the north-west corner of cell column `(0, 0)`.
    pub origin: [f64; 2],
    /// Model units a cell spans `[along X (east), along Y (north)]`.
    pub units_per_cell: [f64; 2],
    /// Metres in one elevation unit of the source (`VerticalUnitsGeoKey`):
    /// exports write elevations in that unit.
    pub vertical_unit_m: f64,
    /// The GeoKey directory, as read.
    pub key_directory: Vec<u16>,
    /// `GeoDoubleParamsTag`, as read.
    pub double_params: Vec<f64>,
    /// `GeoAsciiParamsTag`, as read.
    pub ascii_params: String,
}

impl WorldGeoreference {
    /// Studs as metres: 4 per cell across and up, height 0 at elevation 0;
    /// its GeoTIFF model space is [`WorldGeoreference::model_space`]'s
    /// default.
    pub fn studs() -> WorldGeoreference {
        let stud = f64::from(CELL_SIZE_STUDS);
        WorldGeoreference {
            metres_per_cell: [stud, stud],
            elevation_at_y0_m: 0.0,
            vertical_metres_per_cell: stud,
            model: Some(Box::new(ModelSpace {
                origin: [0.0, 0.0],
                units_per_cell: [stud, stud],
                vertical_unit_m: 1.0,
                // Version 1.1.0, 3 keys: projected, pixel is area, linear
                // unit metre.
                key_directory: vec![
                    1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3076, 0, 1, UNIT_METRE,
                ],
                double_params: Vec::new(),
                ascii_params: String::new(),
            })),
        }
    }

    /// The georeference of an import with `scale` (sample units taken as
    /// metres) from a file georeferenced by `geo`.
    pub fn from_import(scale: &ElevationScale, geo: Option<&GeoReference>) -> WorldGeoreference {
        let (ppc_x, ppc_z) = scale.pixels_per_cell;
        let metres_per_cell = scale.units_per_cell.map_or([ppc_x, ppc_z], |(x, z)| [x, z]);
        let model = geo.map(|g| {
            let [i, j, _, x, y, _] = g.tiepoint;
            let (sx, sy) = (g.pixel_scale[0], g.pixel_scale[1]);
            Box::new(ModelSpace {
                origin: [x - i * sx, y + j * sy],
                units_per_cell: [sx * ppc_x, sy * ppc_z],
                vertical_unit_m: g.vertical_unit_m,
                key_directory: g.key_directory.clone(),
                double_params: g.double_params.clone(),
                ascii_params: g.ascii_params.clone(),
            })
        });
        WorldGeoreference {
            metres_per_cell,
            elevation_at_y0_m: scale.sample_at_y0,
            vertical_metres_per_cell: scale.samples_per_cell,
            model,
        }
    }

    /// The model space a GeoTIFF export writes: the imported one, or for a
    /// world imported without one (PNG, EXR, RAW16 with a sidecar; a world
    /// never imported, in studs) a user-defined projected CRS in metres
    /// whose origin is the world origin and whose cells span the world's
    /// metres.
    pub fn model_space(&self) -> ModelSpace {
        match &self.model {
            Some(model) => (**model).clone(),
            None => ModelSpace {
                origin: [0.0, 0.0],
                units_per_cell: self.metres_per_cell,
                vertical_unit_m: 1.0,
                // Version 1.1.0, 3 keys: projected, pixel is area, linear
                // unit metre.
                key_directory: vec![
                    1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3076, 0, 1, UNIT_METRE,
                ],
                double_params: Vec::new(),
                ascii_params: String::new(),
            },
        }
    }

    /// The elevation, metres, of a surface `height_cells` high.
    pub fn elevation_m(&self, height_cells: f64) -> f64 {
        self.elevation_at_y0_m + height_cells * self.vertical_metres_per_cell
    }

    /// The georeference as the one-line JSON a world file stores.
    pub fn to_json(&self) -> String {
        // A plain struct of numbers, strings and vectors always serializes.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Parses what [`WorldGeoreference::to_json`] wrote; `Err` says what is
    /// wrong (a missing field, a scale that is not positive and finite).
    pub fn from_json(text: &str) -> Result<WorldGeoreference, String> {
        let g: WorldGeoreference = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let positive = |v: f64| v.is_finite() && v > 0.0;
        let scales_ok = g.metres_per_cell.iter().all(|&v| positive(v))
            && positive(g.vertical_metres_per_cell)
            && g.elevation_at_y0_m.is_finite()
            && g.model.as_ref().is_none_or(|m| {
                m.units_per_cell.iter().all(|&v| positive(v))
                    && m.origin.iter().all(|v| v.is_finite())
                    && positive(m.vertical_unit_m)
            });
        if scales_ok {
            Ok(g)
        } else {
            Err("a scale is not a positive finite number".to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::heightmap::formats::geokeys::{GeoTags, georeference};

    #[test]
    fn an_import_keeps_the_model_space_of_its_file() {
        let tags = GeoTags {
            pixel_scale: Some(vec![10.0, 10.0, 0.0]),
            tiepoint: Some(vec![2.0, 3.0, 0.0, 500_020.0, 3_699_970.0, 0.0]),
            key_directory: Some(vec![1, 1, 0, 1, 1024, 0, 1, 1]),
            ..GeoTags::default()
        };
        let geo = georeference(&tags).unwrap().unwrap();
        // Two cells a pixel: a cell spans 5 m.
        let scale = ElevationScale {
            pixels_per_cell: (0.5, 0.5),
            units_per_cell: Some((5.0, 5.0)),
            sample_at_y0: 100.0,
            samples_per_cell: 5.0,
        };
        let g = WorldGeoreference::from_import(&scale, Some(&geo));
        assert_eq!(g.metres_per_cell, [5.0, 5.0]);
        assert_eq!(g.elevation_m(4.0), 120.0);
        let m = g.model.as_ref().unwrap();
        // Pixel (0, 0)'s corner: 2 pixels west and 3 north of the tiepoint.
        assert_eq!(m.origin, [500_000.0, 3_700_000.0]);
        assert_eq!(m.units_per_cell, [5.0, 5.0]);
        assert_eq!(WorldGeoreference::from_json(&g.to_json()), Ok(g));
        let studs = WorldGeoreference::studs();
        assert_eq!(WorldGeoreference::from_json(&studs.to_json()), Ok(studs));
        let bad = r#"{"metres_per_cell":[0.0,1.0],"elevation_at_y0_m":0.0,"vertical_metres_per_cell":1.0,"model":null}"#;
        assert!(
            WorldGeoreference::from_json(bad)
                .unwrap_err()
                .contains("positive")
        );
        assert!(WorldGeoreference::from_json("{").is_err());
    }
}
