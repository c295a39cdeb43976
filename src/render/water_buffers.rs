//! Per-chunk GPU buffers of the water surfaces, staged and promoted together
//! with the chunk's terrain (see [`super::ChunkBuffers`], which owns one
//! [`WaterBuffers`]), and the per-frame list of water chunks to draw.
//!
//! Water chunks are culled like terrain chunks (bounds grown by the waves'
//! reach, by the shared [`cull_and_sort`]) and drawn back to front, the
//! usual order for blended surfaces. Also here: the conversion of a CPU
//! water mesh into [`WaterVertex`]es, with its shoreline [`outline_fade`].

use glam::Vec3;
use rustc_hash::FxHashMap;
use wgpu::util::DeviceExt;

use crate::camera::Camera;
use crate::mesh::water::WaterMesh;
use crate::terrain::storage::coords::ChunkCoord;

use super::culling::{DrawOrder, Frustum, cull_and_sort};
use super::gpu_data::{ChunkInstance, WAVE_MAX_DISPLACEMENT_STUDS, WaterVertex, pack_snorm8};
use super::instance_buffer::InstanceBuffer;

/// GPU copy of one chunk's water surface.
pub struct WaterGpu {
    /// [`WaterVertex`] buffer.
    pub vertex_buffer: wgpu::Buffer,
    /// `u32` triangle-list index buffer.
    pub index_buffer: wgpu::Buffer,
    /// Number of indices.
    pub index_count: u32,
    /// Bounds in chunk-local studs `(min, max)`, grown by the waves' reach.
    pub bounds_local: (Vec3, Vec3),
}

/// All water buffers plus this frame's instance buffer and draw list.
pub struct WaterBuffers {
    chunks: FxHashMap<ChunkCoord, WaterGpu>,
    /// Uploaded but not yet drawn (`None`: the water's removal is staged).
    staged: FxHashMap<ChunkCoord, Option<WaterGpu>>,
    instance_buffer: InstanceBuffer,
    /// Water chunks to draw this frame, back to front; draw `i` uses instance `i`.
    draws: Vec<ChunkCoord>,
}

/// What [`WaterBuffers::prepare`] selected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaterDrawStats {
    /// Water chunks drawn.
    pub chunks: usize,
    /// Water triangles drawn.
    pub triangles: usize,
}

impl WaterBuffers {
    /// An empty set.
    pub fn new(device: &wgpu::Device) -> Self {
        WaterBuffers {
            chunks: FxHashMap::default(),
            staged: FxHashMap::default(),
            instance_buffer: InstanceBuffer::new(device, "water instances", 64),
            draws: Vec::new(),
        }
    }

