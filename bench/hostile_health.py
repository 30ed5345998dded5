"""The worst ``/health`` of every service while the stack is under hostile load (issue 33 item 6).

    uv run --frozen python bench/hostile_health.py [--blocks 1000000] [--slow 64] [--seconds 10]

Starts the stack (Redis, embedded world host, planner, journal, bridge, camera worker, ops
dashboard) as processes on free loopback ports. A prober (its own process) asks ``GET /health``
of every service in turn, each on a new connection with a 2 s timeout (a timeout counts as 2 s),
every 20 ms, from 1 s before each phase's work until its end:

0. ``idle``: nothing but the probes for ``--seconds`` (the shared machine's floor);
1. ``packing``: (before the phase, not measured) the journal is stopped, a finished operation
   of ``--blocks`` written blocks and their echoes is put into its database
   (tests/hardening/bigjournal.py) and the journal started again; the phase makes the operation
   due and lasts until it is packed;
2. ``hostile MCP inputs``: every input of tests/hardening/latency.py (huge and deep recipes, a
   FIFO, hostile schematic files) through the bridge, one after the other;
3. ``over-size bodies``: a 200 MB declared and a chunked body at every service
   (tests/hardening/bodies.py);
4. ``wrong admin tokens``: another process guessing the dashboard's admin token for ``--seconds``
   (4 threads; wrong tries are answered after 1 s, doubling per try on a connection);
5. ``slow clients``: ``--slow`` connections per service that each send an unfinished request
   head, one more header line a second, for ``--seconds``.

Prints per phase and service the worst and the median ``/health`` in ms, how many probes, and
the machine's 1-minute load average at the phase's start and end (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import anyio
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from e2e.components import start_components  # noqa: E402
from hardening.bigjournal import live_rows, make_due, seed_finished_operation  # noqa: E402
from hardening.bodies import DECLARED, GUESSER, MIB, push, slow_clients  # noqa: E402
from hardening.latency import cases, while_running  # noqa: E402
from harness import PY  # noqa: E402
from mcb_bridge.server import MAX_BODY_BYTES as BRIDGE_MAX  # noqa: E402
from mcb_dashboard.app import MAX_FORM_BYTES  # noqa: E402
from mcb_rpc.bodylimit import HEALTH_MAX_BODY  # noqa: E402
from mcb_world_host.server import MAX_BODY as WORLD_MAX  # noqa: E402

SERVICES = ("world-host", "bridge", "planner", "journal", "camera-worker", "dashboard")
TIMEOUT_S = 2.0


def probe(urls: dict[str, str], ready, halt, out) -> None:
    """``GET /health`` of every service in turn until ``halt``; puts the latencies (s) per service
    on ``out``. Its own process: the load this script makes does not slow its clock or its GIL."""
    samples: dict[str, list[float]] = {n: [] for n in urls}
    while not halt.is_set():
        for name, url in urls.items():
            t0 = time.monotonic()
            try:
                httpx.get(url, timeout=TIMEOUT_S)
                took = time.monotonic() - t0
            except httpx.HTTPError:
                took = max(time.monotonic() - t0, TIMEOUT_S)
            samples[name].append(took)
        ready.set()  # one round done: the phase's work may start
        time.sleep(0.02)
    out.put(samples)


def phase(name: str, urls: dict[str, str], work, prepare=None) -> dict:
    if prepare is not None:  # not measured (e.g. restarting a service)
        prepare()
    load0 = os.getloadavg()[0]
    ctx = multiprocessing.get_context("spawn")
    ready, halt, out = ctx.Event(), ctx.Event(), ctx.Queue()
    prober = ctx.Process(target=probe, args=(urls, ready, halt, out), daemon=True)
    prober.start()
    ready.wait(60)
    time.sleep(1.0)  # a second of the phase's floor before its work
    t0 = time.monotonic()
    try:
        note = work()
    finally:
        halt.set()
        samples = out.get(timeout=30)
        prober.join(10)
    out = {
        "phase": name,
        "seconds": round(time.monotonic() - t0, 1),
        "note": note,
        "load": (round(load0, 2), round(os.getloadavg()[0], 2)),
        "services": {},
    }
    for svc, xs in samples.items():
        out["services"][svc] = {
            "max_ms": round(max(xs) * 1000, 1),
            "p50_ms": round(statistics.median(xs) * 1000, 1),
            "n": len(xs),
        }
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", type=int, default=1_000_000, help="blocks of the operation that is packed")
    ap.add_argument("--slow", type=int, default=64, help="slow connections per service")
    ap.add_argument("--seconds", type=float, default=10.0, help="length of the guessing and slow-client phases")
    ap.add_argument("--json", default="", help="also write the results here")
    opts = ap.parse_args()
    print(
        f"# {platform.node()} {platform.machine()} cpus={os.cpu_count()} python={platform.python_version()}", flush=True
    )
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        comp = start_components(Path(tmp) / "rt")
        try:
            comp.start("camera-worker")
            comp.start("dashboard")
            p = comp.ports
            dash = f"http://127.0.0.1:{p['dashboard']}"
            health_ports = {
                "world-host": p["world_host"],
                "bridge": p["bridge"],
                "planner": p["planner_health"],
                "journal": p["journal_health"],
                "camera-worker": p["camera_health"],
                "dashboard": p["dashboard"],
            }
            urls = {n: f"http://127.0.0.1:{port}/health" for n, port in health_ports.items()}
            db_path = comp.runtime / "journal" / "journal.sqlite"

            op_id = "op_bench_" + uuid.uuid4().hex[:8]

            def seed() -> None:
                comp.procs["journal"].stop()
                seed_finished_operation(db_path, op_id, opts.blocks)
                comp.start("journal")
                time.sleep(2)  # the bridge sees the journal again

            def packing() -> str:
                make_due(db_path, op_id)
                deadline = time.monotonic() + 900
                while time.monotonic() < deadline:
                    live, packed = live_rows(db_path, op_id)
                    if live == 0 and packed:
                        return f"{opts.blocks:,} blocks packed"
                    time.sleep(0.2)
                return f"NOT packed in 900 s ({live:,} live rows left)"

            def hostile_inputs() -> str:
                answered = 0
                for _name, action in cases(comp).items():
                    anyio.run(while_running, comp, action)
                    answered += 1
                return f"{answered} hostile inputs answered"

            def bodies() -> str:
                agent = comp.token("agent")
                targets = [
                    ("world-host", "/v1/rpc", WORLD_MAX, ""),
                    ("bridge", "/mcp", BRIDGE_MAX, f"Authorization: Bearer {agent}\r\n"),
                    ("planner", "/health", HEALTH_MAX_BODY, ""),
                    ("journal", "/health", HEALTH_MAX_BODY, ""),
                    ("camera-worker", "/health", HEALTH_MAX_BODY, ""),
                    ("dashboard", "/login", MAX_FORM_BYTES, f"Origin: {dash}\r\n"),
                ]
                statuses = []
                for svc, path, limit, extra in targets:
                    port = health_ports[svc]
                    head = (
                        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n{extra}"
                    )
                    s1, _, _ = push(port, head + f"Content-Length: {DECLARED}\r\n\r\n", False, 64 * MIB)
                    s2, _, _ = push(port, head + "Transfer-Encoding: chunked\r\n\r\n", True, limit + 64 * MIB)
                    statuses.append(f"{svc} {s1}/{s2}")
                return "declared/chunked: " + ", ".join(statuses)

            def guesses() -> str:
                out = subprocess.run(
                    [PY, "-c", GUESSER, dash, str(opts.seconds)],
                    capture_output=True,
                    text=True,
                    timeout=opts.seconds + 120,
                )
                got = json.loads(out.stdout)
                return f"{got['tries']} wrong tokens, {got['refused']} refused"

            def slow() -> str:
                opened: list[int] = []
                threads = [
                    threading.Thread(
                        target=lambda port=port: opened.append(slow_clients(port, opts.slow, opts.seconds))
                    )
                    for port in health_ports.values()
                ]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join(opts.seconds + 60)
                return f"{sum(opened)} slow connections held for {opts.seconds:.0f} s"

            def idle() -> str:
                time.sleep(opts.seconds)
                return "nothing but the probes: the machine's floor"

            for name, work, prepare in (
                ("idle", idle, None),
                ("packing", packing, seed),
                ("hostile MCP inputs", hostile_inputs, None),
                ("over-size bodies", bodies, None),
                ("wrong admin tokens", guesses, None),
                ("slow clients", slow, None),
            ):
                r = phase(name, urls, work, prepare)
                results.append(r)
                print(f"\n## {name} ({r['seconds']} s; load {r['load'][0]} -> {r['load'][1]}): {r['note']}")
                print(f"{'service':14} {'worst ms':>9} {'p50 ms':>8} {'probes':>7}")
                for svc, m in r["services"].items():
                    print(f"{svc:14} {m['max_ms']:9.1f} {m['p50_ms']:8.1f} {m['n']:7d}", flush=True)
        finally:
            comp.stop_all()
    worst = {svc: max(r["services"][svc]["max_ms"] for r in results) for svc in SERVICES}
    print("\nworst /health over every phase (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in worst.items()))
    if opts.json:
        Path(opts.json).write_text(json.dumps({"results": results, "worst_ms": worst}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
