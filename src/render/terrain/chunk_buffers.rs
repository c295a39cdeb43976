//! Per-chunk GPU vertex and index buffers of the terrain (levels 0–3), and
//! the per-frame terrain draw list: the visible chunks, then the chunks in
//! a level fade, then the horizon's nodes ([`NodeBuffers`], borrowed), all
//! instances of one [`InstanceBuffer`].
//!
//! Uploads follow the meshing pipeline: the frame renderer hands over
//! exactly the chunks whose mesh changed (re-uploaded) or went (dropped), so
//! an edit costs GPU traffic proportional to what it touched; published
//! meshes are staged and promoted all at once. Each frame the chunks are
//! culled on the CPU against the view frustum (chunk mesh bounds,
//! camera-relative; see [`cull_and_sort`]) and sorted front to back, which
//! lets early depth testing skip hidden fragments (valuable on software
//! rasterizers).
//!
//! For the debug overlays each chunk also remembers when it was last
//! promoted (the `remesh` flash), where its skirts begin (`hide-skirts`), and
//! a bind group over its buffers as storage (the barycentric wireframe);
//! what the residency overlay tints comes in per frame as a state code per
//! chunk, so this module knows nothing of the overlays.

use std::time::Instant;

use rustc_hash::FxHashMap;

use crate::mesh::ChunkMesh;
use crate::terrain::storage::coords::ChunkCoord;

use super::super::chunk_draw::{
    ChunkInstance, CullView, DrawOrder, InstanceBuffer, cull_and_sort, mesh_upload_usage,
};
use super::chunk_gpu::ChunkGpu;
use super::gpu_data::{AGE_NEVER_PROMOTED_SECS, level_state_bits};
use super::level_fades::{FadeSide, LevelFades, fade_bits};
use super::node_buffers::{ChunkShow, NodeBuffers, NodeDrawStats};

/// What [`ChunkBuffers::prepare`] selected for this frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TerrainDrawStats {
    /// Chunks with GPU buffers.
    pub resident_chunks: usize,
    /// Chunk meshes drawn: those inside the view frustum, plus the old
    /// meshes of chunks fading out of a level change (one draw each).
    pub drawn_chunks: usize,
    /// [`TerrainDrawStats::drawn_chunks`] by the level (0–3) of the mesh drawn.
    pub drawn_chunks_by_level: [usize; 4],
    /// Triangles in the drawn chunk meshes.
    pub drawn_triangles: usize,
    /// The horizon's nodes drawn.
    pub nodes: NodeDrawStats,
}

