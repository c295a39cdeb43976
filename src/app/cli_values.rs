//! Parsers of the command line's values (sizes, cameras, seeds, boxes,
//! elevations, material restyles): each takes the text as typed and gives
//! the value or a message that says what is wrong and what is expected.
//! The binary hands them to its argument parser, and flattens
//! [`MaterialFlags`] into its own flags.

use glam::{DVec3, IVec3};

use crate::io::materials::RestyleRequest;
use crate::terrain::storage::coords::CellBox;

/// The `--material-*` flags: restyles of the world's material library,
/// each repeatable.
#[derive(Clone, Debug, Default, PartialEq, clap::Args)]
pub struct MaterialFlags {
    /// Add a material to the world's library from a texture folder or one
    /// image (as --material-texture reads them), at the lowest free id
    /// from 11: `NAME=PATH`, repeatable (before the other --material-*
    /// flags, which may then name it). Up to 254 solid materials.
    #[arg(long = "material-add", value_name = "NAME=PATH", requires = "headless", value_parser = parse_material_add)]
    pub material_add: Vec<RestyleRequest>,

    /// Draw a material with a texture folder (its albedo, and its normal,
    /// roughness and height maps; PBR names) or with one PNG/JPEG as its
    /// albedo, stored in the world's material library: `NAME=PATH`
    /// (`NAME:top=PATH`: its upward faces, albedo only), repeatable (e.g.
    /// `grass=textures/moss`). Whole worlds only; saved with --save.
    #[arg(long = "material-texture", value_name = "NAME=PATH", requires = "headless", value_parser = parse_material_texture)]
    pub material_texture: Vec<RestyleRequest>,

    /// Tint a material: `NAME=RRGGBB` (sRGB hex), repeatable.
    #[arg(long = "material-tint", value_name = "NAME=RRGGBB", requires = "headless", value_parser = parse_material_tint)]
    pub material_tint: Vec<RestyleRequest>,

    /// The studs one texture tile of a material covers (4, 8, 16, 32, 64
    /// or 128): `NAME=STUDS`, repeatable.
    #[arg(long = "material-tiling", value_name = "NAME=STUDS", requires = "headless", value_parser = parse_material_tiling)]
    pub material_tiling: Vec<RestyleRequest>,

    /// How strongly a material's height map decides where it shows among
    /// blended materials, 0 to 100 % (the material needs a height map,
    /// imported with its texture folder): `NAME=PCT`, repeatable.
    #[arg(long = "material-blend", value_name = "NAME=PCT", requires = "headless", value_parser = parse_material_blend)]
    pub material_blend: Vec<RestyleRequest>,

    /// Rename a material (after the other --material-* flags, which use
    /// the old name): `NAME=NEW_NAME`, repeatable.
    #[arg(long = "material-name", value_name = "NAME=NEW_NAME", requires = "headless", value_parser = parse_material_rename)]
    pub material_name: Vec<RestyleRequest>,
}

impl MaterialFlags {
    /// Every request in the order they apply: added materials, textures,
    /// tiles, tints, blend sharpness, then names (the others use the old
    /// names).
    pub fn requests(&self) -> Vec<RestyleRequest> {
        [
            &self.material_add,
            &self.material_texture,
            &self.material_tiling,
            &self.material_tint,
            &self.material_blend,
            &self.material_name,
        ]
        .into_iter()
        .flatten()
        .cloned()
        .collect()
    }
}

/// Image size `WIDTHxHEIGHT` in pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size(pub u32, pub u32);

/// `WIDTHxHEIGHT`: each side 1 to [`crate::render::frame::offscreen::MAX_IMAGE_SIDE`] pixels.
pub fn parse_size(s: &str) -> Result<Size, String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("expected WIDTHxHEIGHT like 1280x720, got {s:?}"))?;
    let parse = |v: &str, what: &str| {
        v.trim()
            .parse::<u32>()
            .map_err(|_| format!("{what} {v:?} is not a whole number"))
    };
    let (w, h) = (parse(w, "width")?, parse(h, "height")?);
    if w == 0
        || h == 0
        || w > crate::render::frame::offscreen::MAX_IMAGE_SIDE
        || h > crate::render::frame::offscreen::MAX_IMAGE_SIDE
    {
        return Err(format!(
            "{w}x{h}: each side must be between 1 and {} pixels",
            crate::render::frame::offscreen::MAX_IMAGE_SIDE
        ));
    }
    Ok(Size(w, h))
}

/// `--time SECONDS`: any finite number.
pub fn parse_time(s: &str) -> Result<f32, String> {
    s.trim()
        .parse::<f32>()
        .ok()
        .filter(|t| t.is_finite())
        .ok_or_else(|| format!("{s:?} is not a finite number of seconds"))
}

/// The longest `--stall-timeout-s` (a day).
pub const MAX_STALL_TIMEOUT_S: f64 = 86_400.0;

