//! Per-chunk GPU vertex and index buffers, kept in step with
//! [`WorldMeshes`], and the per-frame list of chunks to draw.
//!
//! Uploads follow [`WorldMeshes::take_changed`]: exactly the chunks whose mesh
//! changed are re-uploaded, and chunks whose mesh is gone are dropped, so an
//! edit costs GPU traffic proportional to what it touched. Each frame the
//! chunks are culled on the CPU against the view frustum (chunk mesh bounds,
//! camera-relative; see [`super::culling`]) and sorted front to back, which
//! lets early depth testing skip hidden fragments (valuable on software
//! rasterizers). Also here: the conversion of a CPU chunk mesh into
//! [`TerrainVertex`]es.
//!
//! Each chunk's water surface lives in [`WaterBuffers`] beside its terrain:
//! uploaded from the same change list, staged and promoted in the same step
//! (so an edit's new terrain and new water appear in the same frame), culled
//! in the same [`ChunkBuffers::prepare`].
//!
//! For the debug overlays each chunk also remembers when it was last
//! promoted (the `remesh` flash), where its skirts begin (`hide-skirts`), and
//! a bind group over its buffers as storage (the barycentric wireframe).

use std::time::Instant;

use glam::{Mat4, Vec3};
use rustc_hash::FxHashMap;
use wgpu::util::DeviceExt;

use crate::camera::Camera;
use crate::mesh::ChunkMesh;
use crate::mesh::water::WaterMesh;
use crate::pipeline::WorldMeshes;
use crate::terrain::storage::coords::ChunkCoord;

use super::culling::{DrawOrder, cull_and_sort};
use super::gpu_data::{ChunkInstance, SKIRT_MARK, TerrainVertex, pack_snorm8};
use super::instance_buffer::InstanceBuffer;
use super::level_fades::{FadeSide, LevelFades, fade_bits};
use super::node_buffers::ChunkShow;
use super::node_buffers::NodeBuffers;
use super::overlays::AGE_NEVER_PROMOTED_SECS;
use super::residency_overlay::{ResidencyView, instance_w};
use super::water_buffers::WaterBuffers;

/// Moved to [`super::culling`]; re-exported so the old path keeps working.
pub use super::culling::Frustum;

/// GPU copy of one chunk's mesh.
pub struct ChunkGpu {
    /// [`TerrainVertex`] buffer.
    pub vertex_buffer: wgpu::Buffer,
    /// `u32` triangle-list index buffer.
    pub index_buffer: wgpu::Buffer,
    /// Number of indices.
    pub index_count: u32,
    /// Number of indices before the first skirt triangle (surface only).
    pub surface_index_count: u32,
    /// Number of vertices.
    pub vertex_count: u32,
    /// Mesh bounds in chunk-local studs `(min, max)`.
    pub bounds_local: (Vec3, Vec3),
    /// Level of detail the mesh was built at.
    pub level: u8,
    /// When [`ChunkBuffers::promote`] last made this mesh visible (`None`
    /// for direct uploads, e.g. at start-up).
    pub promoted_at: Option<Instant>,
    /// Group 1 of the barycentric wireframe (vertex and index buffers as
    /// storage), created on first use.
    wire_bind_group: Option<wgpu::BindGroup>,
}

impl ChunkGpu {
    /// Draws this mesh as instance `instance` of the bound instance buffer,
    /// stopping before the skirts when `hide_skirts`. A pipeline with the
    /// terrain's vertex layouts and its bind groups must already be set.
    pub fn draw_instance(&self, pass: &mut wgpu::RenderPass<'_>, instance: u32, hide_skirts: bool) {
        let count = if hide_skirts {
            self.surface_index_count
        } else {
            self.index_count
        };
        if count == 0 {
            return;
        }
        pass.set_vertex_buffer(0, self.vertex_buffer.slice(..));
        pass.set_index_buffer(self.index_buffer.slice(..), wgpu::IndexFormat::Uint32);
        pass.draw_indexed(0..count, 0, instance..instance + 1);
    }
}

/// What [`ChunkBuffers::sync`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyncStats {
    /// Chunks (re)uploaded.
    pub uploaded: usize,
    /// Chunks whose buffers were dropped because their mesh is gone.
    pub removed: usize,
    /// Chunks whose water surface was (re)uploaded.
    pub water_uploaded: usize,
    /// Bytes written to new vertex and index buffers (terrain and water).
    pub bytes: usize,
}

