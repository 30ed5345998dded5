"""Prepare time for a 100k-block plan whose states the planner connects (issue 13 item 2), with
1,000 block entities (empty chests, paired by the planner; issue 13 item 3 landed first).

The plan: 99,000 oak fences (a 99×10×100 block of them: every fence joins four neighbours, so
every one goes through the connection rules) and 1,000 chests facing north (10 rows of 100,
paired left/right). Measured:

* the planner core in-process (``compile_recipe`` with a flat-world reader) for four variants:
  connected, the same with every connection property spelled out (pinned), a baseline with
  nothing to connect (99,000 stone and 1,000 barrels: same counts of blocks and block
  entities), and the fences without chests;
* ``build_prepare`` through MCP on the whole stack (``mcb up`` as the e2e tests start it:
  bridge → journal → planner with its world reads → journal checks → stored plan).

Prints medians; no assertions (tests never time things).

    uv run python bench/prepare_connected.py [--repeat N] [--no-stack]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import numpy as np  # noqa: E402
from mcb_planner.compile import compile_recipe  # noqa: E402


def v(x: int, y: int, z: int) -> dict[str, int]:
    return {"x": x, "y": y, "z": z}


VARIANTS = {
    # every fence and chest goes through the connection rules
    "connected": ("oak_fence", "chest[facing=north]"),
    # the same blocks with every connection property spelled out: the rules still run, the
    # pinned values are kept
    "pinned": ("oak_fence[east=true,north=true,south=true,west=true]", "chest[facing=north,type=single]"),
    # nothing to connect (the same count of blocks and of block entities): the baseline
    "baseline": ("stone", "barrel[facing=up]"),
    # connected, without block entities
    "fences only": ("oak_fence", "oak_fence"),
}


def recipe(variant: str) -> dict:
    fence, chest = VARIANTS[variant]
    return {
        "version": 1,
        "operations": [
            {"type": "box", "min": v(-50, 70, -50), "max": v(48, 79, 49), "block": fence},
            {"type": "box", "min": v(-50, 80, -50), "max": v(49, 80, -41), "block": chest},
        ],
    }


def flat_world(box):
    """The flat world of the e2e stack: grass at y 63, air above (what region_read answers)."""
    layer = box.size.x * box.size.z
    idx = np.concatenate([np.full(layer, 0 if y > 63 else 1, dtype=np.uint16) for y in range(box.min.y, box.max.y + 1)])
    return ["minecraft:air", "minecraft:grass_block[snowy=false]"], idx


def median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def core(repeat: int) -> None:
    for name in VARIANTS:
        r = compile_recipe(recipe(name), world=flat_world)
        ms = median_ms(lambda n=name: compile_recipe(recipe(n), world=flat_world), repeat)
        be = sum(c for s, c in r.materials if "chest" in s or "barrel" in s)
        print(f"core compile {name:<12} {len(r):>7} blocks ({be:>4} block entities) {ms:>6.0f} ms")


def stack(repeat: int) -> None:
    import anyio
    from e2e.conftest import start_stack
    from e2e.mcpclient import call, http_client

    with tempfile.TemporaryDirectory() as tmp:
        s = start_stack(Path(tmp) / "runtime")
        try:

            async def run():
                async with http_client(s.mcp_url, s.token("agent")) as client:
                    for name in VARIANTS:
                        times, plan = [], None
                        for _ in range(repeat):
                            t0 = time.perf_counter()
                            plan = await call(client, "build_prepare", {"recipe": recipe(name)})
                            times.append(time.perf_counter() - t0)
                        size = len(json.dumps(plan, separators=(",", ":")))
                        print(
                            f"build_prepare via MCP {name:<12} "
                            f"{plan['changed_blocks']:>7} blocks  median {statistics.median(times) * 1000:>6.0f} ms"
                            f"  min {min(times) * 1000:>6.0f} ms  (answer {size} B)"
                        )

            anyio.run(run)
        finally:
            s.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-stack", action="store_true")
    a = ap.parse_args()
    core(a.repeat)
    if not a.no_stack:
        stack(a.repeat)


if __name__ == "__main__":
    main()
