#!/usr/bin/env python3
"""Writes the elevation fixtures of tests/heightmap_formats.rs with
independent writers: GeoTIFFs with GDAL (through rasterio), an EXR with
OpenEXR's Python binding, a RAW16 with numpy; and the values the import must
find in them (expected.json).

Run from the repository root with the oracles' Python (.ci/setup installs it):

    .oracles/venv/bin/python tools/oracles/make_elevation_fixtures.py SHARED_DATA_DIR

SHARED_DATA_DIR holds jacksboro_fault_dem.png and .json (the project's
shared/data). The files go to tests/data/elevation/; the pinned versions in
tools/oracles/requirements.txt make the same bytes each run.

Expected pixel sizes of geographic files come from the WGS 84 ellipsoid's
radii of curvature (meridional M and prime vertical N), not from the series
Strata uses, so the two check each other.
"""

import json
import math
import sys
from pathlib import Path

import numpy as np
import rasterio
from rasterio.crs import CRS
from rasterio.transform import from_origin

OUT = Path("tests/data/elevation")

WGS84_A = 6378137.0
WGS84_F = 1 / 298.257223563
WGS84_E2 = WGS84_F * (2 - WGS84_F)


def metres_per_degree(lat_deg):
    """(east-west, north-south) metres per degree at lat_deg, from the
    ellipsoid's radii of curvature."""
    phi = math.radians(lat_deg)
    w = 1 - WGS84_E2 * math.sin(phi) ** 2
    n = WGS84_A / math.sqrt(w)
    m = WGS84_A * (1 - WGS84_E2) / w ** 1.5
    return n * math.cos(phi) * math.pi / 180, m * math.pi / 180


