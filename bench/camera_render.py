"""Benchmark: the built-in renderer alone, in process (no world host, no Redis, no gRPC): the
village of ``bench/camera_capture.py`` on a flat grass world, 64³ and 128³ boxes, 1280x720,
from the same poses. Separates the renderer's own cost (meshing, drawing, PNG) from the
capture path's reads and queueing, so a change to the renderer can be compared before/after
on a loaded shared machine by running both back to back:

    uv run --frozen python bench/camera_render.py [--runs 9]
    # the previous renderer: a worktree of an older commit, its camera package first on the path
    git worktree add /tmp/mcb-old <commit>
    PYTHONPATH=/tmp/mcb-old/services/camera-worker/src uv run --frozen python bench/camera_render.py

mesh = mesh.build (cold captures only: a warm capture reuses the mesh); draw = GLRenderer.render
(GPU work and read-back, what every capture pays); png = png.encode. Medians of ``--runs``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from camera_capture import scene_blocks  # noqa: E402
from mcb_camera import gl, mesh, png  # noqa: E402

CASES = {  # box (x0, y0, z0, x1, y1, z1), pose (feet, yaw, pitch) as in camera_capture.py
    "64^3": ((-32, 56, -32, 31, 119, 31), ((-40.0, 82.0, -40.0), -45.0, 25.0)),
    "128^3": ((-64, 56, -64, 63, 183, 63), ((-70.0, 100.0, -70.0), -45.0, 30.0)),
}


def scene(box: tuple[int, ...]) -> tuple[list[str], np.ndarray]:
    x0, y0, z0, x1, y1, z1 = box
    pal = ["minecraft:air", "minecraft:dirt", "minecraft:grass_block"]
    a = np.zeros((y1 - y0 + 1, z1 - z0 + 1, x1 - x0 + 1), np.uint16)
    a[: 63 - y0] = 1
    a[63 - y0] = 2
    index = {s: i for i, s in enumerate(pal)}
    for b in scene_blocks():
        x, y, z = b["x"] - x0, b["y"] - y0, b["z"] - z0
        if 0 <= x < a.shape[2] and 0 <= y < a.shape[0] and 0 <= z < a.shape[1]:
            i = index.setdefault(b["state"], len(pal))
            if i == len(pal):
                pal.append(b["state"])
            a[y, z, x] = i
    return pal, a


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()
    r = gl.GLRenderer()
    out = {"renderer": r.info, "camera_package": str(Path(mesh.__file__).parent), "runs": args.runs, "results": {}}
    for name, (box, (feet, yaw, pitch)) in CASES.items():
        pal, arr = scene(box)
        t_mesh, t_draw, t_png = [], [], []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            m = mesh.build(pal, arr)
            t1 = time.perf_counter()
            v = gl.perspective_view(feet, yaw, pitch, 70.0, 1280, 720, box[:3], max(64.0, float(sum(m.size)) * 2 + 32))
            img = r.render(m, v)
            t2 = time.perf_counter()
            png.encode(img)
            t3 = time.perf_counter()
            t_mesh.append(t1 - t0)
            t_draw.append(t2 - t1)
            t_png.append(t3 - t2)
        res = {
            "faces": m.faces,
            **{
                k: round(statistics.median(v) * 1000, 1)
                for k, v in (("mesh_ms", t_mesh), ("draw_ms", t_draw), ("png_ms", t_png))
            },
            "draw_ms_min_max": [round(min(t_draw) * 1000, 1), round(max(t_draw) * 1000, 1)],
        }
        out["results"][name] = res
        print(name, json.dumps(res), flush=True)
    dest = Path(__file__).resolve().parent / "out" / "camera_render.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