/// `--stall-timeout-s SECONDS`: more than 0, at most a day.
pub fn parse_stall_timeout(s: &str) -> Result<std::time::Duration, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|t| *t > 0.0 && *t <= MAX_STALL_TIMEOUT_S)
        .map(std::time::Duration::from_secs_f64)
        .ok_or_else(|| {
            format!("{s:?} is not a number of seconds above 0 and at most {MAX_STALL_TIMEOUT_S}")
        })
}

/// `--seed N`: a whole number from 0 to `u64::MAX` (negative numbers reach
/// this parser, so the message says why they are refused).
pub fn parse_seed(s: &str) -> Result<u64, String> {
    s.trim().parse::<u64>().map_err(|_| {
        format!(
            "the seed must be a whole number from 0 to {}, got {s:?}",
            u64::MAX
        )
    })
}

/// `--export-region X0,Y0,Z0,X1,Y1,Z1`: a box of cells, min inclusive, max
/// exclusive (the crop checks its size and lattice).
pub fn parse_export_region(s: &str) -> Result<CellBox, String> {
    let values: Vec<i32> = s
        .split(',')
        .map(|v| v.trim().parse::<i32>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("expected six whole numbers x0,y0,z0,x1,y1,z1 (cells), got {s:?}"))?;
    let [x0, y0, z0, x1, y1, z1] = <[i32; 6]>::try_from(values.as_slice())
        .map_err(|_| format!("expected six numbers x0,y0,z0,x1,y1,z1 (cells), got {s:?}"))?;
    let region = CellBox::new(IVec3::new(x0, y0, z0), IVec3::new(x1, y1, z1));
    if region.is_empty() {
        return Err(format!(
            "the box {s:?} holds no cell (each max must exceed its min)"
        ));
    }
    // The crop's own limits, checked before anything runs or is written.
    crate::terrain::storage::coords::check_on_lattice(&region).map_err(|e| e.to_string())?;
    let limit = crate::terrain::editing::region::MAX_CROP_SIDE_CELLS;
    let size = region.max.as_i64vec3() - region.min.as_i64vec3();
    if size.x > i64::from(limit) || size.z > i64::from(limit) {
        return Err(format!(
            "the box is {}×{} cells (x×z); at most {limit}×{limit}",
            size.x, size.z
        ));
    }
    Ok(region)
}

/// `--world-size CELLS`: a positive whole number (the generator then checks
/// the multiple of 32 and the maximum).
pub fn parse_world_size(s: &str) -> Result<u32, String> {
    let refuse = || {
        format!(
            "the world size must be a positive whole number of cells (a multiple of 32 up to {}; \
             above {} the world streams), got {s:?}",
            crate::terrain::generation::generate::MAX_STREAMING_SIZE_CELLS,
            crate::terrain::generation::generate::MAX_SIZE_CELLS
        )
    };
    match s.trim().parse::<i128>() {
        Ok(n) if n >= 1 => u32::try_from(n).map_err(|_| refuse()),
        _ => Err(refuse()),
    }
}

/// `--sea-level ELEVATION`: any finite number, negative ones included.
pub fn parse_elevation(s: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("the sea level must be a finite elevation, got {s:?}"))
}

/// Camera `X,Y,Z,YAW_DEG,PITCH_DEG`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraArg {
    /// Position, world studs.
    pub pos: DVec3,
    /// Heading, degrees, wrapped to 0..360.
    pub yaw_deg: f32,
    /// Pitch, degrees, positive upward.
    pub pitch_deg: f32,
}

/// `X,Y,Z,YAW_DEG,PITCH_DEG`: finite numbers, the pitch within
/// [`crate::camera::MAX_PITCH_DEG`]; any heading, wrapped.
pub fn parse_camera(s: &str) -> Result<CameraArg, String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() != 5 {
        return Err(format!(
            "expected 5 comma-separated numbers X,Y,Z,YAW_DEG,PITCH_DEG, got {} in {s:?}",
            parts.len()
        ));
    }
    let mut v = [0.0f64; 5];
    for (i, (p, name)) in parts
        .iter()
        .zip(["X", "Y", "Z", "YAW_DEG", "PITCH_DEG"])
        .enumerate()
    {
        v[i] = p
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("{name} {p:?} is not a finite number"))?;
    }
    if v[4].abs() > crate::camera::MAX_PITCH_DEG as f64 {
        return Err(format!(
            "PITCH_DEG {} is outside -{m}..={m}",
            v[4],
            m = crate::camera::MAX_PITCH_DEG
        ));
    }
    Ok(CameraArg {
        pos: DVec3::new(v[0], v[1], v[2]),
        // Any heading is accepted; it is wrapped to 0..360 degrees.
        yaw_deg: v[3].rem_euclid(360.0) as f32,
        pitch_deg: v[4] as f32,
    })
}

/// Splits `NAME=VALUE` (a material's name, then what to give it).
fn material_pair<'a>(s: &'a str, what: &str) -> Result<(String, &'a str), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("expected MATERIAL={what}, got {s:?}"))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(format!(
            "expected MATERIAL={what}: the material name is empty"
        ));
    }
    Ok((name.to_string(), value.trim()))
}

