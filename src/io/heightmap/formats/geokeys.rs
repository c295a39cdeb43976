//! GeoTIFF georeferencing: the pixel scale, the tiepoint and the GeoKey
//! directory of a GeoTIFF, read into a [`GeoReference`] that says how many
//! metres a pixel spans and in which units its elevations are.
//!
//! Source: the OGC GeoTIFF standard 1.1 (OGC 19-008r4): `ModelPixelScaleTag`
//! (33550) holds `(ScaleX, ScaleY, ScaleZ)`, `ModelTiepointTag` (33922)
//! `(I, J, K, X, Y, Z)` tying raster point `(I, J)` to model point `(X, Y)`,
//! and `GeoKeyDirectoryTag` (34735) a header of four shorts then one
//! `(KeyID, TIFFTagLocation, Count, Value)` entry of four shorts a key,
//! whose values are inline (`TIFFTagLocation` 0), in `GeoDoubleParamsTag`
//! (34736) or in `GeoAsciiParamsTag` (34737).
//!
//! Geographic rasters (degrees) are converted to metres at the raster's
//! centre latitude with the WGS 84 series for the length of a degree
//! (`111 132.92 − 559.82 cos 2φ + 1.175 cos 4φ − 0.0023 cos 6φ` metres of
//! latitude, `111 412.84 cos φ − 93.5 cos 3φ + 0.118 cos 5φ` of longitude),
//! good to a centimetre a degree. A projected raster's linear unit is its
//! `ProjLinearUnitsGeoKey` (metre, international or US survey foot); a
//! projected CRS given only by its EPSG code is taken to be in metres, as
//! almost all are, and the summary says so.

/// `GTModelTypeGeoKey`.
const KEY_MODEL_TYPE: u16 = 1024;
/// `GeographicTypeGeoKey`.
const KEY_GEOGRAPHIC_TYPE: u16 = 2048;
/// `GeogAngularUnitsGeoKey`.
const KEY_ANGULAR_UNITS: u16 = 2054;
/// `ProjectedCSTypeGeoKey`.
const KEY_PROJECTED_TYPE: u16 = 3072;
/// `ProjLinearUnitsGeoKey`.
const KEY_LINEAR_UNITS: u16 = 3076;
/// `VerticalUnitsGeoKey`.
const KEY_VERTICAL_UNITS: u16 = 4099;

/// EPSG unit code of the metre.
pub const UNIT_METRE: u16 = 9001;
/// EPSG unit code of the international foot.
const UNIT_FOOT: u16 = 9002;
/// EPSG unit code of the US survey foot.
const UNIT_US_SURVEY_FOOT: u16 = 9003;
/// EPSG unit code of the radian.
const UNIT_RADIAN: u16 = 9101;
/// EPSG unit code of the degree.
const UNIT_DEGREE: u16 = 9102;

/// Which kind of model space the raster is tied to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelKind {
    /// A projected CRS (easting/northing in a linear unit).
    Projected,
    /// A geographic CRS (longitude/latitude in an angular unit).
    Geographic,
}

/// What a GeoTIFF's georeferencing tags say, as read.
#[derive(Clone, Debug, PartialEq)]
pub struct GeoReference {
    /// `ModelPixelScaleTag`: model units a pixel spans along x (east) and y
    /// (north), and the z scale (usually 0 or 1).
    pub pixel_scale: [f64; 3],
    /// `ModelTiepointTag`: raster point `(I, J, K)` and the model point
    /// `(X, Y, Z)` it sits at.
    pub tiepoint: [f64; 6],
    /// Projected or geographic.
    pub model: ModelKind,
    /// The projected or geographic CRS's EPSG code, when the file names one
    /// (32767 means user-defined).
    pub epsg: Option<u16>,
    /// Metres in one model unit along x and y (projected rasters); for a
    /// geographic raster, radians' or degrees' conversion is in
    /// [`GeoReference::pixel_size_m`].
    pub linear_unit_m: f64,
    /// Metres in one elevation unit (`VerticalUnitsGeoKey`; metres when the
    /// key is absent).
    pub vertical_unit_m: f64,
    /// True when the linear unit was assumed (metres) for a CRS known only
    /// by its code.
    pub unit_assumed: bool,
    /// The GeoKey directory as stored (shorts), kept so an export writes
    /// the same georeference back.
    pub key_directory: Vec<u16>,
    /// `GeoDoubleParamsTag` as stored.
    pub double_params: Vec<f64>,
    /// `GeoAsciiParamsTag` as stored.
    pub ascii_params: String,
}

