#!/usr/bin/env python3
"""Makes the 16,384² float32 GeoTIFF of docs/performance.md ("Elevation
data") by upsampling the Jacksboro DEM fixture (bilinear, with 0.3 m of
noise), 256² tiles, LZW, predictor 3, its georeference scaled to match.

    .oracles/venv/bin/python tools/oracles/make_big_geotiff.py OUT.tif
"""
import sys

import numpy as np
import rasterio
from rasterio.windows import Window
from rasterio.transform import from_origin
from rasterio.crs import CRS
src = rasterio.open('tests/data/elevation/jacksboro_fault_dem.tif')
d = src.read(1).astype(np.float64)
h, w = d.shape
N = 16384
xs = np.linspace(0, w - 1, N)
x0 = np.floor(xs).astype(int); x1 = np.minimum(x0 + 1, w - 1); fx = xs - x0
t = src.transform
scale = (w / N)
profile = dict(driver='GTiff', width=N, height=N, count=1, dtype='float32', crs=src.crs,
    transform=from_origin(t.c, t.f, t.a * scale, -t.e * (h / N)), tiled=True, blockxsize=256, blockysize=256,
    compress='lzw', predictor=3, BIGTIFF='IF_SAFER')
rng = np.random.default_rng(7)
with rasterio.open(sys.argv[1], 'w', **profile) as dst:
    for r0 in range(0, N, 256):
        ys = np.linspace(0, h - 1, N)[r0:r0+256]
        y0 = np.floor(ys).astype(int); y1 = np.minimum(y0 + 1, h - 1); fy = (ys - y0)[:, None]
        top = d[y0][:, x0] * (1 - fx) + d[y0][:, x1] * fx
        bot = d[y1][:, x0] * (1 - fx) + d[y1][:, x1] * fx
        block = top * (1 - fy) + bot * fy
        # Sub-pixel detail so the upsampled surface is not planar facets.
        block += rng.normal(0.0, 0.3, block.shape)
        dst.write(block.astype(np.float32), 1, window=Window(0, r0, N, block.shape[0]))
print('done')