/// What [`ChunkBuffers::prepare`] selected for this frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrawStats {
    /// Chunks with GPU buffers.
    pub resident_chunks: usize,
    /// Chunks inside the view frustum (drawn).
    pub drawn_chunks: usize,
    /// Triangles in the drawn chunks (terrain only).
    pub drawn_triangles: usize,
    /// Chunks whose water surface is drawn.
    pub drawn_water_chunks: usize,
    /// Water triangles drawn.
    pub drawn_water_triangles: usize,
    /// Horizon nodes drawn (spec §13).
    pub drawn_nodes: usize,
    /// Their triangles.
    pub drawn_node_triangles: usize,
}

impl DrawStats {
    /// Draw calls of the frame's terrain and water.
    pub fn draws(&self) -> usize {
        self.drawn_chunks + self.drawn_nodes + self.drawn_water_chunks
    }

    /// Triangles of the frame's terrain and water.
    pub fn triangles(&self) -> usize {
        self.drawn_triangles + self.drawn_node_triangles + self.drawn_water_triangles
    }
}

/// All chunk buffers plus this frame's instance buffer and draw list.
pub struct ChunkBuffers {
    chunks: FxHashMap<ChunkCoord, ChunkGpu>,
    /// Uploaded but not yet drawn (`None`: the chunk's removal is staged).
    staged: FxHashMap<ChunkCoord, Option<ChunkGpu>>,
    instance_buffer: InstanceBuffer,
    /// Chunks to draw this frame; draw `i` uses instance `i`.
    draws: Vec<ChunkCoord>,
    /// This frame's instances, `instances[i]` for `draws[i]`.
    instances: Vec<ChunkInstance>,
    /// How mesh contents reach new buffers (see [`super::gpu::mesh_upload_usage`]).
    upload_usage: wgpu::BufferUsages,
    /// Extra buffer usages of new chunk buffers: `upload_usage`, plus
    /// `STORAGE` when the barycentric wireframe may read them.
    extra_usage: wgpu::BufferUsages,
    /// Bumped whenever the drawn set of meshes changes.
    revision: u64,
    /// The water surfaces, staged and promoted with the terrain.
    water: WaterBuffers,
    /// The horizon's nodes and the chunks it leaves to the chunk levels.
    nodes: NodeBuffers,
    /// Old meshes cross-fading out after a level change.
    fades: LevelFades,
    /// This frame's fading chunks: new meshes, then old ones; their
    /// instances follow those of `draws`.
    fade_in_draws: Vec<ChunkCoord>,
    fade_out_draws: Vec<ChunkCoord>,
    /// Column states the instances carry for the `residency` overlay.
    residency: Option<ResidencyView>,
}

impl TerrainVertex {
    /// Converts a CPU chunk mesh into GPU vertices (same order, same count);
    /// vertices from `mesh.skirt_start_vertex` on are marked as skirts.
    pub fn from_mesh(mesh: &ChunkMesh) -> Vec<TerrainVertex> {
        let skirt_start = mesh.skirt_start_vertex as usize;
        (0..mesh.positions.len())
            .map(|i| {
                let p = mesh.positions[i];
                let n = mesh.normals.get(i).copied().unwrap_or(glam::Vec3::Y);
                let mark = if i >= skirt_start { SKIRT_MARK } else { 0 };
                TerrainVertex {
                    pos_in_chunk: p.to_array(),
                    normal: [pack_snorm8(n.x), pack_snorm8(n.y), pack_snorm8(n.z), mark],
                    material_ids: mesh.material_ids.get(i).copied().unwrap_or([2; 4]),
                    material_weights: mesh
                        .material_weights
                        .get(i)
                        .copied()
                        .unwrap_or([255, 0, 0, 0]),
                }
            })
            .collect()
    }
}

impl ChunkBuffers {
    /// An empty set.
    pub fn new(device: &wgpu::Device) -> Self {
        ChunkBuffers {
            chunks: FxHashMap::default(),
            staged: FxHashMap::default(),
            instance_buffer: InstanceBuffer::new(device, "chunk instances", 256),
            draws: Vec::new(),
            instances: Vec::new(),
            upload_usage: super::gpu::mesh_upload_usage(device),
            extra_usage: super::gpu::mesh_upload_usage(device),
            revision: 0,
            water: WaterBuffers::new(device),
            nodes: NodeBuffers::default(),
            fades: LevelFades::default(),
            fade_in_draws: Vec::new(),
            fade_out_draws: Vec::new(),
            residency: None,
        }
    }

