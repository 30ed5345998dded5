"""The ops dashboard: page load time and bytes, progress-event latency journal -> page, and the
dashboard process's memory with 1,000 operations in the journal.

    uv run --frozen python bench/dashboard.py [--ops 1000]

Real processes (tests/e2e/components.py: Redis, embedded world host, planner, journal, bridge)
plus the dashboard. ``--ops`` one-block operations are prepared and applied through the journal's
gRPC API (agent token). Page load: Debian's Chromium (headless, Playwright) navigation timing
and the bytes of every response, 5 loads; without Chromium only the HTTP numbers. Latency: a
20,000-block apply watched by the page; per progress event, the page's receive time minus the
journal's ``at_ms`` (same machine, same clock). Memory: VmRSS of the dashboard process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from e2e.components import start_components  # noqa: E402
from harness import PY, free_port, start_process, wait_until  # noqa: E402

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def make_ops(comp, n: int) -> float:
    import grpc
    from mcb.journal.v1 import journal_pb2 as jpb
    from mcb.journal.v1 import journal_pb2_grpc
    from mcb_rpc.auth import call_metadata

    owner = json.loads((comp.runtime / "config.json").read_text())["projects"][0]["owner_player_id"]
    md = call_metadata(comp.token("agent"), "default", owner)
    t0 = time.perf_counter()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{comp.ports['journal_grpc']}") as ch:
        stub = journal_pb2_grpc.JournalStub(ch)
        for i in range(n):
            x, z = -60 + i % 100, -60 + i // 100
            recipe = {
                "version": 1,
                "operations": [
                    {
                        "type": "box",
                        "min": {"x": x, "y": 120, "z": z},
                        "max": {"x": x, "y": 120, "z": z},
                        "block": "minecraft:stone",
                    }
                ],
            }
            plan = await stub.BuildPrepare(jpb.BuildPrepareRequest(recipe_json=json.dumps(recipe)), metadata=md)
            await stub.BuildApply(
                jpb.BuildApplyRequest(
                    plan_id=plan.plan_id, plan_hash=plan.plan_hash, idempotency_key=str(uuid.uuid4())
                ),
                metadata=md,
            )
    return time.perf_counter() - t0


async def apply_20k(comp) -> str:
    import grpc
    from mcb.journal.v1 import journal_pb2 as jpb
    from mcb.journal.v1 import journal_pb2_grpc
    from mcb_rpc.auth import call_metadata

    owner = json.loads((comp.runtime / "config.json").read_text())["projects"][0]["owner_player_id"]
    md = call_metadata(comp.token("agent"), "default", owner)
    recipe = {
        "version": 1,
        "operations": [
            {
                "type": "box",
                "min": {"x": -40, "y": 64, "z": -40},
                "max": {"x": -1, "y": 83, "z": -16},
                "block": "minecraft:bricks",
            }
        ],
    }
    async with grpc.aio.insecure_channel(f"127.0.0.1:{comp.ports['journal_grpc']}") as ch:
        stub = journal_pb2_grpc.JournalStub(ch)
        plan = await stub.BuildPrepare(jpb.BuildPrepareRequest(recipe_json=json.dumps(recipe)), metadata=md)
        op = await stub.BuildApply(
            jpb.BuildApplyRequest(plan_id=plan.plan_id, plan_hash=plan.plan_hash, idempotency_key=str(uuid.uuid4())),
            metadata=md,
        )
    return op.operation_id


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", type=int, default=1000)
    args = ap.parse_args()
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        comp = start_components(Path(tmp) / "rt")
        try:
            port = free_port()
            dash = start_process(
                "dashboard",
                [PY, "-m", "mcb_dashboard"],
                comp.runtime / "logs",
                env=dict(comp.env) | {"MCB_DASHBOARD_PORT": str(port)},
                health_url=f"http://127.0.0.1:{port}/health",
                timeout=60,
            )
            comp.procs["dashboard"] = dash
            base = f"http://127.0.0.1:{port}"
            out["rss_kib_idle"] = rss_kib(dash.popen.pid)
            out["make_ops_s"] = round(asyncio.run(make_ops(comp, args.ops)), 1)

            def all_done() -> bool:
                r = httpx.get(base + "/fragments/operations", timeout=30)
                return "data-op-row" not in r.text  # no queued or running operation left

            wait_until(all_done, 300, "every operation to finish", interval=1.0)
            times, sizes = [], []
            for _ in range(10):
                t0 = time.perf_counter()
                r = httpx.get(base + "/", timeout=30)
                times.append((time.perf_counter() - t0) * 1000)
                sizes.append(len(r.content))
            out["http_get_ms_median"] = round(statistics.median(times), 1)
            out["http_get_ms_max"] = round(max(times), 1)
            out["html_bytes"] = sizes[-1]
            out["static_bytes"] = sum(
                len(httpx.get(f"{base}/static/{n}").content) for n in ("dashboard.js", "dashboard.css")
            )
            out["rss_kib_1000_ops"] = rss_kib(dash.popen.pid)
            chromium = shutil.which("chromium")
            if chromium:
                from playwright.sync_api import sync_playwright

                with sync_playwright() as pw:
                    ctx = pw.chromium.launch_persistent_context(
                        str(Path(tmp) / "profile"), executable_path=chromium, headless=True, args=ARGS
                    )
                    page = ctx.new_page()
                    loads, transferred = [], []
                    got: list[int] = []
                    page.on(
                        "response",
                        lambda r: got.append(len(r.body()) if r.status == 200 and "/events" not in r.url else 0),
                    )
                    for _ in range(5):
                        got.clear()
                        page.goto(base + "/", wait_until="load")
                        nav = page.evaluate("performance.getEntriesByType('navigation')[0].toJSON()")
                        loads.append(nav["loadEventEnd"] - nav["startTime"])
                        transferred.append(sum(got))
                    out["browser_load_ms_median"] = round(statistics.median(loads), 1)
                    out["browser_load_ms_max"] = round(max(loads), 1)
                    out["browser_bytes"] = max(transferred)
                    page.wait_for_selector("html[data-live='1']")
                    holder: list[str] = []  # the sync Playwright loop runs here: the apply in a thread
                    t = threading.Thread(target=lambda: holder.append(asyncio.run(apply_20k(comp))))
                    t.start()
                    t.join(120)
                    op_id = holder[0]
                    wait_until(
                        lambda: (
                            (page.evaluate(f"(window.mcbProgress||{{}})[{op_id!r}]||[]")[-1:] or [[0, ""]])[0][1]
                            == "applied"
                        ),
                        120,
                        "the 20k apply",
                        interval=0.05,
                    )
                    events = page.evaluate(f"window.mcbProgress[{op_id!r}]")
                    lat = sorted(e[3] - e[2] for e in events)
                    out["progress_events"] = len(lat)
                    out["latency_ms_median"] = lat[len(lat) // 2]
                    out["latency_ms_p95"] = lat[min(len(lat) - 1, int(len(lat) * 0.95))]
                    out["latency_ms_max"] = lat[-1]
                    ctx.close()
            out["rss_kib_end"] = rss_kib(dash.popen.pid)
        finally:
            comp.stop_all()
            print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
