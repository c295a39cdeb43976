#!/usr/bin/env python3
"""Writes five tileable PBR texture sets, one folder each, named the way
texture sites and Substance export them, for trying Strata's material
import (`strata --material-texture NAME=FOLDER`, or the panel's Import):

    OUT/cobblestone/cobblestone_basecolor.png  _normal_gl.png  _roughness.png  _height.png
    OUT/moss/...        OUT/red_sand/...        OUT/basalt/...
    OUT/lichen_rock/lichen_rock_diff.jpg  (a JPEG albedo, "diff" as Poly Haven names it)

Every map tiles (all noise and cells wrap around), so the terrain shows no
seams. The same seed gives the same files. Needs numpy and imagecodecs
(the oracles' venv from .ci/setup has both):

    .oracles/venv/bin/python tools/materials/make_texture_sets.py OUT [SIDE] [COUNT]

COUNT (default 5) above five writes more sets, `<kind>_<k>`, cycling through
the five kinds with a new seed each, so every set's texels differ (the
frame-cost measurement of 64 imported materials uses 64).
"""

import sys
from pathlib import Path

import imagecodecs
import numpy as np


def value_noise(rng, side, cells):
    """Tileable smooth noise in [0, 1]: a cells² random lattice, wrapped,
    interpolated with a smoothstep."""
    lattice = rng.random((cells, cells))
    t = np.arange(side) * cells / side
    i0 = np.floor(t).astype(int) % cells
    i1 = (i0 + 1) % cells
    f = t - np.floor(t)
    f = f * f * (3 - 2 * f)
    a = lattice[np.ix_(i0, i0)]
    b = lattice[np.ix_(i0, i1)]
    c = lattice[np.ix_(i1, i0)]
    d = lattice[np.ix_(i1, i1)]
    fx = f[None, :]
    fy = f[:, None]
    return (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy


def fractal(rng, side, base_cells, octaves):
    total = np.zeros((side, side))
    amp, norm = 1.0, 0.0
    for o in range(octaves):
        total += amp * value_noise(rng, side, base_cells * 2**o)
        norm += amp
        amp *= 0.5
    return total / norm


def voronoi(rng, side, count):
    """Distances to the nearest and second-nearest of `count` wrapped
    points, and the nearest point's index."""
    pts = rng.random((count, 2)) * side
    y, x = np.mgrid[0:side, 0:side].astype(float)
    d1 = np.full((side, side), np.inf)
    d2 = np.full((side, side), np.inf)
    idx = np.zeros((side, side), dtype=int)
    for k, (px, py) in enumerate(pts):
        dx = np.abs(x - px)
        dy = np.abs(y - py)
        dx = np.minimum(dx, side - dx)
        dy = np.minimum(dy, side - dy)
        d = np.sqrt(dx * dx + dy * dy)
        closer = d < d1
        d2 = np.where(closer, d1, np.minimum(d2, d))
        idx = np.where(closer, k, idx)
        d1 = np.where(closer, d, d1)
    return d1, d2, idx


def normal_gl(height, strength):
    """OpenGL-convention tangent-space normals (green up) from a height map."""
    dx = (np.roll(height, -1, axis=1) - np.roll(height, 1, axis=1)) * strength
    dy = (np.roll(height, -1, axis=0) - np.roll(height, 1, axis=0)) * strength
    n = np.stack([-dx, dy, np.ones_like(height)], axis=-1)
    n /= np.linalg.norm(n, axis=-1, keepdims=True)
    return ((n * 0.5 + 0.5) * 255 + 0.5).astype(np.uint8)


def to8(a):
    return (np.clip(a, 0, 1) * 255 + 0.5).astype(np.uint8)


def colorize(t, low, high):
    low = np.array(low, dtype=float) / 255
    high = np.array(high, dtype=float) / 255
    return low + (high - low) * t[..., None]


def cobblestone(rng, side):
    d1, d2, idx = voronoi(rng, side, 48)
    edge = np.clip((d2 - d1) / 6.0, 0, 1)
    shade = rng.random(48)[idx]
    grain = fractal(rng, side, 16, 4)
    height = edge**0.5 * (0.7 + 0.3 * grain)
    stone = colorize(0.35 + 0.4 * shade[..., None][..., 0] * 1.0 + 0.25 * grain, (88, 80, 72), (176, 166, 150))
    mortar = colorize(grain, (52, 46, 40), (74, 66, 58))
    albedo = np.where(edge[..., None] > 0.25, stone, mortar)
    rough = 0.55 + 0.4 * (1 - edge)
    return albedo, height, rough


def moss(rng, side):
    n = fractal(rng, side, 8, 5)
    fine = fractal(rng, side, 64, 2)
    height = 0.6 * n + 0.4 * fine
    albedo = colorize(np.clip(1.4 * n - 0.2, 0, 1), (48, 74, 22), (132, 160, 50))
    albedo *= (0.8 + 0.3 * fine)[..., None]
    return albedo, height, 0.8 + 0.15 * fine


def red_sand(rng, side):
    warp = fractal(rng, side, 4, 3)
    y = np.mgrid[0:side, 0:side][0] / side
    ripples = 0.5 + 0.5 * np.sin(2 * np.pi * (12 * y + 2.0 * warp))
    grain = fractal(rng, side, 128, 1)
    height = 0.7 * ripples + 0.3 * grain
    albedo = colorize(0.5 * ripples + 0.5 * grain, (168, 82, 44), (222, 138, 84))
    return albedo, height, 0.85 + 0.1 * grain


def basalt(rng, side):
    d1, d2, idx = voronoi(rng, side, 24)
    crack = np.clip((d2 - d1) / 3.0, 0, 1)
    shade = rng.random(24)[idx]
    grain = fractal(rng, side, 32, 3)
    height = crack * (0.6 + 0.4 * shade)
    albedo = colorize(0.2 + 0.4 * shade + 0.3 * grain, (28, 28, 32), (92, 90, 96)) * crack[..., None] ** 0.3
    return albedo, height, 0.4 + 0.4 * grain


def lichen_rock(rng, side):
    rock = fractal(rng, side, 8, 5)
    spots = fractal(rng, side, 16, 3)
    lichen = np.clip((spots - 0.58) * 8, 0, 1)
    albedo = colorize(rock, (96, 98, 100), (170, 170, 166))
    albedo = albedo * (1 - lichen[..., None]) + colorize(rock, (150, 160, 60), (200, 196, 92)) * lichen[..., None]
    height = rock + 0.1 * lichen
    return albedo, height, 0.7 - 0.2 * lichen


SETS = [
    ("cobblestone", cobblestone, "png"),
    ("moss", moss, "png"),
    ("red_sand", red_sand, "png"),
    ("basalt", basalt, "png"),
    ("lichen_rock", lichen_rock, "jpg"),
]


def main():
    out = Path(sys.argv[1])
    side = int(sys.argv[2]) if len(sys.argv) > 2 else 512
    count = int(sys.argv[3]) if len(sys.argv) > 3 else len(SETS)
    for k in range(count):
        kind, make, albedo_format = SETS[k % len(SETS)]
        name = kind if k < len(SETS) else f"{kind}_{k}"
        rng = np.random.default_rng(1000 + k)
        albedo, height, rough = make(rng, side)
        height = (height - height.min()) / max(height.max() - height.min(), 1e-9)
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        rgb = to8(albedo)
        if albedo_format == "jpg":
            (folder / f"{name}_diff.jpg").write_bytes(imagecodecs.jpeg8_encode(rgb, level=92))
        else:
            (folder / f"{name}_basecolor.png").write_bytes(imagecodecs.png_encode(rgb))
        (folder / f"{name}_normal_gl.png").write_bytes(imagecodecs.png_encode(normal_gl(height, 6.0)))
        (folder / f"{name}_roughness.png").write_bytes(imagecodecs.png_encode(to8(rough)))
        h16 = (height * 65535 + 0.5).astype(np.uint16)
        (folder / f"{name}_height.png").write_bytes(imagecodecs.png_encode(h16))
        print(folder)


if __name__ == "__main__":
    main()