    /// Sets the column states the next [`ChunkBuffers::prepare`] writes
    /// into the instances (`None`: no residency tint).
    pub fn set_residency(&mut self, view: Option<ResidencyView>) {
        self.residency = view;
    }

    /// The column states set with [`ChunkBuffers::set_residency`].
    pub fn residency(&self) -> Option<&ResidencyView> {
        self.residency.as_ref()
    }

    /// Makes chunk buffers uploaded from now on readable as storage buffers
    /// (needed by the barycentric wireframe; see
    /// [`super::overlays::WireframeMode::Barycentric`]).
    pub fn set_storage_readable(&mut self, on: bool) {
        self.extra_usage = if on {
            self.upload_usage | wgpu::BufferUsages::STORAGE
        } else {
            self.upload_usage
        };
    }

    /// A counter that changes whenever the drawn meshes change (uploads,
    /// promotions, removals), e.g. to re-run the seam audit only then.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Uploads exactly the chunks `meshes` reports as changed since the last
    /// call (terrain and water) and drops the buffers of chunks whose mesh
    /// or water is gone.
    pub fn sync(&mut self, device: &wgpu::Device, meshes: &mut WorldMeshes) -> SyncStats {
        let mut stats = SyncStats::default();
        for coord in meshes.take_changed() {
            match meshes.water_of(coord) {
                Some(water) if !water.is_empty() => {
                    stats.bytes += self.water.upload(device, coord, water);
                    stats.water_uploaded += 1;
                }
                _ => {
                    self.water.remove(coord);
                }
            }
            match meshes.get(coord) {
                Some(mesh) if !mesh.is_empty() => {
                    let level = meshes.level_of(coord).unwrap_or(0);
                    stats.bytes += self.upload(device, coord, level, mesh);
                    stats.uploaded += 1;
                }
                _ => {
                    if self.chunks.remove(&coord).is_some() {
                        stats.removed += 1;
                        self.revision += 1;
                    }
                }
            }
        }
        stats
    }

