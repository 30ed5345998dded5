"""The seed build's apply time in containers (compose.yaml) vs plain processes, same machine.

    uv run python bench/compose_apply.py [--rounds 5] [--skip-compose] [--skip-processes]

Each round prepares the seed recipe of tests/e2e/test_build_e2e.py shifted along x (fresh air,
so every round writes the same number of blocks) and times build_apply -> applied over MCP
(HTTP, agent token), polling operation_status every 10 ms. Processes: tests/e2e/components.py
(embedded world host, planner, journal, bridge, Redis). Containers: `docker compose up --wait`
on a throw-away project (images built before, e.g. by tests/docker), torn down with its volumes.
Prints one JSON line per stack: median, min, max seconds and blocks per round.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from e2e.mcpclient import call, http_client  # noqa: E402
from e2e.test_build_e2e import SEED_RECIPE  # noqa: E402
from harness import free_ports  # noqa: E402

OFFSETS = [-60, -40, -20, 20, 40]  # x shifts inside the default project area (-64..63)


def shifted(dx: int) -> dict[str, Any]:
    recipe = copy.deepcopy(SEED_RECIPE)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k in ("min", "max", "from", "to", "center") and isinstance(v, dict):
                    v["x"] += dx
                elif k != "offset":
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(recipe["operations"])
    return recipe


async def rounds(url: str, token: str, n: int) -> list[tuple[float, int]]:
    out = []
    async with http_client(url, token) as client:
        for i in range(n):
            plan = await call(client, "build_prepare", {"recipe": shifted(OFFSETS[i % len(OFFSETS)])})
            start = time.perf_counter()
            op = await call(
                client,
                "build_apply",
                {
                    "plan_id": plan["plan_id"],
                    "plan_hash": plan["plan_hash"],
                    "idempotency_key": f"bench-{uuid.uuid4()}",
                },
            )
            while True:
                st = await call(client, "operation_status", {"operation_id": op["operation_id"]})
                if st["state"] not in ("prepared", "queued", "applying"):
                    break
                await anyio.sleep(0.01)
            took = time.perf_counter() - start
            assert st["state"] == "applied", st
            out.append((took, st["written"]))
    return out


def report(name: str, res: list[tuple[float, int]]) -> None:
    secs = [s for s, _ in res]
    print(
        json.dumps(
            {
                "stack": name,
                "rounds": len(res),
                "blocks": res[0][1],
                "median_s": round(statistics.median(secs), 3),
                "min_s": round(min(secs), 3),
                "max_s": round(max(secs), 3),
            }
        )
    )


def processes(n: int) -> None:
    from e2e.components import start_components

    with tempfile.TemporaryDirectory() as tmp:
        comp = start_components(Path(tmp) / "rt")
        try:
            report("processes", anyio.run(rounds, comp.mcp_url, comp.token("agent"), n))
        finally:
            comp.stop_all()


def containers(n: int) -> None:
    bridge, world = free_ports(2)
    env = {
        **os.environ,
        "COMPOSE_PROJECT_NAME": f"mcb-bench-{uuid.uuid4().hex[:8]}",
        "MCB_BRIDGE_PUBLISH_PORT": str(bridge),
        "MCB_WORLD_HOST_PUBLISH_PORT": str(world),
    }
    dc = ["docker", "compose", "-f", str(ROOT / "compose.yaml")]
    try:
        start = time.perf_counter()
        subprocess.run([*dc, "up", "--detach", "--wait", "--no-build"], env=env, check=True, capture_output=True)
        print(json.dumps({"stack": "containers", "up_wait_s": round(time.perf_counter() - start, 1)}))
        token = subprocess.run(
            [*dc, "exec", "-T", "bridge", "cat", "/secrets/agent.token"],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        report("containers", anyio.run(rounds, f"http://127.0.0.1:{bridge}/mcp", token, n))
    finally:
        subprocess.run([*dc, "down", "--volumes"], env=env, capture_output=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--skip-compose", action="store_true")
    ap.add_argument("--skip-processes", action="store_true")
    args = ap.parse_args()
    if not args.skip_processes:
        processes(args.rounds)
    if not args.skip_compose:
        containers(args.rounds)


if __name__ == "__main__":
    main()
