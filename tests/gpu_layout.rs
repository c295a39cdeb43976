//! The Rust mirrors of GPU data (each feature's `gpu_data.rs` under
//! `src/render/`, and the globals in `src/render/frame/globals.rs`) match the WGSL
//! they feed, as naga lays it out: every uniform struct's field offsets and
//! size, and every vertex/instance struct's attribute offsets, formats and
//! stride. A reordered, resized or renamed field on either side fails here
//! instead of rendering garbage.

use std::mem::{offset_of, size_of};

use strata::render::chunk_draw::gpu_data::ChunkInstance;
use strata::render::frame::globals::GlobalUniforms;
use strata::render::lines::gpu_data::LineVertex;
use strata::render::shaders;
use strata::render::terrain::gpu_data::TerrainVertex;
use strata::render::water::gpu_data::WaterVertex;

/// `(name, offset, size)` of each field of a Rust struct, in declaration order.
type Fields = Vec<(&'static str, usize, usize)>;

/// The [`Fields`] of `$t`; every field must be listed (the sizes must add up
/// with the padding fields to `size_of::<$t>()`, checked by the callers).
macro_rules! fields {
    ($t:ty { $($f:ident),* $(,)? }) => {{
        fn field_size<T, F>(_: impl Fn(&T) -> &F) -> usize {
            size_of::<F>()
        }
        vec![$((
            stringify!($f),
            offset_of!($t, $f),
            field_size(|v: &$t| &v.$f),
        )),*]
    }};
}

fn parse(name: &str, source: &str) -> naga::Module {
    naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)))
}

fn module(name: &str) -> naga::Module {
    let (_, source) = shaders::ALL
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no shader module {name}"));
    parse(name, source)
}

fn layouter(module: &naga::Module) -> naga::proc::Layouter {
    let mut layouter = naga::proc::Layouter::default();
    layouter
        .update(module.to_ctx())
        .unwrap_or_else(|e| panic!("layout: {e:?}"));
    layouter
}

