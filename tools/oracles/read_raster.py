#!/usr/bin/env python3
"""Reads a raster with an independent reader and prints what it holds as
JSON, for tests/heightmap_roundtrip.rs to compare with what Strata wrote.

    read_raster.py geotiff PATH     # rasterio (GDAL): transform, CRS, NoData, samples
    read_raster.py tifffile PATH    # tifffile: the GeoTIFF tags and samples
    read_raster.py exr PATH         # OpenEXR's Python binding: channels and samples
    read_raster.py raw16 PATH W H little|big   # numpy: the 16-bit samples

Samples are listed row by row, row 0 first; NaN is printed as null.
"""

import json
import math
import sys

import numpy as np


def samples(array):
    flat = np.asarray(array, dtype=np.float64).ravel()
    return [None if math.isnan(v) else v for v in flat.tolist()]


def geotiff(path):
    import rasterio

    with rasterio.open(path) as src:
        data = src.read(1)
        return {
            "width": src.width,
            "height": src.height,
            "dtype": str(data.dtype),
            "transform": list(src.transform)[:6],
            "epsg": src.crs.to_epsg() if src.crs else None,
            "nodata": None if src.nodata is None else str(src.nodata),
            "samples": samples(data),
        }


def tiff_tags(path):
    import tifffile

    with tifffile.TiffFile(path) as tif:
        page = tif.pages[0]
        tags = {t.code: t.value for t in page.tags.values()}
        return {
            "width": page.imagewidth,
            "height": page.imagelength,
            "pixel_scale": list(tags.get(33550, [])),
            "tiepoint": list(tags.get(33922, [])),
            "geokeys": list(tags.get(34735, [])),
            "samples": samples(page.asarray()),
        }


def exr(path):
    import OpenEXR

    with OpenEXR.File(path) as f:
        channels = f.channels()
        name = "Y" if "Y" in channels else sorted(channels)[0]
        pixels = channels[name].pixels
        return {
            "channels": sorted(channels),
            "width": int(pixels.shape[1]),
            "height": int(pixels.shape[0]),
            "dtype": str(pixels.dtype),
            "samples": samples(pixels),
        }


def raw16(path, width, height, order):
    dtype = "<u2" if order == "little" else ">u2"
    data = np.fromfile(path, dtype=dtype)
    assert data.size == width * height, (data.size, width, height)
    return {"width": width, "height": height, "samples": samples(data)}


def main():
    kind, path = sys.argv[1], sys.argv[2]
    if kind == "geotiff":
        out = geotiff(path)
    elif kind == "tifffile":
        out = tiff_tags(path)
    elif kind == "exr":
        out = exr(path)
    elif kind == "raw16":
        out = raw16(path, int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    else:
        raise SystemExit(f"unknown kind {kind}")
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
