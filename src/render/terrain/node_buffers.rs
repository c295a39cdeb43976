//! GPU buffers of the horizon's nodes (spec §13) and which chunks the
//! horizon leaves to the chunk levels.
//!
//! Node meshes are chunk meshes with a larger origin and sample spacing, so
//! they use the terrain pipeline, its vertex type and its instance layout
//! unchanged: an instance carries the node's camera-relative origin and the
//! chunk coordinate of its minimum corner (the shader's texture lattices are
//! global, so textures stay continuous across chunks and nodes). The draw
//! list comes from [`Horizon::draws`]: its nodes are drawn here and only the
//! chunks of its [`HorizonDraw::Chunks`] entries are drawn by the chunk list
//! ([`super::chunk_buffers`], which appends the node instances this module
//! prepares to its own and draws them through [`NodeBuffers::draw`]).

use glam::{DVec3, Vec3};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::camera::Frustum;
use crate::pipeline::horizon::{Horizon, HorizonDraw};
use crate::terrain::storage::coords::ChunkCoord;
use crate::terrain::storage::node::{FIRST_NODE_LEVEL, NodeKey};

use super::super::chunk_draw::ChunkInstance;
use super::chunk_gpu::ChunkGpu;
use super::gpu_data::{AGE_NEVER_PROMOTED_SECS, level_state_bits};
use super::horizon_fades::HorizonFades;
use super::level_fades::{FadeSide, fade_bits};

/// Node buffers and the horizon's last draw list.
#[derive(Default)]
pub struct NodeBuffers {
    nodes: FxHashMap<NodeKey, ChunkGpu>,
    /// Level-4 nodes whose chunks are drawn.
    chunk_nodes: FxHashSet<NodeKey>,
    /// Nodes the horizon draws (before culling).
    selected: Vec<NodeKey>,
    /// True once a horizon has been synced: chunks outside `chunk_nodes`
    /// are then not drawn.
    active: bool,
    /// Nodes drawn this frame without a fade, front to back.
    drawn: Vec<NodeKey>,
    /// Nodes drawn this frame in a fade (fade pipeline), after `drawn`.
    drawn_fading: Vec<NodeKey>,
    /// The horizon's level-change fades.
    fades: HorizonFades,
    /// See [`NodeBuffers::draw_list_changed`].
    draw_list_changed: bool,
    /// Bumped by every [`NodeBuffers::sync`] that changed the draw list.
    revision: u64,
    scratch: Vec<(f32, NodeKey, ChunkInstance)>,
    /// Distance from the camera to the farthest drawn node's centre, studs.
    reach_studs: f32,
}

/// How the chunk list draws a chunk under the horizon.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ChunkShow {
    /// Not drawn: a node covers it.
    Hidden,
    /// Drawn as it is.
    Steady,
    /// Drawn in a fade between its chunks and a node: side and progress.
    Fading(FadeSide, f32),
}

/// What [`NodeBuffers::prepare`] selected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeDrawStats {
    /// Nodes drawn.
    pub nodes: usize,
    /// Their triangles.
    pub triangles: usize,
}

impl NodeBuffers {
    /// Uploads the nodes `horizon` built or dropped since the last call and
    /// takes its draw list. Returns the bytes uploaded.
    /// Level changes cross-fade on fade clock `clock` when `fades_enabled`.
    pub fn sync(
        &mut self,
        device: &wgpu::Device,
        horizon: &mut Horizon,
        extra_usage: wgpu::BufferUsages,
        clock: u32,
        fades_enabled: bool,
    ) -> usize {
        let mut bytes = 0;
        for key in horizon.take_changed() {
            match horizon
                .mesh(key)
                .and_then(|m| ChunkGpu::create(device, key.level, m, extra_usage))
            {
                Some((gpu, b)) => {
                    bytes += b;
                    self.nodes.insert(key, gpu);
                }
                None => {
                    self.nodes.remove(&key);
                }
            }
        }
        self.chunk_nodes.clear();
        self.selected.clear();
        for d in horizon.draws() {
            match *d {
                HorizonDraw::Chunks(k) => {
                    self.chunk_nodes.insert(k);
                }
                HorizonDraw::Node(k) => self.selected.push(k),
            }
        }
        self.fades.update(
            horizon.draws(),
            clock,
            fades_enabled,
            horizon.extent_cells(),
        );
        self.draw_list_changed = bytes > 0 || self.fades.draw_list_changed();
        if self.draw_list_changed {
            self.revision += 1;
        }
        self.active = true;
        bytes
    }

    /// A counter that changes whenever a [`NodeBuffers::sync`] changes the
    /// drawn nodes or their meshes.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// True when the last [`NodeBuffers::sync`] changed the drawn nodes or
    /// their meshes.
    pub fn draw_list_changed(&self) -> bool {
        self.draw_list_changed
    }

    /// How the chunk list should draw `coord`: always steady without a
    /// horizon, else only inside the level-4 nodes the horizon hands to the
    /// chunks, or hands back while their fade runs.
    pub fn chunk_show(&self, coord: ChunkCoord) -> ChunkShow {
        if !self.active {
            return ChunkShow::Steady;
        }
        let draw = HorizonDraw::Chunks(NodeKey::containing_chunk(FIRST_NODE_LEVEL, coord));
        let fade = self.fades.fade_of(draw);
        if self
            .chunk_nodes
            .contains(&NodeKey::containing_chunk(FIRST_NODE_LEVEL, coord))
        {
            fade.map_or(ChunkShow::Steady, |(side, t)| ChunkShow::Fading(side, t))
        } else {
            match fade {
                Some((FadeSide::Outgoing, t)) => ChunkShow::Fading(FadeSide::Outgoing, t),
                _ => ChunkShow::Hidden,
            }
        }
    }

