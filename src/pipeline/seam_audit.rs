//! Seam audit of the shown meshes (spec §11): for every pair of neighbouring
//! chunks shown at the same level, and every pair of neighbouring horizon
//! nodes drawn at the same level (spec §13), the vertices both built for
//! the cubes along their shared border must coincide — same position (to
//! [`POSITION_TOLERANCE_STUDS`], or a few `f32` steps of a node's side for
//! the large nodes; each mesh places the vertex from its own origin in
//! `f32`) and a bit-identical normal. Boundary vertices are matched by
//! their global cube key (origin in samples of the level + the vertex's
//! local cube). Boundaries between different levels are covered by skirts
//! instead (`--overlay hide-skirts` shows them).
//!
//! [`ThrottledSeamAudit`] runs the audit while the editor draws, at most a
//! few times a second and only when the shown meshes changed; its
//! mismatches are the `seam-audit` overlay's markers.

use std::time::{Duration, Instant};

use glam::{DVec3, IVec3};
use rustc_hash::FxHashMap;

use crate::mesh::ChunkMesh;
use crate::terrain::Material;
use crate::terrain::storage::coords::{CHUNK_SIZE_CELLS, ChunkCoord};
use crate::terrain::storage::node::{NODE_SAMPLES, NodeKey};

use super::horizon::{Horizon, HorizonDraw};
use super::world_meshes::WorldMeshes;

/// Largest position difference of a shared boundary vertex, studs.
pub const POSITION_TOLERANCE_STUDS: f64 = 1e-3;

/// One audited mesh: a chunk or a horizon node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SeamPiece {
    /// A chunk's mesh (levels 0–3).
    Chunk(ChunkCoord),
    /// A horizon node's mesh (levels 4 and up).
    Node(NodeKey),
}

/// A boundary vertex two equal-level neighbours disagree on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeamMismatch {
    /// One of the two meshes (the other is the neighbour across the border).
    pub piece: SeamPiece,
    /// The neighbour.
    pub neighbour: SeamPiece,
    /// The vertex position in `piece`'s mesh, world studs.
    pub pos_world: DVec3,
    /// Index of the vertex in `piece`'s mesh; `None` for a gap in a
    /// low-poly surface (see [`super::lowpoly_audit`]), which is no vertex.
    pub vertex: Option<u32>,
}

/// One mesh's border vertices: global cube key → (world position, normal
/// bits, vertex index).
type BorderVertices = FxHashMap<IVec3, (DVec3, [u32; 3], u32)>;

/// The border vertices of `mesh`, whose cubes are `n` per axis, start at
/// global cube `base` and whose positions are relative to `origin_world`.
/// Only Surface Nets vertices count: skirts, and a node's water sheet (flat
/// Water vertices at the sea's level), are left out.
fn border_vertices(base: IVec3, n: i32, origin_world: DVec3, mesh: &ChunkMesh) -> BorderVertices {
    let mut out = FxHashMap::default();
    for v in 0..mesh.skirt_start_vertex as usize {
        if mesh.material_ids[v] == [Material::WATER.0; 4] {
            continue;
        }
        let c = mesh.vertex_cubes[v];
        let local = IVec3::new(c[0] as i32, c[1] as i32, c[2] as i32);
        let on_border =
            local.cmpeq(IVec3::splat(-1)).any() || local.cmpeq(IVec3::splat(n - 1)).any();
        if on_border {
            out.insert(
                base + local,
                (
                    origin_world + mesh.positions[v].as_dvec3(),
                    mesh.normals[v].to_array().map(f32::to_bits),
                    v as u32,
                ),
            );
        }
    }
    out
}

/// The mismatches between the border vertices of two neighbours.
fn compare(
    (piece, mine): (SeamPiece, &BorderVertices),
    (neighbour, theirs): (SeamPiece, &BorderVertices),
    tolerance_studs: f64,
    out: &mut Vec<SeamMismatch>,
) {
    for (key, &(pos, normal, vertex)) in mine {
        if let Some(&(p2, n2, _)) = theirs.get(key)
            && (pos.distance(p2) > tolerance_studs || normal != n2)
        {
            out.push(SeamMismatch {
                piece,
                neighbour,
                pos_world: pos,
                vertex: Some(vertex),
            });
        }
    }
}