def relief(width, height, scale, offset):
    """A smooth field with ridges, as float64."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    return offset + scale * (
        0.5 * np.sin(x / 9.0) * np.cos(y / 13.0) + 0.3 * np.sin((x + 2 * y) / 17.0) + x / width
    )


def write(name, data, crs, transform, nodata=None, **profile):
    path = OUT / name
    with rasterio.open(
        path,
        "w",
        driver="GTiff",
        width=data.shape[1],
        height=data.shape[0],
        count=1,
        dtype=data.dtype,
        crs=crs,
        transform=transform,
        nodata=nodata,
        **profile,
    ) as dst:
        dst.write(data, 1)
    return path


def write_bands(name, bands, crs, transform, **profile):
    """write() for several bands of one type (band 1 the elevation)."""
    path = OUT / name
    with rasterio.open(
        path,
        "w",
        driver="GTiff",
        width=bands[0].shape[1],
        height=bands[0].shape[0],
        count=len(bands),
        dtype=bands[0].dtype,
        crs=crs,
        transform=transform,
        **profile,
    ) as dst:
        for i, band in enumerate(bands):
            dst.write(band, i + 1)
    return path


def probe_points(width, height):
    """Pixels whose values the test checks: corners, edges of tiles, middle."""
    pts = {(0, 0), (width - 1, 0), (0, height - 1), (width - 1, height - 1), (width // 2, height // 2)}
    pts |= {(63, 63), (64, 64), (min(width - 1, 130), 7), (5, min(height - 1, 71)), (40, 30)}
    return sorted((x, y) for x, y in pts if x < width and y < height)


def expect(path, data, pixel_size_m, nodata=None, unit_m=1.0):
    """What the import must read: size, pixel size, samples at probe points
    (metres, None where NoData) and the NoData count."""
    height, width = data.shape
    # Read back through GDAL, so what is expected is what the file holds.
    with rasterio.open(path) as src:
        stored = src.read(1)
    assert np.array_equal(stored, data, equal_nan=True)
    if nodata is None:
        missing = np.zeros(data.shape, dtype=bool)
    elif isinstance(nodata, float) and math.isnan(nodata):
        missing = np.isnan(stored)
    else:
        missing = stored == stored.dtype.type(nodata)
    samples = []
    for x, y in probe_points(width, height):
        v = None if missing[y, x] else float(np.float32(float(stored[y, x]) * unit_m))
        samples.append([x, y, v])
    valid = stored[~missing].astype(np.float64) * unit_m
    return {
        "width": width,
        "height": height,
        "pixel_size_m": list(pixel_size_m),
        "samples": samples,
        "nodata_count": int(missing.sum()),
        "min_m": float(np.float32(valid.min())),
        "max_m": float(np.float32(valid.max())),
    }


def expect_array(data, pixel_size_m, f32=True):
    """expect() for data that is not a GeoTIFF (NaN marks NoData)."""
    height, width = data.shape
    missing = np.isnan(data)
    cast = (lambda v: float(np.float32(v))) if f32 else float
    samples = [
        [x, y, None if missing[y, x] else cast(data[y, x])]
        for x, y in probe_points(width, height)
    ]
    valid = data[~missing]
    return {
        "width": width,
        "height": height,
        "pixel_size_m": list(pixel_size_m),
        "samples": samples,
        "nodata_count": int(missing.sum()),
        "min_m": cast(valid.min()),
        "max_m": cast(valid.max()),
    }


def main():
    shared = Path(sys.argv[1])
    OUT.mkdir(parents=True, exist_ok=True)
    expected = {}

    # 1. float32, 64 x 64 tiles (edge tiles padded), LZW, floating-point predictor.
    data = relief(200, 150, 400.0, 1200.0).astype(np.float32)
    path = write(
        "float32_tiled_lzw_pred3.tif", data, CRS.from_epsg(32614),
        from_origin(500000.0, 3700000.0, 10.0, 10.0),
        tiled=True, blockxsize=64, blockysize=64, compress="lzw", predictor=3,
    )
    expected[path.name] = expect(path, data, (10.0, 10.0))

    # 2. int16 with negative elevations, strips of 7 rows, Deflate, horizontal predictor.
    data = np.round(relief(181, 97, 1500.0, 600.0) - 700.0).astype(np.int16)
    path = write(
        "int16_striped_deflate_pred2.tif", data, CRS.from_epsg(32633),
        from_origin(400000.0, 5100000.0, 30.0, 30.0),
        tiled=False, blockysize=7, compress="deflate", predictor=2,
    )
    expected[path.name] = expect(path, data, (30.0, 30.0))

    # 3. uint16 with NoData 65535 over a lake-shaped hole, PackBits.
    data = np.round(relief(120, 90, 300.0, 600.0)).astype(np.uint16)
    y, x = np.mgrid[0:90, 0:120]
    data[((x - 40) ** 2 + (y - 30) ** 2) < 150] = 65535
    data[:, 119] = 65535
    path = write(
        "uint16_nodata_packbits.tif", data, CRS.from_epsg(32617),
        from_origin(700000.0, 4000000.0, 5.0, 5.0),
        nodata=65535, compress="packbits",
    )
    expected[path.name] = expect(path, data, (5.0, 5.0), nodata=65535)

    # 4. Geographic: 1 arc-second float32 pixels north of 34 deg N, NaN NoData.
    arcsec = 1.0 / 3600.0
    data = relief(160, 120, 250.0, 150.0).astype(np.float32)
    data[100:, :20] = np.nan
    path = write(
        "geographic_degrees.tif", data, CRS.from_epsg(4326),
        from_origin(-98.0, 34.0 + 120 * arcsec, arcsec, arcsec),
        nodata=float("nan"), tiled=True, blockxsize=32, blockysize=32, compress="deflate",
    )
    mx, my = metres_per_degree(34.0 + 60 * arcsec)
    expected[path.name] = expect(path, data, (arcsec * mx, arcsec * my), nodata=float("nan"))

    # 5. The Jacksboro DEM (a USGS 3 arc-second grid) with a geographic
    # georeference: its PNG's elevations as float32, 3-arc-second pixels at
    # the latitude where 3 arc-seconds of longitude span the sidecar's 74.5 m.
    side = json.loads((shared / "jacksboro_fault_dem.json").read_text())
    with rasterio.open(shared / "jacksboro_fault_dem.png") as src:
        codes = src.read(1).astype(np.float64)
    lo, hi = side["min_elevation_m"], side["max_elevation_m"]
    data = (lo + codes / 65535.0 * (hi - lo)).astype(np.float32)
    three = 3.0 / 3600.0
    south_lat, north_lat = 0.0, 80.0
    for _ in range(60):  # bisection: 3 arc-seconds of longitude = spacing_x_m
        lat = (south_lat + north_lat) / 2
        if metres_per_degree(lat)[0] * three > side["spacing_x_m"]:
            south_lat = lat
        else:
            north_lat = lat
    north = round(lat + data.shape[0] / 2 * three, 6)
    west = -84.42
    path = write(
        "jacksboro_fault_dem.tif", data, CRS.from_epsg(4326),
        from_origin(west, north, three, three),
        tiled=True, blockxsize=128, blockysize=128, compress="lzw", predictor=3,
    )
    mx, my = metres_per_degree(north - data.shape[0] / 2 * three)
    expected[path.name] = expect(path, data, (three * mx, three * my))

    # 6. EXR: float32 R, G, B, with the elevation in R (the channel terrain
    # tools write first), and a sidecar for the pixel size.
    import OpenEXR

    data = relief(96, 64, 120.0, 40.0).astype(np.float32)
    data[10:14, 30:33] = np.nan
    header = {"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage}
    rgb = {"R": data, "G": np.zeros_like(data), "B": np.full_like(data, 7.0)}
    with OpenEXR.File(header, rgb) as f:
        f.write(str(OUT / "rgb_float32.exr"))
    (OUT / "rgb_float32.json").write_text(
        json.dumps({"spacing_x_m": 2.0, "spacing_y_m": 2.0, "min_elevation_m": 0.0,
                    "max_elevation_m": 0.0}) + "\n")
    expected["rgb_float32.exr"] = expect_array(data, (2.0, 2.0))

    # 7. RAW16, little-endian, 129 x 129 (a Unity size), with a sidecar.
    codes = np.round(relief(129, 129, 20000.0, 30000.0)).clip(0, 65535).astype("<u2")
    codes.tofile(OUT / "unity_129.r16")
    (OUT / "unity_129.json").write_text(
        json.dumps({"spacing_x_m": 1.5, "spacing_y_m": 1.5, "min_elevation_m": -20.0,
                    "max_elevation_m": 480.0}) + "\n")
    metres = -20.0 + codes.astype(np.float64) / 65535.0 * 500.0
    expected["unity_129.r16"] = expect_array(metres, (1.5, 1.5), f32=False)

    # 8. int16, 64 x 64 tiles whose right and bottom edge tiles are partial,
    # LZW without a predictor, as GDAL writes it by default: tiff 0.11.3
    # refused tile 14 with "no lzw end code found" (image-tiff issue 395).
    data = np.round(relief(300, 257, 1500.0, 600.0)).astype(np.int16)
    path = write(
        "int16_tiled_lzw_edges.tif", data, CRS.from_epsg(32614),
        from_origin(500000.0, 3700000.0, 10.0, 10.0),
        tiled=True, blockxsize=64, blockysize=64, compress="lzw",
    )
    expected[path.name] = expect(path, data, (10.0, 10.0))

    # 9. Three float32 bands, the elevation first: pixel-interleaved RGB
    # (BitsPerSample and SampleFormat hold one value per band) and
    # band-interleaved (planar) with plain bands.
    data = relief(70, 45, 90.0, 310.0).astype(np.float32)
    others = [np.full_like(data, -5.0e6), np.full_like(data, 7.0)]
    path = write_bands(
        "float32_rgb_pixel.tif", [data] + others, CRS.from_epsg(32614),
        from_origin(500000.0, 3700000.0, 4.0, 4.0),
        photometric="RGB", interleave="pixel", compress="deflate",
    )
    expected[path.name] = expect(path, data, (4.0, 4.0))
    path = write_bands(
        "float32_bands_planar.tif", [data] + others, CRS.from_epsg(32614),
        from_origin(500000.0, 3700000.0, 4.0, 4.0),
        interleave="band", tiled=True, blockxsize=32, blockysize=32, compress="lzw",
    )
    expected[path.name] = expect(path, data, (4.0, 4.0))

    (OUT / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