    /// Notes chunks whose meshes were evicted (a fade handing them back to
    /// their node ends: see [`HorizonFades::note_evicted_chunks`]).
    pub fn note_evicted_chunks(&mut self, coords: &[ChunkCoord]) {
        self.fades.note_evicted_chunks(coords);
    }

    /// Ends the horizon's fades at once (see [`HorizonFades::finish`]).
    pub fn finish_fades(&mut self) {
        self.fades.finish();
    }

    /// Moves the fade clock on to `clock` (once a frame, before prepare).
    pub fn set_fade_clock(&mut self, clock: u32) {
        self.fades.set_clock(clock);
    }

    /// Culls the selected nodes against `frustum` (camera-relative) and
    /// appends their instances, front to back, to `instances`.
    pub fn prepare(
        &mut self,
        camera_pos_world: DVec3,
        frustum: &Frustum,
        instances: &mut Vec<ChunkInstance>,
    ) -> NodeDrawStats {
        self.scratch.clear();
        for &key in &self.selected {
            if let Some(gpu) = self.nodes.get(&key) {
                push_node_instance(&mut self.scratch, key, gpu, camera_pos_world, frustum);
            }
        }
        // Nodes fading out of the draw list are still drawn.
        for (draw, _) in self.fades.outgoing() {
            let HorizonDraw::Node(key) = draw else {
                continue;
            };
            if let Some(gpu) = self.nodes.get(&key) {
                push_node_instance(&mut self.scratch, key, gpu, camera_pos_world, frustum);
            }
        }
        self.scratch.sort_by(|a, b| a.0.total_cmp(&b.0));
        self.reach_studs = self.scratch.last().map_or(0.0, |(d2, _, _)| d2.sqrt());
        self.drawn.clear();
        self.drawn_fading.clear();
        let mut stats = NodeDrawStats::default();
        for pass in [false, true] {
            for (_, key, instance) in &self.scratch {
                let fade = self.fades.fade_of(HorizonDraw::Node(*key));
                if fade.is_some() != pass {
                    continue;
                }
                let mut instance = *instance;
                match fade {
                    Some((side, t)) => {
                        instance.chunk_coord[3] |= fade_bits(side, t);
                        self.drawn_fading.push(*key);
                    }
                    None => self.drawn.push(*key),
                }
                instances.push(instance);
                stats.nodes += 1;
                stats.triangles += self
                    .nodes
                    .get(key)
                    .map_or(0, |g| g.index_count as usize / 3);
            }
        }
        stats
    }

    /// Issues one indexed draw per node prepared this frame; node `i` uses
    /// instance `first_instance + i`.
    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>, first_instance: u32, hide_skirts: bool) {
        for (i, key) in self.drawn.iter().enumerate() {
            let Some(gpu) = self.nodes.get(key) else {
                continue;
            };
            gpu.draw_instance(pass, first_instance + i as u32, hide_skirts);
        }
    }

    /// Issues the draws of the nodes in a fade; the fade pipeline
    /// (`fs_main_fade`) must be set. Node `i` of them uses instance
    /// `first_instance + i`, where `first_instance` is the one given to
    /// [`NodeBuffers::draw`].
    pub fn draw_fades(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        first_instance: u32,
        hide_skirts: bool,
    ) {
        let first = first_instance + self.drawn.len() as u32;
        for (i, key) in self.drawn_fading.iter().enumerate() {
            if let Some(gpu) = self.nodes.get(key) {
                gpu.draw_instance(pass, first + i as u32, hide_skirts);
            }
        }
    }

    /// True when nodes are drawn in a fade this frame.
    pub fn has_fades(&self) -> bool {
        !self.drawn_fading.is_empty()
    }

    /// Distance from the camera to the farthest node drawn this frame,
    /// studs (0 without nodes): the fog's reach.
    pub fn reach_studs(&self) -> f32 {
        self.reach_studs
    }

    /// Drawn nodes per level this frame, with triangles (index = level).
    pub fn triangles_by_level(&self) -> Vec<usize> {
        let mut out = Vec::new();
        for key in self.drawn.iter().chain(&self.drawn_fading) {
            let level = key.level as usize;
            if out.len() <= level {
                out.resize(level + 1, 0);
            }
            out[level] += self
                .nodes
                .get(key)
                .map_or(0, |g| g.index_count as usize / 3);
        }
        out
    }

    /// Drops every node (a different world).
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.chunk_nodes.clear();
        self.selected.clear();
        self.drawn.clear();
        self.drawn_fading.clear();
        self.fades.clear();
        self.active = false;
    }
}

/// Appends `key`'s instance to `scratch` (with its squared camera distance,
/// for sorting) when its box meets `frustum` (camera-relative).
fn push_node_instance(
    scratch: &mut Vec<(f32, NodeKey, ChunkInstance)>,
    key: NodeKey,
    gpu: &ChunkGpu,
    camera_pos_world: DVec3,
    frustum: &Frustum,
) {
    let origin_rel = (key.origin_world() - camera_pos_world).as_vec3();
    let (lo, hi) = (
        origin_rel + gpu.bounds_local.0,
        origin_rel + gpu.bounds_local.1,
    );
    if !frustum.intersects_aabb(lo, hi) {
        return;
    }
    let centre: Vec3 = (lo + hi) * 0.5;
    let c = key.min_chunk().0;
    scratch.push((
        centre.length_squared(),
        key,
        ChunkInstance {
            chunk_origin_rel: [
                origin_rel.x,
                origin_rel.y,
                origin_rel.z,
                AGE_NEVER_PROMOTED_SECS,
            ],
            chunk_coord: [c.x, c.y, c.z, level_state_bits(key.level, 0)],
        },
    ));
}