/// The raw georeferencing tags of a TIFF (any may be missing).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GeoTags {
    /// `ModelPixelScaleTag`.
    pub pixel_scale: Option<Vec<f64>>,
    /// `ModelTiepointTag`.
    pub tiepoint: Option<Vec<f64>>,
    /// `ModelTransformationTag` (16 values, a row-major 4 × 4 matrix), used
    /// when there is no pixel scale.
    pub transformation: Option<Vec<f64>>,
    /// `GeoKeyDirectoryTag`.
    pub key_directory: Option<Vec<u16>>,
    /// `GeoDoubleParamsTag`.
    pub double_params: Option<Vec<f64>>,
    /// `GeoAsciiParamsTag`.
    pub ascii_params: Option<String>,
}

/// One GeoKey's value.
#[derive(Clone, Debug, PartialEq)]
enum KeyValue {
    Short(u16),
    Doubles(Vec<f64>),
    Ascii(String),
}

/// Parses the key directory into `(key, value)` pairs.
fn parse_keys(tags: &GeoTags, directory: &[u16]) -> Result<Vec<(u16, KeyValue)>, String> {
    if directory.len() < 4 {
        return Err(format!(
            "GeoKey directory has {} shorts, fewer than its 4-short header",
            directory.len()
        ));
    }
    let count = usize::from(directory[3]);
    let entries = directory
        .get(4..4 + count * 4)
        .ok_or_else(|| format!("GeoKey directory declares {count} keys but holds fewer"))?;
    let doubles = tags.double_params.as_deref().unwrap_or(&[]);
    let ascii = tags.ascii_params.as_deref().unwrap_or("");
    entries
        .chunks_exact(4)
        .map(|e| {
            let (key, location, n, value) = (e[0], e[1], usize::from(e[2]), usize::from(e[3]));
            let out_of_range = || format!("GeoKey {key} points past its parameter tag");
            let v = match location {
                0 => KeyValue::Short(e[3]),
                34736 => KeyValue::Doubles(
                    doubles
                        .get(value..value + n)
                        .ok_or_else(out_of_range)?
                        .to_vec(),
                ),
                34737 => KeyValue::Ascii(
                    ascii
                        .get(value..value + n)
                        .ok_or_else(out_of_range)?
                        .to_string(),
                ),
                other => return Err(format!("GeoKey {key} is stored in unknown tag {other}")),
            };
            Ok((key, v))
        })
        .collect()
}

/// The metres in one EPSG linear unit `code`.
fn linear_unit_metres(code: u16) -> Result<f64, String> {
    match code {
        UNIT_METRE => Ok(1.0),
        UNIT_FOOT => Ok(0.3048),
        UNIT_US_SURVEY_FOOT => Ok(1200.0 / 3937.0),
        other => Err(format!(
            "linear unit EPSG:{other} is not supported (metre, foot and US survey foot are)"
        )),
    }
}

