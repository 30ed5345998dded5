"""Benchmark: schematic export and import-prepare for 4k, 30k and 100k positions.

Two levels:
* ``core`` — in-process: planner ``export_schematic`` (region → gzip Sponge v3) and
  ``import_schematic`` (file → sorted write set, rotated 90°), with the file size;
* ``stack`` — through the whole stack (MCP over HTTP → bridge → journal → world host and
  planner): ``schematic_export`` of a built region, then ``schematic_import_prepare`` of it
  rotated 90° elsewhere (the journal reads every base state from the world host).

    uv run python bench/schematics.py        # writes bench/out/schematics.json
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import anyio
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from e2e.conftest import start_stack  # noqa: E402
from e2e.mcpclient import call, http_client  # noqa: E402
from mcb_common.geometry import Vec3  # noqa: E402
from mcb_planner.schematics import export_schematic, import_schematic  # noqa: E402

# name -> (size x, y, z), y of the band it is built in
SIZES = {
    "4k": ((16, 16, 16), 64),
    "30k": ((50, 12, 50), 90),
    "100k": ((50, 40, 50), 110),
}
SRC_X = SRC_Z = -60
DST = (60, 10)  # rotated 90°: x in DST.x-(len-1)..DST.x, z in DST.z..DST.z+(w-1)
STAIRS = "minecraft:oak_stairs[facing=east,half=bottom,shape=straight,waterlogged=false]"
STATES = [
    "minecraft:air",
    "minecraft:oak_planks",
    "minecraft:stone_bricks",
    STAIRS,
    "minecraft:oak_log[axis=x]",
    "minecraft:glass",
]


def recipe(size, y0) -> dict:
    sx, sy, sz = size
    lo = {"x": SRC_X, "y": y0, "z": SRC_Z}
    hi = {"x": SRC_X + sx - 1, "y": y0 + sy - 1, "z": SRC_Z + sz - 1}
    return {
        "version": 1,
        "operations": [
            {"type": "box", "min": lo, "max": hi, "block": "minecraft:stone_bricks", "hollow": True},
            {"type": "box", "min": {**lo, "y": y0 + 2}, "max": {**hi, "y": y0 + 2}, "block": "minecraft:oak_planks"},
            {
                "type": "repeat",
                "count": sz // 4,
                "offset": {"x": 0, "y": 0, "z": 4},
                "operations": [
                    {
                        "type": "line",
                        "from": {"x": SRC_X + 1, "y": y0 + 1, "z": SRC_Z + 1},
                        "to": {"x": SRC_X + sx - 2, "y": y0 + 1, "z": SRC_Z + 1},
                        "block": STAIRS,
                    }
                ],
            },
            {
                "type": "repeat",
                "count": sx // 5,
                "offset": {"x": 5, "y": 0, "z": 0},
                "operations": [
                    {
                        "type": "line",
                        "from": {"x": SRC_X, "y": y0 + 3, "z": SRC_Z},
                        "to": {"x": SRC_X, "y": y0 + sy - 1, "z": SRC_Z},
                        "block": "minecraft:oak_log[axis=y]",
                    }
                ],
            },
        ],
    }


def core_bench(size, repeats: int = 3) -> dict:
    sx, sy, sz = size
    n = sx * sy * sz
    rng = np.random.default_rng(7)
    idx = rng.choice(len(STATES), size=n, p=[0.5, 0.2, 0.15, 0.05, 0.05, 0.05]).astype("<u2").tobytes()
    t_exp, t_imp = [], []
    data = b""
    for _ in range(repeats):
        t0 = time.perf_counter()
        data = export_schematic(size, STATES, idx, offset=(0, 0, 0), data_version=4671, name="bench")
        t1 = time.perf_counter()
        r = import_schematic(data, target=Vec3(0, 64, 0), rotation=90)
        t2 = time.perf_counter()
        assert len(r.compiled) == n
        t_exp.append(t1 - t0)
        t_imp.append(t2 - t1)
    return {
        "positions": n,
        "file_bytes": len(data),
        "export_s": round(statistics.median(t_exp), 4),
        "import_s": round(statistics.median(t_imp), 4),
        "content": "random 6-state mix (worst case for gzip)",
    }


async def stack_bench(stack) -> dict:
    out = {}
    async with http_client(stack.mcp_url, stack.token("agent")) as client:
        for name, (size, y0) in SIZES.items():
            plan = await call(client, "build_prepare", {"recipe": recipe(size, y0)})
            op = await call(
                client,
                "build_apply",
                {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": str(uuid.uuid4())},
            )
            while True:
                st = await call(client, "operation_status", {"operation_id": op["operation_id"]})
                if st["state"] not in ("prepared", "queued", "applying"):
                    break
                await anyio.sleep(0.05)
            assert st["state"] == "applied", st
            sx, sy, sz = size
            lo = {"x": SRC_X, "y": y0, "z": SRC_Z}
            hi = {"x": SRC_X + sx - 1, "y": y0 + sy - 1, "z": SRC_Z + sz - 1}
            t0 = time.perf_counter()
            meta = await call(client, "schematic_export", {"name": f"bench_{name}", "min": lo, "max": hi})
            t1 = time.perf_counter()
            imp = await call(
                client,
                "schematic_import_prepare",
                {"asset_id": f"bench_{name}", "target": {"x": DST[0], "y": y0, "z": DST[1]}, "rotation": 90},
            )
            t2 = time.perf_counter()
            t_list0 = time.perf_counter()
            await call(client, "asset_list", {"query": "bench"})
            t_list1 = time.perf_counter()
            assert imp["total_positions"] == sx * sy * sz
            out[name] = {
                "positions": sx * sy * sz,
                "file_bytes": meta["bytes"],
                "schematic_export_s": round(t1 - t0, 3),
                "schematic_import_prepare_s": round(t2 - t1, 3),
                "changed_blocks": imp["changed_blocks"],
                "asset_list_s": round(t_list1 - t_list0, 3),
            }
            print(name, out[name], flush=True)
    return out


def main() -> int:
    result: dict = {
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(), "platform": platform.platform()},
        "core": {},
        "stack": {},
    }
    for name, (size, _) in SIZES.items():
        result["core"][name] = core_bench(size)
        print("core", name, result["core"][name], flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        stack = start_stack(Path(tmp) / "runtime")
        try:
            result["stack"] = anyio.run(stack_bench, stack)
        finally:
            stack.stop()
    out = ROOT / "bench" / "out" / "schematics.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