/// All chunk buffers plus this frame's instance buffer and draw list.
pub struct ChunkBuffers {
    chunks: FxHashMap<ChunkCoord, ChunkGpu>,
    /// Uploaded but not yet drawn (`None`: the chunk's removal is staged).
    staged: FxHashMap<ChunkCoord, Option<ChunkGpu>>,
    instance_buffer: InstanceBuffer,
    /// Chunks to draw this frame; draw `i` uses instance `i`.
    draws: Vec<ChunkCoord>,
    /// This frame's instances, `instances[i]` for `draws[i]`, then the
    /// fading chunks', then the nodes'.
    instances: Vec<ChunkInstance>,
    /// How mesh contents reach new buffers (see [`mesh_upload_usage`]).
    upload_usage: wgpu::BufferUsages,
    /// Extra buffer usages of new chunk buffers: `upload_usage`, plus
    /// `STORAGE` when the barycentric wireframe may read them.
    extra_usage: wgpu::BufferUsages,
    /// Bumped whenever the drawn set of meshes changes.
    revision: u64,
    /// Old meshes cross-fading out after a level change.
    fades: LevelFades,
    /// This frame's fading chunks: new meshes, then old ones; their
    /// instances follow those of `draws`.
    fade_in_draws: Vec<ChunkCoord>,
    fade_out_draws: Vec<ChunkCoord>,
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
            upload_usage: mesh_upload_usage(device),
            extra_usage: mesh_upload_usage(device),
            revision: 0,
            fades: LevelFades::default(),
            fade_in_draws: Vec::new(),
            fade_out_draws: Vec::new(),
        }
    }

    /// Makes chunk buffers uploaded from now on readable as storage buffers
    /// (needed by the barycentric wireframe).
    pub fn set_storage_readable(&mut self, on: bool) {
        self.extra_usage = if on {
            self.upload_usage | wgpu::BufferUsages::STORAGE
        } else {
            self.upload_usage
        };
    }

    /// The extra usages of new mesh buffers (see
    /// [`ChunkBuffers::set_storage_readable`]); the horizon's nodes use the same.
    pub fn extra_usage(&self) -> wgpu::BufferUsages {
        self.extra_usage
    }

    /// A counter that changes whenever the drawn chunk meshes change
    /// (uploads, promotions, removals), e.g. to re-run the seam audit only then.
    pub fn revision(&self) -> u64 {
        self.revision
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
        match ChunkGpu::create(device, level, mesh, self.extra_usage) {
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

    /// Drops the drawn buffers of `coord` whose mesh is gone (staged
    /// buffers and fades stay); returns whether it had any.
    pub fn drop_drawn(&mut self, coord: ChunkCoord) -> bool {
        let dropped = self.chunks.remove(&coord).is_some();
        if dropped {
            self.revision += 1;
        }
        dropped
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
        match ChunkGpu::create(device, level, mesh, self.extra_usage) {
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

    /// Makes the staged buffers of `coords` the drawn ones (dropping the
    /// old ones), all at once; chunks with nothing staged are left as they
    /// are. Records the time for the `remesh` overlay.
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
    }

    /// Drops the drawn and staged buffers and the fade of `coord`, if any.
    pub fn remove(&mut self, coord: ChunkCoord) {
        if self.chunks.remove(&coord).is_some() {
            self.revision += 1;
        }
        self.staged.remove(&coord);
        self.fades.cancel(coord);
    }

    /// Drops every chunk (e.g. when a different world is loaded).
    pub fn clear(&mut self) {
        self.revision += 1;
        self.chunks.clear();
        self.staged.clear();
        self.draws.clear();
        self.instances.clear();
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

    /// Culls for `view`, orders visible chunks front to back and writes
    /// their camera-relative origins, levels and ages at `now` to the
    /// instance buffer, followed by the chunks in a level fade and then the
    /// nodes `nodes` selects (it also moves their fade clock on). Each
    /// chunk instance carries `state_code_of(chunk)`, the residency
    /// overlay's tint code (0: none).
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        view: &CullView<'_>,
        now: Instant,
        nodes: &mut NodeBuffers,
        state_code_of: impl Fn(ChunkCoord) -> i32,
    ) -> TerrainDrawStats {
        // Chunks in a level fade are drawn by the fade pipeline, after the others.
        self.fades.next_frame();
        nodes.set_fade_clock(self.fades.clock());
        self.cull_chunks(view, now, nodes, &state_code_of);
        let node_stats = nodes.prepare(view.camera_world, view.frustum, &mut self.instances);
        self.instance_buffer.write(device, queue, &self.instances);
        let mut stats = TerrainDrawStats {
            nodes: node_stats,
            resident_chunks: self.chunks.len(),
            ..TerrainDrawStats::default()
        };
        // The meshes `draw` and `draw_fades` issue, in their order.
        let drawn = self
            .draws
            .iter()
            .chain(&self.fade_in_draws)
            .filter_map(|c| self.chunks.get(c))
            .chain(
                self.fade_out_draws
                    .iter()
                    .filter_map(|c| self.fades.outgoing_of(*c)),
            );
        for gpu in drawn {
            stats.drawn_chunks += 1;
            stats.drawn_chunks_by_level[usize::from(gpu.level.min(3))] += 1;
            stats.drawn_triangles += gpu.index_count as usize / 3;
        }
        stats
    }

    /// The chunk part of [`ChunkBuffers::prepare`]: fills `draws`, the fade
    /// lists and their instances (steady, then fading in, then fading out).
    fn cull_chunks(
        &mut self,
        view: &CullView<'_>,
        now: Instant,
        nodes: &NodeBuffers,
        state_code_of: &impl Fn(ChunkCoord) -> i32,
    ) {
        let visible = cull_and_sort(
            self.chunks
                .iter()
                .filter(|(c, _)| nodes.chunk_show(**c) != ChunkShow::Hidden),
            |gpu| gpu.bounds_local,
            view.camera_world,
            view.frustum,
            view.draw_distance_studs,
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
                        level_state_bits(gpu.level, state_code_of(coord)),
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
            view.camera_world,
            view.frustum,
            view.draw_distance_studs,
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
                    level_state_bits(gpu.level, state_code_of(coord))
                        | fade_bits(FadeSide::Outgoing, fades.progress(coord).unwrap_or(1.0)),
                ],
            },
        );
        self.fade_out_draws.clear();
        for v in outgoing {
            self.instances.push(v.item);
            self.fade_out_draws.push(v.coord);
        }
    }

    /// The chunks prepared for this frame with their instance data, front
    /// to back (without the fading ones).
    pub fn drawn(&self) -> impl Iterator<Item = (ChunkCoord, &ChunkInstance)> {
        self.draws.iter().copied().zip(&self.instances)
    }

    /// Issues one indexed draw per prepared chunk (instance `i` for draw
    /// `i`), then one per node `nodes` prepared, stopping before the skirts
    /// when `hide_skirts`. A pipeline with the terrain's vertex layouts and
    /// its bind groups must already be set.
    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>, nodes: &NodeBuffers, hide_skirts: bool) {
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
        nodes.draw(pass, (self.draws.len() + fading) as u32, hide_skirts);
    }

    /// True when chunks or `nodes` cross-fade this frame
    /// ([`ChunkBuffers::draw_fades`]).
    pub fn has_fades(&self, nodes: &NodeBuffers) -> bool {
        !self.fade_in_draws.is_empty() || !self.fade_out_draws.is_empty() || nodes.has_fades()
    }

    /// Issues the draws of the chunks in a level fade, new meshes then old
    /// ones, then of the fading `nodes`; the fade pipeline (`fs_main_fade`)
    /// must be set.
    pub fn draw_fades(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        nodes: &NodeBuffers,
        hide_skirts: bool,
    ) {
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
        nodes.draw_fades(pass, (first + fading) as u32, hide_skirts);
    }

    /// Ends every chunk level fade at once (the frame renderer ends the
    /// nodes' too), so the next frame shows only the current meshes.
    pub fn finish_fades(&mut self) {
        self.fades.clear();
    }

    /// The level cross-fades and their clock (`--no-morph`, the debug
    /// panel's pause and step).
    pub fn fades(&self) -> &LevelFades {
        &self.fades
    }

    /// See [`ChunkBuffers::fades`].
    pub fn fades_mut(&mut self) -> &mut LevelFades {
        &mut self.fades
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
            if let Some(gpu) = self.chunks.get_mut(coord) {
                gpu.ensure_wire_bind_group(device, layout);
            }
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
                .and_then(|g| Some((g, g.wire_bind_group()?)))
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
