"""Worst-case latency of the bridge's /health and of another client's MCP call while each
hostile input of issue 12 (items 1, 2, 4) is being processed.

    uv run python bench/hostile_latency.py [--only SUBSTRING]

Starts the stack (Redis, embedded world host, planner, journal, bridge) on free ports, then
for each hostile input (tests/hardening/hostile.py, latency.py) sends it with one MCP client
while probing GET /health and project_context with a second client every 50 ms. Prints per
input: how long the hostile call took, its answer (error code / limit / HTTP status), and the
worst and median /health and read latencies.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from e2e.components import start_components  # noqa: E402
from hardening.latency import cases, while_running  # noqa: E402


def _answer(outcome) -> str:
    if not isinstance(outcome, dict):
        return str(outcome)[:40]
    if "status" in outcome:
        return f"HTTP {outcome['status']}"
    if "import" in outcome:
        imp = outcome["import"]
        code = imp["error"]["code"] if "error" in imp else "plan"
        listed = outcome.get("listed") or {}
        return f"{code}; listed valid={listed.get('valid')}"
    if "error" in outcome:
        e = outcome["error"]
        return f"{e['code']} ({(e.get('details') or {}).get('limit', '-')})"
    return "accepted"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="run only inputs whose name contains this")
    opts = ap.parse_args()
    print(f"# {platform.node()} {platform.machine()} cpus={os.cpu_count()} python={platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        comp = start_components(Path(tmp) / "rt")
        try:
            print(
                f"{'input':34} {'call s':>7} {'health max':>10} {'health p50':>10} {'read max':>9} "
                f"{'read p50':>9}  answer"
            )
            worst_h = worst_r = 0.0
            for name, action in cases(comp).items():
                if opts.only not in name:
                    continue
                m = anyio.run(while_running, comp, action)
                worst_h, worst_r = max(worst_h, m.health_max), max(worst_r, m.read_max)
                print(
                    f"{name:34} {m.seconds:7.2f} {m.health_max:10.3f} {statistics.median(m.health):10.3f} "
                    f"{m.read_max:9.3f} {statistics.median(m.read):9.3f}  {_answer(m.outcome)}",
                    flush=True,
                )
            print(f"worst /health {worst_h:.3f} s, worst concurrent read {worst_r:.3f} s")
        finally:
            comp.stop_all()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