    /// Creates (or replaces) the buffers of one chunk. Returns bytes uploaded.
    pub fn upload(
        &mut self,
        device: &wgpu::Device,
        coord: ChunkCoord,
        level: u8,
        mesh: &ChunkMesh,
    ) -> usize {
        self.revision += 1;
        match Self::create(device, level, mesh, self.extra_usage) {
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

    /// Uploads `mesh` for `coord` into a staging slot without drawing it
    /// (an empty mesh stages the chunk's removal). Returns bytes uploaded.
    pub fn stage(
        &mut self,
        device: &wgpu::Device,
        coord: ChunkCoord,
        level: u8,
        mesh: &ChunkMesh,
    ) -> usize {
        match Self::create(device, level, mesh, self.extra_usage) {
            Some((gpu, bytes)) => {
                self.staged.insert(coord, Some(gpu));
                bytes
            }
            None => {
                self.staged.insert(coord, None);
                0
            }
        }
    }

    /// Uploads the water surface `water` for `coord` into a staging slot
    /// without drawing it (an empty surface stages the water's removal);
    /// [`ChunkBuffers::promote`] shows it together with the chunk's terrain.
    /// Returns bytes uploaded.
    pub fn stage_water(
        &mut self,
        device: &wgpu::Device,
        coord: ChunkCoord,
        water: &WaterMesh,
    ) -> usize {
        self.water.stage(device, coord, water)
    }

    /// The water surfaces.
    pub fn water(&self) -> &WaterBuffers {
        &self.water
    }

    /// Makes the staged buffers (terrain and water) of `coords` the drawn
    /// ones (dropping the old ones), all at once; chunks with nothing staged
    /// are left as they are (a level-only change keeps its water).
    /// Records the time for the `remesh` overlay.
    pub fn promote(&mut self, coords: &[ChunkCoord]) {
        self.promote_at(coords, Instant::now());
    }

    /// [`ChunkBuffers::promote`] at a given time.
    pub fn promote_at(&mut self, coords: &[ChunkCoord], now: Instant) {
        self.revision += 1;
        for coord in coords {
            match self.staged.remove(coord) {
                Some(Some(mut gpu)) => {
                    gpu.promoted_at = Some(now);
                    let level = gpu.level;
                    if let Some(old) = self.chunks.insert(*coord, gpu)
                        && old.level != level
                    {
                        self.fades.begin(*coord, old);
                    }
                }
                Some(None) => {
                    self.chunks.remove(coord);
                    self.fades.cancel(*coord);
                }
                None => {}
            }
        }
        self.water.promote(coords);
    }

    /// GPU buffers for `mesh` (meshed at `level`) and their size in bytes;
    /// `None` for an empty mesh. Shared with the horizon's nodes.
    pub(super) fn create_gpu(
        device: &wgpu::Device,
        level: u8,
        mesh: &ChunkMesh,
        extra_usage: wgpu::BufferUsages,
    ) -> Option<(ChunkGpu, usize)> {
        Self::create(device, level, mesh, extra_usage)
    }

    /// GPU buffers for `mesh` and their size in bytes; `None` for an empty mesh.
    fn create(
        device: &wgpu::Device,
        level: u8,
        mesh: &ChunkMesh,
        extra_usage: wgpu::BufferUsages,
    ) -> Option<(ChunkGpu, usize)> {
        let bounds_local = mesh.bounds_local()?;
        let vertices = TerrainVertex::from_mesh(mesh);
        let vertex_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("chunk vertices"),
            contents: bytemuck::cast_slice(&vertices),
            usage: wgpu::BufferUsages::VERTEX | extra_usage,
        });
        let index_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("chunk indices"),
            contents: bytemuck::cast_slice(&mesh.indices),
            usage: wgpu::BufferUsages::INDEX | extra_usage,
        });
        let index_count = mesh.indices.len() as u32;
        let bytes = std::mem::size_of_val(vertices.as_slice()) + mesh.indices.len() * 4;
        Some((
            ChunkGpu {
                vertex_buffer,
                index_buffer,
                index_count,
                surface_index_count: mesh.skirt_start_index.min(index_count),
                vertex_count: vertices.len() as u32,
                bounds_local,
                level,
                promoted_at: None,
                wire_bind_group: None,
            },
            bytes,
        ))
    }

    /// Drops the buffers (terrain and water) of `coord`, if any.
    pub fn remove(&mut self, coord: ChunkCoord) {
        if self.chunks.remove(&coord).is_some() {
            self.revision += 1;
        }
        self.staged.remove(&coord);
        self.water.remove(coord);
        self.fades.cancel(coord);
    }

    /// Drops every chunk (e.g. when a different world is loaded).
    pub fn clear(&mut self) {
        self.revision += 1;
        self.chunks.clear();
        self.staged.clear();
        self.draws.clear();
        self.instances.clear();
        self.water.clear();
        self.nodes.clear();
        self.fades.clear();
        self.fade_in_draws.clear();
        self.fade_out_draws.clear();
    }

    /// Number of chunks with GPU buffers.
    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    /// True when no chunk has GPU buffers.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// The GPU data of `coord`, if resident.
    pub fn get(&self, coord: ChunkCoord) -> Option<&ChunkGpu> {
        self.chunks.get(&coord)
    }

    /// Culls against `camera`'s frustum (`clip_from_world` must be the
    /// camera-relative matrix used for drawing) and `draw_distance_studs`,
    /// orders visible chunks front to back and writes their camera-relative
    /// origins, levels and ages at `now` to the instance buffer; culls and
    /// orders the water surfaces the same way (back to front). With a
    /// [`ChunkBuffers::set_residency`] view, each instance carries its
    /// column's residency tint.
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        camera: &Camera,
        clip_from_world: Mat4,
        draw_distance_studs: f32,
        now: Instant,
    ) -> DrawStats {
        let residency = self.residency.as_ref();
        let frustum = Frustum::from_clip_from_world(clip_from_world);
        // Chunks in a level fade are drawn by the fade pipeline, after the others.
        self.fades.next_frame();
        self.nodes.set_fade_clock(self.fades.clock());
        let nodes = &self.nodes;
        let visible = cull_and_sort(
            self.chunks
                .iter()
                .filter(|(c, _)| nodes.chunk_show(**c) != ChunkShow::Hidden),
            |gpu| gpu.bounds_local,
            camera.pos_world,
            &frustum,
            draw_distance_studs,
            DrawOrder::FrontToBack,
            |coord, origin_rel, gpu| {
                let age = gpu.promoted_at.map_or(AGE_NEVER_PROMOTED_SECS, |t| {
                    now.saturating_duration_since(t)
                        .as_secs_f32()
                        .min(AGE_NEVER_PROMOTED_SECS)
                });
                ChunkInstance {
                    chunk_origin_rel: [origin_rel.x, origin_rel.y, origin_rel.z, age],
                    chunk_coord: [
                        coord.0.x,
                        coord.0.y,
                        coord.0.z,
                        instance_w(gpu.level, residency.and_then(|r| r.tint_of(coord))),
                    ],
                }
            },
        );
        let fades = &self.fades;
        // A chunk handed between the chunks and a node fades with the node;
        // otherwise a level change of its own fades it.
        let fade_of = |coord: ChunkCoord| match nodes.chunk_show(coord) {
            ChunkShow::Fading(side, t) => Some(fade_bits(side, t)),
            _ => fades
                .progress(coord)
                .map(|t| fade_bits(FadeSide::Incoming, t)),
        };
        let (fading, steady): (Vec<_>, Vec<_>) = visible
            .into_iter()
            .partition(|v| fade_of(v.coord).is_some());
        self.instances = steady.iter().map(|v| v.item).collect();
        self.draws = steady.iter().map(|v| v.coord).collect();
        self.fade_in_draws.clear();
        for v in &fading {
            let mut instance = v.item;
            instance.chunk_coord[3] |= fade_of(v.coord).unwrap_or(0);
            self.instances.push(instance);
            self.fade_in_draws.push(v.coord);
        }
        let outgoing = cull_and_sort(
            fades
                .outgoing()
                .filter(|(c, _)| nodes.chunk_show(**c) == ChunkShow::Steady),
            |gpu| gpu.bounds_local,
            camera.pos_world,
            &frustum,
            draw_distance_studs,
            DrawOrder::FrontToBack,
            |coord, origin_rel, gpu| ChunkInstance {
                chunk_origin_rel: [
                    origin_rel.x,
                    origin_rel.y,
                    origin_rel.z,
                    AGE_NEVER_PROMOTED_SECS,
                ],
                chunk_coord: [
                    coord.0.x,
                    coord.0.y,
                    coord.0.z,
                    instance_w(gpu.level, residency.and_then(|r| r.tint_of(coord)))
                        | fade_bits(FadeSide::Outgoing, fades.progress(coord).unwrap_or(1.0)),
                ],
            },
        );
        self.fade_out_draws.clear();
        for v in outgoing {
            self.instances.push(v.item);
            self.fade_out_draws.push(v.coord);
        }
        let node_stats = self
            .nodes
            .prepare(camera.pos_world, &frustum, &mut self.instances);
        self.instance_buffer.write(device, queue, &self.instances);
        let water = self
            .water
            .prepare(device, queue, camera, &frustum, draw_distance_studs);
        DrawStats {
            drawn_nodes: node_stats.nodes,
            drawn_node_triangles: node_stats.triangles,
            drawn_water_chunks: water.chunks,
            drawn_water_triangles: water.triangles,
            resident_chunks: self.chunks.len(),
            drawn_chunks: self.draws.len() + self.fade_in_draws.len(),
            drawn_triangles: self
                .draws
                .iter()
                .chain(&self.fade_in_draws)
                .filter_map(|c| self.chunks.get(c))
                .chain(
                    self.fade_out_draws
                        .iter()
                        .filter_map(|c| self.fades.outgoing_of(*c)),
                )
                .map(|g| g.index_count as usize / 3)
                .sum(),
        }
    }

    /// The chunks prepared for this frame with their instance data, front to back.
    pub fn drawn(&self) -> impl Iterator<Item = (ChunkCoord, &ChunkInstance)> {
        self.draws.iter().copied().zip(&self.instances)
    }

    /// Issues one indexed draw per prepared chunk (instance `i` for draw
    /// `i`), stopping before the skirts when `hide_skirts`. A pipeline with
    /// the terrain's vertex layouts and its bind groups must already be set.
    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>, hide_skirts: bool) {
        if self.instances.is_empty() {
            return;
        }
        pass.set_vertex_buffer(1, self.instance_buffer.buffer().slice(..));
        for (i, coord) in self.draws.iter().enumerate() {
            let Some(gpu) = self.chunks.get(coord) else {
                continue;
            };
            gpu.draw_instance(pass, i as u32, hide_skirts);
        }
        let fading = self.fade_in_draws.len() + self.fade_out_draws.len();
        self.nodes
            .draw(pass, (self.draws.len() + fading) as u32, hide_skirts);
    }

    /// True when chunks or nodes cross-fade this frame
    /// ([`ChunkBuffers::draw_fades`]).
    pub fn has_fades(&self) -> bool {
        !self.fade_in_draws.is_empty() || !self.fade_out_draws.is_empty() || self.nodes.has_fades()
    }

    /// Issues the draws of the chunks in a level fade, new meshes then old
    /// ones; the fade pipeline (`fs_main_fade`) must be set.
    pub fn draw_fades(&self, pass: &mut wgpu::RenderPass<'_>, hide_skirts: bool) {
        let first = self.draws.len();
        let incoming = self.fade_in_draws.iter().map(|c| self.chunks.get(c));
        let outgoing = self
            .fade_out_draws
            .iter()
            .map(|c| self.fades.outgoing_of(*c));
        for (i, gpu) in incoming.chain(outgoing).enumerate() {
            let Some(gpu) = gpu else {
                continue;
            };
            gpu.draw_instance(pass, (first + i) as u32, hide_skirts);
        }
        let fading = self.fade_in_draws.len() + self.fade_out_draws.len();
        self.nodes
            .draw_fades(pass, (first + fading) as u32, hide_skirts);
    }

    /// Ends every level fade of chunks and nodes at once, so the next frame
    /// shows only the current meshes (a headless screenshot after a replay).
    pub fn finish_fades(&mut self) {
        self.fades.clear();
        self.nodes.finish_fades();
    }

    /// The level cross-fades (`--no-morph`, the debug panel's pause and step).
    pub fn fades_mut(&mut self) -> &mut LevelFades {
        &mut self.fades
    }

    /// Uploads the nodes `horizon` changed and takes its draw list (see
    /// [`NodeBuffers::sync`]). Returns the bytes uploaded.
    pub fn sync_horizon(
        &mut self,
        device: &wgpu::Device,
        horizon: &mut crate::pipeline::horizon::Horizon,
    ) -> usize {
        let bytes = self.nodes.sync(
            device,
            horizon,
            self.extra_usage,
            self.fades.clock(),
            self.fades.is_enabled(),
        );
        if self.nodes.draw_list_changed() {
            self.revision += 1;
        }
        bytes
    }

    /// The horizon's node buffers.
    pub fn nodes(&self) -> &NodeBuffers {
        &self.nodes
    }

    /// Creates the barycentric-wireframe bind group (`layout`: binding 0 =
    /// vertices, binding 1 = indices, both read-only storage) of every
    /// prepared chunk that lacks one. The buffers must have been uploaded
    /// after [`ChunkBuffers::set_storage_readable`]`(true)`; chunks whose
    /// buffers are not storage-readable are skipped.
    pub fn ensure_wire_bind_groups(
        &mut self,
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
    ) {
        for coord in &self.draws {
            let Some(gpu) = self.chunks.get_mut(coord) else {
                continue;
            };
            if gpu.wire_bind_group.is_some()
                || !gpu
                    .vertex_buffer
                    .usage()
                    .contains(wgpu::BufferUsages::STORAGE)
            {
                continue;
            }
            gpu.wire_bind_group = Some(device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("chunk wireframe storage"),
                layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: gpu.vertex_buffer.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: gpu.index_buffer.as_entire_binding(),
                    },
                ],
            }));
        }
    }

    /// Issues one non-indexed draw of `index_count` vertices per prepared
    /// chunk with a wireframe bind group (see
    /// [`ChunkBuffers::ensure_wire_bind_groups`]): the barycentric wireframe
    /// pipeline pulls vertices through the indices itself. Its instance
    /// buffer goes to slot 0 and its bind group to group 1.
    pub fn draw_pulled(&self, pass: &mut wgpu::RenderPass<'_>, hide_skirts: bool) {
        if self.draws.is_empty() {
            return;
        }
        pass.set_vertex_buffer(0, self.instance_buffer.buffer().slice(..));
        for (i, coord) in self.draws.iter().enumerate() {
            let Some((gpu, bind_group)) = self
                .chunks
                .get(coord)
                .and_then(|g| Some((g, g.wire_bind_group.as_ref()?)))
            else {
                continue;
            };
            let count = if hide_skirts {
                gpu.surface_index_count
            } else {
                gpu.index_count
            };
            let i = i as u32;
            pass.set_bind_group(1, bind_group, &[]);
            pass.draw(0..count, i..i + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skirt_vertices_are_marked() {
        let mut mesh = ChunkMesh::default();
        for i in 0..5 {
            mesh.positions.push(glam::Vec3::splat(i as f32));
            mesh.normals.push(glam::Vec3::Y);
        }
        mesh.skirt_start_vertex = 3;
        let v = TerrainVertex::from_mesh(&mesh);
        let marks: Vec<i8> = v.iter().map(|v| v.normal[3]).collect();
        assert_eq!(marks, [0, 0, 0, SKIRT_MARK, SKIRT_MARK]);
        assert_eq!(v[0].normal[1], 127);
    }
}