/// The members `(name, offset, size)` and span of the struct `name` in `module`.
fn wgsl_struct(module: &naga::Module, name: &str) -> (Vec<(String, u32, u32)>, u32) {
    let layouter = layouter(module);
    let ty = module
        .types
        .iter()
        .find(|(_, ty)| ty.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no WGSL struct {name}"))
        .1;
    let naga::TypeInner::Struct { members, span } = &ty.inner else {
        panic!("{name} is not a struct");
    };
    let members = members
        .iter()
        .map(|m| {
            (
                m.name.clone().unwrap_or_default(),
                m.offset,
                layouter[m.ty].size,
            )
        })
        .collect();
    (members, *span)
}

/// Checks the Rust uniform struct `T` (`rust` lists all its fields,
/// padding included) against the WGSL struct `wgsl_name` of `module`: the
/// same members in the same order, each at the same offset with the same
/// size, and the same total size (a multiple of 16, as uniforms need).
fn check_uniform<T>(module_name: &str, module: &naga::Module, wgsl_name: &str, rust: &Fields) {
    let (members, span) = wgsl_struct(module, wgsl_name);
    let ctx = format!("{module_name}: {wgsl_name}");
    assert_eq!(span as usize, size_of::<T>(), "{ctx}: struct size");
    assert_eq!(
        size_of::<T>() % 16,
        0,
        "{ctx}: uniform size is a multiple of 16"
    );
    assert_eq!(
        rust.iter().map(|f| f.2).sum::<usize>(),
        size_of::<T>(),
        "{ctx}: the Rust field list is complete and has no implicit padding"
    );
    assert_eq!(
        rust.iter().map(|f| f.0).collect::<Vec<_>>(),
        members.iter().map(|m| m.0.as_str()).collect::<Vec<_>>(),
        "{ctx}: the same fields in the same order"
    );
    for ((name, offset, size), (_, wgsl_offset, wgsl_size)) in rust.iter().zip(&members) {
        assert_eq!(*offset, *wgsl_offset as usize, "{ctx}.{name}: offset");
        assert_eq!(*size, *wgsl_size as usize, "{ctx}.{name}: size");
    }
}

#[test]
fn global_uniforms_match_wgsl_globals_in_every_module() {
    let rust = fields!(GlobalUniforms {
        clip_from_world,
        world_from_clip,
        sun_dir,
        sun_intensity,
        sun_color,
        diffuse_wrap,
        sky_zenith,
        sky_ambient,
        sky_horizon,
        fog_full_studs,
        ground_ambient,
        low_poly,
        fog_density,
        fog_max,
        fog_height_falloff,
        camera_height_studs,
        brush_centre_rel,
        brush_radius_studs,
        brush_color,
        brush_style,
        viewport_size_px,
        viewport_inv_size_px,
        encode_srgb,
        overlay_bits,
        time_secs,
        holes_reach_studs,
        ground_footprint_rel,
    });
    for (name, source) in shaders::ALL {
        let module = parse(name, source);
        check_uniform::<GlobalUniforms>(name, &module, "Globals", &rust);
    }
}

/// `(components, kind)` a vertex format delivers to the shader.
fn format_shape(format: wgpu::VertexFormat) -> (u32, naga::ScalarKind) {
    use naga::ScalarKind::{Float, Sint, Uint};
    use wgpu::VertexFormat as F;
    match format {
        F::Float32x3 => (3, Float),
        F::Float32x4 | F::Snorm8x4 | F::Unorm8x4 => (4, Float),
        F::Uint8x4 => (4, Uint),
        F::Sint32x4 => (4, Sint),
        other => panic!("format {other:?} not covered by this test"),
    }
}

fn type_shape(module: &naga::Module, ty: naga::Handle<naga::Type>) -> (u32, naga::ScalarKind) {
    match module.types[ty].inner {
        naga::TypeInner::Vector { size, scalar } => (size as u32, scalar.kind),
        naga::TypeInner::Scalar(scalar) => (1, scalar.kind),
        ref other => panic!("vertex input of type {other:?}"),
    }
}

/// The located inputs `(name, location, type)` of vertex entry point `entry`.
fn vertex_inputs(
    module: &naga::Module,
    entry: &str,
) -> Vec<(String, u32, naga::Handle<naga::Type>)> {
    let ep = module
        .entry_points
        .iter()
        .find(|ep| ep.name == entry)
        .unwrap_or_else(|| panic!("no entry point {entry}"));
    let location = |b: &Option<naga::Binding>| match b {
        Some(naga::Binding::Location { location, .. }) => Some(*location),
        _ => None,
    };
    let mut inputs = Vec::new();
    for arg in &ep.function.arguments {
        if let Some(loc) = location(&arg.binding) {
            inputs.push((arg.name.clone().unwrap_or_default(), loc, arg.ty));
        } else if let naga::TypeInner::Struct { members, .. } = &module.types[arg.ty].inner {
            for m in members {
                if let Some(loc) = location(&m.binding) {
                    inputs.push((m.name.clone().unwrap_or_default(), loc, m.ty));
                }
            }
        }
    }
    inputs
}

/// One vertex buffer of a pipeline: its Rust struct's fields and size and
/// the layout the pipeline is built with.
struct Buffer {
    name: &'static str,
    fields: Fields,
    size: usize,
    layout: wgpu::VertexBufferLayout<'static>,
}

fn buffer<T>(
    name: &'static str,
    fields: Fields,
    layout: wgpu::VertexBufferLayout<'static>,
) -> Buffer {
    Buffer {
        name,
        fields,
        size: size_of::<T>(),
        layout,
    }
}

/// Checks the buffers of the pipeline over `entry` in `module_name`: the
/// layout describes exactly its struct (stride, one attribute per field at
/// the field's offset with the field's size), and each vertex input of the
/// shader is read from the field of the same name, at that field's offset,
/// with a format that delivers the shader's type.
fn check_vertex_input(module_name: &str, entry: &str, buffers: &[Buffer]) {
    let module = module(module_name);
    let ctx = format!("{module_name} {entry}");
    for b in buffers {
        assert_eq!(
            b.layout.array_stride as usize, b.size,
            "{ctx}: {} stride",
            b.name
        );
        assert_eq!(
            b.layout.attributes.len(),
            b.fields.len(),
            "{ctx}: {} has one attribute per field",
            b.name
        );
        assert_eq!(
            b.fields.iter().map(|f| f.2).sum::<usize>(),
            b.size,
            "{ctx}: the {} field list is complete",
            b.name
        );
    }
    let inputs = vertex_inputs(&module, entry);
    assert!(!inputs.is_empty(), "{ctx}: no vertex inputs");
    for (name, location, ty) in inputs {
        let (b, attr) = buffers
            .iter()
            .find_map(|b| {
                let attr = b
                    .layout
                    .attributes
                    .iter()
                    .find(|a| a.shader_location == location)?;
                Some((b, attr))
            })
            .unwrap_or_else(|| panic!("{ctx}: no attribute at location {location} ({name})"));
        let (_, offset, size) = *b
            .fields
            .iter()
            .find(|f| f.0 == name)
            .unwrap_or_else(|| panic!("{ctx}: {} has no field {name}", b.name));
        assert_eq!(
            attr.offset as usize, offset,
            "{ctx}: attribute {location} offset vs offset_of!({}, {name})",
            b.name
        );
        assert_eq!(
            attr.format.size() as usize,
            size,
            "{ctx}: attribute {location} format {:?} vs size of {}.{name}",
            attr.format,
            b.name
        );
        assert_eq!(
            format_shape(attr.format),
            type_shape(&module, ty),
            "{ctx}: attribute {location} format {:?} vs WGSL type of {name}",
            attr.format
        );
    }
}

fn terrain_vertex() -> Buffer {
    buffer::<TerrainVertex>(
        "TerrainVertex",
        fields!(TerrainVertex {
            pos_in_chunk,
            normal,
            material_ids,
            material_weights,
        }),
        TerrainVertex::layout(),
    )
}

fn chunk_instance() -> Buffer {
    buffer::<ChunkInstance>(
        "ChunkInstance",
        fields!(ChunkInstance {
            chunk_origin_rel,
            chunk_coord,
        }),
        ChunkInstance::layout(),
    )
}

#[test]
fn terrain_vertex_input_matches_terrain_vertex_and_chunk_instance() {
    check_vertex_input(
        "terrain.wgsl",
        "vs_main",
        &[terrain_vertex(), chunk_instance()],
    );
}

#[test]
fn water_vertex_input_matches_water_vertex_and_chunk_instance() {
    let water = buffer::<WaterVertex>(
        "WaterVertex",
        fields!(WaterVertex {
            pos_in_chunk,
            normal_fade,
            outline,
        }),
        WaterVertex::layout(),
    );
    check_vertex_input("water.wgsl", "vs_main", &[water, chunk_instance()]);
}

#[test]
fn line_vertex_input_matches_line_vertex() {
    let lines = buffer::<LineVertex>(
        "LineVertex",
        fields!(LineVertex { pos_rel, color }),
        LineVertex::layout(),
    );
    check_vertex_input("lines.wgsl", "vs_main", &[lines]);
}

#[test]
fn wireframe_vertex_inputs_match_terrain_buffers() {
    check_vertex_input(
        "wireframe.wgsl",
        "vs_main",
        &[terrain_vertex(), chunk_instance()],
    );
    check_vertex_input("wireframe.wgsl", "vs_pull", &[chunk_instance()]);
}

#[test]
fn wireframe_pulls_terrain_vertices_word_by_word() {
    // `vs_pull` reads a `TerrainVertex` as `WORDS_PER_VERTEX` u32 words:
    // position xyz in words 0..3, the normal in word 3.
    let module = module("wireframe.wgsl");
    let (_, constant) = module
        .constants
        .iter()
        .find(|(_, c)| c.name.as_deref() == Some("WORDS_PER_VERTEX"))
        .unwrap_or_else(|| panic!("no WORDS_PER_VERTEX"));
    let naga::Expression::Literal(naga::Literal::U32(words)) =
        module.global_expressions[constant.init]
    else {
        panic!("WORDS_PER_VERTEX is not a u32 literal");
    };
    assert_eq!(words as usize * 4, size_of::<TerrainVertex>());
    assert_eq!(offset_of!(TerrainVertex, pos_in_chunk), 0);
    assert_eq!(offset_of!(TerrainVertex, normal), 3 * 4);
}

#[test]
fn material_styles_match_the_terrain_shaders_array() {
    use strata::render::terrain::material_textures::{MaterialStyleGpu, STYLE_SLOTS};
    let module = module("terrain.wgsl");
    let layouter = layouter(&module);
    let (_, var) = module
        .global_variables
        .iter()
        .find(|(_, v)| v.name.as_deref() == Some("material_styles"))
        .expect("terrain.wgsl has material_styles");
    assert_eq!(var.space, naga::AddressSpace::Uniform);
    assert_eq!(
        var.binding,
        Some(naga::ResourceBinding {
            group: 1,
            binding: 2
        })
    );
    match &module.types[var.ty].inner {
        naga::TypeInner::Array {
            size: naga::ArraySize::Constant(n),
            stride,
            ..
        } => {
            assert_eq!(n.get() as usize, STYLE_SLOTS);
            assert_eq!(*stride as usize, size_of::<MaterialStyleGpu>());
        }
        other => panic!("material_styles is {other:?}, not a sized array"),
    }
    check_uniform::<MaterialStyleGpu>(
        "terrain.wgsl",
        &module,
        "MaterialStyle",
        &fields!(MaterialStyleGpu {
            tint_scale,
            palette_srgb,
            surface
        }),
    );
    assert_eq!(
        layouter[var.ty].size as usize,
        STYLE_SLOTS * size_of::<MaterialStyleGpu>()
    );
}