/// Reads the georeference from `tags`: `Ok(None)` when the file has no
/// pixel scale (a plain TIFF), `Err` with what is wrong when the tags are
/// present but unusable (a rotated raster, a zero scale, an unknown unit).
pub fn georeference(tags: &GeoTags) -> Result<Option<GeoReference>, String> {
    if tags.pixel_scale.is_none()
        && let Some(matrix) = &tags.transformation
    {
        let (scale, tiepoint) = scale_of_transformation(matrix)?;
        let tags = GeoTags {
            pixel_scale: Some(scale.to_vec()),
            tiepoint: Some(tiepoint.to_vec()),
            transformation: None,
            ..tags.clone()
        };
        return georeference(&tags);
    }
    let Some(scale) = &tags.pixel_scale else {
        return Ok(None);
    };
    let pixel_scale: [f64; 3] = match scale.as_slice() {
        [x, y] => [*x, *y, 0.0],
        [x, y, z, ..] => [*x, *y, *z],
        _ => return Err(format!("ModelPixelScale has {} values, not 3", scale.len())),
    };
    if !(pixel_scale[0].is_finite()
        && pixel_scale[0] > 0.0
        && pixel_scale[1].is_finite()
        && pixel_scale[1] > 0.0)
    {
        return Err(format!(
            "ModelPixelScale ({}, {}) must be positive and finite",
            pixel_scale[0], pixel_scale[1]
        ));
    }
    let tiepoint: [f64; 6] = match tags.tiepoint.as_deref() {
        Some([i, j, k, x, y, z, ..]) => [*i, *j, *k, *x, *y, *z],
        Some(other) => return Err(format!("ModelTiepoint has {} values, not 6", other.len())),
        None => [0.0; 6],
    };
    let directory = tags.key_directory.clone().unwrap_or_default();
    let keys = if directory.is_empty() {
        Vec::new()
    } else {
        parse_keys(tags, &directory)?
    };
    let short = |key: u16| {
        keys.iter().find_map(|(k, v)| match v {
            KeyValue::Short(s) if *k == key => Some(*s),
            _ => None,
        })
    };
    let model = match short(KEY_MODEL_TYPE) {
        Some(2) => ModelKind::Geographic,
        Some(1) | None => ModelKind::Projected,
        Some(other) => {
            return Err(format!(
                "model type {other} is not supported (projected and geographic are)"
            ));
        }
    };
    let (epsg, linear_unit_m, unit_assumed) = match model {
        ModelKind::Geographic => {
            let unit = short(KEY_ANGULAR_UNITS).unwrap_or(UNIT_DEGREE);
            if unit != UNIT_DEGREE && unit != UNIT_RADIAN {
                return Err(format!("angular unit EPSG:{unit} is not supported"));
            }
            let per_unit = if unit == UNIT_RADIAN {
                1.0_f64.to_degrees()
            } else {
                1.0
            };
            (short(KEY_GEOGRAPHIC_TYPE), per_unit, false)
        }
        ModelKind::Projected => match short(KEY_LINEAR_UNITS) {
            Some(code) => (short(KEY_PROJECTED_TYPE), linear_unit_metres(code)?, false),
            None => (short(KEY_PROJECTED_TYPE), 1.0, true),
        },
    };
    let vertical_unit_m = short(KEY_VERTICAL_UNITS).map_or(Ok(1.0), linear_unit_metres)?;
    Ok(Some(GeoReference {
        pixel_scale,
        tiepoint,
        model,
        epsg,
        linear_unit_m,
        vertical_unit_m,
        unit_assumed,
        key_directory: directory,
        double_params: tags.double_params.clone().unwrap_or_default(),
        ascii_params: tags.ascii_params.clone().unwrap_or_default(),
    }))
}

/// The pixel scale and tiepoint of an axis-aligned, north-up
/// `ModelTransformationTag` (`X = a·I + d`, `Y = f·J + h`, `a > 0`, `f < 0`);
/// `Err` for a rotated, sheared or flipped one, which the importer does not
/// resample.
fn scale_of_transformation(m: &[f64]) -> Result<([f64; 3], [f64; 6]), String> {
    if m.len() < 16 {
        return Err(format!(
            "ModelTransformation has {} values, not 16",
            m.len()
        ));
    }
    let (a, b, d, e, f, h) = (m[0], m[1], m[3], m[4], m[5], m[7]);
    if b != 0.0 || e != 0.0 {
        return Err("the raster is rotated or sheared (ModelTransformation); \
             warp it north-up first, e.g. gdalwarp"
            .to_string());
    }
    if !(a > 0.0 && f < 0.0 && d.is_finite() && h.is_finite()) {
        return Err(format!(
            "the raster's rows or columns run backwards (ModelTransformation scale {a}, {f}); \
             write it north-up"
        ));
    }
    Ok(([a, -f, m[10]], [0.0, 0.0, 0.0, d, h, 0.0]))
}

