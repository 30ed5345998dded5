"""`oni-sim [--port 23876] [--seed 1] [--tick 0.1]`: serve a simulated colony on 127.0.0.1."""

from __future__ import annotations

import argparse
import sys
import time

from .model import Colony
from .server import SimServer


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="oni-sim", description=__doc__)
    p.add_argument("--port", type=int, default=23876, help="0 picks a free port (printed)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--height", type=int, default=48)
    p.add_argument(
        "--tick",
        type=float,
        default=0.1,
        help="seconds of wall time per game tick; 0: only POST /sim/step advances the game",
    )
    a = p.parse_args(argv)
    server = SimServer(Colony(a.seed, a.width, a.height), a.port, a.tick).start()
    print(f"oni-sim listening on http://127.0.0.1:{server.port}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