/// The 26 face, edge and corner neighbour offsets after `index` in
/// (z, y, x) order, so that each unordered pair is visited once.
fn later_neighbours(index: IVec3) -> impl Iterator<Item = IVec3> {
    (-1..=1)
        .flat_map(|z| (-1..=1).flat_map(move |y| (-1..=1).map(move |x| IVec3::new(x, y, z))))
        .filter(|d| *d != IVec3::ZERO)
        .map(move |d| index + d)
        .filter(move |n| (n.z, n.y, n.x) > (index.z, index.y, index.x))
}

/// Audits every pair of face/edge/corner neighbours shown at equal levels and
/// returns the vertices they disagree on (none when seams are correct).
/// Low-poly meshes are audited by [`super::lowpoly_audit`] instead: each
/// gap it finds in their walls is a mismatch here.
pub fn audit(meshes: &WorldMeshes) -> Vec<SeamMismatch> {
    let mut out = low_poly_cracks(meshes);
    let mut borders: FxHashMap<ChunkCoord, BorderVertices> = FxHashMap::default();
    for (coord, mesh) in meshes.iter() {
        if mesh.style.is_low_poly() {
            continue;
        }
        let level = meshes.level_of(coord).unwrap_or(0);
        let n = CHUNK_SIZE_CELLS >> level;
        borders.insert(
            coord,
            border_vertices(coord.0 * n, n, coord.origin_world(), mesh),
        );
    }
    for (&coord, mine) in &borders {
        let level = meshes.level_of(coord).unwrap_or(0);
        for neighbour in later_neighbours(coord.0).map(ChunkCoord) {
            if meshes.level_of(neighbour) != Some(level) {
                continue;
            }
            let Some(theirs) = borders.get(&neighbour) else {
                continue;
            };
            compare(
                (SeamPiece::Chunk(coord), mine),
                (SeamPiece::Chunk(neighbour), theirs),
                POSITION_TOLERANCE_STUDS,
                &mut out,
            );
        }
    }
    out
}

/// The gaps [`super::lowpoly_audit::audit`] finds in the shown low-poly
/// meshes, as mismatches.
fn low_poly_cracks(meshes: &WorldMeshes) -> Vec<SeamMismatch> {
    let Some(found) = super::lowpoly_audit::audit(meshes.iter().map(|(c, m)| (c, &**m))) else {
        return Vec::new();
    };
    found
        .crack_sites
        .iter()
        .map(|crack| SeamMismatch {
            piece: SeamPiece::Chunk(crack.chunk),
            neighbour: SeamPiece::Chunk(crack.neighbour),
            pos_world: crack.pos_world,
            vertex: None,
        })
        .collect()
}

/// Position tolerance for the nodes of `level`: [`POSITION_TOLERANCE_STUDS`]
/// or four `f32` steps at the node's side, whichever is larger (a level-12
/// node is 65,536 studs a side; its vertices are placed in `f32` from its
/// own origin).
pub fn node_tolerance_studs(level: u8) -> f64 {
    let side = NodeKey::new(level, IVec3::ZERO).side_studs();
    POSITION_TOLERANCE_STUDS.max(side * f64::from(f32::EPSILON) * 4.0)
}

/// Audits every pair of neighbouring nodes the horizon draws at equal
/// levels (its last draw list) and returns the vertices they disagree on.
pub fn audit_nodes(horizon: &Horizon) -> Vec<SeamMismatch> {
    audit_node_meshes(horizon.draws().iter().filter_map(|d| match *d {
        HorizonDraw::Node(key) => horizon.mesh(key).map(|m| (key, &**m)),
        HorizonDraw::Chunks(_) => None,
    }))
}

/// Audits every pair of equal-level neighbours among `nodes` (node meshes
/// in node-local studs, as [`crate::mesh::node_mesh::mesh_node`] builds them).
pub fn audit_node_meshes<'a>(
    nodes: impl IntoIterator<Item = (NodeKey, &'a ChunkMesh)>,
) -> Vec<SeamMismatch> {
    let n = NODE_SAMPLES as i32;
    let borders: FxHashMap<NodeKey, BorderVertices> = nodes
        .into_iter()
        .map(|(key, mesh)| {
            (
                key,
                border_vertices(key.index * n, n, key.origin_world(), mesh),
            )
        })
        .collect();
    let mut out = Vec::new();
    for (&key, mine) in &borders {
        for index in later_neighbours(key.index) {
            let neighbour = NodeKey::new(key.level, index);
            let Some(theirs) = borders.get(&neighbour) else {
                continue;
            };
            compare(
                (SeamPiece::Node(key), mine),
                (SeamPiece::Node(neighbour), theirs),
                node_tolerance_studs(key.level),
                &mut out,
            );
        }
    }
    out
}

