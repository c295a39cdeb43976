//! The 2D plan a recipe cooks: one sample per `spacing_cells` columns,
//! holding what the whole-map stages (erosion, rivers, the breach) decide,
//! so chunks can later be built on demand from it (spec §12) plus local 3D
//! detail.
//!
//! # Memory bound
//! A plan never holds more than [`MAX_PLAN_SIDE_SAMPLES`]² samples: worlds up
//! to 2048 cells get one sample per column, larger ones one per 2, 4, …
//! columns. Each sample holds [`PLAN_BYTES_PER_SAMPLE`] bytes (height,
//! water, wetness, sediment, talus, material, soil, water body), so a plan is at
//! most 2048² × 23 B = 92 MiB, plus the stages' scratch (at most 40 B a
//! sample, during the rivers stage, freed after it).

use crate::terrain::storage::cell::Material;

/// Most plan samples along one side.
pub const MAX_PLAN_SIDE_SAMPLES: u32 = 2048;

/// Bytes one plan sample holds.
pub const PLAN_BYTES_PER_SAMPLE: usize = 5 * 4 + 3;

/// [`Plan::water_body`]: no water.
pub const DRY: u8 = 0;
/// [`Plan::water_body`]: the sea.
pub const SEA: u8 = 1;
/// [`Plan::water_body`]: a lake.
pub const LAKE: u8 = 2;
/// [`Plan::water_body`]: a river channel (centre line or bank).
pub const RIVER: u8 = 3;

/// Plan material meaning "exposed strata" (layered rock on cliffs): the
/// water id, which no material rule can choose (rules name solids), so
/// every solid id (a library's 255 among them) means itself.
pub const STRATA_MATERIAL: u8 = Material::WATER.0;

/// The cooked 2D plan of a recipe world. Samples are indexed `z · side + x`;
/// sample `(i, j)` sits at column centre `((i + 0.5)·s, (j + 0.5)·s)` in
/// cells, `s = spacing_cells`.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Samples along each side.
    pub side: usize,
    /// Columns per sample along each axis (a power of two, >= 1).
    pub spacing_cells: u32,
    /// Surface height, cells.
    pub height_cells: Vec<f32>,
    /// Water surface, cells (`f32::NEG_INFINITY` where dry).
    pub water_cells: Vec<f32>,
    /// Wetness in `[0, 1]`: log catchment, 1 on rivers.
    pub wetness: Vec<f32>,
    /// Sediment left by hydraulic erosion, cells (>= 0).
    pub sediment_cells: Vec<f32>,
    /// Scree left by thermal erosion, cells (>= 0).
    pub talus_cells: Vec<f32>,
    /// Surface material id, [`STRATA_MATERIAL`] for strata; 0 until the
    /// materials stage runs (then the default rules apply).
    pub material: Vec<u8>,
    /// Soil material id under the surface rows.
    pub soil: Vec<u8>,
    /// Which water body covers the sample: [`DRY`], [`SEA`], [`LAKE`] or
    /// [`RIVER`].
    pub water_body: Vec<u8>,
}

impl Plan {
    /// A flat, dry plan at height 0 for a world `size_cells` wide.
    pub fn new(size_cells: u32) -> Plan {
        let spacing_cells = plan_spacing_cells(size_cells);
        let side = (size_cells / spacing_cells).max(1) as usize;
        let n = side * side;
        Plan {
            side,
            spacing_cells,
            height_cells: vec![0.0; n],
            water_cells: vec![f32::NEG_INFINITY; n],
            wetness: vec![0.0; n],
            sediment_cells: vec![0.0; n],
            talus_cells: vec![0.0; n],
            material: vec![0; n],
            soil: vec![0; n],
            water_body: vec![DRY; n],
        }
    }

    /// Samples in the plan.
    pub fn len(&self) -> usize {
        self.side * self.side
    }

    /// True for a plan without samples (never built by [`Plan::new`]).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The float layers in field order: height, water, wetness, sediment
    /// and talus.
    pub fn f32_layers(&self) -> [&[f32]; 5] {
        [
            &self.height_cells,
            &self.water_cells,
            &self.wetness,
            &self.sediment_cells,
            &self.talus_cells,
        ]
    }

    /// The byte layers in field order: material, soil and water body.
    pub fn u8_layers(&self) -> [&[u8]; 3] {
        [&self.material, &self.soil, &self.water_body]
    }

    /// Heap bytes the plan holds.
    pub fn heap_bytes(&self) -> usize {
        self.len() * PLAN_BYTES_PER_SAMPLE
    }

    /// Index of sample `(i, j)`.
    #[inline]
    pub fn index(&self, i: usize, j: usize) -> usize {
        j * self.side + i
    }

