"""Benchmark: schematics with block entities (issue 31 item 9), in-process.

A box where every other position is a full chest (27 stacks, one named with lore) — the
worst case the model allows — exported (planner ``export_schematic``: full states → Sponge v3
with ``BlockEntities``) and imported (``import_schematic``: parse, upgrade/validate every block
entity, rotate 90°, sort); plus the two furnished fixtures' import when ../shared/fixtures exists.

    uv run python bench/schematic_furniture.py     # writes bench/out/schematic_furniture.json
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
from mcb_common import blockentity
from mcb_common.geometry import Vec3
from mcb_planner.schematics import export_schematic, import_schematic

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT.parent / "shared" / "fixtures" / "schem"
CHEST = "minecraft:chest[facing=north,type=single,waterlogged=false]"
SIZES = {"1k chests": (16, 8, 16), "2k chests": (16, 16, 16)}


def chest(i: int) -> str:
    items = [{"count": 1 + (i + s) % 64, "id": "minecraft:cobblestone", "slot": s} for s in range(26)]
    items.append(
        {
            "components": {"minecraft:custom_name": f"Kit {i}", "minecraft:lore": ["a", "b"]},
            "count": 1,
            "id": "minecraft:iron_sword",
            "slot": 26,
        }
    )
    return CHEST + blockentity.dumps({"items": items})


def furnished(size, repeats: int = 3) -> dict:
    w, h, ln = size
    n = w * h * ln
    palette = ["minecraft:air"] + [chest(i) for i in range(n // 2)]
    idx = np.zeros(n, dtype="<u2")
    idx[::2] = np.arange(1, n // 2 + 1)
    t_exp, t_imp = [], []
    data = b""
    for _ in range(repeats):
        t0 = time.perf_counter()
        data = export_schematic(size, palette, idx.tobytes(), offset=(0, 0, 0), data_version=4671, name="bench")
        t1 = time.perf_counter()
        r = import_schematic(data, target=Vec3(0, 64, 0), rotation=90)
        t2 = time.perf_counter()
        assert len(r.compiled) == n
        t_exp.append(t1 - t0)
        t_imp.append(t2 - t1)
    return {
        "positions": n,
        "block_entities": n // 2,
        "file_bytes": len(data),
        "export_s": round(statistics.median(t_exp), 4),
        "import_s": round(statistics.median(t_imp), 4),
    }


def fixture(name: str, repeats: int = 5) -> dict | None:
    p = FIXTURES / name
    if not p.is_file():
        return None
    data = p.read_bytes()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        r = import_schematic(data, target=Vec3(0, 64, 0), rotation=90)
        times.append(time.perf_counter() - t0)
    return {"positions": len(r.compiled), "import_s": round(statistics.median(times), 4)}


def main() -> int:
    result: dict = {
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(), "platform": platform.platform()},
        "furnished": {},
        "fixtures": {},
    }
    for name, size in SIZES.items():
        result["furnished"][name] = furnished(size)
        print(name, result["furnished"][name], flush=True)
    for name in ("nucleation_new_chest_test_v2.schem", "prismarine_smallhouse1_v2.schem"):
        result["fixtures"][name] = fixture(name)
        print(name, result["fixtures"][name], flush=True)
    out = ROOT / "bench" / "out" / "schematic_furniture.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
