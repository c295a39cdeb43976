//! The smooth glTF export in its three encodings (`GlbEncoding`): every one
//! passes the Khronos glTF validator with no error, the compact files decode
//! (meshopt's own decoders, as an engine would) back to the plain file's
//! geometry within the stated position bound, and the command line writes
//! the compact file by default and the plain one with `--glb-plain`.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use gltf_json as json;
use strata::io::export::gltf_compact::{GlbEncoding, POSITION_ERROR_STUDS};
use strata::io::export::gltf_export::{GlbExport, export_glb};
use strata::terrain::Grid;
use strata::terrain::generation::generate::{GeneratorSettings, generate_world};
use strata::terrain::materials::MaterialLibrary;

/// A generated world of 4 × 4 chunk columns, made once.
fn small_world() -> &'static Grid {
    static WORLD: OnceLock<Grid> = OnceLock::new();
    WORLD.get_or_init(|| {
        generate_world(&GeneratorSettings {
            seed: 7,
            size_cells: 128,
        })
        .expect("valid settings")
    })
}

fn test_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("gltf_export")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Exports the small world as `encoding` into `dir`.
fn export(dir: &Path, encoding: GlbEncoding) -> (Vec<u8>, GlbExport) {
    let path = dir.join(format!("{}.glb", encoding.label().replace(' ', "")));
    let library = MaterialLibrary::default();
    let export = export_glb(small_world(), &library, &path, encoding).expect("export");
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len() as u64, export.file_bytes);
    (bytes, export)
}

fn validate(path: &Path) -> serde_json::Value {
    common::oracles::validate_gltf(path)
}

