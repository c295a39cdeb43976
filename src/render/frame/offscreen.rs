//! An offscreen render target: frames without a window, for headless
//! screenshots, tests and CI.
//!
//! It owns the very same [`Renderer`] as the editor window (MSAA resolve
//! into an `Rgba8UnormSrgb` texture) and reads the pixels back through a
//! buffer whose rows are padded to 256 bytes as wgpu requires. What is drawn
//! over the 3D view (the editor's egui panel) is the caller's: it records it
//! into the frame's encoder through a callback, so this module knows nothing
//! of the editor. Nothing here needs a display server: it runs on software
//! adapters such as llvmpipe.

use std::path::{Path, PathBuf};

use super::gpu::Gpu;
use super::renderer::Renderer;
use super::viewport::ViewportRect;

/// Colour format the 3D renderer draws offscreen frames in (a view of the
/// [`OFFSCREEN_STORAGE_FORMAT`] target, so MSAA resolves in linear light).
pub const OFFSCREEN_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;

/// Storage format of the offscreen target; an overlay (egui) draws into this
/// non-sRGB view, which is the framebuffer kind egui prefers. Same bytes as
/// [`OFFSCREEN_FORMAT`]. (On adapters without `VIEW_FORMATS`, e.g. GL, the
/// target is [`OFFSCREEN_FORMAT`] and the overlay draws into it directly.)
pub const OFFSCREEN_STORAGE_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// Largest accepted image side, in pixels.
pub const MAX_IMAGE_SIDE: u32 = 8192;

/// Errors of offscreen rendering.
#[derive(Debug, thiserror::Error)]
pub enum OffscreenError {
    /// Image size zero or too large.
    #[error("image size {0}x{1} is invalid: each side must be 1..={MAX_IMAGE_SIDE} pixels")]
    InvalidSize(u32, u32),
    /// Reading the rendered frame back from the GPU failed.
    #[error("GPU readback failed: {0}")]
    Readback(String),
    /// Writing an image file failed.
    #[error("cannot write {path}: {message}")]
    Write {
        /// The output file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// Checks an image size `[width, height]` in pixels against [`MAX_IMAGE_SIDE`].
///
/// # Errors
/// [`OffscreenError::InvalidSize`] for a zero or oversized side.
pub fn check_image_size(size_px: [u32; 2]) -> Result<(), OffscreenError> {
    let [w, h] = size_px;
    if w == 0 || h == 0 || w > MAX_IMAGE_SIDE || h > MAX_IMAGE_SIDE {
        return Err(OffscreenError::InvalidSize(w, h));
    }
    Ok(())
}

/// An offscreen colour target, its readback buffer and the renderer that
/// draws into it.
pub struct OffscreenTarget {
    gpu: Gpu,
    renderer: Renderer,
    size_px: [u32; 2],
    storage_format: wgpu::TextureFormat,
    target: wgpu::Texture,
    target_view: wgpu::TextureView,
    overlay_view: wgpu::TextureView,
    readback: wgpu::Buffer,
    padded_bytes_per_row: u32,
}

impl OffscreenTarget {
    /// Creates a `size_px` = `[width, height]` offscreen target on `gpu`,
    /// with MSAA when the adapter supports it.
    ///
    /// # Errors
    /// [`OffscreenError::InvalidSize`] for a zero or oversized image (also
    /// one larger than the adapter's texture limit).
    pub fn new(gpu: Gpu, size_px: [u32; 2]) -> Result<Self, OffscreenError> {
        let [w, h] = size_px;
        let max_side = gpu
            .device
            .limits()
            .max_texture_dimension_2d
            .min(MAX_IMAGE_SIDE);
        if w == 0 || h == 0 || w > max_side || h > max_side {
            return Err(OffscreenError::InvalidSize(w, h));
        }
        let samples = gpu.msaa_sample_count(OFFSCREEN_FORMAT);
        // Downlevel adapters (GL) cannot reinterpret a texture through another
        // view format; there the overlay draws into the sRGB texture directly.
        let storage_format = if gpu
            .adapter
            .get_downlevel_capabilities()
            .flags
            .contains(wgpu::DownlevelFlags::VIEW_FORMATS)
        {
            OFFSCREEN_STORAGE_FORMAT
        } else {
            OFFSCREEN_FORMAT
        };
        let renderer = Renderer::new(&gpu, OFFSCREEN_FORMAT, samples);
        let target = gpu.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("offscreen target"),
            size: wgpu::Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: storage_format,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: if storage_format == OFFSCREEN_FORMAT {
                &[]
            } else {
                &[OFFSCREEN_FORMAT]
            },
        });
        let target_view = target.create_view(&wgpu::TextureViewDescriptor {
            label: Some("offscreen target (sRGB view)"),
            format: Some(OFFSCREEN_FORMAT),
            ..Default::default()
        });
        let overlay_view = target.create_view(&Default::default());
        let align = wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
        let padded_bytes_per_row = (4 * w).div_ceil(align) * align;
        let readback = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("offscreen readback"),
            size: padded_bytes_per_row as u64 * h as u64,
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        Ok(OffscreenTarget {
            gpu,
            renderer,
            size_px,
            storage_format,
            target,
            target_view,
            overlay_view,
            readback,
            padded_bytes_per_row,
        })
    }