/// Metres in one degree of latitude at latitude `lat_deg` (WGS 84 series).
pub fn metres_per_degree_latitude(lat_deg: f64) -> f64 {
    let p = lat_deg.to_radians();
    111_132.92 - 559.82 * (2.0 * p).cos() + 1.175 * (4.0 * p).cos() - 0.0023 * (6.0 * p).cos()
}

/// Metres in one degree of longitude at latitude `lat_deg` (WGS 84 series).
pub fn metres_per_degree_longitude(lat_deg: f64) -> f64 {
    let p = lat_deg.to_radians();
    111_412.84 * p.cos() - 93.5 * (3.0 * p).cos() + 0.118 * (5.0 * p).cos()
}

impl GeoReference {
    /// The latitude (degrees) of the centre of a `height_px`-row raster
    /// (geographic rasters; rows run south from the tiepoint).
    pub fn centre_latitude_deg(&self, height_px: u32) -> f64 {
        let [_, j, ..] = self.tiepoint;
        let lat_at_j = self.tiepoint[4];
        let rows_to_centre = f64::from(height_px) / 2.0 - j;
        (lat_at_j - rows_to_centre * self.pixel_scale[1] * self.linear_unit_m).clamp(-90.0, 90.0)
    }

    /// The pixel's size `(east–west, north–south)` in metres for a raster of
    /// `height_px` rows: the pixel scale in metres, or for a geographic
    /// raster the degrees converted at its centre latitude.
    pub fn pixel_size_m(&self, height_px: u32) -> (f64, f64) {
        let (sx, sy) = (self.pixel_scale[0], self.pixel_scale[1]);
        match self.model {
            ModelKind::Projected => (sx * self.linear_unit_m, sy * self.linear_unit_m),
            ModelKind::Geographic => {
                let lat = self.centre_latitude_deg(height_px);
                let degrees = self.linear_unit_m;
                (
                    sx * degrees * metres_per_degree_longitude(lat),
                    sy * degrees * metres_per_degree_latitude(lat),
                )
            }
        }
    }

