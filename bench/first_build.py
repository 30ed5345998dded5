"""Benchmark: from `git clone` to a first build over MCP, on this machine.

Steps, each timed (wall clock):

  1. clone     `git clone` of this repository (from its local path; on a new machine this is a
               network clone, not measured here)
  2. bootstrap `scripts/bootstrap.sh` in the clone (what `make up` runs first): apt packages and uv
               are already present here; `uv sync --frozen` builds the clone's .venv from uv's
               cache; `npm ci` of the pinned codex-acp from npm's cache
  3. up        `uv run --frozen mcb up --quiet` (free ports, runtime folder inside the clone) until
               READY: a new flat world, tokens, Redis and every service
  4. build     over MCP (streamable HTTP, the agent token): project_context, build_prepare of the
               README's first recipe, build_apply, operation_status until applied

Usage: uv run python bench/first_build.py   (needs git, redis-server, uv, npm on PATH)
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from harness import free_port  # noqa: E402
from mcpclient import call, http_client, wait_terminal  # noqa: E402

PORTS = (
    "WORLD_HOST",
    "BRIDGE",
    "PLANNER_GRPC",
    "JOURNAL_GRPC",
    "CAMERA_GRPC",
    "PLANNER_HEALTH",
    "JOURNAL_HEALTH",
    "CAMERA_HEALTH",
    "REDIS",
    "DASHBOARD",
)
RECIPE = {
    "version": 1,
    "operations": [
        {
            "type": "box",
            "min": {"x": 0, "y": 64, "z": 0},
            "max": {"x": 4, "y": 70, "z": 4},
            "block": "minecraft:stone_bricks",
            "hollow": True,
        }
    ],
}


def timed(label: str, times: dict[str, float], argv: list[str], cwd: Path, env: dict[str, str]) -> None:
    t = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    times[label] = time.perf_counter() - t
    print(f"{label:<10} {times[label]:7.1f} s", flush=True)


async def first_build(url: str, token: str) -> dict:
    async with http_client(url, token) as client:
        await call(client, "project_context")
        plan = await call(client, "build_prepare", {"recipe": RECIPE})
        rep = await call(
            client,
            "build_apply",
            {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": "first-build"},
        )
        return await wait_terminal(client, rep["operation_id"], timeout=120)


def main() -> None:
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="mcb-first-build-") as tmp:
        clone = Path(tmp) / "minecraft-builder-mcp"
        env = {k: v for k, v in os.environ.items() if not k.startswith("MCB_") and k != "VIRTUAL_ENV"}
        timed("clone", times, ["git", "clone", "--quiet", str(ROOT), str(clone)], Path(tmp), env)
        timed("bootstrap", times, ["scripts/bootstrap.sh"], clone, env)
        env |= {"MCB_RUNTIME_DIR": str(clone / ".runtime"), **{f"MCB_{p}_PORT": str(free_port()) for p in PORTS}}
        t = time.perf_counter()
        up = subprocess.Popen(
            ["uv", "run", "--frozen", "mcb", "up", "--quiet"],
            cwd=clone,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            assert up.stdout is not None
            for line in up.stdout:
                if line.strip() == "READY":
                    break
            else:
                raise SystemExit("mcb up ended before READY")
            times["up"] = time.perf_counter() - t
            print(f"{'up':<10} {times['up']:7.1f} s", flush=True)
            token = (clone / ".runtime" / "secrets" / "agent.token").read_text().strip()
            t = time.perf_counter()
            status = asyncio.run(first_build(f"http://127.0.0.1:{env['MCB_BRIDGE_PORT']}/mcp", token))
            times["build"] = time.perf_counter() - t
            print(
                f"{'build':<10} {times['build']:7.1f} s  ({status['state']}, {status.get('written')} written)",
                flush=True,
            )
            assert status["state"] == "applied", status
        finally:
            if up.poll() is None:
                up.send_signal(signal.SIGINT)
                try:
                    up.wait(60)
                except subprocess.TimeoutExpired:
                    os.killpg(up.pid, signal.SIGKILL)
    print(json.dumps({**{k: round(v, 1) for k, v in times.items()}, "total_s": round(sum(times.values()), 1)}))


if __name__ == "__main__":
    main()