    /// The GPU this target lives on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Hands uploads recorded since the last submission to the GPU and frees
    /// what finished work no longer uses. Where mesh buffers are filled
    /// through staging copies (discrete adapters; see
    /// `render::chunk_draw::mesh_upload_usage`) the queue holds each copy and its
    /// destination buffer until a submission, and buffers an earlier frame
    /// drew are freed only by a poll: a run that stages meshes without
    /// drawing frames calls this regularly, or all of them stay in memory.
    pub fn flush_uploads(&self) {
        self.gpu.queue.submit(std::iter::empty());
        // Non-blocking: reclaims whatever already finished; a failed poll
        // only defers the reclaim to the next call.
        if let Err(e) = self.gpu.device.poll(wgpu::PollType::Poll) {
            log::debug!("device poll after flushing uploads: {e}");
        }
    }

    /// The scene renderer drawing into this target.
    pub fn renderer(&mut self) -> &mut Renderer {
        &mut self.renderer
    }

    /// Image size `[width, height]` in pixels.
    pub fn size_px(&self) -> [u32; 2] {
        self.size_px
    }

    /// The format an overlay drawn through [`OffscreenTarget::render_frame`]
    /// writes (single-sampled, no depth).
    pub fn overlay_format(&self) -> wgpu::TextureFormat {
        self.storage_format
    }

    /// Records the prepared scene (see [`Renderer::prepare`]) into
    /// `viewport`, then whatever `overlay` records over the whole image (it
    /// gets the GPU, the frame's encoder and the overlay view, and returns
    /// extra command buffers to submit first), and reads the pixels back:
    /// RGBA8, sRGB, rows top to bottom.
    ///
    /// # Errors
    /// [`OffscreenError::Readback`] when the frame cannot be mapped.
    pub fn render_frame(
        &mut self,
        viewport: ViewportRect,
        overlay: impl FnOnce(
            &Gpu,
            &mut wgpu::CommandEncoder,
            &wgpu::TextureView,
        ) -> Vec<wgpu::CommandBuffer>,
    ) -> Result<image::RgbaImage, OffscreenError> {
        let mut encoder = self
            .gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("offscreen frame"),
            });
        self.renderer.render(
            &mut encoder,
            &self.target_view,
            self.size_px,
            Some(viewport),
        );
        let mut cmds = overlay(&self.gpu, &mut encoder, &self.overlay_view);
        self.record_copy(&mut encoder);
        cmds.push(encoder.finish());
        self.gpu.queue.submit(cmds);
        self.read_pixels()
    }

    /// Copies the target into the readback buffer.
    fn record_copy(&self, encoder: &mut wgpu::CommandEncoder) {
        let [w, h] = self.size_px;
        encoder.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo {
                texture: &self.target,
                mip_level: 0,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            wgpu::TexelCopyBufferInfo {
                buffer: &self.readback,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(self.padded_bytes_per_row),
                    rows_per_image: Some(h),
                },
            },
            wgpu::Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: 1,
            },
        );
    }

    /// Waits for the submitted copy, then unpads the rows into an image.
    fn read_pixels(&mut self) -> Result<image::RgbaImage, OffscreenError> {
        let [w, h] = self.size_px;
        let (tx, rx) = std::sync::mpsc::channel();
        self.readback.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        self.gpu
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| OffscreenError::Readback(e.to_string()))?;
        rx.recv()
            .map_err(|e| OffscreenError::Readback(e.to_string()))?
            .map_err(|e| OffscreenError::Readback(e.to_string()))?;
        let mut pixels = Vec::with_capacity((4 * w * h) as usize);
        {
            let view = self
                .readback
                .get_mapped_range(..)
                .map_err(|e| OffscreenError::Readback(e.to_string()))?;
            for row in view.chunks_exact(self.padded_bytes_per_row as usize) {
                pixels.extend_from_slice(&row[..(4 * w) as usize]);
            }
        }
        self.readback.unmap();
        image::RgbaImage::from_raw(w, h, pixels)
            .ok_or_else(|| OffscreenError::Readback("pixel buffer has the wrong size".into()))
    }
}

/// Writes `img` as an RGBA PNG, all or nothing (a failed write leaves an
/// existing file as it was).
///
/// # Errors
/// [`OffscreenError::Write`] when the file cannot be written.
pub fn write_png(path: &Path, img: &image::RgbaImage) -> Result<(), OffscreenError> {
    let err = |message: String| OffscreenError::Write {
        path: path.to_path_buf(),
        message,
    };
    crate::io::write_atomically(
        path,
        |tmp| {
            img.save_with_format(tmp, image::ImageFormat::Png)
                .map_err(|e| err(e.to_string()))
        },
        |e| err(e.to_string()),
    )
}