/// `--material-texture NAME=PATH`: a texture folder or image for a
/// material; `NAME:top=PATH` for its top variant (upward-facing surfaces).
pub fn parse_material_texture(s: &str) -> Result<RestyleRequest, String> {
    let (material, path) = material_pair(s, "PATH")?;
    if path.is_empty() {
        return Err(format!("{s:?}: the path is empty"));
    }
    let path = path.into();
    Ok(match material.rsplit_once(':') {
        Some((name, "top")) if !name.trim().is_empty() => RestyleRequest::TopTexture {
            material: name.trim().to_string(),
            path,
        },
        Some((_, part)) => {
            return Err(format!(
                "{material:?}: after the name, only `:top` (the top variant) is known, not {part:?}"
            ));
        }
        None => RestyleRequest::Texture { material, path },
    })
}

/// `--material-add NAME=PATH`: a new material's name and its texture
/// folder or image.
pub fn parse_material_add(s: &str) -> Result<RestyleRequest, String> {
    let (name, path) = material_pair(s, "PATH")?;
    if path.is_empty() {
        return Err(format!("{s:?}: the path is empty"));
    }
    Ok(RestyleRequest::Add {
        name,
        path: path.into(),
    })
}

/// `--material-tint NAME=RRGGBB`: an sRGB tint in hex (a leading `#` is allowed).
pub fn parse_material_tint(s: &str) -> Result<RestyleRequest, String> {
    let (material, hex) = material_pair(s, "RRGGBB")?;
    let hex = hex.strip_prefix('#').unwrap_or(hex);
    let value = (hex.len() == 6)
        .then(|| u32::from_str_radix(hex, 16).ok())
        .flatten()
        .ok_or_else(|| format!("{hex:?} is not a colour like 8fbf6a"))?;
    let [_, r, g, b] = value.to_be_bytes();
    Ok(RestyleRequest::Tint {
        material,
        tint_srgb: [r, g, b],
    })
}

/// `--material-tiling NAME=STUDS`: the studs one texture tile covers.
pub fn parse_material_tiling(s: &str) -> Result<RestyleRequest, String> {
    let (material, studs) = material_pair(s, "STUDS")?;
    let studs = studs
        .parse::<u32>()
        .map_err(|_| format!("{studs:?} is not a whole number of studs"))?;
    Ok(RestyleRequest::Tiling { material, studs })
}

/// `--material-blend NAME=PCT`: the height-blend sharpness, percent.
pub fn parse_material_blend(s: &str) -> Result<RestyleRequest, String> {
    let (material, pct) = material_pair(s, "PCT")?;
    let pct = pct
        .trim_end_matches('%')
        .parse::<u32>()
        .map_err(|_| format!("{pct:?} is not a whole percentage (0 to 100)"))?;
    Ok(RestyleRequest::BlendSharpness { material, pct })
}

/// `--material-name NAME=NEW_NAME`: renames a material.
pub fn parse_material_rename(s: &str) -> Result<RestyleRequest, String> {
    let (material, name) = material_pair(s, "NEW_NAME")?;
    Ok(RestyleRequest::Rename {
        material,
        name: name.to_string(),
    })
}

#[cfg(test)]
mod tests {

    #[test]
    fn material_textures_parse_with_an_optional_top() {
        assert_eq!(
            parse_material_texture("grass=a/b"),
            Ok(RestyleRequest::Texture {
                material: "grass".into(),
                path: "a/b".into()
            })
        );
        assert_eq!(
            parse_material_texture("Studio moss:top=x.png"),
            Ok(RestyleRequest::TopTexture {
                material: "Studio moss".into(),
                path: "x.png".into()
            })
        );
        for bad in ["grass:side=x", ":top=x", "grass=", "=x", "grass"] {
            assert!(parse_material_texture(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_material_tint("rock=#FF8000"),
            Ok(RestyleRequest::Tint {
                material: "rock".into(),
                tint_srgb: [255, 128, 0]
            })
        );
        assert!(parse_material_tint("rock=12345").is_err());
        assert!(parse_material_tiling("rock=x").is_err());
    }

    use super::*;

    #[test]
    fn stall_timeouts_are_positive_seconds_up_to_a_day() {
        assert_eq!(
            parse_stall_timeout("2.5"),
            Ok(std::time::Duration::from_millis(2500))
        );
        for bad in ["0", "-1", "nan", "inf", "86401", "soon"] {
            assert!(parse_stall_timeout(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes_parse_and_reject_zero() {
        assert_eq!(parse_size("320x180"), Ok(Size(320, 180)));
        assert!(parse_size("0x5").is_err());
        assert!(parse_size("12").is_err());
        assert!(parse_size("ax5").is_err());
    }

    #[test]
    fn cameras_parse_and_reject_garbage() {
        let c = parse_camera("-10,20.5,3,45,-30").unwrap();
        assert_eq!(c.pos, DVec3::new(-10.0, 20.5, 3.0));
        assert_eq!((c.yaw_deg, c.pitch_deg), (45.0, -30.0));
        assert!(parse_camera("1,2,3,4").is_err());
        assert!(parse_camera("1,2,3,4,nan").is_err());
        assert!(parse_camera("1,2,3,4,95").is_err());
    }
}
