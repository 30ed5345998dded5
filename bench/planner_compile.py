"""Planner compile time for recipes producing ~1k, 10k and 100k blocks.

Two recipe families — a solid box, and a "tower" (hollow cylinder walls, solid floors every
5 layers via repeat, a hollow box plinth and diagonal braces; overlapping shapes) — each
compiled by the core in-process and through gRPC against a real ``python -m mcb_planner``
on free ports. Prints medians; no assertions (tests never time things).

    uv run python bench/planner_compile.py [--repeat N]
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

import grpc  # noqa: E402
from mcb.planner.v1 import planner_pb2, planner_pb2_grpc  # noqa: E402
from mcb_common.errors import McbError  # noqa: E402
from mcb_planner.compile import compile_recipe  # noqa: E402
from mcb_planner.servicer import response_from_result  # noqa: E402

from tests.harness import PY, free_port, start_process  # noqa: E402


def v(x: int, y: int, z: int) -> dict[str, int]:
    return {"x": x, "y": y, "z": z}


def box_recipe(sx: int, sy: int, sz: int) -> dict:
    return {"version": 1, "operations": [
        {"type": "box", "min": v(0, 0, 0), "max": v(sx - 1, sy - 1, sz - 1), "block": "minecraft:stone"}]}


def tower_recipe(r: int) -> dict:
    h = 4 * r
    return {"version": 1, "operations": [
        {"type": "box", "min": v(-r - 2, 0, -r - 2), "max": v(r + 2, 2, r + 2),
         "block": "minecraft:cobblestone", "hollow": True},
        {"type": "cylinder", "center": v(0, 3, 0), "radius": r, "height": h,
         "block": "minecraft:stone_bricks", "hollow": True},
        {"type": "repeat", "count": max(h // 5, 1), "offset": v(0, 5, 0), "operations": [
            {"type": "cylinder", "center": v(0, 3, 0), "radius": r - 1, "height": 1,
             "block": "minecraft:oak_planks"}]},
        {"type": "repeat", "count": 4, "offset": v(0, 0, 0), "operations": [
            {"type": "line", "from": v(-r, 3, -r), "to": v(r, 3 + h - 1, r), "block": "minecraft:oak_log"},
            {"type": "line", "from": v(r, 3, -r), "to": v(-r, 3 + h - 1, r), "block": "minecraft:oak_log"}]},
    ]}


def tower_near(target: int) -> dict:
    best = None
    for r in range(2, 79):  # the tower is 4r tall: r < 79 stays below the world top
        try:
            n = len(compile_recipe(tower_recipe(r)))
        except McbError:  # over the 100,000-block budget
            break
        if best is None or abs(n - target) < abs(best[0] - target):
            best = (n, r)
        if n > target:
            break
    return tower_recipe(best[1])


def median_ms(fn, repeat: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()

    cases = [
        ("box 10×10×10", box_recipe(10, 10, 10)),
        ("box 100×10×10", box_recipe(100, 10, 10)),
        ("box 100×10×100", box_recipe(100, 10, 100)),
        ("tower ~1k", tower_near(1_000)),
        ("tower ~10k", tower_near(10_000)),
        ("tower ~100k", tower_near(100_000)),
    ]

    with tempfile.TemporaryDirectory() as tmp:
        gp, hp = free_port(), free_port()
        env = {"MCB_PLANNER_GRPC_PORT": str(gp), "MCB_PLANNER_HEALTH_PORT": str(hp),
               "MCB_BIND_HOST": "127.0.0.1", "MCB_RUNTIME_DIR": tmp}
        proc = start_process("planner", [PY, "-m", "mcb_planner"], Path(tmp) / "logs", env=env,
                             health_url=f"http://127.0.0.1:{hp}/health")
        try:
            channel = grpc.insecure_channel(f"127.0.0.1:{gp}", options=[
                ("grpc.max_receive_message_length", 64 * 1024 * 1024)])
            grpc.channel_ready_future(channel).result(timeout=15)
            stub = planner_pb2_grpc.PlannerStub(channel)
            print(f"{'recipe':<16} {'blocks':>8} {'examined':>9} {'core ms':>8} {'+proto ms':>9} "
                  f"{'gRPC ms':>8} {'Mblk/s core':>11} {'resp KiB':>8}")
            for name, doc in cases:
                text = json.dumps(doc)
                r = compile_recipe(text)
                core = median_ms(lambda t=text: compile_recipe(t), args.repeat)
                with_proto = median_ms(lambda t=text: response_from_result(compile_recipe(t)), args.repeat)
                req = planner_pb2.CompileRequest(recipe_json=text)
                over_grpc = median_ms(lambda q=req: stub.Compile(q, timeout=60), args.repeat)
                size = len(stub.Compile(req, timeout=60).SerializeToString())
                print(f"{name:<16} {len(r):>8} {r.examined:>9} {core:>8.1f} {with_proto:>9.1f} "
                      f"{over_grpc:>8.1f} {len(r) / core / 1000:>11.1f} {size / 1024:>8.0f}")
            channel.close()
        finally:
            proc.stop()


if __name__ == "__main__":
    main()