    /// One line for a summary: the CRS, and the unit when it was assumed.
    pub fn describe(&self) -> String {
        let crs = match (self.model, self.epsg) {
            (ModelKind::Geographic, Some(code)) => format!("geographic EPSG:{code}"),
            (ModelKind::Geographic, None) => "geographic".to_string(),
            (ModelKind::Projected, Some(code)) => format!("projected EPSG:{code}"),
            (ModelKind::Projected, None) => "projected".to_string(),
        };
        if self.unit_assumed {
            format!("{crs} (unit assumed metres)")
        } else {
            crs
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utm_tags() -> GeoTags {
        GeoTags {
            pixel_scale: Some(vec![30.0, 30.0, 0.0]),
            tiepoint: Some(vec![0.0, 0.0, 0.0, 500_000.0, 3_700_000.0, 0.0]),
            // Version 1.1.0, 3 keys: projected, UTM 14N, feet for heights.
            key_directory: Some(vec![
                1, 1, 0, 3, 1024, 0, 1, 1, 3072, 0, 1, 32614, 4099, 0, 1, 9002,
            ]),
            ..GeoTags::default()
        }
    }

    #[test]
    fn a_projected_raster_keeps_its_scale_and_vertical_unit() {
        let r = georeference(&utm_tags()).unwrap().unwrap();
        assert_eq!(r.model, ModelKind::Projected);
        assert_eq!(r.epsg, Some(32614));
        assert!(r.unit_assumed);
        assert_eq!(r.pixel_size_m(100), (30.0, 30.0));
        assert_eq!(r.vertical_unit_m, 0.3048);
        assert_eq!(r.describe(), "projected EPSG:32614 (unit assumed metres)");
    }

    #[test]
    fn feet_as_the_linear_unit_scale_the_pixel() {
        let mut tags = utm_tags();
        tags.key_directory = Some(vec![1, 1, 0, 2, 1024, 0, 1, 1, 3076, 0, 1, 9003]);
        let r = georeference(&tags).unwrap().unwrap();
        assert!(!r.unit_assumed);
        let (x, y) = r.pixel_size_m(10);
        assert!((x - 30.0 * 1200.0 / 3937.0).abs() < 1e-12, "{x}");
        assert_eq!(y, x);
    }

    #[test]
    fn degrees_become_metres_at_the_centre_latitude() {
        // One arc-second pixels, 3600 rows from 34° N down to 33° N: centre 33.5°.
        let tags = GeoTags {
            pixel_scale: Some(vec![1.0 / 3600.0, 1.0 / 3600.0, 0.0]),
            tiepoint: Some(vec![0.0, 0.0, 0.0, -98.0, 34.0, 0.0]),
            key_directory: Some(vec![1, 1, 0, 2, 1024, 0, 1, 2, 2048, 0, 1, 4326]),
            ..GeoTags::default()
        };
        let r = georeference(&tags).unwrap().unwrap();
        assert_eq!(r.model, ModelKind::Geographic);
        assert_eq!(r.centre_latitude_deg(3600), 33.5);
        let (x, y) = r.pixel_size_m(3600);
        // 1″ at 33.5° N: 25.81 m east–west, 30.81 m north–south.
        assert!((x - 25.8118).abs() < 1e-4, "{x}");
        assert!((y - 30.8093).abs() < 1e-4, "{y}");
        // The series at the equator and the pole.
        assert!((metres_per_degree_latitude(0.0) - 110_574.3).abs() < 0.1);
        assert!((metres_per_degree_longitude(0.0) - 111_319.5).abs() < 0.1);
        assert!(metres_per_degree_longitude(90.0).abs() < 1e-6);
    }

    #[test]
    fn broken_tags_say_what_is_wrong() {
        let bad_scale = GeoTags {
            pixel_scale: Some(vec![0.0, 30.0, 0.0]),
            ..utm_tags()
        };
        assert!(georeference(&bad_scale).unwrap_err().contains("positive"));
        let short_directory = GeoTags {
            key_directory: Some(vec![1, 1, 0, 5, 1024, 0, 1, 1]),
            ..utm_tags()
        };
        assert!(
            georeference(&short_directory)
                .unwrap_err()
                .contains("declares 5 keys")
        );
        let past_doubles = GeoTags {
            key_directory: Some(vec![1, 1, 0, 1, 2057, 34736, 1, 40]),
            double_params: Some(vec![6_378_137.0]),
            ..utm_tags()
        };
        assert!(
            georeference(&past_doubles)
                .unwrap_err()
                .contains("points past")
        );
        let mut odd_unit = utm_tags();
        odd_unit.key_directory = Some(vec![1, 1, 0, 1, 3076, 0, 1, 9036]);
        assert!(georeference(&odd_unit).unwrap_err().contains("EPSG:9036"));
        // A transformation matrix instead of a pixel scale: axis-aligned
        // and north-up reads, rotated is refused.
        let mut m = vec![0.0; 16];
        (m[0], m[3], m[5], m[7], m[15]) = (10.0, 500_000.0, -10.0, 3_700_000.0, 1.0);
        let matrix = GeoTags {
            pixel_scale: None,
            tiepoint: None,
            transformation: Some(m.clone()),
            ..utm_tags()
        };
        let r = georeference(&matrix).unwrap().unwrap();
        assert_eq!(r.pixel_size_m(10), (10.0, 10.0));
        assert_eq!(r.tiepoint, [0.0, 0.0, 0.0, 500_000.0, 3_700_000.0, 0.0]);
        m[1] = 5.0;
        let rotated = GeoTags {
            transformation: Some(m),
            ..matrix
        };
        assert!(georeference(&rotated).unwrap_err().contains("rotated"));
        assert_eq!(georeference(&GeoTags::default()), Ok(None));
    }
}