/// The seam audit of the shown meshes as the editor runs it while it
/// draws (the `seam-audit` overlay's markers, the panel's count): re-run at
/// most every [`ThrottledSeamAudit::MIN_INTERVAL`] and only when the shown
/// meshes changed (a revision counter the caller passes, e.g. the
/// renderer's mesh revision).
#[derive(Clone, Debug, Default)]
pub struct ThrottledSeamAudit {
    last_run: Option<Instant>,
    last_revision: Option<u64>,
    mismatches: Vec<SeamMismatch>,
    last_ms: f64,
}

impl ThrottledSeamAudit {
    /// Shortest time between two audits (at most four a second).
    pub const MIN_INTERVAL: Duration = Duration::from_millis(250);

    /// Audits `meshes` when their `revision` (any counter that changes
    /// whenever the shown meshes do) differs from the last audited one and
    /// the last audit is at least [`Self::MIN_INTERVAL`] before `now`.
    /// Returns whether it ran.
    /// With a `horizon`, its drawn nodes are audited too.
    pub fn update(
        &mut self,
        meshes: &WorldMeshes,
        horizon: Option<&Horizon>,
        revision: u64,
        now: Instant,
    ) -> bool {
        let due = self
            .last_run
            .is_none_or(|t| now.saturating_duration_since(t) >= Self::MIN_INTERVAL);
        if !due || self.last_revision == Some(revision) {
            return false;
        }
        self.run(meshes, horizon, revision, now);
        true
    }

    /// Audits `meshes` (and `horizon`'s drawn nodes) now, whatever the
    /// throttle says.
    pub fn run(
        &mut self,
        meshes: &WorldMeshes,
        horizon: Option<&Horizon>,
        revision: u64,
        now: Instant,
    ) {
        let start = Instant::now();
        self.mismatches = audit(meshes);
        if let Some(h) = horizon {
            self.mismatches.extend(audit_nodes(h));
        }
        self.last_ms = start.elapsed().as_secs_f64() * 1e3;
        log::debug!(
            "seam audit: {} mismatches over {} meshes in {:.1} ms",
            self.mismatches.len(),
            meshes.len(),
            self.last_ms
        );
        self.last_run = Some(now);
        self.last_revision = Some(revision);
    }

    /// Mismatches of the last audit.
    pub fn mismatches(&self) -> &[SeamMismatch] {
        &self.mismatches
    }

    /// Where the mismatches of the last audit lie, world studs (the
    /// `seam-audit` overlay's markers).
    pub fn mismatch_positions_world(&self) -> Vec<DVec3> {
        self.mismatches.iter().map(|m| m.pos_world).collect()
    }

    /// Mismatch count of the last audit, `None` before the first.
    pub fn count(&self) -> Option<usize> {
        self.last_run.map(|_| self.mismatches.len())
    }

