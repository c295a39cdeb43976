//! GPU buffers of the horizon's nodes (spec §13) and which chunks the
//! horizon leaves to the chunk levels.
//!
//! Node meshes are chunk meshes with a larger origin and sample spacing, so
//! they use the terrain pipeline, its vertex type and its instance layout
//! unchanged: an instance carries the node's camera-relative origin and the
//! chunk coordinate of its minimum corner (the shader's texture lattices are
//! global, so textures stay continuous across chunks and nodes). The draw
//! list comes from [`Horizon::draws`]: its nodes are drawn here and only the
//! chunks of its [`HorizonDraw::Chunks`] entries are drawn by the chunk list.

use glam::{DVec3, Vec3};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::camera::Frustum;
use crate::pipeline::horizon::{Horizon, HorizonDraw};
use crate::terrain::coords::ChunkCoord;
use crate::terrain::node::{FIRST_NODE_LEVEL, NodeKey};

use super::chunk_buffers::{ChunkBuffers, ChunkGpu};
use super::gpu_data::ChunkInstance;
use super::overlays::AGE_NEVER_PROMOTED_SECS;
use super::residency_overlay::instance_w;

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
    /// Nodes drawn this frame, front to back, with their triangle counts.
    drawn: Vec<NodeKey>,
    scratch: Vec<(f32, NodeKey, ChunkInstance)>,
    /// Distance from the camera to the farthest drawn node's centre, studs.
    reach_studs: f32,
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
    pub fn sync(
        &mut self,
        device: &wgpu::Device,
        horizon: &mut Horizon,
        extra_usage: wgpu::BufferUsages,
    ) -> usize {
        let mut bytes = 0;
        for key in horizon.take_changed() {
            match horizon
                .mesh(key)
                .and_then(|m| ChunkBuffers::create_gpu(device, key.level, m, extra_usage))
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
        self.active = true;
        bytes
    }

    /// True when the chunk list should draw `coord`: always without a
    /// horizon, else only inside the level-4 nodes it hands to the chunks.
    pub fn draws_chunk(&self, coord: ChunkCoord) -> bool {
        !self.active
            || self
                .chunk_nodes
                .contains(&NodeKey::containing_chunk(FIRST_NODE_LEVEL, coord))
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
            let Some(gpu) = self.nodes.get(&key) else {
                continue;
            };
            let origin_rel = (key.origin_world() - camera_pos_world).as_vec3();
            let (lo, hi) = (
                origin_rel + gpu.bounds_local.0,
                origin_rel + gpu.bounds_local.1,
            );
            if !frustum.intersects_aabb(lo, hi) {
                continue;
            }
            let centre: Vec3 = (lo + hi) * 0.5;
            let c = key.min_chunk().0;
            self.scratch.push((
                centre.length_squared(),
                key,
                ChunkInstance {
                    chunk_origin_rel: [
                        origin_rel.x,
                        origin_rel.y,
                        origin_rel.z,
                        AGE_NEVER_PROMOTED_SECS,
                    ],
                    chunk_coord: [c.x, c.y, c.z, instance_w(key.level, None)],
                },
            ));
        }
        self.scratch.sort_by(|a, b| a.0.total_cmp(&b.0));
        self.reach_studs = self.scratch.last().map_or(0.0, |(d2, _, _)| d2.sqrt());
        self.drawn.clear();
        let mut stats = NodeDrawStats::default();
        for (_, key, instance) in &self.scratch {
            self.drawn.push(*key);
            instances.push(*instance);
            stats.nodes += 1;
            stats.triangles += self
                .nodes
                .get(key)
                .map_or(0, |g| g.index_count as usize / 3);
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

    /// Distance from the camera to the farthest node drawn this frame,
    /// studs (0 without nodes): the fog's reach.
    pub fn reach_studs(&self) -> f32 {
        self.reach_studs
    }

    /// Drawn nodes per level this frame, with triangles (index = level).
    pub fn triangles_by_level(&self) -> Vec<usize> {
        let mut out = Vec::new();
        for key in &self.drawn {
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
        self.active = false;
    }
}
