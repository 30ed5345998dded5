"""Planner compile time for recipes producing ~1k, 10k and 100k blocks, and (``--stack``)
prepare and region_inspect end to end through the services.

Three recipe families — a solid box, a "tower" (hollow cylinder walls, solid floors every
5 layers via repeat, a hollow box plinth and diagonal braces; overlapping shapes), and a
language-revision-2 "rev2" recipe (params + expressions, a weighted palette, and the same
walls four times through ``transform`` rotations with stairs) — each compiled by the core
in-process and through gRPC against a real ``python -m mcb_planner`` on free ports.

``--stack`` also starts the whole stack (``mcb up``: world host with a pregenerated flat world,
planner, journal, bridge) and times, through MCP: ``build_prepare`` for 1k/10k/100k-block
recipes (bridge → journal → planner → world reads → stored plan), and ``region_inspect``
summary and heightmap over ~2,000,000 positions, fully generated and half never generated.
Prints medians; no assertions (tests never time things).

    uv run python bench/planner_compile.py [--repeat N] [--stack]
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
from mcb_rpc.auth import call_metadata  # noqa: E402
from mcb_rpc.tokens import ensure_token  # noqa: E402

from tests.harness import PY, free_port, start_process  # noqa: E402


def v(x: int, y: int, z: int) -> dict[str, int]:
    return {"x": x, "y": y, "z": z}


def box_recipe(sx: int, sy: int, sz: int) -> dict:
    return {
        "version": 1,
        "operations": [
            {"type": "box", "min": v(0, 0, 0), "max": v(sx - 1, sy - 1, sz - 1), "block": "minecraft:stone"}
        ],
    }


def tower_recipe(r: int) -> dict:
    h = 4 * r
    return {
        "version": 1,
        "operations": [
            {
                "type": "box",
                "min": v(-r - 2, 0, -r - 2),
                "max": v(r + 2, 2, r + 2),
                "block": "minecraft:cobblestone",
                "hollow": True,
            },
            {
                "type": "cylinder",
                "center": v(0, 3, 0),
                "radius": r,
                "height": h,
                "block": "minecraft:stone_bricks",
                "hollow": True,
            },
            {
                "type": "repeat",
                "count": max(h // 5, 1),
                "offset": v(0, 5, 0),
                "operations": [
                    {
                        "type": "cylinder",
                        "center": v(0, 3, 0),
                        "radius": r - 1,
                        "height": 1,
                        "block": "minecraft:oak_planks",
                    }
                ],
            },
            {
                "type": "repeat",
                "count": 4,
                "offset": v(0, 0, 0),
                "operations": [
                    {"type": "line", "from": v(-r, 3, -r), "to": v(r, 3 + h - 1, r), "block": "minecraft:oak_log"},
                    {"type": "line", "from": v(r, 3, -r), "to": v(-r, 3 + h - 1, r), "block": "minecraft:oak_log"},
                ],
            },
        ],
    }


def rev2_recipe(n: int) -> dict:
    """Four stair-topped walls of length n made from one wall turned about the centre."""
    wall = [
        {
            "type": "box",
            "min": v("-half", "base", "-half"),
            "max": v("half", "base + h - 1", "-half"),
            "block": "$wall",
        },
        {"type": "box", "min": v("-half", "base + h", "-half"), "max": v("half", "base + h", "-half"), "block": "$cap"},
    ]
    return {
        "version": 1,
        "seed": 3,
        "params": {"n": n, "half": "floor(n / 2)", "h": 10, "base": 0},
        "palette": {
            "wall": [
                {"block": "stone_bricks", "weight": 5},
                {"block": "mossy_stone_bricks", "weight": 2},
                {"block": "cracked_stone_bricks", "weight": 1},
            ],
            "cap": "stone_brick_stairs[facing=north]",
        },
        "operations": [
            {"type": "transform", "rotate": deg, "anchor": v(0, 0, 0), "operations": wall} for deg in (0, 90, 180, 270)
        ],
    }


def rev2_near(target: int) -> dict:
    return rev2_recipe(max(3, round(target / 44)))


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
    ap.add_argument("--stack", action="store_true", help="also time prepare/inspect through the services")
    args = ap.parse_args()

    cases = [
        ("box 10×10×10", box_recipe(10, 10, 10)),
        ("box 100×10×10", box_recipe(100, 10, 10)),
        ("box 100×10×100", box_recipe(100, 10, 100)),
        ("tower ~1k", tower_near(1_000)),
        ("tower ~10k", tower_near(10_000)),
        ("tower ~100k", tower_near(100_000)),
        ("rev2 ~1k", rev2_near(1_000)),
        ("rev2 ~10k", rev2_near(10_000)),
        ("rev2 ~100k", rev2_near(100_000)),
    ]

    with tempfile.TemporaryDirectory() as tmp:
        gp, hp = free_port(), free_port()
        env = {
            "MCB_PLANNER_GRPC_PORT": str(gp),
            "MCB_PLANNER_HEALTH_PORT": str(hp),
            "MCB_BIND_HOST": "127.0.0.1",
            "MCB_RUNTIME_DIR": tmp,
        }
        md = call_metadata(ensure_token(Path(tmp) / "secrets", "service"))  # the journal's principal
        proc = start_process(
            "planner",
            [PY, "-m", "mcb_planner"],
            Path(tmp) / "logs",
            env=env,
            health_url=f"http://127.0.0.1:{hp}/health",
        )
        try:
            channel = grpc.insecure_channel(
                f"127.0.0.1:{gp}", options=[("grpc.max_receive_message_length", 64 * 1024 * 1024)]
            )
            grpc.channel_ready_future(channel).result(timeout=15)
            stub = planner_pb2_grpc.PlannerStub(channel)
            print(
                f"{'recipe':<16} {'blocks':>8} {'examined':>9} {'core ms':>8} {'+proto ms':>9} "
                f"{'gRPC ms':>8} {'Mblk/s core':>11} {'resp KiB':>8}"
            )
            for name, doc in cases:
                text = json.dumps(doc)
                r = compile_recipe(text)
                core = median_ms(lambda t=text: compile_recipe(t), args.repeat)
                with_proto = median_ms(lambda t=text: response_from_result(compile_recipe(t)), args.repeat)
                req = planner_pb2.CompileRequest(recipe_json=text)
                over_grpc = median_ms(lambda q=req: stub.Compile(q, timeout=60, metadata=md), args.repeat)
                size = len(stub.Compile(req, timeout=60, metadata=md).SerializeToString())
                print(
                    f"{name:<16} {len(r):>8} {r.examined:>9} {core:>8.1f} {with_proto:>9.1f} "
                    f"{over_grpc:>8.1f} {len(r) / core / 1000:>11.1f} {size / 1024:>8.0f}"
                )
            channel.close()
        finally:
            proc.stop()
    if args.stack:
        stack_bench(args.repeat)


def stack_bench(repeat: int) -> None:
    """build_prepare and region_inspect through bridge → journal → planner/world host."""
    import anyio

    sys.path.insert(0, str(ROOT / "tests"))
    from e2e.conftest import start_stack
    from e2e.mcpclient import call, http_client

    def box(x0, y0, z0, x1, y1, z1, block="minecraft:stone"):
        return {
            "version": 1,
            "operations": [{"type": "box", "min": v(x0, y0, z0), "max": v(x1, y1, z1), "block": block}],
        }

    prepares = [
        ("box 1k", box(-5, 70, -5, 4, 79, 4)),
        ("box 10k", box(-25, 70, -25, 24, 73, 24)),
        ("box 100k", box(-50, 70, -50, 49, 79, 49)),
        ("rev2 ~1k", rev2_recipe(23)),
        ("rev2 ~5k", rev2_recipe(120)),
        ("rev2 ~100k", {**rev2_recipe(120), "params": {"n": 120, "half": 60, "h": 206, "base": 70}}),
    ]
    inspects = [
        ("summary 2M generated", {"min": v(-64, -64, -64), "max": v(63, 57, 63), "detail": "summary"}),
        ("summary 2M half missing", {"min": v(-64, 0, -64), "max": v(191, 60, 63), "detail": "summary"}),
        ("heightmap 2M step 4", {"min": v(-64, -64, -64), "max": v(63, 57, 63), "detail": "heightmap", "step": 4}),
        ("summary 250k", {"min": v(-64, 0, -64), "max": v(63, 14, 63), "detail": "summary"}),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        stack = start_stack(Path(tmp) / "runtime")
        try:

            async def run():
                async with http_client(stack.mcp_url, stack.token("agent")) as client:
                    print(f"\n{'through the services (MCP)':<28} {'blocks':>8} {'median ms':>10} {'answer B':>9}")
                    for name, recipe in prepares:
                        times, plan = [], None
                        for _ in range(max(2, repeat // 2)):
                            t0 = time.perf_counter()
                            plan = await call(client, "build_prepare", {"recipe": recipe})
                            times.append(time.perf_counter() - t0)
                        size = len(json.dumps(plan, separators=(",", ":")))
                        print(
                            f"prepare {name:<20} {plan['total_positions']:>8} "
                            f"{statistics.median(times) * 1000:>10.0f} {size:>9}"
                        )
                    for name, args in inspects:
                        times, out = [], None
                        for _ in range(max(2, repeat // 2)):
                            t0 = time.perf_counter()
                            out = await call(client, "region_inspect", args)
                            times.append(time.perf_counter() - t0)
                        size = len(json.dumps(out, separators=(",", ":")))
                        unknown = out.get("unknown_chunk_count", 0)
                        print(
                            f"inspect {name:<20} {out['positions']:>8} "
                            f"{statistics.median(times) * 1000:>10.0f} {size:>9}"
                            f"{f'  ({unknown} chunks unknown)' if unknown else ''}"
                        )

            anyio.run(run)
        finally:
            stack.stop()


if __name__ == "__main__":
    main()
