//! wgpu instance, adapter, device and queue: one [`Gpu`] per process, shared
//! by the headless renderer and the windowed editor.
//!
//! Strata must run on whatever adapter exists, including software rasterizers
//! (llvmpipe through Vulkan/lavapipe or GL/EGL) on machines without a GPU, so
//! adapter selection allows fallback adapters, device limits are the adapter's
//! own, and optional capabilities (MSAA per format, anisotropy) are queried
//! rather than assumed.

use std::fmt;

/// Failure to obtain a usable GPU device.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No adapter matched, not even a fallback (software) one.
    #[error(
        "no graphics adapter found ({0}); install a Vulkan driver (e.g. mesa-vulkan-drivers for \
         lavapipe) or GL/EGL drivers"
    )]
    NoAdapter(#[from] wgpu::RequestAdapterError),
    /// The adapter refused to create a device.
    #[error("the graphics adapter refused to create a device: {0}")]
    RequestDevice(#[from] wgpu::RequestDeviceError),
}

/// An adapter, its device and queue, plus what the renderer needs to know about them.
#[derive(Clone)]
pub struct Gpu {
    /// The wgpu instance the adapter came from (also creates window surfaces).
    pub instance: wgpu::Instance,
    /// The chosen adapter.
    pub adapter: wgpu::Adapter,
    /// The logical device.
    pub device: wgpu::Device,
    /// The device's queue.
    pub queue: wgpu::Queue,
    /// Adapter name, backend, driver.
    pub adapter_info: wgpu::AdapterInfo,
}

impl fmt::Debug for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gpu")
            .field("adapter", &self.adapter_summary())
            .finish_non_exhaustive()
    }
}

impl Gpu {
    /// A wgpu instance with all backends (overridable with `WGPU_BACKEND`,
    /// e.g. `WGPU_BACKEND=gl`).
    ///
    /// For a window, pass winit's `OwnedDisplayHandle` as `display`: GL on
    /// Wayland needs it; Vulkan ignores it. Headless passes `None`.
    pub fn create_instance(
        display: Option<Box<dyn wgpu::wgt::WgpuHasDisplayHandle>>,
    ) -> wgpu::Instance {
        let desc = match display {
            Some(d) => wgpu::InstanceDescriptor::new_with_display_handle_from_env(d),
            None => wgpu::InstanceDescriptor::new_without_display_handle_from_env(),
        };
        wgpu::Instance::new(desc)
    }

    /// A device for offscreen rendering (no surface), blocking.
    ///
    /// # Errors
    /// [`GpuError`] when no adapter or device can be created.
    ///
    /// Unless `WGPU_BACKEND` chooses, the primary backends (Vulkan, Metal,
    /// DX12) are tried first and GL only when they offer no adapter, which
    /// avoids initializing EGL (and its console noise) when Vulkan works.
    pub fn new_headless() -> Result<Gpu, GpuError> {
        if std::env::var_os("WGPU_BACKEND").is_some() {
            return pollster::block_on(Self::request(Self::create_instance(None), None));
        }
        let with_backends = |backends| {
            let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
            desc.backends = backends;
            wgpu::Instance::new(desc)
        };
        match pollster::block_on(Self::request(with_backends(wgpu::Backends::PRIMARY), None)) {
            Ok(gpu) => Ok(gpu),
            Err(e) => {
                log::info!("no primary-backend adapter ({e}); trying GL");
                pollster::block_on(Self::request(with_backends(wgpu::Backends::all()), None))
            }
        }
    }

    /// A device able to present to `surface` (created from `instance`), blocking.
    ///
    /// # Errors
    /// [`GpuError`] when no compatible adapter or device can be created.
    pub fn for_surface(
        instance: wgpu::Instance,
        surface: &wgpu::Surface<'_>,
    ) -> Result<Gpu, GpuError> {
        pollster::block_on(Self::request(instance, Some(surface)))
    }

