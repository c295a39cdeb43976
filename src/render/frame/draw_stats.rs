//! What a frame drew ([`DrawStats`]) and what a mesh sync uploaded
//! ([`SyncStats`]), summed over the terrain, the horizon's nodes and the
//! water.

/// What [`super::Renderer::sync_meshes`] did.
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

/// What [`super::Renderer::prepare`] selected for this frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrawStats {
    /// Chunks with GPU buffers.
    pub resident_chunks: usize,
    /// Chunk meshes drawn (inside the view frustum, plus old meshes
    /// fading out of a level change).
    pub drawn_chunks: usize,
    /// `drawn_chunks` by the level (0–3) of the mesh drawn.
    pub drawn_chunks_by_level: [usize; 4],
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
