"""Benchmark: what an operation's Before picture (issue 31 item 7, journal before.py) costs an apply.

Starts the stack as separately controlled processes (tests/e2e/components.py: Redis, the embedded
world host, planner, journal, bridge, plus the camera worker), then, with the Before picture on
(MCB_JOURNAL_BEFORE_CAPTURE_S default) and off (=0, the journal restarted), applies the same
recipes over MCP and times build_apply -> applied (wall clock), and says how many operations got
a linked Before picture.

Usage: uv run --frozen python bench/before_capture.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from e2e.components import start_components  # noqa: E402
from e2e.mcpclient import call, http_client, wait_terminal  # noqa: E402


def recipe(x: int, z: int, size: int, height: int) -> dict:
    return {
        "version": 1,
        "operations": [
            {
                "type": "box",
                "min": {"x": x, "y": 64, "z": z},
                "max": {"x": x + size - 1, "y": 63 + height, "z": z + size - 1},
                "block": "minecraft:stone_bricks",
            }
        ],
    }


async def run(url: str, token: str, shapes: list[tuple[str, dict]]) -> dict[str, list[tuple[float, bool]]]:
    out: dict[str, list[tuple[float, bool]]] = {}
    async with http_client(url, token) as client:
        for name, r in shapes:
            plan = await call(client, "build_prepare", {"recipe": r})
            t0 = time.perf_counter()
            op = await call(
                client,
                "build_apply",
                {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": uuid.uuid4().hex},
            )
            st = await wait_terminal(client, op["operation_id"], timeout=300)
            took = time.perf_counter() - t0
            assert st["state"] == "applied", st
            out.setdefault(name, []).append((took, bool(st.get("before_capture_id"))))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        comp = start_components(Path(tmp) / "rt")
        try:
            comp.start("camera-worker")
            for mode, env in (("on", {}), ("off", {"MCB_JOURNAL_BEFORE_CAPTURE_S": "0"})):
                comp.procs["journal"].stop()
                comp.start("journal", env)
                shapes = []
                for i in range(args.repeat):
                    z = -60 + 12 * i + (60 if mode == "off" else 0)
                    shapes.append(("small 5x7x5 (175 blocks)", recipe(-60, z, 5, 7)))
                    # the same columns each time, one layer higher: every apply writes 36,864+ blocks
                    shapes.append(
                        ("large 48x16x48 (36,864+ blocks)", recipe(-20, -60 if mode == "on" else 10, 48, 16 + i))
                    )
                got = anyio.run(run, comp.mcp_url, comp.token("agent"), shapes)
                for name, rows in got.items():
                    times = [t for t, _ in rows]
                    linked = sum(1 for _, b in rows if b)
                    print(
                        f"before picture {mode:3}  {name:32} median {statistics.median(times) * 1000:7.0f} ms  "
                        f"min {min(times) * 1000:7.0f}  max {max(times) * 1000:7.0f}  linked {linked}/{len(rows)}"
                    )
        finally:
            comp.stop_all()


if __name__ == "__main__":
    main()
