//! Pass 2 of the extraction: quads and the vertices they share. Each quad
//! joins one vertex of each of its 4 surface cubes; a cube keeps a chain of
//! vertices, one per [`vertex_key`] (its material set, spec §5), so quads
//! with the same set share a vertex and a cube on a material border gets
//! one vertex per set. Also the corner bytes of a cube that the material
//! sets and the weights read.

use super::{Cube, NO_SLOT, Vertex};
use crate::mesh::field::SampleField;
use crate::mesh::materials::{CornerMaterials, QuadSet, select_quad_set, select_small_quad_set};

pub(super) struct Emitter<'a> {
    pub(super) cubes: &'a mut [Cube],
    pub(super) field: &'a SampleField,
    pub(super) vertices: &'a mut Vec<Vertex>,
    pub(super) indices: &'a mut Vec<u32>,
}

impl Emitter<'_> {
    /// Emits the quad joining the vertices of 4 surface cubes (slots in
    /// `cubes`), given in the order that faces +axis; reversed when the lower
    /// sample is outside.
    #[inline(always)]
    pub(super) fn quad(&mut self, slots: [usize; 4], lower_inside: bool) {
        let mut masks = [0u32; 4];
        for i in 0..4 {
            masks[i] = self.cubes[slots[i]].mask;
        }
        let m = masks[0];
        let mut v = [0u32; 4];
        if m & m.wrapping_sub(1) == 0 && m != 0 && masks[1] == m && masks[2] == m && masks[3] == m {
            // One material on all 4 vertices: the set is just that material.
            for i in 0..4 {
                v[i] = match self.find_vertex(slots[i], m as u64) {
                    Ok(index) => index,
                    Err(last) => self.add_vertex(slots[i], last, m as u64),
                };
            }
        } else {
            v = self.blended_quad(slots, masks);
        }
        // [v0, v1, v2, v0, v2, v3], or with each pair after v0 swapped when
        // the lower sample is outside; branch-free, as the winding of
        // neighbouring quads is unpredictable.
        let swap = (lower_inside as u32).wrapping_sub(1);
        let d12 = (v[1] ^ v[2]) & swap;
        let d23 = (v[2] ^ v[3]) & swap;
        let quad = [v[0], v[1] ^ d12, v[2] ^ d12, v[0], v[2] ^ d23, v[3] ^ d23];
        self.indices.extend_from_slice(&quad);
    }

    /// The vertices of a quad whose cubes do not all carry the same single
    /// material: picks the quad's set, then each cube's vertex for it.
    #[inline(always)]
    fn blended_quad(&mut self, slots: [usize; 4], masks: [u32; 4]) -> [u32; 4] {
        let mut v = [0u32; 4];
        if let Some(set_key) = select_small_quad_set(masks) {
            for i in 0..4 {
                let key = vertex_key(set_key, masks[i]);
                v[i] = match self.find_vertex(slots[i], key) {
                    Ok(index) => index,
                    Err(last) => self.add_vertex(slots[i], last, key),
                };
            }
        } else {
            let corners = slots.map(|s| corner_materials(self.field, self.cubes[s].key as usize));
            let set = select_quad_set([&corners[0], &corners[1], &corners[2], &corners[3]]);
            let set_key = set.key();
            for i in 0..4 {
                let key = vertex_key(set_key, masks[i]);
                v[i] = match self.find_vertex(slots[i], key) {
                    Ok(index) => index,
                    Err(last) => self.add_vertex(slots[i], last, key),
                };
            }
        }
        v
    }

    /// The vertex of cube `slot` with [`vertex_key`] `key`, or else the last
    /// vertex of the cube's chain (or [`NO_SLOT`]).
    #[inline(always)]
    fn find_vertex(&self, slot: usize, key: u64) -> Result<u32, u32> {
        let cube = &self.cubes[slot];
        if cube.first_key == key {
            return Ok(cube.first_vertex);
        }
        if cube.first_vertex == NO_SLOT {
            return Err(NO_SLOT);
        }
        // The first vertex's key was compared above.
        let mut last = cube.first_vertex;
        let mut v = self.vertices[last as usize].next;
        while v != NO_SLOT {
            let vertex = &self.vertices[v as usize];
            if vertex.key == key {
                return Ok(v);
            }
            last = v;
            v = vertex.next;
        }
        Err(last)
    }

    /// Appends a vertex of cube `slot` to the vertices and to the cube's
    /// chain after `last` (or as its first).
    #[inline(always)]
    fn add_vertex(&mut self, slot: usize, last: u32, key: u64) -> u32 {
        let index = self.vertices.len() as u32;
        self.vertices.push(Vertex {
            cube: slot as u32,
            next: NO_SLOT,
            key,
        });
        if last == NO_SLOT {
            self.cubes[slot].first_vertex = index;
            self.cubes[slot].first_key = key;
        } else {
            self.vertices[last as usize].next = index;
        }
        index
    }
}

/// The identity of a cube's vertex for the quad set with [`QuadSet::key`]
/// `set_key`, given the cube's material mask: the set's materials, plus the
/// dominant slot only when the cube contributes to none of them (its weights
/// then depend on it). Vertices of a cube with equal keys have equal ids and
/// weights, so quads share them; [`vertex_set`] recovers the set.
#[inline(always)]
pub(super) fn vertex_key(set_key: u64, mask: u32) -> u64 {
    let materials = set_key & 0xffff_ffff;
    if materials & u64::from(mask) != 0 {
        materials
    } else {
        // Dominant slot + 1, so an empty set (slot 0) differs from none.
        set_key + (1 << 40)
    }
}

/// The material set of a vertex from its [`vertex_key`]: exact when the cube
/// contributes to the set; otherwise the dominant slot is kept too, which is
/// all the weights of such a vertex depend on.
#[inline(always)]
pub(super) fn vertex_set(key: u64) -> QuadSet {
    let dominant = (key >> 40).saturating_sub(1);
    QuadSet::from_key((key & 0xffff_ffff) | dominant << 40)
}

/// The materials of the 8 samples of the cube with padded min corner `k`.
#[inline(always)]
fn corner_materials(field: &SampleField, k: usize) -> CornerMaterials {
    let (sy, sz) = (field.dim, field.dim * field.dim);
    CornerMaterials::from_words(
        corner_word(&field.material, k, sy, sz),
        corner_word(&field.solid, k, sy, sz),
    )
}

/// The bytes of `f` at the 8 corners of the cube with padded min corner `k`,
/// byte `i = x + 2y + 4z`.
#[inline(always)]
pub(super) fn corner_word(f: &[u8], k: usize, sy: usize, sz: usize) -> u64 {
    let w = &f[k..k + sy + sz + 2];
    u16_at(w, 0) | u16_at(w, sy) << 16 | u16_at(w, sz) << 32 | u16_at(w, sy + sz) << 48
}

/// Little-endian `u16` at `w[i..i + 2]`, widened.
#[inline(always)]
fn u16_at(w: &[u8], i: usize) -> u64 {
    u16::from_le_bytes([w[i], w[i + 1]]) as u64
}