    /// Plan-space coordinates (samples, fractional) of column centre
    /// `(x + 0.5, z + 0.5)`.
    #[inline]
    pub fn sample_coords(&self, x_cells: f64, z_cells: f64) -> (f64, f64) {
        let s = f64::from(self.spacing_cells);
        (x_cells / s - 0.5, z_cells / s - 0.5)
    }

    /// Bilinear sample of `layer` at plan coordinates `(u, v)` (edges clamped).
    pub fn bilinear(&self, layer: &[f32], u: f64, v: f64) -> f64 {
        let max = (self.side - 1) as f64;
        let (u, v) = (u.clamp(0.0, max), v.clamp(0.0, max));
        let (i0, j0) = (u.floor() as usize, v.floor() as usize);
        let (i1, j1) = ((i0 + 1).min(self.side - 1), (j0 + 1).min(self.side - 1));
        let (fu, fv) = (u - i0 as f64, v - j0 as f64);
        let at = |i, j| f64::from(layer[self.index(i, j)]);
        let top = at(i0, j0) + (at(i1, j0) - at(i0, j0)) * fu;
        let bottom = at(i0, j1) + (at(i1, j1) - at(i0, j1)) * fu;
        top + (bottom - top) * fv
    }

    /// Index of the sample nearest plan coordinates `(u, v)` (clamped).
    #[inline]
    pub fn nearest(&self, u: f64, v: f64) -> usize {
        let max = (self.side - 1) as f64;
        let i = (u + 0.5).floor().clamp(0.0, max) as usize;
        let j = (v + 0.5).floor().clamp(0.0, max) as usize;
        self.index(i, j)
    }

    /// Surface height of column centre `(x_cells, z_cells)`, cells.
    pub fn height_at(&self, x_cells: f64, z_cells: f64) -> f64 {
        let (u, v) = self.sample_coords(x_cells, z_cells);
        self.bilinear(&self.height_cells, u, v)
    }

    /// True when water lies over sample `k`.
    #[inline]
    pub fn is_wet(&self, k: usize) -> bool {
        self.water_cells[k] > self.height_cells[k]
    }

    /// The surface material of sample `k` (`None` for strata), where the
    /// materials stage ran; `fallback` where it did not.
    pub fn surface_material(&self, k: usize, fallback: Material) -> Option<Material> {
        match self.material[k] {
            0 => Some(fallback),
            STRATA_MATERIAL => None,
            id => Some(Material(id)),
        }
    }

    /// Steepest grade from sample `k` to any of its 8 neighbours, as
    /// rise over run (run in cells).
    pub fn max_neighbour_grade(&self, i: usize, j: usize) -> f64 {
        let h = f64::from(self.height_cells[self.index(i, j)]);
        let s = f64::from(self.spacing_cells);
        let mut steepest: f64 = 0.0;
        for (di, dj, dist) in NEIGHBOURS_8 {
            let (ni, nj) = (i as i64 + di, j as i64 + dj);
            if ni < 0 || nj < 0 || ni >= self.side as i64 || nj >= self.side as i64 {
                continue;
            }
            let hn = f64::from(self.height_cells[self.index(ni as usize, nj as usize)]);
            steepest = steepest.max((h - hn).abs() / (dist * s));
        }
        steepest
    }
}

/// The 8 neighbours `(di, dj, distance in samples)`, axis neighbours first.
pub const NEIGHBOURS_8: [(i64, i64, f64); 8] = [
    (1, 0, 1.0),
    (-1, 0, 1.0),
    (0, 1, 1.0),
    (0, -1, 1.0),
    (1, 1, std::f64::consts::SQRT_2),
    (-1, 1, std::f64::consts::SQRT_2),
    (1, -1, std::f64::consts::SQRT_2),
    (-1, -1, std::f64::consts::SQRT_2),
];

/// Columns per plan sample for a world `size_cells` wide: 1 up to
/// [`MAX_PLAN_SIDE_SAMPLES`], then the smallest power of two that keeps the
/// plan within it.
pub fn plan_spacing_cells(size_cells: u32) -> u32 {
    let mut spacing = 1;
    while size_cells.div_ceil(spacing) > MAX_PLAN_SIDE_SAMPLES {
        spacing *= 2;
    }
    spacing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_stay_within_the_sample_bound() {
        assert_eq!(plan_spacing_cells(1024), 1);
        assert_eq!(plan_spacing_cells(2048), 1);
        assert_eq!(plan_spacing_cells(8192), 4);
        let plan = Plan::new(8192);
        assert_eq!(plan.side, 2048);
        assert!(plan.heap_bytes() <= 2048 * 2048 * PLAN_BYTES_PER_SAMPLE);
    }

    #[test]
    fn bilinear_hits_samples_at_their_centres() {
        let mut plan = Plan::new(64);
        let k = plan.index(3, 2);
        plan.height_cells[k] = 10.0;
        assert_eq!(plan.height_at(3.5, 2.5), 10.0);
        assert_eq!(plan.height_at(4.0, 2.5), 5.0);
    }
}