    /// Requests an adapter (high performance first, then any fallback
    /// adapter) and a device with the adapter's own limits.
    ///
    /// # Errors
    /// [`GpuError`] when no adapter or device can be created.
    pub async fn request(
        instance: wgpu::Instance,
        compatible_surface: Option<&wgpu::Surface<'_>>,
    ) -> Result<Gpu, GpuError> {
        let mut options = wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface,
            apply_limit_buckets: false,
        };
        let adapter = match instance.request_adapter(&options).await {
            Ok(a) => a,
            Err(first) => {
                log::info!("no hardware adapter ({first}); trying a fallback adapter");
                options.force_fallback_adapter = true;
                instance.request_adapter(&options).await?
            }
        };
        let adapter_info = adapter.get_info();
        // On adapters whose memory is the host's (software, integrated),
        // mesh buffers are written in place instead of through a staging
        // copy (see `render::chunk_draw::mesh_upload_usage`).
        let unified_memory = matches!(
            adapter_info.device_type,
            wgpu::DeviceType::Cpu | wgpu::DeviceType::IntegratedGpu
        );
        let mappable = if unified_memory {
            wgpu::Features::MAPPABLE_PRIMARY_BUFFERS
        } else {
            wgpu::Features::empty()
        };
        // Adapter-specific format features make MSAA queries truthful on
        // adapters (like llvmpipe) that support more than WebGPU guarantees.
        // Polygon-mode lines draw the wireframe overlay where available.
        let required_features = adapter.features()
            & (wgpu::Features::TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES
                | wgpu::Features::POLYGON_MODE_LINE
                | mappable);
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("strata device"),
                required_features,
                required_limits: adapter.limits(),
                experimental_features: wgpu::ExperimentalFeatures::disabled(),
                // The adapter's memory is the host's: small allocation blocks. With
                // the default large blocks, a long streaming flight's freed mesh
                // buffers fragmented them and every new buffer's placement
                // scanned a long free list on the frame thread.
                memory_hints: if unified_memory {
                    wgpu::MemoryHints::MemoryUsage
                } else {
                    wgpu::MemoryHints::Performance
                },
                trace: wgpu::Trace::Off,
            })
            .await?;
        let gpu = Gpu {
            instance,
            adapter,
            device,
            queue,
            adapter_info,
        };
        log::info!("graphics adapter: {}", gpu.adapter_summary());
        Ok(gpu)
    }

    /// Adapter name and backend, e.g. `"llvmpipe (LLVM 19.1.7, 256 bits) (Vulkan)"`.
    pub fn adapter_summary(&self) -> String {
        format!(
            "{} ({:?})",
            self.adapter_info.name, self.adapter_info.backend
        )
    }

    /// Capabilities the device really has for `format`: the adapter's own flags
    /// when adapter-specific format features are enabled (or the adapter is
    /// downlevel), else what WebGPU guarantees.
    pub fn format_features(&self, format: wgpu::TextureFormat) -> wgpu::TextureFormatFeatures {
        let adapter = self.adapter.get_texture_format_features(format);
        let device_features = self.device.features();
        let webgpu_formats = self
            .adapter
            .get_downlevel_capabilities()
            .flags
            .contains(wgpu::DownlevelFlags::WEBGPU_TEXTURE_FORMAT_SUPPORT);
        if device_features.contains(wgpu::Features::TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES)
            || !webgpu_formats
        {
            adapter
        } else {
            format.guaranteed_format_features(device_features)
        }
    }

    /// The MSAA sample count to render `color_format` with: 4 when the color
    /// format supports 4× multisampling and resolve and [`crate::render::DEPTH_FORMAT`]
    /// supports 4×, else 1.
    pub fn msaa_sample_count(&self, color_format: wgpu::TextureFormat) -> u32 {
        let color = self.format_features(color_format);
        let depth = self.format_features(super::super::pipeline_state::DEPTH_FORMAT);
        let ok = color.flags.sample_count_supported(4)
            && color
                .flags
                .contains(wgpu::TextureFormatFeatureFlags::MULTISAMPLE_RESOLVE)
            && depth.flags.sample_count_supported(4);
        if ok { 4 } else { 1 }
    }

    /// True for CPU (software) adapters such as llvmpipe, where fill rate is
    /// scarce: callers may prefer 1× MSAA for interactive frames there.
    pub fn is_software(&self) -> bool {
        self.adapter_info.device_type == wgpu::DeviceType::Cpu
    }

    /// Anisotropic filtering level for material textures: 8 on hardware, 1 on
    /// software adapters (where it roughly doubles the terrain's shading cost).
    pub fn anisotropy(&self) -> u16 {
        if self.is_software() { 1 } else { 8 }
    }
}