    /// GPU buffers for `mesh` and their size in bytes; `None` for no water.
    fn create(device: &wgpu::Device, mesh: &WaterMesh) -> Option<(WaterGpu, usize)> {
        if mesh.is_empty() || mesh.positions.is_empty() {
            return None;
        }
        let mut lo = Vec3::splat(f32::INFINITY);
        let mut hi = Vec3::splat(f32::NEG_INFINITY);
        for p in &mesh.positions {
            lo = lo.min(*p);
            hi = hi.max(*p);
        }
        // Gerstner waves move vertices sideways by less than they lift them.
        let reach = Vec3::splat(WAVE_MAX_DISPLACEMENT_STUDS);
        let vertices = WaterVertex::from_mesh(mesh);
        let upload = super::gpu::mesh_upload_usage(device);
        let vertex_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("water vertices"),
            contents: bytemuck::cast_slice(&vertices),
            usage: wgpu::BufferUsages::VERTEX | upload,
        });
        let index_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("water indices"),
            contents: bytemuck::cast_slice(&mesh.indices),
            usage: wgpu::BufferUsages::INDEX | upload,
        });
        let bytes = std::mem::size_of_val(vertices.as_slice()) + mesh.indices.len() * 4;
        Some((
            WaterGpu {
                vertex_buffer,
                index_buffer,
                index_count: mesh.indices.len() as u32,
                bounds_local: (lo - reach, hi + reach),
            },
            bytes,
        ))
    }

    /// Creates (or replaces, or for an empty mesh drops) the drawn water of
    /// `coord` at once. Returns bytes uploaded.
    pub fn upload(&mut self, device: &wgpu::Device, coord: ChunkCoord, mesh: &WaterMesh) -> usize {
        match Self::create(device, mesh) {
            Some((gpu, bytes)) => {
                self.chunks.insert(coord, gpu);
                bytes
            }
            None => {
                self.chunks.remove(&coord);
                0
            }
        }
    }

    /// Uploads `mesh` for `coord` into a staging slot without drawing it (an
    /// empty mesh stages the water's removal). Returns bytes uploaded.
    pub fn stage(&mut self, device: &wgpu::Device, coord: ChunkCoord, mesh: &WaterMesh) -> usize {
        let (gpu, bytes) = match Self::create(device, mesh) {
            Some((gpu, bytes)) => (Some(gpu), bytes),
            None => (None, 0),
        };
        self.staged.insert(coord, gpu);
        bytes
    }

    /// Makes the staged water of `coords` the drawn one; chunks with no
    /// staged water keep theirs (a level-only change).
    pub fn promote(&mut self, coords: &[ChunkCoord]) {
        for coord in coords {
            match self.staged.remove(coord) {
                Some(Some(gpu)) => {
                    self.chunks.insert(*coord, gpu);
                }
                Some(None) => {
                    self.chunks.remove(coord);
                }
                None => {}
            }
        }
    }

    /// Drops the drawn and staged water of `coord`; returns whether it had any drawn.
    pub fn remove(&mut self, coord: ChunkCoord) -> bool {
        self.staged.remove(&coord);
        self.chunks.remove(&coord).is_some()
    }

    /// Drops everything.
    pub fn clear(&mut self) {
        self.chunks.clear();
        self.staged.clear();
        self.draws.clear();
    }

    /// Number of chunks with drawn water.
    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    /// True when no chunk has drawn water.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// The drawn water of `coord`, if any.
    pub fn get(&self, coord: ChunkCoord) -> Option<&WaterGpu> {
        self.chunks.get(&coord)
    }

    /// The water chunks prepared for this frame, back to front.
    pub fn drawn(&self) -> &[ChunkCoord] {
        &self.draws
    }

    /// Culls against `frustum` (camera-relative) and `draw_distance_studs`,
    /// orders the visible water back to front and writes the instances.
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        camera: &Camera,
        frustum: &Frustum,
        draw_distance_studs: f32,
    ) -> WaterDrawStats {
        let visible = cull_and_sort(
            &self.chunks,
            |gpu| gpu.bounds_local,
            camera.pos_world,
            frustum,
            draw_distance_studs,
            DrawOrder::BackToFront,
            |coord, origin_rel, _| ChunkInstance {
                chunk_origin_rel: [origin_rel.x, origin_rel.y, origin_rel.z, 0.0],
                chunk_coord: [coord.0.x, coord.0.y, coord.0.z, 0],
            },
        );
        let instances: Vec<ChunkInstance> = visible.iter().map(|v| v.item).collect();
        self.instance_buffer.write(device, queue, &instances);
        self.draws = visible.iter().map(|v| v.coord).collect();
        WaterDrawStats {
            chunks: self.draws.len(),
            triangles: self
                .draws
                .iter()
                .filter_map(|c| self.chunks.get(c))
                .map(|g| g.index_count as usize / 3)
                .sum(),
        }
    }

    /// Issues one indexed draw per prepared water chunk (instance `i` for
    /// draw `i`). A water pipeline and its bind groups must already be set.
    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>) {
        if self.draws.is_empty() {
            return;
        }
        pass.set_vertex_buffer(1, self.instance_buffer.buffer().slice(..));
        for (i, coord) in self.draws.iter().enumerate() {
            let Some(gpu) = self.chunks.get(coord) else {
                continue;
            };
            let i = i as u32;
            pass.set_vertex_buffer(0, gpu.vertex_buffer.slice(..));
            pass.set_index_buffer(gpu.index_buffer.slice(..), wgpu::IndexFormat::Uint32);
            pass.draw_indexed(0..gpu.index_count, 0, i..i + 1);
        }
    }
}