    /// Wall time of the last audit, ms.
    pub fn last_ms(&self) -> f64 {
        self.last_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::{Cell, CellBox, Grid, Material};
    use std::sync::Arc;

    fn bumpy() -> Grid {
        let mut g = Grid::new();
        g.edit_region(
            CellBox::new(IVec3::new(-40, 0, -40), IVec3::new(72, 40, 72)),
            |c, _| {
                let h =
                    20.0 + 6.0 * ((c.0.x as f32) * 0.3).sin() + 5.0 * ((c.0.z as f32) * 0.21).cos();
                Cell::new(
                    Material::GRASS,
                    ((h - c.0.y as f32).clamp(0.0, 1.0) * 255.0) as u8,
                )
            },
        )
        .unwrap();
        g
    }

    #[test]
    fn equal_levels_have_no_mismatch_at_any_level() {
        let g = bumpy();
        for level in 0..4u8 {
            let meshes = WorldMeshes::build(&g, &g.meshing_candidates(), |_| level);
            assert!(meshes.len() > 4);
            assert!(audit(&meshes).is_empty(), "level {level}");
        }
    }

    #[test]
    fn a_moved_boundary_vertex_is_reported() {
        let g = bumpy();
        let mut meshes = WorldMeshes::build_all(&g);
        let coord = ChunkCoord::new(0, 0, 0);
        let mut mesh = (**meshes.get(coord).unwrap()).clone();
        let v = (0..mesh.positions.len())
            .find(|&v| mesh.vertex_cubes[v][0] == 31)
            .expect("a vertex on the +x border");
        mesh.positions[v].y += 0.5;
        meshes.set_published(coord, 0, Arc::new(mesh), None);
        let m = audit(&meshes);
        assert!(!m.is_empty());
        let piece = SeamPiece::Chunk(coord);
        assert!(m.iter().all(|x| x.piece == piece || x.neighbour == piece));
    }

    #[test]
    fn neighbouring_nodes_agree_and_a_moved_node_vertex_is_reported() {
        use crate::mesh::field::SampleField;
        use crate::mesh::node_mesh::{NodeColumns, mesh_node};
        use crate::mesh::surface_nets::SurfaceNets;
        use crate::terrain::generation::generate::GeneratorSettings;
        use crate::terrain::generation::generated_columns::GeneratedColumns;
        use crate::terrain::streaming::column_source::ColumnSource;
        let source = GeneratedColumns::new(&GeneratorSettings {
            seed: 7,
            size_cells: 1 << 16,
        });
        let sampler = source.surface_sampler().expect("the generator samples");
        let (mut mesher, mut field) = (SurfaceNets::new(), SampleField::new(NODE_SAMPLES));
        for level in [4u8, 6, 9] {
            // A 3×3 block of node columns around the world's middle, at
            // every height that holds surface.
            let mid = (1i32 << 15) / (NodeKey::new(level, IVec3::ZERO).side_cells() as i32);
            let mut meshes = Vec::new();
            for z in mid - 1..=mid + 1 {
                for x in mid - 1..=mid + 1 {
                    let mut columns = Box::<NodeColumns>::default();
                    for y in -1..=2 {
                        let key = NodeKey::new(level, IVec3::new(x, y, z));
                        let mut mesh = ChunkMesh::default();
                        mesh_node(
                            &mut mesher,
                            &mut field,
                            &mut columns,
                            sampler,
                            key,
                            &mut mesh,
                        );
                        if !mesh.is_empty() {
                            meshes.push((key, mesh));
                        }
                    }
                }
            }
            assert!(meshes.len() >= 9, "level {level}: {} meshes", meshes.len());
            let shared = meshes.iter().map(|(k, m)| (*k, m));
            assert_eq!(audit_node_meshes(shared), vec![], "level {level}");
            // Move one +x border vertex of the middle column's surface node.
            let (key, mesh) = meshes
                .iter_mut()
                .find(|(k, m)| {
                    k.index.x == mid
                        && k.index.z == mid
                        && m.vertex_cubes[..m.skirt_start_vertex as usize]
                            .iter()
                            .any(|c| c[0] == 3)
                })
                .expect("a surface node in the middle column");
            let v = (0..mesh.skirt_start_vertex as usize)
                .find(|&v| mesh.vertex_cubes[v][0] == 3)
                .expect("a vertex on the +x border");
            mesh.positions[v].y += 0.5;
            let key = *key;
            let found = audit_node_meshes(meshes.iter().map(|(k, m)| (*k, m)));
            assert!(!found.is_empty(), "level {level}");
            let piece = SeamPiece::Node(key);
            assert!(
                found
                    .iter()
                    .all(|x| x.piece == piece || x.neighbour == piece)
            );
        }
    }

    #[test]
    fn seam_audit_is_throttled_and_follows_revisions() {
        let meshes = WorldMeshes::default();
        let mut a = ThrottledSeamAudit::default();
        let t0 = Instant::now();
        assert_eq!(a.count(), None);
        assert!(a.update(&meshes, None, 1, t0));
        assert_eq!(a.count(), Some(0));
        // Same revision: nothing to do, however late.
        assert!(!a.update(&meshes, None, 1, t0 + Duration::from_secs(5)));
        // New revision, too soon.
        assert!(!a.update(&meshes, None, 2, t0 + Duration::from_millis(100)));
        assert!(a.update(&meshes, None, 2, t0 + ThrottledSeamAudit::MIN_INTERVAL));
    }
}
