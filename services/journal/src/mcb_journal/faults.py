"""Named fault points for crash tests: inert unless ``MCB_FAULT_POINT`` names one.

``MCB_FAULT_POINT=after_intent`` (optionally ``MCB_FAULT_SKIP=N`` to pass it N times first)
kills this process with SIGKILL at that point — a real crash, no cleanup, no flush.
Points, in the order batch k meets them: during_write (the writer thread starts on batch k while
the host writes batch k-1 — whether k-1 is written when the process dies is up to the host),
before_intent (k built; k's intent and the answered batch k-2's completion not yet committed:
they are one transaction), after_intent (both committed, k not sent, k-1 still in flight),
before_completion (k answered and the writer's job for k+1 done: k not recorded, k+1's intent
committed and not sent). Batch 0 meets before_intent and after_intent on the event loop, with
nothing in flight.
"""

from __future__ import annotations

import os
import signal

_hits: dict[str, int] = {}


def fault_point(name: str) -> None:
    if os.environ.get("MCB_FAULT_POINT") != name:
        return
    _hits[name] = _hits.get(name, 0) + 1
    if _hits[name] > int(os.environ.get("MCB_FAULT_SKIP", "0")):
        os.kill(os.getpid(), signal.SIGKILL)
