//! wgpu rendering of the terrain: sky, textured and lit terrain chunks and
//! horizon nodes with a cursor ring, water, and debug overlays, offscreen
//! (headless) or into a window surface.
//!
//! Organised by feature, after rerun's `re_renderer`: one room per
//! renderer, each owning its pipeline, its buffers and the Pod structs its
//! shaders read (`gpu_data.rs`), and none knowing the viewer (no editor
//! tool, no window): the frame's inputs come in render's own terms, a
//! [`FrameSettings`] per frame with a [`Cursor`] of a colour, a shape and a
//! radius.
//!
//! | Room | Owns |
//! |---|---|
//! | [`sky`] | the fullscreen sky pipeline |
//! | [`terrain`] | the terrain pipeline and material textures, the chunk and horizon-node buffers, their level fades, the terrain vertex |
//! | [`water`] | the water pipelines, the water buffers, the water vertex and shoreline fade |
//! | [`lines`] | the overlay switches, the line and wireframe pipelines, the frame's overlay lines, editor previews, the residency overlay |
//! | [`chunk_draw`] | what terrain and water share: the chunk instance, its buffer, culling, mesh upload usage |
//! | [`frame`] | the device, the per-frame input and uniforms, the [`Renderer`] composing the others, offscreen target, egui pass |
//!
//! Besides the rooms, [`pipeline_state`] holds the state every pipeline
//! shares (reversed-Z depth, multisampling, colour targets) and the one
//! helper that builds a render pipeline from it, and [`shaders`] the WGSL
//! sources. The rooms import each other one way: [`chunk_draw`],
//! [`pipeline_state`] and [`shaders`] at the bottom; [`sky`], [`terrain`]
//! and [`water`] on those; [`lines`] on [`terrain`] (the wireframe and the
//! chunk bounds read the terrain's buffers); [`frame`] on top of all.
//!
//! Structure follows egui's custom-3D pattern: long-lived pipelines and GPU
//! buffers owned by a [`Renderer`], a per-frame [`Renderer::prepare`] that
//! writes uniforms and culls chunks, and a [`Renderer::paint`] that only
//! records draws into a render pass the caller owns. [`Renderer::render`]
//! wraps the common case: the renderer's own multisampled colour and
//! reversed-Z depth targets, resolved into the caller's texture, in two
//! passes: the opaque pass (sky, terrain) stores its depth; the second pass
//! keeps that depth attached read-only and also binds it as a texture, so
//! the water shader can measure how much water lies in front of the bed,
//! then draws the overlays and resolves.
//!
//! Debug overlays are chosen per frame in [`FrameSettings::overlays`]; the
//! `seam-audit` markers are the positions in
//! [`FrameSettings::seam_markers_world`], which the caller takes from its
//! (throttled) seam audit of the shown meshes (`crate::pipeline::seam_audit`).
//!
//! # Embedding in a winit + egui window
//!
//! ```text
//! // Start-up (window: Arc<winit::window::Window>):
//! let instance = Gpu::create_instance(Some(Box::new(event_loop.owned_display_handle())));
//! let surface = instance.create_surface(window.clone())?;
//! let gpu = Gpu::for_surface(instance, &surface)?;
//! let caps = surface.get_capabilities(&gpu.adapter);
//! let format = egui_wgpu::preferred_framebuffer_format(&caps.formats)?; // Bgra8Unorm/Rgba8Unorm
//! let mut config = surface.get_default_config(&gpu.adapter, w, h).unwrap();
//! config.format = format;
//! surface.configure(&gpu.device, &config);
//! // 4× on hardware; on software adapters 1× keeps llvmpipe interactive.
//! let samples = if gpu.is_software() { 1 } else { gpu.msaa_sample_count(format) };
//! let mut renderer = Renderer::new(&gpu, format, samples); // non-sRGB: shaders encode
//! let mut egui_renderer = egui_wgpu::Renderer::new(&gpu.device, format, Default::default());
//!
//! // Each frame:
//! renderer.sync_meshes(&mut world_meshes);          // uploads exactly the changed chunks
//! let out = egui_ctx.run_pass(raw_input, |ctx| panel_w = panel.show(ctx, &stats));
//! let ppp = out.pixels_per_point;
//! let viewport = ViewportRect { x: panel_w * ppp, y: 0.0, width: w as f32 - panel_w * ppp, height: h as f32 };
//! let frame = FrameSettings { cursor, overlays, previews, ..FrameSettings::for_camera(&camera, bounds) };
//! renderer.prepare(&gpu.queue, &camera, &frame, viewport.size_px());
//! let surface_frame = surface.get_current_texture(); // CurrentSurfaceTexture::Success(..)
//! let view = surface_frame.texture.create_view(&Default::default());
//! renderer.render(&mut encoder, &view, [w, h], Some(viewport)); // MSAA + depth, resolves into view
//! // egui in a second pass: update_texture for out.textures_delta.set, update_buffers,
//! // begin_render_pass(LoadOp::Load, no depth).forget_lifetime(), egui_renderer.render(..),
//! // free_texture for textures_delta.free; then queue.submit and surface_frame.present().
//! ```
//!
//! Picking uses the same viewport: `camera.ray_from_screen(px - viewport.x,
//! py - viewport.y, viewport.width, viewport.height)` with `camera.aspect` set
//! to the viewport's. On resize, reconfigure the surface; [`Renderer::render`]
//! resizes its own targets (or call [`Renderer::resize`]).
//!
//! Alternatively draw inside your own pass with [`Renderer::paint`]; it needs
//! a colour attachment of the renderer's format and sample count and a
//! [`DEPTH_FORMAT`] attachment cleared to [`DEPTH_CLEAR`] (reversed-Z). In a
//! single pass the water cannot read the depth, so it is drawn with a fixed
//! thickness (no visible bed in shallow water, no soft shoreline).

pub mod chunk_draw;
pub mod frame;
pub mod lines;
pub mod pipeline_state;
pub mod shaders;
pub mod sky;
pub mod terrain;
pub mod water;

pub use frame::{
    Cursor, CursorFalloff, CursorShape, DrawStats, FrameSettings, GlobalUniforms, Gpu, GpuError,
    Renderer, RendererUploader, SyncStats, ViewportRect,
};
pub use lines::{
    Overlay, OverlaySet, PreviewLines, ResidencyTint, ResidencyView, WireframeMode, disc_segments,
};
pub use pipeline_state::{DEPTH_CLEAR, DEPTH_FORMAT};
pub use terrain::{ChunkBuffers, MaterialTextures};
