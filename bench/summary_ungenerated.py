"""Benchmark: region_inspect summaries of ~2M positions over partly or never generated land.

Starts the embedded world host (``python -m mcb_world_host``) on a free port with a fresh flat
world whose pre-generated area is 128 × 128 blocks (8 × 8 chunks), then runs the journal's
summary code (``mcb_journal.inspect.inspect_into``) over HTTP against it:

  mostly-ungenerated   1414 × 1 × 1414 (1,999,396 positions) centred on the generated square
  never-generated      the same box far away (no chunk exists)
  fully-generated      128 × 122 × 128 (1,998,848 positions) inside the generated square

each with ``chunks_exist`` (one call, then only existing chunks read) and, for comparison, with
the fallback used for hosts without it (split the box around not_found answers). Reports the
median of --runs wall times, world-host calls per summary. Usage:

    uv run python bench/summary_ungenerated.py [--runs 5] [--no-fallback]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from harness import free_port, start_process  # noqa: E402
from mcb.journal.v1 import journal_pb2 as jpb  # noqa: E402
from mcb_common.geometry import Box, Vec3  # noqa: E402
from mcb_journal import inspect as insp  # noqa: E402
from mcb_rpc.tokens import ensure_token  # noqa: E402
from mcb_rpc.worldclient import WorldClient  # noqa: E402

CASES = {
    "mostly-ungenerated": Box(Vec3(-707, 60, -707), Vec3(706, 60, 706)),
    "never-generated": Box(Vec3(100_000, 60, 100_000), Vec3(101_413, 60, 101_413)),
    "fully-generated": Box(Vec3(-64, -64, -64), Vec3(63, 57, 63)),
}


class Counting(WorldClient):
    calls: dict[str, int]

    async def call(self, method, params, result):  # noqa: ANN001
        self.calls[method] = self.calls.get(method, 0) + 1
        return await super().call(method, params, result)


async def one(world: Counting, box: Box, fallback: bool) -> tuple[float, dict[str, int], jpb.RegionInspectResponse]:
    original = insp.existing_chunks
    if fallback:

        async def none(*a, **k):  # noqa: ANN002, ANN003
            return None

        insp.existing_chunks = none
    world.calls = {}
    resp = jpb.RegionInspectResponse()
    t0 = time.perf_counter()
    try:
        await insp.inspect_into(world, resp, box, "summary", 0)
    finally:
        insp.existing_chunks = original
    return time.perf_counter() - t0, dict(world.calls), resp


async def run(url: str, token: str, runs: int, fallback: bool) -> None:
    world = Counting(url, token, timeout=300)
    try:
        for name, box in CASES.items():
            for mode in ["chunks_exist", "fallback"] if fallback else ["chunks_exist"]:
                times, calls, resp = [], {}, None
                for _ in range(runs if mode == "chunks_exist" else 1):
                    t, calls, resp = await one(world, box, mode == "fallback")
                    times.append(t)
                print(
                    f"{name:<19} {mode:<12} {box.volume:>9,} positions  median {statistics.median(times):7.3f} s "
                    f"(min {min(times):.3f}, max {max(times):.3f}, n={len(times)})  calls {calls}  "
                    f"unknown chunks {resp.unknown_chunk_count}  non-air {resp.non_air:,}",
                    flush=True,
                )
    finally:
        await world.aclose()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--no-fallback", action="store_true", help="skip the (slow) fallback comparison")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmpd = Path(tmp)
        secrets = tmpd / "secrets"
        token = ensure_token(secrets, "service")
        port = free_port()
        env = {
            "MCB_RUNTIME_DIR": str(tmpd),
            "MCB_SECRETS_DIR": str(secrets),
            "MCB_WORLD_CREATE": "flat",
            "MCB_WORLD_DIR": str(tmpd / "world"),
            "MCB_WORLD_PREGEN": "-64,-64,63,63",
            "MCB_WORLD_HOST_PORT": str(port),
            "MCB_SERVICE_TOKEN": "",
        }
        url = f"http://127.0.0.1:{port}"
        proc = start_process(
            "world-host",
            [sys.executable, "-m", "mcb_world_host"],
            tmpd / "logs",
            env=env,
            health_url=f"{url}/health",
            timeout=60,
        )
        try:
            asyncio.run(run(url, token, args.runs, not args.no_fallback))
        finally:
            proc.stop()


if __name__ == "__main__":
    main()