impl WaterVertex {
    /// Converts a CPU water mesh into GPU vertices (same order, same count).
    pub fn from_mesh(mesh: &WaterMesh) -> Vec<WaterVertex> {
        let outline = outline_fade(mesh);
        (0..mesh.positions.len())
            .map(|i| {
                let n = mesh.normals.get(i).copied().unwrap_or(glam::Vec3::Y);
                let fade = mesh.wave_fade.get(i).copied().unwrap_or(0.0);
                WaterVertex {
                    pos_in_chunk: mesh.positions[i].to_array(),
                    normal_fade: [
                        pack_snorm8(n.x),
                        pack_snorm8(n.y),
                        pack_snorm8(n.z),
                        pack_snorm8(fade.clamp(0.0, 1.0)),
                    ],
                    outline: [(outline[i] * 255.0).round() as u8, 0, 0, 0],
                }
            })
            .collect()
    }
}

/// Per vertex of `mesh`: 0 on the top sheet's open outline, 1 elsewhere.
///
/// The sheet reaches one cell past the water over the shore so the terrain
/// cuts its outline; where a beach is flatter than that, the sheet instead
/// ends in the air a little above the bed, along cell edges. The water
/// shader fades its alpha to 0 toward this outline (over one cell), so such
/// an end reads as a soft shoreline instead of a staircase.
///
/// The outline is every sheet edge used by one sheet triangle, except edges
/// in the chunk's border planes (the sheet goes on in the neighbour) and
/// edges shared with a side face (the lip of a waterfall stays opaque).
/// Vertices are matched by exact position: corners are computed from cells
/// alone, so every quad around a corner agrees. A vertex's value depends
/// only on the edges at it, so neighbouring chunks agree on shared vertices.
pub fn outline_fade(mesh: &WaterMesh) -> Vec<f32> {
    use rustc_hash::{FxHashMap, FxHashSet};
    type Key = [u32; 3];
    let key = |i: u32| -> Key {
        let p = mesh.positions[i as usize];
        [p.x.to_bits(), p.y.to_bits(), p.z.to_bits()]
    };
    let edge = |a: Key, b: Key| if a <= b { (a, b) } else { (b, a) };
    let is_sheet = |i: u32| mesh.normals.get(i as usize).is_some_and(|n| n.y > 0.5);
    let mut sheet_edges: FxHashMap<(Key, Key), u32> = FxHashMap::default();
    let mut side_edges: FxHashSet<(Key, Key)> = FxHashSet::default();
    for tri in mesh.indices.chunks_exact(3) {
        if tri.iter().any(|&i| i as usize >= mesh.positions.len()) {
            continue;
        }
        let sheet = tri.iter().all(|&i| is_sheet(i));
        for k in 0..3 {
            let e = edge(key(tri[k]), key(tri[(k + 1) % 3]));
            if sheet {
                *sheet_edges.entry(e).or_default() += 1;
            } else {
                side_edges.insert(e);
            }
        }
    }
    let border = crate::terrain::storage::coords::CHUNK_SIZE_STUDS;
    let in_border_plane = |(a, b): (Key, Key)| {
        let (ax, az) = (f32::from_bits(a[0]), f32::from_bits(a[2]));
        let (bx, bz) = (f32::from_bits(b[0]), f32::from_bits(b[2]));
        [0.0, border]
            .iter()
            .any(|&v| (ax == v && bx == v) || (az == v && bz == v))
    };
    let mut outline: FxHashSet<Key> = FxHashSet::default();
    for (&e, &count) in &sheet_edges {
        if count == 1 && !in_border_plane(e) && !side_edges.contains(&e) {
            outline.insert(e.0);
            outline.insert(e.1);
        }
    }
    (0..mesh.positions.len() as u32)
        .map(|i| {
            if is_sheet(i) && outline.contains(&key(i)) {
                0.0
            } else {
                1.0
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn vertices_carry_position_normal_and_fade() {
        let mesh = WaterMesh {
            positions: vec![Vec3::new(1.0, 2.0, 3.0), Vec3::new(4.0, 5.0, 6.0)],
            normals: vec![Vec3::Y, Vec3::X],
            wave_fade: vec![1.0, 0.0],
            indices: vec![],
        };
        let v = WaterVertex::from_mesh(&mesh);
        assert_eq!(v[0].pos_in_chunk, [1.0, 2.0, 3.0]);
        assert_eq!(v[0].normal_fade, [0, 127, 0, 127]);
        assert_eq!(v[1].normal_fade, [127, 0, 0, 0]);
    }

    /// A sheet of `w × d` cell quads (4 unshared vertices each, like the
    /// mesher's) with its lower-left cell corner at `origin` (cells).
    fn sheet(origin: (i32, i32), w: i32, d: i32) -> WaterMesh {
        let mut m = WaterMesh::default();
        for z in 0..d {
            for x in 0..w {
                let base = m.positions.len() as u32;
                for (dx, dz) in [(0, 0), (1, 0), (1, 1), (0, 1)] {
                    let (cx, cz) = (origin.0 + x + dx, origin.1 + z + dz);
                    m.positions
                        .push(Vec3::new(cx as f32 * 4.0, 40.0, cz as f32 * 4.0));
                    m.normals.push(Vec3::Y);
                    m.wave_fade.push(0.0);
                }
                m.indices
                    .extend_from_slice(&[base, base + 3, base + 2, base, base + 2, base + 1]);
            }
        }
        m
    }

    fn fade_at(m: &WaterMesh, fade: &[f32], cell_corner: (i32, i32)) -> f32 {
        let p = Vec3::new(cell_corner.0 as f32 * 4.0, 40.0, cell_corner.1 as f32 * 4.0);
        let values: Vec<f32> = (0..m.positions.len())
            .filter(|&i| m.positions[i] == p)
            .map(|i| fade[i])
            .collect();
        assert!(!values.is_empty(), "no vertex at {cell_corner:?}");
        assert!(
            values.iter().all(|v| *v == values[0]),
            "vertices at one corner agree"
        );
        values[0]
    }

    #[test]
    fn outline_is_zero_on_the_open_edge_only() {
        // A 4 × 4 pond in the chunk's interior: its rim is the outline.
        let m = sheet((10, 10), 4, 4);
        let f = outline_fade(&m);
        assert_eq!(fade_at(&m, &f, (10, 10)), 0.0);
        assert_eq!(fade_at(&m, &f, (12, 14)), 0.0);
        assert_eq!(fade_at(&m, &f, (12, 12)), 1.0);
        assert_eq!(fade_at(&m, &f, (11, 13)), 1.0);
    }

    #[test]
    fn chunk_borders_are_not_an_outline() {
        // Water running over the chunk's x = 0 border and on.
        let m = sheet((0, 10), 3, 4);
        let f = outline_fade(&m);
        assert_eq!(
            fade_at(&m, &f, (0, 12)),
            1.0,
            "border vertex inside the sheet"
        );
        assert_eq!(
            fade_at(&m, &f, (0, 10)),
            0.0,
            "where the real outline meets the border"
        );
        assert_eq!(fade_at(&m, &f, (3, 12)), 0.0);
    }

    #[test]
    fn waterfall_lips_are_not_an_outline() {
        let mut m = sheet((10, 10), 2, 3);
        // Side faces below the sheet's whole +x edge (x = 12 cells).
        let base = m.positions.len() as u32;
        for z in 10..13 {
            let b = m.positions.len() as u32;
            for (dz, y) in [(0, 30.0), (1, 30.0), (1, 40.0), (0, 40.0)] {
                m.positions.push(Vec3::new(48.0, y, (z + dz) as f32 * 4.0));
                m.normals.push(Vec3::X);
                m.wave_fade.push(0.0);
            }
            m.indices
                .extend_from_slice(&[b, b + 1, b + 2, b, b + 2, b + 3]);
        }
        let f = outline_fade(&m);
        assert_eq!(fade_at(&m, &f, (12, 11)), 1.0, "mid-lip stays opaque");
        assert_eq!(fade_at(&m, &f, (10, 11)), 0.0, "the open -x edge fades");
        assert!(
            f[base as usize..].iter().all(|v| *v == 1.0),
            "side faces never fade"
        );
    }
}
