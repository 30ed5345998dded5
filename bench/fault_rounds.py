"""kill -9 fault rounds, the long version of tests/hardening/test_kill9_rounds.py (issue 12).

    uv run python bench/fault_rounds.py [--rounds 42] [--seed N]

One stack (real processes: Redis, embedded world host, planner, journal, bridge); each round
applies 6,400 blocks while a scripted player edits the region, and kills the world host, the
journal or Redis (in turn) with SIGKILL at a random moment, then restarts it. Counts lost,
duplicated and clobbered blocks and how each operation ended (tests/hardening/faultrounds.py
says exactly how); writes bench/out/fault_rounds.json.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from e2e.components import start_components  # noqa: E402
from hardening.faultrounds import VICTIMS, run_round, summary  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=42)
    ap.add_argument("--seed", type=int, default=12)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    results = []
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        comp = start_components(Path(tmp) / "rt")
        try:
            for r in range(args.rounds):
                res = run_round(comp, r, rng, VICTIMS[r % len(VICTIMS)])
                results.append(res)
                print(
                    f"round {r:>3} kill -9 {res.victim:<10} after {res.delay_s:5.2f} s: {res.state:<17} "
                    f"written {res.written:>5} (host log {res.host_written:>5}) lost {res.lost} "
                    f"dup {res.duplicated} clobbered {res.clobbered} player edits {res.player_edits} "
                    f"batches done at the kill {res.batches_before_kill}/{res.batches}"
                    f"{' reviewed+abandoned' if res.reviewed else ''}{' PROBLEMS ' + str(res.problems) if res.problems else ''}",
                    flush=True,
                )
        finally:
            comp.stop_all()
    s = summary(results) | {"seed": args.seed, "seconds": round(time.monotonic() - t0, 1)}
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    (out / "fault_rounds.json").write_text(
        json.dumps({"summary": s, "rounds": [x.as_dict() for x in results]}, indent=1)
    )
    print(json.dumps(s, indent=1))
    return 0 if not s["problems"] and (s["lost"], s["duplicated"], s["clobbered"]) == (0, 0, 0) else 1


if __name__ == "__main__":
    raise SystemExit(main())