#[test]
fn every_encoding_passes_the_khronos_validator() {
    let dir = test_dir("validator");
    for encoding in [
        GlbEncoding::Plain,
        GlbEncoding::Quantized,
        GlbEncoding::Meshopt,
    ] {
        let (_, e) = export(&dir, encoding);
        let report = validate(&dir.join(format!("{}.glb", encoding.label().replace(' ', ""))));
        let codes: Vec<&str> = report["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["code"].as_str().unwrap())
            .collect();
        assert_eq!(report["numErrors"], 0, "{encoding:?}: {report:#}");
        assert_eq!(report["numWarnings"], 0, "{encoding:?}: {report:#}");
        let required = &report["extensionsRequired"];
        match encoding {
            GlbEncoding::Plain => {
                assert!(codes.is_empty(), "{codes:?}");
                assert_eq!(required.as_array().unwrap().len(), 0);
            }
            // The validator checks every accessor's data here (bounds,
            // unit normals, index ranges): nothing it cannot read.
            GlbEncoding::Quantized => {
                assert!(codes.is_empty(), "{codes:?}");
                assert_eq!(required, &serde_json::json!(["KHR_mesh_quantization"]));
            }
            // It does not know the compression: it checks the JSON only, and
            // says so (and that buffer 0, which only the extension uses,
            // looks unused).
            GlbEncoding::Meshopt => {
                assert_eq!(codes, ["UNSUPPORTED_EXTENSION", "UNUSED_OBJECT"]);
                assert_eq!(
                    required,
                    &serde_json::json!(["KHR_mesh_quantization", "EXT_meshopt_compression"])
                );
            }
        }
        assert_eq!(e.encoding, encoding);
    }
}

/// One vertex as read back: world position (studs), unit normal, weights, ids.
#[derive(Clone, Copy, Debug)]
struct Vertex {
    position: [f64; 3],
    normal: [f32; 3],
    weights: [u8; 4],
    ids: [u8; 4],
}

/// One chunk as read back: its vertices and the indices of all its
/// primitives (one per material, sharing the vertices).
struct Primitive {
    vertices: Vec<Vertex>,
    indices: Vec<u32>,
}

/// The chunks of the plain file, read by the `gltf` crate (which
/// validates the whole document): the primitives that share a position
/// accessor, their indices concatenated.
fn read_plain(bytes: &[u8]) -> Vec<Primitive> {
    let gltf = gltf::Gltf::from_slice(bytes).expect("a valid glTF");
    let blob = gltf.blob.as_deref().expect("binary chunk");
    let mesh = gltf.meshes().next().expect("one mesh");
    let mut chunks: Vec<(usize, Primitive)> = Vec::new();
    for p in mesh.primitives() {
        assert!(p.material().index().is_some());
        let position = p.get(&gltf::Semantic::Positions).unwrap().index();
        let indices: Vec<u32> = p
            .reader(|_| Some(blob))
            .read_indices()
            .unwrap()
            .into_u32()
            .collect();
        match chunks.last_mut() {
            Some((at, chunk)) if *at == position => {
                chunk.indices.extend(indices);
                continue;
            }
            _ => {}
        }
        let chunk = {
            let reader = p.reader(|_| Some(blob));
            let positions = reader.read_positions().unwrap();
            let normals: Vec<[f32; 3]> = reader.read_normals().unwrap().collect();
            let weights: Vec<[u8; 4]> = reader.read_colors(0).unwrap().into_rgba_u8().collect();
            let ids = p
                .attributes()
                .find(|(s, _)| *s == gltf::Semantic::Extras("MATERIAL_IDS".to_string()))
                .unwrap()
                .1;
            let view = ids.view().unwrap();
            let at = view.offset() + ids.offset();
            let vertices = positions
                .enumerate()
                .map(|(i, pos)| Vertex {
                    position: pos.map(f64::from),
                    normal: normals[i],
                    weights: weights[i],
                    ids: blob[at + 4 * i..at + 4 * i + 4].try_into().unwrap(),
                })
                .collect();
            Primitive { vertices, indices }
        };
        chunks.push((position, chunk));
    }
    chunks.into_iter().map(|(_, c)| c).collect()
}

/// The uncompressed bytes of every buffer view of a compact file: read
/// from the binary chunk, or decoded with meshopt's decoders as the
/// view's `EXT_meshopt_compression` object says (mode, filter, count,
/// stride), then checked against the view's declared length.
fn decoded_views(root: &json::Root, blob: &[u8]) -> Vec<Vec<u8>> {
    root.buffer_views
        .iter()
        .map(|view| {
            let Some(ext) = view
                .extensions
                .as_ref()
                .and_then(|e| e.others.get("EXT_meshopt_compression"))
            else {
                let at = view.byte_offset.map_or(0, |o| o.0 as usize);
                assert_eq!(view.buffer.value(), 0);
                return blob[at..at + view.byte_length.0 as usize].to_vec();
            };
            assert_eq!(ext["buffer"], 0);
            let at = ext["byteOffset"].as_u64().unwrap() as usize;
            let encoded = &blob[at..at + ext["byteLength"].as_u64().unwrap() as usize];
            let count = ext["count"].as_u64().unwrap() as usize;
            let stride = ext["byteStride"].as_u64().unwrap() as usize;
            assert_eq!(view.byte_length.0 as usize, count * stride);
            let bytes: Vec<u8> = match (ext["mode"].as_str().unwrap(), stride) {
                ("ATTRIBUTES", 4) => {
                    let mut v = meshopt::decode_vertex_buffer::<[u8; 4]>(encoded, count).unwrap();
                    if ext["filter"] == "OCTAHEDRAL" {
                        let mut s: Vec<[i8; 4]> = v.iter().map(|e| e.map(|b| b as i8)).collect();
                        meshopt::decode_filter_oct(&mut s);
                        v = s.iter().map(|e| e.map(|b| b as u8)).collect();
                    } else {
                        assert!(ext.get("filter").is_none());
                    }
                    v.concat()
                }
                ("ATTRIBUTES", 8) => meshopt::decode_vertex_buffer::<[u8; 8]>(encoded, count)
                    .unwrap()
                    .concat(),
                ("TRIANGLES", 2) => meshopt::decode_index_buffer::<u16>(encoded, count)
                    .unwrap()
                    .iter()
                    .flat_map(|i| i.to_le_bytes())
                    .collect(),
                ("TRIANGLES", 4) => meshopt::decode_index_buffer::<u32>(encoded, count)
                    .unwrap()
                    .iter()
                    .flat_map(|i| i.to_le_bytes())
                    .collect(),
                other => panic!("unexpected view {other:?}"),
            };
            bytes
        })
        .collect()
}

/// The primitives of a compact file (one node per chunk under `terrain`),
/// world positions dequantized with each node's translation and scale.
/// Checks what the JSON must say about each attribute on the way.
fn read_compact(bytes: &[u8], encoding: GlbEncoding) -> Vec<Primitive> {
    let gltf = gltf::Gltf::from_slice_without_validation(bytes).expect("a glTF");
    let blob = gltf.blob.clone().expect("binary chunk");
    let root = gltf.document.into_json();
    // Everything `gltf` validates holds, except that it supports neither
    // extension the file requires.
    let mut errors = Vec::new();
    json::validation::Validate::validate(&root, &root, json::Path::new, &mut |path, error| {
        errors.push(format!("{} {error:?}", path().as_str()))
    });
    let mut expected = vec![r#"extensionsRequired[0] = "KHR_mesh_quantization" Unsupported"#];
    if encoding == GlbEncoding::Meshopt {
        expected.push(r#"extensionsRequired[1] = "EXT_meshopt_compression" Unsupported"#);
        let fallback = &root.buffers[1];
        assert!(fallback.uri.is_none());
        assert_eq!(
            fallback.extensions.as_ref().unwrap().others["EXT_meshopt_compression"],
            serde_json::json!({ "fallback": true })
        );
        // Every geometry view is compressed (only images lie in buffer 0).
        assert!(
            root.buffer_views
                .iter()
                .all(|v| v.buffer.value() == 1 || v.byte_stride.is_none() && v.target.is_none())
        );
    }
    assert_eq!(errors, expected);
    let views = decoded_views(&root, &blob);
    let terrain = &root.nodes[root.scenes[0].nodes[0].value()];
    assert_eq!(terrain.name.as_deref(), Some("terrain"));
    let accessor_bytes = |index: json::Index<json::Accessor>, size: usize| {
        let a = &root.accessors[index.value()];
        let view = a.buffer_view.unwrap().value();
        let stride = root.buffer_views[view].byte_stride.map_or(size, |s| s.0);
        let at = a.byte_offset.map_or(0, |o| o.0 as usize);
        (0..a.count.0 as usize)
            .map(|i| views[view][at + i * stride..at + i * stride + size].to_vec())
            .collect::<Vec<_>>()
    };
    let component = |index: json::Index<json::Accessor>| {
        let a = &root.accessors[index.value()];
        (a.component_type.as_ref().unwrap().0, a.normalized)
    };
    use json::accessor::ComponentType as C;
    use json::mesh::Semantic as S;
    let mut primitives = Vec::new();
    for child in terrain.children.as_ref().unwrap() {
        let node = &root.nodes[child.value()];
        let t = node.translation.unwrap();
        let s = node.scale.unwrap();
        assert_eq!(s, [1.0 / 64.0; 3]);
        // The node is its chunk: named by it, at its origin.
        let name = node.name.as_ref().unwrap();
        let c: Vec<f32> = name[6..].split(' ').map(|v| v.parse().unwrap()).collect();
        assert_eq!(t, [c[0] * 128.0, c[1] * 128.0, c[2] * 128.0], "{name}");
        let mesh = &root.meshes[node.mesh.unwrap().value()];
        // One primitive per material, all on the same vertex accessors.
        let p = &mesh.primitives[0];
        for q in &mesh.primitives {
            assert!(q.material.is_some());
            for (semantic, accessor) in &q.attributes {
                if let Some(shared) = p.attributes.get(semantic) {
                    assert_eq!(shared, accessor);
                }
            }
        }
        let attribute = |s: S| {
            *p.attributes
                .get(&json::validation::Checked::Valid(s))
                .unwrap()
        };
        let pos = attribute(S::Positions);
        let (normal, color) = (attribute(S::Normals), attribute(S::Colors(0)));
        let ids = attribute(S::Extras("MATERIAL_IDS".to_string()));
        assert_eq!(component(pos), (C::I16, false));
        assert_eq!(component(normal), (C::I8, true));
        assert_eq!(component(color), (C::U8, true));
        assert_eq!(component(ids), (C::U8, false));
        assert_eq!(component(p.indices.unwrap()), (C::U16, false));
        let positions = accessor_bytes(pos, 6);
        let normals = accessor_bytes(normal, 3);
        let (weights, ids) = (accessor_bytes(color, 4), accessor_bytes(ids, 4));
        let vertices = (0..positions.len())
            .map(|i| {
                let q =
                    |k: usize| i16::from_le_bytes([positions[i][2 * k], positions[i][2 * k + 1]]);
                Vertex {
                    position: [0, 1, 2]
                        .map(|k| f64::from(t[k]) + f64::from(q(k)) * f64::from(s[k])),
                    normal: [0, 1, 2].map(|k| f32::from(normals[i][k] as i8) / 127.0),
                    weights: weights[i].clone().try_into().unwrap(),
                    ids: ids[i].clone().try_into().unwrap(),
                }
            })
            .collect();
        let indices = mesh
            .primitives
            .iter()
            .flat_map(|q| accessor_bytes(q.indices.unwrap(), 2))
            .map(|b| u32::from(u16::from_le_bytes([b[0], b[1]])))
            .collect();
        primitives.push(Primitive { vertices, indices });
    }
    primitives
}

/// How far apart two primitives' geometry is, after matching every
/// vertex of `b` (compact) to the nearest unmatched vertex of `a` (plain)
/// with the same weights and ids: the worst position difference (studs)
/// and normal angle (degrees). Panics unless every vertex has its match
/// within `tolerance` and the triangles, each with its winding, are the
/// same. (Two plain vertices closer than a step can quantize to one value:
/// the triangles are compared through `b`'s vertex values, so either
/// match of such a pair is right.)
fn compare(a: &Primitive, b: &Primitive, tolerance: f64) -> (f64, f32) {
    assert_eq!(a.vertices.len(), b.vertices.len());
    assert_eq!(a.indices.len(), b.indices.len());
    let cell = |p: [f64; 3]| p.map(|v| v.floor() as i64);
    let mut grid: HashMap<[i64; 3], Vec<usize>> = HashMap::new();
    for (i, v) in a.vertices.iter().enumerate() {
        grid.entry(cell(v.position)).or_default().push(i);
    }
    let (mut worst_position, mut worst_angle) = (0.0f64, 0.0f32);
    let mut b_of_a = vec![None; a.vertices.len()];
    for (j, v) in b.vertices.iter().enumerate() {
        let c = cell(v.position);
        let mut candidates: Vec<(f64, usize)> = (0..27)
            .flat_map(|d| grid.get(&[c[0] + d % 3 - 1, c[1] + d / 3 % 3 - 1, c[2] + d / 9 - 1]))
            .flatten()
            .map(|&i| {
                let u = &a.vertices[i];
                let dist = (0..3)
                    .map(|k| (u.position[k] - v.position[k]).abs())
                    .fold(0.0, f64::max);
                (dist, i)
            })
            .filter(|&(dist, i)| {
                let u = &a.vertices[i];
                dist <= tolerance && u.weights == v.weights && u.ids == v.ids
            })
            .collect();
        candidates.sort_by(|x, y| x.0.total_cmp(&y.0));
        let (dist, i) = *candidates
            .iter()
            .find(|(_, i)| b_of_a[*i].is_none())
            .unwrap_or_else(|| panic!("no plain vertex within {tolerance} studs of {v:?}"));
        b_of_a[i] = Some(j);
        worst_position = worst_position.max(dist);
        let (n, m) = (
            glam::Vec3::from(a.vertices[i].normal),
            glam::Vec3::from(v.normal),
        );
        worst_angle = worst_angle.max(n.angle_between(m.normalize()).to_degrees());
    }
    // A vertex of `b` by value: quantized position, normal, materials.
    let key = |j: usize| {
        let v = &b.vertices[j];
        let p = v.position.map(|x| (x * 64.0).round() as i64);
        let n = v.normal.map(|x| (x * 127.0).round() as i64);
        (p, n, v.weights, v.ids)
    };
    // Triangles as sets, each rotated to start at its smallest vertex (so
    // the winding stays part of it).
    let canonical = |indices: &[u32], to_b: &dyn Fn(u32) -> usize| {
        let mut triangles: Vec<_> = indices
            .chunks_exact(3)
            .map(|t| {
                let t = [key(to_b(t[0])), key(to_b(t[1])), key(to_b(t[2]))];
                let r = (0..3).min_by_key(|&k| t[k]).unwrap();
                [t[r], t[(r + 1) % 3], t[(r + 2) % 3]]
            })
            .collect();
        triangles.sort_unstable();
        triangles
    };
    let plain = canonical(&a.indices, &|i| {
        b_of_a[i as usize].expect("every vertex matched")
    });
    assert!(
        plain == canonical(&b.indices, &|j| j as usize),
        "the triangles differ"
    );
    (worst_position, worst_angle)
}

#[test]
fn compact_files_decode_to_the_plain_geometry_within_the_bound() {
    let dir = test_dir("decode");
    let (plain_bytes, plain) = export(&dir, GlbEncoding::Plain);
    let plain_primitives = read_plain(&plain_bytes);
    assert_eq!(plain_primitives.len(), plain.chunks);
    // The plain file's own `f32` rounding of world studs (below 1024 here).
    let tolerance = f64::from(POSITION_ERROR_STUDS) + 1.0 / 8192.0;
    for (encoding, max_angle) in [(GlbEncoding::Quantized, 1.0), (GlbEncoding::Meshopt, 2.0)] {
        let (bytes, e) = export(&dir, encoding);
        assert_eq!(
            (e.chunks, e.primitives, e.vertices, e.triangles),
            (
                plain.chunks,
                plain.primitives,
                plain.vertices,
                plain.triangles
            )
        );
        assert!(e.file_bytes < plain.file_bytes, "{e:?} against {plain:?}");
        let primitives = read_compact(&bytes, encoding);
        assert_eq!(primitives.len(), plain_primitives.len());
        let (mut position, mut angle) = (0.0f64, 0.0f32);
        for (a, b) in plain_primitives.iter().zip(&primitives) {
            let (p, n) = compare(a, b, tolerance);
            position = position.max(p);
            angle = angle.max(n);
        }
        // Quantized for real: the worst error is close to the bound.
        assert!(
            position <= tolerance && position > 0.9 * f64::from(POSITION_ERROR_STUDS),
            "{encoding:?}: worst position error {position} studs"
        );
        assert!(angle < max_angle, "{encoding:?}: worst normal {angle}°");
        eprintln!(
            "{encoding:?}: {} bytes ({:.2} per triangle against {:.2} plain), worst position \
             error {position:.5} studs, worst normal {angle:.2}°",
            e.file_bytes,
            e.bytes_per_triangle(),
            plain.bytes_per_triangle()
        );
    }
}

#[test]
fn the_command_line_writes_compact_files_unless_glb_plain() {
    let dir = test_dir("cli");
    let run = |name: &str, extra: &[&str]| {
        let path = dir.join(name);
        let out = Command::new(env!("CARGO_BIN_EXE_strata"))
            .args(["--headless", "--seed", "3", "--world-size", "64"])
            .args(["--export-glb".as_ref(), path.as_os_str()])
            .args(extra)
            .output()
            .expect("run strata");
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let bytes = std::fs::read(&path).unwrap();
        (stdout, bytes)
    };
    let (compact_out, compact) = run("compact.glb", &[]);
    let (plain_out, plain) = run("plain.glb", &["--glb-plain"]);
    assert!(
        compact_out.contains("(quantized + meshopt: "),
        "{compact_out}"
    );
    assert!(plain_out.contains("(plain: "), "{plain_out}");
    assert!(compact_out.contains("bytes per triangle"), "{compact_out}");
    assert!(
        compact.len() * 3 < plain.len(),
        "{} against {}",
        compact.len(),
        plain.len()
    );
    let compact = gltf::Gltf::from_slice_without_validation(&compact).unwrap();
    assert_eq!(
        compact.document.extensions_required().collect::<Vec<_>>(),
        ["KHR_mesh_quantization", "EXT_meshopt_compression"]
    );
    gltf::Gltf::from_slice(&plain).expect("the plain file validates");
    // The flag needs the export it changes.
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args([
            "--headless",
            "--save",
            "/tmp/strata-never.strata",
            "--glb-plain",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--export-glb"));
}
